"""Attacks from an adversarial review that still get through.

Each test is a scenario that crashes the interpreter, trips a sanitizer or
makes the library report something other than its truth.  Crash-prone
scenarios run in a child process, so a regression is a return code and a
report instead of a dead test run.  Every test is marked
``xfail(strict=True)``: it fails today, and the marker comes off with the
fix that makes it pass.
"""
import pytest

from support import unique_name
from support.child import assert_clean_exit, run_child
from stride_weave import dtypes
from stride_weave.dtypes import DType, SimpleDType
from stride_weave.numerics import NumericInfo, register_numeric_info


# ---- codecs ------------------------------------------------------------------------------

@pytest.mark.xfail(strict=True, reason=(
    "codecblock.c sw_codecblock_float_row_body keeps per-chunk block state in "
    "arrays of 16 (amax, scodes, recips) but a chunk of 256 elements holds "
    "256 / block blocks: an even block below 16 with float scales writes past "
    "them on the stack"))
def test_quantize_float_scales_with_a_small_even_block_stays_in_bounds():
    pytest.importorskip("numpy")
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


# ---- relations -------------------------------------------------------------------------

@pytest.mark.xfail(strict=True, reason=(
    "numrecords.c sw_numrecords_register attaches a record whatever the dtype's "
    "category says, and relations.c answers kinds from the category until a "
    "record arrives: result_type(X, 1.5) goes from X to PromotionError (a "
    "defined result made undefined) and X is both Floating and 'integral'"))
def test_a_late_record_changes_no_defined_result_and_contradicts_no_category():
    x = SimpleDType(unique_name("LateRecord_"), bits=16, supertype=DType.Floating)
    before = dtypes.result_type(x, 1.5)
    assert before is x
    try:
        register_numeric_info(x, NumericInfo.integer(16, signed=True))
    except ValueError:
        pass        # refusing a record that contradicts the category is a fix
    assert dtypes.result_type(x, 1.5) is before
    assert not (dtypes.isdtype(x, DType.Floating) and dtypes.isdtype(x, "integral"))
