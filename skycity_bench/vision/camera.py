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

import cv2
import numpy as np


@dataclass
class CameraParams:
    work_width: int = 960           # feature tracking resolution (px)
    max_features: int = 900
    ransac_px: float = 1.5          # RANSAC reprojection threshold, full-res px
    fb_max_px: float = 0.6          # forward–backward disagreement that rejects a track (work px)
    mesh_cols: int = 16
    mesh_rows: int = 9
    mesh_min_tracks: int = 5        # tracks a node needs to trust its own median
    mesh_min_px: float = 0.3        # below this largest residual the mesh is dropped
    parallax_px: float = 0.25       # median track error after the mesh above which a dense
                                    # background flow is added (strong parallax)
    dense_cell: int = 4             # work px per cell of the background flow
    dense_median: int = 15          # cells in its median window (objects smaller vanish from it)
    parallax_max_px: float = 2.0    # most the background flow may depart from the mesh (full-res px)


@dataclass
class CameraModel:
    """Maps a pixel of frame A to where the same static scene point is in frame B."""

    H: np.ndarray                                   # 3x3, full-res A -> B
    mesh: np.ndarray | None = None                  # (rows, cols, 2) residual dx, dy (full-res px)
    kind: str = "identity"                          # identity | homography | mesh
    tracks: int = 0
    inliers: int = 0
    residual_px: float = 0.0                        # median |error| of tracks after the model
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        H = self.H / self.H[2, 2]
        return {"kind": self.kind, "tracks": self.tracks, "inliers": self.inliers,
                "residual_px": round(float(self.residual_px), 3),
                "translation_px": [round(float(H[0, 2]), 2), round(float(H[1, 2]), 2)],
                "scale": round(float(np.sqrt(abs(np.linalg.det(H[:2, :2])))), 4),
                "mesh_max_px": None if self.mesh is None else round(float(np.abs(self.mesh).max()), 2),
                "notes": self.notes}


def _gray_small(img: np.ndarray, scale: float) -> np.ndarray:
    g = img if img.ndim == 2 else cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    if scale == 1.0:
        return g
    return cv2.resize(g, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)


def _mesh(pts: np.ndarray, res: np.ndarray, w: int, h: int, p: CameraParams) -> np.ndarray:
    """Median residual around each node; empty nodes filled from neighbours; then a 3x3
    median across nodes removes a node captured by a group of movers."""
    cw, ch = w / p.mesh_cols, h / p.mesh_rows
    grid = np.full((p.mesh_rows, p.mesh_cols, 2), np.nan, np.float32)
    cx = np.clip((pts[:, 0] / cw).astype(int), 0, p.mesh_cols - 1)
    cy = np.clip((pts[:, 1] / ch).astype(int), 0, p.mesh_rows - 1)
    for r in range(p.mesh_rows):
        near_r = np.abs(cy - r) <= 1
        for c in range(p.mesh_cols):
            sel = near_r & (np.abs(cx - c) <= 1)
            if sel.sum() >= p.mesh_min_tracks:
                grid[r, c] = np.median(res[sel], axis=0)
    missing = np.isnan(grid[..., 0])
    if missing.all():
        return np.zeros_like(grid)
    for _ in range(max(p.mesh_rows, p.mesh_cols)):
        if not missing.any():
            break
        pad = np.pad(grid, ((1, 1), (1, 1), (0, 0)), constant_values=np.nan)
        stack = np.stack([pad[1 + dy:1 + dy + p.mesh_rows, 1 + dx:1 + dx + p.mesh_cols]
                          for dy in (-1, 0, 1) for dx in (-1, 0, 1)])
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
    return ((m[y0, x0] * (1 - fx) + m[y0, x1] * fx) * (1 - fy) + (m[y1, x0] * (1 - fx) + m[y1, x1] * fx) * fy)


def estimate(a: np.ndarray, b: np.ndarray, p: CameraParams | None = None) -> CameraModel:
    p = p or CameraParams()
    h, w = a.shape[:2]
    scale = min(1.0, p.work_width / w)
    ga, gb = _gray_small(a, scale), _gray_small(b, scale)
    ident = CameraModel(H=np.eye(3))
    pts = cv2.goodFeaturesToTrack(ga, maxCorners=p.max_features, qualityLevel=0.005,
                                  minDistance=max(4, int(ga.shape[1] / 100)), blockSize=5)
    if pts is None or len(pts) < 8:
        ident.notes.append("too few corners in the scene to track the camera: assumed still")
        return ident
    lk = dict(winSize=(21, 21), maxLevel=3, criteria=(cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 20, 0.03))
    p1, st, _ = cv2.calcOpticalFlowPyrLK(ga, gb, pts, None, **lk)
    p0r, st2, _ = cv2.calcOpticalFlowPyrLK(gb, ga, p1, None, **lk)
    fb = np.linalg.norm((p0r - pts).reshape(-1, 2), axis=1)
    good = (st.ravel() == 1) & (st2.ravel() == 1) & (fb < p.fb_max_px)
    q0 = pts.reshape(-1, 2)[good] / scale
    q1 = p1.reshape(-1, 2)[good] / scale
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
    # parallax (spatially coherent), the node medians ignore the scattered movers.
    mesh = _mesh(q0, res, w, h, p)
    if np.abs(mesh).max() >= p.mesh_min_px:
        model.mesh, model.kind = mesh, "mesh"
        err = np.linalg.norm(res - mesh_at(model, q0, w, h), axis=1)
    model.residual_px = float(np.median(err))
    return model


def warp_to_a(b: np.ndarray, model: CameraModel, shape: tuple[int, int], step: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """Frame B resampled into A's pixel grid (so static scene points line up), and the mask of
    A pixels whose source lies inside B. The map is computed on a coarse grid and upsampled:
    a homography plus a smooth mesh is linear enough over `step` pixels."""
    h, w = shape
    gw, gh = -(-w // step), -(-h // step)
    # cv2.resize aligns pixel centres: coarse node i must sit at (i + 0.5) * step - 0.5 for
    # the upsampled map to be exact at every full-res pixel.
    xs = (np.arange(gw, dtype=np.float64) + 0.5) * step - 0.5
    ys = (np.arange(gh, dtype=np.float64) + 0.5) * step - 0.5
    X, Y = np.meshgrid(xs, ys)
    pts = np.stack([X.ravel(), Y.ravel()], axis=1)
    dst = _apply(model.H, pts) + mesh_at(model, pts, w, h)
    mx = dst[:, 0].reshape(gh, gw).astype(np.float32)
    my = dst[:, 1].reshape(gh, gw).astype(np.float32)
    mx = cv2.resize(mx, (gw * step, gh * step), interpolation=cv2.INTER_LINEAR)[:h, :w]
    my = cv2.resize(my, (gw * step, gh * step), interpolation=cv2.INTER_LINEAR)[:h, :w]
    warped = cv2.remap(b, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    valid = ((mx >= 0) & (mx <= b.shape[1] - 1) & (my >= 0) & (my <= b.shape[0] - 1)).astype(np.uint8)
    return warped, valid


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
    s = min(1.0, p.work_width / w)
    ga, gb = _gray_small(a, s), _gray_small(b, s)
    flow = cv2.DISOpticalFlow_create(cv2.DISOPTICAL_FLOW_PRESET_FAST).calc(ga, gb, None)
    cw, ch = max(1, flow.shape[1] // p.dense_cell), max(1, flow.shape[0] // p.dense_cell)
    small = cv2.resize(flow, (cw, ch), interpolation=cv2.INTER_AREA) / s          # full-res px
    X, Y = np.meshgrid((np.arange(cw) + 0.5) * w / cw - 0.5, (np.arange(ch) + 0.5) * h / ch - 0.5)
    base = model_displacement(model, np.stack([X.ravel(), Y.ravel()], 1), w, h).reshape(ch, cw, 2).astype(np.float32)
    res = small - base
    k = p.dense_median | 1
    for c in range(2):
        if min(cw, ch) >= k:
            # medianBlur with a large window needs uint8: 1/8 px steps, ±16 px range
            q = np.clip(res[..., c] * 8 + 128, 0, 255).astype(np.uint8)
            res[..., c] = (cv2.medianBlur(q, k).astype(np.float32) - 128) / 8
    res = np.clip(res, -p.parallax_max_px, p.parallax_max_px)
    full = cv2.resize(base + res, (w, h), interpolation=cv2.INTER_LINEAR)
    gx, gy = np.meshgrid(np.arange(w, dtype=np.float32), np.arange(h, dtype=np.float32))
    return cv2.remap(b, gx + full[..., 0], gy + full[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
