"""The environment fingerprint every report carries, and the comparability check.

Timing figures may only be ranked between comparable environments (rubric 流畅度: 同一设备、
同一浏览器及 60 Hz 显示条件). Like pyperf's checked metadata, `comparable()` compares the
fields that change timing and says which differ.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

from skycity_bench import __version__

_WEBGL = """() => {
  try {
    const c = document.createElement('canvas');
    const g = c.getContext('webgl2') || c.getContext('webgl');
    if (!g) return {renderer: null, vendor: null};
    const e = g.getExtension('WEBGL_debug_renderer_info');
    return {renderer: e ? g.getParameter(e.UNMASKED_RENDERER_WEBGL) : g.getParameter(g.RENDERER),
            vendor: e ? g.getParameter(e.UNMASKED_VENDOR_WEBGL) : g.getParameter(g.VENDOR)};
  } catch (err) { return {renderer: null, vendor: null, error: String(err)}; }
}"""

SOFTWARE_MARKERS = ("swiftshader", "llvmpipe", "softpipe", "software", "microsoft basic render")

# Fields that must be equal for timing figures to be ranked against each other.
CHECKED = (
    "browser_version",
    "webgl_renderer",
    "viewport",
    "device_scale_factor",
    "cpu_model",
    "cpu_cores",
    "os",
    "scenario_sha256",
)
REFRESH_TOLERANCE_MS = 0.5


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


async def webgl_info(handle) -> dict:
    ctx = await handle.browser.new_context(viewport={"width": 64, "height": 64})
    try:
        page = await ctx.new_page()
        await page.set_content("<!doctype html><body></body>")
        return await page.evaluate(_WEBGL)
    finally:
        await ctx.close()


def build(browser_version: str, browser_path: str, webgl: dict, scenario, calibration: dict | None) -> dict:
    renderer = (webgl or {}).get("renderer")
    return {
        "browser": "chromium",
        "browser_version": browser_version,
        "browser_path": browser_path,
        "webgl_renderer": renderer,
        "webgl_vendor": (webgl or {}).get("vendor"),
        "software_rendering": bool(renderer) and any(m in str(renderer).lower() for m in SOFTWARE_MARKERS),
        "viewport": f"{scenario.viewport.width}x{scenario.viewport.height}",
        "device_scale_factor": scenario.viewport.device_scale_factor,
        "refresh_interval_ms": (calibration or {}).get("refresh_interval_ms"),
        "calibration": calibration,
        "os": f"{platform.system()} {platform.release()}",
        "os_detail": platform.platform(),
        "python": platform.python_version(),
        "cpu_model": cpu_model(),
        "cpu_cores": os.cpu_count(),
        "bench_version": __version__,
        "scenario": scenario.name,
        "scenario_sha256": scenario.sha256(),
    }


def comparable(a: dict, b: dict) -> tuple[bool, list[str]]:
    """Whether timing figures from environments a and b may be ranked; the reasons if not."""
    reasons = [f"{k}: {a.get(k)!r} != {b.get(k)!r}" for k in CHECKED if a.get(k) != b.get(k)]
    ra, rb = a.get("refresh_interval_ms"), b.get("refresh_interval_ms")
    # A run none of whose probes plays in real time measures no refresh interval and has no
    # timing figures to rank; two such runs agree on it. One timed and one not do not.
    if (ra is None) != (rb is None):
        reasons.append("refresh interval measured on one run only")
    elif ra is not None and rb is not None and abs(ra - rb) > REFRESH_TOLERANCE_MS:
        reasons.append(f"refresh_interval_ms: {ra} vs {rb} (more than {REFRESH_TOLERANCE_MS} ms apart)")
    for env in (a, b):
        cal = env.get("calibration") or {}
        if cal.get("within_tolerance") is False:
            reasons.append(f"a calibration was off 60 Hz ({cal.get('refresh_interval_ms')} ms)")
    return (not reasons), reasons
