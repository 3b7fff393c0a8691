#!/usr/bin/env bash
# Idempotent set-up on a fresh Debian machine (root): Chromium and CJK fonts from Debian,
# a virtual environment in .venv with the bench and its test tools, the offline library
# cache. Safe to run again: every step checks before it acts.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
fc-list :lang=zh 2>/dev/null | grep -qi "noto" || need_apt+=(fonts-noto-cjk)
# PostgreSQL's server: the store and queue tests start a throwaway one (tests/pg.py)
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || need_apt+=(postgresql)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: installing ${need_apt[*]} from Debian" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv" >&2
  "$PY" -m venv .venv
fi
stamp=.venv/.skycity-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "setup: installing skycity-bench and its dependencies into .venv" >&2
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null
  .venv/bin/python -m pip install -q -e ".[test]"
  touch "$stamp"
fi

# --- offline library cache ---
if .venv/bin/skycity-bench cache --help >/dev/null 2>&1 && [ -f scripts/cache-seed.txt ]; then
  .venv/bin/skycity-bench cache seed scripts/cache-seed.txt >&2 || echo "setup: warning: the library cache could not be seeded" >&2
fi
