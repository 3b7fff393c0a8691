"""A run's profile: which probes run, in which order, which rubric items it scores, and
how its browsers are used. `run`, a batch and `check` are profiles of the one execution
path (runner.execute)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional

from skycity_bench.common.errors import BenchError
from skycity_bench.inputs.rubric import Rubric, load_rubric
from skycity_bench.probes import ProbeSpec, registry

DEFAULT_MAX_MEMORY_MB = 3072


@dataclass(frozen=True)
class Profile:
    """How a candidate is run. `run` and the batch use the default (every probe, or those
    named); `check` (check.py) names its probes, adds its own fake-clock steps and skips the
    refresh calibration (it measures no timing)."""

    name: str = "run"
    probes: Optional[tuple[str, ...]] = None  # registry probes; None: all of them
    steps: tuple[ProbeSpec, ...] = ()  # the profile's own collection steps
    calibrate: bool = True
    network: str = "offline"  # offline | allow
    rubric_path: Optional[Path] = None
    max_memory_mb: float = DEFAULT_MAX_MEMORY_MB  # per browser process (watchdog.py)
    # The rubric items this profile's evidence decides; None: every item. A profile that
    # collects less (check: the hover phase only, one density pair) scores only these, so
    # its report never judges an item from evidence that was not collected for it.
    items: Optional[tuple[str, ...]] = None
    # Browsers running the fake-clock probes side by side after the real-time ones, which
    # always run alone (`run --jobs`; side_by_side.py). 1: one after the other.
    jobs: int = 1
    # `run --overlap`: off (the real-time probes alone, then the rest); pinned: the fake-clock
    # probes on `jobs` more browsers during the real-time ones, pinned to other cores
    # (overlap_pass.py, inputs/cpu_pinning.py); pinned-force: the same on a machine without spare cores
    # (testing the mechanics).
    overlap: str = "off"

    def specs(self) -> list[ProbeSpec]:
        """What runs, in run order (ProbeSpec.order). A probe whose pass also yields other
        chosen probes' evidence (ProbeSpec.produces) runs for them: they are not run again,
        and it runs with `produces` narrowed to those chosen."""
        chosen = registry.select(None if self.probes is None else list(self.probes)) if self.probes != () else []
        specs = sorted(chosen + list(self.steps), key=lambda s: s.order)
        names = {s.name for s in specs}
        specs = [replace(s, produces=tuple(p for p in s.produces if p in names)) if s.produces else s for s in specs]
        made = {p for s in specs for p in s.produces}
        return _after_what_they_read([s for s in specs if s.name not in made])

    def rubric(self) -> Rubric:
        rubric = load_rubric(self.rubric_path)
        if self.items is None:
            return rubric
        unknown = set(self.items) - {i.id for i in rubric.items}
        if unknown:
            raise BenchError(f"profile {self.name}: no such rubric item(s): {', '.join(sorted(unknown))}")
        return scoped_rubric(rubric, self.items)


def _after_what_they_read(specs: list[ProbeSpec]) -> list[ProbeSpec]:
    """The run order with every probe after the probes whose evidence it reads
    (ProbeSpec.after), whatever their `order` numbers say; otherwise as given. A cycle is a
    programming error and says so."""
    out: list[ProbeSpec] = []
    pending = list(specs)
    while pending:
        waiting = {s.name for s in pending}
        ready = next((s for s in pending if not set(s.after) & waiting), None)
        if ready is None:
            raise BenchError(f"probes read each other's evidence in a cycle: {', '.join(sorted(waiting))}")
        out.append(ready)
        pending.remove(ready)
    return out


def scoped_rubric(rubric: Rubric, items) -> Rubric:
    """The rubric with only these items (a profile's; `rescore` reads them back from the
    report's environment.profile_items, so a check's report is never re-judged on items its
    evidence was not collected for)."""
    return rubric.model_copy(update={"items": [i for i in rubric.items if i.id in set(items)]})
