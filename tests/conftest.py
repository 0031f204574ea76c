"""Suite-wide configuration of the stride-weave tests.

The tests are laid out by what they prove: descriptors/ (the descriptor
model), representations/ (string forms, numerics, formats, interop),
reliability/ (hostile code, fuzzing, leaks, threads, processes) and
surfaces/ (C API, command line, documentation, typing).  The helpers they
share are the ``support`` package next to this file; this file puts tests/
on ``sys.path`` so that every test module imports it the same way, however
the suite is started (``python -m pytest`` from the project root, or a path
to one file).
"""
import os
import sys

TESTS_ROOT = os.path.dirname(os.path.abspath(__file__))
if TESTS_ROOT not in sys.path:
    sys.path.insert(0, TESTS_ROOT)

import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

from support import unique_name  # noqa: E402
from support.child import FRESH_TEST_ENV, run_test_in_fresh_interpreter  # noqa: E402

# Hypothesis profiles, chosen with HYPOTHESIS_PROFILE (unset: hypothesis's
# own defaults, which CI's release builds use). Tests that set max_examples
# themselves keep it; tests/reliability/test_fuzz.py scales its counts by
# the loaded profile.
#   long          20x the examples: a longer local fuzzing session
#   instrumented  a third of the examples: CI's sanitizer and debug builds
#                 run 2-5x slower and check memory, not new inputs
#   valgrind      a handful of examples (scripts/valgrind runs 20-50x slower)
settings.register_profile("long", max_examples=2000, deadline=None)
settings.register_profile("instrumented", max_examples=34, deadline=None)
settings.register_profile("valgrind", max_examples=5, deadline=None)
if os.environ.get("HYPOTHESIS_PROFILE"):
    settings.load_profile(os.environ["HYPOTHESIS_PROFILE"])


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """A test marked ``fresh_interpreter`` looks at the whole registry, which
    in a shared process holds whatever earlier tests registered: it runs, on
    its own, in a new interpreter (where this hook lets it run normally)."""
    if (pyfuncitem.get_closest_marker("fresh_interpreter") is None
            or os.environ.get(FRESH_TEST_ENV) == pyfuncitem.nodeid):
        return None
    run_test_in_fresh_interpreter(pyfuncitem.nodeid, pyfuncitem.config.rootpath)
    return True


@pytest.fixture
def fresh_name():
    """A function returning fresh, never-registered names."""
    return unique_name


@pytest.fixture
def fast_switching():
    """Switch threads as often as CPython allows, so races show up."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(old)
