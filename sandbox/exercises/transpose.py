"""2-D tiles: a transpose. Program (pid_m, pid_n) loads a BM x BN tile through a 2-D block of addresses built
by broadcasting (offs_m[:, None], offs_n[None, :]), masked on both axes, and stores it transposed. The
traffic test checks addresses: each program reads exactly its tile and writes exactly its mirror."""
from __future__ import annotations

import numpy as np

from ._base import Exercise, Numpy, Test, both, kernel, launch, randn, rng, t
from ._checks import compare, filled, verdict
from ._traffic import expect_tiles

PARAMS = ("x_ptr", "out_ptr", "M", "N", "BM", "BN")

COMMENTS = {
    "tile": {"ru": "строки и столбцы тайла этой программы", "en": "this program's tile: its rows and columns"},
    "load_todo": {"ru": "TODO: адреса тайла x (M × N, строки подряд): x_ptr + offs_m[:, None] * N + offs_n[None, :] —\n"
                        "    #       таблица BM × BN; маска по обеим осям: (offs_m[:, None] < M) & (offs_n[None, :] < N)",
                  "en": "TODO: the x tile's addresses (M x N, row-major): x_ptr + offs_m[:, None] * N + offs_n[None, :],\n"
                        "    #       a BM x BN table; the mask covers both axes: (offs_m[:, None] < M) & (offs_n[None, :] < N)"},
    "store_todo": {"ru": "TODO: out = xᵀ (N × M): элемент x[i, j] идёт в out[j, i], адрес out_ptr + j * M + i;\n"
                         "    #       запишите tl.trans(тайл) в тайл out со строками offs_n и столбцами offs_m",
                   "en": "TODO: out = xᵀ (N x M): x[i, j] goes to out[j, i], at out_ptr + j * M + i;\n"
                         "    #       store tl.trans(tile) into the out tile with rows offs_n and columns offs_m"},
    "table": {"ru": "таблица адресов BM × BN", "en": "a BM x BN table of addresses"},
    "trans": {"ru": "тайл BN × BM", "en": "a BN x BM tile"},
}

HEAD = '''
import triton
import triton.language as tl


@triton.jit
def transpose_kernel(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BM + tl.arange(0, BM)      # «tile»
    offs_n = pid_n * BN + tl.arange(0, BN)
'''

STARTER = HEAD + '''\
    # «load_todo»
    # «store_todo»
'''

SOLUTION = HEAD + '''\
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tile = tl.load(x_ptr + offs_m[:, None] * N + offs_n[None, :], mask=mask)   # «table»
    tl.store(out_ptr + offs_n[:, None] * M + offs_m[None, :], tl.trans(tile),  # «trans»
             mask=(offs_n[:, None] < N) & (offs_m[None, :] < M))
'''

STATEMENT = t("""\
Двумерные тайлы. Транспонируйте матрицу `x` (`M × N`, строки подряд) в `out` (`N × M`): `out[j, i] = x[i, j]`.

Сетка двумерная: `(⌈M / BM⌉, ⌈N / BN⌉)`, программа `(pid_m, pid_n)` отвечает за тайл `BM × BN`. Таблицу его
адресов строят **бродкастингом**: `offs_m[:, None]` — столбец из `BM` номеров строк, `offs_n[None, :]` — строка
из `BN` номеров столбцов, и `x_ptr + offs_m[:, None] * N + offs_n[None, :]` — таблица `BM × BN` адресов, одна
`tl.load` читает весь тайл. Маска тоже таблица, и закрывать она должна **обе** оси: у последних тайлов
выходят за край и строки (`offs_m ≥ M`), и столбцы (`offs_n ≥ N`) — `(offs_m[:, None] < M) & (offs_n[None, :] < N)`.
Условие для номеров строк пишется с `[:, None]`, для столбцов — с `[None, :]`, как в адресе.

`tl.trans(tile)` переставляет оси тайла (`BN × BM`); запишите его в тайл `out` со строками `offs_n` и
столбцами `offs_m` (ширина строки `out` — `M`).

```python
transpose_kernel[(triton.cdiv(M, 32), triton.cdiv(N, 32))](x, out, M, N, BM=32, BN=32)
```

Тесты: квадратная матрица из целых тайлов, `70 × 45` (края по обеим осям), высокая `100 × 20` с тайлами
`32 × 16`. Тест адресов: каждая программа читает ровно свой тайл `x` и пишет ровно его отражение в `out`.
""", """\
2-D tiles. Transpose a matrix `x` (`M x N`, row-major) into `out` (`N x M`): `out[j, i] = x[i, j]`.

The grid is 2-D, `(⌈M / BM⌉, ⌈N / BN⌉)`, and program `(pid_m, pid_n)` handles a `BM x BN` tile. Its table of
addresses comes from **broadcasting**: `offs_m[:, None]` is a column of `BM` row numbers, `offs_n[None, :]` a
row of `BN` column numbers, and `x_ptr + offs_m[:, None] * N + offs_n[None, :]` a `BM x BN` table of
addresses, so one `tl.load` reads the whole tile. The mask is a table too, and it must cover **both** axes:
the last tiles run past the edge in rows (`offs_m >= M`) and in columns (`offs_n >= N`), hence
`(offs_m[:, None] < M) & (offs_n[None, :] < N)`. The condition on row numbers is written with `[:, None]`,
on column numbers with `[None, :]`, as in the address.

`tl.trans(tile)` swaps the tile's axes (`BN x BM`); store it into the `out` tile with rows `offs_n` and
columns `offs_m` (a row of `out` is `M` wide).

```python
transpose_kernel[(triton.cdiv(M, 32), triton.cdiv(N, 32))](x, out, M, N, BM=32, BN=32)
```

The tests: a square matrix of whole tiles, `70 x 45` (edges on both axes), a tall `100 x 20` with `32 x 16`
tiles. The address test: each program reads exactly its tile of `x` and writes exactly its mirror in `out`.
""")

HINTS = (
    t("Адреса тайла `x`: `x_ptr + offs_m[:, None] * N + offs_n[None, :]` — номер строки умножается на ширину "
      "строки `N`.",
      "The `x` tile's addresses: `x_ptr + offs_m[:, None] * N + offs_n[None, :]`; the row number is multiplied by "
      "the row width `N`."),
    t("Маска: `mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)`. С одной половиной последние тайлы "
      "читают за краем.",
      "The mask: `mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)`. With only one half the last tiles read "
      "past the edge."),
    t("Запись: у `out` строки — это `offs_n`, столбцы — `offs_m`, ширина строки — `M`: "
      "`tl.store(out_ptr + offs_n[:, None] * M + offs_m[None, :], tl.trans(tile), "
      "mask=(offs_n[:, None] < N) & (offs_m[None, :] < M))`.",
      "The store: `out`'s rows are `offs_n`, its columns `offs_m`, a row is `M` wide: "
      "`tl.store(out_ptr + offs_n[:, None] * M + offs_m[None, :], tl.trans(tile), "
      "mask=(offs_n[:, None] < N) & (offs_m[None, :] < M))`."),
)


def run_transpose(mod, lang, x, bm=32, bn=32, backend=Numpy, trace_all=False):
    k = kernel(mod, "transpose_kernel", PARAMS, lang)
    m, n = x.shape
    out = backend.put(filled((n, m), np.float32))
    rec = launch(k, (-(-m // bm), -(-n // bn)), backend.put(x), out, m, n, BM=bm, BN=bn, trace_all=trace_all)
    return backend.get(out), rec


def _values_test(shape, seed, bm=32, bn=32):
    def test(mod, lang):
        x = randn(rng(seed), shape)
        out, _ = run_transpose(mod, lang, x, bm, bn)
        return compare("out", out, x.T, lang)
    return test


def test_addresses(mod, lang):
    m, n, bm, bn = 70, 45, 32, 16
    x = randn(rng(64), (m, n))
    out, rec = run_transpose(mod, lang, x, bm, bn, trace_all=True)
    passed, message = compare("out", out, x.T, lang)
    if not passed:
        return passed, message

    def rows(p):
        return np.arange(p[0] * bm, min(m, (p[0] + 1) * bm))

    def cols(p):
        return np.arange(p[1] * bn, min(n, (p[1] + 1) * bn))
    return expect_tiles(rec, lang, [("x_ptr", "load", (m, n), lambda p: (rows(p), cols(p))),
                                    ("out_ptr", "store", (n, m), lambda p: (cols(p), rows(p)))])


EXACT = t("точно", "exact")
TESTS = (
    Test("square", t("64 × 64, целые тайлы 32 × 32", "64 x 64, whole 32 x 32 tiles"), _values_test((64, 64), 61), EXACT),
    Test("edges", t("70 × 45: края по обеим осям", "70 x 45: edges on both axes"), _values_test((70, 45), 62), EXACT),
    Test("tall", t("100 × 20, тайлы 32 × 16", "100 x 20, 32 x 16 tiles"), _values_test((100, 20), 63, 32, 16), EXACT),
    Test("addresses", t("адреса: каждая программа читает свой тайл и пишет его отражение",
                        "addresses: each program reads its tile and writes its mirror"), test_addresses),
)


def demo(mod, lang, backend=Numpy):
    x = np.arange(15, dtype=np.float32).reshape(3, 5)
    out, _ = run_transpose(mod, lang, x, 2, 4, backend)
    print("x (3 x 5) =\n", x)
    print("transpose_kernel, tiles 2 x 4, grid (2, 2):\n", out, "—", verdict(out, x.T, 0.0, lang))
    return [("out = xᵀ", out)]


EXERCISE = Exercise(
    id="transpose",
    order=3,
    title=t("Двумерные тайлы: транспонирование", "2-D tiles: a transpose"),
    statement=STATEMENT,
    starter=both(STARTER, COMMENTS),
    solution=both(SOLUTION, COMMENTS),
    hints=HINTS,
    tests=TESTS,
    demo=demo,
    kernels={"transpose_kernel": PARAMS},
)
