#!/usr/bin/env bash
# Sets up .venv if needed (tools/setup.sh) and runs the tests: pytest (arguments go to it), then the sandbox
# page's end-to-end tests in headless Chromium (node's test runner; SKIP_WEB=1 leaves them out). The exit
# status is non-zero if either fails.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
status=0
# One BLAS thread: the tests run many small matrix products, which OpenBLAS's threads only slow down on a
# small shared machine (and the results stay reproducible).
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
# The linter first (pyproject.toml [tool.ruff]): unused or undefined names fail the run.
.venv/bin/ruff check --quiet . && echo "ruff: clean" || status=$?
.venv/bin/python -m pytest -q "$@" || status=$?
if [ "${SKIP_WEB:-0}" != 1 ]; then
  # node's own summary counts skipped tests but not skipped suites; its TAP output has both, so the skips
  # are listed from there with their reasons.
  tap=$(mktemp)
  node --test --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=tap --test-reporter-destination="$tap" web/tests/ || status=$?
  skips=$(grep -E '^ *ok [0-9]+ - .*# SKIP' "$tap" | sed -E 's/^ *ok [0-9]+ - /  /' || true)
  rm -f "$tap"
  if [ -n "$skips" ]; then
    echo "web tests skipped ($(printf '%s\n' "$skips" | wc -l), suites included):"
    printf '%s\n' "$skips"
  fi
else
  echo "web tests not run (SKIP_WEB=1)"
fi
exit "$status"
