"""Without a hook: which counted moving regions are plainly objects (figures only; the
scorer judges whether they are sure enough to give points).

The visual count counts every identifiable moving region. Without a hook that says what
is an object, three things can pass for objects and must not be counted:
  * a particle field: many near-identical primitives moving as one field (a grid of points
    rising and falling in a wave). Perspective makes near dots as large as an object, so
    size does not tell; sameness does: a group of at least `field_min_members` moving
    regions (counted or tiny) that swap the same two colours (the primitive's and the
    ground's, whichever frame holds which), at least `field_share` of all that moves, is a
    field, and its members are not objects;
  * motion the camera model explains: a region whose own corners, followed from A into the
    compensated B, do not agree on a shift of their own has no motion the pixels can show;
    under parallax, one whose shift stays within what the dense background flow could have
    taken (`parallax_max_px`) is as likely a depth edge (in a flat scene the homography
    explains every still pixel exactly: there what moved, moved on its own);
  * fragments of one moving surface: regions close together moving by the same shift are
    one thing.
Each counted region gets a `plain` flag and, when false, why; the sample gets the counts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from skycity_bench.analysis.vision.segment import Region, Segmentation
from skycity_bench.analysis.vision.verify import VerifyParams

FIELD = "member of a field of near-identical primitives"
NO_OWN = "no own motion the pixels can show (its corners do not agree on a shift)"
CAMERA = "shift within what parallax could explain"
FRAGMENT = "fragment of a larger moving surface"


@dataclass
class ObjectParams:
    field_min_members: int = 12  # moving regions of one colour that make a field ...
    field_share: float = 0.35  # ... and at least this share of all that moves
    field_colour_tol: int = 24  # max channel distance within which two colour pairs are one
    fragment_gap_px: int = 12  # regions this close moving by the same shift are one surface
    parallax_max_px: float = 2.0  # (camera) most the background flow may depart from the mesh
    own_min_tracks: int = 3  # corners that must agree on a region's own shift
    own_max_tracks: int = 24  # corners followed per region
    own_reach_px: int = 8  # ... found on its changed pixels or this close to them
    own_agree_px: float = 1.5  # corners whose shifts differ less than this agree


def _colours(a: np.ndarray, b: np.ndarray, seg: Segmentation, r: Region) -> np.ndarray | None:
    """The two colours the region's changed pixels swap between A and B, as (brighter,
    darker): per changed pixel its colour in A and in B ordered by brightness, then the
    median of each side. One primitive of a field leaves the ground in one region and
    covers it in the next (white over black, black over white); which frame holds the
    primitive does not matter, the pair is the same, so a field is one group whatever the
    ground around each region looks like. (One colour per region, the frame's further from
    the ring around it, split a dense white-on-black field into a white and a black group
    wherever points crowd the ring: the CI sample where 9 of 11 counted regions stayed
    'plain'.)"""
    x0, y0, x1, y1 = r.x, r.y, r.x + r.w, r.y + r.h
    on = (seg.labels[y0:y1, x0:x1] == r.label) & (seg.mask[y0:y1, x0:x1] > 0)
    if not on.any():
        return None
    pa = a[y0:y1, x0:x1][on].astype(np.float32).reshape(-1, 3 if a.ndim == 3 else 1)
    pb = b[y0:y1, x0:x1][on].astype(np.float32).reshape(-1, 3 if b.ndim == 3 else 1)
    brighter = (pa.sum(axis=1) >= pb.sum(axis=1))[:, None]
    hi, lo = np.where(brighter, pa, pb), np.where(brighter, pb, pa)
    return np.concatenate([np.median(hi, axis=0), np.median(lo, axis=0)])


_LK: dict[str, Any] = dict(
    winSize=(11, 11), maxLevel=3, criteria=(cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 20, 0.03)
)


def own_flow(
    ga: np.ndarray, gb: np.ndarray, seg: Segmentation, r: Region, min_shift: float, op: ObjectParams
) -> tuple[float, float] | None:
    """The region's own displacement against the compensated background, or None when its
    pixels do not show one: corners on its changed pixels in A followed into B (forward and
    back). What moved shows as at least `own_min_tracks` corners agreeing within `own_agree_px` on one
    shift of at least `min_shift` px (corners on the still background around stay put, those
    on what it uncovers or covers are lost)."""
    # the region and a few px around it: the changed strip a uniform body leaves behind
    # holds few corners; the body's own are just beside it
    pad = op.own_reach_px
    x0, y0 = max(0, r.x - pad), max(0, r.y - pad)
    x1, y1 = min(ga.shape[1], r.x + r.w + pad), min(ga.shape[0], r.y + r.h + pad)
    mask = ((seg.labels[y0:y1, x0:x1] == r.label) & (seg.mask[y0:y1, x0:x1] > 0)).astype(np.uint8)
    if x1 - x0 < 4 or y1 - y0 < 4 or not mask.any():
        return None
    mask = cv2.dilate(mask, np.ones((2 * pad + 1, 2 * pad + 1), np.uint8))
    pts = cv2.goodFeaturesToTrack(
        ga[y0:y1, x0:x1], maxCorners=op.own_max_tracks, qualityLevel=0.01, minDistance=2, mask=mask, blockSize=3
    )
    if pts is None or len(pts) < op.own_min_tracks:
        return None
    pts = (pts.reshape(-1, 2) + (x0, y0)).astype(np.float32)
    p1, st, _ = cv2.calcOpticalFlowPyrLK(ga, gb, pts, None, **_LK)
    p0r, st2, _ = cv2.calcOpticalFlowPyrLK(gb, ga, p1, None, **_LK)
    ok = (st.ravel() == 1) & (st2.ravel() == 1) & (np.linalg.norm(p0r - pts, axis=1) < 0.5)
    if ok.sum() < op.own_min_tracks:
        return None
    f = (p1 - pts)[ok]
    mov = f[np.linalg.norm(f, axis=1) >= min_shift]
    if len(mov) < op.own_min_tracks:
        return None
    agree = np.linalg.norm(f - np.median(mov, axis=0), axis=1) <= op.own_agree_px
    if agree.sum() < op.own_min_tracks:
        return None
    d = np.median(f[agree], axis=0)
    return float(d[0]), float(d[1])


def _field_groups(
    a: np.ndarray, bw: np.ndarray, seg: Segmentation, moving: list[Region], op: ObjectParams
) -> tuple[dict[int, int], int, int]:
    """Every moving region grouped by its colour pair (greedy, largest group first): (each
    grouped region's group size, the largest group, the size from which a group is a field)."""
    cols = {}
    for r in moving[:1500]:
        c = _colours(a, bw, seg, r)
        if c is not None:
            cols[r.label] = c.astype(np.float32)
    labels = list(cols)
    arr = np.array([cols[k] for k in labels]) if labels else np.zeros((0, 6), np.float32)
    group = {}
    free = np.ones(len(labels), bool)
    largest = 0
    # a field moves as one: it is most of what moves (a city's own particles beside 50
    # movers are a minority, and tiny anyway)
    field_min = max(op.field_min_members, int(np.ceil(op.field_share * len(labels))))
    while free.any():
        idx = np.flatnonzero(free)
        near = (np.abs(arr[idx][:, None, :] - arr[idx][None, :, :]).max(axis=2) <= op.field_colour_tol).sum(axis=1)
        seed = idx[int(np.argmax(near))]
        members = idx[np.abs(arr[idx] - arr[seed]).max(axis=1) <= op.field_colour_tol]
        largest = max(largest, len(members))
        for m in members:
            group[labels[m]] = len(members)
        free[members] = False
        if len(members) < field_min:
            break  # the rest are in groups smaller still
    return group, largest, field_min


# A region that may be an object: the region, its own shift, whether that shift was measured.
_Plain = tuple[Region, tuple[float, float], bool]


def _plain_candidates(
    counted: list[Region],
    fields: tuple[dict[int, int], int],
    grays: tuple[np.ndarray, np.ndarray],
    seg: Segmentation,
    vp: VerifyParams,
    op: ObjectParams,
    parallax: bool,
) -> tuple[dict[int, dict[str, Any]], list[_Plain]]:
    """Each counted region's record, with why it is not an object where a test says so, and
    the regions that passed (before fragments are merged). `fields`: the group sizes and
    the size of a field; `grays`: A and the compensated B in grey."""
    group, field_min = fields
    ga, gb = grays
    per: dict[int, dict[str, Any]] = {}
    plain: list[_Plain] = []
    for r in counted:
        rec: dict[str, Any] = {"label": r.label}
        per[r.label] = rec
        if group.get(r.label, 0) >= field_min:
            rec["why"] = FIELD
            continue
        if not parallax:
            # a flat scene: the homography explains every still pixel exactly, so what the
            # segmentation found moving moved on its own (the visual count holds)
            plain.append((r, (0.0, 0.0), False))
            continue
        s = own_flow(ga, gb, seg, r, vp.min_shift_px, op)
        if s is None:
            rec["why"] = NO_OWN
            continue
        rec["shift"] = [round(s[0], 2), round(s[1], 2)]
        if parallax and math.hypot(*s) <= op.parallax_max_px:
            rec["why"] = CAMERA
            continue
        plain.append((r, s, True))
    return per, plain


def _merge_fragments(plain: list[_Plain], per: dict[int, dict[str, Any]], vp: VerifyParams, op: ObjectParams) -> int:
    """Plain regions close together moving alike are one surface: each fragment marked in
    `per`; the number of surfaces left."""
    parent = list(range(len(plain)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    g = op.fragment_gap_px
    for i, (r1, s1, m1) in enumerate(plain):
        for j in range(i + 1, len(plain)):
            r2, s2, m2 = plain[j]
            if (
                m1
                and m2
                and r2.x - g <= r1.x + r1.w
                and r1.x - g <= r2.x + r2.w
                and r2.y - g <= r1.y + r1.h
                and r1.y - g <= r2.y + r2.h
                and math.hypot(s1[0] - s2[0], s1[1] - s2[1]) < vp.distinct_motion_px
                and root(i) != root(j)
            ):
                parent[root(j)] = root(i)
                per[r2.label]["why"] = FRAGMENT
    return len({root(i) for i in range(len(plain))})


def plain_objects(
    seg: Segmentation, a: np.ndarray, bw: np.ndarray, vp: VerifyParams, op: ObjectParams, parallax: bool
) -> dict[str, Any]:
    """Figures for the hookless judgement of one sample. `bw`: frame B compensated into A
    (by the background flow under parallax); `parallax`: that flow was needed."""
    moving = [r for r in seg.regions if r.reason is None or r.reason == "tiny particle"]
    # every candidate, the ones the visual count leaves to parallax too: the tests below are
    # this judgement's own (a region's corners, the background flow's reach)
    counted = [r for r in seg.regions if r.candidate]
    group, largest, field_min = _field_groups(a, bw, seg, moving, op)
    ga, gb = (
        a if a.ndim == 2 else cv2.cvtColor(a, cv2.COLOR_BGR2GRAY),
        bw if bw.ndim == 2 else cv2.cvtColor(bw, cv2.COLOR_BGR2GRAY),
    )
    per, plain = _plain_candidates(counted, (group, field_min), (ga, gb), seg, vp, op, parallax)
    n_plain = _merge_fragments(plain, per, vp, op)
    for r, _, _ in plain:
        if "why" not in per[r.label]:
            per[r.label]["plain"] = True
    why: dict[str, int] = {}
    for rec in per.values():
        if "why" in rec:
            why[rec["why"]] = why.get(rec["why"], 0) + 1
    return {
        "plain_count": n_plain,
        "counted": len(counted),
        "doubtful": why,
        "largest_alike_group": largest,
        "field_min_members": op.field_min_members,
        "per_region": per,
    }
