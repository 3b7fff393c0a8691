"""Moving-region segmentation on a camera-compensated frame pair, with the rubric's
exclusions (tiny particles, rain-like streaks, large soft regions such as clouds and fog,
full-screen effects).

Sub-pixel edges: a static shape drawn at a fractional offset, or resampled by the
compensation, changes its edge pixels between frames although nothing moved. The
comparison is therefore *edge tolerant*: a pixel of A counts as changed only when its
colour lies outside the per-channel [min, max] of B within `edge_tolerance_px` around it
(and the same from B to A). Any blend of neighbouring colours passes; a real mover, whose
colour is not in the neighbourhood it left or entered, does not.

A uniform object that moves by d pixels changes only a trailing and a leading strip, two
separate regions. Each region is classified by which frame differs from the local
background around it (the ring just outside it): "A" (the object was here at t: trailing
strip or the old copy), "B" (it is here at t + Δ: leading strip or the new copy) or
"mixed" (textured objects, overlapping strips). The count at t counts A and mixed regions,
one per object; B regions are still real motion and support hook claims.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np


STREAK = "thin streak (rain, particle trail, edge)"


@dataclass
class SegmentParams:
    edge_tolerance_px: int = 2
    diff_threshold: int = 28
    group_px: int = 3
    min_area_px: int = 30
    min_extent_px: int = 4
    min_thickness_px: int = 2
    streak_aspect: float = 4.0
    long_streak_px: int = 40
    long_thickness_px: int = 4
    parallax_sliver_aspect: float = 2.5
    parallax_extra_px: int = 1
    soft_min_area_px: int = 600
    soft_strong_ratio: float = 0.25
    max_region_frac: float = 0.2
    full_screen_frac: float = 0.3
    border_px: int = 3
    max_regions: int = 3000


@dataclass
class Region:
    label: int
    x: int
    y: int
    w: int
    h: int
    area: int                  # changed pixels
    strong: float              # share of its pixels changed by more than 2x the threshold
    kind: str = "mixed"        # A | B | mixed
    reason: str | None = None  # why it is excluded; None = identifiable

    @property
    def identifiable(self) -> bool:
        return self.reason is None

    @property
    def counted(self) -> bool:
        return self.reason is None and self.kind != "B"

    def to_json(self) -> dict:
        return {"bbox": [self.x, self.y, self.w, self.h], "area": self.area, "kind": self.kind,
                "counted": self.counted, "reason": self.reason}


@dataclass
class Segmentation:
    mask: np.ndarray           # uint8 0/1 changed pixels
    labels: np.ndarray         # int32 region label per pixel of the grouped mask
    diff: np.ndarray           # uint8 edge-tolerant difference
    regions: list[Region]
    changed_frac: float
    full_screen: bool


def tolerant_diff(a: np.ndarray, b: np.ndarray, r: int) -> np.ndarray:
    k = cv2.getStructuringElement(cv2.MORPH_RECT, (2 * r + 1, 2 * r + 1))
    bmax, bmin = cv2.dilate(b, k), cv2.erode(b, k)
    amax, amin = cv2.dilate(a, k), cv2.erode(a, k)
    d = cv2.max(cv2.max(cv2.subtract(a, bmax), cv2.subtract(bmin, a)),
                cv2.max(cv2.subtract(b, amax), cv2.subtract(amin, b)))
    if d.ndim == 3:
        c = cv2.split(d)
        d = cv2.max(cv2.max(c[0], c[1]), c[2])
    return d


def match_photometry(a: np.ndarray, b: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """A global brightness/colour change (a fade, a flash, day-night grading) is not an
    object's motion: match B's per-channel 10th/90th percentiles to A's over the valid area."""
    idx = valid[::7, ::7] > 0
    sa, sb = a[::7, ::7][idx].astype(np.float32), b[::7, ::7][idx].astype(np.float32)
    if sa.size == 0:
        return b
    pa, pb = np.percentile(sa, [10, 90], axis=0), np.percentile(sb, [10, 90], axis=0)
    gain = (pa[1] - pa[0]) / np.maximum(pb[1] - pb[0], 1.0)
    off = pa[0] - pb[0] * gain
    if np.all(np.abs(gain - 1) < 0.03) and np.all(np.abs(off + (gain - 1) * 128) < 3):
        return b
    return cv2.convertScaleAbs(b.astype(np.float32) * gain + off)


def _classify(r: Region, a: np.ndarray, b: np.ndarray, labels: np.ndarray, mask: np.ndarray,
              grouped: np.ndarray, margin: float) -> str:
    pad = 6
    x0, y0 = max(0, r.x - pad), max(0, r.y - pad)
    x1, y1 = min(a.shape[1], r.x + r.w + pad), min(a.shape[0], r.y + r.h + pad)
    lab = labels[y0:y1, x0:x1] == r.label
    comp = lab & (mask[y0:y1, x0:x1] > 0)
    ring = (cv2.dilate(lab.astype(np.uint8), np.ones((5, 5), np.uint8)) > 0) & (grouped[y0:y1, x0:x1] == 0)
    if ring.sum() < 8 or comp.sum() == 0:
        return "mixed"
    ra, rb = a[y0:y1, x0:x1], b[y0:y1, x0:x1]
    bga, bgb = np.median(ra[ring], axis=0), np.median(rb[ring], axis=0)
    ea = np.abs(ra[comp].astype(np.int16) - bga).max(axis=-1) if ra.ndim == 3 else np.abs(ra[comp] - bga)
    eb = np.abs(rb[comp].astype(np.int16) - bgb).max(axis=-1) if rb.ndim == 3 else np.abs(rb[comp] - bgb)
    fa, fb = float(np.mean(ea > eb + margin)), float(np.mean(eb > ea + margin))
    if fa >= 0.6 and fb <= 0.25:
        return "A"
    if fb >= 0.6 and fa <= 0.25:
        return "B"
    return "mixed"


def segment(a: np.ndarray, b: np.ndarray, valid: np.ndarray, p: SegmentParams | None = None,
            alt: np.ndarray | None = None) -> Segmentation:
    """`b`: frame B compensated into A; `alt`: optionally a second compensation (the dense
    background flow under parallax); a pixel is changed only if neither explains it."""
    p = p or SegmentParams()
    h, w = a.shape[:2]
    b = match_photometry(a, b, valid)
    d = tolerant_diff(a, b, p.edge_tolerance_px)
    if alt is not None:
        # depth edges and disocclusions shift by more than a static edge: one more px of slack
        d = cv2.min(d, tolerant_diff(a, match_photometry(a, alt, valid), p.edge_tolerance_px + p.parallax_extra_px))
    keep = cv2.erode(valid, np.ones((2 * p.edge_tolerance_px + 3,) * 2, np.uint8))
    if p.border_px:
        keep[:p.border_px], keep[-p.border_px:], keep[:, :p.border_px], keep[:, -p.border_px:] = 0, 0, 0, 0
    mask = ((d > p.diff_threshold) & (keep > 0)).astype(np.uint8)
    n_valid = max(1, int(keep.sum()))
    changed = float(mask.sum()) / n_valid
    g = 2 * p.group_px + 1
    grouped = cv2.dilate(mask, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (g, g))) if p.group_px else mask
    n, labels, stats, _ = cv2.connectedComponentsWithStats(grouped, connectivity=8, ltype=cv2.CV_32S)
    on = mask > 0
    lab_on = labels[on]
    area = np.bincount(lab_on, minlength=n)
    strong = np.bincount(lab_on, weights=(d[on] > 2 * p.diff_threshold), minlength=n)
    t = max(1, p.min_thickness_px)
    thick = cv2.erode(mask, np.ones((t, t), np.uint8)) if t > 1 else mask
    thick_n = np.bincount(labels[thick > 0], minlength=n)
    thick3_n = np.bincount(labels[cv2.erode(mask, np.ones((3, 3), np.uint8)) > 0], minlength=n)
    lt = max(1, p.long_thickness_px)
    thick_long = np.bincount(labels[cv2.erode(mask, np.ones((lt, lt), np.uint8)) > 0], minlength=n)
    regions: list[Region] = []
    order = np.argsort(-area[1:])[: p.max_regions] + 1 if n > 1 else []
    for k in order:
        if area[k] == 0:
            continue
        x, y, bw, bh = (int(v) for v in stats[k, :4])
        # the grouped mask is the changed mask dilated by group_px: shrink back
        gx, gy = min(p.group_px, bw // 2), min(p.group_px, bh // 2)
        r = Region(int(k), x + gx, y + gy, max(1, bw - 2 * gx), max(1, bh - 2 * gy), int(area[k]),
                   float(strong[k] / area[k]))
        if r.w * r.h > p.max_region_frac * w * h:
            r.reason = "full-screen effect"
        elif r.area >= p.soft_min_area_px and r.strong < p.soft_strong_ratio:
            r.reason = "large soft region (cloud, fog, waterfall)"
        elif r.area < p.min_area_px:
            r.reason = "tiny particle"
        elif min(r.w, r.h) < p.min_extent_px or thick_n[k] == 0:
            r.reason = STREAK
        elif (max(r.w, r.h) >= p.streak_aspect * min(r.w, r.h) and thick3_n[k] == 0) or \
                (max(r.w, r.h) >= p.long_streak_px and thick_long[k] == 0) or \
                (alt is not None and max(r.w, r.h) >= p.parallax_sliver_aspect * min(r.w, r.h)
                 and thick_long[k] == 0):
            # long and thin: a depth edge sliding under parallax, a disocclusion sliver or a
            # long trail; an object's strip is as long as the object is wide, and thicker.
            # Under parallax (alt given) shorter slivers along depth edges count as streaks too.
            r.reason = STREAK
        else:
            r.kind = _classify(r, a, b, labels, mask, grouped, p.diff_threshold / 2)
        regions.append(r)
    return Segmentation(mask=mask, labels=labels, diff=d, regions=regions, changed_frac=changed,
                        full_screen=changed > p.full_screen_frac)
