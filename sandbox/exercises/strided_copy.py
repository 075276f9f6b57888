"""Strides: a 2-D view is a pointer to its first element plus a step per axis. The kernel copies any view
(padded rows, a transposed matrix, every other column) into a contiguous array, one program per row."""
from __future__ import annotations

import numpy as np

from .. import messages as M
from ._base import Exercise, Numpy, Test, both, kernel, launch, next_pow2, randn, rng, t
from ._checks import close, compare, filled, verdict
from ._diagnose import first_cause
from ._traffic import expect_traffic

PARAMS = ("x_ptr", "out_ptr", "n_cols", "stride_r", "stride_c", "BLOCK")

COMMENTS = {
    "row": {"ru": "одна программа — одна строка", "en": "one program per row"},
    "cols": {"ru": "BLOCK ≥ n_cols, степень двойки", "en": "BLOCK >= n_cols, a power of two"},
    "load_todo": {"ru": "TODO: элемент (row, j) вида лежит по адресу x_ptr + row * stride_r + j * stride_c;\n"
                        "    #       прочитайте строку row (столбцы cols) с маской",
                  "en": "TODO: element (row, j) of the view is at x_ptr + row * stride_r + j * stride_c;\n"
                        "    #       load row `row` (columns cols) with the mask"},
    "store_todo": {"ru": "TODO: out — обычный массив n_rows × n_cols подряд: запишите строку в out_ptr + row * n_cols + cols",
                   "en": "TODO: out is a plain contiguous n_rows x n_cols array: store the row to "
                         "out_ptr + row * n_cols + cols"},
    "view": {"ru": "шаг по строкам и шаг по столбцам — из вида", "en": "the row step and the column step come from the view"},
    "dense": {"ru": "у out строки подряд: шаг n_cols и 1", "en": "out's rows are contiguous: steps n_cols and 1"},
}

HEAD = '''
import triton
import triton.language as tl


@triton.jit
def strided_copy_kernel(x_ptr, out_ptr, n_cols, stride_r, stride_c, BLOCK: tl.constexpr):
    row = tl.program_id(0)                      # «row»
    cols = tl.arange(0, BLOCK)                  # «cols»
    mask = cols < n_cols
'''

STARTER = HEAD + '''\
    # «load_todo»
    # «store_todo»
'''

SOLUTION = HEAD + '''\
    x = tl.load(x_ptr + row * stride_r + cols * stride_c, mask=mask)   # «view»
    tl.store(out_ptr + row * n_cols + cols, x, mask=mask)               # «dense»
'''

STATEMENT = t("""\
Массив в памяти — это адрес первого элемента и **шаги** (strides): элемент `(i, j)` двумерного вида лежит по
адресу `base + i · stride_r + j · stride_c` (шаги в элементах). Так NumPy и PyTorch описывают любой вид без
копирования: у матрицы `n_rows × n_cols` подряд шаги `(n_cols, 1)`; у строк с отступом — `(stride, 1)` со
`stride > n_cols`; у транспонированной матрицы `A.T` — `(1, n_rows_A)`; у каждого второго столбца
`A[:, ::2]` — `(n_cols_A, 2)`.

Напишите ядро, которое копирует вид `x` (`n_rows × n_cols`, шаги `stride_r`, `stride_c`) в обычный массив
`out` той же формы, строки подряд. Одна программа — одна строка, `BLOCK ≥ n_cols`.

```python
strided_copy_kernel[(n_rows,)](x, out, n_cols, x.strides[0] // 4, x.strides[1] // 4,
                               BLOCK=triton.next_power_of_2(n_cols))
```

(`x.strides` NumPy даёт в байтах, отсюда `// 4` для FP32; у PyTorch `x.stride()` — сразу в элементах.)
Тесты: обычная матрица, строки с отступом, транспонированная матрица и каждый второй столбец; копия точная.
Тест трафика: каждый элемент вида прочитан один раз, каждый элемент `out` записан один раз.
""", """\
An array in memory is the address of its first element plus **strides**: element `(i, j)` of a 2-D view is at
`base + i · stride_r + j · stride_c` (strides in elements). That is how NumPy and PyTorch describe any view
without copying: a contiguous `n_rows x n_cols` matrix has strides `(n_cols, 1)`; padded rows `(stride, 1)`
with `stride > n_cols`; a transposed matrix `A.T` has `(1, n_rows_A)`; every other column, `A[:, ::2]`, has
`(n_cols_A, 2)`.

Write a kernel that copies the view `x` (`n_rows x n_cols`, strides `stride_r`, `stride_c`) into a plain
array `out` of the same shape, rows back to back. One program per row, `BLOCK >= n_cols`.

```python
strided_copy_kernel[(n_rows,)](x, out, n_cols, x.strides[0] // 4, x.strides[1] // 4,
                               BLOCK=triton.next_power_of_2(n_cols))
```

(NumPy's `x.strides` are in bytes, hence `// 4` for FP32; PyTorch's `x.stride()` are in elements already.)
The tests: a plain matrix, padded rows, a transposed matrix and every other column; the copy must be exact.
The traffic test: each element of the view read once, each element of `out` written once.
""")

HINTS = (
    t("Строка `row` вида начинается по адресу `x_ptr + row * stride_r`; её столбец `j` — ещё `+ j * stride_c`. "
      "Для всех столбцов сразу: `x_ptr + row * stride_r + cols * stride_c`.",
      "Row `row` of the view starts at `x_ptr + row * stride_r`; its column `j` is `+ j * stride_c` further. "
      "For all columns at once: `x_ptr + row * stride_r + cols * stride_c`."),
    t("Не путайте шаги вида и выхода: у `out` строки подряд, поэтому его адреса — `out_ptr + row * n_cols + cols`.",
      "Do not mix up the view's strides with the output's: `out`'s rows are back to back, so its addresses are "
      "`out_ptr + row * n_cols + cols`."),
    t("Целиком: `x = tl.load(x_ptr + row * stride_r + cols * stride_c, mask=mask)`, "
      "`tl.store(out_ptr + row * n_cols + cols, x, mask=mask)`.",
      "All together: `x = tl.load(x_ptr + row * stride_r + cols * stride_c, mask=mask)`, "
      "`tl.store(out_ptr + row * n_cols + cols, x, mask=mask)`."),
)

IGNORED_STRIDE = t("Ядро копирует этот вид так, будто его шаги ({assumed}), а они ({real}): элемент (i, j) лежит по "
                   "адресу x_ptr + i * stride_r + j * stride_c — используйте оба шага.",
                   "The kernel copies this view as if its strides were ({assumed}), but they are ({real}): element "
                   "(i, j) is at x_ptr + i * stride_r + j * stride_c; use both strides.")


def run_copy(mod, lang, view, backend=Numpy):
    k = kernel(mod, "strided_copy_kernel", PARAMS, lang)
    rows, cols = view.shape
    out = backend.put(filled(view.shape, np.float32))
    sr, sc = (s // view.itemsize for s in view.strides)
    rec = launch(k, (rows,), _put_view(backend, view), out, cols, sr, sc, BLOCK=next_pow2(cols))
    return backend.get(out), rec


def _put_view(backend, view: np.ndarray):
    """The view on the backend with its strides (the GPU run rebuilds it over a copy of its base)."""
    if backend is Numpy:
        return view
    base = view.base if view.base is not None else view
    start = (view.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // view.itemsize
    return backend.put(np.ascontiguousarray(base).reshape(-1)).as_strided(
        view.shape, tuple(s // view.itemsize for s in view.strides), start)


def as_if_strides(view: np.ndarray, sr: int, sc: int) -> np.ndarray | None:
    """What a copy reading `view`'s memory with strides (sr, sc) instead of its own gives (None: out of range)."""
    base = view.base if view.base is not None else view
    flat = base.reshape(-1)
    start = (view.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // view.itemsize
    rows, cols = view.shape
    index = start + np.arange(rows)[:, None] * sr + np.arange(cols)[None, :] * sc
    if index.min() < 0 or index.max() >= flat.size:
        return None
    return flat[index]


def _view_test(make, seed):
    def test(mod, lang):
        view = make(rng(seed))
        out, _ = run_copy(mod, lang, view)
        sr, sc = (s // view.itemsize for s in view.strides)
        rows, cols = view.shape

        def diagnose(got, exp):
            def assumed(a, b):
                model = as_if_strides(view, a, b)
                if model is None or (a, b) == (sr, sc) or not close(got, model, 0.0, 0.0):
                    return None
                return M.text(IGNORED_STRIDE, lang, assumed=f"{a}, {b}", real=f"{sr}, {sc}")
            return first_cause(lambda: assumed(cols, 1), lambda: assumed(sr, 1), lambda: assumed(cols, sc))
        return compare("out", out, view, lang, diagnose=diagnose)
    return test


def _plain(g):
    return randn(g, (37, 50))


def _padded(g):
    return randn(g, (37, 64))[:, :50]


def _transposed(g):
    return randn(g, (50, 37)).T


def _every_other(g):
    return randn(g, (37, 100))[:, ::2]


def test_traffic(mod, lang):
    view = _every_other(rng(55))
    rows, cols = view.shape
    _, rec = run_copy(mod, lang, view)
    formula = f"n_rows·n_cols = {rows}·{cols}"
    return expect_traffic(rec, lang, [("x_ptr", "load", rows * cols, formula, lambda p: cols),
                                      ("out_ptr", "store", rows * cols, formula, lambda p: cols)])


EXACT = t("точно", "exact")
TESTS = (
    Test("plain", t("обычная матрица 37 × 50, шаги (50, 1)", "a plain 37 x 50 matrix, strides (50, 1)"),
         _view_test(_plain, 51), EXACT),
    Test("padded_rows", t("строки с отступом: шаги (64, 1)", "padded rows: strides (64, 1)"),
         _view_test(_padded, 52), EXACT),
    Test("transposed", t("транспонированная матрица: шаги (1, 37)", "a transposed matrix: strides (1, 37)"),
         _view_test(_transposed, 53), EXACT),
    Test("every_other_column", t("каждый второй столбец: шаги (100, 2)", "every other column: strides (100, 2)"),
         _view_test(_every_other, 54), EXACT),
    Test("traffic", t("трафик: вид прочитан и out записан по одному разу", "traffic: the view read once, out written once"),
         test_traffic),
)


def demo(mod, lang, backend=Numpy):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    out, _ = run_copy(mod, lang, a.T, backend)
    print("A =\n", a)
    print("strided_copy of A.T (strides (1, 4)):\n", out, "—", verdict(out, a.T, 0.0, lang))
    return [("out = A.T", out)]


EXERCISE = Exercise(
    id="strided_copy",
    order=2,
    title=t("Шаги: копия любого вида", "Strides: copying any view"),
    statement=STATEMENT,
    starter=both(STARTER, COMMENTS),
    solution=both(SOLUTION, COMMENTS),
    hints=HINTS,
    tests=TESTS,
    demo=demo,
    kernels={"strided_copy_kernel": PARAMS},
)
