"""Reliability: Python code that runs in the middle of the extension's C code.

Finalizers, gc callbacks, other threads and failing allocations all run
(or fail) at points the C code does not choose.  The rule the extension
keeps (docs/design.md, "Re-entry points"): no C code holds a borrowed
reference, a half-built object or a half-sealed state across anything that
can run Python code, and no error is swallowed.  Each scenario below is an
attack on one such point; where a regression could crash the interpreter
(a debug build aborts on a corrupted reference count) it runs in a child.

* sealing is one step: a finalizer that runs while a descriptor or rule is
  sealed, and another thread on a free-threaded build, find it sealed;
* the record a class takes at allocation cannot be consumed by a class
  created by a gc callback or a finalizer meanwhile, and a class a hook
  leaked before its creation failed answers or raises, never returns NULL
  without an exception;
* raw ``__slots__`` members cannot write a sealed object, and the model's
  internal C layouts cannot be mixed into a user class;
* a failed allocation anywhere in class creation or construction gives the
  truth or a MemoryError with nothing published.
"""
import json
import os
import sysconfig
import textwrap

import pytest

import _hostile_ops as hostile
from support import refused, unique_name
from support.child import child_report, run_python, assert_exited
from stride_weave import _dtypes
from stride_weave.dtypes import (
    DType,
    DTypeCategory,
    RepresentationRule,
    SimpleDType,
)

FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
#: tests/reliability/, where children import the hostile operations from
RELIABILITY = os.path.dirname(os.path.abspath(__file__))

needs_set_nomemory = pytest.mark.skipif(
    hostile.nomemory_unusable() is not None,
    reason=str(hostile.nomemory_unusable()))


# --------------------------------------------------------------------------
# sealing is one step
# --------------------------------------------------------------------------

_SEALING_FINALIZER = """
import gc, json, pickle, sys
from stride_weave.dtypes import DType, SimpleDType, RepresentationRule
from _hostile_ops import attack_attributes
kind, route, action = sys.argv[1:4]
other, outcome, holder = {}, [], []

def attack():
    if holder:
        outcome.append(attack_attributes(holder[0], action, other))

class Key(str):
    # The finalizer of an attribute name runs when the last dict holding
    # the name is released, and attacks the object it named.
    def __del__(self):
        attack()

class Dict(dict):
    # So does the finalizer of the attribute dict itself.
    def __del__(self):
        attack()

def fill(self):
    holder.append(self)
    if route == "setattr":
        setattr(self, Key("k"), 1)
    elif route == "vars":
        vars(self)[Key("k")] = 1   # the dict holds the only reference
    else:
        self.__dict__ = Dict(k=1)   # the object holds the only reference

if kind == "descriptor":
    class Target(SimpleDType, abstract=False):
        def __init__(self, name):
            super().__init__(name, bits=8, supertype=DType.Floating)
            fill(self)
    obj = Target("Sealed")
    truth = SimpleDType("Twin", bits=8, supertype=DType.Floating).structure()
else:
    class Target(RepresentationRule):
        def __init__(self):
            fill(self)
        def validate(self, context):
            return None
    obj = Target()
    truth = ("RepresentationRule", "str:__main__.Target", ("extension", ()))
holder.clear()
# What the attacker kept, written after publication.
other["structure"] = lambda *a: ("lie",)
other["__reduce_ex__"] = lambda *a: (str, ("lie",))
other["k"] = "changed"
report = {"outcome": outcome, "truthful": obj.structure() == truth,
          "attrs": sorted(vars(obj)), "k": getattr(obj, "k", None),
          "pickled": kind == "rule" or pickle.loads(pickle.dumps(obj)) is obj}
gc.collect()   # a debug build checks every reference count here
print(json.dumps(report))
"""

#: (route, action) -> (outcome, attributes) once sealed.  Through the
#: dict (or as the dict), the finalizer runs when the seal releases the
#: building dict: the attack finds the object sealed.  Through setattr,
#: the name is stored as an exact str, so the str subclass dies at once,
#: while the object is still being built: the attack is an ordinary write
#: before the seal.
_SEALING_EXPECTED = {
    ("dict subclass", "replace __dict__"): (["refused"], ["k"]),
    ("dict subclass", "set attribute"): (["refused"], ["k"]),
    ("dict subclass", "delete attribute"): (["refused"], ["k"]),
    ("vars", "replace __dict__"): (["refused"], ["k"]),
    ("vars", "set attribute"): (["refused"], ["k"]),
    ("vars", "delete attribute"): (["refused"], ["k"]),
    ("setattr", "replace __dict__"): (["done"], []),
    ("setattr", "set attribute"): (["done"], ["k", "late"]),
    ("setattr", "delete attribute"): (["done"], []),
}


@pytest.mark.parametrize("kind", ["descriptor", "rule"])
@pytest.mark.parametrize("route, action", sorted(_SEALING_EXPECTED))
def test_name_finalizer_finds_the_object_sealed_in_a_child(kind, route, action):
    report = child_report(_SEALING_FINALIZER, kind, route, action,
                          path=[RELIABILITY])
    outcome, attrs = _SEALING_EXPECTED[route, action]
    assert report["truthful"] and report["pickled"], report
    assert report["outcome"] == outcome, report
    assert report["attrs"] == attrs, report
    assert report["k"] != "changed"


def test_kept_dict_holding_a_finalizing_name_is_detached():
    # In-process form of the finalizer attack: the hostile operation
    # checks its own outcome (tests/reliability/_hostile_ops.py).
    for action in hostile.FINALIZER_ACTIONS:
        hostile.finalizer_during_sealing(action, unique_name("FinSeal"))


_SEAL_RACE = """
import json, sys, threading
from stride_weave.dtypes import DType, SimpleDType
assert not sys._is_gil_enabled(), "the GIL is on"
rounds = int(sys.argv[1])
leaked = [None]
planted = []
stop = threading.Event()

class Leaky(SimpleDType, abstract=False):
    def __init__(self, name):
        super().__init__(name, bits=8, supertype=DType.Floating)
        self.tag = "own"
        leaked[0] = self

def hijack():
    # Replace the attribute dict of whatever is being built, keeping the
    # new dict: once the object is sealed it must not be that dict.
    while not stop.is_set():
        obj = leaked[0]
        if obj is None:
            continue
        mine = {"tag": "planted"}
        try:
            obj.__dict__ = mine
        except AttributeError:
            continue
        planted.append(mine)

def look_up():
    # Contends the registry's lock, which the sealing thread waits for.
    while not stop.is_set():
        DType.from_name("Float32")
        DType.registered()

threads = [threading.Thread(target=hijack), threading.Thread(target=look_up)]
for t in threads:
    t.start()
made = []
try:
    for i in range(rounds):
        made.append(Leaky("Race%d" % i))
finally:
    stop.set()
    for t in threads:
        t.join()
for mine in planted:
    mine["structure"] = lambda *a: ("lie",)
    mine["tag"] = "after"
truth = SimpleDType("Twin", bits=8, supertype=DType.Floating).structure()
bad = [d.name for d in made
       if d.structure() != truth or d.tag not in ("own", "planted")
       or sorted(vars(d)) != ["tag"]]
print(json.dumps({"made": len(made), "planted": len(planted), "bad": bad[:5],
                  "gil": sys._is_gil_enabled()}))
"""


@pytest.mark.slow
@pytest.mark.skipif(not FREE_THREADED,
                    reason="needs a free-threaded CPython with the GIL off: "
                    "only there can another thread run while a descriptor "
                    "is sealed")
def test_dict_replaced_by_another_thread_while_sealing_is_never_kept():
    env = dict(os.environ, PYTHON_GIL="0")
    proc = run_python(["-X", "faulthandler", "-c", textwrap.dedent(_SEAL_RACE),
                       "20000"], env=env, timeout=600)
    assert_exited(proc)
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["made"] == 20000 and not report["gil"], report
    # the hijacker did get in while objects were being built ...
    assert report["planted"] > 0, report
    # ... and no sealed descriptor kept a dict it still held
    assert report["bad"] == [], report


# --------------------------------------------------------------------------
# the class record reaches allocation, and only its own class's
# --------------------------------------------------------------------------

_CLASSES_DURING_CLASS_CREATION = """
import gc, json, sys
from stride_weave.dtypes import DType, SimpleDType, RepresentationRule
trigger = sys.argv[1]
meta, rule_meta = type(SimpleDType), type(RepresentationRule)
made, seen, errors, keep = [], [], [], []
creating = [False]

def define():
    # Only while an outer class is being created, the window attacked.
    if creating[0] and len(made) < 4000:
        made.append(meta("Inner", (SimpleDType,), {"__slots__": ("x",)}))
        made.append(rule_meta("InnerRule", (RepresentationRule,), {}))

def callback(phase, info):
    # The collection that calls back also collects garbage made here, so
    # its finalizer runs at the same point the callback does.
    if phase == "start":
        if trigger == "gc callback":
            define()
        else:
            Garbage()

class Garbage:
    def __init__(self):
        self.cycle = self
    def __del__(self):
        define()

class Base(SimpleDType):
    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        seen.append(cls)

# More slots than CPython keeps free tuples for: type() allocates a new
# tuple for them before it allocates the class, and a collection (with the
# callback, or a finalizer) may run there.  Collections run at every other
# allocation: the functions made before each class shift which allocations
# those are.
slots = tuple("s%d" % i for i in range(24))
gc.callbacks.append(callback)
threshold = gc.get_threshold()
gc.set_threshold(1)
classes = []
try:
    for i in range(200):
        keep.extend(lambda: None for _ in range(i % 3))
        creating[0] = True
        try:
            classes.append(meta("Outer", (Base,), {"__slots__": slots},
                                abstract=False))
        except Exception as e:
            errors.append("%s: %s" % (type(e).__name__, e))
        finally:
            creating[0] = False
finally:
    gc.set_threshold(*threshold)
    gc.callbacks.remove(callback)
# Every class a hook saw answers from_name and registered.
for cls in seen + [c for c in made if isinstance(c, meta)]:
    try:
        cls.from_name("NoSuchName")
    except LookupError:
        pass
    except Exception as e:
        errors.append("from_name: %s: %s" % (type(e).__name__, e))
    try:
        assert type(cls.registered()) is tuple
    except Exception as e:
        errors.append("registered: %s: %s" % (type(e).__name__, e))
built = [cls("Built%d" % i, bits=8, supertype=DType.Floating).bits
         for i, cls in enumerate(classes)]
rules = [cls().structure()[0] for cls in made if isinstance(cls, rule_meta)]
gc.collect()
print(json.dumps({"errors": errors[:5], "classes": len(classes),
                  "seen": len(seen), "made": len(made),
                  "built": sorted(set(built)), "rules": sorted(set(rules))}))
"""


@pytest.mark.parametrize("trigger", ["gc callback", "finalizer"])
def test_classes_created_during_class_creation_take_their_own_record_in_a_child(trigger):
    report = child_report(_CLASSES_DURING_CLASS_CREATION, trigger)
    assert report["errors"] == [], report
    assert report["classes"] == report["seen"] == 200
    # the attack did run: classes were created inside the window
    assert report["made"] > 0
    assert report["built"] == [8] and report["rules"] == ["RepresentationRule"]


def test_classes_made_by_gc_callbacks_hostile_operation():
    for defined in hostile.CALLBACK_CLASSES:
        for cls in hostile.classes_made_by_gc_callbacks(defined):
            d = cls(unique_name("GcMade"), bits=8, supertype=DType.Floating)
            assert DType.from_name(d.name) is d


_LEAKED_UNFINISHED_CLASS = """
import json, sys
from stride_weave.dtypes import DType, SimpleDType, RepresentationRule
where = sys.argv[1]
leaked = []

class Fail(Exception):
    pass

if where == "descriptor":
    class Base(SimpleDType):
        def __init_subclass__(cls, **kw):
            super().__init_subclass__(**kw)
            leaked.append(cls)
            raise Fail
    bases = (Base,)
else:
    class Base(RepresentationRule):
        def __init_subclass__(cls, **kw):
            super().__init_subclass__(**kw)
            leaked.append(cls)
            raise Fail
    bases = (Base,)
try:
    type(Base)("Leaked", bases, {})
except Fail:
    pass
cls, = leaked
outcomes = {}
def probe(label, fn):
    try:
        value = fn()
    except SystemError as e:
        outcomes[label] = "SystemError: %s" % e
    except Exception as e:
        outcomes[label] = type(e).__name__
    else:
        outcomes[label] = "ok"
probe("instantiate", lambda: cls("LeakedMade", bits=8, supertype=DType.Floating)
      if where == "descriptor" else cls())
probe("subclass", lambda: type(cls)("Sub", (cls,), {}))
probe("isinstance", lambda: isinstance(DType.Float32, cls))
probe("issubclass", lambda: issubclass(cls, Base))
probe("setattr", lambda: setattr(cls, "tag", 1))
probe("repr", lambda: repr(cls))
if where == "descriptor":
    probe("from_name", lambda: cls.from_name("Float32"))
    probe("registered", lambda: cls.registered())
print(json.dumps(outcomes))
"""


@pytest.mark.parametrize("where", ["descriptor", "rule"])
def test_class_leaked_by_a_failing_hook_answers_or_raises_in_a_child(where):
    outcomes = child_report(_LEAKED_UNFINISHED_CLASS, where)
    assert not any(v.startswith("SystemError") for v in outcomes.values()), outcomes
    assert outcomes["instantiate"] == outcomes["subclass"] == "TypeError"
    assert outcomes["isinstance"] == outcomes["issubclass"] == "ok"
    if where == "descriptor":
        # Float32 is not an instance of the leaked class
        assert outcomes["from_name"] == "LookupError"
        assert outcomes["registered"] == "ok"


# --------------------------------------------------------------------------
# raw __slots__ members and the model's C layouts
# --------------------------------------------------------------------------

def _class_keeping_its_raw_member(kind, hook, action):
    """A concrete class with slot `tag` (a descriptor or a rule class) whose
    `hook` (the base's __init_subclass__, or __set_name__ of an object in
    the class body) keeps type()'s raw member for `tag` and then deletes
    it from the class, replaces it, or leaves it.  Returns the class and
    the kept member; the class's __init__ writes `tag` through the kept
    member when asked to (write_raw=True)."""
    kept = {}

    def keep(cls):
        kept["member"] = cls.__dict__["tag"]
        if action == "delete":
            del cls.tag
        elif action == "replace":
            cls.tag = "class value"

    class Keeper:
        def __set_name__(self, owner, name):
            keep(owner)

    model = SimpleDType if kind == "descriptor" else RepresentationRule

    class Base(model):
        def __init_subclass__(cls, **kw):
            super().__init_subclass__(**kw)
            if hook == "__init_subclass__":
                keep(cls)

    body = {"__slots__": ("tag",)}
    if hook == "__set_name__":
        body["keeper"] = Keeper()
    if kind == "descriptor":
        def __init__(self, name, write_raw=False):
            super(cls, self).__init__(name, bits=8, supertype=DType.Floating)
            if write_raw:
                kept["member"].__set__(self, "raw")
        kwds = {"abstract": False}
    else:
        def __init__(self, write_raw=False):
            if write_raw:
                kept["member"].__set__(self, "raw")
        body["validate"] = lambda self, context: None
        kwds = {}
    body["__init__"] = __init__
    cls = type(Base)("Slotted", (Base,), body, **kwds)
    return cls, kept["member"]


@pytest.mark.parametrize("kind", ["descriptor", "rule"])
@pytest.mark.parametrize("hook", ["__init_subclass__", "__set_name__"])
@pytest.mark.parametrize("action", ["delete", "replace", "keep"])
def test_raw_slot_member_kept_by_a_hook_cannot_write(kind, hook, action):
    cls, member = _class_keeping_its_raw_member(kind, hook, action)
    args = (unique_name("KeptMember"),) if kind == "descriptor" else ()
    # Read-only from before the class had any instance: not even the
    # object's own __init__ writes through it (nothing is registered).
    with refused(AttributeError, match="readonly"):
        cls(*args, write_raw=True)
    # Nor can it write a finished object.
    obj = cls(*(unique_name("KeptMember"),) if kind == "descriptor" else ())
    structure = obj.structure()
    for attempt in (lambda: member.__set__(obj, "lie"),
                    lambda: member.__delete__(obj)):
        with pytest.raises(AttributeError):
            attempt()
    with pytest.raises(AttributeError):
        member.__get__(obj, cls)   # never set
    assert obj.structure() == structure
    if kind == "descriptor":
        assert DType.from_name(obj.name) is obj


def _internal_layouts():
    """The model's C layouts a user can reach through public MROs."""
    found = {}
    for cls in (DTypeCategory, SimpleDType, _dtypes.CompoundDType,
                _dtypes.BlockScaledDType, RepresentationRule,
                _dtypes.LevelExtent):
        for k in cls.__mro__:
            if k.__name__.startswith("_"):
                found[k.__name__] = k
    return found


INTERNAL_LAYOUTS = _internal_layouts()


def test_the_internal_layouts_are_the_ones_expected():
    assert {"_DescriptorBase", "_SimpleInit", "_CategoryInit", "_RuleBase",
            "_LevelExtentImpl"} <= set(INTERNAL_LAYOUTS)


@pytest.mark.parametrize("layout", sorted(INTERNAL_LAYOUTS))
@pytest.mark.parametrize("how", ["direct", "slotted mixin", "empty mixin"])
def test_internal_layout_cannot_be_mixed_into_a_user_class(layout, how):
    base = INTERNAL_LAYOUTS[layout]
    if how == "direct":
        mixin = base
    else:
        mixin = type("Mixin", (base,),
                     {"__slots__": ("extra",) if how == "slotted mixin" else ()})
    if issubclass(base, RepresentationRule.__mro__[-2]):
        meta, model, kwds = type(RepresentationRule), RepresentationRule, {}
    else:
        meta, model, kwds = type(SimpleDType), SimpleDType, {"abstract": False}
    for bases in ((mixin, model), (model, mixin)):
        with refused(TypeError, match="internal layout"):
            meta("Mixed", bases, {}, **kwds)


def test_slotted_mixin_of_the_layout_cannot_write_a_registered_descriptor():
    # The published attack: the mixin's own raw member would have written
    # straight into the registered descriptor.
    layout = SimpleDType.__mro__[-2]

    class Mixin(layout):
        __slots__ = ("bits_shadow",)

    with refused(TypeError, match="internal layout"):
        class Mixed(Mixin, SimpleDType, abstract=False):
            pass


# --------------------------------------------------------------------------
# failed allocations: the truth, or MemoryError with nothing published
# --------------------------------------------------------------------------

_MEMORY_SWEEP = """
import gc, json, pickle, sys, _testcapi
from stride_weave.dtypes import DType, SimpleDType, RepresentationRule
import _hostile_ops as hostile
what, limit, every = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "every"
meta, rule_meta = type(SimpleDType), type(RepresentationRule)
twin = SimpleDType("Twin", bits=8, supertype=DType.Floating)
names = ["Mem%d" % i for i in range(limit)]

class Slotted(SimpleDType, abstract=False):
    __slots__ = ("tag",)
    def __init__(self, name):
        super().__init__(name, bits=8, supertype=DType.Floating)
        self.tag = "t"

class Plain(SimpleDType, abstract=False):
    def __init__(self, name):
        super().__init__(name, bits=8, supertype=DType.Floating)
        self.note = "n"

class Rule(RepresentationRule):
    def __init__(self):
        self.note = "n"
    def structure_extension(self):
        return ("r",)
    def validate(self, context):
        return None

# what -> (the operation, the check of its result: None or what is wrong)
def slots_kept(cls):
    if type(cls.__dict__.get("tag")).__name__ != "getset_descriptor":
        return "declared __slots__ lost: %r" % (cls.__dict__.get("tag"),)
    d = cls("Cls%d" % index, bits=8, supertype=DType.Floating)
    if d.bits != 8 or d.structure() != twin.structure():
        return "bits %r, structure %r" % (d.bits, d.structure())

def stays_abstract(cls):
    try:
        cls("Abs%d" % index, bits=8, supertype=DType.Floating)
    except TypeError as e:
        if "abstract" not in str(e):
            return "abstract class: %s" % e
    else:
        return "an abstract class was instantiated"

def rule_slots_kept(cls):
    if type(cls.__dict__.get("tag")).__name__ != "getset_descriptor":
        return "rule __slots__ lost"

def registered_truth(obj):
    if DType.from_name(obj.name) is not obj:
        return "not registered"
    if obj.structure() != twin.structure() or obj.bits != 8:
        return "structure %r" % (obj.structure(),)
    if pickle.loads(pickle.dumps(obj)) is not obj:
        return "pickle"
    if isinstance(obj, Slotted) and obj.tag != "t":
        return "slot %r" % (obj.tag,)
    if isinstance(obj, Plain) and dict(vars(obj)) != {"note": "n"}:
        return "attributes %r" % (dict(vars(obj)),)

def rule_truth(obj):
    if obj.structure() != ("RepresentationRule", "str:__main__.Rule",
                           ("extension", ("str:r",))):
        return "rule structure %r" % (obj.structure(),)
    if dict(vars(obj)) != {"note": "n"}:
        return "rule attributes %r" % (dict(vars(obj)),)

OPS = {
    "class with __slots__": (
        lambda: meta("C", (SimpleDType,), {"__slots__": ("tag",)}, abstract=False),
        slots_kept),
    "class with an owned slot": (   # always refused: TypeError
        lambda: meta("C", (SimpleDType,), {"__slots__": ("bits",)}, abstract=False),
        lambda cls: "a class with an owned name in __slots__ was created"),
    "abstract class": (
        lambda: meta("C", (SimpleDType,), {}, abstract=True), stays_abstract),
    "rule class with __slots__": (
        lambda: rule_meta("R", (RepresentationRule,), {"__slots__": ("tag",)}),
        rule_slots_kept),
    "slotted descriptor": (lambda: Slotted(names[index]), registered_truth),
    "descriptor with attributes": (lambda: Plain(names[index]), registered_truth),
    "rule": (Rule, rule_truth),
}
op, check = OPS[what]

def run(index):
    # Allocation number `index` from here on fails (and with `every`, all
    # those after it too); the hooks are gone before anything else here
    # allocates.  This frame gets its frame object first: popping a frame
    # an exception passes through makes its caller's, and CPython drops the
    # exception in flight when that fails.
    sys._getframe()
    _testcapi.set_nomemory(index, 0 if every else index + 1)
    try:
        return op()
    finally:
        _testcapi.remove_mem_hooks()

lies, errors, outcomes, settled = [], [], {"ok": 0, "MemoryError": 0}, 0
outcomes["unraisable MemoryError"] = hostile.count_unraisable(errors)
for index in range(limit):
    before = DType.registered()
    try:
        result, error = run(index), None
    except MemoryError:
        result, error = None, "MemoryError"
    except BaseException as e:
        result, error = None, e
    if error == "MemoryError":
        outcomes["MemoryError"] += 1
        settled = 0
        if DType.registered() != before:
            lies.append("%d: MemoryError, and the registry changed" % index)
        continue
    settled += 1
    if error is None:
        outcomes["ok"] += 1
        problem = check(result)
        if problem:
            lies.append("%d: %s" % (index, problem))
    elif not (what == "class with an owned slot" and type(error) is TypeError
              and ("owned by the descriptor model" in str(error)
                   # the refusal, whose message could not be formatted
                   or str(error) == "")):
        errors.append("%d: %s: %s" % (index, type(error).__name__, error))
    if settled >= 100:
        break   # past the operation's last allocation
gc.collect()
print(json.dumps({"lies": lies[:10], "errors": errors[:10],
                  "outcomes": outcomes, "swept": index}))
"""

MEMORY_OPERATIONS = ["class with __slots__", "class with an owned slot",
                     "abstract class", "rule class with __slots__",
                     "slotted descriptor", "descriptor with attributes", "rule"]


@needs_set_nomemory
@pytest.mark.parametrize("what", MEMORY_OPERATIONS)
@pytest.mark.parametrize("failing", ["one", "every"])
def test_failed_allocation_gives_the_truth_or_memory_error_in_a_child(what, failing):
    # Allocation number i of the operation fails (one: only that one;
    # every: that one and all after it), for every i up to its last
    # allocation.
    report = child_report(_MEMORY_SWEEP, what, "20000", failing, timeout=600,
                          path=(os.path.dirname(os.path.abspath(__file__)),))
    assert report["lies"] == [], report
    assert report["errors"] == [], report
    # the sweep did make allocations fail, and went past the last one
    assert report["outcomes"]["MemoryError"] > 0, report
    assert report["swept"] < 19999, report
