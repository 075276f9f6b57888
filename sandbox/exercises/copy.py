"""The first kernel: a masked copy. `tl.program_id`, `tl.arange`, a mask for the last block, and the host side:
a grid of triton.cdiv(n, BLOCK) programs. The learner writes both the kernel and the launch."""
from __future__ import annotations

import numpy as np

from .. import messages as M
from ._base import Exercise, Fail, Numpy, Test, both, call_host, function, kernel, randn, rng, t
from ._checks import compare, filled, unwritten, verdict
from ._traffic import expect_traffic

PARAMS = ("x_ptr", "out_ptr", "n", "BLOCK")
HOST = ("x", "out")

COMMENTS = {
    "pid": {"ru": "номер этой программы в сетке: 0, 1, 2, …", "en": "this program's number in the grid: 0, 1, 2, ..."},
    "offs_todo": {"ru": "TODO: offs — индексы BLOCK чисел этой программы: pid * BLOCK + tl.arange(0, BLOCK)",
                  "en": "TODO: offs, the indices of this program's BLOCK numbers: pid * BLOCK + tl.arange(0, BLOCK)"},
    "mask_todo": {"ru": "TODO: mask — какие из них существуют (offs < n)",
                  "en": "TODO: mask, which of them exist (offs < n)"},
    "copy_todo": {"ru": "TODO: прочитайте x_ptr + offs и запишите в out_ptr + offs, обе операции с маской",
                  "en": "TODO: load x_ptr + offs and store it to out_ptr + offs, both with the mask"},
    "host": {"ru": "Хост: запускает ядро. x и out — массивы NumPy одной длины (out тесты дают готовым)",
             "en": "Host side: launches the kernel. x and out are NumPy arrays of one length (the tests provide out)"},
    "grid_todo": {"ru": "TODO: grid = (triton.cdiv(n, BLOCK),) — столько программ, чтобы покрыть n чисел;\n"
                        "    #       затем copy_kernel[grid](x, out, n, BLOCK=BLOCK)",
                  "en": "TODO: grid = (triton.cdiv(n, BLOCK),), enough programs to cover n numbers;\n"
                        "    #       then copy_kernel[grid](x, out, n, BLOCK=BLOCK)"},
    "offs": {"ru": "индексы чисел этой программы", "en": "the indices of this program's numbers"},
    "mask": {"ru": "последний блок может выйти за конец", "en": "the last block may run past the end"},
    "grid": {"ru": "⌈n / BLOCK⌉ программ", "en": "⌈n / BLOCK⌉ programs"},
}

HEAD = '''
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)                      # «pid»
'''

STARTER = HEAD + '''\
    # «offs_todo»
    # «mask_todo»
    # «copy_todo»


# «host»
def copy(x, out):
    n = x.shape[0]
    # «grid_todo»
'''

SOLUTION = HEAD + '''\
    offs = pid * BLOCK + tl.arange(0, BLOCK)    # «offs»
    mask = offs < n                             # «mask»
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x, mask=mask)


# «host»
def copy(x, out):
    n = x.shape[0]
    grid = (triton.cdiv(n, BLOCK),)             # «grid»
    copy_kernel[grid](x, out, n, BLOCK=BLOCK)
'''

STATEMENT = t("""\
Первое ядро: скопировать массив `x` длины `n` в `out`.

Ядро Triton описывает работу **одной программы**. При запуске `copy_kernel[grid](...)` вы задаёте сетку —
сколько программ запустить, — и каждая узнаёт свой номер через `tl.program_id(0)`. Программа обрабатывает
блок из `BLOCK` чисел подряд: `tl.arange(0, BLOCK)` — вектор `0, 1, …, BLOCK − 1`, поэтому индексы её чисел —
`pid * BLOCK + tl.arange(0, BLOCK)`. `x_ptr` — адрес первого элемента `x`, и `tl.load(x_ptr + offs)` читает
сразу весь блок, а `tl.store(out_ptr + offs, values)` пишет его.

Если `n` не делится на `BLOCK`, последний блок выходит за конец массива. Маска — булев вектор той же длины:
`tl.load(..., mask=offs < n)` не читает, а `tl.store(..., mask=offs < n)` не пишет там, где она ложна.
Без маски на GPU это чтение чужой памяти или падение с illegal memory access; здесь minitriton остановит
ядро и назовёт программу, смещения и строку.

Напишите ядро и функцию `copy(x, out)`, которая его запускает: сетка из `triton.cdiv(n, BLOCK)` программ
(деление с округлением вверх), `BLOCK = 1024`. Тесты вызывают `copy(x, out)` с `out`, заполненным особым
NaN, — так видно, какие элементы не записал никто. Последний тест считает трафик: каждый элемент `x`
прочитан ровно один раз и каждый элемент `out` записан один раз.
""", """\
The first kernel: copy an array `x` of length `n` into `out`.

A Triton kernel describes the work of **one program**. Launching `copy_kernel[grid](...)` sets the grid, how
many programs run, and each learns its number from `tl.program_id(0)`. A program handles a block of `BLOCK`
consecutive numbers: `tl.arange(0, BLOCK)` is the vector `0, 1, ..., BLOCK - 1`, so its numbers' indices are
`pid * BLOCK + tl.arange(0, BLOCK)`. `x_ptr` is the address of `x`'s first element, and
`tl.load(x_ptr + offs)` reads the whole block at once, while `tl.store(out_ptr + offs, values)` writes it.

When `n` is not a multiple of `BLOCK`, the last block runs past the end of the array. A mask is a boolean
vector of the same length: `tl.load(..., mask=offs < n)` reads nothing and `tl.store(..., mask=offs < n)`
writes nothing where it is false. Without it a GPU reads someone else's memory or fails with an illegal
memory access; here minitriton stops the kernel and names the program, the offsets and the line.

Write the kernel and the function `copy(x, out)` that launches it: a grid of `triton.cdiv(n, BLOCK)`
programs (division rounded up), `BLOCK = 1024`. The tests call `copy(x, out)` with `out` filled with a
special NaN, which shows the elements nobody wrote. The last test counts traffic: each element of `x` read
exactly once and each element of `out` written once.
""")

HINTS = (
    t("Программа `pid` отвечает за числа `pid * BLOCK … pid * BLOCK + BLOCK − 1`: "
      "`offs = pid * BLOCK + tl.arange(0, BLOCK)`.",
      "Program `pid` handles the numbers `pid * BLOCK … pid * BLOCK + BLOCK - 1`: "
      "`offs = pid * BLOCK + tl.arange(0, BLOCK)`."),
    t("Маска `mask = offs < n` нужна и чтению, и записи: `x = tl.load(x_ptr + offs, mask=mask)`, "
      "`tl.store(out_ptr + offs, x, mask=mask)`.",
      "The mask `mask = offs < n` is needed by the load and the store alike: `x = tl.load(x_ptr + offs, mask=mask)`, "
      "`tl.store(out_ptr + offs, x, mask=mask)`."),
    t(f"Сетка: при n = {M.num(98_432, 'ru')} и BLOCK = 1024 нужно 97 программ, а `n // BLOCK` даёт 96 — хвост из 128 чисел никто "
      "не скопирует. `grid = (triton.cdiv(n, BLOCK),)`, запуск `copy_kernel[grid](x, out, n, BLOCK=BLOCK)`.",
      f"The grid: n = {M.num(98_432, 'en')} with BLOCK = 1024 needs 97 programs, while `n // BLOCK` gives 96 and nobody copies "
      "the 128-number tail. `grid = (triton.cdiv(n, BLOCK),)`, launched as `copy_kernel[grid](x, out, n, BLOCK=BLOCK)`."),
)

NO_LAUNCH = t("copy(x, out) не запустила ни одного ядра: нужен copy_kernel[grid](x, out, n, BLOCK=BLOCK).",
              "copy(x, out) launched no kernel: it needs copy_kernel[grid](x, out, n, BLOCK=BLOCK).")
GRID_OK = t("сетка из {grid} программ = triton.cdiv({n}, {block})", "a grid of {grid} programs = triton.cdiv({n}, {block})")
GRID_BIG = t("сетка из {grid} программ, а нужно triton.cdiv({n}, {block}) = {need}: лишним программам нечего делать, "
             "но GPU всё равно их запускает.",
             "a grid of {grid} programs where triton.cdiv({n}, {block}) = {need} are needed: the extra programs "
             "have nothing to do, but a GPU launches them all the same.")


def run_copy(mod, lang, x, backend=Numpy):
    """copy(x, out) through the learner's host code; (out, launch records)."""
    kernel(mod, "copy_kernel", PARAMS, lang)
    fn = function(mod, "copy", HOST, lang)
    out = backend.put(filled(x.shape, x.dtype))
    _, records = call_host(fn, backend.put(x), out)
    return backend.get(out), records


def grid_cause(records, n, lang):
    """diag_grid when the launch's programs cover fewer than n elements."""
    def diagnose(got, exp):
        if not records:
            return None
        grid, block = records[-1]["grid"][0], records[-1]["constexprs"].get("BLOCK")
        if not isinstance(block, int) or grid * block >= n or unwritten(got)[:grid * block].any():
            return None
        return M.say("diag_grid", lang, grid=grid, block=block, covered=M.num(grid * block, lang), n=M.num(n, lang),
                     need=-(-n // block))
    return diagnose


def _copy_test(n, seed):
    def test(mod, lang):
        x = randn(rng(seed), n)
        out, records = run_copy(mod, lang, x)
        return compare("out", out, x, lang, diagnose=grid_cause(records, n, lang))
    return test


def test_grid(mod, lang):
    n = 98_432
    out, records = run_copy(mod, lang, randn(rng(44), n))
    if not records:
        raise Fail(M.text(NO_LAUNCH, lang))
    rec = records[-1]
    grid, block = rec["grid"][0], rec["constexprs"].get("BLOCK", 1024)
    need = -(-n // block)
    if grid == need:
        return True, M.text(GRID_OK, lang, grid=grid, n=M.num(n, lang), block=block)
    if grid < need:
        return False, M.say("diag_grid", lang, grid=grid, block=block, covered=M.num(grid * block, lang), n=M.num(n, lang),
                            need=need)
    return False, M.text(GRID_BIG, lang, grid=grid, n=M.num(n, lang), block=block, need=need)


def test_traffic(mod, lang):
    n = 10_000
    _, records = run_copy(mod, lang, randn(rng(45), n))
    if not records:
        raise Fail(M.text(NO_LAUNCH, lang))
    block = records[-1]["constexprs"].get("BLOCK", 1024)

    def share(p):
        return max(0, min(block, n - p[0] * block))
    return expect_traffic(records[-1], lang, [
        ("x_ptr", "load", n, f"n = {M.num(n, lang)}", share),
        ("out_ptr", "store", n, f"n = {M.num(n, lang)}", share),
    ])


EXACT = t("точно", "exact")
TESTS = (
    Test("whole_blocks", t("n = 4096: четыре целых блока", "n = 4096: four whole blocks"), _copy_test(4096, 41), EXACT),
    Test("tail", t(f"n = {M.num(98_432, 'ru')}: последний блок неполный", f"n = {M.num(98_432, 'en')}: the last block is partial"),
         _copy_test(98_432, 42), EXACT),
    Test("short", t("n = 5: меньше одного блока", "n = 5: less than one block"), _copy_test(5, 43), EXACT),
    Test("grid", t("сетка: ровно triton.cdiv(n, BLOCK) программ", "grid: exactly triton.cdiv(n, BLOCK) programs"),
         test_grid),
    Test("traffic", t("трафик: x прочитан и out записан по одному разу", "traffic: x read once, out written once"),
         test_traffic),
)


def demo(mod, lang, backend=Numpy):
    x = np.arange(10, dtype=np.float32)
    out, _ = run_copy(mod, lang, x, backend)
    print("copy, n = 10:", out, "—", verdict(out, x, 0.0, lang))
    x = randn(rng(3), 2500)
    big, _ = run_copy(mod, lang, x, backend)
    print("copy, n = 2500 (3 programs of 1024):", "—", verdict(big, x, 0.0, lang))
    return [("out (n = 10)", out), ("out (n = 2500)", big)]


EXERCISE = Exercise(
    id="copy",
    order=1,
    title=t("Первое ядро: копирование с маской", "First kernel: a masked copy"),
    statement=STATEMENT,
    starter=both(STARTER, COMMENTS),
    solution=both(SOLUTION, COMMENTS),
    hints=HINTS,
    tests=TESTS,
    demo=demo,
    kernels={"copy_kernel": PARAMS},
    functions={"copy": HOST},
)
