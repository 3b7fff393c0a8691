"""`queue add` and `worker` on bad input, against a real PostgreSQL (tests/pg.py):
an unreachable server, a wrong password, a store from a newer bench, a SQLite path: one
line, exit 2, nothing enqueued. A file that is not HTML is refused by name and the rest is
enqueued (exit 1); identical files are one candidate with both labels; adding again adds
nothing. No browser: these only plan."""

import json
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import sqlalchemy as sa
from typer.testing import CliRunner

from skycity_bench.cli import app
from skycity_bench.common.errors import UserError
from skycity_bench.store.review_store import ReviewStore

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "tests" / "fixtures" / "batch"


def invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def rows(url: str) -> list[dict]:
    st = ReviewStore(url)
    try:
        with st.db.read() as con:
            return [
                dict(r)
                for r in con.execute(
                    sa.text(
                        "SELECT q.*, c.labels FROM queue_runs q JOIN queue_candidates c ON c.id = q.candidate_id "
                        "ORDER BY q.id"
                    )
                ).mappings()
            ]
    finally:
        st.close()


def jobs(url: str) -> list[tuple]:
    st = ReviewStore(url)
    try:
        with st.db.read() as con:
            return con.execute(sa.text("SELECT id, queue_name, status, args FROM procrastinate_jobs ORDER BY id")).all()
    finally:
        st.close()


def test_should_enqueue_one_job_per_run_refuse_a_non_html_file_and_keep_both_labels(tmp_path, pg_url):
    twin = tmp_path / "same-bytes-other-name.html"
    shutil.copy(TINY / "tiny1.html", twin)
    notes = tmp_path / "notes.txt"
    notes.write_text("just some notes, no markup at all\n")
    res = invoke(
        "queue",
        "add",
        TINY / "tiny1.html",
        twin,
        TINY / "tiny2.html",
        notes,
        "--db",
        pg_url,
        "--repeat",
        "2",
        "--probe",
        "packaging",
        "--tag",
        "ref-a",
    )
    assert res.exit_code == 1, res.output
    assert f"refused: {notes}: not an HTML file" in " ".join(res.output.split())
    assert "2 candidate(s), 4 run(s) enqueued" in res.output
    rs = rows(pg_url)
    assert len(rs) == 4 and {r["state"] for r in rs} == {"queued"} and {r["tag"] for r in rs} == {"ref-a"}
    labels = {r["candidate_id"]: json.loads(r["labels"]) for r in rs}
    assert sorted(len(v) for v in labels.values()) == [1, 2]  # identical files: one candidate, both labels
    assert any(str(twin) in v and str(TINY / "tiny1.html") in v for v in labels.values())
    assert json.loads(rs[0]["options"])["probes"] == ["packaging"]
    js = jobs(pg_url)
    assert [(j.queue_name, j.status) for j in js] == [("ref-a", "todo")] * 4
    assert sorted(j.args["queue_run_id"] for j in js) == [r["id"] for r in rs]
    # the same files again: nothing new; other options under the same tag: refused, nothing stored
    again = invoke(
        "queue", "add", TINY / "tiny1.html", "--db", pg_url, "--repeat", "2", "--probe", "packaging", "--tag", "ref-a"
    )
    assert again.exit_code == 0 and "0 run(s) enqueued, 2 already queued" in again.output
    other = invoke("queue", "add", TINY / "tiny1.html", "--db", pg_url, "--probe", "frame_pacing", "--tag", "ref-a")
    assert isinstance(other.exception, UserError) and "other options" in str(other.exception)
    assert len(rows(pg_url)) == 4 and len(jobs(pg_url)) == 4


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_should_refuse_bad_databases_in_one_line_and_enqueue_nothing(tmp_path, postgres, pg_url):
    add = ["queue", "add", TINY / "tiny1.html", "--probe", "packaging", "--db"]
    newer = ReviewStore(pg_url)
    with newer.db.write() as con:
        con.execute(sa.text("UPDATE alembic_version SET version_num = '9999'"))
    newer.close()
    cases = {
        f"postgresql://postgres:x@127.0.0.1:{_closed_port()}/postgres": "cannot open the store",
        postgres.url(password="not-the-password"): "password authentication failed",
        pg_url: "newer than this bench knows",
        str(tmp_path / "local.sqlite"): "needs a PostgreSQL database",
    }
    for url, msg in cases.items():
        res = invoke(*add, url)
        assert isinstance(res.exception, UserError) and msg in str(res.exception), (url, res.output)
        assert "\n" not in str(res.exception)
        w = invoke("worker", "--db", url)
        assert isinstance(w.exception, UserError), (url, w.output)
    st = sa.create_engine(pg_url.replace("postgresql://", "postgresql+psycopg://"))
    with st.connect() as con:
        assert con.execute(sa.text("SELECT to_regclass('procrastinate_jobs')")).scalar() is None  # nothing enqueued
    st.dispose()
    # through the real command line: exit 2, one line on stderr, no traceback
    url = postgres.url(password="not-the-password")
    r = subprocess.run(
        [sys.executable, "-m", "skycity_bench", *map(str, add), url],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert "not-the-password" not in r.stderr


def test_should_say_when_the_machines_behind_a_tag_are_not_comparable(pg_url):
    from skycity_bench.queue.status import render, status
    from tests.review_reports import ENV

    res = invoke(
        "queue",
        "add",
        TINY / "tiny1.html",
        TINY / "tiny2.html",
        TINY / "tiny3.html",
        "--db",
        pg_url,
        "--probe",
        "packaging",
        "--tag",
        "mixed",
    )
    assert res.exit_code == 0, res.output
    st = ReviewStore(pg_url)
    fast = {**ENV, "worker": "ref-a"}
    other = {**ENV, "worker": "ref-b", "browser_version": "121.0", "refresh_interval_ms": 16.0}
    with st.db.write() as con:
        for rid, fp in ((1, fast), (2, other)):
            con.execute(
                sa.text(
                    "UPDATE queue_runs SET state = 'done', started_at = :s, finished_at = :f, "
                    "fingerprint = :fp WHERE id = :r"
                ),
                {
                    "s": f"2026-12-03T10:0{rid}:00+00:00",
                    "f": f"2026-12-03T10:0{rid}:30+00:00",
                    "fp": json.dumps(fp),
                    "r": rid,
                },
            )
    t = status(st, "mixed")["tags"]["mixed"]
    st.close()
    assert t["counts"] == {"queued": 1, "running": 0, "done": 2, "failed": 0}
    assert t["throughput_per_h"] == round(2 / 90 * 3600, 1) and t["eta_s"] == 45
    assert not t["environments"]["comparable"] and t["environments"]["machines"] == ["ref-a", "ref-b"]
    text = render({"tags": {"mixed": t}})
    assert "NOT comparable" in text and "browser_version" in text and "ranks their runs apart" in text


def test_should_show_the_queue_progress_in_the_review_app(pg_url):
    from fastapi.testclient import TestClient

    from skycity_bench.queue.progress_page import install
    from skycity_bench.review import create_app
    from tests.review_reports import client as signed_client

    assert (
        invoke(
            "queue",
            "add",
            TINY / "tiny1.html",
            TINY / "tiny2.html",
            "--db",
            pg_url,
            "--probe",
            "packaging",
            "--tag",
            "ref-b",
        ).exit_code
        == 0
    )
    st = ReviewStore(pg_url)
    web = create_app(st)
    install(web, st)
    assert TestClient(web, base_url="http://127.0.0.1").get("/api/queue/status").status_code == 401  # admins only
    client = signed_client(web, st, "operator", "admin")
    page = client.get("/progress")
    assert page.status_code == 200 and "tag ref-b: 2 queued · 0 running · 0 done · 0 failed" in page.text
    assert "tiny1" not in page.text  # blind: anonymous ids only
    assert client.get("/api/queue/status").json()["tags"]["ref-b"]["counts"]["queued"] == 2
    st.close()
