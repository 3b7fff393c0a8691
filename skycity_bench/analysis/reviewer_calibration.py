"""Calibration of reviewers against anchors: pure logic, no database
(store/calibration.py reads and writes the anchors and feeds this module).

An anchor is a candidate's graded item with an agreed level, set by the admin from a
finalised sheet (the reviewers' agreed level, `levels_from_sheet`) or by hand with a reason.
A new reviewer meets the anchor candidates first in their queue, spread among ordinary
candidates and unmarked (`interleave`); per reviewer and item the admin then sees

- offset: the mean signed level difference, reviewer minus reference, in levels (+ means
  the reviewer scores higher / more leniently than agreed);
- mad: the mean absolute level difference, in levels;
- n: how many scores it rests on;

flagged when mad > `FLAG_ABOVE_LEVELS`. Drift is the same figures over the reviewer's last N
scores (N: the store's setting, store/calibration.py) against a reference: the anchor where
there is one, else the median level of the other reviewers' standing scores on that
candidate and item (a score no one else gave is not comparable and is left out).

Levels are ordinal: a difference is counted in steps on the rubric's scale, ordered by share
(skycity-v1: 缺失 missing 0 < 较差 poor 1 < 一般 fair 2 < 良好 good 3 < 优秀 excellent 4), never
in points (an item worth 8 and one worth 2 are both one level apart at good vs fair).

Scores stay stored and keep counting in the sheet; the scores of a reviewer flagged against
the anchors on an item are marked there for the admin (`mark_sheet`; a drift flag marks
nothing, see `CalibrationReport.marks`). They are counted, not dropped:
a flag can rest on one or two anchors, and dropping a reviewer silently would change totals
(and turn a two-reviewer mean into a single-reviewer figure) on thin evidence; the admin
sees the mark beside the mean it entered and decides (a third reviewer, a talk, re-scoring).
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Optional

from skycity_bench.inputs.rubric import Rubric

# More than one level off on average on an item is flagged. One level is
# the rubric's own tolerance between two reviewers (review.third_reviewer_above_share = one
# level's share); beyond it a reviewer reads the item differently, not just strictly.
FLAG_ABOVE_LEVELS = 1.0
# Anchors are spread over the first SPREAD × (number of anchor candidates) places of a
# queue: all of them come early, yet not as one block a reviewer could learn to spot; the
# other places hold the reviewer's ordinary candidates in their usual order.
SPREAD = 2
MARK_PREFIX = "calibration"
# Drift's N is a setting of each store (meta `calibration_drift_last`, set by the admin on
# /admin/calibration or PUT /api/admin/calibration/settings; store/calibration.py). A store
# where nobody set it starts at 20: a reviewer's last two or three candidates (skycity-v1 has 8
# graded items), enough scores to average out one slip, few enough to show a change within a day.
DRIFT_LAST_DEFAULT = 20
DRIFT_LAST_MAX = 10000


class Scale:
    """The rubric's levels as an ordinal scale: rank 0 = the lowest share."""

    def __init__(self, rubric: Rubric):
        ordered = sorted(rubric.levels, key=lambda lv: lv.share)
        if not ordered:
            raise ValueError(f"rubric {rubric.id} has no levels: nothing to calibrate")
        self.keys = [lv.key for lv in ordered]
        self.shares = [lv.share for lv in ordered]
        self.rubric = rubric

    def rank(self, level: str | float) -> int:
        """Rank of a level given by key/name/percent (str) or by share (float in 0..1)."""
        if isinstance(level, str):
            return self.keys.index(self.rubric.level(level).key)
        for i, s in enumerate(self.shares):
            if abs(s - float(level)) < 1e-9:
                return i
        raise KeyError(level)

    def key(self, rank: int) -> str:
        return self.keys[rank]

    def distance(self, level: str | float, reference: str | float) -> int:
        """Signed distance in levels: + when `level` is above `reference`."""
        return self.rank(level) - self.rank(reference)


@dataclass(frozen=True)
class Anchor:
    candidate_id: str
    item_id: str
    level: str  # a level key
    source: str = "hand"  # sheet | hand
    reason: str = ""
    by: str = ""
    at: str = ""


@dataclass(frozen=True)
class Score:
    """One reviewer's standing grade on one candidate's item."""

    reviewer: str
    candidate_id: str
    item_id: str
    share: float
    at: str
    id: int = 0


@dataclass
class Figures:
    item_id: str  # an item id, or "overall"
    n: int
    offset: Optional[float]
    mad: Optional[float]
    flagged: bool

    @property
    def off_text(self) -> str:
        return "—" if self.offset is None else f"{self.offset:+.2f}"


@dataclass
class ReviewerCalibration:
    reviewer: str
    items: list[Figures]  # against anchors, items in rubric order (n > 0 only)
    overall: Figures
    drift_items: list[Figures]  # over the last N comparable scores
    drift_overall: Figures
    anchors_scored: int  # anchored (candidate, item) pairs this reviewer scored
    anchors_total: int

    def item(self, item_id: str) -> Optional[Figures]:
        return next((f for f in self.items if f.item_id == item_id), None)

    def drift_item(self, item_id: str) -> Optional[Figures]:
        return next((f for f in self.drift_items if f.item_id == item_id), None)

    @property
    def flagged_items(self) -> list[str]:
        return [f.item_id for f in self.items if f.flagged]

    @property
    def drift_flagged_items(self) -> list[str]:
        return [f.item_id for f in self.drift_items if f.flagged]

    @property
    def flagged(self) -> bool:
        return bool(self.flagged_items or self.drift_flagged_items)


@dataclass
class CalibrationReport:
    reviewers: list[ReviewerCalibration]
    anchors: list[Anchor]
    drift_last: int
    flag_above: float = FLAG_ABOVE_LEVELS
    scale: list[str] = field(default_factory=list)

    def of(self, reviewer: str) -> Optional[ReviewerCalibration]:
        return next((r for r in self.reviewers if r.reviewer == reviewer), None)

    def marks(self) -> dict[tuple[str, str], str]:
        """(reviewer, item) → why that reviewer's scores on that item are marked: flagged
        against the anchors. Drift flags are shown on the admin's calibration page but mark
        nothing: with one other reviewer on a candidate, drift shows that two disagree, not
        which one moved (the anchors and a third reviewer tell that)."""
        out: dict[tuple[str, str], str] = {}
        for r in self.reviewers:
            for f in r.items:
                if f.flagged:
                    out[(r.reviewer, f.item_id)] = (
                        f"{MARK_PREFIX}: {r.reviewer} scores {f.off_text} levels off the "
                        f"anchors on average ({f.mad:.2f} absolute, n {f.n})"
                    )
        return out

    def to_dict(self) -> dict:
        return {
            "scale": self.scale,
            "flag_above_levels": self.flag_above,
            "drift_last": self.drift_last,
            "offset": "mean signed level difference, reviewer minus reference (+: reviewer scores higher)",
            "anchors": [asdict(a) for a in self.anchors],
            "reviewers": [
                {
                    "reviewer": r.reviewer,
                    "flagged": r.flagged,
                    "flagged_items": r.flagged_items,
                    "drift_flagged_items": r.drift_flagged_items,
                    "anchors_scored": r.anchors_scored,
                    "anchors_total": r.anchors_total,
                    "overall": asdict(r.overall),
                    "items": [asdict(f) for f in r.items],
                    "drift_overall": asdict(r.drift_overall),
                    "drift_items": [asdict(f) for f in r.drift_items],
                }
                for r in self.reviewers
            ],
        }


# --- the figures ----------------------------------------------------------------------------


def figures(item_id: str, diffs: Sequence[float], flag_above: float = FLAG_ABOVE_LEVELS) -> Figures:
    """Offset, mean absolute difference and n of signed level differences."""
    if not diffs:
        return Figures(item_id, 0, None, None, False)
    mad = statistics.fmean(abs(d) for d in diffs)
    return Figures(item_id, len(diffs), round(statistics.fmean(diffs), 4), round(mad, 4), mad > flag_above + 1e-9)


def _by_item(pairs: Iterable[tuple[str, float]], order: Sequence[str], flag_above: float) -> list[Figures]:
    per: dict[str, list[float]] = {}
    for item, d in pairs:
        per.setdefault(item, []).append(d)
    rank = {iid: k for k, iid in enumerate(order)}
    return [figures(i, per[i], flag_above) for i in sorted(per, key=lambda i: (rank.get(i, len(rank)), i))]


def anchor_basis(anchor: Anchor, score: Score) -> bool:
    """A score an anchor taken from a finalised sheet was made of (given before the anchor
    was set) is not compared with it: it would only agree with itself."""
    return anchor.source == "sheet" and bool(anchor.at) and score.at <= anchor.at


def calibrate(
    rubric: Rubric,
    anchors: Sequence[Anchor],
    scores: Sequence[Score],
    *,
    drift_last: int,
    flag_above: float = FLAG_ABOVE_LEVELS,
) -> CalibrationReport:
    """Every reviewer's figures against the anchors and their drift over the last
    `drift_last` comparable scores. `scores`: standing grades (one per reviewer, candidate
    and item); reviewers with no comparable score at all are left out."""
    if drift_last < 1:
        raise ValueError(f"drift_last must be at least 1, not {drift_last}")
    scale = Scale(rubric)
    order = [i.id for i in rubric.items if i.graded]
    anchor_at = {(a.candidate_id, a.item_id): a for a in anchors}
    anchor_rank = {k: scale.rank(a.level) for k, a in anchor_at.items()}
    rank_of: dict[float, int] = {}  # a level's share → its rank, looked up once
    by_unit: dict[tuple[str, str], list[tuple[str, int]]] = {}
    by_reviewer: dict[str, list[tuple[Score, int]]] = {}
    for s in scores:
        r = rank_of[s.share] if s.share in rank_of else rank_of.setdefault(s.share, scale.rank(s.share))
        by_unit.setdefault((s.candidate_id, s.item_id), []).append((s.reviewer, r))
        by_reviewer.setdefault(s.reviewer, []).append((s, r))

    def reference(s: Score) -> Optional[float]:
        """The rank a score is compared with for drift: the anchor's, else the median rank of
        the other reviewers' scores of the same unit."""
        unit = (s.candidate_id, s.item_id)
        if unit in anchor_at:
            return None if anchor_basis(anchor_at[unit], s) else float(anchor_rank[unit])
        others = [r for who, r in by_unit[unit] if who != s.reviewer]
        return float(statistics.median(others)) if others else None

    out = []
    for name in sorted(by_reviewer):
        mine = sorted(by_reviewer[name], key=lambda sr: (sr[0].at, sr[0].id))
        vs_anchor = [
            (s.item_id, float(r - anchor_rank[(s.candidate_id, s.item_id)]))
            for s, r in mine
            if (s.candidate_id, s.item_id) in anchor_at and not anchor_basis(anchor_at[(s.candidate_id, s.item_id)], s)
        ]
        comparable = [(s.item_id, r - ref) for s, r in mine for ref in [reference(s)] if ref is not None]
        recent = comparable[-drift_last:]
        if not vs_anchor and not recent:
            continue
        out.append(
            ReviewerCalibration(
                name,
                _by_item(vs_anchor, order, flag_above),
                figures("overall", [d for _, d in vs_anchor], flag_above),
                _by_item(recent, order, flag_above),
                figures("overall", [d for _, d in recent], flag_above),
                len(vs_anchor),
                len(anchors),
            )
        )
    return CalibrationReport(out, list(anchors), drift_last, flag_above, scale.keys)


# --- anchors from a finalised sheet -----------------------------------------------------------


def levels_from_sheet(rubric: Rubric, sheet) -> tuple[dict[str, str], dict[str, str]]:
    """The agreed level of each graded item of a finalised CandidateSheet: the median of the
    reviewers' standing levels when it is a level (one reviewer, an odd count, or the two
    middle scores alike). Returns (item → level key, item → why it was skipped): two
    reviewers a level apart agreed on no level, and the admin sets such an item by hand."""
    if not sheet.finalized:
        raise ValueError(f"the sheet of {sheet.candidate_id} is not finalised")
    scale = Scale(rubric)
    levels, skipped = {}, {}
    for line in sheet.items:
        if line.how == "auto":
            continue
        ranks = sorted(scale.rank(float(r["share"])) for r in line.raw if r.get("share") is not None)
        if not ranks:
            skipped[line.item_id] = "no reviewer scored it"
            continue
        mid = statistics.median(ranks)
        if mid != int(mid):
            lo, hi = scale.key(int(mid)), scale.key(int(mid) + 1)
            skipped[line.item_id] = f"reviewers split between {lo} and {hi}: set it by hand"
            continue
        levels[line.item_id] = scale.key(int(mid))
    return levels, skipped


# --- the queue -----------------------------------------------------------------------------------


def interleave(order: Sequence[str], anchor_ids: Iterable[str], seed: str, spread: int = SPREAD) -> list[str]:
    """A queue order with the anchor candidates among its first spread × k places (k anchor
    candidates), at places and in an order drawn from `seed` (per reviewer), the other places
    keeping the plain order. Nothing in the result tells an anchor from another candidate."""
    present = set(order)
    anchors = [c for c in dict.fromkeys(anchor_ids) if c in present]
    if not anchors:
        return list(order)
    rng = random.Random(f"calibration:{seed}")
    rng.shuffle(anchors)
    rest = [c for c in order if c not in set(anchors)]
    front = min(len(order), spread * len(anchors))
    slots = set(rng.sample(range(front), len(anchors)))
    out, a, r = [], iter(anchors), iter(rest)
    for i in range(len(order)):
        out.append(next(a) if i in slots else next(r))
    return out


# --- the sheet, for the admin ---------------------------------------------------------------------


def mark_sheet(sheet, marks: dict[tuple[str, str], str]):
    """A copy of a CandidateSheet whose lines carry the calibration marks of the reviewers
    whose scores stand on them (flag on the line, `calibration` on the raw score). The scores
    still count (see the module's note)."""
    if not marks:
        return sheet
    rows = []
    for row in sheet.rows:
        lines = []
        for line in row.items:
            hit = [
                (r, marks[(r.get("reviewer"), line.item_id)])
                for r in line.raw
                if (r.get("reviewer"), line.item_id) in marks
            ]
            if not hit:
                lines.append(line)
                continue
            raw = [
                {**r, "calibration": marks[(r.get("reviewer"), line.item_id)]}
                if (r.get("reviewer"), line.item_id) in marks
                else r
                for r in line.raw
            ]
            flags = list(line.flags) + [m for _, m in hit if m not in line.flags]
            lines.append(replace(line, raw=raw, flags=flags))
        rows.append(replace(row, items=lines))
    return replace(sheet, rows=rows)


__all__ = [
    "Anchor",
    "CalibrationReport",
    "Figures",
    "ReviewerCalibration",
    "Scale",
    "Score",
    "calibrate",
    "figures",
    "interleave",
    "levels_from_sheet",
    "mark_sheet",
    "DRIFT_LAST_DEFAULT",
    "FLAG_ABOVE_LEVELS",
    "SPREAD",
]
