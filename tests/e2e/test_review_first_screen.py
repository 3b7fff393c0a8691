"""A candidate page's first screen in a real Chromium at 1280x720, measured by bounding boxes:
the recording and the first item to score (its name and its level choices) are in view
without scrolling, clear of the sticky header and the sticky submit bar; every image on the
page loads lazily (`loading="lazy"`), so the images far below the first screen are not
fetched when the page opens (a real round's page holds sixty of them)."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from skycity_bench.browser.launch import BASE_ARGS
from skycity_bench.commands.review import web_app
from skycity_bench.inputs.rubric import load_rubric
from skycity_bench.store.review_store import ReviewStore
from tests.review_reports import make_run, serving, signed_in_page

pytestmark = pytest.mark.browser

R = load_rubric()
AUTO = [i.id for i in R.items if not i.graded]
FIRST_GRADED = next(i.id for i in R.items if i.graded)
KEYFRAMES, PLOTS = 24, len(AUTO)
VIEW = {"width": 1280, "height": 720}


def _round_sized_run(root):
    """make_run's run with a round's worth of images: keyframes beside the recording, and a
    plot of its own beside each automated item (down the page, as a real report's)."""
    run = make_run(root, "first-screen-model.html", seed="first-screen")
    img = np.full((720, 1280, 3), 90, np.uint8)
    for k in range(KEYFRAMES):
        cv2.putText(img, str(k), (500, 400), cv2.FONT_HERSHEY_SIMPLEX, 8, (255, 255, 255), 12)
        cv2.imwrite(str(run / "keyframes" / f"t{30 + k}.png"), img)
    doc = json.loads((run / "report.json").read_text())
    for k, iid in enumerate(AUTO):
        cv2.imwrite(str(run / f"plot_{k}.png"), np.roll(img, k * 40, axis=1))
        doc["items"][iid]["evidence"]["files"] = [f"plot_{k}.png"]
    (run / "report.json").write_text(json.dumps(doc))
    return run


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("first-screen")
    store = ReviewStore(tmp / "reviews.sqlite", seed=4)
    cid = store.import_run(_round_sized_run(tmp / "runs")).candidate_id
    with serving(web_app(store)) as base:
        yield {"store": store, "base": base, "cid": cid}


BOXES = """(first) => {
  const box = (el) => { const b = el.getBoundingClientRect(); return {top: b.top, bottom: b.bottom, left: b.left, right: b.right}; };
  const item = document.getElementById('item-' + first);
  return {
    header: box(document.querySelector('header.top')),
    submit: box(document.querySelector('.submit-bar')),
    video: box(document.getElementById('recording')),
    name: box(item.querySelector('h3')),
    levels: [...item.querySelectorAll('fieldset.levels input[type=radio]')].map(box),
    images: [...document.querySelectorAll('img[src]')].map((i) => ({
      lazy: i.getAttribute('loading') === 'lazy', src: new URL(i.currentSrc || i.src).pathname, top: box(i).top})),
    fetched: performance.getEntriesByType('resource').map((r) => new URL(r.name).pathname),
  };
}"""


def _in_view(b: dict, top: float, bottom: float) -> bool:
    return b["top"] >= top and b["bottom"] <= bottom and b["left"] >= 0 and b["right"] <= VIEW["width"]


def test_should_show_the_recording_and_the_first_item_to_score_without_scrolling(served):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=BASE_ARGS)
        _, page = signed_in_page(browser, served["base"], served["store"], "fold", viewport=VIEW)
        page.goto(f"{served['base']}/c/{served['cid']}", wait_until="load")
        page.wait_for_timeout(500)  # images near the screen start loading after the load event
        m = page.evaluate(BOXES, FIRST_GRADED)
        browser.close()
    top, bottom = m["header"]["bottom"], m["submit"]["top"]  # what the sticky bars leave in view
    assert bottom <= VIEW["height"] and _in_view(m["video"], top, VIEW["height"]), m["video"]
    assert m["video"]["bottom"] - m["video"]["top"] > 150  # shown at a size one can watch
    assert _in_view(m["name"], top, bottom), m["name"]
    assert len(m["levels"]) == len(R.levels) and all(_in_view(b, top, bottom) for b in m["levels"]), m["levels"]
    # every image lazy; the ones far down the page (beyond Chromium's look-ahead) not fetched yet
    assert len(m["images"]) >= KEYFRAMES + PLOTS and all(i["lazy"] for i in m["images"])
    far = [i["src"] for i in m["images"] if i["top"] > 4 * VIEW["height"]]
    assert far and not set(far) & set(m["fetched"]), (far, m["fetched"])
