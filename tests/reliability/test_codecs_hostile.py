"""The codecs against bad and hostile input: wrong dtypes, wrongly typed or
laid out buffers, counts that overrun, unknown options, huge shapes, and
buffers that Python code tries to resize or release during a call. Each
is a clear TypeError/ValueError naming the argument, never a crash, never
a read or write outside the buffers."""
import sys
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support import child_report, unique_name
from stride_weave import _dtypes, codecs, formats
from stride_weave.dtypes import DType, SimpleDType
from support.defs import PlanePair

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
        _dtypes._codec_encode(X, np.zeros(64, np.uint8), bare, 0, 0, 0, 0, 0, 0)
    pair = PlanePair(unique_name("CodecPair_"), planes=[bare, DType.Int8])
    with pytest.raises(TypeError, match="SimpleDType"):
        codecs.encode(X, pair)
    with pytest.raises(TypeError, match="BlockScaledDType"):
        codecs.quantize(X, pair)
    with pytest.raises(TypeError, match="registered BlockScaledDType"):
        _dtypes._codec_quantize(X, np.zeros(32, np.uint8), (np.zeros(2, np.uint8),),
                                pair, 1, 64, 0, 0, 0, 1)


# ---- buffers -----------------------------------------------------------------------------

def test_wrongly_typed_buffers_name_the_argument():
    with pytest.raises(TypeError, match="values must be float32, float64, float16 or "
                                        "bfloat16, got an array of int32"):
        codecs.encode(np.arange(4, dtype=np.int32), DType.E4M3)
    with pytest.raises(TypeError, match="out must hold unsigned integers of 1 byte"):
        codecs.encode(X, DType.E4M3, out=np.zeros(64, np.uint16))
    with pytest.raises(TypeError, match="out must be a C-contiguous writable buffer"):
        codecs.encode(X, DType.E4M3, out=bytes(64))
    with pytest.raises(TypeError, match="values must hold float32, float64 or float16"):
        codecs.encode(memoryview(b"abcd"), DType.E4M3)
    with pytest.raises(TypeError, match="codes must hold unsigned integers of 1 byte"):
        _dtypes._codec_decode(np.zeros(4, np.int8), np.zeros(4, np.float32), DType.E4M3, 0)
    with pytest.raises(TypeError, match="out must hold float32"):
        _dtypes._codec_decode(np.zeros(4, np.uint8), np.zeros(4, np.float64), DType.E4M3, 0)


def test_non_contiguous_buffers_are_refused_by_the_kernels():
    strided = memoryview(bytearray(512)).cast("f")[::2]
    with pytest.raises(ValueError, match="values must be C-contiguous"):
        codecs.encode(strided, DType.E4M3)
    with pytest.raises(TypeError, match="values must be a C-contiguous buffer"):
        _dtypes._codec_encode(strided, np.zeros(64, np.uint8), DType.E4M3, 0, 0, 0, 0, 0, 0)
    with pytest.raises(TypeError, match="out must be a C-contiguous writable buffer"):
        _dtypes._codec_encode(X, np.zeros(128, np.uint8)[::2], DType.E4M3, 0, 0, 0, 0, 0, 0)


def test_counts_that_overrun_are_refused():
    with pytest.raises(ValueError, match="one code per value: 64 values, room for 63"):
        _dtypes._codec_encode(X, np.zeros(63, np.uint8), DType.E4M3, 0, 0, 0, 0, 0, 0)
    with pytest.raises(ValueError, match="count 9 of 4-bit codes needs 5 bytes of data"):
        codecs.unpack(bytes(4), DType.E2M1, 9)
    with pytest.raises(ValueError, match="pack into 2 bytes; out has 1"):
        _dtypes._codec_pack(np.zeros(4, np.uint8), np.zeros(1, np.uint8), DType.E2M1)
    with pytest.raises(ValueError, match="room for exactly 4 codes"):
        _dtypes._codec_unpack(bytes(4), np.zeros(3, np.uint8), DType.E2M1, 4)
    with pytest.raises(ValueError, match="values must hold 64 elements"):
        _dtypes._codec_quantize(X[:32], np.zeros(32, np.uint8), (np.zeros(2, np.uint8),),
                                DType.MXFP4, 1, 64, 0, 0, 0, 1)
    with pytest.raises(ValueError, match=r"scales\[0\] must hold 2 codes"):
        _dtypes._codec_quantize(X, np.zeros(32, np.uint8), (np.zeros(1, np.uint8),),
                                DType.MXFP4, 1, 64, 0, 0, 0, 1)
    with pytest.raises(TypeError, match="scales must be a tuple of 2 buffers"):
        _dtypes._codec_quantize(X, np.zeros(32, np.uint8), (np.zeros(4, np.uint8),),
                                DType.NVFP4, 1, 64, 0, 0, 0, 1)


def test_overlapping_buffers_are_refused():
    raw = np.zeros(64, np.float32)
    with pytest.raises(ValueError, match="values and out must not overlap"):
        _dtypes._codec_encode(raw, raw.view(np.uint8)[:64], DType.E4M3, 0, 0, 0, 0, 0, 0)


def test_huge_sizes_do_not_overflow():
    with pytest.raises(ValueError, match="too large"):
        _dtypes._codec_quantize(X, np.zeros(32, np.uint8), (np.zeros(2, np.uint8),),
                                DType.MXFP4, 2**62, 2**62, 0, 0, 0, 1)
    with pytest.raises(ValueError, match="needs .* bytes of data"):
        _dtypes._codec_unpack(bytes(4), np.zeros(4, np.uint8), DType.E2M1, 2**62)
    with pytest.raises(ValueError, match="non-negative int below 2\\*\\*63"):
        _dtypes._codec_unpack(bytes(4), np.zeros(4, np.uint8), DType.E2M1, 2**70)
    assert codecs.storage_nbytes(DType.MXFP4, (2**62, 2**62)) == 2**123 + 2**119


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
        _dtypes._codec_encode(X, out, DType.E4M3, 0, Index(1), 0, 0, 0, 0)
    with pytest.raises(ValueError, match="rounding must be between 0 and 6"):
        _dtypes._codec_encode(X, out, DType.E4M3, 0, 7, 0, 0, 0, 0)
    with pytest.raises(ValueError, match="source must be between"):
        _dtypes._codec_encode(X, out, DType.E4M3, 9, 0, 0, 0, 0, 0)
    with pytest.raises(TypeError, match="takes 9 arguments"):
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
        _dtypes._codec_encode(memoryview(values).cast("f"), Exporter(out, grow_values),
                              DType.E4M3, 0, 0, 0, 0, 0, 0)
    assert isinstance(info.value.__cause__, BufferError)
    assert len(values) == 256

    # out is taken after values' hook shrank it: the length check refuses it
    def shrink_out():
        del out[8:]

    with pytest.raises(ValueError, match="room for 8 codes"):
        _dtypes._codec_encode(Exporter(memoryview(values).cast("f"), shrink_out), out,
                              DType.E4M3, 0, 0, 0, 0, 0, 0)
    assert len(out) == 8


def test_buffers_cannot_be_resized_or_released_while_a_kernel_runs():
    # In a child: other threads hammer the buffers while the GIL is released.
    report = child_report("""
        import json, threading, time
        import numpy as np
        from stride_weave import _dtypes
        from stride_weave.dtypes import DType
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
                _dtypes._codec_encode(view, out, DType.E4M3, 0, 0, 0, 0, 0, 0)
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


@settings(max_examples=300, deadline=None)
@given(op=st.integers(0, 5), bufs=st.lists(_buffers(), min_size=3, max_size=3),
       scales=st.lists(_buffers(), max_size=3), dtype=st.sampled_from(_DTYPES),
       options=st.lists(_OPTIONS, min_size=6, max_size=6))
def test_arbitrary_kernel_calls_raise_only_type_and_value_errors(op, bufs, scales, dtype,
                                                                 options):
    a, b, c = bufs
    calls = [
        lambda: _dtypes._codec_encode(a, b, dtype, *options),
        lambda: _dtypes._codec_decode(a, b, dtype, options[0]),
        lambda: _dtypes._codec_pack(a, b, dtype),
        lambda: _dtypes._codec_unpack(a, b, dtype, options[0]),
        lambda: _dtypes._codec_quantize(a, b, tuple(scales), dtype, *options),
        lambda: _dtypes._codec_dequantize(a, tuple(scales), c, dtype, *options[:4]),
    ]
    try:
        assert calls[op]() is None
    except (TypeError, ValueError):
        pass
