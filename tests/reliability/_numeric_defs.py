"""Definitions with numeric records, imported by worker processes of
tests/reliability/test_pickle_numeric.py.

Importing registers ``NR_E4M1`` (a 6-bit format with a record whose bias is
``SW_NUMERIC_BIAS``, 7 unless the environment says otherwise; ``none`` for
no record) and ``NR_MX``, a block-scaled format with it as its element.  A
worker started with another bias has the same names and structures, and
another meaning.
"""
import os
import pickle

from stride_weave.dtypes import BlockScaledDType, DType, Level, SimpleDType
from stride_weave.numerics import NumericInfo

BIAS_ENV = "SW_NUMERIC_BIAS"


def record(bias):
    """The record of NR_E4M1 with `bias` (None: no record)."""
    if bias is None:
        return None
    return NumericInfo.floating("nr_e4m1", exponent_bits=4, mantissa_bits=1,
                                bias=bias, nan_encoding="none")


def _bias():
    value = os.environ.get(BIAS_ENV, "7")
    return None if value == "none" else int(value)


BIAS = _bias()
E4M1 = SimpleDType("NR_E4M1", bits=6, supertype=DType.Floating, numeric_info=record(BIAS))
MX = BlockScaledDType("NR_MX", element=E4M1, levels=(Level(DType.E8M0, 32),))


def define_with_bias_8():
    """A worker's ``define``: the definition a newer version would give."""
    return SimpleDType.ensure("NR_E4M1", bits=6, supertype=DType.Floating,
                              numeric_info=record(8))


def load(data):
    """A task: load a pickle in the worker; its repr, or the error."""
    try:
        return repr(pickle.loads(data))
    except (LookupError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"
