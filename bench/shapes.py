"""The shapes suite: kernel shapes people write beside the lesson's, each with its NumPy floor.

    persistent softmax   64 programs stride over 1000 rows of 1000 (``tl.range(pid, n_rows, nprog)``)
    one-row softmax      one program, one row of 1,000,000 in one block of 2^20 (the lesson's softmax kernel
                         with ``BLOCK_SIZE = triton.next_power_of_2(n_cols)``, as the tutorial sizes it)
    matmul fp32 / fp16   128^3 (4 programs) and 256^3 (16), the lesson's matmul kernel, 64x64x32 tiles
    flash attention fp16 T = 128 (8 programs) and T = 512 (32), 4 heads of D = 64, the lesson's kernel

Like ``workloads``: one kernel source for both backends, inputs from one generator, float64 references and
tolerances; the floors are the same work as whole-array NumPy calls (``floors``). This module also holds
the registry of every workload, the lesson's and these: ``BY_NAME``, ``FLOORS`` and ``make_data``.
"""

from __future__ import annotations

import math

import numpy as np
import triton
import triton.language as tl

from bench import floors as fl
from bench import workloads as wl
from bench.workloads import Prepared, Workload, _cdiv


@triton.jit
def softmax_persistent_kernel(x_ptr, y_ptr, n_rows, n_cols, row_stride, BLOCK_SIZE: tl.constexpr):
    # A few programs, each striding over the rows: programs run 16 or 15 rows here.
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    col = tl.arange(0, BLOCK_SIZE)
    valid = col < n_cols
    for row in tl.range(pid, n_rows, nprog):
        start = row * row_stride
        x = tl.load(x_ptr + start + col, mask=valid, other=-float("inf"))
        x = x - tl.max(x, axis=0)
        numer = tl.exp(x)
        tl.store(y_ptr + start + col, numer / tl.sum(numer, axis=0), mask=valid)


PERSISTENT_SHAPE, PERSISTENT_PROGRAMS = (1000, 1000), 64
ROW = 1_000_000
FLASH16_BH, FLASH16_D = 4, 64


def make_shape_data() -> dict[str, np.ndarray]:
    """The suite's inputs, from one ``np.random.default_rng(32)`` in this order; fp16 ones rounded from fp32."""
    rng = np.random.default_rng(32)
    data = {"ps_x": rng.standard_normal(PERSISTENT_SHAPE, dtype=np.float32),
            "row_x": rng.standard_normal(ROW, dtype=np.float32)}
    for n in (128, 256):
        data[f"mm{n}_a"] = rng.standard_normal((n, n), dtype=np.float32)
        data[f"mm{n}_b"] = rng.standard_normal((n, n), dtype=np.float32)
        data[f"mm{n}_a16"] = data[f"mm{n}_a"].astype(np.float16)
        data[f"mm{n}_b16"] = data[f"mm{n}_b"].astype(np.float16)
    for t in (128, 512):
        for name in "qkv":
            data[f"fa{t}_{name}"] = rng.standard_normal((FLASH16_BH, t, FLASH16_D), dtype=np.float32).astype(np.float16)
    return data


def make_data() -> dict[str, np.ndarray]:
    """Every workload's inputs: the lesson's (``workloads.make_data``) and this suite's."""
    return {**wl.make_data(), **make_shape_data()}


# --------------------------------------------------------------------------------------------------
# float64 references
# --------------------------------------------------------------------------------------------------


def _softmax64(x):
    x = np.atleast_2d(x).astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _attention64(q, k, v):
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    scores = q @ k.transpose(0, 2, 1) / math.sqrt(q.shape[2])
    row_max = scores.max(axis=-1, keepdims=True)
    e = np.exp(scores - row_max)
    total = e.sum(axis=-1, keepdims=True)
    return {"o": (e / total) @ v, "lse": (row_max + np.log(total))[..., 0]}


# --------------------------------------------------------------------------------------------------
# Setups (data, arrays) -> Prepared
# --------------------------------------------------------------------------------------------------


def _output16(ar, shape):
    return ar.input(np.full(shape, np.nan, np.float16))


def setup_softmax_persistent(d, ar):
    rows, cols = PERSISTENT_SHAPE
    x, y = ar.input(d["ps_x"]), ar.output(PERSISTENT_SHAPE)

    def launch():
        softmax_persistent_kernel[(PERSISTENT_PROGRAMS,)](x, y, rows, cols, cols, BLOCK_SIZE=1024)

    return Prepared(launch, {"y": y}, [x, y])


def setup_softmax_row(d, ar):
    x, y = ar.input(d["row_x"]), ar.output((ROW,))
    block = triton.next_power_of_2(ROW)

    def launch():
        wl.softmax_kernel[(1,)](x, y, ROW, ROW, BLOCK_SIZE=block)

    return Prepared(launch, {"y": y}, [x, y])


def _matmul_setup(n, fp16):
    def setup(d, ar):
        suffix = "16" if fp16 else ""
        a, b = ar.input(d[f"mm{n}_a{suffix}"]), ar.input(d[f"mm{n}_b{suffix}"])
        c = _output16(ar, (n, n)) if fp16 else ar.output((n, n))
        grid = (_cdiv(n, 64) ** 2,)

        def launch():
            wl.matmul_kernel[grid](a, b, c, n, n, n, n, 1, n, 1, n, 1, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8)

        return Prepared(launch, {"c": c}, [a, b, c])

    return setup


def _flash_setup(t):
    def setup(d, ar):
        q, k, v = (ar.input(d[f"fa{t}_{n}"]) for n in "qkv")
        o, lse = _output16(ar, (FLASH16_BH, t, FLASH16_D)), ar.output((FLASH16_BH, t))
        grid = (_cdiv(t, 64), FLASH16_BH)
        scale = 1.0 / math.sqrt(FLASH16_D)

        def launch():
            wl.flash_fwd_kernel[grid](q, k, v, o, lse, t, scale, t * FLASH16_D, FLASH16_D,
                                      D=FLASH16_D, BLOCK_M=64, BLOCK_N=64, CAUSAL=False)

        return Prepared(launch, {"o": o, "lse": lse}, [q, k, v, o, lse])

    return setup


# --------------------------------------------------------------------------------------------------
# The suite: workloads, references and floors
# --------------------------------------------------------------------------------------------------


def _matmul_ref(n, fp16):
    suffix = "16" if fp16 else ""
    return lambda d: {"c": d[f"mm{n}_a{suffix}"].astype(np.float64) @ d[f"mm{n}_b{suffix}"].astype(np.float64)}


def _flash_ref(t):
    return lambda d: _attention64(*(d[f"fa{t}_{n}"] for n in "qkv"))


SHAPES = [
    Workload("softmax_persistent", PERSISTENT_PROGRAMS, 1e-6, setup_softmax_persistent,
             lambda d: {"y": _softmax64(d["ps_x"])}, in_geomean=False),
    Workload("softmax_row_1m", 1, 1e-9, setup_softmax_row, lambda d: {"y": _softmax64(d["row_x"])[0]},
             in_geomean=False),
    *(Workload(f"matmul_{kind}_{n}", _cdiv(n, 64) ** 2, tol, _matmul_setup(n, kind == "fp16"),
               _matmul_ref(n, kind == "fp16"), in_geomean=False)
      for kind, tol in (("fp32", 1e-3), ("fp16", 0.05)) for n in (128, 256)),
    *(Workload(f"flash_fp16_{t}", _cdiv(t, 64) * FLASH16_BH, 2e-3, _flash_setup(t), _flash_ref(t), in_geomean=False)
      for t in (128, 512)),
]

def _row_floor(x):
    run, outputs = fl.softmax_rows(x[None, :])
    return run, {"y": outputs["y"][0]}


SHAPE_FLOORS = {
    "softmax_persistent": lambda d: fl.softmax_rows(d["ps_x"]),
    "softmax_row_1m": lambda d: _row_floor(d["row_x"]),
    **{f"matmul_{kind}_{n}": (lambda d, n=n, s=suffix: fl.matmul(d[f"mm{n}_a{s}"], d[f"mm{n}_b{s}"]))
       for kind, suffix in (("fp32", ""), ("fp16", "16")) for n in (128, 256)},
    **{f"flash_fp16_{t}": (lambda d, t=t: fl.attention(*(d[f"fa{t}_{n}"] for n in "qkv"), causal=False))
       for t in (128, 512)},
}


BY_NAME = {**wl.BY_NAME, **{w.name: w for w in SHAPES}}
FLOORS = {**fl.FLOORS, **SHAPE_FLOORS}
