#!/usr/bin/env bash
# The README's first command: set up (idempotent), then run the bench on the bundled demo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
demo=scenarios/demos/reference.html
[ -f "$demo" ] || demo=scenarios/demos/basic.html
exec .venv/bin/skycity-bench run "$demo" "$@"
