"""The autoplay rule is one function (evidence/playback.py scene_moves): the playback probe
applies it with probes.playback.moving_scene to decide whether to run the click
diagnostic's arms, the autoplay scorer with scorers.playback to give its verdict. The
scenario gives both the same values, so the arms run exactly when the scorer finds the scene
standing still. No browser."""

from __future__ import annotations

import pytest

from skycity_bench.evidence.playback import scene_moves
from skycity_bench.inputs.scenario import load_scenario
from skycity_bench.judging.scorers.autoplay import Settings as ScorerSettings
from skycity_bench.probes.playback import MovingScene

SC = load_scenario(None)
PROBE_RULE = SC.probe_settings("playback").moving_scene
SCORER_RULE = SC.scorer_settings("playback")
assert isinstance(PROBE_RULE, MovingScene) and isinstance(SCORER_RULE, ScorerSettings)


def watch(cells: int, share: float, travel: int) -> dict:
    return {"union": {"changed_cells": cells, "changed_share": share}, "travel": {"travel_px": travel}}


R = PROBE_RULE
CASES = {
    "wide change": (watch(R.min_changed_cells, R.min_changed_share, 0), True),
    "one cell too few (a spinner)": (watch(R.min_changed_cells - 1, 0.5, 0), False),
    "too small a share": (watch(40, R.min_changed_share / 2, 0), False),
    "one mover travelled": (watch(1, R.min_changed_share / 10, R.min_travel_px), True),
    "travelled a pixel short": (watch(1, R.min_changed_share / 10, R.min_travel_px - 1), False),
    "nothing changed": (watch(0, 0.0, 0), False),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_probe_and_the_scorer_apply_one_rule_to_a_watch(case):
    w, moving = CASES[case]
    assert scene_moves(w, PROBE_RULE) is moving
    assert scene_moves(w, SCORER_RULE) is moving


def test_the_scenario_gives_both_the_same_thresholds():
    for f in ("min_changed_cells", "min_changed_share", "min_travel_px"):
        assert getattr(PROBE_RULE, f) == getattr(SCORER_RULE, f), f
