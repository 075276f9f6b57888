"""Texts of diagnostics about tensor descriptors (device `tl.make_tensor_descriptor` and host
`TensorDescriptor`), block pointers and reinterpreted buffers: Triton's wording for its compile-time rules,
and the TMA unit's run-time alignment rules a GPU enforces by stopping the kernel."""
from __future__ import annotations

DESCRIPTOR = {
    "descriptor_base_alignment": {"head": {"en": "tl.make_tensor_descriptor: base must be 16-byte aligned",
                                           "ru": "tl.make_tensor_descriptor: базовый адрес должен быть выровнен на "
                                                 "16 байт"},
                                  "body": {"en": "the base address is {past} bytes past a 16-byte boundary "
                                                 "(`{tensor}` + {elements} elements)",
                                           "ru": "базовый адрес на {past} байт дальше границы 16 байт (`{tensor}` "
                                                 "+ {elements} элементов)"}},
    # a base pointer into no known tensor
    "descriptor_address_alignment": {"head": {"en": "tl.make_tensor_descriptor: base must be 16-byte aligned",
                                              "ru": "tl.make_tensor_descriptor: базовый адрес должен быть выровнен "
                                                    "на 16 байт"},
                                     "body": {"en": "the base address is {past} bytes past a 16-byte boundary",
                                              "ru": "базовый адрес на {past} байт дальше границы 16 байт"}},
    "descriptor_stride_alignment": {"head": {"en": "tl.make_tensor_descriptor: stride must be 16-byte aligned",
                                             "ru": "tl.make_tensor_descriptor: шаг должен быть кратен 16 байтам"},
                                    "body": {"en": "strides[{dim}] = {stride} elements = {bytes} bytes, not a "
                                                   "multiple of 16",
                                             "ru": "`strides[{dim}]` = {stride} элементов = {bytes} байт, это не "
                                                   "кратно 16"}},
    "descriptor_offset_alignment": {"head": {"en": "tensor descriptor {op}: the innermost offset must be 16-byte "
                                                   "aligned",
                                             "ru": "дескриптор тензора, `{op}`: самое внутреннее смещение должно "
                                                   "быть кратно 16 байтам"},
                                    "body": {"en": "offsets[{dim}] = {offset} elements of {dtype} = {bytes} bytes, "
                                                   "not a multiple of 16; on the GPU the TMA unit stops the kernel "
                                                   "(CUDA error: an illegal instruction was encountered)",
                                             "ru": "`offsets[{dim}]` = {offset} элементов {dtype} = {bytes} байт, "
                                                   "это не кратно 16; на GPU блок TMA останавливает ядро (`CUDA error: "
                                                   "an illegal instruction was encountered`)"}},
    "descriptor_ndim": {"head": {"en": "Expected 1 <= ndim <= 5 but got {ndim} dimensions",
                                 "ru": "у дескриптора должно быть от 1 до 5 осей, а их {ndim}"}},
    "descriptor_strides_count": {"head": {"en": "Expected {ndim} strides but got {count}",
                                          "ru": "нужно {ndim} шагов (strides), а передано {count}"}},
    "descriptor_block_rank": {"head": {"en": "Expected block_shape to have {ndim} dimensions but got {count}",
                                       "ru": "у block_shape должно быть {ndim} осей, а их {count}"}},
    "descriptor_block_bytes": {"head": {"en": "Descriptor block shape must have at least 16 bytes in the last "
                                              "dimension, but got {size} * {itemsize} = {bytes} bytes",
                                        "ru": "последняя ось блока дескриптора должна занимать не меньше 16 байт, "
                                              "а она {size} * {itemsize} = {bytes} байт"}},
    "descriptor_last_stride_runtime": {"head": {"en": "Tensor descriptor last dim must be 1 but got a runtime value "
                                                      "({type}); pass 1 (a literal, or an integer argument equal to 1)",
                                                "ru": "последний шаг дескриптора должен быть 1, а передано "
                                                      "значение времени выполнения ({type}); передайте 1 (литерал или "
                                                      "целый аргумент, равный 1)"}},
    "descriptor_last_stride": {"head": {"en": "Tensor descriptor last dim must be 1 but got {stride}",
                                        "ru": "последний шаг дескриптора должен быть 1, а он {stride}"}},
    "descriptor_base": {"head": {"en": "tl.make_tensor_descriptor: `base` must be a scalar pointer",
                                 "ru": "tl.make_tensor_descriptor: `base` должен быть одним указателем, а не блоком"}},
    "descriptor_integers": {"head": {"en": "tensor descriptor {what} must be integers, got {type}",
                                     "ru": "`{what}` дескриптора должны быть целыми, а получено {type}"}},
    "padding_option": {"head": {"en": "Padding option {option} not supported",
                                "ru": "вариант заполнения {option} не поддерживается"}},
    "padding_nan_block": {"head": {"en": "Padding option `nan` is not supported for integer blocks",
                                   "ru": "заполнение `nan` невозможно для целочисленных блоков"}},
    "padding_nan_block_pointer": {"head": {"en": "Padding option `nan` is not supported for integer block pointers",
                                           "ru": "заполнение `nan` невозможно для целочисленных блочных указателей"}},
    "host_descriptor_base": {"head": {"en": "TensorDescriptor base must be a NumPy array, a torch CPU tensor or a "
                                            "minitriton.Buffer, got {type}",
                                      "ru": "основой TensorDescriptor должен быть массив NumPy, тензор torch на "
                                            "CPU или minitriton.Buffer, а получено {type}"}},
    "block_pointer_range64": {"head": {"en": "Block pointers only support 64 bit `shape/strides`, got a value {value} "
                                             "which is out of the range",
                                       "ru": "форма и шаги блочного указателя должны помещаться в 64 бита, а "
                                             "значение {value} не помещается"}},
    "block_pointer_range32": {"head": {"en": "Block pointers only support 32 bit `offsets/block_shape`, got a value "
                                             "{value} which is out of the range",
                                       "ru": "смещения и размеры блока должны помещаться в 32 бита, а значение "
                                             "{value} не помещается"}},
    "block_pointer_scalar": {"head": {"en": "Expected a scalar in shape/strides/offsets",
                                      "ru": "в `shape`, `strides` и `offsets` нужны скаляры, а не блоки"}},
    "block_pointer_integer": {"head": {"en": "Expected an integer scalar type in shape/strides/offsets",
                                       "ru": "в `shape`, `strides` и `offsets` нужны целые скаляры"}},
    "block_pointer_int64_offsets": {"head": {"en": "Block pointers only support 32 bit `offsets/block_shape`, add a "
                                                   "`.to(tl.int32)` or use regular indexing for 64 bit support",
                                             "ru": "смещения блока должны быть 32-битными: добавьте "
                                                   "`.to(tl.int32)` или для 64-битных смещений используйте обычную "
                                                   "адресацию указателями"}},
    "block_pointer_element": {"head": {"en": "Unsupported element type in shape/strides/offsets: {type}",
                                       "ru": "в `shape`, `strides` и `offsets` не может быть значения типа {type}"}},
    "block_shape_constants": {"head": {"en": "Expected a list of constant integers (`int32_t` range) in `block_shape`",
                                       "ru": "`block_shape` должен быть списком целых констант (в пределах "
                                             "`int32_t`)"}},
    "block_pointer_order": {"head": {"en": "Expected a permutation of (0, 1, ..., len(order)-1) in order",
                                     "ru": "`order` должен быть перестановкой (0, 1, ..., len(order)-1)"}},
    "block_pointer_lengths": {"head": {"en": "Expected shape/strides/offsets/block_shape to have the same length",
                                       "ru": "у `shape`, `strides`, `offsets` и `block_shape` должна быть "
                                             "одинаковая длина"}},
    "advance_count": {"head": {"en": "tl.advance: expected {expected} offsets, but got {count}",
                               "ru": "tl.advance: нужно смещений: {expected}, а передано {count}"}},
    "boundary_check_duplicate": {"head": {"en": "Duplicate dimension in `boundary_check`",
                                          "ru": "в `boundary_check` ось повторяется"}},
    "block_value_shape": {"head": {"en": "Block shape({block}) and value shape({value}) mismatch",
                                   "ru": "форма блока {block} не совпадает с формой значения {value}"}},
    "block_value_type": {"head": {"en": "Block element type({block}) and value element type({value}) mismatch",
                                  "ru": "тип элементов блока {block} не совпадает с типом значения {value}"}},
    "descriptor_atomic_dtype": {"head": {"en": "Unsupported dtype",
                                         "ru": "этот тип не поддерживается атомарной операцией дескриптора"}},
    "descriptor_indexing": {"head": {"en": "descriptor {op} only supports 2D indexing, but got {count}",
                                     "ru": "`{op}` дескриптора принимает ровно два индекса, а передано {count}"}},
    "descriptor_offsets_count": {"head": {"en": "expected {ndim} offsets, but got {count}",
                                          "ru": "нужно смещений: {ndim}, а передано {count}"}},
    "descriptor_2d": {"head": {"en": "descriptor must be 2D, but got {block_shape}",
                               "ru": "дескриптор должен быть двумерным, а его блок {block_shape}"}},
    "descriptor_one_row": {"head": {"en": "descriptor block must have 1 row, but got {block_shape}",
                                    "ru": "в блоке дескриптора должна быть одна строка, а он {block_shape}"}},
    "descriptor_x_offsets": {"head": {"en": "x offsets must be 1D, but got {shape}",
                                      "ru": "смещения строк должны быть одномерным блоком, а их форма {shape}"}},
    "descriptor_rows": {"head": {"en": "descriptor {op} must have at least 8 rows, but got {shape}",
                                 "ru": "`{op}` дескриптора требует не меньше 8 строк, а форма смещений {shape}"}},
    "descriptor_columns": {"head": {"en": "descriptor {op} of {dtype} must have at least {min_cols} columns, but got "
                                          "{cols}",
                                    "ru": "`{op}` дескриптора типа {dtype} требует не меньше {min_cols} столбцов, "
                                          "а их {cols}"}},
    "size_one_tensor": {"head": {"en": "only accepts size-1 tensor", "ru": "здесь нужен блок из одного элемента"}},
    "host_descriptor_rank": {"head": {"en": "rank mismatch: {descriptor}",
                                      "ru": "у `shape`, `strides` и `block_shape` дескриптора разное число осей: "
                                            "`{descriptor}`"}},
    "host_descriptor_rank_zero": {"head": {"en": "rank must not be zero",
                                           "ru": "у дескриптора должна быть хотя бы одна ось"}},
    "host_descriptor_rank_max": {"head": {"en": "rank cannot be more than 5",
                                          "ru": "у дескриптора не может быть больше 5 осей"}},
    "host_descriptor_base_alignment": {"head": {"en": "base must be 16-byte aligned",
                                                "ru": "начало тензора дескриптора должно быть выровнено на 16 байт"}},
    "host_descriptor_stride_alignment": {"head": {"en": "strides must be 16-byte aligned",
                                                  "ru": "шаги (strides) дескриптора, кроме последнего, должны быть "
                                                        "кратны 16 байтам"}},
    "host_descriptor_shape": {"head": {"en": "shape must be positive",
                                       "ru": "все размеры формы дескриптора должны быть положительны"}},
    "host_descriptor_contiguous": {"head": {"en": "Last dimension must be contiguous",
                                            "ru": "последняя ось дескриптора должна идти подряд (шаг 1)"}},
    "host_descriptor_padding": {"head": {"en": "Illegal value for padding", "ru": "недопустимое значение padding"}},
    "host_descriptor_nan": {"head": {"en": "Padding option `nan` is only supported for floating point tensors",
                                     "ru": "заполнение `nan` возможно только для тензоров с плавающей точкой"}},
    "host_descriptor_array": {"head": {"en": "TensorDescriptor.from_tensor needs an array, got {type}",
                                       "ru": "TensorDescriptor.from_tensor нужен массив, а получено {type}"}},
    "block_pointer_base": {"head": {"en": "Expected `base` to be a pointer type (but not a block pointer type or "
                                          "others)",
                                    "ru": "`base` должен быть указателем (а не блочным указателем или чем-то "
                                          "другим)"}},
    "advance_base": {"head": {"en": "tl.advance expects a block pointer (made by tl.make_block_ptr), got {base}",
                              "ru": "tl.advance ждёт блочный указатель (из tl.make_block_ptr), а получено {base}"}},
    "block_pointer_mask": {"head": {"en": "`mask` and `other` arguments cannot be specified for loading block pointers",
                                    "ru": "при загрузке через блочный указатель нельзя задавать `mask` и `other`: "
                                          "границы задаёт `boundary_check`"}},
    "buffer_storage": {"head": {"en": "a {dtype} Buffer stores {storage}, got {given}",
                                "ru": "Buffer типа {dtype} хранит {storage}, а получено {given}"}},
    "reinterpret_type": {"head": {"en": "Cannot reinterpret a {type}.",
                                  "ru": "объект типа {type} нельзя переинтерпретировать"}},
    "reinterpret_base": {"head": {"en": "cannot reinterpret a {type}",
                                  "ru": "основу типа {type} нельзя переинтерпретировать"}},
    "reinterpret_size": {"head": {"en": "cannot reinterpret {given} elements ({given_bytes} bytes) as {dtype} "
                                        "({bytes} bytes)",
                                  "ru": "элементы {given} ({given_bytes} байт) нельзя переинтерпретировать как "
                                        "{dtype} ({bytes} байт)"}},
}

DESCRIPTOR_SUGGESTIONS = {
    "descriptor_base_fix": {"en": "start the descriptor at an element whose byte offset is a multiple of 16",
                            "ru": "начинайте дескриптор с элемента, смещение которого в байтах кратно 16"},
    "descriptor_stride_fix": {"en": "pad the rows so each leading stride is a multiple of 16 bytes",
                              "ru": "дополните строки так, чтобы каждый внешний шаг был кратен 16 байтам"},
    "descriptor_offset_fix": {"en": "make the last offset a multiple of {per} elements, or read unaligned columns "
                                    "with tl.load through a pointer block",
                              "ru": "сделайте последнее смещение кратным {per} элементам или читайте невыровненные "
                                    "столбцы через tl.load по блоку указателей"},
}
