"""Shared pytest set-up. Browser tests need Chromium; the README's set-up installs it, so a
missing browser is a failure here, not a skip."""

import os

# Tests never reach the internet. A run fetches the CDN releases a demo names that the offline
# cache lacks from $SKYCITY_NPM_REGISTRY; point it at a loopback port nothing listens on, so
# every run sees an unreachable registry (the offline message) unless a test serves its own
# loopback registry (tests/unit/_cache_pkg.py) and says so.
os.environ["SKYCITY_NPM_REGISTRY"] = "http://127.0.0.1:9"

import pytest

# A real PostgreSQL for the store and queue tests (tests/pg.py: fixtures postgres, pg_url).
pytest_plugins = ["tests.pg"]

# Tests whose assertions depend on real time and a quiet machine: frame-pacing tiers, the
# real-time capture's held frames, the autoplay look, real-time runs compared with each
# other, pages whose real-time loading races the fake clock. scripts/test.sh runs them first
# and alone (a second pytest worker beside them would be the very machine noise they must not
# see); everything else is spread over the cores with pytest-xdist. A module listed here keeps
# only what needs the quiet: a test whose assertion holds at any machine speed lives in a
# module of its own in the parallel pass (test_cli_contract beside test_cli_run,
# test_clock_steps beside test_clock_budget, test_cache_offline beside test_cache_cdn,
# test_realtime_capture_writer beside test_realtime_capture, test_batch_repeat beside
# test_batch_budget). Wall-clock bounds with wide slack are not such assertions: the hostile
# batch (each run within its 60 s budget + 5 s, for 3 s of demo) and a batch run killed at its
# 6 s budget (+ 10 s) passed beside a second worker at a load average of 20 (other helpers'
# browsers), so test_hostile and test_batch_budget run in the parallel pass. test_cli_run (a
# hang ended within 4 + 30 s: 47 s there) and test_clock_budget (frame costs seen against the
# measured cost) did not, and stay. The packaging fixtures whose probes all run on the fake
# clock (framing, the network watch) are test_packaging_fake_clock's, in the parallel pass;
# test_packaging_fixtures keeps those whose runs include playback's real-time autoplay look.
REALTIME_MODULES = (
    "tests/probes/test_frame_pacing_fixtures.py",
    "tests/probes/test_realtime_capture.py",
    "tests/probes/test_clock_budget.py",
    "tests/e2e/test_cli_run.py",
    "tests/probes/test_packaging_fixtures.py",
    "tests/probes/test_cache_cdn.py",
    "tests/e2e/test_review_realtime.py",
    "tests/probes/test_load_time.py",  # makes its own CPU contention and times the wall
    # Five three.js pages on software WebGL, one at a time: beside a second worker the
    # shadow-map room's frames cost 0.9-2.3 s (0.38 s quiet), and in one CI run its playback
    # ran past its budget plus 372 s of slow rendering, so the run rightly said `untested`.
    # The module's claim is a verdict at the slow renderer's own speed, not at a neighbour's.
    "tests/probes/test_threejs_examples.py",
)

# The parallel pass hands whole modules to the workers (scripts/test.sh: --dist loadfile, so a
# module's shared runs are made once) in collection order (--no-loadscope-reorder; xdist's
# default order is by test count, which says nothing of a module's time: the shops module
# has a few dozen tests and takes minutes, the golden one 200 and takes seconds, and a long module
# handed out last keeps one worker busy alone). Modules whose shared runs take minutes go
# first, longest first, so the short ones fill in at the end and both workers finish
# together. Times: the modules' shared runs and longest tests in the last quiet whole-suite
# run (--durations=30, 0551c4a); the packaging fake-clock module measured alone at load 6-30.
SLOW_FIRST = (
    "tests/probes/test_shops.py",  # 329 s: thirteen shop runs
    "tests/probes/test_density.py",  # 238 s: four density runs + the page truths
    "tests/probes/test_hostile.py",  # 122 s: a batch of eight hostile demos
    "tests/probes/test_timeline_fixtures.py",  # 117 s
    "tests/probes/test_fixture_truth.py",  # 110 s
    "tests/e2e/test_leaderboard_review.py",  # ~150 s at load 11: a real 18-demo batch, two reviewers
    "tests/e2e/test_run_overlap.py",  # ~6 min at load 6-36 (not yet timed quiet): runs with --overlap
    "tests/probes/test_recording_playback.py",  # 99 s: the whole 65 s recorded
    "tests/e2e/test_run_jobs.py",  # 85 s: --jobs 1 and 2
    "tests/e2e/test_check.py",  # 73 s
    "tests/e2e/test_queue_workers.py",  # 63 s
    "tests/probes/test_scene_graph.py",  # 58 s alone: the hookless 20-mover city's density run
    "tests/probes/test_timeline_recording.py",  # 54 s
    "tests/e2e/test_cli_contract.py",  # 48 s
    "tests/probes/test_packaging_fake_clock.py",  # 40-90 s: six framing/network runs
    "tests/probes/test_density_tour_frames.py",  # 43 s
    "tests/e2e/test_batch_resume.py",  # 35 s
)


def _module(item) -> str:
    return item.nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(config, items):
    for item in items:
        if _module(item) in REALTIME_MODULES:
            item.add_marker(pytest.mark.realtime)
    # Stable: each module's tests stay together and in their order.
    rank = {m: i for i, m in enumerate(SLOW_FIRST)}
    items.sort(key=lambda it: rank.get(_module(it), len(SLOW_FIRST)))
