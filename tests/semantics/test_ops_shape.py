"""Block creation and shape ops against NumPy: arange/full/zeros/zeros_like, x[:, None]/x[None, :],
reshape/view/ravel/trans/permute/expand_dims/broadcast_to/broadcast/join/split/cat, with Triton's errors.

Shape ops move values without changing them, so every dtype is checked bit-exactly (bf16 included).
"""
from __future__ import annotations

import numpy as np
import pytest

import minitriton
from helpers.kernels import make_kernel
from helpers.binary import assert_same
from helpers.dtypes import ALL_TYPES, BF16, empty_buffer, from_buffer, short, tl_type, to_buffer
from helpers.reference import operand_values


def grid_values(t, shape, seed=0):
    n = int(np.prod(shape))
    vals = (operand_values(t, seed, 32) * ((n + 31) // 32))[:n]
    return np.array(vals, dtype=object).reshape(shape)


def offsets_src(shape, name):
    """Source text for the row-major offsets of a block of `shape` (1-D to 3-D)."""
    if len(shape) == 1:
        return f"tl.arange(0, {shape[0]})"
    if len(shape) == 2:
        return f"tl.arange(0, {shape[0]})[:, None] * {shape[1]} + tl.arange(0, {shape[1]})[None, :]"
    a, b, c = shape
    return (f"tl.arange(0, {a})[:, None, None] * {b * c} + tl.arange(0, {b})[None, :, None] * {c}"
            f" + tl.arange(0, {c})[None, None, :]")


def run_shape_op(expr, in_shape, out_shape, t, seed=0):
    """Load a block of `in_shape`, apply `expr` (of x), store a block of `out_shape`; return (input, output)."""
    src = f"""
    @triton.jit
    def shape_kernel(X, Z):
        x = tl.load(X + {offsets_src(in_shape, 'x')})
        z = {expr}
        tl.static_assert(z.shape == {tuple(out_shape)!r}, "result shape")
        tl.store(Z + {offsets_src(out_shape, 'z')}, z)
    """
    xv = grid_values(t, in_shape, seed)
    z = empty_buffer(out_shape, t)
    make_kernel(src)[(1,)](to_buffer(xv, t), z)
    return xv, from_buffer(z, t)


SHAPE_CASES = [  # (expr, input shape, output shape, NumPy reference on the input array)
    ("x[:, None]", (8,), (8, 1), lambda a: a[:, None]),
    ("x[None, :]", (8,), (1, 8), lambda a: a[None, :]),
    ("x[:, None, :]", (4, 8), (4, 1, 8), lambda a: a[:, None, :]),
    ("tl.reshape(x, (4, 8))", (32,), (4, 8), lambda a: a.reshape(4, 8)),
    ("tl.reshape(x, 2, 4, 4)", (4, 8), (2, 4, 4), lambda a: a.reshape(2, 4, 4)),
    ("x.reshape((8, 4))", (4, 8), (8, 4), lambda a: a.reshape(8, 4)),
    ("tl.view(x, (8, 4))", (32,), (8, 4), lambda a: a.reshape(8, 4)),
    ("tl.ravel(x)", (4, 8), (32,), lambda a: a.reshape(-1)),
    ("tl.trans(x)", (4, 8), (8, 4), lambda a: a.T),
    ("x.T", (4, 8), (8, 4), lambda a: a.T),
    ("tl.trans(x, (1, 0))", (4, 8), (8, 4), lambda a: a.T),
    ("tl.trans(x, 2, 0, 1)", (2, 4, 8), (8, 2, 4), lambda a: np.transpose(a, (2, 0, 1))),
    ("tl.trans(x)", (2, 4, 8), (2, 8, 4), lambda a: np.transpose(a, (0, 2, 1))),  # batched: the last two axes
    ("tl.permute(x, (1, 2, 0))", (2, 4, 8), (4, 8, 2), lambda a: np.transpose(a, (1, 2, 0))),
    ("tl.permute(x, 0, 2, 1)", (2, 4, 8), (2, 8, 4), lambda a: np.transpose(a, (0, 2, 1))),
    ("tl.expand_dims(x, 0)", (8,), (1, 8), lambda a: a[None]),
    ("tl.expand_dims(x, -1)", (8,), (8, 1), lambda a: a[:, None]),
    ("tl.expand_dims(x, (0, 2))", (8,), (1, 8, 1), lambda a: a[None, :, None]),
    ("tl.broadcast_to(x[None, :], (4, 8))", (8,), (4, 8), lambda a: np.broadcast_to(a[None, :], (4, 8))),
    ("tl.broadcast_to(x, 4, 8)", (1, 8), (4, 8), lambda a: np.broadcast_to(a, (4, 8))),
    ("x.broadcast_to((2, 4, 8))", (2, 1, 8), (2, 4, 8), lambda a: np.broadcast_to(a, (2, 4, 8))),
]


@pytest.mark.parametrize("t", ALL_TYPES)
@pytest.mark.parametrize("expr, in_shape, out_shape, ref", SHAPE_CASES, ids=[c[0] for c in SHAPE_CASES])
def test_shape_ops(expr, in_shape, out_shape, ref, t):
    xv, got = run_shape_op(expr, in_shape, out_shape, t)
    want = ref(xv)
    assert_same(got, want, t, f"`{expr}` on a {list(in_shape)} {t} block")


@pytest.mark.parametrize("t", ["int8", "uint16", "float16", "bfloat16", "float32", "int64"])
def test_join_split_broadcast_cat(t):
    k = make_kernel("""
    @triton.jit
    def join_split(A, B, J, S0, S1, BA, BB, C):
        r = tl.arange(0, 8)
        a = tl.load(A + r)
        b = tl.load(B + r)
        j = tl.join(a, b)                                   # (8, 2): a[i], b[i]
        tl.store(J + r[:, None] * 2 + tl.arange(0, 2)[None, :], j)
        s0, s1 = tl.split(j)
        tl.store(S0 + r, s0)
        tl.store(S1 + r, s1)
        ba, bb = tl.broadcast(a[:, None], b[None, :])       # both (8, 8)
        tl.store(BA + r[:, None] * 8 + r[None, :], ba)
        tl.store(BB + r[:, None] * 8 + r[None, :], bb)
        tl.store(C + tl.arange(0, 16), tl.cat(a, b, can_reorder=True))
    """)
    a, b = grid_values(t, (8,), 1), grid_values(t, (8,), 2)
    outs = dict(J=empty_buffer((8, 2), t), S0=empty_buffer(8, t), S1=empty_buffer(8, t),
                BA=empty_buffer((8, 8), t), BB=empty_buffer((8, 8), t), C=empty_buffer(16, t))
    k[(1,)](to_buffer(a, t), to_buffer(b, t), *outs.values())
    got = {name: from_buffer(buf, t) for name, buf in outs.items()}
    assert_same(got["J"], np.stack([a, b], axis=-1), t, f"tl.join with {t}")
    assert_same(got["S0"], a, t, f"tl.split(tl.join(a, b))[0] with {t}")
    assert_same(got["S1"], b, t, f"tl.split(tl.join(a, b))[1] with {t}")
    assert_same(got["BA"], np.broadcast_to(a[:, None], (8, 8)), t, f"tl.broadcast first operand, {t}")
    assert_same(got["BB"], np.broadcast_to(b[None, :], (8, 8)), t, f"tl.broadcast second operand, {t}")
    # can_reorder=True lets the compiler permute the result: only the multiset of elements is specified
    key = (lambda v: repr(float(v))) if t in ("float16", "bfloat16", "float32") else int
    assert sorted(map(key, got["C"])) == sorted(map(key, list(a) + list(b))), f"tl.cat(a, b, can_reorder=True), {t}"


def test_join_scalars_and_split_3d():
    k = make_kernel("""
    @triton.jit
    def join_scalars(Z, W):
        j = tl.join(tl.full((), 3, tl.int32), tl.full((), 5, tl.int32))
        tl.store(Z + tl.arange(0, 2), j)
        r = tl.arange(0, 4)
        x = tl.reshape(tl.arange(0, 16), (2, 4, 2))
        lo, hi = tl.split(x)
        tl.store(W + tl.arange(0, 2)[:, None] * 4 + r[None, :], hi - lo)
    """)
    z, w = np.zeros(2, np.int32), np.zeros((2, 4), np.int32)
    k[(1,)](z, w)
    assert z.tolist() == [3, 5], f"tl.join of two scalars: {z}"
    assert (w == 1).all(), f"tl.split of a (2, 4, 2) block: {w}"


@pytest.mark.parametrize("t", ALL_TYPES)
def test_full_zeros_zeros_like(t):
    value = {"int1": True, "float16": 2.5, "bfloat16": -1.5, "float32": 0.1, "float64": 1e300,
             "uint64": 2**63 + 7, "int64": -2**40}.get(t, 7)
    k = make_kernel("""
    @triton.jit
    def fills(F, Z, ZL, X, V: tl.constexpr, DT: tl.constexpr):
        r = tl.arange(0, 4)
        f = tl.full((4, 8), V, DT)
        z = tl.zeros([4, 8], dtype=DT)
        zl = tl.zeros_like(tl.load(X + r))
        tl.static_assert(f.dtype == DT and z.dtype == DT and zl.dtype == DT, "fill dtypes")
        o = r[:, None] * 8 + tl.arange(0, 8)[None, :]
        tl.store(F + o, f)
        tl.store(Z + o, z)
        tl.store(ZL + r, zl + 0 * zl)
    """)
    f, z, zl = empty_buffer((4, 8), t), empty_buffer((4, 8), t), empty_buffer(4, t)
    if t == "bfloat16":
        z, zl = BF16(np.full((4, 8), 0x3F80, np.uint16)), BF16(np.full(4, 0x3F80, np.uint16))
    else:
        z[...] = 1
        zl[...] = 1
    k[(1,)](f, z, zl, to_buffer([1, 1, 1, 1], t), V=value, DT=tl_type(t))
    want_fill = float(value) if t in ("float16", "bfloat16", "float32", "float64") else value
    if t == "float32":
        want_fill = float(np.float32(value))
    got_f = from_buffer(f, t)
    assert all((bool(v) == bool(want_fill)) if t == "int1" else v == want_fill for v in got_f.reshape(-1)), \
        f"tl.full((4, 8), {value!r}, {short(t)}): {got_f}"
    assert not any(from_buffer(z, t).reshape(-1)), f"tl.zeros of {t}"
    assert not any(from_buffer(zl, t).reshape(-1)), f"tl.zeros_like of {t}"


def test_full_with_scalar_tensor_value_and_arange():
    k = make_kernel("""
    @triton.jit
    def fills2(A, B, C, n):
        tl.store(A + tl.arange(0, 8), tl.full([8], n * 2, tl.int16))
        tl.store(B + tl.arange(0, 4), tl.arange(3, 7))
        r = tl.arange(0, 4)
        tl.static_assert(r.dtype == tl.int32, "arange is int32")
        tl.store(C + r, tl.arange(0, 4) - 2)
    """)
    a, b, c = np.zeros(8, np.int16), np.zeros(4, np.int32), np.zeros(4, np.int32)
    k[(1,)](a, b, c, 21)
    assert a.tolist() == [42] * 8 and b.tolist() == [3, 4, 5, 6] and c.tolist() == [-2, -1, 0, 1], (a, b, c)


@pytest.mark.parametrize("expr, pattern", [
    ("tl.arange(0, 10)", "arange's range must be a power of 2"),
    ("tl.arange(4, 4)", "arange's end argument must be greater than the start argument"),
    ("tl.arange(0, n)", "arange's arguments must be of type tl.constexpr"),
    ("tl.arange(0, 2**32)", "arange must fit in int32"),
    ("tl.arange(-2, 2)", "arange must fit in int32"),  # semantic.arange tests `start >> 32`: negatives fail
    ("tl.zeros((3, 4), tl.float32)", "Shape element 0 must be a power of 2"),
    ("tl.full((4, 6), 1, tl.int32)", "Shape element 1 must be a power of 2"),
    ("tl.reshape(tl.arange(0, 8), (4, 4))", "reshape\\(\\) cannot change total number of elements in tensor"),
    ("tl.reshape(tl.arange(0, 8), (8, 3))", "Shape element 1 must be a power of 2"),
    # 3.6's semantic.reshape reads input.type.numel, which a scalar's type lacks (offline sm_90 compile)
    ("tl.reshape(tl.sum(tl.arange(0, 8), 0), (1,))", "'dtype' object has no attribute 'numel'"),
    ("tl.arange(0, 8)[:, None] + tl.arange(0, 4)[None, :] + tl.arange(0, 2)[:, None]",
     "Cannot make_shape_compatible: incompatible dimensions at index 0: 8 and 2"),
    ("tl.arange(0, 8) + tl.arange(0, 4)", "Cannot make_shape_compatible: incompatible dimensions at index 0: 8 and 4"),
    ("tl.broadcast_to(tl.arange(0, 4), (2, 4))", "Cannot broadcast, rank mismatch: \\[4\\], \\[2, 4\\]"),
    ("tl.broadcast_to(tl.arange(0, 4)[None, :], (2, 8))",
     "Cannot broadcast, the expanded size of the tensor \\(8\\) must match the existing size \\(4\\) at "
     "non-singleton dimension 1"),
    ("tl.permute(tl.reshape(tl.arange(0, 8), (2, 4)), (1, 1))",
     "permute dims must be a permutation of 0, 1, ..., n-1"),
    ("tl.permute(tl.reshape(tl.arange(0, 8), (2, 4)), (1, 0, 2))",
     "permute dims must have the same length as input shape, got 2 and 3"),
    ("tl.split(tl.reshape(tl.arange(0, 8), (2, 4)))", "expected last dimension to be 2 for split, got 4"),
    ("tl.trans(tl.arange(0, 8))", "tl.trans invoked with a 0- or 1-dimensional tensor"),
    ("tl.expand_dims(tl.arange(0, 8), 2)", "invalid axis 2. Expected -2 <= axis < 2"),
    ("tl.expand_dims(tl.arange(0, 8), (0, 0))", "expand_dims received duplicate axes"),
])
def test_shape_errors(expr, pattern):
    """Triton's wording (S14), raised as CompilationError at the kernel line."""
    k = make_kernel(f"""
    @triton.jit
    def bad_shape(Z, n):
        z = {expr}
        tl.store(Z + tl.arange(0, 2), 0)
    """)
    with pytest.raises(minitriton.CompilationError, match=pattern) as info:
        k[(1,)](np.zeros(2, np.int32), 8)
    assert "at 2:" in str(info.value), f"the error should point at the kernel line: {info.value}"


def test_shape_compares_equal_to_a_list():
    """S5.8: `tl.static_assert(x.shape == [N])` holds (Triton's shape is a tl.tuple of constexprs); scalars too."""
    k = make_kernel("""
    @triton.jit
    def k(Z, N: tl.constexpr):
        x = tl.arange(0, N)
        tl.static_assert(x.shape == [N])
        tl.static_assert(x[None, :].shape == [1, tl.constexpr(N)])
        tl.static_assert(x.shape != [N, 1])
        s = tl.sum(x)
        tl.static_assert(s.shape == [])
        tl.static_assert(s.shape == ())
        tl.store(Z + x, x)
    """)
    z = np.zeros(8, np.int32)
    k[(1,)](z, N=8)
    assert z.tolist() == list(range(8))


def test_the_shape_of_a_2d_pointer_block_and_mask_compares_equal_to_a_list():
    """S5.8 for the blocks kept in parts (`rows[:, None] * n + cols[None, :]`, `(r < M) & (c < N)`): their shape
    is a shape like any other's."""
    k = make_kernel("""
    @triton.jit
    def k(Z, R: tl.constexpr, C: tl.constexpr):
        rows = tl.arange(0, R)
        cols = tl.arange(0, C)
        p = Z + rows[:, None] * C + cols[None, :]
        m = (rows[:, None] < R) & (cols[None, :] < C - 1)
        tl.static_assert(p.shape == [R, C])
        tl.static_assert(m.shape == [tl.constexpr(R), C])
        tl.static_assert(p.shape != [C, R])
        tl.store(p, 1, mask=m)
    """)
    z = np.zeros((2, 4), np.int32)
    k[(1,)](z, R=2, C=4)
    assert z.tolist() == [[1, 1, 1, 0], [1, 1, 1, 0]]


def test_a_full_slice_past_the_last_axis_is_ignored():
    """S5.9: Triton's __getitem__ passes over a `:` beyond the axes: `scalar[None, None, :]` is [1, 1]."""
    k = make_kernel("""
    @triton.jit
    def k(Z):
        s = tl.full([], 5, tl.int32)
        t = s[None, None, :]
        tl.static_assert(t.shape == [1, 1])
        tl.store(Z + tl.arange(0, 1)[:, None], t)
    """)
    z = np.zeros(1, np.int32)
    k[(1,)](z)
    assert z.tolist() == [5]
