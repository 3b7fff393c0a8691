"""Find and launch Chromium.

Which binary: a Playwright-managed Chromium when one is installed, else $SKYCITY_CHROMIUM,
else Debian's /usr/bin/chromium. Nothing is ever downloaded.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from skycity_bench.common.errors import UserError

DEBIAN_CHROMIUM = "/usr/bin/chromium"

# Why each flag:
#  - the four networking/update/sync/first-run flags keep Chromium from flooding the closed
#    network at start (machine notes);
#  - --proxy-server to a dead loopback port is a second wall behind the request router: a
#    request that somehow escapes interception still cannot leave the machine;
#  - the background-throttling flags keep timers and rAF at full rate in headless mode, the
#    rubric's "页面保持前台";
#  - --autoplay-policy lets a demo's audio do what the demo asks, so an unmuted demo is
#    caught playing sound instead of being silenced by the browser's policy;
#  - --mute-audio keeps the machine itself silent (it has no sound device anyway);
#  - --enable-unsafe-swiftshader lets WebGL fall back to software rendering without a GPU;
#  - --disable-blink-features=AutomationControlled makes navigator.webdriver false, as in an
#    ordinary Chrome (a demo must not run a code path no viewer runs). The getter
#    stays where it always is (Navigator.prototype), so nothing else about it changes. The
#    user agent is fixed per page (session.BenchWorld), not here: a --user-agent flag would
#    drop navigator.userAgentData's high-entropy values, which is a tell of its own.
BASE_ARGS = [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-breakpad",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--metrics-recording-only",
    "--no-default-browser-check",
    "--disable-background-timer-throttling",
    "--disable-renderer-backgrounding",
    "--disable-backgrounding-occluded-windows",
    "--autoplay-policy=no-user-gesture-required",
    "--mute-audio",
    "--enable-unsafe-swiftshader",
    "--ignore-gpu-blocklist",
    "--disable-blink-features=AutomationControlled",
]
OFFLINE_ARGS = ["--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=127.0.0.1"]


def playwright_managed_chromium() -> str | None:
    """Path of a Chromium that `playwright install` put in place, if any."""
    root = Path(os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or Path.home() / ".cache" / "ms-playwright")
    if not root.is_dir():
        return None
    for pattern in ("chromium-*/chrome-linux*/chrome", "chromium_headless_shell-*/chrome-*/chrome-headless-shell"):
        found = sorted(root.glob(pattern))
        if found:
            return str(found[-1])
    return None


def find_chromium() -> tuple[str, str]:
    """(path, where it came from). Raises UserError with advice when none is found."""
    managed = playwright_managed_chromium()
    if managed:
        return managed, "playwright-managed"
    env = os.environ.get("SKYCITY_CHROMIUM")
    if env:
        if not (Path(env).is_file() and os.access(env, os.X_OK)):
            raise UserError(f"SKYCITY_CHROMIUM={env} is not an executable file")
        return env, "SKYCITY_CHROMIUM"
    if Path(DEBIAN_CHROMIUM).is_file():
        return DEBIAN_CHROMIUM, "debian"
    which = shutil.which("chromium")
    if which:
        return which, "PATH"
    raise UserError(
        "no Chromium found: run `apt-get install -y chromium fonts-noto-cjk` "
        "or set SKYCITY_CHROMIUM to a Chromium binary"
    )


def launch_args(offline: bool = True) -> list[str]:
    return BASE_ARGS + (OFFLINE_ARGS if offline else [])


async def launch(pw, offline: bool = True):
    """Launch a fresh Chromium process (one per candidate run)."""
    path, _ = find_chromium()
    return await pw.chromium.launch(
        executable_path=path,
        headless=True,
        args=launch_args(offline),
        handle_sigint=False,
        handle_sigterm=False,
        handle_sighup=False,
    )
