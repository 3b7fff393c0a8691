"""The memory watchdog and the process-tree helpers on real processes (no browser): a child
that grows past the limit is killed and recorded with the time the runner attributes it by;
a marked process is found and killed by its marker."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid

from skycity_bench.common.process_tree import MARKER_ENV, descendants, kill_marked, marked_processes
from skycity_bench.running.watchdog import MemoryWatchdog, kill_reason

GROW = "x = bytearray(300 * 2**20)\nimport time\ntime.sleep(60)\n"


def test_should_kill_a_child_over_the_limit_and_say_when():
    t0 = time.monotonic()
    with MemoryWatchdog(150, interval_s=0.1) as dog:
        child = subprocess.Popen([sys.executable, "-c", GROW])
        try:
            child.wait(timeout=30)
        finally:
            if child.poll() is None:
                child.kill()
    assert child.returncode == -9
    (k,) = dog.kills
    # rss_mb is rounded to whole MB: a child caught at 150.3 MB (over the limit, killed) says 150
    assert k["pid"] == child.pid and k["rss_mb"] >= 150 and k["limit_mb"] == 150
    assert dog.kills_since(t0) == [k] and dog.kills_since(time.monotonic()) == []
    assert "memory watchdog killed" in kill_reason(dog.kills) and "150 MB" in kill_reason(dog.kills)


def test_should_leave_a_child_under_the_limit_alone():
    with MemoryWatchdog(1024, interval_s=0.1) as dog:
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1.0)"])
        assert child.wait(timeout=30) == 0
    assert dog.kills == [] and dog.peak_mb > 0


def test_should_find_and_kill_every_marked_process():
    marker = uuid.uuid4().hex
    env = dict(os.environ, **{MARKER_ENV: marker})
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], env=env)
    try:
        deadline = time.monotonic() + 10
        while child.pid not in marked_processes(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marked_processes(marker) == [child.pid]
        assert child.pid in descendants(os.getpid())
        assert kill_marked(marker) == 1
        assert child.wait(timeout=10) == -9
    finally:
        if child.poll() is None:
            child.kill()
