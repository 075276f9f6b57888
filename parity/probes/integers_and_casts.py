"""Probes of docs/semantics.md S1.1-S1.23 and S2: integers, NaN, bf16/fp16 casts, bf16 arithmetic."""


import numpy as np

from parity.oracle import BF16

from parity.probes.base import bits_f32, ew, f32, i32, kernel, probe

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

