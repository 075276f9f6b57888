"""The lesson's matmul kernel: any strides, a 1-D grid walked in GROUP_M order (tiles of C grouped by GROUP_M
rows, so that programs running together share strips of A and B in L2), pointers advanced along K. Its tests
check values, strided and transposed inputs, which tile each program computes, and each program's
addresses (a wrong stride that stays in bounds reads the right number of elements but not the right ones)."""
from __future__ import annotations

import numpy as np

from .. import messages as M
from ._base import Exercise, Numpy, Test, both, kernel, launch, randn, rng, t, traced
from ._checks import compare, filled, verdict
from ._diagnose import first_cause, static_hint
from ._traffic import expect_tiles, expect_traffic

PARAMS = ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm",
          "stride_cn", "BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M")
BLOCKS = {"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16, "GROUP_M": 2}

COMMENTS = {
    "group_todo": {"ru": "TODO: 1. какой тайл C считает программа pid, в порядке групп по GROUP_M строк тайлов:\n"
                         "    #   num_pid_in_group = GROUP_M * num_pid_n; first_pid_m = (pid // num_pid_in_group) * GROUP_M;\n"
                         "    #   group_size_m = min(num_pid_m - first_pid_m, GROUP_M);\n"
                         "    #   pid_m = first_pid_m + (pid % num_pid_in_group) % group_size_m;\n"
                         "    #   pid_n = (pid % num_pid_in_group) // group_size_m",
                   "en": "TODO: 1. which C tile program pid computes, in groups of GROUP_M tile rows:\n"
                         "    #   num_pid_in_group = GROUP_M * num_pid_n; first_pid_m = (pid // num_pid_in_group) * GROUP_M;\n"
                         "    #   group_size_m = min(num_pid_m - first_pid_m, GROUP_M);\n"
                         "    #   pid_m = first_pid_m + (pid % num_pid_in_group) % group_size_m;\n"
                         "    #   pid_n = (pid % num_pid_in_group) // group_size_m"},
    "ptrs_todo": {"ru": "TODO: 2. указатели на первые тайлы: A (BLOCK_M × BLOCK_K) и B (BLOCK_K × BLOCK_N) через шаги",
                  "en": "TODO: 2. pointers to the first tiles, A (BLOCK_M x BLOCK_K) and B (BLOCK_K x BLOCK_N), via the strides"},
    "loop_todo": {"ru": "TODO: 3. цикл по K тайлами BLOCK_K: загрузки с масками (other=0.0), acc = tl.dot(a, b, acc),\n"
                        "    #   сдвиг указателей на BLOCK_K * stride_ak и BLOCK_K * stride_bk",
                  "en": "TODO: 3. loop over K in tiles of BLOCK_K: masked loads (other=0.0), acc = tl.dot(a, b, acc),\n"
                        "    #   advance the pointers by BLOCK_K * stride_ak and BLOCK_K * stride_bk"},
    "store_todo": {"ru": "TODO: 4. запишите тайл C (через stride_cm, stride_cn) с маской по обеим осям",
                   "en": "TODO: 4. store the C tile (via stride_cm, stride_cn) with a mask on both axes"},
    "group": {"ru": "1. тайл C этой программы: группы по GROUP_M строк тайлов",
              "en": "1. this program's C tile: groups of GROUP_M tile rows"},
    "ptrs": {"ru": "2. двумерные таблицы адресов первых тайлов", "en": "2. 2-D tables of the first tiles' addresses"},
    "left": {"ru": "3. сколько столбцов K осталось: маска хвоста", "en": "3. how many K columns are left: the tail's mask"},
    "dot": {"ru": "acc += a @ b (TF32 на тензорных ядрах)", "en": "acc += a @ b (TF32 on tensor cores)"},
    "store": {"ru": "4. тайл C", "en": "4. the C tile"},
}

HEAD = '''
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
'''

STARTER = HEAD + '''\
    # «group_todo»
    # «ptrs_todo»
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    # «loop_todo»
    # «store_todo»
'''

SOLUTION = HEAD + '''\
    num_pid_in_group = GROUP_M * num_pid_n      # «group»
    first_pid_m = (pid // num_pid_in_group) * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (pid % num_pid_in_group) % group_size_m
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak   # «ptrs»
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K                # «left»
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)                 # «dot»
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn   # «store»
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
'''

STATEMENT = t("""\
Матмул `C = A @ B` в том виде, в каком его пишут на практике (ядро из урока «Пишем ядра на Triton»), с тремя
новыми вещами по сравнению с первым тайловым матмулом:

1. **Шаги.** Матрицы — любые виды: элемент `A[i, k]` лежит по адресу `a_ptr + i · stride_am + k · stride_ak`,
   так же `B` и `C`. Транспонированная `B` или строки с отступом работают без копий.
2. **Одномерная сетка в порядке GROUP_M.** Программ `⌈M/BLOCK_M⌉ · ⌈N/BLOCK_N⌉`, и номер `pid` надо
   превратить в тайл `(pid_m, pid_n)`. Если нумеровать тайлы построчно, подряд работающие программы читают
   одну полосу `A` и полосы `B` по всей ширине. Порядок группами по `GROUP_M` строк тайлов идёт по столбцам
   внутри группы: подряд работают программы с `GROUP_M` полосами `A` и немногими полосами `B`, и эти данные
   переиспользуются из кэша L2:
   ```
   num_pid_in_group = GROUP_M * num_pid_n
   first_pid_m = (pid // num_pid_in_group) * GROUP_M
   group_size_m = min(num_pid_m - first_pid_m, GROUP_M)      # последняя группа может быть ниже
   pid_m = first_pid_m + (pid % num_pid_in_group) % group_size_m
   pid_n = (pid % num_pid_in_group) // group_size_m
   ```
3. **Указатели, которые сдвигаются.** Таблицы адресов первых тайлов `A` (`BLOCK_M × BLOCK_K`) и `B`
   (`BLOCK_K × BLOCK_N`) строятся один раз, а в цикле по `K` сдвигаются на `BLOCK_K · stride_ak` и
   `BLOCK_K · stride_bk`. Хвост `K` закрывает маска по `k_left = K − k · BLOCK_K`.

```python
grid = (triton.cdiv(M, 16) * triton.cdiv(N, 16),)
matmul_kernel[grid](a, b, c, M, N, K, *a_strides, *b_strides, *c_strides,
                    BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, GROUP_M=2)
```

`tl.dot` во FP32 по умолчанию считает во TF32, поэтому допуск `1e-5 + 2⁻⁹·Σ|a·b|`. Тесты: `70 × 45 @ 45 × 50`,
транспонированная `B`, `A` со строками через отступ, порядок тайлов (программа `pid` пишет именно тайл из
формулы GROUP_M) и адреса: каждая программа читает ровно свои строки `A`, свои столбцы `B` и пишет свой тайл `C`.
""", """\
A matmul `C = A @ B` as it is written in practice (the kernel of the lesson "Writing Triton kernels"), with
three new things compared with the first tiled matmul:

1. **Strides.** The matrices are any views: element `A[i, k]` is at `a_ptr + i · stride_am + k · stride_ak`,
   and so for `B` and `C`. A transposed `B` or padded rows work without copies.
2. **A 1-D grid in GROUP_M order.** There are `⌈M/BLOCK_M⌉ · ⌈N/BLOCK_N⌉` programs, and the number `pid` has
   to become a tile `(pid_m, pid_n)`. Numbering tiles row by row, programs running together read one strip
   of `A` and strips of `B` across its whole width. Grouping by `GROUP_M` tile rows goes down the columns
   within a group: programs running together use `GROUP_M` strips of `A` and few strips of `B`, and that
   data is reused from the L2 cache:
   ```
   num_pid_in_group = GROUP_M * num_pid_n
   first_pid_m = (pid // num_pid_in_group) * GROUP_M
   group_size_m = min(num_pid_m - first_pid_m, GROUP_M)      # the last group may be shorter
   pid_m = first_pid_m + (pid % num_pid_in_group) % group_size_m
   pid_n = (pid % num_pid_in_group) // group_size_m
   ```
3. **Pointers that advance.** The tables of the first tiles' addresses, `A` (`BLOCK_M x BLOCK_K`) and `B`
   (`BLOCK_K x BLOCK_N`), are built once and advanced by `BLOCK_K · stride_ak` and `BLOCK_K · stride_bk` in the
   loop over `K`. A mask on `k_left = K − k · BLOCK_K` covers the tail of `K`.

```python
grid = (triton.cdiv(M, 16) * triton.cdiv(N, 16),)
matmul_kernel[grid](a, b, c, M, N, K, *a_strides, *b_strides, *c_strides,
                    BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, GROUP_M=2)
```

An FP32 `tl.dot` computes in TF32 by default, hence the tolerance `1e-5 + 2⁻⁹·Σ|a·b|`. The tests:
`70 x 45 @ 45 x 50`, a transposed `B`, an `A` with padded rows, the order of tiles (program `pid` writes
exactly the tile of the GROUP_M formula) and addresses: each program reads exactly its rows of `A` and its
columns of `B` and writes its tile of `C`.
""")

HINTS = (
    t("Порядок тайлов — пять строк из условия, дословно. Проверка: при 5 × 4 тайлах и GROUP_M = 2 программы "
      "0, 1, 2, 3 считают тайлы (0, 0), (1, 0), (0, 1), (1, 1).",
      "The order of tiles is the five lines of the statement, verbatim. A check: with 5 x 4 tiles and GROUP_M = 2, "
      "programs 0, 1, 2, 3 compute tiles (0, 0), (1, 0), (0, 1), (1, 1)."),
    t("Адреса: `a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak`, "
      "`b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn`. Строки `B` нумерует k, "
      "поэтому у `offs_k` шаг `stride_bk`.",
      "Addresses: `a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak`, "
      "`b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn`. k numbers the rows of `B`, "
      "so `offs_k` goes with `stride_bk`."),
    t("Цикл: `for k in range(0, tl.cdiv(K, BLOCK_K))`, `k_left = K - k * BLOCK_K`, маски "
      "`(offs_m[:, None] < M) & (offs_k[None, :] < k_left)` и `(offs_k[:, None] < k_left) & (offs_n[None, :] < N)`, "
      "`acc = tl.dot(a, b, acc)`, затем `a_ptrs += BLOCK_K * stride_ak`, `b_ptrs += BLOCK_K * stride_bk`.",
      "The loop: `for k in range(0, tl.cdiv(K, BLOCK_K))`, `k_left = K - k * BLOCK_K`, the masks "
      "`(offs_m[:, None] < M) & (offs_k[None, :] < k_left)` and `(offs_k[:, None] < k_left) & (offs_n[None, :] < N)`, "
      "`acc = tl.dot(a, b, acc)`, then `a_ptrs += BLOCK_K * stride_ak`, `b_ptrs += BLOCK_K * stride_bk`."),
    t("Запись: `c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn`, "
      "`tl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))`.",
      "The store: `c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn`, "
      "`tl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))`."),
)


def _strides(x: np.ndarray):
    return tuple(s // x.itemsize for s in x.strides)


def _args(a, b, c):
    m, k = a.shape
    n = b.shape[1]
    return (a, b, c, m, n, k, *_strides(a), *_strides(b), *_strides(c))


def _grid(m, n):
    return (-(-m // BLOCKS["BLOCK_M"]) * -(-n // BLOCKS["BLOCK_N"]),)


def run_matmul(mod, lang, a, b, backend=Numpy, trace_all=False):
    k = kernel(mod, "matmul_kernel", PARAMS, lang)
    m, n = a.shape[0], b.shape[1]
    c = filled((m, n), np.float32)
    if backend is not Numpy:
        args = _args(np.ascontiguousarray(a), np.ascontiguousarray(b), c)
        cc = backend.put(c)
        launch(k, _grid(m, n), backend.put(args[0]), backend.put(args[1]), cc, *args[3:], **BLOCKS)
        return backend.get(cc), None
    rec = launch(k, _grid(m, n), *_args(a, b, c), trace_all=trace_all, **BLOCKS)
    return c, rec


def grouped_tile(pid: int, m: int, n: int):
    """(pid_m, pid_n) of program `pid` in GROUP_M order, computed here with Python ints."""
    num_m, num_n, group = -(-m // BLOCKS["BLOCK_M"]), -(-n // BLOCKS["BLOCK_N"]), BLOCKS["GROUP_M"]
    in_group = group * num_n
    first = (pid // in_group) * group
    size = min(num_m - first, group)
    return first + (pid % in_group) % size, (pid % in_group) // size


ORDER = t("В порядке GROUP_M программа {program} считает тайл (pid_m, pid_n) = {tile}: проверьте, как из pid "
          "получаются pid_m и pid_n.",
          "In GROUP_M order program {program} computes the tile (pid_m, pid_n) = {tile}: check how pid_m and pid_n "
          "come from pid.")


def tile_rules(m, n, k, lang="ru"):
    bm, bn = BLOCKS["BLOCK_M"], BLOCKS["BLOCK_N"]

    def order(p):
        return M.text(ORDER, lang, program=p[0], tile=str(grouped_tile(p[0], m, n)))

    def rows(p):
        pm, _ = grouped_tile(p[0], m, n)
        return np.arange(pm * bm, min(m, (pm + 1) * bm))

    def cols(p):
        _, pn = grouped_tile(p[0], m, n)
        return np.arange(pn * bn, min(n, (pn + 1) * bn))
    return [("c_ptr", "store", (m, n), lambda p: (rows(p), cols(p)), order),
            ("a_ptr", "load", (m, k), lambda p: (rows(p), np.arange(k))),
            ("b_ptr", "load", (k, n), lambda p: (np.arange(k), cols(p)))]


def tf32_bound(a, b):
    return 1e-5 + 2.0 ** -9 * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))


def _values_test(make_a, make_b, seed):
    def test(mod, lang):
        g = rng(seed)
        a, b = make_a(g), make_b(g)
        c, _ = run_matmul(mod, lang, a, b)

        def addresses():
            kern = kernel(mod, "matmul_kernel", PARAMS, lang)
            m, n = a.shape[0], b.shape[1]
            rec = traced(kern, _grid(m, n), *_args(a, b, filled((m, n), np.float32)), **BLOCKS)
            ok, message = expect_tiles(rec, lang, tile_rules(m, n, a.shape[1], lang), extra_only=True)
            return None if ok else M.sentences(message, static_hint(mod.__file__, lang))
        return compare("c", c, a.astype(np.float64) @ b.astype(np.float64), lang, atol=tf32_bound(a, b),
                       tol=t("1e-5 + 2⁻⁹·Σ|a·b| — допускает TF32", "1e-5 + 2⁻⁹·Σ|a·b|, admits TF32")[lang],
                       diagnose=lambda got, exp: first_cause(addresses))
    return test


def test_tiles(mod, lang):
    """Which tile each program writes and which strips it reads, program by program."""
    g = rng(105)
    a, b = randn(g, (70, 45)), randn(g, (45, 50))
    m, k = a.shape
    n = b.shape[1]
    _, rec = run_matmul(mod, lang, a, b, trace_all=True)
    bm, bn = BLOCKS["BLOCK_M"], BLOCKS["BLOCK_N"]
    gm, gn = -(-m // bm), -(-n // bn)

    def rows(p):
        return min(bm, m - grouped_tile(p[0], m, n)[0] * bm)

    def cols(p):
        return min(bn, n - grouped_tile(p[0], m, n)[1] * bn)
    ok, counted = expect_traffic(rec, lang, [
        ("a_ptr", "load", m * k * gn, f"M·K·⌈N/BN⌉ = {m}·{k}·{gn}", lambda p: rows(p) * k),
        ("b_ptr", "load", k * n * gm, f"K·N·⌈M/BM⌉ = {k}·{n}·{gm}", lambda p: k * cols(p)),
        ("c_ptr", "store", m * n, f"M·N = {m}·{n}", lambda p: rows(p) * cols(p)),
    ])
    if rec is None or rec["tensors"]["c_ptr"]["totals"]["stored_elements"] == 0:
        return ok, counted                      # nothing stored yet: the counts say it plainly
    ok_tiles, tiles = expect_tiles(rec, lang, tile_rules(m, n, k, lang))
    if not ok_tiles:
        return False, tiles
    return (True, f"{counted}; {tiles}") if ok else (False, counted)


TF32 = t("1e-5 + 2⁻⁹·Σ|a·b| (TF32)", "1e-5 + 2⁻⁹·Σ|a·b| (TF32)")
TESTS = (
    Test("values", t("70 × 45 @ 45 × 50", "70 x 45 @ 45 x 50"),
         _values_test(lambda g: randn(g, (70, 45)), lambda g: randn(g, (45, 50)), 101), TF32),
    Test("transposed_b", t("B — транспонированная матрица: шаги (1, K)", "B is a transposed matrix: strides (1, K)"),
         _values_test(lambda g: randn(g, (64, 40)), lambda g: randn(g, (48, 40)).T, 102), TF32),
    Test("padded_a", t("A со строками через отступ: шаги (64, 1)", "A with padded rows: strides (64, 1)"),
         _values_test(lambda g: randn(g, (33, 64))[:, :50], lambda g: randn(g, (50, 20)), 103), TF32),
    Test("tiles", t("порядок GROUP_M и адреса: свой тайл C, свои строки A и столбцы B",
                    "GROUP_M order and addresses: its own C tile, rows of A and columns of B"), test_tiles),
)


def demo(mod, lang, backend=Numpy):
    g = rng(8)
    a, b = randn(g, (40, 20)), randn(g, (20, 36))
    c, _ = run_matmul(mod, lang, a, b, backend)
    print("matmul_kernel, 40 x 20 @ 20 x 36, 16-tiles, GROUP_M = 2, grid (9,):", "—",
          verdict(c, a.astype(np.float64) @ b, tf32_bound(a, b), lang))
    order = [grouped_tile(p, 40, 36) for p in range(9)]
    print("GROUP_M order, program -> tile:", ", ".join(f"{p}->{tile}" for p, tile in enumerate(order)))
    return [("c", c)]


EXERCISE = Exercise(
    id="matmul",
    order=10,
    title=t("Матмул: шаги и порядок GROUP_M", "Matmul: strides and GROUP_M order"),
    statement=STATEMENT,
    starter=both(STARTER, COMMENTS),
    solution=both(SOLUTION, COMMENTS),
    hints=HINTS,
    tests=TESTS,
    demo=demo,
    kernels={"matmul_kernel": PARAMS},
)
