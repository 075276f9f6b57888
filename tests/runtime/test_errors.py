"""Every error minitriton promises: its type, its exact wording (Triton's where Triton has one), where it points
(Triton's `at line:col:` layout plus our kernel file:line), and that it leaves memory as the GPU would.

References: Triton 3.9's semantic.py/core.py wordings (docs/semantics.md S14), CUDA's grid limits, and for
out-of-bounds reports the offsets computed here with plain Python from the test's own index arrays.
"""
import inspect
import os
import pathlib
import re
import subprocess
import sys
import traceback

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitriton
import minitriton as triton
import minitriton.language as tl
from helpers.kernels import make_kernel
from minitriton import CompilationError, CompileTimeAssertionFailure, DeviceAssertionError, LaunchError, MiniTritonError, OutOfBoundsError

HERE = os.path.basename(__file__)
_SRC = pathlib.Path(__file__).read_text().splitlines()


def _line(marker):
    """The file line that ends with `#: marker`."""
    hits = [i + 1 for i, text in enumerate(_SRC) if text.rstrip().endswith("#: " + marker)]
    assert len(hits) == 1, marker
    return hits[0]


@pytest.fixture
def options_restored():
    """minitriton.set_options, with the options restored after the test."""
    with minitriton.set_options():
        yield minitriton.set_options


# ----------------------------------------------------------------------------------------- compile-time errors

@triton.jit
def _returns_none(x):
    if x > 100:
        return
    return None


@triton.jit
def k_case(out_ptr, x_ptr, n, CASE: tl.constexpr):
    offs = tl.arange(0, 16)
    if CASE == "arange_npow2":
        a = tl.arange(0, 3)
    if CASE == "arange_runtime":
        a = tl.arange(0, n)
    if CASE == "arange_empty":
        a = tl.arange(4, 4)
    if CASE == "arange_reversed":
        a = tl.arange(8, 4)
    if CASE == "arange_int32":
        a = tl.arange(0, 2**32)
    if CASE == "arange_negative":
        a = tl.arange(-4, 4)
    if CASE == "arange_numel":
        a = tl.arange(0, 2**21)
    if CASE == "zeros_3x4":
        a = tl.zeros((3, 4), tl.float32)
    if CASE == "zeros_4x3":
        a = tl.zeros((4, 3), tl.float32)
    if CASE == "program_id_3":
        a = tl.program_id(3)
    if CASE == "broadcast":
        a = tl.arange(0, 4) + tl.arange(0, 8)
    if CASE == "other_no_mask":
        a = tl.load(x_ptr + offs, other=0.0)
    if CASE == "block_mask_scalar_ptr":
        a = tl.load(x_ptr, mask=offs < 4)
    if CASE == "float_floordiv":
        a = tl.load(x_ptr + offs) // 2.0
    if CASE == "signedness_div":
        a = offs.to(tl.uint32) / offs
    if CASE == "signedness_floordiv":
        a = offs.to(tl.uint32) // offs
    if CASE == "signedness_mod":
        a = offs % offs.to(tl.uint32)
    if CASE == "signedness_int8":
        a = offs.to(tl.uint8) // offs.to(tl.int8)
    if CASE == "bitcast_size":
        a = offs.to(tl.float16, bitcast=True)
    if CASE == "rounding_mode":
        a = offs.to(tl.float32).to(tl.float16, fp_downcast_rounding="rtx")
    if CASE == "dot_shape":
        a = tl.dot(tl.zeros((16, 32), tl.float16), tl.zeros((16, 16), tl.float16))
    if CASE == "dot_small_k":
        a = tl.dot(tl.zeros((16, 8), tl.float16), tl.zeros((8, 16), tl.float16))
    if CASE == "dot_dtypes":
        a = tl.dot(tl.zeros((16, 16), tl.float32), tl.zeros((16, 16), tl.float16))
    if CASE == "dot_rank":
        a = tl.dot(tl.zeros((16,), tl.float16), tl.zeros((16, 16), tl.float16))
    if CASE == "dot_bf16_out":
        a = tl.dot(tl.zeros((16, 16), tl.float16), tl.zeros((16, 16), tl.float16), out_dtype=tl.bfloat16)
    if CASE == "exp_fp16":
        a = tl.exp(tl.zeros((16,), tl.float16))
    if CASE == "static_assert":
        tl.static_assert(CASE != "static_assert", "CASE must not be static_assert")
    if CASE == "static_assert_runtime":
        tl.static_assert(n == 3, "n must be three")
    if CASE == "block_in_if":
        if offs > 3:
            a = 1
    if CASE == "while_int_condition":
        i = n
        while i:
            i -= 1
    if CASE == "while_block_condition":
        v = offs
        while v < 2:
            v += 1
    if CASE == "helper_returns_none":
        a = _returns_none(n)
    if CASE == "fdiv_approx":
        a = tl.fdiv(offs.to(tl.float32), 3.0, approx=True)
    tl.store(out_ptr + offs, offs.to(tl.float32))


SIGNEDNESS = r"Cannot use /, #, or % with triton\.language\.{} and triton\.language\.{} because they have " \
             r"different signedness;this is unlikely to result in a useful answer\. Cast them to the same signedness\."
CASES = [
    ("arange_npow2", ValueError, r"arange's range must be a power of 2"),
    ("arange_runtime", ValueError, r"arange's arguments must be of type tl\.constexpr"),
    ("arange_empty", ValueError, r"arange's end argument must be greater than the start argument"),
    ("arange_reversed", ValueError, r"arange's end argument must be greater than the start argument"),
    ("arange_int32", ValueError, r"arange must fit in int32"),
    # semantic.arange: `bool(start >> 32)` is true for any negative start
    ("arange_negative", ValueError, r"arange must fit in int32"),
    ("arange_numel", ValueError, r"numel \(2097152\) exceeds triton maximum tensor numel \(1048576\)"),
    ("zeros_3x4", ValueError, r"Shape element 0 must be a power of 2"),
    ("zeros_4x3", ValueError, r"Shape element 1 must be a power of 2"),
    ("program_id_3", ValueError, r"program_id axis must be 0, 1, or 2 but got 3"),
    ("broadcast", ValueError, r"Cannot make_shape_compatible: incompatible dimensions at index 0: 4 and 8"),
    ("other_no_mask", ValueError, r"`other` cannot be provided without `mask`"),
    ("block_mask_scalar_ptr", ValueError, r"Mask argument cannot be block type if pointer argument is not a block"),
    ("float_floordiv", TypeError, r"unexpected type fp32"),
    ("signedness_div", TypeError, SIGNEDNESS.format("uint32", "int32")),
    ("signedness_floordiv", TypeError, SIGNEDNESS.format("uint32", "int32")),
    ("signedness_mod", TypeError, SIGNEDNESS.format("int32", "uint32")),
    ("signedness_int8", TypeError, SIGNEDNESS.format("uint8", "int8")),
    ("bitcast_size", ValueError, r"Cannot bitcast data-type of size 32 to\s?data-type of size 16"),
    ("rounding_mode", ValueError, r"Invalid rounding mode: rtx\. Supported rounding modes are 'rtne' and 'rtz'\."),
    ("dot_shape", AssertionError, r"First input shape \(\[16, 32\]\) and second input shape \[16, 16\] are not "
                                  r"compatible for matmul \(second index of first shape \(32\) must be equal to "
                                  r"first index of second shape \(16\)"),
    ("dot_small_k", AssertionError, r"Input shapes should have M >= 1, N >= 1 and K >= 16"),
    ("dot_dtypes", AssertionError, r"Both operands must be same dtype\. Got fp32 and fp16"),
    ("dot_rank", AssertionError, r"input and other must have equal ranks >= 2"),
    ("dot_bf16_out", ValueError, r"out_dtype=bfloat16 is unsupported"),
    ("exp_fp16", ValueError, r"Expected dtype \['fp32', 'fp64'\] but got fp16"),
    ("static_assert_runtime", NotImplementedError, r"Assertion condition could not be determined at compile-time\. "
                                                   r"Make sure that it depends only on `constexpr` values"),
    ("block_in_if", TypeError, r"Boolean value of Tensor with more than one value is ambiguous"),
    # offline sm_90 compiles with 3.6.0: scf.condition takes an int1 scalar only
    ("while_int_condition", RuntimeError, r"'scf.condition' op operand #0 must be 1-bit signless integer, but got "
                                          r"'i32'\nerror encountered during parsing"),
    ("while_block_condition", RuntimeError, r"'scf.condition' op operand #0 must be 1-bit signless integer, but "
                                            r"got 'tensor<16xi1>'"),
    # 3.6's visit_Return turns `return None` (not a bare `return`) into to_tensor(None)
    ("helper_returns_none", TypeError, r"cannot convert None of type <class 'NoneType'> to tensor"),
    ("fdiv_approx", TypeError, r"fdiv\(\) got an unexpected keyword argument 'approx'"),
]


@pytest.mark.parametrize("case, cause_type, pattern", CASES, ids=[c[0] for c in CASES])
def test_compile_time_error(case, cause_type, pattern):
    out = np.full(16, -1.0, np.float32)
    x = np.arange(16, dtype=np.float32)
    with pytest.raises(CompilationError, match=pattern) as info:
        k_case[(3,)](out, x, 5, CASE=case)
    err = info.value
    assert isinstance(err.__cause__, cause_type)
    assert re.search(pattern, str(err.__cause__))
    text = str(err)
    assert re.match(r"at \d+:\d+:\n", text), text
    assert f"in kernel `k_case` ({__file__}:" in text
    # Triton would not have compiled: no program may have written anything
    assert (out == -1.0).all()


def test_static_assert_failure_is_a_compile_time_assertion_failure():
    """3.6 raises CompileTimeAssertionFailure (a CompilationError) whose text ends with the message alone, and
    with nothing after the caret when there is no message (offline sm_90 compile)."""
    out = np.full(16, -1.0, np.float32)
    with pytest.raises(CompileTimeAssertionFailure) as info:
        k_case[(3,)](out, np.arange(16, dtype=np.float32), 5, CASE="static_assert")
    text = str(info.value)
    assert isinstance(info.value, CompilationError) and info.value.__cause__ is None
    assert re.match(r"at \d+:8:\n", text) and "\n        ^\nCASE must not be static_assert\n  in kernel" in text, text
    assert (out == -1.0).all()
    code = ("import minitriton; minitriton.install()\n"
            "from triton.compiler.errors import CompileTimeAssertionFailure, CompilationError\n"
            "assert CompileTimeAssertionFailure is minitriton.CompileTimeAssertionFailure\n"
            "assert issubclass(CompileTimeAssertionFailure, CompilationError)\nprint('ok')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "ok", done.stderr

    k = make_kernel("""
    @triton.jit
    def bare(Z, N: tl.constexpr):
        tl.static_assert(N == 3)
    """)
    with pytest.raises(CompileTimeAssertionFailure) as info:
        k[(1,)](np.zeros(1, np.int32), N=4)
    assert str(info.value).split("\n")[-2].strip() == "^", str(info.value)


def test_control_case_compiles():
    """The kernel above is correct when no error branch is taken (so each case fails on its own line)."""
    out = np.zeros(16, np.float32)
    k_case[(2,)](out, np.zeros(16, np.float32), 3, CASE="none")
    np.testing.assert_array_equal(out, np.arange(16, dtype=np.float32))


@triton.jit
def k_ptr_compare(p_ptr, q_ptr, out_ptr, CASE: tl.constexpr):
    r = tl.arange(0, 4)
    if CASE == "eq":
        c = p_ptr + r == q_ptr + r
    elif CASE == "lt":
        c = p_ptr < q_ptr
    else:
        c = p_ptr != 0
    tl.store(out_ptr + r, c.to(tl.int32))


@pytest.mark.parametrize("case, other", [("eq", "pointer<fp32>"), ("lt", "pointer<fp32>"),
                                         ("ne_int", "triton.language.int32")])
def test_pointer_comparison_rejected(case, other):
    """Comparisons on pointers fail to compile in Triton 3.6 (and 3.9): semantic.py's comparisons call
    binary_op_type_checking_impl without allow_*_ptr. The message, repr'd as code_generator.visit shows an
    operator's error, is from offline sm_90 compiles with Triton 3.6.0 (`p + r == q + r`, `p < q`, `p != 0`)."""
    out = np.full(4, -1, np.int32)
    with pytest.raises(CompilationError) as info:
        k_ptr_compare[(1,)](np.zeros(4, np.float32), np.zeros(4, np.float32), out, CASE=case)
    message = str(info.value).splitlines()
    assert f"IncompatibleTypeErrorImpl('invalid operands of type pointer<fp32> and {other}')" in message
    assert isinstance(info.value.__cause__, TypeError)
    assert (out == -1).all()


@triton.jit
def k_chained(out_ptr, n):
    tl.store(out_ptr, (0 < n < 10).to(tl.int32))  #: chained-compare


def test_chained_comparison_rejected():
    """`a < b < c` is an UnsupportedLanguageConstruct in Triton 3.6 (code_generator.visit_Compare; the text
    and the caret at the left operand as printed by an offline sm_90 compile with Triton 3.6.0)."""
    out = np.full(1, -1, np.int32)
    with pytest.raises(minitriton.errors.UnsupportedLanguageConstruct) as info:
        k_chained[(1,)](out, 5)
    line = _line("chained-compare")
    col = _SRC[line - 1].index("0 < n")
    assert str(info.value).startswith(f"at 2:{col}:\ndef k_chained(out_ptr, n):\n{_SRC[line - 1]}\n{' ' * col}^\n"
                                      f"simultaneous multiple comparison is not supported\n")
    assert isinstance(info.value, CompilationError)
    assert out[0] == -1


@triton.jit
def _eight():
    return 8


@triton.jit
def k_helper_bound(out_ptr):
    offs = tl.arange(0, _eight())
    tl.store(out_ptr + offs, offs)


def test_helper_literal_return_is_a_tensor():
    """Triton 3.6's visit_Return turns a returned int/float/constexpr into a tensor (`to_tensor`), so a helper's
    8 cannot be an arange bound (offline sm_90 compile with 3.6.0: "arange's arguments must be of type
    tl.constexpr"; 3.9 keeps constexpr returns)."""
    with pytest.raises(CompilationError, match=r"arange's arguments must be of type tl\.constexpr"):
        k_helper_bound[(1,)](np.zeros(8, np.int32))


@triton.jit
def k_layout(out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    bad = tl.arange(0, 3)  #: layout-error
    tl.store(out_ptr + offs, offs)


def test_compilation_error_layout():
    """`at {line}:{col}:` relative to the def line, the source up to the failing line, a caret, the message,
    then where the kernel is; the original exception is the cause and the traceback ends at the kernel line."""
    lines, start = inspect.getsourcelines(k_layout.fn)
    def_line = start + next(i for i, t in enumerate(lines) if t.lstrip().startswith("def "))
    failing = _line("layout-error")
    col = _SRC[failing - 1].index("tl.arange(0, 3)")
    excerpt = "\n".join(_SRC[def_line - 1:failing])
    expected = (f"at {failing - def_line + 1}:{col}:\n{excerpt}\n{' ' * col}^\n"
                f"arange's range must be a power of 2\n"
                f"  in kernel `k_layout` ({__file__}:{failing})")
    out = np.zeros(8, np.int32)
    with pytest.raises(CompilationError) as info:
        k_layout[(2,)](out, BLOCK=8)
    assert str(info.value) == expected
    assert expected.startswith("at 3:10:\ndef k_layout(")  # the def line is line 1, as in Triton
    cause = info.value.__cause__
    assert type(cause) is ValueError and str(cause) == "arange's range must be a power of 2"
    last = traceback.extract_tb(info.tb)[-1]
    assert (last.filename, last.lineno) == (__file__, failing)
    assert (out == 0).all()


@triton.jit
def k_long(out_ptr):
    a0 = 0
    a1 = a0 + 1
    a2 = a1 + 1
    a3 = a2 + 1
    a4 = a3 + 1
    a5 = a4 + 1
    a6 = a5 + 1
    a7 = a6 + 1
    a8 = a7 + 1
    a9 = a8 + 1
    a10 = a9 + 1
    a11 = a10 + 1
    a12 = a11 + 1
    tl.store(out_ptr + a12 * 0, tl.program_id(12))  #: long-error


def test_compilation_error_excerpt_is_last_twelve_lines():
    """Triton's CompilationError shows at most 12 source lines, ending with the failing one."""
    failing = _line("long-error")
    col = _SRC[failing - 1].index("tl.program_id")
    with pytest.raises(CompilationError) as info:
        k_long[(1,)](np.zeros(1, np.int32))
    text = str(info.value).split("\n")
    assert text[0] == "at 15:" + str(col) + ":"
    assert text[1:13] == _SRC[failing - 12:failing]
    assert text[13] == " " * col + "^"
    assert text[14] == "program_id axis must be 0, 1, or 2 but got 12"


@triton.jit
def k_loop_scoped(out_ptr, n):
    tl.store(out_ptr, 7)
    for i in range(n):
        v = i * 2
    tl.store(out_ptr + 1, v)  #: scoped-use


def test_variable_defined_only_in_loop():
    use = _line("scoped-use")
    out = np.zeros(2, np.int32)
    with pytest.raises(CompilationError, match=re.escape("NameError('v is not defined')")) as info:
        k_loop_scoped[(1,)](out, 3)
    text = str(info.value)
    col = _SRC[use - 1].index("v)")
    assert text.startswith(f"at 5:{col}:\ndef k_loop_scoped(")
    assert f"  in kernel `k_loop_scoped` ({__file__}:{use})" in text
    assert "fix: give `v` a value before the loop" in text
    assert (out == 0).all()  # refused before anything ran
    with pytest.raises(CompilationError, match=re.escape("NameError('v is not defined')")):
        k_loop_scoped[(1,)](out, 3)  # and on every later launch, as a kernel that does not compile
    assert (out == 0).all()


@triton.jit
def k_late_error(out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, offs + 1)
    if pid == 5:
        bad = tl.arange(0, 6)


@pytest.mark.parametrize("group_size", [None, 1])
def test_compile_error_in_a_late_program_leaves_memory_untouched(options_restored, group_size):
    """A GPU refuses to compile the kernel at all, so programs 0-4 must not have written either."""
    options_restored(group_size=group_size)
    out = np.zeros(64, np.int32)
    with pytest.raises(CompilationError, match="arange's range must be a power of 2"):
        k_late_error[(8,)](out, BLOCK=8)
    assert (out == 0).all()


@triton.jit
def k_acc_from_int(x_ptr, out_ptr, n, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    acc = 0
    for i in range(0, n):
        acc += tl.sum(x)
    tl.store(out_ptr, acc)


@triton.jit
def k_bf16_max_loop(x_ptr, out_ptr, n, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    v = x.to(tl.bfloat16)
    for i in range(0, n):
        v = tl.maximum(v, x.to(tl.bfloat16))
    tl.store(out_ptr + tl.arange(0, N), v)


@triton.jit
def k_while_changes_type(out_ptr, n):
    i = 0
    s = 0
    while i < n:
        s = s + 0.5
        i += 1
    tl.store(out_ptr, s)


@triton.jit
def k_branches_disagree(x_ptr, out_ptr, N: tl.constexpr):
    pid = tl.program_id(0)
    x = tl.load(x_ptr + tl.arange(0, N))
    if pid < 1:
        v = x.to(tl.float16)
    else:
        v = x
    tl.store(out_ptr + pid * N + tl.arange(0, N), v)


@triton.jit
def k_branch_rebinds(out_ptr):
    pid = tl.program_id(0)
    v = 1
    if pid < 1:
        v = 1.5
    tl.store(out_ptr + pid, v)


@triton.jit
def k_types_kept(x_ptr, out_ptr, n, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    acc = tl.zeros((N,), tl.float32)
    total = 0.0
    for i in range(0, n):
        acc += x
        total += 1.0
    if N > 2:                        # constexpr condition: Triton folds it, no type rule
        acc = acc.to(tl.float16)
    for j in tl.static_range(2):     # unrolled: the type may change
        acc = acc.to(tl.float32) * 2
    tl.store(out_ptr + tl.arange(0, N), acc + total)


CARRIED_TYPE_CASES = [  # the texts are the H200's (Triton 3.6.0) for these kernels; a loop-carried type change is
    # shown at the re-assignment (Triton shows the loop's line), with a note naming the assignment before the loop
    (k_acc_from_int, lambda out: ((np.ones(4, np.float32), out, 3), {"N": 4}), (1,), "acc += tl.sum(x)",
     "AssertionError('Loop-carried variable acc has initial type int32 but is re-assigned to fp32 in loop! "
     "Please make sure that the type stays consistent.')"),
    (k_bf16_max_loop, lambda out: ((np.ones(4, np.float32), out, 2), {"N": 4}), (1,),
     "v = tl.maximum(v, x.to(tl.bfloat16))",
     "AssertionError(\"Loop-carried variable v has initial type <['4'], bf16> but is re-assigned to "
     "<['4'], fp32> in loop! Please make sure that the type stays consistent.\")"),
    (k_while_changes_type, lambda out: ((out, 3), {}), (1,), "s = s + 0.5",
     "AssertionError('Loop-carried variable s has initial type int32 but is re-assigned to fp32 in loop! "
     "Please make sure that the type stays consistent.')"),
    (k_branches_disagree, lambda out: ((np.ones(4, np.float32), out), {"N": 4}), (2,), "if pid < 1:",
     "AssertionError(\"Mismatched type for v between then block (<['4'], fp16>) and else block "
     "(<['4'], fp32>)\")"),
    (k_branch_rebinds, lambda out: ((out,), {}), (2,), "if pid < 1:",
     "AssertionError('initial value for `v` is of type int32[], but the then block redefines it as fp32[]')"),
]


@pytest.mark.parametrize("group_size", [None, 1])
@pytest.mark.parametrize("kernel, make_args, grid, at, message", CARRIED_TYPE_CASES,
                         ids=[c[0].__name__ for c in CARRIED_TYPE_CASES])
def test_carried_types_must_not_change(options_restored, group_size, kernel, make_args, grid, at, message):
    """Loop-carried values and values out of a runtime `if` keep one type, or the compiler refuses the kernel;
    memory stays untouched."""
    options_restored(group_size=group_size)
    out = np.zeros(8, np.float32)
    args, kwargs = make_args(out)
    with pytest.raises(CompilationError) as info:
        kernel[grid](*args, **kwargs)
    text = str(info.value)
    assert message in text, text
    line = next(i for i, ln in enumerate(_SRC, 1) if ln.strip() == at and i > kernel.def_line)
    col = len(_SRC[line - 1]) - len(_SRC[line - 1].lstrip())
    assert text.startswith(f"at {line - kernel.def_line + 1}:{col}:\n"), text
    assert f"  in kernel `{kernel.__name__}` ({__file__}:{line})" in text
    assert info.value.diagnostic.line == line
    if "Loop-carried" in message:
        name = info.value.diagnostic.fields["name"]
        first = next(i for i in range(line - 1, kernel.def_line, -1) if _SRC[i - 1].strip().startswith(f"{name} ="))
        assert f"  `{name}` gets its value before the loop at line {first}: `{_SRC[first - 1].strip()}`" in text
        assert info.value.diagnostic.fields["first_line"] == first
    assert (out == 0).all()


def test_carried_types_kept_run():
    out = np.zeros(4, np.float32)
    k_types_kept[(1,)](np.arange(4, dtype=np.float32), out, 3, N=4)
    assert out.tolist() == [(3 * v) * 4 + 3 for v in range(4)]


# ----------------------------------------------------------------------------------------- outside a kernel

def test_tl_outside_a_kernel():
    with pytest.raises(MiniTritonError, match=re.escape("Did you forget to add @triton.jit ?")):
        tl.program_id(0)
    x = np.zeros(4, np.float32)
    for call, name in [(lambda: tl.load(x), "load"), (lambda: tl.store(x, 1.0), "store"),
                       (lambda: tl.atomic_add(x, 1.0), "atomic_add"),
                       (lambda: tl.dot(tl.zeros((16, 16), tl.float16), tl.zeros((16, 16), tl.float16)), "zeros"),
                       (lambda: tl.arange(0, 8), "arange"), (lambda: tl.exp(1.0), "exp"),
                       (lambda: tl.sum(1.0), "sum")]:
        with pytest.raises(MiniTritonError, match=rf"Did you forget .* tl\.{name} was called outside a kernel"):
            call()
    with pytest.raises(ValueError, match="Did you forget to add @triton.jit"):  # Triton raises ValueError
        tl.full((4,), 0, tl.float32)


@triton.jit
def jit_helper(x):
    return x + 1


def test_jit_helper_outside_a_kernel():
    with pytest.raises(RuntimeError, match="Cannot call @triton.jit'd outside of the scope of a kernel"):
        jit_helper(1)


# ----------------------------------------------------------------------------------------- launch errors

@triton.jit
def k_copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def test_launch_argument_errors():
    x = np.zeros(8, np.float32)
    with pytest.raises(TypeError, match=r"k_copy\(\) got an unexpected keyword argument 'BLOK'"):
        k_copy[(1,)](x, x, 8, BLOK=8)
    with pytest.raises(TypeError, match=r"k_copy\(\) missing required argument: 'BLOCK'"):
        k_copy[(1,)](x, x, 8)
    with pytest.raises(TypeError, match=r"k_copy\(\) missing required argument: 'n'"):
        k_copy[(1,)](x, x, BLOCK=8)
    with pytest.raises(TypeError, match=r"k_copy\(\) takes 4 arguments but 5 were given"):
        k_copy[(1,)](x, x, 8, 8, 8)
    with pytest.raises(TypeError, match=r"k_copy\(\) got multiple values for argument 'n'"):
        k_copy[(1,)](x, x, 8, n=8, BLOCK=8)
    with pytest.raises(TypeError, match=r"argument `BLOCK` is a tl\.constexpr but received an array"):
        k_copy[(1,)](x, x, 8, BLOCK=x)
    with pytest.raises(TypeError, match=r"argument `n` has unsupported type list"):
        k_copy[(1,)](x, x, [8], BLOCK=8)


@pytest.mark.parametrize("grid, axis, limit", [((1, 65536), 1, 65535), ((1, 1, 65536), 2, 65535),
                                               ((2**31,), 0, 2**31 - 1), ((4, 70000, 1), 1, 65535)])
def test_grid_over_cuda_limits(grid, axis, limit):
    x = np.zeros(8, np.float32)
    with pytest.raises(LaunchError, match=rf"exceeds CUDA's limit on axis {axis}: at most {limit} programs"):
        k_copy[grid](x, x, 8, BLOCK=8)
    with pytest.raises(ValueError):  # LaunchError is also a ValueError
        k_copy[grid](x, x, 8, BLOCK=8)


@pytest.mark.parametrize("grid, pattern", [
    (lambda meta: (2.0,), r"grid dimension 0 must be an int, got float \(2\.0\)"),
    (lambda meta: (1, "2"), r"grid dimension 1 must be an int, got str"),
    (lambda meta: (1, 1, 1, 1), r"the grid must have 1 to 3 dimensions, got \(1, 1, 1, 1\)"),
    (lambda meta: (), r"the grid must have 1 to 3 dimensions, got \(\)"),
    (lambda meta: (-1,), r"grid dimension 0 is negative: -1"),
    (lambda meta: None, r"the grid must be .*got NoneType"),
    (2.5, r"the grid must be .*got float"),
])
def test_bad_grids(grid, pattern):
    x = np.ones(8, np.float32)
    out = np.zeros(8, np.float32)
    with pytest.raises(LaunchError, match=pattern):
        k_copy[grid](x, out, 8, BLOCK=8)
    assert (out == 0).all()


def test_empty_grid_runs_nothing():
    x = np.ones(8, np.float32)
    out = np.zeros(8, np.float32)
    k_copy[(0,)](x, out, 8, BLOCK=8)
    assert (out == 0).all()


# ----------------------------------------------------------------------------------------- device_assert

@triton.jit
def k_assert(x_ptr, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.device_assert(x >= 0, "x must be non-negative")  #: assert-line
    tl.store(out_ptr + offs, x * 2)


@triton.jit(debug=True)
def k_assert_debug(x_ptr, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.device_assert(x >= 0, "x must be non-negative")  #: assert-debug-line
    tl.store(out_ptr + offs, x * 2)


def _assert_inputs():
    x = np.arange(32, dtype=np.float32)
    x[21] = -1.0  # program 2 (BLOCK 8), lane 5
    x[30] = -3.0  # program 3 fails too; the report names the first
    return x


def test_device_assert_silent_without_debug(monkeypatch, options_restored):
    monkeypatch.delenv("TRITON_DEBUG", raising=False)
    options_restored(debug=False)
    x = _assert_inputs()
    out = np.zeros(32, np.float32)
    k_assert[(4,)](x, out, BLOCK=8)
    np.testing.assert_array_equal(out, x * 2)


@pytest.mark.parametrize("how", ["options", "env", "jit", "launch"])
@pytest.mark.parametrize("group_size", [None, 1])
def test_device_assert_fires_in_debug_mode(monkeypatch, options_restored, how, group_size):
    monkeypatch.delenv("TRITON_DEBUG", raising=False)
    options_restored(group_size=group_size)
    kernel, marker, kwargs = k_assert, "assert-line", {}
    if how == "options":
        options_restored(debug=True)
    elif how == "env":
        monkeypatch.setenv("TRITON_DEBUG", "1")
    elif how == "jit":
        kernel, marker = k_assert_debug, "assert-debug-line"
    else:
        kwargs = {"debug": True}
    x = _assert_inputs()
    out = np.zeros(32, np.float32)
    with pytest.raises(DeviceAssertionError) as info:
        kernel[(4,)](x, out, BLOCK=8, **kwargs)
    assert isinstance(info.value, AssertionError)
    text = str(info.value)
    assert text.startswith(f"Assertion `x must be non-negative` failed ({HERE}:{_line(marker)}, program (2,))")
    assert "1 lane(s) failed; first: (5,)" in text
    np.testing.assert_array_equal(out[:16], x[:16] * 2)  # programs 0 and 1 completed
    assert (out[16:] == 0).all()


# ----------------------------------------------------------------------------------------- read-only memory

def test_store_to_read_only_array():
    x = np.arange(8, dtype=np.float32)
    x.setflags(write=False)
    with pytest.raises(MiniTritonError, match=r"tl\.store into `out_ptr`, which is a read-only array") as info:
        k_copy[(1,)](x, x, 8, BLOCK=8)
    assert isinstance(info.value.__cause__, ValueError)
    np.testing.assert_array_equal(x, np.arange(8, dtype=np.float32))


@triton.jit
def k_atomic_count(cnt_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(cnt_ptr + offs, 1, mask=offs < n)


def test_atomic_to_read_only_array():
    cnt = np.zeros(8, np.int32)
    cnt.setflags(write=False)
    with pytest.raises(MiniTritonError, match=r"tl\.atomic_add into `cnt_ptr`, which is a read-only array"):
        k_atomic_count[(1,)](cnt, 8, BLOCK=8)
    assert (cnt == 0).all()


# ----------------------------------------------------------------------------------------- out of bounds

@triton.jit
def k_unmasked_load(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)  #: oob-load
    tl.store(out_ptr + offs, x, mask=offs < n)


@pytest.mark.parametrize("group_size", [None, 1])
def test_unmasked_load_past_the_end(options_restored, group_size):
    """docs/faithfulness.md's example: 98,432 elements, BLOCK 1024, 97 programs; program 96 has 128 valid lanes."""
    options_restored(group_size=group_size)
    n = 98_432
    x = np.random.default_rng(0).random(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    with pytest.raises(OutOfBoundsError) as info:
        k_unmasked_load[(97,)](x, out, n, BLOCK=1024)
    assert isinstance(info.value, IndexError)
    assert str(info.value) == (
        f"tl.load reads past the end of `x_ptr` ({HERE}:{_line('oob-load')}, program (96,))\n"
        f"  896 of 1024 lanes are out of range (first: lane 128): offsets 98432…99327 from `x_ptr`, "
        f"but `x_ptr` has 98432 elements (valid offsets 0…98431)\n"
        f"  fix: mask the tail: tl.load(x_ptr + offs, mask=offs < n)\n"
        f"    x = tl.load(x_ptr + offs)  #: oob-load\n"
        f"        ^^^^^^^^^^^^^^^^^^^^^")
    np.testing.assert_array_equal(out[:96 * 1024], x[:96 * 1024])  # programs 0..95 ran
    assert (out[96 * 1024:] == 0).all()
    last = traceback.extract_tb(info.tb)[-1]
    assert (last.filename, last.lineno) == (__file__, _line("oob-load"))


@triton.jit
def k_shifted_load(x_ptr, out_ptr, shift, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs + shift)  #: oob-shift
    tl.store(out_ptr + offs, x)


def test_negative_offsets():
    x = np.arange(100, dtype=np.float32)
    out = np.zeros(64, np.float32)
    with pytest.raises(OutOfBoundsError) as info:
        k_shifted_load[(2,)](x, out, -3, BLOCK=32)
    assert str(info.value) == (
        f"tl.load reads before the start of `x_ptr` ({HERE}:{_line('oob-shift')}, program (0,))\n"
        f"  3 of 32 lanes are out of range (first: lane 0): offsets -3…-1 from `x_ptr`, "
        f"but `x_ptr` has 100 elements (valid offsets 0…99)\n"
        f"  fix: the offset offs + shift goes negative (down to -3) on these lanes; mask them: "
        f"tl.load(x_ptr + offs + shift, mask=(offs + shift) >= 0)\n"
        f"    x = tl.load(x_ptr + offs + shift)  #: oob-shift\n"
        f"        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^")
    assert (out == 0).all()


@triton.jit
def k_store_tail(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x, mask=offs < n + 8)  #: oob-store


@pytest.mark.parametrize("group_size", [None, 1])
def test_store_past_the_end_writes_nothing(options_restored, group_size):
    """The bounds check runs before the scatter: the failing store writes none of its lanes, even the
    in-bounds ones; the programs before it have completed, the ones after it never ran."""
    options_restored(group_size=group_size)
    x = np.arange(1, 51, dtype=np.float32)
    out = np.zeros(50, np.float32)
    with pytest.raises(OutOfBoundsError) as info:
        k_store_tail[(4,)](x, out, 50, BLOCK=16)
    assert str(info.value) == (
        f"tl.store writes past the end of `out_ptr` ({HERE}:{_line('oob-store')}, program (3,))\n"
        f"  8 of 16 lanes are out of range (first: lane 2): offsets 50…57 from `out_ptr`, "
        f"but `out_ptr` has 50 elements (valid offsets 0…49)\n"
        f"  fix: the mask offs < n + 8 lets offsets up to 57 through, but `out_ptr` has 50 elements: compare "
        f"with its size, offs < n\n"
        f"    tl.store(out_ptr + offs, x, mask=offs < n + 8)  #: oob-store\n"
        f"    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^")
    np.testing.assert_array_equal(out[:48], x[:48])
    assert (out[48:] == 0).all()  # lanes 0-1 of program 3 were in bounds, and still not written


@triton.jit
def k_atomic_wild(cnt_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.atomic_add(cnt_ptr + offs, 1)  #: oob-atomic


def test_atomic_out_of_bounds():
    cnt = np.zeros(8, np.int32)
    with pytest.raises(OutOfBoundsError) as info:
        k_atomic_wild[(1,)](cnt, BLOCK=16)
    assert str(info.value).splitlines()[:2] == [
        f"tl.atomic_add updates past the end of `cnt_ptr` ({HERE}:{_line('oob-atomic')}, program (0,))",
        "  8 of 16 lanes are out of range (first: lane 8): offsets 8…15 from `cnt_ptr`, "
        "but `cnt_ptr` has 8 elements (valid offsets 0…7)"]
    assert (cnt == 0).all()


@triton.jit
def k_oob_2d(x_ptr, out_ptr, stride, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + r * stride + c, tl.load(x_ptr + r * stride + c))


def test_out_of_bounds_names_2d_program_and_lane():
    x = np.zeros((3, 10), np.float32)  # 30 elements; row 2, column block 1 reaches 2*10 + 8..15 = 28..35
    out = np.zeros((3, 10), np.float32)
    with pytest.raises(OutOfBoundsError, match=re.escape("program (2, 1))\n  6 of 8 lanes are out of range "
                                                         "(first: lane 2): offsets 30…35 from `x_ptr`")):
        k_oob_2d[(3, 2)](x, out, 10, BLOCK=8)


@triton.jit
def k_wild_masked(x_ptr, out_ptr, cnt_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    wild = tl.where(mask, offs, offs * 1000003 - 2000000000)
    x = tl.load(x_ptr + wild, mask=mask, other=-1.0)
    tl.store(out_ptr + wild, x + 1, mask=mask)
    tl.atomic_add(cnt_ptr + wild, 1, mask=mask)


def test_masked_off_wild_lanes_never_error():
    n = 37
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    cnt = np.zeros(n, np.int32)
    k_wild_masked[(5,)](x, out, cnt, n, BLOCK=16)
    np.testing.assert_array_equal(out, x + 1)
    np.testing.assert_array_equal(cnt, np.ones(n, np.int32))


@triton.jit
def k_gather(x_ptr, off_ptr, mask_ptr, out_ptr, BLOCK: tl.constexpr):
    lanes = tl.arange(0, BLOCK)
    o = tl.load(off_ptr + lanes)
    m = tl.load(mask_ptr + lanes) != 0
    tl.store(out_ptr + lanes, tl.load(x_ptr + o, mask=m, other=-7.0))


def _compact(values, limit=4):
    """Sorted distinct ints as 'a…b' runs, at most `limit` runs then a count (written from the spec)."""
    values = sorted(set(values))
    runs = []
    for v in values:
        if runs and v == runs[-1][1] + 1:
            runs[-1][1] = v
        else:
            runs.append([v, v])
    parts = [f"{a}" if a == b else f"{a}…{b}" for a, b in runs[:limit]]
    if len(runs) > limit:
        parts.append(f"… ({len(values)} offsets in all)")
    return ", ".join(parts)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-20, 120), min_size=64, max_size=64), st.lists(st.booleans(), min_size=64, max_size=64))
def test_out_of_bounds_counts_exactly_the_unmasked_wild_lanes(offsets, mask):
    n = 100
    x = np.arange(n, dtype=np.float32) * 3
    off = np.array(offsets, np.int32)
    m = np.array(mask, np.int8)
    out = np.zeros(64, np.float32)
    bad = (m != 0) & ((off < 0) | (off >= n))
    if not bad.any():
        k_gather[(1,)](x, off, m, out, BLOCK=64)
        np.testing.assert_array_equal(out, np.where(m != 0, x[np.clip(off, 0, n - 1)], -7.0))
        return
    with pytest.raises(OutOfBoundsError) as info:
        k_gather[(1,)](x, off, m, out, BLOCK=64)
    lines = str(info.value).splitlines()
    where = "past the end of" if off[bad].max() >= n else "before the start of"
    assert lines[0].startswith(f"tl.load reads {where} `x_ptr` ({HERE}:")
    assert lines[0].endswith(", program (0,))")
    assert lines[1] == (f"  {int(bad.sum())} of 64 lanes are out of range (first: lane {int(np.argmax(bad))}): "
                        f"offsets {_compact(off[bad].tolist())} from `x_ptr`, but `x_ptr` has 100 elements "
                        f"(valid offsets 0…99)")
    assert (out == 0).all()


@triton.jit
def k_first_failure(flag_ptr, src_ptr, out_ptr):
    x = tl.program_id(0)
    y = tl.program_id(1)
    z = tl.program_id(2)
    lin = (x * tl.num_programs(1) + y) * tl.num_programs(2) + z
    f = tl.load(flag_ptr + lin)
    v = tl.load(src_ptr + f * 1000 + z)  #: first-failure
    tl.store(out_ptr + lin, v + lin.to(tl.float32))


def _first_failure_case(grid, failing, group_size):
    gx, gy, gz = grid
    flags = np.zeros(gx * gy * gz, np.int32)
    flags[list(failing)] = 1
    src = np.ones(8, np.float32)
    out = np.zeros(gx * gy * gz, np.float32)
    saved = minitriton.options().group_size
    minitriton.set_options(group_size=group_size)
    try:
        with pytest.raises(OutOfBoundsError) as info:
            k_first_failure[grid](flags, src, out)
    finally:
        minitriton.set_options(group_size=saved)
    return str(info.value), out


def test_first_failing_program_in_launch_order_is_reported():
    """Launch order is x outermost, z fastest: (1, 0, 3) comes before (1, 2, 0) and (2, 0, 0)."""
    grid = (3, 4, 5)
    lin = lambda x, y, z: (x * 4 + y) * 5 + z  # noqa: E731
    failing = {lin(2, 0, 0), lin(1, 2, 0), lin(1, 0, 3), lin(2, 3, 4)}
    for group_size in (None, 1):
        text, out = _first_failure_case(grid, failing, group_size)
        assert text.splitlines()[0] == (f"tl.load reads past the end of `src_ptr` "
                                        f"({HERE}:{_line('first-failure')}, program (1, 0, 3))")
        first = lin(1, 0, 3)
        np.testing.assert_array_equal(out[:first], 1 + np.arange(first, dtype=np.float32))
        assert (out[first:] == 0).all()


@settings(max_examples=25, deadline=None)
@given(st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4)).flatmap(
    lambda g: st.tuples(st.just(g), st.sets(st.integers(0, g[0] * g[1] * g[2] - 1), min_size=1))))
def test_first_failing_program_any_grid(case):
    grid, failing = case
    first = min(failing)
    gx, gy, gz = grid
    x, y, z = first // (gy * gz), (first // gz) % gy, first % gz
    pid = (x,) if gy == gz == 1 else (x, y) if gz == 1 else (x, y, z)
    results = [_first_failure_case(grid, failing, g) for g in (None, 1, 3)]
    for text, out in results:
        assert f"program {pid})" in text.splitlines()[0]
        np.testing.assert_array_equal(out[:first], 1 + np.arange(first, dtype=np.float32))
        assert (out[first:] == 0).all()
    assert results[0][0] == results[1][0] == results[2][0]
