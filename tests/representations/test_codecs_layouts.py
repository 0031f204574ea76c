"""Block layouts: where a block-scaled tensor's blocks and scales lie.

Each test proves one requirement of the layouts: the value type
(BlockLayout), the planes' shapes and the scale index formulas (compact,
padded K-major, padded MN-major, the 128x4 swizzle), N-D blocks, relayout,
the power-of-two rules on float scale formats, amax_floor, UE4M3 scales,
the Hadamard rotation, and storing a quantized tensor. The expected values
come from models written here from the definitions (the swizzle both from
its index formula and as a sequence of reshapes, the way torchao's
`to_blocked` and Transformer Engine's swizzle describe it), never from the
code under test."""
import math
import pickle
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stride_weave import codecs, formats
from stride_weave.codecs import BlockLayout
from stride_weave.dtypes import BlockScaledDType, DType, Level
from support import unique_name

np = pytest.importorskip("numpy")

pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered in cast")

NVFP4_16 = formats.NVFP4_16x16
MXFP8_32 = formats.MXFP8_E4M3_32x32
FP8_128 = formats.FP8_E4M3_128x128
FP8_1x128 = formats.FP8_E4M3_1x128


def _codes(q):
    """The element plane of q as one code per element, in its planes' order."""
    geo = codecs._Geometry("test", q.dtype, q.shape, q.layout)
    return codecs._element_codes(q, geo)


def _planes_equal(a, b):
    return all(np.array_equal(x, y) for x, y in zip(a.planes, b.planes))


def _ru(x, a):
    return -(-x // a) * a


# ---- the value type ----------------------------------------------------------------

def test_a_layout_is_an_immutable_value():
    a = BlockLayout((-2, -1), scales="swizzled_128x4")
    b = BlockLayout([-2, -1], scales="swizzled_128x4")
    assert a == b and hash(a) == hash(b) and a is not b
    assert a != BlockLayout((-1, -2), scales="swizzled_128x4")
    assert a != tuple(a)                     # equal by value, to layouts only
    assert (a.axes, a.order, a.scales, a.align, a.group, a.batch_dims, a.expand) == (
        (-2, -1), "blocked", "swizzled_128x4", 4, 1, 0, False)
    with pytest.raises(AttributeError):
        a.order = "logical"
    with pytest.raises(AttributeError):
        object.__setattr__(a, "order", "logical")
    with pytest.raises(TypeError):
        a < b
    assert eval(repr(a), {"BlockLayout": BlockLayout}) == a
    assert repr(BlockLayout()) == "BlockLayout(None)"
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(a, protocol)) == a
    with pytest.raises(TypeError, match="cannot be subclassed"):
        type("Mine", (BlockLayout,), {})


@pytest.mark.parametrize("kwargs,error,message", [
    ({"axes": "01"}, TypeError, "axes must be None or a sequence of ints, got str"),
    ({"axes": (0, True)}, TypeError, "axes must hold ints, got True"),
    ({"axes": (1, 1)}, ValueError, "axes must be distinct, got (1, 1)"),
    ({"axes": ()}, ValueError, "axes must name at least one axis (or be None)"),
    ({"order": "rows"}, ValueError, "order must be one of ('blocked', 'logical'), got 'rows'"),
    ({"scales": 1}, TypeError, "scales must be a str, got int"),
    ({"align": 0}, ValueError, "align must be at least 1, got 0"),
    ({"group": 2.0}, TypeError, "group must be an int, got float"),
    ({"batch_dims": -1}, ValueError, "batch_dims must be at least 0, got -1"),
    ({"expand": 1}, TypeError, "expand must be a bool, got int"),
])
def test_invalid_fields_name_the_field(kwargs, error, message):
    with pytest.raises(error) as info:
        BlockLayout(**kwargs)
    assert str(info.value) == "BlockLayout: " + message


def test_a_layout_that_does_not_fit_the_tensor_names_it():
    x = np.ones((4, 64), np.float32)
    cases = [
        (dict(layout=BlockLayout((2,))), "quantize: layout.axes (2,) is out of range for 2 dimensions"),
        (dict(layout=BlockLayout((-1, -2))), "quantize: layout.axes (-1, -2) must name 1 axis, one per dimension of MXFP4's block (32,)"),
        (dict(axis=0, layout=BlockLayout((-1,))), "quantize: axis=0 disagrees with layout.axes (-1,); give one of them"),
        (dict(layout=BlockLayout(scales="swizzled_128x4", batch_dims=2)), "quantize: layout.batch_dims 2 exceeds the 1 axes outside the block"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError) as info:
            codecs.quantize(x, DType.MXFP4, **kwargs)
        assert str(info.value) == message
    with pytest.raises(ValueError) as info:
        codecs.quantize(np.ones((2, 256, 256), np.float32), FP8_128,
                        layout=BlockLayout(scales="swizzled_128x4"))
    assert str(info.value) == ("quantize: layout.scales 'swizzled_128x4' holds 8-bit "
                               "scales; FP8_E4M3_128x128's are Float32 (32 bits)")


# ---- without a layout: today's bytes ------------------------------------------------------

def test_the_default_layout_is_todays():
    # the worked example of the documentation, byte for byte
    x = np.array([[0.5, -1.0, 1.5, 6.0, 0.75, 12.0, -3.0, 0.1] * 4
                  + [0.25, -0.5, 2.0, 3.0]], dtype=np.float32)
    q = codecs.quantize(x, DType.MXFP4)
    assert q.planes[0].tobytes().hex(" ") == (
        "90 52 71 0b 90 52 71 0b 90 52 71 0b 90 52 71 0b a1 76")
    assert q.planes[1].tobytes().hex(" ") == "80 7e"
    assert q.layout == BlockLayout((1,))
    assert codecs.quantize(x, DType.MXFP4, layout=BlockLayout((-1,))).planes[1].tolist() == \
        q.planes[1].tolist()
    # axis=a is axes=(a,): blocks along axis 0, planes with that axis last
    y = np.random.default_rng(1).standard_normal((40, 3)).astype(np.float32)
    a = codecs.quantize(y, DType.MXFP4, axis=0)
    b = codecs.quantize(y, DType.MXFP4, layout=BlockLayout((0,)))
    assert _planes_equal(a, b) and a.planes[1].shape == (3, 2)


# ---- the planes -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype,shape,layout,elements,scales", [
    # row-wise and column-wise MXFP8 of (M, K) = (96, 200)
    (DType.MXFP8_E4M3, (96, 200), BlockLayout((-1,)), (96, 200), (96, 7)),
    (DType.MXFP8_E4M3, (96, 200), BlockLayout((-2,), order="logical"), (96, 200), (3, 200)),
    (DType.MXFP8_E4M3, (96, 200), BlockLayout((-2,)), (200, 96), (200, 3)),
    # DeepSeek's weight_scale_inv of (N, K)
    (FP8_128, (300, 520), None, (300, 520), (3, 5)),
    (NVFP4_16, (48, 64), None, (48, 32), (3, 4)),
    (NVFP4_16, (48, 64), BlockLayout(expand=True), (48, 32), (48, 4)),
    # matrix layouts: R rows of C blocks
    (DType.MXFP8_E4M3, (96, 200), BlockLayout(scales="padded_k_major"), (96, 200), (96, 8)),
    (DType.MXFP8_E4M3, (96, 200), BlockLayout(scales="padded_mn_major"), (96, 200), (7, 96)),
    (FP8_1x128, (3, 5, 300), BlockLayout(scales="padded_mn_major"), (3, 5, 300), (3, 16)),
    (FP8_1x128, (3, 5, 300), BlockLayout(scales="padded_mn_major", batch_dims=1),
     (3, 5, 300), (3, 3, 8)),
    (DType.MXFP8_E4M3, (96, 200), BlockLayout(scales="padded_mn_major", group=4),
     (96, 200), (2, 384)),
    (DType.MXFP8_E4M3, (300, 200), BlockLayout(scales="swizzled_128x4"), (300, 200),
     (96, 32)),
    (NVFP4_16, (48, 64), BlockLayout(scales="swizzled_128x4"), (48, 32), (32, 16)),
])
def test_plane_shapes(dtype, shape, layout, elements, scales):
    shapes = codecs.plane_shapes(dtype, shape, layout=layout)
    assert shapes[:2] == (elements, scales)
    q = codecs.quantize(np.ones(shape, np.float32), dtype, layout=layout)
    assert tuple(p.shape for p in q.planes) == shapes
    nbytes = sum(p.nbytes for p in q.planes)
    assert codecs.storage_nbytes(dtype, shape, layout=layout) == nbytes


def _scale_grid(dtype, x, axes):
    """The compact scales of x in blocks along `axes` (block order), as a
    matrix per the matrix layouts' reading: rows over the other axes (then
    the first blocked axis), columns over the last blocked axis."""
    q = codecs.quantize(x, dtype, layout=BlockLayout(axes))
    return q.planes[1]


def _swizzle_by_formula(S):
    R, C = S.shape
    out = np.zeros(32 * -(-R // 128) * 16 * -(-C // 4), S.dtype)
    for r in range(R):
        for c in range(C):
            off = (((r // 128) * -(-C // 4) + c // 4) * 512 + (r % 32) * 16
                   + ((r % 128) // 32) * 4 + c % 4)
            out[off] = S[r, c]
    return out.reshape(32 * -(-R // 128), 16 * -(-C // 4))


def _swizzle_by_reshapes(S):
    """128x4 tiles, tile rows outermost; within a tile, rows r, r+32, r+64,
    r+96 side by side: how torchao's to_blocked and TE's swizzle build it."""
    R, C = S.shape
    Rp, Cp = _ru(R, 128), _ru(C, 4)
    padded = np.zeros((Rp, Cp), S.dtype)
    padded[:R, :C] = S
    tiles = padded.reshape(Rp // 128, 128, Cp // 4, 4).transpose(0, 2, 1, 3)
    tiles = tiles.reshape(-1, 4, 32, 4).transpose(0, 2, 1, 3).reshape(-1, 32, 16)
    return tiles.reshape(-1)


@settings(max_examples=40, deadline=None)
@given(rows=st.integers(1, 300), cols=st.integers(1, 12), seed=st.integers(0, 1 << 30))
def test_the_swizzle_is_to_blocked_on_every_matrix(rows, cols, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, cols * 32)) * np.exp2(rng.integers(-8, 8, (rows, cols * 32)))
    x = x.astype(np.float32)
    S = _scale_grid(DType.MXFP8_E4M3, x, (-1,))
    q = codecs.quantize(x, DType.MXFP8_E4M3, layout=BlockLayout(scales="swizzled_128x4"))
    want = _swizzle_by_formula(S)
    assert np.array_equal(q.planes[1], want)
    assert np.array_equal(_swizzle_by_reshapes(S).reshape(-1), want.reshape(-1))


@settings(max_examples=40, deadline=None)
@given(rows=st.integers(1, 70), cols=st.integers(1, 9), align=st.integers(1, 8),
       group=st.integers(1, 4), seed=st.integers(0, 1 << 30))
def test_the_padded_layouts_follow_their_formulas(rows, cols, align, group, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, cols * 32 - 5)).astype(np.float32)
    S = _scale_grid(DType.MXFP8_E4M3, x, (-1,))
    R, C = S.shape
    k = codecs.quantize(x, DType.MXFP8_E4M3,
                        layout=BlockLayout(scales="padded_k_major", align=align)).planes[1]
    want = np.zeros((R, _ru(C, align)), np.uint8)
    want[:, :C] = S
    assert np.array_equal(k, want)
    mn = codecs.quantize(x, DType.MXFP8_E4M3, layout=BlockLayout(
        scales="padded_mn_major", align=align, group=group)).planes[1]
    flat = np.zeros(-(-C // group) * _ru(R, align) * group, np.uint8)
    for r in range(R):
        for c in range(C):
            flat[((c // group) * _ru(R, align) + r) * group + c % group] = S[r, c]
    assert np.array_equal(mn.reshape(-1), flat)


def test_experts_are_padded_each_on_its_own():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 70, 96)).astype(np.float32)     # (E, N, K)
    q = codecs.quantize(x, DType.MXFP8_E4M3,
                        layout=BlockLayout(scales="swizzled_128x4", batch_dims=1))
    assert q.planes[1].shape == (3, 32, 16)
    for e in range(3):
        alone = codecs.quantize(x[e], DType.MXFP8_E4M3,
                                layout=BlockLayout(scales="swizzled_128x4"))
        assert np.array_equal(q.planes[1][e], alone.planes[1])
    # batch_dims=0: every row of every expert in one matrix (R = E*N)
    flat = codecs.quantize(x, DType.MXFP8_E4M3, layout=BlockLayout(scales="swizzled_128x4"))
    assert flat.planes[1].shape == (64, 16)


def test_padding_is_zero_bytes():
    x = np.full((5, 40), 3.0, np.float32)
    for layout in (BlockLayout(scales="padded_k_major"), BlockLayout(scales="padded_mn_major"),
                   BlockLayout(scales="swizzled_128x4")):
        q = codecs.quantize(x, DType.MXFP8_E4M3, layout=layout)
        assert np.count_nonzero(q.planes[1]) == 5 * 2, layout


def test_scale_index_is_where_quantize_puts_each_scale():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((150, 5, 100)).astype(np.float32)
    for layout in (BlockLayout(), BlockLayout((-2,), order="logical"),
                   BlockLayout(scales="swizzled_128x4", batch_dims=1),
                   BlockLayout(scales="padded_mn_major", group=4),
                   BlockLayout(scales="padded_k_major", align=3)):
        q = codecs.quantize(x, DType.MXFP8_E4M3, layout=layout)
        compact = codecs.quantize(x, DType.MXFP8_E4M3, layout=BlockLayout(layout.axes))
        for index in [(0, 0, 0), (149, 4, 99), (128, 2, 33), (7, 1, 64), (131, 3, 95)]:
            at = codecs.scale_index(DType.MXFP8_E4M3, x.shape, index, layout=layout)
            ref = codecs.scale_index(DType.MXFP8_E4M3, x.shape, index,
                                     layout=BlockLayout(layout.axes))
            assert q.planes[1][at] == compact.planes[1][ref], (layout, index)


# ---- N-D blocks ----------------------------------------------------------------------------

def _nvfp4_2d_model(W):
    """NVFP4 16x16 by the formulas: g from the tensor's finite amax, each
    block's E4M3 scale from its amax under g, elements fl(x * fl(fl(1/g)/s))."""
    from support.codec_model import FloatModel
    from stride_weave.numerics import numeric_info
    e2m1, e4m3 = FloatModel(numeric_info(DType.E2M1)), FloatModel(numeric_info(DType.E4M3))
    f32 = np.float32
    amax_t = f32(np.abs(W[np.isfinite(W)]).max()) if np.isfinite(W).any() else f32(0)
    g = amax_t / f32(6.0 * 448.0) if amax_t > 0 else f32(1.0)
    N, K = W.shape
    scales = np.zeros((-(-N // 16), -(-K // 16)), np.uint8)
    codes = np.zeros(W.shape, np.uint8)
    for bi in range(scales.shape[0]):
        for bj in range(scales.shape[1]):
            blk = W[bi * 16:(bi + 1) * 16, bj * 16:(bj + 1) * 16]
            a = f32(np.abs(blk).max())
            s = min(max(f32(f32(a / f32(6.0)) / g), f32(2.0 ** -6)), f32(448.0))
            sc = e4m3.encode(float(s))
            dec = f32(float(e4m3.decode(sc)))
            recip = f32(f32(f32(1.0) / g) / dec)
            scales[bi, bj] = sc
            for (i, j), v in np.ndenumerate(blk):
                y = float(f32(f32(v) * recip))
                codes[bi * 16 + i, bj * 16 + j] = e2m1.encode(y, overflow="saturate")
    return scales, codes


def test_a_16x16_block_follows_the_nvfp4_formula():
    rng = np.random.default_rng(11)
    W = (rng.standard_normal((40, 48)) * np.exp2(rng.integers(-6, 6, (40, 48)))).astype(
        np.float32)
    q = codecs.quantize(W, NVFP4_16)
    scales, codes = _nvfp4_2d_model(W)
    assert np.array_equal(q.planes[1], scales)
    assert np.array_equal(_codes(q), codes)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 70), k=st.integers(1, 70), seed=st.integers(0, 1 << 30),
       fmt=st.sampled_from([NVFP4_16, MXFP8_32, FP8_128]))
def test_a_2d_block_planes_transpose_exactly_with_the_tensor(n, k, seed, fmt):
    rng = np.random.default_rng(seed)
    W = (rng.standard_normal((n, k)) * np.exp2(rng.integers(-20, 20, (n, k)))).astype(
        np.float32)
    a = codecs.quantize(W, fmt)                                  # axes (-2, -1)
    b = codecs.quantize(W, fmt, layout=BlockLayout((-1, -2)))   # on the transpose
    t = codecs.quantize(np.ascontiguousarray(W.T), fmt)
    assert np.array_equal(b.planes[1], a.planes[1].T)
    assert np.array_equal(_codes(b), _codes(a).T)
    assert np.array_equal(t.planes[1], a.planes[1].T)
    assert np.array_equal(_codes(t), _codes(a).T)
    assert np.array_equal(codecs.dequantize(b), codecs.dequantize(a))


def test_column_wise_blocks_are_row_wise_blocks_of_the_transpose():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((70, 50)).astype(np.float32)
    col = codecs.quantize(x, DType.MXFP8_E4M3, layout=BlockLayout((-2,), order="logical"))
    row = codecs.quantize(np.ascontiguousarray(x.T), DType.MXFP8_E4M3)
    assert np.array_equal(col.planes[1], row.planes[1].T)
    assert np.array_equal(_codes(col), _codes(row).T)


def test_a_3d_block():
    fmt = BlockScaledDType(unique_name("Cube"), element=DType.E4M3,
                           levels=[Level(DType.E8M0, (2, 4, 8))])
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 5, 9, 20)).astype(np.float32)
    q = codecs.quantize(x, fmt)
    assert q.planes[1].shape == (3, 3, 3, 3)
    back = codecs.dequantize(q)
    # each block's scale from its own largest magnitude (floor rule), its
    # elements x / 2**se in E4M3, saturating
    for b in np.ndindex(3, 3, 3, 3):
        where = (b[0], slice(b[1] * 2, (b[1] + 1) * 2), slice(b[2] * 4, (b[2] + 1) * 4),
                 slice(b[3] * 8, (b[3] + 1) * 8))
        blk = x[where]
        se = math.floor(math.log2(float(np.abs(blk).max()))) - 8
        assert int(q.planes[1][b]) == se + 127
        codes = codecs.encode(blk.astype(np.float64) * 2.0 ** -se, DType.E4M3,
                              overflow="saturate")
        assert np.array_equal(back[where], codecs.decode(codes, DType.E4M3) * np.float32(2.0 ** se))


# ---- relayout --------------------------------------------------------------------------

LAYOUTS = [BlockLayout(), BlockLayout(order="logical"), BlockLayout(expand=True),
           BlockLayout(scales="padded_k_major"), BlockLayout(scales="padded_mn_major"),
           BlockLayout(scales="padded_mn_major", group=4, align=8),
           BlockLayout(scales="swizzled_128x4"),
           BlockLayout(scales="swizzled_128x4", batch_dims=1)]


@settings(max_examples=40, deadline=None)
@given(fmt=st.sampled_from([DType.MXFP4, DType.MXFP8_E4M3, NVFP4_16, DType.NVFP4]),
       first=st.sampled_from(LAYOUTS), second=st.sampled_from(LAYOUTS),
       shape=st.tuples(st.integers(1, 3), st.integers(1, 40), st.integers(1, 70)),
       seed=st.integers(0, 1 << 30), packed=st.booleans())
def test_relayout_is_lossless_and_equals_quantizing_in_the_layout(fmt, first, second, shape,
                                                                  seed, packed):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    a = codecs.quantize(x, fmt, layout=first, packed=packed)
    b = codecs.quantize(x, fmt, layout=second, packed=packed)
    moved = codecs.relayout(a, second)
    assert moved.layout == b.layout
    assert _planes_equal(moved, b)
    assert _planes_equal(codecs.relayout(moved, first), a)
    assert np.array_equal(codecs.dequantize(a), codecs.dequantize(b))


def test_relayout_refuses_other_blocks():
    q = codecs.quantize(np.ones((32, 64), np.float32), DType.MXFP8_E4M3)
    with pytest.raises(ValueError) as info:
        codecs.relayout(q, BlockLayout((-2,)))
    assert str(info.value).startswith("relayout: layout.axes (-2,) puts MXFP8_E4M3's block")
    rect = BlockScaledDType(unique_name("Rect"), element=DType.E4M3,
                            levels=[Level(DType.E8M0, (2, 4))])
    q = codecs.quantize(np.ones((8, 8), np.float32), rect)
    with pytest.raises(ValueError, match="other blocks need quantize"):
        codecs.relayout(q, BlockLayout((-1, -2)))


def test_compacting_expanded_copies_that_differ_names_the_block():
    q = codecs.quantize(np.ones((32, 32), np.float32), NVFP4_16, layout=BlockLayout(
        expand=True))
    planes = list(q.planes)
    planes[1] = planes[1].copy()
    planes[1][17, 1] ^= 1                   # block (1, 1), its second row
    bad = codecs.Quantized(NVFP4_16, q.shape, planes, layout=q.layout)
    with pytest.raises(ValueError) as info:
        codecs.relayout(bad, BlockLayout())
    assert "copies of block (1, 1)" in str(info.value)
    # dequantize reads each row's own copy
    back = codecs.dequantize(bad)
    assert not np.array_equal(back[17], back[16]) and np.array_equal(back[18], back[16])


# ---- scales ------------------------------------------------------------------------------

def test_power_of_two_rules_on_float_scale_formats():
    rng = np.random.default_rng(8)
    x = (rng.standard_normal((256, 256)) * 1e3).astype(np.float32)
    q = codecs.quantize(x, FP8_128, scale_rule="rceil")
    s = codecs.decode(q.planes[1], DType.Float32, out_dtype="float64")
    k = np.log2(s)
    assert np.array_equal(k, np.round(k))                     # powers of two
    for bi, bj in np.ndindex(2, 2):
        amax = np.abs(x[bi * 128:(bi + 1) * 128, bj * 128:(bj + 1) * 128]).max()
        kk = math.ceil(math.log2(Fraction(float(amax)) / 448))
        assert s[bi, bj] == 2.0 ** kk
    # the elements are x * 2**-k exactly, then E4M3
    want = codecs.encode(x[:128, :128] / s[0, 0], DType.E4M3, overflow="saturate")
    assert np.array_equal(_codes(q)[:128, :128], want)
    # clamped to the scale format's normal powers of two
    tiny = codecs.quantize(np.full((128, 128), 1e-45, np.float32), FP8_128, scale_rule="floor")
    assert codecs.decode(tiny.planes[1], DType.Float32, out_dtype="float64")[0, 0] == 2.0 ** -126
    e4m3 = codecs.quantize(np.full((1, 16), 1e30, np.float32), BlockScaledDType(
        unique_name("E4M3Pow"), element=DType.E2M1, levels=[Level(DType.E4M3, 16)]),
        scale_rule="floor")
    assert codecs.decode(e4m3.planes[1], DType.E4M3)[0, 0] == 256.0    # 2**8


def test_amax_floor():
    # DeepSeek-V3.1's activations: amax floored at 1e-4, an all-zero block
    # gets s = fl(1e-4 / 448)
    x = np.zeros((1, 256), np.float32)
    x[0, 128:] = 1.0
    q = codecs.quantize(x, FP8_1x128, amax_floor=1e-4)
    s = codecs.decode(q.planes[1], DType.Float32)
    assert s[0, 0] == np.float32(np.float32(1e-4) / np.float32(448.0))
    assert s[0, 1] == np.float32(1.0) / np.float32(448.0)
    assert not _codes(q)[0, :128].any()
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="amax_floor must be a finite float >= 0"):
            codecs.quantize(x, FP8_1x128, amax_floor=bad)
    with pytest.raises(TypeError, match="amax_floor must be a float, got str"):
        codecs.quantize(x, FP8_1x128, amax_floor="1e-4")


def test_e4m3_block_scales_are_unsigned():
    rng = np.random.default_rng(9)
    q = codecs.quantize(-np.abs(rng.standard_normal((64, 64))).astype(np.float32), DType.NVFP4)
    assert not (q.planes[1] & 0x80).any()
    planes = list(q.planes)
    planes[1] = planes[1].copy()
    planes[1][3, 2] |= 0x80                     # a negative scale: invalid
    bad = codecs.Quantized(DType.NVFP4, q.shape, planes)
    back = codecs.dequantize(bad)
    assert np.isnan(back[3, 32:48]).all() and not np.isnan(back[3, :32]).any()
    with pytest.raises(ValueError) as info:
        codecs.dequantize(bad, nonfinite_scales="error")
    assert str(info.value) == ("dequantize: scales[0] at flat index 14 is not a finite "
                               "positive scale, and nonfinite_scales='error' was given")


# ---- the references' differences, each with its example --------------------------------------

def test_difference_deepseek_divides_where_the_codecs_multiply_by_the_reciprocal():
    amax, x = 1.3847570419311523, -1.1374789476394653
    row = np.zeros((1, 128), np.float32)
    row[0, 0], row[0, 1] = amax, x
    q = codecs.quantize(row, FP8_1x128)
    # fl(x * fl(1 / s)) is -368.0, a tie between 352 and 384: 384
    assert int(_codes(q)[0, 1]) == 0xFC
    s = np.float32(np.float32(amax) / np.float32(448.0))
    # DeepSeek's act_quant: y = x / s (-367.99997), then the cast: 352
    divided = codecs.encode(np.array([np.float32(x) / s]), DType.E4M3)[0]
    assert int(divided) == 0xFB


def test_difference_transformer_engine_power_of_two_scales():
    # TE's power-of-two scale is 1 / 2**floor(log2(fl(448 / amax))): the
    # rceil rule for every amax from 448 * 2**-126 up, and not below
    def te_scale(amax):
        with np.errstate(over="ignore"):            # TE's float32 quotient may be inf
            q = np.float32(np.float32(448.0) / np.float32(amax))
        q = min(q, np.finfo(np.float32).max)        # TE: an infinite scale is the largest
        return 2.0 ** -math.floor(math.log2(q))
    for amax in (448 * 2.0 ** -126, 1.0, 3.5, 448.0, 1e30, 2.0 ** -100):
        row = np.full((1, 128), amax, np.float32)
        ours = codecs.decode(codecs.quantize(row, FP8_1x128, scale_rule="rceil").planes[1],
                             DType.Float32, out_dtype="float64")[0, 0]
        assert ours == te_scale(amax), amax
    below = np.full((1, 128), 2.0 ** -130, np.float32)
    ours = codecs.decode(codecs.quantize(below, FP8_1x128, scale_rule="rceil").planes[1],
                         DType.Float32, out_dtype="float64")[0, 0]
    assert ours == 2.0 ** -126 and te_scale(2.0 ** -130) == 2.0 ** -127


def test_difference_te_nvfp4_does_not_clamp_block_scales():
    q = codecs.quantize(np.zeros((16, 32), np.float32), DType.NVFP4)
    assert q.planes[1].tolist() == [[0x08, 0x08]] * 16     # 2**-6, where TE stores 0x00


# ---- rotations ---------------------------------------------------------------------------

def _sylvester(d):
    h = np.array([[1.0]])
    while h.shape[0] < d:
        h = np.block([[h, h], [h, -h]])
    return h


@settings(max_examples=30, deadline=None)
@given(d=st.sampled_from([1, 2, 4, 8, 16, 32]), groups=st.integers(1, 4),
       seed=st.integers(0, 1 << 30))
def test_hadamard_is_the_scaled_sylvester_product(d, groups, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((3, groups * d)).astype(np.float32)
    signs = rng.choice([-1.0, 1.0], d)
    got = codecs.hadamard(x, d, signs=signs)
    v = x.astype(np.float64).reshape(3, groups, d) * signs
    # the butterfly adds in a fixed order: an exact product would differ only
    # in float64's last bits, which one rounding to float32 absorbs here
    exact = (v @ _sylvester(d)) * (1.0 / math.sqrt(d))
    assert got.dtype == np.float32
    assert np.allclose(got, exact.reshape(3, -1).astype(np.float32), rtol=1e-6, atol=1e-7)
    wide = codecs.hadamard(x.astype(np.float64), d, signs=signs)
    assert wide.dtype == np.float64 and np.allclose(wide, exact.reshape(3, -1), rtol=1e-12)


def test_hadamard_butterfly_order_and_arguments():
    x = np.arange(16, dtype=np.float64)
    # stage h = 1, 2, 4, 8 in float64, then times 1/4
    y = x.copy()
    h = 1
    while h < 16:
        for i in range(16):
            if i & h == 0:
                y[i], y[i + h] = y[i] + y[i + h], y[i] - y[i + h]
        h *= 2
    assert np.array_equal(codecs.hadamard(x), y * 0.25)
    assert np.array_equal(codecs.hadamard(x.reshape(16, 1), axis=0).reshape(16), y * 0.25)
    with pytest.raises(ValueError, match="axis -1 has length 16, not a multiple of d=32"):
        codecs.hadamard(x, 32)
    with pytest.raises(ValueError, match="d must be a power of two, got 12"):
        codecs.hadamard(x, 12)
    with pytest.raises(ValueError, match="signs must each be 1 or -1"):
        codecs.hadamard(x, signs=[0.5] * 16)
    with pytest.raises(ValueError, match="signs must hold d=16 values"):
        codecs.hadamard(x, signs=[1.0] * 8)


# ---- storing ----------------------------------------------------------------------------

@pytest.mark.parametrize("layout", [None, BlockLayout((-1, -2), scales="swizzled_128x4")])
def test_a_quantized_tensor_pickles_and_stores_as_named_arrays(layout, tmp_path):
    x = np.random.default_rng(5).standard_normal((48, 64)).astype(np.float32)
    q = codecs.quantize(x, NVFP4_16, layout=layout)
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        back = pickle.loads(pickle.dumps(q, protocol))
        assert back.dtype is q.dtype and back.layout == q.layout and _planes_equal(back, q)
    arrays, metadata = q.to_arrays(prefix="w.")
    assert sorted(arrays) == ["w.elements", "w.scales.0", "w.scales.1"]
    assert metadata["w.plane_dtypes"] == '["E2M1", "E4M3", "Float32"]'
    assert all(isinstance(v, str) for v in metadata.values())
    np.savez(tmp_path / "q.npz", **arrays)
    with np.load(tmp_path / "q.npz") as stored:
        back = codecs.Quantized.from_arrays(dict(stored), metadata, prefix="w.")
    assert _planes_equal(back, q) and back.layout == q.layout
    assert np.array_equal(codecs.dequantize(back), codecs.dequantize(q))
    # the whole-tensor scale's meaning, without reading float bits by hand
    assert q.scale_values(1) == codecs.decode(q.planes[2], DType.Float32, out_dtype="float64")


def test_stored_arrays_are_checked_as_the_constructor_checks():
    q = codecs.quantize(np.ones((4, 32), np.float32), DType.MXFP4)
    arrays, metadata = q.to_arrays()
    with pytest.raises(ValueError, match="plane 1 must have shape"):
        codecs.Quantized.from_arrays({**arrays, "scales.0": np.zeros((4, 2), np.uint8)},
                                     metadata)
    with pytest.raises(ValueError, match="arrays has no 'elements'"):
        codecs.Quantized.from_arrays({"scales.0": arrays["scales.0"]}, metadata)
    with pytest.raises(LookupError):
        codecs.Quantized.from_arrays(arrays, {**metadata, "dtype": unique_name("Gone")})
    with pytest.raises(ValueError, match="another structure"):
        codecs.Quantized.from_arrays(arrays, {**metadata, "dtype": "MXFP6_E2M3"})
    with pytest.raises(ValueError, match="metadata 'shape' is not valid JSON"):
        codecs.Quantized.from_arrays(arrays, {**metadata, "shape": "[4,"})
    with pytest.raises(TypeError, match="metadata 'packed' must be a str, got int"):
        codecs.Quantized.from_arrays(arrays, {**metadata, "packed": 1})
