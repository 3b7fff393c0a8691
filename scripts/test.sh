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

# Bytecode for this one invocation: with PYTHONDONTWRITEBYTECODE set (as in this project's
# shells) every pytest process compiled and assertion-rewrote all 127 test modules again
# (collection 10-11 CPU s against 4.5 s from a cache, measured at load 14-20), and every CLI
# and worker subprocess compiled the bench. Compiled once into a folder of its own (never the
# working tree) and removed at the end: nothing carries over to the next invocation.
pycache=$(mktemp -d "${TMPDIR:-/tmp}/skycity-pycache.XXXXXX")
trap 'rm -rf "$pycache"' EXIT
export PYTHONPYCACHEPREFIX="$pycache"
unset PYTHONDONTWRITEBYTECODE

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
