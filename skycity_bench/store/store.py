"""The review store: one SQLite file holding candidates (anonymous ids; labels apart), runs
(report.json as imported, plus an index of the run's files), reviewers and their reviews.

Everything in it can be rebuilt from the run folders and an export of the reviews
(`export_reviews` / `import_reviews`): the reports stay the source of truth, reviews are
appended with provenance (reviewer, time, rubric id and hash, source) and a revision
supersedes the old row instead of overwriting it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import mimetypes
import random
import secrets as _secrets
import sqlite3
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Optional

from pydantic import ValidationError

from ..errors import UserError
from ..report import Report
from ..rubric import Rubric, find_rubric, load_rubric
from ..sheet import CandidateSheet, Review, build_sheet
from . import blind
from .schema import connect, migrate
from .validate import InvalidReview, check_candidate_id, check_reviewer_name, validate_submission

DEFAULT_DB = Path("recordings") / "reviews.sqlite"
SKIP_FILES = {"report.json"}


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="microseconds")


@dataclass
class ImportResult:
    candidate_id: str
    run_id: int
    new: bool
    files: int


class ReviewStore:
    def __init__(self, path: Path | str = DEFAULT_DB, *, rubric: Optional[Rubric] = None, seed: Optional[int] = None):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        con = connect(self.path)
        try:
            migrate(con)
        finally:
            con.close()
        with self._tx() as con:
            meta = {r["key"]: r["value"] for r in con.execute("SELECT key, value FROM meta")}
            if "rubric_id" not in meta:    # a new store: its rubric and queue seed are fixed now
                meta = {"rubric_id": (rubric or load_rubric()).id,
                        "seed": str(seed if seed is not None else _secrets.randbelow(2**31))}
                con.executemany("INSERT INTO meta VALUES (?, ?)", list(meta.items()))
        if rubric is not None and rubric.id != meta["rubric_id"]:
            raise UserError(f"{self.path}: this store scores under rubric {meta['rubric_id']}, not {rubric.id}")
        if rubric is None:
            p = find_rubric(meta["rubric_id"])
            if p is None:
                raise UserError(f"{self.path}: rubric {meta['rubric_id']} not found under rubrics/")
            rubric = load_rubric(p)
        self.rubric = rubric
        self.seed = int(meta["seed"])

    # --- connections --------------------------------------------------------------
    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        con = connect(self.path)
        try:
            yield con
        finally:
            con.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction. BEGIN IMMEDIATE takes the write lock up front, so two
        submissions at once queue (busy_timeout) instead of one failing half way."""
        con = connect(self.path)
        try:
            con.execute("BEGIN IMMEDIATE")
            try:
                yield con
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
        finally:
            con.close()

    # --- runs -----------------------------------------------------------------------
    def import_run(self, path: Path | str) -> ImportResult:
        path = Path(path)
        report_path = path / "report.json" if path.is_dir() else path
        if not report_path.is_file():
            raise UserError(f"{path}: no report.json here")
        raw = report_path.read_bytes()
        try:
            report = Report.model_validate(json.loads(raw))
        except (ValueError, ValidationError) as e:
            raise UserError(f"{report_path}: not a skycity-bench report ({str(e).splitlines()[0]})") from None
        if report.rubric_id != self.rubric.id:
            raise UserError(f"{report_path}: scored under rubric {report.rubric_id}; this store holds "
                            f"{self.rubric.id} (use another --db)")
        cid = report.candidate.id
        try:
            check_candidate_id(cid)
        except InvalidReview:
            raise UserError(f"{report_path}: candidate.id {cid!r} is not an anonymous bench id") from None
        run_dir = report_path.parent.resolve()
        files = list(self._scan_files(run_dir))
        sha = hashlib.sha256(raw).hexdigest()
        with self._tx() as con:
            row = con.execute("SELECT sha256 FROM candidates WHERE id = ?", (cid,)).fetchone()
            if row is None:
                con.execute("INSERT INTO candidates VALUES (?, ?, ?)", (cid, report.candidate.sha256, now()))
            elif row["sha256"] != report.candidate.sha256:
                raise UserError(f"{report_path}: candidate {cid} is already stored with another file hash")
            if report.candidate.label:
                con.execute("INSERT OR IGNORE INTO candidate_labels VALUES (?, ?)", (cid, report.candidate.label))
            old = con.execute("SELECT id FROM runs WHERE report_sha256 = ?", (sha,)).fetchone()
            if old is not None:
                return ImportResult(cid, old["id"], False, len(files))
            cur = con.execute(
                "INSERT INTO runs (candidate_id, report_sha256, rubric_id, run_dir, started_at, imported_at, report_json)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (cid, sha, report.rubric_id, str(run_dir), report.started_at or "", now(), raw.decode("utf-8")))
            run_id = cur.lastrowid
            con.executemany("INSERT INTO run_files (run_id, relpath, sha256, size, mime) VALUES (?, ?, ?, ?, ?)",
                            [(run_id, *f) for f in files])
        return ImportResult(cid, run_id, True, len(files))

    @staticmethod
    def _scan_files(run_dir: Path):
        for p in sorted(run_dir.rglob("*")):
            rel = p.relative_to(run_dir).as_posix()
            if not p.is_file() or p.is_symlink() or rel in SKIP_FILES or any(s.startswith(".") for s in rel.split("/")):
                continue
            h = hashlib.sha256()
            with p.open("rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
            yield rel, h.hexdigest(), p.stat().st_size, mimetypes.guess_type(p.name)[0] or "application/octet-stream"

    def candidates(self) -> list[str]:
        with self._read() as con:
            return [r["id"] for r in con.execute("SELECT id FROM candidates ORDER BY id")]

    def has_candidate(self, cid: str) -> bool:
        with self._read() as con:
            return con.execute("SELECT 1 FROM candidates WHERE id = ?", (cid,)).fetchone() is not None

    def _secrets(self, con, cid: str) -> list[str]:
        row = con.execute("SELECT label FROM candidate_labels WHERE candidate_id = ?", (cid,)).fetchone()
        return blind.secrets_of(row["label"] if row else None)

    def _all_secrets(self, con) -> list[str]:
        out: set[str] = set()
        for r in con.execute("SELECT label FROM candidate_labels"):
            out.update(blind.secrets_of(r["label"]))
        return sorted(out, key=len, reverse=True)

    def latest_run(self, cid: str) -> Optional[dict]:
        """The candidate's latest run, blind: report without label, masked; files by id."""
        with self._read() as con:
            r = con.execute("SELECT id, report_json FROM runs WHERE candidate_id = ? ORDER BY started_at DESC, id DESC"
                            " LIMIT 1", (cid,)).fetchone()
            if r is None:
                return None
            sec = self._all_secrets(con)
            files = [{"id": f["id"], "name": blind.mask_text(f["relpath"], sec), "mime": f["mime"], "size": f["size"]}
                     for f in con.execute("SELECT id, relpath, mime, size FROM run_files WHERE run_id = ? ORDER BY relpath",
                                          (r["id"],))]
            return {"run_id": r["id"], "report": blind.blind_report(json.loads(r["report_json"]), sec), "files": files}

    def file(self, file_id: int) -> tuple[Path, str, bool]:
        """(path on disk, mime, is_text) of a run file; UserError when unknown or gone."""
        with self._read() as con:
            f = con.execute("SELECT f.relpath, f.mime, r.run_dir FROM run_files f JOIN runs r ON r.id = f.run_id"
                            " WHERE f.id = ?", (file_id,)).fetchone()
        if f is None:
            raise InvalidReview("no such file", 404)
        root = Path(f["run_dir"]).resolve()
        p = (root / f["relpath"]).resolve()
        if root not in p.parents or not p.is_file():
            raise InvalidReview("the run's file is no longer on disk", 404)
        return p, f["mime"], f["mime"].startswith("text/") or f["mime"] == "application/json"

    def mask_for_serving(self, text: str) -> str:
        with self._read() as con:
            return blind.mask_text(text, self._all_secrets(con))

    # --- reviewers ------------------------------------------------------------------
    def sign_in(self, name: str) -> dict:
        name = check_reviewer_name(name)
        with self._tx() as con:
            row = con.execute("SELECT id, name, seat FROM reviewers WHERE name = ?", (name,)).fetchone()
            if row is None:
                seat = con.execute("SELECT COALESCE(MAX(seat), -1) + 1 FROM reviewers").fetchone()[0]
                cur = con.execute("INSERT INTO reviewers (name, seat, created_at) VALUES (?, ?, ?)", (name, seat, now()))
                return {"id": cur.lastrowid, "name": name, "seat": seat}
            return dict(row)

    def reviewer(self, name: str) -> dict:
        with self._read() as con:
            row = con.execute("SELECT id, name, seat FROM reviewers WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise InvalidReview(f"unknown reviewer {name!r}: sign in first", 404)
        return dict(row)

    def order_for(self, seat: int) -> list[str]:
        """Queue order: shuffled with the store's seed per pair of seats; the second
        reviewer of each pair gets the reverse of the first one's order."""
        ids = self.candidates()
        random.Random(f"{self.seed}:{seat // 2}").shuffle(ids)
        return ids[::-1] if seat % 2 else ids

    def queue(self, name: str) -> list[dict]:
        me = self.reviewer(name)
        graded = [i.id for i in self.rubric.items if i.graded]
        out = []
        for cid in self.order_for(me["seat"]):
            sheet = self.sheet(cid)
            mine = {r.item_id for r in self.reviews(cid) if r.reviewer == name and r.kind == "grade"}
            wants = [i.item_id for i in sheet.items if "needs third reviewer" in i.flags and i.item_id not in mine]
            out.append({"candidate_id": cid, "scored": len(mine & set(graded)), "to_score": len(graded),
                        "third_reviewer_wanted": wants, "finalized": sheet.finalized})
        return out

    # --- reviews --------------------------------------------------------------------
    def submit(self, cid: str, reviewer: str, rubric_id: str, grades: list[dict] | None = None,
               overrides: list[dict] | None = None, *, source: str = "api") -> dict:
        """Validate the whole submission first, then store it in one transaction: a bad
        entry stores nothing. Unchanged scores are not stored again."""
        check_candidate_id(cid)
        if not self.has_candidate(cid):
            raise InvalidReview(f"no such candidate: {cid}", 404)
        me = self.reviewer(reviewer)
        rows = validate_submission(self.rubric, rubric_id, grades or [], overrides or [])
        stored, unchanged = [], 0
        with self._tx() as con:
            if con.execute("SELECT 1 FROM finalized WHERE candidate_id = ?", (cid,)).fetchone():
                raise InvalidReview(f"the sheet of {cid} is finalised: scores can no longer change", 409)
            run = con.execute("SELECT id FROM runs WHERE candidate_id = ? ORDER BY started_at DESC, id DESC LIMIT 1",
                              (cid,)).fetchone()
            for r in rows:
                new_id = self._append(con, cid, run["id"] if run else None, me["id"], r, source, now())
                if new_id is None:
                    unchanged += 1
                else:
                    stored.append(new_id)
        return {"stored": len(stored), "unchanged": unchanged, "review_ids": stored}

    def _append(self, con, cid, run_id, reviewer_id, r: dict, source: str, at: str) -> Optional[int]:
        old = con.execute("SELECT id, points, comment, reason FROM reviews WHERE candidate_id = ? AND item_id = ? "
                          "AND reviewer_id = ? AND kind = ? AND superseded_by IS NULL",
                          (cid, r["item"], reviewer_id, r["kind"])).fetchone()
        if old and abs(old["points"] - r["points"]) < 1e-9 and old["comment"] == r["comment"] \
                and old["reason"] == r["reason"]:
            return None
        cur = con.execute(
            "INSERT INTO reviews (candidate_id, run_id, reviewer_id, item_id, kind, level, share, points, comment, "
            "reason, rubric_id, rubric_sha256, source, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (cid, run_id, reviewer_id, r["item"], r["kind"], r.get("level"), r.get("share"), r["points"],
             r["comment"], r["reason"], self.rubric.id, self.rubric.sha256, source, at))
        if old:
            con.execute("UPDATE reviews SET superseded_by = ? WHERE id = ?", (cur.lastrowid, old["id"]))
        return cur.lastrowid

    def reviews(self, cid: str, reviewer: Optional[str] = None) -> list[Review]:
        """Standing (not superseded) reviews of a candidate; one reviewer's only if named."""
        q = ("SELECT v.*, w.name FROM reviews v JOIN reviewers w ON w.id = v.reviewer_id "
             "WHERE v.candidate_id = ? AND v.superseded_by IS NULL")
        args: list[Any] = [cid]
        if reviewer is not None:
            q += " AND w.name = ?"
            args.append(reviewer)
        with self._read() as con:
            rows = con.execute(q + " ORDER BY v.id", args).fetchall()
        return [Review(r["name"], r["item_id"], r["kind"], r["points"], r["share"], r["comment"], r["reason"],
                       r["created_at"], r["id"]) for r in rows]

    def finalize(self, cid: str, by: str) -> None:
        check_candidate_id(cid)
        if not self.has_candidate(cid):
            raise InvalidReview(f"no such candidate: {cid}", 404)
        with self._tx() as con:
            con.execute("INSERT OR IGNORE INTO finalized VALUES (?, ?, ?)", (cid, now(), by))

    def is_finalized(self, cid: str) -> bool:
        with self._read() as con:
            return con.execute("SELECT 1 FROM finalized WHERE candidate_id = ?", (cid,)).fetchone() is not None

    # --- the sheet ------------------------------------------------------------------
    def sheet(self, cid: str, *, unblind: bool = False) -> CandidateSheet:
        with self._read() as con:
            run = con.execute("SELECT id, report_json FROM runs WHERE candidate_id = ? ORDER BY started_at DESC, id DESC"
                              " LIMIT 1", (cid,)).fetchone()
            label = None
            if unblind:
                row = con.execute("SELECT label FROM candidate_labels WHERE candidate_id = ?", (cid,)).fetchone()
                label = row["label"] if row else None
            fin = con.execute("SELECT 1 FROM finalized WHERE candidate_id = ?", (cid,)).fetchone() is not None
        report = json.loads(run["report_json"]) if run else None
        if report is not None and not unblind:
            # bench reasons end up in the sheet's missing list: blind them like any served text
            with self._read() as con:
                report = blind.blind_report(report, self._all_secrets(con))
        return build_sheet(self.rubric, cid, report, self.reviews(cid), label=label, finalized=fin,
                           run_id=run["id"] if run else None)

    def sheets(self, *, unblind: bool = False) -> list[CandidateSheet]:
        return [self.sheet(c, unblind=unblind) for c in self.candidates()]

    # --- export / rebuild -------------------------------------------------------------
    def export_reviews(self) -> list[dict]:
        """Every review ever stored (history included), in order, with provenance."""
        with self._read() as con:
            rows = con.execute("SELECT v.*, w.name, w.seat FROM reviews v JOIN reviewers w ON w.id = v.reviewer_id "
                               "ORDER BY v.id").fetchall()
        keys = ("candidate_id", "item_id", "kind", "level", "share", "points", "comment", "reason", "rubric_id",
                "rubric_sha256", "source", "created_at")
        return [{**{k: r[k] for k in keys}, "reviewer": r["name"], "seat": r["seat"],
                 "superseded": r["superseded_by"] is not None} for r in rows]

    def import_reviews(self, reviews: list[dict]) -> int:
        """Replay exported reviews (oldest first); already present ones are skipped."""
        n = 0
        with self._tx() as con:
            for r in sorted(reviews, key=lambda r: r["created_at"]):
                if r.get("rubric_id") != self.rubric.id:
                    raise UserError(f"review of {r.get('candidate_id')} names rubric {r.get('rubric_id')}, "
                                    f"this store holds {self.rubric.id}")
                if con.execute("SELECT 1 FROM candidates WHERE id = ?", (r["candidate_id"],)).fetchone() is None:
                    raise UserError(f"review of unknown candidate {r['candidate_id']}: import its run first")
                w = con.execute("SELECT id FROM reviewers WHERE name = ?", (r["reviewer"],)).fetchone()
                if w is None:
                    taken = con.execute("SELECT 1 FROM reviewers WHERE seat = ?", (r.get("seat"),)).fetchone()
                    seat = r.get("seat") if r.get("seat") is not None and not taken else \
                        con.execute("SELECT COALESCE(MAX(seat), -1) + 1 FROM reviewers").fetchone()[0]
                    wid = con.execute("INSERT INTO reviewers (name, seat, created_at) VALUES (?, ?, ?)",
                                      (r["reviewer"], seat, r["created_at"])).lastrowid
                else:
                    wid = w["id"]
                dup = con.execute("SELECT 1 FROM reviews WHERE candidate_id = ? AND item_id = ? AND reviewer_id = ? "
                                  "AND kind = ? AND created_at = ?",
                                  (r["candidate_id"], r["item_id"], wid, r["kind"], r["created_at"])).fetchone()
                if dup:
                    continue
                row = {"item": r["item_id"], "kind": r["kind"], "level": r.get("level"), "share": r.get("share"),
                       "points": r["points"], "comment": r.get("comment") or "", "reason": r.get("reason") or ""}
                src = str(r.get("source") or "")
                src = src if src.startswith("import") else f"import:{src}" if src else "import"
                if self._append(con, r["candidate_id"], None, wid, row, src, r["created_at"]) is not None:
                    n += 1
        return n

    def labels(self) -> dict[str, str]:
        """id → label. Only for unblinding (`sheet --unblind`)."""
        with self._read() as con:
            return {r["candidate_id"]: r["label"] for r in con.execute("SELECT * FROM candidate_labels")}
