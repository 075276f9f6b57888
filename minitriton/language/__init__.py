"""`triton.language` for minitriton: import it as `tl` (or let `minitriton.install()` alias it)."""
from __future__ import annotations

import functools as _functools

from minitriton.semantics import dtypes as _dtypes
from minitriton.semantics import elementwise as _ob
from minitriton.semantics import grid as _ogrid
from minitriton.semantics import random as _orand
from minitriton.memory import block_pointer as _obp
from minitriton.semantics import debug as _od
from minitriton.memory import descriptor as _odesc
from minitriton.semantics import dot as _odot
from minitriton.semantics import sorting as _oex
from minitriton.semantics import math as _om
from minitriton.memory import access as _omem
from minitriton.semantics import reduce as _or
from minitriton.semantics import shape as _os
from minitriton.semantics.dtypes import (bfloat16, dtype, float16, float32, float64, int1, int8, int16, int32, int64, pointer_type,
                      uint8, uint16, uint32, uint64)
from minitriton.frontend.kernel_globals import KernelRange as range
from minitriton.semantics.elementwise import constexpr
from minitriton.semantics.shape import TRITON_MAX_TENSOR_NUMEL
from minitriton.values.tensor import block_type, tensor
from minitriton.language import extra, math

bool = int1  # noqa: A001 - Triton's alias
float8e4nv = float8e5 = float8e4b15 = None  # fp8 types are not emulated


class PropagateNan:
    """`tl.PropagateNan`: NONE (default, maxnum: NaN loses) or ALL (NaN wins)."""

    class _Mode:
        def __init__(self, name):
            self.name = name

        def __repr__(self):
            return f"PropagateNan.{self.name}"

    NONE = _Mode("NONE")
    ALL = _Mode("ALL")


# creation and shapes
program_id = _od.program_id
num_programs = _od.num_programs
arange = _os.arange
full = _os.full
zeros = _os.zeros
zeros_like = _os.zeros_like
reshape = _os.reshape
view = _os.view
ravel = _os.ravel
trans = _os.trans
permute = _os.permute
expand_dims = _os.expand_dims
broadcast = _os.broadcast
broadcast_to = _os.broadcast_to
cat = _os.cat
join = _os.join
split = _os.split
interleave = _oex.interleave
flip = _oex.flip
gather = _oex.gather
histogram = _oex.histogram
item = _oex.item
sort = _oex.sort
topk = _oex.topk
bitonic_merge = _oex.bitonic_merge

# memory
load = _omem.load
store = _omem.store

# block pointers
make_block_ptr = _obp.make_block_ptr
advance = _obp.advance

# tensor descriptors (TMA)
make_tensor_descriptor = _odesc.make_tensor_descriptor
load_tensor_descriptor = _odesc.load_tensor_descriptor
store_tensor_descriptor = _odesc.store_tensor_descriptor
tensor_descriptor = _odesc.tensor_descriptor
tensor_descriptor_base = _odesc.tensor_descriptor_base
tensor_descriptor_type = _odesc.tensor_descriptor_type


def atomic_add(pointer, val, mask=None, sem=None, scope=None):
    """`tl.atomic_add`: returns the values memory held before each lane's update."""
    return _omem.atomic_rmw("add", pointer, val, mask, sem, scope)


def atomic_max(pointer, val, mask=None, sem=None, scope=None):
    """`tl.atomic_max` (NaN never wins for floats)."""
    return _omem.atomic_rmw("max", pointer, val, mask, sem, scope)


def atomic_min(pointer, val, mask=None, sem=None, scope=None):
    """`tl.atomic_min` (NaN never wins for floats)."""
    return _omem.atomic_rmw("min", pointer, val, mask, sem, scope)


def atomic_and(pointer, val, mask=None, sem=None, scope=None):
    """`tl.atomic_and`."""
    return _omem.atomic_rmw("and", pointer, val, mask, sem, scope)


def atomic_or(pointer, val, mask=None, sem=None, scope=None):
    """`tl.atomic_or`."""
    return _omem.atomic_rmw("or", pointer, val, mask, sem, scope)


def atomic_xor(pointer, val, mask=None, sem=None, scope=None):
    """`tl.atomic_xor`."""
    return _omem.atomic_rmw("xor", pointer, val, mask, sem, scope)


def atomic_xchg(pointer, val, mask=None, sem=None, scope=None):
    """`tl.atomic_xchg`: write `val`, return the old value."""
    return _omem.atomic_rmw("xchg", pointer, val, mask, sem, scope)


atomic_cas = _omem.atomic_cas

# arithmetic
cast = _ob.cast
where = _ob.where
maximum = _ob.maximum
minimum = _ob.minimum
clamp = _ob.clamp
exp = _om.exp
exp2 = _om.exp2
log = _om.log
log2 = _om.log2
sqrt = _om.sqrt
sqrt_rn = _om.sqrt_rn
rsqrt = _om.rsqrt
sin = _om.sin
cos = _om.cos
abs = _om.abs  # noqa: A001
floor = _om.floor
ceil = _om.ceil
sigmoid = _om.sigmoid
softmax = _om.softmax
erf = _om.erf
fma = _om.fma
div_rn = _om.div_rn
fdiv = _om.fdiv
cdiv = _om.cdiv
umulhi = _om.umulhi
dot = _odot.dot

# random numbers (Philox) and grid helpers
randint = _orand.randint
randint4x = _orand.randint4x
rand = _orand.rand
rand4x = _orand.rand4x
randn = _orand.randn
randn4x = _orand.randn4x
philox = _orand.philox
philox_impl = _orand.philox_impl
uint_to_uniform_float = _orand.uint_to_uniform_float
pair_uniform_to_normal = _orand.pair_uniform_to_normal
swizzle2d = _ogrid.swizzle2d

# reductions and scans
sum = _or.sum  # noqa: A001
max = _or.max  # noqa: A001
min = _or.min  # noqa: A001
argmax = _or.argmax
argmin = _or.argmin
xor_sum = _or.xor_sum
reduce = _or.reduce
associative_scan = _or.associative_scan
cumsum = _or.cumsum
cumprod = _or.cumprod
reduce_or = _oex.reduce_or

# compile-time and debugging
static_range = _od.static_range
static_print = _od.static_print
static_assert = _od.static_assert
device_print = _od.device_print
device_assert = _od.device_assert
multiple_of = _od.multiple_of
max_contiguous = _od.max_contiguous
max_constancy = _od.max_constancy
assume = _od.assume
debug_barrier = _od.debug_barrier


def _install_tensor_methods():
    """The `@_tensor_member_fn` functions of triton.language: `x.sum()`, `x.to(...)`, `x.exp()`, ..."""
    from minitriton.values import tensor as _tensor_module
    _tensor_module._install_operators()
    members = dict(
        to=_ob.cast, cast=_ob.cast, reshape=reshape, view=view, ravel=ravel, trans=trans, permute=permute,
        expand_dims=expand_dims, broadcast_to=broadcast_to, split=split,
        sum=sum, max=max, min=min, argmax=argmax, argmin=argmin, xor_sum=xor_sum, reduce=reduce,
        associative_scan=associative_scan, cumsum=cumsum, cumprod=cumprod,
        abs=abs, sigmoid=sigmoid, softmax=softmax, cdiv=cdiv,
        store=store, atomic_add=atomic_add, atomic_and=atomic_and, atomic_cas=atomic_cas, atomic_max=atomic_max,
        atomic_min=atomic_min, atomic_or=atomic_or, atomic_xchg=atomic_xchg, atomic_xor=atomic_xor,
        flip=flip, gather=gather, histogram=histogram, item=item, reduce_or=reduce_or, advance=advance,
        logical_and=_ob.logical_and, logical_or=_ob.logical_or,
        **_om.METHODS,  # exp, log, sqrt, ...: Triton 3.6's methods skip the dtype check (fp16/bf16 via fp32)
    )
    for name, fn in members.items():
        setattr(tensor, name, fn)


_install_tensor_methods()


def _builtin(fn, name):
    """`fn` refusing to run outside a kernel, with Triton's message (ValueError)."""
    from minitriton.values import programs as _context
    from minitriton import errors as _errors

    @_functools.wraps(fn)
    def builtin(*args, **kwargs):
        if _context._current is None:
            raise _errors.outside_kernel(name)
        return fn(*args, **kwargs)
    return builtin


_BUILTINS = ["program_id", "num_programs", "arange", "full", "zeros", "zeros_like", "reshape", "view", "ravel",
             "trans", "permute", "expand_dims", "broadcast", "broadcast_to", "cat", "join", "split", "interleave",
             "flip", "gather", "histogram", "item", "sort", "topk", "bitonic_merge", "reduce_or", "load", "store",
             "make_block_ptr", "advance", "make_tensor_descriptor", "load_tensor_descriptor",
             "store_tensor_descriptor",
             "atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor", "atomic_xchg",
             "atomic_cas", "cast", "where", "maximum", "minimum", "clamp", "exp", "exp2", "log", "log2", "sqrt",
             "sqrt_rn", "rsqrt", "sin", "cos", "abs", "floor", "ceil", "sigmoid", "softmax", "erf", "fma", "div_rn",
             "fdiv", "cdiv", "umulhi", "dot", "sum", "max", "min", "argmax", "argmin", "xor_sum", "reduce",
             "associative_scan", "cumsum", "cumprod", "static_range", "static_print", "static_assert",
             "device_print", "device_assert", "multiple_of", "max_contiguous", "max_constancy", "assume",
             "debug_barrier", "randint", "randint4x", "rand", "rand4x", "randn", "randn4x", "philox", "philox_impl",
             "uint_to_uniform_float", "pair_uniform_to_normal", "swizzle2d"]
for _name in _BUILTINS:
    globals()[_name] = _builtin(globals()[_name], _name)
del _name

__all__ = [n for n in dir() if not n.startswith("_")]
