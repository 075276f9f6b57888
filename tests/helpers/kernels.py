"""Kernels built from source text, as tests write them inline."""
from __future__ import annotations

import linecache
import textwrap

import minitriton
import minitriton.language as tl

_KERNELS: dict = {}


def make_kernel(src: str, name: str | None = None, **namespace):
    """A `@triton.jit` function built from source text (cached by text).

    The source is registered with `linecache`, so compile errors show the kernel line and caret as they do
    for kernels written in a file. `triton`, `tl` and `namespace` are the kernel's globals.
    """
    src = textwrap.dedent(src).strip() + "\n"
    key = (src, name, tuple(sorted((k, id(v)) for k, v in namespace.items())))
    found = _KERNELS.get(key)
    if found is not None:
        return found
    filename = f"<generated-kernel-{len(_KERNELS)}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    scope = {"triton": minitriton, "tl": tl, **namespace}
    exec(compile(src, filename, "exec"), scope)
    if name is None:
        jitted = [v for v in scope.values() if isinstance(v, minitriton.JITFunction)]
        assert len(jitted) == 1, f"expected one @triton.jit function in the source, found {len(jitted)}"
        fn = jitted[0]
    else:
        fn = scope[name]
    _KERNELS[key] = fn
    return fn


def run_kernel(src: str, *args, grid=(1,), **kwargs):
    """Build the kernel in `src` (see `make_kernel`) and launch it on `grid` with `args`/`kwargs`."""
    kernel = make_kernel(src)
    kernel[grid](*args, **kwargs)
    return kernel
