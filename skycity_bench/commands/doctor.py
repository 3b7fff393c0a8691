"""`skycity-bench doctor`: what the bench found on this machine, with advice."""

from __future__ import annotations

import asyncio
import shutil
import subprocess

import typer
from rich.console import Console

from skycity_bench.common.errors import UserError


async def _probe_browser() -> dict:
    from playwright.async_api import async_playwright

    from skycity_bench.browser.rate_calibration import calibrate
    from skycity_bench.browser.render_headroom import largest_viewport
    from skycity_bench.browser.session import BrowserHandle
    from skycity_bench.common.environment import webgl_info
    from skycity_bench.inputs.scenario import load_scenario

    async with async_playwright() as pw:
        h = await BrowserHandle(pw).start()
        try:
            sc = load_scenario()
            cal = await calibrate(h, sc)
            gl = await webgl_info(h)
            rooms, best = await largest_viewport(h, sc)
            return {
                "version": h.version,
                "calibration": cal,
                "webgl": gl,
                "headroom": rooms,
                "largest": best,
                "viewport": f"{sc.viewport.width}x{sc.viewport.height}",
            }
        finally:
            await h.kill()


def _cjk_fonts() -> list[str]:
    if not shutil.which("fc-list"):
        return []
    out = subprocess.run(["fc-list", ":lang=zh", "family"], capture_output=True, text=True).stdout
    return sorted({line.split(",")[0].strip() for line in out.splitlines() if line.strip()})


def doctor() -> None:
    """Check the browser, renderer, 60 Hz calibration and CJK fonts; exit 1 with advice if something is missing."""
    from skycity_bench.browser.launch import find_chromium

    c = Console()
    problems: list[str] = []
    try:
        path, source = find_chromium()
        c.print(f"browser: {path} ({source})")
    except UserError as e:
        c.print(f"[red]browser: {e}[/]")
        raise typer.Exit(1) from None
    try:
        info = asyncio.run(_probe_browser())
    except Exception as e:
        c.print(f"[red]browser failed to start: {str(e).splitlines()[0]}[/]")
        raise typer.Exit(1) from None
    c.print(f"version: {info['version']}")
    gl = info["webgl"] or {}
    c.print(f"WebGL renderer: {gl.get('renderer')}")
    if not gl.get("renderer"):
        problems.append("WebGL is unavailable: WebGL demos will not render (check --enable-unsafe-swiftshader)")
    cal = info["calibration"]
    c.print(
        f"calibration: {cal['refresh_interval_ms']} ms per frame ({cal['refresh_hz']} Hz) over {cal['frames']} frames"
    )
    if not cal["within_tolerance"]:
        problems.append(
            f"refresh interval {cal['refresh_interval_ms']} ms is not 60 Hz: timing figures will not be comparable"
        )
    _print_headroom(c, info, problems)
    fonts = _cjk_fonts()
    c.print(f"CJK fonts: {', '.join(fonts[:4]) or 'none'}")
    if not fonts:
        problems.append(
            "no Chinese font: run `apt-get install -y fonts-noto-cjk` (shop names and the rubric are Chinese)"
        )
    for p in problems:
        c.print(f"[red]problem:[/] {p}")
    if problems:
        raise typer.Exit(1)
    c.print("[green]all good[/]")


def _print_headroom(c: Console, info: dict, problems: list[str]) -> None:
    """The standard scene at each viewport, and the largest that keeps 60 Hz on this machine
    (browser/render_headroom.py): a pacing run at a larger viewport measures the machine too."""
    for r in info["headroom"]:
        mark = "[green]60 Hz[/]" if r["holds_60hz"] else "[yellow]below 60 Hz[/]"
        c.print(f"rendering headroom {r['viewport']}: P95 {r['p95_ms']} ms, {r['late_share']:.1%} late: {mark}")
    if info["largest"] is None:
        problems.append("this machine cannot render the standard scene at 60 Hz at any viewport tried")
    else:
        c.print(
            f"largest viewport that keeps 60 Hz here: [bold]{info['largest']}[/] (the scenario's is {info['viewport']})"
        )


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor)
