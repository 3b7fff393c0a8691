"""Batch runs survive kill -9: the batch is killed while its second candidate runs, started
again with the same --out, and finishes with every result exactly once: nothing lost,
nothing run twice, nothing half-written read."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from skycity_bench.batch.batch_run import discover
from skycity_bench.common.errors import UserError

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "tests" / "fixtures" / "batch"


def fast_scenario(path: Path) -> Path:
    d = yaml.safe_load((ROOT / "scenarios" / "skycity.yaml").read_text(encoding="utf-8"))
    d["calibration"]["duration_s"] = 0.5
    d["timeouts"] = {"load_s": 5, "probe_grace_s": 8}
    # No machine-noise calibrations around the frame-pacing pass and no re-run of a noisy one
    # (tests/probes/test_frame_pacing_fixtures.py checks those): seconds off every run here,
    # and a run plays its demo once whatever the machine's load.
    d["probes"]["frame_pacing"].update(noise_calibration_s=0, noise_reruns=0)
    path.write_text(yaml.safe_dump(d, allow_unicode=True), encoding="utf-8")
    return path


def batch_cmd(out: Path, scenario: Path, *paths: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "skycity_bench",
        "run",
        *paths,
        "--out",
        str(out),
        "--duration",
        "1",
        "--viewport",
        "320x240",
        "--probe",
        "frame_pacing",
        "--scenario",
        str(scenario),
        "--candidate-timeout",
        "60",
    ]


def _manifest(out: Path) -> dict | None:
    try:
        return json.loads((out / "batch.json").read_text())
    except (OSError, ValueError):
        return None


def _live(markers: set[str]) -> list[int]:
    live = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                env = Path(f"/proc/{name}/environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if any(e.startswith(b"SKYCITY_RUN_MARKER=") and e.split(b"=", 1)[1].decode() in markers for e in env):
                live.append(int(name))
    return live


@pytest.fixture(scope="module")
def killed_and_resumed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("resume")
    out, sc = tmp / "out", fast_scenario(tmp / "scenario.yaml")
    cmd = batch_cmd(out, sc, str(TINY))
    first = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 150
    markers: set[str] = set()
    # Kill -9 once the first run is done and the second one is running.
    while time.monotonic() < deadline and first.poll() is None:
        m = _manifest(out)
        if m:
            markers |= {r["marker"] for r in m["runs"] if r.get("marker")}
            states = [r["state"] for r in m["runs"]]
            if states[0] == "done" and states[1] == "running":
                time.sleep(1.0)  # well inside the second run: its browser is up
                break
        time.sleep(0.1)
    assert first.poll() is None, "the batch ended before it could be killed"
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    killed = _manifest(out)
    markers |= {r["marker"] for r in killed["runs"] if r.get("marker")}
    done_before = {
        r["key"]: (out / r["dir"] / "report.json").read_bytes() for r in killed["runs"] if r["state"] == "done"
    }
    time.sleep(2)  # workers die with their parent (PR_SET_PDEATHSIG)
    orphans = _live(markers)
    second = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=200)
    return {
        "out": out,
        "killed": killed,
        "done_before": done_before,
        "orphans": orphans,
        "second": second,
        "final": _manifest(out),
        "markers": markers,
    }


@pytest.mark.browser
def test_should_leave_no_worker_running_after_the_batch_is_killed(killed_and_resumed):
    assert killed_and_resumed["orphans"] == []
    states = [r["state"] for r in killed_and_resumed["killed"]["runs"]]
    assert states[0] == "done" and states[1] == "running" and states[2] == "pending"


@pytest.mark.browser
def test_should_resume_without_losing_or_repeating_a_run(killed_and_resumed):
    k = killed_and_resumed
    assert k["second"].returncode == 0, k["second"].stderr[-3000:]
    final = k["final"]
    assert [r["state"] for r in final["runs"]] == ["done"] * 3
    hist = final["history"]
    first_key = final["runs"][0]["key"]
    # the run finished before the kill was not started again, and its report is untouched
    assert sum(1 for h in hist if h["ev"] == "start" and h["key"] == first_key) == 1
    assert (k["out"] / final["runs"][0]["dir"] / "report.json").read_bytes() == k["done_before"][first_key]
    # every run completed exactly once; the interrupted one was noticed and run again
    for r in final["runs"]:
        assert sum(1 for h in hist if h["ev"] == "done" and h["key"] == r["key"]) == 1
    second_key = final["runs"][1]["key"]
    assert any(h["ev"] == "interrupted" and h["key"] == second_key for h in hist)
    assert final["runs"][1]["attempts"] == 2 and final["runs"][2]["attempts"] == 1


@pytest.mark.browser
def test_should_leave_only_whole_reports_and_no_partial_folders(killed_and_resumed):
    out = killed_and_resumed["out"]
    assert not list(out.rglob(".partial-*"))
    summary = json.loads((out / "summary.json").read_text())
    assert len(summary["candidates"]) == 3 and all(len(c["runs"]) == 1 for c in summary["candidates"])
    for r in killed_and_resumed["final"]["runs"]:
        rep = json.loads((out / r["dir"] / "report.json").read_text())
        assert rep["probes"]["frame_pacing"]["status"] == "ok" and rep["exit_reason"] is None
    assert _live(killed_and_resumed["markers"]) == []


def test_should_refuse_to_resume_a_batch_with_other_settings(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "batch.json").write_text(
        json.dumps(
            {
                "schema": "skycity-bench/batch@1",
                "settings": {
                    "scenario_sha256": "x",
                    "probes": ["frame_pacing"],
                    "network": "offline",
                    "bench_version": "0",
                },
                "candidates": {},
                "runs": [],
                "history": [],
            }
        )
    )
    r = subprocess.run(
        batch_cmd(out, fast_scenario(tmp_path / "s.yaml"), str(TINY)),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and "other settings" in r.stderr


def test_should_find_candidates_in_folders_and_globs_and_skip_bad_files(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.html").write_text((TINY / "tiny1.html").read_text())
    (tmp_path / "b.htm").write_text((TINY / "tiny2.html").read_text())
    (tmp_path / "empty.html").write_text("")
    files, notes = discover([str(tmp_path)])
    assert sorted(p.name for p in files) == ["a.html", "b.htm"] and len(notes) == 1 and "empty" in notes[0]
    files, _ = discover([str(tmp_path / "**" / "*.html")])
    assert [p.name for p in files] == ["a.html"]
    with pytest.raises(UserError, match="no such file"):
        discover([str(tmp_path / "missing.html")])
    with pytest.raises(UserError, match="is a directory"):
        discover([str(_empty_dir(tmp_path))])


def _empty_dir(base: Path) -> Path:
    d = base / "nothing-here"
    d.mkdir()
    (d / "notes.txt").write_text("no markup")
    return d
