"""`skycity-bench run PATH...`: run the probes on one demo and write report.json, or on many
(files, folders, globs, --repeat) as a resumable batch of worker processes (batch/batch_run.py).
Both go through runner.execute with the run profile and exit by runner.exit_code."""

from __future__ import annotations

import asyncio
import datetime as dt
import os
from pathlib import Path
from typing import Annotated, Optional

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


# The command's options, one alias each so the command reads as its list of parameters.
Demos = Annotated[
    list[str], typer.Argument(metavar="PATH...", help="candidate HTML file(s), folders of them, or globs")
]
Out = Annotated[Optional[Path], typer.Option("--out", "-o", help="run folder (default recordings/<id>-<time>)")]
Probe = Annotated[Optional[list[str]], typer.Option("--probe", "-p", help="run only these probes (repeatable)")]
ViewportOpt = Annotated[Optional[str], typer.Option(help="WIDTHxHEIGHT, e.g. 1280x720")]
Duration = Annotated[Optional[float], typer.Option(help="seconds of real-time playback (default 60)")]
ScenarioOpt = Annotated[Optional[Path], typer.Option(help="scenario file (default scenarios/skycity.yaml)")]
Network = Annotated[str, typer.Option(help="offline (default) or allow")]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="no progress bar")]
Repeat = Annotated[int, typer.Option("--repeat", "-n", help="run each candidate N times; report each figure's spread")]
CandidateTimeout = Annotated[
    Optional[float],
    typer.Option(
        "--candidate-timeout",
        help="batch: hard wall-clock seconds per candidate run (default: from the probes' budgets)",
    ),
]
MaxMemory = Annotated[
    float,
    typer.Option("--max-memory-mb", help="a browser process above this many MB is killed (a memory blow-up)"),
]
RealtimeCapture = Annotated[
    bool,
    typer.Option(
        "--realtime-capture",
        help="always keep a real-time video of the frame-pacing pass for 录屏复核 "
        "(default: only when smoothness.frame_pacing ends in review)",
    ),
]
Jobs = Annotated[
    Optional[int],
    typer.Option(
        "--jobs",
        "-j",
        help="browsers running the fake-clock probes side by side after the real-time ones, "
        "which always run alone (default: the cores this process may use, as memory "
        "allows; 1: one probe after the other)",
    ),
]
Overlap = Annotated[
    str,
    typer.Option(
        "--overlap",
        help="off: the real-time probes alone, then the rest (default); pinned: on a machine "
        "with spare cores, the fake-clock probes during the real-time ones, pinned to "
        "other cores, with a perturbation check (refused without spare cores); "
        "pinned-force: the same without spare cores, to test the mechanics",
    ),
]
Budget = Annotated[
    Optional[float],
    typer.Option(
        "--budget",
        help="wall-clock seconds the whole run may take, report included (default: the scenario's "
        "timeouts.run_s, 900); each probe gets a share of it, what could not finish is untested",
    ),
]
RoundManifest = Annotated[
    Optional[Path],
    typer.Option(
        "--manifest",
        help="batch: CSV file,system,prompt,sample[,tags], each file's place in a round; the batch writes "
        "OUT/manifest.csv for import --manifest",
    ),
]
NoFetch = Annotated[
    bool,
    typer.Option(
        "--no-fetch",
        help="keep the offline library cache frozen: never fetch a CDN release a demo names "
        "that it lacks (same as SKYCITY_NO_FETCH=1)",
    ),
]


def run(
    demos: Demos,
    out: Out = None,
    probe: Probe = None,
    viewport: ViewportOpt = None,
    duration: Duration = None,
    scenario: ScenarioOpt = None,
    network: Network = "offline",
    quiet: Quiet = False,
    repeat: Repeat = 1,
    candidate_timeout: CandidateTimeout = None,
    max_memory_mb: MaxMemory = DEFAULT_MAX_MEMORY_MB,
    realtime_capture: RealtimeCapture = False,
    jobs: Jobs = None,
    overlap: Overlap = "off",
    no_fetch: NoFetch = False,
    budget: Budget = None,
    manifest: RoundManifest = None,
) -> None:
    """Run the bench on one demo (print the items, write report.json), or on many as a batch."""
    _check_numbers(network, repeat, candidate_timeout, jobs, max_memory_mb)
    if budget is not None and budget <= 0:
        raise UserError(f"--budget: expected seconds > 0, got {budget:g}")
    # --realtime-capture is the scenario's probes.realtime_capture.when = always, for this
    # run (and every batch worker: the override travels with the batch's options).
    capture = {"realtime_capture": {"when": "always"}} if realtime_capture else None
    if capture and probe and "frame_pacing" not in probe:
        raise UserError("--realtime-capture films the frame-pacing pass: add --probe frame_pacing")
    sc = load_scenario(scenario, {"viewport": viewport, "duration_s": duration, "probes": capture, "run_s": budget})
    split = _overlap_split(overlap, demos, repeat, sc)
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
            budget=budget,
            manifest=manifest,
        )
        raise typer.Exit(code)
    if manifest is not None:
        raise UserError(
            "--manifest: for a batch (several files, a folder, a glob or --repeat); import --manifest takes a single run"
        )
    _run_one(Path(demos[0]), out, sc, probe, network, quiet, max_memory_mb, jobs, overlap, split)


def _check_numbers(
    network: str, repeat: int, candidate_timeout: Optional[float], jobs: Optional[int], max_memory_mb: float
) -> None:
    """One line for each option given out of its range."""
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


def _overlap_split(overlap: str, demos: list[str], repeat: int, sc):
    """The cores `--overlap` pins apart (None when off); refused for a batch, and without
    spare cores unless forced (one line, exit 2)."""
    if overlap not in MODES:
        raise UserError(f"--overlap: expected one of {', '.join(MODES)}, got {overlap!r}")
    if overlap == "off":
        return None
    if _is_batch(demos, repeat):
        raise UserError("--overlap: a single-demo run only (a batch's workers run one browser each)")
    return plan_split(sc.overlap, force=overlap == "pinned-force")


def _run_one(demo: Path, out, sc, probe, network, quiet, max_memory_mb, jobs, overlap, split) -> None:
    """The single-demo run, in this process: the same runner.execute a batch worker runs."""
    from skycity_bench.running.runner import Profile, execute, exit_code
    from skycity_bench.running.side_by_side import default_jobs

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
    _write_html(out_dir, report, console)
    print_report(report, console, out_dir)
    raise typer.Exit(exit_code(report))


def _write_html(out_dir: Path, report, console: Console) -> None:
    """report.html beside report.json, as import and rescore write it; the HTML is a view of the
    report, so failing to write it is a warning line, never a failed run."""
    from skycity_bench.reporting import html_report

    try:
        html_report.write(out_dir, report)
    except Exception as e:  # noqa: BLE001 - any failure here must not fail the run
        console.print(f"[yellow]warning: report.html not written: {type(e).__name__}: {e}[/]", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("run")(run)
