"""Camera registration, cuts, reset and phase changes on synthetic frames and series (no
browser): the pure functions behind the timeline probe and the camera scorers."""

import math

import cv2
import numpy as np
import pytest

from skycity_bench.analysis import motion as _motion
from skycity_bench.inputs.scenario import load_scenario
from skycity_bench.probes._stepper import eta_note, frame_times, on_grid
from skycity_bench.probes.recording import contact_sheet

# the camera scorer's thresholds as the scenario file sets them (analysis/motion.py applies them)
_TH = load_scenario(None).scorer_settings("camera")


def _city(w=960, h=540, seed=3):
    """A textured test image: random buildings with windows on a gradient."""
    rng = np.random.default_rng(seed)
    img = np.zeros((h, w, 3), np.uint8)
    img[:] = np.linspace(40, 120, h, dtype=np.uint8)[:, None, None]
    for _ in range(260):
        x, y = int(rng.integers(0, w)), int(rng.integers(0, h))
        bw, bh = int(rng.integers(8, 40)), int(rng.integers(10, 80))
        cv2.rectangle(img, (x, y), (x + bw, y + bh), tuple(int(c) for c in rng.integers(30, 255, 3)), -1)
        cv2.rectangle(img, (x + 3, y + 3), (x + 6, y + 7), (250, 250, 200), -1)
    return img


def _crop(img, cx, cy, z=1.0, rot=0.0, w=480, h=270):
    m = cv2.getRotationMatrix2D((cx, cy), rot, z)
    m[0, 2] += w / 2 - cx
    m[1, 2] += h / 2 - cy
    return cv2.warpAffine(img, m, (w, h))


def test_should_recover_translation_zoom_and_rotation_between_two_frames():
    world = _city()
    a = _motion.analysis_gray(_crop(world, 480, 270), 480)
    b = _motion.analysis_gray(_crop(world, 486, 268, z=1.02, rot=1.0), 480)
    r = _motion.register(a, b)
    assert r["ok"]
    # the camera moved right/up: the scene moves left/down on screen
    assert r["dx"] == pytest.approx(-6 * 1.02, abs=0.5)
    assert r["dy"] == pytest.approx(2 * 1.02, abs=0.5)
    assert r["scale"] == pytest.approx(1.02, abs=0.003)
    assert abs(r["rot_deg"]) == pytest.approx(1.0, abs=0.15)
    assert r["residual"] < 0.02 < r["raw_diff"]


def test_should_leave_a_large_residual_when_the_next_frame_shows_another_place():
    world = _city(1600, 540)
    a = _motion.analysis_gray(_crop(world, 400, 270), 480)
    b = _motion.analysis_gray(_crop(world, 1200, 270), 480)
    r = _motion.register(a, b)
    assert r["residual"] > 0.05
    assert (r["inliers"] / max(1, r["features"])) < 0.3


def _series(n=60, fps=10, cut_at=None, jump_at=None):
    t = [i / fps for i in range(n)]
    f = {
        "t_s": t,
        "dx": [],
        "dy": [],
        "scale": [],
        "rot_deg": [],
        "residual": [],
        "raw_diff": [],
        "inlier_ratio": [],
        "features": [],
    }
    for i in range(n):
        first = i == 0
        dx = None if first else -4.0
        res, inl = (None, None) if first else (0.006 + 0.001 * (i % 3), 0.9)
        if i == cut_at:
            dx, res, inl = 0.3, 0.2, 0.05
        if i == jump_at:
            dx = -150.0
        f["dx"].append(dx)
        f["dy"].append(None if first else 0.0)
        f["scale"].append(None if first else 1.0)
        f["rot_deg"].append(None if first else 0.0)
        f["residual"].append(res)
        f["raw_diff"].append(res)
        f["inlier_ratio"].append(inl)
        f["features"].append(None if first else 200)
    return f


def test_should_find_no_cut_in_steady_camera_motion():
    assert _motion.detect_cuts(_series(), fps=10, width_px=480, s=_TH) == []


def test_should_find_a_content_cut_with_its_time():
    cuts = _motion.detect_cuts(_series(cut_at=30), fps=10, width_px=480, s=_TH)
    assert [(c["t_s"], c["from_s"], c["kind"]) for c in cuts] == [(3.0, 2.9, "content")]


def test_should_find_a_jump_the_registration_could_follow():
    cuts = _motion.detect_cuts(_series(jump_at=20), fps=10, width_px=480, s=_TH)
    assert [(c["t_s"], c["kind"]) for c in cuts] == [(2.0, "jump")]


def test_should_measure_camera_speed_in_css_pixels_per_second():
    st = _motion.camera_stats(_series(), fps=10, css_per_px=4.0, width_css=1920, cut_idx=set())
    assert st["summary"]["speed_p50"] == pytest.approx(4 * 4 * 10)
    assert st["summary"]["jerk_p95"] == pytest.approx(0, abs=1e-6)
    assert st["speed_css_px_s"][0] is None


def test_should_tell_a_jump_back_to_the_opening_from_a_closing_shot_that_holds():
    hold = [{"t_s": 60 + k, "d_open": 0.2, "open_t_s": 0.0, "d_end": 0.01} for k in range(5)]
    assert not _motion.reset_check(hold, match=0.04, depart=0.08)["reset"]
    back = hold[:1] + [{"t_s": 61, "d_open": 0.01, "open_t_s": 0.5, "d_end": 0.3}]
    r = _motion.reset_check(back, match=0.04, depart=0.08)
    assert r["reset"] and r["first_s"] == 61 and r["matches_opening_at_s"] == 0.5
    # an ending that looks like the opening is not a jump back while it stays put
    alike = [{"t_s": 61, "d_open": 0.01, "open_t_s": 0.0, "d_end": 0.01}]
    assert not _motion.reset_check(alike, match=0.04, depart=0.08)["reset"]


def test_should_list_each_phase_change_at_its_first_sample():
    smp = [{"t_s": t / 2, "phase": 1 if t < 10 else 2 if t < 21 else 1} for t in range(30)]
    assert _motion.phase_changes(smp) == [
        {"phase": 1, "start_s": 0.0},
        {"phase": 2, "start_s": 5.0},
        {"phase": 1, "start_s": 10.5},
    ]


def test_should_put_frame_times_on_the_60_hz_animation_grid():
    ts = frame_times(65, 30)
    assert len(ts) == 1950 and ts[-1] == pytest.approx(1949 / 30)
    assert all(math.isclose(t * 60, round(t * 60), abs_tol=1e-9) for t in ts)
    assert len(frame_times(65, 10, include_end=True)) == 651
    assert on_grid(0.1234) == pytest.approx(7 / 60)


def test_should_show_progress_with_an_eta():
    assert eta_note(100, 1950, 10.0) == "100/1950 frames · 10.0/s · ETA 3 min 05 s"
    assert eta_note(0, 10, 0) == "0/10 frames"


def test_should_lay_keyframes_out_in_a_time_stamped_grid():
    keys = [(k * 5.0, np.full((90, 160, 3), 15 * k, np.uint8)) for k in range(14)]
    sheet = contact_sheet(keys, columns=7, thumb_w=160)
    assert sheet.shape[1] == 6 + 7 * 166 and sheet.shape[0] == 6 + 2 * (90 + 30 + 6)
    # each label strip carries text (bright pixels) under its thumbnail
    strip = sheet[6 + 90 : 6 + 90 + 30, 6 : 6 + 160]
    assert (strip > 200).any()
