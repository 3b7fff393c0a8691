"""The broken-page fixtures are what they claim, read without the bench's probes: plain
Playwright on the bench's Chromium, real time, screenshots, the page's own errors and DOM.

throws_at_load.html         exactly one page error, at load; the canvas keeps changing; the
                            hook and the cards work.
never_resolves_module.html  a module-resolution error for the unmapped addons specifier;
                            the module never ran: no canvas, no hook, only the panel.
draws_once_freezes.html     a non-blank city, identical at 1 s and 3 s; one page error.
hook_lies_shops.html        the hook lists six shops; hovering each listed point shows no
                            card, hovering a drawn shop shows that shop's own card.

Requests leaving the loopback origin are aborted (tests never reach the internet); none of
these pages needs one to show what it claims.
"""

from __future__ import annotations

import asyncio

import cv2
import numpy as np
import pytest
from playwright.async_api import ConsoleMessage, ViewportSize

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
VIEWPORT: ViewportSize = {"width": 960, "height": 540}
CARD_WAIT_S = 0.25  # a card follows the pointer on the next animation frame


def _img(png: bytes) -> np.ndarray:
    img = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
    assert img is not None
    return np.asarray(img)


def _changed_share(a: np.ndarray, b: np.ndarray) -> float:
    return float((cv2.absdiff(a, b).max(axis=2) > 24).mean())


async def _with_page(name: str, body):
    """Open the fixture on a loopback server; `body(page, errors)` gets the page and the list
    that collects its uncaught errors and console errors as they come."""
    from playwright.async_api import async_playwright

    with DemoServer((BROKEN / name).read_bytes()) as server:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=str(find_chromium()[0]), args=FLAGS)
            try:
                page = await browser.new_page(viewport=VIEWPORT)
                errors: list[str] = []

                def thrown(e: Exception) -> None:
                    errors.append(f"pageerror: {e}")

                def console(m: ConsoleMessage) -> None:
                    if m.type == "error":
                        errors.append(f"console: {m.text}")

                page.on("pageerror", thrown)
                page.on("console", console)

                async def local_only(route):
                    if route.request.url.startswith(server.origin):
                        await route.continue_()
                    else:
                        await route.abort()

                await page.route("**/*", local_only)
                await page.goto(server.url, wait_until="load")
                return await body(page, errors)
            finally:
                await browser.close()


async def _at(page, t0: float, t: float) -> None:
    """Sleep until `t` seconds after `t0` on the page's clock (performance.now, ms)."""
    now = await page.evaluate("performance.now()")
    await asyncio.sleep(max(0.0, t - (now - t0) / 1000))


async def _card(page) -> str | None:
    """The shop card's text when it is shown, else None."""
    return await page.evaluate(
        "(() => { const c = document.getElementById('card');"
        " return c && getComputedStyle(c).display !== 'none' ? c.innerText : null; })()"
    )


def test_throws_at_load_throws_once_then_animates_with_a_working_hook():
    async def body(page, errors):
        t0 = await page.evaluate("performance.now()")
        await _at(page, t0, 0.8)
        a = _img(await page.screenshot())
        await _at(page, t0, 1.3)
        b = _img(await page.screenshot())
        hook = await page.evaluate(
            "(() => { const h = window.skyCityTest; return {shops: h.getShops(),"
            " objects: h.getDynamicObjects(), state: h.getState()}; })()"
        )
        s = hook["shops"][0]
        await page.mouse.move(s["x"], s["y"])
        await asyncio.sleep(CARD_WAIT_S)
        card = await _card(page)
        await _at(page, t0, 2.5)
        return list(errors), a, b, hook, card, s, await page.evaluate("window.__fixtureTruth")

    errors, a, b, hook, card, shop, truth = asyncio.run(_with_page("throws_at_load.html", body))
    assert len(errors) == 1 and "pageerror" in errors[0] and "textContent" in errors[0], errors
    assert _changed_share(a, b) > 0.002  # the movers moved between the two shots
    assert len(hook["shops"]) == truth["shops"] == 6
    assert len(hook["objects"]) == truth["movers"] == 72
    assert len({o["category"] for o in hook["objects"]}) == truth["categories"] == 4
    assert hook["state"]["time"] > 0.3 and not hook["state"]["paused"]
    assert card is not None and shop["name"] in card


def test_never_resolves_module_fails_at_resolution_and_never_draws():
    async def body(page, errors):
        t0 = await page.evaluate("performance.now()")
        await _at(page, t0, 1.5)
        facts = await page.evaluate(
            "({canvases: document.querySelectorAll('canvas').length, hook: typeof window.skyCityTest,"
            " ran: window.__moduleRan === true, truth: window.__fixtureTruth})"
        )
        return list(errors), facts, _img(await page.screenshot())

    errors, facts, img = asyncio.run(_with_page("never_resolves_module.html", body))
    unresolved = [e for e in errors if "resolve module specifier" in e and "three/addons" in e]
    assert unresolved, errors
    assert facts["truth"]["mapped"] == ["three"]
    assert facts["canvases"] == 0 and facts["hook"] == "undefined" and not facts["ran"]
    below_panel = img[80:].astype(int)
    assert int(np.abs(below_panel - below_panel[0, 0]).max()) < 4  # one flat colour: nothing drawn


def test_draws_once_freezes_shows_one_city_frame_forever():
    async def body(page, errors):
        t0 = await page.evaluate("performance.now()")
        await _at(page, t0, 1.0)
        a = _img(await page.screenshot())
        await _at(page, t0, 3.0)
        b = _img(await page.screenshot())
        claims = await page.evaluate("window.skyCityTest.getDynamicObjects().length")
        return list(errors), a, b, claims

    errors, a, b, claims = asyncio.run(_with_page("draws_once_freezes.html", body))
    assert len(errors) == 1 and "advance" in errors[0], errors  # frame 2's traffic update
    assert float(a.astype(float).std()) > 20  # a city, not a blank canvas
    assert len(np.unique(a.reshape(-1, 3), axis=0)) > 50
    assert int(cv2.absdiff(a, b).max()) == 0  # not one pixel changed from 1 s to 3 s
    assert claims == 72  # the hook still claims its movers


def test_hook_lies_shops_lists_six_points_where_no_card_opens():
    async def body(page, errors):
        t0 = await page.evaluate("performance.now()")
        await _at(page, t0, 0.5)
        listed = await page.evaluate("window.skyCityTest.getShops()")
        truth = await page.evaluate("window.__fixtureTruth")
        at_listed = []
        for s in listed:
            await page.mouse.move(s["x"], s["y"])
            await asyncio.sleep(CARD_WAIT_S)
            at_listed.append(await _card(page))
        at_drawn = []
        for s in truth["shops"]:
            await page.mouse.move(s["fx"] * VIEWPORT["width"], s["fy"] * VIEWPORT["height"])
            await asyncio.sleep(CARD_WAIT_S)
            at_drawn.append(await _card(page))
        a = _img(await page.screenshot())
        await asyncio.sleep(0.4)
        b = _img(await page.screenshot())
        return listed, truth, at_listed, at_drawn, a, b, list(errors)

    listed, truth, at_listed, at_drawn, a, b, errors = asyncio.run(_with_page("hook_lies_shops.html", body))
    assert len(listed) == len(truth["shops"]) == 6 and not errors
    for s, card in zip(listed, at_listed, strict=True):
        assert card is None or s["name"] not in card, (s, card)
    for s, card in zip(truth["shops"], at_drawn, strict=True):
        assert card is not None and s["name"] in card, (s, card)
    assert _changed_share(a, b) > 0.002  # a working, animated city
