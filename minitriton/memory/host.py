"""Host arrays that kernels reach through addresses read from memory, not through arguments.

A kernel may load its pointers: tutorial 08 passes a tensor of `A.data_ptr()` values and does
`tl.load(ptrs + g).to(tl.pointer_type(tl.float16))`. On a GPU these are device addresses; here they are the
host addresses of the arrays' bytes. To turn one back into memory that is bounds-checked, minitriton
remembers every array whose address a script takes while it is installed (`watch()`, called by
`minitriton.install()` and so by `python -m minitriton run`): `torch.Tensor.data_ptr()` and NumPy's
`array.ctypes.data` record the array, weakly. An access through pointers of unknown provenance resolves to
the array holding the lowest address its active lanes touch: an array of the launch (an argument, or one
met this way before), else a recorded one, which becomes an allocation of the launch on the fly (named
`tensor at 0x...`); bounds checks, traffic counters and the sanitizer then treat it like any argument. An
address in no such array is the OutOfBoundsError "point into no tensor argument". (Addresses taken in other
ways, e.g. `array.__array_interface__`, are not seen.)
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import weakref

from minitriton.memory.allocation import _span, as_array
from minitriton.values.running import LaunchMemory

try:
    from numpy._core import _internal as _numpy_internal
except ImportError:  # NumPy 1.x
    from numpy.core import _internal as _numpy_internal


class HostArrays:
    """The arrays whose address was taken, weakly: they are forgotten when their last reference goes."""

    def __init__(self):
        self._entries = {}   # id(obj) -> weakref to the tensor or array

    def record(self, obj) -> None:
        key = id(obj)
        entry = self._entries.get(key)
        if entry is not None and entry() is obj:
            return
        try:
            self._entries[key] = weakref.ref(obj, lambda _ref, key=key: self._entries.pop(key, None))
        except TypeError:  # an object that cannot be weakly referenced: not remembered
            pass

    def holding(self, low: int, high: int):
        """(array, element type, the object, start address) of the smallest recorded array whose bytes hold
        [low, high], or None."""
        best = None
        for ref in list(self._entries.values()):
            obj = ref()
            try:
                found = as_array(obj) if obj is not None else None
            except (TypeError, RuntimeError):  # a tensor minitriton cannot view (another device, a dtype it lacks)
                continue
            if found is None:
                continue
            array, elem = found
            raw, _ = _span(array)
            start = _address(raw)
            if start <= low and high < start + raw.nbytes and (best is None or raw.nbytes < best[4]):
                best = (array, elem, obj, start, raw.nbytes)
        return None if best is None else best[:4]


recorded = HostArrays()


def _address(raw) -> int:
    """The host address of a uint8 span's first byte (not through `.ctypes`, which would record it)."""
    return raw.__array_interface__["data"][0] if raw.size else 0


def resolve(launch: LaunchMemory, address: int, size: int):
    """The launch's allocation holding the `size` bytes at host `address` (made from a recorded array if
    need be) and the host address of that allocation's first byte; None when no known array holds them."""
    high = address + size - 1
    for alloc in launch.allocations:
        start = _address(alloc.raw)
        if alloc.nbytes and start <= address and high < start + alloc.nbytes:
            return alloc, start
    found = recorded.holding(address, high)
    if found is None:
        return None
    array, elem, original, start = found
    alloc = launch.add_allocation(f"tensor at {start:#x}", array, elem, original)
    return alloc, start


# ---------------------------------------------------------------- recording the addresses a script takes

_originals = {}   # what watch() replaced: name -> (owner, attribute, original)


def watch() -> None:
    """Record arrays whose address is taken: torch's `Tensor.data_ptr()` (now, or when torch is imported)
    and NumPy's `ndarray.ctypes.data`. Undone by `unwatch()`."""
    if _originals:
        return
    _watch_numpy()
    _originals["torch finder"] = (after_import("torch", _watch_torch), None, None)


def unwatch() -> None:
    """Put back what `watch()` replaced."""
    for name, (owner, attribute, original) in list(_originals.items()):
        if owner is None:
            continue
        if isinstance(owner, _WhenImported):
            owner.cancel()
        else:
            setattr(owner, attribute, original)
    _originals.clear()


def after_import(name: str, then):
    """Call `then(module)` once the module `name` is imported: now if it already is (returns None), else right
    after its first import (returns the import hook, whose `cancel()` withdraws it)."""
    module = sys.modules.get(name)
    if module is not None:
        then(module)
        return None
    finder = _WhenImported(name, then)
    sys.meta_path.insert(0, finder)
    return finder


def _watch_torch(torch) -> None:
    original = torch.Tensor.data_ptr

    def data_ptr(self):
        recorded.record(self)
        return original(self)

    data_ptr.__doc__ = original.__doc__
    torch.Tensor.data_ptr = data_ptr
    _originals["torch.Tensor.data_ptr"] = (torch.Tensor, "data_ptr", original)


def _watch_numpy() -> None:
    ctypes_class = getattr(_numpy_internal, "_ctypes", None)
    prop = getattr(ctypes_class, "__dict__", {}).get("data")
    if not isinstance(prop, property):
        return

    def data(self):
        array = getattr(self, "_arr", None)
        if array is not None:
            recorded.record(array)
        return prop.fget(self)

    ctypes_class.data = property(data, doc=prop.__doc__)
    _originals["numpy ctypes.data"] = (ctypes_class, "data", prop)


class _WhenImported(importlib.abc.MetaPathFinder):
    """Runs `then(module)` right after the module `name` is first imported."""

    def __init__(self, name: str, then):
        self.name = name
        self.then = then

    def cancel(self) -> None:
        if self in sys.meta_path:
            sys.meta_path.remove(self)

    def find_spec(self, fullname, path, target=None):
        if fullname != self.name:
            return None
        self.cancel()
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader, then = spec.loader, self.then
        exec_module = loader.exec_module

        def exec_then_watch(module):
            exec_module(module)
            then(module)

        loader.exec_module = exec_then_watch
        return spec
