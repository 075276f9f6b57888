"""Counter-based random numbers: `tl.randint`, `tl.randint4x`, `tl.rand`, `tl.rand4x`, `tl.randn`, `tl.randn4x`,
`tl.philox`, `tl.philox_impl`, `tl.uint_to_uniform_float`, `tl.pair_uniform_to_normal`.

Triton generates them with Philox (Salmon, Moraes, Dror and Shaw, "Parallel Random Numbers: As Easy as 1, 2, 3",
SC 2011): a random block is a pure function of a seed (the key) and an offset per element (the counter), so
any program regenerates the same numbers from the same (seed, offsets). Triton writes it as `@jit` functions in
triton/language/random.py; this module computes the same values with the same type rules:

* `randint4x(seed, offset)`: the counter is (offset as uint32, offset >> 32 for 64-bit offsets else 0, 0, 0),
  the key (seed & 0xffffffff, seed >> 32) after `seed.to(uint64)`; ten Philox-4x32 rounds; four uint32 blocks.
  `randint` is the first of them.
* `rand`: a uint32 viewed as int32, negatives replaced by their complement (~x), times 4.6566127342e-10 in
  fp32 (the largest scale that keeps every value below 1.0): uniform in [0, 1).
* `randn`: Box-Muller on the first two uniforms (the first is clamped to >= 1e-7): sqrt(-2 log u1) cos(2 pi u2),
  in fp32 with the same `tl.log`, `tl.sqrt`, `tl.cos` as any kernel.
* 64-bit counters given to `tl.philox` use Philox-4x64 (64-bit multipliers and key increments, key (seed, 0)).
"""
from __future__ import annotations

import numpy as np

from minitriton import errors
from minitriton.semantics import dtypes as T
from minitriton.semantics import math as ops_math
from minitriton.semantics import integers
from minitriton.semantics.casts import cast
from minitriton.semantics.constexpr import to_tensor, unwrap
from minitriton.semantics.elementwise import and_, invert, less, maximum, mul, shr, where
from minitriton.semantics.shape import broadcast_shapes, expand
from minitriton.values.tensor import tensor
from minitriton.values.registry import builtin

N_ROUNDS_DEFAULT = 10

# (multiplier of c0, multiplier of c2, key increment of k0, of k1) for 32- and 64-bit counters
_PHILOX = {
    32: (0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85),
    64: (0xD2E7470EE14C6C93, 0xCA5A826395121157, 0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B),
}
_UNIFORM_SCALE = {32: 4.6566127342e-10, 64: 1.0842020432385337e-19}  # ((2**23 - 1) / 2**23) * 2**(bits - 1)


def _rounds(n_rounds) -> int:
    n = unwrap(n_rounds)
    if isinstance(n, tensor) or not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise errors.python_error(TypeError, errors.diagnostic("philox_rounds", given=repr(n_rounds)))
    return int(n)


@builtin
def philox_impl(c0, c1, c2, c3, k0, k1, n_rounds=N_ROUNDS_DEFAULT):
    """`n_rounds` Philox rounds of the counter (c0, c1, c2, c3) under the key (k0, k1): four blocks of c0's
    type (uint32: Philox-4x32, uint64: Philox-4x64), shaped like all six broadcast together."""
    n = _rounds(n_rounds)
    c0 = to_tensor(c0)
    if c0.dtype is T.uint32:
        bits = 32
    elif c0.dtype is T.uint64:
        bits = 64
    else:
        raise errors.python_error(errors.StaticAssertionFailed, errors.diagnostic("philox_dtype", dtype=c0.dtype))
    words = [c0] + [to_tensor(v) for v in (c1, c2, c3, k0, k1)]
    for w in words[1:]:
        if not w.dtype.is_int() or w.dtype.primitive_bitwidth != bits:
            raise errors.python_error(TypeError, errors.diagnostic(
                "philox_words", bits=bits, first=c0.dtype, dtype=w.dtype))
    shape = words[0].shape
    for w in words[1:]:
        shape = broadcast_shapes(shape, w.shape)
    utype = np.dtype(f"u{bits // 8}")
    arrays = [np.asarray(expand(w.data, w.shape, len(shape))).view(utype) for w in words]
    out = _philox_rounds(*arrays, n=n, bits=bits)
    g = max(a.shape[0] for a in out)
    return tuple(tensor(np.broadcast_to(a, (g,) + shape).copy(), c0.dtype, shape) for a in out)


def _philox_rounds(c0, c1, c2, c3, k0, k1, n: int, bits: int):
    """The rounds on unsigned NumPy arrays (wrapping arithmetic), NumPy-broadcast against each other."""
    mul_a, mul_b, step_a, step_b = (np.array(v, f"u{bits // 8}") for v in _PHILOX[bits])
    with np.errstate(over="ignore"):
        for _ in range(n):
            hi_b, lo_b = _mulhilo(mul_b, c2, bits)
            hi_a, lo_a = _mulhilo(mul_a, c0, bits)
            c0, c1, c2, c3 = hi_b ^ c1 ^ k0, lo_b, hi_a ^ c3 ^ k1, lo_a
            k0 = k0 + step_a
            k1 = k1 + step_b
    return c0, c1, c2, c3


def _mulhilo(a, b, bits: int):
    """High and low halves of the full product of unsigned `a` and `b`."""
    if bits == 32:
        wide = a.astype(np.uint64) * b.astype(np.uint64)
        return (wide >> np.uint64(32)).astype(np.uint32), wide.astype(np.uint32)
    return integers.umulhi(a, np.asarray(b)), a * b


@builtin
def philox(seed, c0, c1, c2, c3, n_rounds=N_ROUNDS_DEFAULT):
    """`tl.philox(seed, c0, c1, c2, c3)`: the counters' bits under a key made from `seed` (an integer): 32-bit
    counters take the key (low, high) 32 bits of `seed.to(uint64)`, 64-bit ones the key (seed, 0)."""
    seed = to_tensor(seed)
    if not seed.dtype.is_int():  # Triton: tl.static_assert(seed.dtype.is_int()), without a message
        raise errors.python_error(errors.StaticAssertionFailed, errors.diagnostic("philox_seed", dtype=seed.dtype))
    seed = cast(seed, T.uint64)
    counters = [to_tensor(c) for c in (c0, c1, c2, c3)]
    width = counters[0].dtype.primitive_bitwidth
    if width == 32:
        word = T.uint32
        k1 = cast(and_(shr(seed, 32), 0xFFFFFFFF), word)
        k0 = cast(and_(seed, 0xFFFFFFFF), word)
    elif width == 64:
        word = T.uint64
        k0 = seed
        k1 = tensor(np.zeros((1, 1), np.uint64), word, (1,))  # a (1,) block, as Triton's tl.full((1,), 0)
    else:
        raise errors.python_error(errors.StaticAssertionFailed, errors.diagnostic("philox_width", bits=width))
    counters = [cast(c, word, bitcast=True) for c in counters]
    return philox_impl(*counters, k0, k1, n_rounds)


@builtin
def randint4x(seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    """`tl.randint4x(seed, offset)`: four blocks of random uint32 for each offset (Triton's most efficient
    entry point: `randint` returns the first, `rand4x`/`randn4x` convert all four)."""
    offset = unwrap(offset)
    if not isinstance(offset, tensor):
        raise errors.python_error(AttributeError, errors.diagnostic("random_offsets", type=type(offset).__name__))
    low = cast(offset, T.uint32)
    zero = mul(low, 0)
    high = cast(shr(offset, 32), T.uint32) if offset.dtype.primitive_bitwidth > 32 else zero
    return philox(seed, low, high, zero, zero, n_rounds)


@builtin
def randint(seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    """`tl.randint(seed, offset)`: a block of random uint32, one per offset."""
    return randint4x(seed, offset, n_rounds)[0]


@builtin
def uint_to_uniform_float(x):
    """`tl.uint_to_uniform_float(x)`: 32- or 64-bit random integers as fp32 uniform in [0, 1)."""
    x = to_tensor(x)
    if x.dtype in (T.uint32, T.int32):
        bits = 32
    elif x.dtype in (T.uint64, T.int64):
        bits = 64
    else:  # Triton: a tl.static_assert without a message
        raise errors.python_error(errors.StaticAssertionFailed, errors.diagnostic("uniform_width", dtype=x.dtype))
    x = cast(x, T.int32 if bits == 32 else T.int64, bitcast=True)
    x = where(less(x, 0), invert(x), x)
    return mul(x, _UNIFORM_SCALE[bits])


@builtin
def rand(seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    """`tl.rand(seed, offset)`: a block of fp32 uniform in [0, 1), one per offset."""
    return uint_to_uniform_float(randint(seed, offset, n_rounds))


@builtin
def rand4x(seed, offsets, n_rounds=N_ROUNDS_DEFAULT):
    """`tl.rand4x(seed, offsets)`: four blocks of fp32 uniform in [0, 1)."""
    return tuple(uint_to_uniform_float(i) for i in randint4x(seed, offsets, n_rounds))


@builtin
def pair_uniform_to_normal(u1, u2):
    """`tl.pair_uniform_to_normal(u1, u2)`: the Box-Muller transform of two uniform blocks into two normal ones."""
    u1 = maximum(1.0e-7, u1)
    theta = mul(6.283185307179586, u2)
    radius = ops_math.sqrt(mul(-2.0, ops_math.log(u1)))
    return mul(radius, ops_math.cos(theta)), mul(radius, ops_math.sin(theta))


@builtin
def randn(seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    """`tl.randn(seed, offset)`: a block of fp32 drawn from N(0, 1), one per offset."""
    i1, i2, _, _ = randint4x(seed, offset, n_rounds)
    return pair_uniform_to_normal(uint_to_uniform_float(i1), uint_to_uniform_float(i2))[0]


@builtin
def randn4x(seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    """`tl.randn4x(seed, offset)`: four blocks of fp32 drawn from N(0, 1)."""
    u1, u2, u3, u4 = rand4x(seed, offset, n_rounds)
    return pair_uniform_to_normal(u1, u2) + pair_uniform_to_normal(u3, u4)
