"""The leaderboard's statistics: a simulation that checks the intervals are honest (coverage
of known true means and differences, false separations of equal systems), and small
constructed cases for the estimator, missing totals, variance components and rank ranges."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from skycity_bench.analysis.leaderboard_stats import (
    ScoreRow,
    expanded_tail,
    leaderboard,
    rows_from_records,
    student_t_quantile,
    variance_parts,
)
from skycity_bench.common.errors import UserError

# ---------------------------------------------------------------- simulation

TRUE_MEANS = {"north": 60.0, "south": 60.0, "east": 70.0, "west": 50.0}  # north = south: equal pair
SD_PROMPT, SD_SYSTEM_PROMPT, SD_SAMPLE, SD_RUN = 8.0, 5.0, 6.0, 3.0
SAMPLES, RUNS = 3, 2
ROUNDS = 200
SIM_RESAMPLES = 1000  # fewer than the CLI's 2000 to keep 200 rounds fast; coverage is unaffected


def simulated_round(rng: np.random.Generator) -> list[ScoreRow]:
    """One benchmark round: 6-10 prompts with shared prompt effects (mean 0), system-by-prompt
    effects (mean 0), sample noise and run (measurement) noise. Since the prompt-level effects
    have mean 0 over the prompt population, a system's true mean is its designed mean."""
    n_prompts = int(rng.integers(6, 11))
    names = list(TRUE_MEANS)
    mu = np.array([TRUE_MEANS[n] for n in names])[:, None, None, None]
    prompt = rng.normal(0, SD_PROMPT, n_prompts)[None, :, None, None]
    system_prompt = rng.normal(0, SD_SYSTEM_PROMPT, (len(names), n_prompts))[..., None, None]
    sample = rng.normal(0, SD_SAMPLE, (len(names), n_prompts, SAMPLES))[..., None]
    run = rng.normal(0, SD_RUN, (len(names), n_prompts, SAMPLES, RUNS))
    totals = mu + prompt + system_prompt + sample + run
    return [
        ScoreRow(names[s], f"p{p}", f"k{k}", f"r{r}", float(totals[s, p, k, r]))
        for s, p, k, r in np.ndindex(totals.shape)
    ]


def test_should_cover_true_means_and_differences_and_rarely_separate_equal_systems():
    """200 seeded rounds. Over other seeds of this design the rates lie near 0.93-0.985 for
    means and 0.95-0.995 for differences (false separations 0.01-0.05): 200 rounds carry about
    ±1.5 points of Monte Carlo noise, and differences err wide because resampling samples
    inside resampled prompts counts the sample spread twice; so another seed may touch a bound."""
    rng = np.random.default_rng(2)
    mean_hits = dict.fromkeys(TRUE_MEANS, 0)
    diff_hits = {pair: 0 for pair in itertools.combinations(TRUE_MEANS, 2)}
    false_separations = 0
    for round_no in range(ROUNDS):
        board = leaderboard(simulated_round(rng), resamples=SIM_RESAMPLES, seed=round_no)
        for s in board.systems:
            assert s.total.ci is not None
            mean_hits[s.system] += s.total.ci[0] <= TRUE_MEANS[s.system] <= s.total.ci[1]
        for p in board.pairs:
            assert p.ci is not None
            truth = TRUE_MEANS[p.a] - TRUE_MEANS[p.b]
            diff_hits[tuple(sorted((p.a, p.b), key=list(TRUE_MEANS).index))] += p.ci[0] <= truth <= p.ci[1]
            false_separations += {p.a, p.b} == {"north", "south"} and p.separated
    for name, hits in mean_hits.items():
        assert 0.90 <= hits / ROUNDS <= 0.99, (name, hits / ROUNDS)
    for pair, hits in diff_hits.items():
        assert 0.90 <= hits / ROUNDS <= 0.99, (pair, hits / ROUNDS)
    assert false_separations / ROUNDS <= 0.07


# ---------------------------------------------------------------- constructed data


def rows(spec: dict[str, dict[str, list[list[float | None]]]]) -> list[ScoreRow]:
    """system -> prompt -> samples -> runs, as ScoreRows (None = a missing total)."""
    return [
        ScoreRow(system, prompt, f"k{k}", f"r{r}", v)
        for system, prompts in spec.items()
        for prompt, samples in prompts.items()
        for k, runs in enumerate(samples)
        for r, v in enumerate(runs)
    ]


def separated_rows() -> list[ScoreRow]:
    rng = np.random.default_rng(5)
    return rows(
        {
            name: {f"p{p}": [[mu + rng.normal(0, 1)] for _ in range(3)] for p in range(6)}
            for name, mu in (("gold", 90.0), ("silver", 60.0), ("bronze", 30.0))
        }
    )


def test_should_weigh_prompts_equally_not_samples():
    board = leaderboard(
        rows(
            {
                "a": {"p1": [[10.0]], "p2": [[20.0], [20.0], [20.0]]},
                "b": {"p1": [[0.0], [0.0]], "p2": [[10.0, 30.0]]},
            }
        ),
        resamples=200,
    )
    by = {s.system: s for s in board.systems}
    assert by["a"].total.mean == pytest.approx(15.0)  # not 17.5 (the mean over candidates)
    assert by["b"].total.mean == pytest.approx(10.0)  # runs averaged inside their sample first
    assert board.pairs[0].diff == pytest.approx(5.0)


def test_should_count_missing_totals_and_never_read_them_as_zero():
    board = leaderboard(
        rows(
            {
                "a": {"p1": [[50.0, None], [None]], "p2": [[70.0]]},
                "b": {"p1": [[40.0]], "p2": [[60.0], [None, None]]},
            }
        ),
        resamples=200,
    )
    by = {s.system: s for s in board.systems}
    assert by["a"].total.mean == pytest.approx(60.0)
    assert (by["a"].missing, by["a"].missing_candidates, by["a"].samples) == (2, 1, 2)
    assert (by["b"].missing, by["b"].missing_candidates, by["b"].samples) == (2, 1, 2)
    assert by["b"].total.mean == pytest.approx(50.0)


def test_should_refuse_a_single_prompt_and_give_no_interval_under_two_prompts():
    with pytest.raises(UserError, match="single prompt"):
        leaderboard(rows({"a": {"p1": [[1.0], [2.0]]}, "b": {"p1": [[3.0]]}}))
    board = leaderboard(
        rows({"a": {"p1": [[50.0], [52.0]], "p2": [[60.0], [58.0]]}, "lonely": {"p1": [[40.0], [45.0]]}}),
        resamples=200,
    )
    lonely = next(s for s in board.systems if s.system == "lonely")
    assert lonely.total.ci is None and lonely.rank_range is None and "fewer than 2 prompts" in (lonely.total.note or "")
    doc = board.to_dict()
    entry = next(s for s in doc["systems"] if s["system"] == "lonely")
    assert entry["ci"] is None and entry["note"]
    pair = doc["pairs"][0]
    assert pair["ci"] is None and pair["separated"] is False and pair["prompts"] == 1


def test_should_split_measurement_from_sample_and_prompt_variance():
    parts = variance_parts(
        {
            "A": {"s1": [10.0, 12.0], "s2": [14.0, 16.0]},
            "B": {"s1": [20.0, 22.0], "s2": [30.0, 32.0]},
        }
    )
    assert parts is not None
    # runs: 4 samples, each ±1 around its mean -> SS 8 over 4 df
    assert parts.measurement == pytest.approx(2.0)
    # sample means 11, 15 | 21, 31 -> SS 8 + 50 over 2 df = 29, less 2 * mean(1/runs) = 1
    assert parts.sample == pytest.approx(28.0)
    # prompt means 13, 26 -> variance 84.5, less (28 + 1) * mean(1/samples) = 14.5
    assert parts.prompt == pytest.approx(70.0)
    assert parts.contribution == pytest.approx({"measurement": 0.25, "sample": 7.0, "prompt": 35.0})
    assert "more samples" in parts.note and "more prompts" in parts.note
    noisy_runs = variance_parts(
        {"A": {"s1": [0.0, 20.0], "s2": [10.0, 10.0]}, "B": {"s1": [5.0, 25.0], "s2": [15.0, 15.0]}}
    )
    assert noisy_runs is not None and noisy_runs.sample == 0.0 and "more runs" in noisy_runs.note
    assert variance_parts({"A": {"s1": [1.0], "s2": [2.0]}, "B": {"s1": [3.0]}}) is None  # never measured twice


def test_should_give_clearly_separated_systems_a_single_rank_each():
    board = leaderboard(separated_rows(), resamples=2000, seed=3)
    assert [(s.system, s.rank, s.rank_range) for s in board.systems] == [
        ("gold", 1, (1, 1)),
        ("silver", 2, (2, 2)),
        ("bronze", 3, (3, 3)),
    ]
    assert all(p.separated and p.diff is not None and p.diff > 0 for p in board.pairs)


def test_should_overlap_rank_ranges_of_indistinguishable_systems():
    rng = np.random.default_rng(9)
    spec = {name: {f"p{p}": [[50 + rng.normal(0, 10)] for _ in range(2)] for p in range(8)} for name in "abc"}
    board = leaderboard(rows(spec), resamples=2000)
    assert all(s.rank_range is not None and s.rank_range[1] - s.rank_range[0] >= 1 for s in board.systems)


def test_should_write_the_json_shape_and_be_deterministic_for_a_seed():
    data = separated_rows()
    doc = leaderboard(data, resamples=500, seed=11).to_dict()
    assert doc == leaderboard(data, resamples=500, seed=11).to_dict()
    assert doc != leaderboard(data, resamples=500, seed=12).to_dict()
    assert (doc["seed"], doc["resamples"]) == (11, 500)
    for s in doc["systems"]:
        assert isinstance(s["system"], str) and isinstance(s["mean"], float)
        assert len(s["ci"]) == 2 and s["ci"][0] <= s["mean"] <= s["ci"][1]
        assert all(isinstance(r, int) for r in s["rank_range"]) and s["rank_range"][0] <= s["rank_range"][1]
        assert (s["prompts"], s["samples"]) == (6, 18)
    means = {s["system"]: s["mean"] for s in doc["systems"]}
    assert len(doc["pairs"]) == 3
    for p in doc["pairs"]:
        assert set(p) >= {"a", "b", "diff", "ci", "separated"}
        assert p["diff"] == pytest.approx(means[p["a"]] - means[p["b"]], abs=1e-3)
        assert isinstance(p["separated"], bool) and p["ci"][0] <= p["diff"] <= p["ci"][1]


def test_should_estimate_sheet_groups_beside_the_total():
    data = [
        ScoreRow(r.system, r.prompt, r.sample, r.run, r.total, {"packaging": None if r.total is None else r.total / 4})
        for r in separated_rows()
    ]
    board = leaderboard(data, resamples=500)
    for s in board.systems:
        g = s.groups["packaging"]
        assert s.total.mean is not None and s.total.ci is not None and g.ci is not None
        assert g.mean == pytest.approx(s.total.mean / 4)
        assert g.ci[0] == pytest.approx(s.total.ci[0] / 4) and g.ci[1] == pytest.approx(s.total.ci[1] / 4)


def test_should_parse_records_and_name_the_line_of_a_bad_total():
    parsed = rows_from_records(
        [
            {"system": "a", "prompt": "p", "sample": "1", "run": "1", "total": " 61.5 ", "group:motion": "20"},
            {"system": "a", "prompt": "p", "sample": "2", "run": "1", "total": "", "group:motion": ""},
        ]
    )
    assert parsed[0].total == 61.5 and parsed[0].groups == {"motion": 20.0}
    assert parsed[1].total is None and parsed[1].groups == {"motion": None}
    with pytest.raises(UserError, match="line 3: total is not a number: 'n/a'"):
        rows_from_records(
            [
                {"system": "a", "prompt": "p", "sample": "1", "run": "1", "total": "1"},
                {"system": "a", "prompt": "p", "sample": "2", "run": "1", "total": "n/a"},
            ]
        )
    with pytest.raises(UserError, match="missing column"):
        rows_from_records([{"system": "a", "prompt": "p", "total": "1"}])


def test_should_widen_small_prompt_counts_with_student_t():
    assert student_t_quantile(0.95, 1) == pytest.approx(12.7062, abs=1e-3)
    assert student_t_quantile(0.95, 5) == pytest.approx(2.5706, abs=1e-3)
    assert student_t_quantile(0.95, 9) == pytest.approx(2.2622, abs=1e-3)
    assert expanded_tail(6) < expanded_tail(10) < expanded_tail(100) < 0.05
