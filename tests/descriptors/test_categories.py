"""Requirement: Categories describe hierarchy relationships.

``DTypeCategory(name, *, supertype=None)``: supertype is keyword-only, None
or a registered DTypeCategory; a non-category is a TypeError, an unfinished,
rejected or non-canonical category a ValueError; the removed
``opaque_storage`` keyword is a TypeError; all before the name is
registered.
"""
import pytest

from support import assert_unregistered, refused, registry_unchanged, unique_name
from stride_weave.dtypes import CompoundDType, DType, DTypeCategory, SimpleDType


# --------------------------------------------------------------------------
# Scenario: Construct a category extension
# --------------------------------------------------------------------------

def test_construct_a_category_extension():
    """Scenario: Construct a category extension.

    With a unique name and a registered category as supertype, the result is
    registered, reports is_category() == True and joins the chain.
    """
    name = unique_name("Cat")
    c = DTypeCategory(name, supertype=DType.Floating)
    assert type(c) is DTypeCategory
    assert DType.from_name(name) is c
    assert DTypeCategory.from_name(name) is c
    assert c in DTypeCategory.registered()
    assert c.is_category() is True
    assert c.is_simple() is False
    assert c.is_compound() is False
    assert c.supertype is DType.Floating
    assert c.supertypes() == (DType.Floating, DType.Any)
    assert c.is_subtype_of(DType.Floating)
    assert c.is_subtype_of(DType.Any)
    assert c.name == name and c.value == name


def test_category_extension_under_an_extension_category():
    outer = DTypeCategory(unique_name("Outer"), supertype=DType.Integer)
    inner = DTypeCategory(unique_name("Inner"), supertype=outer)
    assert inner.supertypes() == (outer, DType.Integer, DType.Any)


@pytest.mark.parametrize("call", [
    lambda n: DTypeCategory(n),
    lambda n: DTypeCategory(n, supertype=None),
    lambda n: DTypeCategory(name=n),
], ids=["default", "explicit-None", "name-keyword"])
def test_root_category(call):
    """supertype is optional and defaults to None for a root category."""
    name = unique_name("Root")
    c = call(name)
    assert DType.from_name(name) is c
    assert c.supertype is None
    assert c.supertypes() == ()
    assert c.is_subtype_of(c)
    assert not c.is_subtype_of(DType.Any)


def test_category_is_a_relationship_identity():
    """A category is usable as a supertype by simple, category and compound
    descriptors alike."""
    class Comp(CompoundDType, abstract=False):
        pass

    c = DTypeCategory(unique_name("Rel"), supertype=DType.Any)
    s = SimpleDType(unique_name("RelS"), bits=8, supertype=c)
    k = DTypeCategory(unique_name("RelK"), supertype=c)
    m = Comp(unique_name("RelM"), supertype=c, simple_types=[s])
    for d in (s, k, m):
        assert d.supertype is c
        assert d.is_subtype_of(c) and d.is_subtype_of(DType.Any)


# --------------------------------------------------------------------------
# Keyword-only supertype
# --------------------------------------------------------------------------

@pytest.mark.parametrize("sup", [None, "Any"], ids=["None", "Any"])
def test_supertype_is_keyword_only(sup):
    sup = sup and DType.from_name(sup)
    name = unique_name("Positional")
    with registry_unchanged():
        with refused(TypeError):
            DTypeCategory(name, sup)
    assert_unregistered(name)


@pytest.mark.parametrize("call", [
    lambda n: DTypeCategory(),
    lambda n: DTypeCategory(supertype=DType.Any),
    lambda n: DTypeCategory(n, supertype=DType.Any, bits=8),
    lambda n: DTypeCategory(n, name=n),
    lambda n: DTypeCategory(n, supertype=DType.Any, simple_types=[DType.Float32]),
], ids=["no-args", "missing-name", "bits", "name-twice", "simple_types"])
def test_signature_errors_are_type_errors(call):
    name = unique_name("CatSig")
    with registry_unchanged():
        with refused(TypeError):
            call(name)
    assert_unregistered(name)


# --------------------------------------------------------------------------
# Scenario: Reject the removed storage disposition
# --------------------------------------------------------------------------

@pytest.mark.parametrize("value", [True, False, None, 0, "yes"], ids=repr)
@pytest.mark.parametrize("with_supertype", [False, True])
def test_reject_the_removed_storage_disposition(value, with_supertype):
    """Scenario: Reject the removed storage disposition.

    Supplying opaque_storage is a TypeError identifying an unexpected keyword,
    before the name is registered.
    """
    name = unique_name("Opaque")
    kwargs = {"opaque_storage": value}
    if with_supertype:
        kwargs["supertype"] = DType.Any
    with registry_unchanged():
        with refused(TypeError,
                           match=r"unexpected keyword argument 'opaque_storage'"):
            DTypeCategory(name, **kwargs)
    assert_unregistered(name)
    # The name stayed free.
    assert DTypeCategory(name).name == name


def test_reject_opaque_storage_in_a_subclass_forwarding_kwargs():
    class Forward(DTypeCategory, abstract=False):
        def __init__(self, name, **kwargs):
            super().__init__(name, **kwargs)

    name = unique_name("OpaqueFwd")
    with registry_unchanged():
        with refused(TypeError, match="opaque_storage"):
            Forward(name, supertype=DType.Any, opaque_storage=True)
    assert_unregistered(name)


# --------------------------------------------------------------------------
# Scenario: Reject a non-category supertype
# --------------------------------------------------------------------------

NON_CATEGORIES = [
    ("simple", lambda: DType.Float32),
    ("simple-extension", lambda: SimpleDType(unique_name("NC"), bits=8,
                                             supertype=DType.Floating)),
    ("compound", None),  # filled below
    ("str", lambda: "Any"),
    ("int", lambda: 0),
    ("False", lambda: False),
    ("object", lambda: object()),
    ("DTypeCategory-class", lambda: DTypeCategory),
    ("DType-class", lambda: DType),
    ("tuple", lambda: (DType.Any,)),
    ("list", lambda: [DType.Any]),
]


def _compound():
    class Comp(CompoundDType, abstract=False):
        pass

    return Comp(unique_name("NCComp"), simple_types=[DType.Float32])


NON_CATEGORIES[2] = ("compound", _compound)


@pytest.mark.parametrize("make", [m for _, m in NON_CATEGORIES],
                         ids=[i for i, _ in NON_CATEGORIES])
def test_reject_a_non_category_supertype(make):
    """Scenario: Reject a non-category supertype.

    A non-category descriptor or other non-category value is a TypeError
    naming the argument, before the name is registered.
    """
    bad = make()
    name = unique_name("NonCat")
    with registry_unchanged():
        with refused(TypeError, match="supertype"):
            DTypeCategory(name, supertype=bad)
    assert_unregistered(name)


# --------------------------------------------------------------------------
# Scenario: Reject a noncanonical category supertype
# --------------------------------------------------------------------------

def _leaked_category(kind):
    """Return a DTypeCategory object that is not a canonical registered
    identity: rejected (user code raised), rejected before initialisation, or
    rejected as a duplicate of a registered name (non-canonical)."""
    leaked = []

    class Leak(DTypeCategory, abstract=False):
        def __init__(self, name):
            leaked.append(self)
            if kind == "uninitialised":
                raise RuntimeError("no super().__init__")
            super().__init__(name, supertype=DType.Any)
            if kind == "rejected":
                raise RuntimeError("after super().__init__")

    if kind == "noncanonical":
        taken = DTypeCategory(unique_name("Canonical"), supertype=DType.Any)
        with registry_unchanged():
            with refused(ValueError):
                Leak(taken.name)
        assert DType.from_name(taken.name) is taken
    else:
        with registry_unchanged():
            with refused(RuntimeError):
                Leak(unique_name("Leak"))
    assert len(leaked) == 1
    return leaked[0]


@pytest.mark.parametrize("kind", ["rejected", "uninitialised", "noncanonical"])
@pytest.mark.parametrize("user", ["category", "simple"])
def test_reject_a_noncanonical_category_supertype(kind, user):
    """Scenario: Reject a noncanonical category supertype.

    A rejected or non-canonical DTypeCategory object as supertype is a
    ValueError before the requested name is registered.
    """
    bad = _leaked_category(kind)
    assert isinstance(bad, DTypeCategory)
    name = unique_name("UsesBad")
    with registry_unchanged():
        with refused(ValueError, match="supertype"):
            if user == "category":
                DTypeCategory(name, supertype=bad)
            else:
                SimpleDType(name, bits=8, supertype=bad)
    assert_unregistered(name)


@pytest.mark.parametrize("when", ["before-super", "after-super"])
def test_reject_an_unfinished_category_supertype(when):
    """Scenario: Reject a noncanonical category supertype -- unfinished.

    A category still inside its own __init__ is not a usable supertype.
    """
    child = unique_name("UnfinishedChild")
    seen = []

    class Parent(DTypeCategory, abstract=False):
        def __init__(self, name):
            if when == "after-super":
                super().__init__(name, supertype=DType.Any)
            try:
                DTypeCategory(child, supertype=self)
            except ValueError as exc:
                seen.append(exc)
            if when == "before-super":
                super().__init__(name, supertype=DType.Any)

    parent = Parent(unique_name("UnfinishedParent"))
    assert len(seen) == 1
    assert "supertype" in str(seen[0])
    assert_unregistered(child)
    # Finished now: the same child name registers beneath it.
    assert DTypeCategory(child, supertype=parent).supertype is parent


def test_supertype_validation_precedes_name_validation_side_effects():
    """A bad supertype with an otherwise valid name leaves the name free."""
    name = unique_name("Free")
    with registry_unchanged():
        with refused(TypeError):
            DTypeCategory(name, supertype=DType.Float32)
    assert DTypeCategory(name, supertype=DType.Any).name == name
