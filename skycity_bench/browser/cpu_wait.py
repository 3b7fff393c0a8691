"""How long a browser's threads waited for a CPU that other processes held: the part of a
wall-clock wait that is the machine's noise, not the demo's own time.

Why: the load limit (timeouts.load_s) is meant for the demo, yet on a shared machine (a CI
job running two test workers beside each other, a reference host with a busy neighbour)
the same page's load, and its first frame's shader compiles on software WebGL, took from
under a second to past the 20 s limit, and the probes that needed the page came out
`untested` for the machine's load, not the demo's. So a wait that is meant as the demo's
time counts wall time less the time its browser spent runnable but not running: the
kernel's run-queue wait of each thread (/proc/<pid>/task/<tid>/schedstat, second field, ns).

Which threads: every thread of the run's Chromium (browser, GPU process where SwiftShader
runs, renderers, utilities), of Playwright's driver that started it, and of the bench's own
process (its request router answers a CDN-importing demo's module requests from the offline
cache, on the load's critical path), and the figure is the largest wait credited to any one
of them; another run's browser beside it in the same process is another process here. A page's
load moves along one critical path that hops between threads (the renderer's main thread
waits on the GPU process and back); the most-delayed single thread is a lower bound of that
path's loss, where a sum would count threads waiting side by side several times over. So a
demo is never credited more than the machine took from it, and on a quiet machine the
figure is ~0 and the limit is plain wall time (a page hung at load still ends at load_s).

Whose noise: a thread also waits for its own browser's other threads (a renderer beside
the GPU process on a busy core, SwiftShader's workers), and that is the demo's own work.
So a thread's wait is credited only in the share of the CPU time that others used in the
meantime (other processes' work and the hypervisor's steal, from /proc/stat) against all
that could have held it up (the others' and its sibling threads' run time, from the same
schedstat files; not its own): pinned alone to one CPU, the bench's test page waited 0.84 s
of a 2 s load for its own threads, and is credited ~0; beside six busy processes on that
CPU about 0.9 of the longest wait.

Where schedstat cannot be read (not Linux, a kernel without it), nothing is credited and
callers keep plain wall time.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

from skycity_bench.browser.rate_calibration import cpu_sample
from skycity_bench.common.process_tree import cpu_seconds, descendants, process_kind

_PROC = "/proc"


def thread_times(root: int, also: tuple[int, ...] = ()) -> dict[int, tuple[int, int]] | None:
    """{tid: (run time, run-queue wait) in ns} of every thread of `root`, the processes
    below it and the processes `also` (not their children); None where the root's own
    figures cannot be read."""
    out: dict[int, tuple[int, int]] = {}
    for pid in [root, *descendants(root), *also]:
        try:
            tids = os.listdir(f"{_PROC}/{pid}/task")
        except OSError:
            if pid == root:
                return None
            continue  # exited between the listing and now
        for tid in tids:
            try:
                with open(f"{_PROC}/{pid}/task/{tid}/schedstat", "rb") as f:
                    run, wait = f.read().split()[:2]
                out[int(tid)] = (int(run), int(wait))
            except (OSError, ValueError):
                continue
    return out or None


def gpu_process_cpu_s(root: int | None) -> float | None:
    """CPU seconds so far of the GPU process of the browser below `root`, where SwiftShader
    renders WebGL on a machine without a GPU; None when none is found."""
    if root is None:
        return None
    gpu = next((pid for pid in descendants(root) if process_kind(pid) == "gpu-process"), None)
    return None if gpu is None else cpu_seconds(gpu)


def _busy_s(a: dict | None, b: dict | None) -> tuple[float, float] | None:
    """(busy, stolen) CPU seconds of the whole machine between two /proc/stat samples."""
    if not a or not b:
        return None
    hz = os.sysconf("SC_CLK_TCK")
    total, idle, steal = b["total"] - a["total"], b["idle"] - a["idle"], b["steal"] - a["steal"]
    return max(0, total - idle - steal) / hz, max(0, steal) / hz


@dataclass
class WaitClock:
    """Wall time since `start`, and the part of it credited to the machine's noise
    (`waited_s`): the largest run-queue wait of one of the browser's threads, in the share
    the other processes had in what could hold it up. Threads that appear later
    count from zero (all their time is inside the interval); threads that exit keep the last
    figures read."""

    root: int | None
    also: tuple[int, ...] = ()
    start: float = field(default_factory=time.monotonic)
    first: dict[int, tuple[int, int]] = field(default_factory=dict)
    last: dict[int, tuple[int, int]] = field(default_factory=dict)
    stat_first: dict | None = None
    stat_last: dict | None = None
    readable: bool = False

    @classmethod
    def begin(cls, root: int | None, also: tuple[int, ...] = (), start: float | None = None) -> WaitClock:
        """Counting from now; `start` (a time.monotonic() a little before) dates the wall
        time from there instead (the waits are counted from now either way)."""
        c = cls(root, tuple(also)) if start is None else cls(root, tuple(also), start=start)
        got = thread_times(root, c.also) if root else None
        if got is not None:
            c.first, c.last, c.readable = dict(got), dict(got), True
            c.stat_first = c.stat_last = cpu_sample(own=False)
        return c

    def read(self) -> None:
        if not self.readable or self.root is None:  # readable: a root was read at the start
            return
        got = thread_times(self.root, self.also)
        if got:
            self.last.update(got)
        self.stat_last = cpu_sample(own=False)

    @property
    def wall_s(self) -> float:
        return time.monotonic() - self.start

    def _delta(self, i: int) -> list[int]:
        return [v[i] - self.first.get(t, (0, 0))[i] for t, v in self.last.items()]

    @property
    def longest_wait_s(self) -> float:
        """Longest run-queue wait of one browser thread since start, seconds."""
        return max(self._delta(1), default=0) / 1e9 if self.readable else 0.0

    def _others_mine(self) -> tuple[float, float] | None:
        """(CPU seconds of everything but this browser (steal included), of this browser's
        threads) since start; None when it cannot be read."""
        busy = _busy_s(self.stat_first, self.stat_last) if self.readable else None
        if busy is None:
            return None
        mine = sum(max(0, d) for d in self._delta(0)) / 1e9
        return max(0.0, busy[0] - mine) + busy[1], mine

    @property
    def others_share(self) -> float:
        """Of the machine's busy CPU time since start, the share that was not this
        browser's threads' (0 when it cannot be read)."""
        got = self._others_mine()
        if not got or sum(got) <= 0:
            return 0.0
        return got[0] / sum(got)

    @property
    def waited_s(self) -> float:
        """The wait credited to other processes: per thread, its run-queue wait times the
        share of the CPU time the others used against what could have held it up (the
        others' and its sibling threads', not its own run time); the largest of these."""
        got = self._others_mine()
        if not got or got[0] <= 0:
            return 0.0
        others, mine = got
        best = 0.0
        for run, wait in zip(self._delta(0), self._delta(1)):
            rest = others + max(0.0, mine - max(0, run) / 1e9)
            if rest > 0:
                best = max(best, max(0, wait) / 1e9 * others / rest)
        return best

    def own_s(self) -> float:
        """Wall time less the machine's share: the demo's own time (never below 0)."""
        return max(0.0, self.wall_s - self.waited_s)

    def to_json(self) -> dict:
        return {
            "wall_s": round(self.wall_s, 2),
            "cpu_wait_s": round(self.waited_s, 2),
            "longest_thread_wait_s": round(self.longest_wait_s, 2),
            "others_share": round(self.others_share, 3),
            "measured": self.readable,
        }
