"""Fixed attributes: ``name``, ``value`` and a simple dtype's ``bits``.

They are set once, by the kind's ``__init__``, and never change.  Where
CPython specializes attribute loads of member slots (3.12+; free-threaded
only from 3.14) they are READONLY member slots of the descriptor's layout,
read at the speed of a ``__slots__`` attribute, and elsewhere getsets.
Either way a descriptor that is not usable (its ``__init__`` has not called
the model's yet, the model's ``__init__`` failed, or it was rejected)
refuses them with the same ValueError as every other accessor, through
every route an attribute is read by, and nothing can write them.
"""
import dis
import operator
import sys
import sysconfig
import types

import pytest

from stride_weave.dtypes import DType, DTypeCategory, SimpleDType
from stride_weave.numerics import NumericInfo
from support import unique_name

#: Whether this interpreter gets member slots: where CPython specializes
#: their loads (the rule the C core follows).
MEMBER_SLOTS = sys.version_info >= (3, 12) and (
    not sysconfig.get_config_var("Py_GIL_DISABLED")
    or sys.version_info >= (3, 14))

NOT_INITIALIZED = "object is not initialized: its __init__ has not called the model's __init__ yet"
REJECTED = "was rejected during construction and is not usable"

#: Every route by which Python code reads an attribute.
READS = {
    "attribute": lambda obj, attr: eval(f"obj.{attr}"),
    "getattr": getattr,
    "getattr with a default": lambda obj, attr: getattr(obj, attr, "default"),
    "hasattr": hasattr,
    "attrgetter": lambda obj, attr: operator.attrgetter(attr)(obj),
}


class _Mixin:
    __slots__ = ()


def _flavours():
    """Subclasses of SimpleDType as users write them: with __slots__ = (),
    without __slots__ (the object keeps its own attributes), and with a
    mixin."""
    return {
        "slots": (SimpleDType,), "plain": (SimpleDType,),
        "mixin": (SimpleDType, _Mixin),
    }


def _make(flavour, body):
    ns = dict(body)
    if flavour == "slots":
        ns["__slots__"] = ()
    return type(SimpleDType)(f"Fixed_{flavour}", _flavours()[flavour], ns,
                             abstract=False)


@pytest.mark.parametrize("owner, attr", [(DType, "name"), (DType, "value"),
                                         (SimpleDType, "bits")])
def test_fixed_attributes_are_readonly_member_slots_where_cpython_specializes_them(owner, attr):
    descr = owner.__dict__[attr]
    if MEMBER_SLOTS:
        assert type(descr) is types.MemberDescriptorType
        assert "__getattr__" in DType.__dict__
    else:
        assert type(descr) is types.GetSetDescriptorType
        assert "__getattr__" not in DType.__dict__
    assert descr.__doc__
    with pytest.raises(AttributeError):
        descr.__set__(DType.Float32, "Lie")
    with pytest.raises(AttributeError):
        descr.__delete__(DType.Float32)
    assert getattr(DType.Float32, attr) == {"name": "Float32", "value": "Float32",
                                            "bits": 32}[attr]


@pytest.mark.skipif(not MEMBER_SLOTS,
                    reason="CPython specializes member slot loads from 3.12")
def test_loads_of_fixed_attributes_and_methods_are_specialized():
    """CPython turns the loads into slot reads (LOAD_ATTR_SLOT), and a
    class with the model's __getattr__ still gets its method loads
    specialized (its __getattribute__ is object's)."""
    class UserSlots(SimpleDType, abstract=False):
        __slots__ = ()

    mine = UserSlots(unique_name("Spec"), bits=16, supertype=DType.Floating)
    source = "def read(d):\n    return d.name, d.value, d.bits, d.is_subtype_of(any_)\n"
    for d in (DType.Float32, mine):
        ns = {"any_": DType.Any}
        exec(compile(source, "<specialized>", "exec"), ns)
        read = ns["read"]
        for _ in range(200):
            assert read(d) == (d.name, d.name, d.bits, True)
        ops = [i.opname for i in dis.get_instructions(read, adaptive=True)
               if i.opname.startswith("LOAD_ATTR")]
        assert ops[:3] == ["LOAD_ATTR_SLOT"] * 3, ops
        assert ops[3].startswith("LOAD_ATTR_METHOD"), ops


@pytest.mark.parametrize("flavour", sorted(_flavours()))
@pytest.mark.parametrize("attr", ["name", "value", "bits"])
@pytest.mark.parametrize("route", sorted(READS))
def test_an_uninitialized_descriptor_refuses_its_fixed_attributes(flavour, attr, route):
    seen = []

    def __init__(self, name):
        try:
            READS[route](self, attr)
        except ValueError as exc:
            seen.append(str(exc))
        else:
            seen.append("read")
        super(cls, self).__init__(name, bits=8, supertype=DType.Floating)
        seen.append(READS[route](self, attr))

    cls = _make(flavour, {"__init__": __init__})
    d = cls(unique_name("Uninit"))
    assert seen[0] == f"{cls.__name__} {NOT_INITIALIZED}"
    expected = {"name": d.name, "value": d.name, "bits": 8}[attr]
    assert seen[1] == (True if route == "hasattr" else expected)


@pytest.mark.parametrize("flavour", sorted(_flavours()))
def test_a_failed_model_init_stores_no_fixed_attribute(flavour):
    """The model's __init__ stores name and bits as its last step: when it
    fails (a numeric record of another width), user code that catches the
    error still finds the descriptor uninitialized."""
    seen = []

    def __init__(self, name):
        try:
            super(cls, self).__init__(name, bits=8, supertype=DType.Integer,
                                      numeric_info=NumericInfo.integer(16, signed=True))
        except ValueError as exc:
            seen.append(str(exc))
        for attr in ("name", "value", "bits"):
            with pytest.raises(ValueError, match=NOT_INITIALIZED):
                getattr(self, attr)
        seen.append(repr(self))

    cls = _make(flavour, {"__init__": __init__})
    name = unique_name("Failed")
    with pytest.raises(TypeError, match="did not initialize the descriptor"):
        cls(name)
    assert "record.bits must equal the width of" in seen[0] and name in seen[0]
    assert seen[1] == f"<uninitialized {cls.__name__}>"


@pytest.mark.parametrize("flavour", sorted(_flavours()))
@pytest.mark.parametrize("attr", ["name", "value", "bits"])
@pytest.mark.parametrize("route", sorted(READS))
@pytest.mark.parametrize("when", ["in __init__", "in structure_extension",
                                  "at registration"])
def test_a_rejected_descriptor_refuses_its_fixed_attributes(flavour, attr, route, when):
    leaked = []
    name = unique_name("Rejected")

    def __init__(self, name):
        super(cls, self).__init__(name, bits=8, supertype=DType.Floating)
        leaked.append(self)
        assert getattr(self, attr) == (8 if attr == "bits" else name)
        if when == "in __init__":
            raise RuntimeError("rejected on purpose")

    def structure_extension(self):
        if when == "in structure_extension":
            raise RuntimeError("rejected on purpose")
        if when == "at registration":
            SimpleDType(self.name, bits=16, supertype=DType.Floating)   # takes the name
        return ()

    cls = _make(flavour, {"__init__": __init__,
                          "structure_extension": structure_extension})
    with pytest.raises(RuntimeError if when != "at registration" else ValueError):
        cls(name)
    d, = leaked
    with pytest.raises(ValueError, match=f"descriptor '{name}' {REJECTED}"):
        READS[route](d, attr)
    assert repr(d) == str(d) == f"<rejected {cls.__name__}({name!r})>"
    assert d == d and hash(d) == hash(d)


@pytest.mark.parametrize("attr", ["name", "value", "bits"])
def test_nothing_writes_a_fixed_attribute(attr):
    """Not setattr, not object.__setattr__, not the member or getset itself,
    whether the descriptor is being built or finished."""
    seen = []

    class Writer(SimpleDType, abstract=False):
        __slots__ = ()

        def __init__(self, name):
            super().__init__(name, bits=8, supertype=DType.Floating)
            seen.append(_writes(self, attr))

    d = Writer(unique_name("Writer"))
    seen.append(_writes(d, attr))
    seen.append(_writes(DType.Float32, attr))
    assert all(outcome == ["refused"] * 6 for outcome in seen), seen
    assert getattr(d, attr) == (8 if attr == "bits" else d.name)
    assert getattr(DType.Float32, attr) == (32 if attr == "bits" else "Float32")


def _writes(obj, attr):
    owner = SimpleDType if attr == "bits" else DType
    descr = owner.__dict__[attr]
    outcomes = []
    # object.__setattr__ itself refuses a class with its own __setattr__
    # before CPython 3.13 (TypeError); from 3.13 the member or getset does.
    bypass = TypeError if sys.version_info < (3, 13) else AttributeError
    for write, refusal in ((lambda: setattr(obj, attr, "Lie"), AttributeError),
                           (lambda: object.__setattr__(obj, attr, "Lie"), bypass),
                           (lambda: descr.__set__(obj, "Lie"), AttributeError),
                           (lambda: delattr(obj, attr), AttributeError),
                           (lambda: object.__delattr__(obj, attr), bypass),
                           (lambda: descr.__delete__(obj), AttributeError)):
        try:
            write()
        except refusal:
            outcomes.append("refused")
        else:
            outcomes.append("written")
    return outcomes


def test_the_member_itself_refuses_an_unusable_descriptor():
    """Called directly (or through object.__getattribute__), a member slot
    does not reach the model's __getattr__: an unusable descriptor's empty
    slot is an AttributeError there, a getset's ValueError elsewhere.  It
    never reads a value."""
    leaked = []

    class Leaky(SimpleDType, abstract=False):
        def __init__(self, name):
            super().__init__(name, bits=8, supertype=DType.Floating)
            leaked.append(self)
            raise RuntimeError("rejected on purpose")

    with pytest.raises(RuntimeError):
        Leaky(unique_name("Leaky"))
    d, = leaked
    refusal = AttributeError if MEMBER_SLOTS else ValueError
    for owner, attr in ((DType, "name"), (DType, "value"), (SimpleDType, "bits")):
        with pytest.raises(refusal):
            owner.__dict__[attr].__get__(d, type(d))
        with pytest.raises(refusal):
            object.__getattribute__(d, attr)


def test_a_category_has_no_bits_and_a_miss_is_a_plain_attribute_error():
    for d in (DType.Floating, DType.Float32):
        assert not hasattr(d, "no_such_attribute")
        assert getattr(d, "no_such_attribute", 7) == 7
        with pytest.raises(AttributeError) as info:
            d.no_such_attribute  # noqa: B018
        assert str(info.value) == (f"'{type(d).__name__}' object has no "
                                   f"attribute 'no_such_attribute'")
        assert info.value.name == "no_such_attribute" and info.value.obj is d
    assert not hasattr(DType.Floating, "bits")
    with pytest.raises(AttributeError, match="'DTypeCategory' object has no attribute 'bits'"):
        DType.Floating.bits  # noqa: B018


@pytest.mark.skipif(not MEMBER_SLOTS, reason="the model defines __getattr__ here")
def test_the_model_getattr_answers_like_the_generic_lookup():
    getattr_ = DType.__dict__["__getattr__"]
    assert getattr_(DType.Float32, "name") == "Float32"
    assert getattr_(DType.Float32, "bits") == 32
    with pytest.raises(AttributeError, match="'DTypeCategory' object has no attribute 'bits'"):
        getattr_(DType.Floating, "bits")
    with pytest.raises(TypeError, match="attribute name must be string"):
        getattr_(DType.Float32, 42)

    class Named(str):
        def __eq__(self, other):
            raise AssertionError("a str subclass's __eq__ ran")
        __hash__ = str.__hash__

    assert getattr_(DType.Float32, Named("name")) == "Float32"
    with pytest.raises(TypeError):
        getattr_(42, "name")


def test_a_property_of_a_subclass_that_raises_attribute_error_is_a_miss():
    calls = []

    class WithProperty(SimpleDType, abstract=False):
        __slots__ = ()

        @property
        def extra(self):
            calls.append(1)
            raise AttributeError("extra is not there")

    d = WithProperty(unique_name("Prop"), bits=8, supertype=DType.Floating)
    assert not hasattr(d, "extra")
    with pytest.raises(AttributeError):
        d.extra  # noqa: B018
    assert len(calls) == 2   # once per read: the property never runs twice


def test_a_category_stores_its_name_once_its_init_finishes():
    seen = []

    class Cat(DTypeCategory, abstract=False):
        __slots__ = ()

        def __init__(self, name):
            with pytest.raises(ValueError, match=NOT_INITIALIZED):
                self.name  # noqa: B018
            super().__init__(name, supertype=DType.Any)
            seen.append(self.name)

    name = unique_name("Cat")
    d = Cat(name)
    assert seen == [name] and d.name == d.value == name
