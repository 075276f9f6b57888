"""Texts of diagnostics about programs while they run: loops that never end, deadlocks, a run stopped by the
user, failed device assertions, launches the GPU refuses, and errors that carry only Triton's own text."""
from __future__ import annotations

RUNTIME = {
    "infinite_loop": {
        "head": {"en": "this `while` loop never ends: its condition `{condition}` never changes",
                 "ru": "этот цикл `while` не заканчивается: его условие `{condition}` не меняется"},
        "body": {"en": "the loop {how}, and nothing it reads is written by another program: on a GPU the kernel "
                       "would hang",
                 "ru": "цикл {how}, и ничего из того, что он читает, не пишет другая программа: на GPU ядро "
                       "зависло бы"},
    },
    "deadlock": {
        "head": {"en": "the programs wait forever in this `while` loop (a deadlock)",
                 "ru": "программы ждут друг друга в этом цикле `while` вечно (взаимная блокировка)"},
        "body": {"en": "programs waiting: {waiting}; the loop {how} and no other program of the launch is left "
                       "to change memory: on a GPU the kernel would hang",
                 "ru": "ждут программы: {waiting}; цикл {how}, и ни одной программы, которая могла бы изменить "
                       "память, не осталось: на GPU ядро зависло бы"},
    },
    "deadlock_apart": {
        "head": {"en": "the programs wait for each other on different paths of the kernel, which minitriton "
                       "cannot run side by side",
                 "ru": "программы ждут друг друга на разных путях ядра, а minitriton не умеет выполнять их "
                       "бок о бок"},
        "body": {"en": "programs waiting: {waiting}; the loop {how}; the programs it waits for took another "
                       "branch or loop, and minitriton runs the programs of a group in lockstep, one path at a "
                       "time (a GPU runs them side by side and may finish)",
                 "ru": "ждут программы: {waiting}; цикл {how}; программы, которых он ждёт, пошли по другой ветке "
                       "или циклу, а minitriton выполняет программы группы в ногу, по одному пути за раз (GPU "
                       "выполняет их бок о бок и может закончить)"},
    },
    "stopped": {
        "head": {"en": "stopped ({reason:stop}) while running `{kernel}`",
                 "ru": "остановлено ({reason:stop}) во время работы `{kernel}`"},
    },
    "device_assert": {
        "head": {"en": "Assertion `{message}` failed", "ru": "не выполнено условие tl.device_assert: `{message}`"},
        "body": {"en": "{failed} lane(s) failed; first: {lanes}",
                 "ru": "условие нарушено на дорожках ({failed}); первые: {lanes}"},
    },
    "triton_message": {   # an error whose only text is Triton's own wording
        "head": {"en": "{message}", "ru": "ошибка Triton: {message}"},
    },
    "kernel_message": {   # a headline and details not yet made a record of their own kind
        "head": {"en": "{headline}", "ru": "{headline}"},
        "body": {"en": "{details}", "ru": "{details}"},
    },
    "launch_error": {
        "head": {"en": "{message}", "ru": "запуск невозможен: {message}"},
    },
}

RUNTIME_SUGGESTIONS = {
    "loop_how_same": {"en": "came back to the same state (its variables and all memory unchanged)",
                      "ru": "вернулся в то же состояние (его переменные и вся память не изменились)"},
    "loop_fix": {"en": "make the loop change what its condition reads ({names}), or end it with a bound",
                 "ru": "пусть цикл меняет то, что читает его условие ({names}), или ограничьте число итераций"},
    "deadlock_fix": {"en": "release every lock after its critical section (tl.atomic_xchg(lock, 0) on every "
                           "path) and make sure some program writes the value the loop waits for",
                     "ru": "освобождайте каждую блокировку после критической секции (tl.atomic_xchg(lock, 0) на "
                           "каждом пути) и убедитесь, что какая-то программа пишет значение, которого ждёт цикл"},
    "deadlock_apart_fix": {"en": "let the programs wait at the same place (e.g. every program arrives, then all "
                                 "wait in one loop), or test this kernel on a GPU",
                           "ru": "пусть программы ждут в одном месте (например, все приходят, затем все ждут в "
                                 "одном цикле) или проверьте это ядро на GPU"},
}
