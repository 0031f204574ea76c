#!/usr/bin/env python3
"""Benchmark runner for stride-weave.

    python benchmarks/run.py                 # full run, prints the tables
    python benchmarks/run.py --write-docs    # ... and writes docs/performance.md
    python benchmarks/run.py --quick         # a few seconds, for CI

This file is the entry point; it runs from any working directory.  The work
is split by concern:

* ``harness.py``: how a benchmark is timed (timeit, unrolling, calibration,
  interleaved rounds, best-of sampling, child processes, tracemalloc);
* ``cases.py``: what is measured, with its floors and baselines;
* ``report.py``: the tables, the ratios and bounds, docs/performance.md.

Timings are never asserted: the runner exits 0 unless the code errors.
Optional third-party baselines (numpy, torch, ml_dtypes) are measured only
when importable.
"""

import argparse
import os
import sys
import time

# The sibling modules are imported by name, wherever this file is run from
# (also under ``python -P`` or when this file is loaded by path).
HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import cases  # noqa: E402
import harness  # noqa: E402
import report  # noqa: E402


def run_child(args):
    """In a child process of the scaling section: measure one size and hand
    the result to the parent."""
    if args.child == "timing":
        out = cases.child_timing(args.size, args.rounds, args.target_ms / 1000)
    else:
        out = cases.child_memory(args.size)
    harness.reply(out)


def spawn(kind, size, rounds, target_ms):
    """Run this file as a child process of the scaling section."""
    return harness.spawn(os.path.abspath(__file__), kind, size, rounds,
                         target_ms)


def main(argv=None):
    """Run the benchmarks, print the tables, optionally write the page."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="a few seconds: small samples, scaling at 1k only")
    ap.add_argument("--write-docs", action="store_true",
                    help="write the tables to docs/performance.md")
    ap.add_argument("--rounds", type=int, default=None,
                    help="counted rounds per benchmark (default 15, quick 3)")
    ap.add_argument("--target-ms", type=float, default=None,
                    help="duration of one sample (default 10, quick 1)")
    ap.add_argument("--child", choices=("timing", "memory"),
                    help=argparse.SUPPRESS)
    ap.add_argument("--size", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.rounds is None:
        args.rounds = 3 if args.quick else 15
    if args.target_ms is None:
        args.target_ms = 1.0 if args.quick else 10.0
    if args.child:
        return run_child(args)

    t_start = time.perf_counter()
    mode = "quick" if args.quick else "full"
    sizes = [1000] if args.quick else [1000, 10000, 100000]

    benches = cases.build_benches()
    harness.run_benches(benches, args.rounds, args.target_ms / 1000)
    by = {b.key: b for b in benches}

    # Registration in this process, after everything else (it grows the
    # registry): batches of 100 fresh names, best batch.
    reg = cases.registration(5 if args.quick else 20)
    # Declaring into the default promotion lattice, last too (it grows it).
    reg.update(cases.declaration())

    # Scaling: each size in fresh child processes.
    child_rounds = 3 if args.quick else 7
    scale = [spawn("timing", n, child_rounds, args.target_ms) for n in sizes]
    memory = [spawn("memory", n, 1, 1) for n in sizes]

    rows = report.table_rows(benches)
    targets = report.evaluate_targets(by, reg, scale, memory, args.quick)
    info = report.machine_info()
    info.update(rounds=args.rounds, target_ms="%g" % args.target_ms,
                c_api=report.c_api_summary(by))
    print(report.render_text(info, mode, rows, reg, scale, memory, targets))
    if args.write_docs:
        flags = [a for a in (argv if argv is not None else sys.argv[1:])]
        md = report.render_markdown(info, mode, flags, rows, reg, scale, memory,
                                    targets, by)
        print("\nwrote %s" % os.path.relpath(report.write_docs(md)))
    print("\nwall time %.1f s" % (time.perf_counter() - t_start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
