"""One execution path: `check`, a single `run` and a batch run the same fixture through
runner.execute and agree on the items they share; each exits by its rule.

Cheap on purpose: the packaging probe only (fake clock, a 640x360 page), on a fixture whose
truth is a failing packaging.single_file (it loads a script from cdn.example.com, which the
closed network refuses): a scored failure, so a run and a batch exit 0 (all evidence
collected and scored) while `check` exits 1 (a check failed)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.truth import fixture

from .test_batch_resume import ROOT, fast_scenario

FX = fixture("check/external_script")
ITEM = "packaging.single_file"


def cli(*args: str, timeout: int = 180) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "skycity_bench", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="module")
def three(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("one_path")
    sc = str(fast_scenario(tmp / "s.yaml"))
    html = str(FX.html.relative_to(ROOT))
    common = ["--viewport", "640x360", "--scenario", sc]
    chk = cli("check", html, "--only", "single_file", "--out", str(tmp / "check"), *common)
    run = cli("run", html, "--probe", "packaging", "--out", str(tmp / "run"), "--quiet", *common)
    # a pattern makes it a batch (a worker process per run), even for one file
    bat = cli("run", html[:-1] + "[l]", "--probe", "packaging", "--out", str(tmp / "batch"), "--quiet", *common)
    reports = {"check": json.loads((tmp / "check" / "report.json").read_text())}
    reports["run"] = json.loads((tmp / "run" / "report.json").read_text())
    (r,) = json.loads((tmp / "batch" / "batch.json").read_text())["runs"]
    reports["batch"] = json.loads((tmp / "batch" / r["dir"] / "report.json").read_text())
    return {"check": chk, "run": run, "batch": bat}, reports


@pytest.mark.browser
def test_should_score_the_shared_items_alike_in_check_run_and_batch(three):
    procs, reports = three
    for name, p in procs.items():
        assert p.returncode in (0, 1), (name, p.stderr[-2000:])
    assert {n: r["environment"].get("profile") for n, r in reports.items()} == {
        "check": "check",
        "run": "run",
        "batch": "run",
    }
    shared = set(reports["check"]["items"]) & set(reports["run"]["items"]) & set(reports["batch"]["items"])
    assert ITEM in shared
    for iid in shared:
        got = {n: (r["items"][iid]["status"], r["items"][iid]["points"]) for n, r in reports.items()}
        assert len(set(got.values())) == 1, (iid, got)
    # the fixture's truth: the CDN script fails the item, and every path says which host
    assert reports["run"]["items"][ITEM]["status"] == FX.truth["expect"][f"items.{ITEM}.status"]
    for n, r in reports.items():
        assert "cdn.example.com" in json.dumps(r["items"][ITEM]["evidence"]), n
    # the same evidence: the probe's findings, the rubric file it was scored with
    for key in ("rubric_id", "rubric_sha256"):
        assert len({r.get(key) for r in reports.values()}) == 1, key
    pk = [r["probes"]["packaging"] for r in reports.values()]
    assert {p["status"] for p in pk} == {"ok"} and len({p["version"] for p in pk}) == 1


@pytest.mark.browser
def test_should_rescore_a_checks_report_on_its_own_items_only(three, tmp_path_factory):
    _, reports = three
    assert reports["check"]["environment"]["profile_items"] == list(reports["check"]["items"]) == [ITEM]
    out = next(p for p in tmp_path_factory.getbasetemp().rglob("one_path*/check"))
    r = cli("rescore", str(out), "--check")
    assert r.returncode == 0 and "0 item(s) would change" in r.stdout, r.stdout + r.stderr


@pytest.mark.browser
def test_should_exit_by_one_rule_and_check_by_its_verdict(three):
    procs, _ = three
    # run and batch: every probe collected and every item it decides scored -> 0, a failing
    # item is a verdict, not a failure of the run; check: a failed check -> 1
    assert procs["run"].returncode == 0, procs["run"].stderr[-2000:]
    assert procs["batch"].returncode == 0, procs["batch"].stderr[-2000:]
    assert procs["check"].returncode == 1, procs["check"].stdout + procs["check"].stderr[-2000:]
    assert "FAIL single_file:" in procs["check"].stdout and "cdn.example.com" in procs["check"].stdout
