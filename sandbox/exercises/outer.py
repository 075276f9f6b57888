"""Broadcasting two vectors into a tile: out[i, j] = x[i] · y[j] + b[j] (an outer product plus a row bias). A
column x[:, None] times a row y[None, :] is a BM x BN tile; the traffic test counts the vectors' re-reads."""
from __future__ import annotations

import numpy as np

from .. import messages as M
from ._base import Exercise, Numpy, Test, both, kernel, launch, randn, rng, t
from ._checks import close, compare, filled, verdict
from ._diagnose import first_cause
from ._traffic import expect_traffic

PARAMS = ("x_ptr", "y_ptr", "b_ptr", "out_ptr", "M", "N", "BM", "BN")

COMMENTS = {
    "tile": {"ru": "строки и столбцы тайла этой программы", "en": "this program's tile: its rows and columns"},
    "load_todo": {"ru": "TODO: прочитайте BM чисел x (индексы offs_m) и BN чисел y и b (индексы offs_n) с масками",
                  "en": "TODO: load BM numbers of x (indices offs_m) and BN numbers of y and b (indices offs_n), masked"},
    "tile_todo": {"ru": "TODO: тайл BM × BN: x как столбец ([:, None]), y и b как строки ([None, :])",
                  "en": "TODO: the BM x BN tile: x as a column ([:, None]), y and b as rows ([None, :])"},
    "store_todo": {"ru": "TODO: запишите тайл в out (M × N, строки подряд) с маской по обеим осям",
                   "en": "TODO: store the tile to out (M x N, row-major) with a mask on both axes"},
    "column": {"ru": "BM × 1, умножить на 1 × BN — это BM × BN", "en": "BM x 1 times 1 x BN is BM x BN"},
}

HEAD = '''
import triton
import triton.language as tl


@triton.jit
def outer_kernel(x_ptr, y_ptr, b_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BM + tl.arange(0, BM)      # «tile»
    offs_n = pid_n * BN + tl.arange(0, BN)
'''

STARTER = HEAD + '''\
    # «load_todo»
    # «tile_todo»
    # «store_todo»
'''

SOLUTION = HEAD + '''\
    x = tl.load(x_ptr + offs_m, mask=offs_m < M)
    y = tl.load(y_ptr + offs_n, mask=offs_n < N)
    b = tl.load(b_ptr + offs_n, mask=offs_n < N)
    tile = x[:, None] * y[None, :] + b[None, :]   # «column»
    tl.store(out_ptr + offs_m[:, None] * N + offs_n[None, :], tile,
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
'''

STATEMENT = t("""\
Бродкастинг двух векторов в тайл: **out[i, j] = x[i] · y[j] + b[j]** — внешнее произведение векторов `x`
(длины `M`) и `y` (длины `N`) плюс смещение `b` по столбцам. Так в ядрах складываются bias, масштабы по
строкам и столбцам, причинные маски.

Программа `(pid_m, pid_n)` читает `BM` чисел `x` и по `BN` чисел `y` и `b` — одномерные блоки с масками — и
собирает из них тайл `BM × BN`: `x[:, None]` — столбец (`BM × 1`), `y[None, :]` — строка (`1 × BN`), их
произведение — таблица `BM × BN`. Вставленная ось `None` должна стоять там, где у тайла нет этого индекса:
у `x` — номер строки `i`, у `y` и `b` — номер столбца `j`. `out` — матрица `M × N`, строки подряд.

```python
outer_kernel[(triton.cdiv(M, 16), triton.cdiv(N, 32))](x, y, b, out, M, N, BM=16, BN=32)
```

Тесты: целые тайлы, края по обеим осям (`M = 50`, `N = 70`), вектор длины 1. Тест трафика: программа читает
только свои `BM` чисел `x` и `BN` чисел `y` и `b`, поэтому `x` целиком читается `⌈N / BN⌉` раз, `y` и `b` —
по `⌈M / BM⌉` раз, а `out` пишется один раз.
""", """\
Broadcasting two vectors into a tile: **out[i, j] = x[i] · y[j] + b[j]**, the outer product of `x` (length
`M`) and `y` (length `N`) plus a bias `b` along the columns. That is how kernels add biases, per-row and
per-column scales, causal masks.

Program `(pid_m, pid_n)` loads `BM` numbers of `x` and `BN` numbers each of `y` and `b` (1-D blocks with
masks) and builds a `BM x BN` tile from them: `x[:, None]` is a column (`BM x 1`), `y[None, :]` a row
(`1 x BN`), and their product a `BM x BN` table. The inserted `None` axis goes where the tile has no such
index: for `x`, the row number `i`; for `y` and `b`, the column number `j`. `out` is an `M x N` matrix,
row-major.

```python
outer_kernel[(triton.cdiv(M, 16), triton.cdiv(N, 32))](x, y, b, out, M, N, BM=16, BN=32)
```

The tests: whole tiles, edges on both axes (`M = 50`, `N = 70`), a vector of length 1. The traffic test: a
program loads only its `BM` numbers of `x` and `BN` numbers of `y` and `b`, so all of `x` is read `⌈N / BN⌉`
times, `y` and `b` `⌈M / BM⌉` times each, and `out` is written once.
""")

HINTS = (
    t("Векторы читаются одномерными блоками: `x = tl.load(x_ptr + offs_m, mask=offs_m < M)`, и так же `y`, `b` "
      "с `offs_n < N`.",
      "The vectors are loaded as 1-D blocks: `x = tl.load(x_ptr + offs_m, mask=offs_m < M)`, and `y`, `b` the same "
      "way with `offs_n < N`."),
    t("Тайл: `x[:, None] * y[None, :] + b[None, :]`. Если поставить `None` не туда (`x[None, :]`), форма получится "
      "`1 × BM`, и при BM ≠ BN тайлы не сложатся, а при BM = BN результат окажется транспонирован.",
      "The tile: `x[:, None] * y[None, :] + b[None, :]`. With `None` in the wrong place (`x[None, :]`) the shape is "
      "`1 x BM`; with BM != BN the tiles do not combine, with BM = BN the result comes out transposed."),
    t("Запись: `tl.store(out_ptr + offs_m[:, None] * N + offs_n[None, :], tile, "
      "mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))`.",
      "Store: `tl.store(out_ptr + offs_m[:, None] * N + offs_n[None, :], tile, "
      "mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))`."),
)

SWAPPED = t("Каждый тайл вышел транспонированным: out[i, j] = x[j] · y[i] + b[i] внутри тайла. x должен идти "
            "вдоль строк тайла, x[:, None], а y и b — вдоль столбцов, y[None, :] и b[None, :].",
            "Each tile came out transposed: out[i, j] = x[j] · y[i] + b[i] within a tile. x must run along the "
            "tile's rows, x[:, None], and y and b along its columns, y[None, :] and b[None, :].")


def run_outer(mod, lang, x, y, b, bm=16, bn=32, backend=Numpy):
    k = kernel(mod, "outer_kernel", PARAMS, lang)
    m, n = x.size, y.size
    out = backend.put(filled((m, n), np.float32))
    rec = launch(k, (-(-m // bm), -(-n // bn)), backend.put(x), backend.put(y), backend.put(b), out, m, n,
                 BM=bm, BN=bn)
    return backend.get(out), rec


def reference(x, y, b):
    return np.outer(x.astype(np.float64), y) + b.astype(np.float64)[None, :]


def swapped_in_tiles(x, y, b, bm, bn):
    """What a kernel with the vectors' axes swapped computes when BM = BN: each tile transposed in place."""
    m, n = x.size, y.size
    out = np.full((m, n), np.nan)
    for i0 in range(0, m, bm):
        for j0 in range(0, n, bn):
            for i in range(i0, min(m, i0 + bm)):
                for j in range(j0, min(n, j0 + bn)):
                    xi, yj = i0 + (j - j0), j0 + (i - i0)
                    if xi < m and yj < n:
                        out[i, j] = float(x[xi]) * float(y[yj]) + float(b[yj])
    return out


def _values_test(m, n, seed, bm=16, bn=32):
    def test(mod, lang):
        g = rng(seed)
        x, y, b = randn(g, m), randn(g, n), randn(g, n)
        out, _ = run_outer(mod, lang, x, y, b, bm, bn)

        def diagnose(got, exp):
            return first_cause(lambda: M.text(SWAPPED, lang)
                               if bm == bn and close(got, swapped_in_tiles(x, y, b, bm, bn), partial=True) else None)
        return compare("out", out, reference(x, y, b), lang, atol=1e-6, rtol=1e-6, diagnose=diagnose)
    return test


def test_traffic(mod, lang):
    m, n, bm, bn = 50, 70, 16, 32
    g = rng(75)
    x, y, b = randn(g, m), randn(g, n), randn(g, n)
    _, rec = run_outer(mod, lang, x, y, b, bm, bn)
    gm, gn = -(-m // bm), -(-n // bn)

    def rows(p):
        return min(bm, m - p[0] * bm)

    def cols(p):
        return min(bn, n - p[1] * bn)
    return expect_traffic(rec, lang, [
        ("x_ptr", "load", m * gn, f"M·⌈N/BN⌉ = {m}·{gn}", rows),
        ("y_ptr", "load", n * gm, f"N·⌈M/BM⌉ = {n}·{gm}", cols),
        ("b_ptr", "load", n * gm, f"N·⌈M/BM⌉ = {n}·{gm}", cols),
        ("out_ptr", "store", m * n, f"M·N = {m}·{n}", lambda p: rows(p) * cols(p)),
    ])


TOL = t("atol = 1e-6, rtol = 1e-6", "atol = 1e-6, rtol = 1e-6")
TESTS = (
    Test("whole_tiles", t("64 × 64, тайлы 32 × 32", "64 x 64, 32 x 32 tiles"), _values_test(64, 64, 71, 32, 32), TOL),
    Test("edges", t("50 × 70: края по обеим осям", "50 x 70: edges on both axes"), _values_test(50, 70, 72), TOL),
    Test("one_row", t("M = 1: один элемент x", "M = 1: a single element of x"), _values_test(1, 40, 73), TOL),
    Test("traffic", t("трафик: x читается ⌈N/BN⌉ раз, y и b — ⌈M/BM⌉ раз", "traffic: x read ⌈N/BN⌉ times, y and b "
                      "⌈M/BM⌉ times"), test_traffic),
)


def demo(mod, lang, backend=Numpy):
    x = np.arange(1, 4, dtype=np.float32)
    y = np.arange(1, 6, dtype=np.float32)
    b = np.full(5, 0.5, dtype=np.float32)
    out, _ = run_outer(mod, lang, x, y, b, 2, 4, backend)
    print("x =", x, " y =", y, " b =", b)
    print("outer_kernel, tiles 2 x 4:\n", out, "—", verdict(out, reference(x, y, b), 0.0, lang))
    return [("out", out)]


EXERCISE = Exercise(
    id="outer",
    order=4,
    title=t("Бродкастинг: внешнее произведение", "Broadcasting: an outer product"),
    statement=STATEMENT,
    starter=both(STARTER, COMMENTS),
    solution=both(SOLUTION, COMMENTS),
    hints=HINTS,
    tests=TESTS,
    demo=demo,
    kernels={"outer_kernel": PARAMS},
)
