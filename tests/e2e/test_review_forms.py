"""Every form of the review app answers its POST with a redirect (POST-redirect-GET), over
real HTTP against the app as `skycity-bench review` serves it: done or refused, a POST never
answers 200 with a page, so a reload never posts a form again. A refusal goes back to the
form's page, which shows why once (a reload shows it no more) and nothing was stored.

Each form has its own test (FORMS: the posts it is tried with, what it did and refused), and
the app's forms are read from its routes: a new form without its posts here fails the last
test."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Optional

import httpx
import pytest

from skycity_bench.commands.review import web_app
from skycity_bench.inputs.rubric import load_rubric
from skycity_bench.review.auth import Auth
from skycity_bench.store import accounts
from skycity_bench.store.anchors import Calibration
from skycity_bench.store.review_store import ReviewStore
from tests.review_reports import http_client, make_run, serving

R = load_rubric()
GRADED = [i.id for i in R.items if i.graded]


@dataclass
class Post:
    """One POST a form makes: who sends what, and what the page it lands on must show."""

    client: Any
    url: str
    data: Optional[dict[str, str]]
    lands: str  # the redirect's target starts with this
    error: str = ""  # a refusal: the landing page shows it (once unless `every_time`)
    every_time: bool = False  # the page states it (a dead sign-in link), it is no one-read message
    landing_status: int = 200
    unchanged: Optional[Callable[[], Any]] = None  # a refusal stored nothing: same before and after


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("forms")
    store = ReviewStore(tmp / "reviews.sqlite", seed=5)
    cids = [
        store.import_run(make_run(tmp / "runs", f"forms-{k}.html", seed=f"forms-{k}")).candidate_id for k in range(4)
    ]
    app = web_app(store)
    with serving(app) as base:
        boss = http_client(base, store, "boss", "admin")
        ann = http_client(base, store, "ann")
        yield {"store": store, "app": app, "base": base, "cids": cids, "boss": boss, "ann": ann}
        boss.close()
        ann.close()


def _reviews(w) -> Callable[[], int]:
    return lambda: len(w["store"].export_reviews())


def _signin(w) -> list[Post]:
    store = w["store"]
    acc = accounts.create_account(store, "sid", "reviewer", by="boss")
    token = accounts.issue(store, acc["id"], "invite", by="boss", ttl_s=3600)
    visitor = httpx.Client(base_url=w["base"])
    dead = "This link is not valid"
    return [
        Post(visitor, f"/signin/{token}", None, "/queue"),
        Post(visitor, f"/signin/{token}", None, f"/signin/{token}", dead, every_time=True, landing_status=410),
    ]


def _signout(w) -> list[Post]:
    sol = http_client(w["base"], w["store"], "sol")
    return [Post(sol, "/signout", sol.signed.form(), "/")]


def _new_token(w) -> list[Post]:
    ann = w["ann"]
    return [Post(ann, "/me/tokens", ann.signed.form(), "/me")]


def _revoke_token(w) -> list[Post]:
    ann = w["ann"]
    tid = accounts.tokens(w["store"], accounts.account(w["store"], "ann")["id"])[-1]["id"]
    return [Post(ann, f"/me/tokens/{tid}/revoke", ann.signed.form(), "/me")]


def _candidate(w) -> list[Post]:
    ann, (a, b) = w["ann"], w["cids"][:2]
    form = ann.signed.form(candidate=a, rubric_id=R.id, **{f"grade:{GRADED[0]}": "75"})
    same = _reviews(w)
    return [
        Post(ann, f"/c/{a}", form, f"/c/{a}?saved=1&for={a}"),
        Post(ann, f"/c/{a}", {**form, "then": "next"}, "/"),  # nothing new: on to the next
        Post(ann, f"/c/{a}", {**form, f"grade:{GRADED[1]}": "37"}, f"/c/{a}", "nothing was stored", unchanged=same),
        Post(ann, f"/c/{a}", {**form, "rubric_id": "not-this-one"}, f"/c/{a}", "nothing was stored", unchanged=same),
        Post(ann, f"/c/{a}", {**form, "candidate": b}, f"/c/{a}", "does not match", unchanged=same),
    ]


def _invite(w) -> list[Post]:
    boss = w["boss"]
    n = lambda: len(accounts.accounts(w["store"]))  # noqa: E731
    return [
        Post(boss, "/team/invite", boss.signed.form(name="ines"), "/team"),
        Post(boss, "/team/invite", boss.signed.form(name="ann"), "/team", "Revoke the account first", unchanged=n),
        Post(boss, "/team/invite", boss.signed.form(name=""), "/team", "name", unchanged=n),
    ]


def _disable(w) -> list[Post]:
    boss = w["boss"]
    accounts.create_account(w["store"], "dora", "reviewer", by="boss")
    live = lambda: [a["disabled_at"] for a in accounts.accounts(w["store"])]  # noqa: E731
    return [
        Post(boss, "/team/disable", boss.signed.form(name="boss"), "/team", "your own account", unchanged=live),
        Post(boss, "/team/disable", boss.signed.form(name="nobody"), "/team", "no such account", unchanged=live),
        Post(boss, "/team/disable", boss.signed.form(name="dora"), "/team"),
    ]


def _finalize(w) -> list[Post]:
    boss, c = w["boss"], w["cids"][2]
    final = w["store"].finalized_ids
    return [
        Post(boss, f"/team/finalize/{c}", boss.signed.form(), "/team", "still missing", unchanged=final),
        Post(boss, f"/team/finalize/{c}", boss.signed.form(force="1"), "/team", "needs a reason", unchanged=final),
        Post(boss, "/team/finalize/c-000000000000", boss.signed.form(), "/team", "no such candidate", unchanged=final),
        Post(boss, f"/team/finalize/{c}", boss.signed.form(force="1", reason="closing the round"), "/team"),
    ]


def _unfinalize(w) -> list[Post]:
    boss, c = w["boss"], w["cids"][3]
    accounts.finalize(w["store"], c, by="boss", reason="for the test")
    final = w["store"].finalized_ids
    return [
        Post(boss, f"/team/unfinalize/{c}", boss.signed.form(), "/team", "needs a reason", unchanged=final),
        Post(boss, f"/team/unfinalize/{c}", boss.signed.form(reason="one more reviewer"), "/team"),
    ]


def _anchors(w) -> Callable[[], Any]:
    return lambda: [a.__dict__ for a in Calibration(w["store"]).anchors()]


def _anchor_sheet(w) -> list[Post]:
    boss, (a, b) = w["boss"], w["cids"][:2]
    for name in ("ann", "bob"):  # b: agreed by two reviewers and finalised
        w["store"].sign_in(name)
        w["store"].submit(b, name, R.id, [{"item": i, "level": 75} for i in GRADED])
    accounts.finalize(w["store"], b, by="boss", reason="agreed")
    url, same = "/admin/calibration/anchors/sheet", _anchors(w)
    return [
        Post(boss, url, boss.signed.form(candidate_id=a), "/admin/calibration", "not finalised", unchanged=same),
        Post(boss, url, boss.signed.form(candidate_id=b), "/admin/calibration?done=sheet"),
    ]


def _anchor_hand(w) -> list[Post]:
    boss, a = w["boss"], w["cids"][0]
    url, same = "/admin/calibration/anchors/hand", _anchors(w)
    good = {"candidate_id": a, "item": GRADED[0], "level": "good", "reason": "agreed in the calibration meeting"}
    return [
        Post(boss, url, boss.signed.form(**{**good, "level": "superb"}), "/admin/calibration", "level", unchanged=same),
        Post(boss, url, boss.signed.form(**{**good, "reason": ""}), "/admin/calibration", "reason", unchanged=same),
        Post(boss, url, boss.signed.form(**good), "/admin/calibration?done=hand"),
    ]


def _anchor_remove(w) -> list[Post]:
    boss, a = w["boss"], w["cids"][0]
    url, same = "/admin/calibration/anchors/remove", _anchors(w)
    gone = boss.signed.form(candidate_id="c-000000000000")
    return [
        Post(boss, url, gone, "/admin/calibration", "no such candidate", unchanged=same),
        Post(boss, url, boss.signed.form(candidate_id=a), "/admin/calibration?done=removed"),
    ]


def _settings(w) -> list[Post]:
    boss, url = w["boss"], "/admin/calibration/settings"
    same = Calibration(w["store"]).drift_last
    return [
        Post(boss, url, boss.signed.form(drift_last="0"), "/admin/calibration", "N must be", unchanged=same),
        Post(boss, url, boss.signed.form(drift_last="12"), "/admin/calibration?done=setting"),
    ]


def _run_choice(w) -> list[Post]:
    boss, a = w["boss"], w["cids"][0]
    shown = lambda: w["store"].runs_of(a)  # noqa: E731
    return [
        Post(boss, f"/admin/runs/{a}", boss.signed.form(run_id="x1", reason="?"), "/admin/runs", "not a run number"),
        Post(boss, f"/admin/runs/{a}", boss.signed.form(run_id="auto", reason=""), "/admin/runs", "", unchanged=shown),
        Post(boss, f"/admin/runs/{a}", boss.signed.form(run_id="auto", reason="the automatic rule"), "/admin/runs"),
    ]


FORMS: dict[str, Callable[[dict], list[Post]]] = {
    "/signin/{token}": _signin,
    "/signout": _signout,
    "/me/tokens": _new_token,
    "/me/tokens/{tid}/revoke": _revoke_token,
    "/c/{cid}": _candidate,
    "/team/invite": _invite,
    "/team/disable": _disable,
    "/team/finalize/{cid}": _finalize,
    "/team/unfinalize/{cid}": _unfinalize,
    "/admin/calibration/anchors/sheet": _anchor_sheet,
    "/admin/calibration/anchors/hand": _anchor_hand,
    "/admin/calibration/anchors/remove": _anchor_remove,
    "/admin/calibration/settings": _settings,
    "/admin/runs/{cid}": _run_choice,
}


def _is_page(r: httpx.Response) -> bool:
    return r.status_code == 200 and r.headers.get("content-type", "").startswith("text/html")


def _errors(page: str) -> str:
    """The text of the page's error lines (`class="error"`; a dead link's page says it there too)."""
    return " | ".join(html.unescape(t) for t in re.findall(r'<p class="error"[^>]*>([^<]*)</p>', page))


@pytest.mark.parametrize("form", sorted(FORMS))
def test_should_answer_each_post_of_the_form_with_a_redirect(world, form):
    for p in FORMS[form](world):
        before = p.unchanged() if p.unchanged else None
        r = p.client.post(p.url, data=p.data)
        assert not _is_page(r), (form, p.data, r.text[:300])
        assert r.status_code == 303, (form, p.data, r.status_code, r.text[:300])
        where = r.headers["location"]
        assert where.startswith(p.lands), (form, p.data, where)
        if p.unchanged:
            assert p.unchanged() == before, (form, p.data, "a refused form stored something")
        if not p.error:
            continue
        page = p.client.get(where)
        assert page.status_code == p.landing_status and p.error in _errors(page.text), (
            form,
            p.data,
            _errors(page.text),
        )
        again = p.client.get(where)  # a reload: the message was shown once (a dead link stays dead)
        assert (p.error in _errors(again.text)) == p.every_time, (form, p.data, _errors(again.text))


def test_should_cover_every_form_the_app_serves(world):
    forms = {
        path
        for path, route in Auth.iter_routes(world["app"])
        if "POST" in (getattr(route, "methods", None) or set()) and not path.startswith("/api/")
    }
    assert forms == set(FORMS)
