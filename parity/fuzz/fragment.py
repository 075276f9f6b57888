"""What a fuzz fragment is: its source lines, inputs, scalars and outputs, and the block shapes it uses."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


PROGRAMS = 2
P = "__F__"


@dataclass
class Node:
    code: str
    dtype: str
    shape: tuple
    grid: tuple | None = None      # floats: (lsb, msb) when known
    hazard: bool = False           # a float product that may round (an add of it could become an FMA)


@dataclass
class Output:
    name: str
    dtype: str
    shape: tuple
    kind: str = "exact"            # exact, or a root kind: exp log sqrt div sum dot fma
    operands: tuple = ()           # names of the outputs holding the root's operands
    info: dict = field(default_factory=dict)


@dataclass
class Fragment:
    lines: list                    # (indent, text) with the __F__ placeholder
    inputs: list                   # (name, array (PROGRAMS, *shape) or BF16 bits, dtype)
    scalars: list                  # (name, value)
    outputs: list                  # Output
    shape: tuple = ()              # the fragment's block shape S (rows and columns of S are loaded as views)

    def key(self) -> str:
        import hashlib
        h = hashlib.sha1("\n".join(f"{i}{t}" for i, t in self.lines).encode())
        for _, a, _ in self.inputs:
            h.update(np.ascontiguousarray(a).tobytes())
        h.update(repr(self.scalars).encode())
        return h.hexdigest()[:16]


def block_offsets(shape):
    if len(shape) == 1:
        return f"tl.arange(0, {shape[0]})"
    m, n = shape
    return f"tl.arange(0, {m})[:, None] * {n} + tl.arange(0, {n})[None, :]"


def block_size(shape):
    return int(np.prod(shape)) if shape else 1


def shape_code(shape):
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


