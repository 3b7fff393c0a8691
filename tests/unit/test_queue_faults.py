"""Stalled jobs, without a browser, on a real PostgreSQL: a job is taken by a procrastinate
worker that then falls silent (no heartbeat, as after kill -9); another worker's stall check
puts it back in the queue; after `max_deaths` such deaths the job is failed with the reason
and the rest of the queue goes on. A worker never rescues its own live job, and a worker
whose job was taken over stores nothing."""

import asyncio
import json
from pathlib import Path

import sqlalchemy as sa
from typer.testing import CliRunner

from skycity_bench.cli import app
from skycity_bench.queue.queue_worker import QueueWorker, WorkerOptions

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "tests" / "fixtures" / "batch"
STALLED_AFTER = 1.0


def _queue_rows(w: QueueWorker) -> list[dict]:
    with w.store.db.read() as con:
        return [dict(r) for r in con.execute(sa.text("SELECT * FROM queue_runs ORDER BY id")).mappings()]


async def _die_holding_a_job(w: QueueWorker, name: str) -> int:
    """A worker registers, takes the next job, marks it running, and goes silent."""
    jm = w.app.job_manager
    wid = await jm.register_worker()
    job = await jm.fetch_job(queues=None, worker_id=wid)
    assert job is not None
    dead = WorkerOptions(name=name)
    w.opts, saved = dead, w.opts
    try:
        assert await asyncio.to_thread(w._claim, job.task_kwargs["queue_run_id"], job.id) is not None
    finally:
        w.opts = saved
    return job.id


def test_should_requeue_a_stalled_job_then_fail_it_after_max_deaths(pg_url):
    res = CliRunner().invoke(
        app,
        ["queue", "add", str(TINY / "tiny1.html"), str(TINY / "tiny2.html"), "--db", pg_url, "--probe", "packaging"],
    )
    assert res.exit_code == 0, res.output
    w = QueueWorker(
        pg_url, WorkerOptions(name="rescuer", stalled_after_s=STALLED_AFTER, max_deaths=2), log=lambda m: None
    )

    async def scenario():
        async with w.app.open_async():
            first = await _die_holding_a_job(w, "doomed-1")
            await asyncio.sleep(STALLED_AFTER + 1.2)
            await w._rescue()
            rows = {r["job_id"]: r for r in _queue_rows(w)}
            assert rows[first]["state"] == "queued" and rows[first]["deaths"] == 1
            assert (await w.app.job_manager.get_job_status_async(first)).value == "todo"
            # the same job again (it is first in line), and its worker dies again: failed, with the reason
            again = await _die_holding_a_job(w, "doomed-2")
            assert again == first
            # a worker does not rescue its own live job, however late its heartbeat
            w.current_job = first
            await asyncio.sleep(STALLED_AFTER + 1.2)
            await w._rescue()
            assert {r["job_id"]: r for r in _queue_rows(w)}[first]["state"] == "running"
            w.current_job = None
            await w._rescue()
            return first

    first = asyncio.run(scenario())
    rows = _queue_rows(w)
    failed = next(r for r in rows if r["job_id"] == first)
    assert failed["state"] == "failed" and failed["deaths"] == 2
    assert "failed after its worker vanished 2 times" in failed["error"] and "doomed-2" in failed["error"]
    evs = [h["ev"] for h in json.loads(failed["history"])]
    assert evs == ["queued", "start", "stalled", "start", "failed"]
    other = next(r for r in rows if r["job_id"] != first)
    assert other["state"] == "queued"  # the rest of the queue goes on
    with w.store.db.read() as con:
        st = dict(con.execute(sa.text("SELECT id, status FROM procrastinate_jobs")).all())
    assert st[first] == "failed" and st[other["job_id"]] == "todo"
    w.store.close()


def test_should_store_nothing_when_the_run_was_taken_over(pg_url, tmp_path):
    from tests.review_reports import make_run

    res = CliRunner().invoke(app, ["queue", "add", str(TINY / "tiny1.html"), "--db", pg_url, "--probe", "packaging"])
    assert res.exit_code == 0, res.output
    w = QueueWorker(pg_url, WorkerOptions(name="slow"), log=lambda m: None)
    rid = _queue_rows(w)[0]["id"]
    mine = w._claim(rid, job_id=0)
    other = QueueWorker(pg_url, WorkerOptions(name="fast"), log=lambda m: None)
    theirs = other._claim(rid, job_id=0)  # the job was queued again and taken by another worker
    run = make_run(tmp_path / "runs", "m.html", seed="late")
    assert w._store_result(mine, run).startswith("not stored")
    assert other._store_result(theirs, run).startswith("stored as run")
    assert other._claim(rid, job_id=0) is None  # done: a retried job runs nothing twice
    with w.store.db.read() as con:
        assert con.execute(sa.text("SELECT COUNT(*) FROM runs")).scalar() == 1
    w.store.close()
    other.store.close()
