"""Calibration's pure logic (skycity_bench/analysis/reviewer_calibration.py): level distances on the rubric's
ordinal scale, offset / mean absolute difference / n per reviewer and item, the flag above
one level, drift over the last N, anchors from a finalised sheet, the queue's interleaving
and the admin's marks on the sheet. No database."""

import pytest

from skycity_bench.analysis.reviewer_calibration import (
    FLAG_ABOVE_LEVELS,
    SPREAD,
    Anchor,
    Scale,
    Score,
    calibrate,
    figures,
    interleave,
    levels_from_sheet,
    mark_sheet,
)
from skycity_bench.inputs.rubric import load_rubric
from skycity_bench.judging.sheet_totals import Review, build_sheet

R = load_rubric()
GRADED = [i.id for i in R.items if i.graded]
SHARE = {lv.key: lv.share for lv in R.levels}


def test_the_scale_is_the_rubrics_five_levels_in_order_of_share():
    s = Scale(R)
    assert s.keys == ["missing", "poor", "fair", "good", "excellent"]
    assert [s.rank(k) for k in s.keys] == [0, 1, 2, 3, 4]
    assert s.rank("良好") == s.rank("good") == s.rank(0.75) == 3
    assert s.distance("excellent", "fair") == 2 and s.distance(0.25, "good") == -2 and s.distance("good", 0.75) == 0
    with pytest.raises(KeyError):
        s.rank(0.6)  # not a level's share


def test_figures_are_mean_signed_and_mean_absolute_level_differences():
    f = figures("x", [2, -2, 1])
    assert (f.n, f.offset, f.mad) == (3, pytest.approx(1 / 3, abs=1e-4), pytest.approx(5 / 3, abs=1e-4))
    assert f.flagged  # 1.67 levels off on average
    assert not figures("x", [1, -1, 1]).flagged  # exactly one level: not more than one
    assert figures("x", []).n == 0 and figures("x", []).offset is None and not figures("x", []).flagged
    assert FLAG_ABOVE_LEVELS == 1.0


def _scores(reviewer, levels: dict, at="2026-12-03T10:00:00", start=0):
    return [
        Score(reviewer, cid, item, SHARE[lv], f"{at}.{start + k:06d}", start + k)
        for k, ((cid, item), lv) in enumerate(levels.items())
    ]


def test_a_reviewer_two_levels_off_on_an_item_is_flagged_and_one_on_the_anchors_is_not():
    item, other = GRADED[0], GRADED[1]
    anchors = [Anchor("c-a1", item, "good"), Anchor("c-a2", item, "fair"), Anchor("c-a1", other, "good")]
    on = _scores("ann", {("c-a1", item): "good", ("c-a2", item): "fair", ("c-a1", other): "good"})
    off = _scores("bob", {("c-a1", item): "poor", ("c-a2", item): "missing", ("c-a1", other): "excellent"})
    rep = calibrate(R, anchors, on + off, drift_last=20)
    ann, bob = rep.of("ann"), rep.of("bob")
    assert ann.flagged_items == [] and not ann.flagged
    assert ann.items[0].offset == 0 and ann.items[0].mad == 0 and ann.items[0].n == 2
    assert bob.flagged_items == [item]  # -2 levels on both anchors of `item`
    b = {f.item_id: f for f in bob.items}
    assert (b[item].offset, b[item].mad, b[item].n) == (-2.0, 2.0, 2)
    assert (b[other].offset, b[other].mad, b[other].flagged) == (1.0, 1.0, False)
    assert bob.anchors_scored == 3 and bob.anchors_total == 3
    assert set(rep.marks()) == {("bob", item)} and "-2.00 levels" in rep.marks()[("bob", item)]


def test_drift_is_over_the_last_n_comparable_scores_against_the_other_reviewers_median():
    item = GRADED[0]
    cands = [f"c-{k:02d}" for k in range(10)]
    # ann and cid agree (good) everywhere; bob agrees on the first six, then drifts to poor
    ann = _scores("ann", {(c, item): "good" for c in cands})
    cid = _scores("cid", {(c, item): "good" for c in cands}, start=100)
    bob = _scores("bob", {(c, item): ("good" if k < 6 else "poor") for k, c in enumerate(cands)}, start=200)
    rep = calibrate(R, [], ann + cid + bob, drift_last=4)
    b = rep.of("bob")
    assert b.items == [] and b.overall.n == 0  # no anchors: no calibration figures
    assert (b.drift_overall.n, b.drift_overall.offset, b.drift_overall.mad) == (4, -2.0, 2.0)
    assert b.drift_flagged_items == [item]
    assert rep.marks() == {}  # drift alone marks no score (two disagreeing: who moved?)
    # over the last 10 the drift is diluted: 4 of 10 two levels off → 0.8 levels, not flagged
    wide = calibrate(R, [], ann + cid + bob, drift_last=10).of("bob")
    assert wide.drift_overall.mad == pytest.approx(0.8) and not wide.drift_items[0].flagged
    # ann's reference is the median of cid and bob: good on the first six, (good+poor)/2 after
    assert rep.of("ann").drift_overall.offset == pytest.approx(1.0)
    with pytest.raises(ValueError):
        calibrate(R, [], ann, drift_last=0)


def test_a_sheet_anchor_is_not_compared_with_the_scores_it_was_made_of():
    item = GRADED[0]
    a = Anchor("c-a1", item, "good", source="sheet", at="2026-12-03T11:00:00")
    before = Score("ann", "c-a1", item, SHARE["good"], "2026-12-03T10:00:00", 1)
    after = Score("new", "c-a1", item, SHARE["poor"], "2026-12-03T12:00:00", 2)
    rep = calibrate(R, [a], [before, after], drift_last=5)
    assert rep.of("ann") is None  # only its own basis: nothing to compare
    assert rep.of("new").items[0].offset == -2.0
    hand = calibrate(R, [Anchor("c-a1", item, "good", source="hand", at="2026-12-03T11:00:00")], [before], drift_last=5)
    assert hand.of("ann").items[0].n == 1  # a hand anchor is independent of earlier scores


def _sheet(levels_by_reviewer: dict[str, dict[str, str]], finalized=True):
    reviews = [
        Review(name, iid, "grade", R.item(iid).points * SHARE[lv], SHARE[lv], created_at=f"t{k}")
        for k, (name, lv_of) in enumerate(levels_by_reviewer.items())
        for iid, lv in lv_of.items()
    ]
    return build_sheet(R, "c-0123456789ab", None, reviews, finalized=finalized)


def test_levels_from_a_finalised_sheet_take_the_agreed_level_and_skip_a_split():
    a, b, c = GRADED[:3]
    s = _sheet(
        {"ann": {a: "good", b: "good", c: "excellent"}, "bob": {a: "good", b: "fair", c: "fair"}, "cid": {c: "fair"}}
    )
    levels, skipped = levels_from_sheet(R, s)
    assert levels[a] == "good"  # both said good
    assert levels[c] == "fair"  # median of excellent, fair, fair
    assert b not in levels and "split between fair and good" in skipped[b]
    assert all(i in skipped for i in GRADED[3:])  # nobody scored them
    with pytest.raises(ValueError):
        levels_from_sheet(R, _sheet({"ann": {a: "good"}}, finalized=False))


def test_interleave_puts_every_anchor_early_in_a_per_reviewer_order_and_keeps_the_rest():
    order = [f"c-{k:012d}" for k in range(20)]
    anchors = [order[17], order[3], order[11]]
    seen_places = set()
    for seat in range(12):
        out = interleave(order, anchors, f"7:{seat}")
        assert sorted(out) == sorted(order)  # a permutation
        assert {order[17], order[3], order[11]} <= set(out[: SPREAD * len(anchors)])
        assert [c for c in out if c not in anchors] == [c for c in order if c not in anchors]
        assert out == interleave(order, anchors, f"7:{seat}")  # stable per reviewer
        seen_places.add(tuple(out.index(a) for a in anchors))
    assert len(seen_places) > 3  # not one fixed pattern
    assert interleave(order, [], "x") == order
    assert sorted(interleave(order[:4], ["c-missing", order[3]], "s")) == sorted(order[:4])


def test_mark_sheet_flags_the_lines_of_a_marked_reviewer_and_keeps_the_points():
    a, b = GRADED[:2]
    s = _sheet({"ann": {a: "good", b: "good"}, "bob": {a: "poor", b: "good"}})
    marked = mark_sheet(s, {("bob", a): "calibration: bob off"})
    la = next(i for i in marked.items if i.item_id == a)
    lb = next(i for i in marked.items if i.item_id == b)
    orig = next(i for i in s.items if i.item_id == a)
    assert "calibration: bob off" in la.flags and la.points == orig.points and la.method == orig.method
    assert [r.get("calibration") for r in la.raw] == [None, "calibration: bob off"]
    assert not any(f.startswith("calibration") for f in lb.flags)
    assert "calibration: bob off" not in orig.flags  # the input is not changed
    assert mark_sheet(s, {}) is s
