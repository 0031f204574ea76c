"""Requirement: Registry discovery is class-narrowed.

``DType.registered()`` is an immutable snapshot of all registered descriptors
(in registration order); on a subclass it holds only instances of that
subclass. ``from_name(name)`` returns the identity with that exact name,
narrowed by class; non-str is TypeError; unknown or kind mismatch is
LookupError.
"""
import pytest

from support import registry_unchanged, unique_name, refused
from stride_weave.dtypes import CompoundDType, DType, DTypeCategory, SimpleDType


def _simple(name=None, supertype=None):
    return SimpleDType(name or unique_name("RegS"), bits=8,
                       supertype=supertype or DType.Floating)


# --------------------------------------------------------------------------
# registered()
# --------------------------------------------------------------------------

@pytest.mark.parametrize("cls", [DType, DTypeCategory, SimpleDType, CompoundDType],
                         ids=lambda c: c.__name__)
def test_registered_is_a_tuple_of_descriptors(cls):
    snap = cls.registered()
    assert type(snap) is tuple
    assert all(isinstance(d, cls) for d in snap)
    assert len(set(map(id, snap))) == len(snap)


def test_registered_is_in_registration_order():
    a = _simple()
    b = DTypeCategory(unique_name("RegC"), supertype=DType.Any)
    c = _simple(supertype=b)
    snap = DType.registered()
    assert snap[-3:] == (a, b, c)
    assert snap.index(a) < snap.index(b) < snap.index(c)
    assert SimpleDType.registered()[-2:] == (a, c)
    assert DTypeCategory.registered()[-1] is b


def test_builtins_precede_extensions():
    ext = _simple()
    snap = DType.registered()
    assert snap.index(DType.Any) < snap.index(ext)
    assert snap.index(DType.E2M1) < snap.index(ext)


def test_registered_snapshot_does_not_change_after_registration():
    """registered() is an immutable snapshot."""
    snap = DType.registered()
    copy = tuple(snap)
    simple_snap = SimpleDType.registered()
    d = _simple()
    assert snap == copy
    assert d not in snap
    assert d not in simple_snap
    assert DType.registered() == snap + (d,)
    assert SimpleDType.registered() == simple_snap + (d,)


def test_registered_snapshot_is_immutable():
    snap = DType.registered()
    with refused(TypeError):
        snap[0] = DType.Float32
    with refused(AttributeError):
        snap.append(DType.Float32)


def test_registered_is_stable_between_registrations():
    assert DType.registered() == DType.registered()
    assert SimpleDType.registered() == SimpleDType.registered()


# --------------------------------------------------------------------------
# Scenario: Discover extension dtypes
# --------------------------------------------------------------------------

def test_discover_extension_dtypes():
    """Scenario: Discover extension dtypes.

    A new SimpleDType appears in both DType.registered() and
    SimpleDType.registered() and resolves from both classes by name.
    """
    name = unique_name("Discover")
    d = SimpleDType(name, bits=16, supertype=DType.Floating)
    assert d in DType.registered()
    assert d in SimpleDType.registered()
    assert d not in DTypeCategory.registered()
    assert d not in CompoundDType.registered()
    assert DType.from_name(name) is d
    assert SimpleDType.from_name(name) is d


def test_registered_is_narrowed_by_model_class():
    all_ = DType.registered()
    cats = DTypeCategory.registered()
    simples = SimpleDType.registered()
    comps = CompoundDType.registered()
    assert cats == tuple(d for d in all_ if isinstance(d, DTypeCategory))
    assert simples == tuple(d for d in all_ if isinstance(d, SimpleDType))
    assert comps == tuple(d for d in all_ if isinstance(d, CompoundDType))
    assert DType.Any in cats and DType.Float32 not in cats
    assert DType.Float32 in simples and DType.Any not in simples
    assert DType.Float32 not in comps


def test_registered_is_narrowed_by_user_subclass():
    class MySimple(SimpleDType, abstract=False):
        pass

    class MySub(MySimple, abstract=False):
        pass

    class Other(SimpleDType, abstract=False):
        pass

    class MyAbstract(SimpleDType):
        pass

    assert MySimple.registered() == ()
    a = MySimple(unique_name("Narrow"), bits=8, supertype=DType.Floating)
    plain = _simple()
    b = MySub(unique_name("NarrowSub"), bits=8, supertype=DType.Floating)
    o = Other(unique_name("NarrowOther"), bits=8, supertype=DType.Floating)
    assert MySimple.registered() == (a, b)
    assert MySub.registered() == (b,)
    assert Other.registered() == (o,)
    assert MyAbstract.registered() == ()
    tail = SimpleDType.registered()[-4:]
    assert tail == (a, plain, b, o)
    assert DType.registered()[-4:] == (a, plain, b, o)


def test_registered_narrowed_by_category_subclass():
    class MyCat(DTypeCategory, abstract=False):
        pass

    c = MyCat(unique_name("NarrowCat"), supertype=DType.Any)
    assert MyCat.registered() == (c,)
    assert c in DTypeCategory.registered()
    assert c not in SimpleDType.registered()


# --------------------------------------------------------------------------
# from_name
# --------------------------------------------------------------------------

@pytest.mark.parametrize(
    "bad",
    [None, 1, 1.5, b"Float32", bytearray(b"Float32"), ["Float32"], ("Float32",),
     object(), True],
    ids=["None", "int", "float", "bytes", "bytearray", "list", "tuple", "object",
         "bool"],
)
@pytest.mark.parametrize("cls", [DType, DTypeCategory, SimpleDType, CompoundDType],
                         ids=lambda c: c.__name__)
def test_from_name_non_str_is_type_error(cls, bad):
    """A non-string name fails with TypeError naming the argument."""
    with refused(TypeError, match="name"):
        cls.from_name(bad)


def test_from_name_descriptor_is_type_error():
    with refused(TypeError, match="name"):
        DType.from_name(DType.Float32)


def test_from_name_requires_an_argument():
    with refused(TypeError):
        DType.from_name()


@pytest.mark.parametrize("cls", [DType, DTypeCategory, SimpleDType, CompoundDType],
                         ids=lambda c: c.__name__)
def test_from_name_unknown_is_lookup_error(cls):
    name = unique_name("Unknown")
    with refused(LookupError, match=name):
        cls.from_name(name)


@pytest.mark.parametrize("name", ["", "float32", "FLOAT32", " Float32", "Float32 ",
                                  "Float32\x00", "DType.Float32"])
def test_from_name_is_exact(name):
    """Only the exact registered string matches (no case folding, no strip)."""
    with refused(LookupError):
        DType.from_name(name)



# --------------------------------------------------------------------------
# Scenario: Reject a class-mismatched lookup
# --------------------------------------------------------------------------

@pytest.mark.parametrize("category", ["Any", "Floating", "Integer"])
def test_reject_a_class_mismatched_lookup(category):
    """Scenario: Reject a class-mismatched lookup.

    SimpleDType.from_name receives the name of a category -> LookupError.
    """
    with refused(LookupError, match=category):
        SimpleDType.from_name(category)
    assert DType.from_name(category) is getattr(DType, category)


@pytest.mark.parametrize(
    "cls, name",
    [
        (DTypeCategory, "Float32"),
        (CompoundDType, "Float32"),
        (CompoundDType, "Any"),
        (DTypeCategory, "Bool"),
    ],
)
def test_class_mismatched_lookup_other_kinds(cls, name):
    with refused(LookupError):
        cls.from_name(name)


def test_class_mismatched_lookup_user_subclass():
    class MySimple(SimpleDType, abstract=False):
        pass

    mine = MySimple(unique_name("Mine"), bits=8, supertype=DType.Floating)
    plain = _simple()
    assert MySimple.from_name(mine.name) is mine
    assert SimpleDType.from_name(mine.name) is mine
    assert DType.from_name(mine.name) is mine
    with refused(LookupError):
        MySimple.from_name(plain.name)
    with refused(LookupError):
        MySimple.from_name("Float32")
    with refused(LookupError):
        DTypeCategory.from_name(mine.name)


def test_extension_category_resolves_from_category_and_dtype_only():
    c = DTypeCategory(unique_name("FindCat"), supertype=DType.Any)
    assert DType.from_name(c.name) is c
    assert DTypeCategory.from_name(c.name) is c
    with refused(LookupError):
        SimpleDType.from_name(c.name)


# --------------------------------------------------------------------------
# str-subclass lookups
# --------------------------------------------------------------------------

class PlainStrSub(str):
    pass


class LyingStr(str):
    """Claims to equal everything and hashes like 'Float32'."""

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def __hash__(self):
        return hash("Float32")


class RaisingStr(str):
    def __eq__(self, other):
        raise AssertionError("__eq__ ran")

    def __ne__(self, other):
        raise AssertionError("__ne__ ran")

    def __hash__(self):
        raise AssertionError("__hash__ ran")


def test_from_name_accepts_str_subclass():
    assert DType.from_name(PlainStrSub("Float32")) is DType.Float32
    assert SimpleDType.from_name(PlainStrSub("Float32")) is DType.Float32
    d = _simple()
    assert DType.from_name(PlainStrSub(d.name)) is d


def test_from_name_str_subclass_matches_by_exact_content():
    """A str subclass lying about __eq__/__hash__ matches only its content."""
    assert DType.from_name(LyingStr("Float32")) is DType.Float32
    with refused(LookupError):
        DType.from_name(LyingStr(unique_name("Lying")))


def test_from_name_str_subclass_dunders_never_run():
    assert DType.from_name(RaisingStr("Float32")) is DType.Float32
    with refused(LookupError):
        DType.from_name(RaisingStr(unique_name("Raising")))


def test_from_name_str_subclass_kind_mismatch():
    with refused(LookupError):
        SimpleDType.from_name(PlainStrSub("Any"))


def test_lookups_do_not_change_the_registry():
    with registry_unchanged():
        DType.from_name("Float32")
        with refused(LookupError):
            DType.from_name(unique_name("Nothing"))
        with refused(TypeError):
            DType.from_name(None)
        SimpleDType.registered()
