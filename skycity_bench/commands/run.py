"""`skycity-bench run PATH...`: run the probes on one demo and write report.json, or on many
(files, folders, globs, --repeat) as a resumable batch of worker processes (batch.py).
Both go through runner.execute with the run profile and exit by runner.exit_code."""

from __future__ import annotations

import asyncio
import datetime as dt
import os
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from skycity_bench.commands._render import print_report
from skycity_bench.common.errors import UserError
from skycity_bench.common.run_progress import RichProgress, for_terminal
from skycity_bench.inputs.cpu_pinning import MODES, plan_split
from skycity_bench.inputs.demo_file import candidate_id, load_demo
from skycity_bench.inputs.scenario import load_scenario
from skycity_bench.probes import registry
from skycity_bench.running.runner import DEFAULT_MAX_MEMORY_MB

RECORDINGS = Path("recordings")


def _is_batch(demos: list[str], repeat: int) -> bool:
    """One existing file (or a path that is neither folder nor pattern) and no --repeat: the
    single-demo run, in this process (the same runner.execute a batch worker runs). Anything
    else is a batch."""
    if len(demos) != 1 or repeat > 1:
        return True
    p = Path(demos[0])
    if p.is_dir():
        return True
    return not p.exists() and bool(set("*?[") & set(demos[0]))


def default_out(demo_path: Path) -> Path:
    demo = load_demo(demo_path)
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return RECORDINGS / f"{candidate_id(demo.sha256)}-{stamp}"


def register(app: typer.Typer) -> None:
    @app.command("run")
    def run(
        demos: list[str] = typer.Argument(
            ..., metavar="PATH...", help="candidate HTML file(s), folders of them, or globs"
        ),
        out: Optional[Path] = typer.Option(None, "--out", "-o", help="run folder (default recordings/<id>-<time>)"),
        probe: Optional[list[str]] = typer.Option(None, "--probe", "-p", help="run only these probes (repeatable)"),
        viewport: Optional[str] = typer.Option(None, help="WIDTHxHEIGHT, e.g. 1280x720"),
        duration: Optional[float] = typer.Option(None, help="seconds of real-time playback (default 60)"),
        scenario: Optional[Path] = typer.Option(None, help="scenario file (default scenarios/skycity.yaml)"),
        network: str = typer.Option("offline", help="offline (default) or allow"),
        quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress bar"),
        repeat: int = typer.Option(1, "--repeat", "-n", help="run each candidate N times; report each figure's spread"),
        candidate_timeout: Optional[float] = typer.Option(
            None,
            "--candidate-timeout",
            help="batch: hard wall-clock seconds per candidate run (default: from the probes' budgets)",
        ),
        max_memory_mb: float = typer.Option(
            DEFAULT_MAX_MEMORY_MB,
            "--max-memory-mb",
            help="a browser process above this many MB is killed (a memory blow-up)",
        ),
        realtime_capture: bool = typer.Option(
            False,
            "--realtime-capture",
            help="always keep a real-time video of the frame-pacing pass for 录屏复核 "
            "(default: only when smoothness.frame_pacing ends in review)",
        ),
        jobs: Optional[int] = typer.Option(
            None,
            "--jobs",
            "-j",
            help="browsers running the fake-clock probes side by side after the real-time ones, "
            "which always run alone (default: the cores this process may use, as memory "
            "allows; 1: one probe after the other)",
        ),
        overlap: str = typer.Option(
            "off",
            "--overlap",
            help="off: the real-time probes alone, then the rest (default); pinned: on a machine "
            "with spare cores, the fake-clock probes during the real-time ones, pinned to "
            "other cores, with a perturbation check (refused without spare cores); "
            "pinned-force: the same without spare cores, to test the mechanics",
        ),
        no_fetch: bool = typer.Option(
            False,
            "--no-fetch",
            help="keep the offline library cache frozen: never fetch a CDN release a demo names "
            "that it lacks (same as SKYCITY_NO_FETCH=1)",
        ),
    ) -> None:
        """Run the bench on one demo (print the items, write report.json), or on many as a batch."""
        from skycity_bench.running.runner import Profile, execute, exit_code
        from skycity_bench.running.side_by_side import default_jobs

        if network not in ("offline", "allow"):
            raise UserError(f"--network: expected offline or allow, got {network!r}")
        if repeat < 1:
            raise UserError(f"--repeat: expected a whole number >= 1, got {repeat}")
        if candidate_timeout is not None and candidate_timeout <= 0:
            raise UserError(f"--candidate-timeout: expected seconds > 0, got {candidate_timeout:g}")
        if jobs is not None and jobs < 1:
            raise UserError(f"--jobs: expected a whole number >= 1, got {jobs}")
        if max_memory_mb < 256:
            raise UserError(f"--max-memory-mb: expected at least 256, got {max_memory_mb:g}")
        # --realtime-capture is the scenario's probes.realtime_capture.when = always, for this
        # run (and every batch worker: the override travels with the batch's options).
        capture = {"realtime_capture": {"when": "always"}} if realtime_capture else None
        if capture and probe and "frame_pacing" not in probe:
            raise UserError("--realtime-capture films the frame-pacing pass: add --probe frame_pacing")
        sc = load_scenario(scenario, {"viewport": viewport, "duration_s": duration, "probes": capture})
        split = None
        if overlap not in MODES:
            raise UserError(f"--overlap: expected one of {', '.join(MODES)}, got {overlap!r}")
        if overlap != "off":
            if _is_batch(demos, repeat):
                raise UserError("--overlap: a single-demo run only (a batch's workers run one browser each)")
            split = plan_split(sc.overlap, force=overlap == "pinned-force")  # no spare cores: one line, exit 2
        if no_fetch:  # read by cache/ondemand.py here and in batch workers
            os.environ["SKYCITY_NO_FETCH"] = "1"
        for name in probe or []:
            registry.get(name)  # unknown name: one line listing the known ones
        if _is_batch(demos, repeat):
            from skycity_bench.batch.batch_run import run_batch

            code = run_batch(
                demos,
                out,
                scenario=scenario,
                viewport=viewport,
                duration=duration,
                probe=probe,
                network=network,
                quiet=quiet,
                repeat=repeat,
                candidate_timeout=candidate_timeout,
                max_memory_mb=max_memory_mb,
                scenario_probes=capture,
            )
            raise typer.Exit(code)
        demo = Path(demos[0])
        load_demo(demo)  # bad input fails before a browser starts
        out_dir = out or default_out(demo)
        console = Console()
        progress = for_terminal(quiet)
        profile = Profile(
            probes=tuple(probe) if probe else None,
            network=network,
            max_memory_mb=max_memory_mb,
            jobs=jobs or default_jobs(len(split.others) if split else None),
            overlap=overlap,
        )
        try:
            report = asyncio.run(execute(demo, sc, profile, out_dir, progress=progress))
        finally:
            if isinstance(progress, RichProgress):
                progress.stop()
        print_report(report, console, out_dir)
        raise typer.Exit(exit_code(report))
