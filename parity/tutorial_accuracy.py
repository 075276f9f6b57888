"""How far a tutorial's outputs are from a float64 reference, next to how far the tutorial's own reference is.

Tutorials 03 (matmul) and 05 (layer norm) check their kernels with `torch.allclose` against torch on the
script's device. On the CPU that reference is itself approximate (torch's CPU fp16 kernels round
differently from a GPU), so a check can fail while the kernel is the more accurate of the two. Each probe
here regenerates the inputs of the tutorial's check the way the script does (seeded), calls the script's
own functions (from the namespace the script ran in) and torch's, and measures both against the same
computation in float64: per output, the largest and the mean absolute difference, the elements that are not
the float64 result correctly rounded, and the tutorial's verdict (its `allclose`). Tutorial 08 checks its
grouped GEMMs against torch the same way, so it has a probe too. Used by parity/tutorial_run.py
(`--accuracy`); needs torch.
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


def _compare(name: str, ours, theirs, ref64, atol: float) -> dict:
    """One output: ours and the tutorial's reference, each against float64 (`no_further`), and the tutorial's
    allclose."""
    import torch
    mine, ref = _distance(ours, ref64), _distance(theirs, ref64)
    return {"output": name, "kernel": mine, "tutorial_reference": ref, "no_further": no_further(mine, ref),
            "tutorial_check_passes": bool(torch.allclose(ours, theirs, atol=atol, rtol=0))}


def matmul(namespace: dict) -> dict:
    """03: `matmul(a, b)` on the fp16 inputs of its unit test (torch.manual_seed(0), 512 x 512), and on the
    float8_e5m2 inputs of its fp8 test where the script ran that one."""
    import torch
    device = namespace["DEVICE"]
    torch.manual_seed(0)
    a = torch.randn((512, 512), dtype=torch.float16, device=device)
    b = torch.randn((512, 512), dtype=torch.float16, device=device)
    rows = [_compare("fp16 matmul", namespace["matmul"](a, b), torch.matmul(a, b), a.double() @ b.double(), 1e-2)]
    if "TORCH_HAS_FP8" in namespace and namespace.get("TORCH_HAS_FP8") and namespace["is_cuda"]():
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
    rows = [_compare(f"{name} {n}x{n}x{n}", out, ref, ex, 1e-2)
            for name, outs in runs for n, out, ref, ex in zip(sizes, outs, references, exact)]
    return {"seed": 0, "outputs": rows}


PROBES = {"03-matrix-multiplication": matmul, "05-layer-norm": layer_norm, "08-grouped-gemm": grouped_gemm}
