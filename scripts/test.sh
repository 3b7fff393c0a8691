#!/usr/bin/env bash
# The README's second command (and what .ci/run runs): set up (idempotent), run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
