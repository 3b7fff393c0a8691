"""The autoplay fixtures are what they claim, read without the bench's probes: plain
Playwright on the bench's Chromium, real time, screenshots and the page's own listeners.

sparse_start.html   stands still before 1.5 s, then one small car moves along the main road;
                    the page listens to no input at all (it cannot be click-to-start).
click_to_start.html identical pictures while nobody clicks; moving widely after a click.
"""

from __future__ import annotations

import asyncio

import cv2
import numpy as np
import pytest

from skycity_bench.browser.launch import find_chromium
from skycity_bench.browser.server import DemoServer
from tests.truth import FIXTURES

pytestmark = pytest.mark.browser
BROKEN = FIXTURES / "broken"
FLAGS = [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORT = {"width": 640, "height": 360}
INPUT_EVENTS = {"click", "mousedown", "mouseup", "pointerdown", "pointerup", "touchstart", "keydown", "keyup"}


def _img(png: bytes) -> np.ndarray:
    return cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)


def _changed(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return cv2.absdiff(a, b).max(axis=2) > 24


async def _with_page(name: str, body):
    from playwright.async_api import async_playwright

    with DemoServer((BROKEN / name).read_bytes()) as server:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=str(find_chromium()[0]), args=FLAGS)
            try:
                page = await browser.new_page(viewport=VIEWPORT)
                await page.goto(server.url, wait_until="load")
                return await body(page)
            finally:
                await browser.close()


async def _listeners(page) -> set[str]:
    """Every event type listened for on window, document and each element (CDP)."""
    cdp = await page.context.new_cdp_session(page)
    types: set[str] = set()
    for expr in ("window", "document", "...document.querySelectorAll('*')"):
        arr = await cdp.send("Runtime.evaluate", {"expression": f"[{expr}]"})
        props = await cdp.send("Runtime.getProperties", {"objectId": arr["result"]["objectId"], "ownProperties": True})
        for p in props["result"]:
            if p["name"].isdigit():
                got = await cdp.send("DOMDebugger.getEventListeners", {"objectId": p["value"]["objectId"]})
                types |= {x["type"] for x in got["listeners"]}
    return types


def test_sparse_start_is_still_then_one_car_moves_and_nothing_listens_to_input():
    async def body(page):
        t0 = await page.evaluate("performance.now()")
        shots = {}
        for t in (0.3, 1.2, 2.2, 3.0):
            await asyncio.sleep(max(0.0, t - (await page.evaluate("performance.now()") - t0) / 1000))
            shots[t] = _img(await page.screenshot())
        return shots, await page.evaluate("window.__truth"), await _listeners(page)

    shots, truth, listeners = asyncio.run(_with_page("sparse_start.html", body))
    assert truth["firstCarS"] == 1.5
    assert not (listeners & INPUT_EVENTS), listeners
    k = VIEWPORT["width"] / 1280
    road = slice(int((truth["roadY"] - 8) * k), int((truth["roadY"] + 8) * k))
    # before the first car the road is empty (the lights sit beside it, the panel above it)
    assert not _changed(shots[0.3], shots[1.2])[road].any()
    # by 3 s a car moves along the road, small: well under 1 % of the picture
    moved = _changed(shots[2.2], shots[3.0])
    xs = np.nonzero(moved[road].any(axis=0))[0]
    assert xs.size and xs.max() - xs.min() >= 0.6 * truth["speedPx"] * k, xs
    assert moved.mean() < 0.01


def test_click_to_start_stands_still_until_a_click_and_moves_widely_after():
    async def body(page):
        a = _img(await page.screenshot())
        await asyncio.sleep(2.0)
        b = _img(await page.screenshot())
        await page.mouse.click(VIEWPORT["width"] / 2, VIEWPORT["height"] / 2)
        await asyncio.sleep(1.0)
        return a, b, _img(await page.screenshot())

    before, still, after = asyncio.run(_with_page("click_to_start.html", body))
    assert not _changed(before, still).any()
    assert _changed(still, after).mean() > 0.05
