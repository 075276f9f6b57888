"""The exceptions minitriton raises about a kernel or a launch. Each carries a `diagnostic` record
(minitriton.diagnostics): its text is that record rendered in English for a terminal, and tools (the sandbox)
read the record's fields. The texts themselves live in minitriton/diagnostics.

Triton's own errors keep Triton's wording (so `pytest.raises(match=...)` patterns carry over); the extra
diagnostics minitriton adds say what happened, where (file:line, program id, lane), the numbers and a fix.
"""
from __future__ import annotations

import numpy as np

from minitriton.diagnostics import Diagnostic, render
from minitriton.diagnostics.record import Runs


class MiniTritonError(Exception):
    """Base class of every error minitriton raises about a kernel or a launch: `diagnostic` is its record.
    Made from a record, or from a text alone (Triton's own wording, kept as the record's `message`)."""

    def __init__(self, what="", *args):
        if isinstance(what, Diagnostic):
            self.diagnostic = what
            super().__init__(what.kind, *args)
        else:
            self.diagnostic = Diagnostic(self.default_kind, {"message": str(what)})
            super().__init__(what, *args)

    default_kind = "triton_message"

    def __str__(self):
        return render(self.diagnostic)


class TritonError(MiniTritonError):
    """Mirror of `triton.TritonError`."""


class CompilationError(TritonError):
    """What Triton's compiler raises: `at {line}:{col}:`, the kernel source up to the line, a caret, the message."""

    default_kind = "compile_error"

    def __init__(self, what="", *args):
        super().__init__(what, *args)
        if not isinstance(what, Diagnostic):
            self.diagnostic.triton = str(what)


class InterpreterError(TritonError):
    """Triton's error for a failure inside its CPU interpreter (`triton.runtime.errors.InterpreterError`).
    minitriton raises what the GPU raises instead (CompilationError, ...; docs/semantics.md S14.17); the class
    exists so that code written against the interpreter imports."""


class IncompatibleTypeErrorImpl(TypeError):
    """Triton's `semantic.IncompatibleTypeErrorImpl`: operands of types no operation accepts (pointers compared,
    a pointer plus a float, a bitwise op on floats). A TypeError here, as the name is all a user sees of it."""


class UnsupportedLanguageConstruct(CompilationError):
    """Mirror of `triton.compiler.errors.UnsupportedLanguageConstruct`: Python syntax Triton does not compile."""


class CompileTimeAssertionFailure(CompilationError):
    """Mirror of `triton.compiler.errors.CompileTimeAssertionFailure`: a failed `tl.static_assert`; its text
    ends with the assertion's message alone (nothing after the caret when it has none)."""


class StaticAssertionFailed(AssertionError):
    """Raised by `tl.static_assert` while the kernel runs; the engine turns it into CompileTimeAssertionFailure
    at the kernel line."""


class OutOfResources(TritonError):
    """Mirror of `triton.OutOfResources`."""


class OutOfBoundsError(MiniTritonError, IndexError):
    """An unmasked lane of `tl.load`/`tl.store`/an atomic points outside the tensor it was derived from."""


class DeviceAssertionError(MiniTritonError, AssertionError):
    """`tl.device_assert` failed while debug mode was on."""


class SanitizerError(MiniTritonError, RuntimeError):
    """A sanitizer finding: a race between programs, an order-dependent read, a read of unwritten memory."""


class LaunchError(MiniTritonError, ValueError):
    """The launch itself is wrong: the grid, the arguments, or a limit of the GPU."""

    default_kind = "launch_error"


class DescriptorError(MiniTritonError, ValueError):
    """A tensor descriptor breaks a rule of the TMA unit at run time (a base or stride not 16-byte aligned)."""


class AutotuneMismatchError(MiniTritonError, AssertionError):
    """`MINITRITON_AUTOTUNE=all`: two autotune configs produced different outputs."""


class DeadlockError(MiniTritonError, RuntimeError):
    """Programs wait in a `while` loop for memory no program is left to change (a GPU would hang)."""


class InfiniteLoopError(DeadlockError):
    """A `while` loop in one program that nothing can end: its state repeats and no other program can change
    what its condition reads (`while True:`, a condition on values the loop never changes)."""


class KernelInterrupted(KeyboardInterrupt):
    """A KeyboardInterrupt (Ctrl-C, the sandbox's Stop, a signal handler raising it) that came while a kernel
    ran: still a KeyboardInterrupt (never an Exception), with a `diagnostic` record (kind "stopped") saying
    where the code was: the kernel line and the programs running."""

    def __init__(self, diagnostic: Diagnostic):
        self.diagnostic = diagnostic
        super().__init__(diagnostic.kind)

    def __str__(self):
        return render(self.diagnostic)


class KernelRuntimeError(MiniTritonError):
    """An error found while programs run, raised by an op about specific programs of the group: the exception
    class the user will see (`kind`), its record, and `positions`, indices into the current group. The engine
    turns the first position into a program id, locates the record at the kernel line, adds a suggestion and
    raises `kind(record)`."""

    def __init__(self, kind: type, diagnostic: Diagnostic, positions=None):
        self.kind = kind
        self.positions = positions
        super().__init__(diagnostic)


def python_error(cls: type, record: Diagnostic) -> BaseException:
    """Python's own exception `cls` (the one Triton raises for the mistake: `except` clauses and Triton's `repr`
    layout carry over) carrying `record` as `diagnostic`; its text is the record in English."""
    exc = cls(render(record))
    exc.diagnostic = record
    return exc


def require(ok, kind: str, **fields) -> None:
    """Triton's `assert ok, message`: unless `ok`, an AssertionError carrying the record of `kind` (fields are
    computed before the test: keep them cheap)."""
    if not ok:
        raise python_error(AssertionError, diagnostic(kind, **fields))


def diagnostic(kind: str, **fields) -> Diagnostic:
    """A record of `kind` (a key of diagnostics.catalogue.KINDS) with its fields; integer arrays given as
    `offsets` become Runs; values of other types than numbers, text, Runs and containers (dtypes, ...) are
    kept as their text, so a record is plain data."""
    if "offsets" in fields and not isinstance(fields["offsets"], Runs):
        fields["offsets"] = Runs.of(fields["offsets"])
    plain = (str, int, float, bool, type(None), Runs, tuple, list, dict, np.integer, np.floating)
    return Diagnostic(kind, {k: v if isinstance(v, plain) else str(v) for k, v in fields.items()})


def compilation_text(jit_fn, lineno: int, col: int, message: str, extra: str = "") -> str:
    """Triton's compile-error layout for `jit_fn` at file line `lineno`, column `col` (its `source` places them
    in Triton's numbering), then where the line is."""
    text = jit_fn.source.triton_excerpt(lineno, col) + (f"\n{message}" if message else "")
    text += f"\n  in kernel `{jit_fn.__name__}` ({jit_fn.file_name}:{lineno})"
    if extra:
        text += "\n" + extra
    return text


def backend_error(failure: str, diagnostic: str) -> RuntimeError:
    """A kernel Triton's frontend accepts but its MLIR/LLVM stages reject (Triton 3.6 on an H200): the compiler's
    diagnostic line, then the RuntimeError text Triton raises ("PassManager::run failed", ...). The engine shows
    it as a CompilationError at the kernel line."""
    return python_error(RuntimeError, Diagnostic("backend_error", {"diagnostic": diagnostic, "failure": failure}))


class OutsideKernelError(MiniTritonError, ValueError):
    """A `tl.*` function was called with no kernel running (Triton raises ValueError)."""


def outside_kernel(name: str) -> MiniTritonError:
    """`tl.*` called with no launch running (Triton's wording, plus the fix)."""
    return OutsideKernelError(diagnostic("call_outside_kernel", name=name))


def program_id(linear: int, grid) -> tuple:
    """A linear program index (x outermost, z fastest) as the program id a launch shows: (x,), (x, y) or
    (x, y, z), without the trailing axes of size 1 of `grid` (one to three sizes)."""
    gy, gz = (tuple(grid[1:]) + (1, 1))[:2]
    x, y, z = linear // (gy * gz), (linear // gz) % gy, linear % gz
    if gy == 1 and gz == 1:
        return (x,)
    return (x, y) if gz == 1 else (x, y, z)


def format_ranges(values, limit: int = 4, noun: str = "offsets") -> str:
    """Distinct integers as sorted runs: [7, 1, 2, 3] -> '1…3, 7'; past `limit` runs, '… (N offsets in all)'."""
    values = sorted(set(int(v) for v in np.asarray(values).reshape(-1).tolist()))
    if not values:
        return "none"
    parts = []
    i = 0
    while i < len(values) and len(parts) < limit:
        j = i
        while j + 1 < len(values) and values[j + 1] == values[j] + 1:
            j += 1
        parts.append(f"{values[i]}" if i == j else f"{values[i]}…{values[j]}")
        i = j + 1
    if i < len(values):
        parts.append(f"… ({len(values)} {noun} in all)" if noun else f"… ({len(values)} in all)")
    return ", ".join(parts)
