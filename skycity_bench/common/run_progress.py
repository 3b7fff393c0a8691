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
    # A display a person watches (a terminal, a log): the runner wraps it in RunProgress, one
    # view of the whole run. A batch worker's JSON lines stay per task (batch_progress.py).
    run_view = False

    def task(self, description: str, total: float, unit: str = "s") -> Task:
        return Task()

    def log(self, message: str) -> None:
        pass


class RichProgress(Progress):
    """Rich progress bars with elapsed time and time remaining."""

    run_view = True

    def __init__(self, console=None):
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import (
            Progress as RP,
        )

        self.console = console or Console(stderr=True)
        self._rp = RP(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TaskProgressColumn(),
            TextColumn("{task.fields[note]}"),
            TimeElapsedColumn(),
            TextColumn("left"),
            TimeRemainingColumn(),
            console=self.console,
            transient=True,
        )
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


class LineProgress(Progress):
    """Plain lines for a log or a pipe (no terminal to redraw): a line when a task starts and
    when it ends, and between those at most one every `every_s` per task."""

    run_view = True

    def __init__(self, stream=None, every_s: float = 15.0):
        self.stream = stream or sys.stderr
        self.every_s = every_s
        self._lock = threading.Lock()
        self.started = time.monotonic()

    def _say(self, text: str) -> None:
        m, sec = divmod(int(time.monotonic() - self.started), 60)
        with self._lock:
            try:
                self.stream.write(f"[{m:02d}:{sec:02d}] {text}\n")
                self.stream.flush()
            except (OSError, ValueError):
                pass

    def task(self, description: str, total: float, unit: str = "s") -> Task:
        outer = self
        outer._say(f"{description}: started")

        class _T(Task):
            last = time.monotonic()
            desc = description

            def update(self, completed: float, note: str = "") -> None:
                now = time.monotonic()
                if now - self.last >= outer.every_s:
                    self.last = now
                    share = f"{completed / total:.0%}" if total else f"{completed:g}"
                    outer._say(f"{self.desc}: {share}" + (f" · {note}" if note else ""))

            def close(self) -> None:
                outer._say(f"{self.desc}: done")

        return _T()

    def log(self, message: str) -> None:
        from rich.errors import MarkupError
        from rich.text import Text

        try:
            plain = Text.from_markup(message).plain  # the terminal's colours, left out
        except MarkupError:
            plain = message
        self._say(plain)


def for_terminal(quiet: bool = False, console=None) -> Progress | None:
    """The run's display: rich bars on a terminal, plain lines otherwise, none with --quiet."""
    if quiet:
        return None
    stream = sys.stderr
    if hasattr(stream, "isatty") and stream.isatty():
        return RichProgress(console)
    return LineProgress(stream)


def _clock(s: float) -> str:
    m, sec = divmod(int(round(max(0.0, s))), 60)
    return f"{m} min {sec:02d} s" if m else f"{sec} s"


# What a probe is expected to take against its budget before any has finished, and how much
# budget that guess weighs against what the finished probes show. A budget is a ceiling (page
# loads at their timeout, the grace, a slow renderer's stepping): the reference demo's full run
# here took 529 s of 2869 s of budgets, a slow renderer's fake-clock passes come near theirs.
# Half the budget lies between the two; weighed as 1000 s of budget it moves slowly, so a
# probe skipped at once or a quick static one does not drag every later estimate down.
_PRIOR_RATE = 0.5
_PRIOR_BUDGET_S = 1000.0


class RunProgress(Progress):
    """One display for the whole run: a line for the run (probes done of
    all, which are running, elapsed and estimated remaining) and one line per running probe
    (its phase, that is the task it has open, and that task's own progress).

    The run's share done weighs each probe by its budget (ProbeSpec.budget: sized from the
    demo time it plays), and counts a running probe by the furthest share its tasks reached
    (a second phase or a re-run shows on the probe's own line; the run's share never goes
    back). What is left covers the whole run from the first line: every probe not yet started
    at its expected cost, each running probe at its expected cost less the time it has run or,
    when longer, its running phase's measured rest (that phase's elapsed time scaled by its
    share). A probe's expected cost is its budget scaled by a rate: how long the finished
    probes took against their budgets, starting from a prior (_PRIOR_RATE), so the estimate
    tightens as the run goes and rises only when probes run slower than the prior (a slow
    renderer, once its pace is measured). The run ends by its budget whatever the pace
    (`ends_at`, on `clock`), and a running probe by the end of its share (`set_share`): the
    estimate never promises more than those (a crawling pass's own pace would)."""

    def __init__(self, inner: Progress, weights: dict[str, float], clock=None, ends_at: float | None = None):
        self.inner = inner
        self.ends_at = ends_at
        self.share_ends: dict[str, float] = {}  # a running probe's share of the run ends then
        self.clock = clock or (lambda: time.monotonic())
        self.weights = {k: max(1e-6, float(v)) for k, v in weights.items()}
        self.share = {k: 0.0 for k in self.weights}
        self.running: set[str] = set()
        self.phase_left: dict[str, float | None] = {}
        self.started = self.clock()
        self.began: dict[str, float] = {}  # when each probe started
        self.took: dict[str, float] = {}  # how long each finished probe took
        self.row = inner.task("run", 1000.0, unit="")
        self._lock = threading.Lock()
        self._update()

    def _update(self) -> None:
        total = sum(self.weights.values())
        done = sum(self.weights[k] * self.share[k] for k in self.weights) / total
        n_done = sum(1 for v in self.share.values() if v >= 1.0)
        note = f"{n_done}/{len(self.weights)} probes"
        if self.running:
            note += " · running " + ", ".join(sorted(self.running))
        note += f" · about {_clock(self.left_s())} left"
        self.row.update(done * 1000.0, note=note)

    def left_s(self) -> float:
        """Seconds the rest of the run should take: see the class's docstring."""
        # how long the finished probes took against their budgets, shrunk towards the prior
        now = self.clock()
        spent = sum(self.weights[k] for k in self.took)
        rate = (sum(self.took.values()) + _PRIOR_RATE * _PRIOR_BUDGET_S) / (spent + _PRIOR_BUDGET_S)
        left = 0.0
        for k, w in self.weights.items():
            if k in self.took:
                continue
            if k in self.running:
                # its expected cost less the time it has run (a phase's share says nothing of
                # the phases after it), or the running phase's measured rest when longer;
                # never past the end of its share
                own = self.phase_left.get(k)
                mine = max(own or 0.0, w * rate - (now - self.began.get(k, now)))
                left += min(mine, max(0.0, self.share_ends.get(k, float("inf")) - now))
            else:
                left += w * rate
        return min(left, max(0.0, self.ends_at - now)) if self.ends_at is not None else left

    def set_share(self, name: str, ends_at: float) -> None:
        """`name` stops by `ends_at` (its share of the run's budget, on `clock`; a slow page's
        probe, whose line then says so)."""
        with self._lock:
            self.share_ends[name] = ends_at

    def probe(self, name: str) -> Progress:
        """The Progress a probe is given: its tasks become its line's phase and progress."""
        outer = self
        with self._lock:
            self.running.add(name)
            self.began[name] = self.clock()
            self._update()
        row = self.inner.task(name, 1.0, unit="")

        class _Probe(Progress):
            def task(self, description: str, total: float, unit: str = "s") -> Task:
                row.update(0.0, note=description)
                opened = outer.clock()

                class _T(Task):
                    def update(self, completed: float, note: str = "") -> None:
                        f = min(1.0, completed / total) if total else 0.0
                        said = f"{description} · {note}" if note else description
                        ends = outer.share_ends.get(name)
                        if ends is not None:  # its own pace may promise more than its share gives
                            said += f" · stops within {_clock(ends - outer.clock())} (its share of the run)"
                        row.update(f, note=said)
                        with outer._lock:
                            took = outer.clock() - opened
                            outer.phase_left[name] = took * (1 - f) / f if f > 0.02 and took > 5 else None
                            # never back: a probe's second phase (or a re-run of its pass)
                            # shows on its own line; the run's share and estimate hold still
                            outer.share[name] = max(outer.share[name], min(0.99, f))
                            outer._update()

                    def close(self) -> None:
                        row.update(1.0, note=f"{description} · done")

                return _T()

            def log(self, message: str) -> None:
                outer.inner.log(message)

            def finish(self) -> None:
                row.close()
                with outer._lock:
                    outer.phase_left.pop(name, None)
                    outer.running.discard(name)
                    outer.took[name] = outer.clock() - outer.began.get(name, outer.clock())
                    outer.share[name] = 1.0
                    outer._update()

        return _Probe()

    def log(self, message: str) -> None:
        self.inner.log(message)

    def close(self) -> None:
        self.row.close()


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
                if now - self.last >= 0.5:  # enough for a progress bar, little chatter
                    self.last = now
                    outer._emit(ev="update", id=tid, completed=completed, total=total, note=note)

            def close(self) -> None:
                outer._emit(ev="close", id=tid)

        return _T()

    def log(self, message: str) -> None:
        self._emit(ev="log", message=message)
