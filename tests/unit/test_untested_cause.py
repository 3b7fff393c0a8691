"""Why an item is untested is a typed cause (common/errors.py Cause), set where it is found:
the error a probe raises, the runner's record of it, a scorer's outcome. The scoring reads the
cause, never the prose of a reason: on a page seen to be empty only what the page gave
nothing to look at (Cause.PAGE) becomes a verdict, and what the bench could not look at
stays untested. No browser."""

from __future__ import annotations

from typing import Any

import pytest

from skycity_bench.common.errors import Cause, DemoCrash, DemoHang, DemoSlow, ProbeError, combined
from skycity_bench.evidence.shops import PhaseError
from skycity_bench.inputs.rubric import load_rubric
from skycity_bench.inputs.scenario import load_scenario
from skycity_bench.judging.score_items import run_problems, score_report
from skycity_bench.judging.scorers import ItemScore
from skycity_bench.judging.scorers._shop_manual_priority import MANUAL_CAUSE, MANUAL_STATUS, Manual
from skycity_bench.judging.scorers.shops import _phase_cause
from skycity_bench.probes import registry
from skycity_bench.reporting.run_report import Candidate, ProbeRecord, Report
from skycity_bench.running.runner import _records_of_pass
from tests.unit.test_packaging_scorers import prr, score
from tests.unit.test_start_diagnosis import MODULE_ERROR, _events, _network, _pacing, _playback

SHOP_ITEMS = ("shops.hover", "shops.auto_display", "shops.manual_priority", "shops.card_placement", "shops.touch")


def test_a_probe_error_carries_the_cause_its_raiser_gave_else_its_kinds():
    assert ProbeError("x").cause is Cause.BENCH  # a plain one: the bench's own failure
    assert (DemoHang("x").cause, DemoSlow("x").cause, DemoCrash("x").cause) == (
        Cause.HANG,
        Cause.BUDGET,
        Cause.CRASH,
    )
    e = ProbeError("hook getShops(): missing", cause=Cause.PAGE)
    # re-raised with more words (session.call, the shops phases): kind and cause kept
    again = type(e)(f"shops hover: {e}", cause=e.cause)
    assert again.cause is Cause.PAGE and DemoHang("x", cause=Cause.PAGE).cause is Cause.PAGE


def test_several_causes_are_the_pages_only_when_every_one_is():
    assert combined([Cause.PAGE, Cause.PAGE]) is Cause.PAGE
    assert combined([Cause.PAGE, Cause.NOT_RUN]) is Cause.NOT_RUN
    assert combined([Cause.BUDGET, Cause.PAGE]) is Cause.BUDGET
    assert combined([]) is Cause.BENCH


def test_an_untested_result_must_say_its_cause_and_only_an_untested_one_has_one():
    with pytest.raises(ValueError):
        ItemScore("untested", None, {"reason": "x"})
    with pytest.raises(ValueError):
        ItemScore("fail", 0.0, {}, cause=Cause.PAGE)
    assert ItemScore("untested", None, cause=Cause.BUDGET).cause is Cause.BUDGET


def _never_drawn_report(shops_error: str, cause: Cause | None) -> Report:
    """A run on a page that never drew whose shops probe stopped with `shops_error`."""
    rep = Report(bench_version="t", rubric_id="r", candidate=Candidate(id="c", sha256="0" * 64))
    for r in (_events(count=1, pages=5, message=MODULE_ERROR), _network(), _pacing(painted=0), _playback()):
        rep.probes[r.name] = r
    rep.probes["shops"] = ProbeRecord(name="shops", status="error", error=shops_error, cause=cause)
    return rep


def _score(rep: Report) -> Report:
    return score_report(rep, load_scenario(None), load_rubric(), None)


@pytest.mark.parametrize(
    "error",
    [
        "hook getShops(): not a function; without it the shops cannot be located",
        # words the bench's own failures use: the prose decides nothing
        "the run's budget ran out: hung, crashed, a phase failed, the bench fell behind",
    ],
)
def test_the_cause_alone_decides_whether_a_never_drawn_page_fails_its_shop_items(error):
    page = _score(_never_drawn_report(error, Cause.PAGE))
    assert page.start["class"] == "never_drew"
    for iid in SHOP_ITEMS:
        it = page.items[iid]
        assert (it.status, it.points, it.cause) == ("fail", 0.0, None), iid
        assert it.evidence["observed"]["what"] == "never drew" and it.evidence["untested_reason"].endswith(error)
    assert not [p for p in run_problems(page) if p.startswith("probe shops")]
    for cause in (Cause.BUDGET, Cause.HANG, Cause.CRASH, Cause.BENCH, None):
        bench = _score(_never_drawn_report(error, cause))
        for iid in SHOP_ITEMS:
            it = bench.items[iid]
            assert (it.status, it.points) == ("untested", None), (cause, iid)
            assert it.cause is (cause or Cause.BENCH)  # a record from before causes: not the page's
        assert [p for p in run_problems(bench) if p.startswith("probe shops")]


def test_items_of_probes_not_run_or_unreadable_say_so():
    rep = _score(_never_drawn_report("x", Cause.PAGE))
    # the timeline never ran in this report: camera items are untested for that, not failed
    cam = rep.items["camera.phases"]
    assert (cam.status, cam.cause) == ("untested", Cause.NOT_RUN)
    # frame_pacing's record here is no whole evidence: the bench cannot read it
    fp = rep.items["smoothness.frame_pacing"]
    assert (fp.status, fp.cause) == ("untested", Cause.BENCH) and "evidence not readable" in fp.evidence["reason"]


def test_a_pass_gives_each_record_it_yields_its_cause_and_a_part_that_failed_its_own():
    spec = registry.get("recording")
    rec = ProbeRecord(name="recording", status="error", error="hung", cause=Cause.HANG)
    got = {r.name: r for r in _records_of_pass(spec, rec)}
    assert got["recording"].cause is Cause.HANG and got["timeline"].cause is Cause.HANG
    ok = ProbeRecord(name="recording")
    ok.data = {"recording": {}, "timeline": ProbeError("the budget stopped the tour", {}, cause=Cause.BUDGET)}
    got = {r.name: r for r in _records_of_pass(spec, ok)}
    assert (got["timeline"].status, got["timeline"].cause) == ("error", Cause.BUDGET)
    assert got["recording"].cause is None


def _ways(hook: dict[str, Any], keyboard: dict[str, Any]) -> ItemScore:
    return score("packaging.pause_resume_replay", playback=prr(hook=hook, keyboard=keyboard))


def test_pause_resume_replay_untested_takes_its_ways_causes():
    no_hook = {"way": "hook", "untested": "the hook has no pause()", "cause": "page"}
    no_keys = {"way": "keyboard", "untested": "the scenario does not enable keyboard control", "cause": "not_run"}
    slow = {"way": "keyboard", "untested": "slow: the run budget is spent", "cause": "budget"}
    page_too = {"way": "keyboard", "untested": "window.skyCityTest is missing", "cause": "page"}
    assert _ways(no_hook, page_too).cause is Cause.PAGE
    assert _ways(no_hook, no_keys).cause is Cause.NOT_RUN
    r = _ways(no_hook, slow)
    assert r.cause is Cause.BUDGET and r.evidence["ways"]["keyboard"]["cause"] == "budget"
    # evidence written before ways said their cause: not taken for the page's
    assert _ways({"way": "hook", "untested": "no hook"}, page_too).cause is Cause.BENCH


def test_every_untested_outcome_of_the_shop_scorers_names_its_cause():
    untested = {code for code, status in MANUAL_STATUS.items() if status == "untested"}
    assert untested == set(MANUAL_CAUSE)
    assert MANUAL_CAUSE[Manual.POINTER_LEFT_SHOP] is Cause.BENCH and MANUAL_CAUSE[Manual.SHOP_OFF_SCREEN] is Cause.PAGE
    # a later phase that failed says why in its evidence; one written before it did is the bench's
    assert _phase_cause(PhaseError.model_validate({"error": "hung", "cause": "hang"})) is Cause.HANG
    assert _phase_cause(PhaseError.model_validate({"error": "getShops threw", "cause": "page"})) is Cause.PAGE
    assert _phase_cause(PhaseError.model_validate({"error": "x"})) is Cause.BENCH
