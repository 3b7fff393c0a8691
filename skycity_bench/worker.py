"""One candidate run in its own process: `python -m skycity_bench.worker SPEC.json`.

The batch (batch.py) starts one worker per candidate run, so a demo that crashes, wedges or
eats the browser kills at most this process, never the batch. The worker

- dies with its parent (PR_SET_PDEATHSIG): a batch killed with kill -9 leaves no worker
  running on behind its back that could write into a folder the resumed batch reuses;
- runs `runner.run_candidate` into the spec's (staging) folder, which writes report.json
  atomically whatever the demo does;
- watches the memory of every process below it (Chromium's browser, renderer and GPU
  processes) and kills one that grows past `max_memory_mb`; Chromium reports that as a
  renderer crash, the probe records it, and the worker adds the reason to the report;
- reports progress as JSON lines on stdout, which the batch turns into its own progress
  bar and ETA.
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
import re
import signal
import sys
import threading
import time
from pathlib import Path

from .progress import Progress, Task

PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


# ----------------------------------------------------------------- process tree helpers
def _stat(pid: int) -> tuple[int, int] | None:
    """(ppid, rss bytes) of a process, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            s = f.read()
        ppid = int(s[s.rindex(b")") + 2:].split()[1])
        with open(f"/proc/{pid}/statm", "rb") as f:
            rss = int(f.read().split()[1]) * PAGE
        return ppid, rss
    except (OSError, ValueError, IndexError):
        return None


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
    needle = f"SKYCITY_RUN_MARKER={marker}".encode()
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
    n = 0
    for pid in marked_processes(marker):
        try:
            os.kill(pid, signal.SIGKILL)
            n += 1
        except OSError:
            pass
    return n


def _cmd_type(pid: int) -> str:
    """'renderer', 'gpu-process', ... (Chromium rewrites its command line as one
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


class MemoryWatchdog(threading.Thread):
    """Kills any single process below this one whose resident memory passes the limit.
    A thread, not a task: it must keep watching while the event loop waits on a wedged
    page. Per process, not summed: Chromium's processes share memory, a sum overcounts."""

    def __init__(self, limit_mb: float, interval_s: float = 0.2):
        super().__init__(daemon=True)
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
                    kind = _cmd_type(pid)
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        continue
                    self.kills.append({"pid": pid, "process": kind, "rss_mb": round(rss / 2**20),
                                       "limit_mb": self.limit_mb, "t": time.time()})

    def stop(self) -> None:
        self._stop.set()


# ----------------------------------------------------------------- progress on stdout
class JsonLinesProgress(Progress):
    """The runner's progress interface, as JSON lines for the batch to read."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stdout
        self._n = 0
        self._lock = threading.Lock()

    def _emit(self, **ev) -> None:
        with self._lock:
            try:
                self.stream.write(json.dumps(ev, ensure_ascii=False) + "\n")
                self.stream.flush()
            except (OSError, ValueError):
                pass

    def task(self, description: str, total: float, unit: str = "s") -> Task:
        self._n += 1
        tid, outer = self._n, self
        outer._emit(ev="task", id=tid, description=description, total=total)

        class _T(Task):
            last = 0.0

            def update(self, completed: float, note: str = "") -> None:
                now = time.monotonic()
                if now - self.last >= 0.5:        # enough for a progress bar, little chatter
                    self.last = now
                    outer._emit(ev="update", id=tid, completed=completed, total=total, note=note)

            def close(self) -> None:
                outer._emit(ev="close", id=tid)

        return _T()

    def log(self, message: str) -> None:
        self._emit(ev="log", message=message)


# ----------------------------------------------------------------- the run
def _die_with_parent() -> None:
    """Linux: SIGKILL this process when the batch that started it dies."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)      # PR_SET_PDEATHSIG
        if os.getppid() == 1:              # the parent died before prctl took effect
            os._exit(137)
    except OSError:
        pass


def annotate_memory_kills(report, kills: list[dict]) -> None:
    """Say in the report why the renderer 'crashed' when the watchdog killed it."""
    if not kills:
        return
    first = kills[0]
    why = (f"the bench's memory watchdog killed the {first['process']} process at {first['rss_mb']} MB "
           f"(limit {first['limit_mb']:g} MB per browser process): the demo's memory blew up")
    report.warnings.append(why + (f" ({len(kills)} kills)" if len(kills) > 1 else ""))
    for rec in report.probes.values():
        if rec.status == "error" and rec.error and ("crash" in rec.error.lower() or "closed" in rec.error.lower()
                                                     or "budget" in rec.error):
            rec.error = f"{rec.error} — {why}"
    setattr(report, "memory_watchdog", {"kills": kills})


async def run_watched(demo, sc, out_dir: Path, *, probes=None, progress=None, network: str = "offline",
                      label=None, max_memory_mb: float = 3072):
    """runner.run_candidate under the memory watchdog; a watchdog kill is written into the
    report (and the items re-scored from the annotated evidence)."""
    from .report import save
    from .rubric import load_rubric
    from .runner import run_candidate
    from .scoring import score_report

    dog = MemoryWatchdog(float(max_memory_mb))
    dog.start()
    try:
        report = await run_candidate(demo, sc, out_dir, probes=probes, progress=progress, network=network, label=label)
    finally:
        dog.stop()
    if dog.kills:
        annotate_memory_kills(report, dog.kills)
        score_report(report, sc, load_rubric(None), out_dir)   # items read the annotated errors
        save(report, out_dir)
    return report


async def _run(spec: dict) -> int:
    from .scenario import load_scenario

    sc = load_scenario(spec.get("scenario"), spec.get("overrides") or {})
    await run_watched(spec["demo"], sc, Path(spec["out_dir"]), probes=spec.get("probes") or None,
                      progress=JsonLinesProgress(), network=spec.get("network", "offline"), label=spec.get("label"),
                      max_memory_mb=float(spec.get("max_memory_mb") or 3072))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m skycity_bench.worker SPEC.json", file=sys.stderr)
        return 2
    _die_with_parent()
    spec = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    return asyncio.run(_run(spec))


if __name__ == "__main__":
    sys.exit(main())
