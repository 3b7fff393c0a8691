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

from skycity_bench.review import create_app
from skycity_bench.review.guard import MAX_BODY_BYTES, allowed_hosts
from skycity_bench.rubric import load_rubric
from skycity_bench.store import ReviewStore
from tests.review_reports import make_run

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
    base = served["base"]
    for n in ("99999999999999999999999", "9223372036854775808", "0", "-1", "abc", "1e3", "１"):
        r = httpx.get(f"{base}/files/{n}")
        assert r.status_code == 404, (n, r.status_code)
        assert "no such file" in r.text
    real = httpx.get(f"{base}/api/candidates/{served['a']}").json()["files"][0]["url"]
    assert httpx.get(base + real).status_code == 200                       # a stored file still serves


def _submission(reviewer, comment=""):
    return {"reviewer": reviewer, "rubric_id": R.id, "grades": [{"item": GRADED[0], "level": 75, "comment": comment}]}


def test_should_refuse_a_body_over_the_cap_and_store_nothing(served):
    base, a, store = served["base"], served["a"], served["store"]
    httpx.post(base + "/api/reviewers", json={"name": "big"})
    before = len(store.export_reviews())
    url = f"{base}/api/candidates/{a}/reviews"
    # declared: a JSON body one byte over 1 MiB
    body = json.dumps(_submission("big", "x" * MAX_BODY_BYTES)).encode()
    r = httpx.post(url, content=body, headers={"content-type": "application/json"})
    assert r.status_code == 413 and "1 MiB" in r.json()["error"]

    # streamed without a Content-Length (chunked): counted while read
    def chunks():
        yield body[:1000]
        for k in range(1000, len(body), 65536):
            yield body[k:k + 65536]
    r = httpx.post(url, content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413
    # a page form (the candidate page's own POST) over the cap
    r = httpx.post(f"{base}/c/{a}", data={"candidate": a, "rubric_id": R.id, f"grade:{GRADED[0]}": "75",
                                          f"comment:{GRADED[0]}": "y" * (MAX_BODY_BYTES + 10)},
                   cookies={"skycity_reviewer": "big"})
    assert r.status_code == 413
    assert len(store.export_reviews()) == before
    # just under the cap reaches the app, which judges it (too long a comment: 422)
    under = httpx.post(url, json=_submission("big", "z" * (MAX_BODY_BYTES - 4096)))
    assert under.status_code == 422 and "at most" in under.json()["error"]
    assert httpx.post(url, json=_submission("big", "fine")).status_code == 201
    assert len(store.export_reviews()) == before + 1


def test_should_refuse_a_host_off_the_allow_list(served):
    base, port = served["base"], served["port"]
    for host in ("evil.example", f"evil.example:{port}", "127.0.0.1.evil.example", "localhost.evil.example",
                 "0.0.0.0", "[::2]"):
        r = httpx.get(base + "/api/candidates", headers={"host": host})
        assert r.status_code == 400, host
        assert "candidate" not in r.text
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", "localhost", f"[::1]:{port}", "review.team.example",
                 f"REVIEW.team.example:{port}"):
        assert httpx.get(base + "/api/candidates", headers={"host": host}).status_code == 200, host


def test_should_allow_loopback_the_bind_host_and_named_hosts_only():
    assert allowed_hosts() == ["127.0.0.1", "localhost", "[::1]"]
    assert allowed_hosts("0.0.0.0") == allowed_hosts("::") == allowed_hosts()
    assert allowed_hosts("10.0.0.5", ["Review.Lan", "fe80::1"]) == ["127.0.0.1", "localhost", "[::1]", "10.0.0.5",
                                                                   "review.lan", "[fe80::1]"]


def test_should_show_agreement_on_the_sheet_and_escape_hostile_reasons(served):
    base, b = served["base"], served["b"]
    auto = next(i.id for i in R.items if not i.graded)
    for name, pct in (("agr-1", 75), ("agr-2", 50)):
        httpx.post(base + "/api/reviewers", json={"name": name})
        body = {"reviewer": name, "rubric_id": R.id, "grades": [{"item": i, "level": pct} for i in GRADED],
                "overrides": [{"item": auto, "points": 0, "reason": "bad | <script>alert(1)</script>\nreally"}]}
        assert httpx.post(f"{base}/api/candidates/{b}/reviews", json=body).status_code == 201
    page = httpx.get(base + "/sheet").text
    assert 'table class="agreement"' in page and 'id="alpha-overall"' in page
    for i in GRADED:
        assert f'id="alpha-{i}"' in page
    doc = httpx.get(base + "/sheet.json").json()
    assert doc["agreement"]["overall"]["candidates"] == 1 and len(doc["agreement"]["items"]) == len(GRADED)
    md = httpx.get(base + "/sheet.md").text
    assert "## agreement" in md and "<script>" not in md and "bad \\| &lt;script&gt;" in md
    # a reviewer who has not scored b sees no agreement built on b's scores
    hidden = httpx.get(base + "/sheet.json", cookies={"skycity_reviewer": "big"}).json()
    assert hidden["agreement"]["overall"]["candidates"] == 0


def test_should_serve_no_full_file_hash(served):
    base = served["base"]
    for cid, seed in ((served["a"], "edge-a"), (served["b"], "edge-b")):
        full = hashlib.sha256(seed.encode()).hexdigest()          # make_run's candidate hash
        assert cid == "c-" + full[:12]                            # the id is its 12-hex prefix, no more
        run = httpx.get(f"{base}/api/candidates/{cid}").json()
        assert run["report"]["candidate"] == {"id": cid}
        page = httpx.get(f"{base}/c/{cid}", cookies={"skycity_reviewer": "hash-check"}).text
        for text in (json.dumps(run), page):
            assert full not in text


def test_should_show_each_image_once_and_load_it_lazily(served):
    import re
    page = httpx.get(f"{served['base']}/c/{served['a']}", cookies={"skycity_reviewer": "img-check"}).text
    imgs = re.findall(r"<img [^>]*>", page)
    srcs = [re.search(r'src="([^"]+)"', i).group(1) for i in imgs]
    assert srcs and len(srcs) == len(set(srcs)), srcs                        # no image twice
    assert all('loading="lazy"' in i for i in imgs)
    # make_run cites frame_pacing.png from every passing automated item: shown at the first,
    # the others link back to it
    first = next(i for i in imgs if "frame_pacing.png" in i)
    img_id = re.search(r'id="(img-\d+)"', first).group(1)
    assert page.count("↑ frame_pacing.png") == sum(1 for i in R.items if not i.graded) - 1
    assert img_id and 'class="seen" href="#item-' in page


def test_should_show_the_benchs_hint_for_reviewers_beside_its_item(served):
    page = httpx.get(f"{served['base']}/c/{served['a']}", cookies={"skycity_reviewer": "hint-check"}).text
    item = page[page.index('id="item-camera.motion"'):]
    item = item[:item.index("</article>")]
    assert '<p class="for-reviewers">' in item and "watch the &lt;cut&gt; at 12 s" in item   # escaped, visible
    assert page.count('class="for-reviewers"') == 1
