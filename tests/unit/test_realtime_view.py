"""The real-time video widget's data (review/realtime.py) from a report: the intervals of
the pass the video filmed, the long frames by the scorer's rule, nothing without a video."""

from skycity_bench.reporting.realtime_view import realtime_view


def _report(raf, *, second=None, video="realtime/realtime.webm"):
    data = {
        "file": video,
        "pass": "second_pass" if second else "measured_pass",
        "intervals_from": "second_pass" if second else "frame_pacing",
        "capture": {
            "duration_s": 1.0,
            "fps": 30,
            "frames_received": 50,
            "frames_dropped": 1,
            "dropped_spans_s": [[0.5, 0.533]],
            "first_frame_s": 0.1,
            "mean_capture_interval_ms": 17.0,
        },
    }
    if second:
        data["second_pass"] = {"raf_ms": second}
    return {
        "measurements": {"smoothness": {"realtime_video": video}},
        "items": {"smoothness.frame_pacing": {"evidence": {"long_frame_ms": 50}}},
        "scenario": {"effective": {"probes": {"frame_pacing": {"clock_resolution_ms": 0.1}}}},
        "probes": {"frame_pacing": {"data": {"raf_ms": raf}}, "realtime_capture": {"data": data}},
    }


def test_should_mark_long_frames_of_the_filmed_pass_by_the_scorers_rule():
    raf = [0, 16.7, 33.3, 83.4, 100.1, 150.2, 250.2]  # 50.1 ms: on the line (clock grain); 100 ms: long
    v = realtime_view(_report(raf), lambda n: "/files/7")
    assert v["url"] == "/files/7" and v["data"]["long_ms"] == 50
    assert [s["t_s"] for s in v["data"]["stalls"]] == [0.1502]
    assert v["data"]["stalls"][0]["ms"] == 100.0
    assert v["data"]["points"][0] == [0.0167, 16.7] and len(v["data"]["points"]) == len(raf) - 1
    assert v["data"]["dropped_spans_s"] == [[0.5, 0.533]] and v["frames_dropped"] == 1


def test_should_plot_the_second_pass_when_the_video_filmed_it():
    v = realtime_view(_report([0, 16.7], second=[0, 16.7, 116.7]), lambda n: n)
    assert [s["t_s"] for s in v["data"]["stalls"]] == [0.0167] and v["pass"] == "second_pass"


def test_should_show_nothing_without_a_video_or_its_file():
    assert realtime_view(_report([0, 16.7], video=None), lambda n: n) is None
    assert realtime_view(_report([0, 16.7]), lambda n: None) is None
