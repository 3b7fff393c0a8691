"""A batch's round manifest (`run PATH... --manifest round.csv`, batch/batch_round.py): each
row names a file of the batch by path (as given, or from the manifest's folder), bare name,
bench id or sha256; the places are checked before anything runs, kept in batch.json and
written to OUT/manifest.csv keyed by bench id for `import --manifest`. And import's side: a
bare file name that several stored candidates share is refused, never guessed.

No browser: the batch is planned, not run (tests/e2e/test_leaderboard_review.py runs a round
through the CLI and imports it with the manifest the batch wrote)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skycity_bench.batch.batch_round import ROUND_CSV, record_round, resolve_round
from skycity_bench.batch.batch_run import Batch, BatchOptions, discover
from skycity_bench.cli import app
from skycity_bench.common.errors import UserError
from skycity_bench.inputs.demo_file import candidate_id
from skycity_bench.inputs.round_manifest import Manifest, manifest_csv, parse_manifest, read_manifest
from skycity_bench.store.manifests import apply_manifest, manifests
from skycity_bench.store.review_store import ReviewStore
from tests.review_reports import make_run

# (path under the round folder, a mark that makes its bytes its own)
FILES = (
    ("atlas/harbour-1.html", "a1"),
    ("beacon/harbour-1.html", "b1"),
    ("beacon/night-1.html", "b2"),
    ("cinder/canyon-1.html", "c1"),
    ("cinder/canyon-2.html", "c2"),
)
HEAD = "file,system,prompt,sample,tags\n"


def _demo(mark: str) -> bytes:
    return f"<!doctype html><title>{mark}</title><canvas></canvas><script>/* {mark} */</script>\n".encode()


def _sha(mark: str) -> str:
    return hashlib.sha256(_demo(mark)).hexdigest()


@pytest.fixture()
def round_dir(tmp_path, monkeypatch) -> Path:
    """A round folder of five demos (two share the name harbour-1.html), the cwd its parent."""
    monkeypatch.chdir(tmp_path)
    for rel, mark in FILES:
        (tmp_path / "round" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "round" / rel).write_bytes(_demo(mark))
    return tmp_path / "round"


def _resolve(round_dir: Path, text: str) -> dict[str, Manifest]:
    (round_dir / "m.csv").write_text(HEAD + text, encoding="utf-8")
    files, _ = discover(["round"])
    return resolve_round(read_manifest(round_dir / "m.csv"), files, round_dir, "m.csv")


def test_should_place_files_named_by_path_name_bench_id_or_sha256(round_dir):
    places = _resolve(
        round_dir,
        "atlas/harbour-1.html,atlas v1,harbour,1,r7\n"  # from the manifest's folder
        "round/beacon/harbour-1.html,beacon v2,harbour,1,\n"  # as the batch found it
        "night-1.html,beacon v2,night,1,\n"  # the only file of that name
        f"{candidate_id(_sha('c1'))},cinder v0,canyon,1,\n"
        f"{_sha('c2')},cinder v0,canyon,2,\n",
    )
    assert places == {
        candidate_id(_sha("a1")): Manifest("atlas v1", "harbour", "1", ("r7",)),
        candidate_id(_sha("b1")): Manifest("beacon v2", "harbour", "1"),
        candidate_id(_sha("b2")): Manifest("beacon v2", "night", "1"),
        candidate_id(_sha("c1")): Manifest("cinder v0", "canyon", "1"),
        candidate_id(_sha("c2")): Manifest("cinder v0", "canyon", "2"),
    }


def test_should_refuse_a_row_that_names_no_file_or_a_name_two_files_share(round_dir):
    with pytest.raises(UserError, match="harbour-1.html names 2 different files of the batch; give its path"):
        _resolve(round_dir, "harbour-1.html,atlas v1,harbour,1,\n")
    with pytest.raises(UserError, match="nope.html names no file of the batch"):
        _resolve(round_dir, "nope.html,atlas v1,harbour,1,\n")


def test_should_refuse_identical_files_given_different_places(round_dir):
    (round_dir / "copy.html").write_bytes(_demo("a1"))
    same = "atlas/harbour-1.html,atlas v1,harbour,1,\ncopy.html,atlas v1,harbour,1,\n"
    assert list(_resolve(round_dir, same).values()) == [Manifest("atlas v1", "harbour", "1")]
    with pytest.raises(UserError, match="copy.html holds the same bytes as another row's file"):
        _resolve(round_dir, "atlas/harbour-1.html,atlas v1,harbour,1,\ncopy.html,atlas v1,harbour,2,\n")


def test_should_keep_the_places_in_the_plan_and_write_the_csv_by_bench_id(round_dir, tmp_path):
    files, _ = discover(["round"])
    b = Batch(tmp_path / "out", BatchOptions())
    try:
        b.plan(files)
        first = _resolve(round_dir, "atlas/harbour-1.html,atlas v1,harbour,1,r7;x\nnight-1.html,beacon v2,night,1,\n")
        path, unplaced = record_round(b.manifest, first, b.out)
        assert path == b.out / ROUND_CSV and unplaced == 3
        assert read_manifest(path) == first  # keyed by bench id, the run folders' names
        # a resumed batch given more rows keeps the earlier places
        more = _resolve(round_dir, f"{_sha('c1')},cinder v0,canyon,1,\n")
        _, unplaced = record_round(b.manifest, more, b.out)
        assert unplaced == 2 and read_manifest(path) == {**first, **more}
        cid = candidate_id(_sha("a1"))
        assert b.manifest["candidates"][cid]["round"] == {
            "system": "atlas v1",
            "prompt": "harbour",
            "sample": "1",
            "tags": ["r7", "x"],
        }
    finally:
        b.close()


def test_should_refuse_a_bad_manifest_before_the_batch_writes_anything(round_dir, tmp_path):
    (round_dir / "bad.csv").write_text(HEAD + "nope.html,atlas v1,harbour,1,\n", encoding="utf-8")
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["run", "round", "--out", str(out), "--manifest", str(round_dir / "bad.csv")])
    assert isinstance(res.exception, UserError) and "nope.html names no file of the batch" in str(res.exception)
    assert not out.exists()
    single = ["run", "round/beacon/night-1.html", "--out", str(out), "--manifest", str(round_dir / "bad.csv")]
    res = CliRunner().invoke(app, single)
    assert isinstance(res.exception, UserError) and str(res.exception).startswith("--manifest: for a batch")
    assert not out.exists()


def test_should_refuse_at_import_a_file_name_that_several_candidates_share(tmp_path):
    runs = [make_run(tmp_path / k, f"{k}/harbour-1.html", seed=k) for k in ("atlas", "beacon")]
    store = ReviewStore(tmp_path / "db.sqlite")
    try:
        for r in runs:
            store.import_run(r)
        with pytest.raises(UserError, match="harbour-1.html is the file name of 2 stored candidates"):
            apply_manifest(store, parse_manifest(HEAD + "harbour-1.html,atlas v1,harbour,1,\n"), "test")
        assert manifests(store) == {}
        apply_manifest(store, parse_manifest(HEAD + "atlas/harbour-1.html,atlas v1,harbour,1,\n"), "test")
        assert [m.system for m in manifests(store).values()] == ["atlas v1"]
    finally:
        store.close()


def test_should_write_a_csv_that_reads_back_with_commas_quotes_and_tags():
    rows = {"c-0123456789ab": Manifest('gpt "x", 2026', "p,1", "1", ("a", "b c"))}
    assert parse_manifest(manifest_csv(rows)) == rows
