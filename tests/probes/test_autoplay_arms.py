"""Autoplay on the bench's playback probe: a sparse scene whose first car enters at 1.5 s
plays by itself and is never called click-to-start; a city that waits for a click is, because
the clicked arm moved and the same page left alone did not (fixtures: tests/fixtures/broken/,
their truth: test_autoplay_fixture_truth.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.truth import FIXTURES

pytestmark = pytest.mark.browser


def _autoplay(name: str | Path, tmp_path) -> dict:
    from skycity_bench.inputs.scenario import load_scenario
    from skycity_bench.running.runner import run_candidate

    sc = load_scenario(None, {"probes": {"playback": {"width": 640, "height": 360, "keyboard": False, "cycles": 1}}})
    page = name if isinstance(name, Path) else FIXTURES / "broken" / name
    rep = asyncio.run(run_candidate(page, sc, tmp_path / "run", probes=["playback"])).to_json()
    assert rep["probes"]["playback"]["status"] == "ok", rep["probes"]["playback"]["error"]
    return rep


def test_a_sparse_start_plays_by_itself_and_no_click_is_tried(tmp_path):
    rep = _autoplay("sparse_start.html", tmp_path)
    item = rep["items"]["packaging.autoplay"]
    ev = item["evidence"]
    assert item["status"] == "pass" and ev["outcome"] == "plays_muted", ev["reason"]
    assert ev["travel_px"] >= 24 and ev["changed_cells"] < 6, ev  # its one car travelled; little changed
    auto = rep["probes"]["playback"]["data"]["autoplay"]
    assert auto.get("control") is None and auto.get("clicked") is None


def test_a_city_that_waits_for_a_click_is_click_to_start(tmp_path):
    rep = _autoplay("click_to_start.html", tmp_path)
    ev = rep["items"]["packaging.autoplay"]["evidence"]
    assert rep["items"]["packaging.autoplay"]["status"] == "fail"
    assert ev["outcome"] == "click_to_start" and ev["started_after_click"], ev["reason"]
    assert not ev["control"]["moved"] and ev["clicked"]["moved"], ev
    # the two arms watched the same stretch of time
    assert abs(ev["control"]["to_s"] - ev["clicked"]["to_s"]) < 0.5, ev
    assert "window:click" in ev["input_listeners"], ev["input_listeners"]


def test_should_name_a_start_button_whose_handler_is_a_property(tmp_path):
    """The handlers come from the browser's listener table, so one set as a property
    (`button.onclick = …`, never through addEventListener) is named too, on its element."""
    src = (FIXTURES / "broken" / "click_to_start.html").read_text()
    line = "addEventListener('click', () => { started = true; document.getElementById('start').remove(); });"
    assert line in src
    page = tmp_path / "property_start.html"
    prop = "document.getElementById('start').onclick = function () { started = true; this.remove(); };"
    page.write_text(src.replace(line, prop))
    rep = _autoplay(page, tmp_path)
    ev = rep["items"]["packaging.autoplay"]["evidence"]
    assert ev["outcome"] == "click_to_start", ev["reason"]
    assert ev["input_listeners"] == ["div#start:click"], ev["input_listeners"]
