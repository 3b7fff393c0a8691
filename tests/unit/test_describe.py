"""`skycity-bench describe` lists what the registries hold: every sheet item of the rubric,
every probe, every setting of the default scenario; the table and the JSON name the same."""

from __future__ import annotations

import json
import subprocess
import sys

from skycity_bench.inputs.rubric import load_rubric
from skycity_bench.probes import registry


def _describe(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "skycity_bench", "describe", *args], capture_output=True, text=True, timeout=120
    )


def test_describe_json_lists_every_sheet_item_probe_and_setting():
    r = _describe("--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    items = {i["item"] for i in doc["items"]}
    assert items == {i.id for i in load_rubric(None).items} and len(items) == 20
    assert {p["probe"] for p in doc["probes"]} == set(registry.names())
    settings = {s["setting"] for s in doc["settings"]}
    assert "probes.density.delta_frames" in settings and "timeouts.load_s" in settings
    assert "scorers.frame_pacing.clock_resolution_ms" in settings
    manual = [i for i in doc["items"] if i["how"] == "manual"]
    assert manual and all(i["decided_by"] == "reviewers" for i in manual)
    auto = [i for i in doc["items"] if i["how"] == "auto"]
    assert auto and all(i["decided_by"].startswith("scorer ") and i["needs"] for i in auto)


def test_describe_table_names_the_same_items_and_probes():
    r = _describe()
    assert r.returncode == 0, r.stderr
    doc = json.loads(_describe("--json").stdout)
    for name in [i["item"] for i in doc["items"]] + [p["probe"] for p in doc["probes"]]:
        assert name in r.stdout, name
