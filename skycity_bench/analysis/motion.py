"""Camera motion from pixels: frame-to-frame registration, cut detection, camera statistics
and the "jump back at 60 s" comparison. Pure functions on numpy arrays (no browser), used
by the timeline probe to measure and by the camera scorers to judge, so `rescore` can apply
new thresholds to stored measurements.

Registration: corners in the earlier frame (goodFeaturesToTrack) are followed into the later
one with pyramidal Lucas-Kanade, kept only when tracking back lands where they started
(forward-backward check), and a similarity transform (translation, zoom, rotation) is fitted
with RANSAC, so moving vehicles and people are outvoted by the city they move through. The
residual is the mean absolute difference left after warping the earlier frame onto the
later: small for any camera motion a similarity explains (plus the scene's own movers),
large when the later frame shows something the earlier one did not contain, which is what a
cut is. Parallax in a 3D scene leaves some residual too, steady from frame to frame, which
is why cuts are judged against the local median and not an absolute figure alone.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import cv2
import numpy as np

from skycity_bench.analysis.vision.camera_estimate import track

TINY = (64, 36)  # frames compared for "jump back to the start" (colour, blurred)


def analysis_gray(img: np.ndarray, width: int) -> np.ndarray:
    """Greyscale copy at most `width` px wide (the registration works at this size)."""
    g = img if img.ndim == 2 else cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    if g.shape[1] > width:
        h = max(2, int(round(g.shape[0] * width / g.shape[1])))
        g = cv2.resize(g, (width, h), interpolation=cv2.INTER_AREA)
    return g


def tiny(img: np.ndarray) -> np.ndarray:
    """A blurred 64x36 colour thumbnail: enough to tell 'same shot' from 'another shot'."""
    t = cv2.resize(img, TINY, interpolation=cv2.INTER_AREA)
    return cv2.GaussianBlur(t, (3, 3), 0).astype(np.float32)


def tiny_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Mean absolute difference of two thumbnails, 0 (same) .. 1 (opposite)."""
    return float(np.mean(np.abs(a - b)) / 255.0)


def register(prev: np.ndarray, cur: np.ndarray, *, max_corners: int = 300, min_features: int = 12) -> dict[str, Any]:
    """Similarity motion prev -> cur, in pixels of these (analysis-size) frames.

    Returns ok, features, tracked, inliers, dx, dy (motion of the frame centre), scale,
    rot_deg, residual (0..1 after alignment) and raw_diff (0..1 without alignment).
    """
    raw = float(np.mean(cv2.absdiff(prev, cur)) / 255.0)
    out: dict[str, Any] = {
        "ok": False,
        "features": 0,
        "tracked": 0,
        "inliers": 0,
        "dx": None,
        "dy": None,
        "scale": None,
        "rot_deg": None,
        "residual": raw,
        "raw_diff": raw,
    }
    pts = cv2.goodFeaturesToTrack(prev, maxCorners=max_corners, qualityLevel=0.01, minDistance=6, blockSize=5)
    if pts is None or len(pts) < min_features:
        out["features"] = 0 if pts is None else int(len(pts))
        out["why"] = "too little texture to register"
        return out
    out["features"] = int(len(pts))
    # the bench's one feature tracker (vision/camera.py), with the window, pyramid depth and
    # back-tracking tolerance this registration has always used (the timeline's truths were
    # measured with them); the model fitted here is a similarity, the density count's a
    # homography with a parallax mesh
    p0, p1 = track(prev, cur, pts, win=21, levels=3, iters=30, eps=0.01, fb_max_px=1.0)
    out["tracked"] = int(len(p0))
    if len(p0) < max(4, min_features // 2):
        out["why"] = "the features could not be followed into the next frame"
        return out
    m, inl = cv2.estimateAffinePartial2D(
        p0, p1, method=cv2.RANSAC, ransacReprojThreshold=1.5, maxIters=1000, confidence=0.995
    )
    if m is None:
        out["why"] = "no consistent motion among the followed features"
        return out
    out["inliers"] = int(inl.sum()) if inl is not None else 0
    a, b = float(m[0, 0]), float(m[1, 0])
    h, w = prev.shape[:2]
    c = np.array([w / 2.0, h / 2.0, 1.0])
    moved = m @ c
    warped = cv2.warpAffine(prev, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    valid = cv2.warpAffine(np.full_like(prev, 255), m, (w, h), flags=cv2.INTER_NEAREST, borderValue=0) > 0
    if valid.sum() > 0.2 * valid.size:
        residual = float(np.mean(cv2.absdiff(warped, cur)[valid]) / 255.0)
    else:
        residual = raw
    out.update(
        ok=True,
        dx=float(moved[0] - c[0]),
        dy=float(moved[1] - c[1]),
        scale=math.hypot(a, b),
        rot_deg=math.degrees(math.atan2(b, a)),
        residual=residual,
    )
    return out


def _local_median(values: np.ndarray, i: int, half: int) -> float:
    lo, hi = max(0, i - half), min(len(values), i + half + 1)
    neigh = np.concatenate([values[lo:i], values[i + 1 : hi]])
    neigh = neigh[np.isfinite(neigh)]
    return float(np.median(neigh)) if neigh.size else float("nan")


def series_arrays(frames: dict[str, list]) -> dict[str, np.ndarray]:
    """The probe's per-frame lists as float arrays (None -> nan)."""
    return {k: np.array([np.nan if v is None else v for v in vals], float) for k, vals in frames.items()}


def detect_cuts(frames: dict[str, list], *, fps: float, width_px: float, s: Any) -> list[dict]:
    """Frame-to-frame changes too large to be camera motion. `frames` holds per-sample lists
    (t_s, dx, dy, residual, inlier_ratio ...; index i = change from sample i-1 to i);
    `s` the camera scorer's thresholds (scorers.camera: cut_*, jump_*, cuts_from_s). Consecutive flagged samples are one cut."""
    a = series_arrays(frames)
    t, res, inl = a["t_s"], a["residual"], a["inlier_ratio"]
    disp = np.hypot(a["dx"], a["dy"]) / width_px  # share of the frame width per sample
    half = max(1, int(round(s.cut_window_s * fps)))
    flagged: list[dict] = []
    for i in range(1, len(t)):
        if t[i] < s.cuts_from_s:
            continue
        med_res = _local_median(res, i, half)
        med_inl = _local_median(inl, i, half)
        med_disp = _local_median(disp, i, half)
        lost = (
            not np.isfinite(inl[i])
            or inl[i] <= s.cut_max_inlier_ratio
            or (np.isfinite(med_inl) and inl[i] < 0.5 * med_inl)
        )
        content = (
            res[i] >= s.cut_min_residual
            and lost
            and (not np.isfinite(med_res) or res[i] >= s.cut_residual_factor * max(med_res, 0.005))
        )
        jump = (
            np.isfinite(disp[i])
            and disp[i] >= s.jump_min_share
            and (not np.isfinite(med_disp) or disp[i] >= s.jump_factor * max(med_disp, 0.002))
        )
        if content or jump:
            flagged.append(
                {
                    "i": i,
                    "t_s": round(float(t[i]), 3),
                    "from_s": round(float(t[i - 1]), 3),
                    "kind": "content" if content else "jump",
                    "residual": _r(res[i]),
                    "local_residual": _r(med_res),
                    "inlier_ratio": _r(inl[i]),
                    "displacement_share": _r(disp[i]),
                }
            )
    cuts: list[dict] = []
    for f in flagged:
        if cuts and f["i"] - cuts[-1]["i_last"] <= 1:
            cuts[-1]["i_last"] = f["i"]
            cuts[-1]["until_s"] = f["t_s"]
            continue
        cuts.append({**f, "i_last": f["i"], "until_s": f["t_s"]})
    return cuts


def _r(v: Optional[float], nd: int = 4) -> Optional[float]:
    return None if v is None or not np.isfinite(v) else round(float(v), nd)


def _smooth(x: np.ndarray, k: int) -> np.ndarray:
    if k <= 1 or x.size < k:
        return x
    ker = np.ones(k) / k
    pad = k // 2
    xp = np.pad(x, (pad, k - 1 - pad), mode="edge")
    return np.convolve(xp, ker, mode="valid")


def camera_stats(
    frames: dict[str, list],
    *,
    fps: float,
    css_per_px: float,
    width_css: float,
    cut_idx: set[int],
    smooth_s: float = 0.3,
) -> dict[str, Any]:
    """Per-sample camera speed (CSS px/s of the viewport), zoom and rotation rates, and jerk
    (from velocity smoothed over `smooth_s`, so registration noise is not differentiated
    three times). Samples at cuts and failed registrations are left out (nan)."""
    a = series_arrays(frames)
    t = a["t_s"]
    dx, dy = a["dx"] * css_per_px, a["dy"] * css_per_px
    scale, rot_deg = a["scale"].copy(), a["rot_deg"].copy()
    for i in cut_idx:
        if 0 <= i < len(dx):
            dx[i] = dy[i] = scale[i] = rot_deg[i] = np.nan
    dt = np.diff(t, prepend=np.nan)
    vx, vy = dx / dt, dy / dt
    speed = np.hypot(vx, vy)
    zoom = np.log(scale) / dt
    rot = rot_deg / dt
    k = max(1, int(round(smooth_s * fps)))
    ok = np.isfinite(vx) & np.isfinite(vy)
    jerk = np.full_like(t, np.nan)
    if ok.sum() >= 4:
        idx = np.arange(len(t))
        svx = _smooth(np.interp(idx, idx[ok], vx[ok]), k)
        svy = _smooth(np.interp(idx, idx[ok], vy[ok]), k)
        ax, ay = np.gradient(svx, t), np.gradient(svy, t)
        jx, jy = np.gradient(ax, t), np.gradient(ay, t)
        jerk = np.hypot(jx, jy)
        jerk[~ok] = np.nan

    def q(v, p):
        v = v[np.isfinite(v)]
        return _r(float(np.percentile(v, p)), 2) if v.size else None

    return {
        "speed_css_px_s": [_r(v, 1) for v in speed],
        "zoom_rate_per_s": [_r(v, 4) for v in zoom],
        "rotation_deg_s": [_r(v, 3) for v in rot],
        "jerk_css_px_s3": [_r(v, 1) for v in jerk],
        "summary": {
            "speed_p50": q(speed, 50),
            "speed_p95": q(speed, 95),
            "speed_max": q(speed, 100),
            "speed_p95_widths_s": None if q(speed, 95) is None else round(q(speed, 95) / width_css, 4),
            "zoom_rate_p95": q(np.abs(zoom), 95),
            "rotation_p95_deg_s": q(np.abs(rot), 95),
            "jerk_p50": q(jerk, 50),
            "jerk_p95": q(jerk, 95),
            "jerk_max": q(jerk, 100),
            "registered_share": _r(float(np.mean(np.isfinite(a["dx"][1:]))) if len(t) > 1 else None, 3),
            "smoothing_s": smooth_s,
        },
    }


def phase_changes(samples: list[dict]) -> list[dict]:
    """[{phase, start_s}] from (t_s, phase) samples: each change at the first sample showing it."""
    out: list[dict] = []
    for smp in samples:
        p = smp.get("phase")
        if p is None:
            continue
        if not out or out[-1]["phase"] != p:
            out.append({"phase": p, "start_s": smp["t_s"]})
    return out


def reset_check(post: list[dict], *, match: float, depart: float) -> dict[str, Any]:
    """Jump back: a frame after the tour's end that looks like an opening frame (distance to
    the best-matching frame of the first seconds <= `match`) while it has left the closing
    shot (distance to the last frame of the tour >= `depart`)."""
    hits = [p for p in post if p["d_open"] is not None and p["d_open"] <= match and p["d_end"] >= depart]
    first = hits[0] if hits else None
    return {
        "reset": bool(hits),
        "first_s": first["t_s"] if first else None,
        "matches_opening_at_s": first["open_t_s"] if first else None,
        "frames_matching": len(hits),
        "frames_checked": len(post),
        "closest": min(post, key=lambda p: p["d_open"]) if post else None,
    }
