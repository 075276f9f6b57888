"""A fused RMSNorm forward, y = x / sqrt(mean(x²) + eps) · w, one program per row."""
from __future__ import annotations

import numpy as np

from .. import messages as M
from ._base import Exercise, Numpy, Test, both, kernel, launch, next_pow2, randn, rng, t
from ._checks import close, compare, filled, untouched_padding, verdict
from ._diagnose import first_cause, row_step_model
from ._traffic import expect_traffic

PARAMS = ("x_ptr", "w_ptr", "y_ptr", "n_cols", "stride", "eps", "BLOCK_SIZE")

COMMENTS = {
    "row": {"ru": "одна программа — одна строка", "en": "one program per row"},
    "mask": {"ru": "BLOCK_SIZE — степень двойки, строка может быть короче", "en": "BLOCK_SIZE is a power of two; the row may be shorter"},
    "load_todo": {"ru": "TODO: загрузите строку x (адреса x_ptr + row * stride + cols, хвост как 0.0) и веса w\n"
                        "    #       (одни на все строки: w_ptr + cols); считайте во FP32: .to(tl.float32)",
                  "en": "TODO: load the row of x (addresses x_ptr + row * stride + cols, its tail as 0.0) and the\n"
                        "    #       weights w (shared by every row: w_ptr + cols); compute in FP32: .to(tl.float32)"},
    "rms_todo": {"ru": "TODO: rms = tl.sqrt(сумма x * x / n_cols + eps)",
                 "en": "TODO: rms = tl.sqrt(sum of x * x / n_cols + eps)"},
    "store_todo": {"ru": "TODO: запишите x / rms * w в y_ptr + row * stride + cols с маской, приведя к типу y",
                   "en": "TODO: store x / rms * w to y_ptr + row * stride + cols with the mask, cast to y's type"},
    "fp32": {"ru": "считаем во FP32", "en": "compute in FP32"},
    "zeros": {"ru": "нули в хвосте сумму не меняют", "en": "the zeros of the tail do not change the sum"},
    "cast": {"ru": "хранить узко, считать широко", "en": "store narrow, compute wide"},
}

HEAD = '''
import triton
import triton.language as tl


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, n_cols, stride, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)                      # «row»
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols                        # «mask»
'''

STARTER = HEAD + '''\
    # «load_todo»
    # «rms_todo»
    # «store_todo»
'''

SOLUTION = HEAD + '''\
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)   # «fp32»
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    rms = tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)   # «zeros»
    y = x / rms * w
    tl.store(y_ptr + row * stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)   # «cast»
'''

STATEMENT = {
    "ru": """\
RMSNorm — нормализация слоёв в LLaMA, Qwen и многих других LLM: каждая строка делится на своё
среднеквадратичное значение и умножается на веса, **y = x / √(mean(x²) + ε) · w**.
В PyTorch без компиляции это шесть ядер (pow, mean, add, rsqrt, два умножения) и шесть проходов по памяти.
Напишите **одно** ядро по образцу softmax: одна программа — одна строка, строка целиком в одном блоке.

- хвост блока читайте как `0.0`: нули не меняют сумму квадратов;
- делите сумму на `n_cols`, а не на `BLOCK_SIZE`;
- веса `w` — один вектор длины `n_cols` на все строки;
- считайте во FP32 (`.to(tl.float32)` после загрузки) и приводите к типу выхода при записи:
  `y.to(y_ptr.dtype.element_ty)`;
- строки лежат через `stride` элементов (он может быть больше `n_cols`), одинаково в `x` и `y`.

Тесты запускают ядро так:

```python
rmsnorm_kernel[(n_rows,)](x, w, y, n_cols, stride, eps, BLOCK_SIZE=triton.next_power_of_2(n_cols))
```

Допуск: FP32 — atol = rtol = 1e-5 от точного ответа (в float64); FP16 — atol = 1e-5, rtol = 1e-3.
Тест трафика проверяет слияние: каждый элемент `x` прочитан один раз и каждый элемент `y` записан один раз.
""",
    "en": """\
RMSNorm, the layer normalisation of LLaMA, Qwen and many other LLMs: each row is divided by its root mean
square and multiplied by the weights, **y = x / √(mean(x²) + ε) · w**.
Without compilation PyTorch runs it as six kernels (pow, mean, add, rsqrt, two multiplications), six passes
over memory. Write **one** kernel in the manner of softmax: one program per row, the whole row in one block.

- read the block's tail as `0.0`: zeros do not change the sum of squares;
- divide the sum by `n_cols`, not by `BLOCK_SIZE`;
- the weights `w` are one vector of length `n_cols` shared by every row;
- compute in FP32 (`.to(tl.float32)` after loading) and cast to the output's type when storing:
  `y.to(y_ptr.dtype.element_ty)`;
- rows are `stride` elements apart (possibly more than `n_cols`), the same in `x` and `y`.

The tests launch the kernel as

```python
rmsnorm_kernel[(n_rows,)](x, w, y, n_cols, stride, eps, BLOCK_SIZE=triton.next_power_of_2(n_cols))
```

Tolerance: FP32 within atol = rtol = 1e-5 of the exact answer (float64); FP16 within atol = 1e-5,
rtol = 1e-3. The traffic test checks the fusion: each element of `x` is read once and each element of `y`
written once.
""",
}

HINTS = (
    {"ru": "Начните с адресов: строка `row` начинается в `x_ptr + row * stride`, её элементы — `+ cols`. "
           "Маска `cols < n_cols` уже есть; `other=0.0` для хвоста.",
     "en": "Start with the addresses: row `row` starts at `x_ptr + row * stride`, its elements are `+ cols`. "
           "The mask `cols < n_cols` is there already; `other=0.0` for the tail."},
    {"ru": "Сумма квадратов строки — `tl.sum(x * x, axis=0)`, одно число на программу. "
           "`rms = tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)`.",
     "en": "The row's sum of squares is `tl.sum(x * x, axis=0)`, one number per program. "
           "`rms = tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)`."},
    {"ru": "Веса: `w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)` — без `row * stride`. "
           "Запись: `tl.store(y_ptr + row * stride + cols, (x / rms * w).to(y_ptr.dtype.element_ty), mask=mask)`.",
     "en": "Weights: `w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)`, with no `row * stride`. "
           "Store: `tl.store(y_ptr + row * stride + cols, (x / rms * w).to(y_ptr.dtype.element_ty), mask=mask)`."},
)


def run_rmsnorm(mod, lang, x, w, eps, backend=Numpy):
    """Launch on contiguous rows of `x`; returns (y, launch record)."""
    k = kernel(mod, "rmsnorm_kernel", PARAMS, lang)
    rows, cols = x.shape
    y = backend.put(filled(x.shape, x.dtype))
    rec = launch(k, (rows,), backend.put(x), backend.put(w), y, cols, cols, eps, BLOCK_SIZE=next_pow2(cols))
    return backend.get(y), rec


def reference(x, w, eps, divide_by=None):
    """float64 RMSNorm; `divide_by` replaces n_cols in the mean (what a kernel dividing by BLOCK_SIZE computes)."""
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    mean = (x64 * x64).sum(axis=1, keepdims=True) / (divide_by or x.shape[1])
    return x64 / np.sqrt(mean + eps) * w64


def fp16_squares(x, w, eps):
    """What a kernel squaring FP16 values computes: a row with |x| ≥ 256 has an infinite sum, so y = 0 there."""
    overflow = (np.abs(x.astype(np.float64)) >= 256).any(axis=1, keepdims=True)
    return np.where(overflow, 0.0, reference(x, w, eps))


def _inputs(seed, rows, cols, scale=1.0, dtype=np.float32):
    g = rng(seed)
    return (randn(g, (rows, cols)) * scale).astype(dtype), randn(g, cols).astype(dtype)


def block_mean_cause(x, w, eps, lang):
    block = next_pow2(x.shape[1])

    def detect(got):
        if block != x.shape[1] and close(got, reference(x, w, eps, divide_by=block)):
            return M.say("diag_block_mean", lang, block=block, n_cols=x.shape[1])
        return None
    return detect


def check(x, w, eps, y, lang, *extra):
    """compare() for y, with the causes this exercise can detect."""
    mean = block_mean_cause(x, w, eps, lang)

    def diagnose(got, exp):
        return first_cause(lambda: mean(got), *(lambda d=d: d(got) for d in extra))
    return compare("y", y, reference(x, w, eps), lang, atol=1e-5, rtol=1e-5, diagnose=diagnose)


def test_small(mod, lang):
    x, w = _inputs(21, 4, 8)
    y, _ = run_rmsnorm(mod, lang, x, w, 1e-6)
    return check(x, w, 1e-6, y, lang)


def test_tail(mod, lang):
    x, w = _inputs(22, 64, 896)
    y, _ = run_rmsnorm(mod, lang, x, w, 1e-6)
    return check(x, w, 1e-6, y, lang)


def strided_rows(x, stride, fill):
    """`x`'s rows `stride` elements apart in a larger buffer whose padding holds `fill`: (view, buffer)."""
    buf = np.full((x.shape[0], stride), fill, dtype=x.dtype)
    buf[:, :x.shape[1]] = x
    return buf[:, :x.shape[1]], buf


def test_strided_rows(mod, lang):
    rows, cols, stride = 32, 896, 1024
    g = rng(23)
    x, w = randn(g, (rows, cols)), randn(g, cols)
    xview, xbuf = strided_rows(x, stride, 1e3)       # the padding would spoil any sum it got into
    ybuf = filled((rows, stride), np.float32)
    yview = ybuf[:, :cols]
    k = kernel(mod, "rmsnorm_kernel", PARAMS, lang)
    launch(k, (rows,), xview, w, yview, cols, stride, 1e-6, BLOCK_SIZE=1024)

    def row_step_of_n_cols(_got=None):
        model = row_step_model([xbuf], rows, cols, cols, lambda xr: reference(xr, w, 1e-6), ybuf.shape)
        return M.say("diag_stride", lang, stride=stride, n_cols=cols) if close(ybuf, model, partial=True) else None
    passed, message = check(x, w, 1e-6, yview, lang, row_step_of_n_cols)
    if not passed:
        return passed, message
    clean, outside = untouched_padding("y", ybuf, cols, lang)
    return (True, message) if clean else (False, M.sentences(outside))


def test_eps(mod, lang):
    x, w = _inputs(24, 8, 100, scale=0.1)
    x[3] = 0.0                                  # a zero row: y must be 0, and only eps keeps it from 0/0
    y, _ = run_rmsnorm(mod, lang, x, w, 0.1)

    def eps_misplaced(got):
        x64, w64 = x.astype(np.float64), w.astype(np.float64)
        root = np.sqrt((x64 * x64).mean(axis=1, keepdims=True))
        with np.errstate(all="ignore"):
            if close(got, x64 / root * w64):
                return M.say("diag_eps", lang)
            if close(got, x64 / (root + 0.1) * w64):
                return M.text(EPS_OUTSIDE, lang)
        return None
    return check(x, w, 0.1, y, lang, eps_misplaced)


EPS_OUTSIDE = t("Ответ совпадает с eps, прибавленным после корня, sqrt(mean(x²)) + eps: eps должен стоять под корнем, "
                "sqrt(mean(x²) + eps).",
                "The result matches eps added after the square root, sqrt(mean(x²)) + eps: it belongs under the root, "
                "sqrt(mean(x²) + eps).")


def test_fp16(mod, lang):
    x, w = _inputs(25, 16, 300, scale=400.0, dtype=np.float16)
    y, _ = run_rmsnorm(mod, lang, x, w, 1e-6)

    mean = block_mean_cause(x, w, 1e-6, lang)

    def diagnose(got, expected):
        return first_cause(lambda: M.say("diag_fp16", lang) if close(got, fp16_squares(x, w, 1e-6), 1e-3, 1e-2)
                           else None, lambda: mean(got))
    return compare("y", y, reference(x, w, 1e-6), lang, atol=1e-5, rtol=1e-3, diagnose=diagnose)


def test_traffic(mod, lang):
    rows, cols = 16, 300
    x, w = _inputs(26, rows, cols)
    _, rec = run_rmsnorm(mod, lang, x, w, 1e-6)
    ok, message = expect_traffic(rec, lang, [
        ("x_ptr", "load", rows * cols, f"n_rows·n_cols = {rows}·{cols}", lambda p: cols),
        ("w_ptr", "load", rows * cols, f"n_rows·n_cols = {rows}·{cols}", lambda p: cols),
        ("y_ptr", "store", rows * cols, f"n_rows·n_cols = {rows}·{cols}", lambda p: cols),
    ])
    if not ok and rec is not None:
        got = rec["tensors"]["x_ptr"]["totals"]["loaded_elements"]
        if got > rows * cols and got % (rows * cols) == 0:
            message = M.sentences(message, M.say("traffic_reread", lang, tensor="x_ptr", ratio=got // (rows * cols)))
    return ok, message


FP32 = t("atol = 1e-5, rtol = 1e-5", "atol = 1e-5, rtol = 1e-5")
TESTS = (
    Test("small", t("4 × 8, целый блок", "4 x 8, a whole block"), test_small, FP32),
    Test("tail", t("64 × 896 (ширина Qwen2.5-0.5B), блок 1024", "64 x 896 (Qwen2.5-0.5B's width), block 1024"),
         test_tail, FP32),
    Test("strided_rows", t("строки через stride = 1024 при n_cols = 896", "rows stride = 1024 apart, n_cols = 896"),
         test_strided_rows, FP32),
    Test("eps", t("eps = 0.1 и нулевая строка", "eps = 0.1 and a zero row"), test_eps, FP32),
    Test("fp16", t("FP16 со значениями около 400: считать во FP32", "FP16 with values near 400: compute in FP32"),
         test_fp16, t("atol = 1e-5, rtol = 1e-3", "atol = 1e-5, rtol = 1e-3")),
    Test("traffic", t("трафик: x прочитан и y записан по одному разу", "traffic: x read once, y written once"),
         test_traffic),
)


def demo(mod, lang, backend=Numpy):
    x, w = _inputs(5, 8, 50)
    y, _ = run_rmsnorm(mod, lang, x, w, 1e-6, backend=backend)
    print("rmsnorm_kernel, 8 x 50, BLOCK_SIZE = 64:", "—", verdict(y, reference(x, w, 1e-6), 1e-5, lang))
    print("y[0, :6] =", np.array2string(y[0, :6], precision=4))
    return [("y", y)]


EXERCISE = Exercise(
    id="rmsnorm",
    order=8,
    title={"ru": "Слитый RMSNorm (прямой проход)", "en": "Fused RMSNorm (forward)"},
    statement=STATEMENT,
    starter=both(STARTER, COMMENTS),
    solution=both(SOLUTION, COMMENTS),
    hints=HINTS,
    tests=TESTS,
    demo=demo,
    kernels={"rmsnorm_kernel": PARAMS},
)
