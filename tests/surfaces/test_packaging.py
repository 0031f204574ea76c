"""What the wheels and the sdist contain (tests/support/distcheck.py).

scripts/build-wheels runs the checker on every wheel and sdist it builds,
so CI fails when a wheel ships a C source, a private header or debug
information, or the sdist loses a source.  These tests prove the checker
can fail: each problem, planted in a small artefact made here, is reported,
and a clean artefact passes.  The debug-information check compiles two
shared objects (one with -g, one with -g0) and skips, with the reason,
when there is no C compiler.
"""
import pathlib
import subprocess
import sys
import tarfile
import zipfile

import pytest

from support import capi as _capi
from support import distcheck
from stride_weave import _dtypes

ROOT = _capi.ROOT
EXTENSION = pathlib.Path(_dtypes.__file__)
HEADER = "stride_weave/include/stride_weave/dtypes.h"


def make_wheel(path, files, so_bytes):
    """A wheel at `path` with the given {name: text} files, the dist-info and
    one compiled extension holding `so_bytes`."""
    with zipfile.ZipFile(path, "w") as whl:
        for name, text in files.items():
            whl.writestr(name, text)
        whl.writestr("stride_weave/_dtypes.cpython-311-x86_64-linux-gnu.so", so_bytes)
        whl.writestr("stride_weave-0.1.0.dist-info/RECORD", "")
    return path


def shared_object(tmp_path, debug):
    cc = _capi.compiler()
    if cc is None:
        pytest.skip(_capi.no_compiler_reason())
    src = tmp_path / "tiny.c"
    src.write_text("int sw_tiny(int x) { return x + 1; }\n")
    out = tmp_path / ("tiny-g.so" if debug else "tiny-g0.so")
    subprocess.run([cc, "-shared", "-fPIC", "-O2", "-g" if debug else "-g0",
                    str(src), "-o", str(out)], check=True, timeout=120)
    return out.read_bytes()


def test_the_extension_is_read_as_elf():
    names = distcheck.elf_section_names(EXTENSION.read_bytes())
    assert ".text" in names and ".dynsym" in names


def test_a_clean_wheel_passes(tmp_path):
    whl = make_wheel(tmp_path / "ok.whl",
                     {"stride_weave/__init__.py": "", HEADER: "/* public */"},
                     EXTENSION.read_bytes())
    problems = distcheck.wheel_problems(whl)
    # The test process's extension may be a debug build (an editable
    # install keeps -g); everything else about this wheel is right.
    assert [p for p in problems if "debug information" not in p] == []


@pytest.mark.parametrize("name, expected", [
    ("stride_weave/_dtypes/attrs.c", "a C source in the wheel"),
    ("stride_weave/_dtypes/compat.h", "a private header in the wheel"),
    ("stride_weave/include/other/x.h", "a private header in the wheel"),
])
def test_private_sources_in_a_wheel_are_reported(tmp_path, name, expected):
    whl = make_wheel(tmp_path / "bad.whl",
                     {HEADER: "", name: "int x;"}, EXTENSION.read_bytes())
    assert f"{name}: {expected}" in distcheck.wheel_problems(whl)


def test_a_wheel_without_the_public_header_is_reported(tmp_path):
    whl = make_wheel(tmp_path / "bad.whl", {}, EXTENSION.read_bytes())
    assert any("public header" in p for p in distcheck.wheel_problems(whl))


def test_a_wheel_with_an_unreadable_extension_is_reported(tmp_path):
    whl = make_wheel(tmp_path / "bad.whl", {HEADER: ""}, b"not an ELF file")
    assert any("cannot read its ELF sections" in p for p in distcheck.wheel_problems(whl))


def test_debug_information_is_reported_and_g0_passes(tmp_path):
    with_debug = make_wheel(tmp_path / "g.whl", {HEADER: ""}, shared_object(tmp_path, True))
    without = make_wheel(tmp_path / "g0.whl", {HEADER: ""}, shared_object(tmp_path, False))
    problems = distcheck.wheel_problems(with_debug)
    assert len(problems) == 1 and ".debug_info" in problems[0], problems
    assert distcheck.wheel_problems(without) == []


def test_an_sdist_missing_a_source_is_reported(tmp_path):
    sources = sorted((ROOT / "src" / "stride_weave" / "_dtypes").glob("*.[ch]"))
    assert sources, "the tests run from a tree without the C sources"
    dropped = sources[0]
    for name, keep in (("full.tar.gz", sources), ("short.tar.gz", sources[1:])):
        with tarfile.open(tmp_path / name, "w:gz") as sdist:
            for path in keep + [ROOT / "include" / "stride_weave" / "dtypes.h"]:
                sdist.add(path, arcname="stride_weave-0.1.0/"
                          + path.relative_to(ROOT).as_posix())
    assert distcheck.sdist_problems(tmp_path / "full.tar.gz", ROOT) == []
    assert distcheck.sdist_problems(tmp_path / "short.tar.gz", ROOT) == [
        f"{dropped.relative_to(ROOT).as_posix()}: missing from the sdist"]


def test_the_command_line_fails_on_a_problem(tmp_path):
    whl = make_wheel(tmp_path / "bad.whl", {HEADER: "", "stride_weave/_dtypes/a.c": ""},
                     EXTENSION.read_bytes())
    result = subprocess.run([sys.executable, distcheck.__file__, "--source", str(ROOT),
                             str(whl)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert "stride_weave/_dtypes/a.c: a C source in the wheel" in result.stdout
