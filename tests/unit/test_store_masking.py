"""The store serves reports masked by skycity_bench/common/blinding.py's rules: the
candidate's own label only, whole words, no full file hash, each report blinded once (at
import: tests/unit/test_store_runs.py holds that serving never masks again).
"""

import json

import pytest

from skycity_bench.common import blinding as masking
from skycity_bench.store.review_store import ReviewStore
from tests.review_reports import make_run


@pytest.fixture()
def store(tmp_path):
    s = ReviewStore(tmp_path / "reviews.sqlite", seed=5)
    ids = {}
    for label, seed in (("reference.html", "ref"), ("omega.html", "omega")):
        run = make_run(tmp_path / "runs", label, seed=seed)
        doc = json.loads((run / "report.json").read_text())
        first = next(iter(doc["items"].values()))
        first["evidence"] = {
            "reason": f"no external references; compared with reference.html; ran {label}",
            "hash": doc["candidate"]["sha256"],
        }
        (run / "report.json").write_text(json.dumps(doc))
        ids[label] = s.import_run(run).candidate_id
    return s, ids


def _first_evidence(run):
    return next(iter(run["report"]["items"].values()))["evidence"]


def test_should_mask_only_the_own_label_as_whole_words(store):
    s, ids = store
    ev = _first_evidence(s.shown_run(ids["omega.html"]))
    assert ev["reason"] == f"no external references; compared with reference.html; ran {masking.MASK}"
    ev = _first_evidence(s.shown_run(ids["reference.html"]))
    assert ev["reason"] == f"no external references; compared with {masking.MASK}; ran {masking.MASK}"


def test_should_serve_no_full_hash(store):
    s, ids = store
    run = s.shown_run(ids["omega.html"])
    assert run["report"]["candidate"] == {"id": ids["omega.html"]}
    assert _first_evidence(run)["hash"] == masking.MASK


def test_should_blind_each_run_once(store):
    s, ids = store
    a = s.shown_run(ids["omega.html"])["report"]
    assert s.shown_run(ids["omega.html"])["report"] is a  # kept parsed, not parsed again
