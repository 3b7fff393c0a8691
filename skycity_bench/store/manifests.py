"""Each candidate's manifest: the system (model and version) that made it, the prompt it
answers, its sample number and optional tags: what the leaderboard groups candidates by.

Given at import (`import --manifest manifest.csv`), kept in candidate_manifests and read only
by admin views and the leaderboard: system and prompt would unblind a candidate, so nothing
that serves reviewers selects that table (common/blinding.py states the rule).

The manifest CSV has one row per candidate file: `file,system,prompt,sample[,tags]`. `file`
names the candidate as the operator knows it: its file name (the report's label), the bench's
id (c- and a 12-hex prefix of the hash) or the file's full sha256. `tags` is a list separated
by `;`. Every malformed row is a one-line UserError naming the line.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy.engine import Connection

from skycity_bench.common.errors import UserError
from skycity_bench.store.sql import _q, now

if TYPE_CHECKING:
    from skycity_bench.store.review_store import ReviewStore

MANIFEST_COLUMNS = ("file", "system", "prompt", "sample")
TAG_SEPARATOR = ";"


@dataclass(frozen=True)
class Manifest:
    """One candidate's place in a round."""

    system: str
    prompt: str
    sample: str
    tags: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, object]:
        return {"system": self.system, "prompt": self.prompt, "sample": self.sample, "tags": list(self.tags)}


def parse_manifest(text: str, source: str = "manifest") -> dict[str, Manifest]:
    """file key → Manifest from the CSV's text; a key given twice, an empty field or a
    missing column is a UserError naming the line."""
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip() for h in reader.fieldnames or []]
    reader.fieldnames = header
    missing = [c for c in MANIFEST_COLUMNS if c not in header]
    if missing:
        raise UserError(f"{source}: missing column(s) {', '.join(missing)} (need {','.join(MANIFEST_COLUMNS)}[,tags])")
    out: dict[str, Manifest] = {}
    for line, rec in enumerate(reader, 2):
        vals = {c: (rec.get(c) or "").strip() for c in MANIFEST_COLUMNS}
        empty = [c for c, v in vals.items() if not v]
        if empty:
            raise UserError(f"{source}: line {line}: empty {', '.join(empty)}")
        if vals["file"] in out:
            raise UserError(f"{source}: line {line}: {vals['file']} is listed twice")
        tags = tuple(t.strip() for t in (rec.get("tags") or "").split(TAG_SEPARATOR) if t.strip())
        out[vals["file"]] = Manifest(vals["system"], vals["prompt"], vals["sample"], tags)
    if not out:
        raise UserError(f"{source}: a header but no rows")
    return out


def read_manifest(path: Path) -> dict[str, Manifest]:
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise UserError(f"{path}: not a UTF-8 text file") from None
    if not text.strip():
        raise UserError(f"{path}: empty file (expected a header: {','.join(MANIFEST_COLUMNS)}[,tags])")
    return parse_manifest(text, str(path))


def _keys(store: ReviewStore) -> dict[str, str]:
    """Every name an operator may give a candidate (label, its stem, bench id, sha256) → the
    store's id."""
    out: dict[str, str] = {}
    with store.db.read() as con:
        for r in _q(con, "SELECT id, sha256, bench_id FROM candidates"):
            out[r["sha256"]] = r["id"]
            if r["bench_id"]:
                out[r["bench_id"]] = r["id"]
        for r in _q(con, "SELECT candidate_id, label FROM candidate_labels"):
            out[r["label"]] = r["candidate_id"]
            out.setdefault(Path(r["label"]).name, r["candidate_id"])
    return out


def apply_manifest(store: ReviewStore, manifest: dict[str, Manifest], by: str) -> dict[str, str]:
    """Store each row for the candidate its `file` names; returns file key → candidate id.
    A key that names no stored candidate is a UserError (nothing is written then)."""
    keys = _keys(store)
    unknown = [k for k in manifest if k not in keys]
    if unknown:
        shown = ", ".join(unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        raise UserError(f"manifest names no stored candidate for: {shown} (use the file name, bench id or sha256)")
    matched = {k: keys[k] for k in manifest}
    with store.db.write() as con:
        for key, cid in matched.items():
            set_manifest(con, cid, manifest[key], by)
    return matched


def set_manifest(con: Connection, cid: str, m: Manifest, by: str) -> None:
    """Insert or replace one candidate's manifest inside the caller's write transaction."""
    _q(con, "DELETE FROM candidate_manifests WHERE candidate_id = :c", c=cid)
    _q(
        con,
        "INSERT INTO candidate_manifests (candidate_id, system, prompt, sample, tags, set_by, set_at) "
        "VALUES (:c, :s, :p, :n, :t, :b, :at)",
        c=cid,
        s=m.system,
        p=m.prompt,
        n=m.sample,
        t=json.dumps(list(m.tags), ensure_ascii=False),
        b=by,
        at=now(),
    )


def manifests(store: ReviewStore) -> dict[str, Manifest]:
    """candidate id → its manifest (admins and the leaderboard only)."""
    with store.db.read() as con:
        rows = _q(con, "SELECT candidate_id, system, prompt, sample, tags FROM candidate_manifests").all()
    return {
        r["candidate_id"]: Manifest(r["system"], r["prompt"], r["sample"], tuple(json.loads(r["tags"] or "[]")))
        for r in rows
    }
