"""The records of `while` loops that never end: one program's infinite loop, and programs that wait for each
other (a deadlock), made from what the runtime saw of each waiting loop (a `LoopSite`)."""
from __future__ import annotations

from dataclasses import dataclass, field

from minitriton.diagnostics.record import Diagnostic, Suggestion


@dataclass
class LoopSite:
    """A `while` loop whose state repeated: its file line, its condition's text and the names that condition
    reads, whether the loop may read memory (if not, no other program can end it), per program (linear id)
    the memory element its condition reads as (tensor, offset, value now), and after how many iterations
    the state was seen to repeat (`exact`: its variables and all memory; else memory alone). For a
    `tl.atomic_poll`, the condition is the call's text and `expected` the value it waits for."""

    line: int
    condition: str
    names: tuple
    reads_memory: bool
    waits: dict = field(default_factory=dict)
    iterations: int = 0
    exact: bool = False
    expected: object = None


def _how(site: LoopSite):
    return ("loop_how_same" if site.exact else "loop_how_patience"), {"iterations": site.iterations}


def infinite_loop(site: LoopSite, pid: int) -> Diagnostic:
    """Program `pid`'s loop, which nothing can end."""
    if site.expected is not None:
        record = Diagnostic("poll_forever", {"condition": site.condition, "expected": site.expected})
        record.fields.update(zip(("tensor", "offset", "value"), site.waits.get(pid, ("?", 0, "?"))))
        record.suggestion = Suggestion("poll_fix", {"expected": site.expected})
        return record
    names = ", ".join(f"`{n}`" for n in site.names)
    record = Diagnostic("infinite_loop", {"condition": site.condition, "names": names,
                                          "iterations": site.iterations, "exact": site.exact})
    wait = site.waits.get(pid)
    if wait is not None:
        record.fields.update(zip(("tensor", "offset", "value"), wait))
    record.notes.append(("loop_reads_memory" if wait is not None else "loop_reads" if names else
                         "loop_reads_nothing", {}))
    record.notes.append(_how(site))
    fix = "deadlock_fix" if site.reads_memory else "loop_fix" if names else "loop_fix_constant"
    record.suggestion = Suggestion(fix, {"names": names})
    return record


def deadlock(waiting, program_id, apart: bool) -> Diagnostic:
    """Programs that wait for each other: `waiting` pairs each set-aside pass's LoopSite with the linear ids
    of its programs; `program_id` gives the id a program is shown by. `apart`: they wait on different paths
    of the kernel. Its `waits` field lists, per place and memory element, the programs waiting there."""
    polls = all(site.expected is not None for site, _ in waiting)
    record = Diagnostic("deadlock_apart" if apart else "deadlock_poll" if polls else "deadlock",
                        {"waiting": [program_id(p) for p in sorted(p for _, pids in waiting for p in pids)],
                         "waits": []})
    places = {}
    for site, pids in sorted(waiting, key=lambda w: min(w[1])):
        for p in pids:
            places.setdefault((site.line, site.condition, site.waits.get(p), site.expected), []).append(p)
    for (line, condition, wait, expected), pids in places.items():
        fields = {"line": line, "condition": condition, "programs": [program_id(p) for p in pids]}
        fields.update(zip(("tensor", "offset", "value", "expected"), (*wait, expected) if wait and expected is not None else wait or ()))
        record.fields["waits"].append(fields)
        record.notes.append(("deadlock_wait" if wait is None else "deadlock_wait_memory" if expected is None
                             else "deadlock_poll_memory", fields))
    if not polls:
        record.notes.append(_how(min(waiting, key=lambda w: min(w[1]))[0]))
    record.suggestion = Suggestion("deadlock_apart_fix" if apart else "deadlock_fix", {})
    return record
