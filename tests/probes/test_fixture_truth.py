"""Every fixture's truth file agrees with its page (tests/fixtures/**/NAME.truth.json).

A truth file's "page" section is what makes its truth true by construction: the fixture
computes window.__fixtureTruth from the very constants and arrays it animates. This test
loads each fixture in the bench's own Chromium (BrowserHandle + DemoServer, the fake clock,
the truth file's viewport) and checks that every key of "page" equals the page's value
(tests/truth.py check_value: plain values exactly, {"value", "rel_tol"...} with tolerance).

Whatever fixtures exist when the suite runs are checked; one browser serves them all.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import yaml

from skycity_bench.browser.server import DemoServer
from skycity_bench.browser.session import BrowserHandle
from skycity_bench.common.errors import BenchError
from skycity_bench.inputs.scenario import DEFAULT_SCENARIO, Scenario, parse_viewport
from skycity_bench.running.runner import extra_resolvers
from tests.truth import FIXTURES, check_value

pytestmark = pytest.mark.browser

TRUTH_FILES = sorted(FIXTURES.rglob("*.truth.json"))
NAMES = [str(p.relative_to(FIXTURES)).removesuffix(".truth.json") for p in TRUTH_FILES]
# The truth is read right after load (first frame); a page that has not set it yet runs on
# in steps for up to ~1 s. Reading early matters: hostile fixtures misbehave after a while.
STEP_MS, MAX_STEPS = 100, 10


def _scenario(viewport: str | None) -> Scenario:
    # Built straight from the scenario file: this test needs the browser layer only, not the
    # probe registry (so a probe being written elsewhere cannot break it).
    raw = yaml.safe_load(DEFAULT_SCENARIO.read_text(encoding="utf-8"))
    if viewport:
        raw["viewport"].update(parse_viewport(viewport))
    return Scenario.model_validate(raw)


def _load(path: Path) -> tuple[dict | None, str | None]:
    try:
        return json.loads(path.read_text(encoding="utf-8")), None
    except (OSError, ValueError) as e:
        return None, f"{path.name} is not valid JSON: {e}"


async def _read_truth(handle: BrowserHandle, html: Path, viewport: str | None):
    with DemoServer(html.read_bytes()) as server:
        dp = await handle.open_page(_scenario(viewport), server.url, fake_clock=True, goto=False)
        try:
            # Only the load event is awaited (not the bench's t = 0): the truth is set by the
            # fixture's script, and some fixtures never draw a frame on purpose.
            await dp.call(dp.page.goto(server.url, wait_until="load", timeout=30_000), 35, "loading the fixture")
            for _ in range(MAX_STEPS + 1):
                got = await dp.evaluate(_READ, timeout=15, what="reading window.__fixtureTruth")
                if got is not None:
                    return got
                await dp.run_for(STEP_MS)
            return None
        finally:
            await dp.close()


_READ = "window.__fixtureTruth === undefined ? null : JSON.parse(JSON.stringify(window.__fixtureTruth))"
# Pages open side by side in the one browser: most of a fixture's time is waiting on the
# browser, not work, and the whole family must stay inside the area's test budget.
PARALLEL = 4


@pytest.fixture(scope="module")
def page_truths() -> dict[str, tuple[dict | None, dict | None, str | None]]:
    """name -> (truth file, window.__fixtureTruth, error)."""
    from playwright.async_api import async_playwright

    async def run():
        out = {}
        gate = asyncio.Semaphore(PARALLEL)
        async with async_playwright() as pw:
            # As the runner does: offline, with the library cache answering CDN requests.
            handle = await BrowserHandle(pw, offline=True, resolvers=extra_resolvers("offline")).start()

            async def one(name: str, path: Path) -> None:
                truth, err = _load(path)
                html = path.with_name(path.name.replace(".truth.json", ".html"))
                if err or not html.is_file() or not isinstance((truth or {}).get("page"), dict):
                    out[name] = (truth, None, err)
                    return
                vp = (truth.get("scenario") or {}).get("viewport")
                async with gate:
                    try:
                        out[name] = (truth, await _read_truth(handle, html, vp), None)
                    except BenchError as e:
                        out[name] = (truth, None, f"the fixture could not be read: {e}")

            try:
                await asyncio.gather(*(one(n, p) for n, p in zip(NAMES, TRUTH_FILES)))
            finally:
                await handle.kill()
        return out

    return asyncio.run(run())


@pytest.mark.skipif(not NAMES, reason="no fixtures yet")
@pytest.mark.parametrize("name", NAMES)
def test_should_find_the_truth_files_page_section_in_the_page(page_truths, name):
    truth, page, err = page_truths[name]
    path = FIXTURES / f"{name}.truth.json"
    assert err is None, err
    html = path.with_name(path.name.replace(".truth.json", ".html"))
    assert html.is_file(), f"{name}: the truth file has no fixture beside it ({html.name} missing)"
    assert isinstance(truth.get("page"), dict) and truth["page"], (
        f'{name}: the truth file has no "page" section: every fixture must pin, from inside the page, '
        "the values its truth rests on (window.__fixtureTruth), see tests/truth.py"
    )
    assert page is not None, f"{name}: the page never set window.__fixtureTruth within {STEP_MS * MAX_STEPS} ms"
    bad = []
    for key, expected in truth["page"].items():
        if key not in page:
            bad.append(f"  {key}: truth file {json.dumps(expected, ensure_ascii=False)}, page has no such key")
        elif not check_value(expected, page[key]):
            bad.append(
                f"  {key}: truth file {json.dumps(expected, ensure_ascii=False)}, page {json.dumps(page[key], ensure_ascii=False)}"
            )
    assert not bad, f"{name}: the truth file disagrees with the page:\n" + "\n".join(bad)


def test_should_fail_when_a_page_value_differs_from_the_truth_file():
    # The comparison itself can fail: a wrong count, a wrong nested value and a missing
    # tolerance band are all told apart from the right ones.
    assert check_value(50, 50) and not check_value(50, 49)
    assert check_value({"value": 50, "rel_tol": 0.1}, 54) and not check_value({"value": 50, "rel_tol": 0.1}, 56)
    assert check_value([1, {"a": 2}], [1, {"a": 2}]) and not check_value([1, {"a": 2}], [1, {"a": 3}])
    assert not check_value(0.5, None)
