"""`run --overlap pinned`, the parts without a browser: which CPUs the pacing browser gets
(refused without spare cores), the pinning of a real process tree by thread, and the
perturbation judgement (scorers/overlap.py)."""

import os
import subprocess
import sys
import time

import pytest
import yaml

from skycity_bench.common.errors import UserError
from skycity_bench.inputs.cpu_pinning import Pinner, plan_split
from skycity_bench.inputs.scenario import DEFAULT_SCENARIO, Overlap, load_scenario
from skycity_bench.judging.scorers.overlap import Settings, perturbation


def _settings(pacing=2, min_cpus=3):
    return Overlap(pacing_cpus=pacing, min_cpus=min_cpus, calibration_s=1, repin_every_s=0.2)


def _no_smt(c):
    return {c}


# ----------------------------------------------------------------- the split
def test_should_refuse_a_machine_without_spare_cores_in_one_line_naming_the_counts():
    with pytest.raises(UserError) as e:
        plan_split(_settings(), allowed=[0, 1], siblings=_no_smt)
    msg = str(e.value)
    assert "\n" not in msg and "needs at least 3 CPUs" in msg and "may run on 2 (0-1)" in msg
    assert "pinned-force" in msg


def test_should_split_two_cpus_one_and_one_when_forced():
    s = plan_split(_settings(), force=True, allowed=[0, 1], siblings=_no_smt)
    assert (s.pacing, s.others, s.forced) == ((0,), (1,), True)


def test_should_never_force_onto_a_single_cpu():
    with pytest.raises(UserError, match="at least 2 CPUs"):
        plan_split(_settings(), force=True, allowed=[3], siblings=_no_smt)


def test_should_give_the_pacing_browser_whole_physical_cores():
    smt = {c: {c % 4, c % 4 + 4} for c in range(8)}  # 0&4, 1&5, ... share a core
    s = plan_split(_settings(pacing=2), allowed=range(8), siblings=lambda c: smt[c])
    assert s.pacing == (0, 4) and s.others == (1, 2, 3, 5, 6, 7) and s.whole_cores
    s = plan_split(_settings(pacing=3), allowed=range(8), siblings=lambda c: smt[c])
    assert s.pacing == (0, 1, 4, 5)  # 3 asked: two whole cores
    s = plan_split(_settings(pacing=2), allowed=range(4), siblings=_no_smt)
    assert (s.pacing, s.others) == ((0, 1), (2, 3))


def test_should_refuse_when_the_siblings_take_every_cpu_unless_forced():
    both = lambda c: {0, 1}  # noqa: E731  two threads of one core
    with pytest.raises(UserError, match="SMT"):
        plan_split(_settings(pacing=1, min_cpus=2), allowed=[0, 1], siblings=both)
    s = plan_split(_settings(pacing=1, min_cpus=2), force=True, allowed=[0, 1], siblings=both)
    assert (s.pacing, s.others, s.whole_cores) == ((0,), (1,), False)


def test_should_refuse_a_scenario_without_the_overlap_section():
    with pytest.raises(UserError, match="no `overlap:` section"):
        plan_split(None, force=True, allowed=[0, 1])


def test_the_default_scenario_has_the_section_and_its_thresholds():
    sc = load_scenario()
    assert sc.overlap.min_cpus > sc.overlap.pacing_cpus >= 1
    t = sc.scorer_settings("overlap")
    assert t.max_p95_change == 0.02 and t.max_long_frame_share_change == 0.02  # more than 2 % is a perturbation


# ----------------------------------------------------------------- pinning real processes
_CHILD = """
import subprocess, sys, threading, time
threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])
print(g.pid, flush=True)
time.sleep(60)
"""


def _masks(pid):
    out = set()
    for tid in os.listdir(f"/proc/{pid}/task"):
        out.add(tuple(sorted(os.sched_getaffinity(int(tid)))))
    return out


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to pin apart")
def test_should_pin_every_thread_of_the_pacing_tree_and_everything_else_apart_then_restore():
    mine = os.sched_getaffinity(0)
    split = plan_split(_settings(), force=True, allowed=sorted(mine)[:2], siblings=_no_smt)
    pacing = subprocess.Popen([sys.executable, "-c", _CHILD], stdout=subprocess.PIPE, text=True)
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    grandchild = None
    try:
        grandchild = int(pacing.stdout.readline())
        time.sleep(0.2)
        p = Pinner(split, pacing.pid)
        try:
            p.apply()
            want_p, want_o = {tuple(split.pacing)}, {tuple(split.others)}
            assert _masks(pacing.pid) == want_p and _masks(grandchild) == want_p  # its thread too
            assert _masks(other.pid) == want_o and _masks(os.getpid()) == want_o
            back = p.read_back()
            assert back["pacing_browser"]["pids"] == sorted([pacing.pid, grandchild])
            assert back["pacing_browser"]["threads_off_their_cpus"] == 0 == back["others"]["threads_off_their_cpus"]
            assert other.pid in back["others"]["pids"] and os.getpid() in back["others"]["pids"]
            # a thread moved behind its back is put back by the next sweep
            os.sched_setaffinity(grandchild, mine)
            p.apply()
            assert _masks(grandchild) == want_p
        finally:
            p.restore()
        full = {tuple(sorted(split.allowed))}
        assert _masks(pacing.pid) == full == _masks(other.pid) == _masks(os.getpid())
    finally:
        os.sched_setaffinity(0, mine)
        if grandchild is not None:
            os.kill(grandchild, 9)
        for proc in (pacing, other):
            proc.kill()
            proc.wait()


# ----------------------------------------------------------------- the judgement
def _cal(p95, share):
    return {"p95_ms": p95, "long_frame_share": share}


LIMITS = Settings(max_p95_change=0.02, max_long_frame_share_change=0.02)


def test_should_pass_an_overlap_within_the_limits():
    p = perturbation(_cal(16.7, 0.0), {"before": _cal(16.9, 0.01)}, LIMITS)
    assert p["too_perturbed"] == [] and abs(p["p95_change"] - 0.2 / 16.7) < 1e-4
    assert p["long_frame_share_change"] == 0.01 and p["alone"]["p95_ms"] == 16.7


def test_should_flag_a_p95_or_a_long_frame_share_beyond_the_limits_either_way():
    p = perturbation(_cal(16.7, 0.0), {"before": _cal(16.7, 0.0), "after": _cal(33.3, 0.0)}, LIMITS)
    assert len(p["too_perturbed"]) == 1 and "after" in p["too_perturbed"][0] and p["p95_change"] > 0.9
    p = perturbation(_cal(16.7, 0.05), {"before": _cal(16.7, 0.0)}, LIMITS)
    assert len(p["too_perturbed"]) == 1 and "long-frame share" in p["too_perturbed"][0]


def test_should_flag_an_overlap_nobody_measured():
    assert perturbation(None, {"before": _cal(16.7, 0.0)}, LIMITS)["too_perturbed"]
    p = perturbation(_cal(16.7, 0.0), {"before": {"error": "TimeoutError: x"}}, LIMITS)
    assert any("TimeoutError" in r for r in p["too_perturbed"])


def test_should_flag_even_identical_figures_under_a_negative_limit():
    neg = Settings(max_p95_change=-1, max_long_frame_share_change=-1)
    assert len(perturbation(_cal(16.7, 0.0), {"before": _cal(16.7, 0.0)}, neg)["too_perturbed"]) == 2


# ----------------------------------------------------------------- the command line
def _cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "skycity_bench", "run", *args], capture_output=True, text=True, timeout=120
    )


def test_should_refuse_overlap_without_spare_cores_in_one_line_before_a_browser_starts(tmp_path):
    raw = yaml.safe_load(DEFAULT_SCENARIO.read_text(encoding="utf-8"))
    raw["overlap"]["min_cpus"] = 999
    sc = tmp_path / "s.yaml"
    sc.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    demo = "tests/fixtures/frame_pacing/steady.html"
    r = _cli(demo, "--scenario", str(sc), "--overlap", "pinned", "--out", str(tmp_path / "out"))
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert r.returncode == 2 and len(lines) == 1 and "needs at least 999 CPUs" in lines[0], r.stderr
    assert "Traceback" not in r.stderr and not (tmp_path / "out").exists()
    r = _cli(demo, "--overlap", "sideways", "--out", str(tmp_path / "out"))
    assert r.returncode == 2 and "--overlap: expected one of off, pinned, pinned-force" in r.stderr
    r = _cli(demo, demo, "--overlap", "pinned-force", "--out", str(tmp_path / "out"))
    assert r.returncode == 2 and "single-demo run only" in r.stderr


def test_should_size_the_default_jobs_by_the_cores_the_pacing_browser_leaves():
    from skycity_bench.running.side_by_side import SOLO_MAX_CPUS, default_jobs

    assert default_jobs(1) == 1 and default_jobs(SOLO_MAX_CPUS) == 1  # as on a machine that small
    assert 1 <= default_jobs(SOLO_MAX_CPUS + 2) <= SOLO_MAX_CPUS + 2


def test_a_report_written_before_the_overlap_section_still_reads_back():
    from skycity_bench.inputs.scenario import Scenario

    d = load_scenario().model_dump(mode="json")
    assert Scenario.model_validate(d).overlap == load_scenario().overlap
    d.pop("overlap")
    assert Scenario.model_validate(d).overlap is None  # rescore of an older report
