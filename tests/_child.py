"""Running a scenario in a fresh interpreter.

A scenario that could crash the interpreter (a segfault, a fatal error, an
abort) runs in a child started with ``sys.executable``, so a regression
shows up as a return code and a stderr report instead of taking the test
run down.  The child imports the very same stride_weave the tests import.
"""
import json
import os
import subprocess
import sys
import textwrap

import stride_weave

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
# the directory stride_weave is imported from (src/ for an editable install,
# site-packages for a real one)
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(stride_weave.__file__)))
CHILD_TIMEOUT = 120


def run_child(code, *args, flags=(), timeout=CHILD_TIMEOUT):
    """Run `code` in a fresh interpreter; return (returncode, stdout, stderr)."""
    env = dict(os.environ)
    path = [PACKAGE_PARENT, TESTS_DIR]
    if env.get("PYTHONPATH"):
        path.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(path)
    env.pop("PYTHONWARNINGS", None)
    env.pop("PYTHONDEVMODE", None)
    proc = subprocess.run(
        [sys.executable, "-X", "faulthandler", *flags, "-c", textwrap.dedent(code), *args],
        env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout,
        cwd=TESTS_DIR,
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
