"""Any CDN version, on demand: what a demo names is found by the packaging audit and the CDN
table, the releases the cache lacks are fetched (integrity-checked) from a loopback
registry, and what the registry cannot provide gets one clear line. No internet: the
packages are built here (tests/unit/_cache_pkg.py)."""

from __future__ import annotations

import pytest

from skycity_bench.browser.network import Resolved
from skycity_bench.cache import npm
from skycity_bench.cache.ondemand import Named, OnDemand, missing, named_in_html, prefetch_demos
from skycity_bench.cache.package_store import LibraryCache
from skycity_bench.cache.resolver import CacheResolver

from ._cache_pkg import Registry, package, sri

LIB = {"build/main.module.js": "export const v = 'lib';\n"}

DEMO = """<!doctype html><html><head>
<script type="importmap">{"imports": {"fakelib": "https://unpkg.com/fakelib@1.1.0/build/main.module.js",
  "fakelib/addons/": "https://cdn.jsdelivr.net/npm/fakelib@1.1.0/examples/jsm/"}}</script>
<script src="//cdn.jsdelivr.net/npm/oldlib@0.1.0/build/main.module.js"></script>
<script src="https://example.com/not-a-cdn.js"></script>
</head><body><script type="module">
import { v } from 'fakelib';
import 'https://esm.sh/otherlib@^2.0.0';
// import 'https://unpkg.com/commented@9.9.9/x.js'   (a comment names nothing)
const later = () => import('https://ga.jspm.io/npm:fakelib@1.1.0/build/main.module.js');
</script></body></html>"""


@pytest.fixture()
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("SKYCITY_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("SKYCITY_NO_FETCH", raising=False)
    return LibraryCache(tmp_path / "cache")


@pytest.fixture()
def registry(monkeypatch):
    r = Registry()
    monkeypatch.setenv("SKYCITY_NPM_REGISTRY", r.url)
    yield r
    r.close()


def _install(store, name, version, files=None):
    tgz = package(name, version, files or LIB)
    npm.install_tarball(store, name, version, tgz, integrity=sri(tgz))


def test_should_find_every_release_the_html_names_through_the_audit_and_the_cdn_table():
    got = {(n.package, n.spec): n.urls for n in named_in_html(DEMO)}
    assert set(got) == {("fakelib", "1.1.0"), ("oldlib", "0.1.0"), ("otherlib", "^2.0.0")}
    assert got[("fakelib", "1.1.0")] == [  # import map (both), dynamic import()
        "https://unpkg.com/fakelib@1.1.0/build/main.module.js",
        "https://cdn.jsdelivr.net/npm/fakelib@1.1.0/examples/jsm/",
        "https://ga.jspm.io/npm:fakelib@1.1.0/build/main.module.js",
    ]
    assert got[("oldlib", "0.1.0")] == ["https://cdn.jsdelivr.net/npm/oldlib@0.1.0/build/main.module.js"]
    cdnjs = '<script src="https://cdnjs.cloudflare.com/ajax/libs/three.js/r153/three.min.js"></script>'
    assert [(n.package, n.spec) for n in named_in_html(cdnjs)] == [("three", "0.153.0")]


def test_should_count_as_missing_only_what_the_resolver_could_not_answer(store):
    _install(store, "fakelib", "1.1.0")
    _install(store, "otherlib", "2.3.0")
    names = named_in_html(DEMO)
    assert [(n.package, n.spec) for n in missing(names, store)] == [("oldlib", "0.1.0")]  # ^2.0.0 -> 2.3.0 cached


def test_should_fetch_an_unseeded_version_and_serve_it_marked_as_fetched_for_this_run(store, registry):
    for v in ("1.0.0", "1.1.0"):
        registry.publish("fakelib", v, package("fakelib", v, LIB))
    _install(store, "fakelib", "1.0.0")  # seeded: another version only
    od = OnDemand(store)
    recs = od.fetch([Named("fakelib", "1.1.0")])
    assert [(r["outcome"], r["version"]) for r in recs] == [("fetched", "1.1.0")]
    assert recs[0]["integrity"] == store.get("fakelib", "1.1.0").integrity
    assert (
        "fakelib@1.1.0 was not in the offline cache: fetched from the npm registry before the run" in recs[0]["detail"]
    )
    assert od.fetch([Named("fakelib", "1.1.0"), Named("fakelib", "1.0.0")]) == []  # cached now: nothing to do
    r = CacheResolver(store, "offline", od)
    got = r("https://unpkg.com/fakelib@1.1.0/build/main.module.js")
    assert isinstance(got, Resolved) and got.body == b"export const v = 'lib';\n"
    assert r.served[0]["fetched_for_this_run"] is True
    assert r.served[0]["cached_at"] == store.get("fakelib", "1.1.0").fetched_at != ""
    r("https://unpkg.com/fakelib@1.0.0/build/main.module.js")
    assert "fetched_for_this_run" not in r.served[1]  # was cached before the run
    assert od.report()["fetched"][0]["package"] == "fakelib" and od.warnings() == [recs[0]["detail"]]


def test_should_give_one_clear_line_for_a_name_the_registry_lacks_and_for_a_bad_tarball(store, registry):
    good = package("fakelib", "1.1.0", LIB)
    registry.publish("fakelib", "1.1.0", good, integrity=sri(b"not these bytes"))
    od = OnDemand(store)
    recs = od.fetch([Named("nolib", "1.0.0"), Named("fakelib", "1.1.0"), Named("fakelib", "7.0.0")])
    assert [r["outcome"] for r in recs] == ["not_on_registry", "integrity", "not_on_registry"]
    assert not store.has("fakelib", "1.1.0")  # nothing stored from a bad tarball
    r = CacheResolver(store, "offline", od)
    lines = [
        r(u)
        for u in (
            "https://unpkg.com/nolib@1.0.0/index.js",
            "https://unpkg.com/fakelib@1.1.0/build/main.module.js",
            "https://esm.sh/fakelib@7.0.0",
        )
    ]
    assert lines == [
        "nolib@1.0.0 is not in the offline cache and could not be fetched: no package 'nolib' on the npm registry",
        "fakelib@1.1.0 is not in the offline cache and could not be fetched: the npm registry's tarball failed its "
        "integrity check (" + recs[1]["detail"].split("integrity check (", 1)[1],
        "fakelib@7.0.0 is not in the offline cache and could not be fetched: no release of fakelib matches '7.0.0' "
        "on the npm registry",
    ]
    assert all("\n" not in line for line in lines) and "nothing was stored" in lines[1]
    assert "tarball sha512 is" in lines[1]


def test_should_keep_the_offline_message_and_try_the_registry_once_when_it_is_unreachable(store, monkeypatch):
    monkeypatch.setenv("SKYCITY_NPM_REGISTRY", "http://127.0.0.1:9")  # nothing listens there
    od = OnDemand(store)
    recs = od.fetch([Named("fakelib", "1.1.0"), Named("otherlib", "2.0.0")])
    assert [r["outcome"] for r in recs] == ["unreachable", "unreachable"]
    assert recs[1]["detail"].startswith("not tried: ")  # one attempt per run, not one per name
    r = CacheResolver(store, "offline", od)
    assert (
        r("https://unpkg.com/fakelib@1.1.0/build/main.module.js")
        == "fakelib@1.1.0 is not in the offline cache: run `skycity-bench cache add fakelib@1.1.0`"
    )
    assert od.warnings() == []


def test_should_not_fetch_when_the_operator_froze_the_cache(store, registry, monkeypatch):
    registry.publish("fakelib", "1.1.0", package("fakelib", "1.1.0", LIB))
    monkeypatch.setenv("SKYCITY_NO_FETCH", "1")
    od = OnDemand(store)
    assert od.fetch([Named("fakelib", "1.1.0")]) == [] and not store.has("fakelib", "1.1.0")
    assert od.report() == {"fetch_enabled": False, "fetched": [], "fetch_failed": []}
    assert (
        CacheResolver(store, "offline", od)("https://unpkg.com/fakelib@1.1.0/x.js")
        == "fakelib@1.1.0 is not in the offline cache: run `skycity-bench cache add fakelib@1.1.0`"
    )


def test_should_fetch_a_run_time_miss_after_the_run_for_the_next_one(store, registry):
    registry.publish("fakelib", "1.1.0", package("fakelib", "1.1.0", LIB))
    od = OnDemand(store)
    od.prefetch_html("<html><body><script>const v = '1.1.0'; import(`https://unpkg.com/fakelib@${v}/x.js`)</script>")
    assert od.records == []  # a computed URL names nothing literally
    r = CacheResolver(store, "offline", od)
    url = "https://unpkg.com/fakelib@1.1.0/build/main.module.js"
    assert r(url).startswith("fakelib@1.1.0 is not in the offline cache")  # the run itself: the frozen cache
    warnings = od.after_run([r])
    assert store.has("fakelib", "1.1.0")
    assert warnings == [
        f"fakelib@1.1.0 was asked for at run time (its URL is not written literally in the HTML, "
        f"e.g. {url}), so this run measured without it; it is now cached: run again to measure with it"
    ]
    assert od.report()["fetched"][0]["when"] == "after the run"


def test_should_prefetch_what_every_demo_names(store, registry, tmp_path):
    registry.publish("fakelib", "1.1.0", package("fakelib", "1.1.0", LIB))
    registry.publish("oldlib", "0.1.0", package("oldlib", "0.1.0", LIB))
    (tmp_path / "a.html").write_text(DEMO)
    (tmp_path / "b.html").write_text(
        '<html><script src="https://unpkg.com/fakelib@1.1.0/build/main.module.js"></script>'
    )
    od, names = prefetch_demos([tmp_path / "a.html", tmp_path / "b.html"], "by `cache prefetch`")
    assert len(names) == 3
    assert {(r["package"], r["outcome"]) for r in od.records} == {
        ("fakelib", "fetched"),
        ("oldlib", "fetched"),
        ("otherlib", "not_on_registry"),
    }


def test_a_batch_should_prefetch_while_planning_unless_the_cache_is_frozen(store, registry, tmp_path, monkeypatch):
    import io

    from rich.console import Console

    from skycity_bench.batch import batch_run as batch

    class Planned:  # what batch._prefetch uses of a planned Batch
        def __init__(self):
            self.manifest, self.saved = {}, 0

        def _save(self):
            self.saved += 1

    registry.publish("fakelib", "1.1.0", package("fakelib", "1.1.0", LIB))
    demo = tmp_path / "a.html"
    demo.write_text(
        '<html><script src="https://unpkg.com/fakelib@1.1.0/build/main.module.js"></script>'
        '<script src="https://unpkg.com/nolib@1.0.0/x.js"></script></html>'
    )
    monkeypatch.setenv("SKYCITY_NO_FETCH", "1")
    b, out = Planned(), io.StringIO()
    batch._prefetch(b, [demo], Console(file=out, width=300))
    assert (b.manifest, b.saved, out.getvalue(), store.has("fakelib", "1.1.0")) == ({}, 0, "", False)
    monkeypatch.delenv("SKYCITY_NO_FETCH")
    batch._prefetch(b, [demo], Console(file=out, width=300))
    assert store.has("fakelib", "1.1.0") and b.saved == 1
    assert [(r["package"], r["outcome"], r["when"]) for r in b.manifest["prefetched"]] == [
        ("fakelib", "fetched", "while planning the batch"),
        ("nolib", "not_on_registry", "while planning the batch"),
    ]
    text = out.getvalue()
    assert "fakelib@1.1.0 was not in the offline cache: fetched from the npm registry while planning the batch" in text
    assert "nolib@1.0.0 is not in the offline cache and could not be fetched: no package 'nolib'" in text


def test_should_fetch_at_most_so_many_releases_per_demo_and_block_the_rest_with_a_line(store, registry, tmp_path):
    from skycity_bench.cache import ondemand

    assert ondemand.MAX_FETCHES_PER_RUN == OnDemand(store).max_fetches
    od = OnDemand(store, max_fetches=2)
    recs = od.fetch([Named(f"lib{i}", "1.0.0") for i in range(3)])
    assert [r["outcome"] for r in recs] == ["not_on_registry", "not_on_registry", "skipped"]
    assert CacheResolver(store, "offline", od)("https://unpkg.com/lib2@1.0.0/x.js") == (
        "lib2@1.0.0 is not in the offline cache and could not be fetched: a run fetches at most 2 releases, "
        "and the demo names more that are missing"
    )
    # per demo: in a batch, one greedy demo does not use up the next demo's share
    demos = []
    for k, names in enumerate((["a1", "a2", "a3"], ["b1"])):
        demos.append(tmp_path / f"d{k}.html")
        demos[-1].write_text(
            "<html>" + "".join(f'<script src="https://unpkg.com/{n}@1.0.0/x.js"></script>' for n in names)
        )
    od, _ = prefetch_demos(demos, "while planning the batch", max_fetches=2)
    assert [(r["package"], r["outcome"]) for r in od.records] == [
        ("a1", "not_on_registry"),
        ("a2", "not_on_registry"),
        ("a3", "skipped"),
        ("b1", "not_on_registry"),
    ]
