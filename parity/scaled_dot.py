"""python3 -m parity.scaled_dot --out DIR: `tl.dot_scaled` on a CUDA GPU and on minitriton, compared.

One kernel (KERNEL) runs every case: the formats' tables (each e2m1/e4m3/e5m2 code, one per row, times a row
of e8m0 scales from 0 to 0xFF, against an identity of bf16 or fp16, on the lhs and on the rhs, fast_math off
and on; e2m1 under every e4m3 scale, nvfp4's groups of 16), e2m1 packed along M/N (k_pack=False), every
format pair on random data, `acc`, a 3-D product, fp8/bf16 typed operands, small shapes, and the mistakes
Triton refuses (the error text is kept). `--out DIR` (on the GPU machine) runs the cases on the GPU, saves
their outputs (gpu.npz, gpu.json), runs them on minitriton in a child process (`--minitriton DIR`) and writes
DIR/scaled-dot.md and .json: per case bit-exact (NaN equal to NaN) or the mismatches and the largest
difference. `--compare DIR` redoes the minitriton side and the comparison here from a saved gpu.npz.

Needs triton and torch with a CUDA device for `--out`; numpy and minitriton only for `--compare`.
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import pathlib
import subprocess
import sys

import numpy as np

KERNEL = '''
import triton
import triton.language as tl


@triton.jit
def _load(P, BATCH: tl.constexpr, R: tl.constexpr, C: tl.constexpr):
    BB: tl.constexpr = 1 if BATCH == 0 else BATCH
    x = tl.load(P + tl.arange(0, BB)[:, None, None] * (R * C) + tl.arange(0, R)[None, :, None] * C
                + tl.arange(0, C)[None, None, :])
    if BATCH == 0:
        x = tl.reshape(x, (R, C))
    return x


@triton.jit
def _typed(x, F: tl.constexpr, TYPED: tl.constexpr):
    if F == "bf16" or F == "fp16":
        x = x.to(tl.uint16, bitcast=True)
    if TYPED:
        if F == "e4m3" or F == "e2m1":
            x = x.to(tl.float8e4nv, bitcast=True)
        elif F == "e5m2":
            x = x.to(tl.float8e5, bitcast=True)
        elif F == "bf16":
            x = x.to(tl.bfloat16, bitcast=True)
        elif F == "fp16":
            x = x.to(tl.float16, bitcast=True)
    return x


@triton.jit
def scaled_dot_kernel(A, SA, B, SB, ACC, C, a_step, sa_step, b_step, sb_step, RA: tl.constexpr, CA: tl.constexpr,
                      RB: tl.constexpr, CB: tl.constexpr, M: tl.constexpr, N: tl.constexpr, KSA: tl.constexpr,
                      KSB: tl.constexpr, FA: tl.constexpr, FB: tl.constexpr, HAS_SA: tl.constexpr,
                      HAS_SB: tl.constexpr, HAS_ACC: tl.constexpr, FAST: tl.constexpr, PACK_A: tl.constexpr,
                      PACK_B: tl.constexpr, SCALE_F8: tl.constexpr, TYPED: tl.constexpr, BATCH: tl.constexpr,
                      OUT: tl.constexpr, ACC_F16: tl.constexpr):
    pid = tl.program_id(0)
    BB: tl.constexpr = 1 if BATCH == 0 else BATCH
    a = _typed(_load(A + pid * a_step, BATCH, RA, CA), FA, TYPED)
    b = _typed(_load(B + pid * b_step, BATCH, RB, CB), FB, TYPED)
    sa = None
    sb = None
    if HAS_SA:
        sa = _load(SA + pid * sa_step, BATCH, M, KSA)
        if SCALE_F8:
            sa = sa.to(tl.float8e4nv, bitcast=True)
    if HAS_SB:
        sb = _load(SB + pid * sb_step, BATCH, N, KSB)
        if SCALE_F8:
            sb = sb.to(tl.float8e4nv, bitcast=True)
    acc = None
    if HAS_ACC:
        acc = _load(ACC + pid * M * N * BB, BATCH, M, N)
        if ACC_F16:
            acc = acc.to(tl.float16)
    c = tl.dot_scaled(a, sa, FA, b, sb, FB, acc, fast_math=FAST, lhs_k_pack=PACK_A, rhs_k_pack=PACK_B,
                      out_dtype=OUT)
    offs = tl.arange(0, BB)[:, None, None] * (M * N) + tl.arange(0, M)[None, :, None] * N + tl.arange(0, N)[None, None, :]
    tl.store(C + pid * M * N * BB + tl.reshape(offs, c.shape), c)
'''

E8M0_ROW = [0, 1, 2, 20, 50, 100, 102, 103, 104, 110, 112, 113, 120, 126, 127, 128, 129, 135, 142, 143, 144, 150,
            200, 253, 254, 255]
ONE = {"bf16": 0x3F80, "fp16": 0x3C00}
BITS = {"e2m1": 4, "e4m3": 8, "e5m2": 8, "bf16": 16, "fp16": 16}


def _identity(fmt: str, n: int) -> np.ndarray:
    return (np.eye(n, dtype=np.int32) * ONE[fmt]).astype(np.int16)


def _pack(codes: np.ndarray, axis: int) -> np.ndarray:
    """e2m1 codes (one per uint8) two per byte along `axis`, the first in the low bits."""
    codes = np.moveaxis(codes, axis, -1)
    packed = (codes[..., 0::2] | (codes[..., 1::2] << 4)).astype(np.uint8)
    return np.ascontiguousarray(np.moveaxis(packed, -1, axis))


def _case(name, a, b, *, fa, fb, m, n, sa=None, sb=None, grid=1, steps=(0, 0, 0, 0), acc=None, fast=False,
          pack_a=True, pack_b=True, scale_f8=False, typed=False, batch=0, out="float32", acc_f16=False):
    ra, ca = a.shape[-2:]
    rb, cb = b.shape[-2:]
    return {"name": name, "arrays": {"A": a, "SA": sa, "B": b, "SB": sb, "ACC": acc},
            "grid": grid, "steps": list(steps), "out_shape": [grid * max(batch, 1) * m, n],
            "constexprs": dict(RA=ra, CA=ca, RB=rb, CB=cb, M=m, N=n, KSA=1 if sa is None else sa.shape[-1],
                               KSB=1 if sb is None else sb.shape[-1], FA=fa, FB=fb, HAS_SA=sa is not None,
                               HAS_SB=sb is not None, HAS_ACC=acc is not None, FAST=fast, PACK_A=pack_a,
                               PACK_B=pack_b, SCALE_F8=scale_f8, TYPED=typed, BATCH=batch, OUT=out,
                               ACC_F16=acc_f16)}


def _table(fmt, partner, side, fast, scales=E8M0_ROW, group=32, scale_f8=False):
    """Every code of `fmt` under every scale, one value per row (lhs) or column (rhs), times an identity."""
    codes = np.arange(16 if fmt == "e2m1" else 256, dtype=np.uint8)
    pairs = [(c, s) for s in scales for c in codes]
    per, k = 64, 32
    total = -(-len(pairs) // per) * per
    values = np.zeros((total, k), np.uint8)
    scale = np.full((total, k // group), 127, np.uint8)
    for r, (c, s) in enumerate(pairs):
        values[r, r % k] = c
        scale[r, :] = s
    grid = total // per
    if side == "rhs":
        values = values.reshape(grid, per, k).transpose(0, 2, 1)   # (grid, K, 64): one code per column
    if fmt == "e2m1":
        values = _pack(values, -1 if side == "lhs" else -2)
    elif BITS[fmt] == 16:
        values = values.astype(np.int16)
    eye = _identity(partner, k)
    name = f"table {fmt} {side} x {partner}{' fast_math' if fast else ''}" + (" e4m3-scales/16" if scale_f8 else "")
    s = scale.reshape(grid, per, -1)
    v = np.ascontiguousarray(values.reshape(grid, per, -1) if side == "lhs" else values)
    kw = dict(fast=fast, grid=grid, scale_f8=scale_f8)
    if side == "lhs":
        return _case(name, v, eye, fa=fmt, fb=partner, m=per, n=k, sa=s, steps=(v[0].size, s[0].size, 0, 0), **kw)
    return _case(name, eye, v, fa=partner, fb=fmt, m=k, n=per, sb=s, steps=(0, 0, v[0].size, s[0].size), **kw)


def _random_operand(rng, fmt, rows, cols, finite=True):
    if BITS[fmt] == 16:
        x = rng.standard_normal((rows, cols)).astype(np.float32)
        if fmt == "fp16":
            return x.astype(np.float16).view(np.int16)
        return (x.view(np.uint32) >> 16).astype(np.uint16).view(np.int16)
    x = rng.integers(0, 256, (rows, cols), dtype=np.uint8)
    if finite and fmt == "e5m2":
        x = np.where((x & 0x7C) == 0x7C, x & 0xB3, x).astype(np.uint8)
    if finite and fmt == "e4m3":
        x = np.where((x & 0x7F) == 0x7F, x & 0xF7, x).astype(np.uint8)
    return x


def _pair(rng, fa, fb, m=32, n=32, k=64, scaled=True, **kw):
    compute16 = "fp16" in (fa, fb)
    lo, hi = (124, 132) if compute16 else (110, 140)
    a = _random_operand(rng, fa, m, k // (2 if fa == "e2m1" else 1))
    b = _random_operand(rng, fb, k // (2 if fb == "e2m1" else 1), n)
    sa = rng.integers(lo, hi, (m, k // 32), dtype=np.uint8) if scaled and BITS[fa] < 16 else None
    sb = rng.integers(lo, hi, (n, k // 32), dtype=np.uint8) if scaled and BITS[fb] < 16 else None
    name = kw.pop("name", f"pair {fa} x {fb}{'' if scaled else ' unscaled'}")
    return _case(name, a, b, fa=fa, fb=fb, m=m, n=n, sa=sa, sb=sb, **kw)


def cases() -> list:
    """Every case, the same on both sides (fixed seeds)."""
    out = []
    for fmt in ("e2m1", "e4m3", "e5m2"):
        for partner in ("bf16", "fp16"):
            for side in ("lhs", "rhs"):
                out += [_table(fmt, partner, side, fast) for fast in (False, True)]
    out.append(_table("e2m1", "bf16", "lhs", False, scales=list(range(256)), group=16, scale_f8=True))
    out.append(_table("e2m1", "fp16", "lhs", False, scales=list(range(256)), group=16, scale_f8=True))
    rng = np.random.default_rng(20261207)
    formats = ("e2m1", "e4m3", "e5m2", "bf16", "fp16")
    out += [_pair(rng, fa, fb) for fa in formats for fb in formats]
    out += [_pair(rng, fa, fb, scaled=False) for fa, fb in (("e4m3", "e5m2"), ("e2m1", "bf16"), ("e5m2", "fp16"))]
    codes = rng.integers(0, 256, (32, 32), dtype=np.uint8)   # 64 x 32 or 32 x 64 e2m1 values
    sa = rng.integers(100, 150, (64, 1), dtype=np.uint8)
    out.append(_case("e2m1 lhs packed along M", codes, _identity("bf16", 32), fa="e2m1", fb="bf16", m=64, n=32,
                     sa=sa, pack_a=False))
    out.append(_case("e2m1 rhs packed along N", _identity("bf16", 32), codes.T.copy(), fa="bf16", fb="e2m1", m=32,
                     n=64, sb=sa, pack_b=False))
    a, b = _random_operand(rng, "e4m3", 32, 64), _random_operand(rng, "e4m3", 64, 32)
    s2 = rng.integers(115, 135, (2, 64, 2), dtype=np.uint8)
    out.append(_case("e2m1 x e2m1 both packed along M/N", a, b, fa="e2m1", fb="e2m1", m=64, n=64, sa=s2[0],
                     sb=s2[1], pack_a=False, pack_b=False))
    acc = rng.standard_normal((32, 32)).astype(np.float32)
    out.append(_pair(rng, "e4m3", "e2m1", name="acc e4m3 x e2m1", acc=acc))
    bad = _pair(rng, "e2m1", "e4m3", name="scale 0xFF and 0 e2m1 x e4m3")
    bad["arrays"]["SA"][3, 0], bad["arrays"]["SA"][5, 1], bad["arrays"]["SB"][7, 0] = 255, 0, 255
    out += [bad, {**bad, "name": "scale 0xFF and 0, fast_math", "constexprs": {**bad["constexprs"], "FAST": True}}]
    out.append(_pair(rng, "e4m3", "e5m2", name="nan/inf operands e4m3 x e5m2", fast=False))
    nan_case = out[-1]
    nan_case["arrays"]["A"][0, 5], nan_case["arrays"]["B"][9, 3], nan_case["arrays"]["B"][10, 4] = 0x7F, 0x7C, 0xFE
    a3 = np.stack([_random_operand(rng, "e4m3", 32, 64) for _ in range(2)])
    b3 = np.stack([_random_operand(rng, "e2m1", 32, 32) for _ in range(2)])
    s3 = rng.integers(115, 135, (2, 32, 2), dtype=np.uint8)
    out.append(_case("3-D e4m3 x e2m1", a3, b3, fa="e4m3", fb="e2m1", m=32, n=32, sa=s3, sb=s3.copy(), batch=2))
    out.append(_pair(rng, "e4m3", "bf16", name="typed fp8 x bf16 operands", typed=True))
    out.append(_pair(rng, "e5m2", "fp16", name="typed fp8 x fp16 operands", typed=True))
    out.append(_pair(rng, "e2m1", "e4m3", m=16, n=16, k=32, name="small 16x16x32"))
    out.append(_pair(rng, "bf16", "bf16", m=16, n=16, k=16, name="bf16 x bf16 K=16"))
    out.append(_pair(rng, "e4m3", "e4m3", name="fp8 scales as e4m3, groups of 32", scale_f8=True))
    # mistakes: kept as the error text Triton gives
    out.append(_pair(rng, "e4m3", "e4m3", name="error out_dtype=float16", out="float16"))
    out.append(_pair(rng, "e4m3", "e4m3", name="error fp16 acc", acc=acc, acc_f16=True))
    out.append(_pair(rng, "e4m3", "e2m1", name="error e4m3 k_pack=False", pack_a=False))
    out.append(_pair(rng, "e4m3", "bf16", name="error e2m1 given as fp8", typed=True))
    out[-1]["constexprs"]["FA"] = "e2m1"
    for fmt in ("fp32", "e3m2", "E4M3"):
        out.append(_pair(rng, "e4m3", "e4m3", name=f"error format {fmt}"))
        out[-1]["constexprs"]["FA"] = fmt
    wrong = _pair(rng, "e4m3", "e4m3", name="error scale groups of 8", k=64)
    wrong["arrays"]["SA"] = rng.integers(120, 130, (32, 8), dtype=np.uint8)
    wrong["constexprs"]["KSA"] = 8
    out.append(wrong)
    mixed = _pair(rng, "e2m1", "e2m1", name="error scale groups 16 vs 32", k=64)
    mixed["arrays"]["SA"] = rng.integers(120, 130, (32, 4), dtype=np.uint8)
    mixed["constexprs"]["KSA"] = 4
    out.append(mixed)
    # added after the run of record (the cases above keep its random data)
    for partner in ("bf16", "fp16"):   # no zero in a group: fast_math shows (x * inf, not NaN)
        ones = np.full((64, 32), ONE[partner], np.int32).astype(np.int16)
        pos = rng.integers(1, 8, (32, 32), dtype=np.uint8) | (rng.integers(1, 8, (32, 32), dtype=np.uint8) << 4)
        sa = rng.integers(120, 130, (32, 2), dtype=np.uint8)
        sa[3, 0], sa[7, 1] = 255, 255
        for fast in (False, True):
            out.append(_case(f"0xFF under positive e2m1 x {partner} ones{' fast_math' if fast else ''}", pos, ones,
                             fa="e2m1", fb=partner, m=32, n=32, sa=sa, fast=fast))
            pos8 = rng.integers(0x30, 0x40, (64, 32), dtype=np.uint8)
            sb = rng.integers(120, 130, (32, 2), dtype=np.uint8)
            sb[5, 1] = 255
            out.append(_case(f"0xFF under positive rhs e4m3 x {partner} ones{' fast_math' if fast else ''}",
                             ones.reshape(32, 64), pos8, fa=partner, fb="e4m3", m=32, n=32, sb=sb, fast=fast))
    a3 = np.stack([_random_operand(rng, "e4m3", 32, 64) for _ in range(2)])
    b3 = np.stack([_random_operand(rng, "bf16", 64, 32) for _ in range(2)])
    out.append(_case("3-D e4m3 x bf16 unscaled", a3, b3, fa="e4m3", fb="bf16", m=32, n=32, batch=2))
    return out


def _error(e: BaseException) -> str:
    lines = [s for s in str(e).strip().splitlines() if s.strip() and not s.startswith("  in kernel `")]
    return f"{type(e).__name__}: {lines[-1] if lines else ''}"[:300]


def run(backend: str) -> dict:
    """Every case on `backend`: "cuda" (real Triton on the GPU), "interpreter" (real Triton under
    TRITON_INTERPRET=1, set before triton is imported) or "minitriton": {name: output array or error text}."""
    if backend == "minitriton":
        import minitriton
        minitriton.install()
        from parity.oracle import load_minitriton_module
    import triton.language as tl
    if backend != "minitriton":
        import importlib.util
        import tempfile
        import torch
        path = pathlib.Path(tempfile.mkdtemp()) / "scaled_dot_kernels.py"
        path.write_text(KERNEL)
        spec = importlib.util.spec_from_file_location("scaled_dot_kernels", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)

        def put(x):
            x = None if x is None else torch.from_numpy(np.ascontiguousarray(x).copy())
            return x.cuda() if backend == "cuda" and x is not None else x
    else:
        module = load_minitriton_module(KERNEL)

        def put(x):
            return None if x is None else np.ascontiguousarray(x).copy()
    results = {}
    for case in cases():
        arrays = {k: put(v) for k, v in case["arrays"].items()}
        c = put(np.zeros(case["out_shape"], np.float32))
        consts = dict(case["constexprs"], OUT=getattr(tl, case["constexprs"]["OUT"]))
        try:
            module.scaled_dot_kernel[(case["grid"],)](arrays["A"], arrays["SA"], arrays["B"], arrays["SB"],
                                                      arrays["ACC"], c, *case["steps"], **consts)
            results[case["name"]] = c if backend == "minitriton" else c.cpu().numpy()
        except Exception as e:  # noqa: BLE001 - the refusal is the result
            results[case["name"]] = _error(e)
    return results


def _save(results: dict, folder: pathlib.Path, stem: str) -> None:
    np.savez_compressed(folder / f"{stem}.npz", **{k: v for k, v in results.items() if isinstance(v, np.ndarray)})
    (folder / f"{stem}.json").write_text(json.dumps({k: v for k, v in results.items() if isinstance(v, str)},
                                                    indent=1) + "\n")


def _load_saved(folder: pathlib.Path, stem: str) -> dict:
    npz = np.load(folder / f"{stem}.npz")
    return {**json.loads((folder / f"{stem}.json").read_text()), **{k: npz[k] for k in npz.files}}


def digest(out: np.ndarray) -> str:
    """SHA-256 of an output's fp32 bits, every NaN as 0x7FFFFFFF (payloads differ between NumPy and the GPU)."""
    bits = np.where(np.isnan(out), np.uint32(0x7FFFFFFF), np.ascontiguousarray(out, np.float32).view(np.uint32))
    return hashlib.sha256(bits.astype("<u4").tobytes()).hexdigest()


def compare(gpu: dict, mt: dict) -> list:
    """Per case: (name, verdict) where verdict says bit-exact, the mismatches, or both errors."""
    rows = []
    for name, g in gpu.items():
        m = mt.get(name, "missing")
        if isinstance(g, str) or isinstance(m, str):
            same = isinstance(g, str) and isinstance(m, str)
            rows.append((name, f"GPU: {g if isinstance(g, str) else 'ran'}; minitriton: "
                               f"{m if isinstance(m, str) else 'ran'}" + ("" if same else " **DIFFERS**")))
            continue
        gb, mb = g.view(np.uint32), m.view(np.uint32)
        both_nan = np.isnan(g) & np.isnan(m)
        bad = (gb != mb) & ~both_nan
        if not bad.any():
            rows.append((name, f"bit-exact ({g.size} values, {int(np.isnan(g).sum())} NaN)"))
            continue
        finite = bad & np.isfinite(g) & np.isfinite(m)
        with np.errstate(all="ignore"):
            rel = np.abs(g[finite].astype(np.float64) - m[finite]) / np.maximum(np.abs(g[finite]), 1e-30)
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        rows.append((name, f"{int(bad.sum())} of {g.size} differ ({int((bad & ~finite).sum())} non-finite); "
                           f"max relative difference {rel.max() if rel.size else 0:.3g}; first at {first}: GPU "
                           f"{g[first]!r} vs {m[first]!r}"))
    return rows


def report(folder: pathlib.Path, gpu: dict, mt: dict, meta: dict) -> None:
    rows = compare(gpu, mt)
    exact = sum(v.startswith("bit-exact") for _, v in rows)
    lines = [f"# tl.dot_scaled on {meta.get('gpu', '?')} (Triton {meta.get('triton', '?')}) vs minitriton "
             f"({meta.get('date', '?')})", "",
             "Written by `python3 -m parity.scaled_dot`. NaN equals NaN; everything else is compared bit for bit.",
             f"{exact} of {len(rows)} cases bit-exact." + (" minitriton's side rerun by `--compare` against the "
                                                            "GPU's saved outputs." if meta.get("compared") else ""),
             "", "| case | result |", "|---|---|"]
    lines += [f"| {name} | {verdict} |" for name, verdict in rows]
    (folder / "scaled-dot.md").write_text("\n".join(lines) + "\n")
    digests = {k: v if isinstance(v, str) else digest(v) for k, v in gpu.items()}
    (folder / "scaled-dot.json").write_text(json.dumps({"meta": meta, "cases": dict(rows), "gpu": digests},
                                                       indent=1) + "\n")


def main(argv=None):  # pragma: no cover - needs a CUDA GPU or a saved run
    parser = argparse.ArgumentParser(prog="python3 -m parity.scaled_dot", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=pathlib.Path, help="run on the GPU, then minitriton, and compare")
    parser.add_argument("--minitriton", type=pathlib.Path, help="(child) run on minitriton, save mt.npz")
    parser.add_argument("--compare", type=pathlib.Path, help="rerun minitriton here against a saved gpu.npz")
    args = parser.parse_args(argv)
    if args.minitriton:
        _save(run("minitriton"), args.minitriton, "mt")
        return
    folder = args.out or args.compare
    folder.mkdir(parents=True, exist_ok=True)
    if args.out:
        import torch
        import triton
        meta = {"gpu": torch.cuda.get_device_name(0), "triton": triton.__version__, "torch": torch.__version__,
                "date": datetime.date.today().isoformat()}
        _save(run("cuda"), folder, "gpu")
        (folder / "meta.json").write_text(json.dumps(meta) + "\n")
    meta = dict(json.loads((folder / "meta.json").read_text()), compared=bool(args.compare))
    env = dict(os.environ, PYTHONPATH=str(pathlib.Path(__file__).resolve().parent.parent))
    subprocess.run([sys.executable, "-m", "parity.scaled_dot", "--minitriton", str(folder)], env=env, check=True)
    report(folder, _load_saved(folder, "gpu"), _load_saved(folder, "mt"), meta)
    print((folder / "scaled-dot.md").read_text())


if __name__ == "__main__":
    main()
