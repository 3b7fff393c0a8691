"""The processes below a run: who they are, how much memory each holds, and how to end
every one of them (also those re-parented to init after their parent died).

Used by the memory watchdog (watchdog.py), the batch (it kills a worker's whole tree and
finds a worker left over from a killed batch by its marker) and the worker (it dies with
the batch that started it). Linux /proc only.
"""

from __future__ import annotations

import ctypes
import os
import re
import signal

PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
MARKER_ENV = "SKYCITY_RUN_MARKER"


def stat_fields(pid: int) -> list[bytes] | None:
    """The fields of /proc/PID/stat after the command name (which may hold spaces and
    parentheses, so the split is after the last ')'): [0] state, [1] ppid, ... [11] utime,
    [12] stime, [13] cutime, [14] cstime; None when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            s = f.read()
        return s[s.rindex(b")") + 2 :].split()
    except (OSError, ValueError):
        return None


def _stat(pid: int) -> tuple[int, int] | None:
    """(ppid, rss bytes) of a process, or None when it is gone."""
    fields = stat_fields(pid)
    if fields is None:
        return None
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            rss = int(f.read().split()[1]) * PAGE
        return int(fields[1]), rss
    except (OSError, ValueError, IndexError):
        return None


def cpu_seconds(pid: int) -> float | None:
    """CPU seconds so far (user and system, every thread, exited ones included) of a
    process, or None when it is gone."""
    fields = stat_fields(pid)
    return None if fields is None else (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def parent_pid(pid: int) -> int:
    """The parent of a live process (OSError when it is gone)."""
    st = _stat(pid)
    if st is None:
        raise OSError(f"process {pid} is gone")
    return st[0]


def descendants(root: int) -> dict[int, int]:
    """{pid: rss bytes} of every process below `root` (not root itself)."""
    info: dict[int, tuple[int, int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = _stat(int(name))
            if st:
                info[int(name)] = st
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in info.items():
        children.setdefault(ppid, []).append(pid)
    out, todo = {}, list(children.get(root, []))
    while todo:
        p = todo.pop()
        if p in out:
            continue
        out[p] = info[p][1]
        todo += children.get(p, [])
    return out


def marked_processes(marker: str) -> list[int]:
    """Processes whose environment carries SKYCITY_RUN_MARKER=marker: every process a
    worker started, also those re-parented to init after their parent died."""
    needle = f"{MARKER_ENV}={marker}".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    found.append(int(name))
        except OSError:
            pass
    return found


def kill_marked(marker: str) -> int:
    """SIGKILL every process carrying this marker; returns how many were signalled."""
    n = 0
    for pid in marked_processes(marker):
        try:
            os.kill(pid, signal.SIGKILL)
            n += 1
        except OSError:
            pass
    return n


def process_kind(pid: int) -> str:
    """'renderer', 'gpu-process', 'browser', ... (Chromium rewrites its command line as one
    space-separated title, so search the text, not argv)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            text = f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "?"
    m = re.search(r"--type=(\S+)", text)
    if m:
        return m.group(1)
    first = text.split(" ", 1)[0]
    return "browser" if "chrom" in first else os.path.basename(first)[:40] or "?"


def die_with_parent() -> None:
    """Linux: SIGKILL this process when the process that started it dies (a batch killed
    with kill -9 leaves no worker running on behind its back)."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() == 1:  # the parent died before prctl took effect
            os._exit(137)
    except OSError:
        pass
