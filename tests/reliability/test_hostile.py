"""Reliability: Python code playing the hostile user.

Whatever Python code does, the extension never crashes and a published
descriptor (or rule) reports only its recorded truth: its kind, width,
hierarchy, structure, identity and pickle.  Each scenario below either ends
in a clear exception with the registry unchanged, or leaves the descriptor
reporting what it recorded.  Scenarios where a regression could crash the
interpreter run in a child process (tests/support/child.py), so a crash fails the
test instead of killing the run.

Routes covered:
* kind-specific accessors called on every kind of receiver (the getset
  objects live on the shared C layout; a member slot is bound to its model
  class);
* class hooks (``__init_subclass__``, ``__set_name__``) that run while a
  class is being created: defining, instantiating or subclassing classes,
  setting class attributes, capturing raw ``__slots__`` members;
* ``__class__`` assignment, through ``setattr`` and ``object.__setattr__``;
* the graph's internal tables, looked for through ``gc.get_referents`` and
  ``gc.get_objects``;
* instance dictionaries: ``vars(self)``, ``self.__dict__ = {...}`` and
  ``gc.get_referents(self)`` during construction, kept and written after
  publication; a ``"__dict__"`` slot; a mixin that brings a dict;
* owned names spelled by ``str`` subclasses or non-``str`` keys;
* mixins changed after the class was created.
"""
import copy
import gc
import pickle
import sys

import pytest

from support import refused, registry_unchanged, unique_name
from support.child import assert_clean_exit, child_report, run_child
from stride_weave import _dtypes
from stride_weave.dtypes import (
    BlockScaledDType,
    CompoundDType,
    DType,
    DTypeCategory,
    Level,
    RepresentationRule,
    SimpleDType,
)

#: Accessors that read one kind's fields: (owner class name, attribute, kind).
KIND_ACCESSORS = [
    ("SimpleDType", "bits", "simple"),
    ("CompoundDType", "simple_types", "compound"),
    ("CompoundDType", "num_carriers", "compound"),
    ("CompoundDType", "representation_rules", "compound"),
    ("BlockScaledDType", "element", "block_scaled"),
    ("BlockScaledDType", "levels", "block_scaled"),
    ("BlockScaledDType", "num_axes", "block_scaled"),
    ("BlockScaledDType", "bits_per_element", "block_scaled"),
]

#: One receiver per kind (the compound one is registered by the child).
RECEIVERS = ["category", "simple", "compound", "block_scaled"]

_GETTER_MATRIX = """
import json
from stride_weave.dtypes import *
from support.defs import PlanePair

compound = PlanePair("HostileCompound", planes=(DType.Float32, DType.Int8))
receivers = {"category": DType.Floating, "simple": DType.Float32,
             "compound": compound, "block_scaled": DType.MXFP4}
owners = {"SimpleDType": SimpleDType, "CompoundDType": CompoundDType,
          "BlockScaledDType": BlockScaledDType}
report = {}
for owner, attr, kind in %r:
    getset = owners[owner].__dict__[attr]
    for rname, receiver in receivers.items():
        try:
            value = getset.__get__(receiver, type(receiver))
        except Exception as e:
            outcome = [type(e).__name__, str(e)]
        else:
            outcome = ["ok", repr(value), repr(getattr(receiver, attr))]
        outcome += [type(getset).__name__, type(receiver).__name__]
        report["%%s.%%s|%%s" %% (owner, attr, rname)] = outcome
    # not a descriptor at all: CPython's own check
    try:
        getset.__get__(42, int)
    except TypeError as e:
        report["%%s.%%s|int" %% (owner, attr)] = ["TypeError", str(e)]
print(json.dumps(report))
""" % (KIND_ACCESSORS,)


@pytest.fixture(scope="module")
def getter_matrix():
    return child_report(_GETTER_MATRIX)


def _fits(kind, receiver):
    if kind == "compound":
        return receiver in ("compound", "block_scaled")
    return kind == receiver


@pytest.mark.parametrize("receiver", RECEIVERS + ["int"])
@pytest.mark.parametrize("owner,attr,kind", KIND_ACCESSORS)
def test_kind_accessor_checks_its_receiver(getter_matrix, owner, attr, kind, receiver):
    outcome = getter_matrix[f"{owner}.{attr}|{receiver}"]
    if receiver != "int" and _fits(kind, receiver):
        # the unbound getset reads exactly what the attribute reports
        assert outcome[0] == "ok", outcome
        assert outcome[1] == outcome[2]
    else:
        assert outcome[0] == "TypeError", outcome
        if receiver == "int":
            pass
        elif outcome[2] == "member_descriptor":
            # a fixed attribute stored as a member slot (CPython 3.12+) is
            # bound to its model class: CPython refuses the receiver, naming
            # the attribute, the class and the receiver's class
            assert outcome[1] == (f"descriptor '{attr}' for '{owner}' objects "
                                  f"doesn't apply to a '{outcome[3]}' object")
        else:
            assert f"{owner}.{attr}" in outcome[1]
            assert "expected a" in outcome[1] and "got" in outcome[1]


# --------------------------------------------------------------------------
# class hooks run before the class is finished
# --------------------------------------------------------------------------

def test_class_made_inside_init_subclass_cannot_mix_kinds_in_a_child():
    # The published reproduction: a class defined by __init_subclass__ mixed
    # the kinds of two bases, and using it as a block-scaled element crashed.
    report = child_report("""
        import json
        from stride_weave.dtypes import (DType, SimpleDType, DTypeCategory,
                                         BlockScaledDType, Level)
        made, errors = [], []
        class Base(SimpleDType):
            def __init_subclass__(cls, **kw):
                super().__init_subclass__(**kw)
                if cls.__name__ == "Window":
                    try:
                        class Confused(cls, DTypeCategory, abstract=False):
                            def __init__(self, name):
                                DTypeCategory.__init__(self, name,
                                                       supertype=DType.Floating)
                        made.append(Confused)
                    except TypeError as e:
                        errors.append(str(e))
        class Window(Base): pass
        before = DType.registered()
        try:
            BlockScaledDType("F2_BS", element=DType.Floating,
                             levels=[Level(DType.E8M0, 32)])
        except TypeError as e:
            errors.append(str(e))
        print(json.dumps({"made": len(made), "errors": errors,
                          "unchanged": DType.registered() == before}))
    """)
    assert report["made"] == 0
    assert "still being created" in report["errors"][0]
    assert "element must be a SimpleDType" in report["errors"][1]
    assert report["unchanged"]


@pytest.mark.parametrize("hook", ["__init_subclass__", "__set_name__"])
@pytest.mark.parametrize("action", ["instantiate", "subclass", "subclass-other-kind"])
def test_hook_cannot_use_the_class_it_runs_for(hook, action):
    report = child_report("""
        import json, sys
        from stride_weave.dtypes import DType, DTypeCategory, SimpleDType
        hook, action = sys.argv[1], sys.argv[2]
        seen = []
        def act(cls):
            try:
                if action == "instantiate":
                    cls("HookMade", bits=8, supertype=DType.Floating)
                elif action == "subclass":
                    class Sub(cls, abstract=False): pass
                else:
                    class Sub(cls, DTypeCategory, abstract=False): pass
            except TypeError as e:
                seen.append(["TypeError", str(e)])
            else:
                seen.append(["ok", ""])
        class Setter:
            def __set_name__(self, owner, name):
                act(owner)
        ns = {"hooked": Setter()} if hook == "__set_name__" else {}
        class Base(SimpleDType):
            def __init_subclass__(cls, **kw):
                super().__init_subclass__(**kw)
                if hook == "__init_subclass__":
                    act(cls)
        Target = type(Base)("Target", (Base,), dict(ns), abstract=False)
        d = Target("AfterHooks", bits=8, supertype=DType.Floating)
        print(json.dumps({"seen": seen, "after": [d.name, d.bits],
                          "registered": [x.name for x in DType.registered()
                                         if x.name.startswith("HookMade")]}))
    """, hook, action)
    assert len(report["seen"]) == 1
    status, message = report["seen"][0]
    assert status == "TypeError"
    assert "still being created" in message
    # the class itself is fine once created, and nothing else registered
    assert report["after"] == ["AfterHooks", 8]
    assert report["registered"] == []


def test_init_subclass_can_set_class_attributes():
    class Tagged(SimpleDType):
        def __init_subclass__(cls, **kw):
            super().__init_subclass__(**kw)
            cls.tag = cls.__name__.lower()

    class Leaf(Tagged, abstract=False):
        pass

    assert Leaf.tag == "leaf"
    d = Leaf(unique_name("Tagged"), bits=8, supertype=DType.Floating)
    assert d.tag == "leaf" and d.bits == 8


def test_owned_class_attribute_is_refused_inside_init_subclass():
    class Base(SimpleDType):
        def __init_subclass__(cls, **kw):
            super().__init_subclass__(**kw)
            cls.bits = property(lambda self: 99)

    with pytest.raises(AttributeError, match="owned by the descriptor model"):
        class Leaf(Base, abstract=False):
            pass


def test_raw_slot_member_captured_by_a_hook_refuses_writes():
    captured = {}

    class Base(SimpleDType):
        def __init_subclass__(cls, **kw):
            super().__init_subclass__(**kw)
            captured["raw"] = cls.__dict__["tag"]

    class Slotted(Base, abstract=False):
        __slots__ = ("tag",)

        def __init__(self, name):
            super().__init__(name, bits=8, supertype=DType.Floating)
            self.tag = "original"

    d = Slotted(unique_name("Slotted"))
    with pytest.raises(AttributeError):
        captured["raw"].__set__(d, "changed")
    with pytest.raises(AttributeError):
        captured["raw"].__delete__(d)
    assert d.tag == "original"


# --------------------------------------------------------------------------
# __class__ assignment
# --------------------------------------------------------------------------

_CLASS_ASSIGNMENT = """
import json
from stride_weave.dtypes import *
from support.defs import PlanePair, TagRule
compound = PlanePair("ClassSwapCompound", planes=(DType.Float32,))
rule = TagRule("swap")
targets = {
    "category": (DType.Floating, SimpleDType),
    "simple": (DType.Float32, BlockScaledDType),
    "compound": (compound, SimpleDType),
    "block_scaled": (DType.MXFP4, SimpleDType),
    "rule": (rule, type(DType.MXFP4.representation_rules[0])),
    "level": (DType.MXFP4.levels[0], SymbolicBits),
    "symbolic": (DType.NVFP4.bits_per_element, Level),
}
report = {}
for key, (obj, other) in targets.items():
    before = type(obj)
    outcome = []
    for how in ("setattr", "object.__setattr__", "object.__delattr__"):
        try:
            if how == "setattr":
                obj.__class__ = other
            elif how == "object.__setattr__":
                object.__setattr__(obj, "__class__", other)
            else:
                object.__delattr__(obj, "__class__")
        except (AttributeError, TypeError) as e:
            outcome.append(type(e).__name__)
        else:
            outcome.append("assigned")
    report[key] = {"outcome": outcome, "same": type(obj) is before,
                   "class": obj.__class__ is before}
# the accessors still read what the kind recorded
report["bits"] = DType.MXFP4.bits_per_element, DType.Float32.bits
print(json.dumps(report))
"""


def test_class_assignment_is_refused_for_every_model_object():
    report = child_report(_CLASS_ASSIGNMENT)
    bits = report.pop("bits")
    assert bits == [4.25, 32]
    for key, entry in report.items():
        assert "assigned" not in entry["outcome"], (key, entry)
        assert entry["same"] and entry["class"], (key, entry)


# --------------------------------------------------------------------------
# the graph's internal tables are out of reach
# --------------------------------------------------------------------------

_MUTABLE_CONTAINERS = (dict, list, set, bytearray)


def test_module_referents_hold_no_internal_container():
    module_dict = vars(_dtypes)
    for obj in gc.get_referents(_dtypes):
        if isinstance(obj, _MUTABLE_CONTAINERS):
            assert obj is module_dict, (
                f"gc.get_referents(stride_weave._dtypes) hands out a "
                f"{type(obj).__name__} of {len(obj)} entries")


def test_no_tracked_dict_maps_registered_names_or_structures():
    name = unique_name("Hidden")
    d = SimpleDType(name, bits=8, supertype=DType.Floating)
    fmt = BlockScaledDType(unique_name("HiddenBS"), element=d,
                           levels=[Level(DType.E8M0, 64)])
    structure = fmt.structure()
    for obj in gc.get_objects():
        if isinstance(obj, dict):
            assert name not in obj, "a dict keyed by registered names is reachable"
            assert structure not in obj, "a dict keyed by structures is reachable"
            assert (0, 64) not in obj, "the rule cache is reachable"
    # the known attack: nothing to delete, so the registry still answers
    assert DType.from_name(name) is d
    assert d in DType.registered()


# A breadth-first walk from the module, stopping at classes (whose own
# namespaces CPython exposes for every type) and at the module dict. It runs
# in a fresh interpreter that registers one extension of every kind first:
# the registry it walks holds exactly those and the built-ins, never a
# user's own list that another test stored in a descriptor's field.
_REFERENTS_WALK = """
import gc, itertools, json
from stride_weave import _dtypes
from support.defs import register_every_kind
counter = itertools.count()
register_every_kind(lambda prefix: f"{prefix}_{next(counter)}")
MUTABLE = (dict, list, set, bytearray)
seen, todo, reached = set(), [_dtypes], None
while todo:
    obj = todo.pop()
    if id(obj) in seen:
        continue
    seen.add(id(obj))
    if isinstance(obj, type) or obj is vars(_dtypes):
        continue
    if isinstance(obj, MUTABLE):
        reached = type(obj).__name__
        break
    todo.extend(gc.get_referents(obj))
print(json.dumps({"reached": reached, "seen": len(seen)}))
"""


def test_referents_of_referents_reach_no_mutable_container():
    report = child_report(_REFERENTS_WALK)
    if report["reached"] is not None:
        pytest.fail(f"reached a {report['reached']} through gc.get_referents")
    assert report["seen"] > 100


# --------------------------------------------------------------------------
# instance dictionaries
# --------------------------------------------------------------------------

def _owned_descriptor_names():
    # The model's own list, read from what a class may not define.
    names = []
    for name in ["name", "value", "supertype", "supertypes", "is_subtype_of",
                 "is_category", "is_simple", "is_compound", "structure",
                 "from_name", "registered", "bits", "simple_types",
                 "num_carriers", "representation_rules", "element", "levels",
                 "num_axes", "bits_per_element", "is_opaque_storage",
                 "__eq__", "__hash__", "__reduce__", "__reduce_ex__",
                 "__copy__", "__deepcopy__", "__getattribute__", "__repr__",
                 "__class__"]:
        names.append(name)
    return names


OWNED_NAMES = _owned_descriptor_names()


def test_owned_names_list_matches_the_model():
    # every name above is refused in a class body, so it is model-owned
    for name in OWNED_NAMES:
        with pytest.raises(TypeError, match="owned by the descriptor model"):
            type(SimpleDType)("Probe", (SimpleDType,), {name: None})


def _writer_class(route, key, value):
    class Writer(SimpleDType, abstract=False):
        def __init__(self, name):
            super().__init__(name, bits=8, supertype=DType.Floating)
            if route == "vars":
                vars(self)[key] = value
            elif route == "__dict__ assignment":
                self.__dict__ = {key: value}
            elif route == "gc.get_referents":
                self.tag = 1   # the attribute dict exists
                dicts = [o for o in gc.get_referents(self) if isinstance(o, dict)]
                dicts[0][key] = value
    return Writer


ROUTES = ["vars", "__dict__ assignment", "gc.get_referents"]


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("owned", OWNED_NAMES)
def test_owned_name_written_through_the_instance_dict_is_refused(route, owned):
    Writer = _writer_class(route, owned, lambda *a: "lie")
    name = unique_name("Shadow")
    with refused(TypeError, match=rf"holds '{owned}', which is owned"):
        Writer(name)
    with pytest.raises(LookupError):
        DType.from_name(name)


class _SneakyName(str):
    def __hash__(self):
        return hash("structure")

    def __eq__(self, other):
        return True


@pytest.mark.parametrize("key", [_SneakyName("structure"), _SneakyName("zzz")],
                         ids=["equal-value", "colliding-hash"])
def test_str_subclass_key_in_the_instance_dict_is_copied_by_value(key):
    Writer = _writer_class("vars", key, "sneaky")
    name = unique_name("Sneaky")
    if str.__eq__(key, "structure"):
        with refused(TypeError, match="owned"):
            Writer(name)
    else:
        d = Writer(name)
        # stored under its exact value; lookups of other names unaffected
        assert d.zzz == "sneaky"
        assert d.structure() == DType.from_name(name).structure()
        assert d.structure()[0] == "SimpleDType"
        assert all(type(k) is str for k in vars(d))


def test_non_str_key_in_the_instance_dict_is_refused():
    Writer = _writer_class("vars", 1, "one")
    with refused(TypeError, match="attribute names must be str"):
        Writer(unique_name("IntKey"))


@pytest.mark.parametrize("route", ["vars", "__dict__", "gc.get_referents"])
def test_kept_instance_dict_is_detached_at_publication(route):
    kept = []

    class Keeper(SimpleDType, abstract=False):
        def __init__(self, name):
            super().__init__(name, bits=8, supertype=DType.Floating)
            self.tag = "original"
            if route == "vars":
                kept.append(vars(self))
            elif route == "__dict__":
                kept.append(self.__dict__)
            else:
                kept.append([o for o in gc.get_referents(self)
                             if isinstance(o, dict)][0])

    d = Keeper(unique_name("Keeper"))
    structure = d.structure()
    kept[0]["tag"] = "changed"
    kept[0]["structure"] = lambda: "lie"
    kept[0]["__reduce_ex__"] = lambda proto: (str, ("lie",))
    assert d.tag == "original"
    assert d.structure() is structure
    assert pickle.loads(pickle.dumps(d)) is d
    assert dict(vars(d)) == {"tag": "original"}


def test_sealed_attributes_are_unreachable():
    class Sealed(SimpleDType, abstract=False):
        def __init__(self, name):
            super().__init__(name, bits=8, supertype=DType.Floating)
            self.tag = ["mutable", "value"]

    d = Sealed(unique_name("Sealed"))
    assert not any(isinstance(o, dict) for o in gc.get_referents(d))
    view = vars(d)
    with pytest.raises(TypeError):
        view["tag"] = "changed"
    for inner in gc.get_referents(view):
        if isinstance(inner, dict):
            inner["tag"] = "changed"    # a copy: changes nothing
    assert d.tag == ["mutable", "value"]
    assert not any(isinstance(o, dict) and o.get("tag") is d.tag
                   for o in gc.get_objects())


def test_rule_instance_dict_routes_are_refused_or_detached():
    kept = []

    class Shadowing(RepresentationRule):
        def __init__(self):
            vars(self)["structure"] = lambda: ("lie",)

        def validate(self, context):
            return None

    with pytest.raises(TypeError, match="holds 'structure'"):
        Shadowing()

    class Keeping(RepresentationRule):
        def __init__(self):
            self.tag = "original"
            kept.append(vars(self))

        def validate(self, context):
            return None

    rule = Keeping()
    structure = rule.structure()
    kept[0]["tag"] = "changed"
    kept[0]["structure"] = lambda: ("lie",)
    assert rule.tag == "original" and rule.structure() is structure


@pytest.mark.parametrize("meta_base", [SimpleDType, RepresentationRule])
def test_dict_slot_is_refused(meta_base):
    with registry_unchanged():
        with pytest.raises(TypeError, match="__slots__ may not contain '__dict__'"):
            type(meta_base)("WithDictSlot", (meta_base,), {"__slots__": ("__dict__",)})


@pytest.mark.parametrize("meta_base", [SimpleDType, RepresentationRule])
def test_mixin_with_an_instance_dict_is_refused(meta_base):
    class DictMixin:
        pass

    with pytest.raises(TypeError, match="gives instances a __dict__"):
        type(meta_base)("DictMixed", (DictMixin, meta_base), {})


# --------------------------------------------------------------------------
# names spelled by str subclasses and other keys
# --------------------------------------------------------------------------

class _S(str):
    pass


class _Colliding(str):
    """Hashes like '__eq__' and equals everything."""

    def __hash__(self):
        return hash("__eq__")

    def __eq__(self, other):
        return True


@pytest.mark.parametrize("spelling", ["slots", "namespace"])
@pytest.mark.parametrize("owned", ["bits", "__eq__", "__hash__", "structure", "name"])
def test_owned_name_spelled_by_a_str_subclass_is_refused(spelling, owned):
    ns = ({"__slots__": (_S(owned),)} if spelling == "slots"
          else {_S(owned): lambda *a: None})
    with pytest.raises(TypeError, match="owned by the descriptor model"):
        type(SimpleDType)("Spelled", (SimpleDType,), ns)


def test_colliding_str_subclass_key_is_stored_by_value():
    # copied to its exact value, so it cannot answer for '__eq__'
    Cls = type(DTypeCategory)("Colliding", (DTypeCategory,),
                              {_Colliding("harmless"): 1}, abstract=False)
    assert all(type(k) is str for k in Cls.__dict__)
    cat = Cls(unique_name("Colliding"), supertype=DType.Any)
    assert cat != DType.Any and cat == cat
    child = SimpleDType(unique_name("UnderColliding"), bits=8, supertype=cat)
    assert child.supertype is cat and child.supertypes() == (cat, DType.Any)


def test_non_str_namespace_key_is_refused():
    with pytest.raises(TypeError, match="attribute names must be str"):
        type(SimpleDType)("IntKeyed", (SimpleDType,), {1: "one"})


def test_mixin_with_a_non_str_attribute_name_is_refused():
    class Mixin:
        __slots__ = ()

    # setattr() takes only str names; the class dict itself takes any key
    gc.get_referents(Mixin.__dict__)[0][_Colliding("sneaky")] = 1
    with pytest.raises(TypeError, match="exact str names"):
        type(SimpleDType)("FromSneakyMixin", (Mixin, SimpleDType), {})


# --------------------------------------------------------------------------
# mixins changed after the class was created
# --------------------------------------------------------------------------

LATER_MEMBERS = {
    "bits": property(lambda self: 99),
    "name": property(lambda self: "Lie"),
    "supertype": property(lambda self: None),
    "structure": lambda self: ("lie",),
    "is_simple": lambda self: False,
    "is_subtype_of": lambda self, other: True,
    "__eq__": lambda self, other: True,
    "__hash__": lambda self: 1,
    "__repr__": lambda self: "Lie()",
    "__reduce_ex__": lambda self, proto: (str, ("lie",)),
    "__copy__": lambda self: None,
    "__deepcopy__": lambda self, memo: None,
    "__getattribute__": lambda self, name: "lie",
    "is_opaque_storage": property(lambda self: True),
}


@pytest.mark.parametrize("order", ["mixin-first", "mixin-last"])
@pytest.mark.parametrize("member", sorted(LATER_MEMBERS))
def test_member_added_to_a_mixin_later_changes_nothing(order, member):
    class Mixin:
        __slots__ = ()

    bases = (Mixin, SimpleDType) if order == "mixin-first" else (SimpleDType, Mixin)
    Cls = type(SimpleDType)("Mixed", bases, {}, abstract=False)
    d = Cls(unique_name("Mixed"), bits=16, supertype=DType.Floating)
    structure = d.structure()
    setattr(Mixin, member, LATER_MEMBERS[member])
    assert d.bits == 16 and d.name.startswith("Mixed")
    assert d.supertype is DType.Floating
    assert d.structure() is structure and d.is_simple()
    assert not d.is_subtype_of(DType.Integer)
    assert d != DType.Float32 and hash(d) != 1 and hash(d) == hash(d)
    assert repr(d) == f"Mixed({d.name!r})"
    assert copy.copy(d) is d and copy.deepcopy(d) is d
    assert pickle.loads(pickle.dumps(d)) is d
    with pytest.raises(AttributeError):
        d.is_opaque_storage  # noqa: B018


def test_category_mixin_changed_later_does_not_corrupt_the_hierarchy():
    class Mixin:
        __slots__ = ()

    Cat = type(DTypeCategory)("MixedCategory", (Mixin, DTypeCategory), {},
                              abstract=False)
    first = Cat(unique_name("CatA"), supertype=DType.Any)
    second = Cat(unique_name("CatB"), supertype=DType.Any)
    Mixin.__eq__ = lambda self, other: True
    Mixin.__hash__ = lambda self: 7
    under_second = SimpleDType(unique_name("UnderB"), bits=8, supertype=second)
    under_first = SimpleDType(unique_name("UnderA"), bits=8, supertype=first)
    assert under_second.supertype is second
    assert under_first.supertype is first
    assert under_first.supertypes() == (first, DType.Any)


# --------------------------------------------------------------------------
# finalizers and weakref callbacks around failed constructions
# --------------------------------------------------------------------------

def test_finalizers_of_rejected_descriptors_see_a_clear_error_in_a_child():
    report = child_report("""
        import gc, json, weakref
        from stride_weave.dtypes import DType, SimpleDType
        seen = []
        class Doomed(SimpleDType, abstract=False):
            def __init__(self, name):
                super().__init__(name, bits=8, supertype=DType.Floating)
                self.me = self
                weakref.finalize(self, seen.append, "finalized")
                raise RuntimeError("refuse")
            def __del__(self):
                for attr in ("bits", "name", "structure"):
                    try:
                        getattr(self, attr)
                        seen.append(attr + ": ok")
                    except Exception as e:
                        seen.append(attr + ": " + type(e).__name__)
        for i in range(3):
            try:
                Doomed("Doomed%d" % i)
            except RuntimeError:
                pass
        gc.collect()
        names = [d.name for d in DType.registered() if d.name.startswith("Doomed")]
        print(json.dumps({"seen": seen, "names": names}))
    """)
    assert report["names"] == []
    assert report["seen"].count("finalized") == 3
    assert report["seen"].count("bits: ValueError") == 3


def test_hook_that_gives_a_mixin_an_owned_member_does_not_reach_the_class():
    class Mixin:
        __slots__ = ()

    class Base(SimpleDType):
        def __init_subclass__(cls, **kw):
            super().__init_subclass__(**kw)
            # after the owned-member check, before the class is finished
            Mixin.bits = property(lambda self: 99)

    Cls = type(Base)("HookMixed", (Mixin, Base), {}, abstract=False)
    d = Cls(unique_name("HookMixed"), bits=16, supertype=DType.Floating)
    assert d.bits == 16 and Cls.__dict__["bits"] is SimpleDType.__dict__["bits"]


def test_finalizer_replacing_the_dict_while_it_is_frozen_in_a_child():
    # Collections forced at every allocation: finalizers of cyclic garbage
    # replace the __dict__ of the descriptor being sealed, while the seal
    # copies it.  The copy works on its own reference.
    report = child_report("""
        import gc, json
        from stride_weave.dtypes import DType, SimpleDType
        victims = []
        class Garbage:
            def __init__(self):
                self.me = self
            def __del__(self):
                for v in victims:
                    try:
                        v.__dict__ = {"replaced": 1}
                    except Exception:
                        pass
        class Victim(SimpleDType, abstract=False):
            def __init__(self, name):
                super().__init__(name, bits=8, supertype=DType.Floating)
                victims.append(self)
                for i in range(64):
                    setattr(self, "a%d" % i, [i])
                for i in range(50):
                    Garbage()
        gc.set_threshold(1, 1, 1)
        names = []
        for i in range(40):
            d = Victim("Victim%d" % i)
            victims.clear()
            names.append(sorted(vars(d))[:2])
        gc.set_threshold(700, 10, 10)
        print(json.dumps({"n": len(names), "first": names[0]}))
    """)
    assert report["n"] == 40
    # either the original attributes or the replacement, never a mix
    assert report["first"] in (["a0", "a1"], ["replaced"])
