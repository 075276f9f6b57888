"""Texts of diagnostics about types: operands no operation accepts, scalars a type cannot hold, casts, type
promotion, `tl.dot`'s shape and dtype rules, dtype rules of math and reductions, Philox's integer rules, fp8.
English is Triton's wording."""
from __future__ import annotations

TYPES = {
    "incompatible_types": {"head": {"en": "invalid operands of type {left} and {right}",
                                    "ru": "операнды типов {left} и {right} нельзя использовать вместе в этой "
                                          "операции"}},
    "operand_type": {"head": {"en": "unsupported operand type {type} for a tl.tensor operation",
                              "ru": "значение типа `{type}` нельзя использовать в операции с блоком tl.tensor"}},
    "unsigned_negative": {"head": {"en": "Cannot perform a binary operation between an unsigned tensor and a negative "
                                         "scalar. Perform a explicit cast on one of them.",
                                   "ru": "нельзя выполнить операцию над беззнаковым блоком и отрицательным числом: "
                                         "явно приведите одно из них к другому типу (`.to(...)`)"}},
    "scalar_out_of_range": {"head": {"en": "Scalar {value} is out of range for type {dtype}",
                                     "ru": "число {value} не помещается в тип {dtype}"}},
    "add_pointers": {"head": {"en": "cannot add pointers together", "ru": "указатели нельзя складывать друг с другом"}},
    "unexpected_type": {"head": {"en": "unexpected type {dtype}", "ru": "неожиданный тип {dtype}"}},
    "unexpected_types": {"head": {"en": "unexpected type {left} and {right}",
                                  "ru": "неожиданная пара типов {left} и {right}"}},
    "unary_type": {"head": {"en": "wrong type argument to unary {op:unary} ({dtype})",
                            "ru": "унарный {op:unary} не применяется к типу {dtype}"}},
    "power_operator": {"head": {"en": "`**` is not supported on tl.tensor; use tl.exp2/tl.log2, or libdevice.pow",
                                "ru": "оператор `**` для блоков tl.tensor не поддерживается: используйте "
                                      "tl.exp2/tl.log2 или libdevice.pow"}},
    "clamp_type": {"head": {"en": "Unexpected dtype {dtype}. Only floating point clamp is supported",
                            "ru": "тип {dtype} не подходит: tl.clamp работает только с числами с плавающей точкой"}},
    "signedness": {"head": {"en": "Cannot use /, #, or % with {left} and {right} because they have different "
                                  "signedness;this is unlikely to result in a useful answer. Cast them to the same "
                                  "signedness.",
                            "ru": "операции /, // и % нельзя применять к {left} и {right}: у них разная "
                                  "знаковость; приведите их к одной"}},
    "rounding_mode": {"head": {"en": "Invalid rounding mode: {rounding}. Supported rounding modes are 'rtne' and "
                                     "'rtz'.",
                               "ru": "неизвестный режим округления {rounding}: поддерживаются 'rtne' и 'rtz'"}},
    "rounding_not_truncating": {"head": {"en": "fp_downcast_rounding should be set only for truncating fp "
                                               "conversions. Source scalar type is {src} and destination type is {dst}",
                                         "ru": "fp_downcast_rounding задают только при сужающем приведении чисел с "
                                               "плавающей точкой, а здесь {src} приводится к {dst}"}},
    "bitcast_size": {"head": {"en": "Cannot bitcast data-type of size {src} to data-type of size {dst}",
                              "ru": "bitcast невозможен: размер типа {src} бит, а нужен {dst} бит"}},
    "pointer_cast": {"head": {"en": "cannot cast a pointer to {dst}: only int64 and int1 hold a pointer",
                              "ru": "указатель нельзя привести к {dst}: указатель помещается только в int64 и int1"}},
    "cast_to_pointer": {"head": {"en": "cannot cast {src} to a pointer",
                                 "ru": "тип {src} нельзя привести к указателю"}},
    "cast": {"head": {"en": "cannot cast {src} to {dst}", "ru": "тип {src} нельзя привести к {dst}"}},
    "element_type": {"head": {"en": "element_ty has type `{type}`; expected `dtype`.",
                              "ru": "element_ty имеет тип `{type}`, а нужен `dtype`"}},
    "dtype_is_void": {"head": {"en": "Not implemented", "ru": "dtype.is_void() в Triton не реализован"}},
    "unknown_type": {"head": {"en": "unknown type {name}", "ru": "неизвестный тип {name}"}},
    "array_dtype": {"head": {"en": "minitriton cannot pass arrays of dtype {dtype} to a kernel; supported: bool, "
                                   "int8..int64, uint8..uint64, float16, bfloat16, float32, float64",
                             "ru": "minitriton не может передать ядру массив типа {dtype}; поддерживаются bool, "
                                   "int8..int64, uint8..uint64, float16, bfloat16, float32, float64"}},
    "integer_too_large": {"head": {"en": "Nonrepresentable integer {value}.",
                                   "ru": "целое {value} не помещается ни в один тип Triton"}},
    "scalar_type": {"head": {"en": "unsupported scalar type {type}", "ru": "скаляр типа `{type}` не поддерживается"}},
    "dtype_expected": {"head": {"en": "Expected dtype {allowed} but got {dtype}",
                                "ru": "ожидался тип из {allowed}, а получен {dtype}"}},
    "fdiv_type": {"head": {"en": "both operands of fdiv must have floating scalar type",
                           "ru": "оба операнда fdiv должны быть числами с плавающей точкой"}},
    "xor_sum_type": {"head": {"en": "xor_sum only supported for integers",
                              "ru": "tl.xor_sum работает только с целыми"}},
    "integer_same_dtype": {"head": {"en": "operands must share one integer dtype, got {left} and {right}",
                                    "ru": "операнды должны быть целыми одного типа, а они {left} и {right}"}},
    "expected_integer": {"head": {"en": "expected an integer array, got dtype {dtype}",
                                  "ru": "нужен массив целых, а получен тип {dtype}"}},
    "expected_integer_dtype": {"head": {"en": "expected an integer dtype, got {dtype}",
                                        "ru": "нужен целый тип, а получен {dtype}"}},
    "shift_type": {"head": {"en": "expected integer shift amounts, got dtype {dtype}",
                            "ru": "величина сдвига должна быть целой, а её тип {dtype}"}},
    "expected_float": {"head": {"en": "expected a float array, got dtype {dtype}",
                                "ru": "нужен массив чисел с плавающей точкой, а получен тип {dtype}"}},
    "rounding_choice": {"head": {"en": "rounding mode must be 'rtne' or 'rtz', got {mode}",
                                 "ru": "режим округления должен быть 'rtne' или 'rtz', а передан {mode}"}},
    "dot_scalar": {"head": {"en": "dot operands must be block tensors (not scalars)",
                            "ru": "операнды tl.dot должны быть блоками, а не скалярами"}},
    "dot_operand_dtype": {"head": {"en": "Unsupported {side} dtype {dtype}",
                                   "ru": "tl.dot не принимает операнд (`{side}`) типа {dtype}"}},
    "dot_same_dtype": {"head": {"en": "Both operands must be same dtype. Got {left} and {right}",
                                "ru": "операнды tl.dot должны быть одного типа, а они {left} и {right}: приведите "
                                      "один к другому (`.to(...)`)"}},
    "dot_precision": {"head": {"en": "input_precision must be one of {allowed}. Got {given}",
                               "ru": "input_precision должен быть одним из {allowed}, а передан {given}"}},
    "dot_rank": {"head": {"en": "input and other must have equal ranks >= 2",
                          "ru": "операнды tl.dot должны быть одного ранга, не меньше 2"}},
    "dot_batch": {"head": {"en": "input and other must have equal batch shapes",
                           "ru": "у операндов tl.dot должны совпадать пакетные оси"}},
    "dot_scaled_rank": {"head": {"en": "Both inputs must be either 2D or 3D; (lhs: {left} vs rhs: {right})",
                                 "ru": "операнды tl.dot_scaled должны быть оба двумерными или оба трёхмерными "
                                       "(формы {left} и {right})"}},
    "dot_reduction": {"head": {"en": "input and other must have equal reduction dimensions: First input shape "
                                     "({left}) and second input shape {right} are not compatible for matmul (second "
                                     "index of first shape ({k_left}) must be equal to first index of second shape "
                                     "({k_right})",
                               "ru": "у операндов tl.dot не совпадает ось свёртки: формы {left} и {right}, "
                                     "последний размер первого ({k_left}) должен равняться первому размеру второго "
                                     "({k_right})"}},
    "dot_minimum": {"head": {"en": "Input shapes should have M >= {m}, N >= {n} and K >= {k}",
                             "ru": "формы операндов tl.dot слишком малы: нужно M >= {m}, N >= {n} и K >= {k}"}},
    "dot_int8": {"head": {"en": "only int8 supported!", "ru": "из целых типов tl.dot принимает только int8"}},
    "dot_bf16_out": {"head": {"en": "out_dtype=bfloat16 is unsupported. Please use out_dtype=float32/float16 and cast "
                                    "with `.to(tl.bfloat16)`",
                              "ru": "out_dtype=bfloat16 не поддерживается: возьмите out_dtype=float32/float16 и "
                                    "приведите результат через `.to(tl.bfloat16)`"}},
    "dot_accumulator_shape": {"head": {"en": "accumulator shape is incompatible",
                                       "ru": "форма аккумулятора tl.dot не совпадает с формой результата"}},
    "dot_imprecise": {"head": {"en": "max_num_imprecise_acc ({given}) must be <= K ({k})",
                               "ru": "max_num_imprecise_acc ({given}) не может быть больше K ({k})"}},
    "dot_scaled_out_dtype": {"head": {"en": "Only float32 is supported for out_dtype at the moment",
                                      "ru": "tl.dot_scaled пока считает только в out_dtype=float32"}},
    "dot_scaled_format": {"head": {"en": "Invalid float format: {format}.",
                                   "ru": "формат {format} неизвестен: есть e2m1, e4m3, e5m2, bf16 и fp16"}},
    "dot_scaled_dtype": {"head": {"en": "Unexpected dtype for {format}. Got {dtype}", "ru": "формат {format} "
                                  "хранится в своём типе или в беззнаковом целом той же ширины, а не в {dtype}"}},
    "dot_scaled_reduction": {"head": {"en": "Reduction dimension should pack the same number of elements; (lhs: "
                                            "{left} vs rhs: {right})", "ru": "число элементов по оси K у операндов "
                                      "разное (формы {left} и {right}; e2m1 хранит два в байте)"}},
    "dot_scaled_factor": {"head": {"en": "scale factor must be 16 or 32. Got {factor}", "ru": "на один множитель "
                                   "масштаба приходится {factor} элементов по K, а нужно 16 или 32"}},
    "dot_scaled_scale_shape": {"head": {"en": "{side}_scale must be a tensor of shape [..., {rows}, {cols}]. Got "
                                              "{shape}", "ru": "{side}_scale должен иметь форму [..., {rows}, "
                                        "{cols}], а у него {shape}"}},
    "philox_rounds": {"head": {"en": "n_rounds must be a tl.constexpr int (tl.static_range needs it at compile time), "
                                     "got {given}",
                               "ru": "n_rounds должен быть целой константой tl.constexpr (tl.static_range нужно "
                                     "знать его при компиляции), а передано {given}"}},
    "philox_words": {"head": {"en": "philox_impl: counters and keys must be {bits}-bit integers like c0 ({first}), "
                                    "got {dtype}",
                              "ru": "philox_impl: счётчики и ключи должны быть {bits}-битными целыми, как c0 "
                                    "({first}), а передан {dtype}"}},
    "random_offsets": {"head": {"en": "'{type}' object has no attribute 'to' (the offsets of tl.randint4x must be a "
                                      "tensor, e.g. tl.arange(0, BLOCK))",
                                "ru": "смещения tl.randint4x должны быть блоком, например tl.arange(0, BLOCK), а "
                                      "передан объект типа `{type}`"}},
    "fp8_unsupported": {"head": {"en": "type {dtype} not supported in this architecture. The supported fp8 dtypes are "
                                       "{supported}",
                                 "ru": "тип {dtype} на этой архитектуре не поддерживается; поддерживаются fp8-типы "
                                       "{supported}"}},
    "fp8_constant": {"head": {"en": "'triton._C.libtriton.ir.builder' object has no attribute 'get_{dtype}'",
                              "ru": "Triton не умеет создавать ненулевые константы типа {dtype}: сначала приведите "
                                    "блок к fp16 или fp32"}},
    "philox_dtype": {"head": {"en": "dtype not supported in philox_impl",
                              "ru": "philox_impl принимает счётчики только типов uint32 и uint64"}},
    "philox_seed": {"head": {"en": "the seed of Philox must be an integer, got {dtype}",
                             "ru": "зерно Philox должно быть целым, а его тип {dtype}"}},
    "philox_width": {"head": {"en": "bitwidth not supported in philox",
                              "ru": "Philox работает только с 32- и 64-битными счётчиками"}},
    "uniform_width": {"head": {"en": "uint_to_uniform_float takes 32- or 64-bit integers, got {dtype}",
                               "ru": "uint_to_uniform_float принимает 32- или 64-битные целые, а передан {dtype}"}},
    "to_tensor": {"head": {"en": "cannot convert {value} of type {type} to tensor",
                           "ru": "значение {value} типа {type} нельзя превратить в блок tl.tensor"}},
    "flip_dim_none": {"head": {"en": "'>=' not supported between instances of 'NoneType' and 'int'",
                               "ru": "tl.flip требует ось: передайте `dim` явно (например, `dim=0`)"}},
    "mask_type": {"head": {"en": "Mask must have boolean scalar type",
                           "ru": "маска должна быть логического типа (int1)"}},
    "tensor_truth": {"head": {"en": "Boolean value of Tensor with more than one value is ambiguous (a block of shape "
                                    "{shape} was used as a Python {what:use}; reduce it first, e.g. tl.max(x) > 0, or "
                                    "use tl.where)",
                              "ru": "блок формы {shape} использован как {what:use} Python, а значений в нём больше "
                                    "одного: сначала сверните его, например tl.max(x) > 0, или используйте tl.where"}},
    "index_type": {"head": {"en": "only integer tensors can be used as an index or a loop bound, got {dtype}",
                            "ru": "индексом или границей цикла может быть только целый блок, а его тип {dtype}"}},
    "scalar_len": {"head": {"en": "len() of a scalar tensor", "ru": "len() нельзя взять от скаляра"}},
    "tensor_iteration": {"head": {"en": "a tl.tensor cannot be iterated over in a kernel; use tl.static_range or "
                                        "tl.range",
                                  "ru": "по блоку tl.tensor нельзя пройти циклом в ядре: используйте "
                                        "tl.static_range или tl.range"}},
}

TYPES_SUGGESTIONS: dict = {}
