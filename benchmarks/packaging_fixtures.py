"""Accuracy and cost of the packaging/framing/playback probes: every fixture of
tests/fixtures/packaging/ against its truth file, then the reference demo (target: 5/5 on
the four packaging items), each with the seconds its run took.

    .venv/bin/python benchmarks/packaging_fixtures.py [--skip-reference] [NAME ...]
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.truth import all_fixtures, compare, print_table, run_fixture  # noqa: E402

ITEMS = ("packaging.single_file", "packaging.autoplay", "packaging.pause_resume_replay", "packaging.framing")


def main(argv: list[str]) -> int:
    skip_ref = "--skip-reference" in argv
    names = [a for a in argv if not a.startswith("--")]
    fixtures = [fx for fx in all_fixtures("packaging") if not names or fx.name.split("/")[-1] in names]
    out = Path(tempfile.mkdtemp(prefix="packaging-bench-"))
    bad = 0
    rows = []
    for fx in fixtures:
        t = time.monotonic()
        report = run_fixture(fx, out / fx.html.stem)
        took = time.monotonic() - t
        cmp = compare(report, fx.truth)
        print_table(fx.name, cmp)
        ok = all(r[-1] for r in cmp)
        bad += not ok
        rows.append((fx.name, ok, took))
    print("\nfixture                               truth   seconds")
    for name, ok, took in rows:
        print(f"  {name:36s} {'match' if ok else 'DIFF ':6s} {took:7.1f}")
    print(f"  target: every fixture matches its truth -> {len(rows) - bad}/{len(rows)}")
    ref = ROOT / "scenarios" / "demos" / "reference.html"
    if not skip_ref and ref.is_file():
        from skycity_bench.inputs.scenario import load_scenario
        from skycity_bench.running.runner import run_candidate

        t = time.monotonic()
        report = asyncio.run(
            run_candidate(ref, load_scenario(), out / "reference", probes=["packaging", "framing", "playback"])
        ).to_json()
        took = time.monotonic() - t
        got = sum(report["items"][i]["points"] or 0 for i in ITEMS)
        print(f"\nreference.html: {got:g} of 5 packaging points (target 5) in {took:.1f} s")
        for i in ITEMS:
            it = report["items"][i]
            print(f"  {i:32s} {it['status']:8s} {it['points']}  {it['evidence'].get('reason', '')[:110]}")
        bad += got != 5
    print(f"\nrun folders: {out}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
