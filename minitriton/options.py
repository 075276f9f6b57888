"""minitriton's settings: one frozen `Options`, from explicit settings over environment variables.

    minitriton.options()                          # the settings a launch would use now
    minitriton.options.sanitize                   # one of them (assigning it raises: use set_options)
    minitriton.set_options(group_size=1)          # from now on (returns the previous explicit settings)
    with minitriton.set_options(sanitize=True):   # only inside the block
        kernel[grid](...)

A setting made with `set_options` wins over its environment variable; a setting set to None goes back to
the environment (or the default). This module is the only reader of the MINITRITON_* and TRITON_*
variables below; a launch reads them once, when it starts, as Triton reads its own once per compile.

| field | variable | default | what |
|---|---|---|---|
| group_size | MINITRITON_GROUP_SIZE | None | largest group of programs per pass; 1 = one program per pass (the slow reference mode) |
| group_bytes | | 2**20 | target size of one value: groups that fit in cache run fastest |
| value_budget | | 64 MiB | bytes one value of a group may take (memory bound) |
| undo_bytes | | 64 MiB | copies kept so that a compile-time error leaves memory untouched |
| debug | TRITON_DEBUG | False | `tl.device_assert` fires (also `jit(debug=True)`) |
| sanitize | MINITRITON_SANITIZE | False | report races, order-dependent reads, loads of never-written elements and outputs left unwritten; on unless told otherwise under `python -m minitriton run`, `minitriton.testing.check_kernel` and the sandbox |
| f32_default | TRITON_F32_DEFAULT | "tf32" | fp32 `tl.dot`'s default input precision: "tf32", "tf32x3" or "ieee" |
| allow_non_constexpr_globals | TRITON_ALLOW_NON_CONSTEXPR_GLOBALS | False | kernels may read plain module globals |
| autotune | MINITRITON_AUTOTUNE | "first" | "first" config, "cheapest" by traffic counters, or "all" (run each, compare) |
| benchmarks | MINITRITON_BENCHMARKS | True | `triton.testing.perf_report` benchmarks run (`python -m minitriton run --no-bench` sets 0) |
| bench | MINITRITON_BENCH | "time" | `triton.testing.do_bench`: "time" (the emulator's CPU milliseconds) or "model" (the modelled GPU milliseconds of the launches it makes; `python -m minitriton run --model H100`) |
| model_device | MINITRITON_MODEL_DEVICE | "H100" | the cost model's device profile (minitriton/perf/devices.py): record()'s "model" and do_bench's under bench="model" |
| internal_frames | MINITRITON_DEBUG | False | tracebacks keep minitriton's own frames (`python -m minitriton run --traceback` sets 1); else an error shows the user's frames: the launch line, then the kernel's |
"""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

_TRUE = ("1", "true", "on", "yes")
_AUTOTUNE_MODES = ("first", "cheapest", "all")
MODEL_DEVICES = ("H100", "H200")   # the cost model's device profiles (perf/devices.py PROFILES)
_F32_MODES = ("tf32", "tf32x3", "ieee")


@dataclass(frozen=True, kw_only=True)
class Options:
    """The settings of a launch (see the module docstring for each field)."""

    group_size: int | None = None
    group_bytes: int = 2**20
    value_budget: int = 64 * 2**20
    undo_bytes: int = 64 * 2**20
    debug: bool = False
    sanitize: bool = False
    f32_default: str = "tf32"
    allow_non_constexpr_globals: bool = False
    autotune: str = "first"
    benchmarks: bool = True
    internal_frames: bool = False
    bench: str = "time"
    model_device: str = "H100"

    def __post_init__(self):
        if self.group_size is not None and (not isinstance(self.group_size, int) or self.group_size < 1):
            raise ValueError(f"group_size must be None or an int >= 1, got {self.group_size!r}")
        for name in ("group_bytes", "value_budget", "undo_bytes"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an int >= 1, got {value!r}")
        if self.autotune not in _AUTOTUNE_MODES:
            raise ValueError(f"autotune must be one of {', '.join(_AUTOTUNE_MODES)}, got {self.autotune!r}")
        if self.bench not in ("time", "model"):
            raise ValueError(f"bench (MINITRITON_BENCH) must be time or model, got {self.bench!r}")
        if self.model_device not in MODEL_DEVICES:
            raise ValueError(f"model_device (MINITRITON_MODEL_DEVICE) must be one of {', '.join(MODEL_DEVICES)}, "
                             f"got {self.model_device!r}")
        if self.f32_default not in _F32_MODES:
            raise ValueError(f"f32_default (TRITON_F32_DEFAULT) must be one of {', '.join(_F32_MODES)}, "
                             f"got {self.f32_default!r}")


def _flag(text: str) -> bool:
    return text.strip().lower() in _TRUE


def _group_size(text: str) -> int | None:
    try:
        return int(text) or None
    except ValueError:
        raise ValueError(f"MINITRITON_GROUP_SIZE must be a whole number, got {text!r}") from None


_ENV = {  # field: (variable, parse)
    "group_size": ("MINITRITON_GROUP_SIZE", _group_size),
    "debug": ("TRITON_DEBUG", _flag),
    "sanitize": ("MINITRITON_SANITIZE", _flag),
    "f32_default": ("TRITON_F32_DEFAULT", lambda text: text.strip().lower()),
    "allow_non_constexpr_globals": ("TRITON_ALLOW_NON_CONSTEXPR_GLOBALS", _flag),
    "autotune": ("MINITRITON_AUTOTUNE", lambda text: text.strip().lower()),
    "benchmarks": ("MINITRITON_BENCHMARKS", _flag),
    "internal_frames": ("MINITRITON_DEBUG", _flag),
    "bench": ("MINITRITON_BENCH", lambda text: text.strip().lower()),
    "model_device": ("MINITRITON_MODEL_DEVICE", lambda text: text.strip().upper()),
}
_FIELDS = {f.name for f in dataclasses.fields(Options)}
_explicit: dict = {}


def from_env(environ=None) -> dict:
    """The fields the environment sets (empty variables count as unset)."""
    environ = os.environ if environ is None else environ
    found = {}
    for field, (variable, parse) in _ENV.items():
        text = environ.get(variable)
        if text:
            found[field] = parse(text)
    return found


class _Current:
    """`minitriton.options()`: the settings a launch starting now uses (explicit settings over the environment
    over defaults). `minitriton.options.sanitize` reads one of them; assigning one raises: settings change
    through `set_options`."""

    __slots__ = ()

    def __call__(self) -> Options:
        return Options(**{**from_env(), **_explicit})

    def __getattr__(self, name):
        if name in _FIELDS:
            return getattr(self(), name)
        raise AttributeError(f"minitriton.options has no setting {name!r}; known: {', '.join(sorted(_FIELDS))}")

    def __setattr__(self, name, value):
        raise AttributeError(f"minitriton.options.{name} cannot be assigned; use minitriton.set_options("
                             f"{name}={value!r}) (or `with minitriton.set_options({name}={value!r}):` for one block)")

    def __delattr__(self, name):
        raise AttributeError(f"minitriton.options.{name} cannot be deleted; use minitriton.set_options({name}=None)")


options = _Current()


def chosen(field: str) -> bool:
    """Whether `field` is set explicitly (`set_options`) or by its environment variable, not by the default."""
    return field in _explicit or field in from_env()


class set_options:
    """Set options from now on; as a context manager, only inside the `with` block.

    Each keyword is a field of `Options`; None returns it to the environment's value or the default.
    """

    def __init__(self, **changes):
        unknown = sorted(set(changes) - _FIELDS)
        if unknown:
            raise TypeError(f"unknown option(s) {', '.join(unknown)}; known: {', '.join(sorted(_FIELDS))}")
        self.previous = dict(_explicit)
        merged = {**_explicit, **changes}
        merged = {k: v for k, v in merged.items() if v is not None}
        Options(**{**from_env(), **merged})  # validate before anything changes
        _explicit.clear()
        _explicit.update(merged)

    def __enter__(self) -> Options:
        return options()

    def __exit__(self, *exc):
        _explicit.clear()
        _explicit.update(self.previous)
        return False
