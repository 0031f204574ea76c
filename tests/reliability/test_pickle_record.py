"""The pickle record (structure format version 2): what protocol 2 and
later carry, that it stands for exactly the version-1 structure, and that
an untrusted record is compared without running its code.

A record is flat: (name, kind, fields..., extension), a referenced
descriptor's record written in place, lists as a count and their items.
"""
import math
import pickle
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stride_weave import _dtypes
from stride_weave.dtypes import DType, DTypeCategory, SimpleDType, Whole
from support import registry_unchanged, unique_name
from support.child import child_report
from support.defs import ExtendedSimple, register_every_kind

from _fuzz_oracle import HostileFloat, HostileInt, HostileStr, HostileTuple, armed

PROTOCOLS = range(pickle.HIGHEST_PROTOCOL + 1)


@pytest.fixture(scope="module")
def every_kind():
    return register_every_kind(lambda prefix: unique_name("Rec" + prefix))


def _record(d):
    return d.__reduce__()[1][0]


def _load(record, *module):
    with registry_unchanged():
        return _dtypes._reconstruct(record, *module)


def test_every_kind_round_trips_through_every_protocol(every_kind):
    for d in list(every_kind.values()) + [DType.Float32, DType.NVFP4, DType.Any]:
        for protocol in PROTOCOLS:
            assert pickle.loads(pickle.dumps(d, protocol=protocol)) is d, (d, protocol)
        assert _load(*d.__reduce__()[1]) is d


def test_the_record_spells_no_labels_and_is_smaller_than_version_1(every_kind):
    for d in list(every_kind.values()) + [DType.Float32, DType.NVFP4]:
        v2 = pickle.dumps(d, protocol=2)
        v1 = pickle.dumps(d.__reduce_ex__(1)[1], protocol=2)
        assert b"DTypeCategory" not in v2 and b"extension" not in v2
        assert len(v2) < len(v1), (d, len(v2), len(v1))


def test_float32_record_is_positional():
    assert _record(DType.Float32) == (
        "Float32", 2, 32, "Floating", 1, "Any", 1, None, (), (), ())


def test_block_scaled_record_leaves_out_the_rules_it_derives():
    assert _record(DType.NVFP4) == (
        "NVFP4", 4,
        "E2M1", 2, 4, "Floating", 1, "Any", 1, None, (), (), (),
        2,
        "E4M3", 2, 8, "Floating", 1, "Any", 1, None, (), (), (), 16,
        "Float32", 2, 32, "Floating", 1, "Any", 1, None, (), (), (), None,
        ())


def _mutations(record):
    """Records that differ from `record` in one well-typed item."""
    for i, item in enumerate(record):
        if i == 0:
            continue
        if type(item) is int:
            yield record[:i] + (item + 1,) + record[i + 1:]
        elif type(item) is str:
            yield record[:i] + (item + "x",) + record[i + 1:]


@pytest.mark.parametrize("kind", ["simple", "category", "compound", "block_scaled",
                                  "extended_simple", "extended_category"])
def test_every_one_item_change_is_refused_with_a_value_error(every_kind, kind):
    d = every_kind[kind]
    for mutated in _mutations(_record(d)):
        with registry_unchanged():
            with pytest.raises((ValueError, LookupError)):
                _dtypes._reconstruct(mutated)


def test_a_difference_is_named_as_for_a_version_1_pickle():
    f = DType.Float32
    v1 = f.structure()
    bits16 = (v1[0], ("bits", "int:16")) + v1[2:]
    with pytest.raises(ValueError) as old:
        _dtypes._reconstruct("Float32", bits16)
    r = _record(f)
    with pytest.raises(ValueError) as new:
        _load(r[:2] + (16,) + r[3:])
    assert str(new.value) == str(old.value)
    assert "SimpleDType.bits: registered 32 (int), pickle has 16 (int)" in str(new.value)
    nv = _record(DType.NVFP4)
    i = nv.index(16)
    with pytest.raises(ValueError, match=r"levels\[0\]\.Level\.block: registered 16 \(int\), "
                                         r"pickle has 8 \(int\)"):
        _load(nv[:i] + (8,) + nv[i + 1:])


@pytest.mark.parametrize("registered, sent", [
    ((1,), (True,)), ((1,), (1.0,)), ((0.0,), (-0.0,)), ((True,), (1,)),
    ((None,), (0,)), ((Whole,), (None,)), (("a",), (b"a",)), ((("t",),), (["t"],)),
])
def test_extension_values_compare_by_exact_type(registered, sent):
    d = ExtendedSimple(unique_name("RecExt"), values=registered)
    r = _record(d)
    ext, stated = r[-2:]        # the extension, then the record it states
    assert ext == ("values", registered) and stated == (None,)
    assert _load(r) is d
    with pytest.raises(ValueError):
        _load(r[:-2] + (("values", sent), stated))


def test_a_nan_matches_only_the_same_bits():
    d = ExtendedSimple(unique_name("RecNan"), values=(math.nan,))
    r = _record(d)
    assert _load(r) is d
    import struct
    other = struct.unpack("<d", struct.pack("<Q", 0x7ff8000000000001))[0]
    with pytest.raises(ValueError):
        _load(r[:-1] + (("values", (other,)),))


_HOSTILE = st.sampled_from([HostileStr("Float32"), HostileStr("Any"), HostileInt(2),
                            HostileInt(32), HostileFloat(32.0), HostileTuple(()),
                            HostileTuple(("values", ())), [], {}, b"Float32", 10 ** 30, -1,
                            2 ** 63, None, Whole, DType.Float32])


@settings(max_examples=200, deadline=None)
@given(which=st.sampled_from(["Float32", "NVFP4", "Any"]), where=st.integers(0, 40),
       value=_HOSTILE)
def test_a_hostile_item_anywhere_is_refused_without_running_its_code(which, where, value):
    r = _record(getattr(DType, which))
    where %= len(r)
    mutated = r[:where] + (value,) + r[where + 1:]
    with registry_unchanged():
        with armed():
            try:
                got = _dtypes._reconstruct(mutated)
            except (TypeError, ValueError, LookupError) as exc:
                got = exc
    assert isinstance(got, Exception) or got is getattr(DType, which)
    if isinstance(got, Exception):
        assert str(got)


@settings(max_examples=100, deadline=None)
@given(cut=st.integers(0, 40), extra=st.lists(st.sampled_from([0, 1, None, (), "Any"]),
                                               max_size=3))
def test_a_truncated_or_extended_record_is_malformed(cut, extra):
    r = _record(DType.NVFP4)
    cut %= len(r)
    for mutated in (r[:cut], r + tuple(extra)):
        if mutated == r or len(mutated) < 3:
            continue
        with registry_unchanged():
            with pytest.raises((TypeError, ValueError, LookupError)):
                _dtypes._reconstruct(mutated)


def test_a_huge_count_is_refused_without_allocating():
    r = _record(DType.NVFP4)
    i = r.index(2, 13)   # the levels count
    with pytest.raises(ValueError, match="count"):
        _load(r[:i] + (sys.maxsize,) + r[i + 1:])
    with pytest.raises(ValueError, match="count"):
        _load(r[:i] + (-1,) + r[i + 1:])


def test_a_record_argument_must_be_an_exact_tuple_with_a_str_name():
    r = _record(DType.Float32)
    with pytest.raises(TypeError):
        _dtypes._reconstruct(HostileTuple(r))
    with pytest.raises(TypeError):
        _dtypes._reconstruct((HostileStr("Float32"),) + r[1:])
    with pytest.raises(TypeError):
        _dtypes._reconstruct(r, 5)
    with pytest.raises(TypeError):
        _dtypes._reconstruct(r, None, None)
    assert _dtypes._reconstruct(r, None) is DType.Float32


def test_a_category_chain_deeper_than_the_recursion_limit_pickles_flat():
    d = DType.Any
    for _ in range(3000):
        d = DTypeCategory(unique_name("RecDeep"), supertype=d)
    leaf = SimpleDType(unique_name("RecDeepLeaf"), bits=8, supertype=d)
    for protocol in (2, 4, 5):
        assert pickle.loads(pickle.dumps(leaf, protocol=protocol)) is leaf
    r = _record(leaf)
    # The leaf's 4 items, 3 per category, and Any's 4: one flat run; then
    # the leaf's numeric record stated (it has none).
    assert r[-1] == (None,)
    r = r[:-1]
    assert len(r) == 4 + 3 * 3000 + 4 and all(type(x) is not tuple or x == () for x in r)
    # The difference at the far end is found; its description may stop at
    # the recursion limit, but it is always a ValueError.
    with pytest.raises(ValueError):
        i = r.index("Any")
        _load(r[:i] + ("Elsewhere",) + r[i + 1:])


def test_deeply_nested_crafted_records_fail_cleanly_in_a_child():
    out = child_report("""
        import json, sys
        from stride_weave import _dtypes
        from stride_weave.dtypes import DType
        r = DType.Float32.__reduce__()[1][0]
        def deep(leaf, n=200000):
            for _ in range(n):
                leaf = (leaf,)
            return leaf
        cases = {"ext": r[:-1] + (deep(()),), "supertype": r[:3] + (deep("x"),) + r[4:],
                 "name": (deep("Float32"),) + r[1:], "record_in_record": deep(r)}
        out = {}
        for key, rec in cases.items():
            try:
                _dtypes._reconstruct(rec)
                out[key] = "returned"
            except BaseException as e:
                out[key] = type(e).__name__
        print(json.dumps(out))
    """)
    assert all(v in ("TypeError", "ValueError") for v in out.values()), out


# ---- N-D blocks --------------------------------------------------------------

@pytest.fixture(scope="module")
def nd_format():
    from stride_weave.dtypes import BlockScaledDType, Level

    element = SimpleDType(unique_name("RecNDEl"), bits=4, supertype=DType.Floating)
    return BlockScaledDType(unique_name("RecND"), element=element,
                            levels=[Level(DType.E4M3, (16, 16)), Level(DType.Float32, Whole)])


_HOSTILE_BLOCKS = st.sampled_from([
    HostileTuple((16, 16)), (HostileInt(16), 16), (16, HostileInt(16)),
    HostileTuple((HostileInt(16), HostileInt(16))), (HostileStr("int:16"), 16),
    (HostileFloat(16.0), 16), (HostileTuple((16,)), 16), ((16, 16),), (16, 16, ()),
    HostileInt(16), (), (16, 16) * 1000, (10 ** 30, 2 ** 64), (-16, 16), (0, 0), (True, 16),
])


@settings(max_examples=120, deadline=None)
@given(value=_HOSTILE_BLOCKS)
def test_a_hostile_or_malformed_nd_block_is_refused_without_running_its_code(nd_format,
                                                                          value):
    r = _record(nd_format)
    i = r.index((16, 16))
    with registry_unchanged():
        with armed():
            with pytest.raises((TypeError, ValueError)) as info:
                _dtypes._reconstruct(r[:i] + (value,) + r[i + 1:])
    assert f"cannot unpickle descriptor {nd_format.name!r}" in str(info.value)


@settings(max_examples=150, deadline=None)
@given(where=st.integers(0, 60), value=_HOSTILE | _HOSTILE_BLOCKS)
def test_a_hostile_item_anywhere_in_an_nd_record_is_refused(nd_format, where, value):
    r = _record(nd_format)
    where %= len(r)
    with registry_unchanged():
        with armed():
            try:
                got = _dtypes._reconstruct(r[:where] + (value,) + r[where + 1:])
            except (TypeError, ValueError, LookupError) as exc:
                got = exc
    assert got is nd_format or (isinstance(got, Exception) and str(got))


def test_an_nd_block_in_a_record_of_an_int_block_format_is_a_clean_mismatch():
    """What a receiver registered with a 1-D block sees: the path and both
    values (a release without N-D blocks refuses the tuple as malformed)."""
    nv = _record(DType.NVFP4)
    i = nv.index(16)
    with pytest.raises(ValueError, match=r"levels\[0\]\.Level\.block: registered 16 \(int\), "
                                         r"pickle has \(16, 16\) \(tuple\)$"):
        _load(nv[:i] + ((16, 16),) + nv[i + 1:])
