#!/usr/bin/env bash
# The README's second command (and what .ci/run runs): set up (idempotent), check the house
# (lint, format, types, import layers, dead code, the docs site), then run every test.
# `--fast` runs the house checks and the tests that need no real time and no full demo run
# (tests/unit, on both cores): the quick loop while changing code.
# Two passes of one suite: the real-time tests alone (tests/conftest.py says which and why),
# then the fake-clock and browser-free tests on both cores with pytest-xdist (one test file per
# worker, so a file's shared fixtures are built once; files in the order tests/conftest.py gives,
# the longest first). Extra arguments go to both passes.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || exit $?
py=.venv/bin/python
bin=.venv/bin
export NO_MKDOCS_2_WARNING=1  # mkdocs-material's banner about MkDocs 2: not a warning of this site
workers=${SKYCITY_TEST_WORKERS:-$(nproc)}
fast=0
if [ "${1:-}" = "--fast" ]; then fast=1; shift; fi

# The house checks fail the run before any test starts: each prints what it found.
site=$(mktemp -d "${TMPDIR:-/tmp}/skycity-site.XXXXXX")
house() {
  local rc=0
  echo "house: ruff check" >&2 && $bin/ruff check skycity_bench tests benchmarks || rc=1
  echo "house: ruff format --check" >&2 && $bin/ruff format --check -q skycity_bench tests benchmarks || rc=1
  echo "house: mypy" >&2 && $bin/mypy || rc=1
  echo "house: import-linter" >&2 && $bin/lint-imports --no-cache >/dev/null || { $bin/lint-imports --no-cache; rc=1; }
  echo "house: vulture" >&2 && $bin/vulture skycity_bench --min-confidence 80 || rc=1
  echo "house: mkdocs build --strict" >&2 && $bin/mkdocs build --strict -q -d "$site" || rc=1
  rm -rf "$site"
  return $rc
}
house || { echo "house checks failed" >&2; exit 1; }

# Bytecode for this one invocation: with PYTHONDONTWRITEBYTECODE set (as in this project's
# shells) every pytest process compiled and assertion-rewrote all 127 test modules again
# (collection 10-11 CPU s against 4.5 s from a cache, measured at load 14-20), and every CLI
# and worker subprocess compiled the bench. Compiled once into a folder of its own (never the
# working tree) and removed at the end: nothing carries over to the next invocation.
pycache=$(mktemp -d "${TMPDIR:-/tmp}/skycity-pycache.XXXXXX")
trap 'rm -rf "$pycache" "$site"' EXIT
export PYTHONPYCACHEPREFIX="$pycache"
unset PYTHONDONTWRITEBYTECODE

if [ $fast -eq 1 ]; then
  $py -m pytest -q -p no:cacheprovider -m "not realtime" -n "$workers" tests/unit "$@"
  exit $?
fi

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
