"""`triton.testing` for minitriton, and a kit to property-test kernels without a GPU.

Triton's names: `do_bench` (wall-clock on the CPU; under `MINITRITON_BENCH=model` the modelled GPU time of the
launches, minitriton/perf), `assert_close`, `Benchmark`, `Mark`, `perf_report`.

The kit (loaded on first use, so `import minitriton.testing` needs numpy only):

* `empty(shape, dtype)`, `empty_like(x)`: outputs filled with a poison value (a NaN with a recognisable
  payload for floats, 0xDEADBEEF-style sentinels for integers) so elements a kernel never wrote are visible;
  `unwritten(x)` and `assert_written(x)` find them.
* `strategies` (needs hypothesis): sizes around block boundaries, power-of-two blocks, shapes, layouts
  (offsets into a larger buffer, strided and transposed views), dtypes and values (NaN, inf, -0.0,
  subnormals) that break masks.
* `check_kernel(launch, reference, inputs)` and the `@kernel_property(...)` test decorator (need hypothesis):
  run a kernel on drawn inputs, compare with a reference, report the shrunk failing case. They run the
  sanitizer (races, reads of never-written memory) unless told not to: `sanitize=False`,
  `minitriton.set_options(sanitize=False)` or MINITRITON_SANITIZE=0.
"""
from __future__ import annotations

import importlib
import statistics
import sys
import time

import numpy as np

from minitriton.observers.counters import record
from minitriton.options import options
from minitriton.perf import devices
from minitriton.testing.poison import as_numpy


def do_bench(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None, return_mode="mean"):
    """Time `fn()` in milliseconds on the CPU: `warmup`/`rep` are milliseconds of warm-up and measurement.

    The figures are the emulator's speed, not a GPU's; they are useful to compare emulated variants only.
    Under `MINITRITON_BENCH=model` (`python -m minitriton run --model H100`) `fn()` runs once and every figure
    is the modelled GPU milliseconds of the launches it made (`modelled_ms`).
    """
    if return_mode not in ("min", "max", "mean", "median", "all"):
        raise ValueError(f"return_mode must be one of min, max, mean, median, all; got {return_mode!r}")
    times = [modelled_ms(fn)] if options().bench == "model" else _timed(fn, warmup, rep, grad_to_none)
    if quantiles is not None:
        qs = [float(np.quantile(times, q)) for q in quantiles]
        return qs[0] if len(qs) == 1 else qs
    if return_mode == "all":
        return times
    return {"min": min, "max": max, "mean": statistics.mean, "median": statistics.median}[return_mode](times)


def _timed(fn, warmup, rep, grad_to_none) -> list:
    """Milliseconds of each measured call of `fn()` (do_bench's budget of warm-up and measurement)."""
    start = time.perf_counter()
    fn()
    first = max((time.perf_counter() - start) * 1e3, 1e-3)
    n_warmup = max(0, min(int(warmup / first), 100))
    n_repeat = max(1, min(int(rep / first), 1000))
    for _ in range(n_warmup):
        fn()
    times = []
    for _ in range(n_repeat):
        if grad_to_none is not None:
            for x in grad_to_none:
                x.grad = None
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return times


_noted: set = set()   # device profiles whose modelled figures stderr has announced


def modelled_ms(fn) -> float:
    """The modelled GPU milliseconds (perf/, options().model_device) of the launches one call of `fn()` makes;
    NaN when it launches no kernel (a NumPy or torch reference has no model). The first call per device says
    on stderr that the figures are modelled, with the profile's validation error. Under MINITRITON_AUTOTUNE=all
    an autotuned kernel's first call runs every config: `fn()` then runs once before the call that counts."""
    if options().autotune == "all":
        fn()
    with record() as rec:
        fn()
    device = devices.profile(options().model_device)
    if device.name not in _noted:
        _noted.add(device.name)
        source = f"calibrated on {device.calibrated}; " if device.calibrated else ""
        print(f"minitriton: do_bench gives modelled {device.name} times, not measured ones ({source}{device.error})",
              file=sys.stderr)
    return sum(r["model"]["ms"] for r in rec) if len(rec) else float("nan")


def assert_close(x, y, atol=None, rtol=None, err_msg=""):
    """Assert |x - y| <= atol + rtol * |y| element-wise (NumPy arrays, torch CPU tensors or scalars)."""
    a = np.asarray(as_numpy(x), dtype=np.float64)
    b = np.asarray(as_numpy(y), dtype=np.float64)
    atol = 1e-2 if atol is None else atol
    rtol = 0.0 if rtol is None else rtol
    if a.shape != b.shape and a.size != 1 and b.size != 1:
        raise AssertionError(f"{err_msg} shape mismatch: {a.shape} vs {b.shape}".strip())
    close = np.isclose(a, b, atol=atol, rtol=rtol, equal_nan=True)
    if not close.all():
        bad = np.argwhere(~close)
        diff = np.abs(a - b)
        where = tuple(int(i) for i in bad[0])
        raise AssertionError(
            f"{err_msg} {len(bad)} of {close.size} elements differ (atol={atol}, rtol={rtol}); "
            f"first at index {where}: {np.broadcast_to(a, close.shape)[where]} vs "
            f"{np.broadcast_to(b, close.shape)[where]}; max abs difference {np.nanmax(diff)}".strip())


class Benchmark:
    """`triton.testing.Benchmark`: the description of a `perf_report` sweep."""

    def __init__(self, x_names, x_vals, line_arg, line_vals, line_names, plot_name, args, xlabel="", ylabel="",
                 x_log=False, y_log=False, styles=None):
        self.x_names, self.x_vals = x_names, x_vals
        self.line_arg, self.line_vals, self.line_names = line_arg, line_vals, line_names
        self.plot_name, self.args = plot_name, args
        self.xlabel, self.ylabel, self.x_log, self.y_log, self.styles = xlabel, ylabel, x_log, y_log, styles


class Mark:
    """What `perf_report` returns: `.run(print_data=True)` sweeps the benchmark and prints a table."""

    def __init__(self, fn, benchmarks):
        self.fn = fn
        self.benchmarks = benchmarks if isinstance(benchmarks, list) else [benchmarks]

    def run(self, show_plots=False, print_data=False, save_path="", return_df=False, **kwargs):
        """Sweep every benchmark; with benchmarks off (`MINITRITON_BENCHMARKS=0`, `python -m minitriton run
        --no-bench`) only say which were skipped."""
        if not options().benchmarks:
            names = ", ".join(b.plot_name for b in self.benchmarks)
            print(f"benchmark skipped (benchmarks are off: MINITRITON_BENCHMARKS=0): {names}")
            return [] if return_df else None
        tables = []
        for bench in self.benchmarks:
            rows = []
            for x in bench.x_vals:
                xs = x if isinstance(x, (list, tuple)) else [x] * len(bench.x_names)
                row = list(xs)
                for line in bench.line_vals:
                    args = dict(zip(bench.x_names, xs), **{bench.line_arg: line}, **bench.args, **kwargs)
                    value = self.fn(**args)
                    row.append(value[0] if isinstance(value, tuple) else value)
                rows.append(row)
            header = list(bench.x_names) + list(bench.line_names)
            if print_data:
                modelled = f" (modelled {options().model_device} times)" if options().bench == "model" else ""
                print(f"{bench.plot_name}{modelled}:")
                print("  ".join(f"{h:>12}" for h in header))
                for row in rows:
                    print("  ".join(f"{v:>12.4g}" if isinstance(v, float) else f"{v!s:>12}" for v in row))
            tables.append((header, rows))
        return tables if return_df else None


def perf_report(benchmarks):
    """`@triton.testing.perf_report(Benchmark(...))`."""
    return lambda fn: Mark(fn, benchmarks)


# ---------------------------------------------------------------- the kit, loaded on use

_LAZY = {
    "strategies": (".strategies", None),
    "check": (".check", None),
    "check_kernel": (".check", "check_kernel"),
    "kernel_property": (".check", "kernel_property"),
    "KernelCheckError": (".check", "KernelCheckError"),
    "poison": (".poison", None),
    "empty": (".poison", "empty"),
    "empty_like": (".poison", "empty_like"),
    "unwritten": (".poison", "unwritten"),
    "assert_written": (".poison", "assert_written"),
    "mark_written": (".poison", "mark_written"),
    "poison_bits": (".poison", "poison_bits"),
    "Layout": (".poison", "Layout"),
    "as_numpy": (".poison", "as_numpy"),
}


def __getattr__(name):
    found = _LAZY.get(name)
    if found is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        module = importlib.import_module(found[0], __name__)
    except ModuleNotFoundError as exc:
        if exc.name != "hypothesis":
            raise
        raise ModuleNotFoundError(f"minitriton.testing.{name} needs hypothesis: pip install 'minitriton[testing]'",
                                  name="hypothesis") from None
    value = module if found[1] is None else getattr(module, found[1])
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = ["do_bench", "assert_close", "Benchmark", "Mark", "perf_report", *_LAZY]
