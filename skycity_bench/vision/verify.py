"""Checking the hook's claims against the pixels (the hook locates, it never counts).

A claim (one entry of getDynamicObjects() marked visible) holds when
  1. its centre is inside the viewport (on screen), and
  2. its own box, after camera compensation, contains changed pixels of an identifiable
     moving region (not a particle, streak, cloud or full-screen effect), and
  3. it is not a duplicate or a part of another claim that holds (a box mostly inside an
     already verified box: 重复计算的零件).
For each claim that holds we also measure its own displacement relative to the
compensated background (template matching of its box from A in the warped B): the speed
and heading the behaviour evidence is built from.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from .segment import STREAK, Segmentation


@dataclass
class VerifyParams:
    claim_margin_px: float = 4.0       # slack around the hook's box (sizes are "approximate")
    claim_margin_frac: float = 0.25
    min_support_px: int = 6            # changed pixels of an identifiable region inside the box
    part_overlap: float = 0.7          # share of a box inside a verified box that makes it a part
    max_displacement_px: int = 48      # search radius of the displacement measurement
    default_size_px: float = 16.0      # box size when the hook gives none
    share_fit: float = 0.6             # a second claim shares a region if it fits it this well relative to the first
    still_rms: float = 12.0            # RMS change of a box that did not move below which it is unchanged
    own_share: float = 0.4             # share of a moving region inside the box for it to be the claim's own


def _num(v) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _box(c: dict, p: VerifyParams) -> tuple[float, float, float, float] | None:
    x, y = _num(c.get("x")), _num(c.get("y"))
    if x is None or y is None:
        return None
    w = _num(c.get("w")) or p.default_size_px
    h = _num(c.get("h")) or p.default_size_px
    return x, y, abs(w), abs(h)


def _displacement(a: np.ndarray, b: np.ndarray, box: tuple[int, int, int, int], R: int) -> tuple[float, float] | None:
    x0, y0, x1, y1 = box
    H, W = a.shape[:2]
    if x1 - x0 < 3 or y1 - y0 < 3:
        return None
    sx0, sy0, sx1, sy1 = max(0, x0 - R), max(0, y0 - R), min(W, x1 + R), min(H, y1 + R)
    tpl = a[y0:y1, x0:x1]
    area = b[sy0:sy1, sx0:sx1]
    if area.shape[0] < tpl.shape[0] or area.shape[1] < tpl.shape[1] or float(tpl.std()) < 2:
        return None
    res = cv2.matchTemplate(area, tpl, cv2.TM_SQDIFF)
    _, _, loc, _ = cv2.minMaxLoc(res)
    return float(sx0 + loc[0] - x0), float(sy0 + loc[1] - y0)


def _still(a: np.ndarray, b: np.ndarray, box, rms: float) -> bool:
    x0, y0, x1, y1 = box
    pa, pb = a[y0:y1, x0:x1].astype(np.float32), b[y0:y1, x0:x1].astype(np.float32)
    return pa.size > 0 and float(np.sqrt(np.mean((pa - pb) ** 2))) < rms


def _own_support(seg: Segmentation, support: np.ndarray, area: dict, box, own_share: float) -> dict[int, int]:
    """Changed pixels inside the box of the moving regions that are mostly this box's own:
    a mover passing next to a static claim only grazes the box and does not make it move."""
    x0, y0, x1, y1 = box
    sub = support[y0:y1, x0:x1]
    if not sub.any():
        return {}
    labs = seg.labels[y0:y1, x0:x1][sub]
    return {int(lab): int(n) for lab, n in zip(*np.unique(labs, return_counts=True))
            if n >= own_share * area.get(int(lab), n)}


def verify_claims(claims: list, seg: Segmentation, a: np.ndarray, bw: np.ndarray,
                  p: VerifyParams | None = None) -> list[dict]:
    p = p or VerifyParams()
    H, W = a.shape[:2]
    ident = np.zeros(seg.labels.max() + 2, bool)
    for r in seg.regions:
        # a streak can be a slow mover's thin leading/trailing strip: it may support a claim;
        # particles, soft regions and full-screen effects never do
        if r.identifiable or r.reason == STREAK:
            ident[r.label] = True
    support = (seg.mask > 0) & ident[seg.labels]
    area = {r.label: r.area for r in seg.regions}
    out: list[dict] = []
    cand = []
    for i, c in enumerate(claims):
        if not isinstance(c, dict):
            out.append({"index": i, "verdict": "malformed"})
            continue
        rec = {"id": str(c.get("id", i))[:60], "category": str(c.get("category", "?"))[:40]}
        bx = _box(c, p)
        if bx is None:
            rec["verdict"] = "malformed"
            out.append(rec)
            continue
        x, y, w, h = bx
        rec.update({"x": round(x, 1), "y": round(y, 1), "w": round(w, 1), "h": round(h, 1)})
        if not (0 <= x < W and 0 <= y < H):
            rec["verdict"] = "off screen"
            out.append(rec)
            continue
        m = p.claim_margin_px + p.claim_margin_frac * max(w, h)
        x0, y0 = int(max(0, x - w / 2 - m)), int(max(0, y - h / 2 - m))
        x1, y1 = int(min(W, x + w / 2 + m + 1)), int(min(H, y + h / 2 + m + 1))
        rec["_tight"] = (x - w / 2, y - h / 2, x + w / 2, y + h / 2)
        own = _own_support(seg, support, area, (x0, y0, x1, y1), p.own_share)
        s = sum(own.values())
        rec["support_px"] = s
        rec["_own"] = own
        if s < p.min_support_px:
            rec["verdict"] = "no own motion"
            out.append(rec)
            continue
        rec["_box"] = (x0, y0, x1, y1)
        rec["_tight"] = (x - w / 2, y - h / 2, x + w / 2, y + h / 2)
        cand.append(rec)
        out.append(rec)
    # Larger boxes first: a smaller box mostly inside a verified one is a part / duplicate.
    kept: list[dict] = []

    def inside(rec):
        ax0, ay0, ax1, ay1 = rec["_tight"]
        own = max(1e-6, (ax1 - ax0) * (ay1 - ay0))
        for k in kept:
            bx0, by0, bx1, by1 = k["_tight"]
            ix = max(0.0, min(ax1, bx1) - max(ax0, bx0))
            iy = max(0.0, min(ay1, by1) - max(ay0, by0))
            if ix * iy / own >= p.part_overlap:
                return k["id"]
        return None

    def overlaps(r1, r2):
        a0, b0 = r1["_box"], r2["_box"]
        return min(a0[2], b0[2]) > max(a0[0], b0[0]) and min(a0[3], b0[3]) > max(a0[1], b0[1])

    # One moving region is one object's own: where claims near each other share a region,
    # the claim that fits it best keeps it (a mover driving past a parked car the hook calls
    # dynamic does not make the parked car move); a second claim shares it only if it fits
    # nearly as well (two objects merged into one region).
    bbox = {r.label: (r.x, r.y, r.x + r.w, r.y + r.h) for r in seg.regions}

    def fit(rec, lab):
        t, b0 = rec["_tight"], bbox.get(lab)
        if b0 is None:
            return 0.0
        ix = max(0.0, min(t[2], b0[2]) - max(t[0], b0[0]))
        iy = max(0.0, min(t[3], b0[3]) - max(t[1], b0[1]))
        inter = ix * iy
        union = (t[2] - t[0]) * (t[3] - t[1]) + (b0[2] - b0[0]) * (b0[3] - b0[1]) - inter
        return inter / union if union > 0 else 0.0

    def best_fit(rec):
        return max((fit(rec, lab) for lab in rec["_own"]), default=0.0)

    owner: dict[int, list[dict]] = {}
    for rec in sorted(cand, key=lambda r: -(r["w"] * r["h"])):
        dup = inside(rec)
        if dup is not None:
            rec["verdict"] = f"part or duplicate of {dup}"
            continue
        rec["verdict"] = "moved"
        kept.append(rec)
    for rec in sorted(kept, key=best_fit, reverse=True):
        free = {lab: n for lab, n in rec["_own"].items()
                if not any(overlaps(rec, o) and fit(rec, lab) < p.share_fit * fit(o, lab) for o in owner.get(lab, []))}
        if sum(free.values()) < p.min_support_px:
            other = next(o["id"] for lab in rec["_own"] for o in owner.get(lab, []) if overlaps(rec, o))
            rec["verdict"] = f"no own motion: its moving region is {other}'s"
            continue
        for lab in free:
            owner.setdefault(lab, []).append(rec)
    kept = [r for r in kept if r["verdict"] == "moved"]
    for rec in kept:
        tx0, ty0, tx1, ty1 = (int(round(v)) for v in rec["_tight"])  # measure its own displacement
        box = (max(0, tx0), max(0, ty0), min(W, tx1), min(H, ty1))
        d = _displacement(a, bw, box, p.max_displacement_px)
        if d is not None:
            rec["dx"], rec["dy"] = d
            if d == (0.0, 0.0) and _still(a, bw, box, p.still_rms):
                # its own box neither moved nor changed: the motion next to it is someone else's
                rec["verdict"] = "no own motion: its own box is unchanged"
    kept = [r for r in kept if r["verdict"] == "moved"]
    for rec in out:
        if rec.get("verdict") == "no own motion" and "_tight" in rec:
            dup = inside(rec)          # say what it is: a part of an object that did move
            if dup is not None:
                rec["verdict"] = f"part or duplicate of {dup}"
    for rec in out:
        rec.pop("_box", None)
        rec.pop("_tight", None)
        rec.pop("_own", None)
    return out
