#!/usr/bin/env bash
# Sets up .venv if needed (tools/setup.sh) and runs the tests: the linter, then pytest and the sandbox page's
# end-to-end tests in headless Chromium (node's test runner; SKIP_WEB=1 leaves them out) side by side, each
# mostly on one core; pytest's output is printed once the page's tests end. With arguments, they go to pytest
# and the page is neither built nor tested: `bash tools/test.sh tests/semantics/test_dot.py -k bf16` runs the
# linter and those tests only. The exit status is non-zero if any part fails.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -gt 0 ]; then
  SKIP_WEB=1 bash tools/setup.sh
else
  bash tools/setup.sh
fi
status=0
# One BLAS thread: the tests run many small matrix products, which OpenBLAS's threads only slow down on a
# small shared machine (and the results stay reproducible).
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
# The linter first (pyproject.toml [tool.ruff]): unused or undefined names fail the run.
.venv/bin/ruff check --quiet . && echo "ruff: clean" || status=$?
if [ $# -gt 0 ] || [ "${SKIP_WEB:-0}" = 1 ]; then
  .venv/bin/python -m pytest -q "$@" || status=$?
  if [ $# -gt 0 ]; then
    echo "web tests not run: pytest arguments given (run \`bash tools/test.sh\` for everything)"
  else
    echo "web tests not run (SKIP_WEB=1)"
  fi
  exit "$status"
fi
pytest_log=$(mktemp)
tap=$(mktemp)
started=$(date +%s)
echo "pytest runs beside the page's tests; its output follows theirs"
.venv/bin/python -m pytest -q >"$pytest_log" 2>&1 &
pytest_pid=$!
trap 'kill "$pytest_pid" 2>/dev/null || true; rm -f "$pytest_log" "$tap"' EXIT
# node's own summary counts skipped tests but not skipped suites; its TAP output has both, so the skips are
# listed from there with their reasons.
node --test --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=tap --test-reporter-destination="$tap" web/tests/ || status=$?
skips=$(grep -E '^ *ok [0-9]+ - .*# SKIP' "$tap" | sed -E 's/^ *ok [0-9]+ - /  /' || true)
if [ -n "$skips" ]; then
  echo "web tests skipped ($(printf '%s\n' "$skips" | wc -l), suites included):"
  printf '%s\n' "$skips"
fi
echo "page tests: $(( $(date +%s) - started )) s"
pytest_status=0
wait "$pytest_pid" || pytest_status=$?
echo
echo "=== pytest"
cat "$pytest_log"
echo "pytest and the page tests: $(( $(date +%s) - started )) s"
[ "$pytest_status" = 0 ] || status=$pytest_status
exit "$status"
