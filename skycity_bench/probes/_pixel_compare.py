"""Pixel comparisons shared by the packaging, framing and playback probes (numpy/OpenCV only).

Probes compute these figures from screenshots and store the figures; scorers apply the
scenario's thresholds to them, so `rescore` can judge again without the frames.
"""

from __future__ import annotations

import cv2
import numpy as np

# A pixel "changed" when a channel moved by more than this many levels (0..255). Screenshot
# encoding is lossless PNG, so identical renders give 0; 24 ignores dithering and the faint
# anti-aliasing jitter some canvases show, and still sees a small object move.
CHANGE_LEVEL = 24


def changed_mask(a: np.ndarray, b: np.ndarray, level: int = CHANGE_LEVEL) -> np.ndarray:
    """Boolean HxW mask of pixels that differ between two BGR frames of the same size."""
    if a.shape != b.shape:
        h, w = min(a.shape[0], b.shape[0]), min(a.shape[1], b.shape[1])
        a, b = a[:h, :w], b[:h, :w]
    return cv2.absdiff(a, b).max(axis=2) > level


def change_stats(mask: np.ndarray, grid: tuple[int, int] = (16, 9), cell_share: float = 0.005) -> dict:
    """How much and how widely a frame changed: the changed share of all pixels, and how many
    cells of a cols x rows grid have more than `cell_share` of their pixels changed. The cell
    count is what tells a moving scene from a spinner: a spinner changes a lot of pixels in
    one or two cells, a scene changes pixels all over."""
    h, w = mask.shape
    cols, rows = grid
    cells = 0
    for r in range(rows):
        for c in range(cols):
            cell = mask[r * h // rows : (r + 1) * h // rows, c * w // cols : (c + 1) * w // cols]
            if cell.size and cell.mean() > cell_share:
                cells += 1
    ys, xs = np.nonzero(mask)
    bbox = None if xs.size == 0 else [int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1]
    return {"changed_share": round(float(mask.mean()), 6), "changed_cells": cells, "grid": [cols, rows], "bbox": bbox}


def _gray_small(img: np.ndarray, width: int) -> np.ndarray:
    g = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY) if img.ndim == 3 else img
    if g.shape[1] > width:
        g = cv2.resize(g, (width, round(g.shape[0] * width / g.shape[1])), interpolation=cv2.INTER_AREA)
    return g.astype(np.float64)


def ssim(a: np.ndarray, b: np.ndarray, width: int = 480, blocks: tuple[int, int] = (8, 6)) -> dict:
    """Structural similarity (Wang et al. 2004: 11x11 Gaussian window, sigma 1.5, K1 0.01,
    K2 0.03) of two frames, on grayscale copies scaled down to `width` px (a sub-pixel
    timing offset between two renders of the same instant is then invisible, a misplaced
    object is not).

    Returns the mean SSIM and the lowest mean SSIM of a cols x rows grid of blocks: the mean
    over a whole frame can hide a few objects in the wrong place, the worst block cannot."""
    x, y = _gray_small(a, width), _gray_small(b, width)
    if x.shape != y.shape:
        y = cv2.resize(y, (x.shape[1], x.shape[0]), interpolation=cv2.INTER_AREA)
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    blur = lambda m: cv2.GaussianBlur(m, (11, 11), 1.5)  # noqa: E731
    mx, my = blur(x), blur(y)
    sxx = blur(x * x) - mx * mx
    syy = blur(y * y) - my * my
    sxy = blur(x * y) - mx * my
    smap = ((2 * mx * my + c1) * (2 * sxy + c2)) / ((mx * mx + my * my + c1) * (sxx + syy + c2))
    h, w = smap.shape
    cols, rows = blocks
    worst = min(
        float(smap[r * h // rows : (r + 1) * h // rows, c * w // cols : (c + 1) * w // cols].mean())
        for r in range(rows)
        for c in range(cols)
    )
    return {"ssim": round(float(smap.mean()), 5), "worst_block": round(worst, 5)}


def outline(img: np.ndarray, boxes: list[dict], color=(0, 0, 255)) -> np.ndarray:
    """A copy of `img` with each box ({x, y, w, h, label}) outlined and labelled."""
    out = img.copy()
    for b in boxes:
        x, y = int(round(b["x"])), int(round(b["y"]))
        x2, y2 = int(round(b["x"] + b["w"])), int(round(b["y"] + b["h"]))
        cv2.rectangle(out, (x, y), (max(x, x2 - 1), max(y, y2 - 1)), color, 3)
        label = str(b.get("label", ""))[:40]
        if label:
            ty = y - 6 if y > 20 else min(out.shape[0] - 4, y2 + 16)
            cv2.putText(
                out,
                label.encode("ascii", "replace").decode(),
                (x + 2, ty),
                cv2.FONT_HERSHEY_SIMPLEX,
                0.5,
                color,
                1,
                cv2.LINE_AA,
            )
    return out
