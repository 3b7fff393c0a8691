"""`skycity-bench cache add | list | remove | seed | verify`, through the real CLI entry point,
against a loopback registry and a temporary cache folder."""

from __future__ import annotations

import sys

import pytest

from skycity_bench import cli
from skycity_bench.cache.package_store import LibraryCache

from ._cache_pkg import Registry, package


@pytest.fixture()
def env(tmp_path, monkeypatch):
    reg = Registry()
    for v in ("1.0.0", "1.1.0"):
        reg.publish("fakelib", v, package("fakelib", v, {"a.js": f"export default '{v}';"}))
    monkeypatch.setenv("SKYCITY_NPM_REGISTRY", reg.url)
    monkeypatch.setenv("SKYCITY_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("COLUMNS", "200")
    yield reg
    reg.close()


def bench(capsys, monkeypatch, *args) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["skycity-bench", *args])
    code = 0
    try:
        cli.main()
    except SystemExit as e:
        code = e.code or 0
    out = capsys.readouterr()
    return code, out.out + out.err


def test_should_add_list_and_remove_releases(env, capsys, monkeypatch, tmp_path):
    code, out = bench(capsys, monkeypatch, "cache", "add", "fakelib@1.0.0", "fakelib@^1.1.0")
    assert code == 0, out
    assert "added fakelib@1.0.0: 2 files" in out and "added fakelib@1.1.0" in out
    code, out = bench(capsys, monkeypatch, "cache", "add", "fakelib@1.0.0")
    assert (code, "fakelib@1.0.0 is already cached" in out) == (0, True)
    code, out = bench(capsys, monkeypatch, "cache", "list")
    assert code == 0 and "fakelib" in out and "1.0.0" in out and "1.1.0" in out and "sha512-" in out
    code, out = bench(capsys, monkeypatch, "cache", "remove", "fakelib@1.0.0")
    assert code == 0 and "removed fakelib@1.0.0" in out
    assert LibraryCache(tmp_path / "cache").versions("fakelib") == ["1.1.0"]
    code, out = bench(capsys, monkeypatch, "cache", "verify")
    assert code == 0 and "matches its checksum" in out


def test_should_exit_nonzero_naming_what_could_not_be_added(env, capsys, monkeypatch):
    code, out = bench(capsys, monkeypatch, "cache", "add", "fakelib@7.0.0", "fakelib@1.0.0")
    assert code == 1
    assert "no release of fakelib matches '7.0.0'" in out and "added fakelib@1.0.0" in out
    code, out = bench(capsys, monkeypatch, "cache", "remove", "fakelib@^1")
    assert code == 2 and "exact version" in out
    code, out = bench(capsys, monkeypatch, "cache", "remove", "fakelib@1.1.0")
    assert code == 2 and "fakelib@1.1.0 is not in the offline cache" in out


def test_should_seed_from_a_file_and_need_no_registry_once_seeded(env, capsys, monkeypatch, tmp_path):
    seed = tmp_path / "seed.txt"
    seed.write_text("# the releases\nfakelib@1.0.0   # first\n\nfakelib@1.1.0\n")
    code, out = bench(capsys, monkeypatch, "cache", "seed", str(seed))
    assert code == 0 and out.count("added fakelib@") == 2
    monkeypatch.setenv("SKYCITY_NPM_REGISTRY", "http://127.0.0.1:9")  # nothing listens there
    code, out = bench(capsys, monkeypatch, "cache", "seed", str(seed))
    assert code == 0 and out.count("is already cached") == 2
    seed.write_text("fakelib@2.0.0\n")
    code, out = bench(capsys, monkeypatch, "cache", "seed", str(seed))
    assert code == 1 and "1 of 1 could not be added" in out
    code, out = bench(capsys, monkeypatch, "cache", "seed", str(tmp_path / "nope.txt"))
    assert code == 2 and "seed file not found" in out


def test_the_shipped_seed_file_should_pin_exact_three_releases():
    from pathlib import Path

    from skycity_bench.cache import semver
    from skycity_bench.commands.cache import read_seed

    specs = read_seed(Path(__file__).resolve().parents[2] / "scripts" / "cache-seed.txt")
    assert "three@0.160.0" in specs and "three@0.128.0" in specs
    assert all(semver.is_exact(s.rpartition("@")[2]) for s in specs)  # pins, so every machine has the same bytes


def test_should_prefetch_what_the_demos_of_a_folder_or_glob_name(env, capsys, monkeypatch, tmp_path):
    demos = tmp_path / "demos"
    demos.mkdir()
    (demos / "a.html").write_text(
        '<html><script type="importmap">{"imports": {"fakelib": '
        '"https://unpkg.com/fakelib@1.1.0/a.js"}}</script></html>'
    )
    (demos / "b.html").write_text(
        '<html><script type="module">import "https://esm.sh/fakelib@1.0.0/a.js";</script></html>'
    )
    code, out = bench(capsys, monkeypatch, "cache", "prefetch", str(demos))
    assert code == 0, out
    assert "added fakelib@1.1.0: 2 files" in out and "added fakelib@1.0.0" in out
    assert "2 demo(s) name 2 release(s): 2 fetched, 0 already cached, 0 not cached" in out
    code, out = bench(capsys, monkeypatch, "cache", "prefetch", str(demos / "*.html"))
    assert (code, "2 fetched" in out, "2 already cached" in out) == (0, False, True)
    assert LibraryCache(tmp_path / "cache").versions("fakelib") == ["1.0.0", "1.1.0"]


def test_should_prefetch_with_one_line_per_release_that_cannot_be_had(env, capsys, monkeypatch, tmp_path):
    demo = tmp_path / "d.html"
    demo.write_text(
        '<html><script src="https://unpkg.com/nolib@1.0.0/x.js"></script>'
        '<script src="https://unpkg.com/fakelib@1.0.0/a.js"></script></html>'
    )
    code, out = bench(capsys, monkeypatch, "cache", "prefetch", str(demo))
    assert code == 1
    assert (
        "nolib@1.0.0 is not in the offline cache and could not be fetched: no package 'nolib' on the npm registry"
        in out
    )
    assert "added fakelib@1.0.0" in out and "1 fetched, 0 already cached, 1 not cached" in out
    monkeypatch.setenv("SKYCITY_NPM_REGISTRY", "http://127.0.0.1:9")  # nothing listens there
    code, out = bench(capsys, monkeypatch, "cache", "prefetch", str(demo))
    assert code == 1 and "Traceback" not in out
    assert "the npm registry is unreachable (" in out and "not cached: nolib@1.0.0" in out
    code, out = bench(capsys, monkeypatch, "cache", "prefetch", str(tmp_path / "nope.html"))
    assert code == 2 and "no such file" in out
