"""Coverage-guided fuzzing of stride_weave's untrusted inputs with atheris.

    python fuzz/fuzz_reconstruct.py -max_total_time=60 [libFuzzer flags...]

Each input (bytes from libFuzzer) is decoded by atheris.FuzzedDataProvider
into one of:

  0. an unpickling payload: ``_reconstruct(name, structure)`` where the
     structure is a registered descriptor's (built-ins, block-scaled with
     1-D and N-D blocks, and one extension of every kind) after decoded
     mutations, or a decoded value tree: str/int/float/bytes/None/Whole/descriptors,
     hostile str/int/float/tuple subclasses whose dunders raise, lists,
     tuples up to 200 000 long and nestings up to 100 000 deep;
  1. the same payload through ``pickle.loads`` of a crafted pickle;
  2. a constructor call: DTypeCategory, SimpleDType, a CompoundDType
     subclass or BlockScaledDType with decoded arguments;
  3. a descriptor subclass whose ``structure_extension()`` returns a
     decoded value;
  4. hostile code (tests/reliability/_hostile_ops.py): a class that shadows a
     model-owned member by a decoded route, an owned name written into an
     instance dict while building, a class hook that instantiates or
     subclasses the class being created, ``__class__`` assignment on a
     registered object, clearing whatever mutable container
     ``gc.get_referents`` hands out from a descriptor and the module, an
     attribute name whose finalizer attacks the object being sealed, and
     gc callbacks that create classes while other classes are created.

Every outcome is checked against the oracle the test suite uses
(tests/reliability/_fuzz_oracle.py): _reconstruct returns exactly the identity or raises
exactly the LookupError/ValueError/TypeError the oracle predicts, never runs
a hostile dunder and never changes the registry; a constructor succeeds
(registered, pickles to itself) or fails with TypeError/ValueError (or the
exception of a user iterable it had to iterate) leaving the registry as it
was; an extension value is recorded exactly as docs/structure.md encodes it
or refused with TypeError. Any other exception is reported by atheris as a
finding (with the input saved as crash-*), and so is a crash of the
interpreter. Names come from a small pool, so a long run keeps a bounded
registry. See fuzz/README.md.
"""
import os
import pickle
import sys

import atheris

HERE = os.path.dirname(os.path.abspath(__file__))
# tests/ for the support package, tests/reliability/ for the fuzz helpers
TESTS = os.path.join(HERE, os.pardir, "tests")
sys.path[:0] = [TESTS, os.path.join(TESTS, "reliability")]

with atheris.instrument_imports():
    import _fuzz_oracle as oracle
    import _hostile_ops as hostile
    from support.defs import PlanePair, TagRule
    from stride_weave import _dtypes
    from stride_weave.dtypes import (
        BlockScaledDType,
        DType,
        DTypeCategory,
        Level,
        SimpleDType,
        Whole,
    )


# --------------------------------------------------------------------------
# What the fuzzer works on
# --------------------------------------------------------------------------

# The rule and compound classes the tests share (tests/support/defs.py).
Rule, Pair = TagRule, PlanePair


class RichSimple(SimpleDType, abstract=False):
    def structure_extension(self):
        return ("s", 7, -(2 ** 100), 1.5, -0.0, True, None, Whole, ((),))


PID = os.getpid()
_cat = DTypeCategory(f"AtCat_{PID}", supertype=DType.Floating)
_simple = SimpleDType(f"AtSimple_{PID}", bits=16, supertype=_cat)
_rich = RichSimple(f"AtRich_{PID}", bits=8, supertype=_cat)
_pair = Pair(f"AtPair_{PID}", planes=[_simple, DType.E8M0], rules=[Rule(3)])
_bs = BlockScaledDType(f"AtBs_{PID}", element=_simple,
                       levels=[Level(scale=DType.E8M0, block=16),
                               Level(scale=_rich, block=Whole)])
_nd = BlockScaledDType(f"AtNd_{PID}", element=_simple,
                       levels=[Level(scale=DType.E4M3, block=(16, 16)),
                               Level(scale=_rich, block=Whole)])
TARGETS = list(DType.registered())   # built-ins and the above
SIMPLES = [d for d in TARGETS if isinstance(d, SimpleDType)]
CATEGORIES = [d for d in TARGETS if isinstance(d, DTypeCategory)]
NAME_POOL = [f"AtNew_{PID}_{i}" for i in range(48)]   # bounded registry
_fresh = iter(range(1 << 62))


def fresh_name():
    """A name never used before: the attacks that register on their own
    (allocation failures) or only miss (sys.modules, shared misses)."""
    return f"AtFresh_{PID}_{next(_fresh)}"


def _leaves():
    out, stack = set(), [d.structure() for d in TARGETS]
    while stack:
        node = stack.pop()
        if type(node) is tuple:
            stack.extend(node)
        else:
            out.add(node)
    return sorted(out) + ["", ":", "opaque_storage", "ref", "int:", "str:"]


LEAVES = _leaves()


# --------------------------------------------------------------------------
# Decoding bytes into values
# --------------------------------------------------------------------------

def pick(fdp, seq):
    return seq[fdp.ConsumeIntInRange(0, len(seq) - 1)]


def value(fdp, depth=0):
    kind = fdp.ConsumeIntInRange(0, 17)
    if kind == 0:
        return pick(fdp, LEAVES)
    if kind == 1:
        return fdp.ConsumeUnicode(fdp.ConsumeIntInRange(0, 12))
    if kind == 2:
        return fdp.ConsumeInt(fdp.ConsumeIntInRange(1, 40))
    if kind == 3:
        return fdp.ConsumeFloat()
    if kind == 4:
        return None
    if kind == 5:
        return fdp.ConsumeBool()
    if kind == 6:
        return fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 6))
    if kind == 7:
        return Whole
    if kind == 8:
        return pick(fdp, TARGETS)
    if kind == 9:
        return oracle.HostileStr(pick(fdp, LEAVES))
    if kind == 10:
        return oracle.HostileInt(fdp.ConsumeInt(8))
    if kind == 11:
        return oracle.HostileFloat(fdp.ConsumeFloat())
    if depth >= 6 or kind == 12:
        return pick(fdp, TARGETS).structure()
    n = fdp.ConsumeIntInRange(0, 4)
    items = [value(fdp, depth + 1) for _ in range(n)]
    if kind == 13:
        return tuple(items)
    if kind == 14:
        return items
    if kind == 15:
        return oracle.HostileTuple(items)
    inner = items[0] if items else ()
    if kind == 16:   # deep
        for _ in range(pick(fdp, [1, 10, 1000, 100_000])):
            inner = (inner,)
        return inner
    if depth > 0:
        # Huge tuples only at the top: a huge tuple of huge tuples is
        # quadratic work for any reader, the oracle included.
        return tuple(items)
    return (inner,) * pick(fdp, [2, 100, 200_000])   # huge


def mutated(fdp):
    s = pick(fdp, TARGETS).structure()
    for _ in range(fdp.ConsumeIntInRange(0, 4)):
        path = pick(fdp, oracle.structure_paths(s))
        node = oracle.get_at(s, path)
        op = fdp.ConsumeIntInRange(0, 6)
        if op == 0:
            s = oracle.put_at(s, path, value(fdp))
        elif op == 1:
            s = oracle.put_at(s, path, (node,))
        elif op == 2 and path:
            parent = oracle.get_at(s, path[:-1])
            i = path[-1]
            s = oracle.put_at(s, path[:-1], parent[:i] + parent[i + 1:])
        elif op == 3 and type(node) is tuple:
            s = oracle.put_at(s, path, oracle.HostileTuple(node))
        elif op == 4 and type(node) is str:
            cut = fdp.ConsumeIntInRange(0, len(node))
            s = oracle.put_at(s, path, node[:cut] + fdp.ConsumeUnicode(2))
        elif op == 5 and type(node) is tuple:
            s = oracle.put_at(s, path, node + (value(fdp),))
        else:
            s = oracle.put_at(s, path, pick(fdp, TARGETS).structure())
    return s


def name(fdp):
    kind = fdp.ConsumeIntInRange(0, 5)
    if kind == 0:
        return pick(fdp, [d.name for d in TARGETS])
    if kind == 1:
        return oracle.HostileStr(pick(fdp, [d.name for d in TARGETS]))
    if kind == 2:
        return fdp.ConsumeUnicode(fdp.ConsumeIntInRange(0, 10))
    if kind == 3:
        return pick(fdp, NAME_POOL)
    if kind == 4:
        return oracle.HostileStr(pick(fdp, NAME_POOL))
    return value(fdp)


# --------------------------------------------------------------------------
# The checks
# --------------------------------------------------------------------------

def check_reconstruct(fdp, through_pickle):
    n = name(fdp)
    s = mutated(fdp) if fdp.ConsumeBool() else value(fdp)
    want = oracle.expected_reconstruct(n, s)
    before = DType.registered()
    if through_pickle:
        if not (type(n) is str and _plain(s)):
            return
        data = pickle.dumps(_Crafted(n, s), protocol=fdp.ConsumeIntInRange(0, 5))
        call = lambda: pickle.loads(data)  # noqa: E731
    else:
        call = lambda: _dtypes._reconstruct(n, s)  # noqa: E731
    try:
        with oracle.armed():
            got = call()
    except (TypeError, ValueError, LookupError) as exc:
        got = exc
    assert DType.registered() == before, "_reconstruct changed the registry"
    if isinstance(want, type):
        assert type(got) is want, (want, got)
        str(got)
    else:
        assert got is want, (want, got)


def _plain(s):
    """Only str/int/None in tuples no longer than 1000 and at most 200 deep:
    what pickle.dumps itself can write (deeper payloads are covered by the
    direct calls, and by a crafted-opcode test in tests/reliability/test_fuzz.py)."""
    stack = [(s, 0)]
    while stack:
        node, depth = stack.pop()
        if type(node) is tuple:
            if len(node) > 1000 or depth > 200:
                return False
            stack.extend((item, depth + 1) for item in node)
        elif type(node) not in (str, int, type(None)):
            return False
    return True


class _Crafted:
    def __init__(self, n, s):
        self.args = (n, s)

    def __reduce__(self):
        return (_dtypes._reconstruct, self.args)


def check_constructor(fdp):
    n = name(fdp)
    kind = fdp.ConsumeIntInRange(0, 3)
    sup = value(fdp) if fdp.ConsumeIntInRange(0, 3) == 0 else pick(fdp, CATEGORIES)
    if kind == 0:
        call = lambda: DTypeCategory(n, supertype=sup)  # noqa: E731
    elif kind == 1:
        bits = value(fdp) if fdp.ConsumeBool() else fdp.ConsumeIntInRange(-2, 80)
        call = lambda: SimpleDType(n, bits=bits, supertype=sup)  # noqa: E731
    elif kind == 2:
        planes = [pick(fdp, SIMPLES) if fdp.ConsumeIntInRange(0, 4) else value(fdp)
                  for _ in range(fdp.ConsumeIntInRange(0, 3))]
        if fdp.ConsumeIntInRange(0, 5) == 0:
            planes = oracle.RaisingIterable()
        rules = [Rule(fdp.ConsumeInt(2)) if fdp.ConsumeBool() else value(fdp)
                 for _ in range(fdp.ConsumeIntInRange(0, 2))]
        call = lambda: Pair(n, planes=planes, rules=rules, supertype=sup)  # noqa: E731
    else:
        element = pick(fdp, SIMPLES) if fdp.ConsumeIntInRange(0, 4) else value(fdp)
        try:
            levels = [Level(scale=pick(fdp, SIMPLES) if fdp.ConsumeIntInRange(0, 4)
                            else value(fdp),
                            block=pick(fdp, [1, 2, 16, 32, Whole, 2 ** 70, 0, None,
                                             (16, 16), (128, 128), (2, 3, 4), (1, 32),
                                             (32,), (16, 0), (16, True), [16, 16],
                                             (16, oracle.HostileInt(16)),
                                             oracle.HostileTuple((16, 16))]))
                      for _ in range(fdp.ConsumeIntInRange(0, 3))]
        except (TypeError, ValueError):
            return
        call = lambda: BlockScaledDType(n, element=element, levels=levels)  # noqa: E731
    before = DType.registered()
    try:
        with oracle.armed():
            d = call()
    except (TypeError, ValueError, oracle.Boom):
        assert DType.registered() == before, "a failed construction registered"
        return
    assert DType.registered() == before + (d,)
    assert DType.from_name(d.name) is d and type(d.name) is str
    assert pickle.loads(pickle.dumps(d)) is d


DEEP = object()


def check_extension(fdp):
    ext = value(fdp) if fdp.ConsumeBool() else tuple(
        value(fdp) for _ in range(fdp.ConsumeIntInRange(0, 3)))
    n = pick(fdp, NAME_POOL)

    class Ext(SimpleDType, abstract=False):
        def structure_extension(self):
            return ext

    try:
        # A top-level tuple subclass is read without its methods (as
        # tests/reliability/test_fuzz.py expects); nested values must be exact.
        encoded = (oracle.encode_leaf(tuple.__new__(tuple, ext))
                   if isinstance(ext, tuple) else None)
    except RecursionError:
        encoded = DEEP   # deeper than the recursion limit
    before = DType.registered()
    try:
        with oracle.armed():
            d = Ext(n, bits=8, supertype=DType.Floating)
    except RecursionError:
        # Allowed for a pathologically deep value (tests/descriptors/test_structure.py,
        # test_deeply_nested_extension_does_not_crash): raise, never crash.
        assert encoded is DEEP, f"RecursionError for {ext!r}"
        assert DType.registered() == before
        return
    except TypeError:
        assert encoded is None or n in {x.name for x in before}
        assert DType.registered() == before
        return
    except ValueError:   # the name is already taken
        assert n in {x.name for x in before}
        assert DType.registered() == before
        return
    assert encoded is not None, f"accepted {ext!r}"
    if encoded is not DEEP:
        assert d.structure()[-1] == ("extension", encoded)
    assert _dtypes._reconstruct(n, d.structure()) is d


def check_hostile(fdp):
    """One attack from tests/reliability/_hostile_ops.py; each checks its own outcome,
    and afterwards every descriptor still reports what it recorded."""
    targets = DType.registered()
    recorded = {d: d.structure() for d in targets}
    attack = fdp.ConsumeIntInRange(0, 9)
    if attack == 0:
        hostile.hostile_class(pick(fdp, hostile.CLASS_ROUTES),
                              pick(fdp, hostile.OWNED))
    elif attack == 1:
        n = pick(fdp, NAME_POOL)
        try:
            DType.from_name(n)
        except LookupError:
            hostile.shadowing_instance_dict(pick(fdp, hostile.DICT_ROUTES),
                                            pick(fdp, hostile.OWNED), n)
    elif attack == 2:
        hostile.hook_uses_its_class(
            pick(fdp, ["instantiate", "subclass", "subclass-other-kind"]))
    elif attack == 3:
        hostile.assign_class(pick(fdp, targets))
    elif attack == 4:
        n = pick(fdp, NAME_POOL)
        try:
            DType.from_name(n)
        except LookupError:
            hostile.finalizer_during_sealing(
                pick(fdp, hostile.FINALIZER_ACTIONS), n)
    elif attack == 5:
        hostile.classes_made_by_gc_callbacks(
            pick(fdp, hostile.CALLBACK_CLASSES), count=3)
    elif attack == 6:
        hostile.poke_referents(pick(fdp, targets), _dtypes)
    elif attack == 7:
        hostile.sys_modules_replaced(pick(fdp, hostile.MODULE_STAND_INS),
                                     fresh_name())
    elif attack == 8:
        hostile.miss_shared_by_threads(fresh_name(), rounds=1)
    else:
        hostile.allocation_fails(pick(fdp, hostile.ALLOCATING_OPERATIONS),
                                 fresh_name(), fdp.ConsumeIntInRange(0, 60))
    for d, structure in recorded.items():
        assert DType.from_name(d.name) is d
        assert d.structure() == structure
        assert pickle.loads(pickle.dumps(d)) is d


def TestOneInput(data):
    fdp = atheris.FuzzedDataProvider(data)
    op = fdp.ConsumeIntInRange(0, 4)
    if op == 0:
        check_reconstruct(fdp, through_pickle=False)
    elif op == 1:
        check_reconstruct(fdp, through_pickle=True)
    elif op == 2:
        check_constructor(fdp)
    elif op == 3:
        check_extension(fdp)
    else:
        check_hostile(fdp)


def main():
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
