"""Every answer given without a record stands.

A dtype's kinds and casts come from its numeric record, else from its
category; a record attached later could answer otherwise.  So every answer
of the relations that a record could change -- a kind, a cast, the kind of
Python scalar a dtype takes (through `result_type` in the default lattice
and in a lattice of one's own), a lattice's admission and lossless checks,
a scalar default's kind -- settles the dtype: it never gets a record after,
and the same question gets the same answer.  Answers the category fixes,
and error messages, settle nothing: the record can still come after them.

Each variant first asks, then tries to attach a record (from this module,
which defined the dtype: the attach would otherwise succeed), then asks
again; every question alone, and random sequences of them, do the same.
"""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support import race, unique_name
from stride_weave.dtypes import (
    DType,
    PromotionError,
    SimpleDType,
    can_cast,
    declare_promotion,
    default_lattice,
    isdtype,
    promote_types,
    result_type,
)
from stride_weave.numerics import NumericInfo, numeric_info, register_numeric_info
from stride_weave import _dtypes

FOR_GOOD = "has no numeric record for good"
_F16 = dict(exponent_bits=5, mantissa_bits=10, bias=15, nan_encoding="ieee")
# A record that agrees with each category (so only settling can refuse it).
RECORDS = {
    "Integer": NumericInfo.integer(16, signed=False),
    "Floating": NumericInfo.floating("f16", **_F16),
    "bool": NumericInfo.boolean(16),
    "complex": NumericInfo.floating("c16", complex=True, exponent_bits=2,
                                    mantissa_bits=5, bias=1, nan_encoding="ieee"),
}


def fresh(supertype):
    return SimpleDType(unique_name("Stand"), bits=16,
                       supertype=DType.from_name(supertype))


def outcome(call):
    """The answer of call(), or what it raised: the type, and the message
    where it states the answer (a PromotionError's wording may grow more
    precise once a record says more, say the integer's sign)."""
    try:
        return ("value", call())
    except PromotionError:
        return (PromotionError,)
    except (TypeError, ValueError) as e:
        return (type(e), str(e))


def assert_settled(d, record):
    with pytest.raises(ValueError, match=FOR_GOOD):
        register_numeric_info(d, record)
    with pytest.raises(LookupError):
        numeric_info(d)


def assert_open(d, record):
    register_numeric_info(d, record)
    assert numeric_info(d) is record


# ---- weak scalars ---------------------------------------------------------------

@pytest.mark.parametrize("record, scalar", [
    (RECORDS["bool"], True),
    (RECORDS["complex"], 1.0),
    (RECORDS["complex"], 1),
    (RECORDS["complex"], 1j),
])
@pytest.mark.parametrize("lattice", ["default", "own"], ids=["default", "own-lattice"])
def test_a_weak_scalar_refused_for_want_of_a_record_stays_refused(record, scalar, lattice):
    d = fresh("Any")
    ask = (result_type if lattice == "default"
           else default_lattice().extend([], lossy=True).result_type)
    with pytest.raises(PromotionError, match=r"above Stand_\w+'s \(it has no numeric kind\)"):
        ask(d, scalar)
    before = outcome(lambda: ask(d, scalar))
    assert_settled(d, record)
    assert outcome(lambda: ask(d, scalar)) == before
    assert outcome(lambda: ask(scalar, d, d)) == before


@pytest.mark.parametrize("supertype, scalar", [
    ("Integer", 1), ("Integer", True), ("Integer", 1.0),
    ("Floating", 1.5), ("Floating", 1), ("Floating", 1j),
])
def test_a_weak_scalar_the_category_decides_settles_nothing(supertype, scalar):
    """Any record of an Integer dtype takes int scalars and no float, any
    record of a Floating dtype takes float and no complex: the category
    decides, so the record can still come."""
    d = fresh(supertype)
    before = outcome(lambda: result_type(d, scalar))
    assert_open(d, RECORDS[supertype])
    assert outcome(lambda: result_type(d, scalar)) == before


# ---- kinds and casts --------------------------------------------------------------

@pytest.mark.parametrize("supertype, kind, record", [
    ("Integer", "unsigned integer", RECORDS["Integer"]),
    ("Any", "bool", RECORDS["bool"]),
    ("Any", "complex floating", RECORDS["complex"]),
    ("Any", "numeric", RECORDS["complex"]),
])
def test_a_kind_a_record_could_change_settles(supertype, kind, record):
    d = fresh(supertype)
    assert isdtype(d, kind) is False
    assert_settled(d, record)
    assert isdtype(d, kind) is False


@pytest.mark.parametrize("supertype, kind", [
    ("Integer", "integral"), ("Integer", "real floating"), ("Floating", "real floating"),
    ("Floating", "integral"), ("Any", "real floating"), ("Any", "integral"),
])
def test_a_kind_the_category_fixes_settles_nothing(supertype, kind):
    d = fresh(supertype)
    before = isdtype(d, kind)
    record = RECORDS[supertype] if supertype != "Any" else RECORDS["bool"]
    assert_open(d, record)
    assert isdtype(d, kind) is before


def test_a_cast_settles_both_dtypes_that_could_take_a_record():
    a, b = fresh("Floating"), fresh("Floating")
    assert can_cast(a, b, "unsafe") is False
    assert_settled(a, RECORDS["Floating"])
    assert_settled(b, RECORDS["Floating"])


@pytest.mark.parametrize("other", ["MXFP4", "Floating"])
def test_a_cast_to_a_dtype_that_never_has_a_record_settles_nothing(other):
    """A category or a block-scaled dtype never has a record: the cast is
    not a value-preserving one whatever the other dtype gets."""
    d = fresh("Floating")
    o = DType.from_name(other)
    assert can_cast(d, o) is False and can_cast(o, d, "unsafe") is False
    assert_open(d, RECORDS["Floating"])
    assert can_cast(d, o) is False and can_cast(o, d, "unsafe") is False


def test_a_cast_to_a_dtype_settled_without_a_record_settles_nothing():
    settled, d = fresh("Floating"), fresh("Floating")
    assert isdtype(settled, DType.Floating)
    can_cast(settled, DType.Float32)            # settles `settled`
    assert_settled(settled, RECORDS["Floating"])
    assert can_cast(d, settled) is False
    assert_open(d, RECORDS["Floating"])
    assert can_cast(d, settled) is False


# ---- lattices ---------------------------------------------------------------------

@pytest.mark.parametrize("direction", ["lower", "upper"])
def test_an_edge_refused_as_not_lossless_for_want_of_a_record_stays_refused(direction):
    d = fresh("Floating")
    edge = (d, DType.Float64) if direction == "lower" else (DType.E4M3, d)
    before = outcome(lambda: default_lattice().extend([edge]))
    assert before[0] is ValueError and "is not lossless" in before[1]
    assert_settled(d, RECORDS["Floating"])
    assert outcome(lambda: default_lattice().extend([edge])) == before
    assert can_cast(*edge) is False             # what the message says


def test_a_lossy_edge_reads_no_record_and_settles_nothing():
    d = fresh("Floating")
    mine = default_lattice().extend([(d, DType.Float64)], lossy=True)
    assert mine.promote_types(d, DType.Float32) is DType.Float64
    assert_open(d, RECORDS["Floating"])


def test_the_default_lattice_refusing_a_dtype_without_a_record_stays_refused():
    d = fresh("Floating")
    with pytest.raises(ValueError, match=rf"{d.name} takes part in no implicit promotion "
                                         r"\(it has no numeric record"):
        declare_promotion(DType.Float32, d)
    assert_settled(d, RECORDS["Floating"])
    with pytest.raises(ValueError, match=r"it has no numeric record"):
        declare_promotion(DType.Float32, d)


@pytest.mark.parametrize("key, record", [("bool", RECORDS["bool"]),
                                         ("complex", RECORDS["complex"])])
def test_a_scalar_default_refused_for_want_of_a_record_stays_refused(key, record):
    d = fresh("Any")
    before = outcome(lambda: default_lattice().extend(scalar_defaults={key: d}))
    assert before[0] is ValueError and "must be of that kind" in before[1]
    assert_settled(d, record)
    assert outcome(lambda: default_lattice().extend(scalar_defaults={key: d})) == before


@pytest.mark.parametrize("key, supertype", [("int", "Integer"), ("float", "Floating")])
def test_a_scalar_default_the_category_admits_settles_nothing(key, supertype):
    d = fresh(supertype)
    mine = default_lattice().extend(scalar_defaults={key: d})
    assert mine.scalar_defaults == {key: d}
    assert_open(d, RECORDS[supertype])


# ---- messages settle nothing ------------------------------------------------------------

def test_a_promotion_error_and_the_exclusion_report_settle_nothing():
    """promote_types' error says why a dtype takes part in no promotion
    (and suggests a cast); the command line's report of the default lattice
    says the same.  Wording only: the record can still come, after which a
    declaration may admit the dtype (undefined results may become defined)."""
    d = fresh("Floating")
    with pytest.raises(PromotionError, match=r"it has no numeric record.*"
                       r"cast one or both explicitly"):
        promote_types(d, DType.Float32)
    assert "no numeric record" in _dtypes._promotion_exclusion(d)
    assert_open(d, RECORDS["Floating"])
    assert _dtypes._promotion_exclusion(d) is None
    with pytest.raises(PromotionError, match=r"no promotion edge is declared for it .*; "
                       rf"cast {d.name} to Float32 explicitly"):
        promote_types(d, DType.Float32)


# ---- threads -------------------------------------------------------------------------

def test_a_weak_scalar_racing_the_first_record_is_the_answer_after_it():
    """Threads ask result_type with a bool while another attaches a bool
    record: whichever comes first, every answer is the final one."""
    for _ in range(20):
        d = fresh("Any")
        answers = []

        def ask():
            answers.append(outcome(lambda: result_type(d, True))[0])

        def attach():
            try:
                register_numeric_info(d, RECORDS["bool"])
            except ValueError:
                pass

        race(ask, ask, attach)
        final = outcome(lambda: result_type(d, True))[0]
        assert final in ("value", PromotionError)
        assert set(answers) == {final}


# ---- the property --------------------------------------------------------------------

def _questions(d):
    """Every question of the relations about d, by name."""
    own = default_lattice().extend([], lossy=True)
    questions = {}
    for kind in ("bool", "signed integer", "unsigned integer", "integral",
                 "real floating", "complex floating", "numeric"):
        questions[f"isdtype {kind}"] = lambda kind=kind: isdtype(d, kind)
    for other in ("Int8", "Int32", "Float32", "E4M3", "Bool", "MXFP4", "Any"):
        o = DType.from_name(other)
        for level in ("safe", "same_kind", "unsafe"):
            questions[f"cast to {other} {level}"] = (
                lambda o=o, level=level: can_cast(d, o, level))
            questions[f"cast from {other} {level}"] = (
                lambda o=o, level=level: can_cast(o, d, level))
    for scalar in (True, 1, 1.0, 1j):
        questions[f"result_type {scalar!r}"] = lambda s=scalar: result_type(d, s)
        questions[f"own result_type {scalar!r}"] = lambda s=scalar: own.result_type(s, d)
    for upper in ("Float64", "Int32"):
        u = DType.from_name(upper)
        questions[f"edge to {upper}"] = (
            lambda u=u: default_lattice().extend([(d, u)]).promote_types(d, u))
    questions["edge from E2M1"] = (
        lambda: default_lattice().extend([(DType.E2M1, d)]).promote_types(DType.E2M1, d))
    for key in ("bool", "int", "float", "complex"):
        questions[f"scalar default {key}"] = (
            lambda key=key: default_lattice().extend(scalar_defaults={key: d})
            .scalar_defaults[key])
    return questions


QUESTION_NAMES = sorted(_questions(DType.Float32))
CATEGORIES = ["Integer", "Floating", "bool", "complex"]


def _ask_attach_ask(category, asked):
    """Ask the questions `asked` about a fresh dtype without a record, try
    to attach a record that agrees with its category, and ask them again:
    each answer given before must be given again."""
    d = fresh(category if category in ("Integer", "Floating") else "Any")
    questions = _questions(d)
    before = {name: outcome(questions[name]) for name in asked}
    try:
        register_numeric_info(d, RECORDS[category])
    except ValueError as e:
        assert FOR_GOOD in str(e)
    for name, answer in before.items():
        assert outcome(questions[name]) == answer, name


@pytest.mark.parametrize("category", CATEGORIES)
@pytest.mark.parametrize("question", QUESTION_NAMES)
def test_no_single_answer_changes_when_a_record_comes(category, question):
    _ask_attach_ask(category, [question])


@settings(max_examples=100, deadline=None)
@given(category=st.sampled_from(CATEGORIES),
       asked=st.lists(st.sampled_from(QUESTION_NAMES), max_size=6))
def test_no_answer_of_a_sequence_changes_when_a_record_comes(category, asked):
    _ask_attach_ask(category, asked)
