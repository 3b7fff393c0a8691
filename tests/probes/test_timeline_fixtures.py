"""The timeline probe and the three camera items on the timeline fixture family
(tests/fixtures/timeline): fewer than four phases, no city name, the name drawn on a canvas,
a hard reset at 60 s, a cut mid-tour, and a clean one with none of these.

Each fixture plays its full 65 s under the fake clock at the truth file's small viewport and
low rate (scenario overrides); one bench run per fixture, shared by every assertion, two
side by side to stay inside the area's test budget on a 2-core machine.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.truth import all_fixtures, assert_truth, compare, print_table, run_side_by_side

pytestmark = pytest.mark.browser

TIMELINE = [f for f in all_fixtures("timeline") if "timeline" in (f.truth.get("probes") or [])]
NAMES = [f.name for f in TIMELINE]


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, tuple[dict, Path]]:
    got = run_side_by_side({fx.name: fx for fx in TIMELINE}, tmp_path_factory.mktemp("timeline"))
    for fx in TIMELINE:
        print_table(fx.name, compare(got[fx.name][0], fx.truth))
    return got


def test_should_cover_every_finding_the_issue_names():
    assert {
        "timeline/clean",
        "timeline/three_phases",
        "timeline/no_city_name",
        "timeline/reset_at_60",
        "timeline/cut_mid_tour",
    } <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_should_match_the_truth_file(reports, name):
    fx = next(f for f in TIMELINE if f.name == name)
    rec = reports[name][0]["probes"]["timeline"]
    assert rec["status"] == "ok", rec.get("error")
    assert_truth(fx, reports[name][0])


@pytest.mark.parametrize("name", NAMES)
def test_should_list_findings_first_and_draw_the_speed_plot(reports, name):
    report, out = reports[name]
    for item in ("camera.phases", "camera.motion", "camera.ending"):
        ev = report["items"][item]["evidence"]
        assert list(ev)[:2] == ["findings", "finding_codes"]
        assert len(ev["findings"]) == len(ev["finding_codes"])
        assert "timeline_camera.png" in ev["files"]
    assert (out / "timeline_camera.png").stat().st_size > 10_000


def test_should_save_both_sides_of_a_cut_for_reviewers(reports):
    report, out = reports["timeline/cut_mid_tour"]
    (cut,) = report["items"]["camera.motion"]["evidence"]["cuts"]
    assert cut["frames"] and all((out / f).is_file() for f in cut["frames"].values())
    assert "27" in report["items"]["camera.motion"]["evidence"]["findings"][0]


def _clean_fixture_peak_speed(height: int = 270) -> float:
    """The on-screen peak speed clean.html's camera formula gives (see _build.py camera()):
    centre cx = 900 + 2900 * smooth(t / 60), zoom z = 1 + 0.25 * smooth((t - 25) / 20), drawn
    at a scale of z * height / 600 screen px per world px."""
    t = np.linspace(0, 60, 60001)
    smooth = lambda u: np.clip(u, 0, 1) ** 2 * (3 - 2 * np.clip(u, 0, 1))  # noqa: E731
    cx = 900 + 2900 * smooth(t / 60)
    z = 1 + 0.25 * smooth((t - 25) / 20)
    return float(np.max(np.abs(np.gradient(cx, t)) * z * height / 600))


def test_should_measure_the_camera_the_fixture_moves(reports):
    cam = reports["timeline/clean"][0]["measurements"]["timeline"]["camera"]
    assert cam["registered_share"] > 0.95
    assert cam["speed_max"] == pytest.approx(_clean_fixture_peak_speed(), rel=0.05)


def test_should_say_the_hook_agrees_about_the_reset(reports):
    ev = reports["timeline/reset_at_60"][0]["items"]["camera.ending"]["evidence"]
    assert ev["reset_after_60s"] is True and ev["hook_after_tour"]["says_reset"] is True
    assert ev["hook_disagrees"] is False
    assert ev["reset_check"]["first_s"] == pytest.approx(60, abs=0.5)
