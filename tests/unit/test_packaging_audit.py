"""The static HTML audit behind packaging.single_file (probes/_html_audit.py), no browser."""

from __future__ import annotations

import base64

import cv2
import numpy as np

from skycity_bench.analysis.html_audit import audit, strip_js_comments


def _urls(found: dict) -> dict[str, tuple[int, str]]:
    return {r["url"]: (r["line"], r["where"]) for r in found["references"]}


def test_should_find_markup_references_with_their_line_numbers():
    html = """<!doctype html>
<html><head>
<script src="https://cdn.example.com/three.min.js"></script>
<link rel="stylesheet" href="style.css">
<link rel="preconnect" href="https://fonts.gstatic.com">
</head><body>
<img src="textures/a.png" srcset="a2.png 2x, a3.png 3x">
<video poster="poster.jpg"><source src="clip.mp4"></video>
<a href="https://example.com/credits">credits</a>
<iframe src="//player.example.com/x"></iframe>
</body></html>"""
    u = _urls(audit(html))
    assert u["https://cdn.example.com/three.min.js"] == (3, "<script src>")
    assert u["style.css"][0] == 4
    assert u["textures/a.png"][0] == 7 and "a2.png" in u and "a3.png" in u
    assert u["poster.jpg"][0] == 8 and u["clip.mp4"][0] == 8
    assert u["//player.example.com/x"][0] == 10
    # preconnect and <a href> load nothing
    assert "https://fonts.gstatic.com" not in u and "https://example.com/credits" not in u


def test_should_find_css_urls_imports_and_import_maps():
    html = """<style>
@import url("https://fonts.googleapis.com/css2?family=Noto");
body { background: url(bg.jpg) }
.ok { background: url(data:image/png;base64,iVBORw0KGgo=) }
</style>
<div style="background-image:url('tile.png')"></div>
<script type="importmap">{"imports": {"three": "https://unpkg.com/three@0.160.0/build/three.module.js"}}</script>
"""
    u = _urls(audit(html))
    assert u["https://fonts.googleapis.com/css2?family=Noto"][0] == 2
    assert u["bg.jpg"][0] == 3
    assert u["tile.png"] == (6, "<div style> CSS url()")
    assert u["https://unpkg.com/three@0.160.0/build/three.module.js"] == (7, "import map")
    assert not any(k.startswith("data:") for k in u)


def test_should_find_script_loading_calls_and_skip_comments():
    html = """<script type="module">
import * as THREE from 'three';
import { OrbitControls } from "https://cdn.example.com/OrbitControls.js";
// fetch('commented-out.json')
/* new Worker('old-worker.js') */
const data = await fetch("data/city.json");
const m = await import('./extra.js');
new GLTFLoader().load('models/ship.glb', (g) => {});
img.src = 'sprites/car.png';
location.href = 'https://example.com/next';
const ws = new WebSocket('wss://example.com/live');
const url = "https://example.com/not-loaded-just-a-string";
fetch(someUrl);
</script>"""
    found = audit(html)
    u = _urls(found)
    assert u["three"] == (2, "static import")
    assert u["https://cdn.example.com/OrbitControls.js"] == (3, "static import")
    assert u["data/city.json"] == (6, "fetch()")
    assert u["./extra.js"] == (7, "dynamic import()")
    assert u["models/ship.glb"] == (8, "loader .load()")
    assert u["sprites/car.png"] == (9, ".src/.href assignment")
    assert u["wss://example.com/live"] == (11, "WebSocket")
    for absent in (
        "commented-out.json",
        "old-worker.js",
        "https://example.com/next",
        "https://example.com/not-loaded-just-a-string",
    ):
        assert absent not in u
    assert {"call": "fetch", "argument": "someUrl", "line": 13} in found["dynamic"]


def test_should_keep_line_numbers_when_blanking_comments():
    src = "a();\n/* one\ntwo */ b('//not a comment');\n// c\nd();"
    out = strip_js_comments(src)
    assert out.count("\n") == src.count("\n")
    assert "'//not a comment'" in out and "c" not in out.split("\n")[3]


def test_should_report_embedded_base64_binaries_with_size_and_kind():
    rng = np.random.default_rng(1)
    png = cv2.imencode(".png", rng.integers(0, 256, (40, 40, 3), dtype=np.uint8))[1].tobytes()
    b64 = base64.b64encode(png).decode()
    font = base64.b64encode(b"wOF2" + bytes(range(256)) * 4).decode()
    html = (
        f'<img src="data:image/png;base64,{b64}">\n'
        f'<script>\nconst FONT = "{font}";\nconst SVG = "data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=";\n</script>'
    )
    emb = audit(html)["embedded"]
    kinds = {(e["kind"], e["line"], e["bytes"]) for e in emb}
    assert ("image/png", 1, len(png)) in kinds
    assert ("font/woff2", 3, 4 + 1024) in kinds
    assert not any("svg" in e["kind"] for e in emb)  # SVG is markup, written by code
    assert audit(html)["references"] == []
