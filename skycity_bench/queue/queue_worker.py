"""`skycity-bench worker`: one reference machine's worker. It takes one job at a time (the
pacing measurement needs the machine to itself) and runs it exactly as `run` would: the
batch's worker process (skycity_bench/running/run_worker.py → runner.execute) on the candidate's frozen
bytes, then stores report.json and every evidence file in the database (chunked) or under
--artifacts DIR, with the machine's environment fingerprint.

Faults:
- A worker killed mid-run (kill -9, power loss): procrastinate's heartbeats stop; every
  other worker looks for stalled jobs every `stalled_after_s / 3` s and puts a job whose
  worker has been silent for `stalled_after_s` back in the queue (retry_job). The bound:
  a killed worker's job is queued again within stalled_after_s + stalled_after_s / 3 (40 s
  with the defaults: heartbeat 10 s, stalled after 30 s — three missed heartbeats, so a
  busy database or a slow heartbeat does not take a live worker's job), then starts on
  the next free worker.
- A job whose worker vanished `max_deaths` times (3) is failed with the reason; the rest of
  the queue goes on.
- Nothing half-written is visible: a run becomes a result in one transaction (the runs row,
  its files, and the queue row set to done), and only if this attempt's lease still holds
  (a worker whose job was taken over stores nothing): no result is stored twice.
- Ctrl-C (or SIGTERM) once: the current run finishes and is stored, then the worker stops;
  twice: the run is stopped and handed back (queued again at once, for any worker).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import shutil
import signal
import socket
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import sqlalchemy as sa

from skycity_bench.common import environment
from skycity_bench.common.errors import UserError
from skycity_bench.common.process_tree import kill_marked
from skycity_bench.inputs.scenario import load_scenario
from skycity_bench.queue.jobs import TASK, HandBack, ensure_schema, make_app, require_postgres
from skycity_bench.running.child_supervisor import (
    Limits,
    child_command,
    child_env,
    default_budget,
    exit_reason,
    fallback_report,
    kill_child,
    readable_report,
)
from skycity_bench.running.run_profile import DEFAULT_MAX_MEMORY_MB
from skycity_bench.store.review_store import ReviewStore

FINGERPRINT_KEYS = environment.CHECKED + ("refresh_interval_ms", "bench_version", "software_rendering")


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="microseconds")


@dataclass
class WorkerOptions:
    name: str
    tag: Optional[str] = None
    artifacts: Optional[Path] = None
    heartbeat_s: float = 10.0
    stalled_after_s: float = 30.0
    max_deaths: int = 3
    until_done: bool = False  # exit once every run of the tag is done or failed
    poll_s: float = 2.0


def default_name() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


class QueueWorker:
    def __init__(self, target: str, opts: WorkerOptions, log=print):
        require_postgres(target)
        self.store = ReviewStore(target)  # connection, credentials, schema: one line each, exit 2
        self.app = make_app(self.store.db)
        ensure_schema(self.store.db)
        self.opts = opts
        self.log = log
        self.handback = asyncio.Event()
        self.stopping = False
        self.current: Optional[int] = None
        self.current_job: Optional[int] = None
        if opts.artifacts is not None:
            opts.artifacts.mkdir(parents=True, exist_ok=True)

    # ------------------------------------------------------------------ main loop
    async def main(self) -> int:
        import procrastinate

        self.app.task(
            name=TASK,
            pass_context=True,
            retry=procrastinate.RetryStrategy(max_attempts=100_000, retry_exceptions={HandBack}),
        )(self._job)
        # no `queues`: every queue (procrastinate's default), else the tag's own
        queues: dict[str, Any] = {"queues": [self.opts.tag]} if self.opts.tag else {}
        async with self.app.open_async():
            worker = asyncio.create_task(
                self.app.run_worker_async(
                    **queues,
                    name=self.opts.name,
                    concurrency=1,
                    install_signal_handlers=False,
                    update_heartbeat_interval=self.opts.heartbeat_s,
                    stalled_worker_timeout=self.opts.stalled_after_s,
                    fetch_job_polling_interval=self.opts.poll_s,
                    delete_jobs="never",
                )
            )
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, self._on_signal, worker)
            side = [asyncio.create_task(self._rescue_loop())]
            if self.opts.until_done:
                side.append(asyncio.create_task(self._until_done(worker)))
            self.log(
                f"worker {self.opts.name}: waiting for jobs on {self.store.db.display} (tag {self.opts.tag or 'any'})"
            )
            try:
                await worker
            except asyncio.CancelledError:
                pass
            finally:
                for t in side:
                    t.cancel()
                await asyncio.gather(*side, return_exceptions=True)
                for sig in (signal.SIGINT, signal.SIGTERM):
                    loop.remove_signal_handler(sig)
        self.store.close()
        self.log(f"worker {self.opts.name}: stopped")
        return 0

    def _on_signal(self, worker: asyncio.Task) -> None:
        if not self.stopping:
            self.stopping = True
            self.log(
                f"worker {self.opts.name}: stopping"
                + (" after the current run (Ctrl-C again to hand it back)" if self.current else "")
            )
            worker.cancel()  # procrastinate's graceful stop: the running job finishes
        else:
            self.log(f"worker {self.opts.name}: handing the current run back")
            self.handback.set()

    async def _until_done(self, worker: asyncio.Task) -> None:
        while True:
            await asyncio.sleep(self.opts.poll_s)
            left = await asyncio.to_thread(self._left)
            if left == 0 and self.current is None:
                self.stopping = True
                worker.cancel()
                return

    def _left(self) -> int:
        q = "SELECT COUNT(*) FROM queue_runs WHERE state IN ('queued', 'running')"
        with self.store.db.read() as con:
            if self.opts.tag:
                return int(con.execute(sa.text(q + " AND tag = :t"), {"t": self.opts.tag}).scalar_one())
            return int(con.execute(sa.text(q)).scalar_one())

    # ------------------------------------------------------------------ stalled jobs
    async def _rescue_loop(self) -> None:
        while True:
            await asyncio.sleep(max(0.5, self.opts.stalled_after_s / 3))
            try:
                await self._rescue()
            except Exception as e:  # the database is away for a moment: try again next round
                self.log(f"worker {self.opts.name}: looking for stalled jobs failed: {e}")

    async def _rescue(self) -> None:
        from procrastinate import jobs as pjobs

        stalled = await self.app.job_manager.get_stalled_jobs(
            seconds_since_heartbeat=self.opts.stalled_after_s, task_name=TASK
        )
        for job in stalled:
            if (
                job.id is None or job.id == self.current_job
            ):  # this worker's own run is alive, whatever its heartbeat says
                continue
            qr = await asyncio.to_thread(self._run_of_job, job.id)
            if qr is None:
                continue
            deaths = qr["deaths"] + 1
            why = (
                f"its worker {qr['worker'] or '?'} stopped answering (no heartbeat for "
                f"{self.opts.stalled_after_s:g} s) during {qr['probe'] or 'the run'}"
            )
            try:
                if deaths >= self.opts.max_deaths:
                    await self.app.job_manager.finish_job(job=job, status=pjobs.Status.FAILED, delete_job=False)
                else:
                    await self.app.job_manager.retry_job(job=job)
            except Exception:  # another worker rescued it first
                continue
            final = deaths >= self.opts.max_deaths
            error = f"failed after its worker vanished {deaths} times; last: {why}" if final else None
            await asyncio.to_thread(self._mark_stalled, qr["id"], deaths, why, final, error)
            self.log(
                f"worker {self.opts.name}: run {qr['id']} ({qr['candidate_id']}) "
                + (f"failed: {error}" if final else f"queued again: {why}")
            )

    def _run_of_job(self, job_id: int) -> Optional[dict]:
        with self.store.db.read() as con:
            r = (
                con.execute(
                    sa.text("SELECT id, candidate_id, worker, probe, deaths, state FROM queue_runs WHERE job_id = :j"),
                    {"j": job_id},
                )
                .mappings()
                .first()
            )
        return dict(r) if r else None

    def _mark_stalled(self, rid: int, deaths: int, why: str, final: bool, error: Optional[str]) -> None:
        with self.store.db.write() as con:
            hist = json.loads(
                con.execute(sa.text("SELECT history FROM queue_runs WHERE id = :r"), {"r": rid}).scalar_one()
            )
            hist.append({"ev": "failed" if final else "stalled", "why": why, "by": self.opts.name, "t": now()})
            con.execute(
                sa.text(
                    "UPDATE queue_runs SET state = :s, deaths = :d, lease = NULL, probe = NULL, "
                    "error = :e, history = :h WHERE id = :r AND state = 'running'"
                ),
                {"s": "failed" if final else "queued", "d": deaths, "e": error, "h": json.dumps(hist), "r": rid},
            )

    # ------------------------------------------------------------------ one job
    async def _job(self, context, queue_run_id: int):
        claim = await asyncio.to_thread(self._claim, queue_run_id, context.job.id)
        if claim is None:
            return "already finished"
        self.current = queue_run_id
        self.current_job = context.job.id
        # procrastinate stops its heartbeat as soon as a graceful stop begins (one Ctrl-C),
        # while the run still has minutes to go: beat here too, or the other workers would
        # take a job that is about to be finished
        beat = asyncio.create_task(self._keep_alive(context.job.worker_id))
        tmp = Path(tempfile.mkdtemp(prefix="skq-"))
        try:
            return await self._execute(claim, tmp)
        finally:
            beat.cancel()
            self.current = self.current_job = None
            shutil.rmtree(tmp, ignore_errors=True)

    async def _keep_alive(self, worker_id: Optional[int]) -> None:
        while worker_id is not None:
            await asyncio.sleep(self.opts.heartbeat_s)
            try:
                await self.app.job_manager.update_heartbeat(worker_id)
            except Exception:  # the database is away for a moment: the next beat may reach it
                pass

    def _claim(self, rid: int, job_id: int) -> Optional[dict]:
        """Mark the run as this worker's (a new lease); None when it is already done or
        failed (a job retried after its result was stored runs nothing twice)."""
        lease = uuid.uuid4().hex
        with self.store.db.write() as con:
            r = (
                con.execute(
                    sa.text(
                        "SELECT q.*, c.html, c.labels FROM queue_runs q JOIN queue_candidates c "
                        "ON c.id = q.candidate_id WHERE q.id = :r"
                    ),
                    {"r": rid},
                )
                .mappings()
                .first()
            )
            if r is None or r["state"] in ("done", "failed"):
                return None
            hist = json.loads(r["history"])
            hist.append({"ev": "start", "worker": self.opts.name, "attempt": r["attempts"] + 1, "t": now()})
            # until a probe names its step (its progress task), the run shows the probes it runs
            probes = json.loads(r["options"]).get("probes")
            con.execute(
                sa.text(
                    "UPDATE queue_runs SET state = 'running', worker = :w, lease = :l, probe = :p, "
                    "started_at = :t, attempts = attempts + 1, job_id = :j, history = :h WHERE id = :r"
                ),
                {
                    "w": self.opts.name,
                    "l": lease,
                    "p": "probes: " + ", ".join(probes or ["all"]),
                    "t": now(),
                    "j": job_id,
                    "h": json.dumps(hist),
                    "r": rid,
                },
            )
        self.log(
            f"worker {self.opts.name}: run {rid} ({r['candidate_id']} run {r['repeat_index']}) started"
            f" (attempt {r['attempts'] + 1})"
        )
        return {
            "id": rid,
            "lease": lease,
            "candidate_id": r["candidate_id"],
            "html": bytes(r["html"]),
            "labels": json.loads(r["labels"]),
            "options": json.loads(r["options"]),
            "index": r["repeat_index"],
        }

    async def _execute(self, claim: dict, tmp: Path) -> str:
        """Run one claimed run in a child process (running/child_supervisor.py) within the
        same limits as the local batch, and store its result (a fallback report when the
        child left none)."""
        demo, staging, scratch, spec, spec_path, scenario = _prepare(claim, tmp)
        limits = Limits(
            default_budget(scenario, spec["probes"]),
            float(spec["max_memory_mb"] or DEFAULT_MAX_MEMORY_MB),
            "the worker",
        )
        marker = uuid.uuid4().hex
        t0 = time.monotonic()
        with open(staging / "worker.log", "wb") as log:
            proc = await asyncio.create_subprocess_exec(
                *child_command(spec_path),
                cwd=staging,
                env=child_env(scratch, marker),
                stdout=asyncio.subprocess.PIPE,
                stderr=log,
                stdin=asyncio.subprocess.DEVNULL,
                start_new_session=True,
                limit=1 << 22,
            )
            killed = await self._supervise(proc, claim, marker, limits, t0)
        killed = killed or exit_reason(proc.returncode)
        shutil.rmtree(staging / ".tmp", ignore_errors=True)
        if readable_report(staging) is None:
            reason = killed or "the worker process ended without writing a report"
            label = claim["labels"][0]
            fallback_report(demo, scenario, spec, label, staging, reason, time.monotonic() - t0)
        return await asyncio.to_thread(self._store_result, claim, staging)

    async def _supervise(self, proc, claim: dict, marker: str, limits: Limits, t0: float) -> Optional[str]:
        """Wait for the child, reading its progress; kill it past its limits, on a hand-back
        (raises HandBack) or when procrastinate aborts the job. Returns why it was killed."""
        reader = asyncio.create_task(self._read_progress(proc.stdout, claim["id"]))
        waiter = asyncio.create_task(proc.wait())
        handback = asyncio.create_task(self.handback.wait())
        killed = None
        try:
            while killed is None:
                done, _ = await asyncio.wait({waiter, handback}, timeout=1.0, return_when=asyncio.FIRST_COMPLETED)
                if handback in done:
                    kill_child(proc.pid, marker)
                    await asyncio.to_thread(self._hand_back, claim)
                    raise HandBack(f"run {claim['id']} handed back by {self.opts.name}")
                if waiter in done:
                    break
                killed = limits.broken(proc.pid, t0)
            if killed:
                kill_child(proc.pid, marker)
        except asyncio.CancelledError:  # procrastinate aborts the job: nothing of the run outlives it
            kill_child(proc.pid, marker)
            raise
        finally:
            handback.cancel()
            await proc.wait()
            kill_marked(marker)
            await asyncio.gather(reader, return_exceptions=True)
        return killed

    async def _read_progress(self, stream, rid: int) -> None:
        """The run's JSON progress lines (run_progress.JsonLinesProgress): the current task's
        description becomes the run's `probe` in queue status (at most every 2 s)."""
        last = 0.0
        note = None
        async for line in stream:
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            if ev.get("ev") == "task":
                note = str(ev.get("description", ""))[:120]
                if time.monotonic() - last >= 2.0:
                    last = time.monotonic()
                    await asyncio.to_thread(self._set_probe, rid, note)

    def _set_probe(self, rid: int, note: str) -> None:
        with self.store.db.write() as con:
            con.execute(
                sa.text("UPDATE queue_runs SET probe = :p WHERE id = :r AND state = 'running'"), {"p": note, "r": rid}
            )

    def _hand_back(self, claim: dict) -> None:
        with self.store.db.write() as con:
            hist = json.loads(
                con.execute(sa.text("SELECT history FROM queue_runs WHERE id = :r"), {"r": claim["id"]}).scalar_one()
            )
            hist.append({"ev": "handed back", "worker": self.opts.name, "t": now()})
            con.execute(
                sa.text(
                    "UPDATE queue_runs SET state = 'queued', worker = NULL, lease = NULL, probe = NULL, "
                    "history = :h WHERE id = :r AND lease = :l"
                ),
                {"h": json.dumps(hist), "r": claim["id"], "l": claim["lease"]},
            )

    def _store_result(self, claim: dict, staging: Path) -> str:
        """The run becomes a result in one transaction, only under this attempt's lease."""
        prep = self.store.prepare_run(staging)
        final_dir = None
        if self.opts.artifacts is not None:
            final_dir = self.opts.artifacts / claim["candidate_id"] / f"run-{claim['id']}-{claim['lease'][:8]}"
            partial = final_dir.with_name(".partial-" + final_dir.name)
            shutil.rmtree(partial, ignore_errors=True)
            shutil.copytree(staging, partial)
            os.replace(partial, final_dir)  # whole, or not there
            prep.run_dir = final_dir
        env = prep.report.environment or {}
        fp = {k: env.get(k) for k in FINGERPRINT_KEYS}
        fp["calibration"] = {"within_tolerance": (env.get("calibration") or {}).get("within_tolerance", True)}
        fp.update(worker=self.opts.name, host=socket.gethostname())
        with self.store.db.write() as con:
            r = (
                con.execute(sa.text("SELECT state, lease, history FROM queue_runs WHERE id = :r"), {"r": claim["id"]})
                .mappings()
                .first()
            )
            if r is None or r["state"] != "running" or r["lease"] != claim["lease"]:
                taken = "already done" if r and r["state"] == "done" else "taken over by another worker"
                self.log(f"worker {self.opts.name}: run {claim['id']} was {taken}: its result here is not stored")
                if final_dir is not None:
                    shutil.rmtree(final_dir, ignore_errors=True)
                return f"not stored ({taken})"
            res = self.store.insert_run(
                con,
                prep,
                storage="disk" if final_dir else "db",
                run_dir=str(final_dir) if final_dir else f"queue:{claim['id']}",
            )
            hist = json.loads(r["history"])
            hist.append({"ev": "done", "worker": self.opts.name, "result": res.run_id, "t": now()})
            con.execute(
                sa.text(
                    "UPDATE queue_runs SET state = 'done', result_run_id = :res, finished_at = :t, "
                    "probe = NULL, fingerprint = :fp, history = :h WHERE id = :r"
                ),
                {"res": res.run_id, "t": now(), "fp": json.dumps(fp), "h": json.dumps(hist), "r": claim["id"]},
            )
        got, mx = prep.report.auto_points()
        self.log(
            f"worker {self.opts.name}: run {claim['id']} done — auto {got:g}/{mx:g}, {res.files} files stored"
            f"{' under ' + str(final_dir) if final_dir else ' in the database'}"
        )
        return f"stored as run {res.run_id}"


def _prepare(claim: dict, tmp: Path):
    """The claimed run's files in `tmp`: the candidate, the frozen scenario, the child's spec;
    returns (demo, staging, scratch, spec, spec_path, scenario)."""
    opts = claim["options"]
    demo = tmp / "candidate.html"
    demo.write_bytes(claim["html"])
    staging = tmp / "run"
    (staging / ".tmp").mkdir(parents=True)
    scratch = tmp / "scratch"
    scratch.mkdir()
    scenario_path = None
    if opts.get("scenario"):  # the --scenario file frozen by `queue add`
        scenario_path = tmp / "scenario.yaml"
        scenario_path.write_text(opts["scenario"], encoding="utf-8")
    spec = {
        "demo": str(demo),
        "out_dir": str(staging),
        "label": claim["labels"][0],
        "scenario": str(scenario_path) if scenario_path else None,
        "overrides": opts.get("overrides") or {},
        "probes": opts.get("probes"),
        "network": opts.get("network", "offline"),
        "max_memory_mb": opts.get("max_memory_mb"),
    }
    spec_path = staging / ".tmp" / "worker-spec.json"
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    return demo, staging, scratch, spec, spec_path, load_scenario(scenario_path, spec["overrides"])


def run_worker(target: str, opts: WorkerOptions, log=print) -> int:
    if opts.artifacts is not None and opts.artifacts.exists() and not opts.artifacts.is_dir():
        raise UserError(f"--artifacts {opts.artifacts}: not a directory")
    w = QueueWorker(target, opts, log=log)
    return asyncio.run(w.main())
