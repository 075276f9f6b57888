"""The probe set: one small kernel per rule of docs/semantics.md.

Each `Probe` names its doc row, the kernel source, its arguments and how each output is compared
(default: exact; `check`, or `check_cuda` / `check_interp` per target). `expect` holds values the doc gives
(measured on the H200, or fixed by a rule): minitriton must produce them on every target, and on the GPU
real Triton must too (else the doc, or the pinned version, changed). `interp` marks an expected divergence
of Triton's interpreter from the GPU, with the reason; `interp_value` the interpreter's documented wrong
value, checked so the list cannot rot silently. `error` is a compile error both sides raise (regex);
`gpu_error` one the GPU raises while the interpreter runs; `interp_error` one the interpreter raises while
the GPU runs (with `interp` saying why; minitriton is then held to `expect`). `known_gap`: minitriton does not yet do what the
GPU does (an explained, listed mismatch). `skip` keeps a probe in the table with a reason but runs nothing.
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass, field

import numpy as np

from parity.compare import MATH_ULPS, by_parts, close, exact, ulps, within
from parity.oracle import BF16, Descriptor

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

# ================================================================ S1.1-S1.16: integers, NaN
ew("int_divmod_c", "S1.1", [i32(-7, 7, -7, 7), i32(2, 2, -2, -2)], ["x // y", "x % y"], np.int32,
   expect={2: i32(-3, 3, 3, -3, -1, 1, -1, 1)})
ew("int_divmod_more", "S1.2", [i32(-8, -8, -1, -1), i32(3, 3, 3, 3)], ["x // y", "x % y"], np.int32,
   expect={2: i32(-2, -2, 0, 0, -2, -2, -1, -1)})
probe("scalar_divmod_runtime_vs_constexpr", "S1.3, S1.4",
      kernel("scalar_divmod(out_ptr, a, b, A: tl.constexpr, B: tl.constexpr)", """
          tl.store(out_ptr + 0, a // b)
          tl.store(out_ptr + 1, a % b)
          tl.store(out_ptr + 2, A // B)
          tl.store(out_ptr + 3, A % B)"""),
      (1,), (np.zeros(4, np.int32), -7, 2), kwargs={"A": -7, "B": 2}, expect={0: i32(-3, -1, -4, 1)})
ew("int_div_by_zero", "S1.5", [i32(7, -7, 0, 1), i32(0, 0, 0, 0)], ["x // y", "x % y"], np.int32,
   expect={2: i32(-1, -1, -1, -1, 7, -7, 0, 1)},
   interp="S1.5: the interpreter gives q=0, r=0 (NumPy, with divide-by-zero warnings); the GPU gives "
          "q=-1, r=x", interp_value={2: i32(0, 0, 0, 0, 0, 0, 0, 0)})
ew("int32_wraparound", "S1.6", [i32(2147483647, 0, -1, 5)], ["x + 1", "x * 2", "(x + 1) // 2"], np.int32,
   expect={1: i32(-2147483648, 1, 0, 6, -2, 0, -2, 10, -1073741824, 0, 0, 3)})
probe("int_args_typed_by_value", "S1.8, S1.9",
      kernel("int_args(out_ptr, n, m)", """
          tl.store(out_ptr + 0, n + 1)
          tl.store(out_ptr + 1, n * 4)
          tl.store(out_ptr + 2, m + 1)
          tl.store(out_ptr + 3, m * 4)"""),
      (1,), (np.zeros(4, np.int64), 2**31 - 1, 2**40),
      expect={0: np.array([-2**31, -4, 2**40 + 1, 2**42], np.int64)})
probe("offset_overflow_pid_stride", "S1.10, S4.3",
      kernel("offset_wrap(out_ptr, stride)", "tl.store(out_ptr, tl.program_id(0) + stride * 3)"),
      (1,), (np.zeros(1, np.int64), 2**30), expect={0: np.array([-2**30], np.int64)})
probe("int32_plus_uint32_is_uint32", "S1.11, S3.4",
      kernel("prefer_unsigned(x_ptr, y_ptr, out_ptr, code_ptr)", """
          r = tl.load(x_ptr) + tl.load(y_ptr)
          tl.store(out_ptr, r.to(tl.int64))
          tl.store(code_ptr, r.dtype.is_int_unsigned() * 100 + r.dtype.primitive_bitwidth)"""),
      (1,), (i32(-1), np.array([1], np.uint32), np.zeros(1, np.int64), np.zeros(1, np.int32)),
      expect={2: np.array([0], np.int64), 3: i32(132)})
ew("float_mod_is_fmod", "S1.12", [f32(-7.5, 7.5, -7.5, 7.5), f32(2, 2, -2, -2)], ["x % y"], np.float32,
   expect={2: f32(-1.5, 1.5, -1.5, 1.5)})
probe("float_floordiv_rejected", "S1.13, S14.14",
      kernel("float_floordiv(x_ptr)", "x = tl.load(x_ptr)\ntl.store(x_ptr, x // 2.0)"),
      (1,), (np.zeros(1, np.float32),), error=r"unexpected type fp32")
ew("maximum_ignores_nan", "S1.14", [f32(np.nan, 0, 2, 3), f32(1, np.nan, np.nan, -1)],
   ["tl.maximum(x, 1.0)", "tl.minimum(x, 1.0)", "tl.maximum(x, y)", "tl.minimum(x, y)",
    "tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL)"], np.float32,
   expect={2: f32(1, 1, 2, 3, 1, 0, 1, 1, 1, 0, 2, 3, 1, 0, 2, -1, np.nan, np.nan, np.nan, 3)})
probe("max_reduction_ignores_nan_sum_propagates", "S1.15, S1.16",
      kernel("nan_reductions(x_ptr, out_ptr)", """
          x = tl.load(x_ptr + tl.arange(0, 4))
          tl.store(out_ptr + 0, tl.max(x, axis=0))
          tl.store(out_ptr + 1, tl.min(x, axis=0))
          tl.store(out_ptr + 2, tl.sum(x, axis=0))"""),
      (1,), (f32(np.nan, 0, 2, 3), np.zeros(3, np.float32)), expect={1: f32(3, 0, np.nan)})

# ================================================================ S1.17-S1.23 and S2: bf16 / fp16 casts, bf16 math
TABLE2 = bits_f32(0x3FFFFFFF, 0x3F808000, 0x3F818000, 0x3F80C000, 0x3F807FFF, 0xF8080001, 0x7F7FFFFF, 0x00000001)
RTNE = np.array([0x4000, 0x3F80, 0x3F82, 0x3F81, 0x3F80, 0xF808, 0x7F80, 0x0000], np.uint16)
TRUNC = np.array([0x3FFF, 0x3F80, 0x3F81, 0x3F80, 0x3F80, 0xF808, 0x7F7F, 0x0000], np.uint16)
FP16 = np.array([0x4000, 0x3C04, 0x3C0C, 0x3C06, 0x3C04, 0xFC00, 0x7C00, 0x0000], np.uint16).view(np.float16)
ew("fp32_to_bf16_rtne", "S1.17, S2", [TABLE2], ["x.to(tl.bfloat16)"], "bf16", expect={1: BF16(RTNE)},
   interp="S1.17: the interpreter truncates fp32 -> bf16 (3.6 and 3.9); the GPU rounds to nearest even",
   interp_value={1: BF16(TRUNC)})
probe("store_fp32_into_bf16_pointer", "S1.18",
      kernel("store_bf16(x_ptr, out_ptr, N: tl.constexpr)",
             "offs = tl.arange(0, N)\ntl.store(out_ptr + offs, tl.load(x_ptr + offs))"),
      (1,), (TABLE2, BF16(np.zeros(8, np.uint16))), kwargs={"N": 8}, expect={1: BF16(RTNE)},
      interp="S1.18: the interpreter's implicit store cast truncates; a store casts like .to() (RTNE)",
      interp_value={1: BF16(TRUNC)})
SUB = f32(1e-39, -1e-39, 1e-40, 3e-39)
ew("fp32_subnormal_to_bf16", "S1.19", [SUB], ["x.to(tl.bfloat16)"], "bf16", expect={1: BF16.round(SUB)},
   interp="S1.19: the interpreter turns the fp32 subnormal 1e-39 into 4.22e-39; RTNE gives 1.01e-39")
ew("fp32_to_bf16_rtz", "S1.20, S2", [TABLE2], ['x.to(tl.bfloat16, fp_downcast_rounding="rtz")'], "bf16",
   expect={1: BF16(TRUNC)})
ew("fp32_to_fp16_rtne", "S1.21, S2", [TABLE2], ["x.to(tl.float16)"], np.float16, expect={1: FP16})
ew("bf16_add_and_compare", "S1.22",
   [BF16.from_float([2.5, -5, 1, 3]), BF16.from_float([2, -2, 1, -3])], ["x + y", "(x < y).to(tl.bfloat16)"], "bf16",
   expect={2: BF16(np.array([0x4090, 0xC0E0, 0x4000, 0x0000, 0, 0x3F80, 0, 0], np.uint16))},
   interp="S1.22: the interpreter adds and compares the raw uint16 bit patterns of bf16 values")
probe("bf16_mul_and_sum", "S1.23",
      kernel("bf16_mul_sum(x_ptr, y_ptr, out_ptr, sum_ptr)", """
          offs = tl.arange(0, 4)
          x = tl.load(x_ptr + offs)
          y = tl.load(y_ptr + offs)
          tl.store(out_ptr + offs, x * y)
          tl.store(out_ptr + 4 + offs, x * 2.0)
          tl.store(sum_ptr, tl.sum(x, axis=0).to(tl.float32))"""),
      (1,), (BF16.from_float([1, 2.5, -5, 0.5]), BF16.from_float([2, 2, -2, 4]), BF16(np.zeros(8, np.uint16)),
             np.zeros(1, np.float32)),
      expect={2: BF16.from_float([2, 5, 10, 2, 2, 5, -10, 1]), 3: f32(-1.0)},
      interp="S1.23: bf16 x*y and x*2.0 give 0 and tl.sum gives 2.55e38 in the interpreter (bit patterns)")
ew("bf16_with_int32_is_fp32", "S1.44, S3.1", [BF16.from_float([1, 1, 1, 1]), i32(2048, 2048, 1, -3)],
   ["x + y"], np.float32, expect={2: f32(2049, 2049, 2, -2)})
ew("fp16_with_int32_is_fp16", "S1.45, S3.1",
   [np.ones(4, np.float16), i32(2048, 2048, 1, -3)], ["(x + y).to(tl.float32)"], np.float32,
   expect={2: f32(2048, 2048, 2, -2)})

# ================================================================ dots: S1.24-S1.30, S1.43, S1.55, S8
DOT = ("dot(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, PREC: tl.constexpr)", """
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    if PREC == "default":
        c = tl.dot(a, b)
    else:
        c = tl.dot(a, b, input_precision=PREC)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c)""")
DOT_SRC = kernel(*DOT)


def _tf32(x):
    return (np.ascontiguousarray(x, np.float32).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


def dot_bound(a, b, tf32=False):
    """Two fp32 accumulations of the same exact products differ by at most 2 K eps (|a| @ |b|)."""
    a64 = (_tf32(a) if tf32 else np.asarray(a, np.float32)).astype(np.float64)
    b64 = (_tf32(b) if tf32 else np.asarray(b, np.float32)).astype(np.float64)
    return 2 * a.shape[1] * 2.0 ** -24 * (np.abs(a64) @ np.abs(b64)) + 1e-30


def bounded(bound):
    def check(mt, ref):
        return within(mt, ref, bound)
    check.describe = "K*eps*|a|@|b|"
    return check


A64, B64 = rng.standard_normal((2, 64, 64)).astype(np.float32)
probe("dot_fp32_default_is_tf32", "S1.24, S1.43, S8.3", DOT_SRC, (1,), (A64, B64, np.zeros((64, 64), np.float32)),
      kwargs={"M": 64, "N": 64, "K": 64, "PREC": "default"}, check={2: bounded(dot_bound(A64, B64, tf32=True))},
      interp="S1.24: the interpreter ignores input_precision and computes plain fp32 (error 7e-6 instead "
             "of TF32's 2.6e-2)")
probe("dot_fp32_ieee", "S1.25", DOT_SRC, (1,), (A64, B64, np.zeros((64, 64), np.float32)),
      kwargs={"M": 64, "N": 64, "K": 64, "PREC": "ieee"}, check={2: bounded(dot_bound(A64, B64))})
X43 = f32(1 + 2**-11, 1 + 2**-10 + 2**-11, 1 + 2**-11 + 2**-12, -(1 + 2**-11), 1 + 2**-13, 1 + 2**-12, 1, 1)
DIAG = np.diag(np.concatenate([X43, np.ones(8, np.float32)])).astype(np.float32)
TF32_DIAG = np.diag(np.concatenate([f32(1, 1.0009765625, 1, -1, 1, 1, 1, 1), np.ones(8, np.float32)]))
probe("dot_tf32_truncates_a", "S1.43, S1.26, S8.4", DOT_SRC, (1,),
      (DIAG, np.eye(16, dtype=np.float32), np.zeros((16, 16), np.float32)),
      kwargs={"M": 16, "N": 16, "K": 16, "PREC": "default"}, expect={2: TF32_DIAG.astype(np.float32)},
      interp="S1.43: the interpreter multiplies the full fp32 inputs (1.00048828, ...)")
probe("dot_tf32_truncates_b", "S1.43, S8.4", DOT_SRC, (1,),
      (np.eye(16, dtype=np.float32), DIAG, np.zeros((16, 16), np.float32)),
      kwargs={"M": 16, "N": 16, "K": 16, "PREC": "default"}, expect={2: TF32_DIAG.astype(np.float32)},
      interp="S1.43: the interpreter multiplies the full fp32 inputs")
BFA = rng.integers(-8, 9, (16, 16)).astype(np.float32) / 4
BFB = rng.integers(-8, 9, (16, 16)).astype(np.float32) / 2
probe("dot_bf16_exact_inputs", "S1.27", DOT_SRC, (1,),
      (BF16.from_float(BFA), BF16.from_float(BFB), np.zeros((16, 16), np.float32)),
      kwargs={"M": 16, "N": 16, "K": 16, "PREC": "default"}, expect={2: (BFA.astype(np.float64) @ BFB).astype(np.float32)},
      interp="S1.27 (triton#11584): the interpreter multiplies bf16 bit patterns (error ~1e10)")
probe("dot_fp16_exact_inputs", "S1.28", DOT_SRC, (1,),
      (BFA.astype(np.float16), BFB.astype(np.float16), np.zeros((16, 16), np.float32)),
      kwargs={"M": 16, "N": 16, "K": 16, "PREC": "default"}, expect={2: (BFA.astype(np.float64) @ BFB).astype(np.float32)})
probe("dot_fp16_k8_rejected", "S1.29, S8.5", DOT_SRC, (1,),
      (np.ones((16, 8), np.float16), np.ones((8, 16), np.float16), np.zeros((16, 16), np.float32)),
      kwargs={"M": 16, "N": 16, "K": 8, "PREC": "default"}, gpu_error=r"K >= 16",
      interp="S1.29: Triton 3.6 on NVIDIA needs K >= 16 (CompilationError); the interpreter accepts K=8")
probe("dot_fp16_m8_n8", "S1.30", DOT_SRC, (1,),
      (BFA[:8].astype(np.float16), np.ascontiguousarray(BFB[:, :8]).astype(np.float16), np.zeros((8, 8), np.float32)),
      kwargs={"M": 8, "N": 8, "K": 16, "PREC": "default"},
      expect={2: (BFA[:8].astype(np.float64) @ BFB[:, :8]).astype(np.float32)})
A55 = np.zeros((16, 16), np.float16)
A55[0] = [2048] + [1] * 15
A55[1:] = rng.integers(-3, 4, (15, 16))
probe("dot_fp16_out_fp16_rounds_once", "S1.55, S8.2",
      kernel("dot_out_fp16(a_ptr, b_ptr, c_ptr)", """
          r = tl.arange(0, 16)
          a = tl.load(a_ptr + r[:, None] * 16 + r[None, :])
          b = tl.load(b_ptr + r[:, None] * 16 + r[None, :])
          tl.store(c_ptr + r[:, None] * 16 + r[None, :], tl.dot(a, b, out_dtype=tl.float16))"""),
      (1,), (A55, np.ones((16, 16), np.float16), np.zeros((16, 16), np.float16)),
      expect={2: (A55.astype(np.float64) @ np.ones((16, 16))).astype(np.float16)})
I8A, I8B = rng.integers(-128, 128, (2, 32, 32)).astype(np.int8)
probe("dot_int8_accumulates_int32", "S8.2", DOT_SRC, (1,), (I8A, I8B, np.zeros((32, 32), np.int32)),
      kwargs={"M": 32, "N": 32, "K": 32, "PREC": "default"}, expect={2: (I8A.astype(np.int32) @ I8B).astype(np.int32)})
probe("dot_int8_k16_rejected", "S8.5", DOT_SRC, (1,),
      (I8A[:, :16].copy(), I8B[:16].copy(), np.zeros((32, 32), np.int32)),
      kwargs={"M": 32, "N": 32, "K": 16, "PREC": "default"}, gpu_error=r"K >= 32",
      interp="S8.5: the interpreter's minimum dot size is 1x1x1")
F64A = rng.integers(-9, 10, (16, 16)).astype(np.float64)
probe("dot_fp64", "S8.1", DOT_SRC, (1,), (F64A, F64A.T.copy(), np.zeros((16, 16), np.float64)),
      kwargs={"M": 16, "N": 16, "K": 16, "PREC": "default"}, expect={2: F64A @ F64A.T})
probe("dot_out_bf16_rejected", "S8.2",
      kernel("dot_out_bf16(a_ptr, c_ptr)", """
          r = tl.arange(0, 16)
          a = tl.load(a_ptr + r[:, None] * 16 + r[None, :])
          tl.store(c_ptr + r[:, None] * 16 + r[None, :], tl.dot(a, a, out_dtype=tl.bfloat16))"""),
      (1,), (np.ones((16, 16), np.float16), np.zeros((16, 16), np.float32)), error=r"out_dtype=bfloat16 is unsupported")

# ================================================================ memory, math, atomics, grids: S1.31-S1.39
probe("masked_load_default_zero", "S1.31, S6.1, S9.1",
      kernel("masked_default(x_ptr, out_ptr, n)", """
          offs = tl.arange(0, 8)
          m = offs < n
          tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m))
          tl.store(out_ptr + 8 + offs, tl.load(x_ptr + offs, mask=m, other=-2.5))
          tl.store(out_ptr + 16 + offs, tl.load(x_ptr + offs, mask=m, other=offs * 1.5))"""),
      (1,), (f32(9, 8, 7, 6, 5, 4, 3, 2), np.full(24, -7, np.float32), 1),
      expect={1: np.concatenate([f32(9), np.zeros(7, np.float32), f32(9), np.full(7, -2.5, np.float32),
                                 f32(9), np.arange(1, 8, dtype=np.float32) * 1.5])})
probe("masked_lanes_never_dereferenced", "S6.3",
      kernel("wild_masked(x_ptr, out_ptr)", """
          offs = tl.arange(0, 8)
          wild = tl.where(offs < 2, offs, offs.to(tl.int64) * 1000000000000)
          tl.store(out_ptr + offs, tl.load(x_ptr + wild, mask=offs < 2, other=5))
          tl.store(out_ptr + wild, offs + 10, mask=offs < 2)"""),
      (1,), (i32(1, 2), np.zeros(8, np.int32)), expect={1: i32(10, 11, 5, 5, 5, 5, 5, 5)})
probe("int_wrap_with_debug", "S1.7, S4.4", ("", ""), (1,), (),
      skip="not measured on the GPU: with debug on, Triton's sanitize_overflow checks may assert where minitriton "
           "(and the interpreter) wrap; S1.6 compares the wrap-around without debug")
probe("out_of_bounds_read", "S1.32, S10.1", ("", ""), (1,), (),
      skip="undefined behaviour on both sides (the GPU read zeros here, the interpreter garbage); minitriton raises "
           "OutOfBoundsError by design: the one deliberate divergence")
XM = rng.uniform(-10, 10, 1024).astype(np.float32)
YM = rng.uniform(0.01, 100, 1024).astype(np.float32)
MATH = ["tl.exp(x)", "tl.log(y)", "tl.sqrt(y)", "tl.sin(x)", "x / y"]
ew("math_functions_fp32", "S1.33, S12.2", [XM, YM], MATH, np.float32,
   check_cuda={2: by_parts([(slice(k * 1024, (k + 1) * 1024), ulps(MATH_ULPS[f]))
                            for k, f in enumerate(["exp", "log", "sqrt", "sin", "div"])])})
ew("math_exact_fp32", "S1.33", [XM, YM],
   ["tl.sqrt_rn(y)", "tl.div_rn(x, y)", "tl.fma(x, y, x)", "tl.abs(x)", "tl.floor(x)", "tl.ceil(x)", "-x"], np.float32)
SX, SY = rng.standard_normal((2, 1024)).astype(np.float32)
probe("fp32_sum_of_products", "S1.34, S12.1",
      kernel("sum_products(x_ptr, y_ptr, out_ptr)", """
          offs = tl.arange(0, 1024)
          tl.store(out_ptr, tl.sum(tl.load(x_ptr + offs) * tl.load(y_ptr + offs), axis=0))"""),
      (1,), (SX, SY, np.zeros(1, np.float32)),
      check={2: close(0, 2 * 1024 * 2.0 ** -24 * float(np.sum(np.abs(SX.astype(np.float64) * SY))))})
probe("atomics_100_programs", "S1.35, S1.37, S11.3",
      kernel("atomics(c_ptr, f_ptr)", """
          pid = tl.program_id(0)
          tl.atomic_add(c_ptr, 1)
          tl.atomic_max(c_ptr + 1, pid)
          tl.atomic_min(c_ptr + 2, -pid)
          tl.atomic_or(c_ptr + 3, 1 << (pid % 31))
          tl.atomic_xor(c_ptr + 4, pid)
          tl.atomic_and(c_ptr + 5, ~(1 << (pid % 17)))
          tl.atomic_cas(c_ptr + 6, 0, 7)
          tl.atomic_add(c_ptr + 7, pid, mask=pid % 2 == 0)
          tl.atomic_xchg(c_ptr + 8, 3)
          offs = tl.arange(0, 16)
          tl.atomic_add(c_ptr + 9 + (offs + pid) % 4, 1)
          tl.atomic_add(f_ptr + offs % 2, (pid * 16 + offs).to(tl.float32))"""),
      (100,), (i32(0, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0), np.zeros(2, np.float32)),
      expect={0: i32(100, 99, -99, 2**31 - 1, int(np.bitwise_xor.reduce(np.arange(100))), -1 & ~((1 << 17) - 1), 7,
                     sum(range(0, 100, 2)), 3, 400, 400, 400, 400),
              1: f32(sum(range(0, 1600, 2)), sum(range(1, 1600, 2)))})
probe("grid_3d_program_ids", "S1.36, S11.1",
      kernel("grid3d(out_ptr)", """
          x = tl.program_id(0)
          y = tl.program_id(1)
          z = tl.program_id(axis=2)
          lin = (z * tl.num_programs(1) + y) * tl.num_programs(0) + x
          tl.store(out_ptr + lin * 4 + 0, x)
          tl.store(out_ptr + lin * 4 + 1, y)
          tl.store(out_ptr + lin * 4 + 2, z)
          tl.store(out_ptr + lin * 4 + 3, tl.num_programs(2) * 100 + tl.num_programs(1) * 10 + tl.num_programs(0))"""),
      (2, 3, 4), (np.zeros(24 * 4, np.int32),),
      expect={0: np.array([[x, y, z, 432] for z in range(4) for y in range(3) for x in range(2)], np.int32).ravel()})
probe("program_id_axis_3_rejected", "S1.38, S14.1",
      kernel("bad_pid(out_ptr)", "tl.store(out_ptr, tl.program_id(3))"), (1,), (np.zeros(1, np.int32),),
      error=r"program_id axis must be 0, 1, or 2 but got 3")
probe("arange_not_power_of_2_rejected", "S1.39, S14.2",
      kernel("bad_arange(out_ptr)", "tl.store(out_ptr + tl.arange(0, 10), 1)"), (1,), (np.zeros(16, np.int32),),
      error=r"arange's range must be a power of 2")

# ================================================================ S1.40-S1.42, S1.46-S1.56
probe("loop_scoped_variable_rejected", "S1.40, S1.48, S14.16",
      kernel("loop_scoped(out_ptr, n)", "for i in range(0, n):\n    v = i * 2\ntl.store(out_ptr, v)"),
      (1,), (np.zeros(1, np.int32), 3), gpu_error=r"v is not defined",
      interp="S1.48: the compiler rejects a variable first assigned in a loop body; the interpreter runs")
probe("if_rebinding_type_rejected", "S1.41, S1.49",
      kernel("if_rebinds(out_ptr, n)", "v = n\nif n > 0:\n    v = 1.5\ntl.store(out_ptr, v)"),
      (1,), (np.zeros(1, np.float32), 3), gpu_error=r"then block redefines it as fp32",
      interp="S1.49: the compiler rejects an if that rebinds int32 to fp32; the interpreter runs")
probe("int8_sum_accumulates_int32", "S1.46",
      kernel("sum_int8(x_ptr, out_ptr)", "tl.store(out_ptr, tl.sum(tl.load(x_ptr + tl.arange(0, 4)), axis=0))"),
      (1,), (np.full(4, 100, np.int8), np.zeros(1, np.int32)), expect={1: i32(400)})
ew("int_truediv_is_fp32", "S1.47, S3.5", [i32(7, -7, 1, 0), i32(2, 2, 4, 5)], ["x / y"], np.float32,
   expect={2: f32(3.5, -3.5, 0.25, 0)},
   check_cuda={2: ulps(MATH_ULPS["div"])})
probe("grid_y_over_65535_rejected", "S1.50, S11.2",
      kernel("big_grid(out_ptr)", "tl.store(out_ptr, 1)"), (1, 65536), (np.zeros(1, np.int32),),
      gpu_error=r"invalid argument|exceeds CUDA's limit",
      interp="S1.50: CUDA limits grid y and z to 65535; the interpreter runs the launch")
NAN_INF = f32(np.nan, np.inf, -np.inf, 3e9, -3e9, -2.7, 2.7, -0.5)
ew("fp32_to_int32_saturates", "S1.51, S7.6", [NAN_INF], ["x.to(tl.int32)"], np.int32,
   expect={1: i32(0, 2147483647, -2147483648, 2147483647, -2147483648, -2, 2, 0)},
   interp="S1.51: NumPy's cast (undefined for NaN/inf/out of range) gives -2147483648; the GPU saturates "
          "(cvt.rzi.sat) and maps NaN to 0")
ew("int32_to_uint8_wraps", "S1.52", [i32(300, -1, 255, 256)], ["x.to(tl.uint8)"], np.uint8,
   expect={1: np.array([44, 255, 255, 0], np.uint8)})
ew("shifts", "S1.53", [i32(-8, 7, -1, 3)], ["x >> 1", "x << 31"], np.int32,
   expect={1: i32(-4, 3, -1, 1, 0, -2**31, -2**31, -2**31)})
probe("argmax_ties_and_nan", "S1.54",
      kernel("argmax_ties(x_ptr, f_ptr, out_ptr)", """
          offs = tl.arange(0, 8)
          x = tl.load(x_ptr + offs)
          f = tl.load(f_ptr + offs)
          tl.store(out_ptr + 0, tl.argmax(x, axis=0))
          tl.store(out_ptr + 1, tl.argmin(x, axis=0))
          tl.store(out_ptr + 2, tl.argmax(f, axis=0))
          tl.store(out_ptr + 3, tl.argmin(f, axis=0))"""),
      (1,), (i32(1, 5, 5, 2, 5, 0, 0, 3), f32(1, np.nan, 5, 2, 5, 0, 0, 3), np.zeros(4, np.int32)),
      expect={2: i32(1, 5, 2, 5)})
probe("device_assert_fires_with_debug", "S1.42, S1.56",
      kernel("assert_positive(x_ptr)", 'x = tl.load(x_ptr)\ntl.device_assert(x > 0, "x must be positive")\n'
             "tl.store(x_ptr, x + 1)", debug=True),
      (1,), (np.zeros(1, np.int32),), gpu_error=r"x must be positive|device-side assert|[Aa]ssert",
      interp="S1.56: the interpreter never fires device_assert")

# ================================================================ S3 promotion, S4-S11 other rules
CODE = "r.dtype.primitive_bitwidth * 4 + r.dtype.is_floating() * 2 + r.dtype.is_int_unsigned()"


def promo(name, rule, xd, yd, expr, code, values=None, div=False):
    x = np.array(values[0] if values else [3, -2, 5, 1], xd) if xd != "bf16" else BF16.from_float([3, -2, 5, 1])
    y = np.array(values[1] if values else [2, 4, -3, 2], yd) if yd != "bf16" else BF16.from_float([2, 4, -3, 2])
    src = kernel(f"{name}(x_ptr, y_ptr, out_ptr, code_ptr)", f"""
        offs = tl.arange(0, 4)
        x = tl.load(x_ptr + offs)
        y = tl.load(y_ptr + offs)
        r = {expr}
        tl.store(out_ptr + offs, r.to(tl.float64))
        tl.store(code_ptr, {CODE})""")
    probe(name, rule, src, (1,), (x, y, np.zeros(4, np.float64), np.zeros(1, np.int32)), expect={3: i32(code)},
          check_cuda={2: close(2.5e-7, 0)} if div else {})


def code(bits, kind):
    return bits * 4 + {"i": 0, "u": 1, "f": 2}[kind]


promo("promote_kind_int32_fp16", "S3.1", np.int32, np.float16, "x + y", code(16, "f"))
promo("promote_width_fp16_fp32", "S3.2", np.float16, np.float32, "x * y", code(32, "f"))
promo("promote_fp16_over_bf16", "S3.3", np.float16, "bf16", "x + y", code(16, "f"))
promo("promote_unsigned_uint8_int8", "S3.4", np.uint8, np.int8, "x + y", code(8, "u"),
      values=([3, 2, 5, 1], [2, 4, -3, 2]))
promo("promote_int_div_fp32", "S3.5", np.int16, np.int16, "x / y", code(32, "f"),
      values=([3, -2, 6, 1], [2, 4, -3, 2]), div=True)
promo("promote_fp16_mod_fp32", "S3.5", np.float16, np.float16, "x % y", code(32, "f"), div=True)
promo("promote_int64_fp16", "S3.1", np.int64, np.float16, "x - y", code(16, "f"))
promo("promote_scalar_lower_kind", "S3.7", np.uint8, np.uint8, "x + 3", code(8, "u"),
      values=([3, 2, 250, 1], [0, 0, 0, 0]))
promo("promote_scalar_higher_kind", "S3.8", np.int16, np.int16, "x + 4.0", code(32, "f"))
promo("promote_scalar_big_float", "S3.10", np.int8, np.int8, "x * 1e300", code(64, "f"))
probe("promote_runtime_int_args", "S3.10",
      kernel("int_arg_types(code_ptr, a, b)", """
          r = a + 1
          tl.store(code_ptr + 0, r.dtype.primitive_bitwidth)
          r = b + 1
          tl.store(code_ptr + 1, r.dtype.primitive_bitwidth)"""),
      (1,), (np.zeros(2, np.int32), 5, 2**40), expect={0: i32(32, 64)})
probe("mixed_signedness_division_rejected", "S3.6, S14.10",
      kernel("mixed_sign(a_ptr, b_ptr)", "tl.store(a_ptr, tl.load(a_ptr) // tl.load(b_ptr))"),
      (1,), (np.zeros(1, np.int32), np.ones(1, np.uint32)), error=r"Cannot use .* because they have different signedness")
probe("negative_scalar_with_unsigned_rejected", "S3.9",
      kernel("neg_unsigned(a_ptr)", "tl.store(a_ptr, tl.load(a_ptr) + -1)"), (1,), (np.zeros(1, np.uint8),),
      error=r"Cannot perform a binary operation between an unsigned tensor and a negative scalar")
probe("scalar_out_of_range_rejected", "S3.9",
      kernel("scalar_range(a_ptr)", "tl.store(a_ptr, tl.load(a_ptr) + 300)"), (1,), (np.zeros(1, np.int8),),
      error=r"Scalar 300 is out of range for type int8")
probe("broadcast_mismatch_rejected", "S3.11, S14.7",
      kernel("bad_broadcast(x_ptr)", "a = tl.arange(0, 4)\nb = tl.arange(0, 8)\ntl.store(x_ptr + a, a + b)"),
      (1,), (np.zeros(8, np.int32),), error=r"incompatible dimensions at index 0: 4 and 8")
probe("broadcast_row_and_column", "S3.11",
      kernel("broadcast(x_ptr, y_ptr, out_ptr)", """
          r = tl.arange(0, 4)
          c = tl.arange(0, 8)
          x = tl.load(x_ptr + r)
          y = tl.load(y_ptr + c)
          tl.store(out_ptr + r[:, None] * 8 + c[None, :], x[:, None] * 10 + y)
          tl.store(out_ptr + 32 + r[:, None] * 8 + c[None, :], x[:, None] - y[None, :])"""),
      (1,), (i32(1, 2, 3, 4), np.arange(8, dtype=np.int32), np.zeros(64, np.int32)),
      expect={2: np.concatenate([(np.arange(1, 5)[:, None] * 10 + np.arange(8)).ravel(),
                                 (np.arange(1, 5)[:, None] - np.arange(8)).ravel()]).astype(np.int32)})
probe("cdiv_negative_and_arange_offset", "S4.2, S5.2",
      kernel("cdiv_arange(out_ptr, a)", """
          tl.store(out_ptr + 0, tl.cdiv(a, 2))
          tl.store(out_ptr + 1 + tl.arange(0, 4), tl.arange(3, 7))"""),
      (1,), (np.zeros(5, np.int32), -7), expect={0: i32(-3, 3, 4, 5, 6)})
probe("arange_end_before_start_rejected", "S5.2, S14.3",
      kernel("arange_backwards(out_ptr)", "tl.store(out_ptr + tl.arange(4, 0), 1)"), (1,), (np.zeros(4, np.int32),),
      error=r"arange's end argument must be greater than the start argument")
probe("zeros_not_power_of_2_rejected", "S5.2, S14.6",
      kernel("zeros_bad(x_ptr)", "tl.store(x_ptr + tl.arange(0, 4), tl.sum(tl.zeros((3, 4), tl.float32), axis=0))"),
      (1,), (np.zeros(4, np.float32),), error=r"Shape element 0 must be a power of 2")
probe("other_without_mask_rejected", "S6.2, S14.11",
      kernel("other_alone(x_ptr)", "tl.store(x_ptr, tl.load(x_ptr, other=1.0))"), (1,), (np.zeros(1, np.float32),),
      error=r"`other` cannot be provided without `mask`")
ew("int_to_bool_is_nonzero", "S7.5", [i32(0, 1, -1, 256)], ["x.to(tl.int1).to(tl.int8)"], np.int8,
   expect={1: np.array([0, 1, 1, 1], np.int8)})
ew("bitcast_fp32_int32", "S7.3", [f32(1.0, -2.5, np.inf, 0.1)],
   ["x.to(tl.int32, bitcast=True)", "(x.to(tl.int32, bitcast=True) ^ 1).to(tl.float32, bitcast=True)"
    ".to(tl.int32, bitcast=True)"], np.int32,
   expect={1: np.concatenate([f32(1.0, -2.5, np.inf, 0.1).view(np.int32),
                              f32(1.0, -2.5, np.inf, 0.1).view(np.int32) ^ 1])})
probe("bitcast_width_rejected", "S7.3, S14.13",
      kernel("bitcast_bad(x_ptr)", "tl.store(x_ptr, tl.load(x_ptr).to(tl.int16, bitcast=True))"), (1,),
      (np.zeros(1, np.float32),), error=r"Cannot bitcast data-type of size 32\s*to data-type of size 16")
FP16V = (rng.standard_normal(8) * 3).astype(np.float16)
ew("fp16_to_bf16_through_fp32", "S7.4, S13.4", [FP16V], ["x.to(tl.bfloat16)"], "bf16",
   expect={1: BF16.round(FP16V.astype(np.float32))},
   interp="S1.17, S13.4: the interpreter's conversion to bf16 truncates instead of rounding to nearest even")
probe("runtime_loop_bounds", "S5.5, S5.6",
      kernel("loops(x_ptr, out_ptr, n, start, step)", """
          pid = tl.program_id(0)
          offs = tl.arange(0, 8)
          acc = tl.zeros((8,), dtype=tl.int32)
          for i in range(0, n):
              acc += tl.load(x_ptr + i * 8 + offs)
          tl.store(out_ptr + pid * 24 + offs, acc)
          acc2 = tl.zeros((8,), dtype=tl.int32)
          hi = tl.minimum(pid + n, 6)
          for i in range(start, hi, step):
              acc2 = acc2 * 3 + i + offs
          tl.store(out_ptr + pid * 24 + 8 + offs, acc2)
          s = 0
          for j in tl.static_range(3):
              s += j * pid
          for j in tl.range(0, pid, 2):
              s += 1
          tl.store(out_ptr + pid * 24 + 16 + offs, offs + s)"""),
      (5,), (rng.integers(-50, 50, 40).astype(np.int32), np.zeros(5 * 24, np.int32), 5, 1, 2))
RED = rng.integers(-1000, 1000, (8, 16)).astype(np.int32)
RED[2, :] = 5
probe("reductions_and_scans_int", "S15.23",
      kernel("reduce_scan(x_ptr, out_ptr, idx_ptr)", """
          r = tl.arange(0, 8)
          c = tl.arange(0, 16)
          x = tl.load(x_ptr + r[:, None] * 16 + c[None, :])
          tl.store(out_ptr + c, tl.sum(x, axis=0))
          tl.store(out_ptr + 16 + r, tl.max(x, axis=1))
          tl.store(out_ptr + 24 + r, tl.min(x, axis=1))
          tl.store(out_ptr + 32, tl.sum(x))
          tl.store(out_ptr + 40 + r[:, None] * 16 + c[None, :], tl.cumsum(x, axis=1))
          tl.store(out_ptr + 168 + r[:, None] * 16 + c[None, :], tl.cumsum(x, axis=0, reverse=True))
          tl.store(idx_ptr + r, tl.argmax(x, axis=1))
          tl.store(idx_ptr + 8 + c, tl.argmin(x, axis=0))"""),
      (1,), (RED, np.zeros(296, np.int32), np.zeros(24, np.int32)),
      expect={1: np.concatenate([RED.sum(0), RED.max(1), RED.min(1), [RED.sum()], np.zeros(7, np.int32),
                                 np.cumsum(RED, 1).ravel(), np.cumsum(RED[::-1], 0)[::-1].ravel()]).astype(np.int32),
              2: np.concatenate([RED.argmax(1), RED.argmin(0)]).astype(np.int32)})
FRED = rng.standard_normal((8, 16)).astype(np.float32)
probe("reductions_and_scans_fp32", "S15.23, S12.1",
      kernel("reduce_scan_f(x_ptr, out_ptr)", """
          r = tl.arange(0, 8)
          c = tl.arange(0, 16)
          x = tl.load(x_ptr + r[:, None] * 16 + c[None, :])
          tl.store(out_ptr + r, tl.sum(x, axis=1))
          tl.store(out_ptr + 8 + r[:, None] * 16 + c[None, :], tl.cumsum(x, axis=1))"""),
      (1,), (FRED, np.zeros(136, np.float32)),
      check={1: close(0, 2 * 16 * 2.0 ** -24 * float(np.abs(FRED).sum(1).max()))})
probe("float_kernel_arg_is_fp32", "S15.10, S3.10",
      kernel("times_float_arg(x_ptr, out_ptr, code_ptr, s)", """
          offs = tl.arange(0, 4)
          r = tl.load(x_ptr + offs) * s
          tl.store(out_ptr + offs, r.to(tl.float32))
          tl.store(code_ptr, r.dtype.primitive_bitwidth)"""),
      (1,), (np.full(4, 1 + 2**-10, np.float16), np.zeros(4, np.float32), np.zeros(1, np.int32), 1.0001),
      expect={1: np.full(4, np.float32(1 + 2**-10) * np.float32(1.0001), np.float32), 2: i32(32)},
      interp="S15.10: compiled Triton types a Python float kernel argument as an fp32 "
             "scalar, so fp16 * s computes in fp32; the 3.9 interpreter keeps a Python float (a weak scalar, S3.7), "
             "so the product is fp16", interp_value={2: i32(16)})
XB, YB = f32(np.nan, 0, 2, 3, np.nan, -1, 5, np.nan), f32(1, np.nan, 1, 4, np.nan, -2, np.inf, -np.inf)
probe("builtin_max_on_blocks", "S5.4, S15.11",
      kernel("builtin_max(x_ptr, y_ptr, out_ptr)", """
          offs = tl.arange(0, 8)
          tl.store(out_ptr + offs, max(tl.load(x_ptr + offs), tl.load(y_ptr + offs)))"""),
      (1,), (XB, YB, np.zeros(8, np.float32)), expect={2: np.fmax(XB, YB)},
      interp="the compiler maps Python's max to tl.maximum (NaN ignored, S1.14); the interpreter calls Python's "
             "max on the whole blocks and returns one operand (y) unchanged", interp_value={2: YB})
XMOD, YMOD = f32(5.1, -0.0, -4.0, 7.5), f32(0.1, 1.0, 1.0, 2.0)
_Q = np.trunc(XMOD / YMOD)
ew("float_mod_nvptx_lowering", "S15.1, S1.12",
   [XMOD, YMOD], ["x % y"], np.float32,
   expect={2: (XMOD.astype(np.float64) - _Q.astype(np.float64) * YMOD.astype(np.float64)).astype(np.float32)
           + np.float32(0.0)},
   interp="S15.1: the GPU computes float x % y as fma(-trunc(x / y), y, x) (LLVM's NVPTX "
          "lowering of frem; 5.1 % 0.1 = -1.7e-7, -0.0 % 1.0 = +0.0), the interpreter as C fmod (np.fmod)",
   interp_value={2: np.fmod(XMOD, YMOD)})
probe("loop_index_is_int32", "S15.12",
      kernel("loop_index(x_ptr, out_ptr, n)", """
          offs = tl.arange(0, 4)
          x = tl.load(x_ptr + offs)
          acc = tl.zeros((4,), tl.int32)
          for i in range(0, n):
              acc += (x + i).to(tl.int32)
          tl.store(out_ptr + offs, acc)"""),
      (1,), (np.array([127, 100, -128, 5], np.int8), np.zeros(4, np.int32), 2), expect={1: i32(255, 201, -255, 11)},
      interp="S15.12: compiled Triton's loop index is an int32 tensor, so int8 + i computes in "
             "int32; in the interpreter it is a Python int (a weak scalar, S3.7), so int8 + i wraps in int8",
      interp_value={1: i32(-1, 201, -255, 11)})
probe("int_arg_equal_to_1_is_constexpr", "S15.13, S3.7",
      kernel("arg_is_one(x_ptr, out_ptr, code_ptr, s, t)", """
          offs = tl.arange(0, 4)
          x = tl.load(x_ptr + offs)
          tl.store(out_ptr + offs, (x + s).to(tl.int32))
          tl.store(out_ptr + 4 + offs, (x + t).to(tl.int32))
          tl.store(code_ptr + 0, (x + s).dtype.primitive_bitwidth)
          tl.store(code_ptr + 1, (x + t).dtype.primitive_bitwidth)"""),
      (1,), (np.array([127, 5, -128, 0], np.int8), np.zeros(8, np.int32), np.zeros(2, np.int32), 1, 2),
      expect={1: i32(-128, 6, -127, 1, 129, 7, -126, 2), 2: i32(8, 32)},
      interp="S15.13: compiled Triton specializes an int argument equal to 1 as a constexpr, a weak "
             "scalar (int8 + 1 stays int8 and wraps); the interpreter passes every int argument as an int32 tensor",
      interp_value={1: i32(128, 6, -127, 1, 129, 7, -126, 2), 2: i32(32, 32)})
probe("signed_shift_right_by_unsigned", "S15.14, S1.53, S3.4",
      kernel("shr_mixed(x_ptr, s_ptr, out_ptr)", """
          offs = tl.arange(0, 4)
          r = tl.load(x_ptr + offs) >> tl.load(s_ptr + offs)
          tl.store(out_ptr + offs, r.to(tl.float64))"""),
      (1,), (i32(-1, -8, -2**31, 16), np.array([0, 3, 2, 1], np.uint32), np.zeros(4, np.float64)),
      expect={2: np.array([2**32 - 1, 2**32 - 1, 0xE0000000, 8], np.float64)},
      interp="S15.14: int32 >> uint32 is an arithmetic shift whose result is typed uint32; the "
             "interpreter keeps the signed NumPy data under the uint32 type, so the cast reads it as signed",
      interp_value={2: np.array([-1, -1, -2**29, 8], np.float64)})
ew("minmax_signed_zeros", "S15.2, S1.14",
   [f32(0.0, -0.0, -0.0, 0.0), f32(-0.0, 0.0, -0.0, 0.0)], ["tl.maximum(x, y)", "tl.minimum(x, y)"], np.float32,
   expect={2: f32(0.0, 0.0, -0.0, 0.0, -0.0, -0.0, -0.0, 0.0)},
   interp="S15.2: the GPU orders -0.0 below +0.0 in maximum/minimum; the interpreter's "
          "np.fmax/np.fmin return either zero")
probe("sum_of_negative_zeros", "S15.3, S1.16",
      kernel("sum_neg_zeros(x_ptr, out_ptr)", """
          x = tl.load(x_ptr + tl.arange(0, 4))
          tl.store(out_ptr, tl.sum(x, axis=0))
          tl.store(out_ptr + 1, tl.sum(x * 2.0, axis=0))"""),
      (1,), (f32(-0.0, -0.0, -0.0, -0.0), np.ones(2, np.float32)), expect={1: f32(-0.0, -0.0)},
      interp="S15.3: NumPy's add.reduce starts from +0.0, so the interpreter sums -0.0s to +0.0",
      interp_value={1: f32(0.0, 0.0)})

# ================================================================ S15.4-S15.6: Triton 3.6 rules the GPU fuzz found
ew("neg_flips_the_sign_of_zero", "S15.4",
   [f32(0.0, -0.0, 1.0, -2.0)], ["-x"], np.float32, expect={1: f32(-0.0, 0.0, -1.0, 2.0)},
   targets=("interpreter",))  # the pinned 3.6 GPU computes 0 - x (both zeros +0.0); newer Triton emits fneg
probe("minmax_literal_is_a_typed_tensor", "S15.5",
      kernel("minmax_literal(x_ptr, y_ptr, out_ptr)", """
          offs = tl.arange(0, 4)
          x = tl.load(x_ptr + offs)
          tl.store(out_ptr + offs, tl.maximum(x, 0) * 3)
          y = tl.load(y_ptr + offs)
          tl.store(out_ptr + 4 + offs, (tl.minimum(tl.maximum(y, -9.223372036854776e+18),
                                                     9.223372036854775e+18)).to(tl.int64).to(tl.int32) & 127)"""),
      (1,), (np.array([100, -5, 50, 127], np.int8), np.array([np.inf, 1.0, 176.0, -np.inf]), np.zeros(8, np.int32)),
      expect={2: i32(300, 0, 150, 381, 127, 1, 48, 0)},
      interp="Triton 3.9 keeps a literal operand of tl.maximum/minimum weak (int8 max 0 stays int8 and wraps) and "
             "makes the fp64 bound exactly; 3.6 (the GPU) types 0 as int32 and rounds the float literal to fp32 "
             "(2**63) before the fp64 compare, so +inf saturates to INT64_MAX",
      interp_value={2: i32(44, 0, -106, 125, 0, 1, 48, 0)})
probe("math_member_fn_rejects_fp16", "S15.35", ("", ""), (1,), (),
      skip="newer than both pinned targets: Triton 3.9's interpreter and the 3.6 GPU run fp16 `x.exp()` (in fp32); "
           "minitriton refuses it as Triton does since #11218 (tests/semantics/test_newest_core.py)")
probe("loop_carried_type_change_rejected", "S15.6",
      kernel("carried(x_ptr, out_ptr, n)", """
          x = tl.load(x_ptr + tl.arange(0, 4))
          acc = 0
          for i in range(0, n):
              acc += tl.sum(x)
          tl.store(out_ptr, acc)"""),
      (1,), (f32(1, 2, 3, 4), np.zeros(1, np.float32), 2),
      gpu_error=r"Loop-carried variable acc has initial type int32 but is re-assigned to fp32",
      interp="the compiler types `acc = 0` as an int32 scalar and refuses a loop that makes it fp32; the "
             "interpreter runs Python and stores 20.0")

# ================================================================ Triton 3.6 literal rules (S15.7-S15.9)
ew("compare_literal_is_a_typed_tensor", "S15.7",
   [np.array([0.1, 0.5, 1.0, 2.0], np.float16), np.array([0.1, 0.5, 1.0, 2.0])],
   ["(x == 0.1).to(tl.int32)", "(y == 0.1).to(tl.int32)", "(0.1 != x).to(tl.int32)"], np.int32,
   expect={2: i32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1)},
   interp="Triton 3.9 keeps the literal of a comparison weak (fp16 == 0.1 compares fp16(0.1) with itself, fp64 == 0.1 "
          "with 0.1 exactly); 3.6 makes it an fp32 tensor first, so fp16 and fp64 0.1 differ from 0.1f",
   interp_value={2: i32(1, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 1)})
ew("negative_zero_literal_is_positive_zero", "S15.8",
   [f32(1.0, 2.0, -3.0, 0.5)], ["x * -0.0", "tl.where(x < 0, x, -0.0)", "tl.full((N,), -0.0, tl.float32)"],
   np.float32, expect={1: f32(0.0, 0.0, -0.0, 0.0, 0.0, 0.0, -3.0, 0.0, 0.0, 0.0, 0.0, 0.0)},
   interp="Triton 3.9's scalar_constant maps only integer zeros to the null value, so a literal -0.0 stays -0.0; "
          "3.6 (the pinned version) makes every literal equal to 0 a +0.0 constant",
   interp_value={1: f32(-0.0, -0.0, 0.0, -0.0, -0.0, -0.0, -3.0, -0.0, -0.0, -0.0, -0.0, -0.0)})
ew("narrow_float_literal_rounding", "S15.9",
   [np.ones(4, np.float16), BF16(np.full(4, 0x3F80, np.uint16))],
   ["(x * 1.0004882812500009).to(tl.float32)", "(y * 3.3e-06).to(tl.float32)", "(y * 1e-07).to(tl.float32)"],
   np.float32, expect={2: f32(*[1.0] * 4, *[2.9951334e-06] * 4, *[0.0] * 4)},
   interp="the interpreter rounds a literal to fp16 once from the double (1.0009765625; compiled Triton goes "
          "through fp32: 1.0) and multiplies bf16 bit patterns (S1.23)",
   interp_value={2: np.array([1.0009765625] * 4 + [2.0194839173657902e-28] * 4 + [-2.5849394142282115e-26] * 4,
                             np.float32)})

# ================================================================ S15.15-S15.22: Triton 3.6's extra ops, tensor descriptors
_X16 = i32(-1, 8, 9, 100, 3, 3, 0, 7, 7, 7, -8, 16, 1, 2, 5, 4)
_KEEP16 = i32(*[1, 0] * 8)


def _histograms(values, keep, lanes):
    """The histograms of `histogram_ranges` (8 bins, 8 bins masked, 32 bins, 64 bins) when a value's bin is
    `value mod max(bins, lanes)` and only bins below `bins` count (lanes = 32: the GPU's rule); lanes = None
    counts only values inside [0, bins) (the interpreter's rule)."""
    out = []
    for bins, use_mask in ((8, False), (8, True), (32, False), (64, False)):
        h = np.zeros(bins, np.int32)
        for v, k in zip(values.tolist(), keep.tolist()):
            b = v % max(bins, lanes) if lanes else v
            if (k or not use_mask) and 0 <= b < bins:
                h[b] += 1
        out.append(h)
    return np.concatenate(out)


probe("histogram_out_of_range_and_mask", "S15.15",
      kernel("histogram_ranges(x_ptr, m_ptr, out_ptr)", """
          offs = tl.arange(0, 16)
          x = tl.load(x_ptr + offs)
          keep = tl.load(m_ptr + offs) != 0
          tl.store(out_ptr + tl.arange(0, 8), tl.histogram(x, 8))
          tl.store(out_ptr + 8 + tl.arange(0, 8), tl.histogram(x, 8, mask=keep))
          tl.store(out_ptr + 16 + tl.arange(0, 32), tl.histogram(x, 32))
          tl.store(out_ptr + 48 + tl.arange(0, 64), tl.histogram(x, 64))"""),
      (1,), (_X16, _KEEP16, np.zeros(112, np.int32)),
      expect={2: _histograms(_X16, _KEEP16, 32)},
      interp="on the GPU a value counts in bin `value mod max(num_bins, 32)` when that bin exists (100 in bin 4 "
             "of 8, -1 in bin 31 of 32); Triton's interpreter counts only values inside [0, num_bins)",
      interp_value={2: _histograms(_X16, _KEEP16, None)})
_U16 = np.array([0, 1, 7, 8, 31, 32, 33, 63, 64, 100, 2**31, 2**31 + 5, 2**32 - 1, 2**32 - 8, 5, 5], np.uint32)
probe("histogram_of_uint32", "S15.15",
      kernel("histogram_u32(x_ptr, out_ptr)", """
          x = tl.load(x_ptr + tl.arange(0, 16))
          tl.store(out_ptr + tl.arange(0, 8), tl.histogram(x, 8))
          tl.store(out_ptr + 8 + tl.arange(0, 64), tl.histogram(x, 64))"""),
      (1,), (_U16, np.zeros(72, np.int32)),
      expect={1: np.concatenate([np.bincount([v % 32 for v in _U16.tolist() if v % 32 < 8], minlength=8),
                                 np.bincount([v % 64 for v in _U16.tolist()], minlength=64)]).astype(np.int32)},
      interp="on the GPU a value counts in bin `value mod max(num_bins, 32)` when that bin exists; Triton's "
             "interpreter counts only values inside [0, num_bins)",
      interp_value={1: np.concatenate([np.bincount([v for v in _U16.tolist() if v < 8], minlength=8),
                                       np.bincount([v for v in _U16.tolist() if v < 64], minlength=64)]
                                      ).astype(np.int32)})
probe("histogram_of_int64_fails_to_compile", "S15.16",
      kernel("histogram_i64(x_ptr, out_ptr)", """
          x = tl.load(x_ptr + tl.arange(0, 16))
          tl.store(out_ptr + tl.arange(0, 8), tl.histogram(x, 8))"""),
      (1,), (np.arange(16, dtype=np.int64), np.zeros(8, np.int32)),
      error=r"PassManager::run failed|histogram only supports 32-bit integer input")
probe("topk_small", "S15.17",
      kernel("topk_small(x_ptr, out_ptr)", """
          offs = tl.arange(0, 16)
          x = tl.load(x_ptr + offs)
          tl.store(out_ptr + tl.arange(0, 4), tl.topk(x, 4))
          t2 = tl.topk(tl.reshape(x, (4, 4)), 2)
          tl.store(out_ptr + 4 + tl.arange(0, 4)[:, None] * 2 + tl.arange(0, 2)[None, :], t2)
          tl.store(out_ptr + 12 + offs, tl.topk(x, 16))"""),
      (1,), (f32(3, -1, 7, 7, 0.5, -0.0, 0.0, 2, -5, 9, 9, 1, -2, 4, 6, -7), np.zeros(28, np.float32)),
      expect={1: f32(9, 9, 7, 7, 7, 7, 2, 0.5, 9, 9, 6, 4, 9, 9, 7, 7, 6, 4, 3, 2, 1, 0.5, 0, 0, -1, -2, -5, -7)})
probe("topk_k1_of_a_1d_block_rejected", "S15.17",
      kernel("topk_k1(x_ptr, out_ptr)", """
          x = tl.load(x_ptr + tl.arange(0, 16))
          tl.store(out_ptr + tl.arange(0, 1), tl.topk(x, 1))"""),
      (1,), (f32(*range(16)), np.zeros(1, np.float32)),
      gpu_error=r"'dtype' object has no attribute 'numel'",
      interp="3.6 (the GPU) fails to compile topk(x, 1) of a 1-D block: the scalar left by the last tl.max "
             "cannot be reshaped to [1]; the interpreter returns the maximum")
probe("sort_with_nan_and_signed_zeros", "S15.18",
      kernel("sort_nan(x_ptr, out_ptr)", """
          offs = tl.arange(0, 16)
          x = tl.load(x_ptr + offs)
          tl.store(out_ptr + offs, tl.sort(x))
          tl.store(out_ptr + 16 + offs, tl.sort(x, descending=True))"""),
      (1,), (f32(np.nan, 1, -0.0, 0.0, -np.inf, np.inf, np.nan, -1, 2, -2, 0.0, -0.0, 3, np.nan, 0.5, -0.5),
             np.zeros(32, np.float32)))


def _descriptor_blocks_expected():
    """dst after `desc_blocks`, by slicing: blocks read at element offsets, zero (or NaN) outside the (8, 24)
    shape, stores clipped to the shape, later stores over earlier ones."""
    src = np.arange(8 * 24, dtype=np.float32).reshape(8, 24)
    dst = np.full((8, 24), -1.0, np.float32)

    def block(r, c, pad):
        out = np.full((4, 8), pad, np.float32)
        rows, cols = np.arange(r, r + 4), np.arange(c, c + 8)
        ri, ci = (rows >= 0) & (rows < 8), (cols >= 0) & (cols < 24)
        out[np.ix_(ri, ci)] = src[np.ix_(rows[ri], cols[ci])]
        return out

    def put(r, c, val):
        dst[r:r + 4, c:c + 8] = val[:max(0, min(4, 8 - r)), :max(0, min(8, 24 - c))]

    put(0, 0, block(1, 4, 0.0))
    put(3, 4, block(-2, -4, 0.0) + 100)
    put(6, 20, block(6, 20, 0.0) + 200)
    put(2, 12, block(5, 20, np.nan) + 300)
    return dst


def _descriptors():
    return (Descriptor(np.arange(8 * 24, dtype=np.float32).reshape(8, 24), [4, 8]),
            Descriptor(np.full((8, 24), -1.0, np.float32), [4, 8]),
            Descriptor(np.arange(8 * 24, dtype=np.float32).reshape(8, 24), [4, 8], padding="nan"))


probe("descriptor_partial_and_negative_blocks", "S15.19",
      kernel("desc_blocks(src, dst, nan_src)", """
          a = src.load([1, 4])
          b = src.load([-2, -4])
          c = src.load([6, 20])
          d = nan_src.load([5, 20])
          dst.store([0, 0], a)
          dst.store([3, 4], b + 100.0)
          dst.store([6, 20], c + 200.0)
          dst.store([2, 12], d + 300.0)"""),
      (1,), _descriptors(), expect={1: _descriptor_blocks_expected()})
probe("descriptor_unaligned_offset", "S15.20",
      kernel("desc_unaligned(src, dst, nan_src)", """
          dst.store([0, 0], src.load([1, 3]))"""),
      (1,), _descriptors(), error=r"16-byte aligned|illegal instruction")
probe("int1_div_mod_shift", "S15.21",
      kernel("int1_arith(x_ptr, y_ptr, out_ptr)", """
          offs = tl.arange(0, 4)
          x = tl.load(x_ptr + offs) != 0
          y = tl.load(y_ptr + offs) != 0
          tl.store(out_ptr + offs, (x // y).to(tl.int32))
          tl.store(out_ptr + 4 + offs, (x % y).to(tl.int32))
          tl.store(out_ptr + 8 + offs, (x << y).to(tl.int32))
          tl.store(out_ptr + 12 + offs, (x >> y).to(tl.int32))"""),
      (1,), (np.array([0, 0, 1, 1], np.int8), np.array([0, 1, 0, 1], np.int8), np.zeros(16, np.int32)),
      expect={2: i32(0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 1, 1)},
      interp="LLVM folds int1 arithmetic on the GPU (x // y is x, x % y is 0, x << y and x >> y are x); the "
             "interpreter computes on bools (0 by zero, 1 << 1 is 0)",
      interp_value={2: i32(0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0)})


_FA = f32(1.5, -2.0, 0.1, 1e-30, 3.0, -0.0, 7.25, 100.0)
_FB = f32(3.0, 6.5, -0.75, 1e30, 3.0, 1.0, -1e-3, 0.5)


def same_bits(a, b):
    """Exact comparison of fp32 arrays by their bit patterns (NaNs and signed zeros included)."""
    return exact(np.asarray(a).view(np.uint32), np.asarray(b).view(np.uint32))


def _bitwise_f32(op):
    a, b = _FA.view(np.uint32), _FB.view(np.uint32)
    return {"and": a & b, "or": a | b, "xor": a ^ b}[op].view(np.float32)


probe("atomic_bitwise_on_fp32", "S15.22",
      kernel("atomic_bits(x_ptr, a_ptr, o_ptr, x_ptr2, o_ptr2, x_ptr3, o_ptr3)", """
          offs = tl.arange(0, 8)
          v = tl.load(a_ptr + offs)
          tl.store(o_ptr + offs, tl.atomic_and(x_ptr + offs, v))
          tl.store(o_ptr2 + offs, tl.atomic_or(x_ptr2 + offs, v))
          tl.store(o_ptr3 + offs, tl.atomic_xor(x_ptr3 + offs, v))"""),
      (1,), (_FB.copy(), _FA, np.zeros(8, np.float32), _FB.copy(), np.zeros(8, np.float32), _FB.copy(),
             np.zeros(8, np.float32)),
      check={k: same_bits for k in (0, 3, 5)},
      expect={0: _bitwise_f32("and"), 2: _FB, 3: _bitwise_f32("or"), 4: _FB, 5: _bitwise_f32("xor"), 6: _FB},
      interp="Triton 3.9's interpreter has no bitwise atomics on floats; 3.6 compiles them for the GPU",
      interp_error=r"Unsupported data type")


# ================================================================ S15.24-S15.27: found by the GPU fuzz of 2026-12-01
XMOD2 = f32(-3.0, -2.5, -0.0, 0.0, 3.0, 5.1, -16256.0, -1e30)
ew("float_mod_by_constant_power_of_two", "S15.24",
   [XMOD2], ["x % 1.0", "x % 65536.0", "x % -2.0"], np.float32,
   check={1: same_bits},
   expect={1: np.concatenate([np.fmod(XMOD2, np.float32(c)) for c in (1.0, 65536.0, -2.0)])})
_X64 = XMOD2.astype(np.float64)
ew("float_mod_by_constant_power_of_two_below_one", "S15.24",
   [XMOD2], ["x % 0.5", "x % 0.25"], np.float32,
   check={1: same_bits},      # x - trunc(x / c) * c is exact for these c; a zero is +0.0 (the run-time lowering)
   expect={1: np.concatenate([(_X64 - np.trunc(_X64 / c) * c).astype(np.float32) for c in (0.5, 0.25)])},
   interp="S15.24: LLVM rewrites frem only for a divisor 2**k with k >= 0, so `x % 0.5` takes the run-time "
          "lowering (S15.1: -3.0 % 0.5 = +0.0); the interpreter computes C fmod (-0.0)",
   interp_value={1: np.concatenate([np.fmod(XMOD2, np.float32(c)) for c in (0.5, 0.25)])})
_I8_WIDE = np.resize(np.array([-47, -1, 0, 1, 100, -128, 127, 5], np.int8), 1024)
ew("int8_to_uint32_to_fp16", "S15.26",
   [_I8_WIDE], ["x.to(tl.uint32).to(tl.float16)"], np.float16,
   known_gap="S15.26: the GPU converts the low 16 bits of a sign-extended int8 (-47 -> 65504); minitriton the "
             "whole uint32 (-47 -> inf), as the source says")
probe("abs_of_int_min_is_non_negative", "S15.25",
      kernel("abs_min(x_ptr, out_ptr)", """
          offs = tl.arange(0, 8)
          x = tl.load(x_ptr + offs)
          tl.store(out_ptr + offs, (tl.abs(x) < 0).to(tl.int32))"""),
      (1,), (i32(-2 ** 31, -5, 0, 7, -2 ** 31, 1, -1, 2 ** 31 - 1), np.zeros(8, np.int32)),
      known_gap="S15.25: LLVM's abs is poison at the minimum, so the GPU folds `tl.abs(x) < 0` to false; "
                "minitriton wraps tl.abs(INT32_MIN) to INT32_MIN, as two's complement says (1 at lanes 0 and 4)")
_OTHER_IN = (np.arange(512) % 5 - 2).astype(np.float16)
probe("masked_fp16_other_sign", "S15.27",
      kernel("masked_other(x_ptr, out_ptr)", """
          offs = tl.arange(0, 16)[:, None] * 32 + tl.arange(0, 32)[None, :]
          x = tl.load(x_ptr + offs, mask=offs < 3, other=-3.0)
          tl.store(out_ptr + offs, x * x)"""),
      (1,), (_OTHER_IN, np.zeros(512, np.float16)),
      known_gap="S15.27: on the GPU every fourth masked-off lane of this fp16 load sees +3.0 in one use of x "
                "(x * x = -9.0 there); minitriton uses other=-3.0 in every masked-off lane (9.0)")
# ================================================================ S15.28-S15.30: found by the GPU fuzz of 2026-12-02
ew("int32_min_max_chain_of_x_and_minus_x", "S15.28",
   [i32(1, -1, 0, 5, -7, 2 ** 31 - 1, -2 ** 31, 70000)],
   ["tl.minimum(tl.minimum(tl.maximum(x, 0), -x), x)", "tl.maximum(tl.maximum(tl.minimum(x, 0), -x), x)"], np.int32,
   known_gap="S15.28: the GPU stores x for both chains (the compiler folds them); minitriton computes the source: "
             "-|x| and |x|")
probe("narrow_division_guard_in_a_tile", "S15.29",
      kernel("guard(x_ptr, out_ptr)", """
          pid = tl.program_id(0)
          offs = tl.arange(0, 32)[:, None] * 16 + tl.arange(0, 16)[None, :]
          x = tl.load(x_ptr + pid * 512 + offs)
          tl.store(out_ptr + pid * 512 + offs, -(x % tl.where((x == 0) | (x == -1), 3, x)))"""),
      (2,), (np.ones((2, 32, 16), np.int16), np.zeros((2, 32, 16), np.int16)),
      known_gap="S15.29: the GPU may take the guard's 3 on some lanes where d = 1 (-1 there); minitriton "
                "divides by d (0 everywhere)")
ew("float_mod_of_a_product_by_one", "S15.30",
   [f32(711.268310546875, 3.3, -5.7, 1.1, 100.01, 0.3, 7.77, -9.1), f32(9, 3, 7, 11, 13, 17, 19, 23)],
   ["x * y % 1.0"], np.float32,
   known_gap="S15.30: the GPU takes the remainder of the exact product (0.414794921875 for 9 * 711.268310546875); "
             "minitriton rounds the product first (0.4150390625), as the source says")
# ================================================================ S15.31-S15.33: found by the GPU fuzz of 2026-12-02
_NEG_TILE = ((np.arange(512, dtype=np.int64) * 7919 % 20011) - 10005).astype(np.int32).reshape(16, 32)
probe("int_min_of_a_negated_tile", "S15.31",
      kernel("min_neg(x_ptr, out_ptr)", """
          offs = tl.arange(0, 16)[:, None] * 32 + tl.arange(0, 32)[None, :]
          x = tl.load(x_ptr + offs)
          tl.store(out_ptr + tl.arange(0, 16), tl.min(-x, axis=1))"""),
      (1,), (_NEG_TILE, np.zeros(16, np.int32)),
      known_gap="S15.31: the GPU reduces columns 2, 6, 10, ... of -x without the negation (6 of these 16 rows "
                "differ); minitriton negates every column, as the source says")
ew("self_remainder_of_infinity_to_uint32", "S15.32",
   [np.array([np.inf, 1.0, -np.inf, 3.0, np.inf, 0.5, 7.0, 2.0], np.float16)], ["x % x"], np.uint32,
   known_gap="S15.32: the GPU's `x % x` is NaN for x = inf when converted to an integer (0 stored); minitriton "
             "computes inf (S15.1) and converts it saturated (4294967295)",
   interp="S15.32: the interpreter takes C fmod (NaN for an infinite x) and converts NaN to uint32 through "
          "NumPy, 2147483648",
   interp_value={1: np.array([2 ** 31, 0, 2 ** 31, 0, 2 ** 31, 0, 0, 0], np.uint32)})
probe("abs_of_a_remainder_of_an_unsigned", "S15.33",
      kernel("abs_rem(x_ptr, out_ptr)", """
          pid = tl.program_id(0)
          offs = pid * 4 + tl.arange(0, 2)[:, None] * 2 + tl.arange(0, 2)[None, :]
          x = tl.load(x_ptr + offs)
          tl.store(out_ptr + offs, tl.abs(x % tl.full((2, 2), 1.5, tl.float16)))"""),
      (2,), (np.array([3792463295, 7, 3, 100000, 4294967295, 1, 0, 2 ** 31 + 1], np.uint32), np.zeros(8, np.float16)),
      known_gap="S15.33: the GPU drops the abs of a remainder whose dividend is unsigned (-128 stored for "
                "3792463295 % 1.5, whose S15.1 remainder is -128); minitriton takes the abs, as the source says",
      interp="S15.33: the interpreter takes C fmod in fp32 (1.0 for 3792463295 % 1.5), never negative",
      interp_value={1: np.array([1, 1, 0, 1, 1, 1, 0, 0.5], np.float16)})
probe("integer_to_fp16_widened_by_the_store", "S15.34",
      kernel("to_fp16(x_ptr, out_ptr)", """
          pid = tl.program_id(0)
          offs = pid * 4 + tl.arange(0, 2)[:, None] * 2 + tl.arange(0, 2)[None, :]
          x = tl.load(x_ptr + offs)
          tl.store(out_ptr + offs, (x << (tl.full((2, 2), 29, tl.uint32) & 31)).to(tl.float16))"""),
      (2,), (np.array([1, 0, 1, 3, 2, 1, 0, 1], np.int8), np.zeros(8, np.float32)),
      known_gap="S15.34: the GPU converts the uint32 straight to fp32 for the fp32 output (2**29 stored as "
                "536870912); minitriton converts to fp16 first (inf), as the source says")
