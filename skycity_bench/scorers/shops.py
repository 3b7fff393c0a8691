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


@scorer("shops.manual_priority", probes=("shops",))
def manual_priority(inp: ScoreInput) -> ItemScore:
    d, s = _ctx(inp)
    man = d.get("manual") or {}
    ev = {k: man.get(k) for k in ("auto_interval", "user_shop", "hovered", "answered", "first_seen_s", "held",
                                  "lost_at_s", "hold_s", "text", "screenshots", "hook_active_card") if k in man}
    if "error" in man:
        return ItemScore("untested", None, {"reason": man["error"]})
    if not man.get("tested"):
        if not any(p.get("opened") for p in _hover(d)):
            if _canvas_shops(d):
                return ItemScore("review", None, {"reason": "cards look canvas-drawn: reviewers decide"})
            return ItemScore("fail", 0.0, {"reason": "a hover never opened a card, so a user's hover cannot win"})
        return ItemScore("untested", None, {"reason": man.get("reason", "not tested")})
    if man["held"]:
        ev["verdict"] = (f"the user's card for {man['user_shop']} showed at {man['first_seen_s']} s and stayed, "
                         f"uncovered, for the {man['hold_s']:g} s the pointer stayed")
        return ItemScore("pass", inp.objective("pass"), ev)
    if man["answered"]:
        ev["verdict"] = (f"the user's card showed but was replaced or covered by the automatic display at "
                         f"{man['lost_at_s']} s, before {man['hold_s']:g} s had passed")
        return ItemScore("partial", inp.objective("partial"), ev)
    ev["verdict"] = (f"the automatic card ({man['auto_interval']['shop_id']}) kept the stage: the user's card did "
                     f"not show within {s.close_within_ms:g} ms of the hover")
    return ItemScore("fail", 0.0, ev)


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
