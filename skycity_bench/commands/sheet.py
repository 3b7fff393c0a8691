"""`skycity-bench sheet`: the 100-point sheet per candidate, from the review store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from skycity_bench.common.errors import UserError


def sheet(
    db: Optional[str] = typer.Option(
        None, "--db", help="review store: a file (default recordings/reviews.sqlite) or a postgresql:// URL"
    ),
    fmt: str = typer.Option("md", "--format", "-f", help="md | csv | json (json includes every raw review)"),
    unblind: bool = typer.Option(False, "--unblind", help="show each candidate's label (its file name)"),
    candidate: Optional[str] = typer.Option(None, "--candidate", help="only this candidate id"),
    finalize: Optional[str] = typer.Option(None, "--finalize", help="finalise this candidate's sheet first"),
    by: str = typer.Option("lead", "--by", help="who finalises (with --finalize)"),
) -> None:
    """Print the sheet: items and subtotals per rubric row, the total only when nothing is
    missing (otherwise what is missing), and a ranking across comparable environments."""
    from skycity_bench.judging.sheet_totals import rank, to_csv, to_json, to_markdown
    from skycity_bench.store import accounts, timings
    from skycity_bench.store.anchors import Calibration
    from skycity_bench.store.db import is_postgres
    from skycity_bench.store.review_store import DEFAULT_DB, ReviewStore

    if fmt not in ("md", "csv", "json"):
        raise UserError(f"--format: expected md, csv or json, got {fmt!r}")
    path = db or DEFAULT_DB
    if not is_postgres(path) and not Path(path).is_file():
        raise UserError(f"{path}: no review store here (run `skycity-bench import RUN_DIR` first)")
    store = ReviewStore(path, create=False)
    if finalize:  # as the app's admin does it: with an audit row (store/accounts.py)
        accounts.finalize(store, finalize, by=f"{by} (CLI)")
    if unblind:
        accounts.audit(store, "operator (CLI)", "unblind", candidate, {"format": fmt})
    sheets = store.sheets(unblind=unblind)
    sheets = Calibration(store).mark(sheets)  # calibration-flagged scores marked (still counted)
    if candidate:
        sheets = [s for s in sheets if s.candidate_id == candidate]
        if not sheets:
            raise UserError(f"no such candidate: {candidate}")
    ranking = rank(sheets)
    if fmt == "md":
        typer.echo(to_markdown(sheets, ranking))
    elif fmt == "csv":
        typer.echo(to_csv(sheets), nl=False)
    else:
        doc = json.loads(to_json(sheets, ranking, store.export_reviews()))
        # the operator's export: time per candidate per reviewer (review app saves; store/timings.py)
        doc["review_timings"] = timings.summary(store)
        typer.echo(json.dumps(doc, ensure_ascii=False, indent=2))


def register(app: typer.Typer) -> None:
    app.command("sheet")(sheet)
