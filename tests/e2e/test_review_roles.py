"""Every route of the review app under every role: anonymous, reviewer A (ann), reviewer B
(bob) and the admin (boss), on SQLite and PostgreSQL.

The walk takes the routes from the app itself (app.routes: every page and every route of the
OpenAPI schema, including the ones other modules register), fills their path parameters with
real values, and asserts per role what comes back:
- a route without a role rule fails the first test (and is refused by the app at run time);
- anonymous: only the sign-in pages answer; everything else is 401 (/api/) or a redirect to
  the sign-in page, and no answer names a candidate or shows a score;
- a reviewer: admin routes 403, and refused writes change nothing; no answer shows another
  reviewer's scores of a sheet that is not final (their comments are the markers, unique
  strings that the admin does see, so the check can fail);
- the admin: no route refuses them.
Then the edges: CSRF, the body's `reviewer`, unknown and forged cookies, expired and used
links, disabled accounts, the cookie's flags, finalise / un-finalise / unblind and their audit.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fastapi.routing import APIRoute
from starlette.routing import Mount

from skycity_bench.inputs.rubric import load_rubric
from skycity_bench.review import create_app
from skycity_bench.review.auth import SESSION_COOKIE, Auth
from skycity_bench.store import accounts
from skycity_bench.store.review_store import ReviewStore
from tests.review_reports import client, make_run, sign_in

R = load_rubric()
GRADED = [i.id for i in R.items if i.graded]
ANN_OPEN = "ann-open-comment-7f3a"  # ann's comment on candidate a (open): bob must never see it
BOB_OPEN = "bob-open-comment-91c2"  # bob's on a: ann must never see it
ANN_FINAL = "ann-final-comment-5d0e"  # ann's on b, finalised: bob sees it (after finalisation)
LABELS = ("roles-model-alpha", "roles-model-beta")
SKYCITY = str(Path(sys.executable).parent / "skycity-bench")
TOKEN_MINTING = ("/me/tokens", "/api/me/tokens")  # a signed-in browser session only


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def world(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("roles")
    if request.param == "sqlite":
        db = tmp / "reviews.sqlite"
    else:
        pg = request.getfixturevalue("postgres")
        db = pg.url(pg.new_db())
    store = ReviewStore(db, seed=5)
    a = store.import_run(make_run(tmp / "runs", LABELS[0] + ".html", seed="roles-a")).candidate_id
    b = store.import_run(make_run(tmp / "runs", LABELS[1] + ".html", seed="roles-b")).candidate_id
    app = create_app(store)
    if request.param == "postgres":  # as `skycity-bench review` serves a PostgreSQL store: queue progress too
        from skycity_bench.queue.progress_page import install

        install(app, store)
    ann, bob = client(app, store, "ann", api=True), client(app, store, "bob", api=True)
    boss = client(app, store, "boss", "admin")
    for c, note, cid in ((ann, ANN_OPEN, a), (bob, BOB_OPEN, a), (ann, ANN_FINAL, b), (bob, "bob-on-b", b)):
        body = {"rubric_id": R.id, "grades": [{"item": i, "level": 75, "comment": note} for i in GRADED]}
        assert c.post(f"/api/candidates/{cid}/reviews", json=body).status_code == 201
    r = boss.post(f"/api/candidates/{b}/finalize", json={}, headers={"x-csrf-token": boss.signed.csrf})
    assert r.status_code == 200 and r.json()["changed"] is True
    file_id = store.shown_run(a)["files"][0]["id"]
    spare = accounts.issue(store, accounts.account(store, "ann")["id"], "api", by="test", ttl_s=3600)
    spare_id = accounts.tokens(store, accounts.account(store, "ann")["id"])[-1]["id"]
    assert spare
    yield {
        "store": store,
        "app": app,
        "a": a,
        "b": b,
        "ann": ann,
        "bob": bob,
        "boss": boss,
        "db": db,
        "params": {
            "cid": a,
            "file_id": str(file_id),
            "name": "ann",
            "token": "not-a-real-token",
            "tid": str(spare_id),
            "fmt": "json",
            "format": "json",
        },
    }
    store.close()


def _routes(app):
    """(method, path template, route) for every route the app serves (routers included)."""
    out = []
    for path, route in Auth.iter_routes(app):
        if isinstance(route, Mount):
            out.append(("GET", path + "/style.css", route))
        elif isinstance(route, APIRoute) or hasattr(route, "methods"):
            for m in sorted(route.methods - {"HEAD"}):
                out.append((m, path, route))
        else:
            raise AssertionError(f"{path}: a route of a kind the role test does not know ({type(route).__name__})")
    return out


def _fill(path: str, params: dict) -> str:
    def one(m):
        name = m.group(1).split(":")[0]
        assert name in params, f"{path}: no sample value for path parameter {{{name}}}: add one to the role test"
        return params[name]

    return re.sub(r"\{([^}]+)\}", one, path)


def _is_api(path: str) -> bool:
    return path.startswith("/api/") or path == "/openapi.json"


def _send(c, method: str, url: str):
    if method == "GET":
        return c.get(url)
    if _is_api(url):
        return c.request(method, url, json={}, headers={"x-csrf-token": c.signed.csrf if c.signed else ""})
    return c.request(method, url, data={"csrf": c.signed.csrf if c.signed else ""})


def test_should_declare_a_role_rule_on_every_route(world):
    app, auth = world["app"], world["app"].state.auth
    missing = [p for p, r in Auth.iter_routes(app) if auth.rule_of(r) is None]
    assert missing == [], f"routes without a role rule (review/auth.py): {missing}"
    if str(world["db"]).startswith("postgresql"):
        assert {"/progress", "/api/queue/status"} <= {p for p, _ in Auth.iter_routes(app)}
    rules = {p: auth.rule_of(r) for p, r in Auth.iter_routes(app)}
    assert rules["/admin/leaderboard"] == rules["/api/admin/leaderboard"] == "admin"  # system names: admins only
    # every operation of the OpenAPI schema is one of the routes walked below
    spec = app.openapi()
    walked = {(m, p) for m, p, _ in _routes(app)}
    for path, ops in spec["paths"].items():
        for m in ops:
            assert (m.upper(), path) in walked, (m, path)
    # and a route added without one is found, and refused when called (the check can fail)
    from fastapi.testclient import TestClient

    extra = create_app(world["store"])
    extra.get("/api/forgot-its-rule")(lambda: {"secret": "x"})
    route = next(r for p, r in Auth.iter_routes(extra) if p == "/api/forgot-its-rule")
    assert extra.state.auth.rule_of(route) is None
    r = TestClient(extra, base_url="http://127.0.0.1").get("/api/forgot-its-rule")
    assert r.status_code == 403 and "declares no role rule" in r.json()["error"]


def test_should_show_anonymous_visitors_nothing_but_the_sign_in_page(world):
    app, store, rule_of = world["app"], world["store"], world["app"].state.auth.rule_of
    anon = client(app, store)
    before = len(accounts.accounts(store)), len(store.export_reviews())
    for method, path, route in _routes(app):
        url = _fill(path, world["params"])
        r = _send(anon, method, url)
        rule = rule_of(route)
        text = r.text
        if rule == "public":
            assert r.status_code < 400 or r.status_code == 410, (method, url, r.status_code)
        elif _is_api(url):
            assert r.status_code == 401 and r.headers.get("www-authenticate") == "Bearer", (method, url, r.status_code)
        else:
            assert r.status_code == 303 and r.headers["location"] == "/", (method, url, r.status_code)
        for secret in (world["a"], world["b"], ANN_OPEN, BOB_OPEN, ANN_FINAL, *LABELS):
            assert secret not in text, (method, url, secret)
    assert (len(accounts.accounts(store)), len(store.export_reviews())) == before


@pytest.mark.parametrize("who,other_open", [("ann", BOB_OPEN), ("bob", ANN_OPEN)])
def test_should_let_a_reviewer_see_only_their_own_scores_until_final_and_no_admin_route(world, who, other_open):
    app, store, rule_of = world["app"], world["store"], world["app"].state.auth.rule_of
    me = world[who]
    own_open = ANN_OPEN if who == "ann" else BOB_OPEN
    before = (
        len(store.export_reviews()),
        len(accounts.audit_rows(store)),
        len(accounts.accounts(store)),
        [store.is_finalized(c) for c in (world["a"], world["b"])],
    )
    seen_own = seen_final = False
    for method, path, route in _routes(app):
        url = _fill(path, world["params"])
        r = _send(me, method, url)
        rule = rule_of(route)
        if rule == "admin":
            assert r.status_code == 403, (who, method, url, r.status_code)
        else:
            assert (
                r.status_code not in (401, 403)
                or (path == "/api/reviewers/{name}/queue" and who != "ann")
                or (method == "POST" and path in TOKEN_MINTING)  # a bearer token mints no token
            ), (
                who,
                method,
                url,
                r.status_code,
            )
        assert other_open not in r.text, f"{who} sees another reviewer's open scores at {method} {url}"
        for label in LABELS:
            assert label not in r.text, (who, method, url, label)
        seen_own |= own_open in r.text
        seen_final |= ANN_FINAL in r.text
    assert seen_own and seen_final  # their own scores, and everyone's once final, do show
    after = (
        len(store.export_reviews()),
        len(accounts.audit_rows(store)),
        len(accounts.accounts(store)),
        [store.is_finalized(c) for c in (world["a"], world["b"])],
    )
    assert after == before  # refused (and empty) writes changed nothing
    # the routes that take a name or filter by reviewer: their own only
    other = "bob" if who == "ann" else "ann"
    assert me.get(f"/api/reviewers/{other}/queue").status_code == 403
    assert me.get(f"/api/candidates/{world['a']}/reviews?reviewer={other}").status_code == 403
    assert me.get("/api/me/queue").json() == me.get(f"/api/reviewers/{who}/queue").json()
    mine = me.get(f"/api/candidates/{world['a']}/reviews").json()
    assert mine and {r["reviewer"] for r in mine} == {who}


def test_should_refuse_the_admin_nothing_and_show_everything(world):
    app, boss = world["app"], world["boss"]
    seen, forms = "", 0
    for method, path, _route in _routes(app):
        if method != "GET":
            continue  # the admin's writes are checked one by one below
        url = _fill(path, world["params"])
        r = boss.get(url)
        assert r.status_code not in (401, 403), (method, url, r.status_code)
        if "unblind" not in url:
            for label in LABELS:
                assert label not in r.text, (url, label)
        # every POST form carries the session's CSRF token in the page itself (no script needed)
        for form in re.findall(r"<form\b[^>]*method=\"post\"[^>]*>.*?</form>", r.text, flags=re.S | re.I):
            assert f'name="csrf" value="{boss.signed.csrf}"' in form, (url, form[:200])
            forms += 1
        seen += r.text
    assert ANN_OPEN in seen and BOB_OPEN in seen and forms > 10


def test_should_derive_the_reviewer_from_the_token_never_the_body(world):
    store, ann, a = world["store"], world["ann"], world["a"]
    before = len(store.export_reviews())
    for field in ("reviewer", "by"):
        body = {field: "bob", "rubric_id": R.id, "grades": [{"item": GRADED[0], "level": 25}]}
        r = ann.post(f"/api/candidates/{a}/reviews", json=body)
        assert r.status_code == 422 and "signed-in account" in r.json()["error"]
    assert len(store.export_reviews()) == before
    # a bearer token that is not valid is a 401, not anonymous
    r = client(world["app"], store).get("/api/candidates", headers={"Authorization": "Bearer nope"})
    assert r.status_code == 401


def test_should_refuse_a_form_or_api_write_without_this_sessions_csrf_token(world):
    app, store, a = world["app"], world["store"], world["a"]
    carl = client(app, store, "carl")
    other = sign_in(store, "dora")
    form = {"candidate": a, "rubric_id": R.id, f"grade:{GRADED[0]}": "50"}
    before = len(store.export_reviews())
    assert carl.post(f"/c/{a}", data=form).status_code == 403  # none
    assert carl.post(f"/c/{a}", data={**form, "csrf": other.csrf}).status_code == 403  # another session's
    r = carl.post(
        f"/api/candidates/{a}/reviews", json={"rubric_id": R.id, "grades": [{"item": GRADED[0], "level": 50}]}
    )
    assert r.status_code == 403  # cookie, no header
    assert len(store.export_reviews()) == before
    r = carl.post(f"/c/{a}", data={**form, "csrf": carl.signed.csrf})
    assert r.status_code == 303 and len(store.export_reviews()) == before + 1


def test_should_create_nothing_for_unknown_or_forged_cookies(world):
    app, store = world["app"], world["store"]
    before = accounts.accounts(store)
    forged = Auth(store).sessions.dumps({"s": "no-such-session", "c": "x"})  # signed, but no such session
    tampered = world["ann"].signed.cookie[:-3] + "AAA"
    for cookies in (
        {"skycity_reviewer": "mallory"},
        {SESSION_COOKIE: "garbage"},
        {SESSION_COOKIE: forged},
        {SESSION_COOKIE: tampered},
    ):
        c = client(app, store)
        c.cookies.update(cookies)
        assert c.get("/queue").status_code == 303
        assert c.get("/api/candidates").status_code == 401
    assert accounts.accounts(store) == before


def test_should_sign_in_once_by_link_with_a_safe_cookie_and_expire(world, tmp_path):
    app, store, boss = world["app"], world["store"], world["boss"]
    r = boss.post("/api/admin/invitations", json={"name": "erin"}, headers={"x-csrf-token": boss.signed.csrf})
    assert r.status_code == 201
    link = r.json()["link"].split("127.0.0.1", 1)[1]
    assert r.json()["link"].split("/signin/")[1] not in str(accounts.invitations(store))  # stored hashed only
    visitor = client(app, store)
    assert visitor.get(link).status_code == 200 and "erin" in visitor.get(link).text  # GET uses nothing up
    # a foreign page posting the link (login CSRF) is refused and uses nothing up
    assert client(app, store).post(link, headers={"origin": "http://evil.example"}).status_code == 403
    signed = visitor.post(link, headers={"origin": "http://127.0.0.1"})
    assert signed.status_code == 303 and signed.headers["location"] == "/queue"
    cookie = signed.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=lax" in cookie and "secure" not in cookie
    assert visitor.get("/api/me").json() == {"name": "erin", "role": "reviewer"}
    used = client(app, store).post(link)  # once only: back to the link's page, which says it is dead
    assert used.status_code == 303 and used.headers["location"] == link and visitor.get(link).status_code == 410
    # over https (a TLS proxy in front), the cookie is Secure (erin is active: revoked first,
    # then a link is re-issued; a new link for an active account is refused)
    assert boss.post("/team/disable", data={"csrf": boss.signed.csrf, "name": "erin"}).status_code == 303
    r = boss.post("/api/admin/invitations", json={"name": "erin"}, headers={"x-csrf-token": boss.signed.csrf})
    https = client(app, store, base_url="https://127.0.0.1")
    assert (
        "secure"
        in https.post(link.split("/signin/")[0] + "/signin/" + r.json()["link"].split("/signin/")[1])
        .headers["set-cookie"]
        .lower()
    )
    # an expired link and an expired session sign no one in
    stale = accounts.issue(store, accounts.account(store, "erin")["id"], "invite", by="test", ttl_s=-1)
    r = client(app, store).post(f"/signin/{stale}")
    assert r.status_code == 303 and client(app, store).get(r.headers["location"]).status_code == 410
    app.state.auth.max_age = -1
    try:
        assert visitor.get("/api/me").status_code == 401
    finally:
        app.state.auth.max_age = Auth(store).max_age


def test_should_end_a_session_on_the_server_when_signing_out(world):
    app, store = world["app"], world["store"]
    gus = client(app, store, "gus")
    copy = client(app, store)
    copy.cookies.update(gus.signed.cookies)  # the same cookie, copied elsewhere
    assert copy.get("/api/me").status_code == 200
    assert gus.post("/signout", data={"csrf": gus.signed.csrf}).status_code == 303
    assert copy.get("/api/me").status_code == 401 and copy.get("/queue").status_code == 303


def test_should_stop_a_disabled_accounts_session_and_token_at_once(world):
    app, store, boss = world["app"], world["store"], world["boss"]
    fred = client(app, store, "fred", api=True)
    assert fred.get("/api/me").status_code == 200
    assert boss.post("/team/disable", data={"csrf": boss.signed.csrf, "name": "fred"}).status_code == 303
    assert fred.get("/api/me").status_code == 401
    fred.headers.pop("Authorization")
    assert fred.get("/queue").status_code == 303


def test_should_finalise_and_unfinalise_as_admin_only_with_audit_rows(world, tmp_path):
    store, boss, ann, a = world["store"], world["boss"], world["ann"], world["a"]
    h = {"x-csrf-token": boss.signed.csrf}
    assert ann.post(f"/api/candidates/{a}/finalize", json={}).status_code == 403
    assert not store.is_finalized(a)
    # a candidate nobody has scored: not without force, and force needs a reason
    c = store.import_run(make_run(tmp_path / "runs", "roles-model-gamma.html", seed="roles-c")).candidate_id
    r = boss.post(f"/api/candidates/{c}/finalize", json={}, headers=h)
    assert r.status_code == 409 and "missing" in r.json()["error"]
    assert boss.post(f"/api/candidates/{c}/finalize", json={"force": True}, headers=h).status_code == 422
    r = boss.post(f"/api/candidates/{c}/finalize", json={"force": True, "reason": "left out of the round"}, headers=h)
    assert r.status_code == 200 and store.is_finalized(c)
    # a is complete (ann and bob scored every item)
    r = boss.post(f"/api/candidates/{a}/finalize", json={}, headers=h)
    assert r.status_code == 200 and store.is_finalized(a)
    # final: bob now sees ann's scores of a
    assert ANN_OPEN in world["bob"].get("/sheet.json").text
    assert ann.post(f"/api/candidates/{a}/unfinalize", json={"reason": "x"}).status_code == 403
    assert boss.post(f"/api/candidates/{a}/unfinalize", json={"reason": " "}, headers=h).status_code == 422
    r = boss.post(
        f"/api/candidates/{a}/unfinalize", json={"reason": "a score was entered on the wrong item"}, headers=h
    )
    assert r.status_code == 200 and not store.is_finalized(a)
    assert ANN_OPEN not in world["bob"].get("/sheet.json").text  # blind again
    rows = [(x["actor"], x["action"], x["candidate_id"]) for x in accounts.audit_rows(store)]
    assert ("boss", "finalize", a) in rows and ("boss", "unfinalize", a) in rows and ("boss", "finalize", c) in rows
    un = next(x for x in accounts.audit_rows(store) if x["action"] == "unfinalize")
    assert "wrong item" in un["detail"]
    # unblinding: admin only, audited, and it does name the candidates
    assert ann.get("/api/admin/unblinded-sheet?format=csv").status_code == 403
    r = boss.get("/api/admin/unblinded-sheet?format=csv")
    assert r.status_code == 200 and all(lbl in r.text for lbl in LABELS)
    assert accounts.audit_rows(store)[0]["action"] == "unblind"


def test_should_refuse_to_serve_beyond_loopback_without_an_admin(tmp_path):
    db = tmp_path / "empty.sqlite"
    r = subprocess.run(
        [SKYCITY, "review", "--db", str(db), "--host", "0.0.0.0", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and "no admin" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    out = subprocess.run(
        [SKYCITY, "review", "admin", "create", "--db", str(db), "--url", "https://review.example", "ops"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    link = out.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"https://review\.example/signin/[A-Za-z0-9_-]{40,}", link)
    store = ReviewStore(db)
    assert accounts.peek(store, link.rsplit("/", 1)[1])["role"] == "admin"
    assert link.rsplit("/", 1)[1] not in db.read_bytes().decode("latin-1")  # only its hash is stored
    # with an admin, it serves beyond loopback
    p = subprocess.Popen(
        [SKYCITY, "review", "--db", str(db), "--host", "0.0.0.0", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = [p.stdout.readline() for _ in range(2)]
        assert "in clear unless a TLS reverse proxy" in lines[0] and "review app on" in lines[1], lines + [
            p.stderr.read() if p.poll() is not None else ""
        ]
        time.sleep(0.5)
        assert p.poll() is None
    finally:
        p.terminate()
        p.wait(timeout=30)
    store.close()


def test_should_audit_the_operators_finalise_and_unblind_from_the_cli(tmp_path):
    from typer.testing import CliRunner

    from skycity_bench.cli import app as cli_app

    db = tmp_path / "cli.sqlite"
    store = ReviewStore(db, seed=1)
    cid = store.import_run(make_run(tmp_path / "runs", "roles-cli-model.html", seed="roles-cli")).candidate_id
    out = CliRunner().invoke(cli_app, ["sheet", "--db", str(db), "--finalize", cid, "--by", "lead", "--unblind"])
    assert out.exit_code == 0, out.output
    assert store.is_finalized(cid) and "roles-cli-model" in out.stdout
    rows = {(r["actor"], r["action"]) for r in accounts.audit_rows(store)}
    assert ("lead (CLI)", "finalize") in rows and ("operator (CLI)", "unblind") in rows
    store.close()


def test_should_make_and_revoke_a_personal_api_token_on_the_accounts_page(world):
    app, store = world["app"], world["store"]
    hal = client(app, store, "hal")
    made = hal.post("/me/tokens", data={"csrf": hal.signed.csrf})
    assert made.status_code == 303 and made.headers["location"] == "/me#new-token"  # POST-redirect-GET
    page = hal.get("/me")
    token = re.search(r'id="new-token">([^<]+)<', page.text).group(1)
    assert token not in hal.get("/me").text  # shown once
    api = client(app, store)
    api.headers["Authorization"] = f"Bearer {token}"
    assert api.get("/api/me").json() == {"name": "hal", "role": "reviewer"}
    tid = accounts.tokens(store, accounts.account(store, "hal")["id"])[-1]["id"]
    assert client(app, store, "ivy").post(f"/me/tokens/{tid}/revoke", data={"csrf": ""}).status_code == 403
    other = client(app, store, "ivy")  # another account cannot revoke it
    other.post(f"/me/tokens/{tid}/revoke", data={"csrf": other.signed.csrf})
    assert api.get("/api/me").status_code == 200
    assert hal.post(f"/me/tokens/{tid}/revoke", data={"csrf": hal.signed.csrf}).status_code == 303
    assert api.get("/api/me").status_code == 401
