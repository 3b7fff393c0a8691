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


def travel_stats(masks: list[np.ndarray], link_px: int) -> dict:
    """How far a change travelled across consecutive frames: what tells one mover in a
    sparse scene from a spinner, a blinking caret or a ticking counter.

    `masks[k]` is what changed between frame k and k+1; a spot is a connected part of all
    the pairs' changes (gaps up to `link_px` joined: probes.playback.travel_link_px). A thing that changes in place (a spinner
    turning, a caret blinking, digits of a timer) is one spot that changes in pair after pair.
    A mover changes where it was and where it now is: a slow one leaves one long spot, a fast
    one a spot per position, each changing in the two pairs around its frame, and spots of
    that kind that change in the same pair are joined into one place (its way). Travel is a
    place's extent (the longer side of its box) minus the largest extent one pair changed
    inside it: about zero for anything that changes in place, the distance covered between
    the second and the last frame for a mover. The place that travelled furthest is reported."""
    if not masks:
        return {"travel_px": 0, "extent_px": 0, "places": 0, "bbox": None}
    union = np.zeros(masks[0].shape, np.uint8)
    for m in masks:
        union |= m.astype(np.uint8)
    k = cv2.getStructuringElement(cv2.MORPH_RECT, (2 * link_px + 1, 2 * link_px + 1))
    n, labels = cv2.connectedComponents(cv2.dilate(union, k), connectivity=8)
    place_of = _places(labels, n, masks)
    places = place_of[labels]  # each pixel's place (0: none)
    ids = sorted(set(place_of[1:].tolist()))
    best: tuple[int, int, list[int] | None] = (0, 0, None)  # travel, extent, box
    for g in ids:
        region = places == g
        whole = _extent(union.astype(bool) & region)
        single = max(_extent(m & region) for m in masks)
        if best[2] is None or whole - single > best[0]:
            ys, xs = np.nonzero(region)
            box = [int(xs.min()), int(ys.min()), int(xs.max() - xs.min()) + 1, int(ys.max() - ys.min()) + 1]
            best = (whole - single, whole, box)
    return {"travel_px": best[0], "extent_px": best[1], "places": len(ids), "bbox": best[2]}


def _places(labels: np.ndarray, n: int, masks: list[np.ndarray]) -> np.ndarray:
    """Per spot label, its place: spots that change in at most two pairs (a fast mover's
    positions) are joined when they change in the same pair (union-find); a spot that changes
    in more pairs changes in place, or is a slow mover's whole trail, and stays on its own."""
    touched = [[int(v) for v in np.unique(labels[m]) if v] for m in masks]
    seen = np.zeros(n, np.int32)
    for t in touched:
        seen[t] += 1
    parent = list(range(n))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for t in touched:
        brief = [a for a in t if seen[a] <= 2]
        for a in brief[1:]:
            parent[root(a)] = root(brief[0])
    return np.array([root(i) for i in range(n)], dtype=np.int32)


def _extent(mask: np.ndarray) -> int:
    ys, xs = np.nonzero(mask)
    return 0 if xs.size == 0 else int(max(xs.max() - xs.min(), ys.max() - ys.min())) + 1


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
