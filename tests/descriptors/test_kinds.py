"""The kind table: one definition per descriptor kind.

Each kind (category, simple, compound, block-scaled) is defined once in the
C core; the model classes, the owned accessor names, the receiver checks of
the kind-specific accessors, the C API's kinds and the CLI's words all come
from that definition.  These tests check that every consumer agrees with it.
"""
import re
import types

import pytest

import stride_weave._dtypes as core
from stride_weave import _cli
from stride_weave.dtypes import (
    BlockScaledDType,
    CompoundDType,
    DType,
    DTypeCategory,
    Level,
    SimpleDType,
)
from support import new_class, refused, unique_name

KIND_WORDS = ("category", "simple", "compound", "block-scaled")
MODEL_CLASSES = (DTypeCategory, SimpleDType, CompoundDType, BlockScaledDType)

# Every kind-specific accessor, by the model class that defines it.
ACCESSORS = {
    SimpleDType: ("bits",),
    CompoundDType: ("simple_types", "num_carriers", "representation_rules"),
    BlockScaledDType: ("element", "levels", "num_axes", "bits_per_element"),
}


def test_the_table_lists_each_kind_once_with_its_model_class():
    assert tuple(word for word, _ in core._KINDS) == KIND_WORDS
    assert tuple(cls for _, cls in core._KINDS) == MODEL_CLASSES
    for _, cls in core._KINDS:
        assert getattr(core, cls.__name__) is cls


@pytest.mark.parametrize("name, word", [
    ("Any", "category"), ("Floating", "category"), ("Float32", "simple"),
    ("E2M1", "simple"), ("MXFP4", "block-scaled"), ("NVFP4", "block-scaled"),
])
def test_kind_of_a_builtin_is_its_table_word(name, word):
    assert core._kind(DType.from_name(name)) == word


def test_kind_of_a_user_compound_is_compound():
    class Pair(CompoundDType, abstract=False):
        pass

    d = Pair(unique_name("Pair"), simple_types=[DType.Float32, DType.Int8])
    assert core._kind(d) == "compound"
    assert d.is_compound() and not isinstance(d, BlockScaledDType)


@pytest.mark.parametrize("obj", [None, 3, "Float32", DType, SimpleDType,
                                 Level(DType.E8M0, 32)])
def test_kind_of_anything_else_is_none(obj):
    assert core._kind(obj) is None


def test_the_cli_names_kinds_with_the_table_words():
    for name in ("Any", "Float32", "MXFP4"):
        d = DType.from_name(name)
        assert _cli._contract(d) == core._kind(d)
    assert set(_cli._MODEL_CLASSES) == {cls.__name__ for cls in MODEL_CLASSES}


def test_a_block_scaled_dtype_is_within_compound():
    d = DType.MXFP4
    assert d.is_compound() and not d.is_simple() and not d.is_category()
    # CompoundDType's accessors accept it; BlockScaledDType's are its own.
    assert d.num_carriers == 2
    assert d.element is DType.E2M1


@pytest.mark.parametrize("cls, accessor", [
    (cls, name) for cls, names in ACCESSORS.items() for name in names])
def test_every_kind_accessor_is_model_owned(cls, accessor):
    # Defining a kind's accessor in any descriptor class is refused.
    with refused(TypeError, match=accessor):
        new_class(unique_name("Owns"), (DTypeCategory,), body={accessor: 1})


@pytest.mark.parametrize("cls, accessor", [
    (cls, name) for cls, names in ACCESSORS.items() for name in names])
def test_a_kind_accessor_refuses_a_receiver_of_another_kind(cls, accessor):
    descr = cls.__dict__[accessor]
    other = DType.Floating      # a category has none of these accessors
    if isinstance(descr, types.MemberDescriptorType):
        # A fixed attribute stored as a member slot (CPython 3.12+) is bound
        # to its model class, and CPython refuses any other receiver.
        expected = (f"descriptor '{accessor}' for '{cls.__name__}' objects "
                    f"doesn't apply to a 'DTypeCategory' object")
    else:
        expected = f"{cls.__name__}.{accessor}: expected a {cls.__name__}"
    with pytest.raises(TypeError, match=re.escape(expected)):
        descr.__get__(other)


def test_the_block_scaled_accessors_refuse_a_plain_compound():
    class Plain(CompoundDType, abstract=False):
        pass

    d = Plain(unique_name("Plain"), simple_types=[DType.Float32])
    with pytest.raises(TypeError, match="expected a BlockScaledDType"):
        BlockScaledDType.__dict__["element"].__get__(d)


def test_bases_of_a_kind_and_the_kind_it_refines_are_allowed():
    # A block-scaled class refines CompoundDType: naming both is one kind.
    cls = new_class(unique_name("Both"), (BlockScaledDType, CompoundDType))
    assert issubclass(cls, BlockScaledDType)
    concrete = new_class(unique_name("Both"), (cls,), {"abstract": False})
    # A block size no other test uses: block-scaled formats are unique by
    # structure.
    block = 1000 + int(unique_name("").rsplit("_", 1)[1])
    d = concrete(unique_name("BothFmt"), element=DType.E5M2,
                 levels=[Level(DType.E8M0, block)])
    assert core._kind(d) == "block-scaled" and d.is_compound()


@pytest.mark.parametrize("other", [SimpleDType, DTypeCategory])
def test_block_scaled_with_another_kind_is_refused(other):
    with refused(TypeError, match="only one kind"):
        new_class(unique_name("Mixed"), (BlockScaledDType, other))
