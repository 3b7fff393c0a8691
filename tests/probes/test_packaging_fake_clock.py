"""The packaging fixtures (tests/fixtures/packaging/) whose probes all run on the fake clock
(framing at its three viewports, packaging's network watch): every fixture's packaging items
must match its truth file, and each finding must name its evidence.

Nothing here is timed in real time, so this module runs in the parallel pass; the fixtures
whose runs include playback's real-time autoplay look are test_packaging_fixtures.py's, in the
real-time pass (tests/conftest.py). Each fixture runs once (module scope, two at a time) and
every assertion reads those runs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.probes.test_packaging_fixtures import ALL, assert_evidence_files, needs_real_time
from tests.truth import assert_truth, run_side_by_side

pytestmark = pytest.mark.browser

FIXTURES = {name: fx for name, fx in ALL.items() if not needs_real_time(fx)}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, tuple[dict, Path]]:
    # framing (three viewports) before the packaging-only runs, so the two threads end together
    order = sorted(FIXTURES, key=lambda n: "framing" not in (FIXTURES[n].truth.get("probes") or []))
    return run_side_by_side(FIXTURES, tmp_path_factory.mktemp("packaging_fake_clock"), order)


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_should_match_the_truth_file(runs, name):
    report, _ = runs[name]
    assert_truth(FIXTURES[name], report)


def test_should_name_every_external_url_and_how_it_was_answered(runs):
    report, _ = runs["external_resources"]
    ev = report["items"]["packaging.single_file"]["evidence"]
    page = FIXTURES["external_resources"].truth["page"]["external"]
    requested = [r["url"] for r in ev["external_requests"]]
    for url in page:
        assert any(u.endswith(url) or u == url for u in requested), (url, requested)
        assert any(r["url"] == url for r in ev["references"]) or url.startswith("textures/")
    assert all(r["note"] for r in ev["external_requests"])
    assert "line" in json.dumps(ev["references"])


def test_should_write_the_evidence_files_each_finding_names(runs):
    # (the real-time fixtures' files: test_packaging_fixtures.py, the same check)
    assert_evidence_files(runs)
    report, out = runs["stats_panel"]
    assert (out / "framing" / "framing-1920x1080.png").is_file()
    reason = report["items"]["packaging.framing"]["evidence"]["reason"]
    assert "fps-panel" in reason and "drawn on a canvas" in reason and "draw calls: 26" in reason
