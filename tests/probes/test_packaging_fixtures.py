"""The packaging fixture family (tests/fixtures/packaging/) in real Chromium: every fixture's
four packaging items must match its truth file, and each finding must name its evidence.

This module holds the fixtures whose runs include playback (its autoplay look is real time,
so it runs in the real-time pass, tests/conftest.py); the fixtures whose probes all run on the
fake clock (framing, packaging's network watch) are test_packaging_fake_clock.py's, in the
parallel pass. Each fixture runs once (module scope, two at a time: most of a run is the
browser waiting on the fake clock or on real-time autoplay frames) and every assertion reads
those runs. That each page agrees with its truth file's "page" section is checked for every
fixture by tests/probes/test_fixture_truth.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.truth import all_fixtures, assert_truth, run_side_by_side

pytestmark = pytest.mark.browser

ALL = {fx.name.split("/")[-1]: fx for fx in all_fixtures("packaging")}


def needs_real_time(fx) -> bool:
    """A run with a real-time probe (playback's autoplay look): none named runs them all."""
    from skycity_bench.probes import registry

    names = fx.truth.get("probes") or registry.names()
    return any(registry.get(n).realtime for n in names)


FIXTURES = {name: fx for name, fx in ALL.items() if needs_real_time(fx)}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, tuple[dict, Path]]:
    # Slowest first, so the two threads finish together.
    order = sorted(FIXTURES, key=lambda n: -len(FIXTURES[n].truth.get("probes") or ["all", "of", "them"]))
    return run_side_by_side(FIXTURES, tmp_path_factory.mktemp("packaging"), order)


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_should_match_the_truth_file(runs, name):
    report, _ = runs[name]
    assert_truth(FIXTURES[name], report)


def test_should_give_the_clean_fixture_five_of_five(runs):
    report, _ = runs["clean"]
    items = {k: v for k, v in report["items"].items() if k.startswith("packaging.")}
    assert sum(v["points"] for v in items.values()) == 5, json.dumps(
        {k: v["evidence"].get("reason") for k, v in items.items()}, ensure_ascii=False, indent=1
    )


def test_should_split_the_family_between_the_two_passes():
    """Every packaging fixture is run by this module or test_packaging_fake_clock.py, and the
    assertions here that name a fixture find it here."""
    from tests.probes.test_packaging_fake_clock import FIXTURES as FAKE_CLOCK

    assert set(FIXTURES) | set(FAKE_CLOCK) == set(ALL) and not set(FIXTURES) & set(FAKE_CLOCK)
    assert {"clean", "replay_no_reset"} <= set(FIXTURES)


def test_should_write_the_evidence_files_each_finding_names(runs):
    # (the fake-clock fixtures' files: test_packaging_fake_clock.py, the same check)
    assert_evidence_files(runs)
    report, _ = runs["replay_no_reset"]
    assert any("replay" in f for f in report["items"]["packaging.pause_resume_replay"]["evidence"]["files"])


def assert_evidence_files(runs) -> None:
    for name, (report, out) in runs.items():
        for item_id, item in report["items"].items():
            if not item_id.startswith("packaging."):
                continue
            for f in item["evidence"].get("files", []):
                assert (out / f).is_file(), f"{name}: {item_id} names {f}, which is not in the run folder"
