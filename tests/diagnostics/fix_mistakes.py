"""Kernels with the mistakes people make (out of bounds, races, int32 overflow, strides, grids, dtypes), each
as the source of a file: the kernel and `check()`, which launches it and returns (the output, the NumPy
reference). tests/diagnostics/test_fix_catalogue.py runs each, applies the suggested edit and runs it again.

Each entry: (name, the record's kind, whether an automatic fix must exist, the source)."""
from __future__ import annotations

import numpy as np

from sandbox.exercises import COURSE

HEADER = '''import numpy as np
import minitriton as triton
import minitriton.language as tl

rng = np.random.default_rng(0)
'''

COPY = '''
def check():
    n = 100
    x = rng.random(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    copy_kernel[(triton.cdiv(n, 32),)](x, out, n, BLOCK=32)
    return out, x
'''

ROWSUM = '''
def check():
    n_rows, n_cols = 6, 20
    x = rng.random((n_rows, n_cols), dtype=np.float32)
    out = np.zeros(n_rows, np.float32)
    row_sum[(n_rows,)](x, out, n_cols, BLOCK=32)
    return out, x.sum(axis=1)
'''

TRANSPOSE = '''
def check():
    M, N = 40, 24
    x = rng.random((M, N), dtype=np.float32)
    out = np.zeros((N, M), np.float32)
    transpose_kernel[(triton.cdiv(M, 16), triton.cdiv(N, 16))](x, out, M, N, B=16)
    return out, x.T
'''

MATMUL_HEAD = '''
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
'''

MATMUL_TAIL = '''        acc = tl.dot(a, b, acc, input_precision="ieee")
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc, {c_mask})


def check():
    M, N, K = 40, 36, 40
    a = rng.random((M, K), dtype=np.float32)
    b = rng.random((K, N), dtype=np.float32)
    c = np.zeros((M, N), np.float32)
    matmul_kernel[(triton.cdiv(M, 16), triton.cdiv(N, 16))](a, b, c, M, N, K, a.strides[0] // 4, a.strides[1] // 4,
                                                          b.strides[0] // 4, b.strides[1] // 4, c.strides[0] // 4,
                                                          c.strides[1] // 4, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)
    return c, (a.astype(np.float64) @ b).astype(np.float32)
'''
A_MASKED = "        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)\n"
B_MASKED = "        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)\n"
C_MASK = "mask=(offs_m[:, None] < M) & (offs_n[None, :] < N)"


def matmul(a_load=A_MASKED, b_load=B_MASKED, c_mask=C_MASK):
    return MATMUL_HEAD + a_load + b_load + MATMUL_TAIL.format(c_mask=c_mask)


def copy(body):
    return f'''
@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
{body}
''' + COPY


def rowsum(body):
    return f'''
@triton.jit
def row_sum(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
{body}
''' + ROWSUM


def transpose(body):
    return f'''
@triton.jit
def transpose_kernel(x_ptr, out_ptr, M, N, B: tl.constexpr):
    offs_m = tl.program_id(0) * B + tl.arange(0, B)
    offs_n = tl.program_id(1) * B + tl.arange(0, B)
{body}
''' + TRANSPOSE


def rows_kernel(store, load="x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)"):
    """y = 2x row by row (a row kernel: rmsnorm's and softmax's layout)."""
    return f'''
@triton.jit
def scale_rows(x_ptr, y_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    {load}
    {store}


def check():
    x = rng.random((5, 20), dtype=np.float32)
    y = np.zeros((6, 20), np.float32)   # a spare row: a store's tail past row 4 stays in bounds
    scale_rows[(5,)](x, y, 20, 20, BLOCK=32)
    return y[:5], 2 * x
'''


BIG = "# needs a 2 GiB array"


def big_offsets(kernel, launch, want):
    """A 2 GiB int8 array (only the pages touched are allocated): offsets past 2**31 wrap in int32."""
    return kernel + f'''
{BIG}

def check():
    stride = 2 ** 20
    rows = 2049
    big = np.zeros(rows * stride, np.int8)
    x = big.reshape(rows, stride)[:, :16]
    x[-1] = np.arange(16)
    out = np.zeros((rows, 16), np.int8)
    {launch}
    return out[-1], {want}
'''


MISTAKES = [
    # ---- 1-D out of bounds
    ("unmasked_load", "out_of_bounds", True, copy(
        "    offs = pid * BLOCK + tl.arange(0, BLOCK)\n    x = tl.load(x_ptr + offs)\n"
        "    tl.store(out_ptr + offs, x, mask=offs < n)")),
    ("unmasked_store", "out_of_bounds", True, copy(
        "    offs = pid * BLOCK + tl.arange(0, BLOCK)\n    mask = offs < n\n    x = tl.load(x_ptr + offs, mask=mask)\n"
        "    tl.store(out_ptr + offs, x)")),
    ("unmasked_both_no_bound_in_kernel", "out_of_bounds", True, copy(
        "    offs = pid * BLOCK + tl.arange(0, BLOCK)\n    tl.store(out_ptr + offs, tl.load(x_ptr + offs))")),
    ("unmasked_inline_offsets", "out_of_bounds", True, copy(
        "    x = tl.load(x_ptr + pid * BLOCK + tl.arange(0, BLOCK), mask=pid * BLOCK + tl.arange(0, BLOCK) < n)\n"
        "    i = pid * BLOCK + tl.arange(0, BLOCK)\n    tl.store(out_ptr + i, x)")),
    ("mask_off_by_one", "out_of_bounds", True, copy(
        "    offs = pid * BLOCK + tl.arange(0, BLOCK)\n    mask = offs <= n\n    x = tl.load(x_ptr + offs, mask=mask)\n"
        "    tl.store(out_ptr + offs, x, mask=mask)")),
    ("mask_off_by_one_inline", "out_of_bounds", True, copy(
        "    offs = pid * BLOCK + tl.arange(0, BLOCK)\n    x = tl.load(x_ptr + offs, mask=offs<=n)\n"
        "    tl.store(out_ptr + offs, x, mask=offs < n)")),
    ("mask_bound_n_plus_one", "out_of_bounds", True, copy(
        "    offs = pid * BLOCK + tl.arange(0, BLOCK)\n    x = tl.load(x_ptr + offs, mask=offs < n + 1)\n"
        "    tl.store(out_ptr + offs, x, mask=offs < n)")),
    ("multiline_load_unmasked", "out_of_bounds", True, copy(
        "    offs = pid * BLOCK + tl.arange(0, BLOCK)\n    x = tl.load(\n        x_ptr + offs,\n    )\n"
        "    tl.store(out_ptr + offs, x, mask=offs < n)")),
    ("grid_one_too_many_unmasked", "out_of_bounds", True, '''
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + tl.load(y_ptr + offs))


def check():
    x, y = rng.random(128, dtype=np.float32), rng.random(128, dtype=np.float32)
    out = np.zeros(128, np.float32)
    add_kernel[(128 // 32 + 1,)](x, y, out, 128, BLOCK=32)
    return out, x + y
'''),
    ("row_load_unmasked", "out_of_bounds", True, rowsum(
        "    x = tl.load(x_ptr + row * n_cols + cols)\n    tl.store(out_ptr + row, tl.sum(tl.where(cols < n_cols, x, 0.0)))")),
    ("row_loop_unmasked", "out_of_bounds", True, '''
@triton.jit
def row_sum(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols)
        acc += tl.where(cols < n_cols, x, 0.0)
    tl.store(out_ptr + row, tl.sum(acc))
''' + ROWSUM.replace("BLOCK=32", "BLOCK=8")),
    ("atomic_add_unmasked", "out_of_bounds", True, '''
@triton.jit
def accumulate(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr + offs, x)


def check():
    x = rng.random(100, dtype=np.float32)
    out = np.ones(100, np.float32)
    accumulate[(4,)](x, out, 100, BLOCK=32)
    return out, x + 1
'''),
    ("mask_with_wrong_stride", "out_of_bounds", False, copy(
        "    offs = pid * BLOCK + tl.arange(0, BLOCK)\n    x = tl.load(x_ptr + offs * 2, mask=offs < n)\n"
        "    tl.store(out_ptr + offs, x, mask=offs < n)")),
    # ---- negative offsets and int32 overflow
    ("shift_negative_offset", "out_of_bounds", True, '''
@triton.jit
def shift_right(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    prev = offs - 1
    x = tl.load(x_ptr + prev, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, x, mask=offs < n)


def check():
    x = rng.random(100, dtype=np.float32)
    out = np.ones(100, np.float32)
    shift_right[(4,)](x, out, 100, BLOCK=32)
    return out, np.concatenate([[0], x[:-1]]).astype(np.float32)
'''),
    ("arange_minus_one_unmasked", "out_of_bounds", True, '''
@triton.jit
def diff_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    left = tl.load(x_ptr + tl.arange(0, BLOCK) + tl.program_id(0) * BLOCK - 1)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) - left, mask=offs < n)


def check():
    x = rng.random(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    diff_kernel[(2,)](x, out, 64, BLOCK=32)
    return out, (x - np.concatenate([[0], x[:-1]])).astype(np.float32)
'''),
    ("stencil_negative_name", "out_of_bounds", True, '''
@triton.jit
def blur(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    left = offs - 1
    right = offs + 1
    a = tl.load(x_ptr + left, mask=mask & (left < n), other=0.0)
    b = tl.load(x_ptr + right, mask=right < n, other=0.0)
    tl.store(out_ptr + offs, a + b, mask=mask)


def check():
    x = rng.random(50, dtype=np.float32)
    out = np.zeros(50, np.float32)
    blur[(2,)](x, out, 50, BLOCK=32)
    pad = np.concatenate([[0], x, [0]]).astype(np.float32)
    return out, pad[:-2] + pad[2:]
'''),
    ("int32_row_times_stride", "out_of_bounds", True, big_offsets('''
@triton.jit
def copy_rows(x_ptr, out_ptr, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * stride + cols)
    tl.store(out_ptr + row * BLOCK + cols, v)
''', "copy_rows[(rows,)](x, out, stride, BLOCK=16)", "np.arange(16, dtype=np.int8)")),
    ("int32_pid_times_power_of_two", "out_of_bounds", True, big_offsets('''
@triton.jit
def copy_rows(x_ptr, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * 2**20 + tl.arange(0, BLOCK)
    tl.store(out_ptr + pid * BLOCK + tl.arange(0, BLOCK), tl.load(x_ptr + offs))
''', "copy_rows[(rows,)](x, out, BLOCK=16)", "np.arange(16, dtype=np.int8)")),
    ("int32_product_in_assignment", "out_of_bounds", True, big_offsets('''
@triton.jit
def copy_rows(x_ptr, out_ptr, stride, BLOCK: tl.constexpr):
    start = tl.program_id(0) * stride
    tl.store(out_ptr + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK), tl.load(x_ptr + start + tl.arange(0, BLOCK)))
''', "copy_rows[(rows,)](x, out, stride, BLOCK=16)", "np.arange(16, dtype=np.int8)")),
    ("int16_offsets_dtype", "out_of_bounds", False, '''
@triton.jit
def copy16(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = (tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)).to(tl.int16)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def check():
    x = rng.random(40000, dtype=np.float32)
    out = np.zeros(40000, np.float32)
    copy16[(40000 // 1000,)](x, out, 40000, BLOCK=1024)
    return out, x
'''),
    # ---- 2-D tiles
    ("transpose_store_unmasked", "out_of_bounds", True, '''
@triton.jit
def transpose_kernel(src, dst, M, N, B: tl.constexpr):
    rows = tl.program_id(0) * B + tl.arange(0, B)
    cols = tl.program_id(1) * B + tl.arange(0, B)
    tile = tl.load(src + rows[:, None] * N + cols[None, :], mask=(rows[:, None] < M) & (cols[None, :] < N))
    tl.store(dst + cols[:, None] * M + rows[None, :], tl.trans(tile))
''' + TRANSPOSE),
    ("transpose_load_unmasked", "out_of_bounds", True, transpose(
        "    tile = tl.load(x_ptr + offs_m[:, None] * N + offs_n[None, :])\n"
        "    tl.store(out_ptr + offs_n[:, None] * M + offs_m[None, :], tl.trans(tile),\n"
        "             mask=(offs_n[:, None] < N) & (offs_m[None, :] < M))")),
    ("transpose_mask_one_axis", "out_of_bounds", True, transpose(
        "    mask = offs_m[:, None] < M\n    tile = tl.load(x_ptr + offs_m[:, None] * N + offs_n[None, :], mask=mask)\n"
        "    tl.store(out_ptr + offs_n[:, None] * M + offs_m[None, :], tl.trans(tile),\n"
        "             mask=(offs_n[:, None] < N) & (offs_m[None, :] < M))")),
    ("transpose_store_reuses_load_mask", "out_of_bounds", True, transpose(
        "    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)\n"
        "    tile = tl.load(x_ptr + offs_m[:, None] * N + offs_n[None, :], mask=mask)\n"
        "    tl.store(out_ptr + offs_n[:, None] * M + offs_m[None, :], tl.trans(tile), mask=mask)")),
    ("transpose_mask_wrong_axis", "out_of_bounds", True, '''
@triton.jit
def transpose_kernel(x_ptr, out_ptr, M, N, B: tl.constexpr):
    offs_m = tl.program_id(0) * B + tl.arange(0, B)
    offs_n = tl.program_id(1) * B + tl.arange(0, B)
    mask = (offs_m[None, :] < M) & (offs_n[None, :] < N)
    tile = tl.load(x_ptr + offs_m[:, None] * N + offs_n[None, :], mask=mask)
    tl.store(out_ptr + offs_n[:, None] * M + offs_m[None, :], tl.trans(tile),
             mask=(offs_n[:, None] < N) & (offs_m[None, :] < M))


def check():
    M, N = 40, 40
    x = rng.random((M, N), dtype=np.float32)
    out = np.zeros((N, M), np.float32)
    transpose_kernel[(triton.cdiv(M, 16), triton.cdiv(N, 16))](x, out, M, N, B=16)
    return out, x.T
'''),
    ("tile_copy_no_mask_no_bounds", "out_of_bounds", True, '''
@triton.jit
def tile_copy(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    tile = tl.load(x_ptr + rows[:, None] * N + cols[None, :])
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], tile)


def check():
    x = rng.random((20, 12), dtype=np.float32)
    out = np.zeros((20, 12), np.float32)
    tile_copy[(2, 2)](x, out, 20, 12, BM=16, BN=8)
    return out, x
'''),
    ("tile_mask_off_by_one", "out_of_bounds", True, '''
@triton.jit
def tile_copy(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rows[:, None] < M) & (cols[None, :] <= N)
    tile = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], tile, mask=mask)


def check():
    x = rng.random((20, 12), dtype=np.float32)
    out = np.zeros((20, 12), np.float32)
    tile_copy[(2, 2)](x, out, 20, 12, BM=16, BN=8)
    return out, x
'''),
    ("matmul_k_tail_b", "out_of_bounds", True, matmul(
        b_load="        b = tl.load(b_ptrs, mask=offs_n[None, :] < N, other=0.0)\n")),
    ("matmul_k_tail_a", "out_of_bounds", True, matmul(
        a_load="        a = tl.load(a_ptrs, mask=offs_m[:, None] < M, other=0.0)\n")),
    ("matmul_k_tail_both", "out_of_bounds", False, matmul(
        a_load="        a = tl.load(a_ptrs, mask=offs_m[:, None] < M, other=0.0)\n",
        b_load="        b = tl.load(b_ptrs, mask=offs_n[None, :] < N, other=0.0)\n")),
    ("matmul_c_store_unmasked", "out_of_bounds", True, matmul(c_mask="").replace("acc, )", "acc)")),
    ("matmul_same_stride", "out_of_bounds", True, matmul().replace(
        "offs_n[None, :] * stride_bn", "offs_n[None, :] * stride_bk")),
    # ---- pointers a line cannot fix
    ("gather_index_out_of_range", "out_of_bounds", False, '''
@triton.jit
def gather(x_ptr, idx_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    i = tl.load(idx_ptr + offs, mask=offs < n, other=0)
    tl.store(out_ptr + offs, tl.load(x_ptr + i), mask=offs < n)


def check():
    x = rng.random(10, dtype=np.float32)
    idx = np.array([3, 1, 12, 0], np.int32)
    out = np.zeros(4, np.float32)
    gather[(1,)](x, idx, out, 4, BLOCK=4)
    return out, x[np.minimum(idx, 9)]
'''),
    ("helper_builds_offsets", "out_of_bounds", False, '''
@triton.jit
def load_block(ptr, offs):
    return tl.load(ptr + offs)


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, load_block(x_ptr, offs), mask=offs < n)
''' + COPY),
    ("helper_returns_pointers", "out_of_bounds", False, '''
@triton.jit
def block_ptrs(ptr, BLOCK: tl.constexpr):
    return ptr + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    src = block_ptrs(x_ptr, BLOCK)
    tl.store(out_ptr + offs, tl.load(src), mask=offs < n)
''' + COPY),
    # ---- races (sanitize=True)
    ("race_stride_too_small", "race", True, '''
@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * 4 + tl.arange(0, 8)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def check():
    x = rng.random(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    copy_kernel[(8,)](x, out, 64, BLOCK=8)
    return out, 2 * x
'''),
    ("race_stride_half_block", "race", True, '''
@triton.jit
def double(x_ptr, out_ptr, n, BLOCK: tl.constexpr, HALF: tl.constexpr):
    offs = tl.program_id(0) * HALF + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x * 2, mask=offs < n)


def check():
    x = rng.random(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    double[(4,)](x, out, 64, BLOCK=16, HALF=8)
    return out, 2 * x
'''),
    ("race_unmasked_row_store", "race", True, rows_kernel(
        "tl.store(y_ptr + row * stride + cols, 2 * x)")),
    ("race_shared_offsets", "race", True, rows_kernel(
        "tl.store(y_ptr + cols, 2 * x, mask=mask)")),
    ("race_partial_sums_shared", "race", True, '''
@triton.jit
def partial(x_ptr, part_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(part_ptr + cols, x * x, mask=cols < n_cols)


def check():
    x = rng.random((4, 20), dtype=np.float32)
    part = np.zeros((4, 20), np.float32)
    partial[(4,)](x, part, 20, BLOCK=32)
    return part, x * x
'''),
    # the loads' share, row * n_cols, runs past `part` (one row per program): the program's own row is the fix
    ("race_partial_row_per_program", "race", True, '''
@triton.jit
def first_rows(x_ptr, part_ptr, n_cols, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    row = pid * 2
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(part_ptr + cols, x * 3, mask=cols < n_cols)


def check():
    x = rng.random((8, 20), dtype=np.float32)
    part = np.zeros((4, 20), np.float32)
    first_rows[(4,)](x, part, 20, BLOCK=32)
    return part, 3 * x[::2]
'''),
    ("race_forgot_program_id", "race", True, '''
@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)
''' + COPY),
    ("race_sum_to_one_element", "race", True, '''
@triton.jit
def total(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0)))


def check():
    x = rng.random(64, dtype=np.float32)
    out = np.zeros(1, np.float32)
    total[(2,)](x, out, 64, BLOCK=32)
    return out, x.sum(keepdims=True)
'''),
    ("race_transpose_row_stride", "race", True, '''
@triton.jit
def transpose_kernel(x_ptr, out_ptr, M, N, B: tl.constexpr):
    offs_m = tl.program_id(0) * B + tl.arange(0, B)
    offs_n = tl.program_id(1) * B + tl.arange(0, B)
    tile = tl.load(x_ptr + offs_m[:, None] * N + offs_n[None, :], mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
    tl.store(out_ptr + offs_n[:, None] * N + offs_m[None, :], tl.trans(tile),
             mask=(offs_n[:, None] < N) & (offs_m[None, :] < M))
''' + TRANSPOSE),
    ("race_tile_block_stride", "race", True, '''
@triton.jit
def tile_copy(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    tile = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask)
    tl.store(out_ptr + rows[:, None] * BN + cols[None, :], tile, mask=mask)


def check():
    x = rng.random((20, 12), dtype=np.float32)
    out = np.zeros((20, 12), np.float32)
    tile_copy[(2, 2)](x, out, 20, 12, BM=16, BN=8)
    return out, x
'''),
    ("race_grid_axis_ignored", "race", False, '''
@triton.jit
def fill(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + tl.program_id(1), mask=offs < n)


def check():
    x = rng.random(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    fill[(2, 2)](x, out, 64, BLOCK=32)
    return out, x
'''),
]

MISTAKES += [
    ("stencil_right_neighbour_past_mask", "out_of_bounds", True, '''
@triton.jit
def diff_next(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    nxt = tl.load(x_ptr + offs + 1, mask=mask, other=0.0)
    tl.store(out_ptr + offs, nxt, mask=mask)


def check():
    x = rng.random(50, dtype=np.float32)
    out = np.ones(50, np.float32)
    diff_next[(2,)](x, out, 50, BLOCK=32)
    return out, np.concatenate([x[1:], [0]]).astype(np.float32)
'''),
    ("race_program_id_wrong_axis", "race", True, '''
@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)
''' + COPY),
    ("race_block_start_without_block", "race", True, '''
@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)
''' + COPY),
]

MISTAKES += [
    ("histogram_index_from_masked_load", "out_of_bounds", True, '''
@triton.jit
def histogram(idx_ptr, cnt_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    i = tl.load(idx_ptr + offs, mask=offs < n, other=n)
    tl.atomic_add(cnt_ptr + i, 1)


def check():
    idx = np.array([2, 0, 2, 1, 4], np.int32)
    cnt = np.zeros(5, np.int32)
    histogram[(1,)](idx, cnt, 5, BLOCK=8)
    return cnt, np.bincount(idx, minlength=5).astype(np.int32)
'''),
]


# ---- the sandbox course's pinned mistakes (tests/sandbox/test_mistakes.py), made in its reference solutions
def course(exercise_id: str, subs, check: str) -> str:
    """An exercise's reference solution with the mistake's substitutions, importing minitriton, and `check`."""
    code = next(ex for ex in COURSE if ex.id == exercise_id).solution["en"]
    for old, new in subs:
        assert code.count(old) == 1, (exercise_id, old)
        code = code.replace(old, new)
    return code.replace("import triton\nimport triton.language as tl\n", "") + check


COPY_CHECK = '''

def check():
    x = rng.random(1000, dtype=np.float32)
    out = np.zeros(1000, np.float32)
    copy(x, out)
    return out, x
'''
TRANSPOSE_CHECK = '''

def check():
    M, N = 70, 45
    x = rng.random((M, N), dtype=np.float32)
    out = np.zeros((N, M), np.float32)
    transpose_kernel[(triton.cdiv(M, 32), triton.cdiv(N, 32))](x, out, M, N, BM=32, BN=32)
    return out, x.T
'''
MATMUL_CHECK = '''

def check():
    M, N, K = 40, 36, 40
    a, b = rng.random((M, K), dtype=np.float32), rng.random((K, N), dtype=np.float32)
    c = np.zeros((M, N), np.float32)
    matmul_kernel[(triton.cdiv(M, 16) * triton.cdiv(N, 16),)](
        a, b, c, M, N, K, a.strides[0] // 4, a.strides[1] // 4, b.strides[0] // 4, b.strides[1] // 4,
        c.strides[0] // 4, c.strides[1] // 4, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, GROUP_M=2)
    return c, (a.astype(np.float64) @ b).astype(np.float32)
'''
RMSNORM_CHECK = '''

def check():
    x, w = rng.random((5, 20), dtype=np.float32), rng.random(20, dtype=np.float32)
    y = np.zeros((6, 20), np.float32)   # a spare row: the unmasked tail of row 4 stays in bounds
    rmsnorm_kernel[(5,)](x, w, y, 20, 20, 1e-6, BLOCK_SIZE=32)
    return y[:5], x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-6) * w
'''
SOFTMAX_BWD_CHECK = '''

def check():
    z = rng.random((5, 20), dtype=np.float32)
    y = (np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)).astype(np.float32)
    dy = rng.random((5, 20), dtype=np.float32)
    dx = np.zeros((5, 20), np.float32)
    softmax_bwd_kernel[(5,)](y, dy, dx, 20, 20, BLOCK_SIZE=32)
    return dx, y * (dy - (dy * y).sum(axis=1, keepdims=True))
'''
RMSNORM_BWD_CHECK = '''

def check():
    n_rows, n_cols = 8, 20
    x, dy = rng.random((n_rows, n_cols), dtype=np.float32), rng.random((n_rows, n_cols), dtype=np.float32)
    w = rng.random(n_cols, dtype=np.float32)
    rstd = (1 / np.sqrt((x * x).mean(axis=1) + 1e-6)).astype(np.float32)
    dx, dw_partial = np.zeros_like(x), np.zeros((4, n_cols), np.float32)
    rmsnorm_bwd_kernel[(4,)](x, w, dy, rstd, dx, dw_partial, n_rows, n_cols, 2, BLOCK=32)
    return dw_partial, (dy * x * rstd[:, None]).reshape(4, 2, n_cols).sum(axis=1)
'''

MISTAKES += [
    ("course_forgotten_mask", "out_of_bounds", True, course(
        "copy", [("x = tl.load(x_ptr + offs, mask=mask)", "x = tl.load(x_ptr + offs)")], COPY_CHECK)),
    ("course_mask_off_by_one", "out_of_bounds", True, course(
        "copy", [("mask = offs < n ", "mask = offs <= n ")], COPY_CHECK)),
    ("course_mask_wrong_axis", "out_of_bounds", True, course(
        "transpose", [("mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)",
                       "mask = (offs_m[None, :] < M) & (offs_n[None, :] < N)")],
        TRANSPOSE_CHECK.replace("70, 45", "70, 70"))),
    ("course_mask_one_axis", "out_of_bounds", True, course(
        "transpose", [("mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)", "mask = offs_m[:, None] < M")],
        TRANSPOSE_CHECK)),
    ("course_matmul_same_stride", "out_of_bounds", True, course(
        "matmul", [("offs_n[None, :] * stride_bn", "offs_n[None, :] * stride_bk"),
                   ("acc = tl.dot(a, b, acc)", 'acc = tl.dot(a, b, acc, input_precision="ieee")')], MATMUL_CHECK)),
    ("course_race_unmasked_store", "race", True, course(
        "rmsnorm", [("y.to(y_ptr.dtype.element_ty), mask=mask)", "y.to(y_ptr.dtype.element_ty))")],
        RMSNORM_CHECK)),
    ("course_race_shared_offsets", "race", True, course(
        "softmax_bwd", [("tl.store(dx_ptr + row * stride + cols,", "tl.store(dx_ptr + cols,")],
        SOFTMAX_BWD_CHECK)),
    # dw_partial has one row per program: the share is the program's row, pid * n_cols
    ("course_dw_race", "race", True, course(
        "rmsnorm_bwd", [("dw_partial_ptr + pid * n_cols + cols", "dw_partial_ptr + cols")], RMSNORM_BWD_CHECK)),
    # a flat buffer of partials shows no rows: which share is each program's is not certain
    ("course_dw_race_flat_partials", "race", False, course(
        "rmsnorm_bwd", [("dw_partial_ptr + pid * n_cols + cols", "dw_partial_ptr + cols")],
        RMSNORM_BWD_CHECK.replace("np.zeros((4, n_cols), np.float32)", "np.zeros(4 * n_cols, np.float32)")
        .replace("return dw_partial,", "return dw_partial.reshape(4, n_cols),"))),
]

FLASH_CHECK = '''

def check():
    B, H, T, D = 1, 2, 40, 16
    q, k, v = (rng.random((B, H, T, D), dtype=np.float32) for _ in range(3))
    o, _ = flash_attention(q, k, v, causal=True, BLOCK_M=16, BLOCK_N=16)
    s = np.einsum("bhtd,bhsd->bhts", q, k).astype(np.float64) / math.sqrt(D)
    s = np.where(np.tril(np.ones((T, T), bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return o, ((p / p.sum(axis=-1, keepdims=True)) @ v).astype(np.float32)
'''

MISTAKES += [
    ("course_flash_kv_unmasked", "out_of_bounds", True, course(
        "flash_attention", [("offs_d[None, :], mask=kv_mask, other=0.0)\n        v = ",
                             "offs_d[None, :])\n        v = ")], FLASH_CHECK)),
]

BLOCK_PTR = '''
@triton.jit
def bp_copy(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    src = tl.make_block_ptr(x_ptr, shape=(M, N), strides=(N, 1), offsets=(pid_m * BM, 0), block_shape=(BM, BN),
                            order=(1, 0))
    dst = tl.make_block_ptr(out_ptr, shape=(M, N), strides=(N, 1), offsets=(pid_m * BM, 0), block_shape=(BM, BN),
                            order=(1, 0))
    {body}


def check():
    x = rng.random((20, 12), dtype=np.float32)
    out = np.zeros((20, 12), np.float32)
    bp_copy[(2,)](x, out, 20, 12, BM=16, BN=16)
    return out, x
'''

MISTAKES += [
    ("block_pointer_load_unchecked", "out_of_bounds", True, BLOCK_PTR.replace(
        "{body}", "tile = tl.load(src)\n    tl.store(dst, tile, boundary_check=(0, 1))")),
    ("block_pointer_store_one_axis_checked", "out_of_bounds", True, BLOCK_PTR.replace(
        "{body}", 'tile = tl.load(src, boundary_check=(0, 1), padding_option="zero")\n'
                  "    tl.store(dst, tile, boundary_check=(0,))")),
]

# 32-bit NumPy (wasm32, the page's Pyodide) cannot hold a 2 GiB array: those mistakes are left out there.
if np.dtype(np.intp).itemsize < 8:
    MISTAKES = [m for m in MISTAKES if BIG not in m[3]]
