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
