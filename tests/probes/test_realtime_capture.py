"""The real-time capture for 录屏复核: a stall shows as a held frame as long as it
lasted, at the right time; a demo that floods the screencast gets its drops counted and
bounded memory. (The writer's slot rule and drop accounting on known frames, which need no
real time: test_realtime_capture_writer.py.)

The video is decoded here (PyAV) and compared with the frame sampler's own long frames: the
two come from independent clocks (Chromium's swap timestamps vs the page's rAF timestamps)."""

from __future__ import annotations

import asyncio
import json

import av
import numpy as np
import pytest

from tests.shared_runs import JANK, JANK_CAPTURE_S, jank_capture_run
from tests.truth import FIXTURES

VSYNC_S = 1 / 60
FLOOD = FIXTURES / "realtime_capture" / "flood.html"  # full-screen noise every frame


def decode_gray(path) -> list[np.ndarray]:
    with av.open(str(path)) as c:
        return [f.to_ndarray(format="gray").astype(np.int16) for f in c.decode(video=0)]


def shown_runs(frames: list[np.ndarray], min_changed_px: int = 20) -> list[tuple[int, int]]:
    """(first slot, slots) of each distinct picture: consecutive output frames that differ by
    less than VP8's noise (|Δ| ≤ 24 grey levels but in a few pixels) show the same picture."""
    runs, start = [], 0
    for i in range(1, len(frames) + 1):
        if i == len(frames) or int((np.abs(frames[i] - frames[i - 1]) > 24).sum()) > min_changed_px:
            runs.append((start, i - start))
            start = i
    return runs


def _run(html, tmp_path, *, duration, viewport, capture: dict) -> dict:
    from skycity_bench.inputs.scenario import load_scenario
    from skycity_bench.running.runner import run_candidate

    sc = load_scenario(None, {"duration_s": duration, "viewport": viewport, "probes": {"realtime_capture": capture}})
    return asyncio.run(run_candidate(html, sc, tmp_path, probes=["frame_pacing"])).to_json()


# ------------------------------------------------------------------ with a real browser
@pytest.mark.browser
@pytest.mark.parametrize("capture_in", ["measured_pass", "second_pass"])
def test_should_show_each_stall_as_a_held_frame_as_long_as_the_sampler_measured(capture_in, tmp_path, tmp_path_factory):
    if capture_in == "measured_pass":  # the run test_review_realtime plays too (made once)
        tmp_path, report = jank_capture_run(tmp_path_factory)
    else:
        report = _run(
            JANK,
            tmp_path,
            duration=JANK_CAPTURE_S,
            viewport="640x360",
            capture={"when": "always", "capture_in": capture_in},
        )
    rc = report["probes"]["realtime_capture"]
    assert rc["status"] == "ok", rc["error"]
    data = rc["data"]
    cap = data["capture"]
    assert data["file"] == "realtime/realtime.webm" and data["pass"] == capture_in, json.dumps(data)[:800]
    assert report["measurements"]["smoothness"]["realtime_video"] == data["file"]
    ev = report["items"]["smoothness.frame_pacing"]["evidence"]["realtime_capture"]
    assert ev["frames_captured"] == cap["frames_received"] > 0 and "frames_dropped" in ev
    raf = (
        report["probes"]["frame_pacing"]["data"]["raf_ms"]
        if capture_in == "measured_pass"
        else data["second_pass"]["raf_ms"]
    )
    fps = cap["fps"]
    slot = 1 / fps
    frames = decode_gray(tmp_path / data["file"])
    assert len(frames) == cap["slots"] == round(JANK_CAPTURE_S * fps)
    runs = [(s * slot, n * slot) for s, n in shown_runs(frames)]
    long_ms = report["items"]["smoothness.frame_pacing"]["evidence"]["long_frame_ms"]
    dropped = cap["dropped_spans_s"]
    # The sampler's long frames once the screencast runs (its first frames come a few
    # hundred ms after t = 0) and not at the video's end or in a span the capture dropped.
    begin = cap["first_frame_s"] + 0.3
    longs = [
        (a / 1000, (b - a) / 1000)
        for a, b in zip(raf, raf[1:])
        if b - a > long_ms
        and a / 1000 > begin
        and b / 1000 < JANK_CAPTURE_S - slot
        and not any(x0 - slot <= a / 1000 <= x1 for x0, x1 in dropped)
    ]
    assert len(longs) >= 8, f"the fixture stalls ~14 times in 6 s; the sampler saw {len(longs)}"
    bad = []
    for a, d in longs:
        # The frame drawn before the stall is presented a vsync later and holds until the
        # next one: its run starts within one output frame (+ that vsync) of the stall.
        near = [(s, h) for s, h in runs if -slot <= s - a <= slot + 2 * VSYNC_S]
        if not any(abs(h - d) <= slot + 0.002 for _, h in near):
            bad.append(
                f"stall at {a:.3f} s of {d * 1000:.0f} ms: video runs near it {[(round(s, 3), round(h * 1000)) for s, h in near]}"
            )
    # Chromium's screencast may skip a frame under load without telling the page (no drop is
    # ever reported for it): the picture before it then holds from earlier and no run starts
    # near the stall. One such stall in the pass is that; two or more is a capture bug.
    msg = "held frames do not match the sampler's long frames within one capture frame:\n"
    assert len(bad) <= 1, msg + "\n".join(bad)


@pytest.mark.browser
def test_should_count_drops_and_stay_bounded_when_a_demo_floods_the_capture(tmp_path):
    queue = 4
    report = _run(
        FLOOD,
        tmp_path,
        duration=4,
        viewport="1280x720",
        capture={"when": "always", "capture_in": "measured_pass", "queue_frames": queue},
    )
    rc = report["probes"]["realtime_capture"]
    assert rc["status"] == "ok", rc["error"]
    assert report["probes"]["frame_pacing"]["status"] == "ok", report["probes"]["frame_pacing"]["error"]
    cap = rc["data"]["capture"]
    # Every frame Chromium sent is accounted for: shown, superseded, dropped, late or stale.
    assert cap["frames_received"] == (
        cap["frames_shown"]
        + cap["frames_superseded"]
        + cap["frames_dropped"]
        + cap["frames_after_end"]
        + cap["frames_out_of_order"]
    ), cap
    assert cap["frames_received"] >= 5, "the flood should reach the capture"
    # Bounded: never more than queue_frames waiting, each a 960x540 JPEG (< 1 MB base64).
    assert cap["max_queue_frames"] <= queue and cap["max_queue_mb"] <= queue * 1.0
    assert cap["size"] == [960, 540]
    # Reported: the drop count and the slots it held, in the probe and in the item's evidence.
    ev = report["items"]["smoothness.frame_pacing"]["evidence"]["realtime_capture"]
    assert ev["frames_dropped"] == cap["frames_dropped"]
    spans = cap["dropped_spans_s"]
    assert len(spans) == cap["frames_dropped"] or len(spans) == 200
    assert round(sum(b - a for a, b in spans) * cap["fps"]) == cap["dropped_slots"] or len(spans) == 200
    frames = decode_gray(tmp_path / rc["data"]["file"])
    assert len(frames) == cap["slots"]
    # The fixture's truth: the picture is noise. Neighbouring pixels of a JPEG + VP8 copy of
    # noise differ by tens of grey levels on average (in a rendered scene by a few) — in the
    # frames the realtime encoder gives the bits to: on a quiet machine, with every noise frame
    # arriving, its rate control blurs the frames between keyframes to a few levels (seen: 37
    # on keyframes, 2-10 between). So: noise shows in the video, and the picture keeps changing.
    texture = [float(np.abs(np.diff(f.astype(np.int16), axis=1)).mean()) for f in frames]
    assert max(texture) > 10, texture[::10]
    changes = [float(np.abs(a.astype(np.int16) - b.astype(np.int16)).mean()) for a, b in zip(frames, frames[1:])]
    assert sum(c > 5 for c in changes) >= 3, changes[::10]
