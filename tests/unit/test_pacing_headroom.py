"""A lost tier flagged as possibly the machine's (scorers/frame_pacing.py `_machine_headroom`):
the real evidence of the tier-6 jank fixture, with the probe's headroom record and the
main-thread times set as each case needs; the tier itself never changes."""

from __future__ import annotations

import copy

from skycity_bench.inputs.rubric import find_rubric, load_rubric
from skycity_bench.inputs.scenario import Scenario
from skycity_bench.judging.score_items import score_report
from tests.golden_evidence import GOLDEN_DIR, as_report, load

GOLDEN = load(GOLDEN_DIR / "frame_pacing" / "jank_tier6.json")
LOW = {"viewport": "1920x1080", "frames": 90, "p95_ms": 68.4, "late_share": 0.16, "holds_60hz": False, "rule": "r"}


def _score(headroom: dict | None, main_ms: float | None, noise: list[str] | None = None):
    rep = _report(headroom, main_ms, noise)
    return rep.items["smoothness.frame_pacing"], rep.measurements["smoothness"]


def _report(headroom: dict | None, main_ms: float | None, noise: list[str] | None):
    g = copy.deepcopy(GOLDEN)
    data = g["probes"]["frame_pacing"]["data"]
    data["headroom"] = headroom
    if noise:
        data["noise"] = {**data["noise"], "too_noisy": noise, "cpu": {**data["noise"]["cpu"], "steal": 0.221}}
        data["passes"] = 2
    data["main_ms"] = None if main_ms is None else [main_ms] * len(data["raf_ms"])
    return score_report(
        as_report(g), Scenario.model_validate(g["scenario"]), load_rubric(find_rubric(g["rubric_id"])), None
    )


def test_should_flag_a_lost_tier_when_the_machine_lacked_headroom_and_rendering_took_the_time():
    item, m = _score(LOW, 2.0)
    assert m["tier"] == 6 and item.points == 6.0  # flagged, not rescored
    assert m["machine_bound"] is True and m["late_side"]["side"] == "rendering"
    assert "could not render a standard scene at 1920x1080" in item.evidence["machine_headroom"]
    assert "Flagged:" in item.evidence["summary"]


def test_should_not_flag_when_the_machine_had_headroom_or_the_page_took_the_time():
    _, roomy = _score({**LOW, "holds_60hz": True}, 2.0)
    assert "machine_bound" not in roomy and roomy["machine_headroom"]["holds_60hz"] is True
    item, busy = _score(LOW, 40.0)  # the page's own script filled every frame
    assert busy["late_side"]["side"] == "main_thread" and "machine_bound" not in busy
    assert "machine_headroom" not in item.evidence


STEAL = ["the hypervisor stole 22.1% of the CPU time (limit 2%)"]


def test_should_name_the_machine_when_the_pass_was_too_noisy_and_the_page_work_fit():
    item, m = _score({**LOW, "holds_60hz": True}, 2.0, STEAL)
    assert m["tier"] == 6 and item.points == 6.0  # flagged, not rescored
    assert m["machine_bound"] is True and m["late_side"]["side"] == "machine"
    assert item.evidence["late_side"].startswith("The machine took the time") and "22.1%" in item.evidence["late_side"]
    assert "may be the machine's" in item.evidence["summary"]
    from skycity_bench.batch.batch_summary import machine_flag

    assert machine_flag(_report({**LOW, "holds_60hz": True}, 2.0, STEAL)) == {"machine_bound": "was too noisy"}


def test_should_keep_charging_the_page_on_a_noisy_machine_when_its_script_filled_the_frames():
    item, m = _score(LOW, 40.0, STEAL)
    assert m["late_side"]["side"] == "main_thread" and m["late_side"]["main_thread_script"] > 0
    assert "machine_bound" not in m and "too noisy" in item.evidence["machine_noise"]


def test_should_score_reports_without_headroom_as_before():
    item, m = _score(None, None)
    assert m["tier"] == 6 and "machine_headroom" not in m and "late_side" not in m
    assert item.points == GOLDEN["items"]["smoothness.frame_pacing"]["points"]


def test_should_say_in_the_batch_summary_which_runs_lost_a_tier_on_a_machine_without_headroom(tmp_path):
    import io

    from rich.console import Console

    from skycity_bench.batch.batch_summary import machine_flag, print_summary

    g = copy.deepcopy(GOLDEN)
    data = g["probes"]["frame_pacing"]["data"]
    data["headroom"], data["main_ms"] = LOW, [2.0] * len(data["raf_ms"])
    rubric = load_rubric(find_rubric(g["rubric_id"]))
    flagged = score_report(as_report(g), Scenario.model_validate(g["scenario"]), rubric, None)
    plain = score_report(as_report(GOLDEN), Scenario.model_validate(g["scenario"]), rubric, None)
    assert machine_flag(flagged) == {"machine_bound": "lacks headroom at 1920x1080"} and machine_flag(plain) == {}
    runs = [{"auto_points": 6.0, "auto_max": 10, **machine_flag(flagged)}, {"auto_points": 6.0, "auto_max": 10}]
    summary = {"candidates": [{"id": "c1", "labels": ["a"], "runs": runs, "start": None}], "start_classes": {}}
    buf = io.StringIO()
    print_summary(summary, runs, Console(file=buf, width=250), tmp_path)
    out = buf.getvalue()
    assert "frame pacing flagged: the machine lacks headroom at 1920x1080" in out
    assert "1 run(s) lost frame-pacing points on a machine without rendering headroom" in out
