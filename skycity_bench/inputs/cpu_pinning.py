"""`run --overlap pinned`: on a machine with spare cores, the fake-clock
probes run DURING the real-time pacing run instead of after it, on other cores.

The pacing browser (the run's first Chromium: every process and thread of its tree, the
GPU process with SwiftShader's threads included) is pinned to cores of its own; every other
process this run started (the fake-clock browsers, Playwright's driver, an encoder) and
every thread of the bench itself are pinned to the rest (`os.sched_setaffinity` per thread:
on Linux it sets one thread, so each is set by its id). A process or thread born later
inherits its parent's mask, and a sweep every `overlap.repin_every_s` catches any that did
not. After the real-time probes the original mask is given back to all of them.

How much the probes beside it still disturbed the pacing cores is measured, not assumed:
the same blank-page rAF calibration (browser/rate_calibration.py) on the pinned pacing browser,
once alone before the fake-clock probes start and again beside them; scorers/overlap.py
judges the change, and the runner re-runs the real-time probes alone when it is too large.

Linux only (/proc, sched_setaffinity); a machine without them is refused before a browser
starts.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from skycity_bench.common.errors import UserError
from skycity_bench.common.process_tree import descendants, process_kind

MODES = ("off", "pinned", "pinned-force")
_SYS_CPU = Path("/sys/devices/system/cpu")


def allowed_cpus() -> tuple[int, ...]:
    """The CPUs this process may run on (its affinity mask), sorted."""
    return tuple(sorted(os.sched_getaffinity(0)))


def _siblings(cpu: int) -> set[int]:
    """The logical CPUs sharing `cpu`'s physical core (SMT), itself included."""
    try:
        text = (_SYS_CPU / f"cpu{cpu}" / "topology" / "thread_siblings_list").read_text().strip()
    except OSError:
        return {cpu}
    out: set[int] = set()
    for part in text.split(","):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out or {cpu}


@dataclass(frozen=True)
class CpuSplit:
    """Which CPUs the pacing browser gets and which the rest of the run gets."""

    allowed: tuple[int, ...]
    pacing: tuple[int, ...]
    others: tuple[int, ...]
    forced: bool = False
    # whole physical cores went to the pacing browser (their SMT siblings with them), so no
    # fake-clock work shares a core with it; False when forcing on a machine too small for it
    whole_cores: bool = True

    def to_json(self) -> dict:
        return {
            "allowed_cpus": list(self.allowed),
            "pacing_cpus": list(self.pacing),
            "other_cpus": list(self.others),
            "forced": self.forced,
            "whole_cores": self.whole_cores,
        }


def plan_split(settings, force: bool = False, allowed: Optional[Iterable[int]] = None, siblings=_siblings) -> CpuSplit:
    """The pacing browser's cores: the first `settings.pacing_cpus` CPUs of the mask taken a
    physical core at a time (SMT siblings go with them), the rest for everything else.
    Refused (UserError, one line) with fewer than `settings.min_cpus` CPUs in the mask or no
    CPU left for the rest; `force` (testing the mechanics on a small machine) only needs two
    CPUs, giving the pacing browser at most all but one."""
    cpus = tuple(sorted(allowed if allowed is not None else allowed_cpus()))
    if settings is None:
        raise UserError("--overlap pinned: the scenario has no `overlap:` section (see scenarios/skycity.yaml)")
    have = f"this process may run on {len(cpus)} ({cpu_ranges(cpus)})"
    if len(cpus) < 2:
        raise UserError(f"--overlap pinned: needs at least 2 CPUs to pin the pacing browser apart; {have}")
    if len(cpus) < settings.min_cpus and not force:
        raise UserError(
            f"--overlap pinned: needs at least {settings.min_cpus} CPUs (scenario overlap.min_cpus) so "
            f"the pacing browser keeps {settings.pacing_cpus} of its own; {have}. Run without --overlap "
            "(pacing alone, then the probes), or --overlap pinned-force to test the mechanics only"
        )
    want = min(settings.pacing_cpus, len(cpus) - 1)
    pacing: list[int] = []
    for c in cpus:
        if len(pacing) >= want:
            break
        if c not in pacing:
            pacing += sorted(s for s in siblings(c) | {c} if s in cpus and s not in pacing)
    whole = True
    if len(pacing) >= len(cpus):  # one core's siblings are the whole mask: split them
        if not force:
            raise UserError(
                f"--overlap pinned: the pacing browser's {settings.pacing_cpus} core(s) with their SMT "
                f"siblings leave no CPU for the probes; {have}"
            )
        pacing, whole = list(cpus[:want]), False
    others = tuple(c for c in cpus if c not in pacing)
    return CpuSplit(allowed=cpus, pacing=tuple(sorted(pacing)), others=others, forced=force, whole_cores=whole)


def cpu_ranges(cpus: Iterable[int]) -> str:
    cpus = sorted(cpus)
    out, start = [], None
    for i, c in enumerate(cpus):
        if start is None:
            start = c
        if i + 1 == len(cpus) or cpus[i + 1] != c + 1:
            out.append(f"{start}" if start == c else f"{start}-{c}")
            start = None
    return ",".join(out) or "none"


async def browser_pid(handle) -> int:
    """The pid of a BrowserHandle's Chromium browser process (BrowserHandle.pid)."""
    return await handle.pid()


def _threads(pid: int) -> list[int]:
    try:
        return [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return []


@dataclass
class Pinner:
    """Keeps the pacing browser's tree on `split.pacing` and everything else this process
    started, and this process's own threads, on `split.others`, until `restore()`."""

    split: CpuSplit
    pacing_pid: int
    root_pid: int = field(default_factory=os.getpid)
    sweeps: int = 0
    set_calls: int = 0
    failures: int = 0
    restarts: int = 0
    _done: bool = False

    def groups(self) -> tuple[set[int], set[int]]:
        """(the pacing browser's processes, every other process of the run incl. this one)."""
        below = descendants(self.root_pid)
        pacing = {self.pacing_pid, *descendants(self.pacing_pid)} & ({self.pacing_pid} | set(below))
        return pacing, ({self.root_pid} | set(below)) - pacing

    def _set(self, pids: Iterable[int], cpus: set[int]) -> None:
        for pid in pids:
            for tid in _threads(pid):
                try:
                    if os.sched_getaffinity(tid) != cpus:
                        os.sched_setaffinity(tid, cpus)
                        self.set_calls += 1
                except OSError:  # the thread ended meanwhile, or may not be moved
                    self.failures += 1

    def apply(self) -> None:
        """One sweep: every thread of every process onto its group's CPUs."""
        if self._done:
            return
        pacing, rest = self.groups()
        self._set(pacing, set(self.split.pacing))
        self._set(rest, set(self.split.others))
        self.sweeps += 1

    async def keep(self, every_s: float, handle=None) -> None:
        """Sweep every `every_s` seconds until cancelled (new pages, processes, threads).
        With the pacing browser's `handle`: a browser it restarted (a probe over its budget,
        a crashed renderer) is found again and pinned as the pacing browser."""
        browser = getattr(handle, "browser", None)
        while not self._done:
            await asyncio.sleep(every_s)
            if handle is not None and handle.browser is not None and handle.browser is not browser:
                try:
                    self.pacing_pid, browser = await browser_pid(handle), handle.browser
                    self.restarts += 1
                except Exception:  # still starting: the next sweep tries again
                    pass
            self.apply()

    def read_back(self) -> dict:
        """What the kernel says now: per group, the processes (by kind), thread count and
        the CPU masks found on their threads. The report keeps it (and tests check it)."""
        out = {}
        pacing, rest = self.groups()
        for name, pids, want in (("pacing_browser", pacing, self.split.pacing), ("others", rest, self.split.others)):
            masks: dict[str, int] = {}
            kinds: dict[str, int] = {}
            threads = off = 0
            for pid in sorted(pids):
                kinds[process_kind(pid)] = kinds.get(process_kind(pid), 0) + 1
                for tid in _threads(pid):
                    try:
                        m = tuple(sorted(os.sched_getaffinity(tid)))
                    except OSError:
                        continue
                    threads += 1
                    masks[cpu_ranges(m)] = masks.get(cpu_ranges(m), 0) + 1
                    off += m != tuple(want)
            out[name] = {
                "pids": sorted(pids),
                "kinds": kinds,
                "threads": threads,
                "thread_masks": masks,
                "threads_off_their_cpus": off,
                "cpus": list(want),
            }
        return out

    def counts(self) -> dict:
        return {
            "sweeps": self.sweeps,
            "threads_moved": self.set_calls,
            "failed_moves": self.failures,
            "pacing_browser_restarts": self.restarts,
        }

    def restore(self) -> None:
        """The original mask back on every process and thread of the run (pacing tree too)."""
        self._done = True
        pacing, rest = self.groups()
        self._set(pacing | rest, set(self.split.allowed))
