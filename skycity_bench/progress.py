"""Progress reporting, so long phases (60 s of playback, a 65 s recording) show what is
happening and how long is left. The runner and probes talk to this small interface; the
CLI plugs in rich, tests and batch workers use the silent one."""

from __future__ import annotations

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


class Stopwatch:
    def __init__(self):
        self.t = time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.t
