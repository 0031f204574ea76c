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
travel in pickles. Extension authors give their own simple dtype its
record when they make it, ``SimpleDType(name, bits=..., supertype=...,
numeric_info=record)``, with the record built by
:meth:`NumericInfo.floating`, :meth:`NumericInfo.integer` or
:meth:`NumericInfo.boolean`: the dtype is registered with it, so no code
ever sees the dtype without it.

Query with :func:`numeric_info` (any simple dtype that has a record),
:func:`finfo` (floating-point and complex formats) or :func:`iinfo`
(integers). Block-scaled formats have no record of their own: query their
``element`` and each level's ``scale``.
"""

from __future__ import annotations

from typing import Literal

from stride_weave._dtypes import (
    NumericInfo,
    finfo,
    iinfo,
    numeric_info,
    register_numeric_info,
)

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
