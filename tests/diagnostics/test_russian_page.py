"""The mistakes students make, run as a student runs them, read in Russian as the sandbox page shows them:
each error carries a record of its own kind with the kernel's names and numbers, located at the kernel line,
and its Russian page text has no English sentence outside code spans."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

import minitriton.language as tl
from minitriton import errors
from minitriton.diagnostics import Diagnostic, render
from minitriton.memory.host_descriptor import TensorDescriptor
from tests.helpers.kernels import make_kernel

CYRILLIC = re.compile("[а-яё]", re.IGNORECASE)
ENGLISH_SENTENCE = re.compile(r"\b[A-Za-z]{2,}(?:[ ,]+[A-Za-z]{2,}){2,}\b")


def _russian_page(exc) -> str:
    """The record's Russian page text, checked; the record itself is plain JSON (the page reads its fields)."""
    json.dumps(exc.diagnostic.to_json())
    said = render(exc.diagnostic, "ru", "page")
    plain = re.sub(r"`[^`]*`", " ", said)
    assert CYRILLIC.search(plain), said
    assert not ENGLISH_SENTENCE.search(plain), said
    return said


def _raised(fn) -> BaseException:
    try:
        fn()
    except Exception as e:   # noqa: BLE001 - the test inspects whatever the launch raised
        return e
    raise AssertionError("no error")


X = np.zeros(64, np.float32)

# (kernel source, launch arguments, kind, fields the record holds, words of the Russian text)
KERNEL_CASES = {
    "broadcast": ("""
        @triton.jit
        def k(x_ptr):
            offs = tl.arange(0, 8) + tl.arange(0, 4)
            tl.store(x_ptr + offs, offs)
        """, {}, "broadcast", {"index": 0, "left": 8, "right": 4}, "по оси 0 размеры 8 и 4"),
    "undefined name": ("""
        @triton.jit
        def k(x_ptr):
            offs = tl.arange(0, 8)
            tl.store(x_ptr + offs, offs * scale)
        """, {}, "name_error", {"name": "scale"}, "имя `scale` не определено"),
    "misspelt tl function": ("""
        @triton.jit
        def k(x_ptr):
            offs = tl.arrange(0, 8)
            tl.store(x_ptr + offs, offs)
        """, {}, "module_attribute", {"name": "arrange"}, "нет имени `arrange`"),
    "arange not a power of 2": ("""
        @triton.jit
        def k(x_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, offs)
        """, {"BLOCK": 10}, "arange_power_of_two", {"start": 0, "end": 10, "size": 10, "pow2": 16},
        "степенью двойки"),
    "arange of a runtime value": ("""
        @triton.jit
        def k(x_ptr, n):
            offs = tl.arange(0, n)
            tl.store(x_ptr + offs, offs)
        """, {"n": 8}, "arange_constexpr", {}, "tl.constexpr"),
    "dot reduction dims": ("""
        @triton.jit
        def k(x_ptr):
            a = tl.zeros((16, 32), tl.float32)
            b = tl.zeros((16, 16), tl.float32)
            tl.store(x_ptr + tl.arange(0, 16), tl.sum(tl.dot(a, b), axis=0))
        """, {}, "dot_reduction", {"k_left": 32, "k_right": 16}, "ось свёртки"),
    "dot dtypes": ("""
        @triton.jit
        def k(x_ptr):
            a = tl.zeros((16, 16), tl.float16)
            b = tl.zeros((16, 16), tl.float32)
            tl.store(x_ptr + tl.arange(0, 16), tl.sum(tl.dot(a, b), axis=0))
        """, {}, "dot_same_dtype", {"left": "fp16", "right": "fp32"}, "одного типа"),
    "pointer plus float": ("""
        @triton.jit
        def k(x_ptr):
            tl.store(x_ptr + 1.5, 0.0)
        """, {}, "incompatible_types", {}, "нельзя использовать вместе"),
    "block as an if condition": ("""
        @triton.jit
        def k(x_ptr, n):
            offs = tl.arange(0, 8)
            if offs < n:
                tl.store(x_ptr + offs, 1.0)
        """, {"n": 4}, "tensor_truth", {"shape": [8], "what": "condition"}, "как условие Python"),
    "power operator": ("""
        @triton.jit
        def k(x_ptr):
            x = tl.load(x_ptr + tl.arange(0, 8))
            tl.store(x_ptr + tl.arange(0, 8), x ** 2)
        """, {}, "power_operator", {}, "libdevice.pow"),
    "reshape changes numel": ("""
        @triton.jit
        def k(x_ptr):
            x = tl.load(x_ptr + tl.arange(0, 8))
            tl.store(x_ptr + tl.arange(0, 16), tl.reshape(x, (16,)))
        """, {}, "reshape_numel", {"numel": 8}, "общее число элементов"),
    "static assert": ("""
        @triton.jit
        def k(x_ptr, BLOCK: tl.constexpr):
            tl.static_assert(BLOCK >= 16, "BLOCK too small")
        """, {"BLOCK": 8}, "static_assert", {"message": "BLOCK too small"}, "не выполнено tl.static_assert"),
    "chained comparison": ("""
        @triton.jit
        def k(x_ptr, n):
            offs = tl.arange(0, 8)
            tl.store(x_ptr + offs, 1.0, mask=0 <= offs < n)
        """, {"n": 4}, "chained_comparison", {}, "цепочка сравнений"),
    "variable first set in a loop": ("""
        @triton.jit
        def k(x_ptr):
            for i in range(4):
                acc = tl.load(x_ptr + i)
            tl.store(x_ptr, acc)
        """, {}, "loop_scoped_name", {"name": "acc", "loop_line": 3}, "который начинается в строке 3"),
    "if branch changes a type": ("""
        @triton.jit
        def k(x_ptr, n):
            y = 1
            if n > 0:
                y = 1.5
            tl.store(x_ptr, y)
        """, {"n": 3}, "branch_retyped", {"name": "y", "branch": "then"}, "тип должен оставаться тем же"),
    "gather index out of range": ("""
        @triton.jit
        def k(x_ptr):
            x = tl.load(x_ptr + tl.arange(0, 8))
            i = tl.arange(0, 8) + 3
            tl.store(x_ptr + tl.arange(0, 8), tl.gather(x, i, 0))
        """, {}, "gather_out_of_range", {"axis": 0, "bad": 3, "n": 8}, "ограничьте или замаскируйте индекс"),
}


@pytest.mark.parametrize("case", list(KERNEL_CASES))
def test_kernel_mistake_reads_in_russian(case):
    src, kwargs, kind, fields, words = KERNEL_CASES[case]
    kernel = make_kernel(src)
    exc = _raised(lambda: kernel[(1,)](X.copy(), **kwargs))
    record = exc.diagnostic
    assert record.kind == kind, (record.kind, str(exc))
    assert record.names == ((fields["name"],) if kind == "name_error" else ())
    assert {k: record.fields.get(k) for k in fields} == fields
    assert record.kernel == "k" and record.line is not None and record.source, record
    said = _russian_page(exc)
    assert words.lower() in said.lower(), said
    assert f"строка {record.line}" in said, said


def test_triton_text_is_kept_for_english():
    """The record of a compile error renders Triton's layout word for word in an English terminal."""
    kernel = make_kernel(KERNEL_CASES["broadcast"][0])
    exc = _raised(lambda: kernel[(1,)](X.copy()))
    assert isinstance(exc, errors.CompilationError)
    assert str(exc) == exc.diagnostic.triton
    assert "ValueError('Cannot make_shape_compatible: incompatible dimensions at index 0: 8 and 4')" in str(exc)


def test_device_assert_reads_in_russian():
    kernel = make_kernel("""
        @triton.jit(debug=True)
        def k(x_ptr):
            x = tl.load(x_ptr + tl.arange(0, 8))
            tl.device_assert(x >= 0, "x must be non-negative")
        """)
    x = np.zeros(8, np.float32)
    x[5] = -1
    exc = _raised(lambda: kernel[(1,)](x))
    assert isinstance(exc, errors.DeviceAssertionError)
    assert exc.diagnostic.kind == "device_assert" and exc.diagnostic.fields["failed"] == 1
    said = _russian_page(exc)
    assert "не выполнено условие tl.device_assert: `x must be non-negative`" in said


def test_descriptor_alignment_reads_in_russian():
    kernel = make_kernel("""
        @triton.jit
        def k(x_ptr, M, N):
            desc = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[4, 4])
            desc.store([0, 0], desc.load([0, 0]))
        """)
    x = np.zeros((8, 6), np.float32)   # rows of 24 bytes: not a multiple of 16
    exc = _raised(lambda: kernel[(1,)](x, 8, 6))
    assert isinstance(exc, errors.DescriptorError)
    assert exc.diagnostic.kind == "descriptor_stride_alignment"
    assert exc.diagnostic.fields == {"dim": 0, "stride": 6, "bytes": 24}
    said = _russian_page(exc)
    assert "`strides[0]` = 6 элементов = 24 байт" in said and "дополните строки" in said.lower()


@pytest.mark.parametrize("grid, kind", [((-1,), "grid_negative"), ((1, 1, 1, 1), "grid_rank"),
                                        ((2.5,), "grid_dimension_type"), ("8", "grid_type")])
def test_grid_mistake_reads_in_russian(grid, kind):
    kernel = make_kernel("""
        @triton.jit
        def k(x_ptr):
            tl.store(x_ptr + tl.program_id(0), 1.0)
        """)
    exc = _raised(lambda: kernel[grid](X.copy()))
    assert isinstance(exc, errors.LaunchError)
    assert exc.diagnostic.kind == kind
    _russian_page(exc)


def test_argument_mistakes_read_in_russian():
    kernel = make_kernel("""
        @triton.jit
        def k(x_ptr, BLOCK: tl.constexpr):
            tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)
        """)
    exc = _raised(lambda: kernel[(1,)](X.copy(), BLOCK=X))
    assert exc.diagnostic.kind == "constexpr_array" and exc.diagnostic.fields["name"] == "BLOCK"
    _russian_page(exc)
    exc = _raised(lambda: kernel[(1,)]([1.0, 2.0], BLOCK=8))
    assert exc.diagnostic.kind == "argument_type" and exc.diagnostic.fields["type"] == "list"
    _russian_page(exc)
    exc = _raised(lambda: kernel[(1,)](BLOCK=8))
    assert isinstance(exc, TypeError) and str(exc) == "k() missing required argument: 'x_ptr'"
    assert "не передан обязательный аргумент `x_ptr`" in _russian_page(exc)


def test_host_descriptor_alignment_reads_in_russian():
    x = np.zeros((8, 6), np.float32)
    exc = _raised(lambda: TensorDescriptor.from_tensor(x, [4, 4]))
    assert isinstance(exc, AssertionError) and str(exc) == "strides must be 16-byte aligned"
    assert exc.diagnostic.fields == {"dim": 0, "stride": 6, "bytes": 24}
    _russian_page(exc)


def test_syntax_error_reads_in_russian():
    """Python raises a syntax error before any kernel runs; its record (as the sandbox makes it from the
    SyntaxError) quotes Python's message in a code span."""
    with pytest.raises(SyntaxError) as info:
        compile("def k(x_ptr):\n    offs = tl.arange(0, 8\n", "kernel.py", "exec")
    record = Diagnostic("syntax_error", {"message": info.value.msg}, filename="kernel.py", line=info.value.lineno)
    said = render(record, "ru", "page")
    assert said == f"синтаксическая ошибка: `{info.value.msg}` (строка {info.value.lineno}).", said


def test_call_outside_a_kernel_reads_in_russian():
    exc = _raised(lambda: tl.arange(0, 8))
    assert exc.diagnostic.kind == "call_outside_kernel"
    assert "tl.arange вызвана вне запуска ядра" in _russian_page(exc)
