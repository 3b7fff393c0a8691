"""The CDN table: which package, version and file each CDN URL asks for, and the npm
semver subset used to pick a cached release."""

from __future__ import annotations

import pytest

from skycity_bench.cache import cdn, semver


@pytest.mark.parametrize(
    "url, want",
    [
        (
            "https://unpkg.com/three@0.160.0/build/three.module.js",
            ("unpkg", "three", "0.160.0", "build/three.module.js", False),
        ),
        ("https://unpkg.com/three@0.160.0", ("unpkg", "three", "0.160.0", "", False)),
        ("https://unpkg.com/three", ("unpkg", "three", "", "", False)),
        (
            "https://unpkg.com/three@0.160.0/examples/jsm/controls/OrbitControls.js?module",
            ("unpkg", "three", "0.160.0", "examples/jsm/controls/OrbitControls.js", True),
        ),
        (
            "https://unpkg.com/@tweenjs/tween.js@23.1.1/dist/tween.esm.js",
            ("unpkg", "@tweenjs/tween.js", "23.1.1", "dist/tween.esm.js", False),
        ),
        (
            "https://cdn.jsdelivr.net/npm/three@0.160.0/build/three.module.js",
            ("jsdelivr", "three", "0.160.0", "build/three.module.js", False),
        ),
        ("https://cdn.jsdelivr.net/npm/three@0.160.0/+esm", ("jsdelivr", "three", "0.160.0", "", True)),
        (
            "https://cdn.jsdelivr.net/npm/three@0.160.0/examples/jsm/controls/OrbitControls.js/+esm",
            ("jsdelivr", "three", "0.160.0", "examples/jsm/controls/OrbitControls.js", True),
        ),
        (
            "https://cdn.jsdelivr.net/gh/mrdoob/three.js@r160/build/three.module.js",
            ("jsdelivr-gh", "three", "0.160.0", "build/three.module.js", False),
        ),
        ("https://esm.sh/three@0.160.0", ("esm.sh", "three", "0.160.0", "", True)),
        (
            "https://esm.sh/v135/three@0.160.0/addons/controls/OrbitControls.js?bundle",
            ("esm.sh", "three", "0.160.0", "addons/controls/OrbitControls.js", True),
        ),
        ("https://cdn.skypack.dev/three@0.160.0", ("skypack", "three", "0.160.0", "", True)),
        (
            "https://ga.jspm.io/npm:three@0.160.0/build/three.module.js",
            ("jspm", "three", "0.160.0", "build/three.module.js", False),
        ),
        (
            "https://cdnjs.cloudflare.com/ajax/libs/three.js/r128/three.min.js",
            ("cdnjs", "three", "0.128.0", "three.min.js", False),
        ),
        (
            "https://cdnjs.cloudflare.com/ajax/libs/gsap/3.12.5/gsap.min.js",
            ("cdnjs", "gsap", "3.12.5", "gsap.min.js", False),
        ),
    ],
)
def test_should_read_package_version_and_file_from_each_cdn_url(url, want):
    h = cdn.match(url)
    assert h is not None
    assert (h.cdn, h.package, h.spec, h.path, h.esm) == want


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/three@0.160.0/build/three.module.js",
        "https://threejs.org/build/three.module.js",
        "http://127.0.0.1:8000/three.js",
        "data:text/javascript,export default 1",
        "https://cdn.jsdelivr.net/gh/someone/else@1/x.js",
    ],
)
def test_should_leave_urls_outside_the_table_alone(url):
    assert cdn.match(url) is None


def test_should_keep_esm_sh_externals_bare():
    assert cdn.match("https://esm.sh/three@0.160.0/addons/x.js?external=three").keep_bare == {"three"}
    assert cdn.match("https://esm.sh/*three@0.160.0/addons/x.js").keep_bare == {"*"}


def test_should_know_where_cdnjs_keeps_three_files():
    h = cdn.match("https://cdnjs.cloudflare.com/ajax/libs/three.js/0.160.0/three.module.min.js")
    assert (h.spec, h.dirs[0]) == ("0.160.0", "build/")


@pytest.mark.parametrize(
    "version, spec, ok",
    [
        ("0.160.0", "0.160.0", True),
        ("0.160.1", "0.160.0", False),
        ("0.160.1", "0.160", True),
        ("0.161.0", "0.160", False),
        ("0.161.0", "0.160.x", False),
        ("0.160.5", "^0.160.0", True),
        ("0.161.0", "^0.160.0", False),
        ("1.4.0", "^1.2.0", True),
        ("2.0.0", "^1.2.0", False),
        ("1.1.0", "^1.2.0", False),
        ("1.2.9", "~1.2.0", True),
        ("1.3.0", "~1.2.0", False),
        ("0.170.0", "", True),
        ("0.170.0", "latest", True),
        ("0.171.0-beta.1", "", False),
        ("0.170.0", ">=0.160.0", True),
        ("0.150.0", ">=0.160.0 <0.170.0", False),
        ("1.0.0", "^0.9.0 || ^1.0.0", True),
    ],
)
def test_should_match_npm_version_ranges(version, spec, ok):
    assert semver.satisfies(version, spec) is ok


def test_should_pick_the_highest_matching_release_in_semver_order():
    vs = ["0.99.0", "0.128.0", "0.160.0", "0.160.1", "0.170.0"]
    assert semver.best(vs, "") == "0.170.0"
    assert semver.best(vs, "0.160") == "0.160.1"
    assert semver.best(vs, "^0.180.0") is None
    assert semver.sort_versions(["0.99.0", "0.128.0", "0.9.0"]) == ["0.9.0", "0.99.0", "0.128.0"]
