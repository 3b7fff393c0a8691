"""`run --jobs N`: the fake-clock probes side by side in separate browsers give the same
items as one after the other. The lying-hook density fixture with four fake-clock probes
(packaging, framing, the recording and density, which reads the recording's frames), the
dense window moved to 2–4 s and the recording cut to 5 s so both runs take a minute or two;
then the command line's --jobs."""

import asyncio
import subprocess
import sys

import pytest

from tests.truth import fixture

pytestmark = pytest.mark.browser

PROBES = ("packaging", "framing", "recording", "density")


def _run(out, jobs):
    from skycity_bench.inputs.scenario import load_scenario
    from skycity_bench.running.runner import Profile, execute

    sc = load_scenario(None, {"viewport": "1280x720", "probes": {"recording": {"end_s": 5}}})
    sc = sc.model_copy(update={"dense_window_s": (2.0, 4.0), "density_sample_times_s": [2.0, 4.0]})
    prof = Profile(probes=PROBES, jobs=jobs, calibrate=False)
    return asyncio.run(execute(fixture("density/liar").html, sc, prof, out)).to_json()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return {n: _run(tmp_path_factory.mktemp(f"jobs{n}"), n) for n in (1, 2)}


# The review-only behaviour summary (speeds and headings from sub-pixel shifts) differs
# between one and two browsers in some runs (min speed 49.4 vs 49.3 px/s, a heading sector
# 7 vs 6; the cause is not found yet): it is compared on the objects it tracked. Counts,
# categories and every other figure must be equal.
def _without_behaviour(m: dict) -> dict:
    return {k: v for k, v in m.items() if k != "behavior"}


def test_should_score_the_same_items_whatever_the_number_of_browsers(runs):
    one, two = runs[1], runs[2]
    assert one["environment"]["jobs"] == 1 and two["environment"]["jobs"] == 2
    for name in PROBES:
        assert one["probes"][name]["status"] == two["probes"][name]["status"] == "ok", name
    assert {k: (v["status"], v["points"]) for k, v in one["items"].items()} == {
        k: (v["status"], v["points"]) for k, v in two["items"].items()
    }
    d1, d2 = one["measurements"]["density"], two["measurements"]["density"]
    assert _without_behaviour(d1) == _without_behaviour(d2)
    assert d1["behavior"]["objects_tracked"] == d2["behavior"]["objects_tracked"]
    # density read the recording's frames in both: it waited for the recording's pass
    assert two["probes"]["density"]["data"]["frames_from"]["main"] == "tour"
    # the report lists the probes in run order, however they finished
    assert list(one["probes"]) == list(two["probes"])


def test_should_refuse_a_jobs_count_below_one_in_one_line():
    p = subprocess.run(
        [sys.executable, "-m", "skycity_bench", "run", str(fixture("density/liar").html), "--jobs", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 2 and "--jobs" in p.stderr and "Traceback" not in p.stderr
