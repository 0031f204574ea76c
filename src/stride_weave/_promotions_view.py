"""``python -m stride_weave --promotions``: a promotion lattice; ``--promote``.

The lattice shown is the default one, or with ``--lattice MODULE:ATTRIBUTE``
a ``PromotionLattice`` that a module holds (``load_lattice``). Three forms,
as for the descriptor graph (``stride_weave._cli``):

- the **tree view**: each dtype that nothing promotes to starts a tree, and
  under each dtype are the dtypes directly above it (its covers: nothing
  lies in between), so every path down a tree is a chain of promotions. A
  dtype reached a second time is printed once more, marked ``(see above)``,
  without its subtree. Then the registered dtypes that take part in no
  promotion, each with the reason, and for a lattice of one's own its
  scalar defaults and the pairs it keeps undefined::

      Bool
      ├── Int8
      │   └── Int32
      ...
      No implicit promotion:
        E8M0  a floating-point format narrower than 16 bits: ...

- ``--json``: ``promotions_data``;
- ``--dot``: Graphviz source, the lower dtype below the upper one
  (``render_promotions_dot``).

``--promote A B`` answers for one pair (``promote_view``): the join of the
dtypes named ``A`` and ``B`` in the lattice, or why there is none (exit
status ``NO_JOIN``).

Names are shown as the other views show them (``display_name``,
``_dot_id``, ``_dot_string``): control characters and line breaks escaped.
"""

import importlib
import os
import sys
import traceback

from stride_weave._cli import (
    _ASCII,
    _UNICODE,
    _dot_id,
    _dot_string,
    _user_frames,
    display_name,
)
from stride_weave._dtypes import (
    DType,
    PromotionError,
    PromotionLattice,
    _promotion_exclusion,
    default_lattice,
    promote_types,
)

#: Version of the ``--promotions --json`` document format.
PROMOTIONS_JSON_VERSION = 1

#: Version of the ``--promote --json`` document format.
PROMOTE_JSON_VERSION = 1

#: The exit status of ``--promote`` when the two dtypes have no join (0:
#: they have one; 2: a usage error; 3: a module raised while imported).
NO_JOIN = 4

NO_PROMOTION = "No implicit promotion:"
NO_EDGE = "no promotion edge is declared for it"
NO_EDGE_HERE = "it has no edge in this lattice"
SCALAR_KINDS = ("bool", "int", "float", "complex")


def excluded(lattice, descriptors):
    """[(dtype, reason)] for the registered dtypes of values (not
    categories) that are not in ``lattice``, in registration order: for the
    default lattice, why its admission rule refuses each (or that no edge
    is declared for it); for a lattice of one's own, that it has no edge
    there."""
    inside = set(lattice.dtypes)
    result = []
    for d in descriptors:
        if d.is_category() or d in inside:
            continue
        if lattice.is_default:
            result.append((d, _promotion_exclusion(d) or NO_EDGE))
        else:
            result.append((d, NO_EDGE_HERE))
    return result


def _own_rules(lattice, ascii_only):
    """The tree view's lines on what a lattice of one's own adds: its
    scalar defaults (and whether a scalar of a higher kind promotes), and
    the pairs it keeps undefined."""
    lines = []
    defaults = lattice.scalar_defaults
    if defaults:
        named = ", ".join(f"{kind} {display_name(defaults[kind].name, ascii_only)}"
                          for kind in SCALAR_KINDS if kind in defaults)
        lines.append(f"Scalar defaults: {named}")
    lines.append("Mixed scalars: " + (
        "a Python scalar of a kind above the operands' promotes them to their "
        "join with its kind's default" if lattice.mixed_scalars else
        "a Python scalar of a kind above the operands' is a PromotionError"))
    if lattice.undefined:
        lines.append("Kept undefined:")
        for a, b in lattice.undefined:
            lines.append(f"  {display_name(a.name, ascii_only)} and "
                         f"{display_name(b.name, ascii_only)}")
    return lines


def _covers(lattice):
    """{dtype: [dtypes directly above it]} and the dtypes with nothing
    below, both in the lattice's order."""
    above = {d: [] for d in lattice.dtypes}
    has_lower = set()
    for lower, upper in lattice.edges:
        above[lower].append(upper)
        has_lower.add(upper)
    roots = [d for d in lattice.dtypes if d not in has_lower]
    return above, roots


def render_promotions(lattice, descriptors, ascii_only=False):
    """Return the tree view of ``lattice`` as a list of lines (see the
    module's docstring); ``descriptors`` are the registered ones, for the
    list of those that take part in no implicit promotion."""
    glyphs = _ASCII if ascii_only else _UNICODE
    above, roots = _covers(lattice)
    shown = set()
    lines = []
    for root in roots:
        # Depth-first with an explicit stack (a chain may be long).
        stack = [(root, "", True, True)]
        while stack:
            d, prefix, is_last, top = stack.pop()
            label = display_name(d.name, ascii_only)
            again = d in shown
            if again:
                label += "  (see above)"
            if top:
                lines.append(label)
                child_prefix = ""
            else:
                lines.append(prefix + (glyphs["last"] if is_last else glyphs["tee"]) + label)
                child_prefix = prefix + (glyphs["space"] if is_last else glyphs["pipe"])
            if again:
                continue
            shown.add(d)
            kids = above[d]
            stack.extend((kid, child_prefix, i == len(kids) - 1, False)
                         for i, kid in reversed(list(enumerate(kids))))
    outside = excluded(lattice, descriptors)
    if outside:
        if lines:
            lines.append("")
        if lattice.is_default:
            lines.append(NO_PROMOTION)
            for d, reason in outside:
                lines.append(f"  {display_name(d.name, ascii_only)}  {reason}")
        else:
            lines.append("No edge in this lattice:")
            for d, _reason in outside:
                lines.append(f"  {display_name(d.name, ascii_only)}")
    if not lattice.is_default:
        lines.append("")
        lines.extend(_own_rules(lattice, ascii_only))
    return lines


def promotions_data(lattice, descriptors):
    """Return the ``--promotions --json`` document (a dict)::

        {"format_version": 1,
         "dtypes": [name, ...],                # the lattice's order
         "edges": [[lower, upper], ...],       # covers: nothing in between
         "joins": [[a, b, join], ...],         # every pair a before b that
                                               # has a join (a != b)
         "no_promotion": [{"name": ..., "reason": ...}, ...],
         "is_default": bool,
         "scalar_defaults": {kind: name, ...},  # 'bool', 'int', 'float',
                                               # 'complex'
         "mixed_scalars": bool,
         "undefined": [[a, b], ...]}           # pairs kept undefined
    """
    dtypes = lattice.dtypes
    joins = []
    for i, a in enumerate(dtypes):
        for b in dtypes[i + 1:]:
            try:
                joins.append([a.name, b.name, lattice.promote_types(a, b).name])
            except TypeError:
                pass
    defaults = lattice.scalar_defaults
    return {
        "format_version": PROMOTIONS_JSON_VERSION,
        "dtypes": [d.name for d in dtypes],
        "edges": [[lower.name, upper.name] for lower, upper in lattice.edges],
        "joins": joins,
        "no_promotion": [{"name": d.name, "reason": reason}
                         for d, reason in excluded(lattice, descriptors)],
        "is_default": lattice.is_default,
        "scalar_defaults": {kind: defaults[kind].name
                            for kind in SCALAR_KINDS if kind in defaults},
        "mixed_scalars": lattice.mixed_scalars,
        "undefined": [[a.name, b.name] for a, b in lattice.undefined],
    }


def render_promotions_dot(lattice, descriptors):
    """Return Graphviz (DOT) source of ``lattice``: one box per dtype, an
    edge from each dtype to each dtype directly above it, drawn upwards
    (``rankdir=BT``), the integers and the floating-point dtypes side by
    side; the dtypes that take part in no implicit promotion in a dashed
    cluster of their own, without edges."""
    lines = [
        "digraph stride_weave_promotions {",
        "    rankdir=BT;",
        "    newrank=true;",
        '    node [shape=box, fontname="Helvetica", fontsize=11];',
        '    edge [arrowsize=0.7];',
    ]
    for d in lattice.dtypes:
        lines.append(f"    {_dot_id(d.name)} [label={_dot_string(display_name(d.name))}];")
    for lower, upper in lattice.edges:
        lines.append(f"    {_dot_id(lower.name)} -> {_dot_id(upper.name)};")
    outside = excluded(lattice, descriptors)
    if outside:
        lines.append("    subgraph cluster_no_promotion {")
        lines.append(f"        label={_dot_string('no implicit promotion')};")
        lines.append('        style=dashed; fontname="Helvetica"; fontsize=10;')
        lines.append('        node [style=dashed, fontcolor=gray30, color=gray50];')
        for d, _reason in outside:
            lines.append(f"        {_dot_id(d.name)} [label={_dot_string(display_name(d.name))}];")
        # Keep the cluster compact: rows of five, the first row on top
        # (invisible edges down from each row to the next).
        names = [_dot_id(d.name) for d, _reason in outside]
        for row in range(0, len(names), 5):
            chunk = names[row:row + 5]
            if len(chunk) > 1:
                lines.append("        { rank=same; " + " ".join(chunk) + "; }")
            if row + 5 < len(names):
                lines.append(f"        {names[row + 5]} -> {names[row]} [style=invis];")
        lines.append("    }")
    lines.append("}")
    return lines


def lattice_and_descriptors():
    """The default lattice now, and the registered descriptors."""
    return default_lattice(), DType.registered()


# ---- --lattice MODULE:ATTRIBUTE -----------------------------------------------

class LatticeLoadFailed(Exception):
    """The module of ``--lattice`` raised while it was imported (reported
    on stderr already); ``status`` is the exit status."""

    def __init__(self, status):
        super().__init__(status)
        self.status = status


def _dotted(text):
    return bool(text) and all(part.isidentifier() for part in text.split("."))


def load_lattice(parser, spec, full_traceback, err, import_failed):
    """The ``PromotionLattice`` that ``spec`` (``MODULE:ATTRIBUTE``, the
    attribute possibly dotted) names, importing the module. A malformed
    spec, a module that is not found, a missing attribute or an object that
    is not a lattice is a usage error (``parser.error``, exit status 2); a
    module whose own code raises is reported briefly on ``err`` (in full
    with ``full_traceback``) and raises ``LatticeLoadFailed`` with the
    status ``import_failed``."""
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())     # as --import does
    module_name, colon, attribute = spec.partition(":")
    if not colon or not _dotted(module_name) or not _dotted(attribute):
        parser.error(f"--lattice: expected MODULE:ATTRIBUTE, a dotted module "
                     f"name and an attribute of it such as "
                     f"'myframework.dtypes:LATTICE', got {spec!r}")
    try:
        obj = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        missing = e.name or ""
        if module_name == missing or module_name.startswith(missing + "."):
            parser.error(f"--lattice {spec}: no module named {missing!r} on "
                         f"sys.path (the current directory included)")
        _report_lattice_failure(parser.prog, spec, e, full_traceback, err)
        raise LatticeLoadFailed(import_failed) from None
    except (Exception, SystemExit) as e:
        _report_lattice_failure(parser.prog, spec, e, full_traceback, err)
        raise LatticeLoadFailed(import_failed) from None
    where = module_name
    for part in attribute.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            parser.error(f"--lattice {spec}: {where} has no attribute {part!r}")
        where = f"{where}.{part}"
    if not isinstance(obj, PromotionLattice):
        parser.error(f"--lattice {spec}: expected a PromotionLattice, got an "
                     f"object of type {type(obj).__qualname__}")
    return obj


def _report_lattice_failure(prog, spec, exc, full_traceback, err):
    """Why importing the module of ``--lattice spec`` failed, on ``err``."""
    if full_traceback:
        print(f"{prog}: error: --lattice {spec}: the module raised an "
              f"exception while it was imported; the full traceback:", file=err)
        traceback.print_exception(exc, file=err)
        return
    print(f"{prog}: error: --lattice {spec}: the module raised an exception "
          f"while it was imported (run with --traceback for the full "
          f"traceback):", file=err)
    frames = _user_frames(exc.__traceback__)
    err.write("".join(traceback.StackSummary.from_list(frames[-1:]).format()))
    err.write("".join(traceback.format_exception_only(exc)))


# ---- --promote A B ---------------------------------------------------------------

def promote_view(lattice, a, b):
    """The answer of ``--promote`` for the dtypes ``a`` and ``b`` in
    ``lattice`` (None: the default lattice): ``(join, None)``, or ``(None,
    message)`` with the ``PromotionError``'s message when they have none."""
    try:
        if lattice is None:
            return promote_types(a, b), None
        return lattice.promote_types(a, b), None
    except PromotionError as e:
        return None, str(e)


def promote_data(lattice, a, b, spec):
    """The ``--promote --json`` document (a dict; ``lattice`` None: the
    default one)::

        {"format_version": 1, "lattice": "default" or MODULE:ATTRIBUTE,
         "a": name, "b": name, "join": name or null,
         "error": null or the PromotionError's message}
    """
    join, error = promote_view(lattice, a, b)
    return {
        "format_version": PROMOTE_JSON_VERSION,
        "lattice": "default" if spec is None else spec,
        "a": a.name,
        "b": b.name,
        "join": join.name if join is not None else None,
        "error": error,
    }


def promote_lines(lattice, a, b, ascii_only=False):
    """The text form of ``--promote`` (``lattice`` None: the default one):
    one line, the join's name, or ``no promotion:`` and the
    ``PromotionError``'s message."""
    join, error = promote_view(lattice, a, b)
    if join is not None:
        return [display_name(join.name, ascii_only)]
    return [f"no promotion: {error}"]
