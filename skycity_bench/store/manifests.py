"""Each candidate's manifest: the system (model and version) that made it, the prompt it
answers, its sample number and optional tags: what the leaderboard groups candidates by.

Given at import (`import --manifest manifest.csv`), kept in candidate_manifests and read only
by admin views and the leaderboard: system and prompt would unblind a candidate, so nothing
that serves reviewers selects that table (common/blinding.py states the rule).

The CSV (one row per candidate file: `file,system,prompt,sample[,tags]`) is read by
inputs/round_manifest.py, which a batch's `--manifest` shares. Here `file` names a stored
candidate as the operator knows it: its file name (the report's label), the bench's id (c- and
a 12-hex prefix of the hash) or the file's full sha256.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy.engine import Connection

from skycity_bench.common.errors import UserError
from skycity_bench.inputs.round_manifest import Manifest, parse_manifest, read_manifest
from skycity_bench.store.sql import _q, now

if TYPE_CHECKING:
    from skycity_bench.store.review_store import ReviewStore

# the CSV's reading stays importable from here, where import and the leaderboard look for it
__all__ = ["Manifest", "apply_manifest", "manifests", "parse_manifest", "read_manifest", "set_manifest"]


def _keys(store: ReviewStore) -> tuple[dict[str, str], dict[str, int]]:
    """(every name an operator may give a candidate: label, its file name, bench id, sha256 →
    the store's id; each file name that several candidates' labels share → how many: such a
    name says nothing about which one is meant)."""
    out: dict[str, str] = {}
    names: dict[str, set[str]] = {}
    with store.db.read() as con:
        for r in _q(con, "SELECT id, sha256, bench_id FROM candidates"):
            out[r["sha256"]] = r["id"]
            if r["bench_id"]:
                out[r["bench_id"]] = r["id"]
        for r in _q(con, "SELECT candidate_id, label FROM candidate_labels"):
            out[r["label"]] = r["candidate_id"]
            names.setdefault(Path(r["label"]).name, set()).add(r["candidate_id"])
    for name, cids in names.items():
        if len(cids) == 1:
            out.setdefault(name, next(iter(cids)))
    return out, {n: len(c) for n, c in names.items() if len(c) > 1 and n not in out}


def apply_manifest(store: ReviewStore, manifest: dict[str, Manifest], by: str) -> dict[str, str]:
    """Store each row for the candidate its `file` names; returns file key → candidate id.
    A key that names no stored candidate, or a file name several share, is a UserError
    (nothing is written then)."""
    keys, shared = _keys(store)
    for k in manifest:
        if k in shared:
            raise UserError(
                f"manifest: {k} is the file name of {shared[k]} stored candidates; name it by its path, bench id or sha256"
            )
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
