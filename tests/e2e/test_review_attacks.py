"""The review app against a determined reviewer, an admin and an anonymous visitor on the
same network: each test plays one attack over real HTTP against the app exactly as
`skycity-bench review` serves it (commands/review.py: web_app, uvicorn on loopback), on a
SQLite and a PostgreSQL store, and shows it fails.

- hashing the candidate files finds nothing: candidate ids are random (the store's), the
  file hash and the bench's hash-derived id reach admins only; a migrated store keeps every
  link working;
- a body naming a reviewer anywhere (top level, inside a grade or an override, a form field)
  is a 422 and stores nothing;
- a bad or expired bearer token is a 401 with a JSON error on every route (no redirect loop);
  a token cannot mint tokens; tokens are listed and revoked;
- every answer carries the security headers; a candidate's HTML run file is a sandboxed
  download: its script never runs with the reviewer's session (checked in Chromium too);
- no silent impersonation: re-inviting an active reviewer is refused until the account is
  revoked; invite, revoke, re-issue, an admin's override and finalising go to an append-only
  audit trail, shown to the admins and to the reviewer concerned;
- before a sheet is final a reviewer sees only their own work: everything they can read is
  the same, byte for byte, whether or not others graded and overrode that candidate;
- masking by rule: the candidate file's size, line count, hash and path never reach a
  reviewer; a label is masked in the candidate's own text, never carved out of the bench's
  sentences (a candidate called references.html leaves "no external references" whole).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import httpx
import pytest
from alembic import command
from alembic.config import Config

import skycity_bench.store as store_pkg
from skycity_bench.commands.review import web_app
from skycity_bench.inputs.rubric import load_rubric
from skycity_bench.store import accounts
from skycity_bench.store.db import open_database
from skycity_bench.store.review_store import ReviewStore
from tests.review_reports import http_client, make_run, serving

R = load_rubric()
GRADED = [i.id for i in R.items if i.graded]
SEEDS = ("attack-a", "attack-b", "attack-c")  # a candidate "file" is its seed's bytes (make_run)
LABELS = ("attack-model-north.html", "attack-model-south.html", "attack-model-east.html")


def _db(request, tmp: Path, name: str, kind: str = ""):
    if (kind or request.param) == "sqlite":
        return tmp / f"{name}.sqlite"
    pg = request.getfixturevalue("postgres")
    return pg.url(pg.new_db())


# a run file the candidate controls: HTML whose script, run with the reviewer's session, would
# mint a token and mark the page that framed it
HOSTILE_HTML = (
    "<!doctype html><title>evidence</title><script>"
    "fetch('/api/me/tokens', {method: 'POST'}).then(r => r.text()).then(t => { parent.document.title = 'pwned ' + t; });"
    "try { parent.document.title = 'pwned'; } catch (e) {}"
    "</script><p>a candidate's page</p>"
)


def _fill(store: ReviewStore, tmp: Path) -> list[str]:
    out = []
    for label, seed in zip(LABELS, SEEDS):
        run = make_run(tmp / "runs", label, seed=seed)
        if seed == SEEDS[0]:
            (run / "evidence.html").write_text(HOSTILE_HTML, encoding="utf-8")
        out.append(store.import_run(run).candidate_id)
    return out


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def world(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("attacks")
    store = ReviewStore(_db(request, tmp, "reviews"), seed=7)
    cids = _fill(store, tmp)
    app = web_app(store)
    with serving(app) as base:
        people = {
            "ann": http_client(base, store, "ann", api=True),
            "bob": http_client(base, store, "bob", api=True),
            "boss": http_client(base, store, "boss", "admin"),
        }
        yield {"store": store, "app": app, "base": base, "cids": cids, **people}
        for c in people.values():
            c.close()
    store.close()


def _file_hashes() -> list[str]:
    """What the attacker computes: the sha256 of each candidate file they hold."""
    return [hashlib.sha256(seed.encode()).hexdigest() for seed in SEEDS]


def _reviewer_pages(c: httpx.Client, cids: list[str]) -> list[httpx.Response]:
    out = [c.get(u) for u in ("/queue", "/sheet", "/sheet.json", "/sheet.csv", "/api/candidates", "/api/me/queue")]
    out += [c.get("/api/sheet")]
    for cid in cids:
        out += [c.get(f"/c/{cid}"), c.get(f"/api/candidates/{cid}"), c.get(f"/api/candidates/{cid}/reviews")]
        for f in out[-2].json()["files"]:
            if f["mime"].startswith(("text/", "application/json")):
                out.append(c.get(f["url"]))
    return out


# --- 1. candidate ids that reveal nothing -------------------------------------------------
def test_should_reveal_nothing_to_a_reviewer_who_hashes_the_candidate_files(world):
    ann, boss, cids = world["ann"], world["boss"], world["cids"]
    hashes = _file_hashes()
    for page in _reviewer_pages(ann, cids):
        assert page.status_code == 200, (page.url, page.status_code)
        for h in hashes:
            assert h[:12] not in page.text, (page.url, "the file hash's prefix reached a reviewer")
    assert not {cid[2:] for cid in cids} & {h[:12] for h in hashes}  # the ids are not the hash
    for h in hashes:  # the bench's hash-derived id opens nothing for a reviewer
        assert ann.get(f"/c/c-{h[:12]}").status_code == 404
        assert ann.get(f"/api/candidates/c-{h[:12]}").status_code == 404
    # the admin sees the file hash (the runs overview), and the bench's id still leads there
    runs = {r["candidate_id"]: r for r in boss.get("/api/admin/runs").json()}
    assert sorted(r["sha256"] for r in runs.values()) == sorted(hashes)
    r = boss.get(f"/c/c-{hashes[0][:12]}")
    assert r.status_code == 303 and r.headers["location"] == f"/c/{world['store'].by_bench_id('c-' + hashes[0][:12])}"


def _downgrade_to_0004(target) -> None:
    """The store as the previous schema had it (candidate ids = the bench's hash prefix),
    by the migration's own downgrade."""
    db = open_database(target)
    cfg = Config()
    cfg.set_main_option("script_location", str(Path(store_pkg.__file__).parent / "migrations"))
    with db.engine.connect() as con, con.begin():
        cfg.attributes["connection"] = con
        command.downgrade(cfg, "0004")
    db.dispose()


def _links(html: str) -> list[str]:
    return sorted(set(re.findall(r'(?:href|src)="(/(?:c|files|thumbs)/[^"#?]+)', html)))


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_should_migrate_an_old_store_to_random_ids_and_keep_every_link_working(kind, request, tmp_path):
    target = _db(request, tmp_path, "old", kind)
    st = ReviewStore(target, seed=3)
    cids = _fill(st, tmp_path)
    st.sign_in("ann")
    st.submit(cids[0], "ann", R.id, [{"item": i, "level": 75, "comment": "before the move"} for i in GRADED])
    st.finalize(cids[0], "lead")
    st.close()
    _downgrade_to_0004(target)
    db = open_database(target)  # the old state, read without migrating it
    with db.engine.connect() as con:
        old_ids = sorted(r[0] for r in con.exec_driver_sql("SELECT id FROM candidates"))
    db.dispose()
    assert old_ids == sorted("c-" + h[:12] for h in _file_hashes())  # the old, hash-derived ids

    store = ReviewStore(target)  # opening it migrates it
    new = {b: c for c, b in store.bench_ids().items()}
    assert sorted(new) == old_ids and not set(new.values()) & set(old_ids)
    reviewed = new["c-" + _file_hashes()[0][:12]]
    with serving(web_app(store)) as base:
        ann = http_client(base, store, "ann")
        boss = http_client(base, store, "boss2", "admin")
        queue = ann.get("/queue").text
        pages = _links(queue)
        assert sorted(p.split("/")[-1] for p in pages if p.startswith("/c/")) == sorted(new.values())
        seen = 0
        for page in pages:
            html = ann.get(page)
            assert html.status_code == 200, page
            for link in _links(html.text):
                assert ann.get(link).status_code == 200, (page, link)
                seen += 1
        assert seen > 6
        kept = [r for r in store.reviews(reviewed) if r.comment == "before the move"]
        assert len(kept) == len(GRADED) and store.is_finalized(reviewed)
        assert "before the move" in ann.get(f"/c/{reviewed}").text
        for old_id in old_ids:  # an admin's old link still works; a reviewer's is any unknown id
            assert boss.get(f"/c/{old_id}").headers.get("location") == f"/c/{new[old_id]}"
            assert ann.get(f"/c/{old_id}").status_code == 404
        ann.close()
        boss.close()
    store.close()


# --- 2. a body naming a reviewer, anywhere ------------------------------------------------
def test_should_refuse_a_body_that_names_a_reviewer_anywhere_and_store_nothing(world):
    store, ann, cid = world["store"], world["ann"], world["cids"][1]
    auto = next(i.id for i in R.items if not i.graded)
    grade = {"item": GRADED[0], "level": 25}
    override = {"item": auto, "points": 0, "reason": "looked again"}
    bodies = [
        {"rubric_id": R.id, "reviewer": "bob", "grades": [grade]},
        {"rubric_id": R.id, "grades": [{**grade, "reviewer": "bob"}]},
        {"rubric_id": R.id, "grades": [{**grade, "by": "bob"}]},
        {"rubric_id": R.id, "overrides": [{**override, "reviewer": "bob"}]},
        {"rubric_id": R.id, "grades": [{**grade, "meta": {"reviewer": "bob"}}]},
        {"rubric_id": R.id, "grades": [grade], "note": "anything unknown"},
    ]
    before = len(store.export_reviews()), len(store.reviews(cid, "bob"))
    for body in bodies:
        r = ann.post(f"/api/candidates/{cid}/reviews", json=body)
        assert r.status_code == 422, (body, r.status_code, r.text)
        assert "error" in r.json()
    assert "signed-in account" in ann.post(f"/api/candidates/{cid}/reviews", json=bodies[1]).json()["error"]
    # the page's form: a field it does not have is refused too, nothing stored
    page = http_client(world["base"], store, "ann-form")
    form = page.signed.form(candidate=cid, rubric_id=R.id, **{f"grade:{GRADED[0]}": "25", "reviewer": "bob"})
    r = page.post(f"/c/{cid}", data=form)
    assert r.status_code == 422 and "signed-in account" in r.text
    # a route that reads no body refuses one rather than ignoring it
    ann_id = accounts.account(store, "ann")["id"]
    tokens_before = len(accounts.tokens(store, ann_id))
    r = ann.post("/api/me/tokens", json={"reviewer": "bob"})
    assert r.status_code == 422 and "signed-in account" in r.json()["error"]
    assert (len(store.export_reviews()), len(store.reviews(cid, "bob"))) == before
    assert len(accounts.tokens(store, ann_id)) == tokens_before
    ok = ann.post(f"/api/candidates/{cid}/reviews", json={"rubric_id": R.id, "grades": [grade]})
    assert ok.status_code == 201  # the same body without the name is stored
    page.close()


# --- 3. bad bearer tokens, tokens minting tokens ------------------------------------------
def test_should_answer_a_bad_or_expired_bearer_token_with_401_json_on_every_route(world):
    from tests.e2e.test_review_roles import _fill, _routes

    store, base = world["store"], world["base"]
    ann_id = accounts.account(store, "ann")["id"]
    expired = accounts.issue(store, ann_id, "api", by="test", ttl_s=-1)
    params = {"cid": world["cids"][0], "file_id": "1", "name": "ann", "token": "x", "tid": "1", "fmt": "json"}
    routes = [(m, p) for m, p, r in _routes(world["app"]) if not p.startswith("/static")]
    assert len(routes) > 40
    for token in ("not-a-token", expired):
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}) as c:
            for method, path in routes:
                r = c.request(method, _fill(path, params), follow_redirects=False)
                assert r.status_code == 401, (method, path, r.status_code)
                assert r.headers["www-authenticate"] == "Bearer" and "error" in r.json(), (method, path)
            # no redirect loop: / and /queue answer at once
            assert c.get("/", follow_redirects=True).status_code == 401
            assert c.get("/queue", follow_redirects=True).status_code == 401


def test_should_mint_tokens_only_from_a_browser_session_and_list_and_revoke_them(world):
    store, base = world["store"], world["base"]
    cleo = http_client(base, store, "cleo", api=True)  # signed in with a bearer token
    cleo_id = accounts.account(store, "cleo")["id"]
    before = accounts.tokens(store, cleo_id)
    r = cleo.post("/api/me/tokens")
    assert r.status_code == 403 and "browser session" in r.json()["error"]
    assert cleo.post("/me/tokens", data={}).status_code == 403
    assert accounts.tokens(store, cleo_id) == before  # nothing minted
    # the browser session does mint one (with its CSRF token), and the list shows it
    browser = http_client(base, store, "cleo")
    made = browser.post("/api/me/tokens", headers={"x-csrf-token": browser.signed.csrf})
    assert made.status_code == 201
    listed = cleo.get("/api/me/tokens").json()
    assert len(listed) == len(before) + 2 and all("token" not in t and "token_hash" not in t for t in listed)
    # revoked by id: at once, the new token is dead; another account cannot revoke it
    new_id = listed[-1]["id"]
    assert world["ann"].delete(f"/api/me/tokens/{new_id}").status_code == 404
    fresh = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {made.json()['token']}"})
    assert fresh.get("/api/me").status_code == 200
    assert cleo.delete(f"/api/me/tokens/{new_id}").json() == {"revoked": new_id}
    assert fresh.get("/api/me").status_code == 401
    fresh.close()
    cleo.close()
    browser.close()


# --- 4. security headers; the candidate's HTML never runs with the reviewer's session ------
def _check_headers(r: httpx.Response, where) -> None:
    csp = r.headers.get("content-security-policy", "")
    assert "frame-ancestors 'self'" in csp, where
    assert r.headers.get("x-content-type-options") == "nosniff", where
    assert r.headers.get("referrer-policy") == "same-origin", where
    assert "'unsafe-inline'" not in csp.split("script-src", 1)[-1].split(";")[0], where


def test_should_send_the_security_headers_on_every_route_to_everyone(world):
    from tests.e2e.test_review_roles import _fill, _routes

    base = world["base"]
    file_id = str(world["store"].shown_run(world["cids"][0])["files"][0]["id"])
    params = {"cid": world["cids"][1], "file_id": file_id, "name": "ann", "token": "x", "tid": "999", "fmt": "json"}
    routes = _routes(world["app"])
    anon = httpx.Client(base_url=base)
    seen = 0
    for who in (anon, world["ann"], world["boss"]):
        for method, path, _r in routes:
            if method != "GET":
                continue  # the writes' answers: below, one refused and one made
            r = who.get(_fill(path, params) if not path.startswith("/static") else path + "/style.css")
            _check_headers(r, (path, r.status_code))
            seen += 1
    for r in (
        anon.post("/api/candidates/x/reviews", json={}),  # 401
        world["ann"].post("/team/invite", data={}),  # 403
        httpx.get(base + "/queue", headers={"host": "evil.example"}),  # 400: the Host guard
        world["ann"].get("/files/99999"),  # 404
    ):
        _check_headers(r, (r.url, r.status_code))
    assert seen > 100
    anon.close()


def _hostile_file(world) -> dict:
    files = world["ann"].get(f"/api/candidates/{world['cids'][0]}").json()["files"]
    return next(f for f in files if f["name"] == "evidence.html")


def test_should_serve_the_candidates_html_as_a_sandboxed_download(world):
    ann = world["ann"]
    f = _hostile_file(world)
    r = ann.get(f["url"])
    assert r.status_code == 200 and "<script>" in r.text
    assert r.headers["content-disposition"].startswith("attachment")
    csp = [d.strip() for d in r.headers["content-security-policy"].split(";")]
    assert "sandbox" in csp and not any("allow-same-origin" in d or "allow-scripts" in d for d in csp)
    assert "default-src 'none'" in csp and r.headers["x-content-type-options"] == "nosniff"


@pytest.mark.browser
def test_should_never_run_the_candidates_html_with_the_reviewers_session_in_a_browser(world):
    from playwright.sync_api import sync_playwright

    from skycity_bench.browser.launch import BASE_ARGS
    from tests.review_reports import signed_in_page

    store, base = world["store"], world["base"]
    url = base + _hostile_file(world)["url"]
    dora_tokens = lambda: accounts.tokens(store, accounts.account(store, "dora")["id"])  # noqa: E731
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=BASE_ARGS)
        ctx, page = signed_in_page(browser, base, store, "dora", accept_downloads=True)
        before = dora_tokens()
        page.goto(base + "/queue")
        # framed by the app's own page: the file is a download, nothing runs in the frame
        page.evaluate("u => { const f = document.createElement('iframe'); f.src = u; document.body.append(f); }", url)
        page.wait_for_timeout(1500)
        assert "pwned" not in page.title()
        # opened directly: a download, never a page of the app's origin
        with page.expect_download() as dl:
            page.evaluate("u => { location.href = u; }", url)
        assert dl.value.url == url
        page.wait_for_timeout(500)
        assert dora_tokens() == before  # its script minted nothing
        ctx.close()
        browser.close()


# --- 5. no silent impersonation ----------------------------------------------------------
def _sign_in_by_link(base: str, link: str) -> httpx.Client:
    c = httpx.Client(base_url=base)
    r = c.post("/signin/" + link.rsplit("/signin/", 1)[1])
    assert r.status_code == 303, r.text
    return c


def test_should_refuse_to_reinvite_an_active_reviewer_and_audit_every_step(world):
    store, base, boss = world["store"], world["base"], world["boss"]
    h = {"x-csrf-token": boss.signed.csrf}
    r = boss.post("/api/admin/invitations", json={"name": "nina"}, headers=h)
    assert r.status_code == 201
    nina = _sign_in_by_link(base, r.json()["link"])
    assert nina.get("/api/me").json()["name"] == "nina"
    # the attack: a fresh link for an active reviewer, to sign in as them
    r = boss.post("/api/admin/invitations", json={"name": "nina"}, headers=h)
    assert r.status_code == 409 and "Revoke the account first" in r.json()["error"] and "link" not in r.json()
    r = boss.post("/team/invite", data=boss.signed.form(name="nina"))  # the form: back to the page, saying why
    team = boss.get(r.headers["location"]).text
    assert r.status_code == 303 and "Revoke the account first" in team and "/signin/" not in team
    assert nina.get("/api/me").status_code == 200  # nothing changed for her
    # revoked first (her session dies: she notices), then a new link may be issued
    assert boss.post("/team/disable", data=boss.signed.form(name="nina")).status_code == 303
    assert nina.get("/api/me").status_code == 401
    r = boss.post("/api/admin/invitations", json={"name": "nina"}, headers=h)
    assert r.status_code == 201
    nina = _sign_in_by_link(base, r.json()["link"])
    mine = [(x["actor"], x["action"]) for x in nina.get("/api/me/audit").json()]
    assert mine[:3] == [("boss", "reissue"), ("boss", "revoke"), ("boss", "invite")]
    assert "reissue" in nina.get("/me").text and "revoke" in nina.get("/me").text
    admin_view = [(x["action"], x["subject"]) for x in boss.get("/api/admin/audit").json()]
    assert {("invite", "nina"), ("revoke", "nina"), ("reissue", "nina")} <= set(admin_view)
    assert "nina" not in str(world["ann"].get("/api/me/audit").json())  # not shown to others
    # append-only: the database itself refuses to change or delete a row
    import sqlalchemy as sa

    for sql in ("UPDATE audit SET actor = 'nobody'", "DELETE FROM audit"):
        with pytest.raises(sa.exc.DBAPIError, match="append-only"), store.db.write() as con:
            con.execute(sa.text(sql))
    assert any(x["actor"] == "boss" for x in accounts.audit_rows(store))
    nina.close()


def test_should_audit_an_admins_override_and_show_it_to_the_reviewers_once_final(world):
    store, boss, ann, cid = world["store"], world["boss"], world["ann"], world["cids"][2]
    auto = next(i for i in R.items if not i.graded)
    h = {"x-csrf-token": boss.signed.csrf}
    assert (
        ann.post(
            f"/api/candidates/{cid}/reviews",
            json={"rubric_id": R.id, "grades": [{"item": i, "level": 75} for i in GRADED]},
        ).status_code
        == 201
    )
    body = {"rubric_id": R.id, "overrides": [{"item": auto.id, "points": 0, "reason": "the admin looked again"}]}
    assert boss.post(f"/api/candidates/{cid}/reviews", json=body, headers=h).status_code == 201
    rows = [x for x in boss.get("/api/admin/audit").json() if x["action"] == "override"]
    assert rows and rows[0]["actor"] == "boss" and rows[0]["candidate_id"] == cid
    assert "override" not in [x["action"] for x in ann.get("/api/me/audit").json()]  # not final: no trace
    r = boss.post(f"/api/candidates/{cid}/finalize", json={"force": True, "reason": "round closed"}, headers=h)
    assert r.status_code == 200
    seen = [x["action"] for x in ann.get("/api/me/audit").json()]
    assert "override" in seen and "finalize" in seen
    assert "override" not in [x["action"] for x in accounts.audit_for(store, "bob")]  # bob did not score it


# --- 6. before finalisation, only one's own work -----------------------------------------
def _view(c: httpx.Client, cid: str) -> dict[str, str]:
    """Everything a reviewer can read about the candidate and the round, normalised for what
    differs between two requests anyway (the page's signed opening time, the CSRF token)."""
    urls = ["/queue", "/api/me/queue", "/sheet", "/sheet.json", "/sheet.csv", "/sheet.md", "/api/sheet"]
    urls += [f"/c/{cid}", f"/api/candidates/{cid}", f"/api/candidates/{cid}/reviews", "/api/me/audit", "/me"]
    out = {}
    for u in urls:
        r = c.get(u)
        assert r.status_code == 200, (u, r.status_code)
        out[u] = re.sub(r'name="(opened|csrf)" value="[^"]*"', "", r.text)
    return out


def test_should_show_a_reviewer_no_trace_of_anothers_grade_or_override_before_final(world):
    store, base, boss, cid = world["store"], world["base"], world["boss"], world["cids"][0]
    rita, sam = http_client(base, store, "rita", api=True), http_client(base, store, "sam", api=True)
    auto = [i.id for i in R.items if not i.graded][:2]
    before = _view(rita, cid)
    grades = [{"item": i, "level": 25, "comment": "sam-was-here"} for i in GRADED]
    overrides = [{"item": auto[0], "points": 0, "reason": "sam disagrees with the bench"}]
    r = sam.post(f"/api/candidates/{cid}/reviews", json={"rubric_id": R.id, "grades": grades, "overrides": overrides})
    assert r.status_code == 201
    body = {"rubric_id": R.id, "overrides": [{"item": auto[1], "points": 0, "reason": "the admin too"}]}
    assert (
        boss.post(f"/api/candidates/{cid}/reviews", json=body, headers={"x-csrf-token": boss.signed.csrf}).status_code
        == 201
    )
    after = _view(rita, cid)
    for u in before:
        assert after[u] == before[u], f"{u} changed for rita when sam and the admin scored {cid}"
    # the check can fail: sam's own view does change, and the admin sees both
    assert "sam-was-here" in sam.get(f"/c/{cid}").text and "sam-was-here" in boss.get("/api/sheet").text
    rita.close()
    sam.close()


# --- 7. masking by rule: no size look-up, no carved-up sentences ---------------------------
SIZE, LINES = 48213, 977  # the candidate file's size and line count, as the attacker measures them


def _report_with_file_facts(run: Path) -> None:
    doc = json.loads((run / "report.json").read_text())
    doc["probes"]["packaging"] = {"name": "packaging", "data": {"file_bytes": SIZE, "lines": LINES, "page": {}}}
    ev = doc["items"]["packaging.single_file"]["evidence"]
    ev.update(file_bytes=SIZE, reason="no external references; inline scripts only", path=str(run / "demo.html"))
    doc["measurements"]["timeline"]["phases"] = [{"phase": "references intro", "start_s": 0}]
    (run / "report.json").write_text(json.dumps(doc))


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_should_keep_the_files_size_and_path_from_reviewers_and_bench_sentences_whole(kind, request, tmp_path):
    store = ReviewStore(_db(request, tmp_path, "mask", kind), seed=2)
    run = make_run(tmp_path / "runs", "references.html", seed="mask-refs")
    _report_with_file_facts(run)
    cid = store.import_run(run).candidate_id
    with serving(web_app(store)) as base:
        ann = http_client(base, store, "ann", api=True)
        for url in (f"/api/candidates/{cid}", f"/c/{cid}", "/api/sheet", "/sheet"):
            text = ann.get(url).text
            assert str(SIZE) not in text and str(LINES) not in text, url  # the size look-up finds nothing
            assert "file_bytes" not in text and str(tmp_path) not in text and "demo.html" not in text, url
            assert "references.html" not in text, url
        doc = ann.get(f"/api/candidates/{cid}").json()["report"]
        ev = doc["items"]["packaging.single_file"]["evidence"]
        assert ev["reason"] == "no external references; inline scripts only"  # the bench's sentence, whole
        assert doc["measurements"]["timeline"]["phases"][0]["phase"] == "‹hidden› intro"  # the candidate's text
        assert "packaging" in doc["probes"] and "file_bytes" not in doc["probes"]["packaging"]["data"]
        ann.close()
    store.close()
