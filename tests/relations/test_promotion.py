"""promote_types and result_type in the default lattice.

The documented default lattice (with the formats pack imported); the
Array API's promotion tables, written out from the standard, for the dtypes
they cover; what takes part in no implicit promotion and what the error
says then; weak Python scalars; bad arguments.
"""
import itertools

import pytest

import stride_weave.formats as F
from support import unique_name
from support.defs import PlanePair
from stride_weave.dtypes import (
    DType,
    PromotionError,
    SimpleDType,
    default_lattice,
    promote_types,
    result_type,
)

B = DType

# ---- the Array API's tables ------------------------------------------------

# Written from the Array API standard (2024.12), "Type promotion rules": the
# result of every pair of integer dtypes, of floating-point dtypes, and of
# bool with bool; a blank is a pair the standard leaves undefined.
ARRAY_API_INTEGERS = """
      i1  i2  i4  i8  u1  u2  u4  u8
  i1  i1  i2  i4  i8  i2  i4  i8  --
  i2  i2  i2  i4  i8  i2  i4  i8  --
  i4  i4  i4  i4  i8  i4  i4  i8  --
  i8  i8  i8  i8  i8  i8  i8  i8  --
  u1  i2  i2  i4  i8  u1  u2  u4  u8
  u2  i4  i4  i4  i8  u2  u2  u4  u8
  u4  i8  i8  i8  i8  u4  u4  u4  u8
  u8  --  --  --  --  u8  u8  u8  u8
"""
ARRAY_API_FLOATS = """
       f4   f8   c8  c16
   f4  f4   f8   c8  c16
   f8  f8   f8  c16  c16
   c8  c8  c16   c8  c16
  c16 c16  c16  c16  c16
"""
ARRAY_API_NAMES = {
    "i1": B.Int8, "i2": F.Int16, "i4": B.Int32, "i8": F.Int64,
    "u1": F.UInt8, "u2": F.UInt16, "u4": F.UInt32, "u8": F.UInt64,
    "f4": B.Float32, "f8": B.Float64, "c8": F.Complex64, "c16": F.Complex128,
}


def _table(text):
    rows = [line.split() for line in text.strip().splitlines()]
    header = rows[0]
    for row in rows[1:]:
        for column, cell in zip(header, row[1:]):
            yield (ARRAY_API_NAMES[row[0]], ARRAY_API_NAMES[column],
                   None if cell == "--" else ARRAY_API_NAMES[cell])


@pytest.mark.parametrize("text", [ARRAY_API_INTEGERS, ARRAY_API_FLOATS],
                         ids=["integers", "floating"])
def test_the_array_api_tables(text):
    for a, b, expected in _table(text):
        if expected is None:
            with pytest.raises(PromotionError):
                promote_types(a, b)
        else:
            assert promote_types(a, b) is expected, (a, b)
    assert promote_types(B.Bool, B.Bool) is B.Bool


def test_integers_and_floats_never_mix():
    integers = [B.Bool, B.Int8, B.Int32, F.Int16, F.Int64, F.UInt8, F.UInt16,
                F.UInt32, F.UInt64]
    floats = [B.Float32, B.Float64, F.Float16, F.BFloat16, F.Complex64, F.Complex128]
    for a, b in itertools.product(integers, floats):
        with pytest.raises(PromotionError, match="no dtype is above both"):
            promote_types(a, b)


# ---- the documented lattice ---------------------------------------------------

DOCUMENTED_EDGES = [
    (B.Bool, B.Int8), (B.Bool, F.UInt8), (B.Int8, F.Int16), (F.Int16, B.Int32),
    (B.Int32, F.Int64), (F.UInt8, F.UInt16), (F.UInt16, F.UInt32),
    (F.UInt32, F.UInt64), (F.UInt8, F.Int16), (F.UInt16, B.Int32),
    (F.UInt32, F.Int64), (F.Float16, B.Float32), (B.Float32, B.Float64),
    (F.BFloat16, B.Float32), (B.Float32, F.Complex64), (F.Complex64, F.Complex128),
    (B.Float64, F.Complex128),
]


def test_the_default_lattice_is_the_documented_one():
    lattice = default_lattice()
    # Extensions declared by other tests of this process may add dtypes of
    # their own; these are the documented ones.
    ours = {d for edge in DOCUMENTED_EDGES for d in edge}
    covers = {(a, b) for a, b in lattice.edges if a in ours and b in ours}
    assert covers == set(DOCUMENTED_EDGES)
    for lower, upper in DOCUMENTED_EDGES:
        assert promote_types(lower, upper) is upper


def test_pack_edges_are_declared_by_the_pack():
    assert set(F.PROMOTIONS) <= set(DOCUMENTED_EDGES) | {(B.Int8, B.Int32)}
    for lower, upper in F.PROMOTIONS:
        assert promote_types(lower, upper) is upper


def test_some_joins():
    assert promote_types(B.Int8, F.UInt8) is F.Int16
    assert promote_types(B.Bool, F.UInt32) is F.UInt32
    assert promote_types(F.Float16, F.BFloat16) is B.Float32
    assert promote_types(B.Float64, F.Complex64) is F.Complex128
    with pytest.raises(PromotionError, match="between Int64 and UInt64: no dtype is "
                                             "above both in the default lattice"):
        promote_types(F.Int64, F.UInt64)


# ---- what takes part in no implicit promotion --------------------------------

NOT_PROMOTED = [B.E8M0, B.E5M2, B.E4M3, B.E3M2, B.E2M3, B.E2M1, F.Int4, F.UInt4,
                F.E4M3FNUZ, F.E5M2FNUZ, B.MXFP4, B.NVFP4, B.MXINT8]


@pytest.mark.parametrize("d", NOT_PROMOTED, ids=lambda d: d.name)
def test_takes_part_in_no_implicit_promotion(d):
    assert d not in default_lattice().dtypes
    assert promote_types(d, d) is d
    for other in [B.Float32, B.Int8, F.Float16, B.E4M3 if d is not B.E4M3 else B.E5M2]:
        with pytest.raises(PromotionError) as info:
            promote_types(d, other)
        message = str(info.value)
        assert d.name in message and other.name in message
        assert "takes part in no implicit promotion" in message
        assert "explicitly" in message


def test_the_error_says_why_and_suggests_a_cast():
    with pytest.raises(PromotionError, match=r"promote_types: no implicit promotion "
                       r"between E4M3 and Float16: E4M3 takes part in no implicit "
                       r"promotion in the default lattice \(a floating-point format "
                       r"narrower than 16 bits: a low-precision value needs a scale, "
                       r"so mixing it is explicit\); cast E4M3 to Float16 explicitly "
                       r"\(every E4M3 value is a Float16 value\)"):
        promote_types(B.E4M3, F.Float16)
    with pytest.raises(PromotionError, match=r"Int4 takes part in no implicit "
                       r"promotion in the default lattice \(an integer format "
                       r"narrower than 8 bits"):
        promote_types(B.Int8, F.Int4)
    with pytest.raises(PromotionError, match=r"an fnuz format"):
        promote_types(F.E5M2FNUZ, F.Float16)
    with pytest.raises(PromotionError, match=r"MXFP4 takes part in no implicit "
                       r"promotion in the default lattice \(a block-scaled format"):
        promote_types(B.MXFP4, B.Float32)
    with pytest.raises(PromotionError, match=r"cast Int8 to Float32 explicitly"):
        promote_types(B.Float32, B.Int8)
    with pytest.raises(PromotionError, match=r"cast one or both explicitly"):
        promote_types(F.Int64, F.UInt64)


def test_an_extension_without_edges_says_so():
    alone = SimpleDType(unique_name("Alone"), bits=16, supertype=DType.Floating)
    assert promote_types(alone, alone) is alone
    with pytest.raises(PromotionError, match=r"has no numeric record"):
        promote_types(alone, B.Float32)
    pair = PlanePair(unique_name("PromPair"), planes=[B.Float32, B.Float32])
    with pytest.raises(PromotionError, match=r"a compound dtype"):
        promote_types(pair, B.Float32)
    with pytest.raises(PromotionError, match=r"a category"):
        promote_types(B.Floating, B.Float32)


def test_promotion_error_is_a_type_error_and_exported():
    import stride_weave.dtypes as public

    assert issubclass(PromotionError, TypeError)
    assert public.PromotionError is PromotionError
    assert PromotionError.__module__ == "stride_weave.dtypes"


# ---- result_type and weak scalars --------------------------------------------


def test_result_type_of_dtypes():
    assert result_type(B.Int8) is B.Int8
    assert result_type(B.Int8, F.UInt8, B.Bool) is F.Int16
    assert result_type(B.E4M3, B.E4M3) is B.E4M3
    with pytest.raises(PromotionError):
        result_type(B.Int8, F.UInt8, B.Float32)


@pytest.mark.parametrize("dtype, scalar, expected", [
    (B.Int8, 1000, B.Int8),             # the value is never inspected
    (B.Int8, True, B.Int8),
    (F.UInt8, -1, F.UInt8),
    (B.Float32, 1, B.Float32),
    (B.Float32, 1e300, B.Float32),
    (F.Float16, True, F.Float16),
    (F.Complex64, 1.5, F.Complex64),
    (F.Complex64, 2j, F.Complex64),
    (B.Bool, False, B.Bool),
    (B.E4M3, 3.0, B.E4M3),              # no promotion needed
])
def test_weak_scalars_take_the_dtype_of_the_others(dtype, scalar, expected):
    assert result_type(dtype, scalar) is expected
    assert result_type(scalar, dtype) is expected
    assert result_type(scalar, dtype, scalar) is expected


@pytest.mark.parametrize("dtype, scalar, kind", [
    (B.Int8, 1.0, "float"),
    (B.Bool, 1, "int"),
    (B.Float32, 1j, "complex"),
    (F.UInt8, 0.5, "float"),
    (B.MXFP4, 1, "int"),
])
def test_a_scalar_of_a_higher_kind_is_a_promotion_error(dtype, scalar, kind):
    with pytest.raises(PromotionError, match=rf"result_type: a Python {kind} is weak"):
        result_type(dtype, scalar)


def test_scalars_join_after_the_dtypes():
    assert result_type(B.Int8, 1, F.UInt8, True) is F.Int16
    with pytest.raises(PromotionError):
        result_type(1.0, B.Int8, F.UInt8)


class MyInt(int):
    def __index__(self):
        raise AssertionError("never called")

    __int__ = __eq__ = __hash__ = __index__


@pytest.mark.parametrize("operand, match", [
    (MyInt(3), r"operand 1 is of type MyInt, a subclass of int: only exact bool, "
               r"int, float and complex are weak scalars"),
    ("1", r"operand 1 must be a registered DType or a Python bool, int, float or "
          r"complex, got an object of type str"),
    (None, r"got an object of type NoneType"),
])
def test_result_type_bad_operands(operand, match):
    with pytest.raises(TypeError, match=match):
        result_type(B.Int8, operand)


def test_result_type_needs_a_dtype():
    with pytest.raises(TypeError, match=r"result_type: needs at least one operand"):
        result_type()
    with pytest.raises(TypeError, match=r"only Python scalars"):
        result_type(1, 2.0)


def test_numpy_scalars_are_not_weak():
    np = pytest.importorskip("numpy")
    with pytest.raises(TypeError, match=r"a subclass of float"):
        result_type(B.Float32, np.float64(1.0))


# ---- bad arguments --------------------------------------------------------------


@pytest.mark.parametrize("args, exc, match", [
    ((B.Int8, "Int8"), TypeError, r"promote_types: b must be a registered DType, "
                                  r"got an object of type str"),
    ((1, B.Int8), TypeError, r"promote_types: a must be a registered DType"),
    ((B.Int8,), TypeError, r"promote_types\(\) takes exactly 2 arguments \(1 given\)"),
])
def test_promote_types_bad_arguments(args, exc, match):
    with pytest.raises(exc, match=match):
        promote_types(*args)


def test_an_unregistered_descriptor_is_a_value_error():
    class Rejected(SimpleDType, abstract=False):
        def __init__(self, name, **kwargs):
            kept.append(self)
            super().__init__(name, **kwargs)
            raise RuntimeError("rejected")

    kept = []
    with pytest.raises(RuntimeError):
        Rejected(unique_name("PromRejected"), bits=8, supertype=B.Floating)
    with pytest.raises(ValueError, match=r"not registered"):
        promote_types(kept[0], kept[0])
    with pytest.raises(ValueError, match=r"not registered"):
        result_type(kept[0])
