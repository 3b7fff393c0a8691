"""The city-name judgement (scorers/city_name.py) on the tour's raw checks, no browser: the
probe only records how much of the name's clip changed when it was hidden and what the
canvas text log saw; the scorer decides, under the scenario's `scorers: city_name:`."""

from __future__ import annotations

import pytest

from skycity_bench.inputs.scenario import load_scenario
from skycity_bench.judging.scorers.city_name import CityName, judge


def look(t_s, share, *, drawn=False, offscreen=False, dom=1):
    return {
        "t_s": t_s,
        "dom_elements": dom,
        "changed_share": share,
        "diff_level": 40,
        "elements": [],
        "canvas": {
            "calls": int(drawn),
            "full_name": drawn,
            "all_characters": drawn,
            "onscreen": drawn and not offscreen,
            "offscreen_only": drawn and offscreen,
            "where": None,
        },
    }


def settings(**over):
    return load_scenario(None, {"scorers": {"city_name": over}} if over else None).scorer_settings("city_name")


def test_should_see_page_text_whose_hiding_changes_enough_of_its_clip():
    v = judge([look(51.5, 0.002), look(55.0, 0.12)], "云顶城", settings())
    assert (v["visible"], v["code"], v["seen_at_s"]) == (True, "page_text", [55.0])
    assert v["reason"] == "'云顶城' is visible as page text at 55 s"


def test_should_rejudge_the_same_checks_under_a_new_share():
    checks = [look(51.5, 0.004), look(55.0, 0.004)]
    assert judge(checks, "X", settings())["code"] == "missing"  # 0.4 % < 1 %
    assert judge(checks, "X", settings(name_min_changed_share=0.003))["code"] == "page_text"


@pytest.mark.parametrize(
    "checks, code, visible",
    [
        ([look(52, 0.0, drawn=True)], CityName.CANVAS, None),
        ([look(52, 0.0, drawn=True, offscreen=True)], CityName.CANVAS_OFFSCREEN, None),
        ([look(52, 0.0, dom=0)], CityName.MISSING, False),
    ],
)
def test_should_leave_canvas_text_to_reviewers_and_call_nothing_missing(checks, code, visible):
    v = judge(checks, "X", settings())
    assert (v["code"], v["visible"]) == (code.value, visible)
    assert v["reason"]


def test_should_say_so_when_the_hook_gives_no_name():
    v = judge([], None, settings())
    assert (v["visible"], v["code"], v["source"]) == (None, "no_name", None)
    assert "no cityName" in v["reason"]


def test_should_say_the_page_text_exists_but_is_not_seen():
    v = judge([look(51.5, 0.0)], "X", settings())
    assert v["code"] == "missing" and "hidden, covered or outside the viewport" in v["reason"]
