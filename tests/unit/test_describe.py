"""`skycity-bench describe` lists what the registries hold: every sheet item of the rubric
(the manual ones too), every probe, every scorer, every setting of the default scenario with
where to change it; the tables and the JSON name the same."""

from __future__ import annotations

import json
import subprocess
import sys

from typer.testing import CliRunner

from skycity_bench.cli import app
from skycity_bench.inputs.rubric import load_rubric
from skycity_bench.judging.scorers import all_scorers
from skycity_bench.probes import registry


def _json() -> dict:
    r = CliRunner().invoke(app, ["describe", "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_describe_json_lists_every_sheet_item_probe_scorer_and_setting():
    doc = _json()
    items = {i["item"] for i in doc["items"]}
    assert items == {i.id for i in load_rubric(None).items} and len(items) == 20
    assert {p["probe"] for p in doc["probes"]} == set(registry.names())
    assert {i for s in doc["scorers"] for i in s["items"]} == set(all_scorers())
    settings = {s["setting"]: s for s in doc["settings"]}
    assert settings["probes.density.delta_frames"]["where"] == "scenarios/skycity.yaml"
    assert "timeouts.load_s" in settings and "scorers.frame_pacing.clock_resolution_ms" in settings
    # each probe's settings are rows of the settings list
    density = next(p for p in doc["probes"] if p["probe"] == "density")
    assert "probes.density.delta_frames" in density["settings"]
    assert all(name in settings for p in doc["probes"] for name in p["settings"])
    assert doc["rubric"]["file"] == "rubrics/skycity-v1.yaml"


def test_items_no_scorer_decides_are_listed_as_manual():
    doc = _json()
    manual = [i for i in doc["items"] if i["manual"]]
    assert {i["item"] for i in manual} == {i["item"] for i in doc["items"]} - set(all_scorers())
    assert manual and all(i["decided_by"] == "reviewers" and not i["needs"] for i in manual)
    assert all(i["how"] == "manual" for i in manual)
    auto = [i for i in doc["items"] if i["how"] == "auto"]
    assert auto and all(i["decided_by"].startswith("scorer ") and i["needs"] for i in auto)


def test_describe_tables_name_the_same_items_probes_and_scorers():
    doc = _json()
    r = CliRunner().invoke(app, ["describe"], env={"COLUMNS": "250"})
    assert r.exit_code == 0, r.output
    names = [i["item"] for i in doc["items"]] + [p["probe"] for p in doc["probes"]]
    for name in names + [s["scorer"] for s in doc["scorers"]]:
        assert name in r.stdout, name
    assert r.stdout.count("reviewers (manual)") == sum(i["manual"] for i in doc["items"])


def test_an_unknown_rubric_is_refused():
    r = CliRunner().invoke(app, ["describe", "--rubric", "no-such-rubric"])
    assert r.exit_code != 0 and "no-such-rubric" in str(r.exception)


def test_the_installed_command_exits_0():
    r = subprocess.run(
        [sys.executable, "-m", "skycity_bench", "describe", "--json"], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    assert len(json.loads(r.stdout)["items"]) == 20
