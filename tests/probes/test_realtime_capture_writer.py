"""The real-time capture's writer on known frames: the slot rule (a frame holds the slots of
its real time) and the full queue's drop accounting, fed frames with made-up timestamps, so
nothing here depends on the machine's real time; and the CLI's refusal of --realtime-capture
without the frame-pacing probe. These run in the parallel pass; the captures of real runs
are test_realtime_capture.py, in the real-time pass."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np

from skycity_bench.media.realtime_video import RealtimeVideo
from tests.probes.test_realtime_capture import VSYNC_S, decode_gray, shown_runs
from tests.shared_runs import JANK

ROOT = Path(__file__).resolve().parents[2]


def _jpeg_b64(k: int, size=(320, 180)) -> str:
    import base64

    img = np.full((size[1], size[0], 3), 30, np.uint8)
    x = (k * 7) % (size[0] - 40)
    img[60:120, x : x + 40] = (0, 200, 255)  # a bar that moves every frame
    cv2.putText(img, str(k), (10, 30), cv2.FONT_HERSHEY_SIMPLEX, 0.9, (255, 255, 255), 2)
    return base64.b64encode(cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 90])[1].tobytes()).decode()


def test_should_hold_a_frame_for_the_slots_of_its_real_time(tmp_path):
    zero = 1_700_000_000.0
    v = RealtimeVideo(tmp_path / "v.webm", zero_epoch_s=zero, duration_s=2.0, fps=30)
    times = [i * VSYNC_S for i in range(61)] + [1.25 + i * VSYNC_S for i in range(46)]  # a 250 ms stall after 1.0 s
    for k, t in enumerate(times):
        v.offer(zero + t, _jpeg_b64(k))
    assert v.close(60)
    fig = v.figures()
    assert fig["encoded_slots"] == fig["slots"] == 60 and fig["frames_dropped"] == 0
    runs = shown_runs(decode_gray(tmp_path / "v.webm"))
    # The frame stamped 1.0 s shows in every slot k with k/30 in [1.0, 1.25): slots 30..37.
    assert (30, 8) in runs
    assert all(n == 1 for s, n in runs if s != 30)
    assert (
        fig["frames_shown"] + fig["frames_superseded"] + fig["frames_after_end"] + fig["frames_out_of_order"]
        == fig["frames_received"]
        == len(times)
    )


def test_should_count_and_hold_frames_the_full_queue_drops(tmp_path):
    zero = 1_700_000_000.0
    v = RealtimeVideo(tmp_path / "v.webm", zero_epoch_s=zero, duration_s=3.0, fps=30, queue_frames=1)
    frames = [_jpeg_b64(k, size=(640, 360)) for k in range(180)]
    for k, data in enumerate(frames):  # far faster than the encoder
        v.offer(zero + k * VSYNC_S, data)
    assert v.close(120)
    fig = v.figures()
    assert fig["frames_dropped"] > 0, "a one-frame queue offered 180 frames at once must drop"
    assert (
        fig["frames_shown"]
        + fig["frames_superseded"]
        + fig["frames_dropped"]
        + fig["frames_after_end"]
        + fig["frames_out_of_order"]
        == fig["frames_received"]
        == 180
    )
    assert fig["max_queue_frames"] <= 1
    got = decode_gray(tmp_path / "v.webm")
    assert len(got) == fig["slots"] == 90
    for a, b in fig["dropped_spans_s"]:  # a dropped frame's slots hold the picture before
        s0, s1 = round(a * 30), round(b * 30)
        if s0 > 0:
            for s in range(s0, s1):
                assert int((np.abs(got[s] - got[s0 - 1]) > 24).sum()) <= 20


def test_should_refuse_realtime_capture_without_the_frame_pacing_probe(tmp_path):
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "skycity_bench",
            "run",
            str(JANK),
            "--probe",
            "density",
            "--realtime-capture",
            "--out",
            str(tmp_path / "r"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert out.returncode == 2
    text = out.stdout + out.stderr
    assert "--realtime-capture films the frame-pacing pass" in text
    assert "Traceback" not in text and len(text.strip().splitlines()) == 1 and not (tmp_path / "r").exists()
