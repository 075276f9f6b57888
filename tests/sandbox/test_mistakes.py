"""Every common mistake of the course, made on purpose in a reference solution, gets a message that names the
cause and the fix in kernel terms, in both languages: the exact texts are pinned here. A cause is only named
when the check detects it (see test_hints_only_when_detected.py). Digit groups are compared as plain spaces;
`{line}` is the line of the mutated statement."""
from __future__ import annotations

import pytest
from course_helpers import HAS_RAND, NO_RAND, by_id, check, english_sentences, line_of, plain, solution

from minitriton.diagnostics import Edit

# name -> (exercise, the substitutions that make the mistake, a text on the failing line or None)
MISTAKES = {
    'forgotten_mask': ('copy', (
        ('x = tl.load(x_ptr + offs, mask=mask)', 'x = tl.load(x_ptr + offs)'),
    ), 'x = tl.load('),
    'mask_off_by_one': ('copy', (
        ('mask = offs < n ', 'mask = offs <= n '),
    ), 'x = tl.load('),
    'grid_off_by_one': ('copy', (
        ('grid = (triton.cdiv(n, BLOCK),)', 'grid = (n // BLOCK,)'),
    ), None),
    'grid_one_too_many': ('copy', (
        ('grid = (triton.cdiv(n, BLOCK),)', 'grid = (triton.cdiv(n, BLOCK) + 1,)'),
    ), None),
    'ignored_column_stride': ('strided_copy', (
        ('x_ptr + row * stride_r + cols * stride_c', 'x_ptr + row * stride_r + cols'),
    ), None),
    'row_step_n_cols': ('strided_copy', (
        ('x_ptr + row * stride_r + cols * stride_c', 'x_ptr + row * n_cols + cols * stride_c'),
    ), None),
    'mask_wrong_axis': ('transpose', (
        ('mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)',
         'mask = (offs_m[None, :] < M) & (offs_n[None, :] < N)'),
    ), 'mask = '),
    'mask_one_axis': ('transpose', (
        ('mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)', 'mask = offs_m[:, None] < M'),
    ), 'tile = tl.load('),
    'broadcast_swapped': ('outer', (
        ('tile = x[:, None] * y[None, :] + b[None, :]', 'tile = x[None, :] * y[:, None] + b[:, None]'),
    ), 'tile = '),
    'max_without_minus_inf': ('row_stats', (
        (', other=-float("inf"))', ')'),
    ), None),
    'softmax_tail_as_zero': ('practice', (
        ('other=-float("inf")', 'other=0.0'),
    ), None),
    'softmax_without_max': ('practice', (
        ('x = x - tl.max(x, axis=0)', 'x = x'),
    ), None),
    'matmul_b_row_stride': ('practice', (
        ('b_ptr + ks[:, None] * N + offs_n[None, :],\n', 'b_ptr + ks[:, None] * K + offs_n[None, :],\n'),
    ), None),
    'backward_tail_minus_inf': ('softmax_bwd', (
        ('other=0.0', 'other=-float("inf")', 2),
    ), None),
    'race_shared_offsets': ('softmax_bwd', (
        ('tl.store(dx_ptr + row * stride + cols,', 'tl.store(dx_ptr + cols,'),
    ), 'tl.store('),
    'rmsnorm_block_mean': ('rmsnorm', (
        ('/ n_cols + eps', '/ BLOCK_SIZE + eps'),
    ), None),
    'rmsnorm_row_step': ('rmsnorm', (
        ('row * stride', 'row * n_cols', 2),
    ), None),
    'rmsnorm_fp16': ('rmsnorm', (
        ('.to(tl.float32)', '', 2),
    ), None),
    'rmsnorm_eps_outside': ('rmsnorm', (
        ('/ n_cols + eps)', '/ n_cols) + eps'),
    ), None),
    'rmsnorm_no_eps': ('rmsnorm', (
        ('/ n_cols + eps)', '/ n_cols)'),
    ), None),
    'race_unmasked_store': ('rmsnorm', (
        ('y.to(y_ptr.dtype.element_ty), mask=mask)', 'y.to(y_ptr.dtype.element_ty))'),
    ), 'tl.store('),
    'dw_race': ('rmsnorm_bwd', (
        ('dw_partial_ptr + pid * n_cols + cols', 'dw_partial_ptr + cols'),
    ), 'tl.store(dw_partial_ptr'),
    'rmsnorm_bwd_block_mean': ('rmsnorm_bwd', (
        ('/ n_cols  #', '/ BLOCK  #'),
    ), None),
    'matmul_same_stride': ('matmul', (
        ('offs_n[None, :] * stride_bn', 'offs_n[None, :] * stride_bk'),
    ), 'b = tl.load('),
    'matmul_row_major_order': ('matmul', (
        ('pid_m = first_pid_m + (pid % num_pid_in_group) % group_size_m\n    pid_n = (pid % num_pid_in_group) // group_size_m',
         'pid_m = pid // num_pid_n\n    pid_n = pid % num_pid_n'),
    ), None),
    'silu_in_loop': ('matmul_act', (
        ('        acc = tl.dot(a, w, acc)\n',
         '        acc = tl.dot(a, w, acc)\n        acc = acc * tl.sigmoid(acc)\n'),
    ), None),
    'bias_in_loop': ('matmul_act', (
        ('        acc = tl.dot(a, w, acc)\n',
         '        acc = tl.dot(a, w, acc)\n        acc += tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0)[None, :]\n'),
        ('    z = acc + bias[None, :]', '    z = acc'),
    ), None),
    'bias_along_rows': ('matmul_act', (
        ('bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0)\n    z = acc + bias[None, :]',
         'bias = tl.load(bias_ptr + offs_m, mask=offs_m < M, other=0.0)\n    z = acc + bias[:, None]'),
    ), None),
    'flash_kv_unmasked': ('flash_attention', (
        ('mask=kv_mask, other=0.0)', ')', 2),
    ), 'k = tl.load('),
    'flash_tf32': ('flash_attention', (
        (', input_precision="ieee"', '', 2),
    ), None),
    'flash_no_causal_mask': ('flash_attention', (
        ('            valid = valid & (offs_n[None, :] <= offs_m[:, None])\n', '            valid = valid\n'),
    ), None),
    'flash_no_block_skip': ('flash_attention', (
        ('hi = tl.minimum((pid_m + 1) * BLOCK_M, T)', 'hi = T'),
    ), None),
}

# (mistake, test id, the English message, the Russian message)
EXPECTED = [
    ('forgotten_mask', 'tail',
     "tl.load reads past the end of `x_ptr` (line {line}, program 96). 896 of 1024 lanes are out of range (first: "
     "lane 128): offsets 98,432…99,327 from `x_ptr`, but `x_ptr` has 98,432 elements (valid offsets 0…98,431). Mask "
     "the tail: tl.load(x_ptr + offs, mask=mask).",
     "tl.load читает за концом `x_ptr` (строка {line}, программа 96). За границу выходят 896 из 1024 дорожек "
     "(первая: 128): смещения 98 432…99 327 от `x_ptr`, а в `x_ptr` 98 432 элемента (допустимые смещения 0…98 431). "
     "Закройте хвост маской: tl.load(x_ptr + offs, mask=mask).",
     ),
    ('mask_off_by_one', 'tail',
     "tl.load reads past the end of `x_ptr` (line {line}, program 96). 1 of 1024 lanes is out of range (first: "
     "lane 128): offsets 98,432 from `x_ptr`, but `x_ptr` has 98,432 elements (valid offsets 0…98,431). The mask "
     "offs <= n lets one lane too many through: compare strictly, offs < n.",
     "tl.load читает за концом `x_ptr` (строка {line}, программа 96). За границу выходит 1 из 1024 дорожек (первая: "
     "128): смещения 98 432 от `x_ptr`, а в `x_ptr` 98 432 элемента (допустимые смещения 0…98 431). Маска offs <= n "
     "пропускает одну лишнюю дорожку: сравнивайте строго, offs < n.",
     ),
    ('grid_off_by_one', 'tail',
     "out[98,304…98,431] were never written. A grid of 96 programs of 1024 covers only 98,304 of 98,432 elements: "
     "the number of programs must be triton.cdiv(n, BLOCK) = 97.",
     "out[98 304…98 431] не записала ни одна программа. Сетка из 96 программ по 1024 покрывает только 98 304 из 98 "
     "432 элементов: программ должно быть triton.cdiv(n, BLOCK) = 97.",
     ),
    ('grid_off_by_one', 'short',
     'the kernel wrote nothing to `out`. A grid of 0 programs of 1024 covers only 0 of 5 elements: the number '
     'of programs must be triton.cdiv(n, BLOCK) = 1.',
     'ядро ничего не записало в `out`. Сетка из 0 программ по 1024 покрывает только 0 из 5 элементов: программ '
     'должно быть triton.cdiv(n, BLOCK) = 1.',
     ),
    ('grid_off_by_one', 'grid',
     "A grid of 96 programs of 1024 covers only 98,304 of 98,432 elements: the number of programs must be "
     "triton.cdiv(n, BLOCK) = 97.",
     "Сетка из 96 программ по 1024 покрывает только 98 304 из 98 432 элементов: программ должно быть triton.cdiv(n, "
     "BLOCK) = 97.",
     ),
    ('grid_one_too_many', 'grid',
     "a grid of 98 programs where triton.cdiv(98,432, 1024) = 97 are needed: the extra programs have nothing to do, "
     "but a GPU launches them all the same.",
     "сетка из 98 программ, а нужно triton.cdiv(98 432, 1024) = 97: лишним программам нечего делать, но GPU всё "
     "равно их запускает.",
     ),
    ('ignored_column_stride', 'transposed',
     '1813 of 1850 elements of `out` differ (compared exactly); max abs error 6.8e+00 at row 9, col 19 '
     '(expected -3.128, got 3.642). The kernel copies this view as if its strides were (1, 1), but they are '
     '(1, 37): element (i, j) is at x_ptr + i * stride_r + j * stride_c; use both strides.',
     '1813 из 1850 элементов `out` не совпадают (сравнение точное); наибольшая ошибка 6.8e+00 (строка 9, '
     'столбец 19: ожидалось -3.128, получено 3.642). Ядро копирует этот вид так, будто его шаги (1, 1), а они '
     '(1, 37): элемент (i, j) лежит по адресу x_ptr + i * stride_r + j * stride_c — используйте оба шага.',
     ),
    ('row_step_n_cols', 'padded_rows',
     '1800 of 1850 elements of `out` differ (compared exactly); max abs error 5.2e+00 at row 24, col 27 '
     '(expected -3.094, got 2.058). The kernel copies this view as if its strides were (50, 1), but they are '
     '(64, 1): element (i, j) is at x_ptr + i * stride_r + j * stride_c; use both strides.',
     '1800 из 1850 элементов `out` не совпадают (сравнение точное); наибольшая ошибка 5.2e+00 (строка 24, '
     'столбец 27: ожидалось -3.094, получено 2.058). Ядро копирует этот вид так, будто его шаги (50, 1), а они '
     '(64, 1): элемент (i, j) лежит по адресу x_ptr + i * stride_r + j * stride_c — используйте оба шага.',
     ),
    ('mask_wrong_axis', 'edges',
     "tl.load reads past the end of `x_ptr` (line 12, program (2, 0)). 156 of 1024 lanes are out of range (first: "
     "lane (6, 0)): offsets 3150…3155, 3195…3200, 3240…3245, 3285…3290, … (156 offsets in all) from `x_ptr`, but "
     "`x_ptr` has 3150 elements (valid offsets 0…3149). The mask tests offs_m along the other axis: it has "
     "offs_m[None, :], while in the pointer offs_m numbers the rows (offs_m[:, None]); write offs_m[:, None].",
     "tl.load читает за концом `x_ptr` (строка 12, программа (2, 0)). За границу выходят 156 из 1024 дорожек "
     "(первая: (6, 0)): смещения 3150…3155, 3195…3200, 3240…3245, 3285…3290, … (всего 156) от `x_ptr`, а в `x_ptr` "
     "3150 элементов (допустимые смещения 0…3149). Маска проверяет offs_m по другой оси: в ней offs_m[None, :], а в "
     "адресе offs_m нумерует строки (offs_m[:, None]); пишите offs_m[:, None].",
     ),
    ('mask_one_axis', 'edges',
     "tl.load reads past the end of `x_ptr` (line {line}, program (2, 1)). 19 of 1024 lanes are out of range "
     "(first: lane (5, 13)): offsets 3150…3168 from `x_ptr`, but `x_ptr` has 3150 elements (valid offsets 0…3149). "
     "The tile is 2-D and the mask leaves an axis open; add offs_n[None, :] < N: tl.load(x_ptr + offs_m[:, None] * "
     "N + offs_n[None, :], mask=mask & (offs_n[None, :] < N)).",
     "tl.load читает за концом `x_ptr` (строка {line}, программа (2, 1)). За границу выходят 19 из 1024 дорожек "
     "(первая: (5, 13)): смещения 3150…3168 от `x_ptr`, а в `x_ptr` 3150 элементов (допустимые смещения 0…3149). "
     "Тайл двумерный, и маска не закрывает одну из осей; добавьте offs_n[None, :] < N: tl.load(x_ptr + offs_m[:, "
     "None] * N + offs_n[None, :], mask=mask & (offs_n[None, :] < N)).",
     ),
    ('broadcast_swapped', 'whole_tiles',
     "3968 of 4096 elements of `out` differ (atol = 1e-06, rtol = 1e-06); max abs error 7.8e+00 at row 24, col "
     "60 (expected 2.566, got -5.278). Each tile came out transposed: out[i, j] = x[j] · y[i] + b[i] within a "
     "tile. x must run along the tile's rows, x[:, None], and y and b along its columns, y[None, :] and "
     "b[None, :].",
     '3968 из 4096 элементов `out` не совпадают (atol = 1e-06, rtol = 1e-06); наибольшая ошибка 7.8e+00 '
     '(строка 24, столбец 60: ожидалось 2.566, получено -5.278). Каждый тайл вышел транспонированным: out[i, '
     'j] = x[j] · y[i] + b[i] внутри тайла. x должен идти вдоль строк тайла, x[:, None], а y и b — вдоль '
     'столбцов, y[None, :] и b[None, :].',
     ),
    ('max_without_minus_inf', 'negative_rows',
     '16 of 16 elements of `max` differ (compared exactly); max abs error 1.0e+00 at index 15 (expected '
     '-1.004, got 0). Row 15\'s max came out as 0 although all its elements are negative: the masked-off lanes '
     'came in as 0. For a max read them as -inf: other=-float("inf").',
     '16 из 16 элементов `max` не совпадают (сравнение точное); наибольшая ошибка 1.0e+00 (индекс 15: '
     'ожидалось -1.004, получено 0). Максимум строки 15 получился 0, хотя все её элементы отрицательные: '
     'замаскированные дорожки пришли как 0. Для максимума читайте их как -inf: other=-float("inf").',
     ),
    ('softmax_tail_as_zero', 'softmax_rows',
     '6400 of 6400 elements of `out` differ (atol = 1e-06, rtol = 1e-05); max abs error 3.0e-02 at row 4, col '
     '69 (expected 0.2573, got 0.2277). The result is the softmax of the row with the block\'s tail as zeros: '
     'the tail was read as 0.0 and exp(0 - max) entered the sum. Read it as -inf: other=-float("inf").',
     '6400 из 6400 элементов `out` не совпадают (atol = 1e-06, rtol = 1e-05); наибольшая ошибка 3.0e-02 '
     '(строка 4, столбец 69: ожидалось 0.2573, получено 0.2277). Ответ совпадает с softmax, в который попали '
     'нули хвоста блока: хвост прочитан как 0.0, и exp(0 - max) вошёл в сумму. Читайте его как -inf: '
     'other=-float("inf").',
     ),
    ('softmax_without_max', 'softmax_stable',
     '`out` has 1600 NaN/inf values (first at row 0, col 0: expected 0.001074, got nan). Tl.exp overflowed: '
     'subtract the row max before the exponential, x - tl.max(x, axis=0).',
     'в `out` 1600 значений NaN/inf (первое: строка 0, столбец 0, ожидалось 0.001074, получено nan). Tl.exp '
     'переполнился: вычтите максимум строки перед экспонентой, x - tl.max(x, axis=0).',
     ),
    ('matmul_b_row_stride', 'matmul_values',
     '3481 of 3500 elements of `c` differ (1e-5 + 2⁻⁹·Σ|a·b|, admits TF32); max abs error 4.5e+01 at row 51, '
     'col 1 (expected -14.21, got 31.23). Program (0, 0) reads elements of `b_ptr` outside its tile: B[0, 45], '
     'B[0, 46], B[0, 47] … (478 in all). Its tile is B[0…44, 0…15]. Check the strides in the address.',
     '3481 из 3500 элементов `c` не совпадают (1e-5 + 2⁻⁹·Σ|a·b| — допускает TF32); наибольшая ошибка 4.5e+01 '
     '(строка 51, столбец 1: ожидалось -14.21, получено 31.23). Программа (0, 0) читает элементы `b_ptr` вне '
     'своего тайла: B[0, 45], B[0, 46], B[0, 47] … (всего 478). Её тайл — B[0…44, 0…15]. Проверьте шаги '
     '(stride) в адресе.',
     ),
    ('matmul_b_row_stride', 'matmul_traffic',
     'program (0, 0) reads elements of `b_ptr` outside its tile: B[0, 45], B[0, 46], B[0, 47] … (478 in all). '
     'Its tile is B[0…44, 0…15]. Check the strides in the address.',
     'программа (0, 0) читает элементы `b_ptr` вне своего тайла: B[0, 45], B[0, 46], B[0, 47] … (всего 478). '
     'Её тайл — B[0…44, 0…15]. Проверьте шаги (stride) в адресе.',
     ),
    ('backward_tail_minus_inf', 'tail',
     "`dx` has 200,717 NaN/inf values (first at row 0, col 0: expected 0.002357, got -inf). The row's tail was read "
     "as -inf, and (-inf)·(-inf) = inf entered the sum ⟨dy, y⟩: here the tail is read as 0 (other=0.0), which "
     "leaves the sum alone.",
     "в `dx` 200 717 значений NaN/inf (первое: строка 0, столбец 0, ожидалось 0.002357, получено -inf). Хвост "
     "строки прочитан как -inf, и в сумму ⟨dy, y⟩ попало (-inf)·(-inf) = inf: здесь хвост читают как 0 (other=0.0), "
     "он сумму не меняет.",
     ),
    ('race_shared_offsets', 'small',
     "tl.store races with program 0: both write `dx_ptr` (line {line}, program 1). Offsets 0…7 of `dx_ptr` are "
     "written by programs 0 and 1 in one launch without atomics; the GPU runs programs in any order, so either "
     "value may win. The store's address does not depend on tl.program_id, so every program writes the same "
     "elements: offset it by the program's share, row * stride, as the kernel's other accesses do: tl.store(dx_ptr "
     "+ row * stride + cols, dx.to(dx_ptr.dtype.element_ty), mask=mask).",
     "tl.store: гонка с программой 0, обе пишут в `dx_ptr` (строка {line}, программа 1). Смещения 0…7 в `dx_ptr` "
     "пишут программы 0 и 1 в одном запуске без атомарных операций; GPU выполняет программы в любом порядке, и "
     "останется любое из значений. Адрес записи не зависит от tl.program_id, поэтому все программы пишут в одни и "
     "те же элементы: сдвиньте его на долю программы, row * stride, как в других обращениях ядра: tl.store(dx_ptr + "
     "row * stride + cols, dx.to(dx_ptr.dtype.element_ty), mask=mask).",
     ),
    ('rmsnorm_block_mean', 'tail',
     "57,290 of 57,344 elements of `y` differ (atol = 1e-05, rtol = 1e-05); max abs error 6.4e-01 at row 29, col "
     "220 (expected 9.327, got 9.971). The result matches dividing the row's sum by the block size 1024 instead of "
     "n_cols = 896: the block's tail is not part of the row, divide by n_cols.",
     "57 290 из 57 344 элементов `y` не совпадают (atol = 1e-05, rtol = 1e-05); наибольшая ошибка 6.4e-01 (строка "
     "29, столбец 220: ожидалось 9.327, получено 9.971). Ответ совпадает с делением суммы по строке на размер блока "
     "1024 вместо n_cols = 896: хвост блока — не часть строки, делите на n_cols.",
     ),
    ('rmsnorm_block_mean', 'strided_rows',
     "28,649 of 28,672 elements of `y` differ (atol = 1e-05, rtol = 1e-05); max abs error 5.0e-01 at row 25, col "
     "809 (expected 7.193, got 7.689). The result matches dividing the row's sum by the block size 1024 instead of "
     "n_cols = 896: the block's tail is not part of the row, divide by n_cols.",
     "28 649 из 28 672 элементов `y` не совпадают (atol = 1e-05, rtol = 1e-05); наибольшая ошибка 5.0e-01 (строка "
     "25, столбец 809: ожидалось 7.193, получено 7.689). Ответ совпадает с делением суммы по строке на размер блока "
     "1024 вместо n_cols = 896: хвост блока — не часть строки, делите на n_cols.",
     ),
    ('rmsnorm_row_step', 'strided_rows',
     "rows 28…31 of `y` were never written. On the same rows laid out back to back the kernel passes, but here "
     "rows are stride = 1024 elements apart while n_cols = 896: a row's offset is row * stride, not row * "
     "n_cols.",
     'строки 28…31 тензора `y` не записала ни одна программа. На тех же строках, уложенных подряд, ядро '
     'проходит, а здесь строки лежат через stride = 1024 элементов при n_cols = 896: смещение строки — row * '
     'stride, а не row * n_cols.',
     ),
    ('rmsnorm_fp16', 'fp16',
     '4800 of 4800 elements of `y` differ (atol = 1e-05, rtol = 0.001); max abs error 6.8e+00 at row 13, col 5 '
     '(expected 6.762, got 0). Squares overflow in FP16 (300² > 65 504): convert the row to FP32 with '
     '.to(tl.float32) before squaring.',
     '4800 из 4800 элементов `y` не совпадают (atol = 1e-05, rtol = 0.001); наибольшая ошибка 6.8e+00 (строка '
     '13, столбец 5: ожидалось 6.762, получено 0). Квадраты во FP16 переполняются (300² > 65 504): переведите '
     'строку во FP32 через .to(tl.float32) до возведения в квадрат.',
     ),
    ('rmsnorm_eps_outside', 'eps',
     '700 of 800 elements of `y` differ (atol = 1e-05, rtol = 1e-05); max abs error 1.4e+00 at row 7, col 98 '
     '(expected -2.179, got -3.608). The result matches eps added after the square root, sqrt(mean(x²)) + eps: '
     'it belongs under the root, sqrt(mean(x²) + eps).',
     '700 из 800 элементов `y` не совпадают (atol = 1e-05, rtol = 1e-05); наибольшая ошибка 1.4e+00 (строка 7, '
     'столбец 98: ожидалось -2.179, получено -3.608). Ответ совпадает с eps, прибавленным после корня, '
     'sqrt(mean(x²)) + eps: eps должен стоять под корнем, sqrt(mean(x²) + eps).',
     ),
    ('rmsnorm_no_eps', 'eps',
     '`y` has 100 NaN/inf values (first at row 3, col 0: expected 0, got nan). A zero row gave NaN: eps '
     'belongs under the square root, sqrt(mean(x²) + eps).',
     'в `y` 100 значений NaN/inf (первое: строка 3, столбец 0, ожидалось 0, получено nan). Нулевая строка дала '
     'NaN: eps должен стоять под корнем, sqrt(mean(x²) + eps).',
     ),
    ('race_unmasked_store', 'tail',
     "tl.store races with program 0: both write `y_ptr` (line {line}, program 1). Offsets 896…1023 of `y_ptr` are "
     "written by programs 0 and 1 in one launch without atomics; the GPU runs programs in any order, so either "
     "value may win. This tl.store has no mask: the lanes past the end write into the next program's elements; mask "
     "them: tl.store(y_ptr + row * stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask).",
     "tl.store: гонка с программой 0, обе пишут в `y_ptr` (строка {line}, программа 1). Смещения 896…1023 в `y_ptr` "
     "пишут программы 0 и 1 в одном запуске без атомарных операций; GPU выполняет программы в любом порядке, и "
     "останется любое из значений. У этого tl.store нет маски: дорожки за концом пишут в элементы соседней "
     "программы; закройте их маской: tl.store(y_ptr + row * stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask).",
     ),
    ('rmsnorm_bwd_block_mean', 'wide',
     "56,605 of 57,344 elements of `dx` differ (atol = 1e-05, rtol = 1e-05); max abs error 3.8e-02 at row 17, col "
     "470 (expected -0.216, got -0.1785). The result matches dividing the row's sum by the block size 1024 instead "
     "of n_cols = 896: the block's tail is not part of the row, divide by n_cols.",
     "56 605 из 57 344 элементов `dx` не совпадают (atol = 1e-05, rtol = 1e-05); наибольшая ошибка 3.8e-02 (строка "
     "17, столбец 470: ожидалось -0.216, получено -0.1785). Ответ совпадает с делением суммы по строке на размер "
     "блока 1024 вместо n_cols = 896: хвост блока — не часть строки, делите на n_cols.",
     ),
    ('matmul_same_stride', 'values',
     "tl.load reads past the end of `b_ptr` (line {line}, program 0). 3 of 256 lanes are out of range (first: lane "
     "(14, 15)): offsets 2250, 2300 from `b_ptr`, but `b_ptr` has 2250 elements (valid offsets 0…2249). The rows "
     "(offs_k) and the columns (offs_n) of the tile are both multiplied by stride_bk: multiply offs_n by stride_bn.",
     "tl.load читает за концом `b_ptr` (строка {line}, программа 0). За границу выходят 3 из 256 дорожек (первая: "
     "(14, 15)): смещения 2250, 2300 от `b_ptr`, а в `b_ptr` 2250 элементов (допустимые смещения 0…2249). И строки "
     "(offs_k), и столбцы (offs_n) тайла умножаются на stride_bk: offs_n умножайте на stride_bn.",
     ),
    ('matmul_same_stride', 'transposed_b',
     "2992 of 3072 elements of `c` differ (1e-5 + 2⁻⁹·Σ|a·b|, admits TF32); max abs error 3.5e+01 at row 45, col 14 "
     "(expected -16.19, got 19.29). Program 0 reads elements of `b_ptr` outside its tile: B[0, 16], B[0, 17], B[0, "
     "18] … (32 in all). Its tile is B[0…39, 0…15]. Check the strides in the address. The rows (offs_k) and the "
     "columns (offs_n) of the tile are both multiplied by stride_bk: multiply offs_n by stride_bn.",
     "2992 из 3072 элементов `c` не совпадают (1e-5 + 2⁻⁹·Σ|a·b| — допускает TF32); наибольшая ошибка 3.5e+01 "
     "(строка 45, столбец 14: ожидалось -16.19, получено 19.29). Программа 0 читает элементы `b_ptr` вне своего "
     "тайла: B[0, 16], B[0, 17], B[0, 18] … (всего 32). Её тайл — B[0…39, 0…15]. Проверьте шаги (stride) в адресе. "
     "И строки (offs_k), и столбцы (offs_n) тайла умножаются на stride_bk: offs_n умножайте на stride_bn.",
     ),
    ('matmul_row_major_order', 'tiles',
     'program 1 writes elements of `c_ptr` outside its tile: C[0, 16], C[0, 17], C[0, 18] … (256 in all). Its '
     'tile is C[16…31, 0…15]. In GROUP_M order program 1 computes the tile (pid_m, pid_n) = (1, 0): check how '
     'pid_m and pid_n come from pid.',
     'программа 1 пишет элементы `c_ptr` вне своего тайла: C[0, 16], C[0, 17], C[0, 18] … (всего 256). Её тайл '
     '— C[16…31, 0…15]. В порядке GROUP_M программа 1 считает тайл (pid_m, pid_n) = (1, 0): проверьте, как из '
     'pid получаются pid_m и pid_n.',
     ),
    ('silu_in_loop', 'long_k',
     '1382 of 1536 elements of `c` differ (1e-5 + 1.1·2⁻⁹·Σ|a·w|, admits TF32); max abs error 3.1e+00 at row '
     '0, col 23 (expected 3.619, got 0.5335). The result matches SiLU applied inside the K loop, after each '
     'tl.dot, that is to partial sums: the epilogue goes once, after the loop.',
     '1382 из 1536 элементов `c` не совпадают (1e-5 + 1.1·2⁻⁹·Σ|a·w| — допускает TF32); наибольшая ошибка '
     '3.1e+00 (строка 0, столбец 23: ожидалось 3.619, получено 0.5335). Ответ совпадает с SiLU, применённой '
     'внутри цикла по K, после каждого tl.dot, то есть к частичным суммам: эпилог — один раз, после цикла.',
     ),
    ('bias_in_loop', 'long_k',
     '1496 of 1536 elements of `c` differ (1e-5 + 1.1·2⁻⁹·Σ|a·w|, admits TF32); max abs error 2.7e+01 at row '
     '21, col 45 (expected 0.9456, got 28.01). The result matches the bias added inside the K loop, after each '
     'tl.dot, that is to partial sums: the epilogue goes once, after the loop.',
     '1496 из 1536 элементов `c` не совпадают (1e-5 + 1.1·2⁻⁹·Σ|a·w| — допускает TF32); наибольшая ошибка '
     '2.7e+01 (строка 21, столбец 45: ожидалось 0.9456, получено 28.01). Ответ совпадает с bias, прибавленным '
     'внутри цикла по K, после каждого tl.dot, то есть к частичным суммам: эпилог — один раз, после цикла.',
     ),
    ('bias_along_rows', 'whole_tiles',
     '3010 of 3072 elements of `c` differ (1e-5 + 1.1·2⁻⁹·Σ|a·w|, admits TF32); max abs error 2.7e+00 at row '
     '24, col 26 (expected 2.536, got -0.1712). The result matches the bias added along the rows '
     '(bias[offs_m]): the bias has one number per output column, add bias[None, :] with the indices offs_n.',
     '3010 из 3072 элементов `c` не совпадают (1e-5 + 1.1·2⁻⁹·Σ|a·w| — допускает TF32); наибольшая ошибка '
     '2.7e+00 (строка 24, столбец 26: ожидалось 2.536, получено -0.1712). Ответ совпадает с bias, прибавленным '
     'по строкам (bias[offs_m]): bias — по одному числу на столбец выхода, прибавляйте bias[None, :] с '
     'индексами offs_n.',
     ),
    ('flash_kv_unmasked', 'sdpa_T100',
     "tl.load reads past the end of `k_ptr` (line {line}, program (0, 5)). 1792 of 4096 lanes are out of range "
     "(first: lane (36, 0)): offsets 38,400…40,191 from `k_ptr`, but `k_ptr` has 38,400 elements (valid offsets "
     "0…38,399). The tile is 2-D and its rows run past the end; mask them: tl.load(k_ptr + base + offs_n[:, None] * "
     "stride_t + offs_d[None, :], mask=kv_mask).",
     "tl.load читает за концом `k_ptr` (строка {line}, программа (0, 5)). За границу выходят 1792 из 4096 дорожек "
     "(первая: (36, 0)): смещения 38 400…40 191 от `k_ptr`, а в `k_ptr` 38 400 элементов (допустимые смещения 0…38 "
     "399). Тайл двумерный, и за границу выходят его строки; закройте их маской: tl.load(k_ptr + base + offs_n[:, "
     "None] * stride_t + offs_d[None, :], mask=kv_mask).",
     ),
    ('flash_tf32', 'sdpa_T64_causal',
     '16,871 of 24,576 elements of `o` differ (atol = 0.0001, rtol = 0.0001); max abs error 2.5e-03 at batch 0, '
     'head 2, row 37, col 39 (expected -0.9861, got -0.9836). With exact FP32 products the kernel passes this test, '
     'so the error comes from tl.dot in TF32 (the default): pass input_precision="ieee" to every tl.dot.',
     '16 871 из 24 576 элементов `o` не совпадают (atol = 0.0001, rtol = 0.0001); наибольшая ошибка 2.5e-03 (batch '
     '0, голова 2, строка 37, столбец 39: ожидалось -0.9861, получено -0.9836). С точными произведениями FP32 ядро '
     'проходит этот тест, значит, ошибку дают tl.dot во TF32 (по умолчанию): передайте input_precision="ieee" в '
     'каждый tl.dot.',
     ),
    ('flash_no_causal_mask', 'sdpa_T64_causal',
     "24,175 of 24,576 elements of `o` differ (atol = 0.0001, rtol = 0.0001); max abs error 3.1e+00 at batch 0, "
     "head 1, row 1, col 10 (expected 3.47, got 0.3725). Without the causal mask the kernel passes on the same "
     "data, so the error is in that mask: row m may only see columns n ≤ m (offs_n[None, :] <= offs_m[:, None]).",
     "24 175 из 24 576 элементов `o` не совпадают (atol = 0.0001, rtol = 0.0001); наибольшая ошибка 3.1e+00 (batch "
     "0, голова 1, строка 1, столбец 10: ожидалось 3.47, получено 0.3725). Без причинной маски ядро на тех же "
     "данных проходит, значит, ошибка в ней: строке m виден столбец n только при n ≤ m (offs_n[None, :] <= "
     "offs_m[:, None]).",
     ),
    ('flash_no_block_skip', 'causal_skip',
     "`k_ptr`: loaded 12,800 elements, expected 9344 (Σ min((pid_m + 1)·BLOCK_M, T)·D = (64 + 128 + 192 + 200)·16); "
     "e.g. program 0: 3200 instead of 1024; `v_ptr`: loaded 12,800 elements, expected 9344 (Σ min((pid_m + "
     "1)·BLOCK_M, T)·D = (64 + 128 + 192 + 200)·16); e.g. program 0: 3200 instead of 1024.",
     "`k_ptr`: прочитано 12 800 элементов, а должно быть 9344 (Σ min((pid_m + 1)·BLOCK_M, T)·D = (64 + 128 + 192 + "
     "200)·16); например, программа 0: 3200 вместо 1024; `v_ptr`: прочитано 12 800 элементов, а должно быть 9344 (Σ "
     "min((pid_m + 1)·BLOCK_M, T)·D = (64 + 128 + 192 + 200)·16); например, программа 0: 3200 вместо 1024.",
     ),
]



@pytest.mark.parametrize("name, test_id, en, ru", EXPECTED, ids=[f"{e[0]}-{e[1]}" for e in EXPECTED])
def test_the_mistake_gets_its_message(name, test_id, en, ru):
    exercise, subs, needle = MISTAKES[name]
    code = solution(exercise, *subs)
    line = line_of(code, needle) if needle else None
    for lang, text in (("en", en), ("ru", ru)):
        result = by_id(check(exercise, code, lang))[test_id]
        assert not result["passed"]
        assert plain(result["message"]) == text.format(line=line), lang


# Mistakes pinned by what the fix must say and must not say (in both languages), and fixed by applying the
# error's edits as the page does: (mistake, test id, must contain, must not contain)
RIGHT_FIX = [
    # a shape mismatch on the failing line: the fix of the mix-up there, not Python's repr of the error
    ('mask_wrong_axis', 'tall', ['offs_m[:, None]'], ['\n', 'Error(']),
    ('broadcast_swapped', 'edges', ['x[:, None]'], ['\n', 'Error(']),
    # dw_partial has one row per program: the store's share is pid * n_cols (row * n_cols, the kernel's row
    # offset, would write past the partials)
    ('dw_race', 'small', ['pid * n_cols', 'tl.store(dw_partial_ptr + pid * n_cols + cols, dw, mask=mask)'],
     ['row * n_cols']),
]


@pytest.mark.parametrize("name, test_id, must, must_not", RIGHT_FIX, ids=[f"{p[0]}-{p[1]}" for p in RIGHT_FIX])
def test_the_mistake_gets_the_right_fix(name, test_id, must, must_not):
    exercise, subs, needle = MISTAKES[name]
    code = solution(exercise, *subs)
    for lang in ("en", "ru"):
        result = by_id(check(exercise, code, lang))[test_id]
        assert not result["passed"]
        assert all(m in result["message"] for m in must), result["message"]
        assert not any(m in result["message"] for m in must_not), result["message"]


@pytest.mark.parametrize("name", [p[0] for p in RIGHT_FIX])
def test_applying_the_edits_makes_every_test_pass(name):
    """The page applies the error's edit and checks again: one edit per error (three for three vectors
    broadcast along the wrong axes), each on a line the mistake changed, until every test passes."""
    exercise, subs, _ = MISTAKES[name]
    code = solution(exercise, *subs)
    changed = {i for i, (a, b) in enumerate(zip(solution(exercise).splitlines(), code.splitlines())) if a != b}
    for _ in range(4):
        result = check(exercise, code, "en")
        if result["passed"]:
            break
        edit = result["error"]["diagnostic"]["suggestion"]["edit"]
        assert edit["line"] - 1 in changed, (edit, result["error"]["message"])
        code = Edit(**edit).apply(code)
    assert result["passed"], [(t["id"], t["message"]) for t in result["tests"] if not t["passed"]]


@pytest.mark.parametrize("name, test_id, ru", [(e[0], e[1], e[3]) for e in EXPECTED],
                         ids=[f"{e[0]}-{e[1]}" for e in EXPECTED])
def test_a_russian_message_says_nothing_in_english_but_code(name, test_id, ru):
    assert not english_sentences(ru), ru


def test_every_mistake_is_pinned():
    assert {e[0] for e in EXPECTED} | {p[0] for p in RIGHT_FIX} == set(MISTAKES)


@pytest.mark.skipif(not HAS_RAND, reason=NO_RAND)
def test_random_numbers_drawn_per_block_are_named():
    """Dropout with tl.rand(seed, tl.arange(0, BLOCK)): every block drops the same positions (the values depend on
    the generator, so only the cause's sentence is pinned)."""
    code = solution("dropout", ("r = tl.rand(seed, offs)", "r = tl.rand(seed, tl.arange(0, BLOCK))"))
    for lang, text in (("en", "Every program dropped the same positions of its block: tl.rand got the numbers within "
                              "the block (tl.arange(0, BLOCK)) where it needs the global ones, offs = pid * BLOCK + "
                              "tl.arange(0, BLOCK)."),
                       ("ru", "Каждая программа выбросила одни и те же позиции своего блока: в tl.rand переданы номера "
                              "внутри блока (tl.arange(0, BLOCK)), а нужны глобальные, offs = pid * BLOCK + "
                              "tl.arange(0, BLOCK).")):
        result = by_id(check("dropout", code, lang))["p_half"]
        assert not result["passed"] and result["message"].endswith(text)
