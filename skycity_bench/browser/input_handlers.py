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
MAX_NAMED = 20  # elements named by a DevTools call each; a page with hundreds needs no more


async def input_handlers(dp) -> list[dict[str, Any]]:
    """[{on, type, target}] for every key or click handler on the page now: `on` where it was
    found (`window`, or `document`: the document or an element in it), `target` the node it
    is on (`window`, `document`, or an element as `tag#id`; the first MAX_NAMED elements
    named, later ones `element`). A hung page raises DemoHang from `dp.call`, as any call does."""
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
    found = [x for x in res["listeners"] if x["type"] in wanted]
    names: dict[int, str] = {}
    for x in found:
        node = x.get("backendNodeId")
        if node is not None and node not in names and len(names) < MAX_NAMED:
            names[node] = await _node_name(dp, cdp, node)
    # a listener on the window has no node: its target is the window
    return [
        {"on": expression, "type": x["type"], "target": names.get(x["backendNodeId"], "element")}
        if "backendNodeId" in x
        else {"on": expression, "type": x["type"], "target": expression}
        for x in found
    ]


async def _node_name(dp, cdp, node: int) -> str:
    """`document`, or an element as its tag and id (`canvas#sky`)."""
    got = await dp.call(cdp.send("DOM.describeNode", {"backendNodeId": node}), 5, "naming a handler's element")
    n = got["node"]
    if n.get("nodeType") == 9:
        return "document"
    attrs = n.get("attributes") or []
    ids = [attrs[i + 1] for i in range(0, len(attrs) - 1, 2) if attrs[i] == "id"]
    tag = n.get("localName") or n.get("nodeName", "element").lower()
    return tag + (f"#{ids[0]}" if ids and ids[0] else "")
