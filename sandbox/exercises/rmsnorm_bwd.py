"""RMSNorm backward: dx per row (a row reduction feeding an elementwise formula) and dw, a sum over all rows,
that is over many programs. Programs must not race on dw: each walks a chunk of rows, keeps its share of dw
in registers and writes one partial row of its own; the host adds the partial rows up."""
from __future__ import annotations

import numpy as np

from .. import messages as M
from ._base import Exercise, Numpy, Test, both, kernel, launch, next_pow2, randn, rng, t
from ._checks import close, compare, filled, verdict
from ._diagnose import first_cause
from ._narrow import BF16_RTOL, bf16, bf16_output, computed_narrow, values, widened
from ._traffic import expect_traffic

PARAMS = ("x_ptr", "w_ptr", "dy_ptr", "rstd_ptr", "dx_ptr", "dw_partial_ptr", "n_rows", "n_cols",
          "rows_per_program", "BLOCK")

COMMENTS = {
    "w": {"ru": "веса одни на все строки: читаем один раз на программу",
          "en": "the weights are shared by every row: read once per program"},
    "dw": {"ru": "доля dw этой программы, во FP32", "en": "this program's share of dw, in FP32"},
    "rows": {"ru": "строки этой программы: first … first + rows_per_program − 1",
             "en": "this program's rows: first … first + rows_per_program - 1"},
    "mask": {"ru": "последней программе строк может не хватить", "en": "the last program may run out of rows"},
    "row_todo": {"ru": "TODO: прочитайте строки x и dy (адрес строки row * n_cols) и rstd[row], всё во FP32;\n"
                       "            #   g = dy * w; dx = rstd * (g - x * rstd * rstd * c), где c = tl.sum(g * x, axis=0) / n_cols;\n"
                       "            #   запишите dx и добавьте вклад строки в dw: dy * x * rstd",
                 "en": "TODO: load the rows of x and dy (a row starts at row * n_cols) and rstd[row], all in FP32;\n"
                       "            #   g = dy * w; dx = rstd * (g - x * rstd * rstd * c), where c = tl.sum(g * x, axis=0) / n_cols;\n"
                       "            #   store dx and add the row's share to dw: dy * x * rstd"},
    "partial_todo": {"ru": "TODO: запишите dw в СВОЮ строку dw_partial (форма: число программ × n_cols)",
                     "en": "TODO: store dw to YOUR row of dw_partial (shape: number of programs x n_cols)"},
    "c": {"ru": "mean(g · x): делим на n_cols, не на BLOCK", "en": "mean(g · x): divide by n_cols, not by BLOCK"},
    "own": {"ru": "у каждой программы своя строка: гонки нет", "en": "each program has its own row: no race"},
}

HEAD = '''
import triton
import triton.language as tl


@triton.jit
def rmsnorm_bwd_kernel(x_ptr, w_ptr, dy_ptr, rstd_ptr, dx_ptr, dw_partial_ptr, n_rows, n_cols, rows_per_program,
                       BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)   # «w»
    dw = tl.zeros((BLOCK,), dtype=tl.float32)   # «dw»
    first = pid * rows_per_program
    for i in range(0, rows_per_program):
        row = first + i                         # «rows»
        if row < n_rows:                        # «mask»
'''

STARTER = HEAD + '''\
            pass  # «row_todo»
    # «partial_todo»
'''

SOLUTION = HEAD + '''\
            x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
            dy = tl.load(dy_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
            rstd = tl.load(rstd_ptr + row)
            g = dy * w
            c = tl.sum(g * x, axis=0) / n_cols  # «c»
            dx = rstd * (g - x * rstd * rstd * c)
            tl.store(dx_ptr + row * n_cols + cols, dx.to(dx_ptr.dtype.element_ty), mask=mask)
            dw += dy * x * rstd
    tl.store(dw_partial_ptr + pid * n_cols + cols, dw, mask=mask)   # «own»
'''

STATEMENT = t("""\
Обратный проход RMSNorm (`y = x · rstd · w`, `rstd = 1 / √(mean(x²) + ε)` — одно число на строку, его
сохранил прямой проход). С `g = dy ⊙ w` градиенты такие:

- **dx = rstd · (g − x · rstd² · mean(g ⊙ x))** — по строке, как прямой проход: одна редукция и формула;
- **dw = Σ по строкам dy ⊙ x · rstd** — сумма по **всем** строкам, то есть по многим программам.

Если каждая программа прибавит свой вклад прямо в общий `dw` обычным `tl.store`, программы будут писать одни и
те же элементы — это гонка: GPU выполняет программы в любом порядке, и останется чья-то одна запись.
`tl.atomic_add` сложил бы вклады, но в случайном порядке (последние биты менялись бы от запуска к запуску).
Здесь путь без атомиков: программа `pid` обрабатывает `rows_per_program` строк подряд, копит свою долю `dw`
в регистрах и записывает её в **свою** строку буфера `dw_partial` (форма: число программ × `n_cols`); хост
потом складывает строки буфера.

```python
grid = (triton.cdiv(n_rows, rows_per_program),)
rmsnorm_bwd_kernel[grid](x, w, dy, rstd, dx, dw_partial, n_rows, n_cols, rows_per_program,
                         BLOCK=triton.next_power_of_2(n_cols))
dw = dw_partial.sum(axis=0)
```

Строки `x`, `dy`, `dx` лежат подряд (`row * n_cols`). Считайте во FP32. Допуск: dx — atol = rtol = 1e-5;
dw — atol = 1e-4, rtol = 1e-5 от точного ответа (в float64). Тесты: маленькая матрица, строки ширины 896,
число строк, не кратное `rows_per_program` (последней программе строк не хватает), bf16 (`x`, `w`, `dy` и `dx`
в bf16, как при обучении, `rstd` и `dw_partial` во FP32: в `dx`, посчитанном во FP32, одно округление — при
записи, отсюда rtol = 4e-3) и трафик: `x` и `dy` прочитаны по одному разу, `w` — один раз на программу,
`dx` записан один раз, `dw_partial` — по строке на программу.
""", """\
The RMSNorm backward pass (`y = x · rstd · w`, with `rstd = 1 / √(mean(x²) + ε)` one number per row, saved
by the forward pass). With `g = dy ⊙ w` the gradients are

- **dx = rstd · (g − x · rstd² · mean(g ⊙ x))**, per row like the forward: one reduction and a formula;
- **dw = the sum over rows of dy ⊙ x · rstd**, a sum over **all** rows, that is over many programs.

If each program added its share straight into one shared `dw` with a plain `tl.store`, the programs would
write the same elements: a race. A GPU runs programs in any order, and one program's write would stay.
`tl.atomic_add` would add the shares up, but in a random order (the last bits would change from run to run).
The way here has no atomics: program `pid` handles `rows_per_program` consecutive rows, keeps its share of
`dw` in registers and stores it to **its own** row of a buffer `dw_partial` (shape: number of programs x
`n_cols`); the host then adds the buffer's rows up.

```python
grid = (triton.cdiv(n_rows, rows_per_program),)
rmsnorm_bwd_kernel[grid](x, w, dy, rstd, dx, dw_partial, n_rows, n_cols, rows_per_program,
                         BLOCK=triton.next_power_of_2(n_cols))
dw = dw_partial.sum(axis=0)
```

The rows of `x`, `dy`, `dx` are contiguous (`row * n_cols`). Compute in FP32. Tolerance: dx within
atol = rtol = 1e-5, dw within atol = 1e-4, rtol = 1e-5 of the exact answer (float64). The tests: a small
matrix, rows 896 wide, a number of rows that is not a multiple of `rows_per_program` (the last program runs
short), bf16 (`x`, `w`, `dy` and `dx` in bf16 as in training, `rstd` and `dw_partial` in FP32: computed in
FP32, `dx` is rounded only by the store, hence rtol = 4e-3), and traffic: `x` and `dy` read once, `w` once per
program, `dx` written once, `dw_partial` one row per program.
""")

HINTS = (
    t("Строка: `x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)`, так же `dy`; "
      "`rstd = tl.load(rstd_ptr + row)` — одно число.",
      "A row: `x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)`, `dy` the same way; "
      "`rstd = tl.load(rstd_ptr + row)`, one number."),
    t("Формула: `g = dy * w`, `c = tl.sum(g * x, axis=0) / n_cols`, `dx = rstd * (g - x * rstd * rstd * c)`; "
      "запись `tl.store(dx_ptr + row * n_cols + cols, dx, mask=mask)`.",
      "The formula: `g = dy * w`, `c = tl.sum(g * x, axis=0) / n_cols`, `dx = rstd * (g - x * rstd * rstd * c)`; "
      "store with `tl.store(dx_ptr + row * n_cols + cols, dx, mask=mask)`."),
    t("dw: в цикле `dw += dy * x * rstd`, после цикла — в свою строку: "
      "`tl.store(dw_partial_ptr + pid * n_cols + cols, dw, mask=mask)`. Без `pid * n_cols` все "
      "программы пишут в строку 0 — это гонка.",
      "dw: inside the loop `dw += dy * x * rstd`, after it into your own row: "
      "`tl.store(dw_partial_ptr + pid * n_cols + cols, dw, mask=mask)`. Without `pid * n_cols` every "
      "program writes row 0: a race."),
)


def forward_rstd(x, eps=1e-6):
    x64 = x.astype(np.float64)
    return (1.0 / np.sqrt((x64 * x64).mean(axis=1) + eps)).astype(np.float32)


def reference(x, w, dy, rstd, divide_by=None):
    """float64 dx and dw from the saved rstd; `divide_by` replaces n_cols in mean(g·x) (a known mistake)."""
    x, w, dy, r = (a.astype(np.float64) for a in (x, w, dy, rstd))
    r = r[:, None]
    g = dy * w[None, :]
    c = (g * x).sum(axis=1, keepdims=True) / (divide_by or x.shape[1])
    return r * (g - x * r * r * c), (dy * x * r).sum(axis=0)


def _inputs(seed, rows, cols):
    g = rng(seed)
    x, w, dy = randn(g, (rows, cols)), randn(g, cols), randn(g, (rows, cols))
    return x, w, dy, forward_rstd(x)


def run_bwd(mod, lang, x, w, dy, rstd, rows_per_program, backend=Numpy):
    k = kernel(mod, "rmsnorm_bwd_kernel", PARAMS, lang)
    rows, cols = x.shape
    grid = -(-rows // rows_per_program)
    dx = backend.put(filled(x.shape, np.float32))
    partial = backend.put(filled((grid, cols), np.float32))
    rec = launch(k, (grid,), backend.put(x), backend.put(w), backend.put(dy), backend.put(rstd), dx, partial,
                 rows, cols, rows_per_program, BLOCK=next_pow2(cols))
    return backend.get(dx), backend.get(partial), rec


def _values_test(rows, cols, per_program, seed):
    def test(mod, lang):
        x, w, dy, rstd = _inputs(seed, rows, cols)
        dx, partial, _ = run_bwd(mod, lang, x, w, dy, rstd, per_program)
        ref_dx, ref_dw = reference(x, w, dy, rstd)
        block = next_pow2(cols)

        def block_mean(got, exp):
            if block != cols and close(got, reference(x, w, dy, rstd, divide_by=block)[0]):
                return M.say("diag_block_mean", lang, block=block, n_cols=cols)
            return None
        ok, message = compare("dx", dx, ref_dx, lang, atol=1e-5, rtol=1e-5,
                              diagnose=lambda g, e: first_cause(lambda: block_mean(g, e)))
        if not ok:
            return ok, message
        ok_p, message_p = compare("dw_partial", partial, _partial_ref(x, dy, rstd, per_program), lang,
                                  atol=1e-4, rtol=1e-5)
        if not ok_p:
            return ok_p, message_p
        ok_w, message_w = compare("dw", partial.astype(np.float64).sum(axis=0), ref_dw, lang, atol=1e-4, rtol=1e-5)
        return (True, f"dx: {message}; dw: {message_w}") if ok_w else (False, message_w)
    return test


def _partial_ref(x, dy, rstd, per_program):
    """Each program's share of dw: the sum of dy·x·rstd over its rows."""
    rows = x.shape[0]
    share = dy.astype(np.float64) * x * rstd.astype(np.float64)[:, None]
    return np.stack([share[p:p + per_program].sum(axis=0) for p in range(0, rows, per_program)])


def test_bf16(mod, lang):
    """x, w, dy and dx in bf16 as in training (rstd and dw_partial stay FP32): computed in FP32 only the store
    of dx rounds; computed in bf16 the products dy·x lose the digits dw sums."""
    rows, cols, per = 24, 300, 8
    g = rng(94)
    x, w, dy = bf16(randn(g, (rows, cols))), bf16(randn(g, cols)), bf16(randn(g, (rows, cols)))
    rstd = forward_rstd(values(x))
    ref_dx, _ = reference(values(x), values(w), values(dy), rstd)
    ref_partial = _partial_ref(values(x), values(dy), rstd, per)
    k = kernel(mod, "rmsnorm_bwd_kernel", PARAMS, lang)
    grid = -(-rows // per)

    def run(x_in, w_in, dy_in, diagnose=None):
        dx, partial = bf16_output((rows, cols)), filled((grid, cols), np.float32)
        launch(k, (grid,), x_in, w_in, dy_in, rstd, dx, partial, rows, cols, per, BLOCK=next_pow2(cols))
        ok, message = compare("dx", widened(dx), ref_dx, lang, atol=1e-5, rtol=BF16_RTOL, diagnose=diagnose)
        if not ok:
            return ok, message
        ok_p, message_p = compare("dw_partial", partial, ref_partial, lang, atol=1e-4, rtol=1e-5, diagnose=diagnose)
        return (True, f"dx: {message}; dw_partial: {message_p}") if ok_p else (False, message_p)
    narrow = computed_narrow(lambda: run(values(x), values(w), values(dy)), lang)
    return run(x, w, dy, lambda got, exp: first_cause(narrow))


def test_traffic(mod, lang):
    rows, cols, per = 50, 300, 8
    x, w, dy, rstd = _inputs(95, rows, cols)
    _, _, rec = run_bwd(mod, lang, x, w, dy, rstd, per)
    grid = -(-rows // per)

    def mine(p):
        return max(0, min(per, rows - p[0] * per)) * cols
    rows_text = f"n_rows·n_cols = {rows}·{cols}"
    return expect_traffic(rec, lang, [
        ("x_ptr", "load", rows * cols, rows_text, mine),
        ("dy_ptr", "load", rows * cols, rows_text, mine),
        ("w_ptr", "load", grid * cols, f"programs·n_cols = {grid}·{cols}", lambda p: cols),
        ("rstd_ptr", "load", rows, f"n_rows = {rows}", lambda p: mine(p) // cols),
        ("dx_ptr", "store", rows * cols, rows_text, mine),
        ("dw_partial_ptr", "store", grid * cols, f"programs·n_cols = {grid}·{cols}", lambda p: cols),
    ])


DX = t("dx: atol = rtol = 1e-5; dw: atol = 1e-4, rtol = 1e-5", "dx: atol = rtol = 1e-5; dw: atol = 1e-4, rtol = 1e-5")
TESTS = (
    Test("small", t("4 × 8, по 2 строки на программу", "4 x 8, 2 rows per program"), _values_test(4, 8, 2, 91), DX),
    Test("wide", t("64 × 896, по 8 строк на программу", "64 x 896, 8 rows per program"),
         _values_test(64, 896, 8, 92), DX),
    Test("uneven", t("50 строк по 8 на программу: последней достаются 2", "50 rows, 8 per program: the last gets 2"),
         _values_test(50, 300, 8, 93), DX),
    Test("bf16", t("x, w, dy и dx в bf16, как при обучении: 24 × 300", "x, w, dy and dx in bf16, as in training: 24 x 300"),
         test_bf16, t("dx: atol = 1e-5, rtol = 4e-3 (запись в bf16); dw_partial: atol = 1e-4, rtol = 1e-5",
                      "dx: atol = 1e-5, rtol = 4e-3 (the bf16 store); dw_partial: atol = 1e-4, rtol = 1e-5")),
    Test("traffic", t("трафик: x и dy по разу, w — раз на программу", "traffic: x and dy once, w once per program"),
         test_traffic),
)


def demo(mod, lang, backend=Numpy):
    x, w, dy, rstd = _inputs(9, 10, 40)
    dx, partial, _ = run_bwd(mod, lang, x, w, dy, rstd, 4, backend)
    ref_dx, ref_dw = reference(x, w, dy, rstd)
    print("rmsnorm_bwd_kernel, 10 x 40, 4 rows per program, grid (3,):")
    print("  dx —", verdict(dx, ref_dx, 1e-5, lang))
    print("  dw = dw_partial.sum(axis=0) —", verdict(partial.sum(axis=0), ref_dw, 1e-4, lang))
    return [("dx", dx), ("dw_partial", partial)]


EXERCISE = Exercise(
    id="rmsnorm_bwd",
    order=9,
    title=t("RMSNorm: обратный проход без гонок", "RMSNorm backward, race-free"),
    statement=STATEMENT,
    starter=both(STARTER, COMMENTS),
    solution=both(SOLUTION, COMMENTS),
    hints=HINTS,
    tests=TESTS,
    demo=demo,
    kernels={"rmsnorm_bwd_kernel": PARAMS},
)
