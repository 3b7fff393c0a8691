"""The pure image analysis on synthetic frame pairs whose truth is known by construction
(no browser): camera removal, sub-pixel edges, the rubric's exclusions, claim checking."""

import cv2
import numpy as np
import pytest

from skycity_bench.analysis.vision import analyse_pair
from skycity_bench.analysis.vision.behavior import summarise
from skycity_bench.analysis.vision.camera_estimate import estimate

W, H = 800, 450


def city(seed=1) -> np.ndarray:
    """A textured static city larger than the view (so a moving camera never sees its edge)."""
    rng = np.random.default_rng(seed)
    img = np.zeros((H + 200, W + 200, 3), np.uint8)
    img[:] = (200, 170, 140)
    for _ in range(160):
        x, y = int(rng.integers(0, W + 200)), int(rng.integers(60, H + 200))
        w, h = int(rng.integers(20, 70)), int(rng.integers(30, 200))
        cv2.rectangle(img, (x, y), (x + w, y + h), tuple(int(v) for v in rng.integers(40, 200, 3)), -1)
        for wy in range(y + 5, y + h - 5, 12):
            for wx in range(x + 4, x + w - 4, 10):
                if rng.random() < 0.5:
                    cv2.rectangle(img, (wx, wy), (wx + 4, wy + 6), (230, 230, 150), -1)
    return img


def view(world: np.ndarray, tx: float, ty: float, z: float = 1.0) -> np.ndarray:
    """The camera: screen = z * (world - (tx, ty)), bilinear (so edges land on fractions)."""
    M = np.array([[z, 0, -tx * z], [0, z, -ty * z]], np.float64)
    return cv2.warpAffine(world, M, (W, H), flags=cv2.INTER_LINEAR)


CAM_A, CAM_B = (60.3, 40.7, 1.0), (63.85, 41.35, 1.006)


def movers(k: int):
    """k objects on a grid, far apart, each with its own displacement (some beyond its size)."""
    cols = 6
    out = []
    for i in range(k):
        x, y = 150 + (i % cols) * 95, 110 + (i // cols) * 80
        v = [(7, 0), (0, 6), (-5, 4), (30, 0), (4, -4), (0, -22)][i % 6]
        out.append((x, y, 22, 12, v))
    return out


def draw(img, objs, cam, moved: bool):
    tx, ty, z = cam
    for x, y, w, h, (vx, vy) in objs:
        X, Y = x + (vx if moved else 0), y + (vy if moved else 0)
        p0 = (int(round((X - tx) * z)), int(round((Y - ty) * z)))
        p1 = (int(round((X + w - tx) * z)), int(round((Y + h - ty) * z)))
        cv2.rectangle(img, p0, p1, (20, 20, 230), -1)
    return img


@pytest.fixture(scope="module")
def world():
    return city()


def test_should_estimate_the_camera_translation_from_the_static_scene(world):
    m = estimate(view(world, *CAM_A), view(world, *CAM_B))
    H_ = m.H / m.H[2, 2]
    # a point of A at (400, 200) is at z_b*(p/z_a + t_a - t_b) in B
    p = np.array([400.0, 200.0, 1.0])
    q = H_ @ p
    want = CAM_B[2] * (p[:2] / CAM_A[2] + np.array(CAM_A[:2]) - np.array(CAM_B[:2]))
    assert np.allclose(q[:2] / q[2], want, atol=0.3)


def test_should_find_no_movers_when_only_the_camera_pans_and_zooms_by_fractions_of_a_pixel(world):
    r = analyse_pair(view(world, *CAM_A), view(world, *CAM_B), [])
    assert r.data["visual_count"] == 0, r.data["regions"][:5]


def test_should_count_each_mover_once_under_a_moving_camera(world):
    objs = movers(18)
    a = draw(view(world, *CAM_A), objs, CAM_A, False)
    b = draw(view(world, *CAM_B), objs, CAM_B, True)
    r = analyse_pair(a, b, None)
    assert r.data["visual_count"] == 18, [x for x in r.data["regions"] if x["counted"]]


def test_should_exclude_tiny_particles_thin_streaks_and_soft_clouds(world):
    a, b = view(world, *CAM_A), view(world, *CAM_B)
    rng = np.random.default_rng(3)
    for _ in range(60):  # particles: 2x2 dots moving 8 px
        x, y = int(rng.integers(20, W - 40)), int(rng.integers(20, H - 40))
        a[y : y + 2, x : x + 2] = 255
        b[y + 3 : y + 5, x + 8 : x + 10] = 255
    for i in range(8):  # rain: 1-px streaks falling 9 px
        x = 60 + i * 90
        cv2.line(a, (x, 40), (x + 2, 60), (255, 255, 255), 1)
        cv2.line(b, (x, 49), (x + 2, 69), (255, 255, 255), 1)
    for img, cx in ((a, 400), (b, 412)):  # a soft cloud drifting 12 px
        yy, xx = np.mgrid[0:H, 0:W]
        alpha = 0.6 * np.exp(-(((xx - cx) / 90.0) ** 2 + ((yy - 220) / 50.0) ** 2))[..., None]
        img[:] = (img * (1 - alpha) + 250 * alpha).astype(np.uint8)
    r = analyse_pair(a, b, None)
    assert r.data["visual_count"] <= 1, [x for x in r.data["regions"] if x["counted"]]
    assert r.data["excluded"].get("tiny particle", 0) >= 30


def test_should_not_count_a_full_screen_brightness_change(world):
    a = view(world, *CAM_A)
    b = cv2.convertScaleAbs(view(world, *CAM_B), alpha=1.15, beta=6)
    assert analyse_pair(a, b, None).data["visual_count"] == 0


def test_should_verify_only_claims_whose_own_region_moved(world):
    objs = movers(12)
    a = draw(view(world, *CAM_A), objs, CAM_A, False)
    b = draw(view(world, *CAM_B), objs, CAM_B, True)
    tx, ty, _ = CAM_A
    claims = [
        {
            "id": f"m{i}",
            "category": ["car", "bus", "tram"][i % 3],
            "x": x - tx + w / 2,
            "y": y - ty + h / 2,
            "w": w,
            "h": h,
            "visible": True,
        }
        for i, (x, y, w, h, _) in enumerate(objs)
    ]
    claims += [
        {"id": f"static{i}", "category": "ghost", "x": 40 + 60 * i, "y": 420, "w": 20, "h": 10} for i in range(10)
    ]  # nothing moves there
    claims += [
        {"id": f"part{i}", "category": "wheel", "x": c["x"] + 2, "y": c["y"], "w": 6, "h": 5}
        for i, c in enumerate(claims[:12])
    ]  # parts of real movers
    claims += [{"id": "away", "category": "car", "x": -300, "y": 100, "w": 20, "h": 10}]
    d = analyse_pair(a, b, claims).data
    verdict = {c["id"]: c["verdict"] for c in d["claims"]}
    assert d["verified_count"] == 12
    assert d["categories"] == ["bus", "car", "tram"]
    assert all(verdict[f"static{i}"].startswith("no own motion") for i in range(10))
    assert all(verdict[f"part{i}"].startswith("part or duplicate") for i in range(12))
    assert verdict["away"] == "off screen"
    moved = {c["id"]: c for c in d["claims"] if c["verdict"] == "moved"}
    assert abs(moved["m0"]["dx"] - 7) <= 1.5 and abs(moved["m0"]["dy"]) <= 1.5


def _samples(velocities, n=6):
    out = []
    for k in range(n):
        t = 20.0 + k
        claims = [
            {
                "id": f"o{i}",
                "category": "car",
                "x": 100 + vx * (t - 20) + 50 * i,
                "y": 100 + vy * (t - 20),
                "verdict": "moved",
                "dx": vx / 10,
                "dy": vy / 10,
            }
            for i, (vx, vy) in enumerate(velocities)
        ]
        out.append({"t": t, "claims": claims})
    return out


def test_should_flag_objects_that_move_in_lockstep():
    b = summarise(_samples([(40, 0)] * 8), delta_s=0.1)
    assert b["synchronised"] and b["lockstep"]["largest_group"] == 8


def test_should_report_varied_speeds_and_directions_without_lockstep():
    vel = [(40, 0), (-25, 10), (0, 60), (15, -15), (-70, -5), (33, 33)]
    b = summarise(_samples(vel), delta_s=0.1)
    assert not b["synchronised"] and b["lockstep"]["objects_in_lockstep"] == 0
    assert b["distinct_directions"] >= 5
    assert b["speed_px_s"]["max"] > 2 * b["speed_px_s"]["min"]


def _textured_box(img, x, y, w, h, seed):
    """A small object with a texture of its own (random 3x3-px blocks, no repeating pattern),
    drawn at integer (x, y)."""
    rng = np.random.default_rng(seed)
    tex = rng.integers(40, 255, (-(-h // 3), -(-w // 3), 3)).astype(np.uint8)
    img[y : y + h, x : x + w] = np.repeat(np.repeat(tex, 3, 0), 3, 1)[:h, :w]
    return img


def test_should_verify_a_slow_mover_by_its_own_content_shift_and_not_a_still_one(world):
    # a still camera; one object moves 2 px (every colour stays inside the 2-px edge
    # tolerance, so no pixel counts as changed), another stands still beside it
    base = view(world, 60, 40)
    a = _textured_box(_textured_box(base.copy(), 300, 200, 36, 18, 1), 500, 200, 36, 18, 2)
    b = _textured_box(_textured_box(base.copy(), 302, 200, 36, 18, 1), 500, 200, 36, 18, 2)
    claims = [
        {"id": "slow", "category": "airship", "x": 318, "y": 209, "w": 36, "h": 18},
        {"id": "still", "category": "airship", "x": 518, "y": 209, "w": 36, "h": 18},
    ]
    d = analyse_pair(a, b, claims).data
    got = {c["id"]: c for c in d["claims"]}
    assert got["slow"]["verdict"] == "moved", got["slow"]
    assert got["slow"]["support_px"] == 0 and got["slow"]["how"] == "shift"
    assert abs(got["slow"]["dx"] - 2) <= 0.3 and abs(got["slow"]["dy"]) <= 0.3
    assert got["still"]["verdict"].startswith("no own motion"), got["still"]


def test_should_tell_a_separate_object_in_front_from_a_part_by_how_it_moves(world):
    base = view(world, 60, 40)
    a = _textured_box(base.copy(), 300, 200, 80, 40, 3)  # a large airship ...
    b = _textured_box(base.copy(), 306, 200, 80, 40, 3)  # ... moving 6 px right
    for img, dy in ((a, 0), (b, 5)):  # a drone in front, going down
        _textured_box(img, 330, 205 + dy, 14, 14, 4)
    claims = [
        {"id": "ship", "category": "airship", "x": 340, "y": 220, "w": 80, "h": 40},
        {"id": "drone", "category": "drone", "x": 337, "y": 212, "w": 14, "h": 14},
        {"id": "window", "category": "wheel", "x": 375, "y": 220, "w": 12, "h": 12},
    ]  # part of the ship
    got = {c["id"]: c for c in analyse_pair(a, b, claims).data["claims"]}
    assert got["ship"]["verdict"] == "moved"
    assert got["drone"]["verdict"] == "moved", got["drone"]
    assert got["window"]["verdict"] == "part or duplicate of ship", got["window"]


def test_should_not_count_what_stands_still_on_screen_while_the_camera_pans(world):
    # a caption fixed to the screen over a panning city: after the camera is removed it
    # seems to slide, but nothing changed there on screen; an object under it is covered
    a, b = view(world, *CAM_A), view(world, *CAM_B)
    for img in (a, b):
        cv2.rectangle(img, (200, 150), (520, 260), (235, 235, 235), -1)
        cv2.putText(img, "SKY CITY", (215, 225), cv2.FONT_HERSHEY_SIMPLEX, 1.8, (30, 30, 30), 4)
    claims = [{"id": "under", "category": "car", "x": 300, "y": 200, "w": 30, "h": 14}]
    d = analyse_pair(a, b, claims).data
    assert d["visual_count"] == 0, [r for r in d["regions"] if r["counted"]]
    assert d["claims"][0]["verdict"].startswith("no own motion: nothing changed there on screen")


def test_should_compute_the_band_limited_tolerant_difference_exactly_where_it_matters(world):
    from skycity_bench.analysis.vision.segment import _max_channel, tolerant_diff

    a = draw(view(world, *CAM_A), movers(12), CAM_A, False)
    b = draw(view(world, *CAM_A), movers(12), CAM_A, True)
    full = tolerant_diff(a, b, 2)
    cand = _max_channel(cv2.absdiff(a, b)) > 28
    fast = tolerant_diff(a, b, 2, cand=cand)
    assert np.array_equal(full > 28, fast > 28)


def test_should_measure_a_content_shift_to_a_fraction_of_a_pixel_and_know_a_flat_patch():
    from skycity_bench.analysis.vision.verify import measure_shift

    rng = np.random.default_rng(5)
    a = cv2.GaussianBlur(rng.integers(0, 255, (200, 300)).astype(np.uint8), (5, 5), 0)
    M = np.float32([[1, 0, 4.5], [0, 1, -2.25]])  # content moves +4.5, -2.25
    b = cv2.warpAffine(a, M, (300, 200), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    s = measure_shift(a, b, (100, 80, 140, 110), 20, half=(cv2.pyrDown(a), cv2.pyrDown(b)))
    assert s.unique and s.textured and abs(s.dx - 4.5) < 0.3 and abs(s.dy + 2.25) < 0.3
    flat = np.full((200, 300), 90, np.uint8)
    s = measure_shift(flat, flat, (100, 80, 140, 110), 20)
    assert not s.textured


def test_should_fit_the_mesh_to_coherent_parallax_and_ignore_scattered_movers():
    from skycity_bench.analysis.vision.camera_estimate import CameraParams, _mesh

    rng = np.random.default_rng(2)
    pts = rng.uniform([0, 0], [1920, 1080], (800, 2))
    res = np.stack([pts[:, 0] / 1920 * 3, np.zeros(len(pts))], axis=1)  # parallax: 0 px left .. 3 px right
    movers_ = rng.random(len(pts)) < 0.1
    res[movers_] += rng.normal(0, 15, (movers_.sum(), 2))  # 10 % of tracks on movers
    mesh = _mesh(pts, res, 1920, 1080, CameraParams())
    cols = mesh.shape[1]
    want = (np.arange(cols) + 0.5) / cols * 3
    assert np.allclose(mesh[..., 0].mean(axis=0), want, atol=0.35)
    assert np.abs(mesh[..., 1]).max() < 0.5


def test_should_verify_a_mover_too_slow_for_one_pair_in_a_longer_pair_and_keep_the_guards(world):
    # Over Δ the object moves 1 px (under the 1.5-px shift that counts), over 3Δ 3 px, before t
    # and after it alike; a still object beside it stays unverified
    base = view(world, 60, 40)

    def frame(dx):
        img = _textured_box(base.copy(), 300 + dx, 200, 36, 18, 1)
        return _textured_box(img, 500, 200, 36, 18, 2)

    a, b, later, earlier, long_before = frame(0), frame(1), frame(3), frame(-1), frame(-3)
    claims = [
        {"id": "slow", "category": "airship", "x": 318, "y": 209, "w": 36, "h": 18},
        {"id": "still", "category": "airship", "x": 518, "y": 209, "w": 36, "h": 18},
    ]
    one = {c["id"]: c for c in analyse_pair(a, b, claims).data["claims"]}
    assert one["slow"]["verdict"].startswith("no own motion"), one["slow"]
    # one longer pair alone is not enough (a compensation error grows with time too)
    d = analyse_pair(a, b, claims, others=[(-6, earlier), (18, later)], primary_frames=6).data
    assert {c["id"]: c for c in d["claims"]}["slow"]["verdict"].startswith("no own motion")
    d = analyse_pair(a, b, claims, others=[(-6, earlier), (18, later), (-18, long_before)], primary_frames=6).data
    got = {c["id"]: c for c in d["claims"]}
    assert got["slow"]["verdict"] == "moved" and got["slow"]["pair_frames"] == 18, got["slow"]
    assert abs(got["slow"]["dx"] - 1) <= 0.3 and abs(got["slow"]["dy"]) <= 0.3  # as over Δ
    assert got["still"]["verdict"].startswith("no own motion"), got["still"]
    assert d["verified_count"] == 1 and d["other_pairs_frames"] == [-6, -18, 18]


def test_should_not_let_a_longer_pair_verify_a_part_moving_with_its_object(world):
    base = view(world, 60, 40)

    def frame(dx):
        return _textured_box(base.copy(), 300 + dx, 200, 80, 40, 3)

    a, b, later, before = frame(0), frame(6), frame(18), frame(-18)
    claims = [
        {"id": "ship", "category": "airship", "x": 340, "y": 220, "w": 80, "h": 40},
        {"id": "window", "category": "wheel", "x": 375, "y": 220, "w": 12, "h": 12},
    ]
    got = {c["id"]: c for c in analyse_pair(a, b, claims, others=[(18, later), (-18, before)]).data["claims"]}
    assert got["ship"]["verdict"] == "moved"
    assert got["window"]["verdict"] == "part or duplicate of ship", got["window"]


def test_should_verify_in_the_far_pair_only_a_shift_off_the_epipolar_line_both_before_and_after(world):
    # The far pair (t ± 60 frames) under a camera whose epipolar lines are horizontal (a
    # sideways translation: F maps (x, y) to the line y' = y), so a still point at any depth
    # moves along its row. A slow mover shows 4 px off its line before t and after it; one
    # moving along its line (what a still thing at another depth does) and one that moved only
    # after t stay unverified, as does a still box.
    from skycity_bench.analysis.vision.camera_estimate import CameraModel
    from skycity_bench.analysis.vision.recheck import FarPair, far_recheck
    from skycity_bench.analysis.vision.verify import VerifyParams

    base = view(world, 60, 40)

    def frame(k):  # k = -1 (t - 60), 0 (t), 1 (t + 60)
        img = _textured_box(base.copy(), 200, 150 + 4 * k, 36, 18, 1)  # off its line
        img = _textured_box(img, 400 + 8 * k, 150, 36, 18, 2)  # along its line
        img = _textured_box(img, 200, 300 + 4 * max(k, 0), 36, 18, 3)  # only after t
        return _textured_box(img, 400, 300, 36, 18, 4)  # still

    F = np.array([[0, 0, 0], [0, 0, -1], [0, 1, 0]], np.float64)
    a = frame(0)
    pairs = [
        FarPair(frames=k, bw=frame(k // 60), raw=frame(k // 60), model=CameraModel(H=np.eye(3), kind="mesh", F=F))
        for k in (-60, 60)
    ]
    ids = {"off": (218, 159), "along": (418, 159), "after": (218, 309), "still": (418, 309)}
    out = [
        {"id": i, "category": "drone", "x": x, "y": y, "w": 36, "h": 18, "verdict": "no own motion"}
        for i, (x, y) in ids.items()
    ]
    p = VerifyParams(far_pair_frames=60, far_epipolar_px=3.0, far_search_px=64)
    assert far_recheck(out, a, pairs, p, primary_frames=6) == 1
    got = {c["id"]: c for c in out}
    assert got["off"]["verdict"] == "moved" and got["off"]["how"] == "far pair ±60 frames", got["off"]
    assert [round(f["dy"]) for f in got["off"]["shift_far"]] == [-4, 4]
    assert all(f["epipolar_px"] >= 3 for f in got["off"]["shift_far"])
    assert abs(got["off"]["dy"] - 4 * 6 / 60) <= 0.05 and abs(got["off"]["dx"]) <= 0.05  # as over Δ
    for i in ("along", "after", "still"):
        assert got[i]["verdict"] == "no own motion", got[i]
    # without the pair after t nothing is judged: both are needed
    out2 = [{**o, "verdict": "no own motion"} for o in out]
    assert far_recheck(out2, a, pairs[:1], p) == 0


def _dot_field(t: float, n: int = 18) -> np.ndarray:
    """A grid of identical white dots on black rising and falling in a wave (a particle
    field, nothing else moves), dots of several sizes as perspective would draw them."""
    img = np.zeros((H, W, 3), np.uint8)
    for i in range(n):
        for j in range(6):
            y = 50 + 65 * j + 8 * np.sin(0.7 * i + 3 * t) + 8 * np.sin(0.9 * j + 3 * t)
            cv2.circle(
                img, (4 * (30 + 42 * i), int(round(y * 4))), 4 * (4 + j), (255, 255, 255), -1, cv2.LINE_AA, shift=2
            )
    return img


def test_should_not_take_a_field_of_identical_moving_dots_for_objects_without_a_hook():
    # dots moving further than the dense background flow follows (over 0.1 s it explains
    # them all, and nothing is counted: the regions this test once saw there came from a
    # brightness "match" that turned frame B black)
    d = analyse_pair(_dot_field(0.0), _dot_field(0.5)).data
    # the regions are there (the visual count may leave them to parallax: the background flow
    # follows a field that is all there is, and no box's content shows a motion of its own) ...
    assert sum(1 for r in d["regions"] if r["counted"] or r.get("parallax")) >= 6
    ob = d["objects"]
    assert ob["plain_count"] == 0, ob  # ... but none is plainly an object
    assert ob["largest_alike_group"] >= 12 and any("field" in k for k in ob["doubtful"])


def test_should_not_take_a_two_tone_frame_for_a_brightness_change():
    # white dots on black covering about 10 % of the frame: A's 90th percentile is white, B's
    # black, although nothing changed brightness; B must be left as it is
    from skycity_bench.analysis.vision.segment import match_photometry

    rng = np.random.default_rng(3)
    a, b = np.zeros((H, W, 3), np.uint8), np.zeros((H, W, 3), np.uint8)
    for img, share in ((a, 0.115), (b, 0.085)):
        grid = img[::9, ::9]
        grid[rng.random(grid.shape[:2]) < share] = 255
    valid = np.ones((H, W), np.uint8)
    assert match_photometry(a, b, valid) is b
    # a real fade is still matched
    c = cv2.convertScaleAbs(view(city(), *CAM_A), alpha=1.15, beta=6)
    assert match_photometry(view(city(), *CAM_A), c, valid) is not c


def _fielded_pair():
    """White dots on black moving 20 px down (more than their size); where they crowd (every 4th place here: a white
    patch) what moves is a black gap between them. Each changed region swaps white for black,
    but a crowded one's surroundings are white (the CI sample of the points-wave fixture)."""
    a, b = np.zeros((H, W, 3), np.uint8), np.zeros((H, W, 3), np.uint8)
    for i in range(40):
        x, y = 40 + 70 * (i % 10), 60 + 90 * (i // 10)
        crowd = i % 4 == 0
        for img, dy in ((a, 0), (b, 20)):
            if crowd:
                cv2.rectangle(img, (x - 22, y - 22), (x + 22, y + 42), (255, 255, 255), -1)
            cv2.circle(img, (x, y + dy), 6, (0, 0, 0) if crowd else (255, 255, 255), -1)
    return a, b


def test_should_group_a_fields_primitives_whatever_the_ground_around_them():
    from skycity_bench.analysis.vision.analyse import Params
    from skycity_bench.analysis.vision.objects import FIELD, plain_objects
    from skycity_bench.analysis.vision.segment import segment

    p = Params()
    a, b = _fielded_pair()
    seg = segment(a, b, np.ones((H, W), np.uint8), p.segment)
    assert sum(r.counted for r in seg.regions) >= 30
    for parallax in (True, False):
        ob = plain_objects(seg, a, b, p.verify, p.objects, parallax=parallax)
        ob.pop("per_region")
        # every counted region is a member of the one field (the gaps among crowded dots too)
        assert ob["plain_count"] == 0 and ob["doubtful"] == {FIELD: ob["counted"]}, ob


def _vehicle(img, x, y, seed):
    """A 30x16 vehicle: a body of one colour with a few panels (the corners a real model has)."""
    rng = np.random.default_rng(seed)
    body = tuple(int(v) for v in rng.integers(60, 230, 3))
    cv2.rectangle(img, (x, y), (x + 29, y + 15), body, -1)
    for px, pw in ((3, 4), (11, 8), (23, 3)):  # irregular, so no shift matches a wrong panel
        cv2.rectangle(img, (x + px, y + 3), (x + px + pw, y + 8), tuple(255 - v for v in body), -1)
    cv2.rectangle(img, (x, y + 12), (x + 29, y + 15), (30, 30, 30), -1)
    return img


def test_should_find_distinct_movers_plainly_objects_without_a_hook(world):
    a, b = view(world, *CAM_A), view(world, *CAM_B)
    for i in range(8):
        x, y = 100 + 80 * i, 120 + 30 * (i % 3)
        _vehicle(a, x, y, 10 + i)
        _vehicle(b, x + [5, -4, 0, 6, -6, 3, 0, 5][i], y + [0, 3, 5, -3, 0, 4, -5, 2][i], 10 + i)
    d = analyse_pair(a, b).data
    # a uniform body's trailing strip may hold too few corners (its region then waits for a
    # person only if many do): within the count's 10 % target, never more than there are
    assert 7 <= d["objects"]["plain_count"] <= 8, d["objects"]


def test_should_leave_to_parallax_a_strip_a_near_edge_uncovers_and_count_motion_no_depth_explains(world):
    # A 3D scene (a fundamental matrix: the camera slid sideways, so every still point moves
    # along a horizontal epipolar line). A thin side face seen at t is covered at t + Δ (the
    # near wall slid over it): changed pixels, but no shift of its content explains them.
    # A box moving 6 px down (off its line) and one moving 9 px along its line (further than
    # the background flow may depart from the camera model) moved on their own.
    from skycity_bench.analysis.vision.analyse import Params, parallax_explained
    from skycity_bench.analysis.vision.camera_estimate import CameraModel
    from skycity_bench.analysis.vision.segment import segment

    base = view(world, 60, 40)
    a, b = base.copy(), base.copy()
    a[150:220, 200:206] = (250, 60, 200)  # the side face, only at t
    _textured_box(a, 400, 200, 30, 21, 5)
    _textured_box(b, 400, 206, 30, 21, 5)  # down: off its epipolar line
    _textured_box(a, 560, 300, 30, 21, 6)
    _textured_box(b, 569, 300, 30, 21, 6)  # along its line, beyond parallax
    model = CameraModel(H=np.eye(3), kind="mesh", F=np.array([[0, 0, 0], [0, 0, -1], [0, 1, 0]], np.float64))
    p = Params()
    seg = segment(a, b, np.ones((H, W), np.uint8), p.segment, raw=b)
    parallax_explained(seg, a, b, model, p)

    def at(x0, y0, x1, y1):
        return [r for r in seg.regions if r.candidate and r.x < x1 and x0 < r.x + r.w and r.y < y1 and y0 < r.y + r.h]

    face, down, along = at(200, 150, 206, 220), at(400, 200, 430, 227), at(560, 300, 599, 321)
    assert face and all(r.parallax and not r.counted for r in face), face
    assert any(r.counted for r in down), down
    assert any(r.counted for r in along), along
