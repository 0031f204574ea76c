"""The benchmark cases: what is measured, and against what.

Each case is a ``harness.Bench`` with the floor it is compared with (the
interpreter's own cost for the same shape of operation) and, where one exists,
its counterpart in a stdlib ``enum.Enum`` model of the built-in graph
(``EnumDType``).  Also here: the registration and scaling cases (run by the
child processes), the C API example built and timed against the same check
in Python, and the optional numpy / torch / ml_dtypes baselines, imported
only when the cases are built and measured only when importable.
"""

import abc
import copy
import enum
import gc
import os
import pickle
import subprocess
import sys
import time

from stride_weave.dtypes import DType, RepresentationRule, SimpleDType

from harness import Bench, run_benches, time_registrations, traced_bytes

try:
    from stride_weave import _dtypes as _sw_c
except ImportError:  # pragma: no cover - the public module imports it
    _sw_c = None

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

BLOCK_SCALED_NOTE = (
    "The block-scaled rows use the built-in NVFP4 (an E2M1 element plane, "
    "E4M3 scales per 16 elements and one Float32 scale per tensor)."
)



class _BenchRule(RepresentationRule):
    """A user rule class: isinstance() against RepresentationRule."""

    def validate(self, context):
        return None


def make_simple(name, _S=SimpleDType, _F=DType.Floating):
    """Register one new 8-bit floating SimpleDType called `name`."""
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
    "floor.slot": "a plain __slots__ attribute read: y.name",
    "floor.miss": "hasattr(y, 'nope'), y a plain __slots__ object: a miss",
}


def build_benches():
    """The benchmarks of the main process: floors, interpreter references,
    each stride-weave operation with its Enum counterpart, then the optional
    third-party and C API rows.  Asserts first that every timed statement
    gives the right answer."""
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

    class PlainSub(Plain):
        pass

    class Slotted:
        __slots__ = ("name",)

        def __init__(self, name):
            self.name = name

    # What the interpreter charges any class whose metaclass is not exactly
    # `type`: isinstance() looks up and calls __instancecheck__. The cheapest
    # such check is a C one (type's own, re-exposed on a metaclass).
    class CheckMeta(type):
        __instancecheck__ = type.__instancecheck__

    class Checked(metaclass=CheckMeta):
        pass

    class CheckedSub(Checked):
        pass

    # A C function stored on a class and called as written, on a class
    # under type and on one under a metaclass: the difference is what the
    # interpreter charges for the metaclass.
    class TypeHeld:
        m = len

    class MetaHeld(metaclass=CheckMeta):
        m = len

    # What the interpreter charges any class with __getattr__ (the model
    # has one where name and bits are member slots): an int subclass keeps
    # int's C getset `real`, and its misses call __getattr__.
    class WithGetattr(int):
        __slots__ = ()

        def __getattr__(self, attr):
            raise AttributeError(attr)

    class Abstract(abc.ABC):
        pass

    class AbstractSub(Abstract):
        pass

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
        k="Float32", m="NoSuchDType", mc="float32", mr="Flaot32",
        get={n: d for n, d in zip(names, builtins_)}.get,
        d={n: d for n, d in zip(names, builtins_)},
        x=1, C=Plain, o=object(), K=Checked, ks=CheckedSub(), an="nope",
        xg=WithGetattr(1),
        sl=Slotted("Float32"), TH=TypeHeld, MH=MetaHeld, e=(),
        A=Abstract, abs_=AbstractSub(), us=us, up=up, t=True, ps=PlainSub(),
        U=UserSlots, R=RepresentationRule, rule=_BenchRule(),
        do={object(): 0 for _ in range(13)},
        dk={b: j for j, b in enumerate(builtins_)},
        dumps=dumps, loads=loads, deepcopy=deepcopy,
        pint=dumps(int), pf=dumps(f), pnv=dumps(nvfp4),
        E=E, ef=ef, ei8=ei8, efl=efl, eany=eany,
        efn=E.from_name,
        pef=dumps(ef),
        de={m: j for j, m in enumerate(E)},
        payload=dumps(f.__reduce__()[1]),
        reconstruct=getattr(_sw_c, "_reconstruct", None),
        # An unpickled copy, as _reconstruct receives it (the registered
        # object itself would take an identity shortcut).
        fstruct=loads(dumps(f.structure())),
    )
    ns["do"][ns["o"]] = 1
    assert isinstance(ns["ps"], Plain) and isinstance(us, S)
    assert isinstance(ns["ks"], Checked) and isinstance(ns["abs_"], Abstract)
    assert isinstance(ns["rule"], RepresentationRule) and issubclass(UserSlots, D)

    # Correctness of what is timed.
    assert ns["fn"]("Float32") is f and ns["sfn"]("Float32") is f
    assert loads(ns["pf"]) is f and loads(ns["pnv"]) is nvfp4
    assert loads(ns["pef"]) is ef and deepcopy(f) is f and deepcopy(ef) is ef
    assert f.is_subtype_of(any_) and not i8.is_subtype_of(fl)
    assert f.supertype is fl and nvfp4.element is D.E2M1
    assert not hasattr(f, ns["an"]) and not hasattr(ns["sl"], ns["an"])
    assert ns["xg"].real == 1 and not hasattr(ns["xg"], ns["an"])
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
    # A miss whose message is read: the suggestions are made then.
    read = "try:\n    {0}({1})\nexcept LookupError as x_:\n    str(x_)"
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
    add("floor.slot", FLOORS["floor.slot"], "sl.name", group="floor")
    add("floor.miss", FLOORS["floor.miss"], "hasattr(sl, an)", group="floor")
    # interpreter references (context, not floors)
    add("ref.get_miss", "dict.get miss (no exception): get(m)", "get(m)",
        group="reference")
    add("ref.keyerror", "d[missing], KeyError caught", miss.format("d.__getitem__"),
        group="reference")
    add("ref.keyerror_subscript", "d[k] on a small dict, missing key, KeyError "
        "caught", "try:\n    d[m]\nexcept KeyError:\n    pass", group="reference")
    add("ref.isinstance_sub", "isinstance(y, P): a plain class, y an instance "
        "of a plain subclass", "isinstance(ps, C)", group="reference")
    add("ref.isinstance_miss", "isinstance(1, P): a plain class, a miss "
        "(type's check then reads __class__)", "isinstance(x, C)",
        group="reference")
    add("ref.isinstance_meta", "isinstance(y, K): K's metaclass has a C "
        "__instancecheck__ (type's own), y an instance of a subclass",
        "isinstance(ks, K)", group="reference")
    add("ref.type_classcall", "T.m(()) as written, m = len on a class "
        "under type", "TH.m(e)", group="reference")
    add("ref.meta_classcall", "K.m(()) as written, m = len on a class "
        "under a metaclass", "MH.m(e)", group="reference")
    add("ref.isinstance_abc", "isinstance(y, A): A an abc.ABC, y an instance "
        "of a subclass", "isinstance(abs_, A)", group="reference")
    add("ref.getset", "a C getset attribute: x.real, x = 1", "x.real",
        group="reference")
    add("ref.getset_hook", "the same C getset on a class with __getattr__: "
        "y.real, y an int subclass", "xg.real", group="reference")
    add("ref.getattr_miss", "hasattr(y, 'nope'), y of a class whose "
        "__getattr__ (a Python function) raises AttributeError",
        "hasattr(xg, an)", group="reference")
    add("ref.cached_str", "repr(True): a repr that returns a cached string",
        "repr(t)", group="reference")
    add("ref.payload", "pickle.loads of the payload alone: the record",
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
        ("from_name.miss_close", "from_name miss, 'float32' (message not read), pre-bound",
         miss.format("fn").replace("(m)", "(mc)"),
         miss.format("efn").replace("(m)", "(mc)"), "floor.get"),
        ("from_name.miss_read_case", "from_name miss and str() of it, 'float32' "
         "(suggests 'Float32', equal ignoring case), pre-bound",
         read.format("fn", "mc"), read.format("efn", "mc"), "floor.get"),
        ("from_name.miss_read_close", "from_name miss and str() of it, 'Flaot32' "
         "(suggests 'Float32' by similarity), pre-bound",
         read.format("fn", "mr"), read.format("efn", "mr"), "floor.get"),
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
        ("name", "Float32.name", "f.name", "ef.name", "floor.slot"),
        ("bits", "Float32.bits", "f.bits", "ef.bits", "floor.slot"),
        ("supertype", "Float32.supertype", "f.supertype", None, "floor.call"),
        ("element", "NVFP4.element", "nv.element", None, "floor.call"),
        ("attr.miss", "hasattr(Float32, 'nope'): a miss", "hasattr(f, an)",
         None, "floor.miss"),
        ("registered", "DType.registered()", "D.registered()",
         "E.registered()", "floor.call"),
        ("registered.narrowed", "SimpleDType.registered()", "S.registered()",
         "E.registered_simple()", "floor.call"),
        ("registered.bound", "DType.registered(), pre-bound", "reg()",
         None, "floor.call"),
        ("registered.narrowed_bound", "SimpleDType.registered(), pre-bound",
         "sreg()", None, "floor.call"),
        ("dumps", "pickle.dumps(Float32), %d bytes" % len(ns["pf"]), "dumps(f)", "dumps(ef)",
         "floor.dumps"),
        ("loads", "pickle.loads(<Float32 pickle>)", "loads(pf)",
         "loads(pef)", "floor.loads"),
        ("roundtrip", "pickle round trip, Float32", "loads(dumps(f))",
         "loads(dumps(ef))", "floor.rt"),
        ("dumps.block", "pickle.dumps(NVFP4), %d bytes" % len(ns["pnv"]), "dumps(nv)", None,
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
        ("isinstance.abstract", "isinstance(Float32, DType)",
         "isinstance(f, D)", None, "floor.isinstance"),
        ("isinstance.user", "isinstance(<user subclass instance>, SimpleDType)",
         "isinstance(us, S)", None, "floor.isinstance"),
        ("isinstance.rule", "isinstance(<user rule>, RepresentationRule)",
         "isinstance(rule, R)", None, "floor.isinstance"),
        ("isinstance.miss", "isinstance(1, DType)", "isinstance(x, D)", None,
         "floor.isinstance"),
        ("issubclass", "issubclass(<user subclass>, DType)",
         "issubclass(U, D)", None, "floor.isinstance"),
        ("from_name.miss_as_written", "from_name miss, as written "
         "(DType.from_name), LookupError caught", miss.format("D.from_name"),
         None, "floor.get"),
    ]
    for key, label, stmt, estmt, floor in pairs:
        add(key, label, stmt, group=sw, floor=floor,
            enum=("enum." + key) if estmt else None)
        if estmt:
            add("enum." + key, label, estmt, group="enum", floor=floor)

    B.extend(third_party_benches(ns))
    B.extend(relations_benches())
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
            Bench("np.dumps", "pickle.dumps(np.dtype('float32')), %d bytes"
                  % len(ns["pnp"]), "dumps(nf32)", ns, v, floor="floor.dumps"),
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
# kinds, casting and promotion, beside numpy and torch
# ---------------------------------------------------------------------------

#: The operand counts of the result_type rows (their bound: n - 1 joins).
RESULT_TYPE_SIZES = (2, 4, 8)


def relations_benches():
    """isdtype, can_cast, promote_types and result_type on built-ins (the
    formats pack is not imported: it would change the registry the other
    rows measure), and the same questions asked of numpy and torch when
    they are importable."""
    from stride_weave.dtypes import (can_cast, isdtype, promote_types,
                                     result_type)

    D = DType
    ints = [D.Int8, D.Int32, D.Bool] * 3
    ns = dict(pt=promote_types, cc=can_cast, isd=isdtype, rt=result_type,
              i8=D.Int8, i32=D.Int32, b=D.Bool, f32=D.Float32, f64=D.Float64,
              e4=D.E4M3, k="real floating", kt=("bool", "signed integer"),
              big=1000)
    for n in RESULT_TYPE_SIZES:
        ns["ops%d" % n] = tuple(ints[:n])
    # Correctness of what is timed.
    assert promote_types(D.Int8, D.Int32) is D.Int32
    assert can_cast(D.Int8, D.Float32) and can_cast(D.E4M3, D.Float32)
    assert isdtype(D.Float32, "real floating") and isdtype(D.Int8, ns["kt"])
    assert result_type(D.Int8, 1000) is D.Int8
    for n in RESULT_TYPE_SIZES:
        assert result_type(*ns["ops%d" % n]) is D.Int32
    g = "relations"
    out = [
        Bench("rel.promote_types", "promote_types(Int8, Int32)", "pt(i8, i32)",
              ns, g, floor="floor.get"),
        Bench("rel.promote_types.same", "promote_types(Float32, Float32)",
              "pt(f32, f32)", ns, g, floor="floor.get"),
        Bench("rel.can_cast", "can_cast(Int8, Float32)", "cc(i8, f32)", ns, g,
              floor="floor.call"),
        Bench("rel.can_cast.float", "can_cast(E4M3, Float32)", "cc(e4, f32)",
              ns, g, floor="floor.call"),
        Bench("rel.isdtype", "isdtype(Float32, 'real floating')", "isd(f32, k)",
              ns, g, floor="floor.call"),
        Bench("rel.isdtype.tuple", "isdtype(Int8, ('bool', 'signed integer'))",
              "isd(i8, kt)", ns, g, floor="floor.call"),
        Bench("rel.result_type.scalar", "result_type(Int8, 1000)",
              "rt(i8, big)", ns, g, floor="floor.get"),
    ]
    for n in RESULT_TYPE_SIZES:
        out.append(Bench("rel.result_type%d" % n,
                         "result_type of %d built-in integer dtypes" % n,
                         "rt(*ops%d)" % n, ns, g, floor="floor.get"))
    try:
        import numpy as np
    except Exception:
        np = None
    if np is not None:
        nns = dict(pt=np.promote_types, cc=np.can_cast, rt=np.result_type,
                   isd=getattr(np, "isdtype", None), i8=np.dtype("int8"),
                   i32=np.dtype("int32"), f32=np.dtype("float32"),
                   k="real floating")
        nns["ops4"] = (np.dtype("bool"), np.dtype("int8"), np.dtype("int32"),
                       np.dtype("bool"))
        v = "numpy " + np.__version__
        out += [
            Bench("np.promote_types", "np.promote_types(int8, int32)",
                  "pt(i8, i32)", nns, v, floor="floor.get"),
            Bench("np.can_cast", "np.can_cast(int8, float32)", "cc(i8, f32)",
                  nns, v, floor="floor.call"),
            Bench("np.result_type4", "np.result_type of 4 dtypes",
                  "rt(*ops4)", nns, v, floor="floor.get"),
        ]
        if nns["isd"] is not None:
            out.append(Bench("np.isdtype", "np.isdtype(float32, 'real floating')",
                             "isd(f32, k)", nns, v, floor="floor.call"))
    try:
        import torch
    except Exception:
        torch = None
    if torch is not None:
        tns = dict(pt=torch.promote_types, i8=torch.int8, i32=torch.int32)
        out.append(Bench("torch.promote_types", "torch.promote_types(int8, int32)",
                         "pt(i8, i32)", tns, "torch " + torch.__version__,
                         floor="floor.get"))
    return out


def declaration(repeats=20):
    """Seconds to declare one edge into a default lattice of 100 dtypes:
    100 new integer dtypes are declared into it first (run this after every
    other case of the main process, as it grows the lattice), then each
    repeat declares one edge from a new dtype into them.  Also the same in a
    lattice of one's own (extend). Returns the best times in ms."""
    from stride_weave.dtypes import declare_promotion, declare_promotions, default_lattice
    from stride_weave.numerics import NumericInfo, register_numeric_info

    def fresh(prefix, bits):
        d = SimpleDType(prefix, bits=bits, supertype=DType.Integer)
        register_numeric_info(d, NumericInfo.integer(bits, signed=True))
        return d

    base = len(default_lattice().dtypes)
    chain = [fresh("BenchLat%03d" % j, 8 + j) for j in range(100 - base)]
    declare_promotions(list(zip(chain, chain[1:])))
    size = len(default_lattice().dtypes)
    assert size >= 100
    clock = time.perf_counter
    best_declare = best_extend = float("inf")
    for r in range(repeats):
        d = fresh("BenchLatNew%03d" % r, 8)
        mine = default_lattice()
        t0 = clock()
        mine.extend([(d, chain[r])])
        best_extend = min(best_extend, clock() - t0)
        t0 = clock()
        declare_promotion(d, chain[r])
        best_declare = min(best_declare, clock() - t0)
    return dict(declare_edge_ms=best_declare * 1e3, extend_edge_ms=best_extend * 1e3,
                lattice_dtypes=size)


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



# ---------------------------------------------------------------------------
# the scaling section (child processes)
# ---------------------------------------------------------------------------

def ext_names(n, prefix="Ext"):
    """`n` fresh descriptor names: prefix0000000, prefix0000001, ..."""
    return ["%s%07d" % (prefix, j) for j in range(n)]


def child_timing(size, rounds, target):
    """Register `size` extensions in batches of 100, then time the lookups
    at that size against floors re-measured in this process (`rounds` rounds
    of `target` seconds a sample)."""
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
    """Bytes per descriptor while registering `size` simple descriptors from
    an empty registry (the name strings are created inside the traced
    region), and which objects one descriptor owns alone."""
    def register(make=SimpleDType, F=DType.Floating):
        for j in range(size):
            make("Ext%07d" % j, bits=8, supertype=F)   # the name is counted too

    allocated = traced_bytes(register)
    d = DType.from_name("Ext%07d" % (size - 1))
    other = DType.from_name("Ext%07d" % (size - 2))
    shared = _reach(other)
    owned = {k: o for k, o in _reach(d).items() if k not in shared}
    return dict(size=size, bytes_per=allocated / size,
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



# ---------------------------------------------------------------------------
# registration in the main process
# ---------------------------------------------------------------------------

def registration(batches):
    """Time registering new SimpleDTypes in this process, in `batches`
    batches of 100 fresh names; run it after every other case, as it grows
    the registry.  Returns the best and mean ns per registration, and how
    many descriptors were registered before."""
    main_entries = len(DType.registered())
    per = time_registrations(make_simple, ext_names(100 * batches, "Main"), 100)
    return dict(best_ns=min(per) * 1e9, mean_ns=sum(per) / len(per) * 1e9,
                batches=batches, main_entries=main_entries)
