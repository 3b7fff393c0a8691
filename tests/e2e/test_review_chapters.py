"""Chapter marks on the reviewers' recording, in a real Chromium: a reviewer jumps via a
chapter mark and via an item's evidence link, and the video lands at that moment; an
evidence plot fills its column and opens full size; the third reviewer's queue says what is
still asked of them, and a reviewer whose work is done sees that it is.

The run: golden evidence of the timeline and shops probes on their fixtures (what the probes
really collected, tests/golden/), scored by the real scorers into a report (their plots
written beside it), and a WebM recording whose every frame's grey level encodes its frame
number, so the frame Chromium shows after a jump tells where the video really is.
"""

from __future__ import annotations

import hashlib
import time

import cv2
import numpy as np
import pytest

from skycity_bench.browser.launch import BASE_ARGS
from skycity_bench.inputs.rubric import find_rubric, load_rubric
from skycity_bench.inputs.scenario import Scenario
from skycity_bench.judging.score_items import score_report
from skycity_bench.reporting.run_report import Candidate, ProbeRecord, save
from skycity_bench.review import create_app
from skycity_bench.store.review_store import ReviewStore
from tests.golden_evidence import GOLDEN_DIR, as_report, load
from tests.review_reports import ENV, client, make_run, serving, signed_in_page

pytestmark = pytest.mark.browser

FPS, SECONDS, W, H = 2, 62, 160, 90  # 124 frames: the tour's moments all inside
GREY_PER_FRAME = 2  # frame i is filled with grey 2 i (up to 246)


def _recording(path) -> None:
    w = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"VP80"), FPS, (W, H))
    for i in range(FPS * SECONDS):
        w.write(np.full((H, W, 3), GREY_PER_FRAME * i, np.uint8))
    w.release()


def _run(root):
    """A run folder: golden timeline + shops evidence scored into report.json, plots and a
    recording beside it."""
    gs = [load(GOLDEN_DIR / f"{g}.json") for g in ("timeline/clean", "shops/correct")]
    g = {**gs[0], "probes": {k: v for x in gs for k, v in x["probes"].items()}}
    run = root / "chapters-model-run"
    (run / "recordings").mkdir(parents=True)
    _recording(run / "recordings" / "recording.webm")
    rubric = load_rubric(find_rubric(g["rubric_id"]))
    report = score_report(as_report(g), Scenario.model_validate(g["scenario"]), rubric, run)
    # the recording's record, after scoring (the camera scorers read a full recording evidence;
    # the review app reads only its file and length)
    report.probes["recording"] = ProbeRecord(
        name="recording", data={"file": "recordings/recording.webm", "fps": FPS, "duration_s": float(SECONDS)}
    )
    sha = hashlib.sha256(b"chapters").hexdigest()
    report.candidate = Candidate(id="c-" + sha[:12], sha256=sha, size_bytes=1000, label="chapters-model.html")
    report.environment = dict(ENV)
    save(report, run)
    return run


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("chapters")
    store = ReviewStore(tmp / "reviews.sqlite", seed=3)
    cid = store.import_run(_run(tmp / "runs")).candidate_id
    app = create_app(store)
    with serving(app) as base:
        yield {"store": store, "base": base, "cid": cid, "app": app, "tmp": tmp}


JUMP = """async (sel) => {
  const v = document.getElementById('recording');
  const seeked = new Promise((ok) => v.addEventListener('seeked', ok, {once: true}));
  document.querySelector(sel).click();
  await Promise.race([seeked, new Promise((ok) => setTimeout(ok, 5000))]);   // no seek: the time tells
  // the seeked event can come before the frame is presented: wait for it, then read it
  await Promise.race([new Promise((ok) => v.requestVideoFrameCallback(ok)), new Promise((ok) => setTimeout(ok, 3000))]);
  const c = document.createElement('canvas'); c.width = v.videoWidth; c.height = v.videoHeight;
  const g = c.getContext('2d', {willReadFrequently: true});
  g.drawImage(v, 0, 0);
  const px = g.getImageData(c.width >> 1, c.height >> 1, 1, 1).data;
  return {t: v.currentTime, grey: (px[0] + px[1] + px[2]) / 3};
}"""


def _frame_grey(t: float) -> float:
    return GREY_PER_FRAME * int(t * FPS + 1e-6)


def test_should_jump_via_a_chapter_mark_and_an_evidence_link(served):
    from playwright.sync_api import sync_playwright

    base, cid = served["base"], served["cid"]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=BASE_ARGS)
        _, page = signed_in_page(browser, base, served["store"], "chap", viewport={"width": 1366, "height": 800})
        page.goto(f"{base}/c/{cid}")
        page.wait_for_function("document.getElementById('recording').readyState >= 1")
        marks = page.eval_on_selector_all(
            ".chapter-list button.chapter", "bs => bs.map(b => [b.id, parseFloat(b.dataset.t), b.disabled])"
        )
        kinds = [m[0].split("-")[1] for m in marks]
        assert kinds.count("phase") == 4 and kinds.count("shop") == 3
        assert kinds.count("density") == 1 and kinds.count("city") == 1
        assert not any(m[2] for m in marks)  # all inside the 62 s recording
        assert page.query_selector("#chapters-unknown") is None  # every moment known here
        # the marks are the video's chapters text track too
        track = page.evaluate("""() => { const v = document.getElementById('recording');
            const t = [...v.textTracks].find(t => t.kind === 'chapters');
            return t ? [...t.cues].map(c => [c.startTime, c.text]) : null; }""")
        assert track is not None and [round(c[0], 3) for c in track] == [m[1] for m in marks]
        # a chapter mark: phase 3 (the fixture's phase starting 30 s), then the third shop card
        for mark_id in ("chapter-phase-2", "chapter-shop-2", "chapter-city"):
            want = next(m[1] for m in marks if m[0] == mark_id)
            got = page.evaluate(JUMP, f"#{mark_id}")
            assert abs(got["t"] - want) < 0.01, (mark_id, got, want)
            assert abs(got["grey"] - _frame_grey(want)) <= 6, (mark_id, got, want)  # the frame shown is that moment's
            assert page.eval_on_selector_all(".chapter-list li.now button", "bs => bs.map(b => b.id)") == [mark_id]
        # ] and [ : the next and previous chapter mark
        city_t = next(m[1] for m in marks if m[0] == "chapter-city")  # where the video is now
        at = "(t) => Math.abs(document.getElementById('recording').currentTime - t) < 0.01"
        page.keyboard.press("[")
        page.wait_for_function(at, arg=max(m[1] for m in marks if m[1] < city_t - 0.5))
        page.keyboard.press("]")
        page.wait_for_function(at, arg=city_t)
        # an item's evidence link: the first automatic card, beside shops.auto_display
        link = "#item-shops\\.auto_display p.moments button.seek"
        want = float(page.get_attribute(link, "data-t"))
        assert want == next(m[1] for m in marks if m[0] == "chapter-shop-0")
        got = page.evaluate(JUMP, link)
        assert abs(got["t"] - want) < 0.01 and abs(got["grey"] - _frame_grey(want)) <= 6, got
        # a plot fills its column and opens full size on a click
        img = page.query_selector("img.evidence")
        assert img is not None
        widths = img.evaluate("i => [i.getBoundingClientRect().width, i.closest('article').clientWidth]")
        assert widths[0] >= 0.95 * widths[1], widths
        img.scroll_into_view_if_needed()
        img.click()
        page.wait_for_selector("dialog#zoom[open]")
        full = page.evaluate(
            "() => { const i = document.getElementById('zoom-img'); return new Promise((ok) => "
            "i.complete && i.naturalWidth ? ok([i.naturalWidth, i.src]) : i.addEventListener("
            "'load', () => ok([i.naturalWidth, i.src]), {once: true})); }"
        )
        assert full[0] > 0 and full[1] == base + img.evaluate("i => i.closest('a').getAttribute('href')")
        page.keyboard.press("Escape")
        page.wait_for_selector("dialog#zoom[open]", state="detached")
        browser.close()


def test_an_unknown_moment_has_no_mark_and_the_page_says_so(served, tmp_path):
    # a run without the timeline probe (make_run: no probe evidence): no phase or city mark
    store, app = served["store"], served["app"]
    cid = store.import_run(make_run(tmp_path, "chapters-nophase.html", seed="nophase")).candidate_id
    page = client(app, store, "nophase").get(f"/c/{cid}").text
    assert 'id="chapters-unknown"' in page
    assert "the tour&#39;s phases: unknown" in page and "the city name&#39;s first appearance: unknown" in page
    assert 'id="chapter-phase-' not in page and 'id="chapter-city"' not in page


def test_the_queue_tells_a_third_reviewer_what_is_asked_and_a_finished_one_that_they_are_done(tmp_path):
    store = ReviewStore(tmp_path / "reviews.sqlite", seed=4)
    cid = store.import_run(make_run(tmp_path / "runs", "third-model.html", seed="third")).candidate_id
    app = create_app(store)
    rubric = store.rubric
    graded = [i.id for i in rubric.items if i.graded]
    levels = [lv.percent for lv in rubric.sorted_levels()]  # best first
    ann, bob, cat = (client(app, store, n) for n in ("ann", "bob", "cat"))
    for c, split in ((ann, levels[0]), (bob, levels[2])):  # two levels apart on the first item
        grades = [{"item": i, "level": split if i == graded[0] else levels[1]} for i in graded]
        store.submit(cid, c.signed.name, rubric.id, grades)
    q = cat.get("/queue").text  # the third reviewer
    assert 'id="asked-third"' in q and f'href="/c/{cid}#item-{graded[0]}"' in q
    assert 'id="asked-done"' not in q
    q = ann.get("/queue").text  # scored everything; not asked again
    assert 'id="asked-done"' in q and 'id="asked-third"' not in q
    page = cat.get(f"/c/{cid}").text
    assert 'id="asked-here"' in page and f'href="#item-{graded[0]}"' in page
    store.submit(cid, "cat", rubric.id, [{"item": i, "level": levels[1]} for i in graded])
    q = cat.get("/queue").text
    assert 'id="asked-done"' in q and 'id="asked-third"' not in q


def test_time_per_candidate_is_recorded_from_the_servers_opening_and_shown_to_the_admin(tmp_path):
    import re

    from skycity_bench.store import timings

    store = ReviewStore(tmp_path / "reviews.sqlite", seed=5)
    cid = store.import_run(make_run(tmp_path / "runs", "timed-model.html", seed="timed")).candidate_id
    app = create_app(store)
    item = next(i.id for i in store.rubric.items if i.graded)
    level = store.rubric.sorted_levels()[1].percent
    dan = client(app, store, "dan")
    page = dan.get(f"/c/{cid}").text
    opened = re.search(r'name="opened" value="([^"]+)"', page).group(1)
    time.sleep(0.3)
    form = dan.signed.form(candidate=cid, rubric_id=store.rubric.id, opened=opened, **{f"grade:{item}": str(level)})
    assert dan.post(f"/c/{cid}", data=form).status_code == 303
    (row,) = timings.rows(store)
    assert row["reviewer"] == "dan" and row["candidate_id"] == cid and 0.3 <= row["seconds"] < 60
    # a forged or another candidate's stamp times nothing; the scores are stored all the same
    later = store.rubric.sorted_levels()[2].percent
    for bad in (opened[:-3] + "abc", ""):
        form = dan.signed.form(candidate=cid, rubric_id=store.rubric.id, opened=bad, **{f"grade:{item}": str(later)})
        assert dan.post(f"/c/{cid}", data=form).status_code == 303
    assert len(timings.rows(store)) == 1
    assert store.reviews(cid, "dan")[0].share == store.rubric.level(later).share
    # the admin sees the median per reviewer; a reviewer may not
    admin = client(app, store, "root", "admin")
    doc = admin.get("/api/admin/timings").json()["reviewers"]
    assert [(r["reviewer"], r["candidates"]) for r in doc] == [("dan", 1)] and doc[0]["median_s"] >= 0.3
    assert 'id="timing-dan"' in admin.get("/admin/timings").text
    assert dan.get("/api/admin/timings").status_code == 403
    assert 'id="nav-timings"' in admin.get("/queue").text and 'id="nav-timings"' not in dan.get("/queue").text
    # and the operator's sheet export (skycity-bench sheet --format json) holds the same
    import json

    from typer.testing import CliRunner

    from skycity_bench.cli import app as cli

    res = CliRunner().invoke(cli, ["sheet", "--db", str(tmp_path / "reviews.sqlite"), "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["review_timings"] == doc
