"""Time per candidate, for the operator: how long a reviewer had a candidate
page open before saving it, one review_timings row per save from the page (migration 0003).

The opening time is the server's: the candidate page carries it signed (review/timing.py), so
a reviewer's browser cannot make a candidate look quicker or slower than it was. Rows are raw
(a page left open over lunch is what it is); the summary uses medians, which one such page
does not move. A reviewer's time on a candidate is the sum of its rows (each save starts a
fresh page, so rows do not overlap).
"""

from __future__ import annotations

import datetime as dt
import statistics
from typing import Optional

from skycity_bench.store.review_store import ReviewStore
from skycity_bench.store.sql import Record, _q


def record(store: ReviewStore, reviewer: str, cid: str, opened_at: str, saved_at: str) -> Optional[float]:
    """Store one row; returns its seconds (None and nothing stored for an unknown reviewer or
    candidate, or a save before its opening)."""
    try:
        seconds = (dt.datetime.fromisoformat(saved_at) - dt.datetime.fromisoformat(opened_at)).total_seconds()
    except (TypeError, ValueError):
        return None
    if seconds < 0:
        return None
    with store.db.write() as con:
        w = _q(con, "SELECT id FROM reviewers WHERE name = :n", n=reviewer).first()
        if w is None or _q(con, "SELECT 1 FROM candidates WHERE id = :c", c=cid).first() is None:
            return None
        _q(
            con,
            "INSERT INTO review_timings (reviewer_id, candidate_id, opened_at, saved_at, seconds) "
            "VALUES (:w, :c, :o, :s, :sec)",
            w=w["id"],
            c=cid,
            o=opened_at,
            s=saved_at,
            sec=seconds,
        )
    return seconds


def rows(store: ReviewStore) -> list[Record]:
    """Every row, oldest first: {reviewer, candidate_id, opened_at, saved_at, seconds}."""
    with store.db.read() as con:
        return [
            dict(r)
            for r in _q(
                con,
                "SELECT w.name AS reviewer, t.candidate_id, t.opened_at, t.saved_at, "
                "t.seconds FROM review_timings t JOIN reviewers w ON w.id = t.reviewer_id "
                "ORDER BY t.saved_at, t.id",
            )
        ]


def summary(store: ReviewStore) -> list[Record]:
    """Per reviewer (by name): {reviewer, candidates, saves, median_s, total_s, per_candidate:
    [{candidate_id, seconds, saves}]} — seconds per candidate summed over its saves; the
    median over that reviewer's candidates."""
    per: dict[str, dict[str, list[float]]] = {}
    for r in rows(store):
        per.setdefault(r["reviewer"], {}).setdefault(r["candidate_id"], []).append(float(r["seconds"]))
    out = []
    for name in sorted(per):
        cands: list[Record] = [
            {"candidate_id": c, "seconds": round(sum(v), 1), "saves": len(v)} for c, v in sorted(per[name].items())
        ]
        times = [c["seconds"] for c in cands]
        out.append(
            {
                "reviewer": name,
                "candidates": len(cands),
                "saves": sum(c["saves"] for c in cands),
                "median_s": round(statistics.median(times), 1),
                "total_s": round(sum(times), 1),
                "per_candidate": cands,
            }
        )
    return out


__all__ = ["record", "rows", "summary"]
