"""60 Hz calibration: rAF intervals on a blank page for about two seconds, before each timed
run. The measured refresh interval goes into `environment`; a value more than the
scenario's tolerance away from 16.67 ms is reported (timing figures are then not
comparable with a standard run).

The machine's own noise around a timed pass (as pyperf does): `calibrate()` can
run shortly before and after the pass, and `cpu_sample()` / `cpu_noise()` read /proc/stat
across it: how busy the CPUs were with work that is not this bench's (other processes on
the machine, not the demo's own renderer) and how much time the hypervisor stole. These
are raw figures; whether they are too noisy to trust is the frame-pacing scorer's call
(thresholds in scenarios/skycity.yaml).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import numpy as np

from skycity_bench.common.process_tree import stat_fields
from skycity_bench.inputs.scenario import Scenario

_BLANK = "<!doctype html><html><body style='margin:0;background:#000'></body></html>"

_MEASURE = """(ms) => new Promise((done) => {
  const t = [];
  const start = performance.now();
  function f(ts) { t.push(ts); if (ts - start < ms) requestAnimationFrame(f); else done(t); }
  requestAnimationFrame(f);
})"""


async def calibrate(
    handle, scenario: Scenario, duration_s: float | None = None, long_frame_ms: float | None = None
) -> dict:
    """The blank page's rAF intervals for `duration_s` (default the scenario's): median,
    P95, max; with `long_frame_ms`, also the share of intervals over it (`run --overlap`
    compares a pinned pacing browser's blank page alone and beside the fake-clock probes)."""
    cal = scenario.calibration
    duration_s = cal.duration_s if duration_s is None else duration_s
    ctx = await handle.browser.new_context(viewport={"width": 320, "height": 240})
    try:
        page = await ctx.new_page()
        await page.set_content(_BLANK)
        stamps = await asyncio.wait_for(page.evaluate(_MEASURE, duration_s * 1000), duration_s + 10)
    finally:
        await ctx.close()
    iv = np.diff(np.asarray(stamps, float))
    median = float(np.median(iv)) if len(iv) else float("nan")
    off = abs(median - cal.expected_interval_ms)
    extra = (
        {}
        if long_frame_ms is None
        else {
            "long_frame_ms": long_frame_ms,
            "long_frame_share": round(float(np.mean(iv > long_frame_ms)), 5) if len(iv) else None,
        }
    )
    return {
        "refresh_interval_ms": round(median, 3),
        "refresh_hz": round(1000.0 / median, 2) if median > 0 else None,
        "frames": int(len(iv)),
        "p95_ms": round(float(np.percentile(iv, 95)), 3) if len(iv) else None,
        "max_ms": round(float(iv.max()), 3) if len(iv) else None,
        "expected_interval_ms": cal.expected_interval_ms,
        "within_tolerance": bool(off <= cal.tolerance_ms),
        "tolerance_ms": cal.tolerance_ms,
        **extra,
    }


# ---------------------------------------------------------------- CPU load and steal
_PROC = Path("/proc")


def _own_jiffies() -> int:
    """CPU time (user + system, jiffies) of this process and all its descendants, live or
    exited: the bench, Playwright's driver and every Chromium process it started."""
    parent: dict[int, int] = {}
    cpu: dict[int, int] = {}
    for d in _PROC.iterdir():
        if not d.name.isdigit():
            continue
        pid = int(d.name)
        f = stat_fields(pid)
        if f is None:
            continue
        parent[pid] = int(f[1])
        # utime + stime, and cutime + cstime: the time of children it has reaped. A page's
        # renderer exits when the page closes, before the pass's second sample; its time
        # then lives on in its parent's (the zygote's) c-fields. A live child is counted by
        # itself, a reaped one by its parent: never twice.
        cpu[pid] = int(f[11]) + int(f[12]) + int(f[13]) + int(f[14])
    me = os.getpid()
    children: dict[int, list[int]] = {}
    for pid, pp in parent.items():
        children.setdefault(pp, []).append(pid)
    total, todo = 0, [me]
    while todo:
        pid = todo.pop()
        total += cpu.get(pid, 0)
        todo.extend(children.get(pid, ()))
    return total


def cpu_sample(own: bool = True) -> dict | None:
    """A snapshot of /proc/stat's aggregate CPU line and (with `own`: a walk of every
    process) the bench's own CPU time; None where /proc is not there (not Linux)."""
    try:
        line = (_PROC / "stat").read_text().splitlines()[0].split()
        v = [int(x) for x in line[1:]]
        own_jiffies = _own_jiffies() if own else 0
    except (OSError, ValueError, IndexError):
        return None
    user, nice, system, idle, iowait, irq, softirq, steal = (v + [0] * 8)[:8]
    return {"total": sum(v[:8]), "idle": idle + iowait, "steal": steal, "own": own_jiffies, "cpus": os.cpu_count() or 1}


def cpu_noise(a: dict | None, b: dict | None) -> dict | None:
    """Between two samples: shares of all CPUs' time (0..1) that were busy with other
    processes' work (`foreign_load`), busy with the bench's own (`own_load`), and stolen by
    the hypervisor (`steal`)."""
    if not a or not b:
        return None
    total = b["total"] - a["total"]
    if total <= 0:
        return None
    busy = total - (b["idle"] - a["idle"]) - (b["steal"] - a["steal"])
    own = max(0, b["own"] - a["own"])
    return {
        "foreign_load": round(min(1.0, max(0.0, (busy - own) / total)), 4),
        "own_load": round(min(1.0, own / total), 4),
        "steal": round(max(0.0, (b["steal"] - a["steal"]) / total), 4),
        "cpus": b["cpus"],
        "seconds": round(total / (os.sysconf("SC_CLK_TCK") * b["cpus"]), 2),
    }
