"""The ru/en catalogue of every text the sandbox shows: check results, error summaries, demo lines.

`say(key, lang, **fields)` formats one entry; Russian is the default and the fallback. Numbers go through
`num()` (digit groups with a narrow no-break space, "98 432", as Russian typography writes them) and
`ranges()` ("98 304…98 431, 99 000"), so messages read the same in both languages.
"""
from __future__ import annotations

LANGS = ("ru", "en")
NNBSP = "\u202f"   # narrow no-break space: the digit-group separator

CATALOGUE: dict[str, dict[str, str]] = {
    # ---- verdicts
    "ok_exact": {"ru": "совпадает точно", "en": "matches exactly"},
    "ok_close": {"ru": "совпадает: наибольшая ошибка {err} (допуск {tol})",
                 "en": "matches: max abs error {err} (tolerance {tol})"},
    "ok_traffic": {"ru": "трафик как надо: {details}", "en": "traffic as expected: {details}"},
    "ok_property": {"ru": "выполняется: {details}", "en": "holds: {details}"},
    "tolerance": {"ru": "atol = {atol}, rtol = {rtol}", "en": "atol = {atol}, rtol = {rtol}"},
    "tolerance_tf32": {"ru": "{atol} + 2⁻⁹·Σ|a·b| — допускает TF32", "en": "{atol} + 2⁻⁹·Σ|a·b|, admits TF32"},
    # ---- values
    "nothing_written": {"ru": "ядро ничего не записало в `{tensor}` (там всё ещё TODO?)",
                        "en": "the kernel wrote nothing to `{tensor}` (is it still a TODO?)"},
    "never_written": {"ru": "{tensor}[{ranges}] не записала ни одна программа",
                      "en": "{tensor}[{ranges}] were never written"},
    "never_written_rows": {"ru": "строки {ranges} тензора `{tensor}` не записала ни одна программа",
                           "en": "rows {ranges} of `{tensor}` were never written"},
    "never_written_some": {"ru": "{count} из {total} элементов `{tensor}` не записаны (первый: {where})",
                           "en": "{count} of {total} elements of `{tensor}` were never written (first at {where})"},
    "nonfinite": {"ru": "в `{tensor}` {count} значений NaN/inf (первое: {where}, ожидалось {expected}, получено {got})",
                  "en": "`{tensor}` has {count} NaN/inf values (first at {where}: expected {expected}, got {got})"},
    "mismatch": {"ru": "{count} из {total} элементов `{tensor}` не совпадают ({tol}); наибольшая ошибка {err} "
                       "({where}: ожидалось {expected}, получено {got})",
                 "en": "{count} of {total} elements of `{tensor}` differ ({tol}); max abs error {err} at {where} "
                       "(expected {expected}, got {got})"},
    "wrote_outside": {"ru": "программы записали в `{tensor}` вне строк: {count} элементов за столбцом n_cols = {n_cols} "
                            "(первый: строка {row}, столбец {col})",
                      "en": "programs wrote to `{tensor}` outside the rows: {count} elements beyond column n_cols = "
                            "{n_cols} (first at row {row}, col {col})"},
    "sum_not_zero": {"ru": "строка {row}: сумма dx = {value}, а должна быть 0 (выходы softmax в сумме дают 1, "
                           "поэтому градиент по входам в сумме даёт 0)",
                     "en": "row {row}: dx sums to {value}, not 0 (softmax's outputs sum to 1, so the gradient "
                           "with respect to its inputs sums to 0)"},
    "ok_sum_zero": {"ru": "каждая строка dx в сумме даёт 0 (наибольшая |сумма| {value})",
                    "en": "every row of dx sums to 0 (largest |sum| {value})"},
    "where_index": {"ru": "индекс {i}", "en": "index {i}"},
    "where_row_col": {"ru": "строка {r}, столбец {c}", "en": "row {r}, col {c}"},
    "where_bhtd": {"ru": "batch {b}, голова {h}, строка {t}, столбец {d}", "en": "batch {b}, head {h}, row {t}, col {d}"},
    "where_bht": {"ru": "batch {b}, голова {h}, строка {t}", "en": "batch {b}, head {h}, row {t}"},
    "where_nd": {"ru": "[{idx}]", "en": "[{idx}]"},
    # ---- traffic
    "traffic_load": {"ru": "`{tensor}`: прочитано {got} элементов, а должно быть {expected} ({formula})",
                     "en": "`{tensor}`: loaded {got} elements, expected {expected} ({formula})"},
    "traffic_store": {"ru": "`{tensor}`: записано {got} элементов, а должно быть {expected} ({formula})",
                      "en": "`{tensor}`: stored {got} elements, expected {expected} ({formula})"},
    "traffic_program": {"ru": "например, программа {program}: {got} вместо {expected}",
                        "en": "e.g. program {program}: {got} instead of {expected}"},
    "traffic_reread": {"ru": "`{tensor}` прочитан {ratio}× — слитое ядро читает каждый элемент один раз: держите строку "
                             "в регистрах",
                       "en": "`{tensor}` was read {ratio}×: a fused kernel reads each element once, keep the row in "
                             "registers"},
    "traffic_summary": {"ru": "`{tensor}` {got} эл.", "en": "`{tensor}` {got} elements"},
    # ---- errors raised by the student's code
    "oob": {"ru": "программа {program} {verb} смещения {offsets} {where} `{tensor}` (в нём n = {n} элементов), строка "
                  "{line}. {fix}",
            "en": "program {program} {verb} offsets {offsets} {where} `{tensor}` (n = {n}), line {line}. {fix}"},
    "oob_load": {"ru": "читает", "en": "reads"},
    "oob_store": {"ru": "пишет", "en": "writes"},
    "oob_atomic": {"ru": "обновляет", "en": "updates"},
    "oob_past": {"ru": "за концом", "en": "past the end of"},
    "oob_before": {"ru": "перед началом", "en": "before the start of"},
    "fix_mask": {"ru": "Закройте хвост маской: mask=offs < n.", "en": "Mask the tail: mask=offs < n."},
    "fix_bound": {"ru": "Маска пропускает эти дорожки: проверьте её границу (offs < n) и шаги (stride) в смещениях.",
                  "en": "The mask lets these lanes through: check its bound (offs < n) and the strides in the offsets."},
    "compile_error": {"ru": "ошибка компиляции в ядре `{kernel}`, строка {line}: {message}",
                      "en": "compile error in kernel `{kernel}`, line {line}: {message}"},
    "kernel_error": {"ru": "{type} в ядре `{kernel}`, строка {line}, программа {program}: {message}",
                     "en": "{type} in kernel `{kernel}`, line {line}, program {program}: {message}"},
    "host_error": {"ru": "{type} в строке {line}: {message}", "en": "{type} at line {line}: {message}"},
    "error_plain": {"ru": "{type}: {message}", "en": "{type}: {message}"},
    "module_failed": {"ru": "код не загрузился, тесты не запускались: {message}",
                      "en": "the code did not load, so no test ran: {message}"},
    "missing_kernel": {"ru": "в коде нет `{name}`: имя ядра и его параметры менять нельзя, тесты запускают "
                             "{name}({params})",
                       "en": "there is no `{name}` in your code: keep the kernel's name and parameters, the tests "
                             "launch {name}({params})"},
    "not_jit": {"ru": "`{name}` — не ядро: нужен декоратор @triton.jit",
                "en": "`{name}` is not a kernel: it needs the @triton.jit decorator"},
    "bad_signature": {"ru": "тесты запускают {name}({expected}), а ваше ядро принимает ({got}); верните параметры "
                            "как в заготовке",
                      "en": "the tests launch {name}({expected}) but your kernel takes ({got}); keep the parameters "
                            "of the starter"},
    "internal_error": {"ru": "внутренняя ошибка проверки (не ваша): {message}",
                       "en": "internal error in the checker (not yours): {message}"},
    # ---- diagnoses appended to failures
    "diag_unstable": {"ru": "Похоже, tl.exp переполнился: вычтите максимум строки перед экспонентой.",
                      "en": "Looks like tl.exp overflowed: subtract the row max before the exponential."},
    "diag_tf32": {"ru": "Ошибка порядка TF32 (~1e-3): передайте input_precision=\"ieee\" в оба tl.dot.",
                  "en": "An error of TF32 size (~1e-3): pass input_precision=\"ieee\" to both tl.dot calls."},
    "diag_fp16": {"ru": "Квадраты в FP16 переполняются (300² > 65 504): переведите строку во FP32 через "
                        ".to(tl.float32) до возведения в квадрат.",
                  "en": "Squares overflow in FP16 (300² > 65 504): convert the row to FP32 with .to(tl.float32) "
                        "before squaring."},
    "diag_eps": {"ru": "Нулевая строка дала NaN: eps должен стоять под корнем, sqrt(mean(x²) + eps).",
                 "en": "A zero row gave NaN: eps belongs under the square root, sqrt(mean(x²) + eps)."},
    "diag_tail_inf": {"ru": "NaN в ответе: хвост строки здесь читают как 0 (other=0.0), а не как -inf — "
                            "иначе 0·(-inf) = NaN.",
                      "en": "NaN in the result: here the row's tail is read as 0 (other=0.0), not -inf, "
                            "or else 0·(-inf) = NaN."},
    "note_stride": {"ru": "В этом тесте строки лежат через stride = {stride} элементов, а n_cols = {n_cols}: "
                          "смещение строки — row * stride.",
                    "en": "In this test rows are stride = {stride} elements apart while n_cols = {n_cols}: "
                          "the row offset is row * stride."},
    "note_causal": {"ru": "Причинная маска: столбец n виден строке m, только если n ≤ m.",
                    "en": "Causal mask: row m may only see columns n ≤ m."},
    # ---- bridge and server
    "unknown_exercise": {"ru": "нет упражнения «{id}» (есть: {known})", "en": "no exercise '{id}' (known: {known})"},
    "unknown_op": {"ru": "неизвестная операция «{op}» (есть: {known})", "en": "unknown op '{op}' (known: {known})"},
    "bad_request": {"ru": "неверный запрос: {message}", "en": "bad request: {message}"},
    "bad_hint": {"ru": "подсказки {index} нет: их {total}", "en": "there is no hint {index}: there are {total}"},
    "no_launch": {"ru": "запуск {launch} не состоялся: демонстрация сделала {count}",
                  "en": "there is no launch {launch}: the demo made {count}"},
    "outside_grid": {"ru": "программы {program} нет в сетке {grid}", "en": "program {program} is outside the grid {grid}"},
    "stdout_cut": {"ru": "\n… (вывод обрезан на {n} символах)", "en": "\n… (output cut at {n} characters)"},
    "gpu_only_lab": {"ru": "запуск на GPU есть только в лабораторном режиме (python -m sandbox)",
                     "en": "running on the GPU needs lab mode (python -m sandbox)"},
    "stopped": {"ru": "остановлено", "en": "stopped"},
    "time_limit": {"ru": "остановлено: дольше {seconds} с", "en": "stopped after the {seconds} s limit"},
    "worker_failed": {"ru": "процесс Python упал: {message}", "en": "the Python process failed: {message}"},
    # ---- demo lines (Run)
    "demo_match": {"ru": "совпадает с NumPy", "en": "matches NumPy"},
    "demo_differs": {"ru": "НЕ совпадает с NumPy (наибольшая ошибка {err})", "en": "does NOT match NumPy (max abs error {err})"},
    "demo_unwritten": {"ru": "часть выхода не записана", "en": "part of the output was never written"},
}


def say(key: str, lang: str = "ru", **fields) -> str:
    """The catalogue entry `key` in `lang` (Russian if missing), formatted with `fields`."""
    entry = CATALOGUE[key]
    text = entry.get(lang) or entry["ru"]
    return text.format(**fields) if fields else text


def lang_of(request: dict) -> str:
    """The request's language: "ru" (default) or "en"."""
    lang = request.get("lang", "ru") if isinstance(request, dict) else "ru"
    return lang if lang in LANGS else "ru"


def num(n) -> str:
    """An integer with digit groups: 98432 -> '98 432' (narrow no-break spaces)."""
    n = int(n)
    sign = "-" if n < 0 else ""
    s = str(abs(n))
    groups = []
    while len(s) > 3:
        groups.insert(0, s[-3:])
        s = s[:-3]
    groups.insert(0, s)
    return sign + NNBSP.join(groups) if abs(n) >= 10000 else sign + "".join(groups)


def ranges(values, limit: int = 4) -> str:
    """Sorted integers as compact ranges: [1, 2, 3, 7] -> '1…3, 7'; long lists end with a count."""
    values = sorted(set(int(v) for v in values))
    parts = []
    i = 0
    while i < len(values) and len(parts) < limit:
        j = i
        while j + 1 < len(values) and values[j + 1] == values[j] + 1:
            j += 1
        parts.append(num(values[i]) if i == j else f"{num(values[i])}…{num(values[j])}")
        i = j + 1
    if i < len(values):
        parts.append(f"… ({num(len(values))})")
    return ", ".join(parts)


def real(x) -> str:
    """A float as the messages show it: 0.125, 3.2e-01 for errors, nan, inf."""
    x = float(x)
    if x != x or x in (float("inf"), float("-inf")):
        return str(x)
    if x == 0 or 1e-3 <= abs(x) < 1e5:
        return f"{x:.4g}"
    return f"{x:.2e}"


def err(x) -> str:
    """An error size: 3.2e-01."""
    x = float(x)
    return f"{x:.1e}" if x == x else "nan"


def program(p) -> str:
    """A program id as the messages show it: 96 for a 1-D grid, (1, 5) otherwise."""
    if p is None:
        return "?"
    p = tuple(int(v) for v in p)
    return str(p[0]) if len(p) == 1 else "(" + ", ".join(str(v) for v in p) + ")"
