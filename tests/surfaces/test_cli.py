"""`python -m stride_weave.dtypes` prints the registered graph: as a tree
(the default), as JSON (--json) and as Graphviz source (--dot). Every form
lists every registered descriptor, and the output is checked against the
live registry."""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from stride_weave.dtypes import (
    BlockScaledDType,
    CompoundDType,
    DType,
    DTypeCategory,
    Level,
    SimpleDType,
    SymbolicBits,
    Whole,
)
from stride_weave import _cli, interop
from support import assert_exited, run_python

# The built-in graph: name -> (supertype, bits).
BUILTIN_SIMPLE = {
    "Bool": ("Any", 8),
    "Int32": ("Integer", 32),
    "Int8": ("Integer", 8),
    "Float32": ("Floating", 32),
    "Float64": ("Floating", 64),
    "E8M0": ("Floating", 8),
    "E5M2": ("Floating", 8),
    "E4M3": ("Floating", 8),
    "E3M2": ("Floating", 6),
    "E2M3": ("Floating", 6),
    "E2M1": ("Floating", 4),
}
BUILTIN_CATEGORIES = {"Any": None, "Floating": "Any", "Integer": "Any"}
# The built-in block-scaled formats, as printed:
# element plane, each scale plane with its block, bits per element.
BUILTIN_BLOCK_SCALED = {
    "MXFP8_E4M3": "block-scaled, planes E4M3 + E8M0 per 32, 8.25 bits per element",
    "MXFP8_E5M2": "block-scaled, planes E5M2 + E8M0 per 32, 8.25 bits per element",
    "MXFP6_E3M2": "block-scaled, planes E3M2 + E8M0 per 32, 6.25 bits per element",
    "MXFP6_E2M3": "block-scaled, planes E2M3 + E8M0 per 32, 6.25 bits per element",
    "MXFP4": "block-scaled, planes E2M1 + E8M0 per 32, 4.25 bits per element",
    "MXINT8": "block-scaled, planes Int8 + E8M0 per 32, 8.25 bits per element",
    "NVFP4": "block-scaled, planes E2M1 + E4M3 per 16 + Float32 per whole, "
    "4.5 + 32/n bits per element",
}

_UNICODE_PREFIX = re.compile(r"^((?:│   |    |├── |└── )*)")
_ASCII_PREFIX = re.compile(r"^((?:\|   |    |\|-- |`-- )*)")
_LITERAL = re.compile(r"'(?:[^'\\]|\\.)*'" + "|" + r'"(?:[^"\\]|\\.)*"')


def parse_tree(text, ascii_only=False):
    """Parse the tree printed by the CLI.

    Returns ``(first, all)``: ``first`` maps each printed name to
    ``(parent_name_or_None, description)`` of its first line, ``all`` maps it
    to the list of every such pair. A descriptor listed under the
    "(no supertype)" heading has that heading as its parent.
    """
    prefix_re = _ASCII_PREFIX if ascii_only else _UNICODE_PREFIX
    lines = text.splitlines()
    assert lines[0].startswith("stride-weave dtype graph:"), lines[0]
    nodes = {}
    stack = []  # names of the ancestors of the current line, by depth
    for line in lines[1:]:
        if not line.strip():
            continue
        prefix = prefix_re.match(line).group(1)
        assert len(prefix) % 4 == 0, line
        depth = len(prefix) // 4
        rest = line[len(prefix):]
        literal = _LITERAL.match(rest)  # a quoted name may hold spaces
        cut = literal.end() if literal else 0
        name, _, description = rest[cut:].partition("  ")
        name = rest[:cut] + name
        assert depth <= len(stack), f"line skips a level: {line!r}"
        del stack[depth:]
        parent = stack[-1] if stack else None
        nodes.setdefault(name, []).append((parent, description))
        stack.append(name)
    return {name: entries[0] for name, entries in nodes.items()}, nodes


# The graph of a registry that holds an extreme descriptor, in a fresh
# interpreter: the model accepts both, the printed graph does not yet.
_EXTREME_GRAPH = """
import sys
from stride_weave import _cli
from stride_weave.dtypes import DType, DTypeCategory, SimpleDType
if sys.argv[1] == "width":
    SimpleDType("Vast", bits=10 ** 5000, supertype=DType.Floating)
else:
    d = DType.Any
    for i in range(2000):
        d = DTypeCategory(f"Deep{i}", supertype=d)
for args in ([], ["--json"], ["--dot"]):
    assert _cli.main(args) == 0
"""


@pytest.mark.parametrize("extreme", [
    pytest.param("width", id="a_width_beyond_the_int_digit_limit"),
    pytest.param("deep", id="a_hierarchy_deeper_than_the_recursion_limit"),
])
def test_graph_prints_a_registry_holding(extreme):
    proc = run_python(["-c", _EXTREME_GRAPH, extreme])
    assert_exited(proc)


def run_module(*args):
    """Run `python -m stride_weave.dtypes *args` in a fresh interpreter."""
    return run_python(["-m", "stride_weave.dtypes", *args],
                      env=dict(os.environ, PYTHONIOENCODING="utf-8"))


def test_module_prints_every_builtin_under_its_category():
    proc = run_module()
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    nodes, all_nodes = parse_tree(proc.stdout)
    for name, parent in BUILTIN_CATEGORIES.items():
        assert nodes[name] == (parent, "category"), (name, nodes.get(name))
    for name, (parent, bits) in BUILTIN_SIMPLE.items():
        assert nodes[name] == (parent, f"simple, {bits} bits"), (name, nodes.get(name))


def test_module_shows_each_block_scaled_format_with_planes_blocks_and_bits():
    proc = run_module()
    assert proc.returncode == 0, proc.stderr
    nodes, _ = parse_tree(proc.stdout)
    for name, description in BUILTIN_BLOCK_SCALED.items():
        # Block-scaled formats sit under their supertype, DType.Any.
        assert nodes[name] == ("Any", description), (name, nodes.get(name))


def test_module_lists_exactly_the_registered_descriptors():
    proc = run_module()
    assert proc.returncode == 0, proc.stderr
    nodes, all_nodes = parse_tree(proc.stdout)
    # A fresh interpreter has exactly the built-in graph registered, each
    # descriptor printed once.
    assert set(nodes) == (
        set(BUILTIN_CATEGORIES) | set(BUILTIN_SIMPLE) | set(BUILTIN_BLOCK_SCALED)
    )
    assert all(len(entries) == 1 for entries in all_nodes.values())
    assert proc.stdout.splitlines()[0] == (
        f"stride-weave dtype graph: {len(nodes)} registered descriptors "
        f"({len(nodes)} built-in, 0 extension)"
    )


def test_module_help():
    proc = run_module("--help")
    assert proc.returncode == 0, proc.stderr
    assert "usage: python -m stride_weave.dtypes" in proc.stdout
    assert "tree" in proc.stdout


def test_module_rejects_unknown_option():
    proc = run_module("--no-such-option")
    assert proc.returncode == 2
    assert "unrecognized arguments" in proc.stderr


class _PairDType(CompoundDType, abstract=False):
    """A minimal compound extension used by the tests below."""

    def __init__(self, name, planes, supertype=None):
        super().__init__(name, supertype=supertype, simple_types=planes)


@pytest.mark.fresh_interpreter
def test_main_in_process_shows_extensions(capsys, fresh_name):
    cat = DTypeCategory(fresh_name("CliCat"), supertype=DType.Floating)
    nested = SimpleDType(fresh_name("CliNested"), bits=12, supertype=cat)
    f16 = SimpleDType(fresh_name("CliF16"), bits=16, supertype=DType.Floating)
    one = SimpleDType(fresh_name("CliOne"), bits=1, supertype=DType.Integer)
    wide = SimpleDType(fresh_name("CliWide"), bits=2**70, supertype=DType.Any)
    pair = _PairDType(fresh_name("CliPair"), [DType.Float32, f16])
    scaled = _PairDType(fresh_name("CliScaled"), [DType.E2M1], supertype=DType.Floating)
    root = DTypeCategory(fresh_name("CliRoot"))
    # A fresh element keeps this format's structure unique in the process.
    block = BlockScaledDType(
        fresh_name("CliBlock"),
        element=f16,
        levels=[Level(one, 8), Level(DType.E8M0, Whole)],
    )

    assert _cli.main([]) == 0
    out = capsys.readouterr().out
    nodes, all_nodes = parse_tree(out)

    ext = "  [extension]"
    assert nodes[cat.name] == ("Floating", "category" + ext)
    assert nodes[nested.name] == (cat.name, "simple, 12 bits" + ext)
    assert nodes[f16.name] == ("Floating", "simple, 16 bits" + ext)
    assert nodes[one.name] == ("Integer", "simple, 1 bit" + ext)
    assert nodes[wide.name] == ("Any", f"simple, {2**70} bits" + ext)
    assert nodes[pair.name] == (
        "(no supertype)",
        f"compound, 2 planes: Float32, {f16.name}  [_PairDType, extension]",
    )
    assert nodes[scaled.name] == (
        "Floating",
        "compound, 1 plane: E2M1  [_PairDType, extension]",
    )
    assert nodes[root.name] == (None, "category" + ext)
    assert nodes[block.name] == (
        "Any",
        f"block-scaled, planes {f16.name} + {one.name} per 8 + E8M0 per whole, "
        "16.125 + 8/n bits per element" + ext,
    )
    # The built-ins are still where they belong, and every registered
    # descriptor is printed exactly once.
    for name, (parent, bits) in BUILTIN_SIMPLE.items():
        assert nodes[name] == (parent, f"simple, {bits} bits")
    registered = DType.registered()
    printed = sorted(
        name for name, entries in all_nodes.items() for _ in entries
        if name != "(no supertype)"
    )
    assert printed == sorted(_cli.display_name(d.name) for d in registered)
    n = len(registered)
    assert out.splitlines()[0].startswith(f"stride-weave dtype graph: {n} registered")


@pytest.mark.fresh_interpreter
def test_main_ascii_output(capsys, fresh_name):
    f = SimpleDType(fresh_name("CliAscii"), bits=16, supertype=DType.Floating)
    assert _cli.main(["--ascii"]) == 0
    out = capsys.readouterr().out
    assert out.isascii()
    nodes, _ = parse_tree(out, ascii_only=True)
    assert nodes[f.name] == ("Floating", "simple, 16 bits  [extension]")
    assert nodes["Float32"] == ("Floating", "simple, 32 bits")
    assert nodes["Floating"] == ("Any", "category")


@pytest.mark.parametrize(
    "name, shown",
    [("plain_Name-1.x", "plain_Name-1.x"), ("two words", "'two words'"), ("a\nb", "'a\\nb'")],
)
def test_names_that_would_break_a_line_are_quoted(name, shown):
    assert _cli.display_name(name) == shown


def test_closed_output_pipe_is_not_a_traceback():
    """`python -m stride_weave.dtypes | head -1`: the reader goes away early."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # every write to the pipe now fails with EPIPE
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "stride_weave.dtypes"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert proc.returncode == 1
    assert proc.stderr == ""


# --- --json, --dot, and the block-scaled lines of the tree --

_JSON_KEYS = [
    "name", "kind", "class", "builtin", "supertype", "bits", "planes",
    "element", "levels", "bits_per_element", "mappings",
]


def _expected_mappings(d):
    """The "mappings" value --json must give: a simple dtype's declared
    equivalents, field by field from stride_weave.interop."""
    if not d.is_simple():
        return None
    m = interop.mapping(d)
    return {"numpy": m.numpy, "dlpack": None if m.dlpack is None else list(m.dlpack),
            "arrow": m.arrow, "buffer_format": m.buffer_format, "torch": m.torch}


def _kind(d):
    if isinstance(d, BlockScaledDType):
        assert d.is_compound()
        return "block-scaled"
    if d.is_category():
        return "category"
    if d.is_simple():
        return "simple"
    assert d.is_compound()
    return "compound"


def expected_record(d):
    """What --json must say about descriptor d, read from the live object."""
    kind = _kind(d)
    record = {
        "name": d.name,
        "kind": kind,
        "class": type(d).__name__,
        "builtin": getattr(DType, d.name, None) is d,
        "supertype": d.supertype.name if d.supertype is not None else None,
        "bits": d.bits if kind == "simple" else None,
        "planes": [p.name for p in d.simple_types] if d.is_compound() else None,
        "element": None,
        "levels": None,
        "bits_per_element": None,
        "mappings": _expected_mappings(d),
    }
    if kind == "block-scaled":
        record["element"] = d.element.name
        record["levels"] = [
            {"scale": lv.scale.name,
             "block": ("Whole" if lv.block is Whole
                       else list(lv.block) if type(lv.block) is tuple else lv.block)}
            for lv in d.levels
        ]
        bpe = d.bits_per_element
        if isinstance(bpe, SymbolicBits):
            record["bits_per_element"] = {
                "constant": bpe.constant, "whole_scale_bits": bpe.whole_scale_bits,
            }
        else:
            record["bits_per_element"] = bpe
    return record


@pytest.mark.fresh_interpreter
def test_json_describes_every_registered_descriptor(capsys, fresh_name):
    """--json: one record per registered descriptor, in registration order,
    each matching the live object field by field."""
    cat = DTypeCategory(fresh_name("JsonCat"), supertype=DType.Integer)
    simple = SimpleDType(fresh_name("JsonS"), bits=2**70, supertype=cat)
    pair = _PairDType(fresh_name("JsonPair"), [DType.Float32, simple])
    scaled = _PairDType(fresh_name("JsonSc"), [DType.E2M1], supertype=DType.Floating)
    # A fresh element keeps this format's structure unique in the process.
    e3 = SimpleDType(fresh_name("JsonE3"), bits=3, supertype=DType.Floating)
    block = BlockScaledDType(
        fresh_name("JsonBlock"), element=e3,
        levels=[Level(DType.E8M0, 8), Level(DType.E4M3, 2), Level(DType.Float32, Whole)],
    )

    assert _cli.main(["--json"]) == 0
    out = capsys.readouterr().out
    doc = json.loads(out)
    assert doc["format_version"] == 1
    registered = DType.registered()
    records = doc["descriptors"]
    assert [r["name"] for r in records] == [d.name for d in registered]
    for d, record in zip(registered, records):
        assert list(record) == _JSON_KEYS, record
        assert record == expected_record(d), d
    by_name = {r["name"]: r for r in records}
    assert by_name[cat.name]["supertype"] == "Integer"
    assert by_name[cat.name]["builtin"] is False
    assert by_name[simple.name]["bits"] == 2**70
    assert by_name[pair.name]["planes"] == ["Float32", simple.name]
    assert by_name[pair.name]["supertype"] is None
    assert by_name[pair.name]["class"] == "_PairDType"
    assert by_name[scaled.name]["supertype"] == "Floating"
    assert by_name[block.name] == {
        "name": block.name, "kind": "block-scaled", "class": "BlockScaledDType",
        "builtin": False, "supertype": "Any", "bits": None,
        "planes": [e3.name, "E8M0", "E4M3", "Float32"], "element": e3.name,
        "levels": [
            {"scale": "E8M0", "block": 8},
            {"scale": "E4M3", "block": 2},
            {"scale": "Float32", "block": "Whole"},
        ],
        # 3 + 8/8 + 8/(8*2), and 32 bits for the whole tensor.
        "bits_per_element": {"constant": 4.5, "whole_scale_bits": 32},
        "mappings": None,
    }
    assert by_name["Float32"] == {
        "name": "Float32", "kind": "simple", "class": "SimpleDType",
        "builtin": True, "supertype": "Floating", "bits": 32, "planes": None,
        "element": None, "levels": None, "bits_per_element": None,
        "mappings": {"numpy": "float32", "dlpack": [2, 32, 1], "arrow": "float32",
                     "buffer_format": "f", "torch": "float32"},
    }
    assert by_name[simple.name]["mappings"] == {
        "numpy": None, "dlpack": None, "arrow": None, "buffer_format": None, "torch": None}


# The built-in block-scaled formats, as --json gives
# them: element, levels (scale, block), bits per element.
BUILTIN_BLOCK_SCALED_JSON = {
    "MXFP8_E4M3": ("E4M3", [("E8M0", 32)], 8.25),
    "MXFP8_E5M2": ("E5M2", [("E8M0", 32)], 8.25),
    "MXFP6_E3M2": ("E3M2", [("E8M0", 32)], 6.25),
    "MXFP6_E2M3": ("E2M3", [("E8M0", 32)], 6.25),
    "MXFP4": ("E2M1", [("E8M0", 32)], 4.25),
    "MXINT8": ("Int8", [("E8M0", 32)], 8.25),
    "NVFP4": ("E2M1", [("E4M3", 16), ("Float32", "Whole")],
              {"constant": 4.5, "whole_scale_bits": 32}),
}


def test_json_of_a_fresh_process_is_the_builtin_graph():
    """python -m stride_weave.dtypes --json in a fresh interpreter: exactly
    the built-in graph, all marked built-in, output pure ASCII JSON."""
    proc = run_module("--json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert proc.stdout.isascii()
    records = json.loads(proc.stdout)["descriptors"]
    names = [r["name"] for r in records]
    assert len(names) == len(set(names))
    assert set(BUILTIN_CATEGORIES) | set(BUILTIN_SIMPLE) <= set(names)
    assert all(r["builtin"] for r in records)
    by_name = {r["name"]: r for r in records}
    for name, parent in BUILTIN_CATEGORIES.items():
        assert by_name[name]["kind"] == "category"
        assert by_name[name]["supertype"] == parent
    for name, (parent, bits) in BUILTIN_SIMPLE.items():
        assert (by_name[name]["kind"], by_name[name]["supertype"], by_name[name]["bits"]) == (
            "simple", parent, bits)
    assert set(names) == (
        set(BUILTIN_CATEGORIES) | set(BUILTIN_SIMPLE) | set(BUILTIN_BLOCK_SCALED)
    )
    for name, (element, levels, bpe) in BUILTIN_BLOCK_SCALED_JSON.items():
        assert by_name[name] == {
            "name": name, "kind": "block-scaled", "class": "BlockScaledDType",
            "builtin": True, "supertype": "Any", "bits": None,
            "planes": [element] + [scale for scale, _ in levels],
            "element": element,
            "levels": [{"scale": scale, "block": block} for scale, block in levels],
            "bits_per_element": bpe,
            "mappings": None,
        }, name
    assert by_name["E4M3"]["mappings"] == {
        "numpy": "float8_e4m3fn", "dlpack": [10, 8, 1], "arrow": None,
        "buffer_format": None, "torch": "float8_e4m3fn"}


@pytest.mark.fresh_interpreter
def test_json_keeps_every_name_exact(capsys, fresh_name):
    """Names with quotes, backslashes, newlines or non-ASCII characters come
    back exactly from the JSON (which is itself ASCII)."""
    odd = [fresh_name('q"uo\\te'), fresh_name("new\nline"), fresh_name("ünï码")]
    made = [SimpleDType(n, bits=8, supertype=DType.Floating) for n in odd]
    assert _cli.main(["--json"]) == 0
    out = capsys.readouterr().out
    assert out.isascii()
    names = [r["name"] for r in json.loads(out)["descriptors"]]
    for d in made:
        assert names.count(d.name) == 1


_QUOTED = r'"(?:[^"\\]|\\.)*"'
_DOT_NODE = re.compile(rf"^    ({_QUOTED}) \[(.*)\];$")
_DOT_EDGE = re.compile(rf"^    ({_QUOTED}) -> ({_QUOTED})(?: \[(.*)\])?;$")
_DOT_ATTR = re.compile(rf"(\w+)=({_QUOTED}|[^,\s]+)")


def _unquote(token):
    """The string a DOT quoted token stands for (as the CLI escapes it)."""
    body = token[1:-1]
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "r": "\r"}.get(m.group(1), m.group(1)), body)


def parse_dot(text):
    """Parse the CLI's DOT output: (nodes: id -> attrs, edges: [(a, b, attrs)])."""
    # DOT lines end with "\n" only: a name may hold other line separators
    # (\x85, \u2028, ...), which Graphviz reads as ordinary characters.
    lines = text.rstrip("\n").split("\n")
    assert lines[0] == "digraph stride_weave_dtypes {", lines[0]
    assert lines[-1] == "}"
    nodes, edges = {}, []
    for line in lines[1:-1]:
        if line.startswith("    node [") or line.startswith("    edge [") or line == "    rankdir=LR;":
            continue
        edge = _DOT_EDGE.match(line)
        if edge:
            attrs = dict(_DOT_ATTR.findall(edge.group(3) or ""))
            edges.append((_unquote(edge.group(1)), _unquote(edge.group(2)), attrs))
            continue
        node = _DOT_NODE.match(line)
        assert node, f"unexpected DOT line: {line!r}"
        name = _unquote(node.group(1))
        assert name not in nodes, f"node {name!r} declared twice"
        nodes[name] = dict(_DOT_ATTR.findall(node.group(2)))
    return nodes, edges


@pytest.mark.fresh_interpreter
def test_dot_has_a_node_per_descriptor_and_an_edge_per_supertype(capsys, fresh_name):
    """--dot: one labelled node per registered descriptor (shape by kind), a
    solid edge from every supertype to each direct member, and dashed,
    labelled edges from a compound dtype to its planes."""
    cat = DTypeCategory(fresh_name("DotCat"), supertype=DType.Floating)
    f16 = SimpleDType(fresh_name("DotF16"), bits=16, supertype=cat)
    pair = _PairDType(fresh_name("DotPair"), [DType.Float32, f16])

    assert _cli.main(["--dot"]) == 0
    nodes, edges = parse_dot(capsys.readouterr().out)
    registered = DType.registered()
    ID = _cli.dot_id_text   # the name itself unless it holds \\ or a surrogate
    assert set(nodes) == {ID(d.name) for d in registered}
    shapes = {"category": "ellipse", "simple": "box", "compound": "component",
              "block-scaled": "box3d"}
    for d in registered:
        attrs = nodes[ID(d.name)]
        assert attrs["shape"] == shapes[_kind(d)], d
        label = _unquote(attrs["label"]).replace("&amp;", "&")
        assert label == _cli.dot_label(d, DType)
        if _kind(d) != "block-scaled":
            assert label == f"{_cli.display_name(d.name)}\n{_cli.describe(d, DType)}"
    # A block-scaled node shows its description one part a line.
    assert _unquote(nodes["MXFP4"]["label"]) == (
        "MXFP4\nblock-scaled\nplanes E2M1 + E8M0 per 32\n4.25 bits per element"
    )
    assert _unquote(nodes["NVFP4"]["label"]) == (
        "NVFP4\nblock-scaled\nplanes E2M1 + E4M3 per 16 + Float32 per whole\n"
        "4.5 + 32/n bits per element"
    )

    hierarchy = sorted((a, b) for a, b, attrs in edges if not attrs)
    assert hierarchy == sorted(
        (ID(d.supertype.name), ID(d.name)) for d in registered if d.supertype is not None
    )
    # Plane edges are written plane -> compound and drawn backwards, so the
    # arrow points from the compound dtype to its plane.
    planes = [(b, a, attrs) for a, b, attrs in edges if attrs]
    assert all(attrs["style"] == "dashed" and attrs["dir"] == "back"
               for _, _, attrs in planes)
    assert [(b, _unquote(attrs["label"])) for a, b, attrs in planes if a == ID(pair.name)] == [
        ("Float32", "plane 0"), (ID(f16.name), "plane 1"),
    ]
    roles = {(a, b): _unquote(attrs["label"]) for a, b, attrs in planes}
    assert roles[("MXFP4", "E2M1")] == "element"
    assert roles[("MXFP4", "E8M0")] == "scale per 32"
    assert roles[("NVFP4", "E4M3")] == "scale per 16"
    assert roles[("NVFP4", "Float32")] == "scale per whole"
    expected_plane_edges = sum(len(d.simple_types) for d in registered if d.is_compound())
    assert len(planes) == expected_plane_edges
    assert (ID(cat.name), ID(f16.name)) in hierarchy
    assert ("Floating", ID(cat.name)) in hierarchy


@pytest.mark.fresh_interpreter
def test_dot_escapes_names(capsys, fresh_name):
    """A name with a quote, a backslash, a newline or '&' is one valid DOT ID
    and shows in its label as the tree shows it."""
    name = fresh_name('a"b\\c\nd&amp;e')
    d = SimpleDType(name, bits=8, supertype=DType.Floating)
    assert _cli.main(["--dot"]) == 0
    nodes, edges = parse_dot(capsys.readouterr().out)
    node_id = _cli.dot_id_text(name)
    # the backslash doubled, the newline escaped
    assert node_id == name.replace("\\", "\\\\").replace("\n", "\\n")
    raw_label = nodes[node_id]["label"]
    assert "&amp;amp;" in raw_label  # '&' itself is escaped for Graphviz
    assert _unquote(raw_label).replace("&amp;", "&").startswith(_cli.display_name(name) + "\n")
    assert ("Floating", node_id, {}) in edges
    assert d in DType.registered()


@pytest.mark.fresh_interpreter
def test_dot_names_with_lone_surrogates_stay_distinct(capsys, fresh_name):
    """A lone surrogate (legal in a name, impossible in UTF-8 DOT source) is
    written as \\uXXXX; a name spelling that escape literally is a different
    node, so the output is valid UTF-8 with one node per descriptor."""
    surrogate = SimpleDType(fresh_name("Sur\ud800"), bits=8, supertype=DType.Floating)
    lookalike = SimpleDType(surrogate.name.replace("\ud800", "\\ud800"), bits=8,
                            supertype=DType.Floating)
    assert _cli.main(["--dot"]) == 0
    out = capsys.readouterr().out
    out.encode("utf-8")   # no lone surrogate reaches the output
    nodes, edges = parse_dot(out)
    a, b = _cli.dot_id_text(surrogate.name), _cli.dot_id_text(lookalike.name)
    assert a != b and a in nodes and b in nodes
    assert ("Floating", a, {}) in edges and ("Floating", b, {}) in edges
    assert len(nodes) == len(DType.registered())


def test_dot_output_is_accepted_by_graphviz(fresh_name):
    """When Graphviz is installed, `dot` lays out the whole graph."""
    dot = shutil.which("dot")
    if dot is None:
        pytest.skip("Graphviz 'dot' is not installed: the DOT syntax is checked "
                    "by the parser tests only")
    proc = run_module("--dot")
    assert proc.returncode == 0, proc.stderr
    nodes, _ = parse_dot(proc.stdout)
    laid_out = subprocess.run(
        [dot, "-Tplain"], input=proc.stdout, capture_output=True, text=True,
        encoding="utf-8", timeout=120,
    )
    assert laid_out.returncode == 0, laid_out.stderr
    assert laid_out.stderr == ""
    plain_nodes = [line for line in laid_out.stdout.splitlines() if line.startswith("node ")]
    assert len(plain_nodes) == len(nodes)


def test_dot_lays_out_each_compound_dtype_after_its_planes(tmp_path):
    """With Graphviz, every compound dtype (block-scaled ones included) is
    placed right of each of its planes, so the plane edges run forwards from
    the column of simple dtypes and do not fold back across the hierarchy."""
    dot = shutil.which("dot")
    if dot is None:
        pytest.skip("Graphviz 'dot' is not installed")
    (tmp_path / "pairs.py").write_text(
        "from stride_weave.dtypes import CompoundDType, DType, DTypeCategory, SimpleDType\n"
        "class Pair(CompoundDType, abstract=False):\n"
        "    def __init__(self, name, part, supertype):\n"
        "        super().__init__(name, supertype=supertype, simple_types=(part, part))\n"
        "MINE = DTypeCategory('PairFormats')\n"
        "HALF = SimpleDType('PairHalf', bits=16, supertype=MINE)\n"
        "Pair('PairOfHalves', HALF, MINE)\n"
        "Pair('PairOfFloats', DType.Float32, None)\n",
        encoding="utf-8")
    proc = run_package("--dot", "--import", "pairs", "--import", "stride_weave.formats",
                       cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    nodes, edges = parse_dot(proc.stdout)
    laid_out = subprocess.run([dot, "-Tplain"], input=proc.stdout, capture_output=True,
                              encoding="utf-8", timeout=120)
    assert laid_out.returncode == 0, laid_out.stderr
    x = {}
    for line in laid_out.stdout.splitlines():
        if line.startswith("node "):
            # node NAME X Y ...: the names here need no quoting
            _, name, x_pos = line.split()[:3]
            x[name.strip('"')] = float(x_pos)
    compound_shapes = ("component", "box3d")
    plane_edges = [(a, b) if nodes[a]["shape"] in compound_shapes else (b, a)
                   for a, b, attrs in edges if attrs]
    assert ("PairOfHalves", "PairHalf") in plane_edges
    assert ("NVFP4", "Float32") in plane_edges
    for compound, plane in plane_edges:
        assert x[compound] > x[plane], (compound, plane, x[compound], x[plane])


@pytest.mark.parametrize("args", [["--json", "--dot"], ["--json", "--ascii"], ["--dot", "--ascii"]])
def test_output_forms_do_not_combine(args):
    proc = run_module(*args)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "error:" in proc.stderr


def test_help_lists_the_output_forms():
    proc = run_module("--help")
    assert proc.returncode == 0, proc.stderr
    for option in ("--json", "--dot", "--ascii"):
        assert option in proc.stdout


@pytest.mark.parametrize("option", ["--json", "--dot"])
def test_closed_output_pipe_is_not_a_traceback_for_other_forms(option):
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "stride_weave.dtypes", option],
            stdout=write_end, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
            text=True, timeout=120,
        )
    finally:
        os.close(write_end)
    assert proc.returncode == 1
    assert proc.stderr == ""


# --- --mappings ---------------------------------------------------------------

# What --mappings appends to each built-in simple dtype's line.
BUILTIN_MAPPINGS = {
    "Bool": "numpy bool; DLPack (6, 8, 1); PEP 3118 ?; torch bool",
    "Int8": "numpy int8; DLPack (0, 8, 1); Arrow int8; PEP 3118 b; torch int8",
    "Int32": "numpy int32; DLPack (0, 32, 1); Arrow int32; PEP 3118 i; torch int32",
    "Float32": "numpy float32; DLPack (2, 32, 1); Arrow float32; PEP 3118 f; torch float32",
    "Float64": "numpy float64; DLPack (2, 64, 1); Arrow float64; PEP 3118 d; torch float64",
    "E8M0": "numpy float8_e8m0fnu; DLPack (14, 8, 1); torch float8_e8m0fnu",
    "E5M2": "numpy float8_e5m2; DLPack (12, 8, 1); torch float8_e5m2",
    "E4M3": "numpy float8_e4m3fn; DLPack (10, 8, 1); torch float8_e4m3fn",
    "E3M2": "numpy float6_e3m2fn; DLPack (16, 6, 1)",
    "E2M3": "numpy float6_e2m3fn; DLPack (15, 6, 1)",
    "E2M1": "numpy float4_e2m1fn; DLPack (17, 4, 1); torch float4_e2m1fn_x2",
}


@pytest.mark.parametrize("ascii_flag, arrow", [((), "\u2192"), (("--ascii",), "->")])
def test_mappings_extend_the_simple_dtypes_lines(ascii_flag, arrow):
    proc = run_module("--mappings", *ascii_flag)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    for name, text in BUILTIN_MAPPINGS.items():
        bits = DType.from_name(name).bits
        wanted = f"{name}  simple, {bits} bits  {arrow} {text}"
        assert sum(line.endswith(wanted) for line in lines) == 1, (name, proc.stdout)
    # other kinds are unchanged
    assert any(line.endswith("MXFP4  block-scaled, planes E2M1 + E8M0 per 32, "
                             "4.25 bits per element") for line in lines)
    assert run_module(*ascii_flag).stdout.count("\n") == proc.stdout.count("\n")


@pytest.mark.fresh_interpreter
def test_mappings_of_extensions(capsys, fresh_name):
    plain = SimpleDType(fresh_name("CliNoMap"), bits=8, supertype=DType.Floating)
    mapped = SimpleDType(fresh_name("CliMap"), bits=16, supertype=DType.Floating)
    interop.register_mapping(mapped, dlpack=(3, 4, 4))   # unique in the process
    assert _cli.main(["--mappings", "--ascii"]) == 0
    out = capsys.readouterr().out
    assert f"{plain.name}  simple, 8 bits  [extension]  -> no foreign equivalents" in out
    assert f"{mapped.name}  simple, 16 bits  [extension]  -> DLPack (3, 4, 4)" in out


@pytest.mark.parametrize("other", ["--json", "--dot"])
def test_mappings_is_for_the_tree_view_only(other):
    proc = run_module("--mappings", other)
    assert proc.returncode == 2
    assert "--mappings applies to the tree view only" in proc.stderr
    assert proc.stdout == ""


# --------------------------------------------------------------------------
# python -m stride_weave, --version, --import, --name
# --------------------------------------------------------------------------

def run_package(*args, cwd=None):
    """Run `python -m stride_weave *args` in a fresh interpreter."""
    return run_python(["-m", "stride_weave", *args],
                      env=dict(os.environ, PYTHONIOENCODING="utf-8"), cwd=cwd)


_USER_MODULE = '''
from stride_weave.dtypes import BlockScaledDType, DType, DTypeCategory, Level, SimpleDType

class Brain(SimpleDType, abstract=False):
    pass

MINE = DTypeCategory("MyFormats", supertype=DType.Floating)
BF16 = Brain("BFloat16", bits=16, supertype=MINE)
MX = BlockScaledDType("MyMX", element=BF16, levels=[Level(DType.E8M0, 8)])
'''


@pytest.fixture
def user_modules(tmp_path):
    """A directory with two importable modules that register descriptors."""
    (tmp_path / "userdtypes.py").write_text(_USER_MODULE, encoding="utf-8")
    pkg = tmp_path / "userpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "more.py").write_text(
        "from stride_weave.dtypes import DType, SimpleDType\n"
        "INT4 = SimpleDType('UserInt4', bits=4, supertype=DType.Integer)\n",
        encoding="utf-8",
    )
    (tmp_path / "broken.py").write_text("raise RuntimeError('broken on purpose')\n",
                                        encoding="utf-8")
    return tmp_path


def test_python_m_stride_weave_is_the_same_command():
    alias = run_package()
    original = run_module()
    assert alias.returncode == original.returncode == 0, alias.stderr
    assert alias.stdout == original.stdout
    assert "Float32  simple, 32 bits" in alias.stdout


def test_python_m_stride_weave_help_names_it():
    proc = run_package("--help")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: python -m stride_weave [-h]")
    for option in ("--import MODULE", "--name NAME", "--version"):
        assert option in proc.stdout


def test_version():
    import stride_weave
    for proc in (run_package("--version"), run_module("--version")):
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == f"stride-weave {stride_weave.__version__}\n"


def test_import_shows_the_modules_descriptors(user_modules):
    proc = run_package("--import", "userdtypes", "--import", "userpkg.more",
                       cwd=user_modules)
    assert proc.returncode == 0, proc.stderr
    parents, _ = parse_tree(proc.stdout)
    assert parents["MyFormats"] == ("Floating", "category  [extension]")
    assert parents["BFloat16"] == ("MyFormats", "simple, 16 bits  [Brain, extension]")
    assert parents["MyMX"][0] == "Any"
    assert parents["MyMX"][1].startswith("block-scaled, planes BFloat16 + E8M0 per 8")
    assert parents["UserInt4"] == ("Integer", "simple, 4 bits  [extension]")
    header = proc.stdout.splitlines()[0]
    builtins = sum(1 for d in DType.registered() if _cli.is_builtin(d, DType))
    assert header == (f"stride-weave dtype graph: {builtins + 4} registered "
                      f"descriptors ({builtins} built-in, 4 extension)")


def test_import_with_json(user_modules):
    proc = run_package("--import", "userdtypes", "--json", cwd=user_modules)
    assert proc.returncode == 0, proc.stderr
    names = [r["name"] for r in json.loads(proc.stdout)["descriptors"]]
    assert names[-3:] == ["MyFormats", "BFloat16", "MyMX"]


def test_import_of_a_missing_module_is_a_usage_error(user_modules):
    proc = run_package("--import", "no_such_module_here", cwd=user_modules)
    assert proc.returncode == 2
    assert ("error: --import no_such_module_here: no module named "
            "'no_such_module_here'") in proc.stderr
    assert proc.stdout == ""


@pytest.mark.parametrize("module", ["", "../userdtypes", "user-dtypes", ".rel", "a..b"])
def test_import_of_a_non_module_name_is_a_usage_error(user_modules, module):
    proc = run_package("--import", module, cwd=user_modules)
    assert proc.returncode == 2
    assert (f"error: --import: expected a dotted module name such as "
            f"'mypackage.dtypes', got {module!r}") in proc.stderr


def _write(directory, name, source):
    path = directory / name
    path.write_text(source, encoding="utf-8")
    return path


def test_import_of_a_failing_module_is_a_short_error(user_modules):
    """A module that raises ends the command with status 3 and a few lines:
    the exception and the line of the module that raised it, no traceback
    through the import machinery."""
    proc = run_package("--import", "broken", cwd=user_modules)
    assert proc.returncode == _cli.IMPORT_FAILED == 3
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == [
        "python -m stride_weave: error: --import broken: the module raised an "
        "exception while it was imported:",
        f'  File "{user_modules / "broken.py"}", line 1, in <module>',
        "    raise RuntimeError('broken on purpose')",
        "RuntimeError: broken on purpose",
        "(run with --traceback for the full traceback)",
    ]


def test_import_failure_shows_the_modules_line_and_the_raising_line(user_modules):
    """When the exception comes from code the module called, both the
    module's own line and the line that raised are shown."""
    _write(user_modules, "calls.py", "import helper_fails\n")
    _write(user_modules, "helper_fails.py",
           "def check(value):\n    raise KeyError(value)\n\ncheck('missing')\n")
    proc = run_package("--import", "calls", cwd=user_modules)
    assert proc.returncode == 3
    lines = proc.stderr.splitlines()
    assert lines[1:] == [
        f'  File "{user_modules / "calls.py"}", line 1, in <module>',
        "    import helper_fails",
        "  ...",
        f'  File "{user_modules / "helper_fails.py"}", line 2, in check',
        "    raise KeyError(value)",
        "KeyError: 'missing'",
        "(run with --traceback for the full traceback)",
    ]
    assert "importlib" not in proc.stderr


@pytest.mark.parametrize("source, last_line", [
    ("def broken(:\n", "SyntaxError: invalid syntax"),
    ("import sys\nsys.exit(4)\n", "SystemExit: 4"),
    ("import no_such_dependency_of_this_module\n",
     "ModuleNotFoundError: No module named 'no_such_dependency_of_this_module'"),
])
def test_import_failures_of_every_kind_have_status_3(user_modules, source, last_line):
    """A syntax error, a module that exits at import, and a module whose own
    import fails are all failures of the module (status 3), not a usage
    error or the module's exit status."""
    path = _write(user_modules, "failing_kind.py", source)
    proc = run_package("--import", "failing_kind", cwd=user_modules)
    assert proc.returncode == 3, proc.stderr
    lines = proc.stderr.splitlines()
    assert lines[0].startswith("python -m stride_weave: error: --import failing_kind: ")
    assert f'  File "{path}", line ' in proc.stderr
    assert lines[-2:] == [last_line, "(run with --traceback for the full traceback)"]
    assert "Traceback" not in proc.stderr


def test_import_failure_with_traceback_prints_it_in_full(user_modules):
    proc = run_package("--import", "broken", "--traceback", cwd=user_modules)
    assert proc.returncode == 3
    assert proc.stderr.splitlines()[:2] == [
        "python -m stride_weave: error: --import broken: the module raised an "
        "exception while it was imported; the full traceback:",
        "Traceback (most recent call last):",
    ]
    assert "importlib" in proc.stderr
    assert proc.stderr.rstrip().endswith("RuntimeError: broken on purpose")


def test_import_stops_at_the_first_failing_module(user_modules):
    """Modules after a failing one are not imported, and nothing is printed."""
    _write(user_modules, "marks.py", "raise AssertionError('must not be imported')\n")
    proc = run_package("--import", "broken", "--import", "marks", cwd=user_modules)
    assert proc.returncode == 3
    assert "marks" not in proc.stderr and proc.stdout == ""


def _suggested(stderr):
    """The arguments the error message suggests: the module name, and the
    directory to put on PYTHONPATH (None when the current one will do)."""
    match = re.search(r"use --import (\S+)(?: with (.+) on PYTHONPATH)?", stderr)
    assert match, stderr
    return match.group(1), match.group(2)


@pytest.mark.parametrize("argument, cwd, module, directory", [
    ("userdtypes.py", ".", "userdtypes", None),
    ("./userdtypes.py", ".", "userdtypes", None),
    ("userpkg/more.py", ".", "userpkg.more", None),
    ("userpkg/", ".", "userpkg", None),
    ("userpkg/__init__.py", ".", "userpkg", None),
    ("../userdtypes.py", "userpkg", "userdtypes", ".."),
    ("{root}/userpkg/more.py", "/", "userpkg.more", "{root}"),
])
def test_import_of_a_file_name_suggests_its_module_name(user_modules, argument, cwd,
                                                        module, directory):
    """A file name or a path is a usage error that says which module name to
    give (and which directory must be on the module search path), and the
    suggestion works."""
    argument = argument.format(root=user_modules)
    workdir = (user_modules / cwd).resolve()
    proc = run_package("--import", argument, cwd=workdir)
    assert proc.returncode == 2
    assert proc.stdout == ""
    message = proc.stderr.splitlines()[-1]
    assert message.startswith("python -m stride_weave: error: --import")
    assert argument in message
    suggested, on_path = _suggested(proc.stderr)
    assert suggested == module
    if directory is None:
        assert on_path is None
    else:
        assert (workdir / on_path).resolve() == (workdir / directory.format(
            root=user_modules)).resolve()
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    if on_path is not None:
        env["PYTHONPATH"] = str((workdir / on_path).resolve())
    followed = run_python(["-m", "stride_weave", "--import", suggested], env=env,
                          cwd=workdir)
    assert followed.returncode == 0, followed.stderr


def test_import_of_a_missing_file_name_suggests_dropping_py(user_modules):
    proc = run_package("--import", "not_written.py", cwd=user_modules)
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1] == (
        "python -m stride_weave: error: --import not_written.py: no module named "
        "'not_written' on sys.path (the current directory included); a module "
        "name has no .py: use --import not_written")


def test_name_shows_one_descriptor_with_its_structure():
    proc = run_package("--name", "MXFP4")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "MXFP4  " + BUILTIN_BLOCK_SCALED["MXFP4"]
    assert lines[1] == "  class:      BlockScaledDType (built-in)"
    assert lines[2] == "  supertypes: Any"
    assert lines[3] == "  structure:"
    import ast
    shown = ast.literal_eval("\n".join(line[4:] for line in lines[4:]))
    assert shown == DType.MXFP4.structure()


def test_name_of_a_user_descriptor(user_modules):
    proc = run_package("--import", "userdtypes", "--name", "BFloat16",
                       cwd=user_modules)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "BFloat16  simple, 16 bits  [Brain, extension]"
    assert lines[1] == "  class:      Brain (extension)"
    assert lines[2] == "  supertypes: MyFormats, Floating, Any"


def test_name_with_json():
    proc = run_package("--name", "NVFP4", "--json")
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)
    expected = _cli.descriptor_data(DType.NVFP4, DType)
    expected["supertypes"] = ["Any"]
    expected["structure"] = json.loads(json.dumps(DType.NVFP4.structure()))
    assert record == expected


@pytest.mark.parametrize("name, line", [
    ("NVFP4_16x16", "NVFP4_16x16  block-scaled, planes E2M1 + E4M3 per 16x16 + Float32 per "
                    "whole, 4.03125 + 32/n bits per element  [extension]"),
    ("FP8_E4M3_128x128", "FP8_E4M3_128x128  block-scaled, planes E4M3 + Float32 per 128x128, "
                         "8.001953125 bits per element  [extension]"),
    ("FP8_E4M3_1x128", "FP8_E4M3_1x128  block-scaled, planes E4M3 + Float32 per 128, "
                       "8.25 bits per element  [extension]"),
])
def test_name_shows_the_block_shape_of_an_nd_format(name, line):
    proc = run_package("--import", "stride_weave.formats", "--name", name)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == line


def test_json_and_dot_show_an_nd_block_as_its_shape():
    proc = run_package("--import", "stride_weave.formats", "--name", "NVFP4_16x16", "--json")
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)
    assert record["levels"] == [{"scale": "E4M3", "block": [16, 16]},
                                {"scale": "Float32", "block": "Whole"}]
    assert record["bits_per_element"] == {"constant": 4.03125, "whole_scale_bits": 32}
    proc = run_package("--import", "stride_weave.formats", "--dot")
    assert proc.returncode == 0, proc.stderr
    _, edges = parse_dot(proc.stdout)
    roles = {(b, a): _unquote(attrs["label"]) for a, b, attrs in edges if attrs}
    assert roles[("NVFP4_16x16", "E4M3")] == "scale per 16x16"
    assert roles[("MXFP8_E4M3_32x32", "E8M0")] == "scale per 32x32"


def test_name_miss_is_a_usage_error_with_a_suggestion():
    proc = run_package("--name", "mxfp4")
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1] == (
        "python -m stride_weave: error: --name: no descriptor is registered "
        "under the name 'mxfp4'; did you mean 'MXFP4'?")


def test_name_miss_on_a_pack_format_gives_the_option_that_registers_it():
    """The advice to import the formats pack is given as this command's
    --import option, and following it works."""
    proc = run_package("--name", "Float16")
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1] == (
        "python -m stride_weave: error: --name: no descriptor is registered under the "
        "name 'Float16'; --import stride_weave.formats registers it")
    proc = run_package("--name", "bfloat16")
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1] == (
        "python -m stride_weave: error: --name: no descriptor is registered under the "
        "name 'bfloat16'; did you mean 'BFloat16'? (--import stride_weave.formats "
        "registers 'BFloat16')")
    proc = run_package("--import", "stride_weave.formats", "--name", "Float16")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].startswith("Float16")


def test_name_with_dot_is_a_usage_error():
    proc = run_package("--name", "MXFP4", "--dot")
    assert proc.returncode == 2
    assert "error: --name applies to the tree view and --json, not to --dot" in proc.stderr
