"""Chapter marks and evidence moments of the review app (review/chapters.py), on golden
evidence: what the timeline and shops probes really collected on their fixtures, scored by
the real scorers (no browser). The expected moments come from the fixtures' truth files.
Also the opening stamp and the timings store behind "time per candidate" (review/timing.py,
store/timings.py)."""

from __future__ import annotations

import json

import pytest

from skycity_bench.inputs.rubric import find_rubric, load_rubric
from skycity_bench.inputs.scenario import Scenario
from skycity_bench.judging.score_items import score_report
from skycity_bench.review.chapters import chapters, item_moments
from tests.golden_evidence import GOLDEN_DIR, as_report, load
from tests.truth import FIXTURES


def _truth(family: str, name: str) -> dict:
    return json.loads((FIXTURES / family / f"{name}.truth.json").read_text(encoding="utf-8"))["expect"]


def _scored(tmp_path, *golden: str, recording_s: float | None = None) -> dict:
    """One report from several golden files' probes, scored; optionally a recording record."""
    gs = [load(GOLDEN_DIR / f"{g}.json") for g in golden]
    g = {**gs[0], "probes": {k: v for x in gs for k, v in x["probes"].items()}}
    rubric = load_rubric(find_rubric(g["rubric_id"]))
    report = score_report(as_report(g), Scenario.model_validate(g["scenario"]), rubric, tmp_path)
    if recording_s is not None:  # after scoring: the camera scorers read a full recording evidence
        from skycity_bench.reporting.run_report import ProbeRecord

        report.probes["recording"] = ProbeRecord(
            name="recording", data={"file": "recordings/recording.webm", "duration_s": recording_s}
        )
    return report.to_json()


def _near(expect, got: float) -> bool:
    value, tol = (expect["value"], expect["abs_tol"]) if isinstance(expect, dict) else (expect, 1e-6)
    return abs(got - value) <= tol


def test_marks_hold_the_phases_the_dense_window_each_auto_card_and_the_city_name(tmp_path):
    rep = _scored(tmp_path, "timeline/clean", "shops/correct")
    ch = chapters(rep)
    by = {}
    for m in ch["marks"]:
        by.setdefault(m["kind"], []).append(m)
    assert ch["unknown"] == []
    tl, shops = _truth("timeline", "clean"), _truth("shops", "correct")
    # four phases, at the fixture's phase starts (truth: 15, 30, 45 s after the first)
    assert len(by["phase"]) == tl["measurements.timeline.distinct_phases"] == 4
    for i in (1, 2, 3):
        assert _near(tl[f"measurements.timeline.phases.{i}.start_s"], by["phase"][i]["t_s"])
    # the dense window is the scenario's, as run
    (dw,) = by["density"]
    assert [dw["t_s"], dw["end_s"]] == rep["scenario"]["effective"]["dense_window_s"]
    # one mark per automatic card, at its start, named by its shop
    assert [m["label"].split()[-1] for m in by["shop"]] == [
        shops[f"measurements.shops.auto_display.{i}.shop_id"] for i in range(3)
    ]
    assert _near(shops["measurements.shops.auto_display.0.start_s"], by["shop"][0]["t_s"])
    assert _near(shops["measurements.shops.auto_display.0.end_s"], by["shop"][0]["end_s"])
    # the city name: the first closing-shot check that saw it (the fixture shows it from 48 s,
    # the bench looks only in the last seconds of the tour)
    (city,) = by["city"]
    seen = rep["items"]["camera.ending"]["evidence"]["city_name_check"]["seen_at_s"]
    assert city["t_s"] == min(seen) and city["t_s"] >= 48
    assert [m["t_s"] for m in ch["marks"]] == sorted(m["t_s"] for m in ch["marks"])


def test_each_item_links_to_its_moments(tmp_path):
    rep = _scored(tmp_path, "timeline/clean", "shops/correct")
    mo = item_moments(rep, chapters(rep)["marks"])
    assert len(mo["camera.phases"]) == 4
    assert len(mo["shops.auto_display"]) == 3
    assert mo["camera.ending"][0]["t_s"] >= 48
    assert mo["density.count"][0]["t_s"] == rep["scenario"]["effective"]["dense_window_s"][0]
    assert "visual.composition" not in mo  # no moment of its own: no link


def test_an_untested_probe_leaves_its_marks_out_and_says_why(tmp_path):
    rep = _scored(tmp_path, "shops/correct")  # no timeline: phases and city name unknown
    ch = chapters(rep)
    kinds = {m["kind"] for m in ch["marks"]}
    assert kinds == {"shop", "density"}
    unknown = {u["what_en"]: u["why"] for u in ch["unknown"]}
    assert set(unknown) == {"the tour's phases", "the city name's first appearance"}
    assert unknown["the tour's phases"].startswith("camera.phases untested")
    rep = _scored(tmp_path, "timeline/no_city_name")  # the name never shown: no mark, the reason
    ch = chapters(rep)
    assert "city" not in {m["kind"] for m in ch["marks"]}
    (why,) = [u["why"] for u in ch["unknown"] if u["what"] == "城市名"]
    assert why.startswith("camera.ending") and "neither" in why
    assert {u["what"] for u in ch["unknown"]} == {"城市名", "自动卡片"}


def test_moments_after_the_end_of_the_recording_are_marked_beyond(tmp_path):
    rep = _scored(tmp_path, "timeline/clean", "shops/correct", recording_s=29.0)
    ch = chapters(rep)
    assert ch["duration_s"] == 29.0
    assert ch["unknown"] == []
    assert all(m["beyond"] == (m["t_s"] > 29.0) for m in ch["marks"])
    assert any(m["beyond"] for m in ch["marks"]) and not all(m["beyond"] for m in ch["marks"])


def test_a_stopped_tour_keeps_the_phases_it_saw_and_says_the_rest_is_unknown():
    rep = {
        "items": {"camera.phases": {"status": "untested", "evidence": {"reason": "probe timeline: stopped early"}}},
        "probes": {
            "timeline": {
                "status": "error",
                "error": "stopped early",
                "data": {"reached_s": 28.9, "phases": [{"phase": 1, "start_s": 0.0}, {"phase": 2, "start_s": 8.1}]},
            }
        },
    }
    ch = chapters(rep)
    assert [m["t_s"] for m in ch["marks"] if m["kind"] == "phase"] == [0.0, 8.1]
    assert any(u["what_en"] == "phase changes after 28.9 s" and "stopped early" in u["why"] for u in ch["unknown"])


@pytest.mark.parametrize("bad", [None, "x", -3, float("nan")])
def test_a_hostile_report_gives_no_mark_and_no_error(bad):
    rep = {
        "items": {
            "camera.phases": {"evidence": {"phases": [{"phase": "<b>", "start_s": bad}, "junk"]}},
            "shops.auto_display": {"evidence": {"intervals": [{"shop_id": "s", "start_s": bad}]}},
        },
        "scenario": {"effective": {"dense_window_s": [bad, 35]}},
    }
    ch = chapters(rep)
    assert ch["marks"] == []
    rep["items"]["shops.auto_display"]["evidence"]["intervals"][0].update(start_s=3, shop_id="x" * 5000)
    (m,) = [m for m in chapters(rep)["marks"] if m["kind"] == "shop"]
    assert len(m["label"]) < 60  # a demo's long name does not flood the page


# --- time per candidate -------------------------------------------------------------------


def test_the_opening_stamp_is_honoured_only_for_its_reviewer_and_candidate():
    from skycity_bench.review.timing import OpenedStamp

    st = OpenedStamp("secret-1")
    tok = st.issue("ann", "c-000000000001", at="2026-12-03T10:00:00+00:00")
    assert st.opened_at(tok, "ann", "c-000000000001") == "2026-12-03T10:00:00+00:00"
    assert st.opened_at(tok, "bob", "c-000000000001") is None  # another reviewer's page
    assert st.opened_at(tok, "ann", "c-000000000002") is None  # another candidate's
    assert OpenedStamp("secret-2").opened_at(tok, "ann", "c-000000000001") is None  # not our signature
    assert st.opened_at(tok[:-2] + "xx", "ann", "c-000000000001") is None  # altered
    assert st.opened_at(None, "ann", "c-000000000001") is None


@pytest.mark.parametrize("db", ["sqlite", "postgres"])
def test_timings_are_stored_per_save_and_summed_per_candidate(tmp_path, request, db):
    from skycity_bench.store import timings
    from skycity_bench.store.review_store import ReviewStore
    from tests.review_reports import make_run

    store = ReviewStore(tmp_path / "r.sqlite" if db == "sqlite" else request.getfixturevalue("pg_url"), seed=1)
    a = store.import_run(make_run(tmp_path / "runs", "t-model-a.html", seed="ta")).candidate_id
    b = store.import_run(make_run(tmp_path / "runs", "t-model-b.html", seed="tb")).candidate_id
    c = store.import_run(make_run(tmp_path / "runs", "t-model-c.html", seed="tc")).candidate_id
    store.sign_in("ann")
    t0 = "2026-12-03T10:00:00+00:00"
    assert timings.record(store, "ann", a, t0, "2026-12-03T10:01:00+00:00") == 60
    assert timings.record(store, "ann", a, "2026-12-03T10:02:00+00:00", "2026-12-03T10:02:30+00:00") == 30
    assert timings.record(store, "ann", b, t0, "2026-12-03T10:03:00+00:00") == 180
    assert timings.record(store, "ann", c, t0, "2026-12-03T10:00:10+00:00") == 10
    assert timings.record(store, "ann", c, t0, "2026-12-03T09:00:00+00:00") is None  # saved before opened
    assert timings.record(store, "nobody", c, t0, "2026-12-03T10:00:10+00:00") is None
    (s,) = timings.summary(store)
    assert s["reviewer"] == "ann" and s["candidates"] == 3 and s["saves"] == 4
    assert {x["candidate_id"]: x["seconds"] for x in s["per_candidate"]} == {a: 90, b: 180, c: 10}
    assert s["median_s"] == 90 and s["total_s"] == 280
