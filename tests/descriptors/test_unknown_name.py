"""A from_name miss: an UnknownNameError (a LookupError) whose message is
formatted when first read, from the registry as it was at the miss."""
import io
import pickle
import traceback

import pytest

from stride_weave import _dtypes
from stride_weave.dtypes import DType, SimpleDType
from support import unique_name


def miss(name, cls=DType):
    with pytest.raises(LookupError) as info:
        cls.from_name(name)
    return info.value


def test_a_miss_is_a_lookup_error_exported_by_the_public_module():
    e = miss("float32")
    assert type(e) is _dtypes.UnknownNameError
    assert isinstance(e, LookupError) and not isinstance(e, KeyError)
    assert __import__("stride_weave.dtypes").dtypes.UnknownNameError is _dtypes.UnknownNameError


@pytest.mark.parametrize("read", [
    lambda e: e.args[0], str, lambda e: repr(e).split("(", 1)[1][1:-2],
    lambda e: pickle.loads(pickle.dumps(e)).args[0],
    lambda e: traceback.format_exception_only(type(e), e)[-1].split(": ", 1)[1].rstrip("\n"),
])
def test_every_read_gives_the_full_message(read):
    expected = ("no descriptor is registered under the name 'float32'; "
                "did you mean 'Float32'?")
    assert read(miss("float32")) == expected
    assert read(miss("float32", SimpleDType)) == expected


def test_a_printed_traceback_has_the_message():
    try:
        DType.from_name("Flaot32")
    except LookupError:
        buf = io.StringIO()
        traceback.print_exc(file=buf)
    assert buf.getvalue().rstrip().endswith(
        "UnknownNameError: no descriptor is registered under the name "
        "'Flaot32'; did you mean 'Float32'?")


def test_the_message_reflects_the_registry_at_the_miss():
    name = unique_name("LateName")
    query = name.lower()
    formatted_then = str(miss(query))     # read before the registration
    unread = miss(query)                  # read after it
    SimpleDType(name, bits=8, supertype=DType.Integer)
    # the miss reads as if it had been formatted when it happened: the
    # name registered since is not among its suggestions
    assert str(unread) == formatted_then
    assert repr(name) not in formatted_then
    # a miss after the registration suggests it (a case-insensitive match)
    assert str(miss(query)) == (
        f"no descriptor is registered under the name {query!r}; "
        f"did you mean {name!r}?")


def test_a_name_registered_after_its_own_miss_is_never_suggested_to_itself():
    name = unique_name("Itself")
    e = miss(name)
    SimpleDType(name, bits=8, supertype=DType.Integer)
    message = str(e)
    assert message.startswith(f"no descriptor is registered under the name {name!r}")
    assert repr(name) not in message.partition(";")[2]
    assert DType.from_name(name).name == name


def test_kind_mismatch_is_still_a_plain_lookup_error():
    with pytest.raises(LookupError) as info:
        SimpleDType.from_name("Floating")
    assert type(info.value) is LookupError
