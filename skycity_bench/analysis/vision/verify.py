"""Checking the hook's claims against the pixels (the hook locates, it never counts).

A claim (one entry of getDynamicObjects() marked visible) holds when
  1. its centre is inside the viewport (on screen), and
  2. its own image region moved against the camera-compensated background, shown either
     a. by changed pixels of an identifiable moving region that is mostly inside its box
        (`region`), or
     b. by its box's own content: the box changed, and its content is found again shifted
        by at least `min_shift_px`, fitting there far better than where the camera alone
        would have put it (`shift`; this catches slow movers whose edges stay inside the
        edge tolerance of the pixel comparison), and
  3. it is not a duplicate or a part of another claim that holds (a box mostly inside an
     already verified box that moves *with* it: 重复计算的零件). A box inside another that
     moves differently is a separate object passing in front (a drone before an airship).
One moving region belongs to one object: where several claims share one, the best-fitting
claim keeps it, and another keeps it too only if it fits nearly as well or moves on its own.
Every claim that holds carries its displacement (dx, dy, full-res px over Δ), from which the
behaviour evidence takes speeds and headings.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from skycity_bench.analysis.vision.segment import STREAK, Segmentation

# The half-size search is used only for boxes at least this many px on their short side: a
# smaller box's half-size template (under 5 px) matches a window grid or a road marking as
# well as the object, and its coarse guess sends the full-size refinement to the wrong place
# (a 4 x 7 px car's 1 s shift was found 60 px away).
HALF_MIN_PX = 10


def search_radius(box: Sequence[int], radius: int) -> int:
    """How far a box's content is searched over Δ: `radius`, but for a small box (short side
    under HALF_MIN_PX) at most twice its long side (at least 8 px). A small template matched
    far away is mostly a copy (a car in a jam beside identical ones, a window of a grid):
    on the orbiting generated city, still jammed cars 5 x 8 px were matched 20-38 px away.
    A small mover faster than that shows as a changed region (route a) or in its track."""
    w, h = box[2] - box[0], box[3] - box[1]
    if min(w, h) >= HALF_MIN_PX:
        return radius
    return min(radius, max(8, 2 * max(w, h)))


@dataclass
class VerifyParams:
    claim_margin_px: float = 4.0  # slack around the hook's box (sizes are "approximate")
    claim_margin_frac: float = 0.25
    min_support_px: int = 6  # changed pixels of an identifiable region inside the box
    part_overlap: float = 0.7  # share of a box inside a verified box that makes it a part
    max_displacement_px: int = 48  # search radius of the displacement measurement
    default_size_px: float = 16.0  # box size when the hook gives none
    share_fit: float = 0.6  # a second claim shares a region if it fits it this well relative to the first
    still_rms: float = 12.0  # RMS change of a box below which it is unchanged
    own_share: float = 0.4  # share of a moving region inside the box for it to be the claim's own
    min_shift_px: float = 1.5  # content shift that counts as the box's own motion (route b)
    shift_fit: float = 0.35  # ... when its fit there is at most this share of the fit in place
    distinct_motion_px: float = 2.0  # displacements this far apart are two objects, not one
    min_texture: float = 6.0  # gray std a box needs for its shift to mean anything
    speed_fit: float = 0.5  # a shift explaining the box at least this well gives its speed
    other_shift_per_delta_px: float = 0.0  # (other pairs) least shift per Δ of the pair's length: the
    # camera compensation's error grows with the time between frames
    epipolar_px: float = 1.5  # (longer pairs, 3D) least distance off the epipolar line
    mirror_px: float = 1.5  # (longer pairs) the shifts before and after t must be opposite
    mirror_frac: float = 0.3  # ... within this many px plus this share of the larger
    twin_min: float = 0.4  # (other pairs) least cost of the content against A itself at the
    # shift, as a share of its cost in place (below: a copy was matched)
    borrow_overlap: float = 0.25  # (other pairs) overlap, as a share of the smaller box, with a verified
    # claim moving alike that makes a claim's motion borrowed
    far_pair_frames: int = 0  # (3D) the far pair: frames t - k and t + k, k this many (0: none)
    far_epipolar_px: float = 3.0  # ... where both shifts must land at least this far off their lines
    far_search_px: int = 32  # ... searched this far (px) around where the camera puts the box
    min_object_px: float = 0.0  # a claim whose box is smaller than this on its long side is a speck (0: off)
    min_speed_px_s: float = 0.0  # (longer pairs) least own speed on screen, px per second of the pair


def _num(v) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _gray(img: np.ndarray) -> np.ndarray:
    return img if img.ndim == 2 else cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)


def _subpixel(res: np.ndarray, x: int, y: int) -> tuple[float, float]:
    """Parabola through the match cost around its minimum, per axis."""

    def off(m, c, p):
        den = m - 2 * c + p
        return 0.0 if den <= 0 else float(np.clip(0.5 * (m - p) / den, -0.5, 0.5))

    h, w = res.shape
    ox = off(res[y, x - 1], res[y, x], res[y, x + 1]) if 0 < x < w - 1 else 0.0
    oy = off(res[y - 1, x], res[y, x], res[y + 1, x]) if 0 < y < h - 1 else 0.0
    return ox, oy


@dataclass
class Shift:
    dx: float
    dy: float
    rms_in_place: float  # RMS change of the box where the camera alone puts it
    fit: float  # cost with each pixel in place or shifted, whichever fits / cost in place
    unique: bool = True  # the content fits clearly best at this one shift
    textured: bool = True  # the content has texture of its own (not a flat patch)
    twin: float = 1.0  # cost of the content against frame A itself at the shift / cost in place

    @property
    def norm(self) -> float:
        return math.hypot(self.dx, self.dy)


def _search(tpl: np.ndarray, img: np.ndarray, x0: int, y0: int, radius: int):
    """Match cost of `tpl` (placed at x0, y0 in `img`) at every shift within `radius`:
    (cost surface, its origin in img), or None where the window does not fit."""
    H, W = img.shape[:2]
    th, tw = tpl.shape[:2]
    sx0, sy0 = max(0, x0 - radius), max(0, y0 - radius)
    sx1, sy1 = min(W, x0 + tw + radius), min(H, y0 + th + radius)
    if sx1 - sx0 < tw or sy1 - sy0 < th:
        return None
    return cv2.matchTemplate(img[sy0:sy1, sx0:sx1], tpl, cv2.TM_SQDIFF), sx0, sy0


def _unique(res: np.ndarray, loc: Sequence[int], lo: float, zero: float, away: int) -> bool:
    """A flat patch (a part inside a plain body) or a repeating one fits equally well at other
    shifts, and then the shift says nothing: unique = the best fit beyond `away` cost cells
    from the minimum is clearly worse than the minimum."""
    far = res.copy()
    far[max(0, loc[1] - away) : loc[1] + away + 1, max(0, loc[0] - away) : loc[0] + away + 1] = np.inf
    second = float(far.min()) if np.isfinite(far).any() else float("inf")
    return second - lo >= 0.1 * max(zero - lo, 1e-6)


def _best_match(
    tpl: np.ndarray,
    gb: np.ndarray,
    box: tuple[int, int, int, int],
    radius: int,
    zero: float,
    half: tuple[np.ndarray, np.ndarray] | None,
) -> tuple[np.ndarray, int, int, Sequence[int], bool] | None:
    """The full-size match cost surface around the best shift of `tpl` (the content of `box`
    in A), its origin in B, the minimum's cell and whether it is unique; None where a search
    window does not fit. With `half`, the shift is found at half size and refined within 2 px."""
    x0, y0, x1, y1 = box
    if half is not None and min(x1 - x0, y1 - y0) >= HALF_MIN_PX and radius > 8:
        cx0, cy0 = x0 // 2, y0 // 2
        got = _search(half[0][cy0 : (y1 + 1) // 2, cx0 : (x1 + 1) // 2], half[1], cx0, cy0, radius // 2 + 1)
        if got is None:
            return None
        res2, sx2, sy2 = got
        lo2, _, loc2, _ = cv2.minMaxLoc(res2)
        unique = _unique(res2, loc2, lo2, float(res2[cy0 - sy2, cx0 - sx2]), 1)
        gx, gy = x0 + 2 * (sx2 + loc2[0] - cx0), y0 + 2 * (sy2 + loc2[1] - cy0)  # coarse guess, full res
        got = _search(tpl, gb, gx, gy, 2)
        if got is None:
            return None
        res, sx0, sy0 = got
        lo, _, loc, _ = cv2.minMaxLoc(res)
    else:
        got = _search(tpl, gb, x0, y0, radius)
        if got is None:
            return None
        res, sx0, sy0 = got
        lo, _, loc, _ = cv2.minMaxLoc(res)
        unique = _unique(res, loc, lo, zero, 2)
    return res, sx0, sy0, loc, unique


def measure_shift(
    ga: np.ndarray,
    gb: np.ndarray,
    box: tuple[int, int, int, int],
    radius: int,
    min_texture: float = 6.0,
    half: tuple[np.ndarray, np.ndarray] | None = None,
) -> Shift | None:
    """Where the content of `box` in A is in the compensated B (gray), within `radius` px.
    With `half` (both frames at half size) the search runs there first and is refined at full
    size within 2 px: a 48-px search over 80 boxes costs a quarter as much."""
    x0, y0, x1, y1 = box
    if x1 - x0 < 3 or y1 - y0 < 3:
        return None
    tpl = ga[y0:y1, x0:x1]
    e_in = (gb[y0:y1, x0:x1].astype(np.float32) - tpl) ** 2
    zero = float(e_in.sum())
    texture = float(tpl.std()) >= min_texture
    found = _best_match(tpl, gb, box, radius, zero, half)
    if found is None:
        return None
    res, sx0, sy0, loc, unique = found
    fx, fy = _subpixel(res, *loc)
    # The box holds the object and some background: in place the background fits and the
    # object does not, shifted the other way round. Each pixel takes whichever explains it:
    # a box that moved on its own is explained almost wholly; one that did not gains nothing.
    ix, iy = sx0 + loc[0], sy0 + loc[1]
    e_sh = (gb[iy : iy + (y1 - y0), ix : ix + (x1 - x0)].astype(np.float32) - tpl) ** 2
    both = float(np.minimum(e_in, e_sh).sum())
    # A twin: where the content was found in B, frame A already held the same content (a row
    # of identical signs, a window grid). The match may be that copy, and then it says
    # nothing about motion; a mover's destination in A holds what it is about to cover.
    # As a share of the way from the match in B (0: A holds as good a copy there) to the fit
    # in place (1: A holds there what B holds in place, the background a mover uncovers).
    twin = float(((ga[iy : iy + (y1 - y0), ix : ix + (x1 - x0)].astype(np.float32) - tpl) ** 2).sum())
    lo_sh = float(e_sh.sum())
    return Shift(
        dx=ix + fx - x0,
        dy=iy + fy - y0,
        rms_in_place=math.sqrt(zero / tpl.size),
        fit=both / zero if zero > 0 else 1.0,
        unique=unique,
        textured=texture,
        twin=(twin - lo_sh) / (zero - lo_sh) if zero > lo_sh else 1.0,
    )


def _rms(a: np.ndarray, b: np.ndarray, box, W: int, H: int) -> float:
    """RMS of the largest channel difference in the box (colour: two colours of one
    brightness are as different as any)."""
    x0, y0, x1, y1 = max(0, box[0]), max(0, box[1]), min(W, box[2]), min(H, box[3])
    if x1 <= x0 or y1 <= y0:
        return 0.0
    d = np.abs(a[y0:y1, x0:x1].astype(np.int16) - b[y0:y1, x0:x1])
    d = d.max(axis=-1) if d.ndim == 3 else d
    return float(np.sqrt(np.mean(d.astype(np.float32) ** 2)))


def _box(c: dict, p: VerifyParams) -> tuple[float, float, float, float] | None:
    x, y = _num(c.get("x")), _num(c.get("y"))
    if x is None or y is None:
        return None
    w = _num(c.get("w")) or p.default_size_px
    h = _num(c.get("h")) or p.default_size_px
    return x, y, abs(w), abs(h)


def _own_support(seg: Segmentation, ident: np.ndarray, area: dict, box, own_share: float) -> dict[int, int]:
    """Changed pixels inside the box of the moving regions that are mostly this box's own:
    a mover passing next to a static claim only grazes the box and does not make it move."""
    x0, y0, x1, y1 = box
    labs = seg.labels[y0:y1, x0:x1][seg.mask[y0:y1, x0:x1] > 0]
    labs = labs[ident[labs]]
    if labs.size == 0:
        return {}
    return {
        int(lab): int(n)
        for lab, n in zip(*np.unique(labs, return_counts=True))
        if n >= own_share * area.get(int(lab), n)
    }


def _overlaps_enough(t, to, share: float) -> bool:
    """Boxes t and to overlap by at least `share` of the smaller one's area (a claim riding on
    a verified claim: borrow_overlap)."""
    area = max(1.0, (t[2] - t[0]) * (t[3] - t[1]))
    return _overlap(t, to) >= share * min(area, max(1.0, (to[2] - to[0]) * (to[3] - to[1])))


def _overlap(t, b) -> float:
    """Intersection area of two (x0, y0, x1, y1) boxes."""
    return max(0.0, min(t[2], b[2]) - max(t[0], b[0])) * max(0.0, min(t[3], b[3]) - max(t[1], b[1]))


def _iou(t, b) -> float:
    inter = _overlap(t, b)
    union = (t[2] - t[0]) * (t[3] - t[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


class _Claims:
    """The claims of one sample while they are being checked (private helpers share it)."""

    def __init__(
        self, seg: Segmentation, a: np.ndarray, bw: np.ndarray, p: VerifyParams, raw: np.ndarray | None = None
    ):
        self.seg, self.p = seg, p
        self.H, self.W = a.shape[:2]
        self.ga, self.gb = _gray(a), _gray(bw)
        self.a, self.raw = a, raw
        self.half = (cv2.pyrDown(self.ga), cv2.pyrDown(self.gb))
        # a streak can be a slow mover's thin leading/trailing strip: it may support a claim;
        # particles, soft regions and full-screen effects never do
        self.ident = np.zeros(seg.labels.max() + 2, bool)
        for r in seg.regions:
            if r.identifiable or r.reason == STREAK:
                self.ident[r.label] = True
        self.area = {r.label: r.area for r in seg.regions}
        self.bbox = {r.label: (r.x, r.y, r.x + r.w, r.y + r.h) for r in seg.regions}

    def moves_alone(self, rec: dict) -> bool:
        """Route b: the box changed, and its content reappears shifted, fitting far better."""
        s: Shift | None = rec.get("_shift")
        return (
            s is not None
            and s.unique
            and s.textured
            and s.rms_in_place >= self.p.still_rms
            and s.norm >= self.p.min_shift_px
            and s.fit <= self.p.shift_fit
            # not a copy: frame A already holds this content where it was found (a small
            # object among identical ones, a car in a jam, matches its neighbour)
            and s.twin >= self.p.twin_min
        )

    def distinct(self, r1: dict, r2: dict) -> bool:
        """Two claims whose boxes both moved on their own, by clearly different amounts."""
        if not (self.moves_alone(r1) and self.moves_alone(r2)):
            return False
        s1, s2 = r1["_shift"], r2["_shift"]
        return math.hypot(s1.dx - s2.dx, s1.dy - s2.dy) >= self.p.distinct_motion_px

    def check(self, i: int, c: Any) -> dict[str, Any]:
        """One claim's record: where it is, and whether its own image region moved (and how
        that shows: `region` or `shift`), before parts and shared regions are sorted out."""
        p = self.p
        if not isinstance(c, dict):
            return {"index": i, "verdict": "malformed"}
        rec: dict[str, Any] = {"id": str(c.get("id", i))[:60], "category": str(c.get("category", "?"))[:40]}
        bx = _box(c, p)
        if bx is None:
            rec["verdict"] = "malformed"
            return rec
        x, y, w, h = bx
        rec.update({"x": round(x, 1), "y": round(y, 1), "w": round(w, 1), "h": round(h, 1)})
        # what the scene graph locator saw of it (vision/settle.py reads them)
        if isinstance(c.get("rays"), dict):
            rec["rays"] = {k: c["rays"][k] for k in ("points", "on", "covered") if isinstance(c["rays"].get(k), int)}
        if c.get("fixed_to_camera") is True:
            rec["fixed_to_camera"] = True
        if not (0 <= x < self.W and 0 <= y < self.H):
            rec["verdict"] = "off screen"
            return rec
        if max(w, h) < p.min_object_px:
            # a speck (a pedestrian one or two px tall): no viewer counts it as an object
            rec["verdict"] = f"below the size floor: {max(w, h):.1f} px < {p.min_object_px:g} px"
            return rec
        m = p.claim_margin_px + p.claim_margin_frac * max(w, h)
        grown = (
            int(max(0, x - w / 2 - m)),
            int(max(0, y - h / 2 - m)),
            int(min(self.W, x + w / 2 + m + 1)),
            int(min(self.H, y + h / 2 + m + 1)),
        )
        rec["_tight"] = (x - w / 2, y - h / 2, x + w / 2, y + h / 2)
        rec["_box"] = grown
        tight = tuple(int(round(v)) for v in rec["_tight"])
        if self.raw is not None and _rms(self.a, self.raw, tight, self.W, self.H) < p.still_rms:
            # nothing changed there on screen: the object is covered (a shop card over it) or
            # drawn fixed to the screen; compensating the camera would shift it, not move it
            rec["verdict"] = "no own motion: nothing changed there on screen (covered or screen-fixed)"
            return rec
        s = self._measure(rec, tight, grown)
        if rec["support_px"] >= p.min_support_px:
            rec["how"] = "region"
        elif self.moves_alone(rec):
            rec["how"] = "shift"
        else:
            rec["verdict"] = (
                "no own motion: its own box is unchanged"
                if s is not None and s.rms_in_place < p.still_rms
                else "no own motion"
            )
            return rec
        if s is not None and s.norm < 0.5 and s.rms_in_place < p.still_rms:
            # its own box neither moved nor changed: the motion beside it is someone else's
            rec["verdict"] = "no own motion: its own box is unchanged"
            return rec
        rec["verdict"] = "moved"
        return rec

    def _measure(self, rec: dict[str, Any], tight: tuple[int, ...], grown: tuple[int, int, int, int]) -> Shift | None:
        """The two routes' figures on the claim's record: its box content's shift (route b)
        and the changed pixels of moving regions that are mostly its own (route a)."""
        p = self.p
        rec["_shift"] = measure_shift(
            self.ga,
            self.gb,
            (max(0, tight[0]), max(0, tight[1]), min(self.W, tight[2]), min(self.H, tight[3])),
            search_radius(tight, p.max_displacement_px),
            p.min_texture,
            self.half,
        )
        rec["_own"] = _own_support(self.seg, self.ident, self.area, grown, p.own_share)
        rec["support_px"] = sum(rec["_own"].values())
        s: Shift | None = rec["_shift"]
        if s is not None:
            rec["shift"] = {
                "dx": round(s.dx, 2),
                "dy": round(s.dy, 2),
                "rms_in_place": round(s.rms_in_place, 1),
                "fit": round(s.fit, 3),
                "unique": s.unique,
                "textured": s.textured,
            }
        return s

    def fit(self, rec: dict, lab: int) -> float:
        b = self.bbox.get(lab)
        return 0.0 if b is None else _iou(rec["_tight"], b)

    def best_fit(self, rec: dict) -> float:
        return max((self.fit(rec, lab) for lab in rec["_own"]), default=1.0)


def _parent(rec: dict[str, Any], kept: list[dict[str, Any]], p: VerifyParams) -> dict[str, Any] | None:
    """The first of `kept` whose box holds at least part_overlap of the claim's box."""
    if not kept:
        return None
    t, k = rec["_tight"], np.array([r["_tight"] for r in kept])
    inter = np.clip(np.minimum(t[2], k[:, 2]) - np.maximum(t[0], k[:, 0]), 0, None) * np.clip(
        np.minimum(t[3], k[:, 3]) - np.maximum(t[1], k[:, 1]), 0, None
    )
    hit = np.flatnonzero(inter / max(1e-6, (t[2] - t[0]) * (t[3] - t[1])) >= p.part_overlap)
    return kept[hit[0]] if hit.size else None


def _drop_parts(cand: list[dict[str, Any]], cl: _Claims, p: VerifyParams) -> list[dict[str, Any]]:
    """Larger boxes first: a smaller box mostly inside a verified one, moving with it, is a
    part or a duplicate of it. The claims kept."""
    kept: list[dict[str, Any]] = []
    for rec in sorted(cand, key=lambda r: -(r["w"] * r["h"])):
        k = _parent(rec, kept, p)
        if k is not None and not cl.distinct(rec, k):
            rec["verdict"] = f"part or duplicate of {k['id']}"
            continue
        kept.append(rec)
    return kept


def _share_regions(kept: list[dict[str, Any]], cl: _Claims, p: VerifyParams) -> None:
    """One moving region is one object's own: where claims near each other share a region,
    the claim that fits it best keeps it (a mover driving past a parked car the hook calls
    dynamic does not make the parked car move); another shares it only if it fits nearly
    as well (two objects merged into one region) or moves on its own."""

    def overlaps(r1: dict[str, Any], r2: dict[str, Any]) -> bool:
        return _overlap(r1["_box"], r2["_box"]) > 0

    # The best fit is the claim whose box matches the region AND whose own shift explains its
    # box: a parked car a mover drives over may match the region as well, but its box is only
    # half explained by the mover's shift (the other half is the parked car, standing still).
    def claim_fit(rec: dict[str, Any]) -> float:
        s = rec.get("_shift")
        return cl.best_fit(rec) * (1.0 - min(1.0, s.fit) if s is not None else 0.5)

    owner: dict[int, list[dict[str, Any]]] = {}
    for rec in sorted((r for r in kept if r["how"] == "region"), key=claim_fit, reverse=True):
        rivals = {o["id"]: o for lab in rec["_own"] for o in owner.get(lab, []) if overlaps(rec, o)}
        free = {
            lab: n
            for lab, n in rec["_own"].items()
            if not any(
                overlaps(rec, o) and cl.fit(rec, lab) < p.share_fit * cl.fit(o, lab) and not cl.distinct(rec, o)
                for o in owner.get(lab, [])
            )
        }
        if sum(free.values()) < p.min_support_px:
            if cl.moves_alone(rec) and all(cl.distinct(rec, o) for o in rivals.values()):
                rec["how"] = "shift"  # its own box moves on, differently from the region's owner
                continue
            rec["verdict"] = f"no own motion: its moving region is {next(iter(rivals))}'s"
            continue
        for lab in free:
            owner.setdefault(lab, []).append(rec)


def verify_claims(
    claims: list[Any],
    seg: Segmentation,
    a: np.ndarray,
    bw: np.ndarray,
    p: VerifyParams | None = None,
    raw: np.ndarray | None = None,
) -> list[dict[str, Any]]:
    """`a` at t, `bw` the frame at t + Δ compensated into A (the background lines up; under
    parallax, by the background flow that also follows depth layers); `raw` that frame as
    captured (a box that did not change on screen is covered or fixed to the screen)."""
    p = p or VerifyParams()
    cl = _Claims(seg, a, bw, p, raw)
    out = [cl.check(i, c) for i, c in enumerate(claims)]
    cand = [r for r in out if r.get("verdict") == "moved"]
    kept = _drop_parts(cand, cl, p)
    _share_regions(kept, cl, p)
    kept = [r for r in out if r.get("verdict") == "moved"]
    for rec in out:
        if rec.get("verdict", "").startswith("no own motion") and "_tight" in rec:
            k = _parent(rec, kept, p)  # say what it is: a part of an object that did move
            if k is not None:
                rec["verdict"] = f"part or duplicate of {k['id']}"
    for rec in out:
        s = rec.get("_shift")
        if rec.get("verdict") == "moved" and s is not None and s.unique and s.fit <= p.speed_fit:
            # only a displacement that explains the box is evidence of speed and heading (a
            # flapping bird or a turning wheel is verified by its region, its shift is noise)
            rec["dx"], rec["dy"] = round(s.dx, 2), round(s.dy, 2)
        for key in ("_box", "_tight", "_own", "_shift"):
            rec.pop(key, None)
    return out
