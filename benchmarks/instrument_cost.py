"""What the bench's frame-pacing pass costs the page it measures, against a plain sampler.

Each page is played in real time in the bench's Chromium (its launch flags, its offline
library cache) under several configurations, interleaved (A B C ... A B C ...) so that the
machine's drift hits all alike:

- `plain`: a bare page-side rAF loop that writes each timestamp into a typed array, nothing
  else (no bench scripts, no trace, no CDP session, no progress display): the baseline;
- `scored`: the bench's own pass, `run --probe frame_pacing` (run_candidate), as scored;
- `scored-<instrument>`: the scored pass with one instrument removed (see INSTRUMENTS).

Per page and configuration it prints the rAF P95, the share of late intervals (over 1.5
display frames), the rubric tier computed from the rAF intervals the same way for every
configuration (P95 and the share over long_frame_ms, full window), the bench's tier (scored
configurations), Chromium's dropped-frame share (when traced), and the bench's own CPU
during the played seconds (this process and Playwright's driver, not the browser), each as
a median with its range; and each instrument's cost as the difference of late shares with a
bootstrap 95 % interval. Targets (printed beside the figures): the scored configuration gives
the plain tier in at least 9 of 10 runs, a late share within 1 point of the plain one, and
the bench's own CPU under 0.1 of a CPU. Real time: run it on a quiet machine.

    .venv/bin/python benchmarks/instrument_cost.py [--runs 8] [--duration 20] [--page steady ...]
        [--config plain --config scored ...]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skycity_bench.inputs.rubric import load_rubric  # noqa: E402
from skycity_bench.inputs.scenario import load_scenario  # noqa: E402

FIX = ROOT / "tests" / "fixtures"
SCRIPT_MS = 13  # "a page with 12-15 ms of script a frame"

# A Canvas2D page burning SCRIPT_MS of script in each frame (then drawing a moving box).
SCRIPT_PAGE = f"""<!doctype html><html><body style="margin:0;background:#123">
<canvas id=c width=1280 height=720></canvas><script>
const g = document.getElementById('c').getContext('2d');
function frame(t) {{
  const end = performance.now() + {SCRIPT_MS};
  let s = 0; while (performance.now() < end) s += Math.sqrt(s + 1);
  g.fillStyle = '#123'; g.fillRect(0, 0, 1280, 720);
  g.fillStyle = '#fc3'; g.fillRect((t / 5) % 1200, 300 + 100 * Math.sin(t / 400), 80, 50);
  requestAnimationFrame(frame);
}}
requestAnimationFrame(frame);
</script></body></html>"""

# Heavy on raster, light on script: full-viewport layers with blur filters and shadows that
# the compositor re-rasters every frame as they move.
RASTER_PAGE = """<!doctype html><html><head><style>
html,body{margin:0;height:100%;overflow:hidden;background:#0b1a2e}
.l{position:absolute;width:110vw;height:110vh;left:-5vw;top:-5vh;border-radius:30%;
   filter:blur(6px) saturate(1.4);box-shadow:0 0 80px 30px rgba(255,200,80,.5);opacity:.35}
</style></head><body><script>
const ls = [];
for (let i = 0; i < 12; i++) {
  const d = document.createElement('div'); d.className = 'l';
  d.style.background = `radial-gradient(circle at ${20 + i * 6}% 40%, hsl(${i * 30},80%,60%), transparent 60%)`;
  document.body.appendChild(d); ls.push(d);
}
function frame(t) {
  ls.forEach((d, i) => { d.style.transform = `translate(${Math.sin(t / 700 + i) * 40}px, ${Math.cos(t / 900 + i) * 30}px) rotate(${(t / 50 + i * 9) % 360}deg)`; });
  requestAnimationFrame(frame);
}
requestAnimationFrame(frame);
</script></body></html>"""

# name -> (html file or inline page, viewport)
PAGES: dict[str, tuple[Path | str, str]] = {
    "steady": (FIX / "frame_pacing" / "steady.html", "1280x720"),
    "reference-1080p": (ROOT / "scenarios" / "demos" / "reference.html", "1920x1080"),
    "reference-720p": (ROOT / "scenarios" / "demos" / "reference.html", "1280x720"),
    "shadowmap": (FIX / "threejs" / "shadowmap_pointlight.html", "1280x720"),
    "script-13ms": (SCRIPT_PAGE, "1280x720"),
    "raster": (RASTER_PAGE, "1920x1080"),
}
LATE_VSYNCS = 1.5  # an interval over 1.5 display frames is late (a frame was missed)
VSYNC_MS = 1000.0 / 60


def tiers() -> tuple[float, list[dict[str, Any]]]:
    """The rubric's long-frame line and its tiers, best first."""
    item = next(i for i in load_rubric(None).items if i.id == "smoothness.frame_pacing")
    extra = item.model_extra or {}
    return float(extra["long_frame_ms"]), list(extra["tiers"])


def figures(raf_ms: list[float]) -> dict[str, Any]:
    """rAF P95, late share and the rubric tier of one pass's timestamps (ms from t = 0)."""
    iv = np.diff(np.asarray(raf_ms, dtype=float))
    if iv.size < 2:
        return {"p95": None, "late": None, "tier": None}
    long_ms, tier_list = tiers()
    p95 = float(np.percentile(iv, 95))
    long_share = float((iv > long_ms).mean())
    tier = next((t["points"] for t in tier_list if p95 <= t["p95_ms_max"] and long_share <= t["long_ratio_max"]), 0)
    return {"p95": p95, "late": float((iv > LATE_VSYNCS * VSYNC_MS).mean()), "tier": tier}


def bench_side_cpu_s() -> float:
    """CPU seconds so far of this process (every thread) and of Playwright's driver (the
    node processes below it): the bench's own side of a pass, not the browser's."""
    hz = os.sysconf("SC_CLK_TCK")
    total = 0
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            raw = (d / "stat").read_text()
            cmd = (d / "cmdline").read_bytes().split(b"\0")[0]
        except OSError:
            continue
        f = raw[raw.rfind(")") + 2 :].split()
        if int(d.name) == os.getpid() or (int(f[1]) == os.getpid() and cmd.endswith(b"node")):
            total += int(f[11]) + int(f[12])
    return total / hz


class PlayedCpu:
    """The bench's own CPU share over the played seconds (start() when playback begins)."""

    def __init__(self) -> None:
        self.t = self.cpu = 0.0
        self.share: float | None = None

    def start(self) -> None:
        self.t, self.cpu = time.monotonic(), bench_side_cpu_s()

    def stop(self) -> None:
        wall = time.monotonic() - self.t
        self.share = (bench_side_cpu_s() - self.cpu) / wall if wall > 0 else None


PLAIN_SAMPLER = """(() => {
  const ts = new Float64Array(1 << 16); let n = 0;
  const raf = requestAnimationFrame.bind(window);
  function tick(t) { if (n < ts.length) ts[n++] = t; raf(tick); }
  raf(tick);
  Object.defineProperty(window, '__plainFrames', { value: () => Array.from(ts.subarray(0, n)) });
})();"""


async def plain_pass(html: bytes, viewport: str, duration: float) -> dict[str, Any]:
    """The baseline: the page in the bench's browser (launch flags, offline library cache)
    with a bare rAF loop and nothing else; intervals from the first frame after load."""
    from playwright.async_api import async_playwright

    from skycity_bench.browser.launch import launch
    from skycity_bench.browser.network import NetworkPolicy
    from skycity_bench.browser.server import DemoServer
    from skycity_bench.cache import resolvers

    w, h = (int(v) for v in viewport.split("x"))
    cpu = PlayedCpu()
    with DemoServer(html) as srv:
        async with async_playwright() as pw:
            browser = await launch(pw)
            try:
                ctx = await browser.new_context(viewport={"width": w, "height": h})
                await NetworkPolicy(doc_url=srv.url, mode="offline", resolvers=resolvers("offline")).attach(
                    ctx, websockets=False
                )
                await ctx.add_init_script(PLAIN_SAMPLER)
                page = await ctx.new_page()
                await page.goto(srv.url, wait_until="load")
                first = await page.evaluate("new Promise(r => requestAnimationFrame(r))")
                cpu.start()
                await asyncio.sleep(duration)
                cpu.stop()
                raf = await page.evaluate("window.__plainFrames()")
            finally:
                await browser.close()
    raf = [t - first for t in raf if t >= first and t - first <= duration * 1000 + 20]
    return {**figures(raf), "bench_tier": None, "dropped": None, "cpu": cpu.share}


# The instruments a scored pass runs during the played seconds, each removable in turn.
INSTRUMENTS = {
    "trace": "Chromium's frame reporting (a trace of the pass)",
    "draw_signal": "the sampler's scene-draw signal (draw-call wrappers, DOM observer, armed each frame)",
    "progress": "the terminal's live progress display",
}
_ARMING = ("  arm();\n", "    if (!armed) arm();\n", "    if (!observing) observe();\n")


def _without_draw_signal(source: str) -> str:
    """frame_sampler.js with its draw wrappers and DOM observer never armed."""
    for line in _ARMING:
        assert line in source, f"frame_sampler.js changed: {line.strip()!r} not found"
        source = source.replace(line, "")
    return source.replace("if (document.documentElement) observe(); else ", "if (false) ")


async def scored_pass(html: bytes, viewport: str, duration: float, without: str | None) -> dict[str, Any]:
    """The bench's frame-pacing pass as `run --probe frame_pacing` makes it (the live display
    included), with one instrument removed when `without` names one."""
    from skycity_bench.browser import session
    from skycity_bench.common.run_progress import Progress, RichProgress
    from skycity_bench.probes import frame_pacing
    from skycity_bench.running.runner import run_candidate

    over: dict[str, Any] = {"viewport": viewport, "duration_s": duration}
    if without == "trace":
        over["probes"] = {"frame_pacing": {"trace": False}}
    sc = load_scenario(None, over)
    cpu, play, js = PlayedCpu(), frame_pacing._play, frame_pacing.js

    async def timed_play(ctx, dp, d):
        cpu.start()
        try:
            await play(ctx, dp, d)
        finally:
            cpu.stop()

    def sampler(name: str) -> str:
        src = session.js(name)
        return _without_draw_signal(src) if without == "draw_signal" and name == "frame_sampler.js" else src

    progress = Progress() if without == "progress" else RichProgress()
    frame_pacing._play, frame_pacing.js = timed_play, sampler
    try:
        with tempfile.TemporaryDirectory() as out:
            demo = Path(out) / "demo.html"
            demo.write_bytes(html)
            rep = (
                await run_candidate(demo, sc, Path(out) / "run", probes=["frame_pacing"], progress=progress)
            ).to_json()
    finally:
        frame_pacing._play, frame_pacing.js = play, js
        if isinstance(progress, RichProgress):
            progress.stop()
    return _scored_figures(rep, cpu.share)


def _scored_figures(rep: dict[str, Any], cpu: float | None) -> dict[str, Any]:
    item = rep["items"]["smoothness.frame_pacing"]
    sm = rep["measurements"].get("smoothness") or {}
    raf = (rep["probes"]["frame_pacing"].get("data") or {}).get("raf_ms") or []
    return {
        **figures(raf),
        "bench_tier": sm.get("tier") if item["status"] in ("pass", "partial", "fail") else item["status"],
        "dropped": (sm.get("chromium") or {}).get("dropped_frame_pct"),
        "cpu": cpu,
    }


def page_html(src: Path | str) -> bytes:
    return src.read_bytes() if isinstance(src, Path) else src.encode()


def one_pass(config: str, html: bytes, viewport: str, duration: float) -> dict[str, Any]:
    if config == "plain":
        return asyncio.run(plain_pass(html, viewport, duration))
    without = config.removeprefix("scored").removeprefix("-") or None
    return asyncio.run(scored_pass(html, viewport, duration, without))


def _med(xs: list[float]) -> str:
    xs = [x for x in xs if x is not None]
    if not xs:
        return "–"
    return f"{statistics.median(xs):.3g} [{min(xs):.3g}–{max(xs):.3g}]"


def _counts(xs: list[Any]) -> str:
    """Each value with how often it was seen, most often first: "10×9 6×1"."""
    return " ".join(f"{v}×{n}" for v, n in Counter(str(x) for x in xs).most_common())


def _diff_ci(a: list[float], b: list[float], rounds: int = 2000) -> str:
    """Median of b − a (percentage points) with a bootstrap 95 % interval."""
    a_, b_ = np.asarray([x for x in a if x is not None]), np.asarray([x for x in b if x is not None])
    if a_.size == 0 or b_.size == 0:
        return "–"
    rng = np.random.default_rng(0)
    boots = [np.median(rng.choice(b_, b_.size)) - np.median(rng.choice(a_, a_.size)) for _ in range(rounds)]
    lo, hi = np.percentile(boots, [2.5, 97.5]) * 100
    return f"{(np.median(b_) - np.median(a_)) * 100:+.2f} pt [{lo:+.2f}, {hi:+.2f}]"


def report(page: str, runs: dict[str, list[dict[str, Any]]]) -> bool:
    """Print one page's table; True when the scored configuration meets every target."""
    print(f"\n{page}")
    print(
        f"  {'config':22s} {'rAF P95 ms':>20s} {'late %':>20s} {'tier (rAF)':>16s} {'bench tier':>16s} "
        f"{'dropped %':>18s} {'bench CPU':>18s}"
    )
    for cfg, rs in runs.items():
        tiers_seen = _counts([r["tier"] for r in rs])
        bench = _counts([r["bench_tier"] for r in rs]) if cfg != "plain" else "–"
        print(
            f"  {cfg:22s} {_med([r['p95'] for r in rs]):>20s} "
            f"{_med([None if r['late'] is None else r['late'] * 100 for r in rs]):>20s} {tiers_seen:>16s} "
            f"{bench:>16s} {_med([r['dropped'] for r in rs]):>18s} {_med([r['cpu'] for r in rs]):>18s}"
        )
    plain, scored = runs.get("plain"), runs.get("scored")
    if not plain or not scored:
        return True
    for cfg, rs in runs.items():
        if cfg.startswith("scored-"):
            print(
                f"  cost of {cfg[7:]:14s} late share, scored − without: "
                f"{_diff_ci([r['late'] for r in rs], [r['late'] for r in scored])}"
            )
    base = statistics.mode([r["tier"] for r in plain])
    same = sum(r["tier"] == base for r in scored)
    late_gap = statistics.median([r["late"] for r in scored]) - statistics.median([r["late"] for r in plain])
    cpu = statistics.median([r["cpu"] for r in scored if r["cpu"] is not None] or [float("nan")])
    ok = same >= 0.9 * len(scored) and late_gap <= 0.01 and cpu < 0.1
    print(
        f"  scored vs plain: plain's tier {base} in {same}/{len(scored)} (target ≥ 90 %); late share "
        f"{late_gap * 100:+.2f} pt (target ≤ +1); bench CPU {cpu:.3f} (target < 0.1)  "
        f"{'OK' if ok else 'MISSED'}"
    )
    return ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--duration", type=float, default=20.0, help="seconds played per pass")
    ap.add_argument("--page", action="append", default=[], choices=sorted(PAGES))
    configs = ["plain", "scored", *(f"scored-{k}" for k in INSTRUMENTS)]
    ap.add_argument("--config", action="append", default=[], choices=configs)
    a = ap.parse_args()
    pages, cfgs = a.page or list(PAGES), a.config or configs
    est = len(pages) * len(cfgs) * a.runs * (a.duration + 12) / 60
    print(
        f"{len(pages)} page(s) x {len(cfgs)} configuration(s) x {a.runs} run(s) of {a.duration:g} s: "
        f"about {est:.0f} min. Real time: nothing else should run on this machine.",
        flush=True,
    )
    ok = True
    for page in pages:
        src, vp = PAGES[page]
        html = page_html(src)
        runs: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in range(a.runs):
            for cfg in cfgs:  # interleaved: drift hits every configuration alike
                res = one_pass(cfg, html, vp, a.duration)
                runs[cfg].append(res)
                print(
                    f"  {page} run {r + 1}/{a.runs} {cfg}: P95 {res['p95']} late {res['late']} "
                    f"tier {res['tier']} bench {res['bench_tier']} cpu {res['cpu']}",
                    flush=True,
                )
        ok = report(page, runs) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
