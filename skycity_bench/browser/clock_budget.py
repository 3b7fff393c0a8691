"""Fake-clock budgets from the measured frame cost.

Under the fake clock the demo's time moves only when the bench advances it, and advancing it
by `ms` makes the page run every animation frame on the way: on software WebGL a three.js
scene can take a fifth of a second per frame, so one demo second costs twelve real ones.
A fixed time limit per advance either calls such a page hung or waits for ever on a page
that really hangs. So:

- **Frame cost.** The first `frame_cost_frames` animation frames after load are advanced one
  at a time and timed (wall ms per 60 Hz frame, from the demo time each call played, so no
  frame needs to be counted). Their mean is the page's frame cost (all of them: WebGL work
  is pipelined, so the GPU cost of the cheap-looking frames shows in the slowest one);
  every page measures its own (viewport, injected scripts and what runs beside it all
  change it).
- **Budget per advance** = `advance_base_s` + frames to render × frame cost ×
  `frame_cost_margin`: what the advance is expected to take at most. Frames that get slower
  after the measured ones (the interactive cubes at 1920x1080 measured 21 ms, then rendered
  at ~250 ms per frame) are not a reason to stop: the limit is re-estimated from the rate
  the frames are seen coming during the advance.
- **Slow or hung.** While an advance runs, the page's fake `performance.now()` is read every
  `poll_s` (Playwright's clock yields to the page's task queue between timers, so the read
  is answered between two frames of a page that is only slow). A clock that moved since the
  last read means frames keep coming: the advance goes on, up to the run budget (`run_s`).
  It is stopped as slow (`DemoSlow`) when the run budget is spent, or earlier (after
  `advance_base_s`) when even at the rate seen so far the demo time left needs more than
  what is left of the run budget. No movement (or no answer) for `hang_s`, or for
  `hang_frames` times the frame cost (measured, or seen during the advance, if higher) if
  longer, is a hang (`DemoHang`); a coarse step moves the clock once, at its start, so there
  the step's one frame must end in that time. Past that limit a page whose browser's GPU
  process keeps working (`gpu_drain_min_share` of a CPU) is waiting for queued GPU work,
  not looping: it is waited for up to `busy_wall_cap` times the limit of wall. Both messages carry the measured frame cost,
  the one seen, and how far the clock got; an advance that ran past its sized budget and
  was waited for is listed in the page's clock log (`slowed_past_sized`).
- **Coarse steps.** Where a probe needs only the picture at a time, not every frame on the
  way (`picture_only`), and the frame cost is above `coarse_above_ms`, the clock jumps in
  steps of `coarse_step_ms` (Playwright's fastForward: every due timer and one animation
  frame fire once per step, at the step's end), so one frame is rendered per step instead of
  one per 16 ms, drawn at exactly the step's end time; the first step is one 60 Hz frame,
  so the frame after a key or hook call comes as soon as on a fine clock. A demo that advances its animation per frame, or caps a frame's delta,
  falls behind the clock under coarse steps: `DemoPage.seek` checks the hook's
  getState().time against the clock when it can, halves the step when the demo lagged, and
  the page's clock log says what was checked (`demo_clock`).
- **Run budget.** `RunBudget` (one per run, on the BrowserHandle) holds the run's start, every
  page's clock log and the wall seconds advances took beyond the demo time they played
  (`beyond_real_time_s`): the runner lets a probe run past its own fixed budget by that much
  (a slow renderer's extra time), never past the run budget less `finish_reserve_s` (the
  time kept for scoring and writing the report, so a run always ends with one).
- **Shares.** Before each probe starts, `RunBudget.share` sets how long it may take from
  what is left and the page's frame cost (measured by a fake-clock page, or cheaply in real
  time, `measure_real_time_cost`, before the first probe when none has been and the budgets
  still to use do not fit in what is left): on a fast page, or while they fit, a probe keeps
  its own budget; otherwise, on a slow page (or one not measured yet), a
  fake-clock probe gets what is left in proportion to its own budget among the probes still
  to run, and a real-time one at most its own budget (its time does not grow with the frame
  cost). A page at 2 frames a second then cannot spend the whole run on its first probes;
  what a probe could not finish in its share is untested with `Share.reason`, which names
  the page's measured frame cost.
"""

from __future__ import annotations

import asyncio
import logging
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from skycity_bench.browser.cpu_wait import WaitClock
from skycity_bench.common.errors import DemoHang, DemoSlow

FRAME_MS = 1000 / 60

log = logging.getLogger(__name__)


@dataclass
class ClockLog:
    """One page's fake-clock work: its measured frame cost, what was advanced how, and the
    checks of the demo's own clock under coarse steps."""

    viewport: str
    samples_ms: list[float] = field(default_factory=list)  # wall ms per 60 Hz frame, first frames after load
    measuring: bool = False  # set once the demo's t = 0 is known
    step_ms: int = 0  # coarse step now (0: not decided yet)
    advanced_ms: float = 0.0  # demo ms advanced after load
    wall_s: float = 0.0  # wall seconds those advances took
    fine_ms: float = 0.0  # of which every frame was rendered
    coarse_ms: float = 0.0  # of which in coarse steps
    coarse_steps: int = 0
    slowest: dict = field(default_factory=dict)  # the advance with the most wall s per demo s
    slowed: list[dict] = field(default_factory=list)  # advances that ran past their sized budget
    demo_clock: list[dict] = field(default_factory=list)  # keep-up checks under coarse steps
    fast_coarse: bool | None = None  # a fast page's clock kept up under them
    load: dict = field(default_factory=dict)  # the load's wall time and CPU wait (cpu_wait.py)

    @property
    def frame_cost_ms(self) -> float | None:
        """Mean of all the samples: WebGL work is pipelined (a frame's callback returns once
        its commands are queued; the page blocks only when the GPU, SwiftShader on the CPU,
        falls behind), so a frame's cost often shows in a later one's sample, and the slowest
        sample is where the queued work got paid. Without it the OBB example at 1920x1080
        measured 7 ms from 9, 649, 8, 7 and 5 ms, fine-stepped 110 frames that each cost
        ~0.5-1 s there, and stood still 20 s (hung). A GC pause in the five only makes the
        limits a little more generous."""
        if not self.samples_ms:
            return None
        return sum(self.samples_ms) / len(self.samples_ms)

    @property
    def seen_cost_ms(self) -> float | None:
        """The slowest frame seen after the measurement: an advance waited for past its sized
        budget, or the slowest advance (a coarse step renders one frame; a fine advance one
        per 60 Hz frame of demo time)."""
        xs = [x["frame_cost_seen_ms"] for x in self.slowed]
        if self.slowest:
            per = self.slowest["wall_ms_per_demo_ms"]
            xs.append(self.slowest["wall_s"] * 1000.0 if self.slowest["coarse"] else per * FRAME_MS)
        return max(xs) if xs else None

    def to_json(self) -> dict:
        cost = self.frame_cost_ms
        out: dict[str, Any] = {
            "viewport": self.viewport,
            "frame_cost_ms": round(cost, 1) if cost is not None else None,
            "frame_cost_samples_ms": [round(x, 1) for x in self.samples_ms],
            "slowdown": round(cost / FRAME_MS, 2) if cost is not None else None,
            "advanced_s": round(self.advanced_ms / 1000, 3),
            "wall_s": round(self.wall_s, 2),
            "fine_s": round(self.fine_ms / 1000, 3),
            "coarse_s": round(self.coarse_ms / 1000, 3),
            "coarse_steps": self.coarse_steps,
        }
        if self.load:
            out["load"] = self.load
        if self.coarse_steps:
            out["coarse_step_ms"] = self.step_ms
        if self.slowest:
            out["slowest_advance"] = self.slowest
        if self.slowed:
            # frames that got slower than the measured cost, and were waited for while they kept
            # coming (the limit re-estimated from the rate seen)
            out["slowed_past_sized"] = {
                "advances": len(self.slowed),
                "first": self.slowed[:10],
                "frame_cost_seen_ms": max(x["frame_cost_seen_ms"] for x in self.slowed),
            }
        if self.coarse_steps or self.demo_clock:
            out["demo_clock"] = _demo_clock_verdict(self.demo_clock)
            out["demo_clock_checks"] = self.demo_clock[:20]
        return out


def _demo_clock_verdict(checks: list[dict]) -> str:
    if not checks:
        return "not checked"
    if all(c.get("kept_up") is None for c in checks):
        return checks[-1].get("note", "not checked")
    checks = [c for c in checks if c.get("kept_up") is not None]
    lagged = [c for c in checks if c.get("kept_up") is False]
    if not lagged:
        return f"kept up with the clock (hook getState().time, {len(checks)} checks)"
    c = lagged[0]
    return (
        f"fell behind under coarse steps: {c['demo_s']:g} s of demo time for {c['clock_s']:g} s of clock "
        f"at {c['step_ms']} ms steps (hook getState().time); the step was halved after it"
    )


def cost_words(cost_ms: float | None) -> str:
    """'the page renders at 2.0 frames a second (500 ms a frame)'."""
    if cost_ms is None:
        return "the page's frame cost could not be measured"
    return f"the page renders at {1000.0 / cost_ms:.1f} frames a second ({cost_ms:.0f} ms a frame)"


@dataclass(frozen=True)
class Share:
    """One probe's part of the run's budget, set before it starts (`RunBudget.share`).
    `binding`: the share, not the probe's own budget, may end it (a slow page, or one whose
    frame cost is not known); `ends_at` is a time.monotonic() value."""

    probe: str
    seconds: float
    ends_at: float
    binding: bool
    cost_ms: float | None
    run_s: float

    def cost_words(self) -> str:
        return cost_words(self.cost_ms)

    def reason(self, started: bool = True) -> str:
        """Why the probe's items are untested: the page's frame cost and the share."""
        if not started:
            return (
                f"{self.cost_words()}: {self.probe} was not started: {max(0.0, self.seconds):.0f} s were left "
                f"of the {self.run_s:.0f} s budget"
            )
        return (
            f"{self.cost_words()}: {self.probe} could not finish in its {self.seconds:.0f} s share of "
            f"the {self.run_s:.0f} s budget"
        )


class RunBudget:
    """The run's total budget, the probes' shares of it and the clock logs of all its pages.
    `started`: when the run began (time.monotonic(); default now)."""

    def __init__(self, timeouts, started: float | None = None):
        self.t = timeouts
        self.started = time.monotonic() if started is None else started
        self.pages: list[ClockLog] = []
        self.beyond_real_time_s = 0.0
        # wall ms per frame a real-time page showed (measure_real_time_cost), when no
        # fake-clock page has measured one
        self.real_time_cost_ms: float | None = None
        self.real_time_tried = False
        self.shares: dict[str, Share] = {}  # by probe name, as set before each started

    def left_s(self) -> float:
        """Seconds left for the probes (the report's reserve kept)."""
        return self.deadline - time.monotonic()

    @property
    def deadline(self) -> float:
        """time.monotonic() by which the probes must end: the run's budget less the time kept
        for scoring and writing the report."""
        return self.started + self.t.run_s - self.t.finish_reserve_s

    def worst_cost_ms(self) -> float | None:
        """The highest frame cost any page of this run measured (the same demo throughout)."""
        costs = [p.frame_cost_ms for p in self.pages if p.frame_cost_ms is not None]
        return max(costs) if costs else None

    def frame_cost_ms(self) -> float | None:
        """The page's frame cost: the worst a fake-clock page measured, else the real-time one."""
        worst = self.worst_cost_ms()
        return worst if worst is not None else self.real_time_cost_ms

    def share(self, probe: str, own_s: float, pending_s: float, realtime: bool) -> Share:
        """`probe`'s share of what is left, set before it starts: `own_s` its own budget,
        `pending_s` the own budgets of it and every probe of the run not started yet. A fast
        page's probe, or any probe while the budgets still to use fit in what is left (a
        short check), may take what is left (its own budget, extended by a slow renderer's
        time, bounds it); otherwise, on a slow page or one not measured, a real-time probe
        gets at most its own budget and a fake-clock one what is left in proportion to its
        own budget (see the module's docstring)."""
        now, left = time.monotonic(), self.left_s()
        cost = self.frame_cost_ms()
        fast = (cost is not None and cost <= self.t.coarse_above_ms) or pending_s <= left
        if fast:
            seconds = left
        elif realtime:
            seconds = min(own_s, left)
        else:
            seconds = min(left, left * own_s / max(pending_s, own_s))
        out = Share(probe, seconds, now + seconds, not fast, cost, self.t.run_s)
        self.shares[probe] = out
        return out

    def charge(self, wall_s: float, demo_ms: float) -> None:
        self.beyond_real_time_s += max(0.0, wall_s - demo_ms / 1000.0)

    def summary(self) -> dict:
        """Per viewport: the pages' frame costs (median over the pages, and the worst), how
        many pages were stepped coarsely, and the demo-clock verdicts."""
        by_vp: dict[str, list[ClockLog]] = {}
        for p in self.pages:
            if p.frame_cost_ms is not None:
                by_vp.setdefault(p.viewport, []).append(p)
        out = {}
        for vp, logs in by_vp.items():
            costs = [c for p in logs if (c := p.frame_cost_ms) is not None]
            med = statistics.median(costs)
            seen = [c for p in logs if (c := p.seen_cost_ms) is not None]
            out[vp] = {
                "frame_cost_ms": round(med, 1),
                "worst_page_ms": round(max(costs), 1),
                # the slowest frame any page saw after its measurement (frames get
                # slower with what comes into view and what runs beside the page)
                "frame_cost_seen_ms": round(max(seen), 1) if seen else None,
                "slowdown": round(med / FRAME_MS, 2),
                "pages": len(logs),
                "coarse_pages": sum(1 for p in logs if p.coarse_steps),
                "slow": med > self.t.coarse_above_ms,
                "demo_clock": sorted({_demo_clock_verdict(p.demo_clock) for p in logs if p.coarse_steps}),
            }
        return out

    def slow_line(self) -> str | None:
        """One line for the terminal and the report's warnings when the renderer was slow."""
        s = self.summary()
        slow = {vp: v for vp, v in s.items() if v["slow"]}
        if not slow:
            return None
        parts = ", ".join(
            f"{v['frame_cost_ms']:g} ms per animation frame at {vp} ({v['slowdown']:g}x a 60 Hz frame"
            + (
                f", up to {v['frame_cost_seen_ms']:.0f} ms later"
                if (v.get("frame_cost_seen_ms") or 0) > 1.5 * v["frame_cost_ms"]
                else ""
            )
            + ")"
            for vp, v in sorted(slow.items())
        )
        return (
            f"slow renderer: {parts}; fake-clock budgets were sized from it and pictures at given times "
            f"were reached in coarse clock steps"
        )


# The page's animation frames' times in real time for `ms` (the bench's own rAF callback runs
# in the same frames as the demo's, so its rate is the demo's frame rate), the first included.
_FRAME_TIMES_JS = """(ms) => new Promise((done) => {
  const ts = [];
  const frame = (t) => {
    ts.push(t);
    if (t - ts[0] < ms) requestAnimationFrame(frame); else done(ts);
  };
  requestAnimationFrame(frame);
})"""


def _late_frame_cost_ms(ts: list[float]) -> float:
    """Mean interval of the later half of the frames: a page that starts its heavy work a
    moment late (after what it loads has come) shows its real cost there."""
    if len(ts) < 2:
        return 0.0
    later = ts[len(ts) // 2 - 1 :] if len(ts) >= 4 else ts
    return (later[-1] - later[0]) / (len(later) - 1)


async def measure_real_time_cost(
    handle, scenario, url: str, settle_s: float = 1.0, span_s: float = 2.0
) -> float | None:
    """Wall ms per animation frame of the demo in real time (its frames counted for `span_s`,
    `settle_s` after its first frame: a page often starts its heavy work only once what it
    loads has come), on a page of its own: the cheap measurement a share needs when no
    fake-clock page has measured the frame cost yet. None when the page does not load or
    answer in time (the share then treats the page as slow)."""
    t = scenario.timeouts
    dp = None
    try:
        dp = await handle.open_page(scenario, url, goto=False)
        await dp.goto()  # bounded by the load limit (timeouts.load_s)
        await asyncio.sleep(settle_s)
        ts = await dp.evaluate(_FRAME_TIMES_JS, span_s * 1000.0, timeout=span_s + t.hang_s, what="frame times")
        return _late_frame_cost_ms([float(x) for x in ts]) or None
    except Exception:  # the demo's or the machine's: the share is then set without a cost
        log.debug("real-time frame cost not measured", exc_info=True)
        return None
    finally:
        if dp is not None:
            await dp.close()


class PassBudget:
    """A pass's own wall-clock budget inside the run's: the tour pass steps 65 s
    of demo time frame by frame, which on a slow renderer (software WebGL, a few frames/s)
    would take far longer than anyone waits for a recording. Past `seconds` (or the run's
    budget, whichever comes first) the pass stops stepping and keeps what it captured; the
    caller says so. `None`: no budget of its own (the run's only)."""

    def __init__(self, seconds: float | None, run: RunBudget | None = None):
        self.seconds = seconds
        self.run = run
        self.started = time.monotonic()

    @property
    def deadline(self) -> float:
        ends = [self.started + self.seconds] if self.seconds is not None else []
        if self.run is not None:
            ends.append(self.run.deadline)
        return min(ends) if ends else float("inf")

    def spent(self) -> bool:
        return time.monotonic() >= self.deadline

    def elapsed_s(self) -> float:
        return time.monotonic() - self.started

    def why(self) -> str:
        """Which budget ends the pass, in words; on a slow page with the page's frame cost."""
        if self.run is None or (self.seconds is not None and self.started + self.seconds <= self.run.deadline):
            said = f"its wall-clock budget of {self.seconds:.0f} s was spent"
        else:
            said = f"the run's wall-clock budget ({self.run.t.run_s:g} s) was spent"
        run = self.run
        cost = run.frame_cost_ms() if run is not None else None
        if run is not None and cost is not None and cost > run.t.coarse_above_ms:
            said = f"{cost_words(cost)}: {said}"
        return said


def limit_s(t, frames: float, cost_ms: float | None, left_s: float) -> float:
    """Wall seconds an advance that renders `frames` animation frames is expected to take at
    most, sized from the measured frame cost (the advance's nominal budget; frames that keep
    coming may take longer, see `watched`)."""
    per = max(cost_ms or 0.0, FRAME_MS)
    return min(t.advance_base_s + frames * per * t.frame_cost_margin / 1000.0, max(t.advance_base_s, left_s))


def hang_limit_s(t, cost_ms: float | None) -> float:
    """No animation frame for this long is a hang: hang_s, or hang_frames of the page's frame
    cost (the higher of the measured one and the one seen during the advance) if longer."""
    return max(t.hang_s, t.hang_frames * (cost_ms or 0.0) / 1000.0)


async def _fake_now(dp, timeout: float) -> float | None:
    """The page's fake performance.now(), or None when it does not answer in time."""
    try:
        v = await asyncio.wait_for(dp.page.evaluate("performance.now()"), timeout)
        return float(v)
    except Exception:
        return None


async def watched(dp, coro, *, ms: float, frames: float, what: str) -> float:
    """Await a clock advance `coro` (demo ms `ms`, about `frames` rendered frames), telling a
    slow page from a hung one. Returns the wall seconds it took.

    The budget sized from the measured frame cost is only the expectation: a page's frames
    can get slower after the first ones (more in view, a bigger scene, other pages beside
    it: the interactive cubes at 1920x1080 measured 21 ms and then rendered at ~250 ms). So
    while the advance runs the limit is re-estimated from the rate its frames are seen
    coming: as long as they keep coming the advance goes on, up to the run's budget, and it
    is stopped as slow (`DemoSlow`) early only when, after advance_base_s, even at the rate
    seen so far the demo time left needs more than what is left of the run budget. No frame
    for the hang limit (sized from the frame cost seen, too) is a hang (`DemoHang`). An
    advance of about one frame (a coarse step: the clock jumps once, at its start) shows no
    frames coming on the way: its one frame must end within the hang limit."""
    watch = _Watch(dp, ms=ms, frames=frames, what=what)
    try:
        await watch.start(coro)
    except BaseException:
        if not hasattr(watch, "task"):  # stopped before the advance started: never awaited, closed
            coro.close()
        raise
    try:
        await watch.follow()
    except BaseException:
        watch.task.cancel()
        # its end is retrieved when it comes: a call that failed as it was stopped is not
        # printed as "Task exception was never retrieved"
        watch.task.add_done_callback(_retrieve)
        raise
    return watch.finish()


def _retrieve(task: asyncio.Future) -> None:
    if not task.cancelled():
        task.exception()


class _Watch:
    """One clock advance being watched (`watched`): its limits, and what the polls of the
    page's fake clock saw of its frames coming."""

    def __init__(self, dp, *, ms: float, frames: float, what: str):
        self.dp, self.ms, self.what = dp, ms, what
        self.b: RunBudget = dp.budget
        self.t = dp.scenario.timeouts
        self.log: ClockLog = dp.clock
        t = self.t
        self.cost = self.log.frame_cost_ms
        self.sized = limit_s(t, frames, self.cost, self.b.left_s())
        self.loading = self.cost is None and not self.log.measuring
        if self.loading:
            # The first frames after the load event (shader compiles, first uploads) are part
            # of loading: the load timeout applies to them.
            self.sized = max(self.sized, t.load_s)
        self.single = frames <= 1.5  # about one frame: a coarse step
        self.seen_cost: float | None = None  # wall ms per 60 Hz frame seen in this advance
        self.hang_s = max(hang_limit_s(t, self.cost), t.load_s if self.loading else 0.0)
        # The hang limit counts the demo's own time since the last frame: wall less the CPU
        # wait other processes caused (cpu_wait.py, as for the load), read from the first poll
        # on (an advance that ends before it, nearly all of them, reads nothing), never past
        # busy_wall_cap x the limit of wall.
        self.quiet: WaitClock | None = None
        # The GPU process's CPU during a silence: a page blocked while its GPU process drains
        # queued work (software WebGL) is slow, not hung (`_draining`).
        self.gpu_mark: tuple[float, float] | None = None
        self.gpu_share: float | None = None  # of a CPU, over the last poll
        self.gpu_waited_s = 0.0  # silence waited for past the hang limit while the GPU worked
        self.charged_wall = self.charged_ms = 0.0
        self.task: asyncio.Future  # the advance, once started (`start`)

    async def start(self, coro) -> None:
        """Read where the clock starts and start the advance."""
        t = self.t
        start = time.monotonic()
        # Never stopped for the run budget before advance_base_s (nor, while loading, load_s).
        self.end_by = max(start + (t.load_s if self.loading else t.advance_base_s), self.b.deadline)
        # The clock where this advance starts (the page is idle between the bench's calls, so
        # it answers at once): what is left of the advance is known at every poll.
        self.start_pos = None if self.single else await _fake_now(self.dp, min(t.poll_s, t.clock_first_read_max_s))
        self.t_start = time.monotonic()
        # The call's own timeout is only a backstop: `follow` ends a slow or hung advance first.
        self.task = asyncio.ensure_future(
            self.dp.call(coro, self.end_by - self.t_start + t.advance_call_slack_s, self.what)
        )
        self.last_move = self.last_poll = self.t_start
        self.first_pos, self.first_at = self.start_pos, self.t_start  # the rate is measured from here
        self.last_pos: float | None = self.start_pos

    async def follow(self) -> None:
        """Poll the page's clock every poll_s until the advance ends; raises DemoHang or
        DemoSlow when it must be stopped."""
        t = self.t
        while True:
            now = time.monotonic()
            credit = self.quiet.waited_s if self.quiet is not None else 0.0
            wait = min(t.poll_s, self.last_move + self.hang_s + credit - now, self.end_by - now)
            done, _ = await asyncio.wait({self.task}, timeout=max(0.0, wait))
            if done:
                break
            if self.quiet is None:
                self.quiet = self.dp.wait_clock(start=self.last_move)
            self.quiet.read()
            self._read_gpu(time.monotonic())
            self._stop_if_hung_or_spent(self.quiet, time.monotonic())
            read_s = min(t.poll_s, max(t.clock_read_min_s, self.hang_s / 4))
            pos = await _fake_now(self.dp, read_s)
            if pos is not None:
                self._saw(pos, time.monotonic())
        await self.task

    def _at(self) -> str:
        if self.last_pos is None:
            return "the clock not read"
        return f"the clock at +{self.last_pos - (self.dp.t0_ms or 0):.0f} ms"

    def _stop_if_hung_or_spent(self, quiet: WaitClock, now: float) -> None:
        """DemoHang when no frame came for the hang limit of the demo's own time (or
        busy_wall_cap x it of wall); DemoSlow when the run budget is spent."""
        t, hang_s, cost_note = self.t, self.hang_s, _cost_note(self.cost, self.seen_cost)
        over = quiet.own_s() >= hang_s
        if over and quiet.wall_s < hang_s * t.busy_wall_cap and self._draining():
            self.gpu_waited_s = max(self.gpu_waited_s, quiet.own_s() - hang_s)
        elif over or quiet.wall_s >= hang_s * t.busy_wall_cap:
            credit = quiet.waited_s
            busy = (
                f" ({quiet.wall_s:.0f} s wall, {credit:.0f} s of it waiting for a CPU other processes held)"
                if credit >= 0.5
                else ""
            )
            raise DemoHang(
                f"{self.what}: hung: no animation frame for {hang_s:.0f} s of the demo's time{busy}; {self._at()} "
                f"({cost_note}; the demo's main thread hangs)"
            )
        if now >= self.end_by:
            came = (
                f"frames kept coming (the last {now - self.last_move:.0f} s ago)"
                if self.last_move > self.t_start
                else f"no frame came in the {now - self.t_start:.0f} s it had, less than the {hang_s:.0f} s "
                "that make it hung"
            )
            raise DemoSlow(
                f"{self.what}: slow: the run budget ({t.run_s:.0f} s) is spent after {now - self.t_start:.1f} s of "
                f"this advance (sized {self.sized:.1f} s from {cost_note}); {self._at()}; {came}"
            )

    def _read_gpu(self, now: float) -> None:
        """The GPU process's share of a CPU since the last poll (None until two reads)."""
        cpu = self.dp.gpu_cpu_s()
        if cpu is None:
            self.gpu_share = None
        elif self.gpu_mark is not None and now > self.gpu_mark[0]:
            self.gpu_share = (cpu - self.gpu_mark[1]) / (now - self.gpu_mark[0])
        self.gpu_mark = None if cpu is None else (now, cpu)

    def _draining(self) -> bool:
        """No frame for the hang limit, but the browser's GPU process worked at least
        gpu_drain_min_share of a CPU over the last poll: on software WebGL a page whose main
        thread waits for queued GPU work (a readPixels, a full command buffer) stands still
        while SwiftShader renders, where a page whose script loops leaves the GPU process
        idle. Waited for up to busy_wall_cap x the hang limit of wall, as a busy machine is."""
        return self.gpu_share is not None and self.gpu_share >= self.t.gpu_drain_min_share

    def _saw(self, pos: float, now: float) -> None:
        """The page's clock read `pos` at `now`: frames keep coming when it moved."""
        if self.last_pos is not None and pos > self.last_pos:
            # Frames keep coming. The time this took beyond the demo time it played is
            # charged as it happens (the probe's extension grows during a long advance).
            self.b.charge(now - self.last_poll, pos - self.last_pos)
            self.charged_wall += now - self.last_poll
            self.charged_ms += pos - self.last_pos
            self.last_move = now
            self.quiet = self.dp.wait_clock(start=now)  # the next frame's wait from here
            if self.first_pos is not None and pos > self.first_pos and not self.single:
                self._re_estimate(pos, now, self.first_pos)
        if self.last_pos is None or pos > self.last_pos:
            self.last_pos, self.last_poll = pos, now
        if self.first_pos is None:
            self.first_pos, self.first_at = pos, now

    def _re_estimate(self, pos: float, now: float, first_pos: float) -> None:
        """The limits from the rate seen (wall ms per 60 Hz frame so far); DemoSlow when at
        that rate the demo time left cannot fit in what is left of the run budget."""
        t = self.t
        self.seen_cost = (now - self.first_at) * 1000.0 * FRAME_MS / (pos - first_pos)
        self.hang_s = max(hang_limit_s(t, max(self.cost or 0.0, self.seen_cost)), t.load_s if self.loading else 0.0)
        if self.start_pos is None or now - self.t_start < t.advance_base_s or now >= self.end_by:
            return
        left_ms = max(0.0, self.ms - (pos - self.start_pos))
        need = left_ms * (now - self.first_at) / (pos - first_pos)
        if now + need > self.b.deadline:
            raise DemoSlow(
                f"{self.what}: slow: frames kept coming at {self.seen_cost:.0f} ms per animation frame "
                f"({_cost_note(self.cost)}); at that rate the {left_ms / 1000:.1f} s of demo time left "
                f"need about {need:.0f} s, more than the {max(0.0, self.b.deadline - now):.0f} s left of "
                f"the run budget ({t.run_s:.0f} s); {now - self.t_start:.0f} s into this advance, sized "
                f"{self.sized:.1f} s"
            )

    def finish(self) -> float:
        """The advance's wall seconds, charged; one that ran past its sized budget and was
        waited for is listed in the page's clock log."""
        wall = time.monotonic() - self.t_start
        self.b.charge(wall - self.charged_wall, self.ms - self.charged_ms)
        if wall > self.sized and self.log.measuring:
            # Past the budget the measured frame cost gave it, and waited for: the page's
            # frames got slower than measured (evidence of how slow the renderer really was).
            seen = wall * 1000.0 * FRAME_MS / self.ms if not self.single else wall * 1000.0
            self.log.slowed.append(
                {
                    "demo_ms": round(self.ms),
                    "sized_s": round(self.sized, 1),
                    "wall_s": round(wall, 1),
                    "frame_cost_seen_ms": round(seen, 1),
                }
            )
            if self.gpu_waited_s > 0:
                # waited for past the hang limit while the GPU process drained queued work
                self.log.slowed[-1]["gpu_drain_past_hang_s"] = round(self.gpu_waited_s, 1)
        return wall


def _cost_note(cost: float | None, seen: float | None = None) -> str:
    note = (
        f"{cost:.0f} ms per animation frame measured after load" if cost is not None else "frame cost not measured yet"
    )
    if seen and seen > (cost or 0.0) * 1.5:
        note += f", {seen:.0f} ms seen during this advance"
    return note


__all__ = [
    "FRAME_MS",
    "ClockLog",
    "PassBudget",
    "RunBudget",
    "Share",
    "hang_limit_s",
    "limit_s",
    "measure_real_time_cost",
    "watched",
]
