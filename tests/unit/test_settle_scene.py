"""Claims no pixel test verified, settled first by what the scene itself says of them
(vision/settle.py; the rays and the camera mark come from the three.js scene graph locator,
browser/js/scene_graph.js): covered only when rays to several points on the object all met
something nearer, never on one ray; fixed to the camera told apart from covered; and, with no
word from the scene, the pixels' own account as before. Frames are drawn here: a still
picture (nothing changes on screen over the longest pairs) or one whose box changes."""

import numpy as np

from skycity_bench.analysis.vision.camera_estimate import CameraModel
from skycity_bench.analysis.vision.settle import TrackPair, settle_claims
from skycity_bench.analysis.vision.verify import VerifyParams

P = VerifyParams()
H, W = 120, 160


def _frame(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 255, (H, W, 3), dtype=np.uint8)


def _pairs(a: np.ndarray, b: np.ndarray) -> list[TrackPair]:
    gray = b.mean(axis=2).astype(np.float32)
    return [TrackPair(k, gray, b, CameraModel(H=np.eye(3))) for k in (-60, 60)]


def _claim(**kw) -> dict:
    return {"id": "three:a", "x": 80.0, "y": 60.0, "w": 10.0, "h": 6.0, "verdict": "no own motion", **kw}


def _settled(rec: dict, changed: bool = False, moved_px: float | None = None) -> str:
    a = _frame(1)
    b = _frame(2) if changed else a.copy()
    views = None
    if moved_px is not None:
        views = {k: [{"id": "three:a", "x": 80.0 + moved_px, "y": 60.0}] for k in (-60, 60)}
    settle_claims([rec], a, _pairs(a, b), views, P)
    return rec["verdict"]


def test_should_call_a_claim_covered_when_rays_to_every_point_on_it_met_something_nearer():
    v = _settled(_claim(rays={"points": 5, "on": 4, "covered": 4}), changed=True)
    assert v.startswith("no own motion seen (covered)") and "rays" in v, v


def test_should_not_call_a_claim_covered_on_one_ray_or_on_some_points():
    # one point on it, covered: one ray says too little; the pixels decide (its box changed)
    one = _settled(_claim(rays={"points": 5, "on": 1, "covered": 1}), changed=True)
    assert not one.startswith("no own motion seen (covered)"), one
    some = _settled(_claim(rays={"points": 5, "on": 5, "covered": 1}), changed=True)
    assert not some.startswith("no own motion seen (covered)"), some


def test_should_tell_a_claim_fixed_to_the_camera_from_a_covered_one():
    v = _settled(_claim(fixed_to_camera=True, rays={"points": 5, "on": 5, "covered": 0}))
    assert v.startswith("no own motion (still on screen") and "fixed to the camera" in v, v


def test_should_name_what_covers_a_box_that_moved_unseen_though_rays_reach_it():
    # the locator's box moved 30 px in a second, nothing changed on screen, rays reach it: the
    # page's own elements over the canvas (or it is drawn unseen)
    v = _settled(_claim(rays={"points": 5, "on": 5, "covered": 0}), moved_px=30)
    assert v.startswith("no own motion seen (covered)") and "page's own elements" in v, v


def test_should_keep_the_pixels_account_without_a_word_from_the_scene():
    assert _settled(_claim()).startswith("no own motion (still on screen")
    assert _settled(_claim(), moved_px=30).startswith("no own motion seen (covered)")
