#!/usr/bin/env python3
"""Read scaling across threads: the same reads from 1 thread and from N.

    python benchmarks/freethreaded.py                  # prints the table
    python benchmarks/freethreaded.py --threads 1 2 4  # thread counts
    python benchmarks/freethreaded.py --write-docs     # ... and writes
                                                       # docs/freethreaded-scaling.md

Run it with a free-threaded CPython (3.13t or newer) that has stride_weave
installed; on a GIL build it runs too and shows what the GIL allows (about
1x), which is the comparison the free-threaded figures are read against.

Method: for each operation and each thread count T, T threads wait on a
barrier, then each runs the operation LOOPS times on the same shared
descriptors; the wall time from the barrier's release to the last thread's
end gives the throughput (T * LOOPS calls / wall time).  Each figure is the
best of --repeat runs.  The speedup is the throughput with T threads over
the throughput with one, measured in the same run; the ideal is
min(T, cores).  Timings are never asserted.
"""

import argparse
import os
import pathlib
import pickle
import platform
import sys
import sysconfig
import threading
import time

from stride_weave.dtypes import DType

LOOPS = 20_000


def _operations():
    """(label, function running `n` calls) for each read measured."""
    f32, any_, nvfp4 = DType.Float32, DType.Any, DType.NVFP4
    from_name = DType.from_name
    dumps, loads = pickle.dumps, pickle.loads

    def lookups(n):
        for _ in range(n):
            from_name("Float32")

    def subtype_checks(n):
        for _ in range(n):
            f32.is_subtype_of(any_)

    def structures(n):
        for _ in range(n):
            f32.structure()

    def round_trips(n):
        for _ in range(n // 10):    # ten times slower than the others
            loads(dumps(f32))

    def block_round_trips(n):
        for _ in range(n // 20):
            loads(dumps(nvfp4))

    # What the interpreter charges for the same shapes on shared objects of
    # its own (not immortal): a C method call, and a dict lookup.
    big = 10 ** 30
    table = {"Float32": f32}
    get = table.get

    def int_method_calls(n):
        for _ in range(n):
            big.bit_length()

    def dict_gets(n):
        for _ in range(n):
            get("Float32")

    def local_int_method_calls(n):
        own = 10 ** 30 + threading.get_ident()  # each thread's own object
        for _ in range(n):
            own.bit_length()

    return [
        ("reference: own_int.bit_length() (nothing shared)",
         local_int_method_calls, 1),
        ("reference: shared_int.bit_length()", int_method_calls, 1),
        ("reference: shared_dict.get('Float32')", dict_gets, 1),
        ("DType.from_name('Float32')", lookups, 1),
        ("Float32.is_subtype_of(Any)", subtype_checks, 1),
        ("Float32.structure()", structures, 1),
        ("pickle round trip, Float32", round_trips, 10),
        ("pickle round trip, NVFP4", block_round_trips, 20),
    ]


def _throughput(fn, divisor, threads, loops):
    """Calls per second of `fn` run by `threads` threads at once."""
    barrier = threading.Barrier(threads)
    spans = []

    def worker():
        barrier.wait()
        start = time.perf_counter()
        fn(loops)
        spans.append((start, time.perf_counter()))

    # Each worker times itself: the main thread's own clock read could come
    # after a short run ended (a negative interval on a loaded machine).
    pool = [threading.Thread(target=worker) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    elapsed = max(end for _, end in spans) - min(start for start, _ in spans)
    return threads * (loops // divisor) / max(elapsed, 1e-9)


def measure(thread_counts, repeat, loops):
    """[(label, {threads: best calls/s})] for every operation."""
    results = []
    for label, fn, divisor in _operations():
        fn(loops // 10)     # warm up (and let the specializing interpreter settle)
        best = {}
        for _ in range(repeat):
            for t in thread_counts:
                rate = _throughput(fn, divisor, t, loops)
                best[t] = max(best.get(t, 0.0), rate)
        results.append((label, best))
    return results


def _build():
    gil = getattr(sys, "_is_gil_enabled", lambda: True)()
    ft = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
    kind = ("free-threaded, GIL off" if ft and not gil
            else "free-threaded build, GIL on" if ft else "GIL build")
    return "CPython %s (%s), %d cores" % (platform.python_version(), kind,
                                         os.cpu_count() or 1)


def render(results, thread_counts):
    """The results as Markdown table lines."""
    head = ["operation", "1 thread (calls/s)"]
    head += ["%d threads: speedup" % t for t in thread_counts if t != 1]
    lines = ["| " + " | ".join(head) + " |",
             "|" + "---|" * len(head)]
    for label, best in results:
        one = best[1]
        cells = [label, "{:,.0f}".format(one)]
        cells += ["%.2fx" % (best[t] / one) for t in thread_counts if t != 1]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


PAGE = """# Free-threaded read scaling

Generated by `benchmarks/freethreaded.py --write-docs`; do not edit by hand.

Measured on {build}.

Each operation reads the same shared descriptors from every thread (no
thread has objects of its own). The reference rows are what the interpreter
itself charges: the first is a C method of an int each thread owns, which
shows how far this machine scales when nothing is shared; the next two are
the same shapes of call on shared objects of the interpreter's own (a C
method of an int, and a dict lookup). The speedup is the throughput with that many
threads over the throughput with one, measured in the same run; the ideal is
the number of threads up to the number of cores ({cores} on the machine measured). On a GIL
build the same script shows about 1x: one thread runs Python at a time.

{table}

## What the design predicts

The reads take no lock: a lookup reads the registry's map without its
mutex, `is_subtype_of` walks an immutable tuple, `structure()` returns an
immutable tuple, and `_reconstruct` compares against a registered structure.
Nothing they touch is written after registration, so the figures are
bounded by what CPython itself shares between threads: the reference counts
of the shared descriptors and of the objects a call returns. The reference
rows show that bound: the interpreter's own shared int and dict scale no
better than the descriptors, while the same call on objects each thread owns
scales with the cores. A free-threaded CPython counts references of objects owned by
another thread atomically, so reads of one hot descriptor from many threads
contend on its count; pickling allocates per call and scales with the
allocator. Immortalizing the built-in descriptors, or deferred reference
counting where CPython offers it to extensions, would remove that
contention; CPython 3.13 offers neither to extension types.
"""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, nargs="+",
                        default=[1, 2, max(4, os.cpu_count() or 1)],
                        help="thread counts to run (1 is always included)")
    parser.add_argument("--repeat", type=int, default=5,
                        help="runs per figure; the best is kept")
    parser.add_argument("--loops", type=int, default=LOOPS,
                        help="calls per thread per run")
    parser.add_argument("--write-docs", action="store_true",
                        help="write docs/freethreaded-scaling.md")
    args = parser.parse_args(argv)
    counts = sorted(set([1] + args.threads))
    results = measure(counts, args.repeat, args.loops)
    build = _build()
    lines = render(results, counts)
    print(build)
    print("\n".join(lines))
    if args.write_docs:
        path = pathlib.Path(__file__).resolve().parent.parent / "docs" / \
            "freethreaded-scaling.md"
        path.write_text(PAGE.format(build=build, cores=os.cpu_count() or 1,
                                    table="\n".join(lines)))
        print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
