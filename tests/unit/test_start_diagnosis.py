"""The start diagnosis from constructed evidence (no browser): each class and cause from the
observations that name it, and the rule that gives items their verdict where the page left
nothing to observe (score_items.apply_observation)."""

from __future__ import annotations

from typing import Any

from skycity_bench.common.errors import Cause
from skycity_bench.inputs.scenario import load_scenario
from skycity_bench.judging.score_items import apply_observation
from skycity_bench.judging.start_diagnosis import diagnose
from skycity_bench.reporting.run_report import Candidate, ItemResult, ProbeRecord, Report

# the blank rule's threshold as a run reads it (scorers.frame_pacing)
BLANK = load_scenario(None).scorer_settings("frame_pacing").blank_flat_share
MODULE_ERROR = 'Failed to resolve module specifier "three". Relative references must start with either "/"'


def _rec(name: str, data: dict[str, Any], status: str = "ok") -> ProbeRecord:
    return ProbeRecord.model_validate({"name": name, "status": status, "data": data})


def _events(count: int = 0, pages: int = 5, message: str = "TypeError: boom", frame: str | None = None) -> ProbeRecord:
    first = {"message": message, "at_s": 0.5 if count else None, "frame": frame} if count else None
    return _rec(
        "page_events",
        {
            "pages": pages,
            "renderer_crashes": 0,
            "page_errors": [message] * min(count, 20),
            "thrown": {"count": count, "first": first, "last_message": message if count else None},
        },
    )


def _pacing(painted: int | None = 0, drew: int = 0, flat: float | None = None) -> ProbeRecord:
    data: dict[str, Any] = {"frames": 240, "drew": [1] * drew + [0] * (240 - drew), "painted_frames": painted}
    if flat is not None:
        data["picture"] = {"region": "canvas 640x360 at 0,0", "flat_share": flat, "colour_bgr": [208, 169, 135]}
    return _rec("frame_pacing", data)


def _playback(changed: float = 0.0, travel: int = 0) -> ProbeRecord:
    return _rec(
        "playback",
        {"autoplay": {"union": {"changed_share": changed}, "travel": {"travel_px": travel}, "control": None}},
    )


def _network(*blocked_scripts: str) -> ProbeRecord:
    reqs = [{"url": u, "resource_type": "script", "outcome": "blocked"} for u in blocked_scripts]
    return _rec("network", {"requests": reqs, "misses": []})


def _diagnose(*records: ProbeRecord):
    return diagnose({r.name: r for r in records}, BLANK)


def test_a_page_that_drew_and_moved_without_errors_started():
    d = _diagnose(_events(), _network(), _pacing(painted=300, drew=240, flat=0.3), _playback(0.2, 80))
    assert d.klass == "started" and d.drew and d.moved and d.nothing_to_observe is None
    assert "drew" in d.reason


def test_a_page_that_throws_every_frame_throws_and_never_drew():
    d = _diagnose(
        _events(count=900, message="TypeError: Math.smoothstep is not a function", frame="frame (x:28:3)"),
        _network(),
        _pacing(painted=0, flat=0.97),
        _playback(),
    )
    j = d.to_json()
    assert j["class"] == "throws" and j["drew"] is False and d.nothing_to_observe == "never drew"
    assert "smoothstep" in j["reason"] and "900" in j["reason"] and "frame (x:28:3)" in j["reason"]


def test_a_page_that_threw_once_at_load_and_runs_throws():
    d = _diagnose(_events(count=5, pages=5), _network(), _pacing(painted=200, drew=200, flat=0.4), _playback(0.1, 60))
    assert d.klass == "throws" and d.drew and d.nothing_to_observe is None


def test_an_unresolved_module_never_drew_by_module_resolution():
    d = _diagnose(_events(count=5, pages=5, message=MODULE_ERROR), _network(), _pacing(painted=0), _playback())
    j = d.to_json()
    assert (j["class"], j["cause"]) == ("never_drew", "module_resolution")
    assert '"three"' in j["reason"]


def test_a_blocked_script_never_drew_by_blocked_request():
    url = "https://cdn.example.com/three.min.js"
    d = _diagnose(
        _events(count=5, pages=5, message="ReferenceError: THREE is not defined"),
        _network(url),
        _pacing(painted=0),
        _playback(),
    )
    assert (d.klass, d.cause) == ("never_drew", "blocked_request") and url in d.reason


def test_an_error_at_load_without_a_drawing_never_drew_by_exception_at_load():
    d = _diagnose(
        _events(count=3, pages=5, message="TypeError: x is undefined"), _network(), _pacing(painted=0), _playback()
    )
    assert (d.klass, d.cause) == ("never_drew", "exception_at_load") and "x is undefined" in d.reason


def test_a_page_that_never_drew_for_no_recorded_reason_is_unknown():
    d = _diagnose(_events(), _network(), _pacing(painted=0), _playback())
    assert (d.klass, d.cause) == ("never_drew", "unknown")


def test_a_flat_still_picture_that_was_painted_is_blank():
    d = _diagnose(_events(), _network(), _pacing(painted=240, drew=240, flat=0.995), _playback())
    assert d.klass == "blank" and d.nothing_to_observe == "blank" and "99" in d.reason


def test_a_flat_picture_that_moves_is_a_sparse_scene_not_blank():
    d = _diagnose(_events(), _network(), _pacing(painted=240, drew=240, flat=0.96), _playback(0.001, 40))
    assert d.klass == "started"


def test_without_page_events_or_a_watching_probe_nothing_was_observed():
    assert _diagnose(_network()).klass == "not_observed"
    failed = _rec("frame_pacing", {}, status="error")
    assert _diagnose(failed, _rec("playback", {}, status="error")).klass == "not_observed"
    d = _diagnose(_events(), _network())
    assert d.klass == "not_observed" and d.nothing_to_observe is None


def test_page_events_of_version_one_are_read_from_their_page_errors():
    old = _rec("page_events", {"pages": 2, "renderer_crashes": 0, "page_errors": [MODULE_ERROR, MODULE_ERROR]})
    d = _diagnose(old, _network(), _pacing(painted=0), _playback())
    assert (d.klass, d.cause) == ("never_drew", "module_resolution")


def _report(items: dict[str, tuple[str, str, Cause]]) -> Report:
    """Items {id: (status, reason, cause)}, as the scoring leaves them."""
    cand = Candidate(id="c", sha256="0" * 64)
    rep = Report(bench_version="t", rubric_id="r", candidate=cand)
    for iid, (status, reason, cause) in items.items():
        rep.items[iid] = ItemResult(
            points=None, max=4, status=status, how="auto", evidence={"reason": reason}, cause=cause
        )
    return rep


def test_items_left_untested_on_a_page_that_never_drew_fail_with_the_observation():
    rep = _report(
        {
            "smoothness.frame_pacing": ("untested", "the demo threw before drawing anything: TypeError", Cause.PAGE),
            "density.categories": ("untested", "no answering getDynamicObjects()", Cause.PAGE),
            "shops.hover": ("untested", "probe shops: ran out of the run's budget", Cause.BUDGET),
            "camera.phases": ("untested", "probe(s) not run: timeline", Cause.NOT_RUN),
            "shops.auto_display": (
                "untested",
                "the automatic display was not sampled in this run (the check profile)",
                Cause.NOT_RUN,
            ),
        }
    )
    d = _diagnose(_events(count=900), _network(), _pacing(painted=0), _playback())
    decided = {"smoothness.frame_pacing", "density.categories", "shops.hover", "shops.auto_display"}
    changed = apply_observation(rep, d, decided)
    assert changed == ["smoothness.frame_pacing", "density.categories"]
    fp = rep.items["smoothness.frame_pacing"]
    assert (fp.status, fp.points) == ("fail", 0.0) and "never drew" in fp.evidence["reason"]
    assert fp.evidence["untested_reason"].startswith("the demo threw")
    # the bench's own failures stay untested: the budget, a probe not run
    assert rep.items["shops.hover"].status == "untested" and rep.items["camera.phases"].status == "untested"
    assert rep.items["shops.auto_display"].status == "untested"  # the profile did not try it


def test_a_page_that_never_moved_fails_only_the_items_of_motion():
    rep = _report(
        {
            "density.count": ("untested", "no sample", Cause.PAGE),
            "shops.hover": ("untested", "no shops listed", Cause.PAGE),
        }
    )
    d = _diagnose(_events(), _network(), _pacing(painted=1, flat=0.4), _playback())
    assert d.klass == "started" and d.nothing_to_observe == "never moved"
    assert apply_observation(rep, d, {"density.count", "shops.hover"}) == ["density.count"]
    assert rep.items["shops.hover"].status == "untested"


def test_a_page_that_started_keeps_its_untested_items():
    rep = _report({"density.count": ("untested", "no sample", Cause.PAGE)})
    d = _diagnose(_events(), _network(), _pacing(painted=300, drew=200, flat=0.3), _playback(0.2, 90))
    assert apply_observation(rep, d, {"density.count"}) == [] and rep.items["density.count"].status == "untested"


def test_the_terminal_table_the_html_page_and_the_batch_open_with_the_start():
    import io

    from rich.console import Console

    from skycity_bench.batch.batch_summary import candidate_start, start_counts
    from skycity_bench.commands._render import print_report
    from skycity_bench.reporting.html_report import start_view

    rep = _report({})
    d = _diagnose(_events(count=5, pages=5, message=MODULE_ERROR), _network(), _pacing(painted=0), _playback())
    rep.start = d.to_json()
    buf = io.StringIO()
    print_report(rep, Console(file=buf, width=200))
    first_row = next(line for line in buf.getvalue().splitlines() if "start" in line)
    assert "never_drew (module_resolution)" in first_row
    assert start_view(rep)["label"] == "never_drew (module_resolution)" and start_view(rep)["status"] == "fail"
    old = _report({})  # a report scored before the diagnosis
    st = candidate_start([rep, rep, old])
    assert st is not None and st["class"] == "never_drew" and st["runs"] == {"never_drew": 2, "not_observed": 1}
    counts = start_counts([{"start": st}, {"start": candidate_start([old])}, {"start": None}])
    assert counts["never_drew"] == 1 and counts["not_observed"] == 1 and counts["started"] == 0


def test_a_probe_stopped_by_the_missing_hook_of_a_page_that_never_drew_is_an_observation():
    from skycity_bench.judging.score_items import run_problems

    rep = _report(
        {
            "shops.hover": ("untested", "probe shops: hook getShops(): missing", Cause.PAGE),
            "shops.touch": ("untested", "x", Cause.PAGE),
        }
    )
    rep.probes["shops"] = _rec("shops", {}, status="error")
    rep.probes["shops"].error = "hook getShops(): not a function; without it the shops cannot be located"
    rep.probes["shops"].cause = Cause.PAGE
    d = _diagnose(_events(count=1, pages=5, message=MODULE_ERROR), _network(), _pacing(painted=0), _playback())
    assert d.klass == "never_drew"
    # the shops probe stopped on the hook the page never set up: nothing else to see
    assert apply_observation(rep, d, set(), {"shops.hover", "shops.touch"}) == ["shops.hover", "shops.touch"]
    assert rep.items["shops.hover"].status == "fail" and rep.items["shops.hover"].evidence["observed"]
    assert not [p for p in run_problems(rep) if p.startswith("probe shops")]
    # on a page that drew, the same probe error leaves the items untested (the hook is needed to locate)
    rep2 = _report({"shops.hover": ("untested", "probe shops: hook getShops(): missing", Cause.PAGE)})
    rep2.probes["shops"] = rep.probes["shops"]
    drew = _diagnose(_events(), _network(), _pacing(painted=300, drew=240, flat=0.3), _playback(0.2, 80))
    assert apply_observation(rep2, drew, set(), {"shops.hover"}) == []
    assert [p for p in run_problems(rep2) if p.startswith("probe shops")]


def test_a_frozen_pacing_pass_goes_to_fail_only_when_the_screenshots_saw_nothing_move():
    def rep_with_frozen_pass() -> Report:
        rep = _report({})
        rep.items["smoothness.frame_pacing"] = ItemResult(
            points=None, max=10, status="review", how="auto", evidence={"outcome": "scene_frozen", "reason": "froze"}
        )
        return rep

    still = _diagnose(_events(), _network(), _pacing(painted=1, flat=0.4), _playback())
    rep = rep_with_frozen_pass()
    assert apply_observation(rep, still, set()) == ["smoothness.frame_pacing"]
    fp = rep.items["smoothness.frame_pacing"]
    assert (fp.status, fp.points) == ("fail", 0.0) and fp.evidence["scorer_reason"] == "froze"
    # a page whose screenshots moved (a compositor-only animation, say) keeps its review
    moving = _diagnose(_events(), _network(), _pacing(painted=300, drew=240, flat=0.3), _playback(0.2, 80))
    rep = rep_with_frozen_pass()
    assert apply_observation(rep, moving, set()) == [] and rep.items["smoothness.frame_pacing"].status == "review"


def test_the_blank_rule_reads_its_threshold_from_the_scenario():
    from skycity_bench.inputs.rubric import load_rubric
    from skycity_bench.judging.score_items import score_report

    def start(**frame_pacing: float) -> str:
        rep = _report({})
        for r in (_events(), _network(), _pacing(painted=240, drew=240, flat=0.95), _playback()):
            rep.probes[r.name] = r
        sc = load_scenario(None, {"scorers": {"frame_pacing": frame_pacing}} if frame_pacing else None)
        return score_report(rep, sc, load_rubric(), None).start["class"]

    assert BLANK < 0.95 and start() == "blank"
    assert start(blank_flat_share=0.99) == "started"  # 95 % of one colour is no blank there
