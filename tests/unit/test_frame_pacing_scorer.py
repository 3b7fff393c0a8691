"""The frame-pacing scorer on synthetic evidence: windows, clocks, scene updates."""

import numpy as np
import pytest

from skycity_bench.report import ProbeRecord
from skycity_bench.rubric import load_rubric
from skycity_bench.scenario import load_scenario
from skycity_bench.scorers import ScoreInput
from skycity_bench.scorers.frame_pacing import frame_pacing, scene_updates

RUBRIC = load_rubric()
ITEM = RUBRIC.item("smoothness.frame_pacing")


def evidence(intervals_ms, entry_extra=None, drew=None, duration=60.0):
    iv = np.asarray(intervals_ms, float)
    raf = np.concatenate([[0.0], np.cumsum(iv)])
    entry = raf + 0.3
    if entry_extra is not None:
        entry = entry + np.asarray(entry_extra, float)
    drew = np.ones(raf.size, int) if drew is None else np.asarray(drew, int)
    return {"duration_s": duration, "frames": int(raf.size), "raf_ms": raf.tolist(), "entry_ms": entry.tolist(),
            "drew": drew.tolist()}


def score(data, duration=60.0):
    sc = load_scenario(None, {"duration_s": duration})
    inp = ScoreInput(item=ITEM, rubric=RUBRIC, scenario=sc, records={"frame_pacing": ProbeRecord(name="frame_pacing", data=data)})
    return frame_pacing(inp)


def steady(seconds, iv=1000 / 60):
    return [iv] * int(seconds * 1000 / iv)


def test_should_give_tier_10_to_a_steady_run():
    r = score(evidence(steady(60)))
    assert (r.status, r.points, r.measurements["smoothness.tier"]) == ("pass", 10, 10)


def test_should_let_the_dense_window_decide_when_it_is_worse():
    # 0–20 s and 35–60 s steady; 20–35 s has 4 % long frames: full window ≈ 1 % (tier 10 or 8),
    # dense window 4 % -> tier 6 decides.
    dense = []
    for i in range(int(15 * 60)):
        dense.append(100.0 if i % 25 == 0 else 1000 / 60)
    r = score(evidence(steady(20) + dense + steady(25)))
    m = r.measurements
    assert m["smoothness.dense"]["tier"] == 6
    assert m["smoothness.full"]["tier"] > 6
    assert r.points == 6 and r.status == "partial"


def test_should_let_the_full_window_decide_when_it_is_worse():
    bad_start = [100.0 if i % 10 == 0 else 1000 / 60 for i in range(600)]   # ≈ 15 s, before 20 s
    r = score(evidence(bad_start + steady(40)))
    assert r.measurements["smoothness.dense"]["tier"] == 10
    assert r.measurements["smoothness.full"]["tier"] == r.points < 10


def test_should_let_entry_clock_decide_when_it_shows_stalls_the_frame_clock_hid():
    iv = steady(60)
    extra = np.zeros(len(iv) + 1)
    extra[::20] = 120.0           # every 20th frame entered 120 ms late: 5 % long on the entry clock
    r = score(evidence(iv, entry_extra=extra))
    full = r.measurements["smoothness.full"]
    assert full["raf"]["long_frame_ratio"] == 0
    assert full["long_frame_ratio_decided_by"] == "performance.now() on entry"
    assert r.points < 10


def test_should_ignore_small_entry_jitter():
    iv = steady(60)
    rng = np.random.default_rng(1)
    r = score(evidence(iv, entry_extra=rng.uniform(0, 2.5, len(iv) + 1)))
    assert r.measurements["smoothness.full"]["p95_decided_by"] == "rAF timestamp"
    assert r.points == 10


def test_should_put_a_scene_that_draws_every_third_frame_to_review():
    iv = steady(60)
    drew = [1 if i % 3 == 0 else 0 for i in range(len(iv) + 1)]
    r = score(evidence(iv, drew=drew))
    assert r.status == "review" and r.points is None
    assert r.measurements["smoothness.scene_update_ratio"] == pytest.approx(1 / 3, abs=0.01)


def test_should_put_a_frozen_scene_to_review():
    iv = steady(10)
    drew = [0 if 200 <= i < 260 else 1 for i in range(len(iv) + 1)]   # 1 s without drawing
    r = score(evidence(iv, drew=drew, duration=10), duration=10)
    assert r.status == "review"
    assert r.evidence["longest_scene_freeze_s"] == pytest.approx(1.0, abs=0.05)


def test_scene_updates_measures_longest_gap():
    raf = np.arange(0, 1000, 100.0)
    ratio, longest = scene_updates(raf, np.array([1, 0, 0, 0, 1, 1, 1, 1, 1, 1]))
    assert longest == pytest.approx(0.4)
    assert ratio == pytest.approx(6 / 9)


def test_should_note_when_the_run_is_too_short_for_the_dense_window():
    r = score(evidence(steady(5), duration=5), duration=5)
    assert "dense window" in r.evidence["note"]
    assert r.points == 10
