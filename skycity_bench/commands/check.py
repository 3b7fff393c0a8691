"""`skycity-bench check DEMO.html`: fast spec compliance for CI (skycity_bench/check/compliance.py, a
profile on runner.execute; scenarios/check.yaml says what it runs and what decides each check).

Exit 0 when every check passes, 1 when any fails or could not be checked (one line each,
with the reason), 2 for a usage error. --junit FILE writes JUnit XML (one test case per
check), --json prints the result as JSON on stdout instead of the lines; --out keeps the
evidence and the check's report.json.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from skycity_bench.common.errors import UserError
from skycity_bench.inputs.demo_file import load_demo
from skycity_bench.inputs.scenario import load_scenario

# Compliance, not looks: 1280x720 (the playback probe's own size) keeps the fast-forward to 64 s
# affordable in software rendering while objects stay large enough to verify; --viewport
# 1920x1080 checks the full size.
DEFAULT_VIEWPORT = "1280x720"


def junit_xml(result: dict) -> str:
    checks = result["checks"]
    suite = ET.Element(
        "testsuite",
        name="skycity-bench check",
        tests=str(len(checks)),
        failures=str(sum(c.status == "fail" for c in checks)),
        skipped=str(sum(c.status == "skip" for c in checks)),
        time=f"{result['duration_s']:.2f}",
    )
    props = ET.SubElement(suite, "properties")
    for k in ("demo", "sha256", "viewport"):
        ET.SubElement(props, "property", name=k, value=str(result[k]))
    for c in checks:
        tc = ET.SubElement(
            suite, "testcase", classname="skycity_bench.check.compliance", name=c.name, time=f"{c.duration_s:.2f}"
        )
        if c.status == "fail":
            ET.SubElement(tc, "failure", message=c.reason[:500]).text = c.reason
        elif c.status == "skip":
            ET.SubElement(tc, "skipped", message=c.reason[:500])
    return ET.tostring(suite, encoding="unicode", xml_declaration=True)


def check(
    demo: Path = typer.Argument(..., help="the candidate HTML file"),
    junit: Optional[Path] = typer.Option(None, "--junit", help="write JUnit XML here (one test case per check)"),
    as_json: bool = typer.Option(False, "--json", help="print the result as JSON"),
    viewport: str = typer.Option(DEFAULT_VIEWPORT, help="WIDTHxHEIGHT"),
    scenario: Optional[Path] = typer.Option(None, help="scenario file (default scenarios/skycity.yaml)"),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="keep the evidence files here"),
    only: Optional[list[str]] = typer.Option(None, "--only", help="run only these checks (repeatable)"),
) -> None:
    """Fast spec compliance (fake clock, no 60 s playback): exit 0 all pass, 1 some fail."""
    from skycity_bench.check.compliance import names, run_checks

    known = names()
    for n in only or []:
        if n not in known:
            raise UserError(f"--only: unknown check {n!r}; known: {', '.join(known)}")
    sc = load_scenario(scenario, {"viewport": viewport})
    load_demo(demo)  # bad input: one line, exit 2, before any browser
    if junit is not None and junit.is_dir():
        raise UserError(f"--junit: {junit} is a directory")
    err = Console(stderr=True)

    def note(step: str) -> None:
        if not as_json:
            err.print(f"[dim]checking {step} …[/]", highlight=False)

    with tempfile.TemporaryDirectory(prefix="skycity-check-") as tmp:
        result = asyncio.run(run_checks(demo, sc, out or Path(tmp), progress=note, only=only))
    if out is None:
        result.pop("report")  # it was in the temporary folder, now gone
    if junit is not None:
        junit.parent.mkdir(parents=True, exist_ok=True)
        junit.write_text(junit_xml(result), encoding="utf-8")
    if as_json:
        print(
            json.dumps(
                {**result, "checks": [c.to_json() for c in result["checks"]]}, ensure_ascii=False, indent=2, default=str
            )
        )
    else:
        _print_lines(result)
    raise typer.Exit(0 if result["passed"] else 1)


def _print_lines(result: dict) -> None:
    """One line per check (its reason when it did not pass), then the count and the time."""
    con = Console(soft_wrap=True)
    for c in result["checks"]:
        style = {"pass": "green", "fail": "red", "skip": "yellow"}[c.status]
        line = f"[{style}]{c.status.upper():4}[/] {c.name}"
        if c.status != "pass":
            line += f": {c.reason}"
        con.print(line, highlight=False)
    bad = sum(c.status != "pass" for c in result["checks"])
    con.print(
        f"{len(result['checks']) - bad}/{len(result['checks'])} checks passed in "
        f"{result['duration_s']:.1f} s ({result['viewport']})",
        highlight=False,
    )


def register(app: typer.Typer) -> None:
    app.command("check")(check)
