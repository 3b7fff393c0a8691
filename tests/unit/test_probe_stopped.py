"""A probe the run's budget stops keeps what it finished (runner._stopped, ProbeSpec.close_stopped):
playback's autoplay part, taken from a real run's evidence (tests/golden/packaging/clean.json),
still gets its verdict; pause/resume/replay is untested with the budget as its cause. A probe
that finished nothing, or keeps no parts, is an error with the budget's cause."""

from __future__ import annotations

import copy

from skycity_bench.common.run_progress import Progress
from skycity_bench.inputs.rubric import find_rubric, load_rubric
from skycity_bench.inputs.scenario import Scenario
from skycity_bench.judging.score_items import score_report
from skycity_bench.probes import ProbeContext, registry
from skycity_bench.reporting.run_report import ProbeRecord
from skycity_bench.running.runner import _stopped
from tests.golden_evidence import GOLDEN_DIR, as_report, load

G = load(GOLDEN_DIR / "packaging" / "clean.json")
WHY = "playback could not finish in its 27 s share of the 60 s budget"


def _ctx(scenario: Scenario, name: str) -> ProbeContext:
    return ProbeContext(
        demo=None, scenario=scenario, out_dir=None, browser=None, settings=scenario.probe_settings(name)
    )


def _stop(kept: dict) -> tuple[ProbeRecord, Scenario]:
    scenario = Scenario.model_validate(G["scenario"])
    ctx = _ctx(scenario, "playback")
    ctx.kept.update(kept)
    rec = ProbeRecord(name="playback", version=registry.get("playback").version)
    _stopped(registry.get("playback"), ctx, rec, WHY, Progress())
    return rec, scenario


def test_should_score_the_autoplay_it_watched_and_leave_the_cycles_untested_for_the_budget():
    rec, scenario = _stop({"autoplay": copy.deepcopy(G["probes"]["playback"]["data"]["autoplay"])})
    assert rec.status == "ok" and rec.cause is None
    g = copy.deepcopy(G)
    g["probes"]["playback"] = rec.model_dump(mode="json")
    rubric = load_rubric(find_rubric(g["rubric_id"]))
    items = score_report(as_report(g), scenario, rubric, None).items
    assert items["packaging.autoplay"].status == G["items"]["packaging.autoplay"]["status"] == "pass"
    prr = items["packaging.pause_resume_replay"]
    assert prr.status == "untested" and prr.cause is not None and prr.cause.value == "budget"
    assert f"{WHY}: stopped before pause/resume/replay was tried" in prr.evidence["reason"]


def test_should_keep_nothing_when_nothing_was_finished_or_the_probe_keeps_no_parts():
    rec, _ = _stop({})
    assert (rec.status, rec.error, rec.cause.value if rec.cause else None) == ("error", WHY, "budget")
    scenario = Scenario.model_validate(G["scenario"])
    ctx = _ctx(scenario, "framing")
    ctx.keep("anything", {"x": 1})
    rec = ProbeRecord(name="framing")
    _stopped(registry.get("framing"), ctx, rec, WHY, Progress())
    assert rec.status == "error" and rec.data == {}
