"""The probes' shares of the run's budget (browser/clock_budget.RunBudget.share), the reason a
probe past its share gives, the progress estimate bounded by the budget, and the recording's
fewer frames on a slow page: constructed cases, no browser."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from skycity_bench.browser.clock_budget import ClockLog, RunBudget
from skycity_bench.common.run_progress import Progress, RunProgress
from skycity_bench.inputs.scenario import Timeouts, load_scenario
from skycity_bench.probes.recording import Settings, adapt


def _budget(run_s: float = 900, cost_ms: float | None = None) -> RunBudget:
    b = RunBudget(Timeouts(run_s=run_s, finish_reserve_s=25))
    if cost_ms is not None:
        b.pages.append(ClockLog("1920x1080", samples_ms=[cost_ms]))
    return b


def test_a_fast_page_keeps_what_is_left_and_its_own_budget_decides():
    s = _budget(cost_ms=16.7).share("shops", own_s=425, pending_s=2440, realtime=False)
    assert not s.binding and s.seconds == pytest.approx(875, abs=1)


def test_a_slow_page_shares_what_is_left_by_the_probes_own_budgets():
    b = _budget(cost_ms=500)
    s = b.share("shops", own_s=425, pending_s=2440, realtime=False)
    assert s.binding and s.seconds == pytest.approx(875 * 425 / 2440, abs=1)
    assert b.shares["shops"] is s
    # a real-time probe's time does not grow with the frame cost: its own budget
    assert b.share("frame_pacing", own_s=254, pending_s=3094, realtime=True).seconds == pytest.approx(254)


def test_a_page_not_measured_is_treated_as_slow():
    s = _budget().share("packaging", own_s=75, pending_s=2440, realtime=False)
    assert s.binding and s.seconds < 30


def test_the_reason_names_the_pages_frame_cost_and_the_share():
    s = _budget(cost_ms=500).share("playback", own_s=175, pending_s=1660, realtime=False)
    assert s.reason() == (
        f"the page renders at 2.0 frames a second (500 ms a frame): playback could not finish in its "
        f"{s.seconds:.0f} s share of the 900 s budget"
    )
    assert "was not started" in s.reason(started=False)


def test_the_report_keeps_its_reserve():
    b = _budget(run_s=150)
    assert b.deadline == pytest.approx(b.started + 125)


def test_the_progress_estimate_never_passes_the_budget_nor_a_share():
    now = [0.0]
    view = RunProgress(Progress(), {"a": 1000.0, "b": 3000.0}, clock=lambda: now[0], ends_at=100.0)
    assert view.left_s() == pytest.approx(100.0)
    view.probe("a")
    view.set_share("a", 30.0)
    now[0] = 10.0
    assert view.left_s() <= 90.0


def test_the_recording_takes_fewer_frames_on_a_slow_page_and_ends_inside_its_share():
    sc = load_scenario()
    s = Settings.model_validate(sc.probes["recording"])
    b = _budget(cost_ms=500)
    b.share("recording", own_s=1220, pending_s=1825, realtime=False)
    ctx = SimpleNamespace(browser=SimpleNamespace(budget=b), scenario=sc)
    got, note = adapt(ctx, s)
    assert note is not None and got.fps < s.fps and got.wall_budget_s < b.shares["recording"].seconds
    assert "500 ms a frame" in note["why"]
    fast = SimpleNamespace(browser=SimpleNamespace(budget=_budget(cost_ms=16.7)), scenario=sc)
    assert adapt(fast, s) == (s, None)


def test_a_share_is_set_from_the_time_left_now():
    b = _budget(cost_ms=500)
    b.started -= 800  # 75 s left for the probes
    assert b.share("density", own_s=605, pending_s=605, realtime=False).seconds == pytest.approx(75, abs=1)
    assert time.monotonic() < b.deadline


def test_a_probe_line_says_when_its_share_ends():
    notes: list[str] = []

    class Inner(Progress):
        def task(self, description: str, total: float, unit: str = "s"):
            class T:
                def update(self, completed: float, note: str = "") -> None:
                    notes.append(note)

                def close(self) -> None:
                    pass

            return T()

    now = [0.0]
    view = RunProgress(Inner(), {"recording": 1220.0}, clock=lambda: now[0], ends_at=875.0)
    p = view.probe("recording")
    view.set_share("recording", 240.0)
    p.task("recording: 65 s", 2000, unit="frames").update(10, note="10/2000 frames · 0.1/s · ETA 331 min 40 s")
    line = [n for n in notes if n.startswith("recording: 65 s")][-1]
    assert line.endswith("ETA 331 min 40 s · stops within 4 min 00 s (its share of the run)"), line
    assert notes[-1].endswith("about 4 min 00 s left"), notes[-1]  # the run's line: the share, not 331 min
