"""Row reductions over a row longer than one block: a loop over the row in BLOCK-wide chunks that carries a
running max and a running sum. The masked tail must not change the result: -inf for a max, 0 for a sum."""
from __future__ import annotations

import numpy as np

from .. import messages as M
from ._base import Exercise, Numpy, Test, both, kernel, launch, randn, rng, t
from ._checks import close, compare, filled, verdict
from ._diagnose import first_cause, row_step_model
from ._traffic import expect_traffic

PARAMS = ("x_ptr", "max_ptr", "sum_ptr", "n_cols", "stride", "BLOCK")

COMMENTS = {
    "row": {"ru": "одна программа — одна строка", "en": "one program per row"},
    "init": {"ru": "бегущие максимум и сумма строки", "en": "the row's running max and sum"},
    "chunk": {"ru": "очередной кусок строки: столбцы start … start + BLOCK − 1",
              "en": "the next chunk of the row: columns start … start + BLOCK - 1"},
    "loop_todo": {"ru": "TODO: прочитайте кусок x_ptr + row * stride + cols с маской cols < n_cols и обновите\n"
                        "        #       m (tl.maximum, tl.max) и s (tl.sum); замаскированные дорожки не должны менять ни то, ни другое",
                  "en": "TODO: load the chunk x_ptr + row * stride + cols with the mask cols < n_cols and update\n"
                        "        #       m (tl.maximum, tl.max) and s (tl.sum); masked-off lanes must change neither"},
    "store_todo": {"ru": "TODO: запишите m в max_ptr + row и s в sum_ptr + row",
                   "en": "TODO: store m to max_ptr + row and s to sum_ptr + row"},
    "inf": {"ru": "-inf не меняет максимум", "en": "-inf leaves the max alone"},
    "zero": {"ru": "а сумме нужен 0", "en": "while the sum needs 0"},
}

HEAD = '''
import triton
import triton.language as tl


@triton.jit
def row_stats_kernel(x_ptr, max_ptr, sum_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)                      # «row»
    m = -float("inf")                           # «init»
    s = 0.0
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)      # «chunk»
'''

STARTER = HEAD + '''\
        # «loop_todo»
    # «store_todo»
'''

SOLUTION = HEAD + '''\
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf"))   # «inf»
        m = tl.maximum(m, tl.max(x, axis=0))
        s += tl.sum(tl.where(mask, x, 0.0), axis=0)                               # «zero»
    tl.store(max_ptr + row, m)
    tl.store(sum_ptr + row, s)
'''

STATEMENT = t("""\
Редукция по строке, которая длиннее блока. Для каждой строки матрицы `x` (`n_rows × n_cols`, строки через
`stride` элементов) найдите её максимум и сумму: `max_ptr[row]` и `sum_ptr[row]`.

Строка целиком в блок не помещается (`n_cols` до 1000, `BLOCK = 256`), поэтому программа идёт по ней кусками:
`for start in range(0, n_cols, BLOCK)` — и несёт через цикл бегущий максимум `m` и бегущую сумму `s`.
`tl.max(x, axis=0)` и `tl.sum(x, axis=0)` сворачивают кусок в одно число.

Главное — хвост последнего куска. Замаскированные дорожки `tl.load` возвращают `other` (без него — 0), и они
участвуют в `tl.max` и `tl.sum` наравне с настоящими. Для суммы 0 безвреден, для максимума — нет: у строки из
отрицательных чисел максимум окажется 0. Читайте хвост как `-inf` (`other=-float("inf")`) — он не меняет
максимум, а для суммы замените его нулём через `tl.where(mask, x, 0.0)`.

```python
row_stats_kernel[(n_rows,)](x, row_max, row_sum, n_cols, stride, BLOCK=256)
```

Тесты: короткие строки (один кусок), строки по 1000 чисел, строки из одних отрицательных чисел, строки
с отступом (`stride > n_cols`). Максимум должен совпасть точно, сумма — с допуском atol = 1e-4, rtol = 1e-5.
Тест трафика: каждый элемент `x` прочитан один раз, каждая строка записала по одному числу в `max_ptr` и
`sum_ptr`.
""", """\
A reduction over a row longer than a block. For each row of a matrix `x` (`n_rows x n_cols`, rows `stride`
elements apart) find its max and its sum: `max_ptr[row]` and `sum_ptr[row]`.

A row does not fit one block (`n_cols` up to 1000, `BLOCK = 256`), so the program walks it in chunks,
`for start in range(0, n_cols, BLOCK)`, carrying a running max `m` and a running sum `s` through the loop.
`tl.max(x, axis=0)` and `tl.sum(x, axis=0)` fold a chunk into one number.

The point is the last chunk's tail. Masked-off lanes of `tl.load` return `other` (0 without it), and they take
part in `tl.max` and `tl.sum` like real ones. For a sum a 0 is harmless; for a max it is not: a row of negative
numbers gets a max of 0. Read the tail as `-inf` (`other=-float("inf")`), which leaves the max alone, and for
the sum replace it with zeros through `tl.where(mask, x, 0.0)`.

```python
row_stats_kernel[(n_rows,)](x, row_max, row_sum, n_cols, stride, BLOCK=256)
```

The tests: short rows (one chunk), rows of 1000 numbers, rows of negative numbers only, padded rows
(`stride > n_cols`). The max must match exactly, the sum within atol = 1e-4, rtol = 1e-5. The traffic test:
each element of `x` read once, each row storing one number to `max_ptr` and one to `sum_ptr`.
""")

HINTS = (
    t("Внутри цикла: `mask = cols < n_cols`, `x = tl.load(x_ptr + row * stride + cols, mask=mask, "
      "other=-float(\"inf\"))`.",
      "Inside the loop: `mask = cols < n_cols`, `x = tl.load(x_ptr + row * stride + cols, mask=mask, "
      "other=-float(\"inf\"))`."),
    t("Бегущий максимум: `m = tl.maximum(m, tl.max(x, axis=0))`. Бегущая сумма без -inf хвоста: "
      "`s += tl.sum(tl.where(mask, x, 0.0), axis=0)`.",
      "The running max: `m = tl.maximum(m, tl.max(x, axis=0))`. The running sum without the -inf tail: "
      "`s += tl.sum(tl.where(mask, x, 0.0), axis=0)`."),
    t("После цикла: `tl.store(max_ptr + row, m)` и `tl.store(sum_ptr + row, s)` — по одному числу на программу.",
      "After the loop: `tl.store(max_ptr + row, m)` and `tl.store(sum_ptr + row, s)`, one number per program."),
)


def run_stats(mod, lang, x, stride=None, block=256, backend=Numpy):
    """x: (n_rows, n_cols) or a view with padded rows; returns (max, sum, launch record)."""
    k = kernel(mod, "row_stats_kernel", PARAMS, lang)
    rows, cols = x.shape
    mx, sm = backend.put(filled(rows, np.float32)), backend.put(filled(rows, np.float32))
    rec = launch(k, (rows,), backend.put(x) if backend is not Numpy else x, mx, sm, cols, stride or cols,
                 BLOCK=block)
    return backend.get(mx), backend.get(sm), rec


def tail_as_zero_max(x: np.ndarray, block: int) -> np.ndarray:
    """A max over the row with the last chunk's masked lanes read as 0."""
    true = x.astype(np.float64).max(axis=1)
    return np.maximum(true, 0.0) if x.shape[1] % block else true


def check(x, mx, sm, lang, block=256, extra=()):
    def max_causes(got, exp):
        if not close(got, tail_as_zero_max(x, block), 0.0, 0.0):
            return None
        row = int(np.argmax(np.abs(np.asarray(got, np.float64) - exp)))
        return M.say("diag_max_zero", lang, row=row)
    ok, message = compare("max", mx, x.astype(np.float64).max(axis=1), lang,
                          diagnose=lambda g, e: first_cause(lambda: max_causes(g, e), *extra))
    if not ok:
        return ok, message
    ok_sum, sum_message = compare("sum", sm, x.astype(np.float64).sum(axis=1), lang, atol=1e-4, rtol=1e-5,
                                  diagnose=lambda g, e: first_cause(*extra))
    return (True, f"max: {message}; sum: {sum_message}") if ok_sum else (False, sum_message)


def _values_test(rows, cols, seed, negative=False):
    def test(mod, lang):
        x = randn(rng(seed), (rows, cols))
        if negative:
            x = -np.abs(x) - 1.0
        mx, sm, _ = run_stats(mod, lang, x)
        return check(x, mx, sm, lang)
    return test


def test_strided_rows(mod, lang):
    rows, cols, stride = 8, 300, 512
    buf = np.full((rows, stride), 1e3, dtype=np.float32)
    x = randn(rng(84), (rows, cols))
    buf[:, :cols] = x
    mx, sm, _ = run_stats(mod, lang, buf[:, :cols], stride)

    def row_step_of_n_cols():
        model = row_step_model([buf], rows, cols, cols, lambda r: r.astype(np.float64).max(axis=1), (rows,))
        return M.say("diag_stride", lang, stride=stride, n_cols=cols) if close(mx, model) else None
    return check(x, mx, sm, lang, extra=(row_step_of_n_cols,))


def test_traffic(mod, lang):
    rows, cols = 16, 1000
    x = randn(rng(85), (rows, cols))
    _, _, rec = run_stats(mod, lang, x)
    return expect_traffic(rec, lang, [
        ("x_ptr", "load", rows * cols, f"n_rows·n_cols = {rows}·{cols}", lambda p: cols),
        ("max_ptr", "store", rows, f"n_rows = {rows}", lambda p: 1),
        ("sum_ptr", "store", rows, f"n_rows = {rows}", lambda p: 1),
    ])


TOL = t("max точно; sum: atol = 1e-4, rtol = 1e-5", "max exact; sum: atol = 1e-4, rtol = 1e-5")
TESTS = (
    Test("short_rows", t("8 × 100: один кусок", "8 x 100: one chunk"), _values_test(8, 100, 81), TOL),
    Test("long_rows", t("16 × 1000: четыре куска, последний неполный", "16 x 1000: four chunks, the last partial"),
         _values_test(16, 1000, 82), TOL),
    Test("negative_rows", t("строки из отрицательных чисел", "rows of negative numbers"),
         _values_test(16, 1000, 83, negative=True), TOL),
    Test("strided_rows", t("строки через stride = 512 при n_cols = 300", "rows stride = 512 apart, n_cols = 300"),
         test_strided_rows, TOL),
    Test("traffic", t("трафик: x прочитан один раз", "traffic: x read once"), test_traffic),
)


def demo(mod, lang, backend=Numpy):
    x = np.array([[1.0, 5.0, -2.0, 3.0, 0.5], [-4.0, -1.5, -3.0, -2.0, -7.0]], dtype=np.float32)
    mx, sm, _ = run_stats(mod, lang, x, block=2, backend=backend)
    print("x =\n", x)
    print("row_stats_kernel, BLOCK = 2 (3 chunks): max =", mx, "sum =", sm, "—",
          verdict(np.concatenate([mx, sm]), np.concatenate([x.max(axis=1), x.sum(axis=1)]), 1e-6, lang))
    return [("max", mx), ("sum", sm)]


EXERCISE = Exercise(
    id="row_stats",
    order=5,
    title=t("Редукции по строкам: максимум и сумма", "Row reductions: max and sum"),
    statement=STATEMENT,
    starter=both(STARTER, COMMENTS),
    solution=both(SOLUTION, COMMENTS),
    hints=HINTS,
    tests=TESTS,
    demo=demo,
    kernels={"row_stats_kernel": PARAMS},
)
