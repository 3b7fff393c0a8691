"""The review app's edges over real HTTP (uvicorn on loopback, httpx): a huge file number is
an unknown file (404, not 500), a body over the 1 MiB cap is refused (413) whether declared
or streamed and stores nothing, a Host name off the allow-list is refused (400: DNS
rebinding), the sheet page shows the reviewers' agreement, and hostile reasons come out of
the exports escaped."""

from __future__ import annotations

import hashlib
import json
import socket
import threading
import time

import httpx
import pytest
import uvicorn

from skycity_bench.inputs.rubric import load_rubric
from skycity_bench.review import create_app
from skycity_bench.review.guard import MAX_BODY_BYTES, allowed_hosts
from skycity_bench.store.review_store import ReviewStore
from tests.review_reports import http_client, make_run

R = load_rubric()
GRADED = [i.id for i in R.items if i.graded]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("edges")
    store = ReviewStore(tmp / "reviews.sqlite", seed=3)
    run_a = make_run(tmp / "runs", "edge-model-a.html", seed="edge-a")
    doc = json.loads((run_a / "report.json").read_text())
    doc["items"]["camera.motion"]["evidence"]["for_reviewers"] = "watch the <cut> at 12 s"
    (run_a / "report.json").write_text(json.dumps(doc))
    a = store.import_run(run_a).candidate_id
    b = store.import_run(make_run(tmp / "runs", "edge-model-b.html", seed="edge-b")).candidate_id
    port = _free_port()
    app = create_app(store, hosts=allowed_hosts("127.0.0.1", ["review.team.example"]))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="critical"))
    t = threading.Thread(target=server.run, daemon=True)
    t.start()
    base = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            httpx.get(base + "/api/candidates", timeout=1)
            break
        except httpx.HTTPError:
            time.sleep(0.05)
    yield {"store": store, "base": base, "a": a, "b": b, "port": port}
    server.should_exit = True
    t.join(timeout=10)


def test_should_answer_an_unknown_or_absurd_file_number_with_404(served):
    c = http_client(served["base"], served["store"], "files-check")
    for n in ("99999999999999999999999", "9223372036854775808", "0", "-1", "abc", "1e3", "１"):
        r = c.get(f"/files/{n}")
        assert r.status_code == 404, (n, r.status_code)
        assert "no such file" in r.text
    real = c.get(f"/api/candidates/{served['a']}").json()["files"][0]["url"]
    assert c.get(real).status_code == 200  # a stored file still serves


def _submission(comment=""):
    return {"rubric_id": R.id, "grades": [{"item": GRADED[0], "level": 75, "comment": comment}]}


def test_should_refuse_a_body_over_the_cap_and_store_nothing(served):
    base, a, store = served["base"], served["a"], served["store"]
    big = http_client(base, store, "big", api=True)
    before = len(store.export_reviews())
    url = f"/api/candidates/{a}/reviews"
    # declared: a JSON body one byte over 1 MiB
    body = json.dumps(_submission("x" * MAX_BODY_BYTES)).encode()
    r = big.post(url, content=body, headers={"content-type": "application/json"})
    assert r.status_code == 413 and "1 MiB" in r.json()["error"]

    # streamed without a Content-Length (chunked): counted while read
    def chunks():
        yield body[:1000]
        for k in range(1000, len(body), 65536):
            yield body[k : k + 65536]

    r = big.post(url, content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413
    # a page form (the candidate page's own POST, with its session and CSRF token) over the cap
    page = http_client(base, store, "big-form")
    r = page.post(
        f"/c/{a}",
        data=page.signed.form(
            candidate=a,
            rubric_id=R.id,
            **{f"grade:{GRADED[0]}": "75", f"comment:{GRADED[0]}": "y" * (MAX_BODY_BYTES + 10)},
        ),
    )
    assert r.status_code == 413
    assert len(store.export_reviews()) == before
    # just under the cap reaches the app, which judges it (too long a comment: 422)
    under = big.post(url, json=_submission("z" * (MAX_BODY_BYTES - 4096)))
    assert under.status_code == 422 and "at most" in under.json()["error"]
    assert big.post(url, json=_submission("fine")).status_code == 201
    assert len(store.export_reviews()) == before + 1


def test_should_refuse_a_host_off_the_allow_list(served):
    base, port = served["base"], served["port"]
    c = http_client(base, served["store"], "host-check", api=True)
    for host in (
        "evil.example",
        f"evil.example:{port}",
        "127.0.0.1.evil.example",
        "localhost.evil.example",
        "0.0.0.0",
        "[::2]",
    ):
        r = c.get("/api/candidates", headers={"host": host})
        assert r.status_code == 400, host
        assert "candidate" not in r.text
    for host in (
        f"127.0.0.1:{port}",
        f"localhost:{port}",
        "localhost",
        f"[::1]:{port}",
        "review.team.example",
        f"REVIEW.team.example:{port}",
    ):
        assert c.get("/api/candidates", headers={"host": host}).status_code == 200, host


def test_should_allow_loopback_the_bind_host_and_named_hosts_only():
    assert allowed_hosts() == ["127.0.0.1", "localhost", "[::1]"]
    assert allowed_hosts("0.0.0.0") == allowed_hosts("::") == allowed_hosts()
    assert allowed_hosts("10.0.0.5", ["Review.Lan", "fe80::1"]) == [
        "127.0.0.1",
        "localhost",
        "[::1]",
        "10.0.0.5",
        "review.lan",
        "[fe80::1]",
    ]


def test_should_show_agreement_on_the_sheet_and_escape_hostile_reasons(served):
    base, b = served["base"], served["b"]
    auto = next(i.id for i in R.items if not i.graded)
    for name, pct in (("agr-1", 75), ("agr-2", 50)):
        body = {
            "rubric_id": R.id,
            "grades": [{"item": i, "level": pct} for i in GRADED],
            "overrides": [{"item": auto, "points": 0, "reason": "bad | <script>alert(1)</script>\nreally"}],
        }
        assert (
            http_client(base, served["store"], name, api=True)
            .post(f"/api/candidates/{b}/reviews", json=body)
            .status_code
            == 201
        )
    admin = http_client(base, served["store"], "agr-admin", "admin")
    page = admin.get("/sheet").text
    assert 'table class="agreement"' in page and 'id="alpha-overall"' in page
    for i in GRADED:
        assert f'id="alpha-{i}"' in page
    doc = admin.get("/sheet.json").json()
    assert doc["agreement"]["overall"]["candidates"] == 1 and len(doc["agreement"]["items"]) == len(GRADED)
    md = admin.get("/sheet.md").text
    assert "## agreement" in md and "<script>" not in md and "bad \\| &lt;script&gt;" in md
    # a reviewer sees no agreement built on others' scores before the sheet is finalised
    hidden = http_client(base, served["store"], "agr-1").get("/sheet.json").json()
    assert hidden["agreement"]["overall"]["candidates"] == 0


def test_should_serve_no_file_hash_nor_its_prefix(served):
    c = http_client(served["base"], served["store"], "hash-check")
    for cid, seed in ((served["a"], "edge-a"), (served["b"], "edge-b")):
        full = hashlib.sha256(seed.encode()).hexdigest()  # make_run's candidate hash
        assert cid != "c-" + full[:12]  # the store's id is random: not the hash's prefix
        run = c.get(f"/api/candidates/{cid}").json()
        assert run["report"]["candidate"] == {"id": cid}
        page = c.get(f"/c/{cid}").text
        for text in (json.dumps(run), page):
            assert full[:12] not in text


def test_should_show_each_image_once_and_load_it_lazily(served):
    import re

    page = http_client(served["base"], served["store"], "img-check").get(f"/c/{served['a']}").text
    # the images the page loads (the enlarge dialog's empty <img> gets its src on a click)
    imgs = [i for i in re.findall(r"<img [^>]*>", page) if re.search(r'\ssrc="', i)]
    srcs = [re.search(r'src="([^"]+)"', i).group(1) for i in imgs]
    assert srcs and len(srcs) == len(set(srcs)), srcs  # no image twice
    assert all('loading="lazy"' in i for i in imgs)
    # make_run cites frame_pacing.png from every passing automated item: shown at the first,
    # the others link back to it
    first = next(i for i in imgs if "frame_pacing.png" in i)
    img_id = re.search(r'id="(img-\d+)"', first).group(1)
    assert page.count("↑ frame_pacing.png") == sum(1 for i in R.items if not i.graded) - 1
    assert img_id and 'class="seen" href="#item-' in page


def test_should_show_the_benchs_hint_for_reviewers_beside_its_item(served):
    page = http_client(served["base"], served["store"], "hint-check").get(f"/c/{served['a']}").text
    item = page[page.index('id="item-camera.motion"') :]
    item = item[: item.index("</article>")]
    assert '<p class="for-reviewers">' in item and "watch the &lt;cut&gt; at 12 s" in item  # escaped, visible
    assert page.count('class="for-reviewers"') == 1
