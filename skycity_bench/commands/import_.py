"""`skycity-bench import RUN_DIR...`: load run reports into the review store (and, with
--reviews, an export of reviews: the store is rebuilt from reports + reviews)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer
from rich.console import Console

from skycity_bench.common.errors import UserError

if TYPE_CHECKING:
    from skycity_bench.store.manifests import Manifest
    from skycity_bench.store.review_store import ReviewStore


def _read_reviews(path: Path) -> list[dict]:
    """A `sheet --format json` export (its "reviews") or JSON Lines, one review a line."""
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    text = path.read_text(encoding="utf-8")
    try:
        doc = json.loads(text)
        return doc["reviews"] if isinstance(doc, dict) else list(doc)
    except (ValueError, KeyError):
        try:
            return [json.loads(line) for line in text.splitlines() if line.strip()]
        except ValueError as e:
            raise UserError(f"{path}: neither a sheet JSON export nor JSON Lines ({e})") from None


def _apply_manifest(store: ReviewStore, plan: dict[str, Manifest], c: Console) -> None:
    """Store the manifest rows (every key must name a stored candidate) and say how many."""
    from skycity_bench.store.manifests import apply_manifest

    matched = apply_manifest(store, plan, "operator (CLI import)")
    systems = len({m.system for m in plan.values()})
    prompts = len({m.prompt for m in plan.values()})
    c.print(f"manifest: {len(matched)} candidates, {systems} systems, {prompts} prompts", highlight=False)


def import_(
    runs: list[Path] = typer.Argument(..., help="run folders (or their report.json)"),
    db: Optional[str] = typer.Option(
        None, "--db", help="review store: a file (default recordings/reviews.sqlite) or a postgresql:// URL"
    ),
    reviews: Optional[Path] = typer.Option(None, "--reviews", help="replay exported reviews (sheet JSON or JSONL)"),
    html: bool = typer.Option(True, "--html/--no-html", help="write report.html into each run folder"),
    manifest: Optional[Path] = typer.Option(
        None, "--manifest", help="CSV file,system,prompt,sample[,tags]: each candidate's place in a round (admins only)"
    ),
) -> None:
    """Load run reports into the review store, under their anonymous candidate ids."""
    from skycity_bench.reporting import html_report
    from skycity_bench.store.manifests import read_manifest
    from skycity_bench.store.review_store import DEFAULT_DB, ReviewStore

    # read first: a malformed manifest stops the import before anything is stored
    plan = read_manifest(manifest) if manifest is not None else None
    store = ReviewStore(db or DEFAULT_DB)
    c = Console()
    for run in runs:
        res = store.import_run(run)
        c.print(
            f"{'imported' if res.new else 'already stored'}: run {res.run_id} → candidate "
            f"[bold]{res.candidate_id}[/] ({res.files} files)",
            highlight=False,
        )
        if html:
            html_report.write(run if run.is_dir() else run.parent)
    if reviews is not None:
        n = store.import_reviews(_read_reviews(reviews))
        c.print(f"reviews replayed: {n}")
    if plan is not None:
        _apply_manifest(store, plan, c)
    c.print(f"store: {store.path} ({len(store.candidates())} candidates)", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("import")(import_)
