"""Errors read as the public API: the exception a registry miss raises has
a public name in stride_weave.dtypes, and the errors of calling an abstract
model class say what to do instead."""
import io
import pickle
import traceback

import pytest

import stride_weave.dtypes as dtypes
from stride_weave import _dtypes
from stride_weave.dtypes import CompoundDType, DType

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


def _miss(name="float32"):
    with pytest.raises(LookupError) as info:
        DType.from_name(name)
    return info.value


def test_the_miss_exception_is_exported_as_a_lookup_error():
    e = _miss()
    assert type(e) is dtypes.UnknownNameError is _dtypes.UnknownNameError
    assert issubclass(dtypes.UnknownNameError, LookupError)
    assert "UnknownNameError" in dtypes.__all__
    caught = None
    try:
        DType.from_name("Flaot32")
    except dtypes.UnknownNameError as exc:
        caught = exc
    assert caught is not None and "did you mean 'Float32'?" in str(caught)
    copy = pickle.loads(pickle.dumps(e))
    assert type(copy) is dtypes.UnknownNameError and copy.args == e.args


def test_the_miss_exception_is_documented():
    api = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    assert "stride_weave.dtypes.UnknownNameError" in api


def test_the_miss_exception_reads_as_public_in_tracebacks():
    assert dtypes.UnknownNameError.__module__ == "stride_weave.dtypes"
    try:
        DType.from_name("Flaot32")
    except LookupError:
        buf = io.StringIO()
        traceback.print_exc(file=buf)
    assert buf.getvalue().splitlines()[-1].startswith("stride_weave.dtypes.UnknownNameError: ")


@pytest.mark.parametrize("cls, advice", [
    (DType, "DType.from_name('Float32')"),
    (CompoundDType, "subclass"),
])
def test_calling_an_abstract_model_class_says_what_to_do_instead(cls, advice):
    with pytest.raises(TypeError) as info:
        cls("Float32")
    message = str(info.value)
    assert "declare it with abstract=False" not in message
    assert advice in message, message
