"""Leak check: public operations and failure paths, repeated.

Each test repeats one group of operations a few thousand times after a
warm-up and asserts that

* ``sys.getallocatedblocks()`` grows by less than a small bound,
* tracemalloc's traced memory grows by less than a small bound,
* ``sys.getrefcount`` of shared objects (built-in descriptors, the model
  classes, the metaclasses, ``Whole``, the reconstructor, registered
  extensions and the fixed name strings used by failing calls) is unchanged,
* on a debug interpreter (Py_DEBUG), ``sys.gettotalrefcount()`` -- the sum
  of every object's reference count -- grows by less than a small bound, so
  a reference leaked to any object (one not in the shared set, or one that
  outlives the loop anyway, such as ``None`` or an interned string) shows
  up as well,
* the registry is unchanged (no group registers anything).

A leak of one object per iteration shows up as thousands of blocks.

The groups that define classes and drop them run in a fresh child
interpreter, before any thread has started (see ``FRESH_PROCESS_GROUPS``).
"""
import copy
import gc
import itertools
import json
import os
import pickle
import sys
import sysconfig
import threading
import tracemalloc
import types

import pytest

from support import assert_exited, child_env, run_python, unique_name
from stride_weave import _dtypes
from stride_weave.dtypes import (
    BlockScaledDType,
    CompoundDType,
    DType,
    DTypeCategory,
    Level,
    LevelExtent,
    RepresentationRule,
    SimpleDType,
    Whole,
    WholeExtent,
)
from stride_weave.numerics import NumericInfo

HERE = os.path.dirname(os.path.abspath(__file__))
ITERATIONS = 2000
WARMUP = 300
TRACED_ITERATIONS = 800
MAX_BLOCK_GROWTH = ITERATIONS // 10        # 1 leaked block/iteration -> 2000
MAX_TRACED_GROWTH = 16 * 1024              # bytes; 1 leaked tuple/iteration -> >30 KiB
MAX_REFCOUNT_GROWTH = ITERATIONS // 10     # 1 leaked reference/iteration -> 2000
# Only debug builds (Py_DEBUG) keep a running total of all reference counts.
_total_refcount = getattr(sys, "gettotalrefcount", None)

# Fixed strings used by failing calls: a leaked reference to a name shows up
# in its reference count.
FREE_NAME = unique_name("LeakFree")
UNKNOWN_NAME = unique_name("LeakUnknown")


# --------------------------------------------------------------------------
# Classes and extensions used by the operations (created once)
# --------------------------------------------------------------------------

class Rule(RepresentationRule):
    def __init__(self, k=1):
        super().__init__()
        self.k = k

    def structure_extension(self):
        return ("k", self.k, Whole, 1.5)

    def validate(self, context):
        return None


class BadRule(RepresentationRule):
    def structure_extension(self):
        return ([1],)

    def validate(self, context):
        return None


class Pair(CompoundDType, abstract=False):
    def __init__(self, name, planes, rules=(), supertype=None):
        super().__init__(name, supertype=supertype, simple_types=planes,
                         representation_rules=rules)


class NoInit(CompoundDType, abstract=False):
    def __init__(self, name):
        pass


class Tagged(SimpleDType, abstract=False):
    def structure_extension(self):
        return ("tag", 1, -0.0, None, True, Whole, ("n",))


class BadExtList(SimpleDType, abstract=False):
    def structure_extension(self):
        return [1]


class BadExtLeaf(SimpleDType, abstract=False):
    def structure_extension(self):
        return ("ok", (b"bytes",))


class RaisingExt(SimpleDType, abstract=False):
    def structure_extension(self):
        raise KeyError("from structure_extension")


class RaisesAfterInit(SimpleDType, abstract=False):
    def __init__(self, name, **kwargs):
        super().__init__(name, **kwargs)
        raise RuntimeError("user failure after base init")


class SetsAttrs(SimpleDType, abstract=False):
    def __init__(self, name, **kwargs):
        self.note = [name, 1, 2]  # an attribute dict on a rejected instance
        super().__init__(name, **kwargs)


class AbstractSimple(SimpleDType):
    pass


_leaked_rejected = []


class LeakyCat(DTypeCategory, abstract=False):
    """Records the instance once, so a rejected category can be referenced."""

    def __init__(self, name, **kwargs):
        if not _leaked_rejected:
            _leaked_rejected.append(self)
        super().__init__(name, **kwargs)


try:
    LeakyCat(unique_name("Rejected"), supertype=DType.Float32)
except TypeError:
    pass
REJECTED_CAT = _leaked_rejected[0]

EXT_CAT = DTypeCategory(unique_name("LkCat"), supertype=DType.Floating)
EXT_SIMPLE = SimpleDType(unique_name("LkSimple"), bits=16, supertype=EXT_CAT)
EXT_TAGGED = Tagged(unique_name("LkTagged"), bits=8, supertype=DType.Floating)
SHARED_RULE = Rule(3)
EXT_PAIR = Pair(unique_name("LkPair"), [EXT_SIMPLE, DType.Float32], [SHARED_RULE],
                supertype=DType.Floating)

# Numeric records stated in pickles: a simple dtype with one, a block
# format of it, and a record of another meaning.
def _e4m1_record(bias):
    return NumericInfo.floating("lk_e4m1", exponent_bits=4, mantissa_bits=1, bias=bias,
                                nan_encoding="none")


EXT_RECORDED = SimpleDType(unique_name("LkRecorded"), bits=6, supertype=DType.Floating,
                           numeric_info=_e4m1_record(7))
EXT_BLOCK = BlockScaledDType(unique_name("LkBlock"), element=EXT_RECORDED,
                             levels=(Level(DType.E8M0, 32),))

# For the C API group: a width the C API cannot convert.
EXT_HUGE = SimpleDType(unique_name("LkHuge"), bits=2 ** 70, supertype=DType.Floating)

# An N-D block format (a 16x16 block under a whole-tensor scale).
EXT_ND = BlockScaledDType(unique_name("LkND"), element=EXT_SIMPLE,
                          levels=[Level(DType.E4M3, (16, 16)), Level(DType.Float32, Whole)])

BUILTINS = [getattr(DType, n) for n in (
    "Any", "Floating", "Integer", "Bool", "Int32", "Int8", "Float32", "Float64",
    "E8M0", "E5M2", "E4M3", "E3M2", "E2M3", "E2M1")]
EXTENSIONS = [EXT_CAT, EXT_SIMPLE, EXT_TAGGED, EXT_PAIR]

SHARED = {
    "DType.Float32": DType.Float32,
    "DType.Floating": DType.Floating,
    "DType.Any": DType.Any,
    "DType.Integer": DType.Integer,
    "DType.E8M0": DType.E8M0,
    "DType.E2M1": DType.E2M1,
    "DType.E4M3": DType.E4M3,
    "DType.MXFP4": DType.MXFP4,
    "DType.NVFP4": DType.NVFP4,
    "EXT_HUGE": EXT_HUGE,
    "type(DType)": type(DType),
    "type(RepresentationRule)": type(RepresentationRule),
    "DType": DType,
    "DTypeCategory": DTypeCategory,
    "SimpleDType": SimpleDType,
    "CompoundDType": CompoundDType,
    "RepresentationRule": RepresentationRule,
    "Whole": Whole,
    "WholeExtent": WholeExtent,
    "_reconstruct": _dtypes._reconstruct,
    "Pair": Pair,
    "Tagged": Tagged,
    "Rule": Rule,
    "NoInit": NoInit,
    "LeakyCat": LeakyCat,
    "SetsAttrs": SetsAttrs,
    "EXT_CAT": EXT_CAT,
    "EXT_SIMPLE": EXT_SIMPLE,
    "EXT_TAGGED": EXT_TAGGED,
    "EXT_PAIR": EXT_PAIR,
    "EXT_ND": EXT_ND,
    "Level": Level,
    "SHARED_RULE": SHARED_RULE,
    "REJECTED_CAT": REJECTED_CAT,
    "FREE_NAME": FREE_NAME,
    "UNKNOWN_NAME": UNKNOWN_NAME,
}


def _expect(exc, fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except exc as e:
        # Formatting the message runs the code that builds it (some are
        # built only when read), so it is measured too.
        str(e)
        return
    raise AssertionError(f"{fn!r} did not raise {exc.__name__}")


# --------------------------------------------------------------------------
# Operation groups (each call is one iteration)
# --------------------------------------------------------------------------

def op_construction_failures():
    F, n = DType.Floating, FREE_NAME
    # names
    _expect(ValueError, SimpleDType, "", bits=8, supertype=F)
    _expect(ValueError, SimpleDType, 12, bits=8, supertype=F)
    _expect(ValueError, SimpleDType, None, bits=8, supertype=F)
    _expect(ValueError, SimpleDType, "Float32", bits=32, supertype=F)
    _expect(ValueError, DTypeCategory, "Floating", supertype=DType.Any)
    _expect(ValueError, Pair, EXT_PAIR.name, [DType.Float32])
    # bits
    for bits in (True, 0, -1, 1.5, "8", None):
        _expect(ValueError, SimpleDType, n, bits=bits, supertype=F)
    # supertypes
    _expect(TypeError, SimpleDType, n, bits=8, supertype=DType.Float32)
    _expect(TypeError, SimpleDType, n, bits=8, supertype=None)
    _expect(TypeError, SimpleDType, n, bits=8, supertype="Floating")
    _expect(ValueError, SimpleDType, n, bits=8, supertype=REJECTED_CAT)
    _expect(TypeError, DTypeCategory, n, supertype=DType.Float32)
    _expect(ValueError, DTypeCategory, n, supertype=REJECTED_CAT)
    _expect(TypeError, DTypeCategory, n, opaque_storage=True)
    _expect(TypeError, DTypeCategory, n, supertype=F, opaque_storage=False)
    # abstract classes
    _expect(TypeError, DType, n)
    _expect(TypeError, CompoundDType, n, simple_types=[DType.Float32])
    _expect(TypeError, AbstractSimple, n, bits=8, supertype=F)
    # compound arguments
    _expect(TypeError, Pair, n, 5)
    _expect(TypeError, Pair, n, [DType.Float32, F])
    _expect(ValueError, Pair, n, [])
    _expect(TypeError, Pair, n, [DType.Float32], 5)
    _expect(TypeError, Pair, n, [DType.Float32], [SHARED_RULE, 1])
    _expect(TypeError, Pair, n, [DType.Float32], supertype=DType.Float32)
    _expect(ValueError, Pair, n, [DType.Float32], supertype=REJECTED_CAT)
    _expect(TypeError, NoInit, n)
    # structure_extension and user __init__ failures
    _expect(TypeError, BadExtList, n, bits=8, supertype=F)
    _expect(TypeError, BadExtLeaf, n, bits=8, supertype=F)
    _expect(KeyError, RaisingExt, n, bits=8, supertype=F)
    _expect(RuntimeError, RaisesAfterInit, n, bits=8, supertype=F)
    _expect(ValueError, SetsAttrs, n, bits=0, supertype=F)
    _expect(TypeError, LeakyCat, n, supertype=DType.Float32)
    # rules
    _expect(TypeError, RepresentationRule)
    _expect(TypeError, BadRule)


def op_lookups():
    _expect(LookupError, DType.from_name, UNKNOWN_NAME)
    _expect(LookupError, SimpleDType.from_name, "Floating")
    _expect(LookupError, DTypeCategory.from_name, "Float32")
    _expect(LookupError, CompoundDType.from_name, "Float32")
    _expect(LookupError, Pair.from_name, EXT_SIMPLE.name)
    _expect(TypeError, DType.from_name, 1)
    _expect(TypeError, DType.from_name, b"Float32")
    _expect(TypeError, DType.Float32.is_subtype_of, "Floating")
    _expect(AttributeError, getattr, DType.Float32, "is_opaque_storage")
    _expect(AttributeError, setattr, DType.Float32, "bits", 3)
    _expect(AttributeError, delattr, EXT_PAIR, "simple_types")
    _expect(AttributeError, setattr, DType, "Float16", EXT_SIMPLE)
    _expect(AttributeError, setattr, SHARED_RULE, "k", 2)
    assert DType.from_name("Float32") is DType.Float32
    assert SimpleDType.from_name(EXT_SIMPLE.name) is EXT_SIMPLE
    assert Pair.from_name(EXT_PAIR.name) is EXT_PAIR
    DType.registered()
    SimpleDType.registered()
    CompoundDType.registered()
    Pair.registered()
    DTypeCategory.registered()


def op_accessors():
    for d in BUILTINS + EXTENSIONS:
        d.structure()
        repr(d)
        hash(d)
        d.name
        d.value
        d.supertype
        tuple(d.supertypes())
        d.is_subtype_of(DType.Any)
        d.is_category(), d.is_simple(), d.is_compound()
        assert copy.copy(d) is d
        assert copy.deepcopy(d) is d
    EXT_PAIR.simple_types, EXT_PAIR.num_carriers, EXT_PAIR.representation_rules
    EXT_SIMPLE.bits
    SHARED_RULE.structure()
    assert copy.deepcopy(SHARED_RULE) is SHARED_RULE
    assert WholeExtent() is Whole
    assert copy.deepcopy(Whole) is Whole
    repr(Whole)


def op_pickling():
    for d in BUILTINS + EXTENSIONS:
        for protocol in (0, 2, 5):
            assert pickle.loads(pickle.dumps(d, protocol=protocol)) is d
        assert _dtypes._reconstruct(d.name, d.structure()) is d
    assert pickle.loads(pickle.dumps(Whole)) is Whole
    _expect(TypeError, pickle.dumps, SHARED_RULE)
    # the numeric records a pickle states: matched, differing, malformed
    other = ("float", "lk_e4m1", 6, True, 4, 1, 8, "none")
    for d in (EXT_RECORDED, EXT_BLOCK):
        for protocol in (0, 2, 5):
            assert pickle.loads(pickle.dumps(d, protocol=protocol)) is d
        record = d.__reduce__()[1][0]
        assert _dtypes._reconstruct(record[:-1]) is d           # states nothing
        for stated in ((other,), (None,), [None], (other[:7],), ((1,) + other[1:],)):
            _expect(ValueError, _dtypes._reconstruct, record[:-1] + (stated,))
            _expect(ValueError, _dtypes._reconstruct, d.name, d.structure(), None, stated)
    _expect(ValueError, SimpleDType.ensure, EXT_RECORDED.name, bits=6,
            supertype=DType.Floating, numeric_info=_e4m1_record(8))


_S32 = DType.Float32.structure()
_S_PAIR = EXT_PAIR.structure()
_BAD_PAYLOADS = [
    (LookupError, UNKNOWN_NAME, _S32),
    (TypeError, None, _S32),
    (TypeError, 5, _S32),
    (TypeError, b"Float32", _S32),
    (ValueError, "Float32", DType.Float64.structure()),
    (ValueError, "Float32", _S32[:1] + (("bits", "int:16"),) + _S32[2:]),
    (ValueError, "Any", ("DTypeCategory", ("supertype", "none"),
                         ("opaque_storage", "bool:False"), ("extension", ()))),
    (ValueError, EXT_PAIR.name, _S_PAIR[:-1] + (("extension", ("str:x",)),)),
    (ValueError, EXT_PAIR.name, _S_PAIR[:3] + (("representation_rules", ()),) + _S_PAIR[4:]),
]
_MAYBE_BAD = [
    ("Float32", [list(x) if type(x) is tuple else x for x in _S32]),
    ("Float32", list(_S32)),
    ("Float32", None),
    ("Float32", 32),
    ("Float32", ()),
    ("Float32", _S32 + ("extra",)),
    ("Float32", (("SimpleDType",),) + _S32[1:]),
    ("Float32", tuple(type("S", (str,), {})(x) if type(x) is str else x for x in _S32)),
]


def op_bad_reconstruct():
    rec = _dtypes._reconstruct
    for exc, name, structure in _BAD_PAYLOADS:
        _expect(exc, rec, name, structure)
    for name, structure in _MAYBE_BAD:
        _expect((TypeError, ValueError), rec, name, structure)
    _expect(TypeError, rec)
    _expect(TypeError, rec, "Float32")


_ND_RECORD = EXT_ND.__reduce__()[1][0]
_ND_AT = _ND_RECORD.index((16, 16))
_ND_STRUCTURE = EXT_ND.structure()


class _Ints(tuple):
    pass


class _Int(int):
    pass


def _nd_record(block):
    return _ND_RECORD[:_ND_AT] + (block,) + _ND_RECORD[_ND_AT + 1:]


def op_nd_blocks():
    """N-D blocks: Levels and LevelExtents built and refused, their
    accessors, a format with one pickled and reconstructed, and every way a
    payload's block can differ or be malformed."""
    e4m3 = DType.E4M3
    for block in ((16, 16), (2, 3, 4), _Ints((_Int(16), 16)), (2 ** 70, 2)):
        level = Level(e4m3, block)
        level.block, level.block_shape, level.block_size, hash(level), repr(level)
        assert level == Level(e4m3, block) and level != Level(e4m3, 256)
        LevelExtent(0, block).structure()
    Level(e4m3, 32).block_shape, Level(e4m3, Whole).block_size
    for block in ((1, 32), (32,), (), (1, 16, 16), (0, 16), (-1, 16), (1, 2 ** 70)):
        _expect(ValueError, Level, e4m3, block)
        _expect(ValueError, LevelExtent, 0, block)
    for block in ((16, True), (16, 1.5), ((16,), 16), [16, 16]):
        _expect(TypeError, Level, e4m3, block)
        _expect(TypeError, LevelExtent, 0, block)
    n = FREE_NAME
    _expect(ValueError, BlockScaledDType, n, element=EXT_SIMPLE,
            levels=[Level(e4m3, (16, 16)), Level(DType.Float32, 4)])
    _expect(ValueError, BlockScaledDType, n, element=EXT_SIMPLE,
            levels=[Level(e4m3, 16), Level(DType.Float32, (2, 2))])
    _expect(ValueError, BlockScaledDType, n, element=EXT_SIMPLE,   # EXT_ND's structure
            levels=[Level(e4m3, (16, 16)), Level(DType.Float32, Whole)])
    EXT_ND.block_shape, EXT_ND.num_axes, EXT_ND.bits_per_element, EXT_ND.structure()
    for protocol in (0, 2, 5):
        assert pickle.loads(pickle.dumps(EXT_ND, protocol=protocol)) is EXT_ND
    rec = _dtypes._reconstruct
    assert rec(_ND_RECORD) is EXT_ND
    for block in (16, (16, 32), (16, 16, 2), None, ("16", 16), (16, 1.0), [16, 16],
                  _Ints((16, 16)), (_Int(16), 16)):
        _expect(ValueError, rec, _nd_record(block))
    _expect(ValueError, rec, EXT_ND.name, _ND_STRUCTURE[:2] + (
        ("levels", (_ND_STRUCTURE[2][1][0][:2] + (("block", "int:16"),),)
         + _ND_STRUCTURE[2][1][1:]),) + _ND_STRUCTURE[3:])


def _prop(self):
    return 1


def _method(self, *args):
    return None


class _NameMixin:
    __slots__ = ()

    @property
    def name(self):
        return "x"


_REFUSED_CLASSES = [
    ((SimpleDType,), {"name": property(_prop)}, {"abstract": False}),
    ((SimpleDType,), {"bits": 1}, {}),
    ((SimpleDType,), {"structure": _method}, {"abstract": False}),
    ((SimpleDType,), {"__eq__": _method}, {}),
    ((SimpleDType,), {"__hash__": _method}, {}),
    ((SimpleDType,), {"__reduce__": _method}, {}),
    ((SimpleDType,), {"__setattr__": _method}, {}),
    ((SimpleDType,), {"is_opaque_storage": False}, {}),
    ((CompoundDType,), {"simple_types": property(_prop)}, {"abstract": False}),
    ((DTypeCategory,), {"supertype": None}, {}),
    ((_NameMixin, SimpleDType), {}, {"abstract": False}),
    ((SimpleDType,), {}, {"unknown_keyword": 1}),
    ((SimpleDType,), {}, {"abstract": "yes"}),
    ((DTypeCategory, SimpleDType), {}, {"abstract": False}),
    ((DType,), {}, {"abstract": False}),
    ((RepresentationRule,), {"structure": _method}, {}),
    ((RepresentationRule,), {"__setattr__": _method}, {}),
    ((RepresentationRule,), {"__delattr__": _method}, {}),
]


def op_refused_classes():
    for bases, ns, kwds in _REFUSED_CLASSES:
        _expect(TypeError, types.new_class, "Refused", bases, kwds,
                lambda d, ns=ns: d.update(ns))
    _expect(TypeError, type, "SubMeta", (type(DType),), {})
    _expect(TypeError, type, "SubRuleMeta", (type(RepresentationRule),), {})


def op_dropped_subclasses():
    class Abstract(SimpleDType):
        pass

    class Concrete(SimpleDType, abstract=False):
        def structure_extension(self):
            return ("x",)

    class Comp(CompoundDType, abstract=False):
        def __init__(self, name):
            super().__init__(name, simple_types=[DType.Float32])

    class Cat(DTypeCategory, abstract=False):
        __slots__ = ("extra",)

    class R(RepresentationRule):
        def validate(self, context):
            return None

    class Sub(Abstract, abstract=False):
        pass

    # Subclasses that are used only on failure paths register nothing.
    _expect(ValueError, Concrete, FREE_NAME, bits=0, supertype=DType.Floating)
    _expect(TypeError, Cat, FREE_NAME, supertype=DType.Float32)
    _expect(TypeError, Abstract, FREE_NAME, bits=8, supertype=DType.Floating)
    _expect(ValueError, Sub, "Float32", bits=32, supertype=DType.Floating)
    R()
    R().structure()


_fresh_names = itertools.count()


def op_refused_fresh_names():
    """A new name in every call, refused: nothing of it may stay allocated
    (interned names are immortal on free-threaded builds, so the module must
    not intern a name it was merely given)."""
    name = f"LeakFresh_{next(_fresh_names)}"
    _expect(ValueError, SimpleDType, name, bits=0, supertype=DType.Floating)
    _expect(TypeError, DTypeCategory, name, supertype=DType.Float32)
    _expect(LookupError, DType.from_name, name)


def op_module_hints_and_ensure():
    rec = _dtypes._reconstruct
    previous = _dtypes.set_unpickle_imports(True)
    # each policy: any module, the default, prefixes, none
    for allow in (True, (), ("json", "mylib.sub"), False):
        _dtypes.set_unpickle_imports(allow)
        for hint in ("a b", ".rel", "__main__", "__main__.x", "unittest.__main__",
                     "no_such_module_sw13", "json", "json.no_such_sub",
                     "_autoimport_raises", "other"):
            _expect(LookupError, rec, UNKNOWN_NAME, _S32, hint)
        _dtypes.unpickle_imports()
    _expect(TypeError, rec, UNKNOWN_NAME, _S32, 5)
    _expect(TypeError, rec, "Float32", _S32, None, None, None)
    assert rec(EXT_TAGGED.name, EXT_TAGGED.structure(), "no_such_module_sw13") is EXT_TAGGED
    _expect(TypeError, _dtypes.set_unpickle_imports, "json")
    _expect(ValueError, _dtypes.set_unpickle_imports, ["a..b"])
    _expect(ValueError, _dtypes.set_unpickle_imports, ["a.__main__"])
    assert _dtypes.set_unpickle_imports(previous) is False
    assert _dtypes.set_unpickle_imports(previous) == previous
    assert SimpleDType.ensure(EXT_SIMPLE.name, bits=EXT_SIMPLE.bits,
                              supertype=EXT_SIMPLE.supertype) is EXT_SIMPLE
    _expect(ValueError, SimpleDType.ensure, EXT_SIMPLE.name, bits=EXT_SIMPLE.bits + 8,
            supertype=EXT_SIMPLE.supertype)
    _expect(ValueError, SimpleDType, EXT_SIMPLE.name, bits=EXT_SIMPLE.bits,
            supertype=EXT_SIMPLE.supertype)
    _expect(ValueError, Tagged, EXT_TAGGED.name, bits=8, supertype=DType.Floating)
    assert Tagged.from_name(EXT_TAGGED.name) is EXT_TAGGED
    assert EXT_TAGGED in Tagged.registered()
    assert EXT_TAGGED.__reduce__()[1][-1] == __name__


GROUPS = {
    "module_hints_and_ensure": op_module_hints_and_ensure,
    "construction_failures": op_construction_failures,
    "refused_fresh_names": op_refused_fresh_names,
    "lookups": op_lookups,
    "accessors": op_accessors,
    "pickling": op_pickling,
    "bad_reconstruct": op_bad_reconstruct,
    "refused_classes": op_refused_classes,
    "dropped_subclasses": op_dropped_subclasses,
    "nd_blocks": op_nd_blocks,
}


# --------------------------------------------------------------------------
# Measurement
# --------------------------------------------------------------------------

def _refcounts():
    return {key: sys.getrefcount(obj) for key, obj in SHARED.items()}


def _run(op, n):
    for _ in range(n):
        op()


MAX_CHUNKS = 4


def _settle():
    """Free what is garbage, and empty the interpreter's type attribute
    cache: on CPython 3.11 its 4096 entries keep the name string of each
    lookup, keyed by the string's address, so code that makes a name for
    every lookup fills it with up to a few hundred kilobytes of strings,
    bounded, that no object owns. This module looks names up through
    interned strings (test_lookups_by_name_leave_the_type_cache_alone);
    emptying the cache keeps the readings free of other code's.
    (sys._clear_internal_caches, 3.13+, does it without the
    DeprecationWarning that sys._clear_type_cache raises from 3.14.)"""
    gc.collect()
    clear = getattr(sys, "_clear_internal_caches", sys._clear_type_cache)
    clear()


def _measure(op):
    """Problems seen when repeating op; an empty list means no leak.

    CPython keeps bounded caches (free lists; the type attribute cache keeps
    attribute-name strings of classes that are gone), which can grow for a
    while before they are full.  A leak grows in every chunk, so the chunks
    run back to back without any reset and the check passes as soon as one
    whole chunk shows no growth.
    """
    registered = DType.registered()
    problems = []
    _run(op, WARMUP)
    _settle()

    # Reference counts and allocated blocks.
    for _ in range(MAX_CHUNKS):
        refs_before = _refcounts()
        blocks_before = sys.getallocatedblocks()
        total_before = _total_refcount() if _total_refcount else 0
        _run(op, ITERATIONS)
        _settle()
        total = _total_refcount() - total_before if _total_refcount else 0
        blocks = sys.getallocatedblocks() - blocks_before
        refs_after = _refcounts()
        refs = {k: refs_after[k] - refs_before[k]
                for k in refs_before if refs_after[k] != refs_before[k]}
        chunk_problems = []
        if refs:
            chunk_problems.append(f"reference counts changed by {refs}")
        if blocks >= MAX_BLOCK_GROWTH:
            chunk_problems.append(f"{blocks} allocated blocks more after {ITERATIONS} "
                                  f"iterations (bound {MAX_BLOCK_GROWTH})")
        if total >= MAX_REFCOUNT_GROWTH:
            chunk_problems.append(f"the total reference count grew by {total} after "
                                  f"{ITERATIONS} iterations (bound {MAX_REFCOUNT_GROWTH})")
        if not chunk_problems:
            break
        problems.append(chunk_problems)
    else:
        return problems

    # Traced memory (one tracing session; earlier allocations are untracked).
    tracemalloc.start()
    try:
        _run(op, WARMUP)
        _settle()
        for _ in range(MAX_CHUNKS):
            traced_before = tracemalloc.get_traced_memory()[0]
            _run(op, TRACED_ITERATIONS)
            _settle()
            traced = tracemalloc.get_traced_memory()[0] - traced_before
            if traced < MAX_TRACED_GROWTH:
                break
        else:
            return [f"traced memory grew by {traced} bytes over each of {MAX_CHUNKS} "
                    f"runs of {TRACED_ITERATIONS} iterations (bound {MAX_TRACED_GROWTH})"]
    finally:
        tracemalloc.stop()

    if DType.registered() != registered:
        return ["registered something"]
    return []


# Groups that define classes and drop them. Free-threaded CPython 3.13 (seen
# on 3.13.5t) stops freeing dropped classes as soon as any thread other than
# the main one has been started, even after it was joined: gc.collect() then
# keeps every dropped class, even a bare `class P: pass`, for the rest of the
# process (a GIL build frees them). In a test process where an earlier test
# ran a thread, these groups would report that as a leak of this module. So
# they run in a fresh child interpreter, before any thread starts, on every
# build, which also makes their result independent of the tests before them.
# The module-hint group belongs here too: an import that raises drops a
# half-made module, whose functions and globals form just such a cycle.
FRESH_PROCESS_GROUPS = {"refused_classes", "dropped_subclasses",
                        "module_hints_and_ensure"}


def _measure_in_fresh_process(group):
    """Run the group's measurement in a new interpreter that has started no
    thread; return its problems."""
    code = (
        "import json, sys, threading\n"
        "import test_leaks\n"
        f"print(json.dumps(test_leaks.measure_group({group!r})))\n"
    )
    # the parent's environment as it is, with this folder on the path
    proc = run_python(["-c", code], env=child_env(HERE, drop=()), timeout=600)
    assert_exited(proc)
    report = json.loads(proc.stdout.splitlines()[-1])
    assert report["threads"] == 1, "a thread had started before the measurement"
    return report["problems"]


def measure_group(group):
    """The problems of one group, measured in this process; with the number
    of threads alive when the measurement started."""
    threads = threading.active_count()
    op = GROUPS[group]
    op()  # a plain first run: a wrong expectation fails here, readably
    return {"threads": threads, "problems": _measure(op)}


# The groups whose measurement takes more than a few seconds.
SLOW_GROUPS = {"lookups", "pickling", "refused_fresh_names"}
# The groups that look up unknown names thousands of times: the LookupError
# suggests registered names, so in a shared process their run time grows
# with whatever earlier tests registered (minutes after the thread tests).
# They run in a fresh interpreter (the fresh_interpreter marker).
LOOKUP_GROUPS = {"lookups", "refused_fresh_names"}


def _marks(group):
    marks = [pytest.mark.slow] if group in SLOW_GROUPS else []
    if group in LOOKUP_GROUPS:
        marks.append(pytest.mark.fresh_interpreter)
    return marks


@pytest.mark.parametrize("group", [pytest.param(group, marks=_marks(group))
                                   for group in sorted(GROUPS)])
def test_no_leak(group):
    if group in FRESH_PROCESS_GROUPS:
        problems = _measure_in_fresh_process(group)
    else:
        problems = measure_group(group)["problems"]
    assert problems == [], f"{group}: {problems}"


@pytest.mark.skipif(_total_refcount is None,
                    reason="sys.gettotalrefcount exists on debug (Py_DEBUG) builds "
                    "only; scripts/debug-python runs the suite on one")
def test_measure_sees_a_leaked_reference():
    """The total reference count catches what the other checks cannot: a
    reference leaked to an object that is alive anyway and not shared."""
    import ctypes

    incref = ctypes.pythonapi.Py_IncRef
    incref.argtypes = [ctypes.py_object]
    target = object()

    problems = _measure(lambda: incref(target))
    assert len(problems) == MAX_CHUNKS
    assert all(any("total reference count" in p for p in chunk) and
               not any("allocated blocks" in p for p in chunk)
               for chunk in problems), problems


# What runs between the readings: lookup misses whose messages are read
# (their suggestions are chosen in C) and a rule validated, in a fresh
# interpreter. CPython 3.11's type attribute cache keys its entries by the
# name object's address and keeps the name: a name made for every lookup
# would fill its 4096 entries, about 230 KB of strings, while the names the
# module keeps interned take one entry each.
_TYPE_CACHE_CHILD = """
import gc, itertools, sys, tracemalloc, types
from stride_weave.dtypes import DType, SimpleDType

for i in range(3):   # close to the names looked up below
    SimpleDType(f"CacheProbe_{i}", bits=8, supertype=DType.Floating)
rule = DType.MXFP4.representation_rules[0]

class Layout:
    def uniform_preimage_extent(self, shape):
        return 32

shape = types.SimpleNamespace
context = types.SimpleNamespace(
    logical_dtype=DType.MXFP4, adjacent_layouts=(Layout(),),
    level_shapes=(shape(logical_size=64), shape(logical_size=2)))
count = itertools.count()

def step():
    try:
        DType.from_name("CacheProbe_x{}".format(next(count)))
    except LookupError as e:
        assert "did you mean" in str(e)
    assert rule.validate(context) is None

for _ in range(300):
    step()
gc.collect()
tracemalloc.start()
before = tracemalloc.get_traced_memory()[0]
for _ in range(5000):
    step()
gc.collect()
print(tracemalloc.get_traced_memory()[0] - before)
"""


def test_lookups_by_name_leave_the_type_cache_alone():
    """Formatting miss messages and validating rules 5000 times keeps no
    memory: the module looks attributes up by interned names, so CPython's
    type attribute cache holds no string per call (the leak groups empty
    that cache before each reading, so they would not see this)."""
    # The system allocator: pymalloc reuses a freed name's block for the
    # next one, which can hide the growth behind a few cache slots. (A
    # free-threaded build runs on mimalloc only.)
    env = child_env(drop=())
    if not sysconfig.get_config_var("Py_GIL_DISABLED"):
        env["PYTHONMALLOC"] = "malloc"
    proc = run_python(["-c", _TYPE_CACHE_CHILD], env=env)
    assert_exited(proc)
    grew = int(proc.stdout.split()[-1])
    assert grew < MAX_TRACED_GROWTH, f"traced memory grew by {grew} bytes"


def test_failed_names_stay_free():
    for name in (FREE_NAME, UNKNOWN_NAME):
        with pytest.raises(LookupError):
            DType.from_name(name)


# --------------------------------------------------------------------------
# The C API (docs/c-api.md), called through the probe consumer that
# tests/surfaces/test_capi.py builds
# --------------------------------------------------------------------------

def op_c_api(probe):
    null = probe.NULL
    block_scaled = [DType.MXFP4, DType.NVFP4]
    for d in BUILTINS + EXTENSIONS + block_scaled:
        probe.kind(d)
        probe.macro_kinds(d)
        probe.name(d)
        probe.name_utf8(d)
        probe.supertype(d)
        probe.is_subtype(d, DType.Floating)
        assert probe.from_name_object(d.name) is d
        assert probe.from_name(d.name.encode()) is d
    probe.kind(null), probe.kind(5), probe.kind(REJECTED_CAT)
    probe.bits(DType.Float32), probe.bits(EXT_SIMPLE)
    probe.macro_simple(EXT_SIMPLE)
    probe.num_planes(EXT_PAIR), probe.plane(EXT_PAIR, 1)
    for d in block_scaled:
        probe.num_planes(d), probe.plane(d, 1)
        probe.element(d), probe.num_levels(d)
        probe.level_scale(d, 0), probe.level_block(d, 0)
        probe.macro_block_scaled(d)
    probe.level_block(DType.NVFP4, 1)                     # Whole
    for d, i in ((EXT_ND, 0), (EXT_ND, 1), (DType.MXFP4, 0)):
        probe.level_block_shape(d, i, 2), probe.level_block_shape(d, i, 0, True)
    _expect(ValueError, probe.level_block, EXT_ND, 0)
    _expect(SystemError, probe.level_block_shape, EXT_ND, 0, 1, True)
    _expect(IndexError, probe.level_block_shape, EXT_ND, 2, 2)
    probe.table_objects(), probe.version(), probe.import_again()
    # every kind of failure
    _expect(LookupError, probe.from_name, UNKNOWN_NAME.encode())
    _expect(LookupError, probe.from_name_object, UNKNOWN_NAME)
    _expect(UnicodeDecodeError, probe.from_name, b"\xff")
    _expect(TypeError, probe.from_name_object, 5)
    _expect(SystemError, probe.from_name, null)
    _expect(SystemError, probe.from_name_object, null)
    _expect(OverflowError, probe.bits, EXT_HUGE)
    _expect(TypeError, probe.bits, DType.Floating)
    _expect(TypeError, probe.bits, EXT_PAIR)
    _expect(TypeError, probe.bits, FREE_NAME)
    _expect(SystemError, probe.bits, null)
    _expect(ValueError, probe.name, REJECTED_CAT)
    _expect(ValueError, probe.is_subtype, DType.Float32, REJECTED_CAT)
    _expect(TypeError, probe.is_subtype, DType.Float32, "Floating")
    _expect(TypeError, probe.num_planes, DType.Float32)
    _expect(IndexError, probe.plane, EXT_PAIR, 2)
    _expect(IndexError, probe.plane, DType.NVFP4, -1)
    _expect(TypeError, probe.element, EXT_PAIR)
    _expect(TypeError, probe.num_levels, DType.Floating)
    _expect(IndexError, probe.level_scale, DType.NVFP4, 2)
    _expect(IndexError, probe.level_block, DType.MXFP4, 1)
    _expect(SystemError, probe.level_block, null, 0)
    # kinds, casting and promotion; "no join" told apart without raising
    probe.isdtype(EXT_SIMPLE, 0x7F), probe.can_cast(DType.Int8, DType.Float32, 2)
    probe.promote_types(DType.Int8, DType.Int32), probe.macro_relations(DType.Int8, DType.Int32)
    probe.try_promote_types(DType.Int8, DType.Int32)
    probe.try_promote_types(DType.Int8, DType.Float32)              # no join
    _expect(TypeError, probe.promote_types, DType.Int8, DType.Float32)   # PromotionError
    _expect(TypeError, probe.try_promote_types, DType.Int8, "Int32")
    _expect(SystemError, probe.try_promote_types, DType.Int8, DType.Int32, "null result")
    _expect(ValueError, probe.isdtype, DType.Int8, 0)


@pytest.mark.slow
@pytest.mark.fresh_interpreter      # it looks up unknown names (see LOOKUP_GROUPS)
def test_no_leak_through_the_c_api():
    """Every C API entry point, on success and on every failure path; the
    probe is compiled by tests/support/capi.py (skipped only without a C compiler)."""
    from support import capi as _capi

    probe = _capi.load("probe")

    def op():
        op_c_api(probe)

    op()
    problems = _measure(op)
    assert problems == [], problems
