"""What a scorer is: a pure function from stored evidence to one sheet item's result.
Scorers never touch the browser; point values come from the rubric item, thresholds from
the scenario's `scorers:` section (the scorer module's `Settings`, registered with
`scorer_settings`).

A scorer is registered with `@scorer(item_id, probes=(...), accepts={probe: (versions)})`.
It is called only when every probe it names has evidence (status ok); otherwise the item
is `untested` with the probes' errors as the reason, never 0 (errors are data,
architecture.md). It reads a probe's evidence as that probe's model
(`inp.evidence("timeline")`, skycity_bench/evidence/), and only in the versions it
declares: other versions are refused by `rescore` before anything is scored.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from skycity_bench.common.errors import Cause
from skycity_bench.inputs.rubric import Rubric, RubricItem
from skycity_bench.inputs.scenario import Scenario
from skycity_bench.reporting.run_report import ProbeRecord


@dataclass
class ScoreInput:
    item: RubricItem
    rubric: Rubric
    scenario: Scenario
    records: dict[str, ProbeRecord]
    out_dir: Optional[Path] = None  # where a scorer's renderer may write plots

    def evidence(self, probe: str) -> Any:
        """The probe's evidence as its model (skycity_bench/evidence/), at the version it
        was written with."""
        return self.records[probe].evidence()

    def settings(self, section: str) -> Any:
        """This scorer's thresholds: the scenario's `scorers.<section>`, validated."""
        return self.scenario.scorer_settings(section)

    def objective(self, status: str) -> float:
        """Objective sub-items: full pass = full points, partial = the rubric's share, else 0."""
        share = {"pass": 1.0, "partial": self.rubric.objective_partial_share}.get(status, 0.0)
        return self.item.points * share


@dataclass
class ItemScore:
    """One item's result. An `untested` one says why in `cause` (common/errors.py Cause), from
    the outcome that made it so: whether the page gave nothing to look at or the bench could
    not look decides what a page seen to be empty does to it (score_items.apply_observation)."""

    status: str  # pass | partial | fail | untested | review
    points: Optional[float]
    evidence: dict[str, Any] = field(default_factory=dict)
    # report.md measurement paths this scorer fills, e.g. {"smoothness.tier": 10}
    measurements: dict[str, Any] = field(default_factory=dict)
    cause: Optional[Cause] = None

    def __post_init__(self) -> None:
        if (self.status == "untested") != (self.cause is not None):
            raise ValueError(f"an item {self.status} has a cause only when untested (cause {self.cause})")


@dataclass
class ScorerSpec:
    item_id: str
    fn: Callable[[ScoreInput], ItemScore]
    probes: tuple[str, ...]
    # Evidence versions this scorer reads, per probe. A probe not named here is read in
    # whatever version it writes today (TRANSITIONAL: the runner's network log until it
    # has a model).
    accepts: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Optional: draw evidence figures after scoring; returns file names relative to out_dir.
    render: Optional[Callable[[ScoreInput, ItemScore, Path], list[str]]] = None
