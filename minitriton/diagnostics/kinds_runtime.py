"""Texts of diagnostics about programs while they run: loops that never end, deadlocks, a run stopped by the
user, failed device assertions, launches the GPU refuses, and errors that carry only Triton's own text."""
from __future__ import annotations

RUNTIME = {
    "infinite_loop": {
        "head": {"en": "this `while` loop never ends: its condition `{condition}` never changes",
                 "ru": "этот цикл `while` не заканчивается: его условие `{condition}` не меняется"},
        "body": {"en": "no program can change what the condition reads: on a GPU the kernel would hang",
                 "ru": "ни одна программа не может изменить то, что читает условие: на GPU ядро зависло бы"},
    },
    "deadlock": {
        "head": {"en": "the programs wait forever in this `while` loop: a deadlock",
                 "ru": "программы вечно ждут друг друга в этом цикле `while`: взаимная блокировка"},
        "body": {"en": "programs waiting: {waiting:pids}; none of them can leave its loop and no other program of the "
                       "launch is left to change memory: on a GPU the kernel would hang",
                 "ru": "ждут программы: {waiting:pids}; ни одна из них не может выйти из своего цикла, и не осталось "
                       "программы, которая могла бы изменить память: на GPU ядро зависло бы"},
    },
    "poll_forever": {
        "head": {"en": "this `{condition}` never returns: `{tensor}`[{offset}] holds {value}, not {expected}",
                 "ru": "этот `{condition}` никогда не вернётся: в `{tensor}`[{offset}] лежит {value}, а не {expected}"},
        "body": {"en": "no program is left to write it and the poll has no timeout_ns: on a GPU the kernel would hang",
                 "ru": "не осталось программы, которая могла бы это записать, а у опроса нет timeout_ns: GPU завис бы"},
    },
    "deadlock_poll": {
        "head": {"en": "the programs wait forever in `tl.atomic_poll`: a deadlock",
                 "ru": "программы вечно ждут в `tl.atomic_poll`: взаимная блокировка"},
        "body": {"en": "programs waiting: {waiting:pids}; none of them sees its value and no other program of the "
                       "launch is left to write it: on a GPU the kernel would hang",
                 "ru": "ждут программы: {waiting:pids}; ни одна не видит своего значения, и не осталось программы, "
                       "которая могла бы его записать: на GPU ядро зависло бы"},
    },
    "deadlock_apart": {
        "head": {"en": "the programs wait for each other on different paths of the kernel, which minitriton "
                       "cannot run side by side",
                 "ru": "программы ждут друг друга на разных путях ядра, а minitriton не умеет выполнять их "
                       "бок о бок"},
        "body": {"en": "programs waiting: {waiting:pids}; the programs a loop waits for took another branch or loop, "
                       "and minitriton runs the programs of a group in lockstep, one path at a time (a GPU runs "
                       "them side by side and may finish)",
                 "ru": "ждут программы: {waiting:pids}; программы, которых ждёт цикл, пошли по другой ветке или "
                       "циклу, а minitriton выполняет программы группы в ногу, по одному пути за раз (GPU "
                       "выполняет их бок о бок и может закончить)"},
    },
    "stopped": {
        "head": {"en": "stopped while running `{kernel}`",
                 "ru": "остановлено во время работы `{kernel}`"},
        "body": {"en": "programs running: {programs:pids}", "ru": "выполнялись программы: {programs:pids}"},
    },
    "device_assert": {
        "head": {"en": "Assertion `{message}` failed", "ru": "не выполнено условие tl.device_assert: `{message}`"},
        "body": {"en": "{failed} lane(s) failed; first: {lanes}",
                 "ru": "условие нарушено на дорожках ({failed}); первые: {lanes}"},
    },
    "triton_message": {   # an error whose only text is Triton's own wording
        "head": {"en": "{message}", "ru": "ошибка Triton: {message}"},
    },
    "launch_error": {
        "head": {"en": "{message}", "ru": "запуск невозможен: {message}"},
    },
}

RUNTIME_SUGGESTIONS = {
    # how a loop was seen to wait (notes)
    "loop_how_same": {"en": "the loop came back to the same state after {iterations:num} iterations (its "
                            "variables and all memory unchanged)",
                      "ru": "цикл вернулся в то же состояние (итераций: {iterations:num}; его переменные и вся "
                            "память не изменились)"},
    "loop_how_patience": {"en": "the loop ran {iterations:num} iterations without changing memory",
                          "ru": "за {iterations:iteration} цикл не изменил память"},
    # what a loop's condition reads (notes)
    "loop_reads": {"en": "the condition reads {names}, which nothing in the loop changes",
                   "ru": "условие читает {names}, и ничто в цикле этого не меняет"},
    "loop_reads_nothing": {"en": "the condition reads no variable and no memory: it is the same at every "
                                 "iteration",
                           "ru": "условие не читает ни переменных, ни памяти: на каждой итерации оно одно и то "
                                 "же"},
    "loop_reads_memory": {"en": "it reads `{tensor}`[{offset}], which is {value}, and no other program is left "
                                "to write it",
                          "ru": "оно читает `{tensor}`[{offset}], там {value}, и не осталось программы, которая "
                                "могла бы это изменить"},
    "deadlock_wait": {"en": "at line {line} the loop goes on while `{condition}`; waiting there: {programs:pids}",
                      "ru": "в строке {line} цикл продолжается, пока `{condition}`; там ждут: {programs:pids}"},
    "deadlock_wait_memory": {"en": "at line {line} the loop goes on while `{condition}`, which reads "
                                   "`{tensor}`[{offset}] (now {value}); waiting there: {programs:pids}",
                             "ru": "в строке {line} цикл продолжается, пока `{condition}`, а условие читает "
                                   "`{tensor}`[{offset}] (сейчас {value}); там ждут: {programs:pids}"},
    "deadlock_poll_memory": {"en": "at line {line} `{condition}` waits for `{tensor}`[{offset}] (now {value}) to be "
                                   "{expected}; waiting there: {programs:pids}",
                             "ru": "в строке {line} `{condition}` ждёт, когда в `{tensor}`[{offset}] (сейчас {value}) "
                                   "появится {expected}; там ждут: {programs:pids}"},
    # fixes
    "poll_fix": {"en": "make sure some program writes {expected} there (tl.atomic_xchg with sem=\"release\"), or "
                       "give the poll a timeout_ns and check what it returns",
                 "ru": "убедитесь, что какая-то программа записывает туда {expected} (tl.atomic_xchg с "
                       "sem=\"release\"), или задайте опросу timeout_ns и проверяйте, что он вернул"},
    "loop_fix": {"en": "make the loop change what its condition reads ({names}), or end it with a bound",
                 "ru": "пусть цикл меняет то, что читает его условие ({names}), или ограничьте число итераций"},
    "loop_fix_constant": {"en": "give the loop a condition that some iteration makes false, or use a `for` loop "
                                "with a bound",
                          "ru": "дайте циклу условие, которое какая-то итерация сделает ложным, или возьмите "
                                "цикл `for` с границей"},
    "deadlock_fix": {"en": "release every lock after its critical section (tl.atomic_xchg(lock, 0) on every "
                           "path) and make sure some program writes the value the loop waits for",
                     "ru": "освобождайте каждую блокировку после критической секции (tl.atomic_xchg(lock, 0) на "
                           "каждом пути) и убедитесь, что какая-то программа пишет значение, которого ждёт цикл"},
    "deadlock_apart_fix": {"en": "let the programs wait at the same place (e.g. every program arrives, then all "
                                 "wait in one loop), or test this kernel on a GPU",
                           "ru": "пусть программы ждут в одном месте (например, все приходят, затем все ждут в "
                                 "одном цикле) или проверьте это ядро на GPU"},
}
