"""`run --overlap pinned` against the default order, for a reference machine with spare
cores.

Runs `skycity-bench run` on one demo (default: the reference demo at 1920x1080) with
`--overlap off` and with `--overlap pinned`, alternating, each a fresh process, and prints
beside each other: the wall time of the whole run (the time the overlap saves), the
frame-pacing item's figures (full and dense window P95, long-frame share, tier) of both
modes, and the overlap's own record: the CPUs, the kernel's masks read back, the
perturbation (the pinned pacing cores' blank page alone and beside the probes, the changes
against the limits of scorers.overlap) and whether the real-time probes ran again alone.

Targets printed beside the figures: the perturbation within scorers.overlap's limits (2 %)
on a quiet machine, no re-run, and the pinned run shorter than the default one.
Whether the pinned pass's tier matches the default pass's is printed too (the pacing browser
holds overlap.pacing_cpus cores instead of the whole machine).

    .venv/bin/python benchmarks/overlap_run.py [--demo PATH] [--runs 1] [--force]
        [--viewport WxH] [--duration S] [--probe NAME ...] [--keep DIR]

`--force` uses `--overlap pinned-force` (a machine without spare cores: the mechanics only,
its figures mean nothing). Real time, several minutes a run: run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = [str(ROOT / ".venv" / "bin" / "python"), "-m", "skycity_bench"]
REFERENCE = ROOT / "scenarios" / "demos" / "reference.html"


def _load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def run_once(demo: Path, out: Path, mode: str, extra: list[str]) -> tuple[float, dict, str]:
    print(f"-- --overlap {mode}: run starts, load average {_load()}", flush=True)
    t = time.monotonic()
    p = subprocess.run(
        [*BENCH, "run", str(demo), "--out", str(out), "--quiet", "--overlap", mode, *extra],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    wall = time.monotonic() - t
    rp = out / "report.json"
    if not rp.exists():
        return wall, {}, (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]
    return wall, json.loads(rp.read_text()), ""


def pacing(report: dict) -> str:
    s = (report.get("measurements") or {}).get("smoothness") or {}
    parts = []
    for w in ("full", "dense"):
        x = s.get(w) or {}
        if x.get("p95_ms") is not None:
            parts.append(f"{w}: P95 {x['p95_ms']:.2f} ms, long {x['long_frame_ratio']:.2%}, tier {x.get('tier')}")
    return "; ".join(parts) + f" -> tier {s.get('tier')}" if parts else "no frame-pacing figures"


def overlap_lines(report: dict) -> list[str]:
    o = (report.get("environment") or {}).get("overlap") or {}
    if not o.get("used"):
        return [f"overlap not used: {o.get('why', 'no record')}"]
    p = o.get("perturbation") or {}
    a = o.get("affinity") or {}
    out = [
        f"pacing browser on CPU {o.get('pacing_cpus')}, the rest on {o.get('other_cpus')} "
        f"({o.get('side_browsers')} side browser(s)); threads off their CPUs at the end: "
        f"{(a.get('pacing_browser') or {}).get('threads_off_their_cpus')} / "
        f"{(a.get('others') or {}).get('threads_off_their_cpus')}"
    ]
    alone = p.get("alone") or {}
    out.append(f"blank page alone: P95 {alone.get('p95_ms')} ms, long {alone.get('long_frame_share')}")
    for k, v in (p.get("beside") or {}).items():
        out.append(
            f"blank page beside ({k}): P95 {(v or {}).get('p95_ms')} ms, long {(v or {}).get('long_frame_share')}"
        )
    lim_p, lim_s = p.get("max_p95_change"), p.get("max_long_frame_share_change")
    ch_p, ch_s = p.get("p95_change"), p.get("long_frame_share_change")
    ok_p = ch_p is not None and lim_p is not None and abs(ch_p) <= lim_p
    ok_s = ch_s is not None and lim_s is not None and abs(ch_s) <= lim_s
    out.append(f"P95 change {ch_p}   target |change| <= {lim_p}   {'OK' if ok_p else 'MISSED'}")
    out.append(f"long-frame share change {ch_s}   target |change| <= {lim_s}   {'OK' if ok_s else 'MISSED'}")
    out.append(
        f"re-run alone: {o.get('rerun_alone')}   target: no   {'OK' if o.get('rerun_alone') is False else 'MISSED'}"
    )
    tl = o.get("timeline") or {}
    out.append("timeline: " + ", ".join(f"{k} {v[0]:.0f}-{v[1]:.0f} s" for k, v in tl.items()))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--demo", type=Path, default=REFERENCE)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--force", action="store_true", help="--overlap pinned-force (mechanics only)")
    ap.add_argument("--viewport")
    ap.add_argument("--duration")
    ap.add_argument("--probe", action="append", default=[])
    ap.add_argument("--keep", type=Path, help="keep the runs' folders here")
    a = ap.parse_args()
    extra = (["--viewport", a.viewport] if a.viewport else []) + (["--duration", a.duration] if a.duration else [])
    for p in a.probe:
        extra += ["--probe", p]
    pinned = "pinned-force" if a.force else "pinned"
    print(f"{a.demo} · {len(os.sched_getaffinity(0))} CPUs in this process's mask · load average {_load()}")
    base = a.keep or Path(tempfile.mkdtemp(prefix="overlap-"))
    walls: dict[str, list[float]] = {"off": [], pinned: []}
    try:
        for i in range(a.runs):
            for mode in ("off", pinned):
                wall, report, err = run_once(a.demo, base / f"{mode}-{i}", mode, extra)
                if err:
                    print(f"   no report: {err}")
                    return 1
                walls[mode].append(wall)
                print(f"   wall {wall:.1f} s; frame pacing {pacing(report)}")
                if mode != "off":
                    for line in overlap_lines(report):
                        print(f"   {line}")
    finally:
        if a.keep is None:
            shutil.rmtree(base, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in walls.items()}
    span = {k: f"min {min(v):.1f} / median {med[k]:.1f} s" for k, v in walls.items()}
    print(f"\nwall --overlap off: {span['off']};  --overlap {pinned}: {span[pinned]}")
    print(
        f"saved {med['off'] - med[pinned]:+.1f} s (median)   target > 0   "
        f"{'OK' if med[pinned] < med['off'] else 'MISSED'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
