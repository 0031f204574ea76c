"""`python -m stride_weave.dtypes` prints the registered graph as a tree."""
import os
import re
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
    Whole,
)
from stride_weave import _cli

# The built-in graph of the dtype-descriptors spec: name -> (supertype, bits).
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
# The built-in block-scaled formats of dtype-representations, as printed:
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


def run_module(*args):
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "stride_weave.dtypes", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


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
