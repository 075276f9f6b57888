"""The scheduler: runs a launch's programs a *group* at a time, every value carrying a program axis.

Programs are numbered x-outermost, z-fastest (Triton's interpreter order). The first group measures how
large its values get (the largest, and all those held at once); the rest run in equal groups sized so one
value fits in cache and the group's values stay within a share of the launch's array bytes (a launch of
at most FEW_PROGRAMS programs: the cache alone).

* Python control flow that differs between the programs of a group raises `Diverged` (a loop runs in lockstep
  instead, frontend/inserted_calls.py): the group's stores are rolled back (they are journaled) and it is split
  by that value, the parts re-run in program order; at a `while` condition, or where the programs still in a
  lockstep loop wait or fail alone, the programs that left the loop run first (a lock's holder releases it).
* A group whose programs all wait in a `while` loop (or a `tl.atomic_poll`) for memory only other programs
  can change raises `Blocked` (runtime/spinning.py, memory/atomics.py): it is rolled back and set aside, and
  the other programs run, as a GPU runs other programs while some spin. Set-aside groups run again once a
  group has completed (the latest set aside first); when none can progress they run together as one group
  (programs that wait for each other, a grid-wide barrier); when even that makes no progress, their polls
  with a timeout run out of time (they return False), and without one the launch fails with
  `DeadlockError` (`InfiniteLoopError` for a launch of one program: nothing else could end its loop).
* Errors are reported for the first failing program in launch order, after every earlier program that can
  run has run, so results, errors and counters do not depend on the grouping.
* An exception a signal handler raises (a time-out, Ctrl-C) ends the launch at once: nothing re-runs. A
  KeyboardInterrupt becomes `KernelInterrupted` (still a KeyboardInterrupt), saying where the kernel was.
"""
from __future__ import annotations

import ast
import signal

import numpy as np

from minitriton import errors
from minitriton.diagnostics import loops
from minitriton.runtime.group import Group
from minitriton.runtime.reporting import finalize, interrupted
from minitriton.values import programs
from minitriton.values.programs import Blocked, Diverged, OverBudget

FIRST_GROUP = 64
LIVE_SHARE = 0.7            # the values a group holds at once: at most this share of the launch's array bytes
MIN_LIVE_BYTES = 256 * 2**10  # ... or this much, for small launches (memory does not matter there, speed does)
FEW_PROGRAMS = 16           # a launch of at most this many programs is not split for its live bytes: every pass
                            # costs the kernel's whole Python time, shared by few programs (its values still fit cache)
UNLIMITED = 2 ** 62         # the value budget of a group that must not be halved


class _Waiting:
    """A group set aside because its programs wait for others: its programs, the number of completed
    groups when it blocked, and the `Blocked` it raised (its traceback locates the loop)."""

    __slots__ = ("pids", "commits", "blocked")

    def __init__(self, pids, commits, blocked):
        self.pids, self.commits, self.blocked = pids, commits, blocked


def schedule(run, call):
    """Run all programs of `run` in groups (see the module docstring for the rules)."""
    if run.n:
        _Scheduler(run, call).run()


class _Scheduler:
    def __init__(self, run, call):
        self.launch, self.call = run, call
        n = run.n
        cap = run.options.group_size
        self.cap = max(1, cap) if cap else n
        # A value of the group should fit in cache (speed), and all the values the group holds at once should
        # stay below a share of the launch's arrays (memory: the emulator's working set stays below the
        # kernel's own).
        arrays = sum(a.nbytes for a in run.allocations)
        self.target = min(run.options.value_budget, run.options.group_bytes)
        self.live_budget = max(MIN_LIVE_BYTES, int(arrays * LIVE_SHARE)) if n > FEW_PROGRAMS else UNLIMITED
        # How large one program's values get: learned from earlier launches with the same constexprs, else
        # from the first group, which shrinks (OverBudget) until its values fit.
        self.sizes = run.kernel.cache.setdefault("program_bytes", {})
        self.key = tuple(sorted((k, repr(v)) for k, v in run.constexprs.items()))
        known = self.sizes.get(self.key)
        self.chunk = min(self.cap, _fitting(self.target, self.live_budget, *known) if known else FIRST_GROUP)
        self.limit = 2 * self.target if known else min(self.target, self.live_budget)
        self.queue: list[np.ndarray] = []
        self.next_start = 0
        self.committed = np.zeros(n, bool)
        self.replaying = False
        self.journal_always = may_spin(run.kernel, run.constexprs)
        self.waiting: list[_Waiting] = []
        self.commits = 0            # groups completed so far
        self.merged = None          # (commits, programs) of the last time set-aside groups ran as one
        self.merged_split = False   # ... and whether that group split on a value (its parts ran apart)
        self.unlimited = set()      # first programs of the groups that must not be halved (merged groups)

    def run(self):
        while True:
            pids = self._next_group()
            if pids is None:
                return
            merged = int(pids[0]) in self.unlimited
            group = Group(self.launch, pids, UNLIMITED if merged else self.limit, journal=self.journal_always)
            if group.journal is None and any(q[0] < pids[0] for q in self.queue):
                group.journal = []  # it may have to run again after earlier programs
            group.quiet = self.replaying
            outcome = _run_group(group, self.call)
            if outcome is None:
                self._completed(group)
                continue
            kind, payload = outcome
            if kind == "split":
                self.queue[:0] = _split_by_value(pids, payload.values, payload.loop)
                if merged:
                    self.unlimited.update(int(q[0]) for q in self.queue)
                    self.merged_split = True
            elif kind == "smaller":
                self.chunk = max(1, min(self.chunk, len(pids) // 2))
                self.queue = [q[i:i + self.chunk] for q in [pids] + self.queue for i in range(0, len(q), self.chunk)]
            elif kind == "blocked":
                self.waiting.append(_Waiting(pids, self.commits, payload))
            else:
                self._failed(group, *payload)

    def _next_group(self):
        """The programs of the next pass, or None when every program has completed."""
        if self.queue:
            return self.queue.pop(0)
        n = self.launch.n
        if self.next_start < n:
            # equal parts: 64 programs at 19 per group run as 16+16+16+16, not 19+19+19+7 (a pass costs
            # about the same Python time whatever its size)
            left = n - self.next_start
            stop = self.next_start + -(-left // -(-left // self.chunk))
            pids = np.arange(self.next_start, stop, dtype=np.int64)
            self.next_start = stop
            return pids
        if not self.waiting:
            return None
        ready = [w for w in self.waiting if w.commits < self.commits]
        if ready:  # memory changed since they blocked: the latest set aside first (it waits for the newest)
            self.waiting = [w for w in self.waiting if w.commits >= self.commits]
            self.queue = [w.pids for w in reversed(ready)]
            return self.queue.pop(0)
        together = np.sort(np.concatenate([w.pids for w in self.waiting]))
        if self.merged is not None and self.merged[0] == self.commits and np.array_equal(self.merged[1], together):
            if not self._time_out():
                self._deadlock()
            return self.queue.pop(0)
        self.merged = (self.commits, together)
        self.merged_split = False
        self.waiting = []
        self.unlimited.add(int(together[0]))
        return together

    def _completed(self, group: Group):
        pids = group.pids
        self.committed[pids] = True
        self.commits += 1
        self.unlimited.discard(int(pids[0]))
        value, live = self.sizes.get(self.key, (0, 0))
        value = max(1, group.meter.peak // group.size, value)
        live = max(1, group.meter.live_peak // group.size, live)
        self.sizes[self.key] = value, live
        self.chunk = min(self.cap, _fitting(self.target, self.live_budget, value, live))
        self.limit = max(self.target, self.launch.options.value_budget if self.chunk == 1 else 2 * self.target)

    def _failed(self, group: Group, exc: BaseException, failing: int):
        """An error in program `failing`: re-run the earlier programs first, then report it alone."""
        run, pids = self.launch, group.pids
        earlier = [q[q < failing] for q in [pids] + self.queue]
        earlier = [q for q in earlier if len(q)]
        if len(pids) > 1 or earlier:
            later = [q[q > failing] for q in [pids] + self.queue]
            self.queue = earlier + [np.array([failing], np.int64)] + [q for q in later if len(q)]
            return
        replay = not self.journal_always  # programs that wait for later ones cannot run one at a time, in order
        if replay and isinstance(exc, errors.KernelRuntimeError) and self.committed[failing + 1:].any() \
                and run.can_undo():
            # Later programs already ran (a split ran them early): replay the launch up to the failing
            # program, so memory ends as if programs had run one at a time, in order.
            run.undo()
            for observer in (run.sanitizer, run.recorder):
                if observer is not None:
                    observer.reset()
            self.committed[:] = False
            chunk = self.chunk
            self.queue = [np.arange(i, min(i + chunk, failing), dtype=np.int64) for i in range(0, failing, chunk)]
            self.queue.append(np.array([failing], np.int64))
            self.next_start = run.n
            self.waiting = []
            self.replaying = True
            return
        _flush_prints(group)
        if not isinstance(exc, errors.KernelRuntimeError):
            run.undo()  # Triton would have refused to compile: no program may have written anything
            if run.sanitizer is not None:
                run.sanitizer.reset()
        final = finalize(run, exc, failing)
        if run.recorder is not None and isinstance(exc, errors.KernelRuntimeError):
            run.recorder.fail(group, final, getattr(exc, "lanes", None))
        raise final

    def _time_out(self) -> bool:
        """No set-aside group can progress: their `tl.atomic_poll`s with a timeout run out of time (they return
        False when their passes run again). False if none has a timeout."""
        timed = [w for w in self.waiting if getattr(w.blocked, "timeouts", None)]
        for w in timed:
            self.launch.timed_out.update(w.blocked.timeouts)
        self.waiting = [w for w in self.waiting if w not in timed]
        self.queue = [w.pids for w in timed]
        self.merged = None
        return bool(timed)

    def _deadlock(self):
        """No set-aside group can progress, alone or together: the loop of a launch's only program is an
        infinite loop; else a deadlock (each program named with the loop it waits in and what that reads)."""
        first = min(self.waiting, key=lambda w: int(w.pids[0]))
        waiting = [(w.blocked.site, w.pids.tolist()) for w in self.waiting]
        pids = sorted(p for _, group in waiting for p in group)
        if self.launch.n == 1:
            cls, record = errors.InfiniteLoopError, loops.infinite_loop(first.blocked.site, pids[0])
        else:
            cls, record = errors.DeadlockError, loops.deadlock(waiting, self.launch.pid_tuple,
                                                                  apart=self.merged_split)
        exc = errors.KernelRuntimeError(cls, record, [0])
        raise finalize(self.launch, exc.with_traceback(first.blocked.__traceback__), int(pids[0]))


def _fitting(target: int, live_budget: int, value: int, live: int) -> int:
    """Programs per group: each value within `target` bytes, all live values within `live_budget`."""
    return max(1, min(target // value, live_budget // live))


def _split_by_value(pids: np.ndarray, values: np.ndarray, loop: bool = False) -> list:
    """Sub-groups of programs sharing a value, ordered by their first program; for a `while` condition
    (`loop`), the programs leaving the loop (value false) first."""
    values = np.ascontiguousarray(values)
    if values.dtype.kind == "f":
        values = values.view(np.int32 if values.itemsize == 4 else np.int64 if values.itemsize == 8 else np.int16)
    _, first, inverse = np.unique(values, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    flat = values.ravel()
    parts = [(bool(loop and flat[first[k]]), pids[inverse.ravel() == k]) for k in order]
    parts.sort(key=lambda part: part[0])  # stable: in program order within the leaving and the staying parts
    return [part for _, part in parts]


def _run_group(group: Group, call):
    programs.set_current(group)
    try:
        call()
    except Diverged as d:
        group.rollback()
        return "split", d
    except OverBudget:
        group.rollback()
        return "smaller", None
    except Blocked as b:
        group.rollback()
        if group.active is not None:   # waiting in a lockstep loop that some programs left: they run first
            return "split", Diverged(group.active, loop=True)
        return "blocked", b
    except errors.KernelRuntimeError as e:
        group.rollback()
        failing = [p for p in e.positions if group.active is None or group.active[p]]
        if not failing:   # only programs that had left a lockstep loop failed: they run apart
            return "split", Diverged(group.active, loop=True)
        return "error", (e, int(group.pids[int(failing[0])]))
    except KeyboardInterrupt as e:   # Ctrl-C, the sandbox's Stop: ends the launch, saying where it was
        raise interrupted(group.launch, e, group.pids.tolist()) from None
    except Exception as e:
        if raised_by_signal_handler(e):
            raise  # asynchronous (a time-out, an interrupt): not the kernel's error, nothing re-runs
        # compile-time-like errors: the same in every program of the group
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


# ---------------------------------------------------------------- what cannot be the kernel's own error

def raised_by_signal_handler(exc: BaseException) -> bool:
    """Whether `exc` was raised by a Python signal handler that interrupted the launch (SIGALRM from a
    time-out, say): the handler installed now for some signal has a frame in the exception's traceback."""
    handlers = set()
    try:
        signals = signal.valid_signals()
    except (AttributeError, OSError, ValueError):  # a platform without signals (Pyodide may lack them)
        return False
    for signum in signals:
        try:
            handler = signal.getsignal(signum)
        except (ValueError, OSError):
            continue
        code = _code_of(handler)
        if code is not None:
            handlers.add(code)
    if not handlers:
        return False
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code in handlers:
            return True
        tb = tb.tb_next
    return False


def _code_of(handler):
    """The code object a Python signal handler runs (a function, a bound method, a partial, a callable)."""
    for _ in range(4):
        code = getattr(handler, "__code__", None)
        if code is not None:
            return code
        if hasattr(handler, "__func__"):
            handler = handler.__func__
        elif hasattr(handler, "func"):
            handler = handler.func
        elif callable(handler) and not isinstance(handler, type) and hasattr(type(handler), "__call__"):
            handler = type(handler).__call__
        else:
            return None
    return None


# ---------------------------------------------------------------- which kernels may spin

def may_spin(kernel, constexprs: dict) -> bool:
    """Whether a `while` loop or a `tl.atomic_poll` can run in this launch: in the kernel or in a @jit function
    it names (through its globals, a module attribute, or a constexpr argument). Their passes keep a store
    journal, so a pass that waits for other programs can be set aside."""
    if any(_has_while(v, set()) for v in constexprs.values() if _is_jit(v)):
        return True
    found = kernel.cache.get("has_while")
    if found is None:
        found = kernel.cache["has_while"] = _has_while(kernel, set())
    return found


def _is_jit(obj) -> bool:
    return hasattr(obj, "source") and hasattr(type(obj), "kernel_fn")  # not the instance's: that builds it


def _has_while(jit_fn, seen: set) -> bool:
    """Whether `jit_fn` or a @jit function it names (not yet in `seen`) has a `while` statement or calls
    `atomic_poll`."""
    seen.add(id(jit_fn))
    func = jit_fn.source.func
    if func is None:
        return False  # no source: no rewrite, no loop reports
    nodes = jit_fn.source.nodes
    if any(isinstance(node, ast.While) or isinstance(node, ast.Attribute) and node.attr == "atomic_poll"
           for node in nodes):
        return True
    names = jit_fn.fn.__globals__
    for node in nodes:
        callee = _resolve(node, names)
        if callee is not None and _is_jit(callee) and id(callee) not in seen and _has_while(callee, seen):
            return True
    return False


def _resolve(node, names: dict):
    """The object a `name` or `module.name` expression refers to in `names`, or None."""
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return getattr(names.get(node.value.id), node.attr, None)
    return None
