"""The five shop items (rubric 店铺交互 / 店铺与规格), from the `shops` probe's evidence.

- shops.hover: 1 point per shop that opens a card with its own content (its name, no other
  shop's) and closes it within close_within_ms of leaving (该店铺能打开、内容正确且能关闭才计分).
- shops.auto_display: 1 point per distinct shop shown by itself for auto_min_s..auto_max_s
  inside the window, at most the item's value (每家不同店铺 1 分，最多 3 分).
- shops.manual_priority, shops.card_placement, shops.touch: objective, full / partial / 0,
  with the behaviour that failed named in the evidence.

Cards seen only as pixels (drawn on a canvas, no DOM card) put an item in `review` with null
points; shops that could not be tried (never on screen) make it `untested`. Thresholds come
from the scenario's `probes: shops:` section, point values from the rubric item.
"""

from __future__ import annotations

import math
from enum import Enum

from . import ItemScore, ScoreInput, scorer


def _ctx(inp: ScoreInput):
    return inp.data("shops"), inp.scenario.probe_settings("shops")


def _hover(d: dict) -> list[dict]:
    return (d.get("hover") or {}).get("per_shop", [])


def _canvas_shops(d: dict) -> list[str]:
    return [p["id"] for p in _hover(d) if not p.get("opened") and (p.get("canvas_card") or {}).get("card_like")]


def _status(points: float, full: float) -> str:
    return "pass" if points >= full - 1e-9 else ("fail" if points <= 0 else "partial")


def _shop_row(p: dict, touch: dict | None) -> dict:
    row = {k: p.get(k) for k in ("id", "name", "opened", "content_matches", "closed", "closed_after_ms", "text",
                                 "hovered", "names_in_card", "hook_agrees", "reason")}
    if p.get("follow"):
        row["follow_max_lag_px"] = p["follow"].get("max_lag_px")
    row["screenshots"] = [f for f in (p.get("screenshot_open"), p.get("screenshot_stayed_open"),
                                      (p.get("canvas_card") or {}).get("screenshot")) if f]
    if p.get("canvas_card"):
        row["canvas_card_like"] = p["canvas_card"].get("card_like")
    if touch:
        row["touch_opened"] = touch.get("opened")
        row["touch_content_matches"] = touch.get("content_matches")
        if touch.get("screenshot"):
            row["screenshots"].append(touch["screenshot"])
    return row


@scorer("shops.hover", probes=("shops",))
def hover(inp: ScoreInput) -> ItemScore:
    d, s = _ctx(inp)
    per = _hover(d)
    touch = {t["id"]: t for t in (d.get("touch") or {}).get("per_shop", [])}
    rows = [_shop_row(p, touch.get(p["id"])) for p in per]
    m = {"shops.per_shop": rows}
    each = float(inp.item.get("per_shop", 1))
    ok = [p["id"] for p in per if p.get("opened") and p.get("content_matches") and p.get("closed")]
    points = min(len(ok) * each, inp.item.points)
    ev = {"shops_found": len(d.get("shops", [])), "expected_shops": s.expected_shops, "passed": ok,
          "per_shop": [{k: r.get(k) for k in ("id", "opened", "content_matches", "closed", "closed_after_ms", "text",
                                              "screenshots")} for r in rows],
          "close_within_ms": s.close_within_ms}
    if len(d.get("shops", [])) < s.expected_shops:
        ev["note"] = f"the hook lists {len(d.get('shops', []))} shops, not {s.expected_shops}: missing shops score 0"
    fails = {p["id"]: ("no card opened" if not p.get("opened") else
                       f"card names {p.get('names_in_card')} instead of only {p['id']}" if not p.get("content_matches")
                       else f"card still open {s.close_within_ms:g} ms after leaving")
             for p in per if p["id"] not in ok and p.get("opened") is not None}
    if fails:
        ev["failed"] = fails
    disagree = [p["id"] for p in per if p.get("hook_agrees") is False]
    if disagree:
        ev["hook_disagrees"] = {"shops": disagree, "note": "getActiveCard() said otherwise than the page showed; "
                                "the page decides"}
    canvas = _canvas_shops(d)
    if canvas:
        ev["reason"] = (f"no DOM card for {canvas}, but the pixels changed like a card drawn on the canvas: "
                        f"reviewers decide ({len(ok)} shop(s) verified from the DOM)")
        return ItemScore("review", None, ev, m)
    untried = [p["id"] for p in per if p.get("opened") is None]
    if untried:
        ev["reason"] = f"shop(s) {untried} were never on screen at the hover times and could not be tried"
        return ItemScore("untested", None, ev, m)
    # A hover that opened nothing while the pointer could not keep up with the shop says
    # nothing about the demo (issue 16): the bench's failure to follow, not a missing card.
    lost = [p["id"] for p in per if not p.get("opened") and ((p.get("follow") or {}).get("max_lag_px") or 0)
            > s.follow_max_lag_px]
    if lost:
        ev["reason"] = (f"no card for {lost}, but the pointer fell more than {s.follow_max_lag_px:g} px behind the "
                        "moving shop: the bench failed to follow, so those hovers are untested")
        return ItemScore("untested", None, ev, m)
    return ItemScore(_status(points, inp.item.points), points, ev, m)


@scorer("shops.auto_display", probes=("shops",))
def auto_display(inp: ScoreInput) -> ItemScore:
    d, s = _ctx(inp)
    auto = d.get("auto") or {}
    tol = auto.get("sample_interval_ms", s.sample_interval_ms) / 1000
    rows, counted = [], []
    for iv in auto.get("intervals", []):
        dur = iv.get("duration_s", iv["end_s"] - iv["start_s"])
        good = iv["shop_id"] not in (None, "ambiguous") and s.auto_min_s - tol <= dur <= s.auto_max_s + tol
        if good and iv["shop_id"] not in counted:
            counted.append(iv["shop_id"])
        rows.append({"shop_id": iv["shop_id"], "start_s": iv["start_s"], "end_s": iv["end_s"], "duration_s": dur,
                     "counted": good, "text": iv.get("text"), "screenshot": iv.get("screenshot")})
    each = float(inp.item.get("per_shop", 1))
    points = min(len(counted) * each, inp.item.points)
    ev = {"window_s": auto.get("window_s"), "sample_interval_ms": auto.get("sample_interval_ms"),
          "duration_range_s": [s.auto_min_s, s.auto_max_s], "distinct_shops_counted": counted,
          "intervals": rows, "screenshots": [r["screenshot"] for r in rows if r.get("screenshot")]}
    m = {"shops.auto_display": [{k: r[k] for k in ("shop_id", "start_s", "end_s", "duration_s", "counted")}
                                for r in rows]}
    disagree = []
    for iv in auto.get("intervals", []):
        hv = (iv.get("hook_active_card") or {}).get("value", "unread")
        if hv != "unread" and not (isinstance(hv, dict) and str(hv.get("shopId")) == iv["shop_id"]):
            disagree.append({"at_s": iv.get("screenshot_t_s"), "page_shows": iv["shop_id"], "hook_says": hv})
    if disagree:
        ev["hook_disagrees"] = disagree
    want, got = auto.get("samples_expected"), auto.get("samples", 0)
    if want and got < 0.9 * want:
        ev["reason"] = f"only {got} of {want} samples were taken in the window (the page starved the sampler)"
        return ItemScore("untested", None, ev, m)
    if not rows and _canvas_shops(d):
        ev["reason"] = "no DOM card in the window, and hover cards look canvas-drawn: reviewers decide"
        return ItemScore("review", None, ev, m)
    if not rows:
        ev["reason"] = "no card naming a shop showed by itself in the window"
    elif len(counted) < len(rows):
        ev["note"] = "intervals outside the duration range or with no single shop are not counted"
    return ItemScore(_status(points, inp.item.points), points, ev, m)


class Manual(str, Enum):
    """Why shops.manual_priority came out as it did, decided from the probe's per-step record
    (the pointer followed the shop; _shop_follow.py). Each code has one status and one prose
    verdict (_VERDICT); the code itself is in the evidence as `outcome`."""
    HELD = "held"                                  # the user's card answered and held: pass
    REPLACED_BY_AUTO = "replaced_by_auto"          # answered, then another shop's card took its place: partial
    COVERED_BY_AUTO = "covered_by_auto"            # answered, then another shop's card overlapped it: partial
    CLOSED_ON_SHOP = "closed_on_shop"              # answered, then closed with the pointer on the shop: partial
    AUTO_KEPT_STAGE = "auto_kept_stage"            # never answered; the automatic card stayed instead: 0
    NO_ANSWER = "no_answer"                        # never answered; no card at all: 0
    POINTER_LEFT_SHOP = "pointer_left_shop"        # the bench failed to follow: untested
    SHOP_OFF_SCREEN = "shop_off_screen"            # the shop left the viewport: untested
    HOOK_LOST_SHOP = "hook_lost_shop"              # getShops() stopped giving its position: untested
    HOOK_POSITION_MISMATCH = "hook_position_mismatch"  # the hook's point is not where the shop is: untested


_STATUS = {Manual.HELD: "pass", Manual.REPLACED_BY_AUTO: "partial", Manual.COVERED_BY_AUTO: "partial",
           Manual.CLOSED_ON_SHOP: "partial", Manual.AUTO_KEPT_STAGE: "fail", Manual.NO_ANSWER: "fail",
           Manual.POINTER_LEFT_SHOP: "untested", Manual.SHOP_OFF_SCREEN: "untested", Manual.HOOK_LOST_SHOP: "untested",
           Manual.HOOK_POSITION_MISMATCH: "untested"}

_VERDICT = {
    Manual.HELD: "the user's card for {user} showed at {first_s} s and stayed, uncovered, for the {hold_s:g} s the "
                 "pointer followed the shop (largest lag {max_lag_px} px)",
    Manual.REPLACED_BY_AUTO: "the user's card for {user} showed at {first_s} s but was replaced by the automatic "
                             "display ({others}) at {lost_s} s while the pointer stayed on the shop (lag {lag_px} px)",
    Manual.COVERED_BY_AUTO: "the user's card for {user} showed at {first_s} s but was covered by the automatic "
                            "display ({others}) at {lost_s} s while the pointer stayed on the shop (lag {lag_px} px)",
    Manual.CLOSED_ON_SHOP: "the user's card for {user} showed at {first_s} s but closed at {lost_s} s while the "
                           "pointer stayed on the shop (lag {lag_px} px) and no other card showed",
    Manual.AUTO_KEPT_STAGE: "the automatic display ({others}) kept the stage and replaced the user's card: with the "
                            "pointer on {user} (largest lag {max_lag_px} px), the user's card did not show within "
                            "{answer_ms:g} ms",
    Manual.NO_ANSWER: "with the pointer on {user} (largest lag {max_lag_px} px), no card showed within "
                      "{answer_ms:g} ms, neither the user's nor the automatic one",
    Manual.POINTER_LEFT_SHOP: "the bench's pointer left {user} at {lost_s} s (it was {lag_px} px from the hook's "
                              "point, more than {tol_px:g} px) when {event}: the bench failed to follow, so that "
                              "says nothing about priority",
    Manual.SHOP_OFF_SCREEN: "shop {user} left the screen at {lost_s} s, so no pointer could stay on it, when {event}: "
                            "that says nothing about priority",
    Manual.HOOK_LOST_SHOP: "the hook stopped saying where {user} is at {lost_s} s ({hook_error}), so the pointer "
                           "could not follow it, when {event}: that says nothing about priority",
    Manual.HOOK_POSITION_MISMATCH: "the hook's position for {user} does not match the card or pixels: the pointer "
                                   "followed getShops() (lag {lag_px} px), but the scene under it moved {drift_px} px "
                                   "away from that point{card_note}; {event} (at {lost_s} s). Priority cannot be judged "
                                   "from a wrong position",
}


def _user_card(c: dict, own: set, auto_id: str) -> bool:
    names = c.get("names") or []
    shop = names[0] if len(names) == 1 else "ambiguous"
    return bool(set(names) & own) and shop != auto_id


def _covered(rect, others: list[dict]) -> bool:
    return any(rect[0] < o["rect"][0] + o["rect"][2] and o["rect"][0] < rect[0] + rect[2] and
               rect[1] < o["rect"][1] + o["rect"][3] and o["rect"][1] < rect[1] + rect[3] for o in others)


def manual_outcome(man: dict, s) -> tuple[Manual, dict]:
    """The outcome code and the facts its verdict names, from the follow record (steps).
    A step's card state comes from frames during which the pointer was at `pointer` and the
    shop moved to `hook`; so `lag_px` is how far the shop was from the pointer then."""
    own = set(man.get("user_card_names") or [man["user_shop"]])
    auto_id = man["auto_interval"]["shop_id"]
    t_h = man["hovered"]["t_s"]
    answer_by = t_h + man.get("answer_within_ms", s.close_within_ms) / 1000 + 1e-6
    rows = []
    drift = [0.0, 0.0]
    for st in man.get("steps", [])[1:]:
        cards = st.get("cards") or []
        mine = [c for c in cards if _user_card(c, own, auto_id)]
        others = [c for c in cards if c not in mine]
        px = st.get("pixels") or {}
        if (px.get("residual") is not None and (px.get("score") or 0) >= s.pixel_min_match
                and (px.get("texture") or 0) >= s.pixel_min_texture):
            # the residuals add up: each step says how far the look moved beyond the hook's move
            drift = [drift[0] + px["residual"][0], drift[1] + px["residual"][1]]
        ur = _union([c["rect"] for c in mine])
        rows.append({"t_s": st["t_s"], "lag_px": st.get("lag_px"), "on_screen": st.get("on_screen", True),
                     "user_card": bool(mine), "covered": bool(ur and _covered(ur, others)),
                     "others": sorted({n for c in others for n in c.get("names", [])}),
                     "drift_px": round(math.hypot(*drift), 1), "card_rect": ur, "pointer": st.get("pointer"),
                     "hook_error": st.get("hook_error") if st.get("hook") is None else None})
    lags = [r["lag_px"] for r in rows if r["lag_px"] is not None]
    facts = {"user": man["user_shop"], "hold_s": man.get("hold_s", s.manual_hold_s), "tol_px": s.follow_max_lag_px,
             "answer_ms": man.get("answer_within_ms", s.close_within_ms),
             "max_lag_px": max(lags) if lags else None, "first_s": None, "lost_s": None, "lag_px": None,
             "others": None, "drift_px": max((r["drift_px"] for r in rows), default=0.0), "card_note": "",
             "event": "the user's card closed", "hook_error": None}
    first = next((r for r in rows if r["user_card"] and r["t_s"] <= answer_by), None)
    if first is None:
        window = [r for r in rows if r["t_s"] <= answer_by] or rows[:1]
        facts["event"] = "the user's card did not show"
        bad = _bench_side(window, rows, rows, facts, s)
        if bad:
            return bad, facts
        others = sorted({o for r in window for o in r["others"]})
        facts["others"] = ", ".join(others) or None
        return (Manual.AUTO_KEPT_STAGE if others else Manual.NO_ANSWER), facts
    facts["first_s"] = first["t_s"]
    after = rows[rows.index(first):]
    lost = next((r for r in after if not r["user_card"] or r["covered"]), None)
    if lost is None:
        return Manual.HELD, facts
    facts.update(lost_s=lost["t_s"], lag_px=lost["lag_px"], others=", ".join(lost["others"]) or None)
    if lost["user_card"]:
        facts["event"] = f"the user's card was covered by {facts['others']}"
    elif lost["others"]:
        facts["event"] = f"the user's card was replaced by {facts['others']}"
    bad = _bench_side([lost], after[after.index(lost):], rows, facts, s)
    if bad:
        return bad, facts
    if lost["user_card"]:
        return Manual.COVERED_BY_AUTO, facts
    return (Manual.REPLACED_BY_AUTO if lost["others"] else Manual.CLOSED_ON_SHOP), facts


def _bench_side(at: list[dict], later: list[dict], rows: list[dict], facts: dict, s) -> Manual | None:
    """When the card was lost (or never came) for a reason on the bench's side: the pointer was
    not on the shop (it could not follow, or the shop left the screen), or the hook's point
    drifted from the shop's pixels from then on (the pointer followed a wrong position)."""
    for r in at:
        if r["hook_error"]:
            facts.update(lost_s=facts["lost_s"] or r["t_s"], hook_error=r["hook_error"])
            return Manual.HOOK_LOST_SHOP
        if not r["on_screen"]:
            facts["lost_s"] = facts["lost_s"] or r["t_s"]
            return Manual.SHOP_OFF_SCREEN
        if r["lag_px"] is not None and r["lag_px"] > s.follow_max_lag_px:
            facts.update(lost_s=facts["lost_s"] or r["t_s"], lag_px=r["lag_px"])
            return Manual.POINTER_LEFT_SHOP
    worst = max(later, key=lambda r: r["drift_px"])
    if worst["drift_px"] > s.hook_mismatch_px:
        facts.update(drift_px=worst["drift_px"], lost_s=facts["lost_s"] or at[0]["t_s"],
                     lag_px=facts["lag_px"] if facts["lag_px"] is not None else at[0]["lag_px"])
        seen = [r for r in rows if r["card_rect"] and r["pointer"]]
        if seen:
            d0 = _dist_to_rect(seen[0]["pointer"], seen[0]["card_rect"])
            d1 = _dist_to_rect(seen[-1]["pointer"], seen[-1]["card_rect"])
            facts["card_note"] = (f" (the user's card was {d0:.0f} px from the pointer at {seen[0]['t_s']} s, "
                                  f"{d1:.0f} px when last seen at {seen[-1]['t_s']} s)")
        return Manual.HOOK_POSITION_MISMATCH
    return None


def _union(rects: list) -> list | None:
    if not rects:
        return None
    x0, y0 = min(r[0] for r in rects), min(r[1] for r in rects)
    x1, y1 = max(r[0] + r[2] for r in rects), max(r[1] + r[3] for r in rects)
    return [x0, y0, x1 - x0, y1 - y0]


def _dist_to_rect(p, r) -> float:
    dx = max(r[0] - p[0], 0, p[0] - r[0] - r[2])
    dy = max(r[1] - p[1], 0, p[1] - r[1] - r[3])
    return math.hypot(dx, dy)


@scorer("shops.manual_priority", probes=("shops",))
def manual_priority(inp: ScoreInput) -> ItemScore:
    d, s = _ctx(inp)
    man = d.get("manual") or {}
    ev = {k: man.get(k) for k in ("auto_interval", "user_shop", "hovered", "hold_s", "text", "screenshots",
                                  "hook_active_card", "follow") if k in man}
    if "error" in man:
        return ItemScore("untested", None, {"reason": man["error"]})
    if not man.get("tested"):
        if not any(p.get("opened") for p in _hover(d)):
            if _canvas_shops(d):
                return ItemScore("review", None, {"reason": "cards look canvas-drawn: reviewers decide"})
            return ItemScore("fail", 0.0, {"reason": "a hover never opened a card, so a user's hover cannot win"})
        return ItemScore("untested", None, {"reason": man.get("reason", "not tested")})
    code, facts = manual_outcome(man, s)
    status = _STATUS[code]
    ev.update(outcome=code.value, verdict=_VERDICT[code].format(**facts), first_seen_s=facts["first_s"],
              lost_at_s=facts["lost_s"], answered=facts["first_s"] is not None, held=code is Manual.HELD,
              pixel_drift_px=facts["drift_px"], max_lag_px=facts["max_lag_px"])
    m = {"shops.manual_priority": {"outcome": code.value, "first_seen_s": facts["first_s"],
                                   "lost_at_s": facts["lost_s"], "max_lag_px": facts["max_lag_px"],
                                   "pixel_drift_px": facts["drift_px"]}}
    if status == "untested":
        ev["reason"] = ev["verdict"]
        return ItemScore("untested", None, ev, m)
    points = {"pass": inp.objective("pass"), "partial": inp.objective("partial"), "fail": 0.0}[status]
    return ItemScore(status, points, ev, m)


def _card_checks(p: dict, s) -> dict:
    pl = p["placement"]
    c = {"inside_viewport": pl["inside_viewport"],
         "near": pl["distance_ratio"] <= s.max_distance_ratio,
         "text_size": pl["min_font_px"] is not None and pl["min_font_px"] >= s.min_text_px,
         "contrast": pl["min_contrast"] is not None and pl["min_contrast"] >= s.min_contrast}
    return {"id": p["id"], **c, "distance_ratio": pl["distance_ratio"], "min_font_px": pl["min_font_px"],
            "min_contrast": pl["min_contrast"], "rect": pl["rect"],
            "contrast_methods": sorted({t["contrast"]["method"] for t in pl["texts"] if t.get("contrast")}),
            "position_ok": c["inside_viewport"] and c["near"], "readable_ok": c["text_size"] and c["contrast"]}


@scorer("shops.card_placement", probes=("shops",))
def card_placement(inp: ScoreInput) -> ItemScore:
    d, s = _ctx(inp)
    cards = [_card_checks(p, s) for p in _hover(d) if p.get("placement")]
    ev = {"thresholds": {"max_distance_ratio": s.max_distance_ratio, "min_text_px": s.min_text_px,
                         "min_contrast": s.min_contrast}, "cards": cards}
    if not cards:
        if _canvas_shops(d):
            return ItemScore("review", None, {**ev, "reason": "cards look canvas-drawn: reviewers judge placement"})
        return ItemScore("fail", 0.0, {**ev, "reason": "no hover opened a DOM card to measure"})
    full = [c for c in cards if c["position_ok"] and c["readable_ok"]]
    if len(full) == len(cards):
        return ItemScore("pass", inp.objective("pass"), ev)
    failing = sorted({k for c in cards for k in ("inside_viewport", "near", "text_size", "contrast") if not c[k]})
    ev["failed"] = failing
    if full or all(c["position_ok"] for c in cards) or all(c["readable_ok"] for c in cards):
        return ItemScore("partial", inp.objective("partial"), ev)
    return ItemScore("fail", 0.0, ev)


@scorer("shops.touch", probes=("shops",))
def touch(inp: ScoreInput) -> ItemScore:
    d, s = _ctx(inp)
    t = d.get("touch") or {}
    if "error" in t:
        return ItemScore("untested", None, {"reason": t["error"]})
    per = t.get("per_shop", [])
    ok = [p["id"] for p in per if p.get("opened") and p.get("content_matches")]
    ev = {"opened_with_own_content": ok, "page": t.get("page"),
          "per_shop": [{k: p.get(k) for k in ("id", "tapped", "opened", "content_matches", "text", "screenshot")}
                       for p in per]}
    untried = [p["id"] for p in per if p.get("opened") is None]
    if untried and len(ok) < s.expected_shops:
        return ItemScore("untested", None, {**ev, "reason": f"shop(s) {untried} were never on screen to tap"})
    if len(ok) >= s.expected_shops:
        return ItemScore("pass", inp.objective("pass"), ev)
    if ok:
        ev["failed"] = [p["id"] for p in per if p["id"] not in ok]
        return ItemScore("partial", inp.objective("partial"), ev)
    if _canvas_shops(d):
        return ItemScore("review", None, {**ev, "reason": "no DOM card after a tap, and hover cards look "
                                          "canvas-drawn: reviewers decide from the recording"})
    ev["failed"] = "no tap opened a card with that shop's content"
    return ItemScore("fail", 0.0, ev)
