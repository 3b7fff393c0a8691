"""Browser sessions for probes.

`BrowserHandle` owns one Chromium process for one candidate run; `open_page()` gives a
fresh context each time (cookies, storage, clock and routes are never shared between
probes). `DemoPage` wraps the page with what every probe needs: the closed network, the
bench's t = 0, the fake clock, the hook client, screenshots as numpy arrays, and hard time
limits on every call into the page, so a demo that hangs its main thread costs a bounded
number of seconds and never hangs the bench. Its fake clock is page_clock.py's
FakeClockMixin, its screenshots page_pixels.py's PixelsMixin, its hook client hook.py.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from skycity_bench.browser.clock_budget import ClockLog, RunBudget
from skycity_bench.browser.cpu_wait import WaitClock, gpu_process_cpu_s
from skycity_bench.browser.hook import Hook
from skycity_bench.browser.launch import launch
from skycity_bench.browser.network import NetworkPolicy
from skycity_bench.browser.page_clock import FakeClockMixin
from skycity_bench.browser.page_errors import ThrownLog
from skycity_bench.browser.page_pixels import PixelsMixin
from skycity_bench.browser.world import BROWSER_UI_PX, BenchWorld, IsolatedEvalError, UserAgent, read_user_agent
from skycity_bench.common.errors import Cause, DemoCrash, DemoHang, ProbeError
from skycity_bench.common.process_tree import parent_pid
from skycity_bench.inputs.scenario import Scenario, Viewport

log = logging.getLogger(__name__)


def js(name: str) -> str:
    """An injected script from skycity_bench/browser/js/."""
    return resources.files(__package__).joinpath("js", name).read_text(encoding="utf-8")


# Fake clock: the epoch the fake Date starts at. Fixed, so two runs see the same Date.now().
FAKE_EPOCH_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
LOCALE = "zh-CN"  # the rubric's audience; also the Accept-Language of the user-agent override


@dataclass
class PageEvents:
    dialogs: list[dict] = field(default_factory=list)
    popups: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    navigations: list[str] = field(default_factory=list)
    crashed: bool = False
    closed: bool = False
    # Hostile demos: documents loaded in the main frame (more than one: the demo
    # navigated away or reloaded, so what a probe sees after that is not the demo), and the
    # number of dialogs (a dialog loop must not grow `dialogs` without bound).
    documents: int = 0
    dialog_count: int = 0
    # Errors the demo's own code threw (fake-clock callbacks and the real loop alike), and the
    # demo ms the bench advanced this page's fake clock by: when an error came (page_errors.py).
    thrown: ThrownLog = field(default_factory=ThrownLog)
    clock_ms: float = 0.0

    def on_page_error(self, error: object) -> None:
        text = str(error)
        if len(self.page_errors) < 50:  # the count and both ends are in `thrown`
            self.page_errors.append(text[:300])
        self.thrown.add(text, self.clock_ms / 1000.0 if self.clock_ms else None)


class BrowserHandle:
    """One Chromium process; restarted when a demo wedges it."""

    def __init__(self, pw, *, offline: bool = True, resolvers: list | None = None):
        self.pw = pw
        self.offline = offline
        self.resolvers = list(resolvers or [])
        self.browser: Any = None  # playwright's Browser (start())
        self.requests: list = []  # every external request of every page of this run
        self.misses: list[str] = []
        self.page_events: list[PageEvents] = []  # every DemoPage's events, for the report
        self.budget: RunBudget | None = None  # the run's wall budget (the runner sets it)
        self.user_agent: UserAgent | None = None  # what this browser says it is (start())
        self._ua_tries = 0

    async def start(self) -> BrowserHandle:
        self.browser = await launch(self.pw, offline=self.offline)
        # What an ordinary Chrome of this version says it is (world.py).
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

    async def open_page(
        self,
        scenario: Scenario,
        url: str,
        *,
        viewport: Viewport | None = None,
        fake_clock: bool = False,
        has_touch: bool = False,
        is_mobile: bool = False,
        init_scripts: list[str] | None = None,
        goto: bool = True,
    ) -> DemoPage:
        if self.browser is None or not self.browser.is_connected():
            await self.start()
        vp = viewport or scenario.viewport
        ctx = await self.browser.new_context(
            viewport={"width": vp.width, "height": vp.height},
            device_scale_factor=vp.device_scale_factor,
            # a screen as tall as the window with its browser UI (cloak.js: outerHeight)
            screen={"width": vp.width, "height": vp.height + BROWSER_UI_PX},
            has_touch=has_touch,
            is_mobile=is_mobile,
            service_workers="block",
            accept_downloads=False,
            locale=LOCALE,
            color_scheme="light",
            reduced_motion="no-preference",
        )
        net = NetworkPolicy(doc_url=url, mode="offline" if self.offline else "allow", resolvers=self.resolvers)
        net.requests = self.requests  # one record for the whole run
        net.misses = self.misses
        await net.attach(ctx, websockets=False)  # blocked by the page's BenchWorld instead
        if fake_clock:
            # Frozen before navigation: only run_for moves time (pause_at after load can hang
            # with a running rAF loop). pause_at installs the clock; an install() call before it
            # would start performance.now() at the wall ms between the two calls (Playwright
            # replays its log in real time until the pause): another origin under load.
            await ctx.clock.pause_at(FAKE_EPOCH_MS)
        page = await ctx.new_page()
        if self.user_agent is None and self._ua_tries < 2:  # start() could not read it: once more
            self._ua_tries += 1
            self.user_agent = await read_user_agent(self.browser)
        # The bench's own session on the page (an ordinary browser to the demo):
        # the user agent without "Headless", and every bench script in the main world behind
        # the hidden namespace of cloak.js (after Playwright's clock, in this order).
        world = await BenchWorld.attach(
            ctx, page, user_agent=self.user_agent, locale=LOCALE, on_websocket=net.note_websocket
        )
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


class DemoPage(FakeClockMixin, PixelsMixin):
    def __init__(
        self,
        handle: BrowserHandle,
        context,
        page,
        scenario: Scenario,
        url: str,
        *,
        fake_clock: bool,
        viewport: Viewport,
    ):
        self.handle = handle
        self.context = context
        self.page = page
        self.scenario = scenario
        self.url = url
        self.fake_clock = fake_clock
        self.viewport = viewport
        self.events = PageEvents()
        self.t0_ms: float | None = None  # performance.now() of t = 0, on this page's clock
        self.hook = Hook(self)
        self.clock = ClockLog(viewport=f"{viewport.width}x{viewport.height}")  # frame cost, steps (clock_budget.py)
        self.slowest_answer_s = 0.0  # the longest a page script call waited (slow_limit_s)
        self.load_clock: WaitClock | None = None  # goto's wall time and CPU wait (cpu_wait.py)
        self._pid: int | None = None  # the driver's pid, for cpu_wait (goto)
        if fake_clock:
            self.budget.pages.append(self.clock)
        self.world: BenchWorld | None = None  # set by open_page: the bench's CDP session
        # Fine clock advances through the page's clock controller straight (_clock_run_for):
        # set by the tour pass (probes/_tour.py), which steps 2045 times
        self.direct_clock = False
        # A plain CDP capture (screenshot_png): set by open_page where it shows Playwright's pixels
        self.plain_capture = False
        page.on("dialog", self._on_dialog)
        page.on("popup", self._on_popup)
        page.on("crash", lambda *_: setattr(self.events, "crashed", True))
        page.on("close", lambda *_: setattr(self.events, "closed", True))
        page.on("pageerror", self.events.on_page_error)
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
        # page "popup" and context "page" both report the same window: count it once. The
        # window is kept with its id: an id alone is reused once a closed popup's object is
        # freed, and the next popup then read as seen (9 popups counted 8, a suite run at load)
        seen = self.__dict__.setdefault("_popups_seen", {})
        if seen.get(id(popup)) is popup:
            return
        seen[id(popup)] = popup
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
            raise ProbeError(
                f"the demo left its own document (navigated to {where[:200]}): what the page shows now is not the demo",
                cause=Cause.PAGE,
            )

    async def call(self, coro, timeout: float, what: str):
        """Await a Playwright call with a hard limit; turn hangs and crashes into ProbeErrors.
        On a page whose frames were measured slow the limit is at least hang_frames of its
        frame cost (the same line between slow and hung as for clock advances)."""
        try:
            self._check_alive()
        except BaseException:
            coro.close()  # never awaited now: closed, so no "coroutine was never awaited" warning
            raise
        timeout = self.slow_limit_s(timeout)
        try:
            return await asyncio.wait_for(coro, timeout)
        except TimeoutError:
            self._check_alive()
            raise DemoHang(f"{what}: no answer within {timeout:.3g} s (the demo's main thread hangs)") from None
        except ProbeError as e:  # the awaited work's own verdict (goto's load limit)
            self._check_alive()
            raise type(e)(f"{what}: {e}", cause=e.cause) from None
        except Exception as e:
            self._check_alive()
            msg = str(e).splitlines()[0] if str(e) else type(e).__name__
            if "crash" in msg.lower() or "Target closed" in msg or "has been closed" in msg:
                raise DemoCrash(f"{what}: {msg}") from None
            # the bench's script failed on what the page holds (not what the bench expects)
            raise ProbeError(f"{what}: {msg}", cause=Cause.PAGE) from None

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
            raise ProbeError(f"{what}: {e}", cause=Cause.PAGE) from None

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
        except Exception:  # no pid: plain wall time
            self._pid = None
        self.load_clock = await self._in_load_time(
            self.page.goto(self.url, wait_until="load", timeout=0), "loading the demo", "no load event"
        )
        # how long loading took, and how much of it was the machine's (the page's clock log)
        self.clock.load = self.load_clock.to_json()
        if self.fake_clock:
            await self.run_for(50)  # lets the first frame after load happen on the fake clock
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
                self.clock.measuring = self.fake_clock  # the next frames are timed (frame cost)
                return
            if self.fake_clock:
                await self.run_for(16)
            else:
                await asyncio.sleep(0.1)
        raise ProbeError("no animation frame after the load event: the demo never rendered a frame", cause=Cause.PAGE)

    def wait_clock(self, start: float | None = None) -> WaitClock:
        """A clock of this page's own time from now (or `start`): wall time and the CPU wait
        other processes caused its browser, Playwright's driver and this process (cpu_wait.py;
        plain wall time before goto has found the driver's pid)."""
        return WaitClock.begin(self._pid, (os.getpid(),), start)

    def gpu_cpu_s(self) -> float | None:
        """CPU seconds so far of this page's browser's GPU process (cpu_wait.py); None before
        goto has found the driver's pid, or where it cannot be read."""
        return gpu_process_cpu_s(self._pid)

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
                        busy = (
                            f", {wc.waited_s:.0f} s of it waiting for a CPU other processes held"
                            if wc.waited_s >= 0.5
                            else ""
                        )
                        raise DemoHang(
                            f"{missing} within {t.load_s:g} s of the demo's time ({wc.wall_s:.0f} s wall{busy})"
                        )
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

    async def close(self) -> None:
        try:
            await asyncio.wait_for(self.context.close(), 10)
        except Exception:
            # A wedged renderer can keep the context from closing: restart the whole browser
            # so the next probe starts clean.
            await self.handle.restart()


async def _quiet_close(page) -> None:
    try:
        await asyncio.wait_for(page.close(), 5)
    except Exception:
        pass
