"""Dynamic density on real Chromium: fixtures whose movers, categories and lies are known by
construction (tests/fixtures/density/, written by make.py). One bench run per fixture,
shared by every assertion about it: the lying hook, the camera-only 3D orbit and 30 movers
flying over it (the case most model-written demos are), and a three.js points-wave field
without a hook (review, never auto points from blobs). K = 10 / 50 / 80 and the 2D
camera-only scene are in benchmarks/density_accuracy.py (run on demand), to keep this file
inside its time budget."""

import asyncio

import pytest

from tests.truth import all_fixtures, assert_truth, check_value, fixture, run_fixture

pytestmark = pytest.mark.browser

RUN_HERE = ["density/liar", "density/camera_orbit3d", "density/movers_orbit3d_30", "density/points_wave"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = {}
    for name in RUN_HERE:
        d = tmp_path_factory.mktemp(name.replace("/", "_"))
        out[name] = (d, run_fixture(fixture(name), d))
    return out


@pytest.mark.parametrize("name", RUN_HERE)
def test_should_measure_each_density_fixture_as_its_truth_says(runs, name):
    assert_truth(fixture(name), runs[name][1])


def test_should_sample_every_second_across_the_dense_window_with_a_pair_each(runs):
    _, rep = runs["density/liar"]
    ts = [s["t"] for s in rep["measurements"]["density"]["samples"]]
    for t in range(20, 36):
        assert any(abs(x - t) < 0.05 for x in ts), (t, ts)
    data = rep["probes"]["density"]["data"]
    assert data["delta_ms"] > 0
    assert all(abs(s["t_b"] - s["t"] - data["delta_ms"] / 1000) < 0.02 for s in data["samples"])


def test_should_draw_evidence_images_for_the_rubric_samples_and_a_behaviour_plot(runs):
    d, rep = runs["density/liar"]
    files = rep["items"]["density.count"]["evidence"]["evidence_files"]
    assert {"density/t020.00.png", "density/t025.00.png", "density/t030.00.png", "density/t035.00.png"} <= set(files)
    assert all((d / f).stat().st_size > 10_000 for f in files)
    assert (d / "density_behavior.png").is_file()
    beh = rep["items"]["density.behavior"]["evidence"]
    # only verified objects are tracked (not the 80 claimed): the 20 movers, plus a few parked
    # objects a mover drove over at one sample (their box did change then) and parts standing in
    # for their mover at a sample where the mover itself did not verify. (The other frame pairs
    # once let parked signs through, 31: a covered sign's content matched the identical sign
    # beside it; twin_min keeps such copies out.)
    # 28 -> 30 with capture once: every frame now lies exactly on the tour's 60 Hz
    # animation grid (the replay's pairs used to end on Playwright's 16 ms rAF ticks, up to
    # 16 ms short of t + Δ), which moves which parked signs a mover covers between A and B:
    # parked s11 and s14 at one sample each beside the five of before (20 movers, 3 parts and
    # 7 parked; items and N unchanged). A vision-layer question, not the frames' source.
    assert 20 <= beh["objects_tracked"] <= 30 and not beh["synchronised"]
    assert beh["distinct_directions"] >= 6


def test_should_call_out_a_lying_hook_in_plain_words(runs):
    _, rep = runs["density/liar"]
    notes = rep["items"]["density.count"]["evidence"]["notes"]
    assert any("the hook claimed 80" in n and "moved on screen" in n for n in notes), notes


def test_should_not_let_the_camera_orbit_create_movers(runs):
    _, rep = runs["density/camera_orbit3d"]
    assert all(s["visual_count"] <= 2 for s in rep["measurements"]["density"]["samples"])


async def _page_truths(fxs):
    from playwright.async_api import async_playwright

    from skycity_bench.browser.server import DemoServer
    from skycity_bench.browser.session import BrowserHandle
    from skycity_bench.inputs.scenario import load_scenario
    from skycity_bench.running.runner import extra_resolvers

    out = {}
    async with async_playwright() as pw:
        # the three.js fixtures import the library from a CDN: the offline cache answers
        h = await BrowserHandle(pw, resolvers=extra_resolvers("offline")).start()
        try:
            for fx in fxs:
                sc = load_scenario(None, {"viewport": fx.truth.get("scenario", {}).get("viewport")})
                with DemoServer(fx.html.read_bytes()) as srv:
                    dp = await h.open_page(sc, srv.url)
                    out[fx.name] = await dp.evaluate("window.__fixtureTruth")
                    await dp.close()
        finally:
            await h.kill()
    return out


def test_should_have_truth_files_that_agree_with_what_each_page_animates():
    fxs = all_fixtures("density")
    assert len(fxs) >= 11
    got = asyncio.run(_page_truths(fxs))
    for fx in fxs:
        page = got[fx.name]
        for k, v in fx.truth["page"].items():
            assert check_value(v, page.get(k)), (fx.name, k, v, page.get(k))


def test_should_send_a_hookless_particle_field_to_a_person_not_to_auto_points(runs):
    _, rep = runs["density/points_wave"]
    for item in ("density.count", "density.categories"):
        it = rep["items"][item]
        assert it["status"] == "review" and it["points"] is None, (item, it["status"], it["points"])
    hint = rep["items"]["density.count"]["evidence"]["hint"]
    assert any("field" in k for k in hint["not_plainly_objects"]), hint
    assert hint["largest_group_of_near_identical_moving_primitives"] >= 12
    # and no sample's plain count gives points from blobs (the target: "N <= 2 in every sample").
    # Once up to 9 at one sample (CI): a dense field's regions were split into two colour
    # groups by the ground around them, and a two-tone frame's brightness "match" blacked out
    # frame B (vision/objects.py, vision/segment.py); 0 in all 31 half-second samples since.
    samples = rep["probes"]["density"]["data"]["samples"]
    assert all(s["objects"]["plain_count"] <= 2 for s in samples), [s["objects"] for s in samples]
