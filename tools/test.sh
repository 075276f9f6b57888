#!/usr/bin/env bash
# Set up (if needed) and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
# Both suites always run: pytest, then the sandbox page's e2e tests in headless Chromium (node's test
# runner; SKIP_WEB=1 leaves them out). The exit status is non-zero if either fails.
status=0
# One BLAS thread: the tests run many small matrix products, which OpenBLAS's threads only slow down on a
# small shared machine (and the results stay reproducible).
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
.venv/bin/python -m pytest -q "$@" || status=$?
if [ "${SKIP_WEB:-0}" != 1 ]; then
  node --test web/tests/ || status=$?
fi
exit "$status"
