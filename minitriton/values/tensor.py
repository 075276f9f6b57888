"""`tl.tensor`: the value every kernel expression produces, for a whole group of programs at once.

`data` has a leading *program axis* of length 1 (the value is the same in every program of the group:
constants, `tl.arange`, scalar arguments) or of the group's size; the rest of its shape is the block shape
`shape`. Pointer values carry the allocation they were derived from (`alloc`) and are then stored as element
offsets into it; pointers of unknown provenance are absolute addresses (`alloc is None`).
Python control flow on a tensor (`if`, `while`, `range(n)`, `int(x)`) asks for its value, which must be the
same in every program of the group still running: when it is not, the engine splits the group (`Diverged`).
The methods and operators (`x + y`, `x.to(...)`, `x.sum()`) are the ops' own functions, put on the class by
`minitriton.language` from the op table (`minitriton.values.registry`).
"""
from __future__ import annotations

import warnings

import numpy as np

from minitriton import errors
from minitriton.values import programs


class block_type:
    """The type of a block value: element type plus shape (Triton's `tl.block_type`)."""

    def __init__(self, element_ty, shape):
        self.element_ty = element_ty
        self.scalar = element_ty
        self.shape = tuple(shape)

    def is_block(self):
        return bool(self.shape)

    def is_ptr(self):
        return self.element_ty.is_ptr()

    def get_block_shapes(self):
        return self.shape

    @property
    def numel(self):
        return int(np.prod(self.shape, dtype=np.int64))

    def __str__(self):
        return f"<{list(self.shape)}, {self.element_ty}>" if self.shape else str(self.element_ty)

    __repr__ = __str__


class shape_tuple(tuple):
    """A tensor's block shape (`x.shape`): a tuple of ints that, like Triton's `tl.tuple` of constexprs, compares
    equal to a list of the same numbers (`tl.static_assert(x.shape == [BLOCK])`), constexprs included.

    Shapes are interned (`interned`): two equal shapes of the engine's values are one object, so the ops
    test `a.shape is b.shape` and fall back to comparing values only for shapes met past the table's bound."""

    __slots__ = ()

    def __eq__(self, other):
        if self is other:
            return True
        if type(other) is shape_tuple:
            return tuple.__eq__(self, other)
        if isinstance(other, (list, tuple)):
            if len(other) != len(self):
                return False
            if type(other) is tuple and tuple.__eq__(self, other):
                return True
            return tuple.__eq__(self, tuple(getattr(v, "value", v) for v in other))
        return NotImplemented

    def __ne__(self, other):
        if self is other or (type(other) is tuple and tuple.__eq__(self, other)):
            return False
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = tuple.__hash__


_SHAPES: dict = {}   # plain tuple -> its shape_tuple: the few block shapes a program uses, each made once
# (plain-tuple keys: a lookup compares in C, where a shape_tuple key would call its Python __eq__)


def interned(shape) -> shape_tuple:
    """The one shape_tuple equal to `shape` (a tuple or list of ints), made on first use."""
    if type(shape) is shape_tuple:
        return shape
    plain = shape if type(shape) is tuple else tuple(shape)
    found = _SHAPES.get(plain)
    if found is not None:
        return found
    out = shape_tuple(plain)
    if len(_SHAPES) < 4096:
        _SHAPES[plain] = out
    return out


class tensor:
    """A Triton value: a scalar (shape `()`) or a block, evaluated for every program of the group."""

    __slots__ = ("data", "dtype", "shape", "alloc", "bounds", "__weakref__")
    __array_priority__ = 1000  # numpy scalars must defer to our operators

    def __init__(self, data: np.ndarray, dtype, shape: tuple, alloc=None):
        self.data = data
        self.dtype = dtype
        if type(shape) is not shape_tuple:   # `interned`, its common case inline: a tuple seen before
            found = _SHAPES.get(shape) if type(shape) is tuple else None
            shape = found if found is not None else interned(shape)
        self.shape = shape
        self.alloc = alloc
        # Pointers into an allocation: (lo, hi) Python ints with lo <= every offset in `data` <= hi, once known
        # (see minitriton.memory.access._resolve); lets a load through `ptr + k` skip the min/max of its offsets.
        self.bounds = None
        m = programs.meter
        if m is not None:
            # Groups are sized by their largest value (cache) and by the bytes their values hold at once
            # (memory): arrays that own their memory count while their tensor exists (views are free).
            nbytes = data.nbytes
            if nbytes > m.peak:
                m.see(nbytes)
            if data.base is None:
                m.own(self, nbytes)

    # --- Triton's introspection surface ---
    @property
    def type(self):
        """A block's `block_type`; a scalar's own dtype, as in Triton (`ptr.type.element_ty` is fp32)."""
        return block_type(self.dtype, self.shape) if self.shape else self.dtype

    @property
    def numel(self):
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def T(self):
        """`x.T`: `x.trans()`, the last two axes swapped."""
        return self.trans()

    def __repr__(self):
        return f"tensor({block_type(self.dtype, self.shape)})"

    # --- Python control flow: needs one value for the whole group ---
    def _uniform(self, what: str):
        data = self.data
        if self.shape:
            if what != "condition" or self.numel != 1:
                raise errors.python_error(TypeError, errors.diagnostic("tensor_truth", shape=list(self.shape),
                                                                       what=what))
            # newest Triton's visit_If unsplats a one-element block, with this warning
            warnings.warn("If conditional called with multidimensional Tensor instead of scalar; please use "
                          "\"if (cond).item()\" instead", stacklevel=3)
            data = data.reshape(data.shape[0])
        if self.dtype.is_ptr():
            data = to_address(self)
        if data.shape[0] == 1:
            return data[0]
        if what == "condition":
            data = data != 0
        group = programs._current
        running = data if group is None or group.active is None else data[group.active]
        first = running[0]   # (programs that left a lockstep loop do not take part)
        if (running == first).all():
            return first
        raise programs.Diverged(data)

    def __bool__(self):
        return bool(self._uniform("condition"))

    def __index__(self):
        if not (self.dtype.is_int() or self.dtype.is_ptr()):
            raise errors.python_error(TypeError, errors.diagnostic("index_type", dtype=self.dtype))
        return int(self._uniform("integer"))

    def __int__(self):
        return int(self._uniform("integer"))

    def __float__(self):
        return float(self._uniform("number"))

    def __len__(self):
        if not self.shape:
            raise errors.python_error(TypeError, errors.diagnostic("scalar_len"))
        return self.shape[0]

    def __iter__(self):
        raise errors.python_error(TypeError, errors.diagnostic("tensor_iteration"))

    __hash__ = object.__hash__  # tensors are used as dict keys by nothing, but keep hashing by identity


def to_address(t: tensor) -> np.ndarray:
    """Absolute virtual addresses (int64) of a pointer tensor."""
    if t.alloc is None:
        return t.data
    return t.alloc.address_of(t.data, t.dtype.element_ty)
