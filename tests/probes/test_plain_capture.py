"""DemoPage.frame() and clipped grabs (screenshot_png(clip=...)) take a plain CDP capture
(Chromium's fast PNG) where that shows what Playwright's screenshot shows: the same lossless
pixels, on a WebGL demo under the fake clock, whole and clipped (a clip partly outside the
viewport trimmed as Playwright trims it); a page where a caret could show (a focused text
field) falls back to Playwright's screenshot, which hides it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import cv2
import numpy as np

from skycity_bench.browser.server import DemoServer
from skycity_bench.browser.session import BrowserHandle
from skycity_bench.inputs.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "scenarios" / "demos" / "reference.html"
FOCUSED_INPUT = """<!doctype html><html><body style="margin:0;background:#234">
<canvas id="c" width="320" height="180"></canvas><input id="t" autofocus value="Sky City">
<script>
const g = document.getElementById('c').getContext('2d');
function f(t) { g.fillStyle = '#234'; g.fillRect(0, 0, 320, 180); g.fillStyle = '#fc0';
  g.fillRect((t / 10) % 300, 80, 20, 20); requestAnimationFrame(f); }
requestAnimationFrame(f); document.getElementById('t').focus();
</script></body></html>"""


CLIPS = [{"x": 100.5, "y": 50.25, "width": 200.4, "height": 120}, {"x": 560, "y": 300, "width": 200, "height": 100}]


def _playwright_frame(png: bytes) -> np.ndarray:
    return cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)


async def _capture_both(html: str, viewport: str):
    from playwright.async_api import async_playwright

    sc = load_scenario(None, {"viewport": viewport})
    with DemoServer(html.encode("utf-8")) as srv:
        async with async_playwright() as pw:
            handle = await BrowserHandle(pw).start()
            try:
                dp = await handle.open_page(sc, srv.url, fake_clock=True)
                await dp.run_for(1000)
                plain_ok = await dp._plain_capture_at(20.0) is not None
                ours = [await dp.frame()]
                theirs = [_playwright_frame(await dp.page.screenshot(type="png", scale="css", caret="hide"))]
                for clip in CLIPS:
                    ours.append(_playwright_frame(await dp.screenshot_png(clip=clip)))
                    theirs.append(
                        _playwright_frame(await dp.page.screenshot(type="png", scale="css", caret="hide", clip=clip))
                    )
                await dp.close()
                return plain_ok, ours, theirs
            finally:
                await handle.kill()


def test_plain_capture_matches_playwright_on_webgl():
    plain_ok, ours, theirs = asyncio.run(_capture_both(REFERENCE.read_text(encoding="utf-8"), "640x360"))
    assert plain_ok, "the reference demo focuses nothing editable: the plain capture must be used"
    assert ours[0].shape == theirs[0].shape == (360, 640, 3)
    assert ours[0].std() > 5, "a blank frame proves nothing"
    assert [o.shape for o in ours[1:]] == [(120, 200, 3), (60, 80, 3)]  # the second trimmed to the viewport
    for o, t in zip(ours, theirs):
        assert o.shape == t.shape and np.array_equal(o, t)


def test_focused_text_field_falls_back_to_playwright():
    plain_ok, ours, theirs = asyncio.run(_capture_both(FOCUSED_INPUT, "640x360"))
    assert not plain_ok, "a focused text field may show a caret: Playwright's screenshot (caret hidden) is used"
    for o, t in zip(ours, theirs):
        assert np.array_equal(o, t)
