"""The leaderboard from the review store: manifests given at import (stored admins only),
each run's total = automated items + finalised manual items, per rubric row as groups, runs
of the same file as repeated measurements, and the refusals (empty store, no manifest, one
prompt, nothing finalised, unlike environments) as one-line messages with exit 2.

The round is 3 systems × 3 prompts × 2 samples built with tests/review_reports.make_run (the
real report model; no browser): the systems differ by which automated items only partly pass
and by the level both reviewers give; one candidate is measured twice."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skycity_bench.cli import app
from skycity_bench.common.errors import UserError
from skycity_bench.inputs.rubric import load_rubric
from skycity_bench.store.leaderboard_rows import store_board, store_rows
from skycity_bench.store.manifests import Manifest, manifests, parse_manifest
from skycity_bench.store.review_store import ReviewStore
from tests.review_reports import ENV, make_run

R = load_rubric()
GRADED = [i.id for i in R.items if i.graded]
AUTO = [i.id for i in R.items if not i.graded]
SYSTEMS = {"model-a v1": (100, ()), "model-b v2": (75, tuple(AUTO[:3])), "model-c v1": (50, tuple(AUTO[:8]))}
PROMPTS = ("p-harbour", "p-night", "p-canyon")
REVIEWERS = ("ann", "bob")


def _label(system: str, prompt: str, sample: int) -> str:
    return f"{system.split()[0]}-{prompt}-s{sample}.html"


def build_round(root: Path, db: Path | str, *, finalise: bool = True, env: dict | None = None) -> Path | str:
    """Runs, a manifest CSV and a store (imported through the CLI with --manifest), both
    reviewers grading every manual item, and the admin finalising each sheet."""
    runs, lines = [], ["file,system,prompt,sample,tags"]
    for system, (_level, partial) in SYSTEMS.items():
        for prompt in PROMPTS:
            for sample in (1, 2):
                label = _label(system, prompt, sample)
                seed = f"{system}|{prompt}|{sample}"
                runs.append(make_run(root / "runs", label, seed=seed, partial=partial, env=env))
                lines.append(f"{label},{system},{prompt},{sample},round-1;demo")
    # the same file measured again (a repeat run): a second report of one candidate
    runs.append(
        make_run(
            root / "again",
            _label("model-a v1", PROMPTS[0], 1),
            seed="model-a v1|p-harbour|1",
            started_at="2026-12-02T11:00:00+00:00",
            env=env,
        )
    )
    (root / "manifest.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    res = CliRunner().invoke(
        app, ["import", *map(str, runs), "--db", str(db), "--no-html", "--manifest", str(root / "manifest.csv")]
    )
    assert res.exit_code == 0, res.output
    assert "manifest: 18 candidates, 3 systems, 3 prompts" in res.output
    store = ReviewStore(db)
    try:
        by_cid = manifests(store)
        for name in REVIEWERS:
            store.sign_in(name)
        for cid, m in by_cid.items():
            level = SYSTEMS[m.system][0]
            for name in REVIEWERS:
                store.submit(cid, name, R.id, [{"item": i, "level": level} for i in GRADED])
            if finalise:
                store.finalize(cid, "admin")
    finally:
        store.close()
    return db


@pytest.fixture(scope="module")
def round_db(tmp_path_factory) -> Path | str:
    root = tmp_path_factory.mktemp("round")
    return build_round(root, root / "db.sqlite")


@pytest.fixture()
def store(round_db, tmp_path):
    shutil.copy(round_db, tmp_path / "db.sqlite")
    st = ReviewStore(tmp_path / "db.sqlite")
    yield st
    st.close()


def invoke(*args: object):
    return CliRunner().invoke(app, ["leaderboard", *(str(a) for a in args)])


def test_should_parse_the_manifest_and_refuse_bad_rows_naming_the_line():
    got = parse_manifest("file,system,prompt,sample,tags\na.html,m v1,p1,1,x; y\n")
    assert got == {"a.html": Manifest("m v1", "p1", "1", ("x", "y"))}
    with pytest.raises(UserError, match="missing column"):
        parse_manifest("file,system\na,b\n")
    with pytest.raises(UserError, match="line 3: empty prompt"):
        parse_manifest("file,system,prompt,sample\na,m,p,1\nb,m,,1\n")
    with pytest.raises(UserError, match="listed twice"):
        parse_manifest("file,system,prompt,sample\na,m,p,1\na,m,p,2\n")


def test_should_refuse_a_manifest_naming_no_stored_candidate(tmp_path):
    run = make_run(tmp_path / "runs", "x-model.html", seed="x")
    (tmp_path / "m.csv").write_text("file,system,prompt,sample\nnot-there.html,m,p,1\n")
    res = CliRunner().invoke(
        app,
        ["import", str(run), "--db", str(tmp_path / "db.sqlite"), "--no-html", "--manifest", str(tmp_path / "m.csv")],
    )
    assert isinstance(res.exception, UserError) and "not-there.html" in str(res.exception)


def test_should_give_one_row_per_run_with_totals_and_row_groups(store):
    data = store_rows(store)
    assert len(data.rows) == 19 and data.without_manifest == 0
    repeated = [r for r in data.rows if (r.system, r.prompt, r.sample) == ("model-a v1", "p-harbour", "1")]
    assert sorted(r.run for r in repeated) == ["1", "2"]
    full = max(r.total for r in data.rows if r.total is not None)
    assert full == pytest.approx(100.0)  # every automated item passed, every grade excellent
    assert {g for r in data.rows for g in r.groups} == {row.id for row in R.row_groups()}
    for r in data.rows:
        assert r.total == pytest.approx(sum(v for v in r.groups.values() if v is not None), abs=0.06)


def test_should_rank_the_systems_in_their_true_order(store):
    res = store_board(store, resamples=500, seed=3)
    assert [s.system for s in res.board.systems] == list(SYSTEMS)
    assert all(s.prompts == 3 and s.samples == 6 for s in res.board.systems)
    assert all(p.separated for p in res.board.pairs)
    assert res.notes == [] and not res.mixed_environments


def test_should_count_a_candidate_not_finalised_as_missing_never_zero(tmp_path):
    root = tmp_path
    db = build_round(root, root / "db.sqlite", finalise=False)
    st = ReviewStore(db)
    try:
        cids = sorted(manifests(st))
        for cid in cids[:-1]:
            st.finalize(cid, "admin")
        res = store_board(st, resamples=200)
    finally:
        st.close()
    assert sum(s.missing_candidates for s in res.board.systems) == 1
    assert any("still missing reviews" in n for n in res.notes)
    assert all(s.total.mean is not None and s.total.mean > 40 for s in res.board.systems)


def test_should_print_the_table_json_csv_and_figure_from_the_store(round_db, tmp_path):
    res = invoke("--db", round_db, "--resamples", 300, "--seed", 5)
    assert res.exit_code == 0, res.output
    assert "model-a v1" in res.stdout and "pairwise differences" in res.stdout
    res = invoke("--db", round_db, "--format", "json", "--resamples", 300, "--seed", 5, "--figure", tmp_path / "f.png")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert (doc["seed"], doc["resamples"], doc["mixed_environments"]) == (5, 300, False)
    assert [s["system"] for s in doc["systems"]] == list(SYSTEMS)
    assert (tmp_path / "f.png").read_bytes().startswith(b"\x89PNG")
    res = invoke("--db", round_db, "--format", "csv", "--resamples", 300)
    assert [r["system"] for r in csv.DictReader(res.stdout.splitlines())] == list(SYSTEMS)


def _refusal(*args: object) -> str:
    """The message of a refusal: a UserError of one line (the CLI prints it, exits 2)."""
    res = invoke(*args)
    assert isinstance(res.exception, UserError), res.output
    assert "\n" not in str(res.exception)
    return str(res.exception)


def test_should_refuse_an_empty_store_no_manifest_and_a_single_prompt(tmp_path):
    st = ReviewStore(tmp_path / "empty.sqlite")
    st.close()
    assert "no candidates" in _refusal("--db", tmp_path / "empty.sqlite")
    done = subprocess.run(
        [sys.executable, "-m", "skycity_bench", "leaderboard", "--db", str(tmp_path / "empty.sqlite")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "no candidates" in done.stderr and "Traceback" not in done.stderr
    _refusal("--db", tmp_path / "absent.sqlite")
    run = make_run(tmp_path / "runs", "solo-model.html", seed="solo")
    st = ReviewStore(tmp_path / "one.sqlite")
    st.import_run(run)
    st.close()
    assert "no candidate has a manifest" in _refusal("--db", tmp_path / "one.sqlite")
    (tmp_path / "m.csv").write_text("file,system,prompt,sample\nsolo-model.html,m v1,p1,1\n")
    res = CliRunner().invoke(
        app,
        ["import", str(run), "--db", str(tmp_path / "one.sqlite"), "--no-html", "--manifest", str(tmp_path / "m.csv")],
    )
    assert res.exit_code == 0, res.output
    assert "one prompt (p1)" in _refusal("--db", tmp_path / "one.sqlite")
    assert "exactly one of" in _refusal("--db", tmp_path / "one.sqlite", "--scores", tmp_path / "m.csv")
    assert "exactly one of" in _refusal()


def test_should_refuse_when_nothing_is_finalised(tmp_path):
    db = build_round(tmp_path, tmp_path / "db.sqlite", finalise=False)
    assert "missing reviews" in _refusal("--db", db)


def test_should_refuse_unlike_environments_unless_allowed_and_then_say_so(store, tmp_path):
    other = make_run(tmp_path / "odd", "odd-model.html", seed="odd", env={**ENV, "cpu_model": "another cpu"})
    store.import_run(other)
    (tmp_path / "m.csv").write_text("file,system,prompt,sample\nodd-model.html,model-b v2,p-night,3\n")
    from skycity_bench.store.manifests import apply_manifest, read_manifest

    apply_manifest(store, read_manifest(tmp_path / "m.csv"), "test")
    db = store.path
    store.close()
    msg = _refusal("--db", db)
    assert "unlike environments" in msg and "cpu_model" in msg and "--allow-mixed-env" in msg
    res = invoke("--db", db, "--allow-mixed-env", "--format", "json", "--resamples", 200)
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["mixed_environments"] is True and any("cpu_model" in n for n in doc["notes"])
    assert "MIXED ENVIRONMENTS" in invoke("--db", db, "--allow-mixed-env", "--resamples", 200).stdout


def test_should_give_the_same_leaderboard_from_a_postgresql_store(pg_url, round_db, tmp_path):
    build_round(tmp_path, pg_url)
    docs = [
        json.loads(invoke("--db", db, "--format", "json", "--resamples", 300, "--seed", 9).stdout)
        for db in (pg_url, round_db)
    ]
    assert [s["system"] for s in docs[0]["systems"]] == list(SYSTEMS)
    assert docs[0] == docs[1]
