"""`tl.load`, `tl.store` and the atomics: masked gathers and scatters on the launch's allocations.

Every lane whose mask is on is bounds-checked against the allocation its pointer was derived from before
any byte is read or written; masked-off lanes never touch memory. The traffic counters are fed from the
same index arrays that perform the access.
"""
from __future__ import annotations

import numpy as np

from minitriton.values import programs
from minitriton import errors
from minitriton.semantics import dtypes as T
from minitriton.memory.block_pointer import block_pointer, lower_load, lower_store
from minitriton.diagnostics.record import Runs
from minitriton.memory.events import Access, tile_of
from minitriton.memory import host, rmw
from minitriton.memory.allocation import SLOT_SHIFT
from minitriton.semantics.casts import cast, from_storage, to_storage
from minitriton.semantics.constexpr import to_tensor, unwrap
from minitriton.semantics.shape import broadcast_data, broadcast_shapes, expand
from minitriton.values.registry import builtin
from minitriton.values.factored import outer, pointer_block, tile_view
from minitriton.values.tensor import tensor


def distinct(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values (a sort, much faster than np.unique's hashing on millions of int64)."""
    s = np.sort(values, kind="stable" if values.size < 64 else "quicksort")
    if s.size == 0:
        return s
    keep = np.empty(s.shape, bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def _prepare(op: str, pointer, mask, extra: dict):
    """Check the operands like Triton and broadcast pointer, mask and the `extra` values to one shape."""
    ptr = unwrap(pointer)
    if not isinstance(ptr, tensor) or not ptr.dtype.is_ptr():
        shown = ptr.type if isinstance(ptr, tensor) else type(ptr).__name__
        raise errors.python_error(ValueError, errors.diagnostic("pointer_type", shown=repr(shown), op=op))
    mask = unwrap(mask)
    if mask is not None:
        mask = to_tensor(mask)
        if not mask.dtype.is_bool():
            raise errors.python_error(ValueError, errors.diagnostic("mask_type", dtype=mask.dtype))
    values = {}
    for k, v in extra.items():
        values[k] = v if v is None else to_tensor(v)
    shape = ptr.shape
    if not shape:
        if mask is not None and mask.shape:
            raise errors.python_error(ValueError, errors.diagnostic("scalar_pointer_block", label="Mask"))
        for name, v in values.items():
            if v is not None and v.shape:
                label = "Other" if name == "other" else "Value"
                raise errors.python_error(ValueError, errors.diagnostic("scalar_pointer_block", label=label))
    if mask is not None and mask.shape is not shape:  # shapes are interned: `is` tells equal ones
        shape = broadcast_shapes(shape, mask.shape)
    for v in values.values():
        if v is not None and v.shape is not shape:
            shape = broadcast_shapes(shape, v.shape)
    if op != "load" and shape is not ptr.shape and shape != ptr.shape:
        raise errors.python_error(ValueError, errors.diagnostic("pointer_shape", shape=shape, given=ptr.shape))
    return ptr, mask, values, shape


def _running(group, mask):
    """`mask` and the programs still running a lockstep loop (`group.active`): those that left touch nothing."""
    on = group.active
    if on is None or mask is None:
        return mask if on is None else tensor(on, T.int1, ())
    return tensor(mask.data & on.reshape((-1,) + (1,) * len(mask.shape)), T.int1, mask.shape)


def _mask_lanes(mask, shape):
    """The mask's array broadcast to `shape` (program axis first), or None when every lane is on."""
    # the common case: nothing masked off in this group (count_nonzero: no ufunc reduction, several x faster)
    if mask is None:
        return None
    if isinstance(mask, outer):
        if mask.all_true():
            return None
    elif np.count_nonzero(mask.data) == mask.data.size:
        return None
    return broadcast_data(mask, shape) if mask.shape is not shape else mask.data


def _lanes(group, ptr: tensor, mask, shape):
    """(index array, mask array or None), both with the program axis, broadcast to `shape`."""
    idx = broadcast_data(ptr, shape) if ptr.shape is not shape else ptr.data
    m = _mask_lanes(mask, shape)
    if m is None:
        return idx, None
    if m.shape[0] != idx.shape[0]:
        g = max(m.shape[0], idx.shape[0])
        idx = np.broadcast_to(idx, (g,) + idx.shape[1:])
        m = np.broadcast_to(m, (g,) + m.shape[1:])
    return idx, m


def _resolve(op: str, group, ptr: tensor, idx: np.ndarray, m, masked: bool = False):
    """The allocation and in-bounds element indices for a pointer block, or a precise OutOfBoundsError.

    `masked`: the op had a mask (possibly all true here), which changes the suggested fix.
    """
    elem = ptr.dtype.element_ty
    alloc = ptr.alloc
    known = ptr  # whose `bounds` describe idx
    if alloc is None:
        alloc, idx = _find_allocation(op, group, ptr, idx, m)
        known = None
    n = alloc.numel(elem)
    if idx.size and _in_range(known, idx, n):
        # Every lane points inside, masked or not: the mask only selects lanes (their indices are not
        # replaced by 0 then, but no caller reads a masked-off lane's index).
        return alloc, idx
    if m is None:
        if idx.size:
            _out_of_bounds(op, group, alloc, elem, idx, None, n, masked)
        return alloc, idx
    safe = np.where(m, idx, 0)
    if safe.size and n and (safe.min() < 0 or safe.max() >= n) or n == 0 and m.any():  # n == 0: 0 is out too
        _out_of_bounds(op, group, alloc, elem, idx, m, n, masked)
    return alloc, safe


def _in_range(ptr, idx: np.ndarray, n: int) -> bool:
    """Whether every offset in `idx` (ptr's offsets, maybe broadcast) lies in [0, n).

    The offsets' bounds are remembered on the pointer tensor, so a loop's `ptr += step` derives the next
    block's bounds (ops_basic._shifted_bounds) instead of scanning the offsets again."""
    bounds = ptr.bounds if ptr is not None else None
    if bounds is not None and bounds[0] >= 0 and bounds[1] < n:
        return True
    lo, hi = int(idx.min()), int(idx.max())  # exact: remembered bounds may be loose (per-program steps)
    if ptr is not None:
        ptr.bounds = (lo, hi)
    return lo >= 0 and hi < n


def _to_full(a: np.ndarray, full: tuple) -> np.ndarray:
    """`a` broadcast to `full` (np.broadcast_to costs microseconds: skipped when the shape is right)."""
    return a if a.shape == full else np.broadcast_to(a, full)


def _find_allocation(op, group, ptr, addr, m):
    """Pointers of unknown provenance (loaded from memory, cast from ints): find their one allocation, among the
    launch's (virtual addresses) or the host arrays whose address the script took (memory/host.py)."""
    live = addr if m is None else addr[np.broadcast_to(m, addr.shape)]
    slots = distinct(live >> SLOT_SHIFT) if live.size else np.array([1], np.int64)
    allocs = group.allocations
    size = ptr.dtype.element_ty.itemsize
    if live.size and not (len(slots) == 1 and 1 <= int(slots[0]) <= len(allocs)):
        found = host.resolve(group, int(live.min()), size)  # a host address the script took
        if found is not None:
            alloc, start = found
            if ((live - start) % size).any():
                record = errors.diagnostic("misaligned", op=op, tensor=alloc.name, itemsize=size,
                                           past=int(((live - start) % size).max()))
                raise errors.KernelRuntimeError(errors.OutOfBoundsError, record, _first_bad(addr, m))
            return alloc, (addr - start) // size
    if len(slots) != 1 or not (1 <= int(slots[0]) <= len(allocs)):
        shown = np.unique(live)[:3] if live.size else np.unique(addr)[:3]
        record = errors.diagnostic("no_tensor", op=op, addresses=", ".join(hex(int(v)) for v in shown))
        raise errors.KernelRuntimeError(errors.OutOfBoundsError, record, _first_bad(addr, m))
    alloc = allocs[int(slots[0]) - 1]
    return alloc, (addr - alloc.base_address) // size


def _first_bad(addr, m):
    return np.arange(addr.shape[0])[:1]


def _out_of_bounds(op, group, alloc, elem, idx, m, n, masked):
    bad = (idx < 0) | (idx >= n)
    if m is not None:
        bad &= m
    bad = np.broadcast_to(bad, idx.shape)
    per_program = bad.reshape(bad.shape[0], -1).any(axis=1)
    positions = np.nonzero(per_program)[0]
    if bad.shape[0] == 1 and group.size > 1:
        positions = np.arange(group.size)
    first = int(positions[0])
    row = min(first, bad.shape[0] - 1)
    lane_bad, lane_idx = bad[row], np.broadcast_to(idx, bad.shape)[row]
    offsets = lane_idx[lane_bad] - alloc.base_offset
    lanes = np.argwhere(lane_bad)
    low, high = -alloc.base_offset, n - 1 - alloc.base_offset
    first_lane = tuple(int(v) for v in lanes[0]) if lanes.size else ()
    kind = op if op in ("load", "store") else "atomic"
    record = errors.diagnostic(
        "out_of_bounds", op=kind, call=op, tensor=alloc.name,
        side="past" if offsets.max() > high else "before", bad=int(lane_bad.sum()), total=int(lane_bad.size),
        lane=first_lane[0] if len(first_lane) == 1 else first_lane, lanes=_lane_runs(lane_bad),
        offsets=offsets, n=n, low=low, high=high, masked=bool(masked),
        extreme=int(offsets.min() if offsets.min() < low else offsets.max()))
    error = errors.KernelRuntimeError(errors.OutOfBoundsError, record, positions)
    # the access it attempted, for a recording of the launch (observers/counters.py, `fail`)
    error.lanes = (kind, alloc, elem, lane_idx, None if m is None else np.broadcast_to(m, bad.shape)[row], lane_bad)
    raise error


def _lane_runs(lane_bad):
    """The out-of-range lanes as runs of flat lane indices (row-major over the block)."""
    return Runs.of(np.flatnonzero(lane_bad))


def _emit(group, kind, alloc, elem, index, raw, m, shape, op=None, ptr=None, mask=None):
    """Tell the group's observers (counters, sanitizer) about an access; nothing to do without them. With
    `ptr` (and the op's `mask`), a tile-shaped pointer block's tile form comes along with the lanes."""
    if group.observers:
        tile = tile_of(ptr, mask, shape) if isinstance(ptr, pointer_block) and ptr.shape == shape else None
        group.emit(Access(kind, alloc, elem, shape, (index, raw, m), tile, op=op))


def _emit_tile(group, kind, ptr, mask, shape, elem):
    """The event of an access the tile shortcut performs: its tile form when the mask is on for a prefix
    rectangle, and the same lanes the general path would report, each built when an observer asks."""
    if group.observers:
        def lanes():
            idx, m = _lanes(group, ptr, mask, shape)
            # masked-off lanes may point outside the array (a lane-prefix tile): report them as offset 0
            return idx if m is None else np.where(m, idx, 0), idx, m

        group.emit(Access(kind, ptr.alloc, elem, shape, lanes, tile_of(ptr, mask, shape)))


def _lane_prefix(mask, shape):
    """k when a 1-D block's mask is on for lanes 0..k-1 only, in every program (the row kernels'
    `cols < n_cols`), else None. Those lanes form a shorter tile: loads and stores take the tile path even
    where the masked-off tail would run past the array."""
    if mask is None or len(shape) != 1 or isinstance(mask, outer) or mask.shape != shape or mask.data.shape[0] != 1:
        return None
    m = mask.data.reshape(-1)
    k = int(np.count_nonzero(m))
    if k == 0 or k == m.size or not m[:k].all():
        return None
    return k


def _tile_in_range(ptr, shape, numel):
    """`ptr`'s tile form (origins, strides) when every lane of a `shape` tile at each origin lies in
    [0, numel), else None."""
    if ptr.shape is shape or ptr.shape == shape:
        lo, hi = ptr.bounds
        if lo >= 0 and hi < numel:
            return ptr.tile()
    form = ptr.tile()
    if form is None or min(form[1]) < 0:
        return None
    low, high = ptr.window()[:2]
    span = sum((n - 1) * s for n, s in zip(shape, form[1]))
    return form if low >= 0 and high + span < numel else None


def _load_tile(group, ptr, mask, shape, elem):
    """The raw values of a load through a tile-shaped pointer block whose every lane is in bounds (masked or
    not), gathered without an index array; None for the general path. With a lane-prefix mask (_lane_prefix),
    only the prefix is read; the other lanes hold zeros, for the caller to fill with `other`. Returns (raw,
    the prefix's length or None), or (None, None)."""
    if not isinstance(ptr, pointer_block) or (ptr.shape is not shape and ptr.shape != shape):
        return None, None
    k = _lane_prefix(mask, shape)
    inner = shape if k is None else (k,)
    if _tile_in_range(ptr, inner, ptr.alloc.numel(elem)) is None:
        return None, None
    tile = tile_view(ptr, ptr.alloc.flat(elem), inner)
    if tile is None:
        return None, None
    _emit_tile(group, "load", ptr, mask, shape, elem)
    view, origins = tile
    if k is None:
        return view[origins], None
    raw = np.empty(origins.shape[:1] + shape, view.dtype)
    raw[:, :k] = view[int(origins[0])] if origins.shape[0] == 1 else view[origins]
    raw[:, k:] = 0
    return raw, k


def _store_tile(group, ptr, mask, shape, elem, val) -> bool:
    """Store through a tile-shaped pointer block with every lane on (or a lane-prefix mask: the prefix) and
    in bounds, without an index array (the journal keeps the view and the old tiles); False for the general
    path."""
    if not isinstance(ptr, pointer_block) or (ptr.shape is not shape and ptr.shape != shape):
        return False
    alloc = ptr.alloc
    if not alloc.writeable:
        return False
    k = _lane_prefix(mask, shape)
    if k is None and _mask_lanes(mask, shape) is not None:
        return False
    inner = shape if k is None else (k,)
    if _tile_in_range(ptr, inner, alloc.numel(elem)) is None:
        return False
    tile = tile_view(ptr, alloc.flat(elem), inner, for_store=True)
    if tile is None:
        return False
    view, origins = tile
    vd = expand(to_storage(val.data, elem), val.shape, len(shape))
    if k is not None:
        vd = vd[:, :k]
    if vd.shape[0] != 1 and vd.shape[0] != origins.shape[0]:
        return False
    _emit_tile(group, "store", ptr, mask, shape, elem)
    group.before_store(alloc)
    if group.journal is not None:
        old = view[origins]
        group.journal.append((view, origins, old))
        group.meter.hold(old.nbytes)
    view[origins] = vd
    return True


@builtin
def load(pointer, mask=None, other=None, boundary_check=(), padding_option="", cache_modifier="",
         eviction_policy="", volatile=False):
    """Load a block (or scalar) through pointers.

    * masked-off lanes read `other` (cast to the pointee type), or 0 without it (measured on the GPU;
      Triton leaves them undefined);
    * every unmasked lane must point inside the tensor argument the pointer came from, otherwise
      OutOfBoundsError names the kernel line, program, lanes and offsets (a GPU would not tell you).
    """
    if isinstance(pointer, block_pointer):
        programs.current("load")
        if padding_option not in ("", None, "zero", "nan"):
            raise errors.python_error(ValueError, errors.diagnostic("padding_option", option=padding_option))
        pointer, mask, other = lower_load(pointer, mask, other, boundary_check, padding_option)
        boundary_check, padding_option = (), ""
    group = programs.current("load")
    if padding_option not in ("", None, "zero", "nan"):
        raise errors.python_error(ValueError, errors.diagnostic("padding_option", option=padding_option))
    if unwrap(padding_option) or unwrap(boundary_check):  # Triton 3.6 _load_legacy (its missing space kept)
        raise errors.python_error(ValueError, errors.diagnostic("load_boundary_check"))
    if unwrap(mask) is None and unwrap(other) is not None:
        raise errors.python_error(ValueError, errors.diagnostic("other_without_mask"))
    ptr, mask, vals, shape = _prepare("load", pointer, mask, {"other": other})
    masked, mask = mask is not None, _running(group, mask)
    elem = ptr.dtype.element_ty
    raw, prefix = _load_tile(group, ptr, mask, shape, elem)
    if prefix is not None:
        m = mask.data  # lanes 0..prefix-1 on, in every program
    elif raw is not None:
        m = _mask_lanes(mask, shape)
        if m is not None and m.shape[0] > raw.shape[0]:  # (a mask with fewer rows broadcasts below)
            g = m.shape[0]
            raw = np.broadcast_to(raw, (g,) + shape).copy()
            m = np.broadcast_to(m, (g,) + shape)
    else:
        idx, m = _lanes(group, ptr, mask, shape)
        alloc, safe = _resolve("load", group, ptr, idx, m, masked)
        flat = alloc.flat(elem)
        _emit(group, "load", alloc, elem, safe, idx, m, shape, ptr=ptr, mask=mask)
        if flat.shape[0] == 0:
            raw = np.zeros(safe.shape, elem.np_storage)
        else:
            raw = flat.take(safe)
    values = from_storage(raw, elem)
    if elem.is_bool():  # loaded as int8, then `!= 0` (a byte other than 0 and 1 may be there, see store)
        values = values.view(np.uint8) != 0
    if m is not None:
        other_v = vals["other"]
        if other_v is None:
            fill = np.zeros((), elem.np_compute)
        else:  # NumPy broadcasts it: m and values already have the full shape
            fill = expand(cast(other_v, elem).data, other_v.shape, len(shape))
        if prefix is not None and fill.size == 1:
            values[:, prefix:] = fill.reshape(())
        elif fill.ndim == 0 or fill.shape[0] == 1 or fill.shape[0] == values.shape[0]:
            # In place on the fresh gather, under the mask before broadcasting: 3x cheaper than np.where.
            np.copyto(values, fill, where=~expand(mask.data, mask.shape, len(shape)))
        else:  # `other` varies by program where pointer and mask do not
            values = np.where(m, values, fill)
    return tensor(values, elem, shape)


@builtin(method=True)
def store(pointer, value, mask=None, boundary_check=(), cache_modifier="", eviction_policy=""):
    """Store `value` (cast to the pointee type, RTNE for floats) through pointers where `mask` is on.

    Unmasked lanes are bounds-checked like `tl.load`; nothing outside the tensor argument is written.
    """
    if isinstance(pointer, block_pointer):
        programs.current("store")
        pointer, value, mask = lower_store(pointer, value, mask, boundary_check)
        boundary_check = ()
    group = programs.current("store")
    if unwrap(boundary_check):  # Triton 3.6 _store_legacy
        raise errors.python_error(ValueError, errors.diagnostic("store_boundary_check"))
    ptr, mask, vals, shape = _prepare("store", pointer, mask, {"value": value})
    masked, mask = mask is not None, _running(group, mask)
    elem = ptr.dtype.element_ty
    if elem.is_bool():
        # Triton 3.6 stores through *i1 as *i8 and casts the value straight to int8 (not `!= 0` first): 0.5 stores
        # byte 0, 256 byte 0, 2 byte 2
        elem = T.int8
    val = cast(vals["value"], elem)
    if _store_tile(group, ptr, mask, shape, elem, val):
        return None
    idx, m = _lanes(group, ptr, mask, shape)
    alloc, safe = _resolve("store", group, ptr, idx, m, masked)
    if not alloc.writeable:
        raise errors.python_error(ValueError, errors.diagnostic("read_only_store", op="store",
                                                                tensor=alloc.name))
    flat = alloc.flat(elem)
    vd = expand(to_storage(val.data, elem), val.shape, len(shape))
    g = max(safe.shape[0], vd.shape[0], m.shape[0] if m is not None else 1)
    full = (g,) + shape
    safe = _to_full(safe, full)
    vd = _to_full(vd, full)
    if m is None:
        sel_idx, sel_val = safe.reshape(-1), vd.reshape(-1)
    else:
        m = np.ascontiguousarray(_to_full(m, full))  # a broadcast mask makes boolean indexing ~3x slower
        sel_idx, sel_val = safe[m], vd[m]
    _emit(group, "store", alloc, elem, safe, idx, m, shape, ptr=ptr, mask=mask)
    group.before_store(alloc)
    if group.journal is not None:
        old = flat[sel_idx]
        group.journal.append((flat, sel_idx, old))
        group.meter.hold(old.nbytes + (sel_idx.nbytes if sel_idx.base is None else 0))
    # the scatter's own index and value arrays, alive until here
    group.meter.hold(0, (sel_idx.nbytes if sel_idx.base is None else 0) + (sel_val.nbytes if sel_val.base is None else 0))
    flat[sel_idx] = sel_val
    return None


# ---------------------------------------------------------------- atomics

def atomic_rmw(op, pointer, val, mask=None, sem=None, scope=None):
    """Read-modify-write atomics (`op`: add, max, min, and, or, xor, xchg): every active lane's update is
    applied once, and each lane gets the value memory held just before its own update (memory/rmw.py)."""
    group = programs.current(f"atomic_{op}")
    for value, kind in ((sem, "semantic"), (scope, "semantic")):
        value = unwrap(value)
        if value not in (None, "", "acquire", "release", "acq_rel", "relaxed", "gpu", "cta", "sys"):
            raise errors.python_error(ValueError, errors.diagnostic("memory_semantic", what=kind, value=value))
    ptr, mask, vals, shape = _prepare(f"atomic_{op}", pointer, mask, {"val": val})
    elem = ptr.dtype.element_ty
    rmw.check_type(elem, op)
    v = cast(vals["val"], elem)
    return _atomic_apply(group, op, ptr, mask, shape, elem, broadcast_data(v, shape), mask is not None)


@builtin(method=True)
def atomic_cas(pointer, cmp, val, sem=None, scope=None):
    """`tl.atomic_cas`: where memory holds the bit pattern of `cmp`, write `val`; returns the old values."""
    group = programs.current("atomic_cas")
    ptr, _, vals, shape = _prepare("atomic_cas", pointer, None, {"cmp": cmp, "val": val})
    elem = ptr.dtype.element_ty
    if elem.primitive_bitwidth not in (16, 32, 64):
        raise errors.python_error(ValueError, errors.diagnostic("atomic_cas_width",
                                                                width=elem.primitive_bitwidth))
    c = broadcast_data(cast(vals["cmp"], elem), shape)
    v = broadcast_data(cast(vals["val"], elem), shape)
    both = np.stack(np.broadcast_arrays(c, v), axis=-1)
    return _atomic_apply(group, "cas", ptr, None, shape, elem, both, False)


def _atomic_apply(group, op, ptr, mask, shape, elem, operand, masked):
    idx, m = _lanes(group, ptr, _running(group, mask), shape)
    alloc, safe = _resolve(f"atomic_{op}", group, ptr, idx, m, masked)
    if not alloc.writeable:
        raise errors.python_error(ValueError, errors.diagnostic("read_only_atomic", op=f"atomic_{op}",
                                                                tensor=alloc.name))
    flat = alloc.flat(elem)
    # every program of the group does its own update, even when pointer, value and mask are uniform
    g = max(group.size, safe.shape[0], operand.shape[0], m.shape[0] if m is not None else 1)
    full = (g,) + shape
    safe = np.broadcast_to(safe, full).reshape(-1)
    extra = operand.shape[len(full):]
    operand = np.broadcast_to(operand, full + extra).reshape((-1,) + extra)
    active = None if m is None else np.broadcast_to(m, full).reshape(-1)
    shaped = safe.reshape(full)
    _emit(group, "atomic", alloc, elem, shaped, idx, None if m is None else active.reshape(full), shape, op)
    old_all = np.zeros(safe.shape, elem.np_compute)
    lanes = None if active is None else np.flatnonzero(active)
    targets = safe if lanes is None else safe[lanes]
    if targets.size:
        group.before_store(alloc)
        if group.journal is not None:
            group.journal.append((flat, targets, flat[targets]))
        old = rmw.apply(flat, targets, operand if lanes is None else operand[lanes], op, elem)
        if lanes is None:
            old_all = old
        else:
            old_all[lanes] = old
    return tensor(old_all.reshape(full), elem, shape)
