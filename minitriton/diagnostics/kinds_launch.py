"""Texts of diagnostics about a launch: the grid, the arguments passed to a kernel, autotuning."""
from __future__ import annotations

LAUNCH = {
    "grid_type": {"head": {"en": "the grid must be a tuple of 1 to 3 ints (or a callable of the meta-parameters "
                                 "returning one), got {type} ({grid})",
                           "ru": "сетка (grid) должна быть кортежем из 1–3 целых (или функцией метапараметров, "
                                 "которая его возвращает), а получено {type} ({grid})"}},
    "grid_rank": {"head": {"en": "the grid must have 1 to 3 dimensions, got {grid}",
                           "ru": "у сетки (grid) должно быть от 1 до 3 осей, а получено {grid}"}},
    "grid_dimension_type": {"head": {"en": "grid dimension {axis} must be an int, got {type} ({value})",
                                     "ru": "размер сетки по оси {axis} должен быть целым, а получено {type} "
                                           "({value})"}},
    "grid_negative": {"head": {"en": "grid dimension {axis} is negative: {value}",
                               "ru": "размер сетки по оси {axis} отрицателен: {value}"}},
    "grid_too_large": {"head": {"en": "grid {grid} exceeds CUDA's limit on axis {axis}: at most {limit} programs (a "
                                      "GPU fails with 'Triton Error [CUDA]: invalid argument'); fix: launch fewer "
                                      "programs on that axis and loop inside the kernel, or move the work to axis 0 "
                                      "(limit 2**31 - 1)",
                                "ru": "сетка {grid} превышает предел CUDA по оси {axis}: не больше {limit} "
                                      "программ (GPU отвечает `Triton Error [CUDA]: invalid argument`); исправление: "
                                      "запустите меньше программ по этой оси и сделайте цикл внутри ядра или "
                                      "перенесите работу на ось 0 (предел 2**31 - 1)"}},
    "too_many_arguments": {"head": {"en": "{kernel_name}() takes {expected} arguments but {given} were given",
                                    "ru": "ядро {kernel_name}() принимает аргументов: {expected}, а передано "
                                          "{given}"}},
    "unexpected_keyword": {"head": {"en": "{kernel_name}() got an unexpected keyword argument '{name}'",
                                    "ru": "у ядра {kernel_name}() нет параметра `{name}`"}},
    "argument_twice": {"head": {"en": "{kernel_name}() got multiple values for argument '{name}'",
                                "ru": "аргумент `{name}` ядра {kernel_name}() передан дважды"}},
    "missing_argument": {"head": {"en": "{kernel_name}() missing required argument: '{name}'",
                                  "ru": "ядру {kernel_name}() не передан обязательный аргумент `{name}`"}},
    "compiled_arguments": {"head": {"en": "{kernel_name}: a compiled kernel takes all {expected} parameters "
                                          "positionally ({names}), got {given}",
                                    "ru": "скомпилированное ядро {kernel_name} принимает все {expected} параметров "
                                          "по порядку ({names}), а передано {given}"}},
    "jit_call_outside": {"head": {"en": "Cannot call @triton.jit'd outside of the scope of a kernel",
                                  "ru": "функцию @triton.jit можно вызывать только из ядра; ядро запускают как "
                                        "`kernel[grid](...)`"}},
    "tensor_device": {"head": {"en": "minitriton runs on the CPU: got a tensor on {device}; move it with .cpu() (on a "
                                     "GPU, run real Triton instead)",
                               "ru": "minitriton работает на CPU, а тензор лежит на {device}: перенесите его через "
                                     ".cpu() (на GPU запускайте настоящий Triton)"}},
    "device_index": {"head": {"en": "minitriton emulates one GPU (device 0); got device {device}",
                              "ru": "minitriton изображает один GPU (устройство 0), а передано устройство {device}"}},
    "array_strides": {"head": {"en": "array strides {strides} are not multiples of the element size {itemsize}",
                               "ru": "шаги массива {strides} не кратны размеру элемента {itemsize}"}},
    "constexpr_array": {"head": {"en": "argument `{name}` is a tl.constexpr but received an array; constexpr "
                                       "parameters take Python values (ints, floats, bools, dtypes)",
                                 "ru": "аргумент `{name}` объявлен как tl.constexpr, а передан массив; параметры "
                                       "constexpr принимают значения Python (`int`, `float`, `bool`, типы)"}},
    "argument_too_large": {"head": {"en": "argument `{name}` = {value} does not fit in 64 bits",
                                    "ru": "аргумент `{name}` = {value} не помещается в 64 бита"}},
    "argument_type": {"head": {"en": "argument `{name}` has unsupported type {type}; kernels take arrays (numpy or "
                                     "torch CPU tensors), TensorDescriptors, ints, floats, bools, None and tl.dtype "
                                     "values",
                               "ru": "аргумент `{name}` имеет неподдерживаемый тип {type}; ядра принимают массивы "
                                     "(numpy или тензоры torch на CPU), `TensorDescriptor`, `int`, `float`, `bool`, "
                                     "`None` и типы tl.dtype"}},
    "autotune_pruned_all": {"head": {"en": "early_config_prune removed every autotune config",
                                     "ru": "early_config_prune отбросил все конфигурации автонастройки"}},
    "autotune_conflict": {"head": {"en": "Conflicting meta-parameters: {names}. Make sure that you don't re-define "
                                         "auto-tuned symbols.",
                                   "ru": "метапараметры {names} заданы и при запуске, и в конфигурациях "
                                         "автонастройки: не передавайте их при запуске"}},
    "autotune_mismatch": {"head": {"en": "autotune configs disagree on `{name}`: [{first}] and [{other}] give "
                                         "different values at {count} elements (first at index {index}); a correct "
                                         "kernel computes the same result for every config: check the masks and loop "
                                         "bounds that depend on the block sizes",
                                   "ru": "конфигурации автонастройки расходятся в `{name}`: [{first}] и [{other}] "
                                         "дают разные значения в {count} элементах (первый с индексом {index}); "
                                         "правильное ядро даёт один результат при любой конфигурации: проверьте маски "
                                         "и границы циклов, зависящие от размеров блоков"}},
}

LAUNCH_SUGGESTIONS: dict = {}
