"""Whole / WholeExtent (docs/design.md, docs/api.md)."""
import copy
import pickle

import pytest

from support import unique_name
from stride_weave import _dtypes
from stride_weave.dtypes import (
    DType,
    DTypeCategory,
    RepresentationRule,
    SimpleDType,
    Whole,
    WholeExtent,
)

PROTOCOLS = [0, 1, 2, 3, 4, 5]


def test_whole_extent_returns_the_exported_whole():
    assert WholeExtent() is Whole
    assert WholeExtent() is WholeExtent()
    assert isinstance(Whole, WholeExtent)


def test_whole_is_the_same_object_in_both_modules():
    assert _dtypes.Whole is Whole
    assert _dtypes.WholeExtent is WholeExtent


def test_repr_is_whole():
    assert repr(Whole) == "Whole"
    assert repr(WholeExtent()) == "Whole"


def test_copy_and_deepcopy_return_whole():
    assert copy.copy(Whole) is Whole
    assert copy.deepcopy(Whole) is Whole
    assert copy.deepcopy([Whole, (Whole,)])[1][0] is Whole


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_pickle_round_trip_returns_whole(protocol):
    data = pickle.dumps(Whole, protocol=protocol)
    assert pickle.loads(data) is Whole
    assert b"stride_weave._dtypes" in data and b"Whole" in data
    holder = pickle.loads(pickle.dumps([Whole, {"w": Whole}], protocol=protocol))
    assert holder[0] is Whole and holder[1]["w"] is Whole


def test_whole_is_hashable_and_equal_only_to_itself():
    assert hash(Whole) == hash(WholeExtent())
    assert Whole == Whole
    assert Whole != 1 and Whole != "whole" and Whole is not None
    assert {Whole: 1}[WholeExtent()] == 1


def test_whole_allowed_in_descriptor_structure_extension_encoded_whole():
    class WithWhole(SimpleDType, abstract=False):
        def structure_extension(self):
            return (Whole, ("block", Whole), 3)

    d = WithWhole(unique_name("WholeExt"), bits=8, supertype=DType.Floating)
    assert d.structure()[-1] == ("extension", ("whole", ("str:block", "whole"), "int:3"))
    for protocol in PROTOCOLS:
        assert pickle.loads(pickle.dumps(d, protocol=protocol)) is d


def test_whole_allowed_in_category_structure_extension():
    class WholeCat(DTypeCategory, abstract=False):
        def structure_extension(self):
            return (Whole,)

    c = WholeCat(unique_name("WholeCat"), supertype=DType.Any)
    assert c.structure()[-1] == ("extension", ("whole",))


def test_whole_differs_from_the_string_whole_in_a_structure():
    class Ext(SimpleDType):
        leaf = None

        def structure_extension(self):
            return (type(self).leaf,)

    class A(Ext, abstract=False):
        leaf = Whole

    class B(Ext, abstract=False):
        leaf = "whole"

    a = A(unique_name("WA"), bits=8, supertype=DType.Floating)
    b = B(unique_name("WB"), bits=8, supertype=DType.Floating)
    assert a.structure()[-1] == ("extension", ("whole",))
    assert b.structure()[-1] == ("extension", ("str:whole",))
    assert a.structure() != b.structure()


def test_whole_allowed_in_rule_structure_extension():
    class Blocks(RepresentationRule):
        def structure_extension(self):
            return ("extent", Whole)

        def validate(self, context):
            return None

    r = Blocks()
    assert r.structure()[2] == ("extension", ("str:extent", "whole"))


def test_whole_extent_is_not_a_descriptor():
    assert not isinstance(Whole, DType)
