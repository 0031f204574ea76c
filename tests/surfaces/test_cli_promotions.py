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
                             "Int4", "UInt4", "NVFP4_16x16", "MXFP8_E4M3_32x32",
                             "FP8_E4M3_128x128", "FP8_E4M3_1x128"}


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
    assert len(nodes) == 15 + 17 + 4   # lattice, no promotion (4 block-scaled of the pack)


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


# ---- --lattice MODULE:ATTRIBUTE and --promote A B ---------------------------------

FRAMEWORK = '''\
import stride_weave.formats as F
from stride_weave.dtypes import DType as D, default_lattice

class Rules:
    LATTICE = default_lattice().extend(
        [(F.Int64, F.Float16), (F.Int64, F.BFloat16)], lossy=True,
        scalar_defaults={"int": F.Int64, "float": D.Float32},
        mixed_scalars=True, undefined=[(F.Int64, F.UInt64)])

NOT_A_LATTICE = {"Int8": "Int16"}
'''


@pytest.fixture
def framework(tmp_path):
    (tmp_path / "myfw.py").write_text(FRAMEWORK, encoding="utf-8")
    (tmp_path / "badfw.py").write_text("raise RuntimeError('boom')\n", encoding="utf-8")
    return tmp_path


def test_the_tree_of_a_lattice_of_ones_own(framework):
    out = run_ok("--promotions", "--ascii", "--lattice", "myfw:Rules.LATTICE",
                 cwd=framework)
    lines = out.splitlines()
    assert lines[0] == ("Promotion lattice myfw:Rules.LATTICE: 15 dtypes, 19 edges; "
                        "under each dtype, the dtypes it promotes to directly")
    assert "|           `-- Int64" in lines and "|               |-- Float16" in lines
    assert "No edge in this lattice:" in lines and "  E4M3" in lines
    assert lines[-5:] == [
        "",
        "Scalar defaults: int Int64, float Float32",
        "Mixed scalars: a Python scalar of a kind above the operands' promotes them "
        "to their join with its kind's default",
        "Kept undefined:",
        "  Int64 and UInt64",
    ]


def test_the_json_of_a_lattice_of_ones_own(framework):
    data = json.loads(run_ok("--promotions", "--json", "--lattice", "myfw:Rules.LATTICE",
                             cwd=framework))
    assert data["is_default"] is False and data["mixed_scalars"] is True
    assert data["scalar_defaults"] == {"int": "Int64", "float": "Float32"}
    assert data["undefined"] == [["Int64", "UInt64"]]
    assert ["Int64", "Float16"] in data["edges"] and ["Int8", "Float16", "Float16"] in [
        j for j in data["joins"] if j[:2] == ["Int8", "Float16"]]
    assert {e["reason"] for e in data["no_promotion"]} == {"it has no edge in this lattice"}
    default = json.loads(run_ok("--promotions", "--json"))
    assert default["is_default"] is True and default["scalar_defaults"] == {}
    assert default["mixed_scalars"] is False and default["undefined"] == []


def test_one_pair(framework):
    assert run_ok("--promote", "Int8", "Int32") == "Int32\n"
    assert run_ok("--promote", "Int8", "Float16", "--lattice", "myfw:Rules.LATTICE",
                  cwd=framework) == "Float16\n"
    proc = run_module("--promote", "Int64", "UInt64", "--lattice", "myfw:Rules.LATTICE",
                      cwd=framework)
    assert proc.returncode == 4 and proc.stderr == ""
    assert proc.stdout == (
        "no promotion: PromotionLattice.promote_types: no promotion between Int64 and "
        "UInt64: no dtype is above both in this lattice; cast one or both explicitly "
        "to the dtype to compute in\n")
    data = json.loads(run_ok("--promote", "Int8", "Int32", "--json"))
    assert data == {"format_version": 1, "lattice": "default", "a": "Int8",
                    "b": "Int32", "join": "Int32", "error": None}
    proc = run_module("--promote", "Int8", "Float32", "--json")
    data = json.loads(proc.stdout)
    assert proc.returncode == 4 and data["join"] is None
    assert data["error"].startswith("promote_types: no promotion between Int8 and Float32")


@pytest.mark.parametrize("args, message", [
    (["--promotions", "--lattice", "myfw"],
     "--lattice: expected MODULE:ATTRIBUTE, a dotted module name and an attribute of "
     "it such as 'myframework.dtypes:LATTICE', got 'myfw'"),
    (["--promotions", "--lattice", "my-fw:X"], "--lattice: expected MODULE:ATTRIBUTE"),
    (["--promotions", "--lattice", "nosuchfw:X"],
     "--lattice nosuchfw:X: no module named 'nosuchfw' on sys.path (the current "
     "directory included)"),
    (["--promotions", "--lattice", "myfw:Rules.NOPE"],
     "--lattice myfw:Rules.NOPE: myfw.Rules has no attribute 'NOPE'"),
    (["--promotions", "--lattice", "myfw:NOT_A_LATTICE"],
     "--lattice myfw:NOT_A_LATTICE: expected a PromotionLattice, got an object of "
     "type dict"),
    (["--lattice", "myfw:Rules.LATTICE"],
     "--lattice names the lattice that --promotions shows or --promote asks: give "
     "one of them"),
    (["--promote", "Int8", "Flaot32"],
     "--promote: no descriptor is registered under the name 'Flaot32'; did you mean "
     "'Float32'?"),
    (["--promote", "Int8", "Int32", "--promotions"],
     "--promote answers for one pair: it does not combine with --promotions, --name, "
     "--mappings or --dot"),
])
def test_lattice_and_promote_usage_errors_name_the_option(framework, args, message):
    proc = run_module(*args, cwd=framework)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines()[-1].startswith(
        "python -m stride_weave: error: " + message), proc.stderr


def test_a_lattice_module_that_raises_ends_with_status_3(framework):
    proc = run_module("--promotions", "--lattice", "badfw:X", cwd=framework)
    assert proc.returncode == 3 and proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert lines[0] == ("python -m stride_weave: error: --lattice badfw:X: the module "
                        "raised an exception while it was imported (run with "
                        "--traceback for the full traceback):")
    assert lines[-1] == "RuntimeError: boom"
    full = run_module("--promotions", "--lattice", "badfw:X", "--traceback", cwd=framework)
    assert full.returncode == 3 and "Traceback (most recent call last):" in full.stderr
