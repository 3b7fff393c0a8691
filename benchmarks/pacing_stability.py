"""Stability of the frame-pacing tier: runs each frame-pacing fixture N times and
prints, per fixture, the tiers (or statuses) seen and how often each, beside the target:

- smooth fixtures (steady, smooth_work_1_9, smooth_work_1_12): tier 10 in N of N runs;
- designed-jank fixtures (jank_tier8/6/0): their designed tier in N of N;
- the sub-frame-stall fixture (jank_tier3: a 42 ms stall every 8th frame, under the 50 ms
  long-frame line, seen as 33.3 ms by the frame clock and caught through the entry clock in
  the frames Chromium dropped): tier 3 in N of N;
- review fixtures (redraw_every_3rd, scene_freeze, css_only): review in N of N.

Also per fixture: how the entry clock was allowed in (Chromium's trace or the frame-clock
fallback), Chromium's own dropped-frame share, and how many runs the machine was too noisy
for (those passes were re-run once by the probe). Run it on a quiet machine: the figures are
real time.

    .venv/bin/python benchmarks/pacing_stability.py [--runs 10] [--duration 20] [--fixture steady ...]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skycity_bench.common.errors import BenchError  # noqa: E402
from skycity_bench.inputs.scenario import load_scenario  # noqa: E402
from skycity_bench.running.runner import run_candidate  # noqa: E402
from tests.truth import all_fixtures  # noqa: E402

SKIP = {"hang", "throws"}  # they test bounded failure, not pacing (tests/e2e)
# Per run beyond the played seconds: browser start, 2 s calibration, load, two 1 s noise
# calibrations, the trace's transfer, scoring (measured ~10 s on the 2-core machine).
OVERHEAD_S = 10.0


def target_of(truth: dict) -> str:
    exp = truth.get("expect", {})
    if "measurements.smoothness.tier" in exp:
        return f"tier {exp['measurements.smoothness.tier']:g}"
    return str(exp.get("items.smoothness.frame_pacing.status"))


def outcome(report: dict) -> str:
    item = report["items"]["smoothness.frame_pacing"]
    if item["status"] in ("pass", "partial", "fail"):
        return f"tier {report['measurements']['smoothness']['tier']:g}"
    return item["status"]


async def one_run(fx, duration: float | None) -> dict:
    sc = fx.truth.get("scenario", {})
    scenario = load_scenario(None, {"viewport": sc.get("viewport"), "duration_s": duration or sc.get("duration_s")})
    with tempfile.TemporaryDirectory() as out:
        rep = (await run_candidate(fx.html, scenario, Path(out), probes=["frame_pacing"])).to_json()
    return rep


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument(
        "--duration", type=float, default=None, help="seconds played per run (default: each fixture's truth file, 6 s)"
    )
    ap.add_argument("--fixture", action="append", default=[], help="fixture name (repeatable), e.g. steady")
    a = ap.parse_args()
    fixtures = [f for f in all_fixtures("frame_pacing") if f.html.stem not in SKIP]
    if a.fixture:
        known = {f.html.stem for f in fixtures}
        bad = [n for n in a.fixture if n not in known]
        if bad:
            print(f"unknown fixture(s): {', '.join(bad)} (known: {', '.join(sorted(known))})", file=sys.stderr)
            return 2
        fixtures = [f for f in fixtures if f.html.stem in a.fixture]
    if a.runs < 1 or (a.duration is not None and a.duration <= 0):
        print("--runs must be ≥ 1 and --duration > 0", file=sys.stderr)
        return 2
    per = [(a.duration or f.truth.get("scenario", {}).get("duration_s", 6)) + OVERHEAD_S for f in fixtures]
    est = a.runs * sum(per)
    print(
        f"{len(fixtures)} fixture(s) x {a.runs} run(s): estimated {est / 60:.1f} min "
        f"(up to {2 * est / 60:.1f} min when the machine is noisy and passes re-run)",
        flush=True,
    )
    t_start = time.monotonic()
    rows = []
    for f, _ in zip(fixtures, per):
        seen: collections.Counter = collections.Counter()
        noisy, late_from, dropped, p95 = 0, collections.Counter(), [], []
        tgt = target_of(f.truth)
        for r in range(a.runs):
            try:
                rep = asyncio.run(one_run(f, a.duration))
            except BenchError as e:  # a bad scenario or browser: the same for every run
                print(f"pacing_stability: {e}", file=sys.stderr)
                return 2
            o = outcome(rep)
            seen[o] += 1
            item = rep["items"]["smoothness.frame_pacing"]
            sm = rep["measurements"].get("smoothness", {})
            full = sm.get("full") or {}
            why = (
                ""
                if o == tgt
                else (
                    f"  (P95 {full.get('p95_ms')} ms, rAF {(full.get('raf') or {}).get('p95_ms')} ms, long "
                    f"{full.get('long_frame_ratio')}; {str(item['evidence'].get('reason') or '')[:160]})"
                )
            )
            if (sm.get("noise") or {}).get("too_noisy"):
                noisy += 1
            clocks = sm.get("clocks") or {}
            late_from[clocks.get("late_frames_from", "?")] += 1
            if clocks.get("trace_unusable"):
                why += f"  [trace not used: {clocks['trace_unusable'][:120]}]"
            c = sm.get("chromium") or {}
            if c.get("dropped_frame_pct") is not None:
                dropped.append(c["dropped_frame_pct"])
            if (sm.get("full") or {}).get("p95_ms") is not None:
                p95.append(sm["full"]["p95_ms"])
            noise = (
                "  [noisy: " + "; ".join(sm["noise"]["too_noisy"]) + "]"
                if (sm.get("noise") or {}).get("too_noisy")
                else ""
            )
            print(f"  {f.html.stem:18s} run {r + 1}/{a.runs}: {o}{why}{noise}", flush=True)
        ok = seen.get(tgt, 0) == a.runs
        rows.append((f.html.stem, tgt, seen, ok, noisy, late_from, dropped, p95))
    print()
    print(
        f"{'fixture':18s} {'target':>14s}   {'seen':32s} {'ok':6s} {'noisy':>5s}  {'late from':18s} "
        f"{'chromium dropped %':>18s} {'P95 ms (median)':>15s}"
    )
    for name, tgt, seen, ok, noisy, late_from, dropped, p95 in rows:
        s = ", ".join(f"{k} {v}/{a.runs}" for k, v in seen.most_common())
        lf = ", ".join(f"{k} {v}" for k, v in late_from.most_common())
        dr = f"{statistics.median(dropped):.1f} [{min(dropped):.1f}–{max(dropped):.1f}]" if dropped else "–"
        pm = f"{statistics.median(p95):.1f}" if p95 else "–"
        print(
            f"{name:18s} {tgt + f' in {a.runs}/{a.runs}':>14s}   {s:32s} {'OK' if ok else 'MISSED':6s} "
            f"{noisy:>5d}  {lf:18s} {dr:>18s} {pm:>15s}"
        )
    print(
        f"\n{sum(r[3] for r in rows)}/{len(rows)} fixtures on target; took {(time.monotonic() - t_start) / 60:.1f} min "
        f"(estimated {est / 60:.1f}). Noisy runs were re-run once by the probe; a fixture that missed only in "
        f"noisy runs says more about the machine than the rule."
    )
    return 0 if all(r[3] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
