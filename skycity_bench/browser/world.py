"""An ordinary browser to the page.

Every page the bench opens gets a CDP session of its own (`BenchWorld`) that does three
things before the demo's document exists:

- **User agent.** Chromium in headless mode says "HeadlessChrome" in navigator.userAgent and
  in the User-Agent header. `Emulation.setUserAgentOverride` puts the same string with
  "Chrome" in its place, *with* the browser's own user-agent client hints
  (`userAgentMetadata`, read once per browser from a throwaway secure page, so brands and
  fullVersionList are this Chromium's own): an override without metadata would empty
  navigator.userAgentData and the Sec-CH-UA headers, a tell of its own.
- **Main-world scripts** (`add_main`): what has to run where the page's own functions live
  (draw-call, media and clock wrappers, the t = 0 and error listeners: error events of page
  scripts are not delivered to other worlds). They keep their state in ONE lexical binding
  of the global scope (`const <name>` in cloak.js), not on `window`: a script-scope binding
  is no property of any object, so `Object.getOwnPropertyNames(window)`, `for…in` and
  friends never list it; its name is random per page (`_` + 12 hex digits), so page code
  cannot guess it either. Bench scripts and probe expressions write `__SKYCITY__`; `bind()`
  puts the page's name in. Scripts added through this session run after Playwright's own
  init scripts (its fake clock), in the order added.
- **An isolated world** (`add_isolated`, `evaluate_isolated`): a separate JavaScript world
  on the same DOM (the one Chrome extensions' content scripts use). Nothing defined there
  is visible to the page, and the page's overrides of DOM functions do not reach code
  running there, so bench code that only reads the DOM runs there.
- **WebSockets** are blocked by js/no_websocket.js (pointed at a closed loopback port) and
  each attempt reported to the network policy, instead of through Playwright's WebSocket
  routing, which replaces WebSocket with a JavaScript mock and defines four globals on
  window (`__pwWebSocketDispatch`, `__playwright__binding__`…). (CDP's
  Network.setBlockedURLs would need a Network agent on this session, which stalls pages
  that open popups.)
"""

from __future__ import annotations

import logging
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

NS_TOKEN = "__SKYCITY__"
UI_TOKEN = "__SKYCITY_UI_PX__"
# Height of the browser UI above the page (outerHeight - innerHeight) in an ordinary Chrome
# window; what this Chromium's own headless window reports when no viewport is emulated
# (chromium --headless --dump-dom of tests/fixtures/detection/detect.html: 580 - 493).
BROWSER_UI_PX = 87
WORLD_NAME = "skycity"

_HIGH_ENTROPY = [
    "architecture",
    "bitness",
    "brands",
    "fullVersionList",
    "mobile",
    "model",
    "platform",
    "platformVersion",
    "wow64",
    "formFactors",
]


@dataclass
class UserAgent:
    user_agent: str
    metadata: dict | None  # Emulation.UserAgentMetadata; None if the browser gave none


def _ordinary_brand(b: dict) -> dict:
    return {"brand": "Chromium" if "headless" in b["brand"].lower() else b["brand"], "version": b["version"]}


def ordinary_user_agent(user_agent: str, high_entropy: dict | None) -> UserAgent:
    """The user agent of the same Chromium without "Headless" anywhere, with its client hints."""
    ua = re.sub(r"HeadlessChrome/", "Chrome/", user_agent)
    if not high_entropy or not high_entropy.get("brands"):
        return UserAgent(ua, None)
    h = high_entropy
    meta = {
        "brands": [_ordinary_brand(b) for b in h["brands"]],
        "fullVersionList": [_ordinary_brand(b) for b in h.get("fullVersionList") or []],
        "platform": h.get("platform", ""),
        "platformVersion": h.get("platformVersion", ""),
        "architecture": h.get("architecture", ""),
        "model": h.get("model", ""),
        "mobile": bool(h.get("mobile")),
        "bitness": h.get("bitness", ""),
        "wow64": bool(h.get("wow64")),
    }
    if h.get("formFactors"):
        meta["formFactors"] = list(h["formFactors"])
    return UserAgent(ua, meta)


async def read_user_agent(browser) -> UserAgent | None:
    """This browser's user agent and client hints, from a throwaway page on a secure origin
    (loopback; the page is answered by a route, nothing reaches the network). About 0.1 s,
    once per browser process."""
    ctx = None
    try:
        ctx = await browser.new_context()
        await ctx.route(
            "**/*",
            lambda route: route.fulfill(status=200, content_type="text/html", body="<!doctype html><title>ua</title>"),
        )
        page = await ctx.new_page()
        await page.goto("http://127.0.0.1/skycity-ua", timeout=10_000)
        got = await page.evaluate(
            """async (keys) => ({ua: navigator.userAgent,
            hi: navigator.userAgentData ? await navigator.userAgentData.getHighEntropyValues(keys) : null})""",
            _HIGH_ENTROPY,
        )
        return ordinary_user_agent(got["ua"], got.get("hi"))
    except Exception as e:  # never fatal: the page then shows the plain headless agent
        log.warning("could not read the browser's user agent: %s", str(e).splitlines()[0] if str(e) else e)
        return None
    finally:
        if ctx is not None:
            try:
                await ctx.close()
            except Exception:
                pass


def blocked_websocket_url(url: str) -> str:
    """The URL a page asked for, from the dead-end URL no_websocket.js gave its WebSocket."""
    from urllib.parse import parse_qs, urlsplit

    parts = urlsplit(url)
    if parts.path == "/skycity-blocked":
        return (parse_qs(parts.query).get("u") or [url])[0]
    return url


class IsolatedEvalError(Exception):
    pass


class BenchWorld:
    """The bench's own CDP session on one page (see the module docstring)."""

    def __init__(self, cdp, ns: str):
        self.cdp = cdp
        self.ns = ns
        self._frame_id: str | None = None

    @classmethod
    async def attach(
        cls,
        context,
        page,
        *,
        user_agent: UserAgent | None,
        locale: str | None,
        on_websocket: Callable[[str], None] | None = None,
    ) -> BenchWorld:
        cdp = await context.new_cdp_session(page)
        world = cls(cdp, "_" + secrets.token_hex(6))
        await cdp.send("Page.enable")  # scripts for new documents only run with the agent on
        if on_websocket is not None:  # js/no_websocket.js points them at a dead end
            page.on("websocket", lambda ws: on_websocket(blocked_websocket_url(ws.url)))
        if user_agent is not None:
            params: dict[str, Any] = {"userAgent": user_agent.user_agent}
            if locale:
                params["acceptLanguage"] = locale  # the context's, which Playwright also sets
            if user_agent.metadata:
                params["userAgentMetadata"] = user_agent.metadata
            await cdp.send("Emulation.setUserAgentOverride", params)
        return world

    def bind(self, text: str) -> str:
        """Bench JavaScript with this page's namespace name in place of __SKYCITY__."""
        return text.replace(NS_TOKEN, self.ns).replace(UI_TOKEN, str(BROWSER_UI_PX))

    async def add_main(self, source: str) -> None:
        """Run `source` in the page's main world of every new document, before page scripts."""
        await self.cdp.send("Page.addScriptToEvaluateOnNewDocument", {"source": self.bind(source)})

    async def add_isolated(self, source: str) -> None:
        """Run `source` in the bench's isolated world of every new document, before page scripts."""
        await self.cdp.send(
            "Page.addScriptToEvaluateOnNewDocument", {"source": self.bind(source), "worldName": WORLD_NAME}
        )

    async def _context_id(self) -> int:
        if self._frame_id is None:
            tree = await self.cdp.send("Page.getFrameTree")
            self._frame_id = tree["frameTree"]["frame"]["id"]
        # Returns the world that add_isolated's scripts run in (same session, same name),
        # for the document the frame holds now.
        r = await self.cdp.send("Page.createIsolatedWorld", {"frameId": self._frame_id, "worldName": WORLD_NAME})
        return r["executionContextId"]

    async def evaluate_isolated(self, fn: str, arg: Any = None) -> Any:
        """Call the function source `fn` (or evaluate an expression) in the isolated world of
        the main frame; the result comes back as JSON."""
        # As Playwright's evaluate: the source is an expression; a function is called with arg.
        src = (
            "function (arg) { const v = (\n" + self.bind(fn) + "\n);\n  return typeof v === 'function' ? v(arg) : v; }"
        )
        r = await self.cdp.send(
            "Runtime.callFunctionOn",
            {
                "functionDeclaration": src,
                "executionContextId": await self._context_id(),
                "arguments": [{"value": arg}],
                "returnByValue": True,
                "awaitPromise": True,
            },
        )
        if "exceptionDetails" in r:
            d = r["exceptionDetails"]
            msg = (d.get("exception") or {}).get("description") or d.get("text") or "exception"
            raise IsolatedEvalError(msg.splitlines()[0])
        return r.get("result", {}).get("value")

    async def detach(self) -> None:
        try:
            await self.cdp.detach()
        except Exception:
            pass
