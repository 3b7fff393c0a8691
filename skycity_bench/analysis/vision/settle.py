"""Claims no pair verified, settled over the longest baseline (vision/analyse.py calls this
last): each rejection says why and over how long a time, or the claim stays *undecided*.

Why: one pair over 0.1 s cannot tell a small, slow mover (a 4 x 7 px car at 10 px/s moves
1 px) from a still thing, nor a covered object from one drawn fixed to the screen. First
the scene's own account, where the locator is the three.js scene graph (scene_graph.js):
a claim is *covered* when rays from the camera to several points of its box (RAYS_MIN_ON or
more on it) all met something nearer, and *still on screen* when it is fixed to the camera
(it moves in the world, its place in the camera's frame stands). Else, before a
claim is called static, the frames the longest pair spans (t ± long_frames, 1 s at 60 Hz)
are asked: over that time
  - nothing changed on screen in its box (raw frames): it is *covered* when its claimed box
    moved on screen meanwhile at least min_speed_px_s (the locator's own claims at t ± the
    baseline, matched by id), else *still on screen* (fixed to the screen, or moving too
    little to see: a car creeping in a jam);
  - its box's content stayed in place once the camera's motion is removed: *static*;
  - its box changed, yet no shift of its own content explained it (every pair before
    failed): *undecided*. The bench could neither confirm nor reject it; when many claims
    are undecided, density.count goes to review (scorers/density.py), never to a
    confident count.
Every claim that holds gets `baseline_s` too: the length of the pair that verified it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from skycity_bench.analysis.vision.camera_estimate import CameraModel, epipolar_px, model_displacement
from skycity_bench.analysis.vision.recheck import _tight
from skycity_bench.analysis.vision.verify import (
    Shift,
    VerifyParams,
    _gray,
    _overlaps_enough,
    _rms,
    _search,
    _subpixel,
)

# --------------------------------------------------------------------------- the track
# Why: a small mover's content, searched over the whole search radius in a pair a second
# long, matches a twin (an identical car in a jam, a window in a grid) as well as itself, so
# no longer pair confirmed it. Its track is followed instead: from its shift over Δ (too
# small to count, but unique and fitting), frame by frame outwards (t ± 6, 15, 30, 60
# frames, before t and after it), each search only a few px around where the speed so far
# puts it. It moved on its own when the track holds through every pair of one side up to
# TRACK_MIN_FRAMES or more (0.5 s: the time a viewer needs), at an own speed of at least min_speed_px_s there (a car turning a corner or passing
# another holds on one side only), the two sides mirror each other as far as both hold (a
# mover's own motion reverses with time; a static thing's compensation error need not), and
# (3D: a fitted F) the long end lies off its epipolar line. A still thing never starts a
# track: in place its content fits (fit 1), and the first search is only a few px wide.


# The shortest track that shows own motion: half a second at 60 Hz, the time a viewer needs
# to see a small slow mover move (a 4 x 7 px car at 10 px/s moves 5 px).
TRACK_MIN_FRAMES = 30


@dataclass
class TrackPair:
    """Frame at t + k (k signed), compensated into A by the camera model alone (gray), as
    captured, and that model."""

    frames: int
    gray: np.ndarray
    raw: np.ndarray
    model: CameraModel


def _shift_near(
    ga: np.ndarray, gb: np.ndarray, box: tuple[int, int, int, int], pred: tuple[float, float], radius: int
) -> Shift | None:
    """Where the content of `box` in A is in B, searched within `radius` px of `pred`."""
    x0, y0, x1, y1 = box
    H, W = ga.shape[:2]
    if x1 - x0 < 3 or y1 - y0 < 3:
        return None
    tpl = ga[y0:y1, x0:x1]
    e_in = (gb[y0:y1, x0:x1].astype(np.float32) - tpl) ** 2
    zero = float(e_in.sum())
    got = _search(tpl, gb, x0 + int(round(pred[0])), y0 + int(round(pred[1])), radius)
    if got is None:
        return None
    res, sx0, sy0 = got
    _, _, loc, _ = cv2.minMaxLoc(res)
    fx, fy = _subpixel(res, *loc)
    ix, iy = sx0 + loc[0], sy0 + loc[1]
    if not (0 <= ix <= W - (x1 - x0) and 0 <= iy <= H - (y1 - y0)):
        return None
    e_sh = (gb[iy : iy + (y1 - y0), ix : ix + (x1 - x0)].astype(np.float32) - tpl) ** 2
    twin = float(((ga[iy : iy + (y1 - y0), ix : ix + (x1 - x0)].astype(np.float32) - tpl) ** 2).sum())
    lo = float(e_sh.sum())
    return Shift(
        dx=ix + fx - x0,
        dy=iy + fy - y0,
        rms_in_place=math.sqrt(zero / tpl.size),
        fit=float(np.minimum(e_in, e_sh).sum()) / zero if zero > 0 else 1.0,
        textured=float(tpl.std()) >= 6.0,
        twin=(twin - lo) / (zero - lo) if zero > lo else 1.0,
    )


def _follow(
    ga: np.ndarray, box: tuple[int, int, int, int], v: tuple[float, float], side: list[TrackPair], p: VerifyParams
) -> list[tuple[TrackPair, Shift]]:
    """The track of `box` through the pairs of one side of t (nearest first), starting at
    velocity `v` (px per frame), each step searched around where the velocity so far puts it;
    up to the first step that does not hold."""
    out: list[tuple[TrackPair, Shift]] = []
    for pr in side:
        pred = (v[0] * pr.frames, v[1] * pr.frames)
        radius = max(3, int(math.ceil(0.35 * math.hypot(*pred))))
        s = _shift_near(ga, pr.gray, box, pred, radius)
        if not (
            s is not None
            and s.textured
            and s.rms_in_place >= p.still_rms
            and s.fit <= p.shift_fit
            and s.twin >= p.twin_min
        ):
            break
        out.append((pr, s))
        v = (s.dx / pr.frames, s.dy / pr.frames)
    return out


def _track_holds(
    rec: dict[str, Any],
    a: np.ndarray,
    back: list[tuple[TrackPair, Shift]],
    fwd: list[tuple[TrackPair, Shift]],
    longest: int,
    p: VerifyParams,
) -> bool:
    """One side of the track reaches half a second or more (every step of it held),
    fast enough there; where the other side holds too, the two mirror each other at the furthest step
    both reach; and (3D) the longest end lies off its epipolar line."""
    # a side that held through every pair up to half a second or more
    far_side = [side[-1] for side in (back, fwd) if side and abs(side[-1][0].frames) >= TRACK_MIN_FRAMES]
    if not any(g[1].norm >= max(p.min_shift_px, p.min_speed_px_s * abs(g[0].frames) / 60) for g in far_side):
        return False
    if back and fwd:
        k = min(abs(back[-1][0].frames), fwd[-1][0].frames)
        sb = next((s for pr, s in back if -pr.frames == k), None)
        sa = next((s for pr, s in fwd if pr.frames == k), None)
        if sb is None or sa is None:
            return False
        if math.hypot(sa.dx + sb.dx, sa.dy + sb.dy) > p.mirror_px + p.mirror_frac * max(sa.norm, sb.norm):
            return False
    H, W = a.shape[:2]
    for pr, s in far_side:
        if pr.model.F is None:
            continue
        c0: np.ndarray = np.array([[rec["x"], rec["y"]]], np.float64)
        c1 = c0 + [[s.dx, s.dy]]
        off = epipolar_px(pr.model, c0, c1 + model_displacement(pr.model, c1, W, H))
        if off is None or float(off[0]) < p.far_epipolar_px:
            return False
    return True


def track_recheck(
    checked: list[dict[str, Any]], a: np.ndarray, pairs: Sequence[TrackPair], p: VerifyParams, primary_frames: int
) -> int:
    """Claims still without own motion whose shift over Δ was measured (too small to count,
    unique, fitting) followed outwards through `pairs` (see above). Updates the records in
    place; returns how many it turned into movers."""
    longest = max((abs(pr.frames) for pr in pairs), default=0)
    before = sorted((pr for pr in pairs if pr.frames < 0), key=lambda pr: -pr.frames)
    after = sorted((pr for pr in pairs if pr.frames > 0), key=lambda pr: pr.frames)
    ga = _gray(a)
    moved = [r for r in checked if r.get("verdict") == "moved" and "w" in r]
    turned = 0
    H, W = a.shape[:2]
    for rec in checked:
        if not (str(rec.get("verdict", "")).startswith(SETTLED) and "w" in rec):
            continue
        t = _tight(rec)
        box = (max(0, t[0]), max(0, t[1]), min(W, t[2]), min(H, t[3]))
        # each side starts still, searched a few px round the box (a mover over 30 px/s was
        # verified by the first pair), and follows the speed it finds
        fwd = _follow(ga, box, (0.0, 0.0), after, p)
        back = _follow(ga, box, (0.0, 0.0), before, p)
        if not _track_holds(rec, a, back, fwd, longest, p):
            continue
        if any(_overlaps_enough(t, _tight(o), p.borrow_overlap) for o in moved):
            continue  # riding on a verified claim: a part, or its motion borrowed
        reach = max(abs(side[-1][0].frames) for side in (back, fwd) if side)
        rec["verdict"], rec["how"] = "moved", f"track over {reach} frames"
        rec["baseline_s"] = round(reach / 60, 3)
        rec["track"] = [[pr.frames, round(s.dx, 2), round(s.dy, 2)] for pr, s in [*back[::-1], *fwd]]
        ends = [side[-1] for side in (back, fwd) if side]
        if max(s.fit for _, s in ends) <= p.speed_fit:
            # the displacement over Δ, forward in time, across the track's ends
            (k0, s0), (k1, s1) = (ends[0], ends[-1]) if len(ends) == 2 else ((None, None), ends[0])
            x0, y0, f0 = (s0.dx, s0.dy, k0.frames) if s0 is not None and k0 is not None else (0.0, 0.0, 0)
            k = primary_frames / (k1.frames - f0)
            rec["dx"], rec["dy"] = round((s1.dx - x0) * k, 2), round((s1.dy - y0) * k, 2)
        moved.append(rec)
        turned += 1
    return turned


# --------------------------------------------------------------------------- the claim's own account
# Why: a claimed node in a permanent jam creeps by a thousandth of a unit, so the scene graph
# claims it, while the camera moves it on screen with everything else; among identical
# neighbours a compensation error of a px, or a neighbour's copy, can pass any pixel test.
# The locator itself says where the object is at t ± the longest baseline: where its box
# moved only as the camera moves the background there (own motion under min_speed_px_s),
# the object stood still by the locator's own account, whatever the pixels matched.


def own_account(
    checked: list[dict[str, Any]],
    a: np.ndarray,
    pairs: Sequence[TrackPair],
    views_claims: dict[int, list[Any] | None] | None,
    p: VerifyParams,
) -> int:
    """Verified claims whose own motion on screen over the longest pairs, by the locator's
    positions there less the camera's motion, is under min_speed_px_s: their verdict says so.
    Returns how many were turned back."""
    if not views_claims or not p.min_speed_px_s:
        return 0
    H, W = a.shape[:2]
    by_k = {pr.frames: pr for pr in pairs}
    at = {
        k: {str(c.get("id")): c for c in cl if isinstance(c, dict)}
        for k, cl in views_claims.items()
        if cl and k in by_k
    }
    turned = 0
    for rec in checked:
        if rec.get("verdict") != "moved" or "x" not in rec:
            continue
        own = []
        for k, claims in at.items():
            c = claims.get(rec["id"])
            if not (
                isinstance(c, dict) and isinstance(c.get("x"), int | float) and isinstance(c.get("y"), int | float)
            ):
                continue
            p0: np.ndarray = np.array([[rec["x"], rec["y"]]], np.float64)
            cam = model_displacement(by_k[k].model, p0, W, H)[0]
            own.append((math.hypot(c["x"] - rec["x"] - cam[0], c["y"] - rec["y"] - cam[1]), abs(k) / 60))
        if own and all(d < p.min_speed_px_s * secs for d, secs in own):
            d, secs = max(own)
            rec["verdict"] = (
                f"still by its locator's own account: its claimed box moved {d:.1f} px in {secs:g} s beyond "
                f"what the camera moved there (under {p.min_speed_px_s:g} px/s), though the pixels matched "
                f"({rec.get('how')})"
            )
            rec["baseline_s"] = round(secs, 3)
            for key in ("dx", "dy"):
                rec.pop(key, None)
            turned += 1
    return turned


# --------------------------------------------------------------------------- settling
# The verdicts settled here keep the family "no own motion" (parts, specks, off-screen are
# final already), each saying which kind it is: the scorer counts the undecided ones.
SETTLED = ("no own motion",)
COVERED = "no own motion seen (covered)"
STILL = "no own motion (still on screen"
STATIC = "no own motion (static"
UNDECIDED = "no own motion (undecided"


def baseline_of(rec: dict[str, Any], primary_frames: int, view_frames: Sequence[int] = ()) -> float | None:
    """Seconds of the pair that verified a claim (its `how`), None for one not verified."""
    if rec.get("verdict") != "moved":
        return None
    if "pair_frames" in rec:
        return round(abs(rec["pair_frames"]) / 60, 3)
    how = str(rec.get("how", ""))
    if how.startswith("far pair"):
        return round(abs(int(how.split("±")[1].split()[0])) / 60, 3)
    if how.startswith("still point") and view_frames:
        return round(max(abs(k) for k in view_frames) / 60, 3)
    return round(primary_frames / 60, 3)


def _claimed_moved(rec: dict[str, Any], at: dict[int, dict[str, Any]]) -> float | None:
    """How far (px) the locator's box of this claim moved on screen between t and the views
    at ± the baseline (the larger), or None where neither view claims it."""
    d = [
        math.hypot(float(c["x"]) - rec["x"], float(c["y"]) - rec["y"])
        for c in (v.get(rec["id"]) for v in at.values())
        if isinstance(c, dict) and isinstance(c.get("x"), int | float) and isinstance(c.get("y"), int | float)
    ]
    return max(d) if d else None


def _median_change(ga: np.ndarray, gb: np.ndarray, t: tuple[int, int, int, int]) -> float:
    """The median gray change over a box (a mover passing over part of a still thing's box
    changes its RMS, not its median)."""
    H, W = ga.shape[:2]
    x0, y0, x1, y1 = max(0, t[0]), max(0, t[1]), min(W, t[2]), min(H, t[3])
    if x1 <= x0 or y1 <= y0:
        return 0.0
    return float(np.median(np.abs(ga[y0:y1, x0:x1].astype(np.int16) - gb[y0:y1, x0:x1])))


# A claim is covered by the scene only when rays reached it at this many points of its box or
# more and something nearer met every one of them (one point may be a lamp post before a car).
RAYS_MIN_ON = 2


def _rays(rec: dict[str, Any]) -> tuple[int, int, int] | None:
    """(points tested, points on the object, of them covered) of the locator's ray test at t
    (browser/js/scene_graph.js `rays`), or None where it made none."""
    r = rec.get("rays")
    if not isinstance(r, dict):
        return None
    got = tuple(r.get(k) for k in ("points", "on", "covered"))
    return got if all(isinstance(v, int) and v >= 0 for v in got) else None  # type: ignore[return-value]


def _by_the_scene(rec: dict[str, Any], moved: float | None, secs: float, p: VerifyParams) -> str | None:
    """The verdict the scene itself gives an unverified claim, before any pixel: covered when
    the rays found it behind something at every point on it; still on screen when it is fixed
    to the camera (it moves in the world, not on screen; its claimed box kept its place).
    None: the scene does not settle it."""
    r = _rays(rec)
    if r is not None and r[1] >= RAYS_MIN_ON and r[2] == r[1]:
        return f"{COVERED}: rays to {r[1]} points on it ({r[0]} tried) all met something nearer at t"
    if rec.get("fixed_to_camera") is True and (moved is None or moved < p.min_speed_px_s * secs):
        return (
            f"{STILL} over {secs:g} s): fixed to the camera: it moved in the world while its place in the "
            "camera's frame stood (not covered)"
        )
    return None


def _nothing_changed(rec: dict[str, Any], moved: float | None, secs: float, p: VerifyParams) -> str:
    """The verdict of a claim whose box did not change on screen over the longest pairs."""
    if moved is None or moved < p.min_speed_px_s * secs:
        return (
            f"{STILL} over {secs:g} s): nothing changed there and its claimed box "
            + ("stayed put" if moved is not None else "was not followed")
            + " (fixed to the screen, or moving too little to see)"
        )
    r = _rays(rec)
    seen = (
        f"; rays reached it unhindered at {r[1] - r[2]} of {r[1]} points on it: the page's own elements over "
        "the canvas cover it, or it is drawn unseen"
        if r is not None and r[1] > r[2]
        else ""
    )
    return f"{COVERED}: its claimed box moved {moved:.0f} px on screen in {secs:g} s, but nothing changed on screen there{seen}"


def _settle_one(
    rec: dict[str, Any],
    a: np.ndarray,
    ga: np.ndarray,
    pairs: Sequence[TrackPair],
    at: dict[int, dict[str, Any]],
    p: VerifyParams,
) -> None:
    """One unverified claim's final verdict over the longest pairs (see the module)."""
    H, W = a.shape[:2]
    t = _tight(rec)
    secs = max(abs(pr.frames) for pr in pairs) / 60
    rec["baseline_s"] = round(secs, 3)
    moved = _claimed_moved(rec, at)
    scene = _by_the_scene(rec, moved, secs, p)
    if scene is not None:
        rec["verdict"] = scene
        return
    if all(_rms(a, pr.raw, t, W, H) < p.still_rms for pr in pairs):
        rec["verdict"] = _nothing_changed(rec, moved, secs, p)
        return
    if any(_median_change(ga, pr.gray, t) < p.still_rms for pr in pairs):
        # most of its box unchanged at one end: it stayed; what changed there passed by
        rec["verdict"] = f"{STATIC} over {secs:g} s): its box's content stayed in place (camera removed)"
        return
    rec["verdict"] = (
        f"{UNDECIDED} over {secs:g} s): its box changed but no shift of its own content explained it "
        f"(the last test: {rec['verdict']})"
    )[:200]


def settle_claims(
    checked: list[dict[str, Any]],
    a: np.ndarray,
    pairs: Sequence[TrackPair],
    views_claims: dict[int, list[Any] | None] | None,
    p: VerifyParams,
) -> int:
    """`pairs`: the longest baseline's pairs, before and after t. `views_claims`: the locator's claims at t + k (by k), to see
    whether a claimed box moved on screen. Updates the records in place; returns how many
    claims stay undecided."""
    todo = [r for r in checked if str(r.get("verdict", "")).startswith(SETTLED) and "w" in r]
    if not todo or not pairs:
        return 0
    at = {
        k: {str(c.get("id")): c for c in cl if isinstance(c, dict)}
        for k, cl in (views_claims or {}).items()
        if cl and any(abs(k) == abs(pr.frames) for pr in pairs)
    }
    ga = _gray(a)
    for rec in todo:
        _settle_one(rec, a, ga, pairs, at, p)
    return sum(1 for r in checked if str(r.get("verdict", "")).startswith(UNDECIDED))
