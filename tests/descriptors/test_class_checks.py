"""isinstance(), issubclass() and the class calls Cls.from_name(...) /
Cls.registered() on the model's classes answer exactly what `type` would.

The metaclasses hold their own __instancecheck__ and __subclasscheck__ (one
check per class, made when the class is created), and DTypeMeta returns a
class's bound from_name/registered without type's generic lookup; these
tests pin that every answer, error and attribute is the one `type` gives.
"""
import inspect
import pickle
import unittest.mock

import pytest

from stride_weave import _dtypes
from stride_weave.dtypes import (
    CompoundDType,
    DType,
    DTypeCategory,
    RepresentationRule,
    SimpleDType,
)
from support import new_class, unique_name

TYPE_INSTANCECHECK = type.__dict__["__instancecheck__"]
TYPE_SUBCLASSCHECK = type.__dict__["__subclasscheck__"]


class UserSimple(SimpleDType, abstract=False):
    pass


class UserAbstract(DType):
    pass


class UserRule(RepresentationRule):
    def validate(self, context):
        return None


class Mixin:
    __slots__ = ()


class MixedSimple(Mixin, SimpleDType, abstract=False):
    pass


USER = UserSimple(unique_name("CheckUser"), bits=8, supertype=DType.Floating)
MIXED = MixedSimple(unique_name("CheckMixed"), bits=8, supertype=DType.Floating)

CLASSES = [DType, CompoundDType, DTypeCategory, SimpleDType, UserSimple,
           UserAbstract, MixedSimple, RepresentationRule, UserRule,
           _dtypes.BlockScaledDType, _dtypes.LevelExtent]


class FakeClass:
    """An object whose __class__ claims to be a SimpleDType: type's
    isinstance consults it when the real type does not match."""

    @property
    def __class__(self):
        return SimpleDType


class ClassMissing:
    """__class__ raises AttributeError: type's check answers False."""

    @property
    def __class__(self):
        raise AttributeError("no __class__ here")


class ClassRaises:
    """__class__ raises another error: type's check propagates it."""

    @property
    def __class__(self):
        raise RuntimeError("__class__ refused")


class ClassNotAType:
    """__class__ is not a class: type's check answers False."""

    @property
    def __class__(self):
        return 5


class NotAClass:
    """Has __bases__, so type's issubclass treats it as a class-like."""

    __bases__ = ()


OBJECTS = [DType.Float32, DType.Floating, DType.MXFP4, USER, MIXED, UserRule(),
           1, "Float32", None, object(), FakeClass(), SimpleDType, DType,
           unittest.mock.Mock(spec=DType.Float32)]
SUBCLASSES = [DType, SimpleDType, UserSimple, MixedSimple, UserAbstract, int,
              object, type, RepresentationRule, UserRule, bool]
NOT_CLASSES = [1, None, "DType", NotAClass(), DType.Float32]


def outcome(fn, *args):
    try:
        return ("ok", fn(*args))
    except Exception as e:  # the exact error is part of the answer
        return (type(e), str(e))


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_isinstance_answers_what_type_answers(cls):
    for obj in OBJECTS:
        assert outcome(isinstance, obj, cls) == outcome(TYPE_INSTANCECHECK, cls, obj), obj


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("hostile", [ClassMissing, ClassRaises, ClassNotAType],
                         ids=lambda c: c.__name__)
def test_isinstance_reads_class_like_type_on_a_miss(cls, hostile):
    # Made here and dropped at the end: other tests walk gc.get_objects()
    # with isinstance(), which would meet the raising __class__.
    obj = hostile()
    try:
        assert outcome(isinstance, obj, cls) == outcome(TYPE_INSTANCECHECK, cls, obj)
    finally:
        del obj


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_issubclass_answers_what_type_answers(cls):
    for sub in SUBCLASSES + NOT_CLASSES:
        assert outcome(issubclass, sub, cls) == outcome(TYPE_SUBCLASSCHECK, cls, sub), sub


def test_known_answers():
    assert isinstance(DType.Float32, DType) and isinstance(USER, SimpleDType)
    assert isinstance(MIXED, Mixin) and isinstance(MIXED, DType)
    assert not isinstance(DType.Float32, CompoundDType)
    assert isinstance(FakeClass(), DType)            # the __class__ fallback
    assert isinstance(DType.Float32, (CompoundDType, SimpleDType))
    assert isinstance(DType.Float32, CompoundDType | SimpleDType)
    assert issubclass(UserSimple, DType) and not issubclass(int, DType)
    with pytest.raises(TypeError, match="issubclass\\(\\) arg 1 must be a class"):
        issubclass(1, DType)


def test_the_metaclass_attribute_is_types_own():
    # Unbound, the metaclasses' entries are type's methods themselves.
    for meta in (_dtypes.DTypeMeta, _dtypes.RuleMeta):
        assert meta.__instancecheck__ is TYPE_INSTANCECHECK
        assert meta.__subclasscheck__ is TYPE_SUBCLASSCHECK
        entry = meta.__dict__["__instancecheck__"]
        assert entry.__get__(None, meta) is TYPE_INSTANCECHECK
        assert entry.__name__ == "__instancecheck__"


def test_the_metaclass_entry_binds_anything_else_as_type_does():
    entry = _dtypes.DTypeMeta.__dict__["__instancecheck__"]
    bound = entry.__get__(int)              # a foreign class: type's binding
    assert bound == TYPE_INSTANCECHECK.__get__(int)
    assert bound(True) is True and bound("x") is False
    for bad in (42, "x", DType.Float32):
        assert outcome(entry.__get__, bad) == outcome(TYPE_INSTANCECHECK.__get__, bad)
    with pytest.raises(TypeError):
        entry.__get__(None, None)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_a_class_check_reads_like_the_builtin_it_replaces(cls):
    for name, arg in (("__instancecheck__", "instance"),
                      ("__subclasscheck__", "subclass")):
        check = getattr(cls, name)
        plain = getattr(type, name).__get__(cls)
        assert check is getattr(cls, name)          # one per class
        assert check.__self__ is cls
        assert check.__name__ == plain.__name__ == name
        assert check.__qualname__ == plain.__qualname__
        assert check.__doc__ == plain.__doc__
        assert check.__text_signature__ == plain.__text_signature__
        assert str(inspect.signature(check)) == f"({arg}, /)"
        assert repr(check) == repr(plain)
        assert pickle.loads(pickle.dumps(check)) is check
    assert cls.__instancecheck__(DType.Float32) == isinstance(DType.Float32, cls)
    assert cls.__subclasscheck__(UserSimple) == issubclass(UserSimple, cls)


def test_a_class_check_refuses_other_calls():
    check = DType.__instancecheck__
    with pytest.raises(TypeError, match="exactly one argument \\(0 given\\)"):
        check()
    with pytest.raises(TypeError, match="exactly one argument \\(2 given\\)"):
        check(1, 2)
    with pytest.raises(TypeError, match="no keyword arguments"):
        check(instance=1)
    with pytest.raises(TypeError):
        type(check)()


def test_a_class_body_method_of_the_same_name_is_an_ordinary_attribute():
    # isinstance() looks __instancecheck__ up on the metaclass: a method in
    # a class body is only an attribute of the class (as with `type`).
    def __instancecheck__(self, instance):
        return True

    cls = new_class("OwnCheck", (SimpleDType,), body={
        "__instancecheck__": __instancecheck__})
    assert cls.__instancecheck__ is __instancecheck__
    assert not isinstance(1, cls)
    assert isinstance(DType.Float32, DType)


# ---- Cls.from_name / Cls.registered -------------------------------------------


@pytest.mark.parametrize("cls", [DType, SimpleDType, DTypeCategory, CompoundDType,
                                 UserSimple, UserAbstract, MixedSimple],
                         ids=lambda c: c.__name__)
def test_class_calls_return_what_types_lookup_returns(cls):
    for name in ("from_name", "registered"):
        generic = type.__getattribute__(cls, name)
        assert getattr(cls, name) is generic
        # an equal str that is not the interned identifier
        assert getattr(cls, "".join([name[:3], name[3:]])) is generic
        assert generic.__self__ is cls
    if isinstance(USER, cls):
        assert cls.from_name(USER.name) is USER
    else:
        with pytest.raises(LookupError):
            cls.from_name(USER.name)
    assert cls.registered() == type.__getattribute__(cls, "registered")()


def test_other_class_attributes_are_unchanged():
    assert DType.Float32 is type.__getattribute__(DType, "Float32")
    assert SimpleDType.__name__ == "SimpleDType"
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        DType.nope
    assert getattr(DType, "nope", None) is None
    assert not hasattr(SimpleDType, "nope")
    with pytest.raises(TypeError):
        getattr(DType, 1)
