"""One tour pass (probes/_tour.py): the recording's pass declares that it produces the
timeline's evidence (ProbeSpec.produces), the runner runs it once for both and stores one
record per artifact, and the pass's steps merge both probes' times. No browser here:
tests/probes/test_timeline_recording.py walks a real pass."""

from __future__ import annotations

from skycity_bench.evidence.recording import RecordingEvidence
from skycity_bench.evidence.timeline import TimelineEvidence
from skycity_bench.probes import registry
from skycity_bench.probes._stepper import frame_times
from skycity_bench.probes._tour import tour_times
from skycity_bench.reporting.run_report import ProbeRecord
from skycity_bench.running.runner import Profile, _records_of_pass


def _names(probes):
    return [(s.name, s.produces) for s in Profile(probes=probes).specs()]


def test_should_run_the_recordings_pass_once_for_both_when_both_are_chosen():
    assert _names(("recording", "timeline")) == [("recording", ("timeline",))]
    every = _names(None)
    assert ("recording", ("timeline",)) in every and "timeline" not in [n for n, _ in every]


def test_should_run_each_alone_with_its_own_part_only():
    assert _names(("recording",)) == [("recording", ())]
    assert _names(("timeline",)) == [("timeline", ())]
    assert registry.get("recording").produces == ("timeline",)  # the declaration itself is untouched


def test_should_not_depend_on_run_order_between_the_two():
    from dataclasses import replace

    rec, tl = registry.get("recording"), registry.get("timeline")
    for orders in ((1, 2), (2, 1), (5, 5)):
        prof = Profile(probes=(), steps=(replace(tl, order=orders[0]), replace(rec, order=orders[1])))
        assert [(s.name, s.produces) for s in prof.specs()] == [("recording", ("timeline",))]


def _rec_data():
    return {
        "file": "recordings/recording.webm",
        "container": "webm",
        "codec": "VP9",
        "fps": 30,
        "width": 320,
        "height": 240,
        "frames": 60,
        "duration_s": 2.0,
        "end_s": 2.0,
        "first_frame_s": 0.0,
        "keyframe_interval_s": 5,
        "video_keyframe_every_s": 1,
        "keyframes": [],
        "contact_sheet": None,
        "size_bytes": 1,
        "wall_s": 1.0,
        "frames_per_wall_s": 60.0,
        "capture_ms_mean": 1.0,
        "decode_ms_mean": 1.0,
        "encode_ms_mean": 1.0,
        "encode_wait_s": 0.0,
        "late_frames": 0,
        "truncated": None,
        "density_frames": None,
    }


def _tl_data():
    return {
        "stepped_by": "recording",
        "sample_fps": 10,
        "end_s": 65,
        "tour_s": 60,
        "viewport": {"width": 320, "height": 240},
        "analysis_size": None,
        "css_per_px": 1.0,
        "city_name": None,
        "hook": {},
        "states": {},
        "phases": [],
        "frames": {},
        "reset": {},
        "name_checks": [],
        "wall_s": 0.0,
        "analysis_cpu_s": 0.0,
        "spent_s": {},
        "page_errors": [],
        "evidence_frames": {},
    }


def test_should_store_one_record_per_artifact_with_its_own_evidence_version():
    spec = Profile(probes=("recording", "timeline")).specs()[0]
    rec = ProbeRecord(name="recording", version=spec.version, duration_s=12.5)
    rec.data = {
        "recording": RecordingEvidence.model_validate(_rec_data()),
        "timeline": TimelineEvidence.model_validate(_tl_data()),
    }
    got = {r.name: r for r in _records_of_pass(spec, rec)}
    assert set(got) == {"recording", "timeline"}
    assert got["recording"].evidence_version == RecordingEvidence.evidence_version == "5"
    assert got["timeline"].evidence_version == TimelineEvidence.evidence_version
    assert got["timeline"].data["stepped_by"] == "recording" and "timeline_pass" not in got["recording"].data
    assert got["recording"].evidence().fps == 30 and got["timeline"].evidence().sample_fps == 10
    assert got["timeline"].duration_s == got["recording"].duration_s == 12.5


def test_should_give_each_artifact_its_partial_data_and_the_pass_error():
    spec = Profile(probes=("recording", "timeline")).specs()[0]
    rec = ProbeRecord(
        name="recording",
        version=spec.version,
        status="error",
        error="the demo's main thread hangs",
        data={"recording": {"frames_written": 12}, "timeline": {"reached_s": 1.5}},
    )
    got = {r.name: r for r in _records_of_pass(spec, rec)}
    assert got["recording"].error == "the demo's main thread hangs" and got["recording"].data == {"frames_written": 12}
    assert got["timeline"].status == "error" and got["timeline"].data == {"reached_s": 1.5}
    assert "recording's pass" in got["timeline"].error and "hangs" in got["timeline"].error


def test_should_leave_a_probe_without_produces_alone():
    spec = registry.get("timeline")
    rec = ProbeRecord(name="timeline", version=spec.version, data={"x": 1})
    assert _records_of_pass(spec, rec) == [rec]


def test_should_step_a_time_both_want_once_and_keep_time_order():
    video = [(t, "key" if i % 6 == 0 else "frame") for i, t in enumerate(frame_times(1, 30))] + [(1.0, "end")]
    tl = frame_times(1, 4, include_end=True)  # 0, .25, .5, .75, 1
    steps = tour_times(video, tl)
    ts = [t for t, _, _, _ in steps]
    assert ts == sorted(ts) and len(ts) == len(set(ts))
    assert len(steps) == 30 + 1 + 2  # .25 and .75 are not video frames
    both = [t for t, kind, sample, _ in steps if kind is not None and sample]
    assert both == [0.0, 0.5, 1.0]
    assert [t for t, kind, sample, _ in steps if kind is None] == [0.25, 0.75]
    assert sum(sample for _, _, sample, _ in steps) == len(tl)


def test_should_refuse_to_rescore_a_recording_that_still_names_the_side_file(tmp_path):
    """A report from before the one pass (recording evidence 2, with timeline_pass naming
    timeline/pass_from_recording.json): rescore refuses it in one line naming the field."""
    import json

    from tests.unit.test_evidence_contract import refused, stored_run

    run = stored_run(tmp_path)
    doc = json.loads((run / "report.json").read_text())
    doc["probes"]["recording"] = {
        "name": "recording",
        "version": "2",
        "status": "ok",
        "duration_s": 1.0,
        "error": None,
        "evidence_version": "2",
        "data": {
            **_rec_data(),
            "timeline_pass": {"file": "timeline/pass_from_recording.json", "settings": "0" * 16, "every_frames": 3},
        },
    }
    (run / "report.json").write_text(json.dumps(doc))
    refused(run, "probes.recording")


def test_should_list_every_frame_a_density_sample_could_need_from_the_tour():
    """The shared piece for density: samples every second across 20–35 s, three densified points
    between each two, frames at t + {-15, -6, 0, 6, 15} / 60 s."""
    from skycity_bench.probes._tour import density_frame_times

    got = density_frame_times([20 + k for k in range(16)], [-6, 6, 15, -15], 3)
    assert got["claims_at"][0] == 20 and got["claims_at"][-1] == 35 and len(got["claims_at"]) == 61
    assert 20.25 in got["claims_at"] and 34.75 in got["claims_at"]
    frames = [round(t * 60) for t in got["frames_at"]]
    assert frames == sorted(set(frames))
    # the sample at 20.25 s (frame 1215) needs 1200, 1209, 1215, 1221 and 1230
    assert {1200, 1209, 1215, 1221, 1230} <= set(frames)
    assert min(frames) == 1185 and max(frames) == 2115
    # each possible sample (every 15 frames from 1200 to 2100) and ±6 around it, and the ±15
    # frames before the first and after the last: 185 frames, a fifth of the window's
    assert frames == sorted({15 * j + d for j in range(80, 141) for d in (-6, 0, 6)} | {1185, 2115})
