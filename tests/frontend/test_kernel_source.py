"""The kernel's source is parsed once, at the file's positions, and errors use Triton's numbering (line 1 is the
`def` line, columns of the dedented source, as Triton's JITFunction.src)."""
from __future__ import annotations

import ast
import inspect
import pathlib
import textwrap

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.frontend.source import KernelSource

_SRC = pathlib.Path(__file__).read_text().splitlines()


def _line(marker):
    hits = [i + 1 for i, text in enumerate(_SRC) if text.rstrip().endswith("#: " + marker)]
    assert len(hits) == 1, marker
    return hits[0]


@triton.jit
def _scale(x, flag):
    if flag:
        x = x * 2
    return x


@triton.jit
def k_parsed_once(X, Z, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.int32)
    for i in range(n):
        acc += _scale(tl.load(X + offs), i > 0 and i < 3)
    tl.store(Z + offs, acc)


def test_each_kernel_source_is_parsed_once(monkeypatch):
    """The refusals and the loop-scope check of a kernel and of its helper share one parse each, and the rewrite
    parses its own copy once (faster than copying the tree), however many launches run."""
    parsed = []
    real_parse = ast.parse

    def counting_parse(*args, **kwargs):
        parsed.append(args[0])
        return real_parse(*args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting_parse)
    for kernel in (k_parsed_once, _scale):   # forget earlier launches' work
        kernel.source = KernelSource(kernel.fn)
        kernel._kernel_fn, kernel._checked = None, False
    x, z = np.arange(8, dtype=np.int32), np.zeros(8, np.int32)
    for _ in range(3):
        k_parsed_once[(1,)](x, z, 4, BLOCK=8)
    np.testing.assert_array_equal(z, x * 6)    # i = 0: x, i = 1, 2: 2x, i = 3: x
    assert len(parsed) == 4 and len(set(parsed)) == 2


def test_indented_function_is_parsed_at_file_positions():
    @triton.jit
    def kernel(X, n):
        """A docstring whose second line
is not indented (textwrap.dedent cannot dedent this source)."""
        v = tl.load(X)  #: nested-load
        return v

    source = KernelSource(kernel.fn)
    line = _line("nested-load")
    load = next(n for n in ast.walk(source.func) if isinstance(n, ast.Assign))
    assert source.position(load) == (line, _SRC[line - 1].index("v = "))
    assert source.def_line == line - 3
    assert source.indent == 4
    assert source.text.startswith("def kernel(X, n):\n")
    assert source.text.split("\n")[3] == "    v = tl.load(X)  #: nested-load"


def test_indented_kernel_error_uses_tritons_columns():
    """A kernel defined inside a function: `at line:col:` and the caret count from the dedented `def`, as Triton's
    CompilationError does (its source is `textwrap.dedent(inspect.getsource(fn))` from the `def` on)."""
    @triton.jit
    def kernel(Z, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.arange(0, 3)  #: nested-error
        tl.store(Z + offs, offs)

    with pytest.raises(triton.CompilationError) as info:
        kernel[(1,)](np.zeros(8, np.int32), BLOCK=8)
    line = _line("nested-error")
    src = textwrap.dedent(inspect.getsource(kernel.fn))
    src = src[src.index("def kernel("):]
    col = src.split("\n")[2].index("tl.arange(0, 3)")
    excerpt = "\n".join(src.split("\n")[:3])
    assert str(info.value).startswith(f"at 3:{col}:\n{excerpt}\n{' ' * col}^\narange's range must be a power of 2\n"
                                      f"  in kernel `kernel` ({__file__}:{line})")
    assert (info.value.lineno, info.value.col) == (line, _SRC[line - 1].index("tl.arange(0, 3)"))


def test_indented_kernel_with_an_undedentable_docstring_is_still_checked():
    @triton.jit
    def kernel(Z, n):
        """Docstring line two
starts in column 0."""
        r = 0
        for i in range(n):
            if i == 2:
                break  #: nested-break
            r += 1
        tl.store(Z, r)

    with pytest.raises(triton.errors.UnsupportedLanguageConstruct, match="unsupported AST node type: Break") as info:
        kernel[(1,)](np.zeros(1, np.int32), 4)
    line = _line("nested-break")
    assert (info.value.lineno, info.value.col) == (line, _SRC[line - 1].index("break"))


def test_source_unavailable():
    namespace = {}
    exec("def k(n):\n    return n\n", namespace)
    source = KernelSource(namespace["k"])
    assert source.func is None and source.text is None
    assert source.def_line == 1
    assert not source.returns_none_literally
