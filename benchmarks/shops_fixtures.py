"""Accuracy and cost of the shops probe: every fixture of tests/fixtures/shops/ against its
truth file (target: all match), then the reference demo (target: 15/15 on the five shop
items), each with the seconds its run and the probe took, and how the manual-priority hold
went (the outcome code, the pointer's largest lag behind the shop, the drift of
the pixels from the hook's point, and how far the pointer travelled following the shop).

    .venv/bin/python benchmarks/shops_fixtures.py [--skip-reference] [NAME ...]
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

ITEMS = ("shops.hover", "shops.auto_display", "shops.manual_priority", "shops.card_placement", "shops.touch")


def _points(report: dict) -> str:
    return " ".join(
        f"{report['items'][i]['points'] if report['items'][i]['points'] is not None else '-'}" for i in ITEMS
    )


def _follow(report: dict) -> str:
    ev = report["items"]["shops.manual_priority"]["evidence"]
    path = (ev.get("follow") or {}).get("path") or []
    xs, ys = [p[1] for p in path if p[1] is not None], [p[2] for p in path if p[2] is not None]
    span = max(max(xs) - min(xs), max(ys) - min(ys)) if xs else None
    f = lambda v: "-" if v is None else f"{v:g}"
    return (
        f"{ev.get('outcome') or '-':24s} lag {f(ev.get('max_lag_px')):>5s} px  drift {f(ev.get('pixel_drift_px')):>6s} px"
        f"  path {f(round(span) if span is not None else None):>4s} px"
    )


def main(argv: list[str]) -> int:
    skip_ref = "--skip-reference" in argv
    names = [a for a in argv if not a.startswith("--")]
    fixtures = [fx for fx in all_fixtures("shops") if not names or fx.name.split("/")[-1] in names]
    out = Path(tempfile.mkdtemp(prefix="shops-bench-"))
    bad, rows = 0, []
    for fx in fixtures:
        t = time.monotonic()
        report = run_fixture(fx, out / fx.html.stem)
        took = time.monotonic() - t
        cmp = compare(report, fx.truth)
        print_table(fx.name, cmp)
        ok = all(r[-1] for r in cmp)
        bad += not ok
        rows.append((fx.name, ok, took, report["probes"]["shops"]["duration_s"], _points(report), _follow(report)))
    print(
        "\nfixture                          truth  run s  probe s  points (hover auto manual placement touch)"
        "  manual hold: outcome, largest lag (target <= 12), pixel drift, path span"
    )
    for name, ok, took, probe_s, pts, fol in rows:
        print(f"  {name:30s} {'match' if ok else 'DIFF ':6s} {took:6.1f} {probe_s:8.1f}  {pts:22s}  {fol}")
    print(f"  target: every fixture matches its truth -> {len(rows) - bad}/{len(rows)}")
    ref = ROOT / "scenarios" / "demos" / "reference.html"
    if not skip_ref and ref.is_file():
        from skycity_bench.inputs.scenario import load_scenario
        from skycity_bench.running.runner import run_candidate

        t = time.monotonic()
        report = asyncio.run(run_candidate(ref, load_scenario(), out / "reference", probes=["shops"])).to_json()
        took = time.monotonic() - t
        got = sum(report["items"][i]["points"] or 0 for i in ITEMS)
        print(
            f"\nreference.html: {got:g} of 15 shop points (target 15) in {took:.1f} s "
            f"(probe {report['probes']['shops']['duration_s']:.1f} s); manual hold: {_follow(report)}"
        )
        for i in ITEMS:
            it = report["items"][i]
            ev = it["evidence"]
            why = ev.get("reason") or ev.get("verdict") or ev.get("failed") or ""
            print(f"  {i:24s} {it['status']:8s} {it['points']}  {str(why)[:110]}")
        bad += got != 15
    print(f"\nrun folders: {out}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
