"""The density probe on a slowly rendering page samples fewer instants, the rubric's first
(probes/density.py fit_times): what fits in its share of the run's budget, said in the
evidence, instead of running past it."""

from skycity_bench.probes.density import fit_times, sample_times

MAIN = [20.0, 25.0, 30.0, 35.0]
TIMES = sample_times(MAIN, 20, 35, 1.0)


def test_should_keep_every_instant_when_they_fit():
    kept, note = fit_times(TIMES, MAIN, 11, 200, 0.02, 900)
    assert kept == TIMES and note is None


def test_should_keep_the_rubric_instants_first_then_spread_the_rest_on_a_slow_page():
    # 3 frames a second: 11 frames a sample cost ~4.3 s to render, ~10 s a sample in all
    kept, note = fit_times(TIMES, MAIN, 11, 200, 0.33, 200)
    assert set(MAIN) <= set(kept) and len(kept) < len(TIMES)
    assert kept == sorted(kept) and note["kept"] == kept and note["planned"] == TIMES
    assert "share" in note["why"] and note["frame_cost_ms"] == 330.0


def test_should_keep_at_least_the_first_rubric_instant_however_little_is_left():
    kept, note = fit_times(TIMES, MAIN, 11, 200, 0.5, 10)
    assert kept == [20.0] and note is not None
