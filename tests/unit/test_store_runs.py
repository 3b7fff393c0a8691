"""Masked reports, the run a candidate shows, thumbnails and no full hash, in the store, on
SQLite and on a real PostgreSQL (tests/pg.py):

- the reviewer-facing report is masked once, at import (runs.masked_json), and serving never
  masks it again; runs stored before that existed are filled in when the store opens, or
  lazily once (written back);
- the run a candidate shows: the admin's pick, else the complete one (most items collected,
  ties to the latest), so a partial re-run never silently replaces a full run;
- thumbnails made at import (480 px WebP), or lazily once for older runs;
- no full file hash in anything served; the sheet and the queue of every candidate in a
  fixed number of queries, however many candidates there are.
"""

import json

import cv2
import numpy as np
import pytest
import sqlalchemy as sa

from skycity_bench.common import blinding as masking
from skycity_bench.inputs.rubric import load_rubric
from skycity_bench.judging.sheet_totals import rank, to_csv, to_json, to_markdown
from skycity_bench.store import artefacts
from skycity_bench.store.review_store import ReviewStore
from skycity_bench.store.validate import InvalidReview
from tests.review_reports import make_run

R = load_rubric()
GRADED = [i.id for i in R.items if i.graded]
AUTO = [i.id for i in R.items if not i.graded]
LABEL = "secret-model-omega.html"


@pytest.fixture(params=["sqlite", "postgres"])
def target(request, tmp_path):
    """A fresh store's place on this test's backend (a path, or a new database's URL)."""
    if request.param == "sqlite":
        return tmp_path / "reviews.sqlite"
    pg = request.getfixturevalue("postgres")
    return pg.url(pg.new_db())


@pytest.fixture()
def opened():
    stores = []

    def open_(target, **kw):
        st = ReviewStore(target, **kw)
        stores.append(st)
        return st

    yield open_
    for st in stores:
        st.close()


def q(st, sql, **kw):
    with st.db.read() as con:
        return con.execute(sa.text(sql), kw).mappings().all()


def _full_and_partial(root):
    """One candidate run twice: a full run, then a later re-run with two probes' items only."""
    full = make_run(root / "full", LABEL, seed="omega", started_at="2026-12-02T10:00:00+00:00")
    partial = make_run(
        root / "partial", LABEL, seed="omega", untested=tuple(AUTO[2:]), started_at="2026-12-02T12:00:00+00:00"
    )
    return full, partial


def _spy_masking(monkeypatch):
    calls = []
    real = masking.blind_report

    def spy(*a, **kw):
        calls.append(1)
        return real(*a, **kw)

    monkeypatch.setattr(masking, "blind_report", spy)
    return calls


# --- masked once, at import ---------------------------------------------------------------
def test_should_mask_once_at_import_and_serve_without_masking_again(target, opened, tmp_path, monkeypatch):
    st = opened(target, seed=1)
    calls = _spy_masking(monkeypatch)
    cid = st.import_run(make_run(tmp_path / "runs", LABEL, seed="omega")).candidate_id
    assert len(calls) == 1  # at import
    row = q(st, "SELECT masked_json, items_collected FROM runs")[0]
    stored = json.loads(row["masked_json"])
    assert stored["candidate"] == {"id": cid} and "secret-model-omega" not in row["masked_json"]
    assert row["items_collected"] == len(R.items)
    summary = q(st, "SELECT * FROM run_summaries")[0]
    assert summary["candidate_id"] == cid and summary["items_collected"] == len(R.items)
    assert json.loads(summary["sheet_json"])["items"] == stored["items"]
    st.sign_in("ann")
    for _ in range(2):  # pages, API answers and the sheet: none masks anything again
        assert st.shown_run(cid)["report"] == stored
        assert json.loads(st.shown_run_json(cid))["report"] == stored
        st.sheets(), st.queue("ann"), st.sheet(cid)
    assert len(calls) == 1


def test_should_fill_in_runs_stored_before_the_artefacts_when_the_store_opens(target, opened, tmp_path, monkeypatch):
    st = opened(target, seed=1)
    cids = [st.import_run(make_run(tmp_path / "runs", lb, seed=lb)).candidate_id for lb in (LABEL, "other.html")]
    made = q(
        st,
        "SELECT r.id, r.masked_json, r.items_collected, s.sheet_json FROM runs r "
        "JOIN run_summaries s ON s.run_id = r.id ORDER BY r.id",
    )
    with st.db.write() as con:  # as a store imported before migrations 0003/0004 left its runs
        con.execute(sa.text("DELETE FROM run_summaries"))
        con.execute(sa.text("UPDATE runs SET masked_json = NULL, items_collected = NULL"))
    st.close()
    calls = _spy_masking(monkeypatch)
    again = opened(target)
    assert len(calls) == 2  # once per run, on opening
    assert (
        q(
            again,
            "SELECT r.id, r.masked_json, r.items_collected, s.sheet_json FROM runs r "
            "JOIN run_summaries s ON s.run_id = r.id ORDER BY r.id",
        )
        == made
    )
    opened(target)  # opening again: nothing to do
    again.sheets()
    [again.shown_run(c) for c in cids]
    assert len(calls) == 2


def test_should_fill_in_a_run_lazily_once_and_write_it_back(target, opened, tmp_path, monkeypatch):
    st = opened(target, seed=1)
    cid = st.import_run(make_run(tmp_path / "runs", LABEL, seed="omega")).candidate_id
    expected = st.shown_run(cid)["report"]
    with st.db.write() as con:  # a run written behind this store's back, after it opened
        con.execute(sa.text("DELETE FROM run_summaries"))
        con.execute(sa.text("UPDATE runs SET masked_json = NULL, items_collected = NULL"))
    st._reports = type(st._reports)(4)  # nothing kept parsed from before
    calls = _spy_masking(monkeypatch)
    assert st.shown_run(cid)["report"] == expected
    assert len(calls) == 1 and q(st, "SELECT items_collected FROM runs")[0]["items_collected"] == len(R.items)
    assert len(q(st, "SELECT run_id FROM run_summaries")) == 1
    st.sheets(), st.shown_run(cid), json.loads(st.shown_run_json(cid))
    assert len(calls) == 1


def test_should_serve_no_full_file_hash_anywhere(target, opened, tmp_path):
    st = opened(target, seed=1)
    run = make_run(tmp_path / "runs", LABEL, seed="omega")
    doc = json.loads((run / "report.json").read_text())
    sha = doc["candidate"]["sha256"]
    doc["items"][AUTO[0]]["evidence"]["note"] = f"file {sha} ({LABEL})"
    (run / "report.json").write_text(json.dumps(doc))
    (run / "notes.txt").write_text(f"served {sha.upper()} as {LABEL}\n")
    cid = st.import_run(run).candidate_id
    st.sign_in("ann")
    text = next(f for f in st.shown_run(cid)["files"] if f["name"] == "notes.txt")
    served = st.file(text["id"])
    blobs = [
        json.dumps(st.shown_run(cid), ensure_ascii=False),
        st.shown_run_json(cid),
        to_json(st.sheets(), rank(st.sheets())),
        to_markdown(st.sheets()),
        to_csv(st.sheets()),
        json.dumps(st.queue("ann")),
        st.mask_for_serving(served.read_bytes().decode(), served.candidate_id),
    ]
    for b in blobs:
        assert sha not in b.lower() and "secret-model-omega" not in b
    assert masking.MASK in blobs[-1] and masking.MASK in blobs[1]


# --- run choice ---------------------------------------------------------------------------
def test_should_keep_showing_the_full_run_after_a_partial_rerun(target, opened, tmp_path):
    st = opened(target, seed=1)
    full, partial = _full_and_partial(tmp_path)
    a = st.import_run(full)
    b = st.import_run(partial)
    assert a.candidate_id == b.candidate_id and b.new and b.run_id != a.run_id
    cid = a.candidate_id
    assert st.shown_run(cid)["run_id"] == a.run_id
    assert st.sheet(cid).run_id == a.run_id and st.sheets()[0].run_id == a.run_id
    assert json.loads(st.shown_run_json(cid))["run_id"] == a.run_id
    runs = st.runs_of(cid)
    assert [(r["run_id"], r["items_collected"], r["shown"]) for r in runs["runs"]] == [
        (a.run_id, len(R.items), True),
        (b.run_id, len(R.items) - len(AUTO[2:]), False),
    ]
    assert runs["choice"] is None and "most items" in runs["shown_because"]
    st.sign_in("ann")
    st.submit(cid, "ann", R.id, [{"item": GRADED[0], "level": 75}])
    assert q(st, "SELECT run_id FROM reviews")[0]["run_id"] == a.run_id  # scored on the run shown


def test_should_prefer_the_latest_of_equally_complete_runs(target, opened, tmp_path):
    st = opened(target, seed=1)
    old = st.import_run(make_run(tmp_path / "a", LABEL, seed="omega", started_at="2026-12-01T10:00:00+00:00"))
    new = st.import_run(
        make_run(tmp_path / "b", LABEL, seed="omega", partial=(AUTO[0],), started_at="2026-12-03T10:00:00+00:00")
    )
    assert st.shown_run(old.candidate_id)["run_id"] == new.run_id


def test_should_show_the_run_an_admin_picks_with_a_reason_and_an_audit_row(target, opened, tmp_path):
    st = opened(target, seed=1)
    full, partial = _full_and_partial(tmp_path)
    a, b = st.import_run(full), st.import_run(partial)
    cid = a.candidate_id
    for bad, status in (("", 422), ("  ", 422), ("x" * 3000, 422)):
        with pytest.raises(InvalidReview) as e:
            st.choose_run(cid, b.run_id, "lead", bad)
        assert e.value.status == status
    with pytest.raises(InvalidReview, match="not a run of"):
        st.choose_run(cid, 999999, "lead", "wrong run")
    with pytest.raises(InvalidReview, match="no such candidate") as e:
        st.choose_run("c-000000000000", b.run_id, "lead", "wrong candidate")
    assert e.value.status == 404 and st.audit_trail() == []
    res = st.choose_run(cid, b.run_id, "lead", "the full run's video froze; the re-run's shops are right")
    assert res == {"candidate_id": cid, "shown_run_id": b.run_id, "chosen": True}
    assert st.shown_run(cid)["run_id"] == b.run_id and st.sheet(cid).run_id == b.run_id
    runs = st.runs_of(cid)
    assert runs["shown_because"] == "picked by an admin" and runs["choice"]["by"] == "lead"
    # a newer complete run does not replace the pick either
    c = st.import_run(make_run(tmp_path / "c", LABEL, seed="omega", started_at="2026-12-03T10:00:00+00:00"))
    assert st.shown_run(cid)["run_id"] == b.run_id
    st.choose_run(cid, None, "lead", "back to the automatic rule")
    assert st.shown_run(cid)["run_id"] == c.run_id
    trail = st.audit_trail(cid)
    assert [(t["actor"], t["action"]) for t in trail] == [("lead", "run.choose"), ("lead", "run.choice_cleared")]
    assert json.loads(trail[0]["detail"]) == {
        "run_id": b.run_id,
        "reason": "the full run's video froze; the re-run's shops are right",
        "shown_before": a.run_id,
        "shown_now": b.run_id,
    }
    st.finalize(cid, "lead")
    with pytest.raises(InvalidReview, match="finalised") as e:
        st.choose_run(cid, a.run_id, "lead", "too late")
    assert e.value.status == 409


# --- thumbnails -----------------------------------------------------------------------------
def test_should_make_thumbnails_at_import(target, opened, tmp_path):
    st = opened(target, seed=1)
    run = make_run(tmp_path / "runs", LABEL, seed="omega")
    big = np.zeros((1080, 1920, 4), np.uint8)
    cv2.rectangle(big, (100, 100), (1800, 900), (40, 200, 90, 255), -1)
    cv2.imwrite(str(run / "keyframes" / "t30.png"), big)
    (run / "broken.png").write_bytes(b"\x89PNG not really")
    cid = st.import_run(run).candidate_id
    files = {f["name"]: f for f in st.shown_run(cid)["files"]}
    t = {r["file_id"]: r for r in q(st, "SELECT file_id, width, height, mime FROM thumbnails")}
    assert (t[files["keyframes/t30.png"]["id"]]["width"], t[files["keyframes/t30.png"]["id"]]["height"]) == (480, 270)
    assert (t[files["keyframes/t20.png"]["id"]]["width"]) == 160  # never enlarged
    assert files["keyframes/t30.png"]["thumb"] and not files["broken.png"]["thumb"]
    assert not files["recording.webm"]["thumb"]
    thumb = st.thumbnail(files["keyframes/t30.png"]["id"])
    assert thumb.mime == "image/webp"
    img = cv2.imdecode(np.frombuffer(thumb.read_bytes(), np.uint8), cv2.IMREAD_UNCHANGED)
    assert img.shape == (270, 480, 4) and tuple(img[135, 240]) == (40, 200, 90, 255)
    assert len(thumb.read_bytes()) < (run / "keyframes" / "t30.png").stat().st_size
    # no thumbnail: the file itself
    assert st.thumbnail(files["broken.png"]["id"]).path.name == "broken.png"


def test_should_make_a_missing_thumbnail_once_and_write_it_back(target, opened, tmp_path, monkeypatch):
    st = opened(target, seed=1)
    cid = st.import_run(make_run(tmp_path / "runs", LABEL, seed="omega")).candidate_id
    fid = next(f["id"] for f in st.shown_run(cid)["files"] if f["name"] == "frame_pacing.png")
    with st.db.write() as con:  # as a run stored before thumbnails existed
        con.execute(sa.text("DELETE FROM thumbnails"))
    made = []
    real = artefacts.thumbnail
    monkeypatch.setattr("skycity_bench.store.runs.thumbnail", lambda data: made.append(1) or real(data))
    first, second = st.thumbnail(fid), st.thumbnail(fid)
    assert first.mime == second.mime == "image/webp" and first.read_bytes() == second.read_bytes()
    assert len(made) == 1 and len(q(st, "SELECT file_id FROM thumbnails")) == 1


# --- batched: a fixed number of queries however many candidates ---------------------------
def _statements(st, fn):
    n = []

    def count(*_a, **_k):
        n.append(1)

    sa.event.listen(st.db.engine, "before_cursor_execute", count)
    try:
        fn()
    finally:
        sa.event.remove(st.db.engine, "before_cursor_execute", count)
    return len(n)


def test_should_read_every_sheet_and_the_queue_in_a_fixed_number_of_queries(target, opened, tmp_path):
    st = opened(target, seed=1)
    st.sign_in("ann")
    counts = []
    for k in range(6):
        cid = st.import_run(make_run(tmp_path / "runs", f"m{k}.html", seed=f"s{k}")).candidate_id
        st.submit(cid, "ann", R.id, [{"item": i, "level": 75} for i in GRADED])
        if k in (1, 5):
            counts.append(
                (
                    _statements(st, st.sheets),
                    _statements(st, lambda: st.queue("ann")),
                    _statements(st, lambda: st.graded_items("ann")),
                )
            )
    assert counts[0][0] > 0 and counts[0] == counts[1], counts


def test_should_mask_every_name_the_queue_knows_the_file_by(target, opened, tmp_path):
    """The same bytes queued under two names: a run made under one is masked for both."""
    st = opened(target, seed=1)
    run = make_run(tmp_path / "runs", LABEL, seed="omega")
    doc = json.loads((run / "report.json").read_text())
    doc["items"][AUTO[0]]["evidence"]["note"] = "also queued as twin-model-kappa.html"
    (run / "report.json").write_text(json.dumps(doc))
    (run / "twin-model-kappa.txt").write_text("twin-model-kappa\n")
    with st.db.write() as con:
        con.execute(
            sa.text(
                "INSERT INTO queue_candidates (id, sha256, html, labels, created_at) VALUES (:c, :s, :h, :l, 'now')"
            ),
            {
                "c": doc["candidate"]["id"],
                "s": doc["candidate"]["sha256"],
                "h": b"<html>",
                "l": json.dumps([LABEL, "twin-model-kappa.html"]),
            },
        )
    cid = st.import_run(run).candidate_id
    served = st.shown_run(cid)
    blob = json.dumps(served, ensure_ascii=False) + st.shown_run_json(cid)
    assert "twin-model-kappa" not in blob and "secret-model-omega" not in blob
    f = st.file(next(x["id"] for x in served["files"] if x["name"].endswith(".txt")))
    assert st.mask_for_serving(f.read_bytes().decode(), f.candidate_id) == f"{masking.MASK}\n"


def test_should_not_decode_an_image_whose_header_claims_too_many_pixels():
    ok, png = cv2.imencode(".png", np.zeros((100, 200, 3), np.uint8))
    png = png.tobytes()
    assert artefacts.thumbnail(png).width == 200
    bomb = png[:16] + (100_000).to_bytes(4, "big") + (100_000).to_bytes(4, "big") + png[24:]
    assert artefacts.thumbnail(bomb) is None
