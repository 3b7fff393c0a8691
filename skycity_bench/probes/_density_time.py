"""The density probe's time on a slowly rendering page (probes/density.py).

Why: a page that renders at a few frames a second makes every frame the probe asks for cost
a third of a second or more, plus its capture: all 16 instants of 20–35 s, their frames up to
±2 s around each, and the densified samples where the count dropped (a second page, played
from the start) took 8 minutes on a 3-frame-a-second city, and a heavier city ran past 11
with its progress saying "about 32 s left" all the while. So, when the probe replays the
window itself on a page whose measured frame cost is above the coarse-step limit:

- **A deadline.** The probe ends by the earlier of the end of its share of the run's budget
  (browser/clock_budget.py RunBudget.share) and its own budget (`own_s`), less FINISH_S for
  drawing the evidence.
- **A cost model of the frames.** The replay reaches each frame a sample needs in coarse clock
  steps to one frame before it and one fine frame (probes/density.py Replay.frame): `Walk`
  counts the frames so rendered for a plan's keys, and prices them at the page's frame cost
  plus a capture per key and an analysis per sample. The model is then corrected by what the
  pass really took so far (`pace`: the wall seconds spent over those the model gave for the
  same frames), so a page whose frames get slower than measured, or a loaded machine, is
  priced as it is.
- **Fewer instants, said.** Before the pass and after every sample the instants still to
  take are fitted to what is left: the rubric's own instants first, then the others spread
  evenly over the window, as many as fit; at least one instant is taken. What was planned,
  kept and left out, and why, is the evidence's `sampling`.
- **Densified samples as they fit.** The main pass leaves DENSIFY_SHARE of its time for the
  samples where the count dropped (a fresh page's load and walk included); they are taken,
  largest drop first, as far as what is left allows.
- **An honest estimate.** The probe's progress is the share of its time spent against the
  model's (paced) estimate of what is left, so the run's "left" follows it
  (common/run_progress.py extrapolates a phase's rest from its share done).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

FRAME_MS = 1000.0 / 60.0
# Wall seconds a sample costs besides rendering its frames: each key frame's capture and
# hand-off (a PNG under load), and the sample's analysis (1-6 s measured on the generated
# cities on a loaded 2-core machine).
CAPTURE_S, ANALYSIS_S = 0.15, 4.0
# Kept back at the end for drawing the lowest sample's evidence and the evidence itself.
FINISH_S = 10.0
# Of the time the main pass starts with, what it leaves for the densified samples (when not
# everything fits): the rubric asks for them where the count drops.
DENSIFY_SHARE = 0.25
# A fresh page's open and load before its walk, until one was measured.
OPEN_S = 10.0


@dataclass
class Walk:
    """How the replay reaches frames on a slow page: to one frame before a key in coarse steps
    of `step_ms` (the first one frame long), then one fine frame; a key one frame on, one fine
    frame. `cost_s`: wall seconds a rendered frame takes."""

    cost_s: float
    step_ms: int

    def frames(self, keys: Sequence[int], pos: int) -> int:
        """Frames rendered to take each of `keys` (60 Hz frame numbers, sorted) from frame `pos`."""
        n = 0
        for k in keys:
            gap = k - pos
            if gap <= 0:
                continue
            if gap < 2:
                n += gap
            else:
                coarse_ms = (gap - 1) * FRAME_MS
                n += 1 + math.ceil(max(0.0, coarse_ms - FRAME_MS) / self.step_ms) + 1
            pos = k
        return n

    def seconds(self, keys: Sequence[int], pos: int, samples: int) -> float:
        """The model's wall seconds for a pass over `keys` from `pos` analysing `samples`."""
        return self.frames(keys, pos) * self.cost_s + len(keys) * CAPTURE_S + samples * ANALYSIS_S


def keys_of(plan: Sequence[dict], delta_frames: int) -> list[int]:
    """Every frame a pass's samples use, sorted (probes/density.py plan_pass's entries)."""
    return sorted({p["key"] + k for p in plan for k in (0, delta_frames, *p["before"], *p["after"])})


def spread(times: Sequence[float], main: set[float], n: int) -> list[float]:
    """`n` of `times`: the rubric's instants (`main`) first, then the others spread evenly."""
    mains = [t for t in times if t in main][:n]
    rest = [t for t in times if t not in main]
    k = min(n - len(mains), len(rest))
    return sorted({*mains, *(rest[int(i * len(rest) / k)] for i in range(k))}) if k > 0 else sorted(mains)


@dataclass
class TimeFit:
    """One probe run's time on a slow page (see the module). `deadline` on `clock`."""

    walk: Walk
    deadline: float
    main: set[float]
    delta_frames: int
    share_s: float
    own_s: float
    clock: Callable[[], float] = time.monotonic
    started: float = 0.0
    spent_s: float = 0.0  # wall seconds of the passes so far ...
    modelled_s: float = 0.0  # ... and what the model gave for the same frames
    open_s: float | None = None  # a replay page's open and load, measured
    reserve_s: float = 0.0  # what the main pass leaves for the densified samples

    def __post_init__(self) -> None:
        self.started = self.started or self.clock()

    @property
    def pace(self) -> float:
        """Wall seconds spent per second the model gave (1 until a sample was taken)."""
        return self.spent_s / self.modelled_s if self.modelled_s > 0 else 1.0

    def left_s(self) -> float:
        return self.deadline - FINISH_S - self.clock()

    def need_s(self, plan: Sequence[dict], pos: int) -> float:
        """Paced wall seconds to take `plan`'s samples from frame `pos`."""
        return self.pace * self.walk.seconds([k for k in keys_of(plan, self.delta_frames) if k > pos], pos, len(plan))

    def fit(self, plan: Sequence[dict], pos: int, room_s: float, keep_one: bool) -> list[dict]:
        """The most of `plan`'s samples (the rubric's instants first, then spread) whose frames
        from `pos` fit in `room_s`; at least one when `keep_one`."""
        if self.need_s(plan, pos) <= room_s:
            return list(plan)
        by_t = {p["t"]: p for p in plan}
        times = sorted(by_t)
        for n in range(len(times) - 1, 0, -1):
            kept = [by_t[t] for t in spread(times, self.main, n)]
            if self.need_s(kept, pos) <= room_s:
                return kept
        return [by_t[spread(times, self.main, 1)[0]]] if keep_one and times else []

    def first_cut(self, plan: Sequence[dict]) -> list[dict]:
        """The main pass's samples that fit before it starts, DENSIFY_SHARE of the time left
        for the densified samples (but not the rubric's own instants: `trim`)."""
        self.reserve_s = self.left_s() * DENSIFY_SHARE
        return self.trim(plan, 0, self.reserve_s, keep_one=True)

    def trim(self, pending: Sequence[dict], pos: int, reserve_s: float, keep_one: bool = False) -> list[dict]:
        """What of a pass's samples still to take fits in what is left less `reserve_s`, at
        the pace measured so far. The reserve for the densified samples never costs one of
        the rubric's own instants: where it would, those that fit in all that is left are
        taken instead."""
        kept = self.fit(pending, pos, self.left_s() - reserve_s, keep_one)
        mains = [p for p in pending if p["t"] in self.main]
        if reserve_s <= 0 or all(p in kept for p in mains):
            return kept
        return self.fit(mains, pos, self.left_s(), keep_one) or kept

    def count(self, keys: Sequence[int], pos: int, samples: int, wall_s: float) -> None:
        """Taking `keys` from frame `pos` and analysing `samples` took `wall_s`: the pace."""
        self.spent_s += wall_s
        self.modelled_s += self.walk.seconds(keys, pos, samples)

    def densify_cut(self, plan: Sequence[dict]) -> list[dict]:
        """The densified samples (largest drop first: `plan` in that order) that fit in what is
        left, on a fresh page walked from the start; kept in time order."""
        room = self.left_s() - self.pace * (self.open_s if self.open_s is not None else OPEN_S)
        kept: list[dict] = []
        for p in plan:
            trial = sorted([*kept, p], key=lambda q: q["t"])
            if self.need_s(trial, 0) <= room:
                kept = trial
        return kept

    def progress(self, left_s: float) -> float:
        """The probe's share done: its time so far against that and the estimate of the rest."""
        took = self.clock() - self.started
        return took / (took + max(0.0, left_s)) if took + left_s > 0 else 1.0

    def note(self, planned: list[float], kept: list[float], extra: list[float], extra_kept: list[float]) -> dict:
        """The evidence's `sampling`: the probe's time, what was planned, taken and left out
        (instants and densified samples), and why."""
        left_out = [t for t in planned if t not in kept]
        extra_out = [t for t in extra if t not in extra_kept]
        took = (
            f"{len(kept)} of {len(planned)} instants"
            + (f" and {len(extra_kept)} of {len(extra)} densified samples" if extra else "")
            + (" (the rubric's instants first)" if left_out or extra_out else "")
        )
        why = (
            f"the page's frames cost {self.walk.cost_s * 1000:.0f} ms each, and took {self.pace:.1f}x the "
            f"time the model gave them: {took} fit in its {self.deadline - self.started:.0f} s (the earlier of "
            f"its {self.share_s:.0f} s share of the run's budget and its own {self.own_s:.0f} s budget)"
        )
        return {
            "frame_cost_ms": round(self.walk.cost_s * 1000, 1),
            "share_s": round(self.share_s, 1),
            "own_budget_s": round(self.own_s, 1),
            "time_s": round(self.deadline - self.started, 1),
            "pace": round(self.pace, 2),
            "planned": planned,
            "kept": kept,
            "left_out": left_out,
            "densified_planned": extra,
            "densified_kept": extra_kept,
            "densified_left_out": extra_out,
            "why": why,
        }
