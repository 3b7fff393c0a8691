#!/usr/bin/env bash
# Regenerate the golden evidence under tests/golden/ (README section golden):
# the probe tests of the fixture families run as usual and each fixture run also writes what
# its probes collected (tests/golden_evidence.py). Real Chromium; a few minutes per family.
set -euo pipefail
cd "$(dirname "$0")/.."
SKYCITY_WRITE_GOLDEN=1 exec .venv/bin/python -m pytest -q -p no:randomly \
    tests/probes/test_packaging_fixtures.py tests/probes/test_packaging_fake_clock.py \
    tests/probes/test_frame_pacing_fixtures.py \
    tests/probes/test_timeline_fixtures.py tests/probes/test_density.py tests/probes/test_shops.py "$@"
