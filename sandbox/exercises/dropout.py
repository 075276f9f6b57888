"""Dropout with tl.rand: each element keeps its own random number, drawn from (seed, its global offset), so the
mask is the same on every run and for every grouping of programs, and no mask array is stored. The tests
compare with tl.rand itself (drawn by a kernel of this module) and check what dropout promises: kept values
scaled by 1/(1 - p), the rest 0, a fresh pattern per seed. The page lists it once minitriton has tl.rand."""
from __future__ import annotations

import numpy as np

import minitriton
import minitriton.language as tl

from .. import messages as M
from ._base import Exercise, Numpy, Test, both, kernel, launch, randn, rng, t
from ._checks import close, compare, filled, unwritten_message, verdict
from ._diagnose import first_cause
from ._traffic import expect_traffic

PARAMS = ("x_ptr", "out_ptr", "n", "p", "seed", "BLOCK")

COMMENTS = {
    "offs": {"ru": "глобальные номера элементов этой программы", "en": "the global numbers of this program's elements"},
    "rand_todo": {"ru": "TODO: r = tl.rand(seed, offs) — своё случайное число в [0, 1) для каждого элемента",
                  "en": "TODO: r = tl.rand(seed, offs), a random number in [0, 1) of each element's own"},
    "keep_todo": {"ru": "TODO: элемент остаётся, если r > p; оставшиеся умножаются на 1 / (1 - p), выброшенные — 0;\n"
                        "    #       прочитайте x и запишите результат с маской",
                  "en": "TODO: an element stays when r > p; the kept ones are multiplied by 1 / (1 - p), dropped ones are 0;\n"
                        "    #       load x and store the result with the mask"},
    "rand": {"ru": "одно и то же число для одного (seed, offs)", "en": "the same number for the same (seed, offs)"},
    "scale": {"ru": "среднее выхода остаётся средним входа", "en": "the output's mean stays the input's"},
}

HEAD = '''
import triton
import triton.language as tl


@triton.jit
def dropout_kernel(x_ptr, out_ptr, n, p, seed, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)    # «offs»
    mask = offs < n
'''

STARTER = HEAD + '''\
    # «rand_todo»
    # «keep_todo»
'''

SOLUTION = HEAD + '''\
    x = tl.load(x_ptr + offs, mask=mask)
    r = tl.rand(seed, offs)                     # «rand»
    keep = r > p
    out = tl.where(keep, x / (1 - p), 0.0)      # «scale»
    tl.store(out_ptr + offs, out, mask=mask)
'''

STATEMENT = t("""\
Dropout при обучении: каждый элемент с вероятностью `p` обнуляется, а оставшиеся умножаются на `1 / (1 − p)`,
чтобы среднее не изменилось. Маску можно было бы сгенерировать на хосте и передать массивом, но это лишние
`n` байт на чтение (и на хранение до обратного прохода). Ядро делает иначе: `tl.rand(seed, offs)` даёт
каждому элементу своё случайное число в `[0, 1)`, зависящее только от `seed` и номера элемента (генератор
Philox, как в cuRAND). Обратный проход с тем же `seed` восстановит ту же маску, ничего не храня.

Важно передать **глобальные** номера `offs = pid * BLOCK + tl.arange(0, BLOCK)`: с `tl.arange(0, BLOCK)`
у всех программ окажутся одни и те же случайные числа, и каждый блок выбросит одни и те же позиции.

```python
dropout_kernel[(triton.cdiv(n, 1024),)](x, out, n, p, seed, BLOCK=1024)
```

Тесты: ответ совпадает с `where(tl.rand(seed, offs) > p, x / (1 − p), 0)` для нескольких `p` и `seed`;
тот же `seed` даёт тот же ответ, другой — другую маску; доля оставшихся около `1 − p`; трафик — `x`
прочитан и `out` записан по одному разу.
""", """\
Dropout in training: each element is zeroed with probability `p`, and the rest are multiplied by
`1 / (1 − p)` so the mean stays the same. The mask could be drawn on the host and passed as an array, but
that is `n` more bytes to read (and to keep until the backward pass). A kernel does it differently:
`tl.rand(seed, offs)` gives each element a random number in `[0, 1)` of its own that depends only on `seed`
and the element's number (the Philox generator, as in cuRAND). The backward pass with the same `seed`
rebuilds the same mask without storing anything.

Pass the **global** numbers `offs = pid * BLOCK + tl.arange(0, BLOCK)`: with `tl.arange(0, BLOCK)` every
program draws the same random numbers, and each block drops the same positions.

```python
dropout_kernel[(triton.cdiv(n, 1024),)](x, out, n, p, seed, BLOCK=1024)
```

The tests: the result equals `where(tl.rand(seed, offs) > p, x / (1 − p), 0)` for several `p` and `seed`;
the same `seed` gives the same result and another one a different mask; the share of kept elements is near
`1 − p`; traffic: `x` read once and `out` written once.
""")

HINTS = (
    t("`r = tl.rand(seed, offs)` — вектор из BLOCK чисел в [0, 1), по одному на элемент.",
      "`r = tl.rand(seed, offs)` is a vector of BLOCK numbers in [0, 1), one per element."),
    t("Чтение и выбор: `x = tl.load(x_ptr + offs, mask=mask)`, `out = tl.where(r > p, x / (1 - p), 0.0)`.",
      "Load and choose: `x = tl.load(x_ptr + offs, mask=mask)`, `out = tl.where(r > p, x / (1 - p), 0.0)`."),
    t("Запись: `tl.store(out_ptr + offs, out, mask=mask)`. Номера для `tl.rand` — те же `offs`, что и адреса: "
      "глобальные, а не `tl.arange(0, BLOCK)`.",
      "Store: `tl.store(out_ptr + offs, out, mask=mask)`. The numbers given to `tl.rand` are the same `offs` as the "
      "addresses: global ones, not `tl.arange(0, BLOCK)`."),
)

SAME_IN_EVERY_BLOCK = t("Каждая программа выбросила одни и те же позиции своего блока: в tl.rand переданы номера "
                        "внутри блока (tl.arange(0, BLOCK)), а нужны глобальные, offs = pid * BLOCK + tl.arange(0, BLOCK).",
                        "Every program dropped the same positions of its block: tl.rand got the numbers within the "
                        "block (tl.arange(0, BLOCK)) where it needs the global ones, offs = pid * BLOCK + "
                        "tl.arange(0, BLOCK).")
SEEDS_SAME = t("seed = {a} и seed = {b} дали одну и ту же маску: передайте seed в tl.rand.",
               "seed = {a} and seed = {b} gave the same mask: pass seed to tl.rand.")
SEEDS_OK = t("тот же seed — тот же ответ, другой seed — другая маска ({differ} из {n} позиций)",
             "the same seed gives the same result, another seed a different mask ({differ} of {n} positions)")
SHARE = t("осталось {kept} из {n} при p = {p}, ожидалось около {expected} (±{spread}).",
          "{kept} of {n} kept at p = {p}, expected about {expected} (±{spread}).")
SHARE_OK = t("осталось {kept} из {n} при p = {p}", "{kept} of {n} kept at p = {p}")
BLOCK = 1024


@minitriton.jit
def _rand_kernel(out_ptr, n, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.rand(seed, offs), mask=offs < n)


def random_numbers(n: int, seed: int, wrap: int | None = None) -> np.ndarray:
    """tl.rand(seed, offs) for offs = 0 … n − 1 (`wrap`: offs % wrap, what a kernel passing offsets within the
    block draws), drawn by minitriton's own tl.rand."""
    out = np.empty(n if wrap is None else min(n, wrap), np.float32)
    _rand_kernel[(-(-out.size // BLOCK),)](out, out.size, seed, BLOCK=BLOCK)
    return out if wrap is None else np.resize(out, n)


def run_dropout(mod, lang, x, p, seed, backend=Numpy):
    k = kernel(mod, "dropout_kernel", PARAMS, lang)
    n = x.size
    out = backend.put(filled(n, np.float32))
    rec = launch(k, (-(-n // BLOCK),), backend.put(x), out, n, p, seed, BLOCK=BLOCK)
    return backend.get(out), rec


def reference(x, p, seed, wrap=None):
    r = random_numbers(x.size, seed, wrap)
    return np.where(r > p, x.astype(np.float64) / (1 - p), 0.0)


def _values_test(n, p, seed):
    def test(mod, lang):
        x = randn(rng(seed), n) + 2.0            # no zeros: a dropped element is told apart from a kept one
        out, _ = run_dropout(mod, lang, x, p, seed)

        def per_block():
            return M.text(SAME_IN_EVERY_BLOCK, lang) if close(out, reference(x, p, seed, BLOCK), 1e-6, 1e-6) else None
        return compare("out", out, reference(x, p, seed), lang, atol=1e-6, rtol=1e-6,
                       diagnose=lambda got, exp: first_cause(per_block))
    return test


def test_seeds(mod, lang):
    n, p = 5000, 0.5
    x = randn(rng(124), n) + 2.0
    first, _ = run_dropout(mod, lang, x, p, 7)
    again, _ = run_dropout(mod, lang, x, p, 7)
    other, _ = run_dropout(mod, lang, x, p, 8)
    passed, message = compare("out", again, first.astype(np.float64), lang)
    if not passed:
        return passed, message
    differ = int(np.count_nonzero((first == 0) != (other == 0)))
    if differ == 0:
        return False, M.text(SEEDS_SAME, lang, a=7, b=8)
    return True, M.text(SEEDS_OK, lang, differ=M.num(differ, lang), n=M.num(n, lang))


def test_share(mod, lang):
    n, p = 100_000, 0.3
    x = randn(rng(125), n) + 2.0
    out, _ = run_dropout(mod, lang, x, p, 11)
    missing = unwritten_message("out", out, lang)
    if missing:
        return False, missing
    kept = int(np.count_nonzero(out))
    expected = n * (1 - p)
    spread = int(4 * np.sqrt(n * p * (1 - p)))
    if abs(kept - expected) > spread:
        return False, M.text(SHARE, lang, kept=M.num(kept, lang), n=M.num(n, lang), p=p, expected=M.num(int(expected), lang),
                             spread=M.num(spread, lang))
    return True, M.text(SHARE_OK, lang, kept=M.num(kept, lang), n=M.num(n, lang), p=p)


def test_traffic(mod, lang):
    n = 10_000
    _, rec = run_dropout(mod, lang, randn(rng(126), n), 0.2, 3)

    def share(p):
        return max(0, min(BLOCK, n - p[0] * BLOCK))
    return expect_traffic(rec, lang, [("x_ptr", "load", n, f"n = {M.num(n, lang)}", share),
                                      ("out_ptr", "store", n, f"n = {M.num(n, lang)}", share)])


TOL = t("atol = rtol = 1e-6", "atol = rtol = 1e-6")
TESTS = (
    Test("p_half", t(f"n = {M.num(10_000, 'ru')}, p = 0.5, seed = 1", f"n = {M.num(10_000, 'en')}, p = 0.5, seed = 1"), _values_test(10_000, 0.5, 1), TOL),
    Test("p_small", t("n = 4097, p = 0.1, seed = 2024", "n = 4097, p = 0.1, seed = 2024"),
         _values_test(4097, 0.1, 2024), TOL),
    Test("seeds", t("тот же seed — тот же ответ; другой — другая маска", "the same seed, the same result; "
                    "another one, another mask"), test_seeds),
    Test("share", t(f"доля оставшихся около 1 − p (n = {M.num(100_000, 'ru')})", f"the kept share is about 1 − p (n = {M.num(100_000, 'en')})"),
         test_share),
    Test("traffic", t("трафик: x прочитан и out записан по одному разу", "traffic: x read once, out written once"),
         test_traffic),
)


def demo(mod, lang, backend=Numpy):
    x = np.arange(1, 11, dtype=np.float32)
    out, _ = run_dropout(mod, lang, x, 0.5, 42, backend)
    print("dropout_kernel, x = 1 … 10, p = 0.5, seed = 42:", out, "—", verdict(out, reference(x, 0.5, 42), 1e-6, lang))
    return [("out", out)]


EXERCISE = Exercise(
    id="dropout",
    order=12,
    title=t("Dropout со случайными числами tl.rand", "Dropout with tl.rand"),
    statement=STATEMENT,
    starter=both(STARTER, COMMENTS),
    solution=both(SOLUTION, COMMENTS),
    hints=HINTS,
    tests=TESTS,
    demo=demo,
    kernels={"dropout_kernel": PARAMS},
    needs=("rand",),
)
