"""SymbolicBits: a storage cost that depends on n.

SymbolicBits(constant, whole_scale_bits).evaluate(n) is
constant + whole_scale_bits / n; n must be an int that is not a bool
(TypeError) and at least 1 (ValueError).
"""
import copy
import pickle

import pytest
from hypothesis import given, strategies as st

from stride_weave.dtypes import SymbolicBits


def test_nvfp4_cost_at_1024_elements():
    """The documented example: NVFP4's cost is 4.53125 bits at 1024 elements."""
    assert SymbolicBits(4.5, 32).evaluate(1024) == 4.53125


def test_properties():
    s = SymbolicBits(4.5, 32)
    assert s.constant == 4.5
    assert s.whole_scale_bits == 32 and type(s.whole_scale_bits) is int


@given(constant=st.floats(min_value=0, max_value=1e6),
       bits=st.integers(min_value=1, max_value=4096),
       n=st.integers(min_value=1, max_value=10**12))
def test_property_evaluate_is_constant_plus_share(constant, bits, n):
    assert SymbolicBits(constant, bits).evaluate(n) == constant + bits / n


def test_value_equality_and_hash():
    assert SymbolicBits(4.5, 32) == SymbolicBits(4.5, 32)
    assert hash(SymbolicBits(4.5, 32)) == hash(SymbolicBits(4.5, 32))
    assert SymbolicBits(4.5, 32) != SymbolicBits(4.5, 16)
    assert SymbolicBits(4.5, 32) != SymbolicBits(4.25, 32)
    assert SymbolicBits(4.5, 32) != 4.5


def test_readable_repr():
    assert repr(SymbolicBits(4.5, 32)) == "SymbolicBits(constant=4.5, whole_scale_bits=32)"


def test_immutable_and_copies_by_value():
    s = SymbolicBits(4.5, 32)
    with pytest.raises(AttributeError):
        s.constant = 1.0
    with pytest.raises(AttributeError):
        s.other = 1
    assert copy.deepcopy(s) == s
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(s, protocol)) == s


@pytest.mark.parametrize("count", [True, False, 1.0, "8", None])
def test_non_int_element_count_is_a_type_error(count):
    with pytest.raises(TypeError, match="element_count"):
        SymbolicBits(4.5, 32).evaluate(count)


@pytest.mark.parametrize("count", [0, -1, -(2**70)])
def test_element_count_below_one_is_a_value_error(count):
    with pytest.raises(ValueError, match="element_count"):
        SymbolicBits(4.5, 32).evaluate(count)


@pytest.mark.parametrize("args, exc", [
    ((True, 32), TypeError), (("4.5", 32), TypeError), ((4.5, 32.0), TypeError),
    ((4.5, True), TypeError), ((float("nan"), 32), ValueError),
    ((-1.0, 32), ValueError), ((4.5, 0), ValueError), ((4.5, -8), ValueError),
])
def test_invalid_constructor_arguments(args, exc):
    with pytest.raises(exc):
        SymbolicBits(*args)


def test_int_subclass_element_count_runs_no_user_code():
    class Hostile(int):
        def __rtruediv__(self, other):
            raise AssertionError("user __rtruediv__ must not run")

    assert SymbolicBits(4.5, 32).evaluate(Hostile(1024)) == 4.53125
