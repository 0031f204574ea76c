"""Attacks from an adversarial review that still get through.

Each test is a scenario that crashes the interpreter, trips a sanitizer or
makes the library report something other than its truth.  Crash-prone
scenarios run in a child process, so a regression is a return code and a
report instead of a dead test run.  Every test is marked
``xfail(strict=True)``: it fails today, and the marker comes off with the
fix that makes it pass.
"""
import subprocess

import pytest

from support import unique_name
from support.child import assert_clean_exit, child_report, run_child
from stride_weave.dtypes import DType, SimpleDType


# ---- codecs ------------------------------------------------------------------------------

@pytest.mark.xfail(strict=True, reason=(
    "codecblock.c sw_codec_quantize and sw_codec_dequantize walk every row of "
    "an empty tensor (codecs.c checks rows * length against PY_SSIZE_T_MAX "
    "only when length is not 0, and keeps the GIL below 4096 elements): "
    "quantize(np.empty((2**60, 0))) holds the GIL in a loop of 2**60 rows, "
    "which no signal and no other thread can interrupt"))
def test_quantize_an_empty_tensor_with_many_rows_returns():
    pytest.importorskip("numpy")
    # A liveness check, not a performance bound: the loop would take
    # centuries, so any finite wait tells it apart.
    try:
        rc, out, err = run_child("""
            import numpy as np
            from stride_weave import codecs
            from stride_weave.dtypes import DType

            x = np.empty((2**60, 0), dtype=np.float32)
            q = codecs.quantize(x, DType.MXFP4)
            assert codecs.dequantize(q).shape == x.shape
            print("ok")
        """, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("quantize of an empty (2**60, 0) tensor did not return")
    assert_clean_exit(rc, out, err)
    assert out.strip() == "ok"


@pytest.mark.xfail(strict=True, reason=(
    "codecs.c sw_codecs_block_sizes counts the scales of a format whose only "
    "level is Whole as rows * ceil(length / block) = 0 for an empty tensor, "
    "while plane_shapes and storage_nbytes give it its one whole-tensor "
    "scale: quantize refuses the plane codecs.py allocated ('scales[0] must "
    "hold 0 codes')"))
def test_quantize_an_empty_tensor_in_a_whole_tensor_format():
    np = pytest.importorskip("numpy")
    from stride_weave import codecs
    from stride_weave.dtypes import BlockScaledDType, Level, Whole

    fmt = BlockScaledDType(unique_name("WholeOnly_"), element=DType.E4M3,
                           levels=[Level(scale=DType.Float32, block=Whole)])
    assert codecs.plane_shapes(fmt, (0,)) == ((0,), ())
    for shape in ((0,), (4, 0)):
        q = codecs.quantize(np.zeros(shape, dtype=np.float32), fmt)
        assert q.nbytes == (0, 4)
        assert codecs.dequantize(q).shape == shape


@pytest.mark.xfail(strict=True, reason=(
    "codecblock.c sw_codec_quantize computes the whole-tensor scale g in "
    "float32 and scales every block by it, but stores g encoded in the "
    "Whole level's own format: where that is not Float32 the stored scale "
    "is rounded, or flushed to zero below the format's smallest value, and "
    "dequantize multiplies by a scale the blocks were never computed "
    "against (a tensor of ones comes back as zeros)"))
def test_quantize_with_a_narrow_whole_tensor_scale_round_trips():
    np = pytest.importorskip("numpy")
    from stride_weave import codecs
    from stride_weave.dtypes import BlockScaledDType, Level, Whole

    for whole, amax in ((DType.E4M3, 1.0), (DType.E5M2, 1e-6), (DType.E5M2, 3e4)):
        fmt = BlockScaledDType(unique_name("NarrowWhole_"), element=DType.E2M1,
                               levels=[Level(scale=DType.E4M3, block=16),
                                       Level(scale=whole, block=Whole)])
        x = np.full((2, 32), amax, dtype=np.float32)
        x[:, :16] *= 0.5
        back = codecs.dequantize(codecs.quantize(x, fmt))
        # E2M1 under a per-block E4M3 scale: within a quarter of the largest
        # magnitude (a flushed whole-tensor scale gives zeros)
        assert np.all(np.abs(back - x) <= 0.25 * amax), (whole.name, amax, back)

# ---- lookup misses ---------------------------------------------------------------------

@pytest.mark.xfail(strict=True, reason=(
    "miss.c sw_miss_message tells a miss on any of the formats pack's names "
    "that 'import stride_weave.formats registers it' from a static list, "
    "whatever the process holds: once another module registered one of the "
    "pack's names, importing the pack raises ValueError every time, and the "
    "advice sends the user to an import that cannot succeed"))
def test_a_miss_does_not_advise_a_pack_import_that_fails():
    report = child_report("""
        import json
        from stride_weave.dtypes import DType, SimpleDType

        SimpleDType("Int16", bits=16, supertype=DType.Integer)
        try:
            import stride_weave.formats
        except ValueError:
            importable = False
        else:
            importable = True
        try:
            DType.from_name("BFloat16")
        except LookupError as e:
            message = str(e)
        print(json.dumps({"importable": importable, "message": message}))
    """)
    assert report["importable"] or "registers it" not in report["message"], report
