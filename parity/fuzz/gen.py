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

import math

from hypothesis import strategies as st

from parity.fuzz.dtypes import FLOATS, is_float, is_int, promote, signed
from parity.fuzz.expressions import Expressions
from parity.fuzz.fragment import Fragment, Node, Output, block_offsets, block_size, shape_code


class Builder(Expressions):
    """Draws one fragment; `draw` is hypothesis's."""

    def var(self, node, shape=None):
        """Bind a node to a fresh variable (broadcast to `shape`, default the fragment's)."""
        shape = shape or self.shape
        name = self.fresh("v")
        code = node.code if tuple(node.shape) == tuple(shape) else f"tl.broadcast_to({node.code}, {shape_code(shape)})"
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
        self.emit(f"{v} = tl.broadcast_to({a.code}, {shape_code(S)})")
        self.indent -= 1
        self.emit("else:")
        self.indent += 1
        self.emit(f"{v} = tl.broadcast_to({b.code}, {shape_code(S)})")
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
        code = node.code if tuple(node.shape) == tuple(shape) else f"tl.broadcast_to({node.code}, {shape_code(shape)})"
        self.emit(f"tl.store({name} + pid * {block_size(shape)} + {block_offsets(shape)}, {code})")
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
