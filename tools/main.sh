#!/usr/bin/env bash
# The main job: sets up .venv if needed (tools/setup.sh, without the page), then runs tools/main_job.py:
# kernels/ and the exercises' solutions on minitriton, the lesson's Triton scripts when $LESSON (default
# ../shared/seed/lesson) is there, and the speed benchmark; a summary at the end. Writes nothing in the
# repository unless given --save (the benchmark as a run of record in bench/results/).
set -euo pipefail
cd "$(dirname "$0")/.."
SKIP_WEB=1 bash tools/setup.sh
exec .venv/bin/python tools/main_job.py "$@"
