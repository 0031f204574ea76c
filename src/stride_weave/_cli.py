"""``python -m stride_weave.dtypes``: print the registered descriptor graph.

The categories form the hierarchy (``Any`` at the root, ``Floating`` and
``Integer`` below it). Every registered descriptor, built-in or extension, is
printed under its immediate supertype with its kind and width: a simple dtype
with its width in bits, a compound dtype with its planes by name, a
block-scaled format with its element plane, each scale plane with its block
size, and its storage cost in bits per element. Compound
dtypes without a supertype are listed under a separate ``(no supertype)``
heading. Within one parent, descriptors appear in registration order.

Each line is ``<tree prefix><name>  <kind details>``, for example::

    Any  category
    ├── Bool  simple, 8 bits
    ├── Floating  category
    │   ├── Float32  simple, 32 bits
    ├── MXFP4  block-scaled, planes E2M1 + E8M0 per 32, 4.25 bits per element
    └── NVFP4  block-scaled, planes E2M1 + E4M3 per 16 + Float32 per whole, 4.5 + 32/n bits per element

where ``n`` is the number of elements of the tensor.
"""

import argparse
import os
import sys

NO_SUPERTYPE = "(no supertype)"

_UNICODE = {"tee": "├── ", "last": "└── ", "pipe": "│   ", "space": "    "}
_ASCII = {"tee": "|-- ", "last": "`-- ", "pipe": "|   ", "space": "    "}


def display_name(name, ascii_only=False):
    """Return ``name`` as printed.

    A name is printed as is unless it holds whitespace or unprintable
    characters, which are shown as a Python string literal (``repr``) so that
    one descriptor is always one line; with ``ascii_only``, a non-ASCII name is
    shown as its ``ascii()`` literal.
    """
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


def _block_scaled_text(d, ascii_only):
    planes = [display_name(d.element.name, ascii_only)]
    for level in d.levels:
        block = "whole" if level.is_whole() else str(level.block)
        planes.append(f"{display_name(level.scale.name, ascii_only)} per {block}")
    return (
        f"block-scaled, planes {' + '.join(planes)}, "
        f"{_bits_per_element_text(d.bits_per_element)} bits per element"
    )


def _contract(d):
    from stride_weave._dtypes import BlockScaledDType

    if isinstance(d, BlockScaledDType):
        return "block-scaled"
    if d.is_category():
        return "category"
    if d.is_simple():
        return "simple"
    if d.is_compound():
        return "compound"
    return "descriptor"


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
    cls_name = type(d).__name__
    if cls_name not in (
        "DTypeCategory", "SimpleDType", "CompoundDType", "BlockScaledDType"
    ):
        tags.append(display_name(cls_name, ascii_only))
    if getattr(dtype_cls, d.name, None) is not d:
        tags.append("extension")
    if tags:
        text += "  [" + ", ".join(tags) + "]"
    return text


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


def render(descriptors, dtype_cls, ascii_only=False):
    """Return the tree of ``descriptors`` as a list of lines."""
    glyphs = _ASCII if ascii_only else _UNICODE
    roots, orphans, children = build_tree(descriptors)
    lines = []

    def walk(d, prefix, is_last, top):
        label = f"{display_name(d.name, ascii_only)}  {describe(d, dtype_cls, ascii_only)}"
        if top:
            lines.append(label)
            child_prefix = ""
        else:
            branch = glyphs["last"] if is_last else glyphs["tee"]
            lines.append(prefix + branch + label)
            child_prefix = prefix + (glyphs["space"] if is_last else glyphs["pipe"])
        kids = children.get(id(d), ())
        for i, kid in enumerate(kids):
            walk(kid, child_prefix, i == len(kids) - 1, False)

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


def _encoding(stream):
    # A stream without an encoding (io.StringIO) takes any str.
    return getattr(stream, "encoding", None) or "utf-8"


def _can_encode(stream, text):
    try:
        text.encode(_encoding(stream))
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def main(argv=None):
    """Print the registered descriptor graph; return the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m stride_weave.dtypes",
        description=(
            "Print every registered stride-weave dtype descriptor (built-in and "
            "extension) as a tree: categories form the hierarchy, with Any at "
            "the root; each descriptor shows its kind and width (simple: bits; "
            "compound: its planes by name; block-scaled: its element and "
            "scale planes with their block sizes and its bits per element). Compound dtypes without a "
            "supertype are listed under '(no supertype)'."
        ),
    )
    parser.add_argument(
        "--ascii",
        action="store_true",
        help="draw the tree with ASCII characters only (chosen automatically "
        "when standard output cannot encode the box-drawing characters)",
    )
    args = parser.parse_args(argv)

    try:
        _print_graph(args.ascii, sys.stdout)
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


def _print_graph(ascii_requested, out):
    from stride_weave._dtypes import DType

    descriptors = DType.registered()
    ascii_only = ascii_requested or not _can_encode(out, "".join(_UNICODE.values()))
    n_ext = sum(1 for d in descriptors if getattr(DType, d.name, None) is not d)
    print(
        f"stride-weave dtype graph: {len(descriptors)} registered descriptors "
        f"({len(descriptors) - n_ext} built-in, {n_ext} extension)",
        file=out,
    )
    print(file=out)
    encoding = _encoding(out)
    for line in render(descriptors, DType, ascii_only=ascii_only):
        if not _can_encode(out, line):
            # A name the terminal cannot show: escape it rather than fail.
            line = line.encode(encoding, "backslashreplace").decode(encoding)
        print(line, file=out)
    out.flush()


if __name__ == "__main__":
    raise SystemExit(main())
