"""stride_weave.interop against hostile code: every argument is read once,
as an exact built-in, and only that copy is checked, stored and compared;
what the module hands out (records, exceptions) and what it keeps (its
tables) cannot be changed by anyone, through object.__setattr__, vars(),
__class__ assignment or gc.get_referents; a refused call leaves every
mapping as it was."""
import enum
import gc
import itertools
import sys
import threading
import types

import pytest

from support import child_report, registry_unchanged, unique_name
from support.hostile import FLIP_STR_METHODS, tripwire, tripwire_ints
from stride_weave import interop
from stride_weave.dtypes import BlockScaledDType, DType, SimpleDType
from stride_weave.interop import DLDataTypeCode as C
from stride_weave.interop import NoEquivalentError

np = pytest.importorskip("numpy")
pa = pytest.importorskip("pyarrow")

# DLPack triples no other test declares: (kDLOpaqueHandle, 7, lanes).
_lanes = itertools.count(1001)


def _ext(bits=8, category=DType.Integer):
    return SimpleDType(unique_name("Bnd"), bits=bits, supertype=category)


def _free_triple():
    """A fresh (code, bits, lanes) and a dtype of its width."""
    lanes = next(_lanes)
    return (int(C.kDLOpaqueHandle), 7, lanes), _ext(bits=7 * lanes)


def _outcome(call, value):
    """What call(value) returns, or the type and message of what it raises."""
    try:
        return ("returned", call(value))
    except Exception as exc:   # noqa: BLE001 - the outcome is compared
        return ("raised", type(exc), str(exc))


def every_mapping():
    """Each registered simple dtype's declared equivalents, as text."""
    return {d.name: repr(interop.mapping(d)) for d in DType.registered()
            if isinstance(d, SimpleDType)}


def reverse_lookups():
    """The built-ins' reverse conversions, as (dtype names)."""
    return (interop.from_dlpack(2, 32).name, interop.from_buffer_format("f").name,
            interop.from_numpy(np.float32).name, interop.from_arrow(pa.int32()).name)


# ---- str arguments --------------------------------------------------------------

# Every str parameter of every public function, each with an exact value and
# the call: (id, value, call(value, dtype)), dtype a fresh 32-bit extension.
STR_PARAMETERS = [
    ("from_buffer_format", "f", lambda v, d: interop.from_buffer_format(v)),
    ("from_buffer_format-prefixed", "=i", lambda v, d: interop.from_buffer_format(v)),
    ("from_buffer_format-no-equivalent", "x", lambda v, d: interop.from_buffer_format(v)),
    ("from_buffer_format-other-order", ">f" if sys.byteorder == "little" else "<f",
     lambda v, d: interop.from_buffer_format(v)),
    ("from_numpy", "float32", lambda v, d: interop.from_numpy(v)),
    ("from_numpy-no-equivalent", "U3", lambda v, d: interop.from_numpy(v)),
    ("planes-target", "dlpack", lambda v, d: interop.planes(DType.NVFP4, v)),
    ("planes-unknown-target", "jax", lambda v, d: interop.planes(DType.MXFP4, v)),
    ("register_mapping-numpy", "float32", lambda v, d: interop.register_mapping(d, numpy=v)),
    ("register_mapping-numpy-width", "int16", lambda v, d: interop.register_mapping(d, numpy=v)),
    ("register_mapping-arrow", "float32", lambda v, d: interop.register_mapping(d, arrow=v)),
    ("register_mapping-arrow-unknown", "no_such_type",
     lambda v, d: interop.register_mapping(d, arrow=v)),
    ("register_mapping-buffer_format", "f",
     lambda v, d: interop.register_mapping(d, buffer_format=v)),
    ("register_mapping-buffer_format-width", "h",
     lambda v, d: interop.register_mapping(d, buffer_format=v)),
    ("register_mapping-torch", "float32", lambda v, d: interop.register_mapping(d, torch=v)),
    ("register_mapping-torch-not-a-name", "float 32",
     lambda v, d: interop.register_mapping(d, torch=v)),
]


@pytest.mark.parametrize("value, call", [case[1:] for case in STR_PARAMETERS],
                         ids=[case[0] for case in STR_PARAMETERS])
def test_a_str_argument_is_read_as_an_exact_copy_without_running_its_methods(value, call):
    """A str subclass gives the outcome of the exact str, and not one of its
    methods runs (so none can answer one thing when checked and another
    when used)."""
    d = _ext(bits=32, category=DType.Floating)
    with registry_unchanged():
        expected = _outcome(lambda v: call(v, d), value)
        hostile, calls = tripwire(value)
        assert _outcome(lambda v: call(v, d), hostile) == expected
    assert calls == []
    assert interop.mapping(d) == interop.Mapping()   # every declaration above is refused


def test_a_declared_str_subclass_is_stored_as_an_exact_str_never_read_again():
    d = _ext(bits=16)
    name, calls = tripwire(f"not_imported_{d.name.lower()}")
    if "torch" in sys.modules:
        pytest.skip("torch is imported: a made-up torch name is refused at once")
    declared = interop.register_mapping(d, torch=name)
    assert type(declared.torch) is str and type(interop.mapping(d).torch) is str
    assert declared.torch == str.__str__(name)
    # declaring the exact name again is the same mapping
    assert interop.register_mapping(d, torch=str.__str__(name)) == declared
    assert calls == []


# The takeover: a str subclass answers one value while register_mapping
# checks it and another afterwards. For each method, in a registry of the
# built-ins only, a subclass holding a free value that afterwards answers as
# a taken one: after the flip, the taken one still belongs to its owner, the
# stored value is an exact copy of the value given, and conversions use it.
_FLIP_CHILD = r"""
import json, sys
from support.hostile import FLIP_STR_METHODS, Switch, flipper, tripwire
from stride_weave import interop
from stride_weave.dtypes import DType, SimpleDType

target = sys.argv[1]
if target == "numpy":
    import numpy as np
    foreign = np.dtype
    convert, back = interop.to_numpy, interop.from_numpy
elif target == "arrow":
    import pyarrow as pa
    foreign = lambda name: getattr(pa, name)()
    convert, back = interop.to_arrow, interop.from_arrow
elif target == "buffer_format":
    foreign = lambda name: name
    convert, back = interop.to_buffer_format, interop.from_buffer_format
else:   # torch, which is not imported: names alone
    foreign = convert = back = None
# (free value, its width, a taken value) per flipped method, then one for a tripwire.
CASES = {
    "numpy": [("uint32", 32, "float32"), ("uint8", 8, "int8"), ("uint64", 64, "float64"),
              ("int64", 64, "float64"), ("complex64", 64, "float64"), ("int16", 16, "bool"),
              ("uint16", 16, "int8"), ("float16", 16, "int32")],
    "arrow": [("uint32", 32, "float32"), ("uint8", 8, "int8"), ("uint64", 64, "float64"),
              ("int64", 64, "float64"), ("uint16", 16, "int32"), ("int16", 16, "int8"),
              ("float16", 16, "int32"), ("date32", 32, "int32")],
    "buffer_format": [("I", 32, "f"), ("B", 8, "b"), ("q", 64, "d"), ("Q", 64, "d"),
                      ("Ze", 32, "i"), ("e", 16, "?"), ("H", 16, "i"), ("h", 16, "b")],
    "torch": [(f"made_up_{i}", 8, "int8") for i in range(8)],
}[target]
owners = {d.name: interop.mapping(d) for d in DType.registered()
          if d.is_simple() and getattr(interop.mapping(d), target) is not None}
switch = Switch()
made = []
for method, (value, bits, taken) in zip(FLIP_STR_METHODS + ("tripwire",), CASES):
    if method == "tripwire":
        given, calls = tripwire(value)
    else:
        given, calls = flipper(value, taken, method, switch), []
    d = SimpleDType(f"Flip_{target}_{method.strip('_')}", bits=bits, supertype=DType.Any)
    try:
        interop.register_mapping(d, **{target: given})
        error = None
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
    made.append((method, d, value, taken, error, calls))
switch.flip()
report = {}
for method, d, value, taken, error, calls in made:
    result = {"declared": error}
    stored = getattr(interop.mapping(d), target)
    result["stored_exact"] = type(stored) is str and str.__eq__(stored, value)
    result["owners_kept"] = all(interop.mapping(DType.from_name(n)) == m for n, m in owners.items())
    if back is not None:
        try:
            result["taken_kept"] = back(foreign(taken)).name
            result["own"] = back(foreign(value)) is d
            result["forward"] = convert(d) == foreign(value)
        except Exception as exc:
            result["conversions"] = f"{type(exc).__name__}: {exc}"
    else:
        other = SimpleDType(f"Again_{method.strip('_')}", bits=bits, supertype=DType.Any)
        try:
            interop.register_mapping(other, torch=value)
            result["duplicate_refused"] = False
        except ValueError:
            result["duplicate_refused"] = True
    result["calls"] = calls
    report[method] = result
print(json.dumps(report))
"""

_FLIP_TAKEN_OWNER = {"numpy": {"float32": "Float32", "int8": "Int8", "float64": "Float64",
                               "bool": "Bool", "int32": "Int32"},
                     "arrow": {"float32": "Float32", "int8": "Int8", "float64": "Float64",
                               "int32": "Int32"},
                     "buffer_format": {"f": "Float32", "b": "Int8", "d": "Float64",
                                       "i": "Int32", "?": "Bool"}}


@pytest.mark.parametrize("target", ["buffer_format", "numpy", "arrow", "torch"])
def test_a_str_subclass_that_changes_its_answers_after_the_checks_takes_nothing_over(target):
    report = child_report(_FLIP_CHILD, target)
    assert set(report) == set(FLIP_STR_METHODS) | {"tripwire"}
    for method, result in report.items():
        assert result["declared"] is None, (method, result)
        assert result["stored_exact"], (method, result)
        assert result["owners_kept"], (method, result)
        assert result["calls"] == [], (method, result)
        if target == "torch":
            assert result["duplicate_refused"], (method, result)
            continue
        assert "conversions" not in result, (method, result)
        assert result["own"] and result["forward"], (method, result)
    if target != "torch":
        cases = {"numpy": "float32 int8 float64 float64 float64 bool int8 int32",
                 "arrow": "float32 int8 float64 float64 int32 int8 int32 int32",
                 "buffer_format": "f b d d i ? i b"}[target].split()
        owners = _FLIP_TAKEN_OWNER[target]
        order = FLIP_STR_METHODS + ("tripwire",)
        assert [report[m]["taken_kept"] for m in order] == [owners[t] for t in cases]


# ---- int and tuple arguments -------------------------------------------------------

def test_int_enum_arguments_are_read_by_value_without_running_their_methods():
    codes, calls = tripwire_ints(FLOAT=2, WIDE=32, ONE=1, INT=0, BYTE=8)
    assert interop.from_dlpack(codes.FLOAT, codes.WIDE) is DType.Float32
    assert interop.from_dlpack(codes.INT, codes.BYTE, codes.ONE) is DType.Int8
    with pytest.raises(NoEquivalentError):
        interop.from_dlpack(codes.FLOAT, codes.BYTE, codes.WIDE)
    assert calls == []


class _Lying(enum.IntEnum):
    """Members whose int conversions, hash and equality all claim 0."""

    def __int__(self):
        return 0

    def __index__(self):
        return 0

    def __hash__(self):
        return hash(0)

    def __eq__(self, other):
        return other == 0


def test_an_int_enum_whose_methods_lie_is_read_by_its_value():
    triple, d = _free_triple()
    lying = _Lying("LyingCodes", {"FLOAT": 2, "WIDE": 32, "CODE": triple[0],
                                  "BITS": triple[1], "LANES": triple[2]})
    assert interop.from_dlpack(lying.FLOAT, lying.WIDE) is DType.Float32
    declared = interop.register_mapping(d, dlpack=(lying.CODE, lying.BITS, lying.LANES))
    assert [type(v) for v in tuple.__iter__(declared.dlpack)] == [int, int, int]
    assert tuple(declared.dlpack) == triple
    assert interop.from_dlpack(*triple) is d


def test_a_dlpack_tuple_subclass_is_read_once_as_its_items():
    triple, d = _free_triple()
    codes, int_calls = tripwire_ints(CODE=triple[0], BITS=triple[1])
    given, calls = tripwire((codes.CODE, codes.BITS, triple[2]))
    declared = interop.register_mapping(d, dlpack=given)
    assert tuple(declared.dlpack) == triple
    assert all(type(v) is int for v in tuple.__iter__(interop.to_dlpack(d)))
    assert interop.from_dlpack(*triple) is d
    assert calls == [] and int_calls == []


class _Pretending(tuple):
    """A tuple whose methods describe another triple than the one it holds."""

    def __iter__(self):
        return iter((int(C.kDLFloat), 32, 1))

    def __len__(self):
        return 3

    def __getitem__(self, index):
        return (int(C.kDLFloat), 32, 1)[index]


def test_a_tuple_subclass_is_taken_for_what_it_holds_not_what_it_says():
    triple, d = _free_triple()
    declared = interop.register_mapping(d, dlpack=_Pretending(triple))
    assert tuple(declared.dlpack) == triple
    assert interop.from_dlpack(2, 32) is DType.Float32


@pytest.mark.parametrize("value", [(2, 32, 1, 1), (2,), (2, "32"), (2, True), [2, 32],
                                   (2, 32.0), (2, 0)])
def test_bad_dlpack_tuples_are_refused_the_same_way_as_subclasses(value):
    d = _ext(bits=32)
    with registry_unchanged():
        expected = _outcome(lambda v: interop.register_mapping(d, dlpack=v), value)
        assert expected[0] == "raised" and expected[1] in (TypeError, ValueError)
        if isinstance(value, tuple):
            hostile, calls = tripwire(value)
            assert _outcome(lambda v: interop.register_mapping(d, dlpack=v), hostile) == expected
            assert calls == []
    assert interop.mapping(d) == interop.Mapping()


# ---- objects that claim a class -----------------------------------------------------

def _claiming(cls, **attributes):
    """An object whose __class__ attribute claims ``cls`` (isinstance believes it)."""
    namespace = dict(attributes)
    namespace["__class__"] = property(lambda self: cls)
    obj = type("Claiming", (), namespace)()
    assert isinstance(obj, cls)
    return obj


def test_an_object_claiming_to_be_a_simple_dtype_is_refused():
    triple = _free_triple()[0]
    fake = _claiming(SimpleDType, name="Fake", bits=7 * triple[2])
    for call in (lambda: interop.register_mapping(fake, dlpack=triple),
                 lambda: interop.mapping(fake), lambda: interop.to_dlpack(fake)):
        with pytest.raises(TypeError, match="dtype must be a SimpleDType, got <"):
            call()
    with pytest.raises(NoEquivalentError):
        interop.from_dlpack(*triple)


def test_an_object_claiming_to_be_a_block_scaled_dtype_is_refused():
    fake = _claiming(BlockScaledDType, name="FakeMX", element=DType.E2M1, levels=())
    with pytest.raises(TypeError, match="planes: dtype must be a BlockScaledDType"):
        interop.planes(fake, "dlpack")
    with pytest.raises(TypeError, match="dtype must be a SimpleDType"):
        interop.to_dlpack(fake)


def test_an_object_claiming_to_be_an_arrow_type_is_refused():
    fake = _claiming(pa.DataType, __eq__=lambda self, other: True,
                     __hash__=lambda self: hash(pa.float32()))
    with pytest.raises(TypeError, match="arrow_type must be a pyarrow.DataType"):
        interop.from_arrow(fake)
    d = _ext(bits=32)
    with pytest.raises(TypeError, match="expected an arrow dtype or its name"):
        interop.register_mapping(d, arrow=fake)


def test_a_descriptor_still_being_built_gets_no_mapping():
    """A descriptor that hands itself to register_mapping from its own
    __init__ is not registered yet, and may never be."""
    triple = _free_triple()[0]
    seen = []

    class Leaking(SimpleDType, abstract=False):
        def __init__(self, name):
            super().__init__(name, bits=7 * triple[2], supertype=DType.Integer)
            try:
                interop.register_mapping(self, dlpack=triple)
            except ValueError as exc:
                seen.append(str(exc))
            raise RuntimeError("the construction fails")

    with pytest.raises(RuntimeError):
        Leaking(unique_name("Leak"))
    assert len(seen) == 1 and "is not registered" in seen[0]
    with pytest.raises(NoEquivalentError):
        interop.from_dlpack(*triple)


# ---- the records handed out ------------------------------------------------------------

_MAPPING_FIELDS = ("numpy", "dlpack", "arrow", "buffer_format", "torch")
_DLPACK_FIELDS = ("code", "bits", "lanes")


def _records():
    """One of every record the module hands out, with its field names."""
    m = interop.mapping(DType.Float32)
    element, scale, whole = interop.planes(DType.NVFP4, "dlpack")
    return [
        ("mapping", m, _MAPPING_FIELDS),
        ("mapping.dlpack", m.dlpack, _DLPACK_FIELDS),
        ("to_dlpack", interop.to_dlpack(DType.Float32), _DLPACK_FIELDS),
        ("plane", scale, ("role", "level", "dtype", "block", "foreign")),
        ("plane.foreign", whole.foreign, _DLPACK_FIELDS),
        ("planes", interop.planes(DType.MXFP4, "dlpack"), ()),
    ]


def _truth_holds():
    """The module still answers what was declared, whatever its records
    have been through."""
    m = interop.mapping(DType.Float32)
    assert type(m) is interop.Mapping and type(m.dlpack) is interop.DLPackDType
    assert repr(m) == ("Mapping(numpy='float32', dlpack=DLPackDType(code=2, bits=32, "
                       "lanes=1), arrow='float32', buffer_format='f', torch='float32')")
    assert interop.from_dlpack(2, 32) is DType.Float32
    assert interop.from_buffer_format("f") is DType.Float32
    assert tuple.__eq__(interop.to_dlpack(DType.Float32)[:], (2, 32, 1))
    with pytest.raises(ValueError, match="already the equivalent of Float32"):
        interop.register_mapping(_ext(bits=32), dlpack=(2, 32))


@pytest.mark.parametrize("what, record, fields", _records(), ids=[r[0] for r in _records()])
def test_a_record_cannot_be_changed_in_place(what, record, fields):
    for field in fields:
        with pytest.raises(AttributeError):
            object.__setattr__(record, field, "changed")
        with pytest.raises(AttributeError):
            setattr(record, field, "changed")
    with pytest.raises(AttributeError):
        object.__setattr__(record, "extra", 1)
    with pytest.raises(TypeError):
        vars(record)
    with pytest.raises(AttributeError):
        record.__dict__   # noqa: B018
    # what the collector reaches from it: its items (immutable) and its class
    for referent in gc.get_referents(record):
        assert isinstance(referent, (type, str, int, tuple, SimpleDType)) or referent is None, (
            what, referent)
    _truth_holds()


class _Impostor(tuple):
    """A class for a record to be switched to: every field says "evil"."""

    __slots__ = ()
    numpy = dlpack = arrow = buffer_format = torch = code = bits = lanes = property(
        lambda self: "evil")

    def __eq__(self, other):
        return True

    __hash__ = tuple.__hash__


@pytest.mark.parametrize("what, record, fields", _records(), ids=[r[0] for r in _records()])
def test_switching_a_records_class_changes_only_that_copy(what, record, fields):
    """__class__ assignment cannot be prevented on a Python class: each
    record is the caller's own, and nothing reads it back. (An exact tuple
    refuses it.)"""
    if type(record) is tuple:
        with pytest.raises(TypeError):
            object.__dict__["__class__"].__set__(record, _Impostor)
    else:
        object.__dict__["__class__"].__set__(record, _Impostor)
        assert type(record) is _Impostor
    _truth_holds()
    assert interop.mapping(DType.Float32) is not interop.mapping(DType.Float32)
    assert interop.to_dlpack(DType.Float32) is not interop.to_dlpack(DType.Float32)


_POISONED_CLASSES = r"""
import gc, json
from stride_weave import _cli, interop
from stride_weave.dtypes import DType, SimpleDType

# Rewrite the record classes through the dicts the collector reaches from a
# record: every field, equality, hashing, construction and repr lie.
for cls, fields in ((interop.Mapping, ("numpy", "dlpack", "arrow", "buffer_format", "torch")),
                   (interop.DLPackDType, ("code", "bits", "lanes")),
                   (interop.Plane, ("role", "level", "dtype", "block", "foreign"))):
    namespace = next(r for r in gc.get_referents(cls) if type(r) is dict and "__module__" in r)
    for field in fields:
        namespace[field] = property(lambda self: "evil")
    namespace["__eq__"] = lambda self, other: True
    namespace["__hash__"] = lambda self: 0
    namespace["__iter__"] = lambda self: iter(("evil",) * 5)
    namespace["__getitem__"] = lambda self, i: "evil"
    namespace["__new__"] = lambda cls, *a, **k: tuple.__new__(cls, ("evil",) * 5)
    namespace["as_dict"] = lambda self: {"numpy": "evil"}
    type.__setattr__(cls, "__doc__", cls.__doc__)   # the type caches forget what they knew
report = {}
try:
    d = SimpleDType("Poisoned32", bits=32, supertype=DType.Floating)
    interop.register_mapping(d, dlpack=(2, 32))
    report["duplicate"] = "accepted"
except ValueError as exc:
    report["duplicate"] = "refused"
except Exception as exc:
    report["duplicate"] = repr(exc)
report["to_dlpack"] = list(tuple.__getitem__(interop.to_dlpack(DType.Float32), slice(None)))
report["to_buffer_format"] = interop.to_buffer_format(DType.Float32)
report["from_dlpack"] = interop.from_dlpack(2, 32).name
report["from_buffer_format"] = interop.from_buffer_format("f").name
import contextlib, io
out = io.StringIO()
with contextlib.redirect_stdout(out):
    _cli.main(["--name", "Float32", "--json"])
report["cli"] = json.loads(out.getvalue())["mappings"]
out = io.StringIO()
with contextlib.redirect_stdout(out):
    _cli.main(["--mappings", "--ascii"])
report["tree"] = [line for line in out.getvalue().splitlines() if "Float32  simple" in line]
print(json.dumps(report))
"""


def test_rewriting_the_record_classes_changes_no_conversion_and_no_cli_view():
    report = child_report(_POISONED_CLASSES)
    assert report["duplicate"] == "refused"
    assert (report["to_dlpack"], report["to_buffer_format"]) == ([2, 32, 1], "f")
    assert (report["from_dlpack"], report["from_buffer_format"]) == ("Float32", "Float32")
    assert report["cli"] == {"numpy": "float32", "dlpack": [2, 32, 1], "arrow": "float32",
                             "buffer_format": "f", "torch": "float32"}
    assert len(report["tree"]) == 1 and report["tree"][0].endswith(
        "Float32  simple, 32 bits  -> numpy float32; DLPack (2, 32, 1); Arrow float32; "
        "PEP 3118 f; torch float32")


# ---- the tables kept ---------------------------------------------------------------------

_MUTABLE = (dict, list, set, bytearray, types.CellType)
_FOLLOWED = (tuple, frozenset, dict, list, set)


def _mutable_containers(roots, frames_of=None):
    """The mutable containers reachable from ``roots`` through containers
    (and, for ``frames_of``, the locals of that file's frames in a
    traceback); classes, functions, modules and other objects are not
    entered: they are where a module can always be monkeypatched."""
    found, seen, todo = [], set(), list(roots)
    while todo:
        obj = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, _MUTABLE):
            found.append(obj)
        if isinstance(obj, types.TracebackType):
            todo.append(obj.tb_next)
            frame = obj.tb_frame
            if frame.f_code.co_filename == frames_of:
                todo.extend(frame.f_locals.values())
            continue
        if isinstance(obj, BaseException):
            todo.extend((obj.args, obj.__traceback__, obj.__cause__, obj.__context__))
            continue
        if isinstance(obj, _FOLLOWED) and not isinstance(obj, type):
            todo.extend(gc.get_referents(obj))
    return found


def test_the_module_keeps_no_mutable_container():
    """Whatever reaches the module's namespace (every function's globals,
    every traceback's frames do) finds only immutable tables."""
    roots = [value for name, value in vars(interop).items() if not name.startswith("__")]
    interop.from_numpy(np.float32), interop.from_arrow(pa.int8())   # caches filled
    assert _mutable_containers(roots) == []
    assert isinstance(interop.__all__, tuple)


def _failures():
    d = _ext(bits=32)
    return [
        lambda: interop.from_dlpack(255, 8),
        lambda: interop.from_buffer_format("x"),
        lambda: interop.from_buffer_format(3),
        lambda: interop.from_numpy("U3"),
        lambda: interop.from_arrow(pa.utf8()),
        lambda: interop.to_arrow(DType.E4M3),
        lambda: interop.planes(DType.MXFP4, "arrow"),
        lambda: interop.register_mapping(d, dlpack=(2, 32)),
        lambda: interop.register_mapping(d, numpy="int16"),
        lambda: interop.register_mapping(d, buffer_format="i", torch="x y"),
        lambda: interop.register_mapping(DType.Float32, numpy="int32"),
    ]


@pytest.mark.parametrize("index", range(len(_failures())))
def test_an_error_leads_to_no_mutable_table(index):
    """An exception's traceback holds the locals of the module's frames:
    none of them is a table that could be changed."""
    with pytest.raises((LookupError, TypeError, ValueError)) as info:
        _failures()[index]()
    found = _mutable_containers([info.value], frames_of=interop.__file__)
    assert found == []


# ---- refusals change nothing ----------------------------------------------------------

class _RaisingDtype:
    """numpy.dtype() reads .dtype, which raises."""

    @property
    def dtype(self):
        raise RuntimeError("no dtype today")


@pytest.mark.parametrize("kwargs, error", [
    ({"dlpack": (2, 16), "numpy": _RaisingDtype()}, RuntimeError),
    ({"numpy": "float16", "buffer_format": "e", "torch": "float 16"}, ValueError),
    ({"dlpack": (int(C.kDLOpaqueHandle), 16, 1), "arrow": "float32"}, ValueError),
    ({"buffer_format": "e", "arrow": pa.float32()}, ValueError),
    ({"numpy": "float16", "torch": "float32"}, ValueError),
    ({"torch": "float32", "dlpack": (2, 16)}, ValueError),
    ({"arrow": pa.float16(), "buffer_format": tripwire("Zf")[0]}, ValueError),
])
def test_a_refused_declaration_leaves_every_mapping_as_it_was(kwargs, error):
    import stride_weave.formats  # noqa: F401 - its names are the taken ones here
    d = _ext(bits=16, category=DType.Floating)
    before, lookups = every_mapping(), reverse_lookups()
    with registry_unchanged():
        with pytest.raises(error):
            interop.register_mapping(d, **kwargs)
    assert every_mapping() == before and reverse_lookups() == lookups
    assert interop.mapping(d) == interop.Mapping()


# ---- threads -----------------------------------------------------------------------------

def test_readers_see_every_mapping_while_other_threads_declare(fast_switching):
    """Each declaration replaces the state whole: a reader sees the built-ins
    and each finished declaration, never a half-made table."""
    declared = [_free_triple() for _ in range(40)]
    errors, done = [], threading.Event()

    def declare(chunk):
        try:
            for triple, d in chunk:
                interop.register_mapping(d, dlpack=triple)
                assert interop.from_dlpack(*triple) is d
        except BaseException as exc:   # noqa: BLE001 - reported below
            errors.append(exc)

    def read():
        try:
            while not done.is_set():
                assert interop.from_dlpack(2, 32) is DType.Float32
                assert interop.from_buffer_format("i") is DType.Int32
                assert interop.from_numpy(np.int8) is DType.Int8
                assert interop.mapping(DType.Float64).buffer_format == "d"
        except BaseException as exc:   # noqa: BLE001 - reported below
            errors.append(exc)

    writers = [threading.Thread(target=declare, args=(declared[i::4],)) for i in range(4)]
    readers = [threading.Thread(target=read) for _ in range(4)]
    for t in readers + writers:
        t.start()
    for t in writers:
        t.join()
    done.set()
    for t in readers:
        t.join()
    assert errors == []
    assert all(interop.from_dlpack(*triple) is d for triple, d in declared)
