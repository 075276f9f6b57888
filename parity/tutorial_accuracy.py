"""How far a tutorial's outputs are from a float64 reference, next to how far the tutorial's own reference is.

Tutorials 03 (matmul) and 05 (layer norm) check their kernels with `torch.allclose` against torch on the
script's device. On the CPU that reference is itself approximate (torch's CPU fp16 kernels round
differently from a GPU), so a check can fail while the kernel is the more accurate of the two. Each probe
here regenerates the inputs of the tutorial's check the way the script does (seeded), calls the script's
own functions (from the namespace the script ran in) and torch's, and measures both against the same
computation in float64: per output, the largest and the mean absolute difference, the elements that are not
the float64 result correctly rounded, and the tutorial's verdict (its `allclose`). Tutorials 08, 09 and 11
check their kernels against torch the same way and 10 against its float32 reference (rounded here to the
kernel's fp16 output, so both are measured on the same grid), so they have probes too; 07 checks nothing and
prints torch's difference from libdevice's asin, which its probe measures against float64 (no verdict).
Used by parity/tutorial_run.py (`--accuracy`); needs torch.
"""
from __future__ import annotations


def _distance(out, ref64) -> dict:
    """Largest and mean absolute difference from the float64 result, and how many elements differ from the
    float64 result rounded to the output's type (0: every element correctly rounded)."""
    diff = (out.double() - ref64).abs()
    return {"max_abs": float(diff.max()), "mean_abs": float(diff.mean()),
            "misrounded": int((out != ref64.to(out.dtype)).sum()), "elements": out.numel()}


def no_further(mine: dict, ref: dict) -> bool:
    """Whether an output (its `_distance`) is no further from float64 than the reference's: not more
    misrounded elements beyond chance, and a mean difference no larger (to one part in a million: outputs
    rounded to the same grid have means equal to about that).

    Which elements of a sum near a rounding boundary land on its other side depends on the order of the
    additions: two fp32 accumulations of the same products misround a similar, random number of elements
    (tutorial 08's 256 x 256 product: 3 to 8 here, 7 for torch, depending on the BLAS threads), so a count
    within three standard deviations of the two counts' difference (3 sqrt(a + b)) is no further. The largest
    difference of a rounded output is about half an ulp of its largest values for both (which few elements
    round the other way decides its last digits), so it is reported but not compared."""
    chance = 3 * (mine["misrounded"] + ref["misrounded"]) ** 0.5
    return mine["misrounded"] <= ref["misrounded"] + chance and mine["mean_abs"] <= ref["mean_abs"] * (1 + 1e-6)


def _error(e: BaseException) -> str:
    """An exception as a row's text: its type, its message's first line and its last lines (the cause)."""
    text = str(e)
    return f"{type(e).__name__}: {text if len(text) <= 600 else text[:150] + ' ... ' + text[-400:]}"


def _compare(name: str, ours, theirs, ref64, atol, rtol: float = 0.0, check=True) -> dict:
    """One output: ours and the tutorial's reference, each against float64 (`no_further`), and the tutorial's
    verdict: its allclose(ours, theirs, atol, rtol), `check` where it compares otherwise, None (no check) when
    atol is None."""
    import torch
    mine, ref = _distance(ours, ref64), _distance(theirs, ref64)
    passes = None if atol is None else bool(check and torch.allclose(ours, theirs, atol=atol, rtol=rtol))
    return {"output": name, "kernel": mine, "tutorial_reference": ref, "no_further": no_further(mine, ref),
            "tutorial_check_passes": passes}


def matmul(namespace: dict) -> dict:
    """03: `matmul(a, b)` on the fp16 inputs of its unit test (torch.manual_seed(0), 512 x 512, uniform in
    [-0.5, 0.5)), and on the float8_e5m2 inputs of its fp8 test (normal) where the script ran that one."""
    import torch
    device = namespace["DEVICE"]
    torch.manual_seed(0)
    a = torch.rand((512, 512), dtype=torch.float16, device=device) - 0.5
    b = torch.rand((512, 512), dtype=torch.float16, device=device) - 0.5
    rows = [_compare("fp16 matmul", namespace["matmul"](a, b), torch.matmul(a, b), a.double() @ b.double(), 1e-2)]
    if "TORCH_HAS_FP8" in namespace and namespace.get("TORCH_HAS_FP8") and namespace["is_cuda"]():
        torch.manual_seed(0)
        a = torch.randn((512, 512), dtype=torch.float16, device=device)
        b = torch.randn((512, 512), dtype=torch.float16, device=device)
        a8, b8 = a.to(torch.float8_e5m2), b.T.to(torch.float8_e5m2)
        try:
            ours = namespace["matmul"](a8, b8)
        except Exception as e:  # noqa: BLE001 - reported
            rows.append({"output": "fp8 (e5m2) matmul", "error": f"{type(e).__name__}: {str(e)[:500]}"})
        else:
            rows.append(_compare("fp8 (e5m2) matmul", ours, torch.matmul(a8.to(torch.float16), b8.to(torch.float16)),
                                 a8.double() @ b8.double(), 0.125))
    return {"seed": 0, "shape": [512, 512, 512], "outputs": rows}


def layer_norm(namespace: dict) -> dict:
    """05: `layer_norm` forward and backward on the inputs of `test_layer_norm(1151, 8192, torch.float16)`
    (the script draws them unseeded; here torch.manual_seed(0))."""
    import torch
    M, N, dtype, eps, device = 1151, 8192, torch.float16, 1e-5, namespace["DEVICE"]
    torch.manual_seed(0)
    w_shape = (N,)
    weight = torch.rand(w_shape, dtype=dtype, device=device, requires_grad=True)
    bias = torch.rand(w_shape, dtype=dtype, device=device, requires_grad=True)
    x = -2.3 + 0.5 * torch.randn((M, N), dtype=dtype, device=device)
    dy = .1 * torch.randn_like(x)
    x.requires_grad_(True)
    leaves = (x, weight, bias)

    def forward_backward(fn, *args):
        y = fn(*args)
        y.backward(dy, retain_graph=True)
        grads = [t.grad.clone() for t in leaves]
        for t in leaves:
            t.grad = None
        return [y.detach()] + grads

    ours = forward_backward(namespace["layer_norm"], x, w_shape, weight, bias, eps)
    theirs = forward_backward(lambda *a: torch.nn.functional.layer_norm(*a).to(dtype), x, w_shape, weight, bias, eps)
    x64, w64, b64 = (t.detach().double().requires_grad_(True) for t in leaves)
    y64 = torch.nn.functional.layer_norm(x64, w_shape, w64, b64, eps)
    y64.backward(dy.double())
    exact = [y64.detach(), x64.grad, w64.grad, b64.grad]
    names = ["y", "dx", "dw", "db"]
    return {"seed": 0, "shape": [M, N], "dtype": "float16",
            "outputs": [_compare(n, o, t, e, 1e-2) for n, o, t, e in zip(names, ours, theirs, exact)]}


def grouped_gemm(namespace: dict) -> dict:
    """08: `group_gemm_fn` (and `group_gemm_tma_fn` where the script's `supports_tma()`) on inputs shaped like
    its check's (four fp16 products of 1024, 512, 256 and 128; the script draws them unseeded, here
    torch.manual_seed(0))."""
    import torch
    device = namespace["DEVICE"]
    torch.manual_seed(0)
    sizes = [1024, 512, 256, 128]
    group_a = [torch.rand((n, n), dtype=torch.float16, device=device) for n in sizes]
    group_b = [torch.rand((n, n), dtype=torch.float16, device=device) for n in sizes]
    references = [torch.matmul(a, b) for a, b in zip(group_a, group_b)]
    exact = [a.double() @ b.double() for a, b in zip(group_a, group_b)]
    runs = [("group_gemm_fn", namespace["group_gemm_fn"](group_a, group_b))]
    if namespace["supports_tma"]():
        runs.append(("group_gemm_tma_fn", namespace["group_gemm_tma_fn"](group_a, [b.T.contiguous() for b in group_b])))
    rows = [_compare(f"{name} {n}x{n}x{n}", out, ref, ex, 1e-2, 1e-2)
            for name, outs in runs for n, out, ref, ex in zip(sizes, outs, references, exact)]
    return {"seed": 0, "outputs": rows}


def extern_asin(namespace: dict) -> dict:
    """07: `asin_kernel` (libdevice.asin) on its input (torch.manual_seed(0), 98432 uniform values), next to
    torch.asin; the tutorial prints their difference and checks nothing."""
    import torch
    torch.manual_seed(0)
    x = torch.rand(98432, device=namespace["DEVICE"])
    out = torch.zeros_like(x)
    namespace["asin_kernel"][(x.numel() + 1023) // 1024,](x, out, x.numel(), BLOCK_SIZE=1024)
    return {"seed": 0, "outputs": [_compare("asin", out, torch.asin(x), torch.asin(x.double()), None)]}


def persistent_matmul(namespace: dict) -> dict:
    """09: each kernel `validate` runs on this device (naive, persistent, TMA, TMA persistent, descriptor
    persistent with and without warp specialization), on its inputs at 512 x 512 x 512 (torch.manual_seed(0),
    fp16 normal; b transposed as the script does), against `torch_matmul`; its check is allclose(atol=1).
    The runs are profiled as its benchmark profiles them (`proton.start(..., hook="triton")`), and the script's
    own `show_profile` prints the tree: kept as "profile"."""
    import contextlib
    import io
    import torch
    ns = namespace
    torch.manual_seed(0)
    a = torch.randn((512, 512), dtype=torch.float16)
    b = torch.randn((512, 512), dtype=torch.float16).T.contiguous()
    reference, exact = ns["torch_matmul"](a, b), a.double() @ b.double().T
    runs = [("naive", lambda: ns["matmul"](a, b.T)), ("persistent", lambda: ns["matmul_persistent"](a, b.T))]
    for ws in ([False, True] if ns["HAS_WARP_SPECIALIZE"] else [False]):
        if ns["HAS_HOST_TENSOR_DESC"] and not (ns["is_hopper"]() and ws):
            runs += [(f"tma ws={ws}", lambda ws=ws: ns["matmul_tma"](a, b, ws)),
                     (f"tma persistent ws={ws}", lambda ws=ws: ns["matmul_tma_persistent"](a, b, ws))]
        if ns["HAS_TENSOR_DESC"]:
            runs.append((f"descriptor persistent ws={ws}", lambda ws=ws: ns["matmul_descriptor_persistent"](a, b, ws)))
    rows = []
    ns["proton"].start("probe-profile", hook="triton")
    for name, run in runs:
        try:
            rows.append(_compare(name, run(), reference, exact, 1.0))
        except Exception as e:  # noqa: BLE001 - reported
            rows.append({"output": name, "error": _error(e)})
    ns["proton"].finalize()
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown):
        ns["show_profile"]("fp16", "probe-profile")
    return {"seed": 0, "shape": [512, 512, 512], "outputs": rows, "profile": shown.getvalue()}


def _dequantized(t, scales, vec: int, rows: int, k: int, fp4: bool):
    """An operand of tutorial 10 in float64: its fp4 codes (two per byte, the first low) or fp8 values, times
    its scales unpacked from the 5-D layout (e8m0 bytes, or e4m3 for nvfp4) repeated over `vec` elements."""
    import torch
    if fp4:
        codes = torch.stack((t & 0xF, t >> 4), dim=-1).reshape(rows, k).long()
        table = torch.tensor([0, .5, 1, 1.5, 2, 3, 4, 6], dtype=torch.float64)
        values = torch.where(codes >= 8, -table[codes % 8], table[codes % 8])
    else:
        values = t.double()
    s = scales.reshape(rows // 128, k // vec // 4, 32, 4, 4).permute(0, 3, 2, 1, 4).reshape(rows, k // vec)
    s = 2.0 ** (s.double() - 127) if s.dtype == torch.uint8 else s.double()
    return values * s.repeat_interleave(vec, dim=1)


def block_scaled(namespace: dict) -> dict:
    """10: `block_scaled_matmul` for each format (nvfp4, mxfp4, mxfp8, mixed) on `initialize_block_scaled`'s
    inputs at 128 x 256 x 256 (torch.manual_seed(42)), against its float32 reference (rounded to the fp16
    output) and its check assert_close(atol=1e-3, rtol=1e-3). On an sm90 device the script itself stops at
    `supports_block_scaling()`; this runs the kernel anyway, as the GPU would run it on sm100."""
    import torch
    rows, (M, N, K) = [], (128, 256, 256)
    for fmt in ("nvfp4", "mxfp4", "mxfp8", "mixed"):
        torch.manual_seed(42)
        try:
            r = namespace["initialize_block_scaled"](M, N, K, fmt, compute_reference=True)
            a_desc, a_scale_desc, b_desc, b_scale_desc, rep_m, rep_n, rep_k, configs, reference, a, b = r[:11]
            vec, fp4 = configs["VEC_SIZE"], (configs["ELEM_PER_BYTE_A"] == 2, configs["ELEM_PER_BYTE_B"] == 2)
            exact = (_dequantized(a, a_scale_desc.base, vec, M, K, fp4[0])
                     @ _dequantized(b, b_scale_desc.base, vec, N, K, fp4[1]).T)
            out = namespace["block_scaled_matmul"](a_desc, a_scale_desc, b_desc, b_scale_desc, torch.float16, M, N, K,
                                                   rep_m, rep_n, rep_k, configs)
        except Exception as e:  # noqa: BLE001 - reported (tl.dot_scaled may be missing)
            rows.append({"output": fmt, "error": _error(e)})
            continue
        check = torch.allclose(out.float(), reference, atol=1e-3, rtol=1e-3)
        row = _compare(fmt, out, reference.half(), exact, 1e-3, 1e-3, check=check)
        row["float32_reference_from_float64"] = float((reference.double() - exact).abs().max())
        rows.append(row)
    return {"seed": 42, "shape": [M, N, K], "outputs": rows}


def pdl_add(namespace: dict) -> dict:
    """11: `add(x, y)` (launched with launch_pdl=True, gdc_wait and gdc_launch_dependents) on `validate(1024)`'s
    inputs (here torch.manual_seed(0)), against x + y; its check is allclose(atol=1)."""
    import torch
    torch.manual_seed(0)
    x, y = torch.rand(1024), torch.rand(1024)
    return {"seed": 0, "outputs": [_compare("add", namespace["add"](x, y), x + y, x.double() + y.double(), 1.0)]}


PROBES = {"03-matrix-multiplication": matmul, "05-layer-norm": layer_norm, "07-extern-functions": extern_asin,
          "08-grouped-gemm": grouped_gemm, "09-persistent-matmul": persistent_matmul, "10-block-scaled-matmul":
          block_scaled, "11-programmatic-dependent-launch": pdl_add}
