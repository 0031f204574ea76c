"""Coverage-guided fuzzing of stride_weave.codecs with atheris.

    python fuzz/fuzz_codecs.py -max_total_time=60 [libFuzzer flags...]

Each input (bytes from libFuzzer) is decoded by atheris.FuzzedDataProvider
into one call of a codec kernel (stride_weave._dtypes._codec_*) or of its
public function (stride_weave.codecs), with:

- a dtype from a pool: every built-in simple and block-scaled dtype, the
  formats pack, extension formats with unusual records (no zero, unsigned,
  IEEE with one mantissa bit, wide exponents, a 7-bit block-scaled
  element), a category, a compound dtype, a simple dtype without a record,
  and objects that are not dtypes;
- buffers of decoded bytes and decoded lengths (too short, too long,
  misaligned, read-only, non-contiguous, overlapping, of the wrong item
  size or format), as bytes, bytearray, memoryview or numpy arrays;
- options as decoded ints (in and out of range, huge), str subclasses and
  other objects.

The oracle: every call returns None (the kernels) or a result, or raises
TypeError or ValueError (BufferError for an exporter's own refusal); any
other exception is a finding, and so is a crash of the interpreter. After a
successful public encode, decode(encode(x)) re-encodes to the same codes
(the codes of a format are a fixed point; formats whose values are all
float64s), and a successful quantize
dequantizes. See fuzz/README.md.
"""
import os
import sys

import atheris

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, os.pardir, "tests")]

with atheris.instrument_imports():
    import numpy as np

    from stride_weave import _dtypes, codecs, formats
    from stride_weave.dtypes import BlockScaledDType, DType, Level, SimpleDType
    from stride_weave.numerics import NumericInfo, register_numeric_info
    from support.defs import PlanePair


def _extension(name, e, m, bias, nan, signed=True):
    dtype = SimpleDType(name, bits=e + m + int(signed), supertype=DType.Floating)
    register_numeric_info(dtype, NumericInfo.floating(
        name, exponent_bits=e, mantissa_bits=m, bias=bias, nan_encoding=nan, signed=signed))
    return dtype


_E1 = _extension("FuzzE5M1", 5, 1, 15, "ieee")
_U = _extension("FuzzUE4M3", 4, 3, 7, "all_ones", signed=False)
_W = _extension("FuzzE11M4", 11, 4, 1023, "ieee")
_E3M3 = _extension("FuzzE3M3", 3, 3, 3, "none")
_BARE = SimpleDType("FuzzBare", bits=8, supertype=DType.Floating)
SIMPLE = [DType.Bool, DType.Int8, DType.Int32, DType.Float32, DType.Float64, DType.E8M0,
          DType.E5M2, DType.E4M3, DType.E3M2, DType.E2M3, DType.E2M1, *formats.FORMATS,
          _E1, _U, _W, _E3M3]
BLOCK = [DType.MXFP8_E4M3, DType.MXFP8_E5M2, DType.MXFP6_E3M2, DType.MXFP6_E2M3,
         DType.MXFP4, DType.MXINT8, DType.NVFP4,
         BlockScaledDType("FuzzMX7", element=_E3M3, levels=[Level(DType.E8M0, 6)])]
WRONG = [DType.Floating, PlanePair("FuzzPair", planes=[_BARE, DType.Int8]), _BARE, None,
         "E4M3", 3]
EXPECTED = (TypeError, ValueError, BufferError)


class Str(str):
    pass


def _buffer(fdp, kinds="fdeBHIQ"):
    kind = kinds[fdp.ConsumeIntInRange(0, len(kinds) - 1)]
    size = np.dtype(kind).itemsize
    n = fdp.ConsumeIntInRange(0, 96)
    raw = fdp.ConsumeBytes(n * size)
    raw += b"\0" * (n * size - len(raw))
    how = fdp.ConsumeIntInRange(0, 5)
    array = np.frombuffer(raw, dtype=kind).copy()
    if how == 0:
        return array
    if how == 1:
        return array[::2]                                   # non-contiguous
    if how == 2:
        return bytes(raw)                                   # read-only, format B
    if how == 3:
        return memoryview(bytearray(b"\0" + raw))[1:].cast("B").cast(kind) if raw else array
    if how == 4:
        return bytearray(raw)
    return array.reshape(-1, 1) if n else array


def _option(fdp):
    choice = fdp.ConsumeIntInRange(0, 6)
    if choice == 0:
        return fdp.ConsumeIntInRange(-2, 8)
    if choice == 1:
        return fdp.ConsumeInt(12)
    if choice == 2:
        return True
    if choice == 3:
        return 2**70
    if choice == 4:
        return 1.5
    if choice == 5:
        return Str("x")
    return fdp.ConsumeIntInRange(0, 3)


def _dtype(fdp, pool):
    everything = pool + WRONG
    i = fdp.ConsumeIntInRange(0, len(everything) - 1)
    return everything[i]


def _kernel(fdp):
    op = fdp.ConsumeIntInRange(0, 5)
    if op == 0:
        _dtypes._codec_encode(_buffer(fdp), _buffer(fdp), _dtype(fdp, SIMPLE),
                              *[_option(fdp) for _ in range(6)])
    elif op == 1:
        _dtypes._codec_decode(_buffer(fdp), _buffer(fdp), _dtype(fdp, SIMPLE), _option(fdp))
    elif op == 2:
        _dtypes._codec_pack(_buffer(fdp), _buffer(fdp), _dtype(fdp, SIMPLE))
    elif op == 3:
        _dtypes._codec_unpack(_buffer(fdp), _buffer(fdp), _dtype(fdp, SIMPLE), _option(fdp))
    elif op == 4:
        scales = tuple(_buffer(fdp) for _ in range(fdp.ConsumeIntInRange(0, 3)))
        _dtypes._codec_quantize(_buffer(fdp), _buffer(fdp), scales, _dtype(fdp, BLOCK),
                                *[_option(fdp) for _ in range(6)])
    else:
        scales = tuple(_buffer(fdp) for _ in range(fdp.ConsumeIntInRange(0, 3)))
        _dtypes._codec_dequantize(_buffer(fdp), scales, _buffer(fdp), _dtype(fdp, BLOCK),
                                  *[_option(fdp) for _ in range(4)])


def _values(fdp, n):
    raw = fdp.ConsumeBytes(4 * n)
    raw += b"\0" * (4 * n - len(raw))
    return np.frombuffer(raw, dtype=np.float32).copy()


def _public(fdp):
    if fdp.ConsumeBool():
        dtype = _dtype(fdp, SIMPLE)
        x = _values(fdp, fdp.ConsumeIntInRange(0, 64))
        rounding = [None, *codecs.ROUNDINGS, "bogus"][fdp.ConsumeIntInRange(0, 7)]
        seed = fdp.ConsumeIntInRange(0, 2**64 - 1) if rounding == "stochastic" else None
        codes = codecs.encode(x, dtype, rounding=rounding, seed=seed)
        again = codecs.encode(codecs.decode(codes, dtype, out_dtype="float64"), dtype)
        values = codecs.decode(codes, dtype, out_dtype="float64")
        if dtype.bits > 53 and dtype not in (DType.Float64,):
            return      # 64-bit integers: their values are not all float64s
        same = (again == codes) | np.isnan(values)
        if not same.all():
            raise AssertionError(f"codes of {dtype!r} are not a fixed point: {codes} {again}")
        return
    dtype = _dtype(fdp, BLOCK)
    rows, length = fdp.ConsumeIntInRange(0, 4), fdp.ConsumeIntInRange(0, 80)
    x = _values(fdp, rows * length).reshape(rows, length)
    rule = [None, *codecs.SCALE_RULES, "bogus"][fdp.ConsumeIntInRange(0, 6)]
    q = codecs.quantize(x, dtype, scale_rule=rule, packed=fdp.ConsumeBool())
    out = codecs.dequantize(q)
    if out.shape != x.shape:
        raise AssertionError(f"dequantize gave shape {out.shape} for {x.shape}")


def TestOneInput(data):
    fdp = atheris.FuzzedDataProvider(data)
    try:
        if fdp.ConsumeBool():
            _kernel(fdp)
        else:
            _public(fdp)
    except EXPECTED:
        pass


if __name__ == "__main__":
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()
