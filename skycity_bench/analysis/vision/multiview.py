"""Is a claimed object's image track over several seconds that of ONE still 3D point?
(measured by benchmarks/density_multiview.py; wired into the density analysis last, after
every pair: still_point_recheck, called by vision/analyse.py analyse_pair)

Why: a slow mover flying the camera's way round moves under about 1 px against its
background over Δ, and over any one pair its shift lies near its epipolar line, where a
still thing at another depth moves too: no test on one pair tells them apart. Over five
views spread across ±2 s it does: a still point's track is fixed by one 3D point, which a
traveller's track departs from by 10 px and more (of the 61 claims no pair verified on the
three.js city, the 10th percentile departs 10.5 px).

How:
1. The camera, from the scene: corners of the centre view tracked view to view (pyramidal
   Lucas-Kanade, forward-backward checked, 1 s hops), kept where followed through every
   view; a projective reconstruction from them (the fundamental matrix of the two outer
   views, RANSAC; the inner views resected from the triangulated corners; a few rounds of
   triangulating over all views and resecting). No calibration needed: whether a track is
   one still point is a projective question.
2. The object, from its pixels: the claim's box content (its inner part: the corners of a
   box hold background that slides) found again in every other view, searched only within
   `still_search_px` of where the hook says the object is there (normalised cross-correlation).
   That is the appearance check: it must match (`still_min_ncc`), uniquely (`still_min_margin` above the
   best match more than 3 px away), and not at the edge of the search (found within
   `still_search_px` - 1 px of the claimed position). A hook that lies about positions fails here.
   A turning mover's look changes over 2 s: where its content at t is not found in an outer
   view, its content found in the view before it (t ± 1 s) is searched there instead, under
   the same thresholds at the hook's position (a chain of look-alikes; movers_three_44: the
   worst sample 41 -> 42 of 44, most of the misses left were turning gliders).
3. The test: the measured track (not the claimed one) triangulated to the best still 3D
   point; its largest reprojection error at least `still_moved_px` means no still point explains
   the track: the object moved. A hook that claims a still thing's true positions fails here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, cast

import cv2
import numpy as np

from skycity_bench.analysis.vision.recheck import RECHECKED, _tight
from skycity_bench.analysis.vision.verify import VerifyParams, _overlaps_enough


@dataclass
class TrackParams:
    still_point_frames: tuple[int, ...] = ()  # the views besides t, in 60 Hz frames from t (as many
    # before t as after; () = the test is off)
    still_search_px: int = 6  # the content is searched this far around the hook's position
    still_min_ncc: float = 0.3  # least normalised cross-correlation of the content there
    still_min_margin: float = 0.02  # ... above the best match more than 3 px away (unique)
    still_moved_px: float = 8.0  # least reprojection error of the best still point: moved
    still_inner: float = 0.15  # share of the box cut off each side for the template
    min_texture: float = 6.0  # gray std the template needs
    work_width: int = 960  # corners tracked on a copy this wide
    still_min_corners: int = 30  # fewer corners followed through every view: no camera


def _norm(p: np.ndarray) -> np.ndarray:
    c = p.mean(0)
    s = math.sqrt(2) / max(1e-9, float(np.sqrt(((p - c) ** 2).sum(1)).mean()))
    return np.array([[s, 0, -s * c[0]], [0, s, -s * c[1]], [0, 0, 1]])


def _triangulate(Ps: list[np.ndarray], xs: list[np.ndarray]) -> np.ndarray:
    """Linear (DLT) triangulation of one point seen at xs by cameras Ps (homogeneous 4-vector)."""
    A = []
    for P, x in zip(Ps, xs):
        A.append(x[0] * P[2] - P[0])
        A.append(x[1] * P[2] - P[1])
    m = np.array(A)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    return np.linalg.svd(m)[2][-1]


def _resect(X: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Camera matrix from 3D points X (n, 4) and their images x (n, 2) (DLT)."""
    A = []
    for Xi, xi in zip(X, x):
        A.append(np.r_[np.zeros(4), -Xi, xi[1] * Xi])
        A.append(np.r_[Xi, np.zeros(4), -xi[0] * Xi])
    return np.linalg.svd(np.array(A))[2][-1].reshape(3, 4)


def _project(P: np.ndarray, X: np.ndarray) -> np.ndarray:
    y = P @ X
    return y[:2] / y[2]


@dataclass
class Views:
    """The projective reconstruction of n views (centre = n // 2): camera matrices in each
    view's normalised coordinates (T), the corners used and their largest reprojection error
    (px): the noise floor of the still-point test."""

    P: list[np.ndarray]
    T: list[np.ndarray]
    corners: list[np.ndarray]  # per view, (m, 2) full-res px
    corner_err: np.ndarray  # (m,) px


def _follow_corners(g: list[np.ndarray], pts: np.ndarray) -> tuple[dict[int, np.ndarray], np.ndarray]:
    """The centre view's corners `pts` followed view to view outwards, each side in turn
    (forward-backward checked): their positions in every view, and which were followed
    through all of them."""
    n, c = len(g), len(g) // 2
    pos = {c: pts.copy()}
    alive = np.ones(len(pts), bool)
    lk: dict[str, Any] = dict(
        winSize=(21, 21), maxLevel=4, criteria=(cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 30, 0.01)
    )
    for step in (-1, 1):
        cur = pts.copy()
        for k in range(c + step, -1 if step < 0 else n, step):
            p1, s1, _ = cv2.calcOpticalFlowPyrLK(g[k - step], g[k], cur.reshape(-1, 1, 2), None, **lk)
            back, s2, _ = cv2.calcOpticalFlowPyrLK(g[k], g[k - step], p1, None, **lk)
            alive &= (s1.ravel() == 1) & (s2.ravel() == 1) & (np.linalg.norm(back.reshape(-1, 2) - cur, axis=1) < 0.8)
            cur = p1.reshape(-1, 2)
            pos[k] = cur.copy()
    return pos, alive


def reconstruct(grays: list[np.ndarray], p: TrackParams | None = None, seed: int = 0) -> Views | None:
    """The cameras of `grays` (gray frames, time order, centre = len // 2), or None where too
    few corners were followed through every view."""
    p = p or TrackParams()
    n, c = len(grays), len(grays) // 2
    W = grays[0].shape[1]
    scale = min(1.0, p.work_width / W)
    g = [cv2.resize(x, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) if scale != 1 else x for x in grays]
    pts = cv2.goodFeaturesToTrack(cv2.pyrDown(g[c]), maxCorners=1500, qualityLevel=0.005, minDistance=4, blockSize=3)
    if pts is None or len(pts) < p.still_min_corners:
        return None
    pts = (pts.reshape(-1, 2) * 2 + 0.5).astype(np.float32)
    pos, alive = _follow_corners(g, pts)
    if alive.sum() < p.still_min_corners:
        return None
    P = [pos[k][alive] / scale for k in range(n)]
    T = [_norm(P[k]) for k in range(n)]
    Pn = [(np.c_[P[k], np.ones(len(P[k]))] @ T[k].T)[:, :2] for k in range(n)]
    F, inl = cv2.findFundamentalMat(P[0].astype(np.float64), P[n - 1].astype(np.float64), cv2.FM_RANSAC, 1.0, 0.999)
    if F is None or F.shape != (3, 3):
        return None
    idx = np.flatnonzero(inl.ravel())
    if len(idx) < p.still_min_corners:
        return None
    Fn = np.linalg.inv(T[n - 1]).T @ F @ np.linalg.inv(T[0])
    e2 = np.linalg.svd(Fn.T)[2][-1]
    ex = np.array([[0, -e2[2], e2[1]], [e2[2], 0, -e2[0]], [-e2[1], e2[0], 0]])
    cams: dict[int, np.ndarray] = {0: np.c_[np.eye(3), np.zeros(3)], n - 1: np.c_[ex @ Fn, e2]}
    X = np.array([_triangulate([cams[0], cams[n - 1]], [Pn[0][i], Pn[n - 1][i]]) for i in idx])
    rng = np.random.default_rng(seed)
    for k in range(1, n - 1):
        best = None
        for _ in range(300):  # RANSAC over 6-corner samples
            s = rng.choice(len(idx), 6, replace=False)
            Pk = _resect(X[s], Pn[k][idx[s]])
            pr = X @ Pk.T
            err = np.linalg.norm((pr[:, :2] / pr[:, 2:3] - Pn[k][idx]) / T[k][0, 0], axis=1)
            inl_k = err < 1.5
            if best is None or inl_k.sum() > best.sum():
                best = inl_k
        cams[k] = _resect(X[best], Pn[k][idx[best]])
    for _ in range(2):
        X = np.array([_triangulate([cams[k] for k in range(n)], [Pn[k][i] for k in range(n)]) for i in idx])
        for k in range(1, n):
            cams[k] = _resect(X, Pn[k][idx])
    Ps = [cams[k] for k in range(n)]
    err = np.array(
        [
            max(np.linalg.norm(_project(Ps[k], X[j]) - Pn[k][i]) / T[k][0, 0] for k in range(n))
            for j, i in enumerate(idx)
        ]
    )
    return Views(P=Ps, T=T, corners=[P[k][idx] for k in range(n)], corner_err=err)


def still_point_px(v: Views, xs: list[tuple[float, float]]) -> float:
    """Largest reprojection error (px) of the best still 3D point for image positions xs, one
    per view: what a still thing's track stays within (the corners' noise), a mover's not."""
    n = len(xs)
    xn = [(v.T[k] @ np.r_[xs[k], 1.0])[:2] for k in range(n)]
    X = _triangulate(v.P, xn)
    for _ in range(3):  # reweighted: towards image-space error
        w = [1.0 / max(1e-9, abs(float((v.P[k] @ X)[2]))) for k in range(n)]
        A = []
        for k in range(n):
            A.append(w[k] * (xn[k][0] * v.P[k][2] - v.P[k][0]))
            A.append(w[k] * (xn[k][1] * v.P[k][2] - v.P[k][1]))
        X = np.linalg.svd(np.array(A))[2][-1]
    return max(float(np.linalg.norm(_project(v.P[k], X) - xn[k])) / v.T[k][0, 0] for k in range(n))


def follow(
    ga: np.ndarray, gv: np.ndarray, box: tuple[int, int, int, int], centre: tuple[float, float], p: TrackParams
) -> dict[str, float] | None:
    """The content of `box` (gray frame A) found in gray view `gv` within p.still_search_px of
    `centre` (where the hook says the object's centre is there): {x, y (its centre), ncc,
    margin, off (px from centre)}, or None (no texture, or too little of the search inside the frame)."""
    x0, y0, x1, y1 = box
    mx, my = int(p.still_inner * (x1 - x0)), int(p.still_inner * (y1 - y0))
    tpl = ga[y0 + my : y1 - my, x0 + mx : x1 - mx]
    if min(tpl.shape[:2]) < 4 or float(tpl.std()) < p.min_texture:
        return None
    th, tw = tpl.shape
    R = p.still_search_px
    H, W = gv.shape
    # the search window, cut at the frame's border (an object near the edge of the view)
    sx0, sy0 = int(round(centre[0] - tw / 2 - R)), int(round(centre[1] - th / 2 - R))
    sx1, sy1 = min(W, sx0 + tw + 2 * R + 1), min(H, sy0 + th + 2 * R + 1)
    sx0, sy0 = max(0, sx0), max(0, sy0)
    if sx1 - sx0 < tw + 2 or sy1 - sy0 < th + 2:
        return None
    res = cv2.matchTemplate(gv[sy0:sy1, sx0:sx1], tpl, cv2.TM_CCOEFF_NORMED)
    _, hi, _, (x, y) = cv2.minMaxLoc(res)
    far = res.copy()
    far[max(0, y - 3) : y + 4, max(0, x - 3) : x + 4] = -1
    ox = oy = 0.0
    if 0 < x < res.shape[1] - 1:
        a, b, c = res[y, x - 1], res[y, x], res[y, x + 1]
        ox = 0.5 * (a - c) / (a - 2 * b + c) if a - 2 * b + c < 0 else 0.0
    if 0 < y < res.shape[0] - 1:
        a, b, c = res[y - 1, x], res[y, x], res[y + 1, x]
        oy = 0.5 * (a - c) / (a - 2 * b + c) if a - 2 * b + c < 0 else 0.0
    cx, cy = sx0 + x + ox + tw / 2, sy0 + y + oy + th / 2
    # the template is the box cut evenly on each side: its centre is the box's
    return {
        "x": float(cx),
        "y": float(cy),
        "ncc": float(hi),
        "margin": float(hi - far.max()),
        "off": float(math.hypot(cx - centre[0], cy - centre[1])),
    }


def _passes(f: dict[str, float] | None, p: TrackParams) -> bool:
    """The content was found where the hook says, matching well and uniquely."""
    return (
        f is not None
        and f["ncc"] >= p.still_min_ncc
        and f["margin"] >= p.still_min_margin
        and f["off"] < p.still_search_px - 1
    )


def _chained(
    grays: list[np.ndarray],
    xs: list[tuple[float, float] | None],
    k: int,
    size: tuple[int, int],
    claimed_k: tuple[float, float],
    p: TrackParams,
) -> dict[str, float] | None:
    """A turning mover's look changes over 2 s (a glider's box changes shape): where its
    content at t is not found in view k, its content in the view before it (t ± 1 s, found
    there by the same check) is searched instead, at the hook's position there, under the
    same thresholds: a chain of look-alikes, never a looser test, and each link must be where
    the hook says. The match when it passes, else None."""
    c = len(grays) // 2
    w, h = size
    j = k - 1 if k > c else k + 1
    xj = xs[j]
    if j != c and xj is not None:
        x0, y0 = int(round(xj[0] - w / 2)), int(round(xj[1] - h / 2))
        H, W = grays[j].shape
        if 0 <= x0 and 0 <= y0 and x0 + w <= W and y0 + h <= H:
            g = follow(grays[j], grays[k], (x0, y0, x0 + w, y0 + h), claimed_k, p)
            if _passes(g, p):
                return g
    return None


def track_moved(
    v: Views,
    grays: list[np.ndarray],
    box: tuple[int, int, int, int],
    claimed: list[tuple[float, float] | None],
    p: TrackParams | None = None,
) -> dict[str, Any]:
    """The still-point test of one claim: `box` its tight box in the centre view, `claimed`
    the hook's centre of the same object in every view (None where it did not claim it).
    {moved: bool, why, still_point_px, ncc, margin, chained (views found from the view before
    them, not from t), track (the measured centres, one per view)}."""
    p = p or TrackParams()
    c = len(grays) // 2
    ga = grays[c]
    w, h = box[2] - box[0], box[3] - box[1]
    xs: list[tuple[float, float] | None] = [None] * len(grays)
    xs[c] = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
    nccs, margins, chained = [], [], 0
    # the views nearest t first, each side outwards: a view further out may be followed from
    # the one before it (_chained)
    for k in sorted(range(len(grays)), key=lambda k: (abs(k - c), k)):
        if k == c:
            continue
        claimed_k = claimed[k]
        if claimed_k is None:
            return {"moved": False, "why": "not claimed in every view"}
        f = follow(ga, grays[k], box, claimed_k, p)
        if not _passes(f, p):
            g = _chained(grays, xs, k, (w, h), claimed_k, p)
            if g is not None:
                f, chained = g, chained + 1
        if f is None:
            return {"moved": False, "why": "no texture to follow, or off the frame"}
        if not _passes(f, p):
            return {
                "moved": False,
                "why": "its content is not where the hook says",
                "ncc": round(f["ncc"], 2),
                "margin": round(f["margin"], 3),
                "off": round(f["off"], 1),
            }
        xs[k] = (f["x"], f["y"])
        nccs.append(f["ncc"])
        margins.append(f["margin"])
    track = cast(list[tuple[float, float]], xs)  # every view's centre found by now
    err = still_point_px(v, track)
    return {
        "moved": err >= p.still_moved_px,
        "why": "no still point explains its track" if err >= p.still_moved_px else "one still point explains its track",
        "still_point_px": round(err, 2),
        "ncc": round(min(nccs), 2),
        "margin": round(min(margins), 3),
        "chained": chained,
        "track": [[round(x, 1), round(y, 1)] for x, y in track],
    }


# --------------------------------------------------------------------------- wired
def claimed_at(claims: list[Any] | None) -> dict[str, tuple[float, float]]:
    """The hook's centres by object id in one view (its visible claims); an id claimed twice
    there says nothing about where that object is and is left out."""
    out: dict[str, tuple[float, float] | None] = {}
    for c in claims or []:
        if not isinstance(c, dict) or c.get("visible") is False or "id" not in c:
            continue
        cx, cy = c.get("x"), c.get("y")
        if cx is None or cy is None:
            continue
        try:
            x, y = float(cx), float(cy)
        except (TypeError, ValueError):
            continue
        if not (math.isfinite(x) and math.isfinite(y)):
            continue
        key = str(c["id"])[:60]  # as verify.py records a claim's id
        out[key] = None if key in out else (x, y)
    return {k: v for k, v in out.items() if v is not None}


def _borrowed_track(
    t: tuple[int, int, int, int],
    track: np.ndarray,
    moved: list[dict[str, Any]],
    at: dict[int, dict[str, tuple[float, float]]],
    offsets: list[int],
    vp: VerifyParams,
    primary_frames: int,
) -> dict[str, Any] | None:
    """The verified claim the measured track moves alike with, in every view, among those
    its box `t` overlaps (a part, or a parked car a mover drives over), else None."""
    c = offsets.index(0)
    for o in moved:
        to = _tight(o)
        if not _overlaps_enough(t, to, vp.borrow_overlap):
            continue
        op = [(o["x"], o["y"]) if k == 0 else at[k].get(o["id"]) for k in offsets]
        if any(q is None for q in op):
            continue
        opa = np.array(op, float)
        off = np.linalg.norm((track - track[c]) - (opa - opa[c]), axis=1)
        if all(
            off[j] < vp.distinct_motion_px * max(1.0, abs(k) / max(1, primary_frames))
            for j, k in enumerate(offsets)
            if k != 0
        ):
            return o
    return None


def still_point_recheck(
    out: list[dict[str, Any]],
    a: np.ndarray,
    views: dict[int, tuple[np.ndarray, list[Any] | None]],
    p: TrackParams,
    vp: VerifyParams,
    primary_frames: int = 6,
) -> int:
    """The last chance of a claim no pair verified (vision/verify.py records in `out`, updated
    in place): its box content followed through the views (`views`: frames from t -> (frame
    at t + k, the hook's claims there), k = p.still_point_frames) at the hook's positions of
    the same object id, and its measured track tested against one still 3D point
    (track_moved). Not when it moves alike, in every view, with a verified claim it overlaps
    (a part, or a parked car a mover drives over: the guard of the other pairs). Returns how
    many claims it turned into movers. Every claim tested keeps why in its record
    (`still_point`: why, the best still point's error, the appearance figures: ncc, margin,
    off = px from the hook's position where the content failed there, chained = how many
    views were found from the view before them (track_moved); for one it
    turned, the views' frames and the measured track)."""
    todo = [r for r in out if str(r.get("verdict", "")).startswith(RECHECKED) and "w" in r]
    ks = sorted(p.still_point_frames)
    if not todo or not ks or any(k not in views for k in ks):
        return 0
    offsets = sorted([*ks, 0])
    H, W = a.shape[:2]
    grays = [
        cv2.cvtColor(img, cv2.COLOR_BGR2GRAY) if img.ndim == 3 else img
        for img in (a if k == 0 else views[k][0] for k in offsets)
    ]
    if any(g.shape != grays[0].shape for g in grays):
        return 0
    v = reconstruct(grays, p)
    if v is None:
        for rec in todo:
            rec["still_point"] = {"why": "no camera: too few corners followed through every view"}
        return 0
    at = {k: claimed_at(views[k][1]) for k in ks}
    moved = [r for r in out if r.get("verdict") == "moved" and "w" in r]
    turned = 0
    for rec in todo:
        t = _tight(rec)
        box = (max(0, t[0]), max(0, t[1]), min(W, t[2]), min(H, t[3]))
        if box[2] - box[0] < 3 or box[3] - box[1] < 3:
            continue
        pos = [None if k == 0 else at[k].get(rec["id"]) for k in offsets]
        r = track_moved(v, grays, box, pos, p)
        rec["still_point"] = {k: r[k] for k in ("why", "still_point_px", "ncc", "margin", "off", "chained") if k in r}
        if not r["moved"]:
            continue
        borrowed = _borrowed_track(t, np.array(r["track"]), moved, at, offsets, vp, primary_frames)
        if borrowed is not None:
            rec["still_point"]["why"] = f"moves alike with {borrowed['id']}, which it overlaps"
            continue
        rec["verdict"], rec["how"] = "moved", f"still point over {len(offsets)} views"
        rec["still_point"]["frames"] = offsets
        rec["still_point"]["track"] = r["track"]
        moved.append(rec)
        turned += 1
    return turned
