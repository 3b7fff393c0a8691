"""Fixtures with known truth (tests/fixtures/**/NAME.html + NAME.truth.json).

A truth file says what the bench must find on its fixture and how the fixture's truth is
checked from inside the page:

    {
      "description": "50 exact movers in 5 categories under a panning camera",
      "probes": ["density"],                    # what to run (empty/absent: all)
      "scenario": {"duration_s": 5, "viewport": "1280x720"},   # overrides
                                                # (also "probes": {NAME: {setting: value}})
      "expect": {                               # report.md paths (items.<id>.<field> too)
        "measurements.density.N": {"value": 50, "rel_tol": 0.1},
        "items.density.count.points": 10,
        "items.shops.hover.status": "partial"
      },
      "page": {"movers": 50}                    # must equal window.__fixtureTruth[key]
    }

`page` makes the truth true by construction: the fixture computes window.__fixtureTruth
from the very arrays and constants it animates, and tests/probes/test_fixture_truth.py
loads every fixture and checks that its truth file agrees with the page.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
FIXTURES = ROOT / "fixtures"


@dataclass
class Fixture:
    html: Path
    truth: dict

    @property
    def name(self) -> str:
        return str(self.html.relative_to(FIXTURES).with_suffix(""))


def all_fixtures(subdir: str | None = None) -> list[Fixture]:
    base = FIXTURES / subdir if subdir else FIXTURES
    out = []
    for t in sorted(base.rglob("*.truth.json")):
        html = t.with_name(t.name.replace(".truth.json", ".html"))
        out.append(Fixture(html=html, truth=json.loads(t.read_text(encoding="utf-8"))))
    return out


def fixture(name: str) -> Fixture:
    t = FIXTURES / f"{name}.truth.json"
    return Fixture(html=FIXTURES / f"{name}.html", truth=json.loads(t.read_text(encoding="utf-8")))


def check_value(expected: Any, got: Any) -> bool:
    if isinstance(expected, dict) and (
        "value" in expected or "min" in expected or "max" in expected or "in" in expected
    ):
        if got is None:
            return False
        if "in" in expected:
            return got in expected["in"]
        if "min" in expected and got < expected["min"]:
            return False
        if "max" in expected and got > expected["max"]:
            return False
        if "value" in expected:
            v = expected["value"]
            tol = expected.get("abs_tol", 0) + expected.get("rel_tol", 0) * abs(v)
            return abs(got - v) <= tol + 1e-9
        return True
    if isinstance(expected, float) or isinstance(got, float):
        return got is not None and abs(float(got) - float(expected)) < 1e-6
    return got == expected


def compare(report: dict, truth: dict) -> list[tuple[str, Any, Any, bool]]:
    """(path, expected, measured, ok) for every expected path of a truth file."""
    from skycity_bench.reporting.run_report import get_path

    rows = []
    for path, exp in truth.get("expect", {}).items():
        try:
            got = get_path(report, path)
        except (KeyError, IndexError, ValueError):
            got = "<missing>"
        rows.append((path, exp, got, got != "<missing>" and check_value(exp, got)))
    return rows


def print_table(name: str, rows) -> str:
    lines = [f"== {name}"]
    for path, exp, got, ok in rows:
        lines.append(
            f"  {'ok ' if ok else 'BAD'} {path:55s} truth={json.dumps(exp, ensure_ascii=False)}  measured={json.dumps(got, ensure_ascii=False)}"
        )
    text = "\n".join(lines)
    print(text)
    return text


def run_bench(html: Path, scenario, out_dir: Path, probes: list[str] | None = None):
    """Run the bench on a demo in-process and return its Report: runner.execute with the run
    profile, as run_candidate and the CLI do, except that the 60 Hz refresh calibration (2 s
    of rAF on a blank page before the probes, 2.3-3.5 s of wall time a run measured at load
    7-10, recorded in report.environment only) is made only when a real-time probe runs.
    Nothing a fake-clock probe collects or a scorer judges reads it (check's profile skips it
    alike), and no test of a fake-clock run asserts on it; a run with frame pacing, playback's
    autoplay look or the real-time capture (or every probe) is calibrated as the CLI's is."""
    from skycity_bench.probes import registry
    from skycity_bench.running.runner import Profile, execute

    known = registry.names()
    timed = any(registry.get(n).realtime for n in (probes or known) if n in known)
    profile = Profile(probes=tuple(probes) if probes else None, calibrate=timed)
    return asyncio.run(execute(html, scenario, profile, out_dir))


def run_fixture(fx: Fixture, out_dir: Path, probes: list[str] | None = None) -> dict:
    """Run the bench on a fixture (in-process, as the CLI would: run_bench) and return
    report.json."""
    from skycity_bench.inputs.scenario import load_scenario

    sc = fx.truth.get("scenario", {})
    scenario = load_scenario(
        None, {"viewport": sc.get("viewport"), "duration_s": sc.get("duration_s"), "probes": sc.get("probes")}
    )
    report = run_bench(fx.html, scenario, out_dir, probes=probes or fx.truth.get("probes") or None)
    doc = report.to_json()
    # the fixture's own run of a checked-in fixture: its evidence may be golden
    # (tests/golden_evidence.py); a variant a test builds in a temporary folder never is
    if probes is None and fx.html.resolve().is_relative_to(FIXTURES):
        from tests.golden_evidence import maybe_write

        maybe_write(doc, fx.name)
    return doc


def run_side_by_side(
    fixtures: dict[str, Fixture], root: Path, order: list[str] | None = None, threads: int = 2
) -> dict[str, tuple[dict, Path]]:
    """{name: (report.json, run folder)} of each fixture's run (run_fixture into root/NAME),
    `threads` at a time (two: a module's runs on its xdist worker), handed out in `order`
    (slowest first: a slow run handed out last runs alone at the end). The probe and scorer
    registries load lazily and not thread-safely, so they are loaded here first."""
    from concurrent.futures import ThreadPoolExecutor

    from skycity_bench.judging.scorers import all_scorers
    from skycity_bench.probes import registry

    registry.names()
    all_scorers()

    def one(name):
        out = root / name.replace("/", "_")
        return name, (run_fixture(fixtures[name], out), out)

    with ThreadPoolExecutor(max_workers=threads) as pool:
        return dict(pool.map(one, order if order is not None else list(fixtures)))


def assert_truth(fx: Fixture, report: dict) -> None:
    rows = compare(report, fx.truth)
    table = print_table(fx.name, rows)
    assert all(ok for *_, ok in rows), "measured values differ from the truth file:\n" + table
