"""The op table: every `tl` function, tensor method and operator, registered where it is defined.

Op modules mark their public functions once, as Triton marks its own with `@builtin` and
`@_tensor_member_fn`:

    @builtin                                   # tl.where
    def where(condition, x, y): ...

    @builtin(method=("to", "cast"))            # tl.cast, x.to(...), x.cast(...)
    def cast(x, dst, fp_downcast_rounding=None, bitcast=False): ...

    @operator("__add__", reflected="__radd__")  # x + y, 1 + x
    def add(a, b): ...

`minitriton.language` builds `triton.language` from this table: the `tl.*` functions (each refusing to run
outside a kernel), and the methods and operators of `tl.tensor`. The decorators return the function
itself, so the op modules call one another without the outside-a-kernel check.
"""
from __future__ import annotations

from typing import Callable

from minitriton.values.tensor import tensor

BUILTINS: dict[str, Callable] = {}
"""`tl.<name>` -> the function behind it."""

MEMBERS: dict[tuple[type, str], Callable] = {}
"""(class, attribute) -> function: the methods and operators of `tl.tensor` (and `tl.dtype.__call__`)."""


def _register(table: dict, key, fn: Callable) -> None:
    if key in table and table[key] is not fn:
        raise ValueError(f"{key!r} is registered twice: by {table[key].__module__}.{table[key].__qualname__} "
                         f"and by {fn.__module__}.{fn.__qualname__}")
    table[key] = fn


def builtin(name: str | Callable | None = None, *, method: bool | str | tuple = False):
    """Register the decorated function as `tl.<name>` (default, and with a bare `@builtin`: its own name);
    with `method`, also as a `tl.tensor` method: True for the same name, or the method name(s)."""
    if callable(name):
        return builtin()(name)

    def register(fn: Callable) -> Callable:
        public = name or fn.__name__
        _register(BUILTINS, public, fn)
        methods = (public,) if method is True else (method,) if isinstance(method, str) else method or ()
        for m in methods:
            _register(MEMBERS, (tensor, m), fn)
        return fn
    return register


def tensor_method(*names: str):
    """Register the decorated function as the `tl.tensor` method(s) `names` only (no `tl.<name>`): for
    methods whose checks differ from the function's, and those Triton has only as methods."""
    def register(fn: Callable) -> Callable:
        for m in names:
            _register(MEMBERS, (tensor, m), fn)
        return fn
    return register


def operator(name: str, *, reflected: str | None = None, owner: type = tensor):
    """Register the decorated function `fn(self, other)` as the operator `name` of `owner` (`tl.tensor`
    unless given); `reflected` names the swapped form (`__radd__`: `other + self` calls fn(other, self))."""
    def register(fn: Callable) -> Callable:
        _register(MEMBERS, (owner, name), fn)
        if reflected is not None:
            def swapped(self, other):
                return fn(other, self)
            swapped.__name__ = swapped.__qualname__ = reflected
            swapped.__doc__ = f"`other {name}` with the tensor on the right: {fn.__module__}.{fn.__name__}"
            _register(MEMBERS, (owner, reflected), swapped)
        return fn
    return register
