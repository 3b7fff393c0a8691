"""The whole recording plays in Chromium's <video> and reviewers can seek in it.

One recording of the full 0–65 s at 30 fps (1950 frames) of a light Canvas2D fixture that
writes its own clock into every frame (tests/fixtures/timeline/clock_bars.html: 14 bars of
4 ms units, up to 65.5 s), at 320x240 (the smallest viewport a scenario takes) so the pass costs little more than its 1950 steps.
Checked: the file's frame count (decoded by PyAV) and the duration Chromium reads; that it
plays to its end in Chromium; and that seeking Chromium's <video> to 20, 35 and 60 s shows
the matching frame: the clock drawn in the video frame reads that time, and its pixels are
those of the PNG keyframe the pass captured at that time (within the codec's noise).
"""

from __future__ import annotations

import asyncio
import base64
import functools
import shutil
import threading
from pathlib import Path

import cv2
import numpy as np
import pytest

from tests.probes.test_timeline_recording import _clock_ms, _Quiet, _QuietServer
from tests.truth import fixture

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # one 65 s pass: 1950 steps

FX = fixture("timeline/clock_bars")
SEEK_TO = (20.0, 35.0, 60.0)
W, H = 320, 240


@pytest.fixture(scope="module")
def full(tmp_path_factory) -> tuple[dict, Path]:
    from skycity_bench.inputs.scenario import load_scenario
    from skycity_bench.running.runner import run_candidate

    out = tmp_path_factory.mktemp("recording_65s")
    sc = load_scenario(None, {"viewport": f"{W}x{H}"})  # the scenario's own 65 s at 30 fps
    report = asyncio.run(run_candidate(FX.html, sc, out, probes=["recording"])).to_json()
    return report, out


async def _seek_in_chromium(url: str, times: tuple[float, ...]) -> dict:
    from playwright.async_api import async_playwright

    from skycity_bench.browser.launch import launch

    async with async_playwright() as pw:
        browser = await launch(pw, offline=True)
        try:
            page = await browser.new_page()
            await page.goto(url)
            return await page.evaluate(
                """async (times) => {
              // from a blob: seekable whatever the test server does with Range requests
              // (Python's http.server answers none, and Chromium cannot seek in such a file)
              const blob = await (await fetch('recording.webm')).blob();
              const v = document.querySelector('video');
              v.src = URL.createObjectURL(blob);
              if (v.readyState < 1) await new Promise((ok, bad) => {
                v.addEventListener('loadedmetadata', ok, {once: true});
                v.addEventListener('error', () => bad(new Error('media error ' + (v.error && v.error.code))), {once: true});
              });
              const c = document.createElement('canvas');
              c.width = v.videoWidth; c.height = v.videoHeight;
              const g = c.getContext('2d', {willReadFrequently: true});
              const frames = [];
              for (const t of times) {
                // the seeked event can come before the new frame is presented: wait for that
                // frame (requestVideoFrameCallback) as well, then draw what the element shows
                const seeked = new Promise((ok) => v.addEventListener('seeked', ok, {once: true}));
                const shown = new Promise((ok) => v.requestVideoFrameCallback((now, m) => ok(m.mediaTime)));
                v.currentTime = t;
                await seeked;
                const mediaTime = await Promise.race([shown, new Promise((ok) => setTimeout(() => ok(null), 5000))]);
                g.drawImage(v, 0, 0);
                frames.push({t, at: v.currentTime, mediaTime, png: c.toDataURL('image/png')});
              }
              // plays to its end (at 16x, so the test does not wait 65 s)
              v.currentTime = 0;
              v.playbackRate = 16;
              await v.play();
              await new Promise((ok, bad) => {
                v.addEventListener('ended', ok, {once: true});
                setTimeout(() => bad(new Error('did not end')), 30000);
              });
              return {duration: v.duration, width: v.videoWidth, height: v.videoHeight, ended: v.ended,
                      error: v.error && v.error.code, frames};
            }""",
                list(times),
            )
        finally:
            await browser.close()


def _png(data_url: str) -> np.ndarray:
    raw = base64.b64decode(data_url.split(",", 1)[1])
    return cv2.imdecode(np.frombuffer(raw, np.uint8), cv2.IMREAD_COLOR)


def _serve_and_seek(video: Path, site: Path, times: tuple[float, ...] = SEEK_TO) -> dict:
    site.mkdir(exist_ok=True)
    shutil.copy(video, site / "recording.webm")
    (site / "index.html").write_text("<!doctype html><video muted playsinline></video>")
    httpd = _QuietServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        return asyncio.run(_seek_in_chromium(f"http://127.0.0.1:{httpd.server_address[1]}/index.html", times))
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_should_record_the_whole_65_s_as_1950_frames_with_a_seek_point_every_second(full):
    import av

    report, out = full
    rec = report["probes"]["recording"]
    assert rec["status"] == "ok", rec.get("error")
    d = rec["data"]
    assert d["truncated"] is None
    assert (d["frames"], d["fps"], d["duration_s"]) == (1950, 30, 65.0)
    assert d["codec"] in ("VP9", "VP8")
    keyframes, n = [], 0
    with av.open(str(out / d["file"])) as c:
        for pkt in c.demux(video=0):
            if pkt.size:
                if pkt.is_keyframe:
                    keyframes.append(n)
                n += 1
    assert n == 1950
    every = int(round(d["video_keyframe_every_s"] * 30))
    assert keyframes[0] == 0 and max(np.diff(keyframes + [n])) <= every, keyframes


def test_should_play_to_the_end_and_seek_to_the_captured_frame_in_chromium(full, tmp_path):
    report, out = full
    d = report["probes"]["recording"]["data"]
    got = _serve_and_seek(out / d["file"], tmp_path / "site")
    assert got["error"] is None and got["ended"]
    assert got["duration"] == pytest.approx(65.0, abs=1 / 30)
    assert (got["width"], got["height"]) == (W, H)
    keys = {round(k["t_s"], 3): k["file"] for k in d["keyframes"]}
    bits, unit = FX.truth["page"]["bits"], FX.truth["page"]["unit_ms"]
    for f in got["frames"]:
        shown = _png(f["png"])
        key = cv2.imread(str(out / keys[f["t"]]))
        # the frame Chromium shows after the seek is the one the pass captured at that time:
        # its drawn clock says so, and its pixels are the keyframe's up to the codec's noise
        assert _clock_ms(shown, bits, unit) == _clock_ms(key, bits, unit) == round(f["t"] * 1000), f["t"]
        diff = np.abs(shown.astype(int) - key.astype(int))
        assert diff.mean() < 6, (f["t"], diff.mean())
        # a neighbouring frame (1/30 s away) scrolls the lower half's ramp by 3 degrees of hue:
        # the seek must be closer to the keyframe than the frame next to it would be
        assert cv2.PSNR(shown, key) > 25, (f["t"], cv2.PSNR(shown, key))


def test_should_scale_a_tall_viewport_down_to_the_videos_height_and_keep_every_frames_time(tmp_path):
    """A viewport taller than max_video_height (the video at 720p from a 1080p viewport): the
    video is the viewport scaled down, aspect kept, whichever capture gave a frame (Chromium's
    scaled JPEG, the timeline's full-size JPEG scaled by the encoder's thread at its sample
    times); every frame still shows t = i / 30 s; the keyframes stay at the viewport's full
    size; and Chromium plays it and seeks to its frames."""
    from skycity_bench.inputs.scenario import load_scenario
    from skycity_bench.running.runner import run_candidate
    from tests.probes.test_timeline_recording import _video_clock_ms

    sc = load_scenario(
        None,
        {
            "viewport": "480x360",
            "probes": {
                "recording": {"end_s": 3, "keyframe_interval_s": 1, "max_video_height": 240},
                "timeline": {"end_s": 3, "tour_s": 2.5, "opening_window_s": 0.5, "ending_window_s": 1},
            },
        },
    )
    report = asyncio.run(run_candidate(FX.html, sc, tmp_path, probes=["recording", "timeline"])).to_json()
    rec = report["probes"]["recording"]
    assert rec["status"] == "ok", rec.get("error")
    d = rec["data"]
    assert (d["width"], d["height"], d["frames"]) == (320, 240, 90)
    shown = _video_clock_ms(tmp_path, d)
    assert len(shown) == 90
    err = np.array(shown[d["late_frames"] :]) - (np.arange(90) * 1000 / 30)[d["late_frames"] :]
    assert np.abs(err).max() <= 2.01, shown
    key = cv2.imread(str(tmp_path / d["keyframes"][2]["file"]))
    assert key.shape[:2] == (360, 480) and d["keyframes"][2]["t_s"] == 2.0
    got = _serve_and_seek(tmp_path / d["file"], tmp_path / "site", (2.0,))
    assert got["error"] is None and got["ended"] and (got["width"], got["height"]) == (320, 240)
    shown2 = _png(got["frames"][0]["png"])
    small = cv2.resize(key, (320, 240), interpolation=cv2.INTER_AREA)
    bits, unit = FX.truth["page"]["bits"], FX.truth["page"]["unit_ms"]
    assert _clock_ms(shown2, bits, unit) == 2000
    assert cv2.PSNR(shown2, small) > 25
