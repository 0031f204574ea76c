"""Requirement: Every dtype has one registered descriptor identity.

Constructing a concrete descriptor atomically registers it under its name; the
name is a non-empty ``str`` unique within the process; a failed construction
publishes nothing; descriptors compare and hash by identity; ``name`` and
``value`` return the registered string.
"""
import pickle

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support import refused, registry_unchanged, unique_name
from stride_weave.dtypes import DType, DTypeCategory, SimpleDType


def _make_simple(name):
    return SimpleDType(name, bits=16, supertype=DType.Floating)


def _make_category(name):
    return DTypeCategory(name, supertype=DType.Any)


class _ConcreteSimple(SimpleDType, abstract=False):
    pass


class _ConcreteCategory(DTypeCategory, abstract=False):
    pass


def _make_subclass_simple(name):
    return _ConcreteSimple(name, bits=16, supertype=DType.Floating)


def _make_subclass_category(name):
    return _ConcreteCategory(name, supertype=DType.Any)


MAKERS = {
    "SimpleDType": _make_simple,
    "DTypeCategory": _make_category,
    "SimpleDType-subclass": _make_subclass_simple,
    "DTypeCategory-subclass": _make_subclass_category,
}


# --------------------------------------------------------------------------
# Scenario: Register a descriptor
# --------------------------------------------------------------------------

@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_register_a_descriptor(kind):
    """Scenario: Register a descriptor.

    The returned object is the sole descriptor registered under that name and
    its name and value properties return the supplied string.
    """
    name = unique_name("Reg")
    before = DType.registered()
    d = MAKERS[kind](name)
    after = DType.registered()

    assert DType.from_name(name) is d
    assert after[: len(before)] == before
    assert after[len(before):] == (d,)
    assert [x for x in after if x.name == name] == [d]
    assert d.name == name
    assert type(d.name) is str
    assert d.value == name
    assert type(d.value) is str


@pytest.mark.parametrize(
    "name",
    [
        "x",
        " ",
        "with space",
        "unicode-\u00e9\u4e2d\U0001f600",
        "nul\x00inside",
        "lone-surrogate-\ud800",
        "str:looks-encoded",
        "none",
        "whole",
        "L" * 10_000,
    ],
    ids=["one-char", "space", "with-space", "unicode", "nul", "surrogate",
         "tag-prefix", "none-word", "whole-word", "long"],
)
def test_register_accepts_any_nonempty_string(name):
    """Scenario: Register a descriptor -- any non-empty str is a valid name."""
    name = name + unique_name("_")
    d = _make_simple(name)
    assert DType.from_name(name) is d
    assert d.name == name
    assert d.value == name


# --------------------------------------------------------------------------
# Scenario: Reject a duplicate name atomically
# --------------------------------------------------------------------------

@pytest.mark.parametrize("first", sorted(MAKERS))
@pytest.mark.parametrize("second", sorted(MAKERS))
def test_reject_a_duplicate_name_atomically(first, second):
    """Scenario: Reject a duplicate name atomically.

    Construction fails with ValueError and the original descriptor remains the
    registry identity for that name (whatever the two kinds are).
    """
    name = unique_name("Dup")
    original = MAKERS[first](name)
    with registry_unchanged():
        with refused(ValueError, match=name):
            MAKERS[second](name)
    assert DType.from_name(name) is original
    assert original.name == name


@pytest.mark.parametrize("builtin", ["Any", "Float32", "Integer", "Bool", "E2M1"])
def test_reject_a_duplicate_of_a_builtin_name(builtin):
    """Scenario: Reject a duplicate name atomically -- built-in names are taken."""
    original = DType.from_name(builtin)
    with registry_unchanged():
        with refused(ValueError, match=builtin):
            _make_simple(builtin)
        with refused(ValueError, match=builtin):
            _make_category(builtin)
    assert DType.from_name(builtin) is original
    assert getattr(DType, builtin) is original


# --------------------------------------------------------------------------
# Invalid names
# --------------------------------------------------------------------------

@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_empty_name_is_value_error(kind):
    """An empty name fails with ValueError naming the argument; nothing registered."""
    with registry_unchanged():
        with refused(ValueError, match="name"):
            MAKERS[kind]("")


@pytest.mark.parametrize(
    "bad",
    [None, 1, 1.5, b"Float32", bytearray(b"x"), ["x"], ("x",), object(), True],
    ids=["None", "int", "float", "bytes", "bytearray", "list", "tuple",
         "object", "bool"],
)
@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_non_str_name_is_value_error(kind, bad):
    """A name that is not a string fails with ValueError naming the argument."""
    with registry_unchanged():
        with refused(ValueError, match="name") as info:
            MAKERS[kind](bad)
    # The message says what was given (its type or value).
    msg = str(info.value)
    assert type(bad).__name__ in msg or repr(bad) in msg, msg


def test_descriptor_as_name_is_value_error():
    """A descriptor is not a name, even though it has a name."""
    with registry_unchanged():
        with refused(ValueError, match="name"):
            _make_simple(DType.Float32)


# --------------------------------------------------------------------------
# str-subclass names
# --------------------------------------------------------------------------

def _recording_str_class(calls):
    class RecordingStr(str):
        def __hash__(self):
            calls.append("__hash__")
            return 0

        def __eq__(self, other):
            calls.append("__eq__")
            return True

        def __ne__(self, other):
            calls.append("__ne__")
            return False

        def __str__(self):
            calls.append("__str__")
            return "WRONG"

        def __repr__(self):
            calls.append("__repr__")
            return "'WRONG'"

        def __len__(self):
            calls.append("__len__")
            return 0

        def __format__(self, spec):
            calls.append("__format__")
            return "WRONG"

    return RecordingStr


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_str_subclass_name_is_normalized_to_exact_str(kind):
    """A str-subclass name is copied to an exact str; its dunders never run."""
    calls = []
    RecordingStr = _recording_str_class(calls)
    raw = unique_name("StrSub")
    d = MAKERS[kind](RecordingStr(raw))
    assert calls == []
    assert type(d.name) is str
    assert type(d.value) is str
    assert str.__eq__(d.name, raw)
    assert str.__eq__(d.value, raw)
    assert DType.from_name(raw) is d
    assert calls == []


def test_str_subclass_duplicate_name_rejected_without_running_dunders():
    """A str-subclass duplicate is detected by content, not by its dunders."""
    calls = []
    RecordingStr = _recording_str_class(calls)
    name = unique_name("StrSubDup")
    original = _make_simple(name)
    with registry_unchanged():
        with refused(ValueError):
            _make_simple(RecordingStr(name))
    assert calls == []
    assert DType.from_name(name) is original


def test_str_subclass_lying_about_equality_does_not_collide():
    """A str subclass whose __eq__/__hash__ lie still registers its own content."""
    calls = []
    RecordingStr = _recording_str_class(calls)
    existing = _make_simple(unique_name("Existing"))
    raw = unique_name("Distinct")
    d = _make_simple(RecordingStr(raw))
    assert calls == []
    assert DType.from_name(raw) is d
    assert DType.from_name(existing.name) is existing


def test_empty_str_subclass_name_is_value_error():
    """An empty str-subclass name is still empty: ValueError, nothing registered."""
    calls = []
    RecordingStr = _recording_str_class(calls)
    with registry_unchanged():
        with refused(ValueError, match="name"):
            _make_simple(RecordingStr(""))
    assert calls == []


def test_str_subclass_with_nonempty_content_but_len_zero_registers():
    """Emptiness is judged on the string content, not on an overridden __len__."""
    calls = []
    RecordingStr = _recording_str_class(calls)
    raw = unique_name("LenZero")
    d = _make_simple(RecordingStr(raw))
    assert str.__eq__(d.name, raw)
    assert calls == []


# --------------------------------------------------------------------------
# Identity
# --------------------------------------------------------------------------

def test_descriptors_compare_by_identity():
    """Descriptors compare by object identity."""
    a = _make_simple(unique_name("IdA"))
    b = _make_simple(unique_name("IdB"))
    assert a == a
    assert not (a != a)
    assert a != b
    assert not (a == b)
    assert a == DType.from_name(a.name)
    assert a != a.name
    assert not (a == a.name)
    assert DType.Float32 == DType.Float32
    assert DType.Float32 != DType.Float64
    assert DType.Float32 != "Float32"
    assert DType.Float32 != 32
    assert DType.Any != None  # noqa: E711


def test_descriptors_hash_by_identity():
    """Descriptors hash by object identity."""
    a = _make_simple(unique_name("HashA"))
    assert hash(a) == object.__hash__(a)
    assert hash(DType.Float32) == object.__hash__(DType.Float32)
    assert hash(DType.Any) == object.__hash__(DType.Any)
    table = {a: 1, DType.Float32: 2, DType.Any: 3}
    assert table[DType.from_name(a.name)] == 1
    assert table[DType.from_name("Float32")] == 2
    assert len({DType.Float32, DType.from_name("Float32")}) == 1


@pytest.mark.parametrize("op", ["<", "<=", ">", ">="])
def test_ordering_comparisons_are_not_supported(op):
    """Ordering comparisons are not supported (TypeError)."""
    a, b = DType.Float32, DType.Float64
    with refused(TypeError):
        eval(f"a {op} b")
    with refused(TypeError):
        eval(f"a {op} a")


def test_sorting_descriptors_is_type_error():
    with refused(TypeError):
        sorted([DType.Float64, DType.Float32])


# --------------------------------------------------------------------------
# Property: any valid name / width / supertype registers and round-trips
# --------------------------------------------------------------------------

_CATEGORY_POOL = []


def _category_pool():
    if not _CATEGORY_POOL:
        a = DTypeCategory(unique_name("PoolA"), supertype=DType.Floating)
        b = DTypeCategory(unique_name("PoolB"), supertype=a)
        c = DTypeCategory(unique_name("PoolC"))
        _CATEGORY_POOL.extend([DType.Any, DType.Floating, DType.Integer, a, b, c])
    return _CATEGORY_POOL


@settings(max_examples=75, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.text(max_size=30),
    bits=st.one_of(st.integers(min_value=1, max_value=256),
                   st.integers(min_value=1, max_value=2**200)),
    supertype_index=st.integers(min_value=0, max_value=5),
    protocol=st.integers(min_value=0, max_value=pickle.HIGHEST_PROTOCOL),
)
def test_property_any_valid_simple_registers_and_round_trips(
        text, bits, supertype_index, protocol):
    """Any valid name/width/supertype registers, is discoverable, and
    round-trips through pickle to the same identity."""
    supertype = _category_pool()[supertype_index]
    name = text + unique_name("_P")
    before = DType.registered()
    d = SimpleDType(name, bits=bits, supertype=supertype)
    after = DType.registered()
    assert after == before + (d,)
    assert d in SimpleDType.registered()
    assert DType.from_name(name) is d
    assert SimpleDType.from_name(name) is d
    assert d.name == name and d.value == name
    assert d.bits == bits and type(d.bits) is int
    assert d.supertype is supertype
    assert pickle.loads(pickle.dumps(d, protocol=protocol)) is d


@settings(max_examples=50, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.text(max_size=30),
    supertype_index=st.integers(min_value=-1, max_value=5),
    protocol=st.integers(min_value=0, max_value=pickle.HIGHEST_PROTOCOL),
)
def test_property_any_valid_category_registers_and_round_trips(
        text, supertype_index, protocol):
    """Any valid category name/supertype registers, is discoverable, and
    round-trips through pickle to the same identity."""
    supertype = None if supertype_index < 0 else _category_pool()[supertype_index]
    name = text + unique_name("_PC")
    before = DType.registered()
    c = DTypeCategory(name, supertype=supertype)
    assert DType.registered() == before + (c,)
    assert c in DTypeCategory.registered()
    assert DTypeCategory.from_name(name) is c
    assert c.supertype is supertype
    assert pickle.loads(pickle.dumps(c, protocol=protocol)) is c
