"""The emulator's shape: imports point down the layers of docs/architecture.md, no cycles, no imports
inside functions (optional dependencies aside), modules within their size budget. The tools beside it (parity/,
sandbox/, bench/) keep the same module budget, their own layers and no cycles; parity/results/ stays a small
share of the repository."""
from __future__ import annotations

import ast
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "minitriton"

# docs/architecture.md, "Layers": a module may import modules of its own layer or of lower layers.
LAYERS = [
    ("minitriton.errors", "minitriton.options", "minitriton.diagnostics"),
    ("minitriton.semantics.dtypes", "minitriton.semantics.numerics"),
    ("minitriton.values",),
    ("minitriton.semantics",),
    ("minitriton.memory",),
    ("minitriton.observers", "minitriton.perf"),
    ("minitriton.frontend",),
    ("minitriton.runtime",),
    ("minitriton.language", "minitriton.compiler", "minitriton.tools", "minitriton.profiler"),
    ("minitriton.testing", "minitriton.picture"),
    ("minitriton",),
]
OPTIONAL = {"torch", "hypothesis", "ml_dtypes"}   # may be imported where first needed
MODULE_LINES = 500
EMULATOR_LINES = 13130                            # minitriton/ without testing/, picture/, diagnostics/ and perf/ (docs/architecture.md)
DIAGNOSTICS_LINES = 3056                          # the records, their texts in two languages, the fixes
PERF_LINES = 210                                  # perf/: the GPU cost model and its device profiles
# The diagnostics' modules: records and texts, and the fixes read from the kernel source (in frontend/, the layer
# that reads source); they count against DIAGNOSTICS_LINES, not the emulator's budget.
DIAGNOSTICS = ("minitriton.diagnostics", "minitriton.frontend.fix", "minitriton.frontend.kernel_source",
               "minitriton.frontend.kernel_values")


def _modules(package=PACKAGE, skip=()):
    for path in sorted(package.rglob("*.py")):
        if any(s in path.relative_to(ROOT).parents for s in skip):
            continue
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        yield ".".join(parts), path


def layer_of(module: str, layers=LAYERS) -> int:
    """The layer of a module: its longest matching prefix in `layers`."""
    best, rank = -1, None
    for i, prefixes in enumerate(layers):
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
                if not m.startswith(("minitriton.testing", "minitriton.picture", "minitriton.perf") + DIAGNOSTICS))
    assert total <= EMULATOR_LINES, f"the emulator has {total} lines (budget {EMULATOR_LINES})"


def test_diagnostics_size():
    total = sum(len(p.read_text().splitlines()) for m, p in MODULES.items() if m.startswith(DIAGNOSTICS))
    assert total <= DIAGNOSTICS_LINES, f"minitriton/diagnostics has {total} lines (budget {DIAGNOSTICS_LINES})"


def test_perf_size():
    total = sum(len(p.read_text().splitlines()) for m, p in MODULES.items() if m.startswith("minitriton.perf"))
    assert total <= PERF_LINES, f"minitriton/perf has {total} lines (budget {PERF_LINES})"


def test_layer_rule_finds_an_upward_import(tmp_path):
    """The checker itself: a values module importing the runtime is reported."""
    bad = tmp_path / "bad.py"
    bad.write_text("from minitriton.runtime import launch\n")
    imports = list(_imports(bad, "minitriton.values.bad"))
    assert imports and layer_of(imports[0][0]) > layer_of("minitriton.values.bad")


# ---- the runtime's contract (docs/architecture.md, "The runtime's contract")

CONTRACT = PACKAGE / "values" / "running.py"
CLASS_DICTS = {"minitriton.values.factored"}      # reads a class's slot descriptor, not an object's state


def _protocol_members(name: str) -> set:
    """The attributes and methods the protocol `name` of values/running.py declares, its bases' included."""
    classes = {c.name: c for c in ast.parse(CONTRACT.read_text()).body if isinstance(c, ast.ClassDef)}
    members, todo = set(), [name]
    while todo:
        cls = classes[todo.pop()]
        todo += [b.id for b in cls.bases if isinstance(b, ast.Name) and b.id in classes]
        members |= {s.target.id for s in cls.body if isinstance(s, ast.AnnAssign)}
        members |= {s.name for s in cls.body if isinstance(s, ast.FunctionDef)}
    return members


def _contract_breaches(module: str, text: str) -> list:
    """Where code below runtime/ reaches past the contract: a group's or launch's attribute the protocols do not
    declare, `.launch` on anything but the object's own, an object's `__dict__`."""
    group, launch = _protocol_members("RunningGroup"), _protocol_members("RunningLaunch")
    found = []
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.Attribute):
            continue
        base = node.value
        own_launch = isinstance(base, ast.Attribute) and base.attr == "launch" and \
            isinstance(base.value, ast.Name) and base.value.id == "self"
        named = base.id if isinstance(base, ast.Name) else None
        if node.attr == "__dict__" and module not in CLASS_DICTS:
            found.append(f"{module}:{node.lineno} reads `__dict__`")
        elif node.attr == "launch" and named != "self":
            found.append(f"{module}:{node.lineno} reads `.launch` of {named or 'an expression'}")
        elif named == "group" and node.attr not in group:
            found.append(f"{module}:{node.lineno} reads `group.{node.attr}`, which RunningGroup does not declare")
        elif (named == "launch" or own_launch) and node.attr not in launch:
            found.append(f"{module}:{node.lineno} reads `launch.{node.attr}`, which RunningLaunch does not declare")
    return found


def test_code_below_the_runtime_reads_groups_and_launches_through_their_contract():
    found = [breach for module, path in MODULES.items() if layer_of(module) < layer_of("minitriton.runtime")
             for breach in _contract_breaches(module, path.read_text())]
    assert not found, "\n".join(found)


def test_contract_check_finds_a_breach():
    """The checker itself: reading the launch through a group, or its `__dict__`, is reported."""
    text = ("def op(group, launch):\n    a = group.launch.grid\n    b = group.launch.__dict__\n"
            "    c = group.grid, group.secret, launch.grid, launch.options\n")
    found = _contract_breaches("minitriton.semantics.bad", text)
    assert sorted(int(f.split(" ", 1)[0].rsplit(":", 1)[1]) for f in found) == [2, 3, 3, 4, 4]
    assert any("`group.secret`" in f for f in found) and any("`launch.options`" in f for f in found)


# ---- the tools beside the emulator (docs/architecture.md, "The tools")

# Within each tool a module may import (at module level) modules of its own layer or of a lower one; a module no
# prefix names more closely is in the package's last layer, with the commands.
TOOL_LAYERS = {
    "parity": [
        ("parity.transport", "parity.paired_timing", "parity.fuzz.fragment", "parity.fuzz.source"),
        ("parity.oracle", "parity.fuzz.dtypes"),
        ("parity.compare", "parity.fuzz.types", "parity.fuzz.expressions", "parity.fuzz.shrink_passes"),
        ("parity.runner", "parity.kernel_cases", "parity.probes", "parity.fuzz.gen", "parity.fuzz.shrink"),
        ("parity.report", "parity.fuzz.case"),
        ("parity.fuzz.explain", "parity.fuzz.record"),
        ("parity.fuzz.rules",),
        ("parity.fuzz.run",),
        ("parity.fuzz.amend",),
        ("parity",),
    ],
    "sandbox": [
        ("sandbox.catalogue",),
        ("sandbox.messages",),
        ("sandbox.exercises",),
        ("sandbox.explain", "sandbox.memory_picture"),
        ("sandbox.bridge",),
        ("sandbox.gpu",),
        ("sandbox",),
    ],
    "bench": [
        ("bench.settings",),
        ("bench.workloads", "bench.worker"),
        ("bench.floors",),
        ("bench.shapes", "bench.observed"),
        ("bench",),
    ],
}
# Which top-level packages a package's modules never import, anywhere (inside functions too).
NEVER = {
    "minitriton": ("parity", "sandbox", "bench"),
    "parity": ("sandbox", "bench"),
    "sandbox": ("parity", "bench"),
    "bench": ("parity", "sandbox"),
}
# parity's parent process never holds minitriton, Triton or torch at module level: real Triton and minitriton run
# in child processes (`minitriton.install()` aliases `triton`), minitriton in-process only where a function asks.
PARITY_MODULE_LEVEL_NEVER = ("minitriton", "triton", "torch")
RESULTS = ROOT / "parity" / "results"
RESULTS_SHARE = 0.10                              # parity/results/ lines / tracked lines, at most


def _tool_modules(name):
    return dict(_modules(ROOT / name, skip=(RESULTS.relative_to(ROOT),)))


TOOLS = {name: _tool_modules(name) for name in TOOL_LAYERS}
TOOL_MODULES = {m: p for modules in TOOLS.values() for m, p in modules.items()}


def _top_level(target, package):
    return target == package or target.startswith(package + ".")


@pytest.mark.parametrize("tool", sorted(TOOL_LAYERS))
def test_tool_imports_point_down_its_layers(tool):
    modules, layers = TOOLS[tool], TOOL_LAYERS[tool]
    known, upward = set(modules), []
    for module, path in modules.items():
        for target, names, line, inside in _imports(path, module):
            if inside or not _top_level(target, tool):
                continue
            for imported in _resolve(target, names, known):
                if imported != module and layer_of(imported, layers) > layer_of(module, layers):
                    upward.append(f"{module}:{line} imports {imported}")
    assert not upward, "upward imports:\n" + "\n".join(upward)


@pytest.mark.parametrize("tool", sorted(TOOL_LAYERS))
def test_tool_has_no_import_cycles(tool):
    modules = TOOLS[tool]
    known = set(modules)
    graph = {m: set() for m in known}
    for module, path in modules.items():
        for target, names, _, inside in _imports(path, module):
            if _top_level(target, tool) and not inside:
                graph[module].update(i for i in _resolve(target, names, known) if i != module)
    cycles = []

    def visit(m, stack):
        for n in sorted(graph[m]):
            if n.startswith(m + "."):
                continue
            if n in stack:
                cycles.append(" -> ".join(stack[stack.index(n):] + [n]))
            elif n not in done:
                visit(n, stack + [n])
        done.add(m)

    done: set = set()
    for m in sorted(graph):
        if m not in done:
            visit(m, [m])
    assert not cycles, "import cycles:\n" + "\n".join(sorted(set(cycles)))


def test_packages_import_only_what_they_may():
    found = []
    for package, forbidden in NEVER.items():
        modules = MODULES if package == "minitriton" else TOOLS[package]
        for module, path in modules.items():
            for target, _, line, inside in _imports(path, module):
                if any(_top_level(target, f) for f in forbidden):
                    found.append(f"{module}:{line} imports {target}")
                elif package == "parity" and not inside and any(_top_level(target, f)
                                                                 for f in PARITY_MODULE_LEVEL_NEVER):
                    found.append(f"{module}:{line} imports {target} at module level (only a child process may)")
    assert not found, "\n".join(found)


@pytest.mark.parametrize("module", sorted(TOOL_MODULES))
def test_tool_module_size(module):
    lines = len(TOOL_MODULES[module].read_text().splitlines())
    assert lines <= MODULE_LINES, f"{module} has {lines} lines (budget {MODULE_LINES}): split it by job"


def _tracked_lines():
    """{path: line count (as `wc -l` counts)} of every file git tracks, or None outside a git checkout."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    paths = [ROOT / p.decode() for p in out.split(b"\0") if p]
    return {p: p.read_bytes().count(b"\n") for p in paths if p.is_file()} or None


def test_parity_results_stay_a_small_share_of_the_repository():
    """parity/results/ keeps the runs of record, in compact JSON (parity/results/README.md)."""
    lines = _tracked_lines()
    if lines is None:
        pytest.skip("not a git checkout")
    results = sum(n for p, n in lines.items() if RESULTS in p.parents)
    total = sum(lines.values())
    assert results > 0 and results <= RESULTS_SHARE * total, \
        f"parity/results/ holds {results} of {total} tracked lines ({results / total:.1%} > {RESULTS_SHARE:.0%})"


def test_tool_layer_rule_finds_an_upward_import(tmp_path):
    """The checker itself: parity's transport importing its oracle is reported, and so is a module-level
    import of minitriton in parity."""
    bad = tmp_path / "bad.py"
    bad.write_text("import minitriton\nfrom parity.oracle import Pool\n")
    (mt, _, _, inside), (target, names, _, _) = list(_imports(bad, "parity.transport"))
    assert _top_level(mt, "minitriton") and not inside
    imported = _resolve(target, names, set(TOOLS["parity"]))
    assert imported == ["parity.oracle"]
    assert layer_of("parity.oracle", TOOL_LAYERS["parity"]) > layer_of("parity.transport", TOOL_LAYERS["parity"])
