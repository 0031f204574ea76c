"""Requirement: The DType class namespace contains only built-ins.

Extension registration leaves DType's attributes unchanged; extensions are
reached through registered() and from_name(); rebinding, deleting or adding
DType attributes is an AttributeError.
"""
import pytest

from support import registry_unchanged, unique_name, refused
from stride_weave.dtypes import CompoundDType, DType, DTypeCategory, SimpleDType


MODEL_CLASSES = [DType, DTypeCategory, SimpleDType, CompoundDType]
BUILTINS = ["Any", "Floating", "Integer", "Bool", "Int32", "Int8", "Float32",
            "Float64", "E8M0", "E5M2", "E4M3", "E3M2", "E2M3", "E2M1"]


def _namespaces():
    return {cls.__name__: (sorted(dir(cls)), sorted(vars(cls)),
                           dict(vars(cls)))
            for cls in MODEL_CLASSES}


def _assert_namespaces_equal(before, after):
    assert before.keys() == after.keys()
    for cls_name in before:
        dir_b, keys_b, items_b = before[cls_name]
        dir_a, keys_a, items_a = after[cls_name]
        assert dir_a == dir_b, cls_name
        assert keys_a == keys_b, cls_name
        for k in keys_b:
            assert items_a[k] is items_b[k], (cls_name, k)


# --------------------------------------------------------------------------
# Scenario: Register without extending the class namespace
# --------------------------------------------------------------------------

def test_register_without_extending_the_class_namespace():
    """Scenario: Register without extending the class namespace.

    After registering an extension named Float16, DType.from_name returns it
    and DType.Float16 remains unavailable.
    """
    before = _namespaces()
    name = unique_name("Float16")
    d = SimpleDType(name, bits=16, supertype=DType.Floating)
    assert DType.from_name(name) is d
    assert d in DType.registered()
    with refused(AttributeError):
        getattr(DType, name)
    assert not hasattr(DType, name)
    assert not hasattr(SimpleDType, name)
    assert not hasattr(DType.Float32, name)
    assert name not in dir(DType)
    assert name not in vars(DType)
    _assert_namespaces_equal(before, _namespaces())


def test_registering_every_kind_leaves_namespaces_unchanged():
    class MyCat(DTypeCategory, abstract=False):
        pass

    class MyComp(CompoundDType, abstract=False):
        pass

    before = _namespaces()
    cat = DTypeCategory(unique_name("NsCat"), supertype=DType.Any)
    sub = MyCat(unique_name("NsSubCat"), supertype=cat)
    simple = SimpleDType(unique_name("NsSimple"), bits=8, supertype=sub)
    comp = MyComp(unique_name("NsComp"), simple_types=[simple])
    _assert_namespaces_equal(before, _namespaces())
    for d in (cat, sub, simple, comp):
        assert not hasattr(DType, d.name)
        assert DType.from_name(d.name) is d


def test_extension_with_attribute_like_name_does_not_shadow():
    """A name that looks like a builtin attribute is just a registry key."""
    name = unique_name("Float32")
    d = SimpleDType(name, bits=32, supertype=DType.Floating)
    assert DType.Float32 is not d
    assert DType.Float32.name == "Float32"
    assert DType.from_name(name) is d


# --------------------------------------------------------------------------
# Built-in bindings cannot be rebound or deleted
# --------------------------------------------------------------------------

@pytest.mark.parametrize("builtin", BUILTINS)
@pytest.mark.parametrize("cls", MODEL_CLASSES, ids=lambda c: c.__name__)
def test_rebinding_a_builtin_is_attribute_error(cls, builtin):
    original = getattr(DType, builtin)
    with refused(AttributeError):
        setattr(cls, builtin, DType.Float64 if builtin != "Float64" else DType.Float32)
    assert getattr(DType, builtin) is original
    assert getattr(cls, builtin) is original
    assert DType.from_name(builtin) is original


@pytest.mark.parametrize("builtin", BUILTINS)
@pytest.mark.parametrize("cls", MODEL_CLASSES, ids=lambda c: c.__name__)
def test_deleting_a_builtin_is_attribute_error(cls, builtin):
    original = getattr(DType, builtin)
    with refused(AttributeError):
        delattr(cls, builtin)
    assert getattr(DType, builtin) is original


def test_rebinding_builtin_to_itself_is_attribute_error():
    with refused(AttributeError):
        DType.Float32 = DType.Float32
    assert DType.Float32 is DType.from_name("Float32")


def test_rebinding_builtin_through_a_user_subclass_does_not_touch_dtype():
    class Sub(SimpleDType, abstract=False):
        pass

    # Whether or not the user class accepts it, DType's binding is unchanged.
    try:
        Sub.Float32 = DType.Float64
    except AttributeError:
        pass
    assert DType.Float32 is DType.from_name("Float32")
    assert SimpleDType.Float32 is DType.Float32


def test_rebinding_builtin_with_type_setattr_is_refused():
    with refused((AttributeError, TypeError)):
        type.__setattr__(DType, "Float32", DType.Float64)
    with refused((AttributeError, TypeError)):
        type.__delattr__(DType, "Float32")
    assert DType.Float32 is DType.from_name("Float32")


def test_vars_of_dtype_is_read_only():
    ns = vars(DType)
    with refused(TypeError):
        ns["Float32"] = DType.Float64
    assert DType.Float32 is DType.from_name("Float32")


# --------------------------------------------------------------------------
# New attributes cannot be added
# --------------------------------------------------------------------------

def test_assigning_an_extension_as_a_new_dtype_attribute_is_attribute_error():
    name = unique_name("NewAttr")
    d = SimpleDType(name, bits=16, supertype=DType.Floating)
    with refused(AttributeError):
        setattr(DType, name, d)
    with refused(AttributeError):
        DType.Float16 = d
    assert not hasattr(DType, name)
    assert not hasattr(DType, "Float16") or DType.Float16 is not d


@pytest.mark.parametrize("cls", MODEL_CLASSES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("value", [1, "x", None, lambda self: None],
                         ids=["int", "str", "None", "function"])
def test_new_attribute_on_model_class_is_attribute_error(cls, value):
    before = _namespaces()
    attr = unique_name("attr")
    with refused(AttributeError):
        setattr(cls, attr, value)
    assert not hasattr(cls, attr)
    _assert_namespaces_equal(before, _namespaces())


@pytest.mark.parametrize("cls", MODEL_CLASSES, ids=lambda c: c.__name__)
def test_deleting_a_missing_attribute_is_attribute_error(cls):
    with refused(AttributeError):
        delattr(cls, unique_name("missing"))


def test_dtype_namespace_contains_every_builtin():
    names = dir(DType)
    for b in BUILTINS:
        assert b in names
        assert b in vars(DType)


def test_failed_registration_leaves_namespace_unchanged():
    before = _namespaces()
    name = unique_name("Float16")
    with registry_unchanged():
        with refused(ValueError):
            SimpleDType(name, bits=0, supertype=DType.Floating)
    _assert_namespaces_equal(before, _namespaces())
