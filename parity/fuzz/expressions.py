"""Drawing a fragment's inputs and expression trees (the statements and outputs are drawn in `gen.py`)."""
from __future__ import annotations

import functools
import math

import numpy as np
from hypothesis import strategies as st

from parity.fuzz.dtypes import FLOATS, INTS, NP, TL, float_limits, folded_by_compiler, is_float, is_int, literal_type, promote, \
    signed, widen_bf16
from parity.fuzz.fragment import P, PROGRAMS, Node, block_offsets, block_size, shape_code


@functools.lru_cache(maxsize=None)
def _ints(lo, hi):
    return st.integers(lo, hi)



class Expressions:
    """Draws one fragment's inputs and expressions; `draw` is hypothesis's. `gen.Builder` adds statements."""

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
        n = block_size(shape) * PROGRAMS
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
        offs = f"pid * {block_size(shape)} + {block_offsets(shape)}"
        if self.flag(0.3):
            limit = self.integer(1, block_size(shape))
            if is_float(dtype):
                other = self.choice(["0.0", "-1.5", "2.0", '-float("inf")', 'float("nan")'])
                if grid is not None and other[0] in "-02" and "inf" not in other:
                    grid = (min(grid[0], -1), max(grid[1], 2))
                elif "inf" in other or "nan" in other:
                    pass
            else:
                other = str(self.integer(0, 100))
            self.emit(f"{var} = tl.load({name} + {offs}, mask={block_offsets(shape)} < {limit}, other={other})")
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
            return Node(f"tl.full({shape_code(shape)}, {v}, {TL[dtype]})", dtype, shape)
        v = self.choice([0.5, -1.5, 3.0, 0.25, -2.0, 0.0])
        return Node(f"tl.full({shape_code(shape)}, {v!r}, {TL[dtype]})", dtype, shape, (-2, 2))

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
            lo, hi = float_limits(node.dtype, int(info.min), int(info.max))
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
