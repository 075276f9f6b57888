"""Probes of docs/semantics.md S3 type promotion and the rules of S4-S11, S15.1-S15.3."""


import numpy as np

from parity.compare import close
from parity.oracle import BF16

from parity.probes.base import ew, f32, i32, kernel, probe, rng

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

