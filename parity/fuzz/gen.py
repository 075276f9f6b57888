"""Random kernel fragments for differential fuzzing, as a hypothesis strategy: `fragments(target)`.

A `Fragment` is a piece of kernel source (its names carry the placeholder `__F__`, so that many fragments
can share one kernel), its input arrays and scalar arguments, and its outputs, each with the way it is
compared. Each program of the grid (PROGRAMS of them) works on its own slice of every array, so values
differ between programs and minitriton's grouped engine must split on data-dependent branches.

What is generated: expression trees over + - * / // % & | ^ << >>, comparisons, where, maximum/minimum,
abs/neg/~, exp/log/sqrt, casts between dtypes, (N,) and (M, N) blocks with row/column broadcasting, masked
loads with `other`, sum/max reductions, small dots, a runtime-bounded `for` loop and an `if` on a scalar.

What is never generated (undefined behaviour, or a known interpreter divergence): integer division or
modulo by 0 (and INT_MIN // -1); float -> int casts of NaN or out-of-range values (clamped first); shifts by
the width or more (amounts masked); bf16, TF32 dots and float kernel arguments on the interpreter target.
Integer overflow is generated freely: it wraps on every side. Nor float `%` of two constant expressions
unless both are literal blocks (`tl.full(...)`): Triton's compiler folds `%` of constants with IEEE fmod
(a zero remainder keeps the sign of x) where the run-time lowering gives +0.0, and minitriton folds only
operands written as constants (Python numbers, `tl.full`, `tl.zeros`), not casts or arithmetic of them.

Determinism: a value is compared exactly when both sides must produce the same bits. On the GPU that rules
out, inside a tree, the approximate exp/log/sqrt and fp32 `/`, sums and dots whose partial sums may round
(order unspecified), and an add whose operand is a product that may round (FMA contraction). Float leaves
are drawn on small grids (k * 2**e), and every float node carries `grid` = (lsb, msb): its value is a
multiple of 2**lsb with |v| <= 2**msb, so the generator knows when a product or a sum is exact. Where a
result is not exact it becomes an output's *root*: its operands are stored too (compared exactly) and the
result is compared within a bound computed from them (see parity/fuzz/run.py).
"""
from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st

PROGRAMS = 2
P = "__F__"

INTS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64, "uint8": 8, "uint32": 32}
FLOATS = {"fp16": (11, -24, 15), "bf16": (8, -133, 127), "fp32": (24, -149, 127), "fp64": (53, -1074, 1023)}
TL = {"int1": "tl.int1", "int8": "tl.int8", "int16": "tl.int16", "int32": "tl.int32", "int64": "tl.int64",
      "uint8": "tl.uint8", "uint32": "tl.uint32", "fp16": "tl.float16", "bf16": "tl.bfloat16",
      "fp32": "tl.float32", "fp64": "tl.float64"}
NP = {"int1": np.int8, "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64, "uint8": np.uint8,
      "uint32": np.uint32, "fp16": np.float16, "bf16": np.uint16, "fp32": np.float32, "fp64": np.float64}


@functools.lru_cache(maxsize=None)
def _ints(lo, hi):
    return st.integers(lo, hi)


def is_float(d):
    return d in FLOATS


def is_int(d):
    return d in INTS


def signed(d):
    return d.startswith("int")


def promote(a, b, div=False):
    """Triton's computation type for two tensors (semantic.computation_type_impl), ints and floats."""
    if "fp64" in (a, b):
        return "fp64"
    if div and (is_float(a) or is_float(b)):
        return "fp32"
    if "fp32" in (a, b):
        return "fp32"
    if "fp16" in (a, b):
        return "fp16"
    if a == b == "bf16":
        return "bf16"
    if "bf16" in (a, b):
        return "fp32"
    ra, rb = INTS.get(a, 1), INTS.get(b, 1)
    if signed(a) == signed(b):
        return a if ra > rb else b
    if not signed(a):
        return a if ra >= rb else b
    return b if rb >= ra else a


def widen_bf16(d):
    """Triton 3.6's tl.maximum/minimum compute bf16 in fp32 and keep the fp32 result."""
    return "fp32" if d == "bf16" else d


def literal_type(code: str) -> str:
    """The type Triton 3.6's to_tensor gives a literal written as `code` (int32 ... or fp32/fp64)."""
    code = code.strip("() ")
    value = float(code) if any(c in code for c in ".einf") else int(code)
    if isinstance(value, int):
        return "int32" if -2**31 <= value < 2**31 else ("uint32" if value < 2**32 else "int64")
    mag = abs(value)
    return "fp32" if mag == 0 or mag != mag or mag == float("inf") or 2**-126 <= mag <= 3.4028234663852886e38 \
        else "fp64"


def constant_expression(code: str) -> bool:
    """Whether source `code` reads nothing at run time (no load, argument, program id or loop index)."""
    return P not in code and "pid" not in code


def literal_block(code: str) -> bool:
    return re.fullmatch(r"tl\.full\(\([0-9, ]*\), -?[0-9.e+-]+, tl\.\w+\)", code) is not None


def folded_by_compiler(a: str, b: str) -> bool:
    """`a % b` (floats) that Triton's compiler folds while minitriton computes it at run time: both operands
    constant expressions, not both written as literal blocks (see the module docstring)."""
    return constant_expression(a) and constant_expression(b) and not (literal_block(a) and literal_block(b))


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


def _block_offsets(shape):
    if len(shape) == 1:
        return f"tl.arange(0, {shape[0]})"
    m, n = shape
    return f"tl.arange(0, {m})[:, None] * {n} + tl.arange(0, {n})[None, :]"


def _size(shape):
    return int(np.prod(shape)) if shape else 1


def _shape_code(shape):
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def _float_limits(src, lo, hi):
    """Clamping bounds for a float -> int cast: the values nearest to lo and hi (toward zero) that float
    type `src` holds exactly (exact integer arithmetic: float(2**63 - 1) would round up to 2**63), and fp32 too:
    the bounds are written as literals, which Triton 3.6 makes fp32 tensors even next to fp64 (semantics S15.5;
    4294967295.0 would clamp to 2**32, out of uint32's range)."""
    bits = min(FLOATS[src][0], FLOATS["fp32"][0])
    cap = 65504 if src == "fp16" else None

    def fit(v):
        sign, a = (-1 if v < 0 else 1), abs(int(v))
        if cap is not None:
            a = min(a, cap)
        q = 1 << max(0, a.bit_length() - bits)
        return float(sign * (a // q) * q)
    return fit(lo), fit(hi)


class Builder:
    """Draws one fragment; `draw` is hypothesis's."""

    def __init__(self, draw, target):
        self.draw, self.target, self.gpu = draw, target, target == "cuda"
        self.lines, self.inputs, self.scalars, self.outputs = [], [], [], []
        self.count = 0
        self.pools: dict = {}       # shape -> list of leaf Nodes
        self.indent = 0
        self.loop_var = None
        self.no_int_division = False  # while drawing a dot's operands on the GPU (see dot_root)
        floats = ["fp16", "fp32", "fp64"] + (["bf16"] if self.gpu else [])
        self.dtypes = list(INTS) + floats
        self.rng = np.random.default_rng(draw(_ints(0, 2**32 - 1)))

    # ------------------------------------------------------------------ helpers
    def fresh(self, base):
        self.count += 1
        return f"{P}{base}{self.count}"

    def emit(self, text):
        self.lines.append((self.indent, text))

    def choice(self, options):
        return options[self.draw(_ints(0, len(options) - 1))]

    def flag(self, p=0.5):
        return self.draw(_ints(0, 99)) < p * 100

    def integer(self, lo, hi):
        return self.draw(_ints(lo, hi))

    # ------------------------------------------------------------------ inputs
    def values(self, dtype, shape):
        """Random input values of `dtype` and their grid (floats) from a drawn profile."""
        n = _size(shape) * PROGRAMS
        r = self.rng
        if is_int(dtype):
            info = np.iinfo(NP[dtype])
            prof = self.choice(["small", "full", "edges"])
            wide = np.uint64 if dtype == "uint32" else np.int64
            if prof == "small":
                v = r.integers(max(info.min, -9), 10, n).astype(wide)
            else:
                v = r.integers(info.min, info.max, n, dtype=wide, endpoint=True)
                if prof == "edges":
                    edges = np.array([info.min, info.max, 0, 1, max(info.min, -1), info.max - 1], wide)
                    pick = r.random(n) < 0.5
                    v = np.where(pick, edges[r.integers(0, len(edges), n)], v)
            return v.astype(NP[dtype]).reshape((PROGRAMS,) + shape), None
        p = FLOATS[dtype][0]
        prof = self.choice(["grid", "grid", "wide", "special"])
        if prof == "wide":
            v = r.standard_normal(n) * 10.0 ** r.integers(-3, 4, n)
            grid = None
        else:
            bits = self.integer(1, min(6, p - 1))
            e_lo = self.integer(-6, 2)
            e_hi = e_lo + self.integer(0, 4)
            v = r.integers(-(2**bits) + 1, 2**bits, n) * np.exp2(r.integers(e_lo, e_hi + 1, n)).astype(np.float64)
            grid = (e_lo, bits + e_hi)
            if prof == "special":
                sp = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0])
                pick = r.random(n) < 0.25
                v = np.where(pick, sp[r.integers(0, len(sp), n)], v)
        if dtype == "bf16":
            f = np.asarray(v, np.float32)
            bits_ = (f.view(np.uint32) >> 16).astype(np.uint16)   # exact for grid values; wide: truncated
            return bits_.reshape((PROGRAMS,) + shape), grid
        return np.asarray(v).astype(NP[dtype]).reshape((PROGRAMS,) + shape), grid

    def load(self, dtype, shape, view=None):
        """A loaded block (masked with `other` sometimes) of `shape`; view: '[None, :]' / '[:, None]'."""
        name = self.fresh("in")
        arr, grid = self.values(dtype, shape)
        self.inputs.append((name, arr, dtype))
        var = self.fresh("x")
        offs = f"pid * {_size(shape)} + {_block_offsets(shape)}"
        if self.flag(0.3):
            limit = self.integer(1, _size(shape))
            if is_float(dtype):
                other = self.choice(["0.0", "-1.5", "2.0", '-float("inf")', 'float("nan")'])
                if grid is not None and other[0] in "-02" and "inf" not in other:
                    grid = (min(grid[0], -1), max(grid[1], 2))
                elif "inf" in other or "nan" in other:
                    pass
            else:
                other = str(self.integer(0, 100))
            self.emit(f"{var} = tl.load({name} + {offs}, mask={_block_offsets(shape)} < {limit}, other={other})")
        else:
            self.emit(f"{var} = tl.load({name} + {offs})")
        return Node(var + (view or ""), dtype, shape if view is None else
                    ((1, shape[0]) if view == "[None, :]" else (shape[0], 1)), grid)

    # ------------------------------------------------------------------ expressions
    def leaf(self, shape):
        pool = self.pools.get(shape, [])
        kinds = ["pool"] * 4 + ["literal", "scalar"] + (["loopvar"] if self.loop_var else [])
        kind = self.choice(kinds) if pool else self.choice(["literal", "scalar"])
        if kind == "pool":
            return self.choice(pool)
        if kind == "loopvar":
            if self.gpu:                          # compiled Triton: the loop index is an int32 tensor
                return Node(self.loop_var, "int32", ())
            # the interpreter's loop index is a Python int (a weak scalar without .to()): make it a tensor
            return Node(f"({self.loop_var} + tl.zeros((1,), tl.int32))", "int32", (1,))
        if kind == "scalar":
            which = self.choice(["pid", "arg", "arg"] + (["farg"] if self.gpu else []))
            if which == "pid":
                return Node("pid", "int32", ())
            name = self.fresh("s")
            if which == "farg":
                value = float(self.choice([0.5, -1.25, 3.0, 2.0**-3]))
                self.scalars.append((name, value))
                return Node(name, "fp32", (), (-3, 2))
            # never 1: compiled Triton turns an int argument equal to 1 into a constexpr (probe
            # int_arg_equal_to_1_is_constexpr), which has no .to() and promotes as a weak scalar
            self.scalars.append((name, int(self.choice([0, 2, 3, 5, -1, -7, 100, 2**31 - 1]))))
            return Node(name, "int32", ())
        dtype = self.choice(self.dtypes)
        shape = shape or (1,)
        if is_int(dtype):
            v = self.integer(0 if not signed(dtype) else -100, 100)
            return Node(f"tl.full({_shape_code(shape)}, {v}, {TL[dtype]})", dtype, shape)
        v = self.choice([0.5, -1.5, 3.0, 0.25, -2.0, 0.0])
        return Node(f"tl.full({_shape_code(shape)}, {v!r}, {TL[dtype]})", dtype, shape, (-2, 2))

    def weak(self, other):
        """A Python literal operand (a weak scalar: it takes `other`'s type unless it is a float and other an int)."""
        if is_float(other.dtype) or self.flag(0.3):
            v = self.choice([0.5, -1.5, 3.0, 0.25, 2.0])
            t = other.dtype if is_float(other.dtype) else promote("fp32", other.dtype)
            return Node(repr(v), t, (), (-2, 2)), t
        v = self.integer(-100 if signed(other.dtype) else 0, 100)
        return Node(f"({v})" if v < 0 else str(v), other.dtype, ()), other.dtype

    def cast(self, node, dtype):
        """`node.to(dtype)`, clamping floats into the integer range first (no UB)."""
        if node.dtype == dtype:
            return node
        code = node.code
        if node.dtype == "int1":
            code = f"({code}).to(tl.int8)"
            node = Node(code, "int8", node.shape)
        if is_float(node.dtype) and is_int(dtype):
            info = np.iinfo(NP[dtype])
            lo, hi = _float_limits(node.dtype, int(info.min), int(info.max))
            code = f"tl.minimum(tl.maximum({node.code}, {lo!r}), {hi!r})"
        grid = None
        if is_float(dtype):
            if is_int(node.dtype):
                grid = (0, INTS[node.dtype])
            elif node.grid is not None and node.grid[0] >= FLOATS[dtype][1] and node.grid[1] <= FLOATS[dtype][2]:
                grid = node.grid
        hazard = node.hazard and is_float(dtype) and FLOATS[dtype][0] >= FLOATS.get(node.dtype, (99,))[0]
        return Node(f"({code}).to({TL[dtype]})", dtype, node.shape, grid, hazard)

    def exact_enough(self, grid, dtype):
        p, emin, emax = FLOATS[dtype]
        return grid is not None and grid[1] - grid[0] <= p and grid[0] >= emin and grid[1] <= emax

    def binary(self, op, a, b):
        if op in ("//", "%i") and self.no_int_division:
            return None
        shape = np.broadcast_shapes(a.shape, b.shape)
        if op in ("&", "|", "^", "<<", ">>", "//", "%i"):
            if not is_int(a.dtype):
                a = self.cast(a, self.choice(list(INTS)))
            if not is_int(b.dtype):
                b = self.cast(b, self.choice(list(INTS)))
        if op in ("//", "%i", "/") and is_int(a.dtype) and is_int(b.dtype) and signed(a.dtype) != signed(b.dtype):
            b = self.cast(b, a.dtype)
        if op in ("//", "%i"):
            guard = "0" if not signed(b.dtype) else "0) | ({0} == -1"
            b = Node(f"tl.where(({b.code} == {guard.format(b.code)}), 3, {b.code})", b.dtype, b.shape)
            t = promote(a.dtype, b.dtype)
            return Node(f"({a.code} {op[:2].strip('i')} {b.code})", t, shape)
        t = promote(a.dtype, b.dtype, div=op in ("/", "%f"))
        if op == "/":                             # true division: ints become fp32 first (semantic.truediv)
            t = "fp64" if "fp64" in (a.dtype, b.dtype) else "fp32"
        if op in ("<<", ">>"):
            if op == ">>" and not self.gpu and signed(a.dtype) and not signed(t):
                # signed >> unsigned is an arithmetic shift typed unsigned; the interpreter keeps signed
                # NumPy data under the unsigned type (probe signed_shift_right_by_unsigned)
                a = self.cast(a, t)
            width = INTS[t]
            return Node(f"({a.code} {op} ({b.code} & {width - 1}))", t, shape)
        if op in ("&", "|", "^"):
            return Node(f"({a.code} {op} {b.code})", t, shape)
        if op == "/":
            if t == "fp32" and self.gpu:
                return None                       # approximate on the GPU: only as a root
            if not self.gpu:                      # x / ±0 = ±inf would expose the interpreter's zero signs
                b = Node(f"tl.where({b.code} == 0, 3, {b.code})", b.dtype, b.shape)
            return Node(f"({a.code} / {b.code})", t, shape)
        if op == "%f":
            return Node(f"({a.code} % {b.code})", t, shape)
        ga = a.grid if is_float(a.dtype) else ((0, INTS[a.dtype]) if is_int(a.dtype) else None)
        gb = b.grid if is_float(b.dtype) else ((0, INTS[b.dtype]) if is_int(b.dtype) else None)
        if op in ("+", "-"):
            if is_float(t) and self.gpu and (a.hazard or b.hazard):
                op = "max"                        # an FMA could fuse this add: not reproducible
            else:
                grid = (min(ga[0], gb[0]), max(ga[1], gb[1]) + 1) if ga and gb and is_float(t) else None
                return Node(f"({a.code} {op} {b.code})", t, shape, grid)
        if op == "*":
            grid = (ga[0] + gb[0], ga[1] + gb[1]) if ga and gb and is_float(t) else None
            exact = is_float(t) and self.exact_enough(grid, t)
            return Node(f"({a.code} * {b.code})", t, shape, grid, hazard=is_float(t) and not exact)
        t = promote(widen_bf16(a.dtype), widen_bf16(b.dtype))
        grid = (min(ga[0], gb[0]), max(ga[1], gb[1])) if ga and gb and is_float(t) else None
        fn = {"max": "tl.maximum", "min": "tl.minimum"}[op]
        return Node(f"{fn}({a.code}, {b.code})", t, shape, grid)

    def cond(self, depth, shape):
        a, b = self.expr(depth, shape), self.expr(depth, shape)
        if is_int(a.dtype) and is_int(b.dtype) and signed(a.dtype) != signed(b.dtype):
            b = self.cast(b, a.dtype)
        op = self.choice(["<", "<=", "==", "!=", ">", ">="])
        c = Node(f"({a.code} {op} {b.code})", "int1", np.broadcast_shapes(a.shape, b.shape))
        if depth > 0 and self.flag(0.2):
            d = self.cond(depth - 1, shape)
            c = Node(f"({c.code} {self.choice(['&', '|', '^'])} {d.code})", "int1",
                     np.broadcast_shapes(c.shape, d.shape))
        return c

    def expr(self, depth, shape):
        """A deterministic expression broadcastable to `shape`."""
        if depth <= 0 or self.flag(0.25):
            return self.leaf(shape)
        kind = self.choice(["bin"] * 6 + ["where", "unary", "cast", "reduce"])
        if kind == "bin":
            # float % is NVPTX's fma(-trunc(x / y), y, x) on the GPU but C fmod in the interpreter
            op = self.choice(["+", "-", "*", "max", "min", "&", "|", "^", "<<", ">>", "//", "%i", "/"]
                             + (["%f"] if self.gpu else []))
            a, b = self.expr(depth - 1, shape), self.expr(depth - 1, shape)
            if op == "%f" and not (is_float(a.dtype) or is_float(b.dtype)):
                op = "%i"
            if op == "%f" and folded_by_compiler(a.code, b.code):
                op = "max"
            if op in ("+", "-", "*", "max", "min", "/", "%f") and "int1" in (a.dtype, b.dtype):
                a, b = (self.cast(x, "int8") if x.dtype == "int1" else x for x in (a, b))
            node = self.binary(op, a, b)
            return node if node is not None else self.binary("max", a, b)
        if kind == "where":
            c = self.cond(depth - 1, shape)
            a, b = self.expr(depth - 1, shape), self.expr(depth - 1, shape)
            t = promote(a.dtype, b.dtype)
            shp = np.broadcast_shapes(c.shape, a.shape, b.shape)
            grid = (min(a.grid[0], b.grid[0]), max(a.grid[1], b.grid[1])) if a.grid and b.grid and is_float(t) else None
            return Node(f"tl.where({c.code}, {a.code}, {b.code})", t, shp, grid)
        if kind == "unary":
            a = self.expr(depth - 1, shape)
            ops = ["neg", "abs"] + (["not"] if is_int(a.dtype) else []) + \
                  (["exp", "log", "sqrt"] if not self.gpu and a.dtype in ("fp32", "fp64") else [])
            op = self.choice(ops)
            if op == "neg" and (not signed(a.dtype) and not is_float(a.dtype)):
                op = "not"
            if op == "abs" and is_int(a.dtype) and not signed(a.dtype):
                op = "not"
            if op == "neg":
                return Node(f"(-{a.code})", a.dtype, a.shape, a.grid, a.hazard)
            if op == "abs":
                return Node(f"tl.abs({a.code})", a.dtype, a.shape, a.grid)
            if op == "not":
                return Node(f"(~{a.code})", a.dtype, a.shape)
            return Node(f"tl.{op}({a.code})", a.dtype, a.shape)
        if kind == "cast":
            a = self.expr(depth - 1, shape)
            return self.cast(a, self.choice(self.dtypes))
        # reductions along an axis (kept as a broadcastable dim); float sums only when exact
        a = self.expr(depth - 1, shape)
        if len(shape) == 0 or len(a.shape) < len(shape):
            return a
        axis = self.integer(0, len(shape) - 1)
        n = a.shape[axis]
        shape = tuple(a.shape)
        if a.dtype == "int1":
            a = self.cast(a, "int8")
        fn = self.choice(["max", "min", "sum"])
        if fn == "sum" and is_float(a.dtype):
            grid = (a.grid[0], a.grid[1] + math.ceil(math.log2(n))) if a.grid else None
            # (the interpreter's NumPy sums start from +0.0: a sum of -0.0s is +0.0 there, -0.0 on the GPU)
            if not self.exact_enough(grid, a.dtype) or a.dtype in ("fp16", "bf16") or not self.gpu:
                fn = "max"
            else:
                return Node(f"tl.sum({a.code}, axis={axis}, keep_dims=True).to({TL[a.dtype]})", a.dtype,
                            shape[:axis] + (1,) + shape[axis + 1:], grid)
        code = f"tl.{fn}({a.code}, axis={axis}, keep_dims=True).to({TL[a.dtype]})"
        return Node(code, a.dtype, shape[:axis] + (1,) + shape[axis + 1:], a.grid if fn != "sum" else None)

    def weak_binary(self, op, a):
        """`a op literal` for + - * & | ^ and maximum/minimum."""
        if op in ("&", "|", "^") and not is_int(a.dtype):
            a = self.cast(a, self.choice(list(INTS)))
        lit, t = self.weak(a) if op not in ("&", "|", "^") else (None, a.dtype)
        if lit is None:
            v = self.integer(0, 100)
            lit = Node(str(v), a.dtype, ())
        ga = a.grid if is_float(a.dtype) else ((0, INTS[a.dtype]) if is_int(a.dtype) else None)
        gb = lit.grid if lit.grid else (0, 7)
        grid = None
        if is_float(t) and ga:
            grid = {"+": (min(ga[0], gb[0]), max(ga[1], gb[1]) + 1), "-": (min(ga[0], gb[0]), max(ga[1], gb[1]) + 1),
                    "*": (ga[0] + gb[0], ga[1] + gb[1])}.get(op, (min(ga[0], gb[0]), max(ga[1], gb[1])))
        if op in ("max", "min"):   # 3.6: the literal is a typed tensor, bf16 is widened to fp32
            t = promote(widen_bf16(a.dtype), literal_type(lit.code))
            grid = grid if is_float(t) else None
            return Node(f"tl.{'maximum' if op == 'max' else 'minimum'}({a.code}, {lit.code})", t, a.shape, grid)
        if op in ("+", "-") and is_float(t) and self.gpu and a.hazard:
            return Node(f"tl.maximum({a.code}, {lit.code})", t, a.shape, None)
        hazard = op == "*" and is_float(t) and not self.exact_enough(grid, t)
        return Node(f"({a.code} {op} {lit.code})", t, a.shape, grid, hazard)

    # ------------------------------------------------------------------ statements
    def var(self, node, shape=None):
        """Bind a node to a fresh variable (broadcast to `shape`, default the fragment's)."""
        shape = shape or self.shape
        name = self.fresh("v")
        code = node.code if tuple(node.shape) == tuple(shape) else f"tl.broadcast_to({node.code}, {_shape_code(shape)})"
        self.emit(f"{name} = {code}")
        return Node(name, node.dtype, shape, node.grid, node.hazard)

    def if_stmt(self, depth):
        S = self.shape
        kind = self.choice(["arg", "pid", "data"])
        if kind == "arg":
            name = self.fresh("s")
            self.scalars.append((name, self.choice([-2, -1, 0, 2, 3, 4])))
            cond = f"{name} > {self.integer(0, 2)}"
        elif kind == "pid":
            cond = self.choice(["pid == 1", "pid > 0", "pid < 1"])
        else:
            x = self.choice(self.pools[S])
            if is_int(x.dtype):
                cond = f"tl.sum({x.code}) > {self.integer(-3 if signed(x.dtype) else 0, 3)}"
            else:
                cond = f"tl.max({x.code}) > {self.choice([0.0, 0.5, -1.0])}"
        a, b = self.expr(depth, S), self.expr(depth, S)
        b = self.cast(b, a.dtype)
        v = self.fresh("v")
        self.emit(f"if {cond}:")
        self.indent += 1
        self.emit(f"{v} = tl.broadcast_to({a.code}, {_shape_code(S)})")
        self.indent -= 1
        self.emit("else:")
        self.indent += 1
        self.emit(f"{v} = tl.broadcast_to({b.code}, {_shape_code(S)})")
        self.indent -= 1
        grid = (min(a.grid[0], b.grid[0]), max(a.grid[1], b.grid[1])) if a.grid and b.grid else None
        self.pools[S].append(Node(v, a.dtype, S, grid if is_float(a.dtype) else None))

    def loop_stmt(self, depth):
        S = self.shape
        t = self.choice([d for d in self.dtypes])
        init = self.cast(self.expr(depth, S), t)
        acc = self.var(init)
        n = self.fresh("n")
        self.scalars.append((n, self.choice([0, 2, 3])))
        i = self.fresh("i")
        self.emit(f"for {i} in range(0, {n} + pid):")
        self.indent += 1
        self.loop_var = i
        body = self.cast(self.expr(depth, S), t)
        self.loop_var = None
        ops = ["+", "-", "max", "min"] + (["^", "|", "&", "*"] if is_int(t) else [])
        op = self.choice(ops)
        if op in ("+", "-") and is_float(t) and self.gpu and body.hazard:
            op = "max"
        if op in ("max", "min"):   # bf16 max/min give fp32 in 3.6: cast back, a loop-carried type is fixed
            back = ".to(tl.bfloat16)" if t == "bf16" else ""
            self.emit(f"{acc.code} = tl.{'maximum' if op == 'max' else 'minimum'}({acc.code}, {body.code}){back}")
        else:
            self.emit(f"{acc.code} = {acc.code} {op} {body.code}")
        self.indent -= 1
        grid = None
        if is_float(t) and acc.grid and body.grid:
            grid = (min(acc.grid[0], body.grid[0]), max(acc.grid[1], body.grid[1]) + (3 if op in "+-" else 0))
        self.pools[S].append(Node(acc.code, t, S, grid))

    # ------------------------------------------------------------------ outputs
    def store(self, node, kind="exact", operands=(), info=None, shape=None):
        shape = shape or self.shape
        if node.dtype == "int1":
            node = self.cast(node, "int8")
        name = self.fresh("out")
        code = node.code if tuple(node.shape) == tuple(shape) else f"tl.broadcast_to({node.code}, {_shape_code(shape)})"
        self.emit(f"tl.store({name} + pid * {_size(shape)} + {_block_offsets(shape)}, {code})")
        self.outputs.append(Output(name, node.dtype, shape, kind, tuple(operands), dict(info or {})))
        return name

    def as_float(self, node, wide_ok=True):
        if node.dtype in ("fp32", "fp64") and (wide_ok or node.dtype == "fp32"):
            return node
        return self.cast(node, "fp32")

    def root(self, depth):
        """An output whose last operation may differ in its last bits: operands stored, result bounded."""
        S = self.shape
        kinds = ["sum"] + (["exp", "log", "sqrt", "div", "fma"] if self.gpu else [])
        kind = self.choice(kinds)
        if kind == "sum":
            a = self.var(self.expr(depth, S))
            if a.dtype == "int1" or not is_float(a.dtype):
                a = self.var(self.cast(a, self.choice(["fp32", "fp16", "fp64"])))
            axis = self.integer(0, len(S) - 1)
            grid = (a.grid[0], a.grid[1] + math.ceil(math.log2(S[axis]))) if a.grid else None
            if a.dtype in ("fp16", "bf16") and (grid is None or grid[1] >= FLOATS[a.dtype][2]):
                a = self.var(self.cast(a, "fp32"))    # the sum could overflow, in an order-dependent way
                grid = (a.grid[0], a.grid[1] + math.ceil(math.log2(S[axis]))) if a.grid else None
            o = self.store(a)
            r = Node(f"tl.sum({a.code}, axis={axis}, keep_dims=True)", a.dtype, S[:axis] + (1,) + S[axis + 1:])
            exact = self.exact_enough(grid, a.dtype) and self.gpu     # see expr(): -0.0 sums in the interpreter
            self.store(r, "exact" if exact else "sum", (o,), {"axis": axis})
            return
        if kind == "fma":
            a, b, c = (self.var(self.as_float(self.expr(depth, S), wide_ok=True)) for _ in range(3))
            outs = [self.store(x) for x in (a, b, c)]
            prod = self.binary("*", a, b)
            t = promote(prod.dtype, c.dtype)
            self.store(Node(f"({a.code} * {b.code} + {c.code})", t, S), "fma" if prod.hazard else "exact",
                       outs if prod.hazard else ())
            return
        if kind == "div":
            a, b = (self.var(self.as_float(self.expr(depth, S), wide_ok=False)) for _ in range(2))
            outs = [self.store(a), self.store(b)]
            self.store(Node(f"({a.code} / {b.code})", "fp32", S), "div", outs)
            return
        u = self.as_float(self.expr(depth, S))
        if kind == "exp":
            lim = 80.0 if u.dtype == "fp32" else 700.0
            u = self.var(Node(f"tl.minimum(tl.maximum({u.code}, {-lim!r}), {lim!r})", u.dtype, u.shape, u.grid))
        elif u.grid is None or u.grid[0] < -100:
            u = self.var(Node(f"tl.where(tl.abs({u.code}) < 1e-30, 0.0, {u.code})", u.dtype, u.shape))
        else:
            u = self.var(u)
        o = self.store(u)
        self.store(Node(f"tl.{kind}({u.code})", u.dtype, S), kind, (o,))

    def dot_root(self, depth):
        M, N = self.shape
        # fp64 dots only off the GPU: Triton 3.6 on the H200 fails in ConvertTritonGPUToLLVM ("PassManager::run
        # failed": MMAv2.cpp asserts "Currently fp64 don't support largeK MMA") when an fp64 operand is cast
        # from an 8-bit type, a code-generation limit rather than a semantic rule (H200, 2026-11-29; fp64
        # operands loaded or cast from fp32 compile: probe dot_fp64)
        dt = self.choice(["fp16", "fp32", "int8"] + (["bf16"] if self.gpu else ["fp64"]))
        K = 32 if dt == "int8" else self.choice([16, 32])
        # on the GPU a dot's operands do not divide integers: the dot's own copy of an operand computed through
        # a divisor guard of an 8/16-bit value (int32-widened too) may take the guard's other arm on single
        # elements while the stored operand is right (semantics S15.29), which no stored lane shows, so no rule
        # could check it
        mats = []
        self.no_int_division = self.gpu
        for shape in ((M, K), (K, N)):
            self.pools[shape] = [self.load(self.choice(self.dtypes), shape) for _ in range(self.integer(1, 2))]
            mats.append(self.var(self.cast(self.expr(depth, shape), dt), shape))
        self.no_int_division = False
        outs = [self.store(m, shape=m.shape) for m in mats]
        opts = ""
        if dt == "fp32":
            opts = self.choice(["", ', input_precision="ieee"']) if self.gpu else ', input_precision="ieee"'
        out_t = {"int8": "int32", "fp64": "fp64"}.get(dt, "fp32")
        a, b = mats
        grid = None
        if a.grid and b.grid:
            grid = (a.grid[0] + b.grid[0], a.grid[1] + b.grid[1] + math.ceil(math.log2(K)))
        # an fp16 accumulator only where no partial sum can overflow: past 65504 the order of the k-steps
        # decides between +inf, -inf and NaN, which no bound can compare
        if dt == "fp16" and grid is not None and grid[1] < FLOATS["fp16"][2] and self.flag(0.3):
            opts, out_t = ", out_dtype=tl.float16", "fp16"
        # an fp16 result may be accumulated in fp16 across k-steps (tensor-core accumulators): exact only if
        # every partial sum fits fp16
        acc = {"fp16": "fp16", "fp64": "fp64"}.get(out_t, "fp32")
        exact = dt == "int8" or self.exact_enough(grid, acc)
        r = Node(f"tl.dot({a.code}, {b.code}{opts})", out_t, (M, N))
        self.store(r, "exact" if exact else "dot", outs, {"K": K, "acc": acc})


@st.composite
def fragments(draw, target):
    """One random fragment for `target` ("interpreter" or "cuda")."""
    b = Builder(draw, target)
    kind = b.choice(["1d", "2d", "2d", "dot"])
    if kind == "1d":
        S = (b.choice([4, 8, 16, 32]),)
    elif kind == "2d":
        S = (b.choice([2, 4, 8]), b.choice([4, 8, 16]))
    else:
        S = (16, b.choice([16, 32]))
    b.shape = S
    b.pools[S] = [b.load(b.choice(b.dtypes), S) for _ in range(b.integer(1, 3))]
    if len(S) == 2 and b.flag(0.4):
        b.pools[S].append(b.load(b.choice(b.dtypes), (S[1],), "[None, :]"))
    if len(S) == 2 and b.flag(0.3):
        b.pools[S].append(b.load(b.choice(b.dtypes), (S[0],), "[:, None]"))
    depth = b.integer(1, 3)
    if b.flag(0.3):
        b.if_stmt(depth)
    if b.flag(0.3):
        b.loop_stmt(depth)
    for _ in range(b.integer(1, 2)):
        if b.flag(0.35):
            b.root(depth)
        elif b.flag(0.2):
            a = b.expr(depth, S)
            b.store(b.weak_binary(b.choice(["+", "-", "*", "max", "min", "&", "|", "^"]), a))
        else:
            b.store(b.expr(depth, S))
    if kind == "dot":
        b.dot_root(depth)
    return Fragment(b.lines, b.inputs, b.scalars, b.outputs, S)
