"""--repeat N: each figure's spread over the runs and whether the automated item points
stayed identical; whole-batch progress with an ETA. Nothing here depends on real time (the
spread is reported whatever it is), so these run in the parallel pass; the batch's
wall-clock budget per run is test_batch_budget.py, in the real-time pass."""

from __future__ import annotations

import json
import subprocess

import pytest

from skycity_bench.batch.batch_run import repeat_stats
from skycity_bench.reporting.run_report import Candidate, ItemResult, Report

from .test_batch_resume import ROOT, TINY, batch_cmd, fast_scenario


def _report(points: float, p95: float) -> Report:
    r = Report(bench_version="t", rubric_id="skycity-v1", candidate=Candidate(id="c-1", sha256="0" * 64))
    r.items["smoothness.frame_pacing"] = ItemResult(points=points, max=10, status="pass", how="auto")
    r.items["visual.composition"] = ItemResult(points=None, max=8, status="review", how="manual")
    r.measurements = {"smoothness": {"full": {"p95_ms": p95, "long_frame_ratio": 0.0}, "tier": points}}
    return r


def test_should_report_each_figures_spread_and_flag_changed_points():
    same = repeat_stats([_report(10, 17.0), _report(10, 17.4), _report(10, 16.9)])
    assert same["auto_points_identical"] and same["n"] == 3
    f = same["figures"]["measurements.smoothness.full.p95_ms"]
    assert f["n"] == 3 and f["min"] == 16.9 and f["max"] == 17.4 and not f["unstable"]
    assert "visual.composition" not in same["items"]  # manual items are not the bench's
    moved = repeat_stats([_report(10, 17.0), _report(8, 30.0)])
    assert not moved["auto_points_identical"]
    assert moved["items"]["smoothness.frame_pacing"] == {"points": [10, 8], "identical": False}
    assert "measurements.smoothness.full.p95_ms" in moved["unstable"]


@pytest.mark.browser
def test_should_repeat_a_candidate_and_summarise_the_spread(tmp_path):
    out = tmp_path / "out"
    cmd = batch_cmd(out, fast_scenario(tmp_path / "s.yaml"), str(TINY / "tiny1.html")) + ["--repeat", "2"]
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=200)
    assert r.returncode == 0, r.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    (c,) = summary["candidates"]
    assert [x["dir"] for x in c["runs"]] == [f"{c['id']}/run-1", f"{c['id']}/run-2"]
    rep = c["repeat"]
    assert rep["n"] == 2 and isinstance(rep["auto_points_identical"], bool)
    assert rep["figures"]["measurements.smoothness.full.p95_ms"]["n"] == 2
    assert "smoothness.frame_pacing" in rep["items"]
    # whole-batch progress: each run's line carries the batch position and an ETA
    assert "[1/2]" in r.stderr and "[2/2]" in r.stderr and "batch ETA" in r.stderr
