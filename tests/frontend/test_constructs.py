"""Python constructs and names Triton 3.6's code generator refuses, refused here the same way before the kernel
runs (each outcome checked with an offline sm_90 compile of Triton 3.6.0; parity/compile_sweep.py)."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import minitriton
from helpers.kernels import make_kernel

HEADER = """
@triton.jit
def k(X, Z, n, C: tl.constexpr):
    x = tl.load(X + tl.arange(0, 16))
"""

REFUSED = [   # (body, error class, message)
    ("r = x\n    for i in range(n):\n        if i == 2:\n            break\n        r = r + 1",
     minitriton.errors.UnsupportedLanguageConstruct, "unsupported AST node type: Break"),
    ("r = x\n    for i in range(n):\n        continue", minitriton.errors.UnsupportedLanguageConstruct,
     "unsupported AST node type: Continue"),
    ("f = lambda v: v + 1\n    r = f(x)", minitriton.errors.UnsupportedLanguageConstruct,
     "unsupported AST node type: Lambda"),
    ("try:\n        r = x + 1\n    except Exception:\n        r = x", minitriton.errors.UnsupportedLanguageConstruct,
     "unsupported AST node type: Try"),
    ("d = {'a': 1}\n    r = x", minitriton.errors.UnsupportedLanguageConstruct, "unsupported AST node type: Dict"),
    ("r = (t := x + 1) + t", minitriton.errors.UnsupportedLanguageConstruct, "unsupported AST node type: NamedExpr"),
    ("t = x\n    del t\n    r = x", minitriton.errors.UnsupportedLanguageConstruct, "unsupported AST node type: Delete"),
    ("r = x\n    for i in range(n):\n        r = r + 1\n    else:\n        r = r + 2", minitriton.CompilationError,
     "AssertionError(\"Don't know what to do with else after for\")"),
    ("r = x\n    while n < 0:\n        r = r + 1\n    else:\n        r = r + 2", minitriton.CompilationError,
     "AssertionError('Not implemented')"),
    ("r = x\n    for v in (1, 2, 3):\n        r = r + v", minitriton.CompilationError,
     "AttributeError(\"'Tuple' object has no attribute 'func'\")"),
    ("r = x + (1 in (1, 2))", minitriton.CompilationError, "AttributeError(\"'In' object has no attribute '__name__'\")"),
    ("a = b = x\n    r = a + b", minitriton.CompilationError, "Simultaneous multiple assignment is not supported."),
    ("def g(v):\n        return v\n    r = g(x)", minitriton.errors.UnsupportedLanguageConstruct,
     "nested function definition is not supported."),
    ("r = x + sum([1, 2])", minitriton.CompilationError, "sum is not defined"),
    ("r = x + abs(n)", minitriton.CompilationError, "abs is not defined"),
    ("r = x\n    for i, v in enumerate(range(3)):\n        r = r + v", minitriton.CompilationError,
     "enumerate is not defined"),
    ("r = x + G", minitriton.CompilationError, "Cannot access global variable G from within @jit'ed function"),
    ("r = x + len(x)", minitriton.CompilationError, "object of type 'tensor' has no len()"),
    ("r = x + int(n)", minitriton.CompilationError, "int() argument must be a string, a bytes-like object or a real "
                                                    "number, not 'tensor'"),
    ("r = x + tl.program_id(tl.load(X) * 0)", minitriton.CompilationError, "program_id axis must be 0, 1, or 2"),
    ("r = x\n    for i in range(0, 2.5):\n        r = r + 1", minitriton.CompilationError,
     "For loop bounds and step must all be ints, are (int32, fp32, int32)"),
    ("r = x\n    for i in tl.static_range(n):\n        r = r + 1", minitriton.CompilationError,
     "int32[] used as tl.static_range start value is not a constexpr"),
]

ACCEPTED = [   # (body, Z after a launch with x = arange(16), n = 5, C = 3)
    ("r = x + GC", np.arange(16) + 2),                    # a constexpr global
    ("r = x.to(GD).to(tl.int32)", np.arange(16)),         # a dtype global
    ("r = x + len(x.shape) + int(C) + isinstance(n, int) + isinstance(C, int)", np.arange(16) + 5),
    ("r = x + min(n, 2) + max(C, 4)", np.arange(16) + 6),
    ("r = x\n    if C > 5:\n        for i in range(n):\n            break", np.arange(16)),   # folded away: unchecked
    ("assert x > 100, 'big'\n    r = x", np.arange(16)),   # a device_assert: silent without debug
    ("r = x\n    for i in tl.static_range(C):\n        r = r + i", np.arange(16) + 3),
]

GLOBALS = "G = 1\nGC = tl.constexpr(2)\nGD = tl.float32\n"


def _kernel(body):
    return make_kernel(GLOBALS + HEADER + f"    {body}\n    tl.store(Z + tl.arange(0, 16), r)\n")


@pytest.mark.parametrize("body, cls, message", REFUSED, ids=[b.split("\n")[-1].strip()[:30] for b, _, _ in REFUSED])
def test_refused_as_triton_refuses(body, cls, message):
    z = np.full(16, -1, np.int32)
    with pytest.raises(cls) as info:
        _kernel(body)[(1,)](np.arange(16, dtype=np.int32), z, 5, C=3)
    assert message in str(info.value), str(info.value)
    assert str(info.value).startswith("at "), str(info.value)
    assert (z == -1).all()


@pytest.mark.parametrize("body, want", ACCEPTED, ids=[b.split("\n")[0][:30] for b, _ in ACCEPTED])
def test_accepted_as_triton_accepts(body, want):
    z = np.full(16, -1, np.int32)
    _kernel(body)[(1,)](np.arange(16, dtype=np.int32), z, 5, C=3)
    np.testing.assert_array_equal(z, want)


def test_assert_statement_is_a_device_assert_in_debug_mode():
    k = make_kernel(HEADER.replace("@triton.jit", "@triton.jit(debug=True)")
                    + "    assert x < 10, 'x too big'\n    tl.store(Z + tl.arange(0, 16), x)\n")
    with pytest.raises(minitriton.DeviceAssertionError, match="Assertion `x too big` failed"):
        k[(1,)](np.arange(16, dtype=np.int32), np.zeros(16, np.int32), 5, C=3)


def test_a_global_rebound_between_launches_is_read_anew():
    """Globals are read live: a launch sees the module's value at its start, also for a name an earlier launch
    of the same kernel already read (and for a name that was not there then), through nested @jit calls too."""
    k = make_kernel("""
    @triton.jit
    def shift_again():
        return SHIFT

    @triton.jit
    def k(Z):
        tl.store(Z + tl.arange(0, 4), tl.arange(0, 4) + SHIFT + shift_again())
    """, name="k")
    scope = k.fn.__globals__
    z = np.zeros(4, np.int32)
    with pytest.raises(minitriton.CompilationError, match="SHIFT is not defined"):
        k[(1,)](z)
    for shift in (1, 5):
        scope["SHIFT"] = minitriton.language.constexpr(shift)
        k[(2,)](z)
        np.testing.assert_array_equal(z, np.arange(4) + 2 * shift)
    del scope["SHIFT"]


def test_non_constexpr_globals_allowed_by_the_environment_variable():
    code = textwrap.dedent("""
        import os, numpy as np, minitriton
        minitriton.install()
        import triton, triton.language as tl
        G = 7
        @triton.jit
        def k(Z):
            tl.store(Z, G)
        z = np.zeros(1, np.int32)
        k[(1,)](z)
        print(z[0])
    """)
    env = {"TRITON_ALLOW_NON_CONSTEXPR_GLOBALS": "1", "PATH": ""}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**__import__("os").environ, **env})
    assert done.stdout.strip() == "7", done.stderr
