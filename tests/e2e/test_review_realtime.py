"""The real-time video beside smoothness.frame_pacing (录屏复核), end to end: a
real bench run of a designed-jank fixture with the capture on, imported into the review
store and served; Chromium (Playwright) plays and seeks the video, the plot's cursor follows
it, and a click on a stall jumps there. The static report.html, opened from disk, does the
same with relative links."""

from __future__ import annotations

import pytest

from skycity_bench.browser.launch import BASE_ARGS
from skycity_bench.review import create_app
from skycity_bench.store.review_store import ReviewStore
from tests.review_reports import serving, signed_in_page
from tests.shared_runs import JANK_CAPTURE_S, jank_capture_run

pytestmark = pytest.mark.browser

ITEM = "#item-smoothness\\.frame_pacing"
LEAD_S = 0.25  # the widget jumps a quarter second before a stall (templates/_realtime.html)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """The real-time run with the capture on: the one test_realtime_capture checks frame by
    frame (tests/shared_runs.py: played once for both)."""
    from skycity_bench.reporting import html_report

    out, report = jank_capture_run(tmp_path_factory)
    assert report["measurements"]["smoothness"]["realtime_video"] == "realtime/realtime.webm", report["probes"][
        "realtime_capture"
    ]
    html_report.write(out)
    return out


@pytest.fixture(scope="module")
def served(run_dir, tmp_path_factory):
    store = ReviewStore(tmp_path_factory.mktemp("db") / "reviews.sqlite", seed=3)
    cid = store.import_run(run_dir).candidate_id
    with serving(create_app(store)) as base:
        yield base, cid, store


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=BASE_ARGS)
        yield b
        b.close()


def _check_widget(page) -> None:
    box = page.locator(f"{ITEM} .realtime")
    assert box.count() == 1
    video = box.locator("video")
    # Chromium's <video> plays the file: metadata, the run's duration, a decoded frame.
    page.wait_for_function("v => v.readyState >= 2", arg=video.element_handle(), timeout=20000)
    dur = video.evaluate("v => v.duration")
    assert abs(dur - JANK_CAPTURE_S) < 0.1, dur
    # A stall button per long frame of the pass; clicking one seeks a quarter second before it.
    stalls = box.locator("button.rt-jump")
    assert stalls.count() >= 3, f"jank_tier6 stalls every 25th frame: several in {JANK_CAPTURE_S} s"
    marks = box.locator("svg rect.rt-long")
    assert marks.count() >= stalls.count()
    target = float(stalls.nth(2).get_attribute("data-t"))
    stalls.nth(2).click()
    page.wait_for_function(
        "([v, t]) => Math.abs(v.currentTime - t) < 0.04 && !v.seeking",
        arg=[video.element_handle(), max(0.0, target - LEAD_S)],
        timeout=10000,
    )
    # The cursor follows the video's time (after the seek it sits at the stall's lead-in) ...
    page.wait_for_function(
        "([b, t]) => Math.abs(parseFloat(b.dataset.cursorT) - t) < 0.04",
        arg=[box.element_handle(), max(0.0, target - LEAD_S)],
        timeout=5000,
    )
    x_cursor = float(box.locator("line.rt-cursor").get_attribute("x1"))
    assert abs(x_cursor - max(0.0, target - LEAD_S) / JANK_CAPTURE_S * 1000) < 10
    # ... and while it plays.
    video.evaluate("v => v.play()")
    page.wait_for_function(
        "v => v.currentTime > 0.5 + %f" % max(0.0, target - LEAD_S), arg=video.element_handle(), timeout=20000
    )
    video.evaluate("v => v.pause()")
    t_now = video.evaluate("v => v.currentTime")
    page.wait_for_function(
        "([b, t]) => Math.abs(parseFloat(b.dataset.cursorT) - t) < 0.05",
        arg=[box.element_handle(), t_now],
        timeout=5000,
    )
    # A mark on the plot jumps too (the last stall).
    last = float(marks.last.get_attribute("data-t"))
    marks.last.dispatch_event("click")
    page.wait_for_function(
        "([v, t]) => Math.abs(v.currentTime - t) < 0.04",
        arg=[video.element_handle(), max(0.0, last - LEAD_S)],
        timeout=10000,
    )


def test_should_play_the_realtime_video_beside_the_smoothness_item_in_the_review_app(served, browser):
    base, cid, store = served
    ctx, page = signed_in_page(browser, base, store, "rt-reviewer", viewport={"width": 1366, "height": 900})
    page.goto(f"{base}/c/{cid}")
    _check_widget(page)
    # The real-time video is beside its item, not a second time among the recordings.
    assert page.locator("aside.media video").count() == 0
    ctx.close()


def test_should_play_the_realtime_video_in_the_static_report(run_dir, browser):
    ctx = browser.new_context(viewport={"width": 1366, "height": 900})
    page = ctx.new_page()
    page.goto((run_dir / "report.html").as_uri())
    _check_widget(page)
    ctx.close()
