"""The review app's run choice and thumbnails (review/routes_runs.py), through the app with
signed-in accounts, on SQLite and PostgreSQL:

- a partial re-run does not replace the full run on the candidate's page and in the API; an
  admin's pick (API or the /admin/runs form, with a reason) does, and is in the audit trail;
  a reviewer may not pick (403) and nothing changes;
- the candidate page shows each image's thumbnail (lazy) and links the full file; /thumbs
  serves a 480 px WebP; no answer carries the candidate's full file hash.
"""

from __future__ import annotations

import json
import re

import cv2
import numpy as np
import pytest

from skycity_bench.inputs.rubric import load_rubric
from skycity_bench.review import create_app
from skycity_bench.store.review_store import ReviewStore
from tests.review_reports import client, make_run

R = load_rubric()
AUTO = [i.id for i in R.items if not i.graded]
LABEL = "runs-model-zeta.html"


@pytest.fixture(params=["sqlite", "postgres"])
def world(request, tmp_path):
    if request.param == "sqlite":
        db = tmp_path / "reviews.sqlite"
    else:
        pg = request.getfixturevalue("postgres")
        db = pg.url(pg.new_db())
    store = ReviewStore(db, seed=3)
    full = make_run(tmp_path / "full", LABEL, seed="zeta", started_at="2026-12-02T10:00:00+00:00")
    big = np.full((1080, 1920, 3), 200, np.uint8)
    cv2.circle(big, (960, 540), 300, (30, 60, 220), -1)
    cv2.imwrite(str(full / "keyframes" / "t40.png"), big)
    partial = make_run(
        tmp_path / "partial", LABEL, seed="zeta", untested=tuple(AUTO[2:]), started_at="2026-12-02T12:00:00+00:00"
    )
    a, b = store.import_run(full), store.import_run(partial)
    app = create_app(store)
    yield {
        "store": store,
        "app": app,
        "cid": a.candidate_id,
        "full": a.run_id,
        "partial": b.run_id,
        "ann": client(app, store, "ann", api=True),
        "boss": client(app, store, "boss", "admin", api=True),
        "sha": json.loads((full / "report.json").read_text())["candidate"]["sha256"],
    }
    store.close()


def _shown(c, cid):
    return c.get(f"/api/candidates/{cid}").json()["run_id"]


def test_should_keep_the_full_run_until_an_admin_picks_another(world):
    ann, boss, cid = world["ann"], world["boss"], world["cid"]
    assert _shown(ann, cid) == world["full"]
    page = ann.get(f"/c/{cid}").text
    assert "t40.png" in page  # the full run's keyframe, not the re-run's
    # a reviewer may not pick; nothing changes
    r = ann.put(f"/api/admin/candidates/{cid}/run", json={"run_id": world["partial"], "reason": "I like it"})
    assert r.status_code == 403 and _shown(ann, cid) == world["full"]
    assert ann.get("/api/admin/runs").status_code == 403 and ann.get("/admin/runs").status_code == 403
    # the admin sees why the full run is shown, then picks the re-run with a reason
    runs = boss.get(f"/api/admin/candidates/{cid}/runs").json()
    assert runs["shown_run_id"] == world["full"] and [r["items_collected"] for r in runs["runs"]] == [
        len(R.items),
        len(R.items) - len(AUTO[2:]),
    ]
    r = boss.put(f"/api/admin/candidates/{cid}/run", json={"run_id": world["partial"], "reason": ""})
    assert r.status_code == 422 and _shown(ann, cid) == world["full"]
    r = boss.put(
        f"/api/admin/candidates/{cid}/run",
        json={"run_id": world["partial"], "reason": "the full run's recording is black"},
    )
    assert r.status_code == 200 and r.json()["shown_run_id"] == world["partial"]
    assert _shown(ann, cid) == world["partial"] and "t40.png" not in ann.get(f"/c/{cid}").text
    audit = boss.get("/api/admin/audit").json()
    assert audit[0]["action"] == "run.choose" and audit[0]["actor"] == "boss" and audit[0]["candidate_id"] == cid


def test_should_pick_a_run_from_the_admin_page_with_its_csrf_token(world):
    boss, cid = world["boss"], world["cid"]
    boss.headers.pop("Authorization")  # the page's way: session cookie and form
    page = boss.get("/admin/runs")
    assert (
        page.status_code == 200 and f'action="/admin/runs/{cid}"' in page.text and "most items collected" in page.text
    )
    form = {"run_id": str(world["partial"]), "reason": "picked on the page"}
    assert boss.post(f"/admin/runs/{cid}", data=form).status_code == 403  # no CSRF token
    r = boss.post(f"/admin/runs/{cid}", data=boss.signed.form(**form))
    assert r.status_code == 303 and _shown(world["ann"], cid) == world["partial"]
    r = boss.post(f"/admin/runs/{cid}", data=boss.signed.form(run_id="auto", reason="back to automatic"))
    assert r.status_code == 303 and _shown(world["ann"], cid) == world["full"]
    r = boss.post(f"/admin/runs/{cid}", data=boss.signed.form(run_id="x1", reason="not a number"))
    assert r.status_code == 303 and r.headers["location"] == f"/admin/runs#runs-{cid}"  # POST-redirect-GET
    assert "not a run number" in boss.get("/admin/runs").text


def test_should_show_thumbnails_lazily_and_link_the_full_image(world):
    ann, cid = world["ann"], world["cid"]
    page = ann.get(f"/c/{cid}").text
    imgs = re.findall(r"<img [^>]*>", page)
    big = next(i for i in imgs if "t40.png" in i)
    fid = re.search(r'id="img-(\d+)"', big).group(1)
    assert f'src="/thumbs/{fid}"' in big and 'loading="lazy"' in big and f"/files/{fid} " in big  # srcset
    assert f'<a href="/files/{fid}" target="_blank"><img id="img-{fid}"' in page  # full on click
    assert all('src="/thumbs/' in i for i in imgs if "t40.png" in i or "t20.png" in i)
    t = ann.get(f"/thumbs/{fid}")
    assert t.status_code == 200 and t.headers["content-type"] == "image/webp"
    img = cv2.imdecode(np.frombuffer(t.content, np.uint8), cv2.IMREAD_COLOR)
    assert img.shape == (270, 480, 3)
    full = ann.get(f"/files/{fid}")
    assert full.headers["content-type"] == "image/png" and len(t.content) * 5 < len(full.content)
    for bad in ("0", "99999999999999999999999", "abc"):
        assert ann.get(f"/thumbs/{bad}").status_code == 404
    anon = client(world["app"], world["store"])
    assert anon.get(f"/thumbs/{fid}").status_code in (303, 307)


def test_should_serve_no_full_file_hash(world):
    ann, boss, cid, sha = world["ann"], world["boss"], world["cid"], world["sha"]
    reviewer = [ann.get(f"/api/candidates/{cid}").text, ann.get(f"/c/{cid}").text, ann.get("/api/sheet").text]
    admin = [
        boss.get("/api/admin/runs").text,
        boss.get("/admin/runs").text,
        boss.get(f"/api/admin/candidates/{cid}/runs").text,
    ]
    assert all(sha[:12] not in a and "runs-model-zeta" not in a for a in reviewer)
    # the admin's runs overview names the file hash (the admins' to see), never the label
    assert sha in admin[0] and all("runs-model-zeta" not in a for a in admin)


@pytest.mark.browser
def test_should_load_the_thumbnail_in_the_strip_and_the_full_plot_at_column_width(tmp_path):
    """In Chromium at 1920x1080: a keyframe in its strip loads its 480 px thumbnail, a wide plot
    beside its item (wider than a thumbnail) loads the full file, and a click on the keyframe
    opens the full image."""

    from playwright.sync_api import sync_playwright

    from skycity_bench.browser.launch import BASE_ARGS
    from tests.review_reports import serving, signed_in_page

    store = ReviewStore(tmp_path / "reviews.sqlite", seed=3)
    run = make_run(tmp_path / "runs", LABEL, seed="zeta-browser")
    cv2.imwrite(str(run / "keyframes" / "t40.png"), np.full((1080, 1920, 3), 120, np.uint8))
    plot = np.full((500, 1600, 3), 255, np.uint8)
    cv2.line(plot, (0, 400), (1600, 100), (0, 0, 0), 3)
    cv2.imwrite(str(run / "frame_pacing.png"), plot)  # cited by the passing items' evidence
    cid = store.import_run(run).candidate_id
    files = {f["name"]: f["id"] for f in store.shown_run(cid)["files"]}
    try:
        with serving(create_app(store)) as base, sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=BASE_ARGS)
            _, page = signed_in_page(browser, base, store, "ann", viewport={"width": 1920, "height": 1080})
            page.goto(f"{base}/c/{cid}")
            loaded = """(id) => { const i = document.getElementById(id); i.scrollIntoView();
                return new Promise((ok) => { const done = () => ok([i.currentSrc, i.naturalWidth]);
                  if (i.complete && i.naturalWidth) done(); else i.addEventListener('load', done, {once: true}); }); }"""
            key = page.evaluate(loaded, f"img-{files['keyframes/t40.png']}")
            assert key[0] == f"{base}/thumbs/{files['keyframes/t40.png']}" and key[1] > 0  # (its srcset width)
            ev = page.evaluate(loaded, f"img-{files['frame_pacing.png']}")
            assert ev[0] == f"{base}/files/{files['frame_pacing.png']}" and ev[1] > 0
            page.click(f"#img-{files['keyframes/t40.png']}")
            page.wait_for_selector("#zoom[open]")
            full = page.evaluate(
                "() => { const i = document.getElementById('zoom-img'); return new Promise((ok) => "
                "{ const d = () => ok([i.src, i.naturalWidth]); if (i.complete && i.naturalWidth) d(); "
                "else i.addEventListener('load', d, {once: true}); }); }"
            )
            assert full == [f"{base}/files/{files['keyframes/t40.png']}", 1920]
            browser.close()
    finally:
        store.close()
