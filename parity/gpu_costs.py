"""GPU times of the cost model's points and the device constants the model needs, on one CUDA GPU.

    python3 -m parity.gpu_costs --out DIR [--budget-s 540] [--only matmul,flash_fwd]

Real Triton and torch, in this process. Each point of `parity.cost_points` is launched once (compiled),
then timed with `triton.testing.do_bench` as the lesson times its kernels (the L2 flushed before every call;
the 20th, 50th and 80th percentiles of the per-call times). When every point is timed and budget is left, all
are timed again (a further pass), so a point's spread between passes is recorded too. Device constants: the
card (nvidia-smi: name, clocks, power; torch: SMs, L2, memory), the bandwidth of a large device-to-device copy,
a hot re-read sweep over working sets around the L2's size (bytes re-read per second: L2 while the set fits;
each pass shifted by one program so that no SM re-reads its own L1),
the time of an empty kernel (GPU and host), and the throughput of large torch matmuls per dtype (fp16, bf16,
tf32, fp32). Writes DIR/gpu-costs-<date>.json (`report.results_json`); `parity.cost_features` joins it with
minitriton's counters into the run of record. `--smoke` runs the code paths on the CPU with Triton's
interpreter at toy sizes (its times mean nothing).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import subprocess
import sys
import time

from parity.cost_points import launcher, points
from parity.report import command, results_json

QUANTILES = [0.2, 0.5, 0.8]
SMI_FIELDS = ("name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.draw,power.limit,"
              "temperature.gpu,persistence_mode,clocks_throttle_reasons.active")
L2_SWEEP_MB = [2, 4, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 96, 128, 192, 256, 512, 1024]
SMOKE = False


def smi() -> dict:
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={SMI_FIELDS}", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30).stdout.strip().splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError) as e:
        return {"error": str(e)}
    return dict(zip(SMI_FIELDS.split(","), (v.strip() for v in out.split(","))))


def _bench(fn):
    """(q20, median, q80) milliseconds of fn per call: do_bench, or a wall-clock timer in a smoke run."""
    if SMOKE:
        fn()
        t0 = time.perf_counter()
        fn()
        ms = (time.perf_counter() - t0) * 1e3
        return [ms, ms, ms]
    import triton
    return [float(v) for v in triton.testing.do_bench(fn, quantiles=QUANTILES)]


def _hot_ms(fn, calls):
    """Milliseconds per call of `calls` back-to-back calls between two CUDA events, no flush (after 3 warm)."""
    import torch
    for _ in range(3):
        fn()
    if SMOKE:
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        return (time.perf_counter() - t0) * 1e3 / calls
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(calls):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / calls


def device_info() -> dict:
    import torch

    import triton
    info = {"triton": triton.__version__, "torch": torch.__version__, "cuda": torch.version.cuda,
            "python": sys.version.split()[0], "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
            "smi": smi()}
    if not SMOKE:
        p = torch.cuda.get_device_properties(0)
        info.update(name=p.name, sms=p.multi_processor_count, capability=f"{p.major}.{p.minor}",
                    memory_bytes=p.total_memory, l2_bytes=getattr(p, "L2_cache_size", None),
                    smem_per_block_optin=getattr(p, "shared_memory_per_block_optin", None),
                    smem_per_sm=getattr(p, "shared_memory_per_multiprocessor", None),
                    regs_per_sm=getattr(p, "regs_per_multiprocessor", None),
                    max_threads_per_sm=getattr(p, "max_threads_per_multi_processor", None))
    return info


def constants(dev, sms) -> dict:
    """The device constants: copy bandwidth, the hot re-read sweep, an empty launch, dot throughput."""
    import torch

    import triton
    import triton.language as tl

    @triton.jit
    def empty_kernel(x_ptr):
        pass

    @triton.jit
    def reread_kernel(x_ptr, out_ptr, n_chunks, passes, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        step = tl.num_programs(0)
        acc = tl.zeros([BLOCK], tl.float32)
        for r in range(passes):
            # each pass shifts the chunks by one program, so that a chunk comes from another SM's reads
            # (the L2), not from this SM's L1
            for c in range(pid, n_chunks, step):
                acc += tl.load(x_ptr + ((c + r) % n_chunks) * BLOCK + tl.arange(0, BLOCK))
        tl.store(out_ptr + pid * BLOCK + tl.arange(0, BLOCK), acc)

    out = {}
    scale = 1024 if SMOKE else 1
    x = torch.empty(4, device=dev)
    out["empty_kernel_gpu_ms"] = _bench(lambda: empty_kernel[(1,)](x))
    # back-to-back launches from Python: bound by the host's launch path, not the GPU
    out["empty_kernel_hot_ms"] = _hot_ms(lambda: empty_kernel[(1,)](x), 200 if SMOKE else 2000)
    n_host = 20 if SMOKE else 2000
    t0 = time.perf_counter()
    for _ in range(n_host):
        empty_kernel[(1,)](x)
    out["empty_kernel_host_us"] = (time.perf_counter() - t0) * 1e6 / n_host
    torch.cuda.synchronize() if not SMOKE else None

    copies = {}
    for mb in (64, 256, 1024):
        n = mb * 2 ** 20 // 4 // scale
        src, dst = torch.randn(n, device=dev), torch.empty(n, device=dev)
        ms = _bench(lambda: dst.copy_(src))
        copies[str(mb)] = {"ms": ms, "gbs": 2 * n * 4 / (ms[1] * 1e-3) / 1e9}
    out["copy"] = copies

    block, programs = 2048, sms * 4
    sweep = {}
    for mb in L2_SWEEP_MB:
        n_chunks = max(programs, mb * 2 ** 20 // 4 // block // scale)
        buf = torch.randn(n_chunks * block, device=dev)
        dst = torch.empty(programs * block, device=dev)
        passes = max(1, (2 if SMOKE else 4096) // mb)        # ~4 GiB re-read per call
        ms = _hot_ms(lambda: reread_kernel[(programs,)](buf, dst, n_chunks, passes, BLOCK=block, num_warps=8), 5)
        sweep[str(mb)] = {"passes": passes, "ms": ms, "gbs": passes * buf.numel() * 4 / (ms * 1e-3) / 1e9}
    out["reread"] = {"block": block, "programs": programs, "by_mb": sweep}

    dots = {}
    n = 256 if SMOKE else 8192
    for name, dtype, tf32 in (("fp16", torch.float16, False), ("bf16", torch.bfloat16, False),
                              ("tf32", torch.float32, True), ("fp32", torch.float32, False)):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        a, b = torch.randn(n, n, device=dev, dtype=dtype), torch.randn(n, n, device=dev, dtype=dtype)
        ms = _bench(lambda: a @ b)
        dots[name] = {"n": n, "ms": ms, "tflops": 2 * n ** 3 / (ms[1] * 1e-3) / 1e12}
    torch.backends.cuda.matmul.allow_tf32 = False
    out["torch_matmul"] = dots
    return out


def time_points(selected, budget_s, t_start, log) -> tuple:
    """({id: {"ms": [[q20, median, q80] per pass], "compile_s"}}, {id: error}, [ids not reached]): a first pass
    over every point, then further passes over those that ran while the budget lasts (at most 5 in all)."""
    import torch
    times, errors, reached = {}, {}, set()
    for n_pass in range(5):
        for p in selected:
            pid = p["id"]
            if pid in errors or (n_pass and pid not in times):
                continue
            if time.monotonic() - t_start > budget_s:
                return times, errors, [q["id"] for q in selected if q["id"] not in reached]
            reached.add(pid)
            try:
                t0 = time.perf_counter()
                fn = launcher(p, "torch", "cpu" if SMOKE else "cuda")
                fn()
                if not SMOKE:
                    torch.cuda.synchronize()
                compile_s = time.perf_counter() - t0
                ms = _bench(fn)
                entry = times.setdefault(pid, {"ms": [], "compile_s": round(compile_s, 3)})
                entry["ms"].append([round(v, 6) for v in ms])
                log(f"{pid}: {ms[1]:.4f} ms")
            except Exception as e:  # noqa: BLE001 - a point that fails is recorded, the rest go on
                errors[pid] = f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"
                log(f"{pid}: ERROR {errors[pid]}")
            fn = None
            if not SMOKE and torch.cuda.memory_reserved() > 8 * 2 ** 30:
                torch.cuda.empty_cache()
    return times, errors, []


def main(argv=None) -> int:
    global SMOKE
    ap = argparse.ArgumentParser(prog="python3 -m parity.gpu_costs", description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget-s", type=float, default=540.0, help="stop timing points after this many seconds")
    ap.add_argument("--only", default="", help="kernel families, comma-separated (default: all)")
    ap.add_argument("--no-constants", action="store_true")
    ap.add_argument("--smoke", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    t_start = time.monotonic()
    SMOKE = a.smoke
    if SMOKE:
        os.environ["TRITON_INTERPRET"] = "1"
    import torch
    if not SMOKE and not torch.cuda.is_available():
        print("no CUDA device", file=sys.stderr)
        return 3
    dev = "cpu" if SMOKE else "cuda"

    def log(msg):
        print(f"[{time.monotonic() - t_start:6.1f}s] {msg}", flush=True)

    info = device_info()
    log(json.dumps(info))
    selected = [p for p in points() if not a.only or p["kernel"] in a.only.split(",")]
    if SMOKE:
        selected = _smoke_points(selected)
    consts = {} if a.no_constants else constants(dev, info.get("sms", 4))
    log(json.dumps(consts))
    times, errors, not_reached = time_points(selected, a.budget_s, t_start, log)
    info["smi_end"] = smi()
    result = {"kind": "gpu-costs", "smoke": SMOKE, "command": command(
        "python3 -m parity.gpu_costs", argv if argv is not None else sys.argv[1:]), "device": info, "constants": consts,
        "method": "triton.testing.do_bench(fn, quantiles=[0.2, 0.5, 0.8]) per point and pass; L2 flushed per call",
        "points": {p["id"]: p for p in selected}, "times": times, "errors": errors, "not_reached": not_reached,
        "seconds": round(time.monotonic() - t_start, 1)}
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"gpu-costs-{datetime.date.today().isoformat()}.json"
    path.write_text(results_json(result))
    log(f"{len(times)} points timed, {len(errors)} errors, {len(not_reached)} not reached -> {path}")
    return 1 if errors else 0


def _smoke_points(selected):
    """Toy sizes of every kind of point, for the CPU interpreter."""
    out, seen = [], set()
    for p in selected:
        small = {"vector_add": {"n": 4096}, "softmax": {"rows": 8, "cols": min(p["shape"].get("cols", 0), 4096)},
                 "rmsnorm": {"rows": 8}, "matmul": {"M": 128, "N": 128, "K": 64},
                 "flash_fwd": {"B": 1, "H": 1, "T": 128}}
        key = (p["kernel"], p["fn"], p["dtype"])
        if key in seen:
            continue
        seen.add(key)
        q = dict(p, shape=dict(p["shape"], **small[p["kernel"]]))
        s, c = q["shape"], q["config"]
        if q["kernel"] in ("softmax", "rmsnorm"):
            q["grid"] = [-(-s["rows"] // c.get("BLOCK_M", 1)), 1, 1]
        elif q["kernel"] == "matmul":
            q["grid"] = [-(-s["M"] // c["BLOCK_M"]) * -(-s["N"] // c["BLOCK_N"]), 1, 1]
        elif q["kernel"] == "flash_fwd":
            q["grid"] = [-(-s["T"] // c["BLOCK_M"]), 1, 1]
        else:
            q["grid"] = [-(-s["n"] // c["BLOCK_SIZE"]), 1, 1]
        out.append(q)
    return out


if __name__ == "__main__":
    sys.exit(main())
