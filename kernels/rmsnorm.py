"""RMSNorm, forward and backward.

What it teaches (lesson: «RMSNorm»): a *row reduction feeding an elementwise op* in one kernel, with the
precision rule of every normalisation kernel — storage may be bf16, but the mean of squares, the rsqrt and
the products are computed in fp32. Forward: y = x * rstd * w with rstd = 1 / sqrt(mean(x²) + eps) per row;
padding lanes load 0, which leaves the sum of squares unchanged (the mean divides by the true n_cols).
The forward also stores rstd (one fp32 per row) for the backward, so the backward never recomputes it.

The backward shows the other half of reductions: a gradient *across rows*. With g = dy * w,
    dx = rstd * (g - x * rstd² * mean(g * x))         (per row)
    dw = sum over rows of dy * x * rstd                 (per column, over all rows)
dx is per row, like the forward. dw sums over every row, i.e. over many programs. Programs must not race
on it: here each program walks a contiguous chunk of rows, accumulates its dw in fp32 registers and writes
one partial row into a (n_programs, n_cols) fp32 buffer; a second small kernel sums the partials down the
columns in a fixed order. No atomics: fp32 atomic adds would land in whatever order the hardware runs
the programs, so dw would change in its last bits from run to run; this way it is bit-stable. The partials
cost 2 · n_programs · n_cols · 4 extra bytes, small next to x, dy and dx when rows are many.

Host wrappers take NumPy arrays, `minitriton.Buffer`s (bf16) or torch tensors; RMSNorm runs over the last
dimension, whose length must fit one block (MAX_COLS).

Speed on a GPU: the RMSNorm rows of the benchmark of record, `parity/results/cuda-bench-2026-11-30-rmsnorm-bwd.md`,
next to torch eager, `F.rms_norm`, the lesson's kernel and a torch op that moves the same bytes (in the
backward, the gap to that ceiling is the dw partial rows and the second kernel that sums them). Launch
shapes: `docs/findings.md` §2.
"""
from __future__ import annotations

import functools

import numpy as np
import triton
import triton.language as tl

from . import _host

# Tuned on an H200 (Triton 3.6.0, bf16, rows of 896 to 16384 columns).
MAX_COLS = 65536          # a row is held whole in registers
FWD_ELEMENTS = 4096       # forward: BLOCK_M = FWD_ELEMENTS // BLOCK_N rows per program (896 columns: 4)
BWD_ELEMENTS = 2048       # backward: rows per loop step likewise
BWD_PROGRAMS = 528        # backward programs (4 per H200 multiprocessor) = rows of the dw partial buffer
# dw_reduce: narrow column strips, so that enough programs share the partials' 528 x n_cols fp32 (16 columns
# and 128 partial rows per step summed 528 x 2048 in 8 us; 256 columns per program took 45 us)
REDUCE_BLOCK_N = 16
REDUCE_BLOCK_P = 128

_FLOAT_DTYPES = ("float32", "float16", "bfloat16")


# ----------------------------------------------------------------------------- device code

@triton.jit
def rmsnorm_fwd_kernel(x_ptr, w_ptr, y_ptr, rstd_ptr, n_rows, n_cols, x_row_stride, y_row_stride, eps,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # BLOCK_M whole rows per program; w is loaded once per program and shared by its rows.
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    row_mask = rows < n_rows
    col_mask = cols < n_cols
    mask = row_mask[:, None] & col_mask[None, :]
    offs = rows.to(tl.int64)[:, None]
    x = tl.load(x_ptr + offs * x_row_stride + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=col_mask, other=0.0).to(tl.float32)
    mean_sq = tl.sum(x * x, axis=1) / n_cols
    rstd = 1.0 / tl.sqrt(mean_sq + eps)
    y = x * rstd[:, None] * w[None, :]
    tl.store(y_ptr + offs * y_row_stride + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)
    tl.store(rstd_ptr + rows, rstd, mask=row_mask)


@triton.jit
def rmsnorm_bwd_kernel(x_ptr, w_ptr, rstd_ptr, dy_ptr, dx_ptr, dw_partial_ptr, n_rows, n_cols, rows_per_program,
                       x_row_stride, dy_row_stride, dx_row_stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # Program p handles rows [p * rows_per_program, (p + 1) * rows_per_program), BLOCK_M at a time
    # (rows_per_program is a multiple of BLOCK_M), and writes its share of dw to dw_partial[p, :].
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    col_mask = cols < n_cols
    w = tl.load(w_ptr + cols, mask=col_mask, other=0.0).to(tl.float32)
    dw = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)     # reduced over its BLOCK_M rows once, after the loop
    first_row = pid * rows_per_program
    for start in range(0, rows_per_program, BLOCK_M):
        rows = first_row + start + tl.arange(0, BLOCK_M)
        row_mask = rows < n_rows
        mask = row_mask[:, None] & col_mask[None, :]
        offs = rows.to(tl.int64)[:, None]
        x = tl.load(x_ptr + offs * x_row_stride + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + offs * dy_row_stride + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        rstd = tl.load(rstd_ptr + rows, mask=row_mask, other=0.0)[:, None]
        g = dy * w[None, :]
        c = tl.sum(g * x, axis=1)[:, None] / n_cols   # mean(g * x) per row
        dx = (g - x * (rstd * rstd * c)) * rstd
        tl.store(dx_ptr + offs * dx_row_stride + cols[None, :], dx.to(dx_ptr.dtype.element_ty), mask=mask)
        dw += dy * x * rstd                           # padding rows and lanes are 0 and add nothing
    tl.store(dw_partial_ptr + pid * n_cols + cols, tl.sum(dw, axis=0), mask=col_mask)


@triton.jit
def dw_reduce_kernel(partial_ptr, dw_ptr, n_partials, n_cols, BLOCK_P: tl.constexpr, BLOCK_N: tl.constexpr):
    # dw[c] = sum over p of partial[p, c], for BLOCK_N columns per program, in a fixed order.
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < n_cols
    acc = tl.zeros([BLOCK_P, BLOCK_N], tl.float32)
    for start in range(0, n_partials, BLOCK_P):
        p = start + tl.arange(0, BLOCK_P)
        mask = (p < n_partials)[:, None] & col_mask[None, :]
        acc += tl.load(partial_ptr + p.to(tl.int64)[:, None] * n_cols + cols[None, :], mask=mask, other=0.0)
    tl.store(dw_ptr + cols, tl.sum(acc, axis=0).to(dw_ptr.dtype.element_ty), mask=col_mask)


# ----------------------------------------------------------------------------- host code

def _check(x, w):
    """x's shape after checking dtypes and w's shape."""
    for name, a in (("x", x), ("w", w)):
        if _host.dtype_name(a) not in _FLOAT_DTYPES:
            raise TypeError(f"rmsnorm: {name} must be float32, float16 or bfloat16, got {_host.dtype_name(a)}")
    shape = tuple(x.shape)
    if len(shape) == 0 or tuple(w.shape) != (shape[-1],):
        raise ValueError(f"rmsnorm: w must have shape (x.shape[-1],) = ({shape[-1] if shape else '?'},), "
                         f"got {tuple(w.shape)}")
    if shape[-1] > MAX_COLS:
        raise ValueError(f"rmsnorm: rows of {shape[-1]} columns do not fit one block (at most {MAX_COLS})")
    return shape


def _rows(x, shape):
    """(None, row stride) when `x` is used as it is (2-D with contiguous columns: its rows may be strided), else
    (f, n_cols): f(a) gives arrays like x as a C-contiguous (rows, n_cols) array."""
    if len(shape) == 2 and _host.stride(x, 1) == 1:
        return None, _host.stride(x, 0)
    n_cols = shape[-1]
    return _host.as_rows(x, int(np.prod(shape[:-1], dtype=np.int64)), n_cols), n_cols


@functools.lru_cache(maxsize=256)
def config(n_rows: int, n_cols: int) -> dict:
    """The forward launch: BLOCK_M rows of BLOCK_N columns per program, num_warps, grid (cached: read only)."""
    block_n = triton.next_power_of_2(n_cols)
    block_m = max(1, min(FWD_ELEMENTS // block_n, triton.next_power_of_2(n_rows)))
    # One row per program: ~64 fp32 values per thread (2 warps at 4096 columns, 4 at 8192). Several rows per
    # program: ~16, a warp per 512 elements (docs/findings.md §2)
    num_warps = max(2, min(32, block_m * block_n // (2048 if block_m == 1 else 512)))
    return {"BLOCK_M": block_m, "BLOCK_N": block_n, "num_warps": num_warps,
            "grid": (triton.cdiv(n_rows, block_m),)}


@functools.lru_cache(maxsize=256)
def backward_config(n_rows: int, n_cols: int, programs: int | None = None) -> dict:
    """Both backward launches (cached: read only).

    Kernel 1: BLOCK_M rows per step, rows_per_program (a multiple of BLOCK_M), grid = number of partials.
    Kernel 2 (dw_reduce): REDUCE_BLOCK_N columns per program, REDUCE_BLOCK_P partial rows per step.
    """
    block_n = triton.next_power_of_2(n_cols)
    block_m = max(1, min(BWD_ELEMENTS // block_n, triton.next_power_of_2(n_rows)))
    num_warps = max(4, min(16, block_m * block_n // 512))       # ~16 fp32 values per thread
    programs = BWD_PROGRAMS if programs is None else programs
    rows_per_program = triton.cdiv(triton.cdiv(max(n_rows, 1), programs), block_m) * block_m
    n_partials = triton.cdiv(max(n_rows, 1), rows_per_program)
    reduce_n = min(REDUCE_BLOCK_N, block_n)
    return {"BLOCK_M": block_m, "BLOCK_N": block_n, "num_warps": num_warps, "rows_per_program": rows_per_program,
            "grid": (n_partials,), "reduce_grid": (triton.cdiv(n_cols, reduce_n),), "REDUCE_BLOCK_N": reduce_n,
            "REDUCE_BLOCK_P": max(1, min(REDUCE_BLOCK_P, triton.next_power_of_2(n_partials)))}


_FWD_PLANS = {}    # (type, shape, dtype, strides of x and w) -> launch(x, w, eps), torch tensors only
_BWD_PLANS = {}    # (the same for x, w, rstd, dy, programs, its type) -> launch(x, w, rstd, dy)
_TORCH = _host.TORCH_TYPES


def _forward(x, w):
    """The forward's launch for these arrays (kept for torch tensors)."""
    if type(x) in _TORCH and type(w) in _TORCH:
        key = (type(x), x.shape, x.dtype, x.stride(), type(w), w.shape, w.dtype, w.stride())
        try:
            plan = _FWD_PLANS[key]
        except (KeyError, TypeError):   # a new key, or an option that cannot be hashed
            plan = None
        if plan is None:     # (outside the except clause: errors are not chained to the KeyError)
            plan = _host.remember(_FWD_PLANS, key, _forward_plan(x, w))
        return plan
    return _forward_plan(x, w)


def _forward_plan(x, w):
    """Check x and w; launch(x, w, eps) -> (y, rstd) for arrays like them (kinds, shapes, dtypes, strides)."""
    shape = _check(x, w)
    rows, x_row_stride = _rows(x, shape)
    w_contiguous = _host.contiguous_fn(w)
    n_cols = shape[-1]
    n_rows = int(np.prod(shape[:-1], dtype=np.int64))
    alloc_y = _host.allocator(shape, x)              # C-contiguous: its row stride is n_cols
    if n_cols == 0:   # the mean of no squares is 0/0, as torch's and NumPy's mean of an empty row
        return lambda x_, w_, eps: (alloc_y(x_), _host.from_float(np.full(n_rows, np.nan), x_, "float32"))
    alloc_rstd = _host.allocator((n_rows,), x, "float32")
    if n_rows == 0:
        return lambda x_, w_, eps: (alloc_y(x_), alloc_rstd(x_))
    y_rows = None if len(shape) == 2 else _host.as_rows(x, n_rows, n_cols)
    cfg = config(n_rows, n_cols)
    run = _host.compiled_launcher(rmsnorm_fwd_kernel, cfg["grid"], (0, 1, 2, 3), num_warps=cfg["num_warps"])
    block_m, block_n = cfg["BLOCK_M"], cfg["BLOCK_N"]

    def launch(x_, w_, eps):
        y = alloc_y(x_)
        rstd = alloc_rstd(x_)
        run(x_ if rows is None else rows(x_), w_ if w_contiguous is None else w_contiguous(w_),
            y if y_rows is None else y_rows(y), rstd, n_rows, n_cols, x_row_stride, n_cols, float(eps),
            block_m, block_n)
        return y, rstd
    return launch


def rmsnorm_forward(x, w, eps: float = 1e-6):
    """(y, rstd): y = x * rstd * w over the last dimension, rstd = 1/sqrt(mean(x²) + eps) per row (fp32)."""
    return _forward(x, w)(x, w, eps)


def rmsnorm(x, w, eps: float = 1e-6):
    """RMSNorm over the last dimension of `x` with weight `w` (any array kind; y has x's dtype)."""
    return _forward(x, w)(x, w, eps)[0]


def rmsnorm_backward(x, w, rstd, dy, programs: int | None = None):
    """(dx, dw) for y = rmsnorm(x, w), given the forward's rstd and the upstream gradient dy.

    dx has dy's dtype, dw has w's. `programs` (default BWD_PROGRAMS) sets how many partial dw rows the
    first kernel writes.
    """
    if type(x) in _TORCH and type(w) in _TORCH and type(rstd) in _TORCH and type(dy) in _TORCH:
        key = (type(x), x.shape, x.dtype, x.stride(), type(w), w.shape, w.dtype, w.stride(), type(rstd),
               rstd.shape, rstd.dtype, rstd.stride(), type(dy), dy.shape, dy.dtype, dy.stride(), programs,
               type(programs))
        try:
            plan = _BWD_PLANS[key]
        except (KeyError, TypeError):   # a new key, or an option that cannot be hashed
            plan = None
        if plan is None:     # (outside the except clause: errors are not chained to the KeyError)
            plan = _host.remember(_BWD_PLANS, key, _backward_plan(x, w, rstd, dy, programs))
        return plan(x, w, rstd, dy)
    return _backward_plan(x, w, rstd, dy, programs)(x, w, rstd, dy)


def _backward_plan(x, w, rstd, dy, programs):
    """Check the arguments; launch(x, w, rstd, dy) -> (dx, dw) for arrays like them."""
    shape = _check(x, w)
    if tuple(dy.shape) != shape:
        raise ValueError(f"rmsnorm_backward: x is {shape} but dy is {tuple(dy.shape)}")
    x_rows, x_row_stride = _rows(x, shape)
    dy_rows, dy_row_stride = _rows(dy, shape)
    w_contiguous, rstd_contiguous = _host.contiguous_fn(w), _host.contiguous_fn(rstd)
    n_cols = shape[-1]
    n_rows = int(np.prod(shape[:-1], dtype=np.int64))
    if _host.numel(rstd) != n_rows:
        raise ValueError(f"rmsnorm_backward: rstd must hold one value per row ({n_rows}), got {_host.numel(rstd)}")
    alloc_dx = _host.allocator(shape, dy)
    if n_rows == 0 or n_cols == 0:
        return lambda x_, w_, rstd_, dy_: (alloc_dx(dy_), _host.zeros((n_cols,), w_))
    dx_rows = None if len(shape) == 2 else _host.as_rows(dy, n_rows, n_cols)
    cfg = backward_config(n_rows, n_cols, programs)
    n_partials = cfg["grid"][0]
    alloc_partial = _host.allocator((n_partials, n_cols), x, "float32")
    alloc_dw = _host.allocator((n_cols,), w)
    run = _host.launcher(rmsnorm_bwd_kernel, cfg["grid"], num_warps=cfg["num_warps"])
    run_reduce = _host.launcher(dw_reduce_kernel, cfg["reduce_grid"], num_warps=8)
    args = (n_rows, n_cols, cfg["rows_per_program"], x_row_stride, dy_row_stride, n_cols, cfg["BLOCK_M"],
            cfg["BLOCK_N"])
    reduce_args = (n_partials, n_cols, cfg["REDUCE_BLOCK_P"], cfg["REDUCE_BLOCK_N"])

    def launch(x_, w_, rstd_, dy_):
        w_ = w_ if w_contiguous is None else w_contiguous(w_)
        dx = alloc_dx(dy_)
        partial = alloc_partial(x_)
        run(x_ if x_rows is None else x_rows(x_), w_, rstd_ if rstd_contiguous is None else rstd_contiguous(rstd_),
            dy_ if dy_rows is None else dy_rows(dy_), dx if dx_rows is None else dx_rows(dx), partial, *args)
        dw = alloc_dw(w_)
        run_reduce(partial, dw, *reduce_args)
        return dx, dw
    return launch


# ----------------------------------------------------------------------------- references and models

def reference_rmsnorm(x, w, eps: float = 1e-6) -> np.ndarray:
    """x / sqrt(mean(x²) + eps) * w over the last axis, in float64."""
    x, w = _host.to_float64(x), _host.to_float64(w)
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps) * w


def reference_rstd(x, eps: float = 1e-6) -> np.ndarray:
    """1 / sqrt(mean(x²) + eps) per row (all axes but the last), in float64."""
    x = _host.to_float64(x)
    return 1.0 / np.sqrt((x * x).mean(axis=-1) + eps)


def reference_rmsnorm_backward(x, w, dy, eps: float = 1e-6):
    """(dx, dw) in float64, from the chain rule (independent of the kernel's regrouping of the formula).

    y_j = x_j w_j r with r = (mean(x²) + eps)^(-1/2) and dr/dx_k = -r³ x_k / n, so
    dx_k = r w_k dy_k - (r³ x_k / n) Σ_j dy_j w_j x_j and dw_j = Σ_rows dy_j x_j r.
    """
    x, w, dy = _host.to_float64(x), _host.to_float64(w), _host.to_float64(dy)
    n = x.shape[-1]
    r = 1.0 / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps)
    dx = r * w * dy - r ** 3 * x / n * (dy * w * x).sum(axis=-1, keepdims=True)
    dw = (dy * x * r).reshape(-1, n).sum(axis=0)
    return dx, dw


def traffic(n_rows: int, n_cols: int, dtype: str = "float32", w_dtype: str | None = None,
            backward: bool = False) -> dict:
    """Bytes an ideal kernel moves and its FLOPs for an (n_rows, n_cols) RMSNorm.

    Forward: read x and w once, write y and rstd (fp32 per row). FLOPs: x², sum, scale by rstd, by w (4 per
    element) + mean, add eps, sqrt, reciprocal (4 per row).
    Backward: read x, dy, w, rstd once, write dx and dw. FLOPs per element: g = dy·w, g·x, sum, x·c, g − ·,
    · rstd, dy·x·rstd (2) and its sum (9), + 4 per row. The dw partial buffer (2 · programs · n_cols · 4
    bytes) and re-reads of w by several programs are what the real kernel adds to this ideal.
    """
    n = n_rows * n_cols
    size = _host.itemsize(dtype)
    w_size = _host.itemsize(w_dtype or dtype)
    if backward:
        return {"bytes": 3 * n * size + 2 * n_cols * w_size + 4 * n_rows, "flops": 9 * n + 4 * n_rows}
    return {"bytes": 2 * n * size + n_cols * w_size + 4 * n_rows, "flops": 4 * n + 4 * n_rows}


# ----------------------------------------------------------------------------- torch.autograd

_AUTOGRAD = None


def autograd_function():
    """`TritonRMSNorm`: torch.autograd.Function with apply(x, w, eps) (imports torch on first call)."""
    global _AUTOGRAD
    if _AUTOGRAD is None:
        import torch

        class TritonRMSNorm(torch.autograd.Function):
            """RMSNorm with the Triton kernels; saves x, w and rstd for the backward."""

            @staticmethod
            def forward(ctx, x, w, eps=1e-6):
                y, rstd = rmsnorm_forward(x, w, eps)
                ctx.save_for_backward(x, w, rstd)
                return y

            @staticmethod
            def backward(ctx, dy):
                x, w, rstd = ctx.saved_tensors
                dx, dw = rmsnorm_backward(x, w, rstd, dy)
                return dx, dw, None

        _AUTOGRAD = TritonRMSNorm
    return _AUTOGRAD


def triton_rmsnorm(x, w, eps: float = 1e-6):
    """RMSNorm differentiable through torch.autograd (gradients for x and w)."""
    return autograd_function().apply(x, w, eps)


def __getattr__(name):
    if name == "TritonRMSNorm":
        return autograd_function()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":  # pragma: no cover
    from kernels.check import main_for
    raise SystemExit(main_for("rmsnorm"))
