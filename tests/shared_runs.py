"""Bench runs that several test modules assert on, made once per pytest process.

A pytest fixture is cached per module that defines it; a run two modules need is made here
instead and kept for the session, so the real-time pass plays it once.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.truth import FIXTURES

JANK = FIXTURES / "frame_pacing" / "jank_tier6.html"  # a 90 ms stall every 25th frame
JANK_CAPTURE_S = 6  # demo seconds of its real-time pass

_made: dict[str, tuple[Path, dict]] = {}


def jank_capture_run(tmp_path_factory) -> tuple[Path, dict]:
    """(run folder, report.json) of jank_tier6 at 640x360 for JANK_CAPTURE_S, frame pacing only,
    the real-time capture filming the measured pass. Read by test_realtime_capture (held
    frames against the sampler's long frames) and test_review_realtime (the video in the
    review app and the static report): one real-time run instead of two."""
    if "jank" not in _made:
        from skycity_bench.inputs.scenario import load_scenario
        from skycity_bench.running.runner import run_candidate

        out = tmp_path_factory.mktemp("jank_capture") / "run"
        sc = load_scenario(
            None,
            {
                "duration_s": JANK_CAPTURE_S,
                "viewport": "640x360",
                "probes": {"realtime_capture": {"when": "always", "capture_in": "measured_pass"}},
            },
        )
        report = asyncio.run(run_candidate(JANK, sc, out, probes=["frame_pacing"]))
        _made["jank"] = (out, report.to_json())
    return _made["jank"]
