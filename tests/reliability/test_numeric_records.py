"""Numeric records against hostile code: a record handed out by
stride_weave.numerics is the truth for the life of the process, whatever
Python code does to it or passes in to build one."""
import copy
import gc
import pickle

import pytest

from support import unique_name
from stride_weave.dtypes import DType, SimpleDType
from stride_weave.numerics import NumericInfo, finfo, numeric_info, register_numeric_info


def _truth(record):
    return repr(record), hash(record)


@pytest.mark.parametrize("field", [
    "max", "min", "kind", "encoding", "bits", "signed", "exponent_bits", "eps",
    "nan_encoding", "has_nan", "__dict__", "fmt",
])
def test_object_setattr_cannot_change_a_record(field):
    record = finfo(DType.Float32)
    before = _truth(record)
    with pytest.raises((AttributeError, TypeError)):
        object.__setattr__(record, field, 1.0)
    with pytest.raises((AttributeError, TypeError)):
        object.__delattr__(record, field)
    assert _truth(finfo(DType.Float32)) == before


def test_a_record_has_no_instance_dict_and_cannot_change_class():
    record = finfo(DType.E4M3)

    class Other:
        __slots__ = ()

    with pytest.raises(TypeError):
        vars(record)
    with pytest.raises(TypeError):
        record.__class__ = Other
    with pytest.raises(TypeError):
        type.__setattr__(NumericInfo, "max", property(lambda self: 0.0))
    assert finfo(DType.E4M3).max == 448.0


def test_no_subclass_can_redefine_what_a_record_means():
    with pytest.raises(TypeError):
        type("Lying", (NumericInfo,), {"__eq__": lambda self, other: True})


def test_the_referents_of_a_record_are_immutable_values():
    record = finfo(DType.E8M0)
    for obj in gc.get_referents(record):
        assert type(obj) in (str, float, int, bool, type(None), type), obj


def test_copies_are_equal_records():
    record = finfo(DType.E5M2)
    assert copy.copy(record) == record == copy.deepcopy(record)
    assert pickle.loads(pickle.dumps(record)) == record


class _Flipping(str):
    """A str that claims to be something else whenever it is asked."""

    def __eq__(self, other):
        return True

    __hash__ = str.__hash__

    def __str__(self):
        return "lie"

    def __repr__(self):
        return "'lie'"


def test_str_subclass_arguments_are_stored_by_value():
    record = NumericInfo.floating(_Flipping("float8_x"), exponent_bits=4, mantissa_bits=3,
                                  bias=7, nan_encoding=_Flipping("all_ones"))
    assert type(record.encoding) is str and record.encoding == "float8_x"
    assert record.nan_encoding == "all_ones" and type(record.nan_encoding) is str
    with pytest.raises(ValueError, match="nan_encoding must be one of"):
        NumericInfo.floating("x", exponent_bits=4, mantissa_bits=3, bias=7,
                             nan_encoding=_Flipping("quiet"))


class _Int(int):
    def __index__(self):
        raise AssertionError("ran user code")

    def __eq__(self, other):
        raise AssertionError("ran user code")

    __hash__ = int.__hash__


def test_int_subclass_parameters_are_refused_without_running_them():
    with pytest.raises(TypeError, match="exponent_bits must be an int"):
        NumericInfo.floating("x", exponent_bits=_Int(4), mantissa_bits=3, bias=7,
                             nan_encoding="ieee")
    with pytest.raises(ValueError, match="bits must be a positive int"):
        NumericInfo.integer(_Int(8), signed=True)


def test_hostile_values_in_the_keyword_constructor_run_no_code():
    class Liar(float):
        def __eq__(self, other):
            raise AssertionError("ran user code")

        __hash__ = float.__hash__

    with pytest.raises(ValueError, match="max=.* contradicts"):
        NumericInfo(kind="float", encoding="f", bits=8, signed=True, min=-448.0,
                    max=Liar(448.0), exponent_bits=4, mantissa_bits=3, bias=7,
                    nan_encoding="all_ones")


def test_a_record_cannot_be_attached_to_an_unfinished_descriptor():
    """An __init__ that tries to attach a record to itself before it is
    registered is refused, and the descriptor stays without one."""
    seen = []

    class Eager(SimpleDType, abstract=False):
        def __init__(self, name):
            super().__init__(name, bits=8, supertype=DType.Integer)
            try:
                register_numeric_info(self, NumericInfo.integer(8, signed=True))
            except TypeError as exc:
                seen.append(exc)

    d = Eager(unique_name("Eager"))
    assert seen and "registered SimpleDType" in str(seen[0])
    with pytest.raises(LookupError):
        numeric_info(d)
