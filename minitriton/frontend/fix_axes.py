"""Fixes for the axes of a 2-D tile: a mask that tests an index along the other axis than the pointer uses it,
one stride for both axes, a vector broadcast along the wrong axis, and the bound of an axis read from the
tensor's extent. `static_hint` finds these in the source alone, for a failure whose values are all a check
has (the sandbox's wrong-output tests)."""
from __future__ import annotations

import ast

from minitriton.diagnostics import Suggestion
from minitriton.frontend import fix_site as F
from minitriton.frontend import kernel_source as S


def wrong_axis(site):
    """`offs_m[None, :] < M` in the mask where the pointer has `offs_m[:, None]` -> `offs_m[:, None]`. A mask
    variable that another access also uses (a transposed store reusing the load's `mask`) is left alone: the
    failing access gets its own mask, the variable's expression with its axes turned."""
    a = site.access
    in_mask = S.axes_of(a.mask)
    swaps = {(name, axis): S.indexed(name, other) for axis, other in ((S.ROWS, S.COLS), (S.COLS, S.ROWS))
             for name in in_mask[axis] if name in a.axes[other] and name not in a.axes[axis]}
    if not swaps:
        return None
    (name, axis), right = next(iter(swaps.items()))
    fields = {"var": name, "used": S.indexed(name, axis), "right": right,
              "axis": S.COLS if axis == S.ROWS else S.ROWS}
    nodes = [n for n in S.resolved_nodes(a.mask_node, site.fn, a.call.lineno)
             if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and hasattr(n, "lineno")
             and (n.value.id, S.axis_of(n)) in swaps]
    if isinstance(a.mask_node, ast.Name) and _used_elsewhere(site.fn, a.mask_node):
        value = S.assignments(site.fn, a.call.lineno).get(a.mask_node.id)
        own = _turned(site, value, nodes, swaps) if value is not None else None
        if own is None:
            return F.no_fix("mask_axis", fields, "reason_helper")
        return F.fix("mask_axis_shared", {"mask": a.mask_node.id, "own": own}, site, F.replace(site, a.mask_node, own))
    edit = F.replace(site, nodes[0], right) if len(nodes) == 1 else None
    return F.fix("mask_axis", fields, site, edit) if edit else F.no_fix("mask_axis", fields, "reason_helper")


def _used_elsewhere(fn: ast.FunctionDef, name: ast.Name) -> bool:
    """Whether the variable `name` is read anywhere in the kernel besides this use of it."""
    return any(isinstance(n, ast.Name) and n.id == name.id and isinstance(n.ctx, ast.Load) and n is not name
               for n in ast.walk(fn))


def _turned(site, value: ast.expr, nodes: list, swaps: dict) -> str | None:
    """The source of `value` (one line) with each of its subscripts in `nodes` written along the other axis."""
    line, col, end_line, end_col = S.span(value, site.filename)
    inside = [S.span(n, site.filename) for n in nodes if n.lineno == line]
    if end_line != line or len(inside) != len(nodes):
        return None
    text = S.source_lines(site.filename)[line - 1][col:end_col]
    for node, (_, c, _, e) in sorted(zip(nodes, inside), key=lambda p: -p[1][1]):
        text = text[:c - col] + swaps[(node.value.id, S.axis_of(node))] + text[e - col:]
    return text


def same_stride(site):
    """`offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bk` -> the column's own stride, `stride_bn`."""
    a = site.access
    steps = {}   # (axis, stride name) -> [(index name, the stride's Name node)]
    for node in S.resolved_nodes(a.pointer_node, site.fn, a.call.lineno):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            for index, stride in ((node.left, node.right), (node.right, node.left)):
                if isinstance(index, ast.Subscript) and isinstance(index.value, ast.Name) and S.axis_of(index) \
                        and isinstance(stride, ast.Name):
                    steps.setdefault((S.axis_of(index), stride.id), []).append((index.value.id, stride))
    for (axis, stride), used in steps.items():
        if axis != S.COLS or (S.ROWS, stride) not in steps:
            continue
        rows = steps[(S.ROWS, stride)][0][0]
        for name, node, wrong_axis_name in ((used[0][0], used[0][1], S.COLS),
                                            (rows, steps[(S.ROWS, stride)][0][1], S.ROWS)):
            right = stride_for(site.fn, name, stride)
            if right:
                fields = {"row": rows, "col": used[0][0], "stride": stride, "name": name, "right": right}
                return F.fix("same_stride", fields, site, F.replace(site, node, right))
        return F.no_fix("same_stride_generic", {"row": rows, "col": used[0][0], "stride": stride},
                        "reason_stride_unknown")
    return None


def stride_for(fn: ast.FunctionDef, index: str, wrong: str) -> str | None:
    """The stride parameter an index goes with, by the kernel's naming: `offs_n` with `stride_bk` used in its
    place gives `stride_bn` when the kernel has such a parameter."""
    params = {a.arg for a in fn.args.args}
    letter = index.rsplit("_", 1)[-1][:1]
    guess = wrong[:-1] + letter if letter and wrong[-1:].isalpha() else None
    return guess if guess in params and guess != wrong else None


def bound_2d(site, var: str, axis: str, extent: int) -> str | None:
    """The bound of a row-major tile's axis from the tensor's extent: the unit-stride axis stays below the
    other axis's multiplier (`rows[None, :]` with `cols[:, None] * M`: M); the multiplied axis below the one
    integer argument equal to extent / multiplier."""
    steps = {}
    for term in S.additive_terms(site.access.pointer):
        factors = [term.left, term.right] if isinstance(term, ast.BinOp) and isinstance(term.op, ast.Mult) else [term]
        for i, f in enumerate(factors):
            if isinstance(f, ast.Subscript) and isinstance(f.value, ast.Name) and S.axis_of(f):
                steps[f.value.id] = factors[1 - i] if len(factors) == 2 else None
    if var not in steps or len(steps) != 2:
        return None
    other = next(n for n in steps if n != var)
    if steps[var] is None and isinstance(steps[other], ast.Name):
        return steps[other].id
    stride = site.arguments.get(steps[var].id) if isinstance(steps[var], ast.Name) else None
    if steps[other] is None and isinstance(stride, int) and stride > 0 and extent % stride == 0:
        return F.bound_for(site, "", extent // stride)
    return None


def broadcast_mixup(fn: ast.FunctionDef):
    """(the Subscript node, value, the axis it is used along, its index name, the axis that index numbers) for a
    vector loaded at a 1-D index (`x = tl.load(x_ptr + offs_m)`) and broadcast along the other axis than its
    index runs in the kernel's 2-D addresses (`x[None, :]` while the addresses have `offs_m[:, None]`)."""
    along = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            load = next((c for c in ast.walk(node.value) if isinstance(c, ast.Call) and S.is_tl(c.func, "load")), None)
            access = S.access_of(fn, load, "load") if load is not None and load.args else None
            if access is not None and not access.is_2d:
                names = S.lane_names(access)
                if len(names) == 1:
                    along[node.targets[0].id] = names[0]
    index_axis = {}
    for access in S.accesses(fn):
        for axis, names in access.axes.items():
            for name in names:
                index_axis.setdefault(name, axis)
    for node in sorted((n for n in ast.walk(fn) if isinstance(n, ast.Subscript)), key=lambda n: (n.lineno, n.col_offset)):
        if isinstance(node.value, ast.Name) and node.value.id in along:
            used, index = S.axis_of(node), along[node.value.id]
            if used and index in index_axis and index_axis[index] != used:
                return node, node.value.id, used, index, index_axis[index]
    return None


def static_hint(filename: str):
    """A Suggestion for a mix-up visible in the kernel source alone: a mask on the wrong axis, one stride for
    both axes of a tile, a vector broadcast along the wrong axis; None when the source shows none."""
    for fn in S.functions(filename):
        found = next(_hints(fn, filename), None)
        if found is not None:
            return found
    return None


def on_line(filename: str, line: int):
    """The mix-up of `static_hint` in what the kernel line `line` computes (the line itself and the values of
    the names it uses): a mask on the wrong axis or a vector broadcast along the wrong axis gives blocks of
    incompatible shapes there. None when the source shows none there."""
    fn = S.kernel_at(filename, line)
    if fn is None:
        return None
    reached = {S.span(n, filename)[:2] for n in _computed_at(fn, line) if hasattr(n, "lineno")}
    return next((h for h in _hints(fn, filename) if h.edit is not None and (h.edit.line, h.edit.col) in reached),
                None)


def _computed_at(fn: ast.FunctionDef, line: int) -> list:
    """The nodes of the simple statements at `line` and of the values last assigned to the names they use."""
    compound = (ast.For, ast.While, ast.If, ast.With, ast.FunctionDef, ast.AsyncFunctionDef, ast.Try)
    out = []
    for stmt in ast.walk(fn):
        if isinstance(stmt, ast.stmt) and not isinstance(stmt, compound) \
                and stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno):
            for child in ast.iter_child_nodes(stmt):
                if isinstance(child, ast.expr):
                    out += S.resolved_nodes(child, fn, stmt.lineno)
    return out


def _hints(fn: ast.FunctionDef, filename: str):
    names = S.kernel_names(fn, filename) | F.BUILTINS
    for access in S.accesses(fn):
        site = F.Site(filename, access, {}, (0,), names)
        found = wrong_axis(site) or same_stride(site)
        if found is not None:
            yield found
    mixup = broadcast_mixup(fn)
    if mixup:
        node, value, used, index, axis = mixup
        site = F.Site(filename, None, {}, (0,), names)
        fields = {"var": value, "idx": index, "idx_form": S.indexed(index, axis), "used": S.indexed(value, used),
                  "right": S.indexed(value, axis), "axis": axis}
        found = F.fix("broadcast_axis", fields, site, F.replace(site, node, S.indexed(value, axis)))
        if found is not None:
            yield found


def arange_block(record) -> Suggestion:
    """`tl.arange(0, 100)`: a block of the next power of 2 and a mask for the lanes past the range, said in
    the line's own terms where the line assigns a name (assigned nowhere else) just that `tl.arange`, its
    bounds written as numbers (`offs = tl.arange(0, 100)`: `tl.arange(0, 128)` and `offs < 100`). No edit: the mask goes on the accesses
    that use the lanes, which the line does not show."""
    start, end, pow2 = record.fields["start"], record.fields["end"], record.fields["pow2"]
    fn = S.kernel_at(record.filename, record.line) if record.filename and record.line is not None else None
    found = [] if fn is None else [
        (node.targets[0].id, node.value) for node in ast.walk(fn) if isinstance(node, ast.Assign)
        and node.lineno == record.line and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Call) and S.is_tl(node.value.func, "arange")
        and [getattr(a, "value", None) for a in node.value.args] == [start, end]]
    assigned = [t.id for n in ast.walk(fn) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if isinstance(t, ast.Name)] \
        if found else []
    if len(found) != 1 or not isinstance(found[0][1].func, ast.Attribute) or assigned.count(found[0][0]) != 1:
        return Suggestion("arange_fix", {"pow2": pow2})   # the lanes' name means other numbers elsewhere
    var, call = found[0]
    right = f"{S.text_of(call.func, record.filename)}({start}, {start + pow2})"
    return Suggestion("arange_fix_named", {"pow2": pow2, "right": right, "mask": f"{var} < {end}"})
