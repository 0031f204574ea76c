"""Requirement: Published descriptors are immutable.

After construction, assigning or deleting attributes is an AttributeError;
copy/deepcopy return the same identity; repr names the (most-derived) class
and the registered name; a subclass that shadows a model-owned member (in its
body or through a non-model base) is a TypeError at class creation, and
assigning/deleting a model-owned class member later is an AttributeError.
"""
import copy
import types

import pytest

from support import new_class, refused, registry_unchanged, unique_name
from stride_weave.dtypes import CompoundDType, DType, DTypeCategory, SimpleDType


# design.md "Model-owned members".
OWNED = [
    "name", "value", "supertype", "supertypes", "is_subtype_of",
    "is_category", "is_simple", "is_compound", "structure", "from_name",
    "registered", "bits", "simple_types", "num_carriers",
    "representation_rules", "element", "levels", "num_axes", "block_shape",
    "bits_per_element", "is_opaque_storage", "__eq__", "__ne__", "__lt__",
    "__le__", "__gt__", "__ge__", "__hash__", "__reduce__", "__reduce_ex__",
    "__getstate__", "__setstate__", "__copy__", "__deepcopy__",
    "__getattribute__", "__getattr__", "__setattr__", "__delattr__",
    "__new__", "__repr__", "__class__", "__str__", "__format__",
]

MODEL_CLASSES = [DType, DTypeCategory, SimpleDType, CompoundDType]


def _method(self, *args, **kwargs):
    return None


# Module-level classes so __name__ == __qualname__ for the repr checks.
class MyFloat(SimpleDType, abstract=False):
    pass


class MyCategory(DTypeCategory, abstract=False):
    pass


class SlottedFloat(SimpleDType, abstract=False):
    __slots__ = ("extra",)

    def __init__(self, name, extra):
        self.extra = extra
        super().__init__(name, bits=16, supertype=DType.Floating)


class DictFloat(SimpleDType, abstract=False):
    def __init__(self, name, extra):
        self.extra = extra
        super().__init__(name, bits=16, supertype=DType.Floating)


_MAKERS = {
    "builtin-simple": lambda: DType.Float32,
    "builtin-category": lambda: DType.Any,
    "ext-simple": lambda: SimpleDType(unique_name("Imm"), bits=8,
                                      supertype=DType.Floating),
    "ext-category": lambda: DTypeCategory(unique_name("ImmCat"),
                                          supertype=DType.Any),
    "subclass": lambda: MyFloat(unique_name("ImmSub"), bits=8,
                                supertype=DType.Floating),
    "subclass-category": lambda: MyCategory(unique_name("ImmSubCat")),
    "subclass-dict": lambda: DictFloat(unique_name("ImmDict"), extra=1),
    "subclass-slots": lambda: SlottedFloat(unique_name("ImmSlot"), extra=1),
}


@pytest.fixture(params=sorted(_MAKERS))
def descriptor(request):
    """One instance of each flavour: built-in simple/category, extension,
    subclass with __dict__, subclass with __slots__."""
    return _MAKERS[request.param]()


def _snapshot(d):
    state = {
        "name": d.name, "supertype": d.supertype, "structure": d.structure(),
        "class": type(d),
    }
    if d.is_simple():
        state["bits"] = d.bits
    return state


# --------------------------------------------------------------------------
# setattr / delattr on instances
# --------------------------------------------------------------------------

@pytest.mark.parametrize("attr", ["name", "value", "supertype", "structure",
                                  "is_simple", "new_attribute", "extra",
                                  "__class__", "__dict__", "__doc__"])
def test_assigning_attributes_is_attribute_error(descriptor, attr):
    before = _snapshot(descriptor)
    with registry_unchanged():
        with refused(AttributeError):
            setattr(descriptor, attr, "changed")
    assert _snapshot(descriptor) == before
    assert DType.from_name(descriptor.name) is descriptor


def test_assigning_bits_is_attribute_error():
    for d in (DType.Float32, MyFloat(unique_name("ImmBits"), bits=8,
                                     supertype=DType.Floating)):
        with refused(AttributeError):
            d.bits = 64
        assert d.bits in (32, 8)


@pytest.mark.parametrize("attr", ["name", "value", "supertype", "structure",
                                  "new_attribute", "extra", "__dict__"])
def test_deleting_attributes_is_attribute_error(descriptor, attr):
    before = _snapshot(descriptor)
    with refused(AttributeError):
        delattr(descriptor, attr)
    assert _snapshot(descriptor) == before


def test_subclass_fields_set_in_init_are_frozen_after_construction():
    for cls in (DictFloat, SlottedFloat):
        d = cls(unique_name("Frozen"), extra=[1])
        assert d.extra == [1]
        with refused(AttributeError):
            d.extra = 2
        with refused(AttributeError):
            del d.extra
        with refused(AttributeError):
            d.other = 3
        assert d.extra == [1]
        assert not hasattr(d, "other")


def test_assigning_class_of_instance_is_attribute_error():
    d = MyFloat(unique_name("ClassSwap"), bits=8, supertype=DType.Floating)

    class OtherFloat(SimpleDType, abstract=False):
        pass

    with refused(AttributeError):
        d.__class__ = OtherFloat
    assert type(d) is MyFloat
    with refused(AttributeError):
        DType.Float32.__class__ = MyFloat
    assert type(DType.Float32) is SimpleDType


@pytest.mark.parametrize("attr", ["name", "new_attribute", "extra"])
def test_object_setattr_bypass_is_refused(descriptor, attr):
    """object.__setattr__/__delattr__ cannot bypass the seal."""
    before = _snapshot(descriptor)
    extra_before = getattr(descriptor, "extra", None)
    with refused((AttributeError, TypeError)):
        object.__setattr__(descriptor, attr, "changed")
    with refused((AttributeError, TypeError)):
        object.__delattr__(descriptor, attr)
    assert _snapshot(descriptor) == before
    assert getattr(descriptor, "extra", None) == extra_before
    assert not hasattr(descriptor, "new_attribute")


def test_slot_descriptor_bypass_is_refused():
    """Writing through the class's __slots__ member descriptor is an
    assignment too, and is refused after sealing."""
    d = SlottedFloat(unique_name("SlotBypass"), extra="orig")
    member = vars(SlottedFloat)["extra"]
    with refused((AttributeError, TypeError)):
        member.__set__(d, "changed")
    with refused((AttributeError, TypeError)):
        member.__delete__(d)
    assert d.extra == "orig"


def test_vars_is_read_only_after_sealing():
    d = DictFloat(unique_name("Vars"), extra=5)
    v = vars(d)
    assert isinstance(v, types.MappingProxyType)
    assert v["extra"] == 5
    with refused(TypeError):
        v["extra"] = 6
    with refused(TypeError):
        v["new"] = 1
    assert d.extra == 5
    dd = d.__dict__
    assert isinstance(dd, types.MappingProxyType)
    with refused((TypeError, AttributeError)):
        dd.clear()
    assert d.extra == 5


def test_vars_of_subclass_without_fields_is_read_only():
    d = MyFloat(unique_name("VarsEmpty"), bits=8, supertype=DType.Floating)
    v = vars(d)
    assert isinstance(v, types.MappingProxyType)
    with refused(TypeError):
        v["x"] = 1
    assert not hasattr(d, "x")


# --------------------------------------------------------------------------
# Scenario: Preserve identity through copying
# --------------------------------------------------------------------------

def test_preserve_identity_through_copying(descriptor):
    """Scenario: Preserve identity through copying.

    Shallow and deep copies return the original object.
    """
    assert copy.copy(descriptor) is descriptor
    assert copy.deepcopy(descriptor) is descriptor


def test_deepcopy_of_containers_keeps_descriptor_identity():
    d = DictFloat(unique_name("DeepCont"), extra=[1, 2])
    data = {"a": [DType.Float32, d], "b": (DType.Any, {"c": d})}
    clone = copy.deepcopy(data)
    assert clone["a"][0] is DType.Float32
    assert clone["a"][1] is d
    assert clone["b"][0] is DType.Any
    assert clone["b"][1]["c"] is d
    assert copy.copy([d])[0] is d


def test_deepcopy_with_memo_returns_identity():
    memo = {}
    assert copy.deepcopy(DType.Float32, memo) is DType.Float32
    assert copy.deepcopy(DType.Float32, memo) is DType.Float32


# --------------------------------------------------------------------------
# repr
# --------------------------------------------------------------------------

@pytest.mark.parametrize(
    "name, expected",
    [("Float32", "SimpleDType('Float32')"), ("Any", "DTypeCategory('Any')"),
     ("Floating", "DTypeCategory('Floating')"), ("E2M1", "SimpleDType('E2M1')"),
     ("Bool", "SimpleDType('Bool')")],
)
def test_repr_of_builtins(name, expected):
    assert repr(DType.from_name(name)) == expected


def test_repr_of_extensions():
    s = SimpleDType(unique_name("Rep"), bits=8, supertype=DType.Floating)
    c = DTypeCategory(unique_name("RepCat"))
    assert repr(s) == f"SimpleDType('{s.name}')"
    assert repr(c) == f"DTypeCategory('{c.name}')"


def test_repr_uses_most_derived_class_name():
    f = MyFloat(unique_name("F16"), bits=16, supertype=DType.Floating)
    c = MyCategory(unique_name("RepSubCat"))
    sl = SlottedFloat(unique_name("RepSlot"), extra=None)
    assert repr(f) == f"MyFloat('{f.name}')"
    assert repr(c) == f"MyCategory('{c.name}')"
    assert repr(sl) == f"SlottedFloat('{sl.name}')"


def test_repr_quotes_the_name_like_repr_of_str():
    name = unique_name("It's")
    d = SimpleDType(name, bits=8, supertype=DType.Floating)
    assert repr(d) == f"SimpleDType({name!r})"


# --------------------------------------------------------------------------
# Scenario: Refuse an extension that shadows descriptor identity
# --------------------------------------------------------------------------

@pytest.mark.parametrize("member", OWNED)
@pytest.mark.parametrize("base", [SimpleDType, DTypeCategory, CompoundDType],
                         ids=lambda c: c.__name__)
def test_refuse_an_extension_that_shadows_descriptor_identity(base, member):
    """Scenario: Refuse an extension that shadows descriptor identity.

    A subclass body defining a model-owned member is a TypeError at class
    creation.
    """
    with registry_unchanged():
        with refused(TypeError):
            new_class("Shadow", (base,), {"abstract": False}, {member: _method})


@pytest.mark.parametrize("member", OWNED)
@pytest.mark.parametrize(
    "value",
    [None, 0, property(_method), staticmethod(_method), classmethod(_method)],
    ids=["None", "int", "property", "staticmethod", "classmethod"],
)
def test_shadowing_with_any_kind_of_value_is_type_error(member, value):
    with refused(TypeError):
        new_class("Shadow", (SimpleDType,), {}, {member: value})


@pytest.mark.parametrize("member", OWNED)
@pytest.mark.parametrize("order", ["mixin-first", "mixin-last"])
def test_shadowing_through_a_mixin_base_is_type_error(member, order):
    """A non-model base in the MRO that defines a model-owned member is a
    TypeError at class creation, whatever its position."""
    Mixin = type("Mixin", (), {member: _method})
    bases = (Mixin, SimpleDType) if order == "mixin-first" else (SimpleDType, Mixin)
    with refused(TypeError):
        new_class("ShadowMixin", bases, {"abstract": False})


@pytest.mark.parametrize("member", ["name", "bits", "__eq__", "__setattr__",
                                    "structure"])
def test_shadowing_through_an_indirect_mixin_is_type_error(member):
    Inner = type("Inner", (), {member: _method})
    Outer = type("Outer", (Inner,), {})
    with refused(TypeError):
        new_class("ShadowIndirect", (Outer, SimpleDType), {"abstract": False})


@pytest.mark.parametrize("member", ["name", "bits", "supertype", "value",
                                    "simple_types"])
def test_shadowing_through_slots_is_type_error(member):
    """A __slots__ entry creates a class member of that name: shadowing."""
    with refused(TypeError):
        new_class("ShadowSlots", (SimpleDType,), {"abstract": False},
                   {"__slots__": ("ok", member)})


@pytest.mark.parametrize("member", ["name", "bits", "__hash__"])
def test_shadowing_in_a_subclass_of_a_user_subclass_is_type_error(member):
    with refused(TypeError):
        new_class("ShadowDeep", (MyFloat,), {"abstract": False}, {member: _method})


def test_shadowing_with_a_class_statement():
    with refused(TypeError):
        class Shadow(SimpleDType, abstract=False):  # noqa: F841
            @property
            def name(self):
                return "spoof"

    with refused(TypeError):
        class Unhashable(SimpleDType, abstract=False):  # noqa: F841
            __hash__ = None

    with refused(TypeError):
        class Equal(DTypeCategory, abstract=False):  # noqa: F841
            def __eq__(self, other):
                return True


@pytest.mark.parametrize(
    "member, value",
    [("__init__", lambda self, *a, **k: None),
     ("structure_extension", lambda self: ()),
     ("__init_subclass__", classmethod(lambda cls, **k: None)),
     ("__doc__", "doc"),
     ("helper", lambda self: 1),
     ("__bool__", lambda self: True),
     ("__slots__", ("x",))],
    ids=["__init__", "structure_extension", "__init_subclass__", "__doc__",
         "helper", "__bool__", "__slots__"],
)
def test_overridable_members_are_allowed(member, value):
    cls = new_class("Allowed", (SimpleDType,), {"abstract": False}, {member: value})
    assert isinstance(cls, type)
    assert issubclass(cls, SimpleDType)


# --------------------------------------------------------------------------
# Assigning / deleting owned class members later
# --------------------------------------------------------------------------

@pytest.mark.parametrize("member", OWNED)
def test_assigning_an_owned_member_on_a_user_class_is_attribute_error(member):
    Sub = new_class("Later", (SimpleDType,), {"abstract": False})
    before = Sub.__dict__.get(member)
    with refused(AttributeError):
        setattr(Sub, member, _method)
    assert Sub.__dict__.get(member) is before
    d = Sub(unique_name("LaterInst"), bits=8, supertype=DType.Floating)
    assert d.name.startswith("LaterInst")


@pytest.mark.parametrize("member", OWNED)
def test_deleting_an_owned_member_on_a_user_class_is_attribute_error(member):
    Sub = new_class("LaterDel", (SimpleDType,), {"abstract": False})
    with refused(AttributeError):
        delattr(Sub, member)


@pytest.mark.parametrize("member", OWNED + ["__init__", "structure_extension",
                                            "new_attribute", "__doc__"])
@pytest.mark.parametrize("cls", MODEL_CLASSES, ids=lambda c: c.__name__)
def test_model_classes_are_frozen(cls, member):
    """No attribute can be set or deleted on the model classes."""
    before = cls.__dict__.get(member)
    with refused(AttributeError):
        setattr(cls, member, _method)
    with refused(AttributeError):
        delattr(cls, member)
    assert cls.__dict__.get(member) is before


def test_type_setattr_bypass_on_model_class_is_refused():
    before = DType.__dict__["from_name"]
    with refused((AttributeError, TypeError)):
        type.__setattr__(SimpleDType, "name", _method)
    with refused((AttributeError, TypeError)):
        type.__setattr__(DType, "from_name", _method)
    with refused((AttributeError, TypeError)):
        type.__delattr__(DType, "from_name")
    assert DType.__dict__["from_name"] is before


def test_type_setattr_bypass_on_user_class_is_refused():
    Sub = new_class("Bypass", (SimpleDType,), {"abstract": False})
    with refused((AttributeError, TypeError)):
        type.__setattr__(Sub, "name", _method)
    assert "name" not in vars(Sub)


@pytest.mark.parametrize("attr", ["__bases__", "__class__"])
def test_user_class_bases_and_class_cannot_be_reassigned(attr):
    Sub = new_class("Rebase", (SimpleDType,), {"abstract": False})
    Other = new_class("Other", (DTypeCategory,), {"abstract": False})
    before = getattr(Sub, attr)
    with refused(AttributeError):
        setattr(Sub, attr, (Other,) if attr == "__bases__" else type)
    assert getattr(Sub, attr) == before
