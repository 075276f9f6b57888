"""Probes of docs/semantics.md S15.4-S15.33: Triton 3.6's rules, literals, extra ops and tensor descriptors, many found by the
GPU fuzz."""


import numpy as np

from parity.compare import exact
from parity.oracle import BF16, Descriptor

from parity.probes.base import ew, f32, i32, kernel, probe

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
