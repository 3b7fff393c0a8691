"""Hover and touch, shop by shop (items shops.hover, shops.card_placement, shops.touch).

At hover times outside the automatic-display window the real mouse (page.mouse) moves onto a
shop's point, a few frames pass on the fake clock, and the DOM says whether a card showed and
which shops its text names; then the pointer leaves and the probe times how long the card
takes to go (watched for close_watch_ms). A card that stayed open makes the next shop start
on a fresh page, so one shop's fault is not charged to the next. Touch repeats the opening
half in a has_touch + is_mobile context with page.touchscreen.tap.

Raw figures only (names in the card, when it was gone, placement and contrast figures, the
changed regions of a canvas-drawn card, the hook's getActiveCard() answers): whether the
content matches, the card closed in time, sits near enough or reads well, is judged in
scorers/shops.py.
"""

from __future__ import annotations

import math

from skycity_bench.probes.shops.dom_cards import shop_cards
from skycity_bench.probes.shops.follow import Follow
from skycity_bench.probes.shops.shop_page import ShopPage, card_union, joined_text
from skycity_bench.probes.shops.shop_pixels import canvas_change_figures, composite, contrast_ratio, pixel_contrast


def placement(cards: list[dict], point: dict, grabbed, size: tuple[int, int]) -> dict:
    """Where the card sits and how readable it is, as figures: its box and the viewport's
    size (the scorer checks it lies inside), distance from the shop point to the nearest
    point of the card, smallest text size, lowest WCAG contrast (computed styles where they
    tell, else measured on the screenshot)."""
    w, h = size
    r = card_union(cards)
    assert r is not None, "placement is asked for the cards that opened"
    x0, y0, x1, y1 = r[0], r[1], r[0] + r[2], r[1] + r[3]
    dx = max(x0 - point["x"], 0, point["x"] - x1)
    dy = max(y0 - point["y"], 0, point["y"] - y1)
    dist = math.hypot(dx, dy)
    texts = []
    for c in cards:
        for t in c.get("texts", []):
            con = None
            if t.get("backdrop") is not None and t.get("color") and t.get("opacity", 1) >= 0.999:
                fg = composite(t["color"], 1.0, t["backdrop"])
                con = {
                    "ratio": round(contrast_ratio(fg, t["backdrop"]), 2),
                    "method": "computed styles",
                    "fg": [round(v) for v in fg],
                    "bg": [round(v) for v in t["backdrop"]],
                }
            elif grabbed is not None:
                img, (ox, oy) = grabbed
                con = pixel_contrast(img, [t["rect"][0] - ox, t["rect"][1] - oy, t["rect"][2], t["rect"][3]])
            texts.append({"text": t["text"][:40], "font_px": t.get("font_px"), "contrast": con})
    fonts = [t["font_px"] for t in texts if t["font_px"]]
    ratios = [t["contrast"]["ratio"] for t in texts if t["contrast"]]
    return {
        "rect": [round(v, 1) for v in r],
        "viewport": [w, h],
        "distance_px": round(dist, 1),
        "distance_ratio": round(dist / math.hypot(w, h), 4),
        "min_font_px": min(fonts) if fonts else None,
        "min_contrast": min(ratios) if ratios else None,
        "texts": texts[:12],
    }


async def _fresh(pg: ShopPage, times: list[float]) -> None:
    await pg.open()
    if times:
        # Only the moment matters, not the frames before it: coarse steps on a slow renderer,
        # and on a fast one whose clock is checked (DemoPage.seek).
        await pg.dp.seek(times[0], picture_only=True)


async def _point_of(pg, shop_id, needed, s) -> tuple:
    """The shop's point at the next free hover time, or None; maybe the previous shops used up
    every slot, so one fresh page before giving up. Returns (point, fresh pages opened)."""
    p = await _at_hover_time(pg, shop_id, needed)
    if p is not None:
        return p, 0
    await _fresh(pg, s.hover_times_s)
    return await _at_hover_time(pg, shop_id, needed), 1


async def _at_hover_time(pg: ShopPage, shop_id: str, needed_s: float) -> dict | None:
    """Go to the next hover time (or stay, when the current moment is still one) at which the
    whole hover lies outside the automatic window and the shop's point is on screen; its
    position then, or None."""
    a, b = pg.s.auto_window_s
    for t in pg.s.hover_times_s:
        now = await pg.dp.now_s()
        start = max(t, now)
        if start < b and start + needed_s > a:
            continue  # would overlap the automatic-display window
        if start > now:
            await pg.dp.seek(start, picture_only=True)
        p = (await pg.shops_now()).get(shop_id)
        if pg.in_view(p):
            return p
    return None


async def _wait_card(pg: ShopPage, shops: list[dict], fol: Follow | None = None) -> tuple[list[dict], float | None]:
    """Cards after settle_ms; when none yet, once more at close_watch_ms (a short hover
    delay is a design choice, not a fault). Returns (cards, the ms at which they were read).
    With `fol`, the pointer follows the shop while the clock runs (a hover must hold)."""
    s = pg.s

    async def wait(ms: float) -> None:
        await (fol.run(ms) if fol is not None else pg.dp.run_for(ms))

    await wait(s.settle_ms)
    cards = await pg.read(shops, settle_css=True)
    if cards:
        return cards, s.settle_ms
    if s.close_watch_ms > s.settle_ms:
        await wait(s.close_watch_ms - s.settle_ms)
        cards = await pg.read(shops, settle_css=True)
        if cards:
            return cards, s.close_watch_ms
    return cards, None


async def hover_phase(ctx, shops: list[dict]) -> dict:
    """Each shop hovered in turn with the real mouse (the module docstring): {"per_shop": one
    record of raw figures per shop, "resets": the fresh pages opened on the way}."""
    s = ctx.settings
    pg = ShopPage(ctx)
    await _fresh(pg, s.hover_times_s)
    needed = (s.step_ms + s.settle_ms + 3 * s.close_watch_ms) / 1000  # the whole hover, canvas check included
    per_shop, resets = [], 0
    try:
        for shop in shops:
            res = {"id": shop["id"], "name": shop["name"], "opened": False}
            per_shop.append(res)
            resets += await _hover_shop(pg, shop, shops, needed, res)
    finally:
        await pg.close()
    return {"per_shop": per_shop, "resets": resets}


async def _hover_shop(pg: ShopPage, shop: dict, shops: list[dict], needed: float, res: dict) -> int:
    """One shop's hover, its figures into `res`: the card it opened (or what changed on a
    canvas), and when the card went after the pointer left. Returns the fresh pages opened."""
    s = pg.s
    p, resets = await _point_of(pg, shop["id"], needed, s)
    if p is None:
        res.update(opened=None, reason="the shop's point was never inside the viewport at the hover times")
        return resets
    away = pg.away_point(list((await pg.shops_now()).values()) or shops)
    p, hovered_img, zone = await _hover_open(pg, shop, shops, p, away, res)
    gone_at, still = await _watch_close(pg, shop, shops, away, res)
    res["hook_active_card_closed"] = await pg.active_card()
    if res["opened"]:
        # None: still showing after the whole watch (close_watch_ms)
        res["closed_after_ms"] = gone_at
        res["close_watched_ms"] = round(s.close_watch_ms)
    else:
        res["canvas_card"] = await _canvas_check(pg, hovered_img, zone, p, shop["id"])
    if res["opened"] and gone_at is None:
        res["screenshot_stayed_open"] = await pg.crop(
            f"hover-{_safe(shop['id'])}-after-leave", [c["rect"] for c in still], mark=(p["x"], p["y"])
        )
        await _fresh(pg, s.hover_times_s)  # a stuck card must not be charged to the next shop
        resets += 1
    return resets


async def _hover_open(pg: ShopPage, shop: dict, shops: list[dict], p: dict, away, res: dict) -> tuple:
    """The pointer away, then onto the shop, following it while the card is awaited; what
    opened into `res`. Returns (the shop's point the pointer went to, and, when no DOM card
    opened, the picture of the zone round it while hovered and that zone, else None, None)."""
    s = pg.s
    await pg.dp.page.mouse.move(*away)
    await pg.dp.run_for(s.step_ms)
    await pg.cards.base()
    t_hover = await pg.dp.now_s()
    # The pointer follows the shop while the card is awaited: the camera may carry the shop
    # away from where it was when the pointer arrived. It starts where the shop is now (the
    # clock ran on while the pointer went away).
    p = (await pg.shops_now()).get(shop["id"]) or p
    fol = Follow(pg, shop["id"], shops, cards=False, pixels=False)
    await fol.begin(p)
    cards, res["opened_within_ms"] = await _wait_card(pg, shops, fol)
    res["follow"] = fol.summary()
    p_now = (await pg.shops_now()).get(shop["id"]) or p
    res["hovered"] = {"x": round(p["x"], 1), "y": round(p["y"], 1), "t_s": round(t_hover, 3), "away": away}
    res["hook_active_card_open"] = await pg.active_card()
    if cards:
        named = sorted({i for c in cards for i in c["names"]})
        res.update(opened=True, text=joined_text(cards), names_in_card=named)
        rects = [c["rect"] for c in cards]
        grabbed = await pg.grab(pg.region(rects, (p_now["x"], p_now["y"])))
        res["placement"] = placement(cards, p_now, grabbed, pg.size)
        res["screenshot_open"] = await pg.crop(
            f"hover-{_safe(shop['id'])}-open", rects, mark=(p_now["x"], p_now["y"]), grabbed=grabbed
        )
        return p, None, None
    others = await pg.read_all()
    if others:
        res["unnamed_changes"] = [c["text"][:80] for c in others[:5]]
    zone = _zone(pg, p)
    return p, await pg.grab(zone), zone


async def _watch_close(pg: ShopPage, shop: dict, shops: list[dict], away, res: dict) -> tuple[int | None, list[dict]]:
    """Leave, and watch the card go (the in-page sampler times it to step_ms): (ms after
    leaving at which it was gone, or None: still open after close_watch_ms; the cards read
    at the end)."""
    s = pg.s
    await pg.dp.page.mouse.move(*away)
    t_leave = await pg.dp.now_s()
    await pg.cards.start(s.step_ms)
    await pg.dp.run_for(s.close_watch_ms)
    raw = await pg.cards.take()
    await pg.cards.stop()
    gone_at = next(
        (
            round((t - t_leave) * 1000)
            for t, cs in raw
            if t > t_leave + 1e-6 and not _still_open(shop_cards({"cards": cs}, shops), shop, res)
        ),
        None,
    )
    still = await pg.read(shops, settle_css=gone_at is None)
    if gone_at is None and not _still_open(still, shop, res):
        gone_at = round(s.close_watch_ms)  # a CSS fade that ended in real time
        res["closed_after_css_transition"] = True
    return gone_at, still


def _still_open(cards: list[dict], shop: dict, res: dict) -> bool:
    """A card that opened for this hover is still there: one naming this shop, or naming the
    same shops the opened card named."""
    named = set(res.get("names_in_card") or []) | {shop["id"]}
    return any(set(c["names"]) & named for c in cards)


def _zone(pg: ShopPage, p: dict) -> list[int] | None:
    """The box around this shop in which a canvas-drawn card is looked for (canvas_search_ratio
    of the diagonal)."""
    w, h = pg.size
    r = pg.s.canvas_search_ratio * math.hypot(w, h)
    return pg.region([[p["x"] - r, p["y"] - r, 2 * r, 2 * r]], pad=0)


async def _canvas_check(pg: ShopPage, hovered, zone, p: dict, shop_id: str) -> dict:
    """No DOM card: was one drawn on the canvas? The change between the hovered frame and the
    frame after leaving (a drawn card vanishes) against the change over an equal stretch with
    no input (scene motion alone). Only the zone around the shop is compared. Figures only
    (scorers/shops.py decides whether they look like a card); the crop is taken whenever the
    hover changed anything, so a reviewer can see it either way."""
    after = await pg.grab(zone)
    await pg.dp.run_for(pg.s.close_watch_ms)
    later = await pg.grab(zone)
    if hovered is None or after is None or later is None:
        return {"compared": False, "note": "no pixels to compare"}
    ev = {"compared": True, **canvas_change_figures(later[0], after[0], hovered[0], level=pg.s.canvas_diff_level)}
    ox, oy = zone[0], zone[1]
    for k in ("across_hover", "scene_motion"):
        r = ev[k]["rect"]
        if r:
            ev[k]["rect"] = [r[0] + ox, r[1] + oy, r[2], r[3]]
    r = ev["across_hover"]["rect"]
    if r:
        w, h = pg.size
        ev["distance_ratio"] = round(
            math.hypot(r[0] + r[2] / 2 - p["x"], r[1] + r[3] / 2 - p["y"]) / math.hypot(w, h), 4
        )
        ev["screenshot"] = await pg.crop(f"hover-{_safe(shop_id)}-canvas", [r], mark=(p["x"], p["y"]), grabbed=hovered)
    return ev


def _safe(s: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in s)[:40]


async def touch_phase(ctx, shops: list[dict]) -> dict:
    s = ctx.settings
    pg = ShopPage(ctx, touch=True)
    await _fresh(pg, s.hover_times_s)
    needed = (s.step_ms + s.settle_ms + 3 * s.close_watch_ms) / 1000  # the whole hover, canvas check included
    per_shop, resets = [], 0
    try:
        inner = await pg.dp.evaluate("[innerWidth, innerHeight, 'ontouchstart' in window, navigator.maxTouchPoints]")
        for shop in shops:
            res = {"id": shop["id"], "opened": False}
            per_shop.append(res)
            p, fresh = await _point_of(pg, shop["id"], needed, s)
            resets += fresh
            if p is None:
                res.update(opened=None, reason="never on screen at the hover times")
                continue
            await pg.cards.base()
            await pg.dp.page.touchscreen.tap(p["x"], p["y"])
            cards, res["opened_within_ms"] = await _wait_card(pg, shops)
            res["tapped"] = {"x": round(p["x"], 1), "y": round(p["y"], 1), "t_s": round(await pg.dp.now_s(), 3)}
            if cards:
                named = sorted({i for c in cards for i in c["names"]})
                res.update(opened=True, text=joined_text(cards), names_in_card=named)
                res["screenshot"] = await pg.crop(
                    f"touch-{_safe(shop['id'])}", [c["rect"] for c in cards], mark=(p["x"], p["y"])
                )
            res["hook_active_card"] = await pg.active_card()
            # Tap somewhere empty to dismiss; a card that stays would blur the next shop's test.
            await pg.dp.page.touchscreen.tap(*pg.away_point(list((await pg.shops_now()).values()) or shops))
            await pg.dp.run_for(s.close_watch_ms)
            if await pg.read(shops):
                await _fresh(pg, s.hover_times_s)
                resets += 1
    finally:
        await pg.close()
    return {
        "per_shop": per_shop,
        "resets": resets,
        "page": {"inner_size": inner[:2], "ontouchstart": inner[2], "max_touch_points": inner[3]},
    }


__all__ = ["hover_phase", "touch_phase", "placement"]
