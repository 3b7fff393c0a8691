"""Pixels for the shop probe: WCAG contrast, contrast measured on a screenshot where computed
styles cannot tell (text over a canvas, a gradient, a filter), small evidence crops, the
changed regions across a hover (a card drawn on a canvas has no DOM card to read) and the
patch tracked under a following pointer. Figures only: the scorer judges them.

Pure functions on BGR uint8 arrays in CSS pixels (DemoPage.frame()), unit-tested without a
browser.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2
import numpy as np


def rel_luminance(rgb) -> float:
    """WCAG 2.x relative luminance of an sRGB colour given as 0–255 components."""
    c = np.asarray(rgb[:3], float) / 255.0
    lin = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return float(0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2])


def contrast_ratio(fg, bg) -> float:
    """WCAG contrast ratio (L1 + 0.05) / (L2 + 0.05), 1..21."""
    a, b = rel_luminance(fg), rel_luminance(bg)
    hi, lo = max(a, b), min(a, b)
    return (hi + 0.05) / (lo + 0.05)


def composite(fg_rgba, alpha: float, bg_rgb) -> list[float]:
    """A text colour with its own alpha (times the opacity of its ancestors) over its backdrop."""
    a = (fg_rgba[3] if len(fg_rgba) > 3 else 1.0) * alpha
    return [fg_rgba[i] * a + bg_rgb[i] * (1 - a) for i in range(3)]


def _clip(img: np.ndarray, rect) -> tuple[int, int, int, int] | None:
    h, w = img.shape[:2]
    x0, y0 = max(0, int(np.floor(rect[0]))), max(0, int(np.floor(rect[1])))
    x1, y1 = min(w, int(np.ceil(rect[0] + rect[2]))), min(h, int(np.ceil(rect[1] + rect[3])))
    if x1 - x0 < 2 or y1 - y0 < 2:
        return None
    return x0, y0, x1, y1


def pixel_contrast(img: np.ndarray, rect) -> dict | None:
    """Contrast of text inside `rect` measured on the screenshot: the backdrop is the median
    colour of the box's outer ring of pixels, the text colour the median of the 8 % of pixels
    furthest from it (glyph cores, not their anti-aliased edges)."""
    box = _clip(img, rect)
    if box is None:
        return None
    x0, y0, x1, y1 = box
    patch = img[y0:y1, x0:x1].reshape(-1, 3).astype(float)
    ring = np.concatenate([img[y0, x0:x1], img[y1 - 1, x0:x1], img[y0:y1, x0], img[y0:y1, x1 - 1]]).astype(float)
    bg = np.median(ring, axis=0)
    d = np.linalg.norm(patch - bg, axis=1)
    k = max(1, int(len(d) * 0.08))
    fg = np.median(patch[np.argsort(d)[-k:]], axis=0)
    # BGR -> RGB
    fg_rgb, bg_rgb = fg[::-1].tolist(), bg[::-1].tolist()
    return {
        "ratio": round(contrast_ratio(fg_rgb, bg_rgb), 2),
        "fg": [round(v) for v in fg_rgb],
        "bg": [round(v) for v in bg_rgb],
        "method": "pixels",
    }


def crop_box(
    rects: list, size: tuple[int, int], *, pad: int = 24, mark: tuple[float, float] | None = None
) -> list[int] | None:
    """[x, y, w, h] around `rects` (and a marked point) padded by `pad`, inside a frame of
    `size` (w, h); None when nothing or less than 4 px remains. What a grab and a saved crop
    both cover."""
    w, h = size
    xs, ys = [], []
    for r in rects:
        xs += [r[0], r[0] + r[2]]
        ys += [r[1], r[1] + r[3]]
    if mark is not None:
        xs += [mark[0] - 20, mark[0] + 20]
        ys += [mark[1] - 20, mark[1] + 20]
    if not xs:
        return None
    x0, y0 = max(0, int(min(xs)) - pad), max(0, int(min(ys)) - pad)
    x1, y1 = min(w, int(max(xs)) + pad), min(h, int(max(ys)) + pad)
    return [x0, y0, x1 - x0, y1 - y0] if x1 - x0 >= 4 and y1 - y0 >= 4 else None


def save_crop(
    img: np.ndarray,
    rects: list,
    path: Path,
    *,
    pad: int = 24,
    max_px: int = 480,
    mark: tuple[float, float] | None = None,
) -> list[int] | None:
    """Write a small PNG of the region around `rects` (and the marked point, drawn as a ring),
    downscaled so its longer side is at most `max_px`. Returns the crop box in CSS px."""
    h, w = img.shape[:2]
    box = crop_box(rects, (w, h), pad=pad, mark=mark)
    if box is None:
        return None
    x0, y0, x1, y1 = box[0], box[1], box[0] + box[2], box[1] + box[3]
    crop = img[y0:y1, x0:x1].copy()
    if mark is not None:
        cv2.circle(crop, (int(mark[0]) - x0, int(mark[1]) - y0), 10, (0, 0, 255), 2)
    s = min(1.0, max_px / max(crop.shape[:2]))
    if s < 1:
        crop = cv2.resize(
            crop, (max(1, int(crop.shape[1] * s)), max(1, int(crop.shape[0] * s))), interpolation=cv2.INTER_AREA
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), crop)
    return box


def changed_blob(a: np.ndarray, b: np.ndarray, *, level: int) -> dict:
    """The largest compact region that differs between two frames (pixels whose channels
    differ by more than `level`, small gaps closed): its box, area and fill share, and the
    share of all pixels that changed. Raw figures: a card drawn on a canvas shows as one
    large, well-filled box, traffic and camera drift as thin edges and specks, but which is
    which the scorer decides (scorers/shops.py)."""
    d = cv2.absdiff(a, b).max(axis=2)
    mask = (d > level).astype(np.uint8)
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
    n, _, st, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    best: dict[str, Any] = {"area": 0, "rect": None, "fill": 0.0, "changed_share": round(float(mask.mean()), 4)}
    for i in range(1, n):
        x, y, w, h, area = st[i]
        if area > best["area"]:
            best = {
                "area": int(area),
                "rect": [int(x), int(y), int(w), int(h)],
                "fill": round(area / float(w * h), 3),
                "changed_share": best["changed_share"],
            }
    return best


def canvas_change_figures(before: np.ndarray, control: np.ndarray, hovered: np.ndarray, *, level: int) -> dict:
    """What changed across the hover (control -> hovered) and what changed across an equal
    stretch without it (before -> control, scene motion alone): the two changed_blob()
    records, `across_hover` and `scene_motion`. The scorer judges whether the hover drew a
    card (scorers/shops.py, canvas_card_like)."""
    return {
        "scene_motion": changed_blob(before, control, level=level),
        "across_hover": changed_blob(control, hovered, level=level),
        "diff_level": level,
    }


def patch_at(img: np.ndarray, origin, point, half: int) -> tuple[np.ndarray, tuple[float, float]] | None:
    """The (2*half+1)² grey patch of `img` (a grab whose top-left is `origin` in viewport px)
    centred on the pixel nearest `point`, and the sub-pixel part of `point` that rounding
    dropped (so a later match can put the point back where it was inside the patch)."""
    cx, cy = point[0] - origin[0], point[1] - origin[1]
    ix, iy = int(round(cx)), int(round(cy))
    h, w = img.shape[:2]
    if ix - half < 0 or iy - half < 0 or ix + half + 1 > w or iy + half + 1 > h:
        return None
    grey = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY) if img.ndim == 3 else img
    return grey[iy - half : iy + half + 1, ix - half : ix + half + 1].copy(), (cx - ix, cy - iy)


def _peak(v_m: float, v_0: float, v_p: float) -> float:
    """Sub-pixel offset of a peak from three samples around it (parabola through them)."""
    v_m, v_0, v_p = float(v_m), float(v_0), float(v_p)
    d = v_m - 2 * v_0 + v_p
    return 0.0 if abs(d) < 1e-9 else max(-0.5, min(0.5, 0.5 * (v_m - v_p) / d))


def follow_residual(
    prev: tuple[np.ndarray, tuple[float, float]], prev_point, img: np.ndarray, origin, hook_now
) -> dict | None:
    """Where the look of the previous step's hook point went, against where the hook says it
    is now. `prev` is patch_at() of the previous frame around the previous hook point; `img`
    the new grab (top-left `origin`), which must contain the patch's whole search area.

    Returns raw figures only: `residual` [dx, dy] = (where the pixels went) - (where the hook
    says), the match `score` (normalised cross-correlation, 1 = identical) and the patch's
    `texture` (grey-level standard deviation: a flat patch matches anywhere)."""
    patch, frac = prev
    half = patch.shape[0] // 2
    grey = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY) if img.ndim == 3 else img
    if grey.shape[0] < patch.shape[0] + 2 or grey.shape[1] < patch.shape[1] + 2:
        return None
    texture = float(patch.std())
    if texture < 1e-6:
        return {"residual": None, "score": None, "texture": 0.0}
    res = cv2.matchTemplate(grey, patch, cv2.TM_CCOEFF_NORMED)
    _, score, _, (mx, my) = cv2.minMaxLoc(res)
    sx = _peak(res[my, mx - 1], res[my, mx], res[my, mx + 1]) if 0 < mx < res.shape[1] - 1 else 0.0
    sy = _peak(res[my - 1, mx], res[my, mx], res[my + 1, mx]) if 0 < my < res.shape[0] - 1 else 0.0
    # the previous hook point sits at (half + frac) inside the patch
    px = float(origin[0] + mx + sx + half + frac[0])
    py = float(origin[1] + my + sy + half + frac[1])
    return {
        "residual": [round(px - hook_now[0], 2), round(py - hook_now[1], 2)],
        "score": round(float(score), 3),
        "texture": round(texture, 1),
        "moved": [round(px - prev_point[0], 2), round(py - prev_point[1], 2)],
    }
