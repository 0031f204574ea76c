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
from support.child import assert_clean_exit, child_report, run_child
from stride_weave import dtypes
from stride_weave.dtypes import DType, SimpleDType
from stride_weave.numerics import NumericInfo, register_numeric_info


# ---- numeric records ---------------------------------------------------------------------

def _record_or_refusal(**params):
    """The record of the given float parameters, or None when it is refused
    (refusing a format whose fields cannot be read as described is a fix
    too)."""
    try:
        return NumericInfo.floating(unique_name("enc"), **params)
    except ValueError:
        return None


@pytest.mark.xfail(strict=True, reason=(
    "numinfo.c sw_numinfo_derive_float takes the exponent field below the "
    "all-ones one as a normal binade; with exponent_bits=1 it is field 0, "
    "which holds the subnormals (or only zero), so max/min name a value the "
    "format does not have and can_cast refuses casts that lose nothing"))
def test_a_one_bit_exponent_record_reports_only_values_its_format_has():
    # Exponent field 0 holds M/4 (subnormals, 2**(1 - bias) * M / 4), field
    # 1 holds infinity and NaN: the largest finite value is 0.75.
    e1m2 = _record_or_refusal(exponent_bits=1, mantissa_bits=2, bias=1,
                              nan_encoding="ieee")
    if e1m2 is not None:
        assert (e1m2.max, e1m2.min) == (0.75, -0.75)
    # Field 0 is zero (a sign bit, no mantissa), field 1 the NaN: no finite
    # value but zero.
    zero_only = _record_or_refusal(exponent_bits=1, mantissa_bits=0, bias=1,
                                   nan_encoding="all_ones")
    if zero_only is not None:
        assert zero_only.max == 0.0
    # Values k/8 for k < 16, every one of them in a format with 2 exponent
    # and 3 mantissa bits and bias 2 (subnormals of 1/16, normals up to 1.875).
    narrow = _record_or_refusal(exponent_bits=1, mantissa_bits=4, bias=0,
                                nan_encoding="ieee")
    if narrow is not None:
        wide = _record_or_refusal(exponent_bits=2, mantissa_bits=3, bias=2,
                                  nan_encoding="ieee")
        a = SimpleDType(unique_name("E1M4_"), bits=narrow.bits, supertype=DType.Floating)
        b = SimpleDType(unique_name("E2M3B2_"), bits=wide.bits, supertype=DType.Floating)
        register_numeric_info(a, narrow)
        register_numeric_info(b, wide)
        assert dtypes.can_cast(a, b)
