"""BlockScaledDType and the built-in block-scaled table.

``BlockScaledDType(name, *, element, levels)`` is a concrete compound dtype:
an encoded element times one scale from each level.  It derives its planes
(element, *scales), its rules (LevelExtent(i, block) per level) and its
supertype (Any), reports element, levels, num_axes and bits_per_element, and
is unique by structure: the same element and level chain cannot be
registered twice, under another name or another implementation subclass,
unless a subclass adds its own structure_extension().

Names and structures are process-global for the life of the process, so
every test that registers takes fresh names from ``unique_name`` and, where
the chain matters, a fresh element dtype (its name is part of the structure)
so that no two tests can collide on a structure.
"""
import base64
import copy
import inspect
import json
import pickle
import re
import textwrap
import threading
import types
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from support import (
    assert_exited, assert_unregistered, refused, registry_unchanged, run_python, unique_name,
    walk_leaves,
)
from support.defs import BLOCK_SCALED_BUILTINS, PlanePair
from stride_weave import _dtypes
from stride_weave.dtypes import (
    BlockScaledDType,
    CompoundDType,
    DType,
    DTypeCategory,
    Level,
    LevelExtent,
    SimpleDType,
    SymbolicBits,
    Whole,
)

PROTOCOLS = [0, 1, 2, 3, 4, 5]

# The built-in table: name -> (element, ((scale, block), ...)).
BUILTIN_TABLE = BLOCK_SCALED_BUILTINS
BUILTIN_BLOCK_SCALED = tuple(BUILTIN_TABLE)
MX_NAMES = tuple(n for n in BUILTIN_TABLE if n != "NVFP4")

# An element for calls that must fail: created once, outside every
# registry_unchanged() block.
ERR_ELEMENT = SimpleDType(unique_name("BSerr"), bits=4, supertype=DType.Floating)


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------

def fresh_element(bits=4, prefix="BSel"):
    """A new registered SimpleDType: a format built on it has a structure no
    other test can have."""
    return SimpleDType(unique_name(prefix), bits=bits, supertype=DType.Floating)


def mx_levels():
    return [Level(DType.E8M0, 32)]


def nv_levels():
    return [Level(DType.E4M3, 16), Level(DType.Float32, Whole)]


def make(levels=None, element=None, name=None, cls=BlockScaledDType):
    """Register a block-scaled format on a fresh element (by default)."""
    return cls(name or unique_name("BS"),
               element=fresh_element() if element is None else element,
               levels=mx_levels() if levels is None else levels)


def assert_refused_and_name_free(exc, build, name, match=None):
    """build() raises exc, registers nothing, and the name stays usable."""
    with refused(exc, match=match) as info:
        build()
    assert_unregistered(name)
    ok = make(name=name)
    assert DType.from_name(name) is ok
    return info


def ref(d):
    return ("ref", "str:" + d.name, d.structure())


def field(structure, key):
    """The value of the top-level (key, value) field of a structure."""
    found = [item[1] for item in structure[1:]
             if type(item) is tuple and len(item) == 2 and item[0] == key]
    assert len(found) == 1, (key, structure)
    return found[0]


def contains(structure, part):
    """part occurs as a node anywhere inside structure."""
    if structure == part:
        return True
    return type(structure) is tuple and any(contains(x, part) for x in structure)


def expected_bits(element_bits, chain):
    """The documented formula, exactly: element bits + for each integer level its
    scale bits over the product of the blocks up to and including it."""
    total, prod = Fraction(element_bits), 1
    for scale_bits, block in chain:
        if block is Whole:
            continue
        prod *= block
        total += Fraction(scale_bits, prod)
    return total


_scales = {}


def scale_of(bits):
    """A registered scale dtype of the given width (shared between examples:
    the fresh element already makes each chain unique)."""
    if bits not in _scales:
        _scales[bits] = SimpleDType(unique_name(f"BSsc{bits}"), bits=bits,
                                    supertype=DType.Floating)
    return _scales[bits]


# Chains: 0-4 integer levels (scale bits, block), optionally a final Whole.
CHAINS = st.tuples(
    st.lists(st.tuples(st.integers(1, 64),
                       st.one_of(st.integers(1, 64), st.integers(1, 10 ** 12))),
             max_size=4),
    st.one_of(st.none(), st.integers(1, 64)),
).filter(lambda c: c[0] or c[1] is not None).map(
    lambda c: tuple(c[0]) + (() if c[1] is None else ((c[1], Whole),)))


def levels_of(chain):
    return [Level(scale_of(bits), block) for bits, block in chain]


# --------------------------------------------------------------------------
# Construction: the scenario
# --------------------------------------------------------------------------

def test_construct_registers_a_concrete_compound_dtype():
    """A valid call registers the format under its name, as a compound
    dtype reachable from every registry surface but not the DType namespace."""
    name = unique_name("BSnew")
    element = fresh_element()
    d = BlockScaledDType(name, element=element, levels=mx_levels())
    assert type(d) is BlockScaledDType
    assert d.name == name and d.value == name
    assert DType.from_name(name) is d
    assert CompoundDType.from_name(name) is d
    assert BlockScaledDType.from_name(name) is d
    assert d in DType.registered()
    assert d in CompoundDType.registered()
    assert d in BlockScaledDType.registered()
    assert not hasattr(DType, name)
    assert d.is_compound() is True
    assert d.is_simple() is False
    assert d.is_category() is False


def test_signature_is_name_then_keyword_only_element_and_levels():
    assert str(inspect.signature(BlockScaledDType)) == "(name, *, element, levels)"


def test_name_may_be_given_by_keyword():
    name = unique_name("BSkw")
    d = BlockScaledDType(name=name, element=ERR_ELEMENT, levels=mx_levels())
    assert d.name == name


def test_repr_names_class_and_registered_name():
    assert repr(DType.NVFP4) == "BlockScaledDType('NVFP4')"
    assert repr(DType.MXFP4) == "BlockScaledDType('MXFP4')"
    name = unique_name("BSrepr")
    assert repr(make(name=name)) == f"BlockScaledDType({name!r})"


def test_element_and_levels_accessors():
    element = fresh_element(bits=6)
    levels = [Level(DType.E8M0, 32), Level(DType.E4M3, 4)]
    d = make(levels, element)
    assert d.element is element
    assert type(d.levels) is tuple
    assert d.levels == tuple(levels)
    assert all(type(level) is Level for level in d.levels)
    assert d.levels[0].scale is DType.E8M0 and d.levels[1].scale is DType.E4M3


def test_levels_accept_any_iterable():
    gen = (level for level in [Level(DType.E8M0, 8), Level(DType.Float32, Whole)])
    d = make(gen)
    assert d.levels == (Level(DType.E8M0, 8), Level(DType.Float32, Whole))
    t = make((Level(DType.E8M0, 8),))
    assert t.levels == (Level(DType.E8M0, 8),)


def test_mutating_the_callers_levels_list_changes_nothing():
    """levels is copied into a tuple the descriptor owns."""
    levels = [Level(DType.E8M0, 32), Level(DType.E4M3, 2)]
    d = make(levels)
    structure, reduced = d.structure(), d.__reduce__()
    bits = d.bits_per_element
    levels.append(Level(DType.Float32, Whole))
    levels[0] = Level(DType.Int8, 4)
    del levels[1]
    assert d.levels == (Level(DType.E8M0, 32), Level(DType.E4M3, 2))
    assert d.num_axes == 2
    assert d.simple_types == (d.element, DType.E8M0, DType.E4M3)
    assert d.bits_per_element == bits
    assert d.structure() == structure
    assert d.__reduce__() == reduced
    assert pickle.loads(pickle.dumps(d)) is d


# --------------------------------------------------------------------------
# Derived planes, rules, supertype
# --------------------------------------------------------------------------

def test_simple_types_are_element_then_each_scale():
    d = make([Level(DType.E8M0, 32), Level(DType.Int8, 4), Level(DType.Float32, Whole)])
    assert type(d.simple_types) is tuple
    assert d.simple_types == (d.element, DType.E8M0, DType.Int8, DType.Float32)
    assert d.simple_types == (d.element, *[lv.scale for lv in d.levels])
    assert d.num_carriers == 4


def test_repeated_scales_give_repeated_planes():
    d = make([Level(DType.E8M0, 2), Level(DType.E8M0, 2)])
    assert d.simple_types == (d.element, DType.E8M0, DType.E8M0)


def _rule_key(rule):
    return (type(rule), rule.level, rule.extent, rule.structure())


def test_representation_rules_are_one_level_extent_per_level():
    """representation_rules == tuple(LevelExtent(i, l.block) for ...), compared
    by class, level, extent and structure (rules are objects, not values)."""
    d = make([Level(DType.E8M0, 32), Level(DType.E4M3, 4), Level(DType.Float32, Whole)])
    rules = d.representation_rules
    assert type(rules) is tuple and len(rules) == 3
    expected = tuple(LevelExtent(i, lv.block) for i, lv in enumerate(d.levels))
    assert [_rule_key(r) for r in rules] == [_rule_key(r) for r in expected]
    assert rules[2].extent is Whole


def test_supertype_is_any():
    d = make()
    assert d.supertype is DType.Any
    assert tuple(d.supertypes()) == (DType.Any,)
    assert d.is_subtype_of(DType.Any)
    assert d.is_subtype_of(d)
    assert not d.is_subtype_of(DType.Floating)
    for name in BUILTIN_BLOCK_SCALED:
        assert getattr(DType, name).supertype is DType.Any


def test_derived_rules_validate_a_consistent_representation():
    """The derived rules accept the representation a tensor side would build
    for 1024 elements, and refuse one whose first scale level is off."""
    from test_level_extent import make_context

    for d in [getattr(DType, n) for n in BUILTIN_BLOCK_SCALED] + [
            make([Level(DType.E8M0, 8), Level(DType.E4M3, 4), Level(DType.Float32, Whole)])]:
        sizes, preimages = [1024], []
        for lv in d.levels:
            src = sizes[-1]
            sizes.append(1 if lv.block is Whole else src // lv.block)
            preimages.append(src if lv.block is Whole else lv.block)
        ctx = make_context(sizes, preimages, dtype=d)
        for rule in d.representation_rules:
            assert rule.validate(ctx) is None, (d, rule)
        bad = make_context([sizes[0], sizes[1] + 1] + sizes[2:], preimages, dtype=d)
        with pytest.raises(ValueError, match=re.escape(d.name)):
            d.representation_rules[0].validate(bad)


# --------------------------------------------------------------------------
# num_axes
# --------------------------------------------------------------------------

@pytest.mark.parametrize("levels, axes", [
    ([Level(DType.E8M0, 32)], 1),
    ([Level(DType.E8M0, 32), Level(DType.E4M3, 4)], 2),
    ([Level(DType.E8M0, 2), Level(DType.E8M0, 2), Level(DType.E8M0, 2)], 3),
    ([Level(DType.E4M3, 16), Level(DType.Float32, Whole)], 1),
    ([Level(DType.Float32, Whole)], 0),
], ids=["one", "two", "three", "int+whole", "whole-only"])
def test_num_axes_counts_integer_levels_only(levels, axes):
    d = make(levels)
    assert d.num_axes == axes and type(d.num_axes) is int


# --------------------------------------------------------------------------
# bits_per_element
# --------------------------------------------------------------------------

def test_mxfp4_bits_per_element_is_4_25():
    assert DType.MXFP4.bits_per_element == 4.25
    assert type(DType.MXFP4.bits_per_element) is float


def test_nvfp4_bits_per_element_is_symbolic():
    bits = DType.NVFP4.bits_per_element
    assert type(bits) is SymbolicBits
    assert bits == SymbolicBits(4.5, 32)
    assert bits.constant == 4.5 and bits.whole_scale_bits == 32
    assert bits.evaluate(1024) == 4.53125


def test_multi_level_integer_chain_sums_each_level():
    """6 + 8/32 + 16/(32*4) = 6.375."""
    d = make([Level(DType.E8M0, 32), Level(SimpleDType(unique_name("S16"), bits=16,
                                                       supertype=DType.Floating), 4)],
             fresh_element(bits=6))
    assert d.bits_per_element == 6.375


def test_whole_only_chain_is_element_bits_plus_symbolic_whole():
    d = make([Level(DType.Float32, Whole)], fresh_element(bits=5))
    assert d.bits_per_element == SymbolicBits(5.0, 32)
    assert d.bits_per_element.evaluate(32) == 6.0


def test_bits_per_element_is_exact_not_a_float_sum():
    """Rounded once from the exact sum: element 2**53 bits with a tiny share
    rounds to nearest-even of the exact value, not of a running float sum."""
    element = fresh_element(bits=2 ** 53 + 1)
    d = make([Level(DType.E8M0, 16), Level(DType.E8M0, 16)], element)
    exact = Fraction(2 ** 53 + 1) + Fraction(8, 16) + Fraction(8, 256)
    assert d.bits_per_element == float(exact)
    assert float(exact) == 2 ** 53 + 2  # the naive float sum gives 2**53


@settings(max_examples=40, deadline=None)
@given(element_bits=st.one_of(st.integers(1, 64), st.integers(1, 2 ** 60)),
       chain=CHAINS)
def test_property_bits_per_element_matches_the_exact_formula(element_bits, chain):
    """For random level chains, bits_per_element equals element bits plus the
    sum of scale bits over cumulative blocks (SymbolicBits with the whole
    level's scale width when the chain ends in Whole)."""
    d = make(levels_of(chain), fresh_element(bits=element_bits))
    constant = float(expected_bits(element_bits, chain))
    if chain[-1][1] is Whole:
        assert type(d.bits_per_element) is SymbolicBits
        assert d.bits_per_element == SymbolicBits(constant, chain[-1][0])
        assert d.num_axes == len(chain) - 1
    else:
        assert type(d.bits_per_element) is float
        assert d.bits_per_element == constant
        assert d.num_axes == len(chain)
    assert d.simple_types == (d.element, *[scale_of(b) for b, _ in chain])
    assert [(r.level, r.extent) for r in d.representation_rules] == [
        (i, block) for i, (_, block) in enumerate(chain)]


# --------------------------------------------------------------------------
# Error cases (all before the name is registered)
# --------------------------------------------------------------------------

@pytest.mark.parametrize("element", [
    None, 4, "E2M1", DType.Floating, DType.Any, Level(DType.E8M0, 32), SimpleDType,
], ids=["None", "int", "str", "category-Floating", "category-Any", "Level", "class"])
def test_element_that_is_not_a_simple_dtype_is_a_type_error(element):
    name = unique_name("BSbadel")
    assert_refused_and_name_free(
        TypeError,
        lambda: BlockScaledDType(name, element=element, levels=mx_levels()),
        name, match="element")


def test_compound_element_is_a_type_error():
    """Neither a user compound nor a block-scaled format is an element."""
    pair = PlanePair(unique_name("BSpair"), planes=[DType.E2M1])
    for element in (pair, DType.MXFP4):
        name = unique_name("BScomp")
        assert_refused_and_name_free(
            TypeError,
            lambda: BlockScaledDType(name, element=element, levels=mx_levels()),
            name, match="element")


def test_unfinished_element_is_a_value_error():
    """An element still under construction is not a registered descriptor."""
    seen = []
    inner = unique_name("BSinner")

    class Leaky(SimpleDType, abstract=False):
        def __init__(self, name):
            super().__init__(name, bits=8, supertype=DType.Floating)
            with refused(ValueError) as info:
                BlockScaledDType(inner, element=self, levels=mx_levels())
            seen.append(info.value)

    d = Leaky(unique_name("BSleaky"))
    assert len(seen) == 1 and "element" in str(seen[0])
    assert_unregistered(inner)
    assert make(element=d, name=inner).element is d  # finished now: accepted


def test_rejected_element_is_a_value_error():
    """An element whose own construction failed can never be used."""
    leaked = []

    class Rejected(SimpleDType, abstract=False):
        def __init__(self, name):
            super().__init__(name, bits=8, supertype=DType.Floating)
            leaked.append(self)
            raise RuntimeError("reject")

    with pytest.raises(RuntimeError):
        Rejected(unique_name("BSrej"))
    name = unique_name("BSonrej")
    assert_refused_and_name_free(
        ValueError,
        lambda: BlockScaledDType(name, element=leaked[0], levels=mx_levels()),
        name, match="element")


@pytest.mark.parametrize("levels", [None, 5, 1.5, Level(DType.E8M0, 32), object()],
                         ids=["None", "int", "float", "a-bare-Level", "object"])
def test_levels_not_iterable_is_a_type_error(levels):
    name = unique_name("BSnoit")
    assert_refused_and_name_free(
        TypeError,
        lambda: BlockScaledDType(name, element=ERR_ELEMENT, levels=levels),
        name, match="levels")


@pytest.mark.parametrize("bad", [
    (DType.E8M0, 32), DType.E8M0, 32, None, "Level", LevelExtent(0, 32), Whole,
], ids=["tuple", "scale-dtype", "int", "None", "str", "LevelExtent", "Whole"])
def test_levels_element_that_is_not_a_level_is_a_type_error(bad):
    for levels in ([bad], [Level(DType.E8M0, 32), bad]):
        name = unique_name("BSnotlv")
        assert_refused_and_name_free(
            TypeError,
            lambda: BlockScaledDType(name, element=ERR_ELEMENT, levels=levels),
            name, match="levels")


def test_string_is_not_a_level_chain():
    name = unique_name("BSstr")
    assert_refused_and_name_free(
        TypeError,
        lambda: BlockScaledDType(name, element=ERR_ELEMENT, levels="E8M0"),
        name)


@pytest.mark.parametrize("levels", [[], (), iter(()), set(), {}],
                         ids=["list", "tuple", "iterator", "set", "dict"])
def test_empty_levels_is_a_value_error(levels):
    name = unique_name("BSempty")
    assert_refused_and_name_free(
        ValueError,
        lambda: BlockScaledDType(name, element=ERR_ELEMENT, levels=levels),
        name, match="levels")


@pytest.mark.parametrize("levels", [
    [Level(DType.Float32, Whole), Level(DType.E8M0, 32)],
    [Level(DType.Float32, Whole), Level(DType.Float32, Whole)],
    [Level(DType.E8M0, 32), Level(DType.Float32, Whole), Level(DType.E8M0, 2)],
], ids=["whole-first", "two-wholes", "whole-in-the-middle"])
def test_whole_anywhere_but_last_is_a_value_error(levels):
    name = unique_name("BSwhole")
    assert_refused_and_name_free(
        ValueError,
        lambda: BlockScaledDType(name, element=ERR_ELEMENT, levels=levels),
        name, match="Whole")


def test_levels_iterator_raising_propagates_and_registers_nothing():
    def gen():
        yield Level(DType.E8M0, 32)
        raise RuntimeError("boom")

    name = unique_name("BSboom")
    assert_refused_and_name_free(
        RuntimeError,
        lambda: BlockScaledDType(name, element=ERR_ELEMENT, levels=gen()),
        name)


@pytest.mark.parametrize("kwargs", [
    {"levels": [Level(DType.E8M0, 32)]},
    {"element": DType.E2M1},
    {},
], ids=["no-element", "no-levels", "neither"])
def test_missing_element_or_levels_is_a_type_error(kwargs):
    name = unique_name("BSmiss")
    with refused(TypeError):
        BlockScaledDType(name, **kwargs)
    assert_unregistered(name)


def test_element_and_levels_are_keyword_only():
    name = unique_name("BSpos")
    with refused(TypeError):
        BlockScaledDType(name, ERR_ELEMENT, mx_levels())
    assert_unregistered(name)


@pytest.mark.parametrize("extra", [
    {"supertype": DType.Any}, {"simple_types": [DType.E2M1]},
    {"representation_rules": ()}, {"bits": 4}, {"other": 1},
], ids=["supertype", "simple_types", "representation_rules", "bits", "other"])
def test_unknown_keyword_is_a_type_error(extra):
    """Planes, rules and supertype are derived, never passed."""
    name = unique_name("BSextra")
    with refused(TypeError):
        BlockScaledDType(name, element=ERR_ELEMENT, levels=mx_levels(), **extra)
    assert_unregistered(name)


@pytest.mark.parametrize("bad_name", ["", 5, None, b"MX"],
                         ids=["empty", "int", "None", "bytes"])
def test_invalid_name_is_a_value_error(bad_name):
    with refused(ValueError):
        BlockScaledDType(bad_name, element=ERR_ELEMENT, levels=mx_levels())


def test_duplicate_name_is_a_value_error_and_keeps_the_original():
    name = unique_name("BSdupname")
    first = make(name=name)
    with refused(ValueError):
        make(element=ERR_ELEMENT, name=name)
    with refused(ValueError):
        make([Level(DType.E4M3, 16), Level(DType.Float32, Whole)], ERR_ELEMENT,
             name=name)
    with refused(ValueError):
        SimpleDType(name, bits=8, supertype=DType.Floating)
    assert DType.from_name(name) is first


def test_builtin_name_cannot_be_reused():
    with refused(ValueError):
        make(element=ERR_ELEMENT, name="MXFP4")
    assert DType.from_name("MXFP4") is DType.MXFP4


# --------------------------------------------------------------------------
# Structure
# --------------------------------------------------------------------------

def _level_structure(scale, block):
    return ("Level", ("scale", ref(scale)),
            ("block", "whole" if block is Whole else f"int:{block}"))


def test_structure_records_element_levels_and_extension():
    element = fresh_element(bits=5)
    d = make([Level(DType.E4M3, 16), Level(DType.Float32, Whole)], element)
    s = d.structure()
    assert type(s) is tuple and s[0] == "BlockScaledDType"
    assert field(s, "element") == ref(element)
    assert field(s, "levels") == (_level_structure(DType.E4M3, 16),
                                  _level_structure(DType.Float32, Whole))
    assert field(s, "extension") == ()
    assert s[-1] == ("extension", ())


def test_nvfp4_structure_shows_its_chain():
    s = DType.NVFP4.structure()
    assert s[0] == "BlockScaledDType"
    assert field(s, "element") == ref(DType.E2M1)
    assert field(s, "levels") == (_level_structure(DType.E4M3, 16),
                                  _level_structure(DType.Float32, Whole))


def test_structure_names_the_contract_not_the_subclass():
    class Plain(BlockScaledDType, abstract=False):
        pass

    a = make()
    b = make(cls=Plain)
    assert type(b) is Plain
    assert b.structure()[0] == "BlockScaledDType"
    assert b.structure()[1:] != a.structure()[1:]  # other element
    assert field(b.structure(), "levels") == field(a.structure(), "levels")


def test_structure_carries_a_subclass_extension():
    class Tagged(BlockScaledDType, abstract=False):
        def structure_extension(self):
            return ("rounding", "stochastic", 2)

    d = make(cls=Tagged)
    assert field(d.structure(), "extension") == (
        "str:rounding", "str:stochastic", "int:2")


def test_structure_is_exact_strings_and_hashable():
    for name in BUILTIN_BLOCK_SCALED:
        s = getattr(DType, name).structure()
        assert all(type(leaf) is str for leaf in walk_leaves(s))
        hash(s)


def test_builtin_structures_are_pairwise_distinct():
    structures = {getattr(DType, n).structure() for n in BUILTIN_BLOCK_SCALED}
    assert len(structures) == len(BUILTIN_BLOCK_SCALED)


# --------------------------------------------------------------------------
# Unique by structure
# --------------------------------------------------------------------------

def test_same_chain_under_another_name_is_a_value_error_naming_the_first():
    """The first registration stays the identity of that representation."""
    element = fresh_element()
    first = make(mx_levels(), element)
    other = unique_name("BSdup")
    with refused(ValueError) as info:
        make([Level(DType.E8M0, 32)], element, name=other)
    assert first.name in str(info.value)
    assert_unregistered(other)
    assert BlockScaledDType.from_name(first.name) is first


def test_builtin_chain_under_a_new_name_is_refused():
    """E2M1 with one E8M0 scale per 32 is MXFP4 whatever it is called."""
    for builtin in BUILTIN_BLOCK_SCALED:
        element, chain = BUILTIN_TABLE[builtin]
        levels = [Level(DType.from_name(s), b) for s, b in chain]
        name = unique_name("BSalias")
        with refused(ValueError) as info:
            BlockScaledDType(name, element=DType.from_name(element), levels=levels)
        assert builtin in str(info.value).replace(name, "")
        assert_unregistered(name)


def test_same_chain_through_a_subclass_without_extension_is_refused():
    class Alias(BlockScaledDType, abstract=False):
        """An implementation subclass adding no structure_extension()."""

    class EmptyExt(BlockScaledDType, abstract=False):
        def structure_extension(self):
            return ()

    element = fresh_element()
    first = make(nv_levels(), element)
    for cls in (Alias, EmptyExt):
        name = unique_name("BSsub")
        with refused(ValueError) as info:
            cls(name, element=element, levels=nv_levels())
        assert first.name in str(info.value)
        assert_unregistered(name)
    with refused(ValueError):
        Alias(unique_name("BSsubMX"), element=DType.E2M1, levels=mx_levels())


def test_subclass_registered_first_owns_the_structure():
    class Alias(BlockScaledDType, abstract=False):
        pass

    element = fresh_element()
    first = Alias(unique_name("BSfirst"), element=element, levels=mx_levels())
    name = unique_name("BSsecond")
    with refused(ValueError) as info:
        make(mx_levels(), element, name=name)
    assert first.name in str(info.value)


def test_subclass_with_its_own_extension_is_a_different_format():
    """A structure_extension() describes a different structure: allowed, and
    unique in turn."""
    class Stochastic(BlockScaledDType, abstract=False):
        def structure_extension(self):
            return ("stochastic-rounding",)

    class Saturating(BlockScaledDType, abstract=False):
        def structure_extension(self):
            return ("saturating",)

    element = fresh_element()
    plain = make(mx_levels(), element)
    sto = Stochastic(unique_name("BSsto"), element=element, levels=mx_levels())
    sat = Saturating(unique_name("BSsat"), element=element, levels=mx_levels())
    assert len({plain.structure(), sto.structure(), sat.structure()}) == 3
    mx = Stochastic(unique_name("BSstoMX"), element=DType.E2M1, levels=mx_levels())
    assert mx.simple_types == DType.MXFP4.simple_types
    name = unique_name("BSsto2")
    with refused(ValueError) as info:
        Stochastic(name, element=element, levels=mx_levels())
    assert sto.name in str(info.value)
    assert_unregistered(name)


@pytest.mark.parametrize("second", [
    [Level(DType.E8M0, 16)],
    [Level(DType.E4M3, 32)],
    [Level(DType.E8M0, Whole)],
    [Level(DType.E8M0, 32), Level(DType.Float32, Whole)],
    [Level(DType.E8M0, 32), Level(DType.E8M0, 32)],
], ids=["block", "scale", "whole-vs-int", "extra-whole", "extra-int"])
def test_a_chain_differing_anywhere_is_a_different_format(second):
    element = fresh_element()
    a = make([Level(DType.E8M0, 32)], element)
    b = make(second, element)
    assert a is not b and a.structure() != b.structure()


def test_distinct_elements_with_equal_structures_are_different_formats():
    """'The same element' is the same descriptor: a second 4-bit Floating
    simple dtype is not E2M1, so its MX chain is not MXFP4."""
    twin = fresh_element(bits=4)
    assert twin.structure() == DType.E2M1.structure()
    d = make(mx_levels(), twin)
    assert d.structure() != DType.MXFP4.structure()


def test_structure_duplicate_leaves_the_name_free_for_another_chain():
    """Atomicity: a duplicate-structure failure claims neither name nor
    structure; the same name then registers a different chain."""
    element = fresh_element()
    make(mx_levels(), element)
    name = unique_name("BSatomic")
    with refused(ValueError):
        make(mx_levels(), element, name=name)
    assert_unregistered(name)
    assert name not in [d.name for d in DType.registered()]
    d = make([Level(DType.E8M0, 64)], element, name=name)
    assert DType.from_name(name) is d


def test_taken_name_is_refused_even_with_a_new_chain():
    """A name clash fails without claiming the new chain's structure."""
    element = fresh_element()
    taken = make(mx_levels(), element)
    with refused(ValueError):
        make([Level(DType.E8M0, 8)], element, name=taken.name)
    d = make([Level(DType.E8M0, 8)], element)  # the structure is still free
    assert d.levels == (Level(DType.E8M0, 8),)


@settings(max_examples=30, deadline=None)
@given(chain=CHAINS, element_bits=st.integers(1, 16))
def test_property_same_chain_never_registers_twice(chain, element_bits):
    """The same chain (rebuilt from equal Level values) under a second name,
    or through a subclass without extension, is refused naming the first;
    a subclass with an extension registers once."""
    element = fresh_element(bits=element_bits)
    first = make(levels_of(chain), element)
    count = len(BlockScaledDType.registered())

    class Alias(BlockScaledDType, abstract=False):
        pass

    class Extended(BlockScaledDType, abstract=False):
        def structure_extension(self):
            return ("ext",)

    for cls in (BlockScaledDType, Alias):
        name = unique_name("BSprop")
        with refused(ValueError) as info:
            cls(name, element=element, levels=levels_of(chain))
        assert first.name in str(info.value)
        assert_unregistered(name)
    ext = Extended(unique_name("BSpropX"), element=element, levels=levels_of(chain))
    with refused(ValueError):
        Extended(unique_name("BSpropX"), element=element, levels=levels_of(chain))
    assert len(BlockScaledDType.registered()) == count + 1
    assert BlockScaledDType.registered()[-1] is ext


# --------------------------------------------------------------------------
# Threads
# --------------------------------------------------------------------------

@pytest.mark.parametrize("round_", range(3))
def test_threads_racing_to_register_one_chain_yield_one_winner(fast_switching, round_):
    """N threads register the same chain under N names at once: exactly one
    succeeds; every other gets ValueError naming the winner and its name
    stays free."""
    n = 8
    element = fresh_element()
    names = [unique_name(f"BSrace{i}") for i in range(n)]
    barrier = threading.Barrier(n)
    results = [None] * n

    def worker(i):
        levels = [Level(DType.E4M3, 16), Level(DType.Float32, Whole)]
        barrier.wait()
        try:
            results[i] = BlockScaledDType(names[i], element=element, levels=levels)
        except Exception as exc:  # inspected below
            results[i] = exc

    before = len(DType.registered())
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    winners = [r for r in results if isinstance(r, BlockScaledDType)]
    losers = [r for r in results if not isinstance(r, BlockScaledDType)]
    assert len(winners) == 1, results
    winner = winners[0]
    assert all(type(r) is ValueError and winner.name in str(r) for r in losers), losers
    assert len(DType.registered()) == before + 1
    for name in names:
        if name != winner.name:
            assert_unregistered(name)
    assert DType.from_name(winner.name) is winner


# --------------------------------------------------------------------------
# Shared rules
# --------------------------------------------------------------------------

def test_mx_formats_share_one_level_extent():
    first = DType.MXFP4.representation_rules[0]
    assert (first.level, first.extent) == (0, 32)
    for name in MX_NAMES:
        assert getattr(DType, name).representation_rules == (first,)
    assert make().representation_rules[0] is first


def test_a_level_extent_is_shared_with_a_user_compound():
    """One rule object used by a block-scaled format and a user compound:
    both structures contain the rule's structure."""
    rule = DType.MXFP4.representation_rules[0]
    pair = PlanePair(unique_name("BSshare"), planes=[DType.E2M1, DType.E8M0],
                     rules=[rule])
    assert pair.representation_rules[0] is rule
    assert contains(pair.structure(), rule.structure())
    for p in PROTOCOLS:
        assert pickle.loads(pickle.dumps(pair, protocol=p)) is pair
    assert contains(DType.MXFP4.structure(), rule.structure()), (
        "a rule's structure is part of every compound dtype's structure that "
        "uses it; MXFP4 uses it but its structure does not contain it")


# --------------------------------------------------------------------------
# User subclasses
# --------------------------------------------------------------------------

def test_user_subclass_with_its_own_init():
    class MXFormat(BlockScaledDType, abstract=False):
        """One E8M0 scale per `block` elements."""

        def __init__(self, name, element, block=32):
            super().__init__(name, element=element, levels=[Level(DType.E8M0, block)])

    name = unique_name("BSmy")
    d = MXFormat(name, fresh_element(), block=64)
    assert type(d) is MXFormat and isinstance(d, BlockScaledDType)
    assert repr(d) == f"MXFormat({name!r})"
    assert d.levels == (Level(DType.E8M0, 64),)
    assert MXFormat.from_name(name) is d and BlockScaledDType.from_name(name) is d
    assert MXFormat.registered() == (d,)
    assert d in BlockScaledDType.registered()


def test_subclass_without_abstract_false_is_abstract():
    class Undeclared(BlockScaledDType):
        pass

    name = unique_name("BSabs")
    with refused(TypeError):
        Undeclared(name, element=ERR_ELEMENT, levels=mx_levels())
    assert_unregistered(name)


def test_subclass_init_that_never_initializes_the_base_is_a_type_error():
    class Lazy(BlockScaledDType, abstract=False):
        def __init__(self, name):
            pass

    name = unique_name("BSlazy")
    with refused(TypeError):
        Lazy(name)
    assert_unregistered(name)


def test_compound_init_on_a_block_scaled_instance_is_a_type_error():
    """Planes and rules are derived; the generic compound base cannot be
    used to initialize a block-scaled dtype."""
    class Sneaky(BlockScaledDType, abstract=False):
        def __init__(self, name):
            CompoundDType.__init__(self, name, simple_types=[DType.E2M1, DType.E8M0])

    name = unique_name("BSsneak")
    with refused(TypeError, match="levels"):
        Sneaky(name)
    assert_unregistered(name)


BS_OWNED = ["element", "levels", "num_axes", "bits_per_element"]
INHERITED_OWNED = ["simple_types", "num_carriers", "representation_rules",
                   "structure", "name", "supertype"]


@pytest.mark.parametrize("member", BS_OWNED + INHERITED_OWNED)
def test_subclass_defining_a_model_owned_member_is_a_type_error(member):
    for value in (property(lambda self: 1), 1, lambda self: 1):
        with pytest.raises(TypeError):
            types.new_class("Shadow", (BlockScaledDType,), {"abstract": False},
                            lambda ns: ns.update({member: value}))
        with pytest.raises(TypeError):
            types.new_class("ShadowAbstract", (BlockScaledDType,), {},
                            lambda ns: ns.update({member: value}))


def test_shadowing_through_a_mixin_is_a_type_error():
    class Mixin:
        @property
        def bits_per_element(self):
            return 0.0

    with pytest.raises(TypeError):
        class Cheap(Mixin, BlockScaledDType, abstract=False):
            pass


# --------------------------------------------------------------------------
# Immutability and copying
# --------------------------------------------------------------------------

@pytest.mark.parametrize("attr", BS_OWNED + INHERITED_OWNED + ["new_attribute"])
def test_setting_or_deleting_an_attribute_raises(attr):
    d = make()
    before = d.structure()
    with pytest.raises(AttributeError):
        setattr(d, attr, 1)
    with pytest.raises(AttributeError):
        delattr(d, attr)
    with pytest.raises(AttributeError):
        setattr(DType.NVFP4, attr, 1)
    assert d.structure() == before
    assert DType.NVFP4.bits_per_element == SymbolicBits(4.5, 32)


@pytest.mark.parametrize("attr", BS_OWNED)
def test_class_level_accessor_assignment_raises(attr):
    with pytest.raises(AttributeError):
        setattr(BlockScaledDType, attr, property(lambda self: 0))
    with pytest.raises(AttributeError):
        delattr(BlockScaledDType, attr)
    assert DType.MXFP4.bits_per_element == 4.25


def test_builtin_bindings_cannot_be_replaced():
    with pytest.raises(AttributeError):
        DType.MXFP4 = make()
    with pytest.raises(AttributeError):
        del DType.NVFP4
    assert DType.from_name("NVFP4") is DType.NVFP4


def test_copy_and_deepcopy_return_the_same_descriptor():
    ext = make(nv_levels())
    for d in [getattr(DType, n) for n in BUILTIN_BLOCK_SCALED] + [ext]:
        assert copy.copy(d) is d
        assert copy.deepcopy(d) is d
        assert copy.deepcopy({"d": [d, (d,)]})["d"][1][0] is d


def test_levels_tuple_holds_immutable_levels():
    d = DType.NVFP4
    with pytest.raises(TypeError):
        d.levels[0] = Level(DType.E8M0, 32)
    with pytest.raises(AttributeError):
        d.levels[0].block = 32
    assert d.levels[0].block == 16


# --------------------------------------------------------------------------
# Built-in table
# --------------------------------------------------------------------------

@pytest.mark.parametrize("name", BUILTIN_BLOCK_SCALED)
def test_builtin_matches_the_table(name):
    element, chain = BUILTIN_TABLE[name]
    d = getattr(DType, name)
    assert type(d) is BlockScaledDType
    assert d.name == name
    assert d.element is DType.from_name(element)
    assert d.levels == tuple(Level(DType.from_name(s), b) for s, b in chain)
    assert d.simple_types == (d.element, *[DType.from_name(s) for s, _ in chain])
    assert [(r.level, r.extent) for r in d.representation_rules] == [
        (i, b) for i, (_, b) in enumerate(chain)]


@pytest.mark.parametrize("name", BUILTIN_BLOCK_SCALED)
def test_builtin_resolves_through_every_surface(name):
    d = getattr(DType, name)
    assert DType.from_name(name) is d
    assert CompoundDType.from_name(name) is d
    assert BlockScaledDType.from_name(name) is d
    with pytest.raises(LookupError):
        SimpleDType.from_name(name)
    with pytest.raises(LookupError):
        DTypeCategory.from_name(name)


@pytest.mark.parametrize("name, bits", [
    ("MXFP8_E4M3", 8.25), ("MXFP8_E5M2", 8.25), ("MXFP6_E3M2", 6.25),
    ("MXFP6_E2M3", 6.25), ("MXFP4", 4.25), ("MXINT8", 8.25),
    ("NVFP4", SymbolicBits(4.5, 32)),
])
def test_builtin_bits_per_element(name, bits):
    assert getattr(DType, name).bits_per_element == bits
    assert type(getattr(DType, name).bits_per_element) is type(bits)


@pytest.mark.parametrize("name, axes", [(n, 1) for n in BUILTIN_BLOCK_SCALED])
def test_builtin_num_axes(name, axes):
    assert getattr(DType, name).num_axes == axes


def test_registered_includes_the_seven_and_narrows_by_class():
    everything = DType.registered()
    block_scaled = BlockScaledDType.registered()
    for name in BUILTIN_BLOCK_SCALED:
        assert getattr(DType, name) in everything
        assert getattr(DType, name) in block_scaled
        assert getattr(DType, name) in CompoundDType.registered()
        assert getattr(DType, name) not in SimpleDType.registered()
    assert all(isinstance(d, BlockScaledDType) for d in block_scaled)
    assert [d.name for d in block_scaled[:7]] == list(BUILTIN_BLOCK_SCALED)
    pair = PlanePair(unique_name("BSnarrow"), planes=[DType.E2M1, DType.E8M0])
    assert pair in CompoundDType.registered()
    assert pair not in BlockScaledDType.registered()
    ext = make()
    assert ext in BlockScaledDType.registered()
    assert BlockScaledDType.registered() == tuple(
        d for d in DType.registered() if isinstance(d, BlockScaledDType))


def test_from_name_refuses_other_kinds():
    pair = PlanePair(unique_name("BSkind"), planes=[DType.E2M1])
    for name in ("Float32", "Any", pair.name):
        with pytest.raises(LookupError):
            BlockScaledDType.from_name(name)
    with pytest.raises(LookupError):
        BlockScaledDType.from_name(unique_name("BSnever"))
    with pytest.raises(TypeError):
        BlockScaledDType.from_name(DType.MXFP4)


def test_extension_formats_do_not_join_the_dtype_namespace():
    ext = make()
    assert not hasattr(DType, ext.name)
    with pytest.raises(AttributeError):
        setattr(DType, ext.name, ext)
    assert DType.from_name(ext.name) is ext


# --------------------------------------------------------------------------
# Pickling in this process
# --------------------------------------------------------------------------

@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("name", BUILTIN_BLOCK_SCALED)
def test_builtin_round_trips_to_the_same_identity(name, protocol):
    d = getattr(DType, name)
    with registry_unchanged():
        assert pickle.loads(pickle.dumps(d, protocol=protocol)) is d


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_extension_formats_round_trip_to_the_same_identity(protocol):
    class Tagged(BlockScaledDType, abstract=False):
        def structure_extension(self):
            return ("tag", 1.5, None, Whole)

    formats = [make(), make(nv_levels()), make([Level(DType.Float32, Whole)]),
               make(cls=Tagged)]
    loaded = pickle.loads(pickle.dumps([formats, {"nv": DType.NVFP4}], protocol=protocol))
    assert all(a is b for a, b in zip(loaded[0], formats))
    assert loaded[1]["nv"] is DType.NVFP4


def test_reduce_is_the_reconstructor_with_name_and_structure():
    class ImplementationDetail(BlockScaledDType, abstract=False):
        pass

    sub = make(cls=ImplementationDetail)
    builtins = [getattr(DType, n) for n in BUILTIN_BLOCK_SCALED]
    for d in builtins + [make(), sub]:
        fn, args = d.__reduce__()
        assert fn is _dtypes._reconstruct
        # built-ins name no module; an extension names the module that
        # defined it (make() calls the model class from this module), never
        # its class
        module = () if d in builtins else (__name__,)
        assert args[0][0] == d.name and args[1:] == module
        assert fn(*args) is d
        # protocols 0 and 1: the version-1 payload, then (an extension with
        # planes of its own) the numeric records the record states last
        v1 = d.__reduce_ex__(1)[1]
        assert v1[:2 + len(module)] == (d.name, d.structure()) + module
        assert v1[2 + len(module):] == (() if d in builtins else (args[0][-1],))
    for protocol in PROTOCOLS:
        assert b"ImplementationDetail" not in pickle.dumps(sub, protocol=protocol)


def _replace_at(s, path, new):
    if not path:
        return new
    i = path[0]
    return s[:i] + (_replace_at(s[i], path[1:], new),) + s[i + 1:]


def _levels_index(s):
    return next(i for i, item in enumerate(s)
                if type(item) is tuple and item and item[0] == "levels")


def _with_levels(d, levels_structure):
    s = d.structure()
    return _replace_at(s, (_levels_index(s),), ("levels", levels_structure))


def _without(msg, *names):
    for n in names:
        msg = msg.replace(n, "")
    return msg


def _load_refused(name, payload):
    """Loading payload under name is a ValueError, by a direct call of the
    reconstructor and through pickle in every protocol, with the same message;
    the registered descriptor stays the identity."""
    registered = DType.from_name(name)
    with refused(ValueError) as info:
        _dtypes._reconstruct(name, payload)
    message = str(info.value)
    for protocol in PROTOCOLS:
        with refused(ValueError) as info:
            pickle.loads(_crafted(name, payload, protocol))
        assert str(info.value) == message
    assert DType.from_name(name) is registered
    return message


class _Payload:
    def __init__(self, name, structure):
        self.name, self.structure = name, structure

    def __reduce__(self):
        return (_dtypes._reconstruct, (self.name, self.structure))


def _crafted(name, structure, protocol=2):
    return pickle.dumps(_Payload(name, structure), protocol=protocol)


def test_crafted_payload_with_the_same_structure_loads_the_identity():
    d = make(nv_levels())
    for protocol in PROTOCOLS:
        assert pickle.loads(_crafted(d.name, d.structure(), protocol)) is d


def test_load_with_a_different_block_names_both_blocks():
    d = make([Level(DType.E8M0, 32)])
    msg = _load_refused(d.name, _with_levels(d, (_level_structure(DType.E8M0, 16),)))
    msg = _without(msg, d.name, d.element.name)
    assert "block" in msg and "16" in msg and "32" in msg, msg
    assert DType.from_name(d.name) is d


def test_load_with_a_different_scale_names_both_scales():
    d = make([Level(DType.E8M0, 32)])
    msg = _load_refused(d.name, _with_levels(d, (_level_structure(DType.E4M3, 32),)))
    assert "scale" in msg and "E8M0" in msg and "E4M3" in msg, msg


def test_load_with_whole_instead_of_an_integer_block_is_refused():
    d = make([Level(DType.E8M0, 32)])
    msg = _load_refused(d.name, _with_levels(d, (_level_structure(DType.E8M0, Whole),)))
    msg = _without(msg, d.name, d.element.name)
    assert "block" in msg and "32" in msg and "whole" in msg.lower(), msg


def test_load_with_an_integer_block_instead_of_whole_is_refused():
    d = make(nv_levels())
    payload = _with_levels(d, (_level_structure(DType.E4M3, 16),
                               _level_structure(DType.Float32, 64)))
    msg = _without(_load_refused(d.name, payload), d.name, d.element.name)
    assert "block" in msg and "64" in msg and "whole" in msg.lower(), msg


@pytest.mark.parametrize("levels", [
    (), (("E8M0", 32), ("Float32", Whole)), (("E8M0", 32), ("E8M0", 32)),
], ids=["no-level", "extra-whole", "extra-int"])
def test_load_with_a_different_number_of_levels_is_refused(levels):
    d = make([Level(DType.E8M0, 32)])
    payload = _with_levels(d, tuple(_level_structure(DType.from_name(s), b)
                                    for s, b in levels))
    msg = _load_refused(d.name, payload)
    assert "levels" in msg, msg


def test_load_with_a_different_element_is_refused():
    d = make(mx_levels(), fresh_element(bits=5))
    s = d.structure()
    i = next(k for k, item in enumerate(s) if type(item) is tuple and item[0] == "element")
    payload = _replace_at(s, (i,), ("element", ref(DType.E2M1)))
    msg = _load_refused(d.name, payload)
    assert "element" in msg and "E2M1" in msg, msg


def test_load_of_a_builtin_with_a_mutated_level_is_refused():
    payload = _with_levels(DType.NVFP4, (_level_structure(DType.E4M3, 32),
                                         _level_structure(DType.Float32, Whole)))
    msg = _load_refused("NVFP4", payload)
    assert "16" in msg and "32" in msg, msg
    payload = _with_levels(DType.MXFP4, (_level_structure(DType.E8M0, 32),
                                         _level_structure(DType.Float32, Whole)))
    _load_refused("MXFP4", payload)


def test_load_with_an_extension_difference_is_refused():
    class Tagged(BlockScaledDType, abstract=False):
        def structure_extension(self):
            return ("alpha",)

    d = make(cls=Tagged)
    s = d.structure()
    payload = s[:-1] + (("extension", ("str:omega",)),)
    msg = _load_refused(d.name, payload)
    assert "alpha" in msg and "omega" in msg, msg
    plain = make()
    _load_refused(plain.name, plain.structure()[:-1] + (("extension", ("str:alpha",)),))


def test_load_of_another_format_structure_is_refused():
    for name, other in [("MXFP4", "NVFP4"), ("MXFP4", "MXFP8_E4M3"),
                        ("MXINT8", "MXFP8_E4M3"), ("NVFP4", "MXFP4")]:
        _load_refused(name, getattr(DType, other).structure())


def test_load_with_a_plain_compound_structure_is_refused():
    pair = PlanePair(unique_name("BSpp"), planes=list(DType.MXFP4.simple_types),
                     rules=list(DType.MXFP4.representation_rules))
    _load_refused("MXFP4", pair.structure())
    _load_refused(pair.name, DType.MXFP4.structure())


def test_mismatch_message_says_which_level_differs():
    """With two equal levels, a difference in the first and one in the
    second are different places: the message must tell them apart."""
    d = make([Level(DType.E8M0, 32), Level(DType.E8M0, 32)])
    lv16 = _level_structure(DType.E8M0, 16)
    lv32 = _level_structure(DType.E8M0, 32)
    first = _load_refused(d.name, _with_levels(d, (lv16, lv32)))
    second = _load_refused(d.name, _with_levels(d, (lv32, lv16)))
    assert first != second, (
        f"both mismatches are reported identically, not naming the level: {first}")
    assert "levels[0].Level.block: registered 32 (int), pickle has 16 (int)" in first
    assert "levels[1].Level.block: registered 32 (int), pickle has 16 (int)" in second


def test_mismatch_of_whole_against_an_integer_block_reads_whole():
    """Whole vs an integer block is named as Whole in the message."""
    d = make([Level(DType.E4M3, 16), Level(DType.Float32, Whole)])
    payload = _with_levels(d, (_level_structure(DType.E4M3, 16),
                               _level_structure(DType.Float32, 8)))
    message = _load_refused(d.name, payload)
    assert "levels[1].Level.block: registered Whole, pickle has 8 (int)" in message


def test_bits_per_element_beyond_a_float_is_a_value_error():
    """An element too wide for bits_per_element as a float is refused with a
    ValueError naming the element; nothing is registered."""
    huge = SimpleDType(unique_name("Huge"), bits=10**400, supertype=DType.Floating)
    name = unique_name("HugeBS")
    with refused(ValueError, match="element SimpleDType.*exceed the range of a float"):
        BlockScaledDType(name, element=huge, levels=[Level(DType.E8M0, 32)])
    assert_unregistered(name)


# --------------------------------------------------------------------------
# Pickling across a real child process
# --------------------------------------------------------------------------

_CHILD = textwrap.dedent(r"""
    import base64, json, pickle, sys
    from stride_weave.dtypes import BlockScaledDType, DType, Level, SimpleDType, Whole

    job = json.loads(sys.stdin.read())
    mine = {}
    for spec in job["defs"]:
        ename, ebits = spec["element"]
        element = SimpleDType(ename, bits=ebits, supertype=DType.Floating)
        levels = [Level(DType.from_name(s), Whole if b == "whole" else b)
                  for s, b in spec["levels"]]
        mine[spec["format"]] = BlockScaledDType(spec["format"], element=element,
                                                levels=levels)

    def outcome(blob, key):
        try:
            loaded = pickle.loads(base64.b64decode(blob))
        except Exception as exc:
            return [type(exc).__name__, str(exc)]
        expected = DType.from_name(key)
        if key in job["builtins"] and getattr(DType, key) is not expected:
            return "builtin binding differs"
        return "identity" if loaded is expected else "other"

    loaded = {key: [outcome(b, key) for b in blobs]
              for key, blobs in job["payloads"].items()}
    pickles = {key: [base64.b64encode(pickle.dumps(d, protocol=p)).decode()
                     for p in range(6)]
               for key, d in mine.items()}
    sys.stdout.write(json.dumps({"loaded": loaded, "pickles": pickles}))
""")

# variant -> (parent chain, chain the "different" child registers, words the
# ValueError must contain).  The element name differs per variant; the
# "element" variant keeps the chain and changes the element's width instead.
_VARIANTS = {
    "block": ([("E8M0", 32)], [("E8M0", 16)], ["block", "32", "16"]),
    "scale": ([("E8M0", 32)], [("E4M3", 32)], ["scale", "E8M0", "E4M3"]),
    "int_vs_whole": ([("E8M0", 32)], [("E8M0", "whole")], ["block", "32", "whole"]),
    "whole_vs_int": ([("E4M3", 16), ("Float32", "whole")],
                     [("E4M3", 16), ("Float32", 64)], ["block", "64", "whole"]),
    "extra_level": ([("E8M0", 32)], [("E8M0", 32), ("Float32", "whole")], ["levels"]),
    "missing_level": ([("E4M3", 16), ("Float32", "whole")], [("E4M3", 16)], ["levels"]),
    "element": ([("E8M0", 32)], [("E8M0", 32)], ["bits", "5", "7"]),
}


def _levels_from(chain):
    return [Level(DType.from_name(s), Whole if b == "whole" else b) for s, b in chain]


@pytest.fixture(scope="module")
def parent_formats():
    """variant -> (element name, format name, the parent's registered format)."""
    out = {}
    for variant, (chain, _, _) in _VARIANTS.items():
        element = SimpleDType(unique_name(f"BSce_{variant}"), bits=5,
                              supertype=DType.Floating)
        fmt = BlockScaledDType(unique_name(f"BScf_{variant}"), element=element,
                               levels=_levels_from(chain))
        out[variant] = (element.name, fmt.name, fmt)
    return out


def _defs(parent_formats, which):
    defs = []
    for variant, (parent_chain, child_chain, _) in _VARIANTS.items():
        ename, fname, _ = parent_formats[variant]
        chain = parent_chain if which == "same" else child_chain
        bits = 7 if (which == "different" and variant == "element") else 5
        defs.append({"element": [ename, bits], "format": fname,
                     "levels": [[s, b] for s, b in chain]})
    return defs


def _run_child(parent_formats, which):
    payloads = {}
    for name in BUILTIN_BLOCK_SCALED:
        payloads[name] = [base64.b64encode(pickle.dumps(getattr(DType, name), protocol=p)).decode()
                          for p in PROTOCOLS]
    for _, fname, fmt in parent_formats.values():
        payloads[fname] = [base64.b64encode(pickle.dumps(fmt, protocol=p)).decode()
                           for p in PROTOCOLS]
    job = {"defs": [] if which == "none" else _defs(parent_formats, which),
           "payloads": payloads, "builtins": list(BUILTIN_BLOCK_SCALED)}
    proc = run_python(["-c", _CHILD], input=json.dumps(job))
    assert_exited(proc)
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def child_runs(parent_formats):
    cache = {}

    def run(which):
        if which not in cache:
            cache[which] = _run_child(parent_formats, which)
        return cache[which]

    return run


def _assert_builtins_identity(result):
    for name in BUILTIN_BLOCK_SCALED:
        assert result["loaded"][name] == ["identity"] * len(PROTOCOLS), (
            name, result["loaded"][name])


def test_child_unpickles_parent_pickles_as_its_own_identities(parent_formats, child_runs):
    """Every built-in format, and extension formats the child registered
    identically, load in the child as the child's registered descriptors."""
    result = child_runs("same")
    _assert_builtins_identity(result)
    for _, fname, _ in parent_formats.values():
        assert result["loaded"][fname] == ["identity"] * len(PROTOCOLS), (
            fname, result["loaded"][fname])


def test_parent_unpickles_child_pickles_as_its_own_identities(parent_formats, child_runs):
    result = child_runs("same")
    for _, fname, fmt in parent_formats.values():
        blobs = result["pickles"][fname]
        assert len(blobs) == len(PROTOCOLS)
        for blob in blobs:
            assert pickle.loads(base64.b64decode(blob)) is fmt


def test_child_without_the_extension_raises_lookup_error(parent_formats, child_runs):
    result = child_runs("none")
    _assert_builtins_identity(result)
    for _, fname, _ in parent_formats.values():
        for outcome in result["loaded"][fname]:
            assert isinstance(outcome, list) and outcome[0] == "LookupError", (fname, outcome)


@pytest.mark.parametrize("variant", list(_VARIANTS))
def test_child_with_a_different_chain_refuses_the_parent_pickle(
        parent_formats, child_runs, variant):
    """A mismatch in any level (scale, block, Whole vs integer, count) or in
    the element is a ValueError on load naming the first difference."""
    ename, fname, _ = parent_formats[variant]
    result = child_runs("different")
    _assert_builtins_identity(result)
    for outcome in result["loaded"][fname]:
        assert isinstance(outcome, list) and outcome[0] == "ValueError", (variant, outcome)
        msg = _without(outcome[1], fname, ename)
        for word in _VARIANTS[variant][2]:
            assert word in msg.lower() or word in msg, (variant, word, outcome[1])


@pytest.mark.parametrize("variant", list(_VARIANTS))
def test_parent_refuses_a_child_pickle_of_a_different_chain(
        parent_formats, child_runs, variant):
    """The reverse direction: the child registered the same name with a
    different chain and pickled it; loading here is a ValueError naming the
    first difference, and this process's descriptor is unchanged."""
    ename, fname, fmt = parent_formats[variant]
    before = fmt.structure()
    blobs = child_runs("different")["pickles"][fname]
    assert len(blobs) == len(PROTOCOLS)
    for blob in blobs:
        with refused(ValueError) as info:
            pickle.loads(base64.b64decode(blob))
        msg = _without(str(info.value), fname, ename)
        for word in _VARIANTS[variant][2]:
            assert word in msg.lower() or word in msg, (variant, word, str(info.value))
    assert DType.from_name(fname) is fmt and fmt.structure() == before


# --------------------------------------------------------------------------
# N-D blocks: a tuple block at level 0, every later level Whole
# --------------------------------------------------------------------------

def nd_levels(block=(16, 16)):
    return [Level(DType.E4M3, block), Level(DType.Float32, Whole)]


@pytest.mark.parametrize("levels, shape", [
    ([Level(DType.E8M0, 32)], (32,)),
    ([Level(DType.E4M3, 16), Level(DType.Float32, Whole)], (16,)),
    ([Level(DType.E8M0, 8), Level(DType.E4M3, 4)], (8,)),
    ([Level(DType.E4M3, (16, 16)), Level(DType.Float32, Whole)], (16, 16)),
    ([Level(DType.Float32, (128, 128))], (128, 128)),
    ([Level(DType.Float32, (2, 3, 4))], (2, 3, 4)),
    ([Level(DType.Float32, Whole)], None),
], ids=["mx", "nv", "two-int", "16x16+whole", "128x128", "3-d", "whole-only"])
def test_block_shape_is_level_zeros_block_as_a_shape(levels, shape):
    d = make(levels)
    assert d.block_shape == shape
    assert d.block_shape == d.levels[0].block_shape


@pytest.mark.parametrize("name, shape", [
    ("MXFP8_E4M3", (32,)), ("MXFP8_E5M2", (32,)), ("MXFP6_E3M2", (32,)),
    ("MXFP6_E2M3", (32,)), ("MXFP4", (32,)), ("MXINT8", (32,)), ("NVFP4", (16,))])
def test_builtins_block_shapes_are_one_dimensional(name, shape):
    assert getattr(DType, name).block_shape == shape


def test_nd_level_zero_keeps_its_tuple_rules_and_planes():
    element = fresh_element()
    d = make(nd_levels(), element)
    assert d.levels == (Level(DType.E4M3, (16, 16)), Level(DType.Float32, Whole))
    assert d.levels[0].block == (16, 16) and type(d.levels[0].block) is tuple
    assert d.simple_types == (element, DType.E4M3, DType.Float32)
    assert [(r.level, r.extent) for r in d.representation_rules] == [(0, (16, 16)),
                                                                     (1, Whole)]
    assert all(type(r) is LevelExtent for r in d.representation_rules)


def test_num_axes_keeps_counting_levels_that_are_not_whole():
    """An N-D block is one level of blocks: num_axes does not count its
    dimensions."""
    assert make(nd_levels()).num_axes == 1
    assert make([Level(DType.Float32, (128, 128))]).num_axes == 1
    assert make([Level(DType.Float32, (2, 2, 2, 2))]).num_axes == 1


@pytest.mark.parametrize("element_bits, levels, expected", [
    (4, nd_levels(), SymbolicBits(4.03125, 32)),                       # 4 + 8/256
    (8, [Level(DType.E8M0, (32, 32))], 8.0078125),                     # 8 + 8/1024
    (8, [Level(DType.Float32, (128, 128))], 8.001953125),              # 8 + 32/16384
    (8, [Level(DType.Float32, 128)], 8.25),                            # 8 + 32/128
    (4, [Level(DType.E8M0, (2, 3, 4))], float(4 + Fraction(8, 24))),
], ids=["16x16+whole", "32x32", "128x128", "1x128", "2x3x4"])
def test_bits_per_element_divides_each_scale_by_the_block_product(element_bits, levels,
                                                                  expected):
    d = make(levels, fresh_element(bits=element_bits))
    assert type(d.bits_per_element) is type(expected)
    assert d.bits_per_element == expected


@pytest.mark.parametrize("levels, message", [
    ([Level(DType.E4M3, (16, 16)), Level(DType.Float32, 4)],
     "BlockScaledDType.__init__(): levels[0] has the N-D block (16, 16), so every later "
     "level must be Whole, got block=4 at levels[1]"),
    ([Level(DType.E4M3, (16, 16)), Level(DType.Float32, (2, 2))],
     "BlockScaledDType.__init__(): only levels[0] may have an N-D (tuple) block, got "
     "(2, 2) at levels[1]"),
    ([Level(DType.E4M3, 16), Level(DType.Float32, (2, 2))],
     "BlockScaledDType.__init__(): only levels[0] may have an N-D (tuple) block, got "
     "(2, 2) at levels[1]"),
    ([Level(DType.E4M3, 16), Level(DType.E4M3, 2), Level(DType.Float32, (2, 2))],
     "BlockScaledDType.__init__(): only levels[0] may have an N-D (tuple) block, got "
     "(2, 2) at levels[2]"),
    ([Level(DType.E4M3, (16, 16)), Level(DType.E4M3, 2), Level(DType.Float32, Whole)],
     "BlockScaledDType.__init__(): levels[0] has the N-D block (16, 16), so every later "
     "level must be Whole, got block=2 at levels[1]"),
], ids=["int-after-nd", "nd-after-nd", "nd-at-1", "nd-at-2", "int-between"])
def test_an_nd_block_off_level_zero_or_under_a_later_integer_level_is_refused(levels,
                                                                            message):
    """Refused before the name is registered: the name stays free."""
    name = unique_name("BSnd")
    info = assert_refused_and_name_free(
        ValueError, lambda: BlockScaledDType(name, element=ERR_ELEMENT, levels=levels),
        name)
    assert str(info.value) == message


def test_nd_structure_is_a_tuple_of_int_leaves():
    d = make(nd_levels())
    assert field(d.structure(), "levels") == (
        ("Level", ("scale", ref(DType.E4M3)), ("block", ("int:16", "int:16"))),
        ("Level", ("scale", ref(DType.Float32)), ("block", "whole")))
    assert field(d.structure(), "representation_rules") == (
        LevelExtent(0, (16, 16)).structure(), LevelExtent(1, Whole).structure())
    assert all(type(leaf) is str for leaf in walk_leaves(d.structure()))


def test_large_nd_entries_use_the_hex_int_encoding():
    d = make([Level(DType.Float32, (2 ** 70, 2))])
    assert field(d.structure(), "levels")[0][2] == ("block", (f"int:{hex(2 ** 70)}", "int:2"))


@pytest.mark.parametrize("second", [
    [Level(DType.E4M3, (16, 32)), Level(DType.Float32, Whole)],
    [Level(DType.E4M3, (32, 16)), Level(DType.Float32, Whole)],
    [Level(DType.E4M3, (16, 16, 2)), Level(DType.Float32, Whole)],
    [Level(DType.E4M3, 256), Level(DType.Float32, Whole)],
    [Level(DType.E4M3, 16), Level(DType.Float32, Whole)],
    [Level(DType.E4M3, (16, 16))],
], ids=["16x32", "32x16", "3-d", "same-size-int", "int", "no-whole"])
def test_an_nd_chain_differing_in_its_block_is_a_different_format(second):
    element = fresh_element()
    a = make(nd_levels(), element)
    b = make(second, element)
    assert a is not b and a.structure() != b.structure()


def test_uniqueness_by_structure_covers_nd_blocks():
    class Alias(BlockScaledDType, abstract=False):
        pass

    element = fresh_element()
    first = make(nd_levels(), element)
    for cls in (BlockScaledDType, Alias):
        name = unique_name("BSndDup")
        with refused(ValueError) as info:
            cls(name, element=element, levels=nd_levels((16, 16)))
        assert first.name in str(info.value)
        assert_unregistered(name)


def test_ensure_names_a_differing_nd_block_and_both_values():
    element = fresh_element()
    d = make(nd_levels(), element)
    assert BlockScaledDType.ensure(d.name, element=element, levels=nd_levels()) is d
    for block, theirs in [((16, 32), "(16, 32) (tuple)"), (16, "16 (int)"),
                          ((16, 16, 2), "(16, 16, 2) (tuple)")]:
        with refused(ValueError) as info:
            BlockScaledDType.ensure(d.name, element=element, levels=nd_levels(block))
        assert ("at BlockScaledDType.levels[0].Level.block: registered (16, 16) (tuple), "
                f"this definition has {theirs}") in str(info.value)


def test_derived_nd_rules_validate_a_representation_counted_in_blocks():
    """4096 elements in 16x16 blocks: 16 scales, then one whole scale."""
    from test_level_extent import make_context

    d = make(nd_levels())
    ctx = make_context([4096, 16, 1], [256, 16], dtype=d)
    for rule in d.representation_rules:
        assert rule.validate(ctx) is None
    with pytest.raises(ValueError, match=re.escape(d.name)):
        d.representation_rules[0].validate(make_context([4096, 17, 1], [256, 17], dtype=d))


ND_CHAINS = st.tuples(
    st.integers(1, 64),
    st.lists(st.integers(2, 2 ** 20), min_size=2, max_size=4).map(tuple),
    st.one_of(st.none(), st.integers(1, 64)),
).map(lambda c: ((c[0], c[1]),) + (() if c[2] is None else ((c[2], Whole),)))


def _product(block):
    size = 1
    for extent in block:
        size *= extent
    return size


@settings(max_examples=40, deadline=None)
@given(element_bits=st.integers(1, 64), chain=ND_CHAINS)
def test_property_nd_chains_follow_the_formula_and_register_once(element_bits, chain):
    """For random N-D chains: bits_per_element is element bits plus level
    0's scale bits over the block's product (SymbolicBits under a final
    Whole), block_shape is the tuple, num_axes is 1, and the same chain
    never registers twice."""
    element = fresh_element(bits=element_bits)
    d = make(levels_of(chain), element)
    (scale_bits, block) = chain[0]
    constant = float(Fraction(element_bits) + Fraction(scale_bits, _product(block)))
    if len(chain) == 2:
        assert d.bits_per_element == SymbolicBits(constant, chain[1][0])
    else:
        assert type(d.bits_per_element) is float and d.bits_per_element == constant
    assert d.block_shape == block and d.num_axes == 1
    assert field(d.structure(), "levels")[0][2] == (
        "block", tuple(f"int:{b}" for b in block))
    name = unique_name("BSndProp")
    with refused(ValueError):
        BlockScaledDType(name, element=element, levels=levels_of(chain))
    assert_unregistered(name)


def test_help_says_what_num_axes_counts_and_where_an_nd_block_is():
    import pydoc

    text = " ".join(pydoc.render_doc(BlockScaledDType, renderer=pydoc.plaintext).split())
    assert ("num_axes counts the levels that are not Whole (nested levels of blocks), "
            "not tensor axes") in text
    assert "Level 0's block may be N-D, a tuple such as (16, 16) (block_shape)" in text
    assert "It does not count tensor axes" in BlockScaledDType.num_axes.__doc__
    assert "(16, 16)" in BlockScaledDType.block_shape.__doc__
    level_help = " ".join(pydoc.render_doc(Level, renderer=pydoc.plaintext).split())
    assert "a tuple of at least two ints, each at least 2 (an N-D block" in level_help
    assert "block_shape" in level_help and "block_size" in level_help
