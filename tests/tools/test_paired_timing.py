"""The GPU benchmark's timing arithmetic (parity/paired_timing.py) and how a row treats a callable that raises.
The timing loop itself needs CUDA; it runs in `python -m parity --target cuda`."""
from __future__ import annotations

import pathlib
import statistics
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))

from parity.paired_timing import iq_mean, ratio_spread, slice_iq_means, turn_order  # noqa: E402


def test_iq_mean_averages_the_middle_half_and_drops_outliers():
    assert iq_mean([1, 2, 3, 4, 5, 6, 7, 1000]) == 4.5          # drops 1, 2 and 7, 1000: mean of 3..6
    assert iq_mean([3.0, 1.0, 2.0]) == 2.0                       # fewer than four: all of them
    with pytest.raises(ValueError, match="no samples"):
        iq_mean([])


def test_iq_mean_resolves_a_difference_smaller_than_the_timer_step():
    # Event times come in 32 ns steps: two kernels a few ns apart give calls that land on the same two steps
    # in slightly different proportions. Their medians are equal; the interquartile means tell them apart.
    step, base = 0.000032, 0.029792
    faster = [base] * 55 + [base + step] * 45
    slower = [base] * 52 + [base + step] * 48
    assert statistics.median(faster) == statistics.median(slower) == base
    assert iq_mean(faster) < iq_mean(slower)
    assert 1.0 < iq_mean(slower) / iq_mean(faster) < 1 + step / base


def test_slice_iq_means_cut_consecutive_equal_slices_and_drop_the_tail():
    samples = [5, 1, 3, 9, 10, 30, 20, 40, 7, 9, 8, 6, 100]    # 13 samples: 3 slices of 4, 1 left over
    assert slice_iq_means(samples, 3) == [4.0, 25.0, 7.5]


def test_slice_iq_means_with_too_few_samples_fall_back_to_one():
    assert slice_iq_means([4.0, 1.0, 2.0, 3.0, 5.0], 2) == [3.0]
    assert slice_iq_means([], 5) == []


def test_the_spread_of_a_ratio_shows_a_drifting_slice():
    ours = [1.0] * 40
    theirs = [1.2] * 32 + [0.9] * 8                             # the last slice: theirs got faster
    assert iq_mean(theirs) / iq_mean(ours) == pytest.approx(1.2)
    lo, hi = ratio_spread(slice_iq_means(theirs, 5), slice_iq_means(ours, 5))
    assert lo == pytest.approx(0.9) and hi == pytest.approx(1.2)


def test_equal_timings_give_no_spread():
    ts = [0.5, 0.7, 0.6, 0.55, 0.65] * 20
    assert ratio_spread(slice_iq_means(ts, 5), slice_iq_means(list(ts), 5)) == [1.0, 1.0]


def test_a_spread_needs_two_matching_slices():
    assert ratio_spread([2.0], [1.0]) is None                   # one slice: too few calls to slice
    assert ratio_spread([2.0, 2.0], [1.0, 1.0, 1.0]) is None
    assert ratio_spread([2.0, 3.0], [1.0, 1.0]) == [2.0, 3.0]


def _predecessors(turns):
    """name -> the set of names that ran just before it, across turn boundaries too."""
    flat = [n for turn in turns for n in turn]
    seen = {}
    for before, n in zip(flat, flat[1:]):
        seen.setdefault(n, set()).add(before)
    return seen


def test_shuffled_turns_call_each_once_and_vary_who_runs_before_whom():
    names = ["ours", "torch", "lesson", "y + dy"]
    turns = turn_order(names, 200, "shuffle", seed=3)
    assert all(sorted(t) == sorted(names) for t in turns)
    assert len({tuple(t) for t in turns}) > 12                  # many of the 24 orders
    assert all(len(p - {n}) == 3 for n, p in _predecessors(turns).items())   # every other name ran before it
    assert turn_order(names, 50, "shuffle", seed=3) == turns[:50]      # seeded: a run can be repeated


def test_rotated_turns_keep_every_name_behind_the_same_one():
    names = ["ours", "torch", "lesson", "y + dy"]
    turns = turn_order(names, 8, "rotate")
    assert turns[1] == ["torch", "lesson", "y + dy", "ours"]
    within = {}
    for t in turns:
        for before, n in zip(t, t[1:]):
            within.setdefault(n, set()).add(before)
    assert within["ours"] == {"y + dy"} and within["lesson"] == {"torch"}


def test_an_unknown_order_is_refused():
    with pytest.raises(ValueError, match="order must be 'shuffle' or 'rotate'"):
        turn_order(["a"], 1, "random")


def test_a_callable_that_raises_is_recorded_and_left_out_of_the_row(monkeypatch):
    pytest.importorskip("torch")
    from parity import gpubench
    monkeypatch.setattr(gpubench, "SMOKE", True)                 # times on the CPU, one call each
    bench = gpubench.Bench(60, compile_ok=False)
    calls = []

    def broken():
        raise ValueError("no such kernel\nsecond line")

    medians, per_slice, _ = bench.times({"triton": ("ours", lambda: calls.append(1)), "lesson": ("theirs", broken)})
    assert medians["lesson"] is None and medians["triton"] >= 0
    assert bench.errors == ["theirs: ValueError: no such kernel"]
    assert len(calls) == 3                                       # the warm-up call, then the smoke timing's two
    bench.row("softmax fwd", "4x4 bf16", "GB/s", 1000, {"triton": ("ours", lambda: None),
                                                        "lesson": ("theirs", broken)})
    row = bench.rows[-1]
    assert row["ms"]["lesson"] is None and row["ratios"]["vs lesson"] is None
