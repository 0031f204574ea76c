"""stride_weave.numerics: the numeric record of every built-in simple dtype,
checked against numpy.finfo/iinfo and ml_dtypes.finfo/iinfo and against the
real bit patterns (decoded by ml_dtypes), and the registration API."""
import math
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support import unique_name
from stride_weave import numerics
from stride_weave.dtypes import DType, SimpleDType
from stride_weave.numerics import NumericInfo, finfo, iinfo, numeric_info

np = pytest.importorskip("numpy")
ml_dtypes = pytest.importorskip("ml_dtypes")

# The foreign type each built-in floating-point format denotes.
FLOAT_TYPES = {
    "Float32": np.float32,
    "Float64": np.float64,
    "E8M0": ml_dtypes.float8_e8m0fnu,
    "E5M2": ml_dtypes.float8_e5m2,
    "E4M3": ml_dtypes.float8_e4m3fn,
    "E3M2": ml_dtypes.float6_e3m2fn,
    "E2M3": ml_dtypes.float6_e2m3fn,
    "E2M1": ml_dtypes.float4_e2m1fn,
}
INT_TYPES = {"Int8": np.int8, "Int32": np.int32}
SMALL_FLOATS = [name for name in FLOAT_TYPES if DType.from_name(name).bits <= 8]


@pytest.mark.parametrize("name", sorted(FLOAT_TYPES))
def test_finfo_agrees_with_ml_dtypes(name):
    record = finfo(DType.from_name(name))
    reference = ml_dtypes.finfo(FLOAT_TYPES[name])
    assert record.kind == "float"
    assert record.bits == reference.bits == DType.from_name(name).bits
    assert record.exponent_bits == reference.nexp
    assert record.mantissa_bits == reference.nmant
    assert record.max == float(reference.max)
    assert record.min == float(reference.min)
    assert record.smallest_normal == float(reference.smallest_normal)
    assert record.smallest_subnormal == float(reference.smallest_subnormal)
    assert record.eps == float(reference.eps)
    # numpy's maxexp is the first power of two that overflows.
    assert math.frexp(record.max)[1] == reference.maxexp


@pytest.mark.parametrize("name", ["Float32", "Float64"])
def test_ieee_formats_agree_with_numpy_finfo(name):
    record = finfo(DType.from_name(name))
    reference = np.finfo(FLOAT_TYPES[name])
    assert (record.max, record.eps, record.smallest_normal, record.smallest_subnormal) == (
        float(reference.max), float(reference.eps), float(reference.smallest_normal),
        float(reference.smallest_subnormal))
    assert record.bias == 1 - reference.minexp
    assert record.encoding == f"ieee754_binary{record.bits}"


@pytest.mark.parametrize("name", sorted(INT_TYPES))
def test_iinfo_agrees_with_numpy(name):
    record = iinfo(DType.from_name(name))
    reference = np.iinfo(INT_TYPES[name])
    assert (record.min, record.max, record.bits, record.signed) == (
        reference.min, reference.max, reference.bits, True)
    assert record.exponent_bits is None and record.eps is None


def _all_values(name):
    """Every bit pattern of a format of at most 8 bits, decoded by ml_dtypes
    (sub-byte formats are stored one per byte, in the low bits)."""
    bits = DType.from_name(name).bits
    patterns = np.arange(1 << bits, dtype=np.uint8)
    return patterns, patterns.view(FLOAT_TYPES[name]).astype(np.float64)


@pytest.mark.parametrize("name", SMALL_FLOATS)
def test_records_describe_the_real_bit_patterns(name):
    """inf/NaN flags, the NaN encoding and the extreme values agree with
    what ml_dtypes decodes from every bit pattern."""
    record = finfo(DType.from_name(name))
    patterns, values = _all_values(name)
    finite = values[np.isfinite(values)]
    assert record.has_inf == bool(np.isinf(values).any())
    assert record.has_nan == bool(np.isnan(values).any())
    assert record.max == finite.max()
    assert record.min == finite.min()
    positive = finite[finite > 0]
    assert record.smallest_subnormal == positive.min()
    nan_patterns = set(patterns[np.isnan(values)].tolist())
    mantissa_mask = (1 << record.mantissa_bits) - 1
    exponent_mask = ((1 << record.exponent_bits) - 1) << record.mantissa_bits
    if record.nan_encoding == "none":
        assert nan_patterns == set()
    elif record.nan_encoding == "all_ones":
        ones = exponent_mask | mantissa_mask
        expected = {ones, ones | (1 << (record.bits - 1))} if record.signed else {ones}
        assert nan_patterns == expected
    elif record.nan_encoding == "ieee":
        expected = {p for p in patterns.tolist()
                    if p & exponent_mask == exponent_mask and p & mantissa_mask}
        assert nan_patterns == expected
    assert record.signed == bool((finite < 0).any())


def test_the_documented_meaning_of_the_e_formats():
    """The fixed product meaning: OCP MX v1.0 element and scale formats."""
    assert finfo(DType.E4M3).encoding == "float8_e4m3fn"
    assert finfo(DType.E4M3).max == 448.0
    assert not finfo(DType.E4M3).has_inf
    assert finfo(DType.E5M2).has_inf and finfo(DType.E5M2).nan_encoding == "ieee"
    e8m0 = finfo(DType.E8M0)
    assert (e8m0.signed, e8m0.max, e8m0.min, e8m0.nan_encoding) == (
        False, 2.0 ** 127, 2.0 ** -127, "all_ones")
    for name in ("E3M2", "E2M3", "E2M1"):
        assert not finfo(DType.from_name(name)).has_nan


def test_bool_record():
    record = numeric_info(DType.Bool)
    assert (record.kind, record.bits, record.min, record.max, record.signed) == (
        "bool", 8, 0, 1, False)
    assert np.dtype(np.bool_).itemsize * 8 == record.bits


def test_every_builtin_simple_dtype_has_a_record():
    simple = [d for d in DType.registered() if isinstance(d, SimpleDType)
              and getattr(DType, d.name, None) is d]
    assert {d.name for d in simple} == {"Bool", "Int8", "Int32", "Float32", "Float64",
                                        "E8M0", "E5M2", "E4M3", "E3M2", "E2M3", "E2M1"}
    for d in simple:
        assert numeric_info(d).bits == d.bits


def test_records_are_read_only():
    record = finfo(DType.Float32)
    with pytest.raises(AttributeError):
        record.max = 1.0  # type: ignore[misc]


def test_finfo_and_iinfo_reject_the_other_kind():
    with pytest.raises(TypeError, match="finfo: expected a floating-point dtype, got Int8"):
        finfo(DType.Int8)
    with pytest.raises(TypeError, match="iinfo: expected an integer dtype, got Float32"):
        iinfo(DType.Float32)
    with pytest.raises(TypeError, match="iinfo: .* got Bool"):
        iinfo(DType.Bool)


@pytest.mark.parametrize("obj", [DType.MXFP4, DType.Floating, "Float32", 3, None])
def test_numeric_info_of_a_non_simple_dtype_is_type_error(obj):
    with pytest.raises(TypeError, match="numeric_info: dtype must be a registered SimpleDType"):
        numeric_info(obj)


def test_block_scaled_planes_have_records():
    element = finfo(DType.MXFP4.element)
    scale = finfo(DType.MXFP4.levels[0].scale)
    assert (element.encoding, scale.encoding) == ("float4_e2m1fn", "float8_e8m0fnu")
    assert DType.MXFP4.bits_per_element == element.bits + scale.bits / DType.MXFP4.levels[0].block


def test_extension_without_a_record_is_lookup_error():
    d = SimpleDType(unique_name("NoRecord"), bits=8, supertype=DType.Floating)
    with pytest.raises(LookupError, match=f"no numeric record is registered for {d.name}"):
        numeric_info(d)


def test_register_numeric_info_for_an_extension():
    d = SimpleDType(unique_name("MyHalf"), bits=16, supertype=DType.Floating)
    record = NumericInfo.floating("ieee754_binary16", exponent_bits=5, mantissa_bits=10,
                                  bias=15, nan_encoding="ieee")
    numerics.register_numeric_info(d, record)
    assert finfo(d) is record
    reference = np.finfo(np.float16)
    assert (record.max, record.smallest_normal, record.smallest_subnormal, record.eps) == (
        float(reference.max), float(reference.smallest_normal),
        float(reference.smallest_subnormal), float(reference.eps))
    numerics.register_numeric_info(d, NumericInfo.floating(
        "ieee754_binary16", exponent_bits=5, mantissa_bits=10, bias=15,
        nan_encoding="ieee"))   # equal: harmless
    other = NumericInfo.floating("bfloat16", exponent_bits=8, mantissa_bits=7, bias=127,
                                 nan_encoding="ieee")
    with pytest.raises(ValueError, match=f"{d.name} already has the record"):
        numerics.register_numeric_info(d, other)
    assert finfo(d) is record


def test_register_numeric_info_validates():
    d = SimpleDType(unique_name("Odd"), bits=8, supertype=DType.Integer)
    with pytest.raises(ValueError, match=r"record.bits must equal the width of .* \(8\), got 16"):
        numerics.register_numeric_info(d, NumericInfo.integer(16, signed=True))
    with pytest.raises(TypeError, match="record must be a NumericInfo, got 'int8'"):
        numerics.register_numeric_info(d, "int8")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="dtype must be a registered SimpleDType"):
        numerics.register_numeric_info(DType.MXFP4, NumericInfo.integer(8, signed=True))  # type: ignore[arg-type]
    with pytest.raises(LookupError):
        numeric_info(d)   # nothing was recorded by the refusals


def test_concurrent_registration_keeps_one_record():
    d = SimpleDType(unique_name("Raced"), bits=8, supertype=DType.Integer)
    records = [NumericInfo.integer(8, signed=bool(i % 2)) for i in range(8)]
    errors = []

    def declare(record):
        try:
            numerics.register_numeric_info(d, record)
        except ValueError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=declare, args=(r,)) for r in records]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winner = iinfo(d)
    assert winner in records
    assert len(errors) == sum(r != winner for r in records)


@pytest.mark.parametrize("kwargs, match", [
    ({"exponent_bits": 0, "mantissa_bits": 3, "bias": 1}, "exponent_bits >= 1"),
    ({"exponent_bits": 4, "mantissa_bits": -1, "bias": 1}, "mantissa_bits >= 0"),
    ({"exponent_bits": 4.0, "mantissa_bits": 3, "bias": 1}, "exponent_bits must be an int, got 4.0"),
])
def test_floating_validates(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        NumericInfo.floating("x", nan_encoding="ieee", **kwargs)


def test_floating_rejects_an_unknown_nan_encoding():
    with pytest.raises(ValueError, match="nan_encoding must be one of .* got 'quiet'"):
        NumericInfo.floating("x", exponent_bits=4, mantissa_bits=3, bias=7,
                             nan_encoding="quiet")  # type: ignore[arg-type]


def _decode(pattern, e, m, bias, nan_encoding):
    """A reference decoder of one bit pattern of a signed binary format."""
    sign = -1.0 if pattern >> (e + m) else 1.0
    exponent = (pattern >> m) & ((1 << e) - 1)
    mantissa = pattern & ((1 << m) - 1)
    top = (1 << e) - 1
    if nan_encoding == "ieee" and exponent == top:
        return math.nan if mantissa else sign * math.inf
    if nan_encoding == "all_ones" and exponent == top and mantissa == (1 << m) - 1:
        return math.nan
    if nan_encoding == "negative_zero" and pattern == 1 << (e + m):
        return math.nan
    if exponent == 0:
        return sign * mantissa * 2.0 ** (1 - bias - m)
    return sign * (1 + mantissa / (1 << m)) * 2.0 ** (exponent - bias)


@settings(max_examples=60, deadline=None)
@given(e=st.integers(2, 6), m=st.integers(1, 5), bias_shift=st.integers(-2, 2),
       nan_encoding=st.sampled_from(["ieee", "all_ones", "negative_zero", "none"]))
def test_floating_matches_a_pattern_by_pattern_decoding(e, m, bias_shift, nan_encoding):
    """For any small signed format, the derived values are those found by
    decoding every bit pattern."""
    bias = (1 << (e - 1)) - 1 + bias_shift
    record = NumericInfo.floating("x", exponent_bits=e, mantissa_bits=m, bias=bias,
                                  nan_encoding=nan_encoding)
    values = [_decode(p, e, m, bias, nan_encoding) for p in range(1 << (1 + e + m))]
    finite = [v for v in values if math.isfinite(v)]
    assert record.max == max(finite) and record.min == min(finite)
    assert record.smallest_subnormal == min(v for v in finite if v > 0)
    assert record.smallest_normal == 2.0 ** (1 - bias)
    assert record.has_inf == any(math.isinf(v) for v in values)
    assert record.has_nan == any(math.isnan(v) for v in values)
    assert record.bits == 1 + e + m


# ---- the record as a value: constructor, repr, pickling -------------------

def _every_record():
    import stride_weave.formats  # noqa: F401  (the pack's records too)
    return [numeric_info(d) for d in DType.registered()
            if isinstance(d, SimpleDType) and _has_record(d)]


def _has_record(d):
    try:
        numeric_info(d)
    except LookupError:
        return False
    return True


def test_every_record_round_trips_through_its_repr_and_its_pickle():
    import pickle

    for record in _every_record():
        again = eval(repr(record), {"NumericInfo": NumericInfo})
        assert again == record and hash(again) == hash(record)
        assert repr(again) == repr(record)
        for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
            loaded = pickle.loads(pickle.dumps(record, protocol))
            assert loaded == record and repr(loaded) == repr(record)


@pytest.mark.parametrize("field, value", [
    ("max", 449.0), ("min", -1.0), ("smallest_normal", 0.5), ("eps", 0.25),
    ("has_inf", True), ("smallest_subnormal", 1e-3), ("bits", 16),
])
def test_the_keyword_constructor_refuses_a_field_its_parameters_contradict(field, value):
    fields = _fields(finfo(DType.E4M3))
    fields[field] = value
    with pytest.raises(ValueError, match=f"{field}="):
        NumericInfo(**fields)


def _fields(record):
    names = ("kind", "encoding", "bits", "signed", "min", "max", "exponent_bits",
             "mantissa_bits", "bias", "smallest_normal", "smallest_subnormal", "eps",
             "has_inf", "has_nan", "nan_encoding")
    return {name: getattr(record, name) for name in names}


def test_the_keyword_constructor_derives_what_is_left_out():
    record = NumericInfo(kind="float", encoding="float8_e4m3fn", bits=8, signed=True,
                         min=-448.0, max=448.0, exponent_bits=4, mantissa_bits=3,
                         bias=7, nan_encoding="all_ones")
    assert record == finfo(DType.E4M3)
    assert record.smallest_subnormal == 2.0 ** -9 and record.has_nan


def test_the_keyword_constructor_names_a_missing_field():
    with pytest.raises(TypeError, match="missing required keyword argument 'max'"):
        NumericInfo(kind="int", encoding="int8", bits=8, signed=True, min=-128)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="kind must be one of .* got 'fixed'"):
        NumericInfo(kind="fixed", encoding="q", bits=8, signed=True, min=0, max=1)  # type: ignore[arg-type]


def test_an_unsigned_float_with_a_mantissa_has_zero_as_its_minimum():
    """float8_e5m3fnu: the smallest value is zero, as ml_dtypes decodes it
    (only a format with no mantissa, e8m0fnu, has no zero)."""
    record = NumericInfo.floating("float8_e5m3fnu", exponent_bits=5, mantissa_bits=3,
                                  bias=15, nan_encoding="all_ones", signed=False)
    assert record.min == 0.0
    assert finfo(DType.E8M0).min == 2.0 ** -127   # no zero: its smallest normal
    if not hasattr(ml_dtypes, "float8_e5m3fnu"):
        # The test extra allows ml_dtypes 0.5, the newest with free-threaded
        # (cp313t) wheels, which predates this type.
        pytest.skip(f"ml_dtypes {ml_dtypes.__version__} has no float8_e5m3fnu to "
                    "compare the other limits with")
    reference = ml_dtypes.finfo(ml_dtypes.float8_e5m3fnu)
    values = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e5m3fnu).astype(np.float64)
    finite = values[np.isfinite(values)]
    assert record.min == finite.min() == float(reference.min) == 0.0
    assert record.max == finite.max() == float(reference.max)
    assert record.smallest_subnormal == float(reference.smallest_subnormal)
    assert record.smallest_normal == float(reference.smallest_normal)
    assert finfo(DType.E8M0).min == 2.0 ** -127   # no zero: its smallest normal


@pytest.mark.parametrize("kwargs, match", [
    ({"exponent_bits": 4, "mantissa_bits": 0, "bias": 7, "nan_encoding": "ieee"},
     "'ieee' needs mantissa_bits >= 1"),
    ({"exponent_bits": 4, "mantissa_bits": 3, "bias": 7, "nan_encoding": "negative_zero",
      "signed": False}, "'negative_zero' needs a sign bit"),
    ({"exponent_bits": 15, "mantissa_bits": 112, "bias": 16383, "nan_encoding": "ieee"},
     "wider than float64's"),
    ({"exponent_bits": 8, "mantissa_bits": 3, "bias": -2000, "nan_encoding": "ieee"},
     "not all float64 values"),
    ({"exponent_bits": 4, "mantissa_bits": 3, "bias": 7, "nan_encoding": "ieee",
      "signed": 1}, "signed must be a bool, got 1"),
])
def test_floating_refuses_formats_it_cannot_describe_exactly(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        NumericInfo.floating("x", **kwargs)


def test_integer_and_boolean_validate_their_width():
    with pytest.raises(ValueError, match="bits must be a positive int, got 0"):
        NumericInfo.integer(0, signed=True)
    with pytest.raises(ValueError, match="bits must be a positive int, got True"):
        NumericInfo.integer(True, signed=True)
    with pytest.raises(TypeError, match="missing required keyword argument 'signed'"):
        NumericInfo.integer(8)  # type: ignore[call-arg]
    assert NumericInfo.integer(128, signed=False).max == (1 << 128) - 1
    assert NumericInfo.boolean(1).encoding == "bool1"


def test_the_factories_show_their_signatures():
    import inspect

    assert str(inspect.signature(NumericInfo.floating)) == (
        "(encoding, *, exponent_bits, mantissa_bits, bias, nan_encoding, "
        "signed=True, complex=False)")
    assert str(inspect.signature(NumericInfo.integer)) == "(bits, *, signed)"
    assert str(inspect.signature(numeric_info)) == "(dtype, /)"
    assert NumericInfo.__module__ == "stride_weave.numerics"


def test_each_query_names_itself_in_its_errors():
    with pytest.raises(TypeError, match=r"^finfo: dtype must be a registered SimpleDType, got 'Float32'"):
        finfo("Float32")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^iinfo: dtype must be a registered SimpleDType, "
                                        r"got the block-scaled BlockScaledDType\('MXFP4'\)"):
        iinfo(DType.MXFP4)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^finfo: dtype must be a registered SimpleDType, "
                                        r"got the block-scaled BlockScaledDType\('MXFP4'\) "
                                        r"\(its element and each level's scale have records\)$"):
        finfo(DType.MXFP4)  # type: ignore[arg-type]
    d = SimpleDType(unique_name("NoRecord"), bits=8, supertype=DType.Floating)
    with pytest.raises(LookupError, match=r"^finfo: no numeric record is registered for"):
        finfo(d)
