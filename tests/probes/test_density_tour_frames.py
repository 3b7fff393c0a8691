"""Capture once: the density probe takes its frames from the recording's tour pass when both
run, and plays the window itself when the recording does not run; one analysis, two sources
of frames, the same samples from either. On the lying-hook fixture (its hook claims 80, 20
move) with the dense window moved to 2–4 s and the recording cut to 5 s, so the two runs
take seconds, not minutes."""

import pytest

from tests.truth import fixture, run_bench

pytestmark = pytest.mark.browser


def _run(out, probes):
    from skycity_bench.inputs.scenario import load_scenario

    sc = load_scenario(None, {"viewport": "1280x720", "probes": {"recording": {"end_s": 5}}})
    sc = sc.model_copy(update={"dense_window_s": (2.0, 4.0), "density_sample_times_s": [2.0, 4.0]})
    return run_bench(fixture("density/liar").html, sc, out, probes=probes).to_json()


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    alone = tmp_path_factory.mktemp("density_alone")
    after = tmp_path_factory.mktemp("density_after_tour")
    return (alone, _run(alone, ["density"])), (after, _run(after, ["recording", "density"]))


def _without_timing(samples):
    return [{k: v for k, v in s.items() if k not in ("timing_ms", "evidence")} for s in samples]


def test_should_take_the_same_samples_from_the_tour_as_from_its_own_replay(both):
    (_, alone), (_, after) = both
    a, b = alone["probes"]["density"]["data"], after["probes"]["density"]["data"]
    assert a["frames_from"]["main"] == "replay" and b["frames_from"]["main"] == "tour"
    assert [s["t"] for s in a["samples"]] == [2.0, 3.0, 4.0]
    assert _without_timing(a["samples"]) == _without_timing(b["samples"])
    assert a["densified_times"] == b["densified_times"]
    for item in ("density.count", "density.categories", "density.behavior"):
        assert alone["items"][item]["status"] == after["items"][item]["status"]
        assert alone["items"][item]["points"] == after["items"][item]["points"]
    assert alone["measurements"]["density"] == after["measurements"]["density"]


def test_should_list_the_frames_in_the_recordings_evidence_and_remove_them_once_read(both):
    (alone_dir, alone), (d, after) = both
    assert "recording" not in alone["probes"]  # not run: density played it
    rec = after["probes"]["recording"]["data"]
    assert after["probes"]["recording"]["evidence_version"] == "5"
    df = rec["density_frames"]
    # 2, 3, 4 s and three points between each two, each with Δ and the other pairs' frames
    # the hook's claims at each possible sample time and at its still-point views (±1, ±2 s):
    # 0-6 s every quarter second
    assert df["frames"] >= 9 * 3 and df["claims"] == 25
    index = d / df["index"]
    assert index.is_file()
    assert not list(index.parent.glob("*.png"))  # read, then removed
