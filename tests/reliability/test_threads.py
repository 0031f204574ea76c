"""Reliability: the registry and sealing under threads.

docs/design.md ("Construction (a transaction)",
"Registry"); docs/guarantees.md ("Threads").

* ``test_registration_race``: 16 registering threads released together by a
  ``threading.Barrier`` race to register the *same* names (each thread with a
  different definition, so the winner is recognisable) and their own
  *different* names, with every kind of descriptor, while reader threads loop
  over ``from_name``, pickle round trips and ``registered()`` snapshots.
* ``test_self_handed_to_another_thread``: an ``__init__`` hands ``self`` to an
  observer thread before the descriptor is sealed; the observer keeps poking
  it (``setattr``, pickle, ``from_name``, using it as a supertype) and must
  only ever see a consistent refusal or the finished object.
* ``test_fixed_attributes_read_while_built``: reader threads load ``name``,
  ``value`` and ``bits`` of a simple dtype handed to them from its
  ``__init__`` (member slots where CPython specializes them) and see its
  states in order: not initialized, the stored values, then rejected.

``sys.setswitchinterval(1e-6)`` forces the GIL to change hands as often as
possible during both tests (restored afterwards).
"""
import pickle
import random
import threading
import time
import traceback

import pytest

from support.defs import BUILTIN_NAMES, TagRule
from support import unique_name
from stride_weave.dtypes import (
    CompoundDType,
    DType,
    DTypeCategory,
    SimpleDType,
)

N_REGISTERING = 16          # threads racing to register
N_LOOKUP = 4                # threads looping over from_name + pickle
N_SNAPSHOT = 3              # threads looping over registered() snapshots
N_SHARED = 120              # names every registering thread tries
N_OWN = 30                 # names only one thread registers (per thread)
JOIN_TIMEOUT = 60.0

# --------------------------------------------------------------------------
# user classes whose __init__ / structure_extension yield the GIL, so other
# threads run in the middle of a construction
# --------------------------------------------------------------------------

def _yield():
    time.sleep(0)


class _SlowCategory(DTypeCategory, abstract=False):
    def __init__(self, name, *, owner, supertype=None):
        _yield()
        self.owner = owner
        super().__init__(name, supertype=supertype)
        _yield()

    def structure_extension(self):
        _yield()
        return ("owner", self.owner)


class _SlowSimple(SimpleDType, abstract=False):
    def __init__(self, name, *, owner, bits, supertype):
        self.owner = owner
        _yield()
        super().__init__(name, bits=bits, supertype=supertype)
        _yield()

    def structure_extension(self):
        _yield()
        return ("owner", self.owner, 1.5, None, True)


class _Pair(CompoundDType, abstract=False):
    def __init__(self, name, *, owner, planes, rules=()):
        self.owner = owner
        _yield()
        super().__init__(name, simple_types=planes, representation_rules=rules)
        _yield()

    def structure_extension(self):
        _yield()
        return ("owner", self.owner)


def _construct(kind, name, owner):
    """Construct a descriptor of `kind`; `owner` makes the definition unique."""
    if kind == "category":
        return DTypeCategory(name, supertype=DType.Floating if owner % 2 else DType.Any)
    if kind == "simple":
        return SimpleDType(name, bits=owner + 1, supertype=DType.Floating)
    if kind == "compound":
        return _Pair(name, owner=owner, planes=[DType.Float32, DType.Int8],
                     rules=[TagRule(owner)])
    if kind == "slow-category":
        return _SlowCategory(name, owner=owner, supertype=DType.Any)
    if kind == "slow-simple":
        return _SlowSimple(name, owner=owner, bits=8, supertype=DType.Floating)
    raise AssertionError(kind)


KINDS = ("category", "simple", "compound", "slow-category", "slow-simple")


def _owner_of(descriptor):
    """Recover the constructing thread's index from a descriptor."""
    if hasattr(descriptor, "owner"):
        return descriptor.owner
    if isinstance(descriptor, SimpleDType):
        return descriptor.bits - 1
    raise AssertionError(f"cannot tell who built {descriptor!r}")


# --------------------------------------------------------------------------
# the race
# --------------------------------------------------------------------------

@pytest.mark.parametrize("round_", range(3))
def test_registration_race(fast_switching, round_):
    shared = [(unique_name("Race_shared"), KINDS[i % len(KINDS)]) for i in range(N_SHARED)]
    # category names: ownership of a plain DTypeCategory is not visible in the
    # object, so record it by identity instead of by content.
    own = {t: [(unique_name(f"Race_own{t}"), KINDS[(t + i) % len(KINDS)])
               for i in range(N_OWN)]
           for t in range(N_REGISTERING)}

    n_threads = N_REGISTERING + N_LOOKUP + N_SNAPSHOT
    barrier = threading.Barrier(n_threads)
    registering_done = threading.Event()
    errors = []                      # (thread label, formatted traceback)
    errors_lock = threading.Lock()
    wins = {t: {} for t in range(N_REGISTERING)}     # thread -> name -> object
    losses = {t: [] for t in range(N_REGISTERING)}   # thread -> [name]
    last_snapshots = []
    reader_counts = {}

    def record_error(label):
        with errors_lock:
            errors.append((label, traceback.format_exc()))

    def registrar(t):
        rng = random.Random(t + 100 * round_)
        work = [(name, kind, True) for name, kind in shared]
        work += [(name, kind, False) for name, kind in own[t]]
        rng.shuffle(work)
        try:
            barrier.wait()
            for name, kind, is_shared in work:
                try:
                    d = _construct(kind, name, t)
                except ValueError as exc:
                    if not is_shared:
                        raise
                    assert "already registered" in str(exc), str(exc)
                    losses[t].append(name)
                else:
                    assert d.name == name
                    wins[t][name] = d
        except BaseException:
            record_error(f"registrar {t}")

    def lookup(i):
        rng = random.Random(1000 + i)
        first_seen = {}
        names = [name for name, _ in shared] + [
            name for t in own for name, _ in own[t]]
        count = 0
        try:
            barrier.wait()
            while True:
                done = registering_done.is_set()
                for name in rng.sample(names, 16) + [rng.choice(BUILTIN_NAMES)]:
                    try:
                        d = DType.from_name(name)
                    except LookupError:
                        assert name not in first_seen, (
                            f"{name!r} was registered, then disappeared")
                        continue
                    prev = first_seen.setdefault(name, d)
                    assert prev is d, f"{name!r} resolved to two objects"
                    assert d.name == name
                    for protocol in (0, 2, pickle.HIGHEST_PROTOCOL):
                        back = pickle.loads(pickle.dumps(d, protocol))
                        assert back is d, f"pickle round trip of {name!r} lost identity"
                    # a structured round trip: several references in one payload
                    blob = pickle.dumps({"x": [d, d], "y": (d, DType.Float32)})
                    back = pickle.loads(blob)
                    assert back["x"][0] is d and back["x"][1] is d
                    assert back["y"] == (d, DType.Float32)
                    assert back["y"][1] is DType.Float32
                    count += 1
                if done:
                    break
        except BaseException:
            record_error(f"lookup {i}")
        reader_counts[f"lookup {i}"] = count

    def snapshotter(i):
        prev_all = ()
        prev_simple = ()
        count = 0
        try:
            barrier.wait()
            while True:
                done = registering_done.is_set()
                snap = DType.registered()
                simple_snap = SimpleDType.registered()
                for prev, cur, label in ((prev_all, snap, "DType"),
                                         (prev_simple, simple_snap, "SimpleDType")):
                    assert type(cur) is tuple
                    names = [d.name for d in cur]
                    assert len(names) == len(set(names)), (
                        f"{label}.registered() holds duplicate names")
                    assert len(cur) >= len(prev), (
                        f"{label}.registered() shrank: {len(prev)} -> {len(cur)}")
                    for a, b in zip(prev, cur):
                        assert a is b, (
                            f"{label}.registered(): an earlier snapshot is not a prefix")
                assert all(isinstance(d, SimpleDType) for d in simple_snap)
                # every descriptor in a snapshot is registered under its name
                for d in random.Random(count).sample(snap, min(8, len(snap))):
                    assert DType.from_name(d.name) is d
                prev_all, prev_simple = snap, simple_snap
                count += 1
                if done:
                    break
        except BaseException:
            record_error(f"snapshot {i}")
        with errors_lock:
            last_snapshots.append(prev_all)
        reader_counts[f"snapshot {i}"] = count

    before = DType.registered()
    threads = [threading.Thread(target=registrar, args=(t,), name=f"reg{t}")
               for t in range(N_REGISTERING)]
    readers = [threading.Thread(target=lookup, args=(i,), name=f"look{i}")
               for i in range(N_LOOKUP)]
    readers += [threading.Thread(target=snapshotter, args=(i,), name=f"snap{i}")
                for i in range(N_SNAPSHOT)]
    for th in threads + readers:
        th.start()
    for th in threads:
        th.join(JOIN_TIMEOUT)
    registering_done.set()
    for th in readers:
        th.join(JOIN_TIMEOUT)
    alive = [th.name for th in threads + readers if th.is_alive()]
    assert not alive, f"threads still running (deadlock?): {alive}"

    assert not errors, "unexpected exceptions in threads:\n" + "\n".join(
        f"--- {label}\n{tb}" for label, tb in errors)

    # each shared name registered exactly once; the winner is what from_name returns
    for name, kind in shared:
        winners = [t for t in wins if name in wins[t]]
        losers = [t for t in losses if name in losses[t]]
        assert len(winners) == 1, f"{name!r} ({kind}) won by threads {winners}"
        assert len(losers) == N_REGISTERING - 1, (name, kind, losers)
        (t,) = winners
        d = wins[t][name]
        assert DType.from_name(name) is d
        if kind != "category":
            assert _owner_of(d) == t
    # each thread's own names all registered, to its object
    for t, items in own.items():
        for name, kind in items:
            assert DType.from_name(name) is wins[t][name]
            if kind != "category":
                assert _owner_of(wins[t][name]) == t

    # the final registry: the old one as prefix, then exactly the new names
    after = DType.registered()
    assert after[:len(before)] == before
    assert all(a is b for a, b in zip(before, after))
    new_names = [d.name for d in after[len(before):]]
    expected = {name for name, _ in shared} | {n for t in own for n, _ in own[t]}
    assert len(new_names) == len(set(new_names)) == len(expected)
    assert set(new_names) == expected
    for snap in last_snapshots:
        assert all(a is b for a, b in zip(snap, after)) and len(snap) <= len(after)
    # the readers really ran concurrently with the registrations
    assert all(n > 0 for n in reader_counts.values()), reader_counts


# --------------------------------------------------------------------------
# self handed to another thread before it is sealed
# --------------------------------------------------------------------------

class _Observation:
    """What the observer thread saw, one probe at a time, in order."""

    def __init__(self):
        self.events = []   # (probe, outcome, detail)

    def add(self, probe, outcome, detail=""):
        self.events.append((probe, outcome, detail))


ALLOWED = {
    # probe -> exception types that count as a "consistent refusal"
    "setattr": (AttributeError,),
    "pickle": (ValueError,),
    "from_name": (LookupError,),
    "name": (ValueError,),
    "structure": (ValueError,),
    "as-supertype": (ValueError,),
}


def _observe_once(obj, name, obs, state, rng):
    """Run every probe once on obj; record outcomes; check monotonic state.

    state["finished"]: some probe proved obj is sealed and registered;
    state["sealed"]: setattr was refused (sealed or rejected).
    """
    probes = list(ALLOWED)
    rng.shuffle(probes)
    for probe in probes:
        try:
            if probe == "setattr":
                setattr(obj, "probe", len(obs.events))
                result = "ok"
            elif probe == "pickle":
                back = pickle.loads(pickle.dumps(obj))
                assert back is obj, "pickle round trip returned another object"
                result = "ok"
            elif probe == "from_name":
                found = DType.from_name(name)
                if found is state.get("squatter"):
                    # the name belongs to an earlier descriptor: for obj this
                    # is the same as "not registered"
                    raise LookupError("registered to the squatter")
                assert found is obj, "from_name returned another object"
                result = "ok"
            elif probe == "name":
                assert obj.name == name
                result = "ok"
            elif probe == "structure":
                s = obj.structure()
                assert type(s) is tuple and s[0] == "DTypeCategory"
                result = "ok"
            elif probe == "as-supertype":
                if state.get("child") is not None:
                    continue
                child = SimpleDType(unique_name("Handed_child"), bits=8, supertype=obj)
                assert child.supertype is obj
                state["child"] = child
                result = "ok"
        except ALLOWED[probe] as exc:
            obs.add(probe, "refused", f"{type(exc).__name__}: {exc}")
        else:
            obs.add(probe, result)
        # repr, hash and == must always work, in every state
        repr(obj)
        hash(obj)
        assert obj == obj

        last = obs.events[-1]
        if last[:2] == ("setattr", "refused"):
            state["sealed"] = True
        elif last[:2] == ("setattr", "ok"):
            assert not state.get("sealed"), (
                "setattr succeeded after an earlier setattr was refused")
            assert not state.get("finished"), (
                "setattr succeeded on a descriptor already seen registered")
        if last[0] in ("pickle", "from_name", "as-supertype") and last[1] == "ok":
            state["finished"] = True
        elif last[1] == "refused" and last[0] != "setattr":
            # building or rejected: never after it was seen finished
            assert not state.get("finished"), (
                f"{last[0]} refused after the descriptor was seen finished: {last[2]}")


def _registered_means_sealed(obj, name, state):
    """A tight probe: once from_name finds obj, it is sealed and picklable."""
    try:
        found = DType.from_name(name)
    except LookupError:
        return
    if found is not obj:
        assert found is state.get("squatter"), "from_name returned another object"
        return
    state["finished"] = True
    try:
        obj.after_registration = 1
    except AttributeError:
        pass
    else:
        raise AssertionError("setattr succeeded on a registered descriptor")
    assert pickle.loads(pickle.dumps(obj)) is obj


def _handed_over(handoff, ctor_done):
    """The object an __init__ appended to `handoff`, once it did."""
    while not handoff:
        if ctor_done.is_set():
            raise AssertionError("__init__ never handed self over")
        _yield()
    return handoff[0]


class _Handed(DTypeCategory, abstract=False):
    """Hands self to an observer thread, then finishes slowly (or fails)."""

    def __init__(self, name, *, handoff, fail, spins):
        handoff.append(self)          # the observer picks it up from here
        self.fail = fail
        for i in range(spins):
            _yield()
            self.progress = i
        super().__init__(name, supertype=DType.Any)
        for _ in range(spins):
            _yield()
        if fail == "init":
            raise RuntimeError("refused in __init__")

    def structure_extension(self):
        for _ in range(3):
            _yield()
        if self.fail == "extension":
            raise RuntimeError("refused in structure_extension")
        return ("handed",)


@pytest.mark.parametrize("fail", [None, "init", "extension", "duplicate"])
def test_self_handed_to_another_thread(fast_switching, fail):
    rounds = 12
    for r in range(rounds):
        name = unique_name("Handed")
        if fail == "duplicate":
            DTypeCategory(name, supertype=DType.Any)
            squatter = DType.from_name(name)
        handoff = []
        ctor_done = threading.Event()
        errors = []
        obs = _Observation()
        state = {"squatter": squatter if fail == "duplicate" else None}

        def observer():
            rng = random.Random(r)
            try:
                obj = _handed_over(handoff, ctor_done)
                i = 0
                while not ctor_done.is_set():
                    if i % 8 == 0:
                        _observe_once(obj, name, obs, state, rng)
                    else:
                        _registered_means_sealed(obj, name, state)
                    i += 1
                # once the constructor has returned or raised, the object
                # is in its final state: finished or rejected
                _observe_once(obj, name, obs, state, rng)
                _observe_once(obj, name, obs, state, rng)
            except BaseException:
                errors.append(traceback.format_exc())

        th = threading.Thread(target=observer)
        th.start()
        outcome = None
        kwargs = dict(handoff=handoff, fail=fail, spins=5 + r % 7)
        try:
            try:
                result = _Handed(name, **kwargs)
                outcome = ("ok", result)
            except (RuntimeError, ValueError) as exc:
                outcome = ("raised", exc)
        finally:
            ctor_done.set()
            th.join(JOIN_TIMEOUT)
        assert not th.is_alive(), "observer thread hung"
        assert not errors, "observer thread failed:\n" + "\n".join(errors)
        assert obs.events, "the observer never probed the object"

        obj = handoff[0]
        final = {probe: outcome_ for probe, outcome_, _ in obs.events[-2 * len(ALLOWED):]}
        if fail is None:
            assert outcome[0] == "ok" and outcome[1] is obj
            assert DType.from_name(name) is obj
            assert final["setattr"] == "refused"
            assert final["pickle"] == final["from_name"] == final["name"] == "ok"
            with pytest.raises(AttributeError):
                obj.late = 1
        else:
            assert outcome[0] == "raised"
            if fail == "duplicate":
                assert isinstance(outcome[1], ValueError)
                assert "already registered" in str(outcome[1])
                assert DType.from_name(name) is squatter
            else:
                assert isinstance(outcome[1], RuntimeError)
                with pytest.raises(LookupError):
                    DType.from_name(name)
            # rejected: nothing on it is usable, and it never was registered
            assert all(o == "refused" for p, o in final.items() if p != "as-supertype"), final
            assert not any(p in ("pickle", "from_name", "as-supertype") and o == "ok"
                           for p, o, _ in obs.events), obs.events
            with pytest.raises(ValueError):
                obj.name
            with pytest.raises(ValueError):
                pickle.dumps(obj)


# --------------------------------------------------------------------------
# Fixed attributes read by other threads while the descriptor is built
# --------------------------------------------------------------------------

class _HandedSimple(SimpleDType, abstract=False):
    """Hands self to reader threads, then initializes and finishes slowly
    (or fails after its model's __init__ ran)."""

    __slots__ = ()

    def __init__(self, name, *, handoff, fail, spins):
        handoff.append(self)
        for _ in range(spins):
            _yield()
        super().__init__(name, bits=24, supertype=DType.Floating)
        for _ in range(spins):
            _yield()
        if fail:
            raise RuntimeError("refused in __init__")


#: The states a reader can see, in the only order they can come.
_UNINITIALIZED, _VALUE, _REJECTED = range(3)


def _read_state(obj, attr, expected):
    try:
        value = getattr(obj, attr)
    except ValueError as exc:
        if "is not initialized" in str(exc):
            return _UNINITIALIZED
        assert "was rejected during construction" in str(exc), str(exc)
        return _REJECTED
    assert value == expected[attr], (attr, value)
    return _VALUE


@pytest.mark.parametrize("fail", [False, True])
def test_fixed_attributes_read_while_built(fast_switching, fail):
    attrs = ("name", "value", "bits")
    for r in range(8):
        name = unique_name("HandedSimple")
        expected = {"name": name, "value": name, "bits": 24}
        handoff, errors = [], []
        seen = [[] for _ in range(4)]
        ctor_done = threading.Event()

        def reader(k):
            try:
                obj = _handed_over(handoff, ctor_done)
                i = k
                while not ctor_done.is_set():
                    seen[k].append(_read_state(obj, attrs[i % 3], expected))
                    i += 1
                for attr in attrs:      # the final state, after the call
                    seen[k].append(_read_state(obj, attr, expected))
            except BaseException:
                errors.append(traceback.format_exc())

        threads = [threading.Thread(target=reader, args=(k,)) for k in range(4)]
        for th in threads:
            th.start()
        try:
            try:
                _HandedSimple(name, handoff=handoff, fail=fail, spins=3 + r % 5)
            except RuntimeError:
                assert fail
            else:
                assert not fail
        finally:
            ctor_done.set()
            for th in threads:
                th.join(JOIN_TIMEOUT)
        assert not any(th.is_alive() for th in threads), "a reader hung"
        assert not errors, "a reader failed:\n" + "\n".join(errors)
        final = _REJECTED if fail else _VALUE
        for states in seen:
            assert states == sorted(states), states   # never back to an earlier state
            assert states[-3:] == [final] * 3, states


# --------------------------------------------------------------------------
# The model's __init__ on a handed-off self, from two threads
# --------------------------------------------------------------------------

@pytest.mark.parametrize("round_", range(3))
def test_model_init_runs_once_across_threads(fast_switching, round_):
    """An __init__ hands self to another thread, which calls the model's
    __init__ on it while the constructing thread does the same. The model's
    __init__ claims the object atomically (a critical section on
    free-threaded builds), so exactly one of the two calls runs; the other
    is a TypeError. Never both: two concurrent runs would race on the
    descriptor's fields. (On a GIL build the model's C __init__ does not
    yield part way, so here this checks the outcomes; the overlap itself
    can only happen on a free-threaded build, which runs this test too.)"""
    results = []

    class Leaky(SimpleDType, abstract=False):
        def __init__(self, name, other):
            ready = threading.Event()

            def rival():
                ready.set()
                try:
                    SimpleDType.__init__(self, other, bits=16,
                                         supertype=DType.Integer)
                    results.append("rival")
                except TypeError:
                    results.append("rival refused")

            t = threading.Thread(target=rival)
            t.start()
            ready.wait()
            try:
                super().__init__(name, bits=8, supertype=DType.Floating)
                results.append("owner")
            finally:
                t.join()

    for _ in range(40):
        results.clear()
        name, other = unique_name("Claim"), unique_name("ClaimRival")
        try:
            d = Leaky(name, other)
        except TypeError:
            d = None
        assert sorted(results) in (["owner", "rival refused"], ["rival"]), results
        if d is not None:
            assert results.count("owner") == 1
            assert DType.from_name(name) is d and d.bits == 8
        for n in (name, other) if d is None else (other,):
            with pytest.raises(LookupError):
                DType.from_name(n)
