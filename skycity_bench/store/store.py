"""The review store: candidates (anonymous ids; labels apart), runs (report.json as imported,
plus an index of the run's files), reviewers and their reviews — in one SQLite file (the
default) or one PostgreSQL database shared by several machines (issue 19), through one
SQLAlchemy Core code path (db.py makes the engine and upgrades the schema).

Everything in it can be rebuilt from the run folders and an export of the reviews
(`export_reviews` / `import_reviews`): the reports stay the source of truth, reviews are
appended with provenance (reviewer, time, rubric id and hash, source) and a revision
supersedes the old row instead of overwriting it.

A run's files are indexed by number and served from its run folder (runs.storage 'disk'), or
from the database itself (storage 'db': a queue worker's run, its files chunked into
file_chunks so the review app needs no shared disk).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import mimetypes
import random
import secrets as _secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import sqlalchemy as sa
from pydantic import ValidationError
from sqlalchemy.engine import Connection

from ..errors import UserError
from ..report import Report
from ..rubric import Rubric, find_rubric, load_rubric
from ..sheet import CandidateSheet, Review, build_sheet
from .. import masking
from . import blind
from .db import Database, is_postgres, migrate, open_database
from .validate import InvalidReview, check_candidate_id, check_reviewer_name, validate_submission

DEFAULT_DB = Path("recordings") / "reviews.sqlite"
SKIP_FILES = {"report.json"}
CHUNK_BYTES = 1 << 20     # a run file kept in the database is split into rows of this size


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="microseconds")


class _Rows:
    """A result read as mappings (row["column"]), or as one scalar."""

    def __init__(self, result):
        self.result = result

    def first(self):
        return self.result.mappings().first()

    def all(self):
        return self.result.mappings().all()

    def __iter__(self):
        return iter(self.result.mappings())

    def scalar_one(self):
        return self.result.scalar_one()


def _q(con: Connection, sql: str, **params: Any) -> _Rows:
    return _Rows(con.execute(sa.text(sql), params))


@dataclass
class ImportResult:
    candidate_id: str
    run_id: int
    new: bool
    files: int


@dataclass
class StoredFile:
    """A run file to serve: on disk (path) or from the database (data)."""

    mime: str
    is_text: bool
    path: Optional[Path] = None
    data: Optional[bytes] = None
    candidate_id: Optional[str] = None     # whose label to mask in a served text file

    def read_bytes(self) -> bytes:
        return self.data if self.data is not None else self.path.read_bytes()


@dataclass
class PreparedRun:
    """A run folder read and checked, ready to be stored (import_run / insert_run)."""

    report: Report
    raw: bytes
    sha256: str
    run_dir: Path
    files: list[tuple[str, str, int, str]]      # relpath, sha256, size, mime


class ReviewStore:
    def __init__(self, target: Path | str = DEFAULT_DB, *, rubric: Optional[Rubric] = None,
                 seed: Optional[int] = None, create: bool = True):
        """`target`: a store file (SQLite) or a postgresql:// URL. create=False refuses a
        place that holds no store yet (sheet), instead of making an empty one."""
        self.db: Database = open_database(target)
        self.path = self.db.path if self.db.path is not None else self.db.display
        migrate(self.db, create=create)
        with self.db.write() as con:
            meta = {r["key"]: r["value"] for r in _q(con, "SELECT key, value FROM meta")}
            if "rubric_id" not in meta:    # a new store: its rubric and queue seed are fixed now
                meta = {"rubric_id": (rubric or load_rubric()).id,
                        "seed": str(seed if seed is not None else _secrets.randbelow(2**31))}
                for k, v in meta.items():
                    _q(con, "INSERT INTO meta (key, value) VALUES (:k, :v)", k=k, v=v)
        if rubric is not None and rubric.id != meta["rubric_id"]:
            raise UserError(f"{self.path}: this store scores under rubric {meta['rubric_id']}, not {rubric.id}")
        if rubric is None:
            p = find_rubric(meta["rubric_id"])
            if p is None:
                raise UserError(f"{self.path}: rubric {meta['rubric_id']} not found under rubrics/")
            rubric = load_rubric(p)
        self.rubric = rubric
        self.seed = int(meta["seed"])

    @property
    def postgres(self) -> bool:
        return self.db.postgres

    def close(self) -> None:
        self.db.dispose()

    # --- connections --------------------------------------------------------------
    def _read(self):
        return self.db.read()

    def _tx(self):
        """One write transaction; writers queue (db.Database.write)."""
        return self.db.write()

    # --- runs -----------------------------------------------------------------------
    def prepare_run(self, path: Path | str) -> PreparedRun:
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
        try:
            check_candidate_id(report.candidate.id)
        except InvalidReview:
            raise UserError(f"{report_path}: candidate.id {report.candidate.id!r} is not an anonymous bench id") from None
        run_dir = report_path.parent.resolve()
        return PreparedRun(report, raw, hashlib.sha256(raw).hexdigest(), run_dir, list(self._scan_files(run_dir)))

    def import_run(self, path: Path | str) -> ImportResult:
        prep = self.prepare_run(path)
        with self._tx() as con:
            return self.insert_run(con, prep)

    def insert_run(self, con: Connection, prep: PreparedRun, *, storage: str = "disk",
                   run_dir: Optional[str] = None) -> ImportResult:
        """Store a prepared run inside the caller's write transaction. storage 'db' also
        copies every file into file_chunks (the queue's workers), 'disk' indexes them."""
        report, cid = prep.report, prep.report.candidate.id
        row = _q(con, "SELECT sha256 FROM candidates WHERE id = :c", c=cid).first()
        if row is None:
            _q(con, "INSERT INTO candidates (id, sha256, created_at) VALUES (:c, :s, :t)",
               c=cid, s=report.candidate.sha256, t=now())
        elif row["sha256"] != report.candidate.sha256:
            raise UserError(f"{prep.run_dir}: candidate {cid} is already stored with another file hash")
        if report.candidate.label and _q(con, "SELECT 1 FROM candidate_labels WHERE candidate_id = :c",
                                         c=cid).first() is None:
            _q(con, "INSERT INTO candidate_labels (candidate_id, label) VALUES (:c, :l)", c=cid,
               l=report.candidate.label)
        old = _q(con, "SELECT id FROM runs WHERE report_sha256 = :s", s=prep.sha256).first()
        if old is not None:
            return ImportResult(cid, old["id"], False, len(prep.files))
        run_id = _q(con, "INSERT INTO runs (candidate_id, report_sha256, rubric_id, run_dir, started_at, imported_at,"
                         " report_json, storage) VALUES (:c, :s, :r, :d, :st, :t, :j, :storage) RETURNING id",
                    c=cid, s=prep.sha256, r=report.rubric_id, d=run_dir or str(prep.run_dir),
                    st=report.started_at or "", t=now(), j=prep.raw.decode("utf-8"), storage=storage).scalar_one()
        for rel, sha, size, mime in prep.files:
            fid = _q(con, "INSERT INTO run_files (run_id, relpath, sha256, size, mime) VALUES (:r, :p, :s, :n, :m)"
                          " RETURNING id", r=run_id, p=rel, s=sha, n=size, m=mime).scalar_one()
            if storage == "db":
                with (prep.run_dir / rel).open("rb") as f:
                    for seq, chunk in enumerate(iter(lambda: f.read(CHUNK_BYTES), b"")):
                        _q(con, "INSERT INTO file_chunks (file_id, seq, data) VALUES (:f, :q, :d)",
                           f=fid, q=seq, d=chunk)
        return ImportResult(cid, run_id, True, len(prep.files))

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
            return [r["id"] for r in _q(con, "SELECT id FROM candidates ORDER BY id")]

    def has_candidate(self, cid: str) -> bool:
        with self._read() as con:
            return _q(con, "SELECT 1 FROM candidates WHERE id = :c", c=cid).first() is not None

    def _secrets(self, con, cid: str) -> list[str]:
        row = _q(con, "SELECT label FROM candidate_labels WHERE candidate_id = :c", c=cid).first()
        return blind.secrets_of(row["label"] if row else None)

    def _all_secrets(self, con) -> list[str]:
        out: set[str] = set()
        for r in _q(con, "SELECT label FROM candidate_labels"):
            out.update(blind.secrets_of(r["label"]))
        return sorted(out, key=len, reverse=True)

    def _blind_report(self, con, run) -> dict:
        """A run's report as reviewers see it (masking.py: the candidate's own label(s) and
        hash, whole words, values only), parsed and masked once per run: kept by store, run
        id, report hash and label, so a rebuilt store or a new label never gets stale data."""
        label = self._label(con, run["candidate_id"])
        return masking.BLIND_REPORTS.get(
            (str(self.path), run["id"], run["report_sha256"], label),
            lambda: json.loads(_q(con, "SELECT report_json FROM runs WHERE id = :r", r=run["id"]).scalar_one()),
            label)

    @staticmethod
    def _label(con, cid: str) -> Optional[str]:
        row = _q(con, "SELECT label FROM candidate_labels WHERE candidate_id = :c", c=cid).first()
        return row["label"] if row else None

    def _latest(self, con, cid: str):
        return _q(con, "SELECT id, candidate_id, report_sha256 FROM runs WHERE candidate_id = :c "
                       "ORDER BY started_at DESC, id DESC LIMIT 1", c=cid).first()

    def latest_run(self, cid: str) -> Optional[dict]:
        """The candidate's latest run, blind: report without label, masked; files by id."""
        with self._read() as con:
            r = self._latest(con, cid)
            if r is None:
                return None
            report = self._blind_report(con, r)
            m = masking.masker(self._label(con, cid))
            files = [{"id": f["id"], "name": m.text(f["relpath"]), "mime": f["mime"], "size": f["size"]}
                     for f in _q(con, "SELECT id, relpath, mime, size FROM run_files WHERE run_id = :r ORDER BY relpath",
                                 r=r["id"])]
            return {"run_id": r["id"], "report": report, "files": files}

    def file(self, file_id: int) -> StoredFile:
        """A run file to serve (from its run folder, or from the database); InvalidReview
        404 when unknown or gone."""
        with self._read() as con:
            f = _q(con, "SELECT f.id, f.relpath, f.mime, f.size, r.run_dir, r.storage, r.candidate_id FROM run_files f"
                        " JOIN runs r ON r.id = f.run_id WHERE f.id = :f", f=file_id).first()
            if f is None:
                raise InvalidReview("no such file", 404)
            is_text = f["mime"].startswith("text/") or f["mime"] == "application/json"
            if f["storage"] == "db":
                data = b"".join(bytes(c["data"]) for c in
                                _q(con, "SELECT data FROM file_chunks WHERE file_id = :f ORDER BY seq", f=file_id))
                if len(data) != f["size"]:
                    raise InvalidReview("the run's file is incomplete in the store", 404)
                return StoredFile(f["mime"], is_text, data=data, candidate_id=f["candidate_id"])
        root = Path(f["run_dir"]).resolve()
        p = (root / f["relpath"]).resolve()
        if root not in p.parents or not p.is_file():
            raise InvalidReview("the run's file is no longer on disk", 404)
        return StoredFile(f["mime"], is_text, path=p, candidate_id=f["candidate_id"])

    def mask_for_serving(self, text: str, cid: Optional[str] = None) -> str:
        """A served text file, masked with its own candidate's label (StoredFile.candidate_id)."""
        with self._read() as con:
            if cid is not None:
                return masking.masker(self._label(con, cid)).text(text)
            return blind.mask_text(text, self._all_secrets(con))

    # --- reviewers ------------------------------------------------------------------
    def sign_in(self, name: str) -> dict:
        name = check_reviewer_name(name)
        with self._tx() as con:
            row = _q(con, "SELECT id, name, seat FROM reviewers WHERE name = :n", n=name).first()
            if row is None:
                seat = _q(con, "SELECT COALESCE(MAX(seat), -1) + 1 AS s FROM reviewers").scalar_one()
                rid = _q(con, "INSERT INTO reviewers (name, seat, created_at) VALUES (:n, :s, :t) RETURNING id",
                         n=name, s=seat, t=now()).scalar_one()
                return {"id": rid, "name": name, "seat": seat}
            return dict(row)

    def reviewer(self, name: str) -> dict:
        with self._read() as con:
            row = _q(con, "SELECT id, name, seat FROM reviewers WHERE name = :n", n=name).first()
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
            if _q(con, "SELECT 1 FROM finalized WHERE candidate_id = :c", c=cid).first():
                raise InvalidReview(f"the sheet of {cid} is finalised: scores can no longer change", 409)
            run = _q(con, "SELECT id FROM runs WHERE candidate_id = :c ORDER BY started_at DESC, id DESC LIMIT 1",
                     c=cid).first()
            for r in rows:
                new_id = self._append(con, cid, run["id"] if run else None, me["id"], r, source, now())
                if new_id is None:
                    unchanged += 1
                else:
                    stored.append(new_id)
        return {"stored": len(stored), "unchanged": unchanged, "review_ids": stored}

    def _append(self, con, cid, run_id, reviewer_id, r: dict, source: str, at: str) -> Optional[int]:
        old = _q(con, "SELECT id, points, comment, reason FROM reviews WHERE candidate_id = :c AND item_id = :i "
                      "AND reviewer_id = :w AND kind = :k AND superseded_by IS NULL",
                 c=cid, i=r["item"], w=reviewer_id, k=r["kind"]).first()
        if old and abs(old["points"] - r["points"]) < 1e-9 and old["comment"] == r["comment"] \
                and old["reason"] == r["reason"]:
            return None
        new_id = _q(con, "INSERT INTO reviews (candidate_id, run_id, reviewer_id, item_id, kind, level, share, points, "
                         "comment, reason, rubric_id, rubric_sha256, source, created_at) VALUES (:c, :run, :w, :i, :k, "
                         ":level, :share, :points, :comment, :reason, :rid, :rsha, :source, :at) RETURNING id",
                    c=cid, run=run_id, w=reviewer_id, i=r["item"], k=r["kind"], level=r.get("level"),
                    share=r.get("share"), points=r["points"], comment=r["comment"], reason=r["reason"],
                    rid=self.rubric.id, rsha=self.rubric.sha256, source=source, at=at).scalar_one()
        if old:
            _q(con, "UPDATE reviews SET superseded_by = :n WHERE id = :o", n=new_id, o=old["id"])
        return new_id

    def reviews(self, cid: str, reviewer: Optional[str] = None) -> list[Review]:
        """Standing (not superseded) reviews of a candidate; one reviewer's only if named."""
        q = ("SELECT v.*, w.name FROM reviews v JOIN reviewers w ON w.id = v.reviewer_id "
             "WHERE v.candidate_id = :c AND v.superseded_by IS NULL")
        args: dict[str, Any] = {"c": cid}
        if reviewer is not None:
            q += " AND w.name = :n"
            args["n"] = reviewer
        with self._read() as con:
            rows = _q(con, q + " ORDER BY v.id", **args).all()
        return [Review(r["name"], r["item_id"], r["kind"], r["points"], r["share"], r["comment"], r["reason"],
                       r["created_at"], r["id"]) for r in rows]

    def finalize(self, cid: str, by: str) -> None:
        check_candidate_id(cid)
        if not self.has_candidate(cid):
            raise InvalidReview(f"no such candidate: {cid}", 404)
        with self._tx() as con:
            if _q(con, "SELECT 1 FROM finalized WHERE candidate_id = :c", c=cid).first() is None:
                _q(con, 'INSERT INTO finalized (candidate_id, at, "by") VALUES (:c, :t, :b)', c=cid, t=now(), b=by)

    def is_finalized(self, cid: str) -> bool:
        with self._read() as con:
            return _q(con, "SELECT 1 FROM finalized WHERE candidate_id = :c", c=cid).first() is not None

    # --- the sheet ------------------------------------------------------------------
    def sheet(self, cid: str, *, unblind: bool = False) -> CandidateSheet:
        with self._read() as con:
            run = self._latest(con, cid)
            label = self._label(con, cid) if unblind else None
            fin = _q(con, "SELECT 1 FROM finalized WHERE candidate_id = :c", c=cid).first() is not None
            if run is None:
                report = None
            elif unblind:
                report = json.loads(_q(con, "SELECT report_json FROM runs WHERE id = :r", r=run["id"]).scalar_one())
            else:
                # bench reasons end up in the sheet's missing list: blind them like any served text
                report = self._blind_report(con, run)
        return build_sheet(self.rubric, cid, report, self.reviews(cid), label=label, finalized=fin,
                           run_id=run["id"] if run else None)

    def sheets(self, *, unblind: bool = False) -> list[CandidateSheet]:
        return [self.sheet(c, unblind=unblind) for c in self.candidates()]

    # --- export / rebuild -------------------------------------------------------------
    def export_reviews(self) -> list[dict]:
        """Every review ever stored (history included), in order, with provenance."""
        with self._read() as con:
            rows = _q(con, "SELECT v.*, w.name, w.seat FROM reviews v JOIN reviewers w ON w.id = v.reviewer_id "
                           "ORDER BY v.id").all()
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
                if _q(con, "SELECT 1 FROM candidates WHERE id = :c", c=r["candidate_id"]).first() is None:
                    raise UserError(f"review of unknown candidate {r['candidate_id']}: import its run first")
                w = _q(con, "SELECT id FROM reviewers WHERE name = :n", n=r["reviewer"]).first()
                if w is None:
                    taken = r.get("seat") is not None and \
                        _q(con, "SELECT 1 FROM reviewers WHERE seat = :s", s=r["seat"]).first() is not None
                    seat = r.get("seat") if r.get("seat") is not None and not taken else \
                        _q(con, "SELECT COALESCE(MAX(seat), -1) + 1 AS s FROM reviewers").scalar_one()
                    wid = _q(con, "INSERT INTO reviewers (name, seat, created_at) VALUES (:n, :s, :t) RETURNING id",
                             n=r["reviewer"], s=seat, t=r["created_at"]).scalar_one()
                else:
                    wid = w["id"]
                dup = _q(con, "SELECT 1 FROM reviews WHERE candidate_id = :c AND item_id = :i AND reviewer_id = :w "
                              "AND kind = :k AND created_at = :t", c=r["candidate_id"], i=r["item_id"], w=wid,
                         k=r["kind"], t=r["created_at"]).first()
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
            return {r["candidate_id"]: r["label"] for r in _q(con, "SELECT candidate_id, label FROM candidate_labels")}


__all__ = ["ReviewStore", "ImportResult", "StoredFile", "PreparedRun", "DEFAULT_DB", "is_postgres"]
