"""The lesson's practice in real Triton syntax: vector add, row softmax, a first tiled matmul (2-D grid).

Six tests; the last checks the matmul's traffic against the lesson's count (tile rows of A are read once per
column of tiles and vice versa, M·K·cdiv(N, BN) + K·N·cdiv(M, BM) elements in all) and its addresses: each
program reads exactly its strips of A and B and writes exactly its tile of C.
"""
from __future__ import annotations

import numpy as np

from .. import messages as M
from ._base import Exercise, Numpy, Test, both, kernel, launch, randn, rng, t, traced
from ._checks import close, compare, filled, verdict
from ._diagnose import first_cause, static_hint
from ._traffic import expect_tiles, expect_traffic

ADD = ("x_ptr", "y_ptr", "out_ptr", "n", "BLOCK")
SOFTMAX = ("x_ptr", "out_ptr", "n_cols", "stride", "BLOCK")
MATMUL = ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "BM", "BN", "BK")

COMMENTS = {
    "pid": {"ru": "номер программы: 0, 1, 2, …", "en": "this program's number: 0, 1, 2, ..."},
    "add_todo": {"ru": "TODO: offs = pid * BLOCK + tl.arange(0, BLOCK); mask = offs < n;\n"
                       "    #       загрузите x и y с маской, запишите x + y в out_ptr с той же маской",
                 "en": "TODO: offs = pid * BLOCK + tl.arange(0, BLOCK); mask = offs < n;\n"
                       "    #       load x and y with the mask, store x + y to out_ptr with the same mask"},
    "row": {"ru": "одна программа — одна строка", "en": "one program per row"},
    "cols": {"ru": "BLOCK ≥ n_cols, степень двойки", "en": "BLOCK >= n_cols, a power of two"},
    "softmax_todo": {"ru": "TODO: загрузите строку (хвост как -inf), вычтите её максимум, возьмите tl.exp,\n"
                           "    #       поделите на сумму и запишите с маской cols < n_cols",
                     "en": "TODO: load the row (its tail as -inf), subtract its max, take tl.exp,\n"
                           "    #       divide by the sum and store with the mask cols < n_cols"},
    "tile": {"ru": "тайл C: строки offs_m, столбцы offs_n", "en": "the C tile: rows offs_m, columns offs_n"},
    "acc": {"ru": "сумма во FP32", "en": "the sum, in FP32"},
    "matmul_todo": {"ru": "TODO: for k0 in range(0, K, BK): тайл a (BM × BK) и тайл b (BK × BN) с масками\n"
                          "    #       (other=0.0), затем acc = tl.dot(a, b, acc). Индекс элемента: строка * ширина + столбец",
                    "en": "TODO: for k0 in range(0, K, BK): tile a (BM x BK) and tile b (BK x BN) with masks\n"
                          "    #       (other=0.0), then acc = tl.dot(a, b, acc). An element's index: row * width + col"},
    "store_todo": {"ru": "TODO: запишите тайл C с маской (строки < M и столбцы < N)",
                   "en": "TODO: store the C tile with a mask (rows < M and columns < N)"},
    "tail": {"ru": "последний блок выходит за конец массивов", "en": "the last block runs past the end of the arrays"},
    "inf": {"ru": "-inf не меняет максимум, а exp(-inf) = 0", "en": "-inf leaves the max alone, and exp(-inf) = 0"},
    "stable": {"ru": "устойчивость: exp не переполнится", "en": "stability: exp cannot overflow"},
    "k_tile": {"ru": "столбцы A и строки B этого шага", "en": "the columns of A and rows of B of this step"},
    "dot": {"ru": "acc += a @ b (на GPU — тензорные ядра, TF32)", "en": "acc += a @ b (tensor cores on a GPU, TF32)"},
}

HEAD = '''
import triton
import triton.language as tl
'''

STARTER = HEAD + '''

@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)                      # «pid»
    # «add_todo»


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)                      # «row»
    cols = tl.arange(0, BLOCK)                  # «cols»
    # «softmax_todo»


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BM + tl.arange(0, BM)      # «tile»
    offs_n = pid_n * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)  # «acc»
    # «matmul_todo»
    # «store_todo»
'''

SOLUTION = HEAD + '''

@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)                      # «pid»
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n                             # «tail»
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)                      # «row»
    cols = tl.arange(0, BLOCK)                  # «cols»
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf"))   # «inf»
    x = x - tl.max(x, axis=0)                   # «stable»
    num = tl.exp(x)
    tl.store(out_ptr + row * stride + cols, num / tl.sum(num, axis=0), mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BM + tl.arange(0, BM)      # «tile»
    offs_n = pid_n * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)  # «acc»
    for k0 in range(0, K, BK):
        ks = k0 + offs_k                        # «k_tile»
        a = tl.load(a_ptr + offs_m[:, None] * K + ks[None, :],
                    mask=(offs_m[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(b_ptr + ks[:, None] * N + offs_n[None, :],
                    mask=(ks[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)                 # «dot»
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc,
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
'''

STATEMENT = {
    "ru": """\
Три ядра из практики урока «Пишем ядра на Triton», но уже на настоящем синтаксисе Triton: `import triton`, `@triton.jit`,
`tl.load`/`tl.store` с масками, запуск `kernel[grid](...)`. Здесь код исполняет **minitriton** — эмулятор
Triton на NumPy, поэтому чтение мимо массива не проходит молча, а останавливает ядро с номером программы
и строкой.

1. `add_kernel` — сложение векторов: программа `pid` отвечает за `BLOCK` чисел подряд; последний блок
   выходит за конец, его хвост закрывает маска `offs < n`.
2. `softmax_kernel` — устойчивый softmax по строкам: одна программа на строку, `BLOCK ≥ n_cols`.
   Хвост блока читайте как `-inf`: он не влияет на максимум и даёт `exp(-inf) = 0` в сумме.
3. `matmul_kernel` — тайловый матмул `C = A @ B` (A: M × K, B: K × N, по строкам подряд, индекс элемента
   `строка * ширина + столбец`). Программа `(pid_m, pid_n)` считает тайл `BM × BN`, шагая по K тайлами
   `BK` и накапливая `acc = tl.dot(a, b, acc)`.

Как тесты запускают ядра:

```python
add_kernel[(triton.cdiv(n, BLOCK),)](x, y, out, n, BLOCK=1024)
softmax_kernel[(n_rows,)](x, out, n_cols, n_cols, BLOCK=128)        # stride = n_cols
matmul_kernel[(triton.cdiv(M, 16), triton.cdiv(N, 16))](a, b, c, M, N, K, BM=16, BN=16, BK=16)
```

Всё во FP32. Сложение сверяется точно, softmax — с допуском atol = 1e-6, rtol = 1e-5. `tl.dot` по умолчанию
считает во **TF32**, как тензорные ядра GPU (мантисса входов обрезается до 10 бит), поэтому допуск матмула
это учитывает: 1e-5 + 2⁻⁹·Σ|a·b|. Последний тест считает трафик: матмул должен прочитать ровно
M·K·⌈N/BN⌉ элементов A и K·N·⌈M/BM⌉ элементов B (замаскированные дорожки не в счёт) и записать M·N элементов C,
причём каждая программа читает именно свои строки A и столбцы B и пишет именно свой тайл C.

**Запустить** выполняет небольшой пример и показывает печать и счётчики памяти; **Проверить** гоняет все
шесть тестов.
""",
    "en": """\
The three kernels of the practice of the lesson "Writing Triton kernels", now in real Triton syntax: `import triton`, `@triton.jit`,
`tl.load`/`tl.store` with masks, launches as `kernel[grid](...)`. The code runs on **minitriton**, a NumPy
emulator of Triton, so a read past the end of an array does not go unnoticed: the kernel stops and names
the program and the line.

1. `add_kernel`: vector addition. Program `pid` handles `BLOCK` consecutive numbers; the last block runs
   past the end, and the mask `offs < n` cuts its tail off.
2. `softmax_kernel`: a numerically stable softmax of each row, one program per row, `BLOCK >= n_cols`.
   Read the block's tail as `-inf`: it leaves the max alone and adds `exp(-inf) = 0` to the sum.
3. `matmul_kernel`: a tiled matmul `C = A @ B` (A is M x K, B is K x N, row-major, an element's index is
   `row * width + col`). Program `(pid_m, pid_n)` computes a `BM x BN` tile, stepping along K in tiles of
   `BK` and accumulating `acc = tl.dot(a, b, acc)`.

How the tests launch the kernels:

```python
add_kernel[(triton.cdiv(n, BLOCK),)](x, y, out, n, BLOCK=1024)
softmax_kernel[(n_rows,)](x, out, n_cols, n_cols, BLOCK=128)        # stride = n_cols
matmul_kernel[(triton.cdiv(M, 16), triton.cdiv(N, 16))](a, b, c, M, N, K, BM=16, BN=16, BK=16)
```

Everything is FP32. The sum must match exactly, the softmax within atol = 1e-6, rtol = 1e-5. By default
`tl.dot` computes in **TF32**, as a GPU's tensor cores do (its inputs keep 10 mantissa bits), so the
matmul's tolerance allows for it: 1e-5 + 2⁻⁹·Σ|a·b|. The last test counts traffic: the matmul must load
exactly M·K·⌈N/BN⌉ elements of A and K·N·⌈M/BM⌉ elements of B (masked-off lanes do not count) and store
M·N elements of C, each program reading exactly its rows of A and columns of B and writing exactly its tile of C.

**Run** executes a small example and shows the prints and the memory counters; **Check** runs all six tests.
""",
}

HINTS = (
    {"ru": "Сложение: `offs = pid * BLOCK + tl.arange(0, BLOCK)`, `mask = offs < n`, и эта же маска в обоих "
           f"`tl.load` и в `tl.store`. Без неё программа 96 при n = {M.num(98_432, 'ru')} читает смещения {M.num(98_432, 'ru')}…{M.num(99_327, 'ru')}.",
     "en": "Addition: `offs = pid * BLOCK + tl.arange(0, BLOCK)`, `mask = offs < n`, and the same mask in both "
           f"`tl.load` calls and in `tl.store`. Without it, program 96 at n = {M.num(98_432, 'en')} reads offsets {M.num(98_432, 'en')}…{M.num(99_327, 'en')}."},
    {"ru": "Softmax: адреса строки — `x_ptr + row * stride + cols`. "
           "`x = tl.load(..., mask=cols < n_cols, other=-float(\"inf\"))`, затем `x - tl.max(x, axis=0)`, "
           "`tl.exp`, деление на `tl.sum(..., axis=0)`.",
     "en": "Softmax: the row's addresses are `x_ptr + row * stride + cols`. "
           "`x = tl.load(..., mask=cols < n_cols, other=-float(\"inf\"))`, then `x - tl.max(x, axis=0)`, "
           "`tl.exp`, and a division by `tl.sum(..., axis=0)`."},
    {"ru": "Матмул: двумерные адреса строятся бродкастингом. Для шага `k0` возьмите `ks = k0 + offs_k`; тайл A — "
           "`a_ptr + offs_m[:, None] * K + ks[None, :]` с маской `(offs_m[:, None] < M) & (ks[None, :] < K)`, тайл B — "
           "`b_ptr + ks[:, None] * N + offs_n[None, :]`.",
     "en": "Matmul: 2-D addresses come from broadcasting. For step `k0` take `ks = k0 + offs_k`; the A tile is "
           "`a_ptr + offs_m[:, None] * K + ks[None, :]` with the mask `(offs_m[:, None] < M) & (ks[None, :] < K)`, "
           "the B tile `b_ptr + ks[:, None] * N + offs_n[None, :]`."},
    {"ru": "Трафик: маска должна отрезать всё лишнее — и строки за M, и столбцы K за концом. Запись C: "
           "`tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=(offs_m[:, None] < M) & "
           "(offs_n[None, :] < N))`.",
     "en": "Traffic: the masks must cut off everything extra, rows past M as well as K columns past the end. "
           "Store C with `tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=(offs_m[:, None] < M) "
           "& (offs_n[None, :] < N))`."},
)


# ---------------------------------------------------------------- launches shared by tests and the demo

def run_add(mod, lang, x, y, block, backend=Numpy):
    k = kernel(mod, "add_kernel", ADD, lang)
    n = x.size
    out = backend.put(filled(n, np.float32))
    rec = launch(k, ((n + block - 1) // block,), backend.put(x), backend.put(y), out, n, BLOCK=block)
    return backend.get(out), rec


def run_softmax(mod, lang, x, block, backend=Numpy):
    k = kernel(mod, "softmax_kernel", SOFTMAX, lang)
    rows, cols = x.shape
    out = backend.put(filled(x.shape, np.float32))
    rec = launch(k, (rows,), backend.put(x), out, cols, cols, BLOCK=block)
    return backend.get(out), rec


def run_matmul(mod, lang, a, b, bm=16, bn=16, bk=16, backend=Numpy):
    k = kernel(mod, "matmul_kernel", MATMUL, lang)
    m, kk = a.shape
    n = b.shape[1]
    c = backend.put(filled((m, n), np.float32))
    rec = launch(k, ((m + bm - 1) // bm, (n + bn - 1) // bn), backend.put(a), backend.put(b), c, m, n, kk,
                 BM=bm, BN=bn, BK=bk)
    return backend.get(c), rec


def softmax_ref(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


# ---------------------------------------------------------------- tests

def test_add_exact(mod, lang):
    g = rng(11)
    x, y = randn(g, 4096), randn(g, 4096)
    out, _ = run_add(mod, lang, x, y, 1024)
    return compare("out", out, x + y, lang)


def test_add_tail(mod, lang):
    g = rng(12)
    x, y = randn(g, 98_432), randn(g, 98_432)
    out, _ = run_add(mod, lang, x, y, 1024)
    return compare("out", out, x + y, lang)


def softmax_tail_as_zero(x: np.ndarray, block: int) -> np.ndarray:
    """What a softmax whose block's tail came in as 0.0 computes: the zeros enter the max and the sum."""
    x = x.astype(np.float64)
    pad = block - x.shape[1]
    m = np.maximum(x.max(axis=1, keepdims=True), 0.0 if pad else -np.inf)
    e = np.exp(x - m)
    return e / (e.sum(axis=1, keepdims=True) + pad * np.exp(-m))


def softmax_without_max(x: np.ndarray) -> np.ndarray:
    """What a softmax without the max subtracted computes in FP32: exp overflows to inf, inf / inf = NaN."""
    with np.errstate(all="ignore"):
        e = np.exp(x.astype(np.float32))
        return e / e.sum(axis=1, keepdims=True, dtype=np.float32)


def softmax_causes(x, block, lang):
    def diagnose(got, exp):
        return first_cause(
            lambda: M.say("diag_tail_zero", lang) if close(got, softmax_tail_as_zero(x, block), 1e-6, 1e-5) else None,
            lambda: M.say("diag_unstable", lang) if close(got, softmax_without_max(x)) else None)
    return diagnose


def test_softmax_rows(mod, lang):
    x = randn(rng(13), (64, 100))
    out, _ = run_softmax(mod, lang, x, 128)
    return compare("out", out, softmax_ref(x), lang, atol=1e-6, rtol=1e-5, diagnose=softmax_causes(x, 128, lang))


def test_softmax_stable(mod, lang):
    x = (randn(rng(14), (16, 100)) * 3 + 1000).astype(np.float32)
    out, _ = run_softmax(mod, lang, x, 128)
    return compare("out", out, softmax_ref(x), lang, atol=1e-6, rtol=1e-5, diagnose=softmax_causes(x, 128, lang))


def _matmul_inputs():
    g = rng(15)
    return randn(g, (70, 45)), randn(g, (45, 50))


def tf32_bound(a, b):
    """1e-5 + 2^-9 · (|A| @ |B|): TF32 keeps 10 mantissa bits of each input (relative error < 2^-10 each)."""
    return 1e-5 + 2.0 ** -9 * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))


def tile_rules(m, n, k, bm, bn):
    """Program (pid_m, pid_n)'s tiles: rows of A × all K, all K × columns of B, its tile of C."""
    def rows(p):
        return np.arange(p[0] * bm, min(m, (p[0] + 1) * bm))

    def cols(p):
        return np.arange(p[1] * bn, min(n, (p[1] + 1) * bn))
    return [("a_ptr", "load", (m, k), lambda p: (rows(p), np.arange(k))),
            ("b_ptr", "load", (k, n), lambda p: (np.arange(k), cols(p))),
            ("c_ptr", "store", (m, n), lambda p: (rows(p), cols(p)))]


def test_matmul_values(mod, lang):
    a, b = _matmul_inputs()
    c, _ = run_matmul(mod, lang, a, b)

    def diagnose(got, exp):
        def addresses():
            k = kernel(mod, "matmul_kernel", MATMUL, lang)
            m, kk = a.shape
            n = b.shape[1]
            rec = traced(k, (-(-m // 16), -(-n // 16)), a, b, filled((m, n), np.float32), m, n, kk, BM=16, BN=16, BK=16)
            ok, message = expect_tiles(rec, lang, tile_rules(m, n, kk, 16, 16), extra_only=True)
            return None if ok else M.sentences(message, static_hint(mod.__file__, lang))
        return first_cause(addresses)
    return compare("c", c, a.astype(np.float64) @ b.astype(np.float64), lang, atol=tf32_bound(a, b),
                   tol=M.say("tolerance_tf32", lang, atol="1e-5"), diagnose=diagnose)


def test_matmul_traffic(mod, lang):
    a, b = _matmul_inputs()
    m, k = a.shape
    n = b.shape[1]
    bm = bn = 16
    kern = kernel(mod, "matmul_kernel", MATMUL, lang)
    c = filled((m, n), np.float32)
    rec = launch(kern, (-(-m // bm), -(-n // bn)), a, b, c, m, n, k, BM=bm, BN=bn, BK=16, trace_all=True)
    gm, gn = -(-m // bm), -(-n // bn)

    def rows(p):
        return min(bm, m - p[0] * bm)

    def cols(p):
        return min(bn, n - p[1] * bn)
    ok, message = expect_traffic(rec, lang, [
        ("a_ptr", "load", m * k * gn, f"M·K·⌈N/BN⌉ = {m}·{k}·{gn}", lambda p: rows(p) * k),
        ("b_ptr", "load", k * n * gm, f"K·N·⌈M/BM⌉ = {k}·{n}·{gm}", lambda p: k * cols(p)),
        ("c_ptr", "store", m * n, f"M·N = {m}·{n}", lambda p: rows(p) * cols(p)),
    ])
    if not ok:
        return ok, message
    ok_tiles, tiles = expect_tiles(rec, lang, tile_rules(m, n, k, bm, bn))
    return (True, f"{message}; {tiles}") if ok_tiles else (False, tiles)


TESTS = (
    Test("add_exact", t("сложение: n = 4096, целые блоки", "add: n = 4096, whole blocks"), test_add_exact,
         t("точно", "exact")),
    Test("add_tail", t(f"сложение: n = {M.num(98_432, 'ru')}, хвост под маской", f"add: n = {M.num(98_432, 'en')}, a masked tail"), test_add_tail,
         t("точно", "exact")),
    Test("softmax_rows", t("softmax: 64 × 100, блок 128", "softmax: 64 x 100, block 128"), test_softmax_rows,
         t("atol = 1e-6, rtol = 1e-5", "atol = 1e-6, rtol = 1e-5")),
    Test("softmax_stable", t("softmax: значения около 1000", "softmax: values near 1000"), test_softmax_stable,
         t("atol = 1e-6, rtol = 1e-5", "atol = 1e-6, rtol = 1e-5")),
    Test("matmul_values", t("матмул: 70 × 45 @ 45 × 50, тайлы 16", "matmul: 70 x 45 @ 45 x 50, 16-tiles"),
         test_matmul_values, t("1e-5 + 2⁻⁹·Σ|a·b| (TF32)", "1e-5 + 2⁻⁹·Σ|a·b| (TF32)")),
    Test("matmul_traffic", t("матмул: трафик M·K·⌈N/BN⌉ + K·N·⌈M/BM⌉ и адреса тайлов",
                             "matmul: traffic M·K·⌈N/BN⌉ + K·N·⌈M/BM⌉ and the tiles' addresses"),
         test_matmul_traffic),
)


# ---------------------------------------------------------------- Run

def demo(mod, lang, backend=Numpy):
    """The lesson's small example for each kernel: prints what came out; returns the outputs."""
    x, y = np.arange(10, dtype=np.float32), np.ones(10, dtype=np.float32)
    out, _ = run_add(mod, lang, x, y, 4, backend)
    print("add_kernel, n = 10, BLOCK = 4:", out, "—", verdict(out, x + y, 0.0, lang))
    s = (np.arange(20, dtype=np.float32).reshape(4, 5) % 7).astype(np.float32)
    sm, _ = run_softmax(mod, lang, s, 8, backend)
    print("softmax_kernel, 4 x 5, BLOCK = 8:\n", np.array2string(sm, precision=4), "—",
          verdict(sm, softmax_ref(s), 1e-5, lang))
    g = rng(7)
    a, b = randn(g, (40, 20)), randn(g, (20, 36))
    c, _ = run_matmul(mod, lang, a, b, backend=backend)
    print("matmul_kernel, 40 x 20 @ 20 x 36, BM = BN = BK = 16:", "—",
          verdict(c, a.astype(np.float64) @ b, tf32_bound(a, b), lang))
    return [("add: out", out), ("softmax: out", sm), ("matmul: c", c)]


EXERCISE = Exercise(
    id="practice",
    order=6,
    title={"ru": "Практика: сложение, softmax и тайловый матмул",
           "en": "Practice: vector add, row softmax and a tiled matmul"},
    statement=STATEMENT,
    starter=both(STARTER, COMMENTS),
    solution=both(SOLUTION, COMMENTS),
    hints=HINTS,
    tests=TESTS,
    demo=demo,
    kernels={"add_kernel": ADD, "softmax_kernel": SOFTMAX, "matmul_kernel": MATMUL},
)
