"""camera.phases, camera.motion, camera.ending on hand-made timeline evidence (no browser):
the items stay `review` with null points, findings come first, each finding appears exactly
when its fact is in the evidence."""

from __future__ import annotations

import copy

import pytest

from skycity_bench.evidence.timeline import TimelineEvidence
from skycity_bench.inputs.rubric import load_rubric
from skycity_bench.inputs.scenario import load_scenario
from skycity_bench.judging.scorers import ScoreInput, all_scorers
from skycity_bench.reporting.run_report import ProbeRecord

FPS = 2


def _evidence(phases=(0, 15, 30, 45), cut_at=None, reset=False, name="page_text") -> dict:
    t = [i / FPS for i in range(65 * FPS + 1)]
    n = len(t)
    ph = [max(k + 1 for k, s in enumerate(phases) if (x % 60 if reset else x) >= s) for x in t]
    frames = {
        "t_s": t,
        "dx": [None] + [-8.0] * (n - 1),
        "dy": [None] + [0.0] * (n - 1),
        "scale": [None] + [1.0] * (n - 1),
        "rot_deg": [None] + [0.0] * (n - 1),
        "residual": [None] + [0.006] * (n - 1),
        "raw_diff": [None] + [0.03] * (n - 1),
        "inlier_ratio": [None] + [0.9] * (n - 1),
        "features": [None] + [200] * (n - 1),
    }
    if cut_at is not None:
        i = t.index(cut_at)
        frames["residual"][i], frames["inlier_ratio"][i], frames["dx"][i] = 0.2, 0.02, 1.0
    post = [
        {
            "t_s": x,
            "d_open": 0.01 if reset and x > 60 else 0.2,
            "open_t_s": 0.0,
            "d_end": 0.3 if reset and x > 60 else 0.01,
        }
        for x in t
        if x >= 60
    ]

    # The tour's raw city-name checks (probes/_city_name.py); scorers/city_name.py judges them.
    def look(t_s, share, drawn=False):
        return {
            "t_s": t_s,
            "dom_elements": 1,
            "changed_share": share,
            "diff_level": 40,
            "elements": [],
            "canvas": {
                "calls": int(drawn),
                "full_name": drawn,
                "all_characters": drawn,
                "onscreen": drawn,
                "offscreen_only": False,
                "where": [960, 100] if drawn else None,
            },
        }

    checks = {"page_text": [look(51.5, 0.12)], "none": [look(51.5, 0.002)], "canvas": [look(51.5, 0.0, drawn=True)]}
    from skycity_bench.analysis import motion as _motion

    return {
        "sample_fps": FPS,
        "end_s": 65,
        "tour_s": 60,
        "viewport": {"width": 1920, "height": 1080},
        "analysis_size": [480, 270],
        "css_per_px": 4.0,
        "city_name": "X",
        "hook": {"describe": "ok", "getState": {"ok": n, "failed": 0, "first_error": None, "invalid_phase": 0}},
        "states": {"t_s": t, "phase": ph, "time": [x % 60 if reset else x for x in t], "ended": [x >= 60 for x in t]},
        "phases": _motion.phase_changes([{"t_s": x, "phase": p} for x, p in zip(t, ph)]),
        "frames": frames,
        "reset": {"post": post, "end_ref_s": 59.5, "end_vs_opening": 0.2},
        "name_checks": checks[name],
        "evidence_frames": {"cuts": {}, "ending": []},
        "stepped_by": "timeline",
        "wall_s": 1.0,
        "analysis_cpu_s": 0.5,
        "spent_s": {},
        "page_errors": [],
    }


def _record(data: dict) -> ProbeRecord:
    """The record as the probe stores it: the typed evidence (whole model) with its version."""
    rec = ProbeRecord(name="timeline")
    rec.data = TimelineEvidence.model_validate(data)
    return rec


def _score(data: dict, item: str, tmp_path=None):
    rubric = load_rubric(None)
    spec = all_scorers()[item]
    inp = ScoreInput(
        item=next(i for i in rubric.items if i.id == item),
        rubric=rubric,
        scenario=load_scenario(None),
        records={"timeline": _record(data)},
        out_dir=tmp_path,
    )
    res = spec.fn(inp)
    if tmp_path is not None:
        res.evidence["files"] = spec.render(inp, res, tmp_path)
    return res


@pytest.mark.parametrize("item", ["camera.phases", "camera.motion", "camera.ending"])
def test_should_leave_points_to_reviewers_with_no_finding_on_a_clean_timeline(item):
    res = _score(_evidence(), item)
    assert (res.status, res.points) == ("review", None)
    assert list(res.evidence)[:2] == ["findings", "finding_codes"] and res.evidence["finding_codes"] == []


def test_should_draw_one_speed_plot_for_the_three_items(tmp_path):
    d = _evidence(cut_at=27.5)
    files = [
        _score(d, item, tmp_path).evidence["files"] for item in ("camera.phases", "camera.motion", "camera.ending")
    ]
    assert files == [["timeline_camera.png"]] * 3
    assert (tmp_path / "timeline_camera.png").stat().st_size > 10_000


def test_should_report_the_missing_phase_first():
    res = _score(_evidence(phases=(0, 20, 40)), "camera.phases")
    assert res.evidence["finding_codes"] == ["missing_phase"]
    assert res.evidence["findings"][0].startswith("missing phase 4")
    assert res.measurements["timeline.phases"] == [
        {"phase": 1, "start_s": 0.0},
        {"phase": 2, "start_s": 20.0},
        {"phase": 3, "start_s": 40.0},
    ]
    assert res.measurements["timeline.four_phases_in_order"] is False


def test_should_report_phases_out_of_order():
    d = _evidence()
    d["phases"] = [
        {"phase": 1, "start_s": 0},
        {"phase": 3, "start_s": 15},
        {"phase": 2, "start_s": 30},
        {"phase": 4, "start_s": 45},
    ]
    res = _score(d, "camera.phases")
    assert res.evidence["finding_codes"] == ["phases_out_of_order"]


def test_should_say_phases_are_unknown_without_a_hook():
    d = _evidence()
    d["states"] = {"t_s": [], "phase": [], "time": [], "ended": []}
    d["phases"] = []
    d["hook"]["getState"]["first_error"] = "missing: no window.skyCityTest"
    res = _score(d, "camera.phases")
    assert res.evidence["finding_codes"] == ["phases_unknown"] and res.points is None


def test_should_list_a_cut_with_its_time():
    res = _score(_evidence(cut_at=27.5), "camera.motion")
    assert res.evidence["finding_codes"] == ["cut"]
    assert "27.5 s" in res.evidence["findings"][0]
    assert res.measurements["timeline.cuts"] == [{"t_s": 27.5, "from_s": 27.0, "kind": "content"}]
    assert res.measurements["timeline.cut_count"] == 1


def test_should_report_a_jump_back_at_60_s_under_the_ending_not_as_a_tour_cut():
    d = _evidence(reset=True)
    i = d["frames"]["t_s"].index(60.5)
    d["frames"]["residual"][i], d["frames"]["inlier_ratio"][i] = 0.2, 0.02
    end = _score(d, "camera.ending")
    assert end.evidence["finding_codes"] == ["reset_after_60s"]
    assert end.measurements["timeline.reset_after_60s"] is True
    assert end.evidence["hook_after_tour"]["says_reset"] is True
    motion = _score(d, "camera.motion")
    assert motion.evidence["finding_codes"] == [] and motion.evidence["cuts_after_tour"] == [60.5]


@pytest.mark.parametrize(
    "name, code, visible", [("none", "city_name_missing", False), ("canvas", "city_name_on_canvas", None)]
)
def test_should_report_the_city_name_finding(name, code, visible):
    res = _score(_evidence(name=name), "camera.ending")
    assert res.evidence["finding_codes"] == [code]
    assert res.measurements["timeline.city_name_visible"] is visible


def test_should_rejudge_cuts_with_new_thresholds_from_the_same_evidence():
    d = _evidence(cut_at=27.5)
    assert _score(copy.deepcopy(d), "camera.motion").measurements["timeline.cut_count"] == 1
    # raising the floor above the cut's residual (scenario override) removes the finding
    rubric = load_rubric(None)
    sc = load_scenario(None, {"scorers": {"camera": {"cut_min_residual": 0.5}}})
    spec = all_scorers()["camera.motion"]
    inp = ScoreInput(
        item=next(i for i in rubric.items if i.id == "camera.motion"),
        rubric=rubric,
        scenario=sc,
        records={"timeline": _record(d)},
    )
    assert spec.fn(inp).measurements["timeline.cut_count"] == 0
