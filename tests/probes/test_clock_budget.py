"""Fake-clock budgets from the measured frame cost (issue 16, browser/clock_budget.py), in a
real Chromium on small canvas pages whose cost is made by construction (a busy loop per
frame): a slow page is waited for while its frames keep coming, a page whose frames slow
down far past the measured cost is stopped as slow ("frames kept coming"), a page that
loops for ever is stopped as hung within hang_s, and a picture reached in coarse clock steps
is the very picture the fine clock gives at that time.

The scenario's limits are shrunk here (a tiny base, a low coarse threshold) so the
mechanism shows in seconds; the defaults and their reasons are in scenarios/skycity.yaml.
"""

from __future__ import annotations

import asyncio
import time

import numpy as np
import pytest

from skycity_bench.browser.server import DemoServer
from skycity_bench.browser.session import BrowserHandle
from skycity_bench.errors import DemoHang, DemoSlow
from skycity_bench.scenario import Viewport, load_scenario

pytestmark = pytest.mark.browser

# A canvas whose picture is a function of the rAF time only; each frame also burns `work`
# iterations (times `slowdown` once the demo time passes `slow_after_s`), and at
# `hang_after_s` it loops for ever.
PAGE = """<!doctype html><html><head><meta charset="utf-8">
<style>html,body{margin:0;overflow:hidden;background:#102040}canvas{display:block}</style></head>
<body><canvas id="c" width="320" height="180"></canvas><script>
const WORK = %(work)d, SLOWDOWN = %(slowdown)d, SLOW_AFTER_S = %(slow_after_s)s, HANG_AFTER_S = %(hang_after_s)s;
const HOOK = '%(hook)s';     // '': none; 'clock': time from the rAF time; 'frames': 1/60 s per frame drawn
const g = document.getElementById('c').getContext('2d');
let start = null, sink = 0, frames = 0, now = 0;
if (HOOK) window.skyCityTest = { getState: () => ({ time: HOOK === 'frames' ? frames / 60 : now }) };
function frame(t) {
  if (start === null) start = t;
  const s = (t - start) / 1000;
  frames += 1; now = s;
  if (s >= HANG_AFTER_S) { for (;;) {} }
  const n = s >= SLOW_AFTER_S ? WORK * SLOWDOWN : WORK;
  for (let i = 0; i < n; i++) sink += Math.sqrt(i);
  g.fillStyle = '#102040'; g.fillRect(0, 0, 320, 180);
  g.fillStyle = '#ffcc33'; g.fillRect((s * 80) %% 300, 40 + 30 * Math.sin(s * 3), 20, 12);
  requestAnimationFrame(frame);
}
requestAnimationFrame(frame);
</script></body></html>"""


def page(work=200_000, slowdown=1, slow_after_s=1e9, hang_after_s=1e9, hook="") -> bytes:
    return (PAGE % {"work": work, "slowdown": slowdown, "slow_after_s": slow_after_s,
                    "hang_after_s": hang_after_s, "hook": hook}).encode()


def scenario(**timeouts):
    sc = load_scenario(None, {})
    for k, v in timeouts.items():
        setattr(sc.timeouts, k, v)
    return sc


async def _with_page(html: bytes, sc, body):
    from playwright.async_api import async_playwright

    with DemoServer(html) as srv:
        async with async_playwright() as pw:
            h = BrowserHandle(pw)
            await h.start()
            try:
                dp = await h.open_page(sc, srv.url, viewport=Viewport(width=320, height=240), fake_clock=True)
                try:
                    return await body(dp)
                finally:
                    await dp.close()
            finally:
                await h.kill()


def test_should_measure_the_frame_cost_and_wait_for_a_slow_page():
    async def body(dp):
        await dp.run_for(500)
        return dp.clock.to_json()

    log = asyncio.run(_with_page(page(), scenario(advance_base_s=2), body))
    assert len(log["frame_cost_samples_ms"]) == 5 and log["frame_cost_ms"] > 0
    assert log["advanced_s"] == pytest.approx(0.5, abs=0.002) and log["fine_s"] == log["advanced_s"]
    assert log["coarse_steps"] == 0                     # not picture_only: every frame rendered


def test_should_stop_a_page_whose_frames_slow_down_far_past_the_measured_cost_as_slow():
    async def body(dp):
        await dp.run_for(200)                            # cost measured at the normal rate
        t = time.monotonic()
        with pytest.raises(DemoSlow) as e:
            await dp.run_for(5000)                       # then every frame costs 40x that
        return str(e.value), time.monotonic() - t

    msg, took = asyncio.run(_with_page(page(work=100_000, slowdown=40, slow_after_s=0.3),
                                       scenario(advance_base_s=1, frame_cost_margin=1, hang_s=60), body))
    assert "slow" in msg and "frames kept coming" in msg and "per animation frame measured after load" in msg
    assert "hung" not in msg
    assert took < 120


def test_should_stop_a_page_that_loops_for_ever_as_hung_within_hang_s():
    async def body(dp):
        await dp.run_for(100)
        t = time.monotonic()
        with pytest.raises(DemoHang) as e:
            await dp.run_for(3000)
        return str(e.value), time.monotonic() - t

    msg, took = asyncio.run(_with_page(page(hang_after_s=0.5), scenario(hang_s=4, hang_frames=1, advance_base_s=600,
                                                                          frame_cost_margin=50), body))
    assert "hung: no animation frame for 4 s" in msg, msg
    assert took < 4 + 10                                 # hang_s plus a poll and the slack of a loaded machine


def test_should_reach_the_same_picture_in_coarse_steps_as_on_the_fine_clock():
    async def body(dp):
        await dp.seek(2.0, picture_only=True)
        return await dp.frame(), dp.clock.to_json()

    async def fine_body(dp):
        await dp.seek(2.0)
        return await dp.frame(), dp.clock.to_json()

    coarse_img, coarse = asyncio.run(_with_page(page(work=1000), scenario(coarse_above_ms=0.001), body))
    fine_img, fine = asyncio.run(_with_page(page(work=1000), scenario(coarse_above_ms=1e9), fine_body))
    assert coarse["coarse_steps"] > 0 and coarse["coarse_step_ms"] == 100
    assert fine["coarse_steps"] == 0
    # the demo draws from its rAF time only: the same time, the same picture
    assert np.array_equal(coarse_img, fine_img)
    assert coarse["demo_clock"].startswith("not checked")        # no hook on this page


def test_should_check_the_demos_clock_under_coarse_steps_and_halve_the_step_when_it_lagged():
    async def body(dp):
        await dp.seek(1.0, picture_only=True)
        await dp.seek(2.0, picture_only=True)
        return dp.clock.to_json()

    sc = scenario(coarse_above_ms=0.001)
    by_time = asyncio.run(_with_page(page(work=1000, hook="clock"), sc, body))
    per_frame = asyncio.run(_with_page(page(work=1000, hook="frames"), sc, body))
    assert all(c["kept_up"] for c in by_time["demo_clock_checks"])
    assert by_time["demo_clock"].startswith("kept up") and by_time["coarse_step_ms"] == 100
    # one frame per 100 ms step: a demo counting frames saw ~1/6 of the time
    first = per_frame["demo_clock_checks"][0]
    assert first["kept_up"] is False and first["demo_s"] < 0.5 * first["clock_s"]
    assert per_frame["demo_clock"].startswith("fell behind") and per_frame["coarse_step_ms"] == 25
