"""`triton.language` for minitriton: import it as `tl` (or let `minitriton.install()` alias it).

The `tl.*` functions, and the methods and operators of `tl.tensor`, are the op table
(`minitriton.values.registry`), which the op modules imported here fill as they define their ops. Each
`tl.*` function refuses to run outside a kernel, with Triton's message; the methods and operators cannot
be reached without a tensor, so they are the ops themselves.
"""
from __future__ import annotations

import functools as _functools

from minitriton import errors as _errors
from minitriton.memory import access as _access
from minitriton.memory import atomics as _atomics
from minitriton.memory import block_pointer as _block_pointer
from minitriton.memory import descriptor as _descriptor
from minitriton.memory.descriptor import tensor_descriptor, tensor_descriptor_base, tensor_descriptor_type  # noqa: F401
from minitriton.frontend.kernel_globals import KernelRange as range  # noqa: F401
from minitriton.semantics import casts as _casts
from minitriton.semantics import debug as _debug
from minitriton.semantics import dot as _dot
from minitriton.semantics import dot_scaled as _dot_scaled
from minitriton.semantics import elementwise as _elementwise
from minitriton.semantics import grid as _grid
from minitriton.semantics import math as _math
from minitriton.semantics import random as _random
from minitriton.semantics import reduce as _reduce
from minitriton.semantics import shape as _shape
from minitriton.semantics import sorting as _sorting
from minitriton.semantics.constexpr import constexpr  # noqa: F401
from minitriton.semantics.dtypes import (  # noqa: F401
    bfloat16, dtype, float8e4b8, float8e4b15, float8e4nv, float8e5, float8e5b16, float16, float32, float64, int1, int8,
    int16, int32, int64, pointer_type, str_to_ty, uint8, uint16, uint32, uint64)
from minitriton.semantics.elementwise import PropagateNan  # noqa: F401
from minitriton.semantics.shape import TRITON_MAX_TENSOR_NUMEL  # noqa: F401
from minitriton.values import programs as _programs
from minitriton.values import registry as _registry
from minitriton.values.tensor import block_type, tensor  # noqa: F401
from minitriton.language import extra, math  # noqa: F401

bool = int1  # noqa: A001 - Triton's alias
pi32_t = pointer_type(int32)  # Triton's alias

_OP_MODULES = (_casts, _elementwise, _grid, _random, _math, _reduce, _shape, _sorting, _debug, _dot, _dot_scaled,
               _access, _atomics, _block_pointer, _descriptor)
"""The modules whose registered ops make up `tl`."""


def _outside_kernel_guard(fn, name):
    """`fn` refusing to run outside a kernel, with Triton's message (ValueError)."""
    programs = _programs  # a closure cell: read faster than a module global on every `tl.*` call

    @_functools.wraps(fn)
    def builtin(*args, **kwargs):
        if programs._current is None:
            raise _errors.outside_kernel(name)
        return fn(*args, **kwargs)
    return builtin


globals().update({_name: _outside_kernel_guard(_fn, _name) for _name, _fn in _registry.BUILTINS.items()})
for (_owner, _name), _fn in _registry.MEMBERS.items():
    setattr(_owner, _name, _fn)
del _owner, _name, _fn

__all__ = [n for n in dir() if not n.startswith("_")]
from minitriton.language import core  # noqa: E402,F401 - `tl.core`, after __all__ (it star-imports tl)
