"""Every field of a floating-point NumericInfo is what enumerating its codes
gives, for every small combination of parameters (one exponent bit, no
mantissa bits, any bias, every NaN encoding, signed or not), or the record
is refused with a ValueError naming a parameter; can_cast(a, b, 'safe') and
the codecs' decode agree with the same enumeration.

The reference is a brute-force decoder written from the formats'
definitions with exact arithmetic: a code is [sign][exponent field E]
[mantissa field M]; with a zero (a sign bit, or mantissa bits) field 0 holds
M * 2**(1 - bias - m) and field E >= 1 holds (1 + M / 2**m) * 2**(E - bias);
an unsigned format without mantissa bits has no zero and field E is
2**(E - bias).  'ieee' makes the all-ones field infinity (M = 0) and NaN,
'all_ones' makes the all-ones code NaN, 'negative_zero' makes the sign bit
alone NaN, 'none' leaves every code finite.
"""
import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support.relations import ValueSet, decode_all, extension_with_record, ground_truth_formats
from stride_weave.dtypes import can_cast
from stride_weave.numerics import NumericInfo

NAN_ENCODINGS = ("ieee", "all_ones", "negative_zero", "none")


def decode(code, e, m, bias, nan_encoding, signed):
    """The value of one code: a Fraction, or math.inf, -math.inf, math.nan.
    Negative zero decodes to the Fraction 0 (values compare by value)."""
    negative = signed and code >> (e + m) & 1
    field = code >> m & ((1 << e) - 1)
    frac = code & ((1 << m) - 1)
    top = (1 << e) - 1
    if nan_encoding == "ieee" and field == top:
        if frac:
            return math.nan
        return -math.inf if negative else math.inf
    if nan_encoding == "all_ones" and field == top and frac == (1 << m) - 1:
        return math.nan
    if nan_encoding == "negative_zero" and negative and field == 0 and frac == 0:
        return math.nan
    if not signed and m == 0:               # no zero: field E is 2**(E - bias)
        value = Fraction(2) ** (field - bias)
    elif field == 0:                        # zero and the subnormals
        value = Fraction(frac, 1 << m) * Fraction(2) ** (1 - bias)
    else:
        value = (1 + Fraction(frac, 1 << m)) * Fraction(2) ** (field - bias)
    return -value if negative else value


class Enumerated:
    """A format's values from decoding each of its codes, and the record
    fields the documentation defines from them."""

    def __init__(self, e, m, bias, nan_encoding, signed):
        self.bits = int(signed) + e + m
        self.values = [decode(c, e, m, bias, nan_encoding, signed)
                       for c in range(1 << self.bits)]
        self.finite = sorted({v for v in self.values if isinstance(v, Fraction)})
        positive = [v for v in self.finite if v > 0]
        self.has_inf = any(v in (math.inf, -math.inf) for v in self.values)
        self.has_nan = any(isinstance(v, float) and math.isnan(v) for v in self.values)
        self.describable = bool(positive)
        if not self.describable:
            return
        self.max, self.min = self.finite[-1], self.finite[0]
        self.smallest_subnormal = positive[0]
        # The normal codes: field >= 1, or every field without a zero.  A
        # format none of whose normal codes is finite ('ieee' with one
        # exponent bit) reports the value its first normal code would have.
        has_zero = signed or m > 0
        normals = [v for c, v in enumerate(self.values)
                   if isinstance(v, Fraction) and v > 0
                   and (not has_zero or c >> m & ((1 << e) - 1) != 0)]
        self.smallest_normal = min(normals, default=Fraction(2) ** (1 - bias))
        # The distance from 1.0 to the next larger value where 1.0 is a
        # value below the largest, else 2**-m.
        above = [v for v in self.finite if v > 1]
        self.eps = (above[0] - 1 if 1 in self.finite and above
                    else Fraction(1, 1 << m))
        self.signed = self.min < 0

    def value_set(self):
        return ValueSet.of(float(v) if isinstance(v, Fraction) else v
                           for v in self.values)


def _expected_refusal(e, m, nan_encoding, signed, enumerated):
    """The parameter a refusal must name, or None where the record must be
    made."""
    if nan_encoding == "ieee" and m == 0:
        return "mantissa_bits"          # a NaN needs a non-zero mantissa
    if nan_encoding == "negative_zero" and not signed:
        return "signed"                 # no sign bit to mark the NaN with
    if not enumerated.describable:
        return "exponent_bits"          # zero is the only finite value
    return None


def record_or_refusal(e, m, bias, nan_encoding, signed):
    """(record or None, enumeration), checking that a refusal is exactly
    where the parameters describe no format, naming the parameter."""
    enumerated = Enumerated(e, m, bias, nan_encoding, signed)
    refusal = _expected_refusal(e, m, nan_encoding, signed, enumerated)
    params = dict(exponent_bits=e, mantissa_bits=m, bias=bias,
                  nan_encoding=nan_encoding, signed=signed)
    if refusal is not None:
        with pytest.raises(ValueError, match=refusal):
            NumericInfo.floating("refused", **params)
        return None, enumerated
    return NumericInfo.floating(_name(**params), **params), enumerated


def _name(exponent_bits, mantissa_bits, bias, nan_encoding, signed):
    return (f"enum_{'s' if signed else 'u'}e{exponent_bits}m{mantissa_bits}"
            f"b{bias}_{nan_encoding}".replace("-", "n"))


@st.composite
def small_formats(draw, max_bits=12):
    """(exponent_bits, mantissa_bits, bias, nan_encoding, signed) of at most
    max_bits bits, with one exponent bit and no mantissa bits included."""
    signed = draw(st.booleans())
    e = draw(st.integers(1, min(6, max_bits - signed)))
    m = draw(st.integers(0, max_bits - signed - e))
    bias = draw(st.integers(-6, (1 << e) + 6))
    nan_encoding = draw(st.sampled_from(NAN_ENCODINGS))
    return e, m, bias, nan_encoding, signed


def _check_fields(record, enumerated):
    assert record.bits == enumerated.bits
    assert record.signed == enumerated.signed
    assert record.max == enumerated.max
    assert record.min == enumerated.min
    assert record.smallest_subnormal == enumerated.smallest_subnormal
    assert record.smallest_normal == enumerated.smallest_normal
    assert record.eps == enumerated.eps
    assert record.has_inf == enumerated.has_inf
    assert record.has_nan == enumerated.has_nan
    # every field a float that is exactly the enumerated Fraction
    for name in ("max", "min", "smallest_subnormal", "smallest_normal", "eps"):
        assert type(getattr(record, name)) is float, name


@settings(max_examples=600, deadline=None)
@given(small_formats())
def test_every_field_of_a_small_float_record_is_what_its_codes_decode_to(params):
    record, enumerated = record_or_refusal(*params)
    if record is not None:
        _check_fields(record, enumerated)


@pytest.mark.parametrize("e", [1, 2])
@pytest.mark.parametrize("m", [0, 1, 2, 3])
@pytest.mark.parametrize("bias", [-3, 0, 1, 2, 5])
@pytest.mark.parametrize("nan_encoding", NAN_ENCODINGS)
@pytest.mark.parametrize("signed", [True, False])
def test_every_narrow_exponent_format_is_described_or_refused(e, m, bias, nan_encoding,
                                                              signed):
    """Every combination with one or two exponent bits, where the largest
    code can be a subnormal, or zero, and where 1.0 can be a subnormal."""
    record, enumerated = record_or_refusal(e, m, bias, nan_encoding, signed)
    if record is not None:
        _check_fields(record, enumerated)


def test_one_exponent_bit_formats_report_the_values_they_have():
    # Field 0 holds the subnormals M/4, field 1 infinity and NaN: the
    # largest finite value is 0.75, and there is no normal value.
    e1m2, _ = record_or_refusal(1, 2, 1, "ieee", True)
    assert (e1m2.max, e1m2.min, e1m2.smallest_subnormal) == (0.75, -0.75, 0.25)
    # Field 0 is zero alone, field 1 the NaN: nothing to describe.
    with pytest.raises(ValueError, match="exponent_bits must be at least 2 .* got 1"):
        NumericInfo.floating("zero_only", exponent_bits=1, mantissa_bits=0, bias=1,
                             nan_encoding="all_ones")
    # 1.0 a subnormal (bias 0): the next value is a subnormal step away.
    e2m2, _ = record_or_refusal(2, 2, 0, "ieee", True)
    assert (e2m2.eps, e2m2.max) == (0.5, 7.0)


def _dtype(params):
    record, _ = record_or_refusal(*params)
    if record is None:
        return None
    return extension_with_record(_name(*params), record)


@settings(max_examples=300, deadline=None)
@given(small_formats(max_bits=9), small_formats(max_bits=9))
def test_safe_casting_is_every_value_of_one_being_a_value_of_the_other(a, b):
    da, db = _dtype(a), _dtype(b)
    if da is None or db is None:
        return
    inside = Enumerated(*a).value_set().within(Enumerated(*b).value_set())
    assert can_cast(da, db, "safe") is inside


def test_a_one_exponent_bit_format_casts_into_a_wider_one_holding_its_values():
    # E1M4 bias 0 (ieee): k/8 for k < 16, infinities and NaN; E2M3 bias 2
    # holds every k/8 up to 1.875 (its subnormals are multiples of 1/16).
    narrow, wide = _dtype((1, 4, 0, "ieee", True)), _dtype((2, 3, 2, "ieee", True))
    assert can_cast(narrow, wide, "safe")
    assert not can_cast(wide, narrow, "safe")


@settings(max_examples=200, deadline=None)
@given(small_formats())
def test_decode_gives_the_value_of_every_code_and_encode_finds_it_again(params):
    np = pytest.importorskip("numpy")
    codecs = pytest.importorskip("stride_weave.codecs")
    d = _dtype(params)
    if d is None:
        return
    enumerated = Enumerated(*params)
    storage = np.uint8 if enumerated.bits <= 8 else np.uint16
    decoded = codecs.decode(np.arange(1 << enumerated.bits, dtype=storage), d,
                            out_dtype="float64")
    for code, (got, want) in enumerate(zip(decoded.tolist(), enumerated.values)):
        if isinstance(want, float) and math.isnan(want):
            assert math.isnan(got), code
        else:
            assert got == want, code
    # and every value encodes to a code of that value
    values = np.array([float(v) for v in enumerated.values
                       if not (isinstance(v, float) and math.isnan(v))])
    again = codecs.decode(codecs.encode(values, d), d, out_dtype="float64")
    assert again.tolist() == values.tolist()


def _ml_dtypes_floats():
    pytest.importorskip("ml_dtypes")
    from stride_weave.numerics import numeric_info

    return [(label, numeric_info(d), np_type, bits)
            for label, d, np_type, bits in ground_truth_formats()
            if label.startswith(("float", "bfloat"))]


def test_the_ml_dtypes_formats_records_are_their_enumerations():
    """Each ml_dtypes float format (float8_e5m3fnu, unsigned, included where
    the installed ml_dtypes has it): the decoder above gives the values
    ml_dtypes decodes, and the record's fields are those of that
    enumeration."""
    checked = 0
    for label, record, np_type, bits in _ml_dtypes_floats():
        params = (record.exponent_bits, record.mantissa_bits, record.bias,
                  record.nan_encoding, record.signed)
        enumerated = Enumerated(*params)
        reference = decode_all(np_type, bits)
        mine = enumerated.value_set()
        assert mine.within(reference) and reference.within(mine), label
        _check_fields(record, enumerated)
        checked += 1
    assert checked >= 8
