"""The offline library cache and its fetches on demand, on the fake clock, in a real
Chromium with the network closed: a release missing from the offline cache is named with the
command that adds it; one the registry cannot provide is blocked with one line while the run
goes on; `run --no-fetch` keeps the cache frozen. Nothing here reads a real-time figure or a
picture (the packaging probe steps the fake clock and judges the network log), so these run
in the parallel pass; the runs whose frame-pacing pass is compared and the pictures of
cached libraries are test_cache_cdn.py, in the real-time pass."""

from __future__ import annotations

import base64
import json

import pytest

from skycity_bench.cache import LibraryCache
from skycity_bench.judging.scorers import all_scorers
from tests.probes.test_cache_cdn import CDN, MISSING, _probes, _require_seeded_cache, _split, _three_registry
from tests.truth import Fixture, print_table, run_fixture

pytestmark = pytest.mark.browser


def test_should_name_the_missing_release_and_the_command_that_adds_it(tmp_path, monkeypatch):
    _require_seeded_cache()
    if LibraryCache().has("three", "0.149.0"):
        pytest.fail(
            "three@0.149.0 is in the offline cache: this fixture needs it absent "
            "(`skycity-bench cache remove three@0.149.0`)"
        )
    monkeypatch.setenv("SKYCITY_NPM_REGISTRY", "http://127.0.0.1:9")  # offline: nothing listens there
    report = run_fixture(MISSING, tmp_path / "missing", probes=_probes(MISSING))
    rows, _ = _split(MISSING, report)
    table = print_table(MISSING.name, rows)
    assert all(ok for *_, ok in rows), table
    want = "three@0.149.0 is not in the offline cache: run `skycity-bench cache add three@0.149.0`"
    assert report["probes"]["network"]["data"]["requests"][0]["detail"] == want
    assert f"offline library cache: {want}" in report["warnings"]
    # the run tried the registry (once), found it unreachable and kept the message
    net = report["probes"]["network"]["data"]
    assert net["fetched"] == [] and [f["outcome"] for f in net["fetch_failed"]] == ["unreachable"]
    assert [w for w in report["warnings"] if "offline library cache" in w] == [f"offline library cache: {want}"]


_UNFETCHABLE = """<!doctype html><html><head><meta charset="utf-8">
<script type="importmap">{ "imports": {
  "three": "https://unpkg.com/three@0.153.0/build/three.module.js",
  "nolib": "https://cdn.jsdelivr.net/npm/skycity-no-such-lib@1.0.0/index.js" } }</script>
</head><body><script>
window.__fixtureTruth = { classic: true };
requestAnimationFrame(function f() { requestAnimationFrame(f); });
</script>
<script type="module">import * as THREE from 'three'; window.__three = THREE.REVISION;</script>
<script type="module">import 'nolib';</script>
</body></html>"""


def test_should_block_with_one_line_a_release_the_registry_cannot_provide(tmp_path, monkeypatch):
    store = _require_seeded_cache()
    reg = _three_registry(store, "0.153.0", integrity="sha512-" + base64.b64encode(b"x" * 64).decode())
    monkeypatch.setenv("SKYCITY_NPM_REGISTRY", reg.url)
    monkeypatch.setenv("SKYCITY_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("SKYCITY_NO_FETCH", raising=False)
    (tmp_path / "d.html").write_text(_UNFETCHABLE, encoding="utf-8")
    try:
        report = run_fixture(Fixture(html=tmp_path / "d.html", truth={}), tmp_path / "run", probes=["packaging"])
    finally:
        reg.close()
    assert not LibraryCache(tmp_path / "cache").has("three", "0.153.0")  # a bad tarball stores nothing
    assert report["probes"]["packaging"]["status"] == "ok" and not report.get("exit_reason")  # the run went on
    net = report["probes"]["network"]["data"]
    by_url = {r["url"]: r for r in net["requests"]}
    three = by_url["https://unpkg.com/three@0.153.0/build/three.module.js"]
    nolib = by_url["https://cdn.jsdelivr.net/npm/skycity-no-such-lib@1.0.0/index.js"]
    assert three["outcome"] == nolib["outcome"] == "blocked"
    assert three["detail"].startswith(
        "three@0.153.0 is not in the offline cache and could not be fetched: the npm "
        "registry's tarball failed its integrity check (tarball sha512 is "
    )
    assert nolib["detail"] == (
        "skycity-no-such-lib@1.0.0 is not in the offline cache and could not be fetched: "
        "no package 'skycity-no-such-lib' on the npm registry"
    )
    lines = [w for w in report["warnings"] if "offline library cache" in w]
    assert lines == [
        f"offline library cache: {three['detail']}",
        f"offline library cache: {nolib['detail']}",
    ] or lines == [f"offline library cache: {nolib['detail']}", f"offline library cache: {three['detail']}"]
    assert {f["outcome"] for f in net["fetch_failed"]} == {"integrity", "not_on_registry"} and net["fetched"] == []
    if "packaging.single_file" in all_scorers():  # charged as any missing dependency
        text = json.dumps(report["items"]["packaging.single_file"]["evidence"], ensure_ascii=False)
        assert "skycity-no-such-lib@1.0.0" in text and "three@0.153.0" in text


def test_run_no_fetch_should_keep_the_cache_frozen_and_the_offline_message(tmp_path, monkeypatch, capsys):
    import sys

    from skycity_bench import cli

    store = _require_seeded_cache()
    reg = _three_registry(store, "0.153.0")
    monkeypatch.setenv("SKYCITY_NPM_REGISTRY", reg.url)  # reachable, but not to be used
    monkeypatch.setenv("SKYCITY_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("SKYCITY_NO_FETCH", "0")  # restored after the test: --no-fetch sets it in-process
    monkeypatch.setenv("COLUMNS", "200")
    demo = tmp_path / "three_153.html"
    demo.write_text(CDN.html.read_text(encoding="utf-8").replace("three@0.160.0", "three@0.153.0"), encoding="utf-8")
    monkeypatch.setattr(
        sys,
        "argv",
        [
            "skycity-bench",
            "run",
            str(demo),
            "--no-fetch",
            "-q",
            "--probe",
            "packaging",
            "--viewport",
            "640x360",
            "-o",
            str(tmp_path / "run"),
        ],
    )
    try:
        with pytest.raises(SystemExit):
            cli.main()
    finally:
        reg.close()
    out = capsys.readouterr()
    report = json.loads((tmp_path / "run" / "report.json").read_text(encoding="utf-8"))
    want = "three@0.153.0 is not in the offline cache: run `skycity-bench cache add three@0.153.0`"
    net = report["probes"]["network"]["data"]
    assert net["misses"][0] == want and net["fetch_enabled"] is False and net["fetched"] == []
    assert not LibraryCache(tmp_path / "cache").has("three", "0.153.0")
    assert "skycity-bench cache add three@0.153.0" in out.out + out.err and "Traceback" not in out.out + out.err
