"""can_cast: "safe" means every value of the source is a value of the
target, decided from the two numeric records.

Proved here against ground truth: every pair of formats of at most 16 bits
that numpy or ml_dtypes decodes (every code of the source decoded and
looked up among the target's values); records with random parameters
against values enumerated from those parameters by an independent
reference (tests/support/relations.py); numpy.can_cast for numpy's own
types at every level (with the pairs where numpy calls a lossy cast safe
named and shown lossy); the documented examples; and the rules
for dtypes without records, categories, compound and block-scaled dtypes.
"""
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support import unique_name
from support.relations import (
    ValueSet,
    decode_all,
    enumerate_record,
    extension_with_record,
    ground_truth_formats,
)
from stride_weave.dtypes import DType, SimpleDType, can_cast
from stride_weave.numerics import NumericInfo, numeric_info

np = pytest.importorskip("numpy")
pytest.importorskip("ml_dtypes")

LEVELS = ("no", "equiv", "safe", "same_kind", "unsafe")


@pytest.fixture(scope="module")
def formats():
    table = ground_truth_formats()
    return [(label, d, decode_all(t, bits)) for label, d, t, bits in table]


def test_the_records_describe_what_the_libraries_decode(formats):
    # Otherwise the comparison below would test records nobody checked.
    for label, d, values in formats:
        assert enumerate_record(numeric_info(d)).finite == values.finite, label
        reference = enumerate_record(numeric_info(d))
        assert (reference.posinf, reference.neginf, reference.nan) == (
            values.posinf, values.neginf, values.nan), label


def test_safe_is_exactly_value_inclusion_for_every_pair_up_to_16_bits(formats):
    wrong = []
    for (la, a, va), (lb, b, vb) in itertools.product(formats, repeat=2):
        if can_cast(a, b) is not va.within(vb):
            wrong.append((la, lb, can_cast(a, b)))
    assert wrong == []
    assert len(formats) >= 21       # numpy's, and ml_dtypes 0.5's at least


# Records with random parameters: every value they describe, enumerated from
# the parameters by the reference, against can_cast between them.

@st.composite
def float_records(draw):
    e = draw(st.integers(1, 4))
    m = draw(st.integers(0, 4))
    signed = draw(st.booleans())
    nan = draw(st.sampled_from(["ieee", "all_ones", "negative_zero", "none"]))
    if nan == "ieee" and m == 0:
        nan = "all_ones"
    if nan == "negative_zero" and not signed:
        nan = "none"
    if nan == "all_ones" and e == 1 and m == 0 and signed:
        nan = "none"        # refused: zero would be the only finite value
    bias = draw(st.integers(-4, 2 ** e + 2))
    # One exponent bit with the top field reserved ('ieee') leaves only
    # subnormals: a format with no normal binade is described too.
    return NumericInfo.floating(f"f{e}{m}{bias}{nan}{signed}", exponent_bits=e,
                                mantissa_bits=m, bias=bias, nan_encoding=nan,
                                signed=signed)


int_records = st.builds(lambda bits, signed: NumericInfo.integer(bits, signed=signed),
                        st.integers(1, 9), st.booleans())
records = st.one_of(float_records(), float_records(), int_records,
                    st.just(NumericInfo.boolean()))

_registered = {}


def _dtype_for(record):
    """An extension dtype carrying `record` (one per distinct record)."""
    if record not in _registered:
        _registered[record] = extension_with_record(unique_name("CastRec"), record)
    return _registered[record]


@settings(max_examples=400, deadline=None)
@given(records, records)
def test_safe_matches_the_values_the_records_describe(a, b):
    da, db = _dtype_for(a), _dtype_for(b)
    expected = enumerate_record(a).within(enumerate_record(b))
    assert can_cast(da, db) is expected
    assert can_cast(da, db, "safe") is expected


@settings(max_examples=200, deadline=None)
@given(float_records(), float_records())
def test_complex_formats_are_pairs_of_their_components(a, b):
    def complex_of(r):
        return NumericInfo.floating("c" + r.encoding, exponent_bits=r.exponent_bits,
                                    mantissa_bits=r.mantissa_bits, bias=r.bias,
                                    nan_encoding=r.nan_encoding, signed=r.signed,
                                    complex=True)
    ca, cb = _dtype_for(complex_of(a)), _dtype_for(complex_of(b))
    ra, rb = _dtype_for(a), _dtype_for(b)
    inside = enumerate_record(a).within(enumerate_record(b))
    assert can_cast(ca, cb) is inside          # component by component
    assert can_cast(ra, cb) is inside          # x is x + 0j
    assert can_cast(ca, rb) is False           # values with an imaginary part


# The documented examples (docs/relations.md).

@pytest.mark.parametrize("a, b, safe", [
    ("E2M1", "E4M3", True),
    ("E4M3", "E5M2", False),       # precision
    ("E4M3", "Float16", True),
    ("E5M2", "Float16", True),
    ("E8M0", "Float32", True),
    ("Int8", "Float16", True),
    ("Int32", "Float32", False),
    ("Bool", "E8M0", False),        # no zero
    ("Float32", "Complex64", True),
    ("Float64", "Complex64", False),
    ("Complex64", "Float64", False),
])
def test_documented_examples(a, b, safe):
    import stride_weave.formats  # noqa: F401  (Float16, Complex64)

    assert can_cast(DType.from_name(a), DType.from_name(b)) is safe


# numpy.can_cast for numpy's own types.

# numpy calls these casts safe, but they lose values: an int64 or uint64 has
# integers a float64 (and the components of a complex128) cannot hold.
NUMPY_LOSSY_SAFE = {(a, b) for a in ("int64", "uint64")
                    for b in ("float64", "complex128")}


def _numpy_pairs():
    import stride_weave.formats as F

    names = {"bool": DType.Bool, "int8": DType.Int8, "int16": F.Int16,
             "int32": DType.Int32, "int64": F.Int64, "uint8": F.UInt8,
             "uint16": F.UInt16, "uint32": F.UInt32, "uint64": F.UInt64,
             "float16": F.Float16, "float32": DType.Float32,
             "float64": DType.Float64, "complex64": F.Complex64,
             "complex128": F.Complex128}
    return names


@pytest.mark.parametrize("level", LEVELS)
def test_agrees_with_numpy_can_cast_for_numpys_types(level):
    names = _numpy_pairs()
    differences = set()
    for (na, a), (nb, b) in itertools.product(names.items(), repeat=2):
        if bool(np.can_cast(np.dtype(na), np.dtype(nb), level)) != can_cast(a, b, level):
            differences.add((na, nb))
    assert differences == (NUMPY_LOSSY_SAFE if level == "safe" else set())


def test_the_pairs_numpy_calls_safe_do_lose_values():
    for source, target in NUMPY_LOSSY_SAFE:
        value = 2 ** 53 + 1
        converted = complex(np.array(value, dtype=source).astype(target).item())
        assert int(converted.real) != value     # compared as exact integers


# ml_dtypes calls every cast from int8 and from uint8 to its float8, float6
# and float4 formats safe; by value none is (docs/relations.md).
ML_DTYPES_SUB_16 = {"float8_e4m3fn": "E4M3", "float8_e5m2": "E5M2",
                    "float8_e4m3fnuz": "E4M3FNUZ", "float8_e5m2fnuz": "E5M2FNUZ",
                    "float8_e8m0fnu": "E8M0", "float6_e3m2fn": "E3M2",
                    "float6_e2m3fn": "E2M3", "float4_e2m1fn": "E2M1"}


@pytest.mark.parametrize("source", ["int8", "uint8"])
def test_the_8_bit_integer_casts_ml_dtypes_calls_safe_lose_values(source):
    import ml_dtypes

    import stride_weave.formats as F

    ours = {"int8": DType.Int8, "uint8": F.UInt8}[source]
    every = np.arange(np.iinfo(source).min, np.iinfo(source).max + 1).astype(source)
    lossy = {}
    for name, our_name in ML_DTYPES_SUB_16.items():
        target = getattr(ml_dtypes, name)
        assert np.can_cast(np.dtype(source), np.dtype(target), "safe"), name
        back = every.astype(target).astype(np.float64)
        changed = every[back != every.astype(np.float64)]     # NaN included
        lossy[name] = len(changed)
        assert can_cast(ours, DType.from_name(our_name)) is False, name
    assert all(count > 0 for count in lossy.values()), lossy


def test_the_documented_values_of_the_8_bit_integer_casts():
    import ml_dtypes

    def through(value, source, target):
        return float(np.array(value, dtype=source).astype(getattr(ml_dtypes, target)))

    assert through(17, "int8", "float8_e4m3fn") == 16.0
    assert through(-128, "int8", "float4_e2m1fn") == -6.0
    assert np.isnan(through(0, "uint8", "float8_e8m0fnu"))


# same_kind and the levels around it.

def test_same_kind_follows_numpys_order_of_kinds():
    import stride_weave.formats as F

    assert can_cast(DType.Float64, DType.Float32, "same_kind")
    assert can_cast(F.UInt8, DType.Int8, "same_kind")
    assert not can_cast(DType.Int8, F.UInt8, "same_kind")
    assert not can_cast(DType.Float32, DType.Int32, "same_kind")
    assert can_cast(DType.E8M0, DType.E2M1, "same_kind")   # both real floating
    assert not can_cast(F.Complex64, DType.Float64, "same_kind")
    assert can_cast(DType.Bool, F.Complex128, "same_kind")


def test_no_and_equiv_are_identity_and_unsafe_needs_two_records():
    for level in ("no", "equiv"):
        assert can_cast(DType.Int8, DType.Int8, level)
        assert not can_cast(DType.Bool, DType.Int8, level)
    assert can_cast(DType.Float64, DType.Bool, "unsafe")
    assert can_cast(DType.E8M0, DType.Int8, "unsafe")


def test_without_records_only_to_themselves_at_every_level():
    plain = SimpleDType(unique_name("NoRecord"), bits=16, supertype=DType.Integer)
    others = [DType.Int32, DType.Float64, DType.MXFP4, DType.NVFP4, DType.Integer,
              DType.Floating, DType.Any]
    for d in [plain, DType.MXFP4, DType.Integer, DType.Any]:
        for level in LEVELS:
            assert can_cast(d, d, level)
            for other in others:
                if other is not d:
                    assert not can_cast(d, other, level), (d, other, level)
                    assert not can_cast(other, d, level), (other, d, level)


# Bad arguments.

@pytest.mark.parametrize("args, exc, match", [
    ((1, DType.Int8), TypeError, r"can_cast: from_ must be a registered DType, "
                                 r"got an object of type int"),
    ((DType.Int8, "Int8"), TypeError, r"can_cast: to must be a registered DType, "
                                      r"got an object of type str"),
    ((DType.Int8, DType.Int8, "lossless"), ValueError,
     r"can_cast: casting must be one of 'no', 'equiv', 'safe', 'same_kind' and "
     r"'unsafe', got 'lossless'"),
    ((DType.Int8, DType.Int8, 2), TypeError, r"casting must be a str"),
    ((DType.Int8,), TypeError, r"can_cast\(\) takes the arguments \(from_, to, /, "
                               r"casting='safe'\)"),
])
def test_bad_arguments(args, exc, match):
    with pytest.raises(exc, match=match):
        can_cast(*args)


def test_casting_by_keyword():
    assert can_cast(DType.Float64, DType.Float32, casting="same_kind")
    with pytest.raises(TypeError, match="the only keyword is 'casting'"):
        can_cast(DType.Float64, DType.Float32, level="same_kind")
    with pytest.raises(TypeError):
        can_cast(from_=DType.Float64, to=DType.Float32)


def test_value_set_reference_sanity():
    # The reference itself, on formats whose values are known by heart.
    e2m1 = enumerate_record(numeric_info(DType.E2M1))
    assert sorted(x for x in e2m1.finite if x >= 0) == [0, .5, 1, 1.5, 2, 3, 4, 6]
    assert not (e2m1.nan or e2m1.posinf)
    e8m0 = enumerate_record(numeric_info(DType.E8M0))
    assert 0 not in e8m0.finite and e8m0.nan and min(e8m0.finite) == 2.0 ** -127
    assert ValueSet.of([1, 2]).within(ValueSet.of([0.0, 1.0, 2.0]))


# The answers are remembered (a cache of pairs of dtypes with records):
# remembered answers are the computed ones.  A dtype that gets its record
# before any cast of it was answered is answered from the record; once one
# was answered without it, it gets none (the answer stands).

def test_a_record_attached_before_any_cast_was_answered_is_seen():
    from stride_weave.numerics import register_numeric_info

    late = SimpleDType(unique_name("LateRecord"), bits=16, supertype=DType.Floating)
    assert can_cast(late, late)             # itself: no record needed, none settled
    register_numeric_info(late, NumericInfo.floating(
        "late16", exponent_bits=5, mantissa_bits=10, bias=15, nan_encoding="ieee"))
    assert can_cast(DType.E4M3, late)
    assert can_cast(late, DType.Float32)


def test_a_record_cannot_change_a_cast_already_answered():
    from stride_weave.numerics import numeric_info, register_numeric_info

    late = SimpleDType(unique_name("LateRecord"), bits=16, supertype=DType.Floating)
    assert not can_cast(DType.E4M3, late)
    with pytest.raises(ValueError, match="has no numeric record for good"):
        register_numeric_info(late, NumericInfo.floating(
            "late16", exponent_bits=5, mantissa_bits=10, bias=15, nan_encoding="ieee"))
    with pytest.raises(LookupError):
        numeric_info(late)
    assert not can_cast(DType.E4M3, late)
    assert not can_cast(late, DType.Float32, "unsafe")


@settings(max_examples=5, deadline=None)
@given(st.lists(records, min_size=40, max_size=60))
def test_remembered_answers_are_the_computed_ones(pool):
    dtypes = [_dtype_for(r) for r in pool] + [DType.Int8, DType.Float32, DType.E4M3]
    for _ in range(2):          # the second pass answers from the cache
        for a in dtypes:
            for b in dtypes:
                # an explicit level takes the computation, never the cache
                assert can_cast(a, b) is can_cast(a, b, "safe"), (a, b)
