"""Density's locator without a hook: the three.js scene graph (browser/js/scene_graph.js).

A demo with no answering getDynamicObjects() but a three.js renderer still tells the bench
where its objects are, in the scene graph it renders: the nodes that moved in the world in
the last moments and are no rigid part of a moving parent are the candidates (parts of one
object are one object; the rules are browser/js/scene_graph.js's), cameras, lights, the
camera's rig and particle fields left out. They are *claims*,
never counts: density checks each against the pixels exactly as it checks a hook's claim
(vision/verify.py), so the count is of claims whose own pixels moved. What the scene alone
knows comes with each claim for the claims no pixel test verified (vision/settle.py): rays
from the camera to five points of its box and what they met first (covered only where every
point on it is), and whether it is fixed to the camera. The scene graph has no
categories: density.categories stays untested for such a demo (scorers/density.py).

Used by both of density's frame sources: its own replay (probes/density.py Replay) and the
recording's tour pass (probes/_tour.py DensityFrames), which stores the answers beside its
frames.
"""

from __future__ import annotations

from skycity_bench.browser.session import js
from skycity_bench.common.errors import DemoCrash, ProbeError
from skycity_bench.evidence.density import SCENE_GRAPH_LOCATOR as KIND

SCENE_GRAPH_JS = js("scene_graph.js")


async def state(dp) -> dict | None:
    """What the page's scene graph watch has seen (renderers wrapped, scenes rendered,
    failures), or None when the watch is not on the page or did not answer."""
    try:
        got = await dp.evaluate(
            "__SKYCITY__.sceneGraph ? __SKYCITY__.sceneGraph.state() : null",
            what="reading the three.js scene graph watch",
        )
    except DemoCrash:
        raise
    except ProbeError:  # a hung or broken page: no locator (the visual count stands)
        return None
    return got if isinstance(got, dict) else None


async def arm(dp) -> dict | None:
    """Start noting the scene nodes' motion after every render (until then only the renders
    are: a demo whose hook answers pays nothing for the watch); the watch's state, armed, or
    None when it did not answer. Claims need a quarter second of history (scene_recent_ms),
    so this is called when the locator is chosen, long before the dense window."""
    try:
        got = await dp.evaluate(
            "__SKYCITY__.sceneGraph ? __SKYCITY__.sceneGraph.arm() : null", what="arming the three.js scene graph watch"
        )
    except DemoCrash:
        raise
    except ProbeError:
        return None
    return got if isinstance(got, dict) else None


def usable(st: dict | None) -> bool:
    """A three.js renderer was seen rendering a scene."""
    if not st:
        return False
    return (st.get("renderers") or 0) >= 1 and (st.get("scenes") or 0) >= 1


async def claims(dp, s) -> tuple[bool, list | None, str | None]:
    """(ok, claims in the hook's shape, error) at the frame on screen; `s` the density
    probe's Settings (scene_recent_ms, scene_frame_ms, scene_world_share; min_object_px: the
    claims at least that long get the ray test of what covers them, `rays`)."""
    try:
        got = await dp.evaluate(
            "([r, f, w, m]) => __SKYCITY__.sceneGraph.movers(r, f, w, m)",
            [s.scene_recent_ms, s.scene_frame_ms, s.scene_world_share, s.min_object_px],
            what="reading the three.js scene graph",
        )
    except DemoCrash:
        raise
    except ProbeError as e:
        return False, None, f"the three.js scene graph did not answer: {e}"[:200]
    if not isinstance(got, list):
        return False, None, "the three.js scene graph gave no list"
    return True, got, None


def locator(kind: str | None, st: dict | None = None) -> dict:
    """The evidence's record of what located density's claims."""
    return {"kind": kind or "none", "scene_graph": st}


async def choose(dp, hook_ok: bool, enabled: bool) -> dict:
    """What locates density's claims on this page (its locator record): the hook when its
    describe() answered; else, when the scenario allows it (`scene_graph`) and a three.js
    renderer was seen rendering, the scene graph, armed here; else nothing."""
    if hook_ok:
        return locator("hook")
    if not enabled:
        return locator(None)
    st = await state(dp)
    if not usable(st):
        return locator(None, st)
    armed = await arm(dp)
    return locator(KIND, armed) if armed else locator(None, st)
