"""What the benchmark runs and holds to: the workloads, their grids and tolerances, the targets, where results go."""
from __future__ import annotations

from pathlib import Path

WORKLOAD_NAMES = ["vector_add", "softmax_fwd", "rmsnorm", "matmul_fp32", "matmul_bf16",
                  "flash_fwd_full", "flash_fwd_causal"]
PROGRAMS = {"vector_add": 97, "softmax_fwd": 1823, "rmsnorm": 512, "matmul_fp32": 64, "matmul_bf16": 64,
            "flash_fwd_full": 30, "flash_fwd_causal": 30}
TOLERANCE = {"vector_add": 0.0, "softmax_fwd": 1e-6, "rmsnorm": 1e-4, "matmul_fp32": 1e-3,
             "matmul_bf16": 0.5, "flash_fwd_full": 1e-4, "flash_fwd_causal": 1e-4}
GEOMEAN_SET = [n for n in WORKLOAD_NAMES if n != "matmul_bf16"]
KNOWN_INTERPRETER_BUGS = {"matmul_bf16": "https://github.com/triton-lang/triton/issues/11584"}
BACKENDS = ["interpreter", "minitriton"]

TARGET_GEOMEAN = 30.0
TARGET_MATMUL = 100.0
TARGET_MEM = 2.0

RESULT_MARK = "BENCH_RESULT_JSON: "
MIN_TIMED, MAX_TIMED, DEFAULT_BUDGET_S = 3, 15, 2.0
RESULTS_DIR = Path(__file__).resolve().parent / "results"
REPO_ROOT = Path(__file__).resolve().parent.parent

