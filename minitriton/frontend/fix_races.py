"""Fixes for stores that race between programs: programs whose blocks overlap because the program id is
multiplied by less than the block (`pid * 4 + tl.arange(0, 8)` -> `pid * 8`), a 2-D tile whose rows are
placed closer than a row holds, a store without a mask whose tail writes the next program's elements, and an
address that does not depend on the program id at all (then the share another access gives each program,
where it keeps the programs' writes apart inside the stored array, else the program's own row of an array with
one row per program). Atomics are never the fix of colliding offsets."""
from __future__ import annotations

import ast

import numpy as np

from minitriton.frontend import fix_site as F
from minitriton.frontend import kernel_source as S
from minitriton.frontend import kernel_values as V


def suggest(record, launch):
    site = F.site_of(record, launch, "store")
    if site is None:
        return None
    a = site.access
    programs = S.derived_from(site.fn, "program_id")
    if not any(S.depends_on(n, programs, "program_id") for n in [a.pointer]):
        return shared(site)
    return program_axis(site) or block_stride(site) or row_stride(site) or unmasked(site) \
        or F.no_fix("race_own_elements", {}, "reason_race_intent")


def shared(site):
    """Every program writes the same addresses: the share another access of the kernel gives each program."""
    a = site.access
    programs = S.derived_from(site.fn, "program_id")
    mine = [ast.unparse(t) for t in S.additive_terms(a.pointer_node)[1:]]
    forgot = forgot_program_id(site)
    if forgot is not None:
        return forgot
    reduced = reduction_store(site)
    if reduced is not None:
        return reduced
    if not mine:   # a scalar result stored once (`tl.store(out_ptr, total)`): the share is the kernel's intent
        return F.no_fix("race_shared_generic", {}, "reason_race_intent")
    for other in S.accesses(site.fn):
        terms = S.additive_terms(other.pointer_node)
        if other is a or len(terms) != len(mine) + 2 or [ast.unparse(t) for t in terms[2:]] != mine:
            continue
        share = site.text(terms[1])
        in_scope = S.names_in_scope(site.fn, a.call)
        if S.depends_on(terms[1], programs, "program_id") and F.known(site, share) \
                and {n.id for n in ast.walk(terms[1]) if isinstance(n, ast.Name)} <= in_scope | F.BUILTINS \
                and _share_fits(site, terms[1]):
            first = a.pointer_node.left if isinstance(a.pointer_node, ast.BinOp) else a.pointer_node
            edit = F.replace(site, first, f"{site.text(first)} + {share}")
            return F.fix("race_shared", {"example": share, "call": F.edited(site, edit, a.call)}, site, edit)
    return own_row(site) or F.no_fix("race_shared_generic", {}, "reason_race_intent")


def own_row(site):
    """A store to a row-major 2-D array with one row per program (`dw_partial`, programs x n_cols) whose lanes
    stay within a row: each program's share is its own row, `pid * n_cols`: the program id along the grid's
    one axis of several programs, times the integer argument equal to the array's row stride (the lanes'
    bound where that is the one)."""
    a = site.access
    base = S.additive_terms(a.pointer_node)[0]
    shape, strides = site.layouts.get(base.id, ((), ())) if isinstance(base, ast.Name) else ((), ())
    spread = [k for k, g in enumerate(site.grid) if g > 1]
    if len(shape) != 2 or strides[1] != 1 or len(spread) != 1 or site.grid[spread[0]] != shape[0]:
        return None
    written = _written(site)
    if written is None or written.min() < 0 or written.max() >= shape[1]:
        return None
    pid = _program_id_name(site, spread[0])
    stride = _argument_equal(site, strides[0])
    if pid is None or stride is None:
        return None
    share = f"{pid} * {stride}"
    first = a.pointer_node.left if isinstance(a.pointer_node, ast.BinOp) else a.pointer_node
    edit = F.replace(site, first, f"{site.text(first)} + {share}")
    fields = {"tensor": base.id, "rows": shape[0], "example": share, "call": F.edited(site, edit, a.call)}
    return F.fix("race_own_row", fields, site, edit)


def _written(site):
    """The offsets the store writes at the failing program (its mask applied); None when unknown or none."""
    a = site.access
    found = V.offsets_at(site.fn, a, site.arguments, site.program)
    if found is None:
        return None
    offsets, ev = found
    written = np.asarray(offsets.exact).reshape(-1)
    if a.mask_node is not None:
        try:
            on = np.asarray(ev.value(a.mask_node, a.call.lineno).exact, bool)
            written = written[np.broadcast_to(on, np.shape(offsets.exact)).reshape(-1)]
        except (V.Unknown, TypeError, ValueError, IndexError, OverflowError):
            return None
    return written if written.size else None


_PROGRAMS_CHECKED = 4096


def _share_fits(site, share) -> bool:
    """Whether adding `share` (another access's program term) to the store's offsets keeps every program's
    writes inside the stored array and apart from every other program's. Without the array's layout or the
    store's offsets (nothing to check against) the kernel's other accesses are trusted; a share whose value
    the arguments do not fix is not."""
    a = site.access
    base = S.additive_terms(a.pointer_node)[0]
    layout = site.layouts.get(base.id) if isinstance(base, ast.Name) else None
    written = _written(site)
    programs = [(i, j, k) for i in range(site.grid[0]) for j in range(site.grid[1]) for k in range(site.grid[2])]
    if layout is None or written is None or not 1 < len(programs) <= _PROGRAMS_CHECKED:
        return True
    shape, strides = layout
    if min(strides, default=1) < 0:
        return True
    extent = sum((n - 1) * s for n, s in zip(shape, strides)) + 1 if all(shape) else 0
    spans = []
    for program in programs:
        try:
            value = V.Evaluator(site.fn, site.arguments, program).value(share, a.call.lineno).exact
        except (V.Unknown, TypeError, ValueError, IndexError, OverflowError):
            return False
        if np.size(value) != 1:
            return False
        low, high = int(value) + int(written.min()), int(value) + int(written.max())
        if low < 0 or high >= extent:
            return False
        spans.append((low, high))
    spans.sort()
    return all(prev[1] < nxt[0] for prev, nxt in zip(spans, spans[1:]))


def _program_id_name(site, axis: int) -> str | None:
    """The name in scope at the store assigned `tl.program_id(axis)` itself, else the call written out."""
    in_scope = S.names_in_scope(site.fn, site.access.call)
    for name, value in S.assignments(site.fn, site.access.call.lineno).items():
        if name in in_scope and isinstance(value, ast.Call) and S.is_tl(value.func, "program_id") and value.args \
                and isinstance(value.args[0], ast.Constant) and value.args[0].value == axis:
            return name
    return f"tl.program_id({axis})"


def _argument_equal(site, value: int) -> str | None:
    """The integer argument equal to `value`: the bound of the store's lanes if it is one, else the only one."""
    equal = [p.arg for p in site.fn.args.args if type(site.arguments.get(p.arg)) is int
             and site.arguments[p.arg] == value]
    lanes = S.lane_names(site.access)
    bound = S.bounds(site.fn).get(lanes[-1]) if lanes else None
    if bound in equal:
        return bound
    return equal[0] if len(equal) == 1 else None


_ACCUMULATE = {"sum": "atomic_add", "max": "atomic_max", "min": "atomic_min"}


def reduction_store(site):
    """`tl.store(out_ptr, tl.sum(...))` from every program: the partial results are to be combined, which is
    what an atomic does: `tl.atomic_add(out_ptr, ...)`."""
    a = site.access
    if not (isinstance(a.pointer_node, ast.Name) and len(a.call.args) >= 2 and isinstance(a.call.func, ast.Attribute)):
        return None
    value = a.call.args[1]
    assigned = S.assignments(site.fn, a.call.lineno)
    source = assigned.get(value.id, value) if isinstance(value, ast.Name) else value
    reduction = next((n.func.attr for n in ast.walk(source) if isinstance(n, ast.Call)
                      and any(S.is_tl(n.func, r) for r in _ACCUMULATE)), None)
    if reduction is None:
        return None
    func = a.call.func
    right = f"{site.text(func.value)}.{_ACCUMULATE[reduction]}"
    edit = F.replace(site, func, right)
    return F.fix("race_reduction", {"reduction": f"tl.{reduction}", "call": F.edited(site, edit, a.call)},
                 site, edit)


def program_axis(site):
    """`tl.program_id(1)` on a grid whose axis 1 has one program (always 0) while axis 0 has several."""
    a = site.access
    used = {n.args[0].value for n in ast.walk(site.fn) if isinstance(n, ast.Call) and S.is_tl(n.func, "program_id")
            and n.args and isinstance(n.args[0], ast.Constant)}
    spread = [j for j, g in enumerate(site.grid) if g > 1 and j not in used]
    for node in S.resolved_nodes(a.pointer_node, site.fn, a.call.lineno):
        if isinstance(node, ast.Call) and S.is_tl(node.func, "program_id") and node.args \
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, int) \
                and site.grid[node.args[0].value] == 1 and len(spread) == 1 and hasattr(node, "lineno"):
            edit = F.replace(site, node.args[0], str(spread[0]))
            shown = max(node.args[0].value, spread[0]) + 1   # the grid up to the axes in question: (4, 1)
            fields = {"call": site.text(node), "grid": str(tuple(site.grid[:shown])), "right": F.edited(site, edit, node)}
            return F.fix("race_program_axis", fields, site, edit)
    return None


def forgot_program_id(site):
    """A kernel that never asks tl.program_id, whose lanes are `offs = tl.arange(0, B)`: every program does
    block 0; each program's block starts at `tl.program_id(0) * B`."""
    if any(isinstance(n, ast.Call) and S.is_tl(n.func, "program_id") for n in ast.walk(site.fn)):
        return None
    lanes = S.lane_names(site.access)
    value = S.assignments(site.fn, site.access.call.lineno).get(lanes[-1]) if lanes else None
    if not (isinstance(value, ast.Call) and S.is_tl(value.func, "arange") and len(value.args) == 2
            and isinstance(value.args[0], ast.Constant) and value.args[0].value == 0 and hasattr(value, "lineno")):
        return None
    right = f"tl.program_id(0) * {S.atom(site.text(value.args[1]))} + {site.text(value)}"
    return F.fix("race_no_program_id", {"var": lanes[-1], "right": right}, site, F.replace(site, value, right))


def block_stride(site):
    """`pid * S + tl.arange(0, B)` with S < B: the blocks of neighbouring programs overlap; S must be B."""
    a = site.access
    if a.is_2d:   # a tile's rows are placed by row_stride
        return None
    programs = S.derived_from(site.fn, "program_id")
    nodes = S.resolved_nodes(a.pointer_node, site.fn, a.call.lineno)
    aranges = [n for n in nodes if isinstance(n, ast.Call) and S.is_tl(n.func, "arange") and len(n.args) == 2]
    ev = V.Evaluator(site.fn, site.arguments, site.program)
    for node in nodes:   # `tl.program_id(0) + tl.arange(0, B)`: a step of 1
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and aranges:
            for pid in (node.left, node.right):
                if _is_program_id(pid, site) and hasattr(pid, "lineno") and not _mask_narrows(site, ev, 1):
                    try:
                        lo, hi = (int(ev.value(x, aranges[0].lineno).exact) for x in aranges[0].args)
                    except (V.Unknown, TypeError):
                        continue
                    block = site.text(aranges[0].args[1])
                    edit = F.replace(site, pid, f"{S.atom(site.text(pid))} * {S.atom(block)}")
                    fields = {"expr": site.text(pid), "stride": "1", "block": hi - lo,
                              "right": F.edited(site, edit, node)}
                    return F.fix("race_stride", fields, site, edit)
    for node in nodes:
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and hasattr(node, "lineno")):
            continue
        for pid, stride in ((node.left, node.right), (node.right, node.left)):
            if not S.depends_on(pid, programs, "program_id") or S.depends_on(stride, programs, "program_id"):
                continue
            for arange in aranges:
                try:
                    step = int(ev.value(stride, node.lineno).exact)
                    lo, hi = (int(ev.value(x, arange.lineno).exact) for x in arange.args)
                except (V.Unknown, TypeError):
                    continue
                if 0 < step < hi - lo and not _mask_narrows(site, ev, step):
                    block = site.text(arange.args[1]) if lo == 0 else f"({site.text(arange.args[1])} - " \
                        f"{site.text(arange.args[0])})"
                    edit = F.replace(site, stride, block)
                    fields = {"expr": site.text(node), "stride": site.text(stride), "block": hi - lo,
                              "right": F.edited(site, edit, node)}
                    return F.fix("race_stride", fields, site, edit)
    return None


def _is_program_id(node, site) -> bool:
    """`tl.program_id(k)` itself, or a name assigned just that."""
    if isinstance(node, ast.Name):
        node = S.assignments(site.fn, site.access.call.lineno).get(node.id, node)
    return isinstance(node, ast.Call) and S.is_tl(node.func, "program_id")


def _mask_narrows(site, ev, step: int) -> bool:
    """Whether an unmasked store's lanes have a bound no wider than the step (`cols < n_cols` with rows
    n_cols apart): then the mask, not the stride, is what is missing."""
    a = site.access
    lanes = S.lane_names(a)
    bound = F.bound_for(site, lanes[-1], None) if a.mask_node is None and lanes else None
    try:
        return bound is not None and int(ev.value(ast.parse(bound, mode="eval").body, a.call.lineno).exact) <= step
    except (V.Unknown, TypeError, ValueError):
        return False


def row_stride(site):
    """A row-major tile `r[:, None] * S + c[None, :]` whose columns run to a bound B > S: rows overlap; use B."""
    a = site.access
    found = {}
    for term in S.additive_terms(a.pointer_node):
        if isinstance(term, ast.BinOp) and isinstance(term.op, ast.Mult) and isinstance(term.left, ast.Subscript) \
                and S.axis_of(term.left) == S.ROWS and isinstance(term.right, ast.Name):
            found["rows"] = term
        elif isinstance(term, ast.Subscript) and S.axis_of(term) == S.COLS and isinstance(term.value, ast.Name):
            found["cols"] = term.value.id
    if len(found) != 2:
        return None
    stride, bound = found["rows"].right, S.bounds(site.fn).get(found["cols"])
    values = site.arguments
    if bound is None or not (isinstance(values.get(stride.id), int) and isinstance(values.get(bound), int)) \
            or not values[stride.id] < values[bound]:
        return None
    edit = F.replace(site, stride, bound)
    fields = {"expr": site.text(found["rows"]), "stride": stride.id, "var": found["cols"], "bound": bound,
              "right": F.edited(site, edit, found["rows"])}
    return F.fix("race_row_stride", fields, site, edit)


def unmasked(site):
    a = site.access
    if a.mask_node is not None:
        return None
    lanes = S.lane_names(a)
    bound = F.bound_for(site, lanes[-1], None) if lanes else None
    if bound is None:
        return None
    edit = F.mask_edit(site, F.condition(site, lanes[-1], bound))
    return F.fix("race_unmasked", {"call": F.edited(site, edit, a.call)}, site, edit)

