"""Turns stored evidence into the sheet's items. Used after a run and by `rescore` (no
browser). Every rubric item ends up in the report: scored, `untested` with the reason, or
`review` for reviewers."""

from __future__ import annotations

import logging
from pathlib import Path

from .report import ItemResult, Report, set_path
from .rubric import Rubric
from .scenario import Scenario
from .scorers import ItemScore, ScoreInput, all_scorers

log = logging.getLogger(__name__)


def score_report(report: Report, scenario: Scenario, rubric: Rubric, out_dir: Path | None) -> Report:
    scorers = all_scorers()
    measurements: dict = {k: v for k, v in report.measurements.items()}
    for item in rubric.items:
        spec = scorers.get(item.id)
        if spec is None:
            if item.how == "manual":
                res = ItemScore("review", None, {"reason": "manual item: scored by reviewers"})
            else:
                res = ItemScore("untested", None, {"reason": "no probe of this bench version measures this item yet"})
        else:
            missing = [p for p in spec.probes if p not in report.probes]
            failed = [p for p in spec.probes if p in report.probes and report.probes[p].status != "ok"]
            if missing:
                res = ItemScore("untested", None, {"reason": f"probe(s) not run: {', '.join(missing)}"})
            elif failed:
                res = ItemScore("untested", None, {"reason": "; ".join(
                    f"probe {p}: {report.probes[p].error}" for p in failed)})
            else:
                inp = ScoreInput(item=item, rubric=rubric, scenario=scenario, records=report.probes, out_dir=out_dir)
                try:
                    res = spec.fn(inp)
                except Exception as e:
                    log.debug("scorer %s failed", item.id, exc_info=True)
                    res = ItemScore("untested", None, {"reason": f"scorer error: {type(e).__name__}: {e}"})
                else:
                    if spec.render and out_dir is not None:
                        try:
                            res.evidence.setdefault("files", []).extend(spec.render(inp, res, Path(out_dir)))
                        except Exception as e:
                            res.evidence["render_error"] = f"{type(e).__name__}: {e}"
                for path, value in res.measurements.items():
                    set_path(measurements, path, value)
        if res.points is not None:
            res.points = round(min(max(res.points, 0.0), item.points), 2)
        report.items[item.id] = ItemResult(points=res.points, max=item.points, status=res.status, how=item.how,
                                           evidence=res.evidence, scorer=item.id if spec else None)
    report.measurements = measurements
    return report


def run_problems(report: Report) -> list[str]:
    """Why a run should exit 1: a probe that could not collect, or an item that the probes
    which did run should have scored but left `untested` (a demo that threw, hung, crashed).
    Items nobody measures yet, or whose probes were not selected, are not problems."""
    out = [f"probe {n}: {r.error}" for n, r in report.probes.items() if r.status == "error"]
    scorers = all_scorers()
    for iid, it in report.items.items():
        spec = scorers.get(iid)
        if it.status == "untested" and spec and all(
                p in report.probes and report.probes[p].status == "ok" for p in spec.probes):
            out.append(f"{iid}: {it.evidence.get('reason', 'untested')}")
    if report.exit_reason:
        out.append(report.exit_reason)
    return out
