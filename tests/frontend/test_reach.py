"""The frontend reads what a launch reaches: the launched kernel and the @jit functions it calls, not the rest of
its module. As Triton, which compiles a callee when its code generator visits the call (a call in an `if` on a
constexpr that folds away is never visited): Triton 3.9's offline sm_90 compile of a kernel whose module holds
a dict in a function it never calls, and a `try` in a helper called only under `if USE:`, succeeds with USE=False
and fails at the helper with USE=True (2026-12-08)."""
from __future__ import annotations

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.errors import UnsupportedLanguageConstruct


@triton.jit
def never_called(x_ptr):
    d = {}                     # Triton refuses a dict; nothing here calls this function
    tl.store(x_ptr, d)


@triton.jit
def refused_helper(x):
    try:                       # refused when compiled
        y = x + 1
    except Exception:
        y = x
    return y


@triton.jit
def plain_helper(x):
    return x * 2


@triton.jit
def kernel(x_ptr, USE: tl.constexpr):
    x = tl.load(x_ptr)
    if USE:
        x = refused_helper(x)
    tl.store(x_ptr, plain_helper(x) + 1)


def test_a_launch_reads_only_the_functions_it_reaches():
    x = np.ones(1, np.float32)
    kernel[(1,)](x, USE=False)
    assert x[0] == 3.0
    assert kernel._checked and plain_helper._checked and plain_helper._kernel_fn is not None
    # neither the function nothing calls nor the helper under the folded `if` was checked or rewritten
    for fn in (never_called, refused_helper):
        assert not fn._checked and fn._kernel_fn is None


def test_a_refused_helper_fails_the_launch_that_reaches_it():
    x = np.ones(1, np.float32)
    with pytest.raises(UnsupportedLanguageConstruct, match="unsupported AST node type: Try") as info:
        kernel[(1,)](x, USE=True)
    assert "refused_helper" in str(info.value)
    assert x[0] == 1.0          # refused before anything ran
    x[0] = 1.0
    kernel[(1,)](x, USE=False)  # the other specialization still runs
    assert x[0] == 3.0
