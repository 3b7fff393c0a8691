"""`skycity-bench worker --db postgresql://…`: run the queue's jobs on this machine, one at a
time, until stopped (Ctrl-C: finish the current run; twice: hand it back)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from skycity_bench.common.errors import UserError


def worker(
    db: str = typer.Option(..., "--db", help="the shared database: postgresql://USER:PASSWORD@HOST:PORT/DB"),
    tag: Optional[str] = typer.Option(None, "--tag", help="take only this tag's jobs (default: any)"),
    name: Optional[str] = typer.Option(None, "--name", help="this worker's name in queue status (default host-pid)"),
    artifacts: Optional[Path] = typer.Option(
        None, "--artifacts", help="store evidence files under this shared directory instead of in the database"
    ),
    heartbeat: float = typer.Option(10.0, "--heartbeat", help="seconds between this worker's heartbeats"),
    stalled_after: float = typer.Option(
        30.0, "--stalled-after", help="a job whose worker is silent this long is queued again"
    ),
    max_deaths: int = typer.Option(3, "--max-deaths", help="fail a job after its worker vanished this often"),
    until_done: bool = typer.Option(False, "--until-done", help="exit once every run of the tag is done or failed"),
) -> None:
    """Take jobs from the queue and run them as `run` would; results go to the database."""
    from skycity_bench.queue.queue_worker import WorkerOptions, default_name, run_worker

    if stalled_after < 2 * heartbeat:
        raise UserError(
            f"--stalled-after {stalled_after:g}: at least two heartbeats ({2 * heartbeat:g} s), "
            f"or a live worker's job would be taken"
        )
    if max_deaths < 1:
        raise UserError("--max-deaths: at least 1")
    opts = WorkerOptions(
        name=name or default_name(),
        tag=tag,
        artifacts=artifacts,
        heartbeat_s=heartbeat,
        stalled_after_s=stalled_after,
        max_deaths=max_deaths,
        until_done=until_done,
    )

    raise typer.Exit(run_worker(db, opts, log=lambda msg: print(msg, flush=True)))


def register(app: typer.Typer) -> None:
    app.command("worker")(worker)
