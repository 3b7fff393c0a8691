"""shops.manual_priority judged from the probe's follow record (probes/shops/follow.py):
the outcome code, its status and the prose rendered from it. Used by scorers/shops.py,
which reads the thresholds (ShopsScorerSettings) from the scenario's `scorers: shops:`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol

from skycity_bench.common.errors import Cause
from skycity_bench.evidence.shops import CardSeen, FollowStep, ManualPhase


class Manual(str, Enum):
    """Why shops.manual_priority came out as it did, decided from the probe's per-step record
    (the pointer followed the shop; probes/shops/follow.py). Each code has one status and one prose
    verdict (MANUAL_VERDICT); the code itself is in the evidence as `outcome`."""

    HELD = "held"  # the user's card answered and held: pass
    REPLACED_BY_AUTO = "replaced_by_auto"  # answered, then another shop's card took its place: partial
    COVERED_BY_AUTO = "covered_by_auto"  # answered, then another shop's card overlapped it: partial
    CLOSED_ON_SHOP = "closed_on_shop"  # answered, then closed with the pointer on the shop: partial
    AUTO_KEPT_STAGE = "auto_kept_stage"  # never answered; the automatic card stayed instead: 0
    NO_ANSWER = "no_answer"  # never answered; no card at all: 0
    POINTER_LEFT_SHOP = "pointer_left_shop"  # the bench failed to follow: untested
    SHOP_OFF_SCREEN = "shop_off_screen"  # the shop left the viewport: untested
    HOOK_LOST_SHOP = "hook_lost_shop"  # getShops() stopped giving its position: untested
    HOOK_POSITION_MISMATCH = "hook_position_mismatch"  # the hook's point is not where the shop is: untested


MANUAL_STATUS = {
    Manual.HELD: "pass",
    Manual.REPLACED_BY_AUTO: "partial",
    Manual.COVERED_BY_AUTO: "partial",
    Manual.CLOSED_ON_SHOP: "partial",
    Manual.AUTO_KEPT_STAGE: "fail",
    Manual.NO_ANSWER: "fail",
    Manual.POINTER_LEFT_SHOP: "untested",
    Manual.SHOP_OFF_SCREEN: "untested",
    Manual.HOOK_LOST_SHOP: "untested",
    Manual.HOOK_POSITION_MISMATCH: "untested",
}
# Why an untested outcome is so: the bench's pointer that lost the shop is the bench's
# failure; a shop that left the screen, or a hook that stopped giving or misplaced its
# position, is what the page did.
MANUAL_CAUSE = {
    Manual.POINTER_LEFT_SHOP: Cause.BENCH,
    Manual.SHOP_OFF_SCREEN: Cause.PAGE,
    Manual.HOOK_LOST_SHOP: Cause.PAGE,
    Manual.HOOK_POSITION_MISMATCH: Cause.PAGE,
}

MANUAL_VERDICT = {
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


class Thresholds(Protocol):
    """The thresholds of the scenario's `scorers: shops:` this judgement reads (the fields of
    scorers/shops.py ShopsScorerSettings, which imports this module)."""

    close_within_ms: float
    follow_max_lag_px: float
    hook_mismatch_px: float
    pixel_min_match: float
    pixel_min_texture: float


@dataclass
class _Row:
    """One follow step as the judgement reads it: where the pointer and the shop were, which
    cards showed, and how far the shop's pixels had drifted from the hook's point so far."""

    t_s: float
    lag_px: float | None
    on_screen: bool
    user_card: bool
    covered: bool
    others: list[str]
    drift_px: float
    card_rect: list[float] | None
    pointer: list[float] | None
    hook_error: str | None


def _user_card(c: CardSeen, own: set[str | None], auto_id: str) -> bool:
    names = c.names
    shop = names[0] if len(names) == 1 else "ambiguous"
    return bool(set(names) & own) and shop != auto_id


def _covered(rect: list[float], others: list[CardSeen]) -> bool:
    return any(
        rect[0] < o.rect[0] + o.rect[2]
        and o.rect[0] < rect[0] + rect[2]
        and rect[1] < o.rect[1] + o.rect[3]
        and o.rect[1] < rect[1] + rect[3]
        for o in others
    )


def _rows(steps: list[FollowStep], own: set[str | None], auto_id: str, s: Thresholds) -> list[_Row]:
    """The follow record's steps after the first, each with its cards sorted into the user's
    and the others', and the pixel drift added up to then."""
    rows = []
    drift = [0.0, 0.0]
    for st in steps[1:]:
        cards = st.cards or []
        mine = [c for c in cards if _user_card(c, own, auto_id)]
        others = [c for c in cards if c not in mine]
        px = st.pixels
        if (
            px is not None
            and px.residual is not None
            and px.score is not None
            and px.score >= s.pixel_min_match
            and px.texture >= s.pixel_min_texture
        ):
            # the residuals add up: each step says how far the look moved beyond the hook's move
            drift = [drift[0] + px.residual[0], drift[1] + px.residual[1]]
        ur = _union([c.rect for c in mine])
        rows.append(
            _Row(
                t_s=st.t_s,
                lag_px=st.lag_px,
                on_screen=st.on_screen,
                user_card=bool(mine),
                covered=bool(ur and _covered(ur, others)),
                others=sorted({n for c in others for n in c.names}),
                drift_px=round(math.hypot(*drift), 1),
                card_rect=ur,
                pointer=st.pointer,
                hook_error=st.hook_error if st.hook is None else None,
            )
        )
    return rows


def manual_outcome(man: ManualPhase, s: Thresholds) -> tuple[Manual, dict[str, Any]]:
    """The outcome code and the facts its verdict names, from the follow record (steps).
    A step's card state comes from frames during which the pointer was at `pointer` and the
    shop moved to `hook`; so `lag_px` is how far the shop was from the pointer then."""
    assert man.auto_interval is not None and man.hovered is not None  # a tested phase has both
    own: set[str | None] = set(man.user_card_names) if man.user_card_names else {man.user_shop}
    answer_by = man.hovered.t_s + s.close_within_ms / 1000 + 1e-6
    rows = _rows(man.steps or [], own, man.auto_interval.shop_id, s)
    lags = [r.lag_px for r in rows if r.lag_px is not None]
    facts: dict[str, Any] = {
        "user": man.user_shop,
        "hold_s": man.hold_s,
        "tol_px": s.follow_max_lag_px,
        "answer_ms": s.close_within_ms,
        "max_lag_px": max(lags) if lags else None,
        "first_s": None,
        "lost_s": None,
        "lag_px": None,
        "others": None,
        "drift_px": max((r.drift_px for r in rows), default=0.0),
        "card_note": "",
        "event": "the user's card closed",
        "hook_error": None,
    }
    first = next((r for r in rows if r.user_card and r.t_s <= answer_by), None)
    if first is None:
        return _never_answered(rows, answer_by, facts, s), facts
    facts["first_s"] = first.t_s
    after = rows[rows.index(first) :]
    lost = next((r for r in after if not r.user_card or r.covered), None)
    if lost is None:
        return Manual.HELD, facts
    facts.update(lost_s=lost.t_s, lag_px=lost.lag_px, others=", ".join(lost.others) or None)
    if lost.user_card:
        facts["event"] = f"the user's card was covered by {facts['others']}"
    elif lost.others:
        facts["event"] = f"the user's card was replaced by {facts['others']}"
    bad = _bench_side([lost], after[after.index(lost) :], rows, facts, s)
    if bad:
        return bad, facts
    if lost.user_card:
        return Manual.COVERED_BY_AUTO, facts
    return (Manual.REPLACED_BY_AUTO if lost.others else Manual.CLOSED_ON_SHOP), facts


def _never_answered(rows: list[_Row], answer_by: float, facts: dict[str, Any], s: Thresholds) -> Manual:
    """The user's card never showed in time: the bench's side, else the automatic card that
    kept the stage, else no card at all."""
    window = [r for r in rows if r.t_s <= answer_by] or rows[:1]
    facts["event"] = "the user's card did not show"
    bad = _bench_side(window, rows, rows, facts, s)
    if bad:
        return bad
    others = sorted({o for r in window for o in r.others})
    facts["others"] = ", ".join(others) or None
    return Manual.AUTO_KEPT_STAGE if others else Manual.NO_ANSWER


def _bench_side(
    at: list[_Row], later: list[_Row], rows: list[_Row], facts: dict[str, Any], s: Thresholds
) -> Manual | None:
    """When the card was lost (or never came) for a reason on the bench's side: the pointer was
    not on the shop (it could not follow, or the shop left the screen), or the hook's point
    drifted from the shop's pixels from then on (the pointer followed a wrong position)."""
    for r in at:
        if r.hook_error:
            facts.update(lost_s=facts["lost_s"] or r.t_s, hook_error=r.hook_error)
            return Manual.HOOK_LOST_SHOP
        if not r.on_screen:
            facts["lost_s"] = facts["lost_s"] or r.t_s
            return Manual.SHOP_OFF_SCREEN
        if r.lag_px is not None and r.lag_px > s.follow_max_lag_px:
            facts.update(lost_s=facts["lost_s"] or r.t_s, lag_px=r.lag_px)
            return Manual.POINTER_LEFT_SHOP
    worst = max(later, key=lambda r: r.drift_px)
    if worst.drift_px > s.hook_mismatch_px:
        facts.update(
            drift_px=worst.drift_px,
            lost_s=facts["lost_s"] or at[0].t_s,
            lag_px=facts["lag_px"] if facts["lag_px"] is not None else at[0].lag_px,
        )
        seen = [r for r in rows if r.card_rect and r.pointer]
        if seen:
            facts["card_note"] = _card_note(seen[0], seen[-1])
        return Manual.HOOK_POSITION_MISMATCH
    return None


def _card_note(first: _Row, last: _Row) -> str:
    """How far the user's card was from the pointer when first and last seen."""
    assert first.pointer and first.card_rect and last.pointer and last.card_rect
    d0 = _dist_to_rect(first.pointer, first.card_rect)
    d1 = _dist_to_rect(last.pointer, last.card_rect)
    return (
        f" (the user's card was {d0:.0f} px from the pointer at {first.t_s} s, "
        f"{d1:.0f} px when last seen at {last.t_s} s)"
    )


def _union(rects: list[list[float]]) -> list[float] | None:
    if not rects:
        return None
    x0, y0 = min(r[0] for r in rects), min(r[1] for r in rects)
    x1, y1 = max(r[0] + r[2] for r in rects), max(r[1] + r[3] for r in rects)
    return [x0, y0, x1 - x0, y1 - y0]


def _dist_to_rect(p: list[float], r: list[float]) -> float:
    dx = max(r[0] - p[0], 0, p[0] - r[0] - r[2])
    dy = max(r[1] - p[1], 0, p[1] - r[1] - r[3])
    return math.hypot(dx, dy)
