"""Probes side by side (`run --jobs N`): how many browsers a run gets by
default, starting the extra ones, and handing ready probes to free browsers. The runner
(runner.py) decides what runs where; this module only schedules."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Sequence
from typing import Optional

from skycity_bench.browser.session import BrowserHandle
from skycity_bench.probes import ProbeSpec

log = logging.getLogger(__name__)

# What one more browser running a fake-clock probe side by side needs (`run --jobs`): a
# Chromium with a 1920x1080 WebGL page (renderer, GPU process, SwiftShader's buffers) and the
# probe's frames on this side; about 1.5 GB measured on the reference demo at 1080p.
JOB_MEMORY_MB = 1536


# At most this many cores, one browser (measured): a single tour pass already keeps
# two cores busy (the demo's software rendering and Chromium's captures, the encoder and the
# registration threads beside them). On the 2-core machine (load 4-6 from other work) two tour
# passes side by side (benchmarks/tour_cost.py, 20 frames each) took 45 s and 36 s against 20 s
# alone: no throughput gained (45 s for two against 40 s one after the other), and each step
# and capture up to 1.5x slower, which brings the run's wall-clock limits closer (a --jobs 2
# run at load 17 timed out reading the demo's clock in shops).
SOLO_MAX_CPUS = 2


def default_jobs(cpus: Optional[int] = None) -> int:
    """`run --jobs` when not given: one browser per core this process may run on
    (sched_getaffinity), no more than the available memory holds at JOB_MEMORY_MB each; one
    on a machine of SOLO_MAX_CPUS cores or fewer (see there: side by side gains nothing
    there and makes wall-clock timeouts likelier). `cpus`: the cores the fake-clock probes
    get instead (`run --overlap pinned`: those the pacing browser leaves them)."""
    if cpus is None:
        try:
            cpus = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            cpus = os.cpu_count() or 1
    if cpus <= SOLO_MAX_CPUS:
        return 1
    avail_mb = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    avail_mb = int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    by_memory = int(avail_mb // JOB_MEMORY_MB) if avail_mb is not None else cpus
    return max(1, min(cpus, by_memory))


async def more_browsers(pw, handle, n: int) -> list:
    """N more browsers for probes side by side: the same network policy and library cache,
    and the run's one record of requests, page events and render budget (the report's
    network log, page events and render cost cover every browser of the run)."""
    if n <= 0:
        return []
    out = []
    for _ in range(n):
        h = BrowserHandle(pw, offline=handle.offline, resolvers=handle.resolvers)
        h.requests, h.misses, h.page_events = handle.requests, handle.misses, handle.page_events
        h.budget = handle.budget
        out.append(h)
    got = await asyncio.gather(*(h.start() for h in out), return_exceptions=True)
    failed = [e for e in got if isinstance(e, BaseException)]
    if failed:  # fewer browsers side by side, never a failed run
        log.warning("could not start %d more browser(s) for --jobs: %s", len(failed), failed[0])
        for h, r in zip(out, got):
            if isinstance(r, BaseException):
                await h.kill()
    return [h for h, r in zip(out, got) if not isinstance(r, BaseException)]


async def run_side_by_side(specs: Sequence[ProbeSpec], handles: list, one, weight=None) -> None:
    """Run `specs` on these browsers, one probe per browser at a time; whenever a browser is
    free it takes a ready probe: one whose inputs (ProbeSpec.after, or a pass that produces
    them) are no longer waiting or running. With one browser that is the plain run order;
    with more, the longest first by `weight` (the probe's budget), so the long tour pass
    starts at once instead of after the short probes, and its readers with it."""
    pending = list(specs)
    busy: set[str] = set()
    changed = asyncio.Condition()

    def names(s: ProbeSpec) -> set[str]:
        return {s.name, *s.produces}

    async def worker(h) -> None:
        while True:
            async with changed:
                while True:
                    if not pending:
                        return
                    blocked = busy | {n for s in pending for n in names(s)}
                    can = [s for s in pending if not set(s.after) & (blocked - names(s))]
                    if can:
                        ready = max(can, key=weight) if weight is not None and len(handles) > 1 else can[0]
                        break
                    await changed.wait()
                pending.remove(ready)
                busy.update(names(ready))
            try:
                await one(ready, h)
            finally:
                async with changed:
                    busy.difference_update(names(ready))
                    changed.notify_all()

    tasks = [asyncio.ensure_future(worker(h)) for h in handles]
    try:
        await asyncio.gather(*tasks)
    except BaseException:  # one browser's failure ends the others' work too
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
