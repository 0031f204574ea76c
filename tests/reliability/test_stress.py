"""Stress: 16 threads per round race through the registry, on every
interpreter (free-threaded ones with the GIL off).

Each scenario of tests/reliability/_stress.py runs in a child interpreter (a crash
fails one test, not the run, and the threads never run in the pytest
process), started with ``-W error::RuntimeWarning`` so that anything that
would turn the GIL back on on a free-threaded build is an error. The child
checks its invariants after every round (unique names, ``from_name(d.name)
is d``, snapshots that only grow and are prefixes of the next, pickle and
copy identity) and reports its counts as JSON; these tests check the counts
the scenario promises: one winner per contested name, every loser a
``ValueError``, every distinct registration registered.

``SW_STRESS_ROUNDS`` (default 25) sets the rounds per scenario, for a
longer run: ``SW_STRESS_ROUNDS=1000 python -m pytest tests/reliability/test_stress.py``.
"""
import json
import os
import sysconfig

import pytest

import _stress
from support import assert_exited, run_python

FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
ROUNDS = int(os.environ.get("SW_STRESS_ROUNDS", _stress.DEFAULT_ROUNDS))
THREADS = _stress.THREADS


def run_scenario(name):
    env = dict(os.environ)
    env.pop("PYTHON_GIL", None)      # the modules' own declarations decide
    env.pop("PYTHONWARNINGS", None)
    proc = run_python(["-W", "error::RuntimeWarning", _stress.__file__,
                       "--scenario", name, "--rounds", ROUNDS, "--threads", THREADS],
                      env=env, timeout=600 + 10 * ROUNDS)
    assert_exited(proc, quiet=True, what=name)
    report = json.loads(proc.stdout.splitlines()[-1])
    assert report["threads"] == THREADS and report["rounds"] == ROUNDS
    assert report["checks"] == ROUNDS    # the invariants ran after every round
    if FREE_THREADED:
        assert report["gil_enabled"] is False, "the GIL was turned back on"
    return report["scenarios"][name]


def test_distinct_registrations_all_register():
    counts = run_scenario("distinct")
    assert counts == {"rounds": ROUNDS, "registered": ROUNDS * THREADS * 4}


def test_same_name_race_has_exactly_one_winner():
    counts = run_scenario("same_name")
    assert counts == {"rounds": ROUNDS, "winners": ROUNDS,
                      "losers": ROUNDS * (THREADS - 1)}


def test_readers_see_consistent_registry_while_writers_register():
    counts = run_scenario("readers_writers")
    writers = THREADS // 2
    assert counts["registered"] == ROUNDS * writers * 12
    # every reader made at least its final pass in every round
    assert counts["reader_passes"] >= ROUNDS * (THREADS - writers)


def test_concurrently_defined_subclasses_register_with_their_attributes():
    counts = run_scenario("subclasses")
    assert counts == {"rounds": ROUNDS, "registered": ROUNDS * THREADS * 2,
                      "classes": ROUNDS * THREADS * 2}


def test_same_block_scaled_structure_under_different_names_has_one_winner():
    counts = run_scenario("block_scaled")
    assert counts == {"rounds": ROUNDS, "winners": ROUNDS,
                      "losers": ROUNDS * (THREADS - 1)}


def test_a_shared_miss_reads_one_message_or_the_replacement():
    counts = run_scenario("misses")
    assert counts["rounds"] == ROUNDS
    assert counts["reads"] == ROUNDS * (THREADS - 1) * 9


def test_threads_sharing_codec_inputs_get_the_one_thread_results():
    pytest.importorskip("numpy")
    counts = run_scenario("codecs")
    assert counts == {"rounds": ROUNDS, "threads_matching": ROUNDS * THREADS}


def test_declarations_race_lookups_of_the_promotion_lattice():
    counts = run_scenario("promotions")
    writers = min(4, THREADS // 2)
    assert counts["declared"] == ROUNDS * writers * 4
    assert counts["reader_passes"] >= ROUNDS * (THREADS - writers)


def test_the_invariant_checker_reports_a_snapshot_that_is_not_a_prefix():
    """The checker is not blind: the previous snapshot it holds, reversed, is
    not a prefix of the current one, and check() says so."""
    from stride_weave.dtypes import DType

    inv = _stress.Invariants()
    inv.check()
    inv.snapshots[DType] = inv.snapshots[DType][::-1]
    with pytest.raises(AssertionError, match="not a prefix"):
        inv.check()
