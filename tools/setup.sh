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
# numpy 2.4.6 is the version Pyodide 314.0.7 ships: test against what the browser runs.
.venv/bin/python -m pip install -q "numpy==2.4.6" -e ".[test,reference]"
