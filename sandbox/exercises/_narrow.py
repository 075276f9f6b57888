"""Tests on the 16-bit inputs real kernels take: bf16 arrays (a `minitriton.Buffer`, since NumPy has no
bfloat16 and Pyodide has no ml_dtypes), their outputs widened for `_checks.compare`, and the cause behind a
failure on them, found by re-running the kernel with the same values given as FP32: when that passes, the
kernel computes in the narrow type where the lesson computes in FP32. NumPy + minitriton: runs in Pyodide.
"""
from __future__ import annotations

import numpy as np

import minitriton
import minitriton.language as tl
from minitriton.testing.poison import as_numpy, empty
from minitriton.testing.poison import unwritten as _poisoned

from .. import messages as M
from ._base import t
from ._checks import filled
from ._diagnose import passes

# Round to nearest even: a bf16 result is within half a step, 2⁻⁸ of its value (8 significant bits).
BF16_RTOL = 4e-3


def bf16(values) -> minitriton.Buffer:
    """`values` rounded to bf16 (to nearest even), as the kernel's bf16 input."""
    return minitriton.Buffer.from_float(np.asarray(values, dtype=np.float32), tl.bfloat16)


def bf16_output(shape) -> minitriton.Buffer:
    """A bf16 output holding minitriton's poison, so elements never written stay visible."""
    return empty(shape, tl.bfloat16)


def widened(buffer: minitriton.Buffer) -> np.ndarray:
    """A bf16 array's values as float32 (exact), its never-written elements as FP32's poison: what
    `_checks.compare` takes."""
    out = filled(buffer.shape, np.float32)
    written = ~_poisoned(buffer)
    out[written] = as_numpy(buffer)[written]
    return out


def values(buffer: minitriton.Buffer) -> np.ndarray:
    """The values a bf16 input holds, as float32 (exact): the inputs of the float64 reference."""
    return as_numpy(buffer).astype(np.float32)


NARROW = t("С теми же значениями во FP32 ядро проходит этот тест, значит, ошибку даёт счёт в {dtype}: у {dtype} всего "
           "8 значащих бит (2–3 десятичные цифры), и каждое произведение и каждая сумма в нём округляются до них. "
           "Переводите во FP32 сразу при загрузке, tl.load(...).to(tl.float32), и считайте во FP32: округление "
           "будет одно — при записи.",
           "With the same values given as FP32 the kernel passes this test, so the error comes from computing in "
           "{dtype}: {dtype} keeps 8 significant bits (2–3 decimal digits), and every product and sum computed in it "
           "is rounded to them. Convert right after loading, tl.load(...).to(tl.float32), and compute in FP32: only "
           "the store rounds.")


def computed_narrow(rerun_wide, lang: str, dtype: str = "bf16"):
    """A detector for `_diagnose.first_cause`: `rerun_wide()` re-runs the test with its bf16 inputs given as
    FP32 (the same values) and returns (passed, message); passing there means the kernel computes in bf16."""
    def detect():
        return M.text(NARROW, lang, dtype=dtype) if passes(rerun_wide) else None
    return detect
