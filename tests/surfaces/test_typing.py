"""Typing (PEP 561): the stubs match the built extension, and a realistic
example type-checks under ``mypy --strict`` and runs.

The mypy-based checks run in subprocesses (mypy is an optional test
dependency) and are skipped with a reason when mypy is not installed. They
check the *installed* package, like the rest of the suite: stubtest imports
``stride_weave._dtypes`` and mypy resolves ``stride_weave`` through the
interpreter's site-packages, which needs the shipped ``py.typed``.
"""
import importlib.util
import os
import pathlib

import pytest

from support import run_python

import stride_weave

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "typed_usage.py"
ALLOWLIST = ROOT / "stubtest-allowlist.txt"

requires_mypy = pytest.mark.skipif(
    importlib.util.find_spec("mypy") is None,
    reason="mypy is not installed (pip install mypy): stubtest and "
    "mypy --strict checks skipped",
)


def _run(args, tmp_path, timeout=600):
    """Run ``python *args`` in tmp_path, so any mypy cache stays out of the
    work tree (stubtest ignores MYPY_CACHE_DIR and writes ./.mypy_cache)."""
    env = dict(os.environ)
    env["MYPY_CACHE_DIR"] = str(tmp_path / ".mypy_cache")
    env.pop("MYPYPATH", None)
    return run_python(args, cwd=tmp_path, env=env, timeout=timeout)


def test_stubs_and_marker_are_installed():
    """py.typed and the stubs ship inside the installed package."""
    package = pathlib.Path(stride_weave.__file__).resolve().parent
    for name in ("py.typed", "_dtypes.pyi", "dtypes.pyi", "_typing.py"):
        assert (package / name).is_file(), f"{name} missing from {package}"


def test_example_runs(tmp_path):
    """The typed example is also a working program."""
    result = _run([str(EXAMPLE)], tmp_path, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "rules ok" in result.stdout


@requires_mypy
def test_stubtest_passes(tmp_path):
    """python -m mypy.stubtest finds no difference between stubs and runtime."""
    args = ["-m", "mypy.stubtest", "stride_weave._dtypes", "stride_weave.dtypes"]
    if ALLOWLIST.exists():
        args += ["--allowlist", str(ALLOWLIST)]
    result = _run(args, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


@requires_mypy
def test_example_passes_mypy_strict(tmp_path):
    """examples/typed_usage.py type-checks under mypy --strict."""
    result = _run(
        ["-m", "mypy", "--strict", "--no-error-summary", str(EXAMPLE)], tmp_path
    )
    assert result.returncode == 0, result.stdout + result.stderr


@requires_mypy
def test_mypy_rejects_misuse(tmp_path):
    """The stubs are precise: typical mistakes are type errors."""
    bad = tmp_path / "misuse.py"
    bad.write_text(
        "from stride_weave.dtypes import DType, DTypeCategory, SimpleDType\n"
        "DType.Float32.bits = 3\n"
        "SimpleDType('x', bits=8)\n"
        "DTypeCategory('x', DType.Any)\n"
        "DTypeCategory('x', opaque_storage=True)\n"
        "DType.Float32.is_subtype_of(3)\n"
        "x: SimpleDType = DType.from_name('Float32')\n"
        "from stride_weave.dtypes import Level\n"
        "Level(DType.E4M3, [16, 16])\n"
        "b: int = Level(DType.E4M3, (16, 16)).block\n"
        "s: tuple[int, ...] = DType.MXFP4.block_shape\n"
    )
    result = _run(["-m", "mypy", "--strict", str(bad)], tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    for line in (2, 3, 4, 5, 6, 7, 9, 10, 11):
        assert f"misuse.py:{line}: error" in result.stdout, result.stdout


def _api_page_example(tmp_path):
    """The example of the Typing section of docs/api.md, written to a file."""
    page = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    section = page.split("\n## Typing\n", 1)[1]
    code = section.split("```python\n", 1)[1].split("\n```", 1)[0]
    path = tmp_path / "api_typing_example.py"
    path.write_text(code + "\n", encoding="utf-8")
    return path


def test_api_page_typing_example_runs(tmp_path):
    result = _run([str(_api_page_example(tmp_path))], tmp_path, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


@requires_mypy
def test_api_page_typing_example_passes_mypy_strict(tmp_path):
    example = _api_page_example(tmp_path)
    result = _run(["-m", "mypy", "--strict", "--no-error-summary", str(example)], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
