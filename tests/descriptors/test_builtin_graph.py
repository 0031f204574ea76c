"""Requirement: The built-in descriptor graph is stable.

Categories Any (root), Floating and Integer (under Any); the simple dtypes and
widths of the built-in table; every built-in is ``DType.<name>`` and identical
to ``DType.from_name(<name>)``; the categories serve as supertypes for
registered simple and compound descriptors.
"""
import pytest

from support import unique_name
from stride_weave.dtypes import CompoundDType, DType, DTypeCategory, SimpleDType


BUILTIN_CATEGORIES = {
    "Any": None,
    "Floating": "Any",
    "Integer": "Any",
}

BUILTIN_SIMPLES = {
    # name: (bits, supertype)
    "Bool": (8, "Any"),
    "Int32": (32, "Integer"),
    "Int8": (8, "Integer"),
    "Float32": (32, "Floating"),
    "Float64": (64, "Floating"),
    "E8M0": (8, "Floating"),
    "E5M2": (8, "Floating"),
    "E4M3": (8, "Floating"),
    "E3M2": (6, "Floating"),
    "E2M3": (6, "Floating"),
    "E2M1": (4, "Floating"),
}


def _builtin_attributes():
    """Every descriptor bound as a DType class attribute."""
    return {k: v for k, v in vars(DType).items() if isinstance(v, DType)}


@pytest.mark.parametrize("name", sorted(BUILTIN_CATEGORIES))
def test_builtin_category(name):
    """Built-in categories: kind, exact class and supertype."""
    d = getattr(DType, name)
    assert type(d) is DTypeCategory
    assert d.is_category() is True
    assert d.is_simple() is False
    assert d.is_compound() is False
    assert d.name == name
    assert d.value == name
    sup = BUILTIN_CATEGORIES[name]
    if sup is None:
        assert d.supertype is None
        assert d.supertypes() == ()
    else:
        assert d.supertype is getattr(DType, sup)
        assert d.supertypes() == (DType.Any,)


@pytest.mark.parametrize("name", sorted(BUILTIN_SIMPLES))
def test_builtin_simple(name):
    """Built-in simple dtypes: kind, exact class, width and supertype."""
    bits, sup = BUILTIN_SIMPLES[name]
    d = getattr(DType, name)
    assert type(d) is SimpleDType
    assert d.is_simple() is True
    assert d.is_category() is False
    assert d.is_compound() is False
    assert d.name == name
    assert d.value == name
    assert d.bits == bits
    assert type(d.bits) is int
    assert d.supertype is getattr(DType, sup)
    expected_chain = (DType.Any,) if sup == "Any" else (getattr(DType, sup), DType.Any)
    assert d.supertypes() == expected_chain


def test_builtin_categories_are_exactly_any_floating_integer():
    """The built-in categories SHALL be Any, Floating, and Integer."""
    cats = {k for k, v in _builtin_attributes().items() if v.is_category()}
    assert cats == set(BUILTIN_CATEGORIES)


def test_builtin_simples_are_exactly_the_table():
    simples = {k for k, v in _builtin_attributes().items() if v.is_simple()}
    assert simples == set(BUILTIN_SIMPLES)


def test_every_builtin_attribute_is_bound_under_its_own_name():
    for attr, d in _builtin_attributes().items():
        assert d.name == attr
        assert DType.from_name(attr) is d


@pytest.mark.parametrize("name", sorted({**BUILTIN_CATEGORIES, **BUILTIN_SIMPLES}))
def test_resolve_a_builtin_through_both_surfaces(name):
    """Scenario: Resolve a built-in through both surfaces.

    DType.<name> and DType.from_name(<name>) return the same object.
    """
    assert getattr(DType, name) is DType.from_name(name)
    assert DType.from_name(name) is DType.from_name(name)
    kind = DTypeCategory if name in BUILTIN_CATEGORIES else SimpleDType
    assert kind.from_name(name) is getattr(DType, name)


def test_resolve_float32_through_both_surfaces():
    """Scenario: Resolve a built-in through both surfaces (the documented example)."""
    assert DType.Float32 is DType.from_name("Float32")


@pytest.mark.parametrize("name", sorted({**BUILTIN_CATEGORIES, **BUILTIN_SIMPLES}))
def test_builtins_are_registered(name):
    d = getattr(DType, name)
    assert DType.registered().count(d) == 1


def test_builtins_are_visible_through_subclasses_and_instances():
    """DType.<builtin> is a plain class attribute, inherited by subclasses."""
    assert SimpleDType.Float32 is DType.Float32
    assert DTypeCategory.Any is DType.Any
    assert CompoundDType.Int8 is DType.Int8
    assert DType.Float32.Float64 is DType.Float64
    assert "Float32" in vars(DType)
    assert "Float32" not in vars(SimpleDType)


# --------------------------------------------------------------------------
# Scenario: Retain categories as extension supertypes
# --------------------------------------------------------------------------

def test_retain_categories_as_extension_supertypes():
    """Scenario: Retain categories as extension supertypes.

    A valid SimpleDType whose supertype is DType.Floating joins the Floating
    and Any hierarchy.
    """
    d = SimpleDType(unique_name("Retain"), bits=16, supertype=DType.Floating)
    assert d.supertypes() == (DType.Floating, DType.Any)
    assert d.is_subtype_of(DType.Floating) and d.is_subtype_of(DType.Any)
    # The categories are unchanged relationship identities.
    assert DType.Floating.is_category() and not DType.Floating.is_simple()


@pytest.mark.parametrize("category", sorted(BUILTIN_CATEGORIES))
def test_every_builtin_category_is_a_simple_supertype(category):
    cat = getattr(DType, category)
    d = SimpleDType(unique_name("UnderBuiltin"), bits=8, supertype=cat)
    assert d.supertype is cat
    assert d.is_subtype_of(cat)


@pytest.mark.parametrize("category", sorted(BUILTIN_CATEGORIES))
def test_every_builtin_category_is_a_category_supertype(category):
    cat = getattr(DType, category)
    c = DTypeCategory(unique_name("CatUnderBuiltin"), supertype=cat)
    assert c.supertype is cat
    assert c.supertypes()[0] is cat


class _Compound(CompoundDType, abstract=False):
    pass


@pytest.mark.parametrize("category", sorted(BUILTIN_CATEGORIES))
def test_every_builtin_category_is_a_compound_supertype(category):
    cat = getattr(DType, category)
    c = _Compound(unique_name("CompUnderBuiltin"), supertype=cat,
                  simple_types=[DType.Float32, DType.E8M0])
    assert c.supertype is cat
    assert c.is_subtype_of(cat)
    assert c.is_compound()
