"""Frame pacing on real Chromium: each designed fixture gets its designed tier or status.

These runs measure real time (that is what frame pacing is), each a few seconds long."""

import time

import pytest

from tests.truth import all_fixtures, assert_truth, run_fixture

pytestmark = pytest.mark.browser

FIXTURES = [f for f in all_fixtures("frame_pacing") if f.html.stem not in ("hang", "throws")]  # those two: tests/e2e


@pytest.mark.parametrize("fx", FIXTURES, ids=lambda f: f.name)
def test_should_score_designed_frame_pacing_as_its_truth_says(fx, tmp_path):
    report = run_fixture(fx, tmp_path)
    assert_truth(fx, report)
    assert (tmp_path / "frame_pacing.png").is_file()
    assert report["environment"]["refresh_interval_ms"] > 0
    # Chromium's own figure, with its documented meaning (report.md), beside the tier.
    sm = report["measurements"]["smoothness"]
    c = sm["chromium"]
    assert {"dropped_frame_pct", "frames_presented", "source"} <= set(c)
    assert c["frames_presented"] > 0 and 0 <= c["dropped_frame_pct"] <= 100, c
    assert sm["clocks"]["late_frames_from"] == "chromium+frame_clock" and sm["clocks"]["trace_alignment"] >= 0.8
    # The machine's noise around the pass is always measured and reported.
    assert "too_noisy" in sm["noise"] and sm["noise"]["passes"] in (1, 2)
