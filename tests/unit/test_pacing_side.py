"""Which side took the time in late frames (judging/scorers/_pacing_side.py), on frame
records built so that the answer is known: the main thread's time per frame and the callbacks'
start lag decide, the rAF clock says which frames were late."""

from __future__ import annotations

import numpy as np

from skycity_bench.judging.scorers._pacing_side import MAIN, MIXED, RENDERING, late_side

VSYNC = 1000 / 60


def _late(n: int, every: int) -> np.ndarray:
    late = np.zeros(n - 1, bool)
    late[::every] = True
    return late


def test_should_name_the_main_thread_when_the_frames_before_late_ones_ran_long_script():
    late = _late(60, 3)
    main = [25.0] * 60  # 25 ms of script a frame: never fits
    got = late_side(late, main, None, VSYNC, 0.75, 2, 0.67)
    assert got["side"] == MAIN and got["main_thread"] == int(late.sum()) and got["rendering"] == 0
    assert got["main_ms_median_in_late"] == 25.0 and "main thread took the time" in got["sentence"]


def test_should_name_rendering_when_the_main_thread_was_done_early_in_late_frames():
    late = _late(60, 2)
    got = late_side(late, [3.0] * 60, np.zeros(60), VSYNC, 0.75, 2, 0.67)
    assert got["side"] == RENDERING and got["rendering"] == int(late.sum())
    assert "Rendering took the time" in got["sentence"]


def test_should_count_a_late_start_of_the_callbacks_as_the_main_threads():
    # Other tasks (a long timer) held the thread: the callbacks began 40 ms after the frame
    # time although the frame's own work was short.
    late = _late(40, 4)
    lag = np.zeros(40)
    lag[1:][late] = 40.0
    got = late_side(late, [2.0] * 40, lag, VSYNC, 0.75, 2, 0.67)
    assert got["side"] == MAIN
    # a lag under two display frames is also what a busy machine's scheduler gives any thread
    lag[1:][late] = 20.0
    assert late_side(late, [2.0] * 40, lag, VSYNC, 0.75, 2, 0.67)["side"] == RENDERING


def test_should_say_mixed_when_neither_side_holds_two_thirds():
    late = np.array([True, True, True, True, False])
    main = [30.0, 30.0, 2.0, 2.0, 2.0, 2.0]
    got = late_side(late, main, None, VSYNC, 0.75, 2, 0.67)
    assert got["side"] == MIXED and (got["main_thread"], got["rendering"]) == (2, 2)


def test_should_leave_frames_unknown_whose_closing_task_never_ran_and_say_nothing_without_data():
    late = np.array([True, True, False])
    got = late_side(late, [-1.0, -1.0, 2.0, 2.0], None, VSYNC, 0.75, 2, 0.67)
    assert got["unknown"] == 2 and got["side"] is None
    assert late_side(late, None, None, VSYNC, 0.75, 2, 0.67) is None  # reports before main_ms
    assert late_side(np.zeros(5, bool), [1.0] * 6, None, VSYNC, 0.75, 2, 0.67) is None  # nothing late
