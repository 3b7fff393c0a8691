"""`run --overlap pinned-force` on this small machine: the mechanics, not the timing. The
light Canvas2D fixture (steady) played 4 s in real time while the recording steps 4 s of it
on the fake clock in a second browser; the pacing browser pinned to the first CPU,
everything else to the second. Checked from outside the bench too: a thread of this test
reads every process's threads' masks from /proc while the run goes.

Two runs: the perturbation limits set out of reach (1e9: never re-run) and below zero (every
overlap too disturbed: the real-time probes run again alone). No assertion depends on the
figures measured (the machine is shared); only on what ran where and what was recorded."""

import asyncio
import os
import threading
import time

import pytest

from tests.truth import FIXTURES

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to pin apart"),
]

DEMO = FIXTURES / "frame_pacing" / "steady.html"
PROBES = ("frame_pacing", "recording")


class _Watch:
    """Samples, every 0.1 s, every process below this one: its parent, whether it is a
    renderer, and the CPU masks of its threads (/proc/PID/task/TID/status,
    Cpus_allowed_list): [{pid: (ppid, renderer?, {mask, ...})}, ...]."""

    def __init__(self):
        self.samples: list[dict[int, tuple]] = []
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def _procs() -> dict[int, tuple[int, bool]]:
        out = {}
        for d in os.listdir("/proc"):
            if d.isdigit():
                try:
                    with open(f"/proc/{d}/stat") as f:
                        s = f.read()
                    with open(f"/proc/{d}/cmdline", "rb") as f:
                        renderer = b"--type=renderer" in f.read()
                    out[int(d)] = (int(s[s.rindex(")") + 2 :].split()[1]), renderer)
                except (OSError, ValueError):
                    pass
        return out

    def _run(self):
        while not self._stop.is_set():
            procs = self._procs()
            below, todo = set(), [os.getpid()]
            while todo:
                p = todo.pop()
                kids = [c for c, (pp, _) in procs.items() if pp == p and c not in below]
                below.update(kids)
                todo += kids
            snap = {}
            for pid in below:
                masks = set()
                try:
                    for tid in os.listdir(f"/proc/{pid}/task"):
                        with open(f"/proc/{pid}/task/{tid}/status") as f:
                            masks |= {ln.split(":", 1)[1].strip() for ln in f if ln.startswith("Cpus_allowed_list")}
                except OSError:
                    continue
                snap[pid] = (*procs[pid], masks)
            self.samples.append(snap)
            time.sleep(0.1)

    def __enter__(self):
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join(5)


def _tree(snap: dict, root: int) -> set[int]:
    out, todo = {root} & set(snap), [root]
    while todo:
        p = todo.pop()
        kids = [c for c, (pp, _, _) in snap.items() if pp == p and c not in out]
        out.update(kids)
        todo += kids
    return out


def _run(out, limit):
    from skycity_bench.inputs.scenario import load_scenario
    from skycity_bench.running.runner import Profile, execute

    sc = load_scenario(
        None,
        {
            "duration_s": 4,
            "viewport": "640x360",
            "probes": {"recording": {"end_s": 4}, "frame_pacing": {"noise_reruns": 0}},
            "scorers": {"overlap": {"max_p95_change": limit, "max_long_frame_share_change": limit}},
        },
    )
    sc = sc.model_copy(update={"overlap": sc.overlap.model_copy(update={"calibration_s": 1.0})})
    mine = os.sched_getaffinity(0)
    prof = Profile(probes=PROBES, jobs=1, calibrate=False, overlap="pinned-force")
    with _Watch() as w:
        report = asyncio.run(execute(DEMO, sc, prof, out)).to_json()
    after = os.sched_getaffinity(0)
    os.sched_setaffinity(0, mine)
    return report, w.samples, mine, after


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return {name: _run(tmp_path_factory.mktemp(name), limit) for name, limit in (("kept", 1e9), ("rerun", -1.0))}


def _cpus(text: str) -> frozenset:
    """'0-2,5' -> {0, 1, 2, 5} (/proc's Cpus_allowed_list, the bench's masks)."""
    out = set()
    for part in text.split(","):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return frozenset(out)


def test_should_pin_the_pacing_browser_apart_and_record_it(runs):
    report, samples, mine, after = runs["kept"]
    o = report["environment"]["overlap"]
    assert o["mode"] == "pinned-force" and o["used"] and o["forced"]
    pace, rest = frozenset(o["pacing_cpus"]), frozenset(o["other_cpus"])
    assert pace and rest and not pace & rest and pace | rest == frozenset(mine)
    if len(mine) == 2:
        assert sorted(pace) == sorted(mine)[:1]
    a = o["affinity"]
    # the kernel's answer, read back by the bench at the end of the real-time probes
    assert {_cpus(m) for m in a["pacing_browser"]["thread_masks"]} == {pace}
    assert {_cpus(m) for m in a["others"]["thread_masks"]} == {rest}
    assert a["pacing_browser"]["threads_off_their_cpus"] == 0 == a["others"]["threads_off_their_cpus"]
    assert {"browser", "gpu-process"} <= set(a["pacing_browser"]["kinds"])
    assert o["pacing_browser_pid"] in a["pacing_browser"]["pids"]
    assert a["others"]["kinds"].get("browser") == 1 and os.getpid() in a["others"]["pids"]  # side browser, bench
    # ... and what this test saw itself: a moment with the pacing browser's whole tree, the
    # demo's renderer included, on its CPUs while every other process below this one was on
    # the rest (the side browser's renderer stepping the recording among them)
    seen = []
    for snap in samples:
        tree = _tree(snap, o["pacing_browser_pid"])
        if not any(snap[p][1] for p in tree) or not any(snap[p][1] for p in set(snap) - tree):
            continue
        if all({_cpus(m) for m in snap[p][2]} == {pace} for p in tree) and all(
            {_cpus(m) for m in snap[p][2]} == {rest} for p in set(snap) - tree
        ):
            seen.append(snap)
    assert seen, "no sample showed the pacing browser's renderer and the rest pinned apart"
    # every CPU back afterwards, for every thread of this process
    assert after == mine
    for tid in os.listdir("/proc/self/task"):
        assert os.sched_getaffinity(int(tid)) == mine


def test_should_run_the_fake_clock_probe_during_the_pacing_pass(runs):
    report, *_ = runs["kept"]
    tl = report["environment"]["overlap"]["timeline"]
    fp, rec = tl["frame_pacing"], tl["recording"]
    assert rec[0] < fp[1] and rec[1] > fp[0], tl  # the two intervals overlap
    assert tl["blank page alone"][1] <= rec[0] + 0.05  # alone: before the probes started
    for name in PROBES:
        assert report["probes"][name]["status"] == "ok", report["probes"][name].get("error")
    assert report["items"]["smoothness.frame_pacing"]["status"] != "untested"


def test_should_keep_the_perturbation_figures_and_not_rerun_within_the_limits(runs):
    report, *_ = runs["kept"]
    o = report["environment"]["overlap"]
    p = o["perturbation"]
    assert p["alone"]["p95_ms"] > 0 and p["beside"]["before the real-time probes"]["p95_ms"] > 0
    assert "long_frame_share" in p["alone"] and p["p95_change"] is not None
    assert p["too_perturbed"] == [] and o["rerun_alone"] is False and "solo_pass" not in o
    assert o["overlapped_pass"]["frame_pacing"]["p95_ms"] > 0
    assert not any("overlap" in w for w in report["warnings"])


def test_should_rerun_the_real_time_probes_alone_when_the_overlap_disturbed_them(runs):
    report, *_ = runs["rerun"]
    kept, *_ = runs["kept"]
    o = report["environment"]["overlap"]
    assert o["rerun_alone"] is True and o["perturbation"]["too_perturbed"]
    assert any(
        w.startswith("overlap: the probes beside the real-time run disturbed") and "ran again alone" in w
        for w in report["warnings"]
    )
    both = o["overlapped_pass"]["frame_pacing"], o["solo_pass"]["frame_pacing"]
    assert all(f["status"] == "ok" and f["p95_ms"] > 0 and f["long_frame_share"] is not None for f in both)
    tl = o["timeline"]
    # alone: after the overlapped pass and after the fake-clock probe was done
    assert tl["frame_pacing (alone)"][0] >= max(tl["frame_pacing"][1], tl["recording"][1]) - 0.05, tl
    # the pacing pass really played twice: more pages opened than in the run that kept it
    assert report["probes"]["page_events"]["data"]["pages"] > kept["probes"]["page_events"]["data"]["pages"]
    assert report["probes"]["frame_pacing"]["status"] == "ok"


def test_should_fall_back_to_the_default_order_when_the_overlap_is_refused_inside_a_run(tmp_path):
    """Through the API (`run` refuses it before a browser starts): the real-time probes alone
    first, as without it, the report saying why."""
    from skycity_bench.inputs.scenario import load_scenario
    from skycity_bench.running.runner import Profile, execute

    sc = load_scenario(None, {"duration_s": 2, "viewport": "640x360", "probes": {"frame_pacing": {"noise_reruns": 0}}})
    sc = sc.model_copy(update={"overlap": sc.overlap.model_copy(update={"min_cpus": 999})})
    prof = Profile(probes=("frame_pacing", "packaging"), jobs=1, calibrate=False, overlap="pinned")
    report = asyncio.run(execute(DEMO, sc, prof, tmp_path / "run")).to_json()
    o = report["environment"]["overlap"]
    assert o["used"] is False and "needs at least 999 CPUs" in o["why"]
    assert any(w.startswith("--overlap pinned: needs at least 999 CPUs") for w in report["warnings"])
    assert report["probes"]["frame_pacing"]["status"] == report["probes"]["packaging"]["status"] == "ok"
