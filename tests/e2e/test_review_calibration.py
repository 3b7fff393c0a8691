"""Calibration and agreement in the review app, through the app's own routes (TestClient,
signed in as real accounts), on SQLite and on PostgreSQL.

- a reviewer made to score two levels off on an item is flagged, one on the anchors is not,
  and the admin's sheet marks the flagged reviewer's scores;
- anchors by hand (with a reason) and from a finalised sheet, each action audited; bad input
  stores nothing;
- a new reviewer meets the anchors early in their queue and nothing marks them: not the
  queue, not the candidate page, not any route a reviewer may call; a finalised anchor looks
  open to them, takes their scores, and its finalised sheet does not change;
- the admin pages and their JSON twins answer admins only (403 for a reviewer).
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from skycity_bench.analysis.reviewer_calibration import SPREAD
from skycity_bench.cli import app as cli_app
from skycity_bench.inputs.rubric import load_rubric
from skycity_bench.review import create_app
from skycity_bench.store.review_store import ReviewStore
from tests.review_reports import client, make_run

R = load_rubric()
GRADED = [i.id for i in R.items if i.graded]
ITEM = "camera.motion"
N_CANDIDATES = 8


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("calib-runs")
    return [make_run(root, f"secret-model-{k}.html", seed=f"calib{k}") for k in range(N_CANDIDATES)]


@pytest.fixture(params=["sqlite", "postgres"])
def world(request, runs, tmp_path):
    if request.param == "sqlite":
        db = str(tmp_path / "reviews.sqlite")
    else:
        pg = request.getfixturevalue("postgres")
        db = pg.url(pg.new_db())
    store = ReviewStore(db, seed=5)
    cids = [store.import_run(r).candidate_id for r in runs]
    app = create_app(store)
    admin = client(app, store, "root", "admin", api=True)
    yield {"store": store, "app": app, "cids": cids, "admin": admin, "db": db}
    store.close()


def grades(levels: dict[str, str]) -> dict:
    return {"rubric_id": R.id, "grades": [{"item": i, "level": lv} for i, lv in levels.items()]}


def score(c, cid: str, levels: dict[str, str]):
    r = c.post(f"/api/candidates/{cid}/reviews", json=grades(levels))
    assert r.status_code == 201, r.text
    return r


def all_items(level: str, **special) -> dict[str, str]:
    return {i: special.get(i.replace(".", "_"), level) for i in GRADED}


def hand(admin, cid, item, level, reason="agreed at the calibration meeting"):
    return admin.post("/api/admin/anchors", json={"candidate_id": cid, "item": item, "level": level, "reason": reason})


def test_calibration_flags_fire_on_a_reviewer_made_to_score_two_levels_off(world):
    """What calibration must catch: ann scores the anchors as agreed, bob two levels below on
    camera.motion (and as agreed elsewhere); bob is flagged on camera.motion only, ann not."""
    admin, cids = world["admin"], world["cids"]
    anchors = cids[:2]
    for cid in anchors:
        for i in GRADED:
            assert hand(admin, cid, i, "excellent" if i == ITEM else "good").status_code == 201
    ann = client(world["app"], world["store"], "ann", api=True)
    bob = client(world["app"], world["store"], "bob", api=True)
    for cid in anchors:
        score(ann, cid, all_items("good", camera_motion="excellent"))
        score(bob, cid, all_items("good", camera_motion="fair"))  # excellent - 2 levels
    rep = admin.get("/api/admin/calibration").json()
    by = {r["reviewer"]: r for r in rep["reviewers"]}
    assert by["ann"]["flagged_items"] == [] and not by["ann"]["flagged"]
    assert by["bob"]["flagged_items"] == [ITEM]
    motion = next(f for f in by["bob"]["items"] if f["item_id"] == ITEM)
    assert (motion["offset"], motion["mad"], motion["n"], motion["flagged"]) == (-2.0, 2.0, 2, True)
    other = next(f for f in by["bob"]["items"] if f["item_id"] != ITEM)
    assert (other["offset"], other["mad"], other["n"], other["flagged"]) == (0.0, 0.0, 2, False)
    assert by["bob"]["anchors_scored"] == 2 * len(GRADED) == by["bob"]["anchors_total"]
    # the admin's page shows the flag in bob's row; ann's row has none
    page = admin.get("/admin/calibration").text
    bob_row = page.split('id="cal-bob"')[1].split("</tr>")[0]
    ann_row = page.split('id="cal-ann"')[1].split("</tr>")[0]
    assert "⚠" in bob_row and "-2.00" in bob_row and "⚠" not in ann_row
    # bob's scores stay stored and count on the sheet, marked for the admin only
    sheet = json.loads(admin.get("/sheet.json").text)
    line = next(
        i
        for c in sheet["candidates"]
        if c["candidate_id"] == anchors[0]
        for r in c["rows"]
        for i in r["items"]
        if i["item_id"] == ITEM
    )
    marks = {r["reviewer"]: r.get("calibration") for r in line["raw"]}
    assert marks["ann"] is None and "bob" in marks["bob"] and "-2.00 levels" in marks["bob"]
    assert any(f.startswith("calibration: bob") for f in line["flags"])
    assert len(line["raw"]) == 2  # bob's score still stands on the line (two levels apart: a third
    assert "needs third reviewer" in line["flags"]  # reviewer is asked, as for any such pair)
    assert "calibration-mark" in admin.get("/sheet").text and "[marked: calibration: bob" in admin.get("/sheet.md").text
    assert "marked: calibration: bob" in admin.get("/sheet.csv").text
    out = CliRunner().invoke(cli_app, ["sheet", "--db", world["db"], "--format", "md"])  # the operator's sheet too
    assert out.exit_code == 0 and "[marked: calibration: bob" in out.output, out.output[-500:]
    for path in ("/sheet", "/sheet.json", "/sheet.md", "/sheet.csv"):  # nothing of it for a reviewer
        assert "calibration:" not in bob.get(path).text and "calibration-mark" not in bob.get(path).text, path


def test_anchors_by_hand_need_a_graded_item_a_level_and_a_reason_and_are_audited(world):
    admin, store, cid = world["admin"], world["store"], world["cids"][0]
    auto = next(i.id for i in R.items if not i.graded)
    bad = [
        hand(admin, cid, auto, "good"),
        hand(admin, cid, ITEM, "splendid"),
        hand(admin, cid, ITEM, "good", "short"),
        hand(admin, cid, "no.such", "good"),
        hand(admin, "c-000000000000", ITEM, "good"),
    ]
    assert [r.status_code for r in bad] == [422, 422, 422, 422, 404]
    assert all(r.json()["error"] for r in bad)
    assert admin.get("/api/admin/anchors").json() == []
    assert hand(admin, cid, ITEM, "良好").json()["level"] == "good"  # Chinese name accepted
    assert hand(admin, cid, ITEM, "fair", "looked again: fair").json()["level"] == "fair"  # replaces
    assert [(a["item_id"], a["level"], a["source"], a["by"]) for a in admin.get("/api/admin/anchors").json()] == [
        (ITEM, "fair", "hand", "root")
    ]
    assert admin.delete(f"/api/admin/anchors/{cid}", params={"item": ITEM}).json() == {"removed": 1}
    from skycity_bench.store.anchors import Calibration

    acts = [a["action"] for a in Calibration(store).audit()]
    assert acts == ["anchor.remove", "anchor.hand", "anchor.hand"]


def test_anchors_from_a_finalised_sheet_take_agreed_levels_and_skip_splits(world):
    admin, store, cid = world["admin"], world["store"], world["cids"][0]
    ann = client(world["app"], store, "ann", api=True)
    bob = client(world["app"], store, "bob", api=True)
    score(ann, cid, all_items("good", camera_motion="excellent"))
    score(bob, cid, all_items("good"))  # one level apart on camera.motion
    r = admin.post("/api/admin/anchors/from-sheet", json={"candidate_id": cid})
    assert r.status_code == 409 and "not finalised" in r.json()["error"]
    from skycity_bench.store import accounts

    accounts.finalize(store, cid, by="root")
    r = admin.post("/api/admin/anchors/from-sheet", json={"candidate_id": cid})
    assert r.status_code == 201, r.text
    assert r.json()["set"] == {i: "good" for i in GRADED if i != ITEM}
    assert "split between good and excellent" in r.json()["skipped"][ITEM]
    assert {a["source"] for a in admin.get("/api/admin/anchors").json()} == {"sheet"}
    # the anchor is not compared with the scores it was made of
    assert admin.get("/api/admin/calibration").json()["reviewers"] == [] or all(
        r["anchors_scored"] == 0 for r in admin.get("/api/admin/calibration").json()["reviewers"]
    )


def test_a_new_reviewer_meets_the_anchors_first_and_nothing_marks_them(world):
    admin, store, cids = world["admin"], world["store"], world["cids"]
    old = client(world["app"], store, "old", api=True)
    ann = client(world["app"], store, "ann", api=True)
    # a finalised sheet (two reviewers agreeing) becomes an anchor; another anchor by hand
    fin = cids[4]
    score(old, fin, all_items("good"))
    score(ann, fin, all_items("good"))
    from skycity_bench.store import accounts

    accounts.finalize(store, fin, by="root")
    assert admin.post("/api/admin/anchors/from-sheet", json={"candidate_id": fin}).status_code == 201
    assert hand(admin, cids[1], ITEM, "fair").status_code == 201
    anchors = {fin, cids[1]}
    sheet_before = json.loads(admin.get("/sheet.json").text)
    for name in ("new1", "new2", "new3"):
        new = client(world["app"], store, name, api=True)
        q = new.get(f"/api/reviewers/{name}/queue")
        assert q.status_code == 200, q.text
        order = [e["candidate_id"] for e in store.queue(name)]
        assert anchors <= set(order[: SPREAD * len(anchors)]), order  # early in the queue
        entries = store.queue(name)
        assert len({tuple(sorted(e)) for e in entries}) == 1  # the same keys for every candidate
        assert all(e["finalized"] is False for e in entries)  # the finalised anchor looks open
        assert [e["candidate_id"] for e in q.json()] == order
        # every page and API answer a reviewer can reach says nothing of anchors (the bench's
        # own `calibration` of the refresh interval is in every report alike: counted, not banned)
        words = {}
        for path in (
            ["/queue", "/sheet", "/sheet.json", "/sheet.md", "/sheet.csv", "/api/candidates"]
            + [f"/c/{c}" for c in cids]
            + [f"/api/candidates/{c}" for c in cids]
        ):
            r = new.get(path)
            assert r.status_code == 200, (path, r.status_code)
            text = r.text.lower()
            assert "anchor" not in text and "锚" not in text and "calibration:" not in text, path
            words[path] = text.count("calibrat")
        assert len({words[f"/c/{c}"] for c in cids}) == 1 and len({words[f"/api/candidates/{c}"] for c in cids}) == 1
        page_anchor = new.get(f"/c/{fin}").text.replace(fin, "CID")
        page_other = new.get(f"/c/{cids[2]}").text.replace(cids[2], "CID")
        assert ("finalised" in page_anchor.lower()) == ("finalised" in page_other.lower())
        # the finalised anchor's scores stay hidden from the new reviewer until they have scored it
        shown = next(c for c in json.loads(new.get("/sheet.json").text)["candidates"] if c["candidate_id"] == fin)
        assert all(not i["raw"] for r in shown["rows"] for i in r["items"] if i["how"] != "auto")
    # new1 scores the finalised anchor: stored, compared with the anchor, the final sheet unchanged
    new1 = client(world["app"], store, "new1", api=True)
    score(new1, fin, all_items("poor"))
    assert json.loads(admin.get("/sheet.json").text)["candidates"] == sheet_before["candidates"]
    rep = {r["reviewer"]: r for r in admin.get("/api/admin/calibration").json()["reviewers"]}
    assert rep["new1"]["flagged_items"] == GRADED and rep["new1"]["overall"]["offset"] == -2.0
    # done with it: now it is finalised for new1 too, and further changes are refused
    assert new1.post(f"/api/candidates/{fin}/reviews", json=grades({ITEM: "good"})).status_code == 409
    # one who scored it before it was finalised cannot change it either
    assert old.post(f"/api/candidates/{fin}/reviews", json=grades({ITEM: "poor"})).status_code == 409


def test_drift_setting_is_the_stores_and_checked(world):
    admin = world["admin"]
    assert admin.get("/api/admin/calibration").json()["drift_last"] == 20
    assert admin.put("/api/admin/calibration/settings", json={"drift_last": 5}).json() == {"drift_last": 5}
    assert admin.get("/api/admin/calibration").json()["drift_last"] == 5
    for bad in (0, -3, 10**9):
        r = admin.put("/api/admin/calibration/settings", json={"drift_last": bad})
        assert r.status_code == 422 and "N must be" in r.json()["error"]
    assert admin.get("/api/admin/calibration").json()["drift_last"] == 5
    # the page's form does the same (with the session's CSRF token)
    page = client(world["app"], world["store"], "root2", "admin")
    r = page.post("/admin/calibration/settings", data=page.signed.form(drift_last="7"))
    assert r.status_code == 303 and admin.get("/api/admin/calibration").json()["drift_last"] == 7
    assert 'value="7"' in page.get("/admin/calibration").text


ADMIN_ROUTES = [
    ("get", "/admin/calibration"),
    ("get", "/admin/agreement"),
    ("get", "/api/admin/calibration"),
    ("get", "/api/admin/agreement"),
    ("get", "/api/admin/anchors"),
    ("post", "/api/admin/anchors"),
    ("post", "/api/admin/anchors/from-sheet"),
    ("delete", "/api/admin/anchors/c-000000000000"),
    ("put", "/api/admin/calibration/settings"),
    ("post", "/admin/calibration/anchors/sheet"),
    ("post", "/admin/calibration/anchors/hand"),
    ("post", "/admin/calibration/anchors/remove"),
    ("post", "/admin/calibration/settings"),
]


def test_admin_pages_answer_admins_only(world):
    app, store = world["app"], world["store"]
    # FastAPI 0.165 keeps an included router as one entry (_IncludedRouter) in app.routes
    paths = {
        getattr(x, "path", None)
        for r in app.routes
        for x in (r.original_router.routes if hasattr(r, "original_router") else [r])
    }
    assert {p for _, p in ADMIN_ROUTES if not p.startswith("/api/admin/anchors/c-")} <= paths
    rev = client(app, store, "ann", api=True)
    anon = client(app, store)
    for method, path in ADMIN_ROUTES:
        kw = {"json": {}} if method in ("post", "put") and path.startswith("/api/") else {}
        r = getattr(rev, method)(path, **kw)
        assert r.status_code == 403, (method, path, r.status_code)
        a = getattr(anon, method)(path, **kw)
        assert a.status_code == (401 if path.startswith("/api/") else 303), (method, path, a.status_code)
    admin = world["admin"]
    for path in ("/admin/calibration", "/admin/agreement"):
        assert admin.get(path).status_code == 200
    ag = admin.get("/api/admin/agreement").json()
    assert ag["measure"] == "krippendorff-alpha-ordinal" and ag["thresholds"] == {
        "good_from": 0.8,
        "reliable_from": 0.667,
    }


def test_agreement_page_flags_items_below_0667(world):
    admin, store, cids = world["admin"], world["store"], world["cids"]
    ann = client(world["app"], store, "ann", api=True)
    bob = client(world["app"], store, "bob", api=True)
    # camera.motion: ann and bob disagree wildly; visual.composition: they agree, varying across candidates
    lv = ["excellent", "good", "fair", "poor", "missing", "good"]
    for k, cid in enumerate(cids):
        score(ann, cid, {ITEM: lv[k % 6], "visual.composition": lv[k % 6]})
        score(bob, cid, {ITEM: lv[(k + 3) % 6], "visual.composition": lv[k % 6]})
    page = admin.get("/admin/agreement").text
    motion = page.split(f'id="alpha-{ITEM}"')[1].split("</tr>")[0]
    comp = page.split('id="alpha-visual.composition"')[1].split("</tr>")[0]
    assert "reviewers disagree; the mean is not reliable" in motion and "⚠" in motion
    assert "good" in comp and "⚠" not in comp
    assert f"<td>{N_CANDIDATES}</td>" in comp  # candidates behind it
    ag = {a["item_id"]: a for a in admin.get("/api/admin/agreement").json()["items"]}
    assert ag[ITEM]["verdict"] == "unreliable" and ag["visual.composition"]["alpha"] == 1.0
