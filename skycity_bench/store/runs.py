"""The review store's runs (StoreRuns, a part of ReviewStore: review_store.py): importing a
run folder or a queue worker's run, the artefacts made at import (masked report, summary,
thumbnails), which run a candidate shows, and serving a run's files (from disk or from the
database)."""

from __future__ import annotations

import hashlib
import json
import mimetypes
import os
import secrets
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import sqlalchemy as sa
from pydantic import ValidationError
from sqlalchemy.engine import Connection

from skycity_bench.common import blinding
from skycity_bench.common.errors import UserError
from skycity_bench.reporting.run_report import Report
from skycity_bench.store.artefacts import THUMB_SOURCES, BlindRun, Thumb, blind_run, thumbnail, thumbnail_file
from skycity_bench.store.sql import Record, _q, expanding, now
from skycity_bench.store.store_state import StoreState
from skycity_bench.store.validate import InvalidReview, check_candidate_id

SKIP_FILES = {"report.json"}
CHUNK_BYTES = 1 << 20  # a run file kept in the database is split into rows of this size
THUMB_THREADS = 4  # threads making a run's thumbnails at import (at most the machine's cores)
MAX_REASON = 2000  # an admin's reason (run choice), in characters
FileEntry = tuple[str, str, int, str]  # a run file: relpath, sha256, size, mime


def new_candidate_id() -> str:
    """A candidate's id in the store: random, of the bench's shape (c- and 12 hex digits), so
    it says nothing about the file (the bench's own id is a prefix of the file's hash)."""
    return "c-" + secrets.token_hex(6)


def _shown_because(shown: Optional[Record]) -> str:
    if shown is None:
        return "no run"
    return "picked by an admin" if shown["chosen"] else "most items collected (ties: the latest)"


@dataclass
class ImportResult:
    candidate_id: str  # the store's id (random; the report's candidate.id is its bench_id)
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
    candidate_id: Optional[str] = None  # whose label to mask in a served text file

    def read_bytes(self) -> bytes:
        if self.data is not None:
            return self.data
        if self.path is None:
            raise ValueError("a stored file holds its bytes or its path")
        return self.path.read_bytes()


@dataclass
class PreparedRun:
    """A run folder read and checked, ready to be stored (import_run / insert_run)."""

    report: Report
    raw: bytes
    sha256: str
    run_dir: Path
    files: list[FileEntry]
    # made here, outside the write transaction (artefacts.py): the masked report and the
    # run's small facts, and the thumbnails of its images by relpath
    blind: Optional[BlindRun] = None
    thumbs: dict[str, Thumb] = field(default_factory=dict)
    doc: Optional[Record] = field(default=None, repr=False)  # the report as parsed (to mask again)
    public_id: str = ""  # the store's id the blind artefacts name (see _register_candidate)


class StoreRuns(StoreState):
    """ReviewStore's runs and files."""

    # --- runs -----------------------------------------------------------------------
    def prepare_run(self, path: Path | str) -> PreparedRun:
        path = Path(path)
        report_path = path / "report.json" if path.is_dir() else path
        if not report_path.is_file():
            raise UserError(f"{path}: no report.json here")
        raw = report_path.read_bytes()
        try:
            doc = json.loads(raw)
            report = Report.model_validate(doc)
        except (ValueError, ValidationError) as e:
            raise UserError(f"{report_path}: not a skycity-bench report ({str(e).splitlines()[0]})") from None
        if report.rubric_id != self.rubric.id:
            raise UserError(
                f"{report_path}: scored under rubric {report.rubric_id}; this store holds "
                f"{self.rubric.id} (use another --db)"
            )
        try:
            check_candidate_id(report.candidate.id)
        except InvalidReview:
            raise UserError(
                f"{report_path}: candidate.id {report.candidate.id!r} is not an anonymous bench id"
            ) from None
        run_dir = report_path.parent.resolve()
        files = list(self._scan_files(run_dir))
        public = self._known_id(report.candidate.sha256) or new_candidate_id()
        return PreparedRun(
            report,
            raw,
            hashlib.sha256(raw).hexdigest(),
            run_dir,
            files,
            blind_run(doc, report.candidate.label, report.candidate.sha256, public),
            self._thumbnails(run_dir, files),
            doc,
            public,
        )

    def _known_id(self, sha256: str) -> Optional[str]:
        with self._read() as con:
            row = _q(con, "SELECT id FROM candidates WHERE sha256 = :s", s=sha256).first()
        return row["id"] if row else None

    def _thumbnails(self, run_dir: Path, files: list[FileEntry]) -> dict[str, Thumb]:
        """The run's images' thumbnails by relpath, made on a few threads (OpenCV decodes,
        resizes and encodes without holding the GIL); the same bytes are not resized twice."""
        todo = [(rel, sha, mime) for rel, sha, _size, mime in files if mime in THUMB_SOURCES]
        out = {rel: t for rel, sha, _m in todo for t in [self._thumb_memo.get(sha)] if t is not None}
        need = [(rel, sha, mime) for rel, sha, mime in todo if rel not in out]
        if need:
            with ThreadPoolExecutor(max_workers=max(1, min(THUMB_THREADS, os.cpu_count() or 1))) as pool:
                made = pool.map(lambda job: thumbnail_file(run_dir / job[0], job[2]), need)
                for (rel, sha, _mime), t in zip(need, made):
                    if t is not None:
                        out[rel] = self._thumb_memo.put(sha, t)
        return out

    def import_run(self, path: Path | str) -> ImportResult:
        prep = self.prepare_run(path)
        with self._tx() as con:
            return self.insert_run(con, prep)

    def insert_run(
        self, con: Connection, prep: PreparedRun, *, storage: str = "disk", run_dir: Optional[str] = None
    ) -> ImportResult:
        """Store a prepared run inside the caller's write transaction. storage 'db' also
        copies every file into file_chunks (the queue's workers), 'disk' indexes them."""
        report = prep.report
        cid = self._register_candidate(con, prep)
        old = _q(con, "SELECT id FROM runs WHERE report_sha256 = :s", s=prep.sha256).first()
        if old is not None:
            return ImportResult(cid, old["id"], False, len(prep.files))
        # masked once, here (prepare_run did the work): with the report's own label and, when
        # the store knows this file under other names too (another import, the queue), those
        # too; again when the candidate's id is not the one prepare_run expected (a race)
        known = self._labels(con, cid)
        blind_doc = prep.blind
        if blind_doc is None or set(known) - {report.candidate.label} or cid != prep.public_id:
            blind_doc = blind_run(
                prep.doc if prep.doc is not None else json.loads(prep.raw), known, report.candidate.sha256, cid
            )
        started = report.started_at or ""
        run_id: int = _q(
            con,
            "INSERT INTO runs (candidate_id, report_sha256, rubric_id, run_dir, started_at, imported_at,"
            " report_json, storage, masked_json, items_collected) VALUES (:c, :s, :r, :d, :st, :t, :j,"
            " :storage, :m, :n) RETURNING id",
            c=cid,
            s=prep.sha256,
            r=report.rubric_id,
            d=run_dir or str(prep.run_dir),
            st=started,
            t=now(),
            j=prep.raw.decode("utf-8"),
            storage=storage,
            m=blind_doc.masked_json,
            n=blind_doc.items_collected,
        ).scalar_one()
        self._write_summary(con, run_id, cid, started, blind_doc)
        self._index_files(con, run_id, prep, copy=storage == "db")
        return ImportResult(cid, run_id, True, len(prep.files))

    @staticmethod
    def _register_candidate(con: Connection, prep: PreparedRun) -> str:
        """The run's candidate, new or known by its file hash (refused when the bench's id
        is stored for another hash), and its label, kept apart from the id; returns the
        store's id: random (new_candidate_id), never derived from the file."""
        cand = prep.report.candidate
        row = _q(con, "SELECT id, bench_id FROM candidates WHERE sha256 = :s", s=cand.sha256).first()
        if row is not None:
            cid: str = row["id"]
        else:
            if _q(con, "SELECT 1 FROM candidates WHERE bench_id = :b", b=cand.id).first() is not None:
                raise UserError(f"{prep.run_dir}: candidate {cand.id} is already stored with another file hash")
            cid = prep.public_id or new_candidate_id()
            while _q(con, "SELECT 1 FROM candidates WHERE id = :c", c=cid).first() is not None:
                cid = new_candidate_id()
            _q(
                con,
                "INSERT INTO candidates (id, sha256, created_at, bench_id) VALUES (:c, :s, :t, :b)",
                c=cid,
                s=cand.sha256,
                t=now(),
                b=cand.id,
            )
        if cand.label and _q(con, "SELECT 1 FROM candidate_labels WHERE candidate_id = :c", c=cid).first() is None:
            _q(con, "INSERT INTO candidate_labels (candidate_id, label) VALUES (:c, :l)", c=cid, l=cand.label)
        return cid

    def _index_files(self, con: Connection, run_id: int, prep: PreparedRun, *, copy: bool) -> None:
        """The run's files by number, with their thumbnails; `copy`: each file's bytes too, in
        chunks (a run kept in the database)."""
        for rel, sha, size, mime in prep.files:
            fid: int = _q(
                con,
                "INSERT INTO run_files (run_id, relpath, sha256, size, mime) VALUES (:r, :p, :s, :n, :m) RETURNING id",
                r=run_id,
                p=rel,
                s=sha,
                n=size,
                m=mime,
            ).scalar_one()
            if rel in prep.thumbs:
                self._write_thumb(con, fid, prep.thumbs[rel])
            if copy:
                with (prep.run_dir / rel).open("rb") as f:
                    for seq, chunk in enumerate(iter(lambda: f.read(CHUNK_BYTES), b"")):
                        _q(
                            con,
                            "INSERT INTO file_chunks (file_id, seq, data) VALUES (:f, :q, :d)",
                            f=fid,
                            q=seq,
                            d=chunk,
                        )

    @staticmethod
    def _scan_files(run_dir: Path) -> Iterator[FileEntry]:
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

    # the tables that name a candidate by the store's id (the audit trail is append-only: a
    # candidate already named there keeps its id)
    CANDIDATE_TABLES = (
        "candidate_labels",
        "runs",
        "run_summaries",
        "reviews",
        "finalized",
        "run_choice",
        "anchors",
        "review_timings",
        "candidate_manifests",
    )

    def adopt_ids(self, con: Connection, pairs: set[tuple[str, Optional[str]]]) -> None:
        """Rebuilding a store from run folders and exported reviews: each candidate the export
        names (its id, its bench id) takes the exported id again when it has another here and
        nothing names it yet, so links into the old store still work. Its runs' masked
        artefacts (naming the id) are made again on the next read (_catch_up)."""
        for cid, bench in sorted((c, b) for c, b in pairs if b):
            try:
                check_candidate_id(cid)
            except InvalidReview:
                continue
            row = _q(con, "SELECT id, sha256, created_at FROM candidates WHERE bench_id = :b", b=bench).first()
            if row is None or row["id"] == cid or _q(con, "SELECT 1 FROM candidates WHERE id = :c", c=cid).first():
                continue
            old = row["id"]
            if _q(con, "SELECT 1 FROM audit WHERE candidate_id = :c", c=old).first() is not None:
                continue
            _q(
                con,
                "INSERT INTO candidates (id, sha256, created_at, bench_id) VALUES (:c, :s, :t, NULL)",
                c=cid,
                s=row["sha256"] + ":moving",
                t=row["created_at"],
            )
            for t in self.CANDIDATE_TABLES:
                _q(con, f"UPDATE {t} SET candidate_id = :n WHERE candidate_id = :o", n=cid, o=old)
            _q(con, "DELETE FROM candidates WHERE id = :o", o=old)
            _q(con, "UPDATE candidates SET sha256 = :s, bench_id = :b WHERE id = :c", s=row["sha256"], b=bench, c=cid)
            _q(con, "DELETE FROM run_summaries WHERE candidate_id = :c", c=cid)
            _q(con, "UPDATE runs SET masked_json = NULL WHERE candidate_id = :c", c=cid)

    @staticmethod
    def _file_ids(con: Connection) -> dict[str, Record]:
        """id → the file's hash and the bench's id: the admin's to see (these match the file)."""
        return {
            r["id"]: {"sha256": r["sha256"], "bench_id": r["bench_id"]}
            for r in _q(con, "SELECT id, sha256, bench_id FROM candidates")
        }

    def bench_ids(self) -> dict[str, str]:
        """The store's id → the bench's id (hash prefix) of every candidate: the operator's."""
        with self._read() as con:
            return {r["id"]: r["bench_id"] for r in _q(con, "SELECT id, bench_id FROM candidates")}

    def by_bench_id(self, bench_id: str) -> Optional[str]:
        """The store's id of the candidate the bench calls `bench_id` (its hash prefix): for
        admins only (an old link of a migrated store); None when unknown."""
        with self._read() as con:
            row = _q(con, "SELECT id FROM candidates WHERE bench_id = :b", b=bench_id).first()
        return row["id"] if row else None

    def has_candidate(self, cid: str) -> bool:
        with self._read() as con:
            return _q(con, "SELECT 1 FROM candidates WHERE id = :c", c=cid).first() is not None

    @staticmethod
    def _label(con: Connection, cid: str) -> Optional[str]:
        row = _q(con, "SELECT label FROM candidate_labels WHERE candidate_id = :c", c=cid).first()
        return row["label"] if row else None

    def _labels(self, con: Connection, cid: str) -> tuple[str, ...]:
        """Every name the store knows this candidate's file by: its label and, for a queued
        candidate, each file name it was added as (the same bytes may come under two names)."""
        out = {self._label(con, cid)}
        row = _q(
            con,
            "SELECT q.labels FROM queue_candidates q JOIN candidates c ON c.bench_id = q.id WHERE c.id = :c",
            c=cid,
        ).first()
        if row is not None:
            try:
                out.update(x for x in json.loads(row["labels"]) if isinstance(x, str))
            except ValueError:
                pass
        return tuple(sorted(x for x in out if x))

    def _masker(self, con: Connection, cid: str) -> blinding.Masker:
        """The candidate's own label(s), full hash and bench id, for served names and text files."""
        row = _q(con, "SELECT sha256, bench_id FROM candidates WHERE id = :c", c=cid).first()
        return blinding.masker(
            self._labels(con, cid), row["sha256"] if row else None, (row["bench_id"],) if row else ()
        )

    # --- import-time artefacts: written once, filled in for older runs ---------------------
    @staticmethod
    def _write_summary(con: Connection, run_id: int, cid: str, started_at: str, b: BlindRun) -> None:
        _q(
            con,
            "INSERT INTO run_summaries (run_id, candidate_id, started_at, items_collected, sheet_json) "
            "VALUES (:r, :c, :st, :n, :j)",
            r=run_id,
            c=cid,
            st=started_at,
            n=b.items_collected,
            j=b.sheet_json,
        )

    def _write_thumb(self, con: Connection, file_id: int, t: Thumb) -> None:
        if self.postgres:
            blob = sa.bindparam("d", type_=sa.LargeBinary)
            con.execute(
                sa.text(
                    "INSERT INTO thumbnails (file_id, width, height, mime, data) VALUES (:f, :w, :h, :m, :d)"
                    " ON CONFLICT (file_id) DO NOTHING"
                ).bindparams(blob),
                {"f": file_id, "w": t.width, "h": t.height, "m": t.mime, "d": t.data},
            )
        else:
            _q(
                con,
                "INSERT OR IGNORE INTO thumbnails (file_id, width, height, mime, data) VALUES (:f, :w, :h, :m, :d)",
                f=file_id,
                w=t.width,
                h=t.height,
                m=t.mime,
                d=t.data,
            )

    def _missing_summaries(self, con: Connection) -> list[int]:
        # reads runs.id only (before report_json in the row: no walk through its pages)
        return [
            r["id"]
            for r in _q(
                con,
                "SELECT r.id FROM runs r LEFT JOIN run_summaries s ON s.run_id = r.id "
                "WHERE s.run_id IS NULL ORDER BY r.id",
            )
        ]

    def _backfill(self, run_ids: Optional[list[int]] = None) -> int:
        """Runs stored before the import-time artefacts existed (migration 0003/0004) get them
        now, once: masked report, items collected, sheet summary, written back. Called when
        the store opens, and by the read paths if a run without them shows up (a store another
        process filled meanwhile). The masking is done outside the write transaction; each
        run is written in its own short one, after checking nobody did it meanwhile."""
        if run_ids is None:
            with self._read() as con:
                run_ids = self._missing_summaries(con)
        done = 0
        for rid in run_ids:
            with self._read() as con:
                r = _q(
                    con,
                    "SELECT r.candidate_id, r.started_at, r.report_json, c.sha256 FROM runs r "
                    "JOIN candidates c ON c.id = r.candidate_id WHERE r.id = :r",
                    r=rid,
                ).first()
                if r is None:
                    continue
                b = blind_run(
                    json.loads(r["report_json"]), self._labels(con, r["candidate_id"]), r["sha256"], r["candidate_id"]
                )
            with self._tx() as con:
                if _q(con, "SELECT 1 FROM run_summaries WHERE run_id = :r", r=rid).first() is not None:
                    continue
                _q(
                    con,
                    "UPDATE runs SET masked_json = :m, items_collected = :n WHERE id = :r",
                    m=b.masked_json,
                    n=b.items_collected,
                    r=rid,
                )
                self._write_summary(con, rid, r["candidate_id"], r["started_at"] or "", b)
                done += 1
        return done

    # --- which run a candidate shows ------------------------------------------------------
    def _shown_runs(self, con: Connection, cids: Optional[list[str]] = None) -> dict[str, Record]:
        """candidate id → its shown run's summary row (run_id, started_at, items_collected,
        chosen): the run an admin picked (run_choice), else the complete one: most items
        collected, ties to the latest (started_at, then id). So a partial re-run (two probes)
        never silently replaces a full run. Every candidate's in two narrow queries (runs
        without a summary are not seen: _catch_up fills them in first)."""
        where, args = ("", {}) if cids is None else (" WHERE candidate_id IN :cids", {"cids": list(cids)})
        rows = (
            con.execute(
                sa.text(
                    "SELECT run_id, candidate_id, started_at, items_collected FROM run_summaries" + where
                ).bindparams(*([sa.bindparam("cids", expanding=True)] if cids is not None else [])),
                args,
            )
            .mappings()
            .all()
        )
        picks = {
            r["candidate_id"]: r["run_id"]
            for r in con.execute(
                sa.text("SELECT candidate_id, run_id FROM run_choice" + where).bindparams(
                    *([sa.bindparam("cids", expanding=True)] if cids is not None else [])
                ),
                args,
            ).mappings()
        }
        best: dict[str, tuple[tuple[bool, int, str, int], Record]] = {}
        for r in rows:
            c = r["candidate_id"]
            run = {**r, "chosen": picks.get(c) == r["run_id"]}
            key = (run["chosen"], run["items_collected"], run["started_at"] or "", run["run_id"])
            if c not in best or key > best[c][0]:
                best[c] = (key, run)
        return {c: r for c, (_key, r) in best.items()}

    def _catch_up(self) -> None:
        """Before a read: runs stored without their import-time artefacts (none, unless
        something wrote runs behind this code's back) get them now, once, written back. In its
        own connections, never inside a caller's (SQLite's snapshot would not see them, and
        a write inside a write transaction would wait on itself)."""
        with self._read() as con:
            missing = self._missing_summaries(con)
        if missing:
            self._backfill(missing)

    def _shown(self, con: Connection, cid: str) -> Optional[Record]:
        return self._shown_runs(con, [cid]).get(cid)

    def _masked_report(self, con: Connection, run_id: int) -> Record:
        """The shown run's masked report, parsed (kept parsed for the few most recent runs:
        a report is megabytes; never masked here, it was at import)."""
        sha = _q(con, "SELECT report_sha256 FROM runs WHERE id = :r", r=run_id).scalar_one()
        key = (run_id, sha)
        doc = self._reports.get(key)
        if doc is None:
            doc = self._reports.put(key, json.loads(self._masked_json(con, run_id)))
        return doc

    def _masked_json(self, con: Connection, run_id: int) -> str:
        text: Optional[str] = _q(con, "SELECT masked_json FROM runs WHERE id = :r", r=run_id).scalar_one()
        if text is not None:
            return text
        # not filled in yet (_catch_up does): masked here, not stored
        r = _q(
            con,
            "SELECT r.candidate_id, r.report_json, c.sha256 FROM runs r JOIN candidates c "
            "ON c.id = r.candidate_id WHERE r.id = :r",
            r=run_id,
        ).one()
        return blind_run(
            json.loads(r["report_json"]), self._labels(con, r["candidate_id"]), r["sha256"], r["candidate_id"]
        ).masked_json

    def _run_files(self, con: Connection, cid: str, run_id: int) -> list[Record]:
        m = self._masker(con, cid)
        return [
            {
                "id": f["id"],
                "name": m.text(f["relpath"]),
                "mime": f["mime"],
                "size": f["size"],
                "thumb": f["thumb_width"] is not None,
                "thumb_width": f["thumb_width"],
            }
            for f in _q(
                con,
                "SELECT f.id, f.relpath, f.mime, f.size, t.width AS thumb_width FROM run_files f "
                "LEFT JOIN thumbnails t ON t.file_id = f.id WHERE f.run_id = :r ORDER BY f.relpath",
                r=run_id,
            )
        ]

    def shown_run(self, cid: str) -> Optional[Record]:
        """The candidate's shown run (see _shown_runs), blind: its report masked at import,
        files by id (name masked; `thumb`: a thumbnail exists, `thumb_width` its width)."""
        self._catch_up()
        with self._read() as con:
            r = self._shown(con, cid)
            if r is None:
                return None
            return {
                "run_id": r["run_id"],
                "report": self._masked_report(con, r["run_id"]),
                "files": self._run_files(con, cid, r["run_id"]),
            }

    def shown_run_json(self, cid: str, file_url: str = "/files/{id}") -> Optional[str]:
        """The same as shown_run, as JSON text built around the stored masked report without
        parsing it (the API answer: a report is megabytes); each file with its `url`."""
        self._catch_up()
        with self._read() as con:
            r = self._shown(con, cid)
            if r is None:
                return None
            files = self._run_files(con, cid, r["run_id"])
            for f in files:
                f["url"] = file_url.format(id=f["id"])
            return '{"run_id": %d, "report": %s, "files": %s}' % (
                r["run_id"],
                self._masked_json(con, r["run_id"]),
                json.dumps(files, ensure_ascii=False),
            )

    def runs_of(self, cid: str) -> Record:
        """For the admin: every run of a candidate (id, when, items collected, reviews given
        while it was shown), which one is shown and why, and the standing choice if any."""
        check_candidate_id(cid)
        if not self.has_candidate(cid):
            raise InvalidReview(f"no such candidate: {cid}", 404)
        return self.runs_overview([cid])[0]

    def runs_overview(self, cids: Optional[list[str]] = None) -> list[Record]:
        """runs_of for every candidate (or those named), in four queries, by candidate id."""
        self._catch_up()
        where = "" if cids is None else " WHERE s.candidate_id IN :cids"
        args = {} if cids is None else {"cids": list(cids)}

        def sql(text: str) -> sa.TextClause:
            return expanding(text, "cids") if cids is not None else sa.text(text)

        with self._read() as con:
            ids = (
                list(cids) if cids is not None else [r["id"] for r in _q(con, "SELECT id FROM candidates ORDER BY id")]
            )
            shown = self._shown_runs(con, cids)
            runs: dict[str, list[Record]] = {}
            for r in con.execute(
                sql(
                    "SELECT s.run_id, s.candidate_id, s.started_at, r.imported_at, s.items_collected "
                    "FROM run_summaries s JOIN runs r ON r.id = s.run_id" + where + " ORDER BY s.started_at, s.run_id"
                ),
                args,
            ).mappings():
                runs.setdefault(r["candidate_id"], []).append({k: r[k] for k in r.keys() if k != "candidate_id"})
            reviews = {
                r["run_id"]: r["n"]
                for r in con.execute(
                    sa.text("SELECT run_id, COUNT(*) AS n FROM reviews WHERE run_id IS NOT NULL GROUP BY run_id")
                ).mappings()
            }
            choices = {
                r["candidate_id"]: dict(r)
                for r in con.execute(
                    sql('SELECT s.candidate_id, s.run_id, s."by", s.at, s.reason FROM run_choice s' + where), args
                ).mappings()
            }
            files = self._file_ids(con)
        out = []
        for c in ids:
            sh = shown.get(c)
            rs = runs.get(c, [])
            for run in rs:
                run["reviews"] = reviews.get(run["run_id"], 0)
                run["shown"] = sh is not None and run["run_id"] == sh["run_id"]
            choice = choices.get(c)
            out.append(
                {
                    "candidate_id": c,
                    **files.get(c, {}),
                    "runs": rs,
                    "shown_run_id": sh["run_id"] if sh else None,
                    "shown_because": _shown_because(sh),
                    "choice": {k: v for k, v in choice.items() if k != "candidate_id"} if choice else None,
                }
            )
        return out

    def choose_run(self, cid: str, run_id: Optional[int], by: str, reason: str) -> Record:
        """An admin picks the run a candidate shows (run_id None: back to the automatic rule),
        with a reason; kept in run_choice and in the audit trail. Refused (409) once the
        candidate's sheet is finalised: its bench points come from the shown run."""
        check_candidate_id(cid)
        reason = " ".join(str(reason or "").split())
        if len(reason) < 3:
            raise InvalidReview("say why this run is shown (a reason of at least 3 characters)", 422)
        if len(reason) > MAX_REASON:
            raise InvalidReview(f"the reason is longer than {MAX_REASON} characters", 422)
        with self._tx() as con:
            if _q(con, "SELECT 1 FROM candidates WHERE id = :c", c=cid).first() is None:
                raise InvalidReview(f"no such candidate: {cid}", 404)
            if _q(con, "SELECT 1 FROM finalized WHERE candidate_id = :c", c=cid).first() is not None:
                raise InvalidReview(f"the sheet of {cid} is finalised: its run can no longer change", 409)
            if (
                run_id is not None
                and _q(con, "SELECT 1 FROM runs WHERE id = :r AND candidate_id = :c", r=run_id, c=cid).first() is None
            ):
                raise InvalidReview(f"run {run_id} is not a run of {cid}", 422)
            before = self._shown(con, cid)
            _q(con, "DELETE FROM run_choice WHERE candidate_id = :c", c=cid)
            if run_id is not None:
                _q(
                    con,
                    'INSERT INTO run_choice (candidate_id, run_id, "by", at, reason) VALUES (:c, :r, :b, :t, :why)',
                    c=cid,
                    r=run_id,
                    b=by,
                    t=now(),
                    why=reason,
                )
            after = self._shown(con, cid)
            self.audit(
                con,
                by,
                "run.choose" if run_id is not None else "run.choice_cleared",
                cid,
                {
                    "run_id": run_id,
                    "reason": reason,
                    "shown_before": before["run_id"] if before else None,
                    "shown_now": after["run_id"] if after else None,
                },
            )
        return {"candidate_id": cid, "shown_run_id": after["run_id"] if after else None, "chosen": run_id is not None}

    @staticmethod
    def audit(con: Connection, actor: str, action: str, cid: Optional[str], detail: Record | str = "") -> None:
        """One row of the admin audit trail, inside the caller's write transaction."""
        _q(
            con,
            "INSERT INTO audit (at, actor, action, candidate_id, detail) VALUES (:t, :a, :x, :c, :d)",
            t=now(),
            a=actor,
            x=action,
            c=cid,
            d=detail if isinstance(detail, str) else json.dumps(detail, ensure_ascii=False, sort_keys=True),
        )

    def audit_trail(self, cid: Optional[str] = None) -> list[Record]:
        q = "SELECT id, at, actor, action, candidate_id, detail FROM audit"
        with self._read() as con:
            rows = (
                _q(con, q + " WHERE candidate_id = :c ORDER BY id", c=cid) if cid else _q(con, q + " ORDER BY id")
            ).all()
        return [dict(r) for r in rows]

    # --- files ------------------------------------------------------------------------------
    def file(self, file_id: int) -> StoredFile:
        """A run file to serve (from its run folder, or from the database); InvalidReview
        404 when unknown or gone."""
        with self._read() as con:
            f = _q(
                con,
                "SELECT f.id, f.relpath, f.mime, f.size, r.run_dir, r.storage, r.candidate_id FROM run_files f"
                " JOIN runs r ON r.id = f.run_id WHERE f.id = :f",
                f=file_id,
            ).first()
            if f is None:
                raise InvalidReview("no such file", 404)
            is_text = f["mime"].startswith("text/") or f["mime"] == "application/json"
            if f["storage"] == "db":
                data = b"".join(
                    bytes(c["data"])
                    for c in _q(con, "SELECT data FROM file_chunks WHERE file_id = :f ORDER BY seq", f=file_id)
                )
                if len(data) != f["size"]:
                    raise InvalidReview("the run's file is incomplete in the store", 404)
                return StoredFile(f["mime"], is_text, data=data, candidate_id=f["candidate_id"])
        root = Path(f["run_dir"]).resolve()
        p = (root / f["relpath"]).resolve()
        if root not in p.parents or not p.is_file():
            raise InvalidReview("the run's file is no longer on disk", 404)
        return StoredFile(f["mime"], is_text, path=p, candidate_id=f["candidate_id"])

    def thumbnail(self, file_id: int) -> StoredFile:
        """An image's thumbnail (made at import); for a run stored before thumbnails existed
        it is made now, once, and written back; anything without one (not an image OpenCV
        reads) is served as the file itself."""
        with self._read() as con:
            t = _q(con, "SELECT mime, data FROM thumbnails WHERE file_id = :f", f=file_id).first()
        if t is not None:
            return StoredFile(t["mime"], False, data=bytes(t["data"]))
        f = self.file(file_id)
        if f.mime in THUMB_SOURCES and file_id not in self._thumb_failed:
            made = thumbnail(f.read_bytes())
            if made is None:
                self._thumb_failed.add(file_id)
            else:
                with self._tx() as con:
                    self._write_thumb(con, file_id, made)
                return StoredFile(made.mime, False, data=made.data)
        return f

    def mask_for_serving(self, text: str, cid: Optional[str] = None) -> str:
        """A served text file, masked with its own candidate's label(s) and file hash
        (StoredFile.candidate_id); a text of no known candidate, with every label."""
        with self._read() as con:
            if cid is not None:
                return self._masker(con, cid).text(text)
            labels = [r["label"] for r in _q(con, "SELECT label FROM candidate_labels")]
        return blinding.masker(labels).text(text)
