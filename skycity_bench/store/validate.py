"""Checking a submission before anything is stored: one clear message per mistake.

Graded items (manual, assisted) take one of the rubric's five levels, given as the level's
key ("good"), its Chinese name (良好), its percent (75) or its points (share × value); any
other number is refused. Automated items are never graded: a reviewer may only override
them, with points on the rubric's grid within the item's value and a written reason.
"""

from __future__ import annotations

import math
import re
from typing import Any

from skycity_bench.common.errors import UserError
from skycity_bench.inputs.rubric import Rubric, RubricItem

CANDIDATE_ID = re.compile(r"^c-[0-9a-f]{12}$")
MAX_TEXT = 4000
MAX_NAME = 60
Entry = dict[str, Any]  # one score of a submission: as sent, and as checked for storing


class InvalidReview(UserError):
    """Bad review input. `status` is the HTTP status the app answers with."""

    def __init__(self, message: str, status: int = 422):
        super().__init__(message)
        self.status = status


def check_candidate_id(cid: Any) -> str:
    if not isinstance(cid, str) or not CANDIDATE_ID.match(cid):
        raise InvalidReview(f"not a candidate id: {str(cid)[:40]!r} (expected c- and 12 hex digits)", 404)
    return cid


def check_reviewer_name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip():
        raise InvalidReview("reviewer name: give a name")
    text = " ".join(name.split())
    if len(text) > MAX_NAME or any(ord(c) < 32 for c in text):
        raise InvalidReview(f"reviewer name: at most {MAX_NAME} printable characters")
    return text


def _number(v: Any, what: str) -> float:
    if isinstance(v, bool) or v is None:
        raise InvalidReview(f"{what}: expected a number, got {v!r}")
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise InvalidReview(f"{what}: expected a number, got {str(v)[:20]!r}") from None
    if not math.isfinite(x):
        raise InvalidReview(f"{what}: expected a finite number")
    return x


def _text(v: Any, what: str) -> str:
    if v is None:
        return ""
    if not isinstance(v, str):
        raise InvalidReview(f"{what}: expected text")
    text = v.strip()
    if len(text) > MAX_TEXT:
        raise InvalidReview(f"{what}: at most {MAX_TEXT} characters")
    return text


def _item(rubric: Rubric, entry: Any, seen: set[str]) -> RubricItem:
    if not isinstance(entry, dict) or "item" not in entry:
        raise InvalidReview("each score needs an 'item'")
    iid = entry["item"]
    try:
        item = rubric.item(iid)
    except KeyError:
        raise InvalidReview(f"unknown item {str(iid)[:60]!r} in rubric {rubric.id}") from None
    if iid in seen:
        raise InvalidReview(f"item {iid} appears twice in one submission")
    seen.add(iid)
    return item


def _grade(rubric: Rubric, entry: Entry, seen: set[str]) -> Entry:
    item = _item(rubric, entry, seen)
    if not item.graded:
        raise InvalidReview(f"{item.id} is scored by the bench: override it with points and a reason instead")
    level = None
    if entry.get("level") is not None:
        key = entry["level"]
        if isinstance(key, str) and key.strip().rstrip("%").isdigit():
            key = int(key.strip().rstrip("%"))
        try:
            level = rubric.level(key)
        except KeyError:
            raise InvalidReview(
                f"{item.id}: {entry['level']!r} is not one of the levels "
                f"{', '.join(f'{lv.key} ({lv.percent}%)' for lv in rubric.sorted_levels())}"
            ) from None
    if entry.get("points") is not None:
        pts = _number(entry["points"], f"{item.id}: points")
        if not 0 <= pts <= item.points:
            raise InvalidReview(f"{item.id}: {pts:g} points is out of range 0–{item.points:g}")
        try:
            by_points = rubric.level_for_points(item, pts)
        except KeyError:
            allowed = ", ".join(f"{lv.share * item.points:g}" for lv in rubric.sorted_levels())
            raise InvalidReview(f"{item.id}: {pts:g} points is not a level (allowed: {allowed})") from None
        if level is not None and level.key != by_points.key:
            raise InvalidReview(f"{item.id}: level {level.key} and {pts:g} points disagree")
        level = by_points
    if level is None:
        raise InvalidReview(f"{item.id}: give a level or points")
    return {
        "item": item.id,
        "kind": "grade",
        "level": level.key,
        "share": level.share,
        "points": level.share * item.points,
        "comment": _text(entry.get("comment"), f"{item.id}: comment"),
        "reason": "",
    }


def _override(rubric: Rubric, entry: Entry, seen: set[str]) -> Entry:
    item = _item(rubric, entry, seen)
    if item.graded:
        raise InvalidReview(f"{item.id} is scored by reviewers on the levels: grade it instead of overriding")
    pts = _number(entry.get("points"), f"{item.id}: override points")
    step = rubric.review.override_step
    if not 0 <= pts <= item.points:
        raise InvalidReview(f"{item.id}: {pts:g} points is out of range 0–{item.points:g}")
    if abs(pts / step - round(pts / step)) > 1e-9:
        raise InvalidReview(f"{item.id}: override points go in steps of {step:g}")
    reason = _text(entry.get("reason"), f"{item.id}: reason")
    if len(reason) < rubric.review.override_reason_min_chars:
        raise InvalidReview(
            f"{item.id}: an override needs a written reason "
            f"(at least {rubric.review.override_reason_min_chars} characters)"
        )
    return {
        "item": item.id,
        "kind": "override",
        "level": None,
        "share": None,
        "points": pts,
        "comment": _text(entry.get("comment"), f"{item.id}: comment"),
        "reason": reason,
    }


def validate_submission(rubric: Rubric, rubric_id: Any, grades: list[Any], overrides: list[Any]) -> list[Entry]:
    if rubric_id != rubric.id:
        raise InvalidReview(f"the review names rubric {str(rubric_id)[:40]!r}; this store scores under {rubric.id}")
    if not isinstance(grades, list) or not isinstance(overrides, list):
        raise InvalidReview("grades and overrides must be lists")
    if not grades and not overrides:
        raise InvalidReview("nothing to submit")
    seen_g: set[str] = set()
    seen_o: set[str] = set()
    return [_grade(rubric, g, seen_g) for g in grades] + [_override(rubric, o, seen_o) for o in overrides]
