"""`@triton.autotune` and `@triton.heuristics`, with a deterministic choice instead of timing.

Real autotuning times every config on a GPU. An emulator has no meaningful clock, so the choice is:
* default (`MINITRITON_AUTOTUNE` unset or `first`): the first config left after `prune_configs_by`;
* `MINITRITON_AUTOTUNE=cheapest`: every config runs on copies of the arguments with the traffic counters
  on, and the one moving the fewest bytes wins (ties: fewer programs, then the earlier config);
* `MINITRITON_AUTOTUNE=all`: every config runs on copies of the arguments and the outputs must agree
  (a kernel whose result depends on its block sizes has a bug); then the first config runs for real.
The choice is cached per value of `key`, and `best_config` is set, as in Triton.
"""
from __future__ import annotations

import copy


import numpy as np

from minitriton.observers import counters
from minitriton.options import options
from minitriton.semantics.numerics import bf16_bits_to_f32
from minitriton import errors
from minitriton.runtime.jit import KernelInterface
from minitriton.memory.allocation import as_array
from minitriton.memory.host_descriptor import TensorDescriptor


class Config:
    """`triton.Config(kwargs, num_warps=4, num_stages=3, num_ctas=1, maxnreg=None, pre_hook=None)`."""

    def __init__(self, kwargs, num_warps=4, num_stages=3, num_ctas=1, maxnreg=None, pre_hook=None,
                 ir_override=None, **extra):
        self.kwargs = dict(kwargs)
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.num_ctas = num_ctas
        self.maxnreg = maxnreg
        self.pre_hook = pre_hook
        self.ir_override = ir_override
        self.extra = extra

    def all_kwargs(self):
        out = dict(self.kwargs)
        out.update(num_warps=self.num_warps, num_stages=self.num_stages, num_ctas=self.num_ctas)
        if self.maxnreg is not None:
            out["maxnreg"] = self.maxnreg
        return out

    def __str__(self):
        parts = [f"{k}: {v}" for k, v in self.kwargs.items()]
        parts += [f"num_warps: {self.num_warps}", f"num_ctas: {self.num_ctas}", f"num_stages: {self.num_stages}",
                  f"maxnreg: {self.maxnreg}"]
        return ", ".join(parts)

    __repr__ = __str__


class Autotuner(KernelInterface):
    """The object `@triton.autotune` returns."""

    def __init__(self, fn, arg_names, configs, key, reset_to_zero=None, restore_value=None, pre_hook=None,
                 post_hook=None, prune_configs_by=None, warmup=None, rep=None, use_cuda_graph=False,
                 do_bench=None, cache_results=False):
        self.fn = fn
        self.arg_names = arg_names
        self.configs = list(configs) if configs else [Config({})]
        self.keys = list(key or [])
        self.reset_to_zero = list(reset_to_zero or [])
        self.restore_value = list(restore_value or [])
        self.pre_hook, self.post_hook = pre_hook, post_hook   # Triton's names: libraries subclass Autotuner
        self.user_defined_pre_hook, self.user_defined_post_hook = pre_hook is not None, post_hook is not None
        prune = prune_configs_by or {}
        self.perf_model = prune.get("perf_model")
        self.configs_top_k = prune.get("top_k", 1.0)
        self.early_config_prune = prune.get("early_config_prune")
        self.cache = {}
        self.best_config = None
        self.__name__ = getattr(fn, "__name__", "kernel")
        self.__doc__ = getattr(fn, "__doc__", None)

    def prune_configs(self, nargs, kwargs):
        """Triton's pruning: `early_config_prune(configs, positional arguments by name, **keyword arguments)`,
        then the `top_k` configs `perf_model(**positional, **keywords, **config)` rates fastest. The keywords
        include `grid` and `warmup`, as Triton's launch passes them to the autotuner."""
        configs = self.configs
        if self.early_config_prune:
            configs = list(self.early_config_prune(configs, nargs, **kwargs))
            if not configs:
                raise errors.LaunchError(errors.diagnostic("autotune_pruned_all"))
        if self.perf_model:
            top_k = self.configs_top_k
            if isinstance(top_k, float) and top_k <= 1.0:
                top_k = max(1, int(len(configs) * top_k))
            if len(configs) > top_k:
                configs = sorted(configs, key=lambda c: self.perf_model(**nargs, **kwargs, **c.all_kwargs()))[:top_k]
        return configs

    def _hooks(self, nargs, config):
        for name in self.reset_to_zero:
            arr = _array(nargs.get(name))
            if arr is not None:
                arr[...] = 0
        if config.pre_hook:
            config.pre_hook({**nargs, **config.all_kwargs()})
        if self.pre_hook:
            self.pre_hook({**nargs, **config.all_kwargs()})

    def run(self, *args, grid, warmup=False, **kwargs):
        nargs = dict(zip(self.arg_names, args))
        nargs.update(kwargs)
        for c in self.configs:
            clash = set(c.kwargs) & set(kwargs)
            if clash:
                raise errors.python_error(ValueError, errors.diagnostic("autotune_conflict",
                                                                        names=", ".join(sorted(clash))))
        key = tuple(_key_part(nargs.get(k)) for k in self.keys)
        mode = options().autotune
        if key not in self.cache:
            configs = self.prune_configs(dict(zip(self.arg_names, args)), dict(kwargs, grid=grid, warmup=warmup))
            if mode == "cheapest" and len(configs) > 1:
                self.cache[key] = self._cheapest(configs, args, kwargs, grid)
            else:
                if mode == "all" and len(configs) > 1:
                    self._compare_all(configs, args, kwargs, grid)
                self.cache[key] = configs[0]
        config = self.cache[key]
        self.best_config = config
        self._hooks(nargs, config)
        result = self.fn.run(*args, grid=grid, warmup=warmup, **kwargs, **config.all_kwargs())
        if self.post_hook:
            self.post_hook(nargs, exception=None)
        return result

    def _trial(self, config, args, kwargs, grid, record=False):
        """Run one config on copies of every array argument; returns (copies, recording)."""
        copies = [_copy(a) for a in args]
        kw = {k: _copy(v) for k, v in kwargs.items()}
        nargs = dict(zip(self.arg_names, copies))
        nargs.update(kw)
        self._hooks(nargs, config)
        if record:
            with counters.record() as rec:
                self.fn.run(*copies, grid=grid, warmup=False, **kw, **config.all_kwargs())
            return copies, rec
        self.fn.run(*copies, grid=grid, warmup=False, **kw, **config.all_kwargs())
        return copies, None

    def _cheapest(self, configs, args, kwargs, grid):
        costs = []
        for i, config in enumerate(configs):
            _, rec = self._trial(config, args, kwargs, grid, record=True)
            moved = sum(t["totals"]["loaded_bytes"] + t["totals"]["stored_bytes"]
                        for launch in rec.launches for t in launch["tensors"].values())
            programs = sum(launch["num_programs"] for launch in rec.launches)
            costs.append((moved, programs, i))
        return configs[min(costs)[2]]

    def _compare_all(self, configs, args, kwargs, grid):
        reference, _ = self._trial(configs[0], args, kwargs, grid)
        for config in configs[1:]:
            outputs, _ = self._trial(config, args, kwargs, grid)
            for name, a, b in zip(self.arg_names, reference, outputs):
                x, y = _array(a), _array(b)
                if x is None:
                    continue
                if not _agree(x, y):
                    diff = np.argwhere(~_close(x, y))
                    raise errors.AutotuneMismatchError(errors.diagnostic(
                        "autotune_mismatch", name=name, first=str(configs[0]), other=str(config), count=len(diff),
                        index=str(tuple(int(i) for i in diff[0]))))


class Heuristics(KernelInterface):
    """The object `@triton.heuristics` returns: meta-parameters computed from the arguments."""

    def __init__(self, fn, arg_names, values):
        self.fn = fn
        self.arg_names = arg_names
        self.values = values
        self.__name__ = getattr(fn, "__name__", "kernel")

    def run(self, *args, grid, warmup=False, **kwargs):
        nargs = dict(zip(self.arg_names, args))
        nargs.update(kwargs)
        for name, fn in self.values.items():
            kwargs[name] = fn(nargs)
            nargs[name] = kwargs[name]
        return self.fn.run(*args, grid=grid, warmup=warmup, **kwargs)


def _base_arg_names(fn):
    while not hasattr(fn, "arg_names") or isinstance(fn, (Autotuner, Heuristics)):
        if isinstance(fn, (Autotuner, Heuristics)):
            return fn.arg_names
        fn = fn.fn
    return fn.arg_names


def autotune(configs, key, prune_configs_by=None, reset_to_zero=None, restore_value=None, pre_hook=None,
             post_hook=None, warmup=None, rep=None, use_cuda_graph=False, do_bench=None, cache_results=False):
    """`@triton.autotune(configs=[...], key=[...])`."""
    def decorator(fn):
        return Autotuner(fn, _base_arg_names(fn), configs, key, reset_to_zero, restore_value, pre_hook, post_hook,
                         prune_configs_by, warmup, rep, use_cuda_graph, do_bench, cache_results)
    return decorator


def heuristics(values):
    """`@triton.heuristics({"BLOCK": lambda args: ...})`."""
    def decorator(fn):
        return Heuristics(fn, _base_arg_names(fn), values)
    return decorator


def _key_part(v):
    if isinstance(v, TensorDescriptor):
        return ("descriptor", _key_part(v.base), tuple(v.shape), tuple(v.strides), tuple(v.block_shape), v.padding)
    found = as_array(v) if v is not None else None
    if found is not None:
        return ("array", str(found[1]), tuple(found[0].shape))
    return v


def _array(v):
    if isinstance(v, TensorDescriptor):
        return _array(v.base)
    found = as_array(v) if v is not None else None
    return found[0] if found is not None else None


def _copy(v):
    if isinstance(v, TensorDescriptor):  # a descriptor of a copy of its base (pre_hooks may set its block_shape)
        c = copy.copy(v)
        c.base = _copy(v.base)
        return c
    found = as_array(v) if v is not None else None
    if found is None:
        return v
    if hasattr(v, "clone"):
        return v.clone()
    if hasattr(v, "triton_dtype") and hasattr(v, "array"):  # minitriton.Buffer (bf16): copy its storage
        return type(v)(v.array.copy(), v.triton_dtype)
    return v.copy()


def _close(x, y):
    if x.dtype.kind == "f":
        return np.isclose(x, y, rtol=1e-4, atol=1e-5, equal_nan=True)
    if x.dtype == np.uint16:  # bf16 bits: compare as values
        return np.isclose(bf16_bits_to_f32(x), bf16_bits_to_f32(y), rtol=1e-2, atol=1e-2, equal_nan=True)
    return x == y


def _agree(x, y):
    return bool(_close(x, y).all())
