"""Running code in a fresh interpreter.

A scenario that could crash the interpreter (a segfault, a fatal error, an
abort), that needs a fresh process (first import, no threads started yet),
or that changes process-wide state runs in a child started with
``sys.executable``, so a regression shows up as a return code and a stderr
report instead of taking the test run down.  The child imports the very
same stride_weave the tests import, and with `child_env` the test helpers
too.
"""
import json
import os
import re
import subprocess
import sys
import textwrap

import stride_weave

#: tests/: the directory the ``support`` package is imported from.
TESTS_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: the directory stride_weave is imported from (src/ for an editable
#: install, site-packages for a real one)
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(stride_weave.__file__)))
CHILD_TIMEOUT = 120

#: Variables a child does not inherit by default: the suite's own warning
#: and development-mode settings are the parent's business.
DROPPED = ("PYTHONWARNINGS", "PYTHONDEVMODE")


def child_env(*dirs, drop=DROPPED):
    """``os.environ`` for a child that imports stride_weave from where the
    tests do, ``support`` and the helper modules in ``dirs``: ``PYTHONPATH``
    is the package's parent, tests/, ``dirs``, then the inherited value.
    The variables named in ``drop`` are removed."""
    env = dict(os.environ)
    path = [PACKAGE_PARENT, TESTS_ROOT, *map(str, dirs)]
    if env.get("PYTHONPATH"):
        path.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(path)
    for name in drop:
        env.pop(name, None)
    return env


def fork_unsafe_runtime():
    """Why ``os.fork()`` with other threads running cannot be tested in this
    process, or None when it can.

    AddressSanitizer's runtime (gcc's libasan up to at least gcc 12) takes no
    lock of its own allocator around ``fork()``: a child forked while
    another thread holds one of the allocator's size-class locks blocks
    forever on its first ``malloc`` of that size, in the runtime, before
    any code of the package runs.  Under such a runtime a test of "fork
    while threads run" measures the sanitizer, not the package."""
    import ctypes
    try:
        process = ctypes.CDLL(None)
    except OSError:
        return None
    if hasattr(process, "__asan_init"):
        return ("the AddressSanitizer runtime loaded in this process does not "
                "make its allocator fork-safe: a child forked while another "
                "thread allocates can block inside the runtime's malloc")
    return None


def run_python(args, *, env=None, cwd=None, input=None, timeout=CHILD_TIMEOUT):
    """Run ``sys.executable`` with ``args``; return the CompletedProcess
    with stdout and stderr decoded as UTF-8 (what Python children write).
    The child's standard input is ``input``, or nothing at all; ``env``
    None inherits this process's environment."""
    return subprocess.run(
        [sys.executable, *map(str, args)], env=env, cwd=cwd, input=input,
        stdin=subprocess.DEVNULL if input is None else None,
        capture_output=True, encoding="utf-8", timeout=timeout,
    )


def assert_exited(proc, *, quiet=False, what="child"):
    """Assert that ``proc`` exited with status 0 and, with ``quiet``, wrote
    nothing to stderr; the message carries the ends of both streams."""
    assert proc.returncode == 0, (
        f"{what} exited with {proc.returncode}\n--- stderr:\n{proc.stderr[-8000:]}"
        f"\n--- stdout:\n{proc.stdout[-4000:]}")
    if quiet:
        assert proc.stderr == "", f"{what} wrote to stderr:\n{proc.stderr[-8000:]}"


#: Set, in the interpreter `run_test_in_fresh_interpreter` starts, to the id
#: of the test it runs.
FRESH_TEST_ENV = "SW_TEST_IN_FRESH_INTERPRETER"


def run_test_in_fresh_interpreter(nodeid, rootdir, timeout=300):
    """Run the one test ``nodeid`` with pytest in a new interpreter (this
    one's warning options and development mode included), from ``rootdir``;
    fail with its report unless it passed, skip if it skipped."""
    import pytest

    flags = [f"-W{option}" for option in sys.warnoptions]
    if sys.flags.dev_mode:
        flags += ["-X", "dev"]
    env = child_env(drop=())
    env[FRESH_TEST_ENV] = nodeid
    proc = run_python([*flags, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
                       "-p", "no:xdist", nodeid], env=env, cwd=rootdir, timeout=timeout)
    summary = proc.stdout.strip().splitlines()[-1:] or [""]
    if proc.returncode == 0 and re.search(r"\b1 skipped\b", summary[0]):
        reasons = [line for line in proc.stdout.splitlines() if line.startswith("SKIPPED")]
        pytest.skip(f"in a fresh interpreter: {reasons[-1] if reasons else summary[0]}")
    assert_exited(proc, what=f"{nodeid} in a fresh interpreter")
    assert re.search(r"\b1 passed\b", summary[0]), proc.stdout[-4000:]


def run_child(code, *args, flags=(), timeout=CHILD_TIMEOUT, path=()):
    """Run `code` in a fresh interpreter with faulthandler on and the
    environment of `child_env` (``path``: more helper directories); return
    (returncode, stdout, stderr)."""
    proc = subprocess.run(
        [sys.executable, "-X", "faulthandler", *flags, "-c", textwrap.dedent(code), *args],
        env=child_env(*path), stdin=subprocess.DEVNULL, capture_output=True,
        timeout=timeout, cwd=TESTS_ROOT,
    )
    return proc.returncode, proc.stdout.decode("utf-8", "replace"), \
        proc.stderr.decode("utf-8", "replace")


def assert_clean_exit(rc, out, err):
    assert rc == 0 and err == "", (
        f"child exited with {rc}\n--- stderr:\n{err}\n--- stdout:\n{out[-4000:]}")


def child_report(code, *args, **kwargs):
    """Run `code` in a child that prints one JSON document as its last
    stdout line; assert a clean exit and return the parsed document."""
    rc, out, err = run_child(code, *args, **kwargs)
    assert_clean_exit(rc, out, err)
    lines = out.strip().splitlines()
    assert lines, f"the child printed nothing\n--- stderr:\n{err}"
    return json.loads(lines[-1])
