"""The review store's reviewers and reviews (StoreReviews, a part of ReviewStore:
review_store.py): sign-in and queues, submitting and finalising, the sheets, and export /
rebuild of every review."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from typing import Any, Optional

import sqlalchemy as sa
from sqlalchemy.engine import Connection, RowMapping

from skycity_bench.analysis import reviewer_calibration as calibration
from skycity_bench.common.errors import UserError
from skycity_bench.judging.sheet_totals import CandidateSheet, Review, build_sheet
from skycity_bench.store.open_anchors import anchor_candidates, open_for
from skycity_bench.store.runs import StoreRuns
from skycity_bench.store.sql import Record, _q, expanding, now
from skycity_bench.store.validate import InvalidReview, check_candidate_id, check_reviewer_name, validate_submission

# what a reviewer's sheet of a candidate not yet final says in place of the total
OWN_ONLY = "others' scores: hidden until the sheet is finalised (this sheet shows your own work only)"


class StoreReviews(StoreRuns):
    """ReviewStore's reviewers, reviews and sheets (on top of its runs: the shown run of
    each candidate)."""

    # --- reviewers ------------------------------------------------------------------
    def sign_in(self, name: str) -> Record:
        name = check_reviewer_name(name)
        with self._tx() as con:
            row = _q(con, "SELECT id, name, seat, role FROM reviewers WHERE name = :n", n=name).first()
            if row is None:
                seat = _q(con, "SELECT COALESCE(MAX(seat), -1) + 1 AS s FROM reviewers").scalar_one()
                rid = _q(
                    con,
                    "INSERT INTO reviewers (name, seat, created_at) VALUES (:n, :s, :t) RETURNING id",
                    n=name,
                    s=seat,
                    t=now(),
                ).scalar_one()
                return {"id": rid, "name": name, "seat": seat}
            return dict(row)

    def reviewer(self, name: str) -> Record:
        with self._read() as con:
            row = _q(con, "SELECT id, name, seat, role FROM reviewers WHERE name = :n", n=name).first()
        if row is None:
            raise InvalidReview(f"unknown reviewer {name!r}: sign in first", 404)
        return dict(row)

    def order_for(self, seat: int) -> list[str]:
        """Queue order: shuffled with the store's seed per pair of seats; the second
        reviewer of each pair gets the reverse of the first one's order."""
        ids = self.candidates()
        random.Random(f"{self.seed}:{seat // 2}").shuffle(ids)
        ids = ids[::-1] if seat % 2 else ids
        with self._read() as con:  # calibration: anchors early, interleaved, unmarked
            return calibration.interleave(ids, anchor_candidates(con), f"{self.seed}:{seat}")

    def queue(self, name: str) -> list[Record]:
        me = self.reviewer(name)
        graded = [i.id for i in self.rubric.items if i.graded]
        sheets = {s.candidate_id: s for s in self.sheets()}  # every candidate's at once
        mine_by = self.graded_items(name)
        with self._read() as con:  # finalised anchors this reviewer still scores blind look open
            still_open = open_for(con, me["id"], graded)
        out = []
        for cid in self.order_for(me["seat"]):
            sheet = sheets[cid]
            mine = mine_by.get(cid, set())
            wants = [i.item_id for i in sheet.items if "needs third reviewer" in i.flags and i.item_id not in mine]
            out.append(
                {
                    "candidate_id": cid,
                    "scored": len(mine & set(graded)),
                    "to_score": len(graded),
                    "third_reviewer_wanted": wants,
                    "finalized": sheet.finalized and cid not in still_open,
                }
            )
        return out

    # --- reviews --------------------------------------------------------------------
    def submit(
        self,
        cid: str,
        reviewer: str,
        rubric_id: str,
        grades: list[Record] | None = None,
        overrides: list[Record] | None = None,
        *,
        source: str = "api",
    ) -> Record:
        """Validate the whole submission first, then store it in one transaction: a bad
        entry stores nothing. Unchanged scores are not stored again."""
        check_candidate_id(cid)
        if not self.has_candidate(cid):
            raise InvalidReview(f"no such candidate: {cid}", 404)
        me = self.reviewer(reviewer)
        rows = validate_submission(self.rubric, rubric_id, grades or [], overrides or [])
        stored, unchanged = [], 0
        with self._tx() as con:
            if _q(con, "SELECT 1 FROM finalized WHERE candidate_id = :c", c=cid).first() and cid not in open_for(
                con, me["id"], [i.id for i in self.rubric.items if i.graded]
            ):
                raise InvalidReview(f"the sheet of {cid} is finalised: scores can no longer change", 409)
            run = self._shown(con, cid)  # the run the reviewer was shown
            for r in rows:
                new_id = self._append(con, cid, run["run_id"] if run else None, me["id"], r, source, now())
                if new_id is None:
                    unchanged += 1
                else:
                    stored.append(new_id)
            changed = [r["item"] for r in rows if r["kind"] == "override"] if stored else []
            if me["role"] == "admin" and changed:  # an admin's override moves every reviewer's sheet
                self.audit(con, me["name"], "override", cid, {"items": changed, "source": source})
        return {"stored": len(stored), "unchanged": unchanged, "review_ids": stored}

    def _append(
        self, con: Connection, cid: str, run_id: Optional[int], reviewer_id: int, r: Record, source: str, at: str
    ) -> Optional[int]:
        old = _q(
            con,
            "SELECT id, points, comment, reason FROM reviews WHERE candidate_id = :c AND item_id = :i "
            "AND reviewer_id = :w AND kind = :k AND superseded_by IS NULL",
            c=cid,
            i=r["item"],
            w=reviewer_id,
            k=r["kind"],
        ).first()
        if (
            old
            and abs(old["points"] - r["points"]) < 1e-9
            and old["comment"] == r["comment"]
            and old["reason"] == r["reason"]
        ):
            return None
        new_id: int = _q(
            con,
            "INSERT INTO reviews (candidate_id, run_id, reviewer_id, item_id, kind, level, share, points, "
            "comment, reason, rubric_id, rubric_sha256, source, created_at) VALUES (:c, :run, :w, :i, :k, "
            ":level, :share, :points, :comment, :reason, :rid, :rsha, :source, :at) RETURNING id",
            c=cid,
            run=run_id,
            w=reviewer_id,
            i=r["item"],
            k=r["kind"],
            level=r.get("level"),
            share=r.get("share"),
            points=r["points"],
            comment=r["comment"],
            reason=r["reason"],
            rid=self.rubric.id,
            rsha=self.rubric.sha256,
            source=source,
            at=at,
        ).scalar_one()
        if old:
            _q(con, "UPDATE reviews SET superseded_by = :n WHERE id = :o", n=new_id, o=old["id"])
        return new_id

    def reviews(self, cid: str, reviewer: Optional[str] = None) -> list[Review]:
        """Standing (not superseded) reviews of a candidate; one reviewer's only if named."""
        q = (
            "SELECT v.*, w.name FROM reviews v JOIN reviewers w ON w.id = v.reviewer_id "
            "WHERE v.candidate_id = :c AND v.superseded_by IS NULL"
        )
        args: dict[str, Any] = {"c": cid}
        if reviewer is not None:
            q += " AND w.name = :n"
            args["n"] = reviewer
        with self._read() as con:
            rows = _q(con, q + " ORDER BY v.id", **args).all()
        return [self._review(r) for r in rows]

    def finalize(self, cid: str, by: str) -> None:
        check_candidate_id(cid)
        if not self.has_candidate(cid):
            raise InvalidReview(f"no such candidate: {cid}", 404)
        with self._tx() as con:
            if _q(con, "SELECT 1 FROM finalized WHERE candidate_id = :c", c=cid).first() is None:
                _q(con, 'INSERT INTO finalized (candidate_id, at, "by") VALUES (:c, :t, :b)', c=cid, t=now(), b=by)

    def finalized_ids(self) -> set[str]:
        """Every finalised candidate's id, in one query (a page listing all candidates)."""
        with self._read() as con:
            return {r["candidate_id"] for r in _q(con, "SELECT candidate_id FROM finalized")}

    def is_finalized(self, cid: str) -> bool:
        with self._read() as con:
            return _q(con, "SELECT 1 FROM finalized WHERE candidate_id = :c", c=cid).first() is not None

    # --- the sheet ------------------------------------------------------------------
    # Every candidate's sheet in a few queries, none per candidate and no report parsed (a
    # report is megabytes; a page lists every candidate): the shown runs from run_summaries, their sheet_json (tens of kB, kept parsed), all standing
    # reviews at once, the finalised set. The bench reasons on the sheet come from the masked
    # report, unblinded or not (an unblinded sheet names the candidate beside them anyway).
    def _sheet_docs(self, con: Connection, run_ids: list[int]) -> dict[int, Record]:
        out = {rid: doc for rid in run_ids for doc in [self._sheet_cache.get(rid)] if doc is not None}
        need = [rid for rid in run_ids if rid not in out]
        if need:
            for r in con.execute(
                expanding("SELECT run_id, sheet_json FROM run_summaries WHERE run_id IN :ids", "ids"),
                {"ids": need},
            ).mappings():
                out[r["run_id"]] = self._sheet_cache.put(r["run_id"], json.loads(r["sheet_json"]))
        return out

    @staticmethod
    def _review(r: RowMapping) -> Review:
        return Review(
            r["name"],
            r["item_id"],
            r["kind"],
            r["points"],
            r["share"],
            r["comment"],
            r["reason"],
            r["created_at"],
            r["id"],
        )

    def _standing_reviews(self, con: Connection, cids: Optional[list[str]]) -> dict[str, list[Review]]:
        q = "SELECT v.*, w.name FROM reviews v JOIN reviewers w ON w.id = v.reviewer_id WHERE v.superseded_by IS NULL"
        rows = (
            con.execute(expanding(q + " AND v.candidate_id IN :cids ORDER BY v.id", "cids"), {"cids": cids})
            if cids is not None
            else con.execute(sa.text(q + " ORDER BY v.id"))
        ).mappings()
        out: dict[str, list[Review]] = {}
        for r in rows:
            out.setdefault(r["candidate_id"], []).append(self._review(r))
        return out

    def _sheets(
        self, cids: Optional[list[str]], unblind: bool, blind_for: Optional[tuple[str, set[str]]] = None
    ) -> list[CandidateSheet]:
        """The sheets; `blind_for` (a reviewer's name, the finalised candidates they still
        score blind): that reviewer's view, where a sheet not final for them is built from
        their own reviews alone (no trace of anyone else's grade or override, nor a count)."""
        self._catch_up()
        with self._read() as con:
            ids = cids if cids is not None else [r["id"] for r in _q(con, "SELECT id FROM candidates ORDER BY id")]
            shown = self._shown_runs(con, cids)
            docs = self._sheet_docs(con, [r["run_id"] for r in shown.values()])
            reviews = self._standing_reviews(con, cids)
            fin = {r["candidate_id"]: r["at"] for r in _q(con, "SELECT candidate_id, at FROM finalized")}
            labels = (
                {r["candidate_id"]: r["label"] for r in _q(con, "SELECT candidate_id, label FROM candidate_labels")}
                if unblind
                else {}
            )
        out = []
        for c in ids:
            run = shown.get(c)
            # a finalised sheet is the reviews standing when it was finalised (a finalised anchor's
            # later calibration scores are compared with the anchor, store/anchors.py, not counted)
            revs = [r for r in reviews.get(c, []) if c not in fin or r.created_at <= fin[c]]
            own = blind_for is not None and (c not in fin or c in blind_for[1])
            if blind_for is not None and own:
                revs = [r for r in reviews.get(c, []) if r.reviewer == blind_for[0]]
            sheet = build_sheet(
                self.rubric,
                c,
                docs.get(run["run_id"]) if run else None,
                revs,
                label=labels.get(c),
                finalized=c in fin and not own,
                run_id=run["run_id"] if run else None,
            )
            # one reviewer's own work is no total: the same line on every open sheet (no trace)
            out.append(replace(sheet, total=None, missing=[*sheet.missing, OWN_ONLY]) if own else sheet)
        return out

    def sheet(self, cid: str, *, unblind: bool = False) -> CandidateSheet:
        return self._sheets([cid], unblind)[0]

    def sheets(self, *, unblind: bool = False) -> list[CandidateSheet]:
        return self._sheets(None, unblind)

    def own_sheets(self, name: str, still_open: set[str]) -> list[CandidateSheet]:
        """Every sheet as reviewer `name` may see it before finalisation: their own work only
        (see _sheets); a final sheet (not one of `still_open`) in full."""
        return self._sheets(None, False, (name, still_open))

    def graded_items(self, name: str) -> dict[str, set[str]]:
        """candidate id → the items this reviewer has standing grades on (one query for all;
        the blind sheet hides others' scores until a reviewer has graded every item)."""
        out: dict[str, set[str]] = {}
        with self._read() as con:
            for r in _q(
                con,
                "SELECT v.candidate_id, v.item_id FROM reviews v JOIN reviewers w ON w.id = v.reviewer_id "
                "WHERE w.name = :n AND v.kind = 'grade' AND v.superseded_by IS NULL",
                n=name,
            ):
                out.setdefault(r["candidate_id"], set()).add(r["item_id"])
        return out

    # --- export / rebuild -------------------------------------------------------------
    def export_reviews(self) -> list[Record]:
        """Every review ever stored (history included), in order, with provenance."""
        with self._read() as con:
            rows = _q(
                con,
                "SELECT v.*, w.name, w.seat, c.bench_id FROM reviews v JOIN reviewers w ON w.id = v.reviewer_id "
                "JOIN candidates c ON c.id = v.candidate_id ORDER BY v.id",
            ).all()
        keys = (
            "candidate_id",
            "item_id",
            "kind",
            "level",
            "share",
            "points",
            "comment",
            "reason",
            "rubric_id",
            "rubric_sha256",
            "source",
            "created_at",
        )
        return [
            {
                **{k: r[k] for k in keys},
                "reviewer": r["name"],
                "seat": r["seat"],
                # the bench's id of the file (its hash prefix): a store rebuilt from the run
                # folders gives the candidate a new random id; this finds it again
                "bench_id": r["bench_id"],
                "superseded": r["superseded_by"] is not None,
            }
            for r in rows
        ]

    @staticmethod
    def _imported_candidate(con: Connection, r: Record) -> str:
        """The store's id of an exported review's candidate: by its bench id (the file),
        else by the id it had."""
        found = _q(
            con,
            "SELECT id FROM candidates WHERE id = :c OR bench_id = :b ORDER BY bench_id = :b DESC",
            c=r["candidate_id"],
            b=r.get("bench_id") or r["candidate_id"],
        ).first()
        if found is None:
            raise UserError(f"review of unknown candidate {r['candidate_id']}: import its run first")
        cid: str = found["id"]
        return cid

    def import_reviews(self, reviews: list[Record]) -> int:
        """Replay exported reviews (oldest first); already present ones are skipped."""
        n = 0
        with self._tx() as con:
            self.adopt_ids(con, {(r["candidate_id"], r.get("bench_id")) for r in reviews})
            for r in sorted(reviews, key=lambda r: r["created_at"]):
                if r.get("rubric_id") != self.rubric.id:
                    raise UserError(
                        f"review of {r.get('candidate_id')} names rubric {r.get('rubric_id')}, "
                        f"this store holds {self.rubric.id}"
                    )
                r = {**r, "candidate_id": self._imported_candidate(con, r)}
                w = _q(con, "SELECT id FROM reviewers WHERE name = :n", n=r["reviewer"]).first()
                if w is None:
                    taken = (
                        r.get("seat") is not None
                        and _q(con, "SELECT 1 FROM reviewers WHERE seat = :s", s=r["seat"]).first() is not None
                    )
                    seat = (
                        r.get("seat")
                        if r.get("seat") is not None and not taken
                        else _q(con, "SELECT COALESCE(MAX(seat), -1) + 1 AS s FROM reviewers").scalar_one()
                    )
                    wid = _q(
                        con,
                        "INSERT INTO reviewers (name, seat, created_at) VALUES (:n, :s, :t) RETURNING id",
                        n=r["reviewer"],
                        s=seat,
                        t=r["created_at"],
                    ).scalar_one()
                else:
                    wid = w["id"]
                dup = _q(
                    con,
                    "SELECT 1 FROM reviews WHERE candidate_id = :c AND item_id = :i AND reviewer_id = :w "
                    "AND kind = :k AND created_at = :t",
                    c=r["candidate_id"],
                    i=r["item_id"],
                    w=wid,
                    k=r["kind"],
                    t=r["created_at"],
                ).first()
                if dup:
                    continue
                row = {
                    "item": r["item_id"],
                    "kind": r["kind"],
                    "level": r.get("level"),
                    "share": r.get("share"),
                    "points": r["points"],
                    "comment": r.get("comment") or "",
                    "reason": r.get("reason") or "",
                }
                src = str(r.get("source") or "")
                src = src if src.startswith("import") else f"import:{src}" if src else "import"
                if self._append(con, r["candidate_id"], None, wid, row, src, r["created_at"]) is not None:
                    n += 1
        return n

    def labels(self) -> dict[str, str]:
        """id → label. Only for unblinding (`sheet --unblind`)."""
        with self._read() as con:
            return {r["candidate_id"]: r["label"] for r in _q(con, "SELECT candidate_id, label FROM candidate_labels")}
