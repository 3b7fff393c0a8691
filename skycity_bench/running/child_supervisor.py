"""Running one candidate in a child process, and keeping it within its limits: the batch
(batch/batch_run.py) and the queue's worker (queue/queue_worker.py) both start
`python -m skycity_bench.running.run_worker SPEC.json` and supervise it the same way.

The limits are the run's wall-clock budget and a hard memory limit on the child's whole
process tree (well above the per-browser limit the run's own watchdog enforces, so this one
only catches what escaped it). A child past either is killed with its process group and
everything carrying its marker; a child that ends without a report still gets one, built and
scored as every run's is, with every probe failed for the reason (errors are data)."""

from __future__ import annotations

import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from skycity_bench.common.process_tree import MARKER_ENV, descendants, kill_marked
from skycity_bench.inputs.demo_file import load_demo
from skycity_bench.inputs.rubric import load_rubric
from skycity_bench.probes import registry
from skycity_bench.reporting.run_report import Report, load
from skycity_bench.running.run_worker import profile_of
from skycity_bench.running.runner import finish_report, new_report

WORKER_MODULE = "skycity_bench.running.run_worker"


def default_budget(scenario: Any, probes: Optional[list[str]]) -> float:
    """Wall-clock budget of one candidate run: calibration + every probe's own budget, or the
    run budget if larger (a slow renderer lets probes overrun their own budgets up to it)
    + 45 s for starting Python and Chromium, scoring and writing (a generous bound:
    it is the backstop behind the probes' own limits, not the usual end)."""
    probes_s = sum(float(s.budget(scenario)) for s in registry.select(probes))
    return scenario.calibration.duration_s + max(probes_s, scenario.timeouts.run_s) + 45


def child_command(spec_path: Path) -> list[str]:
    return [sys.executable, "-m", WORKER_MODULE, str(spec_path)]


def child_env(scratch: Path, marker: str) -> dict[str, str]:
    """The child's environment: its own temporary folder, unbuffered progress lines, and the
    marker every process below it inherits (process_tree.kill_marked finds them by it)."""
    return dict(os.environ, TMPDIR=str(scratch), PYTHONUNBUFFERED="1", **{MARKER_ENV: marker})


@dataclass
class Limits:
    """One child's limits; `who` names the supervisor in the reason ("the batch", "the worker")."""

    budget_s: float
    max_memory_mb: float
    who: str

    @property
    def hard_mb(self) -> float:
        # twice the per-browser limit and a gigabyte more: the whole tree, Python included
        return self.max_memory_mb * 2 + 1024

    def broken(self, pid: int, started: float) -> Optional[str]:
        """Why the child must be stopped now, or None."""
        if time.monotonic() - started > self.budget_s:
            return f"stopped by {self.who}: the run passed its wall-clock budget of {self.budget_s:.0f} s"
        try:
            tree_mb = sum(descendants(pid).values()) / 2**20
        except OSError:
            tree_mb = 0
        if tree_mb > self.hard_mb:
            return (
                f"stopped by {self.who}: the run's processes used {tree_mb:.0f} MB, over the "
                f"hard limit of {self.hard_mb:.0f} MB"
            )
        return None


def kill_child(pid: int, marker: str) -> None:
    """The child's process group, and every process that carries its marker."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    kill_marked(marker)


def exit_reason(returncode: Optional[int]) -> Optional[str]:
    """0 and 1 are the run's own verdict (runner.exit_code); anything else is the child's failure."""
    if returncode in (0, 1, None):
        return None
    return f"the worker process exited with code {returncode}"


def readable_report(d: Path) -> Optional[Report]:
    """The report a run left in `d`, or None when there is none or it cannot be read (a
    child killed while writing leaves no whole report.json: write_atomic)."""
    p = d / "report.json"
    if not p.is_file():
        return None
    try:
        return load(p)
    except Exception:
        return None


def log_tail(p: Path, n: int = 3) -> str:
    """The last `n` non-blank lines of a child's log, joined on one line."""
    try:
        lines = [x for x in p.read_text(encoding="utf-8", errors="replace").splitlines() if x.strip()]
    except OSError:
        return ""
    return " | ".join(x.strip()[:200] for x in lines[-n:])


def fallback_report(
    demo_path: Path,
    scenario: Any,
    spec: dict[str, Any],
    label: str,
    staging: Path,
    reason: str,
    duration: float,
    started_at: Optional[str] = None,
) -> Report:
    """The report of a run that left none, built and scored as every run's is
    (runner.new_report / finish_report): every probe failed with the reason, every item it
    measures untested. Written to `staging` like a run's own."""
    rubric = load_rubric(None)
    rep = new_report(load_demo(demo_path), scenario, rubric, label=label, started_at=started_at)
    rep.duration_s = round(duration, 2)
    tail = log_tail(staging / "worker.log")
    if tail:
        rep.warnings.append("worker log (last lines): " + tail)
    return finish_report(rep, profile_of(spec).specs(), scenario, rubric, staging, reason=reason)
