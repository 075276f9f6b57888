"""The read-modify-write of the atomics: how each lane's update combines with memory, and the order updates
to one address are applied in.

Every active lane of every program does its own update, once. Updates to one address are applied one after
another in lane order (program-major: program 0's lanes first, in row-major order), and each lane gets the
value memory held just before its own update. That is one serial order the GPU may pick (it guarantees no
order between programs or lanes, S1.37); updates to different addresses commute. Returned values and memory
are what that serial execution gives, grouped or not.

Float `atomic_max` / `atomic_min` follow Triton's lowering to integer atomics on the bit patterns (S11.5),
`atomic_cas` compares bit patterns (S11.6).
"""
from __future__ import annotations

import numpy as np

from minitriton import errors
from minitriton.semantics import dtypes as T
from minitriton.semantics import numerics
from minitriton.semantics.casts import from_storage, to_storage

_BITWISE = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}


def check_type(elem, op: str):
    """Refuse, in Triton's words, an element type the read-modify-write `op` has no atomic for."""
    if (elem.is_fp16() or elem.is_bf16()) and op != "add":
        dtype = "fp16" if elem.is_fp16() else "bf16"
        raise errors.python_error(ValueError, errors.diagnostic("atomic_type", op=op, dtype=dtype))
    if elem in (T.int16, T.uint16) or elem.primitive_bitwidth < 16:
        raise errors.python_error(ValueError, errors.diagnostic("atomic_type", op=op, dtype=elem))


def _float_order_key(bits: np.ndarray) -> np.ndarray:
    """The signed integers whose order is the order Triton's float max/min lowering gives the bit patterns
    `bits` (signed ints of the float's width): `-NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN`.

    Triton 3.6/3.9 `semantic.atomic_max` on fp32/fp64: a lane whose value has its sign bit clear does a
    signed integer max on the bit patterns, one with the sign bit set an unsigned integer min (`atomic_min`:
    signed min / unsigned max). Both are the max of this one order, whatever memory holds."""
    low = np.array(np.iinfo(bits.dtype).max, bits.dtype)
    return np.where(bits < 0, bits ^ low, bits)


def _float_extreme(op: str, old: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Float `atomic_max` / `atomic_min`: `old` or `v`, whichever wins in the bit-pattern order above (a
    NaN in memory with its sign clear stays for max, -0.0 loses to +0.0)."""
    ints = np.dtype(f"i{old.dtype.itemsize}")
    v = np.asarray(v, old.dtype)
    key_old = _float_order_key(np.ascontiguousarray(old).view(ints))
    key_v = _float_order_key(np.ascontiguousarray(v).view(ints))
    wins = key_v > key_old if op == "max" else key_v < key_old
    return np.where(wins, v, old)


def _same_bits(a: np.ndarray, b: np.ndarray, elem) -> np.ndarray:
    """Whether the storage bit patterns of `a` and `b` (compute-dtype values of `elem`) are equal."""
    a, b = to_storage(np.asarray(a), elem), to_storage(np.asarray(b, a.dtype), elem)
    if a.dtype.kind == "f":
        unsigned = np.dtype(f"u{a.dtype.itemsize}")
        a, b = np.ascontiguousarray(a).view(unsigned), np.ascontiguousarray(b).view(unsigned)
    return a == b


def update_of(op: str, elem):
    """The function (old values, operands) -> new values of atomic `op` on elements of type `elem`, in the
    compute dtype. `cas` operands carry (cmp, val) on their last axis."""
    if op == "cas":
        # atom.cas compares bit patterns: -0.0 does not match +0.0, a NaN matches the same NaN
        return lambda old, cv: np.where(_same_bits(old, cv[..., 0], elem), cv[..., 1], old)
    if op in ("max", "min"):
        if elem.is_floating():
            return lambda old, v: _float_extreme(op, old, v)
        return np.maximum if op == "max" else np.minimum
    if op == "xchg":
        return lambda old, v: np.asarray(v, old.dtype)
    if op in _BITWISE:
        if elem.is_floating():  # 3.6 compiles them on fp32/fp64 (atom.and.b32/.b64): the bit patterns (S15.22)
            bits = np.dtype(f"u{elem.itemsize}")
            fn = _BITWISE[op]
            return lambda old, v: fn(np.ascontiguousarray(old).view(bits),
                                     np.ascontiguousarray(np.asarray(v, old.dtype)).view(bits)).view(old.dtype)
        return _BITWISE[op]
    if elem.is_bf16():
        return lambda old, v: numerics.round_to_bf16(old + v)
    return lambda old, v: old + v


def _accumulator(op: str, elem):
    """The ufunc whose `accumulate` over (memory, v0, v1, ...) gives every running value of a run of `op`
    updates to one address exactly as applying them one by one would; None where there is none."""
    if op == "add" and (elem.is_int() or elem in (T.float32, T.float64)) and not elem.is_bool():
        return np.add  # integers wrap; fp32/fp64 accumulate rounds after every addition, as the updates do
    if elem.is_floating() or elem.is_bool():
        return None
    return {"max": np.maximum, "min": np.minimum, **_BITWISE}.get(op)


def apply(flat: np.ndarray, targets: np.ndarray, operand: np.ndarray, op: str, elem) -> np.ndarray:
    """Apply lane k's update of `operand[k]` to `flat[targets[k]]` for every k, in lane order per address;
    return the value each lane saw before its update (compute dtype)."""
    update = update_of(op, elem)
    n = targets.size
    if n == 0:
        return np.zeros(0, elem.np_compute)
    order = np.argsort(targets, kind="stable")
    sorted_targets = targets[order]
    first = np.empty(n, bool)
    first[0] = True
    np.not_equal(sorted_targets[1:], sorted_targets[:-1], out=first[1:])
    if np.count_nonzero(first) == n:  # no two lanes on one address: one vector step
        old = from_storage(flat[targets], elem)
        flat[targets] = to_storage(update(old, operand), elem)
        return old
    starts = np.flatnonzero(first)
    out = np.empty(n, elem.np_compute)
    rank = np.arange(n) - starts[np.cumsum(first) - 1]  # position of each sorted lane among its address's lanes
    rounds = int(rank.max()) + 1
    if starts.size < rounds and _runs_apply(op, elem):
        _apply_runs(flat, targets, operand, op, elem, order, starts, out)
        return out
    # round r updates the r-th lane of every address (distinct addresses, one vector step each)
    by_round = order[np.argsort(rank, kind="stable")]
    bounds = np.concatenate(([0], np.cumsum(np.bincount(rank))))
    for r in range(rounds):
        lanes = by_round[bounds[r]:bounds[r + 1]]
        where = targets[lanes]
        old = from_storage(flat[where], elem)
        flat[where] = to_storage(update(old, operand[lanes]), elem)
        out[lanes] = old
    return out


def _runs_apply(op: str, elem) -> bool:
    """Whether a run of `op` updates to one address is computed at once (`_run`) for `elem`."""
    return not (elem.is_bool() or (op == "add" and elem.is_bf16()))


def _apply_runs(flat, targets, operand, op, elem, order, starts, out):
    """Many lanes on few addresses: each address's run of updates computed at once (`_run`)."""
    ends = np.append(starts[1:], order.size)
    update = update_of(op, elem)
    for s, e in zip(starts.tolist(), ends.tolist()):
        lanes = order[s:e]
        t = int(targets[lanes[0]])
        now = from_storage(flat[t:t + 1].copy(), elem)
        seen, final = _run(op, elem, now, operand[lanes], update)
        out[lanes] = seen
        flat[t:t + 1] = to_storage(final, elem)


def _run(op, elem, now: np.ndarray, vals: np.ndarray, update):
    """(the value each update of a run sees, the value left) for updates `vals` applied one by one to
    `now` (a 1-element array): running reductions (`accumulate`) of the op, on the float keys or bit
    patterns where the op works on those."""
    compute = elem.np_compute
    if op == "xchg":
        vals = np.asarray(vals, compute)
        return np.concatenate((now, vals[:-1])), vals[-1:]
    if op == "cas":
        cmp, new = vals[..., 0], vals[..., 1]
        if _same_bits(cmp, cmp[:1], elem).all() and _same_bits(new, new[:1], elem).all():
            # one (cmp, val) for the whole run (a lock): the first update decides, the rest see its result
            after = update(now, vals[:1])
            return np.concatenate((now, np.repeat(after, len(cmp) - 1))), after
        seen = np.empty(len(cmp), compute)
        for k in range(len(cmp)):
            seen[k] = now[0]
            now = update(now, vals[k:k + 1])
        return seen, now
    seq = np.concatenate((now, np.asarray(vals, compute)))
    if elem.is_floating() and op != "add":
        ints = np.dtype(f"{'i' if op in ('max', 'min') else 'u'}{elem.itemsize}")
        bits = seq.view(ints)
        if op in ("max", "min"):  # max/min in the order of `_float_order_key`, which is its own inverse
            keys = _float_order_key(bits)
            running = _float_order_key((np.maximum if op == "max" else np.minimum).accumulate(keys)).view(compute)
        else:
            running = _BITWISE[op].accumulate(bits).view(compute)
    else:
        ufunc = {"add": np.add, "max": np.maximum, "min": np.minimum, **_BITWISE}[op]
        running = ufunc.accumulate(seq, dtype=compute)  # integers wrap; floats round after every step
    return running[:-1], running[-1:]
