"""What the rules share: probe kernels, narrow float rounding, the calls of a name, the lanes a rule may explain."""
from __future__ import annotations

import ast

import numpy as np

from parity.fuzz.explain import HEADER
from parity.fuzz.source import dotted
from parity.fuzz.types import TL
from parity.oracle import BF16

TL_OF = {d: name for name, d in TL.items()}
INT_MIN = {"int8": -2 ** 7, "int16": -2 ** 15, "int32": -2 ** 31, "int64": -2 ** 63}


def probe_kernel(signature, body) -> str:
    return HEADER + f"@triton.jit\ndef probe({signature}):\n" + "".join(f"    {ln}\n" for ln in body)


def to_narrow_float(dtype, v):
    if dtype == "bf16":
        return BF16.round(np.asarray(v, np.float64).astype(np.float32)).to_float().astype(np.float64)
    with np.errstate(over="ignore"):
        return np.asarray(v, np.float64).astype(np.float16).astype(np.float64)


def calls(typed, name):
    return [n for n in typed.nodes() if isinstance(n, ast.Call) and dotted(n.func) == name]


# ---- lanes a rule may explain

REDUCTIONS = {"tl.max", "tl.min", "tl.sum", "tl.argmax", "tl.argmin", "tl.xor_sum", "tl.cumsum", "tl.cumprod",
              "tl.reduce", "tl.associative_scan"}


def reduced(typed, node) -> bool:
    """Whether `node`'s value reaches the output through a reduction or scan."""
    p = typed.parents.get(id(node))
    while p is not None:
        if isinstance(p, ast.Call) and dotted(p.func) in REDUCTIONS:
            return True
        p = typed.parents.get(id(p))
    return False


def reached(view, operands):
    """A lane filter: lanes where some (operation, operand node, test) triple's operand, as the source computes
    it, passes the test (a value it equals, or a function of the values giving a mask), or, for an operation
    that a reduction consumes, every lane of a program where that operand passes it anywhere."""
    def lanes(name, shape):
        at = np.zeros(shape, bool)
        for op, node, test in operands:
            v = view.evaluate(node, name)
            if v is None:
                continue
            hit = test(v) if callable(test) else v == test
            at |= hit.reshape(hit.shape[0], -1).any(axis=1).reshape((-1,) + (1,) * (hit.ndim - 1)) \
                if reduced(view.typed, op) else hit
        return at
    return lanes


# ---- where the probes' GPU evidence was recorded, and source text they share

LINEAR = "offs = tl.arange(0, 1024)"
H200 = "H200, Triton 3.6.0, torch 2.11, 2026-12-01"
H200_2 = "H200, Triton 3.6.0, torch 2.11, 2026-12-02 (fuzz seeds 462229468 and 1827498631)"
H200_3 = "H200, Triton 3.6.0, torch 2.11, 2026-12-02 (fuzz seed 1549857666)"
H200_4 = "H200, Triton 3.6.0, torch 2.11, 2026-12-02 (fuzz seed 308746962)"
H200_5 = "H200, Triton 3.6.0, torch 2.11, 2026-12-02, fuzz seed"
TILE = "tl.arange(0, 16)[:, None] * 32 + tl.arange(0, 32)[None, :]"
