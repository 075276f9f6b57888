"""The probe: its fields, the registry `PROBES` and the helpers every section uses to declare one."""

import textwrap
from dataclasses import dataclass, field

import numpy as np

from parity.oracle import BF16

HEADER = "import triton\nimport triton.language as tl\n\n"


@dataclass
class Probe:
    name: str
    rule: str
    source: str
    kernel: str
    grid: tuple
    args: tuple
    kwargs: dict = field(default_factory=dict)
    check: dict = field(default_factory=dict)
    check_cuda: dict = field(default_factory=dict)
    check_interp: dict = field(default_factory=dict)
    expect: dict = field(default_factory=dict)
    interp: str | None = None
    interp_value: dict = field(default_factory=dict)
    error: str | None = None
    gpu_error: str | None = None
    interp_error_free: bool = True
    interp_error: str | None = None
    known_gap: str | None = None
    skip: str | None = None
    targets: tuple = ("interpreter", "cuda")

    def comparators(self, target):
        merged = dict(self.check)
        merged.update(self.check_cuda if target == "cuda" else self.check_interp)
        return merged


PROBES: dict[str, Probe] = {}


def kernel(sig: str, body: str, debug: bool = False) -> tuple:
    """(source, kernel name) of one `@triton.jit` function."""
    name = sig.split("(")[0]
    deco = "@triton.jit(debug=True)" if debug else "@triton.jit"
    return HEADER + f"{deco}\ndef {sig}:\n" + textwrap.indent(textwrap.dedent(body).strip(), "    ") + "\n", name


def probe(name, rule, src, grid, args, **kw):
    assert name not in PROBES, name
    source, kname = src
    PROBES[name] = Probe(name, rule, source, kname, tuple(grid), tuple(args), **kw)


def ew(name, rule, inputs, exprs, out_dtype, **kw):
    """An elementwise probe: inputs x, y, z (same length N, a power of 2); exprs stored to out[k*N:(k+1)*N]."""
    n = len(inputs[0].array if isinstance(inputs[0], BF16) else inputs[0])
    names = "xyz"[:len(inputs)]
    loads = "\n".join(f"{v} = tl.load({v}_ptr + offs)" for v in names)
    stores = "\n".join(f"tl.store(out_ptr + {k} * N + offs, {e})" for k, e in enumerate(exprs))
    src = kernel(f"{name}({', '.join(v + '_ptr' for v in names)}, out_ptr, N: tl.constexpr)",
                 f"offs = tl.arange(0, N)\n{loads}\n{stores}")
    out = BF16(np.zeros(n * len(exprs), np.uint16)) if out_dtype == "bf16" else np.zeros(n * len(exprs), out_dtype)
    probe(name, rule, src, (1,), (*inputs, out), kwargs={"N": n}, **kw)


def i32(*v):
    return np.array(v, np.int32)


def f32(*v):
    return np.array(v, np.float32)


def bits_f32(*v):
    return np.array(v, np.uint32).view(np.float32)


OUT = None  # marker: the output argument is the last array argument
rng = np.random.default_rng(20241129)

