"""How close a kernel's output must be to its reference, per output dtype — written down once.

A check passes when, elementwise,

    |actual - expected| <= atol * scale + rtol * |expected|,    scale = max |expected| (1 if all zero)

and NaNs sit in the same places. `atol` is relative to the output's largest magnitude, so one table serves
outputs of every size: softmax probabilities of 1e-5, RMSNorm's dw summed over thousands of rows (~1e2).
`expected` is a float64 reference computed from the *same* stored inputs (bf16 inputs already rounded), or,
on a GPU, torch computing in fp32 from those inputs; so the error allowed is only what the kernel's own
arithmetic and its final rounding add. (torch's own bf16 kernels round in places ours do not: on an H200
its bf16 softmax backward was off by 2.7e-3 of the scale against 1.6e-3 for ours, beyond the atol below.)

Why each value:

* float32 — rtol 1e-5: every kernel rounds a handful of fp32 operations per element (~1e-7 each), and
  the GPU's `tl.exp` is `ex2.approx` applied to x·log2(e): measured within ~7 ulp, plus the rounding of
  the product, which grows with |x - max| (about 2e-6 relative at |x - max| = 20). 1e-5 is 5x that.
  atol 1e-6 (of the largest |value|): sums of n terms lose up to ~log2(n)·2^-24 of the largest partial
  sum in a tree and more in a loop; dw over 1823 rows, max |dw| ~ 160, was off by at most 8e-6 absolute
  (5e-8 of the scale) under minitriton, so cancellation near zero is covered with a 20x margin.
* bfloat16 — rtol 2^-6 (1.56e-2, two bf16 ulps, like torch.testing's 1.6e-2): the kernel computes in
  fp32 and rounds once, which is up to half an ulp = 2^-8 relative (measured 0.0039 for softmax), and a
  reference stored in bf16 (torch's bf16 forward) rounds once too, so the two may sit an ulp apart.
  atol 1e-5 (of the largest |value|): the fp32 cancellation noise before that rounding.
* float16 — rtol 2^-9 (1.95e-3, two fp16 ulps), same reasoning as bf16 with 11 significant bits;
  atol 1e-5 (of the largest |value|) covers fp32 noise and the coarse spacing of fp16 subnormals
  (~6e-8) for outputs whose largest value is >= 1e-2.
* float64 — as float32: the kernels compute in fp32 whatever they store.

Two entries are for kernels built on `tl.dot` (matmul, flash attention; their modules give the measurements):

* tf32 — (2^-8, 2^-8): float32 inputs through the GPU's default TF32 dot keep 11 significant bits per
  operand (truncated: up to 2^-10 relative each), which moves products and K-term sums by ~1e-3.
* bfloat16_dot — (2^-7, 2^-6): bf16 attention rounds intermediate P and dS to bf16 (2^-9 relative) before
  they enter a dot, so errors scale with whole rows, not with the element.
* float16_dot — (2^-8, 2^-8): the same for fp16 attention. fp16 keeps 3 more bits than bf16, but the
  part of the error that comes from a different block order (the GPU's autotuned BLOCK_N against
  another one, fp32 sums in another order) does not shrink with them: on the H200 (2026-11-29, B2 H4
  T1000 D64) the largest fp16 differences were 4x below the bf16 ones (1.95e-3 against 7.8e-3), so
  this is bfloat16_dot made 2x tighter, where the element-wise "float16" entry failed.
"""
from __future__ import annotations

import numpy as np

TOLERANCES: dict[str, tuple[float, float]] = {
    # dtype: (atol as a fraction of max |expected|, rtol)
    "float32": (1e-6, 1e-5),
    "bfloat16": (1e-5, 2.0 ** -6),
    "float16": (1e-5, 2.0 ** -9),
    "float64": (1e-6, 1e-5),
    "tf32": (2.0 ** -8, 2.0 ** -8),
    "bfloat16_dot": (2.0 ** -7, 2.0 ** -6),
    "float16_dot": (2.0 ** -8, 2.0 ** -8),
}


def tolerance(dtype: str, scale: float = 1.0) -> tuple[float, float]:
    """(atol, rtol) for an output of `dtype` (a TOLERANCES key) whose largest magnitude is `scale`.

    The atol returned is already scaled, ready for torch.testing.assert_close(atol=..., rtol=...).
    """
    atol, rtol = TOLERANCES[dtype]
    return atol * scale, rtol


def assert_close(actual, expected, dtype: str, what: str = "") -> None:
    """Raise AssertionError unless `actual` is within the `dtype` tolerance of `expected` (see module doc).

    Both are array-likes of the same shape (convert kernel outputs with `kernels._host.to_float64`).
    """
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    label = f"{what} ({dtype})" if what else dtype
    if actual.shape != expected.shape:
        raise AssertionError(f"{label}: shape {actual.shape} != expected {expected.shape}")
    nan_a, nan_e = np.isnan(actual), np.isnan(expected)
    if not np.array_equal(nan_a, nan_e):
        raise AssertionError(f"{label}: NaN at {int((nan_a != nan_e).sum())} positions where the other has none")
    a, e = actual[~nan_e], expected[~nan_e]
    if a.size == 0:
        return
    finite = np.isfinite(e)
    scale = float(np.abs(e[finite]).max()) if finite.any() else 1.0
    atol, rtol = tolerance(dtype, scale or 1.0)
    inf_ok = np.array_equal(a[~finite], e[~finite])
    err = np.abs(a[finite] - e[finite])
    allowed = atol + rtol * np.abs(e[finite])
    bad = err > allowed
    if not inf_ok:
        raise AssertionError(f"{label}: infinities differ from the expected ones")
    if bad.any():
        i = int(np.argmax(err - allowed))
        raise AssertionError(
            f"{label}: {int(bad.sum())} of {a.size} elements differ beyond atol={atol:.3g} (scale {scale:.3g}), "
            f"rtol={rtol:.3g}; worst: {a[finite][i]!r} vs expected {e[finite][i]!r} (|diff| {err[i]:.3g})")
TOLERANCES.update({"tf32": (2.0 ** -8, 2.0 ** -8), "bfloat16_dot": (2.0 ** -7, 2.0 ** -6),
                   "float16_dot": (2.0 ** -8, 2.0 ** -8)})  # see kernels.flash_attention
