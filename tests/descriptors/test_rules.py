"""RepresentationRule base (docs/extending.md; docs/design.md, "Structure
format" and "Pickling")."""
import copy
import enum
import pickle
import struct
import types

import pytest

from support import registry_unchanged, unique_name
from stride_weave.dtypes import (
    CompoundDType,
    DType,
    RepresentationRule,
    Whole,
)

PROTOCOLS = [0, 1, 2, 3, 4, 5]


def _float(x):
    return "float:" + struct.pack(">d", x).hex()


def _int(n):
    # design.md: decimal inside [-2**63, 2**63), hex outside.
    return "int:" + (str(n) if -2 ** 63 <= n < 2 ** 63 else hex(n))


class MinPlanes(RepresentationRule):
    """A parameterized rule, as a user would write one."""

    def __init__(self, count):
        super().__init__()
        self.count = count

    def structure_extension(self):
        return ("count", self.count)

    def validate(self, context):
        if len(context.storage_dtypes) < self.count:
            raise ValueError(f"need {self.count} planes")
        return None


class NoParams(RepresentationRule):
    def validate(self, context):
        return None


class Ext(RepresentationRule):
    """A rule whose structure_extension() returns whatever it was given."""

    def __init__(self, value):
        super().__init__()
        self.value = value

    def structure_extension(self):
        return self.value

    def validate(self, context):
        return None


class Pair(CompoundDType, abstract=False):
    def __init__(self, name, planes, rules=()):
        super().__init__(name, simple_types=planes, representation_rules=rules)


def _identity(cls):
    return "str:" + cls.__module__ + "." + cls.__qualname__


class _Context:
    logical_dtype = None
    storage_dtypes = (DType.Float32, DType.E8M0)
    placement_layouts = ()
    adjacent_layouts = ()
    level_shapes = ()


# --------------------------------------------------------------------------
# The base class
# --------------------------------------------------------------------------

def test_representation_rule_itself_is_not_instantiable():
    with pytest.raises(TypeError):
        RepresentationRule()


def test_subclass_is_a_rule_and_validate_is_called_by_user_code():
    r = MinPlanes(2)
    assert isinstance(r, RepresentationRule)
    assert r.count == 2
    assert r.validate(_Context()) is None
    with pytest.raises(ValueError):
        MinPlanes(3).validate(_Context())


def test_metaclass_is_rule_meta():
    from stride_weave import _dtypes
    assert type(RepresentationRule) is _dtypes.RuleMeta
    assert type(MinPlanes) is _dtypes.RuleMeta


# --------------------------------------------------------------------------
# structure()
# --------------------------------------------------------------------------

def test_structure_records_class_identity_and_extension():
    r = MinPlanes(3)
    assert r.structure() == ("RepresentationRule", _identity(MinPlanes),
                             ("extension", ("str:count", "int:3")))
    assert _identity(MinPlanes) == f"str:{__name__}.MinPlanes"


def test_structure_default_extension_is_empty():
    assert NoParams().structure() == ("RepresentationRule", _identity(NoParams),
                                      ("extension", ()))


def test_structure_of_nested_class_uses_qualname():
    class Local(RepresentationRule):
        def validate(self, context):
            return None

    s = Local().structure()
    assert s[1] == "str:" + __name__ + "." + Local.__qualname__
    assert "<locals>" in s[1]


def test_structure_is_an_immutable_tuple_of_exact_strings():
    s = Ext(("a", 1, 2.5, True, None, Whole, ("b", (-3,)))).structure()

    def check(node):
        if type(node) is tuple:
            for x in node:
                check(x)
        else:
            assert type(node) is str, node

    assert type(s) is tuple
    check(s)
    hash(s)


def test_structure_value_encoding():
    value = ("a", 1, -7, 10 ** 30, 1.5, -0.0, 0.0, True, False, None, Whole,
             ("nested", ("deeper", 2)), ())
    r = Ext(value)
    assert r.structure()[2] == ("extension", (
        "str:a", "int:1", "int:-7", "int:" + hex(10 ** 30),
        _float(1.5), "float:8000000000000000", "float:0000000000000000",
        "bool:True", "bool:False", "none", "whole",
        ("str:nested", ("str:deeper", "int:2")), (),
    ))


@pytest.mark.parametrize("n", [0, -1, 2 ** 63 - 1, 2 ** 63, -2 ** 63, -2 ** 63 - 1,
                               2 ** 64, -(10 ** 40), 10 ** 5000, -(7 ** 9000)],
                         ids=["0", "-1", "2**63-1", "2**63", "-2**63", "-2**63-1",
                              "2**64", "-10**40", "10**5000", "-7**9000"])
def test_structure_int_encoding_boundaries(n):
    # Huge ints must not hit the int-to-decimal digit limit.
    encoded = Ext((n,)).structure()[2][1][0]
    assert encoded == _int(n)
    assert int(encoded[len("int:"):], 0) == n


def test_structure_is_exact_about_value_types():
    structures = [Ext((v,)).structure() for v in (1, True, 1.0, "1", None)]
    assert len(set(structures)) == 5
    assert Ext((0.0,)).structure() != Ext((-0.0,)).structure()
    nan = float("nan")
    assert Ext((nan,)).structure() == Ext((nan,)).structure()


def test_structure_distinguishes_rule_classes():
    class A(RepresentationRule):
        def validate(self, context):
            return None

    class B(RepresentationRule):
        def validate(self, context):
            return None

    assert A().structure() != B().structure()
    assert A().structure() == A().structure()


def test_structure_is_recorded_once_at_construction():
    calls = []

    class Counting(RepresentationRule):
        def structure_extension(self):
            calls.append(1)
            return ("call", len(calls))

        def validate(self, context):
            return None

    r = Counting()
    assert len(calls) == 1
    first = r.structure()
    for _ in range(3):
        assert r.structure() == first
    assert first[2] == ("extension", ("str:call", "int:1"))
    assert len(calls) == 1
    Pair(unique_name("UsesCounting"), [DType.Float32], [r])
    assert len(calls) == 1


def test_structure_extension_exception_propagates_from_construction():
    class Raising(RepresentationRule):
        def structure_extension(self):
            raise KeyError("nope")

        def validate(self, context):
            return None

    with pytest.raises(KeyError):
        Raising()


@pytest.mark.parametrize("value", [[1], "abc", None, 5, {"a": 1}, {1}, b"ab",
                                   iter(()), frozenset()],
                         ids=["list", "str", "None", "int", "dict", "set", "bytes",
                              "iterator", "frozenset"])
def test_non_tuple_structure_extension_raises_type_error(value):
    with pytest.raises(TypeError):
        Ext(value)


class _StrSub(str):
    pass


class _IntSub(int):
    pass


class _FloatSub(float):
    pass


class _Color(enum.IntEnum):
    RED = 1


FORBIDDEN = {
    "bytes": b"x",
    "bytearray": bytearray(b"x"),
    "list": [1],
    "dict": {},
    "set": {1},
    "frozenset": frozenset(),
    "object": object(),
    "complex": 1j,
    "str-subclass": _StrSub("x"),
    "int-subclass": _IntSub(1),
    "float-subclass": _FloatSub(1.0),
    "int-enum": _Color.RED,
    "descriptor": DType.Float32,
    "class": int,
    "rule": None,  # filled in below: a rule instance
    "function": len,
    "ellipsis": ...,
}


@pytest.mark.parametrize("key", sorted(FORBIDDEN))
def test_forbidden_structure_extension_value_raises_type_error(key):
    bad = FORBIDDEN[key] if key != "rule" else NoParams()
    for value in ((bad,), ("ok", 1, bad), (("nested", (bad,)),)):
        with pytest.raises(TypeError):
            Ext(value)




# --------------------------------------------------------------------------
# Immutability and copying
# --------------------------------------------------------------------------

def test_setting_or_deleting_attributes_after_construction_raises():
    r = MinPlanes(4)
    with pytest.raises(AttributeError):
        r.count = 5
    with pytest.raises(AttributeError):
        r.other = 1
    with pytest.raises(AttributeError):
        del r.count
    with pytest.raises(AttributeError):
        del r.missing
    with pytest.raises(AttributeError):
        setattr(r, "structure", None)
    assert r.count == 4
    assert r.structure()[2] == ("extension", ("str:count", "int:4"))


def test_attributes_set_in_init_are_readable():
    r = MinPlanes(6)
    assert r.count == 6


def test_slots_rule_is_immutable_too():
    class Slotted(RepresentationRule):
        __slots__ = ("k",)

        def __init__(self, k):
            super().__init__()
            self.k = k

        def structure_extension(self):
            return (self.k,)

        def validate(self, context):
            return None

    r = Slotted(3)
    assert r.k == 3
    assert r.structure()[2] == ("extension", ("int:3",))
    with pytest.raises(AttributeError):
        r.k = 4
    with pytest.raises(AttributeError):
        del r.k


def test_copy_and_deepcopy_return_same_object():
    r = MinPlanes(1)
    assert copy.copy(r) is r
    assert copy.deepcopy(r) is r
    holder = [r, {"r": r}]
    cloned = copy.deepcopy(holder)
    assert cloned[0] is r and cloned[1]["r"] is r


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_rule_is_not_picklable_by_itself(protocol):
    with pytest.raises(TypeError):
        pickle.dumps(MinPlanes(1), protocol=protocol)


# --------------------------------------------------------------------------
# Framework-owned members
# --------------------------------------------------------------------------

@pytest.mark.parametrize("member", ["structure", "__setattr__", "__delattr__"])
def test_defining_framework_owned_member_raises_type_error(member):
    def body(ns):
        ns[member] = lambda self, *args: None
        ns["validate"] = lambda self, context: None

    with pytest.raises(TypeError):
        types.new_class("Bad", (RepresentationRule,), {}, body)


def test_defining_structure_in_class_statement_raises_type_error():
    with pytest.raises(TypeError):
        class Bad(RepresentationRule):
            def structure(self):
                return ()

            def validate(self, context):
                return None

    with pytest.raises(TypeError):
        class BadAttr(RepresentationRule):
            structure = ("RepresentationRule",)

            def validate(self, context):
                return None


def test_defining_owned_member_in_subclass_of_user_rule_raises_type_error():
    with pytest.raises(TypeError):
        class Sub(MinPlanes):
            def __setattr__(self, name, value):
                object.__setattr__(self, name, value)


def test_overriding_non_owned_members_is_allowed():
    class Fine(RepresentationRule):
        """docstring"""

        def __init__(self, a=1):
            super().__init__()
            self.a = a

        def structure_extension(self):
            return (self.a,)

        def validate(self, context):
            return None

        def helper(self):
            return self.a * 2

    r = Fine(5)
    assert r.helper() == 10
    assert Fine.__doc__ == "docstring"


# --------------------------------------------------------------------------
# Rules inside compound dtypes
# --------------------------------------------------------------------------

def test_rule_structure_is_part_of_compound_structure():
    r = MinPlanes(2)
    d = Pair(unique_name("RulePair"), [DType.Float32, DType.E8M0], [r])
    assert d.representation_rules == (r,)
    assert ("representation_rules", (r.structure(),)) in d.structure()


def test_rule_class_is_not_a_descriptor():
    with registry_unchanged():
        r = MinPlanes(1)
    assert not isinstance(r, DType)


def test_structure_keeps_identity_recorded_at_construction():
    class Renamable(RepresentationRule):
        def validate(self, context):
            return None

    r = Renamable()
    recorded = r.structure()
    Renamable.__qualname__ = "Renamed"
    Renamable.__module__ = "elsewhere"
    assert r.structure() == recorded
    assert Renamable().structure()[1] == "str:elsewhere.Renamed"
