"""Automatic display and manual priority (items shops.auto_display, shops.manual_priority).

Automatic display: a fresh page, no input at all, the fake clock stepped through the window
(15–40 s) every sample_interval_ms; each stretch in which a card naming one shop shows is an
interval {shop_id, start_s, end_s}. start_s is the first sample it was seen, end_s the first
sample it was no longer seen, so durations are exact to one sample interval.

Manual priority: another fresh page, the clock taken to a moment when an automatic card was
seen, the real mouse onto a different shop, then manual_hold_s of fake-clock steps during
which the pointer follows the shop (follow.py: the hook's position each step, small
real mouse moves). Each step records the cards showing, what is under the pointer, how far
the shop got from it and whether the pixels moved with the hook's point; the scorer decides
from that record whether the user's card answered in time and held, and when
it was lost, why (scorers/shops.py, Manual).
"""

from __future__ import annotations

from typing import Any

from skycity_bench.probes.shops.dom_cards import shop_cards
from skycity_bench.probes.shops.follow import Follow
from skycity_bench.probes.shops.shop_page import ShopPage, card_union, joined_text


def intervals_from(samples: list[tuple[float, list[dict]]], shops: list[dict], end_s: float) -> tuple[list, list]:
    """(intervals, timeline) from card samples: an interval is a run of samples showing cards
    that name exactly one shop (the same one); it ends at the first sample without it."""
    intervals: list[dict[str, Any]] = []
    timeline: list[list[Any]] = []
    cur: dict[str, Any] | None = None
    for t, cards in samples:
        named = shop_cards({"cards": cards}, shops)
        who = sorted({c["shop"] for c in named})
        sid = who[0] if len(who) == 1 else ("ambiguous" if who else None)
        if not timeline or timeline[-1][1] != sid:
            timeline.append([t, sid])
        if cur is not None and cur["shop_id"] != sid:
            cur["end_s"] = t
            cur = None
        if sid is not None and cur is None:
            cur = {
                "shop_id": sid,
                "start_s": t,
                "end_s": None,
                "text": joined_text(named),
                "rect": card_union(named),
                "names_in_card": sorted({i for c in named for i in c["names"]}),
            }
            intervals.append(cur)
    if cur is not None:
        cur["end_s"] = end_s
        cur["clipped_end"] = True
    first = samples[0][0] if samples else None
    for iv in intervals:
        iv["duration_s"] = round(iv["end_s"] - iv["start_s"], 3)
        iv["clipped_start"] = iv["start_s"] == first
        iv.setdefault("clipped_end", False)
    return intervals, timeline


async def auto_phase(ctx, shops: list[dict]) -> dict:
    s = ctx.settings
    a, b = s.auto_window_s
    step = s.sample_interval_ms
    pg = ShopPage(ctx)
    await pg.open()
    samples: list = []
    shots: dict[int, dict] = {}
    try:
        # Only the picture at the window's start matters, not every frame before it: a slow
        # renderer may get there in coarse clock steps (browser/clock_budget.py).
        await pg.dp.seek(a, picture_only=True)
        t = await pg.dp.now_s()
        await pg.cards.start(step)
        # Chunks of a second: after each, a card that is still showing gets its screenshot.
        while t < b - 1e-6:
            ms = min(1000.0, (b - t) * 1000)
            await pg.dp.run_for(ms)
            t += ms / 1000
            samples += await pg.cards.take()
            ivs, _ = intervals_from(samples, shops, t)
            if ivs and ivs[-1].get("clipped_end") and len(ivs) - 1 not in shots and len(shots) < s.max_auto_intervals:
                now = await pg.read(shops)
                if now:
                    k = len(ivs) - 1
                    shots[k] = {
                        "screenshot": await pg.crop(f"auto-{k + 1:02d}-{ivs[-1]['shop_id']}", [c["rect"] for c in now]),
                        "hook_active_card": await pg.active_card(),
                        "screenshot_t_s": round(t, 3),
                    }
        await pg.cards.stop()
    finally:
        await pg.close()
    step_s = step / 1000
    samples = [x for x in samples if x[0] <= b + 1e-6]
    intervals, timeline = intervals_from(samples, shops, round(b + step_s, 3))
    for k, extra in shots.items():
        if k < len(intervals):
            intervals[k].update(extra)
    return {
        "window_s": [a, b],
        "sample_interval_ms": step,
        "samples": len(samples),
        "samples_expected": int(round((b - a) * 1000 / step)) + 1,
        "intervals": intervals,
        "timeline": timeline[:400],
    }


def _pick(intervals: list[dict], shops: list[dict], hover: list[dict], min_s: float) -> tuple[dict, dict] | None:
    """An automatic interval to interrupt and a different shop to hover, preferring shops whose
    hover opened a card, so the hover's own card is known. Intervals shorter than min_s
    (manual_min_auto_s) are left alone."""
    ok = {h["id"]: h for h in hover if h.get("opened")}
    for iv in intervals:
        if iv["shop_id"] in (None, "ambiguous") or iv["duration_s"] < min_s:
            continue
        for pref in (True, False):
            for sh in shops:
                h = ok.get(sh["id"])
                if sh["id"] == iv["shop_id"] or (pref and h is None):
                    continue
                if h is not None and iv["shop_id"] in (h.get("names_in_card") or []):
                    continue  # its hover card names the automatic shop: the two could not be told apart
                return iv, sh
    return None


async def manual_phase(ctx, shops: list[dict], auto: dict, hover: list[dict]) -> dict:
    """A different shop hovered while an automatic card shows (_pick), the pointer held on it
    for manual_hold_s: which cards showed at each step, as raw figures with evidence crops
    (whether the hover won is judged in scorers/_shop_manual_priority.py)."""
    s = ctx.settings
    pick = _pick(auto["intervals"], shops, hover, s.manual_min_auto_s)
    if pick is None:
        return {
            "tested": False,
            "reason": "no automatic card was seen in the window, so there was nothing for a hover to win against"
            if not auto["intervals"]
            else "no automatic card with a shop another shop's hover could be told apart from",
        }
    iv, user = pick
    h = {x["id"]: x for x in hover}.get(user["id"], {})
    # The user's card: one naming the user's shop, or the card this shop's hover opened in the
    # hover test (when that card names another shop, the content fault is shops.hover's, not this item's).
    own = {user["id"]} | set(h.get("names_in_card") or [])
    own.discard(iv["shop_id"])
    pg = ShopPage(ctx)
    await pg.open()
    shots: list[str | None] = []
    out = {
        "tested": True,
        "auto_interval": {k: iv[k] for k in ("shop_id", "start_s", "end_s")},
        "user_shop": user["id"],
        "user_card_names": sorted(own),
        "hold_s": s.manual_hold_s,
    }
    fol = None
    try:
        t_h = iv["start_s"] + min(s.manual_hover_after_s, iv["duration_s"] / 3)
        # Coarse on a slow renderer or a checked fast one (only the moment matters: DemoPage.seek);
        # the hold itself is stepped finely.
        await pg.dp.seek(t_h, picture_only=True)
        t_h = round(await pg.dp.now_s(), 3)
        before = await pg.read(shops)
        out["auto_card_before_hover"] = sorted({c["shop"] for c in before})
        pos = (await pg.shops_now()).get(user["id"])
        if pos is None or not pg.in_view(pos):
            return {**out, "tested": False, "reason": f"shop {user['id']} was not on screen at {t_h:.1f} s"}
        out["hovered"] = {"x": round(pos["x"], 1), "y": round(pos["y"], 1), "t_s": t_h}
        # The pointer follows the shop for the whole hold: a still pointer loses a
        # shop the camera carries away, and the card closing then says nothing about priority.
        fol = Follow(pg, user["id"], shops)
        await fol.begin(pos)
        await _hold(pg, fol, shops, t_h, out, shots)
    finally:
        await pg.close()
    return {
        **out,
        "steps": fol.steps if fol else [],
        "follow": fol.summary() if fol else None,
        "screenshots": [f for f in shots if f],
    }


async def _hold(pg: ShopPage, fol: Follow, shops: list[dict], t_h: float, out: dict, shots: list[str | None]) -> None:
    """Step the clock with the pointer following the shop until manual_hold_s after `t_h`.
    Evidence crops into `shots` (raw moments, no judgement): the first step past the answer
    time (close_watch_ms after the hover), each change of the cards showing after it, and
    the last step; the hook's active card and the cards' text at the first into `out`."""
    s = pg.s
    answer_s = t_h + s.close_watch_ms / 1000  # evidence crops from here on
    seen: list | None = None
    while True:
        now = await pg.dp.now_s()
        if now >= t_h + s.manual_hold_s - 5e-4:
            break
        rec = await fol.step(min(fol.step_ms, (t_h + s.manual_hold_s - now) * 1000))
        names = sorted({n for c in rec.get("cards", []) for n in c["names"]})
        if rec["t_s"] >= answer_s - 5e-4 and (seen is None or names != seen) and len(shots) < 4:
            shots.append(await _shot(pg, rec, len(shots) + 1))
            if seen is None:
                out["hook_active_card"] = await pg.active_card()
                out["text"] = joined_text(await pg.read(shops))
            seen = names
    last = fol.steps[-1]
    if len(shots) < 5 and last.get("t_s", 0) > answer_s:
        shots.append(await _shot(pg, last, len(shots) + 1))


async def _shot(pg: ShopPage, rec: dict, k: int) -> str | None:
    rects = [c["rect"] for c in rec.get("cards", [])]
    mark: Any = rec.get("moved_to") or rec.get("hook")  # [x, y]: every step has one
    return await pg.crop(f"manual-priority-{k}", rects or [[mark[0], mark[1], 1, 1]], mark=tuple(mark))
