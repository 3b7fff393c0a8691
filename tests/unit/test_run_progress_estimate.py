"""The run's "left" estimate covers the whole run from its first line, not the phase that
is running: a slow recording waiting after a quick pacing pass is in the very first figure."""

from __future__ import annotations

from skycity_bench.common.run_progress import Progress, RunProgress, Task


class _Null(Progress):
    def task(self, description: str, total: float, unit: str = "s") -> Task:
        return Task()

    def log(self, message: str) -> None:
        pass


class _Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_the_first_estimate_already_counts_the_later_probes():
    clock = _Clock()
    rp = RunProgress(_Null(), {"frame_pacing": 70, "shops": 80, "recording": 300}, clock=clock)
    assert rp.left_s() == 450  # nothing measured yet: every budget
    p = rp.probe("frame_pacing")
    t = p.task("playback", 60)
    clock.t = 30
    t.update(30)
    assert rp.left_s() >= 380 + 30 - 1  # the later probes are still in it


def test_the_estimate_scales_by_how_long_finished_probes_took():
    clock = _Clock()
    rp = RunProgress(_Null(), {"a": 100, "b": 100}, clock=clock)
    p = rp.probe("a")
    clock.t = 300  # three times its budget
    p.finish()
    # b's budget at the rate a was seen at, shrunk towards par by a minute of budget
    assert rp.left_s() == 100 * (300 + 60) / (100 + 60)


def test_a_phase_start_does_not_jump_the_estimate_up():
    clock = _Clock()
    rp = RunProgress(_Null(), {"a": 60, "b": 60, "c": 60}, clock=clock)
    before = rp.left_s()
    seen = []
    for name in ("a", "b", "c"):
        p = rp.probe(name)
        seen.append(rp.left_s())
        t = p.task("work", 60)
        for k in range(1, 7):
            clock.t += 10
            t.update(10 * k)
            seen.append(rp.left_s())
        p.finish()
    assert seen[0] <= before
    # never up by more than a second while the probes run at their budgets
    assert all(b <= a + 1 for a, b in zip(seen, seen[1:]))
    assert rp.left_s() == 0
