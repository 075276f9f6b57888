"""Probes of docs/semantics.md S1.24-S1.30, S1.43, S1.55 and S8: tl.dot's precision, accumulators, shapes and errors."""


import numpy as np

from parity.compare import within
from parity.oracle import BF16

from parity.probes.base import f32, kernel, probe, rng

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


# ================================================================ S15.36: tl.dot_scaled (values exact in every upcast)
E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])
MX_A = rng.integers(0, 256, (16, 32), dtype=np.uint8)          # e2m1, two per byte along K (low nibble first)
MX_S = rng.integers(126, 129, (16, 2), dtype=np.uint8)         # e8m0: 2^(s - 127), one per 32 elements of K
MX_B = (rng.integers(-8, 9, (64, 16)) / 2).astype(np.float16)
MX_VALUES = np.stack([E2M1[MX_A & 15], E2M1[MX_A >> 4]], axis=2).reshape(16, 64) * np.repeat(
    2.0 ** (MX_S.astype(np.float64) - 127), 32, axis=1)
probe("dot_scaled_e2m1_times_fp16", "S15.36",
      kernel("dot_scaled_mx(a_ptr, s_ptr, b_ptr, c_ptr)", """
          r = tl.arange(0, 16)
          a = tl.load(a_ptr + r[:, None] * 32 + tl.arange(0, 32)[None, :])
          s = tl.load(s_ptr + r[:, None] * 2 + tl.arange(0, 2)[None, :])
          b = tl.load(b_ptr + tl.arange(0, 64)[:, None] * 16 + r[None, :])
          tl.store(c_ptr + r[:, None] * 16 + r[None, :], tl.dot_scaled(a, s, "e2m1", b, None, "fp16"))"""),
      (1,), (MX_A, MX_S, MX_B, np.zeros((16, 16), np.float32)),
      expect={3: (MX_VALUES @ MX_B.astype(np.float64)).astype(np.float32)})
