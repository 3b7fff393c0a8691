"""Autoplay on the bench's playback probe: a sparse scene whose first car enters at 1.5 s
plays by itself and is never called click-to-start; a city that waits for a click is, because
the clicked arm moved and the same page left alone did not (fixtures: tests/fixtures/broken/,
their truth: test_autoplay_fixture_truth.py)."""

from __future__ import annotations

import asyncio

import pytest

from tests.truth import FIXTURES

pytestmark = pytest.mark.browser


def _autoplay(name: str, tmp_path) -> dict:
    from skycity_bench.inputs.scenario import load_scenario
    from skycity_bench.running.runner import run_candidate

    sc = load_scenario(None, {"probes": {"playback": {"width": 640, "height": 360, "keyboard": False, "cycles": 1}}})
    rep = asyncio.run(run_candidate(FIXTURES / "broken" / name, sc, tmp_path, probes=["playback"])).to_json()
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
