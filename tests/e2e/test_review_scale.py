"""The review app at the size of a round, over real HTTP against the app as `skycity-bench
review` serves it: the sheet is paged, with a jump-to-candidate box and filters (needs a third
reviewer, disagreement, not finished); each save says what it stored for which candidate; every
form answers with a redirect (POST-redirect-GET), a secret made by a form (an invitation link,
an API token) shown once on the page it lands on."""

from __future__ import annotations

import re

import pytest

from skycity_bench.commands.review import web_app
from skycity_bench.inputs.rubric import load_rubric
from skycity_bench.review.sheet_page import PER_PAGE
from skycity_bench.store.review_store import ReviewStore
from tests.review_reports import http_client, make_run, serving

R = load_rubric()
GRADED = [i.id for i in R.items if i.graded]
N = PER_PAGE + 3


@pytest.fixture(scope="module")
def round_(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("scale")
    store = ReviewStore(tmp / "reviews.sqlite", seed=9)
    cids = sorted(
        store.import_run(make_run(tmp / "runs", f"scale-{k}.html", seed=f"scale-{k}")).candidate_id for k in range(N)
    )
    with serving(web_app(store)) as base:
        ann, bob = http_client(base, store, "ann", api=True), http_client(base, store, "bob", api=True)
        boss = http_client(base, store, "boss", "admin")
        for c, lv in ((ann, 100), (bob, 25)):  # two levels and more apart on the first: a third is wanted
            body = {"rubric_id": R.id, "grades": [{"item": i, "level": lv if i == GRADED[0] else 75} for i in GRADED]}
            assert c.post(f"/api/candidates/{cids[0]}/reviews", json=body).status_code == 201
        for c in (ann, bob):  # the second: complete and agreed
            body = {"rubric_id": R.id, "grades": [{"item": i, "level": 75} for i in GRADED]}
            assert c.post(f"/api/candidates/{cids[1]}/reviews", json=body).status_code == 201
        yield {"store": store, "base": base, "cids": cids, "ann": ann, "boss": boss}


def _shown(html: str) -> list[str]:
    return re.findall(r'<h2 id="sheet-(c-[0-9a-f]{12})"', html)


def test_should_page_the_sheet_and_jump_to_a_candidate(round_):
    boss, cids = round_["boss"], round_["cids"]
    first = boss.get("/sheet").text
    assert _shown(first) == cids[:PER_PAGE] and f"{N} / {N}" in first
    assert _shown(boss.get("/sheet?page=2").text) == cids[PER_PAGE:]
    jumped = boss.get(f"/sheet?jump={cids[-1][2:8]}").text  # part of an id is enough
    assert _shown(jumped) == cids[PER_PAGE:] and f'<h2 id="sheet-{cids[-1]}" class="jumped">' in jumped
    assert "no candidate(s) match" in boss.get("/sheet?jump=c-zzzz").text


def test_should_filter_the_sheet_to_what_needs_acting_on(round_):
    boss, cids = round_["boss"], round_["cids"]
    assert _shown(boss.get("/sheet?third=1").text) == [cids[0]]
    assert _shown(boss.get("/sheet?disagree=1").text) == [cids[0]]
    assert cids[1] not in _shown(boss.get("/sheet?open=1").text)
    # a reviewer's filters read their own work only: no disagreement shows before final
    assert _shown(round_["ann"].get("/sheet?disagree=1").text) == []


def test_should_say_what_each_save_stored_and_redirect_every_form(round_):
    store, base, cids = round_["store"], round_["base"], round_["cids"]
    cara = http_client(base, store, "cara")
    form = cara.signed.form(
        candidate=cids[2], rubric_id=R.id, **{f"grade:{GRADED[0]}": "50", f"grade:{GRADED[1]}": "75"}
    )
    r = cara.post(f"/c/{cids[2]}", data=form)
    assert r.status_code == 303 and r.headers["location"] == f"/c/{cids[2]}?saved=2&for={cids[2]}"
    assert f"2 item(s) for candidate {cids[2]}" in cara.get(r.headers["location"]).text
    boss = round_["boss"]
    r = boss.post("/team/invite", data=boss.signed.form(name="dan"))
    assert r.status_code == 303 and r.headers["location"] == "/team#new-link"
    page = boss.get("/team").text
    assert "/signin/" in page and "dan" in page
    assert "/signin/" not in boss.get("/team").text  # shown once: a reload shows it no more
    cara.close()
