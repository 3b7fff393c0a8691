"""Shared pytest set-up. Browser tests need Chromium; the README's set-up installs it, so a
missing browser is a failure here, not a skip."""

import os

# Tests never reach the internet. A run fetches the CDN releases a demo names that the offline
# cache lacks from $SKYCITY_NPM_REGISTRY (issue 16); point it at a loopback port nothing listens
# on, so every run sees an unreachable registry (the offline message) unless a test serves its
# own loopback registry (tests/unit/_cache_pkg.py) and says so.
os.environ["SKYCITY_NPM_REGISTRY"] = "http://127.0.0.1:9"

import pytest

# A real PostgreSQL for the store and queue tests (tests/pg.py: fixtures postgres, pg_url).
pytest_plugins = ["tests.pg"]

# Tests whose assertions depend on real time: frame-pacing tiers, the real-time capture's held
# frames, wall-clock bounds on hangs and budgets, the autoplay look, real-time runs compared
# with each other, pages whose real-time loading races the fake clock. scripts/test.sh runs
# them first and alone (a second pytest worker beside them would be the very machine noise
# they must not see); everything else is spread over the cores with pytest-xdist. A module
# listed here keeps only what needs the quiet: a test whose assertion holds at any machine
# speed lives in a module of its own in the parallel pass (test_cli_contract beside
# test_cli_run, test_clock_steps beside test_clock_budget, test_cache_offline beside
# test_cache_cdn, test_realtime_capture_writer beside test_realtime_capture, test_batch_repeat
# beside test_batch_budget).
REALTIME_MODULES = (
    "tests/probes/test_frame_pacing_fixtures.py",
    "tests/probes/test_realtime_capture.py",
    "tests/probes/test_clock_budget.py",
    "tests/probes/test_hostile.py",
    "tests/probes/test_packaging_fixtures.py",
    "tests/probes/test_cache_cdn.py",
    "tests/e2e/test_cli_run.py",
    "tests/e2e/test_batch_budget.py",
    "tests/e2e/test_review_realtime.py",
)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.nodeid.split("::", 1)[0] in REALTIME_MODULES:
            item.add_marker(pytest.mark.realtime)
