"""What a probe is. Probes collect evidence only; they never read the rubric or give
points (scorers do that, from the evidence, without a browser).

A probe is one async function in one file under skycity_bench/probes/, registered with the
`@probe` decorator; the runner discovers the files, so adding a probe never means editing
the runner. It receives a `ProbeContext` and returns its evidence model (skycity_bench/evidence/, the
probe's version is the model's `evidence_version`); it raises `ProbeError` (optionally with
partial data) when it cannot collect. Evidence files (PNG, WebM ...) go into `ctx.out_dir`
and are named in the evidence.

A probe's `Settings` hold only what steers collection; thresholds that judge are the
scorers' (the scenario's `scorers:` section).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict

from skycity_bench.common.run_progress import Progress
from skycity_bench.inputs.demo_file import Demo
from skycity_bench.inputs.scenario import Scenario


class NoSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class Wanted:
    """The runner's answer to a probe that makes review material: make it or not, and why."""

    yes: bool
    reason: str


@dataclass
class ProbeSpec:
    name: str
    collect: Callable[[ProbeContext], Awaitable[Any]]
    version: str = "1"
    # The evidence model the probe returns; its evidence_version becomes the probe's version.
    evidence: Any = None
    order: int = 100  # run order; real-time probes first (least disturbed)
    # Plays the demo in real time (frame pacing, its real-time capture, playback's autoplay
    # look): runs alone, before the fake-clock probes, which `run --jobs N` runs side by side.
    realtime: bool = False
    settings: type[BaseModel] = NoSettings
    after: tuple[str, ...] = ()  # probes whose evidence this one reads: it runs after
    # them whatever `order` says (runner.Profile.specs)
    # Other probes whose evidence this probe's pass yields too (recording: its fake-clock
    # tour also samples the timeline, probes/_tour.py). When they are chosen with it, the
    # runner runs this probe only (Profile.specs), tells it in ctx.produces, and stores one
    # record per probe: such a run returns, and raises ProbeError with data, keyed by probe
    # name ({"recording": ..., "timeline": ...}). Chosen alone, each probe runs its own.
    produces: tuple[str, ...] = ()
    # Runs whenever one of these probes is selected (a named selection brings it along):
    # realtime_capture films frame_pacing's pass and must not be left out by `--probe`.
    companion_of: tuple[str, ...] = ()
    # A probe that makes review material for one rubric item (realtime_capture: the video
    # 录屏复核 of smoothness.frame_pacing). Whether a run wants it is the runner's decision,
    # from the probe's `when` setting (review | always | never) and, for `review`, the
    # item's status scored on the evidence collected before it; the probe is told
    # (ProbeContext.wanted) and reads no rubric and runs no scorer itself.
    review_material_for: Optional[str] = None
    description: str = ""
    # Seconds this probe may take for a scenario before it is stopped (demo time it plays
    # plus the scenario's grace); a probe over budget is recorded as an error.
    budget: Callable[[Scenario], float] = lambda sc: 60 + sc.timeouts.load_s + sc.timeouts.probe_grace_s
    # For a probe whose evidence has parts that stand alone (playback: autoplay, then
    # pause/resume/replay): when the run's budget stops it, its evidence from the parts it
    # finished (ProbeContext.keep), the unfinished ones marked untested with the reason the
    # runner gives; None from it (or no such function): a stopped probe keeps nothing.
    close_stopped: Optional[Callable[[ProbeContext, str], Any]] = None

    def __post_init__(self) -> None:
        if self.evidence is not None:
            self.version = self.evidence.evidence_version


@dataclass
class ProbeContext:
    demo: Demo
    scenario: Scenario
    out_dir: Path
    browser: Any  # browser.session.BrowserHandle
    settings: Any
    artifacts: dict[str, Any] = field(default_factory=dict)  # earlier probes' ProbeRecords
    progress: Progress = field(default_factory=Progress)
    # The probes whose evidence this run of the probe yields too (ProbeSpec.produces, those
    # chosen in this run); empty: only its own.
    produces: tuple[str, ...] = ()
    # For a probe that makes review material (ProbeSpec.review_material_for): whether this
    # run wants it and why (the runner's decision); None for every other probe.
    wanted: Optional[Wanted] = None
    # The probes of this run that read this probe's evidence (they name it in ProbeSpec.after
    # and run after it): the recording's tour pass captures the density probe's frames only
    # when density is one of them (capture once).
    readers: tuple[str, ...] = ()
    # The parts of its evidence the probe has finished, by name (ProbeSpec.close_stopped).
    kept: dict[str, Any] = field(default_factory=dict)

    def keep(self, part: str, value: Any) -> None:
        """Mark a part of the evidence finished: if the budget stops the probe later, the
        part is still scored (ProbeSpec.close_stopped)."""
        self.kept[part] = value

    async def open_page(self, **kw):
        """A fresh context and page on the demo (see BrowserHandle.open_page)."""
        return await self.browser.open_page(self.scenario, self.demo.url, **kw)

    def file(self, name: str) -> tuple[Path, str]:
        """(absolute path, name relative to the run folder) for an evidence file."""
        p = self.out_dir / name
        p.parent.mkdir(parents=True, exist_ok=True)
        return p, str(Path(name))
