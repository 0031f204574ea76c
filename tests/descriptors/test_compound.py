"""CompoundDType base (docs/design.md, docs/concepts.md).

A user subclass becomes constructible with ``abstract=False`` and initializes
its base with
``super().__init__(name, *, supertype=None, simple_types, representation_rules=())``.
"""
import copy
import pickle
import types

import pytest

from support.defs import TagRule
from support import assert_unregistered, registry_unchanged, unique_name
from stride_weave import _dtypes
from stride_weave.dtypes import (
    CompoundDType,
    DType,
    DTypeCategory,
    RepresentationRule,
    SimpleDType,
)

PROTOCOLS = [0, 1, 2, 3, 4, 5]


class Pair(CompoundDType, abstract=False):
    """Concrete compound dtype; arguments pass straight to the base."""

    def __init__(self, name, planes, rules=(), supertype=None):
        super().__init__(name, supertype=supertype, simple_types=planes,
                         representation_rules=rules)


class PlainRule(RepresentationRule):
    def validate(self, context):
        return None


def _ref(d):
    return ("ref", "str:" + d.name, d.structure())


def _assert_rejected(exc_type, build, name):
    """build() fails with exc_type, registers nothing, and leaves name free."""
    with registry_unchanged():
        with pytest.raises(exc_type):
            build()
    assert_unregistered(name)
    # The name is still usable afterwards.
    ok = Pair(name, [DType.Float32])
    assert DType.from_name(name) is ok


# --------------------------------------------------------------------------
# Abstractness
# --------------------------------------------------------------------------

def test_compound_dtype_itself_is_abstract():
    name = unique_name("AbsC")
    with registry_unchanged():
        with pytest.raises(TypeError):
            CompoundDType(name, simple_types=[DType.Float32])
        with pytest.raises(TypeError):
            CompoundDType(name, supertype=None, simple_types=[DType.Float32],
                          representation_rules=())
    assert_unregistered(name)


def test_subclass_without_abstract_false_stays_abstract():
    class Undeclared(CompoundDType):
        def __init__(self, name):
            super().__init__(name, simple_types=[DType.Float32])

    class Declared(CompoundDType, abstract=True):
        def __init__(self, name):
            super().__init__(name, simple_types=[DType.Float32])

    for cls in (Undeclared, Declared):
        name = unique_name("AbsSub")
        with registry_unchanged():
            with pytest.raises(TypeError):
                cls(name)
        assert_unregistered(name)


def test_concrete_subclass_of_abstract_subclass_is_constructible():
    class Middle(CompoundDType):
        pass

    class Leaf(Middle, abstract=False):
        def __init__(self, name):
            super().__init__(name, simple_types=[DType.Int8])

    d = Leaf(unique_name("Leaf"))
    assert d.simple_types == (DType.Int8,)
    assert isinstance(d, CompoundDType) and isinstance(d, Middle)


def test_subclass_inheriting_the_base_init_is_constructible():
    class Inherits(CompoundDType, abstract=False):
        pass

    name = unique_name("Inh")
    d = Inherits(name, simple_types=[DType.Float32, DType.Int32])
    assert d.simple_types == (DType.Float32, DType.Int32)
    assert DType.from_name(name) is d


# --------------------------------------------------------------------------
# Accessors and kind
# --------------------------------------------------------------------------

def test_concrete_subclass_registers_with_accessors():
    rule = TagRule("a")
    name = unique_name("Pair")
    d = Pair(name, [DType.Float32, DType.E8M0], [rule])
    assert d.name == name and d.value == name
    assert DType.from_name(name) is d
    assert CompoundDType.from_name(name) is d
    assert Pair.from_name(name) is d
    assert d in DType.registered()
    assert d in CompoundDType.registered()
    assert d not in SimpleDType.registered()
    assert type(d.simple_types) is tuple
    assert d.simple_types == (DType.Float32, DType.E8M0)
    assert d.simple_types[0] is DType.Float32 and d.simple_types[1] is DType.E8M0
    assert d.num_carriers == 2
    assert type(d.num_carriers) is int
    assert type(d.representation_rules) is tuple
    assert d.representation_rules == (rule,)
    assert d.representation_rules[0] is rule


def test_is_compound_and_not_other_kinds():
    d = Pair(unique_name("Kind"), [DType.Float32])
    assert d.is_compound() is True
    assert d.is_simple() is False
    assert d.is_category() is False
    for other in (DType.Float32, DType.Any, DType.Floating):
        assert other.is_compound() is False


def test_default_supertype_and_rules():
    d = Pair(unique_name("Def"), [DType.Float32])
    assert d.supertype is None
    assert tuple(d.supertypes()) == ()
    assert d.representation_rules == ()
    assert d.num_carriers == 1
    assert d.is_subtype_of(d)
    assert not d.is_subtype_of(DType.Any)


def test_category_supertype_joins_hierarchy():
    d = Pair(unique_name("Sup"), [DType.Float32], supertype=DType.Floating)
    assert d.supertype is DType.Floating
    assert tuple(d.supertypes()) == (DType.Floating, DType.Any)
    assert d.is_subtype_of(DType.Floating)
    assert d.is_subtype_of(DType.Any)
    assert not d.is_subtype_of(DType.Integer)
    with pytest.raises(TypeError):
        d.is_subtype_of("Floating")


def test_extension_category_supertype():
    cat = DTypeCategory(unique_name("CCat"), supertype=DType.Any)
    d = Pair(unique_name("InCat"), [DType.Int8], supertype=cat)
    assert d.supertype is cat
    assert tuple(d.supertypes()) == (cat, DType.Any)


def test_planes_may_repeat_and_accept_any_iterable():
    d = Pair(unique_name("Rep"), (DType.Float32, DType.Float32, DType.Int8))
    assert d.simple_types == (DType.Float32, DType.Float32, DType.Int8)
    assert d.num_carriers == 3
    g = Pair(unique_name("Gen"), (t for t in [DType.E4M3, DType.E8M0]),
             (r for r in [PlainRule()]))
    assert g.simple_types == (DType.E4M3, DType.E8M0)
    assert len(g.representation_rules) == 1


def test_extension_simple_dtype_as_plane():
    s = SimpleDType(unique_name("Plane"), bits=12, supertype=DType.Floating)
    d = Pair(unique_name("WithExt"), [s, DType.Float32])
    assert d.simple_types == (s, DType.Float32)


def test_structure_format():
    rule = TagRule("x")
    d = Pair(unique_name("Fmt"), [DType.Float32, DType.Int8], [rule],
             supertype=DType.Floating)
    assert d.structure() == (
        "CompoundDType",
        ("supertype", _ref(DType.Floating)),
        ("simple_types", (_ref(DType.Float32), _ref(DType.Int8))),
        ("representation_rules", (rule.structure(),)),
        ("extension", ()),
    )
    e = Pair(unique_name("Fmt2"), [DType.Float64])
    assert e.structure() == (
        "CompoundDType",
        ("supertype", "none"),
        ("simple_types", (_ref(DType.Float64),)),
        ("representation_rules", ()),
        ("extension", ()),
    )


def test_structure_names_contract_not_subclass_and_carries_extension():
    class Tagged(CompoundDType, abstract=False):
        def __init__(self, name):
            super().__init__(name, simple_types=[DType.Float32])

        def structure_extension(self):
            return ("v", 2)

    d = Tagged(unique_name("TagC"))
    s = d.structure()
    assert s[0] == "CompoundDType"
    assert s[-1] == ("extension", ("str:v", "int:2"))
    plain = Pair(unique_name("Plain"), [DType.Float32])
    assert plain.structure()[:-1] == s[:-1]
    assert plain.structure() != s


def test_accessors_are_read_only():
    d = Pair(unique_name("RO"), [DType.Float32], [PlainRule()])
    for attr in ("simple_types", "num_carriers", "representation_rules", "name",
                 "supertype"):
        with pytest.raises(AttributeError):
            setattr(d, attr, ())
        with pytest.raises(AttributeError):
            delattr(d, attr)
    with pytest.raises(AttributeError):
        d.new_attribute = 1
    assert copy.copy(d) is d and copy.deepcopy(d) is d


def test_repr_names_subclass_and_name():
    name = unique_name("Repr")
    d = Pair(name, [DType.Float32])
    assert repr(d) == f"Pair({name!r})"


# --------------------------------------------------------------------------
# The caller's sequences are copied
# --------------------------------------------------------------------------

def test_mutating_callers_lists_afterwards_changes_nothing():
    rule_a, rule_b = TagRule("a"), TagRule("b")
    planes = [DType.Float32, DType.Int8]
    rules = [rule_a]
    name = unique_name("Copy")
    d = Pair(name, planes, rules)
    structure = d.structure()
    reduced = d.__reduce__()
    blobs = [pickle.dumps(d, protocol=p) for p in PROTOCOLS]

    planes.append(DType.Float64)
    planes[0] = DType.Bool
    rules.append(rule_b)
    rules[0] = rule_b
    del planes[1]
    rules.clear()

    assert d.simple_types == (DType.Float32, DType.Int8)
    assert d.num_carriers == 2
    assert d.representation_rules == (rule_a,)
    assert d.structure() == structure
    assert d.__reduce__() == reduced
    for p, blob in zip(PROTOCOLS, blobs):
        assert pickle.loads(blob) is d
        assert pickle.loads(pickle.dumps(d, protocol=p)) is d
    assert _dtypes._reconstruct(name, structure) is d


def test_mutating_a_custom_iterable_source_changes_nothing():
    class Source:
        def __init__(self, items):
            self.items = items

        def __iter__(self):
            return iter(list(self.items))

    src = Source([DType.Float32])
    d = Pair(unique_name("Src"), src)
    src.items.append(DType.Int8)
    assert d.simple_types == (DType.Float32,)
    assert d.num_carriers == 1


# --------------------------------------------------------------------------
# Argument validation (all before the name is registered)
# --------------------------------------------------------------------------

@pytest.mark.parametrize("planes", [None, 5, 1.5, DType.Float32, object()],
                         ids=["None", "int", "float", "descriptor", "object"])
def test_simple_types_not_iterable_raises_type_error(planes):
    name = unique_name("NotIter")
    _assert_rejected(TypeError, lambda: Pair(name, planes), name)


@pytest.mark.parametrize("element", [
    DType.Floating, DType.Any, 32, "Float32", None, SimpleDType, b"x",
], ids=["category-Floating", "category-Any", "int", "str", "None", "class", "bytes"])
def test_simple_types_wrong_element_raises_type_error(element):
    name = unique_name("BadElem")
    _assert_rejected(TypeError, lambda: Pair(name, [DType.Float32, element]), name)
    name2 = unique_name("BadElem")
    _assert_rejected(TypeError, lambda: Pair(name2, [element]), name2)


def test_compound_element_raises_type_error():
    inner = Pair(unique_name("Inner"), [DType.Float32])
    name = unique_name("Outer")
    _assert_rejected(TypeError, lambda: Pair(name, [inner]), name)


def test_string_of_names_is_not_a_plane_sequence():
    name = unique_name("StrPlanes")
    _assert_rejected(TypeError, lambda: Pair(name, "Float32"), name)


@pytest.mark.parametrize("planes", [[], (), iter(()), set()],
                         ids=["list", "tuple", "iterator", "set"])
def test_empty_simple_types_raises_value_error(planes):
    name = unique_name("Empty")
    _assert_rejected(ValueError, lambda: Pair(name, planes), name)


def test_simple_types_iterator_raising_propagates_and_registers_nothing():
    def gen():
        yield DType.Float32
        raise RuntimeError("boom")

    name = unique_name("Boom")
    _assert_rejected(RuntimeError, lambda: Pair(name, gen()), name)


@pytest.mark.parametrize("rules", [5, None, 1.5, object()],
                         ids=["int", "None", "float", "object"])
def test_rules_not_iterable_raises_type_error(rules):
    name = unique_name("RulesNI")
    _assert_rejected(TypeError, lambda: Pair(name, [DType.Float32], rules), name)


@pytest.mark.parametrize("element", [
    1, "rule", None, TagRule, RepresentationRule, DType.Float32, object(),
], ids=["int", "str", "None", "rule-class", "base-class", "descriptor", "object"])
def test_rules_wrong_element_raises_type_error(element):
    name = unique_name("RuleElem")
    _assert_rejected(
        TypeError, lambda: Pair(name, [DType.Float32], [PlainRule(), element]), name)


@pytest.mark.parametrize("supertype", [
    DType.Float32, 1, "Floating", object(), DTypeCategory,
], ids=["simple", "int", "str", "object", "class"])
def test_non_category_supertype_raises_type_error(supertype):
    name = unique_name("BadSup")
    _assert_rejected(
        TypeError, lambda: Pair(name, [DType.Float32], supertype=supertype), name)


def test_compound_supertype_raises_type_error():
    other = Pair(unique_name("OtherC"), [DType.Float32])
    name = unique_name("SupC")
    _assert_rejected(
        TypeError, lambda: Pair(name, [DType.Float32], supertype=other), name)


def test_simple_types_is_keyword_only():
    class Positional(CompoundDType, abstract=False):
        def __init__(self, name):
            super().__init__(name, None, [DType.Float32])

    name = unique_name("Pos")
    with registry_unchanged():
        with pytest.raises(TypeError):
            Positional(name)
    assert_unregistered(name)


def test_missing_simple_types_raises_type_error():
    class Missing(CompoundDType, abstract=False):
        def __init__(self, name):
            super().__init__(name)

    name = unique_name("Miss")
    with registry_unchanged():
        with pytest.raises(TypeError):
            Missing(name)
    assert_unregistered(name)


@pytest.mark.parametrize("bad_name,exc", [("", ValueError), (5, ValueError),
                                          (None, ValueError)])
def test_invalid_name_raises_value_error(bad_name, exc):
    with registry_unchanged():
        with pytest.raises(exc):
            Pair(bad_name, [DType.Float32])


def test_duplicate_name_raises_value_error_and_keeps_original():
    name = unique_name("Dup")
    first = Pair(name, [DType.Float32])
    with registry_unchanged():
        with pytest.raises(ValueError):
            Pair(name, [DType.Float64])
        with pytest.raises(ValueError):
            SimpleDType(name, bits=8, supertype=DType.Floating)
    assert DType.from_name(name) is first
    assert first.simple_types == (DType.Float32,)


def test_duplicate_of_builtin_name_raises_value_error():
    with registry_unchanged():
        with pytest.raises(ValueError):
            Pair("Float32", [DType.Float32])
    assert DType.from_name("Float32") is DType.Float32


def test_bad_structure_extension_raises_type_error_and_registers_nothing():
    class BadExt(CompoundDType, abstract=False):
        def __init__(self, name, ext):
            self._ext = ext
            super().__init__(name, simple_types=[DType.Float32])

        def structure_extension(self):
            return self._ext

    for ext in ([1], "x", None, (b"x",), ([1],), (object(),)):
        name = unique_name("BadExtC")
        with registry_unchanged():
            with pytest.raises(TypeError):
                BadExt(name, ext)
        assert_unregistered(name)


# --------------------------------------------------------------------------
# Unfinished / rejected references (ValueError)
# --------------------------------------------------------------------------

def _rejected_simple():
    leaked = []

    class Leaky(SimpleDType, abstract=False):
        def __init__(self, name, **kwargs):
            leaked.append(self)
            super().__init__(name, **kwargs)

    name = unique_name("Rejected")
    with pytest.raises(ValueError):
        Leaky(name, bits=0, supertype=DType.Floating)
    assert_unregistered(name)
    return leaked[0]


def _rejected_category():
    leaked = []

    class LeakyCat(DTypeCategory, abstract=False):
        def __init__(self, name, **kwargs):
            leaked.append(self)
            super().__init__(name, **kwargs)

    name = unique_name("RejectedCat")
    with pytest.raises(TypeError):
        LeakyCat(name, supertype=DType.Float32)
    assert_unregistered(name)
    return leaked[0]


def test_rejected_simple_dtype_as_plane_raises_value_error():
    rejected = _rejected_simple()
    name = unique_name("UsesRejected")
    _assert_rejected(ValueError, lambda: Pair(name, [DType.Float32, rejected]), name)


def test_rejected_category_as_supertype_raises_value_error():
    rejected = _rejected_category()
    name = unique_name("UsesRejCat")
    _assert_rejected(
        ValueError, lambda: Pair(name, [DType.Float32], supertype=rejected), name)


def test_unfinished_simple_dtype_as_plane_raises_value_error():
    outcome = {}
    inner_name = unique_name("UsesUnfinished")

    class SelfRef(SimpleDType, abstract=False):
        def __init__(self, name, **kwargs):
            try:
                Pair(inner_name, [self])
            except Exception as exc:  # inspected below
                outcome["exc"] = exc
            super().__init__(name, **kwargs)

    outer = SelfRef(unique_name("Outer"), bits=8, supertype=DType.Floating)
    assert isinstance(outcome.get("exc"), ValueError), outcome
    assert_unregistered(inner_name)
    assert DType.from_name(outer.name) is outer


def test_unfinished_category_as_supertype_raises_value_error():
    outcome = {}
    inner_name = unique_name("UsesUnfinishedCat")

    class SelfRefCat(DTypeCategory, abstract=False):
        def __init__(self, name, **kwargs):
            try:
                Pair(inner_name, [DType.Float32], supertype=self)
            except Exception as exc:
                outcome["exc"] = exc
            super().__init__(name, **kwargs)

    outer = SelfRefCat(unique_name("OuterCat"))
    assert isinstance(outcome.get("exc"), ValueError), outcome
    assert_unregistered(inner_name)
    assert DType.from_name(outer.name) is outer


# --------------------------------------------------------------------------
# Base initialization must happen exactly once
# --------------------------------------------------------------------------

def test_subclass_never_initializing_the_base_raises_type_error():
    class NoInit(CompoundDType, abstract=False):
        def __init__(self, name):
            self.note = name  # but never super().__init__

    name = unique_name("NoInit")
    with registry_unchanged():
        with pytest.raises(TypeError):
            NoInit(name)
    assert_unregistered(name)


def test_subclass_init_doing_nothing_raises_type_error():
    class Nothing(CompoundDType, abstract=False):
        def __init__(self, *args, **kwargs):
            pass

    with registry_unchanged():
        with pytest.raises(TypeError):
            Nothing(unique_name("Nothing"), simple_types=[DType.Float32])


def test_subclass_initializing_the_base_twice_raises_type_error():
    class Twice(CompoundDType, abstract=False):
        def __init__(self, name):
            super().__init__(name, simple_types=[DType.Float32])
            super().__init__(name, simple_types=[DType.Float32])

    name = unique_name("Twice")
    with registry_unchanged():
        with pytest.raises(TypeError):
            Twice(name)
    assert_unregistered(name)


def test_user_init_raising_after_base_init_registers_nothing():
    class Raises(CompoundDType, abstract=False):
        def __init__(self, name):
            super().__init__(name, simple_types=[DType.Float32])
            raise KeyError("user failure")

    name = unique_name("Raises")
    with registry_unchanged():
        with pytest.raises(KeyError):
            Raises(name)
    assert_unregistered(name)


def test_base_init_on_finished_descriptor_raises_attribute_error():
    d = Pair(unique_name("Fin"), [DType.Float32])
    before = d.structure()
    with registry_unchanged():
        with pytest.raises(AttributeError):
            CompoundDType.__init__(d, unique_name("Again"), simple_types=[DType.Int8])
    assert d.simple_types == (DType.Float32,)
    assert d.structure() == before


# --------------------------------------------------------------------------
# Shared rules
# --------------------------------------------------------------------------

def test_rule_shared_by_several_compounds_appears_in_each_structure():
    shared = TagRule("shared")
    own = TagRule("own")
    a = Pair(unique_name("ShA"), [DType.Float32], [shared])
    b = Pair(unique_name("ShB"), [DType.Float64, DType.Int8], [own, shared])
    c = Pair(unique_name("ShC"), [DType.E4M3], [shared, shared])
    assert a.representation_rules[0] is shared
    assert b.representation_rules[1] is shared
    assert c.representation_rules == (shared, shared)
    rs = shared.structure()
    assert a.structure()[3] == ("representation_rules", (rs,))
    assert b.structure()[3] == ("representation_rules", (own.structure(), rs))
    assert c.structure()[3] == ("representation_rules", (rs, rs))
    for d in (a, b, c):
        for p in PROTOCOLS:
            assert pickle.loads(pickle.dumps(d, protocol=p)) is d


def test_rules_with_different_extensions_give_different_structures():
    a = Pair(unique_name("RA"), [DType.Float32], [TagRule(1)])
    b = Pair(unique_name("RB"), [DType.Float32], [TagRule(2)])
    c = Pair(unique_name("RC"), [DType.Float32], [PlainRule()])
    assert len({a.structure(), b.structure(), c.structure()}) == 3


# --------------------------------------------------------------------------
# Model-owned compound accessors
# --------------------------------------------------------------------------

@pytest.mark.parametrize("member", ["simple_types", "num_carriers",
                                    "representation_rules", "structure", "name"])
def test_shadowing_compound_accessor_raises_type_error_at_class_creation(member):
    def body(value):
        return lambda ns: ns.update({member: value})

    with pytest.raises(TypeError):
        types.new_class("Shadow", (CompoundDType,), {"abstract": False},
                        body(property(lambda self: 1)))
    with pytest.raises(TypeError):
        types.new_class("ShadowAbstract", (CompoundDType,), {}, body(1))


def test_shadowing_through_a_mixin_raises_type_error():
    class Mixin:
        @property
        def simple_types(self):
            return ()

    with pytest.raises(TypeError):
        class Shadow(Mixin, CompoundDType, abstract=False):
            pass


def test_class_level_accessor_assignment_raises_attribute_error():
    with pytest.raises(AttributeError):
        Pair.simple_types = property(lambda self: ())
    with pytest.raises(AttributeError):
        del Pair.num_carriers
    with pytest.raises(AttributeError):
        CompoundDType.representation_rules = None
