"""The codecs against bad and hostile input: wrong dtypes, wrongly typed or
laid out buffers, counts that overrun, unknown options, huge shapes, and
buffers that Python code tries to resize or release during a call. Each
is a clear TypeError/ValueError naming the argument, never a crash, never
a read or write outside the buffers."""
import subprocess
import sys
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support import child_report, unique_name
from support.child import assert_clean_exit, run_child
from stride_weave import _dtypes, codecs, formats
from stride_weave.dtypes import DType, SimpleDType
from support.defs import PlanePair
from support import codec_kernels as kernels

np = pytest.importorskip("numpy")

X = np.linspace(-8, 8, 64, dtype=np.float32)


# ---- wrong dtypes -------------------------------------------------------------------

@pytest.mark.parametrize("dtype,match", [
    (DType.Floating, "SimpleDType"),
    (DType.MXFP4, "block-scaled"),
    (formats.Complex64, "complex"),
    ("E4M3", "SimpleDType"),
])
def test_encode_refuses_what_is_not_a_simple_format(dtype, match):
    with pytest.raises(TypeError, match=match):
        codecs.encode(X, dtype)
    with pytest.raises(TypeError, match=match):
        codecs.decode(np.zeros(4, np.uint8), dtype)


def test_a_simple_dtype_without_a_record_is_refused():
    bare = SimpleDType(unique_name("CodecBare_"), bits=8, supertype=DType.Floating)
    with pytest.raises(TypeError, match="has no numeric record"):
        codecs.encode(X, bare)
    with pytest.raises(TypeError, match="dtype .* has no numeric record"):
        kernels.encode(X, np.zeros(64, np.uint8), bare)
    pair = PlanePair(unique_name("CodecPair_"), planes=[bare, DType.Int8])
    with pytest.raises(TypeError, match="SimpleDType"):
        codecs.encode(X, pair)
    with pytest.raises(TypeError, match="BlockScaledDType"):
        codecs.quantize(X, pair)
    with pytest.raises(TypeError, match="registered BlockScaledDType"):
        kernels.quantize(X, np.zeros(32, np.uint8), (np.zeros(2, np.uint8),), pair, 1, 64, 32)


# ---- buffers -----------------------------------------------------------------------------

def test_wrongly_typed_buffers_name_the_argument():
    with pytest.raises(TypeError, match=r"values must be float32, float64, float16 or "
                                        r"bfloat16 \(or integers\), got an array of "
                                        "complex64"):
        codecs.encode(np.arange(4, dtype=np.complex64), DType.E4M3)
    with pytest.raises(TypeError, match="out must hold unsigned integers of 1 byte"):
        codecs.encode(X, DType.E4M3, out=np.zeros(64, np.uint16))
    with pytest.raises(TypeError, match="out must be a C-contiguous writable buffer"):
        codecs.encode(X, DType.E4M3, out=bytes(64))
    with pytest.raises(TypeError, match="values must hold float32, float64 or float16"):
        codecs.encode(memoryview(b"abcd"), DType.E4M3)
    with pytest.raises(TypeError, match="codes must hold unsigned integers of 1 byte"):
        kernels.decode(np.zeros(4, np.int8), np.zeros(4, np.float32), DType.E4M3)
    with pytest.raises(TypeError, match="out must hold float32"):
        kernels.decode(np.zeros(4, np.uint8), np.zeros(4, np.float64), DType.E4M3)


def test_non_contiguous_buffers_are_refused_by_the_kernels():
    strided = memoryview(bytearray(512)).cast("f")[::2]
    with pytest.raises(ValueError, match="values must be C-contiguous"):
        codecs.encode(strided, DType.E4M3)
    with pytest.raises(TypeError, match="values must be a C-contiguous buffer"):
        kernels.encode(strided, np.zeros(64, np.uint8), DType.E4M3)
    with pytest.raises(TypeError, match="out must be a C-contiguous writable buffer"):
        kernels.encode(X, np.zeros(128, np.uint8)[::2], DType.E4M3)


def test_counts_that_overrun_are_refused():
    with pytest.raises(ValueError, match="one code per value: 64 values, room for 63"):
        kernels.encode(X, np.zeros(63, np.uint8), DType.E4M3)
    with pytest.raises(ValueError, match="count 9 of 4-bit codes needs 5 bytes of data"):
        codecs.unpack(bytes(4), DType.E2M1, 9)
    with pytest.raises(ValueError, match="pack into 2 bytes; out has 1"):
        kernels.pack(np.zeros(4, np.uint8), np.zeros(1, np.uint8), DType.E2M1)
    with pytest.raises(ValueError, match="room for exactly 4 codes"):
        kernels.unpack(bytes(4), np.zeros(3, np.uint8), DType.E2M1, 4)
    with pytest.raises(ValueError, match="values must hold 64 elements"):
        kernels.quantize(X[:32], np.zeros(32, np.uint8), (np.zeros(2, np.uint8),),
                         DType.MXFP4, 1, 64, 32)
    with pytest.raises(ValueError, match=r"scales\[0\] must hold at least 2 codes"):
        kernels.quantize(X, np.zeros(32, np.uint8), (np.zeros(1, np.uint8),),
                         DType.MXFP4, 1, 64, 32)
    with pytest.raises(TypeError, match="scales must be a tuple of 2 buffers"):
        kernels.quantize(X, np.zeros(32, np.uint8), (np.zeros(4, np.uint8),),
                         DType.NVFP4, 1, 64, 16)


def test_overlapping_buffers_are_refused():
    raw = np.zeros(64, np.float32)
    with pytest.raises(ValueError, match="values and out must not overlap"):
        kernels.encode(raw, raw.view(np.uint8)[:64], DType.E4M3)


def test_huge_sizes_do_not_overflow():
    with pytest.raises(ValueError, match="too large"):
        kernels.quantize(X, np.zeros(32, np.uint8), (np.zeros(2, np.uint8),),
                         DType.MXFP4, 2**62, 2**62, 32)
    with pytest.raises(ValueError, match="needs .* bytes of data"):
        kernels.unpack(bytes(4), np.zeros(4, np.uint8), DType.E2M1, 2**62)
    with pytest.raises(ValueError, match="non-negative int below 2\\*\\*63"):
        kernels.unpack(bytes(4), np.zeros(4, np.uint8), DType.E2M1, 2**70)
    assert codecs.storage_nbytes(DType.MXFP4, (2**62, 2**62)) == 2**123 + 2**119


def test_quantize_an_empty_tensor_with_many_rows_returns():
    # A liveness check, not a performance bound: a loop over the rows of
    # none would take centuries, so any finite wait tells it apart.
    try:
        rc, out, err = run_child("""
            import numpy as np
            from stride_weave import _dtypes, codecs
            from stride_weave.dtypes import DType
            from support import codec_kernels as kernels

            x = np.empty((2**60, 0), dtype=np.float32)
            for dtype in (DType.MXFP4, DType.NVFP4):
                for axis in (-1, 0):
                    q = codecs.quantize(x, dtype, axis=axis)
                    assert codecs.dequantize(q).shape == x.shape
            # the kernels themselves: the most rows a count takes, of none
            rows, none = 2**63 - 1, np.empty(0, np.uint8)
            kernels.quantize(np.empty(0, np.float32), none, (none,), DType.MXFP4, rows, 0, 32)
            kernels.dequantize(none, (none,), np.empty(0, np.float32), DType.MXFP4, rows, 0,
                               32, nonfinite_error=1)
            print("ok")
        """, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("quantize of an empty (2**60, 0) tensor did not return")
    assert_clean_exit(rc, out, err)
    assert out.strip() == "ok"


# ---- options -----------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs,error,match", [
    ({"rounding": "nearest"}, ValueError, "rounding must be one of"),
    ({"rounding": 1}, TypeError, "rounding must be a str"),
    ({"overflow": "wrap"}, ValueError, "overflow must be one of"),
    ({"nan": 1.5}, TypeError, "nan must be"),
    ({"rounding": "stochastic", "seed": -1}, ValueError, "seed must be in"),
    ({"rounding": "stochastic", "seed": 1.5}, TypeError, "seed must be an int"),
])
def test_unknown_options_name_the_argument(kwargs, error, match):
    with pytest.raises(error, match=match):
        codecs.encode(X, DType.E4M3, **kwargs)


def test_the_kernels_take_exact_ints_only():
    class Index(int):
        def __index__(self):                # never called
            raise AssertionError("ran user code")

    out = np.zeros(64, np.uint8)
    with pytest.raises(TypeError, match="rounding must be an int, got Index"):
        kernels.encode(X, out, DType.E4M3, rounding=Index(1))
    with pytest.raises(ValueError, match="rounding must be between 0 and 6"):
        kernels.encode(X, out, DType.E4M3, rounding=7)
    with pytest.raises(ValueError, match="source must be between"):
        kernels.encode(X, out, DType.E4M3, source=9)
    with pytest.raises(ValueError, match="threads must be between 1 and 256"):
        kernels.encode(X, out, DType.E4M3, threads=0)
    with pytest.raises(TypeError, match="a grid field must be an int, got Index"):
        axes, layout = kernels.row_grid(1, 64, 32)
        _dtypes._codec_quantize(X, np.zeros(32, np.uint8), (np.zeros(2, np.uint8),),
                                DType.MXFP4, ((1, 1, 2, 0, 0, 0, 0),
                                              (64, Index(32), 1, 0, 0, 0, 0)), layout,
                                0, 0, 0, 1, 0.0, 1)
    with pytest.raises(TypeError, match="takes 12 or 13 arguments"):
        _dtypes._codec_encode(X, out)


# ---- buffers changed by Python code during a call --------------------------------------

class Exporter:
    """Exports `data` through __buffer__ (CPython 3.12+), after running
    `hook` (which may resize or release other buffers)."""

    def __init__(self, data, hook):
        self.data, self.hook = data, hook

    def __buffer__(self, flags):
        self.hook()
        return memoryview(self.data)


@pytest.mark.skipif(sys.version_info < (3, 12), reason="__buffer__ needs CPython 3.12")
def test_an_exporter_that_resizes_the_other_buffer_while_exporting():
    values = bytearray(np.ones(64, np.float32).tobytes())
    out = bytearray(64)

    # values' view is taken first: resizing it from out's hook is refused
    def grow_values():
        values.extend(b"\0" * 4096)

    with pytest.raises(TypeError, match="out must be a C-contiguous writable buffer") as info:
        kernels.encode(memoryview(values).cast("f"), Exporter(out, grow_values), DType.E4M3)
    assert isinstance(info.value.__cause__, BufferError)
    assert len(values) == 256

    # out is taken after values' hook shrank it: the length check refuses it
    def shrink_out():
        del out[8:]

    with pytest.raises(ValueError, match="room for 8 codes"):
        kernels.encode(Exporter(memoryview(values).cast("f"), shrink_out), out, DType.E4M3)
    assert len(out) == 8


def test_buffers_cannot_be_resized_or_released_while_a_kernel_runs():
    # In a child: other threads hammer the buffers while the GIL is released.
    report = child_report("""
        import json, threading, time
        import numpy as np
        from stride_weave.dtypes import DType
        from support import codec_kernels as kernels
        n = 1 << 20
        values = bytearray(np.linspace(-8, 8, n, dtype=np.float32).tobytes())
        out = bytearray(n)
        view = memoryview(values).cast("f")
        stop = False
        refused = {"resize": 0, "release": 0}

        def attack():
            for _ in range(20000):      # bounded: also when the kernel is slow
                if stop:
                    break
                time.sleep(0)
                try:
                    values.extend(b"1234")
                except BufferError:
                    refused["resize"] += 1
                try:
                    del out[-4:]
                except BufferError:
                    refused["resize"] += 1
                try:
                    view.release()
                except BufferError:
                    refused["release"] += 1

        threads = [threading.Thread(target=attack) for _ in range(2)]
        for t in threads:
            t.start()
        rounds = 0
        for rounds in range(1, 30):
            try:
                kernels.encode(view, out, DType.E4M3, threads=2)
            except (ValueError, TypeError):
                break   # a buffer changed between calls: refused, not read
        stop = True
        for t in threads:
            t.join()
        print(json.dumps({"rounds": rounds, **refused}))
    """)
    assert report["rounds"] >= 1
    assert report["resize"] + report["release"] > 0


def test_concurrent_calls_on_shared_inputs_agree():
    x = np.random.default_rng(0).standard_normal(1 << 18).astype(np.float32)
    want = codecs.encode(x, DType.E4M3)
    qwant = codecs.quantize(x, DType.MXFP4)
    results = []

    def work():
        for _ in range(5):
            results.append(np.array_equal(codecs.encode(x, DType.E4M3), want))
            q = codecs.quantize(x, DType.MXFP4)
            results.append(all(np.array_equal(a, b) for a, b in zip(q.planes, qwant.planes)))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results and all(results)


# ---- every legal block size, in bounds and right ---------------------------------------

def test_quantize_float_scales_with_a_small_even_block_stays_in_bounds():
    # a chunk of 256 elements holds 256 / block blocks: 128 of 2
    rc, out, err = run_child("""
        import numpy as np
        from stride_weave import codecs
        from stride_weave.dtypes import BlockScaledDType, DType, Level

        for block in (2, 4, 8, 14):
            fmt = BlockScaledDType(f"SmallBlockNV{block}", element=DType.E2M1,
                                   levels=[Level(scale=DType.E4M3, block=block)])
            x = np.linspace(-5, 5, 4 * 256, dtype=np.float32).reshape(4, 256)
            back = codecs.dequantize(codecs.quantize(x, fmt))
            # E2M1 under a per-block E4M3 scale: within a quarter of the block's
            # largest magnitude
            assert np.all(np.abs(back - x) <= 0.25 * np.abs(x).max() + 1e-6), block
        print("ok")
    """)
    assert_clean_exit(rc, out, err)
    assert out.strip() == "ok"


# Quantize and dequantize over random legal formats (element, scale format,
# block 1..300 or Whole, a whole-tensor scale in any float format or none),
# shapes (empty ones too), axes, packed or not, against the exact model of tests/support/codec_model.py: the planes
# code for code, the values bit for bit. In a child: an access outside a
# buffer crashes it, not the test run.
_BLOCK_SIZES = r"""
import math, sys
import numpy as np
from hypothesis import given, settings, strategies as st
from stride_weave import codecs, formats
from stride_weave.dtypes import BlockScaledDType, DType, Level, Whole
from stride_weave.numerics import numeric_info
from support.codec_model import (FloatModel, Float32Model, block_value,
                                 quantize_float_scaled, quantize_mx_block, whole_scale)

ELEMENTS = [DType.E2M1, DType.E3M2, DType.E2M3, DType.E4M3, DType.E5M2, DType.Int8]
SCALES = [DType.E8M0, DType.E4M3, DType.E5M2, DType.Float32] + [
    getattr(formats, name) for name in ("BFloat16", "Float16") if hasattr(formats, name)]
MODELS = {}
FORMATS = {}

def model(dtype):
    if dtype not in MODELS:
        record = numeric_info(dtype)
        MODELS[dtype] = (dtype.bits if record.kind == "int" else Float32Model()
                         if dtype is DType.Float32 else FloatModel(record))
    return MODELS[dtype]

def block_format(elem, scale, block, whole):
    key = (elem, scale, block, whole)
    if key not in FORMATS:
        levels = (Level(scale, block),) + ((Level(whole, Whole),) if whole else ())
        known = [d for d in DType.registered() if isinstance(d, BlockScaledDType)
                 and d.element is elem and d.levels == levels]     # MXFP4, NVFP4...
        FORMATS[key] = known[0] if known else BlockScaledDType(
            "BlockSizes%d" % len(FORMATS), element=elem, levels=levels)
    return FORMATS[key]

def pack_rows(codes, bits):
    # DLPack's bit order: element i in bits [i*b, (i+1)*b) of the row
    length = codes.shape[-1]
    out = [sum(int(c) << (i * bits) for i, c in enumerate(row)).to_bytes(
               (length * bits + 7) // 8, "little") for row in codes.reshape(-1, length)]
    return np.frombuffer(b"".join(out), np.uint8).reshape(*codes.shape[:-1], -1)

@st.composite
def case(draw):
    scale = draw(st.sampled_from(SCALES))
    pow2 = numeric_info(scale).mantissa_bits == 0
    elems = ELEMENTS if pow2 else ELEMENTS[:-1]     # integers: OCP MX's reading
    elem = draw(st.sampled_from(elems))
    block = draw(st.one_of(st.integers(1, 300),
                           st.sampled_from([1, 2, 3, 14, 16, 32, 255, 256, 257, Whole])))
    whole = (not pow2 and block is not Whole and draw(st.booleans())
             and draw(st.sampled_from(SCALES)))
    length = draw(st.integers(0, 600))
    outer = draw(st.lists(st.integers(0, 3), max_size=2))
    axis = draw(st.integers(0, len(outer)))
    shape = list(outer)
    shape.insert(axis, length)
    rule = "amax" if not pow2 else draw(st.sampled_from(["floor", "ceil", "rceil", "even"]))
    source = np.float64 if pow2 and draw(st.booleans()) else np.float32
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = rng.standard_normal(shape) * np.exp2(rng.integers(-30, 30, shape))
    special = draw(st.lists(st.sampled_from([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, 6.0]),
                            max_size=3))
    flat = x.reshape(-1)
    for value, i in zip(special, rng.integers(0, max(flat.size, 1), len(special))):
        if flat.size:
            flat[i] = value
    return (block_format(elem, scale, block, whole), elem, scale, block, whole, axis,
            rule, x.astype(source), draw(st.booleans()))

@settings(max_examples=int(sys.argv[1]), deadline=None, database=None)
@given(case())
def check(c):
    dtype, elem, scale, block, whole, axis, rule, x, packed = c
    em, sm = model(elem), model(scale)
    wm = model(whole) if whole else None
    q = codecs.quantize(x, dtype, axis=axis, scale_rule=rule, packed=packed)
    if x.size == 0:
        # nothing to walk; a Whole level still holds its one scale: level 0's
        # that of an all-zero block, an outer one the scale of an all-zero tensor
        assert codecs.dequantize(q).shape == x.shape
        assert q.planes[0].size == 0
        zero = [[0.0]]
        if sm.m == 0:
            want = quantize_mx_block(zero[0], em, rule)[0]
            g = 1.0
        else:
            g, scales, _ = quantize_float_scaled(zero, em, sm, 1, wm)
            want = scales[0][0]
        if block is Whole:
            assert q.planes[1].shape == () and int(q.planes[1]) == want
        else:
            assert q.planes[1].size == 0
        if whole:
            assert int(q.planes[2]) == whole_scale(g, wm)[0]
        return
    moved = x.reshape(1, -1) if block is Whole else np.moveaxis(x, axis, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    size = rows.shape[1] if block is Whole else block
    if sm.m == 0:       # powers of two (E8M0): the OCP formula, block by block
        g, scales, elements = 1.0, [], []
        for row in rows.tolist():
            pairs = [quantize_mx_block(row[s:s + size], em, rule)
                     for s in range(0, len(row), size)]
            scales.append([p[0] for p in pairs])
            elements.append([code for p in pairs for code in p[1]])
    else:
        g, scales, elements = quantize_float_scaled(rows.tolist(), em, sm, size, wm)
    nb = -(-rows.shape[1] // size)
    codes = np.array(elements, np.uint64).reshape(rows.shape)
    want = np.array(scales, np.uint64).reshape(rows.shape[0], nb)
    assert np.array_equal(q.planes[1].reshape(want.shape), want), (q.planes[1], want)
    bits = elem.bits
    expect = pack_rows(codes, bits) if packed else codes
    assert np.array_equal(q.planes[0].reshape(expect.shape), expect), (
        q.planes[0], expect)
    if whole:
        # the whole-tensor scale the blocks were computed against
        assert int(q.planes[2]) == whole_scale(g, wm)[0]
    values = np.array([[block_value(em, int(codes[r, i]), sm, int(want[r, i // size]), g)
                        for i in range(rows.shape[1])] for r in range(rows.shape[0])],
                      np.float64).reshape(rows.shape)
    values = values.reshape(moved.shape)
    values = values.reshape(x.shape) if block is Whole else np.moveaxis(values, -1, axis)
    with np.errstate(over="ignore"):
        narrow = values.astype(np.float32)
    assert np.array_equal(codecs.dequantize(q, out_dtype="float64"), values, equal_nan=True)
    assert np.array_equal(codecs.dequantize(q), narrow, equal_nan=True)

check()
print("ok")
"""


def test_quantize_and_dequantize_follow_the_model_for_every_legal_block_size():
    examples = 3 * settings.default.max_examples
    rc, out, err = run_child(_BLOCK_SIZES, str(examples), timeout=600)
    assert_clean_exit(rc, out, err)
    assert out.strip() == "ok"


# ---- arbitrary calls of the kernels (the fuzzer's always-run counterpart) ---------------

_KINDS = "fdeBHIQbi"
_DTYPES = [DType.E4M3, DType.E2M1, DType.E8M0, DType.Int8, DType.Bool, DType.Float64,
           formats.UInt64, formats.Int4, DType.MXFP4, DType.NVFP4, DType.MXINT8,
           DType.Floating, None]


@st.composite
def _buffers(draw):
    kind = draw(st.sampled_from(_KINDS))
    n = draw(st.integers(0, 40))
    raw = draw(st.binary(min_size=n * np.dtype(kind).itemsize,
                         max_size=n * np.dtype(kind).itemsize))
    array = np.frombuffer(raw, dtype=kind).copy()
    how = draw(st.integers(0, 3))
    if how == 1:
        return array[::2]
    if how == 2:
        return bytes(raw)
    if how == 3:
        return bytearray(raw)
    return array


_OPTIONS = st.one_of(st.integers(-3, 8), st.integers(-2**70, 2**70), st.just(True),
                     st.just(1.0))


def _grid(options):
    """A grid made of the drawn options themselves, unchecked: the kernels
    must refuse what does not fit."""
    o = options
    return (((o[0], 1, o[1], o[2], o[3], 0, 0), (o[2], o[3], 1, 0, 0, o[4], 0)),
            (o[4], o[5], o[0], 1, o[1]))


@settings(max_examples=300, deadline=None)
@given(op=st.integers(0, 5), bufs=st.lists(_buffers(), min_size=3, max_size=3),
       scales=st.lists(_buffers(), max_size=3), dtype=st.sampled_from(_DTYPES),
       options=st.lists(_OPTIONS, min_size=6, max_size=6))
def test_arbitrary_kernel_calls_raise_only_type_and_value_errors(op, bufs, scales, dtype,
                                                                 options):
    a, b, c = bufs
    calls = [
        lambda: _dtypes._codec_encode(a, b, dtype, *options, *options),
        lambda: _dtypes._codec_decode(a, b, dtype, options[0], options[1]),
        lambda: _dtypes._codec_pack(a, b, dtype, options[0]),
        lambda: _dtypes._codec_unpack(a, b, dtype, options[0], options[1]),
        lambda: _dtypes._codec_quantize(a, b, tuple(scales), dtype, *_grid(options),
                                        options[1], options[2], options[3], options[4],
                                        1.0, 1),
        lambda: _dtypes._codec_dequantize(a, tuple(scales), c, dtype, *_grid(options),
                                          options[1], options[2], options[3], 1),
    ]
    try:
        assert calls[op]() is None
    except (TypeError, ValueError):
        pass
