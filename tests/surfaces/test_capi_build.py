"""The build instructions of docs/c-api.md work for an unpublished package.

stride-weave is not on a package index, so a C extension whose
``pyproject.toml`` names it as a build requirement needs one of the two
ways the page gives: a local wheel found with ``--find-links``, or no build
isolation.  Each is run here as the page writes it -- its ``sh`` block,
command by command, with ``/path/to/stride-weave`` a copy of this source
tree, ``./mymod`` the documented consumer (examples/c_api/ plus the page's
``pyproject.toml``) and ``python`` a fresh virtual environment -- and the
installed consumer must then work in that environment, against the
stride-weave installed there.

Slow (each way builds stride-weave and the consumer, and creates a virtual
environment); skipped only without a C compiler.
"""
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys

import pytest

from support import capi as _capi

ROOT = _capi.ROOT
DOCS = ROOT / "docs" / "c-api.md"
PLACEHOLDER_SOURCE = "/path/to/stride-weave"
PLACEHOLDER_PROJECT = "./mymod"
# Build artefacts left out of the copy of the source tree (as
# scripts/build-wheels does), so the wheel is built from sources alone.
ARTEFACTS = shutil.ignore_patterns(
    ".git", "build", "dist", "*.egg-info", "*.so", "__pycache__", ".venv*",
    "_build", ".hypothesis", ".pytest_cache", ".mypy_cache")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(_capi.compiler() is None, reason=_capi.no_compiler_reason()),
]


def _block(language, containing):
    """The one ```language block of the page that contains `containing`."""
    text = DOCS.read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```%s\n(.*?)```" % language, text, flags=re.S)
              if containing in b]
    assert len(blocks) == 1, (language, containing, blocks)
    # The blocks sit in a list item: drop its indentation.
    lines = blocks[0].splitlines()
    indent = min(len(line) - len(line.lstrip()) for line in lines if line.strip())
    return "\n".join(line[indent:] for line in lines) + "\n"


def _env():
    """The environment of the commands: this one, without anything that
    would make the new environment import stride_weave from elsewhere."""
    env = dict(os.environ)
    for name in ("PYTHONPATH", "PYTHONHOME", "PYTHONWARNINGS", "PYTHONSTARTUP",
                 "VIRTUAL_ENV", "PYTHONNOUSERSITE"):
        env.pop(name, None)
    env["PYTHONNOUSERSITE"] = "1"
    return env


def _run(argv, cwd, timeout=900):
    proc = subprocess.run(argv, cwd=cwd, env=_env(), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, (
        f"{shlex.join(map(str, argv))} exited with {proc.returncode}\n"
        f"--- stdout:\n{proc.stdout[-6000:]}\n--- stderr:\n{proc.stderr[-6000:]}")
    return proc.stdout


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """A copy of the source tree and the documented consumer project."""
    base = tmp_path_factory.mktemp("capi-build")
    source = base / "stride-weave"
    shutil.copytree(ROOT, source, ignore=ARTEFACTS)
    project = base / "mymod"
    project.mkdir()
    shutil.copy(_capi.EXAMPLE_C, project)
    shutil.copy(_capi.EXAMPLE_SETUP, project)
    (project / "pyproject.toml").write_text(
        _block("toml", "stride-weave"), encoding="utf-8")
    return base, source, project


def _follow(block, workspace, name):
    """Run the commands of `block` in a new virtual environment `name`:
    each line a command, `python` that environment's interpreter; return
    the interpreter."""
    base, source, project = workspace
    venv = base / name
    _run([sys.executable, "-m", "venv", str(venv)], cwd=base, timeout=300)
    python = venv / "bin" / "python"
    for line in block.splitlines():
        words = shlex.split(line, comments=True)
        if not words:
            continue
        assert words[0] == "python", line
        words = [str(python)] + [
            str(source) if w == PLACEHOLDER_SOURCE
            else str(project) if w == PLACEHOLDER_PROJECT else w
            for w in words[1:]]
        _run(words, cwd=base)
    return python


def _check(python, venv):
    """The consumer works in the new environment, against the stride-weave
    installed there (not this process's)."""
    out = _run([str(python), "-c", (
        "import json, stride_weave, swcheck\n"
        "from stride_weave.dtypes import DType\n"
        "print(json.dumps({'package': stride_weave.__file__,\n"
        "                  'swcheck': swcheck.__file__,\n"
        "                  'planes': swcheck.plane_bits(DType.NVFP4),\n"
        "                  'common': swcheck.common_dtype(DType.Int8, DType.Float32)}))\n")],
        cwd=venv.parent)
    report = json.loads(out.strip().splitlines()[-1])
    assert report["package"].startswith(str(venv)), report
    assert report["swcheck"].startswith(str(venv)), report
    assert report["planes"] == [4, 8, 32] and report["common"] is None


def test_the_local_wheel_way(workspace):
    block = _block("sh", "--find-links dist")
    python = _follow(block, workspace, "venv-find-links")
    base = workspace[0]
    assert list((base / "dist").glob("stride_weave-*.whl")), "no wheel in dist/"
    _check(python, base / "venv-find-links")


def test_the_no_build_isolation_way(workspace):
    block = _block("sh", "--no-build-isolation")
    python = _follow(block, workspace, "venv-no-isolation")
    _check(python, workspace[0] / "venv-no-isolation")
