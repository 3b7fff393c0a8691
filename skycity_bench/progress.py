"""Progress reporting, so long phases (60 s of playback, a 65 s recording) show what is
happening and how long is left. The runner and probes talk to this small interface; the
CLI plugs in rich, tests use the silent one, a batch worker writes JSON lines that its
batch turns into the batch's own progress (batch.py)."""

from __future__ import annotations

import json
import sys
import threading
import time


class Task:
    def update(self, completed: float, note: str = "") -> None: ...
    def close(self) -> None: ...


class Progress:
    def task(self, description: str, total: float, unit: str = "s") -> Task:
        return Task()

    def log(self, message: str) -> None:
        pass


class RichProgress(Progress):
    """Rich progress bars with elapsed time and time remaining."""

    def __init__(self, console=None):
        from rich.console import Console
        from rich.progress import (BarColumn, Progress as RP, TaskProgressColumn, TextColumn,
                                   TimeElapsedColumn, TimeRemainingColumn)

        self.console = console or Console(stderr=True)
        self._rp = RP(TextColumn("[bold]{task.description}"), BarColumn(), TaskProgressColumn(),
                      TextColumn("{task.fields[note]}"), TimeElapsedColumn(), TextColumn("left"),
                      TimeRemainingColumn(), console=self.console, transient=True)
        self._rp.start()

    def task(self, description: str, total: float, unit: str = "s") -> Task:
        rp = self._rp
        tid = rp.add_task(description, total=total, note="")

        class _T(Task):
            def update(self, completed: float, note: str = "") -> None:
                rp.update(tid, completed=completed, note=note)

            def close(self) -> None:
                rp.update(tid, completed=total)
                rp.remove_task(tid)

        return _T()

    def log(self, message: str) -> None:
        self._rp.console.print(message)

    def stop(self) -> None:
        self._rp.stop()


class JsonLinesProgress(Progress):
    """The same interface as JSON lines on a stream (a worker's stdout, read by the batch):
    {"ev": "task"|"update"|"close"|"log", ...}."""

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
