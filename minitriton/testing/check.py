"""`check_kernel`: run a kernel on inputs hypothesis draws, compare with a reference, report the shrunk case.

    def launch(x, y, out):
        add_kernel[(triton.cdiv(x.size, 128),)](x, y, out, x.size, BLOCK_SIZE=128)

    check_kernel(launch, reference=lambda x, y: x + y,
                 inputs=mts.inputs("x", "y", shape=mts.sizes(block=128)))

For every drawn case the outputs are fresh poisoned arrays (`poison.empty`) shaped like the reference's
results; the launch must then (in this order) not raise, leave its inputs unchanged, write nothing into
the padding around an output view, write every output element, and match the reference (exactly, or
within atol/rtol). The first failure hypothesis finds is shrunk to its simplest form and raised as
`KernelCheckError` (an AssertionError) whose message shows the diagnosis and the case; `.kind`, `.case`
and `.diagnosis` give them to code. Importing this module imports hypothesis.
"""
from __future__ import annotations

import numpy as np
import hypothesis
from hypothesis import HealthCheck, given
from hypothesis import strategies as st

from minitriton.errors import format_ranges
from minitriton.memory.buffers import Buffer
from minitriton.options import chosen, options, set_options
from minitriton.memory.allocation import as_array
from minitriton.testing.poison import (Layout, as_numpy, describe_array, empty, triton_dtype, unwritten, unwritten_attribution,
                     unwritten_message, written_outside)

__all__ = ["check_kernel", "kernel_property", "KernelCheckError"]


class KernelCheckError(AssertionError):
    """A kernel failed `check_kernel` on a (shrunk) drawn case.

    `kind`: "error" (the launch raised), "input modified", "outside" (wrote around an output view),
    "unwritten", "mismatch" or "grouping" (results depend on minitriton.options().group_size);
    `diagnosis`: the one-line finding; `case`: the drawn inputs (copies, as the kernel received them).
    """

    def __init__(self, kind: str, diagnosis: str, case: dict, report: str):
        super().__init__(report)
        self.kind = kind
        self.diagnosis = diagnosis
        self.case = case


def check_kernel(launch, reference, inputs, *, outputs="out", atol: float = 0.0, rtol: float = 0.0,
                 out_layout=None, group_sizes=None, modifies=(), sanitize: bool | None = None,
                 max_examples: int | None = None, settings: hypothesis.settings | None = None,
                 seed: int | None = None):
    """Property-test `launch(**inputs, **outputs)` against `reference(**inputs)` on drawn inputs.

    `inputs`: a strategy of dicts (e.g. `strategies.inputs(...)`), a dict of strategies, or a function
    `draw -> dict` (hypothesis' `draw`); `reference` returns the expected output (an array, a tuple for
    several `outputs`, or a dict by name) with the output's dtype: each output is allocated poisoned with
    the reference result's shape and dtype, at `out_layout` (a `Layout`, or a strategy of them; default
    plain contiguous; a dict gives one per output name). `atol`/`rtol` 0 (default) compare exactly (NaN
    equals NaN). `group_sizes` (e.g. `(None, 1)`): run once per `minitriton.options().group_size` (None = the
    default grouping) and require identical outputs; by default the launch runs once, under the options as
    they are.
    `modifies`: names of inputs the kernel may write. `sanitize` runs the launch with
    `minitriton.options().sanitize`: races between programs, order-dependent reads and loads of never-written
    output elements are reported, and unwritten elements are attributed to the programs whose store masks
    excluded them. By default (None) it is on unless switched off by `set_options(sanitize=False)` or
    MINITRITON_SANITIZE=0.
    `max_examples`/`settings`/`seed` tune hypothesis
    (the active profile by default; no example database). Raises `KernelCheckError` for the shrunk case.
    """
    names = (outputs,) if isinstance(outputs, str) else tuple(outputs)
    sanitizing = bool(sanitize) if sanitize is not None else options().sanitize or not chosen("sanitize")
    case_strategy = _as_case_strategy(inputs)
    label = getattr(launch, "__name__", "launch")
    sizes = (_KEEP,) if group_sizes is None else tuple(group_sizes)

    per_output = out_layout if isinstance(out_layout, dict) else {n: out_layout for n in names}
    unknown = set(per_output) - set(names)
    if unknown:
        raise TypeError(f"out_layout names {sorted(unknown)}, which are not outputs {names}")
    fixed = {n: Layout() if per_output.get(n) is None else per_output[n] for n in names}
    drawn_names = [n for n in names if isinstance(fixed[n], st.SearchStrategy)]

    def run_case(case, **drawn):
        layouts = {n: drawn.get(f"layout_{n}", fixed[n]) for n in names}
        with set_options(sanitize=sanitizing):
            _check_case(label, launch, reference, names, case, layouts, atol, rtol, sizes, set(modifies))

    overrides = dict(deadline=None, database=None, report_multiple_bugs=False,
                     suppress_health_check=list(HealthCheck),
                     phases=[p for p in hypothesis.Phase if p is not hypothesis.Phase.explain])
    if max_examples is not None:
        overrides["max_examples"] = max_examples
    drawn = {"case": case_strategy}
    for n in drawn_names:
        drawn[f"layout_{n}"] = fixed[n]
    test = given(**drawn)(run_case)
    test = hypothesis.settings(settings, **overrides)(test) if settings is not None else \
        hypothesis.settings(**overrides)(test)
    if seed is not None:
        test = hypothesis.seed(seed)(test)
    test()


def kernel_property(reference, inputs, **options):
    """Decorator: turn a launch function into a pytest test that runs `check_kernel` on it.

        @kernel_property(reference=lambda x, y: x + y, inputs=mts.inputs("x", "y", shape=mts.sizes(block=128)))
        def test_add(x, y, out):
            add_kernel[(triton.cdiv(x.size, 128),)](x, y, out, x.size, BLOCK_SIZE=128)
    """
    def decorate(launch):
        def test():
            check_kernel(launch, reference, inputs, **options)
        test.__name__ = launch.__name__
        test.__qualname__ = getattr(launch, "__qualname__", launch.__name__)
        test.__module__ = launch.__module__
        test.__doc__ = launch.__doc__
        test.launch = launch
        return test
    return decorate


# ---------------------------------------------------------------- one case

def _as_case_strategy(inputs):
    if isinstance(inputs, st.SearchStrategy):
        return inputs
    if isinstance(inputs, dict):
        return st.fixed_dictionaries({k: v if isinstance(v, st.SearchStrategy) else st.just(v)
                                      for k, v in inputs.items()})
    if callable(inputs):
        return st.composite(inputs)()
    raise TypeError("inputs must be a hypothesis strategy of dicts, a dict of strategies, or a function draw -> dict")


def _check_case(label, launch, reference, names, case, layouts, atol, rtol, group_sizes, modifies):
    pristine = {k: _clone(v) for k, v in case.items()}
    expected = _expected(reference, names, {k: _clone(v) for k, v in case.items()})
    report = _Report(label, pristine, layouts, expected)
    results = []
    for g in group_sizes:
        outs, _ = _run(launch, case, expected, layouts, g, False, modifies, report)
        for name in names:
            _check_output(launch, case, expected, layouts, g, modifies, report, outs, name, atol, rtol)
        results.append((g, outs))
    g0, first = results[0]
    for g, outs in results[1:]:
        for name in names:
            a, b = _bits(first[name]), _bits(outs[name])
            if not np.array_equal(a, b):
                where = np.flatnonzero((a != b).reshape(-1))
                report.fail("grouping", f"`{name}` differs between group_size={g0} and group_size={g} at elements "
                                        f"{format_ranges(where, noun='')}: results must not depend on how programs are grouped")


_KEEP = object()  # "leave minitriton.options().group_size as it is"


class _Report:
    def __init__(self, label, case, layouts, expected):
        self.label, self.case, self.layouts, self.expected = label, case, layouts, expected
        self.group_size = None

    def fail(self, kind, diagnosis, cause=None):
        lines = [f"check_kernel({self.label}): {diagnosis}", "  falsifying case (shrunk):"]
        for k, v in self.case.items():
            lines.append(f"    {k} = {_describe(v)}")
        for name, exp in self.expected.items():
            a, ty = as_array(exp)
            dt = "bfloat16" if ty.is_bf16() else a.dtype.name
            layout = self.layouts[name]
            where = "" if layout.is_plain() else f", placed by {layout}"
            lines.append(f"    {name}: {dt}[{', '.join(str(s) for s in a.shape)}] (output{where})")
        if self.group_size is not None:
            lines.append(f"    with minitriton.set_options(group_size={self.group_size})")
        error = KernelCheckError(kind, diagnosis, self.case, "\n".join(lines))
        if cause is not None:
            raise error from cause
        raise error


def _describe(v):
    if as_array(v) is not None:
        return describe_array(v)
    return repr(v)


def _expected(reference, names, args):
    with np.errstate(all="ignore"):  # special values (inf, NaN) are drawn on purpose
        result = reference(**args)
    if isinstance(result, dict):
        missing = [n for n in names if n not in result]
        if missing:
            raise TypeError(f"the reference returned no value for output(s) {missing}")
        values = [result[n] for n in names]
    elif isinstance(result, (tuple, list)) and len(names) > 1:
        if len(result) != len(names):
            raise TypeError(f"the reference returned {len(result)} values for the {len(names)} outputs {names}")
        values = list(result)
    else:
        if len(names) != 1:
            raise TypeError(f"the reference must return {len(names)} values (a tuple or a dict) for {names}")
        values = [result]
    out = {}
    for n, v in zip(names, values):
        out[n] = v if as_array(v) is not None else np.asarray(v)
    return out


def _clone(v):
    """A copy of an argument that keeps its layout (a view at the same place of a copied buffer)."""
    if isinstance(v, Buffer):
        return Buffer(_clone(v.array), v.triton_dtype)
    if isinstance(v, np.ndarray):
        if v.base is None or not isinstance(v.base, np.ndarray):
            return v.copy()
        base = v.base.copy()
        offset = v.__array_interface__["data"][0] - v.base.__array_interface__["data"][0]
        return np.ndarray(v.shape, v.dtype, buffer=base, offset=offset, strides=v.strides)
    if hasattr(v, "clone") and hasattr(v, "data_ptr"):
        return v.clone()
    return v


def _buffer_bytes(v):
    array = as_array(v)
    if array is None:
        return None
    a = array[0]
    base = a.base if isinstance(a.base, np.ndarray) else a
    return base.view(np.uint8).copy() if base.flags.c_contiguous else None


def _alloc_output(exp, layout, alternate):
    a, ty = as_array(exp)
    if ty.is_bool():
        view, _ = layout.allocate(a.shape, np.dtype(bool), None)
        view[...] = alternate
        return view
    return empty(a.shape, ty, layout=layout, alternate=alternate)


def _run(launch, case, expected, layouts, group_size, alternate, modifies, report):
    args = {k: _clone(v) for k, v in case.items()}
    before = {k: _buffer_bytes(v) for k, v in args.items()}
    outs = {n: _alloc_output(e, layouts[n], alternate) for n, e in expected.items()}
    if group_size is not _KEEP:
        report.group_size = group_size
    try:
        with set_options(**({} if group_size is _KEEP else {"group_size": group_size})):
            launch(**args, **outs)
    except KernelCheckError:
        raise
    except Exception as e:  # noqa: BLE001 - every failure of the launch is a finding about the kernel
        report.fail("error", f"the launch raised {type(e).__name__}: {e}", cause=e)
    for k, v in args.items():
        if k in modifies or before[k] is None:
            continue
        after = _buffer_bytes(v)
        if not np.array_equal(before[k], after):
            report.fail("input modified", _modified(k, case[k], v))
    return outs, args


def _modified(name, old, new):
    a, b = _bits(old), _bits(new)
    changed = np.flatnonzero((a != b).reshape(-1))
    if changed.size:
        return (f"the kernel wrote into its input `{name}`: elements {format_ranges(changed, noun='')} changed (flat indices); "
                f"pass it in `modifies` if it is meant to be updated in place")
    return f"the kernel wrote into the buffer around its input `{name}` (outside the view it was given)"


def _bits(x):
    array, ty = as_array(x)
    if array.dtype == bool:
        return array.astype(np.uint8)
    return array.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[array.itemsize])


def _check_output(launch, case, expected, layouts, g, modifies, report, outs, name, atol, rtol):
    out = outs[name]
    array, ty = as_array(out)
    if array.base is not None and not ty.is_bool():
        outside = written_outside(out, array.base)
        if outside.size:
            report.fail("outside", f"the kernel wrote {outside.size} element(s) outside `{name}`, into the "
                                   f"padding of the buffer it is a view of (buffer offsets {format_ranges(outside, noun='')}); "
                                   f"check the strides used to build the output offsets")
    suspect = (array == False) if ty.is_bool() else unwritten(out)  # noqa: E712
    if suspect.any():
        # the element may hold the poison legitimately: it is unwritten if a re-run with the other fill keeps it
        again, _ = _run(launch, case, expected, layouts, g, True, modifies, report)
        other = as_array(again[name])[0]
        certain = suspect & ((other == True) if ty.is_bool() else unwritten(again[name], alternate=True))  # noqa
        if certain.any():
            why = unwritten_attribution(out, certain) if options().sanitize else None
            report.fail("unwritten", unwritten_message(certain, name, why))
    _compare(report, case, name, out, expected[name], atol, rtol)


def _compare(report, case, name, out, exp, atol, rtol):
    got = as_numpy(out)
    ty = triton_dtype(as_array(out)[1])
    want = as_numpy(exp)
    if want.shape != got.shape:
        want = np.broadcast_to(want, got.shape)
    if ty.is_floating():
        g64, w64 = got.astype(np.float64), np.asarray(want, np.float64)
        both_nan = np.isnan(g64) & np.isnan(w64)
        if atol == 0 and rtol == 0:
            ok = (g64 == w64) | both_nan
        else:
            ok = np.isclose(g64, w64, atol=atol, rtol=rtol, equal_nan=True)
    else:
        ok = got == np.asarray(want).astype(got.dtype)
    if ok.all():
        return
    bad = ~ok
    flat = np.flatnonzero(bad.reshape(-1))
    index = tuple(int(i) for i in np.unravel_index(int(flat[0]), bad.shape))
    g, w = got[index].item(), np.asarray(want)[index].item()
    shown_index = index[0] if len(index) == 1 else index
    tol = "" if atol == 0 and rtol == 0 else f" beyond atol={atol}, rtol={rtol}"
    text = (f"`{name}` differs from the reference{tol} at {flat.size} of {bad.size} elements ({format_ranges(flat, noun='')}); "
            f"first at index {shown_index}: got {g!r}, expected {w!r}")
    same_shape = [k for k, v in case.items() if as_array(v) is not None and as_array(v)[0].shape == bad.shape]
    if same_shape:
        text += " (" + ", ".join(f"{k}[{shown_index}] = {as_numpy(case[k])[index].item()!r}" for k in same_shape) + ")"
    report.fail("mismatch", text)

