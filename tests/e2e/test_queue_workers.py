"""Two reference machines, one queue, on a real PostgreSQL (tests/pg.py) with real Chromium
runs: 6 runs enqueued (3 light fixture demos × --repeat 2, the packaging probe only, a short
calibration), two worker processes ("wA" stores evidence in the database, "wB" under
--artifacts), wA killed with kill -9 in the middle of a run.

Every run ends done exactly once (6 results, none lost, none twice), the killed run was
queued again from missed heartbeats and finished by wB, `queue status` showed progress
throughout, and the sheet over PostgreSQL equals the sheet over SQLite for the same runs
(the PostgreSQL store's reports and files exported to folders and imported into SQLite)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sqlalchemy as sa
import yaml
from typer.testing import CliRunner

from skycity_bench.cli import app
from skycity_bench.queue.status import status
from skycity_bench.store.review_store import ReviewStore

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "tests" / "fixtures" / "batch"
STALLED_AFTER = 4  # --heartbeat 1: a killed worker's job is queued again within ~5 s


def fast_scenario(path: Path) -> Path:
    d = yaml.safe_load((ROOT / "scenarios" / "skycity.yaml").read_text(encoding="utf-8"))
    d["calibration"]["duration_s"] = 0.5
    path.write_text(yaml.safe_dump(d, allow_unicode=True), encoding="utf-8")
    return path


def worker(url: str, name: str, log: Path, *extra: str) -> subprocess.Popen:
    cmd = [
        sys.executable,
        "-m",
        "skycity_bench",
        "worker",
        "--db",
        url,
        "--name",
        name,
        "--tag",
        "ref",
        "--heartbeat",
        "1",
        "--stalled-after",
        str(STALLED_AFTER),
        "--until-done",
        *extra,
    ]
    return subprocess.Popen(cmd, cwd=ROOT, stdout=open(log, "wb"), stderr=subprocess.STDOUT)


@pytest.fixture(scope="module")
def two_machines(tmp_path_factory, postgres):
    tmp = tmp_path_factory.mktemp("queue")
    url = postgres.url(postgres.new_db())
    add = CliRunner().invoke(
        app,
        [
            "queue",
            "add",
            str(TINY / "tiny1.html"),
            str(TINY / "tiny2.html"),
            str(TINY / "tiny3.html"),
            "--db",
            url,
            "--repeat",
            "2",
            "--probe",
            "packaging",
            "--viewport",
            "320x240",
            "--scenario",
            str(fast_scenario(tmp / "fast.yaml")),
            "--tag",
            "ref",
        ],
    )
    assert add.exit_code == 0, add.output
    store = ReviewStore(url)
    wa = worker(url, "wA", tmp / "wA.log")
    wb = None
    snapshots, killed_run = [], None
    deadline = time.monotonic() + 600
    try:
        while time.monotonic() < deadline:
            st = status(store, "ref")["tags"].get("ref")
            snapshots.append(st)
            running = st["running"] if st else []
            if wb is None and any(r["worker"] == "wA" for r in running):
                # wA holds a run: start the second machine, then kill wA once its run is well under way
                wb = worker(url, "wB", tmp / "wB.log", "--artifacts", str(tmp / "artifacts"))
            if killed_run is None and wb is not None:
                mine = [r for r in running if r["worker"] == "wA" and (r["elapsed_s"] or 0) >= 2]
                if mine:
                    killed_run = mine[0]
                    os.kill(wa.pid, signal.SIGKILL)
                    wa.wait()
            if killed_run is not None and wb.poll() is not None:
                break
            time.sleep(0.5)
        snapshots.append(status(store, "ref")["tags"]["ref"])
        cli_status = CliRunner().invoke(app, ["queue", "status", "--db", url])
    finally:
        for p in (wa, wb):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
    with store.db.read() as con:
        qruns = [dict(r) for r in con.execute(sa.text("SELECT * FROM queue_runs ORDER BY id")).mappings()]
        runs = [
            dict(r)
            for r in con.execute(
                sa.text("SELECT id, candidate_id, storage, run_dir, report_json FROM runs ORDER BY id")
            ).mappings()
        ]
        pjobs = con.execute(sa.text("SELECT id, status, attempts FROM procrastinate_jobs ORDER BY id")).all()
    yield {
        "url": url,
        "store": store,
        "tmp": tmp,
        "qruns": qruns,
        "runs": runs,
        "jobs": pjobs,
        "snapshots": snapshots,
        "killed": killed_run,
        "wb_rc": wb.returncode if wb else None,
        "logs": {n: (tmp / f"{n}.log").read_text(errors="replace") for n in ("wA", "wB")},
        "cli_status": cli_status,
    }
    store.close()


def test_should_finish_every_run_exactly_once_after_a_worker_is_killed(two_machines):
    m = two_machines
    assert m["killed"] is not None, "wA never held a run long enough to be killed: " + m["logs"]["wA"][-2000:]
    assert m["wb_rc"] == 0, m["logs"]["wB"][-3000:]
    q = m["qruns"]
    assert [r["state"] for r in q] == ["done"] * 6, [(r["id"], r["state"], r["error"]) for r in q]
    # 6 results, none lost, none twice: one runs row per queued run, each one's own
    assert len(m["runs"]) == 6 and sorted(r["result_run_id"] for r in q) == sorted(r["id"] for r in m["runs"])
    for r in q:
        assert sum(1 for h in json.loads(r["history"]) if h["ev"] == "done") == 1
    assert [j.status for j in m["jobs"]] == ["succeeded"] * 6


def test_should_retry_the_killed_run_on_the_other_worker(two_machines):
    m = two_machines
    killed = next(r for r in m["qruns"] if r["id"] == m["killed"]["run"])
    hist = json.loads(killed["history"])
    evs = [(h["ev"], h.get("worker") or h.get("by")) for h in hist]
    assert ("start", "wA") in evs and ("stalled", "wB") in evs and evs[-1] == ("done", "wB"), evs
    assert killed["worker"] == "wB" and killed["attempts"] >= 2 and killed["deaths"] == 1
    assert "stopped answering" in next(h["why"] for h in hist if h["ev"] == "stalled")
    # what wA had half-done is nowhere: wB's run is the stored one, under its artifacts folder
    res = next(r for r in m["runs"] if r["id"] == killed["result_run_id"])
    assert res["storage"] == "disk" and Path(res["run_dir"]).is_relative_to(m["tmp"] / "artifacts")
    fps = {json.loads(r["fingerprint"])["worker"] for r in m["qruns"]}
    assert fps <= {"wA", "wB"} and "wB" in fps


def test_should_show_progress_throughout(two_machines):
    snaps = [s for s in two_machines["snapshots"] if s]
    done = [s["counts"]["done"] for s in snaps]
    assert done == sorted(done) and done[-1] == 6 and len(set(done)) >= 4
    seen_running = [r for s in snaps for r in s["running"]]
    assert {r["worker"] for r in seen_running} == {"wA", "wB"}
    assert all(r["probe"] and r["since"] for r in seen_running) and any("packaging" in r["probe"] for r in seen_running)
    assert any(s["eta_s"] not in (None, 0) for s in snaps) and snaps[-1]["eta_s"] == 0
    out = two_machines["cli_status"].output
    assert "tag ref: 0 queued · 0 running · 6 done · 0 failed" in out and "runs/h" in out


def test_should_give_the_same_sheet_over_postgres_and_sqlite(two_machines, tmp_path):
    m = two_machines
    store: ReviewStore = m["store"]
    folders = []
    for r in m["runs"]:  # export each stored run: its report.json and every file, from the database or disk
        d = tmp_path / "export" / f"run-{r['id']}"
        d.mkdir(parents=True)
        (d / "report.json").write_text(r["report_json"], encoding="utf-8")
        with store.db.read() as con:
            files = con.execute(sa.text("SELECT id, relpath FROM run_files WHERE run_id = :r"), {"r": r["id"]}).all()
        for fid, rel in files:
            (d / rel).parent.mkdir(parents=True, exist_ok=True)
            (d / rel).write_bytes(store.file(fid).read_bytes())
        folders.append(d)
    lite = tmp_path / "same.sqlite"
    res = CliRunner().invoke(app, ["import", *map(str, folders), "--db", str(lite), "--no-html"])
    assert res.exit_code == 0, res.output

    def sheet(db):
        out = CliRunner().invoke(app, ["sheet", "--db", db, "--format", "json", "--unblind"])
        assert out.exit_code == 0, out.output
        # each store gives its candidates random ids of its own: compare by the file's bench id
        with ReviewStore(db).db.read() as con:
            ids = dict(con.execute(sa.text("SELECT id, bench_id FROM candidates")).all())
        text = out.stdout
        for cid, bench_id in ids.items():
            text = text.replace(cid, bench_id)
        doc = json.loads(text)
        for c in doc["candidates"]:
            c.pop("run_id", None)
        doc["candidates"].sort(key=lambda c: c["candidate_id"])
        for part in doc.get("ranking", {}).values():
            part.sort(key=lambda x: x["candidate_id"])
        return doc

    pg, sq = sheet(m["url"]), sheet(str(lite))
    assert pg == sq and len(pg["candidates"]) == 3


def test_should_finish_on_one_ctrl_c_and_hand_back_on_two(tmp_path, postgres):
    url = postgres.url(postgres.new_db())
    add = CliRunner().invoke(
        app,
        [
            "queue",
            "add",
            str(TINY / "tiny1.html"),
            str(TINY / "tiny2.html"),
            "--db",
            url,
            "--probe",
            "packaging",
            "--viewport",
            "320x240",
            "--tag",
            "ref",
            "--scenario",
            str(fast_scenario(tmp_path / "fast.yaml")),
        ],
    )
    assert add.exit_code == 0, add.output
    store = ReviewStore(url)

    def states():
        return [r["state"] for r in status(store, "ref")["tags"]["ref"]["running"]], status(store, "ref")["tags"][
            "ref"
        ]["counts"]

    def until_running(p):
        for _ in range(600):
            if status(store, "ref")["tags"]["ref"]["counts"]["running"] == 1 or p.poll() is not None:
                return
            time.sleep(0.2)

    try:
        # twice: the run is stopped and handed back, queued again; nothing stored
        w = worker(url, "wC", tmp_path / "wC.log")
        until_running(w)
        w.send_signal(signal.SIGINT)
        time.sleep(0.5)
        w.send_signal(signal.SIGINT)
        assert w.wait(120) == 0, (tmp_path / "wC.log").read_text()
        counts = status(store, "ref")["tags"]["ref"]["counts"]
        assert counts == {"queued": 2, "running": 0, "done": 0, "failed": 0}, counts
        assert "handing the current run back" in (tmp_path / "wC.log").read_text()
        # once: the current run finishes and is stored, then the worker stops; the other stays queued
        w = worker(url, "wD", tmp_path / "wD.log")
        until_running(w)
        w.send_signal(signal.SIGINT)
        assert w.wait(300) == 0, (tmp_path / "wD.log").read_text()
        counts = status(store, "ref")["tags"]["ref"]["counts"]
        assert counts == {"queued": 1, "running": 0, "done": 1, "failed": 0}, (
            counts,
            (tmp_path / "wD.log").read_text(),
        )
        with store.db.read() as con:
            assert con.execute(sa.text("SELECT COUNT(*) FROM runs")).scalar() == 1
            handed = [json.loads(h) for (h,) in con.execute(sa.text("SELECT history FROM queue_runs"))]
        assert any(e["ev"] == "handed back" for h in handed for e in h)
    finally:
        store.close()
