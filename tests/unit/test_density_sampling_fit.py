"""The density probe on a slowly rendering page (probes/_density_time.py): the frames its
replay renders, priced and corrected by the pace measured; the instants that fit in its time
(the rubric's first, at least one), fewer when the pace worsens; the densified samples that
fit, largest drop first; progress as time spent against the estimate of the rest; and the
evidence saying which instants were left out and why. A fake clock drives it."""

from skycity_bench.probes._density_time import FINISH_S, TimeFit, Walk, keys_of
from skycity_bench.probes.density import plan_pass, sample_times

MAIN = [20.0, 25.0, 30.0, 35.0]
TIMES = sample_times(MAIN, 20, 35, 1.0)
OTHERS = [-6, 15, -15, -30, 30, -60, 60]
VIEWS = [-120, -60, 60, 120]


def plan(times):
    return plan_pass(times, 6, OTHERS, True, VIEWS)


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def fit_of(seconds: float, cost_s: float = 0.33, clock=None) -> TimeFit:
    clock = clock or Clock()
    return TimeFit(
        walk=Walk(cost_s, 100),
        deadline=clock() + seconds,
        main=set(MAIN),
        delta_frames=6,
        share_s=seconds,
        own_s=605,
        clock=clock,
    )


def test_should_count_coarse_steps_to_a_frame_before_each_key_and_one_fine_frame():
    w = Walk(0.5, 100)
    # 20 s from the start: a 17 ms step, then 100 ms steps to one frame before, then one frame
    assert w.frames([1200], 0) == 1 + 200 + 1
    # the next key 6 frames on: one coarse step of 83 ms... and the fine frame
    assert w.frames([1200, 1206], 0) == 202 + 3
    # a key one frame on is one fine frame
    assert w.frames([1201], 1200) == 1
    assert w.seconds([1200], 0, 1) == 202 * 0.5 + 0.15 + 4.0


def test_should_take_every_instant_when_they_fit():
    fit = fit_of(5000, cost_s=0.06)
    assert [p["t"] for p in fit.first_cut(plan(TIMES))] == TIMES
    note = fit.note(TIMES, TIMES, [], [])
    assert note["left_out"] == [] and note["time_s"] == 5000 and "16 of 16 instants" in note["why"]


def test_should_keep_the_rubric_instants_first_then_spread_the_rest_on_a_slow_page():
    fit = fit_of(300)
    kept = [p["t"] for p in fit.first_cut(plan(TIMES))]
    assert set(MAIN) <= set(kept) and len(kept) < len(TIMES) and kept == sorted(kept)
    # what it keeps fits in what it had, a quarter kept back for the densified samples
    assert fit.need_s(plan(kept), 0) <= (300 - FINISH_S) * 0.75
    note = fit.note(TIMES, kept, [], [])
    assert note["kept"] == kept and set(note["left_out"]) == set(TIMES) - set(kept)
    assert "share" in note["why"] and note["frame_cost_ms"] == 330.0


def test_should_keep_at_least_the_first_rubric_instant_however_little_is_left():
    fit = fit_of(20, cost_s=0.5)
    assert [p["t"] for p in fit.first_cut(plan(TIMES))] == [20.0]


def test_should_take_fewer_instants_when_the_pace_measured_is_slower_than_the_model():
    clock = Clock()
    fit = fit_of(600, clock=clock)
    kept = fit.first_cut(plan(TIMES))
    first, rest = kept[0], kept[1:]
    keys = keys_of([first], 6)
    model = fit.walk.seconds(keys, -1, 1)
    # the first sample took three times what the model gave
    clock.now += 3 * model
    fit.count(keys, -1, 1, 3 * model)
    assert abs(fit.pace - 3.0) < 1e-9
    left = fit.trim(rest, keys[-1], fit.reserve_s)
    assert len(left) < len(rest)
    # in what is left, less the densified samples' reserve unless only rubric instants are kept
    got = {p["t"] for p in left}
    assert fit.need_s(left, keys[-1]) <= fit.left_s() - (0 if got <= set(MAIN) else fit.reserve_s)
    # the rubric's instants go last: none other is kept while one of them is left out
    assert got <= set(MAIN) or set(MAIN[1:]) <= got, got


def test_should_take_the_densified_samples_that_fit_largest_drop_first():
    fit = fit_of(200)
    fit.open_s = 5.0
    # the largest drop's three first, then another's
    extra = plan([26.25, 26.5, 26.75, 21.25, 21.5, 21.75])
    kept = fit.densify_cut([extra[i] for i in (0, 1, 2, 3, 4, 5)])
    ts = [p["t"] for p in kept]
    assert ts == sorted(ts) and 26.25 in ts
    assert fit.need_s(kept, 0) <= fit.left_s() - fit.open_s
    # nothing fits when nothing is left
    assert fit_of(5).densify_cut(extra) == []


def test_should_report_progress_as_time_spent_against_the_estimate_of_the_rest():
    clock = Clock()
    fit = fit_of(600, clock=clock)
    clock.now += 90
    assert abs(fit.progress(270) - 0.25) < 1e-9
    assert fit.progress(0) == 1.0


def test_should_never_leave_out_a_rubric_instant_to_keep_time_for_densified_samples():
    clock = Clock()
    fit = fit_of(600, clock=clock)
    fit.first_cut(plan(TIMES))
    # late in the pass: the last rubric instant fits in what is left, not beside the reserve
    pending = plan([34.0, 35.0])
    pos = 30 * 60 + 120
    need = fit.need_s(plan([35.0]), pos)
    clock.now = fit.deadline - FINISH_S - need - 1
    assert fit.fit(pending, pos, fit.left_s() - fit.reserve_s, False) == []
    assert [p["t"] for p in fit.trim(pending, pos, fit.reserve_s)] == [35.0]
