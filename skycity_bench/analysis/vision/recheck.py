"""Claims the first pair (t, t + Δ) did not see move get more chances (vision/verify.py
verify_claims judged them first): the other pairs around t (recheck_claims) and, in a 3D
scene, the far pair t ± far_pair_frames (far_recheck). Called by vision/analyse.py
analyse_pair; the still-point test over the views comes last (vision/multiview.py)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from skycity_bench.analysis.vision.camera_estimate import (
    CameraModel,
    background_displacement,
    epipolar_px,
    model_displacement,
)
from skycity_bench.analysis.vision.verify import Shift, VerifyParams, _gray, _overlaps_enough, _rms, measure_shift

# --------------------------------------------------------------------------- more pairs
# Why: one pair (t, t + Δ) misses movers that, at that instant, move too little on screen
# against their background (a mover heading nearly at the camera, a slow one) or move with
# the camera (a mover flying the camera's way stays nearly still on screen while the city
# slides past it: on screen nothing changed, so the pair reads it as covered). The minimum
# over samples turns every such miss into a lower N. Frames before and after t, at several
# offsets, give each claim more chances to show its own motion; the guards stay: in another
# pair a claim holds only by its box's own content reappearing shifted and explaining the
# box (route b, never by a changed region that may be someone else's), and not when it
# moves with a verified claim that contains or overlaps it (a part, or a parked car a mover
# drives over).

RECHECKED = ("no own motion",)  # verdicts another pair may overturn (parts never)


@dataclass
class OtherPair:
    """Frame at t + k·(one frame) compensated into A (`bw`), and as captured (`raw`)."""

    frames: int  # k, signed: negative = before t
    bw: np.ndarray
    raw: np.ndarray
    scale: float  # |k| / the primary pair's frames: how much more motion to expect
    model: CameraModel | None = None  # the camera model fitted between A and this frame


def _tight(rec: dict[str, Any]) -> tuple[int, int, int, int]:
    x, y, w, h = rec["x"], rec["y"], rec["w"], rec["h"]
    return (int(round(x - w / 2)), int(round(y - h / 2)), int(round(x + w / 2)), int(round(y + h / 2)))


# A claim's shift in one pair, measured once (memoised per pair).
_ShiftOf = Callable[[dict[str, Any]], Shift | None]


def _shift_memo(
    ga: np.ndarray,
    gb: np.ndarray,
    half: tuple[np.ndarray, np.ndarray],
    radius: int,
    min_texture: float,
) -> _ShiftOf:
    """A claim's box content measured shifted from A into this pair's B, once per claim."""
    H, W = ga.shape[:2]
    shifts: dict[str, Shift | None] = {}

    def shift_of(rec: dict[str, Any]) -> Shift | None:
        key = rec["id"]
        if key not in shifts:
            t = _tight(rec)
            box = (max(0, t[0]), max(0, t[1]), min(W, t[2]), min(H, t[3]))
            shifts[key] = measure_shift(ga, gb, box, radius, min_texture, half)
        return shifts[key]

    return shift_of


def _explains_box(s: Shift | None, pr: OtherPair, p: VerifyParams) -> bool:
    """The box's own content reappears shifted in this pair, uniquely, textured, far enough
    for the pair's length, and the shift explains the box (route b)."""
    return (
        s is not None
        and s.unique
        and s.textured
        and s.rms_in_place >= p.still_rms
        and s.norm >= max(p.min_shift_px, p.other_shift_per_delta_px * pr.scale, p.min_speed_px_s * abs(pr.frames) / 60)
        and s.fit <= p.shift_fit
        and s.twin >= p.twin_min
    )


def _off_epipolar(pr: OtherPair, t: tuple[int, int, int, int], s: Shift, W: int, H: int) -> float | None:
    """Under parallax, in a pair longer than the primary one, how far the shifted box centre
    lands from its epipolar line (None: not measured). Over a longer time a still thing
    slides against what is behind it; a motion along its epipolar line could be that, one
    off it cannot. The shift was measured against B warped by the background flow: where
    the content is in B is where that warp sends the shifted point (the camera model alone
    left out the flow's departure, up to parallax_max_px x scale)."""
    if pr.model is None or getattr(pr.model, "F", None) is None or not pr.scale > 1:
        return None
    c0: np.ndarray = np.array([[(t[0] + t[2]) / 2, (t[1] + t[3]) / 2]], np.float64)
    c1 = c0 + [[s.dx, s.dy]]
    c1 = c1 + background_displacement(pr.model, c1, W, H)
    off = epipolar_px(pr.model, c0, c1)
    assert off is not None  # the model has an F
    return float(off[0])


def _moves_with_verified(
    t: tuple[int, int, int, int],
    s: Shift,
    moved: list[dict[str, Any]],
    shift_of: _ShiftOf,
    p: VerifyParams,
    scale: float,
) -> bool:
    """The claim moves with a verified claim it overlaps: a part of it, or its motion borrowed."""
    for o in moved:
        to = _tight(o)
        if not _overlaps_enough(t, to, p.borrow_overlap):
            continue
        so = shift_of(o)
        if so is None or math.hypot(s.dx - so.dx, s.dy - so.dy) < p.distinct_motion_px * max(1.0, scale):
            return True
    return False


def _mirrored(rec: dict[str, Any], pr: OtherPair, s: Shift, p: VerifyParams) -> Shift | None:
    """A longer pair: under parallax a still thing slides against its background further the
    longer the time, so one pair alone is not enough; the same motion must show before t and
    after it (a mover's own motion reverses with time; a compensation error need not). The
    shift of the pair on the other side of t when it mirrors this one, else None."""
    mirror: Shift | None = rec.setdefault("_long", {}).get(-pr.frames)
    rec["_long"][pr.frames] = s
    if mirror is None or math.hypot(s.dx + mirror.dx, s.dy + mirror.dy) > p.mirror_px + p.mirror_frac * max(
        s.norm, mirror.norm
    ):
        return None
    return mirror


def _turned_in_pair(
    rec: dict[str, Any],
    a: np.ndarray,
    pr: OtherPair,
    shift_of: _ShiftOf,
    moved: list[dict[str, Any]],
    p: VerifyParams,
    primary_frames: int,
) -> bool:
    """Whether this pair shows the claim's own motion; if so its record says moved, how, and
    (where the shift fits well) its displacement over the primary pair's Δ."""
    H, W = a.shape[:2]
    t = _tight(rec)
    if _rms(a, pr.raw, t, W, H) < p.still_rms:
        return False  # still nothing changed on screen there
    s = shift_of(rec)
    if not _explains_box(s, pr, p):
        return False
    assert s is not None
    epi = _off_epipolar(pr, t, s, W, H)
    if epi is not None and epi < p.epipolar_px:
        return False
    if _moves_with_verified(t, s, moved, shift_of, p, pr.scale):
        return False
    mirror = None
    if pr.scale > 1:
        mirror = _mirrored(rec, pr, s, p)
        if mirror is None:
            return False
    rec["verdict"], rec["how"] = "moved", f"shift {pr.frames:+d} frames"
    rec["pair_frames"] = pr.frames
    rec["baseline_s"] = round(abs(pr.frames) / 60, 3)
    rec["shift_other"] = {
        "frames": pr.frames,
        "dx": round(s.dx, 2),
        "dy": round(s.dy, 2),
        "fit": round(s.fit, 3),
        "twin": round(s.twin, 2),
    }
    if epi is not None:
        rec["shift_other"]["epipolar_px"] = round(epi, 2)
    if mirror is not None:
        rec["shift_other"]["mirror"] = [round(mirror.dx, 2), round(mirror.dy, 2)]
    if s.fit <= p.speed_fit:
        # the displacement over this pair, as over the primary pair's Δ, forward in time
        k = primary_frames / pr.frames
        rec["dx"], rec["dy"] = round(s.dx * k, 2), round(s.dy * k, 2)
    return True


def recheck_claims(
    out: list[dict[str, Any]],
    a: np.ndarray,
    pairs: Iterable[OtherPair],
    p: VerifyParams | None = None,
    primary_frames: int = 6,
) -> int:
    """Give every claim that failed for want of own motion in the primary pair another
    chance in each of `pairs` (OtherPair, in order; an iterable, so a pair nobody needs is never
    compensated). Updates `out` (verify_claims' records) in place;
    returns how many claims it turned into movers."""
    p = p or VerifyParams()
    todo = [r for r in out if str(r.get("verdict", "")).startswith(RECHECKED) and "w" in r]
    if not todo:
        return 0
    ga = _gray(a)
    half_a = cv2.pyrDown(ga)
    turned = 0
    for pr in pairs:
        gb = _gray(pr.bw)
        half = (half_a, cv2.pyrDown(gb))
        radius = int(min(2 * p.max_displacement_px, p.max_displacement_px * max(1.0, pr.scale)))
        shift_of = _shift_memo(ga, gb, half, radius, p.min_texture)
        moved = [r for r in out if r.get("verdict") == "moved" and "w" in r]
        for rec in todo:
            if _turned_in_pair(rec, a, pr, shift_of, moved, p, primary_frames):
                moved.append(rec)
                turned += 1
        todo = [r for r in todo if r.get("verdict") != "moved"]
        if not todo:
            break
    for r in out:
        r.pop("_long", None)
    return turned


# --------------------------------------------------------------------------- the far pair
# Why: a slow mover flying the camera's way round moves under about 1 px
# against its background over the pairs above, and over them its shift lies near its
# epipolar line, where a still thing at another depth moves too. Over a second it departs
# from the best still point on its ray by 1.4-6.2 px (README, density), beyond the 1-2 px of
# the epipolar distance's noise. So one more chance, in frames `far_pair_frames` before and
# after t (at a 1 s step the neighbouring samples' own frames A), for claims no other pair
# verified: B compensated by the camera model alone (over a second the dense background
# flow follows the movers and would explain them away), and both shifts must explain the
# box (unique, textured, shift_fit, twin_min: the guards of the other pairs) and land at
# least far_epipolar_px off their epipolar lines. No mirror test: a circler's curve puts
# both shifts to the same side of their lines.


@dataclass
class FarPair:
    """Frame at t + k·(one frame), k = ±far_pair_frames, compensated into A by the camera model
    alone (`bw`), as captured (`raw`), and that model (its F)."""

    frames: int
    bw: np.ndarray
    raw: np.ndarray
    model: CameraModel


# One far pair as the far recheck reads it: the pair, its B in grey and at half size.
_FarGray = tuple[FarPair, np.ndarray, np.ndarray]
# A far pair's shift of one claim: the pair, the shift, its distance from the epipolar line.
_FarShift = tuple[FarPair, Shift, float]
_FarShiftOf = Callable[[dict[str, Any], FarPair, np.ndarray, np.ndarray], Shift | None]


def _far_shifts(
    rec: dict[str, Any],
    t: tuple[int, int, int, int],
    a: np.ndarray,
    grays: list[_FarGray],
    shift_of: _FarShiftOf,
    p: VerifyParams,
) -> list[_FarShift]:
    """The claim's shift in each far pair, in order, up to the first pair where nothing
    changed on screen, the content does not explain the box, or the shift lies within
    far_epipolar_px of its epipolar line. `t`: the claim's box."""
    H, W = a.shape[:2]
    c0: np.ndarray = np.array([[(t[0] + t[2]) / 2, (t[1] + t[3]) / 2]], np.float64)
    got: list[_FarShift] = []
    for pr, gb, hb in grays:
        if _rms(a, pr.raw, t, W, H) < p.still_rms:
            break  # nothing changed on screen there
        s = shift_of(rec, pr, gb, hb)
        if not (s is not None and s.unique and s.textured and s.fit <= p.shift_fit and s.twin >= p.twin_min):
            break
        c1 = c0 + [[s.dx, s.dy]]
        c1 = c1 + model_displacement(pr.model, c1, W, H)
        off = epipolar_px(pr.model, c0, c1)
        assert off is not None  # far_recheck takes only pairs with an F
        epi = float(off[0])
        if epi < p.far_epipolar_px:
            break
        got.append((pr, s, epi))
    return got


def _borrowed_far(
    t: tuple[int, int, int, int],
    got: list[_FarShift],
    moved: list[dict[str, Any]],
    grays: list[_FarGray],
    shift_of: _FarShiftOf,
    scale: float,
    p: VerifyParams,
) -> bool:
    """The claim (box `t`) moves alike in every far pair with a verified claim it overlaps."""
    for o in moved:
        to = _tight(o)
        if not _overlaps_enough(t, to, p.borrow_overlap):
            continue
        alike = True
        for pr, gb, hb in grays:
            so, s = shift_of(o, pr, gb, hb), next(g[1] for g in got if g[0] is pr)
            if so is not None and math.hypot(s.dx - so.dx, s.dy - so.dy) >= p.distinct_motion_px * scale:
                alike = False
        if alike:
            return True
    return False


def _mark_far(
    rec: dict[str, Any], got: list[_FarShift], pairs: list[FarPair], p: VerifyParams, primary_frames: int
) -> None:
    """The claim's record: moved by the far pair, each far shift, and (where both fit well)
    its displacement over the primary pair's Δ."""
    rec["verdict"], rec["how"] = "moved", f"far pair ±{abs(pairs[0].frames)} frames"
    rec["baseline_s"] = round(abs(pairs[0].frames) / 60, 3)
    rec["shift_far"] = [
        {
            "frames": g[0].frames,
            "dx": round(g[1].dx, 2),
            "dy": round(g[1].dy, 2),
            "fit": round(g[1].fit, 3),
            "twin": round(g[1].twin, 2),
            "epipolar_px": round(g[2], 2),
        }
        for g in got
    ]
    before = [g for g in got if g[0].frames < 0]
    after = [g for g in got if g[0].frames > 0]
    if before and after and max(before[0][1].fit, after[0][1].fit) <= p.speed_fit:
        # the displacement over the primary pair's Δ, forward in time, from the two far shifts
        sb, sa = before[0][1], after[0][1]
        k = primary_frames / (after[0][0].frames - before[0][0].frames)
        rec["dx"], rec["dy"] = round((sa.dx - sb.dx) * k, 2), round((sa.dy - sb.dy) * k, 2)


def far_recheck(
    out: list[dict[str, Any]],
    a: np.ndarray,
    pairs: list[FarPair],
    p: VerifyParams | None = None,
    primary_frames: int = 6,
) -> int:
    """Claims still failing for want of own motion after the other pairs hold when, in BOTH
    far pairs (one before t, one after), their box's content reappears shifted, explaining
    the box, off the epipolar line by at least far_epipolar_px, and not moving with a
    verified claim it overlaps (a part, a borrowed motion). Updates `out` in place; returns
    how many it turned into movers."""
    p = p or VerifyParams()
    todo = [r for r in out if str(r.get("verdict", "")).startswith(RECHECKED) and "w" in r]
    if not todo or len(pairs) < 2 or any(getattr(pr.model, "F", None) is None for pr in pairs):
        return 0
    H, W = a.shape[:2]
    ga = _gray(a)
    half_a = cv2.pyrDown(ga)
    grays: list[_FarGray] = [(pr, gb, cv2.pyrDown(gb)) for pr, gb in [(pr, _gray(pr.bw)) for pr in pairs]]
    moved = [r for r in out if r.get("verdict") == "moved" and "w" in r]
    memo: dict[tuple[str, int], Shift | None] = {}

    def shift_of(rec: dict[str, Any], pr: FarPair, gb: np.ndarray, hb: np.ndarray) -> Shift | None:
        key = (rec["id"], pr.frames)
        if key not in memo:
            t = _tight(rec)
            box = (max(0, t[0]), max(0, t[1]), min(W, t[2]), min(H, t[3]))
            memo[key] = measure_shift(ga, gb, box, p.far_search_px, p.min_texture, (half_a, hb))
        return memo[key]

    # moving alike is judged against the motion expected over the far pair's length
    scale = max(1.0, abs(pairs[0].frames) / max(1, primary_frames))
    turned = 0
    for rec in todo:
        t = _tight(rec)
        got = _far_shifts(rec, t, a, grays, shift_of, p)
        if len(got) < len(grays):
            continue
        if _borrowed_far(t, got, moved, grays, shift_of, scale, p):
            continue
        _mark_far(rec, got, pairs, p, primary_frames)
        moved.append(rec)
        turned += 1
    return turned
