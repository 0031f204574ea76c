"""Conversions between stride-weave dtypes and other libraries' dtypes.

Each simple dtype may have an equivalent in five places, the conversion
targets named in ``TARGETS``:

- **numpy** (``numpy.dtype``), ml_dtypes' types included
  (``float8_e4m3fn`` and friends, which numpy knows once ``ml_dtypes`` is
  imported). ml_dtypes stores sub-byte formats (float6, float4, int4) one
  value per byte, in the low bits: such a numpy dtype has ``itemsize`` 1
  although the stride-weave dtype is narrower.
- **DLPack**: a ``(code, bits, lanes)`` triple of the DLPack 1.x header
  (:class:`DLDataTypeCode`).
- **Arrow**: a pyarrow data type, where Arrow has one of the same width.
- **PEP 3118**: a buffer format string (``memoryview``/``struct`` codes).
- **torch**: a ``torch.dtype``. ``torch.float4_e2m1fn_x2`` packs two
  ``E2M1`` values in one byte: it is the torch equivalent of ``E2M1`` with
  two values per torch element.

Every conversion is exact or refused: a dtype with no equivalent, or a
foreign dtype that no stride-weave dtype maps to, is a
:class:`NoEquivalentError` (a LookupError) naming both sides, and saying
``import stride_weave.formats`` when that pack has the equivalent; an
argument of the wrong type is a TypeError. Block-scaled formats have no
single foreign dtype: :func:`planes` converts them plane by plane, with the
block sizes. :func:`dtype_of` gives the dtype of an array, a tensor or a
DLPack capsule.

The foreign libraries are imported only when a conversion needs them, so
importing this module imports none of them. Extension dtypes declare their
equivalents once with :func:`register_mapping`; the conversions then use
them in both directions. The first dtype declared for a foreign dtype is
its canonical equivalent (the reverse conversions give it); a later one
declared with ``alias=True`` converts to it too. The optional pack
:mod:`stride_weave.formats` registers common formats (Float16, BFloat16,
UInt8, ...) this way.

What the module hands out cannot be changed behind anyone's back: every
:class:`Mapping`, :class:`DLPackDType` and :class:`Plane` is a new tuple of
exact ``str`` and ``int`` values (and, for a parametrized Arrow type, the
immutable pyarrow type itself), the caller's own, so altering one (its
class included) alters nothing the module or another caller reads.
Arguments are read once: a ``str``, ``int`` or ``tuple`` subclass is copied
to the exact built-in without running any of its methods, and only the copy
is checked, stored and compared. The module's own tables are immutable
tuples, replaced whole by each declaration.
"""

from __future__ import annotations

import enum
import importlib
import struct
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Generic, Literal, NamedTuple, TypeVar, cast, overload

from stride_weave import _dtypes, _packs
from stride_weave._dtypes import BlockScaledDType, DType, SimpleDType, WholeExtent, _dlpack_dtype

if TYPE_CHECKING:
    # The foreign libraries' own types, for type checkers only: numpy and
    # torch ship type information; pyarrow does not, so its types are Any.
    import numpy
    import torch  # type: ignore[import-not-found, unused-ignore]
    from typing import TypeAlias

    NumpyDType: TypeAlias = numpy.dtype[Any]
    TorchDType: TypeAlias = torch.dtype
    ArrowType: TypeAlias = Any

__all__ = (
    "DLDataTypeCode",
    "DLPackDType",
    "Mapping",
    "NoEquivalentError",
    "Plane",
    "Target",
    "TARGETS",
    "mapping",
    "register_mapping",
    "planes",
    "dtype_of",
    "to_numpy",
    "from_numpy",
    "to_dlpack",
    "from_dlpack",
    "to_arrow",
    "from_arrow",
    "to_buffer_format",
    "from_buffer_format",
    "to_torch",
    "from_torch",
)


class NoEquivalentError(LookupError):
    """A dtype has no equivalent in the target library (or a foreign dtype
    has none in stride-weave)."""


class DLDataTypeCode(enum.IntEnum):
    """The type codes of ``DLDataType`` in the DLPack 1.x header."""

    kDLInt = 0
    kDLUInt = 1
    kDLFloat = 2
    kDLOpaqueHandle = 3
    kDLBfloat = 4
    kDLComplex = 5
    kDLBool = 6
    kDLFloat8_e3m4 = 7
    kDLFloat8_e4m3 = 8
    kDLFloat8_e4m3b11fnuz = 9
    kDLFloat8_e4m3fn = 10
    kDLFloat8_e4m3fnuz = 11
    kDLFloat8_e5m2 = 12
    kDLFloat8_e5m2fnuz = 13
    kDLFloat8_e8m0fnu = 14
    kDLFloat6_e2m3fn = 15
    kDLFloat6_e3m2fn = 16
    kDLFloat4_e2m1fn = 17


class DLPackDType(NamedTuple):
    """A DLPack ``DLDataType``: type code, bits per lane, lanes."""

    code: int
    bits: int
    lanes: int = 1


Target = Literal["numpy", "dlpack", "arrow", "buffer_format", "torch"]
#: The libraries a mapping may name, in the order of :class:`Mapping`'s fields.
TARGETS: tuple[Target, ...] = ("numpy", "dlpack", "arrow", "buffer_format", "torch")
# The targets whose equivalents are a library's dtypes, found by name.
_LIBRARY_TARGETS = ("numpy", "arrow", "torch")


class Mapping(NamedTuple):
    """The declared equivalents of one simple dtype (``None`` where there
    is none): the numpy dtype name, the DLPack triple, the Arrow type (the
    pyarrow factory name, ``"float16"`` for ``pyarrow.float16()``, or for a
    type no factory makes without arguments, such as
    ``pyarrow.time32("s")``, the pyarrow type itself), the PEP 3118 format
    and the torch dtype name (``torch.float8_e4m3fn`` is
    ``"float8_e4m3fn"``).

    An immutable tuple, made anew for each call that returns one."""

    numpy: str | None = None
    dlpack: DLPackDType | None = None
    arrow: str | ArrowType | None = None
    buffer_format: str | None = None
    torch: str | None = None

    def as_dict(self) -> dict[str, object]:
        """The mapping as JSON-ready values (the DLPack triple as a list,
        an Arrow type as its ``str()``)."""
        return {target: _json_value(v) for target, v in zip(TARGETS, self)}


def _json_value(value: object) -> object:
    if value is None or type(value) is str:
        return value
    if isinstance(value, tuple):
        return list(value)
    return _arrow_text(value)


F = TypeVar("F")


class Plane(NamedTuple, Generic[F]):
    """One plane of a block-scaled format, converted to a target library.

    ``role`` is ``"element"`` or ``"scale"``; ``level`` is the scale level
    (innermost 0; ``None`` for the element plane); ``block`` is the level's
    block, the coordinates of the level below that share one scale (an int
    for a 1-D block, a tuple of ints for an N-D block such as ``(16, 16)``,
    or ``Whole``; ``None`` for the element plane); ``foreign`` is the target library's
    dtype for the plane (its type is the conversion's: ``numpy.dtype`` for
    ``"numpy"``, :class:`DLPackDType` for ``"dlpack"``...)."""

    role: Literal["element", "scale"]
    level: int | None
    dtype: SimpleDType
    block: int | tuple[int, ...] | WholeExtent | None
    foreign: F


# ---- reading arguments ------------------------------------------------------
# A str, int or tuple subclass can answer anything from its methods, and
# differently each time; an object can claim a class through its __class__
# attribute, which isinstance believes. So an argument is judged by its real
# type and copied to the exact built-in with the built-in type's own methods,
# which run none of the subclass's code, and only the copy is used after.

def _is(value: object, cls: type) -> bool:
    """Whether the real type of ``value`` is ``cls`` or a subclass of it."""
    return type.__subclasscheck__(cls, type(value))


def _exact_str(value: object) -> str | None:
    """``value`` as an exact str (a copy, for a subclass); None if it is
    not a str."""
    if type(value) is str:
        return value
    return str.__str__(cast(str, value)) if _is(value, str) else None


def _exact_int(value: object) -> int | None:
    """An int or IntEnum ``value`` as an exact int; None for anything else
    (bool included)."""
    if type(value) is int:
        return value
    return int.__int__(cast(int, value)) if _is(value, enum.IntEnum) else None


def _exact_tuple(value: object) -> tuple[Any, ...] | None:
    """``value`` as an exact tuple (a copy, for a subclass); None if it is
    not a tuple."""
    if type(value) is tuple:
        return value
    return tuple.__getitem__(cast("tuple[Any, ...]", value), slice(None)) if _is(value, tuple) else None


def _type_name(value: object) -> str:
    """The qualified name of ``value``'s class, read from the type slot (no
    metaclass code runs)."""
    return str(vars(type)["__qualname__"].__get__(type(value)))


def _shown(value: object) -> object:
    """What an error message shows of an argument: the exact copy of a str
    or tuple, so that showing it runs none of its methods either."""
    text = _exact_str(value)
    if text is not None:
        return text
    items = _exact_tuple(value)
    return value if items is None else items


# ---- the tables ---------------------------------------------------------------
# Every table of this module is a tuple of buckets of (key, value) pairs, made
# once and never changed: whatever reaches it (through the module, or a
# traceback's locals, with gc.get_referents) cannot alter it, and a
# declaration replaces the state whole, under _lock. Keys are exact built-ins
# or a library's own dtypes; a key matches when its stored twin's type says
# so, never the argument's own __eq__.

_Table = tuple[tuple[tuple[Any, Any], ...], ...]


def _table(pairs: Iterable[tuple[Any, Any]]) -> _Table:
    """The table of ``pairs``; of equal keys, the first one counts."""
    items = tuple(pairs)
    size = 2 * len(items) + 1
    buckets: list[tuple[tuple[Any, Any], ...]] = [()] * size
    for key, value in items:
        i = hash(key) % size
        if _in_bucket(buckets[i], key) is None:
            buckets[i] += ((key, value),)
    return tuple(buckets)


def _in_bucket(bucket: tuple[tuple[Any, Any], ...], key: Any) -> tuple[Any, Any] | None:
    for pair in bucket:
        stored: Any = pair[0]
        # Only a key of the stored key's own type can match (a pyarrow type
        # is "equal" to the str that names it), by that type's __eq__.
        if type(stored) is not type(key):
            continue
        eq: Any = type(stored).__eq__
        if eq(stored, key) is True:
            return pair
    return None


def _get(table: _Table, key: Any) -> Any:
    """The value under ``key`` in ``table``, or None."""
    pair = _in_bucket(table[hash(key) % len(table)], key)
    return None if pair is None else pair[1]


def _pairs(table: _Table) -> tuple[tuple[Any, Any], ...]:
    return tuple(pair for bucket in table for pair in bucket)


_Entry = tuple[SimpleDType, tuple[Any, ...]]
_lock = threading.Lock()
# The declared mappings: (entries, index). An entry is (dtype, data), in
# declaration order; data holds the five equivalents in the order of TARGETS
# as exact values (names, the DLPack triple as a tuple of ints, a pyarrow
# type of one of pyarrow's own classes, or None). index finds an entry by
# id(dtype). Of the entries that declare one foreign dtype, the first is its
# canonical equivalent; the later ones are aliases.
_state: tuple[tuple[_Entry, ...], _Table] = ((), _table(()))
# The reverse tables of one state: (state, one table per target, or None
# until a conversion needs it).
_reverse: tuple[object, tuple[_Table | None, ...]] = (_state, (None,) * len(TARGETS))
# (target, name) -> the library's dtype of that name (names only).
_resolved: _Table = _table(())
_NO_DATA: tuple[Any, ...] = (None,) * len(TARGETS)


def _import(target: str) -> Any:
    module = _library(target)
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"converting to or from {target} needs {module}, which is not "
            f"importable: {exc}"
        ) from exc


def _library(target: str) -> str:
    """The module a library target's dtypes come from."""
    return "pyarrow" if target == "arrow" else target


def _arrow_factory(shown: str) -> str:
    """The pyarrow factory name of a type from its str() (``halffloat`` is
    made by ``pyarrow.float16``)."""
    for text, factory in (("halffloat", "float16"), ("float", "float32"),
                          ("double", "float64"), ("bool", "bool_")):
        if shown == text:
            return factory
    return shown


def _simple(func: str, dtype: object, target: str) -> SimpleDType:
    if _is(dtype, BlockScaledDType):
        name = cast(BlockScaledDType, dtype).name
        shown = repr(target) if target in TARGETS else "target"
        raise TypeError(
            f"{func}: {name} is block-scaled and has no single {target} "
            f"dtype; convert it plane by plane with planes({name}, {shown})"
        )
    if not _is(dtype, SimpleDType):
        raise TypeError(f"{func}: dtype must be a SimpleDType, got {_shown(dtype)!r}")
    return cast(SimpleDType, dtype)


def _data(dtype: SimpleDType) -> tuple[Any, ...]:
    """The declared equivalents of ``dtype``, as stored."""
    entry = _get(_state[1], id(dtype))
    return entry[1] if entry is not None and entry[0] is dtype else _NO_DATA


def _dlpack_record(triple: tuple[int, ...]) -> DLPackDType:
    return tuple.__new__(DLPackDType, triple)


def _record(data: tuple[Any, ...]) -> Mapping:
    """A new Mapping of stored equivalents."""
    numpy, dlpack, arrow, buffer_format, torch = data
    return tuple.__new__(Mapping, (numpy, None if dlpack is None else _dlpack_record(dlpack),
                                   arrow, buffer_format, torch))


def mapping(dtype: SimpleDType) -> Mapping:
    """The declared equivalents of a simple dtype (all ``None`` when it has
    none)."""
    return _record(_data(_simple("mapping", dtype, "foreign")))


def _equivalents(dtype: SimpleDType) -> tuple[Any, ...]:
    """The declared equivalents of ``dtype`` as exact values, in the order
    of TARGETS (the DLPack triple as a tuple of ints, an Arrow type stored
    as itself shown as its str()); for the command line, which reads them
    without going through :class:`Mapping`."""
    data = _data(_simple("mapping", dtype, "foreign"))
    return tuple(value if value is None or type(value) in (str, tuple) else _arrow_text(value)
                 for value in data)


# ---- buffer formats -------------------------------------------------------

def _buffer_kind(code: str) -> str | None:
    if len(code) != 1:
        return None
    for kind, codes in (("int", "bhilqn"), ("uint", "BHILQN"), ("float", "efd"),
                        ("bool", "?")):
        if code in codes:
            return kind
    return None


def _buffer_key(func: str, fmt: str) -> tuple[str, int]:
    """(kind, size in bytes) of a one-item PEP 3118 format (an exact str)
    of a number or bool in native byte order; NoEquivalentError for any
    other format."""
    body = fmt
    standard = False
    if body[:1] in ("@", "=", "<", ">", "!"):
        order, body = body[0], body[1:]
        little = sys.byteorder == "little"
        if (order == "<" and not little) or (order in (">", "!") and little):
            raise NoEquivalentError(
                f"{func}: {fmt!r} is not in native byte order; stride-weave "
                "dtypes denote native-order values"
            )
        standard = order != "@"
    complex_ = body[:1] == "Z"
    code = body[1:] if complex_ else body
    kind = _buffer_kind(code)
    if kind is None:
        raise NoEquivalentError(
            f"{func}: {fmt!r} is not a single scalar format of a numeric or "
            "bool type, so no stride-weave dtype is its equivalent"
        )
    if complex_:
        if kind != "float":
            raise NoEquivalentError(f"{func}: {fmt!r} is not a complex float format")
        kind = "complex"
    if code in "nN" and standard:
        raise ValueError(f"{func}: {fmt!r}: {code!r} is only valid in native mode ('@')")
    size = struct.calcsize(("=" if standard else "@") + code)
    return kind, size * (2 if complex_ else 1)


def _format_argument(func: str, fmt: object) -> str:
    text = _exact_str(fmt)
    if text is None:
        raise TypeError(f"{func}: format must be a str, got {_shown(fmt)!r}")
    return text


# ---- declaring ------------------------------------------------------------

def _normalize(target: str, value: Any, name: str, bits: int, check_now: bool) -> Any:
    """The stored form of one declared equivalent of the dtype ``name`` of
    ``bits`` bits, read once and validated."""
    where = f"register_mapping({name}, {target}=...)"
    if target == "dlpack":
        return _dlpack_triple(where, value, name, bits)
    if target == "buffer_format":
        fmt = _format_argument(where, value)
        size = _buffer_key(where, fmt)[1]
        if size * 8 != bits:
            raise ValueError(
                f"{where}: the widths must agree: {name} has {bits} "
                f"bits, {fmt!r} has {size * 8}"
            )
        return fmt
    stored: Any = _exact_str(value)
    if stored is None:
        stored = _foreign_value(where, target, value)
    if type(stored) is str and not (stored and stored.isascii() and stored.isprintable()
                                    and " " not in stored):
        raise ValueError(
            f"{where}: expected a non-empty name of printable ASCII characters "
            f"without spaces, got {stored!r}"
        )
    if type(stored) is not str or (check_now and sys.modules.get(_library(target)) is not None):
        # The library is here already: check the name and the width now. A
        # name that needs ml_dtypes when it is not installed is left to the
        # conversions (no such dtype can occur here).
        try:
            _check_width(target, stored, name, bits)
        except _Unavailable as exc:
            if not isinstance(exc.__cause__, ImportError):
                raise ValueError(f"{where}: {exc}") from None
    return stored


def _dlpack_triple(where: str, value: Any, name: str, bits: int) -> tuple[int, ...]:
    items = _exact_tuple(value)
    ints = () if items is None else tuple(_exact_int(v) for v in items)
    if items is None or len(ints) not in (2, 3) or None in ints:
        raise TypeError(
            f"{where}: expected a (code, bits, lanes) tuple of ints, got {_shown(value)!r}"
        )
    triple = cast(tuple[int, ...], ints + (1,) if len(ints) == 2 else ints)
    code, lane_bits, lanes = triple
    if not (0 <= code <= 255 and 1 <= lane_bits <= 255 and 1 <= lanes <= 65535):
        raise ValueError(
            f"{where}: expected code 0-255, bits 1-255 and lanes 1-65535, "
            f"got {triple}"
        )
    if lane_bits * lanes != bits:
        raise ValueError(
            f"{where}: the widths must agree: {name} has {bits} "
            f"bits, {triple} has {lane_bits * lanes}"
        )
    return triple


def _foreign_value(where: str, target: str, value: Any) -> Any:
    """The stored form of a foreign dtype object given to register_mapping,
    read once (its library must be imported already): its name, or for an
    Arrow type that no pyarrow factory makes without arguments, the type
    itself."""
    module = sys.modules.get(_library(target))
    stored: Any = None
    if module is not None and target == "numpy":
        try:
            dt = module.dtype(value)
        except TypeError:
            raise TypeError(
                f"{where}: expected a numpy dtype or its name as a str, got {_shown(value)!r}"
            ) from None
        if not dt.isnative:
            raise ValueError(f"{where}: expected a native byte order numpy dtype, got {dt!r}")
        stored = _exact_str(dt.name)
    elif module is not None and target == "arrow" and _is(value, module.DataType):
        if not _own_arrow_type(module, value):
            raise TypeError(
                f"{where}: expected a type of one of pyarrow's own classes (an "
                f"extension type has no fixed equivalent), got a "
                f"{_type_name(value)} object"
            )
        stored = _arrow_stored(module, value)
    elif module is not None and target == "torch" and _is(value, module.dtype):
        shown = _exact_str(str(value))
        stored = None if shown is None else shown.removeprefix("torch.")
    if stored is None:
        article = "an" if target == "arrow" else "a"
        raise TypeError(
            f"{where}: expected {article} {target} dtype or its name as a str, "
            f"got {_shown(value)!r}"
        )
    return stored


def _own_arrow_type(pyarrow: Any, value: object) -> bool:
    """Whether ``value`` is an instance of one of pyarrow's own DataType
    classes (not a subclass written in Python, whose equality and hash
    could be anything). The class's name is read from the type slot, so
    no metaclass code runs."""
    cls = type(value)
    name = vars(type)["__name__"].__get__(cls)
    return getattr(pyarrow.lib, name, None) is cls and _is(value, pyarrow.DataType)


def _arrow_stored(pyarrow: Any, value: Any) -> Any:
    """How an Arrow type (of pyarrow's own classes) is stored: the name of
    the pyarrow factory that makes it without arguments (``date32`` for
    ``pyarrow.date32()``, whose str() is ``date32[day]``), so that a type
    and its name are one equivalent; else the type itself, which is
    immutable (``pyarrow.time32("s")``)."""
    shown = _arrow_text(value)
    eq: Any = type(value).__eq__
    for candidate in dict.fromkeys((_arrow_factory(shown), shown.partition("[")[0])):
        factory = getattr(pyarrow, candidate, None) if candidate.isidentifier() else None
        if not callable(factory):
            continue
        try:
            made = factory()
        except (TypeError, ValueError):
            continue
        if type(made) is type(value) and eq(value, made) is True:
            return candidate
    return value


def _arrow_text(value: Any) -> str:
    """The str() of a stored Arrow type (an exact str)."""
    text: Any = type(value).__str__
    return str(text(value))


class _Unavailable(ValueError):
    """The installed library has no dtype of this name (an older version,
    or ml_dtypes missing): the name's dtype cannot occur in this process."""


def _resolve(target: str, value: Any) -> Any:
    """The foreign dtype that a stored value denotes (cached for names).
    _Unavailable when the installed library (or ml_dtypes, for numpy) lacks
    it; ValueError when the name denotes something that is not a dtype, or
    names a numpy or torch dtype by another name than its own
    (``torch.half``: an alias would give one dtype two names, and two
    owners)."""
    if type(value) is not str:
        return value   # an Arrow type, stored as itself
    name: str = value
    key = (target, name)
    found = _get(_resolved, key)
    if found is not None:
        return found
    module = _import(target)
    try:
        if target == "numpy":
            try:
                found = module.dtype(name)
            except TypeError:
                found = module.dtype(_ml_dtypes_type(name))
            own = found.name
        elif target == "arrow":
            found = getattr(module, name)()
            if not _is(found, module.DataType):
                raise TypeError(f"pyarrow.{name}() is not a DataType")
            own = name   # a factory makes a type; its str() is not a name
        else:
            found = getattr(module, name)
            if not _is(found, module.dtype):
                raise TypeError(f"torch.{name} is not a torch.dtype")
            own = str(found).removeprefix("torch.")
        if own != name:
            raise TypeError(f"{_library(target)} calls it {own!r}")
    except _Unavailable:
        raise   # says why, and what to install
    except (AttributeError, ImportError) as exc:
        raise _Unavailable(
            f"{name!r} does not name {_a(target)} dtype here ({exc})") from exc
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name!r} does not name {_a(target)} dtype: {exc}") from exc
    _remember(key, found)
    return found


#: The command that installs an ml_dtypes with every format numpy is
#: mapped to, and the formats 0.5 added.
_ML_DTYPES_INSTALL = "python -m pip install 'ml_dtypes>=0.5'"
_ML_DTYPES_0_5 = frozenset({"float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn",
                            "float8_e8m0fnu"})


def _ml_dtypes_type(name: str) -> Any:
    """ml_dtypes' type ``name``, which numpy knows once ml_dtypes is
    imported. _Unavailable, saying how to install ml_dtypes, when it is not
    installed, or is older than a format it lacks; AttributeError or
    ImportError otherwise."""
    try:
        ml_dtypes = importlib.import_module("ml_dtypes")
    except ModuleNotFoundError as exc:
        if exc.name != "ml_dtypes":
            raise   # ml_dtypes is there, a module it imports is not
        raise _Unavailable(
            f"{name!r} is a numpy dtype only with ml_dtypes, which is not installed "
            f"(install it with: {_ML_DTYPES_INSTALL})") from exc
    found = getattr(ml_dtypes, name, None)
    if found is None and name in _ML_DTYPES_0_5:
        raise _Unavailable(
            f"{name!r} is not in the installed ml_dtypes "
            f"{getattr(ml_dtypes, '__version__', '(version unknown)')} "
            f"(install a version that has it with: {_ML_DTYPES_INSTALL})")
    if found is None:
        raise AttributeError(f"module 'ml_dtypes' has no attribute {name!r}")
    return found


def _a(target: str) -> str:
    return ("an " if target == "arrow" else "a ") + target


def _remember(key: tuple[str, str], found: Any) -> None:
    global _resolved
    with _lock:
        if _get(_resolved, key) is None:
            _resolved = _table(_pairs(_resolved) + ((key, found),))


def _foreign_bits(target: str, foreign: Any, name: str) -> int:
    """The bits of stride-weave dtype values that one foreign item holds."""
    if target == "numpy":
        # A complex format's bits are the whole value (finfo describes one
        # component); bytes, strings, objects and the like fill their items.
        if foreign.kind in "bcmMOSUV" and not _is_ml_dtype(foreign) or foreign.kind == "c":
            return int(foreign.itemsize) * 8
        # finfo/iinfo know the width of ml_dtypes' sub-byte formats, which
        # are stored one per byte.
        info = _loaded_ml_dtypes() or sys.modules["numpy"]
        for query in (info.finfo, info.iinfo):
            try:
                return int(query(foreign).bits)
            except (TypeError, ValueError):
                pass
        return int(foreign.itemsize) * 8
    if target == "arrow":
        return int(foreign.bit_width)
    lanes = 2 if name.endswith("_x2") else 1
    return int(foreign.itemsize) * 8 // lanes


def _loaded_ml_dtypes() -> Any:
    """ml_dtypes if it is imported, else None. Another thread may be
    importing it: import_module waits until it is whole."""
    if sys.modules.get("ml_dtypes") is None:
        return None
    return importlib.import_module("ml_dtypes")


def _is_ml_dtype(foreign: Any) -> bool:
    ml_dtypes = _loaded_ml_dtypes()
    return ml_dtypes is not None and getattr(ml_dtypes, foreign.name, None) is foreign.type


def _shown_value(value: Any) -> str:
    """A stored value as a message shows it."""
    return repr(value) if type(value) is str else _arrow_text(value)


def _check_width(target: str, value: Any, name: str, bits: int) -> Any:
    """The foreign dtype a stored value denotes, checked to hold ``bits``
    bits (the width of the dtype ``name``)."""
    foreign = _resolve(target, value)
    shown = _shown_value(value)
    try:
        found = _foreign_bits(target, foreign, value if type(value) is str else "")
    except ValueError:
        found = -1
    if found != bits:
        raise ValueError(
            f"the {target} equivalent declared for {name}, {shown}, holds "
            f"{found} bits, not {bits}: the widths must agree"
        )
    return foreign


def _convert(func: str, target: str, value: Any, dtype: SimpleDType) -> Any:
    """The foreign dtype of a forward conversion; NoEquivalentError when the
    installed library lacks it."""
    try:
        return _check_width(target, value, dtype.name, dtype.bits)
    except _Unavailable as exc:
        raise NoEquivalentError(
            f"{func}: {dtype.name}'s {target} equivalent is not available with "
            f"the installed libraries: {exc}"
        ) from exc


def _unique_key(target: str, value: Any) -> Any:
    """What two declarations of ``target`` denote one foreign dtype by: the
    format's kind and size for a buffer format, else the stored value
    itself."""
    if target == "buffer_format":
        return _buffer_key("register_mapping", value)
    return value


def _same(a: Any, b: Any) -> bool:
    """Whether two stored values (or unique keys) are the same: exact
    built-ins by value, pyarrow types of one class by pyarrow's equality.
    Values of different types never are (a pyarrow type is "equal" to the
    str that names it)."""
    if type(a) is not type(b):
        return False
    if a is None or type(a) in (str, tuple):
        return bool(a == b)
    eq: Any = type(a).__eq__
    return eq(a, b) is True


def register_mapping(
    dtype: SimpleDType,
    *,
    numpy: Any = None,
    dlpack: tuple[int, int] | tuple[int, int, int] | None = None,
    arrow: Any = None,
    buffer_format: str | None = None,
    torch: Any = None,
    alias: bool = False,
) -> Mapping:
    """Declare the foreign equivalents of the simple dtype ``dtype``.

    Each equivalent is optional: ``numpy`` a numpy dtype (or its name,
    ml_dtypes' names included); ``dlpack`` a ``(code, bits[, lanes])``
    triple; ``arrow`` a pyarrow type (or its factory name, ``"float16"``;
    a type no factory makes without arguments, ``pyarrow.time32("s")``,
    is kept as itself); ``buffer_format`` a PEP 3118 format; ``torch`` a
    torch dtype (or its name). Names let a module declare equivalents
    without importing the library. ``dtype`` must be registered (not one
    still being built).

    Validation: the widths must agree with ``dtype.bits`` (checked at once
    for DLPack, buffer formats and Arrow types, and for names at once when
    their library is imported already, else by the first conversion that
    imports it, which then raises the ValueError); a name that does not
    name a dtype of the library is a ValueError. Declaring the same mapping
    again is harmless; a different one for a dtype that has one is a
    ValueError. A refused declaration changes nothing. Thread-safe.
    Returns the stored :class:`Mapping` (a new copy).

    The first dtype declared for a foreign dtype is its canonical
    equivalent: the reverse conversions (``from_numpy``...) give it. A
    foreign dtype that another dtype has already is a ValueError, unless
    ``alias=True``: ``dtype`` is then an alias, whose forward conversions
    (``to_numpy``...) give the foreign dtype while the reverse ones still
    give the canonical dtype.
    """
    if type(alias) is not bool:
        raise TypeError(f"register_mapping: alias must be a bool, got {_shown(alias)!r}")
    d = _simple("register_mapping", dtype, "foreign")
    _require_registered(d)
    return _publish(d, _prepare(d.name, d.bits, (numpy, dlpack, arrow, buffer_format, torch),
                                check_now=True), alias=alias)


def _prepare(name: str, bits: int, given: tuple[Any, ...], *, check_now: bool) -> tuple[Any, ...]:
    """The stored form of the equivalents ``given`` (in the order of
    TARGETS) of the dtype ``name`` of ``bits`` bits, validated; nothing is
    published. check_now=False (the built-ins and the formats pack, whose
    names the test suite checks against the libraries) resolves no name
    now, so preparing imports nothing."""
    # Each argument is read here, once, before any lock is taken: reading
    # may run code (a foreign dtype's str(), numpy.dtype() of an object),
    # and nothing after this looks at the arguments again.
    return tuple(None if value is None else _normalize(target, value, name, bits, check_now)
                 for target, value in zip(TARGETS, given))


def _publish(d: SimpleDType, data: tuple[Any, ...], *, alias: bool) -> Mapping:
    """Store the prepared equivalents ``data`` of the registered dtype
    ``d``; ValueError (and nothing stored) when ``d`` has a different
    mapping, or, unless ``alias``, when another dtype has one of them."""
    global _state
    with _lock:
        # Exact values and pyarrow's own types only from here to the
        # publication: no code of the caller's runs while the lock is held.
        entries, index = _state
        existing = _get(index, id(d))
        owner = None
        if existing is None or existing[0] is not d:
            owner = None if alias else _owner_of_any(entries, data)
            if owner is None:
                entries += ((d, data),)
                _state = (entries, _table((id(entry[0]), entry) for entry in entries))
                return _record(data)
        elif all(_same(a, b) for a, b in zip(existing[1], data)):
            return _record(data)
    if owner is None:
        raise ValueError(
            f"register_mapping: {d.name} is already mapped to "
            f"{_record(existing[1])!r}; got a different mapping, {_record(data)!r}"
        )
    target, other = owner
    value = data[TARGETS.index(target)]
    shown = _shown_value(value) if target in _LIBRARY_TARGETS else repr(value)
    raise ValueError(
        f"register_mapping: {target} {shown} is already the "
        f"equivalent of {other.name}; it cannot also be {d.name}'s "
        f"(declare {d.name}'s with alias=True to make it an alias: its "
        f"conversions to {target} work, and those from {target} give "
        f"{other.name})"
    )


def _owner_of_any(entries: tuple[_Entry, ...],
                  data: tuple[Any, ...]) -> tuple[str, SimpleDType] | None:
    """(target, dtype) of the first declared equivalent in ``data`` that
    another dtype has already, or None."""
    for i, target in enumerate(TARGETS):
        if data[i] is None:
            continue
        key = _unique_key(target, data[i])
        for other, theirs in entries:
            if theirs[i] is not None and _same(_unique_key(target, theirs[i]), key):
                return target, other
    return None


def _require_registered(d: SimpleDType) -> None:
    """A mapping is for a registered descriptor: one still being built may
    never be (its construction can fail), and one whose construction failed
    is not."""
    name = d.name
    try:
        found = DType.from_name(name)
    except LookupError:
        found = None
    if found is not d:
        raise ValueError(
            f"register_mapping: {name} is not registered (it is still being "
            "built, or its construction failed); declare its mapping once it is"
        )


# ---- converting -----------------------------------------------------------

def _forward(func: str, target: Target, dtype: object) -> tuple[SimpleDType, Any]:
    d = _simple(func, dtype, target)
    value = _data(d)[TARGETS.index(target)]
    if value is None:
        raise NoEquivalentError(f"{func}: {d.name} has no {target} equivalent")
    return d, value


def _reverse_table(target: Target) -> _Table:
    """foreign key -> dtype for ``target``, made once per state; of the
    entries that declare one foreign dtype, the first (the canonical
    equivalent) is the one the table keeps."""
    global _reverse
    i = TARGETS.index(target)
    state = _state
    built_for, tables = _reverse
    table = tables[i] if built_for is state else None
    if table is not None:
        return table
    table = _table(_reverse_pairs(target, state[0]))
    with _lock:
        built_for, tables = _reverse
        if _state is state:
            if built_for is not state:
                tables = (None,) * len(TARGETS)
            _reverse = (state, tables[:i] + (table,) + tables[i + 1:])
    return table


def _reverse_pairs(target: Target, entries: tuple[_Entry, ...]) -> Iterator[tuple[Any, SimpleDType]]:
    i = TARGETS.index(target)
    for dtype, data in entries:
        value = data[i]
        if value is None:
            continue
        if target in _LIBRARY_TARGETS:
            try:
                yield _check_width(target, value, dtype.name, dtype.bits), dtype
            except _Unavailable:
                continue   # no such foreign dtype can be given here
        else:
            yield _unique_key(target, value), dtype


def _backward(func: str, target: Target, key: Any, shown: object) -> SimpleDType:
    found: SimpleDType | None = _get(_reverse_table(target), key)
    if found is None:
        raise NoEquivalentError(
            f"{func}: no stride-weave dtype is the equivalent of {target} {shown!r}"
            + _pack_hint(target, key)
        )
    return found


def _pack_hint(target: Target, key: Any) -> str:
    """What a reverse miss on ``key`` adds when a pack that is not imported
    has its equivalent: which dtype, and the import that registers it."""
    module = _packs.FORMATS_MODULE
    if sys.modules.get(module) is not None:
        return ""
    i = TARGETS.index(target)
    for name, bits, _supertype, _params, equivalents in _packs.FORMATS_TABLE:
        value = equivalents[i]
        if value is not None and _pack_value_is(target, value, bits, key):
            return (f"; the formats pack maps it to {name}: import {module} "
                    f"to register it")
    return ""


def _pack_value_is(target: Target, value: Any, bits: int, key: Any) -> bool:
    """Whether the pack's equivalent ``value`` (as the pack table writes it)
    denotes the foreign dtype of the reverse key ``key``."""
    if target == "dlpack":
        return bool(tuple(value) + (1,) == key)
    if target == "buffer_format":
        return bool(_buffer_key("register_mapping", value) == key)
    # A library's dtype: compared by name first, so that a miss resolves
    # (and may import) nothing it does not need.
    if target == "numpy":
        named = key.name == value
    elif target == "torch":
        named = str(key).removeprefix("torch.") == value
    else:
        named = _arrow_factory(_arrow_text(key)) == value
    if not named:
        return False
    try:
        foreign = _resolve(target, value)
    except (ValueError, ImportError):
        return False
    return type(foreign) is type(key) and _same(foreign, key) and _foreign_bits(
        target, foreign, value) == bits


def to_numpy(dtype: SimpleDType) -> NumpyDType:
    """The ``numpy.dtype`` equivalent to ``dtype`` (imports numpy, and
    ml_dtypes for its formats)."""
    d, value = _forward("to_numpy", "numpy", dtype)
    return cast("NumpyDType", _convert("to_numpy", "numpy", value, d))


def from_numpy(np_dtype: Any) -> SimpleDType:
    """The stride-weave dtype equivalent to a numpy dtype (or anything
    ``numpy.dtype()`` accepts, and the names of ml_dtypes' types, such as
    ``"bfloat16"``). Non-native byte order has no equivalent."""
    np = _import("numpy")
    text = _exact_str(np_dtype)
    given = np_dtype if text is None else text
    try:
        dt = np.dtype(given)
    except TypeError as exc:
        dt = None if text is None else _ml_dtype_named(np, text)
        if dt is None:
            raise TypeError(
                f"from_numpy: np_dtype must be a numpy dtype or convertible to one, "
                f"got {_shown(given)!r}"
            ) from exc
    return _from_numpy_dtype("from_numpy", dt)


def _ml_dtype_named(np: Any, name: str) -> Any:
    """The numpy dtype of ml_dtypes' type ``name`` (numpy knows the names
    of ml_dtypes' types once ml_dtypes is imported), or None."""
    try:
        ml_dtypes = importlib.import_module("ml_dtypes")
    except ImportError:
        return None
    found = getattr(ml_dtypes, name, None) if name.isidentifier() else None
    if not isinstance(found, type):
        return None
    try:
        return np.dtype(found)
    except TypeError:
        return None


def _from_numpy_dtype(func: str, dt: Any) -> SimpleDType:
    if not dt.isnative:
        raise NoEquivalentError(
            f"{func}: {dt!r} is not in native byte order; stride-weave "
            "dtypes denote native-order values"
        )
    return _backward(func, "numpy", dt, dt)


def to_dlpack(dtype: SimpleDType) -> DLPackDType:
    """The DLPack ``(code, bits, lanes)`` of ``dtype`` (a new tuple)."""
    return _dlpack_record(_forward("to_dlpack", "dlpack", dtype)[1])


def from_dlpack(code: int, bits: int, lanes: int = 1) -> SimpleDType:
    """The stride-weave dtype of a DLPack ``DLDataType``."""
    given = (code, bits, lanes)
    key = tuple(_exact_int(value) for value in given)
    for arg, value, exact in zip(("code", "bits", "lanes"), given, key):
        if exact is None:
            raise TypeError(f"from_dlpack: {arg} must be an int, got {_shown(value)!r}")
    return _backward("from_dlpack", "dlpack", key, key)


def to_arrow(dtype: SimpleDType) -> ArrowType:
    """The ``pyarrow.DataType`` equivalent to ``dtype`` (imports pyarrow)."""
    d, value = _forward("to_arrow", "arrow", dtype)
    return _convert("to_arrow", "arrow", value, d)


def _from_library(func: str, target: Target, argument: str, value: Any,
                  cls: str) -> SimpleDType:
    """from_arrow/from_torch: ``value`` must be an instance of the library's
    class ``cls``."""
    module = _import(target)
    if not _is(value, getattr(module, cls)):
        raise TypeError(
            f"{func}: {argument} must be a {_library(target)}.{cls}, got {_shown(value)!r}"
        )
    if target == "arrow" and not _own_arrow_type(module, value):
        # A DataType subclass written in Python (an extension type): its
        # hash and equality are its own, and no mapping names one.
        raise NoEquivalentError(
            f"{func}: no stride-weave dtype is the equivalent of the extension "
            f"type of class {_type_name(value)}"
        )
    return _backward(func, target, value, value)


def from_arrow(arrow_type: Any) -> SimpleDType:
    """The stride-weave dtype equivalent to a ``pyarrow.DataType``."""
    return _from_library("from_arrow", "arrow", "arrow_type", arrow_type, "DataType")


def to_buffer_format(dtype: SimpleDType) -> str:
    """The PEP 3118 buffer format (``struct`` code) of ``dtype``, in native
    byte order."""
    value: str = _forward("to_buffer_format", "buffer_format", dtype)[1]
    return value


def from_buffer_format(format: str) -> SimpleDType:
    """The stride-weave dtype of a one-item PEP 3118 format, such as
    ``memoryview(...).format``: any code of the same kind and size matches
    (``"l"`` and ``"q"`` are both Int64 where both are 8 bytes)."""
    fmt = _format_argument("from_buffer_format", format)
    return _backward("from_buffer_format", "buffer_format",
                     _buffer_key("from_buffer_format", fmt), fmt)


def to_torch(dtype: SimpleDType) -> TorchDType:
    """The ``torch.dtype`` equivalent to ``dtype`` (imports torch).
    ``E2M1`` gives ``torch.float4_e2m1fn_x2``: two values per element."""
    d, value = _forward("to_torch", "torch", dtype)
    return cast("TorchDType", _convert("to_torch", "torch", value, d))


def from_torch(torch_dtype: Any) -> SimpleDType:
    """The stride-weave dtype equivalent to a ``torch.dtype``."""
    return _from_library("from_torch", "torch", "torch_dtype", torch_dtype, "dtype")


# ---- the dtype of an array --------------------------------------------------

_CAPSULE: type = type(_dtypes._C_API)


def dtype_of(obj: object) -> SimpleDType:
    """The stride-weave dtype of the elements of ``obj``: a numpy array (or
    scalar), a torch tensor, a pyarrow ``Array`` or ``ChunkedArray``, any
    other object with ``__dlpack__``, or a DLPack capsule (what
    ``__dlpack__()`` returns, read in C, so no library is needed; it is
    neither consumed nor renamed).

    numpy, torch and Arrow objects are read through their own library's
    dtype (a subclass's ``dtype`` property is not consulted); any other
    object is asked for a capsule with ``obj.__dlpack__()``. A DLPack
    data type of a sub-byte code whose lanes fill one byte, such as
    torch's ``float4_e2m1fn_x2`` (code 17, 4 bits, 2 lanes), is its packed
    element format (``E2M1``).

    NoEquivalentError when no stride-weave dtype is the equivalent;
    TypeError for anything else (and when ``__dlpack__()`` returns
    something that is not a capsule); ValueError when ``__dlpack__()``
    raises, or the capsule is not a valid DLPack tensor.
    """
    if type(obj) is _CAPSULE:
        return _from_capsule("dtype_of", obj)
    np = sys.modules.get("numpy")
    if np is not None:
        for cls in (np.ndarray, np.generic):
            if _is(obj, cls):
                return _from_numpy_dtype("dtype_of", cls.dtype.__get__(obj))
    torch = sys.modules.get("torch")
    if torch is not None and _is(obj, torch.Tensor):
        # torch.Tensor's own getter (a subclass may still answer through
        # __torch_function__: what it returns is checked).
        dt = torch.Tensor.dtype.__get__(obj)
        if not _is(dt, torch.dtype):
            raise TypeError(f"dtype_of: the tensor's dtype is not a torch.dtype, got "
                            f"an object of type {_type_name(dt)}")
        return _backward("dtype_of", "torch", dt, dt)
    pyarrow = sys.modules.get("pyarrow")
    if pyarrow is not None:
        for cls in (pyarrow.Array, pyarrow.ChunkedArray):
            if _is(obj, cls):
                return _from_library("dtype_of", "arrow", "obj's type",
                                     cls.type.__get__(obj), "DataType")
    return _from_capsule("dtype_of", _exported(obj))


def _exported(obj: object) -> object:
    """The capsule ``obj.__dlpack__()`` returns."""
    try:
        method = getattr(obj, "__dlpack__", None)
        capsule = None if method is None else method()
    except Exception as exc:
        raise ValueError(f"dtype_of: obj.__dlpack__() of a {_type_name(obj)} raised "
                         f"{_type_name(exc)}") from exc
    if method is None:
        raise TypeError(f"dtype_of: obj must be a numpy, torch or Arrow array, an object "
                        f"with __dlpack__ or a DLPack capsule, got an object of type "
                        f"{_type_name(obj)}")
    if type(capsule) is not _CAPSULE:
        raise TypeError(f"dtype_of: obj.__dlpack__() of a {_type_name(obj)} must return "
                        f"a DLPack capsule, got an object of type {_type_name(capsule)}")
    return capsule


def _from_capsule(func: str, capsule: object) -> SimpleDType:
    try:
        code, bits, lanes = _dlpack_dtype(capsule)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{func}: " + str(exc).removeprefix("_dlpack_dtype: ")) from None
    if lanes > 1 and bits < 8 and bits * lanes == 8:
        lanes = 1   # sub-byte values packed in one byte: the element format
    key = (code, bits, lanes)
    return _backward(func, "dlpack", key, _dlpack_record(key))


# ---- block-scaled formats ---------------------------------------------------

# The conversion of each target, in the order of TARGETS.
_CONVERTERS: tuple[Callable[[SimpleDType], Any], ...] = (
    to_numpy, to_dlpack, to_arrow, to_buffer_format, to_torch)


@overload
def planes(dtype: BlockScaledDType, target: Literal["numpy"]) -> tuple[Plane[NumpyDType], ...]: ...
@overload
def planes(dtype: BlockScaledDType, target: Literal["dlpack"]) -> tuple[Plane[DLPackDType], ...]: ...
@overload
def planes(dtype: BlockScaledDType, target: Literal["arrow"]) -> tuple[Plane[ArrowType], ...]: ...
@overload
def planes(dtype: BlockScaledDType,
           target: Literal["buffer_format"]) -> tuple[Plane[str], ...]: ...
@overload
def planes(dtype: BlockScaledDType, target: Literal["torch"]) -> tuple[Plane[TorchDType], ...]: ...
@overload
def planes(dtype: BlockScaledDType, target: Target) -> tuple[Plane[Any], ...]: ...
@overload
def planes(dtype: BlockScaledDType,
           target: Callable[[SimpleDType], F]) -> tuple[Plane[F], ...]: ...
def planes(dtype: BlockScaledDType,
           target: Target | Callable[[SimpleDType], Any]) -> tuple[Plane[Any], ...]:
    """The planes of a block-scaled format converted to ``target``: the
    element plane, then one scale plane per level (innermost first) with
    its block, enough to allocate each plane. NoEquivalentError when a plane
    has no equivalent in ``target``.

    ``target`` is one of :data:`TARGETS`, or any function of a simple dtype:
    ``planes(DType.MXFP4, numerics.numeric_info)`` gives each plane's
    numeric record.
    """
    if not _is(dtype, BlockScaledDType):
        raise TypeError(f"planes: dtype must be a BlockScaledDType, got {_shown(dtype)!r}")
    name = _exact_str(target)
    expected = f"one of {TARGETS} or a function of a SimpleDType"
    convert: Callable[[SimpleDType], Any]
    if name is not None:
        if name not in TARGETS:
            raise ValueError(f"planes: target must be {expected}, got {name!r}")
        convert = _CONVERTERS[TARGETS.index(name)]
    elif callable(target):
        convert = target
    else:
        raise TypeError(f"planes: target must be {expected}, got {_shown(target)!r}")
    element = dtype.element
    first = tuple.__new__(Plane, ("element", None, element, None, convert(element)))
    return (first,) + tuple(
        tuple.__new__(Plane, ("scale", i, level.scale, level.block, convert(level.scale)))
        for i, level in enumerate(dtype.levels))


# ---- the built-ins and the packs ----------------------------------------------

def _declared_as(d: SimpleDType, data: tuple[Any, ...]) -> bool | None:
    """Whether the registered dtype ``d`` has the prepared mapping ``data``
    (True), another one (False) or none (None)."""
    existing = _data(d)
    if existing is _NO_DATA:
        return None
    return all(_same(a, b) for a, b in zip(existing, data))


def _declare_builtins() -> None:
    c = DLDataTypeCode
    for dtype, given in (
        (DType.Bool, ("bool", (c.kDLBool, 8), None, "?", "bool")),
        (DType.Int8, ("int8", (c.kDLInt, 8), "int8", "b", "int8")),
        (DType.Int32, ("int32", (c.kDLInt, 32), "int32", "i", "int32")),
        (DType.Float32, ("float32", (c.kDLFloat, 32), "float32", "f", "float32")),
        (DType.Float64, ("float64", (c.kDLFloat, 64), "float64", "d", "float64")),
        (DType.E8M0, ("float8_e8m0fnu", (c.kDLFloat8_e8m0fnu, 8), None, None,
                      "float8_e8m0fnu")),
        (DType.E5M2, ("float8_e5m2", (c.kDLFloat8_e5m2, 8), None, None, "float8_e5m2")),
        (DType.E4M3, ("float8_e4m3fn", (c.kDLFloat8_e4m3fn, 8), None, None,
                      "float8_e4m3fn")),
        (DType.E3M2, ("float6_e3m2fn", (c.kDLFloat6_e3m2fn, 6), None, None, None)),
        (DType.E2M3, ("float6_e2m3fn", (c.kDLFloat6_e2m3fn, 6), None, None, None)),
        (DType.E2M1, ("float4_e2m1fn", (c.kDLFloat4_e2m1fn, 4), None, None,
                      "float4_e2m1fn_x2")),
    ):
        _publish(dtype, _prepare(dtype.name, dtype.bits, given, check_now=False), alias=False)


_declare_builtins()
