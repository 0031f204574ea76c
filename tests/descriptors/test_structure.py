"""Requirement: Descriptor structure is canonical and extensible.

``structure()`` is the immutable structure recorded once at finalization, in
the version-1 format of design.md: a nested tuple of exact ``str`` leaves,
with user values tagged (``"str:..."``, ``"int:..."``, ``"bool:..."``,
``"float:<16 hex>"``, ``"none"``, ``"whole"``) and references expanded as
``("ref", "str:<name>", <structure>)``.
"""
import decimal
import fractions
import itertools
import math
import struct
import sys
import textwrap

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from support import (
    assert_exited, refused, registry_unchanged, run_python, unique_name, walk_leaves,
)
from support.defs import register_every_kind
from stride_weave.dtypes import (
    DType, DTypeCategory, SimpleDType, Whole, WholeExtent,
)


# --------------------------------------------------------------------------
# Reference encoder / decoder for the documented format
# --------------------------------------------------------------------------

def float_bits(x):
    return struct.pack(">d", x).hex()


def float_from_hex(h):
    return struct.unpack(">d", bytes.fromhex(h))[0]


def encode(value):
    """Encode a permitted extension value per design.md (version 1)."""
    t = type(value)
    if t is tuple:
        return tuple(encode(v) for v in value)
    if t is str:
        return "str:" + value
    if t is bool:
        return "bool:True" if value else "bool:False"
    if t is int:
        # Decimal inside the int64 range, hex outside it (never subject to the
        # int-to-decimal digit limit).
        if -2**63 <= value < 2**63:
            return "int:" + str(value)
        return "int:" + hex(value)
    if t is float:
        return "float:" + float_bits(value)
    if value is None:
        return "none"
    if value is Whole:
        return "whole"
    raise AssertionError(f"not a permitted value: {value!r}")


def decode(enc):
    """Decode an encoded extension back to Python values."""
    if type(enc) is tuple:
        return tuple(decode(e) for e in enc)
    assert type(enc) is str, f"leaf is not an exact str: {enc!r}"
    if enc == "none":
        return None
    if enc == "whole":
        return Whole
    tag, sep, payload = enc.partition(":")
    assert sep, f"untagged leaf {enc!r}"
    if tag == "str":
        return payload
    if tag == "int":
        n = int(payload, 0)
        assert enc == encode(n), f"non-canonical int encoding {enc!r}"
        return n
    if tag == "bool":
        assert payload in ("True", "False"), enc
        return payload == "True"
    if tag == "float":
        assert len(payload) == 16 and payload == payload.lower(), enc
        int(payload, 16)
        return float_from_hex(payload)
    raise AssertionError(f"unknown tag in {enc!r}")


def exact_eq(a, b):
    """Exact comparison: types must match, floats by their bits."""
    if type(a) is not type(b):
        return False
    if type(a) is tuple:
        return len(a) == len(b) and all(exact_eq(x, y) for x, y in zip(a, b))
    if type(a) is float:
        return float_bits(a) == float_bits(b)
    if a is Whole or b is Whole:
        return a is b
    return a == b


def assert_canonical_shape(structure):
    """Every node is an exact tuple and every leaf an exact str."""
    stack = [structure]
    assert type(structure) is tuple
    while stack:
        node = stack.pop()
        if type(node) is tuple:
            stack.extend(node)
        else:
            assert type(node) is str, f"non-str leaf {node!r} ({type(node)})"


def ref(d):
    return ("ref", "str:" + d.name, d.structure())


def extension_of(structure):
    """The ("extension", ...) field of a structure."""
    fields = [f for f in structure[1:] if type(f) is tuple and f and f[0] == "extension"]
    assert len(fields) == 1, structure
    return fields[0][1]


# --------------------------------------------------------------------------
# Descriptor factories with a given structure_extension()
# --------------------------------------------------------------------------

def simple_with_extension(ext, *, bits=8, supertype=None, name=None):
    class ExtSimple(SimpleDType, abstract=False):
        def structure_extension(self):
            return ext

    return ExtSimple(name or unique_name("Ext"), bits=bits,
                     supertype=supertype or DType.Floating)


def category_with_extension(ext, *, supertype=None, name=None):
    class ExtCategory(DTypeCategory, abstract=False):
        def structure_extension(self):
            return ext

    return ExtCategory(name or unique_name("ExtCat"), supertype=supertype)


# --------------------------------------------------------------------------
# Format of the built-ins
# --------------------------------------------------------------------------

ANY = ("DTypeCategory", ("supertype", "none"), ("extension", ()))
FLOATING = ("DTypeCategory", ("supertype", ("ref", "str:Any", ANY)), ("extension", ()))
INTEGER = ("DTypeCategory", ("supertype", ("ref", "str:Any", ANY)), ("extension", ()))

BUILTIN_SIMPLES = {
    "Bool": (8, "Any", ANY),
    "Int32": (32, "Integer", INTEGER),
    "Int8": (8, "Integer", INTEGER),
    "Float32": (32, "Floating", FLOATING),
    "Float64": (64, "Floating", FLOATING),
    "E8M0": (8, "Floating", FLOATING),
    "E5M2": (8, "Floating", FLOATING),
    "E4M3": (8, "Floating", FLOATING),
    "E3M2": (6, "Floating", FLOATING),
    "E2M3": (6, "Floating", FLOATING),
    "E2M1": (4, "Floating", FLOATING),
}


def test_builtin_category_structures_follow_the_format():
    assert DType.Any.structure() == ANY
    assert DType.Floating.structure() == FLOATING
    assert DType.Integer.structure() == INTEGER


@pytest.mark.parametrize("name", sorted(BUILTIN_SIMPLES))
def test_builtin_simple_structures_follow_the_format(name):
    bits, sup, sup_structure = BUILTIN_SIMPLES[name]
    expected = ("SimpleDType", ("bits", f"int:{bits}"),
                ("supertype", ("ref", "str:" + sup, sup_structure)),
                ("extension", ()))
    assert DType.from_name(name).structure() == expected


def test_every_registered_structure_has_canonical_shape():
    # One descriptor of every kind, with extension values of every permitted
    # type, is registered here: the check covers them whether or not other
    # tests have registered anything in this process.
    own = register_every_kind(unique_name)
    registered = DType.registered()
    assert all(d in registered for d in own.values())
    for d in registered:
        assert_canonical_shape(d.structure())


def test_extension_simple_structure_follows_the_format():
    d = SimpleDType(unique_name("Fmt"), bits=16, supertype=DType.Floating)
    assert d.structure() == (
        "SimpleDType", ("bits", "int:16"),
        ("supertype", ("ref", "str:Floating", FLOATING)), ("extension", ()))


def test_extension_root_category_structure_follows_the_format():
    c = DTypeCategory(unique_name("FmtRoot"))
    assert c.structure() == ANY


def test_extension_category_structure_follows_the_format():
    c = DTypeCategory(unique_name("FmtCat"), supertype=DType.Integer)
    assert c.structure() == (
        "DTypeCategory", ("supertype", ("ref", "str:Integer", INTEGER)),
        ("extension", ()))


def test_huge_width_is_encoded_exactly():
    bits = 2**200 + 1
    d = SimpleDType(unique_name("FmtHuge"), bits=bits, supertype=DType.Floating)
    assert d.structure()[1] == ("bits", "int:" + hex(bits))
    assert d.structure()[1] == ("bits", encode(bits))


# --------------------------------------------------------------------------
# Recorded once, immutable
# --------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["Any", "Floating", "Float32", "E2M1"])
def test_structure_is_recorded_once(name):
    d = DType.from_name(name)
    assert d.structure() is d.structure()


def test_extension_structure_is_recorded_once():
    d = simple_with_extension(("a", 1))
    assert d.structure() is d.structure()


def test_structure_is_immutable_and_hashable():
    s = DType.Float32.structure()
    assert type(s) is tuple
    hash(s)
    with refused(TypeError):
        s[0] = "X"
    assert DType.Float32.structure() == s


def test_structure_is_not_affected_by_later_registrations():
    before = DType.Floating.structure()
    DTypeCategory(unique_name("Later"), supertype=DType.Floating)
    SimpleDType(unique_name("Later"), bits=8, supertype=DType.Floating)
    assert DType.Floating.structure() is before
    assert DType.Floating.structure() == FLOATING


def test_structure_takes_no_arguments():
    with refused(TypeError):
        DType.Float32.structure(1)


# --------------------------------------------------------------------------
# Referenced structures are included
# --------------------------------------------------------------------------

def test_structure_includes_referenced_structures_recursively():
    a = DTypeCategory(unique_name("RefA"), supertype=DType.Floating)
    b = DTypeCategory(unique_name("RefB"), supertype=a)
    s = SimpleDType(unique_name("RefS"), bits=10, supertype=b)
    assert a.structure() == ("DTypeCategory", ("supertype", ref(DType.Floating)),
                             ("extension", ()))
    assert b.structure() == ("DTypeCategory", ("supertype", ref(a)), ("extension", ()))
    assert s.structure() == ("SimpleDType", ("bits", "int:10"),
                             ("supertype", ref(b)), ("extension", ()))
    # Fully expanded down to the root.
    leaves = list(walk_leaves(s.structure()))
    for d in (b, a, DType.Floating, DType.Any):
        assert "str:" + d.name in leaves


def test_referenced_extension_contributes_to_structure():
    c1 = category_with_extension(("flavour", 1), supertype=DType.Any)
    c2 = category_with_extension(("flavour", 2), supertype=DType.Any)
    s1 = SimpleDType(unique_name("RefExt"), bits=8, supertype=c1)
    s2 = SimpleDType(unique_name("RefExt"), bits=8, supertype=c2)
    assert s1.structure() != s2.structure()
    assert s1.structure()[2][1][2] == c1.structure()
    assert extension_of(c1.structure()) == ("str:flavour", "int:1")


def test_structure_does_not_contain_own_name():
    """The descriptor's own name is not part of its structure (pickle carries
    it next to the structure)."""
    name = unique_name("NoOwnName")
    d = SimpleDType(name, bits=8, supertype=DType.Floating)
    assert all(name not in leaf for leaf in walk_leaves(d.structure()))
    assert d.structure() == DType.E8M0.structure()


# --------------------------------------------------------------------------
# Scenario: Record a category without storage disposition
# --------------------------------------------------------------------------

@pytest.mark.parametrize("which", ["Any", "Floating", "Integer", "extension",
                                   "extension-root", "simple"])
def test_record_a_category_without_storage_disposition(which):
    """Scenario: Record a category without storage disposition.

    The structure of DType.Any, DType.Floating or an extension category holds
    its hierarchy and no opaque-storage field or value.
    """
    if which == "extension":
        d = DTypeCategory(unique_name("NoOpaque"), supertype=DType.Floating)
    elif which == "extension-root":
        d = DTypeCategory(unique_name("NoOpaqueRoot"))
    elif which == "simple":
        d = DType.Float32
    else:
        d = DType.from_name(which)
    s = d.structure()
    for leaf in walk_leaves(s):
        assert "opaque" not in leaf.lower(), s
        assert "storage" not in leaf.lower(), s
    stack = [s]
    while stack:
        node = stack.pop()
        if type(node) is tuple:
            if node and node[0] == "DTypeCategory":
                assert [f[0] for f in node[1:]] == ["supertype", "extension"]
            stack.extend(node)


# --------------------------------------------------------------------------
# Contracts, not implementation subclasses
# --------------------------------------------------------------------------

def test_subclass_without_extension_has_the_contract_structure():
    class MyFloat(SimpleDType, abstract=False):
        pass

    class MyCat(DTypeCategory, abstract=False):
        pass

    f = MyFloat(unique_name("Contract"), bits=32, supertype=DType.Floating)
    c = MyCat(unique_name("ContractCat"), supertype=DType.Any)
    assert f.structure() == DType.Float32.structure()
    assert c.structure() == DType.Floating.structure()
    assert all("MyFloat" not in leaf for leaf in walk_leaves(f.structure()))


def test_structure_extension_defaults_to_empty_tuple():
    assert DType.Float32.structure_extension() == ()
    assert DType.Any.structure_extension() == ()
    d = SimpleDType(unique_name("DefaultExt"), bits=8, supertype=DType.Floating)
    assert d.structure_extension() == ()
    assert extension_of(d.structure()) == ()


def test_subclass_inheriting_an_extension_records_it():
    class Base(SimpleDType, abstract=False):
        def structure_extension(self):
            return ("base",)

    class Derived(Base, abstract=False):
        pass

    d = Derived(unique_name("Inherit"), bits=8, supertype=DType.Floating)
    assert extension_of(d.structure()) == ("str:base",)


# --------------------------------------------------------------------------
# Extension tuple recorded exactly
# --------------------------------------------------------------------------

def test_extension_tuple_is_recorded_exactly():
    ext = ("a", "", "str:x", 0, -7, 2**100, 1.5, -0.0, math.inf, True, False,
           None, Whole, (), (1, ("nested", (None,))), "\x00\u00e9\U0001f600")
    d = simple_with_extension(ext)
    recorded = extension_of(d.structure())
    assert recorded == (
        "str:a", "str:", "str:str:x", "int:0", "int:-7", "int:0x" + "1" + "0" * 25,
        "float:3ff8000000000000", "float:8000000000000000",
        "float:7ff0000000000000", "bool:True", "bool:False", "none", "whole",
        (), ("int:1", ("str:nested", ("none",))), "str:\x00\u00e9\U0001f600")
    assert exact_eq(decode(recorded), ext)


def test_category_extension_is_recorded_exactly():
    ext = ("cat", 3, (2.5, Whole))
    c = category_with_extension(ext, supertype=DType.Any)
    assert c.structure() == (
        "DTypeCategory", ("supertype", ref(DType.Any)),
        ("extension", ("str:cat", "int:3", ("float:4004000000000000", "whole"))))


def test_extension_int_beyond_the_int_str_digit_limit_is_recorded_exactly():
    """Extension ints are exact numbers of any size, including past
    sys.get_int_max_str_digits()."""
    limit = sys.get_int_max_str_digits()
    big = -(10 ** (max(limit, 4300) + 10)) - 3
    d = simple_with_extension((big,))
    assert extension_of(d.structure()) == ("int:" + hex(big),)
    assert decode(extension_of(d.structure())) == (big,)


@pytest.mark.parametrize("n, encoded", [
    (2**63 - 1, "int:9223372036854775807"),
    (-2**63, "int:-9223372036854775808"),
    (2**63, "int:0x8000000000000000"),
    (-2**63 - 1, "int:-0x8000000000000001"),
    (-1, "int:-1"),
])
def test_extension_int_encoding_at_the_int64_boundary(n, encoded):
    d = simple_with_extension((n,))
    assert extension_of(d.structure()) == (encoded,)


def test_deeply_nested_extension_does_not_crash():
    """A pathologically deep extension tuple either records or raises; it
    never crashes the interpreter, and a failure registers nothing."""
    code = textwrap.dedent("""
        from stride_weave.dtypes import DType, SimpleDType
        t = ()
        for _ in range(200_000):
            t = (t,)
        class Deep(SimpleDType, abstract=False):
            def structure_extension(self):
                return (t,)
        before = DType.registered()
        try:
            Deep("Deep", bits=8, supertype=DType.Floating)
        except (RecursionError, TypeError, ValueError, MemoryError):
            assert DType.registered() == before
            print("raised")
        else:
            print("recorded")
    """)
    proc = run_python(["-c", code])
    assert_exited(proc)
    assert proc.stdout.strip() in ("raised", "recorded")


def test_whole_extent_instance_is_whole():
    d = simple_with_extension((WholeExtent(),))
    assert extension_of(d.structure()) == ("whole",)


# --------------------------------------------------------------------------
# Invalid extension results
# --------------------------------------------------------------------------

class StrSub(str):
    pass


class IntSub(int):
    pass


class FloatSub(float):
    pass


NON_TUPLES = [
    ("list", lambda: []),
    ("list-of-values", lambda: ["a", 1]),
    ("None", lambda: None),
    ("str", lambda: "abc"),
    ("int", lambda: 1),
    ("dict", lambda: {}),
    ("Whole", lambda: Whole),
    ("generator", lambda: (x for x in ())),
    ("frozenset", lambda: frozenset()),
]


@pytest.mark.parametrize("make", [m for _, m in NON_TUPLES],
                         ids=[i for i, _ in NON_TUPLES])
@pytest.mark.parametrize("kind", ["simple", "category"])
def test_non_tuple_extension_is_type_error(kind, make):
    """A non-tuple structure_extension() result is a TypeError; nothing
    registered and the name stays free."""
    name = unique_name("NonTuple")
    value = make()
    with registry_unchanged():
        with refused(TypeError, match="structure_extension"):
            if kind == "simple":
                simple_with_extension(value, name=name)
            else:
                category_with_extension(value, name=name)
    with refused(LookupError):
        DType.from_name(name)
    assert simple_with_extension((), name=name).name == name


FORBIDDEN = [
    ("list", lambda: [1]),
    ("empty-list", lambda: []),
    ("dict", lambda: {"a": 1}),
    ("set", lambda: {1}),
    ("frozenset", lambda: frozenset({1})),
    ("complex", lambda: 1j),
    ("bytes", lambda: b"x"),
    ("bytearray", lambda: bytearray(b"x")),
    ("str-subclass", lambda: StrSub("a")),
    ("int-subclass", lambda: IntSub(1)),
    ("float-subclass", lambda: FloatSub(1.0)),
    ("object", lambda: object()),
    ("Fraction", lambda: fractions.Fraction(1, 2)),
    ("Decimal", lambda: decimal.Decimal("1.5")),
    ("descriptor", lambda: DType.Float32),
    ("class", lambda: SimpleDType),
    ("WholeExtent-class", lambda: WholeExtent),
    ("function", lambda: (lambda: None)),
    ("type", lambda: int),
    ("Ellipsis", lambda: ...),
]


@pytest.mark.parametrize("make", [m for _, m in FORBIDDEN],
                         ids=[i for i, _ in FORBIDDEN])
@pytest.mark.parametrize("depth", [0, 1, 3])
def test_forbidden_extension_value_is_type_error(make, depth):
    """An unsupported value inside the tuple is a TypeError, at any depth;
    nothing registered."""
    value = make()
    ext = ("ok", value)
    for _ in range(depth):
        ext = (1, ext, None)
    name = unique_name("Forbidden")
    with registry_unchanged():
        with refused(TypeError, match="structure_extension"):
            simple_with_extension(ext, name=name)
    with refused(LookupError):
        DType.from_name(name)


@pytest.mark.parametrize("make", [m for _, m in FORBIDDEN[:8]],
                         ids=[i for i, _ in FORBIDDEN[:8]])
def test_forbidden_category_extension_value_is_type_error(make):
    name = unique_name("ForbiddenCat")
    with registry_unchanged():
        with refused(TypeError, match="structure_extension"):
            category_with_extension((make(),), name=name)



# --------------------------------------------------------------------------
# Exactness
# --------------------------------------------------------------------------

def _nan(bits_hex):
    return float_from_hex(bits_hex)


TRICKY = [
    ("True", (True,)),
    ("1", (1,)),
    ("1.0", (1.0,)),
    ("False", (False,)),
    ("0", (0,)),
    ("0.0", (0.0,)),
    ("-0.0", (-0.0,)),
    ("nan", (_nan("7ff8000000000000"),)),
    ("nan-payload", (_nan("7ff8000000000001"),)),
    ("neg-nan", (_nan("fff8000000000000"),)),
    ("str-1", ("1",)),
    ("str-True", ("True",)),
    ("str-int:1", ("int:1",)),
    ("None", (None,)),
    ("str-none", ("none",)),
    ("Whole", (Whole,)),
    ("str-whole", ("whole",)),
    ("empty-tuple", ((),)),
    ("empty", ()),
    ("nested-1", ((1,),)),
    ("two", (1, 1)),
    ("inf", (math.inf,)),
    ("-inf", (-math.inf,)),
]


@pytest.fixture(scope="module")
def tricky_structures():
    return {label: simple_with_extension(ext).structure() for label, ext in TRICKY}


@pytest.mark.parametrize("a, b", list(itertools.combinations([l for l, _ in TRICKY], 2)))
def test_exactness_distinguishes_values(tricky_structures, a, b):
    """True/1/1.0 differ; 0.0/-0.0 differ; NaNs with different bits differ;
    a tagged string never collides with a value."""
    sa, sb = tricky_structures[a], tricky_structures[b]
    assert sa != sb
    assert not (sa == sb)
    assert len({sa: 1, sb: 2}) == 2


@pytest.mark.parametrize("label, ext", TRICKY, ids=[l for l, _ in TRICKY])
def test_exactness_same_values_give_equal_structures(label, ext):
    """The same exact value, including a NaN with the same bits, gives an
    equal structure with an equal hash."""
    again = tuple(_nan(float_bits(v)) if type(v) is float and math.isnan(v) else v
                  for v in ext)
    s1 = simple_with_extension(ext).structure()
    s2 = simple_with_extension(again).structure()
    assert s1 == s2
    assert hash(s1) == hash(s2)
    assert {s1: 1}[s2] == 1


def test_nan_same_bits_equal_distinct_objects():
    n1 = float("nan")
    n2 = float("nan")
    assert n1 is not n2
    s1 = simple_with_extension((n1,)).structure()
    s2 = simple_with_extension((n2,)).structure()
    assert s1 == s2
    assert hash(s1) == hash(s2)
    assert extension_of(s1) == ("float:" + float_bits(n1),)


def test_structures_usable_as_cache_keys():
    cache = {}
    for label, ext in TRICKY:
        cache[simple_with_extension(ext).structure()] = label
    assert len(cache) == len(TRICKY)


# --------------------------------------------------------------------------
# Scenario: Distinguish extension representations
# --------------------------------------------------------------------------

def test_distinguish_extension_representations():
    """Scenario: Distinguish extension representations.

    Two extension descriptors with different permitted structure_extension()
    tuples have different structures even though their inherited fields agree.
    """
    a = simple_with_extension(("mantissa", 10), bits=16)
    b = simple_with_extension(("mantissa", 11), bits=16)
    plain = SimpleDType(unique_name("Plain"), bits=16, supertype=DType.Floating)
    assert a.structure()[:3] == b.structure()[:3] == plain.structure()[:3]
    assert a.structure() != b.structure()
    assert a.structure() != plain.structure()
    assert b.structure() != plain.structure()


# --------------------------------------------------------------------------
# Hypothesis properties
# --------------------------------------------------------------------------

leaf_values = st.one_of(
    st.text(),
    st.integers(),
    st.integers(min_value=-(2**200), max_value=2**200),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.just(Whole),
    st.sampled_from(["none", "whole", "int:1", "bool:True", "str:", ""]),
)

extension_values = st.recursive(
    leaf_values,
    lambda children: st.lists(children, max_size=4).map(tuple),
    max_leaves=15,
)

extension_tuples = st.lists(extension_values, max_size=5).map(tuple)

PROPERTY_SETTINGS = settings(max_examples=100, deadline=None,
                             suppress_health_check=[HealthCheck.too_slow])


@PROPERTY_SETTINGS
@given(ext=extension_tuples)
def test_property_permitted_extension_is_recorded_exactly(ext):
    """Any permitted nested extension tuple is recorded exactly: decoding the
    recorded field gives back the same values with the same exact types."""
    d = simple_with_extension(ext)
    s = d.structure()
    assert_canonical_shape(s)
    recorded = extension_of(s)
    assert recorded == encode(ext)
    assert exact_eq(decode(recorded), ext)
    assert s[:3] == DType.E8M0.structure()[:3]


@PROPERTY_SETTINGS
@given(ext=extension_tuples)
def test_property_permitted_category_extension_is_recorded_exactly(ext):
    c = category_with_extension(ext, supertype=DType.Any)
    recorded = extension_of(c.structure())
    assert exact_eq(decode(recorded), ext)


@PROPERTY_SETTINGS
@given(a=extension_tuples, b=extension_tuples)
def test_property_different_extensions_give_different_structures(a, b):
    """Two different permitted tuples give different structures, and Python's
    == and hash on the structures agree with exact comparison."""
    sa = simple_with_extension(a).structure()
    sb = simple_with_extension(b).structure()
    same = exact_eq(a, b)
    assert (sa == sb) is same
    if same:
        assert hash(sa) == hash(sb)


@PROPERTY_SETTINGS
@given(a=extension_tuples)
def test_property_equal_extensions_give_equal_structures(a):
    # Rebuild the same value with fresh objects (floats by their bits).
    def rebuild(v):
        if type(v) is tuple:
            return tuple(rebuild(x) for x in v)
        if type(v) is float:
            return float_from_hex(float_bits(v))
        if type(v) is str:
            return "".join(list(v))
        return v

    b = rebuild(a)
    assume(exact_eq(a, b))
    sa = simple_with_extension(a).structure()
    sb = simple_with_extension(b).structure()
    assert sa == sb
    assert hash(sa) == hash(sb)
