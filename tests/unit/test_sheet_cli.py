"""The CLI around the sheet: import (with report.html), sheet in three formats with and
without --unblind, rebuilding a store from reports + an exported sheet, and rescore from
stored evidence without a browser."""

import json

from typer.testing import CliRunner

from skycity_bench.cli import app
from skycity_bench.common.errors import UserError
from skycity_bench.evidence.frame_pacing import FramePacingEvidence
from skycity_bench.inputs.rubric import load_rubric
from skycity_bench.inputs.scenario import load_scenario
from skycity_bench.reporting.run_report import ProbeRecord, load, save
from skycity_bench.store.review_store import ReviewStore
from tests.review_reports import make_run

R = load_rubric()
GRADED = [i.id for i in R.items if i.graded]


def invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_should_import_runs_print_the_sheet_and_rebuild_from_an_export(tmp_path):
    runs = [
        make_run(tmp_path / "runs", "model-north.html", seed="n"),
        make_run(tmp_path / "runs", "model-south.html", seed="s", partial=("shops.touch",)),
    ]
    db = tmp_path / "a.sqlite"
    res = invoke("import", *runs, "--db", db)
    assert res.exit_code == 0, res.output
    assert res.output.count("imported: run") == 2
    html = (runs[0] / "report.html").read_text(encoding="utf-8")
    assert "recording.webm" in html and "keyframes/t20.png" in html and "model-north" not in html
    st = ReviewStore(db)
    for name, pct in (("ann", 75), ("bob", 100)):
        st.sign_in(name)
        for cid in st.candidates():
            st.submit(cid, name, R.id, [{"item": i, "level": pct} for i in GRADED])
    md = invoke("sheet", "--db", db)
    assert md.exit_code == 0 and "model-north" not in md.stdout
    graded_mean = sum((R.level(75).share + R.level(100).share) / 2 * R.item(i).points for i in GRADED)
    auto = sum(i.points for i in R.items if not i.graded)
    assert f"**total: {graded_mean + auto:.1f}**" in md.stdout
    assert "environment group 1:" in md.stdout
    un = invoke("sheet", "--db", db, "--unblind", "--format", "csv")
    assert "model-north.html" in un.stdout and "model-south.html" in un.stdout
    exported = invoke("sheet", "--db", db, "--format", "json")
    (tmp_path / "sheet.json").write_text(exported.stdout, encoding="utf-8")
    doc = json.loads(exported.stdout)
    assert len(doc["reviews"]) == 2 * 2 * len(GRADED) and doc["ranking"]["groups"]
    again = invoke("import", *runs, "--db", tmp_path / "b.sqlite", "--reviews", tmp_path / "sheet.json", "--no-html")
    assert again.exit_code == 0, again.output
    assert (
        json.loads(invoke("sheet", "--db", tmp_path / "b.sqlite", "--format", "json").stdout)["candidates"]
        == doc["candidates"]
    )


def test_should_refuse_a_bad_format_and_a_missing_store(tmp_path):
    assert isinstance(invoke("sheet", "--db", tmp_path / "none.sqlite").exception, UserError)
    make = invoke("import", make_run(tmp_path / "r", "m.html", seed="m"), "--db", tmp_path / "x.sqlite")
    assert make.exit_code == 0
    assert isinstance(invoke("sheet", "--db", tmp_path / "x.sqlite", "--format", "xls").exception, UserError)


def test_should_rescore_a_run_from_stored_evidence_without_a_browser(tmp_path):
    run = make_run(tmp_path / "runs", "m.html", seed="r")
    report = load(run)
    sc = load_scenario(None, {"duration_s": 5})  # short: the evidence only has to be well-formed
    report.scenario = {"name": sc.name, "sha256": sc.sha256(), "effective": sc.model_dump(mode="json")}
    n = int(sc.duration_s * 60)
    steady = [round(k * 1000 / 60, 3) for k in range(n + 1)]
    quiet = {
        "calibration_before": {"skipped": True},
        "calibration_after": {"skipped": True},
        "cpu": None,
        "too_noisy": [],
    }
    report.probes["frame_pacing"] = ProbeRecord(
        name="frame_pacing",
        data=FramePacingEvidence(
            duration_s=sc.duration_s,
            frames=n + 1,
            raf_ms=steady,
            entry_ms=steady,
            entry_to_raf_ms=0.0,
            drew=[1] * (n + 1),
            chromium={"source": "test", "error": "tracing is off"},
            page_errors=[],
            dialogs=[],
            noise=quiet,
            passes=1,
            noise_of_passes=[quiet],
        ),
    )
    item = R.item("smoothness.frame_pacing")
    report.items[item.id].points, report.items[item.id].status = 0.0, "fail"  # stale: evidence says smooth
    save(report, run)
    check = invoke("rescore", run, "--check")
    assert check.exit_code == 1 and "changed smoothness.frame_pacing" in check.output
    assert load(run).items[item.id].points == 0.0  # --check writes nothing
    res = invoke("rescore", run)
    assert res.exit_code == 0, res.output
    top = max(t["points"] for t in item.get("tiers"))
    after = load(run)
    assert after.items[item.id].points == top and after.items[item.id].status == "pass"
    assert (run / "report.html").is_file()
    assert invoke("rescore", run, "--check").exit_code == 0
