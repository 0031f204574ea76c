"""Encoding values: values into the bits of the formats the descriptors
describe, and back.

- :func:`encode` / :func:`decode`: one value to one code and back, for
  every simple dtype with a numeric record (floating-point formats of any
  exponent, mantissa, bias and NaN encoding up to 64 bits, integers,
  booleans; extension formats included).
- :func:`pack` / :func:`unpack`: sub-byte codes in DLPack's bit order.
- :func:`quantize` / :func:`dequantize`: block-scaled formats (MXFP4,
  MXFP6, MXFP8, MXINT8, NVFP4 and extension formats), with named scale
  rules.
- :func:`storage_nbytes`, :func:`plane_shapes`, :func:`is_block_aligned`:
  the storage a block-scaled tensor takes.

The kernels are C (in ``stride_weave._dtypes``); they release the GIL on
large inputs. numpy is needed for array inputs and outputs
(``pip install stride-weave[numpy]``) and is imported when first used.
See the "Encoding values" page of the documentation for the rules.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from stride_weave import _dtypes
from stride_weave._dtypes import BlockScaledDType, SimpleDType, Whole

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "ROUNDINGS",
    "OVERFLOWS",
    "SCALE_RULES",
    "Quantized",
    "encode",
    "decode",
    "pack",
    "unpack",
    "quantize",
    "dequantize",
    "storage_nbytes",
    "plane_shapes",
    "is_block_aligned",
]

Rounding = Literal["nearest_even", "nearest_away", "toward_zero", "up", "down", "stochastic"]
Overflow = Literal["saturate", "special"]
ScaleRule = Literal["floor", "ceil", "rceil", "even", "amax"]

#: The rounding options, in the order the C kernels number them (from 1;
#: 0 is the format's default).
ROUNDINGS: tuple[str, ...] = ("nearest_even", "nearest_away", "toward_zero", "up",
                              "down", "stochastic")
#: The overflow options (from 1; 0 is the format's default).
OVERFLOWS: tuple[str, ...] = ("saturate", "special")
#: The scale rules of block-scaled formats (from 1; 0 is the default).
SCALE_RULES: tuple[str, ...] = ("floor", "ceil", "rceil", "even", "amax")

_SRC_F32, _SRC_F64, _SRC_F16, _SRC_BF16 = range(4)
_NAN_DEFAULT, _NAN_ERROR, _NAN_CODE = range(3)

_np: Any = None


def _numpy() -> Any:
    global _np
    if _np is None:
        try:
            import numpy
        except ImportError as exc:  # pragma: no cover - the test extra has numpy
            raise ImportError(
                "stride_weave.codecs needs numpy for array inputs and outputs: "
                "pip install 'stride-weave[numpy]'"
            ) from exc
        _np = numpy
    return _np


# ---- options -----------------------------------------------------------------

def _choice(func: str, arg: str, value: object, names: tuple[str, ...]) -> int:
    """The number of option `value` (0 for None, the default)."""
    if value is None:
        return 0
    if not isinstance(value, str):
        raise TypeError(f"{func}: {arg} must be a str or None, got {type(value).__name__}")
    key = str.__str__(value)
    if key not in names:
        raise ValueError(f"{func}: {arg} must be one of {names} or None, got {key!r}")
    return names.index(key) + 1


def _seed(func: str, rounding: int, seed: object) -> int:
    stochastic = rounding == ROUNDINGS.index("stochastic") + 1
    if seed is None:
        if stochastic:
            raise ValueError(
                f"{func}: rounding='stochastic' needs seed= (an int in [0, 2**64) "
                "or a numpy.random.Generator), so that the result is reproducible"
            )
        return 0
    if not stochastic:
        raise ValueError(f"{func}: seed is used only with rounding='stochastic'")
    np = _numpy()
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, 2**64, dtype=np.uint64))
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(
            f"{func}: seed must be an int or a numpy.random.Generator, got "
            f"{type(seed).__name__}"
        )
    value = int.__index__(seed)
    if not 0 <= value < 2**64:
        raise ValueError(f"{func}: seed must be in [0, 2**64), got {value}")
    return value


def _simple(func: str, dtype: object) -> SimpleDType:
    if isinstance(dtype, BlockScaledDType):
        raise TypeError(
            f"{func}: dtype must be a SimpleDType; {dtype.name} is block-scaled "
            "(use quantize and dequantize)"
        )
    if not isinstance(dtype, SimpleDType):
        raise TypeError(f"{func}: dtype must be a SimpleDType, got {dtype!r}")
    return dtype


def _code_dtype(bits: int) -> Any:
    np = _numpy()
    if bits <= 8:
        return np.uint8
    if bits <= 16:
        return np.uint16
    if bits <= 32:
        return np.uint32
    return np.uint64


def _record(func: str, dtype: SimpleDType) -> Any:
    try:
        return _dtypes.numeric_info(dtype)
    except LookupError:
        raise TypeError(
            f"{func}: dtype {dtype.name} has no numeric record (register_numeric_info "
            "attaches one)"
        ) from None


def _nan_option(func: str, dtype: SimpleDType, nan: object) -> tuple[int, int]:
    """(nan mode, code) for the nan= option."""
    if nan is None:
        return _NAN_DEFAULT, 0
    if isinstance(nan, str):
        key = str.__str__(nan)
        if key == "error":
            return _NAN_ERROR, 0
        if key in ("zero", "max", "min"):
            record = _record(func, dtype)
            value = {"zero": 0.0, "max": float(record.max), "min": float(record.min)}[key]
            np = _numpy()
            code = encode(np.array([value]), dtype, overflow="saturate"
                          if record.kind == "float" or record.kind == "int" else None)
            return _NAN_CODE, int(code[0])
        raise ValueError(
            f"{func}: nan must be None, 'error', 'zero', 'max', 'min' or a code "
            f"(an int), got {key!r}"
        )
    if isinstance(nan, bool) or not isinstance(nan, int):
        raise TypeError(f"{func}: nan must be a str, an int code or None, got "
                        f"{type(nan).__name__}")
    code = int.__index__(nan)
    if code < 0 or code >= 2**dtype.bits:
        raise ValueError(f"{func}: nan code {code} does not fit {dtype.name}'s "
                         f"{dtype.bits} bits")
    return _NAN_CODE, code


# ---- inputs --------------------------------------------------------------------

def _values(func: str, values: object) -> tuple[Any, int, tuple[int, ...]]:
    """(object for the kernel, source kind, shape) of an input of values."""
    np = _numpy()
    if not isinstance(values, np.ndarray):
        try:
            view = memoryview(values)  # type: ignore[arg-type]
        except TypeError:
            values = np.asarray(values, dtype=np.float64)
        else:
            with view:
                fmt = view.format.lstrip("@=<")
                shape = tuple(view.shape or ())
                contiguous = view.c_contiguous
            if not contiguous:
                raise ValueError(f"{func}: values must be C-contiguous")
            kinds = {"f": _SRC_F32, "d": _SRC_F64, "e": _SRC_F16}
            if fmt not in kinds:
                raise TypeError(
                    f"{func}: values must hold float32, float64 or float16 "
                    f"(buffer format 'f', 'd' or 'e'), got format {view.format!r}"
                )
            return values, kinds[fmt], shape
    array = values
    name = array.dtype.name
    if name == "bfloat16":
        return np.ascontiguousarray(array).view(np.uint16), _SRC_BF16, array.shape
    kinds = {"float32": _SRC_F32, "float64": _SRC_F64, "float16": _SRC_F16}
    if name not in kinds:
        raise TypeError(
            f"{func}: values must be float32, float64, float16 or bfloat16, got "
            f"an array of {array.dtype}"
        )
    if array.dtype.byteorder == ">":
        array = array.astype(array.dtype.newbyteorder("="))
    return np.ascontiguousarray(array), kinds[name], array.shape


def _codes(func: str, arg: str, codes: object, bits: int) -> tuple[Any, tuple[int, ...]]:
    """(object for the kernel, shape) of an input of codes."""
    np = _numpy()
    want = np.dtype(_code_dtype(bits))
    if isinstance(codes, np.ndarray):
        if codes.dtype.kind not in "ui":
            raise TypeError(f"{func}: {arg} must hold unsigned integer codes, got an "
                            f"array of {codes.dtype}")
        if codes.dtype.itemsize != want.itemsize:
            codes = codes.astype(want)
        return np.ascontiguousarray(codes).view(want), codes.shape
    with memoryview(codes) as view:  # type: ignore[arg-type]
        shape = tuple(view.shape or ())
    return codes, shape


# ---- elements -------------------------------------------------------------------

def encode(values: Any, dtype: SimpleDType, *, rounding: Rounding | None = None,
           overflow: Overflow | None = None, nan: str | int | None = None,
           seed: Any = None, out: Any = None) -> np.ndarray:
    """The codes of ``values`` in ``dtype``: one unsigned integer per value
    (uint8 for formats of at most 8 bits, else the unsigned integer of the
    format's width), in the shape of ``values``.

    ``values``: a numpy array of float32, float64, float16 or bfloat16, or
    any C-contiguous buffer of float32/float64/float16. With no option, the
    result equals ml_dtypes' ``astype`` bit for bit for every format
    ml_dtypes has (numpy's for integers and booleans); formats it lacks
    round to nearest, ties to even, and overflow to infinity where the
    format has one, else to NaN where it has one, else saturate.

    ``rounding``: ``"nearest_even"``, ``"nearest_away"``,
    ``"toward_zero"``, ``"up"`` (toward +infinity), ``"down"`` (toward
    -infinity) or ``"stochastic"`` (needs ``seed``: an int or a
    numpy.random.Generator; element i rounds up with probability equal to
    its discarded fraction, drawn from a counter-based generator keyed by
    the seed and i). ``overflow``: ``"saturate"`` (the largest finite value
    of that sign) or ``"special"`` (infinity, else NaN). ``nan``: what a NaN
    becomes: ``"error"`` (ValueError), ``"zero"``, ``"max"``, ``"min"`` or
    an int code. ``out``: a writable C-contiguous buffer of codes to fill
    (its item size that of the result); returned.
    """
    func = "encode"
    dtype = _simple(func, dtype)
    r = _choice(func, "rounding", rounding, ROUNDINGS)
    o = _choice(func, "overflow", overflow, OVERFLOWS)
    n_mode, n_code = _nan_option(func, dtype, nan)
    s = _seed(func, r, seed)
    source, kind, shape = _values(func, values)
    np = _numpy()
    if out is None:
        out = np.empty(shape, dtype=_code_dtype(dtype.bits))
    _dtypes._codec_encode(source, out, dtype, kind, r, o, n_mode, n_code, s)
    return out


def decode(codes: Any, dtype: SimpleDType, *, out_dtype: Any = "float32",
           out: Any = None) -> np.ndarray:
    """The values of ``codes`` (one unsigned integer code per element, as
    :func:`encode` gives) in ``dtype``, exactly: float32 by default (every
    code of every format of at most 16 bits is a float32), float64 with
    ``out_dtype="float64"``. Bits above the format's width are ignored.
    """
    func = "decode"
    dtype = _simple(func, dtype)
    np = _numpy()
    try:
        target = np.dtype(out_dtype)
    except TypeError:
        raise TypeError(f"{func}: out_dtype must be float32 or float64, got "
                        f"{out_dtype!r}") from None
    if target not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"{func}: out_dtype must be float32 or float64, got {target}")
    source, shape = _codes(func, "codes", codes, dtype.bits)
    if out is None:
        out = np.empty(shape, dtype=target)
    _dtypes._codec_decode(source, out, dtype, int(target == np.dtype(np.float64)))
    return out


# ---- packing --------------------------------------------------------------------

def pack(codes: Any, dtype: SimpleDType) -> np.ndarray:
    """``codes`` (one per element, flattened in C order) packed as DLPack
    defines it: element i occupies bits ``[i*b, (i+1)*b)`` of the
    little-endian bit stream, b being ``dtype.bits`` (4-bit formats: the
    first element is the low nibble; 6-bit formats: 4 elements in 3 bytes).
    The last byte is padded with zero bits. Returns a 1-D uint8 array of
    ``ceil(count * b / 8)`` bytes.
    """
    func = "pack"
    dtype = _simple(func, dtype)
    np = _numpy()
    source, shape = _codes(func, "codes", codes, dtype.bits)
    count = 1
    for extent in shape:
        count *= extent
    out = np.empty((count * dtype.bits + 7) // 8, dtype=np.uint8)
    _dtypes._codec_pack(source, out, dtype)
    return out


def unpack(data: Any, dtype: SimpleDType, count: int) -> np.ndarray:
    """The first ``count`` codes of the packed bytes ``data`` (see
    :func:`pack`), as a 1-D array of one unsigned integer per code."""
    func = "unpack"
    dtype = _simple(func, dtype)
    if isinstance(count, bool) or not isinstance(count, int):
        raise TypeError(f"{func}: count must be an int, got {type(count).__name__}")
    count = int.__index__(count)
    if count < 0:
        raise ValueError(f"{func}: count must be >= 0, got {count}")
    np = _numpy()
    if isinstance(data, np.ndarray):
        data = np.ascontiguousarray(data).view(np.uint8)
    out = np.empty(count, dtype=_code_dtype(dtype.bits))
    _dtypes._codec_unpack(data, out, dtype, count)
    return out
