"""`python -m stride_weave --promotions` prints the default promotion lattice:
as a tree, as JSON (--json) and as Graphviz source (--dot), checked against
the lattice itself; names that would break a line or a DOT string are
escaped as in the other views; the documentation's figure is this command's
drawing."""
import importlib.util
import json
import os
import pathlib
import re
import shutil
import subprocess

import pytest

from support import run_python

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIGURE_SCRIPT = ROOT / "docs" / "figures" / "promotions.py"


def run_module(*args, cwd=None):
    """`python -m stride_weave *args` in a fresh interpreter."""
    proc = run_python(["-m", "stride_weave", *args],
                      env=dict(os.environ, PYTHONIOENCODING="utf-8"), cwd=cwd)
    return proc


def run_ok(*args, cwd=None):
    proc = run_module(*args, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


PACK = ("--import", "stride_weave.formats")


def test_tree_of_the_builtins():
    out = run_ok("--promotions")
    assert out.splitlines()[:8] == [
        "Default promotion lattice: 5 dtypes, 3 edges; under each dtype, the "
        "dtypes it promotes to directly",
        "",
        "Bool",
        "└── Int8",
        "    └── Int32",
        "Float32",
        "└── Float64",
        "",
    ]
    assert "No implicit promotion:" in out
    assert "  E4M3  a floating-point format narrower than 16 bits" in out
    assert "  NVFP4  a block-scaled format" in out


def test_tree_with_the_pack_marks_dtypes_reached_again():
    out = run_ok("--promotions", "--ascii", *PACK)
    lines = out.splitlines()
    assert lines[0].startswith("Default promotion lattice: 15 dtypes, 17 edges")
    assert "`-- UInt8" in lines
    assert "    |-- Int16  (see above)" in lines
    assert "BFloat16" in lines and "`-- Float32  (see above)" in lines
    assert "  Int4  an integer format narrower than 8 bits: a low-precision value " \
           "needs a scale, so mixing it is explicit" in lines
    assert "  E5M2FNUZ  an fnuz format: it has no negative zero and its NaN is the " \
           "sign bit alone" in lines


def test_json_is_the_lattice():
    data = json.loads(run_ok("--promotions", "--json", *PACK))
    from stride_weave.dtypes import DType, PromotionError, promote_types
    import stride_weave.formats  # noqa: F401

    assert data["format_version"] == 1
    assert len(data["dtypes"]) == 15 and data["dtypes"][0] == "Bool"
    assert ["Int8", "Int16"] in data["edges"] and ["UInt8", "Int16"] in data["edges"]
    assert len(data["edges"]) == 17
    by_pair = {(a, b): j for a, b, j in data["joins"]}
    for i, a in enumerate(data["dtypes"]):
        for b in data["dtypes"][i + 1:]:
            try:
                expected = promote_types(DType.from_name(a), DType.from_name(b)).name
            except PromotionError:
                expected = None
            assert by_pair.get((a, b)) == expected, (a, b)
    excluded = {entry["name"]: entry["reason"] for entry in data["no_promotion"]}
    assert set(excluded) == {"E8M0", "E5M2", "E4M3", "E3M2", "E2M3", "E2M1",
                             "MXFP8_E4M3", "MXFP8_E5M2", "MXFP6_E3M2", "MXFP6_E2M3",
                             "MXFP4", "MXINT8", "NVFP4", "E4M3FNUZ", "E5M2FNUZ",
                             "Int4", "UInt4"}


def _dot_edges(text):
    return re.findall(r'^    "([^"]+)" -> "([^"]+)";$', text, flags=re.M)


def test_dot_has_the_covers():
    text = run_ok("--promotions", "--dot", *PACK)
    assert text.startswith("digraph stride_weave_promotions {")
    edges = _dot_edges(text)
    assert ("Bool", "Int8") in edges and ("Float64", "Complex128") in edges
    assert len(edges) == 17
    assert "subgraph cluster_no_promotion" in text


def test_dot_is_accepted_by_graphviz():
    dot = shutil.which("dot")
    if dot is None:
        pytest.skip("Graphviz 'dot' is not installed")
    laid_out = subprocess.run([dot, "-Tplain"], input=run_ok("--promotions", "--dot", *PACK),
                              capture_output=True, text=True, timeout=120)
    assert laid_out.returncode == 0 and laid_out.stderr == "", laid_out.stderr
    nodes = [line for line in laid_out.stdout.splitlines() if line.startswith("node ")]
    assert len(nodes) == 15 + 17


STRANGE_MODULE = r'''
from stride_weave.dtypes import DType, SimpleDType, declare_promotion
from stride_weave.numerics import NumericInfo, register_numeric_info

WIDE = SimpleDType('Wide\n"64"\x1b[31m', bits=64, supertype=DType.Integer)
register_numeric_info(WIDE, NumericInfo.integer(64, signed=True))
declare_promotion(DType.Int32, WIDE)
TINY = SimpleDType("Tiny\tone", bits=2, supertype=DType.Integer)
register_numeric_info(TINY, NumericInfo.integer(2, signed=True))
'''


@pytest.fixture
def strange(tmp_path):
    (tmp_path / "strange.py").write_text(STRANGE_MODULE, encoding="utf-8")
    return tmp_path


def test_names_are_escaped_in_every_form(strange):
    wide, tiny = 'Wide\n"64"\x1b[31m', "Tiny\tone"
    tree = run_ok("--promotions", "--import", "strange", cwd=strange)
    assert f"        └── {wide!r}" in tree.splitlines()
    assert f"  {tiny!r}  an integer format narrower than 8 bits" in tree
    data = json.loads(run_ok("--promotions", "--json", "--import", "strange", cwd=strange))
    assert wide in data["dtypes"] and ["Int32", wide] in data["edges"]
    dot = run_ok("--promotions", "--dot", "--import", "strange", cwd=strange)
    # DOT IDs escape unprintable characters as the other views do: no raw
    # ESC reaches the terminal or Graphviz.
    assert '"Int32" -> "Wide\\\\n\\"64\\"\\\\x1b[31m";' in dot
    assert "\x1b" not in dot and "\t" not in dot
    if shutil.which("dot"):
        laid_out = subprocess.run(["dot", "-Tplain"], input=dot, capture_output=True,
                                  text=True, timeout=120)
        assert laid_out.returncode == 0, laid_out.stderr


@pytest.mark.parametrize("args", [["--promotions", "--name", "Int8"],
                                  ["--promotions", "--mappings"],
                                  ["--promotions", "--json", "--dot"],
                                  ["--promotions", "--json", "--ascii"]])
def test_combinations_that_are_usage_errors(args):
    proc = run_module(*args)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "error:" in proc.stderr


def test_help_names_the_view():
    assert "--promotions" in run_ok("--help")


def test_the_documentation_figure_is_this_commands_drawing():
    spec = importlib.util.spec_from_file_location("_promotions_figure", FIGURE_SCRIPT)
    figure = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(figure)
    assert figure.DOT.read_text(encoding="utf-8") == figure.dot_source()
    svg = figure.SVG.read_text(encoding="utf-8")
    for name in ("Bool", "Complex128", "E4M3FNUZ", "no implicit promotion"):
        assert f">{name}</text>" in svg
