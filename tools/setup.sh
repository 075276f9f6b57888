#!/usr/bin/env bash
# Create .venv (once) with minitriton in editable mode, the test tools, and the reference stack
# (Triton 3.9.0's interpreter + torch 2.13.0 CPU) used by the differential tests and the lesson scripts.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
# numpy 2.4.6 here; the browser's NumPy (2.2.5, Pyodide 0.29.1's) is tested by the suite inside Pyodide.
.venv/bin/python -m pip install -q "numpy==2.4.6" -e ".[test,reference]"

# The sandbox page (web/): Debian's chromium for its headless e2e tests, the npm packages (again only when
# package-lock.json changed), then the site build (skipped when its inputs did not change).
if [ "${SKIP_WEB:-0}" != 1 ]; then
  SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
  if [ ! -x /usr/bin/chromium ] || ! command -v node >/dev/null; then
    $SUDO apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q chromium $(command -v node >/dev/null || echo nodejs npm) >/dev/null
  fi
  lock_hash=$(sha256sum web/package-lock.json | cut -d' ' -f1)
  if [ "$(cat web/node_modules/.lock-hash 2>/dev/null)" != "$lock_hash" ]; then
    (cd web && npm ci --no-audit --no-fund --loglevel=error)
    echo "$lock_hash" > web/node_modules/.lock-hash
  fi
  # NumPy's official Pyodide wheel (from a PyPI package, checked against Pyodide's lock) + pytest for Pyodide
  node web/pyodide-packages.mjs
  node web/build.mjs --if-changed
fi
