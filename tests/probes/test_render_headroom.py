"""The machine's rendering headroom (browser/render_headroom.py) on real Chromium: the
standard scene is played at the asked viewport for the scenario's headroom_s, and the 60 Hz
rule is the scenario's (figures are real time: only the rule's decision on them is checked,
with rules no machine can miss or meet)."""

from __future__ import annotations

import asyncio

import pytest

from skycity_bench.browser.render_headroom import headroom, largest_viewport
from skycity_bench.browser.session import BrowserHandle
from skycity_bench.inputs.scenario import Viewport, load_scenario

pytestmark = pytest.mark.browser


def _scenario(**cal):
    sc = load_scenario(None, {})
    sc.calibration.headroom_s = 1.0
    for k, v in cal.items():
        setattr(sc.calibration, k, v)
    return sc


async def _with_handle(body):
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        h = await BrowserHandle(pw).start()
        try:
            return await body(h)
        finally:
            await h.kill()


def test_should_play_the_standard_scene_at_the_viewport_and_judge_it_by_the_scenarios_rule():
    vp = Viewport(width=320, height=240)

    async def body(h):
        loose = await headroom(h, _scenario(headroom_p95_ms=10_000, headroom_late_share=1.0), vp)
        strict = await headroom(h, _scenario(headroom_p95_ms=1.0), vp)
        return loose, strict

    loose, strict = asyncio.run(_with_handle(body))
    assert loose["viewport"] == "320x240" and loose["frames"] >= 5 and loose["p95_ms"] > 0
    assert loose["holds_60hz"] is True and strict["holds_60hz"] is False
    assert "P95 ≤ 1 ms" in strict["rule"]


def test_should_name_the_largest_viewport_that_held_and_none_when_none_did():
    async def body(h):
        sizes = [(320, 240), (480, 270)]
        ok = await largest_viewport(
            h, _scenario(headroom_viewports=sizes, headroom_p95_ms=10_000, headroom_late_share=1.0)
        )
        none = await largest_viewport(h, _scenario(headroom_viewports=sizes, headroom_p95_ms=1.0))
        return ok, none

    (rows, best), (_, nobest) = asyncio.run(_with_handle(body))
    assert [r["viewport"] for r in rows] == ["320x240", "480x270"] and best == "480x270"
    assert nobest is None
