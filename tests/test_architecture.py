"""The emulator's shape: imports point down the layers of docs/architecture.md, no cycles, no imports
inside functions (optional dependencies aside), modules within their size budget."""
from __future__ import annotations

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "minitriton"

# docs/architecture.md, "Layers": a module may import modules of its own layer or of lower layers.
LAYERS = [
    ("minitriton.errors", "minitriton.options", "minitriton.diagnostics"),
    ("minitriton.semantics.dtypes", "minitriton.semantics.numerics"),
    ("minitriton.values",),
    ("minitriton.semantics",),
    ("minitriton.memory",),
    ("minitriton.observers",),
    ("minitriton.frontend",),
    ("minitriton.runtime",),
    ("minitriton.language", "minitriton.compiler", "minitriton.tools"),
    ("minitriton.testing", "minitriton.picture"),
    ("minitriton",),
]
OPTIONAL = {"torch", "hypothesis", "ml_dtypes"}   # may be imported where first needed
MODULE_LINES = 500
EMULATOR_LINES = 11800                            # minitriton/ without testing/, picture/ and diagnostics/ (docs/architecture.md)
DIAGNOSTICS_LINES = 3010                          # the records, their texts in two languages, the fixes
# The diagnostics' modules: records and texts, and the fixes read from the kernel source (in frontend/, the layer
# that reads source); they count against DIAGNOSTICS_LINES, not the emulator's budget.
DIAGNOSTICS = ("minitriton.diagnostics", "minitriton.frontend.fix", "minitriton.frontend.kernel_source",
               "minitriton.frontend.kernel_values")


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        yield ".".join(parts), path


def layer_of(module: str) -> int:
    """The layer of a module: its longest matching prefix in LAYERS."""
    best, rank = -1, None
    for i, prefixes in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, rank = len(p), i
    assert rank is not None, f"{module} is in no layer of docs/architecture.md"
    return rank


def _imports(path: pathlib.Path, module: str):
    """(imported module, line, inside a function) for every import of minitriton modules and optional deps."""
    tree = ast.parse(path.read_text())
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    functions = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                 for n in ast.walk(f) if n is not f}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = [target + "." + a.name for a in node.names]
            yield target, names, node.lineno, id(node) in functions
        elif isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, [a.name], node.lineno, id(node) in functions


def _resolve(target: str, names: list, known: set) -> list:
    """The minitriton modules an import statement loads (`from pkg import module` names the module)."""
    found = [n for n in names if n in known]
    return found or ([target] if target in known else [target.rsplit(".", 1)[0]] if target.rsplit(".", 1)[0] in known else [])


MODULES = dict(_modules())


def test_imports_point_down_the_layers():
    known = set(MODULES)
    upward = []
    for module, path in MODULES.items():
        for target, names, line, _ in _imports(path, module):
            if not target.startswith("minitriton"):
                continue
            for imported in _resolve(target, names, known):
                if imported == "minitriton" and layer_of(module) < layer_of("minitriton"):
                    upward.append(f"{path.name}:{line} {module} imports the package root")
                elif layer_of(imported) > layer_of(module):
                    upward.append(f"{module}:{line} imports {imported} (layer {layer_of(imported)} > "
                                  f"{layer_of(module)})")
    assert not upward, "upward imports:\n" + "\n".join(upward)


def test_no_import_cycles():
    known = set(MODULES)
    graph = {m: set() for m in known}
    for module, path in MODULES.items():
        for target, names, _, inside in _imports(path, module):
            if target.startswith("minitriton") and not inside:
                graph[module].update(i for i in _resolve(target, names, known) if i != module)
    # packages import their own modules by design: only module-to-module edges count
    state, stack, cycles = {}, [], []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for n in sorted(graph[m]):
            if n.startswith(m + "."):
                continue
            if state.get(n) == 1:
                cycles.append(" -> ".join(stack[stack.index(n):] + [n]))
            elif n not in state:
                visit(n)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_no_imports_inside_functions():
    found = []
    for module, path in MODULES.items():
        for target, _, line, inside in _imports(path, module):
            if inside and target.split(".")[0] not in OPTIONAL:
                found.append(f"{module}:{line} imports {target} inside a function")
    assert not found, "\n".join(found)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_module_size(module):
    lines = len(MODULES[module].read_text().splitlines())
    assert lines <= MODULE_LINES, f"{module} has {lines} lines (budget {MODULE_LINES}): split it by concern"


def test_emulator_size():
    total = sum(len(p.read_text().splitlines()) for m, p in MODULES.items()
                if not m.startswith(("minitriton.testing", "minitriton.picture") + DIAGNOSTICS))
    assert total <= EMULATOR_LINES, f"the emulator has {total} lines (budget {EMULATOR_LINES})"


def test_diagnostics_size():
    total = sum(len(p.read_text().splitlines()) for m, p in MODULES.items() if m.startswith(DIAGNOSTICS))
    assert total <= DIAGNOSTICS_LINES, f"minitriton/diagnostics has {total} lines (budget {DIAGNOSTICS_LINES})"


def test_layer_rule_finds_an_upward_import(tmp_path):
    """The checker itself: a values module importing the runtime is reported."""
    bad = tmp_path / "bad.py"
    bad.write_text("from minitriton.runtime import launch\n")
    imports = list(_imports(bad, "minitriton.values.bad"))
    assert imports and layer_of(imports[0][0]) > layer_of("minitriton.values.bad")
