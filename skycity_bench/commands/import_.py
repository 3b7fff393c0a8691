"""`skycity-bench import RUN_DIR...`: load run reports into the review store (and, with
--reviews, an export of reviews: the store is rebuilt from reports + reviews)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from skycity_bench.common.errors import UserError


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


def import_(
    runs: list[Path] = typer.Argument(..., help="run folders (or their report.json)"),
    db: Optional[str] = typer.Option(
        None, "--db", help="review store: a file (default recordings/reviews.sqlite) or a postgresql:// URL"
    ),
    reviews: Optional[Path] = typer.Option(None, "--reviews", help="replay exported reviews (sheet JSON or JSONL)"),
    html: bool = typer.Option(True, "--html/--no-html", help="write report.html into each run folder"),
) -> None:
    """Load run reports into the review store, under their anonymous candidate ids."""
    from skycity_bench.reporting import html_report
    from skycity_bench.store.review_store import DEFAULT_DB, ReviewStore

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
    c.print(f"store: {store.path} ({len(store.candidates())} candidates)", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("import")(import_)
