"""Behaviour evidence for reviewers (density.behavior): from the verified objects of every
sample, their speeds, headings, routes and whether they move in lockstep (the rubric names
synchronised motion, 运动同步, as a failure). Pure: sample dicts in, a summary out.

Two sources, each used where it is trustworthy:
- speed and heading: the pixel displacement of each verified object's own image region
  against the compensated background between t and t + Δ (measured, camera removed);
- tracks, routes and lockstep: the hook's positions of verified objects, sample to sample
  (the hook locates; only objects whose own pixels moved are used).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np


def _find(parent: list[int], i: int) -> int:
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


def _groups(n: int, same: Callable[[int, int], bool]) -> list[list[int]]:
    parent = list(range(n))
    for i in range(n):
        for j in range(i + 1, n):
            if same(i, j):
                parent[_find(parent, i)] = _find(parent, j)
    out = defaultdict(list)
    for i in range(n):
        out[_find(parent, i)].append(i)
    return sorted(out.values(), key=len, reverse=True)


# Each verified object's hook positions by sample time.
_Tracks = dict[str, dict[float, tuple[float, float]]]


def _verified(
    samples: list[dict[str, Any]], delta_s: float
) -> tuple[dict[str, list[float]], list[float], _Tracks, dict[str, str]]:
    """From every sample's verified claims: each object's speeds (px/s, from its own pixel
    displacement), the headings of all that moved, each object's track and its category."""
    speeds: dict[str, list[float]] = defaultdict(list)
    headings: list[float] = []
    tracks: _Tracks = defaultdict(dict)
    cats: dict[str, str] = {}
    for s in samples:
        for c in s.get("claims") or []:
            if c.get("verdict") != "moved":
                continue
            cid = c["id"]
            cats[cid] = c.get("category", "?")
            tracks[cid][s["t"]] = (c["x"], c["y"])
            if "dx" in c and delta_s > 0:
                v = math.hypot(c["dx"], c["dy"]) / delta_s
                speeds[cid].append(v)
                if v > 0:
                    headings.append(math.degrees(math.atan2(c["dy"], c["dx"])) % 360)
    return speeds, headings, tracks, cats


def _speeds(per_obj: np.ndarray) -> dict[str, Any]:
    """The spread of the objects' median speeds and how many distinct speed levels they hold."""
    q = np.percentile(per_obj, [10, 50, 90])
    out: dict[str, Any] = {}
    out["speed_px_s"] = {
        "p10": round(float(q[0]), 1),
        "median": round(float(q[1]), 1),
        "p90": round(float(q[2]), 1),
        "min": round(float(per_obj.min()), 1),
        "max": round(float(per_obj.max()), 1),
        "cv": round(float(per_obj.std() / per_obj.mean()), 3) if per_obj.mean() > 0 else None,
    }
    # distinct speed levels: occupied bins 20 % wide on a log scale
    pos = per_obj[per_obj > 1]
    out["speed_levels"] = int(len(set(np.floor(np.log(pos) / math.log(1.2)).astype(int)))) if pos.size else 0
    return out


def _lockstep(ids: list[str], tracks: _Tracks, lockstep_px_s: float, min_common: int) -> dict[str, Any]:
    """Groups of objects whose velocities (from the hook's positions one sample to the next)
    agree within `lockstep_px_s` at every one of at least `min_common` common samples."""
    vel: dict[str, dict[float, tuple[float, float]]] = {i: {} for i in ids}
    for i in ids:
        ts = sorted(tracks[i])
        for a, b in zip(ts, ts[1:]):
            (xa, ya), (xb, yb) = tracks[i][a], tracks[i][b]
            vel[i][a] = ((xb - xa) / (b - a), (yb - ya) / (b - a))

    def lock(i: int, j: int) -> bool:
        common = set(vel[ids[i]]) & set(vel[ids[j]])
        if len(common) < min_common:
            return False
        for t in common:
            (ax, ay), (bx, by) = vel[ids[i]][t], vel[ids[j]][t]
            if math.hypot(ax - bx, ay - by) > lockstep_px_s or math.hypot(ax, ay) < lockstep_px_s:
                return False
        return True

    groups = [g for g in _groups(len(ids), lock) if len(g) >= 2] if len(ids) <= 400 else []
    in_lock = sum(len(g) for g in groups)
    return {
        "groups": len(groups),
        "largest_group": max((len(g) for g in groups), default=0),
        "objects_in_lockstep": in_lock,
        "share": round(in_lock / len(ids), 3) if ids else None,
        "example_ids": [[ids[k] for k in g[:6]] for g in groups[:3]],
        "tolerance_px_s": lockstep_px_s,
    }


def summarise(
    samples: list[dict[str, Any]],
    delta_s: float,
    lockstep_px_s: float = 8.0,
    min_common: int = 3,
    route_px: float = 30.0,
) -> dict[str, Any]:
    """The behaviour summary: objects tracked, their speeds and speed levels, heading
    sectors and distinct directions, lockstep groups, distinct routes and categories."""
    speeds, headings, tracks, cats = _verified(samples, delta_s)
    per_obj = np.array([float(np.median(v)) for v in speeds.values()]) if speeds else np.array([])
    out: dict[str, Any] = {"objects_tracked": len(tracks), "objects_with_speed": int(per_obj.size)}
    if per_obj.size:
        out.update(_speeds(per_obj))
    sectors = np.zeros(8, int)
    for h in headings:
        sectors[int(((h + 22.5) % 360) // 45)] += 1
    out["heading_sectors"] = sectors.tolist()  # E, SE, S, SW, W, NW, N, NE (screen y down)
    out["distinct_directions"] = int((sectors >= max(1, 0.05 * sectors.sum())).sum()) if sectors.sum() else 0
    ids = [i for i in tracks if len(tracks[i]) >= 2]
    out["lockstep"] = _lockstep(ids, tracks, lockstep_px_s, min_common)
    pts = [np.array(list(tracks[i].values()), float) for i in ids]

    def same_route(i: int, j: int) -> bool:
        d = np.linalg.norm(pts[i][:, None] - pts[j][None], axis=2)
        return bool(0.5 * (d.min(axis=1).mean() + d.min(axis=0).mean()) < route_px)

    out["distinct_routes"] = len(_groups(len(ids), same_route)) if 0 < len(ids) <= 400 else len(ids)
    out["synchronised"] = bool(ids) and (out["lockstep"]["share"] or 0) >= 0.5
    out["categories"] = dict(sorted(Counter(cats.values()).items()))
    return out


def tracks_for_plot(samples: list[dict[str, Any]]) -> dict[str, list[tuple[float, float, float]]]:
    tr: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    for s in samples:
        for c in s.get("claims") or []:
            if c.get("verdict") == "moved":
                tr[c["id"]].append((s["t"], c["x"], c["y"]))
    return tr
