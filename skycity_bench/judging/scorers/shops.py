"""The five shop items (rubric 店铺交互 / 店铺与规格), judged from the `shops` probe's raw figures.

- shops.hover: 1 point (the rubric item's `per_shop`) per shop that opens a card with its
  own content (its name, no other shop's) and closes it within close_within_ms of leaving
  (该店铺能打开、内容正确且能关闭才计分).
- shops.auto_display: 1 point per distinct shop shown by itself for auto_min_s..auto_max_s
  inside the window, at most the item's value (每家不同店铺 1 分，最多 3 分).
- shops.manual_priority, shops.card_placement, shops.touch: objective, full / partial / 0,
  with the behaviour that failed named in the evidence.

Every judgement is made here, from figures the probe recorded (probes/shops/), so `rescore`
re-judges a stored run under new thresholds. The thresholds are the scenario's
`scorers: shops:` section (ShopsScorerSettings; a missing one is a load-time error, there is
no fallback in code); point values come from the rubric item. Outcomes are codes (enums
below); the prose in the evidence is rendered from the codes.

Cards seen only as pixels (drawn on a canvas, no DOM card) put an item in `review` with null
points; shops that could not be tried (never on screen) make it `untested`.

The evidence read is the probe's model, skycity_bench/evidence/shops.py (ShopsEvidence,
evidence version 3): each figure is documented there.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from skycity_bench.common.errors import Cause, UserError
from skycity_bench.evidence.shops import (
    AutoInterval,
    AutoPhase,
    CanvasCard,
    HoverShop,
    PhaseError,
    Placement,
    ShopsEvidence,
    TouchPhase,
    TouchShop,
)
from skycity_bench.judging.scorers import ItemScore, ScoreInput, scorer, scorer_settings
from skycity_bench.judging.scorers._shop_manual_priority import (
    MANUAL_CAUSE,
    MANUAL_STATUS,
    MANUAL_VERDICT,
    Manual,
    manual_outcome,
)


# --------------------------------------------------------------------------- settings
class ShopsScorerSettings(BaseModel):
    """What the shop items are judged with: the scenario's `scorers: shops:` section (the
    reasons for the values are comments there). Every field is required."""

    model_config = ConfigDict(extra="forbid")

    expected_shops: int = Field(ge=1, description="shops the rubric asks for (六家店铺)")
    close_within_ms: float = Field(gt=0, description="a card must answer / be gone this soon (移开关闭)")
    auto_min_s: float = Field(ge=0, description="shortest automatic showing that counts (每次约 3 秒)")
    auto_max_s: float = Field(gt=0, description="longest automatic showing that counts")
    auto_min_sample_share: float = Field(gt=0, le=1, description="fewer samples of the window: it was not seen")
    max_distance_ratio: float = Field(gt=0, le=1, description="card to shop, share of the viewport diagonal")
    min_text_px: float = Field(gt=0, description="smallest readable text, CSS px")
    min_contrast: float = Field(ge=1, le=21, description="lowest readable WCAG contrast")
    viewport_slack_px: float = Field(ge=0, description="a card edge this far outside still counts as inside")
    canvas_card_min_area_px: float = Field(gt=0, description="a drawn card changes at least this many px")
    canvas_card_min_fill: float = Field(gt=0, le=1, description="... as one well-filled box")
    canvas_card_min_scene_ratio: float = Field(gt=0, description="... this many times scene motion alone")
    follow_max_lag_px: float = Field(gt=0, description="pointer further than this from the shop: it left it")
    hook_mismatch_px: float = Field(gt=0, description="pixels this far from the hook's point: the hook is wrong")
    pixel_min_match: float = Field(ge=-1, le=1, description="patch matches below this score are not counted")
    pixel_min_texture: float = Field(ge=0, description="flatter patches (grey std) are not counted")


scorer_settings("shops", ShopsScorerSettings)


ACCEPTS = {"shops": ("3",)}  # the evidence versions these scorers read (evidence/shops.py)


def _ctx(inp: ScoreInput) -> tuple[ShopsEvidence, ShopsScorerSettings]:
    return inp.evidence("shops"), inp.settings("shops")


def _per_shop(inp: ScoreInput) -> float:
    v = inp.item.get("per_shop")
    if v is None:
        raise UserError(f"rubric: {inp.item.id}: per_shop (points per shop) is missing")
    return float(v)


# --------------------------------------------------------------------------- judgements on figures
def content_matches(p: HoverShop | TouchShop) -> bool | None:
    """The card's text names this shop and no other."""
    if p.opened is None:
        return None
    return bool(p.opened) and (p.names_in_card or []) == [p.id]


def closed_in_time(p: HoverShop, s: ShopsScorerSettings) -> bool | None:
    """The opened card was gone within close_within_ms of the pointer leaving."""
    if not p.opened:
        return None
    gone = p.closed_after_ms
    return gone is not None and gone <= s.close_within_ms + 1e-6


def canvas_card_like(cc: CanvasCard | None, s: ShopsScorerSettings) -> bool:
    """A hover without a DOM card made a large, well-filled region change that scene motion
    alone (an equal stretch without the hover) did not: a card drawn on the canvas."""
    if cc is None or not cc.compared or cc.across_hover is None or cc.scene_motion is None:
        return False
    hov, scene = cc.across_hover, cc.scene_motion
    return (
        hov.area >= s.canvas_card_min_area_px
        and hov.fill >= s.canvas_card_min_fill
        and hov.area > s.canvas_card_min_scene_ratio * max(scene.area, 1)
    )


def inside_viewport(pl: Placement, s: ShopsScorerSettings) -> bool:
    x, y, w, h = pl.rect
    vw, vh = pl.viewport
    k = s.viewport_slack_px
    return x >= -k and y >= -k and x + w <= vw + k and y + h <= vh + k


def hook_agrees(p: HoverShop, s: ShopsScorerSettings) -> bool | None:
    """getActiveCard() said what the page showed: this shop's card while hovered (when the
    page showed its own card), none after leaving (when the page's card closed)."""
    o, c = p.hook_active_card_open, p.hook_active_card_closed
    if p.opened is None or o is None or c is None or o.error is not None or c.error is not None:
        return None
    said_open = isinstance(o.value, dict) and str(o.value.get("shopId")) == p.id
    said_closed = c.value is None
    return bool(said_open == bool(content_matches(p)) and (not p.opened or said_closed == bool(closed_in_time(p, s))))


def _canvas_shops(d: ShopsEvidence, s: ShopsScorerSettings) -> list[str]:
    return [p.id for p in d.hover.per_shop if not p.opened and canvas_card_like(p.canvas_card, s)]


def _status(points: float, full: float) -> str:
    return "pass" if points >= full - 1e-9 else ("fail" if points <= 0 else "partial")


def _dump(m: BaseModel | None) -> dict[str, Any] | None:
    """A part of the evidence as JSON for the item's evidence (as the probe wrote it)."""
    return None if m is None else m.model_dump(mode="json", exclude_unset=True)


# --------------------------------------------------------------------------- outcome codes
class Shop(str, Enum):
    """One shop's hover, judged."""

    PASSED = "passed"  # own card, closed in time
    NO_CARD = "no_card"  # no DOM card named a shop
    WRONG_CONTENT = "wrong_content"  # the card names other shops (or more than this one)
    STAYED_OPEN = "stayed_open"  # still showing close_within_ms after leaving
    NOT_TRIED = "not_tried"  # never on screen at the hover times
    CANVAS_CARD = "canvas_card"  # no DOM card, but pixels changed like a drawn card
    POINTER_FELL_BEHIND = "pointer_fell_behind"  # no card while the pointer lagged the moving shop


_SHOP = {
    Shop.PASSED: "opened its own card and closed it {closed_after_ms} ms after leaving",
    Shop.NO_CARD: "no card opened",
    Shop.WRONG_CONTENT: "card names {names} instead of only {id}",
    Shop.STAYED_OPEN: "card still open {close_ms:g} ms after leaving",
    Shop.NOT_TRIED: "never on screen at the hover times",
    Shop.CANVAS_CARD: "no DOM card, but the pixels changed like a card drawn on the canvas",
    Shop.POINTER_FELL_BEHIND: "no card, but the pointer fell {lag} px behind the moving shop (more than {tol:g} px)",
}


def _max_lag(p: HoverShop) -> float | None:
    return p.follow.max_lag_px if p.follow is not None else None


def shop_outcome(p: HoverShop, s: ShopsScorerSettings) -> Shop:
    if p.opened is None:
        return Shop.NOT_TRIED
    if not p.opened:
        if canvas_card_like(p.canvas_card, s):
            return Shop.CANVAS_CARD
        lag = _max_lag(p)
        if lag is not None and lag > s.follow_max_lag_px:
            return Shop.POINTER_FELL_BEHIND
        return Shop.NO_CARD
    if not content_matches(p):
        return Shop.WRONG_CONTENT
    return Shop.PASSED if closed_in_time(p, s) else Shop.STAYED_OPEN


def _shop_prose(code: Shop, p: HoverShop, s: ShopsScorerSettings) -> str:
    return _SHOP[code].format(
        id=p.id,
        names=p.names_in_card,
        closed_after_ms=_ms(p.closed_after_ms),
        close_ms=s.close_within_ms,
        lag=_max_lag(p),
        tol=s.follow_max_lag_px,
    )


class Item(str, Enum):
    """Why an item came out as it did (beside manual priority's own codes, Manual)."""

    SCORED = "scored"  # judged from the DOM: points as counted
    CANVAS_REVIEW = "canvas_review"  # cards look canvas-drawn: reviewers decide
    SHOPS_NOT_TRIED = "shops_not_tried"  # shops never on screen: untested
    POINTER_FELL_BEHIND = "pointer_fell_behind"  # the bench failed to follow: untested
    SAMPLER_STARVED = "sampler_starved"  # too few automatic-display samples: untested
    NO_AUTO_CARD = "no_auto_card"  # nothing showed by itself in the window: 0
    PHASE_ERROR = "phase_error"  # the probe's phase failed: untested
    NOT_TESTED = "not_tested"  # the probe could not set the test up: untested
    NO_HOVER_CARD = "no_hover_card"  # no hover opened a card, so none can win: 0
    NO_DOM_CARD = "no_dom_card"  # no DOM card to measure: 0
    NO_TAP_CARD = "no_tap_card"  # no tap opened a card with its shop's content: 0


_ITEM = {
    Item.SCORED: "",
    Item.CANVAS_REVIEW: "no DOM card for {shops}, but the pixels changed like a card drawn on the canvas: "
    "reviewers decide{more}",
    Item.SHOPS_NOT_TRIED: "shop(s) {shops} were never on screen {when} and could not be tried",
    Item.POINTER_FELL_BEHIND: "no card for {shops}, but the pointer fell more than {tol:g} px behind the moving shop: "
    "the bench failed to follow, so those hovers are untested",
    Item.SAMPLER_STARVED: "only {got} of {want} samples were taken in the window (the page starved the sampler)",
    Item.NO_AUTO_CARD: "no card naming a shop showed by itself in the window",
    Item.PHASE_ERROR: "{error}",
    Item.NOT_TESTED: "{reason}",
    Item.NO_HOVER_CARD: "a hover never opened a card, so a user's hover cannot win",
    Item.NO_DOM_CARD: "no hover opened a DOM card to measure",
    Item.NO_TAP_CARD: "no tap opened a card with that shop's content",
}
# Why an outcome leaves its item untested: shops the page never put on screen gave nothing to
# try; a pointer or a sampler that fell behind is the bench's failure. A phase error and a
# test not set up say theirs where they are found (_done's `cause`).
_ITEM_CAUSE = {
    Item.SHOPS_NOT_TRIED: Cause.PAGE,
    Item.POINTER_FELL_BEHIND: Cause.BENCH,
    Item.SAMPLER_STARVED: Cause.BENCH,
}


def _done(
    status: str,
    points: float | None,
    ev: dict[str, Any],
    m: dict[str, Any] | None,
    code: Item,
    cause: Cause | None = None,
    **facts: Any,
) -> ItemScore:
    ev["outcome"] = code.value
    if code is not Item.SCORED:
        ev["reason"] = _ITEM[code].format(**facts)
    if status == "untested":
        cause = cause or _ITEM_CAUSE[code]
    return ItemScore(status, points, ev, m or {}, cause=cause)


def _phase_cause(phase: PhaseError) -> Cause:
    """Why a later phase failed, as the probe recorded it (evidence written before it did: not
    taken for the page's)."""
    return Cause(phase.cause) if phase.cause else Cause.BENCH


# --------------------------------------------------------------------------- shops.hover
def _ms(v: float | None) -> float | int | None:
    """A millisecond figure as the probe wrote it (whole ms as an int)."""
    return int(v) if v is not None and float(v).is_integer() else v


def _shop_row(p: HoverShop, touch: TouchShop | None, s: ShopsScorerSettings) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": p.id,
        "name": p.name,
        "opened": p.opened,
        "closed_after_ms": _ms(p.closed_after_ms),
        "text": p.text,
        "hovered": _dump(p.hovered),
        "names_in_card": p.names_in_card,
        "reason": p.reason,
    }
    row.update(
        content_matches=content_matches(p),
        closed=closed_in_time(p, s),
        hook_agrees=hook_agrees(p, s),
        outcome=shop_outcome(p, s).value,
    )
    if p.follow is not None:
        row["follow_max_lag_px"] = p.follow.max_lag_px
    row["screenshots"] = [
        f
        for f in (
            p.screenshot_open,
            p.screenshot_stayed_open,
            p.canvas_card.screenshot if p.canvas_card is not None else None,
        )
        if f
    ]
    if p.canvas_card is not None:
        row["canvas_card_like"] = canvas_card_like(p.canvas_card, s)
    if touch is not None:
        row["touch_opened"] = touch.opened
        row["touch_content_matches"] = content_matches(touch)
        if touch.screenshot:
            row["screenshots"].append(touch.screenshot)
    return row


def _touched(d: ShopsEvidence) -> list[TouchShop]:
    return d.touch.per_shop if isinstance(d.touch, TouchPhase) else []


_HOVER_ROW_KEYS = ("id", "outcome", "opened", "content_matches", "closed", "closed_after_ms", "text", "screenshots")


def _hover_evidence(
    d: ShopsEvidence, s: ShopsScorerSettings, rows: list[dict[str, Any]], codes: dict[str, Shop], ok: list[str]
) -> dict[str, Any]:
    """shops.hover's evidence: the shops that passed, each shop's row, the prose of each
    failure and where getActiveCard() disagreed with the page."""
    ev: dict[str, Any] = {
        "shops_found": len(d.shops),
        "expected_shops": s.expected_shops,
        "passed": ok,
        "per_shop": [{k: r.get(k) for k in _HOVER_ROW_KEYS} for r in rows],
        "close_within_ms": s.close_within_ms,
    }
    if len(d.shops) < s.expected_shops:
        ev["note"] = f"the hook lists {len(d.shops)} shops, not {s.expected_shops}: missing shops score 0"
    fails = {
        p.id: _shop_prose(codes[p.id], p, s)
        for p in d.hover.per_shop
        if codes[p.id] in (Shop.NO_CARD, Shop.WRONG_CONTENT, Shop.STAYED_OPEN)
    }
    if fails:
        ev["failed"] = fails
    disagree = [r["id"] for r in rows if r["hook_agrees"] is False]
    if disagree:
        ev["hook_disagrees"] = {
            "shops": disagree,
            "note": "getActiveCard() said otherwise than the page showed; the page decides",
        }
    return ev


@scorer("shops.hover", probes=("shops",), accepts=ACCEPTS)
def hover(inp: ScoreInput) -> ItemScore:
    """`per_shop` points per shop whose own card opened and closed in time; review where a
    card looks drawn on the canvas, untested where a shop could not be tried or followed."""
    d, s = _ctx(inp)
    per = d.hover.per_shop
    touch = {t.id: t for t in _touched(d)}
    rows = [_shop_row(p, touch.get(p.id), s) for p in per]
    m = {"shops.per_shop": rows}
    codes = {p.id: shop_outcome(p, s) for p in per}
    ok = [i for i, c in codes.items() if c is Shop.PASSED]
    points = min(len(ok) * _per_shop(inp), inp.item.points)
    ev = _hover_evidence(d, s, rows, codes, ok)

    def by(code: Shop) -> list[str]:
        return [i for i, c in codes.items() if c is code]

    if by(Shop.CANVAS_CARD):
        return _done(
            "review",
            None,
            ev,
            m,
            Item.CANVAS_REVIEW,
            shops=by(Shop.CANVAS_CARD),
            more=f" ({len(ok)} shop(s) verified from the DOM)",
        )
    if by(Shop.NOT_TRIED):
        return _done("untested", None, ev, m, Item.SHOPS_NOT_TRIED, shops=by(Shop.NOT_TRIED), when="at the hover times")
    # A hover that opened nothing while the pointer could not keep up with the shop says
    # nothing about the demo: the bench's failure to follow, not a missing card.
    if by(Shop.POINTER_FELL_BEHIND):
        return _done(
            "untested",
            None,
            ev,
            m,
            Item.POINTER_FELL_BEHIND,
            shops=by(Shop.POINTER_FELL_BEHIND),
            tol=s.follow_max_lag_px,
        )
    return _done(_status(points, inp.item.points), points, ev, m, Item.SCORED)


# --------------------------------------------------------------------------- shops.auto_display
def interval_counts(iv: AutoInterval, tol_s: float, s: ShopsScorerSettings) -> bool:
    """One shop by itself, for auto_min_s..auto_max_s (to one sample interval)."""
    return iv.shop_id != "ambiguous" and s.auto_min_s - tol_s <= iv.duration_s <= s.auto_max_s + tol_s


def _auto_rows(auto: AutoPhase, s: ShopsScorerSettings) -> tuple[list[dict[str, Any]], list[str]]:
    """Each automatic showing with whether it counts, and the distinct shops counted (in the
    order first counted)."""
    tol = auto.sample_interval_ms / 1000
    rows, counted = [], []
    for iv in auto.intervals:
        good = interval_counts(iv, tol, s)
        if good and iv.shop_id not in counted:
            counted.append(iv.shop_id)
        rows.append(
            {
                "shop_id": iv.shop_id,
                "start_s": iv.start_s,
                "end_s": iv.end_s,
                "duration_s": iv.duration_s,
                "counted": good,
                "text": iv.text,
                "screenshot": iv.screenshot,
            }
        )
    return rows, counted


def _auto_hook_disagrees(auto: AutoPhase) -> list[dict[str, Any]]:
    """The showings where getActiveCard() named another shop than the page showed."""
    disagree = []
    for iv in auto.intervals:
        hc = iv.hook_active_card
        if hc is None or hc.error is not None:
            continue  # unread, or the call failed
        hv = hc.value
        if not (isinstance(hv, dict) and str(hv.get("shopId")) == iv.shop_id):
            disagree.append({"at_s": iv.screenshot_t_s, "page_shows": iv.shop_id, "hook_says": hv})
    return disagree


@scorer("shops.auto_display", probes=("shops",), accepts=ACCEPTS)
def auto_display(inp: ScoreInput) -> ItemScore:
    """`per_shop` points per distinct shop shown by itself for the counted duration; untested
    where the sampler starved, review where the cards look drawn on the canvas."""
    d, s = _ctx(inp)
    auto = d.auto
    if auto is None:
        return _done(
            "untested",
            None,
            {},
            None,
            Item.NOT_TESTED,
            Cause.NOT_RUN,
            reason="the automatic display was not sampled in this run (the check profile hovers only)",
        )
    rows, counted = _auto_rows(auto, s)
    points = min(len(counted) * _per_shop(inp), inp.item.points)
    ev: dict[str, Any] = {
        "window_s": auto.window_s,
        "sample_interval_ms": auto.sample_interval_ms,
        "duration_range_s": [s.auto_min_s, s.auto_max_s],
        "distinct_shops_counted": counted,
        "intervals": rows,
        "screenshots": [r["screenshot"] for r in rows if r.get("screenshot")],
    }
    m = {
        "shops.auto_display": [
            {k: r[k] for k in ("shop_id", "start_s", "end_s", "duration_s", "counted")} for r in rows
        ]
    }
    disagree = _auto_hook_disagrees(auto)
    if disagree:
        ev["hook_disagrees"] = disagree
    want, got = auto.samples_expected, auto.samples
    if want and got < s.auto_min_sample_share * want:
        return _done("untested", None, ev, m, Item.SAMPLER_STARVED, got=got, want=want)
    if not rows and _canvas_shops(d, s):
        return _done(
            "review",
            None,
            ev,
            m,
            Item.CANVAS_REVIEW,
            shops=_canvas_shops(d, s),
            more=" (no DOM card in the window either)",
        )
    if not rows:
        return _done(_status(points, inp.item.points), points, ev, m, Item.NO_AUTO_CARD)
    if len(counted) < len(rows):
        ev["note"] = "intervals outside the duration range or with no single shop are not counted"
    return _done(_status(points, inp.item.points), points, ev, m, Item.SCORED)


# --------------------------------------------------------------------------- shops.manual_priority
@scorer("shops.manual_priority", probes=("shops",), accepts=ACCEPTS)
def manual_priority(inp: ScoreInput) -> ItemScore:
    d, s = _ctx(inp)
    man = d.manual
    if man is None:
        return _done(
            "untested",
            None,
            {},
            None,
            Item.NOT_TESTED,
            Cause.NOT_RUN,
            reason="manual priority was not tried in this run (the check profile hovers only)",
        )
    if isinstance(man, PhaseError):
        return _done("untested", None, {}, None, Item.PHASE_ERROR, _phase_cause(man), error=man.error)
    ev = {
        k: v
        for k, v in man.model_dump(mode="json", exclude_unset=True).items()
        if k in ("auto_interval", "user_shop", "hovered", "hold_s", "text", "screenshots", "hook_active_card", "follow")
    }
    if not man.tested:
        if not any(p.opened for p in d.hover.per_shop):
            if _canvas_shops(d, s):
                return _done("review", None, {}, None, Item.CANVAS_REVIEW, shops=_canvas_shops(d, s), more="")
            return _done("fail", 0.0, {}, None, Item.NO_HOVER_CARD)
        # the page left nothing to test: no automatic card, none told apart, the shop off screen
        return _done("untested", None, {}, None, Item.NOT_TESTED, Cause.PAGE, reason=man.reason or "not tested")
    code, facts = manual_outcome(man, s)
    status = MANUAL_STATUS[code]
    ev.update(
        outcome=code.value,
        verdict=MANUAL_VERDICT[code].format(**facts),
        first_seen_s=facts["first_s"],
        lost_at_s=facts["lost_s"],
        answered=facts["first_s"] is not None,
        held=code is Manual.HELD,
        pixel_drift_px=facts["drift_px"],
        max_lag_px=facts["max_lag_px"],
        answer_within_ms=s.close_within_ms,
    )
    m = {
        "shops.manual_priority": {
            "outcome": code.value,
            "first_seen_s": facts["first_s"],
            "lost_at_s": facts["lost_s"],
            "max_lag_px": facts["max_lag_px"],
            "pixel_drift_px": facts["drift_px"],
        }
    }
    if status == "untested":
        ev["reason"] = ev["verdict"]
        return ItemScore("untested", None, ev, m, cause=MANUAL_CAUSE[code])
    points = {"pass": inp.objective("pass"), "partial": inp.objective("partial"), "fail": 0.0}[status]
    return ItemScore(status, points, ev, m)


# --------------------------------------------------------------------------- shops.card_placement
def card_checks(p: HoverShop, s: ShopsScorerSettings) -> dict[str, Any]:
    """The four placement checks of one measured card, and the figures they were made on."""
    pl = p.placement
    assert pl is not None  # only measured cards are checked
    c = {
        "inside_viewport": inside_viewport(pl, s),
        "near": pl.distance_ratio <= s.max_distance_ratio,
        "text_size": pl.min_font_px is not None and pl.min_font_px >= s.min_text_px,
        "contrast": pl.min_contrast is not None and pl.min_contrast >= s.min_contrast,
    }
    return {
        "id": p.id,
        **c,
        "distance_ratio": pl.distance_ratio,
        "min_font_px": pl.min_font_px,
        "min_contrast": pl.min_contrast,
        "rect": pl.rect,
        "contrast_methods": sorted({t.contrast.method for t in pl.texts if t.contrast is not None}),
        "position_ok": c["inside_viewport"] and c["near"],
        "readable_ok": c["text_size"] and c["contrast"],
    }


@scorer("shops.card_placement", probes=("shops",), accepts=ACCEPTS)
def card_placement(inp: ScoreInput) -> ItemScore:
    d, s = _ctx(inp)
    cards = [card_checks(p, s) for p in d.hover.per_shop if p.placement is not None]
    ev = {
        "thresholds": {
            "max_distance_ratio": s.max_distance_ratio,
            "min_text_px": s.min_text_px,
            "min_contrast": s.min_contrast,
        },
        "cards": cards,
    }
    if not cards:
        if _canvas_shops(d, s):
            return _done(
                "review", None, ev, None, Item.CANVAS_REVIEW, shops=_canvas_shops(d, s), more=" (placement included)"
            )
        return _done("fail", 0.0, ev, None, Item.NO_DOM_CARD)
    full = [c for c in cards if c["position_ok"] and c["readable_ok"]]
    if len(full) == len(cards):
        return _done("pass", inp.objective("pass"), ev, None, Item.SCORED)
    failing = sorted({k for c in cards for k in ("inside_viewport", "near", "text_size", "contrast") if not c[k]})
    ev["failed"] = failing
    if full or all(c["position_ok"] for c in cards) or all(c["readable_ok"] for c in cards):
        return _done("partial", inp.objective("partial"), ev, None, Item.SCORED)
    return _done("fail", 0.0, ev, None, Item.SCORED)


# --------------------------------------------------------------------------- shops.touch
@scorer("shops.touch", probes=("shops",), accepts=ACCEPTS)
def touch(inp: ScoreInput) -> ItemScore:
    d, s = _ctx(inp)
    t = d.touch
    if t is None:
        return _done(
            "untested",
            None,
            {},
            None,
            Item.NOT_TESTED,
            Cause.NOT_RUN,
            reason="touch was not tried in this run (the check profile hovers only)",
        )
    if isinstance(t, PhaseError):
        return _done("untested", None, {}, None, Item.PHASE_ERROR, _phase_cause(t), error=t.error)
    per = t.per_shop
    ok = [p.id for p in per if content_matches(p)]
    ev = {
        "opened_with_own_content": ok,
        "page": _dump(t.page),
        "per_shop": [
            {
                "id": p.id,
                "tapped": _dump(p.tapped),
                "opened": p.opened,
                "text": p.text,
                "screenshot": p.screenshot,
                "content_matches": content_matches(p),
            }
            for p in per
        ],
    }
    untried = [p.id for p in per if p.opened is None]
    if untried and len(ok) < s.expected_shops:
        return _done("untested", None, ev, None, Item.SHOPS_NOT_TRIED, shops=untried, when="to tap")
    if len(ok) >= s.expected_shops:
        return _done("pass", inp.objective("pass"), ev, None, Item.SCORED)
    if ok:
        ev["failed"] = [p.id for p in per if p.id not in ok]
        return _done("partial", inp.objective("partial"), ev, None, Item.SCORED)
    if _canvas_shops(d, s):
        return _done(
            "review",
            None,
            ev,
            None,
            Item.CANVAS_REVIEW,
            shops=_canvas_shops(d, s),
            more=" (no DOM card after a tap either; the recording shows it)",
        )
    return _done("fail", 0.0, ev, None, Item.NO_TAP_CARD)
