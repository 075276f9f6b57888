"""Host-side helpers shared by the kernels: arrays of either kind, without importing torch.

Kernels run on NumPy arrays (and `minitriton.Buffer` for bf16) under minitriton, and on torch tensors
(CPU under minitriton, CUDA under real Triton). Host wrappers go through these helpers only, so nothing
here imports torch unless the caller already passed a torch tensor.
"""
from __future__ import annotations

import functools

import numpy as np


# The torch tensor types `is_torch` has seen. Host wrappers test `type(x) in TORCH_TYPES` (one set lookup) before
# they look up a cached launch plan, whose key reads torch-only attributes such as `x.stride()`.
TORCH_TYPES: set = set()


def is_torch(x) -> bool:
    """True for a torch.Tensor (checked without importing torch)."""
    t = type(x)
    if t in TORCH_TYPES:
        return True
    if t.__module__.startswith("torch") and hasattr(x, "data_ptr"):
        TORCH_TYPES.add(t)
        return True
    return False


def is_buffer(x) -> bool:
    """True for a minitriton.Buffer (NumPy storage tagged with a Triton dtype, e.g. bf16)."""
    return hasattr(x, "triton_dtype") and hasattr(x, "array")


def shape(x) -> tuple:
    return tuple(x.shape)


def stride(x, dim: int) -> int:
    """Stride of dimension `dim` in elements, as Triton sees it."""
    if is_torch(x) or is_buffer(x):
        return int(x.stride(dim))
    return int(x.strides[dim] // x.itemsize)


def address(x) -> int:
    """The address of x's first element for alignment checks: a torch tensor's `data_ptr()`; for NumPy memory
    (which only minitriton runs), its offset past a 256-byte boundary as a GPU would place it, minitriton's
    rule (the host's malloc aligns to 16 bytes on 64-bit Linux but to 8 on wasm32)."""
    if is_torch(x):
        return int(x.data_ptr())
    from minitriton.memory.allocation import alignment_offset

    return alignment_offset(x.array if is_buffer(x) else x)


def numel(x) -> int:
    if is_torch(x) or is_buffer(x):
        return int(x.numel())
    return int(x.size)


def dtype_name(x) -> str:
    """'float32', 'float16', 'bfloat16', ... for any array kind."""
    if is_torch(x):
        return str(x.dtype).replace("torch.", "")
    if is_buffer(x):
        return {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "fp64": "float64"}.get(
            str(x.triton_dtype), str(x.triton_dtype))
    return x.dtype.name


def empty(shape_, like, dtype: str | None = None):
    """An uninitialised array of `shape_` of the same kind (and device) as `like`; dtype by name or like's."""
    dtype = dtype or dtype_name(like)
    if is_torch(like):
        import torch
        return torch.empty(shape_, dtype=getattr(torch, dtype), device=like.device)
    if dtype == "bfloat16":
        from minitriton import Buffer
        from minitriton.language import bfloat16
        return Buffer.empty(shape_, bfloat16)
    return np.empty(shape_, dtype=dtype)


def zeros(shape_, like, dtype: str | None = None):
    """Zeros of `shape_`, same kind as `like`."""
    dtype = dtype or dtype_name(like)
    if is_torch(like):
        import torch
        return torch.zeros(shape_, dtype=getattr(torch, dtype), device=like.device)
    if dtype == "bfloat16":
        from minitriton import Buffer
        from minitriton.language import bfloat16
        return Buffer.zeros(shape_, bfloat16)
    return np.zeros(shape_, dtype=dtype)


def empty_like(x, dtype: str | None = None):
    return empty(shape(x), x, dtype)


def contiguous(x):
    """A C-contiguous version of `x` (a copy only when needed)."""
    if is_torch(x):
        return x.contiguous()
    if is_buffer(x):
        if x.array.flags.c_contiguous:
            return x
        return type(x)(np.ascontiguousarray(x.array), x.triton_dtype)
    return np.ascontiguousarray(x)


def reshape(x, shape_):
    if is_buffer(x):
        return type(x)(x.array.reshape(shape_), x.triton_dtype)
    return x.reshape(shape_)


def to_float64(x) -> np.ndarray:
    """The values as a float64 NumPy array (for references and comparisons)."""
    if is_torch(x):
        return x.detach().float().cpu().numpy().astype(np.float64)
    if is_buffer(x):
        return x.to_float32().astype(np.float64)
    return np.asarray(x, dtype=np.float64)


def from_float(values: np.ndarray, like, dtype: str | None = None):
    """NumPy float values as an array of the same kind as `like` (rounded to nearest even for bf16)."""
    dtype = dtype or dtype_name(like)
    if is_torch(like):
        import torch
        return torch.from_numpy(np.ascontiguousarray(values, dtype=np.float32)).to(
            dtype=getattr(torch, dtype), device=like.device)
    if dtype == "bfloat16":
        from minitriton import Buffer
        from minitriton.language import bfloat16
        return Buffer.from_float(values, bfloat16)
    return np.asarray(values, dtype=dtype)


_ITEMSIZES = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "int64": 8, "int32": 4, "int16": 2,
              "int8": 1, "uint8": 1, "bool": 1}


def itemsize(dtype: str) -> int:
    """Bytes per element of a dtype name as `dtype_name` spells it ('float32', 'bfloat16', ...)."""
    return _ITEMSIZES[dtype]


# ----------------------------------------------------------------------------- launch plans (torch tensors)
#
# A host wrapper validates its arguments and works out its launch (blocks, grid, strides, which copies and
# allocations) once per key; for torch tensors it keeps the result, a "plan": a function that allocates the
# outputs and launches the kernel. A repeat call costs one key, one dict lookup and the plan. The key holds
# everything the validation and the launch depend on (the types, shapes, dtypes and strides of the arrays,
# the options with their types), so a kept plan is always the one a fresh validation would build. The
# device is not in it: plans allocate on the device of the arrays they are given (torch.empty_like, or
# device=a.device), and Triton launches on the current device, as before. Plans hold no arrays. NumPy arrays
# and minitriton.Buffers build their plan on every call, through the same code, and nothing of theirs is kept.

MAX_PLANS = 1024      # per cache: the whole cache is dropped when it is full (shapes that vary without end)


def remember(plans: dict, key, plan):
    """plans[key] = plan, emptying `plans` first when it holds MAX_PLANS; returns plan. A key that cannot be
    hashed (an option given as a list, say) is not kept: the plan then serves the one call."""
    if len(plans) >= MAX_PLANS:
        plans.clear()
    try:
        plans[key] = plan
    except TypeError:
        pass
    return plan


def c_strides(shape_) -> tuple:
    """The strides (in elements) torch gives a new C-contiguous tensor of `shape_` (sizes 0 count as 1)."""
    strides, step = [], 1
    for n in reversed(tuple(shape_)):
        strides.append(step)
        step *= max(int(n), 1)
    return tuple(reversed(strides))


def allocator(shape_, like, dtype: str | None = None):
    """A function f(a) -> an uninitialised C-contiguous array of `shape_`, of like's kind, for arrays `a`
    that are like `like` (same kind, shape, dtype, strides and device); dtype by name, like's by default.

    For torch it is resolved once: `torch.empty_like` when `like` is itself C-contiguous with that shape and
    dtype, otherwise `torch.empty` with the dtype fixed, on the device of the array it is given. Other kinds
    go through `empty` on every call.
    """
    if is_torch(like):
        import torch
        shape_ = tuple(int(n) for n in shape_)
        same_dtype = dtype is None or dtype == dtype_name(like)
        if same_dtype and tuple(like.shape) == shape_ and tuple(like.stride()) == c_strides(shape_):
            return torch.empty_like
        torch_dtype = like.dtype if same_dtype else getattr(torch, dtype)
        if not shape_:
            return lambda a: torch.empty((), dtype=torch_dtype, device=a.device)
        # the sizes as separate arguments: torch parses them faster than a tuple
        return lambda a: torch.empty(*shape_, dtype=torch_dtype, device=a.device)
    return lambda a: empty(shape_, a, dtype)


def as_rows(like, n_rows: int, n_cols: int):
    """A function f(a) -> `a` as a C-contiguous (n_rows, n_cols) array (a copy only when `a` is not
    C-contiguous), for arrays `a` of like's kind."""
    if is_torch(like):
        return lambda a: a.contiguous().view(n_rows, n_cols)
    return lambda a: reshape(contiguous(a), (n_rows, n_cols))


def launcher(kernel, grid, **options):
    """`kernel[grid]` for a plan to keep, with keyword arguments (constexprs, num_warps, ...) bound: f(*args)
    launches `kernel` on `grid`, calling the kernel's `run` directly (what `kernel[grid]` does through a new
    lambda on every launch)."""
    return functools.partial(kernel.run, grid=grid, warmup=False, **options)


def compiled_launcher(kernel, grid, pointers=(), **options):
    """`launcher` for a kept plan, launching real Triton's compiled kernel directly once it is known.

    `kernel.run` binds and specialises every argument on each call to find the compiled kernel (tens of
    microseconds of host time, more with tensor descriptors: `docs/findings.md` §4). A plan can skip that when
    nothing in a call can pick another compiled kernel: integers fixed by the plan's key, outputs the plan
    allocates, tensor descriptors of one shape and block. What can still vary are the caller's arrays, whose
    addresses Triton specialises on being 16-byte aligned: `pointers` lists their positions in the call, and a
    call where any of them is not aligned goes through `kernel.run`. The first aligned launch on each device
    goes through `kernel.run` too, which compiles (or finds) the kernel and returns its `CompiledKernel`; later
    aligned launches on that device call it directly (`CompiledKernel[grid]`, on the current stream). Where
    `run` returns no `CompiledKernel` (minitriton, Triton's interpreter), every launch goes through `run`."""
    run = launcher(kernel, grid, **options)
    grid3 = tuple(grid) + (1,) * (3 - len(grid))
    runners = {}                 # device -> f(*args) launching its CompiledKernel
    direct = [None]              # unknown until an aligned launch; then whether `run` gave a CompiledKernel

    def launch(*args):
        if direct[0] is False:
            return run(*args)
        for i in pointers:
            if address(args[i]) & 15:
                return run(*args)
        device = _current_device() if direct[0] else None
        runner = runners.get(device)
        if runner is not None:
            return runner(*args)
        compiled = run(*args)
        direct[0] = hasattr(compiled, "packed_metadata") and hasattr(compiled, "__getitem__")
        if direct[0]:
            runners[_current_device()] = functools.partial(_launch_compiled, compiled[grid3],
                                                           _bound_tail(kernel, len(args), options))
        return compiled
    return launch


def _current_device():
    from triton.runtime import driver
    return driver.active.get_current_device()


def _bound_tail(kernel, n_args: int, options: dict) -> tuple:
    """The values of `kernel`'s parameters after the first n_args (bound in options, or their defaults) in
    signature order: a `CompiledKernel` takes every argument, constexprs included, positionally."""
    values = []
    for p in list(kernel.signature.parameters.values())[n_args:]:
        if p.name in options:
            values.append(options[p.name])
        elif p.default is not p.empty:
            values.append(p.default)
        else:
            raise TypeError(f"{kernel.__name__}() missing argument: {p.name!r}")
    return tuple(values)


def _launch_compiled(runner, tail, *args):
    return runner(*args, *tail)


def contiguous_fn(like):
    """None when arrays like `like` are used as they are (a C-contiguous torch tensor: its strides are in the
    plan's key), else `contiguous`, to be applied on every call (a copy only when needed)."""
    if is_torch(like) and like.is_contiguous():
        return None
    return contiguous
