"""The codec engine and its binding against crafted input that the checks
of test_codecs_hostile.py do not reach: grids whose layout formulas
overflow, grids the block walk cannot follow, blocks near 2**63, DLPack
tensors that lie about their memory, deleters that run Python code,
allocation failures inside the calls, fork() and signals during a
threaded call, and concurrent calls writing the same planes.  Where a
regression could crash the interpreter, the scenario runs in a child."""
import os
import sys

import pytest

from support import child_report
from support.child import assert_clean_exit, fork_unsafe_runtime, run_child
from support import codec_kernels as kernels
import _hostile_ops as hostile
from stride_weave import _dtypes, codecs
from stride_weave.dtypes import DType

#: why forking while threads run cannot be tested here (None: it can)
FORK_UNSAFE = fork_unsafe_runtime()

np = pytest.importorskip("numpy")

HERE = os.path.dirname(os.path.abspath(__file__))
PADDED_K, PADDED_MN, SWIZZLED = 1, 2, 3


# ---- grids ---------------------------------------------------------------------------------

def test_a_matrix_layout_whose_batch_size_overflows_is_refused():
    # R = C = 2**40 pass the per-field bounds, but one batch of the padded
    # layout holds R * C = 2**80 codes: wrapped to 0, it let an empty scale
    # plane pass and a scale be written 2**40 codes past it
    report = child_report("""
        import json
        import numpy as np
        from stride_weave import _dtypes
        from stride_weave.dtypes import DType
        axes = ((2, 1, 0, 0, 1, 0, 0),)
        x, elements, none = np.ones(2, np.float32), np.zeros(1, np.uint8), np.zeros(0, np.uint8)
        messages = []
        for layout in [(1, 2**40, 2**40, 1, 1), (2, 2**40, 2**40, 2**20, 2**20),
                       (2, 2**40, 2**40, 1, 2**20), (3, 2**40, 2**40, 1, 1)]:
            for call in (
                lambda: _dtypes._codec_quantize(x, elements, (none,), DType.MXFP4, axes,
                                                layout, 0, 0, 0, 1, 0.0, 1),
                lambda: _dtypes._codec_dequantize(elements, (none,), np.zeros(2, np.float32),
                                                  DType.MXFP4, axes, layout, 1, 0, 0, 1),
                lambda: _dtypes._codec_scale_offset(axes, layout, (1,)),
                lambda: _dtypes._codec_relayout(none, np.zeros(1, np.uint8), DType.MXFP4,
                                                axes, layout, axes, (0, 0, 0, 1, 1)),
            ):
                try:
                    call()
                except ValueError as exc:
                    messages.append(str(exc))
                else:
                    messages.append("accepted")
        print(json.dumps(messages))
    """)
    assert all("the grid is too large" in m for m in report), report


def test_a_batch_size_just_below_the_limit_still_works():
    # the largest batch the check allows is still computed and used
    axes = ((2, 1, 0, 0, 1, 0, 0),)
    layout = (PADDED_K, 2**40, 2**20, 1, 1)      # 2**60 codes a batch
    assert _dtypes._codec_scale_offset(axes, layout, (1,)) == 2**20


def test_a_grid_expands_at_most_one_axis():
    # two expanded axes: the walk keyed the rows' scale writes by one of
    # them, so the rows of the other wrote nothing (the plane kept whatever
    # it held: uninitialised memory for an empty array)
    axes = ((2, 2, 1, 0, 0, 0, 1), (1, 2, 0, 0, 0, 0, 1), (32, 32, 0, 0, 0, 0, 0))
    x = np.ones(64, np.float32)
    with pytest.raises(ValueError, match="a grid expands at most one axis; axis 1 is a "
                                         "second"):
        _dtypes._codec_quantize(x, np.zeros(32, np.uint8), (np.zeros(2, np.uint8),),
                                DType.MXFP4, axes, (0, 0, 0, 1, 1), 0, 0, 0, 1, 0.0, 1)
    # one expanded axis: every scale position written
    one = ((2, 2, 1, 0, 0, 0, 1), (1, 1, 0, 0, 0, 0, 0), (32, 32, 0, 0, 0, 0, 0))
    scales = np.full(2, 0xAA, np.uint8)
    _dtypes._codec_quantize(x, np.zeros(32, np.uint8), (scales,), DType.MXFP4, one,
                            (0, 0, 0, 1, 1), 0, 0, 0, 1, 0.0, 1)
    assert scales.tolist() == [125, 125]     # 2**-2: 1.0 over E2M1's largest binade


def test_a_block_longer_than_its_axis_is_that_axis():
    # a row block near 2**63: its strips (multiples of the block and of 8
    # columns) overflowed to 8 columns, cutting the row's one block into
    # strips that each chose a scale of their own
    n = 1 << 17
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(n) * np.exp2(rng.integers(-8, 8, n))).astype(np.float32)
    planes = []
    for block in (n, n + 1, 2**62 + 1, 2**63 - 1):
        elements, scales = np.zeros(n // 2, np.uint8), np.zeros(1, np.uint8)
        kernels.quantize(x, elements, (scales,), DType.MXFP4, 1, n, block)
        planes.append((elements.tobytes(), scales.tobytes()))
    assert all(p == planes[0] for p in planes)


def test_an_unpack_count_whose_bits_overflow_is_refused():
    with pytest.raises(ValueError, match="needs more than 2\\*\\*60 bytes of data"):
        kernels.unpack(bytes(8), np.zeros(1, np.uint64), DType.Float64, 2**60)


# ---- DLPack tensors that lie ---------------------------------------------------------------

def test_a_strided_dlpack_tensor_is_not_read_as_contiguous():
    # negative strides put the elements before the data pointer: read as
    # a contiguous run from it, the kernel read 60 bytes before the array
    base = np.arange(16, dtype=np.float32)
    for array in (base[::-1], base[::2], base.reshape(4, 4).T):
        view = _dtypes._dlpack_buffer(array.__dlpack__())
        with pytest.raises(TypeError, match="values must be a C-contiguous buffer") as info:
            kernels.encode(view, np.zeros(array.size, np.uint8), DType.E4M3)
        assert isinstance(info.value.__cause__, BufferError)
        assert "not C-contiguous" in str(info.value.__cause__)
        # a consumer that reads strides gets the tensor as it is
        assert np.array_equal(np.asarray(view), array)
        assert memoryview(view).tolist() == array.tolist()
    # and the public path copies what it cannot read in place
    assert np.array_equal(codecs.encode(_Bf16(base[::-1]), DType.E4M3),
                          codecs.encode(base[::-1].copy(), DType.E4M3))


class _Bf16:
    """A CPU array exporting float32 values as bfloat16 (their top halves,
    exact for small integers) through DLPack, with the strides of `values`:
    what the codecs read through _dlpack_buffer."""

    def __init__(self, values):
        self.base = (values.base.view(np.uint32) >> 16).astype(np.uint16)
        self.step = values.strides[0] // values.itemsize
        offset = (values.ctypes.data - values.base.ctypes.data) // values.itemsize
        self.address = self.base.ctypes.data + 2 * offset
        self.shape = values.shape

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, **kwargs):
        from support.dlpack import crafted_tensor
        return crafted_tensor(4, 16, data=self.address, shape=self.shape,
                              strides=(self.step,))


def test_crafted_capsules_are_refused_with_value_errors():
    report = child_report("""
        import json
        import numpy as np
        from stride_weave import _dtypes
        from stride_weave.dtypes import DType
        from support.dlpack import crafted_tensor
        from support import codec_kernels as kernels
        data = np.arange(8, dtype=np.float32)
        address = data.ctypes.data
        cases = {
            "null data, 0-d": dict(data=None),
            "null data, 8 elements": dict(data=None, shape=(8,)),
            "ndim 65": dict(data=address, shape=(1,) * 65),
            "ndim huge": dict(data=address, shape=(1,), ndim=2**31 - 1),
            "ndim negative": dict(data=address, shape=(1,), ndim=-1),
            "negative extent": dict(data=address, shape=(-8,)),
            "shape overflow": dict(data=address, shape=(2**62, 2**62)),
            "stride overflow": dict(data=address, shape=(2,), strides=(2**62,)),
            "byte_offset overflow": dict(data=address, shape=(1,), byte_offset=2**64 - 4),
            "cuda": dict(data=address, shape=(8,), device=(2, 0)),
            "two lanes": dict(data=address, shape=(4,), lanes=2),
            "12 bits": dict(data=address, shape=(8,), bits=12),
        }
        seen = {}
        for what, kwargs in cases.items():
            kwargs.setdefault("bits", 32)
            capsule = crafted_tensor(2, **kwargs)
            try:
                view = _dtypes._dlpack_buffer(capsule)
                out = np.zeros(8, np.uint8)
                kernels.encode(view, out[:memoryview(view).nbytes // 4], DType.E4M3)
                seen[what] = "accepted"
            except ValueError as exc:
                seen[what] = str(exc)
        # an empty tensor needs no data
        view = _dtypes._dlpack_buffer(crafted_tensor(2, 32, data=None, shape=(0, 3)))
        kernels.encode(view, np.zeros(0, np.uint8), DType.E4M3)
        print(json.dumps(seen))
    """)
    assert all(m.startswith("_dlpack_buffer: ") for m in report.values()), report
    assert "no data pointer" in report["null data, 0-d"]
    assert "8 elements and no data pointer" in report["null data, 8 elements"]
    assert "65 dimensions (0 to 64 expected)" in report["ndim 65"]
    assert "overflow" in report["byte_offset overflow"]
    assert "device type 2" in report["cuda"]


def test_a_capsule_is_consumed_once():
    capsule = np.arange(4, dtype=np.float32).__dlpack__()
    view = _dtypes._dlpack_buffer(capsule)
    with pytest.raises(ValueError, match=r"^_dlpack_buffer: the capsule was consumed "
                                         r"already \(its name is b'used_dltensor'\): a "
                                         "capsule can be consumed once"):
        _dtypes._dlpack_buffer(capsule)
    with pytest.raises(ValueError, match=r"^_dlpack_dtype: the capsule was consumed "
                                         "already .*: read its dtype before"):
        _dtypes._dlpack_dtype(capsule)
    assert np.asarray(view).tolist() == [0, 1, 2, 3]


def test_the_deleter_runs_once_and_never_sees_a_pending_exception():
    # The deleter is Python code (a ctypes callback) run while the view is
    # freed during an exception's unwinding: it must find no exception set
    # (a debug build asserts on calling Python with one set), and the
    # exception must reach the handler unchanged.
    report = child_report("""
        import ctypes, json, sys
        import numpy as np
        from stride_weave import _dtypes
        from support.dlpack import crafted_tensor
        calls = []
        @ctypes.CFUNCTYPE(None, ctypes.c_void_p)
        def deleter(managed):
            calls.append(sys.exc_info()[0] is None)
        data = np.arange(4, dtype=np.float32)

        def view():
            return _dtypes._dlpack_buffer(crafted_tensor(2, 32, data=data.ctypes.data,
                                                         shape=(4,), deleter=deleter))

        def fails():
            # the view is on the value stack when the error unwinds it
            return [view(), {}["original"]]

        try:
            fails()
        except KeyError as exc:
            kept = exc.args == ("original",)
        # refused: not consumed, the deleter not run
        refused = crafted_tensor(2, 32, data=data.ctypes.data, shape=(4,), lanes=3,
                                 deleter=deleter)
        try:
            _dtypes._dlpack_buffer(refused)
        except ValueError:
            pass
        versioned = _dtypes._dlpack_buffer(crafted_tensor(
            2, 32, data=data.ctypes.data, shape=(4,), deleter=deleter, versioned=True))
        del versioned
        print(json.dumps({"calls": calls, "kept": kept}))
    """)
    assert report == {"calls": [True, True], "kept": True}


# ---- allocation failures -------------------------------------------------------------------

_ALLOCATIONS = r"""
import json, sys
import numpy as np
import _hostile_ops as hostile
from stride_weave import _dtypes, codecs, formats
from stride_weave.dtypes import DType

testcapi = hostile._nomemory()
if testcapi is None:
    print(json.dumps({"skipped": True}))
    sys.exit(0)

x = np.random.default_rng(1).standard_normal(4096).astype(np.float32)
q = codecs.quantize(x.reshape(64, 64), DType.NVFP4)
swz = codecs.BlockLayout(scales="swizzled_128x4")

# The failure is armed inside the extension's own entry points only: the
# wrapper code around them is the interpreter's, and CPython 3.12 and 3.13.0
# corrupt their own heap when the allocation of a generator expression's
# function object fails (an extra reference dropped on the error path).
armed = {"call": -1, "index": 0}
calls = [0]


def arming(real):
    def entry(*args, **kwargs):
        number = calls[0]
        calls[0] = number + 1
        if number != armed["call"]:
            return real(*args, **kwargs)
        testcapi.set_nomemory(armed["index"], armed["index"] + 1)
        try:
            return real(*args, **kwargs)
        finally:
            testcapi.remove_mem_hooks()
    return entry


for entry_name in [n for n in dir(_dtypes) if n.startswith(("_codec_", "_dlpack_"))]:
    setattr(_dtypes, entry_name, arming(getattr(_dtypes, entry_name)))


def ops():
    yield "quantize", lambda: [p.tobytes() for p in codecs.quantize(
        x.reshape(64, 64), DType.NVFP4).planes]
    yield "dequantize", lambda: codecs.dequantize(q).tobytes()
    yield "relayout", lambda: [p.tobytes() for p in codecs.relayout(q, swz).planes]
    yield "decode16", lambda: codecs.decode(np.arange(1 << 16, dtype=np.uint16),
                                            formats.Float16).tobytes()
    yield "encode", lambda: codecs.encode(x, DType.E4M3, threads=2).tobytes()
    yield "dlpack", lambda: bytes(memoryview(_dtypes._dlpack_buffer(
        x.__dlpack__())).cast("B"))


outcomes, unraisable = {}, []
hostile.count_unraisable(unraisable)
for name, op in ops():
    calls[0] = 0
    want = op()
    made = calls[0]
    failed = ok = 0
    # in each call the operation makes into the extension, each allocation
    # failing in turn, until the call has made no more for a while (or a bound)
    for call in range(made):
        streak = 0
        for index in range(int(sys.argv[1])):
            armed["call"], armed["index"], calls[0] = call, index, 0
            try:
                got = op()
            except MemoryError:
                failed += 1
                streak = 0
                continue
            finally:
                armed["call"] = -1
            assert got == want, (name, call, index)
            ok += 1
            streak += 1
            if streak == 50:
                break
    outcomes[name] = [made, failed, ok]
print(json.dumps({"outcomes": outcomes, "unraisable": unraisable}))
"""


def test_failed_allocations_in_codec_calls_give_the_result_or_memory_error():
    if hostile.nomemory_unusable() is not None:
        pytest.skip(hostile.nomemory_unusable())
    report = child_report(_ALLOCATIONS, "3000", path=(HERE,), timeout=600)
    if report.get("skipped"):
        pytest.skip("this CPython has no _testcapi.set_nomemory")
    assert report["unraisable"] == [], report
    for name, (made, failed, ok) in report["outcomes"].items():
        assert made > 0 and failed > 0 and ok > 0, (name, report)


# ---- threads, fork, signals ----------------------------------------------------------------

@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
@pytest.mark.skipif(FORK_UNSAFE is not None, reason=str(FORK_UNSAFE))
def test_fork_while_a_threaded_call_runs_leaves_a_working_child():
    # Worker threads live for one call: a child forked while they run has
    # none, holds no lock of theirs, and runs codec calls of its own.
    rc, out, err = run_child("""
        import os, threading, warnings
        import numpy as np
        from stride_weave import codecs
        from stride_weave.dtypes import DType
        warnings.simplefilter("ignore", DeprecationWarning)
        x = np.random.default_rng(2).standard_normal(1 << 22).astype(np.float32)
        want = codecs.quantize(x[:4096], DType.MXFP4, threads=1)
        running = threading.Event()

        def busy():
            running.set()
            for _ in range(3):
                codecs.quantize(x, DType.MXFP4, threads=8)

        t = threading.Thread(target=busy)
        t.start()
        running.wait()
        statuses = []
        for _ in range(4):
            pid = os.fork()
            if pid == 0:
                q = codecs.quantize(x[:4096], DType.MXFP4, threads=4)
                same = all(np.array_equal(a, b) for a, b in zip(q.planes, want.planes))
                os._exit(0 if same else 3)
            statuses.append(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
        t.join()
        print(statuses)
    """, timeout=300)
    assert_clean_exit(rc, out, err)
    assert out.strip() == "[0, 0, 0, 0]"


@pytest.mark.skipif(not hasattr(__import__("signal"), "pthread_kill"),
                    reason="needs signal.pthread_kill")
def test_signals_during_a_threaded_call_reach_the_main_thread_after_it():
    report = child_report("""
        import json, signal, threading, time
        import numpy as np
        from stride_weave import codecs
        from stride_weave.dtypes import DType
        x = np.random.default_rng(4).standard_normal(1 << 22).astype(np.float32)
        want = [p.copy() for p in codecs.quantize(x, DType.MXFP4, threads=1).planes]
        got = []
        signal.signal(signal.SIGUSR1, lambda *a: got.append(threading.current_thread().name))
        main = threading.main_thread().ident
        stop = threading.Event()

        def pester():
            while not stop.is_set():
                signal.pthread_kill(main, signal.SIGUSR1)
                time.sleep(0.001)

        t = threading.Thread(target=pester, name="pester")
        t.start()
        same = True
        for _ in range(5):
            q = codecs.quantize(x, DType.MXFP4, threads=8)
            same &= all(np.array_equal(a, b) for a, b in zip(q.planes, want))
        stop.set()
        t.join()
        print(json.dumps({"same": bool(same), "handled": len(got),
                          "where": sorted(set(got))}))
    """, timeout=300)
    assert report["same"] and report["handled"] > 0
    assert report["where"] == ["MainThread"]


def test_concurrent_calls_writing_the_same_planes_leave_them_right():
    # The planes are shared on purpose: every call writes the same codes,
    # and packed rows are cleared then ORed by each call in turn, so the
    # last call to finish leaves the right bytes whatever the interleaving.
    report = child_report("""
        import json, threading
        import numpy as np
        from stride_weave.dtypes import DType
        from support import codec_kernels as kernels
        rows, length = 256, 1024
        x = np.random.default_rng(6).standard_normal(rows * length).astype(np.float32)
        ref_e, ref_s = np.zeros(rows * length // 2, np.uint8), np.zeros(rows * 32, np.uint8)
        kernels.quantize(x, ref_e, (ref_s,), DType.MXFP4, rows, length, 32)
        e, s = np.zeros_like(ref_e), np.zeros_like(ref_s)
        out = np.zeros(rows * length, np.float32)
        barrier = threading.Barrier(6)
        errors = []

        def work(k):
            barrier.wait()
            for _ in range(10):
                try:
                    kernels.quantize(x, e, (s,), DType.MXFP4, rows, length, 32, threads=3)
                    kernels.dequantize(ref_e, (ref_s,), out, DType.MXFP4, rows, length, 32,
                                       threads=2)
                except Exception as exc:
                    errors.append(repr(exc))

        threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        want = np.zeros_like(out)
        kernels.dequantize(ref_e, (ref_s,), want, DType.MXFP4, rows, length, 32)
        print(json.dumps({"errors": errors, "elements": bool(np.array_equal(e, ref_e)),
                          "scales": bool(np.array_equal(s, ref_s)),
                          "values": bool(np.array_equal(out, want))}))
    """, timeout=300)
    assert report == {"errors": [], "elements": True, "scales": True, "values": True}


def test_the_most_threads_on_a_small_call_give_the_one_thread_result():
    x = np.random.default_rng(8).standard_normal((300, 96)).astype(np.float32)
    one = codecs.quantize(x, DType.NVFP4, threads=1)
    many = codecs.quantize(x, DType.NVFP4, threads=256)
    assert all(np.array_equal(a, b) for a, b in zip(one.planes, many.planes))
    assert np.array_equal(codecs.dequantize(one, threads=256), codecs.dequantize(one))
    with pytest.raises(ValueError, match="threads must be between 1 and 256, got 257"):
        kernels.encode(x.reshape(-1), np.zeros(x.size, np.uint8), DType.E4M3, threads=257)
