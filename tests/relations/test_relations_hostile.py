"""Kinds, casting and promotion against hostile arguments.

Kind names, casting levels and scalar-default keys that are str subclasses
with methods that raise or record calls; tuples whose items' __eq__,
__hash__ and __repr__ raise; tuple and dict subclasses whose protocol
methods lie; int and float subclasses as scalars; objects that claim to be
descriptors; edge iterables that declare edges while they are iterated;
and garbage collection callbacks, weakref callbacks and finalizers that
declare edges in the middle of a declaration (in a child process: a crash
there is a failed test, not a dead suite).  None of their methods runs,
each answer is the one the values give, and the lattice stays consistent.
"""
import sys

import pytest

from support import child_report, unique_name
from support.relations import extension_with_record
from stride_weave.dtypes import (
    DType,
    SimpleDType,
    can_cast,
    declare_promotions,
    default_lattice,
    isdtype,
    promote_types,
    result_type,
)
from stride_weave.numerics import NumericInfo

CALLS = []


class HostileStr(str):
    """A str subclass whose methods record that they ran, then raise."""

    def _called(self, *args):
        CALLS.append(self)
        raise AssertionError("a method of a hostile str ran")

    __eq__ = __ne__ = __hash__ = __repr__ = __str__ = __len__ = __getitem__ = _called
    __iter__ = __lt__ = __format__ = casefold = lower = _called


class Hostile:
    """An object whose comparison, hash and repr raise."""

    def _called(self, *args):
        CALLS.append(self)
        raise AssertionError("a method of a hostile object ran")

    __eq__ = __ne__ = __hash__ = __repr__ = __str__ = __bool__ = _called


class LyingTuple(tuple):
    """A tuple whose protocol says something other than its storage."""

    def _called(self, *args):
        CALLS.append(self)
        raise AssertionError("a method of a tuple subclass ran")

    __iter__ = __getitem__ = __len__ = __contains__ = _called


@pytest.fixture(autouse=True)
def no_calls():
    CALLS.clear()
    yield
    assert CALLS == [], "hostile methods ran"


def test_kind_names_that_are_hostile_str_subclasses():
    assert isdtype(DType.Int8, HostileStr("signed integer"))
    assert not isdtype(DType.Int8, HostileStr("real floating"))
    assert isdtype(DType.Int8, (HostileStr("bool"), HostileStr("integral")))
    with pytest.raises(ValueError, match=r"got 'nonsense'"):
        isdtype(DType.Int8, HostileStr("nonsense"))


def test_kind_tuples_holding_hostile_objects():
    with pytest.raises(TypeError, match=r"got an object of type Hostile"):
        isdtype(DType.Int8, ("bool", Hostile()))
    with pytest.raises(TypeError, match=r"got an object of type Hostile"):
        isdtype(DType.Int8, Hostile())


def test_kind_tuples_that_are_lying_subclasses():
    assert isdtype(DType.Int8, LyingTuple(("bool", "numeric")))
    assert not isdtype(DType.Int8, LyingTuple(("bool",)))


def test_casting_levels_that_are_hostile_str_subclasses():
    assert can_cast(DType.Float64, DType.Float32, HostileStr("same_kind"))
    assert not can_cast(DType.Float64, DType.Float32, HostileStr("safe"))
    with pytest.raises(ValueError, match=r"got 'lossless'"):
        can_cast(DType.Int8, DType.Int8, HostileStr("lossless"))
    with pytest.raises(TypeError, match=r"got an object of type Hostile"):
        can_cast(DType.Int8, DType.Int8, Hostile())


def test_scalar_default_keys_that_are_hostile_str_subclasses():
    class LyingDict(dict):
        def _called(self, *args):
            CALLS.append(self)
            raise AssertionError("a method of a dict subclass ran")

        items = keys = values = __iter__ = __getitem__ = __len__ = _called

    class KeyStr(HostileStr):
        __hash__ = str.__hash__       # it must go into a dict

    lattice = default_lattice().extend(
        scalar_defaults=LyingDict({KeyStr("float"): DType.Float64}))
    assert lattice.result_type(1.5) is DType.Float64
    with pytest.raises(ValueError, match=r"got 'double'"):
        default_lattice().extend(scalar_defaults={KeyStr("double"): DType.Float64})


def test_edges_in_lying_tuples():
    # The iterable of edges is iterated (that is its protocol); each edge is
    # read from its tuple's storage.
    a, b = (extension_with_record(unique_name("HostE"), NumericInfo.integer(n, signed=True))
            for n in (16, 24))
    lattice = default_lattice().extend([LyingTuple((a, b))])
    assert lattice.promote_types(a, b) is b


def test_scalar_subclasses_are_refused_without_running_their_methods():
    class MyInt(int):
        def _called(self, *args):
            CALLS.append(self)
            raise AssertionError("a method of an int subclass ran")

        __index__ = __int__ = __eq__ = __hash__ = __repr__ = __bool__ = _called

    class MyFloat(float):
        def _called(self, *args):
            CALLS.append(self)
            raise AssertionError("a method of a float subclass ran")

        __float__ = __eq__ = __hash__ = __repr__ = __bool__ = _called

    for scalar in (MyInt(5), MyFloat(2.0)):
        with pytest.raises(TypeError, match=r"a subclass of (int|float)"):
            result_type(DType.Float64, scalar)


def test_objects_that_claim_to_be_descriptors():
    class Impostor:
        __class__ = SimpleDType       # what isinstance() would believe

    for call in (lambda: promote_types(Impostor(), DType.Int8),
                 lambda: can_cast(DType.Int8, Impostor()),
                 lambda: isdtype(Impostor(), "bool"),
                 lambda: isdtype(DType.Int8, Impostor()),
                 lambda: result_type(Impostor()),
                 lambda: declare_promotions([(Impostor(), DType.Int8)])):
        with pytest.raises(TypeError, match=r"object of type Impostor"):
            call()


def test_an_edge_iterable_that_declares_while_it_is_iterated():
    a, b, c, d = (extension_with_record(unique_name("HostIt"),
                                        NumericInfo.integer(n, signed=True))
                  for n in (16, 24, 32, 40))

    def edges():
        declare_promotions([(c, d)])      # runs before anything is read
        yield (a, b)

    declare_promotions(edges())
    assert promote_types(a, b) is b and promote_types(c, d) is d


# In a child process: collections, weakref callbacks and finalizers that
# declare edges while a declaration allocates its lattice.
REENTRY = r"""
import gc, json, weakref, sys
sys.path.insert(0, sys.argv[1])
from support import unique_name
from support.relations import extension_with_record, check_lattice_laws
from stride_weave.dtypes import declare_promotions, default_lattice, promote_types
from stride_weave.numerics import NumericInfo

def ints(n):
    return [extension_with_record(unique_name("R"), NumericInfo.integer(8 + i, signed=True))
            for i in range(n)]

outer = ints(40)
inner = ints(40)
pending = list(zip(inner, inner[1:]))
done = []
outer_running = [None]
mid_declaration = []

def declare_one(*_):
    if pending:
        edge = pending.pop()
        outer = outer_running[0]
        # inside the outer declaration: it is running, and not published
        if outer and promote_types_or_none(*outer) is None:
            mid_declaration.append(edge)
        declare_promotions((edge,))
        done.append(edge)

def promote_types_or_none(a, b):
    try:
        return promote_types(a, b)
    except TypeError:
        return None

class Finalized:
    def __init__(self):
        self.cycle = self
    def __del__(self):
        declare_one()

def plant():
    # garbage for the next collection: a cycle with a finalizer, and an
    # object whose weakref callback declares
    Finalized()
    holder = [None]
    holder[0] = holder
    refs.append(weakref.ref(type("Dying", (), {"cycle": holder})(), declare_one))

refs = []
gc.callbacks.append(lambda phase, info: declare_one() if phase == "start" else None)
# A collection at the allocation of the new lattice, the one allocation a
# declaration of a ready-made tuple makes: count the allocations so far and
# set the threshold just below the next ones, a few different ways.
gc.disable()
for i, (lower, upper) in enumerate(zip(outer, outer[1:])):
    plant()
    edges = ((lower, upper),)
    gc.set_threshold(gc.get_count()[0] + i % 4)
    gc.enable()
    outer_running[0] = (lower, upper)
    declare_promotions(edges)
    outer_running[0] = None
    gc.disable()
gc.enable()
gc.set_threshold(700, 10, 10)
gc.callbacks.clear()
lattice = default_lattice()
for lower, upper in zip(outer, outer[1:]):
    assert promote_types(lower, upper) is upper
for lower, upper in done:
    assert promote_types(lower, upper) is upper
check_lattice_laws(lattice, outer[:8] + inner[:8])
print(json.dumps({"reentered": len(done), "mid_declaration": len(mid_declaration)}))
"""


def test_declarations_reentered_from_collections_and_callbacks():
    from support import TESTS_ROOT

    report = child_report(REENTRY, TESTS_ROOT)
    assert report["reentered"] > 0
    if sys.version_info < (3, 12):
        # A declaration ran while another was allocating its new lattice.
        # (From 3.12 on, a collection waits for the interpreter's next
        # check between bytecodes: it no longer runs inside a C function.)
        assert report["mid_declaration"] > 0


def test_promotion_error_is_immutable_and_stays_a_type_error():
    """PromotionError's bases and methods cannot be reassigned, so
    promote_types' refusals stay the documented TypeError; subclassing
    it still works."""
    report = child_report("""
        import json
        import stride_weave.dtypes as sd
        from stride_weave.dtypes import DType, PromotionError
        refused = []
        for name, value in (("__bases__", (ValueError,)),
                            ("__str__", lambda self: "lie"),
                            ("__init__", lambda self, *a: None)):
            try:
                setattr(PromotionError, name, value)
            except (TypeError, AttributeError):
                refused.append(name)
        try:
            sd.promote_types(DType.Int8, DType.E4M3)
        except TypeError as exc:
            caught, message = type(exc).__name__, str(exc)
        class Mine(PromotionError):
            pass
        print(json.dumps({"refused": refused, "caught": caught,
                          "message": message,
                          "subclass": issubclass(Mine, TypeError)}))
    """)
    assert report["refused"] == ["__bases__", "__str__", "__init__"]
    assert report["caught"] == "PromotionError"
    assert report["message"].startswith("promote_types: no implicit promotion between Int8 and E4M3")
    assert report["subclass"] is True
