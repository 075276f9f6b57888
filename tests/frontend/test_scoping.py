import pathlib
import re
import types

from minitriton.frontend.scopes import LoopScopedName, find_loop_scoped_names as _find
from minitriton.frontend.source import KernelSource

tl = types.SimpleNamespace(static_range=range, range=range)
triton = types.SimpleNamespace(language=tl)
static_range = range
SCALE = 2


def jit(fn=None, **kw):
    return fn if fn is not None else (lambda f: f)


def use(*a):
    return a


_SRC = pathlib.Path(__file__).read_text().splitlines()


def _line(marker):
    hits = [i + 1 for i, text in enumerate(_SRC) if text.rstrip().endswith("#: " + marker)]
    assert len(hits) == 1, marker
    return hits[0]


def find_loop_scoped_names(fn):
    return _find(KernelSource(fn))


def _f(name, use_marker, loop_marker):
    lineno = _line(use_marker)
    col = re.search(rf"\b{name}\b", _SRC[lineno - 1]).start()
    return LoopScopedName(name, lineno, col, _line(loop_marker))


# --------------------------------------------------------------------- kernels
@jit
def k_basic(n):
    x = 0
    for i in range(n):  #: basic-loop
        v = i * 2 + x
    return v + v  #: basic-use


@jit(debug=False)
def k_while(n):
    i = 0
    while i < n:  #: while-loop
        acc = i
        i += 1
    out = acc + 1  #: while-use
    return out


def k_nested(n):
    for i in range(n):  #: nested-outer
        for j in range(n):  #: nested-inner
            t = i + j
        use(t)  #: nested-use1
    use(t)  #: nested-use2


def k_if_in_loop(n):
    for i in range(n):  #: if-loop
        if i > 2:
            m = i
        else:
            pass
    return m  #: if-use


def k_static(n):
    for i in tl.static_range(4):
        s = i
    for j in static_range(2):
        r = j
    for k in triton.language.static_range(1):
        if k:
            q = 1
        else:
            q = 2
    return s + r + q + i + j + k


def k_tl_range(n):
    for i in tl.range(0, n):  #: tlrange-loop
        w = i
    return w  #: tlrange-use


def k_predefined(n, x):
    v = 0
    if n:
        w = 1
    else:
        w = 2
    for i in range(n):
        v = v + i
        x = x + 1
        w += 1
        SCALE = 3
        len = 4
    return v + x + w + SCALE + len


def k_reassigned(n):
    for i in range(n):
        v = i
    v = 0
    return use(v)


def k_reassigned_one_branch(n):
    for i in range(n):  #: branch-loop
        v = i
    if n:
        v = 0
    return use(v)  #: branch-use


def k_augmented(n):
    for i in range(n):  #: aug-loop
        c = i
    c += 1  #: aug-use


def k_inside_only(n):
    for i in range(n):
        v = i
        use(v)
        for j in range(n):
            use(v + j)
        if v:
            use(v)


def k_nested_def(n):
    def helper(m):
        for i in range(m):
            h = i
        return h
    for i in range(n):
        g = lambda: 0  # noqa: E731
        def inner():
            return zz
    return helper(n)


def k_induction(n):
    for k in range(n):  #: ind-loop
        pass
    return k  #: ind-use


def k_induction_predefined(n):
    k = 0
    for k in range(n):
        pass
    return k


def k_later_blocks(n):
    for i in range(n):  #: later-loop
        a, (b, c) = i, (i, i)
    if n:
        use(b)  #: later-use1
    for j in range(n):
        use(c)  #: later-use2


def k_comprehension(n):
    for i in range(n):  #: comp-loop
        v = i
        x = i
    use([v for v in range(3)])
    use([x + y for y in range(3)])  #: comp-use


# ----------------------------------------------------------------------- tests
def test_basic_with_decorator():
    assert find_loop_scoped_names(k_basic) == [_f("v", "basic-use", "basic-loop")]


def test_while_loop_and_decorator_call():
    assert find_loop_scoped_names(k_while) == [_f("acc", "while-use", "while-loop")]


def test_nested_loops():
    assert find_loop_scoped_names(k_nested) == [
        _f("t", "nested-use1", "nested-inner"),
        _f("t", "nested-use2", "nested-outer"),
    ]


def test_defined_in_if_inside_loop():
    assert find_loop_scoped_names(k_if_in_loop) == [_f("m", "if-use", "if-loop")]


def test_static_range_exempt():
    assert find_loop_scoped_names(k_static) == []


def test_tl_range_is_not_static():
    assert find_loop_scoped_names(k_tl_range) == [_f("w", "tlrange-use", "tlrange-loop")]


def test_predefined_params_globals_builtins():
    assert find_loop_scoped_names(k_predefined) == []


def test_reassigned_after_loop():
    assert find_loop_scoped_names(k_reassigned) == []


def test_reassigned_in_one_branch_only():
    assert find_loop_scoped_names(k_reassigned_one_branch) == [
        _f("v", "branch-use", "branch-loop")]


def test_augmented_assignment_after_loop():
    assert find_loop_scoped_names(k_augmented) == [_f("c", "aug-use", "aug-loop")]


def test_use_only_inside_loop():
    assert find_loop_scoped_names(k_inside_only) == []


def test_nested_def_ignored():
    assert find_loop_scoped_names(k_nested_def) == []


def test_induction_variable():
    assert find_loop_scoped_names(k_induction) == [_f("k", "ind-use", "ind-loop")]
    assert find_loop_scoped_names(k_induction_predefined) == []


def test_uses_in_later_nested_blocks_and_tuple_targets():
    assert find_loop_scoped_names(k_later_blocks) == [
        _f("b", "later-use1", "later-loop"),
        _f("c", "later-use2", "later-loop"),
    ]


def test_comprehension_variables_are_local():
    assert find_loop_scoped_names(k_comprehension) == [_f("x", "comp-use", "comp-loop")]


def test_indented_function_maps_lines_and_columns():
    @jit
    def kernel(n):
        for i in range(n):  #: indented-loop
            z = i
        return z  #: indented-use

    assert find_loop_scoped_names(kernel) == [_f("z", "indented-use", "indented-loop")]


def test_source_unavailable():
    ns = {}
    exec("def k(n):\n    for i in range(n):\n        v = i\n    return v\n", ns)
    assert find_loop_scoped_names(ns["k"]) == []
    assert find_loop_scoped_names(len) == []
