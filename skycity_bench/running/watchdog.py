"""The memory watchdog: kills any single process below this one (Chromium's browser,
renderer and GPU processes) whose resident memory passes the limit, and says which probe
it was running for, so the runner can record the kill in that probe's evidence before the
report is scored (runner.execute). Chromium sees the kill as a renderer crash; without the
watchdog's word the report would blame the demo's crash, not its memory.

A thread, not an asyncio task: it must keep watching while the event loop waits on a
wedged page. Per process, not summed: Chromium's processes share memory, a sum overcounts.
"""

from __future__ import annotations

import os
import signal
import threading
import time

from skycity_bench.common.process_tree import descendants, process_kind


class MemoryWatchdog(threading.Thread):
    def __init__(self, limit_mb: float, interval_s: float = 0.2):
        super().__init__(daemon=True, name="memory-watchdog")
        self.limit = limit_mb * 2**20
        self.limit_mb = limit_mb
        self.interval = interval_s
        self.kills: list[dict] = []
        self.peak_mb = 0.0
        self._stop = threading.Event()

    def run(self) -> None:
        me = os.getpid()
        while not self._stop.wait(self.interval):
            try:
                procs = descendants(me)
            except OSError:
                continue
            for pid, rss in procs.items():
                self.peak_mb = max(self.peak_mb, rss / 2**20)
                if rss > self.limit:
                    kind = process_kind(pid)
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        continue
                    self.kills.append(
                        {
                            "pid": pid,
                            "process": kind,
                            "rss_mb": round(rss / 2**20),
                            "limit_mb": self.limit_mb,
                            "t": time.time(),
                            "t_mono": time.monotonic(),
                        }
                    )

    def stop(self) -> None:
        self._stop.set()

    def kills_since(self, t_mono: float) -> list[dict]:
        return [k for k in self.kills if k["t_mono"] >= t_mono]

    def __enter__(self) -> MemoryWatchdog:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def kill_reason(kills: list[dict]) -> str:
    """One line saying why a browser process died when the watchdog killed it."""
    first = kills[0]
    why = (
        f"the bench's memory watchdog killed the {first['process']} process at {first['rss_mb']} MB "
        f"(limit {first['limit_mb']:g} MB per browser process): the demo's memory blew up"
    )
    return why + (f" ({len(kills)} kills)" if len(kills) > 1 else "")
