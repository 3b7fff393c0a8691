"""The recording probe on a fixture that writes its own clock into every frame
(tests/fixtures/timeline/clock_bars.html), 2 s at 30 fps at 320x240 to stay in budget.

Decoded frame by frame, the WebM must show t = i / 30 s in frame i (the fake clock stepped
exactly, however slowly this machine rendered), and Chromium's own <video> element, served
from loopback, must play it with the duration and size the probe reports.

One tour pass: with the timeline chosen too, the recording's one pass yields both artifacts
(the video, and the timeline's samples at their own times, some between video frames),
stored as the two probes' records, with no side file; the timeline steps in between must not
disturb the video's exact frame times.
"""

from __future__ import annotations

import asyncio
import functools
import shutil
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import cv2
import numpy as np
import pytest

from tests.truth import assert_truth, fixture, run_fixture

pytestmark = pytest.mark.browser

FX = fixture("timeline/clock_bars")


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> tuple[dict, Path]:
    out = tmp_path_factory.mktemp("recording")
    return run_fixture(FX, out), out


def _clock_ms(frame: np.ndarray, bits: int, unit_ms: int) -> int:
    h, w = frame.shape[:2]
    code = 0
    for b in range(bits):
        code = code * 2 + int(frame[h // 4, int((b + 0.5) * w / bits)].mean() > 128)
    return code * unit_ms


@pytest.fixture(scope="module")
def both(tmp_path_factory) -> tuple[dict, Path]:
    """recording + timeline on the same fixture: the timeline at 4 fps to 2 s, so its samples
    at .25 and .75 s fall between video frames and those at 0, .5, 1, ... on them."""
    from skycity_bench.inputs.scenario import load_scenario
    from skycity_bench.running.runner import run_candidate

    out = tmp_path_factory.mktemp("tour_pass")
    sc = load_scenario(
        None,
        {
            "viewport": "320x240",
            "probes": {
                "recording": {"end_s": 2},
                "timeline": {"end_s": 2, "tour_s": 1.5, "sample_fps": 4, "opening_window_s": 0.5, "ending_window_s": 1},
            },
        },
    )
    report = asyncio.run(run_candidate(FX.html, sc, out, probes=["recording", "timeline"]))
    return report.to_json(), out


def _video_clock_ms(out: Path, data: dict) -> list[int]:
    cap = cv2.VideoCapture(str(out / data["file"]))
    shown = []
    while True:
        ok, frame = cap.read()
        if not ok:
            break
        shown.append(_clock_ms(frame, FX.truth["page"]["bits"], FX.truth["page"]["unit_ms"]))
    cap.release()
    return shown


def test_should_yield_both_artifacts_from_one_pass(both):
    report, out = both
    rec, tl = report["probes"]["recording"], report["probes"]["timeline"]
    assert rec["status"] == "ok" and tl["status"] == "ok", (rec.get("error"), tl.get("error"))
    assert rec["evidence_version"] == "5" and "timeline_pass" not in rec["data"]
    assert tl["data"]["stepped_by"] == "recording"
    assert tl["duration_s"] == rec["duration_s"]  # one pass, timed once
    assert not (out / "timeline" / "pass_from_recording.json").exists()
    # the timeline's samples at its own times, also between video frames: 0 (or the first
    # frame load left on screen), .25, .5, ... 2.0
    t = tl["data"]["frames"]["t_s"]
    assert t[1:] == [0.25 * k for k in range(1, 9)], t
    assert len(tl["data"]["frames"]["dx"]) == len(t) == 9


def test_should_keep_the_videos_exact_frame_times_with_timeline_steps_between(both):
    report, out = both
    data = report["probes"]["recording"]["data"]
    shown = _video_clock_ms(out, data)
    assert len(shown) == data["frames"] == 60
    late = data["late_frames"]
    err = np.array(shown[late:]) - (np.arange(len(shown)) * 1000 / 30)[late:]
    assert np.abs(err).max() <= 2.01, shown


def test_should_match_the_truth_file(run):
    assert_truth(FX, run[0])


def test_should_show_frame_i_at_exactly_i_over_fps_seconds(run):
    report, out = run
    data = report["probes"]["recording"]["data"]
    cap = cv2.VideoCapture(str(out / data["file"]))
    assert cap.get(cv2.CAP_PROP_FPS) == pytest.approx(30)
    shown = []
    while True:
        ok, frame = cap.read()
        if not ok:
            break
        shown.append(_clock_ms(frame, FX.truth["page"]["bits"], FX.truth["page"]["unit_ms"]))
    cap.release()
    assert len(shown) == data["frames"] == 60
    want = np.arange(len(shown)) * 1000 / 30
    late = data["late_frames"]
    err = np.array(shown[late:]) - want[late:]
    # the page's code is whole multiples of 4 ms: +-2 ms is exact
    assert np.abs(err).max() <= 2.01, list(zip(want.round(1), shown))
    assert shown[0] <= data["first_frame_s"] * 1000 + 2.01


def test_should_keep_time_stamped_keyframes_and_a_contact_sheet(run):
    report, out = run
    data = report["probes"]["recording"]["data"]
    assert [k["t_s"] for k in data["keyframes"]] == [0.0, 2.0]
    for k in data["keyframes"]:
        img = cv2.imread(str(out / k["file"]))
        assert img.shape == (240, 320, 3)
    # the 2 s keyframe shows the page's clock at 2000 ms
    last = cv2.imread(str(out / data["keyframes"][-1]["file"]))
    assert _clock_ms(last, 14, 4) == 2000
    sheet = cv2.imread(str(out / data["contact_sheet"]))
    assert sheet is not None and sheet.shape[1] > 2 * 300


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # Chromium drops media connections it no longer needs (connection reset)


async def _play_in_chromium(url: str) -> dict:
    from playwright.async_api import async_playwright

    from skycity_bench.browser.launch import launch

    async with async_playwright() as pw:
        browser = await launch(pw, offline=True)
        try:
            page = await browser.new_page()
            await page.goto(url)
            return await page.evaluate("""async () => {
              const v = document.querySelector('video');
              if (v.readyState < 1) await new Promise((ok, bad) => {
                v.addEventListener('loadedmetadata', ok, {once: true});
                v.addEventListener('error', () => bad(new Error('media error ' + (v.error && v.error.code))), {once: true});
              });
              const meta = {duration: v.duration, width: v.videoWidth, height: v.videoHeight};
              await v.play();
              await new Promise((ok) => v.addEventListener('ended', ok, {once: true}));
              const q = v.getVideoPlaybackQuality();
              return {...meta, ended: v.ended, error: v.error && v.error.code, currentTime: v.currentTime,
                      decoded: q.totalVideoFrames};
            }""")
        finally:
            await browser.close()


def test_should_play_in_chromiums_video_element_with_its_duration(run):
    report, out = run
    data = report["probes"]["recording"]["data"]
    site = out / "site"
    site.mkdir(exist_ok=True)
    shutil.copy(out / data["file"], site / "recording.webm")
    (site / "index.html").write_text('<!doctype html><video src="recording.webm" muted playsinline></video>')
    httpd = _QuietServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        got = asyncio.run(_play_in_chromium(f"http://127.0.0.1:{httpd.server_address[1]}/index.html"))
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert got["error"] is None and got["ended"]
    assert got["duration"] == pytest.approx(data["duration_s"], abs=1 / 30) == pytest.approx(2.0, abs=1 / 30)
    assert (got["width"], got["height"]) == (320, 240)
    assert got["decoded"] == pytest.approx(60, abs=2)


def test_should_give_both_records_the_passs_hang_and_step_the_demo_once(tmp_path):
    """A demo whose main thread hangs 1.5 s into the pass (tests/fixtures/hostile/infinite_loop):
    the one pass stops once, and both records say so, each with what it had collected
    until then; the camera items are untested, never judged from half a pass."""
    from skycity_bench.inputs.scenario import load_scenario
    from skycity_bench.running.runner import run_candidate

    hang = fixture("hostile/infinite_loop")
    sc = load_scenario(
        None,
        {
            "viewport": "320x240",
            "timeouts": {"load_s": 5, "probe_grace_s": 8},
            "probes": {
                "recording": {"end_s": 3},
                "timeline": {"end_s": 3, "tour_s": 2.5, "sample_fps": 4, "opening_window_s": 0.5, "ending_window_s": 1},
            },
        },
    )
    report = asyncio.run(run_candidate(hang.html, sc, tmp_path, probes=["recording", "timeline"])).to_json()
    rec, tl = report["probes"]["recording"], report["probes"]["timeline"]
    assert rec["status"] == tl["status"] == "error"
    assert "hang" in rec["error"] and tl["error"].endswith(rec["error"]) and "recording's pass" in tl["error"]
    assert rec["data"]["partial"] is True and 0 < rec["data"]["frames_written"] <= 1.6 * 30
    assert 1.0 <= tl["data"]["reached_s"] <= 1.6 + 1e-6, tl["data"]
    assert tl["duration_s"] == rec["duration_s"]
    for item in ("camera.phases", "camera.motion", "camera.ending"):
        assert report["items"][item]["status"] == "untested", report["items"][item]


def test_should_shorten_the_recording_to_what_its_wall_budget_captured(tmp_path):
    """A tour whose wall-clock budget is spent before 65 s (here a budget of 4 s, as a demo
    rendering a few frames a second would spend the real one): the video keeps what was captured
    and says so (truncated, with the reason); the timeline, which needs the whole tour, is an
    error with that reason, so the camera items are untested — never a silently short video."""
    from skycity_bench.inputs.scenario import load_scenario
    from skycity_bench.running.runner import run_candidate

    sc = load_scenario(None, {"viewport": "320x240", "probes": {"recording": {"wall_budget_s": 4}}})
    report = asyncio.run(run_candidate(FX.html, sc, tmp_path, probes=["recording", "timeline"])).to_json()
    rec, tl = report["probes"]["recording"], report["probes"]["timeline"]
    assert rec["status"] == "ok", rec.get("error")
    d = rec["data"]
    cut = d["truncated"]
    assert cut is not None and "wall-clock budget of 4 s" in cut["reason"] and cut["of_s"] == 65
    assert 0 < d["frames"] < 1950 and d["duration_s"] == cut["at_s"] == round(d["frames"] / 30, 4)
    assert tl["status"] == "error" and "stopped early" in tl["error"] and "whole tour" in tl["error"]
    assert tl["data"]["stopped"]["at_s"] < 65
    for item in ("camera.phases", "camera.motion", "camera.ending"):
        assert report["items"][item]["status"] == "untested", report["items"][item]
        assert "stopped early" in report["items"][item]["evidence"]["reason"], report["items"][item]
    # the shortened file is what the evidence says: that many frames, each the clock of its time
    shown = _video_clock_ms(tmp_path, d)
    assert len(shown) == d["frames"]
    assert shown[-1] == pytest.approx((d["frames"] - 1) * 1000 / 30, abs=2.01)
