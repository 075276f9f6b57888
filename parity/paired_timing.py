"""Call-by-call interleaved GPU timing: every callable is timed once per iteration, in a new random order
each iteration, each call after an L2 flush and a short GPU spin, between its own pair of CUDA events.

Rounds of `triton.testing.do_bench` (one callable for tens of milliseconds, then the next) let drift on that
scale (clocks, power, a busy host) land on one callable: two launches of the same kernel then read several
percent apart. Here the callables of one comparison alternate call by call, so drift slower than one iteration
lands on all of them alike and their ratio is steady; what is left of it is the per-call noise, which the
median over hundreds of calls averages out.

Between calls the GPU also spins for SPIN_CYCLES (~100 us): the L2 flush alone takes about as long as the
host's launch path of a Python wrapper (~50 us), and when the host falls behind, the GPU idles between a
call's start event and its kernel, and the reading measures the host. With the spin the host stays ahead and
a reading is GPU time only.

The order is shuffled, not rotated. A rotation keeps the cyclic order, so every callable always follows the
same one, and on an H200 that alone moved a ratio by 2%, either way, despite the flush and the spin. At
4096x4096, our softmax backward against the lesson's read 1.021-1.025 with the order (ours, torch, lesson,
y + dy) rotated, 0.979-0.980 with (lesson, torch, ours, y + dy) rotated, and 0.999-1.002 shuffled
(docs/findings.md §1).
"""
from __future__ import annotations

FLUSH_BYTES = 256 * 10 ** 6      # what do_bench writes between calls: more than any GPU's L2
SPIN_CYCLES = 200_000            # GPU clock cycles of busy-waiting between calls: ~100 us at 2 GHz


def paired_times(fns: dict, budget_ms: float = 400.0, min_iters: int = 20, max_iters: int = 2000,
                 warmup: int = 3, spin_cycles: int = SPIN_CYCLES, flush=None, order: str = "shuffle",
                 seed: int = 0) -> dict:
    """fns: name -> callable (launches GPU work on the current stream). Returns {name: [ms per call]}, one entry
    per iteration, all callables called once per iteration, the L2 cache flushed and the GPU kept busy for
    `spin_cycles` before each call. The iteration count fits `budget_ms` of measured time (within
    [min_iters, max_iters]). `flush`: a CUDA tensor of FLUSH_BYTES to zero between calls (allocated here when
    not given). `order`: "shuffle" (a new random order every iteration, from `seed`) or "rotate" (the
    order of `fns`, starting one further each iteration: every callable then always follows the same one)."""
    import torch
    names = list(fns)
    turn_order(names, 1, order, seed)          # checks `order` before anything runs
    if flush is None:
        flush = torch.empty(FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    for _ in range(warmup):
        for n in names:
            fns[n]()
    torch.cuda.synchronize()
    one = _one_pass_ms(fns, names)
    iters = int(max(min_iters, min(max_iters, budget_ms / max(one, 1e-3))))
    starts = {n: [torch.cuda.Event(enable_timing=True) for _ in range(iters)] for n in names}
    ends = {n: [torch.cuda.Event(enable_timing=True) for _ in range(iters)] for n in names}
    for i, turn in enumerate(turn_order(names, iters, order, seed)):
        for n in turn:
            flush.zero_()
            if spin_cycles:
                torch.cuda._sleep(spin_cycles)
            starts[n][i].record()
            fns[n]()
            ends[n][i].record()
    torch.cuda.synchronize()
    return {n: [s.elapsed_time(e) for s, e in zip(starts[n], ends[n])] for n in names}


def turn_order(names: list, turns: int, order: str = "shuffle", seed: int = 0) -> list:
    """The order of the calls in each of `turns` turns: every name once per turn. "shuffle": a random
    permutation per turn (seeded, so a run can be repeated); "rotate": `names` starting one further each turn,
    which keeps every name behind the same one."""
    import random
    if order == "rotate":
        return [names[i % len(names):] + names[:i % len(names)] for i in range(turns)]
    if order != "shuffle":
        raise ValueError(f"order must be 'shuffle' or 'rotate', got {order!r}")
    rng = random.Random(seed)
    return [rng.sample(names, len(names)) for _ in range(turns)]


def _one_pass_ms(fns, names):
    import torch
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for n in names:
        fns[n]()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end)


def iq_mean(samples: list) -> float:
    """The interquartile mean: the mean of the middle half of `samples` once sorted (a quarter dropped at each
    end; all of them when there are fewer than four).

    CUDA events count in steps of 32 ns on an H200, so every call's time is a whole number of steps and a
    median lands on a step (or between two): one step is 0.4% of an 8 us call and 0.1% of a 30 us one, which
    is as large as the ties the benchmark has to read. Averaging the middle half resolves differences smaller
    than a step, and still drops the outliers (a late launch, a preempted flush) that a plain mean would keep.
    """
    s = sorted(samples)
    if not s:
        raise ValueError("iq_mean of no samples")
    k = len(s) // 4
    middle = s[k:len(s) - k]
    return sum(middle) / len(middle)


def slice_iq_means(samples: list, slices: int = 5) -> list:
    """The interquartile means of `slices` consecutive, equal slices of samples (the tail that does not fill a
    slice is left out); [iq_mean(samples)] when there are fewer than four samples per slice."""
    size = len(samples) // slices
    if size < 4:
        return [iq_mean(samples)] if samples else []
    return [iq_mean(samples[b * size:(b + 1) * size]) for b in range(slices)]


def ratio_spread(theirs: list, ours: list) -> list | None:
    """[min, max] of theirs / ours over matching slices (each side's `slice_iq_means`): how steady a ratio
    stayed during the run (> 1: ours is faster). None unless both sides have the same two or more slices."""
    if len(theirs) != len(ours) or len(ours) < 2:
        return None
    each = [t / o for t, o in zip(theirs, ours)]
    return [min(each), max(each)]
