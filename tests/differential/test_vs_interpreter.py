"""Differential tests: minitriton against Triton 3.9.0's own interpreter (TRITON_INTERPRET=1, torch CPU).

The same kernel source runs on both sides (real Triton in one subprocess per session, see tests/helpers/oracle.py).
Compared: only cases where the interpreter agrees with the GPU (docs/semantics.md S1, S13; the GPU wins
where they differ). Integers, masks, indices, casts and loaded/stored values are compared bit for bit;
exp/log/sqrt/sin/`/` with the ulp bounds measured on the GPU (S1.33); fp32 sums and dots with a tolerance
(S1.34: the GPU contracts into FMAs and orders sums freely).

Where the interpreter is known to differ from the GPU, `EXPECTED_INTERPRETER_DIVERGENCES` lists the case and
its docs/semantics.md row; `test_documented_divergence` checks that the interpreter still shows the documented
wrong value and that minitriton gives the GPU's value, so the table cannot rot silently. Two of its rows come
from Triton's source (Python `max` on blocks, S15.11; float kernel arguments typed fp32, S15.10).
`tl.maximum` with NaN differs only in the 3.6 interpreter (S1.14), so under 3.9 it is compared.
`ERROR_CASES` are compile errors both sides raise with the same wording (S14).

Everything on the interpreter side runs in one subprocess (~3 s); the module skips itself when triton/torch
cannot be imported there.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pytest

import minitriton
from helpers.oracle import BF16, Case, OracleUnavailable, clone, run_batch, run_in_minitriton, ulp_distance

# ============================================================================ comparators


def _bits(a):
    if isinstance(a, BF16):
        return a.array
    return a


def exact(mt, it, label):
    """Bit-for-bit, except that any NaN equals any NaN (payloads are not specified)."""
    mt, it = _bits(mt), _bits(it)
    assert mt.dtype == it.dtype and mt.shape == it.shape, (label, mt.dtype, it.dtype, mt.shape, it.shape)
    if mt.dtype.kind == "f":
        width = {2: np.uint16, 4: np.uint32, 8: np.uint64}[mt.dtype.itemsize]
        nan = np.isnan(mt) & np.isnan(it)
        same = (np.ascontiguousarray(mt).view(width) == np.ascontiguousarray(it).view(width)) | nan
    else:
        same = mt == it
    if not np.all(same):
        bad = np.argwhere(~np.asarray(same))[:8]
        pairs = [(tuple(int(i) for i in b), mt[tuple(b)].item(), it[tuple(b)].item()) for b in bad]
        raise AssertionError(f"{label}: {np.size(same) - np.count_nonzero(same)} mismatches "
                             f"(index, minitriton, interpreter): {pairs}")


def ulps(n, dtype=np.float32):
    def check(mt, it, label):
        mt, it = np.asarray(mt), np.asarray(it)
        assert mt.dtype == it.dtype and mt.shape == it.shape, label
        d = ulp_distance(mt, it, dtype)
        assert np.all(d <= n), f"{label}: max {d.max()} ulp > {n} (at {np.unravel_index(d.argmax(), d.shape)})"
    check.__name__ = f"ulps({n})"
    return check


def close(rtol, atol):
    """|mt - it| <= atol + rtol * |it| (NaN == NaN); for sums and dots whose order is not specified."""
    def check(mt, it, label):
        mt, it = np.asarray(mt), np.asarray(it)
        assert mt.dtype == it.dtype and mt.shape == it.shape, label
        a, b = mt.astype(np.float64), it.astype(np.float64)
        both_nan = np.isnan(a) & np.isnan(b)
        with np.errstate(invalid="ignore"):                      # inf - inf
            ok = both_nan | (np.abs(a - b) <= atol + rtol * np.abs(b)) | (a == b)
        assert np.all(ok), f"{label}: max |diff| {np.nanmax(np.abs(a - b))} (rtol {rtol}, atol {atol})"
    check.__name__ = f"close({rtol}, {atol})"
    return check


def by_rows(row_len, special):
    """Exact on every row of `row_len` elements of a flat output, except rows given in `special`."""
    def check_rows(mt, it, label):
        for r in range(mt.size // row_len):
            part = slice(r * row_len, (r + 1) * row_len)
            special.get(r, exact)(mt[part], it[part], f"{label} row {r}")
    return check_rows


# ============================================================================ cases

@dataclass
class Spec:
    source: str
    kernel: str
    grid: tuple
    args: tuple
    kwargs: dict = field(default_factory=dict)
    check: dict = field(default_factory=dict)   # arg index / kwarg name -> comparator (default: exact)

    def case(self):
        return Case(self.source, self.kernel, self.grid, self.args, self.kwargs)


CASES: dict[str, Spec] = {}


def add(name, source, kernel, grid, args, kwargs=None, check=None):
    assert name not in CASES, name
    CASES[name] = Spec(source, kernel, tuple(grid), tuple(args), dict(kwargs or {}), dict(check or {}))


HEADER = "import triton\nimport triton.language as tl\n"
rng = np.random.default_rng(20240917)


def zeros(shape, dtype):
    return np.zeros(shape, dtype)


def rand_ints(dtype, n, lo=None, hi=None):
    info = np.iinfo(dtype)
    lo = info.min if lo is None else lo
    hi = info.max if hi is None else hi
    return rng.integers(lo, hi, n, dtype=dtype, endpoint=True)


# ---------------------------------------------------------------------------- memory: masks, 2-D, strides
SRC_MEMORY = HEADER + '''
@triton.jit
def vector_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def masked_loads(x_ptr, plain_ptr, other_ptr, tensor_other_ptr, n, OTHER: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(plain_ptr + offs, tl.load(x_ptr + offs, mask=mask))                # masked lanes read 0
    tl.store(other_ptr + offs, tl.load(x_ptr + offs, mask=mask, other=OTHER))
    tl.store(tensor_other_ptr + offs, tl.load(x_ptr + offs, mask=mask, other=offs * 2 - 1))


@triton.jit
def masked_store_pattern(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    keep = (offs % 3 == 0) | (offs > BLOCK - 3)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=keep, other=7) * 2, mask=keep)


@triton.jit
def tile_2d(x_ptr, out_ptr, M, N, stride_xm, stride_xn, stride_om, stride_on,
            BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * stride_xm + rn[None, :] * stride_xn, mask=mask, other=-1.0)
    tl.store(out_ptr + rn[None, :] * stride_om + rm[:, None] * stride_on, x * 2.0 + 1.0, mask=mask)


@triton.jit
def gather_rows(x_ptr, idx_ptr, out_ptr, stride, N: tl.constexpr, R: tl.constexpr):
    r = tl.arange(0, R)
    rows = tl.load(idx_ptr + r)
    cols = tl.arange(0, N)
    vals = tl.load(x_ptr + rows[:, None] * stride + cols[None, :])
    tl.store(out_ptr + r[:, None] * N + cols[None, :], vals)


@triton.jit
def scalar_ptr_ops(x_ptr, out_ptr, n):
    total = tl.load(x_ptr)
    for i in range(1, n):
        total += tl.load(x_ptr + i)
    tl.store(out_ptr, total)
    tl.store(out_ptr + 1, tl.load(x_ptr + n - 1, mask=n > 100, other=-5))
'''

n = 1000
x, y = rng.standard_normal((2, n)).astype(np.float32)
add("vector_add_masked_tail", SRC_MEMORY, "vector_add", (4,), (x, y, zeros(n, np.float32), n), {"BLOCK": 256})
add("vector_add_int64", SRC_MEMORY, "vector_add", (3,),
    (rand_ints(np.int64, 70), rand_ints(np.int64, 70), zeros(70, np.int64), 70), {"BLOCK": 32})
for dt, other in [(np.float32, -1.5), (np.int32, 7), (np.float16, 0.25), (np.uint8, 200)]:
    xs = (rng.standard_normal(50) * 10).astype(dt) if dt in (np.float32, np.float16) else rand_ints(dt, 50)
    add(f"masked_load_other_{np.dtype(dt).name}", SRC_MEMORY, "masked_loads", (4,),
        (xs, zeros(64, dt), zeros(64, dt), zeros(64, dt), 50), {"OTHER": other, "BLOCK": 16})
add("masked_store_pattern", SRC_MEMORY, "masked_store_pattern", (1,),
    (rand_ints(np.int32, 16, -1000, 1000), np.full(16, -9, np.int32)), {"BLOCK": 16})

x2 = rng.standard_normal((13, 21)).astype(np.float32)
add("tile_2d_contiguous", SRC_MEMORY, "tile_2d", (2, 2),
    (x2, zeros((21, 13), np.float32), 13, 21, 21, 1, 13, 1), {"BM": 8, "BN": 16})
base = rng.standard_normal((27, 64)).astype(np.float32)
xv = base[1::2, ::3]                                   # (13, 22), strides (128, 3) elements
out_base = np.full((23, 40), 5.0, np.float32)
ov = out_base[1:, ::3]                                  # (22, 14): non-contiguous output, the rest must stay 5.0
add("tile_2d_noncontiguous", SRC_MEMORY, "tile_2d", (2, 2),
    (xv, ov, 13, 22, xv.strides[0] // 4, xv.strides[1] // 4, ov.strides[0] // 4, ov.strides[1] // 4),
    {"BM": 8, "BN": 16})
xt = np.ascontiguousarray(rng.standard_normal((22, 13)).astype(np.float32)).T    # transposed view
add("tile_2d_transposed_input", SRC_MEMORY, "tile_2d", (2, 2),
    (xt, zeros((22, 13), np.float32), 13, 22, xt.strides[0] // 4, xt.strides[1] // 4, 13, 1), {"BM": 8, "BN": 16})
table = rng.integers(-99, 99, (10, 8)).astype(np.int16)
add("gather_rows_indirect_offsets", SRC_MEMORY, "gather_rows", (1,),
    (table, np.array([9, 0, 3, 3], np.int32), zeros((4, 8), np.int16), 8), {"N": 8, "R": 4})
add("scalar_pointer_loop", SRC_MEMORY, "scalar_ptr_ops", (1,), (np.arange(1, 11, dtype=np.int32) ** 2,
                                                              zeros(2, np.int32), 10))

# ---------------------------------------------------------------------------- integer arithmetic
SRC_INT = HEADER + '''
@triton.jit
def int_ops(a_ptr, b_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    tl.store(out_ptr + 0 * N + offs, a + b)
    tl.store(out_ptr + 1 * N + offs, a - b)
    tl.store(out_ptr + 2 * N + offs, a * b)
    tl.store(out_ptr + 3 * N + offs, a + 1)
    tl.store(out_ptr + 4 * N + offs, a * 2)
    tl.store(out_ptr + 5 * N + offs, -a)
    tl.store(out_ptr + 6 * N + offs, a & b)
    tl.store(out_ptr + 7 * N + offs, a | b)
    tl.store(out_ptr + 8 * N + offs, a ^ b)
    tl.store(out_ptr + 9 * N + offs, a >> 3)
    tl.store(out_ptr + 10 * N + offs, a << 5)
    tl.store(out_ptr + 11 * N + offs, ~a)
    tl.store(out_ptr + 12 * N + offs, (a + 1) // 2)
    tl.store(out_ptr + 13 * N + offs, tl.maximum(a, b))
    tl.store(out_ptr + 14 * N + offs, tl.minimum(a, b))
    tl.store(out_ptr + 15 * N + offs, tl.where(a < b, a, b * 3))


@triton.jit
def int_divmod(a_ptr, b_ptr, q_ptr, r_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    tl.store(q_ptr + offs, a // b)
    tl.store(r_ptr + offs, a % b)


@triton.jit
def scalar_divmod(out_ptr, a, b, A: tl.constexpr, B: tl.constexpr):
    tl.store(out_ptr + 0, a // b)          # runtime scalars: C semantics
    tl.store(out_ptr + 1, a % b)
    tl.store(out_ptr + 2, A // B)          # constexpr only: Python semantics
    tl.store(out_ptr + 3, A % B)
    tl.store(out_ptr + 4, a // B)
    tl.store(out_ptr + 5, A % b)
    tl.store(out_ptr + 6, tl.cdiv(a, B))


@triton.jit
def wrap_offsets(out_ptr, stride, n):
    pid = tl.program_id(0)
    tl.store(out_ptr + 0, pid + stride * 3)
    tl.store(out_ptr + 1, n + 1)
    tl.store(out_ptr + 2, n * 4)
    tl.store(out_ptr + 3, (n + 1) // 2)
'''

N = 64
for dt in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32):
    a = rand_ints(dt, N)
    b = rand_ints(dt, N)
    info = np.iinfo(dt)
    a[:4] = [info.max, info.min, info.max - 1, 0]
    b[:4] = [1, 1, info.max, info.min]
    add(f"int_ops_{np.dtype(dt).name}", SRC_INT, "int_ops", (1,), (a, b, zeros(16 * N, dt)), {"N": N})
for dt in (np.int8, np.int32, np.int64, np.uint32, np.uint8):
    info = np.iinfo(dt)
    a = rand_ints(dt, N)
    b = rand_ints(dt, N)
    b[b == 0] = 3
    if info.min < 0:
        a[:8] = [-7, 7, -7, 7, -8, -8, -1, -1]
        b[:8] = [2, 2, -2, -2, 3, -3, 3, -3]
        b[(a == info.min) & (b == -1)] = 2                     # INT_MIN // -1 overflows (UB): skip
        b[8:24] = rng.integers(-9, 10, 16)                      # small divisors too
        b[b == 0] = -5
    add(f"int_divmod_{np.dtype(dt).name}", SRC_INT, "int_divmod", (1,), (a, b, zeros(N, dt), zeros(N, dt)),
        {"N": N})
add("scalar_divmod_runtime_vs_constexpr", SRC_INT, "scalar_divmod", (1,), (zeros(7, np.int32), -7, 2),
    {"A": -7, "B": 2})
add("scalar_divmod_negative_divisor", SRC_INT, "scalar_divmod", (1,), (zeros(7, np.int64), 2**40 + 3, -5),
    {"A": 9, "B": -4})
add("int32_wrap_offsets", SRC_INT, "wrap_offsets", (1,), (zeros(4, np.int64), 2**30, 2**31 - 1))
add("int64_scalar_args", SRC_INT, "wrap_offsets", (1,), (zeros(4, np.int64), 2**33, 2**40))

# ---------------------------------------------------------------------------- promotion matrix
SRC_PROMOTE = HEADER + '''
@triton.jit
def code(r):
    return r.dtype.primitive_bitwidth * 4 + r.dtype.is_floating() * 2 + r.dtype.is_int_unsigned()


@triton.jit
def promote_pair(x_ptr, y_ptr, out_ptr, code_ptr, N: tl.constexpr, FLOORDIV: tl.constexpr, MOD: tl.constexpr,
                 TRUEDIV: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    r = x + y
    tl.store(out_ptr + 0 * N + offs, r)
    tl.store(code_ptr + 0, code(r))
    r = x - y
    tl.store(out_ptr + 1 * N + offs, r)
    tl.store(code_ptr + 1, code(r))
    r = x * y
    tl.store(out_ptr + 2 * N + offs, r)
    tl.store(code_ptr + 2, code(r))
    r = tl.where(x > y, x, y)
    tl.store(out_ptr + 3 * N + offs, r)
    tl.store(code_ptr + 3, code(r))
    r = tl.maximum(x, y)
    tl.store(out_ptr + 4 * N + offs, r)
    tl.store(code_ptr + 4, code(r))
    if FLOORDIV:
        r = x // y
        tl.store(out_ptr + 5 * N + offs, r)
        tl.store(code_ptr + 5, code(r))
    if MOD:
        r = x % y
        tl.store(out_ptr + 6 * N + offs, r)
        tl.store(code_ptr + 6, code(r))
    if TRUEDIV:
        r = x / y
        tl.store(out_ptr + 7 * N + offs, r)
        tl.store(code_ptr + 7, code(r))


@triton.jit
def promote_scalar(x_ptr, out_ptr, code_ptr, s, S: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    r = x + S
    tl.store(out_ptr + 0 * N + offs, r)
    tl.store(code_ptr + 0, code(r))
    r = S * x
    tl.store(out_ptr + 1 * N + offs, r)
    tl.store(code_ptr + 1, code(r))
    r = x - s
    tl.store(out_ptr + 2 * N + offs, r)
    tl.store(code_ptr + 2, code(r))
    r = s * x
    tl.store(out_ptr + 3 * N + offs, r)
    tl.store(code_ptr + 3, code(r))
    r = tl.where(x > 0, x, S)
    tl.store(out_ptr + 4 * N + offs, r)
    tl.store(code_ptr + 4, code(r))
    r = x / S
    tl.store(out_ptr + 5 * N + offs, r)
    tl.store(code_ptr + 5, code(r))
'''

PROMO_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32, np.float16, np.float32, np.float64]
PN = 32


def promo_values(dt, divisor=False):
    if np.dtype(dt).kind == "f":
        v = rng.uniform(1, 20, PN) * rng.choice([-1, 1], PN) if divisor else rng.uniform(-100, 100, PN)
        v = v.astype(dt)
        if not divisor:
            v[:3] = [0.5, -0.25, 100]
        return v
    if np.dtype(dt).kind == "u":
        return rng.integers(1, 20, PN).astype(dt) if divisor else rng.integers(0, 200, PN).astype(dt)
    v = rng.integers(1, 20, PN) * rng.choice([-1, 1], PN) if divisor else rng.integers(-100, 101, PN)
    v = v.astype(dt)
    if not divisor:
        v[:2] = [100, -100]
    return v


def _signedness(dt):
    return np.dtype(dt).kind


for xd in PROMO_DTYPES:
    for yd in PROMO_DTYPES:
        any_float = "f" in (_signedness(xd), _signedness(yd))
        same_sign = _signedness(xd) == _signedness(yd)
        floordiv = not any_float and same_sign
        mod = any_float or same_sign
        truediv = any_float or same_sign
        add(f"promote_{np.dtype(xd).name}_{np.dtype(yd).name}", SRC_PROMOTE, "promote_pair", (1,),
            (promo_values(xd), promo_values(yd, divisor=True), zeros(8 * PN, np.float64),
             np.full(8, -1, np.int32)),
            {"N": PN, "FLOORDIV": floordiv, "MOD": mod, "TRUEDIV": truediv},
            # `/` (row 7) may be approximate on the GPU (S1.33: 1.5 ulp); compare it with a tolerance
            check={2: by_rows(PN, {7: close(2.5e-7, 0)})})
for xd in PROMO_DTYPES:
    for S, s in [(3, 5), (2.5, -3), (1e300, 2**40)]:   # runtime float args: see the divergence table
        if np.dtype(xd).kind == "u" and s < 0:
            continue
        add(f"promote_scalar_{np.dtype(xd).name}_S{S}_s{s}", SRC_PROMOTE, "promote_scalar", (1,),
            (promo_values(xd), zeros(6 * PN, np.float64), np.full(6, -1, np.int32), s), {"S": S, "N": PN},
            check={1: by_rows(PN, {5: close(2.5e-7, 0)})})
# S1.44, S1.45: bf16 + int32 -> fp32 (2049), fp16 + int32 -> fp16 (2048); S1.11: int32(-1) + uint32(1) -> uint32
add("promote_bf16_plus_int32_tensor", SRC_PROMOTE, "promote_pair", (1,),
    (BF16.from_float(np.ones(PN)), np.full(PN, 2048, np.int32), zeros(8 * PN, np.float64), np.full(8, -1, np.int32)),
    {"N": PN, "FLOORDIV": False, "MOD": False, "TRUEDIV": False})

# ---------------------------------------------------------------------------- comparisons, where, min/max with NaN
SRC_CMP = HEADER + '''
@triton.jit
def compare(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + 0 * N + offs, (x < y).to(tl.int8))
    tl.store(out_ptr + 1 * N + offs, (x <= y).to(tl.int8))
    tl.store(out_ptr + 2 * N + offs, (x == y).to(tl.int8))
    tl.store(out_ptr + 3 * N + offs, (x != y).to(tl.int8))
    tl.store(out_ptr + 4 * N + offs, (x > y).to(tl.int8))
    tl.store(out_ptr + 5 * N + offs, (x >= y).to(tl.int8))
    tl.store(out_ptr + 6 * N + offs, ((x < y) & (y < 3)).to(tl.int8))
    tl.store(out_ptr + 7 * N + offs, ((x < y) | ~(x >= 0)).to(tl.int8))
    tl.store(out_ptr + 8 * N + offs, (x < 0).to(tl.int8))


@triton.jit
def where_ops(c_ptr, x_ptr, y_ptr, out_ptr, out2_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    c = tl.load(c_ptr + offs)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + offs, tl.where(c, x, y))            # int32 with fp32: fp32
    tl.store(out_ptr + N + offs, tl.where(c > 0, x, -2.5))
    tl.store(out2_ptr + offs, tl.where(c != 0, 7, y.to(tl.int16)))


@triton.jit
def minmax_nan(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + 0 * N + offs, tl.maximum(x, y))
    tl.store(out_ptr + 1 * N + offs, tl.minimum(x, y))
    tl.store(out_ptr + 2 * N + offs, tl.maximum(x, 1.0))
    tl.store(out_ptr + 3 * N + offs, tl.minimum(x, 1.0))
    tl.store(out_ptr + 4 * N + offs, tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL))
    tl.store(out_ptr + 5 * N + offs, tl.minimum(x, y, propagate_nan=tl.PropagateNan.ALL))
    tl.store(out_ptr + 6 * N + offs, tl.clamp(x, -1.0, 2.5))
    tl.store(out_ptr + 7 * N + offs, tl.clamp(x, -1.0, 2.5, propagate_nan=tl.PropagateNan.ALL))
'''


CN = 32
for dt in (np.int32, np.uint32, np.int8, np.float32, np.float16, np.float64):
    if np.dtype(dt).kind == "f":
        xs = rng.integers(-4, 5, CN).astype(dt)
        ys = rng.integers(-4, 5, CN).astype(dt)
        xs[:4] = [np.nan, 0, np.nan, -np.inf]
        ys[:4] = [1, np.nan, np.nan, np.inf]
    else:
        xs = rand_ints(dt, CN)
        ys = xs.copy()
        ys[: CN // 2] = rand_ints(dt, CN // 2)
    add(f"compare_{np.dtype(dt).name}", SRC_CMP, "compare", (1,), (xs, ys, zeros(9 * CN, np.int8)), {"N": CN})
add("compare_int32_with_uint32", SRC_CMP, "compare", (1,),
    (np.array([-1, 5, -7, 0] * 8, np.int32), np.array([1, 5, 3, 0] * 8, np.uint32), zeros(9 * CN, np.int8)), {"N": CN})
add("where_promotes", SRC_CMP, "where_ops", (1,),
    (rng.integers(-1, 2, CN).astype(np.int32), rand_ints(np.int32, CN, -2**26, 2**26),
     rng.standard_normal(CN).astype(np.float32), zeros(2 * CN, np.float32), zeros(CN, np.int16)), {"N": CN})
xm = np.array([np.nan, 0, 2, 3, np.nan, -1, 5, np.nan] * 4, np.float32)
ym = np.array([1, np.nan, 1, 4, np.nan, -2, np.inf, -np.inf] * 4, np.float32)
add("minmax_nan_fp32", SRC_CMP, "minmax_nan", (1,), (xm, ym, zeros(8 * CN, np.float32)), {"N": CN})
add("minmax_nan_fp64", SRC_CMP, "minmax_nan", (1,), (xm.astype(np.float64), ym.astype(np.float64),
                                                     zeros(8 * CN, np.float64)), {"N": CN})
add("minmax_nan_fp16", SRC_CMP, "minmax_nan", (1,), (xm.astype(np.float16), ym.astype(np.float16),
                                                     zeros(8 * CN, np.float16)), {"N": CN})

# ---------------------------------------------------------------------------- reductions and scans
SRC_REDUCE = HEADER + '''
@triton.jit
def reductions(x_ptr, val_ptr, sum_ptr, idx_ptr, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)
    c = tl.arange(0, C)
    x = tl.load(x_ptr + r[:, None] * C + c[None, :])
    tl.store(val_ptr + c, tl.max(x, axis=0))
    tl.store(val_ptr + C + r, tl.max(x, axis=1))
    tl.store(val_ptr + C + R + c, tl.min(x, axis=0))
    tl.store(val_ptr + 2 * C + R + r, tl.min(x, axis=1))
    tl.store(val_ptr + 2 * C + 2 * R + c[None, :], tl.max(x, axis=0, keep_dims=True))
    tl.store(val_ptr + 3 * C + 2 * R, tl.max(x))
    tl.store(val_ptr + 3 * C + 2 * R + 1, tl.min(x))
    m, i = tl.max(x, axis=1, return_indices=True)
    tl.store(val_ptr + 3 * C + 2 * R + 2 + r, m)
    tl.store(idx_ptr + r, i)
    tl.store(idx_ptr + R + c, tl.argmax(x, axis=0))
    tl.store(idx_ptr + R + C + r, tl.argmin(x, axis=1))
    tl.store(idx_ptr + 2 * R + C + r[:, None], tl.argmin(x, axis=1, keep_dims=True))
    tl.store(sum_ptr + c, tl.sum(x, axis=0))
    tl.store(sum_ptr + C + r, tl.sum(x, axis=1))
    tl.store(sum_ptr + C + R + r[:, None], tl.sum(x, axis=1, keep_dims=True))
    tl.store(sum_ptr + C + 2 * R, tl.sum(x))
    tl.store(sum_ptr + C + 2 * R + 1, tl.sum(tl.sum(x, axis=0), axis=0))


@triton.jit
def argmax_1d(x_ptr, out_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.store(out_ptr + 0, tl.argmax(x, axis=0))
    tl.store(out_ptr + 1, tl.argmin(x, axis=0))
    tl.store(out_ptr + 2, tl.max(x, axis=0).to(tl.int32))
    tl.store(out_ptr + 3, tl.min(x, axis=0).to(tl.int32))


@triton.jit
def scans(x_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)
    c = tl.arange(0, C)
    offs = r[:, None] * C + c[None, :]
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.cumsum(x, axis=0))
    tl.store(out_ptr + R * C + offs, tl.cumsum(x, axis=1))
    tl.store(out_ptr + 2 * R * C + offs, tl.cumsum(x, axis=1, reverse=True))
    tl.store(out_ptr + 3 * R * C + c, tl.cumsum(tl.sum(x, axis=0), axis=0))
'''

RR, RC = 8, 16
xr_int = rand_ints(np.int32, (RR, RC), -1000, 1000)
xr_int[2, :] = 5                                        # ties: the first index wins (S1.54)
add("reductions_int32", SRC_REDUCE, "reductions", (1,),
    (xr_int, zeros(3 * RC + 2 * RR + 2 + RR, np.float64), zeros(RC + 2 * RR + 2, np.float64),
     zeros(3 * RR + RC, np.int32)), {"R": RR, "C": RC})
xr_i8 = np.full((RR, RC), 100, np.int8)
xr_i8[3, 4] = -128
add("reductions_int8_accumulate_int32", SRC_REDUCE, "reductions", (1,),           # row 46
    (xr_i8, zeros(3 * RC + 2 * RR + 2 + RR, np.float64), zeros(RC + 2 * RR + 2, np.float64),
     zeros(3 * RR + RC, np.int32)), {"R": RR, "C": RC})
xr_f = rng.standard_normal((RR, RC)).astype(np.float32)
xr_f[1, 3] = np.nan                                    # max/min/argmax ignore NaN (S1.15, S1.54); sums propagate it
xr_f[4, :4] = 2.0
add("reductions_fp32", SRC_REDUCE, "reductions", (1,),
    (xr_f, zeros(3 * RC + 2 * RR + 2 + RR, np.float64), zeros(RC + 2 * RR + 2, np.float64),
     zeros(3 * RR + RC, np.int32)), {"R": RR, "C": RC}, check={2: close(1e-6, 1e-6)})
xr_u = rand_ints(np.uint32, (RR, RC))
add("reductions_uint32", SRC_REDUCE, "reductions", (1,),
    (xr_u, zeros(3 * RC + 2 * RR + 2 + RR, np.float64), zeros(RC + 2 * RR + 2, np.float64),
     zeros(3 * RR + RC, np.int32)), {"R": RR, "C": RC})
add("argmax_ties_and_nan", SRC_REDUCE, "argmax_1d", (1,),
    (np.array([1, np.nan, 5, 2, 5, 0, 0, 3], np.float32), zeros(4, np.int32)), {"N": 8})
add("argmax_ties", SRC_REDUCE, "argmax_1d", (1,), (np.array([1, 5, 5, 2, 5, 0, 0, 3], np.int32), zeros(4, np.int32)),
    {"N": 8})
add("cumsum_int32", SRC_REDUCE, "scans", (1,), (rand_ints(np.int32, (4, 8)), zeros(4 * 4 * 8, np.int32)),
    {"R": 4, "C": 8})
add("cumsum_int8_to_int32", SRC_REDUCE, "scans", (1,), (np.full((4, 8), 100, np.int8), zeros(4 * 4 * 8, np.int32)),
    {"R": 4, "C": 8})
add("cumsum_fp32", SRC_REDUCE, "scans", (1,),
    (rng.standard_normal((4, 8)).astype(np.float32), zeros(4 * 4 * 8, np.float32)), {"R": 4, "C": 8},
    check={1: close(1e-6, 1e-6)})

# ---------------------------------------------------------------------------- tl.dot
SRC_DOT = HEADER + '''
@triton.jit
def dot_tile(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, PREC: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b, input_precision=PREC))


@triton.jit
def dot_acc(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    acc = tl.full((M, N), 0.5, tl.float32)
    acc = tl.dot(a, b, acc)
    acc = tl.dot(a, b, acc=acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def dot_out_fp16(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b, out_dtype=tl.float16))


@triton.jit
def dot_int8(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b))
'''

a32 = rng.standard_normal((32, 64)).astype(np.float32)
b32 = rng.standard_normal((64, 16)).astype(np.float32)
add("dot_fp32_ieee", SRC_DOT, "dot_tile", (1,), (a32, b32, zeros((32, 16), np.float32)),
    {"M": 32, "N": 16, "K": 64, "PREC": "ieee"}, check={2: close(1e-5, 2e-5)})
a16 = rng.integers(-8, 9, (16, 32)).astype(np.float16) / np.float16(4)   # exact products and sums
b16 = rng.integers(-8, 9, (32, 16)).astype(np.float16) / np.float16(2)
add("dot_fp16_exact", SRC_DOT, "dot_tile", (1,), (a16, b16, zeros((16, 16), np.float32)),
    {"M": 16, "N": 16, "K": 32, "PREC": None})
add("dot_fp16_small_mn", SRC_DOT, "dot_tile", (1,),                                      # S1.30: M = N = 8
    (a16[:8], np.ascontiguousarray(b16[:, :8]), zeros((8, 8), np.float32)),
    {"M": 8, "N": 8, "K": 32, "PREC": None})
add("dot_fp16_acc", SRC_DOT, "dot_acc", (1,), (a16, b16, zeros((16, 16), np.float32)), {"M": 16, "N": 16, "K": 32})
a55 = np.zeros((16, 16), np.float16)
a55[0] = [2048] + [1] * 15                              # S1.55: exact 2063 rounds once to 2064
a55[1:] = rng.integers(-3, 4, (15, 16))
add("dot_fp16_out_fp16", SRC_DOT, "dot_out_fp16", (1,), (a55, np.ones((16, 16), np.float16),
                                                         zeros((16, 16), np.float16)), {"M": 16, "N": 16, "K": 16})
add("dot_int8", SRC_DOT, "dot_int8", (1,), (rand_ints(np.int8, (16, 32)), rand_ints(np.int8, (32, 16)),
                                            zeros((16, 16), np.int32)), {"M": 16, "N": 16, "K": 32})

# ---------------------------------------------------------------------------- atomics, grids, loops
SRC_PROGRAMS = HEADER + '''
@triton.jit
def atomics(c_ptr, hist_ptr, fsum_ptr):
    pid = tl.program_id(0)
    tl.atomic_add(c_ptr, 1)
    tl.atomic_max(c_ptr + 1, pid)
    tl.atomic_min(c_ptr + 2, -pid)
    tl.atomic_or(c_ptr + 3, 1 << (pid % 31))
    tl.atomic_xor(c_ptr + 4, pid)
    tl.atomic_and(c_ptr + 5, ~(1 << (pid % 17)))
    tl.atomic_cas(c_ptr + 6, 0, 7)
    tl.atomic_add(c_ptr + 7, pid, mask=pid % 2 == 0)
    offs = tl.arange(0, 16)
    tl.atomic_add(hist_ptr + (offs + pid) % 4, 1)                   # lanes of one program share addresses
    tl.atomic_max(hist_ptr + 4 + offs % 2, pid * 16 + offs)
    tl.atomic_add(fsum_ptr + offs % 2, (pid * 16 + offs).to(tl.float32))


@triton.jit
def grid3d(out_ptr):
    x = tl.program_id(0)
    y = tl.program_id(1)
    z = tl.program_id(axis=2)
    nx = tl.num_programs(0)
    ny = tl.num_programs(1)
    nz = tl.num_programs(2)
    lin = (z * ny + y) * nx + x
    tl.store(out_ptr + lin * 6 + 0, x)
    tl.store(out_ptr + lin * 6 + 1, y)
    tl.store(out_ptr + lin * 6 + 2, z)
    tl.store(out_ptr + lin * 6 + 3, nx)
    tl.store(out_ptr + lin * 6 + 4, ny)
    tl.store(out_ptr + lin * 6 + 5, nz * 1000 + x * 100 + y * 10 + z)


@triton.jit
def runtime_loops(x_ptr, out_ptr, n, start, step, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.int32)
    for i in range(0, n):
        acc += tl.load(x_ptr + i * BLOCK + offs)
    tl.store(out_ptr + pid * 4 * BLOCK + offs, acc)
    acc2 = tl.zeros((BLOCK,), dtype=tl.int32)
    for i in range(start, pid + n, step):                            # bound differs per program
        acc2 = acc2 * 3 + i + offs
    tl.store(out_ptr + pid * 4 * BLOCK + BLOCK + offs, acc2)
    k = 0
    v = pid + 1
    while v > 1:
        if v % 2 == 0:
            v = v // 2
        else:
            v = 3 * v + 1
        k += 1
    tl.store(out_ptr + pid * 4 * BLOCK + 2 * BLOCK + offs, offs * 0 + k)
    s = 0
    for j in tl.static_range(3):
        s += j * pid
    for j in tl.range(0, pid, 2):
        s += 1
    tl.store(out_ptr + pid * 4 * BLOCK + 3 * BLOCK + offs, offs + s)
'''

add("atomics_100_programs", SRC_PROGRAMS, "atomics", (100,),
    (np.array([0, 0, 0, 0, 0, -1, 0, 0], np.int32), zeros(6, np.int32), zeros(2, np.float32)))
add("grid_3d_program_ids", SRC_PROGRAMS, "grid3d", (2, 3, 4), (zeros(24 * 6, np.int32),))
add("runtime_bounded_loops", SRC_PROGRAMS, "runtime_loops", (7,),
    (rng.integers(-50, 50, 5 * 8).astype(np.int32), zeros(7 * 4 * 8, np.int32), 5, 1, 2), {"BLOCK": 8})

# ---------------------------------------------------------------------------- casts and math
SRC_CAST = HEADER + '''
@triton.jit
def cast_store(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs).to(out_ptr.dtype.element_ty))


@triton.jit
def implicit_store(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


@triton.jit
def cast_rtz_bf16(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs).to(tl.bfloat16, fp_downcast_rounding="rtz"))


@triton.jit
def bitcasts(x_ptr, i_ptr, f_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    i = x.to(tl.int32, bitcast=True)
    tl.store(i_ptr + offs, i ^ 0x7FFFFF)
    tl.store(f_ptr + offs, (i ^ 0x7FFFFF).to(tl.float32, bitcast=True))
    tl.store(f_ptr + N + offs, tl.cast(i, tl.float32, bitcast=True))


@triton.jit
def math_fns(x_ptr, y_ptr, ulp_ptr, exact_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(ulp_ptr + 0 * N + offs, tl.exp(x))
    tl.store(ulp_ptr + 1 * N + offs, tl.log(y))
    tl.store(ulp_ptr + 2 * N + offs, tl.sqrt(y))
    tl.store(ulp_ptr + 3 * N + offs, tl.sin(x))
    tl.store(ulp_ptr + 4 * N + offs, x / y)
    tl.store(exact_ptr + 0 * N + offs, tl.abs(x))
    tl.store(exact_ptr + 1 * N + offs, tl.fma(x, y, x))
    tl.store(exact_ptr + 2 * N + offs, tl.floor(x))
    tl.store(exact_ptr + 3 * N + offs, tl.ceil(x))
    tl.store(exact_ptr + 4 * N + offs, x % 2.0)
    tl.store(exact_ptr + 5 * N + offs, -x)
    tl.store(exact_ptr + 6 * N + offs, tl.sqrt_rn(y))


@triton.jit
def dot_sum(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr, tl.sum(tl.load(x_ptr + offs) * tl.load(y_ptr + offs)))
'''

# S2's fp32 -> fp16 column, plus overflow, subnormals, ties, NaN, inf
f16_in = np.array([0x3FFFFFFF, 0x3F808000, 0x3F818000, 0x3F80C000, 0x3F807FFF, 0xF8080001, 0x7F7FFFFF, 0x00000001],
                  np.uint32).view(np.float32)
f16_in = np.concatenate([f16_in, np.array([65504, 65520, 65519.99, -70000, 6e-8, 3e-8, 2.9e-8, 1e-5, np.nan,
                                           np.inf, -np.inf, -0.0], np.float32),
                         (rng.standard_normal(44) * 10.0 ** rng.integers(-6, 5, 44)).astype(np.float32)])
add("cast_fp32_to_fp16", SRC_CAST, "cast_store", (1,), (f16_in, zeros(64, np.float16)), {"N": 64})
add("store_fp32_into_fp16_pointer", SRC_CAST, "implicit_store", (1,), (f16_in, zeros(64, np.float16)), {"N": 64})
add("cast_fp32_to_bf16_rtz", SRC_CAST, "cast_rtz_bf16", (1,), (f16_in, BF16(zeros(64, np.uint16))), {"N": 64})  # row 20
with np.errstate(over="ignore"):
    f16_values = f16_in.astype(np.float16)
add("cast_fp16_to_fp32", SRC_CAST, "cast_store", (1,), (f16_values, zeros(64, np.float32)), {"N": 64})
add("cast_bf16_to_fp32", SRC_CAST, "cast_store", (1,),
    (BF16(rand_ints(np.uint16, 64)), zeros(64, np.float32)), {"N": 64})
add("cast_fp64_to_fp32", SRC_CAST, "cast_store", (1,),
    ((rng.standard_normal(64) * 10.0 ** rng.integers(-40, 40, 64)).astype(np.float64), zeros(64, np.float32)),
    {"N": 64})
in_range = np.clip(rng.standard_normal(64) * 30, -127.9, 127.9).astype(np.float32)
in_range[:8] = [-2.7, 2.7, -0.5, 0.5, -0.0, 126.9, -127.9, 99.5]
for dt in (np.int32, np.int8, np.int16, np.int64):
    add(f"cast_fp32_to_{np.dtype(dt).name}_in_range", SRC_CAST, "cast_store", (1,), (in_range, zeros(64, dt)),
        {"N": 64})
add("cast_fp32_to_uint8_in_range", SRC_CAST, "cast_store", (1,), (np.abs(in_range), zeros(64, np.uint8)), {"N": 64})
add("cast_fp64_to_int64_in_range", SRC_CAST, "cast_store", (1,),
    (rng.uniform(-2**62, 2**62, 64), zeros(64, np.int64)), {"N": 64})
add("cast_fp16_to_int16_in_range", SRC_CAST, "cast_store", (1,),
    (in_range.astype(np.float16), zeros(64, np.int16)), {"N": 64})
ints = rand_ints(np.int32, 64)
ints[:4] = [300, -1, 255, 256]                          # row 52
for dt in (np.uint8, np.int8, np.int16, np.uint32, np.int64, np.float32, np.float16, np.float64, np.bool_):
    add(f"cast_int32_to_{np.dtype(dt).name}", SRC_CAST, "cast_store", (1,),
        (ints if dt != np.float16 else ints % 60000, zeros(64, dt)), {"N": 64})
add("cast_int64_to_int32_wrap", SRC_CAST, "cast_store", (1,), (rand_ints(np.int64, 64), zeros(64, np.int32)), {"N": 64})
add("cast_int8_to_uint32", SRC_CAST, "cast_store", (1,), (rand_ints(np.int8, 64), zeros(64, np.uint32)), {"N": 64})
add("cast_uint32_to_fp32", SRC_CAST, "cast_store", (1,), (rand_ints(np.uint32, 64), zeros(64, np.float32)), {"N": 64})
add("cast_bool_to_int32", SRC_CAST, "cast_store", (1,), (rng.integers(0, 2, 64).astype(np.bool_), zeros(64, np.int32)),
    {"N": 64})
add("bitcast_fp32_int32", SRC_CAST, "bitcasts", (1,),
    (rng.standard_normal(16).astype(np.float32), zeros(16, np.int32), zeros(32, np.float32)), {"N": 16})
xs = rng.uniform(-10, 10, 1024).astype(np.float32)
ys = rng.uniform(0.01, 100, 1024).astype(np.float32)
MATH_ULPS = [8, 2, 1, 2, 2]                             # exp, log, sqrt, sin, / (S1.33 measured 6.6/.76/.83/1.25/1.51)


def math_check(mt, it, label):
    for k, bound in enumerate(MATH_ULPS):
        ulps(bound)(mt[k * 1024:(k + 1) * 1024], it[k * 1024:(k + 1) * 1024], f"{label}[fn {k}]")


add("math_ulp_and_exact", SRC_CAST, "math_fns", (1,),
    (xs, ys, zeros(5 * 1024, np.float32), zeros(7 * 1024, np.float32)),
    {"N": 1024}, check={2: math_check})
sx, sy = rng.standard_normal((2, 1024)).astype(np.float32)
add("fp32_sum_of_products", SRC_CAST, "dot_sum", (1,), (sx, sy, zeros(1, np.float32)), {"N": 1024},
    check={2: close(0, 1e-6 * float(np.sum(np.abs(sx.astype(np.float64) * sy))))})   # row 34

# ---------------------------------------------------------------------------- the lesson's kernels
SRC_LESSON = HEADER + '''
@triton.jit
def softmax_fwd_kernel(x_ptr, y_ptr, n_cols, x_stride, y_stride, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    y = num / tl.sum(num, axis=0)
    tl.store(y_ptr + row * y_stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    first_pid_m = (pid // num_pid_in_group) * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def flash_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, l_ptr, T, scale, stride_bh, stride_t,
                     D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, D)
    base = bh * stride_bh
    q = tl.load(q_ptr + base + offs_m[:, None] * stride_t + offs_d[None, :], mask=offs_m[:, None] < T, other=0.0)
    m_i = tl.full((BLOCK_M,), -float("inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)
    if CAUSAL:
        hi = tl.minimum((pid_m + 1) * BLOCK_M, T)
    else:
        hi = T
    for start_n in range(0, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        kv_mask = offs_n[:, None] < T
        k = tl.load(k_ptr + base + offs_n[:, None] * stride_t + offs_d[None, :], mask=kv_mask, other=0.0)
        v = tl.load(v_ptr + base + offs_n[:, None] * stride_t + offs_d[None, :], mask=kv_mask, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        valid = offs_n[None, :] < T
        if CAUSAL:
            valid = valid & (offs_n[None, :] <= offs_m[:, None])
        s = tl.where(valid, s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision="ieee")
        m_i = m_new
    o = acc / l_i[:, None]
    tl.store(o_ptr + base + offs_m[:, None] * stride_t + offs_d[None, :], o.to(o_ptr.dtype.element_ty),
             mask=offs_m[:, None] < T)
    tl.store(l_ptr + bh * T + offs_m, m_i + tl.log(l_i), mask=offs_m < T)
'''

sm_base = rng.standard_normal((7, 128)).astype(np.float32) * 4
sm_x = sm_base[:, :100]                                 # rows strided by 128
add("lesson_softmax_rows", SRC_LESSON, "softmax_fwd_kernel", (7,), (sm_x, zeros((7, 100), np.float32), 100, 128, 100),
    {"BLOCK_SIZE": 128}, check={1: ulps(16)})
add("lesson_softmax_fp16_out", SRC_LESSON, "softmax_fwd_kernel", (7,),
    (sm_x.astype(np.float16), zeros((7, 100), np.float16), 100, 100, 100), {"BLOCK_SIZE": 128},
    check={1: ulps(1, np.float16)})
ma = rng.standard_normal((37, 45)).astype(np.float32)
mb = rng.standard_normal((45, 29)).astype(np.float32)
add("lesson_matmul_37x45x29", SRC_LESSON, "matmul_kernel", (6,),
    (ma, mb, zeros((37, 29), np.float32), 37, 29, 45, 45, 1, 29, 1, 29, 1),
    {"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16, "GROUP_M": 2}, check={2: close(1e-5, 3e-5)})
mbt = np.ascontiguousarray(mb.T).T                      # B given column-major
add("lesson_matmul_noncontiguous_b", SRC_LESSON, "matmul_kernel", (6,),
    (ma, mbt, zeros((37, 29), np.float32), 37, 29, 45, 45, 1, mbt.strides[0] // 4, mbt.strides[1] // 4, 29, 1),
    {"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16, "GROUP_M": 8}, check={2: close(1e-5, 3e-5)})
BH, T, D = 2, 40, 16
fq, fk, fv = (rng.standard_normal((BH, T, D)).astype(np.float32) for _ in range(3))
for causal in (True, False):
    add(f"lesson_flash_attention_causal_{causal}", SRC_LESSON, "flash_fwd_kernel", (3, BH),
        (fq, fk, fv, zeros((BH, T, D), np.float32), zeros((BH, T), np.float32), T, 1 / math.sqrt(D), T * D, D),
        {"D": D, "BLOCK_M": 16, "BLOCK_N": 16, "CAUSAL": causal},
        check={3: close(2e-5, 2e-5), 4: close(2e-5, 2e-5)})

# ============================================================================ errors both sides raise
SRC_ERRORS = HEADER + '''
@triton.jit
def bad_program_id(out_ptr):
    tl.store(out_ptr, tl.program_id(3))


@triton.jit
def bad_arange(out_ptr):
    tl.store(out_ptr + tl.arange(0, 10), 1)


@triton.jit
def float_floordiv(x_ptr):
    x = tl.load(x_ptr)
    tl.store(x_ptr, x // 2.0)


@triton.jit
def other_without_mask(x_ptr):
    tl.store(x_ptr, tl.load(x_ptr, other=1.0))


@triton.jit
def mixed_signedness(a_ptr, b_ptr):
    tl.store(a_ptr, tl.load(a_ptr) // tl.load(b_ptr))


@triton.jit
def negative_scalar_unsigned(a_ptr):
    tl.store(a_ptr, tl.load(a_ptr) + -1)


@triton.jit
def scalar_out_of_range(a_ptr):
    tl.store(a_ptr, tl.load(a_ptr) + 300)


@triton.jit
def broadcast_mismatch(x_ptr):
    a = tl.arange(0, 4)
    b = tl.arange(0, 8)
    tl.store(x_ptr + a, a + b)


@triton.jit
def zeros_not_power_of_two(x_ptr):
    tl.store(x_ptr + tl.arange(0, 4), tl.sum(tl.zeros((3, 4), tl.float32), axis=0))


@triton.jit
def dot_inner_mismatch(x_ptr):
    a = tl.zeros((16, 32), tl.float16)
    b = tl.zeros((16, 16), tl.float16)
    tl.store(x_ptr, tl.sum(tl.sum(tl.dot(a, b), axis=0), axis=0))


@triton.jit
def bitcast_width(x_ptr):
    tl.store(x_ptr, tl.load(x_ptr).to(tl.int16, bitcast=True))
'''

ERROR_CASES = {
    "program_id_axis_3": (Spec(SRC_ERRORS, "bad_program_id", (1,), (zeros(1, np.int32),)),
                          r"program_id axis must be 0, 1, or 2 but got 3"),
    "arange_not_power_of_2": (Spec(SRC_ERRORS, "bad_arange", (1,), (zeros(16, np.int32),)),
                              r"arange's range must be a power of 2"),
    "float_floordiv": (Spec(SRC_ERRORS, "float_floordiv", (1,), (zeros(1, np.float32),)), r"unexpected type fp32"),
    "other_without_mask": (Spec(SRC_ERRORS, "other_without_mask", (1,), (zeros(1, np.float32),)),
                           r"`other` cannot be provided without `mask`"),
    "mixed_signedness_floordiv": (Spec(SRC_ERRORS, "mixed_signedness", (1,),
                                       (zeros(1, np.int32), np.ones(1, np.uint32))),
                                  r"Cannot use .* because they have different signedness"),
    "negative_scalar_with_unsigned": (Spec(SRC_ERRORS, "negative_scalar_unsigned", (1,), (zeros(1, np.uint8),)),
                                      r"Cannot perform a binary operation between an unsigned tensor and a negative "
                                      r"scalar"),
    "scalar_out_of_range": (Spec(SRC_ERRORS, "scalar_out_of_range", (1,), (zeros(1, np.int8),)),
                            r"Scalar 300 is out of range for type int8"),
    "broadcast_mismatch": (Spec(SRC_ERRORS, "broadcast_mismatch", (1,), (zeros(8, np.int32),)),
                           r"Cannot make_shape_compatible: incompatible dimensions at index 0: 4 and 8"),
    "zeros_not_power_of_2": (Spec(SRC_ERRORS, "zeros_not_power_of_two", (1,), (zeros(4, np.float32),)),
                             r"Shape element 0 must be a power of 2"),
    "dot_inner_mismatch": (Spec(SRC_ERRORS, "dot_inner_mismatch", (1,), (zeros(1, np.float32),)),
                           r"input and other must have equal reduction dimensions"),
    "bitcast_width": (Spec(SRC_ERRORS, "bitcast_width", (1,), (zeros(1, np.float32),)),
                      r"Cannot bitcast data-type of size 32\s*to data-type of size 16"),
}

# ============================================================================ documented divergences
SRC_DIVERGE = HEADER + '''
@triton.jit
def bf16_add_lt(a_ptr, b_ptr, sum_ptr, lt_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    tl.store(sum_ptr + offs, a + b)
    tl.store(lt_ptr + offs, (a < b).to(tl.int8))


@triton.jit
def bf16_mul_sum(x_ptr, y_ptr, prod_ptr, twice_ptr, sum_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(prod_ptr + offs, x * y)
    tl.store(twice_ptr + offs, x * 2.0)
    tl.store(sum_ptr, tl.sum(x).to(tl.float32))


@triton.jit
def to_bf16(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs).to(tl.bfloat16))


@triton.jit
def store_bf16(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


@triton.jit
def dot_default(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b))


@triton.jit
def div_by_zero(x_ptr, y_ptr, q_ptr, r_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(q_ptr + offs, x // y)
    tl.store(r_ptr + offs, x % y)


@triton.jit
def to_int32(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs).to(tl.int32))


@triton.jit
def loop_scoped(out_ptr, n):
    for i in range(0, n):
        v = i * 2
    tl.store(out_ptr, v)


@triton.jit
def if_rebinds_type(out_ptr, n):
    v = n
    if n > 0:
        v = 1.5
    tl.store(out_ptr, v)


@triton.jit
def builtin_max_blocks(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, max(tl.load(x_ptr + offs), tl.load(y_ptr + offs)))


@triton.jit
def times_float_arg(x_ptr, out_ptr, code_ptr, s, N: tl.constexpr):
    offs = tl.arange(0, N)
    r = tl.load(x_ptr + offs) * s
    tl.store(out_ptr + offs, r)
    tl.store(code_ptr, r.dtype.primitive_bitwidth)


@triton.jit(debug=True)
def assert_positive(x_ptr):
    x = tl.load(x_ptr)
    tl.device_assert(x > 0, "x must be positive")
    tl.store(x_ptr, x + 1)
'''


def u16(*v):
    return np.array(v, np.uint16)


def f32bits(*v):
    return np.array(v, np.uint32).view(np.float32)


def rtne_bf16(f):
    b = np.asarray(f, np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


@dataclass
class Divergence:
    spec: Spec
    reason: str
    interpreter: Callable   # asserts the documented (wrong) interpreter output: f(Result)
    gpu: Callable           # asserts minitriton gives the GPU's value: f(Result of minitriton or exception)


def _expect_eq(got, want, what):
    got, want = np.asarray(_bits(got)), np.asarray(want)
    nan_ok = got.dtype.kind == "f" and want.dtype.kind == "f"
    assert np.array_equal(got, want, equal_nan=nan_ok), f"{what}: got {got!r}, documented {want!r}"


BF16_TABLE_IN = f32bits(0x3FFFFFFF, 0x3F808000, 0x3F818000, 0x3F80C000, 0x3F807FFF, 0xF8080001, 0x7F7FFFFF, 0x00000001)
BF16_TABLE_RTNE = u16(0x4000, 0x3F80, 0x3F82, 0x3F81, 0x3F80, 0xF808, 0x7F80, 0x0000)   # S2, GPU default
BF16_TABLE_INTERP = u16(0x3FFF, 0x3F80, 0x3F81, 0x3F80, 0x3F80, 0xF808, 0x7F7F, 0x0000)  # S2, interpreter default
TF32_IN = np.array([1 + 2**-11, 1 + 2**-10 + 2**-11, 1 + 2**-11 + 2**-12, -(1 + 2**-11), 1 + 2**-13], np.float32)
TF32_GPU = np.array([1.0, 1.0009765625, 1.0, -1.0, 1.0], np.float32)                      # row 43
bf_a = np.array([0.5, 1, 1.5, 2, -0.25, 3, -1, 0.75], np.float32)


def _raises(kind, pattern):
    def check(m):
        assert isinstance(m, kind), f"expected {kind.__name__}, got {m!r}"
        assert re.search(pattern, str(m)), f"{pattern!r} not in {str(m)!r}"
    return check


EXPECTED_INTERPRETER_DIVERGENCES: dict[str, Divergence] = {
    "bf16_add_and_compare": Divergence(
        Spec(SRC_DIVERGE, "bf16_add_lt", (1,), (BF16.from_float([2.5, -5, 1, 3]), BF16.from_float([2, -2, 1, -3]),
                                               BF16(zeros(4, np.uint16)), zeros(4, np.int8)), {"N": 4}),
        "S1.22: the interpreter adds/compares bf16 raw uint16 bit patterns; the GPU computes bf16 "
        "values",
        lambda r: (_expect_eq(r.args[2], u16(0x8020, 0x80A0, 0x7F00, 0x0080), "interpreter a+b bits"),
                   _expect_eq(r.args[3], np.array([0, 0, 0, 1], np.int8), "interpreter a<b")),
        lambda m: (_expect_eq(m.args[2], u16(0x4090, 0xC0E0, 0x4000, 0x0000), "GPU a+b bits"),
                   _expect_eq(m.args[3], np.array([0, 1, 0, 0], np.int8), "GPU a<b"))),
    "bf16_mul_and_sum": Divergence(
        Spec(SRC_DIVERGE, "bf16_mul_sum", (1,), (BF16.from_float([1, 2.5, -5, 0.5]), BF16.from_float([2, 2, -2, 4]),
                                                BF16(zeros(4, np.uint16)), BF16(zeros(4, np.uint16)),
                                                zeros(1, np.float32)), {"N": 4}),
        "S1.23: bf16 x*y, x*2.0 give 0 and tl.sum gives 2.55e38 in the interpreter; real values -1",
        lambda r: (_expect_eq(r.args[2].to_float(), np.zeros(4, np.float32), "interpreter x*y"),     # 0 or -0
                   _expect_eq(r.args[3].to_float(), np.zeros(4, np.float32), "interpreter x*2.0"),
                   _expect_eq(np.round(r.args[4] / 1e38, 2), np.array([2.55], np.float32), "interpreter sum / 1e38")),
        lambda m: (_expect_eq(m.args[2], BF16.from_float([2, 5, 10, 2]).array, "GPU x*y"),
                   _expect_eq(m.args[3], BF16.from_float([2, 5, -10, 1]).array, "GPU x*2.0"),
                   _expect_eq(m.args[4], np.array([-1], np.float32), "GPU sum"))),
    "fp32_to_bf16_cast_rounding": Divergence(
        Spec(SRC_DIVERGE, "to_bf16", (1,), (BF16_TABLE_IN, BF16(zeros(8, np.uint16))), {"N": 8}),
        "S1.17 and S2: .to(tl.bfloat16) truncates in the interpreter; the GPU rounds to "
        "nearest even",
        lambda r: _expect_eq(r.args[1], BF16_TABLE_INTERP, "interpreter bits"),
        lambda m: _expect_eq(m.args[1], BF16_TABLE_RTNE, "GPU bits")),
    "fp32_to_bf16_store_rounding": Divergence(
        Spec(SRC_DIVERGE, "store_bf16", (1,), (BF16_TABLE_IN, BF16(zeros(8, np.uint16))), {"N": 8}),
        "S1.18: tl.store into a bf16 pointer truncates in the interpreter; it casts like .to (RTNE)",
        lambda r: _expect_eq(r.args[1], BF16_TABLE_INTERP, "interpreter bits"),
        lambda m: _expect_eq(m.args[1], BF16_TABLE_RTNE, "GPU bits")),
    "fp32_subnormal_to_bf16": Divergence(
        Spec(SRC_DIVERGE, "to_bf16", (1,), (np.full(2, 1e-39, np.float32), BF16(zeros(2, np.uint16))), {"N": 2}),
        "S1.19: 1e-39 -> bf16 gives 4.22e-39 in the interpreter; RTNE gives 1.01e-39",
        lambda r: _expect_eq(np.round(r.args[1].to_float() / 1e-39, 2), np.full(2, 4.22, np.float32),
                             "interpreter value / 1e-39"),
        lambda m: (_expect_eq(m.args[1], rtne_bf16(np.full(2, 1e-39, np.float32)), "GPU bits"),
                   _expect_eq(np.round(m.args[1].to_float() / 1e-39, 2), np.full(2, 1.01, np.float32),
                              "GPU value / 1e-39"))),
    "dot_fp32_default_is_tf32": Divergence(
        Spec(SRC_DIVERGE, "dot_default", (1,), (np.diag(np.concatenate([TF32_IN, np.ones(11, np.float32)])),
                                                np.eye(16, dtype=np.float32), zeros((16, 16), np.float32)),
             {"M": 16, "N": 16, "K": 16}),
        "S1.24, S1.26 and S1.43: the default fp32 tl.dot is TF32 (inputs truncated to 10 mantissa "
        "bits) on the GPU; the interpreter ignores input_precision and multiplies in full fp32",
        lambda r: _expect_eq(np.diag(r.args[2])[:5], TF32_IN, "interpreter diagonal"),
        lambda m: _expect_eq(np.diag(m.args[2])[:5], TF32_GPU, "GPU diagonal")),
    "int32_division_by_zero": Divergence(
        Spec(SRC_DIVERGE, "div_by_zero", (1,), (np.array([7, -7, 0, 1], np.int32), zeros(4, np.int32),
                                                np.full(4, 9, np.int32), np.full(4, 9, np.int32)), {"N": 4}),
        "S1.5: int32 x // 0 and x % 0 give q=-1, r=x on the GPU; 0, 0 and divide-by-zero warnings "
        "in the interpreter",
        lambda r: (_expect_eq(r.args[2], np.zeros(4, np.int32), "interpreter q"),
                   _expect_eq(r.args[3], np.zeros(4, np.int32), "interpreter r"),
                   _expect_eq(any("divide by zero" in w for w in r.warnings), True, "interpreter warns")),
        lambda m: (_expect_eq(m.args[2], np.full(4, -1, np.int32), "GPU q"),
                   _expect_eq(m.args[3], np.array([7, -7, 0, 1], np.int32), "GPU r"))),
    "fp32_to_int32_out_of_range": Divergence(
        Spec(SRC_DIVERGE, "to_int32", (1,),
             (np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, -2.7, 2.7, -0.5], np.float32), zeros(8, np.int32)),
             {"N": 8}),
        "S1.51: the GPU saturates (NaN -> 0); the interpreter gives INT_MIN for NaN/inf/overflow",
        lambda r: _expect_eq(r.args[1], np.array([-2**31] * 5 + [-2, 2, 0], np.int32), "interpreter"),
        lambda m: _expect_eq(m.args[1], np.array([0, 2**31 - 1, -2**31, 2**31 - 1, -2**31, -2, 2, 0], np.int32),
                             "GPU")),
    "bf16_dot": Divergence(
        Spec(SRC_DIVERGE, "dot_default", (1,), (BF16.from_float(np.resize(bf_a, (16, 16))),
                                                BF16.from_float(np.resize(bf_a[::-1], (16, 16))),
                                                zeros((16, 16), np.float32)), {"M": 16, "N": 16, "K": 16}),
        "S1.27 (triton#11584): the interpreter multiplies bf16 bit patterns (error ~1e10); the GPU is "
        "exact for exactly representable inputs",
        lambda r: _expect_eq(bool(np.max(np.abs(r.args[2] - np.resize(bf_a, (16, 16)).astype(np.float64)
                                                @ np.resize(bf_a[::-1], (16, 16)))) > 1e6), True,
                             "interpreter error > 1e6"),
        lambda m: _expect_eq(m.args[2], (np.resize(bf_a, (16, 16)).astype(np.float64)
                                         @ np.resize(bf_a[::-1], (16, 16))).astype(np.float32), "GPU exact")),
    "dot_fp16_k8_rejected": Divergence(
        Spec(SRC_DIVERGE, "dot_default", (1,), (np.ones((16, 8), np.float16), np.ones((8, 16), np.float16),
                                                zeros((16, 16), np.float32)), {"M": 16, "N": 16, "K": 8}),
        "S1.29 and S8.5: Triton 3.6 on NVIDIA needs K >= 16 for 16-bit dots (CompilationError); the "
        "interpreter accepts K=8",
        lambda r: (_expect_eq(r.error, None, "interpreter error"),
                   _expect_eq(r.args[2], np.full((16, 16), 8, np.float32), "interpreter result")),
        _raises(minitriton.CompilationError, r"K >= 16")),
    "variable_defined_in_loop": Divergence(
        Spec(SRC_DIVERGE, "loop_scoped", (1,), (zeros(1, np.int32), 3)),
        "S1.40 and S1.48: the compiler rejects a variable first assigned in a loop body "
        "(NameError); the interpreter runs and keeps the last value",
        lambda r: (_expect_eq(r.error, None, "interpreter error"),
                   _expect_eq(r.args[0], np.array([4], np.int32), "interpreter result")),
        _raises(minitriton.CompilationError, re.escape("NameError('v is not defined')"))),
    "if_rebinds_int_to_float": Divergence(
        Spec(SRC_DIVERGE, "if_rebinds_type", (1,), (zeros(1, np.float32), 3)),
        "S1.49: the compiler rejects an `if` that rebinds an int32 to fp32; the interpreter runs",
        lambda r: (_expect_eq(r.error, None, "interpreter error"),
                   _expect_eq(r.args[0], np.array([1.5], np.float32), "interpreter result")),
        _raises(minitriton.CompilationError,
                re.escape("initial value for `v` is of type int32[], but the then block redefines it as fp32[]"))),
    "builtin_max_on_blocks": Divergence(
        Spec(SRC_DIVERGE, "builtin_max_blocks", (1,), (xm[:8], ym[:8], zeros(8, np.float32)), {"N": 8}),
        "S5.4 and S15.11 ([SRC] triton/compiler/code_generator.py): the compiler maps Python's "
        "max to core.builtin_max = tl.maximum (NaN ignored, S1.14); the interpreter calls Python's max on the "
        "whole blocks and returns one operand (here y) unchanged",
        lambda r: _expect_eq(r.args[2], ym[:8], "interpreter returned y"),
        lambda m: _expect_eq(m.args[2], np.fmax(xm[:8], ym[:8]), "GPU elementwise maximum")),
    "fp16_times_float_kernel_arg": Divergence(
        Spec(SRC_DIVERGE, "times_float_arg", (1,), (np.full(4, 1 + 2**-10, np.float16), zeros(4, np.float32),
                                                    zeros(1, np.int32), 1.0001), {"N": 4}),
        "S15.10 ([SRC]): compiled Triton types a Python float kernel argument as an fp32 "
        "scalar tensor (JIT signature 'fp32', S3.10), so fp16 * s computes in fp32 (S3.2); the 3.9 "
        "interpreter passes the float through as a Python scalar (runtime.interpreter._implicit_cvt converts only "
        "bools, ints and pointers), a weak scalar (S3.7), so the product is fp16",
        lambda r: (_expect_eq(r.args[2], np.array([16], np.int32), "interpreter result bits"),
                   _expect_eq(r.args[1], np.full(4, np.float16(1 + 2**-10), np.float32), "interpreter fp16 product")),
        lambda m: (_expect_eq(m.args[2], np.array([32], np.int32), "GPU result bits"),
                   _expect_eq(m.args[1], np.full(4, np.float32(1 + 2**-10) * np.float32(1.0001), np.float32),
                              "GPU fp32 product"))),
    "device_assert_with_debug": Divergence(
        Spec(SRC_DIVERGE, "assert_positive", (1,), (zeros(1, np.int32),)),
        "S1.42 and S1.56: with @triton.jit(debug=True) the GPU fires the assert; the interpreter "
        "never does",
        lambda r: (_expect_eq(r.error, None, "interpreter error"),
                   _expect_eq(r.args[0], np.array([1], np.int32), "interpreter stored x + 1")),
        _raises(minitriton.DeviceAssertionError, r"x must be positive")),
}

# ============================================================================ the oracle run (one subprocess)


@pytest.fixture(scope="session")
def interpreter_results():
    names, cases = [], []
    for name, spec in CASES.items():
        names.append(("case", name))
        cases.append(spec.case())
    for name, (spec, _) in ERROR_CASES.items():
        names.append(("error", name))
        cases.append(spec.case())
    for name, div in EXPECTED_INTERPRETER_DIVERGENCES.items():
        names.append(("divergence", name))
        cases.append(div.spec.case())
    try:
        results = run_batch(cases)
    except OracleUnavailable as e:
        pytest.skip(f"real Triton's interpreter is not available in a subprocess: {e}")
    return dict(zip(names, results))


def _labels(spec):
    return [(i, a) for i, a in enumerate(spec.args) if isinstance(a, (np.ndarray, BF16))] + \
           [(k, v) for k, v in spec.kwargs.items() if isinstance(v, (np.ndarray, BF16))]


def _compare(spec, mt_result, it_result, name):
    for key, _ in _labels(spec):
        mt = mt_result.args[key] if isinstance(key, int) else mt_result.kwargs[key]
        it = it_result.args[key] if isinstance(key, int) else it_result.kwargs[key]
        spec.check.get(key, exact)(mt, it, f"{name} arg {key}")


@pytest.fixture
def one_program_per_pass():
    old = minitriton.options().group_size
    minitriton.set_options(group_size=1)
    yield
    minitriton.set_options(group_size=old)


@pytest.mark.parametrize("name", list(CASES))
def test_matches_interpreter(name, interpreter_results):
    spec = CASES[name]
    it = interpreter_results[("case", name)]
    assert it.ok, f"the interpreter failed on {name}: {it.error}"
    wrote = [k for k, a in _labels(spec) if not np.array_equal(
        _bits(it.args[k] if isinstance(k, int) else it.kwargs[k]), _bits(a), equal_nan=_bits(a).dtype.kind == "f")]
    assert wrote, f"{name}: the kernel left every array unchanged, so the comparison would prove nothing"
    mt = _minitriton(name)
    _compare(spec, mt, it, name)


_MT_RESULTS: dict = {}


def _minitriton(name):
    """minitriton's result for CASES[name] (default grouping), computed once."""
    if name not in _MT_RESULTS:
        spec = CASES[name]
        _MT_RESULTS[name] = run_in_minitriton(spec.source, spec.kernel, spec.grid, spec.args, spec.kwargs)
    return _MT_RESULTS[name]


def test_gpu_measurements_hold_on_both_sides(interpreter_results):
    """A few GPU facts (S1) checked on both sides, so a shared mistake cannot pass as agreement."""
    for side in ("interpreter", "minitriton"):
        def get(name, k):
            return (interpreter_results[("case", name)] if side == "interpreter" else _minitriton(name)).args[k]

        # S1.1, S1.2: C division (truncation toward zero; the remainder has the dividend's sign)
        q, r = get("int_divmod_int32", 2)[:6], get("int_divmod_int32", 3)[:6]
        assert q.tolist() == [-3, 3, 3, -3, -2, 2] and r.tolist() == [-1, 1, -1, 1, -2, -2], side
        a, b = CASES["int_divmod_int64"].args[:2]
        exact_q = [abs(int(x)) // abs(int(y)) * (1 if (x < 0) == (y < 0) else -1) for x, y in zip(a, b)]
        assert get("int_divmod_int64", 2).tolist() == exact_q, side
        assert get("int_divmod_int64", 3).tolist() == [int(x) - q_ * int(y) for x, y, q_ in zip(a, b, exact_q)], side
        # S1.3, S1.4: runtime scalars use C semantics, constexpr-only operands Python's; tl.cdiv(-7, 2) = -3
        assert get("scalar_divmod_runtime_vs_constexpr", 0).tolist() == [-3, -1, -4, 1, -3, -7 % 2 - 2, -3], side
        # S1.6, S1.8, S1.10: int32 wrap-around
        assert get("int32_wrap_offsets", 0).tolist() == [-2**30, -2**31, -4, -2**30], side
        assert get("int64_scalar_args", 0).tolist() == [3 * 2**33, 2**40 + 1, 2**42, (2**40 + 1) // 2], side
        # S1.14 (3.9 interpreter = GPU): maximum(x, 1.0) ignores NaN; S1.31: masked lanes read 0 without `other`
        mm = get("minmax_nan_fp32", 2)
        assert mm[2 * CN: 2 * CN + 4].tolist() == [1.0, 1.0, 2.0, 3.0], side
        assert get("masked_load_other_float32", 1)[50:].tolist() == [0.0] * 14, side
        assert get("masked_load_other_float32", 2)[50:].tolist() == [-1.5] * 14, side
        # S1.46: int8 sums accumulate in int32; S1.54: argmax/argmin ties pick the first index, NaN never wins
        assert get("reductions_int8_accumulate_int32", 2)[:RC].tolist()[:4] == [800.0, 800.0, 800.0, 800.0], side
        assert get("argmax_ties_and_nan", 1).tolist()[:2] == [2, 5], side
        assert get("argmax_ties", 1).tolist()[:2] == [1, 5], side
        # S1.52: int32 -> uint8 wraps; S1.55: fp16 dot with out_dtype=fp16 rounds the fp32 sum once (2063 -> 2064)
        assert get("cast_int32_to_uint8", 1)[:4].tolist() == [44, 255, 255, 0], side
        assert get("dot_fp16_out_fp16", 2)[0, 0] == 2064.0, side


# the cases whose results depend most on how programs are grouped (atomics, divergent loops, grids, splits)
GROUPING_CASES = ["atomics_100_programs", "grid_3d_program_ids", "runtime_bounded_loops", "vector_add_masked_tail",
                  "lesson_matmul_37x45x29", "lesson_flash_attention_causal_True", "tile_2d_noncontiguous"]


@pytest.mark.parametrize("name", GROUPING_CASES)
def test_matches_interpreter_one_program_per_pass(name, interpreter_results, one_program_per_pass):
    spec = CASES[name]
    mt = run_in_minitriton(spec.source, spec.kernel, spec.grid, spec.args, spec.kwargs)
    _compare(spec, mt, interpreter_results[("case", name)], name)


def test_atomics_match_the_gpu_measurement(interpreter_results):
    """S1.35 (GPU): 100 programs of atomic_add(c, 1) and atomic_max(c2, pid) give [100, 99]."""
    spec = CASES["atomics_100_programs"]
    it = interpreter_results[("case", "atomics_100_programs")]
    mt = run_in_minitriton(spec.source, spec.kernel, spec.grid, spec.args, spec.kwargs)
    for r in (it, mt):
        assert r.args[0][:2].tolist() == [100, 99]
        assert r.args[0][2] == -99 and r.args[0][6] == 7 and r.args[0][7] == sum(range(0, 100, 2))
        assert r.args[1][:4].tolist() == [400, 400, 400, 400]
        assert r.args[2].tolist() == [float(sum(range(0, 1600, 2))), float(sum(range(1, 1600, 2)))]


def test_promotion_codes_follow_the_documented_rules(interpreter_results):
    """Spot-check S3 against both sides, so a shared wrong rule would not pass silently."""
    def codes(name):
        return interpreter_results[("case", name)].args[3].tolist()

    def code(bits, kind):
        return bits * 4 + {"i": 0, "u": 1, "f": 2}[kind]

    assert codes("promote_int32_float16")[0] == code(16, "f")           # rule 1: kind wins
    assert codes("promote_float16_float32")[0] == code(32, "f")         # rule 2: width wins
    assert codes("promote_int32_uint32")[0] == code(32, "u")            # rule 4: prefer unsigned
    assert codes("promote_uint8_int8")[0] == code(8, "u")
    assert codes("promote_int16_int16")[7] == code(32, "f")             # rule 5: int / int is fp32
    assert codes("promote_float16_float16")[6] == code(32, "f")         # rule 5: % on floats in fp32
    assert codes("promote_int64_float16")[0] == code(16, "f")
    assert codes("promote_float32_float64")[0] == code(64, "f")
    assert codes("promote_bf16_plus_int32_tensor")[0] == code(32, "f")  # S1.44
    scalar = interpreter_results[("case", "promote_scalar_uint8_S3_s5")].args[2].tolist()
    assert scalar[0] == code(8, "u") and scalar[2] == code(32, "i")     # rule 7; a runtime int arg is an int32 tensor
    scalar = interpreter_results[("case", "promote_scalar_int16_S2.5_s-3")].args[2].tolist()
    assert scalar[0] == code(32, "f")                                   # rule 8
    scalar = interpreter_results[("case", "promote_scalar_int8_S1e+300_s1099511627776")].args[2].tolist()
    assert scalar[0] == code(64, "f") and scalar[2] == code(64, "i")


@pytest.mark.parametrize("name", list(ERROR_CASES))
def test_same_error_as_interpreter(name, interpreter_results):
    spec, pattern = ERROR_CASES[name]
    it = interpreter_results[("error", name)]
    assert not it.ok and re.search(pattern, it.error), f"interpreter: {it.error}"
    with pytest.raises(minitriton.CompilationError, match=pattern):
        run_in_minitriton(spec.source, spec.kernel, spec.grid, spec.args, spec.kwargs)


class MinitritonDiffersFromGpu(AssertionError):
    """minitriton does not give the GPU's documented result (the interpreter side already held)."""


NOT_YET_IN_MINITRITON: dict = {}   # name -> why minitriton does not match the GPU yet (strict xfail)


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(strict=True, raises=MinitritonDiffersFromGpu,
                                            reason=NOT_YET_IN_MINITRITON[n]))
    if n in NOT_YET_IN_MINITRITON else n for n in EXPECTED_INTERPRETER_DIVERGENCES])
def test_documented_divergence(name, interpreter_results, monkeypatch):
    monkeypatch.delenv("TRITON_F32_DEFAULT", raising=False)    # `python -m minitriton run` sets it to ieee
    div = EXPECTED_INTERPRETER_DIVERGENCES[name]
    it = interpreter_results[("divergence", name)]
    assert it.ok, f"the interpreter now fails on {name} ({it.error}); update EXPECTED_INTERPRETER_DIVERGENCES"
    div.interpreter(it)
    m = run_in_minitriton(div.spec.source, div.spec.kernel, div.spec.grid, div.spec.args, div.spec.kwargs,
                          raise_errors=False)
    try:
        div.gpu(m.exception if m.exception is not None else m)
    except AssertionError as e:
        raise MinitritonDiffersFromGpu(f"{name}: {e}") from e


def test_oracle_keeps_strided_views_and_copies_inputs():
    """The transport itself: a non-contiguous view comes back as a view with the same strides."""
    base = np.arange(40, dtype=np.float32).reshape(4, 10)
    v = base[::2, 1::3]
    c = clone(v)
    assert c.strides == v.strides and np.array_equal(c, v) and not np.shares_memory(c, base)
