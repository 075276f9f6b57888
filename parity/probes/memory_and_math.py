"""Probes of docs/semantics.md S1.31-S1.56: masked memory, math accuracy, atomics, grids, compile errors."""


import numpy as np

from parity.compare import MATH_ULPS, by_parts, close, ulps

from parity.probes.base import ew, f32, i32, kernel, probe, rng

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

