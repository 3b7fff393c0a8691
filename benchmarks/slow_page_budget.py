"""A page that renders at 2 frames a second ends its default full run within the budget.

Runs `skycity-bench run tests/fixtures/broken/slow_2fps.html` as an operator does (a fresh
process, every probe, the default budget: the scenario's timeouts.run_s, 900 s; or
--budget), and prints each figure beside its target:

  - wall time of the whole command <= the budget;
  - report.json and report.html written;
  - no Python traceback, "never awaited" or "never retrieved" in the output;
  - items observed (a verdict) vs untested, and each untested item's reason (it should name
    the page's frame cost);
  - per probe: its wall time and status.

    .venv/bin/python benchmarks/slow_page_budget.py [--budget SECONDS] [--out DIR]

Real time, up to the budget (15 minutes by default): run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = [str(ROOT / ".venv" / "bin" / "python"), "-m", "skycity_bench"]
SLOW = ROOT / "tests" / "fixtures" / "broken" / "slow_2fps.html"
BAD_OUTPUT = ("Traceback", "never awaited", "never retrieved")


def default_budget() -> float:
    sys.path.insert(0, str(ROOT))
    from skycity_bench.inputs.scenario import load_scenario

    return load_scenario().timeouts.run_s


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=float, default=None, help="run --budget (default: the scenario's)")
    ap.add_argument("--out", type=Path, default=None, help="run folder (default: a temporary one)")
    a = ap.parse_args()
    budget = a.budget or default_budget()
    out = a.out or Path(tempfile.mkdtemp(prefix="slow_page_budget-")) / "run"
    cmd = [*BENCH, "run", str(SLOW), "--out", str(out), "--quiet"]
    if a.budget:
        cmd += ["--budget", f"{a.budget:g}"]
    t = time.monotonic()
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=budget + 300)
    wall = time.monotonic() - t
    said = r.stdout + r.stderr
    bad = [b for b in BAD_OUTPUT if b in said]
    print(
        f"wall time         {wall:7.1f} s   target <= {budget:g} s (the budget)   {'ok' if wall <= budget else 'OVER'}"
    )
    print(f"exit code         {r.returncode:7d}     (0, or 1 while items are untested)")
    for name in ("report.json", "report.html"):
        print(f"{name:<17} {'written' if (out / name).is_file() else 'MISSING':>7}")
    print(f"traceback etc.    {', '.join(bad) if bad else 'none':>7}     target none")
    if not (out / "report.json").is_file():
        print(said[-3000:])
        return 1
    rep = json.loads((out / "report.json").read_text())
    items = rep["items"]
    untested = {k: v for k, v in items.items() if v["status"] == "untested"}
    print(f"items             {len(items) - len(untested):7d} observed, {len(untested)} untested")
    for k, v in sorted(untested.items()):
        print(f"  untested {k}: {((v.get('evidence') or {}).get('reason') or '')[:160]}")
    print("probes (wall s, status):")
    for k, v in rep["probes"].items():
        err = f"  {v['error'][:120]}" if v.get("error") else ""
        print(f"  {k:<17} {v.get('duration_s') or 0:7.1f}  {v.get('status')}{err}")
    print(f"report: {out / 'report.json'}")
    return 0 if wall <= budget and not bad else 1


if __name__ == "__main__":
    sys.exit(main())
