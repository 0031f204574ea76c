"""Level: one scale level of a block-scaled format.

Level(scale, block) is an immutable, hashable value; scale is the SimpleDType
stored at that level, block an int > 0 (not a bool) or Whole.  Equal when the
scales are the same descriptor and the blocks are equal; equal levels hash
equal.
"""
import copy
import pickle

import pytest
from hypothesis import given, strategies as st

from support import refused, unique_name
from stride_weave.dtypes import DType, DTypeCategory, Level, SimpleDType, Whole

SCALES = ["E8M0", "E4M3", "Float32", "Int8"]


def test_level_by_position_and_keyword():
    """Level(scale, block) accepts positional or keyword arguments."""
    a = Level(DType.E8M0, 32)
    b = Level(scale=DType.E8M0, block=32)
    assert a == b
    assert a.scale is DType.E8M0
    assert a.block == 32 and type(a.block) is int
    assert not a.is_whole()


def test_whole_level():
    """A Whole block is one scale over the entire level below."""
    level = Level(DType.Float32, Whole)
    assert level.block is Whole
    assert level.is_whole()


def test_repr_names_scale_and_block():
    assert repr(Level(DType.E8M0, 32)) == "Level(scale=SimpleDType('E8M0'), block=32)"
    assert repr(Level(DType.Float32, Whole)) == "Level(scale=SimpleDType('Float32'), block=Whole)"


def test_equality_and_hash_by_value():
    assert Level(DType.E8M0, 32) == Level(DType.E8M0, 32)
    assert hash(Level(DType.E8M0, 32)) == hash(Level(DType.E8M0, 32))
    assert Level(DType.E8M0, 32) != Level(DType.E8M0, 16)
    assert Level(DType.E8M0, 32) != Level(DType.E4M3, 32)
    assert Level(DType.E8M0, 1) != Level(DType.E8M0, Whole)
    assert Level(DType.E8M0, 32) != (DType.E8M0, 32)
    assert len({Level(DType.E8M0, 32), Level(DType.E8M0, 32), Level(DType.E8M0, Whole)}) == 2


@given(scale=st.sampled_from(SCALES),
       block=st.one_of(st.integers(min_value=1, max_value=2**70), st.just(Whole)))
def test_property_equal_levels_hash_equal(scale, block):
    a = Level(DType.from_name(scale), block)
    b = Level(scale=DType.from_name(scale), block=block)
    assert a == b and hash(a) == hash(b)
    assert pickle.loads(pickle.dumps(a)) == a


def test_level_is_immutable():
    level = Level(DType.E8M0, 32)
    for attr in ("scale", "block", "other"):
        with pytest.raises(AttributeError):
            setattr(level, attr, 1)
        with pytest.raises(AttributeError):
            delattr(level, attr)


def test_copy_returns_the_same_level():
    level = Level(DType.E8M0, 32)
    assert copy.copy(level) is level
    assert copy.deepcopy(level) is level


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_pickle_round_trip(protocol):
    for level in (Level(DType.E8M0, 32), Level(DType.Float32, Whole)):
        back = pickle.loads(pickle.dumps(level, protocol))
        assert back == level
        assert back.scale is level.scale


def test_int_subclass_block_is_normalized():
    class MyInt(int):
        def __eq__(self, other):
            raise AssertionError("user __eq__ must not run")
        __hash__ = int.__hash__

    level = Level(DType.E8M0, MyInt(32))
    assert type(level.block) is int and level.block == 32


@pytest.mark.parametrize("scale", [None, 8, "E8M0", DType.Floating, DType.Any])
def test_non_simple_scale_is_a_type_error(scale):
    with refused(TypeError, match="scale"):
        Level(scale, 32)


@pytest.mark.parametrize("block", [True, False, 32.0, "32", None, (32,)])
def test_wrong_block_type_is_a_type_error(block):
    with refused(TypeError, match="block"):
        Level(DType.E8M0, block)


@pytest.mark.parametrize("block", [0, -1, -(2**80)])
def test_non_positive_block_is_a_value_error(block):
    with refused(ValueError, match="block"):
        Level(DType.E8M0, block)


def test_unfinished_scale_is_a_value_error():
    """A scale that is not a finished registered descriptor is refused."""
    seen = []

    class Leaky(SimpleDType, abstract=False):
        def __init__(self, name):
            super().__init__(name, bits=8, supertype=DType.Floating)
            try:
                Level(self, 32)
            except ValueError as exc:
                seen.append(exc)
            raise RuntimeError("reject")

    with pytest.raises(RuntimeError):
        Leaky(unique_name("LevelLeaky"))
    assert len(seen) == 1


def test_missing_arguments_are_type_errors():
    with pytest.raises(TypeError):
        Level(DType.E8M0)
    with pytest.raises(TypeError):
        Level(block=32)
    with pytest.raises(TypeError):
        Level(DType.E8M0, 32, 1)


def test_category_is_not_a_scale():
    cat = DTypeCategory(unique_name("LevelCat"), supertype=DType.Any)
    with refused(TypeError, match="scale"):
        Level(cat, 32)
