"""Tensor descriptors (TMA): host `TensorDescriptor` arguments and `tl.make_tensor_descriptor` in the kernel.

A descriptor load returns the block at the given element offsets with every element outside [0, shape) read
as 0; a store writes only the elements inside the shape. Each case is checked against a NumPy reference, with
the default grouping, one program per pass and traffic recording on (all must agree to the bit); every error
Triton 3.6 raises is asserted with its wording; and in-kernel descriptors are compared with Triton's own
interpreter (a subprocess, see tests/helpers/oracle.py).
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitriton
import minitriton as triton
import minitriton.language as tl
from minitriton import Buffer
from minitriton.semantics import dtypes as T
from minitriton.tools.tensor_descriptor import TensorDescriptor


@pytest.fixture(autouse=True)
def _clean_options(monkeypatch):
    monkeypatch.delenv("MINITRITON_GROUP_SIZE", raising=False)
    yield  # tests/conftest.py restores the options


# ------------------------------------------------------------------------------------------------ kernels

@triton.jit
def load2d_host(desc, out, om, on, sm, sn, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    x = desc.load([om + pid * sm, on + pid * sn])
    rows, cols = tl.arange(0, BM), tl.arange(0, BN)
    tl.store(out + pid * BM * BN + rows[:, None] * BN + cols[None, :], x)


@triton.jit
def load2d_dev(base, out, M, N, ld, om, on, sm, sn, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    desc = tl.make_tensor_descriptor(base, shape=[M, N], strides=[ld, 1], block_shape=[BM, BN])
    x = tl.load_tensor_descriptor(desc, [om + pid * sm, on + pid * sn])
    rows, cols = tl.arange(0, BM), tl.arange(0, BN)
    tl.store(out + pid * BM * BN + rows[:, None] * BN + cols[None, :], x)


@triton.jit
def store2d_host(desc, src, om, on, BM: tl.constexpr, BN: tl.constexpr):
    # program p stores block p of src at (om + p * BM, on): the programs' blocks never overlap
    pid = tl.program_id(0)
    rows, cols = tl.arange(0, BM), tl.arange(0, BN)
    x = tl.load(src + pid * BM * BN + rows[:, None] * BN + cols[None, :])
    desc.store([om + pid * BM, on], x)


@triton.jit
def store2d_dev(base, src, M, N, ld, om, on, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    desc = tl.make_tensor_descriptor(base, [M, N], [ld, 1], [BM, BN])
    rows, cols = tl.arange(0, BM), tl.arange(0, BN)
    x = tl.load(src + pid * BM * BN + rows[:, None] * BN + cols[None, :])
    tl.store_tensor_descriptor(desc, [om + pid * BM, on], x)


@triton.jit
def load3d_host(desc, out, o0, o1, o2, s0, B0: tl.constexpr, B1: tl.constexpr, B2: tl.constexpr):
    pid = tl.program_id(0)
    x = desc.load([o0 + pid * s0, o1, o2])
    i = tl.arange(0, B0)[:, None, None]
    j = tl.arange(0, B1)[None, :, None]
    k = tl.arange(0, B2)[None, None, :]
    tl.store(out + pid * B0 * B1 * B2 + i * (B1 * B2) + j * B2 + k, x)


@triton.jit
def copy3d_dev(src, dst, D0, D1, D2, st0, st1, o0, o1, o2, B0: tl.constexpr, B1: tl.constexpr, B2: tl.constexpr):
    pid = tl.program_id(0)
    a = tl.make_tensor_descriptor(src, [D0, D1, D2], [st0, st1, 1], [B0, B1, B2])
    b = tl.make_tensor_descriptor(dst, [D0, D1, D2], [st0, st1, 1], [B0, B1, B2])
    b.store([o0 + pid * B0, o1, o2], a.load([o0 + pid * B0, o1, o2]))


# ------------------------------------------------------------------------------------------------ references

def ref_block(data, shape, offsets, block, fill=0):
    """The block of `block` at `offsets` of data[:shape...], elements outside the shape read as `fill`."""
    grids = np.meshgrid(*[np.arange(b) + o for b, o in zip(block, offsets)], indexing="ij")
    ok = np.ones(block, bool)
    for g, s in zip(grids, shape):
        ok &= (g >= 0) & (g < s)
    safe = tuple(np.where(ok, g, 0) for g in grids)
    return np.where(ok, data[safe], np.asarray(fill, data.dtype))


def ref_store(target, shape, offsets, block_values):
    """`target` after writing `block_values` at `offsets` where inside `shape`."""
    out = target.copy()
    block = block_values.shape
    grids = np.meshgrid(*[np.arange(b) + o for b, o in zip(block, offsets)], indexing="ij")
    ok = np.ones(block, bool)
    for g, s in zip(grids, shape):
        ok &= (g >= 0) & (g < s)
    out[tuple(g[ok] for g in grids)] = block_values[ok]
    return out


ELEM = {"fp32": (np.float32, T.float32), "fp16": (np.float16, T.float16), "bf16": (np.uint16, T.bfloat16)}


def make_input(kind, shape, seed=0):
    """(argument, storage array): values distinct enough that a wrong element shows."""
    rng = np.random.default_rng(seed)
    values = rng.integers(-500, 500, size=shape).astype(np.float32) / 4
    if kind == "bf16":
        buf = Buffer.from_float(values, T.bfloat16)
        return buf, buf.array
    arr = values.astype(ELEM[kind][0])
    return arr, arr


def make_output(kind, shape, fill=-7.0):
    if kind == "bf16":
        buf = Buffer.from_float(np.full(shape, fill, np.float32), T.bfloat16)
        return buf, buf.array
    arr = np.full(shape, fill, ELEM[kind][0])
    return arr, arr


def align(kind):
    """Elements per 16 bytes: the step of a descriptor's innermost offset."""
    return 16 // np.dtype(ELEM[kind][0]).itemsize


def padded_width(n, kind):
    """A row length >= n whose byte size is a multiple of 16 (TMA's stride rule)."""
    per = 16 // np.dtype(ELEM[kind][0]).itemsize
    return -(-n // per) * per


def runs(launch):
    """The launch's outputs grouped (default), one program per pass and under record(): must be identical."""
    results = []
    for group_size, record in ((None, False), (1, False), (None, True)):
        minitriton.set_options(group_size=group_size)
        if record:
            with minitriton.record():
                results.append(launch())
        else:
            results.append(launch())
    minitriton.set_options(group_size=None)
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])
    return results[0]


# ------------------------------------------------------------------------------------------------ loads

@settings(max_examples=40, deadline=None)
@given(kind=st.sampled_from(["fp32", "fp16", "bf16"]), M=st.integers(1, 40), N=st.integers(1, 40),
       BM=st.sampled_from([1, 2, 8, 16]), BN=st.sampled_from([8, 16, 32]), n_prog=st.integers(1, 5),
       om=st.integers(-40, 45), on=st.integers(-40, 45), sm=st.integers(-9, 13), sn=st.integers(-9, 13),
       host=st.booleans())
def test_load_2d_matches_numpy(kind, M, N, BM, BN, n_prog, om, on, sm, sn, host):
    on, sn = on * align(kind), sn * align(kind)   # column offsets at 16-byte multiples, as the TMA unit needs
    ld = padded_width(N, kind)
    arg, storage = make_input(kind, (M, ld))

    def launch():
        out, out_storage = make_output(kind, (n_prog, BM, BN))
        if host:
            desc = TensorDescriptor(arg, [M, N], [ld, 1], [BM, BN])
            load2d_host[(n_prog,)](desc, out, om, on, sm, sn, BM=BM, BN=BN)
        else:
            load2d_dev[(n_prog,)](arg, out, M, N, ld, om, on, sm, sn, BM=BM, BN=BN)
        return out_storage.copy()

    got = runs(launch)
    for p in range(n_prog):
        expected = ref_block(storage, (M, N), (om + p * sm, on + p * sn), (BM, BN))
        np.testing.assert_array_equal(got[p], expected, err_msg=f"program {p}")


@settings(max_examples=30, deadline=None)
@given(kind=st.sampled_from(["fp32", "fp16", "bf16"]), dims=st.tuples(st.integers(1, 9), st.integers(1, 9),
                                                                         st.integers(1, 20)),
       block=st.tuples(st.sampled_from([1, 2, 4]), st.sampled_from([1, 4, 8]), st.sampled_from([8, 16])),
       offs=st.tuples(st.integers(-6, 10), st.integers(-6, 10), st.integers(-20, 22)), s0=st.integers(-3, 5),
       n_prog=st.integers(1, 4))
def test_load_3d_matches_numpy(kind, dims, block, offs, s0, n_prog):
    offs = (offs[0], offs[1], offs[2] * align(kind))
    D0, D1, D2 = dims
    ld = padded_width(D2, kind)
    arg, storage = make_input(kind, (D0, D1, ld), seed=1)

    def launch():
        out, out_storage = make_output(kind, (n_prog,) + block)
        desc = TensorDescriptor(arg, [D0, D1, D2], [D1 * ld, ld, 1], list(block))
        load3d_host[(n_prog,)](desc, out, *offs, s0, B0=block[0], B1=block[1], B2=block[2])
        return out_storage.copy()

    got = runs(launch)
    for p in range(n_prog):
        expected = ref_block(storage, dims, (offs[0] + p * s0, offs[1], offs[2]), block)
        np.testing.assert_array_equal(got[p], expected, err_msg=f"program {p}")


def test_fully_out_of_bounds_blocks_read_zeros():
    a = np.arange(16 * 16, dtype=np.float32).reshape(16, 16) + 1
    out = np.full((4, 8, 8), -1, np.float32)
    desc = TensorDescriptor.from_tensor(a, [8, 8])
    # blocks entirely above, left of, below and right of the tensor
    for p, (om, on) in enumerate([(-8, 0), (0, -8), (16, 0), (0, 16)]):
        load2d_host[(1,)](desc, out[p], om, on, 0, 0, BM=8, BN=8)
    np.testing.assert_array_equal(out, 0)


def test_nan_padding_reads_nan_outside():
    a = np.arange(8 * 8, dtype=np.float32).reshape(8, 8)
    out = np.zeros((1, 8, 8), np.float32)
    desc = TensorDescriptor(a, [5, 6], [8, 1], [8, 8], padding="nan")
    load2d_host[(1,)](desc, out, 2, -4, 0, 0, BM=8, BN=8)
    np.testing.assert_array_equal(out[0], ref_block(a, (5, 6), (2, -4), (8, 8), fill=np.nan))


def test_host_descriptor_of_torch_tensor():
    torch = pytest.importorskip("torch")
    a = torch.arange(24 * 32, dtype=torch.float16).reshape(24, 32)
    out = torch.zeros(3, 16, 16, dtype=torch.float16)
    desc = TensorDescriptor.from_tensor(a, [16, 16])
    load2d_host[(3,)](desc, out, -5, -8, 11, 16, BM=16, BN=16)
    for p in range(3):
        np.testing.assert_array_equal(out[p].numpy(), ref_block(a.numpy(), (24, 32), (-5 + 11 * p, -8 + 16 * p),
                                                                (16, 16)))


@pytest.mark.parametrize("kind", ["fp32", "fp16"])
def test_unaligned_innermost_offset_is_an_error(kind):
    """On the H200 an innermost offset that is not a multiple of 16 bytes stops the kernel (illegal instruction,
    probe descriptor_unaligned_offset); outer offsets may be anything."""
    per = align(kind)
    a, _ = make_input(kind, (8, 4 * per))
    out, _ = make_output(kind, (3, 4, per))
    desc = TensorDescriptor.from_tensor(a, [4, per])
    load2d_host[(3,)](desc, out, -3, -per, 5, per, BM=4, BN=per)      # odd rows, aligned columns: fine
    with pytest.raises(minitriton.DescriptorError) as e:
        load2d_host[(3,)](desc, out, 1, 0, 0, per // 2, BM=4, BN=per)  # program 1 is half a 16-byte step off
    msg = str(e.value)
    assert msg.startswith("tensor descriptor load: the innermost offset must be 16-byte aligned")
    assert "program (1,)" in msg and f"offsets[1] = {per // 2} elements of {kind} = 8 bytes" in msg
    assert "illegal instruction" in msg and f"multiple of {per} elements" in msg


# ------------------------------------------------------------------------------------------------ stores

@settings(max_examples=40, deadline=None)
@given(kind=st.sampled_from(["fp32", "fp16", "bf16"]), M=st.integers(1, 40), N=st.integers(1, 40),
       BM=st.sampled_from([1, 4, 8]), BN=st.sampled_from([8, 16, 32]), n_prog=st.integers(1, 5),
       om=st.integers(-40, 45), on=st.integers(-40, 45), host=st.booleans())
def test_store_2d_writes_only_inside(kind, M, N, BM, BN, n_prog, om, on, host):
    on = on * align(kind)
    ld = padded_width(N, kind) + 8   # the padding columns past N must stay untouched
    src, src_storage = make_input(kind, (n_prog, BM, BN), seed=2)

    def launch():
        out, out_storage = make_output(kind, (M, ld))
        if host:
            store2d_host[(n_prog,)](TensorDescriptor(out, [M, N], [ld, 1], [BM, BN]), src, om, on, BM=BM, BN=BN)
        else:
            store2d_dev[(n_prog,)](out, src, M, N, ld, om, on, BM=BM, BN=BN)
        return out_storage.copy()

    got = runs(launch)
    _, expected = make_output(kind, (M, ld))
    for p in range(n_prog):
        expected = ref_store(expected, (M, N), (om + p * BM, on), src_storage[p])
    np.testing.assert_array_equal(got, expected)


@settings(max_examples=25, deadline=None)
@given(dims=st.tuples(st.integers(1, 8), st.integers(1, 8), st.integers(1, 20)),
       block=st.tuples(st.sampled_from([1, 2, 4]), st.sampled_from([2, 4]), st.sampled_from([4, 8, 16])),
       offs=st.tuples(st.integers(-5, 8), st.integers(-5, 8), st.integers(-20, 20)), n_prog=st.integers(1, 3))
def test_copy_3d_in_kernel_descriptors(dims, block, offs, n_prog):
    offs = (offs[0], offs[1], offs[2] * align("fp32"))
    D0, D1, D2 = dims
    ld = padded_width(D2, "fp32")
    src, _ = make_input("fp32", (D0, D1, ld), seed=3)

    def launch():
        dst = np.full((D0, D1, ld), -7, np.float32)
        copy3d_dev[(n_prog,)](src, dst, D0, D1, D2, D1 * ld, ld, *offs, B0=block[0], B1=block[1], B2=block[2])
        return dst

    got = runs(launch)
    expected = np.full((D0, D1, ld), -7, np.float32)
    for p in range(n_prog):
        o = (offs[0] + p * block[0], offs[1], offs[2])
        expected = ref_store(expected, dims, o, ref_block(src, dims, o, block))
    np.testing.assert_array_equal(got, expected)


def test_fully_out_of_bounds_store_writes_nothing():
    out = np.full((16, 16), -1, np.float32)
    src = np.ones((1, 8, 8), np.float32)
    desc = TensorDescriptor(out, [12, 12], [16, 1], [8, 8])
    for om, on in [(-8, 0), (0, -8), (12, 0), (0, 12), (-100, 300)]:
        store2d_host[(1,)](desc, src, om, on, BM=8, BN=8)
    np.testing.assert_array_equal(out, -1)


def test_store_casts_to_the_descriptor_dtype():
    @triton.jit
    def k(desc):
        desc.store([0, 0], tl.full(desc.block_shape, 1.0009765625, tl.float32) * 3)  # rounds to fp16
    out = np.zeros((8, 8), np.float16)
    k[(1,)](TensorDescriptor.from_tensor(out, [8, 8]))
    np.testing.assert_array_equal(out, np.float16(1.0009765625 * 3))


def test_block_shape_and_dtype_attributes():
    @triton.jit
    def k(desc, base, flag):
        tl.static_assert(desc.block_shape[0] == 4)
        tl.static_assert(desc.block_shape[1] == 16)
        tl.static_assert(desc.dtype == tl.float16)
        d2 = tl.make_tensor_descriptor(base, [4, 16], [16, 1], [2, 8])
        tl.static_assert(d2.dtype == tl.float16)
        tl.static_assert(len(d2.block_shape) == 2)
        desc.store([0, 0], tl.zeros(desc.block_shape, desc.dtype) + d2.block_shape[1])
        tl.store(flag, d2.shape[0] * 100 + d2.shape[1])
    out = np.ones((4, 16), np.float16)
    flag = np.zeros(1, np.int32)
    k[(1,)](TensorDescriptor.from_tensor(out, [4, 16]), out, flag)
    np.testing.assert_array_equal(out, 8)
    assert flag[0] == 416


def test_descriptor_in_a_helper_and_atomic_add():
    @triton.jit
    def add_block(desc, off, v):
        desc.atomic_add([off, 0], v)

    @triton.jit
    def k(desc, BM: tl.constexpr, BN: tl.constexpr):
        add_block(desc, tl.program_id(0) * 2 - 4, tl.full((BM, BN), 1.0, tl.float32))
    out = np.zeros((10, 8), np.float32)
    k[(6,)](TensorDescriptor(out, [10, 8], [8, 1], [4, 8]), BM=4, BN=8)
    expected = np.zeros((10, 8), np.float32)
    for p in range(6):
        r0 = p * 2 - 4
        expected[max(r0, 0):max(min(r0 + 4, 10), 0)] += 1
    np.testing.assert_array_equal(out, expected)


@triton.jit
def gather_scatter(src, dst, rows_ptr, M, N, ld, y, R: tl.constexpr, BN: tl.constexpr):
    a = tl.make_tensor_descriptor(src, [M, N], [ld, 1], [1, BN])
    b = tl.make_tensor_descriptor(dst, [M, N], [ld, 1], [1, BN])
    rows = tl.load(rows_ptr + tl.arange(0, R))
    b.scatter(a.gather(rows, y) + 1, rows, y)


@settings(max_examples=30, deadline=None)
@given(M=st.integers(1, 20), N=st.integers(1, 40), rows=st.lists(st.integers(-10, 30), min_size=8, max_size=8,
                                                                   unique=True),
       y=st.integers(-20, 40), BN=st.sampled_from([8, 16]))
def test_gather_and_scatter_rows(M, N, rows, y, BN):
    ld = padded_width(N, "fp32")
    src, _ = make_input("fp32", (M, ld), seed=4)
    rows = np.array(rows, np.int32)

    def launch():
        dst = np.full((M, ld), -7, np.float32)
        gather_scatter[(1,)](src, dst, rows, M, N, ld, y, R=8, BN=BN)
        return dst

    got = runs(launch)
    expected = np.full((M, ld), -7, np.float32)
    for r in rows:
        expected = ref_store(expected, (M, N), (r, y), ref_block(src, (M, N), (r, y), (1, BN)) + 1)
    np.testing.assert_array_equal(got, expected)


# ------------------------------------------------------------------------------------------------ counters

def test_counters_attribute_descriptor_traffic():
    a = np.arange(20 * 16, dtype=np.float32).reshape(20, 16)
    out = np.zeros((2, 8, 16), np.float32)
    desc = TensorDescriptor.from_tensor(a, [8, 16])
    with minitriton.record() as rec:
        load2d_host[(2,)](desc, out, 4, -4, 12, 0, BM=8, BN=16)   # rows 4..11 and 16..23, cols -4..11
    t = rec.last["tensors"]
    inside = 8 * 12 + 4 * 12
    assert t["desc"]["totals"]["loaded_elements"] == inside
    assert t["desc"]["totals"]["loaded_bytes"] == inside * 4
    assert t["desc"]["totals"]["masked_load_lanes"] == 2 * 8 * 16 - inside
    assert t["out"]["totals"]["stored_bytes"] == out.nbytes

    b = np.zeros((20, 16), np.float32)
    src = np.ones((3, 8, 16), np.float32)
    with minitriton.record() as rec:
        store2d_dev[(3,)](b, src, 20, 12, 16, 0, 0, BM=8, BN=16)
    t = rec.last["tensors"]["base"]["totals"]
    assert t["stored_elements"] == 20 * 12
    assert t["masked_store_lanes"] == 3 * 8 * 16 - 20 * 12
    assert (b[:, :12] == 1).all() and (b[:, 12:] == 0).all()


# ------------------------------------------------------------------------------------------------ matmul

@triton.jit
def matmul_desc(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, K, BK, num_stages=3, loop_unroll_factor=1, disallow_acc_multi_buffer=True, flatten=True,
                      warp_specialize=False):
        a = a_desc.load([pid_m * BM, k])
        b = b_desc.load([k, pid_n * BN])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(c_desc.dtype))


@triton.jit
def matmul_device_desc(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # the persistent-matmul tutorial's style: descriptors made in the kernel, tiles walked by one loop
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    tiles_n = tl.cdiv(N, BN)
    num_tiles = tl.cdiv(M, BM) * tiles_n
    for tile in tl.range(tl.program_id(0), num_tiles, tl.num_programs(0), flatten=True):
        pid_m = tile // tiles_n
        pid_n = tile % tiles_n
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BK)):
            acc = tl.dot(a_desc.load([pid_m * BM, k * BK]), b_desc.load([k * BK, pid_n * BN]), acc)
        c_desc.store([pid_m * BM, pid_n * BN], acc)


def test_matmul_with_host_descriptors():
    rng = np.random.default_rng(5)
    M, N, K = 100, 72, 56
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    BM, BN, BK = 32, 32, 16
    a_desc = TensorDescriptor.from_tensor(a, [BM, BK])
    b_desc = TensorDescriptor.from_tensor(b, [BK, BN])
    c_desc = TensorDescriptor.from_tensor(c, [BM, BN])
    matmul_desc[(triton.cdiv(M, BM), triton.cdiv(N, BN))](a_desc, b_desc, c_desc, K, BM=BM, BN=BN, BK=BK)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-5, atol=1e-4)

    c16 = np.zeros((M, N), np.float16)
    matmul_desc[(triton.cdiv(M, BM), triton.cdiv(N, BN))](a_desc, b_desc, TensorDescriptor.from_tensor(c16, [BM, BN]),
                                                          K, BM=BM, BN=BN, BK=BK)
    np.testing.assert_array_equal(c16, c.astype(np.float16))


def test_matmul_with_device_descriptors_and_allocator():
    calls = []
    triton.set_allocator(lambda size, alignment, stream: calls.append(size))
    assert minitriton._allocator is not None
    rng = np.random.default_rng(6)
    M, N, K = 70, 48, 40
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    c = np.full((M, N), np.nan, np.float32)
    matmul_device_desc[(4,)](a, b, c, M, N, K, BM=32, BN=16, BK=16)
    np.testing.assert_allclose(c, a @ b, rtol=2e-2, atol=2e-2)   # TF32 dot, as on the GPU
    assert calls == []   # recorded, never needed: minitriton has no workspace to allocate
    triton.set_allocator(None)


def _set_block_shapes(nargs):
    # the persistent-matmul tutorial's pre_hook: host descriptors take the config's block sizes
    BM, BN, BK = nargs["BM"], nargs["BN"], nargs["BK"]
    nargs["a_desc"].block_shape = [BM, BK]
    nargs["b_desc"].block_shape = [BK, BN]
    nargs["c_desc"].block_shape = [BM, BN]


matmul_tuned = triton.autotune(
    configs=[triton.Config({"BM": 32, "BN": 32, "BK": 16}, pre_hook=_set_block_shapes),
             triton.Config({"BM": 16, "BN": 64, "BK": 32}, pre_hook=_set_block_shapes)],
    key=["K"])(matmul_desc)


@pytest.mark.parametrize("mode", ["first", "all", "cheapest"])
def test_autotune_with_descriptors_and_pre_hook(monkeypatch, mode):
    monkeypatch.setenv("MINITRITON_AUTOTUNE", mode)
    matmul_tuned.cache.clear()
    rng = np.random.default_rng(8)
    M, N, K = 40, 64, 48
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    descs = [TensorDescriptor.from_tensor(x, [1, 8]) for x in (a, b)] + [TensorDescriptor.from_tensor(c, [1, 4])]
    grid = lambda meta: (triton.cdiv(M, meta["BM"]), triton.cdiv(N, meta["BN"]))
    matmul_tuned[grid](*descs, K)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-5, atol=1e-4)
    cfg = matmul_tuned.best_config.kwargs
    assert descs[2].block_shape == [cfg["BM"], cfg["BN"]]


def test_range_keywords_are_accepted_and_step_keyword_counts():
    @triton.jit
    def k(out, n):
        acc = 0
        for i in tl.range(0, n, step=3, warp_specialize=True, flatten=True, disallow_acc_multi_buffer=True,
                          loop_unroll_factor=2, num_stages=2, disable_licm=True):
            acc += i
        tl.store(out, acc)
    out = np.zeros(1, np.int32)
    k[(1,)](out, 10)
    assert out[0] == 0 + 3 + 6 + 9


# ------------------------------------------------------------------------------------------------ host errors

def _assert_raises(exc, message, fn):
    with pytest.raises(exc) as info:
        fn()
    assert message in str(info.value), str(info.value)


def test_host_descriptor_errors_use_triton_wording():
    a = np.zeros((8, 16), np.float32)
    _assert_raises(AssertionError, "rank mismatch", lambda: TensorDescriptor(a, [8, 16], [16], [8, 8]))
    _assert_raises(AssertionError, "rank mismatch", lambda: TensorDescriptor(a, [8, 16], [16, 1], [8]))
    _assert_raises(AssertionError, "rank must not be zero", lambda: TensorDescriptor(a, [], [], []))
    six = np.zeros((1,) * 5 + (16,), np.float32)
    _assert_raises(AssertionError, "rank cannot be more than 5",
                   lambda: TensorDescriptor(six, [1] * 5 + [16], [16] * 5 + [1], [1] * 5 + [4]))
    _assert_raises(AssertionError, "base must be 16-byte aligned",
                   lambda: TensorDescriptor(a[:, 1:], [8, 15], [16, 1], [8, 8]))
    _assert_raises(ValueError, "Shape element 1 must be a power of 2",
                   lambda: TensorDescriptor(a, [8, 16], [16, 1], [8, 12]))
    _assert_raises(TypeError, "Shape element 0 must have type `constexpr[int]`",
                   lambda: TensorDescriptor(a, [8, 16], [16, 1], [8.0, 8]))
    odd = np.zeros((4, 5), np.float32)
    _assert_raises(AssertionError, "strides must be 16-byte aligned", lambda: TensorDescriptor.from_tensor(odd, [4, 4]))
    _assert_raises(AssertionError, "shape must be positive", lambda: TensorDescriptor(a, [0, 16], [16, 1], [8, 8]))
    _assert_raises(AssertionError, "Last dimension must be contiguous",
                   lambda: TensorDescriptor.from_tensor(a[:, ::2], [8, 8]))
    _assert_raises(AssertionError, "Illegal value for padding",
                   lambda: TensorDescriptor(a, [8, 16], [16, 1], [8, 8], padding="one"))
    _assert_raises(AssertionError, "Padding option `nan` is only supported for floating point tensors",
                   lambda: TensorDescriptor(np.zeros((8, 16), np.int32), [8, 16], [16, 1], [8, 8], padding="nan"))
    _assert_raises(TypeError, "TensorDescriptor base must be", lambda: TensorDescriptor([1, 2], [2], [1], [2]))


def test_from_tensor_takes_shape_and_element_strides():
    a = np.zeros((6, 32), np.float16)[:, :24]
    d = TensorDescriptor.from_tensor(a, [2, 8])
    assert (list(d.shape), list(d.strides), d.block_shape, d.padding) == ([6, 24], [32, 1], [2, 8], "zero")
    buf = Buffer.zeros((4, 8), T.bfloat16)
    d = TensorDescriptor.from_tensor(buf, [4, 8])
    assert list(d.strides) == [8, 1]


# ------------------------------------------------------------------------------------------------ kernel errors

@triton.jit
def bad_make(base, out, CASE: tl.constexpr):
    if CASE == 0:
        d = tl.make_tensor_descriptor(base, [], [], [])
    elif CASE == 1:
        d = tl.make_tensor_descriptor(base, [8, 16], [16], [8, 8])
    elif CASE == 2:
        d = tl.make_tensor_descriptor(base, [8, 16], [16, 1], [8])
    elif CASE == 3:
        d = tl.make_tensor_descriptor(base, [8, 16], [16, 1], [8, 2])
    elif CASE == 4:
        d = tl.make_tensor_descriptor(base, [8, 16], [16, 2], [8, 8])
    elif CASE == 5:
        d = tl.make_tensor_descriptor(base, [8, 16], [16, 1], [6, 8])
    elif CASE == 6:
        d = tl.make_tensor_descriptor(base, [8, 16], [16, 1], [8, 8], padding_option="one")
    elif CASE == 7:
        d = tl.make_tensor_descriptor(out, [8, 16], [16, 1], [8, 8], padding_option="nan")
    elif CASE == 8:
        d = tl.make_tensor_descriptor(base, [8, 16], [16, 1], [8, 8])
        d.load([0])
    elif CASE == 9:
        d = tl.make_tensor_descriptor(base, [8, 16], [16, 1], [8, 8])
        d.store([0, 0], tl.zeros((8, 4), tl.float32))
    elif CASE == 10:
        d = tl.make_tensor_descriptor(base, [8, 16], [16, 1], [8, 8])
        d.load([tl.program_id(0).to(tl.int64), 0])
    elif CASE == 11:
        d = tl.make_tensor_descriptor(out, [8, 16], [16, 1], [8, 8])
        d.atomic_add([0, 0], tl.zeros((8, 8), tl.int64))
    elif CASE == 12:
        d = tl.make_tensor_descriptor(base, [8, 16], [16, 1], [8, 8])
        d.load([0, 2**31])
    elif CASE == 13:
        d = tl.make_tensor_descriptor(base, [8, 16], [16, 1], [8, 8])
        d.load([tl.arange(0, 2), 0])
    elif CASE == 14:
        d = tl.make_tensor_descriptor(base, [8, 16], [16, 1], [8, 8])
        d.gather(tl.arange(0, 8), 0)
    elif CASE == 15:
        d = tl.make_tensor_descriptor(base, [8, 16], [16, 1], [1, 8])
        d.gather(tl.arange(0, 4), 0)
    elif CASE == 16:
        d = tl.make_tensor_descriptor(base, [8, 16], [16, 1], [1, 4])
        d.scatter(tl.zeros((8, 4), tl.float32), tl.arange(0, 8), 0)


BAD_MAKE = {
    0: "Expected 1 <= ndim <= 5 but got 0 dimensions",
    1: "Expected 2 strides but got 1",
    2: "Expected block_shape to have 2 dimensions but got 2",   # sic: Triton 3.6 prints len(strides)
    3: "Descriptor block shape must have at least 16 bytes in the last dimension, but got 2 * 4 = 8 bytes",
    4: "Tensor descriptor last dim must be 1 but got 2",
    5: "Shape element 0 must be a power of 2",
    6: "Padding option one not supported",
    7: "Padding option `nan` is not supported for integer blocks",
    8: "expected 2 offsets, but got 1",
    9: "",   # a bare `assert value.shape == desc.block_shape`: Triton shows the source and no message
    10: "Block pointers only support 32 bit `offsets/block_shape`, add a `.to(tl.int32)`",
    11: "Unsupported dtype",
    12: "Block pointers only support 32 bit `offsets/block_shape`, got a value 2147483648 which is out of the range",
    13: "Expected a scalar in shape/strides/offsets",
    14: "descriptor block must have 1 row, but got (8, 8)",
    15: "descriptor gather must have at least 8 rows, but got (4,)",
    16: "descriptor scatter of fp32 must have at least 8 columns, but got 4",
}


@pytest.mark.parametrize("case", sorted(BAD_MAKE))
def test_in_kernel_errors_are_compilation_errors(case):
    base = np.zeros((8, 16), np.float32)
    out = np.zeros((8, 16), np.int64)
    with pytest.raises(triton.CompilationError) as info:
        bad_make[(2,)](base, out, CASE=case)
    assert BAD_MAKE[case] in str(info.value), str(info.value)
    if case == 9:
        assert isinstance(info.value.error, AssertionError)
    assert (base == 0).all() and (out == 0).all()


def test_runtime_misaligned_base_and_stride():
    @triton.jit
    def k(base, ld, shift):
        d = tl.make_tensor_descriptor(base + shift, [4, 8], [ld, 1], [4, 8])
        d.store([0, 0], tl.zeros((4, 8), tl.float32))
    a = np.ones((4, 16), np.float32)
    _assert_raises(minitriton.DescriptorError, "tl.make_tensor_descriptor: base must be 16-byte aligned",
                   lambda: k[(2,)](a, 16, 3))
    _assert_raises(minitriton.DescriptorError, "strides[0] = 6 elements = 24 bytes, not a multiple of 16",
                   lambda: k[(2,)](a, 6, 0))
    assert (a == 1).all()
    k[(2,)](a, 16, 4)      # 16 bytes in: aligned
    assert (a[:, 4:12] == 0).all() and (a[:, :4] == 1).all() and (a[:, 12:] == 1).all()


def test_descriptor_larger_than_its_allocation_is_out_of_bounds():
    a = np.zeros((8, 16), np.float32)
    desc = TensorDescriptor(a, [12, 16], [16, 1], [8, 16])   # claims 12 rows, has 8
    out = np.zeros((1, 8, 16), np.float32)
    load2d_host[(1,)](desc, out, 0, 0, 0, 0, BM=8, BN=16)    # rows 0..7: fine
    with pytest.raises(minitriton.OutOfBoundsError) as info:
        load2d_host[(1,)](desc, out, 2, 0, 0, 0, BM=8, BN=16)
    text = str(info.value)
    assert text.startswith("tensor descriptor load reads past the end of `desc` (test_tensor_descriptors.py:"), text
    assert "offsets 128…159 from `desc`, but `desc` has 128 elements" in text
    assert "fix: the descriptor's shape [12, 16] and strides [16, 1] reach past the array" in text
    with pytest.raises(minitriton.OutOfBoundsError, match="tensor descriptor store writes past the end of `desc`"):
        store2d_host[(1,)](desc, np.zeros((1, 8, 16), np.float32), 4, 0, BM=8, BN=16)
    assert (a == 0).all()


def test_install_aliases_tensor_descriptor_module():
    import subprocess
    import sys
    code = ("import minitriton; minitriton.install()\n"
            "import triton\n"
            "from triton.tools.tensor_descriptor import TensorDescriptor\n"
            "import minitriton.tools.tensor_descriptor as ours\n"
            "assert TensorDescriptor is ours.TensorDescriptor\n"
            "triton.set_allocator(lambda *a: None)\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "ok", out.stderr


# ------------------------------------------------------------------------------------------------ vs Triton's interpreter

ORACLE_SRC = '''
import triton
import triton.language as tl


@triton.jit
def load2d(base, out, M, N, ld, om, on, sm, sn, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    desc = tl.make_tensor_descriptor(base, shape=[M, N], strides=[ld, 1], block_shape=[BM, BN])
    x = desc.load([om + pid * sm, on + pid * sn])
    rows, cols = tl.arange(0, BM), tl.arange(0, BN)
    tl.store(out + pid * BM * BN + rows[:, None] * BN + cols[None, :], x)


@triton.jit
def store2d(base, src, M, N, ld, om, on, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    desc = tl.make_tensor_descriptor(base, [M, N], [ld, 1], [BM, BN])
    rows, cols = tl.arange(0, BM), tl.arange(0, BN)
    desc.store([om + pid * BM, on], tl.load(src + pid * BM * BN + rows[:, None] * BN + cols[None, :]) * 2)


@triton.jit
def copy3d(src, dst, D0, D1, D2, st0, st1, o0, o1, o2, B0: tl.constexpr, B1: tl.constexpr, B2: tl.constexpr):
    pid = tl.program_id(0)
    a = tl.make_tensor_descriptor(src, [D0, D1, D2], [st0, st1, 1], [B0, B1, B2])
    b = tl.make_tensor_descriptor(dst, [D0, D1, D2], [st0, st1, 1], [B0, B1, B2])
    b.store([o0 + pid * B0, o1, o2], a.load([o0 + pid * B0, o1, o2]))


@triton.jit
def gather_scatter(src, dst, rows_ptr, M, N, ld, y, R: tl.constexpr, BN: tl.constexpr):
    a = tl.make_tensor_descriptor(src, [M, N], [ld, 1], [1, BN])
    b = tl.make_tensor_descriptor(dst, [M, N], [ld, 1], [1, BN])
    rows = tl.load(rows_ptr + tl.arange(0, R))
    b.scatter(a.gather(rows, y) + 1, rows, y)


@triton.jit
def nan_pad(base, out, M, N, om, on, BM: tl.constexpr, BN: tl.constexpr):
    desc = tl.make_tensor_descriptor(base, [M, N], [N, 1], [BM, BN], padding_option="nan")
    rows, cols = tl.arange(0, BM), tl.arange(0, BN)
    tl.store(out + rows[:, None] * BN + cols[None, :], desc.load([om, on]))
'''


def _oracle_cases():
    from helpers.oracle import BF16
    rng = np.random.default_rng(11)
    cases = []
    # last-dim offsets stay multiples of 16 bytes: Triton's interpreter asserts that (the TMA unit does not)
    for M, N, BM, BN, om, on, sm, sn in [(19, 30, 8, 16, -5, 0, 3, 16), (7, 40, 16, 8, -9, -8, 5, 8),
                                         (33, 12, 4, 32, 30, -16, -11, 0), (5, 5, 8, 8, -20, 40, 9, -16)]:
        ld = -(-N // 4) * 4
        base = rng.standard_normal((M, ld)).astype(np.float32)
        cases.append(("load2d", (4,), (base, np.full(4 * BM * BN, -1, np.float32), M, N, ld, om, on, sm, sn),
                      dict(BM=BM, BN=BN)))
    half = rng.standard_normal((21, 24)).astype(np.float16)
    cases.append(("load2d", (3,), (half, np.full(3 * 8 * 16, -1, np.float16), 21, 20, 24, -3, -8, 7, 8),
                  dict(BM=8, BN=16)))
    bits = (rng.standard_normal((17, 16)).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    cases.append(("load2d", (3,), (BF16(bits), BF16(np.zeros(3 * 4 * 16, np.uint16)), 17, 13, 16, 2, 0, 6, 0),
                  dict(BM=4, BN=16)))
    for M, N, om, on in [(13, 20, -3, -8), (9, 9, 4, 8), (30, 17, -20, 16)]:
        ld = -(-N // 4) * 4 + 4
        src = rng.standard_normal((3 * 8 * 16)).astype(np.float32)
        cases.append(("store2d", (3,), (np.full((M, ld), -1, np.float32), src, M, N, ld, om, on),
                      dict(BM=8, BN=16)))
    src = rng.standard_normal((5, 6, 12)).astype(np.float32)
    cases.append(("copy3d", (3,), (src, np.full_like(src, -1), 5, 6, 10, 72, 12, -2, 3, -4),
                  dict(B0=2, B1=4, B2=8)))
    for M, N, rows, y in [(12, 20, [3, -1, 0, 11, 12, 5, 40, 7], -8), (6, 9, [5, 4, 3, 2, 1, 0, -2, 6], 4)]:
        ld = -(-N // 4) * 4
        src = rng.standard_normal((M, ld)).astype(np.float32)
        cases.append(("gather_scatter", (1,), (src, np.full_like(src, -1), np.array(rows, np.int32), M, N, ld, y),
                      dict(R=8, BN=16)))
    cases.append(("nan_pad", (1,), (rng.standard_normal((6, 8)).astype(np.float32),
                                    np.zeros(8 * 16, np.float32), 6, 8, -3, -8), dict(BM=8, BN=16)))
    return cases


def test_descriptors_match_tritons_interpreter():
    from helpers.oracle import assert_same_as_interpreter
    assert_same_as_interpreter(ORACLE_SRC, _oracle_cases())


# ------------------------------------------------------------------------------------------------ sanitizer

@triton.jit
def store_overlapping(desc):
    desc.store([tl.program_id(0) * 4, 0], tl.full(desc.block_shape, 2.0, desc.dtype))


@pytest.mark.parametrize("group_size", [None, 1])
def test_sanitizer_sees_descriptor_stores(group_size):
    saved = minitriton.options().sanitize
    minitriton.set_options(sanitize=True)
    minitriton.set_options(group_size=group_size)
    try:
        out = np.zeros((20, 16), np.float32)
        src = np.ones((3, 8, 16), np.float32)
        desc = TensorDescriptor(out, [20, 16], [16, 1], [8, 16])
        store2d_host[(3,)](desc, src, -4, 0, BM=8, BN=16)    # disjoint row blocks, the tail masked: no finding
        assert (out == 1).all()
        with pytest.raises(minitriton.errors.SanitizerError) as info:
            store_overlapping[(2,)](desc)                        # rows 0..7 and 4..11
        assert "tl.store races with program (0,): both write `desc`" in str(info.value)
    finally:
        minitriton.set_options(sanitize=saved)
