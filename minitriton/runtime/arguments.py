"""A launch argument as the kernel sees it: arrays become pointers into the launch's allocations, Python
numbers typed scalars (as Triton types them), tensor descriptors device descriptors, constexprs plain values."""
from __future__ import annotations

import types

import numpy as np

from minitriton import errors
from minitriton.frontend.kernel_globals import KernelInterface
from minitriton.memory.allocation import as_array
from minitriton.memory.descriptor import from_host
from minitriton.semantics import dtypes as T
from minitriton.semantics.constexpr import constexpr, to_tensor
from minitriton.memory.host_descriptor import TensorDescriptor
from minitriton.values.tensor import tensor


def convert_argument(name: str, value, is_constexpr: bool, specialize: bool, launch):
    """A launch argument as the kernel sees it: pointers for arrays, typed scalars, plain constexprs."""
    value = value.value if isinstance(value, constexpr) else value
    if is_constexpr:
        if as_array(value) is not None:
            raise errors.python_error(TypeError, errors.diagnostic("constexpr_array", name=name))
        return value
    if isinstance(value, TensorDescriptor):
        return from_host(name, value, launch)
    found = as_array(value)
    if found is not None:
        array, elem = found
        alloc = launch.add_allocation(name, array, elem, value)
        return tensor(np.array([alloc.base_offset], np.int64), T.pointer_type(elem), (), alloc)
    if value is None or isinstance(value, (T.dtype, str, types.FunctionType, KernelInterface)):
        return value
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        return to_tensor(value)
    if isinstance(value, int):
        if value == 1 and specialize:
            return 1  # Triton specializes integer arguments equal to 1 as constexpr
        if -2**31 <= value < 2**31:
            ty = T.int32
        elif -2**63 <= value < 2**63:
            ty = T.int64
        elif value < 2**64:
            ty = T.uint64
        else:
            raise errors.python_error(ValueError, errors.diagnostic("argument_too_large", name=name, value=value))
        return tensor(np.array([value], ty.np_compute), ty, ())
    if isinstance(value, float):
        return tensor(np.array([value], np.float32), T.float32, ())
    if isinstance(value, tuple):
        return tuple(convert_argument(f"{name}[{i}]", v, False, specialize, launch) for i, v in enumerate(value))
    raise errors.python_error(TypeError, errors.diagnostic("argument_type", name=name, type=type(value).__name__))
