"""Scoring from the keyboard in a real Chromium (keys only): j/k move between graded items,
1–5 pick the current item's level in the order shown, keys typed into a comment stay text,
and what the keys picked is what gets stored."""

from __future__ import annotations

import pytest

from skycity_bench.browser.launch import BASE_ARGS
from skycity_bench.inputs.rubric import load_rubric
from skycity_bench.review import create_app
from skycity_bench.store.review_store import ReviewStore
from tests.review_reports import make_run, serving, signed_in_page

pytestmark = pytest.mark.browser

R = load_rubric()
GRADED = [i.id for i in R.items if i.graded]
SHOWN = [lv.percent for lv in R.sorted_levels()]  # the order the page shows: key 1 is the first


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("keys")
    store = ReviewStore(tmp / "reviews.sqlite", seed=2)
    cid = store.import_run(make_run(tmp / "runs", "keys-model.html", seed="keys")).candidate_id
    store.import_run(make_run(tmp / "runs", "keys-model-2.html", seed="keys-2"))
    with serving(create_app(store)) as base:
        yield {"store": store, "base": base, "cid": cid}


def _checked(page, item):
    return page.evaluate(f"(document.querySelector(\"input[name='grade:{item}']:checked\") || {{}}).value || null")


def test_should_score_with_the_keyboard(served):
    from playwright.sync_api import sync_playwright

    base, cid = served["base"], served["cid"]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=BASE_ARGS)
        _, page = signed_in_page(browser, base, served["store"], "kbd", viewport={"width": 1366, "height": 800})
        page.goto(f"{base}/c/{cid}")
        page.wait_for_load_state("load")
        page.keyboard.press("j")
        page.keyboard.press("2")
        page.keyboard.press("j")
        page.keyboard.press("5")
        page.keyboard.press("j")
        page.keyboard.press("k")  # back to the second item
        page.keyboard.press("1")  # changes its level
        assert page.get_attribute(f"#item-{GRADED[1].replace('.', chr(92) + '.')}", "class").endswith("current")
        assert _checked(page, GRADED[0]) == str(SHOWN[1])
        assert _checked(page, GRADED[1]) == str(SHOWN[0])
        assert _checked(page, GRADED[2]) is None
        # a digit typed into a comment is text, not a level
        page.click(f"textarea[name='comment:{GRADED[0]}']")
        page.keyboard.type("3 js")
        assert _checked(page, GRADED[0]) == str(SHOWN[1])
        assert page.input_value(f"textarea[name='comment:{GRADED[0]}']") == "3 js"
        page.click("#submit")
        page.wait_for_selector("#saved")
        browser.close()
    stored = {r.item_id: r.share for r in served["store"].reviews(cid, "kbd")}
    assert stored == {GRADED[0]: R.level(SHOWN[1]).share, GRADED[1]: R.level(SHOWN[0]).share}


def test_should_save_and_open_the_next_candidate_at_the_same_video_time(served):
    from playwright.sync_api import sync_playwright

    base, store = served["base"], served["store"]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=BASE_ARGS)
        _, page = signed_in_page(browser, base, store, "nexter", viewport={"width": 1366, "height": 800})
        page.goto(f"{base}/queue")
        order = store.order_for(store.reviewer("nexter")["seat"])
        assert len(order) == 2
        page.goto(f"{base}/c/{order[0]}")
        page.wait_for_function("document.querySelector('aside.media video').readyState >= 1")
        page.evaluate("document.querySelector('aside.media video').currentTime = 0.6")
        page.keyboard.press("j")
        page.keyboard.press("3")
        page.keyboard.press("n")
        page.wait_for_url(f"**/c/{order[1]}?saved=1&for={order[0]}&t=0.6")
        page.wait_for_function("Math.abs(document.querySelector('aside.media video').currentTime - 0.6) < 0.05")
        assert f"1 item(s) for candidate {order[0]}" in page.inner_text("#saved")  # which save, for whom
        page.keyboard.press("n")  # the last one: back to the queue, saying nothing was stored
        page.wait_for_url(f"**/queue?saved=0&for={order[1]}")
        browser.close()
    assert [r.item_id for r in store.reviews(order[0], "nexter")] == [GRADED[0]]
    assert store.reviews(order[1], "nexter") == []
