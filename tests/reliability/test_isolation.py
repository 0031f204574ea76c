"""Reliability: isolation, interpreter shutdown and garbage collection.

docs/design.md ("Identity across imports
and interpreters"); docs/guarantees.md.

Every scenario runs in a child process started with ``sys.executable``, so a
crash (segfault, fatal error, abort) shows up as a return code and a stderr
report instead of taking the test run down.  A child passes only if it exits
0 with nothing at all on stderr.

* subinterpreters (3.12+): ``import stride_weave.dtypes`` in a subinterpreter
  either gives that interpreter its own graph (its ``DType.Float32`` is
  another object with the same structure, its registrations are invisible to
  the main interpreter and to other subinterpreters) or fails with a clean
  ``ImportError``;
* shutdown with 500+ registered extensions of every kind, user subclasses in
  reference cycles, rejected instances left as cyclic garbage, and threads
  still using the registry;
* garbage collection: a rejected descriptor subclass instance in a reference
  cycle (its ``__init__`` stores ``self`` in a list on ``self``, then fails)
  is collected.
"""
import json
import os
import sys

import pytest

from support.defs import BUILTIN_NAMES

from support.child import assert_clean_exit, run_child


# ==========================================================================
# (a) subinterpreters
# ==========================================================================

needs_subinterpreters = pytest.mark.skipif(
    sys.version_info < (3, 12),
    reason="the subinterpreter guarantee starts at CPython 3.12 "
           "(Py_mod_multiple_interpreters, per-interpreter GIL, _interpreters / "
           "_xxsubinterpreters); on 3.11 subinterpreter support is not part of "
           "the contract",
)

# Helpers shared by the child scripts: create/run/destroy a subinterpreter on
# 3.12 (_xxsubinterpreters) and 3.13+ (_interpreters).
SUBINTERP_HELPERS = r'''
import json, os, pickle, sys, threading, traceback

if sys.version_info >= (3, 13):
    import _interpreters as _I

    def create(isolated):
        return _I.create("isolated" if isolated else "legacy")

    def run(iid, code):
        err = _I.exec(iid, code)
        return None if err is None else repr(err)
else:
    import _xxsubinterpreters as _I

    def create(isolated):
        return _I.create(isolated=isolated)

    def run(iid, code):
        try:
            _I.run_string(iid, code)
        except Exception as exc:
            return repr(exc)
        return None

destroy = _I.destroy

# The code a subinterpreter runs.  It never raises: it reports to OUT.
SUB_CODE = r"""
import json, pickle, sys, traceback
OUT = %(out)r
SUB_NAME = %(sub_name)r
MAIN_NAME = %(main_name)r
BITS = %(bits)d
N_EXTRA = %(n_extra)d
BUILTIN_NAMES = %(builtins)r
result = {}
try:
    try:
        import stride_weave.dtypes as sw
    except ImportError as exc:
        result = {"status": "ImportError", "msg": str(exc)}
    else:
        from stride_weave import _dtypes
        D = sw.DType
        result["status"] = "ok"
        result["ids"] = {"Float32": id(D.Float32), "DType": id(D),
                         "DTypeMeta": id(type(D)), "SimpleDType": id(sw.SimpleDType),
                         "Whole": id(sw.Whole), "_reconstruct": id(_dtypes._reconstruct)}
        result["structures"] = {n: repr(D.from_name(n).structure()) for n in BUILTIN_NAMES}
        result["registered_before"] = [d.name for d in D.registered()]
        for name in (MAIN_NAME, SUB_NAME):
            try:
                D.from_name(name)
                result["lookup:" + name] = "found"
            except LookupError:
                result["lookup:" + name] = "LookupError"
        mine = sw.SimpleDType(SUB_NAME, bits=BITS, supertype=D.Floating)
        result["mine_bits"] = D.from_name(SUB_NAME).bits
        result["mine_roundtrip"] = pickle.loads(pickle.dumps(mine)) is mine
        result["float32_roundtrip"] = pickle.loads(pickle.dumps(D.Float32)) is D.Float32
        # a pickle made by the main interpreter resolves to *this* graph
        result["main_float32_blob"] = pickle.loads(%(blob_f32)r) is D.Float32
        try:
            pickle.loads(%(blob_main_ext)r)
            result["main_ext_blob"] = "loaded"
        except LookupError:
            result["main_ext_blob"] = "LookupError"
        # extensions of every kind, some in reference cycles, left behind
        # for the interpreter's teardown
        class Rule(sw.RepresentationRule):
            def __init__(self, k):
                super().__init__()
                self.k = k
            def structure_extension(self):
                return ("k", self.k)
            def validate(self, context):
                return None
        class Pair(sw.CompoundDType, abstract=False):
            def __init__(self, name, planes, rules):
                ring = [self]
                self.ring = ring
                super().__init__(name, simple_types=planes, representation_rules=rules)
        class Cyc(sw.SimpleDType, abstract=False):
            def __init__(self, name, **kw):
                self.ring = [self]
                super().__init__(name, **kw)
        kept = []
        for i in range(N_EXTRA):
            c = sw.DTypeCategory(SUB_NAME + "_c%%d" %% i, supertype=D.Any)
            s = Cyc(SUB_NAME + "_s%%d" %% i, bits=i + 1, supertype=c)
            p = Pair(SUB_NAME + "_p%%d" %% i, [s, D.Float32], [Rule(i)])
            kept.append((c, s, p))
        # re-importing in the subinterpreter keeps its identities
        f32 = D.Float32
        for m in [m for m in sys.modules if m.startswith("stride_weave")]:
            del sys.modules[m]
        import stride_weave.dtypes as sw2
        result["reimport_same_identity"] = sw2.DType.Float32 is f32 and sw2.DType is D
        result["registered_after"] = len(sw2.DType.registered())
except BaseException:
    result["status"] = "error"
    result["traceback"] = traceback.format_exc()
with open(OUT, "w") as f:
    json.dump(result, f)
"""


def sub_code(out, sub_name, main_name, bits, n_extra, blob_f32, blob_main_ext):
    return SUB_CODE % dict(out=out, sub_name=sub_name, main_name=main_name,
                           bits=bits, n_extra=n_extra, builtins=BUILTIN_NAMES,
                           blob_f32=blob_f32, blob_main_ext=blob_main_ext)
'''

SUBINTERP_HELPERS += f"\nBUILTIN_NAMES = {BUILTIN_NAMES!r}\n"

SUBINTERP_MAIN = SUBINTERP_HELPERS + r'''
import stride_weave.dtypes as sw
from stride_weave import _dtypes
D = sw.DType
isolated = sys.argv[1] == "isolated"
workdir = sys.argv[2]
MAIN_NAME = "IsoMain_%d" % os.getpid()
SUB_NAME = "IsoSub"                       # registered in every subinterpreter
main_ext = sw.SimpleDType(MAIN_NAME, bits=12, supertype=D.Floating)
main_ids = {"Float32": id(D.Float32), "DType": id(D), "DTypeMeta": id(type(D)),
            "SimpleDType": id(sw.SimpleDType), "Whole": id(sw.Whole),
            "_reconstruct": id(_dtypes._reconstruct)}
registered_before = [d.name for d in D.registered()]
blob_f32 = pickle.dumps(D.Float32)
blob_ext = pickle.dumps(main_ext)
report = {"main_ids": main_ids,
          "main_structures": {n: repr(D.from_name(n).structure()) for n in BUILTIN_NAMES},
          "subs": []}

# two subinterpreters alive at once, one after the other, then a third
# created after both were destroyed
first = create(isolated)
second = create(isolated)
for k, iid in enumerate((first, second)):
    out = os.path.join(workdir, "sub%d.json" % k)
    failure = run(iid, sub_code(out, SUB_NAME, MAIN_NAME, 10 + k, 120, blob_f32, blob_ext))
    with open(out) as f:
        report["subs"].append({"run_error": failure, **json.load(f)})
destroy(first)
destroy(second)
out = os.path.join(workdir, "sub2.json")
third = create(isolated)
failure = run(third, sub_code(out, SUB_NAME, MAIN_NAME, 12, 10, blob_f32, blob_ext))
with open(out) as f:
    report["subs"].append({"run_error": failure, **json.load(f)})
destroy(third)

# the main interpreter's graph is untouched
try:
    D.from_name(SUB_NAME)
    report["main_sees_sub_name"] = True
except LookupError:
    report["main_sees_sub_name"] = False
report["main_registered_unchanged"] = [d.name for d in D.registered()] == registered_before
report["main_identities_kept"] = (
    id(D.Float32) == main_ids["Float32"] and D.from_name("Float32") is D.Float32
    and pickle.loads(blob_f32) is D.Float32 and pickle.loads(blob_ext) is main_ext)
print(json.dumps(report))
'''


@needs_subinterpreters
@pytest.mark.parametrize("config", ["isolated", "legacy"])
def test_subinterpreters_get_their_own_graph_or_a_clean_import_error(tmp_path, config):
    rc, out, err = run_child(SUBINTERP_MAIN, config, str(tmp_path))
    assert_clean_exit(rc, out, err)
    report = json.loads(out)
    assert report["main_registered_unchanged"], "a subinterpreter registered into the main graph"
    assert report["main_sees_sub_name"] is False
    assert report["main_identities_kept"]
    statuses = {sub["status"] for sub in report["subs"]}
    for sub in report["subs"]:
        assert sub["run_error"] is None, sub
        assert sub["status"] in ("ok", "ImportError"), sub.get("traceback", sub)
    assert len(statuses) == 1, f"subinterpreters disagree: {report['subs']}"
    if statuses == {"ImportError"}:
        # refused: must say so clearly
        for sub in report["subs"]:
            assert sub["msg"], "ImportError without a message"
        return
    main_ids = report["main_ids"]
    seen_ids = [main_ids]
    for k, sub in enumerate(report["subs"]):
        # its own objects: nothing shared with the main interpreter (the main
        # interpreter's objects are alive for the whole child, so equal ids
        # would mean the same objects) nor with the other live subinterpreter
        for key, value in sub["ids"].items():
            assert value != main_ids[key], f"subinterpreter {k} shares {key} with main"
        if k == 1:
            for key, value in sub["ids"].items():
                assert value != report["subs"][0]["ids"][key], (
                    f"subinterpreters 0 and 1 share {key}")
        seen_ids.append(sub["ids"])
        # ... with the same structure
        assert sub["structures"] == report["main_structures"]
        assert sub["registered_before"] == list(BUILTIN_NAMES), (
            "a fresh subinterpreter's graph is not the built-in graph: "
            f"{sub['registered_before']}")
        assert sub["lookup:IsoSub"] == "LookupError", "registrations leak between subinterpreters"
        (main_key,) = [key for key in sub if key.startswith("lookup:IsoMain")]
        assert sub[main_key] == "LookupError", "the main interpreter's registration is visible"
        assert sub["mine_bits"] == 10 + k
        assert sub["mine_roundtrip"] and sub["float32_roundtrip"]
        assert sub["main_float32_blob"], "a main-interpreter pickle of Float32 is not the subinterpreter's Float32"
        assert sub["main_ext_blob"] == "LookupError"
        assert sub["reimport_same_identity"], "re-import in a subinterpreter built a second graph"
    assert report["subs"][0]["registered_after"] == len(BUILTIN_NAMES) + 1 + 3 * 120
    assert report["subs"][2]["registered_after"] == len(BUILTIN_NAMES) + 1 + 3 * 10


SUBINTERP_PARALLEL = SUBINTERP_HELPERS + r'''
import stride_weave.dtypes as sw
D = sw.DType
workdir = sys.argv[1]
N = 4
errors = []
main_regs = []
blob_f32 = pickle.dumps(D.Float32)
blob_none = pickle.dumps(D.Any)
barrier = threading.Barrier(N + 1)
sw.SimpleDType("ParMain", bits=5, supertype=D.Floating)

def in_sub(k):
    try:
        iid = create(True)
        barrier.wait()
        out = os.path.join(workdir, "par%d.json" % k)
        failure = run(iid, sub_code(out, "ParSub", "ParMain", 20 + k, 150, blob_f32, blob_none))
        destroy(iid)
        if failure:
            errors.append(failure)
    except BaseException:
        errors.append(traceback.format_exc())

def in_main():
    try:
        barrier.wait()
        for i in range(400):
            main_regs.append(sw.SimpleDType("ParMain_%d" % i, bits=i + 1, supertype=D.Floating))
            assert pickle.loads(pickle.dumps(main_regs[-1])) is main_regs[-1]
    except BaseException:
        errors.append(traceback.format_exc())

threads = [threading.Thread(target=in_sub, args=(k,)) for k in range(N)]
threads.append(threading.Thread(target=in_main))
for t in threads:
    t.start()
for t in threads:
    t.join()
subs = []
for k in range(N):
    try:
        with open(os.path.join(workdir, "par%d.json" % k)) as f:
            subs.append(json.load(f))
    except FileNotFoundError:
        subs.append({"status": "no report"})
print(json.dumps({"errors": errors, "subs": subs,
                  "main_count": len(D.registered()),
                  "main_sees_sub": any(d.name.startswith("ParSub") for d in D.registered())}))
'''


@needs_subinterpreters
def test_subinterpreters_in_parallel_threads(tmp_path):
    """Isolated subinterpreters (own GIL on 3.12+) import and register at the
    same time as each other and as the main interpreter."""
    rc, out, err = run_child(SUBINTERP_PARALLEL, str(tmp_path))
    assert_clean_exit(rc, out, err)
    report = json.loads(out)
    assert report["errors"] == []
    assert report["main_sees_sub"] is False
    assert report["main_count"] == len(BUILTIN_NAMES) + 1 + 400
    statuses = {sub["status"] for sub in report["subs"]}
    assert statuses in ({"ok"}, {"ImportError"}), report["subs"]
    if statuses == {"ok"}:
        for k, sub in enumerate(report["subs"]):
            assert sub["registered_before"] == list(BUILTIN_NAMES)
            assert sub["lookup:ParMain"] == "LookupError"
            assert sub["mine_bits"] == 20 + k
            assert sub["main_float32_blob"] and sub["mine_roundtrip"]
            assert sub["registered_after"] == len(BUILTIN_NAMES) + 1 + 3 * 150


def test_reimport_in_a_child_keeps_one_identity():
    """Re-importing after removal from sys.modules reuses the graph (every
    version, including 3.11 where the subinterpreter tests skip)."""
    code = """
    import sys
    import stride_weave.dtypes as sw
    f32, dtype = sw.DType.Float32, sw.DType
    for m in [m for m in sys.modules if m.startswith("stride_weave")]:
        del sys.modules[m]
    import stride_weave.dtypes as sw2
    assert sw2.DType is dtype and sw2.DType.Float32 is f32
    print("ok")
    """
    rc, out, err = run_child(code)
    assert_clean_exit(rc, out, err)
    assert out.strip() == "ok"


# ==========================================================================
# (b) interpreter shutdown
# ==========================================================================

SHUTDOWN_CODE = r'''
import gc, pickle, sys, threading, time
from stride_weave.dtypes import (CompoundDType, DType, DTypeCategory,
                                 RepresentationRule, SimpleDType, Whole)
mode = sys.argv[1]
N = 110                     # 110 * 6 kinds = 660 registered extensions

class Rule(RepresentationRule):
    def __init__(self, k):
        super().__init__()
        self.k = k
        self.ring = [self]
    def structure_extension(self):
        return ("k", self.k, Whole)
    def validate(self, context):
        return None

class Pair(CompoundDType, abstract=False):
    def __init__(self, name, *, planes, rules, supertype=None):
        ring = [self]
        self.ring = ring            # instance -> list -> instance
        super().__init__(name, supertype=supertype, simple_types=planes,
                         representation_rules=rules)
    def structure_extension(self):
        return ("pair", len(self.ring))

class CycSimple(SimpleDType, abstract=False):
    __slots__ = ("ring", "peer")
    def __init__(self, name, *, peer, **kw):
        self.ring = [self]
        self.peer = peer
        super().__init__(name, **kw)

class CycCategory(DTypeCategory, abstract=False):
    def __init__(self, name, **kw):
        self.ring = [self, {"self": self}]
        super().__init__(name, **kw)
    def structure_extension(self):
        return ("cyc", 1.25, None, (True, -3))

class Failing(SimpleDType, abstract=False):
    def __init__(self, name, **kw):
        self.ring = [self]
        super().__init__(name, **kw)
        raise RuntimeError("rejected on purpose")

class Toucher:
    """Uses the registry from __del__, whenever that runs (even at shutdown)."""
    def __init__(self, d):
        self.d = d
        self.ring = [self]
    def __del__(self):
        try:
            DType.from_name(self.d.name)
            pickle.loads(pickle.dumps(self.d))
            DType.registered()
        except Exception:
            pass

everything = []
for i in range(N):
    cat = DTypeCategory("Sd_cat_%d" % i, supertype=DType.Floating)
    ccat = CycCategory("Sd_ccat_%d" % i, supertype=cat)
    simple = SimpleDType("Sd_simple_%d" % i, bits=i + 1, supertype=cat)
    csimple = CycSimple("Sd_csimple_%d" % i, peer=ccat, bits=8, supertype=ccat)
    pair = Pair("Sd_pair_%d" % i, planes=[simple, csimple, DType.Float32],
                rules=[Rule(i)], supertype=ccat)
    cat2 = DTypeCategory("Sd_cat2_%d" % i, supertype=None)
    everything.append([cat, ccat, simple, csimple, pair, cat2, everything])
    try:
        Failing("Sd_fail_%d" % i, bits=4, supertype=DType.Floating)
    except RuntimeError:
        pass
    # classes in cycles that register nothing
    K = type(DType)("Sd_K_%d" % i, (SimpleDType,), {"__module__": __name__}, abstract=False)
    K.me = K
    Toucher(simple)

assert len(DType.registered()) >= 6 * N + 14
blobs = [pickle.dumps(x) for x in everything[0][:6]]

if mode == "gc-disabled":
    gc.disable()               # leave every cycle for the finalizer
if mode == "threads":
    stop = False
    def hammer(k):
        j = 0
        while True:
            j += 1
            try:
                DType.from_name("Sd_simple_%d" % (j % N))
                DType.registered()
                pickle.loads(blobs[j % len(blobs)])
                if j % 50 == 0:
                    SimpleDType("Sd_thread_%d_%d" % (k, j), bits=3, supertype=DType.Floating)
            except Exception:
                pass
    for k in range(8):
        threading.Thread(target=hammer, args=(k,), daemon=True).start()
    time.sleep(0.2)
print("registered", len(DType.registered()))
sys.stdout.flush()
'''


@pytest.mark.parametrize("mode,flags", [
    ("plain", ()),
    ("gc-disabled", ()),
    ("dev-mode", ("-X", "dev")),
    ("threads", ()),
], ids=["plain", "gc-disabled", "dev-mode", "daemon-threads"])
def test_shutdown_with_many_registered_extensions(mode, flags):
    rc, out, err = run_child(SHUTDOWN_CODE, mode, flags=flags)
    assert_clean_exit(rc, out, err)
    count = int(out.split()[-1])
    assert count >= 500 + 14


# ==========================================================================
# (c) garbage collection of rejected instances in reference cycles
# ==========================================================================

GC_CODE = r'''
import gc, json, sys, weakref
from stride_weave.dtypes import (CompoundDType, DType, DTypeCategory,
                                 RepresentationRule, SimpleDType)
gc.disable()                   # collect only when the test says so
taken = DTypeCategory("Gc_taken", supertype=DType.Any)

def make_class(base, mode):
    class Cyclic(base, abstract=False):
        def __init__(self, name, **kw):
            self.ring = [self]                  # self -> list -> self
            self.ring.append({"again": self.ring})
            WEAK.append(weakref.ref(self))
            if mode == "before-super":
                raise RuntimeError("before super().__init__")
            if mode != "no-super":
                super().__init__(name, **kw)
            if mode == "after-super":
                raise RuntimeError("after super().__init__")
        def structure_extension(self):
            if mode == "extension":
                raise RuntimeError("in structure_extension")
            if mode == "bad-extension":
                return [self]                   # not a tuple: TypeError
            return ()
    return Cyclic

ARGS = {
    DTypeCategory: dict(supertype=DType.Any),
    SimpleDType: dict(bits=8, supertype=DType.Floating),
    CompoundDType: dict(simple_types=[DType.Float32]),
}
MODES = ["before-super", "after-super", "no-super", "extension",
         "bad-extension", "duplicate", "bad-argument"]
results = {}
for base, kwargs in ARGS.items():
    for mode in MODES:
        WEAK = []
        cls = make_class(base, mode)
        name = "Gc_%s_%s" % (base.__name__, mode)
        kw = dict(kwargs)
        if mode == "duplicate":
            name = "Gc_taken"
        if mode == "bad-argument":
            kw = {**kw, "supertype": 5}
        try:
            cls(name, **kw)
        except Exception as exc:
            raised = type(exc).__name__
        else:
            raised = None
        try:
            DType.from_name(name)
            registered = DType.from_name(name) is not taken
        except LookupError:
            registered = False
        alive_before = WEAK[0]() is not None
        gc.collect()
        # the class itself (registers nothing) is collectable too
        cls_ref = weakref.ref(cls)
        del cls
        gc.collect()
        results["%s/%s" % (base.__name__, mode)] = {
            "raised": raised, "registered": registered,
            "alive_before": alive_before,
            "alive_after": WEAK[0]() is not None,
            "class_alive_after": cls_ref() is not None,
        }
results["garbage"] = len(gc.garbage)
print(json.dumps(results))
'''

GC_KINDS = ["DTypeCategory", "SimpleDType", "CompoundDType"]
GC_MODES = ["before-super", "after-super", "no-super", "extension",
            "bad-extension", "duplicate", "bad-argument"]


@pytest.fixture(scope="module")
def gc_results():
    rc, out, err = run_child(GC_CODE)
    assert_clean_exit(rc, out, err)
    return json.loads(out)


@pytest.mark.parametrize("mode", GC_MODES)
@pytest.mark.parametrize("kind", GC_KINDS)
def test_rejected_instance_in_a_cycle_is_collected(gc_results, kind, mode):
    r = gc_results[f"{kind}/{mode}"]
    assert r["raised"] is not None, "construction was expected to fail"
    assert not r["registered"], "a failed construction registered its name"
    assert r["alive_before"], "the cycle should keep the instance alive until collected"
    assert not r["alive_after"], "the rejected instance survived gc.collect()"
    assert not r["class_alive_after"], "the user subclass survived gc.collect()"


def test_gc_left_no_uncollectable_garbage(gc_results):
    assert gc_results["garbage"] == 0
