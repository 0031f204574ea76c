"""Build C extensions that consume the stride_weave C API, for the tests.

Two consumers are compiled with setuptools in a temporary directory, each in
a child ``python setup.py build_ext --inplace`` against the header that
``stride_weave.get_include()`` returns (the installed package's, in CI):

* the documented example, examples/c_api/ (swcheck.c and its setup.py),
  copied unchanged: what docs/c-api.md shows is what is built;
* the probe, tests/support/sw_capi_probe.c: one wrapper per entry point.

Both are built with ``-Wall -Wextra -Werror`` added to the interpreter's own
CFLAGS, so the public header must compile cleanly in a consumer. Builds run
once per test process; tests that need a compiler skip, with the reason,
only when there is no C compiler.

Both declare ``Py_mod_gil`` under ``Py_GIL_DISABLED``. On a free-threaded
build, an extension that does not turns the GIL back on for the whole
process when it is imported, which would change the interpreter every later
test runs on. So before ``load()`` imports a consumer into the test process,
it imports it in a child interpreter with ``-W error::RuntimeWarning`` and
fails (without importing it here) unless the GIL is still disabled there.
"""
import importlib.machinery
import importlib.util
import os
import pathlib
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import textwrap

import pytest

import stride_weave
import support.child

SUPPORT = pathlib.Path(__file__).resolve().parent
TESTS = SUPPORT.parent
ROOT = TESTS.parent
EXAMPLE_DIR = ROOT / "examples" / "c_api"
EXAMPLE_C = EXAMPLE_DIR / "swcheck.c"
EXAMPLE_SETUP = EXAMPLE_DIR / "setup.py"
PROBE_C = SUPPORT / "sw_capi_probe.c"
MODULE_NAMES = {"example": "swcheck", "probe": "sw_capi_probe"}
FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
# The directory stride_weave is imported from: the build children import the
# very same package (so they use the same get_include()).
PACKAGE_PARENT = pathlib.Path(stride_weave.__file__).resolve().parent.parent

WARNINGS = "-Wall -Wextra -Werror"

PROBE_SETUP = """\
import stride_weave
from setuptools import Extension, setup

setup(
    name="sw_capi_probe",
    ext_modules=[Extension("sw_capi_probe", ["sw_capi_probe.c"],
                           include_dirs=[stride_weave.get_include()])],
)
"""


def compiler():
    """The C compiler setuptools would use, or None when there is none."""
    cc = sysconfig.get_config_var("CC") or os.environ.get("CC") or "cc"
    words = shlex.split(cc)
    return shutil.which(words[0]) if words else None


def no_compiler_reason():
    cc = sysconfig.get_config_var("CC") or "cc"
    return (f"no C compiler: {cc!r} (the interpreter's CC) is not on PATH; "
            "the C API consumer tests need one")


def child_env():
    """The environment of a build or consumer child: the tests' import path
    (support.child.child_env), CFLAGS with warnings as errors, no
    PYTHONWARNINGS."""
    env = support.child.child_env(drop=("PYTHONWARNINGS",))
    cflags = sysconfig.get_config_var("CFLAGS") or ""
    env["CFLAGS"] = f"{cflags} {WARNINGS}".strip()
    return env


def build_in(directory, timeout=600):
    """Run ``python setup.py build_ext --inplace`` in directory; return the
    built extension's path.  A failing build fails the test with its log."""
    proc = subprocess.run(
        [sys.executable, "setup.py", "-q", "build_ext", "--inplace"],
        cwd=directory, env=child_env(), stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=timeout,
    )
    if proc.returncode != 0:
        pytest.fail(f"building the consumer in {directory} failed "
                    f"(exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}",
                    pytrace=False)
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    built = [p for p in pathlib.Path(directory).iterdir()
             if p.name.endswith(suffixes)]
    assert len(built) == 1, (built, proc.stdout, proc.stderr)
    return built[0]


_built = {}
_loaded = {}


def _workdir():
    if "dir" not in _built:
        _built["dir"] = pathlib.Path(tempfile.mkdtemp(prefix="sw-capi-"))
    return _built["dir"]


def build(which):
    """Build "example" or "probe" once per process; return its directory."""
    if compiler() is None:
        pytest.skip(no_compiler_reason())
    if which not in _built:
        directory = _workdir() / which
        directory.mkdir()
        if which == "example":
            shutil.copy(EXAMPLE_C, directory / EXAMPLE_C.name)
            shutil.copy(EXAMPLE_SETUP, directory / EXAMPLE_SETUP.name)
        else:
            shutil.copy(PROBE_C, directory / PROBE_C.name)
            (directory / "setup.py").write_text(PROBE_SETUP)
        build_in(directory)
        _built[which] = directory
    return _built[which]


def gil_after_import(which):
    """Import the built consumer in a child interpreter started with
    ``-W error::RuntimeWarning`` (stride_weave first, then the consumer) and
    return ``(returncode, output)``; on success the output's last line is
    ``sys._is_gil_enabled()`` after both imports ("False" on a free-threaded
    build whose extensions all declare Py_mod_gil; "None" before 3.13)."""
    directory = build(which)
    env = child_env()
    env.pop("PYTHON_GIL", None)          # the modules' own declarations decide
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(directory)!r})
        import stride_weave.dtypes
        import {MODULE_NAMES[which]}
        print(getattr(sys, "_is_gil_enabled", lambda: None)())
    """)
    proc = subprocess.run(
        [sys.executable, "-W", "error::RuntimeWarning", "-c", code],
        env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=120,
    )
    return proc.returncode, (proc.stdout + proc.stderr).strip()


def load(which):
    """Import the built consumer into this process (once) and return it.

    On a free-threaded build, only after a child interpreter showed that
    importing it leaves the GIL disabled."""
    if which not in _loaded:
        directory = build(which)
        if FREE_THREADED:
            rc, out = gil_after_import(which)
            if rc != 0 or out.splitlines()[-1:] != ["False"]:
                pytest.fail(f"importing the {which} consumer would turn the GIL "
                            f"back on for this test process (exit {rc}):\n{out}",
                            pytrace=False)
        name = MODULE_NAMES[which]
        suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
        path = next(p for p in directory.iterdir() if p.name.endswith(suffixes))
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _loaded[which] = module
    return _loaded[which]


def cleanup():
    if "dir" in _built:
        shutil.rmtree(_built["dir"], ignore_errors=True)


import atexit  # noqa: E402  (registered last: after every build helper)

atexit.register(cleanup)
