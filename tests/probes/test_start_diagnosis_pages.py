"""The start diagnosis on real broken pages, through the runner (frame pacing and playback
only, a short pass): a page that throws in every animation frame is `throws`, naming its
error, and one whose module imports the bare "three" with no import map `never_drew` by
`module_resolution`; on both, the items the bench observed had nothing in them get their
verdict (fail, 0) instead of `untested`, and the run exits 0.

The truth of bare_three_import.html is read first with plain Playwright (its error, no canvas,
one flat colour), not the bench's probes; throws_every_frame.html's is in test_page_errors.py.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import cv2
import numpy as np
import pytest

from skycity_bench.browser.launch import find_chromium
from skycity_bench.browser.server import DemoServer
from tests.truth import FIXTURES

pytestmark = pytest.mark.browser
BROKEN = FIXTURES / "broken"


def _run(name: str, tmp_path: Path):
    from skycity_bench.inputs.scenario import load_scenario
    from skycity_bench.running.runner import exit_code, run_candidate

    sc = load_scenario(None, {"duration_s": 4, "probes": {"playback": {"width": 640, "height": 360, "cycles": 1}}})
    rep = asyncio.run(run_candidate(BROKEN / name, sc, tmp_path, probes=["frame_pacing", "playback"]))
    return rep.to_json(), exit_code(rep)


def test_bare_three_import_is_what_it_claims():
    async def main():
        from playwright.async_api import async_playwright

        with DemoServer((BROKEN / "bare_three_import.html").read_bytes()) as server:
            async with async_playwright() as pw:
                browser = await pw.chromium.launch(executable_path=str(find_chromium()[0]), args=["--no-sandbox"])
                try:
                    page = await browser.new_page(viewport={"width": 640, "height": 360})
                    errors: list[str] = []
                    page.on("pageerror", lambda e: errors.append(str(e)))
                    await page.goto(server.url, wait_until="load")
                    await asyncio.sleep(1.0)
                    canvases = await page.evaluate("document.querySelectorAll('canvas').length")
                    img = cv2.imdecode(np.frombuffer(await page.screenshot(), np.uint8), cv2.IMREAD_COLOR)
                    return errors, canvases, img
                finally:
                    await browser.close()

    errors, canvases, img = asyncio.run(main())
    assert len(errors) == 1 and 'Failed to resolve module specifier "three"' in errors[0], errors
    assert canvases == 0  # the module never ran: no renderer was made
    assert int(np.ptp(img.reshape(-1, 3), axis=0).max()) == 0  # one flat colour


def test_a_page_that_throws_every_frame_is_throws_and_its_empty_items_fail(tmp_path):
    rep, code = _run("throws_every_frame.html", tmp_path)
    start = rep["start"]
    assert start["class"] == "throws" and start["drew"] is False, start
    assert "smoothstep" in start["reason"] and start["thrown"]["count"] > 1
    fp = rep["items"]["smoothness.frame_pacing"]
    assert (fp["status"], fp["points"]) == ("fail", 0.0) and "never drew" in fp["evidence"]["reason"], fp
    assert rep["items"]["packaging.autoplay"]["status"] == "fail"
    assert rep["items"]["packaging.pause_resume_replay"]["status"] == "fail"
    assert code == 0


def test_a_bare_three_import_never_drew_by_module_resolution(tmp_path):
    rep, code = _run("bare_three_import.html", tmp_path)
    start = rep["start"]
    assert (start["class"], start.get("cause")) == ("never_drew", "module_resolution"), start
    assert '"three"' in start["reason"]
    fp = rep["items"]["smoothness.frame_pacing"]
    assert (fp["status"], fp["points"]) == ("fail", 0.0) and "never drew" in fp["evidence"]["reason"], fp
    # the items whose probes were not run stay untested: the bench did not look
    assert rep["items"]["density.count"]["status"] == "untested"
    assert code == 0
