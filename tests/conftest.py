"""Shared helpers for the stride-weave test suite.

Registered names live for the whole process (there is no unregistration), so
every test that registers something takes a fresh name from `unique_name`.
"""
import contextlib
import itertools
import os
import sys

import pytest

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
    with registry_unchanged():
        with pytest.raises(exc, match=match) as info:
            yield info


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
