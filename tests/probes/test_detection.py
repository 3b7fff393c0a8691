"""An ordinary browser to the demo.

tests/fixtures/detection/detect.html runs the common "am I automated / measured?" checks and
writes what it saw into the page. It is opened here the way each probe opens its pages (real
time: frame_pacing, playback; fake clock: timeline/recording, framing, shops) and, as the
reference, in a plain Chromium with no automation at all (`chromium --headless --dump-dom`).
What the bench must hide is asserted hidden; what cannot be hidden must be named in the
stealth section of docs/browser.md (`<!-- section:stealth -->`), so the fixture reports
nothing the docs do not list.
"""

from __future__ import annotations

import asyncio
import fnmatch
import html
import json
import re
import subprocess
from pathlib import Path

import pytest

from skycity_bench.browser.launch import find_chromium
from skycity_bench.browser.server import DemoServer
from skycity_bench.browser.session import BrowserHandle, js
from skycity_bench.inputs.scenario import load_scenario
from skycity_bench.probes._city_name import CANVAS_TEXT_JS
from skycity_bench.probes._stepper import RAF_60HZ_JS
from skycity_bench.probes.shops.dom_cards import SCRIPT as SHOP_SCRIPT

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "detection" / "detect.html"
README = ROOT / "docs" / "browser.md"

# How each probe opens its pages (the init scripts of probes/*.py).
WAYS = {
    "frame_pacing": dict(init_scripts=[js("frame_sampler.js")]),
    "playback": dict(init_scripts=[js("media_probe.js")]),
    "timeline": dict(fake_clock=True, init_scripts=[RAF_60HZ_JS, CANVAS_TEXT_JS]),
    "framing": dict(fake_clock=True, init_scripts=[js("canvas_text.js")]),
    "shops": dict(fake_clock=True, init_scripts=[SHOP_SCRIPT]),
}
# Facts that must read as in a plain Chromium (the rest differ for reasons of their own:
# the viewport, the locale, the user agent string that says "HeadlessChrome" there).
SAME_FACTS = [
    "webdriver",
    "webdriver_in_navigator",
    "webdriver_own",
    "webdriver_getter_native",
    "brands",
    "window_chrome",
    "plugins",
    "mime_types",
    "notification_permission",
    "notification_query",
    "full_version_list",
    "tostring_error",
    "raf_error",
    "filltext_error",
    "iframe_window_own_extra",
]
# Machine facts, not the bench's: no GPU here, so WebGL renders in software (SwiftShader).
MACHINE = {"webgl_software_renderer"}


def _report_of(text: str) -> dict:
    m = re.search(r'<pre id="detection">(.*?)</pre>', text, re.S)
    assert m, "the detection fixture wrote no report"
    return json.loads(html.unescape(m.group(1)))


@pytest.fixture(scope="module")
def baseline() -> dict:
    """The fixture in a plain headless Chromium: no automation, no bench, no flags."""
    path, _ = find_chromium()
    # The page's last checks wait on the browser process (getHighEntropyValues, permissions.query)
    # while the virtual time budget runs on: beside a busy xdist worker the DOM was dumped before
    # they answered (once in a suite run). A plain browser's facts do not change between tries.
    for _ in range(3):
        out = subprocess.run(
            [path, "--headless", "--no-sandbox", "--virtual-time-budget=5000", "--dump-dom", FIXTURE.as_uri()],
            capture_output=True,
            text=True,
            timeout=120,
        )
        rep = _report_of(out.stdout)
        if rep["done"]:
            break
    assert rep["done"], "the plain Chromium did not finish the detection checks in 3 tries"
    return rep


async def _open(handle, scenario, url: str, way: dict) -> tuple[dict, dict]:
    dp = await handle.open_page(scenario, url, goto=False, **way)
    requests = []
    dp.page.on("request", lambda r: requests.append(r))
    try:
        await dp.goto()
        for _ in range(100):
            text = await dp.evaluate_isolated("document.getElementById('detection').textContent")
            rep = json.loads(text)
            if rep.get("done"):
                break
            if dp.fake_clock:
                await dp.run_for(16)
            await asyncio.sleep(0.05)
        doc = next(r for r in requests if r.url == url)
        return rep, await doc.all_headers()
    finally:
        await dp.close()


@pytest.fixture(scope="module")
def bench() -> dict:
    """way -> (report, document request headers), each page opened as its probe opens it."""
    from playwright.async_api import async_playwright

    async def run():
        scenario = load_scenario(overrides={"viewport": "960x540"})
        out = {}
        async with async_playwright() as pw:
            handle = await BrowserHandle(pw, offline=True).start()
            try:
                with DemoServer(FIXTURE.read_bytes()) as srv:
                    for name, way in WAYS.items():
                        out[name] = await _open(handle, scenario, srv.url, way)
            finally:
                await handle.kill()
        return out

    return asyncio.run(run())


def seen(rep: dict, headers: dict, base: dict) -> set[str]:
    """Every detection check that fired on a bench page: the page's own flags, and what
    differs from the plain Chromium."""
    flags = set(rep["flags"])  # absolute checks (a plain headless Chromium fails some itself)
    flags |= {f"window_own:{k}" for k in set(rep["window_own"]) - set(base["window_own"])}
    for path, shape in rep["natives"].items():
        b = base["natives"].get(path)
        if shape is not None and b is not None:
            if any(shape.get(k) != b.get(k) for k in ("name", "length", "keys", "proto", "desc")):
                flags.add(f"native_shape:{path}")
    flags |= {f"fact:{k}" for k in SAME_FACTS if rep["facts"].get(k) != base["facts"].get(k)}
    if "headless" in headers.get("user-agent", "").lower():
        flags.add("header:user-agent")
    if "headless" in headers.get("sec-ch-ua", "").lower() or not headers.get("sec-ch-ua"):
        flags.add("header:sec-ch-ua")
    return flags


def readme_listed() -> list[str]:
    """The check names listed in the README's stealth section: the backticked names (with *
    wildcards) that open a bullet, before its dash and reason."""
    text = README.read_text(encoding="utf-8")
    m = re.search(r"<!-- section:stealth -->(.*?)(?=<!-- /?section:|\Z)", text, re.S)
    assert m, "docs/browser.md has no <!-- section:stealth --> section"
    names = []
    for head in re.findall(r"^\s*[-*] ((?:`[^`]+`,?\s*)+)—", m.group(1), re.M):
        names += re.findall(r"`([^`]+)`", head)
    return names


@pytest.mark.parametrize("way", [w for w, kw in WAYS.items() if not kw.get("fake_clock")])
def test_should_hide_everything_but_the_machine_on_real_time_pages(bench, baseline, way):
    rep, headers = bench[way]
    assert rep["done"], "a demo reading navigator.webdriver and the user agent must run to its end"
    assert rep["facts"]["webdriver"] is False
    assert "Headless" not in rep["facts"]["user_agent"] and "Chrome/" in rep["facts"]["user_agent"]
    major = re.search(r"Chrome/(\d+)", rep["facts"]["user_agent"]).group(1)
    assert f"Chromium/{major}" in rep["facts"]["brands"]
    assert any(v.startswith(f"Chromium/{major}.") for v in rep["facts"]["full_version_list"])
    assert rep["facts"]["outer"][1] > rep["facts"]["outer"][3], "outerHeight must include browser UI"
    assert f'"Chromium";v="{major}"' in headers["sec-ch-ua"]
    assert seen(rep, headers, baseline) <= MACHINE


@pytest.mark.parametrize("way", [w for w, kw in WAYS.items() if kw.get("fake_clock")])
def test_should_leave_only_the_fake_clocks_listed_traces_on_fake_clock_pages(bench, baseline, way):
    rep, headers = bench[way]
    assert rep["done"]
    got = seen(rep, headers, baseline)
    # What the bench hides on these pages too: automation, the user agent, its own globals
    # and wrappers (draw calls, rAF, canvas text), the clock's names, lengths and sources.
    for hidden in (
        "webdriver",
        "ua_headless",
        "uad_headless",
        "uad_version_mismatch",
        "outer_no_browser_ui",
        "header:user-agent",
        "header:sec-ch-ua",
        "fact:raf_error",
        "fact:filltext_error",
    ):
        assert hidden not in got
    assert not [f for f in got if f.startswith(("native_tostring:", "iframe_tostring:", "window_own_known:__skycity"))]
    assert not [f for f in got if f.startswith("window_own:") and f != "window_own:__pwClock"]
    listed = readme_listed()
    unlisted = sorted(f for f in got if not any(fnmatch.fnmatchcase(f, p) for p in listed))
    assert not unlisted, f"detection checks that fire on {way} pages but are not listed in the README: {unlisted}"


def test_should_list_in_the_readme_only_what_the_bench_cannot_hide():
    listed = readme_listed()
    assert listed, "the stealth section lists nothing"
    for name in listed:
        assert not name.startswith(("webdriver", "ua_", "uad_", "header:", "native_tostring:", "iframe_tostring:")), (
            f"{name} is one the bench hides: it must not be excused in the README"
        )
