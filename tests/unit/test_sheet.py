"""Aggregation: mean of two, a third reviewer when two are more than one level apart, the
median of three, single-reviewer items marked, no total while anything is missing, and a
ranking only across comparable environments. Point values come from the rubric."""

import json

from skycity_bench.inputs.rubric import load_rubric
from skycity_bench.judging.sheet_totals import Review, aggregate_item, build_sheet, rank, to_csv, to_json, to_markdown
from tests.review_reports import ENV

R = load_rubric()


def pts(item_id, percent):
    return R.level(percent).share * R.item(item_id).points


def grade(who, item_id, percent, at="2026-01-01T00:00:00"):
    return Review(who, item_id, "grade", pts(item_id, percent), R.level(percent).share, created_at=at)


def full_report(env=None, untested=()):
    items = {}
    for it in R.items:
        if it.graded:
            items[it.id] = {"points": None, "status": "review", "max": it.points}
        elif it.id in untested:
            items[it.id] = {"points": None, "status": "untested", "max": it.points, "evidence": {"reason": "no probe"}}
        else:
            items[it.id] = {"points": it.points, "status": "pass", "max": it.points}
    return {"items": items, "environment": env or ENV}


def all_grades(who, percent):
    return [grade(who, it.id, percent) for it in R.items if it.graded]


def test_should_take_the_mean_of_two_reviewers_one_level_apart():
    line = aggregate_item(
        R, R.item("camera.motion"), None, [grade("a", "camera.motion", 100), grade("b", "camera.motion", 75)]
    )
    assert line.method == "mean" and line.missing is None
    assert line.points == (pts("camera.motion", 100) + pts("camera.motion", 75)) / 2
    assert [r["reviewer"] for r in line.raw] == ["a", "b"]


def test_should_ask_for_a_third_reviewer_when_two_are_more_than_one_level_apart():
    line = aggregate_item(
        R, R.item("camera.motion"), None, [grade("a", "camera.motion", 100), grade("b", "camera.motion", 50)]
    )
    assert line.points is None and "needs third reviewer" in line.flags
    assert "2 levels apart" in line.missing and "third reviewer" in line.missing


def test_should_take_the_median_of_three():
    line = aggregate_item(
        R,
        R.item("camera.motion"),
        None,
        [grade("a", "camera.motion", 100), grade("b", "camera.motion", 25), grade("c", "camera.motion", 75)],
    )
    assert line.method == "median" and line.points == pts("camera.motion", 75)


def test_should_mark_a_single_reviewer_item_and_count_only_each_reviewers_latest_score():
    line = aggregate_item(
        R,
        R.item("visual.composition"),
        None,
        [
            grade("a", "visual.composition", 25, "2026-01-01T00:00:00"),
            grade("a", "visual.composition", 75, "2026-01-02T00:00:00"),
        ],
    )
    assert line.points == pts("visual.composition", 75) and line.flags == ["single reviewer"]


def test_should_keep_the_bench_value_beside_an_override_with_its_reason():
    item = R.item("shops.touch")
    o = Review("a", item.id, "override", item.points * R.objective_partial_share, reason="tap works on the recording")
    line = aggregate_item(R, item, {"points": 0.0, "status": "fail"}, [o])
    assert line.points == item.points * R.objective_partial_share and line.method == "override"
    assert line.bench_points == 0.0 and line.raw[0]["reason"] == "tap works on the recording"


def test_should_give_no_total_while_an_item_is_untested_or_waiting():
    s = build_sheet(
        R, "c-000000000001", full_report(untested=("shops.touch",)), all_grades("a", 75) + all_grades("b", 75)
    )
    assert s.total is None and any(m.startswith("shops.touch: untested") for m in s.missing)
    row = next(r for r in s.rows if r.row_id == "shops")
    assert row.subtotal is None
    assert next(r for r in s.rows if r.row_id == "visual").subtotal == sum(
        pts(i, 75) for i in next(x for x in R.rows if x.id == "visual").items
    )
    s2 = build_sheet(R, "c-000000000001", full_report(), all_grades("a", 75))
    assert s2.total == round(sum(pts(i.id, 75) if i.graded else i.points for i in R.items), 1)
    assert s2.missing == []


def test_should_rank_only_across_comparable_environments():
    other = dict(ENV, viewport="1280x720")
    a = build_sheet(R, "c-00000000000a", full_report(), all_grades("x", 100))
    b = build_sheet(R, "c-00000000000b", full_report(), all_grades("x", 50))
    c = build_sheet(R, "c-00000000000c", full_report(env=other), all_grades("x", 75))
    d = build_sheet(R, "c-00000000000d", full_report(untested=("shops.touch",)), all_grades("x", 75))
    rk = rank([a, b, c, d])
    assert [[s.candidate_id for s in g] for g in rk.groups] == [["c-00000000000a", "c-00000000000b"]]
    why = dict((s.candidate_id, w) for s, w in rk.not_ranked)
    assert "viewport" in why["c-00000000000c"] and "missing" in why["c-00000000000d"]


def test_should_render_md_csv_and_json_with_subtotals_and_the_missing_list():
    s = build_sheet(
        R, "c-00000000000a", full_report(), [grade("a", "camera.motion", 100), grade("b", "camera.motion", 50)]
    )
    md = to_markdown([s], rank([s]))
    assert "**total: —**" in md and "waiting for a third reviewer" in md and "subtotal" in md
    csv_text = to_csv([s])
    assert "c-00000000000a,,camera,subtotal" in csv_text and ",total," in csv_text
    doc = json.loads(to_json([s]))
    assert doc["candidates"][0]["total"] is None and "label" not in doc["candidates"][0]
