"""The cache's store and registry fetch: integrity checked before anything is stored,
content-addressed files shared between releases, defensive unpacking. No internet: the
tarballs are built here and the registry is a loopback server."""

from __future__ import annotations

import tarfile

import pytest

from skycity_bench.cache import npm
from skycity_bench.cache.package_store import CacheError, LibraryCache

from ._cache_pkg import Registry, package, sri, tarball


@pytest.fixture()
def store(tmp_path):
    return LibraryCache(tmp_path / "cache")


@pytest.fixture()
def registry(monkeypatch):
    r = Registry()
    monkeypatch.setenv("SKYCITY_NPM_REGISTRY", r.url)
    yield r
    r.close()


def test_should_store_a_release_whose_tarball_matches_the_registry_integrity(store):
    tgz = package("fakelib", "1.0.0", {"dist/a.js": "export const a = 1;\n"})
    rel = npm.install_tarball(store, "fakelib", "1.0.0", tgz, integrity=sri(tgz))
    assert store.has("fakelib", "1.0.0")
    assert set(rel.files) == {"package.json", "dist/a.js"}
    assert store.read_blob(rel.files["dist/a.js"][0]) == b"export const a = 1;\n"
    assert rel.integrity == sri(tgz)


def test_should_refuse_a_tampered_tarball_and_store_nothing(store):
    good = package("fakelib", "1.0.0", {"dist/a.js": "export const a = 1;\n"})
    bad = package("fakelib", "1.0.0", {"dist/a.js": "fetch('https://evil.example/');\n"})
    with pytest.raises(npm.IntegrityError, match="sha512"):
        npm.install_tarball(store, "fakelib", "1.0.0", bad, integrity=sri(good))
    assert not store.has("fakelib", "1.0.0")
    assert not (store.root / "blobs").exists()  # checked before unpacking


def test_should_check_sha1_shasum_when_the_registry_has_no_integrity(store):
    import hashlib

    tgz = package("oldlib", "0.1.0")
    rel = npm.install_tarball(store, "oldlib", "0.1.0", tgz, shasum=hashlib.sha1(tgz).hexdigest())
    assert rel.integrity.startswith("sha1-")
    with pytest.raises(npm.IntegrityError):
        npm.install_tarball(store, "oldlib", "0.1.0", tgz, shasum="0" * 40)
    with pytest.raises(npm.IntegrityError, match="no integrity"):
        npm.install_tarball(store, "oldlib", "0.1.0", tgz)


def test_should_refuse_a_tarball_of_another_package_or_version(store):
    tgz = package("fakelib", "1.0.1")
    with pytest.raises(CacheError, match="not fakelib@1.0.0"):
        npm.install_tarball(store, "fakelib", "1.0.0", tgz, integrity=sri(tgz))


def test_should_reject_paths_that_escape_the_package(store):
    tgz = tarball({"package.json": '{"name":"x","version":"1.0.0"}', "../../etc/evil": "x"})
    with pytest.raises(CacheError, match="unsafe path"):
        npm.install_tarball(store, "x", "1.0.0", tgz, integrity=sri(tgz))


def test_should_skip_links_in_a_tarball(store):
    link = tarfile.TarInfo("package/link.js")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    tgz = tarball({"package.json": '{"name":"x","version":"1.0.0"}'}, extra=[link])
    rel = npm.install_tarball(store, "x", "1.0.0", tgz, integrity=sri(tgz))
    assert "link.js" not in rel.files


def test_should_share_identical_files_between_releases_and_free_them_only_when_unused(store):
    same = {"LICENSE": "MIT\n" * 100}
    a = package("fakelib", "1.0.0", {**same, "a.js": "1"})
    b = package("fakelib", "1.1.0", {**same, "a.js": "2"})
    ra = npm.install_tarball(store, "fakelib", "1.0.0", a, integrity=sri(a))
    rb = npm.install_tarball(store, "fakelib", "1.1.0", b, integrity=sri(b))
    assert ra.files["LICENSE"][0] == rb.files["LICENSE"][0]
    assert store.versions("fakelib") == ["1.0.0", "1.1.0"]
    store.remove("fakelib", "1.0.0")
    assert store.read_blob(rb.files["LICENSE"][0]) == same["LICENSE"].encode()  # still used by 1.1.0
    with pytest.raises(CacheError, match="missing"):
        store.read_blob(ra.files["a.js"][0])
    with pytest.raises(CacheError, match="not in the offline cache"):
        store.remove("fakelib", "1.0.0")


def test_should_never_serve_a_corrupted_blob(store):
    tgz = package("fakelib", "1.0.0", {"a.js": "export default 1;"})
    rel = npm.install_tarball(store, "fakelib", "1.0.0", tgz, integrity=sri(tgz))
    sha = rel.files["a.js"][0]
    (store.root / "blobs" / sha[:2] / sha).write_bytes(b"export default 2;")
    with pytest.raises(CacheError, match="corrupt"):
        store.read_blob(sha)
    assert any("a.js" in p for p in store.verify())


def test_should_fetch_from_the_registry_resolving_ranges_and_tags(store, registry):
    for v in ("1.0.0", "1.2.0", "2.0.0"):
        registry.publish("fakelib", v, package("fakelib", v), latest=(v == "1.2.0"))
    rel, fetched = npm.add(store, "fakelib@^1.0.0")
    assert (rel.version, fetched) == ("1.2.0", True)
    assert npm.add(store, "fakelib@1.2.0") == (store.get("fakelib", "1.2.0"), False)  # no fetch
    assert npm.add(store, "fakelib")[0].version == "1.2.0"  # dist-tag latest
    assert npm.add(store, "fakelib@2")[0].version == "2.0.0"
    assert store.get("fakelib", "2.0.0").tarball.endswith("fakelib-2.0.0.tgz")


def test_should_say_what_is_wrong_when_the_registry_cannot_provide(store, registry):
    tgz = package("fakelib", "1.0.0")
    registry.publish("fakelib", "1.0.0", tgz, integrity=sri(b"something else"))
    with pytest.raises(npm.IntegrityError):
        npm.add(store, "fakelib@1.0.0")
    assert not store.has("fakelib", "1.0.0")
    with pytest.raises(CacheError, match="no release of fakelib matches"):
        npm.add(store, "fakelib@9.9.9")
    with pytest.raises(CacheError, match="no package 'nolib'"):
        npm.add(store, "nolib@1.0.0")
    with pytest.raises(CacheError, match="not an npm package name"):
        npm.split_spec("Not A Name@1.0.0")


def test_should_split_scoped_and_unscoped_specs():
    assert npm.split_spec("three@0.160.0") == ("three", "0.160.0")
    assert npm.split_spec("@tweenjs/tween.js@^23") == ("@tweenjs/tween.js", "^23")
    assert npm.split_spec("three") == ("three", "")
