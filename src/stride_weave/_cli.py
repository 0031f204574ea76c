"""``python -m stride_weave``: print the registered descriptor graph.

``python -m stride_weave.dtypes`` is the same command. ``--import MODULE``
(repeatable) imports a module first, so that the descriptors it registers are
printed too; ``--name NAME`` prints one descriptor with its structure;
``--version`` prints the installed version; ``--promotions`` prints the
default promotion lattice instead of the graph, or the one ``--lattice
MODULE:ATTRIBUTE`` names, and ``--promote A B`` the join of two dtypes
(``_promotions_view``).

Three forms of the same graph, with every registered descriptor (built-in and
extension) in each:

- the **tree view** (the default). The categories form the hierarchy (``Any``
  at the root, ``Floating`` and ``Integer`` below it). Every registered
  descriptor is printed under its immediate supertype with its kind and
  width: a simple dtype with its width in bits, a compound dtype with its
  planes by name, a block-scaled format with its element plane, each scale
  plane with its block size, and its storage cost in bits per element.
  Compound dtypes without a supertype are listed under a separate
  ``(no supertype)`` heading. Within one parent, descriptors appear in
  registration order.
- ``--json``: a machine-readable document (see ``graph_data``), the foreign
  equivalents of each simple dtype included.
- ``--dot``: Graphviz source of the hierarchy (see ``render_dot``).

Each tree line is ``<tree prefix><name>  <kind details>``, for example::

    Any  category
    ├── Bool  simple, 8 bits
    ├── Floating  category
    │   ├── Float32  simple, 32 bits
    ├── MXFP4  block-scaled, planes E2M1 + E8M0 per 32, 4.25 bits per element
    └── NVFP4  block-scaled, planes E2M1 + E4M3 per 16 + Float32 per whole, 4.5 + 32/n bits per element

where ``n`` is the number of elements of the tensor. With ``--mappings``,
each simple dtype's line also lists its foreign equivalents (see
``mappings_text``).

Whatever the registry holds, every view prints it: none recurses (a
hierarchy may be deeper than Python's recursion limit), and none writes a
control character from a registered name or a class name to the terminal.
The text views (the tree, ``--name``, the labels of ``--dot``) show such a
name as ``display_name`` does, and every other text taken from the registry
escapes its unprintable characters the same way (``dot_id_text``); the JSON
views use JSON's escapes. Deep nesting in ``--name`` (its structure, and
its JSON) stops being indented further after ``MAX_INDENT_LEVEL`` levels, so
the output grows with the registry, not with the square of its depth.
"""

import argparse
import importlib
import contextlib
import json
import os
import re
import sys
import traceback

from stride_weave._dtypes import _KINDS, DType, SymbolicBits, _kind
from stride_weave.interop import TARGETS, _exact_str

NO_SUPERTYPE = "(no supertype)"

#: Version of the ``--json`` document format; bumped on incompatible changes.
JSON_FORMAT_VERSION = 1

#: Nesting deeper than this many levels is indented as this level is, in the
#: structure and the JSON that ``--name`` prints.
MAX_INDENT_LEVEL = 64

_UNICODE = {"tee": "├── ", "last": "└── ", "pipe": "│   ", "space": "    "}
_ASCII = {"tee": "|-- ", "last": "`-- ", "pipe": "|   ", "space": "    "}

# Classes whose name the tree view does not repeat as a tag: the model's own,
# one per kind.
_MODEL_CLASSES = tuple(cls.__name__ for _label, cls in _KINDS)


def _text(value, what):
    """``value`` as an exact str, read once (a str subclass's methods are not
    run); TypeError naming ``what`` for anything else."""
    text = _exact_str(value)
    if text is None:
        raise TypeError(f"{what} must be a str, got {value!r}")
    return text


def _class_name(d, attribute="__name__"):
    """The ``__name__`` (or ``__qualname__``) of ``d``'s class as an exact str."""
    return _text(getattr(type(d), attribute), f"the {attribute} of a descriptor class")


def _as_command_line(message):
    """A miss's ``message`` with its advice to import a pack (``import
    stride_weave.formats registers it``) given as this command's option."""
    from stride_weave._packs import PACKS

    for module, _ in PACKS:
        message = message.replace(f"import {module} registers",
                                  f"--import {module} registers")
    return message


def display_name(name, ascii_only=False):
    """Return ``name`` as printed: the one escaping of every text view.

    A name is printed as is unless it holds whitespace or unprintable
    characters (control characters, line separators, lone surrogates...),
    which are shown as a Python string literal (``repr``, which escapes
    every unprintable character) so that one descriptor is always one line
    and no control character reaches the terminal; with ``ascii_only``, a
    non-ASCII name is shown as its ``ascii()`` literal. The class names of
    the tree and of ``--name`` are shown the same way.
    """
    name = _text(name, "name")
    if ascii_only and not name.isascii():
        return ascii(name)
    if name.isprintable() and not any(c.isspace() for c in name):
        return name
    return repr(name)


def _bits_text(bits):
    return f"{bits} bit" if bits == 1 else f"{bits} bits"


def _bits_per_element_text(bpe):
    """``4.25`` for a float; ``4.5 + 32/n`` for SymbolicBits(4.5, 32)."""
    if isinstance(bpe, float):
        return repr(bpe)
    return f"{bpe.constant!r} + {bpe.whole_scale_bits}/n"


def _block_text(level):
    """``32`` for a 1-D block, ``16x16`` for an N-D block (its shape),
    ``whole`` for Whole."""
    if level.is_whole():
        return "whole"
    return "x".join(str(extent) for extent in level.block_shape)


def _block_scaled_text(d, ascii_only):
    planes = [display_name(d.element.name, ascii_only)]
    for level in d.levels:
        planes.append(f"{display_name(level.scale.name, ascii_only)} per {_block_text(level)}")
    return (
        f"block-scaled, planes {' + '.join(planes)}, "
        f"{_bits_per_element_text(d.bits_per_element)} bits per element"
    )


def _contract(d):
    """The kind of ``d`` in the C core's own words ("simple", "block-scaled"...)."""
    return _kind(d) or "descriptor"


def describe(d, dtype_cls, ascii_only=False):
    """Return the one-line description of descriptor ``d`` (without its name)."""
    kind = _contract(d)
    if kind == "simple":
        text = f"simple, {_bits_text(d.bits)}"
    elif kind == "block-scaled":
        text = _block_scaled_text(d, ascii_only)
    elif kind == "compound":
        planes = d.simple_types
        noun = "plane" if len(planes) == 1 else "planes"
        names = ", ".join(display_name(p.name, ascii_only) for p in planes)
        text = f"compound, {len(planes)} {noun}: {names}"
    else:
        text = kind
    tags = []
    cls_name = _class_name(d)
    if cls_name not in _MODEL_CLASSES:
        tags.append(display_name(cls_name, ascii_only))
    if not is_builtin(d, dtype_cls):
        tags.append("extension")
    if tags:
        text += "  [" + ", ".join(tags) + "]"
    return text


def is_builtin(d, dtype_cls):
    """Return True if ``d`` is a built-in (a ``DType.<name>`` attribute)."""
    return getattr(dtype_cls, d.name, None) is d


def build_tree(descriptors):
    """Group descriptors by parent.

    Returns ``(roots, orphans, children)``: ``roots`` are the categories with
    no supertype, ``orphans`` the other descriptors with no (registered)
    supertype, and ``children`` maps ``id(category)`` to its direct members in
    registration order.
    """
    present = {id(d) for d in descriptors}
    children = {}
    roots = []
    orphans = []
    for d in descriptors:
        parent = d.supertype
        if parent is not None and id(parent) in present:
            children.setdefault(id(parent), []).append(d)
        elif d.is_category():
            roots.append(d)
        else:
            orphans.append(d)
    return roots, orphans, children


def render(descriptors, dtype_cls, ascii_only=False, mappings=False):
    """Return the tree of ``descriptors`` as a list of lines; with
    ``mappings``, simple dtypes' lines end with ``mappings_text``."""
    glyphs = _ASCII if ascii_only else _UNICODE
    roots, orphans, children = build_tree(descriptors)
    lines = []

    def walk(d, prefix, is_last, top):
        # Depth-first with an explicit stack: a category chain may be deeper
        # than Python's recursion limit.
        stack = [(d, prefix, is_last, top)]
        while stack:
            d, prefix, is_last, top = stack.pop()
            label = f"{display_name(d.name, ascii_only)}  {describe(d, dtype_cls, ascii_only)}"
            if mappings and d.is_simple():
                label += mappings_text(d, ascii_only)
            if top:
                lines.append(label)
                child_prefix = ""
            else:
                branch = glyphs["last"] if is_last else glyphs["tee"]
                lines.append(prefix + branch + label)
                child_prefix = prefix + (glyphs["space"] if is_last else glyphs["pipe"])
            kids = children.get(id(d), ())
            stack.extend((kid, child_prefix, i == len(kids) - 1, False)
                         for i, kid in reversed(list(enumerate(kids))))

    for i, root in enumerate(roots):
        if i:
            lines.append("")
        walk(root, "", True, True)
    if orphans:
        if lines:
            lines.append("")
        lines.append(NO_SUPERTYPE)
        for i, d in enumerate(orphans):
            walk(d, "", i == len(orphans) - 1, False)
    return lines


# --- foreign equivalents (--mappings, and the "mappings" key of --json) ------

# The label of each target, in the order of interop.TARGETS.
_MAPPING_LABELS = ("numpy", "DLPack", "Arrow", "PEP 3118", "torch")


def mappings_text(d, ascii_only=False):
    """Return the ``--mappings`` suffix of simple dtype ``d``'s tree line:
    ``  -> numpy float32; DLPack (2, 32, 1); ...`` with each equivalent it
    has (``stride_weave.interop.mapping``), or ``  -> no foreign
    equivalents``."""
    from stride_weave import interop

    parts = []
    for target, label, value in zip(TARGETS, _MAPPING_LABELS, interop._equivalents(d)):
        if value is not None:
            shown = (f"({value[0]}, {value[1]}, {value[2]})" if target == "dlpack"
                     else display_name(value, ascii_only))
            parts.append(f"{label} {shown}")
    arrow = "->" if ascii_only else "\u2192"
    return f"  {arrow} " + ("; ".join(parts) if parts else "no foreign equivalents")


def mappings_data(d):
    """Return the ``"mappings"`` value of a ``--json`` record: for a simple
    dtype ``{"numpy", "dlpack", "arrow", "buffer_format", "torch"}`` (names;
    the DLPack type as ``[code, bits, lanes]``; ``None`` where it has no
    equivalent), ``None`` for any other kind."""
    if not d.is_simple():
        return None
    from stride_weave import interop

    return {target: (list(value) if type(value) is tuple else value)
            for target, value in zip(TARGETS, interop._equivalents(d))}


# --- --json ------------------------------------------------------------------


def _bits_per_element_data(bpe):
    if isinstance(bpe, SymbolicBits):
        return {"constant": bpe.constant, "whole_scale_bits": bpe.whole_scale_bits}
    return bpe


def descriptor_data(d, dtype_cls):
    """Return the ``--json`` record of descriptor ``d`` (a dict).

    Every record has the same keys; a key that does not apply to the
    descriptor's kind is ``None`` (JSON ``null``):

    - ``name``: the registered name;
    - ``kind``: ``"category"``, ``"simple"``, ``"compound"`` or
      ``"block-scaled"`` (a ``BlockScaledDType``, which is also compound), as
      in the tree view;
    - ``class``: the most-derived class name (an extension's own subclass,
      for example);
    - ``builtin``: whether it is a built-in (``DType.<name>``);
    - ``supertype``: the name of its immediate supertype, or ``None``;
    - ``bits``: a simple dtype's width in bits;
    - ``planes``: a compound (or block-scaled) dtype's planes, as names, in
      order;
    - ``element``: a block-scaled dtype's element dtype, by name;
    - ``levels``: a block-scaled dtype's levels, innermost first, each
      ``{"scale": <name>, "block": <int or "Whole">}``;
    - ``bits_per_element``: a block-scaled dtype's storage cost per element:
      a number, or ``{"constant": c, "whole_scale_bits": w}`` for a format
      with a ``Whole`` level (``c + w / n`` bits per element for a tensor of
      ``n`` elements);
    - ``mappings``: a simple dtype's foreign equivalents (see
      ``mappings_data``).
    """
    kind = _contract(d)
    record = {
        "name": d.name,
        "kind": kind,
        "class": _class_name(d),
        "builtin": is_builtin(d, dtype_cls),
        "supertype": None if d.supertype is None else d.supertype.name,
        "bits": d.bits if kind == "simple" else None,
        "planes": [p.name for p in d.simple_types] if d.is_compound() else None,
        "element": None,
        "levels": None,
        "bits_per_element": None,
        "mappings": mappings_data(d),
    }
    if kind == "block-scaled":
        record["element"] = d.element.name
        record["levels"] = [
            {
                "scale": level.scale.name,
                "block": "Whole" if level.is_whole() else level.block,
            }
            for level in d.levels
        ]
        record["bits_per_element"] = _bits_per_element_data(d.bits_per_element)
    return record


def graph_data(descriptors, dtype_cls):
    """Return the ``--json`` document for ``descriptors`` (a dict).

    ``{"format_version": 1, "descriptors": [...]}``, one record per
    registered descriptor in registration order (see ``descriptor_data``).
    """
    return {
        "format_version": JSON_FORMAT_VERSION,
        "descriptors": [descriptor_data(d, dtype_cls) for d in descriptors],
    }


def json_text(value):
    """Return ``json.dumps(value, indent=2)`` for a JSON-ready ``value``
    (tuples are arrays), without recursion: ASCII, with JSON's escapes for
    every control character. Nesting deeper than ``MAX_INDENT_LEVEL`` levels
    is indented as that level is."""
    out = []
    stack = [(value, 0)]   # what is left to write: text, or (value, level)
    while stack:
        task = stack.pop()
        if type(task) is str:
            out.append(task)
            continue
        item, level = task
        kind = type(item)
        if kind not in (dict, list, tuple):
            out.append(json.dumps(item))
            continue
        if not item:
            out.append("{}" if kind is dict else "[]")
            continue
        inner = "\n" + " " * (2 * min(level + 1, MAX_INDENT_LEVEL))
        pairs = item.items() if kind is dict else ((None, v) for v in item)
        todo = ["{" if kind is dict else "["]
        for i, (key, member) in enumerate(pairs):
            todo.append(("," if i else "") + inner
                        + ("" if kind is not dict else json.dumps(_text(key, "a JSON key")) + ": "))
            todo.append((member, level + 1))
        todo.append("\n" + " " * (2 * min(level, MAX_INDENT_LEVEL))
                    + ("}" if kind is dict else "]"))
        stack.extend(reversed(todo))
    return "".join(out)


# --- the structure of --name -------------------------------------------------


def _flat_lengths(value):
    """id -> len(repr(node)) of every node of the nested tuples and lists
    ``value``, computed bottom-up without recursion."""
    lengths = {}
    open_nodes = set()
    stack = [(value, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if key in lengths:
            continue
        kind = type(node)
        if kind is not tuple and kind is not list:
            lengths[key] = len(repr(node))
        elif children_done:
            n = len(node)
            lengths[key] = (2 + sum(lengths[id(child)] for child in node) + 2 * max(n - 1, 0)
                            + (kind is tuple and n == 1))
            open_nodes.discard(key)
        elif key in open_nodes:
            raise ValueError("a recursive structure cannot be printed")
        else:
            open_nodes.add(key)
            stack.append((node, True))
            stack.extend((child, False) for child in node)
    return lengths


def _pformat_str(text, indent, allowance, top, width):
    """pprint's layout of a str too long for its line (its _pprint_str):
    split at line breaks and after whitespace, one piece a line."""
    if not text:
        return repr(text)
    chunks = []
    lines = text.splitlines(True)
    if top:
        indent += 1
        allowance += 1
    max_width1 = max_width = width - indent
    rep = ""
    for i, line in enumerate(lines):
        rep = repr(line)
        if i == len(lines) - 1:
            max_width1 -= allowance
        if len(rep) <= max_width1:
            chunks.append(rep)
            continue
        parts = re.findall(r"\S*\s*", line)
        parts.pop()   # the empty match at the end
        max_width2 = max_width
        current = ""
        for j, part in enumerate(parts):
            candidate = current + part
            if j == len(parts) - 1 and i == len(lines) - 1:
                max_width2 -= allowance
            if len(repr(candidate)) > max_width2:
                if current:
                    chunks.append(repr(current))
                current = part
            else:
                current = candidate
        if current:
            chunks.append(repr(current))
    if len(chunks) == 1:
        return rep
    joined = ("\n" + " " * indent).join(chunks)
    return f"({joined})" if top else joined


def pformat_structure(value, width=76):
    """Return ``pprint.pformat(value, width=width)`` for nested tuples and
    lists of strs and other scalars (a structure), without recursion and in
    time proportional to the output. Nesting deeper than
    ``MAX_INDENT_LEVEL`` levels is indented as that level is."""
    lengths = _flat_lengths(value)
    out = []
    stack = [(value, 0, 0, 0)]   # text, or (node, indent, allowance, level)
    while stack:
        task = stack.pop()
        if type(task) is str:
            out.append(task)
            continue
        node, indent, allowance, level = task
        kind = type(node)
        if lengths[id(node)] <= width - indent - allowance or kind not in (tuple, list, str):
            # It fits on its line (so it nests less than width levels).
            out.append(repr(node))
            continue
        if kind is str:
            out.append(_pformat_str(node, indent, allowance, level == 0, width))
            continue
        close = (",)" if len(node) == 1 else ")") if kind is tuple else "]"
        inner = min(indent + 1, MAX_INDENT_LEVEL)
        separator = ",\n" + " " * inner
        todo = ["(" if kind is tuple else "["]
        for i, child in enumerate(node):
            if i:
                todo.append(separator)
            last = i == len(node) - 1
            todo.append((child, inner, allowance + len(close) if last else 1, level + 1))
        todo.append(close)
        stack.extend(reversed(todo))
    return "".join(out)


# --- --dot -------------------------------------------------------------------


def _dot_quote(text):
    """``text`` as a double-quoted DOT string that Graphviz reads back as
    ``text`` (escaped quotes, backslashes and line breaks)."""
    text = text.replace("\\", "\\\\").replace('"', '\\"')
    text = text.replace("\r", "\\r").replace("\n", "\\n")
    return '"' + text + '"'


def _dot_string(text):
    """``text`` as a DOT label that Graphviz shows verbatim."""
    # Graphviz reads HTML entities in strings; keep a literal '&' literal.
    return _dot_quote(text).replace("&", "&amp;")


def dot_id_text(name):
    """Return the text that the ``--dot`` node ID of ``name`` stands for.

    IDs escape as ``display_name`` does: a backslash is doubled, then each
    unprintable character (a control character, a line separator, a lone
    surrogate, which UTF-8 DOT source cannot carry...) is written as its
    Python escape (``\\x1b``, ``\\n``, ``\\ud800``).  The mapping is one
    to one, so distinct names are distinct IDs; a name of printable
    characters without backslashes is its own ID.  IDs are never displayed
    (every node has a label).
    """
    text = _text(name, "name").replace("\\", "\\\\")
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else display_name(c)[1:-1] for c in text)


def _dot_id(name):
    return _dot_quote(dot_id_text(name))


def dot_label(d, dtype_cls):
    """Return the text of descriptor ``d``'s node in ``--dot`` output.

    The name on the first line (as ``display_name`` shows it), then the
    tree view's description; a
    block-scaled format's description is split into its parts, one a line
    (``block-scaled``, its planes, its bits per element), to keep the node
    narrow.
    """
    text = describe(d, dtype_cls)
    if _contract(d) == "block-scaled":
        text = text.replace(", ", "\n")
    return f"{display_name(d.name)}\n{text}"


def render_dot(descriptors, dtype_cls):
    """Return Graphviz (DOT) source of the hierarchy of ``descriptors``.

    Left to right from ``Any``. One node per descriptor, its ID the
    registered name, labelled with the name and the tree view's description
    (see ``dot_label``); categories are ellipses, simple dtypes boxes,
    compound dtypes ``component`` shapes, block-scaled dtypes ``box3d``
    shapes. A solid edge runs from each supertype to each of its direct
    members. A dashed grey arrow points from a compound dtype to each of its
    planes, labelled with the plane's role: ``element``, then
    ``scale per 32`` (the level's block) or ``scale per whole`` for a
    block-scaled dtype; ``plane <i>`` otherwise. It is written as an edge
    from the plane to the compound dtype drawn backwards (``dir=back``), so
    that it ranks the compound dtype after its planes: the formats are laid
    out in a column right of the simple dtypes they are made of, and their
    plane edges run from one column to the next instead of folding back
    across the hierarchy.
    """
    shapes = {
        "category": "ellipse",
        "simple": "box",
        "compound": "component",
        "block-scaled": "box3d",
    }
    lines = [
        "digraph stride_weave_dtypes {",
        "    rankdir=LR;",
        '    node [fontname="Helvetica", fontsize=11];',
        '    edge [fontname="Helvetica", fontsize=9];',
    ]
    for d in descriptors:
        kind = _contract(d)
        label = dot_label(d, dtype_cls)
        lines.append(
            f"    {_dot_id(d.name)} [shape={shapes.get(kind, 'box')}, "
            f"label={_dot_string(label)}];"
        )
    present = {id(d) for d in descriptors}
    for d in descriptors:
        parent = d.supertype
        if parent is not None and id(parent) in present:
            lines.append(f"    {_dot_id(parent.name)} -> {_dot_id(d.name)};")
    for d in descriptors:
        if not d.is_compound():
            continue
        planes = d.simple_types
        if _contract(d) == "block-scaled":
            roles = ["element"] + [f"scale per {_block_text(level)}" for level in d.levels]
        else:
            roles = [f"plane {i}" for i in range(len(planes))]
        for plane, role in zip(planes, roles):
            lines.append(
                f"    {_dot_id(plane.name)} -> {_dot_id(d.name)} [dir=back, "
                f"style=dashed, color=gray40, fontcolor=gray30, "
                f"label={_dot_string(role)}];"
            )
    lines.append("}")
    return lines


# --- entry point ---------------------------------------------------------------


def _encoding(stream):
    # A stream without an encoding (io.StringIO) takes any str.
    return getattr(stream, "encoding", None) or "utf-8"


def _can_encode(stream, text):
    try:
        text.encode(_encoding(stream))
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def _parser(prog="python -m stride_weave"):
    parser = argparse.ArgumentParser(
        prog=prog,
        description=(
            "Print every registered stride-weave dtype descriptor (built-in and "
            "extension). By default as a tree: categories form the hierarchy, "
            "with Any at the root; each descriptor shows its kind and width "
            "(simple: bits; compound: its planes by name; block-scaled: its "
            "element and scale planes with their block sizes, and its bits per "
            "element). "
            "Compound dtypes without a supertype are listed under "
            "'(no supertype)'."
        ),
    )
    form = parser.add_mutually_exclusive_group()
    form.add_argument(
        "--json",
        action="store_true",
        help="print the graph as JSON instead: for every registered descriptor "
        "its name, kind, class, whether it is built-in, supertype, bits, planes, "
        "element, levels, bits per element and foreign equivalents (null where "
        "a field does not apply)",
    )
    form.add_argument(
        "--dot",
        action="store_true",
        help="print Graphviz source of the hierarchy instead (render it with, "
        "for example, 'dot -Tsvg'); compound dtypes get dashed edges to their "
        "planes",
    )
    parser.add_argument(
        "--import",
        dest="imports",
        action="append",
        default=[],
        metavar="MODULE",
        help="import MODULE (a dotted module name such as 'mypkg.formats', "
        "not a file name: found on sys.path, which includes the current "
        "directory) before printing, so that the descriptors it registers are "
        "shown; repeatable. A module that raises while it is imported ends the "
        "command with exit status 3",
    )
    parser.add_argument(
        "--traceback",
        action="store_true",
        help="when a module given to --import raises, print the full traceback "
        "(by default: the exception and the line of the module that raised it)",
    )
    parser.add_argument(
        "--name",
        metavar="NAME",
        help="print only the descriptor registered under NAME, with its "
        "supertypes and its structure (with --json: its record plus "
        "'supertypes' and 'structure')",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"stride-weave {_version()}",
        help="print the installed stride-weave version and exit",
    )
    parser.add_argument(
        "--ascii",
        action="store_true",
        help="draw the tree with ASCII characters only (chosen automatically "
        "when standard output cannot encode the box-drawing characters); "
        "applies to the tree view only",
    )
    parser.add_argument(
        "--promotions",
        action="store_true",
        help="print the default promotion lattice instead of the graph: each "
        "dtype with the dtypes directly above it, then the dtypes that take "
        "part in no implicit promotion and why (with --json or --dot: as JSON "
        "or Graphviz source)",
    )
    parser.add_argument(
        "--lattice",
        metavar="MODULE:ATTRIBUTE",
        help="with --promotions or --promote: the PromotionLattice that "
        "MODULE (a dotted module name, imported first) holds as ATTRIBUTE "
        "(dotted for an attribute of an attribute), instead of the default "
        "lattice; a module that raises while it is imported ends the command "
        "with exit status 3",
    )
    parser.add_argument(
        "--promote",
        nargs=2,
        metavar=("A", "B"),
        help="print the dtype an operation on the dtypes named A and B "
        "produces (their join in the default lattice, or in --lattice's); "
        "when they have none, 'no promotion:' and why, with exit status 4 "
        "(with --json: a document with 'join' and 'error')",
    )
    parser.add_argument(
        "--mappings",
        action="store_true",
        help="end each simple dtype's line in the tree with its equivalents in "
        "numpy, DLPack, Arrow, PEP 3118 and torch (--json always includes "
        "them); applies to the tree view only",
    )
    return parser


def _version():
    from stride_weave import __version__

    return __version__


#: The exit status when a module given to ``--import`` raised while it was
#: imported (0: printed; 1: standard output closed early; 2: usage error).
IMPORT_FAILED = 3


def _file_hint(argument):
    """What to give ``--import`` for ``argument`` when it is a file name or
    a path (``goodmod.py``, ``./goodmod.py``, ``src/mypkg``) rather than a
    module name: the text of a suggestion, or None when it is neither.

    The module name is the file's name without ``.py``, preceded by the
    packages (directories with an ``__init__.py``) that hold it; the
    directory above the outermost one must be on the module search path.
    """
    stem, ext = os.path.splitext(argument)
    if ext != ".py" and "/" not in argument and os.sep not in argument:
        return None
    target = os.path.abspath(stem if ext == ".py" else argument)
    parts = [os.path.basename(target)]
    if parts[0] == "__init__":
        target = os.path.dirname(target)
        parts = [os.path.basename(target)]
    root = os.path.dirname(target)
    while os.path.isfile(os.path.join(root, "__init__.py")) and root != os.path.dirname(root):
        parts.insert(0, os.path.basename(root))
        root = os.path.dirname(root)
    if not all(part.isidentifier() for part in parts):
        return None
    name = ".".join(parts)
    if root == os.getcwd():
        return f"use --import {name}"
    shown = os.path.relpath(root)
    if shown.startswith(os.pardir):
        shown = root
    return (f"use --import {name} with {shown} on PYTHONPATH (or run the "
            f"command from that directory)")


def _user_frames(tb):
    """The frames of ``tb`` from the imported module's own code on: the
    frames of this module and of the import machinery before it are left
    out."""
    frames = traceback.extract_tb(tb)
    machinery = (os.path.abspath(__file__), os.path.abspath(importlib.__file__))
    i = 0
    while i < len(frames) and (frames[i].filename.startswith("<frozen ")
                               or os.path.abspath(frames[i].filename) in machinery):
        i += 1
    return frames[i:]


def _report_import_failure(prog, module, exc, full_traceback, err):
    """Write why importing ``module`` failed to ``err``: the whole traceback
    with ``full_traceback``, else the exception and where the module's code
    raised it (the module's own line and, when the exception came from code
    it called, the line that raised)."""
    if full_traceback:
        print(f"{prog}: error: --import {module}: the module raised an "
              f"exception while it was imported; the full traceback:", file=err)
        traceback.print_exception(exc, file=err)
        return
    print(f"{prog}: error: --import {module}: the module raised an exception "
          f"while it was imported:", file=err)
    frames = _user_frames(exc.__traceback__)
    shown = frames[:1] + frames[-1:] if len(frames) > 1 else frames
    for j, frame in enumerate(traceback.StackSummary.from_list(shown).format()):
        if j == 1 and len(frames) > 2:
            print("  ...", file=err)
        err.write(frame)
    err.write("".join(traceback.format_exception_only(exc)))
    print("(run with --traceback for the full traceback)", file=err)


def _import_modules(parser, modules, full_traceback=False):
    """Import each of ``modules`` in order. A name that is not a module name,
    or a module that cannot be found, is a usage error naming it (with the
    module name to give instead of a file name or a path). A module whose
    own code raises is reported briefly (in full with ``full_traceback``)
    and ends the command: return ``IMPORT_FAILED`` then, else None."""
    if modules and "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    for module in modules:
        hint = _file_hint(module)
        if not module or module.startswith(".") or not all(
            part.isidentifier() for part in module.split(".")
        ):
            parser.error(
                f"--import: expected a dotted module name such as "
                f"'mypackage.dtypes', got {module!r}"
                + (f", a file name or a path: {hint}" if hint else "")
            )
        if hint and os.path.isfile(module):
            parser.error(f"--import {module}: expected a module name, not a "
                         f"file name: {hint}")
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as e:
            missing = e.name or ""
            if module == missing or module.startswith(missing + "."):
                parser.error(f"--import {module}: no module named {missing!r} "
                             f"on sys.path (the current directory included)"
                             + (f"; a module name has no .py: {hint}" if hint else ""))
            _report_import_failure(parser.prog, module, e, full_traceback, sys.stderr)
            return IMPORT_FAILED
        except (Exception, SystemExit) as e:
            # The module's own code failed (SystemExit included: a script
            # that exits at import ends this command with the same status
            # as any other failing module). KeyboardInterrupt propagates.
            _report_import_failure(parser.prog, module, e, full_traceback, sys.stderr)
            return IMPORT_FAILED
    return None


def main(argv=None, prog="python -m stride_weave"):
    """Print the registered descriptor graph; return the exit status.

    ``argv`` is the argument list (default: ``sys.argv[1:]``): no option for
    the tree view, ``--json`` for JSON, ``--dot`` for Graphviz source,
    ``--ascii`` for an ASCII-only tree, ``--mappings`` for the foreign
    equivalents in the tree, ``--import MODULE`` (repeatable) to import
    modules that register descriptors first, ``--name NAME`` for one
    descriptor with its structure, ``--version`` for the version, ``--help``
    for help; ``--promotions`` for the default promotion lattice (or with
    ``--lattice MODULE:ATTRIBUTE`` another one), ``--promote A B`` for the
    join of two dtypes. ``prog`` is the command name shown in usage
    messages. Returns 0, 1 when standard output was closed early (``... |
    head``), 3 (``IMPORT_FAILED``) when a module given to ``--import`` or
    ``--lattice`` raised while it was imported (reported briefly on stderr,
    in full with ``--traceback``), or 4 when the two dtypes of
    ``--promote`` have no join;
    a usage error (an unknown option, a module or name that is not found, a
    file name given to ``--import``) exits with status 2.
    """
    prog = _text(prog, "prog")
    if argv is not None:
        argv = [_text(arg, "each argument") for arg in argv]
    parser = _parser(prog)
    args = parser.parse_args(argv)
    if args.ascii and (args.json or args.dot):
        parser.error("--ascii applies to the tree view only, not to --json or --dot")
    if args.mappings and (args.json or args.dot):
        parser.error("--mappings applies to the tree view only (--json always "
                     "includes the mappings; --dot shows none)")
    if args.name is not None and args.dot:
        parser.error("--name applies to the tree view and --json, not to --dot")
    if args.promotions and (args.name is not None or args.mappings):
        parser.error("--promotions shows the promotion lattice: it does not "
                     "combine with --name or --mappings")
    _check_lattice_options(parser, args)
    status = _import_modules(parser, args.imports, args.traceback)
    if status is not None:
        return status
    lattice = None
    if args.lattice is not None:
        from stride_weave import _promotions_view as view

        try:
            lattice = view.load_lattice(parser, args.lattice, args.traceback,
                                        sys.stderr, IMPORT_FAILED)
        except view.LatticeLoadFailed as failed:
            return failed.status
    pair = None
    if args.promote is not None:
        pair = [_named_dtype(parser, "--promote", name) for name in args.promote]
    selected = None
    if args.name is not None:
        try:
            selected = DType.from_name(args.name)
        except LookupError as e:
            parser.error(f"--name: {_as_command_line(e.args[0] if e.args else str(e))}")

    try:
        with _every_digit():
            if pair is not None:
                return _print_promote(lattice, args.lattice, pair, args.json,
                                      args.ascii, sys.stdout)
            if args.promotions:
                _print_promotions(args.json, args.dot, args.ascii, sys.stdout,
                                  lattice, args.lattice)
            elif selected is not None:
                _print_one(selected, args.json, args.ascii, sys.stdout)
            elif args.json:
                _print_json(sys.stdout)
            elif args.dot:
                _print_dot(sys.stdout)
            else:
                _print_graph(args.ascii, sys.stdout, args.mappings)
    except BrokenPipeError:
        # The reader went away (`... | head`): stop quietly, and keep Python
        # from reporting the failed flush of stdout at exit.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return 1
    return 0


@contextlib.contextmanager
def _every_digit():
    """Let widths print in full: a registered width may have more decimal
    digits than the interpreter converts by default (a guard meant for
    parsing untrusted input, not for printing the registry)."""
    get_limit = getattr(sys, "get_int_max_str_digits", None)
    if get_limit is None:
        yield
        return
    old = get_limit()
    sys.set_int_max_str_digits(0)
    try:
        yield
    finally:
        sys.set_int_max_str_digits(old)


def _print_json(out):
    # ASCII: any name is safe on any terminal and in any file.
    out.write(json_text(graph_data(DType.registered(), DType)))
    out.write("\n")
    out.flush()


def _print_lines(lines, out):
    encoding = _encoding(out)
    for line in lines:
        if not _can_encode(out, line):
            # A name the terminal cannot show: escape it rather than fail.
            line = line.encode(encoding, "backslashreplace").decode(encoding)
        print(line, file=out)
    out.flush()


def descriptor_detail(d, dtype_cls, ascii_only=False):
    """Return the ``--name`` view of descriptor ``d`` as a list of lines.

    The tree line (name and description), then its class (its qualified
    name, shown as ``display_name`` shows names), whether it is built-in,
    its supertypes nearest first, and its structure (see
    ``DType.structure``), pretty-printed (``pformat_structure``).
    """
    kind = "built-in" if is_builtin(d, dtype_cls) else "extension"
    chain = ", ".join(display_name(c.name, ascii_only) for c in d.supertypes())
    qualname = display_name(_class_name(d, "__qualname__"), ascii_only)
    lines = [
        f"{display_name(d.name, ascii_only)}  {describe(d, dtype_cls, ascii_only)}",
        f"  class:      {qualname} ({kind})",
        f"  supertypes: {chain or '(none)'}",
        "  structure:",
    ]
    text = pformat_structure(d.structure(), width=76)
    lines.extend("    " + line for line in text.splitlines())
    return lines


def _print_one(d, as_json, ascii_requested, out):
    if as_json:
        record = descriptor_data(d, DType)
        record["supertypes"] = [c.name for c in d.supertypes()]
        record["structure"] = d.structure()
        out.write(json_text(record))
        out.write("\n")
        out.flush()
        return
    ascii_only = ascii_requested or not _can_encode(out, "".join(_UNICODE.values()))
    _print_lines(descriptor_detail(d, DType, ascii_only), out)


def _print_dot(out):
    _print_lines(render_dot(DType.registered(), DType), out)


def _print_graph(ascii_requested, out, mappings=False):
    descriptors = DType.registered()
    ascii_only = ascii_requested or not _can_encode(out, "".join(_UNICODE.values()))
    n_ext = sum(1 for d in descriptors if not is_builtin(d, DType))
    print(
        f"stride-weave dtype graph: {len(descriptors)} registered descriptors "
        f"({len(descriptors) - n_ext} built-in, {n_ext} extension)",
        file=out,
    )
    print(file=out)
    _print_lines(render(descriptors, DType, ascii_only=ascii_only, mappings=mappings), out)


def _check_lattice_options(parser, args):
    """Usage errors of --lattice and --promote (exit status 2)."""
    if args.promote is not None and (args.promotions or args.name is not None
                                     or args.mappings or args.dot):
        parser.error("--promote answers for one pair: it does not combine with "
                     "--promotions, --name, --mappings or --dot")
    if args.lattice is not None and not args.promotions and args.promote is None:
        parser.error("--lattice names the lattice that --promotions shows or "
                     "--promote asks: give one of them")


def _named_dtype(parser, option, name):
    """The descriptor registered under ``name``; a usage error naming
    ``option`` (with the names it suggests) when there is none."""
    try:
        return DType.from_name(name)
    except LookupError as e:
        parser.error(f"{option}: {e.args[0] if e.args else e}")


def _print_promote(lattice, spec, pair, as_json, ascii_requested, out):
    from stride_weave import _promotions_view as view

    a, b = pair
    if as_json:
        data = view.promote_data(lattice, a, b, spec)
        out.write(json_text(data))
        out.write("\n")
        out.flush()
        joined = data["join"] is not None
    else:
        ascii_only = ascii_requested or not _can_encode(out, "".join(_UNICODE.values()))
        lines = view.promote_lines(lattice, a, b, ascii_only)
        _print_lines(lines, out)
        joined = not lines[0].startswith("no promotion:")
    return 0 if joined else view.NO_JOIN


def _print_promotions(as_json, as_dot, ascii_requested, out, lattice=None,
                      spec=None):
    from stride_weave import _promotions_view as view

    default, descriptors = view.lattice_and_descriptors()
    lattice = default if lattice is None else lattice
    if as_json:
        out.write(json.dumps(view.promotions_data(lattice, descriptors), indent=2))
        out.write("\n")
        out.flush()
    elif as_dot:
        _print_lines(view.render_promotions_dot(lattice, descriptors), out)
    else:
        ascii_only = ascii_requested or not _can_encode(out, "".join(_UNICODE.values()))
        title = ("Default promotion lattice" if spec is None
                 else f"Promotion lattice {dot_id_text(spec)}")
        print(f"{title}: {len(lattice.dtypes)} dtypes, "
              f"{len(lattice.edges)} edges; under each dtype, the dtypes it "
              f"promotes to directly", file=out)
        print(file=out)
        _print_lines(view.render_promotions(lattice, descriptors, ascii_only), out)


if __name__ == "__main__":
    raise SystemExit(main())
