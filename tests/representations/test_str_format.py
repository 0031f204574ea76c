"""str() and format() of descriptors, and the suggestions of a lookup miss.

str(d) is the registered name and format(d, spec) formats that name like a
str; repr(d) stays the most-derived class name with the name, made once for
a registered descriptor.  A name that
is not registered is a LookupError that suggests close registered names.
"""
import ast
import textwrap

import pytest

from support import assert_exited, refused, run_python, unique_name
from stride_weave.dtypes import (
    BlockScaledDType,
    CompoundDType,
    DType,
    DTypeCategory,
    Level,
    SimpleDType,
)


class MyFloat(SimpleDType, abstract=False):
    pass


BUILTINS = [d for d in DType.registered() if getattr(DType, d.name, None) is d]


@pytest.mark.parametrize("d", BUILTINS, ids=lambda d: d.name)
def test_str_of_every_builtin_is_its_name(d):
    assert str(d) == d.name
    assert type(str(d)) is str
    assert f"{d}" == d.name
    assert "%s" % (d,) == d.name


def test_str_and_format_of_extensions():
    cat = DTypeCategory(unique_name("StrCat"), supertype=DType.Any)
    mine = MyFloat(unique_name("StrMine"), bits=16, supertype=DType.Floating)
    mx = BlockScaledDType(unique_name("StrMX"), element=mine,
                          levels=[Level(DType.E8M0, 7)])
    for d in (cat, mine, mx):
        assert str(d) == d.name
        assert f"[{d:>40}]" == f"[{d.name:>40}]"
    assert repr(mine) == f"MyFloat({mine.name!r})"


@pytest.mark.parametrize("spec", ["", ">10", "<10", "^12", "*^12", "s", ".3", "10.4s"])
def test_format_is_the_name_formatted_as_a_str(spec):
    assert format(DType.Float32, spec) == format("Float32", spec)


def test_repr_unchanged():
    assert repr(DType.Float32) == "SimpleDType('Float32')"
    assert repr(DType.Any) == "DTypeCategory('Any')"
    assert repr(DType.MXFP4) == "BlockScaledDType('MXFP4')"


def test_repr_of_a_registered_descriptor_is_made_once():
    # Its class and name are fixed at registration: every repr() returns
    # the one string made the first time.
    d = MyFloat(unique_name("ReprOnce"), bits=8, supertype=DType.Floating)
    first = repr(d)
    assert first == f"MyFloat({d.name!r})"
    assert repr(d) is first and repr(DType.NVFP4) is repr(DType.NVFP4)


def test_repr_of_an_unfinished_descriptor_says_so_each_time():
    # Only a finished descriptor's repr is kept: during construction it
    # reads as unfinished, and as itself once registered.
    seen = []

    class Watched(SimpleDType, abstract=False):
        def __init__(self, name):
            super().__init__(name, bits=8, supertype=DType.Floating)
            seen.append(repr(self))

    name = unique_name("ReprUnfinished")
    d = Watched(name)
    assert seen == [f"<unfinished Watched({name!r})>"]
    assert repr(d) == f"Watched({name!r})"


@pytest.mark.parametrize("spec", ["d", "x", ".2f", "=10"])
def test_format_rejects_what_str_rejects(spec):
    with pytest.raises(ValueError) as expected:
        format("Float32", spec)
    with pytest.raises(ValueError) as got:
        format(DType.Float32, spec)
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("spec", [None, 10, b">10"])
def test_format_spec_must_be_a_str(spec):
    with pytest.raises(TypeError, match=r"format_spec must be a str, got "):
        DType.Float32.__format__(spec)


def test_unfinished_or_rejected_descriptor_str_is_its_repr():
    """A descriptor that never finished construction reads as its repr
    (which says rejected/unfinished), in str() and format() alike."""
    seen = []

    class Rejected(SimpleDType, abstract=False):
        def __init__(self, name):
            seen.append(str(self))
            super().__init__(name, bits=8, supertype=DType.Floating)
            seen.append(self)
            raise RuntimeError("rejected on purpose")

    name = unique_name("StrRejected")
    with refused(RuntimeError):
        Rejected(name)
    before_init, d = seen
    assert before_init == "<uninitialized Rejected>"
    assert str(d) == repr(d) == f"<rejected Rejected({name!r})>"
    assert format(d, ">60") == format(repr(d), ">60")
    with pytest.raises(ValueError, match="rejected"):
        d.name


@pytest.mark.parametrize("member", ["__str__", "__format__"])
@pytest.mark.parametrize("base", [SimpleDType, DTypeCategory, CompoundDType])
def test_str_and_format_are_owned_by_the_model(base, member):
    with pytest.raises(TypeError, match=f"'{member}'.*owned by the descriptor model"):
        type(base)("Custom", (base,), {member: lambda self, *a: "x"})


# ---- lookup misses -----------------------------------------------------------


@pytest.mark.parametrize("query, suggested", [
    ("float32", "'Float32'"),
    ("FLOAT32", "'Float32'"),
    ("Flaot32", "'Float32'"),
    ("int8", "'Int8'"),
    ("mxfp4", "'MXFP4'"),
])
def test_miss_suggests_close_names(query, suggested):
    with refused(LookupError) as info:
        DType.from_name(query)
    message = str(info.value.args[0])
    assert message.startswith(
        f"no descriptor is registered under the name {query!r}; did you mean ")
    assert suggested in message


def test_case_insensitive_match_comes_first():
    # 'float64' is as close to Float32 as to Float64 by edit distance; the
    # case-insensitive match is the one suggested.
    with refused(LookupError) as info:
        DType.from_name("float64")
    assert info.value.args[0].endswith("did you mean 'Float64'?")


def test_miss_with_nothing_close_has_no_suggestion():
    with refused(LookupError) as info:
        DType.from_name("zzzzzzzzzzzz")
    assert info.value.args[0] == (
        "no descriptor is registered under the name 'zzzzzzzzzzzz'")


def test_miss_suggests_extensions_too():
    name = unique_name("SuggestMe")
    d = SimpleDType(name, bits=8, supertype=DType.Integer)
    with refused(LookupError) as info:
        DType.from_name(name.lower())
    assert info.value.args[0].endswith(f"did you mean {d.name!r}?")


@pytest.mark.parametrize("query", [
    "\udcff" * 5,             # lone surrogates
    "x" * 100_000,            # far longer than any name
    "\x00Float32",
    "Float32" * 30,
    "",
])
def test_hostile_misses_are_plain_lookup_errors(query):
    with refused(LookupError) as info:
        DType.from_name(query)
    assert info.value.args[0].startswith(
        f"no descriptor is registered under the name {query!r}")


def test_str_subclass_query_is_looked_up_by_value():
    class Sneaky(str):
        def casefold(self):
            raise AssertionError("user code ran")

        def __hash__(self):
            raise AssertionError("user code ran")

    with refused(LookupError) as info:
        DType.from_name(Sneaky("float32"))
    assert info.value.args[0].endswith("did you mean 'Float32'?")


def test_kind_mismatch_message_unchanged():
    with refused(LookupError, match=r"registered to SimpleDType\('Float32'\)"):
        DTypeCategory.from_name("Float32")


def test_suggestions_on_a_large_registry_are_bounded():
    """On a registry larger than the candidate bound, the first 256 and the
    latest 4096 registered names are candidates; the names registered in
    between are not searched (a miss stays cheap however many there are)."""
    code = textwrap.dedent('''
        from stride_weave.dtypes import DType, SimpleDType
        builtins = len(DType.registered())
        for i in range(6000):
            SimpleDType(f"Big{i:05d}", bits=8, supertype=DType.Integer)
        def miss(name):
            try:
                DType.from_name(name)
            except LookupError as e:
                return e.args[0]
        first = 256 - builtins        # the last of the first 256 names
        skipped = 1000                # in the middle: not a candidate
        latest = 5999
        print(repr(miss(f"big{first - 1:05d}")))
        print(repr(miss(f"big{skipped:05d}")))
        print(repr(miss(f"big{latest:05d}")))
    ''')
    proc = run_python(["-c", code])
    assert_exited(proc)
    head, middle, tail = (ast.literal_eval(line) for line in proc.stdout.splitlines())
    builtins = len(BUILTINS)
    assert head.endswith(f"did you mean 'Big{256 - builtins - 1:05d}'?"), head
    assert "'Big01000'" not in middle, middle
    assert tail.endswith("did you mean 'Big05999'?"), tail
