"""Every view of `python -m stride_weave` prints whatever the registry
holds: hierarchies thousands of categories deep (no view recurses), and
names and class names full of control characters (no view writes one; every
text view escapes them as display_name does, JSON with its own escapes).
The command's str arguments are read once, as exact strs."""
import json
import os
import pprint
import re
import shutil
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from support import assert_exited, child_report, new_class, run_python
from support.flat import flatten, json_tokens, literal_tokens
from support.hostile import tripwire
from stride_weave import _cli, interop
from stride_weave.dtypes import CompoundDType, DType, DTypeCategory, SimpleDType

# ---- deep registries ---------------------------------------------------------------

# In a fresh interpreter: a chain of `depth` categories under Any, a simple
# dtype at its bottom, a compound and a block-scaled dtype of it, a block-
# scaled dtype of many levels, and an instance of a class with a very long
# qualified name. Every view runs; the child reports what it checked.
_DEEP_CHILD = r"""
import contextlib, io, json, sys
from support import new_class
from support.flat import flatten, json_tokens, literal_tokens
from stride_weave import _cli
from stride_weave.dtypes import (BlockScaledDType, CompoundDType, DType, DTypeCategory,
                                 Level, SimpleDType)

depth = int(sys.argv[1])
d = DType.Any
for i in range(depth):
    d = DTypeCategory(f"Deep{i}", supertype=d)
leaf = SimpleDType("DeepLeaf", bits=8, supertype=d)
Pair = new_class("Pair", (CompoundDType,), {"abstract": False})
pair = Pair("DeepPair", supertype=d, simple_types=[leaf, leaf])
block = BlockScaledDType("DeepBlock", element=leaf, levels=[Level(DType.E8M0, 32)])
wide = BlockScaledDType("WideBlock", element=DType.E2M1, levels=[Level(DType.E8M0, 2)] * 500)
Long = new_class("Long", (SimpleDType,), {"abstract": False},
                 {"__qualname__": "Outer." * 20000 + "Long"})
long_ = Long("LongQualname", bits=8, supertype=d)

def run(*args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = _cli.main(list(args))
    assert status == 0, (args, status)
    return out.getvalue()

report = {}
registered = DType.registered()
for args in ([], ["--ascii"], ["--mappings"]):
    lines = run(*args).splitlines()
    at = [line for line in lines if "DeepLeaf  simple, 8 bits" in line]
    report["tree " + " ".join(args)] = (len(at) == 1 and at[0].index("DeepLeaf") == 4 * (depth + 1)
                                       and len(lines) == len(registered) + 2)
doc = json.loads(run("--json"))
report["--json"] = [r["name"] for r in doc["descriptors"]] == [x.name for x in registered]
dot = run("--dot").splitlines()
report["--dot"] = (sum(" [shape=" in line for line in dot) == len(registered)
                   and f'    "Deep{depth - 1}" -> "DeepLeaf";' in dot)
for x in (leaf, pair, block, wide, long_):
    lines = run("--name", x.name).splitlines()
    structure = "\n".join(line[4:] for line in lines[4:])
    report["--name " + x.name] = (
        lines[0].startswith(x.name + "  ") and lines[3] == "  structure:"
        and literal_tokens(structure) == flatten(x.structure())
        and max(len(line) for line in lines[4:]) < 4 + _cli.MAX_INDENT_LEVEL + 80)
    record = _cli.descriptor_data(x, DType)
    record["supertypes"] = [c.name for c in x.supertypes()]
    record["structure"] = x.structure()
    text = run("--name", x.name, "--json")
    report["--name --json " + x.name] = (json_tokens(text) == flatten(record)
                                         and text.isascii())
report["class line"] = run("--name", "LongQualname").splitlines()[1] == (
    "  class:      " + "Outer." * 20000 + "Long (extension)")
print(json.dumps(report))
"""


def test_every_view_prints_a_hierarchy_thousands_of_categories_deep():
    report = child_report(_DEEP_CHILD, "3000", timeout=600)
    failed = [view for view, ok in report.items() if ok is not True]
    assert failed == [], failed
    assert len(report) == 16


# ---- control characters ----------------------------------------------------------------

_CONTROL_NAMES = ["Esc\x1b[31mRed", "Bell\x07", "Del\x7f", "Csi\x9b2J", "Line\u2028Sep",
                  "Tab\there", "Null\x00", "Sur\ud800", "Osc\x1b]0;title\x07"]
_EVIL_QUALNAME = "Evil\x1b]0;pwned\x07.<locals>.Cls\x1b[2J"
_EVIL_NAME = "Evil\x1b[2J\x07Cls"


def _printable_lines(text):
    """No character but printable ones and line feeds."""
    return all(c.isprintable() for c in text.replace("\n", ""))


def _unquote_dot(token):
    body = token[1:-1]
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "r": "\r"}.get(m.group(1), m.group(1)), body)


@pytest.mark.fresh_interpreter
def test_no_view_writes_a_control_character_and_all_escape_alike(capsys):
    made = [SimpleDType(name, bits=8, supertype=DType.Floating) for name in _CONTROL_NAMES]
    category = DTypeCategory("Cat\x1b[0m", supertype=DType.Any)
    Evil = new_class("Evil", (SimpleDType,), {"abstract": False},
                     {"__qualname__": _EVIL_QUALNAME})
    Evil.__name__ = _EVIL_NAME
    carrier = Evil("ClassCarrier", bits=8, supertype=category)
    Pair = new_class("Pair", (CompoundDType,), {"abstract": False})
    pair = Pair("Pair\x1b", supertype=category, simple_types=made[:2])
    names = _CONTROL_NAMES + [category.name, pair.name]

    def run(*args):
        assert _cli.main(list(args)) == 0
        return capsys.readouterr().out

    for args in ([], ["--ascii"], ["--mappings"]):
        out = run(*args)
        assert _printable_lines(out), args
        for name in names:
            shown = _cli.display_name(name, ascii_only="--ascii" in args)
            assert any(line.split("── ")[-1].split("-- ")[-1].startswith(shown + "  ")
                       for line in out.splitlines()), (args, shown)
        assert f"[{_cli.display_name(_EVIL_NAME)}, extension]" in out

    out = run("--json")
    assert out.isascii() and _printable_lines(out)
    records = {r["name"]: r for r in json.loads(out)["descriptors"]}
    assert set(names) <= set(records) and records["ClassCarrier"]["class"] == _EVIL_NAME

    out = run("--dot")
    assert _printable_lines(out)
    out.encode("utf-8")
    labels = dict(re.findall(r'^    ("(?:[^"\\]|\\.)*") \[shape=\w+, label=("(?:[^"\\]|\\.)*")\];$',
                             out, re.M))
    for name in names:
        label = _unquote_dot(labels[_dot_quoted(_cli.dot_id_text(name))]).replace("&amp;", "&")
        assert label.split("\n")[0] == _cli.display_name(name), (name, label)
    assert _unquote_dot(labels['"ClassCarrier"']).split("\n")[1].endswith(
        f"[{_cli.display_name(_EVIL_NAME)}, extension]")

    for name in names + ["ClassCarrier"]:
        lines = run("--name", name).splitlines()
        assert _printable_lines("\n".join(lines)), name
        assert lines[0].startswith(_cli.display_name(name) + "  ")
        out = run("--name", name, "--json")
        assert out.isascii() and _printable_lines(out)
        assert json.loads(out)["name"] == name
    assert run("--name", "ClassCarrier").splitlines()[1] == (
        f"  class:      {_cli.display_name(_EVIL_QUALNAME)} (extension)")
    # one escape for ESC everywhere: Python's, as repr writes it
    assert "\\x1b" in _cli.display_name(_EVIL_QUALNAME) and "\\x1b" in _cli.dot_id_text(names[0])


_CONTROL_MODULE = f"""
from stride_weave.dtypes import DType, DTypeCategory, SimpleDType
for name in {_CONTROL_NAMES!r} + ['q"uo\\\\te', 'a&amp;b', 'new\\nline']:
    SimpleDType(name, bits=8, supertype=DTypeCategory("Cat" + name, supertype=DType.Any))
"""


def test_dot_of_control_character_names_is_accepted_by_graphviz(tmp_path):
    dot = shutil.which("dot")
    if dot is None:
        pytest.skip("Graphviz 'dot' is not installed: the DOT syntax is checked "
                    "by the parser tests only")
    (tmp_path / "ctlnames.py").write_text(_CONTROL_MODULE, encoding="utf-8")
    proc = run_python(["-m", "stride_weave", "--import", "ctlnames", "--dot"], cwd=tmp_path,
                      env=dict(os.environ, PYTHONIOENCODING="utf-8"))
    assert_exited(proc)
    assert _printable_lines(proc.stdout)
    laid_out = subprocess.run([dot, "-Tplain"], input=proc.stdout, capture_output=True,
                              text=True, encoding="utf-8", timeout=120)
    assert laid_out.returncode == 0 and laid_out.stderr == "", laid_out.stderr
    nodes = [line for line in laid_out.stdout.splitlines() if line.startswith("node ")]
    assert len(nodes) == proc.stdout.count(" [shape=")
    for name in _CONTROL_NAMES:
        assert f'"{_cli.dot_id_text(name)}"'.replace("\\", "\\\\") in laid_out.stdout, name


def _dot_quoted(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def test_dot_ids_escape_every_unprintable_character_one_to_one():
    # each name, and the name that spells its escapes out literally
    names = set(_CONTROL_NAMES) | {ascii(n)[1:-1] for n in _CONTROL_NAMES} | {
        "a\\b", "a\\\\b", "plain", "two words", "q\"uote"}
    ids = {_cli.dot_id_text(name) for name in names}
    assert len(ids) == len(names)
    assert all(i.isprintable() for i in ids)
    assert _cli.dot_id_text("plain") == "plain" and _cli.dot_id_text("two words") == "two words"


def test_a_mapping_name_cannot_carry_a_control_character():
    d = SimpleDType(f"CtlMap_{id(object())}", bits=8, supertype=DType.Floating)
    for name in ("float8\x1b[2J", "bell\x07", "two words", ""):
        with pytest.raises(ValueError, match="expected a non-empty name of printable ASCII"):
            interop.register_mapping(d, torch=name)
    assert interop.mapping(d) == interop.Mapping()
    assert _cli.mappings_text(d, ascii_only=True) == "  -> no foreign equivalents"


# ---- the command's str arguments -----------------------------------------------------------

def test_the_commands_arguments_are_read_once_as_exact_strs(capsys):
    argv = [tripwire(arg) for arg in ("--name", "Float32", "--json")]
    prog, prog_calls = tripwire("stride-weave")
    assert _cli.main([arg for arg, _ in argv], prog=prog) == 0
    assert json.loads(capsys.readouterr().out)["name"] == "Float32"
    name, name_calls = tripwire("two words\x1b")
    assert _cli.display_name(name) == "'two words\\x1b'"
    assert _cli.dot_id_text(name) == "two words\\x1b"
    assert [calls for _, calls in argv] == [[], [], []]
    assert prog_calls == [] and name_calls == []


@pytest.mark.parametrize("bad", [3, b"--json", None])
def test_a_non_str_argument_is_a_type_error_naming_it(bad):
    with pytest.raises(TypeError, match="each argument must be a str, got"):
        _cli.main(["--json", bad])
    with pytest.raises(TypeError, match="name must be a str"):
        _cli.display_name(bad)


# ---- the iterative printers are the standard ones ----------------------------------------

_scalars = st.one_of(st.text(max_size=30), st.integers(), st.booleans(), st.none(),
                     st.floats(allow_nan=False))
_nested = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=5), st.lists(inner, max_size=5).map(tuple)), max_leaves=60)


@given(value=_nested, width=st.sampled_from([8, 20, 40, 76, 120]))
def test_the_structure_printer_is_pprint(value, width):
    assert _cli.pformat_structure(value, width=width) == pprint.pformat(value, width=width)


@given(value=st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=5),
    st.dictionaries(st.text(max_size=8), inner, max_size=5)), max_leaves=60))
def test_the_json_printer_is_json_dumps(value):
    assert _cli.json_text(value) == json.dumps(value, indent=2)


@pytest.mark.parametrize("deep", [False, True], ids=["within_the_cap", "far_beyond_it"])
def test_nesting_stops_being_indented_at_the_cap(deep):
    levels = 5000 if deep else _cli.MAX_INDENT_LEVEL - 1
    value = "leaf"
    for i in range(levels):
        value = ("level", value, i)
    text = _cli.pformat_structure(value)
    assert literal_tokens(text) == flatten(value)
    document = _cli.json_text(value)
    assert json_tokens(document) == flatten(value)
    cap = _cli.MAX_INDENT_LEVEL
    assert max(len(line) - len(line.lstrip(" ")) for line in text.splitlines()) <= cap
    assert max(len(line) - len(line.lstrip(" ")) for line in document.splitlines()) <= 2 * cap
    if levels < cap:
        assert text == pprint.pformat(value, width=76)
        assert document == json.dumps(value, indent=2)
