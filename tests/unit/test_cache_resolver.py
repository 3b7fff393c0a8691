"""The resolver the closed network asks: serves cached files with the right content type and
a note, explains misses with the command that fixes them, rewrites bare imports the way
ES-module CDNs do, and logs every served file for the report. Packages built here."""

from __future__ import annotations

import hashlib

import pytest

from skycity_bench.browser.network import Resolved
from skycity_bench.cache import npm
from skycity_bench.cache.package_store import LibraryCache
from skycity_bench.cache.resolver import CacheResolver

from ._cache_pkg import package, sri

MAIN = "import { helper } from './lib/helper.js';\nimport dep from 'depkg';\nexport const v = helper + dep;\n"
ADDON = "import { v } from 'fakelib';\nimport * as D from \"depkg/sub.js\";\nexport const w = () => import('fakelib/extra.js');\n"


@pytest.fixture()
def store(tmp_path):
    s = LibraryCache(tmp_path / "cache")
    for ver in ("1.0.0", "1.2.0"):
        tgz = package(
            "fakelib",
            ver,
            {
                "build/main.module.js": MAIN,
                "build/lib/helper.js": "export const helper = 1;",
                "build/main.cjs": "module.exports = 1;",
                "examples/jsm/addon.js": ADDON,
                "data/info.json": '{"ok": true}',
                "style.css": "body{}",
                "bin/mod.wasm": b"\0asm".decode(),
            },
            main="./build/main.cjs",
            module="./build/main.module.js",
            exports={
                ".": {"import": "./build/main.module.js", "require": "./build/main.cjs"},
                "./addons/*": "./examples/jsm/*",
            },
            dependencies={"depkg": "^2.0.0"},
        )
        npm.install_tarball(s, "fakelib", ver, tgz, integrity=sri(tgz))
    tgz = package("cjsonly", "1.0.0", {"index.js": "module.exports = 1;"}, main="index.js")
    npm.install_tarball(s, "cjsonly", "1.0.0", tgz, integrity=sri(tgz))
    return s


def test_should_serve_a_cached_file_with_its_content_type_and_a_note(store):
    r = CacheResolver(store)
    got = r("https://unpkg.com/fakelib@1.0.0/build/main.module.js")
    assert isinstance(got, Resolved)
    assert got.body == MAIN.encode()  # a file CDN serves the file as it is
    assert got.content_type == "application/javascript"
    assert got.note.startswith("served from the offline cache: fakelib@1.0.0/build/main.module.js (sha512-")
    for url, ctype in [
        ("https://unpkg.com/fakelib@1.0.0/data/info.json", "application/json"),
        ("https://cdn.jsdelivr.net/npm/fakelib@1.0.0/style.css", "text/css"),
        ("https://unpkg.com/fakelib@1.0.0/bin/mod.wasm", "application/wasm"),
    ]:
        assert r(url).content_type == ctype, url


def test_should_log_each_served_url_once_with_the_bytes_hash(store):
    r = CacheResolver(store)
    url = "https://unpkg.com/fakelib@1.2.0/build/main.module.js"
    r(url), r(url)
    assert len(r.served) == 1
    e = r.served[0]
    assert (e["package"], e["version"], e["path"], e["requests"]) == ("fakelib", "1.2.0", "build/main.module.js", 2)
    assert e["sha256"] == hashlib.sha256(MAIN.encode()).hexdigest()
    assert e["integrity"] == store.get("fakelib", "1.2.0").integrity


def test_should_name_the_missing_release_and_the_command_that_adds_it(store):
    r = CacheResolver(store)
    assert (
        r("https://unpkg.com/three@0.999.0/build/three.module.js")
        == "three@0.999.0 is not in the offline cache: run `skycity-bench cache add three@0.999.0`"
    )
    miss = r("https://esm.sh/fakelib@^3.0.0")
    assert "fakelib@^3.0.0: no release in the offline cache matches (cached: 1.0.0, 1.2.0)" in miss
    assert "`skycity-bench cache add 'fakelib@^3.0.0'`" in miss
    assert r.served == []


def test_should_say_when_an_allowed_request_went_to_the_cdn(store):
    miss = CacheResolver(store, "allow")("https://unpkg.com/three@0.999.0/build/three.module.js")
    assert miss.startswith("three@0.999.0 is not in the offline cache") and "--network allow" in miss


def test_should_pick_the_newest_cached_release_for_unpinned_urls_and_say_so(store):
    got = CacheResolver(store)("https://unpkg.com/fakelib/build/main.module.js")
    assert "fakelib@1.2.0/build/main.module.js" in got.note and "asked for fakelib@(no version)" in got.note
    assert "fakelib@1.0.0/" in CacheResolver(store)("https://unpkg.com/fakelib@~1.0.0/build/main.module.js").note


def test_should_answer_a_missing_file_like_the_cdn_would(store):
    got = CacheResolver(store)("https://unpkg.com/fakelib@1.0.0/build/nope.js")
    assert isinstance(got, str) and "fakelib@1.0.0 has no file build/nope.js" in got


def test_should_serve_the_package_entry_for_a_url_without_a_file(store):
    raw = CacheResolver(store)("https://unpkg.com/fakelib@1.0.0")
    assert "fakelib@1.0.0/build/main.cjs" in raw.note  # unpkg: the main field
    es = CacheResolver(store)("https://esm.sh/fakelib@1.0.0")
    assert "fakelib@1.0.0/build/main.module.js" in es.note  # esm.sh: exports' import
    text = es.body.decode()
    # the entry's relative import points at the file's real folder (the CDN would redirect)
    assert "from 'https://esm.sh/fakelib@1.0.0/build/lib/helper.js'" in text
    assert "from 'https://esm.sh/depkg@^2.0.0'" in text


def test_should_rewrite_bare_imports_back_to_the_same_cdn_and_version(store):
    r = CacheResolver(store)
    text = r("https://esm.sh/fakelib@1.0.0/addons/addon.js").body.decode()
    assert "from 'https://esm.sh/fakelib@1.0.0'" in text  # itself: same version
    assert 'from "https://esm.sh/depkg@^2.0.0/sub.js"' in text  # dependency: its range
    assert "import('https://esm.sh/fakelib@1.0.0/extra.js')" in text
    assert r.served[0]["rewritten_imports"] == ["depkg/sub.js", "fakelib", "fakelib/extra.js"]
    js = r("https://cdn.jsdelivr.net/npm/fakelib@1.0.0/examples/jsm/addon.js/+esm").body.decode()
    assert "from 'https://cdn.jsdelivr.net/npm/fakelib@1.0.0/+esm'" in js
    assert "from 'fakelib'" in r("https://unpkg.com/fakelib@1.0.0/examples/jsm/addon.js").body.decode()


def test_should_leave_esm_sh_externals_bare_and_honour_pinned_deps(store):
    r = CacheResolver(store)
    text = r("https://esm.sh/fakelib@1.0.0/addons/addon.js?external=fakelib&deps=depkg@2.1.0").body.decode()
    assert "from 'fakelib'" in text and "depkg@2.1.0/sub.js" in text


def test_should_refuse_to_fake_an_esm_conversion_of_commonjs(store):
    got = CacheResolver(store)("https://esm.sh/cjsonly@1.0.0")
    assert isinstance(got, str) and "CommonJS" in got


def test_should_not_answer_urls_outside_the_cdn_table(store):
    assert CacheResolver(store)("https://example.com/fakelib@1.0.0/build/main.module.js") is None


def test_should_serve_real_three_releases_from_the_seeded_cache():
    """The set-up seeds three.js (scripts/cache-seed.txt); this reads that cache, no network."""
    store = LibraryCache()
    if not store.has("three", "0.187.0") or not store.has("three", "0.128.0"):
        pytest.fail(f"the offline cache at {store.root} lacks the seeded three.js releases: run scripts/setup.sh")
    r = CacheResolver(store)
    # r171+ splits the module build; esm.sh's entry must point its relative import at build/
    entry = r("https://esm.sh/three@0.187.0").body.decode()
    assert "'https://esm.sh/three@0.187.0/build/three.core.js'" in entry
    core = r("https://esm.sh/three@0.187.0/build/three.core.js")
    assert isinstance(core, Resolved) and b"REVISION = '187'" in core.body
    classic = r("https://cdnjs.cloudflare.com/ajax/libs/three.js/r128/three.min.js")
    assert isinstance(classic, Resolved) and "three@0.128.0/build/three.min.js" in classic.note
    orbit = r("https://cdn.jsdelivr.net/npm/three@0.128.0/examples/js/controls/OrbitControls.js")
    assert isinstance(orbit, Resolved)
    addon = r("https://esm.sh/three@0.160.0/addons/controls/OrbitControls.js")
    assert "three@0.160.0/examples/jsm/controls/OrbitControls.js" in addon.note
    assert "from 'https://esm.sh/three@0.160.0'" in addon.body.decode()


def test_should_leave_an_undeclared_dependency_unversioned_for_the_cache_to_pick(tmp_path):
    s = LibraryCache(tmp_path / "c")
    tgz = package("solo", "1.0.0", {"index.js": "import x from 'stray';\nexport default x;\n"}, module="index.js")
    npm.install_tarball(s, "solo", "1.0.0", tgz, integrity=sri(tgz))
    text = CacheResolver(s)("https://esm.sh/solo@1.0.0").body.decode()
    assert "from 'https://esm.sh/stray'" in text
    assert "no release in the offline cache matches" in CacheResolver(s)("https://esm.sh/stray")
