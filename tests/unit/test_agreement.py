"""Reviewer agreement: Krippendorff's alpha (ordinal) per item and overall, with a seeded
bootstrap interval, from the sheet's raw scores; checked on Krippendorff's published example
and against the `krippendorff` package on random data."""

import json
import math

import krippendorff
import numpy as np
import pytest

from skycity_bench.analysis import agreement as ag
from skycity_bench.inputs.rubric import load_rubric
from skycity_bench.judging.sheet_totals import Review, build_sheet, hide_reviews, to_csv, to_json, to_markdown

R = load_rubric()
GRADED = [i.id for i in R.items if i.graded]
NAN = float("nan")

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers
# (rows) × 12 units (columns), missing values as NaN. Published: nominal .743, ordinal .815,
# interval .849.
PUBLISHED = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
]


def units_of(matrix):
    return [[v for v in col if not math.isnan(v)] for col in np.array(matrix, dtype=float).T]


@pytest.mark.parametrize("level,published", [("ordinal", 0.815), ("nominal", 0.743), ("interval", 0.849)])
def test_should_give_krippendorffs_published_values(level, published):
    units = units_of(PUBLISHED)
    assert round(ag.package_alpha(units, level), 3) == published  # the point estimate shown
    assert round(ag.alpha_from_units(units, level), 3) == published  # the bootstrap's own formula
    assert round(krippendorff.alpha(PUBLISHED, level_of_measurement=level), 3) == published


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("level", ["ordinal", "nominal", "interval"])
def test_should_compute_the_same_alpha_as_the_package_on_random_data(seed, level):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 5, 30)
    data = np.clip(truth + rng.integers(-1, 2, (3, 30)), 0, 4).astype(float)
    data[rng.random(data.shape) < 0.2] = np.nan  # some scores missing
    units = units_of(data)
    ours = ag.alpha_from_units(units, level, domain=[0, 1, 2, 3, 4])
    theirs = krippendorff.alpha(data, level_of_measurement=level, value_domain=[0, 1, 2, 3, 4])
    assert ours == pytest.approx(theirs, abs=1e-9)


def test_should_give_a_reproducible_bootstrap_interval_around_the_estimate():
    units = units_of(PUBLISHED)
    cands = [f"u{i}" for i in range(len(units))]
    a = ag.measure("x", units, cands)
    assert a == ag.measure("x", units, cands)  # seeded: the same every time
    assert a.low is not None and a.low <= a.alpha <= a.high <= 1
    other = ag.measure("x", units, cands, seed=ag.BOOTSTRAP_SEED + 1)
    assert (other.low, other.high) != (a.low, a.high) and other.alpha == a.alpha
    # one unit has a single value: not pairable, not counted
    assert a.candidates == 11 and a.units == 11 and a.scores == 40


def test_should_say_undefined_when_nothing_can_disagree():
    same = ag.measure("x", [[0.75, 0.75], [0.75, 0.75, 0.75]], ["a", "b"])
    assert same.alpha is None and same.verdict == "undefined" and same.low is None
    lone = ag.measure("x", [[0.5], [1.0]], ["a", "b"])
    assert lone.alpha is None and lone.candidates == 0
    assert ag.measure("x", [], []).alpha is None


def grade(who, item_id, percent):
    return Review(
        who,
        item_id,
        "grade",
        R.level(percent).share * R.item(item_id).points,
        R.level(percent).share,
        created_at="2026-01-01T00:00:00",
    )


def report():
    return {
        "items": {
            it.id: ({"points": None, "status": "review"} if it.graded else {"points": it.points, "status": "pass"})
            for it in R.items
        }
    }


def sheets_with(levels_a, levels_b, n=8):
    """n candidates; on candidate k reviewer a gives levels_a(k), b gives levels_b(k) on every graded item."""
    out = []
    for k in range(n):
        reviews = [grade("a", i, levels_a(k)) for i in GRADED] + [grade("b", i, levels_b(k)) for i in GRADED]
        out.append(build_sheet(R, f"c-{k:012x}", report(), reviews))
    return out


LEVELS = [100, 75, 50, 25, 0]


def test_should_mark_agreeing_reviewers_good_and_flag_disagreeing_ones():
    agree = ag.agreement(sheets_with(lambda k: LEVELS[k % 5], lambda k: LEVELS[k % 5]))
    assert agree.overall.alpha == 1.0 and agree.overall.verdict == "good"
    assert [a.item_id for a in agree.items] == GRADED and all(a.verdict == "good" for a in agree.items)
    assert agree.overall.candidates == 8 and agree.items[0].candidates == 8
    # b reverses a's order: systematic disagreement
    apart = ag.agreement(sheets_with(lambda k: LEVELS[k % 5], lambda k: LEVELS[4 - k % 5]))
    assert apart.overall.alpha < ag.RELIABLE_FROM and apart.overall.flagged
    assert all(a.note == "reviewers disagree; the mean is not reliable" for a in apart.items)
    # one level apart now and then: between
    near = ag.agreement(sheets_with(lambda k: LEVELS[k % 5], lambda k: LEVELS[min(4, k % 5 + (k % 3 == 0))], n=15))
    assert near.overall.alpha is not None and ag.RELIABLE_FROM <= near.overall.alpha < 1


def test_should_count_nothing_a_reviewer_may_not_see():
    sheets = sheets_with(lambda k: LEVELS[k % 5], lambda k: LEVELS[k % 5])
    hidden = [hide_reviews(s, "hidden") for s in sheets[:5]] + sheets[5:]
    a = ag.agreement(hidden)
    assert a.overall.candidates == 3 and all(x.candidates == 3 for x in a.items)


def test_should_put_the_agreement_in_every_export():
    sheets = sheets_with(lambda k: LEVELS[k % 5], lambda k: LEVELS[4 - k % 5])
    md = to_markdown(sheets)
    assert "## agreement (Krippendorff's alpha, ordinal)" in md
    assert "⚠ reviewers disagree; the mean is not reliable" in md and "| **overall** |" in md
    rows = [r for r in to_csv(sheets).splitlines() if r.startswith("agreement,")]
    assert len(rows) == 1 + len(GRADED) and "krippendorff-alpha-ordinal" in rows[0] and "8 candidates" in rows[0]
    doc = json.loads(to_json(sheets))["agreement"]
    assert doc["measure"] == "krippendorff-alpha-ordinal" and doc["bootstrap"]["seed"] == ag.BOOTSTRAP_SEED
    assert doc["overall"]["alpha"] < ag.RELIABLE_FROM and doc["overall"]["candidates"] == 8
    assert doc["overall"]["low"] <= doc["overall"]["alpha"] <= doc["overall"]["high"]
    assert {i["item_id"] for i in doc["items"]} == set(GRADED)
