"""One frame pair -> the visual count, the hook claims checked, and what the evidence
image needs. Pure: numpy arrays in, JSON-able dict out."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, TypeGuard

import cv2
import numpy as np

from skycity_bench.analysis.vision.camera_estimate import (
    CameraModel,
    CameraParams,
    background_displacement,
    dense_background,
    epipolar_px,
    estimate,
    warp_to_a,
)
from skycity_bench.analysis.vision.multiview import TrackParams, still_point_recheck
from skycity_bench.analysis.vision.objects import ObjectParams, plain_objects
from skycity_bench.analysis.vision.recheck import FarPair, OtherPair, far_recheck, recheck_claims
from skycity_bench.analysis.vision.segment import PARALLAX, Segmentation, SegmentParams, segment
from skycity_bench.analysis.vision.settle import TrackPair, baseline_of, own_account, settle_claims, track_recheck
from skycity_bench.analysis.vision.verify import Shift, VerifyParams, measure_shift, verify_claims


@dataclass
class Params:
    camera: CameraParams = field(default_factory=CameraParams)
    segment: SegmentParams = field(default_factory=SegmentParams)
    verify: VerifyParams = field(default_factory=VerifyParams)
    objects: ObjectParams = field(default_factory=ObjectParams)
    track: TrackParams = field(default_factory=TrackParams)


@dataclass
class PairResult:
    data: dict
    seg: Segmentation
    warped: np.ndarray


def compensate(a: np.ndarray, b: np.ndarray, p: CameraParams, scale: float = 1.0):
    """Frame B brought into A's pixel grid by the camera model fitted between them: (model,
    B warped by the model, its valid mask, B warped by the dense background flow under
    parallax or None). `scale`: how many times the primary pair's Δ lies between them (the
    parallax left after the mesh grows with the camera's travel, so its clamp does too)."""
    model = estimate(a, b, p)
    bw, valid = warp_to_a(b, model, a.shape[:2])
    alt = None
    if model.residual_px > p.parallax_px:
        cp = p if scale == 1.0 else CameraParams(**{**p.__dict__, "parallax_max_px": p.parallax_max_px * scale})
        alt = dense_background(a, b, model, cp)
        model.notes.append("parallax: the mesh left residual motion, a dense background flow was added")
    return model, bw, valid, alt


def parallax_explained(seg: Segmentation, a: np.ndarray, alt: np.ndarray, model: CameraModel, p: Params) -> None:
    """Under parallax (a 3D scene: the dense background flow was added and a fundamental
    matrix fitted), which counted regions are no object's own motion. Where a near surface's
    edge slides over a far one, a thin strip of the far one is uncovered or covered (a
    building's side face along its silhouette: the camera-only orbit's false positives were
    such slivers, 5-17 px wide); no compensation explains that strip pixel by pixel, so it
    is changed, yet nothing in it moved on its own. A region holds as an object only where
    its box's content reappears shifted, uniquely, explaining the box (the claims' route b:
    min_shift_px, shift_fit), and off the epipolar line or further than the background flow
    may depart from the camera model (along its line, up to that far, a still point at
    another depth moves so too). Flagged regions still support a hook's claim (a slow mover's
    strip looks the same); the no-hook judgement (objects.py) applies its own tests."""
    H, W = a.shape[:2]
    ga = a if a.ndim == 2 else cv2.cvtColor(a, cv2.COLOR_BGR2GRAY)
    gb = alt if alt.ndim == 2 else cv2.cvtColor(alt, cv2.COLOR_BGR2GRAY)
    half = (cv2.pyrDown(ga), cv2.pyrDown(gb))
    v, pad = p.verify, p.segment.group_px
    for r in seg.regions:
        if not r.counted:
            continue
        box = (max(0, r.x - pad), max(0, r.y - pad), min(W, r.x + r.w + pad), min(H, r.y + r.h + pad))
        s = measure_shift(ga, gb, box, v.max_displacement_px, v.min_texture, half)
        if not _explains(s, v):
            # the half-size search first (a quarter of the cost); where it found nothing, the
            # full-size one: at half size a fine texture beside a repeating one (a window
            # grid) can match the grid instead of the mover
            s = measure_shift(ga, gb, box, v.max_displacement_px, v.min_texture)
        if not _explains(s, v):
            r.parallax = True
            continue
        if s.norm <= p.camera.parallax_max_px:
            c0: np.ndarray = np.array([[(box[0] + box[2]) / 2, (box[1] + box[3]) / 2]], np.float64)
            c1 = c0 + [[s.dx, s.dy]]
            off = epipolar_px(model, c0, c1 + background_displacement(model, c1, W, H))
            r.parallax = off is not None and float(off[0]) < v.epipolar_px


def _explains(s: Shift | None, v: VerifyParams) -> TypeGuard[Shift]:
    """The box's content reappears shifted, uniquely, and the shift explains the box."""
    return s is not None and s.unique and s.fit <= v.shift_fit and s.norm >= v.min_shift_px


def _no_own_motion_left(checked: list[dict[str, Any]]) -> bool:
    """Some claim still shows no own motion: a later test may yet verify it."""
    return any(str(c.get("verdict", "")).startswith("no own motion") for c in checked)


def _pair_figures(seg: Segmentation, model: CameraModel, p: Params) -> dict[str, Any]:
    """The visual count, its regions, what was excluded and why, and the camera model."""
    excluded = Counter(r.reason for r in seg.regions if r.reason)
    if any(r.parallax for r in seg.regions):
        excluded[PARALLAX] = sum(1 for r in seg.regions if r.parallax)
    return {
        "visual_count": sum(1 for r in seg.regions if r.counted),
        "regions": [r.to_json() for r in seg.regions if r.identifiable or r.area >= p.segment.min_area_px][:400],
        "excluded": dict(excluded),
        "camera": model.to_json(),
        "changed_frac": round(seg.changed_frac, 4),
        "full_screen_effect": seg.full_screen,
    }


def _plain_figures(
    data: dict[str, Any], seg: Segmentation, a: np.ndarray, bw: np.ndarray, alt: np.ndarray | None, p: Params
) -> None:
    """The no-hook figures: which counted regions are plainly objects, each region marked
    plain or with its doubt."""
    ob = plain_objects(seg, a, bw if alt is None else alt, p.verify, p.objects, parallax=alt is not None)
    per = ob.pop("per_region")
    data["objects"] = ob
    data["regions"] = [
        {
            **r.to_json(),
            **(
                {"plain": True}
                if per.get(r.label, {}).get("plain")
                else {"doubt": per[r.label]["why"]}
                if r.label in per
                else {}
            ),
        }
        for r in seg.regions
        if r.identifiable or r.area >= p.segment.min_area_px
    ][:400]


def _recheck_other_pairs(
    data: dict[str, Any],
    checked: list[dict[str, Any]],
    a: np.ndarray,
    others: list[tuple[int, np.ndarray]],
    p: Params,
    primary_frames: int,
) -> None:
    """Claims that showed no own motion in (a, b), checked again in the other pairs."""
    tr = time.perf_counter()
    used: list[int] = []

    def pairs() -> Iterator[OtherPair]:
        # nearest first, before t before after at the same distance; each compensated
        # only when a claim is still waiting for it
        for k, f in sorted(others, key=lambda kf: (abs(kf[0]), kf[0])):
            if f.shape != a.shape or k == 0:
                continue
            sc = abs(k) / max(1, primary_frames)
            fm, fw, _, falt = compensate(a, f, p.camera, scale=sc)
            used.append(k)
            yield OtherPair(frames=k, bw=fw if falt is None else falt, raw=f, scale=sc, model=fm)

    data["rechecked_by_other_pairs"] = recheck_claims(checked, a, pairs(), p.verify, primary_frames)
    data["other_pairs_frames"] = used
    data.setdefault("timing_ms", {})["recheck"] = round((time.perf_counter() - tr) * 1000, 1)


def _recheck_far_pair(
    data: dict[str, Any],
    checked: list[dict[str, Any]],
    a: np.ndarray,
    far: list[tuple[int, np.ndarray]],
    p: Params,
    primary_frames: int,
) -> None:
    """The far pair (3D only: a fitted F), compensated by the camera model alone: over a
    second the dense background flow follows the movers (recheck.py: far_recheck)."""
    tf = time.perf_counter()
    fars = []
    for k, f in sorted(far):
        fm = estimate(a, f, p.camera)
        fw, _ = warp_to_a(f, fm, a.shape[:2])
        fars.append(FarPair(frames=k, bw=fw, raw=f, model=fm))
    data["rechecked_by_far_pair"] = far_recheck(checked, a, fars, p.verify, primary_frames)
    data.setdefault("timing_ms", {})["far"] = round((time.perf_counter() - tf) * 1000, 1)


def _settle(
    data: dict[str, Any],
    checked: list[dict[str, Any]],
    a: np.ndarray,
    every: list[tuple[int, np.ndarray]],
    views: dict[int, tuple[np.ndarray, list[Any] | None]] | None,
    p: Params,
    primary_frames: int,
) -> None:
    """Claims no test verified, settled over the longest pairs (vision/settle.py), each
    compensated by the camera model alone (over a second the dense background flow would
    follow the movers); the baseline that decided every claim; how many stay undecided."""
    ts = time.perf_counter()
    longest = max((abs(k) for k, _ in every), default=0)
    pairs: list[TrackPair] = []
    if longest > primary_frames and _no_own_motion_left(checked):
        for k, f in sorted(every):
            fm = estimate(a, f, p.camera)
            fw, _ = warp_to_a(f, fm, a.shape[:2])
            pairs.append(TrackPair(k, fw if fw.ndim == 2 else cv2.cvtColor(fw, cv2.COLOR_BGR2GRAY), f, fm))
        data["rechecked_by_track"] = track_recheck(checked, a, pairs, p.verify, primary_frames)
    views_claims = {k: cl for k, (_, cl) in (views or {}).items()}
    ends = [pr for pr in pairs if abs(pr.frames) == longest]
    data["undecided_count"] = settle_claims(checked, a, ends, views_claims, p.verify)
    data["still_by_own_account"] = own_account(checked, a, ends, views_claims, p.verify)
    for rec in checked:
        if rec.get("verdict") == "moved":
            rec["baseline_s"] = baseline_of(rec, primary_frames, p.track.still_point_frames)
    data.setdefault("timing_ms", {})["settle"] = round((time.perf_counter() - ts) * 1000, 1)


def _check_claims(
    data: dict[str, Any],
    claims: list[Any],
    seg: Segmentation,
    frames: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None],
    model: CameraModel,
    others: list[tuple[int, np.ndarray]] | None,
    views: dict[int, tuple[np.ndarray, list[Any] | None]] | None,
    p: Params,
    primary_frames: int,
) -> None:
    """The hook's claims checked in the pair, then those that showed no own motion in the
    other pairs, the far pair and over the views; the verified count and categories.
    `frames`: a, b, b warped into a's grid, and b by the dense background flow (or None)."""
    a, b, bw, alt = frames
    checked = verify_claims(claims, seg, a, bw if alt is None else alt, p.verify, raw=b)
    data["claims"] = checked
    every = [(k, f) for k, f in (others or []) if f.shape == a.shape]
    far_k = p.verify.far_pair_frames
    # the far pair is judged by its own rule only in a 3D scene (a fitted F); without parallax
    # its frames are one more, longer pair like the others (a small slow mover shows there)
    far_k = far_k if model.F is not None else 0
    far = [(k, f) for k, f in every if far_k and abs(k) == far_k]
    others = [(k, f) for k, f in every if not (far_k and abs(k) == far_k)]
    if others and _no_own_motion_left(checked):
        _recheck_other_pairs(data, checked, a, others, p, primary_frames)
    if len({k for k, _ in far}) == 2 and model.F is not None and _no_own_motion_left(checked):
        _recheck_far_pair(data, checked, a, far, p, primary_frames)
    if views and p.track.still_point_frames and model.F is not None and _no_own_motion_left(checked):
        # last, in a 3D scene (a fitted F): is the track of a claim no pair verified, its
        # content followed through the views at the hook's positions of the same object,
        # that of one still 3D point? (vision/multiview.py)
        ts = time.perf_counter()
        data["rechecked_by_still_point"] = still_point_recheck(checked, a, views, p.track, p.verify, primary_frames)
        data.setdefault("timing_ms", {})["still_point"] = round((time.perf_counter() - ts) * 1000, 1)
    _settle(data, checked, a, [*every, (primary_frames, b)], views, p, primary_frames)
    moved = [c for c in checked if c.get("verdict") == "moved"]
    data["claimed_count"] = len(checked)
    data["verified_count"] = len(moved)
    data["categories"] = sorted({c["category"] for c in moved})
    data["claimed_categories"] = sorted({c.get("category") for c in checked if c.get("category")})


def analyse_pair(
    a: np.ndarray,
    b: np.ndarray,
    claims: list[Any] | None = None,
    params: Params | None = None,
    others: list[tuple[int, np.ndarray]] | None = None,
    primary_frames: int = 6,
    views: dict[int, tuple[np.ndarray, list[Any] | None]] | None = None,
    plain: bool = False,
) -> PairResult:
    """`a` at t, `b` at t + Δ (BGR, same size); `claims`: the hook's visible objects at t,
    or None without a hook. `others`: (k, frame at t + k frames) more frames around t, before
    (k < 0) and after; claims that showed no own motion in (a, b) get another chance in
    each (vision/recheck.py: recheck_claims); those at ± params.verify.far_pair_frames are the
    far pair, judged by its own rule in a 3D scene (recheck.py: far_recheck). `views`: frames
    from t -> (frame at t + k, the hook's claims there) for k in params.track.still_point_frames;
    in a 3D scene a claim no pair verified gets the still-point test over those views and t
    last (vision/multiview.py: still_point_recheck). Δ is `primary_frames` frames. `plain`:
    with claims too, the no-hook figures of which counted regions are plainly objects (claims
    from a locator that can miss objects, the three.js scene graph: the pixels' own count
    beside the verified one)."""
    p = params or Params()
    t0 = time.perf_counter()
    model, bw, valid, alt = compensate(a, b, p.camera)
    t1 = time.perf_counter()
    seg = segment(a, bw, valid, p.segment, alt=alt, raw=b)
    if alt is not None and model.F is not None:
        parallax_explained(seg, a, alt, model, p)
    t2 = time.perf_counter()
    data = _pair_figures(seg, model, p)
    if claims is None or plain:
        # no hook: figures for judging whether the visual count found plain objects
        _plain_figures(data, seg, a, bw, alt, p)
    if claims is not None:
        _check_claims(data, claims, seg, (a, b, bw, alt), model, others, views, p, primary_frames)
    data["timing_ms"] = {
        **data.get("timing_ms", {}),
        "camera": round((t1 - t0) * 1000, 1),
        "segment": round((t2 - t1) * 1000, 1),
        "total": round((time.perf_counter() - t0) * 1000, 1),
    }
    return PairResult(data=data, seg=seg, warped=bw)
