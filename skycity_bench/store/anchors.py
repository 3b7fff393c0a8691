"""Calibration in the store: the anchors table (migration 0003), the
reviewers' standing grades read for analysis/reviewer_calibration.py, the drift setting, an audit row for
every admin action, and what the queue and the sheet need to keep anchors unmarked.

Anchors and their levels are never served to reviewers: only review/routes_calibration.py reads them
(through `Calibration`); the queue and submit use `anchor_candidates` (to order, never to
label) and `open_for` (which finalised anchors a reviewer may still score blind).

A finalised anchor stays open, for a reviewer who had not scored it before it was
finalised, until that reviewer has scored every graded item of it: it looks like any other
open candidate to them (queue, page, sheet), and their scores, made after finalisation, are
compared with the anchor but do not enter the finalised sheet (ReviewStore.sheet keeps the
reviews standing at finalisation).
"""

from __future__ import annotations

import json
from typing import Optional

from sqlalchemy.engine import Connection

from skycity_bench.analysis.reviewer_calibration import (
    DRIFT_LAST_DEFAULT,
    DRIFT_LAST_MAX,
    Anchor,
    CalibrationReport,
    Score,
    calibrate,
    levels_from_sheet,
    mark_sheet,
)
from skycity_bench.inputs.rubric import RubricItem
from skycity_bench.judging.sheet_totals import CandidateSheet
from skycity_bench.store.open_anchors import open_for
from skycity_bench.store.review_store import ReviewStore
from skycity_bench.store.sql import Record, _q, now
from skycity_bench.store.validate import InvalidReview, check_candidate_id

DRIFT_KEY = "calibration_drift_last"


def still_open(store: ReviewStore, reviewer_id: int) -> set[str]:
    """`open_for` in its own read (for the app: a finalised anchor this reviewer still scores
    blind shows as open, and its sheet stays hidden from them)."""
    with store.db.read() as con:
        return open_for(con, reviewer_id, [i.id for i in store.rubric.items if i.graded])


class Calibration:
    """The admin's side: anchors, the report, the setting."""

    def __init__(self, store: ReviewStore):
        self.store = store
        self.rubric = store.rubric

    # --- anchors --------------------------------------------------------------------------
    def anchors(self) -> list[Anchor]:
        with self.store.db.read() as con:
            rows = _q(
                con,
                'SELECT candidate_id, item_id, level, source, reason, "by", at FROM anchors '
                "ORDER BY candidate_id, item_id",
            ).all()
        order = {i.id: k for k, i in enumerate(self.rubric.items)}
        return sorted(
            (
                Anchor(r["candidate_id"], r["item_id"], r["level"], r["source"], r["reason"], r["by"], r["at"])
                for r in rows
            ),
            key=lambda a: (a.candidate_id, order.get(a.item_id, len(order))),
        )

    def _check(self, cid: str) -> str:
        check_candidate_id(cid)
        if not self.store.has_candidate(cid):
            raise InvalidReview(f"no such candidate: {cid}", 404)
        return cid

    def _item(self, item_id: str) -> RubricItem:
        try:
            item = self.rubric.item(item_id)
        except KeyError:
            raise InvalidReview(f"unknown item {str(item_id)[:60]!r}") from None
        if not item.graded:
            raise InvalidReview(f"{item_id} is scored by the bench, not graded by reviewers: it takes no anchor")
        return item

    def set_by_hand(self, cid: str, item_id: str, level: str, reason: str, by: str) -> Anchor:
        """An anchor set by hand: a graded item, one of the rubric's levels, and a reason
        (at least as long as an override's: rubric review.override_reason_min_chars)."""

        self._check(cid)
        self._item(item_id)
        try:
            key = self.rubric.level(level).key
        except KeyError:
            raise InvalidReview(
                f"level {str(level)[:40]!r}: expected one of {', '.join(lv.key for lv in self.rubric.sorted_levels())}"
            ) from None
        reason = " ".join(str(reason or "").split())
        need = self.rubric.review.override_reason_min_chars
        if len(reason) < need:
            raise InvalidReview(f"an anchor set by hand needs a reason of at least {need} characters")
        at = now()
        with self.store.db.write() as con:
            self._upsert(con, cid, item_id, key, "hand", reason, by, at)
            self._audit(con, by, "anchor.hand", cid, {"item": item_id, "level": key, "reason": reason}, at)
        return Anchor(cid, item_id, key, "hand", reason, by, at)

    def from_sheet(self, cid: str, by: str) -> Record:
        """Anchors from a finalised sheet: each graded item's agreed level (levels_from_sheet);
        items without one are listed as skipped, with why."""

        self._check(cid)
        sheet = self.store.sheet(cid)
        if not sheet.finalized:
            raise InvalidReview(f"the sheet of {cid} is not finalised: finalise it first, or set anchors by hand", 409)
        levels, skipped = levels_from_sheet(self.rubric, sheet)
        if not levels:
            raise InvalidReview(
                f"the finalised sheet of {cid} has no agreed level on any graded item "
                f"({'; '.join(f'{k}: {v}' for k, v in skipped.items())})",
                409,
            )
        at = now()
        with self.store.db.write() as con:
            for iid, key in levels.items():
                self._upsert(con, cid, iid, key, "sheet", "agreed level of the finalised sheet", by, at)
            self._audit(con, by, "anchor.sheet", cid, {"levels": levels, "skipped": skipped}, at)
        return {"candidate_id": cid, "set": levels, "skipped": skipped}

    def remove(self, cid: str, by: str, item_id: Optional[str] = None) -> int:

        self._check(cid)
        with self.store.db.write() as con:
            if item_id is None:
                rows = _q(con, "SELECT item_id FROM anchors WHERE candidate_id = :c", c=cid).all()
                _q(con, "DELETE FROM anchors WHERE candidate_id = :c", c=cid)
            else:
                rows = _q(
                    con, "SELECT item_id FROM anchors WHERE candidate_id = :c AND item_id = :i", c=cid, i=item_id
                ).all()
                _q(con, "DELETE FROM anchors WHERE candidate_id = :c AND item_id = :i", c=cid, i=item_id)
            if rows:
                self._audit(con, by, "anchor.remove", cid, {"items": [r["item_id"] for r in rows]}, now())
        return len(rows)

    @staticmethod
    def _upsert(
        con: Connection, cid: str, item_id: str, level: str, source: str, reason: str, by: str, at: str
    ) -> None:
        _q(con, "DELETE FROM anchors WHERE candidate_id = :c AND item_id = :i", c=cid, i=item_id)
        _q(
            con,
            'INSERT INTO anchors (candidate_id, item_id, level, source, reason, "by", at) '
            "VALUES (:c, :i, :l, :s, :r, :b, :t)",
            c=cid,
            i=item_id,
            l=level,
            s=source,
            r=reason,
            b=by,
            t=at,
        )

    @staticmethod
    def _audit(con: Connection, actor: str, action: str, cid: Optional[str], detail: Record, at: str) -> None:
        _q(
            con,
            "INSERT INTO audit (at, actor, action, candidate_id, detail) VALUES (:t, :a, :x, :c, :d)",
            t=at,
            a=actor,
            x=action,
            c=cid,
            d=json.dumps(detail, ensure_ascii=False, sort_keys=True),
        )

    def audit(self, limit: int = 50) -> list[Record]:
        """The latest calibration actions, newest first."""
        with self.store.db.read() as con:
            rows = _q(
                con,
                "SELECT at, actor, action, candidate_id, detail FROM audit WHERE action LIKE 'anchor.%' "
                "OR action = 'calibration.setting' ORDER BY id DESC LIMIT :n",
                n=limit,
            ).all()
        return [dict(r) for r in rows]

    def finalised(self) -> list[str]:
        """Candidates whose sheet is finalised (one query; the page's from-sheet choice)."""
        with self.store.db.read() as con:
            return [r["candidate_id"] for r in _q(con, "SELECT candidate_id FROM finalized ORDER BY candidate_id")]

    # --- the setting -------------------------------------------------------------------------
    def drift_last(self) -> int:
        with self.store.db.read() as con:
            row = _q(con, "SELECT value FROM meta WHERE key = :k", k=DRIFT_KEY).first()
        return int(row["value"]) if row else DRIFT_LAST_DEFAULT

    def set_drift_last(self, n: object, by: str) -> int:
        try:
            value = int(str(n).strip())
        except ValueError:
            raise InvalidReview(
                f"drift over the last N scores: N must be a whole number, not {str(n)[:20]!r}"
            ) from None
        if not 1 <= value <= DRIFT_LAST_MAX:
            raise InvalidReview(f"drift over the last N scores: N must be 1 to {DRIFT_LAST_MAX}, not {value}")
        with self.store.db.write() as con:
            _q(con, "DELETE FROM meta WHERE key = :k", k=DRIFT_KEY)
            _q(con, "INSERT INTO meta (key, value) VALUES (:k, :v)", k=DRIFT_KEY, v=str(value))
            self._audit(con, by, "calibration.setting", None, {DRIFT_KEY: value}, now())
        return value

    # --- the figures ---------------------------------------------------------------------------
    def scores(self) -> list[Score]:
        """Every standing grade (one per reviewer, candidate and item), with its level's share."""
        with self.store.db.read() as con:
            rows = _q(
                con,
                "SELECT v.id, v.candidate_id, v.item_id, v.share, v.created_at, w.name FROM reviews v "
                "JOIN reviewers w ON w.id = v.reviewer_id WHERE v.kind = 'grade' "
                "AND v.superseded_by IS NULL AND v.share IS NOT NULL ORDER BY v.id",
            ).all()
        return [
            Score(r["name"], r["candidate_id"], r["item_id"], float(r["share"]), r["created_at"], r["id"]) for r in rows
        ]

    def report(self, drift_last: Optional[int] = None) -> CalibrationReport:
        return calibrate(
            self.rubric,
            self.anchors(),
            self.scores(),
            drift_last=drift_last if drift_last is not None else self.drift_last(),
        )

    def mark(self, sheets: list[CandidateSheet]) -> list[CandidateSheet]:
        """The sheets as the admin sees them: a flagged reviewer's scores on the flagged item
        marked (calibration.mark_sheet; they still count)."""
        marks = self.report().marks()
        return [mark_sheet(s, marks) for s in sheets] if marks else sheets


__all__ = ["Calibration", "still_open", "DRIFT_KEY"]
