"""The ru/en texts of the sandbox that are not an exercise's own: check results, error explanations, traffic,
the bridge's and the lab server's answers. Formatted by sandbox.messages (`say`); fields in braces.

A text that may be followed by another sentence either ends with its period or goes through
`messages.sentences`, which adds one.
"""
from __future__ import annotations

# The forms of a noun after a number: Russian one / few / many (1 элемент, 2 элемента, 5 элементов), English
# singular / plural.
NOUNS = {
    "element": {"ru": ("элемент", "элемента", "элементов"), "en": ("element", "elements")},
    "value": {"ru": ("значение", "значения", "значений"), "en": ("value", "values")},
    "program": {"ru": ("программа", "программы", "программ"), "en": ("program", "programs")},
    "row": {"ru": ("строка", "строки", "строк"), "en": ("row", "rows")},
    "nonfinite": {"ru": ("значение NaN/inf", "значения NaN/inf", "значений NaN/inf"),
                  "en": ("NaN/inf value", "NaN/inf values")},
}

CATALOGUE: dict[str, dict[str, str]] = {
    # ---- verdicts
    "ok_exact": {"ru": "совпадает точно", "en": "matches exactly"},
    "ok_close": {"ru": "совпадает: наибольшая ошибка {err} (допуск {tol})",
                 "en": "matches: max abs error {err} (tolerance {tol})"},
    "ok_traffic": {"ru": "трафик как надо: {details}", "en": "traffic as expected: {details}"},
    "ok_addresses": {"ru": "каждая программа читает и пишет ровно свой тайл: {details}",
                     "en": "each program reads and writes exactly its own tiles: {details}"},
    "ok_property": {"ru": "выполняется: {details}", "en": "holds: {details}"},
    "tolerance": {"ru": "atol = {atol}, rtol = {rtol}", "en": "atol = {atol}, rtol = {rtol}"},
    "tolerance_exact": {"ru": "сравнение точное", "en": "compared exactly"},
    "tolerance_tf32": {"ru": "{atol} + 2⁻⁹·Σ|a·b| — допускает TF32", "en": "{atol} + 2⁻⁹·Σ|a·b|, admits TF32"},
    "ranges_more": {"ru": "… (всего {n})", "en": "… ({n} in all)"},
    # ---- values
    "nothing_written": {"ru": "ядро ничего не записало в `{tensor}` (там всё ещё TODO?)",
                        "en": "the kernel wrote nothing to `{tensor}` (is it still a TODO?)"},
    "nothing_written_plain": {"ru": "ядро ничего не записало в `{tensor}`.", "en": "the kernel wrote nothing to `{tensor}`."},
    "never_written": {"ru": "{tensor}[{ranges}] не записала ни одна программа.",
                      "en": "{tensor}[{ranges}] were never written."},
    "never_written_rows": {"ru": "строки {ranges} тензора `{tensor}` не записала ни одна программа.",
                           "en": "rows {ranges} of `{tensor}` were never written."},
    "never_written_some": {"ru": "{count} из {total} элементов `{tensor}` не записаны (первый: {where}).",
                           "en": "{count} of {total} elements of `{tensor}` were never written (first at {where})."},
    "nonfinite": {"ru": "в `{tensor}` {count} (первое: {where}, ожидалось {expected}, получено {got}).",
                  "en": "`{tensor}` has {count} (first at {where}: expected {expected}, got {got})."},
    "mismatch": {"ru": "{count} из {total} элементов `{tensor}` не совпадают ({tol}); наибольшая ошибка {err} "
                       "({where}: ожидалось {expected}, получено {got}).",
                 "en": "{count} of {total} elements of `{tensor}` differ ({tol}); max abs error {err} at {where} "
                       "(expected {expected}, got {got})."},
    "wrote_outside": {"ru": "программы записали в `{tensor}` вне строк: {count} за столбцом n_cols = {n_cols} "
                            "(первый: строка {row}, столбец {col}).",
                      "en": "programs wrote to `{tensor}` outside the rows: {count} beyond column n_cols = "
                            "{n_cols} (first at row {row}, col {col})."},
    "where_index": {"ru": "индекс {i}", "en": "index {i}"},
    "where_row_col": {"ru": "строка {r}, столбец {c}", "en": "row {r}, col {c}"},
    "where_bhtd": {"ru": "batch {b}, голова {h}, строка {t}, столбец {d}", "en": "batch {b}, head {h}, row {t}, col {d}"},
    "where_bht": {"ru": "batch {b}, голова {h}, строка {t}", "en": "batch {b}, head {h}, row {t}"},
    "where_nd": {"ru": "[{idx}]", "en": "[{idx}]"},
    # ---- traffic
    "traffic_load": {"ru": "`{tensor}`: прочитано {got}, а должно быть {expected} ({formula})",
                     "en": "`{tensor}`: loaded {got}, expected {expected} ({formula})"},
    "traffic_store": {"ru": "`{tensor}`: записано {got}, а должно быть {expected} ({formula})",
                      "en": "`{tensor}`: stored {got}, expected {expected} ({formula})"},
    "traffic_program": {"ru": "например, программа {program}: {got} вместо {expected}",
                        "en": "e.g. program {program}: {got} instead of {expected}"},
    "traffic_reread": {"ru": "`{tensor}` прочитан {ratio}×: слитое ядро читает каждый элемент один раз, держите строку "
                             "в регистрах.",
                       "en": "`{tensor}` was read {ratio}×: a fused kernel reads each element once, keep the row in "
                             "registers."},
    "traffic_summary_load": {"ru": "`{tensor}`: прочитано {got}", "en": "`{tensor}` loaded {got}"},
    "traffic_summary_store": {"ru": "`{tensor}`: записано {got}", "en": "`{tensor}` stored {got}"},
    "addr_extra": {"ru": "программа {program} {verb} элементы `{tensor}` вне своего тайла: {examples}. Её тайл — {tile}",
                   "en": "program {program} {verb} elements of `{tensor}` outside its tile: {examples}. Its tile is "
                         "{tile}"},
    "addr_strides": {"ru": "Проверьте шаги (stride) в адресе.", "en": "Check the strides in the address."},
    "addr_missing": {"ru": "программа {program} не {verb_neg} часть своего тайла `{tensor}`: {examples}. Её тайл — "
                           "{tile}",
                     "en": "program {program} {verb_neg} part of its tile of `{tensor}`: {examples}. Its tile is {tile}"},
    "addr_read": {"ru": "читает", "en": "reads"},
    "addr_wrote": {"ru": "пишет", "en": "writes"},
    "addr_not_read": {"ru": "прочитала", "en": "never reads"},
    "addr_not_wrote": {"ru": "записала", "en": "never writes"},
    # ---- errors raised by the learner's code (minitriton's own errors are its records' texts)
    "traceback_frame": {"ru": '  файл "{file}", строка {line}, в {name}', "en": '  File "{file}", line {line}, in {name}'},
    "host_error": {"ru": "{type} в строке {line}: {message}", "en": "{type} at line {line}: {message}"},
    "module_failed": {"ru": "код не загрузился, тесты не запускались: {message}",
                      "en": "the code did not load, so no test ran: {message}"},
    "missing_kernel": {"ru": "в коде нет `{name}`: имя ядра и его параметры менять нельзя, тесты запускают "
                             "{name}({params})",
                       "en": "there is no `{name}` in your code: keep the kernel's name and parameters, the tests "
                             "launch {name}({params})"},
    "missing_function": {"ru": "в коде нет функции `{name}`: тесты вызывают {name}({params})",
                         "en": "there is no function `{name}` in your code: the tests call {name}({params})"},
    "not_jit": {"ru": "`{name}` — не ядро: нужен декоратор @triton.jit",
                "en": "`{name}` is not a kernel: it needs the @triton.jit decorator"},
    "bad_signature": {"ru": "тесты запускают {name}({expected}), а ваше ядро принимает ({got}); верните параметры "
                            "как в заготовке",
                      "en": "the tests launch {name}({expected}) but your kernel takes ({got}); keep the parameters "
                            "of the starter"},
    "internal_error": {"ru": "внутренняя ошибка проверки (не ваша): {message}",
                       "en": "internal error in the checker (not yours): {message}"},
    # ---- causes detected behind a failure (each only when the check found it)
    "diag_unstable": {"ru": "tl.exp переполнился: вычтите максимум строки перед экспонентой, x - tl.max(x, axis=0).",
                      "en": "tl.exp overflowed: subtract the row max before the exponential, x - tl.max(x, axis=0)."},
    "diag_tf32": {"ru": "С точными произведениями FP32 ядро проходит этот тест, значит, ошибку дают tl.dot во TF32 "
                        "(по умолчанию): передайте input_precision=\"ieee\" в каждый tl.dot.",
                  "en": "With exact FP32 products the kernel passes this test, so the error comes from tl.dot in TF32 "
                        "(the default): pass input_precision=\"ieee\" to every tl.dot."},
    "diag_fp16": {"ru": "Квадраты во FP16 переполняются (300² > 65 504): переведите строку во FP32 через "
                        ".to(tl.float32) до возведения в квадрат.",
                  "en": "Squares overflow in FP16 (300² > 65 504): convert the row to FP32 with .to(tl.float32) "
                        "before squaring."},
    "diag_eps": {"ru": "Нулевая строка дала NaN: eps должен стоять под корнем, sqrt(mean(x²) + eps).",
                 "en": "A zero row gave NaN: eps belongs under the square root, sqrt(mean(x²) + eps)."},
    "diag_tail_inf": {"ru": "Хвост строки прочитан как -inf, и в сумму ⟨dy, y⟩ попало (-inf)·(-inf) = inf: здесь хвост "
                            "читают как 0 (other=0.0), он сумму не меняет.",
                      "en": "The row's tail was read as -inf, and (-inf)·(-inf) = inf entered the sum ⟨dy, y⟩: here the "
                            "tail is read as 0 (other=0.0), which leaves the sum alone."},
    "diag_tail_zero": {"ru": "Ответ совпадает с softmax, в который попали нули хвоста блока: хвост прочитан как 0.0, и "
                             "exp(0 - max) вошёл в сумму. Читайте его как -inf: other=-float(\"inf\").",
                       "en": "The result is the softmax of the row with the block's tail as zeros: the tail was read "
                             "as 0.0 and exp(0 - max) entered the sum. Read it as -inf: other=-float(\"inf\")."},
    "diag_max_zero": {"ru": "Максимум строки {row} получился 0, хотя все её элементы отрицательные: замаскированные "
                            "дорожки пришли как 0. Для максимума читайте их как -inf: other=-float(\"inf\").",
                      "en": "Row {row}'s max came out as 0 although all its elements are negative: the masked-off "
                            "lanes came in as 0. For a max read them as -inf: other=-float(\"inf\")."},
    "diag_block_mean": {"ru": "Ответ совпадает с делением суммы по строке на размер блока {block} вместо "
                              "n_cols = {n_cols}: хвост блока — не часть строки, делите на n_cols.",
                        "en": "The result matches dividing the row's sum by the block size {block} instead of "
                              "n_cols = {n_cols}: the block's tail is not part of the row, divide by n_cols."},
    "diag_stride": {"ru": "На тех же строках, уложенных подряд, ядро проходит, а здесь строки лежат через "
                          "stride = {stride} элементов при n_cols = {n_cols}: смещение строки — row * stride, "
                          "а не row * n_cols.",
                    "en": "On the same rows laid out back to back the kernel passes, but here rows are "
                          "stride = {stride} elements apart while n_cols = {n_cols}: a row's offset is "
                          "row * stride, not row * n_cols."},
    "diag_causal": {"ru": "Без причинной маски ядро на тех же данных проходит, значит, ошибка в ней: строке m виден "
                          "столбец n только при n ≤ m (offs_n[None, :] <= offs_m[:, None]).",
                    "en": "Without the causal mask the kernel passes on the same data, so the error is in that mask: "
                          "row m may only see columns n ≤ m (offs_n[None, :] <= offs_m[:, None])."},
    "diag_grid": {"ru": "Сетка из {grid} программ по {block} покрывает только {covered} из {n} элементов: программ "
                        "должно быть triton.cdiv(n, BLOCK) = {need}.",
                  "en": "A grid of {grid} programs of {block} covers only {covered} of {n} elements: the number of "
                        "programs must be triton.cdiv(n, BLOCK) = {need}."},
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
    "stopped_at": {"ru": "остановлено в строке {line}", "en": "stopped at line {line}"},
    "time_limit": {"ru": "остановлено: дольше {seconds} с", "en": "stopped after the {seconds} s limit"},
    "worker_failed": {"ru": "процесс Python упал: {message}", "en": "the Python process failed: {message}"},
    # ---- demo lines (Run)
    "demo_match": {"ru": "совпадает с NumPy", "en": "matches NumPy"},
    "demo_differs": {"ru": "НЕ совпадает с NumPy (наибольшая ошибка {err})", "en": "does NOT match NumPy (max abs error {err})"},
    "demo_unwritten": {"ru": "часть выхода не записана", "en": "part of the output was never written"},
}
