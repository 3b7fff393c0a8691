"""DemoPage's fake clock (browser/session.py): advancing it under budgets sized from the
page's measured frame cost (browser/clock_budget.py), reading the bench's time on the page
and the demo's own, and seeking forward to a time. A mixin: DemoPage holds the page, its
scenario, its ClockLog (`clock`) and its handle."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from playwright.async_api import Error as PlaywrightError

from skycity_bench.browser.clock_budget import FRAME_MS, ClockLog, RunBudget, watched
from skycity_bench.browser.page_errors import page_thrown
from skycity_bench.inputs.scenario import Scenario

if TYPE_CHECKING:
    from skycity_bench.browser.hook import Hook
    from skycity_bench.browser.world import BenchWorld


class FakeClockMixin:
    if TYPE_CHECKING:  # what DemoPage (browser/session.py) holds and does, used here
        handle: Any  # the BrowserHandle: holds the run's budget
        scenario: Scenario
        fake_clock: bool
        clock: ClockLog
        page: Any  # playwright's Page
        world: BenchWorld | None
        direct_clock: bool
        hook: Hook
        t0_ms: float | None
        events: Any  # session.PageEvents: what the demo did to this page (its thrown errors)

        async def evaluate(
            self, expression: str, arg: Any = None, timeout: float = 5.0, what: str = "page script"
        ) -> Any: ...

    @property
    def budget(self) -> RunBudget:
        """The run's budget (the runner sets one per run; a page opened outside a run makes one)."""
        b = getattr(self.handle, "budget", None)
        if b is None:
            b = self.handle.budget = RunBudget(self.scenario.timeouts)
        return b

    async def run_for(self, ms: float, *, picture_only: bool = False, checked: bool = False) -> None:
        """Advance the fake clock by `ms`, firing every timer and animation frame on the way.

        Limits come from the page's measured frame cost (browser/clock_budget.py): a slow page
        is waited for while its frames keep coming, a hung one is stopped after hang_s. The
        first frames after load are advanced one at a time to measure that cost. With
        `picture_only` (the caller needs the picture at the end, not every frame on the way)
        the last frame is drawn at exactly the end time, and a slow page is advanced in
        coarse steps, one rendered frame per step. With `checked` (seek: the demo's own clock
        is read before and after, and has not been seen to lag) a fast page is advanced so too."""
        if not self.fake_clock:
            raise RuntimeError("run_for needs a page opened with fake_clock=True")
        left = int(round(ms))
        log, t = self.clock, self.scenario.timeouts
        while left > 0 and log.measuring and len(log.samples_ms) < t.frame_cost_frames:
            step = min(left, int(FRAME_MS) + 1)  # one 60 Hz frame (17 ms)
            wall = await self._advance(step, fine=True)
            log.samples_ms.append(wall * 1000.0 * FRAME_MS / step)
            left -= step
        if left <= 0:
            return
        cost = log.frame_cost_ms
        one = int(FRAME_MS) + 1  # one 60 Hz frame (17 ms)
        if not picture_only:
            await self._advance(left, fine=True)
            return
        # The picture asked for is the demo at exactly that time: the last step is a jump of
        # at least one frame (Playwright's fastForward fires the pending animation frame at
        # the jump's end), not the last 16 ms grid point before it (a replay started between
        # two grid points would otherwise be compared with frames up to 16 ms off).
        if cost is not None and (cost > t.coarse_above_ms or checked):
            # Slow page (or a fast one whose clock is checked): coarse steps, one frame each.
            # The first is one 60 Hz frame, so the frame after whatever the probe just did (a
            # key, a hook call) comes as soon as on a fine clock and a demo that restarts its
            # time at the next frame does not start a step late.
            log.step_ms = log.step_ms or t.coarse_step_ms
            step = min(left, one)
            while left > 0:
                await self._advance(step, fine=False)
                left -= step
                step = min(left, log.step_ms)
                if 0 < left - step < one:  # keep the last step a whole frame
                    step = left - one
            return
        if left > one:
            await self._advance(left - one, fine=True)  # every frame on the way ...
        await self._advance(min(left, one), fine=False, exact=True)  # ... the last at the exact time

    async def _advance(self, ms: int, *, fine: bool, exact: bool = False) -> float:
        """One clock call under its sized budget; returns its wall seconds. `fine`: every
        timer and frame on the way (runFor); else one jump (fastForward: every due timer and
        the pending frame once, at the end), logged as a coarse step unless `exact` (a fine
        advance's last frame, drawn at its exact time)."""
        log = self.clock
        if fine:
            call, frames = self._clock_run_for(ms), ms / 16.0  # Playwright's rAF: every 16 ms
        else:
            call, frames = self.page.clock.fast_forward(ms), 1.0  # every due timer once, one frame
        coro = self._past_page_errors(call, ms)
        wall = await watched(
            self,
            coro,
            ms=ms,
            frames=frames,
            what=f"advancing the clock {ms} ms" + ("" if fine or exact else " (coarse step)"),
        )
        if log.measuring:
            log.advanced_ms += ms
            log.wall_s += wall
            if fine or exact:
                log.fine_ms += ms
            else:
                log.coarse_ms += ms
                log.coarse_steps += 1
            per = wall * 1000.0 / ms
            if ms >= FRAME_MS and per > log.slowest.get("wall_ms_per_demo_ms", 0):
                log.slowest = {
                    "demo_ms": ms,
                    "wall_s": round(wall, 3),
                    "wall_ms_per_demo_ms": round(per, 2),
                    "coarse": not (fine or exact),
                }
        return wall

    async def _past_page_errors(self, call: Awaitable[None], ms: int) -> None:
        """Await a clock call; an error the demo's code threw on the way is recorded and the
        run goes on (the clock completed the advance before rethrowing it: page_errors.py)."""
        try:
            await call
        except PlaywrightError as e:
            thrown = page_thrown(str(e))
            if thrown is None:
                raise
            self.events.clock_ms += ms
            self.events.thrown.add(thrown, self.events.clock_ms / 1000.0)
            return
        self.events.clock_ms += ms

    async def _clock_run_for(self, ms: int) -> None:
        """Playwright's clock.run_for(ms); on a page that opted in (`direct_clock`) and has no
        subframe, the same call of the page's clock controller (globalThis.__pwClock) straight
        through the bench's CDP session: the same timers and frames, and the same error when a
        timer throws ('Clock.run_for: Error: ...'). What it leaves out: Playwright registers an
        init script per call (one more round trip to the page) so that a document loaded later
        replays the clock; here a second document means the demo left its own and every later
        call fails (_check_alive), and a page with subframes keeps Playwright's call (it
        advances every frame's clock). A 30 fps step of the reference demo at 1920x1080 took
        81 -> 71 ms (median of 100 each, interleaved, load 12; benchmarks/tour_cost.py)."""
        if not (self.direct_clock and self.world is not None and len(self.page.frames) == 1):
            await self.page.clock.run_for(ms)
            return
        r = await self.world.cdp.send(
            "Runtime.evaluate",
            {"expression": f"globalThis.__pwClock.controller.runFor({int(ms)})", "awaitPromise": True},
        )
        exc = r.get("exceptionDetails")
        if exc:
            what = (exc.get("exception") or {}).get("description") or exc.get("text") or "error"
            raise PlaywrightError(f"Clock.run_for: {what}")

    async def hook_time(self) -> float | None:
        """The hook's getState().time when it answers with a number, else None."""
        st = await self.hook.call("getState")
        if st.ok and isinstance(st.value, dict) and isinstance(st.value.get("time"), (int, float)):
            return float(st.value["time"])
        return None

    async def now_s(self) -> float:
        """Seconds since t = 0 on this page's clock (the bench's time, not the demo's own)."""
        now = await self.evaluate("performance.now()", what="reading the clock")
        return (float(now) - (self.t0_ms or 0.0)) / 1000.0

    async def seek(self, t_s: float, *, picture_only: bool = False) -> None:
        """Fake clock: advance until bench time t_s (never backwards). With `picture_only` a
        slow page may get there in coarse steps (run_for); then the demo's own clock is
        checked against the bench's (hook getState().time) and the step halved if it lagged.
        A fast page goes coarse too where its clock can be checked so (`coarse_checked_fast`):
        a demo whose time is a function of its clock shows the same picture at t after 100 ms
        steps as after every frame (the reference demo: the same shop, playback and framing
        items, those probes 61 -> 43-48 s; README), and one whose clock lags under them is
        stepped frame by frame from then on."""
        cur = await self.now_s()
        if t_s <= cur:
            return
        log, t = self.clock, self.scenario.timeouts
        steps0 = log.coarse_steps
        # the hook's time before, when this may go coarse (also when the frame cost is not
        # measured yet: the first advance measures it, then may go coarse)
        cost = log.frame_cost_ms
        may_fast = t.coarse_checked_fast and log.fast_coarse is not False
        may_slow = cost is None or cost > t.coarse_above_ms
        h0 = await self.hook_time() if picture_only and (may_slow or may_fast) else None
        # a fast page only where its clock is read before and after (h0, h1 below)
        await self.run_for((t_s - cur) * 1000.0, picture_only=picture_only, checked=may_fast and h0 is not None)
        if log.coarse_steps != steps0:
            await self._check_demo_clock(h0, round(t_s - cur, 3))

    async def _check_demo_clock(self, h0: float | None, clock_s: float) -> None:
        """After coarse steps over `clock_s` of clock: did the demo's own time (the hook's
        getState().time, `h0` before) keep up? The page's clock log says what was checked; a
        slow page whose time lagged has its step halved, a fast page goes on coarsely only
        while its time is seen to keep up."""
        log, t = self.clock, self.scenario.timeouts
        cost = log.frame_cost_ms  # measured by now
        fast = cost is not None and cost <= t.coarse_above_ms
        fast_mark = {"fast_page": True} if fast else {}
        h1 = await self.hook_time() if h0 is not None else None
        if h0 is None or h1 is None:
            log.demo_clock.append(
                {
                    "clock_s": clock_s,
                    "step_ms": log.step_ms,
                    "kept_up": None,
                    "note": "not checked: no hook getState().time; the demo rendered one frame per "
                    f"{log.step_ms} ms step, so a demo that animates per frame rather than "
                    "by the clock shows an earlier moment",
                }
            )
            return
        if h1 == h0:
            # its time stood still (paused, or a hook that reports a constant): nothing to
            # compare; a slow page keeps its step, a fast one goes back to every frame
            log.demo_clock.append(
                {
                    "clock_s": clock_s,
                    "demo_s": 0.0,
                    "step_ms": log.step_ms,
                    "kept_up": None,
                    "note": "not checked: the hook's getState().time stood still",
                    **fast_mark,
                }
            )
            if fast:
                log.fast_coarse = False  # unverified: a fast page is stepped frame by frame again
            return
        kept = (h1 - h0) >= t.clock_keepup * clock_s
        log.demo_clock.append(
            {"clock_s": clock_s, "demo_s": round(h1 - h0, 3), "step_ms": log.step_ms, "kept_up": kept, **fast_mark}
        )
        if fast:
            # a fast page needs no coarse steps: one whose clock lagged is stepped frame by
            # frame from here on, one that kept up goes on coarsely
            log.fast_coarse = kept
        elif not kept:
            log.step_ms = max(int(FRAME_MS) + 1, log.step_ms // 2)
