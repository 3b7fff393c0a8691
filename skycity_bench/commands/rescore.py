"""`skycity-bench rescore RUN_DIR`: recompute every item from the evidence stored in
report.json, without a browser (the Lighthouse `-A` idea), under the rubric the report
names and the scorer thresholds of the scenario stored with it. Prints what changed;
--check only compares (exit 1 when anything would change).

Before anything is scored or written, the report is checked (score_items.check_stored): a
truncated report.json, an unknown field (a hand edit) or evidence whose version no scorer
accepts is refused in one line naming the file and the field, exit 2, nothing written."""

from __future__ import annotations

from pathlib import Path

import typer
from pydantic import ValidationError
from rich.console import Console

from skycity_bench.common.errors import UserError


def rescore(
    run_dir: Path = typer.Argument(..., help="a run folder holding report.json"),
    check: bool = typer.Option(False, "--check", help="compare only; exit 1 if an item would change"),
    html: bool = typer.Option(True, "--html/--no-html", help="rewrite report.html"),
) -> None:
    """Recompute the items of a run from its stored evidence (no browser)."""
    from skycity_bench.commands._render import print_report
    from skycity_bench.inputs.rubric import find_rubric, load_rubric
    from skycity_bench.inputs.scenario import Scenario
    from skycity_bench.judging.score_items import check_stored, load_stored, score_report
    from skycity_bench.reporting import html_report
    from skycity_bench.reporting.run_report import save

    path = run_dir / "report.json" if run_dir.is_dir() else run_dir
    if not path.is_file():
        raise UserError(f"{run_dir}: no report.json here")
    out_dir = path.parent
    report = load_stored(path)
    rubric_path = find_rubric(report.rubric_id)
    if rubric_path is None:
        raise UserError(f"{path}: rubric {report.rubric_id} not found under rubrics/")
    rubric = load_rubric(rubric_path)
    if report.environment.get("profile_items") is not None:  # a profile scoring some items only (check)
        from skycity_bench.running.runner import scoped_rubric

        rubric = scoped_rubric(rubric, report.environment["profile_items"])
    try:
        scenario = Scenario.model_validate(report.scenario.get("effective") or {})
    except ValidationError as e:
        raise UserError(f"{path}: the stored scenario no longer validates: {str(e).splitlines()[0]}") from None
    check_stored(report, scenario, path)
    before = {k: (v.status, v.points) for k, v in report.items.items()}
    score_report(report, scenario, rubric, None if check else out_dir)
    after = {k: (v.status, v.points) for k, v in report.items.items()}
    changed = [k for k in after if before.get(k) != after[k]]
    c = Console()
    for k in changed:
        c.print(f"changed {k}: {before.get(k)} → {after[k]}", highlight=False)
    if check:
        c.print(f"{len(changed)} item(s) would change")
        raise typer.Exit(1 if changed else 0)
    save(report, out_dir)
    if html:
        html_report.write(out_dir, report)
    print_report(report, c, out_dir)
    c.print(f"rescored under {rubric.id}: {len(changed)} item(s) changed")


def register(app: typer.Typer) -> None:
    app.command("rescore")(rescore)
