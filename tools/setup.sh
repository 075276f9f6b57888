#!/usr/bin/env bash
# Creates .venv (Python >= 3.11) with what tools/requirements.txt lists: minitriton in editable mode, pytest,
# hypothesis, and the reference stack (Triton 3.9.0's interpreter + torch). With the page (SKIP_WEB unset):
# Debian's chromium and Node from apt when missing, the npm packages, and the site build.
# Each part is skipped when its inputs did not change; pip's and npm's output goes to .venv/setup.log and is
# shown only when a step fails.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
LOG="$PWD/.venv/setup.log"

fail() { echo "tools/setup.sh: $*" >&2; exit 1; }
run_logged() {  # run a command with its output in $LOG; on failure show the log's tail
  if ! "$@" >>"$LOG" 2>&1; then
    tail -n 30 "$LOG" >&2
    fail "'$*' failed (full output: .venv/setup.log)"
  fi
}

command -v "$PY" >/dev/null || fail "no $PY on PATH: install Python 3.11 or later, or set PYTHON=/path/to/python3"
"$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  || fail "minitriton needs Python 3.11 or later; $PY is $("$PY" -V 2>&1) (set PYTHON=/path/to/python3.11)"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv 2>/dev/null \
    || { rm -rf .venv; fail "'$PY -m venv' failed: on Debian/Ubuntu, apt-get install python3-venv"; }
fi

# The Python packages: again only when what is installed could differ (requirements or pyproject changed).
py_hash=$(cat tools/requirements.txt pyproject.toml | sha256sum | cut -d' ' -f1)
if [ "$(cat .venv/.setup-hash 2>/dev/null)" != "$py_hash" ]; then
  echo "setting up .venv (Python packages; log: .venv/setup.log)"
  : >"$LOG"
  run_logged .venv/bin/python -m pip install --upgrade pip
  run_logged .venv/bin/python -m pip install -r tools/requirements.txt
  echo "$py_hash" > .venv/.setup-hash
fi

# The sandbox page (web/): Debian's chromium for its headless e2e tests, Node, the npm packages (again only
# when package-lock.json changed), then the site build (skipped when its inputs did not change).
if [ "${SKIP_WEB:-0}" != 1 ]; then
  if [ ! -x /usr/bin/chromium ] || ! command -v node >/dev/null; then
    command -v apt-get >/dev/null \
      || fail "the page's tests need /usr/bin/chromium and Node >= 20; install them, or set SKIP_WEB=1"
    SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
    echo "installing chromium and Node with apt-get (log: .venv/setup.log)"
    run_logged $SUDO apt-get update -q
    run_logged $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium \
      $(command -v node >/dev/null || echo nodejs npm)
  fi
  node -e 'process.exit(Number(process.versions.node.split(".")[0]) < 20 ? 1 : 0)' \
    || fail "the page needs Node 20 or later; node is $(node --version) (or set SKIP_WEB=1)"
  lock_hash=$(sha256sum web/package-lock.json | cut -d' ' -f1)
  if [ "$(cat web/node_modules/.lock-hash 2>/dev/null)" != "$lock_hash" ]; then
    echo "installing the page's npm packages (log: .venv/setup.log)"
    (cd web && run_logged npm ci --no-audit --no-fund --loglevel=error)
    echo "$lock_hash" > web/node_modules/.lock-hash
  fi
  # NumPy's official Pyodide wheel (from a PyPI package, checked against Pyodide's lock) + pytest for Pyodide
  run_logged node web/pyodide-packages.mjs
  run_logged node web/build.mjs --if-changed
fi
