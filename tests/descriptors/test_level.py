"""Level: one scale level of a block-scaled format.

Level(scale, block) is an immutable, hashable value; scale is the SimpleDType
stored at that level, block an int > 0 (not a bool), a tuple of at least two
ints >= 2 (an N-D block, one spelling per format), or Whole.  Equal when the
scales are the same descriptor and the blocks are equal; equal levels hash
equal.  block_shape and block_size read the block as a shape and a count.
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


@pytest.mark.parametrize("block", [True, False, 32.0, "32", None, [16, 16], {16: 16},
                                   b"\x10\x10", range(16, 18)])
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


# ---- N-D blocks ---------------------------------------------------------------

def test_nd_block_is_kept_as_its_tuple():
    level = Level(DType.E4M3, (16, 16))
    assert level.block == (16, 16) and type(level.block) is tuple
    assert all(type(b) is int for b in level.block)
    assert not level.is_whole()
    assert repr(level) == "Level(scale=SimpleDType('E4M3'), block=(16, 16))"
    assert Level(DType.Float32, (128, 128, 2)).block == (128, 128, 2)


@pytest.mark.parametrize("block, shape, size", [
    (32, (32,), 32),
    (16, (16,), 16),
    (1, (1,), 1),
    (2**70, (2**70,), 2**70),
    ((16, 16), (16, 16), 256),
    ((128, 128), (128, 128), 16384),
    ((2, 3, 4), (2, 3, 4), 24),
    ((2**40, 2**40), (2**40, 2**40), 2**80),
])
def test_block_shape_and_block_size(block, shape, size):
    level = Level(DType.E8M0, block)
    assert level.block_shape == shape and type(level.block_shape) is tuple
    assert level.block_size == size and type(level.block_size) is int


def test_whole_has_no_block_shape_and_whole_block_size():
    level = Level(DType.Float32, Whole)
    assert level.block_shape is None
    assert level.block_size is Whole


@pytest.mark.parametrize("block, spelling", [
    ((1, 32), "32"),
    ((32, 1), "32"),
    ((32,), "32"),
    ((1, 1, 16), "16"),
    ((1,), "1"),
    ((1, 1), "1"),
    ((), "1"),
])
def test_a_tuple_with_fewer_than_two_entries_above_one_names_the_int_spelling(block, spelling):
    with refused(ValueError) as info:
        Level(DType.E8M0, block)
    assert str(info.value) == (
        f"Level(): block {block!r} has fewer than two entries above 1: it is the 1-D "
        f"block {spelling}, spelled block={spelling} (which tensor axis a block runs "
        f"along is for a layout to say, not the format)")


@pytest.mark.parametrize("block, spelling", [
    ((1, 16, 16), "(16, 16)"),
    ((16, 1, 16), "(16, 16)"),
    ((2, 3, 1, 1), "(2, 3)"),
])
def test_an_entry_of_one_beside_two_others_names_the_shorter_spelling(block, spelling):
    with refused(ValueError) as info:
        Level(DType.E8M0, block)
    assert str(info.value) == (f"Level(): every entry of a tuple block is at least 2, got "
                               f"{block!r}: its blocks are those of block={spelling}")


@pytest.mark.parametrize("block, index, got", [
    ((0, 16), 0, "0"),
    ((16, -1), 1, "a negative int"),
    ((16, 16, -(2**80)), 2, "a negative int"),
])
def test_non_positive_entries_are_value_errors(block, index, got):
    with refused(ValueError) as info:
        Level(DType.E8M0, block)
    assert str(info.value) == (f"Level(): the entries of a tuple block must be positive, "
                               f"got {got} at index {index}")


@pytest.mark.parametrize("block, index, got", [
    ((16, True), 1, "bool"),
    ((False, 16), 0, "bool"),
    ((16, 16.0), 1, "float"),
    (("16", 16), 0, "str"),
    ((16, None), 1, "NoneType"),
    (((16,), 16), 0, "tuple"),
    ((16, Whole), 1, "stride_weave._dtypes.WholeExtent"),
])
def test_non_int_entries_are_type_errors(block, index, got):
    with refused(TypeError) as info:
        Level(DType.E8M0, block)
    assert str(info.value) == (f"Level(): the entries of a tuple block must be ints (not "
                               f"bools), got {got} at index {index}")


def test_a_type_error_wins_over_a_value_error_in_a_later_entry():
    with refused(TypeError):
        Level(DType.E8M0, (0, 16, "x"))


def test_nd_blocks_equal_and_hash_by_value():
    a, b = Level(DType.E4M3, (16, 16)), Level(DType.E4M3, (16, 16))
    assert a == b and hash(a) == hash(b)
    assert a != Level(DType.E4M3, (16, 32))
    assert a != Level(DType.E4M3, (16, 16, 2))
    assert a != Level(DType.E4M3, 256)       # the same size, another block
    assert a != Level(DType.E4M3, Whole)
    assert a != Level(DType.E8M0, (16, 16))
    assert Level(DType.E4M3, 16) != Level(DType.E4M3, (16, 16))
    assert len({a, b, Level(DType.E4M3, 256), Level(DType.E4M3, (16, 32))}) == 3


class _HostileInt(int):
    """An int subclass whose every dunder fails: the model copies its value
    without running any of them."""

    def __eq__(self, other):
        raise AssertionError("user __eq__ must not run")

    def __hash__(self):
        raise AssertionError("user __hash__ must not run")

    def __index__(self):
        raise AssertionError("user __index__ must not run")

    def __int__(self):
        raise AssertionError("user __int__ must not run")

    def __mul__(self, other):
        raise AssertionError("user __mul__ must not run")

    __rmul__ = __mul__

    def __repr__(self):
        raise AssertionError("user __repr__ must not run")


class _HostileTuple(tuple):
    """A tuple subclass whose protocol methods fail or lie: the model reads
    its items through the C API only."""

    def __iter__(self):
        raise AssertionError("user __iter__ must not run")

    def __len__(self):
        raise AssertionError("user __len__ must not run")

    def __getitem__(self, i):
        raise AssertionError("user __getitem__ must not run")

    def __eq__(self, other):
        raise AssertionError("user __eq__ must not run")

    def __hash__(self):
        raise AssertionError("user __hash__ must not run")


def test_tuple_and_int_subclasses_are_copied_without_running_their_methods():
    level = Level(DType.E4M3, _HostileTuple((_HostileInt(16), _HostileInt(16))))
    assert type(level.block) is tuple
    assert [type(b) for b in level.block] == [int, int]
    assert level == Level(DType.E4M3, (16, 16))
    assert hash(level) == hash(Level(DType.E4M3, (16, 16)))
    assert level.block_size == 256 and repr(level).endswith("block=(16, 16))")


def test_the_block_is_an_exact_copy_of_a_tuple_subclass():
    class Named(tuple):
        pass

    argument = Named((16, 16))
    level = Level(DType.E4M3, argument)
    assert level.block is not argument
    assert type(level.block) is tuple and level.block == (16, 16)


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_nd_level_pickles_and_copies(protocol):
    level = Level(DType.E4M3, (16, 16))
    back = pickle.loads(pickle.dumps(level, protocol))
    assert back == level and back.block == (16, 16) and back.scale is DType.E4M3
    assert copy.copy(level) is level and copy.deepcopy(level) is level


nd_blocks = st.lists(st.integers(min_value=2, max_value=2**66), min_size=2, max_size=5).map(tuple)


@given(scale=st.sampled_from(SCALES), block=nd_blocks)
def test_property_nd_levels_equal_hash_and_measure_by_value(scale, block):
    a = Level(DType.from_name(scale), block)
    b = Level(scale=DType.from_name(scale), block=tuple(block))
    assert a == b and hash(a) == hash(b)
    assert a.block == a.block_shape == block
    size = 1
    for extent in block:
        size *= extent
    assert a.block_size == size
    assert pickle.loads(pickle.dumps(a)) == a


@given(block=st.lists(st.integers(min_value=1, max_value=64), max_size=5).map(tuple))
def test_property_every_tuple_of_positive_ints_is_one_spelling_or_refused(block):
    """A tuple is accepted exactly when at least two entries exceed 1 and
    none is 1; each refusal names the spelling that is accepted."""
    above = [b for b in block if b > 1]
    if len(above) >= 2 and len(above) == len(block):
        assert Level(DType.E8M0, block).block == block
        return
    with refused(ValueError) as info:
        Level(DType.E8M0, block)
    if len(above) < 2:
        spelling = above[0] if above else 1
        assert f"it is the 1-D block {spelling}, spelled block={spelling} " in str(info.value)
        assert Level(DType.E8M0, spelling).block == spelling
    else:
        assert str(info.value).endswith(f"block={tuple(above)!r}")
        assert Level(DType.E8M0, tuple(above)).block == tuple(above)


def test_refusals_of_huge_entries_show_them_in_hex():
    """Entries beyond 64 bits are shown as the structure encodes them, so a
    refusal never hits the int-to-decimal digit limit."""
    with refused(ValueError) as info:
        Level(DType.E8M0, (1, 10 ** 5000))
    assert str(info.value).startswith(f"Level(): block (1, {hex(10 ** 5000)}) has fewer than "
                                      f"two entries above 1: it is the 1-D block "
                                      f"{hex(10 ** 5000)}, spelled block={hex(10 ** 5000)} ")
    with refused(ValueError) as info:
        Level(DType.E8M0, (2 ** 64, 1, 2))
    assert str(info.value) == (f"Level(): every entry of a tuple block is at least 2, got "
                               f"({hex(2 ** 64)}, 1, 2): its blocks are those of "
                               f"block=({hex(2 ** 64)}, 2)")
