"""Traffic tests: how many elements each tensor had loaded and stored (counts, per program), and which ones
(addresses: each program's tiles, from a launch traced program by program). A count can be right with the
wrong elements (a matmul reading B with the wrong row stride still reads K·BN elements per program); the
address test catches that and names the first program, the elements it should not have touched and its tile.
"""
from __future__ import annotations

import numpy as np

from .. import messages as M


def counts(record: dict | None, tensor: str, field_: str):
    """(total, per-program list) of a counter for one tensor argument of a launch record."""
    if record is None or tensor not in record["tensors"]:
        return 0, []
    t = record["tensors"][tensor]
    return int(t["totals"][field_]), list(t["per_program"][field_])


def expect_traffic(record: dict | None, lang: str, rules) -> tuple[bool, str]:
    """Check element counts: rules = [(tensor, "load"|"store", expected total, formula, per-program fn|None)].

    `per-program fn(program tuple) -> expected count` lets the message name the first program that is off.
    """
    problems, fine = [], []
    grid = record["grid"] if record else [1, 1, 1]
    for tensor, kind, expected, formula, per_program in rules:
        field_ = "loaded_elements" if kind == "load" else "stored_elements"
        got, per = counts(record, tensor, field_)
        if got == expected:
            fine.append(M.say("traffic_summary_" + kind, lang, tensor=tensor, got=M.count(got, "element", lang)))
            continue
        text = M.say("traffic_load" if kind == "load" else "traffic_store", lang, tensor=tensor,
                     got=M.count(got, "element", lang), expected=M.num(expected, lang), formula=formula)
        if per_program is not None and per:
            for linear, value in enumerate(per):
                pid = pid_of(linear, grid)
                want = per_program(pid)
                if value != want:
                    text += "; " + M.say("traffic_program", lang, program=M.program(trim(pid, grid)),
                                         got=M.num(value, lang), expected=M.num(want, lang))
                    break
        problems.append(text)
    if problems:
        return False, M.sentences("; ".join(problems))
    return True, M.say("ok_traffic", lang, details=", ".join(fine))


def expect_tiles(record: dict | None, lang: str, rules, extra_only: bool = False) -> tuple[bool, str]:
    """Check addresses, program by program, in a launch traced with `launch(..., trace_all=True)`:
    rules = [(tensor, "load"|"store", shape, tile fn[, advice fn])], where `tile(program tuple)` gives the (row
    indices, column indices) of the elements of the 2-D tensor that program must touch, exactly, in any order,
    and `advice(program tuple)` the sentence that follows a failure (by default: check the strides).
    `extra_only`: only touching elements outside the tile fails (a diagnosis of wrong values, where a kernel
    that touched too little is already told by the values).
    """
    if record is None:
        return True, ""
    grid = record["grid"]
    fine = []
    for tensor, kind, shape, tile, *advice in rules:
        label = "loaded" if kind == "load" else "stored"
        for entry in record.get("trace", []):
            pid = tuple(entry["program"])
            touched = np.asarray(entry["tensors"].get(tensor, {}).get(label, []), dtype=np.int64)
            rows, cols = tile(pid)
            want = (np.asarray(rows, np.int64)[:, None] * shape[1] + np.asarray(cols, np.int64)[None, :]).ravel()
            extra = np.setdiff1d(touched, want)
            missing = np.setdiff1d(want, touched)
            if extra.size or (missing.size and not extra_only):
                program = M.program(trim(pid, grid))
                then = advice[0](pid) if advice else M.say("addr_strides", lang)
                described = _tile_text(tensor, rows, cols, lang)
                if extra.size:
                    return False, M.sentences(M.say(
                        "addr_extra", lang, program=program, tensor=tensor, tile=described,
                        verb=M.say("addr_read" if kind == "load" else "addr_wrote", lang),
                        examples=_examples(tensor, extra, shape, lang)), then)
                return False, M.sentences(M.say(
                    "addr_missing", lang, program=program, tensor=tensor, tile=described,
                    verb_neg=M.say("addr_not_read" if kind == "load" else "addr_not_wrote", lang),
                    examples=_examples(tensor, missing, shape, lang)), then)
        fine.append(f"`{tensor}`")
    return True, M.say("ok_addresses", lang, details=", ".join(fine))


def _examples(tensor: str, flat: np.ndarray, shape, lang: str, limit: int = 3) -> str:
    shown = [f"{_short(tensor)}[{int(i) // shape[1]}, {int(i) % shape[1]}]" for i in flat[:limit]]
    more = f" {M.say('ranges_more', lang, n=M.num(flat.size, lang)).strip()}" if flat.size > limit else ""
    return ", ".join(shown) + more


def _tile_text(tensor: str, rows, cols, lang: str) -> str:
    return f"{_short(tensor)}[{_span(rows, lang)}, {_span(cols, lang)}]"


def _span(values, lang: str) -> str:
    values = np.asarray(values, np.int64)
    if values.size == 0:
        return "∅"
    lo, hi = int(values.min()), int(values.max())
    if values.size == hi - lo + 1:
        return str(lo) if lo == hi else f"{lo}…{hi}"
    return M.ranges(values, lang)


def _short(tensor: str) -> str:
    """`a_ptr` -> A, `x_ptr` -> x: how the statements name the matrices."""
    base = tensor[:-4] if tensor.endswith("_ptr") else tensor
    return base.upper() if len(base) == 1 and base in "abc" else base


def pid_of(linear: int, grid) -> tuple:
    """minitriton's program order: x outermost, z fastest."""
    gx, gy, gz = (list(grid) + [1, 1, 1])[:3]
    return (linear // (gy * gz), (linear // gz) % gy, linear % gz)


def trim(pid, grid):
    gx, gy, gz = (list(grid) + [1, 1, 1])[:3]
    if gy == 1 and gz == 1:
        return pid[:1]
    if gz == 1:
        return pid[:2]
    return pid
