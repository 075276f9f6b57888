"""Texts of diagnostics Triton's compiler would give: the kernel's code breaks a rule of the language (types,
shapes, names, loops), in Triton's own words in English."""
from __future__ import annotations

COMPILE = {
    "compile_error": {
        "head": {"en": "{message}", "ru": "Triton не компилирует эту строку ядра `{kernel}`: {message}"},
    },
    "loop_carried_type": {
        "head": {"en": "Loop-carried variable {name} has initial type {before} but is re-assigned to {after} in "
                       "loop! Please make sure that the type stays consistent.",
                 "ru": "переменная цикла {name} до цикла имеет тип {before} (строка {first_line}), а в цикле ей "
                       "присваивается {after} (строка {line}): тип переменной цикла должен оставаться тем же"},
    },
    "name_error": {
        "head": {"en": "{name} is not defined", "ru": "имя {name} не определено"},
    },
    "arange_power_of_two": {
        "head": {"en": "arange's range must be a power of 2", "ru": "длина tl.arange должна быть степенью двойки"},
        "body": {"en": "tl.arange({start}, {end}) has {size} elements",
                 "ru": "в tl.arange({start}, {end}) {size} элементов"},
    },
    "broadcast": {
        "head": {"en": "Cannot make_shape_compatible: incompatible dimensions at index {index}: {left} and {right}",
                 "ru": "формы несовместимы: по оси {index} размеры {left} и {right} не совпадают и ни один не "
                       "равен 1"},
    },
    "syntax_error": {
        "head": {"en": "{message}", "ru": "синтаксическая ошибка: {message}"},
    },
    "static_assert": {
        "head": {"en": "{message}", "ru": "не выполнено tl.static_assert: {message}"},
    },
}

COMPILE_SUGGESTIONS = {
    "loop_first_assigned": {"en": "`{name}` gets its value before the loop at line {first_line}: `{first_source}`",
                            "ru": "`{name}` получает значение до цикла в строке {first_line}: `{first_source}`"},
    "loop_type_fix": {"en": "give {name} its loop type before the loop: {right}",
                      "ru": "задайте {name} тип цикла до цикла: {right}"},
    "arange_fix": {"en": "use a power-of-2 block ({pow2}) and mask the extra lanes",
                   "ru": "возьмите блок длиной в степень двойки ({pow2}) и закройте лишние дорожки маской"},
}
