"""What a scorer is: a pure function from stored evidence to one sheet item's result.
Scorers never touch the browser; point values and thresholds come from the rubric item.

A scorer is registered with `@scorer(item_id, probes=(...))`. The runner calls it only when
every probe it names has evidence (status ok); otherwise the item is `untested` with the
probes' errors as the reason, never 0 (errors are data, architecture.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from ..report import ProbeRecord
from ..rubric import Rubric, RubricItem
from ..scenario import Scenario


@dataclass
class ScoreInput:
    item: RubricItem
    rubric: Rubric
    scenario: Scenario
    records: dict[str, ProbeRecord]
    out_dir: Optional[Path] = None        # where a scorer's renderer may write plots

    def data(self, probe: str) -> dict:
        return self.records[probe].data

    def objective(self, status: str) -> float:
        """Objective sub-items: full pass = full points, partial = the rubric's share, else 0."""
        share = {"pass": 1.0, "partial": self.rubric.objective_partial_share}.get(status, 0.0)
        return self.item.points * share


@dataclass
class ItemScore:
    status: str                           # pass | partial | fail | untested | review
    points: Optional[float]
    evidence: dict[str, Any] = field(default_factory=dict)
    # report.md measurement paths this scorer fills, e.g. {"smoothness.tier": 10}
    measurements: dict[str, Any] = field(default_factory=dict)


@dataclass
class ScorerSpec:
    item_id: str
    fn: Callable[[ScoreInput], ItemScore]
    probes: tuple[str, ...]
    # Optional: draw evidence figures after scoring; returns file names relative to out_dir.
    render: Optional[Callable[[ScoreInput, ItemScore, Path], list[str]]] = None
