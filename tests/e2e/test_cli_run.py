"""The CLI as a user meets it, against the wall clock: a hanging demo ends in bounded time with
a report. Bad input, bad options, a throwing demo and the report's contract (nothing there
depends on real time): test_cli_contract.py, in the parallel pass."""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "skycity_bench"]


def cli(*args, timeout=120):
    return subprocess.run(CLI + list(args), cwd=ROOT, capture_output=True, text=True, timeout=timeout)


@pytest.mark.browser
def test_should_end_a_hanging_demo_in_bounded_time_with_a_report(tmp_path):
    out = tmp_path / "run"
    t = time.monotonic()
    r = cli(
        "run",
        "tests/fixtures/frame_pacing/hang.html",
        "--duration",
        "4",
        "--viewport",
        "640x360",
        "--probe",
        "frame_pacing",
        "--out",
        str(out),
        "--quiet",
        timeout=4 + 60,
    )
    elapsed = time.monotonic() - t
    assert r.returncode == 1, r.stdout + r.stderr
    assert elapsed <= 4 + 30, f"took {elapsed:.1f} s"
    rep = json.loads((out / "report.json").read_text())
    item = rep["items"]["smoothness.frame_pacing"]
    assert item["status"] == "untested" and item["points"] is None
    assert "hang" in item["evidence"]["reason"]
