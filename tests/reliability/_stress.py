"""Multi-threaded stress of the registry, in rounds, with invariants checked
after every round.

Run as a script (tests/reliability/test_stress.py runs it in a child process, and
scripts/tsan runs it under ThreadSanitizer)::

    python tests/reliability/_stress.py [--rounds N] [--threads N] [--scenario NAME ...]

Every round releases ``--threads`` threads (default 16) together through a
``threading.Barrier``; the scenarios are:

* ``distinct``: each thread registers its own new names, one descriptor of
  every kind (category, simple, compound, block-scaled);
* ``same_name``: every thread tries to register the same new name (as a
  simple dtype or as a category): exactly one wins, every other one raises
  ``ValueError`` and the name is registered once;
* ``readers_writers``: half the threads register, the other half read
  (``from_name``, ``registered()``, ``is_subtype_of``, ``structure()``,
  pickle round trips) until the writers are done;
* ``subclasses``: each thread defines its own subclasses (class attributes,
  ``__slots__``, an ``__init__`` that sets attributes, a
  ``structure_extension``) and registers an instance of each;
* ``block_scaled``: every thread registers a block-scaled format with the
  same element and levels under its own name: the first one wins, every
  other one is refused as a duplicate representation (``ValueError``) and
  its name stays free;
* ``misses``: every thread reads one fresh lookup miss (``str``, ``repr``,
  ``args``) whose name only the exception holds and whose message suggests
  close registered names, while one thread replaces
  its args (assignment or ``__init__``): each read is the one message or
  the replacement, never the message after the replacement, and the miss
  keeps the replacement.
* ``promotions``: half the threads declare promotion edges into the default
  lattice (each a chain of its own integer dtypes, edge by edge) and build
  lattices of their own from it, while the other half ask ``promote_types``,
  ``result_type``, ``can_cast`` and ``isdtype`` about those dtypes and take
  ``default_lattice()`` snapshots: a join is either not there yet or the
  final one, a later snapshot keeps every join of an earlier one, and after
  the round every declared edge is in the lattice.
* ``codecs`` (where numpy is importable): every thread encodes, decodes,
  packs, quantizes and dequantizes the same shared arrays at once, the
  kernels running without the GIL: every result equals the one computed
  before the round, bit for bit.

After every round, for ``DType`` and every model class: the names in
``registered()`` are unique, ``from_name(d.name) is d`` for each, the
snapshot has only grown and the previous one is a prefix of it, and the new
descriptors survive ``pickle``, ``copy`` and ``deepcopy`` as themselves.

Any failure raises (a traceback, exit status 1). On success the last line of
output is a JSON object with the counts per scenario and, on CPython 3.13+,
whether the GIL is enabled at the end (``gil_enabled``).

``SW_STRESS_ROUNDS`` sets the default number of rounds (a longer run:
``SW_STRESS_ROUNDS=2000``).
"""
import argparse
import copy
import json
import os
import pickle
import sys
import threading
import traceback

from stride_weave.dtypes import (
    BlockScaledDType,
    CompoundDType,
    DType,
    DTypeCategory,
    Level,
    PromotionError,
    SimpleDType,
    can_cast,
    declare_promotion,
    default_lattice,
    isdtype,
    promote_types,
    result_type,
)
from stride_weave.numerics import NumericInfo, register_numeric_info

THREADS = 16
DEFAULT_ROUNDS = 25
JOIN_TIMEOUT = 120.0
MODEL_CLASSES = (DType, DTypeCategory, SimpleDType, CompoundDType, BlockScaledDType)
PREFIX = f"Stress_{os.getpid()}"


class Pair(CompoundDType, abstract=False):
    def __init__(self, name, *, planes, supertype):
        super().__init__(name, supertype=supertype, simple_types=planes)


class TaggedBlockScaled(BlockScaledDType, abstract=False):
    """A block-scaled format whose structure carries its own tag."""

    def __init__(self, name, *, tag, element, levels):
        self.tag = tag
        super().__init__(name, element=element, levels=levels)

    def structure_extension(self):
        return ("stress", self.tag)


# --------------------------------------------------------------------------
# running a round
# --------------------------------------------------------------------------

def run_threads(n, work):
    """Run work(i) in n threads released together; return their results.

    An exception in any thread fails the round with every thread's
    traceback."""
    barrier = threading.Barrier(n, timeout=JOIN_TIMEOUT)
    results = [None] * n
    errors = []

    def main(i):
        try:
            barrier.wait()
            results[i] = work(i)
        except BaseException:  # reported below, with the thread's index
            errors.append(f"thread {i}:\n{traceback.format_exc()}")

    threads = [threading.Thread(target=main, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(JOIN_TIMEOUT)
    alive = [t for t in threads if t.is_alive()]
    if alive:
        raise AssertionError(f"{len(alive)} threads did not finish in {JOIN_TIMEOUT}s")
    if errors:
        raise AssertionError(f"{len(errors)} of {n} threads failed; the first:\n"
                             + "\n".join(errors[:3]))
    return results


def assert_identity(d):
    assert DType.from_name(d.name) is d, d
    assert pickle.loads(pickle.dumps(d)) is d, d
    assert pickle.loads(pickle.dumps(d, protocol=0)) is d, d
    assert copy.copy(d) is d, d
    assert copy.deepcopy(d) is d, d


class Invariants:
    """Checks the registry after every round."""

    def __init__(self):
        self.snapshots = {cls: cls.registered() for cls in MODEL_CLASSES}
        self.checked = 0

    def check(self, created=()):
        for cls in MODEL_CLASSES:
            before = self.snapshots[cls]
            snap = cls.registered()
            assert isinstance(snap, tuple), type(snap)
            names = [d.name for d in snap]
            assert len(set(names)) == len(names), (
                f"{cls.__name__}.registered() holds a name twice")
            assert len(snap) >= len(before), (
                f"{cls.__name__}.registered() shrank: {len(before)} -> {len(snap)}")
            assert all(a is b for a, b in zip(before, snap)), (
                f"the previous {cls.__name__}.registered() is not a prefix of the next")
            for d in snap:
                assert isinstance(d, cls), (cls, d)
                assert cls.from_name(d.name) is d, d
            for d in snap[len(before):]:
                assert_identity(d)
            self.snapshots[cls] = snap
        for d in created:
            assert d in self.snapshots[DType], f"{d!r} is not in registered()"
        self.checked += 1


def race(n, construct, refusal):
    """n threads call construct(i) at once: exactly one may succeed, every
    other one must raise ValueError saying `refusal`. Returns the winning
    index, the winner, and the losing indices."""
    def work(i):
        try:
            return ("won", i, construct(i))
        except ValueError as e:
            assert refusal in str(e), e
            return ("lost", i, None)

    results = run_threads(n, work)
    winners = [(i, d) for kind, i, d in results if kind == "won"]
    losers = [i for kind, i, _ in results if kind == "lost"]
    assert len(winners) == 1, f"{len(winners)} of {n} racing constructions succeeded"
    assert len(losers) == n - 1, results
    return winners[0][0], winners[0][1], losers


# --------------------------------------------------------------------------
# the scenarios: each runs one round and returns its counts
# --------------------------------------------------------------------------

def distinct(rnd, n, inv):
    def work(i):
        tag = f"{PREFIX}_d{rnd}_{i}"
        cat = DTypeCategory(f"{tag}_cat", supertype=DType.Floating)
        simple = SimpleDType(f"{tag}_simple", bits=4 + i, supertype=cat)
        pair = Pair(f"{tag}_pair", planes=[simple, DType.Float32], supertype=cat)
        bs = TaggedBlockScaled(f"{tag}_bs", tag=tag, element=simple,
                               levels=[Level(DType.E8M0, 32)])
        made = (cat, simple, pair, bs)
        for d in made:
            assert_identity(d)
        assert simple.is_subtype_of(cat) and pair.is_subtype_of(DType.Floating)
        return made

    made = [d for ds in run_threads(n, work) for d in ds]
    assert len(made) == 4 * n
    inv.check(made)
    return {"registered": len(made)}


def same_name(rnd, n, inv):
    name = f"{PREFIX}_same{rnd}"

    def construct(i):
        if i % 2:
            return DTypeCategory(name, supertype=DType.Floating)
        return SimpleDType(name, bits=8 + i, supertype=DType.Floating)

    i, winner, losers = race(n, construct, "already registered")
    assert DType.from_name(name) is winner
    assert isinstance(winner, DTypeCategory if i % 2 else SimpleDType)
    if not i % 2:
        assert winner.bits == 8 + i   # the winning thread's own definition
    assert [d.name for d in DType.registered()].count(name) == 1
    inv.check([winner])
    return {"winners": 1, "losers": len(losers)}


def readers_writers(rnd, n, inv):
    writers = max(1, n // 2)
    done = threading.Event()
    finished = [0]
    lock = threading.Lock()
    known = inv.snapshots[DType][-64:]   # registered in earlier rounds

    def write(i):
        made = []
        try:
            for k in range(6):
                tag = f"{PREFIX}_rw{rnd}_{i}_{k}"
                cat = DTypeCategory(f"{tag}_cat", supertype=DType.Integer)
                made.append(cat)
                made.append(SimpleDType(f"{tag}_simple", bits=8, supertype=cat))
        finally:
            with lock:
                finished[0] += 1
                if finished[0] == writers:
                    done.set()
        return ("writer", made)

    def read(i):
        reads = 0
        last = DType.registered()
        structures = {d: d.structure() for d in known}
        while True:
            final = done.is_set()   # one more full pass after the writers
            for d in known:
                assert DType.from_name(d.name) is d
                assert pickle.loads(pickle.dumps(d)) is d
                assert d.structure() == structures[d]
                assert d.is_subtype_of(DType.Any)
            snap = DType.registered()
            assert len(snap) >= len(last) and all(
                a is b for a, b in zip(last, snap)), "a snapshot is not a prefix of a later one"
            names = [d.name for d in snap]
            assert len(set(names)) == len(names)
            for d in snap[len(last):]:
                assert DType.from_name(d.name) is d
                assert pickle.loads(pickle.dumps(d)) is d
                if d.is_simple():
                    assert d.supertype.is_subtype_of(DType.Any)
            last = snap
            reads += 1
            if final:
                return ("reader", reads)

    results = run_threads(n, lambda i: write(i) if i < writers else read(i))
    made = [d for kind, r in results if kind == "writer" for d in r]
    reads = [r for kind, r in results if kind == "reader"]
    assert len(made) == writers * 12
    assert all(r >= 1 for r in reads)
    inv.check(made)
    return {"registered": len(made), "reader_passes": sum(reads)}


def subclasses(rnd, n, inv):
    def work(i):
        tag = f"{PREFIX}_sub{rnd}_{i}"

        class Slotted(SimpleDType, abstract=False):
            __slots__ = ("extra", "owner")
            family = tag

            def __init__(self, name, *, extra, **kwargs):
                self.owner = i
                super().__init__(name, **kwargs)
                self.extra = extra

            def structure_extension(self):
                return ("family", self.family, self.owner)

        class Described(DTypeCategory, abstract=False):
            label = f"label-{i}"

            def __init__(self, name, *, note, **kwargs):
                self.note = note
                super().__init__(name, **kwargs)

        cat = Described(f"{tag}_cat", note=[rnd, i], supertype=DType.Floating)
        simple = Slotted(f"{tag}_simple", extra=(rnd, i), bits=8, supertype=cat)
        assert simple.extra == (rnd, i) and simple.owner == i
        assert simple.family == tag and cat.label == f"label-{i}"
        assert cat.note == [rnd, i]
        assert type(simple).__slots__ == ("extra", "owner")
        assert not hasattr(simple, "__dict__")
        for obj, attr in ((simple, "extra"), (cat, "note")):
            try:
                setattr(obj, attr, None)
            except AttributeError:
                pass
            else:
                raise AssertionError(f"{obj!r}.{attr} could be set after registration")
        assert simple.structure()[-1] == (
            "extension", ("str:family", f"str:{tag}", f"int:{i}"))
        assert_identity(cat)
        assert_identity(simple)
        return (cat, simple)

    made = [d for ds in run_threads(n, work) for d in ds]
    assert len({type(d) for d in made}) == 2 * n   # one class per thread and kind
    inv.check(made)
    return {"registered": len(made), "classes": 2 * n}


def block_scaled(rnd, n, inv):
    # A new element per round, so the shared representation is new too.
    element = SimpleDType(f"{PREFIX}_bse{rnd}", bits=4, supertype=DType.Floating)
    levels = [Level(DType.E8M0, 32), Level(DType.Float32, 1024)]

    def name(i):
        return f"{PREFIX}_bs{rnd}_{i}"

    i, winner, losers = race(
        n, lambda i: BlockScaledDType(name(i), element=element, levels=levels),
        "duplicates the representation")
    assert DType.from_name(name(i)) is winner
    assert winner.element is element and winner.levels == tuple(levels)
    for j in losers:
        try:
            DType.from_name(name(j))
        except LookupError:
            pass
        else:
            raise AssertionError(f"the refused {name(j)!r} is registered")
    inv.check([element, winner])
    return {"winners": 1, "losers": len(losers)}


def misses(rnd, n, inv):
    if rnd == 0:    # names close to every miss: its message suggests some
        for k in range(50):
            SimpleDType(f"{PREFIX}_near{k:02d}", bits=8, supertype=DType.Integer)
    name = f"{PREFIX}_nearx{rnd}"

    def fresh():
        try:
            DType.from_name("".join([PREFIX, "_nearx", str(rnd)]))   # a new str
        except LookupError as e:
            return e
        raise AssertionError("from_name did not miss")

    e = fresh()
    mine = ("mine", rnd)

    def work(i):
        if i == 1:
            if rnd % 2:
                e.args = mine
            else:
                e.__init__(*mine)
            return []
        reads = []
        for _ in range(3):
            reads += [str(e), repr(e), e.args]
        return reads

    results = run_threads(n, work)
    replaced = [str(mine), "UnknownNameError" + repr(mine), mine]
    messages = {r for reads in results for r in reads[::3] if r != replaced[0]}
    assert len(messages) <= 1, messages
    message = messages.pop() if messages else None
    if message is not None:
        assert message.startswith(
            f"no descriptor is registered under the name {name!r}; "
            f"did you mean '{PREFIX}_near"), message
    formatted = [message, f"UnknownNameError({message!r})", (message,)]
    count = 0
    for reads in results:
        after = False
        for k, value in enumerate(reads):
            if value == replaced[k % 3]:
                after = True
                count += 1
            else:
                # the message, and never once the replacement was seen
                assert not after and value == formatted[k % 3], reads
    assert e.args == mine, e.args
    inv.check()
    return {"reads": sum(len(reads) for reads in results), "replaced": count}


def promotions(rnd, n, inv):
    # Every round's dtypes stay in the default lattice, so a few per round.
    writers = max(1, min(4, n // 2))
    length = 5
    chains = []
    for w in range(writers):
        chain = []
        for j in range(length):
            d = SimpleDType(f"{PREFIX}_p{rnd}_{w}_{j}", bits=8 + 8 * j,
                            supertype=DType.Integer)
            register_numeric_info(d, NumericInfo.integer(8 + 8 * j, signed=True))
            chain.append(d)
        chains.append(chain)
    done = threading.Event()
    finished = [0]
    lock = threading.Lock()

    def write(w):
        chain = chains[w]
        for lower, upper in zip(chain, chain[1:]):
            declare_promotion(lower, upper)
            mine = default_lattice().extend([(chain[0], chain[-1])])
            assert mine.promote_types(chain[0], chain[-1]) is chain[-1]
        with lock:
            finished[0] += 1
            if finished[0] == writers:
                done.set()
        return 0

    def read(i):
        passes = 0
        earlier = default_lattice()
        while True:
            last = done.is_set()
            for chain in chains:
                top = chain[-1]
                for d in chain:
                    try:
                        join = promote_types(d, top)
                    except PromotionError:
                        join = None
                    assert join is None or join is top, (d, top, join)
                    assert can_cast(d, top) and isdtype(d, "signed integer")
                try:
                    assert result_type(*chain) is top
                except PromotionError:
                    pass
            later = default_lattice()
            for chain in chains:
                for d in chain:
                    try:
                        join = earlier.promote_types(d, chain[-1])
                    except PromotionError:
                        continue
                    assert later.promote_types(d, chain[-1]) is join, (d, join)
            earlier = later
            passes += 1
            if last:
                return passes

    results = run_threads(n, lambda i: write(i) if i < writers else read(i))
    for chain in chains:
        for d in chain:
            assert promote_types(d, chain[-1]) is chain[-1]
    inv.check([d for chain in chains for d in chain])
    return {"declared": writers * (length - 1),
            "reader_passes": sum(results[writers:])}


def codecs(rnd, n, inv):
    try:
        import numpy as np
        from stride_weave import codecs as sc
    except ImportError:     # numpy is optional: nothing to run
        return {"skipped": 1}
    rng = np.random.default_rng(rnd)
    x = (rng.standard_normal((8, 512)) * 8).astype(np.float32)
    x[0, :5] = [np.nan, np.inf, -np.inf, -0.0, 1e-30]
    formats = [DType.from_name(name) for name in ("MXFP4", "NVFP4", "MXFP8_E4M3")]

    def results():
        out = []
        for element in (DType.E4M3, DType.E2M1, DType.E8M0):
            codes = sc.encode(x, element)
            out.append(codes)
            out.append(sc.decode(codes, element).view(np.uint32))
            out.append(sc.pack(codes, element))
        for fmt in formats:
            q = sc.quantize(x, fmt)
            out.extend(q.planes)
            out.append(sc.dequantize(q).view(np.uint32))
        return out

    expected = results()

    def work(i):
        for _ in range(3):
            got = results()
            assert len(got) == len(expected)
            for a, b in zip(got, expected):
                assert a.dtype == b.dtype and np.array_equal(a, b), (i, a, b)
        return 1

    done = run_threads(n, work)
    inv.check()
    return {"threads_matching": sum(done)}


SCENARIOS = {
    "distinct": distinct,
    "same_name": same_name,
    "readers_writers": readers_writers,
    "subclasses": subclasses,
    "block_scaled": block_scaled,
    "misses": misses,
    "promotions": promotions,
    "codecs": codecs,
}


def run(scenarios, rounds, threads):
    """Run each scenario for the given rounds; return the counts."""
    # With the GIL: hand it over as often as CPython allows (no effect on a
    # free-threaded build running without it).
    sys.setswitchinterval(1e-6)
    inv = Invariants()
    report = {"threads": threads, "rounds": rounds, "scenarios": {}}
    for name in scenarios:
        totals = {}
        for rnd in range(rounds):
            counts = SCENARIOS[name](rnd, threads, inv)
            for key, value in counts.items():
                totals[key] = totals.get(key, 0) + value
        totals["rounds"] = rounds
        report["scenarios"][name] = totals
    report["checks"] = inv.checked
    report["gil_enabled"] = (sys._is_gil_enabled()
                             if hasattr(sys, "_is_gil_enabled") else None)
    return report


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int,
                        default=int(os.environ.get("SW_STRESS_ROUNDS", DEFAULT_ROUNDS)))
    parser.add_argument("--threads", type=int, default=THREADS)
    parser.add_argument("--scenario", action="append", choices=sorted(SCENARIOS))
    args = parser.parse_args(argv)
    scenarios = args.scenario or list(SCENARIOS)
    report = run(scenarios, args.rounds, args.threads)
    print(json.dumps(report, sort_keys=True))


if __name__ == "__main__":
    main()
