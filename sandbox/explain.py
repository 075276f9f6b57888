"""An exception from the learner's code as one kernel-terms text in the page's language: what happened, where
(line, program), the numbers (offsets, the tensor's size) and a fix that names the kernel's own variables.

minitriton's errors keep Triton's English wording; the texts here are built from their parts (the operation,
the tensor, the offsets, the programs) and from the kernel source at the failing line (sandbox.kernel_source):
an unmasked 1-D access gets `mask=offs < n`, a 2-D tile running past the end along one axis gets that axis's
condition (`mask=offs_n[:, None] < T`), a mask testing an index along the wrong axis is named, and a race
from a store without a mask or from offsets that ignore the program id is told apart from other races.
"""
from __future__ import annotations

import ast
import re

from minitriton import errors as E

from . import kernel_source as S
from . import messages as M

_OOB_HEAD = re.compile(r"tl\.(\w+) (?:reads|writes|updates) (past the end of|before the start of) `([^`]+)`")
_OOB_BODY = re.compile(r"(\d+) of (\d+) lanes are out of range \(first: lane (\([^)]*\)|\d+)\): offsets (.+?) "
                       r"from `[^`]+`, but `[^`]+` has (\d+) elements")
_RACE = re.compile(r"offsets (.+?) of `([^`]+)` are written by programs (\([^)]*\)) and (\([^)]*\))")
_ORDER_HEAD = re.compile(r"tl\.(store writes|load reads) `([^`]+)` elements that program (\([^)]*\)|\(several\)) "
                         r"(?:reads|writes) in the same launch")
_ORDER_BODY = re.compile(r"offsets (.+?): the result depends")
_UNINIT = re.compile(r"tl\.load reads `([^`]+)` elements that were never written")
_UNINIT_BODY = re.compile(r"offsets (.+?) of `[^`]+` hold no value yet")


def summarize(exc, kind: str, line, program, ours: bool, lang: str) -> str:
    """One text: what happened, where (line, program), and for memory errors and races the offsets and a fix."""
    text = str(exc)
    first = text.strip().splitlines()[0] if text.strip() else kind
    filename = getattr(exc, "filename", None)
    if isinstance(exc, E.OutOfBoundsError):
        found = out_of_bounds(text, filename, line, program, lang)
        if found:
            return found
    if isinstance(exc, E.SanitizerError):
        found = sanitizer(text, filename, line, program, lang)
        if found:
            return found
    if isinstance(exc, E.CompilationError):
        message = M.say("compile_error", lang, kernel=getattr(exc, "kernel", "?"), line=line,
                        message=_compile_message(text))
        if "incompatible dimensions" in text and filename:
            wrong = next(filter(None, (_wrong_axis(a, S.bounds(a.kernel)) for a in S.accesses(filename, line))), None)
            if wrong:
                return M.sentences(message, wrong_axis_text(wrong, lang))
            fn = S.kernel_at(filename, line)
            mixup = S.broadcast_mixup(fn) if fn is not None else None
            if mixup:
                return M.sentences(message, broadcast_text(mixup, lang))
        return message
    if isinstance(exc, SyntaxError):
        return M.say("host_error", lang, type=kind, line=line, message=exc.msg)
    if getattr(exc, "kernel", None) is not None and program is not None:
        return M.say("kernel_error", lang, type=kind, kernel=exc.kernel, line=line, program=M.program(program),
                     message=_strip_location(first))
    if ours and line is not None:
        return M.say("host_error", lang, type=kind, line=line, message=first)
    if isinstance(exc, E.MiniTritonError):
        return M.say("error_plain", lang, type=kind, message=first)
    return M.say("internal_error", lang, message=f"{kind}: {first}")


# ---------------------------------------------------------------- out of bounds

def out_of_bounds(text: str, filename, line, program, lang: str) -> str | None:
    head, body = _OOB_HEAD.search(text), _OOB_BODY.search(text)
    if not (head and body):
        return None
    op = head.group(1)
    verb = "oob_load" if op == "load" else "oob_store" if op == "store" else "oob_atomic"
    lane = ast.literal_eval(body.group(3))
    n = int(body.group(5))
    offsets = body.group(4)
    fix = oob_fix(op, filename, line, lane, offsets, n, "fix: mask the tail" in text, lang)
    return M.sentences(M.say("oob", lang, program=M.program(program), verb=M.say(verb, lang),
                             offsets=M.ranges_text(offsets, lang),
                             where=M.say("oob_past" if head.group(2).startswith("past") else "oob_before", lang),
                             tensor=head.group(3), n=M.count(n, "element", lang) if lang == "ru" else M.num(n),
                             line=line), fix)


def oob_fix(op, filename, line, lane, offsets: str, n: int, unmasked: bool, lang: str) -> str:
    """The fix for an access that went out of bounds, in the kernel's own names where the source tells them."""
    access = S.access_at(filename, line, op if op in ("load", "store") else "atomic_add") if filename else None
    if access is None:
        return M.say("fix_mask" if unmasked else "fix_bound", lang, var="offs", bound="n")
    known = S.bounds(access.kernel)
    if access.is_2d or isinstance(lane, tuple):
        wrong = _wrong_axis(access, known)
        if wrong:
            return wrong_axis_text(wrong, lang)
        same = S.same_stride(access)
        if same:
            return M.say("fix_same_stride", lang, row=same[0], col=same[1], stride=same[2],
                         right=S.stride_for(access.kernel, same[1], same[2]) or M.say("own_stride", lang))
        return _fix_2d(access, lane, known, lang)
    lanes = S.lane_names(access)
    var = lanes[-1] if lanes else "offs"
    bound = known.get(var, "n")
    if unmasked or access.mask is None:
        return M.say("fix_mask", lang, var=var, bound=bound)
    lte = S.compared_with_lte(access.mask)
    if lte and offsets.count("…") == 0 and "," not in offsets:
        return M.say("fix_off_by_one", lang, var=lte[0], bound=S.bounds(access.kernel).get(lte[0], bound))
    return M.say("fix_bound", lang, var=var, bound=bound)


def _fix_2d(access: S.Access, lane, known: dict, lang: str) -> str:
    rows, cols = access.axes[S.ROWS], access.axes[S.COLS]
    if isinstance(lane, tuple) and len(lane) == 2:
        r, c = lane
        axis = S.ROWS if (c == 0 and r > 0) else S.COLS if (r == 0 and c > 0) else None
    else:
        axis = None
    axes = [axis] if axis else [S.ROWS, S.COLS]
    terms = S.mask_terms(access.mask)
    wanted = []
    for a in axes:
        names = rows if a == S.ROWS else cols
        if not names:
            continue
        var = names[0]
        term = f"{var}[:, None] < {known.get(var, 'n')}" if a == S.ROWS else f"{var}[None, :] < {known.get(var, 'n')}"
        if not any(var in t for t in terms):
            wanted.append((a, var, term))
    if not wanted:
        return M.say("fix_2d_bound", lang)
    mask = " & ".join(f"({t})" for t in terms + [w[2] for w in wanted]) if terms or len(wanted) > 1 else wanted[0][2]
    what = ", ".join(M.say("axis_rows" if a == S.ROWS else "axis_cols", lang, var=v) for a, v, _ in wanted)
    return M.say("fix_2d", lang, what=what, mask=mask)


def _wrong_axis(access: S.Access, known: dict):
    """(name, axis in the mask, axis in the pointer, bound) when the mask tests an index along the other axis."""
    in_mask = S.axes_of(access.mask)
    for axis, other in ((S.ROWS, S.COLS), (S.COLS, S.ROWS)):
        for name in in_mask[axis]:
            if name in access.axes[other] and name not in access.axes[axis]:
                return name, axis, other, known.get(name, "n")
    return None


def wrong_axis_text(wrong, lang: str) -> str:
    name, mask_axis, ptr_axis, bound = wrong
    right = f"{name}[:, None]" if ptr_axis == S.ROWS else f"{name}[None, :]"
    used = f"{name}[:, None]" if mask_axis == S.ROWS else f"{name}[None, :]"
    return M.say("fix_axis", lang, var=name, used=used, right=right, bound=bound,
                 mask_axis=M.say("axis_word_rows" if mask_axis == S.ROWS else "axis_word_cols", lang),
                 ptr_axis=M.say("axis_word_rows" if ptr_axis == S.ROWS else "axis_word_cols", lang))


def broadcast_text(mixup, lang: str) -> str:
    value, used, index, axis = mixup
    form = (lambda name, a: f"{name}[:, None]" if a == S.ROWS else f"{name}[None, :]")
    return M.say("fix_broadcast", lang, var=value, idx=index, idx_form=form(index, axis), used=form(value, used),
                 right=form(value, axis),
                 axis=M.say("axis_word_rows" if axis == S.ROWS else "axis_word_cols", lang))


def static_hint(filename: str, lang: str) -> str | None:
    """A mix-up visible in the kernel source alone (a mask on the wrong axis, one stride for both axes of a
    tile, a vector broadcast along the wrong axis), for a failure whose values are all the check has."""
    for fn in S.functions(filename):
        for access in S.accesses(filename, fn.body[0].lineno):
            wrong = _wrong_axis(access, S.bounds(fn))
            if wrong:
                return wrong_axis_text(wrong, lang)
            same = S.same_stride(access)
            if same:
                return M.say("fix_same_stride", lang, row=same[0], col=same[1], stride=same[2],
                             right=S.stride_for(fn, same[1], same[2]) or M.say("own_stride", lang))
        mixup = S.broadcast_mixup(fn)
        if mixup:
            return broadcast_text(mixup, lang)
    return None


# ---------------------------------------------------------------- races and order

def sanitizer(text: str, filename, line, program, lang: str) -> str | None:
    race = _RACE.search(text)
    if race:
        offsets, tensor, them, me = race.groups()
        return M.sentences(M.say("race", lang, me=_prog(them), them=_prog(me), offsets=M.ranges_text(offsets, lang),
                                 tensor=tensor, line=line), race_fix(filename, line, lang))
    order, body = _ORDER_HEAD.search(text), _ORDER_BODY.search(text)
    if order and body:
        writes = order.group(1).startswith("store")
        other = "order_reader" if writes else "order_writer"
        them = order.group(3)
        them = M.say(other + "_many", lang) if them == "(several)" else M.say(other + "_one", lang, p=_prog(them))
        return M.sentences(M.say("order_write" if writes else "order_read", lang, me=M.program(program),
                                 tensor=order.group(2), line=line, them=them,
                                 offsets=M.ranges_text(body.group(1), lang)), M.say("order_fix", lang))
    uninit, body = _UNINIT.search(text), _UNINIT_BODY.search(text)
    if uninit and body:
        return M.sentences(M.say("uninit", lang, me=M.program(program), tensor=uninit.group(1), line=line,
                                 offsets=M.ranges_text(body.group(1), lang)), M.say("uninit_fix", lang))
    return None


def race_fix(filename, line, lang: str) -> str:
    access = S.access_at(filename, line, "store") if filename else None
    if access is None:
        return M.say("race_fix", lang)
    if not S.depends_on(access.pointer, S.derived_from(access.kernel, "program_id"), "program_id"):
        return M.say("race_fix_shared", lang)
    if access.mask is None:
        lanes = S.lane_names(access)
        var = lanes[-1] if lanes else "offs"
        return M.say("race_fix_unmasked", lang, var=var, bound=S.bounds(access.kernel).get(var, "n"))
    return M.say("race_fix", lang)


def _prog(text: str) -> str:
    try:
        return M.program(ast.literal_eval(text))
    except (ValueError, SyntaxError):
        return text


# ---------------------------------------------------------------- compile errors

def _compile_message(text: str) -> str:
    """The message part of Triton's compile-error layout (after the caret line, before 'in kernel')."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip() == "^":
            rest = [entry for entry in lines[i + 1:] if not entry.startswith("  in kernel")]
            # no message (a tl.static_assert without one): the statement that failed says it
            return " ".join(entry.strip() for entry in rest[:2] if entry.strip()) or (lines[i - 1].strip() if i else text)
    return lines[-1] if lines else text


def _strip_location(first: str) -> str:
    return re.sub(r" \([^()]*\.py:\d+, program \([^)]*\)\)", "", first)
