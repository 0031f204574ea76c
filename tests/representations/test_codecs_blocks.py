"""stride_weave.codecs.quantize/dequantize: block-scaled formats against the
exact model of tests/support/codec_model.py (written from the OCP MX v1.0
and NVIDIA NVFP4 formulas) for every scale rule, against torchao's CPU
reference where torch and torchao are installed, and the edges where the
references disagree (each documented in docs/codecs.md)."""
import math

import pytest

from support import unique_name
from support.codec_model import (FloatModel, quantize_float_scaled, quantize_mx_block,
                                 quantize_nvfp4, whole_scale)
from stride_weave import codecs, interop
from stride_weave.dtypes import BlockScaledDType, DType, Level, SimpleDType, Whole
from stride_weave.numerics import NumericInfo, numeric_info, register_numeric_info

np = pytest.importorskip("numpy")

MX = [DType.MXFP4, DType.MXFP6_E2M3, DType.MXFP6_E3M2, DType.MXFP8_E4M3, DType.MXFP8_E5M2,
      DType.MXINT8]
RULES = ["floor", "ceil", "rceil", "even"]


def _model_elem(dtype):
    record = numeric_info(dtype.element)
    return dtype.element.bits if record.kind == "int" else FloatModel(record)


def _blocks(seed, rows=8, length=70, spread=20):
    """Rows of normal-ish values over a wide range of magnitudes, with
    values at and just below powers of two, and a partial last block."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, length)) * np.exp2(rng.integers(-spread, spread,
                                                                    (rows, 1)))
    x[0, :4] = [4.0, np.nextafter(4.0, 0), 2.0 ** -3, -6.0]
    x[1, :32] = np.nextafter(np.float32(2.0 ** 5), np.float32(0))
    x[2, 32:64] = 0.0
    return x.astype(np.float32)


def _unpacked_codes(q):
    assert not q.packed
    return q.planes[0]


@pytest.mark.parametrize("dtype", MX, ids=lambda d: d.name)
@pytest.mark.parametrize("rule", RULES)
def test_mx_matches_the_ocp_formula(dtype, rule):
    x = _blocks(hash((dtype.name, rule)) % 1000)
    x[3, 5] = np.inf
    x[4, 40] = np.nan
    q = codecs.quantize(x, dtype, scale_rule=rule, packed=False)
    elem = _model_elem(dtype)
    for r, row in enumerate(x.tolist()):
        for j, start in enumerate(range(0, len(row), 32)):
            scale, codes = quantize_mx_block(row[start:start + 32], elem, rule)
            assert q.planes[1][r, j] == scale, (r, j)
            assert _unpacked_codes(q)[r, start:start + 32].tolist() == codes, (r, j)
    # packed: the same codes, packed
    packed = codecs.quantize(x, dtype, scale_rule=rule)
    for r in range(x.shape[0]):
        assert np.array_equal(packed.planes[0][r],
                              codecs.pack(q.planes[0][r], dtype.element))


@pytest.mark.parametrize("rule", RULES)
def test_mx_float64_is_quantized_from_its_own_bits(rule):
    rng = np.random.default_rng(11)
    x = rng.standard_normal((4, 64)) * 1e3
    x[0, 0] = 1.0 + 2.0 ** -40          # a float32 copy would be 1.0
    q = codecs.quantize(x, DType.MXFP8_E4M3, scale_rule=rule, packed=False)
    elem = _model_elem(DType.MXFP8_E4M3)
    for r, row in enumerate(x.tolist()):
        for j in range(2):
            scale, codes = quantize_mx_block(row[32 * j:32 * j + 32], elem, rule)
            assert q.planes[1][r, j] == scale
            assert q.planes[0][r, 32 * j:32 * j + 32].tolist() == codes


def test_shared_exponent_comes_from_the_exponent_bits():
    # (1 - 2**-24) * 2**k: a float32 log2 rounds it up to k
    for k in (-100, -3, 0, 5, 100):
        v = np.float32(np.nextafter(np.float32(2.0 ** k), np.float32(0)))
        q = codecs.quantize(np.full(32, v, np.float32), DType.MXFP8_E4M3)
        assert q.planes[1][0] == (k - 1) - 8 + 127
        q = codecs.quantize(np.full(32, 2.0 ** k, np.float32), DType.MXFP8_E4M3)
        assert q.planes[1][0] == k - 8 + 127


def test_block_edges_follow_ocp():
    x = np.zeros((3, 32), np.float32)
    x[1, 3] = np.nan
    x[2, 0] = -np.inf
    q = codecs.quantize(x, DType.MXFP8_E4M3, packed=False)
    assert q.planes[1].ravel().tolist() == [0, 0xFF, 0xFF]   # 2**-127, NaN, NaN
    assert q.planes[0][0].tolist() == [0] * 32
    assert q.planes[0][1].tolist() == [0x7F] * 32            # the element's NaN
    values = codecs.dequantize(q)
    assert np.all(values[0] == 0) and np.all(np.isnan(values[1:]))
    with pytest.raises(ValueError, match=r"scales\[0\] at flat index 1 is not a finite "
                                         "positive scale"):
        codecs.dequantize(q, nonfinite_scales="error")


def test_partial_last_block_and_axis():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((37, 3, 5)).astype(np.float32)
    q = codecs.quantize(x, DType.MXFP4, axis=0)
    assert q.axis == 0 and q.shape == (37, 3, 5)
    assert [p.shape for p in q.planes] == [(3, 5, 19), (3, 5, 2)]
    assert q.nbytes == (3 * 5 * 19, 3 * 5 * 2)
    moved = codecs.quantize(np.ascontiguousarray(np.moveaxis(x, 0, -1)), DType.MXFP4)
    assert all(np.array_equal(a, b) for a, b in zip(q.planes, moved.planes))
    back = codecs.dequantize(q)
    assert back.shape == x.shape
    assert np.array_equal(back, np.moveaxis(codecs.dequantize(moved), -1, 0))


@pytest.mark.parametrize("source", [np.float32, np.float64], ids=lambda t: t.__name__)
@pytest.mark.parametrize("dtype", [DType.MXFP4, DType.MXFP8_E4M3, DType.MXINT8, DType.NVFP4],
                         ids=lambda d: d.name)
def test_values_at_an_odd_address_give_the_same_planes(dtype, source):
    # the block passes read values as floats or doubles: a view at an odd
    # offset is read through a copy (the sanitizer build aborts on a
    # misaligned load)
    x = (np.random.default_rng(8).standard_normal((8, 1000)) * 10).astype(source)
    raw = bytearray(x.nbytes + 1)
    odd = np.frombuffer(raw, source, count=x.size, offset=1).reshape(x.shape)
    odd[...] = x
    assert odd.ctypes.data % 2 == 1
    want = codecs.quantize(x, dtype)
    for threads in (1, 2):
        got = codecs.quantize(odd, dtype, threads=threads)
        assert all(np.array_equal(a, b) for a, b in zip(got.planes, want.planes))


@pytest.mark.parametrize("dtype", MX + [DType.NVFP4], ids=lambda d: d.name)
def test_round_trip_is_exact_for_representable_values(dtype):
    rng = np.random.default_rng(9)
    elem = numeric_info(dtype.element)
    codes = rng.integers(0, 2 ** dtype.element.bits, (6, 96), dtype=np.uint64).astype(np.uint8)
    if elem.kind == "int":
        codes[codes == 0x80] = 0x81     # -2 is not used: elements saturate symmetrically
    values = codecs.decode(codes, dtype.element, out_dtype="float64")
    if elem.kind == "int":
        values = values / 2 ** (dtype.element.bits - 2)
    values[~np.isfinite(values)] = 0
    scale = np.exp2(rng.integers(-20, 20, (6, 1)).astype(np.float64))
    if dtype is DType.NVFP4:
        # NVFP4 represents e2m1 * e4m3 * g exactly where the recipe's steps
        # are exact: g = 1 (the tensor's largest value 6 * 448) and block
        # scales that are powers of two
        values[:, ::16] = 6.0
        scale = np.exp2(rng.integers(-6, 8, (6, 6)).astype(np.float64)).repeat(16, axis=1)
        scale[0, :16] = 448.0
    x = (values * scale).astype(np.float32)
    q = codecs.quantize(x, dtype)
    assert np.array_equal(codecs.dequantize(q), x)


def test_nvfp4_matches_nvidias_recipe():
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((6, 48)) * np.exp2(rng.integers(-12, 12, (6, 1)))).astype(
        np.float32)
    x[2, 20] = np.nan
    x[3, 0] = np.inf
    x[4, 16:32] = 0
    q = codecs.quantize(x, DType.NVFP4, packed=False)
    e2m1, e4m3 = FloatModel(numeric_info(DType.E2M1)), FloatModel(numeric_info(DType.E4M3))
    g, scales, elements = quantize_nvfp4(x.tolist(), e2m1, e4m3)
    assert q.planes[2].shape == ()
    assert np.uint32(q.planes[2]).view(np.float32) == np.float32(g)
    assert q.planes[1].tolist() == scales
    assert q.planes[0].tolist() == elements


def test_nvfp4_all_zero_tensor_has_finite_scales():
    q = codecs.quantize(np.zeros((2, 32), np.float32), DType.NVFP4)
    assert np.uint32(q.planes[2]).view(np.float32) == 1.0
    assert np.all(q.planes[1] == 0x08)      # 2**-6, the smallest normal scale
    assert np.array_equal(codecs.dequantize(q), np.zeros((2, 32), np.float32))


@pytest.mark.parametrize("amax", [1e-33, 1e-35, 1e-37, 3e-39, 1e-41])
def test_nvfp4_tiny_tensor_keeps_every_reciprocal_finite(amax):
    """A tensor whose largest magnitude makes amax / (448 * 6) subnormal
    still gets a g whose block reciprocals (1 / g) / s are float32: g is at
    least 2**-120 (2**-126 over the smallest block scale 2**-6), no element
    saturates for want of a finite reciprocal (nothing comes back larger
    than the tensor's largest magnitude, up to the block scale's rounding,
    and no value moves farther than its own magnitude: the ones NVFP4
    cannot reach flush to zero), and the codes are the model's."""
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((2, 64)) * amax).astype(np.float32)
    q = codecs.quantize(x, DType.NVFP4, packed=False)
    g = float(np.uint32(q.planes[2]).view(np.float32))
    assert g >= 2.0 ** -120
    y = codecs.dequantize(q, out_dtype="float64")
    assert np.all(np.abs(y - x) <= np.abs(x) + 1e-300), (x, y)
    assert np.max(np.abs(y)) <= np.max(np.abs(x)) * 1.125
    e2m1, e4m3 = FloatModel(numeric_info(DType.E2M1)), FloatModel(numeric_info(DType.E4M3))
    mg, scales, elements = quantize_nvfp4(x.tolist(), e2m1, e4m3)
    assert mg == g
    assert q.planes[1].tolist() == scales
    assert q.planes[0].tolist() == elements


def test_scale_rule_must_fit_the_scale_format():
    x = np.ones(32, np.float32)
    with pytest.raises(ValueError, match="scale_rule 'amax' does not apply"):
        codecs.quantize(x, DType.MXFP4, scale_rule="amax")
    with pytest.raises(ValueError, match="does not apply.*floats"):
        codecs.quantize(x, DType.NVFP4, scale_rule="floor")
    with pytest.raises(ValueError, match="scale_rule must be one of"):
        codecs.quantize(x, DType.MXFP4, scale_rule="round")


# ---- extension formats: records are all a new format needs -------------------------------

def _extension_format():
    e3m3 = SimpleDType(unique_name("CodecE3M3_"), bits=7, supertype=DType.Floating)
    register_numeric_info(e3m3, NumericInfo.floating(
        "float7_e3m3fn", exponent_bits=3, mantissa_bits=3, bias=3, nan_encoding="none"))
    return BlockScaledDType(unique_name("CodecMX7_"), element=e3m3,
                            levels=[Level(DType.E8M0, 8)])


def test_an_extension_format_quantizes_with_no_new_code():
    dtype = _extension_format()
    x = _blocks(3, rows=4, length=21)
    q = codecs.quantize(x, dtype, packed=False)
    elem = FloatModel(numeric_info(dtype.element))
    for r, row in enumerate(x.tolist()):
        for j, start in enumerate(range(0, 21, 8)):
            scale, codes = quantize_mx_block(row[start:start + 8], elem, "floor")
            assert q.planes[1][r, j] == scale
            assert q.planes[0][r, start:start + 8].tolist() == codes
    packed = codecs.quantize(x, dtype)
    assert packed.planes[0].shape == (4, math.ceil(21 * 7 / 8))
    assert np.array_equal(codecs.dequantize(packed), codecs.dequantize(q))


def test_a_whole_tensor_format_scales_once():
    dtype = BlockScaledDType(unique_name("CodecPerTensor_"), element=DType.E4M3,
                             levels=[Level(DType.E8M0, Whole)])
    x = np.array([[1.0, -288.0], [0.5, 2.0]], np.float32)
    q = codecs.quantize(x, dtype)
    assert [p.shape for p in q.planes] == [(4,), ()]
    assert int(q.planes[1]) == 8 - 8 + 127       # floor(log2(288)) - emax(E4M3)
    assert np.array_equal(codecs.dequantize(q), x)


def test_quantize_an_empty_tensor_in_a_whole_tensor_format():
    fmt = BlockScaledDType(unique_name("WholeOnly_"), element=DType.E4M3,
                           levels=[Level(scale=DType.Float32, block=Whole)])
    assert codecs.plane_shapes(fmt, (0,)) == ((0,), ())
    assert codecs.storage_nbytes(fmt, (4, 0)) == 4
    for shape in ((0,), (4, 0)):
        q = codecs.quantize(np.zeros(shape, dtype=np.float32), fmt)
        assert q.nbytes == (0, 4)
        # the one scale is an all-zero block's: the smallest normal float32
        assert np.uint32(q.planes[1]).view(np.float32) == np.float32(2.0 ** -126)
        assert codecs.dequantize(q).shape == shape


_NARROW_WHOLE = {}


def _narrow_whole_format(whole):
    if whole not in _NARROW_WHOLE:
        _NARROW_WHOLE[whole] = BlockScaledDType(
            unique_name("NarrowWhole_"), element=DType.E2M1,
            levels=[Level(scale=DType.E4M3, block=16), Level(scale=whole, block=Whole)])
    return _NARROW_WHOLE[whole]


def test_quantize_with_a_narrow_whole_tensor_scale_round_trips():
    e2m1, e4m3 = FloatModel(numeric_info(DType.E2M1)), FloatModel(numeric_info(DType.E4M3))
    for whole, amax in ((DType.E4M3, 1.0), (DType.E5M2, 1e-6), (DType.E5M2, 3e4)):
        fmt = _narrow_whole_format(whole)
        x = np.full((2, 32), amax, dtype=np.float32)
        x[:, :16] *= 0.5
        q = codecs.quantize(x, fmt, packed=False)
        back = codecs.dequantize(q)
        # E2M1 under a per-block E4M3 scale: within a quarter of the largest
        # magnitude (a flushed whole-tensor scale gives zeros)
        assert np.all(np.abs(back - x) <= 0.25 * amax), (whole.name, amax, back)
        # the blocks are scaled against the whole-tensor scale as stored
        wm = FloatModel(numeric_info(whole))
        g, scales, elements = quantize_float_scaled(x.tolist(), e2m1, e4m3, 16, wm)
        assert int(q.planes[2]) == whole_scale(g, wm)[0]
        assert q.planes[1].tolist() == scales
        assert q.planes[0].tolist() == elements


# ---- the result and the storage helpers ----------------------------------------------------

def test_planes_follow_interop_planes():
    for dtype in MX + [DType.NVFP4]:
        listed = interop.planes(dtype, lambda simple: simple)
        shapes = codecs.plane_shapes(dtype, (4, 64))
        assert len(shapes) == len(listed)
        q = codecs.quantize(np.ones((4, 64), np.float32), dtype)
        assert [p.shape for p in q.planes] == list(shapes)
        assert sum(q.nbytes) == codecs.storage_nbytes(dtype, (4, 64))
    assert codecs.plane_shapes(DType.NVFP4, (2, 64)) == ((2, 32), (2, 4), ())
    assert codecs.plane_shapes(DType.MXFP6_E2M3, (2, 64)) == ((2, 48), (2, 2))
    assert codecs.plane_shapes(DType.MXFP4, (2, 33), packed=False) == ((2, 33), (2, 2))


def test_storage_helpers():
    assert codecs.storage_nbytes(DType.MXFP4, (1024, 4096)) == 1024 * (2048 + 128)
    assert codecs.storage_nbytes(DType.NVFP4, (16,)) == 8 + 1 + 4
    huge = (2**40, 2**40)
    assert codecs.storage_nbytes(DType.MXFP8_E4M3, huge) == 2**80 + 2**80 // 32
    assert codecs.is_block_aligned(DType.MXFP4, (3, 64))
    assert not codecs.is_block_aligned(DType.MXFP4, (3, 48))
    assert not codecs.is_block_aligned(DType.MXFP6_E3M2, (3, 2))
    assert codecs.is_block_aligned(DType.MXFP4, (64, 3), axis=0)
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        codecs.plane_shapes(DType.MXFP4, (3, 4), axis=2)
    with pytest.raises(ValueError, match="non-negative"):
        codecs.storage_nbytes(DType.MXFP4, (3, -4))
    with pytest.raises(TypeError, match="BlockScaledDType"):
        codecs.storage_nbytes(DType.E4M3, (3, 4))


def test_quantized_checks_its_planes():
    q = codecs.quantize(np.ones((2, 32), np.float32), DType.MXFP4)
    again = codecs.Quantized(DType.MXFP4, (2, 32), q.planes)
    assert np.array_equal(codecs.dequantize(again), codecs.dequantize(q))
    with pytest.raises(ValueError, match="plane 1 must have shape"):
        codecs.Quantized(DType.MXFP4, (2, 32), (q.planes[0], q.planes[1][:1]))
    with pytest.raises(TypeError, match="plane 0 must hold unsigned codes of 1 byte"):
        codecs.Quantized(DType.MXFP4, (2, 32), (q.planes[0].astype(np.uint16), q.planes[1]))
    with pytest.raises(ValueError, match="has 2 planes"):
        codecs.Quantized(DType.MXFP4, (2, 32), q.planes[:1])
    assert "MXFP4" in repr(q)


# ---- torchao's CPU reference ---------------------------------------------------------------

def _torchao():
    torch = pytest.importorskip("torch")
    mx = pytest.importorskip("torchao.prototype.mx_formats.mx_tensor")
    constants = pytest.importorskip("torchao.prototype.mx_formats.constants")
    nvfp4 = pytest.importorskip("torchao.prototype.mx_formats.nvfp4_tensor")
    return torch, mx, constants, nvfp4


def _torchao_mx(torch, mx, constants, dtype, x, rule):
    elem = {DType.MXFP4: torch.float4_e2m1fn_x2, DType.MXFP8_E4M3: torch.float8_e4m3fn,
            DType.MXFP8_E5M2: torch.float8_e5m2, DType.MXFP6_E2M3: constants.DTYPE_FP6_E2M3,
            DType.MXFP6_E3M2: constants.DTYPE_FP6_E3M2}[dtype]
    mode = getattr(mx.ScaleCalculationMode, rule.upper())
    scale, data = mx.to_mx(torch.from_numpy(x), elem, 32, mode)
    data = data.view(torch.uint8).numpy() if data.dtype != torch.uint8 else data.numpy()
    return scale.view(torch.uint8).numpy(), data


@pytest.mark.parametrize("dtype", MX[:-1], ids=lambda d: d.name)
@pytest.mark.parametrize("rule", RULES)
def test_mx_agrees_with_torchao_where_it_computes_the_formula(dtype, rule):
    torch, mx, constants, _ = _torchao()
    rng = np.random.default_rng(1)
    # normal magnitudes, no infinity or NaN, no scale as small as 2**-127
    x = (rng.standard_normal((128, 256)) * np.exp2(rng.uniform(-40, 40, (128, 1)))).astype(
        np.float32)
    x[0, :32] = np.nextafter(np.float32(6.0 * 2**3), np.float32(0))
    scale, data = _torchao_mx(torch, mx, constants, dtype, x, rule)
    q = codecs.quantize(x, dtype, scale_rule=rule, packed=dtype is DType.MXFP4)
    assert np.array_equal(scale, q.planes[1])
    assert np.array_equal(data.reshape(q.planes[0].shape), q.planes[0])


def test_nvfp4_agrees_with_torchao():
    torch, _, _, nvfp4 = _torchao()
    for seed in range(3):
        rng = np.random.default_rng(seed)
        x = (rng.standard_normal((64, 256)) * np.exp2(rng.uniform(-16, 16, (64, 1)))).astype(
            np.float32)
        t = torch.from_numpy(x)
        theirs = nvfp4.NVFP4Tensor.to_nvfp4(
            t, per_tensor_scale=nvfp4.per_tensor_amax_to_scale(t.abs().max()))
        q = codecs.quantize(x, DType.NVFP4)
        assert np.array_equal(theirs.qdata.view(torch.uint8).numpy(), q.planes[0])
        assert np.array_equal(theirs.scale.view(torch.uint8).numpy().reshape(
            q.planes[1].shape), q.planes[1])
        assert theirs.per_tensor_scale.numpy().view(np.uint32) == q.planes[2]


# Where torchao does not compute the formula exactly: each difference of
# docs/codecs.md, pinned.

def test_difference_torchao_gives_a_finite_scale_to_a_block_holding_inf():
    torch, mx, constants, _ = _torchao()
    x = np.ones((1, 32), np.float32)
    x[0, 0] = np.inf
    scale, _ = _torchao_mx(torch, mx, constants, DType.MXFP8_E4M3, x, "floor")
    assert scale[0, 0] == 0xF7            # 2**120: the exponent field of inf, minus 8
    assert codecs.quantize(x, DType.MXFP8_E4M3).planes[1][0, 0] == 0xFF


def test_difference_torchao_rceil_is_off_by_one_just_above_a_power_of_two():
    torch, mx, constants, _ = _torchao()
    # amax / 6 is 2**-57 * (1 + 2**-23), a float32 whose float32 log2 rounds to -57
    amax = np.float32(6.0 * 2.0**-57 * (1 + 2.0**-23))
    x = np.full((1, 32), amax, np.float32)
    scale, _ = _torchao_mx(torch, mx, constants, DType.MXFP4, x, "rceil")
    ours = codecs.quantize(x, DType.MXFP4, scale_rule="rceil").planes[1][0, 0]
    assert (int(scale[0, 0]), int(ours)) == (127 - 57, 127 - 56)
    # the exact rule: the smallest power of two X with amax / X <= 6
    assert amax / 2.0**-56 <= 6 < amax / 2.0**-57


def test_difference_torchao_applies_a_2_to_the_minus_127_scale_as_2_to_the_minus_126():
    torch, mx, constants, _ = _torchao()
    x = np.full((1, 32), 2.0**-130, np.float32)
    scale, data = _torchao_mx(torch, mx, constants, DType.MXFP8_E4M3, x, "floor")
    q = codecs.quantize(x, DType.MXFP8_E4M3)
    assert scale[0, 0] == q.planes[1][0, 0] == 0      # both say 2**-127
    # 2**-130 / 2**-127 = 0.125 (0x28); torchao divides by 2**-126: 0.0625
    assert (int(data[0, 0]), int(q.planes[0][0, 0])) == (0x18, 0x20)


def test_difference_torchao_nvfp4_all_zero_and_nan():
    torch, _, _, nvfp4 = _torchao()
    t = torch.zeros((1, 32))
    theirs = nvfp4.NVFP4Tensor.to_nvfp4(
        t, per_tensor_scale=nvfp4.per_tensor_amax_to_scale(t.abs().max()))
    assert torch.isnan(theirs.scale.float()).all()
    x = np.ones((1, 32), np.float32)
    x[0, 0] = np.nan
    t = torch.from_numpy(x)
    theirs = nvfp4.NVFP4Tensor.to_nvfp4(
        t, per_tensor_scale=nvfp4.per_tensor_amax_to_scale(t.abs().max()))
    assert torch.isnan(theirs.scale.float()).all()        # one NaN spoils every block
    q = codecs.quantize(x, DType.NVFP4)
    assert q.planes[1].tolist() == [[0x7F, 0x7E]]          # only its block is NaN
    assert np.all(codecs.dequantize(q)[0, 16:] == 1.0)


def test_difference_torchao_nvfp4_dequantize_rounds_the_scale_product():
    torch, _, _, nvfp4 = _torchao()
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((64, 256)) * np.exp2(rng.uniform(-12, 12, (64, 1)))).astype(
        np.float32)
    t = torch.from_numpy(x)
    theirs = nvfp4.NVFP4Tensor.to_nvfp4(
        t, per_tensor_scale=nvfp4.per_tensor_amax_to_scale(t.abs().max()))
    q = codecs.quantize(x, DType.NVFP4)
    ours = codecs.dequantize(q)
    exact = codecs.dequantize(q, out_dtype="float64")
    assert np.array_equal(ours, exact.astype(np.float32))   # one rounding
    theirs = theirs.dequantize(torch.float32).numpy()
    differ = ours != theirs
    assert differ.any()
    assert np.all(np.abs(ours - exact)[differ] <= np.abs(theirs - exact)[differ])


def test_microxcaling_formula_as_written():
    # microxcaling is not on PyPI: its shared exponent as mx/mx_ops.py
    # writes it, floor(log2(amax)) in float32 torch, minus emax, clamped
    torch = pytest.importorskip("torch")
    ks = np.arange(-100, 100)
    amax = np.concatenate([np.float32(2.0) ** ks.astype(np.float32) * np.float32(1.5),
                           np.nextafter(np.float32(2.0) ** ks.astype(np.float32),
                                        np.float32(0))]).astype(np.float32)
    theirs = torch.floor(torch.log2(torch.from_numpy(amax))).numpy() - 2
    theirs = np.clip(theirs, -127, 127) + 127
    x = np.zeros((len(amax), 32), np.float32)
    x[:, 0] = amax
    ours = codecs.quantize(x, DType.MXFP4).planes[1][:, 0]
    half = len(ks)
    # the exponent bits: 1.5 * 2**k has exponent k, (1 - 2**-24) * 2**k has k - 1
    want = np.concatenate([ks, ks - 1]) - 2
    assert np.array_equal(ours.astype(int), np.clip(want, -127, 127) + 127)
    # 1.5 * 2**k: its float32 log2 is exact enough, both agree
    assert np.array_equal(ours[:half], theirs[:half])
    # (1 - 2**-24) * 2**k: float32 log2 rounds up to k; the exponent bits say k - 1
    below = ours[half:].astype(int) != theirs[half:].astype(int)
    assert below.sum() >= 150
    assert np.all(ours[half:][below].astype(int) == theirs[half:][below].astype(int) - 1)
