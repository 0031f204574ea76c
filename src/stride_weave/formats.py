"""An opt-in pack of common formats: ``import stride_weave.formats``.

Importing this module registers, as ordinary extensions reached through
``DType.from_name()`` and this module's attributes (never as ``DType``
attributes, which hold only the built-ins):

================  ========  ==========  ============================================
name              bits      category    encoding
================  ========  ==========  ============================================
``Float16``       16        Floating    IEEE 754 binary16
``BFloat16``      16        Floating    bfloat16 (binary32's exponent, 7-bit mantissa)
``E4M3FNUZ``      8         Floating    float8_e4m3fnuz (max 240, NaN is 0x80)
``E5M2FNUZ``      8         Floating    float8_e5m2fnuz (max 57344, NaN is 0x80)
``Int16``         16        Integer     two's complement
``Int64``         64        Integer     two's complement
``Int4``          4         Integer     two's complement
``UInt8``         8         Integer     unsigned binary
``UInt16``        16        Integer     unsigned binary
``UInt32``        32        Integer     unsigned binary
``UInt64``        64        Integer     unsigned binary
``UInt4``         4         Integer     unsigned binary
``Complex64``     64        Complex     two binary32 (real, imaginary)
``Complex128``    128       Complex     two binary64 (real, imaginary)
================  ========  ==========  ============================================

``Complex`` is a category of this pack, directly under ``DType.Any``. Each
format has its numeric record (:mod:`stride_weave.numerics`) and its
foreign equivalents (:mod:`stride_weave.interop`). Importing the pack also
declares its promotion edges into the default lattice (``PROMOTIONS``), so
``promote_types(Int8, UInt8)`` is ``Int16``; ``Int4``, ``UInt4`` and the
fnuz formats take part in no implicit promotion. The names are taken for
the whole process once the pack is imported; importing it again (or
reloading it) finds the registered descriptors and checks that they are the
pack's, and raises ValueError if another definition holds one of its names.
"""

from __future__ import annotations

from stride_weave._dtypes import DType, DTypeCategory, SimpleDType, declare_promotions
from stride_weave.interop import DLDataTypeCode as _C
from stride_weave.interop import _declare
from stride_weave.numerics import NanEncoding, NumericInfo, register_numeric_info

__all__ = [
    "Complex",
    "Float16",
    "BFloat16",
    "E4M3FNUZ",
    "E5M2FNUZ",
    "Int16",
    "Int64",
    "Int4",
    "UInt8",
    "UInt16",
    "UInt32",
    "UInt64",
    "UInt4",
    "Complex64",
    "Complex128",
    "FORMATS",
    "PROMOTIONS",
]


def _existing(name: str) -> DType | None:
    try:
        return DType.from_name(name)
    except LookupError:
        return None


def _category(name: str, supertype: DTypeCategory) -> DTypeCategory:
    found = _existing(name)
    if found is None:
        return DTypeCategory(name, supertype=supertype)
    if not isinstance(found, DTypeCategory) or found.supertype is not supertype:
        raise ValueError(
            f"stride_weave.formats: the name {name!r} is already registered as "
            f"{found!r}, not as this pack's category under {supertype.name}"
        )
    return found


def _simple(name: str, bits: int, supertype: DTypeCategory) -> SimpleDType:
    found = _existing(name)
    if found is None:
        return SimpleDType(name, bits=bits, supertype=supertype)
    if (not isinstance(found, SimpleDType) or found.bits != bits
            or found.supertype is not supertype):
        raise ValueError(
            f"stride_weave.formats: the name {name!r} is already registered as "
            f"{found!r}, not as this pack's {bits}-bit {supertype.name} format"
        )
    return found


Complex: DTypeCategory = _category("Complex", DType.Any)

_f = NumericInfo.floating
_ieee: NanEncoding = "ieee"
# name, bits, category, numeric record, equivalents (numpy, dlpack, arrow,
# buffer format, torch).
_SPECS: tuple[tuple[str, int, DTypeCategory, NumericInfo,
                     tuple[str | None, tuple[int, int] | None, str | None, str | None,
                           str | None]], ...] = (
    ("Float16", 16, DType.Floating,
     _f("ieee754_binary16", exponent_bits=5, mantissa_bits=10, bias=15, nan_encoding=_ieee),
     ("float16", (_C.kDLFloat, 16), "float16", "e", "float16")),
    ("BFloat16", 16, DType.Floating,
     _f("bfloat16", exponent_bits=8, mantissa_bits=7, bias=127, nan_encoding=_ieee),
     ("bfloat16", (_C.kDLBfloat, 16), None, None, "bfloat16")),
    ("E4M3FNUZ", 8, DType.Floating,
     _f("float8_e4m3fnuz", exponent_bits=4, mantissa_bits=3, bias=8,
        nan_encoding="negative_zero"),
     ("float8_e4m3fnuz", (_C.kDLFloat8_e4m3fnuz, 8), None, None, "float8_e4m3fnuz")),
    ("E5M2FNUZ", 8, DType.Floating,
     _f("float8_e5m2fnuz", exponent_bits=5, mantissa_bits=2, bias=16,
        nan_encoding="negative_zero"),
     ("float8_e5m2fnuz", (_C.kDLFloat8_e5m2fnuz, 8), None, None, "float8_e5m2fnuz")),
    ("Int16", 16, DType.Integer, NumericInfo.integer(16, signed=True),
     ("int16", (_C.kDLInt, 16), "int16", "h", "int16")),
    ("Int64", 64, DType.Integer, NumericInfo.integer(64, signed=True),
     ("int64", (_C.kDLInt, 64), "int64", "q", "int64")),
    # torch.int4/uint4 are one-byte placeholders, not 4-bit storage: none.
    ("Int4", 4, DType.Integer, NumericInfo.integer(4, signed=True),
     ("int4", (_C.kDLInt, 4), None, None, None)),
    ("UInt8", 8, DType.Integer, NumericInfo.integer(8, signed=False),
     ("uint8", (_C.kDLUInt, 8), "uint8", "B", "uint8")),
    ("UInt16", 16, DType.Integer, NumericInfo.integer(16, signed=False),
     ("uint16", (_C.kDLUInt, 16), "uint16", "H", "uint16")),
    ("UInt32", 32, DType.Integer, NumericInfo.integer(32, signed=False),
     ("uint32", (_C.kDLUInt, 32), "uint32", "I", "uint32")),
    ("UInt64", 64, DType.Integer, NumericInfo.integer(64, signed=False),
     ("uint64", (_C.kDLUInt, 64), "uint64", "Q", "uint64")),
    ("UInt4", 4, DType.Integer, NumericInfo.integer(4, signed=False),
     ("uint4", (_C.kDLUInt, 4), None, None, None)),
    ("Complex64", 64, Complex,
     _f("complex64", exponent_bits=8, mantissa_bits=23, bias=127, nan_encoding=_ieee,
        complex=True),
     ("complex64", (_C.kDLComplex, 64), None, "Zf", "complex64")),
    ("Complex128", 128, Complex,
     _f("complex128", exponent_bits=11, mantissa_bits=52, bias=1023, nan_encoding=_ieee,
        complex=True),
     ("complex128", (_C.kDLComplex, 128), None, "Zd", "complex128")),
)


def _register() -> dict[str, SimpleDType]:
    registered = {}
    for name, bits, category, record, (numpy, dlpack, arrow, buffer_format,
                                       torch) in _SPECS:
        dtype = _simple(name, bits, category)
        register_numeric_info(dtype, record)
        # As register_mapping, without resolving the names now: importing the
        # pack imports no foreign library.
        _declare(dtype, {"numpy": numpy, "dlpack": dlpack, "arrow": arrow,
                         "buffer_format": buffer_format, "torch": torch},
                 check_now=False)
        registered[name] = dtype
    return registered


_registered = _register()

Float16: SimpleDType = _registered["Float16"]
BFloat16: SimpleDType = _registered["BFloat16"]
E4M3FNUZ: SimpleDType = _registered["E4M3FNUZ"]
E5M2FNUZ: SimpleDType = _registered["E5M2FNUZ"]
Int16: SimpleDType = _registered["Int16"]
Int64: SimpleDType = _registered["Int64"]
Int4: SimpleDType = _registered["Int4"]
UInt8: SimpleDType = _registered["UInt8"]
UInt16: SimpleDType = _registered["UInt16"]
UInt32: SimpleDType = _registered["UInt32"]
UInt64: SimpleDType = _registered["UInt64"]
UInt4: SimpleDType = _registered["UInt4"]
Complex64: SimpleDType = _registered["Complex64"]
Complex128: SimpleDType = _registered["Complex128"]

#: Every format of the pack, in the order of the table above.
FORMATS: tuple[SimpleDType, ...] = tuple(_registered.values())

#: The pack's edges of the default promotion lattice, (lower, upper) pairs,
#: declared together when the pack is imported. With the built-in edges
#: (Bool -> Int8 -> Int32, Float32 -> Float64) they make the lattice of
#: docs/relations.md.
PROMOTIONS: tuple[tuple[SimpleDType, SimpleDType], ...] = (
    (DType.Bool, UInt8),
    (DType.Int8, Int16),
    (Int16, DType.Int32),
    (DType.Int32, Int64),
    (UInt8, UInt16),
    (UInt16, UInt32),
    (UInt32, UInt64),
    (UInt8, Int16),
    (UInt16, DType.Int32),
    (UInt32, Int64),
    (Float16, DType.Float32),
    (BFloat16, DType.Float32),
    (DType.Float32, Complex64),
    (Complex64, Complex128),
    (DType.Float64, Complex128),
)

declare_promotions(PROMOTIONS)
