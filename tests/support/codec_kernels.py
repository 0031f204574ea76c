"""Calls of the private codec kernels (stride_weave._dtypes._codec_*) with
their full argument lists, for the tests that attack the C entry points
directly: one place that knows the signatures and how a grid of rows is
described (each axis as (extent, block, compact, batch, row, col,
expanded), the layout as (scales, R, C, align, group))."""

from stride_weave import _dtypes

#: A compact scale plane.
COMPACT = (0, 0, 0, 1, 1)


def row_grid(rows, length, block):
    """The grid of `rows` rows of `length` elements in blocks of `block`
    along each row, with compact scales: today's layout."""
    blocks = -(-length // block) if length else 0
    return ((rows, 1, blocks, 0, 0, 0, 0), (length, block, 1, 0, 0, 0, 0)), COMPACT


def encode(values, out, dtype, source=0, rounding=0, overflow=0, nan=0, code=0,
           code_negative=0, seed=0, sign=0, threads=1):
    return _dtypes._codec_encode(values, out, dtype, source, rounding, overflow, nan, code,
                                 code_negative, seed, sign, threads)


def decode(codes, out, dtype, out_type=0, threads=1):
    return _dtypes._codec_decode(codes, out, dtype, out_type, threads)


def pack(codes, out, dtype, threads=1):
    return _dtypes._codec_pack(codes, out, dtype, threads)


def unpack(data, out, dtype, count, threads=1):
    return _dtypes._codec_unpack(data, out, dtype, count, threads)


def quantize(values, elements, scales, dtype, rows, length, block, rule=0, rounding=0,
             seed=0, packed=1, amax_floor=0.0, threads=1):
    axes, layout = row_grid(rows, length, block)
    return _dtypes._codec_quantize(values, elements, scales, dtype, axes, layout, rule,
                                   rounding, seed, packed, amax_floor, threads)


def dequantize(elements, scales, out, dtype, rows, length, block, packed=1,
               nonfinite_error=0, out_type=0, threads=1):
    axes, layout = row_grid(rows, length, block)
    return _dtypes._codec_dequantize(elements, scales, out, dtype, axes, layout, packed,
                                     nonfinite_error, out_type, threads)
