"""Reliability: Python code that runs in the middle of the extension's C code.

Finalizers, gc callbacks, other threads and failing allocations all run
(or fail) at points the C code does not choose.  The rule the extension
keeps (docs/design.md, "Re-entry points"): no C code holds a borrowed
reference, a half-built object or a half-sealed state across anything that
can run Python code, and no error is swallowed.  Each scenario below is an
attack on one such point; where a regression could crash the interpreter
(a debug build aborts on a corrupted reference count) it runs in a child.

* a failed allocation anywhere in class creation or construction gives the
  truth or a MemoryError with nothing published.
"""
import json
import os
import sysconfig
import textwrap

import pytest

from support import refused, unique_name
from support.child import child_report, run_python, assert_exited
from stride_weave import _dtypes
from stride_weave.dtypes import (
    DType,
    DTypeCategory,
    RepresentationRule,
    SimpleDType,
)

try:
    import _testcapi
except ImportError:   # a build without the test modules
    _testcapi = None

FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))

needs_set_nomemory = pytest.mark.skipif(
    not hasattr(_testcapi, "set_nomemory"),
    reason="this CPython has no _testcapi.set_nomemory to make allocations fail")


# --------------------------------------------------------------------------
# failed allocations: the truth, or MemoryError with nothing published
# --------------------------------------------------------------------------

_MEMORY_SWEEP = """
import gc, json, pickle, sys, _testcapi
from stride_weave.dtypes import DType, SimpleDType, RepresentationRule
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
    elif not (what == "class with an owned slot" and isinstance(error, TypeError)
              and "owned by the descriptor model" in str(error)):
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
    report = child_report(_MEMORY_SWEEP, what, "20000", failing, timeout=600)
    assert report["lies"] == [], report
    assert report["errors"] == [], report
    # the sweep did make allocations fail, and went past the last one
    assert report["outcomes"]["MemoryError"] > 0, report
    assert report["swept"] < 19999, report
