"""Requirement: Simple dtypes declare one exact positive width.

``SimpleDType(name, *, bits, supertype)``: bits is an int (not bool) > 0,
otherwise ValueError; supertype is a DTypeCategory, otherwise TypeError; both
failures happen before the name is registered.
"""
import decimal
import fractions
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support import assert_unregistered, refused, registry_unchanged, unique_name
from stride_weave.dtypes import CompoundDType, DType, DTypeCategory, SimpleDType


class _ConcreteSimple(SimpleDType, abstract=False):
    pass


# --------------------------------------------------------------------------
# Scenario: Construct a simple extension
# --------------------------------------------------------------------------

def test_construct_a_simple_extension():
    """Scenario: Construct a simple extension.

    SimpleDType("Float16", bits=16, supertype=DType.Floating) under an unused
    name is a registered 16-bit simple dtype beneath Floating and Any.
    """
    name = unique_name("Float16")
    d = SimpleDType(name, bits=16, supertype=DType.Floating)
    assert type(d) is SimpleDType
    assert DType.from_name(name) is d
    assert SimpleDType.from_name(name) is d
    assert d.is_simple() is True
    assert d.is_category() is False
    assert d.is_compound() is False
    assert d.bits == 16
    assert type(d.bits) is int
    assert d.supertype is DType.Floating
    assert d.supertypes() == (DType.Floating, DType.Any)
    assert d.is_subtype_of(DType.Floating)
    assert d.is_subtype_of(DType.Any)
    assert not d.is_subtype_of(DType.Integer)


@pytest.mark.parametrize("bits", [1, 3, 7, 24, 1000])
def test_simple_is_simple_even_without_carrier_support(bits):
    """is_simple() describes the representation, whatever the width."""
    d = SimpleDType(unique_name("Odd"), bits=bits, supertype=DType.Integer)
    assert d.is_simple() is True
    assert d.bits == bits


@pytest.mark.parametrize("bits", [2**63, 2**64, 2**64 + 1, 2**200, 10**100])
def test_huge_int_bits_are_accepted_exactly(bits):
    """bits is of arbitrary size and is returned exactly."""
    d = SimpleDType(unique_name("Huge"), bits=bits, supertype=DType.Floating)
    assert d.bits == bits
    assert type(d.bits) is int


def _encoded_int(n):
    """design.md: decimal inside the int64 range, hex(n) outside it."""
    return "int:" + (str(n) if -2**63 <= n < 2**63 else hex(n))


def test_width_beyond_the_int_str_digit_limit_is_accepted():
    """bits is of arbitrary size, even past sys.get_int_max_str_digits(); the
    structure still records it exactly (as hex outside the int64 range)."""
    limit = sys.get_int_max_str_digits()
    bits = 10 ** (max(limit, 4300) + 10) + 7
    name = unique_name("Giant")
    d = SimpleDType(name, bits=bits, supertype=DType.Floating)
    assert DType.from_name(name) is d
    assert d.bits == bits
    assert d.structure()[1] == ("bits", "int:" + hex(bits))


@pytest.mark.parametrize("bits, encoded", [
    (2**63 - 1, "int:9223372036854775807"),
    (2**63, "int:0x8000000000000000"),
    (2**64 + 1, "int:0x10000000000000001"),
])
def test_width_encoding_switches_to_hex_past_int64(bits, encoded):
    d = SimpleDType(unique_name("Edge"), bits=bits, supertype=DType.Integer)
    assert d.structure()[1] == ("bits", encoded)
    assert encoded == _encoded_int(bits)


def test_simple_under_an_extension_category():
    cat = DTypeCategory(unique_name("Cat"), supertype=DType.Integer)
    d = SimpleDType(unique_name("UnderCat"), bits=4, supertype=cat)
    assert d.supertype is cat
    assert d.supertypes() == (cat, DType.Integer, DType.Any)


def test_simple_under_a_category_subclass_instance():
    class Cat(DTypeCategory, abstract=False):
        pass

    cat = Cat(unique_name("SubCat"), supertype=DType.Any)
    d = SimpleDType(unique_name("UnderSubCat"), bits=4, supertype=cat)
    assert d.supertype is cat


def test_bits_and_supertype_are_keywords_in_any_order():
    name = unique_name("Order")
    d = SimpleDType(supertype=DType.Floating, bits=8, name=name)
    assert d.name == name and d.bits == 8


# --------------------------------------------------------------------------
# int-subclass bits
# --------------------------------------------------------------------------

class MyInt(int):
    pass


class LyingInt(int):
    """An int subclass whose Python-level dunders lie."""

    def __index__(self):
        return 99

    def __int__(self):
        return 99

    def __eq__(self, other):
        return True

    def __hash__(self):
        return 0

    def __repr__(self):
        return "99"

    def __str__(self):
        return "99"

    def __gt__(self, other):
        return False


@pytest.mark.parametrize("cls", [MyInt, LyingInt], ids=lambda c: c.__name__)
def test_int_subclass_bits_are_normalized_to_exact_int(cls):
    """An int-subclass width is stored as the exact int it holds."""
    d = SimpleDType(unique_name("IntSub"), bits=cls(16), supertype=DType.Floating)
    assert type(d.bits) is int
    assert int.__eq__(d.bits, 16)
    # The recorded structure carries the exact width as well.
    assert ("bits", "int:16") in d.structure()


def test_int_subclass_zero_bits_rejected():
    name = unique_name("IntSubZero")
    with registry_unchanged():
        with refused(ValueError, match="bits"):
            SimpleDType(name, bits=MyInt(0), supertype=DType.Floating)
    assert_unregistered(name)


# --------------------------------------------------------------------------
# Scenario: Reject an invalid width
# --------------------------------------------------------------------------

INVALID_BITS = [
    True, False, 0, -1, -8, -(2**100), 16.0, 1.5, float("nan"), float("inf"),
    "16", b"16", None, fractions.Fraction(16, 1), decimal.Decimal(16),
    complex(16, 0), [16], (16,),
]


@pytest.mark.parametrize("bits", INVALID_BITS, ids=repr)
def test_reject_an_invalid_width(bits):
    """Scenario: Reject an invalid width.

    When bits is a boolean, non-integer, zero, or negative construction fails
    with ValueError, naming the argument, and registers nothing.
    """
    name = unique_name("BadBits")
    with registry_unchanged():
        with refused(ValueError, match="bits") as info:
            SimpleDType(name, bits=bits, supertype=DType.Floating)
    assert_unregistered(name)
    msg = str(info.value)
    assert type(bits).__name__ in msg or repr(bits) in msg, msg


@pytest.mark.parametrize("bits", [True, 0, -1, 2.0], ids=repr)
def test_reject_an_invalid_width_in_a_subclass(bits):
    name = unique_name("BadBitsSub")
    with registry_unchanged():
        with refused(ValueError, match="bits"):
            _ConcreteSimple(name, bits=bits, supertype=DType.Floating)
    assert_unregistered(name)


def test_invalid_width_rejection_leaves_name_free():
    """A rejected width does not take the name."""
    name = unique_name("Retry")
    with registry_unchanged():
        with refused(ValueError):
            SimpleDType(name, bits=0, supertype=DType.Floating)
    d = SimpleDType(name, bits=8, supertype=DType.Floating)
    assert DType.from_name(name) is d


# --------------------------------------------------------------------------
# supertype validation
# --------------------------------------------------------------------------

INVALID_SUPERTYPES = [
    ("None", lambda: None),
    ("simple", lambda: DType.Float32),
    ("simple-extension", lambda: SimpleDType(unique_name("Sup"), bits=8,
                                             supertype=DType.Floating)),
    ("str", lambda: "Floating"),
    ("int", lambda: 1),
    ("object", lambda: object()),
    ("DType-class", lambda: DType),
    ("DTypeCategory-class", lambda: DTypeCategory),
    ("SimpleDType-class", lambda: SimpleDType),
    ("CompoundDType-class", lambda: CompoundDType),
    ("tuple", lambda: (DType.Floating,)),
]


@pytest.mark.parametrize("make", [m for _, m in INVALID_SUPERTYPES],
                         ids=[i for i, _ in INVALID_SUPERTYPES])
def test_supertype_must_be_a_category(make):
    """A supertype that is not a DTypeCategory is a TypeError naming the
    argument, before the name is registered."""
    bad = make()
    name = unique_name("BadSuper")
    with registry_unchanged():
        with refused(TypeError, match="supertype"):
            SimpleDType(name, bits=8, supertype=bad)
    assert_unregistered(name)


def test_supertype_may_not_be_a_compound_dtype():
    class Comp(CompoundDType, abstract=False):
        pass

    comp = Comp(unique_name("CompSup"), simple_types=[DType.Float32])
    name = unique_name("BadSuperComp")
    with registry_unchanged():
        with refused(TypeError, match="supertype"):
            SimpleDType(name, bits=8, supertype=comp)
    assert_unregistered(name)


# --------------------------------------------------------------------------
# Call-signature errors
# --------------------------------------------------------------------------

SIGNATURE_ERRORS = [
    ("missing-bits", lambda n: SimpleDType(n, supertype=DType.Floating)),
    ("missing-supertype", lambda n: SimpleDType(n, bits=8)),
    ("missing-both", lambda n: SimpleDType(n)),
    ("missing-name", lambda n: SimpleDType(bits=8, supertype=DType.Floating)),
    ("no-args", lambda n: SimpleDType()),
    ("positional-bits", lambda n: SimpleDType(n, 8, supertype=DType.Floating)),
    ("positional-both", lambda n: SimpleDType(n, 8, DType.Floating)),
    ("unknown-keyword", lambda n: SimpleDType(n, bits=8, supertype=DType.Floating,
                                              signed=True)),
    ("opaque_storage", lambda n: SimpleDType(n, bits=8, supertype=DType.Floating,
                                             opaque_storage=True)),
    ("name-twice", lambda n: SimpleDType(n, name=n, bits=8,
                                         supertype=DType.Floating)),
]


@pytest.mark.parametrize("call", [c for _, c in SIGNATURE_ERRORS],
                         ids=[i for i, _ in SIGNATURE_ERRORS])
def test_call_signature_errors_are_type_errors(call):
    """Missing, positional or unknown arguments are TypeErrors; nothing is
    registered."""
    name = unique_name("Sig")
    with registry_unchanged():
        with refused(TypeError):
            call(name)
    assert_unregistered(name)


@pytest.mark.parametrize("keyword", ["signed", "opaque_storage"])
def test_unknown_keyword_error_names_it(keyword):
    name = unique_name("SigKw")
    with registry_unchanged():
        with refused(TypeError, match=keyword):
            SimpleDType(name, bits=8, supertype=DType.Floating, **{keyword: True})


# --------------------------------------------------------------------------
# Property
# --------------------------------------------------------------------------

@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(bits=st.integers(min_value=1))
def test_property_any_positive_int_width_registers_exactly(bits):
    d = SimpleDType(unique_name("PBits"), bits=bits, supertype=DType.Integer)
    assert d.bits == bits and type(d.bits) is int
    assert d.structure()[1] == ("bits", _encoded_int(bits))


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(bits=st.one_of(st.integers(max_value=0), st.booleans(),
                      st.floats(), st.text(), st.none()))
def test_property_any_invalid_width_registers_nothing(bits):
    name = unique_name("PBad")
    with registry_unchanged():
        with refused(ValueError):
            SimpleDType(name, bits=bits, supertype=DType.Integer)
    assert_unregistered(name)
