"""Slow software WebGL: the three.js-style examples of tests/fixtures/threejs/ (and the
cubes as a single file, three.js inlined) run through framing and playback at 1280x720 and
1920x1080 on this machine. Per example and viewport it prints the measured frame cost (ms
per animation frame, and how many 60 Hz frames that is), the slowest frame seen after that
measurement (frames get slower with what comes into view and what runs beside the page: the
budgets are re-estimated from it), each probe's status and wall time, each item's result,
and the run's wall time beside the per-run budget (scenario timeouts.run_s).

Target: every example gets framing, autoplay and pause/resume/replay results (not
`untested`) at both viewports, each run within the per-run budget.

    .venv/bin/python benchmarks/slow_webgl.py [--viewport=1280x720] [NAME ...]

Timings depend on the machine and on what else runs: measure on a quiet machine.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.truth import all_fixtures  # noqa: E402

VIEWPORTS = ("1280x720", "1920x1080")
ITEMS = ("packaging.framing", "packaging.autoplay", "packaging.pause_resume_replay")
PROBES = ("framing", "playback")


def single_file(src: Path, out: Path) -> Path:
    """The cubes with three.js from the offline cache inlined (one file that loads nothing)."""
    from skycity_bench.cache import LibraryCache

    store = LibraryCache()
    rel = store.get("three", "0.160.0")
    if rel is None:
        raise SystemExit("three@0.160.0 is not in the offline cache: run scripts/setup.sh")
    body = store.read_blob(rel.files["build/three.module.js"][0])
    imports = {"three": "data:text/javascript;base64," + base64.b64encode(body).decode()}
    html = re.sub(
        r'<script type="importmap">.*?</script>',
        lambda m: '<script type="importmap">' + json.dumps({"imports": imports}) + "</script>",
        src.read_text(encoding="utf-8"),
        count=1,
        flags=re.S,
    )
    p = out / "interactive_cubes_single_file.html"
    p.write_text(html, encoding="utf-8")
    return p


def run_one(html: Path, vp: str, out: Path) -> tuple[dict, float]:
    from skycity_bench.inputs.scenario import load_scenario, parse_viewport
    from skycity_bench.running.runner import run_candidate

    v = parse_viewport(vp)
    sc = load_scenario(
        None,
        {
            "viewport": vp,
            "duration_s": 10,
            "probes": {"framing": {"viewports": [vp]}, "playback": {"width": v["width"], "height": v["height"]}},
        },
    )
    t = time.monotonic()
    rep = asyncio.run(run_candidate(html, sc, out, probes=list(PROBES))).to_json()
    return rep, time.monotonic() - t


def main(argv: list[str]) -> int:
    vps = [a.split("=", 1)[1] for a in argv if a.startswith("--viewport=")] or list(VIEWPORTS)
    names = [a for a in argv if not a.startswith("--")]
    out = Path(tempfile.mkdtemp(prefix="slow-webgl-"))
    cases = {fx.html.stem: fx.html for fx in all_fixtures("threejs")}
    if "interactive_cubes" in cases:
        cases["interactive_cubes_single_file"] = single_file(cases["interactive_cubes"], out)
    cases = {k: v for k, v in sorted(cases.items()) if not names or k in names}
    bad = 0
    rows = []
    for name, html in cases.items():
        for vp in vps:
            rep, took = run_one(html, vp, out / f"{name}-{vp}")
            rc = rep.get("environment", {}).get("render_cost", {})
            cost = rc.get("viewports", {}).get(vp, {})
            budget = rc.get("run_budget_s")
            items = {i: rep["items"][i]["status"] for i in ITEMS}
            probes = {p: (rep["probes"][p]["status"], rep["probes"][p].get("duration_s")) for p in PROBES}
            ok = all(s != "untested" for s in items.values()) and budget is not None and took <= budget
            bad += not ok
            rows.append((name, vp, cost, probes, items, took, budget, ok))
            print(
                f"{name} {vp}: frame cost {cost.get('frame_cost_ms')} ms (seen up to "
                f"{cost.get('frame_cost_seen_ms')} ms), beyond real time {rc.get('beyond_real_time_s')} s, "
                + ", ".join(f"{p} {s} {d} s" for p, (s, d) in probes.items())
                + f"; run {took:.0f} s",
                flush=True,
            )
            for p, (st, _) in probes.items():
                if st != "ok":
                    print(f"    {p}: {str(rep['probes'][p].get('error'))[:300]}")
            for i in ITEMS:
                if items[i] == "untested":
                    print(f"    {i} untested: {rep['items'][i]['evidence'].get('reason', '')[:200]}")
    print(
        "\nexample                          viewport   frame cost (x 60 Hz)  seen ms  coarse  framing          playback"
        "         framing  autoplay  pause/replay  run s / budget s"
    )
    for name, vp, cost, probes, items, took, budget, ok in rows:
        fc = cost.get("frame_cost_ms")
        fcs = f"{fc:7.1f} ms ({cost.get('slowdown', 0):5.1f}x)" if fc is not None else "   not measured   "
        seen = cost.get("frame_cost_seen_ms")
        seens = f"{seen:7.0f}" if seen is not None else "      -"
        coarse = f"{cost.get('coarse_pages', 0)}/{cost.get('pages', 0)}"
        pr = "  ".join(f"{s:5s} {d:6.1f} s" for s, d in probes.values())
        print(
            f"  {name:31s} {vp:10s} {fcs:21s} {seens}  {coarse:6s}  {pr}  {items['packaging.framing']:8s} "
            f"{items['packaging.autoplay']:9s} {items['packaging.pause_resume_replay']:12s}  "
            f"{took:6.0f} / {budget:g}  {'ok' if ok else 'MISS'}"
        )
    print(
        f"  target: framing, autoplay and pause/resume/replay not untested, each run within the per-run "
        f"budget -> {len(rows) - bad}/{len(rows)}"
    )
    print(f"\nrun folders: {out}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
