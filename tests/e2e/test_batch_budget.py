"""A batch run's hard wall-clock budget: a run past its --candidate-timeout is killed and
still gets its report.json with the reason, every item it measures untested. Bounded by the
wall clock with 10 s of slack for a loaded machine, so it runs in the parallel pass
(tests/conftest.py)."""

from __future__ import annotations

import json
import subprocess

import pytest

from .test_batch_resume import ROOT, batch_cmd, fast_scenario


@pytest.mark.browser
def test_should_kill_a_run_past_its_wall_clock_budget_and_still_write_its_report(tmp_path):
    out = tmp_path / "out"
    cmd = batch_cmd(out, fast_scenario(tmp_path / "s.yaml"), str(ROOT / "tests/fixtures/hostile/infinite_*.html"))
    cmd[cmd.index("--candidate-timeout") + 1] = "6"
    cmd[cmd.index("--duration") + 1] = "3"  # the loop starts at 1.5 s: let it start
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, r.stderr[-2000:]
    (run,) = json.loads((out / "batch.json").read_text())["runs"]
    assert run["state"] == "done" and run["duration_s"] < 6 + 10
    rep = json.loads((out / run["dir"] / "report.json").read_text())
    assert "wall-clock budget of 6 s" in rep["exit_reason"]
    assert len(rep["items"]) == 20 and rep["items"]["smoothness.frame_pacing"]["status"] == "untested"
    assert "wall-clock budget" in rep["items"]["smoothness.frame_pacing"]["evidence"]["reason"]
