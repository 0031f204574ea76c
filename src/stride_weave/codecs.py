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
                given = view.format
                fmt = given.lstrip("@=<")
                shape = tuple(view.shape or ())
                contiguous = view.c_contiguous
            if not contiguous:
                raise ValueError(f"{func}: values must be C-contiguous")
            kinds = {"f": _SRC_F32, "d": _SRC_F64, "e": _SRC_F16}
            if fmt not in kinds:
                raise TypeError(
                    f"{func}: values must hold float32, float64 or float16 "
                    f"(buffer format 'f', 'd' or 'e'), got format {given!r}"
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
    try:
        view = memoryview(codes)  # type: ignore[arg-type]
    except TypeError:
        # a sequence of ints
        return _codes(func, arg, np.asarray(codes, dtype=want), bits)
    with view:
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


# ---- block-scaled --------------------------------------------------------------------

def _block_dtype(func: str, dtype: object) -> BlockScaledDType:
    if not isinstance(dtype, BlockScaledDType):
        raise TypeError(f"{func}: dtype must be a BlockScaledDType, got {dtype!r}")
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


def _axis(func: str, axis: object, ndim: int) -> int:
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise TypeError(f"{func}: axis must be an int, got {type(axis).__name__}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"{func}: axis {axis} is out of range for {ndim} dimensions")
    return int(axis) % ndim


def _whole_only(dtype: BlockScaledDType) -> bool:
    return dtype.levels[0].block is Whole


def _rows(func: str, dtype: BlockScaledDType, shape: tuple[int, ...],
          axis: object) -> tuple[int, tuple[int, ...], int, int]:
    """(axis, the other extents, rows, length) of the blocked layout."""
    if _whole_only(dtype):
        total = 1
        for extent in shape:
            total *= extent
        return 0, (), 1, total
    if not shape:
        raise ValueError(f"{func}: shape must have at least one dimension to block along")
    a = _axis(func, axis, len(shape))
    outer = shape[:a] + shape[a + 1:]
    rows = 1
    for extent in outer:
        rows *= extent
    return a, outer, rows, shape[a]


def _row_bytes(bits: int, length: int) -> int:
    return (length * bits + 7) // 8


def plane_shapes(dtype: BlockScaledDType, shape: Sequence[int], *, axis: int = -1,
                 packed: bool = True) -> tuple[tuple[int, ...], ...]:
    """The shape of each plane of a tensor of logical ``shape`` in
    ``dtype``, in the order ``interop.planes(dtype)`` lists the planes.

    Planes are laid out with the blocked axis last (the other axes keep
    their order): the element plane is ``(*others, L)`` codes, or, packed,
    ``(*others, ceil(L * bits / 8))`` bytes, each row padded to whole
    bytes; level 0's scale plane is ``(*others, ceil(L / block))``; a
    whole-tensor level is one code, shape ``()``. A format whose only level
    is Whole stores its elements flattened.
    """
    func = "plane_shapes"
    dtype = _block_dtype(func, dtype)
    extents = _shape(func, shape)
    _, outer, rows, length = _rows(func, dtype, extents, axis)
    bits = dtype.element.bits
    shapes: list[tuple[int, ...]] = [
        (*outer, _row_bytes(bits, length) if packed else length)]
    previous = length
    for level in dtype.levels:
        if level.block is Whole:
            shapes.append(())
        else:
            previous = -(-previous // level.block)
            shapes.append((*outer, previous))
    return tuple(shapes)


def _plane_itemsizes(dtype: BlockScaledDType, packed: bool) -> tuple[int, ...]:
    np = _numpy()
    sizes = [1 if packed else np.dtype(_code_dtype(dtype.element.bits)).itemsize]
    sizes += [np.dtype(_code_dtype(level.scale.bits)).itemsize for level in dtype.levels]
    return tuple(sizes)


def _nbytes(dtype: BlockScaledDType, shapes: tuple[tuple[int, ...], ...],
            packed: bool) -> tuple[int, ...]:
    result = []
    for plane, size in zip(shapes, _plane_itemsizes(dtype, packed)):
        count = 1
        for extent in plane:
            count *= extent
        result.append(count * size)
    return tuple(result)


def storage_nbytes(dtype: BlockScaledDType, shape: Sequence[int], *, axis: int = -1,
                   packed: bool = True) -> int:
    """The bytes a tensor of logical ``shape`` takes in ``dtype``: the sum
    over its planes (see :func:`plane_shapes`). Exact for any shape (a
    Python int, never an overflowed C size)."""
    func = "storage_nbytes"
    dtype = _block_dtype(func, dtype)
    return sum(_nbytes(dtype, plane_shapes(dtype, _shape(func, shape), axis=axis,
                                            packed=packed), packed))


def is_block_aligned(dtype: BlockScaledDType, shape: Sequence[int], *,
                     axis: int = -1) -> bool:
    """Whether ``shape`` fills every block along ``axis`` (no partial last
    block) and packs each row into whole bytes (no padding bits): the shapes
    whose planes hardware kernels take as they are. Other shapes are valid
    too: quantize gives them a partial last block and padded rows."""
    func = "is_block_aligned"
    dtype = _block_dtype(func, dtype)
    extents = _shape(func, shape)
    _, _, _, length = _rows(func, dtype, extents, axis)
    if (length * dtype.element.bits) % 8:
        return False
    span = 1
    for level in dtype.levels:
        if level.block is Whole:
            break
        span *= level.block
        if length % span:
            return False
    return True


class Quantized:
    """A tensor in a block-scaled format: its planes, in the order
    ``interop.planes(dtype)`` lists them (element codes, packed unless
    ``packed`` is False; then each level's scale codes; a whole-tensor
    scale last, shape ``()``), laid out as :func:`plane_shapes` says, with
    the logical ``shape``, the blocked ``axis`` and the ``dtype``.

    Built by :func:`quantize`; building one from planes of another source
    checks each plane's shape and item size (ValueError/TypeError).
    """

    __slots__ = ("dtype", "shape", "axis", "planes", "packed", "scale_rule")

    def __init__(self, dtype: BlockScaledDType, shape: Sequence[int],
                 planes: Sequence[Any], *, axis: int = -1, packed: bool = True,
                 scale_rule: str | None = None) -> None:
        func = "Quantized"
        np = _numpy()
        dtype = _block_dtype(func, dtype)
        extents = _shape(func, shape)
        a, _, _, _ = _rows(func, dtype, extents, axis)
        shapes = plane_shapes(dtype, extents, axis=a, packed=bool(packed))
        planes = tuple(planes)
        if len(planes) != len(shapes):
            raise ValueError(f"{func}: {dtype.name} has {len(shapes)} planes, got "
                             f"{len(planes)}")
        checked = []
        for i, (plane, want, size) in enumerate(zip(planes, shapes,
                                                     _plane_itemsizes(dtype, packed))):
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
        self.dtype = dtype
        self.shape = extents
        self.axis = a
        self.planes = tuple(checked)
        self.packed = bool(packed)
        self.scale_rule = scale_rule

    @property
    def nbytes(self) -> tuple[int, ...]:
        """The bytes each plane takes."""
        return tuple(int(p.nbytes) for p in self.planes)

    def __repr__(self) -> str:
        return (f"Quantized({self.dtype.name}, shape={self.shape}, axis={self.axis}, "
                f"packed={self.packed}, scale_rule={self.scale_rule!r}, "
                f"nbytes={self.nbytes})")


def _float_array(func: str, values: object) -> Any:
    np = _numpy()
    source, kind, shape = _values(func, values)
    if kind == _SRC_F32:
        return np.asarray(source, dtype=np.float32).reshape(shape)
    if kind == _SRC_F64:
        return np.asarray(source, dtype=np.float64).reshape(shape)
    if kind == _SRC_BF16:
        # bfloat16 widens to float32 exactly: its bits are float32's top half
        return (np.asarray(source, dtype=np.uint16).astype(np.uint32) << 16).view(
            np.float32).reshape(shape)
    return np.asarray(source).view(np.float16).astype(np.float32).reshape(shape)


def quantize(values: Any, dtype: BlockScaledDType, *, axis: int = -1,
             scale_rule: ScaleRule | None = None, rounding: Rounding | None = None,
             seed: Any = None, packed: bool = True) -> Quantized:
    """``values`` in the block-scaled format ``dtype``, with blocks along
    ``axis`` (the last by default; a length that is not a multiple of the
    block gives a partial last block).

    ``scale_rule``: for power-of-two (E8M0) scales ``"floor"`` (the
    default: OCP MX v1.0), ``"ceil"``, ``"rceil"`` or ``"even"``; for float
    scales (NVFP4) ``"amax"``, NVIDIA's recipe (the default). The formulas
    are on the "Encoding values" page. ``rounding``: how elements round
    (``"nearest_even"`` by default; any :data:`ROUNDINGS` value, stochastic
    with ``seed``); elements saturate. A block holding an infinity or a
    NaN gets the NaN scale. ``packed``: element codes packed (DLPack's bit
    order, each row to whole bytes) or one per byte.

    float64 values are quantized from their own bits with power-of-two
    scales; NVIDIA's float-scale recipe computes in float32, so they are
    rounded to float32 first there.
    """
    func = "quantize"
    dtype = _block_dtype(func, dtype)
    rule = _choice(func, "scale_rule", scale_rule, SCALE_RULES)
    r = _choice(func, "rounding", rounding, ROUNDINGS)
    s = _seed(func, r, seed)
    if not isinstance(packed, bool):
        raise TypeError(f"{func}: packed must be a bool, got {type(packed).__name__}")
    np = _numpy()
    array = _float_array(func, values)
    if dtype.levels[0].scale.bits and _dtypes.numeric_info(
            dtype.levels[0].scale).mantissa_bits and array.dtype == np.float64:
        array = array.astype(np.float32)
    shape = tuple(array.shape)
    a, outer, rows, length = _rows(func, dtype, shape, axis)
    if _whole_only(dtype):
        blocked = np.ascontiguousarray(array).reshape(-1)
    else:
        blocked = np.ascontiguousarray(np.moveaxis(array, a, -1))
    shapes = plane_shapes(dtype, shape, axis=a, packed=packed)
    sizes = _plane_itemsizes(dtype, packed)
    planes = [np.empty(p, dtype=f"u{size}") for p, size in zip(shapes, sizes)]
    _dtypes._codec_quantize(blocked, planes[0], tuple(planes[1:]), dtype, rows, length,
                            rule, r, s, int(packed))
    name = scale_rule if scale_rule is not None else (
        "floor" if _dtypes.numeric_info(dtype.levels[0].scale).mantissa_bits == 0
        else "amax")
    return Quantized(dtype, shape, planes, axis=a, packed=packed, scale_rule=name)


def dequantize(q: Quantized, *, out_dtype: Any = "float32",
               nonfinite_scales: Literal["nan", "error"] = "nan") -> np.ndarray:
    """The values of the quantized tensor ``q``: each element's value times
    its block's scale (times the whole-tensor scale), computed exactly and
    rounded once to ``out_dtype`` (float32 or float64). A non-finite scale
    (the NaN scale of a block that held an infinity or a NaN) makes its
    block's values NaN, as OCP MX v1.0 says; with
    ``nonfinite_scales="error"`` it is a ValueError."""
    func = "dequantize"
    if not isinstance(q, Quantized):
        raise TypeError(f"{func}: q must be a Quantized (from quantize), got "
                        f"{type(q).__name__}")
    if nonfinite_scales not in ("nan", "error"):
        raise ValueError(f"{func}: nonfinite_scales must be 'nan' or 'error', got "
                         f"{nonfinite_scales!r}")
    np = _numpy()
    target = np.dtype(out_dtype)
    if target not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"{func}: out_dtype must be float32 or float64, got {target}")
    a, outer, rows, length = _rows(func, q.dtype, q.shape, q.axis)
    out = np.empty((*outer, length) if not _whole_only(q.dtype) else (length,),
                   dtype=target)
    _dtypes._codec_dequantize(q.planes[0], tuple(q.planes[1:]), out, q.dtype, rows,
                              length, int(q.packed), int(nonfinite_scales == "error"))
    if _whole_only(q.dtype):
        return out.reshape(q.shape)
    return np.moveaxis(out, -1, a)
