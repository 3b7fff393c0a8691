"""What covers a claim, told by the three.js scene graph locator (browser/js/scene_graph.js
`rays` and `fixed_to_camera`) on a scene whose cover is known by construction
(tests/fixtures/density/scene_graph_cover): a car in plain view, one behind a wall, one whose
centre alone a small block covers (a single ray to its centre would call it covered), and one
set beside the swaying camera every frame (fixed to the camera, not covered).

The claims are read at several moments and checked against the page's own roles; the
verdicts vision/settle.py gives from them are checked in tests/unit/test_settle_scene.py."""

from __future__ import annotations

import asyncio

import pytest

from skycity_bench.inputs.scenario import load_scenario
from tests.truth import fixture

pytestmark = pytest.mark.browser

FX = fixture("density/scene_graph_cover")
AT_S = (2.0, 5.5, 9.0)


async def _claims_and_roles() -> list[tuple[float, list, dict]]:
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
                assert (await _scene_graph.arm(dp))["armed"] is True
                for t in AT_S:
                    await st.to(t - 0.5, picture_only=True)
                    await st.to(t)
                    ok, claims, err = await _scene_graph.claims(dp, s)
                    assert ok, err
                    out.append((t, claims, await dp.page.evaluate("window.__fixtureRoles()")))
                await dp.close()
        finally:
            await h.kill()
    return out


@pytest.fixture(scope="module")
def seen():
    return asyncio.run(_claims_and_roles())


def _by_role(claims: list, roles: dict) -> dict:
    by_id = {c["id"]: c for c in claims}
    return {role: by_id.get("three:" + uuid) for role, uuid in roles.items()}


def test_should_claim_every_car_with_a_ray_test_of_several_points(seen):
    for t, claims, roles in seen:
        for role, c in _by_role(claims, roles).items():
            assert c is not None, (t, role, [x["id"] for x in claims])
            assert c["rays"]["points"] == 5 and c["rays"]["on"] >= 3, (t, role, c)


def test_should_call_covered_only_the_car_every_ray_finds_behind_something(seen):
    for t, claims, roles in seen:
        got = _by_role(claims, roles)
        hidden, open_, centre = got["hidden"]["rays"], got["open"]["rays"], got["centre"]["rays"]
        assert hidden["covered"] == hidden["on"], (t, hidden)
        assert open_["covered"] == 0, (t, open_)
        # one point (its centre) covered, the others seen: not covered
        assert 1 <= centre["covered"] < centre["on"], (t, centre)


def test_should_tell_a_car_fixed_to_the_camera_from_a_covered_one(seen):
    for t, claims, roles in seen:
        got = _by_role(claims, roles)
        assert got["fixed"]["fixed_to_camera"] is True and got["fixed"]["rays"]["covered"] == 0, (t, got["fixed"])
        for role in ("open", "hidden", "centre"):
            assert got[role]["fixed_to_camera"] is False, (t, role, got[role])
