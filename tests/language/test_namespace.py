"""`triton.language` as the op table builds it: Triton's public names, the outside-a-kernel guard, and the
methods and operators of `tl.tensor`, each op registered once."""
from __future__ import annotations

import numpy as np
import pytest

import minitriton
import minitriton.language as tl
from minitriton import errors
from minitriton.values import registry

# Every public name of `tl` (frozen from the hand-written module the op table replaced): a name may be
# added deliberately (here and in the module), never lost.
TL_NAMES = [
    "PropagateNan", "TRITON_MAX_TENSOR_NUMEL", "abs", "advance", "arange", "argmax", "argmin", "associative_scan",
    "assume", "atomic_add", "atomic_and", "atomic_cas", "atomic_max", "atomic_min", "atomic_or", "atomic_poll",
    "atomic_xchg", "atomic_xor", "bfloat16", "bitonic_merge", "block_type", "bool", "broadcast", "broadcast_to",
    "cast", "cat", "cdiv", "ceil", "clamp", "constexpr", "core", "cos", "cumprod", "cumsum", "debug_barrier",
    "device_assert", "device_print", "div_rn", "dot", "dot_scaled", "dtype", "erf", "exp", "exp2", "expand_dims",
    "extra", "fdiv", "flip",
    "float16", "float32", "float64", "float8e4b15", "float8e4b8", "float8e4nv", "float8e5", "float8e5b16", "floor", "fma", "full", "gather",
    "histogram", "int1", "int16", "int32", "int64", "int8", "interleave", "item", "join", "load",
    "load_tensor_descriptor", "log", "log2", "make_block_ptr", "make_tensor_descriptor", "math", "max",
    "max_constancy", "max_contiguous", "maximum", "min", "minimum", "multiple_of", "num_programs", "permute",
    "pair_uniform_to_normal", "philox", "philox_impl", "pi32_t", "pointer_type", "program_id", "rand", "rand4x",
    "randint", "randint4x", "randn", "randn4x", "range", "ravel", "reduce", "reduce_or", "reshape", "rsqrt", "sigmoid", "sin",
    "softmax", "sort", "split", "sqrt", "squeeze", "sqrt_rn", "static_assert", "static_print", "static_range", "store",
    "store_tensor_descriptor", "str_to_ty", "sum", "swizzle2d", "tensor", "tensor_descriptor", "tensor_descriptor_base",
    "tensor_descriptor_type", "topk", "trans", "uint16", "uint_to_uniform_float", "uint32", "uint64", "uint8", "umulhi", "unsqueeze", "view", "where",
    "xor_sum", "zeros", "zeros_like",
]

# `tl.tensor` methods and operators that the ops provide (the class itself defines data, dtype, shape, T, ...).
TENSOR_METHODS = [
    "abs", "advance", "argmax", "argmin", "associative_scan", "atomic_add", "atomic_and", "atomic_cas",
    "atomic_max", "atomic_min", "atomic_or", "atomic_poll", "atomic_xchg", "atomic_xor", "broadcast_to", "cast", "cdiv", "ceil",
    "cos", "cumprod", "cumsum", "erf", "exp", "exp2", "expand_dims", "flip", "floor", "gather", "histogram",
    "item", "log", "log2", "logical_and", "logical_or", "max", "min", "permute", "ravel", "reduce", "reduce_or",
    "reshape", "rsqrt", "sigmoid", "sin", "softmax", "split", "sqrt", "sqrt_rn", "store", "sum", "to", "trans",
    "view", "xor_sum",
]

TENSOR_OPERATORS = [
    "__add__", "__and__", "__eq__", "__floordiv__", "__ge__", "__getitem__", "__gt__", "__invert__", "__le__",
    "__lshift__", "__lt__", "__mod__", "__mul__", "__ne__", "__neg__", "__or__", "__pos__", "__pow__", "__radd__",
    "__rand__", "__rfloordiv__", "__rlshift__", "__rmod__", "__rmul__", "__ror__", "__rrshift__", "__rshift__",
    "__rsub__", "__rtruediv__", "__rxor__", "__sub__", "__truediv__", "__xor__",
]


def test_tl_has_exactly_the_frozen_public_names():
    public = {n for n in dir(tl) if not n.startswith("_")} - {"annotations"}  # the __future__ import's flag
    assert sorted(public - set(TL_NAMES)) == [], "new tl names: add them to TL_NAMES"
    assert sorted(set(TL_NAMES) - public) == [], "tl lost these names"


def test_tensor_has_the_frozen_methods_and_operators():
    members = set(vars(tl.tensor))
    assert sorted(set(TENSOR_METHODS) - members) == []
    assert sorted(set(TENSOR_OPERATORS) - members) == []
    registered = {name for owner, name in registry.MEMBERS if owner is tl.tensor}
    assert registered == set(TENSOR_METHODS) | set(TENSOR_OPERATORS)


def test_every_tl_function_is_a_registered_op_behind_the_guard():
    assert set(registry.BUILTINS) <= set(TL_NAMES)
    for name, fn in registry.BUILTINS.items():
        exposed = getattr(tl, name)
        assert exposed is not fn and exposed.__wrapped__ is fn, name
        with pytest.raises(errors.OutsideKernelError, match=rf"tl\.{name} was called outside a kernel launch"):
            exposed()
        with pytest.raises(ValueError, match="Did you forget to add @triton.jit"):
            exposed(1, 2, 3)


def test_methods_and_operators_are_the_ops_themselves():
    assert tl.tensor.to is tl.cast.__wrapped__ and tl.tensor.cast is tl.cast.__wrapped__
    assert tl.tensor.sum is tl.sum.__wrapped__ and tl.tensor.store is tl.store.__wrapped__
    assert tl.tensor.__getitem__ is registry.MEMBERS[(tl.tensor, "__getitem__")]
    assert tl.dtype.__call__ is registry.MEMBERS[(tl.dtype, "__call__")]


def test_a_name_registered_twice_is_refused():
    @registry.builtin("zz_registry_probe")
    def first(x):
        return x

    try:
        with pytest.raises(ValueError, match="'zz_registry_probe' is registered twice"):
            @registry.builtin("zz_registry_probe")
            def second(x):
                return x
        registry.builtin("zz_registry_probe")(first)  # the same function again is no second definition
    finally:
        del registry.BUILTINS["zz_registry_probe"]
    with pytest.raises(ValueError, match="registered twice"):
        registry.operator("__add__", owner=tl.tensor)(lambda a, b: a)


@minitriton.jit
def _members_kernel(X, Y, Z, W):
    offs = tl.arange(0, 4)
    x = tl.load(X + offs[:, None] * 4 + offs[None, :])
    tl.store(Y + offs[:, None] * 4 + offs[None, :], x.T)      # tensor.T through the registered trans
    tl.store(Z + offs, tl.float16(x.sum(axis=1)))             # dtype.__call__ is a cast
    tl.store(W + offs, -(2 - offs) << 1 >> 1)                # reflected and unary operators


def test_registered_members_inside_a_kernel():
    x = np.arange(16, dtype=np.float32).reshape(4, 4) / 4  # exact sums: no rounding to disagree on
    y = np.zeros((4, 4), np.float32)
    z = np.zeros(4, np.float16)
    w = np.zeros(4, np.int32)
    _members_kernel[(1,)](x, y, z, w)
    assert np.array_equal(y, x.T)
    assert np.array_equal(z, x.sum(axis=1, dtype=np.float32).astype(np.float16))
    assert w.tolist() == [-2, -1, 0, 1]


@minitriton.jit
def _static_print_kernel(X, N: tl.constexpr):
    tl.static_print("first", N)
    tl.static_print("second", N)


def test_static_print_once_per_call_site_and_specialization(capsys):
    x = np.zeros(1, np.float32)
    _static_print_kernel[(1,)](x, N=4)
    _static_print_kernel[(2,)](x, N=4)
    _static_print_kernel[(1,)](x, N=8)
    assert capsys.readouterr().out.splitlines() == ["first 4", "second 4", "first 8", "second 8"]
