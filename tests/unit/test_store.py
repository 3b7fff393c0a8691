"""The review store: anonymous candidates with labels apart, idempotent imports, bad input
refused with nothing stored, concurrent submissions all kept, history kept, rebuildable.

Every test runs against both stores: a SQLite file and a real PostgreSQL database
(tests/pg.py), through the same ReviewStore."""

import json
import shutil
import sqlite3
import threading
from dataclasses import replace

import pytest
import sqlalchemy as sa

from skycity_bench.common.errors import UserError
from skycity_bench.inputs.rubric import load_rubric
from skycity_bench.store.review_store import ReviewStore
from skycity_bench.store.schema import HEAD, SQLITE_USER_VERSION
from skycity_bench.store.validate import InvalidReview
from tests.review_reports import make_run

R = load_rubric()
GRADED = [i.id for i in R.items if i.graded]
LABEL = "secret-model-omega.html"


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request):
    return request.param


@pytest.fixture()
def new_store(backend, request, tmp_path):
    """A factory of fresh, empty stores of this test's backend: new_store(name, **kw)."""
    made = []

    def make(name: str, **kw) -> ReviewStore:
        if backend == "sqlite":
            st = ReviewStore(tmp_path / f"{name}.sqlite", **kw)
        else:
            pg = request.getfixturevalue("postgres")
            st = ReviewStore(pg.url(pg.new_db()), **kw)
        made.append(st)
        return st

    yield make
    for st in made:
        st.close()


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """Two imported runs, built once per backend; each test gets its own copy of the store."""
    root = tmp_path_factory.mktemp("store")
    runs = [make_run(root / "runs", LABEL, seed="alpha"), make_run(root / "runs", "other-model.html", seed="beta")]
    built = {}

    def get(backend, request):
        if backend not in built:
            if backend == "sqlite":
                st = ReviewStore(root / "db.sqlite", seed=7)
            else:
                pg = request.getfixturevalue("postgres")
                st = ReviewStore(pg.url(pg.new_db()), seed=7)
            for r in runs:
                st.import_run(r)
            built[backend] = st.db.engine.url.database
            st.close()  # no connection left: the file / the template database is copied
        return built[backend]

    return root, get


@pytest.fixture()
def store(template, backend, request, tmp_path):
    root, get = template
    src = get(backend, request)
    shutil.copytree(root / "runs", tmp_path / "runs")
    if backend == "sqlite":
        shutil.copy(src, tmp_path / "db.sqlite")  # all connections closed: no WAL left
        st = ReviewStore(tmp_path / "db.sqlite")
    else:
        pg = request.getfixturevalue("postgres")
        st = ReviewStore(pg.url(pg.new_db(template=src)))
    yield st
    st.close()


def count(st):
    return len(st.export_reviews())


def test_should_be_at_the_newest_schema_revision_and_sqlite_in_wal(store, backend):
    with store.db.read() as con:
        assert con.execute(sa.text("SELECT version_num FROM alembic_version")).scalar() == HEAD
    if backend == "sqlite":
        con = sqlite3.connect(store.path)
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert con.execute("PRAGMA user_version").fetchone()[0] == SQLITE_USER_VERSION
        con.close()


def test_should_keep_the_label_apart_from_the_anonymous_id(store):
    cid = next(c for c, label in store.labels().items() if label == LABEL)
    run = store.shown_run(cid)
    blob = json.dumps(run, ensure_ascii=False)
    # the run folder's name and one evidence string carry the label: masked, never served
    assert "secret-model-omega" not in blob and "other-model" not in blob and "‹hidden›" in blob
    assert "label" not in run["report"]["candidate"] and run["report"]["candidate"]["id"] == cid
    assert set(store.labels().values()) == {LABEL, "other-model.html"}
    assert all(c.startswith("c-") for c in store.candidates())


def test_should_mask_the_label_in_bench_reasons_of_the_blind_sheet(new_store, tmp_path):
    from skycity_bench.judging.sheet_totals import to_markdown

    st = new_store("m")
    st.import_run(make_run(tmp_path / "runs", LABEL, seed="m", untested=("shops.touch",)))
    blind_md = to_markdown(st.sheets())
    assert "shops.touch: untested" in blind_md and "secret-model-omega" not in blind_md
    assert "secret-model-omega" in to_markdown(st.sheets(unblind=True))


def test_should_import_the_same_run_only_once(store, tmp_path):
    again = store.import_run(tmp_path / "runs" / "secret-model-omega-run-alpha")
    assert not again.new and again.files == 3
    assert len(store.candidates()) == 2


def test_should_refuse_a_run_under_another_rubric(store, tmp_path):
    run = make_run(tmp_path / "runs2", "x.html", seed="gamma")
    doc = json.loads((run / "report.json").read_text())
    doc["rubric_id"] = "skycity-v0"
    (run / "report.json").write_text(json.dumps(doc))
    with pytest.raises(UserError, match="rubric skycity-v0"):
        store.import_run(run)


@pytest.mark.parametrize(
    "grades,overrides,status,msg",
    [
        ([{"item": "camera.motion", "points": 5}], [], 422, "not a level"),
        ([{"item": "camera.motion", "points": 9}], [], 422, "out of range"),
        ([{"item": "camera.motion", "level": 60}], [], 422, "not one of the levels"),
        ([{"item": "camera.zoom", "level": 75}], [], 422, "unknown item"),
        ([{"item": "shops.touch", "level": 75}], [], 422, "override"),
        ([], [{"item": "shops.touch", "points": 1, "reason": "short"}], 422, "reason"),
        ([], [{"item": "shops.touch", "points": 0.3, "reason": "seen on the recording"}], 422, "steps"),
        ([], [{"item": "camera.motion", "points": 4, "reason": "seen on the recording"}], 422, "grade it"),
        ([{"item": "camera.motion", "level": "good"}, {"item": "camera.motion", "level": "good"}], [], 422, "twice"),
    ],
)
def test_should_refuse_bad_scores_and_store_nothing(store, grades, overrides, status, msg):
    store.sign_in("ann")
    cid = store.candidates()[0]
    ok = [{"item": "visual.composition", "level": "excellent"}]
    with pytest.raises(InvalidReview, match=msg) as e:
        store.submit(cid, "ann", R.id, ok + grades, overrides)
    assert e.value.status == status
    assert count(store) == 0


def test_should_refuse_another_rubric_id_and_tampered_candidate_ids(store):
    store.sign_in("ann")
    cid = store.candidates()[0]
    g = [{"item": "visual.composition", "level": 100}]
    with pytest.raises(InvalidReview, match="rubric"):
        store.submit(cid, "ann", "skycity-v0", g)
    tampered = cid[:-1] + ("0" if cid[-1] != "0" else "1")
    with pytest.raises(InvalidReview, match="no such candidate") as e:
        store.submit(tampered, "ann", R.id, g)
    assert e.value.status == 404
    with pytest.raises(InvalidReview, match="not a candidate id"):
        store.submit("../" + cid, "ann", R.id, g)
    with pytest.raises(InvalidReview, match="sign in"):
        store.submit(cid, "nobody", R.id, g)
    assert count(store) == 0


def test_should_keep_every_concurrent_submission(store):
    names = [f"rev{i}" for i in range(8)]
    for n in names:
        store.sign_in(n)
    cids = store.candidates()
    barrier = threading.Barrier(len(names))
    errors = []

    def work(n, k):
        try:
            barrier.wait()
            for cid in cids:
                store.submit(cid, n, R.id, [{"item": i, "level": [100, 75][k % 2]} for i in GRADED])
        except Exception as e:  # noqa: BLE001 - collected and asserted below
            errors.append(e)

    ts = [threading.Thread(target=work, args=(n, k)) for k, n in enumerate(names)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    assert errors == []
    assert count(store) == len(names) * len(cids) * len(GRADED)
    for cid in cids:
        assert len(store.reviews(cid)) == len(names) * len(GRADED)


def test_should_supersede_a_revision_and_keep_the_history(store):
    store.sign_in("ann")
    cid = store.candidates()[0]
    store.submit(cid, "ann", R.id, [{"item": "camera.ending", "level": 25}])
    assert store.submit(cid, "ann", R.id, [{"item": "camera.ending", "level": 25}])["unchanged"] == 1
    store.submit(cid, "ann", R.id, [{"item": "camera.ending", "level": 75, "comment": "looked again"}])
    standing = store.reviews(cid, "ann")
    assert [(r.item_id, r.points) for r in standing] == [
        ("camera.ending", R.level(75).share * R.item("camera.ending").points)
    ]
    hist = store.export_reviews()
    assert [h["superseded"] for h in hist] == [True, False]
    assert all(h["rubric_sha256"] == R.sha256 and h["source"] == "api" for h in hist)


def test_should_refuse_changes_after_the_sheet_is_finalised(store):
    store.sign_in("ann")
    cid = store.candidates()[0]
    store.finalize(cid, "lead")
    with pytest.raises(InvalidReview, match="finalised") as e:
        store.submit(cid, "ann", R.id, [{"item": "camera.ending", "level": 25}])
    assert e.value.status == 409 and count(store) == 0


def test_should_give_the_second_reviewer_the_reverse_order(new_store, tmp_path):
    st = new_store("q", seed=3)
    for k in range(5):
        st.import_run(make_run(tmp_path / "runs", f"m{k}.html", seed=f"s{k}"))
    a, b, c = st.sign_in("a"), st.sign_in("b"), st.sign_in("c")
    qa = [q["candidate_id"] for q in st.queue("a")]
    qb = [q["candidate_id"] for q in st.queue("b")]
    assert (a["seat"], b["seat"], c["seat"]) == (0, 1, 2)
    assert qb == qa[::-1] and sorted(qa) == st.candidates()
    again = ReviewStore(st.db.engine.url.database if st.db.path else st.db.engine.url.render_as_string(False))
    assert st.order_for(0) == again.order_for(0)  # the seed is the store's
    again.close()


def test_should_rebuild_the_same_sheet_from_reports_and_exported_reviews(store, new_store, tmp_path):
    for n in ("ann", "bob"):
        store.sign_in(n)
    cid = store.candidates()[0]
    store.submit(cid, "ann", R.id, [{"item": i, "level": 75} for i in GRADED])
    store.submit(
        cid,
        "bob",
        R.id,
        [{"item": i, "level": 100} for i in GRADED],
        [{"item": "shops.touch", "points": 1, "reason": "half the taps missed on the recording"}],
    )
    exported = json.loads(json.dumps(store.export_reviews()))
    fresh = new_store("rebuilt")
    for run in sorted((tmp_path / "runs").iterdir()):
        fresh.import_run(run)
    assert fresh.import_reviews(exported) == len(exported)
    assert fresh.import_reviews(exported) == 0
    assert replace(fresh.sheet(cid), run_id=None) == replace(store.sheet(cid), run_id=None)
    assert store.sheet(cid).items[0].method == "mean"
