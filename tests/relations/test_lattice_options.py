"""A lattice of one's own: mixed weak scalars, pairs kept undefined, and
pickling by value.

* ``mixed_scalars=True``: a Python scalar of a kind above the operands'
  promotes them to their join with the lattice's default for its kind;
  every other answer is the one the strict rule gives, the result does not
  depend on the order of the operands, and a missing default or a missing
  join is a PromotionError that says which;
* ``undefined=``: a pair stays undefined in the lattice and in every
  lattice extended from it; a pair in the order, or one some dtype is above,
  is refused with a ValueError naming the dtype (the order-dependence it
  would cause is spelled out), and nothing is kept;
* pickling: every protocol gives back an equal lattice (dtypes in their
  order, edges, joins, defaults, flags, undefined pairs), loading builds it
  again and checks every law again, and a crafted payload is refused with a
  message naming what is wrong (in a child process where a crash is
  possible).
"""
import itertools
import pickle
import textwrap

import pytest

import stride_weave.formats as F
from support import child_report, unique_name
from support.relations import check_lattice_laws
from stride_weave.dtypes import (
    DType,
    PromotionError,
    SimpleDType,
    default_lattice,
)
from stride_weave.numerics import NumericInfo

B = DType
TORCH_DEFAULTS = {"bool": B.Bool, "int": F.Int64, "float": B.Float32,
                  "complex": F.Complex64}
INT_FLOAT = [(F.Int64, F.Float16), (F.Int64, F.BFloat16)]


def mixed(**kwargs):
    kwargs.setdefault("scalar_defaults", TORCH_DEFAULTS)
    return default_lattice().extend(INT_FLOAT, lossy=True, mixed_scalars=True, **kwargs)


# ---- mixed weak scalars -------------------------------------------------------------

@pytest.mark.parametrize("operands, expected", [
    ((B.Int8, 2.5), "Float32"),         # int8 + 2.5: a float, as JAX and torch
    ((F.UInt8, 2.5), "Float32"),
    ((B.Bool, 1), "Int64"),
    ((B.Bool, 2.5), "Float32"),
    ((B.Int8, 1j), "Complex64"),
    ((B.Float64, 1j), "Complex128"),    # the join of Float64 and Complex64
    ((F.Float16, 2.5), "Float16"),      # not above: the weak rule
    ((B.Int8, 1000), "Int8"),
    ((B.Int8, F.Float16, 2.5), "Float16"),
    ((B.Int8, 1, 2.5, True), "Float32"),
    ((1, 2.5), "Float32"),              # only scalars: the defaults
])
def test_a_scalar_of_a_higher_kind_promotes(operands, expected):
    mine = mixed()
    for order in itertools.permutations(operands):
        assert mine.result_type(*order).name == expected, order


def test_without_the_option_a_higher_kind_is_refused_and_inherited_choices_stand():
    strict = default_lattice().extend(INT_FLOAT, lossy=True, scalar_defaults=TORCH_DEFAULTS)
    assert strict.mixed_scalars is False
    with pytest.raises(PromotionError, match=r"a Python float is weak"):
        strict.result_type(B.Int8, 2.5)
    assert mixed().extend().mixed_scalars is True                  # inherited
    assert mixed().extend(mixed_scalars=False).mixed_scalars is False
    off = mixed().extend(mixed_scalars=False)
    with pytest.raises(PromotionError, match=r"a Python float is weak"):
        off.result_type(B.Int8, 2.5)
    assert default_lattice().mixed_scalars is False


def test_a_missing_default_or_join_is_a_promotion_error_saying_which():
    only_float = mixed(scalar_defaults={"float": B.Float32})
    with pytest.raises(PromotionError, match=r"^PromotionLattice.result_type: a Python "
                       r"complex promotes the other operands in this lattice "
                       r"\(mixed_scalars\), but the lattice names no default dtype "
                       r"for complex scalars \(scalar_defaults\), so it cannot "
                       r"promote Int8 \(signed integer\)$"):
        only_float.result_type(B.Int8, 1j)
    with pytest.raises(PromotionError, match=r"^PromotionLattice.result_type: a Python "
                       r"float promotes MXFP4 \(it has no numeric kind\) in this "
                       r"lattice to its join with Float32, the default dtype for "
                       r"float scalars, and they have none; convert the scalar "
                       r"explicitly$"):
        mixed().result_type(B.MXFP4, 2.5)


def test_mixed_scalars_is_validated():
    with pytest.raises(TypeError, match=r"^PromotionLattice.extend: mixed_scalars must "
                       r"be a bool or None, got an object of type int$"):
        default_lattice().extend(mixed_scalars=1)
    with pytest.raises(ValueError, match=r"^PromotionLattice.extend: mixed_scalars=True "
                       r"needs scalar_defaults for 'int', 'float' or 'complex'"):
        default_lattice().extend(mixed_scalars=True)
    with pytest.raises(ValueError, match=r"needs scalar_defaults for 'int'"):
        default_lattice().extend(mixed_scalars=True, scalar_defaults={"bool": B.Bool})
    with pytest.raises(TypeError, match=r"^PromotionLattice.extend: lossy must be a "
                       r"bool, got an object of type NoneType$"):
        default_lattice().extend(lossy=None)


def test_the_laws_hold_with_mixed_scalars():
    mine = mixed()
    dtypes = [B.Bool, B.Int8, F.UInt8, F.Int16, B.Int32, F.Int64, F.Float16,
              F.BFloat16, B.Float32, F.Complex64, B.Float64, F.Complex128]
    check_lattice_laws(mine, dtypes, lossless=False)
    for d in dtypes:
        for scalars in itertools.combinations((True, 1, 2.5, 1j), 2):
            answers = set()
            for order in itertools.permutations((d, *scalars)):
                try:
                    answers.add(mine.result_type(*order))
                except PromotionError:
                    answers.add(None)
            assert len(answers) == 1, (d, scalars, answers)


# ---- pairs kept undefined --------------------------------------------------------

def test_a_pair_kept_undefined_stays_undefined_in_every_extension():
    mine = default_lattice().extend(undefined=[(F.Int64, F.UInt64)])
    assert mine.undefined == ((F.Int64, F.UInt64),)
    with pytest.raises(PromotionError):
        mine.promote_types(F.Int64, F.UInt64)
    later = mine.extend(INT_FLOAT, lossy=True, undefined=[(F.UInt64, F.Int64)])
    assert later.undefined == ((F.Int64, F.UInt64),)    # the same pair, once
    with pytest.raises(ValueError, match=r"^PromotionLattice.extend: Int64 and UInt64 "
                       r"cannot be kept undefined: Float64 would be above both, so "
                       r"result_type\(Int64, Float64, UInt64\) would be Float64 in that "
                       r"order and undefined with Int64 and UInt64 first; a pair stays "
                       r"undefined only while no dtype is above both$"):
        later.extend([(F.UInt64, B.Float64)], lossy=True)
    with pytest.raises(ValueError, match=r"Int64 and UInt64 cannot be kept undefined"):
        later.extend([(F.UInt64, B.Float64)], lossy=True, undefined=())    # inherited


def test_a_pair_in_the_order_or_with_an_upper_bound_cannot_be_kept_undefined():
    with pytest.raises(ValueError, match=r"^PromotionLattice.extend: Int8 and Int32 "
                       r"cannot be kept undefined: Int8 promotes to Int32 in this lattice$"):
        default_lattice().extend(undefined=[(B.Int8, B.Int32)])
    with pytest.raises(ValueError, match=r"Int8 and UInt8 cannot be kept undefined: "
                       r"Int16 would be above both"):
        default_lattice().extend(undefined=[(B.Int8, F.UInt8)])


@pytest.mark.parametrize("undefined, exc, match", [
    (5, TypeError, r"^PromotionLattice.extend: undefined must be an iterable of "
                   r"\(a, b\) pairs, got an object of type int$"),
    ("ab", TypeError, r"undefined must be an iterable of \(a, b\) pairs, got an "
                      r"object of type str$"),
    ([(B.Int8,)], TypeError, r"^PromotionLattice.extend: undefined pair 0 must be a "
                             r"tuple \(a, b\), got an object of type tuple of another "
                             r"length$"),
    ([[B.Int8, F.UInt64]], TypeError, r"undefined pair 0 must be a tuple \(a, b\), got "
                                      r"an object of type list$"),
    ([(B.Int8, "UInt64")], TypeError, r"^PromotionLattice.extend: a dtype of an undefined "
                                      r"pair must be a registered DType, got an object "
                                      r"of type str$"),
    ([(B.Int8, B.Floating)], ValueError, r"^PromotionLattice.extend: undefined pair 0: "
                                         r"Floating is a category, not a dtype of values$"),
    ([(B.Int8, B.Int8)], ValueError, r"^PromotionLattice.extend: undefined pair 0: a dtype "
                                     r"promotes with itself, got \(Int8, Int8\)$"),
])
def test_undefined_pairs_are_validated(undefined, exc, match):
    with pytest.raises(exc, match=match):
        default_lattice().extend(undefined=undefined)


def test_undefined_pairs_of_a_tuple_subclass_are_copied():
    class Pair(tuple):
        def __iter__(self):
            raise AssertionError("a method of the pair ran")

        def __getitem__(self, i):
            raise AssertionError("a method of the pair ran")

    mine = default_lattice().extend(undefined=[Pair((F.Int64, F.UInt64))])
    assert [type(p) for p in mine.undefined] == [tuple]
    assert mine.undefined == ((F.Int64, F.UInt64),)


# ---- pickling by value ------------------------------------------------------------

def _same(a, b):
    assert a.dtypes == b.dtypes and a.edges == b.edges
    assert a.scalar_defaults == b.scalar_defaults and a.undefined == b.undefined
    assert (a.is_default, a.lossy, a.mixed_scalars) == (b.is_default, b.lossy,
                                                         b.mixed_scalars)
    for x in a.dtypes:
        for y in a.dtypes:
            try:
                expected = a.promote_types(x, y)
            except PromotionError:
                expected = None
            try:
                got = b.promote_types(x, y)
            except PromotionError:
                got = None
            assert got is expected, (x, y)


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
@pytest.mark.parametrize("which", ["default", "mixed", "undefined", "plain"])
def test_every_protocol_gives_back_the_same_lattice(protocol, which):
    lattice = {"default": default_lattice,
               "mixed": mixed,
               "undefined": lambda: default_lattice().extend(undefined=[(F.Int64, F.UInt64)]),
               "plain": lambda: default_lattice().extend()}[which]()
    again = pickle.loads(pickle.dumps(lattice, protocol))
    assert again is not lattice
    _same(lattice, again)


def test_loading_checks_the_laws_again():
    """A lossless lattice whose edge is not lossless where it is loaded (a
    payload edited, or another definition of the dtype) is refused."""
    reconstruct, args = default_lattice().extend([(B.Int8, B.Float32)]).__reduce__()
    lossy_edge = list(args)
    lossy_edge[2] = args[2] + ((B.Int32, B.Float32),)
    with pytest.raises(ValueError, match=r"^_reconstruct_lattice: the edge Int32 -> "
                       r"Float32 is not lossless"):
        reconstruct(*lossy_edge)
    cycle = list(args)
    cycle[2] = args[2] + ((B.Float32, B.Int8),)
    cycle[3] = True             # lossy edges allowed: the cycle is what is refused
    with pytest.raises(ValueError, match=r"would close a cycle"):
        reconstruct(*cycle)


@pytest.mark.parametrize("change, exc, match", [
    ({0: 2}, ValueError, r"this stride_weave reads lattice pickles of version 1, got "
                         r"version 2 \(a pickle of a newer release\?\)$"),
    ({0: True}, TypeError, r"version must be an int, got an object of type bool"),
    ({1: [B.Int8]}, TypeError, r"dtypes must be a tuple and scalar_defaults a tuple of 4"),
    ({1: ("Int8",)}, TypeError, r"each of dtypes must be a registered DType"),
    ({3: 1}, TypeError, r"lossy must be a bool, got an object of type int"),
    ({5: (None, None)}, TypeError, r"dtypes must be a tuple and scalar_defaults a "
                                   r"tuple of 4, got objects of type tuple and tuple$"),
    ({5: (None, B.Float32, None, None)}, ValueError,
     r"the default dtype for Python int scalars must be of that kind, got Float32"),
    ({7: 3}, TypeError, r"edges and undefined must be tuples, got objects of type "
                        r"tuple and int$"),
    ({7: ((B.Int8,),)}, TypeError, r"undefined pair 0 must be a tuple \(a, b\)"),
])
def test_a_crafted_payload_is_refused_naming_what(change, exc, match):
    reconstruct, args = mixed().__reduce__()
    args = list(args)
    for i, value in change.items():
        args[i] = value
    with pytest.raises(exc, match=r"^_reconstruct_lattice: " + match):
        reconstruct(*args)


def test_a_payload_whose_dtypes_are_not_its_edges_is_refused():
    reconstruct, args = mixed().__reduce__()
    for dtypes in (args[1][::-1], args[1] + (B.E4M3,), args[1][:-1],
                   args[1] + (args[1][0],)):
        with pytest.raises(ValueError, match=r"^_reconstruct_lattice: the pickle's "
                           r"dtypes are not those of its edges"):
            reconstruct(args[0], dtypes, *args[2:])
    with pytest.raises(TypeError, match=r"takes 8 arguments"):
        reconstruct(*args[:7])


def test_a_default_snapshot_payload_with_own_rules_is_refused():
    reconstruct, args = default_lattice().__reduce__()
    args = list(args)
    args[6] = True
    with pytest.raises(ValueError, match=r"a snapshot of the default lattice has no "
                       r"lossy edges, scalar defaults, mixed_scalars or undefined pairs"):
        reconstruct(*args)


def test_a_lattice_of_an_extension_dtype_pickles_through_its_module():
    """Its dtypes travel as descriptors do: by name and structure."""
    d = SimpleDType(unique_name("LatPickle"), bits=48, supertype=DType.Integer,
                    numeric_info=NumericInfo.integer(48, signed=True))
    mine = default_lattice().extend([(B.Int32, d), (d, F.Int64)])
    again = pickle.loads(pickle.dumps(mine))
    assert again.promote_types(F.UInt16, d) is d


def test_hostile_payloads_do_not_crash():
    """Payloads whose containers are subclasses with lying methods, and
    dtypes that are not registered, in a child process."""
    report = child_report(textwrap.dedent("""
        import json
        from stride_weave.dtypes import default_lattice
        import stride_weave.formats as F

        class Lying(tuple):
            def __iter__(self):
                raise AssertionError("ran")
            def __len__(self):
                return 99

        reconstruct, args = default_lattice().extend(
            [(F.Int64, F.Float16)], lossy=True).__reduce__()
        outcomes = []
        for i, bad in [(2, Lying(args[2])), (7, Lying(())), (1, Lying(args[1])),
                       (2, (Lying((F.Int64, F.Float16)),) + args[2]),
                       (5, Lying(args[5]))]:
            a = list(args)
            a[i] = bad
            try:
                reconstruct(*a)
                outcomes.append("ok")
            except (TypeError, ValueError) as e:
                outcomes.append(type(e).__name__)
        print(json.dumps(outcomes))
    """))
    assert report == ["TypeError", "TypeError", "TypeError", "ok", "TypeError"]
