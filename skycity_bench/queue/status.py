"""`queue status`: per tag, what is queued, running (which worker, which probe, since
when), done and failed, the throughput and the ETA, and whether the machines that ran the
tag's runs are comparable (environment.comparable on their fingerprints)."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any, Optional

import sqlalchemy as sa

from skycity_bench.common import environment
from skycity_bench.store.review_store import ReviewStore

STATES = ("queued", "running", "done", "failed")


def _t(s: Optional[str]) -> Optional[dt.datetime]:
    return dt.datetime.fromisoformat(s) if s else None


def status(store: ReviewStore, tag: Optional[str] = None) -> dict[str, Any]:
    q = (
        "SELECT id, candidate_id, tag, repeat_index, state, worker, probe, started_at, finished_at, attempts, deaths,"
        " error, fingerprint FROM queue_runs" + (" WHERE tag = :t" if tag else "") + " ORDER BY tag, id"
    )
    with store.db.read() as con:
        rows = [dict(r) for r in con.execute(sa.text(q), {"t": tag} if tag else {}).mappings()]
    now = dt.datetime.now(dt.UTC)
    tags: dict[str, Any] = {}
    for r in rows:
        t = tags.setdefault(r["tag"], {"counts": dict.fromkeys(STATES, 0), "running": [], "failed": [], "_rows": []})
        t["counts"][r["state"]] = t["counts"].get(r["state"], 0) + 1
        t["_rows"].append(r)
        if r["state"] == "running":
            since = _t(r["started_at"])
            t["running"].append(
                {
                    "run": r["id"],
                    "candidate": r["candidate_id"],
                    "index": r["repeat_index"],
                    "worker": r["worker"],
                    "probe": r["probe"],
                    "since": r["started_at"],
                    "elapsed_s": round((now - since).total_seconds(), 1) if since else None,
                    "attempt": r["attempts"],
                }
            )
        elif r["state"] == "failed":
            t["failed"].append(
                {"run": r["id"], "candidate": r["candidate_id"], "index": r["repeat_index"], "error": r["error"]}
            )
    for t in tags.values():
        rows_ = t.pop("_rows")
        done = [r for r in rows_ if r["state"] == "done" and r["finished_at"] and r["started_at"]]
        rate = None
        if done:
            ends = [x for r in done if (x := _t(r["finished_at"])) is not None]
            starts = [x for r in done if (x := _t(r["started_at"])) is not None]
            span = (max(ends) - min(starts)).total_seconds()
            rate = len(done) / span if span > 0 else None
        left = t["counts"]["queued"] + t["counts"]["running"]
        t["throughput_per_h"] = round(rate * 3600, 1) if rate else None
        t["eta_s"] = 0.0 if left == 0 else (round(left / rate) if rate else None)
        t["environments"] = _environments(done)
    return {"tags": tags, "at": now.isoformat(timespec="seconds")}


def _environments(done: list[dict]) -> dict:
    """The distinct machines behind a tag's finished runs, and whether they may be ranked
    together (a batch spread over unlike machines says so instead of mixing them)."""
    prints = []
    for r in done:
        try:
            fp = json.loads(r["fingerprint"] or "{}")
        except ValueError:
            continue
        if fp and fp not in prints:
            prints.append(fp)
    reasons: list[str] = []
    for i, a in enumerate(prints):
        for b in prints[i + 1 :]:
            ok, why = environment.comparable(a, b)
            if not ok:
                reasons += [w for w in why if w not in reasons]
    return {
        "machines": sorted({fp.get("worker") or "?" for fp in prints}),
        "comparable": not reasons,
        "why_not": reasons,
    }


def _fmt_s(s: Optional[float]) -> str:
    if s is None:
        return "—"
    s = int(round(s))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def render(st: dict) -> str:
    if not st["tags"]:
        return "the queue is empty (skycity-bench queue add PATH... --db URL)"
    out = []
    for tag, t in st["tags"].items():
        c = t["counts"]
        rate = f"{t['throughput_per_h']:g} runs/h" if t["throughput_per_h"] else "— runs/h"
        out.append(
            f"tag {tag}: {c['queued']} queued · {c['running']} running · {c['done']} done · "
            f"{c['failed']} failed · {rate} · ETA {_fmt_s(t['eta_s'])}"
        )
        for r in t["running"]:
            out.append(
                f"  running: {r['candidate']} run {r['index']} on {r['worker']} — {r['probe'] or 'starting'}"
                f" — since {r['since'][11:19]} ({_fmt_s(r['elapsed_s'])}), attempt {r['attempt']}"
            )
        for r in t["failed"]:
            out.append(f"  failed: {r['candidate']} run {r['index']}: {r['error']}")
        env = t["environments"]
        if env["machines"] and not env["comparable"]:
            out.append(
                f"  machines {', '.join(env['machines'])} are NOT comparable ({'; '.join(env['why_not'][:3])}):"
                f" the sheet ranks their runs apart"
            )
        elif env["machines"]:
            out.append(f"  machines: {', '.join(env['machines'])} (comparable)")
    return "\n".join(out)
