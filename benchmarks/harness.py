"""The timing harness: how the benchmarks are measured (plain timeit, no
extra dependencies).

* every statement is compiled by ``timeit.Timer`` with its operands bound as
  *local* names of the timing function, and unrolled ``UNROLL`` times per loop
  iteration, so the loop's own overhead is amortized to a fraction of a ns;
* ``timeit`` disables the garbage collector while timing (so do the
  registration loops here);
* each benchmark is calibrated first (which also warms it up) so one sample
  lasts about ``--target-ms``; then all benchmarks are sampled in interleaved
  rounds (one sample of each per round, the first round discarded as warm-up)
  and the best sample is kept: a noisy period hits every benchmark alike, and
  every figure is reported as a ratio to a floor measured in the same run;
* each size of the scaling section (1k, 10k, 100k registered descriptors) runs
  in fresh child processes (``sys.executable``), one for timings and one for
  memory (tracemalloc slows allocation down, so it never runs while timing).

What is measured lives in ``cases.py``; how it is reported, in ``report.py``.
"""

import gc
import json
import math
import subprocess
import sys
import time
import timeit
import tracemalloc

UNROLL = 10


class Bench:
    """One timeit statement with its operands bound as locals.

    `key` names the benchmark, `label` describes it in the tables, `ns` maps
    operand names to values, `group` is its table group; `floor` and `enum`
    are the keys of the benchmarks it is compared with.  One statement
    performs `per` operations; it is repeated `unroll` times per loop
    iteration."""

    def __init__(self, key, label, stmt, ns, group, floor=None, enum=None,
                 unroll=UNROLL, note="", per=1):
        self.key, self.label, self.group = key, label, group
        self.floor, self.enum, self.note = floor, enum, note
        self.unroll = unroll
        self.per = per             # operations one statement performs
        setup = "\n".join("%s = _ns[%r]" % (name, name) for name in ns)
        body = "\n".join([stmt] * unroll)
        self.timer = timeit.Timer(body, setup, globals={"_ns": ns})
        self.number = 1
        self.best = math.inf       # seconds per op
        self.samples = 0

    def calibrate(self, target):
        """Choose the loop count so that one sample lasts about `target`
        seconds (this also warms the statement up)."""
        number = 1
        while True:
            t = self.timer.timeit(number)
            if t >= target / 4 or number >= 10 ** 9:
                break
            number *= 10 if t < target / 100 else 2
        self.number = max(1, int(number * target / max(t, 1e-9)))

    def sample(self):
        """Take one sample; keep it if it is the best so far."""
        t = self.timer.timeit(self.number)
        self.samples += 1
        self.best = min(self.best, t / (self.number * self.unroll * self.per))

    @property
    def ns(self):
        """The best sample, in nanoseconds per operation."""
        return self.best * 1e9


def run_benches(benches, rounds, target):
    """Calibrate every benchmark to `target` seconds a sample, then sample all
    of them in `rounds` interleaved rounds after one warm-up round."""
    for b in benches:
        b.calibrate(target)
    for r in range(rounds + 1):           # round 0 is a warm-up
        for b in benches:
            if r == 0:
                b.timer.timeit(b.number)
            else:
                b.sample()


def time_registrations(make, names, batch):
    """Register `names` in batches of `batch`; return seconds per registration
    of every batch.  The garbage collector is off while timing, as in timeit."""
    per = []
    clock = time.perf_counter
    enabled = gc.isenabled()
    gc.disable()
    try:
        for start in range(0, len(names), batch):
            chunk = names[start:start + batch]
            t0 = clock()
            for n in chunk:
                make(n)
            per.append((clock() - t0) / len(chunk))
    finally:
        if enabled:
            gc.enable()
    return per


def traced_bytes(work):
    """Call `work()` under tracemalloc; return the bytes it left allocated
    (garbage collected before and after, so only what survives counts)."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    work()
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return after - before


def spawn(script, kind, size, rounds, target_ms):
    """Run `script` in a fresh interpreter (``sys.executable``) as the child
    of kind `kind` ("timing" or "memory") for `size` descriptors; return the
    result it wrote with `reply`.  The script must accept the hidden options
    ``--child KIND --size N --rounds N --target-ms MS``."""
    cmd = [sys.executable, script, "--child", kind,
           "--size", str(size), "--rounds", str(rounds),
           "--target-ms", str(target_ms)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        raise RuntimeError("benchmark child %s %d failed (exit %d)"
                           % (kind, size, p.returncode))
    return json.loads(p.stdout)


def reply(result):
    """In a child process: hand `result` (JSON-serializable) to the parent."""
    json.dump(result, sys.stdout)
