"""Free-threaded CPython: the module runs without re-enabling the GIL.

Free-threaded CPython (3.13t and later) is a supported target;
docs/guarantees.md ("Free-threaded CPython").

On a free-threaded build (``sysconfig.get_config_var("Py_GIL_DISABLED")``),
importing an extension that does not declare ``Py_mod_gil =
Py_MOD_GIL_NOT_USED`` turns the GIL back on for the whole process (with a
RuntimeWarning). These tests import ``stride_weave`` in a fresh child
interpreter, where nothing else was imported first, and check that
``sys._is_gil_enabled()`` is still False afterwards, also after threads race
through the registry. On a GIL build they skip: there is nothing to observe.
CI runs them on a free-threaded CPython it builds
(scripts/build-freethreaded-python), and compiles the free-threaded code path
against every other 3.13+ interpreter (scripts/check-freethreaded).
The longer multi-threaded stress is tests/reliability/test_stress.py.
"""
import os
import sysconfig
import textwrap

import pytest

from support import assert_exited, run_python

FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))

pytestmark = pytest.mark.skipif(
    not FREE_THREADED,
    reason="not a free-threaded CPython (sysconfig Py_GIL_DISABLED is unset); "
    "on this build the GIL is always on, so there is nothing to check here",
)


def _run(code):
    env = dict(os.environ)
    env.pop("PYTHON_GIL", None)   # the module's own declaration decides
    proc = run_python(["-W", "error::RuntimeWarning", "-c", textwrap.dedent(code)],
                      env=env, timeout=300)
    assert_exited(proc, quiet=True)
    return proc.stdout


def test_import_keeps_the_gil_disabled():
    """The module declares Py_MOD_GIL_NOT_USED: importing it (and with it
    the whole public API) leaves the GIL off."""
    out = _run("""
        import sys
        assert not sys._is_gil_enabled(), "GIL on before the import"
        import stride_weave.dtypes
        from stride_weave import _dtypes
        print(sys._is_gil_enabled())
    """)
    assert out.split() == ["False"]


def test_gil_stays_disabled_while_threads_register():
    """16 threads racing on shared and own names without the GIL: each name
    registers once, the winner is what from_name returns, and the GIL is
    still off at the end."""
    out = _run("""
        import pickle, sys, threading
        from stride_weave.dtypes import DType, DTypeCategory, SimpleDType

        N, NAMES = 16, 200
        barrier = threading.Barrier(N)
        won = [[] for _ in range(N)]

        def work(i):
            barrier.wait()
            for k in range(NAMES):
                try:
                    d = SimpleDType(f"FT_shared_{k}", bits=8 + i,
                                    supertype=DType.Floating)
                    won[i].append(d)
                except ValueError:
                    pass
                own = DTypeCategory(f"FT_own_{i}_{k}", supertype=DType.Any)
                assert pickle.loads(pickle.dumps(own)) is own
                assert DType.from_name(own.name) is own
                # One snapshot: two calls may see different registries,
                # as other threads keep registering in between.
                snapshot = DType.registered()
                assert len(set(snapshot)) == len(snapshot)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(N)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        winners = [d for ds in won for d in ds]
        assert len(winners) == NAMES
        for d in winners:
            assert DType.from_name(d.name) is d
        print(sys._is_gil_enabled())
    """)
    assert out.split() == ["False"]
