"""The softmax backward pass, dx = y ⊙ (dy − ⟨dy, y⟩), one program per row."""
from __future__ import annotations

import numpy as np

from .. import messages as M
from ._base import Exercise, Numpy, Test, both, kernel, launch, next_pow2, randn, rng, t
from ._checks import close, compare, filled, unwritten_message, untouched_padding, verdict
from ._diagnose import first_cause, row_step_model
from ._narrow import BF16_RTOL, bf16, bf16_output, computed_narrow, values, widened
from ._traffic import expect_traffic

PARAMS = ("y_ptr", "dy_ptr", "dx_ptr", "n_cols", "stride", "BLOCK_SIZE")

COMMENTS = {
    "row": {"ru": "одна программа — одна строка", "en": "one program per row"},
    "load_todo": {"ru": "TODO: загрузите строки y и dy (адреса ptr + row * stride + cols, хвост как 0.0, во FP32)",
                  "en": "TODO: load the rows of y and dy (addresses ptr + row * stride + cols, the tail as 0.0, in FP32)"},
    "dx_todo": {"ru": "TODO: dx = y * (dy - ⟨dy, y⟩), где ⟨dy, y⟩ = tl.sum(dy * y, axis=0) — одно число на строку",
                "en": "TODO: dx = y * (dy - <dy, y>), where <dy, y> = tl.sum(dy * y, axis=0) is one number per row"},
    "store_todo": {"ru": "TODO: запишите dx с маской, приведя к типу dx_ptr",
                   "en": "TODO: store dx with the mask, cast to dx_ptr's type"},
    "zero": {"ru": "хвост как 0: 0 · 0 не меняет сумму", "en": "the tail as 0: 0 · 0 leaves the sum alone"},
    "formula": {"ru": "градиент softmax: y ⊙ (dy − ⟨dy, y⟩)", "en": "softmax's gradient: y ⊙ (dy − <dy, y>)"},
}

HEAD = '''
import triton
import triton.language as tl


@triton.jit
def softmax_bwd_kernel(y_ptr, dy_ptr, dx_ptr, n_cols, stride, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)                      # «row»
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
'''

STARTER = HEAD + '''\
    # «load_todo»
    # «dx_todo»
    # «store_todo»
'''

SOLUTION = HEAD + '''\
    y = tl.load(y_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)    # «zero»
    dy = tl.load(dy_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    dx = y * (dy - tl.sum(dy * y, axis=0))      # «formula»
    tl.store(dx_ptr + row * stride + cols, dx.to(dx_ptr.dtype.element_ty), mask=mask)
'''

STATEMENT = {
    "ru": """\
Обратный проход softmax по строкам. Если `y = softmax(x)` и `dy` — градиент по выходу, то градиент по входу
(произведение `dy` на якобиан softmax, `∂yᵢ/∂xⱼ = yᵢ(δᵢⱼ − yⱼ)`):

**dx = y ⊙ (dy − ⟨dy, y⟩)**, где ⟨dy, y⟩ = Σⱼ dyⱼ·yⱼ — одно число на строку.

Это та же схема, что и у прямого прохода: одна программа на строку, строка целиком в блоке, одна редукция.
Отличие в хвосте: здесь его читают как `0.0`, а не как `-inf` (`0 · (-inf)` дало бы NaN). Считайте во FP32
и приводите к типу `dx` при записи. Строки лежат через `stride` элементов — одинаково в `y`, `dy` и `dx`.

```python
softmax_bwd_kernel[(n_rows,)](y, dy, dx, n_cols, stride, BLOCK_SIZE=triton.next_power_of_2(n_cols))
```

Ответ сверяется с формулой в float64: atol = 1e-6, rtol = 1e-5. Ещё один тест проверяет свойство самого
градиента: сумма каждой строки `dx` равна нулю (потому что выходы softmax в сумме дают 1). Тест bf16 даёт
`y`, `dy` и `dx` в bf16, как при обучении: в ответе, посчитанном во FP32, одно округление — при записи (не
больше 2⁻⁸ ≈ 3.9e-3 от значения, отсюда rtol = 4e-3), а в посчитанном в bf16 цифры теряет уже сумма ⟨dy, y⟩.
Тест трафика: `y` и `dy` прочитаны по одному разу, `dx` записан один раз.
""",
    "en": """\
The backward pass of a row softmax. If `y = softmax(x)` and `dy` is the gradient with respect to the
output, the gradient with respect to the input (`dy` times softmax's Jacobian, `∂yᵢ/∂xⱼ = yᵢ(δᵢⱼ − yⱼ)`) is

**dx = y ⊙ (dy − ⟨dy, y⟩)**, where ⟨dy, y⟩ = Σⱼ dyⱼ·yⱼ is one number per row.

The shape is the forward pass's: one program per row, the whole row in one block, one reduction. The
difference is the tail: here it is read as `0.0`, not `-inf` (`0 · (-inf)` would give NaN). Compute in FP32
and cast to `dx`'s type when storing. Rows are `stride` elements apart, the same in `y`, `dy` and `dx`.

```python
softmax_bwd_kernel[(n_rows,)](y, dy, dx, n_cols, stride, BLOCK_SIZE=triton.next_power_of_2(n_cols))
```

The result is compared with the formula in float64: atol = 1e-6, rtol = 1e-5. Another test checks a
property of the gradient itself: each row of `dx` sums to zero (because softmax's outputs sum to 1). The
bf16 test gives `y`, `dy` and `dx` in bf16, as training does: computed in FP32, only the store rounds (by at
most 2⁻⁸ ≈ 3.9e-3 of the value, hence rtol = 4e-3); computed in bf16, ⟨dy, y⟩ loses its digits. The traffic
test: `y` and `dy` read once each, `dx` written once.
""",
}

HINTS = (
    {"ru": "Загрузка как в RMSNorm: `y = tl.load(y_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)`, "
           "и так же `dy`.",
     "en": "Load as in RMSNorm: `y = tl.load(y_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)`, "
           "and `dy` the same way."},
    {"ru": "Скалярное произведение строк — редукция: `s = tl.sum(dy * y, axis=0)`. Вычитание числа из блока "
           "бродкастится само: `dx = y * (dy - s)`.",
     "en": "The rows' dot product is a reduction: `s = tl.sum(dy * y, axis=0)`. Subtracting a number from a block "
           "broadcasts by itself: `dx = y * (dy - s)`."},
    {"ru": "Запись: `tl.store(dx_ptr + row * stride + cols, dx.to(dx_ptr.dtype.element_ty), mask=mask)`.",
     "en": "Store: `tl.store(dx_ptr + row * stride + cols, dx.to(dx_ptr.dtype.element_ty), mask=mask)`."},
)


def softmax64(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def reference(y, dy):
    y, dy = y.astype(np.float64), dy.astype(np.float64)
    return y * (dy - (dy * y).sum(axis=1, keepdims=True))


def _inputs(seed, rows, cols):
    g = rng(seed)
    y = softmax64(randn(g, (rows, cols))).astype(np.float32)
    return y, randn(g, (rows, cols))


def run_bwd(mod, lang, y, dy, backend=Numpy):
    k = kernel(mod, "softmax_bwd_kernel", PARAMS, lang)
    rows, cols = y.shape
    dx = backend.put(filled(y.shape, np.float32))
    rec = launch(k, (rows,), backend.put(y), backend.put(dy), dx, cols, cols, BLOCK_SIZE=next_pow2(cols))
    return backend.get(dx), rec


def tail_as_minus_inf(y, dy):
    """What a kernel reading the block's tail as -inf computes (IEEE arithmetic on infinities, as a GPU does)."""
    pad = next_pow2(y.shape[1]) - y.shape[1]
    y64, dy64 = y.astype(np.float64), dy.astype(np.float64)
    with np.errstate(all="ignore"):
        s = (dy64 * y64).sum(axis=1, keepdims=True) + (np.inf if pad else 0.0)
        return y64 * (dy64 - s)


def _check(y, dy, dx, lang, *extra, rtol=1e-5):
    def diagnose(got, exp):
        return first_cause(
            lambda: M.say("diag_tail_inf", lang) if close(got, tail_as_minus_inf(y, dy)) else None,
            *(lambda d=d: d(got) for d in extra))
    return compare("dx", dx, reference(y, dy), lang, atol=1e-6, rtol=rtol, diagnose=diagnose)


def test_small(mod, lang):
    y, dy = _inputs(31, 4, 8)
    dx, _ = run_bwd(mod, lang, y, dy)
    return _check(y, dy, dx, lang)


def test_tail(mod, lang):
    y, dy = _inputs(32, 257, 781)
    dx, _ = run_bwd(mod, lang, y, dy)
    return _check(y, dy, dx, lang)


def test_strided_rows(mod, lang):
    rows, cols, stride = 32, 781, 1024
    y, dy = _inputs(33, rows, cols)
    ybuf = np.full((rows, stride), 1e3, dtype=np.float32)
    dybuf = np.full((rows, stride), 1e3, dtype=np.float32)
    ybuf[:, :cols], dybuf[:, :cols] = y, dy
    dxbuf = filled((rows, stride), np.float32)
    k = kernel(mod, "softmax_bwd_kernel", PARAMS, lang)
    launch(k, (rows,), ybuf[:, :cols], dybuf[:, :cols], dxbuf[:, :cols], cols, stride, BLOCK_SIZE=1024)

    def row_step_of_n_cols(_got=None):
        model = row_step_model([ybuf, dybuf], rows, cols, cols, reference, dxbuf.shape)
        return M.say("diag_stride", lang, stride=stride, n_cols=cols) if close(dxbuf, model, partial=True) else None
    passed, message = _check(y, dy, dxbuf[:, :cols], lang, row_step_of_n_cols)
    if not passed:
        return passed, message
    clean, outside = untouched_padding("dx", dxbuf, cols, lang)
    return (True, message) if clean else (False, M.sentences(outside))


def test_bf16(mod, lang):
    """bf16 y, dy and dx, as in training: computed in FP32 only the store rounds; computed in bf16 the sum
    ⟨dy, y⟩ and the difference dy − ⟨dy, y⟩ keep 8 bits."""
    rows, cols = 16, 300
    g = rng(36)
    y, dy = bf16(softmax64(randn(g, (rows, cols)))), bf16(randn(g, (rows, cols)))
    k = kernel(mod, "softmax_bwd_kernel", PARAMS, lang)

    def run(y_in, dy_in, *extra):
        dx = bf16_output((rows, cols))
        launch(k, (rows,), y_in, dy_in, dx, cols, cols, BLOCK_SIZE=next_pow2(cols))
        return _check(values(y), values(dy), widened(dx), lang, *extra, rtol=BF16_RTOL)
    narrow = computed_narrow(lambda: run(values(y), values(dy)), lang)
    return run(y, dy, lambda _got: narrow())


SUM_NOT_ZERO = t("строка {row}: сумма dx = {value}, а должна быть 0 (выходы softmax в сумме дают 1, поэтому градиент "
                 "по входам в сумме даёт 0).",
                 "row {row}: dx sums to {value}, not 0 (softmax's outputs sum to 1, so the gradient with respect to "
                 "its inputs sums to 0).")
SUM_ZERO = t("каждая строка dx в сумме даёт 0 (наибольшая |сумма| {value})",
             "every row of dx sums to 0 (largest |sum| {value})")


def test_rows_sum_to_zero(mod, lang):
    y, dy = _inputs(34, 64, 100)
    dx, _ = run_bwd(mod, lang, y, dy)
    missing = unwritten_message("dx", dx, lang)
    if missing:
        return False, missing
    d = dx.astype(np.float64)
    sums = d.sum(axis=1)
    bound = 1e-5 * (1.0 + np.abs(d).sum(axis=1))
    bad = ~(np.abs(sums) <= bound)
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        return False, M.text(SUM_NOT_ZERO, lang, row=r, value=M.real(sums[r]))
    return True, M.text(SUM_ZERO, lang, value=M.err(np.abs(sums).max()))


def test_traffic(mod, lang):
    rows, cols = 16, 300
    y, dy = _inputs(35, rows, cols)
    _, rec = run_bwd(mod, lang, y, dy)
    formula = f"n_rows·n_cols = {rows}·{cols}"
    return expect_traffic(rec, lang, [
        ("y_ptr", "load", rows * cols, formula, lambda p: cols),
        ("dy_ptr", "load", rows * cols, formula, lambda p: cols),
        ("dx_ptr", "store", rows * cols, formula, lambda p: cols),
    ])


TOL = t("atol = 1e-6, rtol = 1e-5", "atol = 1e-6, rtol = 1e-5")
TESTS = (
    Test("small", t("4 × 8, целый блок", "4 x 8, a whole block"), test_small, TOL),
    Test("tail", t("257 × 781, блок 1024", "257 x 781, block 1024"), test_tail, TOL),
    Test("strided_rows", t("строки через stride = 1024 при n_cols = 781", "rows stride = 1024 apart, n_cols = 781"),
         test_strided_rows, TOL),
    Test("rows_sum_to_zero", t("каждая строка dx в сумме даёт 0", "each row of dx sums to 0"), test_rows_sum_to_zero,
         t("|Σ dx| ≤ 1e-5·(1 + Σ|dx|)", "|Σ dx| ≤ 1e-5·(1 + Σ|dx|)")),
    Test("bf16", t("bf16 на входе и выходе, как при обучении: 16 × 300", "bf16 in and out, as in training: 16 x 300"),
         test_bf16, t("atol = 1e-6, rtol = 4e-3 (запись в bf16)", "atol = 1e-6, rtol = 4e-3 (the bf16 store)")),
    Test("traffic", t("трафик: y и dy прочитаны, dx записан по одному разу", "traffic: y, dy read once, dx written once"),
         test_traffic),
)


def demo(mod, lang, backend=Numpy):
    y, dy = _inputs(6, 6, 20)
    dx, _ = run_bwd(mod, lang, y, dy, backend=backend)
    print("softmax_bwd_kernel, 6 x 20, BLOCK_SIZE = 32:", "—", verdict(dx, reference(y, dy), 1e-6, lang))
    print("dx[0, :6] =", np.array2string(dx[0, :6], precision=4))
    return [("dx", dx)]


EXERCISE = Exercise(
    id="softmax_bwd",
    order=7,
    title={"ru": "Обратный проход softmax", "en": "Softmax backward"},
    statement=STATEMENT,
    starter=both(STARTER, COMMENTS),
    solution=both(SOLUTION, COMMENTS),
    hints=HINTS,
    tests=TESTS,
    demo=demo,
    kernels={"softmax_bwd_kernel": PARAMS},
)
