"""`queue add`: freeze candidates into the database and enqueue one job per run.

Each candidate's bytes go into queue_candidates (workers need no shared disk); identical
files are one candidate (every label kept), as in the local batch. Each run (candidate ×
--repeat, per --tag) is one queue_runs row and one procrastinate job. Adding the same files
again adds nothing (a run is keyed by candidate, tag and repeat index); a larger --repeat
adds the missing runs; other options under the same tag are refused (use another tag).

All rows are written in one transaction before any job is deferred: a bad option, an
unreachable database or a newer schema stores nothing. A row whose job could not be
deferred (the process died in between) is deferred by the next `queue add`.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import sqlalchemy as sa

from skycity_bench.common.errors import UserError
from skycity_bench.queue.jobs import TASK, ensure_schema, make_app, require_postgres
from skycity_bench.store.review_store import ReviewStore

DEFAULT_TAG = "default"


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="microseconds")


@dataclass
class AddResult:
    candidates: list[str] = field(default_factory=list)
    new_runs: list[int] = field(default_factory=list)
    existing_runs: int = 0
    refused: list[str] = field(default_factory=list)


def run_options(
    probes: Optional[list[str]],
    viewport: Optional[str],
    duration: Optional[float],
    network: str,
    max_memory_mb: float,
    scenario: Optional[Path] = None,
) -> dict:
    """What a worker needs to run it as `run` would; checked here (unknown probe, bad
    viewport, a scenario file that does not validate) so a mistake is refused before
    anything is stored. A --scenario file's text is frozen with the runs, like the
    candidates' bytes: workers need no shared disk."""
    from skycity_bench.inputs.scenario import load_scenario
    from skycity_bench.probes import registry

    for name in probes or []:
        registry.get(name)
    overrides = {k: v for k, v in (("viewport", viewport), ("duration_s", duration)) if v is not None}
    load_scenario(scenario, overrides)
    if network not in ("offline", "allow"):
        raise UserError(f"--network: expected offline or allow, got {network!r}")
    return {
        "probes": sorted(probes) if probes else None,
        "overrides": overrides,
        "network": network,
        "max_memory_mb": max_memory_mb,
        "scenario": scenario.read_text(encoding="utf-8") if scenario is not None else None,
    }


def _files(paths: list[str], refused: list[str]) -> list[Path]:
    """Candidate files from files, folders and globs (batch.discover, one path at a time):
    a path that is not an HTML demo is refused with its name, the others go on."""
    from skycity_bench.batch.batch_run import discover

    out: list[Path] = []
    for raw in paths:
        try:
            found, notes = discover([raw])
        except UserError as e:
            refused.append(str(e))
            continue
        out += found
        refused += notes
    return out


def add(target: str, paths: list[str], *, tag: str = DEFAULT_TAG, repeat: int = 1, options: dict) -> AddResult:
    if repeat < 1:
        raise UserError(f"--repeat: expected a whole number >= 1, got {repeat}")
    if not tag or len(tag) > 60 or any(c.isspace() for c in tag):
        raise UserError(f"--tag: expected a short name without spaces, got {tag!r}")
    require_postgres(target)
    store = ReviewStore(target)  # connection, credentials, schema: one line each, exit 2
    try:
        app = make_app(store.db)
        res = AddResult()
        files = _files(paths, res.refused)
        if not files:
            raise UserError("nothing enqueued: " + "; ".join(res.refused or ["no candidate given"]))
        ensure_schema(store.db)
        opts = json.dumps(options, sort_keys=True)
        to_defer: list[int] = []
        with store.db.write() as con:
            for f in files:
                cid = _freeze_candidate(con, f)
                if cid not in res.candidates:
                    res.candidates.append(cid)
            for cid in res.candidates:
                for k in range(1, repeat + 1):
                    _plan_run(con, res, to_defer, cid, tag, k, opts)
        _defer(store, app, tag, to_defer)
        return res
    finally:
        store.close()


def _freeze_candidate(con, f: Path) -> str:
    """The candidate's bytes in the queue's table (its labels gain this path); its id."""
    from skycity_bench.inputs.demo_file import candidate_id, load_demo

    demo = load_demo(f)
    cid = candidate_id(demo.sha256)
    row = con.execute(sa.text("SELECT labels FROM queue_candidates WHERE id = :c"), {"c": cid}).first()
    if row is None:
        con.execute(
            sa.text("INSERT INTO queue_candidates (id, sha256, html, labels, created_at) VALUES (:c, :s, :h, :l, :t)"),
            {"c": cid, "s": demo.sha256, "h": demo.html, "l": json.dumps([str(f)]), "t": now()},
        )
    else:
        labels = json.loads(row[0])
        if str(f) not in labels:
            con.execute(
                sa.text("UPDATE queue_candidates SET labels = :l WHERE id = :c"),
                {"l": json.dumps(labels + [str(f)]), "c": cid},
            )
    return cid


def _plan_run(con, res: AddResult, to_defer: list[int], cid: str, tag: str, k: int, opts: str) -> None:
    """Run k of a candidate under a tag: a new queued run, or the one already there (with
    the same options; other options under the same tag are refused)."""
    old = con.execute(
        sa.text(
            "SELECT id, options, job_id FROM queue_runs WHERE candidate_id = :c AND tag = :t AND repeat_index = :k"
        ),
        {"c": cid, "t": tag, "k": k},
    ).first()
    if old is not None:
        if old.options != opts:
            raise UserError(
                f"tag {tag} already holds run {k} of {cid} with other options "
                f"(probes, viewport, duration...): use another --tag"
            )
        res.existing_runs += 1
        if old.job_id is None:
            to_defer.append(old.id)
        return
    rid = con.execute(
        sa.text(
            "INSERT INTO queue_runs (candidate_id, tag, repeat_index, options, state, created_at, history) "
            "VALUES (:c, :t, :k, :o, 'queued', :n, :h) RETURNING id"
        ),
        {"c": cid, "t": tag, "k": k, "o": opts, "n": now(), "h": json.dumps([{"ev": "queued", "t": now()}])},
    ).scalar_one()
    res.new_runs.append(rid)
    to_defer.append(rid)


def _defer(store: ReviewStore, app, tag: str, ids: list[int]) -> None:
    import procrastinate

    if not ids:
        return
    with app.open():
        for rid in ids:
            try:
                job_id = app.configure_task(TASK, queue=tag, queueing_lock=f"run-{rid}").defer(queue_run_id=rid)
            except procrastinate.exceptions.AlreadyEnqueued:
                continue
            with store.db.write() as con:
                con.execute(sa.text("UPDATE queue_runs SET job_id = :j WHERE id = :r"), {"j": job_id, "r": rid})
