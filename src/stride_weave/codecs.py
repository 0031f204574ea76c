"""Encoding values: values into the bits of the formats the descriptors
describe, and back.

- :func:`encode` / :func:`decode`: one value to one code and back, for
  every simple dtype with a numeric record (floating-point formats of any
  exponent, mantissa, bias and NaN encoding up to 64 bits, integers,
  booleans; extension formats included).
- :func:`pack` / :func:`unpack`: sub-byte codes in DLPack's bit order.
- :func:`quantize` / :func:`dequantize`: block-scaled formats (MXFP4,
  MXFP6, MXFP8, MXINT8, NVFP4, 2-D blocks and extension formats), with
  named scale rules, in any :class:`BlockLayout` (where the blocks run and
  how the scale plane is laid out for a GEMM); :func:`relayout` moves a
  quantized tensor between layouts losslessly.
- :func:`storage_nbytes`, :func:`plane_shapes`, :func:`is_block_aligned`,
  :func:`scale_index`: the storage a block-scaled tensor takes.
- :func:`hadamard`: the random Hadamard rotation some recipes apply
  before quantizing.
- :func:`set_threads` / :func:`get_threads`: how many cores one call may
  use.

The kernels are C (in ``stride_weave._dtypes``); they release the GIL and,
for large arrays, split the work over several threads, with results that
do not depend on the number of threads. numpy is needed for array inputs
and outputs (``pip install stride-weave[numpy]``) and is imported when
first used. See the "Encoding values" and "Block layouts" pages of the
documentation for the rules.
"""

from __future__ import annotations

import json
import math
import operator
import os
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from stride_weave import _dtypes
from stride_weave._dtypes import BlockScaledDType, DType, SimpleDType, Whole

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "ROUNDINGS",
    "OVERFLOWS",
    "SCALE_RULES",
    "SCALE_LAYOUTS",
    "BlockLayout",
    "Quantized",
    "encode",
    "decode",
    "pack",
    "unpack",
    "quantize",
    "dequantize",
    "relayout",
    "storage_nbytes",
    "plane_shapes",
    "is_block_aligned",
    "scale_index",
    "hadamard",
    "set_threads",
    "get_threads",
]

Rounding = Literal["nearest_even", "nearest_away", "toward_zero", "up", "down", "stochastic"]
Overflow = Literal["saturate", "special"]
ScaleRule = Literal["floor", "ceil", "rceil", "even", "amax"]
ScaleLayout = Literal["compact", "padded_k_major", "padded_mn_major", "swizzled_128x4"]

#: The rounding options, in the order the C kernels number them (from 1;
#: 0 is the format's default).
ROUNDINGS: tuple[str, ...] = ("nearest_even", "nearest_away", "toward_zero", "up",
                              "down", "stochastic")
#: The overflow options (from 1; 0 is the format's default).
OVERFLOWS: tuple[str, ...] = ("saturate", "special")
#: The scale rules of block-scaled formats (from 1; 0 is the default).
SCALE_RULES: tuple[str, ...] = ("floor", "ceil", "rceil", "even", "amax")
#: The layouts of a level-0 scale plane (:class:`BlockLayout`'s ``scales``).
SCALE_LAYOUTS: tuple[str, ...] = ("compact", "padded_k_major", "padded_mn_major",
                                  "swizzled_128x4")
_ORDERS = ("blocked", "logical")

_F32, _F64, _F16, _BF16 = range(4)
_NAN_DEFAULT, _NAN_ERROR, _NAN_CODE = range(3)
_SIGNS = ("keep", "magnitude")
_FLT_MAX = 3.4028234663852886e38

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


# ---- threads -------------------------------------------------------------------

_MAX_THREADS = 256
_threads_lock = threading.Lock()
_threads_setting: int | None = None
_threads_default: int | None = None


def _env_threads(name: str) -> int | None:
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return None
    try:
        value = int(raw.strip())
    except ValueError:
        if name == "OMP_NUM_THREADS":
            return None     # OpenMP's own forms ("4,2") are not ours to read
        raise ValueError(f"{name} must be a positive int, got {raw!r}") from None
    if value < 1:
        if name == "OMP_NUM_THREADS":
            return None
        raise ValueError(f"{name} must be a positive int, got {raw!r}")
    return min(value, _MAX_THREADS)


def _default_threads() -> int:
    """STRIDE_WEAVE_NUM_THREADS, else OMP_NUM_THREADS (which Dask's workers
    and most schedulers set), else the CPUs this process may run on."""
    global _threads_default
    if _threads_default is None:
        found = _env_threads("STRIDE_WEAVE_NUM_THREADS")
        if found is None:
            found = _env_threads("OMP_NUM_THREADS")
        if found is None:
            try:
                found = len(os.sched_getaffinity(0))
            except (AttributeError, OSError):
                found = os.cpu_count() or 1
        _threads_default = max(1, min(found, _MAX_THREADS))
    return _threads_default


def set_threads(threads: int | None) -> int:
    """Set how many threads one codec call may use from now on, in this
    process (``None``: the default again), and return the previous setting.

    The default is ``STRIDE_WEAVE_NUM_THREADS`` if set, else
    ``OMP_NUM_THREADS`` if set (Dask's workers and most job schedulers set
    it to 1, so a worker process does not compete with its siblings), else
    the number of CPUs the process may run on. A call splits the work only
    when each thread gets a large share (about 64 thousand elements), and
    every result is the same for any number of threads. Code that already
    runs codec calls in parallel (a thread pool, Dask threads) should set 1
    here or pass ``threads=1``.
    """
    global _threads_setting
    value = None if threads is None else _thread_count("set_threads", threads)
    with _threads_lock:
        previous = get_threads()
        _threads_setting = value
    return previous


def get_threads() -> int:
    """The number of threads one codec call may use (see :func:`set_threads`)."""
    setting = _threads_setting
    return setting if setting is not None else _default_threads()


def _thread_count(func: str, threads: object) -> int:
    if isinstance(threads, bool) or not isinstance(threads, int):
        raise TypeError(f"{func}: threads must be an int or None, got "
                        f"{type(threads).__name__}")
    value = int.__index__(threads)
    if not 1 <= value <= _MAX_THREADS:
        raise ValueError(f"{func}: threads must be between 1 and {_MAX_THREADS}, got "
                         f"{value}")
    return value


def _threads(func: str, threads: object) -> int:
    return get_threads() if threads is None else _thread_count(func, threads)


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
        raise TypeError(f"{func}: dtype must be a SimpleDType, got {_shown(dtype)}")
    return dtype


def _shown(value: object) -> str:
    """An argument as a message shows it: a str as a name to look up."""
    if isinstance(value, str):
        text = str.__str__(value)
        return (f"the str {text!r} (pass the descriptor: DType.from_name({text!r}))")
    return f"an object of type {type(value).__name__}"


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
            f"{func}: dtype {dtype.name} has no numeric record (pass "
            "numeric_info= when registering it)"
        ) from None


def _one_code(func: str, dtype: SimpleDType, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{func}: a nan code must be an int, got {type(value).__name__}")
    code = int.__index__(value)
    if code < 0 or code >= 2**dtype.bits:
        raise ValueError(f"{func}: nan code {code} does not fit {dtype.name}'s "
                         f"{dtype.bits} bits")
    return code


def _nan_option(func: str, dtype: SimpleDType, nan: object) -> tuple[int, int, int]:
    """(nan mode, code for a positive NaN, code for a negative NaN)."""
    if nan is None:
        return _NAN_DEFAULT, 0, 0
    if isinstance(nan, str):
        key = str.__str__(nan)
        if key == "error":
            return _NAN_ERROR, 0, 0
        if key in ("zero", "max", "min"):
            record = _record(func, dtype)
            value = {"zero": 0.0, "max": float(record.max), "min": float(record.min)}[key]
            np = _numpy()
            code = int(encode(np.array([value]), dtype, overflow="saturate"
                              if record.kind in ("float", "int") else None,
                              threads=1)[0])
            return _NAN_CODE, code, code
        raise ValueError(
            f"{func}: nan must be None, 'error', 'zero', 'max', 'min', a code (an "
            f"int) or a pair of codes, got {key!r}"
        )
    if type(nan) is tuple:
        if len(nan) != 2:
            raise ValueError(f"{func}: nan as a pair must hold 2 codes (a positive and a "
                             f"negative NaN's), got {len(nan)}")
        return _NAN_CODE, _one_code(func, dtype, nan[0]), _one_code(func, dtype, nan[1])
    if isinstance(nan, bool) or not isinstance(nan, int):
        raise TypeError(f"{func}: nan must be a str, an int code, a pair of codes or "
                        f"None, got {type(nan).__name__}")
    code = _one_code(func, dtype, nan)
    return _NAN_CODE, code, code


# ---- inputs --------------------------------------------------------------------

_DL_CPU = 1
_DL_DEVICES = {2: "cuda", 3: "cuda_host", 4: "opencl", 7: "vulkan", 8: "metal",
               9: "vpi", 10: "rocm", 11: "rocm_host", 13: "cuda_managed",
               14: "oneapi", 15: "webgpu", 16: "hexagon", 17: "maia"}


def _dlpack_values(func: str, values: Any) -> tuple[Any, int, tuple[int, ...]] | None:
    """An array that exports DLPack, on the CPU, as (object for the kernel,
    source kind, shape) without a copy where its layout allows; None for
    an object without DLPack."""
    device = getattr(values, "__dlpack_device__", None)
    if device is None or not hasattr(values, "__dlpack__"):
        return None
    np = _numpy()
    try:
        kind, index = device()
    except Exception as exc:
        raise TypeError(f"{func}: values.__dlpack_device__() of a "
                        f"{type(values).__name__} failed: {exc}") from exc
    if int(kind) != _DL_CPU:
        name = _DL_DEVICES.get(int(kind), f"device type {int(kind)}")
        raise ValueError(
            f"{func}: values is a {type(values).__name__} on {name}:{int(index)}; the "
            "codecs run on the CPU: copy it there first (for example .cpu() or "
            "numpy.asarray after a device-to-host copy)"
        )
    capsule = values.__dlpack__()
    code, bits, lanes = _dtypes._dlpack_dtype(capsule)
    if (code, bits, lanes) == (4, 16, 1):
        # bfloat16: numpy has no such type; a view of its bits
        array = np.asarray(_dtypes._dlpack_buffer(capsule))
        return np.ascontiguousarray(array), _BF16, tuple(array.shape)
    if code == 2 and bits in (16, 32, 64) and lanes == 1:
        array = np.from_dlpack(values)
        kind_of = {16: _F16, 32: _F32, 64: _F64}[bits]
        return np.ascontiguousarray(array), kind_of, tuple(array.shape)
    raise TypeError(
        f"{func}: values must hold float32, float64, float16 or bfloat16, got a "
        f"{type(values).__name__} of DLPack type (code {code}, {bits} bits, {lanes} "
        "lanes)"
    )


def _values(func: str, values: object) -> tuple[Any, int, tuple[int, ...]]:
    """(object for the kernel, source kind, shape) of an input of values."""
    np = _numpy()
    if not isinstance(values, np.ndarray):
        found = _dlpack_values(func, values)
        if found is not None:
            return found
        try:
            view = memoryview(values)  # type: ignore[arg-type]
        except TypeError:
            try:
                values = np.asarray(values, dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise TypeError(
                    f"{func}: values must be an array of float32, float64, float16 or "
                    f"bfloat16, a buffer, or numbers, got {_shown(values)}"
                ) from exc
        else:
            with view:
                given = view.format
                fmt = given.lstrip("@=<")
                shape = tuple(view.shape or ())
                contiguous = view.c_contiguous
            if not contiguous:
                raise ValueError(f"{func}: values must be C-contiguous")
            kinds = {"f": _F32, "d": _F64, "e": _F16}
            if fmt not in kinds:
                raise TypeError(
                    f"{func}: values must hold float32, float64 or float16 "
                    f"(buffer format 'f', 'd' or 'e'), got format {given!r}"
                )
            return values, kinds[fmt], shape
    array = values
    name = array.dtype.name
    if name == "bfloat16":
        return np.ascontiguousarray(array).view(np.uint16), _BF16, array.shape
    kinds = {"float32": _F32, "float64": _F64, "float16": _F16}
    if name not in kinds:
        if array.dtype.kind in "iub":
            # integers and booleans are numbers: every one up to 2**53 is a
            # float64, exactly
            return (np.ascontiguousarray(array, dtype=np.float64), _F64, array.shape)
        raise TypeError(
            f"{func}: values must be float32, float64, float16 or bfloat16 (or "
            f"integers), got an array of {array.dtype}"
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
            if codes.size and (int(codes.min()) < 0 or int(codes.max()) >= 2**(8 * want.itemsize)):
                raise ValueError(f"{func}: {arg} holds values that are not codes of "
                                 f"{8 * want.itemsize}-bit storage")
            codes = codes.astype(want)
        return np.ascontiguousarray(codes).view(want), codes.shape
    try:
        view = memoryview(codes)  # type: ignore[arg-type]
    except TypeError:
        # a sequence of ints
        try:
            array = np.asarray(codes)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{func}: {arg} must be an array, a buffer or a sequence "
                            f"of int codes, got {_shown(codes)}") from exc
        if array.dtype.kind not in "ui":
            raise TypeError(f"{func}: {arg} must hold int codes, got {array.dtype}")
        return _codes(func, arg, array, bits)
    with view:
        shape = tuple(view.shape or ())
    return codes, shape


_OUT_TYPES = {"float32": _F32, "float64": _F64, "float16": _F16, "bfloat16": _BF16}


def _out_type(func: str, out_dtype: object) -> tuple[int, Any]:
    """(kind, numpy dtype) of an out_dtype."""
    np = _numpy()
    name = None
    if isinstance(out_dtype, str):
        name = str.__str__(out_dtype)
    else:
        try:
            name = np.dtype(out_dtype).name
        except TypeError:
            raise TypeError(f"{func}: out_dtype must be float32, float64, float16 or "
                            f"bfloat16, got {out_dtype!r}") from None
    if name not in _OUT_TYPES:
        raise ValueError(f"{func}: out_dtype must be float32, float64, float16 or "
                         f"bfloat16, got {name}")
    if name == "bfloat16":
        try:
            import ml_dtypes
        except ImportError:
            raise ImportError(
                f"{func}: out_dtype='bfloat16' needs ml_dtypes for numpy's bfloat16 "
                "type: pip install ml_dtypes"
            ) from None
        return _BF16, np.dtype(ml_dtypes.bfloat16)
    return _OUT_TYPES[name], np.dtype(name)


def _kernel_out(array: Any, kind: int) -> Any:
    """The buffer the kernel writes: bfloat16 travels as its bits."""
    return array.view(_numpy().uint16) if kind == _BF16 else array


# ---- elements -------------------------------------------------------------------

def encode(values: Any, dtype: SimpleDType, *, rounding: Rounding | None = None,
           overflow: Overflow | None = None, nan: str | int | tuple[int, int] | None = None,
           sign: Literal["keep", "magnitude"] = "keep", seed: Any = None, out: Any = None,
           threads: int | None = None) -> np.ndarray:
    """The codes of ``values`` in ``dtype``: one unsigned integer per value
    (uint8 for formats of at most 8 bits, else the unsigned integer of the
    format's width), in the shape of ``values``.

    ``values``: a numpy array (float32, float64, float16, bfloat16, or
    integers, which are numbers), any array on the CPU that exports DLPack
    (torch, JAX; bfloat16 included, without a copy where its layout
    allows), any C-contiguous buffer of float32/float64/float16, or a
    sequence of numbers. With no option, the result equals ml_dtypes'
    ``astype`` bit for bit for every format ml_dtypes has (numpy's for
    integers and booleans); formats it lacks round to nearest, ties to
    even, and overflow to infinity where the format has one, else to NaN
    where it has one, else saturate.

    ``rounding``: ``"nearest_even"``, ``"nearest_away"``,
    ``"toward_zero"``, ``"up"`` (toward +infinity), ``"down"`` (toward
    -infinity) or ``"stochastic"`` (needs ``seed``: an int or a
    numpy.random.Generator; element i rounds up with probability equal to
    its discarded fraction, drawn from a counter-based generator keyed by
    the seed and i). ``overflow``: ``"saturate"`` (the largest finite value
    of that sign, infinities included) or ``"special"`` (infinity, else
    NaN, in the rounding's direction: ``"toward_zero"`` never overflows to
    it, ``"up"`` and ``"down"`` only in their own direction). ``nan``: what
    a NaN becomes: ``"error"`` (ValueError), ``"zero"``, ``"max"``,
    ``"min"``, an int code, or a pair of codes for a positive and a
    negative NaN. ``sign``: ``"keep"``, or ``"magnitude"`` to encode each
    value's magnitude (in a format without zero, such as E8M0, zero then
    becomes its smallest code, as NVIDIA's E8M0 conversion gives).
    ``out``: a writable C-contiguous buffer of codes to fill (its item size
    that of the result); returned. ``threads``: at most this many threads
    (default :func:`get_threads`).
    """
    func = "encode"
    dtype = _simple(func, dtype)
    r = _choice(func, "rounding", rounding, ROUNDINGS)
    o = _choice(func, "overflow", overflow, OVERFLOWS)
    n_mode, n_pos, n_neg = _nan_option(func, dtype, nan)
    sg = _choice(func, "sign", sign, _SIGNS) - 1
    if sg < 0:
        raise ValueError(f"{func}: sign must be 'keep' or 'magnitude', got None")
    s = _seed(func, r, seed)
    t = _threads(func, threads)
    source, kind, shape = _values(func, values)
    np = _numpy()
    if out is None:
        out = np.empty(shape, dtype=_code_dtype(dtype.bits))
    _dtypes._codec_encode(source, out, dtype, kind, r, o, n_mode, n_pos, n_neg, s, sg, t)
    return out


def decode(codes: Any, dtype: SimpleDType, *, out_dtype: Any = "float32",
           out: Any = None, threads: int | None = None) -> np.ndarray:
    """The values of ``codes`` (one unsigned integer code per element, as
    :func:`encode` gives) in ``dtype``: float32 by default (every code of
    every format of at most 16 bits is a float32, exactly), or
    ``out_dtype="float64"``, ``"float16"`` or ``"bfloat16"`` (bfloat16
    needs ml_dtypes), each value rounded once (nearest, ties to even) where
    the type cannot hold it. Bits above the format's width are ignored.
    """
    func = "decode"
    dtype = _simple(func, dtype)
    kind, target = _out_type(func, out_dtype)
    t = _threads(func, threads)
    source, shape = _codes(func, "codes", codes, dtype.bits)
    np = _numpy()
    if out is None:
        out = np.empty(shape, dtype=target)
    _dtypes._codec_decode(source, _kernel_out(out, kind) if isinstance(out, np.ndarray)
                          else out, dtype, kind, t)
    return out


# ---- packing --------------------------------------------------------------------

def pack(codes: Any, dtype: SimpleDType, *, threads: int | None = None) -> np.ndarray:
    """``codes`` (one per element, flattened in C order) packed as DLPack
    defines it: element i occupies bits ``[i*b, (i+1)*b)`` of the
    little-endian bit stream, b being ``dtype.bits`` (4-bit formats: the
    first element is the low nibble; 6-bit formats: 4 elements in 3 bytes).
    The last byte is padded with zero bits. Returns a 1-D uint8 array of
    ``ceil(count * b / 8)`` bytes. A code with bits set above b is a
    ValueError naming its index: nothing is masked away.
    """
    func = "pack"
    dtype = _simple(func, dtype)
    t = _threads(func, threads)
    np = _numpy()
    source, shape = _codes(func, "codes", codes, dtype.bits)
    count = 1
    for extent in shape:
        count *= extent
    out = np.empty((count * dtype.bits + 7) // 8, dtype=np.uint8)
    _dtypes._codec_pack(source, out, dtype, t)
    return out


def unpack(data: Any, dtype: SimpleDType, count: int, *,
           threads: int | None = None) -> np.ndarray:
    """The first ``count`` codes of the packed bytes ``data`` (see
    :func:`pack`), as a 1-D array of one unsigned integer per code."""
    func = "unpack"
    dtype = _simple(func, dtype)
    if isinstance(count, bool) or not isinstance(count, int):
        raise TypeError(f"{func}: count must be an int, got {type(count).__name__}")
    count = int.__index__(count)
    if count < 0:
        raise ValueError(f"{func}: count must be >= 0, got {count}")
    t = _threads(func, threads)
    np = _numpy()
    if isinstance(data, np.ndarray):
        data = np.ascontiguousarray(data).view(np.uint8)
    out = np.empty(count, dtype=_code_dtype(dtype.bits))
    _dtypes._codec_unpack(data, out, dtype, count, t)
    return out


# ---- layouts --------------------------------------------------------------------------

def _layout_axes(value: object) -> tuple[int, ...] | None:
    if value is None:
        return None
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(f"BlockLayout: axes must be None or a sequence of ints, got "
                        f"{type(value).__name__}")
    axes = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int):
            raise TypeError(f"BlockLayout: axes must hold ints, got {item!r}")
        axes.append(int.__index__(item))
    if not axes:
        raise ValueError("BlockLayout: axes must name at least one axis (or be None)")
    if len(set(axes)) != len(axes):
        raise ValueError(f"BlockLayout: axes must be distinct, got {tuple(axes)}")
    return tuple(axes)


def _layout_int(field: str, value: object, lowest: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"BlockLayout: {field} must be an int, got {type(value).__name__}")
    number = int.__index__(value)
    if number < lowest:
        raise ValueError(f"BlockLayout: {field} must be at least {lowest}, got {number}")
    return number


def _layout_name(field: str, value: object, names: tuple[str, ...]) -> str:
    if not isinstance(value, str):
        raise TypeError(f"BlockLayout: {field} must be a str, got {type(value).__name__}")
    key = str.__str__(value)
    if key not in names:
        raise ValueError(f"BlockLayout: {field} must be one of {names}, got {key!r}")
    return key


class BlockLayout(tuple):
    """Where a block-scaled tensor's blocks and scales lie: an immutable,
    hashable value, equal by value, that moves bytes and never changes a
    value (the descriptor says what the format is).

    - ``axes``: the tensor axes the level-0 block's dimensions run along,
      in the block's order (negative counts from the end); ``None``: the
      last ones in order. ``(-1,)`` is row-wise (1x32 MXFP8), ``(-2,)``
      column-wise (32x1); ``(-2, -1)`` and ``(-1, -2)`` lay a 16x16 block
      on a matrix and on its transpose.
    - ``order``: ``"blocked"`` (the planes' axes are the other tensor axes
      in order, then the blocked ones in ``axes`` order) or ``"logical"``
      (the planes keep the tensor's axis order).
    - ``scales``: the level-0 scale plane: ``"compact"`` (the block grid in
      the planes' order), ``"padded_k_major"`` (cuBLAS ``BLK128x128_32F``),
      ``"padded_mn_major"`` (cuBLAS ``VEC128_32F``, DeepGEMM), or
      ``"swizzled_128x4"`` (the 128x4 tiles cuBLAS and CUTLASS read for MX
      and NVFP4); ``align``, ``group`` and ``batch_dims`` shape the padded
      ones (``batch_dims=1``: each expert of ``(E, N, K)`` padded on its
      own).
    - ``expand``: a 2-D block's scale repeated on each of its rows (the
      swizzled layout always expands).
    """

    __slots__ = ()

    def __new__(cls, axes: Sequence[int] | None = None, *,
                order: Literal["blocked", "logical"] = "blocked",
                scales: ScaleLayout = "compact", align: int = 4, group: int = 1,
                batch_dims: int = 0, expand: bool = False) -> BlockLayout:
        if not isinstance(expand, bool):
            raise TypeError(f"BlockLayout: expand must be a bool, got "
                            f"{type(expand).__name__}")
        fields = (_layout_axes(axes), _layout_name("order", order, _ORDERS),
                  _layout_name("scales", scales, SCALE_LAYOUTS),
                  _layout_int("align", align, 1), _layout_int("group", group, 1),
                  _layout_int("batch_dims", batch_dims, 0), expand)
        return tuple.__new__(cls, fields)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        raise TypeError("BlockLayout cannot be subclassed: it is a value")

    @property
    def axes(self) -> tuple[int, ...] | None:
        """The tensor axes of the block's dimensions, or None."""
        return tuple.__getitem__(self, 0)

    @property
    def order(self) -> str:
        """``"blocked"`` or ``"logical"``: the planes' axis order."""
        return tuple.__getitem__(self, 1)

    @property
    def scales(self) -> str:
        """The level-0 scale plane's layout, one of :data:`SCALE_LAYOUTS`."""
        return tuple.__getitem__(self, 2)

    @property
    def align(self) -> int:
        """The padded layouts' alignment."""
        return tuple.__getitem__(self, 3)

    @property
    def group(self) -> int:
        """``padded_mn_major``: K-blocks interleaved per row (4: DeepGEMM's UE8M0)."""
        return tuple.__getitem__(self, 4)

    @property
    def batch_dims(self) -> int:
        """Leading non-blocked axes padded separately (grouped GEMMs)."""
        return tuple.__getitem__(self, 5)

    @property
    def expand(self) -> bool:
        """A 2-D block's scale repeated on each of its rows."""
        return tuple.__getitem__(self, 6)

    # equal to layouts only (a plain tuple of the same fields is not one);
    # False rather than NotImplemented, or tuple's own comparison would
    # answer in reflection
    def __eq__(self, other: object) -> bool:
        return type(other) is BlockLayout and tuple.__eq__(self, other) is True

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __lt__(self, other: object) -> bool:
        return NotImplemented

    __le__ = __gt__ = __ge__ = __lt__

    def __hash__(self) -> int:
        return hash(("BlockLayout", *tuple.__iter__(self)))

    def __repr__(self) -> str:
        parts = [repr(self.axes)]
        defaults = ("blocked", "compact", 4, 1, 0, False)
        names = ("order", "scales", "align", "group", "batch_dims", "expand")
        for name, value, default in zip(names, tuple(self)[1:], defaults):
            if value != default:
                parts.append(f"{name}={value!r}")
        return f"BlockLayout({', '.join(parts)})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_layout, tuple(tuple.__iter__(self)))

    def __copy__(self) -> BlockLayout:
        return self

    def __deepcopy__(self, memo: Any) -> BlockLayout:
        return self

    def __getnewargs__(self) -> tuple[Any, ...]:
        return ()


def _layout(axes: Any, order: Any, scales: Any, align: Any, group: Any, batch_dims: Any,
            expand: Any) -> BlockLayout:
    """Reconstruct a pickled BlockLayout (a permanent path)."""
    return BlockLayout(axes, order=order, scales=scales, align=align, group=group,
                       batch_dims=batch_dims, expand=expand)


_layout.__module__ = __name__


# ---- geometry -------------------------------------------------------------------------

def _block_dtype(func: str, dtype: object) -> BlockScaledDType:
    if not isinstance(dtype, BlockScaledDType):
        raise TypeError(f"{func}: dtype must be a BlockScaledDType, got {_shown(dtype)}")
    return dtype


def _shape(func: str, shape: object) -> tuple[int, ...]:
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, Sequence) or isinstance(shape, (str, bytes)):
        raise TypeError(f"{func}: shape must be a sequence of ints, got "
                        f"{type(shape).__name__}")
    result = []
    for extent in shape:
        if isinstance(extent, bool):
            raise TypeError(f"{func}: shape must hold ints, got {extent!r}")
        value = operator.index(extent)
        if value < 0:
            raise ValueError(f"{func}: shape must hold non-negative ints, got {value}")
        result.append(int(value))
    return tuple(result)


def _block_shape(dtype: BlockScaledDType) -> tuple[int, ...] | None:
    """Level 0's block shape, None for Whole."""
    block = dtype.levels[0].block
    if block is Whole:
        return None
    if isinstance(block, tuple):
        return tuple(int(b) for b in block)
    return (int(block),)


def _row_bytes(bits: int, length: int) -> int:
    return (length * bits + 7) // 8


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _ru(a: int, b: int) -> int:
    return _ceil(a, b) * b


def _c_strides(extents: Sequence[int]) -> list[int]:
    strides = [0] * len(extents)
    step = 1
    for i in range(len(extents) - 1, -1, -1):
        strides[i] = step
        step *= extents[i]
    return strides


_SCALE_CODES = {name: i for i, name in enumerate(SCALE_LAYOUTS)}


class _Geometry:
    """How one tensor lies in one layout: the planes' order and shapes, and
    the grid the kernels walk (each axis with its block and the strides
    that place its scales)."""

    __slots__ = ("dtype", "shape", "layout", "axes", "block", "perm", "whole_only",
                 "plane_extents", "scale_shape", "grid", "grid_layout", "logical_grid",
                 "expanded", "padded")

    def __init__(self, func: str, dtype: BlockScaledDType, shape: tuple[int, ...],
                 layout: BlockLayout, named: str = "layout.axes") -> None:
        self.dtype = dtype
        self.shape = shape
        block = _block_shape(dtype)
        n = 1
        for extent in shape:
            n *= extent
        if block is None:
            if layout.axes is not None:
                raise ValueError(f"{func}: {dtype.name} is scaled as a whole: a layout "
                                 f"cannot place its blocks (axes {layout.axes})")
            self.whole_only = True
            self.layout = layout
            self.axes = ()
            self.block = ()
            self.perm = tuple(range(len(shape)))
            self.plane_extents = (n,)
            self.scale_shape = ()
            axis = (n, max(n, 1), 0, 0, 0, 0, 0)
            self.grid = self.logical_grid = (axis,)
            self.grid_layout = (0, 0, 0, 1, 1)
            self.expanded = False
            self.padded = False
            return
        self.whole_only = False
        ndim, rank = len(shape), len(block)
        if ndim < rank:
            raise ValueError(f"{func}: {dtype.name}'s blocks have {rank} dimension"
                             f"{'s' if rank > 1 else ''}; shape {shape} has {ndim}")
        given = layout.axes if layout.axes is not None else tuple(range(ndim - rank, ndim))
        shown = (f"axis {given[0]}" if named == "axis" and len(given) == 1
                 else f"{named} {given}")
        if len(given) != rank:
            raise ValueError(f"{func}: {shown} must name {rank} axis"
                             f"{'es' if rank > 1 else ''}, one per dimension of "
                             f"{dtype.name}'s block {tuple(block)}")
        axes = []
        for a in given:
            if not -ndim <= a < ndim:
                raise ValueError(f"{func}: {shown} is out of range for {ndim} dimensions")
            axes.append(a % ndim)
        if len(set(axes)) != rank:
            raise ValueError(f"{func}: {shown} names one axis twice for {ndim} "
                             "dimensions")
        self.axes = tuple(axes)
        self.block = tuple(block)
        self.layout = tuple.__new__(BlockLayout, (self.axes, *tuple(layout)[1:]))
        others = [t for t in range(ndim) if t not in self.axes]
        self.perm = tuple(others + axes) if layout.order == "blocked" else tuple(range(ndim))
        blk = {a: b for a, b in zip(axes, block)}
        expanded = rank >= 2 and (layout.expand or layout.scales == "swizzled_128x4")
        self.expanded = expanded
        count = {}
        for t in range(ndim):
            if t in blk:
                count[t] = shape[t] if expanded and t == axes[0] else _ceil(shape[t], blk[t])
            else:
                count[t] = shape[t]
        compact = {t: 0 for t in range(ndim)}
        batch = dict(compact)
        row = dict(compact)
        col = dict(compact)
        kind = layout.scales
        if kind == "compact":
            extents = [count[t] for t in self.perm]
            for t, stride in zip(self.perm, _c_strides(extents)):
                compact[t] = stride
            self.scale_shape = tuple(extents)
            self.grid_layout = (0, 0, 0, 1, 1)
            self.padded = False
        else:
            if rank > 2:
                raise ValueError(f"{func}: layout.scales {kind!r} takes blocks of 1 or 2 "
                                 f"dimensions; {dtype.name}'s block is {tuple(block)}")
            if kind == "swizzled_128x4" and dtype.levels[0].scale.bits > 8:
                raise ValueError(f"{func}: layout.scales 'swizzled_128x4' holds 8-bit "
                                 f"scales; {dtype.name}'s are "
                                 f"{dtype.levels[0].scale.name} "
                                 f"({dtype.levels[0].scale.bits} bits)")
            if layout.batch_dims > len(others):
                raise ValueError(f"{func}: layout.batch_dims {layout.batch_dims} exceeds "
                                 f"the {len(others)} axes outside the block")
            batch_axes = others[:layout.batch_dims]
            row_axes = others[layout.batch_dims:] + ([axes[0]] if rank == 2 else [])
            for t, stride in zip(batch_axes, _c_strides([count[t] for t in batch_axes])):
                batch[t] = stride
            for t, stride in zip(row_axes, _c_strides([count[t] for t in row_axes])):
                row[t] = stride
            col[axes[-1]] = 1
            R = math.prod(count[t] for t in row_axes)
            C = count[axes[-1]]
            bshape = tuple(count[t] for t in batch_axes)
            if kind == "padded_k_major":
                matrix = (R, _ru(C, layout.align))
                self.padded = C % layout.align != 0
            elif kind == "padded_mn_major":
                matrix = (_ceil(C, layout.group), _ru(R, layout.align) * layout.group)
                self.padded = R % layout.align != 0 or C % layout.group != 0
            else:
                matrix = (32 * _ceil(R, 128), 16 * _ceil(C, 4))
                self.padded = R % 128 != 0 or C % 4 != 0
            self.scale_shape = (*bshape, *matrix)
            self.grid_layout = (_SCALE_CODES[kind], R, C, layout.align, layout.group)

        def axis_record(t: int) -> tuple[int, ...]:
            return (shape[t], blk.get(t, 1), compact[t], batch[t], row[t], col[t],
                    int(expanded and t == axes[0]))

        self.plane_extents = tuple(shape[t] for t in self.perm)
        self.grid = tuple(axis_record(t) for t in self.perm)
        self.logical_grid = tuple(axis_record(t) for t in range(ndim))

    def element_shape(self, bits: int, packed: bool) -> tuple[int, ...]:
        if not self.plane_extents:
            return ()
        last = self.plane_extents[-1]
        return (*self.plane_extents[:-1], _row_bytes(bits, last) if packed else last)

    def plane_shapes(self, packed: bool) -> tuple[tuple[int, ...], ...]:
        shapes: list[tuple[int, ...]] = [self.element_shape(self.dtype.element.bits, packed),
                                         self.scale_shape]
        shapes += [()] * (len(self.dtype.levels) - 1)
        return tuple(shapes)


def _resolve_layout(func: str, dtype: BlockScaledDType, axis: object,
                    layout: object) -> BlockLayout:
    """The layout of a call: `layout`, or today's from `axis`."""
    if layout is not None and not isinstance(layout, BlockLayout):
        raise TypeError(f"{func}: layout must be a BlockLayout or None, got "
                        f"{_shown(layout)}")
    if isinstance(axis, bool) or not (isinstance(axis, int) or type(axis) is tuple):
        raise TypeError(f"{func}: axis must be an int or a tuple of ints, got "
                        f"{type(axis).__name__}")
    axes = (int.__index__(axis),) if isinstance(axis, int) else _layout_axes(axis)
    if layout is not None:
        if axes != (-1,) and layout.axes != axes:
            raise ValueError(f"{func}: axis={axis!r} disagrees with layout.axes "
                             f"{layout.axes}; give one of them")
        return layout
    block = _block_shape(dtype)
    if block is None:
        return BlockLayout()
    if axes == (-1,) and len(block) > 1:
        return BlockLayout()        # the last axes, in order
    return BlockLayout(axes)


def _geometry(func: str, dtype: object, shape: object, axis: object = -1,
              layout: object = None) -> _Geometry:
    dtype = _block_dtype(func, dtype)
    return _Geometry(func, dtype, _shape(func, shape),
                     _resolve_layout(func, dtype, axis, layout),
                     "layout.axes" if layout is not None else "axis")


def plane_shapes(dtype: BlockScaledDType, shape: Sequence[int], *,
                 axis: int | tuple[int, ...] = -1, layout: BlockLayout | None = None,
                 packed: bool = True) -> tuple[tuple[int, ...], ...]:
    """The shape of each plane of a tensor of logical ``shape`` in
    ``dtype`` and ``layout``, in the order ``interop.planes(dtype)`` lists
    the planes.

    The element plane holds the elements in the planes' order (by default
    the other axes, then the blocked axis), each last-axis row packed to
    whole bytes (``packed``) or one code per element; level 0's scale plane
    is the block grid (``"compact"``) or the padded or swizzled matrix the
    layout names; a whole-tensor level is one code, shape ``()``. A format
    whose only level is Whole stores its elements flattened.
    """
    func = "plane_shapes"
    if not isinstance(packed, bool):
        raise TypeError(f"{func}: packed must be a bool, got {type(packed).__name__}")
    return _geometry(func, dtype, shape, axis, layout).plane_shapes(packed)


def _plane_itemsizes(dtype: BlockScaledDType, packed: bool) -> tuple[int, ...]:
    np = _numpy()
    sizes = [1 if packed else np.dtype(_code_dtype(dtype.element.bits)).itemsize]
    sizes += [np.dtype(_code_dtype(level.scale.bits)).itemsize for level in dtype.levels]
    return tuple(sizes)


def _itemsize(bits: int) -> int:
    return 1 if bits <= 8 else 2 if bits <= 16 else 4 if bits <= 32 else 8


def storage_nbytes(dtype: BlockScaledDType, shape: Sequence[int], *,
                   axis: int | tuple[int, ...] = -1, layout: BlockLayout | None = None,
                   packed: bool = True) -> int:
    """The bytes a tensor of logical ``shape`` takes in ``dtype`` and
    ``layout``: the sum over its planes (see :func:`plane_shapes`), padding
    included. Exact for any shape (a Python int, never an overflowed C
    size)."""
    func = "storage_nbytes"
    shapes = plane_shapes(dtype, shape, axis=axis, layout=layout, packed=packed)
    sizes = [1 if packed else _itemsize(dtype.element.bits)]
    sizes += [_itemsize(level.scale.bits) for level in dtype.levels]
    total = 0
    for plane, size in zip(shapes, sizes):
        total += math.prod(plane) * size
    del func
    return total


def is_block_aligned(dtype: BlockScaledDType, shape: Sequence[int], *,
                     axis: int | tuple[int, ...] = -1,
                     layout: BlockLayout | None = None) -> bool:
    """Whether ``shape`` fills every block (no partial block), packs each
    row into whole bytes (no padding bits) and, in a padded or swizzled
    layout, fills the scale plane (no padding entries): the shapes whose
    planes hardware kernels take as they are. Other shapes are valid too:
    quantize gives them partial blocks and padding."""
    func = "is_block_aligned"
    geo = _geometry(func, dtype, shape, axis, layout)
    bits = geo.dtype.element.bits
    if geo.whole_only:
        return (math.prod(geo.shape) * bits) % 8 == 0
    if geo.plane_extents and (geo.plane_extents[-1] * bits) % 8:
        return False
    for a, b in zip(geo.axes, geo.block):
        if geo.shape[a] % b:
            return False
    return not geo.padded


def scale_index(dtype: BlockScaledDType, shape: Sequence[int], index: Sequence[int], *,
                axis: int | tuple[int, ...] = -1,
                layout: BlockLayout | None = None) -> tuple[int, ...]:
    """The index into the level-0 scale plane (of the shape
    :func:`plane_shapes` gives) of the scale of the element at logical
    ``index`` (a tuple of ints) of a tensor of ``shape``: where quantize
    writes it and dequantize reads it (for expanded scales, the element's
    own row's copy)."""
    func = "scale_index"
    geo = _geometry(func, dtype, shape, axis, layout)
    point = _shape(func, index)
    if len(point) != len(geo.shape):
        raise ValueError(f"{func}: index {tuple(point)} must have one coordinate per "
                         f"axis of shape {geo.shape}")
    for i, extent in zip(point, geo.shape):
        if i >= extent:
            raise ValueError(f"{func}: index {tuple(point)} is out of range for shape "
                             f"{geo.shape}")
    if geo.whole_only:
        return ()
    coords = tuple(point[t] for t in geo.perm)
    offset = _dtypes._codec_scale_offset(geo.grid, geo.grid_layout, coords)
    np = _numpy()
    return tuple(int(i) for i in np.unravel_index(offset, geo.scale_shape))


# ---- quantized tensors ------------------------------------------------------------------

_FORMAT = "stride_weave.quantized/1"


class Quantized:
    """A tensor in a block-scaled format: its planes, in the order
    ``interop.planes(dtype)`` lists them (element codes, packed unless
    ``packed`` is False; then each level's scale codes; a whole-tensor
    scale last, shape ``()``), laid out as ``layout`` says
    (:func:`plane_shapes`), with the logical ``shape``, the ``dtype``, and
    ``axis``, the last blocked axis.

    Built by :func:`quantize`; building one from planes of another source
    checks each plane's shape and item size (ValueError/TypeError). It
    pickles (its dtype by the descriptor's own pickle) and converts to and
    from a flat mapping of named arrays and string metadata
    (:meth:`to_arrays`, :meth:`from_arrays`), the shape safetensors and
    ``numpy.savez`` store.
    """

    __slots__ = ("dtype", "shape", "layout", "axis", "planes", "packed", "scale_rule")

    def __init__(self, dtype: BlockScaledDType, shape: Sequence[int],
                 planes: Sequence[Any], *, axis: int | tuple[int, ...] = -1,
                 layout: BlockLayout | None = None, packed: bool = True,
                 scale_rule: str | None = None) -> None:
        func = "Quantized"
        np = _numpy()
        if not isinstance(packed, bool):
            raise TypeError(f"{func}: packed must be a bool, got {type(packed).__name__}")
        if scale_rule is not None and scale_rule not in SCALE_RULES:
            raise ValueError(f"{func}: scale_rule must be one of {SCALE_RULES} or None, "
                             f"got {scale_rule!r}")
        geo = _geometry(func, dtype, shape, axis, layout)
        shapes = geo.plane_shapes(packed)
        if isinstance(planes, (str, bytes)) or not isinstance(planes, Sequence):
            raise TypeError(f"{func}: planes must be a sequence of arrays, got "
                            f"{type(planes).__name__}")
        planes = tuple(planes)
        if len(planes) != len(shapes):
            raise ValueError(f"{func}: {geo.dtype.name} has {len(shapes)} planes, got "
                             f"{len(planes)}")
        checked = []
        for i, (plane, want, size) in enumerate(zip(planes, shapes,
                                                     _plane_itemsizes(geo.dtype, packed))):
            array = np.asarray(plane)
            if array.dtype.kind not in "ui" or array.dtype.itemsize != size:
                raise TypeError(f"{func}: plane {i} must hold unsigned codes of {size} "
                                f"byte(s), got {array.dtype}")
            if array.shape != want:
                raise ValueError(f"{func}: plane {i} must have shape {want}, got "
                                 f"{array.shape}")
            if not array.flags.c_contiguous:
                array = array.copy(order="C")   # (ascontiguousarray makes 0-d 1-d)
            checked.append(array.view(f"u{size}"))
        self._set(geo, tuple(checked), packed, scale_rule)

    def _set(self, geo: _Geometry, planes: tuple[Any, ...], packed: bool,
             scale_rule: str | None) -> None:
        object.__setattr__(self, "dtype", geo.dtype)
        object.__setattr__(self, "shape", geo.shape)
        object.__setattr__(self, "layout", geo.layout)
        object.__setattr__(self, "axis", geo.axes[-1] if geo.axes else 0)
        object.__setattr__(self, "planes", planes)
        object.__setattr__(self, "packed", packed)
        object.__setattr__(self, "scale_rule", scale_rule)

    @classmethod
    def _trusted(cls, geo: _Geometry, planes: Sequence[Any], packed: bool,
                 scale_rule: str | None) -> Quantized:
        q = cls.__new__(cls)
        q._set(geo, tuple(planes), packed, scale_rule)
        return q

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Quantized: {name} cannot be set (make a new one)")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Quantized: {name} cannot be deleted")

    @property
    def nbytes(self) -> tuple[int, ...]:
        """The bytes each plane takes."""
        return tuple(int(p.nbytes) for p in self.planes)

    @property
    def plane_dtypes(self) -> tuple[SimpleDType, ...]:
        """The simple dtype whose codes each plane holds (the element, then
        each level's scale): what its integers mean."""
        return (self.dtype.element, *(level.scale for level in self.dtype.levels))

    def scale_values(self, level: int = 0) -> np.ndarray:
        """The values of a level's scale codes, decoded (float64), in the
        plane's shape: no bit tricks needed to read a Float32 whole-tensor
        scale stored as its bits. Padding entries of a padded or swizzled
        plane decode as what their zero bytes hold."""
        if isinstance(level, bool) or not isinstance(level, int):
            raise TypeError(f"scale_values: level must be an int, got "
                            f"{type(level).__name__}")
        if not 0 <= level < len(self.dtype.levels):
            raise ValueError(f"scale_values: level must be in [0, "
                             f"{len(self.dtype.levels)}), got {level}")
        plane = self.planes[1 + level]
        return decode(plane, self.dtype.levels[level].scale, out_dtype="float64")

    def __repr__(self) -> str:
        layout = "" if self.layout == _default_layout(self) else f", layout={self.layout!r}"
        return (f"Quantized({self.dtype.name}, shape={self.shape}, axis={self.axis}"
                f"{layout}, packed={self.packed}, scale_rule={self.scale_rule!r}, "
                f"nbytes={self.nbytes})")

    def __reduce__(self) -> tuple[Any, ...]:
        return (_quantized, (self.dtype, self.shape, tuple(self.layout), self.planes,
                             self.packed, self.scale_rule))

    def to_arrays(self, prefix: str = "") -> tuple[dict[str, Any], dict[str, str]]:
        """The tensor as a flat mapping of named arrays and a mapping of
        string metadata, the shape safetensors (``save_file(arrays,
        metadata=metadata)``) and ``numpy.savez`` take. Names: ``prefix``
        followed by ``elements``, ``scales.0``, ``scales.1`` (a whole-tensor
        level); the metadata says the format (by name and structure), the
        shape, the layout, the options and each plane's simple dtype.
        :meth:`from_arrays` reads it back with the constructor's checks."""
        if not isinstance(prefix, str):
            raise TypeError(f"to_arrays: prefix must be a str, got "
                            f"{type(prefix).__name__}")
        names = [f"{prefix}elements"] + [f"{prefix}scales.{i}"
                                         for i in range(len(self.dtype.levels))]
        arrays = dict(zip(names, self.planes))
        metadata = {
            f"{prefix}format": _FORMAT,
            f"{prefix}dtype": self.dtype.name,
            f"{prefix}structure": repr(self.dtype.structure()),
            f"{prefix}shape": json.dumps(list(self.shape)),
            f"{prefix}layout": json.dumps({
                "axes": list(self.layout.axes) if self.layout.axes is not None else None,
                "order": self.layout.order, "scales": self.layout.scales,
                "align": self.layout.align, "group": self.layout.group,
                "batch_dims": self.layout.batch_dims, "expand": self.layout.expand}),
            f"{prefix}packed": json.dumps(self.packed),
            f"{prefix}scale_rule": json.dumps(self.scale_rule),
            f"{prefix}plane_dtypes": json.dumps([d.name for d in self.plane_dtypes]),
        }
        return arrays, metadata

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, Any], metadata: Mapping[str, str],
                    prefix: str = "") -> Quantized:
        """The tensor :meth:`to_arrays` stored: the format is looked up by
        name and must have the structure stored (LookupError, ValueError),
        and every plane is checked as the constructor checks it."""
        func = "from_arrays"
        if not isinstance(prefix, str):
            raise TypeError(f"{func}: prefix must be a str, got {type(prefix).__name__}")
        if not isinstance(arrays, Mapping) or not isinstance(metadata, Mapping):
            raise TypeError(f"{func}: arrays and metadata must be mappings")

        def meta(key: str) -> str:
            try:
                value = metadata[prefix + key]
            except KeyError:
                raise ValueError(f"{func}: metadata has no {prefix + key!r}") from None
            if not isinstance(value, str):
                raise TypeError(f"{func}: metadata {prefix + key!r} must be a str, got "
                                f"{type(value).__name__}")
            return str.__str__(value)

        def parsed(key: str) -> Any:
            try:
                return json.loads(meta(key))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{func}: metadata {prefix + key!r} is not valid JSON: "
                                 f"{exc}") from None

        if meta("format") != _FORMAT:
            raise ValueError(f"{func}: metadata {prefix + 'format'!r} must be "
                             f"{_FORMAT!r}, got {meta('format')!r}")
        dtype = DType.from_name(meta("dtype"))
        if not isinstance(dtype, BlockScaledDType):
            raise ValueError(f"{func}: {dtype.name} is not a block-scaled format")
        if repr(dtype.structure()) != meta("structure"):
            raise ValueError(f"{func}: {dtype.name} is registered here with another "
                             "structure than the one stored")
        spec = parsed("layout")
        if not isinstance(spec, dict):
            raise ValueError(f"{func}: metadata {prefix + 'layout'!r} must be an object")
        try:
            layout = BlockLayout(spec.get("axes"), order=spec.get("order", "blocked"),
                                 scales=spec.get("scales", "compact"),
                                 align=spec.get("align", 4), group=spec.get("group", 1),
                                 batch_dims=spec.get("batch_dims", 0),
                                 expand=spec.get("expand", False))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{func}: metadata {prefix + 'layout'!r}: {exc}") from None
        shape = parsed("shape")
        packed = parsed("packed")
        rule = parsed("scale_rule")
        names = [f"{prefix}elements"] + [f"{prefix}scales.{i}"
                                         for i in range(len(dtype.levels))]
        planes = []
        for name in names:
            if name not in arrays:
                raise ValueError(f"{func}: arrays has no {name!r}")
            planes.append(arrays[name])
        if not isinstance(shape, list):
            raise ValueError(f"{func}: metadata {prefix + 'shape'!r} must be a list")
        return cls(dtype, shape, planes, layout=layout, packed=packed, scale_rule=rule)


def _default_layout(q: Quantized) -> BlockLayout:
    if not q.layout or q.layout.axes is None:
        return q.layout
    block = _block_shape(q.dtype) or ()
    return tuple.__new__(BlockLayout, (tuple(range(len(q.shape) - len(block),
                                                   len(q.shape))) if len(block) > 1
                                       else (q.axis,), "blocked", "compact", 4, 1, 0,
                                       False))


def _quantized(dtype: Any, shape: Any, layout: Any, planes: Any, packed: Any,
               scale_rule: Any) -> Quantized:
    """Reconstruct a pickled Quantized (a permanent path), with the
    constructor's checks."""
    if type(layout) is not tuple or len(layout) != 7:
        raise TypeError("Quantized: a pickled layout must be a tuple of 7 fields")
    return Quantized(dtype, shape, planes, layout=_layout(*layout), packed=packed,
                     scale_rule=scale_rule)


_quantized.__module__ = __name__


def _float_array(func: str, values: object) -> Any:
    np = _numpy()
    source, kind, shape = _values(func, values)
    if kind == _F32:
        return np.asarray(source, dtype=np.float32).reshape(shape)
    if kind == _F64:
        return np.asarray(source, dtype=np.float64).reshape(shape)
    if kind == _BF16:
        # bfloat16 widens to float32 exactly: its bits are float32's top half
        return (np.asarray(source, dtype=np.uint16).astype(np.uint32) << 16).view(
            np.float32).reshape(shape)
    return np.asarray(source).view(np.float16).astype(np.float32).reshape(shape)


def _amax_floor(func: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{func}: amax_floor must be a float, got {type(value).__name__}")
    number = float(value)
    if not (number >= 0.0 and math.isfinite(number)):
        raise ValueError(f"{func}: amax_floor must be a finite float >= 0, got {number}")
    return number


def quantize(values: Any, dtype: BlockScaledDType, *, axis: int | tuple[int, ...] = -1,
             layout: BlockLayout | None = None, scale_rule: ScaleRule | None = None,
             rounding: Rounding | None = None, seed: Any = None, packed: bool = True,
             amax_floor: float = 0.0, threads: int | None = None) -> Quantized:
    """``values`` in the block-scaled format ``dtype``, laid out as
    ``layout`` says (:class:`BlockLayout`; by default blocks along ``axis``,
    the last, with compact scales; a length that is not a multiple of the
    block gives a partial last block).

    ``scale_rule``: for power-of-two scales ``"floor"`` (the default for
    E8M0: OCP MX v1.0), ``"ceil"``, ``"rceil"`` or ``"even"`` (these apply
    to float scale formats too: a power of two in the format's normal
    range); for float scales ``"amax"``, ``s = fl(amax / max)`` (the
    default; NVIDIA's recipe under a whole-tensor scale). The formulas are
    on the "Encoding values" page. ``amax_floor``: each block's largest
    magnitude is at least this (DeepSeek's and DeepGEMM's 1e-4).
    ``rounding``: how elements round (``"nearest_even"`` by default; any
    :data:`ROUNDINGS` value, stochastic with ``seed``); elements saturate.
    A block holding an infinity or a NaN gets the NaN scale. ``packed``:
    element codes packed (DLPack's bit order, each row to whole bytes) or
    one per byte. ``threads``: at most this many threads.

    float64 values are quantized from their own bits with power-of-two
    scales; float scales compute in float32, so float64 input is rounded to
    float32 first there (values beyond float32's range count as its
    largest).
    """
    func = "quantize"
    dtype = _block_dtype(func, dtype)
    rule = _choice(func, "scale_rule", scale_rule, SCALE_RULES)
    r = _choice(func, "rounding", rounding, ROUNDINGS)
    s = _seed(func, r, seed)
    if not isinstance(packed, bool):
        raise TypeError(f"{func}: packed must be a bool, got {type(packed).__name__}")
    floor = _amax_floor(func, amax_floor)
    t = _threads(func, threads)
    np = _numpy()
    array = _float_array(func, values)
    scale0 = dtype.levels[0].scale
    has_mantissa = bool(_record(func, scale0).mantissa_bits) if isinstance(
        scale0, SimpleDType) else False
    float_rule = (rule == 0 and has_mantissa) or rule == SCALE_RULES.index("amax") + 1
    if float_rule and array.dtype == np.float64:
        finite = np.isfinite(array)
        array = np.where(finite, np.clip(array, -_FLT_MAX, _FLT_MAX), array).astype(
            np.float32)
    geo = _Geometry(func, dtype, tuple(array.shape),
                    _resolve_layout(func, dtype, axis, layout),
                    "layout.axes" if layout is not None else "axis")
    planar = np.ascontiguousarray(np.transpose(array, geo.perm)).reshape(-1)
    shapes = geo.plane_shapes(packed)
    sizes = _plane_itemsizes(dtype, packed)
    planes = [np.empty(shapes[0], dtype=f"u{sizes[0]}"),
              np.zeros(shapes[1], dtype=f"u{sizes[1]}")]
    planes += [np.empty(p, dtype=f"u{size}") for p, size in zip(shapes[2:], sizes[2:])]
    _dtypes._codec_quantize(planar, planes[0].reshape(-1), tuple(p.reshape(-1)
                                                                for p in planes[1:]),
                            dtype, geo.grid, geo.grid_layout, rule, r, s, int(packed),
                            floor, t)
    name = scale_rule if scale_rule is not None else ("amax" if has_mantissa else "floor")
    return Quantized._trusted(geo, planes, packed, name)


def _geometry_of(func: str, q: object) -> _Geometry:
    if not isinstance(q, Quantized):
        raise TypeError(f"{func}: q must be a Quantized (from quantize), got "
                        f"{type(q).__name__}")
    return _Geometry(func, q.dtype, q.shape, q.layout)


def dequantize(q: Quantized, *, out_dtype: Any = "float32",
               nonfinite_scales: Literal["nan", "error"] = "nan",
               threads: int | None = None) -> np.ndarray:
    """The values of the quantized tensor ``q``, in its logical shape
    whatever its layout: each element's value times its block's scale
    (times the whole-tensor scale), computed exactly and rounded once to
    ``out_dtype`` (float32, float64, float16 or bfloat16). A scale that is
    not a finite positive value (the NaN scale of a block that held an
    infinity or a NaN; a code with its sign bit set, as UE4M3 scales never
    have) makes its block's values NaN, as OCP MX v1.0 says; with
    ``nonfinite_scales="error"`` it is a ValueError naming it."""
    func = "dequantize"
    geo = _geometry_of(func, q)
    if nonfinite_scales not in ("nan", "error"):
        raise ValueError(f"{func}: nonfinite_scales must be 'nan' or 'error', got "
                         f"{nonfinite_scales!r}")
    kind, target = _out_type(func, out_dtype)
    t = _threads(func, threads)
    np = _numpy()
    out = np.empty(geo.plane_extents, dtype=target)
    _dtypes._codec_dequantize(q.planes[0].reshape(-1), tuple(p.reshape(-1)
                                                             for p in q.planes[1:]),
                              _kernel_out(out, kind).reshape(-1), q.dtype, geo.grid,
                              geo.grid_layout, int(q.packed),
                              int(nonfinite_scales == "error"), kind, t)
    if geo.whole_only:
        return out.reshape(geo.shape)
    return np.transpose(out, np.argsort(geo.perm))


def _element_codes(q: Quantized, geo: _Geometry) -> Any:
    """The element plane as one code per element, in the plane's shape."""
    np = _numpy()
    plane = q.planes[0]
    bits = q.dtype.element.bits
    extents = geo.plane_extents
    if not q.packed:
        return plane.reshape(extents)
    last = extents[-1] if extents else 0
    rows = math.prod(extents[:-1]) if len(extents) > 1 else 1
    codes = np.empty((rows, last), dtype=_code_dtype(bits))
    flat = plane.reshape(rows, -1)
    if (last * bits) % 8 == 0 or rows <= 1:
        codes[:] = unpack(flat.reshape(-1), q.dtype.element, rows * last).reshape(rows, last)
    else:
        for i in range(rows):
            codes[i] = unpack(flat[i], q.dtype.element, last)
    return codes.reshape(extents)


def _packed_rows(codes: Any, element: SimpleDType) -> Any:
    """Codes (any shape) packed per last-axis row, each to whole bytes."""
    np = _numpy()
    extents = codes.shape
    last = extents[-1] if extents else 0
    rows = math.prod(extents[:-1]) if len(extents) > 1 else 1
    bits = element.bits
    flat = np.ascontiguousarray(codes).reshape(rows, last)
    if (last * bits) % 8 == 0 or rows <= 1:
        out = pack(flat.reshape(-1), element)
    else:
        out = np.concatenate([pack(flat[i], element) for i in range(rows)])
    return out.reshape(*extents[:-1], _row_bytes(bits, last))


def relayout(q: Quantized, layout: BlockLayout) -> Quantized:
    """The same values in another layout, losslessly: any ``order``,
    ``scales``, ``align``, ``group``, ``batch_dims`` and ``expand``.
    ``axes`` may change only by permuting the axes of a block whose shape
    the permutation leaves unchanged (a 16x16 block onto the transpose: the
    planes transpose exactly); any other change needs :func:`quantize`
    (ValueError). Compacting expanded scales whose copies of one block
    differ is a ValueError naming the block."""
    func = "relayout"
    source = _geometry_of(func, q)
    if not isinstance(layout, BlockLayout):
        raise TypeError(f"{func}: layout must be a BlockLayout, got {_shown(layout)}")
    target = _Geometry(func, q.dtype, q.shape, layout)
    if not source.whole_only:
        old = dict(zip(source.axes, source.block))
        new = dict(zip(target.axes, target.block))
        if old != new:
            raise ValueError(
                f"{func}: layout.axes {layout.axes} puts {q.dtype.name}'s block "
                f"{tuple(source.block)} on axes {target.axes} of shape {q.shape}, "
                f"not on the blocks of axes {source.axes}: other blocks need quantize"
            )
    np = _numpy()
    element = q.dtype.element
    shapes = target.plane_shapes(q.packed)
    if tuple(source.perm) == tuple(target.perm) and \
            tuple(q.planes[0].shape) == tuple(shapes[0]):
        # the same axis order: the element plane is the same bytes (only
        # the scales move)
        elements = q.planes[0].copy()
    else:
        codes = _element_codes(q, source)
        logical = np.transpose(codes, np.argsort(source.perm)) if source.perm else codes
        moved = np.ascontiguousarray(np.transpose(logical, target.perm)) if target.perm \
            else logical
        elements = _packed_rows(moved, element) if q.packed else moved
    scales = np.zeros(shapes[1], dtype=q.planes[1].dtype)
    if source.whole_only:
        scales = q.planes[1].copy()
    elif math.prod(q.shape):
        bad = _dtypes._codec_relayout(q.planes[1].reshape(-1), scales.reshape(-1),
                                      q.dtype, source.logical_grid, source.grid_layout,
                                      target.logical_grid, target.grid_layout)
        if bad is not None:
            counts = [_ceil(q.shape[t], dict(zip(source.axes, source.block)).get(t, 1))
                      for t in range(len(q.shape))]
            block = tuple(int(i) for i in np.unravel_index(bad, counts))
            raise ValueError(f"{func}: the expanded scale copies of block {block} (block "
                             "coordinates, in the tensor's axis order) differ; they "
                             "cannot be compacted")
    planes = [np.asarray(elements).reshape(shapes[0]), scales, *q.planes[2:]]
    return Quantized._trusted(target, planes, q.packed, q.scale_rule)


# ---- rotations ------------------------------------------------------------------------

def hadamard(values: Any, d: int = 16, *, signs: Sequence[float] | None = None,
             axis: int = -1) -> np.ndarray:
    """The random Hadamard transform some recipes apply before quantizing
    (NVIDIA's NVFP4 recipe: 16-element groups of the wgrad operands).

    Along ``axis`` (its length a multiple of ``d``, a power of two), each
    group ``v`` of ``d`` values becomes ``((v * s) @ H_d) / sqrt(d)`` with
    Sylvester's ``H_d`` (``H_1 = [1]``, ``H_2n = [[H, H], [H, -H]]``) and
    ``s`` the ``signs`` (``d`` values, each 1 or -1; default all 1),
    computed in float64 by the butterfly (stages ``h = 1, 2, ..., d/2``:
    pairs ``(i, i + h)`` become ``(a + b, a - b)``), then times ``1 /
    sqrt(d)`` in float64, and rounded once to float32 (float64 input stays
    float64). A rotation changes the values the codes mean: the product
    cancels it only when both operands use the same matrix, so a rotated
    tensor is an ordinary tensor of rotated values.
    """
    func = "hadamard"
    if isinstance(d, bool) or not isinstance(d, int):
        raise TypeError(f"{func}: d must be an int, got {type(d).__name__}")
    d = int.__index__(d)
    if d < 1 or d & (d - 1):
        raise ValueError(f"{func}: d must be a power of two, got {d}")
    np = _numpy()
    array = _float_array(func, values)
    wide = array.dtype == np.float64
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise TypeError(f"{func}: axis must be an int, got {type(axis).__name__}")
    if not -array.ndim <= axis < array.ndim:
        raise ValueError(f"{func}: axis {axis} is out of range for {array.ndim} "
                         "dimensions")
    length = array.shape[axis]
    if length % d:
        raise ValueError(f"{func}: axis {axis} has length {length}, not a multiple of "
                         f"d={d}")
    s = np.ones(d)
    if signs is not None:
        s = np.asarray(signs, dtype=np.float64)
        if s.shape != (d,):
            raise ValueError(f"{func}: signs must hold d={d} values, got shape {s.shape}")
        if not np.all((s == 1.0) | (s == -1.0)):
            raise ValueError(f"{func}: signs must each be 1 or -1")
    moved = np.moveaxis(array.astype(np.float64), axis, -1)
    x = moved.reshape(-1, d) * s
    h = 1
    while h < d:
        pairs = x.reshape(-1, d // (2 * h), 2, h)
        a, b = pairs[:, :, 0, :], pairs[:, :, 1, :]
        x = np.stack((a + b, a - b), axis=2).reshape(-1, d)
        h *= 2
    x = x * (1.0 / math.sqrt(d))
    result = np.moveaxis(x.reshape(moved.shape), -1, axis)
    return np.ascontiguousarray(result if wide else result.astype(np.float32))
