"""LevelExtent: the rule of one scale level.

``LevelExtent(level, extent)`` is a RepresentationRule.  ``level`` is the
zero-based adjacent edge (an exact non-negative int), ``extent`` an exact
positive int, an N-D block's tuple of at least two ints >= 2 (which counts
the product of its entries), or ``Whole``; a wrong type is a TypeError, a
wrong range a ValueError.  ``validate(context)`` reads

    src = context.level_shapes[level].logical_size
    dst = context.level_shapes[level + 1].logical_size
    adj = context.adjacent_layouts[level]

and raises ValueError (naming the dtype, the level and the numbers) when
there is no such edge; for an integer extent when src is not divisible by
extent, dst != src // extent, or adj.uniform_preimage_extent(level_shapes[level + 1])
is None or differs from extent; a tuple extent is compared as the product of
its entries; for Whole when dst != 1 or the uniform preimage extent is not
src.  Otherwise it returns None.

The contexts here are small fakes implementing the documented protocol
(stride_weave._typing.RepresentationValidationContext).
"""
import copy
import dataclasses
import inspect
import re

import pytest
from hypothesis import given, settings, strategies as st

from support import refused, registry_unchanged, unique_name
from stride_weave._typing import RepresentationValidationContext
from stride_weave.dtypes import (
    DType,
    LevelExtent,
    RepresentationRule,
    Whole,
    WholeExtent,
)

IDENTITY = "str:stride_weave._dtypes.LevelExtent"


# --------------------------------------------------------------------------
# A fake validation context (the tensor side builds real ones)
# --------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Shape:
    logical_size: int


class Layout:
    """An adjacent layout that answers a fixed uniform preimage extent and
    records the shapes it was asked about."""

    def __init__(self, preimage):
        self.preimage = preimage
        self.asked = []

    def uniform_preimage_extent(self, shape):
        self.asked.append(shape)
        return self.preimage


@dataclasses.dataclass(frozen=True)
class Context:
    logical_dtype: object
    storage_dtypes: tuple
    placement_layouts: tuple
    adjacent_layouts: tuple
    level_shapes: tuple


def make_context(sizes, preimages, dtype=None):
    """sizes[i] is level i's logical size; preimages[i] is what adjacent
    layout i answers (one layout per edge between consecutive sizes unless
    preimages is given shorter)."""
    dtype = DType.MXFP4 if dtype is None else dtype
    return Context(
        logical_dtype=dtype,
        storage_dtypes=tuple(dtype.simple_types),
        placement_layouts=tuple(object() for _ in dtype.simple_types),
        adjacent_layouts=tuple(Layout(p) for p in preimages),
        level_shapes=tuple(Shape(s) for s in sizes),
    )


def words(msg):
    """The whole numbers appearing in msg, as ints."""
    return {int(w) for w in re.findall(r"(?<![\w.])-?\d+(?!\w|\.\d)", msg)}


def names_level(msg, level):
    return re.search(rf"\b(level|edge)\s+{level}\b", msg) is not None


def assert_refused(rule, context, *numbers, dtype="MXFP4"):
    """validate(context) raises ValueError naming the dtype, the rule's level
    and every number given; nothing is registered."""
    with refused(ValueError) as info:
        rule.validate(context)
    msg = str(info.value)
    assert dtype in msg, msg
    assert names_level(msg, rule.level), msg
    missing = [n for n in numbers if n not in words(msg)]
    assert not missing, f"numbers {missing} not in message: {msg}"
    return msg


def test_fake_context_implements_the_documented_protocol():
    """The fakes carry exactly the attributes the typed protocol declares."""
    declared = {n for n, v in vars(RepresentationValidationContext).items()
                if isinstance(v, property)}
    assert declared == {"logical_dtype", "storage_dtypes", "placement_layouts",
                        "adjacent_layouts", "level_shapes"}
    ctx = make_context([64, 2], [32])
    for attr in declared - {"logical_dtype"}:
        assert type(getattr(ctx, attr)) is tuple


# --------------------------------------------------------------------------
# Construction and properties
# --------------------------------------------------------------------------

def test_level_extent_is_a_representation_rule():
    rule = LevelExtent(0, 32)
    assert isinstance(rule, RepresentationRule)
    assert issubclass(LevelExtent, RepresentationRule)


def test_positional_and_keyword_arguments():
    for rule in (LevelExtent(2, 16), LevelExtent(level=2, extent=16),
                 LevelExtent(2, extent=16)):
        assert rule.level == 2 and type(rule.level) is int
        assert rule.extent == 16 and type(rule.extent) is int


def test_signature_is_level_then_extent():
    assert str(inspect.signature(LevelExtent)) == "(level, extent)"


def test_whole_extent():
    """extent may be Whole: all coordinates of the level map onto one."""
    rule = LevelExtent(1, Whole)
    assert rule.level == 1
    assert rule.extent is Whole
    assert LevelExtent(0, WholeExtent()).extent is Whole


def test_level_zero_and_extent_one_are_valid_boundaries():
    rule = LevelExtent(0, 1)
    assert (rule.level, rule.extent) == (0, 1)


def test_huge_level_and_extent_are_accepted_exactly():
    rule = LevelExtent(2 ** 70, 10 ** 30)
    assert rule.level == 2 ** 70 and rule.extent == 10 ** 30


def test_repr():
    assert repr(LevelExtent(0, 32)) == "LevelExtent(level=0, extent=32)"
    assert repr(LevelExtent(1, Whole)) == "LevelExtent(level=1, extent=Whole)"


def test_construction_registers_nothing():
    with registry_unchanged():
        LevelExtent(0, 32)
        LevelExtent(3, Whole)


class _IntSub(int):
    pass


@pytest.mark.parametrize("level", [True, False, 0.0, 1.5, "0", None, (0,),
                                   _IntSub(0), Whole],
                         ids=["True", "False", "0.0", "1.5", "str", "None",
                              "tuple", "int-subclass", "Whole"])
def test_level_of_wrong_type_is_a_type_error(level):
    """level must be an exact int (not bool, not an int subclass, not Whole)."""
    with refused(TypeError, match="level"):
        LevelExtent(level, 32)


@pytest.mark.parametrize("level", [-1, -32, -(2 ** 80)])
def test_negative_level_is_a_value_error(level):
    with refused(ValueError, match="level"):
        LevelExtent(level, 32)


@pytest.mark.parametrize("extent", [True, False, 32.0, "32", None, [16, 16],
                                    _IntSub(32), WholeExtent, DType.Float32],
                         ids=["True", "False", "float", "str", "None", "list",
                              "int-subclass", "WholeExtent-class", "descriptor"])
def test_extent_of_wrong_type_is_a_type_error(extent):
    """extent must be an exact int, a tuple of ints or Whole."""
    with refused(TypeError, match="extent"):
        LevelExtent(0, extent)


@pytest.mark.parametrize("extent", [0, -1, -(2 ** 80)])
def test_non_positive_extent_is_a_value_error(extent):
    with refused(ValueError, match="extent"):
        LevelExtent(0, extent)


def test_nd_extent_is_kept_as_an_exact_tuple():
    class Pair(tuple):
        def __iter__(self):
            raise AssertionError("user __iter__ must not run")

    for extent in ((16, 16), Pair((16, 16)), (_IntSub(16), 16)):
        rule = LevelExtent(0, extent)
        assert rule.extent == (16, 16) and type(rule.extent) is tuple
        assert [type(e) for e in rule.extent] == [int, int]
    assert repr(LevelExtent(0, (128, 128))) == "LevelExtent(level=0, extent=(128, 128))"


@pytest.mark.parametrize("extent, error, message", [
    ((1, 32), ValueError, "LevelExtent(): extent (1, 32) has fewer than two entries above "
                          "1: it is the 1-D block 32, spelled extent=32"),
    ((32,), ValueError, "LevelExtent(): extent (32,) has fewer than two entries above 1: "
                        "it is the 1-D block 32, spelled extent=32"),
    ((16, 1, 16), ValueError, "LevelExtent(): every entry of a tuple extent is at least 2, "
                              "got (16, 1, 16): its blocks are those of extent=(16, 16)"),
    ((16, 0), ValueError, "LevelExtent(): the entries of a tuple extent must be positive, "
                          "got 0 at index 1"),
    ((16, True), TypeError, "LevelExtent(): the entries of a tuple extent must be ints "
                            "(not bools), got bool at index 1"),
    ((16, 16.0), TypeError, "LevelExtent(): the entries of a tuple extent must be ints "
                            "(not bools), got float at index 1"),
])
def test_a_tuple_extent_follows_the_rules_of_a_tuple_block(extent, error, message):
    with refused(error) as info:
        LevelExtent(0, extent)
    assert str(info.value).startswith(message)


def test_missing_or_extra_arguments_are_type_errors():
    for args, kwargs in [((), {}), ((0,), {}), ((), {"extent": 32}),
                         ((0, 32, 1), {}), ((0, 32), {"other": 1})]:
        with refused(TypeError):
            LevelExtent(*args, **kwargs)


# --------------------------------------------------------------------------
# Structure
# --------------------------------------------------------------------------

def test_structure_carries_level_and_extent():
    assert LevelExtent(0, 32).structure() == (
        "RepresentationRule", IDENTITY, ("extension", ("int:0", "int:32")))
    assert LevelExtent(1, Whole).structure() == (
        "RepresentationRule", IDENTITY, ("extension", ("int:1", "whole")))


def test_structure_extension_is_level_and_extent():
    assert LevelExtent(3, 16).structure_extension() == (3, 16)
    assert LevelExtent(1, Whole).structure_extension() == (1, Whole)


def test_a_tuple_extent_is_a_tuple_of_int_leaves():
    assert LevelExtent(0, (16, 16)).structure() == (
        "RepresentationRule", IDENTITY, ("extension", ("int:0", ("int:16", "int:16"))))
    assert LevelExtent(0, (16, 16)).structure_extension() == (0, (16, 16))
    assert LevelExtent(0, (16, 16)).structure() != LevelExtent(0, 256).structure()


def test_equal_parameters_give_equal_structures_and_others_differ():
    assert LevelExtent(0, 32).structure() == LevelExtent(0, 32).structure()
    structures = {LevelExtent(*args).structure()
                  for args in [(0, 32), (1, 32), (0, 16), (0, Whole), (1, Whole),
                               (0, 1)]}
    assert len(structures) == 6


# --------------------------------------------------------------------------
# Immutability and copying
# --------------------------------------------------------------------------

@pytest.mark.parametrize("attr", ["level", "extent", "structure", "other"])
def test_setting_or_deleting_attributes_raises(attr):
    rule = LevelExtent(0, 32)
    with pytest.raises(AttributeError):
        setattr(rule, attr, 1)
    with pytest.raises(AttributeError):
        delattr(rule, attr)
    assert (rule.level, rule.extent) == (0, 32)
    assert rule.structure()[2] == ("extension", ("int:0", "int:32"))


def test_copy_and_deepcopy_return_the_same_rule():
    for rule in (LevelExtent(0, 32), LevelExtent(1, Whole)):
        assert copy.copy(rule) is rule
        assert copy.deepcopy(rule) is rule
        assert copy.deepcopy([rule, {"r": rule}])[1]["r"] is rule


# --------------------------------------------------------------------------
# validate(context): integer extent
# --------------------------------------------------------------------------

def test_validate_accepts_a_matching_integer_edge():
    """src divisible by extent, dst == src // extent, uniform preimage ==
    extent: validate returns None."""
    ctx = make_context([128, 4], [32])
    assert LevelExtent(0, 32).validate(ctx) is None


def test_validate_asks_the_layout_about_the_target_shape():
    """uniform_preimage_extent is called with level_shapes[level + 1]."""
    ctx = make_context([512, 32, 2, 1], [16, 16, Whole])
    assert LevelExtent(1, 16).validate(ctx) is None
    assert ctx.adjacent_layouts[1].asked
    assert all(shape is ctx.level_shapes[2]
               for shape in ctx.adjacent_layouts[1].asked)
    assert ctx.adjacent_layouts[0].asked == []


def test_validate_uses_only_its_own_edge():
    """Other edges of the context may be anything: only edge `level` counts."""
    ctx = make_context([7, 100, 25, 3], [None, 4, 999])
    assert LevelExtent(1, 4).validate(ctx) is None


@pytest.mark.parametrize("n_layouts", [0, 1, 2])
def test_validate_without_the_edge_is_a_value_error(n_layouts):
    """level >= len(context.adjacent_layouts): no such edge."""
    sizes = [64, 2, 1][:n_layouts + 1]
    ctx = make_context(sizes, [32, 2][:n_layouts])
    assert_refused(LevelExtent(2, 32), ctx, n_layouts)


def test_validate_with_a_huge_level_is_a_value_error():
    ctx = make_context([64, 2], [32])
    with refused(ValueError) as info:
        LevelExtent(2 ** 70, 32).validate(ctx)
    assert "MXFP4" in str(info.value)


def test_validate_indivisible_source_is_a_value_error():
    ctx = make_context([100, 3], [32])
    assert_refused(LevelExtent(0, 32), ctx, 100, 32)


def test_validate_wrong_target_size_is_a_value_error():
    """dst must be src // extent: 128 // 32 == 4, the context says 5."""
    ctx = make_context([128, 5], [32])
    assert_refused(LevelExtent(0, 32), ctx, 128, 4, 5)


def test_validate_target_size_too_small_is_a_value_error():
    ctx = make_context([128, 2], [64])
    assert_refused(LevelExtent(0, 32), ctx, 128, 4, 2)


def test_validate_non_uniform_preimage_is_a_value_error():
    """The layout answers None: targets overlap or leave holes."""
    ctx = make_context([128, 4], [None])
    assert_refused(LevelExtent(0, 32), ctx, 32)


def test_validate_different_preimage_is_a_value_error():
    ctx = make_context([128, 4], [16])
    assert_refused(LevelExtent(0, 32), ctx, 16, 32)


def test_validate_on_a_later_edge_names_that_level():
    ctx = make_context([512, 32, 3], [16, 16])
    msg = assert_refused(LevelExtent(1, 16), ctx, 32, 2, 3)
    assert names_level(msg, 1), msg


# --------------------------------------------------------------------------
# validate(context): N-D extent, compared as the product of its entries
# --------------------------------------------------------------------------

def test_validate_accepts_an_nd_edge_counted_by_the_product():
    """A 16x16 block spans 256 coordinates of level 0: 1024 elements are
    4 blocks, each the preimage of 256 coordinates."""
    ctx = make_context([1024, 4], [256])
    assert LevelExtent(0, (16, 16)).validate(ctx) is None
    assert LevelExtent(0, (128, 128)).validate(make_context([3 * 16384, 3], [16384])) is None


def test_validate_nd_indivisible_source_names_the_block_and_its_size():
    ctx = make_context([1000, 3], [256])
    msg = assert_refused(LevelExtent(0, (16, 16)), ctx, 1000, 256)
    assert "(16, 16) (256 coordinates)" in msg, msg


def test_validate_nd_wrong_target_size_is_a_value_error():
    ctx = make_context([1024, 5], [256])
    assert_refused(LevelExtent(0, (16, 16)), ctx, 1024, 4, 5)


def test_validate_nd_different_preimage_is_a_value_error():
    """The layout maps 16 coordinates onto each target, not 256."""
    ctx = make_context([1024, 4], [16])
    assert_refused(LevelExtent(0, (16, 16)), ctx, 16, 256)


def test_validate_nd_non_uniform_preimage_is_a_value_error():
    ctx = make_context([1024, 4], [None])
    assert_refused(LevelExtent(0, (16, 16)), ctx, 256)


# --------------------------------------------------------------------------
# validate(context): Whole extent
# --------------------------------------------------------------------------

def test_validate_accepts_a_matching_whole_edge():
    """Whole: dst == 1 and the uniform preimage extent is src."""
    ctx = make_context([64, 1], [64], dtype=DType.NVFP4)
    assert LevelExtent(0, Whole).validate(ctx) is None
    nv = make_context([1024, 64, 1], [16, 64], dtype=DType.NVFP4)
    assert LevelExtent(1, Whole).validate(nv) is None


def test_validate_whole_needs_no_divisibility():
    ctx = make_context([97, 1], [97], dtype=DType.NVFP4)
    assert LevelExtent(0, Whole).validate(ctx) is None


def test_validate_whole_with_more_than_one_target_is_a_value_error():
    ctx = make_context([1024, 64, 2], [16, 32], dtype=DType.NVFP4)
    assert_refused(LevelExtent(1, Whole), ctx, 64, 2, dtype="NVFP4")


def test_validate_whole_with_wrong_preimage_is_a_value_error():
    ctx = make_context([1024, 64, 1], [16, 32], dtype=DType.NVFP4)
    assert_refused(LevelExtent(1, Whole), ctx, 64, 32, dtype="NVFP4")


def test_validate_whole_with_non_uniform_preimage_is_a_value_error():
    ctx = make_context([1024, 64, 1], [16, None], dtype=DType.NVFP4)
    assert_refused(LevelExtent(1, Whole), ctx, 64, dtype="NVFP4")


def test_validate_whole_without_the_edge_is_a_value_error():
    ctx = make_context([1024, 64], [16], dtype=DType.NVFP4)
    assert_refused(LevelExtent(1, Whole), ctx, 1, dtype="NVFP4")


def test_validate_names_an_extension_dtype():
    from support.defs import PlanePair

    name = unique_name("LEPair")
    pair = PlanePair(name, planes=[DType.E2M1, DType.E8M0],
                     rules=[LevelExtent(0, 32)])
    ctx = make_context([100, 3], [32], dtype=pair)
    assert_refused(pair.representation_rules[0], ctx, 100, 32, dtype=name)


def test_validate_refusal_does_not_change_the_rule():
    rule = LevelExtent(0, 32)
    before = rule.structure()
    with pytest.raises(ValueError):
        rule.validate(make_context([100, 3], [32]))
    assert rule.structure() == before
    assert rule.validate(make_context([96, 3], [32])) is None


# --------------------------------------------------------------------------
# Property: validate agrees with the documented decision procedure
# --------------------------------------------------------------------------

def _size(extent):
    if type(extent) is not tuple:
        return extent
    size = 1
    for entry in extent:
        size *= entry
    return size


def _spec_accepts(level, extent, sizes, preimages):
    if level >= len(preimages):
        return False
    src, dst, pre = sizes[level], sizes[level + 1], preimages[level]
    if extent is Whole:
        return dst == 1 and pre is not None and pre == src
    size = _size(extent)
    return src % size == 0 and dst == src // size and pre == size


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_property_validate_follows_the_spec(data):
    """For random edges, validate returns None exactly when the documented
    conditions hold and raises ValueError otherwise."""
    n_edges = data.draw(st.integers(0, 4), label="edges")
    level = data.draw(st.integers(0, 5), label="level")
    extent = data.draw(st.one_of(
        st.integers(1, 64), st.just(Whole),
        st.lists(st.integers(2, 8), min_size=2, max_size=3).map(tuple)), label="extent")
    sizes = [data.draw(st.integers(1, 4096), label="size0")]
    preimages = []
    for i in range(n_edges):
        src = sizes[-1]
        honest = data.draw(st.booleans(), label=f"honest{i}")
        if honest and i == level:
            dst = 1 if extent is Whole else max(src // _size(extent), 1)
            pre = src if extent is Whole else _size(extent)
        else:
            dst = data.draw(st.integers(1, 4096), label=f"dst{i}")
            pre = data.draw(st.one_of(st.none(), st.integers(1, 4096)), label=f"pre{i}")
        sizes.append(dst)
        preimages.append(pre)
    ctx = make_context(sizes, preimages)
    rule = LevelExtent(level, extent)
    if _spec_accepts(level, extent, sizes, preimages):
        assert rule.validate(ctx) is None
    else:
        with pytest.raises(ValueError) as info:
            rule.validate(ctx)
        assert "MXFP4" in str(info.value)
