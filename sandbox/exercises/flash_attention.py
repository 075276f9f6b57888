"""The boss: FlashAttention forward with a causal mask and the logsumexp, graded by the lesson's test_flash.py
cases (T in {64, 100, 257}, causal or not, and the logsumexp test) on NumPy arrays, and by a traffic test:
with the causal mask, the K and V blocks right of the diagonal are never loaded.

As in the lesson's CPU run, the check is FP32 with atol = rtol = 1e-4, which needs exact FP32 products:
both `tl.dot` calls pass input_precision="ieee" (minitriton, like the GPU, defaults FP32 dots to TF32, whose
~1e-3 error the tolerance would reject; when a re-run with exact products passes, the failure says so).
"""
from __future__ import annotations

import math

import numpy as np

from .. import messages as M
from ._base import Exercise, Numpy, Test, both, kernel, launch, randn, rng, t
from ._checks import compare, filled, verdict
from ._diagnose import first_cause, ieee_dots, passes
from ._traffic import expect_traffic

PARAMS = ("q_ptr", "k_ptr", "v_ptr", "o_ptr", "l_ptr", "T", "scale", "stride_bh", "stride_t", "D", "BLOCK_M",
          "BLOCK_N", "CAUSAL")
TOL = 1e-4

COMMENTS = {
    "pid_m": {"ru": "какой блок запросов", "en": "which block of queries"},
    "bh": {"ru": "какая пара (пример батча, голова)", "en": "which (batch element, head) pair"},
    "base": {"ru": "начало этой пары в q, k, v и o", "en": "where this pair starts in q, k, v and o"},
    "q_todo": {"ru": "TODO: загрузите тайл Q (BLOCK_M × D): строки offs_m, маска offs_m < T",
               "en": "TODO: load the Q tile (BLOCK_M x D): rows offs_m, mask offs_m < T"},
    "state_todo": {"ru": "TODO: бегущий максимум m_i (-inf), бегущая сумма l_i (0) и накопитель acc (BLOCK_M × D), "
                         "всё во FP32",
                   "en": "TODO: the running max m_i (-inf), running sum l_i (0) and accumulator acc (BLOCK_M x D), "
                         "all FP32"},
    "loop_todo": {"ru": "TODO: цикл по блокам K и V по BLOCK_N строк (при CAUSAL — только до диагонали):\n"
                        "    #   s = tl.dot(q, tl.trans(k), input_precision=\"ieee\") * scale; столбцы за T и правее\n"
                        "    #   диагонали — в -inf; online softmax: новый максимум, пересчёт l_i и acc;\n"
                        "    #   acc += tl.dot(p, v, input_precision=\"ieee\")",
                  "en": "TODO: loop over the K and V blocks, BLOCK_N rows at a time (with CAUSAL, only up to the\n"
                        "    #   diagonal): s = tl.dot(q, tl.trans(k), input_precision=\"ieee\") * scale; columns past T\n"
                        "    #   or right of the diagonal become -inf; online softmax: new max, rescale l_i and acc;\n"
                        "    #   acc += tl.dot(p, v, input_precision=\"ieee\")"},
    "store_todo": {"ru": "TODO: запишите O = acc / l_i (строки < T) и L = m_i + log(l_i) в l_ptr + bh * T + offs_m",
                   "en": "TODO: store O = acc / l_i (rows < T) and L = m_i + log(l_i) to l_ptr + bh * T + offs_m"},
    "m_i": {"ru": "бегущий максимум строк", "en": "the rows' running max"},
    "l_i": {"ru": "бегущая сумма экспонент", "en": "the running sum of exponentials"},
    "acc": {"ru": "ненормированный выход", "en": "the output, not yet normalised"},
    "hi": {"ru": "блоки K правее диагонали не нужны", "en": "K blocks right of the diagonal are not needed"},
    "s": {"ru": "оценки блока (BLOCK_M × BLOCK_N) в точном FP32", "en": "the block's scores (BLOCK_M x BLOCK_N), exact FP32"},
    "online": {"ru": "online softmax: новый максимум пересчитывает старые суммы",
               "en": "online softmax: a new max rescales the old sums"},
    "lse": {"ru": "logsumexp — пригодится обратному проходу", "en": "the logsumexp, for the backward pass"},
    "host": {"ru": "Хост: как тесты запускают ядро (q, k, v — массивы NumPy формы (B, H, T, D) во FP32)",
             "en": "Host side: how the tests launch the kernel (q, k, v are NumPy arrays of shape (B, H, T, D), FP32)"},
    "grid": {"ru": "блоки запросов × (батч · головы)", "en": "query blocks x (batch * heads)"},
}

HEAD = '''
import math

import numpy as np
import triton
import triton.language as tl


@triton.jit
def flash_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, l_ptr, T, scale, stride_bh, stride_t,
                     D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    pid_m = tl.program_id(0)                    # «pid_m»
    bh = tl.program_id(1)                       # «bh»
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, D)
    base = bh * stride_bh                       # «base»
'''

HOST = '''

# «host»
def flash_attention(q, k, v, causal=True, BLOCK_M=64, BLOCK_N=64):
    B, H, T, D = q.shape
    q, k, v = (np.ascontiguousarray(t.reshape(B * H, T, D), dtype=np.float32) for t in (q, k, v))
    o = np.empty_like(q)
    L = np.empty((B * H, T), dtype=np.float32)
    grid = (triton.cdiv(T, BLOCK_M), B * H)     # «grid»
    flash_fwd_kernel[grid](q, k, v, o, L, T, 1.0 / math.sqrt(D), T * D, D,
                           D=D, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, CAUSAL=causal)
    return o.reshape(B, H, T, D), L.reshape(B, H, T)
'''

STARTER = HEAD + '''\
    # «q_todo»
    # «state_todo»
    # «loop_todo»
    # «store_todo»
''' + HOST

SOLUTION = HEAD + '''\
    q = tl.load(q_ptr + base + offs_m[:, None] * stride_t + offs_d[None, :], mask=offs_m[:, None] < T, other=0.0)
    m_i = tl.full((BLOCK_M,), -float("inf"), dtype=tl.float32)   # «m_i»
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)                 # «l_i»
    acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)               # «acc»
    if CAUSAL:
        hi = tl.minimum((pid_m + 1) * BLOCK_M, T)   # «hi»
    else:
        hi = T
    for start_n in range(0, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        kv_mask = offs_n[:, None] < T
        k = tl.load(k_ptr + base + offs_n[:, None] * stride_t + offs_d[None, :], mask=kv_mask, other=0.0)
        v = tl.load(v_ptr + base + offs_n[:, None] * stride_t + offs_d[None, :], mask=kv_mask, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale   # «s»
        valid = offs_n[None, :] < T
        if CAUSAL:
            valid = valid & (offs_n[None, :] <= offs_m[:, None])
        s = tl.where(valid, s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))   # «online»
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p, v, input_precision="ieee")
        m_i = m_new
    o = acc / l_i[:, None]
    tl.store(o_ptr + base + offs_m[:, None] * stride_t + offs_d[None, :], o, mask=offs_m[:, None] < T)
    tl.store(l_ptr + bh * T + offs_m, m_i + tl.log(l_i), mask=offs_m < T)   # «lse»
''' + HOST

STATEMENT = {
    "ru": """\
**Босс.** FlashAttention — внимание `softmax(Q·Kᵀ/√D)·V`, которое идёт по `K` и `V` блоками и никогда не
держит в памяти матрицу оценок `T × T`: softmax считается «онлайн» — с бегущим максимумом и бегущей суммой,
которые пересчитывают уже накопленное, когда приходит блок с бо́льшим максимумом. Напишите его прямой проход
ядром Triton (по мотивам задания 2 курса Stanford CS336). Сетка — `(⌈T / BLOCK_M⌉, B·H)`: программа `(pid_m, bh)` считает блок из `BLOCK_M` запросов одной
пары (пример батча, голова). Внутри — цикл по блокам `K` и `V` по `BLOCK_N` строк с online softmax:
бегущий максимум `m_i`, бегущая сумма `l_i`, накопитель `acc`, два `tl.dot`. При причинной маске
(`CAUSAL`) блоки правее диагонали пропускаются целиком, а внутри диагонального блока столбец `n` виден
строке `m` только при `n ≤ m`.

Ядро возвращает и выход `O = acc / l_i`, и logsumexp `L = m_i + log(l_i)` — его обратный проход
использует для пересчёта.

Данные: `q, k, v` формы `(B·H, T, D)` подряд в памяти (`stride_bh = T·D`, `stride_t = D`), `D` — степень
двойки от 16; `L` формы `(B·H, T)`. Функция `flash_attention` внизу заготовки показывает запуск; тесты
запускают ядро точно так же.

Тесты — те же случаи, что в `test_flash.py` урока: `T ∈ {64, 100, 257}` (100 и 257 не делятся на блок 64 —
проверка масок), с причинной маской и без, плюс тест logsumexp. Всё во FP32 с допуском урока для CPU:
atol = rtol = 1e-4. Такой точности нужны точные произведения FP32, поэтому передайте в **оба** `tl.dot`
`input_precision="ieee"`: по умолчанию `tl.dot` во FP32 считает в TF32, как тензорные ядра GPU, и ошибка
порядка 1e-3 тест не пройдёт.

Восьмой тест считает трафик при причинной маске (`T = 200`, блоки по 64): блоки `K` и `V` правее диагонали
не загружаются вовсе, поэтому программа `pid_m` читает только `min((pid_m + 1)·64, T)` строк `K` и `V`.

Уровень Strong — проходят тесты с `T = 64` (там маски не нужны); Boss — все восемь.
""",
    "en": """\
**Boss.** FlashAttention is attention, `softmax(Q·Kᵀ/√D)·V`, computed over blocks of `K` and `V` without ever
holding the `T × T` score matrix in memory: the softmax is "online", with a running max and a running sum that
rescale what was accumulated when a block with a larger max arrives. Write its forward pass as a Triton kernel
(after assignment 2 of Stanford's CS336). The grid is `(⌈T / BLOCK_M⌉, B·H)`: program `(pid_m, bh)` computes a block of `BLOCK_M`
queries of one (batch element, head) pair. Inside, a loop over the blocks of `K` and `V`, `BLOCK_N` rows at a
time, with an online softmax: a running max `m_i`, a running sum `l_i`, an accumulator `acc`, two `tl.dot`s.
With the causal mask (`CAUSAL`) the blocks right of the diagonal are skipped entirely, and inside the
diagonal block row `m` sees column `n` only when `n ≤ m`.

The kernel returns both the output `O = acc / l_i` and the logsumexp `L = m_i + log(l_i)`, which the
backward pass uses to recompute.

Data: `q, k, v` of shape `(B·H, T, D)`, contiguous (`stride_bh = T·D`, `stride_t = D`), `D` a power of two
from 16; `L` of shape `(B·H, T)`. The `flash_attention` function at the bottom of the starter shows the
launch; the tests launch the kernel exactly that way.

The tests are the cases of the lesson's `test_flash.py`: `T ∈ {64, 100, 257}` (100 and 257 are not
multiples of the 64-block, which tests the masks), causal or not, plus the logsumexp test. Everything is FP32
with the lesson's CPU tolerance, atol = rtol = 1e-4. That needs exact FP32 products, so pass
`input_precision="ieee"` to **both** `tl.dot` calls: by default an FP32 `tl.dot` computes in TF32, like a
GPU's tensor cores, and an error around 1e-3 fails the tests.

The eighth test counts traffic with the causal mask (`T = 200`, blocks of 64): the `K` and `V` blocks right of
the diagonal are never loaded, so program `pid_m` reads only `min((pid_m + 1)·64, T)` rows of `K` and `V`.

Level Strong: the `T = 64` tests pass (no masks needed there); Boss: all eight.
""",
}

HINTS = (
    {"ru": "Тайл Q: `q = tl.load(q_ptr + base + offs_m[:, None] * stride_t + offs_d[None, :], mask=offs_m[:, None] < T, "
           "other=0.0)`. Состояние: `m_i = tl.full((BLOCK_M,), -float(\"inf\"), dtype=tl.float32)`, `l_i = tl.zeros(...)`, "
           "`acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)`.",
     "en": "The Q tile: `q = tl.load(q_ptr + base + offs_m[:, None] * stride_t + offs_d[None, :], mask=offs_m[:, None] < T, "
           "other=0.0)`. State: `m_i = tl.full((BLOCK_M,), -float(\"inf\"), dtype=tl.float32)`, `l_i = tl.zeros(...)`, "
           "`acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)`."},
    {"ru": "Граница цикла: `hi = T`, а при `CAUSAL` — `tl.minimum((pid_m + 1) * BLOCK_M, T)`. Цикл "
           "`for start_n in range(0, hi, BLOCK_N)`; строки K и V — `offs_n = start_n + tl.arange(0, BLOCK_N)` "
           "с маской `offs_n[:, None] < T`.",
     "en": "The loop's bound: `hi = T`, or with `CAUSAL` `tl.minimum((pid_m + 1) * BLOCK_M, T)`. Loop "
           "`for start_n in range(0, hi, BLOCK_N)`; the K and V rows are `offs_n = start_n + tl.arange(0, BLOCK_N)` "
           "with the mask `offs_n[:, None] < T`."},
    {"ru": "Маска оценок: `valid = offs_n[None, :] < T`, при `CAUSAL` ещё `& (offs_n[None, :] <= offs_m[:, None])`; "
           "`s = tl.where(valid, s, -float(\"inf\"))`.",
     "en": "The scores' mask: `valid = offs_n[None, :] < T`, and with `CAUSAL` also `& (offs_n[None, :] <= offs_m[:, None])`; "
           "`s = tl.where(valid, s, -float(\"inf\"))`."},
    {"ru": "Шаг online softmax: новый максимум `m_new = tl.maximum(m_i, tl.max(s, axis=1))`, `p = tl.exp(s - m_new[:, None])`, "
           "поправка старых сумм `alpha = tl.exp(m_i - m_new)`, `l_i = l_i * alpha + tl.sum(p, axis=1)`, "
           "`acc = acc * alpha[:, None] + tl.dot(p, v, input_precision=\"ieee\")`, `m_i = m_new`.",
     "en": "Online softmax: `m_new = tl.maximum(m_i, tl.max(s, axis=1))`, `p = tl.exp(s - m_new[:, None])`, "
           "`alpha = tl.exp(m_i - m_new)`, `l_i = l_i * alpha + tl.sum(p, axis=1)`, "
           "`acc = acc * alpha[:, None] + tl.dot(p, v, input_precision=\"ieee\")`, `m_i = m_new`."},
)


# ---------------------------------------------------------------- launch and reference

def run_flash(mod, lang, q, k, v, causal, block_m=64, block_n=64, backend=Numpy):
    """Launch as the starter's flash_attention does; returns O (B, H, T, D) and L (B, H, T) as NumPy."""
    kern = kernel(mod, "flash_fwd_kernel", PARAMS, lang)
    b, h, t, d = q.shape
    q3, k3, v3 = (np.ascontiguousarray(x.reshape(b * h, t, d), dtype=np.float32) for x in (q, k, v))
    o = backend.put(filled((b * h, t, d), np.float32))
    lse = backend.put(filled((b * h, t), np.float32))
    launch(kern, (-(-t // block_m), b * h), backend.put(q3), backend.put(k3), backend.put(v3), o, lse, t,
           1.0 / math.sqrt(d), t * d, d, D=d, BLOCK_M=block_m, BLOCK_N=block_n, CAUSAL=causal)
    return backend.get(o).reshape(b, h, t, d), backend.get(lse).reshape(b, h, t)


def reference(q, k, v, causal):
    """float64 attention (what F.scaled_dot_product_attention computes) and the logsumexp of the scores."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    t, d = q.shape[-2:]
    s = np.einsum("bhtd,bhsd->bhts", q, k) / math.sqrt(d)
    if causal:
        s = np.where(np.tril(np.ones((t, t), dtype=bool)), s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    p = np.exp(s - m)
    l_sum = p.sum(axis=-1, keepdims=True)
    return np.einsum("bhts,bhsd->bhtd", p / l_sum, v), (m + np.log(l_sum))[..., 0]


def _inputs(seed, shape):
    g = rng(seed)
    return tuple(randn(g, shape) for _ in range(3))


def causes(mod, lang, rerun, causal):
    """The detected cause of a failed comparison: TF32 dots (the test passes with exact products), or the causal
    mask (the same data passes without it)."""
    def tf32():
        with ieee_dots():
            return M.say("diag_tf32", lang) if passes(lambda: rerun(causal)) else None

    def mask():
        return M.say("diag_causal", lang) if causal and passes(lambda: rerun(False)) else None

    def diagnose(got, exp):
        return first_cause(tf32, mask)
    return diagnose


def sdpa_test(t_, causal):
    def test(mod, lang):
        q, k, v = _inputs(100 + t_, (2, 3, t_, 64))

        def rerun(c, diagnose=None):
            o, _ = run_flash(mod, lang, q, k, v, c)
            ref, _ = reference(q, k, v, c)
            return compare("o", o, ref, lang, atol=TOL, rtol=TOL, style="bhtd", diagnose=diagnose)
        return rerun(causal, causes(mod, lang, rerun, causal))
    test.__name__ = f"test_matches_sdpa_T{t_}{'_causal' if causal else ''}"
    return test


def test_logsumexp(mod, lang):
    q, k, v = _inputs(1, (1, 2, 100, 32))

    def rerun(c, diagnose=None):
        _, lse = run_flash(mod, lang, q, k, v, c)
        _, ref = reference(q, k, v, c)
        return compare("L", lse, ref, lang, atol=TOL, rtol=TOL, style="bht", diagnose=diagnose)
    return rerun(True, causes(mod, lang, rerun, True))


def test_causal_skip(mod, lang):
    """Traffic with the causal mask: program pid_m loads K and V rows 0 … min((pid_m + 1)·BLOCK_M, T) − 1 only."""
    t_, d, block = 200, 16, 64
    q, k, v = _inputs(7, (1, 1, t_, d))
    kern = kernel(mod, "flash_fwd_kernel", PARAMS, lang)
    records = []

    def rerun(c, diagnose=None):
        o = filled((1, t_, d), np.float32)
        lse = filled((1, t_), np.float32)
        records.append(launch(kern, (-(-t_ // block), 1), q[0], k[0], v[0], o, lse, t_, 1.0 / math.sqrt(d), t_ * d,
                              d, D=d, BLOCK_M=block, BLOCK_N=block, CAUSAL=c))
        ref, _ = reference(q, k, v, c)
        return compare("o", o.reshape(1, 1, t_, d), ref, lang, atol=TOL, rtol=TOL, style="bhtd", diagnose=diagnose)
    passed, message = rerun(True, causes(mod, lang, rerun, True))
    if not passed:
        return passed, message
    seen = [min((p + 1) * block, t_) for p in range(-(-t_ // block))]
    formula = "Σ min((pid_m + 1)·BLOCK_M, T)·D = (" + " + ".join(map(str, seen)) + f")·{d}"
    rows = lambda p: min((p[0] + 1) * block, t_) * d   # noqa: E731
    return expect_traffic(records[0], lang, [
        ("k_ptr", "load", sum(seen) * d, formula, rows),
        ("v_ptr", "load", sum(seen) * d, formula, rows),
        ("q_ptr", "load", t_ * d, f"T·D = {t_}·{d}", lambda p: min(block, t_ - p[0] * block) * d),
        ("o_ptr", "store", t_ * d, f"T·D = {t_}·{d}", lambda p: min(block, t_ - p[0] * block) * d),
    ])


_TOL = t("atol = 1e-4, rtol = 1e-4", "atol = 1e-4, rtol = 1e-4")
TESTS = tuple(
    Test(f"sdpa_T{t_}{'_causal' if causal else ''}",
         t(f"как SDPA: T = {t_}{', причинная маска' if causal else ''}",
           f"matches SDPA: T = {t_}{', causal' if causal else ''}"),
         sdpa_test(t_, causal), _TOL, counters=False)
    for t_ in (64, 100, 257) for causal in (False, True)
) + (Test("logsumexp", t("logsumexp: 1 × 2 × 100 × 32, причинная маска", "logsumexp: 1 x 2 x 100 x 32, causal"),
          test_logsumexp, _TOL, counters=False),
     Test("causal_skip", t("трафик: блоки K и V правее диагонали не читаются (T = 200)",
                           "traffic: no K or V block right of the diagonal is read (T = 200)"), test_causal_skip))


def demo(mod, lang, backend=Numpy):
    q, k, v = _inputs(2, (1, 2, 100, 32))
    o, lse = run_flash(mod, lang, q, k, v, True, backend=backend)
    ref_o, ref_l = reference(q, k, v, True)
    print("flash_fwd_kernel, B = 1, H = 2, T = 100, D = 32, CAUSAL, grid (2, 2):")
    print("  O —", verdict(o, ref_o, TOL, lang, rtol=TOL))
    print("  L —", verdict(lse, ref_l, TOL, lang, rtol=TOL))
    return [("o", o), ("L", lse)]


EXERCISE = Exercise(
    id="flash_attention",
    order=13,
    title={"ru": "Босс: FlashAttention forward", "en": "Boss: FlashAttention forward"},
    statement=STATEMENT,
    starter=both(STARTER, COMMENTS),
    solution=both(SOLUTION, COMMENTS),
    hints=HINTS,
    tests=TESTS,
    demo=demo,
    kernels={"flash_fwd_kernel": PARAMS},
)
