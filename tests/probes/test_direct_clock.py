"""The tour pass's clock steps (DemoPage._clock_run_for, `direct_clock`): the page's
clock controller called straight through CDP instead of Playwright's clock.run_for, which
also registers an init script per call. The two must be the same to the demo: the same
frames (lossless, and the fixture's own drawn clock) at the same times, the same error when
a timer throws, and a page with a subframe keeps Playwright's call (it advances every
frame's clock).

Real Chromium, small pages at 320x240; every figure compared is demo time or pixels, which the
fake clock decides whatever the machine's speed."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from skycity_bench.probes._stepper import RAF_60HZ_JS, Stepper, decode, frame_times
from tests.probes.test_clock_budget import _with_page, scenario
from tests.probes.test_timeline_recording import _clock_ms
from tests.truth import fixture

pytestmark = pytest.mark.browser

CLOCK_BARS = fixture("timeline/clock_bars")

THROWS = b"""<!doctype html><canvas></canvas><script>
let n = 0;
requestAnimationFrame(function f() { n++; requestAnimationFrame(f); });
setTimeout(() => { throw new Error('boom at 300 ms'); }, 300);
</script>"""

# a page with a subframe whose own clock the advance must move too
FRAMED = b"""<!doctype html><body><iframe srcdoc="<script>window.t0 = performance.now()</script>"></iframe>
<script>requestAnimationFrame(function f() { requestAnimationFrame(f); });</script></body>"""


async def _walk_page(direct: bool, times: list[float]):
    """Opens clock_bars as the tour pass does (60 Hz animation grid) and steps it through
    `times`; at each: the animation frame's time and the frame (PNG, lossless)."""
    from playwright.async_api import async_playwright

    from skycity_bench.browser.server import DemoServer
    from skycity_bench.browser.session import BrowserHandle
    from skycity_bench.inputs.scenario import Viewport

    with DemoServer(CLOCK_BARS.html.read_bytes()) as srv:
        async with async_playwright() as pw:
            h = await BrowserHandle(pw).start()
            try:
                dp = await h.open_page(
                    scenario(),
                    srv.url,
                    viewport=Viewport(width=320, height=240),
                    fake_clock=True,
                    init_scripts=[RAF_60HZ_JS],
                )
                dp.direct_clock = direct
                st = await Stepper(dp).start()
                out = []
                for t in times:
                    await st.to(t)
                    out.append((st.frame_s, decode(await st.capture("png"))))
                await dp.close()
                return out
            finally:
                await h.kill()


def test_should_give_the_same_frames_at_the_same_times_as_playwrights_clock():
    times = frame_times(1.5, 30)[1:]
    pw = asyncio.run(_walk_page(False, times))
    direct = asyncio.run(_walk_page(True, times))
    assert len(pw) == len(direct) == len(times)
    for (t_a, img_a), (t_b, img_b), t in zip(pw, direct, times):
        assert t_a == t_b == pytest.approx(t, abs=1e-9)
        # the fixture draws its own clock: the frame shown is the one of that time, on both
        assert abs(_clock_ms(img_b, 14, 4) - t * 1000) <= 4, f"direct: the frame at {t:.3f} s shows another time"
        assert np.array_equal(img_a, img_b), f"the frame at {t:.3f} s differs"


def test_should_record_a_timer_that_throws_alike_on_both_clock_paths_and_go_on():
    # A demo's throwing callback is the demo's error, not the bench's: the advance completes
    # (Playwright's clock rethrows only after moving its time) and the error is recorded, the
    # same through the page's clock controller as through Playwright's call.
    async def body(dp, direct):
        dp.direct_clock = direct
        await dp.run_for(500)
        return dp.events.thrown.to_json(), await dp.evaluate("performance.now()")

    sc = scenario()
    got = [asyncio.run(_with_page(THROWS, sc, lambda dp, d=d: body(dp, d))) for d in (False, True)]
    (thrown_pw, now_pw), (thrown_direct, now_direct) = got
    assert thrown_pw["count"] >= 1 and "boom at 300 ms" in thrown_pw["first"]["message"]
    assert thrown_pw["first"]["message"] == thrown_direct["first"]["message"]
    assert now_pw == now_direct and now_pw >= 500


ORIGIN = b"""<!doctype html><script>window.bornAt = performance.now();
setTimeout(() => { window.timerAt = performance.now(); }, 100);
requestAnimationFrame(function f() { requestAnimationFrame(f); });</script>"""


def test_should_start_every_page_at_the_same_time_origin_whatever_the_wall_clock_did():
    # The page's time is the fake clock's alone: its scripts start at performance.now() = 0 and
    # a 100 ms timer fires at 100, however long the bench took between its clock calls
    # (a second install() call used to leak those wall milliseconds into the page's origin).
    async def body(dp):
        await dp.run_for(200)
        return await dp.evaluate("[window.bornAt, window.timerAt]")

    born, timer = asyncio.run(_with_page(ORIGIN, scenario(), body))
    assert (born, timer) == (0, 100)


def test_should_keep_playwrights_call_on_a_page_with_a_subframe():
    async def body(dp):
        dp.direct_clock = True
        sub = dp.page.frames[1]
        before = await sub.evaluate("performance.now()")
        await dp.run_for(1000)
        return len(dp.page.frames), await sub.evaluate("performance.now()") - before

    frames, moved = asyncio.run(_with_page(FRAMED, scenario(), body))
    assert frames == 2
    assert moved == pytest.approx(1000, abs=1)  # the subframe's clock moved with the page's
