"""Turns stored evidence into the sheet's items. Used after a run and by `rescore` (no
browser). Every rubric item ends up in the report: scored, `untested` with the reason, or
`review` for reviewers.

Measurements (report.md `measurements.*`) are rebuilt from the scorers and the stored
evidence on every (re)score: nothing of an earlier scoring survives. The report also
records the rubric file's SHA-256 and each probe's evidence version.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, Optional

from pydantic import ValidationError

from skycity_bench import evidence
from skycity_bench.common.errors import Cause, UserError, combined
from skycity_bench.inputs.rubric import Rubric
from skycity_bench.inputs.scenario import Scenario
from skycity_bench.judging.scorers import ItemScore, ScoreInput, ScorerSpec, all_scorers
from skycity_bench.judging.start_diagnosis import StartDiagnosis, diagnose
from skycity_bench.reporting.run_report import ItemResult, ProbeRecord, Report, set_path

log = logging.getLogger(__name__)


def accepted_versions(spec: ScorerSpec, probe: str) -> tuple[str, ...]:
    """Evidence versions of `probe` this scorer reads; a probe it does not name in
    `accepts` (TRANSITIONAL: the runner's network log) is read in the
    version its model registry holds today."""
    if probe in spec.accepts:
        return spec.accepts[probe]
    cur = evidence.current_version(probe)
    return (cur,) if cur else ()


def evidence_problem(report: Report, spec: ScorerSpec) -> Optional[str]:
    """Why this scorer cannot read the report's evidence (None: it can): a version it does
    not accept, or evidence that does not match its model."""
    for p in spec.probes:
        rec = report.probes[p]
        version = rec.evidence_version or evidence.current_version(p)
        ok = accepted_versions(spec, p)
        if ok and version not in ok:
            return f"probes.{p}.evidence_version is {version!r}; scorer {spec.item_id} reads version(s) {', '.join(ok)}"
        try:
            rec.evidence(version)
        except evidence.EvidenceError as e:
            return str(e)
    return None


def load_stored(path: Path) -> Report:
    """A stored report.json for rescoring; one line naming the file and the field (exit 2)
    when it is not whole JSON or not a report."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except UnicodeDecodeError as e:
        raise UserError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except json.JSONDecodeError as e:
        raise UserError(
            f"{path}: not complete JSON (line {e.lineno}, column {e.colno}: {e.msg}): "
            "truncated or damaged, not rescored"
        ) from None
    if not isinstance(doc, dict):
        raise UserError(f"{path}: not a skycity-bench report (the top level is not an object)")
    try:
        report = Report.model_validate(doc)
    except ValidationError as e:
        field, problem = evidence.first_error(e)
        raise UserError(f"{path}: {field}: {problem}") from None
    for where, model in (
        [("candidate", report.candidate)]
        + [(f"probes.{n}", r) for n, r in report.probes.items()]
        + [(f"items.{n}", r) for n, r in report.items.items()]
    ):
        for k in model.model_extra or {}:
            raise UserError(f"{path}: {where}.{k}: unknown field (hand-edited, or written by another bench)")
    return report


def check_stored(report: Report, scenario: Scenario, path: Path) -> None:
    """Refuse (UserError: one line, file and field) stored evidence the scorers would score
    wrongly: a version missing or not accepted by a scorer that reads it, data that does not
    match its version's model, scorer thresholds missing from the stored scenario."""
    scorers = all_scorers()
    for name, rec in report.probes.items():
        if rec.status != "ok" or evidence.model_for(name) is None:
            continue
        readers = [s for s in scorers.values() if name in s.probes]
        if rec.evidence_version is None:
            raise UserError(
                f"{path}: probes.{name}.evidence_version: missing (evidence from before versioned "
                "evidence: run the demo again)"
            )
        for spec in readers:
            ok = accepted_versions(spec, name)
            if rec.evidence_version not in ok:
                raise UserError(
                    f"{path}: probes.{name}.evidence_version: {rec.evidence_version!r} is not read by "
                    f"scorer {spec.item_id} (reads {', '.join(ok) or 'none'}): run the demo again"
                )
        try:
            rec.evidence(rec.evidence_version)
        except evidence.EvidenceError as e:
            raise UserError(f"{path}: {e}") from None
    for section in sorted(s for s in _scorer_sections()):
        try:
            scenario.scorer_settings(section)
        except UserError as e:
            raise UserError(f"{path}: stored {e}") from None


def _scorer_sections() -> list[str]:
    from skycity_bench.judging.scorers import all_scorer_settings

    return list(all_scorer_settings())


def _record_measurements(report: Report, measurements: dict[str, Any]) -> None:
    """Measurements that come straight from a pseudo-probe's evidence, not a scorer."""
    net = report.probes.get("network")
    if net is not None and isinstance(net.data.get("requests"), list):
        seen: dict[str, None] = {}
        for r in net.data["requests"]:
            if isinstance(r, dict) and isinstance(r.get("url"), str):
                seen.setdefault(r["url"], None)
        set_path(measurements, "playback.external_requests", list(seen))


def _score_item(
    report: Report, item: Any, spec: Optional[ScorerSpec], inp_args: dict[str, Any], measurements: dict[str, Any]
) -> tuple[ItemScore, bool]:
    """One rubric item's score, and whether its scorer decided it (False: the bench could not
    run the scorer: no probe of it, a probe that failed, evidence it cannot read, a scorer
    error; those stay `untested` whatever the page did)."""
    if spec is None:
        if item.how == "manual":
            return ItemScore("review", None, {"reason": "manual item: scored by reviewers"}), False
        why = "no probe of this bench version measures this item yet"
        return ItemScore("untested", None, {"reason": why}, cause=Cause.NOT_RUN), False
    missing = [p for p in spec.probes if p not in report.probes]
    failed = [p for p in spec.probes if p in report.probes and report.probes[p].status != "ok"]
    if missing:
        why = f"probe(s) not run: {', '.join(missing)}"
        return ItemScore("untested", None, {"reason": why}, cause=Cause.NOT_RUN), False
    if failed:
        why = "; ".join(f"probe {p}: {report.probes[p].error}" for p in failed)
        cause = combined([probe_cause(report.probes[p]) for p in failed])
        return ItemScore("untested", None, {"reason": why}, cause=cause), False
    if (problem := evidence_problem(report, spec)) is not None:
        # in a live run a bench bug (the probe wrote what its model does not say);
        # `rescore` refuses such a report before it gets here
        return ItemScore("untested", None, {"reason": f"evidence not readable: {problem}"}, cause=Cause.BENCH), False
    inp = ScoreInput(item=item, records=report.probes, **inp_args)
    try:
        res = spec.fn(inp)
    except Exception as e:
        log.debug("scorer %s failed", item.id, exc_info=True)
        why = f"scorer error: {type(e).__name__}: {e}"
        return ItemScore("untested", None, {"reason": why}, cause=Cause.BENCH), False
    out_dir = inp_args["out_dir"]
    if spec.render and out_dir is not None:
        try:
            res.evidence.setdefault("files", []).extend(spec.render(inp, res, Path(out_dir)))
        except Exception as e:
            res.evidence["render_error"] = f"{type(e).__name__}: {e}"
    for path, value in res.measurements.items():
        set_path(measurements, path, value)
    return res, True


def score_report(report: Report, scenario: Scenario, rubric: Rubric, out_dir: Path | None) -> Report:
    """Score every rubric item from the report's evidence, then the start diagnosis, and give
    the items the diagnosis leaves nothing to observe their verdict (`apply_observation`)."""
    scorers = all_scorers()
    measurements: dict[str, Any] = {}
    _record_measurements(report, measurements)
    for name, rec in report.probes.items():
        if rec.status == "ok" and rec.evidence_version is None and evidence.model_for(name) is not None:
            # written in-process from a plain dict (transitional probes): today's version
            rec.evidence_version = evidence.current_version(name)
    inp_args = {"rubric": rubric, "scenario": scenario, "out_dir": out_dir}
    decided: set[str] = set()  # items whose scorer ran (what it left untested, it saw)
    page_side: set[str] = set()  # items whose probe stopped on what the page lacks (no hook)
    for item in rubric.items:
        spec = scorers.get(item.id)
        res, by_scorer = _score_item(report, item, spec, inp_args, measurements)
        if by_scorer:
            decided.add(item.id)
        elif spec is not None and _stopped_on_the_page(report, spec.probes):
            page_side.add(item.id)
        if res.points is not None:
            res.points = round(min(max(res.points, 0.0), item.points), 2)
        report.items[item.id] = ItemResult(
            points=res.points,
            max=item.points,
            status=res.status,
            how=item.how,
            evidence=res.evidence,
            scorer=item.id if spec else None,
            cause=res.cause,
        )
    start = diagnose(report.probes, scenario.scorer_settings("frame_pacing").blank_flat_share)
    report.start = start.to_json()
    apply_observation(report, start, decided, page_side)
    report.measurements = measurements
    report.rubric_id = rubric.id
    report.rubric_sha256 = rubric.file_sha256 or rubric.sha256
    return report


# Items the page's stillness leaves nothing to show (a page that drew a scene that never
# moved): what moves, is timed, paused or counted. A still page's shops and framing can
# still be observed, so they keep what their scorers found.
_MOTION_ITEMS = ("density.", "camera.", "smoothness.", "packaging.autoplay", "packaging.pause_resume_replay")


def probe_cause(rec: ProbeRecord) -> Cause:
    """Why a probe in error could not collect, as the runner recorded it where the error was
    raised; a record without one (a report from before causes were recorded) is not taken
    for the page's."""
    return Cause(rec.cause) if rec.cause else Cause.BENCH


def _stopped_on_the_page(report: Report, probes: tuple[str, ...]) -> bool:
    """Every failed probe of an item stopped on something the page lacks (a hook it never
    set up), not on the bench's own failure (the budget, a hang, a crash, a bench bug)."""
    failed = [report.probes[p] for p in probes if p in report.probes and report.probes[p].status != "ok"]
    return bool(failed) and all(probe_cause(r) == Cause.PAGE for r in failed)


def apply_observation(
    report: Report, start: StartDiagnosis, decided: set[str], page_side: Optional[set[str]] = None
) -> list[str]:
    """`untested` means the bench could not observe. Where the start diagnosis observed the
    page never drew, drew a blank, or never moved, an automated item its scorer left
    `untested` for want of anything to look at gets the verdict of that observation: fail,
    0 points (the rubric's missing = 0), the observation as its reason. What the page gave
    nothing to look at is the item's `cause` (Cause.PAGE, set by its scorer or its probes
    where that was found); items untested for the bench's own failure or choice (a probe not
    run, the budget, a hang, a scorer error) stay untested. Returns the items changed."""
    what = start.nothing_to_observe
    if what is None:
        return []
    changed = []
    for iid, it in report.items.items():
        if _frozen_pass_seen_still(iid, it, what):
            _settle(it, start, what, before=str(it.evidence.get("reason", "")))
            changed.append(iid)
            continue
        if it.status != "untested" or it.how == "manual":
            continue
        # a probe that stopped on what a page that never drew lacks (its hook) observed that too
        if iid not in decided and not (iid in (page_side or set()) and what in ("never drew", "blank")):
            continue
        if what == "never moved" and not iid.startswith(_MOTION_ITEMS):
            continue
        if it.cause != Cause.PAGE:  # the bench could not look: that stays untested
            continue
        _settle(it, start, what, before=str(it.evidence.get("reason", "")))
        changed.append(iid)
    return changed


def _frozen_pass_seen_still(iid: str, it: ItemResult, what: str) -> bool:
    """A pacing pass that goes to review because its scene froze while rAF ran (it could have
    been a compositor-only animation rAF cannot see) is settled when the real-time
    screenshots, which see the compositor too, show the page never moved or never drew."""
    return (
        iid == "smoothness.frame_pacing"
        and it.status == "review"
        and it.evidence.get("outcome") == "scene_frozen"
        and what in ("never drew", "blank", "never moved")
    )


def _settle(it: ItemResult, start: StartDiagnosis, what: str, before: str) -> None:
    it.evidence["untested_reason" if it.status == "untested" else "scorer_reason"] = before
    it.status, it.points, it.cause = "fail", 0.0, None
    it.evidence["observed"] = {"start": start.klass, "what": what}
    it.evidence["reason"] = f"the page {what}: nothing to observe, so missing = 0 (start: {start.reason})"


def _observed_instead(report: Report, probe: str, scorers: dict[str, ScorerSpec]) -> bool:
    """A failed probe whose every item got its verdict from what the page was seen to be
    (apply_observation: a page that never drew has no hook to find): nothing went unobserved."""
    readers = [i for i, spec in scorers.items() if probe in spec.probes and i in report.items]
    return bool(readers) and all(report.items[i].evidence.get("observed") for i in readers)


def run_problems(report: Report) -> list[str]:
    """Why a run should exit 1: a probe that could not collect, or an item that the probes
    which did run should have scored but left `untested` (a demo that threw, hung, crashed).
    Items nobody measures yet, or whose probes were not selected, are not problems."""
    scorers = all_scorers()
    out = [
        f"probe {n}: {r.error}"
        for n, r in report.probes.items()
        if r.status == "error" and not _observed_instead(report, n, scorers)
    ]
    for iid, it in report.items.items():
        spec = scorers.get(iid)
        if (
            it.status == "untested"
            and spec
            and all(p in report.probes and report.probes[p].status == "ok" for p in spec.probes)
        ):
            out.append(f"{iid}: {it.evidence.get('reason', 'untested')}")
    if report.exit_reason:
        out.append(report.exit_reason)
    return out
