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
from stride_weave import dtypes
from stride_weave.dtypes import DType, SimpleDType
from stride_weave.numerics import NumericInfo, register_numeric_info


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

# ---- relations -------------------------------------------------------------------------

@pytest.mark.xfail(strict=True, reason=(
    "promotion.c sw_promotion_declare keeps every replaced default lattice "
    "alive (sw_lattice.previous) so that lock-free readers never see one "
    "freed, and each lattice holds a join table of n * n entries: n "
    "declarations of one edge each retain memory cubic in n (300 MB traced "
    "for 600 dtypes, 650 MB of RSS for 1000, tens of GB at the 4096-dtype limit), "
    "not the few kilobytes per declaration the design claims"))
def test_declaring_one_edge_at_a_time_retains_memory_linear_in_the_lattice():
    report = child_report("""
        import json, tracemalloc
        from stride_weave import dtypes
        from stride_weave.dtypes import DType, SimpleDType
        from stride_weave.numerics import NumericInfo, register_numeric_info

        made = []
        for i in range(600):
            d = SimpleDType(f"OneEdge{i}", bits=64, supertype=DType.Floating)
            register_numeric_info(d, NumericInfo.floating(
                f"one_edge_{i}", exponent_bits=11, mantissa_bits=52, bias=1023,
                nan_encoding="ieee"))
            made.append(d)
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for d in made:
            dtypes.declare_promotion(DType.Float32, d)
        grown = tracemalloc.get_traced_memory()[0] - before
        print(json.dumps({"dtypes": len(dtypes.default_lattice().dtypes),
                          "grown": grown}))
    """)
    n = report["dtypes"]
    # the final lattice's join table is 2 * n * n bytes (0.7 MB here); allow
    # forty times that for everything the declarations keep
    assert report["grown"] <= 40 * 2 * n * n, report
