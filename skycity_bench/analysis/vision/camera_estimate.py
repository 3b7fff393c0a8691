"""Camera-motion estimation between two frames, from the static scene only.

Why this shape: a single homography explains a flat or far scene, but a 3D city seen by
an orbiting camera has parallax (near buildings slide past far ones), so one global model
leaves residual motion on every building edge. We therefore fit a global homography with
RANSAC on tracked corners (GFTT + pyramidal Lucas–Kanade, forward–backward checked) and
then add a coarse *mesh* of residual displacements (MeshFlow-style): at each mesh node the
median residual of the tracks around it. A median is robust to the minority of tracks that
sit on moving objects; a node with too few tracks takes its neighbours' value. What the
mesh cannot follow (a depth step inside one cell) is left to the edge-tolerant comparison
in segment.py.

Features are tracked on a reduced copy (`work_width` px wide) because corners and flow are
stable there and it keeps a 1920x1080 pair far under the time budget; every model is
returned in full-resolution pixels.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np


@dataclass
class CameraParams:
    work_width: int = 960  # feature tracking resolution (px)
    max_features: int = 600
    ransac_px: float = 1.5  # RANSAC reprojection threshold, full-res px
    fb_max_px: float = 0.6  # forward–backward disagreement that rejects a track (work px)
    mesh_cols: int = 16
    mesh_rows: int = 9
    mesh_min_tracks: int = 5  # tracks a node needs to trust its own median
    mesh_min_px: float = 0.3  # below this largest residual the mesh is dropped
    mesh_gate_px: float = 0.15  # the mesh is fitted only when the homography leaves the
    # median track this far off (a flat scene fits to ~0.03)
    parallax_px: float = 0.25  # median track error after the mesh above which a dense
    # background flow is added (strong parallax)
    dense_width: int = 960  # the background flow is computed on a copy this wide (px)
    dense_cell: int = 4  # px of that copy per cell of the background flow
    dense_median: int = 15  # cells in its median window (objects smaller vanish from it)
    parallax_max_px: float = 2.0  # most the background flow may depart from the mesh (full-res px)
    dense_epipolar_px: float = 2.5  # (3D) background flow this far off its epipolar line is a mover's (0: off)


@dataclass
class CameraModel:
    """Maps a pixel of frame A to where the same static scene point is in frame B."""

    H: np.ndarray  # 3x3, full-res A -> B
    mesh: np.ndarray | None = None  # (rows, cols, 2) residual dx, dy (full-res px)
    kind: str = "identity"  # identity | homography | mesh
    tracks: int = 0
    inliers: int = 0
    residual_px: float = 0.0  # median |error| of tracks after the model
    notes: list[str] = field(default_factory=list)
    F: np.ndarray | None = None  # fundamental matrix A -> B (full-res px), under parallax
    dense: np.ndarray | None = None  # (rows, cols, 2) the background flow's departure from
    # H + mesh at cell centres (full-res px), when one was added

    def to_json(self) -> dict:
        H = self.H / self.H[2, 2]
        return {
            "kind": self.kind,
            "tracks": self.tracks,
            "inliers": self.inliers,
            "residual_px": round(float(self.residual_px), 3),
            "translation_px": [round(float(H[0, 2]), 2), round(float(H[1, 2]), 2)],
            "scale": round(float(np.sqrt(abs(np.linalg.det(H[:2, :2])))), 4),
            "mesh_max_px": None if self.mesh is None else round(float(np.abs(self.mesh).max()), 2),
            "notes": self.notes,
        }


def _gray_small(img: np.ndarray, scale: float) -> np.ndarray:
    g = img if img.ndim == 2 else cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    if scale == 1.0:
        return g
    return cv2.resize(g, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)


def _mesh(pts: np.ndarray, res: np.ndarray, w: int, h: int, p: CameraParams) -> np.ndarray:
    """Median residual around each node; empty nodes filled from neighbours; then a 3x3
    median across nodes removes a node captured by a group of movers."""
    rows, cols = p.mesh_rows, p.mesh_cols
    cx = np.clip((pts[:, 0] / (w / cols)).astype(int), 0, cols - 1)
    cy = np.clip((pts[:, 1] / (h / rows)).astype(int), 0, rows - 1)
    # every track votes for its own node and the 8 around it; the median per node comes from
    # one sort of all votes (node, value), the middle of each node's run
    d = np.array([-1, 0, 1])
    ny, nx = (cy[:, None, None] + d[None, :, None]), (cx[:, None, None] + d[None, None, :])
    ny, nx = np.broadcast_to(ny, (len(pts), 3, 3)), np.broadcast_to(nx, (len(pts), 3, 3))
    ok = (ny >= 0) & (ny < rows) & (nx >= 0) & (nx < cols)
    node = (ny * cols + nx)[ok]
    votes = np.broadcast_to(res[:, None, None, :], (len(pts), 3, 3, 2))[ok]
    counts = np.bincount(node, minlength=rows * cols)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    lo, hi = starts + np.maximum(counts - 1, 0) // 2, starts + counts // 2
    grid: np.ndarray = np.full((rows * cols, 2), np.nan, np.float32)
    has = counts >= p.mesh_min_tracks
    for k in range(2):
        v = votes[np.lexsort((votes[:, k], node)), k]
        if v.size:
            grid[has, k] = 0.5 * (v[np.minimum(lo, v.size - 1)] + v[np.minimum(hi, v.size - 1)])[has]
    grid = grid.reshape(rows, cols, 2)
    missing = np.isnan(grid[..., 0])
    if missing.all():
        return np.zeros_like(grid)
    for _ in range(max(p.mesh_rows, p.mesh_cols)):
        if not missing.any():
            break
        pad = np.pad(grid, ((1, 1), (1, 1), (0, 0)), constant_values=np.nan)
        stack = np.stack(
            [
                pad[1 + dy : 1 + dy + p.mesh_rows, 1 + dx : 1 + dx + p.mesh_cols]
                for dy in (-1, 0, 1)
                for dx in (-1, 0, 1)
            ]
        )
        with np.errstate(all="ignore"):
            cnt = (~np.isnan(stack[..., 0])).sum(axis=0)
            mean = np.nansum(stack, axis=0) / np.maximum(cnt, 1)[..., None]
        upd = missing & (cnt > 0)
        grid[upd] = mean[upd]
        missing = np.isnan(grid[..., 0])
    grid[np.isnan(grid)] = 0
    out = np.empty_like(grid)
    for k in range(2):
        out[..., k] = cv2.medianBlur(grid[..., k].astype(np.float32), 3) if min(grid.shape[:2]) >= 3 else grid[..., k]
    return out


def _apply(H: np.ndarray, pts: np.ndarray) -> np.ndarray:
    return cv2.perspectiveTransform(pts.reshape(-1, 1, 2).astype(np.float64), H).reshape(-1, 2)


def mesh_at(model: CameraModel, pts: np.ndarray, w: int, h: int) -> np.ndarray:
    """Residual displacement of the mesh at arbitrary full-res points (bilinear)."""
    if model.mesh is None:
        return np.zeros_like(pts, dtype=np.float64)
    rows, cols = model.mesh.shape[:2]
    gx = np.clip(pts[:, 0] / (w / cols) - 0.5, 0, cols - 1)
    gy = np.clip(pts[:, 1] / (h / rows) - 0.5, 0, rows - 1)
    x0, y0 = np.floor(gx).astype(int), np.floor(gy).astype(int)
    x1, y1 = np.minimum(x0 + 1, cols - 1), np.minimum(y0 + 1, rows - 1)
    fx, fy = (gx - x0)[:, None], (gy - y0)[:, None]
    m = model.mesh
    return (m[y0, x0] * (1 - fx) + m[y0, x1] * fx) * (1 - fy) + (m[y1, x0] * (1 - fx) + m[y1, x1] * fx) * fy


def track(
    ga: np.ndarray, gb: np.ndarray, pts: np.ndarray, *, win: int, levels: int, iters: int, eps: float, fb_max_px: float
) -> tuple[np.ndarray, np.ndarray]:
    """Corners `pts` of grey frame A followed into grey frame B (pyramidal Lucas-Kanade), kept
    only where tracking back from B lands within `fb_max_px` of where they started: (p0, p1),
    each (n, 2), in these frames' px. The one feature tracker of the bench: the density count's
    camera model (estimate, below) and the timeline's frame-to-frame registration
    (analysis/motion.py) fit their different models to what it returns."""
    lk: dict[str, Any] = dict(
        winSize=(win, win), maxLevel=levels, criteria=(cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, iters, eps)
    )
    p1, st, _ = cv2.calcOpticalFlowPyrLK(ga, gb, pts, None, **lk)
    back, st2, _ = cv2.calcOpticalFlowPyrLK(gb, ga, p1, None, **lk)
    fb = np.linalg.norm((back - pts).reshape(-1, 2), axis=1)
    good = (st.ravel() == 1) & (st2.ravel() == 1) & (fb < fb_max_px)
    return pts.reshape(-1, 2)[good], p1.reshape(-1, 2)[good]


def estimate(a: np.ndarray, b: np.ndarray, p: CameraParams | None = None) -> CameraModel:
    p = p or CameraParams()
    h, w = a.shape[:2]
    scale = min(1.0, p.work_width / w)
    ga, gb = _gray_small(a, scale), _gray_small(b, scale)
    ident = CameraModel(H=np.eye(3))
    # corners found on a half-size copy (four times cheaper), tracked at the work size
    half = cv2.pyrDown(ga)
    pts = cv2.goodFeaturesToTrack(
        half, maxCorners=p.max_features, qualityLevel=0.005, minDistance=max(2, int(half.shape[1] / 100)), blockSize=3
    )
    pts = None if pts is None else (pts * 2 + 0.5).astype(np.float32)
    if pts is None or len(pts) < 8:
        ident.notes.append("too few corners in the scene to track the camera: assumed still")
        return ident
    # 2 pyramid levels follow 4 x 15 work px between frames Δ apart: far more than a camera moves
    q0, q1 = track(ga, gb, pts, win=15, levels=2, iters=20, eps=0.03, fb_max_px=p.fb_max_px)
    q0, q1 = q0 / scale, q1 / scale
    if len(q0) < 8:
        ident.notes.append("too few reliable tracks: assumed still")
        ident.tracks = int(len(q0))
        return ident
    H, inl = cv2.findHomography(q0, q1, cv2.RANSAC, p.ransac_px, maxIters=2000, confidence=0.995)
    if H is None:
        H, inl = np.eye(3), np.ones((len(q0), 1), np.uint8)
    model = CameraModel(H=H, kind="homography", tracks=int(len(q0)), inliers=int(inl.sum()))
    res = q1 - _apply(H, q0)
    err = np.linalg.norm(res, axis=1)
    # Tracks far off the homography are movers or strong parallax; the mesh takes the
    # parallax (spatially coherent), the node medians ignore the scattered movers. Only where
    # the homography leaves the typical track off (parallax): in a flat scene crowded with
    # textured movers a node can be outvoted by them and would explain their motion away.
    if np.median(err) > p.mesh_gate_px:
        mesh = _mesh(q0, res, w, h, p)
        if np.abs(mesh).max() >= p.mesh_min_px:
            model.mesh, model.kind = mesh, "mesh"
            err = np.linalg.norm(res - mesh_at(model, q0, w, h), axis=1)
    model.residual_px = float(np.median(err))
    if model.kind == "mesh" and len(q0) >= 16:
        # a 3D scene: every static point's motion lies on its epipolar line, whatever its
        # depth (what no 2D model can say; recheck.py uses it in the longer pairs)
        F, _ = cv2.findFundamentalMat(q0.astype(np.float64), q1.astype(np.float64), cv2.FM_RANSAC, p.ransac_px, 0.99)
        model.F = F if F is not None and F.shape == (3, 3) else None
    return model


# The camera model (homography + smooth mesh) is linear enough over this many px to be
# computed on a grid this coarse and interpolated in between.
MAP_STEP = 16


def _upsample(coarse: np.ndarray, w: int, h: int) -> np.ndarray:
    """A (rows, cols, 2) map of absolute source coordinates, sampled at cell centres, to every
    full-res pixel. cv2.resize aligns cell centres, so the identity part stays exact."""
    return cv2.resize(coarse.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)


def _centres(cols: int, rows: int, w: int, h: int) -> np.ndarray:
    """Full-res coordinates of the centres of a cols x rows grid of cells, as (N, 2)."""
    X, Y = np.meshgrid((np.arange(cols) + 0.5) * w / cols - 0.5, (np.arange(rows) + 0.5) * h / rows - 0.5)
    return np.stack([X.ravel(), Y.ravel()], axis=1)


def warp_to_a(
    b: np.ndarray, model: CameraModel, shape: tuple[int, int], step: int = MAP_STEP
) -> tuple[np.ndarray, np.ndarray]:
    """Frame B resampled into A's pixel grid (so static scene points line up), and the mask of
    A pixels whose source lies inside B. The map is computed on a coarse grid and upsampled:
    a homography plus a smooth mesh is linear enough over `step` pixels."""
    h, w = shape
    if model.mesh is None:
        # a pure homography: the direct warp is twice as fast as a remap through maps
        flags = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP
        warped = cv2.warpPerspective(b, model.H, (w, h), flags=flags, borderMode=cv2.BORDER_REPLICATE)
        valid = cv2.warpPerspective(
            np.ones(b.shape[:2], np.uint8),
            model.H,
            (w, h),
            flags=cv2.INTER_NEAREST | cv2.WARP_INVERSE_MAP,
            borderValue=0,
        )
        return warped, valid
    gw, gh = -(-w // step), -(-h // step)
    pts = _centres(gw, gh, gw * step, gh * step)
    coarse = (_apply(model.H, pts) + mesh_at(model, pts, w, h)).reshape(gh, gw, 2)
    m = _upsample(coarse, gw * step, gh * step)[:h, :w]
    warped = _remap(b, m)
    inside = cv2.inRange(m, (0.0, 0.0), (b.shape[1] - 1.0, b.shape[0] - 1.0))
    # OpenCV takes a scalar operand here; its type stubs list arrays only
    return warped, cv2.bitwise_and(inside, 1)  # type: ignore[call-overload]


def epipolar_px(model: CameraModel, p0: np.ndarray, p1: np.ndarray) -> np.ndarray | None:
    """Distance (full-res px) of each point p1 in B from the epipolar line of p0 in A: what a
    static scene point could not depart from, at any depth. None without a fitted F."""
    if model.F is None:
        return None
    a = np.c_[p0, np.ones(len(p0))] @ model.F.T  # lines in B
    return np.abs((np.c_[p1, np.ones(len(p1))] * a).sum(axis=1)) / np.maximum(np.hypot(a[:, 0], a[:, 1]), 1e-9)


def model_displacement(model: CameraModel, pts: np.ndarray, w: int, h: int) -> np.ndarray:
    """Where the camera model sends each full-res point of A, minus the point (full-res px)."""
    return _apply(model.H, pts) + mesh_at(model, pts, w, h) - pts


def dense_background(a: np.ndarray, b: np.ndarray, model: CameraModel, p: CameraParams | None = None) -> np.ndarray:
    """Frame B warped into A by a *background* flow, for depth steps the mesh cannot follow
    (a near building's edge sliding over the far ground). Dense DIS optical flow is taken
    relative to the camera model; that residual is median-filtered over a window larger than
    a small object (so small movers drop out of it) and then clamped to `parallax_max_px`:
    parallax inside one mesh cell is a few px at most, while a large mover's own motion is
    more, so a mover bigger than the window is not explained away with the background."""
    p = p or CameraParams()
    h, w = a.shape[:2]
    s = min(1.0, p.dense_width / w)
    ga, gb = _gray_small(a, s), _gray_small(b, s)
    dis = cv2.DISOpticalFlow_create(cv2.DISOPTICAL_FLOW_PRESET_FAST)  # type: ignore[attr-defined]  # not in the stubs
    flow = dis.calc(ga, gb, None)
    cw, ch = max(1, flow.shape[1] // p.dense_cell), max(1, flow.shape[0] // p.dense_cell)
    small = cv2.resize(flow, (cw, ch), interpolation=cv2.INTER_AREA) / s  # full-res px
    centres = _centres(cw, ch, w, h)
    # the camera model's displacement is smooth: computed on the coarse map grid, resized to the cells
    gw, gh = -(-w // MAP_STEP), -(-h // MAP_STEP)
    base = cv2.resize(
        model_displacement(model, _centres(gw, gh, w, h), w, h).reshape(gh, gw, 2).astype(np.float32),
        (cw, ch),
        interpolation=cv2.INTER_LINEAR,
    )
    res = small - base
    if model.F is not None and p.dense_epipolar_px > 0:
        res = _epipolar_residual(res, centres, base, model.F, p.dense_epipolar_px)
    k = p.dense_median | 1
    for c in range(2):
        if min(cw, ch) >= k:
            # medianBlur with a large window needs uint8: 1/8 px steps, ±16 px range
            q = np.clip(res[..., c] * 8 + 128, 0, 255).astype(np.uint8)
            res[..., c] = (cv2.medianBlur(q, k).astype(np.float32) - 128) / 8
    res = np.clip(res, -p.parallax_max_px, p.parallax_max_px)
    model.dense = res
    return _remap(b, _upsample(centres.reshape(ch, cw, 2) + base + res, w, h))


def background_displacement(model: CameraModel, pts: np.ndarray, w: int, h: int) -> np.ndarray:
    """Where the background compensation sends each full-res point of A, minus the point: the
    camera model, plus the dense background flow's departure from it where one was added
    (frame B warped by it is what shifts are measured against)."""
    d = model_displacement(model, pts, w, h)
    if model.dense is None:
        return d
    ch, cw = model.dense.shape[:2]
    # cell centres lie at (i + 0.5) * w / cw - 0.5 (as _centres): bilinear between them
    gx = np.clip((pts[:, 0] + 0.5) * cw / w - 0.5, 0, cw - 1)
    gy = np.clip((pts[:, 1] + 0.5) * ch / h - 0.5, 0, ch - 1)
    x0, y0 = np.floor(gx).astype(int), np.floor(gy).astype(int)
    x1, y1 = np.minimum(x0 + 1, cw - 1), np.minimum(y0 + 1, ch - 1)
    fx, fy = (gx - x0)[:, None], (gy - y0)[:, None]
    m = model.dense
    return d + ((m[y0, x0] * (1 - fx) + m[y0, x1] * fx) * (1 - fy) + (m[y1, x0] * (1 - fx) + m[y1, x1] * fx) * fy)


def _epipolar_residual(res: np.ndarray, centres: np.ndarray, base: np.ndarray, F: np.ndarray, tol: float) -> np.ndarray:
    """The dense flow's departure from the camera model, without the cells a mover drags.
    A still scene point of any depth lands on the epipolar line of where it was; a cell
    whose flow lands further than `tol` px off that line follows someone's own motion (over
    textureless sky or a plain roof the DIS flow of a whole window follows a mover, and the
    median then explained the mover away: slow movers vanished, others lost up to
    parallax_max_px of their motion). Such cells carry the camera model's displacement (no
    residual) into the median. Only cells that far off: sliding every cell onto its line
    (measured) let more still boxes through, the fitted F being a few tenths of a px off."""
    ch, cw = res.shape[:2]
    p0 = centres.reshape(-1, 2).astype(np.float64)
    p1 = p0 + base.reshape(-1, 2) + res.reshape(-1, 2)
    lines = np.c_[p0, np.ones(len(p0))] @ F.T  # a x + b y + c = 0 in B
    off = np.abs((np.c_[p1, np.ones(len(p1))] * lines).sum(axis=1)) / np.maximum(
        np.hypot(lines[:, 0], lines[:, 1]), 1e-9
    )
    r = res.reshape(-1, 2).copy()
    r[off > tol] = 0.0
    return r.reshape(ch, cw, 2)


def _remap(img: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Bilinear resampling through fixed-point maps (1/32 px: far below the edge tolerance),
    faster than float maps at 1080p."""
    m1, m2 = cv2.convertMaps(m, None, cv2.CV_16SC2)  # type: ignore[call-overload]  # map2 may be None
    return cv2.remap(img, m1, m2, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
