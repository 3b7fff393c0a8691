"""`skycity-bench run DEMO.html`: run the probes on one demo and write report.json."""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console

from ..demo_file import candidate_id, load_demo
from ..errors import UserError
from ..probes import registry
from ..progress import RichProgress
from ..scenario import load_scenario
from ._render import print_report

RECORDINGS = Path("recordings")


def default_out(demo_path: Path) -> Path:
    demo = load_demo(demo_path)
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return RECORDINGS / f"{candidate_id(demo.sha256)}-{stamp}"


def register(app: typer.Typer) -> None:
    @app.command("run")
    def run(
        demo: Path = typer.Argument(..., help="the candidate HTML file"),
        out: Optional[Path] = typer.Option(None, "--out", "-o", help="run folder (default recordings/<id>-<time>)"),
        probe: Optional[List[str]] = typer.Option(None, "--probe", "-p", help="run only these probes (repeatable)"),
        viewport: Optional[str] = typer.Option(None, help="WIDTHxHEIGHT, e.g. 1280x720"),
        duration: Optional[float] = typer.Option(None, help="seconds of real-time playback (default 60)"),
        scenario: Optional[Path] = typer.Option(None, help="scenario file (default scenarios/skycity.yaml)"),
        network: str = typer.Option("offline", help="offline (default) or allow"),
        quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress bar"),
    ) -> None:
        """Run the bench on one demo; print the items and write report.json."""
        from ..runner import run_candidate

        if network not in ("offline", "allow"):
            raise UserError(f"--network: expected offline or allow, got {network!r}")
        sc = load_scenario(scenario, {"viewport": viewport, "duration_s": duration})
        for name in probe or []:
            registry.get(name)          # unknown name: one line listing the known ones
        load_demo(demo)                 # bad input fails before a browser starts
        out_dir = out or default_out(demo)
        console = Console()
        progress = None if quiet else RichProgress()
        try:
            report = asyncio.run(run_candidate(demo, sc, out_dir, probes=probe, progress=progress, network=network))
        finally:
            if progress:
                progress.stop()
        print_report(report, console, out_dir)
        failed = [n for n, r in report.probes.items() if r.status == "error"]
        if failed or report.exit_reason:
            raise typer.Exit(1)
