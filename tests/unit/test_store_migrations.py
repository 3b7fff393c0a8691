"""The store's schema under Alembic: a SQLite store written by the pre-Alembic code
(tests/fixtures/store/v1-reviews.sqlite, made by that code: two candidates, reviews with a
revision, an override, a finalised sheet; v1-expected.json is what that code read from it)
upgrades in place and keeps every row; a store from a newer bench, an unreachable server and
a wrong password are refused in one line, exit 2, nothing written."""

import json
import shutil
import socket
import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from skycity_bench.cli import app
from skycity_bench.common.errors import UserError
from skycity_bench.inputs.rubric import load_rubric
from skycity_bench.store.db import KNOWN
from skycity_bench.store.review_store import ReviewStore
from skycity_bench.store.schema import HEAD, SQLITE_USER_VERSION, metadata

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "store"
R = load_rubric()


def test_should_know_every_migration_and_its_head():
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    import skycity_bench.store as pkg

    cfg = Config()
    cfg.set_main_option("script_location", str(Path(pkg.__file__).parent / "migrations"))
    script = ScriptDirectory.from_config(cfg)
    assert script.get_current_head() == HEAD
    assert [r.revision for r in reversed(list(script.walk_revisions()))] == list(KNOWN)


def test_should_create_the_tables_the_queries_name(tmp_path):
    st = ReviewStore(tmp_path / "new.sqlite")
    with st.db.read() as con:
        insp = sa.inspect(con)
        for t in metadata.sorted_tables:
            assert {c["name"] for c in insp.get_columns(t.name)} == set(t.c.keys()), t.name


def test_should_upgrade_a_store_written_by_the_pre_alembic_code_in_place(tmp_path):
    db = tmp_path / "v1.sqlite"
    shutil.copy(FIX / "v1-reviews.sqlite", db)
    expected = json.loads((FIX / "v1-expected.json").read_text(encoding="utf-8"))
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA user_version").fetchone()[0] == 1
    assert con.execute("SELECT name FROM sqlite_master WHERE name = 'alembic_version'").fetchone() is None
    con.close()

    st = ReviewStore(db)
    # the candidates got random ids (the old ones were a prefix of the file's hash); the old
    # id is kept as the bench's id, for admins
    bench = st.bench_ids()
    assert sorted(bench.values()) == expected["candidates"] and not set(bench) & set(bench.values())
    assert [{**r, "candidate_id": bench[r["candidate_id"]], "bench_id": None} for r in st.export_reviews()] == [
        {**r, "bench_id": None} for r in expected["reviews"]
    ]
    sheets = {
        bench[s.candidate_id]: {
            "total": s.total,
            "finalized": s.finalized,
            "label": s.label,
            "items": {i.item_id: [i.points, i.method, i.missing] for i in s.items},
        }
        for s in st.sheets(unblind=True)
    }
    assert sheets == expected["sheets"]
    new = {b: c for c, b in bench.items()}
    assert st.labels() == {new[c]: lb for c, lb in expected["labels"].items()}
    assert st.seed == 5 and st.is_finalized(new[expected["candidates"][0]])
    # it goes on working: a new review lands beside the old ones
    st.sign_in("cat")
    st.submit(new[expected["candidates"][1]], "cat", R.id, [{"item": "camera.motion", "level": 75}])
    assert len(st.export_reviews()) == len(expected["reviews"]) + 1
    st.close()
    con = sqlite3.connect(db)
    assert con.execute("SELECT version_num FROM alembic_version").fetchone()[0] == HEAD
    # the pre-Alembic code refuses a user_version above its own (1): it never writes here again
    assert con.execute("PRAGMA user_version").fetchone()[0] == SQLITE_USER_VERSION > 1
    assert con.execute("SELECT DISTINCT storage FROM runs").fetchall() == [("disk",)]
    con.close()
    assert ReviewStore(db).bench_ids() == bench  # opening again: nothing to do


def _invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_should_refuse_a_store_from_a_newer_bench_on_either_database(tmp_path, pg_url):
    for target in (tmp_path / "n.sqlite", pg_url):
        st = ReviewStore(target)
        with st.db.write() as con:
            con.execute(sa.text("UPDATE alembic_version SET version_num = '9999'"))
        st.close()
        with pytest.raises(UserError, match=r"schema \(9999\) is newer than this bench knows"):
            ReviewStore(target)
        res = _invoke("sheet", "--db", target)
        assert isinstance(res.exception, UserError) and "newer" in str(res.exception)  # cli.main: exit 2
    legacy = tmp_path / "legacy-newer.sqlite"
    shutil.copy(FIX / "v1-reviews.sqlite", legacy)
    con = sqlite3.connect(legacy)
    con.execute("PRAGMA user_version = 7")
    con.close()
    with pytest.raises(UserError, match="user_version 7"):
        ReviewStore(legacy)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_should_refuse_an_unreachable_server_and_a_wrong_password_in_one_line(postgres):
    bad = [f"postgresql://postgres:x@127.0.0.1:{_closed_port()}/postgres", postgres.url(password="wrong-password")]
    for url in bad:
        with pytest.raises(UserError) as e:
            ReviewStore(url)
        msg = str(e.value)
        assert "\n" not in msg and "cannot open the store" in msg and "wrong-password" not in msg
    assert "password authentication failed" in str(pytest.raises(UserError, ReviewStore, bad[1]).value)
    assert "refused" in str(pytest.raises(UserError, ReviewStore, bad[0]).value).lower()
