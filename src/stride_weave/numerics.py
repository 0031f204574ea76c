"""The numeric meaning of simple dtypes: ``finfo``/``iinfo``-like records.

A :class:`~stride_weave.dtypes.SimpleDType` names a fixed-width encoding;
this module says which one. Every built-in simple dtype has a record:

- ``Bool``: one byte holding 0 or 1;
- ``Int8``, ``Int32``: two's complement integers;
- ``Float32``, ``Float64``: IEEE 754 binary32 and binary64;
- ``E8M0``: the OCP Microscaling (MX) v1.0 scale format e8m0fnu, an
  unsigned power of two; ``0xFF`` is NaN; no zero, no infinity;
- ``E5M2``: OCP MX v1.0 e5m2, IEEE-like, with infinities and NaNs;
- ``E4M3``: OCP MX v1.0 e4m3fn: max 448, no infinities, ``S.1111.111`` is NaN;
- ``E3M2``, ``E2M3``, ``E2M1``: OCP MX v1.0 e3m2fn, e2m3fn and e2m1fn,
  finite only (no infinity, no NaN).

The records are metadata kept beside the descriptors (descriptors are
immutable); they are not part of a descriptor's ``structure()`` and do not
travel in pickles. Extension authors attach a record to their own simple
dtypes with :func:`register_numeric_info`, built with
:meth:`NumericInfo.floating`, :meth:`NumericInfo.integer` or
:meth:`NumericInfo.boolean`.

Query with :func:`numeric_info` (any simple dtype that has a record),
:func:`finfo` (floating-point and complex formats) or :func:`iinfo`
(integers). Block-scaled formats have no record of their own: query their
``element`` and each level's ``scale``.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import Literal

from stride_weave._dtypes import DType, SimpleDType

__all__ = [
    "NumericInfo",
    "NanEncoding",
    "numeric_info",
    "finfo",
    "iinfo",
    "register_numeric_info",
]

#: How a floating-point format encodes NaN:
#:
#: - ``"ieee"``: exponent all ones with a non-zero mantissa (and infinities
#:   at exponent all ones, mantissa zero);
#: - ``"all_ones"``: only exponent and mantissa all ones, one pattern per
#:   sign (e4m3fn; the unsigned e8m0fnu has the single pattern ``0xFF``);
#: - ``"negative_zero"``: the pattern of negative zero, sign bit alone
#:   (the ``fnuz`` formats, which have no negative zero);
#: - ``"none"``: the format has no NaN.
NanEncoding = Literal["ieee", "all_ones", "negative_zero", "none"]

_NAN_ENCODINGS = ("ieee", "all_ones", "negative_zero", "none")
_KINDS = ("float", "complex", "int", "bool")


@dataclass(frozen=True, slots=True, kw_only=True)
class NumericInfo:
    """What a simple dtype's bits mean (read-only).

    ``kind`` is ``"float"``, ``"complex"``, ``"int"`` or ``"bool"``;
    ``encoding`` names the format (``"ieee754_binary32"``,
    ``"float8_e4m3fn"``, ``"int8"``, ...); ``bits`` is the width of one
    value. ``min`` and ``max`` are the most negative (for an unsigned
    floating-point format: the smallest) and the largest finite values.

    The floating-point fields (``exponent_bits``, ``mantissa_bits``
    (stored fraction bits, without the implicit bit), ``bias``,
    ``smallest_normal``, ``smallest_subnormal``, ``eps``) are ``None`` for
    integers and booleans. A complex record describes each of its two
    components in those fields, while ``bits`` is the whole value's width.
    ``smallest_subnormal`` equals ``smallest_normal`` for a format without
    subnormals (e8m0fnu). Build records with :meth:`floating`,
    :meth:`integer` and :meth:`boolean`, which derive every value from the
    format's parameters.
    """

    kind: Literal["float", "complex", "int", "bool"]
    encoding: str
    bits: int
    signed: bool
    min: float | int
    max: float | int
    exponent_bits: int | None = None
    mantissa_bits: int | None = None
    bias: int | None = None
    smallest_normal: float | None = None
    smallest_subnormal: float | None = None
    eps: float | None = None
    has_inf: bool = False
    has_nan: bool = False
    nan_encoding: NanEncoding = "none"

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ValueError(
                f"NumericInfo: kind must be one of {_KINDS}, got {self.kind!r}"
            )
        if not isinstance(self.encoding, str) or not self.encoding:
            raise TypeError(
                f"NumericInfo: encoding must be a non-empty str, got {self.encoding!r}"
            )
        if type(self.bits) is not int or self.bits <= 0:
            raise ValueError(
                f"NumericInfo: bits must be a positive int, got {self.bits!r}"
            )
        if self.nan_encoding not in _NAN_ENCODINGS:
            raise ValueError(
                f"NumericInfo: nan_encoding must be one of {_NAN_ENCODINGS}, "
                f"got {self.nan_encoding!r}"
            )
        if self.has_nan != (self.nan_encoding != "none"):
            raise ValueError(
                f"NumericInfo: has_nan={self.has_nan!r} contradicts "
                f"nan_encoding={self.nan_encoding!r}"
            )

    @classmethod
    def floating(
        cls,
        encoding: str,
        *,
        exponent_bits: int,
        mantissa_bits: int,
        bias: int,
        nan_encoding: NanEncoding,
        signed: bool = True,
        complex: bool = False,
    ) -> NumericInfo:
        """The record of a binary floating-point format.

        ``nan_encoding`` also fixes which patterns are finite: ``"ieee"``
        reserves the all-ones exponent for infinities and NaNs;
        ``"all_ones"`` reserves only the all-ones pattern (no infinities);
        ``"negative_zero"`` and ``"none"`` leave every exponent finite (no
        infinities). An unsigned format with no mantissa bits (e8m0fnu) has
        no zero and no subnormals. With ``complex=True`` the record
        describes a complex number of two such components.
        """
        for arg, value in (("exponent_bits", exponent_bits), ("mantissa_bits", mantissa_bits),
                           ("bias", bias)):
            if type(value) is not int:
                raise TypeError(
                    f"NumericInfo.floating: {arg} must be an int, got {value!r}"
                )
        if exponent_bits < 1 or mantissa_bits < 0:
            raise ValueError(
                "NumericInfo.floating: expected exponent_bits >= 1 and "
                f"mantissa_bits >= 0, got {exponent_bits} and {mantissa_bits}"
            )
        if nan_encoding not in _NAN_ENCODINGS:
            raise ValueError(
                f"NumericInfo.floating: nan_encoding must be one of "
                f"{_NAN_ENCODINGS}, got {nan_encoding!r}"
            )
        top = (1 << exponent_bits) - 1          # the all-ones exponent field
        fraction = 1.0 - math.ldexp(1.0, -mantissa_bits)   # all-ones mantissa
        if nan_encoding == "ieee":
            max_exponent, max_fraction = top - 1, fraction
        elif nan_encoding == "all_ones" and mantissa_bits > 0:
            max_exponent = top
            max_fraction = fraction - math.ldexp(1.0, -mantissa_bits)
        elif nan_encoding == "all_ones":       # no mantissa: 0xFF alone is NaN
            max_exponent, max_fraction = top - 1, 0.0
        else:
            max_exponent, max_fraction = top, fraction
        largest = math.ldexp(1.0 + max_fraction, max_exponent - bias)
        unsigned_pow2 = not signed and mantissa_bits == 0
        # Exponent field 0 holds subnormals, except in a format with no
        # mantissa, where it is the normal 2**-bias.
        smallest_normal = math.ldexp(1.0, -bias if unsigned_pow2 else 1 - bias)
        smallest_subnormal = (
            smallest_normal if unsigned_pow2 else math.ldexp(1.0, 1 - bias - mantissa_bits)
        )
        width = (1 if signed else 0) + exponent_bits + mantissa_bits
        return cls(
            kind="complex" if complex else "float",
            encoding=encoding,
            bits=2 * width if complex else width,
            signed=signed,
            min=-largest if signed else smallest_normal,
            max=largest,
            exponent_bits=exponent_bits,
            mantissa_bits=mantissa_bits,
            bias=bias,
            smallest_normal=smallest_normal,
            smallest_subnormal=smallest_subnormal,
            eps=math.ldexp(1.0, -mantissa_bits),
            has_inf=nan_encoding == "ieee",
            has_nan=nan_encoding != "none",
            nan_encoding=nan_encoding,
        )

    @classmethod
    def integer(cls, bits: int, *, signed: bool) -> NumericInfo:
        """The record of a ``bits``-wide integer: two's complement when
        ``signed``, plain binary otherwise."""
        if type(bits) is not int or bits <= 0:
            raise ValueError(
                f"NumericInfo.integer: bits must be a positive int, got {bits!r}"
            )
        return cls(
            kind="int",
            encoding=f"{'' if signed else 'u'}int{bits}",
            bits=bits,
            signed=signed,
            min=-(1 << (bits - 1)) if signed else 0,
            max=(1 << (bits - 1)) - 1 if signed else (1 << bits) - 1,
        )

    @classmethod
    def boolean(cls, bits: int = 8) -> NumericInfo:
        """The record of a boolean stored in ``bits`` bits, 0 (false) or 1
        (true)."""
        if type(bits) is not int or bits <= 0:
            raise ValueError(
                f"NumericInfo.boolean: bits must be a positive int, got {bits!r}"
            )
        return cls(kind="bool", encoding=f"bool{bits}", bits=bits, signed=False,
                   min=0, max=1)


_lock = threading.Lock()
_records: dict[int, tuple[SimpleDType, NumericInfo]] = {}


def _simple(func: str, dtype: object) -> SimpleDType:
    if not isinstance(dtype, SimpleDType):
        raise TypeError(
            f"{func}: dtype must be a registered SimpleDType, got {dtype!r}"
        )
    return dtype


def register_numeric_info(dtype: SimpleDType, record: NumericInfo) -> None:
    """Attach ``record`` to the simple dtype ``dtype``, for good.

    ``record.bits`` must equal ``dtype.bits``. Declaring the same (equal)
    record again is harmless; a different record for a dtype that already
    has one is a ValueError, and leaves the existing record in place.
    Thread-safe.
    """
    _simple("register_numeric_info", dtype)
    if not isinstance(record, NumericInfo):
        raise TypeError(
            f"register_numeric_info: record must be a NumericInfo, got {record!r}"
        )
    if record.bits != dtype.bits:
        raise ValueError(
            f"register_numeric_info: record.bits must equal the width of "
            f"{dtype.name} ({dtype.bits}), got {record.bits}"
        )
    with _lock:
        existing = _records.get(id(dtype))
        if existing is not None:
            if existing[1] != record:
                raise ValueError(
                    f"register_numeric_info: {dtype.name} already has the "
                    f"record {existing[1]!r}; got a different one, {record!r}"
                )
            return
        _records[id(dtype)] = (dtype, record)


def numeric_info(dtype: SimpleDType) -> NumericInfo:
    """The numeric record of a simple dtype.

    TypeError when ``dtype`` is not a SimpleDType (a block-scaled format's
    element and scales are simple dtypes: query those); LookupError when no
    record was registered for it.
    """
    _simple("numeric_info", dtype)
    entry = _records.get(id(dtype))
    if entry is None or entry[0] is not dtype:
        raise LookupError(
            f"numeric_info: no numeric record is registered for {dtype.name} "
            "(register_numeric_info attaches one)"
        )
    return entry[1]


def finfo(dtype: SimpleDType) -> NumericInfo:
    """The record of a floating-point (or complex) simple dtype, like
    ``numpy.finfo``. TypeError for an integer or boolean dtype."""
    record = numeric_info(dtype)
    if record.kind not in ("float", "complex"):
        raise TypeError(
            f"finfo: expected a floating-point dtype, got {dtype.name}, "
            f"whose kind is {record.kind!r} (use iinfo or numeric_info)"
        )
    return record


def iinfo(dtype: SimpleDType) -> NumericInfo:
    """The record of an integer simple dtype, like ``numpy.iinfo``.
    TypeError for a floating-point or boolean dtype."""
    record = numeric_info(dtype)
    if record.kind != "int":
        raise TypeError(
            f"iinfo: expected an integer dtype, got {dtype.name}, "
            f"whose kind is {record.kind!r} (use finfo or numeric_info)"
        )
    return record


def _register_builtins() -> None:
    f = NumericInfo.floating
    for dtype, record in (
        (DType.Bool, NumericInfo.boolean()),
        (DType.Int8, NumericInfo.integer(8, signed=True)),
        (DType.Int32, NumericInfo.integer(32, signed=True)),
        (DType.Float32, f("ieee754_binary32", exponent_bits=8, mantissa_bits=23,
                          bias=127, nan_encoding="ieee")),
        (DType.Float64, f("ieee754_binary64", exponent_bits=11, mantissa_bits=52,
                          bias=1023, nan_encoding="ieee")),
        (DType.E8M0, f("float8_e8m0fnu", exponent_bits=8, mantissa_bits=0, bias=127,
                       nan_encoding="all_ones", signed=False)),
        (DType.E5M2, f("float8_e5m2", exponent_bits=5, mantissa_bits=2, bias=15,
                       nan_encoding="ieee")),
        (DType.E4M3, f("float8_e4m3fn", exponent_bits=4, mantissa_bits=3, bias=7,
                       nan_encoding="all_ones")),
        (DType.E3M2, f("float6_e3m2fn", exponent_bits=3, mantissa_bits=2, bias=3,
                       nan_encoding="none")),
        (DType.E2M3, f("float6_e2m3fn", exponent_bits=2, mantissa_bits=3, bias=1,
                       nan_encoding="none")),
        (DType.E2M1, f("float4_e2m1fn", exponent_bits=2, mantissa_bits=1, bias=1,
                       nan_encoding="none")),
    ):
        register_numeric_info(dtype, record)


_register_builtins()
