"""The check profile (scenarios/check.yaml) without a browser: every check is decided by
rubric items that have scorers, or by the tour's evidence; the profile scores only those
items; the one exit rule; a malformed profile is one line."""

from __future__ import annotations

import pytest

from skycity_bench.check.compliance import OWN_STEPS, check_profile, check_scenario, load_check_config
from skycity_bench.common.errors import UserError
from skycity_bench.inputs.rubric import load_rubric
from skycity_bench.inputs.scenario import load_scenario
from skycity_bench.judging.scorers import all_scorers
from skycity_bench.reporting.run_report import Candidate, ItemResult, ProbeRecord, Report
from skycity_bench.running.runner import Profile, exit_code


def test_should_map_every_check_to_scored_items_or_the_tours_evidence():
    cfg = load_check_config()
    assert list(cfg.checks) == [
        "single_file",
        "autoplay_muted",
        "hook",
        "shops_hover",
        "pause_resume_replay",
        "no_reset_after_60s",
        "density_sample",
    ]
    rubric_ids = {i.id for i in load_rubric(None).items}
    scorers = all_scorers()
    for name, spec in cfg.checks.items():
        for iid in spec.items:
            assert iid in rubric_ids and iid in scorers, (name, iid)
            # the steps the check runs write the evidence its items' scorers read
            assert set(scorers[iid].probes) <= set(spec.steps) | {"network"}, (name, iid, scorers[iid].probes)
        if spec.evidence:
            assert "check_tour" in spec.steps, name


def test_should_build_a_profile_that_scores_only_the_checks_items():
    cfg = load_check_config()
    prof = check_profile(cfg, ["single_file", "density_sample"])
    assert [s.name for s in prof.specs()] == ["packaging", "check_tour", "density"]
    assert prof.items == ("packaging.single_file", "density.count", "density.categories")
    assert sorted(i.id for i in prof.rubric().items) == sorted(prof.items)  # in the rubric's order
    assert not prof.calibrate and prof.name == "check"
    assert set(OWN_STEPS) == set(cfg.budgets_s)


def test_should_overlay_short_settings_and_keep_the_checks_viewport():
    cfg = load_check_config()
    sc = check_scenario(load_scenario(None, {"viewport": "1280x720"}), cfg)
    pb = sc.probes["playback"]
    assert pb["cycles"] == cfg.overlay["probes"]["playback"]["cycles"] and (pb["width"], pb["height"]) == (1280, 720)
    assert sc.probes["packaging"]["network_watch_s"] == cfg.overlay["probes"]["packaging"]["network_watch_s"]


@pytest.mark.parametrize(
    "text,needle",
    [
        ("tour: {}\nbudgets_s: {}\nchecks: {}\n", "tour"),
        ("checks: {x: {steps: [nosuch], items: [packaging.single_file]}}\n", "checks"),
    ],
)
def test_should_refuse_a_malformed_profile_in_one_line(tmp_path, text, needle):
    good = (load_check_config.__defaults__[0]).read_text(encoding="utf-8")
    p = tmp_path / "check.yaml"
    p.write_text(text if text.startswith("tour") else good.split("checks:\n")[0] + text, encoding="utf-8")
    with pytest.raises(UserError) as e:
        load_check_config(p)
    assert needle in str(e.value) and "\n" not in str(e.value)


def _report(probe_status: str, item_status: str) -> Report:
    r = Report(bench_version="t", rubric_id="skycity-v1", candidate=Candidate(id="c-1", sha256="0" * 64))
    r.probes["packaging"] = ProbeRecord(
        name="packaging", status=probe_status, error=None if probe_status == "ok" else "x"
    )
    r.probes["network"] = ProbeRecord(name="network")
    r.items["packaging.single_file"] = ItemResult(
        points=0 if item_status == "fail" else None, max=2, status=item_status, how="auto"
    )
    return r


def test_should_exit_by_one_rule():
    assert exit_code(_report("ok", "fail")) == 0  # a failing item is a verdict, the run is whole
    assert exit_code(_report("error", "untested")) == 1  # the probe could not collect
    assert exit_code(_report("ok", "untested")) == 1  # its probe ran, the item is still untested


def test_should_refuse_a_profile_naming_an_unknown_item():
    from skycity_bench.common.errors import BenchError

    with pytest.raises(BenchError):
        Profile(items=("no.such_item",)).rubric()
