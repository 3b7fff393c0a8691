"""The leaderboard on a store made from runs (3 systems × 3 prompts × 2 samples, one file
measured twice, two reviewers grading every manual item, every sheet finalised; built by
tests/unit/test_leaderboard_store.build_round from recorded-style reports, no browser):

- `leaderboard --db` prints the table, writes the figure, and its JSON passes the schema of
  the issue's shape;
- the admin page /admin/leaderboard shows the same numbers as that JSON, and
  /api/admin/leaderboard serves the same document;
- a reviewer gets 403 on both, and nothing a reviewer is served names a system or a prompt."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from skycity_bench.cli import app as cli_app
from skycity_bench.review import create_app
from skycity_bench.store.manifests import manifests
from skycity_bench.store.review_store import ReviewStore
from tests.review_reports import client
from tests.unit.test_leaderboard_store import PROMPTS, SYSTEMS, build_round

NUMBER = (int, float)
# the shape (more fields are welcome): type per key, lists described by their item
SCHEMA: dict[str, Any] = {
    "seed": int,
    "resamples": int,
    "systems": [
        {
            "system": str,
            "mean": NUMBER,
            "ci": [NUMBER],
            "rank_range": [int],
            "prompts": int,
            "samples": int,
        }
    ],
    "pairs": [{"a": str, "b": str, "diff": NUMBER, "ci": [NUMBER], "separated": bool}],
}


def check(doc: Any, schema: Any, where: str = "$") -> None:
    """A small structural validator: dict → required keys, [item] → every element, type."""
    if isinstance(schema, dict):
        assert isinstance(doc, dict), where
        for k, sub in schema.items():
            assert k in doc, f"{where}.{k} missing"
            check(doc[k], sub, f"{where}.{k}")
    elif isinstance(schema, list):
        assert isinstance(doc, list) and doc, where
        for i, x in enumerate(doc):
            check(x, schema[0], f"{where}[{i}]")
    else:
        assert isinstance(doc, schema) and not (schema is int and isinstance(doc, bool)), (where, doc)


@pytest.fixture(scope="module")
def round_db(tmp_path_factory) -> Path | str:
    root = tmp_path_factory.mktemp("board")
    return build_round(root, root / "db.sqlite")


@pytest.fixture()
def world(round_db, tmp_path):
    shutil.copy(round_db, tmp_path / "db.sqlite")
    store = ReviewStore(tmp_path / "db.sqlite")
    app = create_app(store)
    yield {
        "store": store,
        "db": tmp_path / "db.sqlite",
        "boss": client(app, store, "boss", "admin"),
        "rita": client(app, store, "rita", api=True),
    }
    store.close()


def test_should_print_the_table_write_the_figure_and_json_of_the_schema(world, tmp_path):
    run = CliRunner().invoke(cli_app, ["leaderboard", "--db", str(world["db"]), "--figure", str(tmp_path / "f.png")])
    assert run.exit_code == 0, run.output
    assert all(s in run.stdout for s in SYSTEMS) and "seed 20240, 2000 resamples" in run.stdout
    assert (tmp_path / "f.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    run = CliRunner().invoke(cli_app, ["leaderboard", "--db", str(world["db"]), "--format", "json"])
    doc = json.loads(run.stdout)
    check(doc, SCHEMA)
    assert doc["resamples"] >= 2000 and [s["system"] for s in doc["systems"]] == list(SYSTEMS)
    assert len(doc["pairs"]) == 3 and all(p["diff"] > 0 for p in doc["pairs"])


def test_should_show_the_admin_the_same_numbers_on_the_page_and_the_api(world):
    boss = world["boss"]
    run = CliRunner().invoke(cli_app, ["leaderboard", "--db", str(world["db"]), "--format", "json"])
    cli_doc = json.loads(run.stdout)
    api = boss.get("/api/admin/leaderboard")
    assert api.status_code == 200 and api.json() == cli_doc
    page = boss.get("/admin/leaderboard")
    assert page.status_code == 200
    for s in cli_doc["systems"]:
        assert s["system"] in page.text
        assert f"{s['mean']:.1f}" in page.text and f"[{s['ci'][0]:.1f}, {s['ci'][1]:.1f}]" in page.text
    assert 'id="leaderboard-figure"' in page.text and "data:image/png;base64," in page.text


def test_should_refuse_a_reviewer_both_and_never_show_them_a_system_or_prompt(world):
    rita, store = world["rita"], world["store"]
    assert rita.get("/admin/leaderboard").status_code == 403
    assert rita.get("/api/admin/leaderboard").status_code == 403
    cids = sorted(manifests(store))
    pages = [rita.get(u) for u in ("/queue", "/sheet", "/sheet.json", "/sheet.csv", "/api/candidates", "/api/sheet")]
    for cid in cids[:4]:
        pages += [rita.get(f"/c/{cid}"), rita.get(f"/api/candidates/{cid}")]
    for page in pages:
        assert page.status_code == 200, (page.url, page.status_code)
        for secret in (*SYSTEMS, *PROMPTS, "model-a", "round-1"):
            assert secret not in page.text, (page.url, secret)


def test_should_answer_409_with_the_reason_when_the_store_cannot_rank(tmp_path):
    store = ReviewStore(tmp_path / "empty.sqlite")
    try:
        boss = client(create_app(store), store, "boss", "admin")
        r = boss.get("/api/admin/leaderboard")
        assert r.status_code == 409 and "no candidates" in r.json()["error"]
        page = boss.get("/admin/leaderboard")
        assert page.status_code == 409 and 'id="leaderboard-refused"' in page.text
    finally:
        store.close()
