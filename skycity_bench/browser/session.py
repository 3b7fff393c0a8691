"""Browser sessions for probes.

`BrowserHandle` owns one Chromium process for one candidate run; `open_page()` gives a
fresh context each time (cookies, storage, clock and routes are never shared between
probes). `DemoPage` wraps the page with what every probe needs: the closed network, the
bench's t = 0, the fake clock, the hook client, screenshots as numpy arrays, and hard time
limits on every call into the page, so a demo that hangs its main thread costs a bounded
number of seconds and never hangs the bench.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import math
import os
import time
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Optional

import cv2
import numpy as np
from playwright.async_api import Error as PlaywrightError

from ..errors import DemoCrash, DemoHang, ProbeError
from ..scenario import Scenario, Viewport
from .clock_budget import FRAME_MS, ClockLog, RunBudget, watched
from .cpu_wait import WaitClock
from ..proctree import parent_pid
from .launch import launch
from .network import NetworkPolicy
from .world import BROWSER_UI_PX, BenchWorld, IsolatedEvalError, read_user_agent

log = logging.getLogger(__name__)


def js(name: str) -> str:
    """An injected script from skycity_bench/browser/js/."""
    return resources.files(__package__).joinpath("js", name).read_text(encoding="utf-8")


# Fake clock: the epoch the fake Date starts at. Fixed, so two runs see the same Date.now().
FAKE_EPOCH_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
LOCALE = "zh-CN"   # the rubric's audience; also the Accept-Language of the user-agent override


@dataclass
class PageEvents:
    dialogs: list[dict] = field(default_factory=list)
    popups: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    navigations: list[str] = field(default_factory=list)
    crashed: bool = False
    closed: bool = False
    # Hostile demos (issue 10): documents loaded in the main frame (more than one: the demo
    # navigated away or reloaded, so what a probe sees after that is not the demo), and the
    # number of dialogs (a dialog loop must not grow `dialogs` without bound).
    documents: int = 0
    dialog_count: int = 0


class BrowserHandle:
    """One Chromium process; restarted when a demo wedges it."""

    def __init__(self, pw, *, offline: bool = True, resolvers: list | None = None):
        self.pw = pw
        self.offline = offline
        self.resolvers = list(resolvers or [])
        self.browser = None
        self.requests: list = []         # every external request of every page of this run
        self.misses: list[str] = []
        self.page_events: list[PageEvents] = []   # every DemoPage's events, for the report
        self.user_agent = None           # world.UserAgent of this browser (start())
        self._ua_tries = 0

    async def start(self) -> "BrowserHandle":
        self.browser = await launch(self.pw, offline=self.offline)
        # What an ordinary Chrome of this version says it is (issue 15; world.py).
        self.user_agent, self._ua_tries = await read_user_agent(self.browser), 1
        return self

    @property
    def version(self) -> str:
        return self.browser.version if self.browser else ""

    async def pid(self) -> int:
        """The pid of this Chromium's browser process (CDP SystemInfo: Playwright starts it
        from its driver, so this process never sees its pid otherwise); read once per
        browser (a restart starts another)."""
        cached = getattr(self, "_pid", None)
        if cached and cached[0] is self.browser:
            return cached[1]
        s = await self.browser.new_browser_cdp_session()
        try:
            info = await asyncio.wait_for(s.send("SystemInfo.getProcessInfo"), 10)
        finally:
            try:
                await s.detach()
            except Exception:
                pass
        for p in info.get("processInfo", []):
            if p.get("type") == "browser":
                self._pid = (self.browser, int(p["id"]))
                return self._pid[1]
        raise RuntimeError("Chromium did not name its browser process (SystemInfo.getProcessInfo)")

    async def restart(self) -> None:
        await self.kill()
        await self.start()

    async def kill(self) -> None:
        """Close the browser; if it does not answer, kill its process."""
        b, self.browser = self.browser, None
        if b is None:
            return
        try:
            await asyncio.wait_for(b.close(), 10)
        except Exception:
            log.warning("browser did not close in time; abandoning it")

    async def open_page(self, scenario: Scenario, url: str, *, viewport: Viewport | None = None,
                        fake_clock: bool = False, has_touch: bool = False, is_mobile: bool = False,
                        init_scripts: list[str] | None = None, goto: bool = True) -> "DemoPage":
        if self.browser is None or not self.browser.is_connected():
            await self.start()
        vp = viewport or scenario.viewport
        ctx = await self.browser.new_context(
            viewport={"width": vp.width, "height": vp.height}, device_scale_factor=vp.device_scale_factor,
            # a screen as tall as the window with its browser UI (cloak.js: outerHeight)
            screen={"width": vp.width, "height": vp.height + BROWSER_UI_PX},
            has_touch=has_touch, is_mobile=is_mobile, service_workers="block", accept_downloads=False,
            locale=LOCALE, color_scheme="light", reduced_motion="no-preference")
        net = NetworkPolicy(doc_url=url, mode="offline" if self.offline else "allow", resolvers=self.resolvers)
        net.requests = self.requests      # one record for the whole run
        net.misses = self.misses
        await net.attach(ctx, websockets=False)     # blocked by the page's BenchWorld instead
        if fake_clock:
            # Install before navigation and freeze with pause_at before any page script runs:
            # after that only run_for moves time (pause_at after load can hang with a running
            # rAF loop, a known Playwright pitfall).
            await ctx.clock.install(time=FAKE_EPOCH_MS)
            await ctx.clock.pause_at(FAKE_EPOCH_MS)
        page = await ctx.new_page()
        if self.user_agent is None and self._ua_tries < 2:      # start() could not read it: once more
            self._ua_tries += 1
            self.user_agent = await read_user_agent(self.browser)
        # The bench's own session on the page (issue 15: an ordinary browser to the demo):
        # the user agent without "Headless", and every bench script in the main world behind
        # the hidden namespace of cloak.js (after Playwright's clock, in this order).
        world = await BenchWorld.attach(ctx, page, user_agent=self.user_agent, locale=LOCALE,
                                        on_websocket=net.note_websocket)
        for s in [js("cloak.js"), js("no_websocket.js"), js("timebase.js"), *(init_scripts or [])]:
            await world.add_main(s)
        dp = DemoPage(self, ctx, page, scenario, url, fake_clock=fake_clock, viewport=vp)
        dp.world = world
        # A plain CDP capture gives Playwright's screenshot's pixels only at one device pixel
        # per CSS pixel and without a mobile viewport's zoom (screenshot_png)
        dp.plain_capture = not is_mobile and vp.device_scale_factor == 1
        self.page_events.append(dp.events)
        if goto:
            await dp.goto()
        return dp


class DemoPage:
    def __init__(self, handle: BrowserHandle, context, page, scenario: Scenario, url: str, *,
                 fake_clock: bool, viewport: Viewport):
        self.handle = handle
        self.context = context
        self.page = page
        self.scenario = scenario
        self.url = url
        self.fake_clock = fake_clock
        self.viewport = viewport
        self.events = PageEvents()
        self.t0_ms: float | None = None     # performance.now() of t = 0, on this page's clock
        self.hook = Hook(self)
        self.clock = ClockLog(viewport=f"{viewport.width}x{viewport.height}")   # issue 16: frame cost, steps
        self.slowest_answer_s = 0.0          # the longest a page script call waited (slow_limit_s)
        self.load_clock: WaitClock | None = None   # goto's wall time and CPU wait (cpu_wait.py)
        self._pid: int | None = None               # the driver's pid, for cpu_wait (goto)
        if fake_clock:
            self.budget.pages.append(self.clock)
        self.world: BenchWorld | None = None   # set by open_page: the bench's CDP session
        # Fine clock advances through the page's clock controller straight (_clock_run_for):
        # set by the tour pass (probes/_tour.py), which steps 2045 times (issue 18)
        self.direct_clock = False
        page.on("dialog", self._on_dialog)
        page.on("popup", self._on_popup)
        page.on("crash", lambda *_: setattr(self.events, "crashed", True))
        page.on("close", lambda *_: setattr(self.events, "closed", True))
        page.on("pageerror", lambda e: self.events.page_errors.append(str(e)[:300]))
        page.on("framenavigated", self._on_nav)
        page.on("domcontentloaded", self._on_document)
        context.on("page", self._on_popup)

    # ----------------------------------------------------------------- events
    def _on_document(self, *_) -> None:
        self.events.documents += 1

    def _on_dialog(self, dialog) -> None:
        self.events.dialog_count += 1
        if len(self.events.dialogs) < 50:
            self.events.dialogs.append({"type": dialog.type, "message": dialog.message[:200]})
        asyncio.ensure_future(self._dismiss(dialog))

    @staticmethod
    async def _dismiss(dialog) -> None:
        try:
            await dialog.dismiss()
        except Exception:
            pass

    def _on_popup(self, popup) -> None:
        if popup is self.page:
            return
        # page "popup" and context "page" both report the same window: count it once
        seen = self.__dict__.setdefault("_popups_seen", set())
        if id(popup) in seen:
            return
        seen.add(id(popup))
        self.events.popups.append(popup.url)
        asyncio.ensure_future(_quiet_close(popup))

    def _on_nav(self, frame) -> None:
        if frame == self.page.main_frame and frame.url.split("#")[0] != self.url:
            self.events.navigations.append(frame.url)

    # ----------------------------------------------------------------- calls
    def _check_alive(self) -> None:
        if self.events.crashed:
            raise DemoCrash("the demo's renderer crashed")
        if self.events.closed:
            raise DemoCrash("the demo's page closed")
        if self.events.documents > 1:
            where = self.events.navigations[-1] if self.events.navigations else "a new document"
            raise ProbeError(f"the demo left its own document (navigated to {where[:200]}): "
                             "what the page shows now is not the demo")

    async def call(self, coro, timeout: float, what: str):
        """Await a Playwright call with a hard limit; turn hangs and crashes into ProbeErrors.
        On a page whose frames were measured slow the limit is at least hang_frames of its
        frame cost (issue 16: the same line between slow and hung as for clock advances)."""
        self._check_alive()
        timeout = self.slow_limit_s(timeout)
        try:
            return await asyncio.wait_for(coro, timeout)
        except asyncio.TimeoutError:
            self._check_alive()
            raise DemoHang(f"{what}: no answer within {timeout:.3g} s (the demo's main thread hangs)") from None
        except ProbeError as e:      # the awaited work's own verdict (goto's load limit)
            self._check_alive()
            raise type(e)(f"{what}: {e}") from None
        except Exception as e:
            self._check_alive()
            msg = str(e).splitlines()[0] if str(e) else type(e).__name__
            if "crash" in msg.lower() or "Target closed" in msg or "has been closed" in msg:
                raise DemoCrash(f"{what}: {msg}") from None
            raise ProbeError(f"{what}: {msg}") from None

    async def evaluate(self, expression: str, arg: Any = None, timeout: float = 5.0, what: str = "page script"):
        """Evaluate in the page's main world. `__SKYCITY__` names the bench's hidden namespace
        (cloak.js): `__SKYCITY__.bench.t0`, `__SKYCITY__.frames.count()`…"""
        if self.world is not None:
            expression = self.world.bind(expression)
        start = time.monotonic()
        out = await self.call(self.page.evaluate(expression, arg), timeout, what)
        # how long the main thread kept the bench waiting (slow_limit_s: a slow page's calls)
        self.slowest_answer_s = max(self.slowest_answer_s, time.monotonic() - start)
        return out

    async def evaluate_isolated(self, fn: str, arg: Any = None, timeout: float = 5.0, what: str = "page script"):
        """Evaluate in the bench's isolated world (same DOM, none of the page's JavaScript:
        for code that only reads the document; see world.py)."""
        if self.world is None:
            return await self.evaluate(fn, arg, timeout, what)
        try:
            return await self.call(self.world.evaluate_isolated(fn, arg), timeout, what)
        except IsolatedEvalError as e:
            raise ProbeError(f"{what}: {e}") from None

    async def goto(self) -> None:
        """Load the demo and establish t = 0 (first animation frame after the load event).

        The load limit (timeouts.load_s, for the load event and again for the first frame
        after it) is the demo's own time: wall time less what its browser's threads spent
        waiting for a CPU that other processes held (cpu_wait.py), never more than
        busy_wall_cap times load_s of wall time. On a quiet machine that is plain wall
        time, so a page hung at load still ends at load_s."""
        try:
            # the browser's parent, Playwright's driver: the tree cpu_wait reads (with this process)
            self._pid = parent_pid(await self.handle.pid())
        except Exception:        # no pid: plain wall time
            self._pid = None
        self.load_clock = await self._in_load_time(
            self.page.goto(self.url, wait_until="load", timeout=0), "loading the demo", "no load event")
        # how long loading took, and how much of it was the machine's (the page's clock log)
        self.clock.load = self.load_clock.to_json()
        if self.fake_clock:
            await self.run_for(50)      # lets the first frame after load happen on the fake clock
        expr = "__SKYCITY__.bench && __SKYCITY__.bench.t0"
        expr = self.world.bind(expr) if self.world is not None else expr
        for _ in range(int(self.scenario.timeouts.load_s * 10)):
            # the first frame after load is part of loading: the load limit applies to it
            box: list = []
            wc = await self._in_load_time(self.page.evaluate(expr), "reading t0", "no answer", box)
            # how long the main thread kept the bench waiting (slow_limit_s, as evaluate does)
            self.slowest_answer_s = max(self.slowest_answer_s, wc.wall_s)
            if box[0] is not None:
                self.t0_ms = float(box[0])
                self.clock.measuring = self.fake_clock    # the next frames are timed (frame cost)
                return
            if self.fake_clock:
                await self.run_for(16)
            else:
                await asyncio.sleep(0.1)
        raise ProbeError("no animation frame after the load event: the demo never rendered a frame")

    def wait_clock(self, start: float | None = None) -> WaitClock:
        """A clock of this page's own time from now (or `start`): wall time and the CPU wait
        other processes caused its browser, Playwright's driver and this process (cpu_wait.py;
        plain wall time before goto has found the driver's pid)."""
        return WaitClock.begin(self._pid, (os.getpid(),), start)

    async def _in_load_time(self, aw, what: str, missing: str, result: list | None = None) -> WaitClock:
        """Await `aw` within load_s of the demo's own time (see goto); its result goes into
        `result`. Returns the wait's clock (wall time, CPU wait) for the page's evidence."""
        t = self.scenario.timeouts
        wc = self.wait_clock()
        task = asyncio.ensure_future(aw)
        cap_s = t.load_s * t.busy_wall_cap

        async def until_done():
            try:
                while True:
                    left = min(t.load_s - wc.own_s(), cap_s - wc.wall_s)
                    if left <= 0:
                        busy = (f", {wc.waited_s:.0f} s of it waiting for a CPU other processes held"
                                if wc.waited_s >= 0.5 else "")
                        raise DemoHang(f"{missing} within {t.load_s:g} s of the demo's time "
                                       f"({wc.wall_s:.0f} s wall{busy})")
                    # the thread waits are read every poll_s, so an exited thread's wait is
                    # kept up to its last read
                    done, _ = await asyncio.wait({task}, timeout=min(left, t.poll_s))
                    if done:
                        if result is not None:
                            result.append(task.result())
                        return task.result()
                    wc.read()
            finally:
                if not task.done():
                    task.cancel()

        await self.call(until_done(), cap_s + 5, what)
        return wc

    # ----------------------------------------------------------------- time
    @property
    def budget(self) -> RunBudget:
        """The run's budget (the runner sets one per run; a page opened outside a run makes one)."""
        b = getattr(self.handle, "budget", None)
        if b is None:
            b = self.handle.budget = RunBudget(self.scenario.timeouts)
        return b

    async def run_for(self, ms: float, *, picture_only: bool = False) -> None:
        """Advance the fake clock by `ms`, firing every timer and animation frame on the way.

        Limits come from the page's measured frame cost (browser/clock_budget.py): a slow page
        is waited for while its frames keep coming, a hung one is stopped after hang_s. The
        first frames after load are advanced one at a time to measure that cost. With
        `picture_only` (the caller needs the picture at the end, not every frame on the way)
        the last frame is drawn at exactly the end time, and a slow page is advanced in
        coarse steps, one rendered frame per step."""
        if not self.fake_clock:
            raise RuntimeError("run_for needs a page opened with fake_clock=True")
        left = int(round(ms))
        log, t = self.clock, self.scenario.timeouts
        while left > 0 and log.measuring and len(log.samples_ms) < t.frame_cost_frames:
            step = min(left, int(FRAME_MS) + 1)              # one 60 Hz frame (17 ms)
            wall = await self._advance(step, fine=True)
            log.samples_ms.append(wall * 1000.0 * FRAME_MS / step)
            left -= step
        if left <= 0:
            return
        cost = log.frame_cost_ms
        one = int(FRAME_MS) + 1                              # one 60 Hz frame (17 ms)
        if not picture_only:
            await self._advance(left, fine=True)
            return
        # The picture asked for is the demo at exactly that time: the last step is a jump of
        # at least one frame (Playwright's fastForward fires the pending animation frame at
        # the jump's end), not the last 16 ms grid point before it (a replay started between
        # two grid points would otherwise be compared with frames up to 16 ms off).
        if cost is not None and cost > t.coarse_above_ms:
            # Slow page: coarse steps, one frame each. The first is one 60 Hz frame, so the
            # frame after whatever the probe just did (a key, a hook call) comes as soon as
            # on a fine clock and a demo that restarts its time at the next frame does not
            # start a step late.
            log.step_ms = log.step_ms or t.coarse_step_ms
            step = min(left, one)
            while left > 0:
                await self._advance(step, fine=False)
                left -= step
                step = min(left, log.step_ms)
                if 0 < left - step < one:                # keep the last step a whole frame
                    step = left - one
            return
        if left > one:
            await self._advance(left - one, fine=True)      # every frame on the way ...
        await self._advance(min(left, one), fine=False, exact=True)   # ... the last at the exact time

    async def _advance(self, ms: int, *, fine: bool, exact: bool = False) -> float:
        """One clock call under its sized budget; returns its wall seconds. `fine`: every
        timer and frame on the way (runFor); else one jump (fastForward: every due timer and
        the pending frame once, at the end), logged as a coarse step unless `exact` (a fine
        advance's last frame, drawn at its exact time)."""
        log = self.clock
        if fine:
            coro, frames = self._clock_run_for(ms), ms / 16.0    # Playwright's rAF: every 16 ms
        else:
            coro, frames = self.page.clock.fast_forward(ms), 1.0      # every due timer once, one frame
        wall = await watched(self, coro, ms=ms, frames=frames,
                             what=f"advancing the clock {ms} ms" + ("" if fine or exact else " (coarse step)"))
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
                log.slowest = {"demo_ms": ms, "wall_s": round(wall, 3), "wall_ms_per_demo_ms": round(per, 2),
                               "coarse": not (fine or exact)}
        return wall

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
        r = await self.world.cdp.send("Runtime.evaluate", {
            "expression": f"globalThis.__pwClock.controller.runFor({int(ms)})", "awaitPromise": True})
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
        checked against the bench's (hook getState().time) and the step halved if it lagged."""
        cur = await self.now_s()
        if t_s <= cur:
            return
        log, t = self.clock, self.scenario.timeouts
        steps0 = log.coarse_steps
        # the hook's time before, when this may go coarse (also when the frame cost is not
        # measured yet: the first advance measures it, then may go coarse)
        cost = log.frame_cost_ms
        coarse = picture_only and (cost is None or cost > t.coarse_above_ms)
        h0 = await self.hook_time() if coarse else None
        await self.run_for((t_s - cur) * 1000.0, picture_only=picture_only)
        if log.coarse_steps == steps0:
            return
        clock_s = round(t_s - cur, 3)
        h1 = await self.hook_time() if h0 is not None else None
        if h0 is None or h1 is None:
            log.demo_clock.append({"clock_s": clock_s, "step_ms": log.step_ms, "kept_up": None,
                                   "note": "not checked: no hook getState().time; the demo rendered one frame per "
                                           f"{log.step_ms} ms step, so a demo that animates per frame rather than "
                                           "by the clock shows an earlier moment"})
            return
        if h1 == h0:
            # its time stood still (paused, or a hook that reports a constant): nothing to
            # compare, and no reason to step more finely
            log.demo_clock.append({"clock_s": clock_s, "demo_s": 0.0, "step_ms": log.step_ms, "kept_up": None,
                                   "note": "not checked: the hook's getState().time stood still"})
            return
        kept = (h1 - h0) >= t.clock_keepup * clock_s
        log.demo_clock.append({"clock_s": clock_s, "demo_s": round(h1 - h0, 3), "step_ms": log.step_ms,
                               "kept_up": kept})
        if not kept:
            log.step_ms = max(int(FRAME_MS) + 1, log.step_ms // 2)

    # ----------------------------------------------------------------- pixels
    def slow_limit_s(self, timeout: float) -> float:
        """`timeout`, or hang_frames of the page's measured frame cost if longer: a page that
        renders slowly answers slowly (a screenshot waits for the GPU work it queued), and is
        hung only when it has not answered in that many of its own frames (issue 16)."""
        t = self.scenario.timeouts
        clock = getattr(self, "clock", None)
        cost = clock.frame_cost_ms if clock is not None else None
        if clock is not None and cost is not None:
            cost = max(cost, clock.seen_cost_ms or 0.0)
        if cost is None:
            # not measured on this page (real time, or still loading): what this run measured
            # of the same demo on its other pages
            cost = self.budget.worst_cost_ms()
        if cost is None and self.fake_clock:
            # Nothing measured of this demo yet: a fake-clock page between its load and its
            # measured frames is still loading (shader compiles, first uploads; software WebGL
            # blocks the main thread on them): the load timeout applies to its calls, as to its
            # clock advances (clock_budget.watched). CI: the shadow-map room (~2.3 s a frame)
            # took over 5 s to answer its first clock read beside three other browsers, and
            # every item of it came out `untested`.
            return max(timeout, t.load_s)
        if cost is None:
            # A real-time page answers a call between two of its frames: the slowest answer it
            # gave (its first, "reading t0", is timed with the load timeout) is at least one
            # frame's cost (scenarios/skycity.yaml: answer_margin). An infinite loop answers
            # nothing after it starts, so it is still caught at `timeout` when its earlier
            # answers were quick.
            return max(timeout, t.answer_margin * self.slowest_answer_s)
        return max(timeout, t.hang_frames * (cost or 0.0) / 1000.0)

    async def screenshot_png(self, timeout: float = 20.0, **kw) -> bytes:
        """PNG of the viewport, or of `clip` (viewport CSS px, as Playwright's)."""
        at = await self._plain_capture_at(timeout) if set(kw) <= {"clip"} else None
        params: dict[str, Any] = {"format": "png", "optimizeForSpeed": True}
        if at is not None and kw.get("clip") is not None:
            box = _trimmed(kw["clip"], self.viewport)
            # as Playwright: the box trimmed to the viewport, in document coordinates
            params["clip"] = None if box is None else {**box, "x": at[0] + box["x"], "y": at[1] + box["y"], "scale": 1}
        if at is not None and params.get("clip", True) is not None:
            # Straight from CDP with Chromium's fast PNG settings: the same lossless pixels as
            # Playwright's screenshot (tests/probes/test_plain_capture.py) at about half the
            # cost (PNG encoding is most of a frame's cost; Playwright also prepares and
            # restores every frame of the page around each shot).
            r = await self.call(self.world.cdp.send("Page.captureScreenshot", params), timeout, "screenshot")
            return base64.b64decode(r["data"])
        # Playwright's own limit (30 s by default) must not end a screenshot the bench still
        # waits for: a slow page's limit is longer (slow_limit_s; the shadow-map example at
        # 1920x1080 took over 30 s for one real-time frame under load).
        limit = self.slow_limit_s(timeout)
        return await self.call(self.page.screenshot(type="png", scale="css", caret="hide", timeout=(limit + 5) * 1000, **kw),
                               timeout, "screenshot")


    async def _plain_capture_at(self, timeout: float) -> tuple[float, float] | None:
        """Where the viewport is in the document (its scroll) when a plain capture shows what
        Playwright's screenshot would, else None. Playwright hides the caret of editable
        elements and waits for the page's fonts; so the plain capture is taken only when
        nothing that could hold a caret has the focus (the body, the document or a canvas; an
        iframe or a shadow host could hide one) and the page is not zoomed, after the fonts
        (read in the bench's isolated world)."""
        if not getattr(self, "plain_capture", False) or self.world is None:
            return None
        try:
            at = await self.evaluate_isolated(_PLAIN_CAPTURE_AT, timeout=timeout, what="screenshot (the focus)")
        except (DemoHang, DemoCrash):
            raise
        except ProbeError:
            return None           # Playwright's screenshot then says what is wrong
        return (float(at[0]), float(at[1])) if isinstance(at, list) and len(at) == 2 else None

    async def frame(self, timeout: float = 20.0) -> np.ndarray:
        """The viewport as a BGR uint8 array in CSS pixels (hook coordinates index it directly)."""
        png = await self.screenshot_png(timeout)
        img = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
        if img is None:
            raise ProbeError("screenshot could not be decoded")
        return img

    async def close(self) -> None:
        try:
            await asyncio.wait_for(self.context.close(), 10)
        except Exception:
            # A wedged renderer can keep the context from closing: restart the whole browser
            # so the next probe starts clean.
            await self.handle.restart()


# DemoPage._plain_capture_at, in the bench's isolated world (its own timers: the page's are
# the fake clock's). Fonts: as Playwright, up to 2 s.
_PLAIN_CAPTURE_AT = """async () => {
  await Promise.race([document.fonts.ready, new Promise(r => setTimeout(r, 2000))]);
  const a = document.activeElement, v = window.visualViewport;
  const plain = document.designMode !== 'on' && (!a || !a.isContentEditable && (a === document.body
                || a === document.documentElement || a.tagName === 'CANVAS'));
  return plain && v && v.scale === 1 ? [v.pageLeft, v.pageTop] : null;
}"""


def _trimmed(clip: dict, vp: Viewport) -> dict | None:
    """A viewport clip trimmed to the viewport, whole CSS px in size (Playwright's
    trimClipToSize and enclosingIntSize); None when nothing is left (Playwright then says so)."""
    x0, y0 = max(0.0, min(clip["x"], vp.width)), max(0.0, min(clip["y"], vp.height))
    x1 = max(0.0, min(clip["x"] + clip["width"], vp.width))
    y1 = max(0.0, min(clip["y"] + clip["height"], vp.height))
    w, h = math.floor(x1 - x0 + 1e-3), math.floor(y1 - y0 + 1e-3)
    return {"x": x0, "y": y0, "width": w, "height": h} if w > 0 and h > 0 else None


async def _quiet_close(page) -> None:
    try:
        await asyncio.wait_for(page.close(), 5)
    except Exception:
        pass


@dataclass
class HookCall:
    ok: bool
    value: Any = None
    error: Optional[str] = None      # "missing", "threw: ...", "hung", "not JSON"

    def to_json(self) -> dict:
        return {"ok": self.ok, "value": self.value, "error": self.error}


class Hook:
    """Calls into window.skyCityTest (names from the scenario), never trusting it: a missing,
    throwing, hanging or garbage-returning method gives HookCall(ok=False, error=...)."""

    _CALL = """async ([obj, method, args]) => {
      const h = window[obj];
      if (h === undefined || h === null) return {error: 'missing: no window.' + obj};
      if (method === null) {
        try { return {value: JSON.parse(JSON.stringify(Object.fromEntries(Object.entries(h).map(([k, v]) => [k, typeof v === 'function' ? 'function' : v]))))}; }
        catch (e) { return {error: 'not JSON: ' + e}; }
      }
      if (typeof h[method] !== 'function') return {error: 'missing: window.' + obj + '.' + method + ' is not a function'};
      let v;
      try { v = await h[method](...args); } catch (e) { return {error: 'threw: ' + (e && e.message || e)}; }
      try { return {value: v === undefined ? null : JSON.parse(JSON.stringify(v))}; }
      catch (e) { return {error: 'not JSON: ' + e}; }
    }"""

    def __init__(self, page: DemoPage):
        self.dp = page

    def _names(self) -> tuple[str, dict[str, str]]:
        h = self.dp.scenario.hook
        return h.object, h.methods

    async def describe(self) -> HookCall:
        """The hook object's own properties (functions shown as 'function')."""
        obj, _ = self._names()
        return await self._call(obj, None, [])

    async def call(self, method: str, *args) -> HookCall:
        obj, names = self._names()
        return await self._call(obj, names.get(method, method), list(args))

    async def _call(self, obj: str, method: str | None, args: list) -> HookCall:
        try:
            r = await self.dp.evaluate(self._CALL, [obj, method, args], timeout=self.dp.scenario.hook.call_timeout_s,
                                       what=f"hook {method or obj}")
        except DemoHang:
            return HookCall(False, error=f"hung: no answer within {self.dp.scenario.hook.call_timeout_s:g} s")
        if not isinstance(r, dict):
            return HookCall(False, error="bad answer")
        if "error" in r:
            return HookCall(False, error=r["error"])
        return HookCall(True, value=r.get("value"))
