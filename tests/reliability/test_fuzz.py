"""Fuzzing the extension's untrusted inputs with hypothesis.

Pickle reconstruction preserves the receiving process's identity, every
dtype has one registered descriptor identity, and a descriptor's structure
is canonical and extensible; a crafted payload is a TypeError or
ValueError, never a crash (docs/pickling.md, docs/guarantees.md).

Each test states its oracle in Python and checks the extension against it
exactly (the outcome *and* its exception class), not just "did not crash":

* ``test_reconstruct_*``: crafted ``(name, structure)`` payloads for
  ``stride_weave._dtypes._reconstruct``: mutated real structures of every
  registered kind, wrong types, huge and deeply nested tuples, and hostile
  ``str``/``int``/``tuple`` subclasses whose dunder methods raise. The only
  outcomes are the registered identity, ``LookupError``, ``ValueError`` or
  ``TypeError``, exactly as the oracle predicts, and the registry never
  changes.
* ``test_constructor_*``: random arguments for ``DTypeCategory``,
  ``SimpleDType`` and a concrete ``CompoundDType`` subclass. A call succeeds
  exactly when the oracle finds no problem; otherwise it raises the class of
  one of the problems found, and the registry is unchanged.
* ``test_structure_extension_*``: random ``structure_extension()`` results,
  valid ones recorded exactly as docs/structure.md encodes them, invalid
  ones refused with ``TypeError`` without registering.
* ``RegistryMachine``: a hypothesis state machine over register / failed
  register / look up / pickle round trip / ``registered()`` snapshots that
  keeps a model of the registry and checks it after every step.

The oracle (hostile objects, the exact comparison, the expected outcome of a
payload, the extension-value encoding) lives in tests/reliability/_fuzz_oracle.py, which
fuzz/fuzz_reconstruct.py shares.

The number of examples scales with the loaded hypothesis profile (see
tests/conftest.py): the default keeps the module to a few seconds;
``HYPOTHESIS_PROFILE=long`` runs 20x more, ``valgrind`` a handful.
The long-running, coverage-guided counterpart is fuzz/ (atheris).
"""
import math
import os
import pickle
import struct

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    invariant,
    multiple,
    rule,
)

from support.defs import BUILTIN_NAMES, PlanePair, TagRule
from _fuzz_oracle import (
    _ARMED,
    Boom,
    HostileFloat,
    HostileInt,
    HostileStr,
    HostileTuple,
    RaisingIterable,
    RaisingIterator,
    Tripped,
    armed,
    encode_leaf,
    expected_reconstruct,
    get_at,
    put_at,
    structure_paths,
)
from _fuzz_oracle import registry_by_name as _registry_by_name
import _hostile_ops as hostile
from support import child_report, registry_unchanged, unique_name
from stride_weave import _dtypes
from stride_weave.dtypes import (
    BlockScaledDType,
    CompoundDType,
    DType,
    DTypeCategory,
    Level,
    SimpleDType,
    Whole,
)

IDENTITY = "identity"
_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large,
           HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture]


def fuzz_settings(n, **kwargs):
    """`n` examples under the default profile, scaled by the loaded one."""
    scale = settings.default.max_examples / 100
    return settings(max_examples=max(2, int(n * scale)), deadline=None,
                    suppress_health_check=_HEALTH, **kwargs)


# --------------------------------------------------------------------------
# The registered targets: built-ins and one extension of every kind
# --------------------------------------------------------------------------

class RichSimple(SimpleDType, abstract=False):
    """A simple extension whose structure_extension has every leaf type."""

    def structure_extension(self):
        return ("s", 7, -(2 ** 100), 2 ** 64, 1.5, -0.0, math.nan, True,
                None, Whole, ((), ("nested", (False,))))


class ExtCategory(DTypeCategory, abstract=False):
    def structure_extension(self):
        return ("cat", 1)


class RichPair(PlanePair, abstract=False):
    def structure_extension(self):
        return (2.0, "pair", (Whole,))


class RichBlockScaled(BlockScaledDType, abstract=False):
    def structure_extension(self):
        return ("bs", -1, (None, Whole))


def _register_targets():
    cat = DTypeCategory(unique_name("FzCat"), supertype=DType.Floating)
    sub = ExtCategory(unique_name("FzSubCat"), supertype=cat)
    root = DTypeCategory(unique_name("FzRoot"))
    simple = SimpleDType(unique_name("FzSimple"), bits=16, supertype=sub)
    huge = SimpleDType(unique_name("FzHuge"), bits=2 ** 80, supertype=root)
    rich = RichSimple(unique_name("FzRich"), bits=8, supertype=DType.Floating)
    pair = PlanePair(unique_name("FzPair"), planes=[simple, DType.E8M0],
                     rules=[TagRule(32), TagRule("x")], supertype=cat)
    rich_pair = RichPair(unique_name("FzRichPair"),
                         planes=(rich, rich, DType.Float32))
    # Block-scaled: a fresh element, so the structures are new.
    element = SimpleDType(unique_name("FzBsElem"), bits=4, supertype=cat)
    block_scaled = BlockScaledDType(
        unique_name("FzBs"), element=element,
        levels=(Level(scale=DType.E8M0, block=16),
                Level(scale=simple, block=Whole)))
    rich_bs = RichBlockScaled(unique_name("FzRichBs"), element=element,
                              levels=[Level(scale=rich, block=2 ** 70)])
    nd_bs = BlockScaledDType(unique_name("FzNdBs"), element=element,
                             levels=[Level(scale=DType.E4M3, block=(16, 2 ** 70)),
                                     Level(scale=simple, block=Whole)])
    return [getattr(DType, n) for n in BUILTIN_NAMES] + [
        cat, sub, root, simple, huge, rich, pair, rich_pair, element,
        block_scaled, rich_bs, nd_bs]


TARGETS = _register_targets()
TARGET_NAMES = [d.name for d in TARGETS]




# --------------------------------------------------------------------------
# The reconstructor's oracle
# --------------------------------------------------------------------------

def check_reconstruct(name, structure):
    """Call _reconstruct and compare with the oracle; registry unchanged."""
    want = expected_reconstruct(name, structure)
    with registry_unchanged():
        with armed():
            try:
                got = _dtypes._reconstruct(name, structure)
            except (TypeError, ValueError, LookupError) as exc:
                got = exc
    if isinstance(want, type):
        assert type(got) is want, f"expected {want.__name__}, got {got!r}"
        assert str(got)  # the message formats without running user code
    else:
        assert got is want, f"expected the identity {want!r}, got {got!r}"
    return got


# --------------------------------------------------------------------------
# Strategies for payloads
# --------------------------------------------------------------------------

def _tagged_leaves():
    leaves = set()
    stack = [d.structure() for d in TARGETS]
    while stack:
        node = stack.pop()
        if type(node) is tuple:
            stack.extend(node)
        else:
            leaves.add(node)
    return sorted(leaves)


TAGGED = st.sampled_from(_tagged_leaves() + [
    "opaque_storage", "bool:False", "float:7ff8000000000000", "", ":", "int:",
    "ref", "str:" + "x" * 1000])

SCALARS = st.one_of(
    TAGGED, st.text(max_size=8), st.integers(), st.integers(2 ** 63, 2 ** 200),
    st.floats(allow_nan=True), st.none(), st.booleans(), st.binary(max_size=6),
    st.just(Whole), st.sampled_from(TARGETS), st.just(Ellipsis),
    st.just(NotImplemented), st.builds(object), st.builds(dict), st.builds(set),
    TAGGED.map(HostileStr), st.integers().map(HostileInt),
    st.floats().map(HostileFloat),
)


def _deep(node, depth):
    for _ in range(depth):
        node = (node,)
    return node


VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4).map(tuple),
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(HostileTuple),
        st.tuples(inner, st.sampled_from([2, 50, 3000])).map(lambda p: _deep(*p)),
    ),
    max_leaves=8,
)


def _mutate(data, s):
    path = data.draw(st.sampled_from(structure_paths(s)), label="path")
    node = get_at(s, path)
    ops = ["replace", "wrap", "deepen", "hostile", "huge", "listify",
           "other_structure"]
    if path:
        ops += ["delete", "insert", "duplicate", "swap"]
    if type(node) is tuple and node:
        ops += ["truncate", "append"]
    if type(node) is str:
        ops += ["edit_str"]
    op = data.draw(st.sampled_from(ops), label="op")
    if op == "replace":
        return put_at(s, path, data.draw(VALUES, label="value"))
    if op == "wrap":
        return put_at(s, path, (node,))
    if op == "deepen":
        depth = data.draw(st.sampled_from([10, 1000, 20000]), label="depth")
        return put_at(s, path, _deep(node, depth))
    if op == "hostile":
        if type(node) is tuple:
            return put_at(s, path, HostileTuple(node))
        if type(node) is str:
            return put_at(s, path, HostileStr(node))
        return s
    if op == "huge":
        n = data.draw(st.sampled_from([2, 1000, 100_000]), label="copies")
        return put_at(s, path, (node,) * n)
    if op == "listify":
        return put_at(s, path, [node])
    if op == "other_structure":
        other = data.draw(st.sampled_from(TARGETS), label="other").structure()
        return put_at(s, path, other)
    if op == "edit_str":
        extra = data.draw(st.text(max_size=3), label="extra")
        cut = data.draw(st.integers(0, len(node)), label="cut")
        return put_at(s, path, node[:cut] + extra)
    if op == "truncate":
        k = data.draw(st.integers(0, len(node) - 1), label="keep")
        return put_at(s, path, node[:k])
    if op == "append":
        return put_at(s, path, node + (data.draw(VALUES, label="extra"),))
    parent_path, i = path[:-1], path[-1]
    parent = get_at(s, parent_path)
    if op == "delete":
        new = parent[:i] + parent[i + 1:]
    elif op == "insert":
        new = parent[:i] + (data.draw(VALUES, label="inserted"),) + parent[i:]
    elif op == "duplicate":
        new = parent[:i] + (parent[i],) + parent[i:]
    else:  # swap
        j = data.draw(st.integers(0, len(parent) - 1), label="with")
        items = list(parent)
        items[i], items[j] = items[j], items[i]
        new = tuple(items)
    return put_at(s, parent_path, new)


NAMES = st.one_of(
    st.sampled_from(TARGET_NAMES),
    st.sampled_from(TARGET_NAMES).map(HostileStr),
    st.text(max_size=10),
    st.text(max_size=10).map(HostileStr),
    st.sampled_from(["", " ", "Float32\x00", "float32", "Float32 ", "\udcff"]),
)
BAD_NAMES = st.one_of(
    st.integers(), st.integers().map(HostileInt), st.binary(max_size=8),
    st.none(), st.sampled_from(TARGETS), st.just(Whole),
    st.lists(st.text(max_size=3), max_size=2).map(tuple),
    st.sampled_from(TARGET_NAMES).map(lambda n: n.encode()),
    st.builds(object),
)


# --------------------------------------------------------------------------
# Reconstructor fuzzing
# --------------------------------------------------------------------------

@fuzz_settings(300)
@given(data=st.data())
def test_reconstruct_mutated_real_structures(data):
    """Scenario "Reject a mismatched receiving definition", fuzzed: 1-4
    mutations of a registered structure under its own or another name."""
    d = data.draw(st.sampled_from(TARGETS), label="descriptor")
    s = d.structure()
    for _ in range(data.draw(st.integers(1, 4), label="mutations")):
        s = _mutate(data, s)
    name = data.draw(st.one_of(st.just(d.name), NAMES), label="name")
    check_reconstruct(name, s)
    assert DType.from_name(d.name) is d


@fuzz_settings(150)
@given(name=NAMES, structure=VALUES)
def test_reconstruct_arbitrary_values(name, structure):
    """Any name, any value as the structure: a clean outcome only."""
    check_reconstruct(name, structure)


@fuzz_settings(100)
@given(name=BAD_NAMES, structure=st.one_of(VALUES, st.sampled_from(TARGETS).map(
    lambda d: d.structure())))
def test_reconstruct_non_str_name_is_type_error(name, structure):
    """A name that is not a str is a TypeError, whatever the structure."""
    assert check_reconstruct(name, structure).__class__ is TypeError


@fuzz_settings(100)
@given(d=st.sampled_from(TARGETS), data=st.data())
def test_reconstruct_real_structure_with_hostile_name_and_containers(d, data):
    """Scenario "Unpickle a registered extension" with hostile carriers: a
    str subclass name with the registered content still finds the identity
    (read without its methods); the structure's exact tuples and strs
    replaced by hostile subclasses anywhere is a ValueError."""
    assert check_reconstruct(HostileStr(d.name), d.structure()) is d
    s = d.structure()
    paths = structure_paths(s)
    path = data.draw(st.sampled_from(paths), label="path")
    node = get_at(s, path)
    hostile = HostileTuple(node) if type(node) is tuple else HostileStr(node)
    check_reconstruct(d.name, put_at(s, path, hostile))
    # The top level may be a tuple subclass (it is a tuple), never equal.
    assert type(check_reconstruct(d.name, HostileTuple(s))) is ValueError


@fuzz_settings(60)
@given(n=st.sampled_from([0, 1, 3, 4, 5, 1000, 1_000_000]),
       leaf=st.sampled_from(["str:x", (), "none", None, HostileStr("s")]),
       name=NAMES)
def test_reconstruct_huge_tuples(n, leaf, name):
    """Huge flat tuples: a clean outcome, in time linear in what matches."""
    check_reconstruct(name, (leaf,) * n)
    check_reconstruct(name, ("SimpleDType",) + (leaf,) * n)


@fuzz_settings(40)
@given(depth=st.sampled_from([1, 100, 5000, 100_000]),
       leaf=st.sampled_from(["str:x", (), "none", HostileStr("none")]),
       d=st.sampled_from(TARGETS), where=st.integers(0, 3))
def test_reconstruct_deeply_nested_tuples(depth, leaf, d, where):
    """Deep nesting, alone or at any field of a real structure: never a
    RecursionError or a crash (the comparison is bounded by the registered
    structure's depth, not the payload's)."""
    s = d.structure()
    check_reconstruct(d.name, _deep(leaf, depth))
    index = min(where, len(s) - 1)
    check_reconstruct(d.name, s[:index] + (_deep(s[index], depth),) + s[index + 1:])


def _pickle_opcodes(name, structure):
    """A protocol-2 pickle calling _reconstruct(name, structure), written
    opcode by opcode without recursion (pickle.dumps itself recurses, so it
    cannot write structures deeper than the recursion limit)."""
    def text(s):
        b = s.encode("utf-8", "surrogatepass")
        return b"X" + struct.pack("<I", len(b)) + b

    out = [b"\x80\x02", b"cstride_weave._dtypes\n_reconstruct\n", text(name)]
    stack = [(structure, False)]
    while stack:
        node, closing = stack.pop()
        if closing:
            out.append(b"t")                 # TUPLE: back to the MARK
        elif type(node) is str:
            out.append(text(node))
        else:
            out.append(b"(")                 # MARK
            stack.append((node, True))
            stack.extend((item, False) for item in reversed(node))
    out.append(b"\x86R.")                   # TUPLE2, REDUCE, STOP
    return b"".join(out)


@pytest.fixture(scope="module")
def deep_chain():
    """A registered category chain 4000 deep under Any: its structure nests
    three tuples per level, far beyond the C recursion limit of every
    supported CPython (3.11: 1000 by default, 3.12: 1500, 3.13: 10000)."""
    d = DType.Any
    for _ in range(4000):
        d = DTypeCategory(unique_name("FzDeep"), supertype=d)
    return d


def test_reconstruct_a_deep_registered_chain_returns_the_identity(deep_chain):
    """Regression (found by this module): _reconstruct compared structures
    recursively under the C recursion guard, so the exact structure of a
    registered descriptor with a category chain a few hundred deep raised
    RecursionError instead of returning the identity. The walk now keeps its
    own stack; a payload is still only followed as deep as the registered
    structure goes."""
    s = deep_chain.structure()
    assert check_reconstruct(deep_chain.name, s) is deep_chain
    # Through pickle.loads as well (its unpickler builds tuples iteratively).
    assert pickle.loads(_pickle_opcodes(deep_chain.name, s)) is deep_chain
    # The deepest difference is found and described, path truncated.
    deepest = s
    path = []
    while deepest[1][1] != "none":
        path += [1, 1, 2]
        deepest = deepest[1][1][2]
    mutated = put_at(s, tuple(path) + (1, 1), "str:elsewhere")
    err = check_reconstruct(deep_chain.name, mutated)
    assert type(err) is ValueError and "..." in str(err)
    # A sibling chain with the same shape matches structurally.
    assert type(check_reconstruct(DType.Any.name, s)) is ValueError


def test_hostile_objects_trip_when_armed():
    """The harness itself: each hostile dunder, called while armed, is
    recorded and raises, so a test passing with them proves the extension
    never ran them."""
    calls = [lambda: hash(HostileStr("x")), lambda: HostileStr("x") == "x",
             lambda: len(HostileTuple((1,))), lambda: iter(HostileTuple(())),
             lambda: int(HostileInt(3)), lambda: HostileInt(3).__index__(),
             lambda: repr(HostileTuple(())), lambda: float(HostileFloat(1.0)),
             lambda: HostileStr("x").upper()]
    for call in calls:
        with pytest.raises((Tripped, AssertionError)):
            with armed():
                call()
    assert not _ARMED[0]


@pytest.mark.parametrize("args", [
    (), ("Float32",), ("Float32", (), None, None, None), ("a", "b", "c", "d", "e"),
])
def test_reconstruct_wrong_argument_count_is_type_error(args):
    with registry_unchanged(), pytest.raises(TypeError):
        _dtypes._reconstruct(*args)


@fuzz_settings(60)
@given(d=st.sampled_from(TARGETS), protocol=st.integers(0, pickle.HIGHEST_PROTOCOL),
       data=st.data())
def test_reconstruct_through_pickle_loads(d, protocol, data):
    """The same payloads reach _reconstruct through pickle.loads: crafted
    pickles of mutated plain structures give the oracle's outcome too."""
    s = d.structure()
    mutate = data.draw(st.booleans(), label="mutate")
    if mutate:
        s = put_at(s, data.draw(st.sampled_from(structure_paths(s))),
                 data.draw(st.one_of(TAGGED, st.integers(), st.none(),
                                     st.just(()))))
    payload = _Crafted(d.name, s)
    blob = pickle.dumps(payload, protocol=protocol)
    want = expected_reconstruct(d.name, s)
    with registry_unchanged():
        if isinstance(want, type):
            with pytest.raises(want) as info:
                pickle.loads(blob)
            assert type(info.value) is want
        else:
            assert pickle.loads(blob) is want


class _Crafted:
    """Pickles as a call of the reconstructor with any arguments."""

    def __init__(self, name, structure):
        self.args = (name, structure)

    def __reduce__(self):
        return (_dtypes._reconstruct, self.args)


# --------------------------------------------------------------------------
# Constructor fuzzing
# --------------------------------------------------------------------------

_MISSING = object()


class _Problems:
    """The problems the oracle finds in one call; empty means success."""

    def __init__(self):
        self.classes = set()

    def add(self, cls):
        self.classes.add(cls)


def _name_problem(name, problems):
    if not isinstance(name, str) or len(name) == 0:
        problems.add(ValueError)
    elif str.__str__(name) in _registry_by_name():
        problems.add(ValueError)


def _supertype_problem(supertype, allow_none, problems):
    if supertype is None and allow_none:
        return
    if not isinstance(supertype, DTypeCategory):
        problems.add(TypeError)


def _bits_problem(bits, problems):
    if (not isinstance(bits, int) or isinstance(bits, bool)
            or int.__int__(bits) <= 0):
        problems.add(ValueError)


FRESH = object()   # stands for a fresh unique name


def _names_for(prefix):
    return st.one_of(
        st.just(FRESH), st.just(FRESH), st.just(FRESH),
        st.sampled_from(TARGET_NAMES),                      # taken
        st.just(""), st.integers(), st.none(), st.binary(max_size=3),
        st.just("hostile"),
    )


def _resolve_name(draw_value, prefix):
    if draw_value is FRESH:
        return unique_name(prefix)
    if draw_value == "hostile":
        return HostileStr(unique_name(prefix))
    return draw_value


CATEGORIES = [d for d in TARGETS if isinstance(d, DTypeCategory)]
SIMPLES = [d for d in TARGETS if isinstance(d, SimpleDType)]
NON_CATEGORIES = [d for d in TARGETS if not isinstance(d, DTypeCategory)]

SUPERTYPES = st.one_of(
    st.sampled_from(CATEGORIES), st.sampled_from(CATEGORIES),
    st.none(), st.sampled_from(NON_CATEGORIES), st.integers(),
    st.text(max_size=3), st.just(DTypeCategory), st.builds(object),
)
BITS = st.one_of(
    st.integers(1, 64), st.integers(-5, 0), st.integers(2 ** 63, 2 ** 130),
    st.integers(-2 ** 130, -2 ** 63), st.booleans(), st.floats(),
    st.integers(-3, 70).map(HostileInt), st.text(max_size=2), st.none(),
)
RULES = st.lists(st.one_of(st.sampled_from([TagRule(1), TagRule("r")]),
                           st.integers(), st.none(), st.sampled_from(SIMPLES)),
                 max_size=3)


def _check_outcome(call, problems, extra_ok=()):
    """Run call(); success iff no problem; else one of the problems' classes,
    or one of extra_ok (user code the model legitimately ran)."""
    before = DType.registered()
    try:
        with armed():
            result = call()
    except (TypeError, ValueError) + tuple(extra_ok) as exc:
        after = DType.registered()
        assert after == before, "a failed construction changed the registry"
        allowed = problems.classes | set(extra_ok)
        assert type(exc) in allowed, (
            f"raised {exc!r}; the oracle expected one of "
            f"{sorted(c.__name__ for c in allowed) or 'success'}")
        assert str(exc)
        return None
    assert not problems.classes, (
        f"succeeded with {result!r}; the oracle expected one of "
        f"{sorted(c.__name__ for c in problems.classes)}")
    after = DType.registered()
    assert after == before + (result,)
    assert DType.from_name(result.name) is result
    assert type(result.name) is str
    assert pickle.loads(pickle.dumps(result)) is result
    return result


@fuzz_settings(200)
@given(name=_names_for("FzC"), supertype=SUPERTYPES,
       extra=st.dictionaries(st.sampled_from(["opaque_storage", "bits", "x",
                                              "simple_types"]),
                             st.none(), max_size=1),
       positional=st.lists(st.none(), max_size=1))
def test_constructor_category(name, supertype, extra, positional):
    """Requirement "Categories describe hierarchy relationships", fuzzed."""
    name = _resolve_name(name, "FzC")
    problems = _Problems()
    _name_problem(name, problems)
    _supertype_problem(supertype, True, problems)
    if extra or positional:
        problems.add(TypeError)
    result = _check_outcome(
        lambda: DTypeCategory(name, *positional, supertype=supertype, **extra),
        problems)
    if result is not None:
        assert result.supertype is supertype
        assert result.is_category()


@fuzz_settings(250)
@given(name=_names_for("FzS"), bits=st.one_of(BITS, st.just(_MISSING)),
       supertype=st.one_of(SUPERTYPES, st.just(_MISSING)),
       extra=st.dictionaries(st.sampled_from(["opaque_storage", "y"]),
                             st.none(), max_size=1))
def test_constructor_simple(name, bits, supertype, extra):
    """Requirement "Simple dtypes declare one exact positive width", fuzzed."""
    name = _resolve_name(name, "FzS")
    problems = _Problems()
    kwargs = dict(extra)
    if bits is _MISSING or supertype is _MISSING or extra:
        problems.add(TypeError)
    if bits is not _MISSING:
        kwargs["bits"] = bits
        _bits_problem(bits, problems)
    if supertype is not _MISSING:
        kwargs["supertype"] = supertype
        _supertype_problem(supertype, False, problems)
    _name_problem(name, problems)
    result = _check_outcome(lambda: SimpleDType(name, **kwargs), problems)
    if result is not None:
        assert type(result.bits) is int and result.bits == int.__int__(bits)
        assert result.supertype is supertype


@fuzz_settings(200)
@given(name=_names_for("FzP"),
       planes=st.one_of(
           st.lists(st.sampled_from(SIMPLES), min_size=1, max_size=4),
           st.lists(st.sampled_from(TARGETS), max_size=3),
           st.just([]), st.integers(), st.none(),
           st.just(RaisingIterable()), st.just(RaisingIterator())),
       as_type=st.sampled_from([list, tuple, iter]),
       rules=st.one_of(RULES, st.just(RaisingIterable()), st.integers()),
       supertype=SUPERTYPES)
def test_constructor_compound(name, planes, as_type, rules, supertype):
    """Concrete CompoundDType construction, fuzzed: planes must be a
    non-empty iterable of registered SimpleDType, rules RepresentationRule;
    an iterable's own exception propagates unchanged."""
    name = _resolve_name(name, "FzP")
    problems = _Problems()
    _name_problem(name, problems)
    _supertype_problem(supertype, True, problems)
    if isinstance(planes, list):
        if not planes:
            problems.add(ValueError)
        if not all(isinstance(p, SimpleDType) for p in planes):
            problems.add(TypeError)
        planes = as_type(planes)
    elif not isinstance(planes, (RaisingIterable, RaisingIterator)):
        problems.add(TypeError)
    if isinstance(rules, list):
        if not all(isinstance(r, TagRule) for r in rules):
            problems.add(TypeError)
    elif not isinstance(rules, RaisingIterable):
        problems.add(TypeError)
    # The model iterates the user's iterables: their exception is theirs.
    result = _check_outcome(
        lambda: PlanePair(name, planes=planes, rules=rules, supertype=supertype),
        problems, extra_ok=(Boom,))
    if result is not None:
        assert isinstance(result, CompoundDType)
        assert all(isinstance(p, SimpleDType) for p in result.simple_types)


_BLOCK_ENTRIES = st.one_of(st.integers(-1, 40), st.just(2 ** 70), st.booleans(),
                           st.integers(1, 8).map(HostileInt), st.none(), st.text(max_size=1))
BLOCKS = st.one_of(st.integers(1, 64), st.sampled_from([2 ** 70, Whole]),
                   st.integers(-2, 0), st.none(), st.text(max_size=2),
                   st.booleans(), st.integers(1, 8).map(HostileInt),
                   st.lists(_BLOCK_ENTRIES, max_size=4).map(tuple),
                   st.lists(_BLOCK_ENTRIES, max_size=3).map(HostileTuple),
                   st.lists(st.integers(2, 64), min_size=2, max_size=3).map(tuple),
                   st.lists(st.integers(1, 64), max_size=3))


def _entry_ok(entry):
    return (isinstance(entry, int) and not isinstance(entry, bool)
            and int.__int__(entry) >= 2)


def _block_ok(block):
    """Level's documented rule for a block: Whole, a positive int, or a
    tuple (subclass included) of at least two ints, each at least 2."""
    if block is Whole:
        return True
    if isinstance(block, tuple):
        return len(block) >= 2 and all(_entry_ok(e) for e in tuple.__iter__(block))
    return isinstance(block, int) and not isinstance(block, bool) and int.__int__(block) > 0
SCALES = st.one_of(st.sampled_from([DType.E8M0, DType.E4M3, DType.Float32]),
                   st.sampled_from(CATEGORIES), st.none(), st.integers())


def _same_chain(d, element, levels):
    return (type(d).structure_extension is BlockScaledDType.structure_extension
            and d.element is element and d.levels == tuple(levels))


@fuzz_settings(200)
@given(name=_names_for("FzB"),
       element=st.one_of(st.sampled_from(SIMPLES), st.sampled_from(CATEGORIES),
                         st.none(), st.integers()),
       scales_blocks=st.lists(st.tuples(SCALES, BLOCKS), max_size=3),
       raw=st.one_of(st.none(), st.integers(), st.just(RaisingIterable()),
                     st.lists(st.one_of(st.integers(), st.sampled_from(SIMPLES)),
                              min_size=1, max_size=2)))
def test_constructor_block_scaled(name, element, scales_blocks, raw):
    """BlockScaledDType(name, *, element, levels), fuzzed: a Level must be
    well formed to exist at all; construction succeeds only for a
    registered SimpleDType element, a non-empty level chain, a free name
    and a chain no block-scaled dtype of the contract already has (then
    ValueError: unique by structure); registry unchanged on failure."""
    name = _resolve_name(name, "FzB")
    levels = []
    for scale, block in scales_blocks:
        ok = isinstance(scale, SimpleDType) and _block_ok(block)
        try:
            with armed():
                levels.append(Level(scale=scale, block=block))
        except (TypeError, ValueError) as exc:
            assert not ok, f"Level({scale!r}, {block!r}) refused: {exc!r}"
            return   # Level refused its own arguments: nothing to build
        assert ok, f"Level({scale!r}, {block!r}) accepted"
    arg = levels if raw is None else raw
    problems = _Problems()
    _name_problem(name, problems)
    if not isinstance(element, SimpleDType):
        problems.add(TypeError)
    if raw is not None:
        if not isinstance(raw, RaisingIterable):
            problems.add(TypeError)
    elif not levels:
        problems.add(ValueError)
    elif any(level.block is Whole for level in levels[:-1]):
        problems.add(ValueError)     # only the last level may be Whole
    elif any(type(level.block) is tuple for level in levels[1:]) or (
            type(levels[0].block) is tuple
            and any(level.block is not Whole for level in levels[1:])):
        problems.add(ValueError)     # an N-D block at level 0 only, then Whole
    elif isinstance(element, SimpleDType) and any(
            _same_chain(d, element, levels) for d in BlockScaledDType.registered()):
        problems.add(ValueError)
    result = _check_outcome(
        lambda: BlockScaledDType(name, element=element, levels=arg),
        problems, extra_ok=(Boom,))
    if result is not None:
        assert result.element is element and result.levels == tuple(levels)
        assert result.simple_types == (element,) + tuple(l.scale for l in levels)


# --------------------------------------------------------------------------
# structure_extension() fuzzing
# --------------------------------------------------------------------------

EXT_VALID = st.recursive(
    st.one_of(st.text(max_size=5), st.integers(), st.integers(2 ** 63, 2 ** 90),
              st.floats(allow_nan=True), st.booleans(), st.none(), st.just(Whole)),
    lambda inner: st.lists(inner, max_size=3).map(tuple),
    max_leaves=6,
)
EXT_INVALID_LEAF = st.one_of(
    st.text(max_size=3).map(HostileStr), st.integers().map(HostileInt),
    st.floats().map(HostileFloat), st.lists(st.integers(), max_size=2),
    st.binary(max_size=2), st.sampled_from(TARGETS), st.builds(object),
    st.lists(st.integers(), max_size=2).map(HostileTuple), st.builds(dict),
    st.complex_numbers(max_magnitude=2),
)


@fuzz_settings(200)
@given(ext=st.one_of(
    EXT_VALID.map(lambda v: (v,)),
    st.lists(EXT_VALID, max_size=4).map(tuple),
    st.lists(st.one_of(EXT_VALID, EXT_INVALID_LEAF), min_size=1, max_size=4).map(tuple),
    EXT_VALID, EXT_INVALID_LEAF,
    st.lists(EXT_VALID, max_size=3).map(HostileTuple),
), kind=st.sampled_from(["simple", "category"]))
def test_structure_extension_results(ext, kind):
    """Requirement "Descriptor structure is canonical and extensible",
    fuzzed: a tuple of permitted values is recorded exactly as encoded (a
    top-level tuple subclass is read without its methods); anything else is
    a TypeError before registering; structure_extension runs once."""
    calls = []

    class Ext(SimpleDType if kind == "simple" else DTypeCategory, abstract=False):
        def structure_extension(self):
            calls.append(1)
            return ext

    if isinstance(ext, tuple):
        encoded = encode_leaf(tuple.__new__(tuple, ext) if type(ext) is HostileTuple
                              else ext)
    else:
        encoded = None
    problems = _Problems()
    if encoded is None:
        problems.add(TypeError)
    name = unique_name("FzExt")
    kwargs = {"bits": 8, "supertype": DType.Floating} if kind == "simple" else {}
    note(f"encoded: {encoded!r}")
    result = _check_outcome(lambda: Ext(name, **kwargs), problems)
    assert len(calls) == 1
    if result is not None:
        assert result.structure()[-1] == ("extension", encoded)
        assert _dtypes._reconstruct(name, result.structure()) is result


@fuzz_settings(100)
@given(a=EXT_VALID, b=EXT_VALID)
def test_structure_extension_distinguishes_values_exactly(a, b):
    """Scenario "Distinguish extension representations": two extensions'
    structures are equal exactly when their values are equal leaf by leaf
    with types (True, 1, 1.0 differ; 0.0 and -0.0 differ; NaN == same NaN)."""
    def make(value):
        class Ext(SimpleDType, abstract=False):
            def structure_extension(self):
                return (value,)
        return Ext(unique_name("FzDist"), bits=8, supertype=DType.Floating)

    da, db = make(a), make(b)
    same = encode_leaf(a) == encode_leaf(b)
    assert (da.structure() == db.structure()) is same
    assert (hash(da.structure()) == hash(db.structure())) or not same
    want = da if same else ValueError
    got = expected_reconstruct(da.name, db.structure())
    assert got is want
    check_reconstruct(da.name, db.structure())


# --------------------------------------------------------------------------
# The stateful model of the registry
# --------------------------------------------------------------------------

class FailingInit(SimpleDType, abstract=False):
    """Fails after the model's __init__ ran (so the name was checked free)."""

    def __init__(self, name, *, bits, supertype):
        super().__init__(name, bits=bits, supertype=supertype)
        raise Boom("after super().__init__")


class BadExtension(DTypeCategory, abstract=False):
    def structure_extension(self):
        return ([1, 2],)   # a list: refused


class RegistryMachine(RuleBasedStateMachine):
    """Model: the ordered names this run registered, each with its object
    and the structure it had at registration; the names whose construction
    failed (still free); the last global snapshot."""

    categories = Bundle("categories")
    simples = Bundle("simples")
    descriptors = Bundle("descriptors")
    free_names = Bundle("free_names")

    def __init__(self):
        super().__init__()
        self.start = DType.registered()
        self.order = []            # names, registration order
        self.objects = {}          # name -> descriptor
        self.structures = {}       # name -> structure at registration
        self.failed = set()        # names whose construction failed
        self.last_snapshot = self.start

    # -- helpers ------------------------------------------------------------
    def _registered(self, d):
        self.order.append(d.name)
        self.objects[d.name] = d
        self.structures[d.name] = d.structure()
        self.failed.discard(d.name)
        return d

    def _fails(self, exc, call):
        before = DType.registered()
        with pytest.raises(exc):
            call()
        assert DType.registered() == before

    # -- register -----------------------------------------------------------
    @rule(target=categories, supertype=st.one_of(
        st.none(), st.sampled_from([DType.Any, DType.Floating, DType.Integer]),
        categories))
    def register_category(self, supertype):
        return self._registered(DTypeCategory(unique_name("SmC"), supertype=supertype))

    @rule(target=simples, bits=st.one_of(st.integers(1, 64), st.just(2 ** 70)),
          supertype=st.one_of(st.sampled_from([DType.Floating, DType.Integer]),
                              categories))
    def register_simple(self, bits, supertype):
        return self._registered(SimpleDType(unique_name("SmS"), bits=bits,
                                            supertype=supertype))

    @rule(target=descriptors, planes=st.lists(simples, min_size=1, max_size=3),
          tag=st.one_of(st.integers(), st.text(max_size=3)))
    def register_compound(self, planes, tag):
        return self._registered(PlanePair(unique_name("SmP"), planes=planes,
                                          rules=[TagRule(tag)]))

    @rule(target=descriptors, element=simples,
          chain=st.lists(st.tuples(st.one_of(simples, st.sampled_from(
              [DType.E8M0, DType.Float32])), st.one_of(st.integers(1, 64),
                                                     st.just(Whole))),
                         min_size=1, max_size=3))
    def register_block_scaled(self, element, chain):
        """Unique by structure: the same element and level chain registers
        once; a second time (under a fresh name) is a ValueError."""
        levels = tuple(Level(scale=s, block=b) for s, b in chain)
        taken = [d for d in BlockScaledDType.registered()
                 if _same_chain(d, element, levels)]
        name = unique_name("SmB")
        if any(level.block is Whole for level in levels[:-1]):
            # Only the last level may be Whole.
            self._fails(ValueError, lambda: BlockScaledDType(
                name, element=element, levels=levels))
            return multiple()
        if taken:
            self._fails(ValueError, lambda: BlockScaledDType(
                name, element=element, levels=levels))
            return multiple()
        return self._registered(BlockScaledDType(name, element=element,
                                                 levels=levels))

    @rule(target=descriptors, d=st.one_of(categories, simples))
    def remember(self, d):
        return d

    @rule(name=consumes(free_names), bits=st.integers(1, 64))
    def register_previously_failed_name(self, name, bits):
        """A failed construction left its name free: it registers now."""
        assert name in self.failed
        self._registered(SimpleDType(name, bits=bits, supertype=DType.Floating))

    # -- failed registrations ------------------------------------------------
    @rule(d=descriptors, bits=st.integers(1, 64))
    def register_duplicate_name(self, d, bits):
        self._fails(ValueError, lambda: SimpleDType(d.name, bits=bits,
                                                    supertype=DType.Floating))
        self._fails(ValueError, lambda: DTypeCategory(d.name))

    @rule(target=free_names, how=st.sampled_from(
        ["bits", "supertype", "init", "extension", "planes", "keyword"]))
    def register_fails(self, how):
        name = unique_name("SmF")
        if how == "bits":
            self._fails(ValueError, lambda: SimpleDType(name, bits=0,
                                                        supertype=DType.Floating))
        elif how == "supertype":
            self._fails(TypeError, lambda: SimpleDType(name, bits=8,
                                                       supertype=DType.Float32))
        elif how == "init":
            self._fails(Boom, lambda: FailingInit(name, bits=8,
                                                  supertype=DType.Floating))
        elif how == "extension":
            self._fails(TypeError, lambda: BadExtension(name))
        elif how == "planes":
            self._fails(ValueError, lambda: PlanePair(name, planes=[]))
        else:
            self._fails(TypeError, lambda: DTypeCategory(name, opaque_storage=True))
        self.failed.add(name)
        return name

    # -- reads --------------------------------------------------------------
    @rule(d=descriptors)
    def look_up(self, d):
        assert DType.from_name(d.name) is d
        assert type(d).from_name(d.name) is d
        for cls in (DTypeCategory, SimpleDType, CompoundDType, BlockScaledDType):
            if isinstance(d, cls):
                assert cls.from_name(d.name) is d
            else:
                with pytest.raises(LookupError):
                    cls.from_name(d.name)

    @rule(name=free_names)
    def look_up_failed_name(self, name):
        if name in self.failed:
            with pytest.raises(LookupError):
                DType.from_name(name)

    @rule(d=descriptors, protocol=st.integers(0, pickle.HIGHEST_PROTOCOL))
    def pickle_round_trip(self, d, protocol):
        assert pickle.loads(pickle.dumps(d, protocol=protocol)) is d
        assert pickle.loads(pickle.dumps([d, (d,)], protocol=protocol))[1][0] is d

    @rule(a=descriptors, b=descriptors)
    def reconstruct_with_another_structure(self, a, b):
        got = check_reconstruct(a.name, b.structure())
        if a.structure() == b.structure():
            assert got is a
        else:
            assert type(got) is ValueError

    @rule(name=free_names)
    def reconstruct_failed_name(self, name):
        if name in self.failed:
            check_reconstruct(name, DType.Float32.structure())

    @rule(cls=st.sampled_from([DType, DTypeCategory, SimpleDType, CompoundDType,
                               PlanePair, BlockScaledDType]))
    def snapshot(self, cls):
        snap = cls.registered()
        assert type(snap) is tuple
        everything = DType.registered()
        assert snap == tuple(d for d in everything if isinstance(d, cls))
        assert snap is cls.registered() or snap == cls.registered()

    # -- hostile code ---------------------------------------------------------------
    @rule(route=st.sampled_from(hostile.CLASS_ROUTES),
          owned=st.sampled_from(hostile.OWNED))
    def define_hostile_class(self, route, owned):
        hostile.hostile_class(route, owned)

    @rule(target=free_names, route=st.sampled_from(hostile.DICT_ROUTES),
          owned=st.sampled_from(hostile.OWNED))
    def shadow_through_the_instance_dict(self, route, owned):
        name = unique_name("SmD")
        hostile.shadowing_instance_dict(route, owned, name)
        self.failed.add(name)
        return name

    @rule(target=simples, action=st.sampled_from(
        ["instantiate", "subclass", "subclass-other-kind"]))
    def hook_uses_its_class(self, action):
        Leaf = hostile.hook_uses_its_class(action)
        return self._registered(Leaf(unique_name("SmH"), bits=8,
                                     supertype=DType.Floating))

    @rule(target=simples, action=st.sampled_from(hostile.FINALIZER_ACTIONS))
    def finalizer_during_sealing(self, action):
        return self._registered(hostile.finalizer_during_sealing(
            action, unique_name("SmZ")))

    @rule(target=simples, defined=st.sampled_from(hostile.CALLBACK_CLASSES))
    def classes_made_by_gc_callbacks(self, defined):
        cls = hostile.classes_made_by_gc_callbacks(defined, count=3)[-1]
        return self._registered(cls(unique_name("SmG"), bits=8,
                                    supertype=DType.Floating))

    @rule(d=descriptors)
    def assign_class(self, d):
        hostile.assign_class(d)

    @rule(d=descriptors)
    def poke_referents(self, d):
        hostile.poke_referents(d, _dtypes)

    @rule(target=simples, member=st.sampled_from(
        [m for m in hostile.OWNED if m != "__class__"]), first=st.booleans())
    def change_a_mixin_later(self, member, first):
        mixin = type("Mixin", (), {"__slots__": ()})
        bases = (mixin, SimpleDType) if first else (SimpleDType, mixin)
        cls = type(SimpleDType)("Mixed", bases, {}, abstract=False)
        d = self._registered(cls(unique_name("SmM"), bits=12,
                                 supertype=DType.Floating))
        setattr(mixin, member, property(lambda self: "lie")
                if member != "__hash__" else (lambda self: 1))
        return d

    @rule(which=st.sampled_from(hostile.MODULE_STAND_INS))
    def replace_a_module_in_sys_modules(self, which):
        hostile.sys_modules_replaced(which, unique_name("SmQ"))

    @rule()
    def share_a_miss_between_threads(self):
        hostile.miss_shared_by_threads(unique_name("SmT"), rounds=1)

    # -- the model, after every step ---------------------------------------------
    @invariant()
    def registry_matches_the_model(self):
        now = DType.registered()
        # Never shrinks: the last snapshot is a prefix of this one.
        assert now[:len(self.last_snapshot)] == self.last_snapshot
        self.last_snapshot = now
        # Exactly this run's registrations were added, in order.
        added = now[len(self.start):]
        assert [d.name for d in added] == self.order
        names = [d.name for d in now]
        assert len(set(names)) == len(names), "a name appears twice"
        for name in self.order:
            d = self.objects[name]
            assert DType.from_name(name) is d
            assert d.structure() == self.structures[name]
            assert d.name == name and d == d and d != DType.Any
            assert not hasattr(d, "is_opaque_storage")
            assert pickle.loads(pickle.dumps(d)) is d
        for name in self.failed:
            assert name not in self.objects


TestRegistryMachine = pytest.mark.slow(RegistryMachine.TestCase)
TestRegistryMachine.settings = fuzz_settings(40, stateful_step_count=25)


# Allocation failures are injected in a child of their own: _testcapi's
# hooks fail every thread's allocations, and the test process has threads
# of its own (pytest-xdist's), which must not see them.
_ALLOCATION_FAILURES = r"""
import json, sys
from hypothesis import given, settings, strategies as st
import _hostile_ops as hostile

if hostile.allocation_fails("simple dtype", "Probe", 10 ** 6) is None:
    print(json.dumps({"skipped": True}))
    sys.exit(0)
outcomes = {"failed": 0, "ok": 0, "unraisable": []}
outcomes["unraisable MemoryError"] = hostile.count_unraisable(outcomes["unraisable"])
counter = iter(range(10 ** 9))

@settings(max_examples=int(sys.argv[1]), deadline=None, database=None)
@given(what=st.sampled_from(hostile.ALLOCATING_OPERATIONS), index=st.integers(0, 60))
def run(what, index):
    failed = hostile.allocation_fails(what, "Alloc_%d" % next(counter), index)
    outcomes["failed" if failed else "ok"] += 1

run()
print(json.dumps(outcomes))
"""


def test_failed_allocations_give_the_truth_or_memory_error():
    """The hostile operation `allocation_fails`, driven by hypothesis in a
    child: registering, attaching a numeric record and building a promotion
    lattice with one allocation failing each give the truth or a
    MemoryError that changes nothing (the operation checks both)."""
    if hostile.nomemory_unusable() is not None:
        pytest.skip(hostile.nomemory_unusable())
    report = child_report(_ALLOCATION_FAILURES, "150",
                          path=(os.path.dirname(os.path.abspath(__file__)),),
                          timeout=600)
    if report.get("skipped"):
        pytest.skip("this CPython has no _testcapi.set_nomemory")
    assert report["failed"] > 0 and report["ok"] > 0, report
    assert report["unraisable"] == [], report
