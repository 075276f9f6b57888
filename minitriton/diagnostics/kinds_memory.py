"""Texts of memory diagnostics: out-of-bounds accesses, races and order-dependent accesses between programs,
reads of never-written elements, outputs left unwritten; and the fixes for them."""
from __future__ import annotations

MEMORY = {
    "out_of_bounds": {
        "head": {"en": "tl.{call} {op:verb} {side:side} `{tensor}`",
                 "ru": "tl.{call} {op:verb} {side:side} `{tensor}`"},
        "body": {"en": "{bad} of {total} lanes are out of range (first: lane {lane}): offsets {offsets:runs} from "
                       "`{tensor}`, but `{tensor}` has {n:num} elements (valid offsets {low:num}…{high:num})",
                 "ru": "за границу выходят {bad} из {total} дорожек (первая: {lane}): смещения {offsets:runs} "
                       "от `{tensor}`, а в `{tensor}` {n:element} (допустимые смещения {low:num}…{high:num})"},
    },
    "misaligned": {
        "head": {"en": "tl.{op} through a misaligned address into `{tensor}`",
                 "ru": "tl.{op} обращается к `{tensor}` по невыровненному адресу"},
        "body": {"en": "the address is not a multiple of the element's {itemsize} bytes (a GPU stops with "
                       "'misaligned address')",
                 "ru": "адрес не кратен размеру элемента, {itemsize} байт (GPU останавливается с ошибкой "
                       "'misaligned address')"},
    },
    "no_tensor": {
        "head": {"en": "tl.{op} through pointers that point into no tensor argument",
                 "ru": "tl.{op} обращается по указателям, которые не указывают ни в один тензор-аргумент"},
        "body": {"en": "addresses {addresses} are in no array passed to the kernel",
                 "ru": "адреса {addresses} не принадлежат ни одному массиву, переданному ядру"},
    },
    "gather_out_of_range": {
        "head": {"en": "tl.gather index out of range along axis {axis}",
                 "ru": "tl.gather: индекс вне оси {axis}"},
        "body": {"en": "{bad} of {total} lanes are out of range (first: lane {lane}, index {value}): axis {axis} of "
                       "the source has {n} elements (valid indices 0…{high})",
                 "ru": "вне диапазона {bad} из {total} дорожек (первая: {lane}, индекс {value}): на оси {axis} "
                       "источника {n:element} (допустимые индексы 0…{high})"},
    },
    "race": {
        "head": {"en": "tl.store races with program {other:pid}: both write `{tensor}`",
                 "ru": "tl.store: гонка с программой {other:pid}, обе пишут в `{tensor}`"},
        "body": {"en": "offsets {offsets:runs} of `{tensor}` are written by programs {other:pid} and "
                       "{program:pid} in one launch without atomics; the GPU runs programs in any order, so "
                       "either value may win",
                 "ru": "смещения {offsets:runs} в `{tensor}` пишут программы {other:pid} и {program:pid} в одном "
                       "запуске без атомарных операций; GPU выполняет программы в любом порядке, и останется "
                       "любое из значений"},
    },
    "order_write": {
        "head": {"en": "tl.store writes `{tensor}` elements that program {other:pid} reads in the same launch",
                 "ru": "tl.store пишет элементы `{tensor}`, которые в том же запуске читает программа "
                       "{other:pid}"},
        "body": {"en": "offsets {offsets:runs}: the result depends on the order in which programs run, which the "
                       "GPU does not fix",
                 "ru": "смещения {offsets:runs}: результат зависит от порядка программ, а GPU его не "
                       "фиксирует"},
    },
    "order_write_several": {
        "head": {"en": "tl.store writes `{tensor}` elements that program (several) reads in the same launch",
                 "ru": "tl.store пишет элементы `{tensor}`, которые в том же запуске читают несколько других "
                       "программ"},
        "body": {"en": "offsets {offsets:runs}: the result depends on the order in which programs run, which the "
                       "GPU does not fix",
                 "ru": "смещения {offsets:runs}: результат зависит от порядка программ, а GPU его не "
                       "фиксирует"},
    },
    "order_read": {
        "head": {"en": "tl.load reads `{tensor}` elements that program {other:pid} writes in the same launch",
                 "ru": "tl.load читает элементы `{tensor}`, которые в том же запуске пишет программа "
                       "{other:pid}"},
        "body": {"en": "offsets {offsets:runs}: the result depends on the order in which programs run, which the "
                       "GPU does not fix",
                 "ru": "смещения {offsets:runs}: результат зависит от порядка программ, а GPU его не "
                       "фиксирует"},
    },
    "order_read_several": {
        "head": {"en": "tl.load reads `{tensor}` elements that program (several) writes in the same launch",
                 "ru": "tl.load читает элементы `{tensor}`, которые в том же запуске пишут несколько других "
                       "программ"},
        "body": {"en": "offsets {offsets:runs}: the result depends on the order in which programs run, which the "
                       "GPU does not fix",
                 "ru": "смещения {offsets:runs}: результат зависит от порядка программ, а GPU его не "
                       "фиксирует"},
    },
    "uninitialized": {
        "head": {"en": "tl.load reads `{tensor}` elements that were never written",
                 "ru": "tl.load читает элементы `{tensor}`, в которые ещё ничего не записано"},
        "body": {"en": "offsets {offsets:runs} of `{tensor}` hold no value yet (the array was made by "
                       "{made}, which leaves it uninitialised)",
                 "ru": "смещения {offsets:runs} в `{tensor}` ещё не получили значения (массив создан "
                       "через {made}, без начальных значений)"},
    },
    "unwritten": {
        "head": {"en": "elements {offsets:runs} of {tensor} were never written",
                 "ru": "элементы {offsets:runs} тензора {tensor} не записала ни одна программа"},
    },
}

MEMORY_SUGGESTIONS = {
    "mask_tail": {"en": "mask the tail: {call}", "ru": "закройте хвост маской: {call}"},
    "mask_tail_generic": {
        "en": "mask the lanes past the end, e.g. tl.{op}(<pointer>, mask=<offsets> < <number of elements>)",
        "ru": "закройте маской дорожки за концом, например tl.{op}(<указатель>, mask=<смещения> < <число "
              "элементов>)"},
    "mask_bound": {"en": "the mask lets these lanes through: check its bound ({mask}) and the strides used to "
                         "build the offsets",
                   "ru": "маска пропускает эти дорожки: проверьте её границу ({mask}) и шаги (stride) в "
                         "смещениях"},
    "mask_bound_generic": {"en": "the mask lets these lanes through: check its bound and the strides used to "
                                 "build the offsets",
                           "ru": "маска пропускает эти дорожки: проверьте её границу и шаги (stride) в смещениях"},
    "off_by_one": {"en": "the mask {mask} lets one lane too many through: compare strictly, {right}",
                   "ru": "маска {mask} пропускает одну лишнюю дорожку: сравнивайте строго, {right}"},
    "mask_2d": {"en": "the tile is 2-D and its {axes} run past the end: mask that axis too, {call}",
                "ru": "тайл двумерный, и за границу выходят {axes}: закройте маской и эту ось, {call}"},
    "mask_axis": {"en": "the mask tests {var} along the other axis: it has {used}, while in the pointer {var} "
                        "numbers the {ptr_axis:axis} ({right}); write {right}",
                  "ru": "маска проверяет {var} по другой оси: в ней {used}, а в адресе {var} нумерует "
                        "{ptr_axis:axis} ({right}); пишите {right}"},
    "same_stride": {"en": "the rows ({row}) and the columns ({col}) of the tile are both multiplied by {stride}: "
                          "multiply {col} by {right}",
                    "ru": "и строки ({row}), и столбцы ({col}) тайла умножаются на {stride}: {col} умножайте на "
                          "{right}"},
    "to_int64": {"en": "{expr} overflows int32 (it reaches {value:num}); compute it in 64 bits: {right}",
                 "ru": "{expr} переполняет int32 (доходит до {value:num}); считайте в 64 битах: {right}"},
    "negative_offset": {"en": "{expr} goes negative (down to {value:num}) on these lanes; mask them, {call}",
                        "ru": "{expr} становится отрицательным (до {value:num}) на этих дорожках; закройте их "
                              "маской, {call}"},
    "pointer_from_argument": {"en": "build pointers from a pointer argument: ptr + offsets",
                              "ru": "стройте указатели от аргумента-указателя: ptr + смещения"},
    "cast_aligned": {"en": "cast the address to a pointer to the element's type only at multiples of its size",
                     "ru": "приводите адрес к указателю на тип элемента только в кратных его размеру местах"},
    "clamp_index": {"en": "clamp or mask the index, e.g. tl.minimum(tl.maximum({index}, 0), {high})",
                    "ru": "ограничьте или замаскируйте индекс, например tl.minimum(tl.maximum({index}, 0), "
                          "{high})"},
    "race_own_elements": {"en": "give each program its own elements: the offsets must depend on the program id "
                                "so that no two programs write the same element",
                          "ru": "дайте каждой программе свои элементы: смещения должны зависеть от номера "
                                "программы так, чтобы две программы не писали один элемент"},
    "race_shared": {"en": "the store's address does not depend on tl.program_id, so every program writes the "
                          "same elements: offset it by the program's share (e.g. {example}), or, if the programs "
                          "are meant to add up, use tl.atomic_add",
                    "ru": "адрес записи не зависит от tl.program_id, поэтому все программы пишут в одни и те же "
                          "элементы: сдвиньте его на долю программы (например, {example}) или, если вклады "
                          "нужно сложить, используйте tl.atomic_add"},
    "race_unmasked": {"en": "this tl.store has no mask: the lanes past the end write into the next program's "
                            "elements; {call}",
                      "ru": "у этого tl.store нет маски: дорожки за концом пишут в элементы соседней программы; "
                            "{call}"},
    "race_stride": {"en": "the programs' addresses differ only by {expr}: {name} is multiplied by {stride}, which "
                          "is too small for a {block}-element block; use {right}",
                    "ru": "адреса программ различаются только на {expr}: {name} умножается на {stride}, а этого "
                          "мало для блока из {block} элементов; пишите {right}"},
    "order_fix": {"en": "read and write different arrays, or split the work into two launches",
                  "ru": "читайте и пишите разные массивы или разбейте работу на два запуска"},
    "uninit_fix": {"en": "mask the load ({mask}) or write these elements first",
                   "ru": "закройте чтение маской ({mask}) или сначала запишите эти элементы"},
    "uninit_fix_generic": {"en": "mask the load or write these elements first",
                           "ru": "закройте чтение маской или сначала запишите эти элементы"},
    "unwritten_masked": {"en": "program {masked_by}'s store mask excluded them",
                         "ru": "их исключила маска записи программы {masked_by}"},
    "unwritten_masked_many": {"en": "the store masks of programs {masked_by} excluded them",
                              "ru": "их исключили маски записи программ {masked_by}"},
    "unwritten_grid": {"en": "no program stored there (check the grid size and the offsets)",
                       "ru": "туда не писала ни одна программа (проверьте размер сетки и смещения)"},
    "no_automatic_fix": {"en": "(no automatic fix: {why})", "ru": "(автоматического исправления нет: {why})"},
}
