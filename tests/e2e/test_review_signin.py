"""Signing in by invitation in a real Chromium, end to end over HTTP: the operator creates
the admin with the CLI (a one-time link); the admin signs in by it and invites two reviewers
from the Team page; reviewer A signs in by her link, scores with the keyboard (j, digits, a
typed comment, n saves and opens the next); reviewer B signs in by his and cannot see A's
scores by any route: every GET route of the app (pages in the browser, the API through the
same signed-in browser context), while the admin does see them there."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi.routing import APIRoute
from starlette.routing import Mount

from skycity_bench.browser.launch import BASE_ARGS
from skycity_bench.inputs.rubric import load_rubric
from skycity_bench.review import create_app
from skycity_bench.review.auth import Auth
from skycity_bench.store.review_store import ReviewStore

pytestmark = pytest.mark.browser

R = load_rubric()
GRADED = [i.id for i in R.items if i.graded]
SHOWN = [lv.percent for lv in R.sorted_levels()]  # key 1 is the first level shown
NOTE = "annika-kbd-note-4e1b"  # A's comment: the marker B must never see
SKYCITY = str(Path(sys.executable).parent / "skycity-bench")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    from tests.review_reports import make_run, serving

    tmp = tmp_path_factory.mktemp("signin")
    db = tmp / "reviews.sqlite"
    store = ReviewStore(db, seed=4)
    cids = [
        store.import_run(make_run(tmp / "runs", f"signin-model-{k}.html", seed=f"signin-{k}")).candidate_id
        for k in range(2)
    ]
    app = create_app(store)
    with serving(app) as base:
        yield {"store": store, "app": app, "base": base, "db": db, "cids": cids}
    store.close()


def _sign_in_by_link(browser, link: str):
    ctx = browser.new_context(viewport={"width": 1366, "height": 800})
    page = ctx.new_page()
    page.goto(link)
    page.click("#signin")
    page.wait_for_url("**/queue")
    return ctx, page


def _invite(admin_page, base: str, name: str) -> str:
    admin_page.goto(base + "/team")
    admin_page.fill("#invite input[name=name]", name)
    admin_page.click("#invite-button")
    return admin_page.inner_text("#invite-link").strip()


def _get_routes(app, params):
    """Every GET route of the app with its path filled (several values per parameter)."""
    urls = []
    for path, route in Auth.iter_routes(app):
        if isinstance(route, Mount):
            urls.append(path + "/style.css")
            continue
        if not (isinstance(route, APIRoute) or hasattr(route, "methods")) or "GET" not in route.methods:
            continue
        names = re.findall(r"\{([^}:]+)", path)
        combos = [{}]
        for n in names:
            assert n in params, f"{path}: no sample value for {{{n}}}: add one to this test"
            combos = [{**c, n: v} for c in combos for v in params[n]]
        for c in combos:
            urls.append(re.sub(r"\{([^}:]+)(:[^}]*)?\}", lambda m: c[m.group(1)], path))
    return urls


def test_should_sign_in_by_invitation_score_by_keyboard_and_keep_a_from_b(served):
    from playwright.sync_api import sync_playwright

    base, store, cids = served["base"], served["store"], served["cids"]
    out = subprocess.run(
        [SKYCITY, "review", "admin", "create", "--db", str(served["db"]), "--url", base, "boss"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    admin_link = out.stdout.strip().splitlines()[-1]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=BASE_ARGS)
        boss_ctx, boss = _sign_in_by_link(browser, admin_link)
        assert boss.locator("#nav-team").count() == 1
        link_a, link_b = _invite(boss, base, "annika"), _invite(boss, base, "bertil")
        assert re.fullmatch(re.escape(base) + r"/signin/[A-Za-z0-9_-]{40,}", link_a) and link_a != link_b

        # reviewer A: the link, then the keyboard
        a_ctx, a = _sign_in_by_link(browser, link_a)
        assert a.locator("#nav-team").count() == 0
        first = store.order_for(store.reviewer("annika")["seat"])[0]
        a.click(f"a.cand:text('{first}')")
        a.wait_for_url(f"**/c/{first}")
        a.wait_for_load_state("load")
        a.keyboard.press("j")
        a.keyboard.press("2")
        a.keyboard.press("j")
        a.keyboard.press("4")
        a.focus(f"textarea[name='comment:{GRADED[1]}']")
        a.keyboard.type(NOTE)
        a.evaluate("document.activeElement.blur()")
        a.keyboard.press("n")  # save & next
        a.wait_for_url(re.compile(r".*/c/c-[0-9a-f]{12}\?saved=2.*"))
        mine = {r.item_id: (r.share, r.comment) for r in store.reviews(first, "annika")}
        assert mine == {GRADED[0]: (R.level(SHOWN[1]).share, ""), GRADED[1]: (R.level(SHOWN[3]).share, NOTE)}
        a.goto(f"{base}/c/{first}")  # A sees her own scores
        assert a.input_value(f"textarea[name='comment:{GRADED[1]}']") == NOTE

        # reviewer B: every GET route, pages in the browser and the API in the same context
        b_ctx, b = _sign_in_by_link(browser, link_b)
        files = [str(f["id"]) for c in cids for f in store.shown_run(c)["files"]][:6]
        params = {
            "cid": cids,
            "file_id": files,
            "name": ["annika", "bertil"],
            "token": ["not-a-token"],
            "fmt": ["md", "csv", "json"],
            "tid": ["1"],
        }
        urls = _get_routes(served["app"], params)
        assert any(u.startswith("/api/") for u in urls) and f"/c/{first}" in urls and "/sheet" in urls
        seen_by_b, refused = [], []
        for u in urls:
            r = b.request.get(base + u)
            seen_by_b.append(
                (
                    u,
                    r.text()
                    if "text" in r.headers.get("content-type", "") or "json" in r.headers.get("content-type", "")
                    else "",
                )
            )
            if r.status in (401, 403):
                refused.append(u)
            if "text/html" in r.headers.get("content-type", ""):
                b.goto(base + u)
                seen_by_b.append((u + " (rendered)", b.content()))
                if u.startswith("/c/"):
                    assert b.locator("input[type=radio]:checked").count() == 0, u
        for u, text in seen_by_b:
            assert NOTE not in text and "annika" not in text, f"bertil sees annika's scores at {u}"
        assert "/api/reviewers/annika/queue" in refused and "/team" in refused
        assert b.request.get(f"{base}/api/candidates/{first}/reviews?reviewer=annika").status == 403
        assert json.loads(b.request.get(f"{base}/api/candidates/{first}/reviews").text()) == []

        # B signs out with the header's button: the session ends, the queue asks for a sign-in again
        b.goto(base + "/queue")
        b.click("form[action='/signout'] button")
        b.wait_for_url(base + "/")
        b.goto(base + "/queue")
        assert b.url == base + "/" and b.locator("#link-error, a.cand").count() == 0

        # the admin sees them (the marker can be found where it is allowed)
        assert NOTE in boss.request.get(f"{base}/sheet.json").text()
        assert NOTE in boss.request.get(f"{base}/api/candidates/{first}/reviews?reviewer=annika").text()
        for ctx in (boss_ctx, a_ctx, b_ctx):
            ctx.close()
        browser.close()
