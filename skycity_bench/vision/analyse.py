"""One frame pair -> the visual count, the hook claims checked, and what the evidence
image needs. Pure: numpy arrays in, JSON-able dict out."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from .camera import CameraParams, dense_background, estimate, warp_to_a
from .segment import SegmentParams, Segmentation, segment
from .verify import VerifyParams, verify_claims


@dataclass
class Params:
    camera: CameraParams = field(default_factory=CameraParams)
    segment: SegmentParams = field(default_factory=SegmentParams)
    verify: VerifyParams = field(default_factory=VerifyParams)


@dataclass
class PairResult:
    data: dict
    seg: Segmentation
    warped: np.ndarray


def analyse_pair(a: np.ndarray, b: np.ndarray, claims: list | None = None, params: Params | None = None) -> PairResult:
    """`a` at t, `b` at t + Δ (BGR, same size); `claims`: the hook's visible objects at t,
    or None without a hook."""
    p = params or Params()
    t0 = time.perf_counter()
    model = estimate(a, b, p.camera)
    t1 = time.perf_counter()
    bw, valid = warp_to_a(b, model, a.shape[:2])
    alt = None
    if model.residual_px > p.camera.parallax_px:
        alt = dense_background(a, b, model, p.camera)
        model.notes.append("parallax: the mesh left residual motion, a dense background flow was added")
    seg = segment(a, bw, valid, p.segment, alt=alt, raw=b)
    t2 = time.perf_counter()
    excluded = Counter(r.reason for r in seg.regions if r.reason)
    data = {
        "visual_count": sum(1 for r in seg.regions if r.counted),
        "regions": [r.to_json() for r in seg.regions if r.identifiable or r.area >= p.segment.min_area_px][:400],
        "excluded": dict(excluded),
        "camera": model.to_json(),
        "changed_frac": round(seg.changed_frac, 4),
        "full_screen_effect": seg.full_screen,
    }
    if claims is not None:
        checked = verify_claims(claims, seg, a, bw if alt is None else alt, p.verify, raw=b)
        moved = [c for c in checked if c.get("verdict") == "moved"]
        data["claims"] = checked
        data["claimed_count"] = len(checked)
        data["verified_count"] = len(moved)
        data["categories"] = sorted({c["category"] for c in moved})
        data["claimed_categories"] = sorted({c.get("category") for c in checked if c.get("category")})
    data["timing_ms"] = {"camera": round((t1 - t0) * 1000, 1), "segment": round((t2 - t1) * 1000, 1),
                         "total": round((time.perf_counter() - t0) * 1000, 1)}
    return PairResult(data=data, seg=seg, warped=bw)
