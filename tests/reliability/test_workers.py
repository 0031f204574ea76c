"""Reliability: descriptors travel as identities through worker processes.

docs/design.md ("Pickling"); docs/guarantees.md
("Processes").

Built-in descriptors and extensions registered at import of
``tests/reliability/_worker_defs.py`` (which every worker imports) go to workers of a
``multiprocessing`` Pool and of a ``concurrent.futures.ProcessPoolExecutor``,
with the spawn, forkserver and fork start methods, and come back; on both
sides each one must be the receiving process's registered identity.

A worker whose definition differs (``SW_WORKER_VARIANT=wide``, read at import
of the defs module) gets the clear ``ValueError`` naming the difference when
it unpickles a descriptor, and the pool (and the very same worker process)
runs the next task.  Those scenarios run in a child process
(``_worker_defs.driver_main``) so that each gets its own forkserver started
with the "wide" environment.
"""
import json
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

import pytest

import _worker_defs
from _worker_defs import BUILTIN_NAMES, DEFS, DIFFERS_WHEN_WIDE, KINDS, NAMES
from stride_weave.dtypes import DType
from support import assert_exited, child_env, run_python

HERE = os.path.dirname(os.path.abspath(__file__))
START_METHODS = [m for m in ("spawn", "forkserver", "fork")
                 if m in multiprocessing.get_all_start_methods()]
TIMEOUT = 60


@pytest.fixture(autouse=True)
def base_variant(monkeypatch):
    # workers started from this process must register the base definitions
    monkeypatch.delenv(_worker_defs.VARIANT_ENV, raising=False)
    assert _worker_defs.VARIANT == "base"


def _payload():
    builtins = [getattr(DType, n) for n in BUILTIN_NAMES]
    ext = dict(DEFS)
    return {
        "builtins": builtins,
        "ext": ext,
        "twice": [DEFS["compound"], DEFS["compound"], DType.Float32, DType.Float32],
        "nested": ({"x": (DEFS["simple"],)}, [DEFS["subclass"], DEFS["subcategory"]]),
    }


def _check_payload_back(sent, back):
    assert back["builtins"] == sent["builtins"]
    for a, b in zip(sent["builtins"], back["builtins"]):
        assert a is b, f"{a!r} came back as another object"
    for kind in KINDS:
        assert back["ext"][kind] is DEFS[kind], f"{kind} came back as another object"
    assert all(a is b for a, b in zip(sent["twice"], back["twice"]))
    assert back["nested"][0]["x"][0] is DEFS["simple"]
    assert back["nested"][1][0] is DEFS["subclass"]
    assert back["nested"][1][1] is DEFS["subcategory"]


def _check_echo_result(result, sent):
    pid, variant, checks, back = result
    assert pid != os.getpid()
    assert variant == "base"
    bad = [name for name, ok in checks if not ok]
    assert not bad, f"in the worker these are not the registered identities: {bad}"
    assert len(checks) == len(BUILTIN_NAMES) + len(KINDS) + 4 + 3
    _check_payload_back(sent, back)
    return pid


ALL_NAMES = list(BUILTIN_NAMES) + [NAMES[k] for k in KINDS]


def _pool_round_trip(method):
    """Descriptors sent to and from the workers of a multiprocessing Pool."""
    ctx = multiprocessing.get_context(method)
    sent = _payload()
    with ctx.Pool(2, initializer=_worker_defs.init) as pool:
        results = pool.map(_worker_defs.echo, [sent] * 6, chunksize=1)
        pids = {_check_echo_result(r, sent) for r in results}
        assert pids  # at least one worker answered
        # descriptors that originate in the worker come back as ours
        found = pool.apply_async(_worker_defs.lookup, (ALL_NAMES,)).get(TIMEOUT)
        assert all(d is DType.from_name(n) for d, n in zip(found, ALL_NAMES))
        # starmap / imap paths pickle the same way
        for r in pool.imap_unordered(_worker_defs.echo, [sent["ext"]] * 3):
            assert all(ok for _, ok in r[2])
            assert all(r[3][k] is DEFS[k] for k in KINDS)


def _executor_round_trip(method):
    """Descriptors sent to and from the workers of a ProcessPoolExecutor."""
    ctx = multiprocessing.get_context(method)
    sent = _payload()
    with ProcessPoolExecutor(2, mp_context=ctx, initializer=_worker_defs.init) as ex:
        futures = [ex.submit(_worker_defs.echo, sent) for _ in range(4)]
        for f in futures:
            _check_echo_result(f.result(TIMEOUT), sent)
        found = ex.submit(_worker_defs.lookup, ALL_NAMES).result(TIMEOUT)
        assert all(d is DType.from_name(n) for d, n in zip(found, ALL_NAMES))
        for r in ex.map(_worker_defs.echo, [DEFS["compound"], DType.E2M1], timeout=TIMEOUT):
            assert all(ok for _, ok in r[2])
            assert r[3] in (DEFS["compound"], DType.E2M1)
            assert r[3] is DEFS["compound"] or r[3] is DType.E2M1



def _child_env():
    """The environment of a child interpreter that imports the tests' helper
    modules and registers the base definitions."""
    return child_env(HERE, drop=(_worker_defs.VARIANT_ENV,))


def _in_a_single_threaded_child(scenario):
    """Run ``scenario("fork")`` in a new interpreter that has only its main
    thread when it forks, with DeprecationWarning an error.

    os.fork() in a process with other threads alive is unsafe (the child
    gets only the forking thread, and any lock another thread held stays
    held); CPython 3.12+ warns about it. The test process itself may have
    threads (pytest-xdist's channel to the controller, threads other tests
    left running), so the fork scenarios fork from a child that has none.
    """
    code = (
        "import threading, test_workers\n"
        "assert threading.active_count() == 1, threading.enumerate()\n"
        f"test_workers.{scenario.__name__}('fork')\n"
        "print('passed')\n"
    )
    proc = run_python(["-W", "error::DeprecationWarning", "-c", code],
                      env=_child_env(), cwd=HERE)
    assert_exited(proc)
    assert proc.stdout == "passed\n", proc.stdout
    assert "DeprecationWarning" not in proc.stderr, proc.stderr


def _round_trip(scenario, method):
    if method == "fork":
        _in_a_single_threaded_child(scenario)
    else:
        scenario(method)


@pytest.mark.parametrize("method", START_METHODS)
def test_pool_round_trips_identities(method):
    _round_trip(_pool_round_trip, method)


@pytest.mark.parametrize("method", START_METHODS)
def test_process_pool_executor_round_trips_identities(method):
    _round_trip(_executor_round_trip, method)


MISMATCH_CASES = [(kind, method) for kind in ("pool", "executor")
                  for method in START_METHODS if method != "fork"]


@pytest.mark.parametrize("kind,method", MISMATCH_CASES,
                         ids=[f"{k}-{m}" for k, m in MISMATCH_CASES])
def test_worker_with_a_different_definition_gets_a_clear_value_error(kind, method):
    # fork workers inherit the parent's registry, so they cannot differ;
    # spawn and forkserver workers import _worker_defs themselves.
    proc = run_python(["-c", "import _worker_defs; _worker_defs.driver_main()", kind, method],
                      env=_child_env(), cwd=HERE)
    assert_exited(proc, what="driver")
    report = json.loads(proc.stdout)
    assert "driver_error" not in report, report["driver_error"]
    steps = dict((label, outcome) for label, outcome in report["steps"])
    assert len(steps) == len(report["steps"])

    pid, variant, bits = steps["variant"]["ok"]
    assert (variant, bits) == ("wide", 32), "the worker did not register the wide variant"

    def ok(label, name):
        outcome = steps[label]
        assert "ok" in outcome, f"{label}: {outcome}"
        wpid, got_name, is_identity = outcome["ok"]
        assert (got_name, is_identity) == (name, True)
        assert wpid == pid, f"{label} ran in another worker: the first one died"

    def refused(label, *fragments):
        outcome = steps[label]
        assert outcome.get("error") == "ValueError", f"{label}: {outcome}"
        for fragment in fragments:
            assert fragment in outcome["message"], (fragment, outcome["message"])

    ok("Float32", "Float32")
    refused("simple", NAMES["simple"], "SimpleDType.bits", "registered 32",
            "pickle has 16")
    refused("compound", NAMES["compound"], "SimpleDType.bits")
    ok("category", NAMES["category"])
    ok("subclass", NAMES["subclass"])
    refused("simple-again", "registered 32", "pickle has 16")
    ok("Float32-again", "Float32")   # the pool, and its worker, survived
    assert {"simple", "compound"} == DIFFERS_WHEN_WIDE
    assert proc.stderr == "", proc.stderr


# ---- stride_weave.workers: definitions registered in every worker -----------------

# A script, run as __main__: its descriptors are defined under
# `if __name__ == "__main__"` (what a worker never imports) and by `define`,
# which every worker runs from its initializer; the worker also imports and
# allows `json` (any importable module stands for the user's).
_SCRIPT = '''
import copy, json, multiprocessing, sys
from concurrent.futures import ProcessPoolExecutor
from stride_weave import workers
from stride_weave.dtypes import DType, SimpleDType, set_unpickle_imports, unpickle_imports

def define():
    return SimpleDType.ensure("ScriptFloat12", bits=12, supertype=DType.Floating)

def state():
    return unpickle_imports(), "json" in sys.modules

if __name__ == "__main__":
    method = sys.argv[1]
    main_only = SimpleDType("MainOnlyFloat", bits=10, supertype=DType.Floating)
    d = define()
    ctx = multiprocessing.get_context(method)
    setup = workers.initializer("json", define=define)
    out = {}
    with ProcessPoolExecutor(1, mp_context=ctx, initializer=setup) as pool:
        out["executor"] = pool.submit(copy.copy, d).result(60) is d
        out["executor_state"] = pool.submit(state).result(60)
    with ctx.Pool(1, initializer=setup) as pool:
        out["pool"] = pool.apply(copy.copy, (d,)) is d
        out["pool_twice"] = pool.apply(copy.copy, ([d, d],)) == [d, d]
    # a worker whose policy is False keeps it, and still has the definitions
    with ctx.Pool(1, initializer=set_unpickle_imports, initargs=(False,)) as pool:
        out["off"] = pool.apply(workers.initializer("json", define=define))
        out["off_state"] = pool.apply(state)
    # without the set-up, the worker cannot load it: the executor breaks
    # (a multiprocessing Pool would lose the task and wait for ever)
    with ProcessPoolExecutor(1, mp_context=ctx) as pool:
        try:
            pool.submit(copy.copy, main_only).result(60)
        except Exception as exc:
            out["without"] = type(exc).__name__
    print(json.dumps(out))
'''


@pytest.mark.parametrize("method", [m for m in START_METHODS if m != "fork"])
def test_the_initializer_registers_main_definitions_in_every_worker(method, tmp_path):
    script = tmp_path / "script.py"
    script.write_text(_SCRIPT)
    proc = run_python([script, method], env=_child_env(), cwd=tmp_path, timeout=180)
    assert_exited(proc)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["executor"] is True and out["pool"] is True and out["pool_twice"] is True
    policy, imported = out["executor_state"]
    assert policy[0] == "json" and "stride_weave.formats" in policy and imported is True
    assert out["off"] is None and out["off_state"] == [False, True]
    assert out["without"] == "BrokenProcessPool"


def test_a_worker_setup_is_an_immutable_picklable_value():
    import pickle

    from stride_weave import workers

    setup = workers.initializer("json", "xml.dom", define=_worker_defs.init)
    assert setup == workers.WorkerSetup(("json", "xml.dom"), _worker_defs.init)
    assert pickle.loads(pickle.dumps(setup)) == setup
    with pytest.raises(AttributeError):
        setup.modules = ()   # type: ignore[misc]
    assert type(setup.modules[0]) is str


@pytest.mark.parametrize("args, kwargs, error, match", [
    (("__main__",), {}, ValueError, "'__main__' is not a module a worker can import"),
    (("mylib.__main__",), {}, ValueError, "without a __main__ part"),
    (("my-lib",), {}, ValueError, "a dotted name of identifiers"),
    (("",), {}, ValueError, "a dotted name of identifiers"),
    ((3,), {}, TypeError, "modules must be module names"),
    ((b"json",), {}, TypeError, "got an object of type bytes"),
    (("json",), {"define": "not callable"}, TypeError,
     "define must be a function of no arguments or None"),
])
def test_a_bad_worker_setup_is_refused_before_any_worker_starts(args, kwargs, error, match):
    from stride_weave import workers

    with pytest.raises(error, match=match):
        workers.initializer(*args, **kwargs)


_MALFORMED_POLICY = '''
import json, multiprocessing, sys
from concurrent.futures import ProcessPoolExecutor
from stride_weave import workers
from stride_weave.dtypes import DType

if __name__ == "__main__":
    out = {"errors": []}
    for call in (lambda: workers.initializer("json"),
                 lambda: workers.initializer(define=print),
                 lambda: workers.dask_plugin("json")):
        try:
            call()
        except ValueError as exc:
            out["errors"].append(str(exc))
        except ImportError as exc:      # dask_plugin without distributed
            out["errors"].append(f"ImportError after the check: {exc}")
    out["children"] = len(multiprocessing.active_children())
    print(json.dumps(out))
'''


@pytest.mark.parametrize("value", ["true", "Off", "not-valid", "mylib,,other"])
def test_a_malformed_policy_variable_fails_in_the_parent_before_any_worker_starts(
        value, tmp_path):
    # Workers inherit the variable: a malformed one is the policy's own
    # ValueError where the set-up is made, not a broken pool later.
    script = tmp_path / "script.py"
    script.write_text(_MALFORMED_POLICY)
    env = _child_env()
    env["STRIDE_WEAVE_UNPICKLE_IMPORTS"] = value
    proc = run_python([script], env=env, cwd=tmp_path, timeout=120)
    assert_exited(proc)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["children"] == 0, out
    assert len(out["errors"]) == 3, out
    for message in out["errors"]:
        assert message.startswith("environment variable STRIDE_WEAVE_UNPICKLE_IMPORTS: "
                                  f"expected 'any', 'none' or a comma-separated list "
                                  f"of module name prefixes (such as "
                                  f"'mylib,otherlib.formats'), got {value!r}: "), out


def test_a_well_formed_policy_variable_is_checked_and_left_unread(tmp_path):
    # The check reads the variable, not the policy: the declarations stay
    # unread (importlib.metadata is not imported) until a load needs them.
    env = _child_env()
    env["STRIDE_WEAVE_UNPICKLE_IMPORTS"] = "json, xml"
    proc = run_python(["-c", "import sys\n"
                             "from stride_weave import workers\n"
                             "workers.initializer('json')\n"
                             "print('importlib.metadata' in sys.modules)"],
                      env=env, cwd=tmp_path)
    assert_exited(proc)
    assert proc.stdout.strip() == "False"


def test_a_str_subclass_module_name_is_copied_without_running_its_methods():
    from stride_weave import workers
    from support.hostile import tripwire

    name, calls = tripwire("json")
    setup = workers.initializer(name)
    assert type(setup.modules[0]) is str and setup.modules == ("json",)
    assert calls == []


def test_importing_the_workers_module_imports_no_engine():
    proc = run_python(["-c", "import sys, stride_weave.workers\n"
                             "print(sorted(m for m in sys.modules if m.split('.')[0] in "
                             "('distributed', 'dask', 'concurrent', 'multiprocessing')))"],
                      env=_child_env())
    assert_exited(proc)
    assert proc.stdout.strip() == "[]"
