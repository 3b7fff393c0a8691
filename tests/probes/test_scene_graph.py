"""Density's locator without a hook, the three.js scene graph (probes/_scene_graph.py,
browser/js/scene_graph.js), on a town whose movers are known by construction
(tests/fixtures/density/scene_graph_parts: cars with spinning wheels, balloons on turning
pivots, a bobbing platform with a fixed hut and walkers, a cart on a turntable that carries
the buildings, windmill sails, a rotating particle field).

The claims are checked against the page's own list of movers (uuid and projected centre) at
several moments; then a whole density run counts them through the pixel checks."""

from __future__ import annotations

import asyncio

import pytest

from skycity_bench.inputs.scenario import load_scenario
from tests.truth import assert_truth, fixture, run_fixture

pytestmark = pytest.mark.browser

FX = fixture("density/scene_graph_parts")
AT_S = (2.0, 7.5, 21.0)


async def _claims_and_truth() -> list[tuple[float, dict, list, list]]:
    from playwright.async_api import async_playwright

    from skycity_bench.browser.server import DemoServer
    from skycity_bench.browser.session import BrowserHandle
    from skycity_bench.probes import _scene_graph
    from skycity_bench.probes._stepper import RAF_60HZ_JS, Stepper
    from skycity_bench.running.runner import extra_resolvers

    sc = load_scenario(None, {"viewport": FX.truth["scenario"]["viewport"]})
    s = sc.probe_settings("density")
    out = []
    async with async_playwright() as pw:
        h = await BrowserHandle(pw, resolvers=extra_resolvers("offline")).start()
        try:
            with DemoServer(FX.html.read_bytes()) as srv:
                dp = await h.open_page(
                    sc, srv.url, fake_clock=True, init_scripts=[RAF_60HZ_JS, _scene_graph.SCENE_GRAPH_JS]
                )
                st = await Stepper(dp).start()
                assert (
                    _scene_graph.usable(await _scene_graph.state(dp)) and (await _scene_graph.arm(dp))["armed"] is True
                )
                for t in AT_S:
                    await st.to(t - 0.5, picture_only=True)
                    await st.to(t)  # every frame of the last half second
                    state = await _scene_graph.state(dp)
                    ok, claims, err = await _scene_graph.claims(dp, s)
                    assert ok, err
                    truth = await dp.page.evaluate("window.__fixtureMovers()")
                    out.append((t, state, claims, truth))
                await dp.close()
        finally:
            await h.kill()
    return out


@pytest.fixture(scope="module")
def seen():
    return asyncio.run(_claims_and_truth())


def test_should_claim_exactly_the_movers_the_page_built_and_no_part(seen):
    for t, state, claims, truth in seen:
        assert state["renderers"] == 1 and state["failures"] == 0, state
        want = {"three:" + m["uuid"] for m in truth}
        got = {c["id"] for c in claims}
        assert len(want) == FX.truth["page"]["movers"]
        assert got == want, (t, sorted(got - want), sorted(want - got))


def test_should_put_each_claims_box_around_its_movers_projected_centre(seen):
    for t, _, claims, truth in seen:
        by_id = {c["id"]: c for c in claims}
        for m in truth:
            c = by_id["three:" + m["uuid"]]
            assert abs(c["x"] - m["x"]) <= c["w"] / 2 + 1 and abs(c["y"] - m["y"]) <= c["h"] / 2 + 1, (t, c, m)
            assert 0 < c["w"] < 400 and 0 < c["h"] < 300 and c["category"] is None


def test_should_count_a_hookless_three_js_citys_movers_through_the_pixel_checks(tmp_path):
    # the hookless scene: 20 distinct movers, unoccluded and on screen for the whole
    # window by construction (tests/fixtures/density/movers_three_nohook_20)
    fx = fixture("density/movers_three_nohook_20")
    rep = run_fixture(fx, tmp_path)
    assert_truth(fx, rep)
    data = rep["probes"]["density"]["data"]
    assert data["locator"]["kind"] == "three_scene_graph" and data["hook"]["present"] is False
    count = rep["items"]["density.count"]
    assert count["status"] == "partial" and "scene graph" in count["evidence"]["basis"]
    assert all(s["claimed_count"] == 20 for s in data["samples"])
    # the pixels' own count is kept beside the verified claims (what the scene graph might miss)
    assert all(s["objects"]["plain_count"] is not None for s in data["samples"])
