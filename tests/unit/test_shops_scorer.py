"""The shop scorer judging raw figures recorded by real runs of the shop fixtures (no browser).

tests/fixtures/shops/recorded/*.json hold the `shops` probe's data as a real run wrote it
(tests/fixtures/shops/record.py) and the items that run scored. The probe decides nothing,
so the scorer alone must give the same items from the same figures, and a changed threshold
in the scenario's `scorers: shops:` section must change the verdict the way the figures say
(what `rescore` does with a stored run).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from skycity_bench.errors import UserError
from skycity_bench.report import ProbeRecord
from skycity_bench.rubric import load_rubric
from skycity_bench.scenario import DEFAULT_SCENARIO, load_scenario
from skycity_bench.scorers import ScoreInput, all_scorers
from skycity_bench.scorers.shops import ShopsScorerSettings

ROOT = Path(__file__).resolve().parents[2]
RECORDED = ROOT / "tests" / "fixtures" / "shops" / "recorded"
ITEMS = ("shops.hover", "shops.auto_display", "shops.manual_priority", "shops.card_placement", "shops.touch")


def recorded(name: str) -> dict:
    return json.loads((RECORDED / f"{name}.json").read_text(encoding="utf-8"))


def judge(data: dict, item: str, **thresholds):
    """Score one item from recorded figures, under the scenario's thresholds with `thresholds`
    changed (validated by the scenario loader, as a scenario file's would be)."""
    rubric = load_rubric()
    sc = load_scenario(None, {"scorers": {"shops": thresholds}} if thresholds else None)
    inp = ScoreInput(item=rubric.item(item), rubric=rubric, scenario=sc,
                     records={"shops": ProbeRecord(name="shops", data=data)})
    return all_scorers()[item].fn(inp)


@pytest.mark.parametrize("name", sorted(p.stem for p in RECORDED.glob("*.json")))
def test_should_give_the_items_the_live_run_gave_from_its_recorded_figures(name):
    rec = recorded(name)
    got = {i: (r.status, r.points) for i in ITEMS for r in [judge(rec["data"], i)]}
    assert got == {i: (v["status"], v["points"]) for i, v in rec["items"].items()}
    # ... and what the fixture's truth file pins (true by construction of the fixture)
    truth = json.loads((ROOT / "tests" / "fixtures" / "shops" / f"{name}.truth.json").read_text(encoding="utf-8"))
    for key, want in truth["expect"].items():
        parts = key.split(".")
        if parts[0] == "items" and parts[-1] in ("points", "status"):
            r = got[".".join(parts[1:-1])]
            assert r[0 if parts[-1] == "status" else 1] == want, key


def test_should_rejudge_the_close_time_under_a_new_threshold():
    data = recorded("correct")["data"]
    gone = [p["closed_after_ms"] for p in data["hover"]["per_shop"]]
    assert all(g is not None for g in gone)
    # a threshold just below the slowest recorded close fails exactly the shops that closed later
    tighter = max(gone) - 1
    r = judge(data, "shops.hover", close_within_ms=tighter)
    late = sorted(p["id"] for p in data["hover"]["per_shop"] if p["closed_after_ms"] > tighter)
    assert late and sorted(r.evidence["failed"]) == late
    assert all(r.evidence["failed"][i] == f"card still open {tighter:g} ms after leaving" for i in late)
    assert r.points == 6 - len(late)
    assert {x["id"]: x["outcome"] for x in r.evidence["per_shop"]}[late[0]] == "stayed_open"


def test_should_rejudge_a_canvas_drawn_card_from_its_changed_region():
    data = recorded("canvas_cards")["data"]
    areas = [p["canvas_card"]["across_hover"]["area"] for p in data["hover"]["per_shop"]]
    r = judge(data, "shops.hover")
    assert (r.status, r.points, r.evidence["outcome"]) == ("review", None, "canvas_review")
    # the same figures, with a drawn card required to be larger than any change the hovers made:
    # no card at all, so the hover item is judged (0), not sent to reviewers
    r = judge(data, "shops.hover", canvas_card_min_area_px=max(areas) + 1)
    assert (r.status, r.points, r.evidence["outcome"]) == ("fail", 0, "scored")
    assert set(r.evidence["failed"].values()) == {"no card opened"}


def test_should_rejudge_the_following_pointers_lag_and_the_hooks_drift():
    data = recorded("moving_shop")["data"]
    lag = data["manual"]["follow"]["max_lag_px"]
    assert judge(data, "shops.manual_priority").evidence["outcome"] == "held"
    # a tolerance below the lag the pointer really had: the bench is blamed only if the card
    # was lost there; it held, so the verdict stays
    assert judge(data, "shops.manual_priority", follow_max_lag_px=lag / 2).evidence["outcome"] == "held"
    r = judge(recorded("moving_shop_auto_wins")["data"], "shops.manual_priority", follow_max_lag_px=lag / 100)
    # the user's card never came: with the pointer counted off the shop, that says nothing
    assert (r.status, r.evidence["outcome"]) == ("untested", "pointer_left_shop")


def test_should_rejudge_readability_under_a_stricter_contrast():
    data = recorded("correct")["data"]
    lowest = min(p["placement"]["min_contrast"] for p in data["hover"]["per_shop"])
    assert judge(data, "shops.card_placement").status == "pass"
    r = judge(data, "shops.card_placement", min_contrast=min(21, lowest + 0.5))
    assert (r.status, r.evidence["failed"]) == ("partial", ["contrast"])


def test_should_read_every_threshold_from_the_scenario_file_and_nothing_else():
    section = yaml.safe_load(DEFAULT_SCENARIO.read_text(encoding="utf-8"))["scorers"]["shops"]
    assert set(section) == set(ShopsScorerSettings.model_fields)
    assert all(f.is_required() for f in ShopsScorerSettings.model_fields.values()), "no fallback in code"


def test_should_refuse_a_scenario_missing_a_shop_threshold(tmp_path):
    raw = yaml.safe_load(DEFAULT_SCENARIO.read_text(encoding="utf-8"))
    del raw["scorers"]["shops"]["min_contrast"]
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    with pytest.raises(UserError) as e:
        load_scenario(p)
    assert "scorers.shops" in str(e.value) and "min_contrast" in str(e.value) and "\n" not in str(e.value)
