#!/usr/bin/env bash
# Set up (if needed), run the lesson's Triton scripts unmodified on minitriton, then the speed benchmark
# against Triton's own interpreter.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
LESSON=${LESSON:-../shared/seed/lesson}
for script in vector_add softmax_triton rmsnorm_triton matmul_triton; do
  echo "== $script.py"
  .venv/bin/python -m minitriton run "$LESSON/$script.py"
done
echo "== test_flash.py"
(cd "$LESSON" && "$OLDPWD/.venv/bin/python" -m minitriton run -m pytest -q -p no:cacheprovider test_flash.py)
echo "== benchmark"
.venv/bin/python -m bench "$@"
