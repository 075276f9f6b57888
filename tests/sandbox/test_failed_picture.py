"""A failing Run or Check lists its failed launch, counted up to the failure, and the "memory" op draws it:
every program up to the failing one, which is marked, with its lanes outside the tensor where they point.

References: the copy exercise's reference solution (the same launches without the error) for the counters
of the programs before the failing one; NumPy's offsets of the failing program for its lanes.
"""
from __future__ import annotations

import numpy as np

from sandbox import bridge
from sandbox.exercises import get

COPY = get("copy").solution["en"]
NO_LOAD_MASK = COPY.replace("x = tl.load(x_ptr + offs, mask=mask)", "x = tl.load(x_ptr + offs)")
N, BLOCK = 98_432, 1024


def runs(offsets) -> list:
    """Sorted offsets as [start, length, ...] runs, as the picture sends them."""
    out = []
    for o in offsets:
        if out and out[-2] + out[-1] == o:
            out[-1] += 1
        else:
            out += [int(o), 1]
    return out


def tail_launch(result: dict) -> tuple[int, dict]:
    index = next(i for i, L in enumerate(result["launches"]) if L.get("test") == "tail")
    return index, result["launches"][index]


def test_check_lists_the_failed_launch_counted_up_to_the_failure():
    assert NO_LOAD_MASK != COPY
    failed = bridge.dispatch("check", {"exercise": "copy", "code": NO_LOAD_MASK, "lang": "en"})
    reference = bridge.dispatch("check", {"exercise": "copy", "code": COPY, "lang": "en"})
    assert reference["passed"] and not failed["passed"]
    _, launch = tail_launch(failed)
    _, good = tail_launch(reference)
    assert launch["error"] == {"type": "OutOfBoundsError", "kind": "out_of_bounds", "program": [96],
                               "line": NO_LOAD_MASK.splitlines().index("    x = tl.load(x_ptr + offs)") + 1}
    for name, tensor in launch["tensors"].items():
        for field, per in tensor["per_program"].items():
            assert per[:96] == good["tensors"][name]["per_program"][field][:96], (name, field)
            assert per[96] == 0, (name, field)       # its first access raised: nothing of it counts
    assert launch["tensors"]["x_ptr"]["totals"]["loaded_bytes"] == 96 * BLOCK * 4


def test_run_lists_the_failed_launch():
    r = bridge.dispatch("run", {"exercise": "copy", "code": NO_LOAD_MASK, "lang": "ru"})
    assert r["error"]["type"] == "OutOfBoundsError"
    assert [L["error"]["program"] for L in r["launches"]] == [r["error"]["program"][:1]]


def test_memory_draws_the_failed_launch_up_to_the_failing_program():
    check = bridge.dispatch("check", {"exercise": "copy", "code": NO_LOAD_MASK, "lang": "en"})
    index, launch = tail_launch(check)
    r = bridge.dispatch("memory", {"exercise": "copy", "code": NO_LOAD_MASK, "source": "check", "launch": index,
                                   "grid": launch["grid"], "lang": "en"})
    assert "error" not in r, r.get("error")
    assert r["launch"]["error"] == launch["error"]
    assert [p["linear"] for p in r["programs"]] == list(range(97))
    assert [p["linear"] for p in r["programs"] if p.get("failed")] == [96]
    offs = 96 * BLOCK + np.arange(BLOCK)
    failing = r["programs"][96]
    assert failing["tensors"]["x_ptr"]["outside"] == runs(offs[offs >= N]) == [N, 896]
    assert failing["tensors"]["x_ptr"]["loaded"] == runs(offs[offs < N])
    assert failing["steps"] == [{"line": launch["error"]["line"], "kind": "load", "tensor": "x_ptr",
                                 "offsets": runs(offs[offs < N]), "masked": [], "outside": [N, 896]}]
    assert all("outside" not in p["tensors"]["x_ptr"] for p in r["programs"][:96])
    assert r["programs"][95]["tensors"]["out_ptr"]["stored"] == [95 * BLOCK, BLOCK]
