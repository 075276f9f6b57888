"""Fixes for stores that race between programs: programs whose blocks overlap because the program id is
multiplied by less than the block (`pid * 4 + tl.arange(0, 8)` -> `pid * 8`), a 2-D tile whose rows are
placed closer than a row holds, a store without a mask whose tail writes the next program's elements, and an
address that does not depend on the program id at all. Atomics are never the fix of colliding offsets."""
from __future__ import annotations

import ast

from minitriton.frontend import fixes as F
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
    return block_stride(site) or row_stride(site) or unmasked(site) \
        or F.no_fix("race_own_elements", {}, "reason_race_intent")


def shared(site):
    """Every program writes the same addresses: the share another access of the kernel gives each program."""
    a = site.access
    programs = S.derived_from(site.fn, "program_id")
    mine = [ast.unparse(t) for t in S.additive_terms(a.pointer_node)[1:]]
    if not mine:   # a scalar result stored once (`tl.store(out_ptr, total)`): the share is the kernel's intent
        return F.no_fix("race_shared_generic", {}, "reason_race_intent")
    for other in S.accesses(site.fn):
        terms = S.additive_terms(other.pointer_node)
        if other is a or len(terms) != len(mine) + 2 or [ast.unparse(t) for t in terms[2:]] != mine:
            continue
        share = site.text(terms[1])
        if S.depends_on(terms[1], programs, "program_id") and F.known(site, share):
            first = a.pointer_node.left if isinstance(a.pointer_node, ast.BinOp) else a.pointer_node
            edit = F.replace(site, first, f"{site.text(first)} + {share}")
            return F.fix("race_shared", {"example": share, "call": F.edited(site, edit, a.call)}, site, edit)
    return F.no_fix("race_shared_generic", {}, "reason_race_intent")


def block_stride(site):
    """`pid * S + tl.arange(0, B)` with S < B: the blocks of neighbouring programs overlap; S must be B."""
    a = site.access
    if a.is_2d:   # a tile's rows are placed by row_stride
        return None
    programs = S.derived_from(site.fn, "program_id")
    nodes = S.resolved_nodes(a.pointer_node, site.fn, a.call.lineno)
    aranges = [n for n in nodes if isinstance(n, ast.Call) and S.is_tl(n.func, "arange") and len(n.args) == 2]
    ev = V.Evaluator(site.fn, site.arguments, site.program)
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
    edit = F.mask_edit(site, f"{lanes[-1]} < {bound}")
    return F.fix("race_unmasked", {"call": F.edited(site, edit, a.call)}, site, edit)

