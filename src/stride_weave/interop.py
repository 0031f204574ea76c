"""Conversions between stride-weave dtypes and other libraries' dtypes.

Each simple dtype may have an equivalent in six places:

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
:class:`NoEquivalentError` (a LookupError) naming both sides; an argument of
the wrong type is a TypeError. Block-scaled formats have no single foreign
dtype: :func:`planes` converts them plane by plane, with the block sizes.

The foreign libraries are imported only when a conversion needs them, so
importing this module imports none of them. Extension dtypes declare their
equivalents once with :func:`register_mapping`; the conversions then use
them in both directions. The optional pack :mod:`stride_weave.formats`
registers common formats (Float16, BFloat16, UInt8, ...) this way.
"""

from __future__ import annotations

import enum
import importlib
import struct
import sys
import threading
from dataclasses import dataclass, fields
from collections.abc import Callable
from typing import Any, Literal, NamedTuple

from stride_weave._dtypes import BlockScaledDType, DType, SimpleDType, WholeExtent

__all__ = [
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
]


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


@dataclass(frozen=True, slots=True)
class Mapping:
    """The declared equivalents of one simple dtype, by name (``None``
    where there is none): the numpy dtype name, the DLPack triple, the
    pyarrow factory name (``pyarrow.float16``...), the PEP 3118 format and
    the torch dtype name (``torch.float8_e4m3fn`` is ``"float8_e4m3fn"``)."""

    numpy: str | None = None
    dlpack: DLPackDType | None = None
    arrow: str | None = None
    buffer_format: str | None = None
    torch: str | None = None

    def as_dict(self) -> dict[str, object]:
        """The mapping as JSON-ready values (the DLPack triple as a list)."""
        return {f.name: (list(v) if isinstance(v, tuple) else v)
                for f in fields(self) for v in (getattr(self, f.name),)}


class Plane(NamedTuple):
    """One plane of a block-scaled format, converted to a target library.

    ``role`` is ``"element"`` or ``"scale"``; ``level`` is the scale level
    (innermost 0; ``None`` for the element plane); ``block`` is how many
    coordinates of the level below share one scale (an int, or ``Whole``;
    ``None`` for the element plane); ``foreign`` is the target library's
    dtype for the plane."""

    role: Literal["element", "scale"]
    level: int | None
    dtype: SimpleDType
    block: int | WholeExtent | None
    foreign: Any


_lock = threading.RLock()
_mappings: dict[int, tuple[SimpleDType, Mapping]] = {}
# Reverse tables per target, rebuilt after each declaration: foreign key -> dtype.
_reverse: dict[str, dict[Any, SimpleDType]] = {}
_resolved: dict[tuple[str, str], Any] = {}

_LIBRARY = {"numpy": "numpy", "arrow": "pyarrow", "torch": "torch"}
# pyarrow types whose str() is not their factory's name.
_ARROW_FACTORY = {"halffloat": "float16", "float": "float32", "double": "float64",
                  "bool": "bool_"}


def _import(target: str) -> Any:
    module = _LIBRARY[target]
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"converting to or from {target} needs {module}, which is not "
            f"importable: {exc}"
        ) from exc


def _simple(func: str, dtype: object, target: str) -> SimpleDType:
    if isinstance(dtype, BlockScaledDType):
        shown = repr(target) if target in TARGETS else "target"
        raise TypeError(
            f"{func}: {dtype.name} is block-scaled and has no single {target} "
            f"dtype; convert it plane by plane with planes({dtype.name}, {shown})"
        )
    if not isinstance(dtype, SimpleDType):
        raise TypeError(f"{func}: dtype must be a SimpleDType, got {dtype!r}")
    return dtype


def mapping(dtype: SimpleDType) -> Mapping:
    """The declared equivalents of a simple dtype (all ``None`` when it has
    none)."""
    _simple("mapping", dtype, "foreign")
    entry = _mappings.get(id(dtype))
    return entry[1] if entry is not None and entry[0] is dtype else Mapping()


# ---- buffer formats -------------------------------------------------------

_BUFFER_KINDS = {**dict.fromkeys("bhilqn", "int"), **dict.fromkeys("BHILQN", "uint"),
                 **dict.fromkeys("efd", "float"), "?": "bool"}


def _buffer_key(func: str, fmt: object) -> tuple[str, int]:
    """(kind, size in bytes) of a one-item PEP 3118 format of a number or
    bool in native byte order; NoEquivalentError for any other format,
    TypeError for a non-str."""
    if not isinstance(fmt, str):
        raise TypeError(f"{func}: format must be a str, got {fmt!r}")
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
    if len(code) != 1 or code not in _BUFFER_KINDS:
        raise NoEquivalentError(
            f"{func}: {fmt!r} is not a single scalar format of a numeric or "
            "bool type, so no stride-weave dtype is its equivalent"
        )
    kind = _BUFFER_KINDS[code]
    if complex_:
        if kind != "float":
            raise NoEquivalentError(f"{func}: {fmt!r} is not a complex float format")
        kind = "complex"
    if code in "nN" and standard:
        raise ValueError(f"{func}: {fmt!r}: {code!r} is only valid in native mode ('@')")
    size = struct.calcsize(("=" if standard else "@") + code)
    return kind, size * (2 if complex_ else 1)


# ---- declaring ------------------------------------------------------------

def _normalize(target: str, value: Any, dtype: SimpleDType, check_now: bool) -> Any:
    """The stored form of one declared equivalent (validated)."""
    where = f"register_mapping({dtype.name}, {target}=...)"
    if target == "dlpack":
        if not (isinstance(value, tuple) and len(value) in (2, 3)
                and all(type(v) is int or isinstance(v, enum.IntEnum) for v in value)):
            raise TypeError(
                f"{where}: expected a (code, bits, lanes) tuple of ints, got {value!r}"
            )
        triple = DLPackDType(*(int(v) for v in value))
        if not (0 <= triple.code <= 255 and 1 <= triple.bits <= 255
                and 1 <= triple.lanes <= 65535):
            raise ValueError(
                f"{where}: expected code 0-255, bits 1-255 and lanes 1-65535, "
                f"got {tuple(triple)}"
            )
        if triple.bits * triple.lanes != dtype.bits:
            raise ValueError(
                f"{where}: the widths must agree: {dtype.name} has {dtype.bits} "
                f"bits, {tuple(triple)} has {triple.bits * triple.lanes}"
            )
        return triple
    if target == "buffer_format":
        kind, size = _buffer_key(where, value)
        if size * 8 != dtype.bits:
            raise ValueError(
                f"{where}: the widths must agree: {dtype.name} has {dtype.bits} "
                f"bits, {value!r} has {size * 8}"
            )
        return value
    if isinstance(value, str):
        name = value
    elif target == "numpy" and "numpy" in sys.modules:
        try:
            dt = sys.modules["numpy"].dtype(value)
        except TypeError:
            raise TypeError(
                f"{where}: expected a numpy dtype or its name as a str, got {value!r}"
            ) from None
        if not dt.isnative:
            raise ValueError(f"{where}: expected a native byte order numpy dtype, got {dt!r}")
        name = dt.name
    elif target == "arrow" and "pyarrow" in sys.modules and isinstance(
            value, sys.modules["pyarrow"].DataType):
        name = _ARROW_FACTORY.get(str(value), str(value))
    elif target == "torch" and "torch" in sys.modules and isinstance(
            value, sys.modules["torch"].dtype):
        name = str(value).removeprefix("torch.")
    else:
        raise TypeError(
            f"{where}: expected a {target} dtype or its name as a str, got {value!r}"
        )
    if not name:
        raise ValueError(f"{where}: expected a non-empty name, got {value!r}")
    if check_now and _LIBRARY[target] in sys.modules:
        # The library is here already: check the name and the width now. A
        # name that needs ml_dtypes when it is not installed is left to the
        # conversions (no such dtype can occur here).
        try:
            _check_width(target, name, dtype)
        except _Unavailable as exc:
            if not isinstance(exc.__cause__, ImportError):
                raise TypeError(f"{where}: {exc}") from None
    return name


class _Unavailable(TypeError):
    """The installed library has no dtype of this name (an older version,
    or ml_dtypes missing): the name's dtype cannot occur in this process."""


def _resolve(target: str, name: str) -> Any:
    """The foreign dtype that a stored name denotes (cached). _Unavailable
    when the installed library (or ml_dtypes, for numpy) lacks it; TypeError
    when the name denotes something that is not a dtype."""
    key = (target, name)
    found = _resolved.get(key)
    if found is not None:
        return found
    module = _import(target)
    try:
        if target == "numpy":
            try:
                found = module.dtype(name)
            except TypeError:
                ml_dtypes = importlib.import_module("ml_dtypes")
                found = module.dtype(getattr(ml_dtypes, name))
            if found.name != name:
                raise TypeError(f"numpy calls it {found.name!r}")
        elif target == "arrow":
            found = getattr(module, name)()
            if not isinstance(found, module.DataType):
                raise TypeError(f"pyarrow.{name}() is not a DataType")
        else:
            found = getattr(module, name)
            if not isinstance(found, module.dtype):
                raise TypeError(f"torch.{name} is not a torch.dtype")
    except (AttributeError, ImportError) as exc:
        raise _Unavailable(
            f"{name!r} does not name a {target} dtype here ({exc})") from exc
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name!r} does not name a {target} dtype: {exc}") from exc
    _resolved[key] = found
    return found


def _foreign_bits(target: str, foreign: Any, name: str) -> int:
    """The bits of stride-weave dtype values that one foreign item holds."""
    if target == "numpy":
        if foreign.kind in "bcmMOSUV" and not _is_ml_dtype(foreign):
            return int(foreign.itemsize) * 8
        # finfo/iinfo know the width of ml_dtypes' sub-byte formats, which
        # are stored one per byte.
        info = sys.modules.get("ml_dtypes") or sys.modules["numpy"]
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


def _is_ml_dtype(foreign: Any) -> bool:
    ml_dtypes = sys.modules.get("ml_dtypes")
    return ml_dtypes is not None and getattr(ml_dtypes, foreign.name, None) is foreign.type


def _check_width(target: str, name: str, dtype: SimpleDType) -> Any:
    foreign = _resolve(target, name)
    try:
        bits = _foreign_bits(target, foreign, name)
    except ValueError:
        bits = -1
    if bits != dtype.bits:
        raise ValueError(
            f"the {target} equivalent declared for {dtype.name}, {name!r}, holds "
            f"{bits} bits, not {dtype.bits}: the widths must agree"
        )
    return foreign


def _convert(func: str, target: str, name: str, dtype: SimpleDType) -> Any:
    """The foreign dtype of a forward conversion; NoEquivalentError when the
    installed library lacks it."""
    try:
        return _check_width(target, name, dtype)
    except _Unavailable as exc:
        raise NoEquivalentError(
            f"{func}: {dtype.name}'s {target} equivalent is not available with "
            f"the installed libraries: {exc}"
        ) from exc


def _reverse_key(target: str, value: Any) -> Any:
    if target == "buffer_format":
        return _buffer_key("register_mapping", value)
    return value


def register_mapping(
    dtype: SimpleDType,
    *,
    numpy: Any = None,
    dlpack: tuple[int, int] | tuple[int, int, int] | None = None,
    arrow: Any = None,
    buffer_format: str | None = None,
    torch: Any = None,
) -> Mapping:
    """Declare the foreign equivalents of the simple dtype ``dtype``.

    Each equivalent is optional: ``numpy`` a numpy dtype (or its name,
    ml_dtypes' names included); ``dlpack`` a ``(code, bits[, lanes])``
    triple; ``arrow`` a pyarrow type (or its factory name, ``"float16"``);
    ``buffer_format`` a PEP 3118 format; ``torch`` a torch dtype (or its
    name). Names let a module declare equivalents without importing the
    library.

    Validation: the widths must agree with ``dtype.bits`` (checked at once
    for DLPack and buffer formats, and for the others at once when their
    library is imported already, else by the first conversion that imports
    it, which then raises the ValueError); a foreign dtype already mapped to another
    stride-weave dtype is a ValueError (reverse lookups stay unambiguous).
    Declaring the same mapping again is harmless; a different one for a
    dtype that has one is a ValueError. A refused declaration changes
    nothing. Thread-safe. Returns the stored :class:`Mapping`.
    """
    given = {"numpy": numpy, "dlpack": dlpack, "arrow": arrow,
             "buffer_format": buffer_format, "torch": torch}
    return _declare(dtype, given, check_now=True)


def _declare(dtype: SimpleDType, given: dict[str, Any], *, check_now: bool) -> Mapping:
    """register_mapping's work. check_now=False (the built-ins and the
    formats pack, whose names the test suite checks against the libraries)
    resolves no name now, so declaring imports nothing."""
    _simple("register_mapping", dtype, "foreign")
    with _lock:
        declared = Mapping(**{t: _normalize(t, v, dtype, check_now)
                              for t, v in given.items() if v is not None})
        existing = _mappings.get(id(dtype))
        if existing is not None:
            if existing[1] == declared:
                return declared
            raise ValueError(
                f"register_mapping: {dtype.name} is already mapped to "
                f"{existing[1]!r}; got a different mapping, {declared!r}"
            )
        for target in TARGETS:
            value = getattr(declared, target)
            if value is None:
                continue
            key = _reverse_key(target, value)
            for other, theirs in _mappings.values():
                their = getattr(theirs, target)
                if their is not None and _reverse_key(target, their) == key:
                    raise ValueError(
                        f"register_mapping: {target} {value!r} is already the "
                        f"equivalent of {other.name}; it cannot also be "
                        f"{dtype.name}'s"
                    )
        _mappings[id(dtype)] = (dtype, declared)
        _reverse.clear()
        return declared


# ---- converting -----------------------------------------------------------

def _forward(func: str, target: Target, dtype: object) -> tuple[SimpleDType, Any]:
    d = _simple(func, dtype, target)
    value = getattr(mapping(d), target)
    if value is None:
        raise NoEquivalentError(f"{func}: {d.name} has no {target} equivalent")
    return d, value


def _reverse_table(target: Target) -> dict[Any, SimpleDType]:
    with _lock:
        table = _reverse.get(target)
        if table is None:
            table = {}
            for dtype, declared in _mappings.values():
                value = getattr(declared, target)
                if value is None:
                    continue
                if target in _LIBRARY:
                    try:
                        table[_check_width(target, value, dtype)] = dtype
                    except _Unavailable:
                        continue   # no such foreign dtype can be given here

                else:
                    table[_reverse_key(target, value)] = dtype
            _reverse[target] = table
        return table


def _backward(func: str, target: Target, key: Any, shown: object) -> SimpleDType:
    found = _reverse_table(target).get(key)
    if found is None:
        raise NoEquivalentError(
            f"{func}: no stride-weave dtype is the equivalent of {target} {shown!r}"
        )
    return found


def to_numpy(dtype: SimpleDType) -> Any:
    """The ``numpy.dtype`` equivalent to ``dtype`` (imports numpy, and
    ml_dtypes for its formats)."""
    d, name = _forward("to_numpy", "numpy", dtype)
    return _convert("to_numpy", "numpy", name, d)


def from_numpy(np_dtype: Any) -> SimpleDType:
    """The stride-weave dtype equivalent to a numpy dtype (or anything
    ``numpy.dtype()`` accepts). Non-native byte order has no equivalent."""
    np = _import("numpy")
    try:
        dt = np.dtype(np_dtype)
    except TypeError as exc:
        raise TypeError(
            f"from_numpy: np_dtype must be a numpy dtype or convertible to one, "
            f"got {np_dtype!r}"
        ) from exc
    if not dt.isnative:
        raise NoEquivalentError(
            f"from_numpy: {dt!r} is not in native byte order; stride-weave "
            "dtypes denote native-order values"
        )
    return _backward("from_numpy", "numpy", dt, dt)


def to_dlpack(dtype: SimpleDType) -> DLPackDType:
    """The DLPack ``(code, bits, lanes)`` of ``dtype``."""
    value: DLPackDType = _forward("to_dlpack", "dlpack", dtype)[1]
    return value


def from_dlpack(code: int, bits: int, lanes: int = 1) -> SimpleDType:
    """The stride-weave dtype of a DLPack ``DLDataType``."""
    for arg, value in (("code", code), ("bits", bits), ("lanes", lanes)):
        if type(value) is not int and not isinstance(value, enum.IntEnum):
            raise TypeError(f"from_dlpack: {arg} must be an int, got {value!r}")
    key = DLPackDType(int(code), int(bits), int(lanes))
    return _backward("from_dlpack", "dlpack", key, tuple(key))


def to_arrow(dtype: SimpleDType) -> Any:
    """The ``pyarrow.DataType`` equivalent to ``dtype`` (imports pyarrow)."""
    d, name = _forward("to_arrow", "arrow", dtype)
    return _convert("to_arrow", "arrow", name, d)


def _from_library(func: str, target: Target, argument: str, value: Any,
                  cls: str) -> SimpleDType:
    """from_arrow/from_torch: ``value`` must be an instance of the library's
    class ``cls``."""
    expected = getattr(_import(target), cls)
    if not isinstance(value, expected):
        raise TypeError(
            f"{func}: {argument} must be a {_LIBRARY[target]}.{cls}, got {value!r}"
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
    key = _buffer_key("from_buffer_format", format)
    return _backward("from_buffer_format", "buffer_format", key, format)


def to_torch(dtype: SimpleDType) -> Any:
    """The ``torch.dtype`` equivalent to ``dtype`` (imports torch).
    ``E2M1`` gives ``torch.float4_e2m1fn_x2``: two values per element."""
    d, name = _forward("to_torch", "torch", dtype)
    return _convert("to_torch", "torch", name, d)


def from_torch(torch_dtype: Any) -> SimpleDType:
    """The stride-weave dtype equivalent to a ``torch.dtype``."""
    return _from_library("from_torch", "torch", "torch_dtype", torch_dtype, "dtype")


_CONVERTERS: dict[str, Callable[[SimpleDType], Any]] = {"numpy": to_numpy, "dlpack": to_dlpack, "arrow": to_arrow,
               "buffer_format": to_buffer_format, "torch": to_torch}


def planes(dtype: BlockScaledDType,
           target: Target | Callable[[SimpleDType], Any]) -> tuple[Plane, ...]:
    """The planes of a block-scaled format converted to ``target``: the
    element plane, then one scale plane per level (innermost first) with
    its block, enough to allocate each plane. NoEquivalentError when a plane
    has no equivalent in ``target``.

    ``target`` is one of :data:`TARGETS`, or any function of a simple dtype:
    ``planes(DType.MXFP4, numerics.numeric_info)`` gives each plane's
    numeric record.
    """
    if not isinstance(dtype, BlockScaledDType):
        raise TypeError(f"planes: dtype must be a BlockScaledDType, got {dtype!r}")
    if callable(target):
        convert = target
    elif target in _CONVERTERS:
        convert = _CONVERTERS[target]
    else:
        raise ValueError(
            f"planes: target must be one of {TARGETS} or a function of a "
            f"SimpleDType, got {target!r}"
        )
    result = [Plane("element", None, dtype.element, None, convert(dtype.element))]
    for i, level in enumerate(dtype.levels):
        result.append(Plane("scale", i, level.scale, level.block, convert(level.scale)))
    return tuple(result)


# ---- the built-ins ----------------------------------------------------------

_C = DLDataTypeCode
_BUILTINS: tuple[tuple[SimpleDType, Mapping], ...] = (
    (DType.Bool, Mapping("bool", DLPackDType(_C.kDLBool, 8), None, "?", "bool")),
    (DType.Int8, Mapping("int8", DLPackDType(_C.kDLInt, 8), "int8", "b", "int8")),
    (DType.Int32, Mapping("int32", DLPackDType(_C.kDLInt, 32), "int32", "i", "int32")),
    (DType.Float32, Mapping("float32", DLPackDType(_C.kDLFloat, 32), "float32", "f",
                            "float32")),
    (DType.Float64, Mapping("float64", DLPackDType(_C.kDLFloat, 64), "float64", "d",
                            "float64")),
    (DType.E8M0, Mapping("float8_e8m0fnu", DLPackDType(_C.kDLFloat8_e8m0fnu, 8), None,
                         None, "float8_e8m0fnu")),
    (DType.E5M2, Mapping("float8_e5m2", DLPackDType(_C.kDLFloat8_e5m2, 8), None, None,
                         "float8_e5m2")),
    (DType.E4M3, Mapping("float8_e4m3fn", DLPackDType(_C.kDLFloat8_e4m3fn, 8), None,
                         None, "float8_e4m3fn")),
    (DType.E3M2, Mapping("float6_e3m2fn", DLPackDType(_C.kDLFloat6_e3m2fn, 6))),
    (DType.E2M3, Mapping("float6_e2m3fn", DLPackDType(_C.kDLFloat6_e2m3fn, 6))),
    (DType.E2M1, Mapping("float4_e2m1fn", DLPackDType(_C.kDLFloat4_e2m1fn, 4), None,
                         None, "float4_e2m1fn_x2")),
)
for _dtype, _mapping in _BUILTINS:
    _declare(_dtype, {f.name: getattr(_mapping, f.name) for f in fields(_mapping)},
             check_now=False)
del _dtype, _mapping
