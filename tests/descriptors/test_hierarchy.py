"""Requirement: Descriptor kinds and hierarchy are explicit.

DType and CompoundDType are abstract, as is every descriptor subclass that
does not declare ``abstract=False``; kinds are reported by
``is_category()/is_simple()/is_compound()``; ``supertype``, ``supertypes()``
and ``is_subtype_of()`` walk the category chain; ``is_opaque_storage`` does
not exist anywhere.
"""

import pytest

from support import assert_unregistered, new_class, refused, registry_unchanged, unique_name
from support.defs import register_every_kind
from stride_weave.dtypes import CompoundDType, DType, DTypeCategory, SimpleDType


# --------------------------------------------------------------------------
# Abstractness
# --------------------------------------------------------------------------

@pytest.mark.parametrize(
    "call",
    [
        lambda n: DType(n),
        lambda n: DType(n, supertype=DType.Any),
        lambda n: DType(),
        lambda n: CompoundDType(n, simple_types=[DType.Float32]),
        lambda n: CompoundDType(n, supertype=DType.Any, simple_types=[DType.Float32]),
        lambda n: CompoundDType(),
    ],
    ids=["DType(name)", "DType(name,supertype)", "DType()", "CompoundDType(name)",
         "CompoundDType(name,supertype)", "CompoundDType()"],
)
def test_model_abstract_classes_cannot_be_instantiated(call):
    """DType and CompoundDType are abstract: instantiating is a TypeError."""
    name = unique_name("Abs")
    with registry_unchanged():
        with refused(TypeError):
            call(name)
    assert_unregistered(name)


@pytest.mark.parametrize(
    "base, kwargs",
    [
        (SimpleDType, lambda: {"bits": 8, "supertype": DType.Floating}),
        (DTypeCategory, lambda: {"supertype": DType.Any}),
        (CompoundDType, lambda: {"simple_types": [DType.Float32]}),
    ],
    ids=["SimpleDType", "DTypeCategory", "CompoundDType"],
)
@pytest.mark.parametrize("declared", ["default", "abstract=True"])
def test_subclass_is_abstract_unless_declared_concrete(base, kwargs, declared):
    """A descriptor subclass that does not declare abstract=False is abstract."""
    kwds = {} if declared == "default" else {"abstract": True}
    Sub = new_class("Sub", (base,), kwds)
    name = unique_name("AbsSub")
    with registry_unchanged():
        with refused(TypeError):
            Sub(name, **kwargs())
    assert_unregistered(name)


def test_direct_abstract_dtype_subclass_is_abstract():
    """A direct DType subclass may be declared (abstract), never instantiated."""
    Sub = new_class("DirectSub", (DType,))
    name = unique_name("Direct")
    with registry_unchanged():
        with refused(TypeError):
            Sub(name)
    assert_unregistered(name)


@pytest.mark.parametrize(
    "base, kwargs, kind",
    [
        (SimpleDType, lambda: {"bits": 8, "supertype": DType.Floating}, "simple"),
        (DTypeCategory, lambda: {"supertype": DType.Any}, "category"),
        (CompoundDType, lambda: {"simple_types": [DType.Float32]}, "compound"),
    ],
    ids=["SimpleDType", "DTypeCategory", "CompoundDType"],
)
def test_abstract_false_declares_subclass_concrete(base, kwargs, kind):
    """abstract=False declares the subclass concrete (constructible)."""
    Sub = new_class("Concrete", (base,), {"abstract": False})
    name = unique_name("Concrete")
    d = Sub(name, **kwargs())
    assert type(d) is Sub
    assert isinstance(d, base) and isinstance(d, DType)
    assert DType.from_name(name) is d
    assert d.is_simple() is (kind == "simple")
    assert d.is_category() is (kind == "category")
    assert d.is_compound() is (kind == "compound")


def test_subclass_of_concrete_subclass_is_abstract_by_default():
    """abstract is not inherited: a subclass of a concrete subclass is abstract
    again unless it declares abstract=False itself."""
    Concrete = new_class("Concrete", (SimpleDType,), {"abstract": False})
    Again = new_class("Again", (Concrete,))
    AgainConcrete = new_class("AgainConcrete", (Concrete,), {"abstract": False})
    name = unique_name("Again")
    with registry_unchanged():
        with refused(TypeError):
            Again(name, bits=8, supertype=DType.Floating)
    assert_unregistered(name)
    d = AgainConcrete(name, bits=8, supertype=DType.Floating)
    assert DType.from_name(name) is d


def test_abstract_subclass_of_concrete_can_be_made_abstract_explicitly():
    Concrete = new_class("Concrete", (DTypeCategory,), {"abstract": False})
    Abstract = new_class("Abstract", (Concrete,), {"abstract": True})
    name = unique_name("AbsAgain")
    with registry_unchanged():
        with refused(TypeError):
            Abstract(name)
    assert_unregistered(name)


@pytest.mark.parametrize("value", [1, 0, "False", None, 0.0, [], "yes"],
                         ids=repr)
def test_abstract_keyword_must_be_bool(value):
    """abstract must be a bool: TypeError naming the keyword otherwise."""
    with registry_unchanged():
        with refused(TypeError, match="abstract"):
            new_class("BadAbstract", (SimpleDType,), {"abstract": value})


@pytest.mark.parametrize("keyword", ["frobnicate", "opaque_storage", "abstrct",
                                     "concrete", "bits"])
def test_unknown_class_keyword_is_type_error_naming_it(keyword):
    """Any class keyword other than abstract is a TypeError naming it."""
    with registry_unchanged():
        with refused(TypeError, match=keyword):
            new_class("BadKw", (SimpleDType,), {keyword: True})
    with refused(TypeError, match=keyword):
        new_class("BadKw", (DTypeCategory,), {keyword: True, "abstract": False})


def test_unknown_class_keyword_in_class_statement():
    with refused(TypeError, match="frobnicate"):
        class Bad(SimpleDType, frobnicate=1):  # noqa: F841
            pass


def test_concrete_direct_dtype_subclass_is_type_error():
    """Every constructible descriptor is a category, simple or compound dtype:
    declaring a direct DType subclass concrete is a TypeError at class creation."""
    with registry_unchanged():
        with refused(TypeError):
            class Direct(DType, abstract=False):  # noqa: F841
                pass


def test_concrete_subclass_of_abstract_direct_dtype_subclass_is_type_error():
    Direct = new_class("Direct", (DType,))
    with refused(TypeError):
        new_class("DirectConcrete", (Direct,), {"abstract": False})


# --------------------------------------------------------------------------
# Kinds
# --------------------------------------------------------------------------

CATEGORIES = ["Any", "Floating", "Integer"]
SIMPLES = ["Bool", "Int32", "Int8", "Float32", "Float64", "E8M0", "E5M2",
           "E4M3", "E3M2", "E2M3", "E2M1"]


@pytest.mark.parametrize("name", CATEGORIES)
def test_builtin_categories_report_category_kind(name):
    d = DType.from_name(name)
    assert d.is_category() is True
    assert d.is_simple() is False
    assert d.is_compound() is False


@pytest.mark.parametrize("name", SIMPLES)
def test_builtin_simples_report_simple_kind(name):
    d = DType.from_name(name)
    assert d.is_category() is False
    assert d.is_simple() is True
    assert d.is_compound() is False


def test_every_registered_descriptor_reports_exactly_one_kind():
    # Extensions of every kind are registered here, so the check covers them
    # whatever else this process has registered.
    own = register_every_kind(unique_name)
    assert all(d in DType.registered() for d in own.values())
    for d in DType.registered():
        kinds = [d.is_category(), d.is_simple(), d.is_compound()]
        assert all(type(k) is bool for k in kinds), d
        assert kinds.count(True) == 1, d
        assert d.is_category() is isinstance(d, DTypeCategory)
        assert d.is_simple() is isinstance(d, SimpleDType)
        assert d.is_compound() is isinstance(d, CompoundDType)


# --------------------------------------------------------------------------
# Scenario: Query a hierarchy
# --------------------------------------------------------------------------

def test_query_a_hierarchy():
    """Scenario: Query a hierarchy.

    DType.Float32 is simple, its immediate supertype is DType.Floating, its
    supertypes include DType.Floating followed by DType.Any, and it is a
    subtype of each of those identities.
    """
    f32 = DType.Float32
    assert f32.is_simple() is True
    assert f32.supertype is DType.Floating
    assert tuple(f32.supertypes()) == (DType.Floating, DType.Any)
    sups = f32.supertypes()
    assert sups[0] is DType.Floating and sups[1] is DType.Any
    assert f32.is_subtype_of(DType.Floating) is True
    assert f32.is_subtype_of(DType.Any) is True
    assert f32.is_subtype_of(f32) is True


def test_supertypes_returns_a_tuple():
    assert type(DType.Float32.supertypes()) is tuple
    assert DType.Any.supertypes() == ()


def test_root_category_has_no_supertype():
    assert DType.Any.supertype is None
    assert DType.Any.supertypes() == ()
    assert DType.Any.is_subtype_of(DType.Any) is True
    assert DType.Any.is_subtype_of(DType.Floating) is False


def test_intermediate_category_chain():
    assert DType.Floating.supertype is DType.Any
    assert DType.Floating.supertypes() == (DType.Any,)
    assert DType.Integer.supertypes() == (DType.Any,)
    assert DType.Floating.is_subtype_of(DType.Any) is True
    assert DType.Floating.is_subtype_of(DType.Integer) is False


def test_deep_extension_chain_is_nearest_first():
    """supertypes() returns all enclosing categories, nearest to outermost."""
    a = DTypeCategory(unique_name("ChainA"), supertype=DType.Floating)
    b = DTypeCategory(unique_name("ChainB"), supertype=a)
    c = DTypeCategory(unique_name("ChainC"), supertype=b)
    s = SimpleDType(unique_name("ChainS"), bits=12, supertype=c)
    assert s.supertype is c
    assert s.supertypes() == (c, b, a, DType.Floating, DType.Any)
    assert c.supertypes() == (b, a, DType.Floating, DType.Any)
    for anc in (s, c, b, a, DType.Floating, DType.Any):
        assert s.is_subtype_of(anc) is True
    assert s.is_subtype_of(DType.Integer) is False
    assert a.is_subtype_of(s) is False
    assert a.is_subtype_of(c) is False
    assert c.is_subtype_of(a) is True


def test_separate_root_category_is_not_under_any():
    root = DTypeCategory(unique_name("Root"))
    leaf = SimpleDType(unique_name("RootLeaf"), bits=8, supertype=root)
    assert leaf.supertypes() == (root,)
    assert leaf.is_subtype_of(root) is True
    assert leaf.is_subtype_of(DType.Any) is False


@pytest.mark.parametrize(
    "d, other, expected",
    [
        ("Float32", "Float64", False),
        ("Float32", "Integer", False),
        ("Int8", "Integer", True),
        ("Int8", "Any", True),
        ("Bool", "Any", True),
        ("Bool", "Integer", False),
        ("Bool", "Floating", False),
        ("E2M1", "Floating", True),
        ("Integer", "Int8", False),
        ("Any", "Float32", False),
    ],
)
def test_is_subtype_of_builtin_pairs(d, other, expected):
    assert DType.from_name(d).is_subtype_of(DType.from_name(other)) is expected


# --------------------------------------------------------------------------
# Scenario: Reject a non-descriptor subtype query
# --------------------------------------------------------------------------

@pytest.mark.parametrize(
    "other",
    [None, "Floating", "Any", 1, object(), DType, DTypeCategory, SimpleDType,
     (DType.Floating,), [DType.Any]],
    ids=["None", "str", "str-Any", "int", "object", "DType-class",
         "DTypeCategory-class", "SimpleDType-class", "tuple", "list"],
)
@pytest.mark.parametrize("receiver", ["Float32", "Any"])
def test_reject_a_non_descriptor_subtype_query(receiver, other):
    """Scenario: Reject a non-descriptor subtype query -> TypeError."""
    with refused(TypeError):
        DType.from_name(receiver).is_subtype_of(other)


def test_is_subtype_of_requires_an_argument():
    with refused(TypeError):
        DType.Float32.is_subtype_of()


# --------------------------------------------------------------------------
# Scenario: Observe removal of the opaque-storage query
# --------------------------------------------------------------------------

def test_observe_removal_of_the_opaque_storage_query_on_every_registered():
    """Scenario: Observe removal of the opaque-storage query.

    Reading is_opaque_storage from any descriptor fails with AttributeError.
    """
    # Extensions of every kind are registered here, so the check covers them
    # whatever else this process has registered.
    own = register_every_kind(unique_name)
    assert all(d in DType.registered() for d in own.values())
    for d in DType.registered():
        with refused(AttributeError):
            d.is_opaque_storage
        with refused(AttributeError):
            getattr(d, "is_opaque_storage")
        assert not hasattr(d, "is_opaque_storage")
        assert "is_opaque_storage" not in dir(d)


@pytest.mark.parametrize("name", CATEGORIES + SIMPLES)
def test_is_opaque_storage_absent_on_builtin(name):
    d = DType.from_name(name)
    with refused(AttributeError):
        d.is_opaque_storage()
    with refused(AttributeError):
        object.__getattribute__(d, "is_opaque_storage")


@pytest.mark.parametrize("cls", [DType, DTypeCategory, SimpleDType, CompoundDType],
                         ids=lambda c: c.__name__)
def test_is_opaque_storage_absent_on_model_classes(cls):
    with refused(AttributeError):
        cls.is_opaque_storage
    assert "is_opaque_storage" not in dir(cls)
    assert all("is_opaque_storage" not in vars(k) for k in cls.__mro__)


def test_is_opaque_storage_absent_on_extension_and_subclass_instances():
    Sub = new_class("Sub", (DTypeCategory,), {"abstract": False})
    SubS = new_class("SubS", (SimpleDType,), {"abstract": False})
    cat = DTypeCategory(unique_name("OpaqueCat"), supertype=DType.Any)
    sub = Sub(unique_name("OpaqueSub"), supertype=DType.Any)
    subs = SubS(unique_name("OpaqueSubS"), bits=8, supertype=sub)
    for obj in (cat, sub, subs, Sub, SubS):
        with refused(AttributeError):
            obj.is_opaque_storage
        assert not hasattr(obj, "is_opaque_storage")


@pytest.mark.parametrize(
    "value",
    [lambda self: True, property(lambda self: True), True, None,
     staticmethod(lambda: True), classmethod(lambda cls: True)],
    ids=["method", "property", "True", "None", "staticmethod", "classmethod"],
)
@pytest.mark.parametrize("base", [DTypeCategory, SimpleDType, CompoundDType],
                         ids=lambda c: c.__name__)
@pytest.mark.parametrize("abstract", [True, False])
def test_is_opaque_storage_cannot_be_defined_by_a_subclass(base, value, abstract):
    """A subclass defining is_opaque_storage is a TypeError at class creation."""
    with registry_unchanged():
        with refused(TypeError):
            new_class("Opaque", (base,), {"abstract": abstract},
                       {"is_opaque_storage": value})


def test_is_opaque_storage_cannot_come_from_a_mixin():
    Mixin = type("Mixin", (), {"is_opaque_storage": lambda self: True})
    with refused(TypeError):
        new_class("Opaque", (Mixin, DTypeCategory), {"abstract": False})
    with refused(TypeError):
        new_class("Opaque", (DTypeCategory, Mixin), {"abstract": False})


def test_is_opaque_storage_cannot_be_assigned_later():
    Sub = new_class("Sub", (DTypeCategory,), {"abstract": False})
    with refused(AttributeError):
        Sub.is_opaque_storage = lambda self: True
    with refused(AttributeError):
        DTypeCategory.is_opaque_storage = lambda self: True
    assert not hasattr(Sub, "is_opaque_storage")
    assert not hasattr(DType.Any, "is_opaque_storage")
