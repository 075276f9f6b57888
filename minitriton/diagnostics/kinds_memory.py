"""Texts of memory diagnostics: out-of-bounds accesses, races and order-dependent accesses between programs,
reads of never-written elements, outputs left unwritten; and the fixes for them."""
from __future__ import annotations

MEMORY = {
    "out_of_bounds": {
        "head": {"en": "tl.{call} {op:verb} {side:side} `{tensor}`",
                 "ru": "tl.{call} {op:verb} {side:side} `{tensor}`"},
        "body": {"en": "{bad} of {total} lanes {bad:is|are} out of range (first: lane {lane}): offsets {offsets:runs} from "
                       "`{tensor}`, but `{tensor}` has {n:num} elements (valid offsets {low:num}…{high:num})",
                 "ru": "за границу {bad:выходит|выходят|выходят} {bad} из {total} дорожек (первая: {lane}): смещения {offsets:runs} "
                       "от `{tensor}`, а в `{tensor}` {n:element} (допустимые смещения {low:num}…{high:num})"},
    },
    "descriptor_out_of_bounds": {
        "head": {"en": "tensor descriptor {call} {op:verb} {side:side} `{tensor}`",
                 "ru": "тензорный дескриптор: {call} {op:verb} {side:side} `{tensor}`"},
        "body": {"en": "{bad} of {total} lanes {bad:is|are} out of range (first: lane {lane}): offsets {offsets:runs} from "
                       "`{tensor}`, but `{tensor}` has {n:num} elements (valid offsets {low:num}…{high:num})",
                 "ru": "за границу {bad:выходит|выходят|выходят} {bad} из {total} дорожек (первая: {lane}): смещения {offsets:runs} "
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
        "head": {"en": "tl.store writes `{tensor}` elements that several other programs read in the same launch",
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
        "head": {"en": "tl.load reads `{tensor}` elements that several other programs write in the same launch",
                 "ru": "tl.load читает элементы `{tensor}`, которые в том же запуске пишут несколько других "
                       "программ"},
        "body": {"en": "offsets {offsets:runs}: the result depends on the order in which programs run, which the "
                       "GPU does not fix",
                 "ru": "смещения {offsets:runs}: результат зависит от порядка программ, а GPU его не "
                       "фиксирует"},
    },
    "uninitialized": {
        "head": {"en": "tl.{call} reads `{tensor}` elements that were never written",
                 "ru": "tl.{call} читает элементы `{tensor}`, в которые ещё ничего не записано"},
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
    "mask_like_index": {"en": "the lanes out of range are the ones the load of {var} masked off ({mask}); mask "
                              "this access the same way: {call}",
                        "ru": "за границу выходят дорожки, которые маска загрузки {var} отключила ({mask}); закройте "
                              "это обращение той же маской: {call}"},
    "mask_bound": {"en": "the mask {mask} lets these lanes through: check its bound and the strides used to "
                         "build the offsets",
                   "ru": "маска {mask} пропускает эти дорожки: проверьте её границу и шаги (stride) в "
                         "смещениях"},
    "mask_bound_large": {"en": "the mask {mask} lets offsets up to {value:num} through, but `{tensor}` has "
                               "{n:element}: compare with its size, {right}",
                         "ru": "маска {mask} пропускает смещения до {value:num}, а в `{tensor}` {n:element}: "
                               "сравнивайте с его размером, {right}"},
    "mask_bound_over": {"en": "the mask {mask} lets offsets up to {value:num} through, but `{tensor}` has "
                              "{n:element}",
                        "ru": "маска {mask} пропускает смещения до {value:num}, а в `{tensor}` {n:element}"},
    "mask_bound_generic": {"en": "the mask lets these lanes through: check its bound and the strides used to "
                                 "build the offsets",
                           "ru": "маска пропускает эти дорожки: проверьте её границу и шаги (stride) в смещениях"},
    "mask_offsets": {"en": "the mask bounds {var}, but the lanes access {expr}: bound that too, {call}",
                     "ru": "маска ограничивает {var}, а дорожки обращаются к {expr}: ограничьте и его, {call}"},
    "off_by_one": {"en": "the mask {mask} lets one lane too many through: compare strictly, {right}",
                   "ru": "маска {mask} пропускает одну лишнюю дорожку: сравнивайте строго, {right}"},
    "mask_2d": {"en": "the tile is 2-D: mask both of its axes, {call}",
                "ru": "тайл двумерный: закройте маской обе его оси, {call}"},
    "boundary_check": {"en": "a block pointer takes no mask: its load or store checks the axes named in "
                             "boundary_check, {call}",
                       "ru": "блочному указателю маска не нужна: загрузка или запись проверяет оси, перечисленные в "
                             "boundary_check, {call}"},
    "mask_2d_one": {"en": "the tile is 2-D and its {axis:axis} run past the end; mask them: {call}",
                    "ru": "тайл двумерный, и за границу выходят его {axis:axis}; закройте их маской: {call}"},
    "mask_2d_axis": {"en": "the tile is 2-D and the mask leaves an axis open; add {mask}: {call}",
                     "ru": "тайл двумерный, и маска не закрывает одну из осей; добавьте {mask}: {call}"},
    "mask_2d_generic": {"en": "the tile is 2-D: mask each axis that runs past the end, such as the one {var} numbers",
                        "ru": "тайл двумерный: закройте маской каждую ось, выходящую за границу, например ту, "
                              "которую нумерует {var}"},
    "mask_axis": {"en": "the mask tests {var} along the other axis: it has {used}, while in the pointer {var} "
                        "numbers the {axis:axis} ({right}); write {right}",
                  "ru": "маска проверяет {var} по другой оси: в ней {used}, а в адресе {var} нумерует "
                        "{axis:axis} ({right}); пишите {right}"},
    "mask_axis_shared": {"en": "this access reuses `{mask}`, whose axes are the other way round here: give it its "
                               "own mask, mask={own}",
                         "ru": "этот доступ берёт маску `{mask}`, а оси у него наоборот: дайте ему свою маску, "
                               "mask={own}"},
    "same_stride": {"en": "the rows ({row}) and the columns ({col}) of the tile are both multiplied by {stride}: "
                          "multiply {name} by {right}",
                    "ru": "и строки ({row}), и столбцы ({col}) тайла умножаются на {stride}: {name} умножайте на "
                          "{right}"},
    "same_stride_generic": {"en": "the rows ({row}) and the columns ({col}) of the tile are both multiplied by "
                                  "{stride}: each axis needs its own stride",
                            "ru": "и строки ({row}), и столбцы ({col}) тайла умножаются на {stride}: у каждой оси "
                                  "свой шаг"},
    "broadcast_axis": {"en": "the vector {var} is loaded at {idx}, which numbers the {axis:axis} of the tile ({idx_form}), "
                             "but it is broadcast as {used}: write {right}",
                       "ru": "вектор {var} загружен по {idx}, а {idx} нумерует {axis:axis} тайла ({idx_form}), но "
                             "растягивается как {used}: пишите {right}"},
    "to_int64": {"en": "in int32, {expr} overflows (it reaches {value:num}); compute it in 64 bits: {right}",
                 "ru": "в int32 {expr} переполняется (доходит до {value:num}); считайте в 64 битах: {right}"},
    "negative_offset": {"en": "the offset {expr} goes negative (down to {value:num}) on these lanes; mask them: {call}",
                        "ru": "смещение {expr} становится отрицательным (до {value:num}) на этих дорожках; закройте их "
                              "маской: {call}"},
    "descriptor_reach": {"en": "the descriptor's shape {shape} and strides {strides} reach past the array; elements "
                               "inside the shape must lie inside it",
                         "ru": "форма {shape} и шаги {strides} дескриптора выходят за массив; элементы внутри формы "
                               "должны лежать внутри него"},
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
                          "same elements: offset it by the program's share, {example}, as the kernel's other "
                          "accesses do: {call}",
                    "ru": "адрес записи не зависит от tl.program_id, поэтому все программы пишут в одни и те же "
                          "элементы: сдвиньте его на долю программы, {example}, как в других обращениях ядра: "
                          "{call}"},
    "race_own_row": {"en": "the store's address does not depend on tl.program_id, so every program writes the same "
                           "elements; `{tensor}` has one row per program ({rows:num} {rows:row|rows}): offset the store by the "
                           "program's row, {example}: {call}",
                     "ru": "адрес записи не зависит от tl.program_id, поэтому все программы пишут в одни и те же "
                           "элементы; в `{tensor}` по строке на программу ({rows:num} {rows:строка|строки|строк}): сдвиньте запись на "
                           "строку программы, {example}: {call}"},
    "race_no_program_id": {"en": "the kernel never reads tl.program_id, so every program writes the same "
                                 "elements: start each program's block at its id, {var} = {right}",
                           "ru": "ядро не читает tl.program_id, поэтому все программы пишут в одни и те же "
                                 "элементы: начинайте блок каждой программы с её номера, {var} = {right}"},
    "race_reduction": {"en": "every program stores its {reduction} into the same element, so only one survives: "
                             "combine them atomically, {call}",
                       "ru": "каждая программа записывает свой {reduction} в один и тот же элемент, и остаётся "
                             "только один: объединяйте их атомарно, {call}"},
    "race_program_axis": {"en": "on the grid {grid}, {call} is always 0: every program gets the same block; the "
                                "programs are numbered along another axis, {right}",
                          "ru": "на сетке {grid} {call} всегда равен 0: все программы получают один и тот же блок; "
                                "программы пронумерованы по другой оси, {right}"},
    "race_shared_generic": {"en": "the store's address does not depend on tl.program_id, so every program writes "
                                  "the same elements: offset it by the program's share, or, if the programs are "
                                  "meant to add up, use tl.atomic_add",
                            "ru": "адрес записи не зависит от tl.program_id, поэтому все программы пишут в одни и "
                                  "те же элементы: сдвиньте его на долю программы или, если вклады нужно сложить, "
                                  "используйте tl.atomic_add"},
    "race_unmasked": {"en": "this tl.store has no mask: the lanes past the end write into the next program's "
                            "elements; mask them: {call}",
                      "ru": "у этого tl.store нет маски: дорожки за концом пишут в элементы соседней программы; "
                            "закройте их маской: {call}"},
    "race_stride": {"en": "the programs' blocks overlap: {expr} steps by {stride}, less than a block of "
                          "{block:lane}; step by the block: {right}",
                    "ru": "блоки программ перекрываются: {expr} шагает на {stride}, а в блоке {block:lane}; "
                          "шагайте на блок: {right}"},
    "race_row_stride": {"en": "the tile's rows overlap: {expr} places rows {stride} apart, but a row holds {bound} "
                              "elements ({var} < {bound}); place them {bound} apart: {right}",
                        "ru": "строки тайла перекрываются: {expr} ставит строки через {stride}, а в строке {bound} "
                              "элементов ({var} < {bound}); ставьте их через {bound}: {right}"},
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
    # why a fix carries no edit (Suggestion.reason)
    "reason_no_source": {"en": "(no automatic fix: the kernel's source is not available)",
                         "ru": "(автоматического исправления нет: исходный код ядра недоступен)"},
    "reason_loaded_pointer": {"en": "(no automatic fix: the pointer is loaded from memory, so the offsets are "
                                    "data, not code)",
                              "ru": "(автоматического исправления нет: указатель загружен из памяти, смещения — "
                                    "это данные, а не код)"},
    "reason_helper": {"en": "(no automatic fix: the pointer is built in a helper function; fix it where the "
                            "offsets are made)",
                      "ru": "(автоматического исправления нет: указатель строится во вспомогательной функции; "
                            "исправьте там, где получаются смещения)"},
    "reason_no_bound": {"en": "(no automatic fix: the kernel compares its offsets with no bound and no argument "
                              "equals the tensor's size)",
                        "ru": "(автоматического исправления нет: ядро ни с чем не сравнивает смещения, и ни один "
                              "аргумент не равен размеру тензора)"},
    "reason_no_bound_var": {"en": "(no automatic fix: the kernel compares {var} with nothing and no argument "
                                  "equals the tensor's size)",
                            "ru": "(автоматического исправления нет: ядро ни с чем не сравнивает {var}, и ни один "
                                  "аргумент не равен размеру тензора)"},
    "reason_bound_argument": {"en": "(no automatic fix: {bound} is an argument, and the launch passed "
                                    "{passed:num}: check the launch)",
                              "ru": "(автоматического исправления нет: {bound} — аргумент, и запуск передал "
                                    "{passed:num}: проверьте запуск)"},
    "reason_mask_bound": {"en": "(no automatic fix: the mask is there, and which bound or stride is meant only "
                                "the kernel's author knows)",
                          "ru": "(автоматического исправления нет: маска есть, а какая граница или шаг имелись в "
                                "виду, знает только автор ядра)"},
    "reason_stride_unknown": {"en": "(no automatic fix: no parameter's name says which stride is the other "
                                    "axis's)",
                              "ru": "(автоматического исправления нет: по именам параметров не видно, какой шаг "
                                    "относится к другой оси)"},
    "reason_race_intent": {"en": "(no automatic fix: which elements each program should write is the kernel's "
                                 "intent)",
                           "ru": "(автоматического исправления нет: какие элементы пишет каждая программа, "
                                 "решает замысел ядра)"},
}
