"""Texts of diagnostics about block shapes: broadcasting, `tl.arange`, shapes that are not powers of 2 or too
large, reshapes, permutations, indexing, joining and splitting blocks. English is Triton's wording."""
from __future__ import annotations

SHAPE = {
    "broadcast": {"head": {"en": "Cannot make_shape_compatible: incompatible dimensions at index {index}: {left} and "
                                 "{right}",
                           "ru": "формы несовместимы: по оси {index} размеры {left} и {right} не совпадают и ни "
                                 "один не равен 1"}},
    "broadcast_to_size": {"head": {"en": "Cannot broadcast, the expanded size of the tensor ({shape}) must match the "
                                         "existing size ({target})",
                                   "ru": "нельзя расширить блок формы {shape} до формы {target}: размеры не "
                                         "совпадают"}},
    "broadcast_rank": {"head": {"en": "Cannot broadcast, rank mismatch: {left}, {right}",
                                "ru": "нельзя расширить блок: у форм {left} и {right} разное число осей"}},
    "broadcast_dimension": {"head": {"en": "Cannot broadcast, the expanded size of the tensor ({target}) must match "
                                           "the existing size ({size}) at non-singleton dimension {index}: {left}, "
                                           "{right}",
                                     "ru": "нельзя расширить блок формы {left} до формы {right}: по оси {index} "
                                           "размер {size} не равен 1 и не совпадает с {target}"}},
    # Triton's text has no closing backtick after the type
    "shape_element_type": {"head": {"en": "Shape element {index} must have type `constexpr[int]`, got "
                                          "`constexpr[{type}]",
                                    "ru": "элемент формы {index} должен иметь тип `constexpr[int]`, а получен "
                                          "`constexpr[{type}]`"}},
    "shape_power_of_two": {"head": {"en": "Shape element {index} must be a power of 2",
                                    "ru": "элемент формы {index} должен быть степенью двойки"}},
    "numel_too_large": {"head": {"en": "numel ({numel}) exceeds triton maximum tensor numel ({limit})",
                                 "ru": "в блоке {numel} элементов, а Triton допускает не больше {limit}"}},
    "arange_constexpr": {"head": {"en": "arange's arguments must be of type tl.constexpr",
                                  "ru": "аргументы tl.arange должны быть константами времени компиляции "
                                        "(tl.constexpr)"}},
    "arange_int32": {"head": {"en": "arange must fit in int32", "ru": "границы tl.arange должны помещаться в int32"}},
    "arange_empty": {"head": {"en": "arange's end argument must be greater than the start argument",
                              "ru": "конец tl.arange должен быть больше начала"}},
    "arange_power_of_two": {"head": {"en": "arange's range must be a power of 2",
                                     "ru": "длина диапазона tl.arange должна быть степенью двойки"}},
    "full_scalar": {"head": {"en": "tl.full's value must be a scalar", "ru": "значение tl.full должно быть скаляром"}},
    "tensor_index": {"head": {"en": "unsupported tensor index: {item} (only None and full slices `:` are allowed; use "
                                    "tl.reshape, tl.where or a masked load to pick elements)",
                              "ru": "такой индекс блока не поддерживается: {item} (допустимы только None и полные "
                                    "срезы `:`; чтобы выбрать элементы, используйте tl.reshape, tl.where или загрузку "
                                    "с маской)"}},
    "reshape_numel": {"head": {"en": "reshape() cannot change total number of elements in tensor",
                               "ru": "reshape() не может менять общее число элементов блока"}},
    "permute_length": {"head": {"en": "permute dims must have the same length as input shape, got {ndim} and {given}",
                                "ru": "в permute нужно перечислить все оси: у блока их {ndim}, а передано {given}"}},
    "permute_order": {"head": {"en": "permute dims must be a permutation of 0, 1, ..., n-1, but were {dims}",
                               "ru": "оси permute должны быть перестановкой 0, 1, ..., n-1, а переданы {dims}"}},
    "trans_rank": {"head": {"en": "tl.trans invoked with a 0- or 1-dimensional tensor",
                            "ru": "tl.trans вызван для скаляра или одномерного блока"}},
    "invalid_axis": {"head": {"en": "invalid axis {axis}. Expected {low} <= axis < {ndim}",
                              "ru": "недопустимая ось {axis}: нужна ось от {low} до {ndim} (не включая)"}},
    "expand_dims_duplicate": {"head": {"en": "expand_dims received duplicate axes, normalized axes = {axes}",
                                       "ru": "в expand_dims оси повторяются (после нормализации: {axes})"}},
    "cat_shape": {"head": {"en": "tl.cat requires tensors of the same shape, got {left} and {right}",
                           "ru": "tl.cat соединяет блоки одной формы, а даны {left} и {right}"}},
    "cat_operands": {"head": {"en": "tl.cat takes two blocks of one dtype (1-D with can_reorder=True)",
                              "ru": "tl.cat принимает два блока одного типа (одномерных при can_reorder=True)"}},
    "split_scalar": {"head": {"en": "split requires a non-scalar tensor", "ru": "split нельзя применить к скаляру"}},
    "split_last_dim": {"head": {"en": "expected last dimension to be 2 for split, got {size}",
                                "ru": "для split последняя ось должна иметь размер 2, а она {size}"}},
    "unsplat": {"head": {"en": "can only unsplat single-element tensors",
                         "ru": "превратить в скаляр можно только блок из одного элемента"}},
    "histogram_rank": {"head": {"en": "histogram only supports 1D input",
                                "ru": "tl.histogram принимает только одномерный блок"}},
    "histogram_type": {"head": {"en": "histogram only supports integer input",
                                "ru": "tl.histogram принимает только целые"}},
    "gather_index_type": {"head": {"en": "index must be an integer tensor",
                                   "ru": "индекс tl.gather должен быть целым блоком"}},
    "gather_rank": {"head": {"en": "source and index tensors must have the same rank",
                             "ru": "у источника и индекса tl.gather должно быть одинаковое число осей"}},
    "gather_axis": {"head": {"en": "gather axis {axis} must be < source rank ({rank})",
                             "ru": "ось tl.gather {axis} должна быть меньше числа осей источника ({rank})"}},
    "gather_dims": {"head": {"en": "index dim {axis} must match the corresponding source dim",
                             "ru": "размеры индекса tl.gather по осям, кроме оси {axis}, должны совпадать с "
                                   "размерами источника"}},
    "no_attribute": {"head": {"en": "'{type}' object has no attribute '{name}'",
                              "ru": "у объекта типа `{type}` нет атрибута `{name}`"}},
}

SHAPE_SUGGESTIONS: dict = {}
