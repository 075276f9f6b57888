"""`triton.reinterpret(tensor, dtype)`: kernels see the tensor's memory as another type of the same width (how
Triton's tests pass unsigned and fp8 data); `tl.dtype(name)` and `tl.str_to_ty` name the types as Triton does."""
from __future__ import annotations

import numpy as np
import pytest

import minitriton
import minitriton.language as tl
from helpers.kernels import make_kernel

COPY = """
@triton.jit
def k(X, Y, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(Y + o, tl.load(X + o))
"""


def test_signed_memory_read_as_unsigned():
    torch = pytest.importorskip("torch")
    x = torch.tensor([-1, -2, 3, 4], dtype=torch.int32)
    y = torch.zeros(4, dtype=torch.int64)
    make_kernel(COPY)[(1,)](minitriton.reinterpret(x, tl.uint32), y, N=4)
    assert y.tolist() == [2**32 - 1, 2**32 - 2, 3, 4]   # zero-extended: the values are unsigned


def test_writes_reach_the_wrapped_memory():
    x = np.array([1.5, 2.5], np.float32)
    y = np.zeros(2, np.int32)
    make_kernel(COPY)[(1,)](x, minitriton.reinterpret(y, tl.float32), N=2)
    assert y.view(np.float32).tolist() == [1.5, 2.5]


def test_reinterpret_round_trip_and_width_check():
    x = np.zeros(4, np.int16)
    wrapped = minitriton.reinterpret(x, tl.float16)
    assert minitriton.reinterpret(wrapped, tl.uint16).base is x
    with pytest.raises(TypeError, match="cannot reinterpret"):
        make_kernel(COPY)[(1,)](minitriton.reinterpret(x, tl.float32), np.zeros(4, np.float32), N=4)


def test_dtype_names_as_triton_spells_them():
    assert tl.dtype("fp16") is tl.float16 and tl.dtype("int1") is tl.int1
    assert tl.dtype.STANDARD_FP_TYPES == ["fp16", "bf16", "fp32", "fp64"]
    assert [tl.dtype(n) for n in tl.dtype.FP_TYPES][:5] == [tl.float8e4b15, tl.float8e4nv, tl.float8e4b8,
                                                            tl.float8e5, tl.float8e5b16]
    assert (tl.float8e4nv.exponent_bias, tl.float8e5.fp_mantissa_width, tl.bfloat16.exponent_bias) == (7, 2, 127)
    assert tl.str_to_ty("u1") is tl.int1 and tl.str_to_ty("fp8e5") is tl.float8e5
    assert tl.str_to_ty("*fp32") == tl.pointer_type(tl.float32) and tl.pi32_t == tl.pointer_type(tl.int32)
    with pytest.raises(AssertionError):
        tl.dtype("fp128")
