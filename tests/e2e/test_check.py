"""`skycity-bench check`: the reference demo passes every check; each broken fixture of
tests/fixtures/check/ fails the check it breaks, with the reason its truth file names; exit
codes, JUnit XML and JSON as CI reads them."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from skycity_bench.check.compliance import hook_problems, names, run_checks
from skycity_bench.inputs.scenario import load_scenario
from tests.truth import all_fixtures

ROOT = Path(__file__).resolve().parents[2]
BROKEN = [f for f in all_fixtures("check") if f.truth["check"]["fail"]]
NAMES = names()


def cli(*args, timeout=300):
    return subprocess.run(
        [sys.executable, "-m", "skycity_bench", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("check")
    junit = tmp / "junit.xml"
    r = cli("check", "scenarios/demos/reference.html", "--junit", str(junit), "--json")
    return r, junit


@pytest.mark.browser
def test_should_pass_every_check_on_the_reference_demo(reference):
    r, _ = reference
    res = json.loads(r.stdout)
    bad = {c["name"]: c["reason"] for c in res["checks"] if c["status"] != "pass"}
    assert r.returncode == 0 and res["passed"] and not bad, bad
    assert [c["name"] for c in res["checks"]] == NAMES


@pytest.mark.browser
def test_should_write_one_junit_testcase_per_check(reference):
    _, junit = reference
    suite = ET.parse(junit).getroot()
    assert suite.tag == "testsuite" and suite.get("failures") == "0" and suite.get("skipped") == "0"
    assert [tc.get("name") for tc in suite.iter("testcase")] == NAMES


@pytest.mark.browser
@pytest.mark.parametrize("fx", BROKEN, ids=[f.name for f in BROKEN])
def test_should_fail_a_broken_demo_with_the_right_reason(fx, tmp_path):
    expected = fx.truth["check"]["fail"]
    sc = load_scenario(None, {"viewport": fx.truth["scenario"]["viewport"]})
    res = asyncio.run(run_checks(fx.html, sc, tmp_path, only=list(expected)))
    got = {c.name: c for c in res["checks"]}
    for name, words in expected.items():
        assert got[name].status == "fail" and words in got[name].reason, (name, got[name].status, got[name].reason)
    assert not res["passed"]


@pytest.mark.browser
def test_should_exit_1_with_one_line_per_failure():
    r = cli(
        "check",
        "tests/fixtures/check/external_script.html",
        "--viewport",
        "640x360",
        "--only",
        "single_file",
        "--only",
        "autoplay_muted",
    )
    assert r.returncode == 1, r.stdout + r.stderr
    lines = [x for x in r.stdout.splitlines() if x.startswith(("PASS", "FAIL", "SKIP"))]
    assert lines[0].startswith("FAIL single_file:") and "cdn.example.com" in lines[0]
    assert lines[1] == "PASS autoplay_muted" and len(lines) == 2


@pytest.mark.parametrize(
    "args,needle",
    [
        (["tests/fixtures/check/missing.html"], "no such file"),
        (["tests/fixtures/check/compliant.html", "--only", "nosuch"], "unknown check"),
        (["tests/fixtures/check/compliant.html", "--viewport", "wide"], "--viewport"),
    ],
)
def test_should_exit_2_on_a_usage_error(args, needle):
    r = cli("check", *args, timeout=60)
    assert r.returncode == 2 and needle in r.stderr and "Traceback" not in r.stderr


class _Call:
    def __init__(self, ok, value=None, error=None):
        self.ok, self.value, self.error = ok, value, error


def test_should_name_each_way_the_hook_is_malformed():
    methods = {
        m: m for m in ("getState", "pause", "resume", "replay", "getDynamicObjects", "getShops", "getActiveCard")
    }
    desc = _Call(True, {"version": 2, "cityName": "", **{m: "function" for m in methods if m != "replay"}})
    calls = {
        "getState": _Call(True, {"time": "0", "phase": 7, "paused": False, "ended": False}),
        "getShops": _Call(True, [{"id": "a", "name": "A", "x": 1, "y": 2}]),
        "getDynamicObjects": _Call(True, [{"id": "m", "category": "car", "x": 1, "y": 1, "w": 2, "h": 2}]),
        "getActiveCard": _Call(True, {"shopId": "a", "trigger": "wave"}),
    }
    probs = " | ".join(hook_problems(desc, calls, (640, 360), methods, expected_shops=6))
    for needle in (
        "version is 2",
        "cityName",
        "missing methods: replay",
        "getState().time",
        "phase is 7",
        "1 usable shops, not 6",
        "lack id/category",
        "getActiveCard()",
    ):
        assert needle in probs, (needle, probs)
    assert hook_problems(
        _Call(False, error="missing: no window.skyCityTest"), {}, (640, 360), methods, expected_shops=6
    ) == ["window.skyCityTest: missing: no window.skyCityTest"]
