"""The evidence contract: typed, versioned evidence, scorers that declare the versions they
read, and `rescore` refusing what it would score wrongly — in one line naming the file and
the field, exit 2, writing nothing. No browser."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skycity_bench import evidence
from skycity_bench.cli import app
from skycity_bench.common.errors import UserError
from skycity_bench.evidence.frame_pacing import FramePacingEvidence
from skycity_bench.inputs.rubric import DEFAULT_RUBRIC, load_rubric, rubric_sha256
from skycity_bench.inputs.scenario import load_scenario
from skycity_bench.judging.score_items import score_report
from skycity_bench.judging.scorers import all_scorers
from skycity_bench.probes import registry
from skycity_bench.reporting.run_report import Candidate, ProbeRecord, Report, save

RUBRIC = load_rubric()
QUIET = {"calibration_before": {"skipped": True}, "calibration_after": {"skipped": True}, "cpu": None, "too_noisy": []}


def steady_pass(seconds: float = 5) -> FramePacingEvidence:
    n = int(seconds * 60)
    t = [round(k * 1000 / 60, 3) for k in range(n + 1)]
    return FramePacingEvidence(
        duration_s=seconds,
        frames=n + 1,
        raf_ms=t,
        entry_ms=t,
        entry_to_raf_ms=0.0,
        drew=[1] * (n + 1),
        chromium={"source": "test", "error": "tracing is off"},
        page_errors=[],
        dialogs=[],
        noise=QUIET,
        passes=1,
        noise_of_passes=[QUIET],
    )


def stored_run(tmp_path: Path) -> Path:
    """A scored run folder whose report holds one real evidence model (frame pacing)."""
    sc = load_scenario(None, {"duration_s": 5})
    rep = Report(
        bench_version="test",
        rubric_id=RUBRIC.id,
        candidate=Candidate(id="c", sha256="0" * 64),
        scenario={"name": sc.name, "sha256": sc.sha256(), "effective": sc.model_dump(mode="json")},
    )
    rec = ProbeRecord(name="frame_pacing", version=registry.get("frame_pacing").version, duration_s=5.0)
    rec.data = steady_pass()  # as the runner assigns what a probe returns
    rep.probes["frame_pacing"] = rec
    # scored as live, without drawing the frame-pacing plot (no item or check here reads it;
    # drawing is checked in test_golden_evidence): a second of matplotlib per test saved
    score_report(rep, sc, RUBRIC, None)
    save(rep, tmp_path)
    return tmp_path


def rescore(run: Path, *args):
    return CliRunner().invoke(app, ["rescore", str(run), "--no-html", *args])


def refused(run: Path, *needles: str) -> str:
    """rescore refuses with one line naming the file and every needle (the CLI's UserError:
    exit 2, see test_rescore_exits_2_with_one_line), and writes nothing."""
    before, files = (run / "report.json").read_bytes(), sorted(p.name for p in run.iterdir())
    res = rescore(run)
    assert isinstance(res.exception, UserError), res.output
    line = str(res.exception)
    assert len(line.splitlines()) == 1, line
    assert str(run / "report.json") in line, line
    for n in needles:
        assert n in line, line
    assert (run / "report.json").read_bytes() == before
    assert sorted(p.name for p in run.iterdir()) == files
    return line


def edit(run: Path, fn) -> None:
    doc = json.loads((run / "report.json").read_text())
    fn(doc)
    (run / "report.json").write_text(json.dumps(doc))


# ----------------------------------------------------------------- the models
def test_every_typed_probe_writes_its_models_version():
    for name in registry.names():
        spec = registry.get(name)
        if spec.evidence is not None:
            assert spec.version == spec.evidence.evidence_version == evidence.current_version(name)
            assert spec.evidence.probe == name


def test_every_scorer_of_a_typed_probe_declares_the_versions_it_reads():
    typed = {n for n in registry.names() if registry.get(n).evidence is not None}
    left: set[str] = set()
    for iid, spec in all_scorers().items():
        for p in spec.probes:
            if p in typed and iid not in left:
                assert p in spec.accepts, f"{iid} reads {p} without declaring the versions it accepts"
                assert evidence.current_version(p) in spec.accepts[p]


def test_an_unknown_field_in_evidence_is_named():
    data = steady_pass().to_data()
    data["chromium"]["hand_edit"] = 1
    with pytest.raises(evidence.EvidenceError) as e:
        evidence.parse("frame_pacing", data)
    assert str(e.value).startswith("probes.frame_pacing.data.chromium.hand_edit: unknown field")


def test_the_record_keeps_the_model_and_its_version():
    rec = ProbeRecord(name="frame_pacing")
    m = steady_pass()
    rec.data = m
    assert rec.evidence_version == "3" and isinstance(rec.data, dict) and rec.evidence() is m
    again = ProbeRecord.model_validate(json.loads(rec.model_dump_json()))
    assert again.evidence() == m and again.evidence_version == "3"


# ----------------------------------------------------------------- the report
def test_the_report_records_the_rubric_hash_and_evidence_versions(tmp_path):
    doc = json.loads((stored_run(tmp_path) / "report.json").read_text())
    assert doc["rubric_sha256"] == rubric_sha256(DEFAULT_RUBRIC)
    assert doc["probes"]["frame_pacing"]["evidence_version"] == "3"
    assert doc["items"]["smoothness.frame_pacing"]["status"] == "pass"


def test_rescore_rebuilds_measurements_so_no_stale_key_survives(tmp_path):
    run = stored_run(tmp_path)
    edit(run, lambda d: d["measurements"].update({"stale": {"x": 1}, "smoothness": {"tier": -1}}))
    res = rescore(run)
    assert res.exit_code == 0, res.output
    doc = json.loads((run / "report.json").read_text())
    assert "stale" not in doc["measurements"] and doc["measurements"]["smoothness"]["tier"] == 10


# ----------------------------------------------------------------- rescore refuses
def test_rescore_refuses_a_truncated_report(tmp_path):
    run = stored_run(tmp_path)
    text = (run / "report.json").read_text()
    (run / "report.json").write_text(text[: len(text) // 2])
    refused(run, "not complete JSON", "line")


def test_rescore_refuses_an_unknown_field_in_evidence(tmp_path):
    run = stored_run(tmp_path)
    edit(run, lambda d: d["probes"]["frame_pacing"]["data"].update({"smooth": True}))
    refused(run, "probes.frame_pacing.data.smooth", "unknown field")


def test_rescore_refuses_an_unknown_field_in_a_probe_record_or_item(tmp_path):
    run = stored_run(tmp_path)
    edit(run, lambda d: d["probes"]["frame_pacing"].update({"verdict": "pass"}))
    refused(run, "probes.frame_pacing.verdict", "unknown field")
    run2 = stored_run(tmp_path / "b")
    edit(run2, lambda d: d["items"]["smoothness.frame_pacing"].update({"bonus": 1}))
    refused(run2, "items.smoothness.frame_pacing.bonus", "unknown field")


def test_rescore_refuses_evidence_of_a_version_no_scorer_reads(tmp_path):
    run = stored_run(tmp_path)
    edit(run, lambda d: d["probes"]["frame_pacing"].update({"evidence_version": "2"}))
    refused(run, "probes.frame_pacing.evidence_version", "smoothness.frame_pacing")


def test_rescore_refuses_evidence_from_before_versions(tmp_path):
    run = stored_run(tmp_path)
    edit(run, lambda d: d["probes"]["frame_pacing"].pop("evidence_version"))
    refused(run, "probes.frame_pacing.evidence_version", "missing")


def test_rescore_refuses_evidence_missing_a_field(tmp_path):
    run = stored_run(tmp_path)
    edit(run, lambda d: d["probes"]["frame_pacing"]["data"].pop("raf_ms"))
    refused(run, "probes.frame_pacing.data.raf_ms", "missing")


def test_rescore_refuses_a_stored_scenario_without_scorer_thresholds(tmp_path):
    run = stored_run(tmp_path)
    edit(run, lambda d: d["scenario"]["effective"]["scorers"].pop("frame_pacing"))
    refused(run, "scorers.frame_pacing")


def test_rescore_accepts_its_own_report_unchanged(tmp_path):
    run = stored_run(tmp_path)
    res = rescore(run, "--check")
    assert res.exit_code == 0, res.output


def test_rescore_exits_2_with_one_line(tmp_path):
    run = stored_run(tmp_path)
    edit(run, lambda d: d["probes"]["frame_pacing"]["data"].update({"smooth": True}))
    p = subprocess.run(
        [sys.executable, "-m", "skycity_bench", "rescore", str(run)], capture_output=True, text=True, timeout=120
    )
    assert p.returncode == 2, p.stderr
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "probes.frame_pacing.data.smooth" in lines[0] and "Traceback" not in p.stderr


def test_every_probe_has_its_own_typed_evidence_at_the_version_it_writes():
    # No probe module writes a plain dict any more: each has an Evidence model, and its
    # ProbeSpec.version is the model's evidence_version; so do the runner's two pseudo-probes
    # (the network log and page_events).
    for name in registry.names():
        model = evidence.model_for(name)
        assert model is not None and issubclass(model, evidence.Evidence), name
        assert registry.get(name).evidence is model and registry.get(name).version == model.evidence_version, name
    assert issubclass(evidence.model_for("network"), evidence.Evidence)
    assert issubclass(evidence.model_for("page_events"), evidence.Evidence)


def test_the_runners_page_events_are_typed_evidence_and_a_hand_edit_is_refused(tmp_path):
    from skycity_bench.evidence.page_events import PageEventsEvidence

    run = stored_run(tmp_path)

    def add(d):
        rec = ProbeRecord(
            name="page_events",
            data=PageEventsEvidence(  # as runner._page_events writes it
                pages=2,
                dialogs=[{"type": "alert", "message": "hi"}],
                dialog_count=1,
                popups=[],
                popup_count=0,
                left_document=[],
                renderer_crashes=0,
                page_errors=[],
                thrown={"count": 0, "first": None, "last_message": None},
            ),
        )
        d["probes"]["page_events"] = rec.model_dump(mode="json")

    edit(run, add)
    assert rescore(run, "--check").exit_code == 0
    # a report written before the thrown-error count (version 1) still rescores
    edit(run, lambda d: d["probes"]["page_events"]["data"].pop("thrown"))
    edit(run, lambda d: d["probes"]["page_events"].update({"evidence_version": "1", "version": "1"}))
    assert rescore(run, "--check").exit_code == 0
    edit(run, lambda d: d["probes"]["page_events"]["data"].update({"popup_cuont": 1}))
    refused(run, "probes.page_events.data.popup_cuont", "unknown field")


def test_scorers_read_probe_evidence_as_models_not_dicts():
    # ScoreInput.data (the record's dict) is left for the runner's network log only; every
    # probe's evidence is read with ScoreInput.evidence, as its model.
    import re
    from pathlib import Path

    pkg = Path(__file__).resolve().parents[2] / "skycity_bench" / "judging" / "scorers"
    assert len(list(pkg.glob("*.py"))) > 5
    reads = {(p.name, m) for p in pkg.glob("*.py") for m in re.findall(r"\binp\.data\(\s*\"(\w+)\"", p.read_text())}
    assert {m for _, m in reads} <= {"network"}, sorted(reads)
