"""One truth per codec decision: every kernel path gives the same codes.

The codecs have several roads to the same answer: the 32-bit-lane kernel
(float32, float16 and bfloat16 values), the 64-bit-lane kernel (float64
values, and formats 32-bit lanes cannot hold), the general converter (the
oracle), packed and unpacked element planes, one thread or many. Each
decision about a value (a NaN, an infinity, an overflow in each rounding's
direction, a signed zero, a value rounding to nothing, a negative value in
an unsigned format, a non-finite block, a partial block) is made in one
place, so every road must give the same codes, for the built-in formats
and for extension formats chosen to hit the corners: no NaN, no infinity,
unsigned, no zero, a one-bit exponent, 16 and 32 bits wide. These tests
run every road on the same inputs and compare the codes bit for bit."""
import platform
import sys

import pytest

from support import unique_name
from support.child import child_report
from support import codec_kernels as kernels
from stride_weave import _dtypes, codecs, formats
from stride_weave.dtypes import BlockScaledDType, DType, Level, SimpleDType, Whole
from stride_weave.numerics import NumericInfo, numeric_info

np = pytest.importorskip("numpy")

pytestmark = [pytest.mark.filterwarnings("ignore:invalid value encountered in cast"),
              pytest.mark.filterwarnings("ignore:overflow encountered in cast")]

AUTO, WIDE, GENERAL = range(3)
SOURCES = {"float32": 0, "float64": 1, "float16": 2, "bfloat16": 3}


def _float(encoding, e, m, bias, nan, signed=True, supertype=DType.Floating):
    return SimpleDType(unique_name("Paths_" + encoding), bits=int(signed) + e + m,
                       supertype=supertype, numeric_info=NumericInfo.floating(
                           encoding, exponent_bits=e, mantissa_bits=m, bias=bias,
                           nan_encoding=nan, signed=signed))


# Extension formats at the corners of what a record can say.
CORNERS = {
    "no_nan_no_inf": _float("e3m3", 3, 3, 3, "none"),
    "no_inf_all_ones": _float("e4m2", 4, 2, 7, "all_ones"),
    "fnuz": _float("e3m3fnuz", 3, 3, 4, "negative_zero"),
    "unsigned": _float("ue4m3", 4, 3, 7, "all_ones", signed=False),
    "unsigned_ieee": _float("ue5m2", 5, 2, 15, "ieee", signed=False),
    "no_zero": _float("e6m0", 6, 0, 31, "all_ones", signed=False),
    "one_bit_exponent": _float("e1m4", 1, 4, 0, "none"),
    "wide16": _float("e6m9", 6, 9, 31, "ieee"),
    "wide32_unsigned": _float("ue9m23", 9, 23, 127, "ieee", signed=False),
    "wide32_big_bias": _float("e9m22", 9, 22, 255, "ieee"),
}

FLOATS = [DType.E4M3, DType.E5M2, DType.E2M1, DType.E3M2, DType.E2M3, DType.E8M0,
          formats.E4M3FNUZ, formats.E5M2FNUZ, formats.BFloat16, formats.Float16,
          DType.Float32, DType.Float64, *CORNERS.values()]
INTS = [DType.Int8, formats.UInt8, formats.Int16, formats.UInt16, DType.Int32,
        formats.UInt32, formats.Int64, formats.UInt64, formats.Int4, formats.UInt4,
        DType.Bool]


_CORNER_IDS = {id(d): key for key, d in CORNERS.items()}


def _ids(dtype):
    """A test id stable across processes (extension names carry the pid)."""
    return _CORNER_IDS.get(id(dtype), dtype.name)


# ---- inputs ----------------------------------------------------------------------------

def _float32_inputs(dtype):
    """float32 values around every binade the format has, its ties and
    their neighbours, specials, and random bit patterns."""
    rng = np.random.default_rng(dtype.bits * 7919)
    record = numeric_info(dtype)
    lo, hi = (-160, 140)
    if record.kind == "float":
        lo = max(-160, int(np.log2(record.smallest_subnormal)) - 4)
        hi = min(140, int(np.log2(record.max)) + 4)
    elif record.kind == "int":
        hi = min(140, record.bits + 4)
    exps = np.arange(lo, hi)
    mant = rng.integers(0, 1 << 23, (len(exps), 24), dtype=np.uint32)
    # the ties and their neighbours for every precision up to 23 bits
    for p in range(0, 24):
        if p >= 23:
            continue
        half = np.uint32(1 << (22 - p))
        mant[:, p % 24] = (mant[:, p % 24] & ~np.uint32((1 << (23 - p)) - 1)) | half
    mant[:, 0] = 0
    mant[:, 1] = (1 << 23) - 1
    biased = np.clip(exps + 127, 0, 254).astype(np.uint32)[:, None]
    bits = ((biased << 23) | mant).reshape(-1)
    bits = np.concatenate([bits, bits + 1, bits - 1, rng.integers(0, 1 << 32, 4096,
                                                                    dtype=np.uint64)
                           .astype(np.uint32),
                           np.array([0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000,
                                     0xFFC00001, 0x7F800001, 0x7F7FFFFF, 0x00000001,
                                     0x807FFFFF], np.uint32)])
    bits = np.concatenate([bits, bits ^ np.uint32(0x80000000)])
    return bits.view(np.float32)


def _values_for(dtype, source):
    x32 = _float32_inputs(dtype)
    if source == "float32":
        return x32
    if source == "float64":
        rng = np.random.default_rng(11)
        extra = rng.standard_normal(4096) * np.exp2(rng.integers(-1100, 1024, 4096))
        # between two float32 values: what only float64 input can hold
        mid = x32.astype(np.float64) * (1 + 2.0 ** -30)
        return np.concatenate([x32.astype(np.float64), mid, extra,
                               np.array([2.0 ** -1074, -0.0, 5e-324, 1e308, np.nan])])
    every = np.arange(1 << 16, dtype=np.uint16)
    if source == "float16":
        return every.view(np.float16)
    import ml_dtypes
    return every.view(ml_dtypes.bfloat16)


def _kernel_source(values, source):
    if source == "bfloat16":
        return np.ascontiguousarray(values).view(np.uint16)
    return np.ascontiguousarray(values)


def _encode_path(values, source, dtype, path, rounding=0, overflow=0, nan=0, code=(0, 0),
                 seed=0, sign=0, threads=1):
    out = np.empty(values.shape, codecs._code_dtype(dtype.bits))
    _dtypes._codec_encode(_kernel_source(values, source), out, dtype, SOURCES[source],
                          rounding, overflow, nan, code[0], code[1], seed, sign, threads,
                          path)
    return out


def _options(dtype):
    """(rounding, overflow, nan, code pair, sign) combinations that are legal
    for the format: every rounding under every overflow option, then a NaN
    code pair and the magnitude option."""
    record = numeric_info(dtype)
    special = record.kind == "float" and (record.has_inf or record.has_nan)
    overflows = [0, 1] + ([2] if special else [])
    combos = [(r, o, 0, (0, 0), 0) for r in range(7) for o in overflows]
    top = (1 << dtype.bits) - 1
    combos += [(0, 0, 2, (top, top >> 1), 0), (0, 0, 0, (0, 0), 1),
               (4, 0, 0, (0, 0), 1)]
    return combos


def _assert_same(a, b, values, what):
    bad = np.nonzero(a != b)[0]
    if len(bad):
        shown = [(repr(values.reshape(-1)[i]), hex(int(a[i])), hex(int(b[i])))
                 for i in bad[:6]]
        pytest.fail(f"{what}: {len(bad)} codes differ (value, one, other): {shown}")


# ---- elements --------------------------------------------------------------------------

@pytest.mark.parametrize("source", list(SOURCES))
@pytest.mark.parametrize("dtype", FLOATS + INTS, ids=_ids)
def test_every_converter_gives_the_same_codes(dtype, source):
    values = _values_for(dtype, source)
    for rounding, overflow, nan, code, sign in _options(dtype):
        seed = 12345 if rounding == 6 else 0
        args = dict(rounding=rounding, overflow=overflow, nan=nan, code=code, seed=seed,
                    sign=sign)
        oracle = _encode_path(values, source, dtype, GENERAL, **args)
        for path in (AUTO, WIDE):
            got = _encode_path(values, source, dtype, path, **args)
            _assert_same(got, oracle, values,
                         f"{dtype.name} from {source}, path {path}, options {args}")


@pytest.mark.parametrize("dtype", FLOATS + INTS, ids=_ids)
def test_every_source_type_gives_the_same_codes_for_the_same_value(dtype):
    # float16 and bfloat16 values are float32 values and float64 values:
    # the same value is the same code whatever type it came in (NaN
    # payloads aside: they follow each source type's rules)
    import ml_dtypes
    for narrow in ("float16", "bfloat16"):
        values = _values_for(dtype, narrow)
        wide = values.astype(np.float32)
        keep = ~np.isnan(wide)
        for rounding, overflow, nan, code, sign in _options(dtype):
            seed = 99 if rounding == 6 else 0
            args = dict(rounding=rounding, overflow=overflow, nan=nan, code=code, seed=seed,
                        sign=sign)
            a = _encode_path(values[keep], narrow, dtype, AUTO, **args)
            b = _encode_path(wide[keep], "float32", dtype, AUTO, **args)
            c = _encode_path(wide[keep].astype(np.float64), "float64", dtype, AUTO, **args)
            _assert_same(a, b, wide[keep], f"{dtype.name}: {narrow} and float32, {args}")
            _assert_same(b, c, wide[keep], f"{dtype.name}: float32 and float64, {args}")
    del ml_dtypes


@pytest.mark.parametrize("dtype", [DType.E4M3, DType.E2M1, DType.E8M0, formats.BFloat16,
                                   DType.Int8, CORNERS["wide32_unsigned"]], ids=_ids)
def test_any_thread_count_gives_the_same_codes(dtype):
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(600_001) * np.exp2(rng.integers(-20, 20, 600_001))).astype(
        np.float32)
    x[::997] = np.nan
    x[::1009] = np.inf
    for rounding in range(7):
        seed = 7 if rounding == 6 else 0
        one = _encode_path(x, "float32", dtype, AUTO, rounding=rounding, seed=seed)
        for threads in (2, 3, 8):
            many = _encode_path(x, "float32", dtype, AUTO, rounding=rounding, seed=seed,
                                threads=threads)
            _assert_same(one, many, x, f"{dtype.name}, rounding {rounding}, {threads} "
                                       "threads")
    # the first NaN under nan='error' is the one a single thread finds
    x = np.zeros(700_000, np.float32)
    x[[650_003, 400_001]] = np.nan
    for threads in (1, 2, 4):
        with pytest.raises(ValueError, match=r"values\[400001\]"):
            codecs.encode(x, DType.E4M3, nan="error", threads=threads)


# ---- the findings, each with the value that showed it ---------------------------------------

def test_a_float32_nan_in_an_unsigned_ieee_format_is_its_nan():
    # a 9-bit-exponent unsigned format is not float32 however wide it is:
    # a NaN gets the format's own NaN encoding, never a finite code
    fmt = CORNERS["wide32_unsigned"]
    for source, x in (("float32", np.array([np.nan, -np.nan], np.float32)),
                      ("float64", np.array([np.nan, -np.nan]))):
        codes = codecs.encode(x, fmt)
        assert np.isnan(codecs.decode(codes, fmt, out_dtype="float64")).all(), (source, codes)


def test_mxint8_keeps_the_sign_of_a_huge_negative_value():
    x = np.full(32, 1e60)
    x[3] = -1e60
    q = codecs.quantize(x, DType.MXINT8)
    back = codecs.dequantize(q, out_dtype="float64")
    assert q.planes[1].tolist() == [0xFE]
    assert int(q.planes[0][3]) == 0x81                  # -127, not 127
    assert back[3] < 0 and back[0] > 0
    # from the first value that wrapped up to far beyond
    for magnitude in (2.0 ** 185, 2.0 ** 300, 1e308):
        x = np.full(32, magnitude)
        x[0] = -magnitude
        assert int(codecs.quantize(x, DType.MXINT8).planes[0][0]) == 0x81


def _block_format(element, scale, block, whole=None):
    levels = [Level(scale, block)] + ([Level(whole, Whole)] if whole is not None else [])
    for d in DType.registered():
        if (isinstance(d, BlockScaledDType) and d.element is element
                and tuple(d.levels) == tuple(levels)):
            return d
    return BlockScaledDType(unique_name("PathsBlock"), element=element, levels=levels)


NO_NAN_E8M0 = _float("e8m0none", 8, 0, 127, "none", signed=False)


@pytest.mark.parametrize("scale,whole", [(NO_NAN_E8M0, None), (DType.E3M2, DType.Float32)],
                         ids=["e8m0-without-nan", "e3m2-over-float32"])
def test_the_scale_of_a_non_finite_block_is_the_same_on_every_path(scale, whole):
    fmt = _block_format(DType.E2M1, scale, 32, whole)
    x = np.linspace(-3, 3, 4 * 64, dtype=np.float32).reshape(4, 64)
    x[0, 5] = np.inf
    x[2, 40] = np.nan
    results = []
    for packed in (True, False):
        for values in (x, x.astype(np.float64)):
            if whole is not None and values.dtype == np.float64:
                continue
            for path in (AUTO, WIDE, GENERAL):
                q = _quantize_path(values, fmt, path, packed=packed)
                results.append((packed, values.dtype, path, q))
    first = results[0][3]
    for packed, dtype, path, q in results:
        assert np.array_equal(q.planes[1], first.planes[1]), (packed, dtype, path)
        assert np.array_equal(_codes_of(q), _codes_of(first)), (packed, dtype, path)
    # the decision: a scale format without NaN gives its largest scale
    record = numeric_info(scale)
    largest = codecs.encode(np.array([float(record.max)]), scale)[0]
    assert first.planes[1][0, 0] == largest and first.planes[1][2, 1] == largest


def _quantize_path(values, fmt, path, packed=True, threads=1, rounding=None, seed=None,
                   rule=None):
    """quantize through the private kernel, forcing a converter path."""
    geo = codecs._Geometry("quantize", fmt, tuple(values.shape), codecs.BlockLayout())
    shapes = geo.plane_shapes(packed)
    sizes = codecs._plane_itemsizes(fmt, packed)
    planes = [np.empty(shapes[0], f"u{sizes[0]}"), np.zeros(shapes[1], f"u{sizes[1]}")]
    planes += [np.empty(p, f"u{s}") for p, s in zip(shapes[2:], sizes[2:])]
    r = 0 if rounding is None else codecs.ROUNDINGS.index(rounding) + 1
    rl = 0 if rule is None else codecs.SCALE_RULES.index(rule) + 1
    _dtypes._codec_quantize(np.ascontiguousarray(values).reshape(-1), planes[0].reshape(-1),
                            tuple(p.reshape(-1) for p in planes[1:]), fmt, geo.grid,
                            geo.grid_layout, rl, r, seed or 0, int(packed), 0.0, threads,
                            path)
    return codecs.Quantized._trusted(geo, planes, packed, rule)


def _codes_of(q):
    geo = codecs._Geometry("test", q.dtype, q.shape, q.layout)
    return codecs._element_codes(q, geo)


BLOCKS = [DType.MXFP4, DType.MXFP6_E3M2, DType.MXFP6_E2M3, DType.MXFP8_E4M3,
          DType.MXFP8_E5M2, DType.MXINT8, DType.NVFP4]


@pytest.mark.parametrize("fmt", BLOCKS, ids=_ids)
def test_every_block_path_gives_the_same_planes(fmt):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((96, 200)) * np.exp2(rng.integers(-40, 40, (96, 1)))).astype(
        np.float32)
    x[5, 7] = np.nan
    x[9, 64:96] = 0.0
    x[11, :] = 2.0 ** -140
    x[13, 3] = -np.inf
    pow2 = numeric_info(fmt.levels[0].scale).mantissa_bits == 0
    for rounding, seed in ((None, None), ("toward_zero", None), ("stochastic", 17)):
        rule = None if not pow2 else "rceil"
        base = _quantize_path(x, fmt, AUTO, rounding=rounding, seed=seed, rule=rule)
        base_codes = _codes_of(base)
        variants = [(p, packed, t, src) for p in (AUTO, WIDE, GENERAL)
                    for packed in (True, False) for t in (1, 3)
                    for src in ((np.float32, np.float64) if pow2 else (np.float32,))]
        for path, packed, threads, src in variants:
            q = _quantize_path(x.astype(src), fmt, path, packed=packed, threads=threads,
                               rounding=rounding, seed=seed, rule=rule)
            where = (fmt.name, rounding, path, packed, threads, src.__name__)
            for a, b in zip(q.planes[1:], base.planes[1:]):
                assert np.array_equal(a, b), where
            assert np.array_equal(_codes_of(q), base_codes), where


def test_dequantize_rounds_the_product_once():
    # binary16 elements under a Float32 block scale and a Float32 Whole
    # scale: e * s * g needs 59 significant bits; a double holds 53
    from fractions import Fraction
    fmt = _block_format(formats.Float16, DType.Float32, 16, DType.Float32)
    e, s, g = 2047 / 1024, 16777169 * 2.0 ** -23, 13119009 * 2.0 ** -23
    planes = [codecs.encode(np.full(16, e), formats.Float16).reshape(1, 16),
              codecs.encode(np.array([[s]]), DType.Float32),
              codecs.encode(np.array(g), DType.Float32)]
    q = codecs.Quantized(fmt, (1, 16), planes, packed=False)
    exact = Fraction(e) * Fraction(s) * Fraction(g)
    for out, kind in (("float32", np.float32), ("float64", np.float64)):
        got = codecs.dequantize(q, out_dtype=out)[0, 0]
        nearest = kind(float(exact)) if out == "float64" else _round_f32(exact)
        assert got == nearest, (out, got, nearest)


def _round_f32(x):
    """The Fraction x rounded once to float32 (nearest, ties to even)."""
    from fractions import Fraction
    lo = np.float32(float(x))           # within an ulp: fix up exactly
    cands = [np.nextafter(lo, np.float32(-np.inf)), lo, np.nextafter(lo, np.float32(np.inf))]
    best = min(cands, key=lambda c: (abs(Fraction(float(c)) - x),
                                     int(np.array(c).view(np.uint32)) & 1))
    return best


# ---- drawn records: any format a record can describe ------------------------------------

from hypothesis import HealthCheck, assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_DRAWN = {}


def _drawn_float(e, m, bias, nan, signed):
    """The extension format of these parameters (one per set, kept), or
    None where a record cannot describe it."""
    key = (e, m, bias, nan, signed)
    if key not in _DRAWN:
        try:
            _DRAWN[key] = _float(f"e{e}m{m}", e, m, bias, nan, signed)
        except ValueError:
            _DRAWN[key] = None
    return _DRAWN[key]


@st.composite
def _records(draw, max_bits=64):
    e = draw(st.integers(1, 11))
    signed = draw(st.booleans())
    m = draw(st.integers(0, min(52, max_bits - e - int(signed))))
    nan = draw(st.sampled_from(["ieee", "all_ones", "negative_zero", "none"]))
    bias = draw(st.one_of(st.integers(-4, (1 << e) + 2), st.integers(-1100, 1100)))
    dtype = _drawn_float(e, m, bias, nan, signed)
    assume(dtype is not None)
    return dtype


def _near(dtype, rng, count):
    """Values around every binade of a format, its ties (half an ulp at
    its precision), its extremes and the specials."""
    import math
    record = numeric_info(dtype)
    lo = math.frexp(record.smallest_subnormal)[1] - 3
    hi = math.frexp(record.max)[1] + 2
    k = rng.integers(lo, hi + 1, count)
    p = min(record.mantissa_bits, 40)
    with np.errstate(over="ignore"):
        near = np.ldexp(rng.uniform(-2, 2, count), k)
        ties = np.ldexp(np.floor(rng.uniform(0, 2.0 ** (p + 1), count)) + 0.5, k - p - 1)
    return np.concatenate([near, ties, -ties, [
        float(record.max), -float(record.max), float(record.smallest_subnormal),
        float(record.smallest_subnormal) / 2, np.inf, -np.inf, np.nan, 0.0, -0.0]])


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(dtype=_records(), source=st.sampled_from(list(SOURCES)), rounding=st.integers(0, 6),
       overflow=st.integers(0, 2), sign=st.integers(0, 1), seed=st.integers(0, 2**64 - 1),
       raw=st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=32))
def test_drawn_records_give_the_same_codes_on_every_path(dtype, source, rounding, overflow,
                                                         sign, seed, raw):
    import ml_dtypes
    kind = {"float32": np.float32, "float64": np.float64, "float16": np.float16,
            "bfloat16": ml_dtypes.bfloat16}[source]
    size = np.dtype(kind).itemsize
    bits = np.array(raw, np.uint64)
    if size < 8:
        bits = (bits & np.uint64((1 << (8 * size)) - 1)).astype(f"u{size}")
    near = _near(dtype, np.random.default_rng(raw[0] & 0xFFFF), 64)
    with np.errstate(all="ignore"):
        values = np.concatenate([bits.view(kind), near.astype(kind)])
    args = dict(rounding=rounding, overflow=overflow, seed=seed, sign=sign)
    try:
        oracle = _encode_path(values, source, dtype, GENERAL, **args)
    except ValueError:
        return      # an option the format does not take ('special' without specials)
    for path in (AUTO, WIDE):
        got = _encode_path(values, source, dtype, path, **args)
        _assert_same(got, oracle, values, f"{numeric_info(dtype)} from {source}, path "
                                          f"{path}, options {args}")


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(element=_records(max_bits=16), scale=_records(max_bits=16),
       block=st.sampled_from([1, 2, 3, 7, 16, 32, 33]), rows=st.integers(1, 4),
       length=st.integers(1, 80), seed=st.integers(0, 2**16), data=st.data())
def test_drawn_block_formats_give_the_same_planes_on_every_path(element, scale, block, rows,
                                                                length, seed, data):
    assume(numeric_info(element).kind == "float" and numeric_info(scale).kind == "float")
    fmt = _block_format(element, scale, block)
    pow2 = numeric_info(scale).mantissa_bits == 0
    rule = data.draw(st.sampled_from(["floor", "ceil", "rceil", "even"])) if pow2 else None
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((rows, length))
         * np.exp2(rng.integers(-30, 30, (rows, 1)))).astype(np.float32)
    x[0, rng.integers(0, length)] = data.draw(st.sampled_from([0.0, np.inf, np.nan, 1e30]))
    base = _quantize_path(x, fmt, GENERAL, rule=rule)
    for path, packed, threads, src in [(AUTO, True, 1, np.float32), (AUTO, False, 3, np.float32),
                                       (WIDE, True, 1, np.float32),
                                       (AUTO, True, 2, np.float64)]:
        if src is np.float64 and not pow2:
            continue
        q = _quantize_path(x.astype(src), fmt, path, packed=packed, threads=threads,
                           rule=rule)
        where = (numeric_info(element), numeric_info(scale), block, path, packed, src)
        for a, b in zip(q.planes[1:], base.planes[1:]):
            assert np.array_equal(a, b), where
        assert np.array_equal(_codes_of(q), _codes_of(base)), where
        back = codecs.dequantize(q)
        assert np.array_equal(back, codecs.dequantize(base), equal_nan=True), where


# ---- the lean integer kernel's adder rounding -------------------------------------------

def _mx_int(bits, scale=None, block=32):
    """A block format of `bits`-bit integer elements (quantum 2**-(bits - 2))
    under a power-of-two scale (E8M0 unless given)."""
    element = DType.Int8 if bits == 8 else SimpleDType(
        unique_name(f"PathsInt{bits}"), bits=bits, supertype=DType.Integer,
        numeric_info=NumericInfo.integer(bits, signed=True))
    return _block_format(element, scale or DType.E8M0, block)


# a scale of a wider exponent range: scale exponents to -255, below where
# 2**(quantum's exponent + 23) is a normal float32
E9M0 = _float("e9m0", 9, 0, 255, "all_ones", signed=False)


def _adder_inputs(bits, exponents, rng):
    """One row per block exponent E (amax in [2**E, 2**(E + 1)), a float32
    subnormal below -126): the amax, values exactly halfway between two
    codes at the quantum 2**(E - bits + 2) and their float32 neighbours,
    random magnitudes below the amax (subnormals among them), a negative
    zero; the last rows hold an infinity of each sign and NaNs of each sign."""
    rows = []
    for E in exponents:
        amax = np.float32(np.ldexp(1.0 + rng.random(), E))
        amax = amax if amax != 0 else np.float32(2.0 ** -149)
        k = rng.integers(0, 1 << (bits - 1), 24).astype(np.float64)
        ties = np.ldexp(k + 0.5, E - (bits - 2))
        ties = ties[(np.abs(ties) <= amax) & (ties.astype(np.float32) == ties)].astype(np.float32)
        near = np.concatenate([np.nextafter(ties, np.float32(0)),
                               np.nextafter(ties, np.float32(np.inf))])
        lim = int(amax.view(np.uint32))
        rand = (rng.integers(0, lim + 1, 16, dtype=np.uint64).astype(np.uint32)).view(np.float32)
        row = np.concatenate([[amax], ties, near, rand, [np.float32(-0.0)]]).astype(np.float32)
        row = row[np.abs(row) <= amax]
        row *= np.where(rng.random(row.size) < 0.5, -1, 1).astype(np.float32)
        rows.append(np.resize(row, 64))
    x = np.array(rows, np.float32)
    x[-1, 3], x[-2, 5], x[-3, 7] = np.inf, -np.inf, np.nan
    x[-4, 9] = -np.float32(np.nan)
    return x


@pytest.mark.parametrize("bits,scale", [(8, None), (4, None), (16, None), (8, E9M0),
                                        (16, E9M0)],
                         ids=["mxint8", "int4", "int16", "int8-e9m0", "int16-e9m0"])
@pytest.mark.parametrize("block", [32, 1])
def test_the_lean_integer_kernel_rounds_as_the_general_converter(bits, scale, block):
    # nearest-even at the quantum 2**Q by the adder, |x| + 2**(Q + 23), where
    # that is a normal float32 and the range below 2**23, else the shift:
    # block exponents on both sides of where the adder stops (Q + 150 from
    # 0 to 255), subnormal blocks, ties, specials; a row of column blocks
    # mixes every exponent in one call
    rng = np.random.default_rng(bits * 7 + block)
    edges = [e for q150 in (-1, 0, 1, 2, 253, 254, 255, 256)
             for e in (q150 - 150 + bits - 2 - 1, q150 - 150 + bits - 2)]
    exponents = sorted({min(max(e, -149), 127) for e in edges} | {-149, -140, -127, -126, 0,
                                                                   1, 126, 127})
    x = _adder_inputs(bits, exponents, rng)
    fmt = _mx_int(bits, scale, block)
    if block == 1:
        x = np.ascontiguousarray(x.T)
    for rule in (None, "floor", "ceil", "rceil", "even"):
        base = _quantize_path(x, fmt, GENERAL, rule=rule)
        base_codes = _codes_of(base)
        for packed, threads in ((True, 1), (False, 3)):
            q = _quantize_path(x, fmt, AUTO, packed=packed, threads=threads, rule=rule)
            where = (bits, block, rule, packed, threads)
            for a, b in zip(q.planes[1:], base.planes[1:]):
                assert np.array_equal(a, b), where
            codes = _codes_of(q)
            bad = np.argwhere(codes != base_codes)
            assert bad.size == 0, (where, [(x.reshape(codes.shape)[tuple(i)],
                                            int(codes[tuple(i)]), int(base_codes[tuple(i)]))
                                           for i in bad[:5]])


@pytest.mark.skipif(not (sys.platform.startswith("linux")
                         and platform.machine() in ("x86_64", "AMD64")),
                    reason="fesetround/feenableexcept through glibc's libm on x86-64")
def test_the_callers_floating_point_environment_changes_no_code():
    # the kernels round with the float adder and multiplier (nearest-even
    # below a format's smallest normal, the lean integer kernel everywhere,
    # a float scale's reciprocal): a caller's rounding direction must not
    # reach them, nor an unmasked inexact trap kill the process
    report = child_report("""
        import ctypes, ctypes.util, json, sys
        sys.path.insert(0, "representations")
        import numpy as np
        import test_codecs_paths as T
        from stride_weave import codecs
        from stride_weave.dtypes import DType
        libm = ctypes.CDLL(ctypes.util.find_library("m"))
        rng = np.random.default_rng(5)
        x = (rng.standard_normal((16, 64)) * np.exp2(rng.integers(-130, 20, (16, 1)))).astype(
            np.float32)
        fmts = [DType.MXINT8, DType.NVFP4, DType.MXFP8_E4M3]
        base = [T._codes_of(T._quantize_path(x, f, T.GENERAL)) for f in fmts]
        plain = codecs.encode(x, DType.E4M3)
        out = []
        # FE_DOWNWARD, FE_UPWARD, FE_TOWARDZERO; then FE_INEXACT unmasked
        for rnd, trap in ((0x400, 0), (0x800, 0), (0xC00, 0), (0, 0x20)):
            for f, b in zip(fmts, base):
                if trap and f is DType.NVFP4:
                    continue    # its Whole scale is computed outside the kernels' pieces
                for threads in (1, 3):
                    libm.fesetround(rnd)
                    libm.feenableexcept(trap)
                    q = T._quantize_path(x, f, T.AUTO, threads=threads)
                    libm.fedisableexcept(trap)
                    libm.fesetround(0)
                    out.append([f.name, rnd, trap, threads,
                                int((T._codes_of(q) != b).sum())])
            libm.fesetround(rnd)
            libm.feenableexcept(trap)
            e = codecs.encode(x, DType.E4M3)
            libm.fedisableexcept(trap)
            libm.fesetround(0)
            out.append(["encode E4M3", rnd, trap, 1, int((e != plain).sum())])
        print(json.dumps(out))
    """)
    assert [r for r in report if r[-1] != 0] == [], report
