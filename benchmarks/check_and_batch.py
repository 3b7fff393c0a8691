"""Speed and robustness figures of `check` and batch runs, each printed beside its target:

  - `skycity-bench check` on the reference demo (target: all pass, < 30 s) and on each
    fixture of tests/fixtures/check/ (target: fails exactly the checks its truth names);
  - a batch over tests/fixtures/hostile/ (target: every run ends within its budget, batch
    goes on; per-run seconds).

    .venv/bin/python benchmarks/check_and_batch.py [--no-hostile] [--no-fixtures] [--runs N]

`--runs N` times the reference check N times (default 1) and prints each run's wall time,
each step's own time (from the check's report.json) and the machine's load average before
and after (a loaded machine inflates every figure: read them with the load), then the
min and median against the target.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.truth import all_fixtures  # noqa: E402

CLI = [sys.executable, "-m", "skycity_bench"]


CHECK_TARGET_S = 30.0


def check(path: Path, *extra: str) -> tuple[dict, float]:
    t = time.monotonic()
    r = subprocess.run(CLI + ["check", str(path), "--json", *extra], cwd=ROOT, capture_output=True, text=True)
    el = time.monotonic() - t
    return json.loads(r.stdout), el


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def reference_checks(runs: int) -> int:
    """The reference demo's check, `runs` times: wall time (the whole command, as CI sees it)
    with each step's time and the load average around it; min and median against the target."""
    bad, walls = 0, []
    for k in range(runs):
        with tempfile.TemporaryDirectory(prefix="check-bench-") as tmp:
            before = _load()
            res, el = check(ROOT / "scenarios" / "demos" / "reference.html", "--out", tmp)
            after = _load()
            report = json.loads((Path(tmp) / "report.json").read_text())
        walls.append(el)
        fails = [c["name"] for c in res["checks"] if c["status"] != "pass"]
        ok = not fails and el < CHECK_TARGET_S
        bad += not ok
        steps = ", ".join(f"{n} {r['duration_s']:.1f}" for n, r in report["probes"].items() if r.get("duration_s"))
        print(
            f"{'ok ' if ok else 'BAD'} check reference.html run {k + 1}: {len(res['checks']) - len(fails)}/"
            f"{len(res['checks'])} pass in {el:.1f} s wall ({res['duration_s']:.1f} s checks; steps: {steps})   "
            f"target: all pass, < {CHECK_TARGET_S:.0f} s   load {before} -> {after}"
            + (f"   failing: {fails}" if fails else "")
        )
    if runs > 1:
        print(
            f"    check reference.html wall: min {min(walls):.1f} s, median {statistics.median(walls):.1f} s over "
            f"{runs} runs   target: < {CHECK_TARGET_S:.0f} s"
        )
    return bad


def main(argv: list[str]) -> int:
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 1
    bad = reference_checks(runs)
    if "--no-fixtures" not in argv:
        for fx in all_fixtures("check"):
            res, el = check(fx.html, "--viewport", fx.truth["scenario"]["viewport"])
            got = sorted(c["name"] for c in res["checks"] if c["status"] == "fail")
            want = sorted(fx.truth["check"]["fail"])
            ok = set(want) <= set(got)
            bad += not ok
            print(f"{'ok ' if ok else 'BAD'} check {fx.name:28s} fails {got}   target: {want}   {el:5.1f} s")
    if "--no-hostile" not in argv:
        out = Path(tempfile.mkdtemp(prefix="hostile-bench-")) / "out"
        t = time.monotonic()
        subprocess.run(
            CLI
            + [
                "run",
                "tests/fixtures/hostile",
                "--out",
                str(out),
                "--duration",
                "3",
                "--viewport",
                "640x360",
                "--probe",
                "frame_pacing",
                "--max-memory-mb",
                "1024",
                "--candidate-timeout",
                "60",
                "--quiet",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        total = time.monotonic() - t
        m = json.loads((out / "batch.json").read_text())
        for r in m["runs"]:
            label = Path(m["candidates"][r["candidate"]]["labels"][0]).stem
            ok = r["state"] == "done" and r["duration_s"] <= 60
            bad += not ok
            why = (r.get("outcome") or {}).get("exit_reason") or "; ".join(
                (r.get("outcome") or {}).get("probe_errors", {}).values()
            )
            print(
                f"{'ok ' if ok else 'BAD'} hostile {label:16s} {r['duration_s']:5.1f} s   target: ≤ 60 s, report written"
                f"   {why[:90]}"
            )
        print(f"    hostile batch total {total:.1f} s for {len(m['runs'])} candidates")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
