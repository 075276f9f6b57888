"""Program-grid helpers of `tl`: `tl.swizzle2d`, the re-ordering of tile indices that matmul kernels use to
walk the output in groups of rows (better L2 reuse on a GPU).

Triton's `swizzle2d` (triton/language/standard.py) is a `@jit` function built from integer ops; it is built
here from the same ops, so the types, the C division of tensors and the errors are Triton's.
"""
from __future__ import annotations

from minitriton.semantics.elementwise import add, floordiv, minimum, mod, mul, sub
from minitriton.values.registry import builtin


@builtin
def swizzle2d(i, j, size_i, size_j, size_g):
    """`tl.swizzle2d(i, j, size_i, size_j, size_g)`: the indices (i, j) of a row-major `size_i` x `size_j`
    matrix mapped to a column-major order inside each group of `size_g` rows (the last group may be smaller):

        [[ 0,  1,  2,  3],            [[0,  2,  4,  6],
         [ 4,  5,  6,  7],    -->      [1,  3,  5,  7],
         [ 8,  9, 10, 11],             [8, 10, 12, 14],
         [12, 13, 14, 15]]  (size_g=2) [9, 11, 13, 15]]
    """
    linear = add(mul(i, size_j), j)
    group_elements = mul(size_g, size_j)
    first_row = mul(floordiv(linear, group_elements), size_g)
    rows_in_group = minimum(sub(size_i, first_row), size_g)
    inside = mod(linear, group_elements)
    return add(first_row, mod(inside, rows_in_group)), floordiv(inside, rows_in_group)
