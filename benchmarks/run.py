#!/usr/bin/env python3
"""Benchmark runner for stride-weave.

    python benchmarks/run.py                 # full run, prints the tables
    python benchmarks/run.py --write-docs    # ... and writes docs/performance.md
    python benchmarks/run.py --quick         # a few seconds, for CI

Method (plain timeit, no extra dependencies):

* every statement is compiled by ``timeit.Timer`` with its operands bound as
  *local* names of the timing function, and unrolled ``UNROLL`` times per loop
  iteration, so the loop's own overhead is amortized to a fraction of a ns;
* ``timeit`` disables the garbage collector while timing (so do the
  registration loops here);
* each benchmark is calibrated first (which also warms it up) so one sample
  lasts about ``--target-ms``; then all benchmarks are sampled in interleaved
  rounds (one sample of each per round, the first round discarded as warm-up)
  and the best sample is kept: a noisy period hits every benchmark alike, and
  every figure is reported as a ratio to a floor measured in the same run;
* each size of the scaling section (1k, 10k, 100k registered descriptors) runs
  in fresh child processes (``sys.executable``), one for timings and one for
  memory (tracemalloc slows allocation down, so it never runs while timing).

Timings are never asserted: the runner exits 0 unless the code errors.
Optional third-party baselines (numpy, torch, ml_dtypes) are measured only
when importable.
"""

import argparse
import copy
import datetime
import enum
import gc
import json
import math
import os
import pickle
import platform
import subprocess
import sys
import time
import timeit
import tracemalloc

from stride_weave.dtypes import DType, SimpleDType

try:
    from stride_weave import _dtypes as _sw_c
except ImportError:  # pragma: no cover - the public module imports it
    _sw_c = None

UNROLL = 10
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DOCS = os.path.join(ROOT, "docs", "performance.md")

BLOCK_SCALED_NOTE = (
    "The block-scaled rows use the built-in NVFP4 (an E2M1 element plane, "
    "E4M3 scales per 16 elements and one Float32 scale per tensor)."
)


# ---------------------------------------------------------------------------
# the timing harness
# ---------------------------------------------------------------------------

class Bench:
    """One timeit statement with its operands bound as locals."""

    def __init__(self, key, label, stmt, ns, group, floor=None, enum=None,
                 unroll=UNROLL, note="", per=1):
        self.key, self.label, self.group = key, label, group
        self.floor, self.enum, self.note = floor, enum, note
        self.unroll = unroll
        self.per = per             # operations one statement performs
        setup = "\n".join("%s = _ns[%r]" % (name, name) for name in ns)
        body = "\n".join([stmt] * unroll)
        self.timer = timeit.Timer(body, setup, globals={"_ns": ns})
        self.number = 1
        self.best = math.inf       # seconds per op
        self.samples = 0

    def calibrate(self, target):
        number = 1
        while True:
            t = self.timer.timeit(number)
            if t >= target / 4 or number >= 10 ** 9:
                break
            number *= 10 if t < target / 100 else 2
        self.number = max(1, int(number * target / max(t, 1e-9)))

    def sample(self):
        t = self.timer.timeit(self.number)
        self.samples += 1
        self.best = min(self.best, t / (self.number * self.unroll * self.per))

    @property
    def ns(self):
        return self.best * 1e9


def run_benches(benches, rounds, target):
    for b in benches:
        b.calibrate(target)
    for r in range(rounds + 1):           # round 0 is a warm-up
        for b in benches:
            if r == 0:
                b.timer.timeit(b.number)
            else:
                b.sample()


def time_registrations(make, names, batch):
    """Register `names` in batches of `batch`; return seconds per registration
    of every batch.  The garbage collector is off while timing, as in timeit."""
    per = []
    clock = time.perf_counter
    enabled = gc.isenabled()
    gc.disable()
    try:
        for start in range(0, len(names), batch):
            chunk = names[start:start + batch]
            t0 = clock()
            for n in chunk:
                make(n)
            per.append((clock() - t0) / len(chunk))
    finally:
        if enabled:
            gc.enable()
    return per


def make_simple(name, _S=SimpleDType, _F=DType.Floating):
    return _S(name, bits=8, supertype=_F)


# ---------------------------------------------------------------------------
# the stdlib Enum model of the built-in graph (what a user might write)
# ---------------------------------------------------------------------------

class EnumDType(enum.Enum):
    """The built-in graph as an Enum: value = (name, kind, bits, supertype)."""

    Any = ("Any", "category", None, None)
    Floating = ("Floating", "category", None, "Any")
    Integer = ("Integer", "category", None, "Any")
    Bool = ("Bool", "simple", 8, "Any")
    Int32 = ("Int32", "simple", 32, "Integer")
    Int8 = ("Int8", "simple", 8, "Integer")
    Float32 = ("Float32", "simple", 32, "Floating")
    Float64 = ("Float64", "simple", 64, "Floating")
    E8M0 = ("E8M0", "simple", 8, "Floating")
    E5M2 = ("E5M2", "simple", 8, "Floating")
    E4M3 = ("E4M3", "simple", 8, "Floating")
    E3M2 = ("E3M2", "simple", 6, "Floating")
    E2M3 = ("E2M3", "simple", 6, "Floating")
    E2M1 = ("E2M1", "simple", 4, "Floating")

    @classmethod
    def from_name(cls, name):
        return cls._member_map_[name]          # KeyError is a LookupError

    @classmethod
    def registered(cls):
        return tuple(cls)

    @classmethod
    def registered_simple(cls):
        return tuple(m for m in cls if m.value[1] == "simple")

    def is_subtype_of(self, other):
        return other in _ENUM_SUBTYPE_OF[self]

    def supertypes(self):
        return _ENUM_SUPERTYPES[self]

    def structure(self):
        return _ENUM_STRUCTURE[self]

    @property
    def bits(self):
        return self.value[2]

    # Pickle by name (the default pickles by value).
    if hasattr(enum, "pickle_by_enum_name"):
        __reduce_ex__ = enum.pickle_by_enum_name
    else:  # pragma: no cover - Python < 3.11
        def __reduce_ex__(self, proto):
            return getattr, (type(self), self._name_)


def _enum_tables():
    supertypes, subtype_of, structure = {}, {}, {}
    for m in EnumDType:
        chain, s = [], m.value[3]
        while s is not None:
            chain.append(EnumDType[s])
            s = EnumDType[s].value[3]
        supertypes[m] = tuple(chain)
        subtype_of[m] = frozenset(chain) | {m}
    for m in EnumDType:   # parents first: declaration order is topological
        _, kind, bits, sup = m.value
        ref = ("ref", sup, structure[EnumDType[sup]]) if sup else "none"
        structure[m] = (kind, ("bits", bits), ("supertype", ref))
    return supertypes, subtype_of, structure


_ENUM_SUPERTYPES, _ENUM_SUBTYPE_OF, _ENUM_STRUCTURE = _enum_tables()


# ---------------------------------------------------------------------------
# the benchmark list
# ---------------------------------------------------------------------------

FLOORS = {
    "floor.get": "bound dict.get hit: get(k)",
    "floor.call": "trivial C method call: x.bit_length(), x = 1",
    "floor.classattr": "plain class attribute: C.x",
    "floor.dumps": "pickle.dumps(int)",
    "floor.loads": "pickle.loads(<pickle of int>)",
    "floor.rt": "pickle.loads(pickle.dumps(int))",
    "floor.deepcopy": "copy.deepcopy(int) (atomic fast path)",
    "floor.dictkey": "d[o], o = object()",
    "floor.isinstance": "isinstance(1, int)",
}


def build_benches():
    D, S = DType, SimpleDType
    f, i8, fl, any_ = D.Float32, D.Int8, D.Floating, D.Any
    E = EnumDType
    ef, ei8, efl, eany = E.Float32, E.Int8, E.Floating, E.Any
    builtins_ = D.registered()
    names = [d.name for d in builtins_]

    nvfp4 = D.NVFP4
    dumps, loads, deepcopy = pickle.dumps, pickle.loads, copy.deepcopy

    class Plain:
        x = 1

    # Instances of user subclasses: their classes inherit the model's
    # methods (no per-class method descriptors), and one without __slots__
    # reads its own attributes through the class's own getattr.
    class UserSlots(S, abstract=False):
        __slots__ = ()

    class UserPlain(S, abstract=False):
        pass

    us = UserSlots.ensure("BenchUserSlots", bits=16, supertype=D.Floating)
    up = UserPlain.ensure("BenchUserPlain", bits=16, supertype=D.Floating)

    ns = dict(
        D=D, S=S, f=f, i8=i8, fl=fl, any_=any_, nv=nvfp4,
        fn=D.from_name, sfn=S.from_name, reg=D.registered, sreg=S.registered,
        k="Float32", m="NoSuchDType", mc="float32",
        get={n: d for n, d in zip(names, builtins_)}.get,
        d={n: d for n, d in zip(names, builtins_)},
        x=1, C=Plain, o=object(), us=us, up=up,
        do={object(): 0 for _ in range(13)},
        dk={b: j for j, b in enumerate(builtins_)},
        dumps=dumps, loads=loads, deepcopy=deepcopy,
        pint=dumps(int), pf=dumps(f), pnv=dumps(nvfp4),
        E=E, ef=ef, ei8=ei8, efl=efl, eany=eany,
        efn=E.from_name,
        pef=dumps(ef),
        de={m: j for j, m in enumerate(E)},
        payload=dumps((f.name, f.structure())),
        reconstruct=getattr(_sw_c, "_reconstruct", None),
        # An unpickled copy, as _reconstruct receives it (the registered
        # object itself would take an identity shortcut).
        fstruct=loads(dumps(f.structure())),
    )
    ns["do"][ns["o"]] = 1

    # Correctness of what is timed.
    assert ns["fn"]("Float32") is f and ns["sfn"]("Float32") is f
    assert loads(ns["pf"]) is f and loads(ns["pnv"]) is nvfp4
    assert loads(ns["pef"]) is ef and deepcopy(f) is f and deepcopy(ef) is ef
    assert f.is_subtype_of(any_) and not i8.is_subtype_of(fl)
    assert ef.is_subtype_of(eany) and not ei8.is_subtype_of(efl)
    assert E.from_name("Float32") is ef and len(E.registered()) == 14
    for fun in (ns["fn"], E.from_name):
        try:
            fun("NoSuchDType")
        except LookupError:
            pass
        else:
            raise AssertionError("from_name miss did not raise")
    if ns["reconstruct"] is not None:
        assert ns["reconstruct"]("Float32", ns["fstruct"]) is f

    miss = "try:\n    {0}(m)\nexcept LookupError:\n    pass"
    B = []

    def add(*a, **kw):
        B.append(Bench(*a, ns=ns, **kw))

    # floors
    add("floor.get", FLOORS["floor.get"], "get(k)", group="floor")
    add("floor.call", FLOORS["floor.call"], "x.bit_length()", group="floor")
    add("floor.classattr", FLOORS["floor.classattr"], "C.x", group="floor")
    add("floor.dumps", FLOORS["floor.dumps"], "dumps(int)", group="floor")
    add("floor.loads", FLOORS["floor.loads"], "loads(pint)", group="floor")
    add("floor.rt", FLOORS["floor.rt"], "loads(dumps(int))", group="floor")
    add("floor.deepcopy", FLOORS["floor.deepcopy"], "deepcopy(int)", group="floor")
    add("floor.dictkey", FLOORS["floor.dictkey"], "do[o]", group="floor")
    add("floor.isinstance", FLOORS["floor.isinstance"], "isinstance(x, int)",
        group="floor")
    # interpreter references (context, not floors)
    add("ref.get_miss", "dict.get miss (no exception): get(m)", "get(m)",
        group="reference")
    add("ref.keyerror", "d[missing], KeyError caught", miss.format("d.__getitem__"),
        group="reference")
    add("ref.getset", "a C getset attribute: x.real, x = 1", "x.real",
        group="reference")
    add("ref.payload", "pickle.loads of the payload alone: (name, structure)",
        "loads(payload)", group="reference")
    if ns["reconstruct"] is not None:
        add("ref.reconstruct", "_reconstruct(name, structure) called directly",
            "reconstruct(k, fstruct)", group="reference")
    add("ref.user_slots_method", "is_subtype_of(Any) of a user subclass with "
        "__slots__ = ()", "us.is_subtype_of(any_)", group="reference")
    add("ref.user_method", "is_subtype_of(Any) of a user subclass without "
        "__slots__", "up.is_subtype_of(any_)", group="reference")

    # stride-weave, with their Enum counterparts
    sw = "stride-weave"
    pairs = [
        ("attr", "DType.Float32", "D.Float32", "E.Float32", "floor.classattr"),
        ("from_name.hit", "DType.from_name('Float32'), pre-bound",
         "fn(k)", "efn(k)", "floor.get"),
        ("from_name.hit_user", "DType.from_name('Float32'), as written",
         "D.from_name(k)", "E.from_name(k)", "floor.get"),
        ("from_name.miss", "from_name miss, nothing close, LookupError caught, pre-bound",
         miss.format("fn"), miss.format("efn"), "floor.get"),
        ("from_name.miss_close", "from_name miss, 'float32' (suggests 'Float32'), pre-bound",
         miss.format("fn").replace("(m)", "(mc)"),
         miss.format("efn").replace("(m)", "(mc)"), "floor.get"),
        ("from_name.narrowed", "SimpleDType.from_name('Float32'), pre-bound",
         "sfn(k)", None, "floor.get"),
        ("is_subtype_of.hit", "Float32.is_subtype_of(Any)",
         "f.is_subtype_of(any_)", "ef.is_subtype_of(eany)", "floor.call"),
        ("is_subtype_of.miss", "Int8.is_subtype_of(Floating)",
         "i8.is_subtype_of(fl)", "ei8.is_subtype_of(efl)", "floor.call"),
        ("supertypes", "Float32.supertypes()", "f.supertypes()",
         "ef.supertypes()", "floor.call"),
        ("structure", "Float32.structure()", "f.structure()",
         "ef.structure()", "floor.call"),
        ("name", "Float32.name", "f.name", "ef.name", "floor.call"),
        ("bits", "Float32.bits", "f.bits", "ef.bits", "floor.call"),
        ("registered", "DType.registered()", "D.registered()",
         "E.registered()", "floor.call"),
        ("registered.narrowed", "SimpleDType.registered()", "S.registered()",
         "E.registered_simple()", "floor.call"),
        ("registered.bound", "DType.registered(), pre-bound", "reg()",
         None, "floor.call"),
        ("registered.narrowed_bound", "SimpleDType.registered(), pre-bound",
         "sreg()", None, "floor.call"),
        ("dumps", "pickle.dumps(Float32)", "dumps(f)", "dumps(ef)",
         "floor.dumps"),
        ("loads", "pickle.loads(<Float32 pickle>)", "loads(pf)",
         "loads(pef)", "floor.loads"),
        ("roundtrip", "pickle round trip, Float32", "loads(dumps(f))",
         "loads(dumps(ef))", "floor.rt"),
        ("dumps.block", "pickle.dumps(NVFP4)", "dumps(nv)", None,
         "floor.dumps"),
        ("loads.block", "pickle.loads(<NVFP4 pickle>)", "loads(pnv)",
         None, "floor.loads"),
        ("roundtrip.block", "pickle round trip, NVFP4",
         "loads(dumps(nv))", None, "floor.rt"),
        ("deepcopy", "copy.deepcopy(Float32)", "deepcopy(f)", "deepcopy(ef)",
         "floor.deepcopy"),
        ("dictkey", "dict lookup keyed by Float32: dk[f]", "dk[f]", "de[ef]",
         "floor.dictkey"),
        ("repr", "repr(Float32)", "repr(f)", "repr(ef)", "floor.call"),
        ("isinstance", "isinstance(Float32, SimpleDType)",
         "isinstance(f, S)", "isinstance(ef, E)", "floor.isinstance"),
    ]
    for key, label, stmt, estmt, floor in pairs:
        add(key, label, stmt, group=sw, floor=floor,
            enum=("enum." + key) if estmt else None)
        if estmt:
            add("enum." + key, label, estmt, group="enum", floor=floor)

    B.extend(third_party_benches(ns))
    B.extend(c_api_benches())
    return B


def third_party_benches(base):
    """numpy / torch / ml_dtypes rows, only when importable."""
    out = []
    ns = {"dumps": base["dumps"], "loads": base["loads"]}
    try:
        import numpy as np
    except Exception:
        np = None
    if np is not None:
        ns.update(npdtype=np.dtype, issub=np.issubdtype, nf32=np.dtype("float32"),
                  npf32=np.float32, npfloating=np.floating)
        ns["pnp"] = pickle.dumps(ns["nf32"])
        v = "numpy " + np.__version__
        out += [
            Bench("np.dtype", "np.dtype('float32')", "npdtype('float32')", ns,
                  v, floor="floor.get"),
            Bench("np.loads", "pickle.loads(<np.dtype('float32') pickle>)",
                  "loads(pnp)", ns, v, floor="floor.loads"),
            Bench("np.roundtrip", "pickle round trip, np.dtype('float32')",
                  "loads(dumps(nf32))", ns, v, floor="floor.rt"),
            Bench("np.issubdtype", "np.issubdtype(np.float32, np.floating)",
                  "issub(npf32, npfloating)", ns, v, floor="floor.call"),
        ]
    try:
        import torch
    except Exception:
        torch = None
    if torch is not None:
        ns.update(tf32=torch.float32)
        out.append(Bench("torch.roundtrip", "pickle round trip, torch.float32",
                         "loads(dumps(tf32))", ns, "torch " + torch.__version__,
                         floor="floor.rt"))
    try:
        import ml_dtypes
    except Exception:
        ml_dtypes = None
    if ml_dtypes is not None and np is not None:
        ns.update(mlf8=np.dtype(ml_dtypes.float8_e4m3fn))
        out.append(Bench("ml_dtypes.roundtrip",
                         "pickle round trip, np.dtype(ml_dtypes.float8_e4m3fn)",
                         "loads(dumps(mlf8))", ns,
                         "ml_dtypes " + getattr(ml_dtypes, "__version__", "?"),
                         floor="floor.rt"))
    return out


# ---------------------------------------------------------------------------
# the C API: a kind/bits check in C against the same in Python
# ---------------------------------------------------------------------------

# Why the C API rows are missing, when they are (set by c_api_benches).
C_API_SKIPPED = None


def build_c_api_example():
    """Build the documented consumer, examples/c_api (swcheck), in a
    temporary directory against stride_weave.get_include(), as the docs do;
    return the imported module, or None with C_API_SKIPPED set when there is
    no C compiler or no setuptools.  A failing build is an error."""
    global C_API_SKIPPED
    import atexit
    import importlib.machinery
    import importlib.util
    import shlex
    import shutil
    import sysconfig
    import tempfile

    import stride_weave

    cc = sysconfig.get_config_var("CC") or "cc"
    if not shlex.split(cc) or shutil.which(shlex.split(cc)[0]) is None:
        C_API_SKIPPED = "no C compiler (%r is not on PATH)" % cc
        return None
    try:
        import setuptools  # noqa: F401  (the example's setup.py needs it)
    except ImportError:
        C_API_SKIPPED = "setuptools is not installed (pip install setuptools)"
        return None
    work = tempfile.mkdtemp(prefix="sw-bench-capi-")
    atexit.register(shutil.rmtree, work, True)
    for name in ("swcheck.c", "setup.py"):
        shutil.copy(os.path.join(ROOT, "examples", "c_api", name), work)
    env = dict(os.environ)
    parent = os.path.dirname(os.path.dirname(os.path.abspath(stride_weave.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(
        [parent] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    p = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"],
                       cwd=work, env=env, capture_output=True, text=True,
                       stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        sys.stderr.write(p.stdout + p.stderr)
        raise RuntimeError("building examples/c_api failed (exit %d)" % p.returncode)
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    path = next(os.path.join(work, f) for f in os.listdir(work) if f.endswith(suffixes))
    spec = importlib.util.spec_from_file_location("swcheck", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def c_api_benches():
    """The check a kernel makes before dispatching ("a floating simple dtype
    of at most 8 bits"), through the C API (swcheck.is_narrow_float and
    count_narrow_floats, docs/c-api.md) and as the same Python expression:
    once per call from Python, and per descriptor over a list."""
    swcheck = build_c_api_example()
    if swcheck is None:
        return []
    D, S, fl = DType, SimpleDType, DType.Floating
    mixed = list(D.registered())
    mixed = (mixed * (1000 // len(mixed) + 1))[:1000]
    ns = dict(chk=swcheck.is_narrow_float, cnt=swcheck.count_narrow_floats,
              S=S, fl=fl, e4=D.E4M3, L=mixed)

    def py_check(d):
        return isinstance(d, S) and d.bits <= 8 and d.is_subtype_of(fl)

    # Correctness of what is timed: the same answers.
    for d in mixed + [D.E4M3, 1, None, "E4M3"]:
        assert swcheck.is_narrow_float(d) == py_check(d), d
    assert swcheck.count_narrow_floats(mixed) == sum(1 for d in mixed if py_check(d))

    python = ("isinstance(e4, S) and e4.bits <= 8 and e4.is_subtype_of(fl)")
    loop = ("sum(1 for d in L if isinstance(d, S) and d.bits <= 8 "
            "and d.is_subtype_of(fl))")
    g = "C API"
    return [
        Bench("capi.check", "C API: swcheck.is_narrow_float(E4M3), one call",
              "chk(e4)", ns, g, floor="floor.call"),
        Bench("capi.check.py", "Python: the same check on E4M3 (isinstance, "
              "bits, is_subtype_of)", python, ns, g, floor="floor.call"),
        Bench("capi.loop", "C API: count_narrow_floats(list of 1000), per item",
              "cnt(L)", ns, g, unroll=1, per=len(mixed)),
        Bench("capi.loop.py", "Python: the same check in a generator over the "
              "list, per item", loop, ns, g, unroll=1, per=len(mixed)),
    ]


def c_api_summary(by):
    """One sentence on the C API rows, or why they are missing."""
    if "capi.check" not in by:
        return "C API rows skipped: %s." % C_API_SKIPPED
    c, p = by["capi.check"].ns, by["capi.check.py"].ns
    lc, lp = by["capi.loop"].ns, by["capi.loop.py"].ns
    return ("C API (docs/c-api.md): the kind/bits check costs %s ns per "
            "descriptor in a C loop against %s ns in Python (%.1fx faster); "
            "one call from Python costs %s ns against %s ns for the Python "
            "expression (%.1fx)." % (fmt_ns(lc), fmt_ns(lp), lp / lc,
                                     fmt_ns(c), fmt_ns(p), p / c))


# ---------------------------------------------------------------------------
# the scaling section (child processes)
# ---------------------------------------------------------------------------

def ext_names(n, prefix="Ext"):
    return ["%s%07d" % (prefix, j) for j in range(n)]


def child_timing(size, rounds, target):
    names = ext_names(size)
    n_all, n_simple = len(DType.registered()), len(SimpleDType.registered())
    batch = 100
    per = time_registrations(make_simple, names, batch)
    tail = per[-min(len(per), 10):]          # the last 1000 registrations
    # registered(): the first call after a registration rebuilds the cache.
    clock = time.perf_counter_ns
    t0 = clock()
    everything = DType.registered()
    rebuild = clock() - t0
    t0 = clock()
    simple = SimpleDType.registered()
    rebuild_narrowed = clock() - t0
    assert len(everything) == size + n_all and len(simple) == size + n_simple
    k = names[size // 2]
    target_d = DType.from_name(k)
    ns = dict(D=DType, S=SimpleDType, fn=DType.from_name, k=k, x=1,
              reg=DType.registered,
              get={n: DType.from_name(n) for n in names}.get)
    assert ns["get"](k) is target_d
    benches = [
        Bench("floor.get", FLOORS["floor.get"] + ", same size", "get(k)", ns, "floor"),
        Bench("floor.call", FLOORS["floor.call"], "x.bit_length()", ns, "floor"),
        Bench("from_name", "from_name(extension)", "fn(k)", ns, "scale",
              floor="floor.get"),
        Bench("registered", "DType.registered()", "D.registered()", ns, "scale",
              floor="floor.call"),
        Bench("registered.narrowed", "SimpleDType.registered()",
              "S.registered()", ns, "scale", floor="floor.call"),
        Bench("registered.bound", "DType.registered(), pre-bound",
              "reg()", ns, "scale", floor="floor.call"),
    ]
    run_benches(benches, rounds, target)
    res = {b.key: b.ns for b in benches}
    res.update(
        size=size,
        reg_best_ns=min(tail) * 1e9,
        reg_mean_ns=sum(tail) / len(tail) * 1e9,
        reg_all_mean_ns=sum(per) / len(per) * 1e9,
        registered_rebuild_ns=rebuild,
        registered_narrowed_rebuild_ns=rebuild_narrowed,
    )
    return res


def child_memory(size):
    make, F = SimpleDType, DType.Floating
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for j in range(size):
        make("Ext%07d" % j, bits=8, supertype=F)   # the name is counted too
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    d = DType.from_name("Ext%07d" % (size - 1))
    other = DType.from_name("Ext%07d" % (size - 2))
    shared = _reach(other)
    owned = {k: o for k, o in _reach(d).items() if k not in shared}
    return dict(size=size, bytes_per=(after - before) / size,
                sizeof_descriptor=sys.getsizeof(d),
                sizeof_name=sys.getsizeof(d.name),
                owned_objects=len(owned),
                owned_bytes=sum(sys.getsizeof(o) for o in owned.values()),
                owned_types=sorted(_count(owned.values()).items()))


def _reach(root):
    """Objects reachable from descriptor `root` (by id), stopping at classes
    and at other descriptors (those are shared, not owned)."""
    seen, todo = {}, [root]
    while todo:
        o = todo.pop()
        if id(o) in seen:
            continue
        seen[id(o)] = o
        for r in gc.get_referents(o):
            if isinstance(r, type) or (isinstance(r, DType) and r is not root):
                continue
            todo.append(r)
    return seen


def _count(objs):
    out = {}
    for o in objs:
        out[type(o).__name__] = out.get(type(o).__name__, 0) + 1
    return out


def run_child(args):
    if args.child == "timing":
        out = child_timing(args.size, args.rounds, args.target_ms / 1000)
    else:
        out = child_memory(args.size)
    json.dump(out, sys.stdout)


def spawn(kind, size, rounds, target_ms):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", kind,
           "--size", str(size), "--rounds", str(rounds),
           "--target-ms", str(target_ms)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        raise RuntimeError("benchmark child %s %d failed (exit %d)"
                           % (kind, size, p.returncode))
    return json.loads(p.stdout)


# ---------------------------------------------------------------------------
# reporting
# ---------------------------------------------------------------------------

def machine_info():
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        cpu = platform.processor() or "unknown"
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = os.cpu_count()
    try:
        from importlib.metadata import version
        swv = version("stride-weave")
    except Exception:
        swv = "?"
    return {
        "platform": platform.platform(),
        "cpu": cpu,
        "cores": "%s logical (%s usable by this process)" % (os.cpu_count(), usable),
        "python": "%s %s (%s)" % (platform.python_implementation(),
                                  platform.python_version(),
                                  " ".join(platform.python_build())),
        "compiler": platform.python_compiler(),
        "stride_weave": swv,
        "date": datetime.datetime.now(datetime.timezone.utc)
                .strftime("%Y-%m-%d %H:%M UTC"),
    }


def fmt_ns(v):
    if v is None:
        return "—"
    if v >= 100000:
        return "{:,.0f}".format(v)
    if v >= 100:
        return "%.0f" % v
    return "%.1f" % v


def fmt_ratio(v):
    return "—" if v is None else "%.2fx" % v


def table_rows(benches):
    by = {b.key: b for b in benches}
    rows = []
    for b in benches:
        if b.group == "enum":
            continue
        floor = by.get(b.floor)
        enum_b = by.get(b.enum) if b.enum else None
        rows.append((
            b.group, b.label, b.ns,
            b.floor or "",
            b.ns / floor.ns if floor else None,
            enum_b.ns if enum_b else None,
            b.ns / enum_b.ns if enum_b else None,
        ))
    return rows


def under_2x_at_100k(T, largest, key, what):
    """Append the target "<what> under 2x the floor at 100k entries",
    measured in the largest scaling child."""
    ok_size = largest["size"] >= 100000
    ratio = largest[key] / largest["floor.call"]
    T.append(("%s under 2x the floor at 100k entries" % what,
              "%.2fx at %s entries (%s ns)%s"
              % (ratio, "{:,}".format(largest["size"]), fmt_ns(largest[key]),
                 "" if ok_size else "; 100k not measured in --quick"),
              (ratio < 2.0) if ok_size else None))


def evaluate_targets(by, reg, scale, memory, quick):
    """[(target, measured text, met?)] — met is None when not measured."""
    T = []

    def r(a, b):
        return by[a].ns / by[b].ns

    for key, what in [("from_name.hit", "from_name hit (pre-bound)"),
                      ("from_name.hit_user", "from_name hit (as written)"),
                      ("from_name.narrowed", "from_name hit, class-narrowed")]:
        v = r(key, "floor.get")
        T.append(("%s within 2x of bound dict.get" % what,
                  "%.2fx (%s ns vs %s ns)" % (v, fmt_ns(by[key].ns),
                                              fmt_ns(by["floor.get"].ns)),
                  v <= 2.0))
    for key, what in [("is_subtype_of.hit", "is_subtype_of (hit)"),
                      ("is_subtype_of.miss", "is_subtype_of (miss)"),
                      ("supertypes", "supertypes()"), ("name", "name"),
                      ("bits", "bits"), ("structure", "structure()")]:
        v = r(key, "floor.call")
        T.append(("%s within 1.5x of a trivial C method call" % what,
                  "%.2fx (%s ns vs %s ns)" % (v, fmt_ns(by[key].ns),
                                              fmt_ns(by["floor.call"].ns)),
                  v <= 1.5))
    # registered(): constant time when nothing was registered, < 2x floor at 100k
    main_r = {k: r(k, "floor.call") for k in ("registered", "registered.narrowed")}
    largest = scale[-1] if scale else None
    for key, what in [("registered", "registered()"),
                      ("registered.narrowed", "SimpleDType.registered()")]:
        if largest is None:
            T.append(("%s constant time when nothing was registered" % what,
                      "not measured", None))
            continue
        big = largest[key] / largest["floor.call"]
        v = big / main_r[key]
        T.append(("%s constant time when nothing was registered since the last "
                  "call (floor ratio with %s extensions registered within 1.3x "
                  "of the ratio with %d descriptors)"
                  % (what, "{:,}".format(largest["size"]), reg["main_entries"]),
                  "%.2fx (%.2fx floor at %s extensions vs %.2fx at %d; first "
                  "call after a registration: %s ns)"
                  % (v, big, "{:,}".format(largest["size"]), main_r[key],
                     reg["main_entries"],
                     fmt_ns(largest[key.replace(".", "_") + "_rebuild_ns"])),
                  v <= 1.3))
        if key == "registered":
            under_2x_at_100k(T, largest, "registered.bound",
                             "registered() (pre-bound)")
        under_2x_at_100k(T, largest, key, what)
    v = r("loads", "floor.loads")
    T.append(("pickle.loads of a built-in simple descriptor within 1.5x of "
              "pickle.loads of a builtin global",
              "%.2fx (%s ns vs %s ns)" % (v, fmt_ns(by["loads"].ns),
                                          fmt_ns(by["floor.loads"].ns)),
              v <= 1.5))
    v = r("roundtrip.block", "roundtrip")
    T.append(("block-scaled round trip within 2x of a simple one "
              "(NVFP4)",
              "%.2fx (%s ns vs %s ns)" % (v, fmt_ns(by["roundtrip.block"].ns),
                                          fmt_ns(by["roundtrip"].ns)),
              v <= 2.0))
    T.append(("registering a SimpleDType under 2 µs",
              "%s ns (best batch of 100), %s ns (mean)"
              % (fmt_ns(reg["best_ns"]), fmt_ns(reg["mean_ns"])),
              reg["best_ns"] < 2000))
    if len(scale) >= 2:
        a, b = scale[0], scale[-1]
        v = b["reg_best_ns"] / a["reg_best_ns"]
        T.append(("cost per registration flat from 1k to 100k (ratio at most 1.3)",
                  "%.2fx (%s ns at %s, %s ns at %s)"
                  % (v, fmt_ns(b["reg_best_ns"]), "{:,}".format(b["size"]),
                     fmt_ns(a["reg_best_ns"]), "{:,}".format(a["size"])),
                  v <= 1.3))
    else:
        T.append(("cost per registration flat from 1k to 100k (ratio at most 1.3)",
                  "not measured in --quick (1k only)", None))
    if memory:
        worst = max(memory, key=lambda m: m["bytes_per"])
        T.append(("memory per registered simple descriptor under 250 bytes "
                  "(name and registry slot included)",
                  "%.0f B at worst (%s entries); %s"
                  % (worst["bytes_per"], "{:,}".format(worst["size"]),
                     ", ".join("%.0f B at %s" % (m["bytes_per"],
                                                  "{:,}".format(m["size"]))
                               for m in memory)),
                  worst["bytes_per"] < 250))
    return T


def status(met):
    return {True: "yes", False: "no", None: "not measured"}[met]


def render_text(info, mode, rows, reg, scale, memory, targets):
    out = []
    out.append("stride-weave benchmarks (%s)" % mode)
    for k in ("python", "platform", "cpu", "cores", "stride_weave"):
        out.append("  %-12s %s" % (k, info[k]))
    out.append("  " + BLOCK_SCALED_NOTE)
    out.append("")
    hdr = ("%-13s %-58s %10s  %-17s %8s %10s %8s"
           % ("group", "operation", "ns/op", "floor", "x floor", "Enum ns",
              "x Enum"))
    out.append(hdr)
    out.append("-" * len(hdr))
    for g, label, ns_, floor, rf, ens, re in rows:
        out.append("%-13s %-58s %10s  %-17s %8s %10s %8s"
                   % (g[:13], label[:58], fmt_ns(ns_), floor, fmt_ratio(rf),
                      fmt_ns(ens), fmt_ratio(re)))
    out.append("%-13s %-58s %10s  %-17s %8s %10s %8s"
               % ("stride-weave", "registering a new SimpleDType (best of %d "
                  "batches of 100)" % reg["batches"], fmt_ns(reg["best_ns"]),
                  "", "—", "—", "—"))
    out.append("")
    out.append(info["c_api"])
    out.append("")
    out.append("Scaling (fresh child processes per size; gc off while timing)")
    out.extend(scale_lines(scale, memory, md=False))
    out.append("")
    out.append("Bounds (ratios from this run; does each hold?)")
    for t, measured, met in targets:
        out.append("  [%s] %s: %s" % (status(met), t, measured))
    return "\n".join(out)


def scale_lines(scale, memory, md):
    mem = {m["size"]: m for m in memory}
    cols = ["extensions registered", "ns/registration (best batch)",
            "ns/registration (mean, last 1000)", "registered() cached ns",
            "x floor", "SimpleDType.registered() cached ns", "x floor",
            "registered() first call after registering ns",
            "from_name(ext) ns", "x dict.get", "bytes/descriptor"]
    rows = []
    for s in scale:
        m = mem.get(s["size"])
        rows.append([
            "{:,}".format(s["size"]),
            fmt_ns(s["reg_best_ns"]), fmt_ns(s["reg_mean_ns"]),
            fmt_ns(s["registered"]),
            fmt_ratio(s["registered"] / s["floor.call"]),
            fmt_ns(s["registered.narrowed"]),
            fmt_ratio(s["registered.narrowed"] / s["floor.call"]),
            fmt_ns(s["registered_rebuild_ns"]),
            fmt_ns(s["from_name"]),
            fmt_ratio(s["from_name"] / s["floor.get"]),
            "%.0f" % m["bytes_per"] if m else "—",
        ])
    if md:
        out = ["| " + " | ".join(cols) + " |",
               "|" + "|".join(["---"] + ["---:"] * (len(cols) - 1)) + "|"]
        out += ["| " + " | ".join(r) + " |" for r in rows]
        return out
    out = []
    for r in rows:
        out.append("  " + "; ".join("%s: %s" % (c, v) for c, v in zip(cols, r)))
    return out


def render_markdown(info, mode, argv, rows, reg, scale, memory, targets, by):
    L = []
    L.append("# Performance")
    L.append("")
    L.append("<!-- Generated by `python benchmarks/run.py --write-docs`; "
             "do not edit by hand. -->")
    L.append("")
    L.append("Every number on this page comes from one run of "
             "`python %s` on the machine below. Figures are "
             "nanoseconds per operation; each is also given as a ratio to a "
             "floor measured in the same run (and to a stdlib `enum.Enum` "
             "model of the same graph where one exists), so the ratios "
             "survive a noisy machine better than the absolute numbers."
             % " ".join(["benchmarks/run.py"] + argv))
    L.append("")
    L.append("## Machine and interpreter")
    L.append("")
    for k, label in [("date", "Measured"), ("python", "Interpreter"),
                     ("compiler", "Built with"), ("platform", "Platform"),
                     ("cpu", "CPU"), ("cores", "Cores"),
                     ("stride_weave", "stride-weave")]:
        L.append("- %s: %s" % (label, info[k]))
    L.append("- Mode: %s" % mode)
    L.append("")
    L.append("## Method")
    L.append("")
    L.append(
        "`benchmarks/run.py` uses `timeit` only. Operands are local names of "
        "the timing function; each statement is unrolled %d times per loop "
        "iteration; the garbage collector is off while timing (as in "
        "`timeit`). Each benchmark is calibrated (which warms it up) so a "
        "sample takes about %s ms, then all benchmarks are sampled in "
        "interleaved rounds (%d counted rounds after one warm-up round) and "
        "the best sample is reported. Registration is timed in batches of "
        "100 new names, best batch reported. The scaling section runs each "
        "size in fresh child processes: one times registrations (in batches "
        "of 100; the figure is over the last 1,000, i.e. while the registry "
        "grows to the stated size) and then the lookups, with floors "
        "re-measured in that process; the other counts memory with "
        "`tracemalloc` while registering that many descriptors from an "
        "empty registry (name strings created inside the traced region)."
        % (UNROLL, info["target_ms"], info["rounds"]))
    L.append("")
    L.append("Floors (the interpreter's own cost for the same shape of "
             "operation):")
    L.append("")
    for k, v in FLOORS.items():
        L.append("- `%s`: %s (%s ns)" % (k, v, fmt_ns(by[k].ns)))
    L.append("")
    L.append("The Enum model (`EnumDType` in `benchmarks/run.py`) is what a "
             "user might write instead: the 14 built-in categories and simple "
             "dtypes as members, a "
             "precomputed hierarchy table for `supertypes()` and "
             "`is_subtype_of`, a precomputed `structure()`, `from_name` via "
             "`_member_map_`, `registered()` as `tuple(cls)`, and pickling by "
             "name (`enum.pickle_by_enum_name`).")
    L.append("")
    L.append(BLOCK_SCALED_NOTE)
    L.append("")
    L.append("## Operations")
    L.append("")
    L.append("| group | operation | ns/op | floor | × floor | Enum ns/op | × Enum |")
    L.append("|---|---|---:|---|---:|---:|---:|")
    for g, label, ns_, floor, rf, ens, re in rows:
        L.append("| %s | %s | %s | %s | %s | %s | %s |"
                 % (g, label.replace("|", "\\|"), fmt_ns(ns_),
                    "`%s`" % floor if floor else "", fmt_ratio(rf),
                    fmt_ns(ens), fmt_ratio(re)))
    L.append("| stride-weave | registering a new SimpleDType (best of %d "
             "batches of 100; mean %s ns) | %s | | — | — | — |"
             % (reg["batches"], fmt_ns(reg["mean_ns"]), fmt_ns(reg["best_ns"])))
    L.append("")
    L.append("Rows in the `reference` group are not floors: they show what "
             "the interpreter itself spends on parts of an operation (raising "
             "and catching a `KeyError`; unpickling the `(name, structure)` "
             "payload a descriptor pickle carries; calling the reconstructor "
             "directly).")
    L.append("")
    L.append(info["c_api"] + " The C API rows build the documented example "
             "(`examples/c_api`) with setuptools; \"per item\" rows divide "
             "one pass over a list of 1,000 descriptors (the registered ones, "
             "repeated) by 1,000.")
    L.append("")
    L.append("## Scaling with the number of registered descriptors")
    L.append("")
    L.extend(scale_lines(scale, memory, md=True))
    L.append("")
    L.append("`x floor` is against a trivial C method call and `x dict.get` "
             "against a bound `dict.get` on a dict of the same size, both "
             "measured in the same child process.")
    if memory:
        m = memory[-1]
        L.append("")
        L.append("Memory at %s: %.0f bytes per descriptor (tracemalloc). Of "
                 "these, %d bytes are objects owned by one descriptor and "
                 "shared with no other (found by walking `gc.get_referents` "
                 "from two extensions with the same supertype): the "
                 "descriptor object (%d B), its name (%d B), and %d more "
                 "strings and %d tuples (%d B): the structure tuples with "
                 "their tag strings, and the `supertypes()` tuple. The rest "
                 "(about %.0f B) is the registry dict entry, the order-array "
                 "slot and allocator rounding."
                 % ("{:,}".format(m["size"]), m["bytes_per"], m["owned_bytes"],
                    m["sizeof_descriptor"], m["sizeof_name"],
                    dict(m["owned_types"]).get("str", 1) - 1,
                    dict(m["owned_types"]).get("tuple", 0),
                    m["owned_bytes"] - m["sizeof_descriptor"] - m["sizeof_name"],
                    m["bytes_per"] - m["owned_bytes"]))
    L.append("")
    L.append("## Bounds")
    L.append("")
    L.append("Each bound compares an operation with a reference measured in the "
             "same run.")
    L.append("")
    L.append("| bound | measured | holds |")
    L.append("|---|---|---|")
    for t, measured, met in targets:
        L.append("| %s | %s | %s |" % (t, measured, status(met)))
    L.append("")
    missed = [t for t in targets if t[2] is False]
    L.append("%d of %d bounds hold, %d do not, %d not measured in this mode."
             % (sum(1 for t in targets if t[2]), len(targets), len(missed),
                sum(1 for t in targets if t[2] is None)))
    if missed:
        L.append("")
        L.append("### Where a bound does not hold")
        L.append("")
        L.append("Each is stated above with its measured ratio; "
                 "where this run measured what the interpreter itself "
                 "charges for the same shape of operation, it is given here:")
        L.append("")
        L.append("- `name` and `bits` are C getset attributes: CPython 3.11 to "
                 "3.13 specialize attribute loads of slots and Python "
                 "properties, not of C getsets, so any C getset costs about "
                 "what `x.real` on an int costs here (%s ns, %.2fx the C call "
                 "floor); `name` is %.2fx and `bits` %.2fx of `x.real`. They "
                 "stay getsets because a descriptor leaked from a failed "
                 "`__init__` must raise `ValueError` on every accessor, which "
                 "a slot member cannot do;"
                 % (fmt_ns(by["ref.getset"].ns),
                    by["ref.getset"].ns / by["floor.call"].ns,
                    by["name"].ns / by["ref.getset"].ns,
                    by["bits"].ns / by["ref.getset"].ns))
        L.append("- `DType.from_name(k)` as written costs %s ns against %s ns "
                 "pre-bound: the difference is the load of a class attribute "
                 "(`C.x` costs %s ns here), which the pre-bound `dict.get` "
                 "floor does not pay;"
                 % (fmt_ns(by["from_name.hit_user"].ns),
                    fmt_ns(by["from_name.hit"].ns),
                    fmt_ns(by["floor.classattr"].ns)))
        L.append("- `DType.registered()` as written costs %s ns against %s ns "
                 "pre-bound (%.2fx the C call floor): the same class "
                 "attribute load; what the call itself does is return the "
                 "cached tuple after one version check, whatever the number "
                 "of registered descriptors (see the scaling section);"
                 % (fmt_ns(by["registered"].ns),
                    fmt_ns(by["registered.bound"].ns),
                    by["registered.bound"].ns / by["floor.call"].ns))
        L.append("- unpickling the `(name, structure)` payload alone costs %s "
                 "ns (%.2fx `pickle.loads` of `int`), because a descriptor "
                 "pickle carries its structure by design (docs/design.md, "
                 "Pickling; the receiving process compares it); "
                 "`_reconstruct` itself costs %s ns;"
                 % (fmt_ns(by["ref.payload"].ns),
                    by["ref.payload"].ns / by["floor.loads"].ns,
                    fmt_ns(by["ref.reconstruct"].ns)
                    if "ref.reconstruct" in by else "—"))
        if memory and max(m["bytes_per"] for m in memory) >= 250:
            m = memory[-1]
            L.append("- memory: %d of the %.0f bytes per descriptor are objects "
                     "no other descriptor shares (see the scaling section); the "
                     "descriptor object and its name alone are %d B."
                     % (m["owned_bytes"], m["bytes_per"],
                        m["sizeof_descriptor"] + m["sizeof_name"]))
    L.append("")
    L.append("### Lookup misses")
    L.append("")
    L.append("A hit costs %s ns (%.2fx `dict.get`): the lookup alone, because "
             "suggestions are built only after a miss. A miss raises "
             "`LookupError` with the closest registered names: %s ns when a "
             "case-insensitive match is found (`'float32'`, which suggests "
             "`'Float32'`), %s ns when nothing is close (`difflib` compares the "
             "name with every candidate, at most %s of them on a large "
             "registry). For comparison, a caught `KeyError` from a plain dict "
             "costs %s ns (%.2fx `dict.get`)."
             % (fmt_ns(by["from_name.hit"].ns),
                by["from_name.hit"].ns / by["floor.get"].ns,
                fmt_ns(by["from_name.miss_close"].ns),
                fmt_ns(by["from_name.miss"].ns), "{:,}".format(256 + 4096),
                fmt_ns(by["ref.keyerror"].ns),
                by["ref.keyerror"].ns / by["floor.get"].ns))
    L.append("")
    return "\n".join(L)


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="a few seconds: small samples, scaling at 1k only")
    ap.add_argument("--write-docs", action="store_true",
                    help="write the tables to docs/performance.md")
    ap.add_argument("--rounds", type=int, default=None,
                    help="counted rounds per benchmark (default 15, quick 3)")
    ap.add_argument("--target-ms", type=float, default=None,
                    help="duration of one sample (default 10, quick 1)")
    ap.add_argument("--child", choices=("timing", "memory"),
                    help=argparse.SUPPRESS)
    ap.add_argument("--size", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.rounds is None:
        args.rounds = 3 if args.quick else 15
    if args.target_ms is None:
        args.target_ms = 1.0 if args.quick else 10.0
    if args.child:
        return run_child(args)

    t_start = time.perf_counter()
    mode = "quick" if args.quick else "full"
    sizes = [1000] if args.quick else [1000, 10000, 100000]

    benches = build_benches()
    main_entries = len(DType.registered())
    run_benches(benches, args.rounds, args.target_ms / 1000)
    by = {b.key: b for b in benches}

    # Registration in this process, after everything else (it grows the
    # registry): batches of 100 fresh names, best batch.
    batches = 5 if args.quick else 20
    per = time_registrations(make_simple, ext_names(100 * batches, "Main"), 100)
    reg = dict(best_ns=min(per) * 1e9, mean_ns=sum(per) / len(per) * 1e9,
               batches=batches, main_entries=main_entries)

    # Scaling: each size in fresh child processes.
    child_rounds = 3 if args.quick else 7
    scale = [spawn("timing", n, child_rounds, args.target_ms) for n in sizes]
    memory = [spawn("memory", n, 1, 1) for n in sizes]

    rows = table_rows(benches)
    targets = evaluate_targets(by, reg, scale, memory, args.quick)
    info = machine_info()
    info.update(rounds=args.rounds, target_ms="%g" % args.target_ms,
                c_api=c_api_summary(by))
    print(render_text(info, mode, rows, reg, scale, memory, targets))
    if args.write_docs:
        flags = [a for a in (argv if argv is not None else sys.argv[1:])]
        md = render_markdown(info, mode, flags, rows, reg, scale, memory,
                             targets, by)
        with open(DOCS, "w", encoding="utf-8") as fh:
            fh.write(md)
        print("\nwrote %s" % os.path.relpath(DOCS))
    print("\nwall time %.1f s" % (time.perf_counter() - t_start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
