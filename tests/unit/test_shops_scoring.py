"""Shop scorers and the probe's pure helpers (no browser): WCAG contrast, pixel contrast,
canvas-card pixel evidence, name attribution, automatic-display intervals, and the scorers'
handling of every status on hand-made evidence."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from skycity_bench.inputs.rubric import load_rubric
from skycity_bench.inputs.scenario import load_scenario
from skycity_bench.judging.scorers import ScoreInput, all_scorers
from skycity_bench.probes.shops.auto_manual import intervals_from
from skycity_bench.probes.shops.dom_cards import attribute, names_in
from skycity_bench.probes.shops.shop_pixels import canvas_change_figures, contrast_ratio, pixel_contrast
from skycity_bench.reporting.run_report import ProbeRecord

SHOPS = [
    {"id": f"s{i}", "name": n, "x": 100 * i, "y": 100}
    for i, n in enumerate(["云顶茶馆", "茶馆", "星桥面包坊", "浮岛书店", "风帆花店", "晴空冰室"], 1)
]


def test_should_compute_wcag_contrast_like_the_standard():
    assert contrast_ratio([0, 0, 0], [255, 255, 255]) == pytest.approx(21, abs=0.01)
    assert contrast_ratio([119, 119, 119], [255, 255, 255]) == pytest.approx(4.48, abs=0.01)  # #777 fails 4.5
    assert contrast_ratio([118, 118, 118], [255, 255, 255]) > 4.5  # #767676 passes


def test_should_measure_contrast_of_drawn_text_from_pixels():
    img = np.full((40, 120, 3), 255, np.uint8)
    img[12:28, 10:110:6] = 30  # dark "glyph" strokes on white
    m = pixel_contrast(img, [0, 0, 120, 40])
    assert m["ratio"] > 14 and m["method"] == "pixels"
    grey = np.full((40, 120, 3), 154, np.uint8)
    grey[12:28, 10:110:6] = 138  # grey on grey
    assert pixel_contrast(grey, [0, 0, 120, 40])["ratio"] < 1.5


def _scene(shift):
    img = np.zeros((300, 400, 3), np.uint8)
    img[:] = np.linspace(20, 90, 400, dtype=np.uint8)[None, :, None]  # sky gradient
    for k in range(12):  # traffic
        x = (20 + 31 * k + 3 * shift) % 390
        img[20 + 21 * k : 26 + 21 * k, x : x + 9] = (60, 210, 250)
    return img


def test_should_tell_a_drawn_card_from_scene_motion():
    from skycity_bench.evidence.shops import CanvasCard
    from skycity_bench.judging.scorers.shops import canvas_card_like

    s = load_scenario().scorer_settings("shops")
    before, control, later = _scene(0), _scene(1), _scene(2)
    hovered = later.copy()
    hovered[100:180, 150:330] = 240  # a card drawn on the canvas
    card = {"compared": True, **canvas_change_figures(before, control, hovered, level=40)}
    assert card["across_hover"]["area"] >= 180 * 80 and card["across_hover"]["fill"] > 0.9  # the probe's figures
    assert canvas_card_like(CanvasCard.model_validate(card), s)  # the scorer's verdict
    still = {"compared": True, **canvas_change_figures(before, control, later, level=40)}
    assert not canvas_card_like(CanvasCard.model_validate(still), s)


def test_should_attribute_card_text_to_the_longest_matching_name():
    assert names_in("云顶茶馆 · 高山乌龙", SHOPS) == ["s1"]  # 茶馆 is inside 云顶茶馆
    assert attribute("茶馆 今日特供", SHOPS) == "s2"
    assert attribute("云顶茶馆 与 星桥面包坊 联名", SHOPS) == "ambiguous"
    assert attribute("欢迎光临", SHOPS) is None
    assert names_in("星 桥 面 包 坊", SHOPS) == ["s3"]  # whitespace does not hide a name


def _samples(spans, a=15.0, b=40.0, step=0.1):
    out = []
    for k in range(int(round((b - a) / step)) + 1):
        t = round(a + k * step, 3)
        cards = [{"text": SHOPS[i]["name"] + " 营业中", "rect": [0, 0, 10, 10]} for s, e, i in spans if s <= t < e]
        out.append((t, cards))
    return out


def test_should_turn_samples_into_intervals_with_start_and_end():
    ivs, timeline = intervals_from(_samples([(16, 19, 2), (22, 25.5, 3), (39, 41, 4)]), SHOPS, 40.1)
    assert [(i["shop_id"], i["start_s"], i["end_s"]) for i in ivs] == [
        ("s3", 16.0, 19.0),
        ("s4", 22.0, 25.5),
        ("s5", 39.0, 40.1),
    ]
    assert ivs[2]["clipped_end"] and not ivs[0]["clipped_end"]
    assert timeline[0] == [15.0, None]


# ----------------------------------------------------------------- scorers on evidence
def _shop(i, **kw):
    return {
        "id": f"s{i}",
        "name": SHOPS[i - 1]["name"],
        "opened": True,
        "closed_after_ms": 100,
        "close_watched_ms": 500,
        "text": SHOPS[i - 1]["name"],
        "names_in_card": [f"s{i}"],
        "hovered": {"x": 1, "y": 1, "t_s": 3, "away": [6, 6]},
        "screenshot_open": f"shops/hover-s{i}-open.png",
        "placement": {
            "rect": [0, 0, 200, 80],
            "viewport": [960, 540],
            "distance_px": 22,
            "distance_ratio": 0.02,
            "min_font_px": 14,
            "min_contrast": 12.0,
            "texts": [{"text": "x", "font_px": 14, "contrast": {"ratio": 12.0, "method": "computed styles"}}],
        },
        **kw,
    }


def _interval(i, start, end):
    return {
        "shop_id": f"s{i}",
        "start_s": start,
        "end_s": end,
        "duration_s": end - start,
        "text": SHOPS[i - 1]["name"],
        "rect": [0, 0, 200, 80],
        "names_in_card": [f"s{i}"],
        "clipped_start": False,
        "clipped_end": False,
    }


# Whole evidence as the probe writes it (the model, evidence/shops.py, refuses less)
GOOD = {
    "shops": SHOPS,
    "hook_problems": [],
    "hook_raw_count": 6,
    "viewport": [960, 540],
    "hover": {"per_shop": [_shop(i) for i in range(1, 7)], "resets": 0},
    "auto": {
        "window_s": [15, 40],
        "sample_interval_ms": 100,
        "samples": 251,
        "samples_expected": 251,
        "intervals": [_interval(2, 16, 19), _interval(4, 22, 25), _interval(5, 28, 31)],
        "timeline": [],
    },
    "manual": {
        "tested": True,
        "hold_s": 3,
        "user_shop": "s1",
        "user_card_names": ["s1"],
        "auto_interval": {"shop_id": "s2", "start_s": 16, "end_s": 19},
        "hovered": {"x": 100, "y": 100, "t_s": 16.5},
        "steps": None,
    },
    "touch": {
        "per_shop": [{"id": f"s{i}", "opened": True, "names_in_card": [f"s{i}"]} for i in range(1, 7)],
        "resets": 0,
        "page": {"inner_size": [960, 540], "ontouchstart": True, "max_touch_points": 1},
    },
}


USER_CARD = {"names": ["s1"], "rect": [120, 60, 200, 80]}
AUTO_CARD = {"names": ["s2"], "rect": [500, 60, 200, 80]}
AUTO_OVER = {"names": ["s2"], "rect": [150, 70, 200, 80]}  # overlaps the user's card


def _steps(states, *, lag=3.0, residual=(0.0, 0.0), score=0.95, texture=40.0, on_screen=True, x0=100.0, dx=10.0):
    """A follow record: the pointer arrives at 16.5 s, then one 100 ms step per state (the
    cards showing then); the shop moves dx a step and the pointer follows it."""
    steps = [
        {"t_s": 16.5, "pointer": None, "hook": [x0, 100], "lag_px": None, "on_screen": True, "moved_to": [x0, 100]}
    ]
    for k, cards in enumerate(states, 1):
        lg = lag(k) if callable(lag) else lag
        res = residual(k) if callable(residual) else residual
        steps.append(
            {
                "t_s": round(16.5 + 0.1 * k, 3),
                "pointer": [x0 + dx * (k - 1), 100],
                "hook": [x0 + dx * k, 100],
                "lag_px": lg,
                "on_screen": on_screen(k) if callable(on_screen) else on_screen,
                "cards": cards,
                "under": {"tag": "canvas", "id": "c", "cls": None},
                "pixels": {"residual": list(res), "score": score, "texture": texture},
                "moved_to": [x0 + dx * k, 100],
            }
        )
    return steps


GOOD["manual"]["steps"] = _steps([[AUTO_CARD, USER_CARD]] * 2 + [[USER_CARD]] * 28)


def score(item_id, data):
    rubric = load_rubric()
    inp = ScoreInput(
        item=rubric.item(item_id),
        rubric=rubric,
        scenario=load_scenario(),
        records={"shops": ProbeRecord(name="shops", data=data)},
    )
    return all_scorers()[item_id].fn(inp)


def test_should_give_full_points_on_good_evidence():
    got = {
        i: score(i, GOOD)
        for i in ("shops.hover", "shops.auto_display", "shops.manual_priority", "shops.card_placement", "shops.touch")
    }
    assert {i: (r.status, r.points) for i, r in got.items()} == {
        "shops.hover": ("pass", 6),
        "shops.auto_display": ("pass", 3),
        "shops.manual_priority": ("pass", 2),
        "shops.card_placement": ("pass", 2),
        "shops.touch": ("pass", 2),
    }
    assert got["shops.hover"].measurements["shops.per_shop"][0]["id"] == "s1"
    assert len(got["shops.auto_display"].measurements["shops.auto_display"]) == 3


def test_should_count_only_shops_shown_between_two_and_five_seconds():
    d = copy.deepcopy(GOOD)
    d["auto"]["intervals"][1].update(end_s=23.5, duration_s=1.5)  # too short
    d["auto"]["intervals"][2].update(end_s=34.5, duration_s=6.5)  # too long
    r = score("shops.auto_display", d)
    assert (r.status, r.points) == ("partial", 1)


def test_should_send_canvas_drawn_cards_to_review_not_zero():
    d = copy.deepcopy(GOOD)
    drawn = {
        "compared": True,
        "diff_level": 40,
        "across_hover": {"area": 14000, "rect": [150, 100, 180, 80], "fill": 0.97, "changed_share": 0.1},
        "scene_motion": {"area": 54, "rect": [20, 20, 9, 6], "fill": 1.0, "changed_share": 0.01},
    }
    d["hover"]["per_shop"] = [
        _shop(i, opened=False, names_in_card=None, closed_after_ms=None, placement=None, canvas_card=drawn)
        for i in range(1, 7)
    ]
    for item in ("shops.hover", "shops.card_placement"):
        r = score(item, d)
        assert (r.status, r.points) == ("review", None)


def test_should_leave_hover_untested_when_a_shop_was_never_on_screen():
    d = copy.deepcopy(GOOD)
    d["hover"]["per_shop"][3] = {"id": "s4", "name": SHOPS[3]["name"], "opened": None, "reason": "off screen"}
    r = score("shops.hover", d)
    assert (r.status, r.points) == ("untested", None)


def _manual(steps):
    d = copy.deepcopy(GOOD)
    d["manual"]["steps"] = steps
    r = score("shops.manual_priority", d)
    return r.status, r.points, r.evidence["outcome"], r.evidence["verdict"]


def test_should_give_full_points_when_the_users_card_holds_while_the_pointer_follows():
    st, pts, code, verdict = _manual(_steps([[AUTO_CARD, USER_CARD]] * 2 + [[USER_CARD]] * 28))
    assert (st, pts, code) == ("pass", 2, "held")
    assert "followed the shop" in verdict


def test_should_give_half_when_the_automatic_card_replaces_the_users_card_on_the_shop():
    st, pts, code, verdict = _manual(_steps([[USER_CARD]] * 12 + [[AUTO_CARD]] * 18))
    assert (st, pts, code) == ("partial", 1, "replaced_by_auto")
    assert "replaced by the automatic display (s2) at 17.8 s" in verdict


def test_should_give_half_when_the_automatic_card_covers_the_users_card():
    st, pts, code, verdict = _manual(_steps([[USER_CARD]] * 12 + [[USER_CARD, AUTO_OVER]] * 18))
    assert (st, pts, code) == ("partial", 1, "covered_by_auto")
    assert "covered by the automatic display" in verdict


def test_should_give_half_when_the_card_closes_with_the_pointer_on_the_shop():
    st, pts, code, verdict = _manual(_steps([[USER_CARD]] * 12 + [[]] * 18))
    assert (st, pts, code) == ("partial", 1, "closed_on_shop")
    assert "while the pointer stayed on the shop" in verdict


def test_should_give_zero_when_the_automatic_card_keeps_the_stage():
    st, pts, code, verdict = _manual(_steps([[AUTO_CARD]] * 25 + [[USER_CARD]] * 5))
    assert (st, pts, code) == ("fail", 0, "auto_kept_stage")
    assert "automatic display (s2)" in verdict and "replaced the user's card" in verdict
    st, pts, code, _ = _manual(_steps([[]] * 30))
    assert (st, pts, code) == ("fail", 0, "no_answer")


def test_should_blame_the_bench_when_the_pointer_left_the_shop_before_the_card_closed():
    # The card closes at the step where the shop got 30 px ahead of the pointer.
    st, pts, code, verdict = _manual(_steps([[USER_CARD]] * 12 + [[]] * 18, lag=lambda k: 30.0 if k == 13 else 3.0))
    assert (st, pts, code) == ("untested", None, "pointer_left_shop")
    assert "failed to follow" in verdict and "17.8 s" in verdict
    # ... and a shop that leaves the screen cannot be followed either
    st, _, code, _ = _manual(_steps([[USER_CARD]] * 12 + [[]] * 18, on_screen=lambda k: k < 13))
    assert (st, code) == ("untested", "shop_off_screen")


def test_should_not_blame_the_demo_when_the_hook_stops_giving_the_shops_position():
    steps = _steps([[USER_CARD]] * 12 + [[]] * 18)
    for st in steps[13:]:
        st.update(hook=None, lag_px=None, on_screen=False, hook_error="getShops(): hung: no answer within 2 s")
    st, pts, code, verdict = _manual(steps)
    assert (st, pts, code) == ("untested", None, "hook_lost_shop")
    assert "hung" in verdict and "17.8 s" in verdict


def test_should_say_the_hooks_position_does_not_match_the_pixels_when_the_scene_drifts_from_it():
    # A lying hook: the pointer sits where the hook says (lag 0), the scene under it moves on
    # 8 px a step, the card closes.
    st, pts, code, verdict = _manual(_steps([[USER_CARD]] * 3 + [[]] * 27, lag=0.0, residual=(8.0, 0.0), dx=0))
    assert (st, pts, code) == ("untested", None, "hook_position_mismatch")
    assert "does not match the card or pixels" in verdict
    # the same drift on flat or unmatched patches is not counted: then it is the demo's card
    for kw in ({"texture": 1.0}, {"score": 0.3}):
        assert (
            _manual(_steps([[USER_CARD]] * 3 + [[]] * 27, lag=0.0, residual=(8.0, 0.0), dx=0, **kw))[2]
            == "closed_on_shop"
        )


def test_should_track_a_patch_to_where_the_scene_moved_with_sub_pixel_residuals():
    from skycity_bench.probes.shops.shop_pixels import follow_residual, patch_at

    rng = np.random.default_rng(3)
    world = (rng.random((200, 400)) * 255).astype(np.uint8)
    world = np.stack([world] * 3, axis=2)
    world = __import__("cv2").GaussianBlur(world, (5, 5), 1.2)
    a = world[:, 100:300]  # frame 1: viewport x = world x - 100
    b = world[:, 93:293]  # frame 2: the scene moved 7 px right
    prev = patch_at(a, (0, 0), (100.3, 80.0), 20)
    honest = follow_residual(prev, (100.3, 80.0), b, (0, 0), (107.3, 80.0))
    assert honest["score"] > 0.95 and abs(honest["residual"][0]) < 0.6 and abs(honest["residual"][1]) < 0.6
    liar = follow_residual(prev, (100.3, 80.0), b, (0, 0), (100.3, 80.0))  # the hook says it stayed
    assert liar["residual"][0] == pytest.approx(7, abs=0.6)
    assert patch_at(a, (0, 0), (5, 5), 20) is None  # too near the edge


def test_should_name_the_failed_placement_checks():
    d = copy.deepcopy(GOOD)
    for p in d["hover"]["per_shop"]:
        p["placement"]["min_contrast"] = 3.0
    r = score("shops.card_placement", d)
    assert (r.status, r.points, r.evidence["failed"]) == ("partial", 1, ["contrast"])
    for p in d["hover"]["per_shop"]:
        p["placement"].update(rect=[900, 0, 200, 80])  # right edge at 1100 > 960
    assert score("shops.card_placement", d).points == 0


def test_should_give_touch_half_for_some_shops():
    d = copy.deepcopy(GOOD)
    for p in d["touch"]["per_shop"][2:]:
        p["opened"] = False
    r = score("shops.touch", d)
    assert (r.status, r.points) == ("partial", 1)


def test_should_keep_only_usable_shops_from_the_hook():
    from skycity_bench.probes.shops.shop_page import valid_shops

    shops, problems = valid_shops(
        [
            {"id": 1, "name": "云顶茶馆", "x": 10, "y": 20},
            {"id": "b", "x": 1, "y": 2},
            "junk",
            {"id": "c", "name": "x", "x": "nan", "y": 3},
        ]
    )
    assert shops == [{"id": "1", "name": "云顶茶馆", "x": 10.0, "y": 20.0}]
    assert len(problems) == 3
    assert valid_shops(None)[0] == [] and "not a list" in valid_shops(None)[1][0]


def test_should_measure_placement_from_the_card_box_and_its_styles():
    from skycity_bench.probes.shops.hover_touch import placement

    card = {
        "rect": [900, 100, 200, 80],
        "texts": [
            {
                "text": "云顶茶馆",
                "font_px": 16,
                "color": [26, 26, 26, 1],
                "opacity": 1,
                "backdrop": [255, 255, 255],
                "rect": [910, 110, 80, 20],
            },
            {
                "text": "小字",
                "font_px": 10,
                "color": [150, 150, 150, 1],
                "opacity": 1,
                "backdrop": [255, 255, 255],
                "rect": [910, 140, 80, 14],
            },
        ],
    }
    m = placement([card], {"x": 850, "y": 140}, None, (1000, 500))
    assert m["rect"] == [900, 100, 200, 80] and m["viewport"] == [1000, 500]  # right edge at 1100 > 1000
    assert m["distance_px"] == 50 and m["distance_ratio"] == pytest.approx(50 / (1000**2 + 500**2) ** 0.5, abs=1e-4)
    assert m["min_font_px"] == 10
    assert m["min_contrast"] == pytest.approx(contrast_ratio([150] * 3, [255] * 3), abs=0.01)


def test_should_give_every_manual_priority_outcome_a_status_and_a_verdict():
    from skycity_bench.judging.scorers._shop_manual_priority import MANUAL_STATUS, MANUAL_VERDICT, Manual
    from skycity_bench.judging.scorers.shops import _ITEM, _SHOP, Item, Shop

    assert set(MANUAL_STATUS) == set(Manual) == set(MANUAL_VERDICT)
    assert set(_SHOP) == set(Shop) and set(_ITEM) == set(Item)  # every code has its prose
