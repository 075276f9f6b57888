"""Vector add: the first kernel, and the one that teaches the programming model.

What it teaches (lesson: «первое ядро»): a launch is a *grid* of programs; each program owns one block of
`BLOCK_SIZE` consecutive elements, found from `tl.program_id`; `tl.arange` builds the block's offsets; and
the last block usually runs past the end of the array, so a *mask* (`offs < n`) switches its extra lanes
off for both the load and the store. On the GPU the kernel is memory-bound: it does one add per 12 bytes
(fp32), so its speed is bytes moved / time, and an ideal kernel moves each input once and the output once,
3·n·itemsize bytes — which is what the traffic counters show under minitriton and what `traffic()` returns.

The same source runs under minitriton (NumPy arrays, `minitriton.Buffer`, torch CPU tensors) and under
real Triton on a GPU (torch CUDA tensors); the host code touches arrays only through `kernels._host`.
Speed on a GPU, with the default BLOCK_SIZE = 1024 and 4 warps: the vector_add rows of the benchmark of
record, `parity/results/cuda-bench-2026-11-30-rmsnorm-bwd.md`, as a fraction of a device-to-device copy.
"""
from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from . import _host


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    # Program `pid` handles elements [pid * BLOCK_SIZE, (pid + 1) * BLOCK_SIZE). The block start is
    # computed in int64 so that arrays of 2**31 elements and more do not wrap the offsets.
    pid = tl.program_id(axis=0)
    block_start = pid.to(tl.int64) * BLOCK_SIZE
    offs = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offs < n                                   # the tail block: lanes past n do nothing
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def _num_warps(block_size: int) -> int:
    # 16 bytes per thread per load is what a vectorised global load moves; more warps than
    # BLOCK_SIZE / 4 fp32 lanes would leave threads idle.
    return max(1, min(8, block_size // 256))


_PLANS = {}    # (type, shape, dtype, strides of x, y [and out], BLOCK_SIZE, its type) -> launch, torch tensors only
_TORCH = _host.TORCH_TYPES


def add(x, y, out=None, BLOCK_SIZE: int = 1024):
    """x + y elementwise with `add_kernel`, for NumPy arrays, `minitriton.Buffer`s or torch tensors.

    `x` and `y` must have the same shape and dtype; `out`, if given, receives the result (same shape, same
    kind, C-contiguous) and is returned. Non-contiguous inputs are copied to contiguous ones first.
    """
    if type(x) in _TORCH and type(y) in _TORCH:
        if out is None:
            key = (type(x), x.shape, x.dtype, x.stride(), type(y), y.shape, y.dtype, y.stride(), BLOCK_SIZE,
                   type(BLOCK_SIZE))
        elif type(out) in _TORCH:
            key = (type(x), x.shape, x.dtype, x.stride(), type(y), y.shape, y.dtype, y.stride(), type(out),
                   out.shape, out.dtype, out.stride(), BLOCK_SIZE, type(BLOCK_SIZE))
        else:
            return _plan(x, y, out, BLOCK_SIZE)(x, y, out)
        try:
            plan = _PLANS[key]
        except (KeyError, TypeError):   # a new key, or an option that cannot be hashed
            plan = None
        if plan is None:     # (outside the except clause: errors are not chained to the KeyError)
            plan = _host.remember(_PLANS, key, _plan(x, y, out, BLOCK_SIZE))
        return plan(x, y, out)
    return _plan(x, y, out, BLOCK_SIZE)(x, y, out)


def _plan(x, y, out, BLOCK_SIZE):
    """Check the arguments; launch(x, y, out) -> out for arrays like these (same kinds, shapes, dtypes, strides)."""
    if _host.shape(x) != _host.shape(y):
        raise ValueError(f"add: shapes differ: {_host.shape(x)} and {_host.shape(y)}")
    if _host.dtype_name(x) != _host.dtype_name(y):
        raise TypeError(f"add: dtypes differ: {_host.dtype_name(x)} and {_host.dtype_name(y)}")
    x_contiguous, y_contiguous = _host.contiguous_fn(x), _host.contiguous_fn(y)
    alloc = None
    if out is None:
        alloc = _host.allocator(_host.shape(x), x)
    elif _host.shape(out) != _host.shape(x) or _host.dtype_name(out) != _host.dtype_name(x):
        raise ValueError(f"add: out must be {_host.shape(x)} {_host.dtype_name(x)}, got "
                         f"{_host.shape(out)} {_host.dtype_name(out)}")
    elif _host.contiguous(out) is not out:
        raise ValueError("add: out must be C-contiguous")
    n = _host.numel(x)
    if n == 0:
        return lambda x_, y_, out_: out_ if out_ is not None else alloc(
            x_ if x_contiguous is None else x_contiguous(x_))
    run = _host.compiled_launcher(add_kernel, (triton.cdiv(n, BLOCK_SIZE),), (0, 1, 2),
                                 num_warps=_num_warps(BLOCK_SIZE))

    def launch(x_, y_, out_):
        if x_contiguous is not None:
            x_ = x_contiguous(x_)
        if y_contiguous is not None:
            y_ = y_contiguous(y_)
        if out_ is None:
            out_ = alloc(x_)
        run(x_, y_, out_, n, BLOCK_SIZE)
        return out_
    return launch


def reference_add(x, y) -> np.ndarray:
    """x + y in float64 (the exact sum of the stored values)."""
    return _host.to_float64(x) + _host.to_float64(y)


def traffic(n: int, dtype: str = "float32") -> dict:
    """Ideal traffic of adding two n-element vectors: read x and y once, write out once; one add each."""
    return {"bytes": 3 * n * _host.itemsize(dtype), "flops": n}


if __name__ == "__main__":  # pragma: no cover
    from kernels.check import main_for
    raise SystemExit(main_for("vector_add"))
