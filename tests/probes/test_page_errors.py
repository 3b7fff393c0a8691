"""A demo whose callbacks throw keeps running under the fake clock, as in a browser: the
error is recorded (count, first message, when, the stack's first frame) and the advance is
not ended. The page below throws in every animation frame; its truth (it throws, it never
draws) is read from the page itself, not from the bench's probes."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from skycity_bench.browser.page_errors import ThrownLog, first_frame, page_thrown
from tests.probes.test_clock_budget import _with_page, scenario

pytestmark = pytest.mark.browser
THROWS = Path(__file__).resolve().parents[1] / "fixtures" / "broken" / "throws_every_frame.html"


def test_should_tell_the_demos_errors_from_the_bench_side_failures():
    assert page_thrown("Clock.run_for: TypeError: Math.smoothstep is not a function") is not None
    assert page_thrown("Clock.fast_forward: ReferenceError: x is not defined\n    at f (x.html:3:1)")
    assert page_thrown("Clock.run_for: Target page, context or browser has been closed") is None
    assert page_thrown("Timeout 30000ms exceeded.") is None
    assert first_frame("TypeError: boom\n    at frame (http://127.0.0.1/:28:22)") == "frame (http://127.0.0.1/:28:22)"


def test_thrown_logs_merge_by_first_time():
    a, b = ThrownLog(), ThrownLog()
    a.add("TypeError: late", 2.0)
    b.add("TypeError: early", 0.5)
    b.add("TypeError: last", 3.0)
    m = a.merged(b)
    assert m.count == 3 and m.first["message"] == "TypeError: early" and m.last_message == "TypeError: last"


def test_should_keep_advancing_a_page_that_throws_every_frame_and_record_the_error():
    async def body(dp):
        await dp.run_for(1000)
        await dp.seek(2.0, picture_only=True)
        frames = await dp.evaluate("performance.now()")
        img = await dp.frame()
        return dp.events.thrown.to_json(), frames, img

    thrown, now_ms, img = asyncio.run(_with_page(THROWS.read_bytes(), scenario(), body))
    assert thrown["count"] >= 2, thrown  # at least one per advance that ran a frame
    first = thrown["first"]
    assert "smoothstep" in first["message"] and first["frame"] and first["at_s"] <= 1.0
    assert now_ms >= 2000  # the clock went on to the time asked for
    # the page never drew: below the panel every pixel is the canvas's black
    assert int(np.asarray(img)[120:].max()) < 8
