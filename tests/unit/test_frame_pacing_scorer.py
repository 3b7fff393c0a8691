"""The frame-pacing scorer on synthetic evidence: windows, clocks, scene updates."""

import numpy as np
import pytest

from skycity_bench.inputs.rubric import load_rubric
from skycity_bench.inputs.scenario import load_scenario
from skycity_bench.judging.scorers import ScoreInput
from skycity_bench.judging.scorers.frame_pacing import frame_pacing, scene_updates
from skycity_bench.probes.frame_pacing import noise_reasons
from skycity_bench.reporting.run_report import ProbeRecord

RUBRIC = load_rubric()
ITEM = RUBRIC.item("smoothness.frame_pacing")


VSYNC = 1000 / 60


def chromium_frames(raf, dropped_at=(), comp=False, extra_dropped=0):
    """Chromium's frame reporting as the probe keeps it: one frame per vsync from 0 to the
    last rAF frame, presented unless its begin time is in `dropped_at` (rAF frame times)."""
    end = raf[-1]
    t = np.arange(0, end + VSYNC / 2, VSYNC)
    t = np.unique(np.round(np.concatenate([t, raf]), 3))
    fate = np.array(["P"] * t.size)
    for x in dropped_at:
        fate[np.argmin(np.abs(t - x))] = "D"
    if extra_dropped:
        fate[np.linspace(0, t.size - 1, extra_dropped).astype(int)] = "D"
    return {
        "source": "test",
        "t_ms": t.tolist(),
        "fate": "".join(fate),
        "compositor_animation": ("1" if comp else "0") * t.size,
    }


def evidence(intervals_ms, entry_extra=None, drew=None, duration=60.0, chromium=None):
    iv = np.asarray(intervals_ms, float)
    raf = np.concatenate([[0.0], np.cumsum(iv)])
    entry = raf + 0.3
    if entry_extra is not None:
        entry = entry + np.asarray(entry_extra, float)
    drew = np.ones(raf.size, int) if drew is None else np.asarray(drew, int)
    d = {
        "duration_s": duration,
        "frames": int(raf.size),
        "raf_ms": raf.tolist(),
        "entry_ms": entry.tolist(),
        "drew": drew.tolist(),
    }
    if chromium is not None:
        d["chromium"] = chromium(raf) if callable(chromium) else chromium
    return d


QUIET = {"calibration_before": {"skipped": True}, "calibration_after": {"skipped": True}, "cpu": None, "too_noisy": []}


def whole(data: dict) -> dict:
    """The synthetic pass as whole evidence (skycity_bench/evidence/frame_pacing.py): what a
    test leaves out is what a quiet pass without Chromium's account would hold."""
    d = {
        "entry_to_raf_ms": 0.0,
        "chromium": {"source": "test", "error": "tracing is off"},
        "page_errors": [],
        "dialogs": [],
        "passes": 1,
        **data,
    }
    d["noise"] = {**QUIET, **data.get("noise", {})}
    d.setdefault("noise_of_passes", [d["noise"]])
    return d


def score(data, duration=60.0):
    sc = load_scenario(None, {"duration_s": duration})
    inp = ScoreInput(
        item=ITEM,
        rubric=RUBRIC,
        scenario=sc,
        records={"frame_pacing": ProbeRecord(name="frame_pacing", data=whole(data))},
    )
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
    bad_start = [100.0 if i % 10 == 0 else 1000 / 60 for i in range(600)]  # ≈ 15 s, before 20 s
    r = score(evidence(bad_start + steady(40)))
    assert r.measurements["smoothness.dense"]["tier"] == 10
    assert r.measurements["smoothness.full"]["tier"] == r.points < 10


def stall_every(n_frames, stall_ms, seconds=60):
    """A callback that stalls `stall_ms` every n-th frame: the frame clock skips to the next
    vsync after the stall; the next callback is entered stall_ms + a little after."""
    raf, entry = [0.0], [0.3]
    k = 0
    while raf[-1] < seconds * 1000:
        k += 1
        if k % n_frames == 0:
            raf.append(raf[-1] + VSYNC * max(1, int(stall_ms // VSYNC)))  # the BeginFrame issued during the stall
            entry.append(entry[-1] + stall_ms + 1.0)
        else:
            raf.append(raf[-1] + VSYNC)
            entry.append(max(entry[-1] + 1.0, raf[-1] + 0.3))
    return np.asarray(raf), np.asarray(entry)


def stall_evidence(n_frames, stall_ms, chromium=True, seconds=60):
    raf, entry = stall_every(n_frames, stall_ms, seconds)
    stalled = raf[:-1][np.diff(raf) > 1.5 * VSYNC]  # the stalled callback's own frame is dropped
    d = {
        "duration_s": seconds,
        "frames": int(raf.size),
        "raf_ms": raf.tolist(),
        "entry_ms": entry.tolist(),
        "drew": [1] * raf.size,
    }
    if chromium:
        d["chromium"] = chromium_frames(raf, dropped_at=stalled)
    return d


def test_should_let_entry_clock_decide_in_frames_chromium_dropped():
    # 42 ms stall every 8th frame: the frame clock reads 33.3 ms (tier 6), entry ~43 ms (tier 3).
    r = score(stall_evidence(8, 42))
    full = r.measurements["smoothness.full"]
    assert full["raf_tier"] == 6
    assert full["p95_decided_by"] == "performance.now() on entry"
    assert 34 < full["p95_ms"] <= 50 and r.points == 3
    clocks = r.measurements["smoothness.clocks"]
    assert clocks["late_frames_from"] == "chromium+frame_clock" and clocks["late_by_chromium"] > 0
    assert r.measurements["smoothness.chromium"]["dropped_frame_pct"] > 5


def test_should_count_vsyncs_dropped_before_a_late_callback_was_entered():
    # A main thread held up by other work: callback i is entered 120 ms after its frame began
    # (its own frame is presented late, the vsyncs in between are dropped). The drops lie
    # after raf[i], before its entry: interval i is late and the entry clock lengthens it.
    raf = np.arange(0, 601) * VSYNC
    entry = raf + 0.3
    entry[300:] += 120.0  # from frame 300 on every callback runs 120 ms later (begin times stay regular)
    d = {
        "duration_s": 10,
        "frames": int(raf.size),
        "raf_ms": raf.tolist(),
        "entry_ms": entry.tolist(),
        "entry_to_raf_ms": 0.0,
        "drew": [1] * raf.size,
        "chromium": chromium_frames(raf, dropped_at=raf[300] + VSYNC * np.arange(1, 7)),
    }
    r = score(d, duration=10)
    clocks = r.measurements["smoothness.clocks"]
    assert clocks["late_by_chromium"] >= 1 and clocks["late_by_frame_clock"] == 0
    assert clocks["lengthened_intervals"] == 1
    assert r.measurements["smoothness.full"]["decided"]["max_ms"] == pytest.approx(120 + VSYNC, abs=0.2)


def test_should_fall_back_to_the_frame_clock_when_there_is_no_trace():
    d = stall_evidence(8, 42, chromium=False)
    d["chromium"] = {"source": "test", "error": "tracing is off"}
    r = score(d)
    assert r.measurements["smoothness.clocks"]["late_frames_from"] == "frame_clock"
    assert r.measurements["smoothness.full"]["p95_decided_by"] == "performance.now() on entry"
    assert r.points == 3
    assert r.measurements["smoothness.chromium"]["dropped_frame_pct"] is None
    assert "unavailable" in r.measurements["smoothness.chromium"]["source"]


def test_should_never_let_entry_jitter_count_in_frames_presented_on_time():
    # Callbacks entered up to 9 ms late in every frame, every frame presented: tier 10, whatever the jitter.
    iv = steady(60)
    rng = np.random.default_rng(1)
    for chromium in (lambda raf: chromium_frames(raf), None):
        r = score(evidence(iv, entry_extra=rng.uniform(0, 9, len(iv) + 1), chromium=chromium))
        full = r.measurements["smoothness.full"]
        assert full["entry"]["p95_ms"] > 20  # the entry clock alone would lose the tier
        assert full["p95_decided_by"] == "rAF timestamp"
        assert r.points == 10 and r.status == "pass"


def test_should_let_a_skipped_vsync_count_where_chromium_saw_no_drop():
    # Seen on a real run: some stalls' vsyncs are reported presented (by the compositor
    # alone); the frame clock's skipped vsync still marks them late, and only them.
    raf, entry = stall_every(8, 42)
    d = {
        "duration_s": 60,
        "frames": int(raf.size),
        "raf_ms": raf.tolist(),
        "entry_ms": entry.tolist(),
        "drew": [1] * raf.size,
        "chromium": chromium_frames(raf),
    }
    r = score(d)
    clocks = r.measurements["smoothness.clocks"]
    assert clocks["late_by_chromium"] == 0 and clocks["late_by_frame_clock"] == clocks["late_intervals"] > 0
    assert r.measurements["smoothness.full"]["p95_decided_by"] == "performance.now() on entry"
    assert r.measurements["smoothness.tier"] == 3
    # ... and since Chromium presented every frame here, the two accounts disagree: review.
    assert r.status == "review" and r.evidence["disagreement"] == "raf_janky_chromium_smooth"


def test_should_not_use_a_trace_that_does_not_line_up_with_rAF():
    d = stall_evidence(8, 42)
    d["chromium"]["t_ms"] = [t + 7.0 for t in d["chromium"]["t_ms"]]  # wrong anchor
    r = score(d)
    clocks = r.measurements["smoothness.clocks"]
    assert clocks["late_frames_from"] == "frame_clock" and "rAF timestamps found" in clocks["trace_unusable"]
    assert r.points == 3  # the frame clock alone still catches the stalls


def test_should_report_chromium_figure_over_the_pass():
    iv = steady(10)
    r = score(evidence(iv, duration=10, chromium=lambda raf: chromium_frames(raf, extra_dropped=6)), duration=10)
    c = r.measurements["smoothness.chromium"]
    assert c["frames_dropped"] == 6 and c["frames_presented"] > 590
    assert c["dropped_frame_pct"] == pytest.approx(100 * 6 / (c["frames_presented"] + 6), abs=0.01)
    assert c["source"] == "test"


def test_should_review_a_compositor_only_animation_with_both_figures():
    iv = steady(10)
    r = score(
        evidence(iv, drew=[0] * (len(iv) + 1), duration=10, chromium=lambda raf: chromium_frames(raf, comp=True)),
        duration=10,
    )
    assert r.status == "review" and r.points is None
    assert r.evidence["disagreement"] == "compositor_only_animation"
    assert "Chromium" in r.evidence["reason"] and r.evidence["chromium"]["dropped_frame_pct"] == 0


def test_should_review_smooth_raf_when_chromium_dropped_many_frames():
    iv = steady(10)
    r = score(evidence(iv, duration=10, chromium=lambda raf: chromium_frames(raf, extra_dropped=200)), duration=10)
    assert r.status == "review" and r.evidence["disagreement"] == "raf_smooth_chromium_dropped"


def test_should_review_janky_raf_when_chromium_presented_every_frame():
    r = score(
        evidence(
            [100.0 if i % 10 == 0 else VSYNC for i in range(600)],
            duration=10,
            chromium=lambda raf: chromium_frames(raf),
        ),
        duration=10,
    )
    assert r.status == "review" and r.evidence["disagreement"] == "raf_janky_chromium_smooth"


def test_noise_reasons_name_each_cause():
    sc = load_scenario(None, {})
    s = sc.probe_settings("frame_pacing")  # the rule is the probe's: it decides the re-run
    quiet = {
        "cpu": {"foreign_load": 0.05, "steal": 0.0},
        "calibration_before": {"p95_ms": 16.8},
        "calibration_after": {"p95_ms": 16.9},
    }
    assert noise_reasons(quiet, s) == []
    loud = {
        "cpu": {"foreign_load": 0.9, "steal": 0.1},
        "calibration_before": {"p95_ms": 16.8},
        "calibration_after": {"p95_ms": 33.4},
    }
    why = noise_reasons(loud, s)
    assert len(why) == 3 and any("after" in w for w in why)


def test_should_say_in_the_evidence_when_the_pass_was_noisy():
    d = evidence(steady(10), duration=10)
    d["noise"] = {"too_noisy": ["other processes kept 90% of the CPUs busy (limit 25%)"], "cpu": {}}
    d["passes"] = 2
    r = score(d, duration=10)
    assert "too noisy" in r.evidence["machine_noise"] and r.measurements["smoothness.noise"]["passes"] == 2


def test_should_put_a_scene_that_draws_every_third_frame_to_review():
    iv = steady(60)
    drew = [1 if i % 3 == 0 else 0 for i in range(len(iv) + 1)]
    r = score(evidence(iv, drew=drew))
    assert r.status == "review" and r.points is None
    assert r.measurements["smoothness.scene_update_ratio"] == pytest.approx(1 / 3, abs=0.01)


def test_should_put_a_frozen_scene_to_review():
    iv = steady(10)
    drew = [0 if 200 <= i < 260 else 1 for i in range(len(iv) + 1)]  # 1 s without drawing
    r = score(evidence(iv, drew=drew, duration=10), duration=10)
    assert r.status == "review"
    assert r.evidence["longest_scene_freeze_s"] == pytest.approx(1.0, abs=0.05)


def test_should_fail_a_frozen_scene_whose_figures_already_give_the_lowest_tier():
    # A page at 2 frames a second whose scene also stood still for 1.5 s: the figures give
    # tier 0 and the freeze can only look worse, so there is nothing for a reviewer to raise.
    iv = [500.0] * 20
    drew = [0 if 5 <= i < 9 else 1 for i in range(len(iv) + 1)]
    r = score(evidence(iv, drew=drew, duration=10), duration=10)
    assert r.status == "fail" and r.points == 0.0
    assert r.evidence["outcome"] == "scene_frozen_at_floor"
    assert r.evidence["reason"].startswith("tier 0 by the rAF figures, and the scene updated in")
    # the same freeze above the lowest tier still goes to review
    smooth = steady(10)
    drew = [0 if 200 <= i < 290 else 1 for i in range(len(smooth) + 1)]
    assert score(evidence(smooth, drew=drew, duration=10), duration=10).status == "review"


def test_scene_updates_measures_longest_gap():
    raf = np.arange(0, 1000, 100.0)
    ratio, longest = scene_updates(raf, np.array([1, 0, 0, 0, 1, 1, 1, 1, 1, 1]))
    assert longest == pytest.approx(0.4)
    assert ratio == pytest.approx(6 / 9)


def test_a_whole_page_stall_is_no_scene_freeze():
    # Every frame drew; one interval of 0.8 s (the machine stalled the page): a long frame for
    # the pacing figures, not a scene that froze while rAF ran.
    raf = np.array([0, 16.7, 33.4, 833.4, 850.1, 866.8])
    ratio, longest = scene_updates(raf, np.ones(6, int))
    assert ratio == 1.0 and longest == 0.0
    _, longest = scene_updates(raf, np.array([1, 1, 0, 1, 1, 1]))  # one frame ran without a draw
    assert longest == pytest.approx(0.8167, abs=1e-3)


def test_should_note_when_the_run_is_too_short_for_the_dense_window():
    r = score(evidence(steady(5), duration=5), duration=5)
    assert "dense window" in r.evidence["note"]
    assert r.points == 10


@pytest.mark.parametrize("frames", [0, 1, 120])
def test_should_leave_a_demo_that_threw_before_drawing_untested_however_many_frames_were_timed(frames):
    # A loaded machine can time no interval at all of a broken page (its first frame after
    # load comes late): that is still a demo that threw, not a playback that froze.
    d = evidence(steady(frames / 60), drew=[0] * (int(frames) + 1) if frames else None, duration=2.0)
    if frames == 0:
        d.update(frames=0, raf_ms=[], entry_ms=[], drew=[])
    d["page_errors"] = ["Uncaught Error: boom"]
    r = score(d, duration=2.0)
    assert r.status == "untested" and "boom" in r.evidence["reason"]
