"""Texts of diagnostics Triton's compiler would give: the kernel's code breaks a rule of the language (names,
loops, constructs Triton does not compile, static assertions), in Triton's own words in English."""
from __future__ import annotations

COMPILE = {
    # a Python error inside the kernel that has no kind of its own: Triton's message
    "compile_error": {"head": {"en": "{message}", "ru": "Triton не компилирует эту строку ядра: `{message}`"}},
    "loop_carried_type": {"head": {"en": "Loop-carried variable {name} has initial type {before} but is re-assigned "
                                         "to {after} in loop! Please make sure that the type stays consistent.",
                                   "ru": "переменная цикла {name} до цикла имеет тип {before} (строка "
                                         "{first_line}), а в цикле ей присваивается {after} (строка {line}): тип "
                                         "переменной цикла должен оставаться тем же"}},
    "branch_retyped": {"head": {"en": "initial value for `{name}` is of type {before}, but the {branch} block "
                                      "redefines it as {after}",
                                "ru": "до `if` переменная `{name}` имеет тип {before}, а ветка `{branch}` "
                                      "присваивает ей {after}: тип должен оставаться тем же"}},
    "branch_types": {"head": {"en": "Mismatched type for {name} between then block ({then}) and else block "
                                    "({otherwise})",
                              "ru": "переменная `{name}` получает в ветке `then` тип {then}, а в ветке `else` тип "
                                    "{otherwise}: типы должны совпадать"}},
    "name_error": {"head": {"en": "{name} is not defined", "ru": "имя `{name}` не определено"}},
    # Python's own text (Triton shows it as raised)
    "module_attribute": {"head": {"en": "module '{module}' has no attribute '{name}'",
                                  "ru": "в модуле `{module}` нет имени `{name}`: проверьте, как оно пишется"}},
    "global_refused": {"head": {"en": "Cannot access global variable {name} from within @jit'ed function. Triton "
                                      "kernels can only access global variables that are instanstiated as constexpr "
                                      "(`x = triton.language.constexpr(42)`). Note that this is different from "
                                      "annotating a variable as constexpr (`x: triton.language.constexpr = 42`), which "
                                      "is not supported.  Alternatively, set the envvar "
                                      "TRITON_ALLOW_NON_CONSTEXPR_GLOBALS=1, but we do not promise to support this "
                                      "forever.",
                                "ru": "ядро не может читать глобальную переменную {name}: Triton разрешает только "
                                      "глобальные константы, созданные как `x = triton.language.constexpr(42)` "
                                      "(аннотация `x: triton.language.constexpr = 42` не подходит)"}},
    "loop_scoped_name": {"head": {"en": "NameError('{name} is not defined')",
                                  "ru": "имя `{name}` не определено после цикла: оно впервые получает значение "
                                        "внутри цикла, который начинается в строке {loop_line}, а компилятор Triton "
                                        "сохраняет только переменные, заданные до цикла: задайте `{name}` значение до "
                                        "цикла (например, `{name} = 0`)"}},
    "unsupported_construct": {"head": {"en": "unsupported AST node type: {node}",
                                       "ru": "Triton не компилирует эту конструкцию Python (узел `{node}`)"}},
    "nested_function": {"head": {"en": "nested function definition is not supported.",
                                 "ru": "вложенные определения функций в ядре не поддерживаются"}},
    "chained_comparison": {"head": {"en": "simultaneous multiple comparison is not supported",
                                    "ru": "цепочка сравнений (`a < b < c`) не поддерживается: запишите `(a < b) & "
                                          "(b < c)`"}},
    "for_over_non_call": {"head": {"en": "AttributeError(\"'{node}' object has no attribute 'func'\")",
                                   "ru": "цикл `for` в ядре должен идти по `range(...)`, `tl.range(...)` или "
                                         "`tl.static_range(...)`, а здесь он идёт по `{node}`"}},
    "for_else": {"head": {"en": "AssertionError(\"Don't know what to do with else after for\")",
                          "ru": "ветка `else` после цикла `for` не поддерживается"}},
    "while_else": {"head": {"en": "AssertionError('Not implemented')",
                            "ru": "ветка `else` после цикла `while` не поддерживается"}},
    "in_operator": {"head": {"en": "AttributeError(\"'{node}' object has no attribute '__name__'\")",
                             "ru": "операторы `in` и `not in` в ядре не поддерживаются (узел `{node}`)"}},
    "multiple_assignment": {"head": {"en": "TypeError('Simultaneous multiple assignment is not supported.')",
                                     "ru": "присваивание сразу нескольким целям (`a = b = x`) не поддерживается"}},
    # Triton's frontend accepts the line, its MLIR/LLVM stages reject it
    "backend_error": {"head": {"en": "{diagnostic}\n{failure}",
                               "ru": "компилятор Triton (MLIR/LLVM) не может собрать эту строку: `{diagnostic}` "
                                     "(`{failure}`)"}},
    "syntax_error": {"head": {"en": "{message}", "ru": "синтаксическая ошибка: `{message}`"}},
    "static_assert": {"head": {"en": "{message}", "ru": "не выполнено tl.static_assert: `{message}`"}},
    "static_assert_bare": {"head": {"en": "failed: `{statement}`", "ru": "не выполнено: `{statement}`"}},
    "static_assert_runtime": {"head": {"en": "Assertion condition could not be determined at compile-time. Make sure "
                                             "that it depends only on `constexpr` values",
                                       "ru": "условие tl.static_assert нельзя вычислить при компиляции: оно должно "
                                             "зависеть только от значений `constexpr`"}},
    "static_range_value": {"head": {"en": "{type} used as tl.static_range {which} value is not a constexpr",
                                    "ru": "значение {type}, переданное как `{which}` в tl.static_range, не "
                                          "является константой (`constexpr`)"}},
    "program_axis": {"head": {"en": "{op} axis must be 0, 1, or 2 but got {axis}",
                              "ru": "ось tl.{op} должна быть 0, 1 или 2, а передана {axis}"}},
    "loop_bounds": {"head": {"en": "For loop bounds and step must all be ints, are ({names})",
                             "ru": "границы и шаг цикла `for` должны быть целыми, а они ({names})"}},
    "range_arguments": {"head": {"en": "range expected 1 to 3 arguments, got {n}",
                                 "ru": "range принимает от 1 до 3 аргументов, а передано {n}"}},
    "range_step_twice": {"head": {"en": "range() got multiple values for argument 'step'",
                                  "ru": "в range() шаг (`step`) передан дважды"}},
    "call_outside_kernel": {"head": {"en": "Did you forget to add @triton.jit ? (`_semantic` argument must be "
                                           "provided outside of JIT functions.) tl.{name} was called outside a kernel "
                                           "launch; launch the kernel with kernel[grid](...)",
                                     "ru": "tl.{name} вызвана вне запуска ядра: добавьте @triton.jit и запускайте "
                                           "ядро как `kernel[grid](...)`"}},
    # a Python feature a kernel cannot use (iteration, truth of a block, ...): the text
    "python_refused": {"head": {"en": "{message}", "ru": "в ядре так нельзя: `{message}`"}},
}

COMPILE_SUGGESTIONS = {
    "loop_first_assigned": {"en": "`{name}` gets its value before the loop at line {first_line}: `{first_source}`",
                            "ru": "`{name}` получает значение до цикла в строке {first_line}: `{first_source}`"},
    "loop_type_fix": {"en": "give {name} its loop type before the loop: {right}",
                      "ru": "задайте {name} тип цикла до цикла: {right}"},
    "arange_fix": {"en": "use a power-of-2 block ({pow2}) and mask the extra lanes",
                   "ru": "возьмите блок длиной в степень двойки ({pow2}) и закройте лишние дорожки маской"},
    "arange_fix_named": {"en": "use a power-of-2 block, {right}, and mask the extra lanes: {mask}",
                         "ru": "возьмите блок длиной в степень двойки, {right}, и закройте лишние дорожки маской: "
                               "{mask}"},
}
