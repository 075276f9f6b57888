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
    # ---- errors raised by the learner's code
    "oob": {"ru": "программа {program} {verb} смещения {offsets} {where} `{tensor}` (в нём {n}), строка {line}.",
            "en": "program {program} {verb} offsets {offsets} {where} `{tensor}` (n = {n}), line {line}."},
    "oob_load": {"ru": "читает", "en": "reads"},
    "oob_store": {"ru": "пишет", "en": "writes"},
    "oob_atomic": {"ru": "обновляет", "en": "updates"},
    "oob_past": {"ru": "за концом", "en": "past the end of"},
    "oob_before": {"ru": "перед началом", "en": "before the start of"},
    "fix_mask": {"ru": "Закройте хвост маской: mask={var} < {bound}.", "en": "Mask the tail: mask={var} < {bound}."},
    "fix_bound": {"ru": "Маска пропускает эти дорожки: проверьте её границу ({var} < {bound}) и шаги (stride) в "
                        "смещениях.",
                  "en": "The mask lets these lanes through: check its bound ({var} < {bound}) and the strides in the "
                        "offsets."},
    "fix_off_by_one": {"ru": "Маска {var} <= {bound} пропускает одну лишнюю дорожку: сравнивайте строго, {var} < {bound}.",
                       "en": "The mask {var} <= {bound} lets one lane too many through: compare strictly, "
                             "{var} < {bound}."},
    "fix_2d": {"ru": "Тайл двумерный, и за границу выходят {what}: маска должна закрывать эту ось, "
                     "mask={mask}.",
               "en": "The tile is 2-D and its {what} run past the end: the mask must cover that axis, "
                     "mask={mask}."},
    "fix_2d_bound": {"ru": "Тайл двумерный, маска есть по обеим осям, но пропускает эти дорожки: проверьте её границы "
                           "и шаги (stride) строк и столбцов в смещениях.",
                     "en": "The tile is 2-D and its mask covers both axes but lets these lanes through: check its "
                           "bounds and the row and column strides in the offsets."},
    "axis_rows": {"ru": "строки ({var}[:, None])", "en": "rows ({var}[:, None])"},
    "axis_cols": {"ru": "столбцы ({var}[None, :])", "en": "columns ({var}[None, :])"},
    "axis_word_rows": {"ru": "строки", "en": "rows"},
    "axis_word_cols": {"ru": "столбцы", "en": "columns"},
    "fix_axis": {"ru": "Маска проверяет {var} по другой оси: в ней {used}, и условие ложится на {mask_axis}, а в адресе "
                       "{var} нумерует {ptr_axis} ({right}). Пишите {right} < {bound}.",
                 "en": "The mask tests {var} along the other axis: it has {used}, which applies to the {mask_axis}, "
                       "while in the pointer {var} numbers the {ptr_axis} ({right}). Write {right} < {bound}."},
    "fix_same_stride": {"ru": "В адресе и строки ({row}[:, None]), и столбцы ({col}[None, :]) тайла умножаются на один и "
                              "тот же шаг {stride}, а у строк и столбцов шаги разные: {col} умножайте на {right}.",
                        "en": "In the address both the rows ({row}[:, None]) and the columns ({col}[None, :]) of the tile "
                              "are multiplied by the same stride {stride}, while rows and columns have different "
                              "strides: multiply {col} by {right}."},
    "own_stride": {"ru": "шаг своей оси", "en": "its own axis's stride"},
    "fix_broadcast": {"ru": "`{var}` загружен по индексам {idx}, а они нумеруют {axis} тайла ({idx_form} в адресах), но "
                            "используется как {used}, вдоль другой оси: пишите {right}.",
                      "en": "`{var}` is loaded at the indices {idx}, which number the tile's {axis} ({idx_form} in the "
                            "addresses), but it is used as {used}, along the other axis: write {right}."},
    "race": {"ru": "программы {me} и {them} обе пишут смещения {offsets} в `{tensor}` в одном запуске, строка {line}: "
                   "GPU выполняет программы в любом порядке, и останется любое из значений.",
             "en": "programs {me} and {them} both write offsets {offsets} of `{tensor}` in one launch, line {line}: "
                   "a GPU runs programs in any order, so either value may stay."},
    "race_fix": {"ru": "Дайте каждой программе свои элементы (проверьте смещения, например pid * BLOCK + "
                       "tl.arange(0, BLOCK)) или складывайте вклады через tl.atomic_add.",
                 "en": "Give each program its own elements (check the offsets, e.g. pid * BLOCK + tl.arange(0, BLOCK)), "
                       "or add the contributions with tl.atomic_add."},
    "race_fix_shared": {"ru": "Адрес записи не зависит от tl.program_id, поэтому все программы пишут в одни и те же "
                              "элементы: сдвиньте его на долю программы (например, + pid * n_cols) или складывайте "
                              "вклады через tl.atomic_add.",
                        "en": "The store's address does not depend on tl.program_id, so every program writes the same "
                              "elements: offset it by the program's share (e.g. + pid * n_cols), or add the "
                              "contributions with tl.atomic_add."},
    "race_fix_unmasked": {"ru": "У этого tl.store нет маски: дорожки за концом ({var} ≥ {bound}) пишут в элементы "
                                "соседней программы. Добавьте mask={var} < {bound}.",
                          "en": "This tl.store has no mask: the lanes past the end ({var} >= {bound}) write into the "
                                "next program's elements. Add mask={var} < {bound}."},
    "order_read": {"ru": "программа {me} читает смещения {offsets} `{tensor}`, которые в том же запуске {them}, "
                         "строка {line}: результат зависит от порядка программ, а GPU его не фиксирует.",
                   "en": "program {me} reads offsets {offsets} of `{tensor}` that {them} in the same launch, "
                         "line {line}: the result depends on the order of the programs, which a GPU does not fix."},
    "order_write": {"ru": "программа {me} пишет смещения {offsets} `{tensor}`, которые в том же запуске {them}, "
                          "строка {line}: результат зависит от порядка программ, а GPU его не фиксирует.",
                    "en": "program {me} writes offsets {offsets} of `{tensor}` that {them} in the same launch, "
                          "line {line}: the result depends on the order of the programs, which a GPU does not fix."},
    "order_reader_one": {"ru": "читает программа {p}", "en": "program {p} reads"},
    "order_reader_many": {"ru": "читают несколько других программ", "en": "several other programs read"},
    "order_writer_one": {"ru": "пишет программа {p}", "en": "program {p} writes"},
    "order_writer_many": {"ru": "пишут несколько других программ", "en": "several other programs write"},
    "order_fix": {"ru": "Читайте и пишите разные массивы или разбейте работу на два запуска.",
                  "en": "Read and write different arrays, or split the work into two launches."},
    "uninit": {"ru": "программа {me} читает смещения {offsets} `{tensor}`, куда ещё ничего не записано, строка {line}.",
               "en": "program {me} reads offsets {offsets} of `{tensor}`, which hold no value yet, line {line}."},
    "uninit_fix": {"ru": "Закройте чтение маской или сначала запишите эти элементы.",
                   "en": "Mask the load, or write these elements first."},
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
    "time_limit": {"ru": "остановлено: дольше {seconds} с", "en": "stopped after the {seconds} s limit"},
    "worker_failed": {"ru": "процесс Python упал: {message}", "en": "the Python process failed: {message}"},
    # ---- demo lines (Run)
    "demo_match": {"ru": "совпадает с NumPy", "en": "matches NumPy"},
    "demo_differs": {"ru": "НЕ совпадает с NumPy (наибольшая ошибка {err})", "en": "does NOT match NumPy (max abs error {err})"},
    "demo_unwritten": {"ru": "часть выхода не записана", "en": "part of the output was never written"},
}
