"""Texts of diagnostics about the arguments of `tl.load`, `tl.store` and the atomics: the pointer, the mask,
`other`, padding and boundary checks, the element types atomics take, and read-only arrays. English is Triton's
wording."""
from __future__ import annotations

ACCESS = {
    "pointer_type": {"head": {"en": "Unsupported ptr type {shown} in `tl.{op}`",
                              "ru": "tl.{op} ждёт указатель или блок указателей, а получено {shown}"}},
    "scalar_pointer_block": {"head": {"en": "{label} argument cannot be block type if pointer argument is not a block",
                                      "ru": "указатель здесь один (не блок), поэтому и `{label}` должен быть "
                                            "скаляром, а не блоком"}},
    "pointer_shape": {"head": {"en": "Expected pointer argument to have shape {shape} but got {given}",
                               "ru": "форма блока указателей должна быть {shape}, а она {given}"}},
    "load_boundary_check": {"head": {"en": "`padding_option` or `boundary_check` argument is not supported for "
                                           "loading a tensor ofpointers or loading a scalar. Because the compiler does "
                                           "not know the boundary; please use block pointers (defined by "
                                           "`make_block_ptr`) instead",
                                     "ru": "`padding_option` и `boundary_check` работают только с блочными "
                                           "указателями (из `make_block_ptr`): для блока указателей или скаляра "
                                           "компилятор не знает границ; используйте маску"}},
    "store_boundary_check": {"head": {"en": "`boundary_check` argument is not supported for storing a tensor of "
                                            "pointers or storing a scalar. Because the compiler does not know the "
                                            "boundary; please use block pointers (defined by `make_block_ptr`) instead",
                                      "ru": "`boundary_check` работает только с блочными указателями (из "
                                            "`make_block_ptr`): для блока указателей или скаляра компилятор не знает "
                                            "границ; используйте маску"}},
    "other_without_mask": {"head": {"en": "`other` cannot be provided without `mask`",
                                    "ru": "`other` задают только вместе с `mask`: это значение для дорожек, "
                                          "закрытых маской"}},
    "read_only_store": {"head": {"en": "tl.{op} into `{tensor}`, which is a read-only array; pass a writeable copy",
                                 "ru": "tl.{op} пишет в `{tensor}`, а этот массив только для чтения: передайте его "
                                       "копию, доступную для записи"}},
    "read_only_atomic": {"head": {"en": "tl.{op} into `{tensor}`, which is a read-only array",
                                  "ru": "tl.{op} обновляет `{tensor}`, а этот массив только для чтения"}},
    "atomic_type": {"head": {"en": "atomic_{op} does not support {dtype}",
                             "ru": "atomic_{op} не поддерживает тип {dtype}"}},
    "atomic_cas_width": {"head": {"en": "atomic_cas only supports elements with width {{16, 32, 64}}",
                                  "ru": "atomic_cas работает только с элементами шириной 16, 32 или 64 бита"}},
    "atomic_poll_scalar": {"head": {"en": "atomic_poll only supports a pointer to a scalar",
                                    "ru": "atomic_poll ждёт указатель на один элемент, а не блок указателей"}},
    "atomic_poll_expected_block": {"head": {"en": "Expected value argument cannot be block type",
                                            "ru": "ожидаемое значение atomic_poll должно быть скаляром, а не блоком"}},
    "atomic_poll_width": {"head": {"en": "atomic_poll only supports integer elements with width {{16, 32, 64}}",
                                   "ru": "atomic_poll работает только с целыми элементами шириной 16, 32 или 64 бита"}},
    "atomic_poll_semantic": {"head": {"en": "atomic_poll only supports acquire and relaxed semantics",
                                      "ru": "atomic_poll поддерживает только семантику acquire и relaxed"}},
    "atomic_poll_timeout_negative": {"head": {"en": "atomic_poll timeout_ns must be non-negative",
                                              "ru": "timeout_ns у atomic_poll не может быть отрицательным"}},
    "atomic_poll_timeout_type": {"head": {"en": "atomic_poll timeout_ns must be a scalar integer",
                                          "ru": "timeout_ns у atomic_poll должен быть целым скаляром"}},
    "memory_semantic": {"head": {"en": "Memory {what} {value} not supported",
                                 "ru": "значение {value} (`{what}`) атомарной операции не поддерживается"}},
}

ACCESS_SUGGESTIONS: dict = {}
