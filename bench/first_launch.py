"""First launch vs warm launch: what the frontend's once-per-function work (refusals, scopes, the rewrite, the
kernel's globals) adds to a kernel's first launch in a module of many `@jit` functions.

    python -m bench.first_launch                      # both cases, 7 fresh processes each
    python -m bench.first_launch --rounds 15
    python -m bench.first_launch --against OTHER_CHECKOUT   # the same, interleaved with another minitriton

Cases: `module30`, a generated module of 30 `@jit` functions (ten kernels of five kinds, each with two helpers;
the launched matmul kernel reaches three of them), and `flash_attention`, the lesson's module (14 `@jit`
functions; its forward kernel reaches six). A first launch happens once per process, so each round starts a
fresh Python that imports the module, launches once (timed: the first launch), then 15 times more (the warm
launch is their median). The goal (issue 32): first launch <= warm launch + 20 ms. Medians over the rounds;
with `--against`, the rounds of both checkouts alternate, so the machine's load falls on both alike.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOAL_MS = 20.0
WARM_LAUNCHES = 15

_KINDS = {
    "elementwise": '''
        @triton.jit
        def _activation_{i}(x, SLOPE: tl.constexpr):
            return tl.where(x >= 0, x, x * SLOPE)


        @triton.jit
        def _scale_{i}(x, bias, alpha):
            y = x * alpha + bias
            if alpha > 1:
                y = y / alpha
            return y


        @triton.jit
        def elementwise_kernel_{i}(x_ptr, b_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
            pid = tl.program_id(0)
            offs = pid * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            x = tl.load(x_ptr + offs, mask=mask, other=0.0)
            b = tl.load(b_ptr + offs, mask=mask, other=0.0)
            y = _activation_{i}(_scale_{i}(x, b, alpha), 0.01)
            tl.store(out_ptr + offs, y, mask=mask)
        ''',
    "softmax": '''
        @triton.jit
        def _row_max_{i}(x):
            return tl.max(x, axis=0)


        @triton.jit
        def _normalise_{i}(x, m):
            num = tl.exp(x - m)
            den = tl.sum(num, axis=0)
            return num / den


        @triton.jit
        def softmax_kernel_{i}(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
            row = tl.program_id(0)
            cols = tl.arange(0, BLOCK)
            mask = cols < n_cols
            x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
            y = _normalise_{i}(x, _row_max_{i}(x))
            tl.store(y_ptr + row * stride + cols, y, mask=mask)
        ''',
    "matmul": '''
        @triton.jit
        def _tile_{i}(ptr, rows, cols, stride, n_rows, n_cols):
            mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
            return tl.load(ptr + rows[:, None] * stride + cols[None, :], mask=mask, other=0.0)


        @triton.jit
        def _epilogue_{i}(acc, ACTIVATION: tl.constexpr):
            if ACTIVATION == "relu":
                acc = tl.maximum(acc, 0.0)
            elif ACTIVATION == "leaky":
                acc = tl.where(acc >= 0, acc, acc * 0.01)
            return acc


        @triton.jit
        def matmul_kernel_{i}(a_ptr, b_ptr, c_ptr, M, N, K, stride_a, stride_b, stride_c,
                              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                              ACTIVATION: tl.constexpr):
            pid_m = tl.program_id(0)
            pid_n = tl.program_id(1)
            rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
            rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for k in range(0, tl.cdiv(K, BLOCK_K)):
                rk = k * BLOCK_K + tl.arange(0, BLOCK_K)
                a = _tile_{i}(a_ptr, rm, rk, stride_a, M, K)
                b = _tile_{i}(b_ptr, rk, rn, stride_b, K, N)
                acc += tl.dot(a, b)
            acc = _epilogue_{i}(acc, ACTIVATION)
            mask = (rm[:, None] < M) & (rn[None, :] < N)
            tl.store(c_ptr + rm[:, None] * stride_c + rn[None, :], acc, mask=mask)
        ''',
    "rmsnorm": '''
        @triton.jit
        def _mean_square_{i}(x_ptr, n_cols, BLOCK: tl.constexpr):
            acc = tl.zeros((BLOCK,), dtype=tl.float32)
            for start in range(0, n_cols, BLOCK):
                cols = start + tl.arange(0, BLOCK)
                x = tl.load(x_ptr + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
                acc += x * x
            return tl.sum(acc, axis=0) / n_cols


        @triton.jit
        def _apply_{i}(x_ptr, w_ptr, y_ptr, n_cols, rstd, BLOCK: tl.constexpr):
            for start in range(0, n_cols, BLOCK):
                cols = start + tl.arange(0, BLOCK)
                mask = cols < n_cols
                x = tl.load(x_ptr + cols, mask=mask, other=0.0)
                w = tl.load(w_ptr + cols, mask=mask, other=0.0)
                tl.store(y_ptr + cols, x * rstd * w, mask=mask)


        @triton.jit
        def rmsnorm_kernel_{i}(x_ptr, w_ptr, y_ptr, n_cols, stride, eps, BLOCK: tl.constexpr):
            row = tl.program_id(0)
            rstd = 1 / tl.sqrt(_mean_square_{i}(x_ptr + row * stride, n_cols, BLOCK) + eps)
            _apply_{i}(x_ptr + row * stride, w_ptr, y_ptr + row * stride, n_cols, rstd, BLOCK)
        ''',
    "online_softmax": '''
        @triton.jit
        def _update_{i}(m, d, x):
            m_new = tl.maximum(m, x)
            d = d * tl.exp(m - m_new) + tl.exp(x - m_new)
            return m_new, d


        @triton.jit
        def _row_stats_{i}(x_ptr, n_cols, BLOCK: tl.constexpr):
            m = tl.full((BLOCK,), -float("inf"), tl.float32)
            d = tl.zeros((BLOCK,), dtype=tl.float32)
            for start in range(0, n_cols, BLOCK):
                cols = start + tl.arange(0, BLOCK)
                x = tl.load(x_ptr + cols, mask=cols < n_cols, other=-float("inf"))
                m, d = _update_{i}(m, d, x)
            m_row = tl.max(m, axis=0)
            return m_row, tl.sum(d * tl.exp(m - m_row), axis=0)


        @triton.jit
        def online_softmax_kernel_{i}(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
            row = tl.program_id(0)
            m, d = _row_stats_{i}(x_ptr + row * stride, n_cols, BLOCK)
            for start in range(0, n_cols, BLOCK):
                cols = start + tl.arange(0, BLOCK)
                mask = cols < n_cols
                x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
                tl.store(y_ptr + row * stride + cols, tl.exp(x - m) / d, mask=mask)
        ''',
}


def module30_source() -> str:
    """A module of 30 `@jit` functions: two rounds of the five kinds, each a kernel and its two helpers."""
    kinds = list(_KINDS.values())
    parts = ["import triton\nimport triton.language as tl\n"]
    for i in range(10):
        parts.append(textwrap.dedent(kinds[i % len(kinds)]).format(i=i))
    return "\n\n".join(parts)


# ---------------------------------------------------------------- the child: one process, one first launch

def _module30_launch(directory: str):
    sys.path.insert(0, directory)
    import numpy as np
    import module30
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((64, 64)).astype(np.float32), rng.standard_normal((64, 64)).astype(np.float32)
    c = np.empty((64, 64), np.float32)
    kernel = module30.matmul_kernel_7

    def launch():
        kernel[(2, 2)](a, b, c, 64, 64, 64, 64, 64, 64, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, ACTIVATION="relu")
    return launch


def _flash_attention_launch(directory: str):
    import numpy as np
    from kernels import flash_attention
    q = np.random.default_rng(0).standard_normal((1, 2, 64, 32)).astype(np.float32)

    def launch():
        flash_attention.flash_attention(q, q, q, causal=True, block_m=16, block_n=16)
    return launch


CASES = {"module30": _module30_launch, "flash_attention": _flash_attention_launch}


def child(case: str, directory: str):
    """Print the first launch of `case` and the median of the warm ones, in wall and CPU seconds."""
    import minitriton
    minitriton.install()
    launch = CASES[case](directory)
    times = []
    for _ in range(1 + WARM_LAUNCHES):
        wall, cpu = time.perf_counter(), time.process_time()
        launch()
        times.append((time.perf_counter() - wall, time.process_time() - cpu))
    warm = times[1:]
    print(json.dumps({"first": times[0][0], "warm": statistics.median(t[0] for t in warm),
                      "first_cpu": times[0][1], "warm_cpu": statistics.median(t[1] for t in warm)}))


# ---------------------------------------------------------------- the parent: rounds of fresh processes

def _run(case: str, tree: str, directory: str) -> dict:
    env = dict(os.environ, PYTHONPATH=tree)   # that checkout's minitriton and kernels
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", case, directory], env=env, cwd=tree,
                         capture_output=True, text=True, timeout=300)
    if out.returncode:
        raise SystemExit(f"{case} failed under {tree}:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    if argv is None and sys.argv[1:2] == ["--child"]:
        return child(*sys.argv[2:4])
    parser = argparse.ArgumentParser(prog="python -m bench.first_launch", description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7, help="fresh processes per case (and checkout)")
    parser.add_argument("--only", default=",".join(CASES), help="cases: " + " ".join(CASES))
    parser.add_argument("--against", help="another checkout of minitriton, run interleaved (e.g. the old code)")
    args = parser.parse_args(argv)
    trees = {"this": ROOT} | ({"against": os.path.abspath(args.against)} if args.against else {})
    with tempfile.TemporaryDirectory() as directory:
        with open(os.path.join(directory, "module30.py"), "w") as f:
            f.write(module30_source())
        print(f"first launch vs warm launch (goal: first <= warm + {GOAL_MS:.0f} ms); medians of {args.rounds} "
              f"fresh processes; CPU: this process's CPU time (what a shared machine's load does not inflate)")
        print(f"{'case':16} {'checkout':8} {'first ms':>9} {'warm ms':>8} {'extra ms':>9} {'ratio':>6} "
              f"{'CPU extra ms':>13}  goal (CPU)")
        for case in args.only.split(","):
            runs = {name: [] for name in trees}
            for _ in range(args.rounds):
                for name, tree in trees.items():
                    runs[name].append(_run(case, tree, directory))
            for name, found in runs.items():
                first = statistics.median(r["first"] for r in found) * 1e3
                warm = statistics.median(r["warm"] for r in found) * 1e3
                extra = statistics.median(r["first"] - r["warm"] for r in found) * 1e3
                cpu = statistics.median(r["first_cpu"] - r["warm_cpu"] for r in found) * 1e3
                verdict = "met" if cpu <= GOAL_MS else "missed"
                print(f"{case:16} {name:8} {first:9.1f} {warm:8.1f} {extra:9.1f} {first / warm:6.1f} {cpu:13.1f}  "
                      f"{verdict}")


if __name__ == "__main__":
    main()
