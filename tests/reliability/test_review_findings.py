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
