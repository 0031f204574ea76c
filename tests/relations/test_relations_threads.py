"""Declarations racing lookups and each other, on threads.

Writers declare chains of their own dtypes into the default lattice while
readers ask for joins and take snapshots: a reader sees each pair either
without a join or with its final one, never anything else; a later
snapshot keeps every result of an earlier one; no declaration is lost when
several race (each is built again on the one that won); and of two
declarations that exclude each other exactly one is kept.  With the GIL
the interpreter switches threads as often as it can (``fast_switching``);
on a free-threaded build the threads run at once.
"""
import threading

import pytest

from support import unique_name
from support.child import child_report
from support.relations import extension_with_record, join_or_none
from stride_weave.dtypes import (
    PromotionError,
    declare_promotion,
    declare_promotions,
    default_lattice,
    promote_types,
)
from stride_weave.numerics import NumericInfo

WRITERS = 4
CHAIN = 12
READERS = 3


def chain(length, prefix):
    return [extension_with_record(unique_name(prefix), NumericInfo.integer(8 + i, signed=True))
            for i in range(length)]


def run_threads(targets):
    barrier = threading.Barrier(len(targets))
    errors = []

    def wrap(target):
        def run():
            try:
                barrier.wait()
                target()
            except BaseException as e:     # reported by the test
                errors.append(e)
        return run

    threads = [threading.Thread(target=wrap(t)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    assert errors == []


def test_readers_see_before_or_after_and_no_declaration_is_lost(fast_switching):
    chains = [chain(CHAIN, f"Race{w}") for w in range(WRITERS)]
    pairs = [(c[i], c[j]) for c in chains for i in range(CHAIN) for j in range(i + 1, CHAIN)]
    done = threading.Event()
    seen_wrong = []
    snapshots = []      # one list per reader: in the order it took them

    def writer(c):
        def run():
            for lower, upper in zip(c, c[1:]):
                declare_promotion(lower, upper)
        return run

    def reader():
        mine = []
        snapshots.append(mine)
        while not done.is_set():
            mine.append(default_lattice())
            for a, b in pairs[::7]:
                got = join_or_none(promote_types, a, b)
                if got is not None and got is not b:
                    seen_wrong.append((a, b, got))

    writers = [writer(c) for c in chains]

    def writers_then_done():
        run_threads(writers)
        done.set()

    run_threads([writers_then_done] + [reader] * READERS)
    assert seen_wrong == []
    for a, b in pairs:
        assert promote_types(a, b) is b          # every declaration landed
    # snapshots only grow: what one defines, every later one a reader took
    # defines alike
    for taken in snapshots:
        for earlier, later in zip(taken, taken[1:]):
            for a in earlier.dtypes[::5]:
                for b in earlier.dtypes[::5]:
                    result = join_or_none(earlier.promote_types, a, b)
                    if result is not None and earlier is not later:
                        assert later.promote_types(a, b) is result


def test_of_two_exclusive_declarations_exactly_one_is_kept(fast_switching):
    for _ in range(20):
        x, y = chain(2, "Excl")
        p, q = (extension_with_record(unique_name("ExclTop"),
                                      NumericInfo.integer(64, signed=True))
                for _ in range(2))
        outcomes = []

        def declare(top):
            def run():
                try:
                    declare_promotions([(x, top), (y, top)])
                    outcomes.append(top)
                except ValueError:
                    outcomes.append(None)
            return run

        run_threads([declare(p), declare(q)])
        kept = [top for top in outcomes if top is not None]
        assert len(kept) == 1
        assert promote_types(x, y) is kept[0]


def test_lattices_are_shared_read_only(fast_switching):
    c = chain(30, "Shared")
    mine = default_lattice().extend(list(zip(c, c[1:])))
    wrong = []

    def read():
        for _ in range(200):
            for i in range(0, 30, 3):
                if mine.promote_types(c[i], c[-1]) is not c[-1]:
                    wrong.append(i)
            if mine.result_type(*c[::4]) is not c[28]:
                wrong.append("result_type")

    run_threads([read] * 4)
    assert wrong == []
    with pytest.raises(PromotionError):
        promote_types(c[0], c[1])      # the default lattice never had them


def test_readers_race_lattices_replaced_one_edge_at_a_time():
    # Every declaration retires the lattice readers may be inside; it is
    # released once no read is in progress.  Readers never use a released
    # one (a crash, or a wrong join read from freed memory); on a
    # free-threaded build the readers run while the declarations do.  In a
    # child: a failure here may be a crash.
    report = child_report("""
        import json, threading
        from stride_weave import dtypes
        from stride_weave.dtypes import DType, promote_types, result_type
        from stride_weave.numerics import NumericInfo
        from support import unique_name
        from support.relations import extension_with_record

        ups = [extension_with_record(unique_name("RaceUp"),
                                     NumericInfo.integer(32 + i, signed=True))
               for i in range(120)]
        stop = threading.Event()
        wrong, calls = [], [0]

        def reader():
            while not stop.is_set():
                for up in ups[::3]:
                    try:
                        got = promote_types(DType.Int8, up)
                    except dtypes.PromotionError:
                        continue        # not declared yet
                    if got is not up:
                        wrong.append((up.name, got.name))
                got = result_type(DType.Bool, DType.Int8, DType.Int32)
                if got is not DType.Int32:
                    wrong.append(("result_type", got.name))
                held = dtypes.default_lattice()
                if held.promote_types(DType.Int8, DType.Int32) is not DType.Int32:
                    wrong.append(("snapshot", repr(held)))
                calls[0] += 1

        threads = [threading.Thread(target=reader) for _ in range(4)]
        for t in threads:
            t.start()
        for up in ups:
            dtypes.declare_promotion(DType.Int32, up)
        stop.set()
        for t in threads:
            t.join()
        print(json.dumps({"wrong": wrong[:5], "reads": calls[0],
                          "final": all(promote_types(DType.Int8, up) is up
                                       for up in ups)}))
    """)
    assert report["wrong"] == [], report
    assert report["final"], report
    assert report["reads"] > 0, report
