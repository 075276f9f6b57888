"""The lesson's kernels under minitriton.testing: property tests of their mask handling.

Each kernel runs on inputs the kit draws — sizes at and around its block sizes, views at offsets and with
padded rows or transposed strides, special values — into poisoned outputs (a kernel that skips an element
leaves the poison behind), and is compared with a float64 NumPy reference at the tolerances of
`kernels.tolerances`. check_kernel reports the shrunk failing case.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import strategies as st

import minitriton

minitriton.install()  # before the kernels import `triton` (the kernels' conftest does it too)

import minitriton.language as tl  # noqa: E402
import triton  # noqa: E402  (minitriton)
from kernels import matmul as mm  # noqa: E402
from kernels import rmsnorm as rn  # noqa: E402
from kernels import softmax as sm  # noqa: E402
from kernels import vector_add as va  # noqa: E402
from kernels.tolerances import TOLERANCES  # noqa: E402
from minitriton.testing import as_numpy, check_kernel  # noqa: E402
from minitriton.testing import strategies as mts  # noqa: E402

FLOATS = [np.dtype(np.float32), np.dtype(np.float16), tl.bfloat16]


def _name(dtype) -> str:
    return "bfloat16" if dtype == tl.bfloat16 else np.dtype(dtype).name


def _as(values, dtype):
    """float64 reference values stored as `dtype` (round to nearest even), a Buffer for bf16."""
    if dtype == tl.bfloat16:
        return minitriton.Buffer.from_float(np.asarray(values, np.float32), tl.bfloat16)
    return np.asarray(values).astype(dtype)


def _stride(a, axis):
    """The stride of `axis` in elements (NumPy arrays and bf16 Buffers)."""
    s = a.array if isinstance(a, minitriton.Buffer) else a
    return s.strides[axis] // s.itemsize


@pytest.fixture(autouse=True)
def _restore_options():
    yield  # tests/conftest.py restores the options


# ----------------------------------------------------------------------------------------- vector add

def test_vector_add_kernel_every_size_block_and_dtype():
    """add_kernel alone: any BLOCK_SIZE, any size around it, every dtype; exact (one rounding, as the GPU)."""
    def launch(x, y, block, out):
        n = as_numpy(x).size
        va.add_kernel[(triton.cdiv(n, block),)](x, y, out, n, BLOCK_SIZE=block)

    def reference(x, y, block):
        if isinstance(x, minitriton.Buffer):  # bf16: an fp32 add, rounded once to bf16
            return _as(x.to_float32() + y.to_float32(), tl.bfloat16)
        with np.errstate(all="ignore"):
            return x + y                      # the dtype's own add (integers wrap, as int32 does on the GPU)

    check_kernel(launch, reference,
                 mts.inputs("x", "y", shape=mts.sizes(max_size=2100), dtype=mts.dtypes(bf16=True),
                            block=mts.blocks(1, 1024)),
                 group_sizes=(None, 1), max_examples=40)


def test_vector_add_wrapper_takes_views():
    """add(): strided, offset and reversed inputs (copied to contiguous by the wrapper), the output given."""
    check_kernel(lambda x, y, block, out: va.add(x, y, out=out, BLOCK_SIZE=block),
                 lambda x, y, block: x + y,
                 mts.inputs("x", "y", shape=mts.sizes(block=128, max_size=600), dtype=np.float32,
                            layout=mts.layouts(1, strided=True, reversed_=True), block=mts.blocks(16, 512)),
                 max_examples=30)


# ----------------------------------------------------------------------------------------- softmax

def _softmax_inputs(dtype):
    # finite values and -inf (a row may be all -inf: NaN in both), rows padded in their buffer
    elements = st.one_of(mts.values(np.float32, min_value=-30, max_value=30), st.just(-np.inf))
    return mts.inputs("x", shape=mts.shapes(2, (None, 16), max_side=40), dtype=dtype, elements=elements,
                      layout=mts.layouts(2, padded=True), max_block=st.sampled_from([None, 8, 16]))


def _softmax_launch(x, max_block, out):
    rows, cols = as_numpy(x).shape
    if rows == 0 or cols == 0:
        return
    cfg = sm.config(rows, cols, max_block)
    if cfg["online"]:
        sm.softmax_fwd_online_kernel[cfg["grid"]](x, out, cols, _stride(x, 0), _stride(out, 0),
                                                  BLOCK_N=cfg["BLOCK_N"])
    else:
        sm.softmax_fwd_kernel[cfg["grid"]](x, out, rows, cols, _stride(x, 0), _stride(out, 0),
                                           BLOCK_M=cfg["BLOCK_M"], BLOCK_N=cfg["BLOCK_N"])


@pytest.mark.parametrize("dtype", FLOATS, ids=_name)
def test_softmax_forward_masks(dtype):
    """Both forward kernels (fused rows and the online loop), rows of any length around the blocks, strided
    rows in and out; the padding lanes (-inf) must not reach the sum."""
    atol, rtol = TOLERANCES[_name(dtype)]

    def reference(x, max_block):
        values = as_numpy(x).astype(np.float64)
        with np.errstate(all="ignore"):
            z = np.exp(values - values.max(axis=-1, keepdims=True)) if values.size else values
            return _as(z / z.sum(axis=-1, keepdims=True), dtype)

    check_kernel(_softmax_launch, reference, _softmax_inputs(dtype), atol=atol, rtol=rtol,
                 out_layout=mts.layouts(2, padded=True), max_examples=30)


# ----------------------------------------------------------------------------------------- rmsnorm

def _rmsnorm_inputs(dtype):
    def draw(d):
        # at least one column (0 columns: tests/kernels/test_rmsnorm.py::test_rmsnorm_no_columns)
        rows, cols = d(mts.sizes(max_size=40)), d(mts.sizes(block=16, min_size=1, max_size=40))
        values = mts.values(np.float32, min_value=-50, max_value=50)
        return {"x": d(mts.arrays(dtype, (rows, cols), elements=values, layout=mts.layouts(2, padded=True))),
                "w": d(mts.arrays(dtype, cols, elements=mts.values(np.float32, min_value=-2, max_value=2))),
                "eps": d(st.sampled_from([1e-6, 1e-5]))}
    return draw


@pytest.mark.parametrize("dtype", FLOATS, ids=_name)
def test_rmsnorm_forward_masks(dtype):
    """rmsnorm_fwd_kernel: BLOCK_M rows per program (the last group partial), columns padded to BLOCK_N;
    y into a padded view, rstd per row: masked rows and lanes must not be stored or summed."""
    atol, rtol = TOLERANCES[_name(dtype)]

    def launch(x, w, eps, y, rstd):
        rows, cols = as_numpy(x).shape
        if rows == 0:
            return
        cfg = rn.config(rows, cols)
        rn.rmsnorm_fwd_kernel[cfg["grid"]](x, w, y, rstd, rows, cols, _stride(x, 0), _stride(y, 0), float(eps),
                                           BLOCK_M=cfg["BLOCK_M"], BLOCK_N=cfg["BLOCK_N"])

    def reference(x, w, eps):
        values = as_numpy(x).astype(np.float64)
        rstd = 1.0 / np.sqrt((values * values).mean(axis=-1) + np.float32(eps))
        y = values * rstd[:, None] * as_numpy(w).astype(np.float64)[None, :]
        return {"y": _as(y, dtype), "rstd": rstd.astype(np.float32)}

    # atol is a fraction of the largest |y|: |x * rstd| <= sqrt(cols) <= 7, |w| <= 2
    check_kernel(launch, reference, _rmsnorm_inputs(dtype), outputs=("y", "rstd"), atol=atol * 14, rtol=rtol,
                 out_layout={"y": mts.layouts(2, padded=True)}, max_examples=25)


# ----------------------------------------------------------------------------------------- matmul

@pytest.mark.parametrize("dtype", [np.dtype(np.float32), np.dtype(np.float16), tl.bfloat16], ids=_name)
def test_matmul_edges_and_strides(dtype):
    """matmul_kernel with 16x16x16 tiles: M, N, K around the tiles (K below 16 and not a multiple of it),
    A, B and C as offset, strided or transposed views; the EVEN_K / EVEN_MN fast paths included. Small
    integer values make every product and sum exact (TF32 and bf16 included), so results must be exact."""
    def draw(d):
        m, n, k = (d(mts.sizes(block=16, max_size=40)) for _ in range(3))
        ints = st.integers(-4, 4).map(float)
        lay = mts.layouts(2, strided=True, transposed=True)
        return {"a": d(mts.arrays(dtype, (m, k), elements=ints, layout=lay)),
                "b": d(mts.arrays(dtype, (k, n), elements=ints, layout=lay)),
                "activation": d(st.sampled_from(["", "relu"]))}

    def launch(a, b, activation, c):
        (m, k), n = as_numpy(a).shape, as_numpy(b).shape[1]
        meta = dict(BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, GROUP_M=2)
        grid = (triton.cdiv(m, 16) * triton.cdiv(n, 16),)
        mm.matmul_kernel[grid](a, b, c, m, n, k, _stride(a, 0), _stride(a, 1), _stride(b, 0), _stride(b, 1),
                               _stride(c, 0), _stride(c, 1), ACTIVATION=activation, EVEN_K=k % 16 == 0,
                               EVEN_MN=m % 16 == 0 and n % 16 == 0, **meta)

    def reference(a, b, activation):
        c = as_numpy(a).astype(np.float64) @ as_numpy(b).astype(np.float64)
        if activation == "relu":
            c = np.maximum(c, 0)
        return _as(c, dtype)

    check_kernel(launch, reference, draw, outputs="c", out_layout=mts.layouts(2, strided=True, transposed=True),
                 max_examples=25)
