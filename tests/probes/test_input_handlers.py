"""The page's key and click handlers as the browser's own listener table has them
(browser/input_handlers.py), and what the playback probe does with them: a page that hears
no key but has buttons leaves the keyboard way untested (keys cannot pause it, its buttons
may), where a page with neither is still tried and fails by its frames.

Real Chromium on small Canvas2D pages; what is asserted is which handlers a page set up and
what the probe decided, which no machine speed changes."""

from __future__ import annotations

import asyncio

import pytest

from skycity_bench.browser.input_handlers import input_handlers
from skycity_bench.inputs.scenario import load_scenario
from tests.probes.test_clock_budget import _with_page, scenario
from tests.truth import run_bench

pytestmark = pytest.mark.browser

# Every way a page sets a handler, and one it must not be credited with (hover).
EVERY_KIND = b"""<!doctype html><body><canvas id=c tabindex=0></canvas>
<div id=d onkeyup="void 0"></div><div id=host></div>
<script>
window.onkeydown = () => {};
document.getElementById('c').addEventListener('keypress', () => {});
document.body.onclick = () => {};
document.addEventListener('pointermove', () => {});
const root = document.getElementById('host').attachShadow({mode: 'closed'});
const b = document.createElement('button'); root.appendChild(b);
b.addEventListener('pointerdown', () => {});
// a page that hides its own listeners from the DOM's methods cannot hide them from the table
EventTarget.prototype.addEventListener = () => {};
</script></body>"""

# A moving scene with a panel of buttons and no key handler: the slow_2fps page's controls.
MOVER = """<!doctype html><html><head><style>html,body{{margin:0;height:100%;overflow:hidden;background:#123}}
canvas{{display:block}}#panel{{position:fixed;left:8px;top:8px}}</style></head><body>
<canvas id=c></canvas>{panel}<script>
const c = document.getElementById('c'), g = c.getContext('2d');
c.width = innerWidth; c.height = innerHeight; let t0 = null, paused = false;
function f(now) {{ if (t0 === null) t0 = now; const t = (now - t0) / 1000;
  g.fillStyle = '#123'; g.fillRect(0, 0, c.width, c.height);
  for (let i = 0; i < 12; i++) {{ g.fillStyle = 'hsl(' + i * 30 + ',80%,60%)';
    g.fillRect((t * 90 + i * 97) % c.width, 40 + i * 40, 40, 24); }}
  requestAnimationFrame(f); }}
requestAnimationFrame(f);
{script}</script></body></html>"""

BUTTONS = MOVER.format(
    panel="<div id=panel><button id=pause>暂停</button><button id=replay>重播</button></div>",
    script="document.getElementById('pause').onclick = () => { paused = !paused; };"
    "document.getElementById('replay').onclick = () => { t0 = null; };",
)
NO_CONTROL = MOVER.format(panel="", script="")


def test_should_read_every_key_and_click_handler_from_the_browsers_table():
    async def body(dp):
        return await input_handlers(dp)

    found = asyncio.run(_with_page(EVERY_KIND, scenario(), body))
    assert sorted((h["on"], h["type"]) for h in found) == [
        ("document", "click"),
        ("document", "keypress"),
        ("document", "keyup"),
        ("document", "pointerdown"),  # in a closed shadow root
        ("window", "keydown"),
    ]


@pytest.fixture(scope="module")
def playback_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("input_handlers")
    out = {}
    for name, html in (("buttons", BUTTONS), ("no_control", NO_CONTROL)):
        page = root / f"{name}.html"
        page.write_text(html, encoding="utf-8")
        sc = load_scenario(None, {"duration_s": 10, "viewport": "640x360"})
        out[name] = run_bench(page, sc, root / name, probes=["playback"]).to_json()
    return out


def test_should_leave_the_keyboard_untested_on_a_page_that_hears_only_clicks(playback_runs):
    rep = playback_runs["buttons"]
    kb = rep["probes"]["playback"]["data"]["pause_resume_replay"]["ways"]["keyboard"]
    assert kb["cause"] == "page" and "listens to no key" in kb["untested"]
    assert "cycles" not in kb  # no key was pressed
    assert {h["type"] for h in kb["input_handlers"]} == {"click"}
    item = rep["items"]["packaging.pause_resume_replay"]
    assert item["status"] == "untested" and item["cause"] == "page"  # never a fail for keys it never heard


def test_should_still_try_keys_on_a_page_with_no_control_at_all(playback_runs):
    rep = playback_runs["no_control"]
    kb = rep["probes"]["playback"]["data"]["pause_resume_replay"]["ways"]["keyboard"]
    assert kb["input_handlers"] == [] and len(kb["cycles"]) == 2
    item = rep["items"]["packaging.pause_resume_replay"]
    assert item["status"] == "fail" and item["evidence"]["decided_by"] == "keyboard"
