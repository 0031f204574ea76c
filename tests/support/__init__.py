"""Helpers shared by every folder of the test suite.

The root ``tests/conftest.py`` puts ``tests/`` on ``sys.path``, so every test
module (and every child process started with `child_env`) imports these as
``from support import ...``.  The package imports no test framework at
import time: worker processes and the fuzz harness import `support.defs`
without pytest.

* registry helpers (here): `unique_name`, `registry_unchanged`, `refused`,
  `assert_unregistered`; `new_class`, a class builder; `walk_leaves`, the
  leaves of a structure; `race`, functions started together on threads;
* `support.child`: running code in a fresh interpreter (`run_python`,
  `run_child`, `child_report`, `child_env`, `assert_exited`,
  `fork_unsafe_runtime`), and one test
  on its own (`run_test_in_fresh_interpreter`, behind the
  ``fresh_interpreter`` marker of tests/conftest.py);
* `support.defs`: definitions shared by the tests and the processes they
  start (`BUILTIN_NAMES`, `BLOCK_SCALED_BUILTINS`, `TagRule`, `PlanePair`,
  and `register_every_kind`, one registered descriptor of every kind);
* `support.capi`: building and loading the C API consumers;
* `support.dlpack`: DLPack structs through ctypes (reading a capsule's data
  type independently, crafting capsules); `support.arrow`: a pyarrow
  extension type.

Registered names live for the whole process (there is no unregistration), so
every test that registers something takes a fresh name from `unique_name`.
"""
import contextlib
import itertools
import os
import sys
import types

from support.child import (  # noqa: F401 (re-exported)
    CHILD_TIMEOUT,
    PACKAGE_PARENT,
    TESTS_ROOT,
    assert_clean_exit,
    assert_exited,
    child_env,
    child_report,
    run_child,
    run_python,
)

_counter = itertools.count()


def unique_name(prefix="T"):
    """Return a name no other test in this process has used."""
    return f"{prefix}_{os.getpid()}_{next(_counter)}"


@contextlib.contextmanager
def registry_unchanged():
    """Assert that the block leaves the registry exactly as it was."""
    from stride_weave.dtypes import DType

    before = DType.registered()
    yield
    after = DType.registered()
    assert after == before, (
        f"registry changed: {len(before)} -> {len(after)} entries; "
        f"added {[d.name for d in after[len(before):]]}"
    )


@contextlib.contextmanager
def refused(exc, match=None):
    """``pytest.raises`` that also asserts the registry is left unchanged."""
    import pytest

    with registry_unchanged():
        with pytest.raises(exc, match=match) as info:
            yield info


def assert_unregistered(*names):
    """Each name is unknown to ``DType.from_name`` (``LookupError``), and
    looking it up registers nothing."""
    from stride_weave.dtypes import DType

    for name in names:
        with refused(LookupError):
            DType.from_name(name)


def walk_leaves(node):
    """The leaves of a nested tuple (a structure), depth first."""
    if type(node) is tuple:
        for item in node:
            yield from walk_leaves(item)
    else:
        yield node


def new_class(name, bases, kwds=None, body=None, *, module=None):
    """Create a class exactly as a ``class`` statement would: ``kwds`` are
    the class keywords (``abstract=False``, ``metaclass=...``), ``body`` the
    namespace, and ``__module__`` the calling module's name (or ``module``)."""
    if module is None:
        module = sys._getframe(1).f_globals.get("__name__", __name__)

    def exec_body(ns):
        ns["__module__"] = module
        ns.update(body or {})
    return types.new_class(name, bases, kwds or {}, exec_body)


def race(*functions):
    """Run each function on its own thread, all released at once by a
    barrier, and wait for them; the first exception one raised is raised
    here."""
    import threading

    start = threading.Barrier(len(functions))
    errors = []

    def run(f):
        start.wait()
        try:
            f()
        except BaseException as e:  # noqa: BLE001 (re-raised below)
            errors.append(e)

    threads = [threading.Thread(target=run, args=(f,)) for f in functions]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
