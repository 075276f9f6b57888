"""A kernel launch: the arguments bound and turned into allocations, the grid checked against CUDA's limits,
then every program run by the scheduler (runtime/scheduler.py).
"""
from __future__ import annotations

import time

import numpy as np

from minitriton import errors
from minitriton.frontend.kernel_globals import launch_scope
from minitriton.memory.allocation import Allocation
from minitriton.observers import counters
from minitriton.observers.sanitizer import LaunchSanitizer
from minitriton.options import options
from minitriton.perf import devices, launch as perf_launch
from minitriton.runtime.arguments import convert_argument
from minitriton.runtime.scheduler import schedule
from minitriton.semantics import numerics

MAX_GRID = (2**31 - 1, 65535, 65535)


class Launch:
    """One kernel launch: grid, allocations, counters; a values.running.RunningLaunch."""

    def __init__(self, kernel, grid: tuple, constexprs: dict):
        self.kernel = kernel
        self.started = time.perf_counter()   # the emulator's own clock (a profiler's emulation time)
        self.grid = grid
        self.n = grid[0] * grid[1] * grid[2]
        self.constexprs = constexprs
        self.arguments: dict = {}            # parameter name -> the value bound to it (fixes read the integers)
        self.allocations: list[Allocation] = []
        self.recording = counters.active()
        self.recorder = None
        if self.recording is not None:
            wanted = getattr(self.recording, "trace_programs", [])
            if callable(wanted):   # chosen per launch from its grid
                wanted = wanted(grid)
            traced = [self.linear_id(p) for p in wanted]
            self.recorder = counters.LaunchCounters(self.n, [p for p in traced if p is not None],
                                                    getattr(self.recording, "accesses", False))
        self.options = options()             # read once per launch, as Triton reads its settings per compile
        self.debug = bool(kernel.debug) or self.options.debug
        self.f32_default = self.options.f32_default
        self.timed_out = set()               # programs whose waiting tl.atomic_poll has run out of time
        self.branch_types = {}               # (kernel, line, col, name, branch) -> the type it took (inserted_calls)
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
        raise errors.LaunchError(errors.diagnostic("grid_type", type=type(grid).__name__, grid=repr(grid)))
    grid = tuple(grid)
    if not 1 <= len(grid) <= 3:
        raise errors.LaunchError(errors.diagnostic("grid_rank", grid=repr(grid)))
    dims = []
    for i, d in enumerate(grid):
        if hasattr(d, "__index__"):
            d = int(d)
        if not isinstance(d, int):
            raise errors.LaunchError(errors.diagnostic("grid_dimension_type", axis=i, type=type(d).__name__,
                                                       value=repr(d)))
        dims.append(d)
    dims += [1] * (3 - len(dims))
    for axis, (d, limit) in enumerate(zip(dims, MAX_GRID)):
        if d < 0:
            raise errors.LaunchError(errors.diagnostic("grid_negative", axis=axis, value=d))
        if d > limit:
            raise errors.LaunchError(errors.diagnostic("grid_too_large", grid=str(tuple(dims[:len(grid)])), axis=axis,
                                                        limit=limit))
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
    run.arguments = values
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
            with launch_scope():
                schedule(run, lambda: fn(*call_args))
        except errors.MiniTritonError:
            if run.recorder is not None and run.recorder.error is not None:  # recorded up to the failure
                _record(run, launch_options)
            raise
        finally:
            numerics.already_quiet = quiet_before
    completed.add(spec)
    if run.recording is not None:
        _record(run, launch_options)
    return None


def _record(run, launch_options):
    """The launch's record, with its launch options and its modelled GPU time (perf/), joins the recording."""
    record = run.recorder.report(run)
    record["num_warps"] = launch_options.get("num_warps", 4)
    record["num_stages"] = launch_options.get("num_stages", 3)
    record["model"] = perf_launch.modelled(record, run.recorder, devices.profile(run.options.model_device))
    run.recording.add(record, run)


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
