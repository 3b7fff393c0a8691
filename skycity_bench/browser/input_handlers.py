"""Which key and click handlers a page has registered, read from the browser's own listener
table (DevTools' DOMDebugger.getEventListeners) rather than from anything the page says: on
the window, and on the document and every element in it (shadow roots included). Handlers
set as properties or attributes (`onkeydown = …`, `<button onclick>`) are in that table
too, so a page cannot hide one from the bench, and the bench's own instrumentation adds
none of these types (browser/js)."""

from __future__ import annotations

import contextlib
from typing import Any

KEY_EVENTS = frozenset({"keydown", "keyup", "keypress"})
# what a click or a tap on a control fires (hover's pointermove is not a control's)
CLICK_EVENTS = frozenset(
    {"click", "dblclick", "pointerdown", "pointerup", "mousedown", "mouseup", "touchstart", "touchend"}
)
_GROUP = "skycity-input-handlers"


async def input_handlers(dp) -> list[dict[str, Any]]:
    """[{on, type}] for every key or click handler on the page now, `on` saying where it was
    found (`window`, or `document`: the document or an element in it). A hung page raises
    DemoHang from `dp.call`, as any call does."""
    cdp = await dp.call(dp.context.new_cdp_session(dp.page), 10, "opening a CDP session")
    try:
        found = await _on(dp, cdp, "window", {})
        found += await _on(dp, cdp, "document", {"depth": -1, "pierce": True})
        await dp.call(cdp.send("Runtime.releaseObjectGroup", {"objectGroup": _GROUP}), 5, "releasing handler reads")
        return found
    finally:
        with contextlib.suppress(Exception):  # a closed or crashed page has no session to end
            await cdp.detach()


async def _on(dp, cdp, expression: str, scope: dict) -> list[dict[str, Any]]:
    got = await dp.call(
        cdp.send("Runtime.evaluate", {"expression": expression, "objectGroup": _GROUP}), 5, f"reading {expression}"
    )
    res = await dp.call(
        cdp.send("DOMDebugger.getEventListeners", {"objectId": got["result"]["objectId"], **scope}),
        10,
        f"listing {expression}'s handlers",
    )
    wanted = KEY_EVENTS | CLICK_EVENTS
    return [{"on": expression, "type": x["type"]} for x in res["listeners"] if x["type"] in wanted]
