"""tl.rand & co. (Philox): bit for bit what Triton 3.9's interpreter computes, the published Philox-4x32-10
answers, and the values Triton's own kernels gave on an H200 (Triton 3.6; docs/semantics.md S16.16, S16.17);
swizzle2d against its definition."""
from __future__ import annotations

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from tests.helpers.oracle import assert_same_as_interpreter, load_minitriton_module

RANDOM_KERNELS = '''
import triton
import triton.language as tl


@triton.jit
def draw(seed, out_i, out_u, out_n, OFFS_64: tl.constexpr, N: tl.constexpr):
    offs = tl.program_id(0) * N + tl.arange(0, N) - 3 * N
    if OFFS_64:
        offs = offs.to(tl.int64) * 123456789013
    i0, i1, i2, i3 = tl.randint4x(seed, offs)
    base = tl.program_id(0) * N + tl.arange(0, N)
    tl.store(out_i + 4 * base, i0)
    tl.store(out_i + 4 * base + 1, i1)
    tl.store(out_i + 4 * base + 2, i2)
    tl.store(out_i + 4 * base + 3, i3)
    tl.store(out_u + base, tl.rand(seed, offs))
    n0, n1, n2, n3 = tl.randn4x(seed, offs)
    tl.store(out_n + 4 * base, n0)
    tl.store(out_n + 4 * base + 1, n1)
    tl.store(out_n + 4 * base + 2, n2)
    tl.store(out_n + 4 * base + 3, tl.randn(seed, offs))


@triton.jit
def philox_words(out, c: tl.constexpr, k: tl.constexpr):
    seed = tl.full((), k, tl.uint64)
    c0, c1, c2, c3 = tl.philox(seed, tl.full((), c[0], tl.uint32), tl.full((), c[1], tl.uint32),
                               tl.full((), c[2], tl.uint32), tl.full((), c[3], tl.uint32))
    tl.store(out, c0)
    tl.store(out + 1, c1)
    tl.store(out + 2, c2)
    tl.store(out + 3, c3)


@triton.jit
def philox64(seed, out, N: tl.constexpr):
    c = tl.arange(0, N).to(tl.uint64) * 0x9E3779B97F4A7C15
    c0, c1, c2, c3 = tl.philox(seed, c, c + 1, c ^ 5, c * 3)
    tl.store(out + tl.arange(0, N), c0 ^ c1 ^ c2 ^ c3)


@triton.jit
def vector_seed(seeds, out, N: tl.constexpr):
    rows = tl.arange(0, 4)
    s = tl.load(seeds + rows)
    offs = tl.arange(0, N)
    r = tl.randint(s[:, None], offs[None, :])
    tl.store(out + rows[:, None] * N + offs[None, :], r)
'''


def _draw_case(seed, offs64, n=64, programs=8):
    return ("draw", (programs,), [seed, np.zeros(4 * n * programs, np.uint32), np.zeros(n * programs, np.float32),
                                  np.zeros(4 * n * programs, np.float32)], {"OFFS_64": offs64, "N": n})


@pytest.mark.interpreter
@pytest.mark.parametrize("offs64", [False, True], ids=["int32-offsets", "int64-offsets"])
def test_randint_rand_randn_match_the_interpreter_bit_for_bit(offs64):
    cases = [_draw_case(seed, offs64) for seed in (0, 123, 2**31 - 1, -7, 2**40 + 3)]
    assert_same_as_interpreter(RANDOM_KERNELS, cases, bitwise_floats=True)


@pytest.mark.interpreter
def test_philox_with_64_bit_counters_and_vector_seeds_match_the_interpreter():
    cases = [("philox64", (1,), [seed, np.zeros(32, np.uint64)], {"N": 32}) for seed in (0, 99, 2**63 + 5)]
    cases.append(("vector_seed", (1,), [np.array([0, 1, 512, -1], np.int64), np.zeros((4, 16), np.uint32)],
                  {"N": 16}))
    assert_same_as_interpreter(RANDOM_KERNELS, cases)


# Philox-4x32-10 known answers (Random123's kat_vectors: counter, key -> output)
KNOWN_ANSWERS = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF, 0xFFFFFFFF), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


@pytest.mark.parametrize("counter,key,expected", KNOWN_ANSWERS)
def test_philox_gives_the_published_answers(counter, key, expected):
    out = np.zeros(4, np.uint32)
    load_minitriton_module(RANDOM_KERNELS).philox_words[(1,)](out, c=counter, k=key[0] | (key[1] << 32))
    assert [int(v) for v in out] == list(expected)


# The `draw` kernel above on an H200 with Triton 3.6.0, program 0 (offsets -192, -191, ...): randint4x of the
# first three offsets, rand of the first two, the bits of randn of the first four (S16.16, S16.17)
H200 = {
    (123, False): ([[0xD5BF9A7B, 0xED04BD5E, 0xC28E86B3, 0xC52ED134], [0x4149C595, 0x767A9E2D, 0x0CBF52E4, 0xBE0F9804],
                    [0x0472F13E, 0xAC095457, 0xC5AD3AC9, 0x7A1054E7]],
                   ["0x1.52032ap-2", "0x1.052714p-1"], [0x3F6354E9, 0x3F849928, 0xBFB8D24E, 0x3FA0E707]),
    (-7, True): ([[0x067AE5B6, 0x2194F196, 0x59A0276C, 0xEC362D02], [0xD951FFAA, 0xEC418DD4, 0x84CEA0BE, 0xBE792E43]],
                 ["0x1.9eb96cp-5", "0x1.357p-2"], None),
}


@pytest.mark.parametrize("seed,offs64", list(H200), ids=["seed123-int32", "seed-7-int64"])
def test_randint_and_rand_equal_the_h200_and_randn_is_within_4_ulp(seed, offs64):
    ints, uniforms, normal_bits = H200[(seed, offs64)]
    _, grid, args, kwargs = _draw_case(seed, offs64, programs=1)
    load_minitriton_module(RANDOM_KERNELS).draw[grid](*args, **kwargs)
    out_i, out_u, out_n = args[1:]
    assert out_i[:4 * len(ints)].reshape(-1, 4).tolist() == ints
    assert out_u[:len(uniforms)].tolist() == [float.fromhex(h) for h in uniforms]
    if normal_bits is not None:  # the GPU's log, cos and sqrt are approximate: a few ulp apart
        ulps = np.abs(out_n[3::4][:4].view(np.uint32).astype(np.int64) - np.array(normal_bits, np.int64))
        assert ulps.max() <= 4


def test_rand_is_uniform_in_0_1_and_randn_is_standard_normal():
    @triton.jit
    def k(out_u, out_n, N: tl.constexpr):
        offs = tl.program_id(0) * N + tl.arange(0, N)
        tl.store(out_u + offs, tl.rand(2024, offs))
        tl.store(out_n + offs, tl.randn(2024, offs))

    u, n = np.zeros(1 << 16, np.float32), np.zeros(1 << 16, np.float32)
    k[(64,)](u, n, N=1024)
    assert 0.0 <= u.min() and u.max() < 1.0
    assert abs(u.mean() - 0.5) < 0.01 and abs(n.mean()) < 0.02 and abs(n.std() - 1.0) < 0.02
    assert len(np.unique(u)) > 0.99 * u.size


def test_seed_must_be_an_integer_and_offsets_a_tensor():
    @triton.jit
    def float_seed(out):
        tl.store(out + tl.arange(0, 4), tl.rand(0.5, tl.arange(0, 4)))

    @triton.jit
    def scalar_offset(out):
        tl.store(out, tl.rand(1, 3))

    out = np.zeros(4, np.float32)
    with pytest.raises(triton.CompileTimeAssertionFailure, match="seed of Philox must be an integer, got fp32"):
        float_seed[(1,)](out)
    with pytest.raises(triton.CompilationError, match="has no attribute 'to'"):
        scalar_offset[(1,)](out)


def test_random_ops_refuse_to_run_outside_a_kernel():
    with pytest.raises(ValueError, match="jit"):
        tl.rand(0, 1)


def _swizzle_reference(i, j, size_i, size_j, size_g):
    ij = i * size_j + j
    group = ij // (size_g * size_j)
    first = group * size_g
    rows = min(size_i - first, size_g)
    ij %= size_g * size_j
    return first + ij % rows, ij // rows


@pytest.mark.parametrize("size_i,size_j,size_g", [(4, 4, 2), (5, 3, 2), (7, 8, 3), (1, 9, 4), (16, 2, 16)])
def test_swizzle2d_maps_each_index_like_its_definition(size_i, size_j, size_g):
    @triton.jit
    def k(out_i, out_j, size_i, size_j, SIZE_G: tl.constexpr):
        i = tl.program_id(0)
        j = tl.program_id(1)
        ni, nj = tl.swizzle2d(i, j, size_i, size_j, SIZE_G)
        tl.store(out_i + i * size_j + j, ni)
        tl.store(out_j + i * size_j + j, nj)

    out_i, out_j = np.zeros((size_i, size_j), np.int32), np.zeros((size_i, size_j), np.int32)
    k[(size_i, size_j)](out_i, out_j, size_i, size_j, SIZE_G=size_g)
    for i in range(size_i):
        for j in range(size_j):
            assert (out_i[i, j], out_j[i, j]) == _swizzle_reference(i, j, size_i, size_j, size_g)
    # a permutation of the matrix' indices
    assert len({(a, b) for a, b in zip(out_i.ravel(), out_j.ravel())}) == size_i * size_j


def test_swizzle2d_matches_the_docstring_example():
    @triton.jit
    def k(out):
        i = tl.arange(0, 4)[:, None]
        j = tl.arange(0, 4)[None, :]
        ni, nj = tl.swizzle2d(i, j, 4, 4, 2)
        tl.store(out + ni * 4 + nj, i * 4 + j)

    out = np.zeros((4, 4), np.int32)
    k[(1,)](out)
    assert out.tolist() == [[0, 2, 4, 6], [1, 3, 5, 7], [8, 10, 12, 14], [9, 11, 13, 15]]
