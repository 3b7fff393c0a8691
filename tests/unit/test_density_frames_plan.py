"""Density's frames from one of two sources (capture once): the plan of which frames each
sample uses (probes/density.py plan_pass) is the replay's old rule whichever source gives
them, the tour lists every frame the plan can ask for, and the runner tells the recording
that density reads its evidence (ProbeSpec.after, ctx.readers). No browser here:
tests/probes/test_density_tour_frames.py runs both sources."""

from skycity_bench.probes import registry
from skycity_bench.probes._density_time import keys_of as _keys
from skycity_bench.probes._tour import density_frame_times
from skycity_bench.probes.density import plan_pass, sample_times
from skycity_bench.running.runner import Profile, readers_of


def test_should_give_every_main_sample_all_its_frames():
    plan = plan_pass([20 + k for k in range(16)], 6, [-6, 15, -15], hook=True)
    assert all(p["before"] == [-15, -6] and p["after"] == [15] for p in plan)
    assert plan[0]["key"] == 1200 and plan[-1]["key"] == 2100


def test_should_give_densified_samples_a_quarter_second_apart_every_frame_too():
    # one walk forward over the sorted union of the samples' frames: nothing before a sample
    # is ever passed (the replay's old rule left the second densified sample's frame 6
    # before it out); 15 before it is the sample before's frame A
    plan = plan_pass([20.25, 20.5, 20.75], 6, [-6, 15, -15], hook=True)
    assert [p["before"] for p in plan] == [[-15, -6]] * 3
    assert {1230 - 15, 1230} <= set(_keys(plan, 6))


def test_should_keep_every_samples_frames_before_it_when_the_far_pair_reaches_past_them():
    # t + 60 of one sample lies beyond t - 15 and t - 6 of the next (1 s step); both samples
    # still get all their frames, and the far pair's are the neighbouring samples' own frames A
    plan = plan_pass([20.0, 21.0, 22.0], 6, [-6, 15, -15, -60, 60], hook=True)
    assert all(p["before"] == [-60, -15, -6] and p["after"] == [15, 60] for p in plan)
    keys = set(_keys(plan, 6))
    assert {1200, 1260, 1320} <= keys and {1260 - 15, 1260 - 6, 1140, 1380} <= keys


def test_should_use_no_other_pairs_without_a_hook():
    plan = plan_pass([20, 21], 6, [-6, 15, -15], hook=False)
    assert all(p["before"] == [] and p["after"] == [] for p in plan)
    assert _keys(plan, 6) == [1200, 1206, 1260, 1266]


def test_should_find_every_frame_a_plan_can_ask_for_among_the_tours():
    times = sample_times([20, 25, 30, 35], 20, 35, 1.0)
    for others in ([-6, 15, -15], [-6, 15, -15, -60, 60]):
        tour = {round(t * 60) for t in density_frame_times(times, [0, 6, *others], 3)["frames_at"]}
        assert set(_keys(plan_pass(times, 6, others, True), 6)) <= tour
        # any densified interval (three points between two neighbouring samples)
        for a in times[:-1]:
            extra = [round(a + 0.25 * k, 3) for k in (1, 2, 3)]
            assert set(_keys(plan_pass(extra, 6, others, True), 6)) <= tour


def test_should_run_density_after_the_recording_and_tell_the_recording():
    specs = Profile(probes=("density", "recording", "timeline")).specs()
    names = [s.name for s in specs]
    assert names.index("density") > names.index("recording")
    rec = next(s for s in specs if s.name == "recording")
    assert readers_of(rec, specs) == ("density",)
    assert registry.get("density").after == ("recording",)
    alone = Profile(probes=("recording",)).specs()
    assert readers_of(alone[0], alone) == ()


def test_should_read_the_tours_frames_only_from_a_recording_that_collected_them(tmp_path):
    """A recording that failed, or ran without density, gives no frames; a tour that stopped
    before the window's end lacks frames the plan needs (the probe then plays it itself)."""
    import json
    from types import SimpleNamespace

    from skycity_bench.probes.density import TourFrames
    from skycity_bench.reporting.run_report import ProbeRecord

    index = {
        "version": 1,
        "hook": {"ok": True, "value": {}, "error": None},
        "frames": {str(k): {"file": f"f{k:06d}.png", "now_s": k / 60} for k in range(1185, 1250)},
        "claims": {},
        "page_errors": [],
    }
    (tmp_path / "recordings" / "density_frames").mkdir(parents=True)
    (tmp_path / "recordings" / "density_frames" / "index.json").write_text(json.dumps(index))

    def ctx(status, df):
        rec = ProbeRecord(name="recording", status=status, data={"density_frames": df})
        return SimpleNamespace(artifacts={"recording": rec}, out_dir=tmp_path)

    df = {"index": "recordings/density_frames/index.json", "frames": 65, "claims": 0, "bytes": 1, "capture_s": 0}
    assert TourFrames.of_run(ctx("error", df)) is None
    assert TourFrames.of_run(ctx("ok", None)) is None
    assert TourFrames.of_run(SimpleNamespace(artifacts={}, out_dir=tmp_path)) is None
    tour = TourFrames.of_run(ctx("ok", df))
    plan = plan_pass([20.0, 21.0], 6, [-6, 15, -15], hook=True)
    assert tour.has(_keys(plan[:1], 6)) and not tour.has(_keys(plan, 6))  # stopped before 21 s


def test_should_take_the_still_point_views_frames_and_claims_with_a_hook_only():
    # Frames and the hook's claims at t ± 60 and ± 120 frames (the still-point test's views) are
    # among a sample's frames, not among the other pairs'
    plan = plan_pass([20.0, 21.0], 6, [-6, 15, -15, -60, 60], hook=True, view_frames=[-120, -60, 60, 120])
    assert all(p["before"] == [-120, -60, -15, -6] and p["after"] == [15, 60, 120] for p in plan)
    assert all(p["views"] == [-120, -60, 60, 120] for p in plan)
    assert {1200 - 120, 1260 + 120} <= set(_keys(plan, 6))
    bare = plan_pass([20.0], 6, [-6, 15, -15, -60, 60], hook=False, view_frames=[-120, -60, 60, 120])
    assert bare[0]["views"] == [] and _keys(bare, 6) == [1200, 1206]


def test_should_find_every_frame_and_claim_a_still_point_sample_needs_among_the_tours():
    times = sample_times([20, 25, 30, 35], 20, 35, 1.0)
    others, views = [-6, 15, -15, -60, 60], [-120, -60, 60, 120]
    got = density_frame_times(times, [0, 6, *others, *views], 3, views)
    frames = {round(t * 60) for t in got["frames_at"]}
    claims = {round(t * 60) for t in got["claims_at"]}
    assert claims <= frames  # claims are asked right after their frame
    for ts in [times] + [[round(a + 0.25 * k, 3) for k in (1, 2, 3)] for a in times[:-1]]:
        plan = plan_pass(ts, 6, others, True, views)
        assert set(_keys(plan, 6)) <= frames
        assert {p["key"] + k for p in plan for k in (0, *p["views"])} <= claims
    # the views reach 18-37 s: a few frames more than the far pair's 19-36 s
    assert min(frames) == 1200 - 120 and max(frames) == 2100 + 120
    # without claim frames, claims only where a sample can fall (as before)
    assert len(density_frame_times(times, [0, 6, *others, *views], 3)["claims_at"]) == 61


def test_should_refuse_still_point_views_not_centred_on_t():
    import pytest

    from skycity_bench.common.errors import UserError
    from skycity_bench.inputs.scenario import load_scenario

    ok = load_scenario(None, {}).probe_settings("density")
    assert ok.params().track.still_point_frames == (-120, -60, 60, 120)
    for bad in ([-120, 60, 120], [0, 60, -60], [60, 60, -60, -60]):
        with pytest.raises((UserError, ValueError)):
            load_scenario(None, {"probes": {"density": {"still_point_frames": bad}}}).probe_settings("density")
    off = load_scenario(None, {"probes": {"density": {"still_point_frames": []}}}).probe_settings("density")
    assert off.params().track.still_point_frames == ()
