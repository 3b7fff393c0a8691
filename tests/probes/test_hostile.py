"""Hostile demos: each case ends within its time budget, its report.json says what the demo
did, the batch goes on to the next candidate, nothing is written outside the run's folder,
and no local file's content ever reaches the demo.

One batch (the real CLI, one worker process per candidate) runs every fixture in
tests/fixtures/hostile/ once; each test below reads its own candidate's results.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from tests.truth import FIXTURES, assert_truth, fixture

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = FIXTURES / "hostile"
BUDGET_S = 60  # --candidate-timeout: the hard wall-clock bound of each run
SECRET_PORT = 18765  # local_fetch.html tries this loopback port
SECRET = "skycity-secret-4b1d9e"
NAMES = sorted(p.stem for p in HOSTILE.glob("*.html"))


def fast_scenario(path: Path) -> Path:
    """The default scenario with short calibration and load/grace timeouts, so hostile cases
    end in seconds, not in the minute a real run allows."""
    d = yaml.safe_load((ROOT / "scenarios" / "skycity.yaml").read_text(encoding="utf-8"))
    d["calibration"]["duration_s"] = 0.5
    d["timeouts"] = {"load_s": 5, "probe_grace_s": 8}
    # No machine-noise calibrations around the frame-pacing pass and no re-run of a noisy one
    # (tests/probes/test_frame_pacing_fixtures.py checks those): seconds off every run here,
    # and a run plays its demo once whatever the machine's load.
    d["probes"]["frame_pacing"].update(noise_calibration_s=0, noise_reruns=0)
    path.write_text(yaml.safe_dump(d, allow_unicode=True), encoding="utf-8")
    return path


class _Secret(BaseHTTPRequestHandler):
    hits: list = []

    def do_GET(self):  # noqa: N802
        _Secret.hits.append(self.path)
        body = SECRET.encode()
        self.send_response(200)
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


def _find_named(name: str, roots: list[Path], max_depth: int = 4) -> list[str]:
    found = []
    for root in roots:
        if not root.is_dir():
            continue
        base = len(root.parts)
        for d, dirs, files in os.walk(root, onerror=lambda e: None):
            if len(Path(d).parts) - base >= max_depth:
                dirs[:] = []
            if name in files:
                found.append(os.path.join(d, name))
    return found


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile")
    out = tmp / "out"
    srv = ThreadingHTTPServer(("127.0.0.1", SECRET_PORT), _Secret)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    before = set(os.listdir(ROOT))
    # The batch's own temp folder (each run's browser scratch is made in it, and every process
    # of a run inherits it as TMPDIR): what tells this batch's processes from those of a batch
    # another test worker runs meanwhile. Short: a Unix socket path in it must stay under 108 bytes.
    batch_tmp = tempfile.mkdtemp(prefix="skh-")
    t = time.monotonic()
    try:
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "skycity_bench",
                "run",
                str(HOSTILE),
                "--out",
                str(out),
                "--duration",
                "3",
                "--viewport",
                "640x360",
                "--probe",
                "frame_pacing",
                "--scenario",
                str(fast_scenario(tmp / "scenario.yaml")),
                "--max-memory-mb",
                "1024",
                "--candidate-timeout",
                str(BUDGET_S),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=len(NAMES) * (BUDGET_S + 20),
            env=dict(os.environ, TMPDIR=batch_tmp),
        )
    finally:
        srv.shutdown()
        srv.server_close()
    elapsed = time.monotonic() - t
    manifest = json.loads((out / "batch.json").read_text())
    runs = {Path(manifest["candidates"][x["candidate"]]["labels"][0]).stem: x for x in manifest["runs"]}
    reports = {n: json.loads((out / runs[n]["dir"] / "report.json").read_text()) for n in runs}
    yield {
        "proc": r,
        "out": out,
        "runs": runs,
        "reports": reports,
        "manifest": manifest,
        "elapsed": elapsed,
        "repo_before": before,
        "hits": list(_Secret.hits),
        "tmp": batch_tmp,
    }
    shutil.rmtree(batch_tmp, ignore_errors=True)


def _common(batch, name: str) -> dict:
    """What every hostile case must show: the run ended within its budget, report.json is whole
    with every sheet item, and the fixture's truth holds."""
    run = batch["runs"][name]
    assert run["state"] == "done" and run["attempts"] == 1, run
    assert run["duration_s"] <= BUDGET_S + 5, f"{name}: {run['duration_s']} s"
    rep = batch["reports"][name]
    assert rep["schema"] == "skycity-bench/report@1" and len(rep["items"]) == 20
    assert_truth(fixture(f"hostile/{name}"), rep)
    return rep


@pytest.mark.browser
def test_should_run_every_hostile_candidate_to_the_end_of_the_batch(batch):
    assert sorted(batch["runs"]) == NAMES, batch["proc"].stderr[-2000:]
    assert all(r["state"] == "done" for r in batch["runs"].values())
    assert batch["proc"].returncode == 1  # some probes could not collect: exit 1, not a crash
    assert "Traceback" not in batch["proc"].stderr
    summary = json.loads((batch["out"] / "summary.json").read_text())
    assert len(summary["candidates"]) == len(NAMES)


@pytest.mark.browser
def test_should_dismiss_alert_confirm_prompt_and_report_them(batch):
    rep = _common(batch, "dialogs")
    pe = rep["probes"]["page_events"]["data"]
    assert {d["type"] for d in pe["dialogs"]} >= {"alert", "confirm", "prompt"}
    assert any("dialog" in w for w in rep["warnings"])


@pytest.mark.browser
def test_should_close_popups_and_write_no_download(batch):
    rep = _common(batch, "popups")
    truth = fixture("hostile/popups").truth["page"]
    # The page opens its popups once per load: a run that ends in review plays the demo a
    # second time in real time for the 录屏复核 video (probes.realtime_capture), and that
    # load opens them again.
    filmed = (rep["probes"].get("realtime_capture") or {}).get("data") or {}
    loads = 2 if filmed.get("pass") == "second_pass" else 1
    assert rep["probes"]["page_events"]["data"]["popup_count"] == truth["popups"] * loads
    assert any("popup" in w for w in rep["warnings"])
    roots = [batch["out"], ROOT, Path.home(), Path("/tmp")]
    assert _find_named(truth["download_name"], roots) == []


@pytest.mark.browser
def test_should_notice_a_demo_navigating_away_and_not_measure_the_blank_page(batch):
    rep = _common(batch, "navigate_away")
    fp = rep["items"]["smoothness.frame_pacing"]
    assert fp["points"] is None and "left its own document" in fp["evidence"]["reason"]
    assert "about:blank" in rep["probes"]["page_events"]["data"]["left_document"]


@pytest.mark.browser
def test_should_bound_an_infinite_loop_and_say_it_hangs(batch):
    rep = _common(batch, "infinite_loop")
    assert "hang" in rep["items"]["smoothness.frame_pacing"]["evidence"]["reason"]


@pytest.mark.browser
def test_should_kill_a_memory_blowup_and_say_so(batch):
    rep = _common(batch, "memory_blowup")
    kills = rep["memory_watchdog"]["kills"]
    assert kills and kills[0]["rss_mb"] > 1024 and kills[0]["process"] == "renderer"
    assert "memory" in rep["items"]["smoothness.frame_pacing"]["evidence"]["reason"]


@pytest.mark.browser
def test_should_survive_a_renderer_crash_and_report_it(batch):
    rep = _common(batch, "renderer_crash")
    assert "crash" in rep["items"]["smoothness.frame_pacing"]["evidence"]["reason"]
    assert rep["probes"]["page_events"]["data"]["renderer_crashes"] >= 1


@pytest.mark.browser
def test_should_keep_local_files_and_loopback_ports_out_of_the_demos_reach(batch):
    rep = _common(batch, "local_fetch")
    errors = rep["probes"]["page_events"]["data"]["page_errors"] + rep["probes"]["frame_pacing"]["data"]["page_errors"]
    results = [e for e in errors if "hostile-fetch results" in e]
    assert results, "the fixture's own result line must reach the report (else this test could not fail)"
    assert "READ" not in results[0], results[0]
    assert batch["hits"] == [], "a loopback port outside the bench was reached"
    urls = {r["url"] for r in rep["probes"]["network"]["data"]["requests"]}
    assert any(":18765/" in u for u in urls)  # recorded and blocked by the router
    passwd = Path("/etc/passwd").read_text().splitlines()[0]
    for p in batch["out"].rglob("*"):
        if p.is_file() and ".inputs" not in p.parts:
            text = p.read_bytes().decode("utf-8", errors="replace")
            assert passwd not in text and SECRET not in text, p


@pytest.mark.browser
def test_should_bound_a_huge_dom(batch):
    rep = _common(batch, "huge_dom")
    assert rep["probes"]["frame_pacing"]["status"] in ("ok", "error")


@pytest.mark.browser
def test_should_write_nothing_outside_the_run_folders(batch):
    out = batch["out"]
    assert set(os.listdir(ROOT)) == batch["repo_before"]
    assert not list(out.rglob(".partial-*")) and not list(out.rglob(".tmp"))
    allowed = {"batch.json", "summary.json", ".lock", ".inputs"} | {r["dir"] for r in batch["runs"].values()}
    assert set(os.listdir(out)) <= allowed
    # no process of any run outlives it (every worker and browser process carries its run's marker)
    assert _live_marked(batch["tmp"]) == []


def _live_marked(batch_tmp: str) -> list[int]:
    """Processes still carrying a run's marker in their environment, of this batch (their
    TMPDIR is in the batch's temp folder), not of a batch another test worker runs."""
    live = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            try:
                env = Path(f"/proc/{name}/environ").read_bytes().split(b"\0")
            except OSError:
                continue
            tmpdir = next((e[7:].decode(errors="replace") for e in env if e.startswith(b"TMPDIR=")), "")
            if any(e.startswith(b"SKYCITY_RUN_MARKER=") for e in env) and tmpdir.startswith(batch_tmp):
                live.append(int(name))
    return live
