"""What the benchmark runs and holds to: the workloads, their grids and tolerances, the targets, where results go."""
from __future__ import annotations

from pathlib import Path

# The lesson's seven (bench/workloads.py), what `python -m bench` and tools/main.sh run.
WORKLOAD_NAMES = ["vector_add", "softmax_fwd", "rmsnorm", "matmul_fp32", "matmul_bf16",
                  "flash_fwd_full", "flash_fwd_causal"]
# The shapes suite (bench/shapes.py): shapes people write beside the lesson's, `--suite shapes`.
SHAPE_NAMES = ["softmax_persistent", "softmax_row_1m", "matmul_fp32_128", "matmul_fp32_256", "matmul_fp16_128",
               "matmul_fp16_256", "flash_fp16_128", "flash_fp16_512"]
SUITES = {"lesson": WORKLOAD_NAMES, "shapes": SHAPE_NAMES, "all": WORKLOAD_NAMES + SHAPE_NAMES}
PROGRAMS = {"vector_add": 97, "softmax_fwd": 1823, "rmsnorm": 512, "matmul_fp32": 64, "matmul_bf16": 64,
            "flash_fwd_full": 30, "flash_fwd_causal": 30,
            "softmax_persistent": 64, "softmax_row_1m": 1, "matmul_fp32_128": 4, "matmul_fp32_256": 16,
            "matmul_fp16_128": 4, "matmul_fp16_256": 16, "flash_fp16_128": 8, "flash_fp16_512": 32}
TOLERANCE = {"vector_add": 0.0, "softmax_fwd": 1e-6, "rmsnorm": 1e-4, "matmul_fp32": 1e-3,
             "matmul_bf16": 0.5, "flash_fwd_full": 1e-4, "flash_fwd_causal": 1e-4,
             "softmax_persistent": 1e-6, "softmax_row_1m": 1e-9, "matmul_fp32_128": 1e-3, "matmul_fp32_256": 1e-3,
             "matmul_fp16_128": 0.05, "matmul_fp16_256": 0.05, "flash_fp16_128": 2e-3, "flash_fp16_512": 2e-3}
GEOMEAN_SET = [n for n in WORKLOAD_NAMES if n != "matmul_bf16"]
KNOWN_INTERPRETER_BUGS = {"matmul_bf16": "https://github.com/triton-lang/triton/issues/11584"}
BACKENDS = ["interpreter", "minitriton"]

TARGET_GEOMEAN = 30.0
TARGET_MATMUL = 100.0
TARGET_MEM = 2.0
# Every workload, each on its own: at least this many times the interpreter, at most this many times its floor.
TARGET_VS_INTERPRETER = 30.0
TARGET_VS_FLOOR = 5.0

RESULT_MARK = "BENCH_RESULT_JSON: "
MIN_TIMED, MAX_TIMED, DEFAULT_BUDGET_S = 3, 15, 2.0
RESULTS_DIR = Path(__file__).resolve().parent / "results"
REPO_ROOT = Path(__file__).resolve().parent.parent

