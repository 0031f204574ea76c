"""isdtype: the Array API kinds of every kind of dtype.

From the numeric record where there is one, else from the category: every
built-in, every dtype of the formats pack, extensions with and without a
record, block-scaled and compound dtypes and categories; kinds given as
names, as DTypes and as tuples; the same answers as numpy.isdtype for
numpy's own types; bad arguments.
"""
import pytest

from support import unique_name
from support.defs import PlanePair
from support.relations import extension_with_record
from stride_weave.dtypes import (
    BlockScaledDType,
    DType,
    DTypeCategory,
    Level,
    SimpleDType,
    isdtype,
)
from stride_weave.numerics import NumericInfo

KINDS = ("bool", "signed integer", "unsigned integer", "integral",
         "real floating", "complex floating", "numeric")


def kinds_of(d):
    return {k for k in KINDS if isdtype(d, k)}


SIGNED = {"signed integer", "integral", "numeric"}
UNSIGNED = {"unsigned integer", "integral", "numeric"}
REAL = {"real floating", "numeric"}
COMPLEX = {"complex floating", "numeric"}


@pytest.mark.parametrize("name, expected", [
    ("Bool", {"bool"}),
    ("Int8", SIGNED), ("Int32", SIGNED),
    ("Float32", REAL), ("Float64", REAL),
    ("E8M0", REAL), ("E5M2", REAL), ("E4M3", REAL), ("E3M2", REAL),
    ("E2M3", REAL), ("E2M1", REAL),
    # categories answer from the hierarchy (a category is in itself)
    ("Integer", {"integral", "numeric"}), ("Floating", REAL), ("Any", set()),
    # the built-in block-scaled formats are under Any: no kind
    ("MXFP4", set()), ("NVFP4", set()), ("MXINT8", set()), ("MXFP8_E4M3", set()),
])
def test_builtins(name, expected):
    assert kinds_of(getattr(DType, name)) == expected


def test_the_formats_pack():
    import stride_weave.formats as F

    expected = {"Float16": REAL, "BFloat16": REAL, "E4M3FNUZ": REAL,
                "E5M2FNUZ": REAL, "Int16": SIGNED, "Int64": SIGNED, "Int4": SIGNED,
                "UInt8": UNSIGNED, "UInt16": UNSIGNED, "UInt32": UNSIGNED,
                "UInt64": UNSIGNED, "UInt4": UNSIGNED, "Complex64": COMPLEX,
                "Complex128": COMPLEX}
    assert {d.name: kinds_of(d) for d in F.FORMATS} == expected


def test_extensions_without_a_record_answer_from_their_category():
    sub = DTypeCategory(unique_name("KindSub"), supertype=DType.Integer)
    as_int = SimpleDType(unique_name("KindInt"), bits=12, supertype=sub)
    as_float = SimpleDType(unique_name("KindFloat"), bits=12, supertype=DType.Floating)
    elsewhere = SimpleDType(unique_name("KindAny"), bits=12, supertype=DType.Any)
    # integral and numeric, but neither signed nor unsigned
    assert kinds_of(as_int) == {"integral", "numeric"}
    assert kinds_of(sub) == {"integral", "numeric"}
    assert kinds_of(as_float) == REAL
    assert kinds_of(elsewhere) == set()


def test_extensions_with_a_record_answer_from_it():
    # The record refines what the category says (signedness, bool, complex);
    # records that contradict it are refused (test_numeric_records).
    u = extension_with_record(unique_name("KindU12"), NumericInfo.integer(12, signed=False))
    f = extension_with_record(unique_name("KindF10"),
                              NumericInfo.floating("f10", exponent_bits=4, mantissa_bits=5,
                                                   bias=7, nan_encoding="ieee"))
    b = extension_with_record(unique_name("KindB1"), NumericInfo.boolean(1))
    c = extension_with_record(unique_name("KindC32"),
                              NumericInfo.floating("c32", exponent_bits=5, mantissa_bits=10,
                                                   bias=15, nan_encoding="ieee",
                                                   complex=True))
    assert kinds_of(u) == UNSIGNED
    assert kinds_of(f) == REAL
    assert kinds_of(b) == {"bool"}
    assert kinds_of(c) == COMPLEX


def test_compound_and_block_scaled_answer_from_their_category():
    cat = DTypeCategory(unique_name("KindPairs"), supertype=DType.Floating)
    pair = PlanePair(unique_name("KindPair"), planes=[DType.Float32, DType.Float32],
                     supertype=cat)
    orphan = PlanePair(unique_name("KindOrphan"), planes=[DType.Int8])
    scaled = BlockScaledDType(unique_name("KindBS"), element=DType.E2M1,
                              levels=[Level(DType.E8M0, 16)])
    assert kinds_of(pair) == REAL
    assert kinds_of(orphan) == set()
    assert kinds_of(scaled) == set()


def test_a_dtype_as_kind():
    # A category matches its members (and itself), any other dtype itself.
    assert isdtype(DType.E4M3, DType.Floating)
    assert isdtype(DType.Floating, DType.Floating)
    assert not isdtype(DType.Int8, DType.Floating)
    assert isdtype(DType.Int8, DType.Any)
    assert isdtype(DType.Int8, DType.Int8)
    assert not isdtype(DType.Int8, DType.Int32)
    assert not isdtype(DType.Floating, DType.E4M3)


def test_tuples_match_when_any_does():
    assert isdtype(DType.Int8, ("bool", "signed integer"))
    assert isdtype(DType.Int8, ("real floating", DType.Int8))
    assert not isdtype(DType.Int8, ("real floating", DType.Floating))
    assert not isdtype(DType.Int8, ())


def test_agrees_with_numpy_isdtype_for_numpys_types():
    np = pytest.importorskip("numpy")
    if not hasattr(np, "isdtype"):
        pytest.skip("numpy < 2 has no isdtype")
    import stride_weave.formats as F

    pairs = {"bool": DType.Bool, "int8": DType.Int8, "int16": F.Int16,
             "int32": DType.Int32, "int64": F.Int64, "uint8": F.UInt8,
             "uint16": F.UInt16, "uint32": F.UInt32, "uint64": F.UInt64,
             "float16": F.Float16, "float32": DType.Float32,
             "float64": DType.Float64, "complex64": F.Complex64,
             "complex128": F.Complex128}
    for name, d in pairs.items():
        for kind in KINDS:
            assert isdtype(d, kind) == np.isdtype(np.dtype(name), kind), (name, kind)


@pytest.mark.parametrize("args, exc, match", [
    ((1, "bool"), TypeError, r"isdtype: dtype must be a registered DType, got an "
                             r"object of type int"),
    ((DType.Int8, "floating"), ValueError,
     r"isdtype: kind must be one of 'bool', 'signed integer', 'unsigned integer', "
     r"'integral', 'real floating', 'complex floating', 'numeric', a DType or a "
     r"tuple of these, got 'floating'"),
    ((DType.Int8, 3), TypeError, r"got an object of type int"),
    ((DType.Int8, ("bool", 3)), TypeError, r"got an object of type int"),
    ((DType.Int8, ("bool", ("numeric",))), TypeError, r"a tuple holding a tuple"),
    # a bad kind is not hidden behind an earlier match
    ((DType.Int8, ("signed integer", "nope")), ValueError, r"got 'nope'"),
])
def test_bad_arguments(args, exc, match):
    with pytest.raises(exc, match=match):
        isdtype(*args)


def test_argument_count():
    with pytest.raises(TypeError, match=r"isdtype\(\) takes exactly 2 arguments"):
        isdtype(DType.Int8)


def test_kind_names_that_are_not_interned():
    # The first str equal to a kind name is remembered by identity: every
    # later one, equal or not, is still compared by its characters.
    def fresh(text):
        return "".join(list(text))      # a new, uninterned str

    for _ in range(3):
        assert isdtype(DType.Float32, fresh("real floating"))
        assert not isdtype(DType.Float32, fresh("signed integer"))
        assert isdtype(DType.Int8, fresh("signed integer"))
        with pytest.raises(ValueError):
            isdtype(DType.Int8, fresh("real floatin"))

    class Kind(str):
        pass

    assert isdtype(DType.Bool, Kind("bool")) and not isdtype(DType.Int8, Kind("bool"))
