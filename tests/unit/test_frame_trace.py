"""Chromium's frame reporting read from trace events (browser/frame_trace.py) and the CPU
noise figures (browser/calibration.py), on synthetic events and samples."""

from skycity_bench.browser.frame_trace import FrameTrace
from skycity_bench.browser.rate_calibration import cpu_noise

URL = "http://127.0.0.1:1234/demo.html"


def reporter(pid, ts_us, seq, state, comp=False):
    return {
        "name": "PipelineReporter",
        "ph": "b",
        "pid": pid,
        "ts": ts_us,
        "args": {
            "frame_reporter": {
                "frame_sequence": seq,
                "state": state,
                "has_compositor_animation": comp,
                "has_main_animation": True,
            }
        },
    }


def nav(pid, ts_us, url):
    return {
        "name": "navigationStart",
        "ph": "R",
        "pid": pid,
        "ts": ts_us,
        "args": {"data": {"documentLoaderURL": url, "isLoadingMainFrame": True}},
    }


def test_frames_are_the_demo_renderers_on_the_page_clock():
    tr = FrameTrace(None, None)
    tr._collect(
        {
            "value": [
                nav(7, 1_000_000, ""),
                nav(7, 2_000_000, URL),
                reporter(7, 2_100_000, 1, "STATE_PRESENTED_ALL"),
                reporter(7, 2_116_667, 2, "STATE_PRESENTED_PARTIAL"),
                reporter(7, 2_116_667, 2, "STATE_DROPPED"),  # same vsync, dropped wins
                reporter(7, 2_133_333, 3, "STATE_NO_UPDATE_DESIRED"),  # nothing to draw: not a frame
                reporter(9, 2_100_000, 1, "STATE_DROPPED"),  # the browser's own UI compositor
            ]
        }
    )
    f = tr.frames(URL)
    assert f["pid"] == 7
    assert f["t_ms"] == [100.0, 116.667]
    assert f["fate"] == "PD"


def test_frames_say_why_when_there_is_no_anchor():
    tr = FrameTrace(None, None)
    tr._collect({"value": [reporter(7, 2_100_000, 1, "STATE_PRESENTED_ALL")]})
    assert "navigationStart" in tr.frames(URL)["error"]


def test_cpu_noise_separates_own_and_foreign_work():
    a = {"total": 1000, "idle": 500, "steal": 0, "own": 100, "cpus": 2}
    b = {"total": 2000, "idle": 900, "steal": 20, "own": 300, "cpus": 2}
    n = cpu_noise(a, b)
    # busy = 1000 - 400 idle - 20 steal = 580; own 200; foreign 380
    assert n["own_load"] == 0.2 and n["foreign_load"] == 0.38 and n["steal"] == 0.02
    assert cpu_noise(None, b) is None
