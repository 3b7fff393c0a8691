"""`skycity-bench queue add|status`: the multi-machine queue (skycity_bench/queue/).
A PostgreSQL database holds the jobs (procrastinate), the frozen candidates, the results and
the reviews; `worker` runs on each reference machine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from skycity_bench.common.errors import UserError
from skycity_bench.running.run_profile import DEFAULT_MAX_MEMORY_MB

DB_HELP = "the shared database: postgresql://USER:PASSWORD@HOST:PORT/DB"


def add(
    paths: list[str] = typer.Argument(..., metavar="PATH...", help="candidate HTML file(s), folders, globs"),
    db: str = typer.Option(..., "--db", help=DB_HELP),
    repeat: int = typer.Option(1, "--repeat", "-n", help="runs per candidate"),
    probe: Optional[list[str]] = typer.Option(None, "--probe", "-p", help="run only these probes (repeatable)"),
    viewport: Optional[str] = typer.Option(None, help="WIDTHxHEIGHT, e.g. 1280x720"),
    duration: Optional[float] = typer.Option(None, help="seconds of real-time playback (default 60)"),
    network: str = typer.Option("offline", help="offline (default) or allow"),
    max_memory_mb: float = typer.Option(
        DEFAULT_MAX_MEMORY_MB, "--max-memory-mb", help="a browser process above this many MB is killed"
    ),
    tag: str = typer.Option("default", "--tag", help="the batch's name; `worker --tag` takes only its jobs"),
    scenario: Optional[Path] = typer.Option(
        None, help="scenario file (default scenarios/skycity.yaml); its text travels with the runs"
    ),
) -> None:
    """Freeze candidates into the database and enqueue one job per run. A path that is not
    an HTML demo is refused by name and the rest enqueued (exit 1); nothing enqueued: exit 2."""
    from skycity_bench.queue.plan import add as do_add
    from skycity_bench.queue.plan import run_options

    opts = run_options(probe, viewport, duration, network, max_memory_mb, scenario)
    res = do_add(db, paths, tag=tag, repeat=repeat, options=opts)
    c = Console()
    for r in res.refused:
        c.print(f"[red]refused:[/] {r}", highlight=False, soft_wrap=True)
    c.print(
        f"tag {tag}: {len(res.candidates)} candidate(s), {len(res.new_runs)} run(s) enqueued"
        + (f", {res.existing_runs} already queued" if res.existing_runs else ""),
        highlight=False,
    )
    raise typer.Exit(1 if res.refused else 0)


def status(
    db: str = typer.Option(..., "--db", help=DB_HELP),
    tag: Optional[str] = typer.Option(None, "--tag", help="only this tag"),
    as_json: bool = typer.Option(False, "--json", help="machine-readable"),
) -> None:
    """Queued / running (worker, probe, since when) / done / failed per tag, throughput, ETA."""
    from skycity_bench.queue.status import render
    from skycity_bench.queue.status import status as get
    from skycity_bench.store.db import is_postgres
    from skycity_bench.store.review_store import ReviewStore

    if not is_postgres(db):
        raise UserError(f"--db {db}: the queue lives in a PostgreSQL database (postgresql://…)")
    store = ReviewStore(db, create=False)
    try:
        st = get(store, tag)
    finally:
        store.close()
    typer.echo(json.dumps(st, indent=1) if as_json else render(st))


def register(app: typer.Typer) -> None:
    q = typer.Typer(no_args_is_help=True, help="The multi-machine queue: add runs, see progress (PostgreSQL).")
    app.add_typer(q, name="queue")
    q.command("add")(add)
    q.command("status")(status)
