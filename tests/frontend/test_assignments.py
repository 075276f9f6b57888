"""`x = <number>` makes a tensor (docs/semantics.md S5.7): Triton's code generator and its interpreter pass every
assigned value through `to_tensor`, unless the target is annotated `tl.constexpr`."""
from __future__ import annotations

import numpy as np
import pytest

import minitriton
from helpers.kernels import make_kernel


def run(body: str, out_dtype=np.int32):
    k = make_kernel(f"""
    @triton.jit
    def k(X, Z, S: tl.constexpr):
        x = tl.load(X + tl.arange(0, 4))
        {body}
        tl.store(Z + tl.arange(0, 4), z)
    """)
    z = np.zeros(4, out_dtype)
    k[(1,)](np.array([100, 100, 100, 100], np.uint8), z, S=200)
    return z


def test_a_number_assigned_has_a_dtype():
    """test_core's test_store_constant: `value = 1; tl.full(..., dtype=value.dtype)`."""
    assert run("value = 1\n        z = tl.full([4], value=value, dtype=value.dtype)").tolist() == [1] * 4


def test_an_assigned_number_promotes_like_a_tensor():
    """uint8 + (y = S) is int32 (the interpreter: 300), uint8 + S as a literal stays uint8 and wraps (44)."""
    assert run("y = S\n        z = x + y").tolist() == [300] * 4
    assert run("z = x + S").tolist() == [44] * 4


def test_a_constexpr_annotation_keeps_the_number():
    assert run("y: tl.constexpr = S\n        z = x + y").tolist() == [44] * 4


def test_augmented_assignment_of_numbers_makes_a_tensor():
    assert run("acc = 0\n        acc += 7\n        z = tl.full([4], acc, acc.dtype)").tolist() == [7] * 4


@pytest.mark.parametrize("body", ["v = 1.5\n        z = tl.full([4], 1, tl.int32) + (v.dtype == tl.float32)",
                                  "v = True\n        z = tl.full([4], 1, tl.int32) + (v.dtype == tl.int1)"])
def test_float_and_bool_literals_take_their_literal_types(body):
    assert run(body).tolist() == [2] * 4


def test_a_kernel_without_source_still_runs():
    """Kernels exec'd from strings (test_core's patch_kernel) cannot be rewritten; they run as written."""
    scope = {"triton": minitriton, "tl": minitriton.language}
    exec("@triton.jit\ndef k(Z):\n    value = 3\n    tl.store(Z + tl.arange(0, 4), tl.full([4], value, tl.int32))\n",
         scope)
    z = np.zeros(4, np.int32)
    scope["k"][(1,)](z)
    assert z.tolist() == [3] * 4
