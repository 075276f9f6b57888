"""A fused linear layer: C = silu(A @ W + bias) in one kernel. The bias and the activation are applied to the
accumulator once, after the K loop, before the one store of C: no second pass over C (its traffic test counts
zero loads of C), and nothing applied to partial sums (a re-run with K in one step tells that mistake apart)."""
from __future__ import annotations

import numpy as np

from .. import messages as M
from ._base import Exercise, Numpy, Test, both, kernel, launch, randn, rng, t
from ._checks import close, compare, filled, verdict
from ._diagnose import first_cause
from ._traffic import expect_traffic

PARAMS = ("a_ptr", "w_ptr", "bias_ptr", "c_ptr", "M", "N", "K", "BM", "BN", "BK")

COMMENTS = {
    "tile": {"ru": "тайл C этой программы", "en": "this program's C tile"},
    "loop_todo": {"ru": "TODO: цикл по K тайлами BK, как в тайловом матмуле: acc = tl.dot(a, w, acc)",
                  "en": "TODO: the loop over K in tiles of BK, as in the tiled matmul: acc = tl.dot(a, w, acc)"},
    "epilogue_todo": {"ru": "TODO: после цикла — bias по столбцам (bias_ptr + offs_n) и SiLU: z * tl.sigmoid(z)",
                      "en": "TODO: after the loop, the bias along the columns (bias_ptr + offs_n) and SiLU: z * tl.sigmoid(z)"},
    "store_todo": {"ru": "TODO: одна запись тайла C с маской по обеим осям",
                   "en": "TODO: one store of the C tile with a mask on both axes"},
    "epilogue": {"ru": "эпилог: один раз, над готовой суммой", "en": "the epilogue: once, on the finished sum"},
    "silu": {"ru": "SiLU = z · σ(z)", "en": "SiLU = z · σ(z)"},
}

HEAD = '''
import triton
import triton.language as tl


@triton.jit
def linear_silu_kernel(a_ptr, w_ptr, bias_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BM + tl.arange(0, BM)      # «tile»
    offs_n = pid_n * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
'''

STARTER = HEAD + '''\
    # «loop_todo»
    # «epilogue_todo»
    # «store_todo»
'''

SOLUTION = HEAD + '''\
    for k0 in range(0, K, BK):
        ks = k0 + offs_k
        a = tl.load(a_ptr + offs_m[:, None] * K + ks[None, :], mask=(offs_m[:, None] < M) & (ks[None, :] < K), other=0.0)
        w = tl.load(w_ptr + ks[:, None] * N + offs_n[None, :], mask=(ks[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, w, acc)
    bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0)
    z = acc + bias[None, :]                     # «epilogue»
    out = z * tl.sigmoid(z)                     # «silu»
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], out, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
'''

STATEMENT = t("""\
Слитый линейный слой: **C = SiLU(A @ W + bias)**, где `SiLU(z) = z · σ(z)` — активация из MLP LLaMA и Qwen.
`A` — `M × K`, `W` — `K × N`, `bias` — вектор длины `N` (по одному числу на столбец выхода), всё подряд по строкам.

Без слияния это три ядра и три прохода по `C`: матмул пишет `C`, второе ядро читает его и прибавляет bias,
третье применяет активацию. Слитое ядро делает всё в **эпилоге**: после цикла по `K` сумма `acc` готова и
лежит в регистрах, к ней прибавляют `bias[None, :]` (вдоль столбцов тайла), применяют SiLU и один раз пишут `C`.
Эпилог — только после цикла: активация или bias внутри цикла легли бы на частичные суммы.

```python
linear_silu_kernel[(triton.cdiv(M, 16), triton.cdiv(N, 16))](a, w, bias, c, M, N, K, BM=16, BN=16, BK=16)
```

`tl.dot` считает во TF32 (по умолчанию), поэтому допуск `1e-5 + 1.1 · 2⁻⁹·Σ|a·w|` (SiLU растягивает ошибку не
больше чем в 1.1 раза). Тесты: `48 × 40 @ 40 × 64`, размеры не кратные тайлам, `K = 200` (много шагов по K)
и трафик: `A` и `W` читаются как в тайловом матмуле, `bias` — `N` чисел на строку тайлов, `C` записан
один раз и ни разу не прочитан.
""", """\
A fused linear layer: **C = SiLU(A @ W + bias)**, with `SiLU(z) = z · σ(z)`, the activation of LLaMA's and
Qwen's MLPs. `A` is `M x K`, `W` is `K x N`, `bias` a vector of length `N` (one number per output column), all
row-major.

Unfused, that is three kernels and three passes over `C`: the matmul writes `C`, a second kernel reads it
and adds the bias, a third applies the activation. The fused kernel does it all in an **epilogue**: after
the loop over `K` the sum `acc` is finished and sits in registers, so `bias[None, :]` (along the tile's
columns) is added, SiLU applied, and `C` stored once. The epilogue comes after the loop only: inside it the
activation or the bias would land on partial sums.

```python
linear_silu_kernel[(triton.cdiv(M, 16), triton.cdiv(N, 16))](a, w, bias, c, M, N, K, BM=16, BN=16, BK=16)
```

`tl.dot` computes in TF32 (the default), hence the tolerance `1e-5 + 1.1 · 2⁻⁹·Σ|a·w|` (SiLU stretches an
error by at most 1.1). The tests: `48 x 40 @ 40 x 64`, sizes that are not multiples of the tiles, `K = 200`
(many steps along K) and traffic: `A` and `W` read as in the tiled matmul, `bias` `N` numbers per row of
tiles, `C` written once and never read.
""")

HINTS = (
    t("Цикл — как в тайловом матмуле: `for k0 in range(0, K, BK)`, `ks = k0 + offs_k`, тайлы `a` и `w` с масками "
      "по обеим осям и `other=0.0`, `acc = tl.dot(a, w, acc)`.",
      "The loop is the tiled matmul's: `for k0 in range(0, K, BK)`, `ks = k0 + offs_k`, tiles `a` and `w` masked on "
      "both axes with `other=0.0`, `acc = tl.dot(a, w, acc)`."),
    t("Эпилог после цикла: `bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0)`, "
      "`z = acc + bias[None, :]`, `out = z * tl.sigmoid(z)`.",
      "The epilogue after the loop: `bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0)`, "
      "`z = acc + bias[None, :]`, `out = z * tl.sigmoid(z)`."),
    t("Запись — одна: `tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], out, mask=(offs_m[:, None] < M) "
      "& (offs_n[None, :] < N))`. Читать `C` обратно не нужно.",
      "One store: `tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], out, mask=(offs_m[:, None] < M) "
      "& (offs_n[None, :] < N))`. There is no need to read `C` back."),
)

IN_LOOP = t("Ответ совпадает с {what} внутри цикла по K, после каждого tl.dot, то есть к частичным суммам: эпилог — "
            "один раз, после цикла.",
            "The result matches {what} inside the K loop, after each tl.dot, that is to partial sums: the epilogue "
            "goes once, after the loop.")
SILU_IN_LOOP = t("SiLU, применённой", "SiLU applied")
BIAS_IN_LOOP = t("bias, прибавленным", "the bias added")
BIAS_ROWS = t("Ответ совпадает с bias, прибавленным по строкам (bias[offs_m]): bias — по одному числу на столбец "
              "выхода, прибавляйте bias[None, :] с индексами offs_n.",
              "The result matches the bias added along the rows (bias[offs_m]): the bias has one number per output "
              "column, add bias[None, :] with the indices offs_n.")


def silu(z):
    return z / (1.0 + np.exp(-z))


def reference(a, w, bias, bias_rows=False):
    z = a.astype(np.float64) @ w.astype(np.float64)
    z = z + (bias.astype(np.float64)[:a.shape[0], None] if bias_rows else bias.astype(np.float64)[None, :])
    return silu(z)


def _k_steps(a, w):
    return [(a[:, k:k + 16].astype(np.float64), w[k:k + 16].astype(np.float64)) for k in range(0, a.shape[1], 16)]


def silu_in_loop(a, w, bias):
    """SiLU applied to the accumulator after each K step, then the epilogue as well."""
    acc = np.zeros((a.shape[0], w.shape[1]))
    for ak, wk in _k_steps(a, w):
        acc = silu(acc + ak @ wk)
    return silu(acc + bias.astype(np.float64)[None, :])


def bias_in_loop(a, w, bias):
    """The bias added after each K step (once per step), then SiLU."""
    acc = np.zeros((a.shape[0], w.shape[1]))
    for ak, wk in _k_steps(a, w):
        acc = acc + ak @ wk + bias.astype(np.float64)[None, :]
    return silu(acc)


def bound(a, w):
    return 1e-5 + 1.1 * 2.0 ** -9 * (np.abs(a.astype(np.float64)) @ np.abs(w.astype(np.float64)))


def run_linear(mod, lang, a, w, bias, backend=Numpy):
    k = kernel(mod, "linear_silu_kernel", PARAMS, lang)
    m, kk = a.shape
    n = w.shape[1]
    c = backend.put(filled((m, n), np.float32))
    rec = launch(k, (-(-m // 16), -(-n // 16)), backend.put(a), backend.put(w), backend.put(bias), c, m, n, kk,
                 BM=16, BN=16, BK=16)
    return backend.get(c), rec


def _inputs(seed, m, k, n):
    g = rng(seed)
    return randn(g, (m, k)) * 0.3, randn(g, (k, n)) * 0.3, randn(g, n)


def check(mod, lang, a, w, bias):
    c, _ = run_linear(mod, lang, a, w, bias)

    def in_loop():
        for model, what in ((silu_in_loop(a, w, bias), SILU_IN_LOOP), (bias_in_loop(a, w, bias), BIAS_IN_LOOP)):
            if close(c, model, 2 * bound(a, w), 1e-4):
                return M.text(IN_LOOP, lang, what=what[lang])
        return None

    def rows():
        if a.shape[0] > bias.size or not close(c, reference(a, w, bias, bias_rows=True), 1e-3, 1e-3):
            return None
        return M.text(BIAS_ROWS, lang)
    return _compare(lang, c, a, w, bias, lambda got, exp: first_cause(rows, in_loop))


def _compare(lang, c, a, w, bias, diagnose=None):
    return compare("c", c, reference(a, w, bias), lang, atol=bound(a, w),
                   tol=t("1e-5 + 1.1·2⁻⁹·Σ|a·w| — допускает TF32", "1e-5 + 1.1·2⁻⁹·Σ|a·w|, admits TF32")[lang],
                   diagnose=diagnose)


def _values_test(m, k, n, seed):
    def test(mod, lang):
        return check(mod, lang, *_inputs(seed, m, k, n))
    return test


def test_traffic(mod, lang):
    m, k, n = 40, 50, 70
    a, w, bias = _inputs(114, m, k, n)
    _, rec = run_linear(mod, lang, a, w, bias)
    gm, gn = -(-m // 16), -(-n // 16)

    def rows(p):
        return min(16, m - p[0] * 16)

    def cols(p):
        return min(16, n - p[1] * 16)
    ok, message = expect_traffic(rec, lang, [
        ("a_ptr", "load", m * k * gn, f"M·K·⌈N/BN⌉ = {m}·{k}·{gn}", lambda p: rows(p) * k),
        ("w_ptr", "load", k * n * gm, f"K·N·⌈M/BM⌉ = {k}·{n}·{gm}", lambda p: k * cols(p)),
        ("bias_ptr", "load", n * gm, f"N·⌈M/BM⌉ = {n}·{gm}", cols),
        ("c_ptr", "store", m * n, f"M·N = {m}·{n}", lambda p: rows(p) * cols(p)),
        ("c_ptr", "load", 0, "0", lambda p: 0),
    ])
    return ok, message


TOL = t("1e-5 + 1.1·2⁻⁹·Σ|a·w| (TF32)", "1e-5 + 1.1·2⁻⁹·Σ|a·w| (TF32)")
TESTS = (
    Test("whole_tiles", t("48 × 16 @ 16 × 64: один шаг по K", "48 x 16 @ 16 x 64: one step along K"),
         _values_test(48, 16, 64, 111), TOL),
    Test("edges", t("50 × 40 @ 40 × 70: края по обеим осям", "50 x 40 @ 40 x 70: edges on both axes"),
         _values_test(50, 40, 70, 112), TOL),
    Test("long_k", t("32 × 200 @ 200 × 48: 13 шагов по K", "32 x 200 @ 200 x 48: 13 steps along K"),
         _values_test(32, 200, 48, 113), TOL),
    Test("traffic", t("трафик: C записан один раз и не прочитан", "traffic: C written once and never read"),
         test_traffic),
)


def demo(mod, lang, backend=Numpy):
    a, w, bias = _inputs(10, 20, 24, 30)
    c, _ = run_linear(mod, lang, a, w, bias, backend)
    print("linear_silu_kernel, 20 x 24 @ 24 x 30, 16-tiles, grid (2, 2):", "—",
          verdict(c, reference(a, w, bias), bound(a, w), lang))
    print("c[0, :6] =", np.array2string(c[0, :6], precision=4))
    return [("c", c)]


EXERCISE = Exercise(
    id="matmul_act",
    order=11,
    title=t("Слитый слой: матмул + bias + SiLU", "A fused layer: matmul + bias + SiLU"),
    statement=STATEMENT,
    starter=both(STARTER, COMMENTS),
    solution=both(SOLUTION, COMMENTS),
    hints=HINTS,
    tests=TESTS,
    demo=demo,
    kernels={"linear_silu_kernel": PARAMS},
)
