"""The launcher: runs a kernel's programs a *group* at a time, every value carrying a program axis.

Programs are numbered x-outermost, z-fastest (Triton's interpreter order). The first group measures how
large its values get (the largest, and all those held at once); the rest run in equal groups sized so one
value fits in cache and the group's values stay within a share of the launch's array bytes. Python control flow that differs between the programs of a group raises `Diverged`: the group's
stores are rolled back (they are journaled) and it is split by that value, the parts re-run in program
order. Errors are reported for the first failing program in launch order, after every earlier program
has run, so results, errors and counters do not depend on the grouping.
"""
from __future__ import annotations

import dis
import os
import types

import numpy as np

from minitriton.values import programs
from minitriton.observers import counters
from minitriton.semantics import numerics
from minitriton import errors
from minitriton.values.programs import KERNEL_CODES
from minitriton.runtime.arguments import convert_argument
from minitriton.runtime.group import Group
from minitriton.values.programs import Diverged, OverBudget
from minitriton.memory.allocation import Allocation
from minitriton.observers.sanitizer import LaunchSanitizer
from minitriton.options import options

MAX_GRID = (2**31 - 1, 65535, 65535)


class Launch:
    """One kernel launch: grid, allocations, counters."""

    def __init__(self, kernel, grid: tuple, constexprs: dict):
        self.kernel = kernel
        self.grid = grid
        self.n = grid[0] * grid[1] * grid[2]
        self.constexprs = constexprs
        self.allocations: list[Allocation] = []
        self.recording = counters.active()
        self.recorder = None
        if self.recording is not None:
            traced = [self.linear_id(p) for p in getattr(self.recording, "trace_programs", [])]
            self.recorder = counters.LaunchCounters(self.n, [p for p in traced if p is not None],
                                                    getattr(self.recording, "accesses", False))
        self.options = options()             # read once per launch, as Triton reads its settings per compile
        self.debug = bool(kernel.debug) or self.options.debug
        self.f32_default = self.options.f32_default
        self.static_printed = set()
        self.sanitizer = None
        if self.options.sanitize:
            self.sanitizer = LaunchSanitizer(self)
        self.observers = tuple(o for o in (self.sanitizer, self.recorder) if o is not None)
        self.compiled = False                # a launch of the same specialization completed before
        self.snapshots = {}                  # allocation index -> its bytes before the launch wrote to it
        self.snapshot_bytes = 0

    def before_write(self, alloc):
        """Keep a copy of an allocation before the launch first writes it, so that a compile-time error
        (which on a GPU prevents the launch) can leave memory untouched. Bounded: copies stop once they
        would exceed half the launch's array bytes (or options.undo_bytes)."""
        if alloc.index in self.snapshots:
            return
        if self.compiled:  # this specialization launched before without error: Triton has compiled it
            self.snapshots[alloc.index] = None
            return
        arrays = sum(a.nbytes for a in self.allocations)
        if self.snapshot_bytes + alloc.nbytes > min(self.options.undo_bytes, max(arrays // 2, 2**16)):
            self.snapshots[alloc.index] = None
            return
        self.snapshots[alloc.index] = alloc.raw.copy()
        self.snapshot_bytes += alloc.nbytes

    def can_undo(self) -> bool:
        """Whether every allocation written so far has a snapshot."""
        return all(saved is not None for saved in self.snapshots.values())

    def undo(self):
        """Restore every allocation the launch wrote (best effort: those with a snapshot)."""
        for index, saved in self.snapshots.items():
            if saved is not None:
                self.allocations[index - 1].raw[...] = saved

    def add_allocation(self, name, array, elem, original) -> Allocation:
        alloc = Allocation(len(self.allocations) + 1, name, array, elem, original)
        self.allocations.append(alloc)
        return alloc

    def coords(self, pids: np.ndarray):
        """Linear program ids -> (x, y, z) int32 arrays."""
        _, gy, gz = self.grid
        z = (pids % gz).astype(np.int32)
        y = ((pids // gz) % gy).astype(np.int32)
        x = (pids // (gy * gz)).astype(np.int32)
        return x, y, z

    def linear_id(self, program):
        """The linear index of a program given as an int or an (x[, y[, z]]) tuple; None if outside the grid."""
        coords = (program,) if isinstance(program, (int, np.integer)) else tuple(program)
        coords = tuple(int(c) for c in coords) + (0,) * (3 - len(coords))
        if any(not 0 <= c < g for c, g in zip(coords, self.grid)):
            return None
        x, y, z = coords
        return (x * self.grid[1] + y) * self.grid[2] + z

    def pid_tuple(self, pid: int) -> tuple:
        return errors.program_id(int(pid), self.grid)


def normalize_grid(grid, meta: dict) -> tuple:
    """A grid tuple (or callable of the meta-parameters) as three ints, checked against CUDA's limits."""
    if callable(grid):
        grid = grid(meta)
    if isinstance(grid, (int, np.integer)):
        grid = (grid,)
    if not isinstance(grid, (tuple, list)):
        raise errors.LaunchError(f"the grid must be a tuple of 1 to 3 ints (or a callable of the meta-parameters "
                                 f"returning one), got {type(grid).__name__} ({grid!r})")
    grid = tuple(grid)
    if not 1 <= len(grid) <= 3:
        raise errors.LaunchError(f"the grid must have 1 to 3 dimensions, got {grid!r}")
    dims = []
    for i, d in enumerate(grid):
        if hasattr(d, "__index__"):
            d = int(d)
        if not isinstance(d, int):
            raise errors.LaunchError(f"grid dimension {i} must be an int, got {type(d).__name__} ({d!r})")
        dims.append(d)
    dims += [1] * (3 - len(dims))
    for axis, (d, limit) in enumerate(zip(dims, MAX_GRID)):
        if d < 0:
            raise errors.LaunchError(f"grid dimension {axis} is negative: {d}")
        if d > limit:
            raise errors.LaunchError(
                f"grid {tuple(dims[:len(grid)])} exceeds CUDA's limit on axis {axis}: at most {limit} programs "
                f"(a GPU fails with 'Triton Error [CUDA]: invalid argument'); fix: launch fewer programs on that "
                f"axis and loop inside the kernel, or move the work to axis 0 (limit 2**31 - 1)")
    return tuple(dims)


def launch(kernel, args, kwargs, grid, warmup=False):
    """Bind arguments, build the allocations and run every program of the grid."""
    values, launch_options = kernel.bind(list(args), dict(kwargs))
    kernel.check_scoping()
    meta = dict(values)
    meta.update(launch_options)
    grid3 = normalize_grid(grid, meta)
    constexprs = {kernel.arg_names[i]: values[kernel.arg_names[i]] for i in kernel.constexprs}
    run = Launch(kernel, grid3, constexprs)
    if launch_options.get("debug"):
        run.debug = True
    call_args = []
    for i, name in enumerate(kernel.arg_names):
        is_constexpr = i in kernel.constexprs
        specialize = name not in kernel.do_not_specialize
        call_args.append(convert_argument(name, values[name], is_constexpr, specialize, run))
    if warmup:
        return None
    completed = kernel.cache.setdefault("completed", set())
    spec = _specialization(constexprs, call_args)
    run.compiled = spec in completed
    fn = kernel.kernel_fn
    with np.errstate(all="ignore"):
        quiet_before = numerics.already_quiet
        numerics.already_quiet = True
        try:
            _schedule(run, lambda: fn(*call_args))
        finally:
            numerics.already_quiet = quiet_before
    completed.add(spec)
    if run.recording is not None:
        run.recording.launches.append(run.recorder.report(run))
    return None


def _specialization(constexprs: dict, call_args: list):
    """What Triton compiles a kernel for: constexpr values and argument types (ints equal to 1 apart).

    Once a launch of a specialization has completed, a compile-time error cannot stop a later one (Triton
    compiled it), so later launches keep no undo copies of the arrays they write (Launch.before_write)."""
    kinds = []
    for a in call_args:
        if hasattr(a, "block_shape") and hasattr(a, "type"):  # a tensor descriptor: its block type
            kinds.append(str(a.type))
            continue
        dtype = getattr(a, "dtype", None)
        kinds.append(str(dtype) if dtype is not None else (type(a).__name__, a == 1 if isinstance(a, int) else None))
    return tuple(sorted((k, repr(v)) for k, v in constexprs.items())), tuple(kinds)


def _group_cap(run: Launch) -> int:
    cap = run.options.group_size
    return max(1, cap) if cap else run.n


def _schedule(run: Launch, call):
    """Run all programs of `run` in groups (see the module docstring for the rules)."""
    n = run.n
    if n == 0:
        return
    cap = _group_cap(run)
    # A value of the group should fit in cache (speed), and all the values the group holds at once should stay
    # below a share of the launch's arrays (memory: the emulator's working set stays below the kernel's own).
    arrays = sum(a.nbytes for a in run.allocations)
    target = min(run.options.value_budget, run.options.group_bytes)
    live_budget = max(MIN_LIVE_BYTES, int(arrays * LIVE_SHARE))
    # How large one program's values get: learned from earlier launches with the same constexprs, else from
    # the first group, which shrinks (OverBudget) until its values fit.
    sizes = run.kernel.cache.setdefault("program_bytes", {})
    key = tuple(sorted((k, repr(v)) for k, v in run.constexprs.items()))
    known = sizes.get(key)
    chunk = min(cap, _fitting(target, live_budget, *known) if known else FIRST_GROUP)
    limit = 2 * target if known else min(target, live_budget)
    queue: list[np.ndarray] = []
    next_start = 0
    committed = np.zeros(n, bool)
    replaying = False
    while queue or next_start < n:
        if not queue:
            # equal parts: 64 programs at 19 per group run as 16+16+16+16, not 19+19+19+7 (a pass costs
            # about the same Python time whatever its size)
            left = n - next_start
            stop = next_start + -(-left // -(-left // chunk))
            queue.append(np.arange(next_start, stop, dtype=np.int64))
            next_start = stop
        pids = queue.pop(0)
        group = Group(run, pids, limit)
        if group.journal is None and any(q[0] < pids[0] for q in queue):
            group.journal = []  # it may have to run again after earlier programs
        if replaying:
            group.quiet = True
        outcome = _run_group(group, call)
        if outcome is None:
            committed[pids] = True
            value, live = sizes.get(key, (0, 0))
            value = max(1, group.meter.peak // group.size, value)
            live = max(1, group.meter.live_peak // group.size, live)
            sizes[key] = value, live
            chunk = min(cap, _fitting(target, live_budget, value, live))
            limit = max(target, run.options.value_budget if chunk == 1 else 2 * target)
            continue
        kind, payload = outcome
        if kind == "split":
            queue[:0] = _split_by_value(pids, payload)
        elif kind == "smaller":
            chunk = max(1, min(chunk, len(pids) // 2))
            queue = [q[i:i + chunk] for q in [pids] + queue for i in range(0, len(q), chunk)]
        else:  # an error in program `failing`
            exc, failing = payload
            earlier = [q[q < failing] for q in [pids] + queue]
            earlier = [q for q in earlier if len(q)]
            if len(pids) == 1 and not earlier:
                if isinstance(exc, errors.KernelRuntimeError) and committed[failing + 1:].any() and run.can_undo():
                    # Later programs already ran (a split ran them early): replay the launch up to the failing
                    # program, so memory ends as if programs had run one at a time, in order.
                    run.undo()
                    if run.sanitizer is not None:
                        run.sanitizer.reset()
                    committed[:] = False
                    queue = [np.arange(i, min(i + chunk, failing), dtype=np.int64) for i in range(0, failing, chunk)]
                    queue.append(np.array([failing], np.int64))
                    next_start = n
                    replaying = True
                    continue
                _flush_prints(group)
                if not isinstance(exc, errors.KernelRuntimeError):
                    run.undo()  # Triton would have refused to compile: no program may have written anything
                    if run.sanitizer is not None:
                        run.sanitizer.reset()
                raise _finalize(run, exc, failing)
            later = [q[q > failing] for q in [pids] + queue]
            queue = earlier + [np.array([failing], np.int64)] + [q for q in later if len(q)]


FIRST_GROUP = 64
LIVE_SHARE = 0.7            # the values a group holds at once: at most this share of the launch's array bytes
MIN_LIVE_BYTES = 256 * 2**10  # ... or this much, for small launches (memory does not matter there, speed does)


def _fitting(target: int, live_budget: int, value: int, live: int) -> int:
    """Programs per group: each value within `target` bytes, all live values within `live_budget`."""
    return max(1, min(target // value, live_budget // live))


def _split_by_value(pids: np.ndarray, values: np.ndarray) -> list:
    """Sub-groups of programs sharing a value, ordered by their first program."""
    values = np.ascontiguousarray(values)
    if values.dtype.kind == "f":
        values = values.view(np.int32 if values.itemsize == 4 else np.int64 if values.itemsize == 8 else np.int16)
    _, first, inverse = np.unique(values, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    return [pids[inverse.ravel() == k] for k in order]


def _run_group(group: Group, call):
    programs.set_current(group)
    try:
        call()
    except Diverged as d:
        group.rollback()
        return "split", d.values
    except OverBudget:
        group.rollback()
        return "smaller", None
    except errors.KernelRuntimeError as e:
        group.rollback()
        return "error", (e, int(group.pids[int(e.positions[0])]))
    except Exception as e:  # compile-time-like errors: the same in every program of the group
        group.rollback()
        return "error", (e, int(group.pids[0]))
    finally:
        programs.set_current(None)
    group.commit()
    return None


def _flush_prints(group: Group):
    for line in group.prints:
        print(line)
    group.prints = []


# ---------------------------------------------------------------- error reporting

def _kernel_frames(tb):
    """The traceback entries that are inside @jit functions, outermost first."""
    frames = []
    while tb is not None:
        jit_fn = KERNEL_CODES.get(tb.tb_frame.f_code)
        if jit_fn is not None:
            frames.append((tb, jit_fn))
        tb = tb.tb_next
    return frames


def _position(tb):
    code = tb.tb_frame.f_code
    try:
        positions = list(code.co_positions())
        line, _, col, _ = positions[tb.tb_lasti // 2]
        return (line or tb.tb_lineno), (col or 0)
    except (AttributeError, IndexError, TypeError):
        return tb.tb_lineno, 0


def _user_traceback(frames):
    tb_next = None
    for tb, _ in reversed(frames):
        tb_next = types.TracebackType(tb_next, tb.tb_frame, tb.tb_lasti, tb.tb_lineno)
    return tb_next


def _finalize(run: Launch, exc: BaseException, failing: int) -> BaseException:
    """The exception the user sees: located at the kernel line, naming the program."""
    frames = _kernel_frames(exc.__traceback__)
    pid = run.pid_tuple(failing)
    if not frames:
        return exc
    tb, jit_fn = frames[-1]
    line, col = _position(tb)
    user_tb = _user_traceback(frames)
    if isinstance(exc, errors.KernelRuntimeError):
        final = exc.finalize(f"{os.path.basename(jit_fn.file_name)}:{line}", pid)
        final.__cause__ = None
        return _located(final, jit_fn, line, col, pid).with_traceback(user_tb)
    if isinstance(exc, errors.CompilationError):
        if getattr(exc, "lineno", None) is None:
            _located(exc, jit_fn, line, col, None)
        return exc
    if isinstance(exc, errors.StaticAssertionFailed):
        final = errors.CompileTimeAssertionFailure(errors.compilation_text(jit_fn, line, col, str(exc)))
        final.__cause__ = None
        return _located(final, jit_fn, line, col, None).with_traceback(user_tb)
    if isinstance(exc, (AssertionError, ValueError, TypeError, NameError, NotImplementedError, IndexError,
                        AttributeError, ZeroDivisionError, RuntimeError, KeyError, OverflowError)):
        below = _frame_below(exc.__traceback__, tb)
        dunder = below is not None and below.tb_frame.f_code.co_name.startswith("__")
        message = repr(exc) if dunder or below is None or _at_operator(tb) else str(exc)
        final = errors.CompilationError(errors.compilation_text(jit_fn, line, col, message))
        final.__cause__ = exc
        final.error = exc
        return _located(final, jit_fn, line, col, None).with_traceback(user_tb)
    return exc


_OPERATOR_OPS = frozenset(op for op, name in enumerate(dis.opname)
                          if name in ("BINARY_OP", "COMPARE_OP", "BINARY_SUBSCR", "UNARY_NEGATIVE", "UNARY_INVERT",
                                      "UNARY_NOT", "CONTAINS_OP") or name.startswith("BINARY_"))


def _at_operator(tb) -> bool:
    """Whether the kernel line failed in an operator (`p < q`, `x // y`, `x[i]`) rather than a call. Triton's
    code generator shows an operator's error as `repr(e)` (its `visit` wrapper), a builtin call's as `str(e)`."""
    code = tb.tb_frame.f_code.co_code
    return 0 <= tb.tb_lasti < len(code) and code[tb.tb_lasti] in _OPERATOR_OPS


def _located(exc, jit_fn, line, col, pid):
    """Attach where the error happened, for tools (the sandbox points at the line and the program)."""
    exc.kernel = jit_fn.__name__
    exc.filename = jit_fn.file_name
    exc.lineno = line
    exc.col = col
    exc.program = pid
    return exc


def _frame_below(tb, target):
    while tb is not None:
        if tb is target:
            return tb.tb_next
        tb = tb.tb_next
    return None
