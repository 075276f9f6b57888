"""What the fixes share: the failing access in the kernel's source with the launch's values (Site), the edit
that adds a condition to a mask, the check that every name a fix writes is a name of the kernel, the bound an
index must stay below."""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from minitriton.diagnostics import Diagnostic, Edit, Suggestion
from minitriton.frontend import kernel_source as S

WORD_FIELDS = {"op", "axis", "side"}   # fields looked up in the catalogue's word tables, not code
BUILTINS = {"tl", "triton", "min", "max", "range", "float", "int", "len", "None", "True", "False"}



@dataclass
class Site:
    """The failing access: the call in the kernel's source, the launch's argument values, the program; the
    layouts of the launch's arrays (parameter name -> (shape, strides in elements))."""

    filename: str
    access: S.Access
    arguments: dict
    program: tuple
    names: set
    grid: tuple = (1, 1, 1)
    layouts: dict = field(default_factory=dict)

    @property
    def fn(self):
        return self.access.kernel

    def text(self, node) -> str:
        return S.text_of(node, self.filename)


def site_of(record: Diagnostic, launch, op: str) -> Site | None:
    """The record's access in the kernel source, or None when the source does not show it."""
    if op not in S.MEMORY_CALLS:
        op = "atomic_add"
    access = S.access_at(record.filename, record.line, op, record.col) if record.filename else None
    if access is None:
        return None
    arguments = dict(getattr(launch, "arguments", None) or {})
    return Site(record.filename, access, arguments, tuple(record.program or (0,)),
                S.kernel_names(access.kernel, record.filename) | BUILTINS, tuple(getattr(launch, "grid", (1, 1, 1))),
                layouts(launch))


def layouts(launch) -> dict:
    """Parameter name -> (shape, strides in elements) of each array the launch was given."""
    found = {}
    for alloc in getattr(launch, "allocations", None) or ():
        array = alloc.array
        found[alloc.name] = (tuple(array.shape), tuple(s // array.itemsize for s in array.strides))
    return found


def known(site: Site, *sources: str) -> bool:
    """Whether every name in the source snippets is a name the kernel has."""
    for source in sources:
        try:
            tree = ast.parse(source.strip(), mode="eval")
        except SyntaxError:
            try:   # call arguments: `mask=offs < n`, `boundary_check=(0, 1), padding_option="zero"`
                tree = ast.parse(f"tl.call({source.strip()})", mode="eval")
            except SyntaxError:
                return False
        if any(isinstance(n, ast.Name) and n.id not in site.names for n in ast.walk(tree)):
            return False
    return True


def mask_edit(site: Site, condition: str) -> Edit:
    """The edit that adds `condition` to the access's mask: `mask=condition` when it has none, else the mask
    as written `& (condition)`."""
    call, mask = site.access.call, site.access.mask_node
    if mask is not None:
        line, col, end_line, end_col = S.span(mask, site.filename)
        return Edit(line, col, end_line, end_col, f"{S.atom(site.text(mask))} & ({condition})")
    last = max(list(call.args) + [k.value for k in call.keywords], key=lambda n: (n.end_lineno, n.end_col_offset))
    _, _, end_line, end_col = S.span(last, site.filename)
    return Edit(end_line, end_col, end_line, end_col, f", mask={condition}")


def replace(site: Site, node, text: str) -> Edit:
    line, col, end_line, end_col = S.span(node, site.filename)
    return Edit(line, col, end_line, end_col, text)


def edited(site: Site, edit: Edit, node) -> str:
    """The source of `node` (a statement or call spanning the edit) after the edit, on one line."""
    source = "".join(S.source_lines(site.filename))
    line, col, end_line, end_col = S.span(node, site.filename)
    lines = edit.apply(source).splitlines(keepends=True)
    delta = len(edit.text) - ((edit.end_col - edit.col) if edit.line == edit.end_line else 0)
    if end_line == edit.end_line and edit.line == edit.end_line:
        end_col += delta
    piece = lines[line - 1:end_line]
    text = piece[0][col:end_col] if len(piece) == 1 else piece[0][col:] + "".join(piece[1:-1]) + piece[-1][:end_col]
    return " ".join(text.split()).replace("( ", "(").replace(", )", ")")


def fix(kind: str, fields: dict, site: Site, edit: Edit | None) -> Suggestion | None:
    """A suggestion whose code (fields and edit) names only the kernel's own names; None otherwise."""
    code = [v for k, v in fields.items() if isinstance(v, str) and k not in WORD_FIELDS]
    if edit is not None and re.search(r"[A-Za-z_]", edit.text):   # an operator alone (`<=` -> `<`) names nothing
        code.append(edit.text[2:] if edit.text.startswith(", ") else edit.text)
    if not known(site, *code):
        return None
    return Suggestion(kind, fields, edit=edit)


def no_fix(kind: str, fields: dict, reason: str) -> Suggestion:
    return Suggestion(kind, fields, edit=None, reason=reason)


def bound_for(site: Site, var: str, extent: int | None) -> str | None:
    """What `var` must stay below: the bound the kernel compares it with elsewhere, else the one integer
    argument whose value is the tensor's extent."""
    found = S.bounds(site.fn).get(var)
    if found is not None:
        return found
    if extent is None:
        return None
    params = [a.arg for a in site.fn.args.args]
    equal = [p for p in params if isinstance(site.arguments.get(p), int) and not isinstance(site.arguments.get(p), bool)
             and site.arguments[p] == extent]
    return equal[0] if equal else None


def condition(site: Site, var: str, bound: str) -> str:
    """`var < bound`, or the kernel's own name for it where it has one in scope (`mask = offs < n`: `mask`)."""
    wanted = ast.unparse(ast.parse(f"{var} < {bound}", mode="eval").body)
    in_scope = S.names_in_scope(site.fn, site.access.call)
    for name, value in S.assignments(site.fn, site.access.call.lineno).items():
        if name in in_scope and isinstance(value, ast.Compare) and ast.unparse(value) == wanted:
            return name
    return wanted
