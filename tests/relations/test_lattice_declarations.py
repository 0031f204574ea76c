"""Declaring edges: what is refused, and that a refusal changes nothing.

Into the default lattice (declare_promotion, declare_promotions) and into a
lattice of one's own (extend): a declaration that would change a defined
result, leave a pair with upper bounds but no least one, close a cycle,
lose values (unless lossy=True in a lattice of one's own), or take a dtype
the default lattice does not admit is a ValueError naming the pair, and
leaves the lattice exactly as it was.  Declarations in this module touch
only dtypes they register, so the rest of the suite sees the same default
lattice.
"""
import copy
import pickle

import pytest

from support import unique_name
from support.child import child_report
from support.defs import PlanePair
from support.relations import check_lattice_laws, extension_with_record, join_table
from stride_weave.dtypes import (
    DType,
    PromotionLattice,
    SimpleDType,
    declare_promotion,
    declare_promotions,
    default_lattice,
    promote_types,
    result_type,
)
from stride_weave.numerics import NumericInfo


def fresh_ints(*bits, signed=True):
    """New extension integers of the given widths (their values nest)."""
    return [extension_with_record(unique_name(f"DeclI{b}"),
                                  NumericInfo.integer(b, signed=signed))
            for b in bits]


def lattice_of(edges, **kwargs):
    return default_lattice().extend(edges, **kwargs)


# ---- the default lattice ------------------------------------------------------


def test_a_declaration_publishes_a_new_lattice_and_keeps_the_old_one():
    a, b, c = fresh_ints(16, 24, 32)
    before = default_lattice()
    declare_promotion(a, b)
    after = default_lattice()
    assert after is not before
    assert promote_types(a, b) is b
    # a snapshot never changes
    assert a not in before.dtypes
    with pytest.raises(TypeError):
        before.promote_types(a, b)
    declare_promotions([(b, c)])
    assert promote_types(a, c) is c
    assert after.promote_types(a, b) is b


def test_declaring_what_holds_already_changes_nothing():
    a, b, c = fresh_ints(16, 24, 32)
    declare_promotions([(a, b), (b, c)])
    current = default_lattice()
    declare_promotion(a, c)          # implied
    declare_promotion(a, b)          # declared
    declare_promotions([])
    assert default_lattice() is current


def _refused(call, match, *, exc=ValueError):
    before = default_lattice()
    table = join_table(promote_types, before.dtypes)
    with pytest.raises(exc, match=match):
        call()
    assert default_lattice() is before
    assert join_table(promote_types, before.dtypes) == table


def test_a_lossy_edge_is_refused():
    _refused(lambda: declare_promotion(DType.Int32, DType.Float32),
             r"declare_promotion: the edge Int32 -> Float32 is not lossless: not "
             r"every Int32 value is a Float32 value \(can_cast\(Int32, Float32\) is "
             r"False\); lossy edges go in a lattice of one's own")


@pytest.mark.parametrize("lower, upper, why", [
    ("E4M3", "Float64", "a floating-point format narrower than 16 bits"),
    ("Int4", "Int8", "an integer format narrower than 8 bits"),
    ("E5M2FNUZ", "Float32", "an fnuz format"),
    ("MXFP4", "Float32", "a block-scaled format"),
    ("Floating", "Float32", "a category, not a dtype of values"),
])
def test_dtypes_the_default_lattice_does_not_admit(lower, upper, why):
    import stride_weave.formats  # noqa: F401  (Int4, E5M2FNUZ)

    lo, up = DType.from_name(lower), DType.from_name(upper)
    _refused(lambda: declare_promotion(lo, up),
             rf"declare_promotion: {lower} -> {upper}: {lower} takes part in no "
             rf"implicit promotion \({why}")


def test_a_dtype_without_a_record_is_not_admitted():
    plain = SimpleDType(unique_name("DeclPlain"), bits=32, supertype=DType.Floating)
    _refused(lambda: declare_promotion(DType.Float32, plain), r"has no numeric record")


def test_a_change_of_an_existing_result_is_refused_and_named():
    x, y = fresh_ints(16, 16, signed=False)[0], fresh_ints(16)[0]
    top = fresh_ints(64)[0]
    declare_promotions([(x, top), (y, top)])
    middle = fresh_ints(40)[0]
    _refused(lambda: declare_promotions([(x, middle), (y, middle), (middle, top)]),
             rf"declare_promotions: would change promote_types\({x.name}, {y.name}\) "
             rf"from {top.name} to {middle.name}, and a declaration never changes a "
             rf"defined result")


def test_upper_bounds_without_a_least_one_are_refused():
    x = fresh_ints(16, signed=False)[0]
    y, p, q = fresh_ints(16, 40, 40)
    _refused(lambda: declare_promotions([(x, p), (y, p), (x, q), (y, q)]),
             r"would give .* and .* upper bounds but no least one: .* and .* would "
             r"both be above them, neither above the other")


def test_a_result_left_without_a_least_upper_bound_is_named():
    x = fresh_ints(16, signed=False)[0]
    y, p, q = fresh_ints(16, 40, 40)
    declare_promotions([(x, p), (y, p)])
    _refused(lambda: declare_promotions([(x, q), (y, q)]),
             rf"would leave {x.name} and {y.name}, whose promotion is {p.name}, "
             rf"without a least upper bound")


def test_a_cycle_is_refused():
    a, b = fresh_ints(16, 16)
    declare_promotion(a, b)
    _refused(lambda: declare_promotion(b, a),
             rf"the edge {b.name} -> {a.name} would close a cycle: {a.name} already "
             rf"promotes to {b.name}")


def test_a_batch_is_all_or_nothing():
    a, b, c = fresh_ints(16, 24, 32)
    _refused(lambda: declare_promotions([(a, b), (b, c), (c, DType.Float32)]),
             r"not lossless")
    assert a not in default_lattice().dtypes


@pytest.mark.parametrize("edges, exc, match", [
    (3, TypeError, r"edges must be an iterable of \(lower, upper\) pairs, got an "
                   r"object of type int"),
    ("ab", TypeError, r"got an object of type str"),
    ([(DType.Int8,)], TypeError, r"edge 0 must be a tuple \(lower, upper\), got an "
                                 r"object of type tuple of another length"),
    ([[DType.Int8, DType.Int32]], TypeError, r"edge 0 must be a tuple"),
    ([(DType.Int8, "Int32")], TypeError, r"an edge's upper dtype must be a "
                                         r"registered DType"),
    ([(DType.Int8, DType.Int8)], ValueError, r"an edge joins two different dtypes"),
])
def test_bad_edges(edges, exc, match):
    _refused(lambda: declare_promotions(edges), match, exc=exc)


def test_declare_promotion_argument_count():
    with pytest.raises(TypeError, match=r"takes exactly 2 arguments \(1 given\)"):
        declare_promotion(DType.Int8)


# ---- a lattice of one's own ----------------------------------------------------


def test_extend_leaves_the_lattice_it_extends_alone():
    a, b = fresh_ints(16, 24)
    base = default_lattice()
    mine = base.extend([(a, b)])
    assert mine.promote_types(a, b) is b
    assert a not in base.dtypes and default_lattice() is base
    with pytest.raises(TypeError):
        promote_types(a, b)
    assert base.extend() is not base          # always a lattice of one's own
    assert mine.extend() is mine              # nothing new: itself


def test_lossy_edges_only_when_asked():
    with pytest.raises(ValueError, match=r"the edge Int32 -> Float32 is not lossless.*"
                                         r"declare it with lossy=True"):
        lattice_of([(DType.Int32, DType.Float32)])
    mine = lattice_of([(DType.Int32, DType.Float32)], lossy=True)
    assert mine.promote_types(DType.Int8, DType.Float32) is DType.Float32
    check_lattice_laws(mine, mine.dtypes, lossless=False)


def test_a_lattice_of_ones_own_admits_low_precision_formats():
    import stride_weave.formats as F

    mine = lattice_of([(DType.E4M3, F.Float16), (DType.E5M2, F.Float16)])
    assert mine.promote_types(DType.E4M3, DType.E5M2) is F.Float16
    pair = PlanePair(unique_name("DeclPair"), planes=[DType.Float32, DType.Float32])
    with pytest.raises(ValueError, match=r"not lossless"):
        lattice_of([(DType.Float32, pair)])
    with_pair = lattice_of([(DType.Float32, pair)], lossy=True)
    assert with_pair.promote_types(F.Float16, pair) is pair
    with pytest.raises(TypeError, match=r"no dtype is above both"):
        with_pair.promote_types(DType.Float64, pair)
    with pytest.raises(ValueError, match=r"a category"):
        lattice_of([(DType.Floating, DType.Float32)], lossy=True)


def test_extend_keeps_every_other_guarantee():
    x = fresh_ints(16, signed=False)[0]
    y, p, q = fresh_ints(16, 40, 40)
    mine = lattice_of([(x, p), (y, p)])
    with pytest.raises(ValueError, match=r"PromotionLattice.extend: would leave"):
        mine.extend([(x, q), (y, q)], lossy=True)
    with pytest.raises(ValueError, match=r"would close a cycle"):
        mine.extend([(p, x)], lossy=True)


def test_scalar_defaults():
    import stride_weave.formats as F

    mine = lattice_of([], scalar_defaults={"int": F.Int64, "float": DType.Float32})
    assert mine.scalar_defaults == {"int": F.Int64, "float": DType.Float32}
    assert mine.result_type(1, True) is F.Int64
    assert mine.result_type(1, 2.5) is DType.Float32
    assert mine.result_type(DType.Int8, 1) is DType.Int8     # still weak
    with pytest.raises(TypeError, match=r"names no default dtype for their kind"):
        mine.result_type(1j)
    again = mine.extend(scalar_defaults={"complex": F.Complex64})
    assert again.scalar_defaults == {"int": F.Int64, "float": DType.Float32,
                                     "complex": F.Complex64}
    assert default_lattice().scalar_defaults == {}
    with pytest.raises(TypeError, match=r"only Python scalars"):
        result_type(1)


@pytest.mark.parametrize("defaults, exc, match", [
    ({"int": DType.Float32}, ValueError,
     r"the default dtype for Python int scalars must be of that kind, got Float32"),
    ({"long": DType.Int32}, ValueError, r"keys must be 'bool', 'int', 'float' or "
                                        r"'complex', got 'long'"),
    ({1: DType.Int32}, TypeError, r"got an object of type int"),
    ([("int", DType.Int32)], TypeError, r"scalar_defaults must be a dict"),
    ({"int": "Int32"}, TypeError, r"must be a registered DType"),
])
def test_bad_scalar_defaults(defaults, exc, match):
    with pytest.raises(exc, match=match):
        lattice_of([], scalar_defaults=defaults)


def test_extend_arguments():
    with pytest.raises(TypeError, match=r"lossy must be a bool"):
        lattice_of([], lossy=1)
    with pytest.raises(TypeError):
        default_lattice().extend([], [])


# ---- the lattice object -----------------------------------------------------------


def test_dtypes_are_in_a_linear_extension_and_edges_are_covers():
    a, b, c, d = fresh_ints(8, 16, 24, 32)
    mine = lattice_of([(c, d), (b, c), (a, b), (a, d)])
    order = mine.dtypes
    position = {x: i for i, x in enumerate(order)}
    for lower, upper in mine.edges:
        assert position[lower] < position[upper]
    ours = {(x.name, y.name) for x, y in mine.edges if x in (a, b, c, d)}
    assert ours == {(a.name, b.name), (b.name, c.name), (c.name, d.name)}


def test_the_lattice_object():
    mine = lattice_of([], scalar_defaults={"float": DType.Float64})
    assert repr(mine).startswith("<PromotionLattice: ")
    assert repr(default_lattice()).startswith("<PromotionLattice (default): ")
    assert copy.copy(mine) is mine and copy.deepcopy(mine) is mine
    # pickled by value (tests/relations/test_lattice_pickling.py)
    again = pickle.loads(pickle.dumps(mine))
    assert again is not mine and again.scalar_defaults == {"float": DType.Float64}
    with pytest.raises(TypeError):
        PromotionLattice()
    with pytest.raises(TypeError):
        class Sub(PromotionLattice):  # noqa: F841
            pass
    with pytest.raises(AttributeError):
        mine.dtypes = ()


def test_a_hundred_dtypes():
    chain = fresh_ints(*range(8, 108))
    mine = lattice_of(list(zip(chain, chain[1:])))
    assert mine.promote_types(chain[0], chain[-1]) is chain[-1]
    assert mine.result_type(*chain) is chain[-1]
    check_lattice_laws(mine, chain[:12])


def test_too_many_dtypes():
    chain = [SimpleDType(unique_name("DeclMany"), bits=8, supertype=DType.Floating)
             for _ in range(4097)]
    with pytest.raises(ValueError, match=r"a promotion lattice holds at most 4096 "
                                         r"dtypes that have edges"):
        lattice_of(list(zip(chain, chain[1:])), lossy=True)


# ---- what replaced lattices keep ------------------------------------------------


def test_declaring_one_edge_at_a_time_retains_memory_linear_in_the_lattice():
    # Each declaration replaces the default lattice, whose join table is
    # n * n entries: the replaced ones must be released, not kept behind
    # the new one (which retained memory cubic in n).
    report = child_report("""
        import json, tracemalloc
        from stride_weave import dtypes
        from stride_weave.dtypes import DType, SimpleDType
        from stride_weave.numerics import NumericInfo, register_numeric_info

        made = []
        for i in range(600):
            d = SimpleDType(f"OneEdge{i}", bits=64, supertype=DType.Floating)
            register_numeric_info(d, NumericInfo.floating(
                f"one_edge_{i}", exponent_bits=11, mantissa_bits=52, bias=1023,
                nan_encoding="ieee"))
            made.append(d)
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for d in made:
            dtypes.declare_promotion(DType.Float32, d)
        grown = tracemalloc.get_traced_memory()[0] - before
        print(json.dumps({"dtypes": len(dtypes.default_lattice().dtypes),
                          "grown": grown}))
    """)
    n = report["dtypes"]
    # the final lattice's join table is 2 * n * n bytes (0.7 MB here); allow
    # forty times that for everything the declarations keep
    assert report["grown"] <= 40 * 2 * n * n, report


def test_a_replaced_lattice_a_caller_holds_stays_whole():
    a, b, c = fresh_ints(16, 24, 32)
    declare_promotion(a, b)
    held = default_lattice()
    declare_promotion(b, c)
    declare_promotion(DType.Int8, a)
    # the state released its reference; the caller's keeps the lattice
    assert c not in held.dtypes
    assert held.promote_types(a, b) is b
    assert held.result_type(a, b) is b
    assert promote_types(a, c) is c
