"""Whether a run wants the review material a probe makes: the runner decides
(runner.review_material_wanted), from the probe's `when` setting and, for `review`, the item
scored on the evidence collected so far; the probe (realtime_capture) is told. On the golden
frame-pacing evidence: the video is wanted exactly where the live run's item ended in review.
No browser."""

from __future__ import annotations

import pytest

from skycity_bench.inputs.scenario import Scenario
from skycity_bench.probes import registry
from skycity_bench.reporting.run_report import ProbeRecord
from skycity_bench.running.runner import Profile, review_material_wanted
from tests.golden_evidence import GOLDEN_DIR, as_report, load

ITEM = "smoothness.frame_pacing"
GOLDEN = sorted((GOLDEN_DIR / "frame_pacing").glob("*.json"))
SPEC = registry.get("realtime_capture")


def _so_far(g: dict, when: str):
    """The report as it stands when realtime_capture runs (its own record not there yet)."""
    report = as_report(g)
    report.probes.pop("realtime_capture", None)
    sc = dict(g["scenario"])
    sc["probes"] = {**sc["probes"], "realtime_capture": {**sc["probes"]["realtime_capture"], "when": when}}
    return report, Scenario.model_validate(sc)


def test_the_probe_declares_what_it_makes_review_material_for():
    assert SPEC.review_material_for == ITEM and "frame_pacing" in SPEC.after


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_the_video_is_wanted_exactly_when_the_item_ends_in_review(path):
    g = load(path)
    report, sc = _so_far(g, "review")
    told = review_material_wanted(SPEC, sc, report, Profile())
    status = g["items"][ITEM]["status"]
    assert told.yes is (status == "review"), told.reason
    if status == "review":
        assert told.reason == f"{ITEM} ended in review"
    else:
        assert told.reason.startswith(f"not needed: {ITEM} ended in {status}"), told.reason


def test_never_and_always_need_no_scoring():
    g = load(GOLDEN[0])
    for when, yes in (("never", False), ("always", True)):
        report, sc = _so_far(g, when)
        report.probes.clear()  # nothing collected: the setting alone decides
        told = review_material_wanted(SPEC, sc, report, Profile())
        assert told.yes is yes and "probes.realtime_capture.when" in told.reason


def test_no_video_when_frame_pacing_did_not_collect():
    report, sc = _so_far(load(GOLDEN[0]), "review")
    report.probes["frame_pacing"] = ProbeRecord(name="frame_pacing", status="error", error="the demo hung")
    told = review_material_wanted(SPEC, sc, report, Profile())
    assert not told.yes and told.reason.startswith("frame_pacing did not collect its evidence")


def test_no_decision_for_other_probes():
    report, sc = _so_far(load(GOLDEN[0]), "review")
    assert review_material_wanted(registry.get("frame_pacing"), sc, report, Profile()) is None
