"""Requirement: Pickle reconstruction preserves receiving-process identity.

docs/pickling.md; docs/design.md ("Pickling", "Structure format").  Cross-process scenarios run in real child processes that import
tests/descriptors/_child_defs.py, the same module the parent registers its extensions from.
"""
import copy
import json
import os
import pickle
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import _child_defs
from _child_defs import BUILTIN_NAMES, KINDS, MISMATCHED
from support import assert_exited, child_env, registry_unchanged, run_python, unique_name
from support.child import child_report
from stride_weave import _dtypes
from stride_weave.dtypes import BlockScaledDType, DType, Level, SimpleDType, Whole

PROTOCOLS = [0, 1, 2, 3, 4, 5]
HERE = os.path.dirname(os.path.abspath(__file__))
OPAQUE_FIELD = ("opaque_storage", "bool:False")


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def family():
    """One registered extension of every kind (see _child_defs.register)."""
    names = {kind: unique_name(f"Pk_{kind}") for kind in KINDS}
    return names, _child_defs.register(names, "base")


def _builtin(name):
    return getattr(DType, name)


def _ref(d):
    return ("ref", "str:" + d.name, d.structure())


def _get_at(s, path):
    for i in path:
        s = s[i]
    return s


def _replace_at(s, path, new):
    if not path:
        return new
    i = path[0]
    return s[:i] + (_replace_at(s[i], path[1:], new),) + s[i + 1:]


def _category_paths(s, path=()):
    """Index paths of every category structure nested anywhere in s."""
    if type(s) is tuple:
        if s and s[0] == "DTypeCategory":
            yield path
        for i, item in enumerate(s):
            yield from _category_paths(item, path + (i,))


def _field_path(s, field):
    """Index path of the top-level ``(field, value)`` entry of structure s."""
    for i, item in enumerate(s):
        if type(item) is tuple and item and item[0] == field:
            return (i,)
    raise AssertionError(f"structure has no {field!r} field: {s!r}")


def _insert_opaque(cat, index, field=OPAQUE_FIELD):
    assert cat[0] == "DTypeCategory"
    return cat[:index] + (field,) + cat[index:]


def _rebuild(s):
    """An equal structure that shares no object with s (fresh strs and tuples)."""
    if type(s) is tuple:
        return tuple([_rebuild(x) for x in s])
    return "".join(list(s)) + ""


def _to_lists(s):
    if type(s) is tuple:
        return [_to_lists(x) for x in s]
    return s


def _exactly_equal(a, b):
    """Structural equality with exact types (b is a real structure)."""
    if type(b) is str:
        return type(a) is str and a == b
    assert type(b) is tuple
    return (type(a) is tuple and len(a) == len(b)
            and all(_exactly_equal(x, y) for x, y in zip(a, b)))


class _Payload:
    """Pickles as an arbitrary (name, structure) reconstruction payload."""

    def __init__(self, name, structure):
        self.name = name
        self.structure = structure

    def __reduce__(self):
        return (_dtypes._reconstruct, (self.name, self.structure))


def _crafted_pickle(name, structure, protocol=2):
    return pickle.dumps(_Payload(name, structure), protocol=protocol)


def _message_without(exc, *names):
    msg = str(exc)
    for n in names:
        msg = msg.replace(n, "")
    return msg


# --------------------------------------------------------------------------
# Round trips in the same process
# --------------------------------------------------------------------------

@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("name", BUILTIN_NAMES)
def test_builtin_round_trips_to_same_identity(name, protocol):
    d = _builtin(name)
    with registry_unchanged():
        assert pickle.loads(pickle.dumps(d, protocol=protocol)) is d


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("kind", KINDS)
def test_extension_round_trips_to_same_identity(family, kind, protocol):
    _, ext = family
    d = ext[kind]
    with registry_unchanged():
        assert pickle.loads(pickle.dumps(d, protocol=protocol)) is d


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_round_trip_inside_containers_keeps_identity(family, protocol):
    _, ext = family
    items = [DType.Float32, ext["compound"], DType.Float32, ext["subclass"],
             (DType.Any, ext["category"]), {"k": ext["simple"]}]
    loaded = pickle.loads(pickle.dumps(items, protocol=protocol))
    assert loaded[0] is DType.Float32
    assert loaded[1] is ext["compound"]
    assert loaded[2] is DType.Float32
    assert loaded[3] is ext["subclass"]
    assert loaded[4][0] is DType.Any and loaded[4][1] is ext["category"]
    assert loaded[5]["k"] is ext["simple"]


def test_round_trip_of_a_freshly_registered_simple_extension():
    # The documented example shape: SimpleDType(..., bits=16, supertype=Floating).
    d = SimpleDType(unique_name("Float16"), bits=16, supertype=DType.Floating)
    for protocol in PROTOCOLS:
        assert pickle.loads(pickle.dumps(d, protocol=protocol)) is d


# --------------------------------------------------------------------------
# What a pickle records
# --------------------------------------------------------------------------

def _defining_module(d):
    """The module a descriptor's pickle names: its class's module, or (a
    model class called directly) the module of the calling code."""
    cls = type(d)
    if cls.__module__ == "stride_weave._dtypes":
        return "_child_defs"
    return cls.__module__


def _all_descriptors(ext):
    return [_builtin(n) for n in BUILTIN_NAMES] + [ext[k] for k in KINDS]


def _states_records(d):
    """Whether d's pickle states numeric records: d defines a simple dtype
    (itself, or a plane) that is not a built-in."""
    planes = ([d] if d.is_simple() else list(d.simple_types) if d.is_compound()
              else [])
    return any(p.name not in BUILTIN_NAMES for p in planes)


def test_reduce_is_reconstructor_with_name_and_structure(family):
    _, ext = family
    for d in _all_descriptors(ext):
        r = d.__reduce__()
        assert type(r) is tuple and len(r) == 2, (d, r)
        assert r[0] is _dtypes._reconstruct, (d, r)
        # Built-ins: (name, structure); extensions also name the module
        # that defined them (the receiver imports it when the name is
        # unknown there).
        builtin = d.name in BUILTIN_NAMES
        assert type(r[1]) is tuple and len(r[1]) == (1 if builtin else 2), (d, r)
        record = r[1][0]
        assert type(record) is tuple and type(record[0]) is str and record[0] == d.name
        assert r[0](*r[1]) is d
        if not builtin:
            assert type(r[1][1]) is str and r[1][1] == _defining_module(d), (d, r)
        # Protocols 0 and 1 carry the version-1 payload, (name, structure),
        # then the module and the numeric records the record states after
        # its structure (an extension that defines a simple dtype).
        v1 = d.__reduce_ex__(1)[1]
        states = _states_records(d)
        assert len(v1) == (2 if builtin else 4 if states else 3), (d, v1)
        assert v1[:2] == (d.name, d.structure())
        assert v1[2:3] == r[1][1:]
        if states:
            assert v1[3] == record[-1] and type(v1[3]) is tuple, (d, v1)


def test_reduce_ex_agrees_with_reduce_for_every_protocol(family):
    _, ext = family
    for d in _all_descriptors(ext):
        for protocol in PROTOCOLS:
            r = d.__reduce_ex__(protocol)
            assert r[0] is _dtypes._reconstruct
            if protocol >= 2:
                assert r[1] == d.__reduce__()[1]
            else:
                assert r[1][:2] == (d.name, d.structure())


def test_reconstructor_lives_at_permanent_module_path():
    rec = _dtypes._reconstruct
    assert rec.__module__ == "stride_weave._dtypes"
    assert getattr(rec, "__qualname__", rec.__name__) == "_reconstruct"
    import stride_weave._dtypes as mod
    assert mod._reconstruct is rec


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_pickle_refers_to_reconstructor_not_to_the_user_class(family, protocol):
    _, ext = family
    for kind in ("compound", "subclass", "subcategory"):
        data = pickle.dumps(ext[kind], protocol=protocol)
        assert b"stride_weave._dtypes" in data
        assert b"_reconstruct" in data
        # A descriptor definition (its implementation class) is not recorded.
        assert type(ext[kind]).__name__.encode() not in data, (kind, data)


def test_pickling_does_not_rerun_structure_extension():
    calls = []

    class Counting(SimpleDType, abstract=False):
        def structure_extension(self):
            calls.append(1)
            return ("counted",)

    d = Counting(unique_name("Cnt"), bits=8, supertype=DType.Floating)
    assert len(calls) == 1
    for protocol in PROTOCOLS:
        assert pickle.loads(pickle.dumps(d, protocol=protocol)) is d
    assert len(calls) == 1


def test_copy_and_deepcopy_go_through_identity(family):
    _, ext = family
    for d in _all_descriptors(ext):
        assert copy.copy(d) is d
        assert copy.deepcopy(d) is d
        assert copy.deepcopy([d, (d,)])[1][0] is d


# --------------------------------------------------------------------------
# The reconstructor
# --------------------------------------------------------------------------

def test_reconstruct_returns_registered_identity(family):
    _, ext = family
    for d in _all_descriptors(ext):
        with registry_unchanged():
            assert _dtypes._reconstruct(d.name, d.structure()) is d


def test_reconstruct_accepts_equal_structure_sharing_no_objects(family):
    _, ext = family
    for d in _all_descriptors(ext):
        rebuilt = _rebuild(d.structure())
        name = "".join(list(d.name))
        assert _dtypes._reconstruct(name, rebuilt) is d


def test_payload_written_from_documented_format_loads():
    # The structure format is a compatibility promise (design.md, version 1):
    # a payload written straight from the documentation must load.
    any_s = ("DTypeCategory", ("supertype", "none"), ("extension", ()))
    floating_s = ("DTypeCategory", ("supertype", ("ref", "str:Any", any_s)),
                  ("extension", ()))
    float32_s = ("SimpleDType", ("bits", "int:32"),
                 ("supertype", ("ref", "str:Floating", floating_s)),
                 ("extension", ()))
    assert DType.Float32.structure() == float32_s
    for protocol in PROTOCOLS:
        data = _crafted_pickle("Float32", float32_s, protocol)
        assert pickle.loads(data) is DType.Float32
        data = _crafted_pickle("Any", any_s, protocol)
        assert pickle.loads(data) is DType.Any


# --------------------------------------------------------------------------
# Scenario failures: unknown name, mismatched structure
# --------------------------------------------------------------------------

@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_unknown_name_raises_lookup_error(protocol):
    name = unique_name("Unregistered")
    data = _crafted_pickle(name, DType.Float32.structure(), protocol)
    with registry_unchanged():
        with pytest.raises(LookupError):
            pickle.loads(data)
        with pytest.raises(LookupError):
            _dtypes._reconstruct(name, DType.Float32.structure())
    with pytest.raises(LookupError):
        DType.from_name(name)


def test_unknown_name_is_not_registered_by_a_failed_load():
    name = unique_name("Unregistered")
    with pytest.raises(LookupError):
        _dtypes._reconstruct(name, DType.Float32.structure())
    d = SimpleDType(name, bits=32, supertype=DType.Floating)  # still free
    assert _dtypes._reconstruct(name, DType.Float32.structure()) is d


def test_width_mismatch_raises_value_error_naming_place_and_values():
    name = unique_name("Wide")
    d = SimpleDType(name, bits=32, supertype=DType.Floating)
    s = d.structure()
    path = _field_path(s, "bits")
    assert _get_at(s, path) == ("bits", "int:32")
    payload = _replace_at(s, path, ("bits", "int:16"))
    for protocol in PROTOCOLS:
        with registry_unchanged():
            with pytest.raises(ValueError) as info:
                pickle.loads(_crafted_pickle(name, payload, protocol))
        msg = _message_without(info.value, name)
        assert "bits" in msg, msg
        assert "16" in msg and "32" in msg, msg
    assert DType.from_name(name) is d


def test_width_mismatch_other_direction(family):
    names, ext = family
    d = ext["simple"]  # registered with 16 bits
    s = d.structure()
    payload = _replace_at(s, _field_path(s, "bits"), ("bits", "int:32"))
    with pytest.raises(ValueError) as info:
        _dtypes._reconstruct(d.name, payload)
    msg = _message_without(info.value, d.name, *names.values())
    assert "bits" in msg and "16" in msg and "32" in msg, msg


def test_hierarchy_mismatch_raises_value_error_naming_both_supertypes():
    name = unique_name("Hier")
    d = SimpleDType(name, bits=8, supertype=DType.Floating)
    s = d.structure()
    payload = _replace_at(s, _field_path(s, "supertype"),
                          ("supertype", _ref(DType.Integer)))
    with registry_unchanged():
        with pytest.raises(ValueError) as info:
            _dtypes._reconstruct(name, payload)
    msg = _message_without(info.value, name)
    assert "supertype" in msg, msg
    assert "Floating" in msg and "Integer" in msg, msg
    assert DType.from_name(name) is d


def test_extension_mismatch_raises_value_error_naming_both_values():
    class Ext(SimpleDType, abstract=False):
        def structure_extension(self):
            return ("omega",)

    name = unique_name("ExtMismatch")
    d = Ext(name, bits=8, supertype=DType.Floating)
    s = d.structure()
    path = _field_path(s, "extension")
    assert _get_at(s, path) == ("extension", ("str:omega",))
    payload = _replace_at(s, path, ("extension", ("str:alpha",)))
    with pytest.raises(ValueError) as info:
        _dtypes._reconstruct(name, payload)
    msg = _message_without(info.value, name)
    assert "alpha" in msg and "omega" in msg, msg
    assert "extension" in msg, msg


def test_plane_and_rule_mismatches_raise_value_error(family):
    _, ext = family
    d = ext["compound"]
    s = d.structure()
    planes_path = _field_path(s, "simple_types")
    planes = _get_at(s, planes_path)[1]
    other_planes = planes[:-1] + (_ref(DType.Float64),)
    with pytest.raises(ValueError):
        _dtypes._reconstruct(d.name, _replace_at(s, planes_path, ("simple_types", other_planes)))
    with pytest.raises(ValueError):
        _dtypes._reconstruct(d.name, _replace_at(s, planes_path, ("simple_types", planes[:1])))
    rules_path = _field_path(s, "representation_rules")
    other_rule = _child_defs.TagRule(64).structure()
    with pytest.raises(ValueError) as info:
        _dtypes._reconstruct(d.name, _replace_at(s, rules_path, ("representation_rules", (other_rule,))))
    msg = _message_without(info.value, d.name)
    assert "32" in msg and "64" in msg, msg
    with pytest.raises(ValueError):
        _dtypes._reconstruct(d.name, _replace_at(s, rules_path, ("representation_rules", ())))
    assert DType.from_name(d.name) is d


def test_structure_of_another_descriptor_is_a_mismatch():
    pairs = [("Float32", "Float64"), ("Float32", "Floating"), ("Any", "Floating"),
             ("Int8", "E4M3"), ("E2M1", "E4M3"), ("Int32", "Float32")]
    for name, other in pairs:
        assert _builtin(name).structure() != _builtin(other).structure()
        with registry_unchanged():
            with pytest.raises(ValueError):
                _dtypes._reconstruct(name, _builtin(other).structure())


def test_equal_structure_under_the_payload_name_is_accepted():
    # A structure is the representation, not the name: Floating and Integer
    # are both categories directly under Any, so their structures agree and
    # the payload's name decides which identity is returned.
    assert DType.Floating.structure() == DType.Integer.structure()
    assert _dtypes._reconstruct("Floating", DType.Integer.structure()) is DType.Floating
    assert _dtypes._reconstruct("Integer", DType.Floating.structure()) is DType.Integer


def test_mismatch_never_substitutes_the_registered_descriptor(family):
    _, ext = family
    d = ext["subclass"]
    s = d.structure()
    payload = _replace_at(s, _field_path(s, "bits"), ("bits", "int:9"))
    data = _crafted_pickle(d.name, payload)
    with pytest.raises(ValueError):
        pickle.loads(data)
    assert DType.from_name(d.name) is d
    assert d.structure() == s


# --------------------------------------------------------------------------
# Legacy category structure with the removed opaque-storage field
# --------------------------------------------------------------------------

def _legacy_variants(s):
    """Every way of adding the opaque-storage field to one nested category."""
    paths = list(_category_paths(s))
    assert paths, f"no category structure found in {s!r}"
    for path in paths:
        cat = _get_at(s, path)
        for index in (1, 2, len(cat)):
            for field in (OPAQUE_FIELD, ("opaque_storage", "bool:True")):
                yield path, index, _replace_at(s, path, _insert_opaque(cat, index, field))


def _assert_legacy_rejected(d):
    for path, index, payload in _legacy_variants(d.structure()):
        with registry_unchanged():
            with pytest.raises(ValueError) as info:
                _dtypes._reconstruct(d.name, payload)
        assert "opaque" in str(info.value).lower(), (path, index, str(info.value))


def test_legacy_root_category_structure_is_rejected():
    s = DType.Any.structure()
    legacy = ("DTypeCategory", ("supertype", "none"), OPAQUE_FIELD, ("extension", ()))
    assert legacy == _insert_opaque(s, 2)
    for protocol in PROTOCOLS:
        with pytest.raises(ValueError) as info:
            pickle.loads(_crafted_pickle("Any", legacy, protocol))
        assert "opaque" in str(info.value).lower(), str(info.value)
    _assert_legacy_rejected(DType.Any)


@pytest.mark.parametrize("name", ["Floating", "Integer"])
def test_legacy_builtin_category_structure_is_rejected(name):
    _assert_legacy_rejected(_builtin(name))


def test_legacy_category_nested_in_simple_supertype_is_rejected():
    # Float32 -> supertype ref Floating (legacy) ; also Floating -> Any (legacy).
    s = DType.Float32.structure()
    sup = _field_path(s, "supertype")
    floating_path = sup + (1, 2)
    assert _get_at(s, floating_path) == DType.Floating.structure()
    payload = _replace_at(s, floating_path, _insert_opaque(DType.Floating.structure(), 2))
    with pytest.raises(ValueError) as info:
        pickle.loads(_crafted_pickle("Float32", payload))
    assert "opaque" in str(info.value).lower(), str(info.value)
    _assert_legacy_rejected(DType.Float32)


@pytest.mark.parametrize("name", [n for n in BUILTIN_NAMES
                                  if n not in ("Any", "Floating", "Integer")])
def test_legacy_category_nested_in_builtin_simple_is_rejected(name):
    _assert_legacy_rejected(_builtin(name))


@pytest.mark.parametrize("kind", KINDS)
def test_legacy_category_nested_in_extension_is_rejected(family, kind):
    # category, simple (supertype chain), compound (plane -> supertype chain),
    # user subclasses.
    _, ext = family
    _assert_legacy_rejected(ext[kind])


def test_legacy_category_with_storage_rejected_even_for_unknown_field_value():
    s = DType.Floating.structure()
    for value in ("bool:True", "bool:False", "none", "int:1"):
        payload = _insert_opaque(s, 2, ("opaque_storage", value))
        with pytest.raises(ValueError):
            _dtypes._reconstruct("Floating", payload)


# --------------------------------------------------------------------------
# Crafted payloads of the wrong shape or types
# --------------------------------------------------------------------------

def _s32():
    return DType.Float32.structure()


def _with_bits(value):
    s = _s32()
    return _replace_at(s, _field_path(s, "bits"), ("bits", value))


BAD_NAMES = [None, 1, 1.5, b"Float32", bytearray(b"Float32"), ["Float32"],
             ("Float32",), object(), DType.Float32]


@pytest.mark.parametrize("bad_name", BAD_NAMES, ids=lambda v: type(v).__name__)
def test_non_string_name_raises_type_error(bad_name):
    with registry_unchanged():
        with pytest.raises(TypeError):
            _dtypes._reconstruct(bad_name, _s32())
    try:
        data = _crafted_pickle(bad_name, _s32())
    except Exception:
        return  # e.g. object(): cannot be put in a pickle at all
    with registry_unchanged():
        with pytest.raises(TypeError):
            pickle.loads(data)


BAD_STRUCTURES = {
    "none": lambda: None,
    "int": lambda: 32,
    "float": lambda: 32.0,
    "str": lambda: "SimpleDType",
    "bytes": lambda: b"SimpleDType",
    "dict": lambda: {"bits": 32},
    "set": lambda: {"SimpleDType"},
    "object": lambda: object(),
    "descriptor": lambda: DType.Float32,
    "top_level_list": lambda: list(_s32()),
    "lists_everywhere": lambda: _to_lists(_s32()),
    "empty_tuple": lambda: (),
    "contract_only": lambda: ("SimpleDType",),
    "truncated": lambda: _s32()[:-1],
    "extra_field": lambda: _s32() + (("extra", "none"),),
    "duplicated_field": lambda: _s32()[:2] + _s32()[1:],
    "reordered_fields": lambda: (_s32()[0],) + tuple(reversed(_s32()[1:])),
    "contract_renamed": lambda: ("DTypeCategory",) + _s32()[1:],
    "contract_is_subclass_name": lambda: ("MyFloat",) + _s32()[1:],
    "raw_int_leaf": lambda: _with_bits(32),
    "bool_leaf_value": lambda: _with_bits("bool:True"),
    "float_leaf_value": lambda: _with_bits("float:4040000000000000"),
    "untagged_leaf": lambda: _with_bits("32"),
    "padded_int": lambda: _with_bits("int:032"),
    "bytes_leaf": lambda: _with_bits(b"int:32"),
    "none_leaf": lambda: _with_bits(None),
    "tuple_leaf": lambda: _with_bits(("int:32",)),
    "list_field": lambda: _replace_at(_s32(), _field_path(_s32(), "bits"), ["bits", "int:32"]),
    "ref_without_structure": lambda: _replace_at(
        _s32(), _field_path(_s32(), "supertype"), ("supertype", ("ref", "str:Floating"))),
    "ref_to_unknown": lambda: _replace_at(
        _s32(), _field_path(_s32(), "supertype"),
        ("supertype", ("ref", "str:NoSuchCategory", DType.Floating.structure()))),
    "ref_name_untagged": lambda: _replace_at(
        _s32(), _field_path(_s32(), "supertype"),
        ("supertype", ("ref", "Floating", DType.Floating.structure()))),
    "extension_not_tuple": lambda: _replace_at(
        _s32(), _field_path(_s32(), "extension"), ("extension", "none")),
    "self_containing_list": None,  # built in the test
}


@pytest.mark.parametrize("case", sorted(BAD_STRUCTURES))
def test_crafted_structure_of_wrong_shape_raises_cleanly(case):
    if case == "self_containing_list":
        structure = ["SimpleDType"]
        structure.append(structure)
    else:
        structure = BAD_STRUCTURES[case]()
    with registry_unchanged():
        with pytest.raises((TypeError, ValueError)):
            _dtypes._reconstruct("Float32", structure)
    assert DType.from_name("Float32") is DType.Float32


@pytest.mark.parametrize("case", sorted(k for k in BAD_STRUCTURES if k != "self_containing_list"))
def test_crafted_pickle_of_wrong_shape_raises_cleanly(case):
    structure = BAD_STRUCTURES[case]()
    try:
        data = _crafted_pickle("Float32", structure, 2)
    except Exception:
        pytest.skip("payload not picklable")
    with pytest.raises((TypeError, ValueError)):
        pickle.loads(data)


def test_unknown_name_with_junk_structure_raises_cleanly():
    for junk in (None, 1, [], (), ("x",), b"x"):
        with registry_unchanged():
            with pytest.raises((LookupError, TypeError, ValueError)):
                _dtypes._reconstruct(unique_name("Nope"), junk)


def test_wrong_argument_count_raises_type_error():
    rec = _dtypes._reconstruct
    with pytest.raises(TypeError):
        rec()
    with pytest.raises(TypeError):
        rec("Float32")
    with pytest.raises(TypeError, match=r"takes 2 to 4 arguments"):
        rec("Float32", _s32(), None, None, None)
    # The third argument is the optional module hint: a str or None; the
    # fourth the numeric records stated (None: none stated).
    assert rec("Float32", _s32(), None) is DType.Float32
    assert rec("Float32", _s32(), None, None) is DType.Float32
    assert rec("Float32", _s32(), None, ()) is DType.Float32
    with pytest.raises(TypeError, match=r"module of 'Float32' must be a str or None, got int"):
        rec("Float32", _s32(), 5)


# --------------------------------------------------------------------------
# Subclasses of str/tuple in a payload: none of their code may run
# --------------------------------------------------------------------------

_DUNDER_CALLS = []


def _tripwire(name):
    def method(self, *args, **kwargs):
        _DUNDER_CALLS.append(f"{type(self).__name__}.{name}")
        raise AssertionError(f"{type(self).__name__}.{name} must never run")
    method.__name__ = name
    return method


_STR_TRIPS = ("__eq__", "__ne__", "__hash__", "__lt__", "__le__", "__gt__",
              "__ge__", "__len__", "__iter__", "__getitem__", "__str__", "__repr__",
              "__contains__", "__format__")
_TUPLE_TRIPS = ("__eq__", "__ne__", "__hash__", "__lt__", "__le__", "__gt__",
                "__ge__", "__len__", "__iter__", "__getitem__", "__contains__",
                "__repr__")

EvilStr = type("EvilStr", (str,), {n: _tripwire(n) for n in _STR_TRIPS})
EvilTuple = type("EvilTuple", (tuple,), {n: _tripwire(n) for n in _TUPLE_TRIPS})
PlainStrSub = type("PlainStrSub", (str,), {})
PlainTupleSub = type("PlainTupleSub", (tuple,), {})


@pytest.fixture
def tripwires():
    _DUNDER_CALLS.clear()
    yield
    assert _DUNDER_CALLS == [], f"payload code ran: {_DUNDER_CALLS}"


def _map_leaf(s, path, fn):
    return _replace_at(s, path, fn(_get_at(s, path)))


def test_str_subclass_name_runs_no_code(tripwires):
    with registry_unchanged():
        try:
            result = _dtypes._reconstruct(EvilStr("Float32"), _s32())
        except TypeError:
            pass
        else:
            assert result is DType.Float32


def test_unknown_str_subclass_name_runs_no_code(tripwires):
    with registry_unchanged():
        with pytest.raises((LookupError, TypeError)):
            _dtypes._reconstruct(EvilStr(unique_name("Nope")), _s32())


def test_tuple_subclass_structure_runs_no_code(tripwires):
    with pytest.raises((TypeError, ValueError)):
        _dtypes._reconstruct("Float32", EvilTuple(_s32()))


def test_str_subclass_leaf_runs_no_code(tripwires):
    s = _s32()
    bits = _field_path(s, "bits")
    for path in [(0,), bits + (0,), bits + (1,)]:
        payload = _map_leaf(s, path, EvilStr)
        with pytest.raises((TypeError, ValueError)):
            _dtypes._reconstruct("Float32", payload)


def test_tuple_subclass_node_runs_no_code(tripwires):
    s = _s32()
    sup = _field_path(s, "supertype")
    for path in [_field_path(s, "bits"), sup, sup + (1,), sup + (1, 2),
                 _field_path(s, "extension")]:
        payload = _map_leaf(s, path, EvilTuple)
        with pytest.raises((TypeError, ValueError)):
            _dtypes._reconstruct("Float32", payload)


def test_str_subclass_leaf_in_compound_runs_no_code(family, tripwires):
    _, ext = family
    s = ext["compound"].structure()
    rules = _field_path(s, "representation_rules")
    rule = _get_at(s, rules)[1][0]
    assert rule[0] == "RepresentationRule"
    payload = _replace_at(s, rules + (1, 0, 1), EvilStr(rule[1]))
    with pytest.raises((TypeError, ValueError)):
        _dtypes._reconstruct(ext["compound"].name, payload)


def test_plain_subclasses_never_match():
    # Only exact tuple and exact str can match (design.md).
    s = _s32()
    with pytest.raises((TypeError, ValueError)):
        _dtypes._reconstruct("Float32", PlainTupleSub(s))
    with pytest.raises((TypeError, ValueError)):
        _dtypes._reconstruct("Float32", _map_leaf(s, (0,), PlainStrSub))
    with pytest.raises((TypeError, ValueError)):
        _dtypes._reconstruct("Float32", _map_leaf(s, _field_path(s, "bits"), PlainTupleSub))


# --------------------------------------------------------------------------
# Deep nesting (run in a child: a crash must fail this test, not the run)
# --------------------------------------------------------------------------

_DEEP_CHILD = textwrap.dedent(r"""
    import json, pickle, struct, sys
    from stride_weave.dtypes import DType
    from stride_weave._dtypes import _reconstruct

    DEPTH = 100000

    def deep_tuple(leaf):
        t = leaf
        for _ in range(DEPTH):
            t = (t,)
        return t

    def deep_list(leaf):
        t = leaf
        for _ in range(DEPTH):
            t = [t]
        return t

    def deep_pickle(name, leaf):
        # Built opcode by opcode: pickle.dumps itself would recurse.
        def unicode(s):
            b = s.encode()
            return b"X" + struct.pack("<I", len(b)) + b
        return (b"\x80\x02" + b"cstride_weave._dtypes\n_reconstruct\n"
                + unicode(name) + unicode(leaf) + b"\x85" * DEPTH
                + b"\x86" + b"R.")

    s = DType.Float32.structure()
    cases = {
        "deep_tuple": ("Float32", lambda: deep_tuple("str:x")),
        "deep_tuple_of_empty": ("Float32", lambda: deep_tuple(())),
        "deep_list": ("Float32", lambda: deep_list("str:x")),
        "deep_under_real_prefix": ("Float32", lambda: s[:-1] + (("extension", deep_tuple(())),)),
        "deep_in_supertype": ("Any", lambda: ("DTypeCategory", ("supertype", deep_tuple("none")), ("extension", ()))),
        "deep_contract_position": ("Float32", lambda: (deep_tuple("SimpleDType"),) + s[1:]),
        "deep_unknown_name": ("NoSuchName_deep", lambda: deep_tuple("str:x")),
    }
    out = {}
    for key, (name, build) in cases.items():
        try:
            r = _reconstruct(name, build())
            out[key] = "returned " + type(r).__name__
        except BaseException as e:
            out[key] = type(e).__name__
    for key, name in (("pickle_deep", "Float32"), ("pickle_deep_unknown", "NoSuchName_deep")):
        try:
            r = pickle.loads(deep_pickle(name, "str:x"))
            out[key] = "returned " + type(r).__name__
        except BaseException as e:
            out[key] = type(e).__name__
    sys.stdout.write(json.dumps(out))
""")


def test_deeply_nested_payloads_raise_cleanly():
    proc = run_python(["-c", _DEEP_CHILD], timeout=300)
    assert_exited(proc)
    out = json.loads(proc.stdout)
    wrong = {}
    for key, outcome in out.items():
        allowed = {"TypeError", "ValueError"}
        if "unknown" in key:
            allowed = {"LookupError", "TypeError", "ValueError"}
        if outcome not in allowed:
            wrong[key] = outcome
    assert not wrong, f"expected TypeError/ValueError(/LookupError), got {wrong}"


# --------------------------------------------------------------------------
# Fuzzing mutated real structures
# --------------------------------------------------------------------------

_TAGGED = st.sampled_from([
    "str:Any", "str:Floating", "str:Float32", "int:32", "int:16", "int:8",
    "bool:True", "bool:False", "none", "whole", "ref", "DTypeCategory",
    "SimpleDType", "CompoundDType", "RepresentationRule", "supertype", "bits",
    "extension", "simple_types", "representation_rules", "opaque_storage",
    "float:0000000000000000", "float:8000000000000000", "",
])
_LEAVES = st.one_of(
    _TAGGED, st.text(max_size=6), st.integers(), st.floats(), st.none(),
    st.booleans(), st.binary(max_size=4),
    _TAGGED.map(PlainStrSub),
)
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(st.tuples(inner), st.tuples(inner, inner),
                            st.lists(inner, max_size=3),
                            st.lists(inner, max_size=2).map(PlainTupleSub)),
    max_leaves=5,
)


def _tuple_paths(s, path=()):
    """Paths of every node reachable through exact tuples (root included)."""
    yield path
    if type(s) is tuple:
        for i, item in enumerate(s):
            yield from _tuple_paths(item, path + (i,))


def _mutate(data, s):
    paths = list(_tuple_paths(s))
    path = data.draw(st.sampled_from(paths), label="path")
    node = _get_at(s, path)
    ops = ["replace", "wrap", "listify", "subclass"]
    if path:
        ops += ["delete", "insert", "duplicate", "swap"]
    if type(node) is tuple and node:
        ops += ["truncate", "drop_first", "append"]
    op = data.draw(st.sampled_from(ops), label="op")
    if op == "replace":
        return _replace_at(s, path, data.draw(_VALUES, label="value"))
    if op == "wrap":
        return _replace_at(s, path, (node,))
    if op == "listify":
        return _replace_at(s, path, _to_lists(node) if type(node) is tuple else [node])
    if op == "subclass":
        if type(node) is tuple:
            return _replace_at(s, path, PlainTupleSub(node))
        if type(node) is str:
            return _replace_at(s, path, PlainStrSub(node))
        return s
    if op == "truncate":
        k = data.draw(st.integers(0, len(node) - 1), label="keep")
        return _replace_at(s, path, node[:k])
    if op == "drop_first":
        return _replace_at(s, path, node[1:])
    if op == "append":
        return _replace_at(s, path, node + (data.draw(_VALUES, label="extra"),))
    parent_path, i = path[:-1], path[-1]
    parent = _get_at(s, parent_path)
    if op == "delete":
        new = parent[:i] + parent[i + 1:]
    elif op == "insert":
        new = parent[:i] + (data.draw(_VALUES, label="inserted"),) + parent[i:]
    elif op == "duplicate":
        new = parent[:i] + (parent[i],) + parent[i:]
    else:  # swap
        j = (i + 1) % len(parent)
        items = list(parent)
        items[i], items[j] = items[j], items[i]
        new = tuple(items)
    return _replace_at(s, parent_path, new)


@settings(max_examples=400, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_fuzz_mutated_structures_raise_cleanly(family, data):
    _, ext = family
    targets = [_builtin(n) for n in BUILTIN_NAMES] + [ext[k] for k in KINDS]
    d = data.draw(st.sampled_from(targets), label="descriptor")
    original = d.structure()
    mutated = original
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        mutated = _mutate(data, mutated)
    if _exactly_equal(mutated, original):
        assert _dtypes._reconstruct(d.name, mutated) is d
    else:
        with pytest.raises((TypeError, ValueError)):
            _dtypes._reconstruct(d.name, mutated)
    assert DType.from_name(d.name) is d


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_fuzz_names_against_real_structures(family, data):
    _, ext = family
    targets = [_builtin(n) for n in BUILTIN_NAMES] + [ext[k] for k in KINDS]
    d = data.draw(st.sampled_from(targets), label="structure of")
    name = data.draw(st.one_of(st.sampled_from([t.name for t in targets]),
                               st.text(max_size=12)), label="name")
    try:
        registered = DType.from_name(name)
    except LookupError:
        registered = None
    if registered is None:
        with pytest.raises(LookupError):
            _dtypes._reconstruct(name, d.structure())
    elif registered is d:
        assert _dtypes._reconstruct(name, d.structure()) is d
    elif registered.structure() == d.structure():
        assert _dtypes._reconstruct(name, d.structure()) is registered
    else:
        with pytest.raises(ValueError):
            _dtypes._reconstruct(name, d.structure())


# --------------------------------------------------------------------------
# Cross-process: real child processes
# --------------------------------------------------------------------------

_CHILD_CODE = "import _child_defs; _child_defs.child_main()"


@pytest.fixture(scope="module")
def payload_file(family, tmp_path_factory):
    names, ext = family
    payloads = {kind: [pickle.dumps(ext[kind], protocol=p) for p in PROTOCOLS]
                for kind in KINDS}
    for n in BUILTIN_NAMES:
        payloads[n] = [pickle.dumps(_builtin(n), protocol=p) for p in PROTOCOLS]
    path = tmp_path_factory.mktemp("pickles") / "payloads.pickle"
    path.write_bytes(pickle.dumps({"names": names, "payloads": payloads}))
    return path


def _run_child(variant, path):
    # the parent's environment as it is (warning settings included), with
    # this folder on the path for _child_defs
    proc = run_python(["-c", _CHILD_CODE, variant, path], env=child_env(HERE, drop=()))
    assert_exited(proc, what=f"child ({variant})")
    return json.loads(proc.stdout)


def _assert_builtins_identity(results):
    for n in BUILTIN_NAMES:
        assert results[n] == ["identity"] * len(PROTOCOLS), (n, results[n])


def test_child_with_matching_extensions_gets_its_own_identity(payload_file):
    results = _run_child("base", payload_file)
    _assert_builtins_identity(results)
    for kind in KINDS:
        assert results[kind] == ["identity"] * len(PROTOCOLS), (kind, results[kind])


def test_child_without_the_extension_raises_lookup_error(payload_file):
    results = _run_child("none", payload_file)
    _assert_builtins_identity(results)
    for kind in KINDS:
        for outcome in results[kind]:
            assert isinstance(outcome, list) and outcome[0] == "LookupError", (kind, outcome)


@pytest.mark.parametrize("variant", ["width", "hierarchy", "plane", "rule", "extension"])
def test_child_with_mismatched_definition_raises_value_error(payload_file, variant):
    results = _run_child(variant, payload_file)
    _assert_builtins_identity(results)
    for kind in KINDS:
        if kind in MISMATCHED[variant]:
            for outcome in results[kind]:
                assert isinstance(outcome, list) and outcome[0] == "ValueError", (
                    variant, kind, outcome)
        else:
            assert results[kind] == ["identity"] * len(PROTOCOLS), (variant, kind, results[kind])


def test_child_width_mismatch_message_names_both_widths(family, payload_file):
    names, _ = family
    results = _run_child("width", payload_file)
    outcome = results["simple"][0]
    assert outcome[0] == "ValueError"
    msg = outcome[1]
    for n in names.values():
        msg = msg.replace(n, "")
    assert "bits" in msg and "16" in msg and "32" in msg, outcome[1]


# --------------------------------------------------------------------------
# Names and leaves that C code can get wrong
# --------------------------------------------------------------------------

@pytest.mark.parametrize("suffix", ["ü", " 𝔽 x", "a\nb", "\\u0041", "tab\there",
                                    "quote'\"", "\x00mid", "\r\n"],
                         ids=["latin1", "astral", "newline", "backslash-u", "tab",
                              "quotes", "nul", "crlf"])
def test_unusual_names_round_trip_in_every_protocol(suffix):
    d = SimpleDType(unique_name("Odd") + suffix, bits=8, supertype=DType.Floating)
    for protocol in PROTOCOLS:
        assert pickle.loads(pickle.dumps(d, protocol=protocol)) is d, protocol


def test_name_with_embedded_nul_is_not_truncated():
    s = DType.Float32.structure()
    for name in ("Float32\x00", "Float32\x00junk", "\x00Float32"):
        with registry_unchanged():
            with pytest.raises(LookupError):
                _dtypes._reconstruct(name, s)


def test_leaf_with_embedded_nul_is_not_truncated():
    s = DType.Float32.structure()
    for bits in ("int:32\x00", "int:32\x0016", "int:3\x002"):
        with pytest.raises(ValueError):
            _dtypes._reconstruct("Float32", _replace_at(s, _field_path(s, "bits"),
                                                        ("bits", bits)))
    with pytest.raises(ValueError):
        _dtypes._reconstruct("Float32", ("SimpleDType\x00",) + s[1:])


def test_unknown_name_with_lone_surrogate_raises_lookup_error():
    for name in ("\udc80", "Float32\ud800", unique_name("Sur") + "\udfff"):
        with registry_unchanged():
            with pytest.raises(LookupError):
                _dtypes._reconstruct(name, DType.Float32.structure())


def test_leaf_with_lone_surrogate_raises_value_error():
    s = DType.Float32.structure()
    payload = _replace_at(s, _field_path(s, "bits"), ("bits", "int:\udc80"))
    with pytest.raises(ValueError):
        _dtypes._reconstruct("Float32", payload)
    with pytest.raises(ValueError):
        _dtypes._reconstruct("Float32", ("SimpleDType\udc80",) + s[1:])


def test_huge_width_round_trips_and_mismatch_reports_cleanly():
    bits = 10 ** 5000  # beyond the int-to-decimal digit limit
    d = SimpleDType(unique_name("Huge"), bits=bits, supertype=DType.Floating)
    for protocol in PROTOCOLS:
        assert pickle.loads(pickle.dumps(d, protocol=protocol)) is d
    s = d.structure()
    payload = _replace_at(s, _field_path(s, "bits"), ("bits", "int:" + hex(bits + 1)))
    with pytest.raises(ValueError) as info:
        _dtypes._reconstruct(d.name, payload)
    assert "Exceeds the limit" not in str(info.value), str(info.value)[:300]
    assert "bits" in str(info.value)


# --------------------------------------------------------------------------
# N-D blocks: a tuple block in the structure, the record and the pickle
# --------------------------------------------------------------------------

def _nd_format(block=(16, 16), whole=True, prefix="PkND"):
    """A new N-D format on a fresh element (a structure no other test has)."""
    element = SimpleDType(unique_name(prefix + "El"), bits=4, supertype=DType.Floating)
    levels = [Level(DType.E4M3, block)] + ([Level(DType.Float32, Whole)] if whole else [])
    return BlockScaledDType(unique_name(prefix), element=element, levels=levels)


def test_an_nd_record_carries_the_block_as_a_tuple_of_ints():
    d = _nd_format()
    record = d.__reduce__()[1][0]
    e4m3 = DType.E4M3.__reduce__()[1][0]
    float32 = DType.Float32.__reduce__()[1][0]
    # a descriptor's record ends with what it states about numeric records
    # (here: its element has none); inside another record it is cut off
    element = d.element.__reduce__()[1][0][:-1]
    assert record == ((d.name, 4) + element + (2,) + e4m3 + ((16, 16),)
                      + float32 + (None, (), (None,)))
    block = record[record.index((16, 16))]
    assert type(block) is tuple and all(type(b) is int for b in block)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_nd_formats_round_trip_to_their_identity(protocol):
    for d in (_nd_format(), _nd_format((128, 128), whole=False), _nd_format((2, 3, 4))):
        assert pickle.loads(pickle.dumps(d, protocol)) is d


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(block=st.lists(st.one_of(st.integers(2, 512), st.integers(2, 2 ** 80)),
                      min_size=2, max_size=5).map(tuple),
       whole=st.booleans(), protocol=st.sampled_from(PROTOCOLS))
def test_property_random_nd_blocks_round_trip_structure_and_identity(block, whole, protocol):
    """For any tuple block: the structure records it as int leaves, the
    pickle loads as the same descriptor, and a version-1 payload of its
    structure, rebuilt from fresh objects, loads too."""
    d = _nd_format(block, whole)
    assert d.structure()[2][1][0][2] == ("block", tuple(
        f"int:{b}" if b < 2 ** 63 else f"int:{hex(b)}" for b in block))
    assert pickle.loads(pickle.dumps(d, protocol)) is d
    assert _dtypes._reconstruct(d.name, _rebuild(d.structure())) is d
    assert pickle.loads(_crafted_pickle(d.name, _rebuild(d.structure()), protocol)) is d


def _with_block(record, old, new):
    i = record.index(old)
    return record[:i] + (new,) + record[i + 1:]


@pytest.mark.parametrize("sent, described", [
    (16, "16 (int)"),
    (256, "256 (int)"),
    ((16, 32), "(16, 32) (tuple)"),
    ((32, 16), "(32, 16) (tuple)"),
    ((16, 16, 2), "(16, 16, 2) (tuple)"),
    ((16,), "(16,) (tuple)"),
    (None, "Whole"),
])
def test_an_nd_block_mismatch_names_the_path_and_both_values(sent, described):
    d = _nd_format()
    record = d.__reduce__()[1][0]
    expected = (f"cannot unpickle descriptor {d.name!r}: the pickled structure differs "
                f"from the one registered in this process at "
                f"BlockScaledDType.levels[0].Level.block: registered (16, 16) (tuple), "
                f"pickle has {described}")
    with registry_unchanged():
        with pytest.raises(ValueError) as new:
            _dtypes._reconstruct(_with_block(record, (16, 16), sent))
    assert str(new.value) == expected
    # the version-1 form of the same payload says the same
    s = d.structure()
    leaf = "whole" if sent is None else (
        f"int:{sent}" if type(sent) is int else tuple(f"int:{b}" for b in sent))
    payload = _replace_at(s, (2, 1, 0, 2), ("block", leaf))
    with registry_unchanged():
        with pytest.raises(ValueError) as old:
            _dtypes._reconstruct(d.name, payload)
    assert str(old.value) == expected


def test_a_tuple_block_sent_for_an_int_block_is_named():
    record = DType.NVFP4.__reduce__()[1][0]
    with registry_unchanged():
        with pytest.raises(ValueError) as info:
            _dtypes._reconstruct(_with_block(record, 16, (16, 16)))
    assert str(info.value).endswith(
        "at BlockScaledDType.levels[0].Level.block: registered 16 (int), "
        "pickle has (16, 16) (tuple)")


@pytest.mark.parametrize("sent", [
    ("16", 16), (16, 16.0), (True, 16), ((16,), 16), [16, 16], (16, None), 16.0, "16",
], ids=["str-entry", "float-entry", "bool-entry", "nested", "list", "none-entry",
        "float", "str"])
def test_a_malformed_block_in_a_record_is_a_value_error(sent):
    d = _nd_format()
    record = d.__reduce__()[1][0]
    with registry_unchanged():
        with pytest.raises(ValueError) as info:
            _dtypes._reconstruct(_with_block(record, (16, 16), sent))
    assert str(info.value) == (
        f"cannot unpickle descriptor {d.name!r}: malformed pickle record: expected an "
        f"int, None or tuple of ints block, got {type(sent).__name__}")


def test_a_child_with_the_same_nd_format_loads_its_own_identity_and_another_block_is_named():
    """Across processes: the receiver's own registration is the identity; a
    receiver whose format has another block refuses with the path."""
    element = SimpleDType(unique_name("PkNDxEl"), bits=4, supertype=DType.Floating)
    name = unique_name("PkNDx")
    d = BlockScaledDType(name, element=element,
                         levels=[Level(DType.E4M3, (16, 16)), Level(DType.Float32, Whole)])
    data = {p: pickle.dumps(d, p).hex() for p in PROTOCOLS}
    code = textwrap.dedent("""
        import json, pickle, sys
        from stride_weave.dtypes import BlockScaledDType, DType, Level, SimpleDType, Whole
        element_name, name, block, data = json.loads(sys.argv[1])
        element = SimpleDType(element_name, bits=4, supertype=DType.Floating)
        d = BlockScaledDType(name, element=element, levels=[
            Level(DType.E4M3, tuple(block) if type(block) is list else block),
            Level(DType.Float32, Whole)])
        out = {}
        for p, payload in data.items():
            try:
                out[p] = "identity" if pickle.loads(bytes.fromhex(payload)) is d else "other"
            except Exception as e:
                out[p] = [type(e).__name__, str(e)]
        print(json.dumps(out))
    """)
    same = child_report(code, json.dumps([element.name, name, [16, 16], data]))
    assert same == {str(p): "identity" for p in PROTOCOLS}
    other = child_report(code, json.dumps([element.name, name, 256, data]))
    for p in PROTOCOLS:
        kind, message = other[str(p)]
        assert kind == "ValueError"
        assert message.endswith("at BlockScaledDType.levels[0].Level.block: registered "
                                "256 (int), pickle has (16, 16) (tuple)"), message
