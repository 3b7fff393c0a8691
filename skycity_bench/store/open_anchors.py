"""Which candidates hold anchors, and which finalised anchors a reviewer still scores blind:
the two reads the queue and submit need (store/reviews.py) to keep anchors unmarked, apart
from the admin's side of calibration (store/anchors.py), so the reviews need not know it.

A finalised anchor stays open, for a reviewer who had not scored it before it was
finalised, until that reviewer has scored every graded item of it.
"""

from __future__ import annotations

from sqlalchemy.engine import Connection

from skycity_bench.store.sql import _q


def anchor_candidates(con: Connection) -> list[str]:
    """Candidates holding at least one anchor (for the queue's order only)."""
    return [r["candidate_id"] for r in _q(con, "SELECT DISTINCT candidate_id FROM anchors ORDER BY candidate_id")]


def open_for(con: Connection, reviewer_id: int, graded: list[str]) -> set[str]:
    """Finalised anchor candidates this reviewer may still score as if open: they had no
    review of it when it was finalised and have not yet scored all its graded items."""
    fin = {
        r["candidate_id"]: r["at"]
        for r in _q(
            con,
            "SELECT f.candidate_id, f.at FROM finalized f WHERE f.candidate_id IN "
            "(SELECT DISTINCT candidate_id FROM anchors)",
        )
    }
    if not fin:
        return set()
    rows = _q(
        con,
        "SELECT candidate_id, item_id, kind, created_at, superseded_by FROM reviews WHERE reviewer_id = :w",
        w=reviewer_id,
    ).all()
    out = set()
    for cid, at in fin.items():
        mine = [r for r in rows if r["candidate_id"] == cid]
        if any(r["created_at"] <= at for r in mine):
            continue
        done = {r["item_id"] for r in mine if r["kind"] == "grade" and r["superseded_by"] is None}
        if not set(graded) <= done:
            out.add(cid)
    return out


__all__ = ["anchor_candidates", "open_for"]
