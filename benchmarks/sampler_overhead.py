"""How much the bench's frame sampler disturbs what it measures (issue 2).

A page measures its own per-frame work (the time its rAF callback spends drawing ~12000
canvas shapes, the kind of call the sampler wraps) with and without the bench's
instrumentation, in alternating runs (A B A B ...) so machine noise hits both alike.
Prints P95 and median frame work for each and their ratio. Target: P95 within 2 %.

    .venv/bin/python benchmarks/sampler_overhead.py [--rounds 4] [--seconds 5]
"""

from __future__ import annotations

import argparse
import asyncio

import numpy as np

from skycity_bench.browser.launch import launch
from skycity_bench.browser.session import js

PAGE = """<!doctype html><html><body style="margin:0"><canvas id=c width=960 height=540></canvas><script>
const g = document.getElementById('c').getContext('2d');
window.work = [];
let k = 0;
function frame(t) {
  const a = performance.now();
  g.fillStyle = '#123'; g.fillRect(0, 0, 960, 540);
  for (let i = 0; i < 12000; i++) {
    const x = (i * 37 + k * (1 + i % 5)) % 960, y = (i * 53) % 540;
    g.fillStyle = i % 2 ? '#fc3' : '#3cf';
    if (i % 3) g.fillRect(x, y, 8, 5); else { g.beginPath(); g.arc(x, y, 3, 0, 6.283); g.fill(); }
  }
  k++;
  window.work.push(performance.now() - a);
  requestAnimationFrame(frame);
}
requestAnimationFrame(frame);
</script></body></html>"""


async def one_run(browser, instrumented: bool, seconds: float) -> np.ndarray:
    ctx = await browser.new_context(viewport={"width": 960, "height": 540})
    if instrumented:
        await ctx.add_init_script(js("timebase.js"))
        await ctx.add_init_script(js("frame_sampler.js"))
    page = await ctx.new_page()
    await page.route("**/*", lambda r: r.fulfill(body=PAGE, content_type="text/html"))
    await page.goto("http://127.0.0.1:9/bench.html")
    await asyncio.sleep(seconds)
    work = np.asarray(await page.evaluate("window.work"), float)[30:]   # drop warm-up frames
    await ctx.close()
    return work


async def main(rounds: int, seconds: float) -> None:
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await launch(pw)
        base, inst = [], []
        for r in range(rounds):
            for instrumented in ((False, True) if r % 2 == 0 else (True, False)):
                (inst if instrumented else base).append(await one_run(browser, instrumented, seconds))
        await browser.close()
    b, i = np.concatenate(base), np.concatenate(inst)
    p95b, p95i = np.percentile(b, 95), np.percentile(i, 95)
    ratio = p95i / p95b
    print(f"{'figure':40s} {'measured':>12s}   target")
    print(f"{'frames measured (without / with)':40s} {len(b):>6d} / {len(i):<6d}")
    print(f"{'median frame work without (ms)':40s} {np.median(b):12.3f}")
    print(f"{'median frame work with sampler (ms)':40s} {np.median(i):12.3f}")
    print(f"{'P95 frame work without (ms)':40s} {p95b:12.3f}")
    print(f"{'P95 frame work with sampler (ms)':40s} {p95i:12.3f}")
    print(f"{'P95 ratio with / without':40s} {ratio:12.4f}   ≤ 1.02  {'OK' if ratio <= 1.02 else 'MISSED'}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=5)
    a = ap.parse_args()
    asyncio.run(main(a.rounds, a.seconds))
