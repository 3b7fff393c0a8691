#!/usr/bin/env bash
# The README's second command (and what .ci/run runs): set up (idempotent), run every test.
# Two passes of one suite: the real-time tests alone (tests/conftest.py says which and why),
# then the fake-clock and browser-free tests on both cores with pytest-xdist (one test file per
# worker, so a file's shared fixtures are built once; files in the order tests/conftest.py gives,
# the longest first). Extra arguments go to both passes.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || exit $?
py=.venv/bin/python
workers=${SKYCITY_TEST_WORKERS:-$(nproc)}

$py -m pytest -q -p no:cacheprovider -m realtime "$@"
rc_rt=$?
$py -m pytest -q -p no:cacheprovider -m "not realtime" -n "$workers" --dist loadfile --no-loadscope-reorder "$@"
rc_fc=$?

# pytest's 5 means "no test selected": fine for one pass when the other ran tests.
if [ $rc_rt -eq 5 ] && [ $rc_fc -eq 5 ]; then exit 5; fi
[ $rc_rt -eq 5 ] && rc_rt=0
[ $rc_fc -eq 5 ] && rc_fc=0
[ $rc_rt -ne 0 ] && exit $rc_rt
exit $rc_fc
