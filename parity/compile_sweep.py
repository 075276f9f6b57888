"""Compile-acceptance sweep: which (op, dtype) kernels Triton 3.6's compiler accepts, next to minitriton.

The GPU target runs Triton 3.6.0, whose compiler refuses some kernels that Triton's interpreter (and a naive
emulator) run: MLIR verification and LLVM lowering failures, not just frontend checks. Triton's compiler
needs no GPU to build a cubin for sm_90, so this tool compiles every case offline with a Python that has
`triton==3.6.0` installed, runs the same source under minitriton, and lists the cases where one accepts and
the other refuses. Found this way on 2026-11-29: tl.histogram of non-32-bit inputs, `while` on a non-bool,
`return None` in a helper, reshape of a scalar, int1 `//`/`%`/shifts (see the probes and tests that pin them).

Cases: unary ops and reductions over a 16-element block of each of the 13 dtypes, and binary ops over every
pair of dtypes. Whether each side compiles, and the words of the refusals; the values the accepted kernels
compute are compared by the probes and the fuzz, on the GPU. Last run: results/compile-sweep-2026-11-29.md.

    python -m venv ~/triton36 && ~/triton36/bin/pip install triton==3.6.0 numpy
    .venv/bin/python parity/compile_sweep.py --triton-python ~/triton36/bin/python [--only unary|binary] [--out F.json]

Reports the cases accepted by one side only, and those both refuse with different words (each side's last
line, without the exception's type). Exit status 1 when a case is accepted by one side only. About 5,000
cases, ~8 minutes on 2 cores.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import importlib.util
import json
import os
import pathlib
import re
import subprocess
import warnings
import sys
import tempfile

DTYPES = ["int1", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "fp16", "bf16", "fp32", "fp64"]
POINTER = {"int1": "*i8", "int8": "*i8", "int16": "*i16", "int32": "*i32", "int64": "*i64", "uint8": "*u8",
           "uint16": "*u16", "uint32": "*u32", "uint64": "*u64", "fp16": "*fp16", "bf16": "*bf16",
           "fp32": "*fp32", "fp64": "*fp64"}

UNARY = {
    "sort": "tl.sort(x)", "sort_desc": "tl.sort(x, descending=True)", "topk4": "tl.topk(x, 4)",
    "flip": "tl.flip(x, 0)", "interleave": "tl.interleave(x, x)", "reduce_or": "tl.reduce_or(x, 0)",
    "gather": "tl.gather(x, (tl.arange(0, 16) * 3) % 16, 0)", "cumsum": "tl.cumsum(x, 0)",
    "cumprod": "tl.cumprod(x, 0)", "argmax": "tl.argmax(x, 0)", "argmin": "tl.argmin(x, 0)",
    "max_idx": "tl.max(x, 0, return_indices=True)[1]", "xor_sum": "tl.xor_sum(x, 0)", "sum": "tl.sum(x, 0)",
    "max": "tl.max(x, 0)", "umulhi": "tl.umulhi(x, x)", "abs": "tl.abs(x)", "neg": "-x", "invert": "~x",
    "sqrt": "tl.sqrt(x)", "exp": "tl.exp(x)", "floor": "tl.floor(x)", "ceil": "tl.ceil(x)",
    "fma": "tl.fma(x, x, x)", "clamp": "tl.clamp(x, x, x)", "cdiv": "tl.cdiv(x, x)", "rsqrt": "tl.rsqrt(x)",
    "sigmoid": "tl.sigmoid(x)", "softmax": "tl.softmax(x)", "erf": "tl.erf(x)", "div_rn": "tl.div_rn(x, x)",
    "sqrt_rn": "tl.sqrt_rn(x)", "log2": "tl.log2(x)", "cos": "tl.cos(x)", "join": "tl.ravel(tl.join(x, x))",
    "histogram": "tl.histogram(x, 8)", "item": "tl.sum(x, 0, keep_dims=True).item()",
    "atomic_add": "tl.atomic_add(y_ptr + tl.arange(0, 16), x)", "atomic_max": "tl.atomic_max(y_ptr + tl.arange(0, 16), x)",
    "atomic_and": "tl.atomic_and(y_ptr + tl.arange(0, 16), x)",
    "atomic_xchg": "tl.atomic_xchg(y_ptr + tl.arange(0, 16), x)",
    "atomic_cas": "tl.atomic_cas(y_ptr + tl.arange(0, 16), x, x)",
    "dot": "tl.dot(tl.reshape(x, (4, 4)) + tl.zeros((16, 16), x.dtype), tl.zeros((16, 16), x.dtype))",
    "trans": "tl.trans(tl.reshape(x, (4, 4)))", "cast_i8": "x.to(tl.int8)", "cast_bf16": "x.to(tl.bfloat16)",
    "cast_fp64": "x.to(tl.float64)", "bitcast_16": "x.to(tl.int16, bitcast=True)",
    "where": "tl.where(x == x, x, x)", "and_blocks": "(x == x) and (x != x)", "not_block": "not x",
    "trans2d": "tl.trans(tl.reshape(x, (4, 4)))", "permute3d": "tl.permute(tl.reshape(x, (2, 2, 4)), (2, 0, 1))",
    "sum_axis1": "tl.sum(tl.reshape(x, (4, 4)), axis=1)", "max_keep": "tl.max(tl.reshape(x, (4, 4)), 0, keep_dims=True)",
    "split": "tl.split(tl.reshape(x, (8, 2)))[0]", "expand": "tl.expand_dims(x, 0)",
    "broadcast": "tl.broadcast_to(x[None, :], (2, 16))", "cumsum2d": "tl.cumsum(tl.reshape(x, (4, 4)), 1)",
    "sort2d": "tl.sort(tl.reshape(x, (4, 4)))", "flip2d": "tl.flip(tl.reshape(x, (4, 4)), 0)",
    "reduce_custom": "tl.reduce(x, 0, _sweep_add)", "scan_custom": "tl.associative_scan(x, 0, _sweep_add)",
    "min_idx": "tl.min(x, 0, return_indices=True)[1]", "dot_self": "tl.dot(tl.broadcast_to(x[:, None], (16, 16)), "
    "tl.broadcast_to(x[None, :], (16, 16)))", "dot_ieee": "tl.dot(tl.broadcast_to(x[:, None], (16, 16)), "
    "tl.broadcast_to(x[None, :], (16, 16)), input_precision='ieee')", "dot_out_fp16": "tl.dot(tl.broadcast_to("
    "x[:, None], (16, 16)), tl.broadcast_to(x[None, :], (16, 16)), out_dtype=tl.float16)",
    "load_other": "tl.load(y_ptr + tl.arange(0, 16), mask=tl.arange(0, 16) < 8, other=1.5)",
    "load_other_int": "tl.load(y_ptr + tl.arange(0, 16), mask=tl.arange(0, 16) < 8, other=-1)",
    "full_like": "tl.full((16,), 3, x.dtype) + tl.zeros_like(x)",
}
BINARY = {
    "add": "x + y", "sub": "x - y", "mul": "x * y", "truediv": "x / y", "floordiv": "x // y", "mod": "x % y",
    "and": "x & y", "or": "x | y", "xor": "x ^ y", "shl": "x << y", "shr": "x >> y", "lt": "x < y",
    "eq": "x == y", "maximum": "tl.maximum(x, y)", "where": "tl.where(x == x, x, y)", "fdiv": "tl.fdiv(x, y)",
    "cast": "x.to(y.dtype)", "bitcast": "x.to(y.dtype, bitcast=True)",
    "cast_rtz": "x.to(y.dtype, fp_downcast_rounding='rtz')",
    "dot": "tl.dot(tl.broadcast_to(x[:, None], (16, 16)), tl.broadcast_to(y[None, :], (16, 16)))",
    "store_into": "tl.store(y_ptr + tl.arange(0, 16), x);; x",
    "atomic_add_into": "tl.atomic_add(y_ptr + tl.arange(0, 16), x)",
    "fma3": "tl.fma(x, y, x)", "clamp3": "tl.clamp(x, y, x)",
}


STATEMENTS = {   # kernel bodies: x (int32[16]), n (a run-time int32 scalar), C (a constexpr global, 3)
"global_read": "r = x + G",
"global_constexpr": "r = x + GC",
"global_float": "r = x + GF",
"global_dtype": "r = x.to(GD).to(tl.int32)",
"global_tuple": "r = x + GT[0]",
"builtin_sum_list": "r = x + sum([1, 2])",
"builtin_tuple": "r = x + tuple([1, 2])[0]",
"builtin_bool": "r = x + bool(C)",
"builtin_str": "s = str(C)\n    r = x",
"builtin_enumerate": "r = x\n    for i, v in enumerate(range(3)):\n        r = r + v",
"builtin_zip": "r = x\n    for a, b in zip(range(2), range(2)):\n        r = r + a",
"builtin_type": "r = x + (type(C) == int)",
"builtin_round": "r = x + round(1.5)",
"builtin_getattr": "r = x + getattr(x, 'shape')[0]",
"builtin_list": "r = x + list((1, 2))[0]",

"listcomp": "r = tl.sum(x) + sum([i for i in range(3)])",
"lambda": "f = lambda v: v + 1\n    r = f(x)",
"try": "try:\n        r = x + 1\n    except Exception:\n        r = x",
"with": "with open('f') as fh:\n        pass\n    r = x",
"del": "t = x + 1\n    del t\n    r = x",
"global": "global G\n    r = x",
"for_else": "r = x\n    for i in range(n):\n        r = r + 1\n    else:\n        r = r + 2",
"while_else": "r = x\n    i = 0\n    while i < n:\n        i += 1\n    else:\n        r = r + 2",
"assert_stmt": "assert n > 0, 'n must be positive'\n    r = x",
"assert_tensor_block": "assert x > 0\n    r = x",
"fstring": "s = f'{n}'\n    r = x",
"dict": "d = {'a': 1}\n    r = x + d['a']",
"list_literal": "l = [1, 2]\n    r = x + l[0]",
"tuple_unpack": "a, b = x, x + 1\n    r = a + b",
"tuple_index": "t = (x, x + 1)\n    r = t[1]",
"tuple_runtime_index": "t = (x, x + 1)\n    r = t[n]",
"range_float": "r = x\n    for i in range(0, 2.5):\n        r = r + 1",
"range_step_runtime": "r = x\n    for i in range(0, 10, n):\n        r = r + 1",
"static_range_runtime": "r = x\n    for i in tl.static_range(n):\n        r = r + 1",
"static_range_const": "r = x\n    for i in tl.static_range(C):\n        r = r + i",
"for_over_tuple": "r = x\n    for v in (1, 2, 3):\n        r = r + v",
"for_over_tensor": "r = x\n    for v in x:\n        r = r + v",
"break": "r = x\n    for i in range(n):\n        if i == 2:\n            break\n        r = r + 1",
"continue": "r = x\n    for i in range(n):\n        if i == 2:\n            continue\n        r = r + 1",
"return_early": "r = x\n    if n > 2:\n        return\n    r = r + 1",
"builtin_min": "r = min(x, 2)",
"builtin_max_scalar": "r = x + max(n, 2)",
"builtin_abs": "r = abs(x)",
"builtin_len": "r = x + len(x)",
"builtin_int": "r = x + int(n)",
"builtin_float": "r = x + float(C)",
"builtin_print": "print('hi', n)\n    r = x",
"builtin_isinstance": "r = x + isinstance(n, int)",
"builtin_range_var": "rg = range(3)\n    r = x + rg[1]",
"shape_attr": "r = x + x.shape[0]",
"dtype_cmp": "r = x + (x.dtype == tl.int32)",
"numel": "r = x + x.numel",
"T_attr": "r = tl.sum(tl.reshape(x, (4, 4)).T, 0)",
"ternary_runtime": "r = x if n > 2 else x + 1",
"ternary_const": "r = x if C > 2 else x + 1.5",
"walrus": "r = (t := x + 1) + t",
"augassign_attr": "r = x\n    r += 1",
"chained_assign": "a = b = x\n    r = a + b",
"pass_only": "pass\n    r = x",
"nested_def": "def g(v):\n        return v\n    r = g(x)",
"str_concat": "s = 'a' + 'b'\n    r = x",
"is_none": "r = x if x is not None else x",
"in_op": "r = x + (1 in (1, 2))",
"pow_op": "r = x ** 2",
"matmul_op": "r = tl.sum(tl.reshape(x, (4, 4)) @ tl.reshape(x, (4, 4)), 0)",
"bool_of_scalar_if": "r = x\n    if n:\n        r = r + 1",
"if_block_cond": "r = x\n    if x > 0:\n        r = r + 1",
"if_type_mismatch_one_branch": "if n > 100:\n        r = x + 0.5\n    else:\n        r = x",
"if_type_mismatch_reassign": "r = x\n    if n > 100:\n        r = x + 0.5",
"loop_type_change_never_runs": "r = x\n    for i in range(0, n - 100):\n        r = r + 0.5",
"if_defined_one_branch": "if n > 100:\n        q = x + 1\n    r = x",
"if_defined_one_branch_used": "if n > 100:\n        q = x + 1\n    else:\n        pass\n    r = x",
"helper_multi_return_types": "r = _h(x, n)",
"helper_default_kw": "r = _h2(x)",
"helper_kw_call": "r = _h2(v=x, k=3)",
"helper_constexpr_arg": "r = _h3(x, 4)",
"helper_tuple_return": "a, b = _h4(x)\n    r = a + b",
"constexpr_reassign": "C = 5\n    r = x + C",
"arg_reassign": "n = n + 1\n    r = x + n",
"device_assert_cond": "tl.device_assert(x >= 0, 'neg')\n    r = x",
"device_print": "tl.device_print('x', x)\n    r = x",
"static_print": "tl.static_print('x', x)\n    r = x",
"debug_barrier": "tl.debug_barrier()\n    r = x",
"multiple_of": "r = tl.multiple_of(x, 4)",
"max_contiguous": "r = tl.max_contiguous(x, 4)",
"num_programs": "r = x + tl.num_programs(0)",
"program_id_runtime": "r = x + tl.program_id(n)",
"arange_constexpr_expr": "r = tl.sum(tl.arange(0, C * 2)) + x",
"zeros_runtime_shape": "r = x + tl.sum(tl.zeros((n,), tl.int32))",
"cast_to_python_type": "r = x.to(float)",
"to_string_dtype": "r = x.to('fp32')",
}
STATEMENT_HELPERS = '''
@triton.jit
def _h(v, n):
    if n > 2:
        return v
    return v + 0.5

@triton.jit
def _h2(v, k=2):
    return v + k

@triton.jit
def _h3(v, K: tl.constexpr):
    return v + tl.sum(tl.arange(0, K))

@triton.jit
def _h4(v):
    return v, v + 1
'''


def statement_source(body: str) -> str:
    """One kernel around a statement-level case; its result `r` must be an int32 block of 16."""
    return ("import triton\nimport triton.language as tl\n\nG = 1\nGC = tl.constexpr(2)\nGF = 2.5\n"
            "GD = tl.float32\nGT = (1, 2)\nC = tl.constexpr(3)\n" + STATEMENT_HELPERS +
            "\n\n@triton.jit\ndef k(x_ptr, y_ptr, out_ptr):\n    x = tl.load(x_ptr + tl.arange(0, 16))\n"
            f"    n = tl.load(y_ptr)\n    {body}\n    tl.store(out_ptr + tl.arange(0, 16), r.to(tl.float32))\n")


def source(expr: str, xt: str, yt: str) -> str:
    """One kernel: x (and y) loaded as 16-element blocks of their dtypes, the expression reduced to an fp32."""
    pre, _, expr = expr.rpartition(";; ")   # "statement;; expression"
    x = "tl.load(x_ptr + tl.arange(0, 16))" + (" != 0" if xt == "int1" else "")
    y = "tl.load(y_ptr + tl.arange(0, 16))" + (" != 0" if yt == "int1" else "")
    return ("import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef _sweep_add(a, b):\n    return a + b\n\n\n"
            "@triton.jit\ndef k(x_ptr, y_ptr, out_ptr):\n"
            f"    x = {x}\n    y = {y}\n" + (f"    {pre}\n" if pre else "") + f"    r = ({expr}).to(tl.float32)\n"
            "    tl.store(out_ptr, tl.sum(tl.ravel(r), 0) if len(r.shape) else r)\n")


def cases(only: str | None):
    """[(case name, source, x dtype, y dtype)]"""
    out = []
    if only in (None, "unary"):
        out += [(f"{n}|{dt}", source(e, dt, dt), dt, dt) for n, e in UNARY.items() for dt in DTYPES]
    if only in (None, "statements"):
        out += [(f"statement|{n}", statement_source(b), "int32", "int32") for n, b in STATEMENTS.items()]
    if only in (None, "binary"):
        out += [(f"{n}|{a}|{b}", source(e, a, b), a, b) for n, e in BINARY.items() for a in DTYPES for b in DTYPES]
    return out


def _message(e: BaseException) -> str:
    """The last line of an error's text without its `Type('...')` wrapper: what both sides can compare."""
    lines = [ln for ln in str(e).strip().splitlines() if ln.strip() and not ln.startswith("  in kernel")]
    text = (lines[-1] if lines else type(e).__name__).strip()
    m = re.match(r"^[A-Za-z_]+\((['\"])(.*)\1\)$", text)
    return (m.group(2).replace("\\'", "'") if m else text)[:240]


def _load(path: pathlib.Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def compile_side(spec_file: str, out_file: str):
    """Runs under the Triton 3.6 Python: compiles every case for sm_90; writes {case: "ok" | error line}."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    todo = json.loads(pathlib.Path(spec_file).read_text())
    folder = pathlib.Path(spec_file).parent
    res = {}
    for i, (name, src, xt, yt) in enumerate(todo):
        path = folder / f"c{i}.py"
        path.write_text(src)
        try:
            fn = _load(path, f"c{i}").k
            triton.compile(ASTSource(fn, signature={"x_ptr": POINTER[xt], "y_ptr": POINTER[yt], "out_ptr": "*fp32"},
                                     constexprs={}), target=GPUTarget("cuda", 90, 32))
            res[name] = "ok"
        except Exception as e:  # noqa: BLE001 - every refusal is data
            while isinstance(e.__cause__, Exception) and type(e).__name__ == "CompilationError":
                e = e.__cause__   # a refusal inside a @jit library function: the message is the innermost one
            res[name] = _message(e)
    pathlib.Path(out_file).write_text(json.dumps({"triton": triton.__version__, "results": res}))


def minitriton_side(todo, folder: pathlib.Path) -> dict:
    import numpy as np

    import minitriton
    minitriton.install()
    storage = {"int1": np.int8, "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
               "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
               "fp16": np.float16, "fp32": np.float32, "fp64": np.float64}

    def array(dt):
        if dt == "bf16":
            return minitriton.Buffer(np.full(16, 0x3F80, np.uint16), minitriton.language.bfloat16)
        return (np.arange(16) % 5 + 1).astype(storage[dt])

    res = {}
    warnings.simplefilter("ignore")   # the deprecation warnings of `and`/`or` on blocks are expected here
    for i, (name, src, xt, yt) in enumerate(todo):
        path = folder / f"m{i}.py"
        path.write_text(src)
        try:
            with contextlib.redirect_stdout(io.StringIO()):   # device_print cases
                _load(path, f"m{i}").k[(1,)](array(xt), array(yt), np.zeros(16, np.float32))
            res[name] = "ok"
        except minitriton.CompilationError as e:
            res[name] = _message(e)
        except Exception as e:  # noqa: BLE001 - a run-time error is not a refusal to compile
            res[name] = f"ran, then {type(e).__name__}: {str(e).splitlines()[0][:200]}"
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--triton-python", required=True, help="a Python with triton==3.6.0 (no GPU needed)")
    ap.add_argument("--only", choices=["unary", "binary", "statements"], default=None)
    ap.add_argument("--out", default=None, help="write every case's two outcomes here (JSON)")
    a = ap.parse_args(argv)
    todo = cases(a.only)
    with tempfile.TemporaryDirectory(prefix="compile_sweep_") as tmp:
        folder = pathlib.Path(tmp)
        (folder / "cases.json").write_text(json.dumps(todo))
        proc = subprocess.run([a.triton_python, os.path.abspath(__file__), "--compile-side", str(folder / "cases.json"),
                               str(folder / "triton.json")], capture_output=True, text=True)
        if proc.returncode != 0 or not (folder / "triton.json").exists():
            print(proc.stderr[-3000:], file=sys.stderr)
            return 3
        compiled = json.loads((folder / "triton.json").read_text())
        mt = minitriton_side(todo, folder)
    ref = compiled["results"]
    differ = [(n, ref[n], mt[n]) for n, *_ in todo if (ref[n] == "ok") != (mt[n] == "ok")]
    worded = [(n, ref[n], mt[n]) for n, *_ in todo if "ok" != ref[n] != mt[n] != "ok"]
    refused = sum(ref[n] != "ok" for n, *_ in todo)
    print(f"compile sweep: {len(todo)} cases, Triton {compiled['triton']} (offline, sm_90) vs minitriton: "
          f"{len(differ)} accepted by one side only; of the {refused} Triton refuses, {len(worded)} with other "
          f"words")
    for title, rows in (("accepted by one side only", differ), ("refused in other words", worded)):
        for name, r, m in rows:
            print(f"  {title}: {name}\n    triton:     {r}\n    minitriton: {m}")
    if a.out:
        from parity.report import results_json   # this file also runs as a script in the Triton 3.6 Python
        pathlib.Path(a.out).write_text(results_json({"triton": compiled["triton"], "cases": {
            n: {"triton": ref[n], "minitriton": mt[n]} for n, *_ in todo}}))
    return 1 if differ else 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--compile-side":
        compile_side(sys.argv[2], sys.argv[3])
    else:
        sys.exit(main())
