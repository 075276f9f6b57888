"""The NumPy floor of each workload: the same work done directly with vectorised NumPy in the same runtime.

Same inputs as the kernels, same precision (float32 arithmetic; bf16 and fp16 inputs are widened to fp32,
accumulated in fp32 and the result stored in their dtype), outputs checked against the same float64 references
and tolerances. No emulation: whole-array NumPy calls only, so the floor is what NumPy itself costs in that
runtime (CPython with OpenBLAS, or Pyodide's wasm32 build without a tuned BLAS). The lesson's floors are here,
the shapes suite's beside its workloads (``shapes.SHAPE_FLOORS``).
"""

from __future__ import annotations

import math

import numpy as np

from bench import workloads as wl


def _bf16_bits(x: np.ndarray) -> np.ndarray:
    return wl.round_to_bf16(x).view(np.uint32) >> np.uint32(16)


def _from_bf16(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)


def vector_add(d):
    x, y = d["add_x"], d["add_y"]
    out = np.empty_like(x)
    return (lambda: np.add(x, y, out=out)), {"out": out}


def softmax_rows(x):
    """Softmax of every row of the 2-D float32 array `x`."""
    y = np.empty_like(x)

    def run():
        np.subtract(x, x.max(axis=1, keepdims=True), out=y)
        np.exp(y, out=y)
        np.divide(y, y.sum(axis=1, keepdims=True), out=y)

    return run, {"y": y}


def softmax_fwd(d):
    return softmax_rows(d["softmax_x"])


def rmsnorm(d):
    x, w = d["rms_x"], d["rms_w"]
    y = np.empty_like(x)

    def run():
        mean_square = np.mean(x * x, axis=1, keepdims=True)
        np.multiply(x / np.sqrt(mean_square + np.float32(wl.RMS_EPS)), w, out=y)

    return run, {"y": y}


def matmul(a, b):
    """A @ B with fp32 accumulation; fp16 inputs are widened first and C is stored in their dtype."""
    if a.dtype == np.float32:
        c = np.empty((a.shape[0], b.shape[1]), np.float32)
        return (lambda: np.matmul(a, b, out=c)), {"c": c}
    c = np.empty((a.shape[0], b.shape[1]), a.dtype)

    def run():
        c[...] = np.matmul(a.astype(np.float32), b.astype(np.float32))

    return run, {"c": c}


def matmul_fp32(d):
    return matmul(d["mm_a"], d["mm_b"])


def matmul_bf16(d):
    a, b = _bf16_bits(d["mm_a"]).astype(np.uint16), _bf16_bits(d["mm_b"]).astype(np.uint16)
    c = np.empty((a.shape[0], b.shape[1]), np.uint16)

    def run():
        acc = _from_bf16(a) @ _from_bf16(b)
        c[...] = _bf16_bits(acc)

    return run, {"c": c}


def attention(q, k, v, causal):
    """Attention over (heads, T, D) arrays in fp32: O (in q's dtype) and the logsumexp of each row."""
    t = q.shape[1]
    scale = np.float32(1.0 / math.sqrt(q.shape[2]))
    future = np.triu(np.ones((t, t), dtype=bool), k=1)
    o = np.empty_like(q)
    lse = np.empty(q.shape[:2], np.float32)
    widen = q.dtype != np.float32

    def run():
        qf, kf, vf = (x.astype(np.float32) for x in (q, k, v)) if widen else (q, k, v)
        s = np.matmul(qf, kf.transpose(0, 2, 1))
        np.multiply(s, scale, out=s)
        if causal:
            s[:, future] = -np.inf
        m = s.max(axis=-1, keepdims=True)
        s -= m
        np.exp(s, out=s)
        total = s.sum(axis=-1, keepdims=True)
        if widen:
            o[...] = np.matmul(s, vf) / total
        else:
            np.matmul(s, v, out=o)
            np.divide(o, total, out=o)
        lse[...] = (m + np.log(total))[..., 0]

    return run, {"o": o, "lse": lse}


def flash_fwd_full(d):
    return attention(d["q"], d["k"], d["v"], causal=False)


def flash_fwd_causal(d):
    return attention(d["q"], d["k"], d["v"], causal=True)


FLOORS = {"vector_add": vector_add, "softmax_fwd": softmax_fwd, "rmsnorm": rmsnorm, "matmul_fp32": matmul_fp32,
          "matmul_bf16": matmul_bf16, "flash_fwd_full": flash_fwd_full, "flash_fwd_causal": flash_fwd_causal}


def outputs_f64(outputs: dict) -> dict:
    """The floor's outputs in float64, for the workload's reference check (uint16 arrays hold bf16 bits)."""
    return {k: (_from_bf16(v) if v.dtype == np.uint16 else v).astype(np.float64) for k, v in outputs.items()}


def measure(workload, floor, data: dict, time_launches) -> dict:
    """Run `floor(data)` once (checked against `workload`'s reference), then time it with
    `time_launches(run)` (the benchmark's own method). Returns median_s, n_timed, max_abs_error, passed."""
    run, outputs = floor(data)
    run()
    reference = workload.reference(data)
    got = outputs_f64(outputs)
    err = max(float(np.inf) if np.isnan(got[k] - ref).any() else float(np.abs(got[k] - ref).max())
              for k, ref in reference.items())
    times = time_launches(run)
    return {"median_s": float(np.median(times)), "n_timed": len(times), "times": times,
            "max_abs_error": err, "passed": bool(err <= workload.tol)}
