"""Fixes for an access out of bounds, in the order a cause is certain: a pointer the source cannot fix (built in a
helper, loaded from memory), an int32 overflow (the `.to(tl.int64)` edit on the operation that wraps), a
negative offset (mask the subexpression that goes negative), a 2-D mix-up or a missing axis (fix_axes), then a
1-D mask: added where there is none, `<=` made `<`, or the bound to check."""
from __future__ import annotations

import ast

import numpy as np

from minitriton.frontend import fix_axes
from minitriton.frontend import fix_site as F
from minitriton.frontend import kernel_source as S
from minitriton.frontend import kernel_values as V


def suggest(record, launch):
    op = record.fields.get("call", "load")
    site = F.site_of(record, launch, op)
    if site is None:
        return None
    general = "mask_bound_generic" if site.access.mask_node is not None else "mask_tail_generic"
    block = block_pointer(site, op)
    if block is not None:
        return block
    reason = unfixable(site)
    if reason == "reason_loaded_pointer":
        like = masked_like_its_index(site, record)
        if like is not None:
            return like
    if reason:
        return F.no_fix(general, {"op": op}, reason)
    extent = int(record.fields["high"]) + 1
    found = V.offsets_at(site.fn, site.access, site.arguments, site.program)
    if found is not None:
        value, ev = found
        bad = _bad_offsets(record)
        reproduced = bad is not None and np.isin(bad, np.asarray(value.wrapped).reshape(-1)).all()
        if reproduced and ev.overflows:
            return overflow(site, ev.overflows[0])
        if reproduced and record.fields.get("side") == "before":
            found_fix = negative(site, value, extent)
            if found_fix is not None:
                return found_fix
    if site.access.is_2d:
        return fix_axes.wrong_axis(site) or fix_axes.same_stride(site) or mask_2d(site, extent) or off_by_one(site) \
            or F.no_fix(general, {"op": op}, "reason_mask_bound")
    return mask_1d(site, extent, op) or F.no_fix(general, {"op": op}, "reason_no_bound")


def block_pointer(site, op: str):
    """A block pointer (`tl.make_block_ptr`) is never masked: its load or store checks the axes it is told to,
    `boundary_check=(0, 1)` (and a load pads with zeros)."""
    a = site.access
    made = next((n for n in ast.walk(a.pointer) if isinstance(n, ast.Call) and S.is_tl(n.func, "make_block_ptr")), None)
    if made is None:
        return None
    shape = S.keyword(made, "block_shape") or (made.args[4] if len(made.args) > 4 else None)
    if not isinstance(shape, ast.Tuple):
        return F.no_fix("boundary_check", {"call": f"tl.{op}(...)"}, "reason_helper")
    axes = f"({', '.join(str(i) for i in range(len(shape.elts)))}{',' if len(shape.elts) == 1 else ''})"
    given = S.keyword(a.call, "boundary_check")
    if given is not None:
        edit = F.replace(site, given, axes)
    else:
        padding = ', padding_option="zero"' if op == "load" and S.keyword(a.call, "padding_option") is None else ""
        last = max(list(a.call.args) + [k.value for k in a.call.keywords], key=lambda n: (n.end_lineno, n.end_col_offset))
        _, _, line, col = S.span(last, site.filename)
        edit = F.Edit(line, col, line, col, f", boundary_check={axes}{padding}")
    return F.fix("boundary_check", {"call": F.edited(site, edit, a.call)}, site, edit)


def unfixable(site) -> str | None:
    """Why no edit of this line can fix the pointer, or None: it is built by a helper function, or loaded."""
    for node in ast.walk(site.access.pointer):
        if isinstance(node, ast.Call) and S.is_tl(node.func, "load"):
            return "reason_loaded_pointer"
        if isinstance(node, ast.Call) and not isinstance(node.func, ast.Attribute):
            return "reason_helper"
    loaded = S.derived_from(site.fn, "load")
    if any(isinstance(n, ast.Name) and n.id in loaded for n in ast.walk(site.access.pointer)):
        return "reason_loaded_pointer"
    params = {a.arg for a in site.fn.args.args}
    pointer_names = {n.id for n in ast.walk(site.access.pointer) if isinstance(n, ast.Name)}
    if not S.derived_from(site.fn, "arange") & pointer_names and not any(
            isinstance(n, ast.Call) and S.is_tl(n.func, "arange") for n in ast.walk(site.access.pointer)) \
            and pointer_names & params - S.pointer_params(site.fn):
        return "reason_helper"   # the offsets come in as a parameter: the caller builds them
    return None


def masked_like_its_index(site, record):
    """`i = tl.load(idx_ptr + offs, mask=offs < n, other=n)` then `tl.atomic_add(cnt_ptr + i, 1)`: the lanes out
    of range are the ones the index's load masked off (their `other` value); mask this access the same way."""
    a = site.access
    if a.mask_node is not None or record.fields.get("lanes") is None:
        return None
    assigned = S.assignments(site.fn, a.call.lineno)
    for name in (n.id for n in ast.walk(a.pointer_node) if isinstance(n, ast.Name) and n.id in assigned):
        load = assigned[name]
        if not (isinstance(load, ast.Call) and S.is_tl(load.func, "load")):
            continue
        mask = load.args[1] if len(load.args) > 1 else S.keyword(load, "mask")
        if mask is None or not hasattr(mask, "lineno"):
            continue
        try:
            on = np.asarray(V.Evaluator(site.fn, site.arguments, site.program).value(mask, load.lineno).exact)
        except (V.Unknown, TypeError, ValueError):
            continue
        bad = {v for lo, hi in record.fields["lanes"].runs for v in range(lo, hi + 1)}
        if on.dtype != bool or not bad or not bad <= set(np.flatnonzero(~on.reshape(-1)).tolist()):
            continue
        edit = F.mask_edit(site, site.text(mask))
        return F.fix("mask_like_index", {"var": name, "mask": site.text(mask), "call": F.edited(site, edit, a.call)},
                     site, edit)
    return None


def _bad_offsets(record):
    runs = record.fields.get("offsets")
    if runs is None or not getattr(runs, "runs", None):
        return None
    return np.array([v for r in runs.runs for v in {r[0], r[1]}], np.int64)


def overflow(site, found: V.Overflow):
    """`pid * 2**28` -> `pid.to(tl.int64) * 2**28`: the operand that varies, made 64-bit."""
    node = found.node
    constant = (lambda n: all(isinstance(x, (ast.Constant, ast.BinOp, ast.operator)) for x in ast.walk(n)))
    operand = node.left if not constant(node.left) else node.right
    if not hasattr(operand, "lineno") or not hasattr(node, "lineno"):
        return None
    cast = f"{S.atom(site.text(operand))}.to(tl.int64)"
    edit = F.replace(site, operand, cast)
    return F.fix("to_int64", {"expr": site.text(node), "value": found.value, "right": F.edited(site, edit, node)},
                 site, edit)


def negative(site, value: V.Value, extent: int):
    """Mask the subexpression that goes negative: `mask=offs >= 0` (with the existing mask, or the bound)."""
    a = site.access
    ev = V.Evaluator(site.fn, site.arguments, site.program)
    names = [n for n in ast.walk(a.pointer_node) if isinstance(n, ast.Name) and n.id not in S.pointer_params(site.fn)]
    expr = None
    negative_lanes = np.asarray(value.wrapped) < 0
    for name in names:   # a name negative on exactly the lanes that are: `prev` in `x_ptr + prev`
        try:
            named = np.asarray(ev.value(name, a.call.lineno).exact)
            same = np.array_equal(np.broadcast_to(named < 0, negative_lanes.shape), negative_lanes)
        except (V.Unknown, ValueError):
            continue
        if same:
            expr, low = name.id, int(named.min())
            break
    if expr is None:   # the offsets as written after `ptr +`: `tl.arange(0, B) + pid * B - 1`
        expr, low = offsets_text(site), int(np.min(value.exact))
        if expr is None:
            return None
    condition = f"{S.atom(expr)} >= 0"
    if a.mask_node is None and int(np.max(value.exact)) >= extent:
        bound = F.bound_for(site, expr, extent)
        if bound is None:
            return None
        condition = f"({condition}) & ({S.atom(expr)} < {bound})"
    edit = F.mask_edit(site, condition)
    return F.fix("negative_offset", {"expr": expr, "value": low, "call": F.edited(site, edit, a.call)}, site, edit)


def mask_1d(site, extent: int, op: str):
    a = site.access
    if a.mask_node is None:
        lanes = S.lane_names(a)
        if not lanes:
            return None
        var = lanes[-1]
        bound = F.bound_for(site, var, extent)
        if bound is None:
            return F.no_fix("mask_tail_generic", {"op": op, "var": var}, "reason_no_bound_var")
        edit = F.mask_edit(site, F.condition(site, var, bound))
        return F.fix("mask_tail", {"call": F.edited(site, edit, a.call)}, site, edit)
    return off_by_one(site) or shifted_past_mask(site, extent) or bound_too_large(site, extent) \
        or F.no_fix("mask_bound", {"mask": ast.unparse(a.mask)}, "reason_mask_bound")


def bound_too_large(site, extent: int):
    """`mask=offs < n + 8` where the tensor has n elements: compare with the argument equal to its size; when
    the bound is an argument itself (`n`, launched with a wrong value), the launch is what to check."""
    a = site.access
    lanes = S.lane_names(a)
    if len(lanes) != 1 or offsets_text(site) != lanes[0]:
        return None
    ev = V.Evaluator(site.fn, site.arguments, site.program)
    for node in S.resolved_nodes(a.mask_node, site.fn, a.call.lineno):
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Lt)
                and S.index_name(node.left) == lanes[0] and hasattr(node, "lineno")):
            continue
        bound = node.comparators[0]
        try:
            value = int(ev.value(bound, node.lineno).exact)
        except (V.Unknown, TypeError, ValueError):
            return None
        if value <= extent:
            return None
        fields = {"mask": site.text(node), "value": value - 1, "passed": value, "bound": site.text(bound)}
        right = F.bound_for(site, "", extent)
        if isinstance(bound, ast.Name) or right is None:
            return F.no_fix("mask_bound_over", fields, "reason_bound_argument")
        edit = F.replace(site, bound, right)
        return F.fix("mask_bound_large", {**fields, "right": F.edited(site, edit, node)}, site, edit)
    return None


def offsets_text(site) -> str | None:
    """The offsets as written after the pointer argument: `offs + 1` in `x_ptr + offs + 1`."""
    node = site.access.pointer_node
    first = S.additive_terms(node)[0]
    if first is node or not (isinstance(first, ast.Name) and first.id in S.pointer_params(site.fn)):
        return None
    rest = site.text(node)[len(site.text(first)):].lstrip()
    return " ".join(rest[1:].split()) if rest.startswith("+") else None


def shifted_past_mask(site, extent: int):
    """The mask bounds `offs` but the lanes read `offs + 1`: bound what is read, `offs + 1 < n`."""
    a = site.access
    lanes, expr = S.lane_names(a), offsets_text(site)
    if len(lanes) != 1 or expr is None or expr == lanes[0]:
        return None
    shift = ast.parse(expr, mode="eval").body   # only `offs + k`: a scaled index (`offs * 2`) is a stride mistake
    if not (isinstance(shift, ast.BinOp) and isinstance(shift.op, (ast.Add, ast.Sub))
            and isinstance(shift.left, ast.Name) and shift.left.id == lanes[0]
            and lanes[0] not in {n.id for n in ast.walk(shift.right) if isinstance(n, ast.Name)}):
        return None
    bound = S.bounds(site.fn).get(lanes[0])
    ev = V.Evaluator(site.fn, site.arguments, site.program)
    try:
        if bound is None or int(ev.value(ast.parse(bound, mode="eval").body, a.call.lineno).exact) != extent:
            return None
    except (V.Unknown, TypeError, ValueError):
        return None
    edit = F.mask_edit(site, f"{S.atom(expr)} < {bound}")
    return F.fix("mask_offsets", {"var": lanes[0], "expr": expr, "call": F.edited(site, edit, a.call)}, site, edit)


def off_by_one(site):
    """`offs <= n` in the mask (as written, or where the mask's name is assigned) -> `offs < n`."""
    a = site.access
    if a.mask_node is None:
        return None
    for node in S.resolved_nodes(a.mask_node, site.fn, a.call.lineno):
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.LtE) \
                and hasattr(node, "lineno"):
            _, _, end_line, end_col = S.span(node.left, site.filename)
            start_line, start_col, _, _ = S.span(node.comparators[0], site.filename)
            if end_line != start_line:
                return None
            gap = S.source_lines(site.filename)[end_line - 1][end_col:start_col]
            edit = F.Edit(end_line, end_col, end_line, start_col, gap.replace("<=", "<"))
            return F.fix("off_by_one", {"mask": site.text(node), "right": F.edited(site, edit, node)}, site, edit)
    return None


def mask_2d(site, extent: int):
    """Mask each axis of a 2-D tile that the mask does not cover, with the kernel's own bounds."""
    a = site.access
    covered = {n.id for n in ast.walk(a.mask) if isinstance(n, ast.Name)} if a.mask is not None else set()
    assigned = S.assignments(site.fn, a.call.lineno)
    terms, unbounded = [], None
    for axis in (S.ROWS, S.COLS):
        names = a.axes[axis]
        if not names or names[0] in covered:
            continue
        bound = F.bound_for(site, names[0], None)
        whole = assigned.get(names[0])
        if bound is None and isinstance(whole, ast.Call) and S.is_tl(whole.func, "arange"):
            unbounded = names[0]   # `offs_d = tl.arange(0, D)` compared nowhere: the kernel takes the axis whole
            continue
        bound = bound or fix_axes.bound_2d(site, names[0], axis, extent)
        if bound is None:
            return F.no_fix("mask_2d_generic", {"var": names[0]}, "reason_no_bound_var")
        terms.append(F.condition(site, S.indexed(names[0], axis), bound))
        masked_axis = axis
    if not terms:
        return F.no_fix("mask_2d_generic", {"var": unbounded}, "reason_no_bound_var") if unbounded else None
    condition = terms[0] if len(terms) == 1 else " & ".join(f"({t})" for t in terms)
    edit = F.mask_edit(site, condition)
    kind = "mask_2d_axis" if a.mask_node is not None else "mask_2d" if len(terms) == 2 else "mask_2d_one"
    return F.fix(kind, {"mask": condition, "axis": masked_axis, "call": F.edited(site, edit, a.call)}, site, edit)
