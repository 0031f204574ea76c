"""``python -m stride_weave --promotions``: the default promotion lattice.

Three forms, as for the descriptor graph (``stride_weave._cli``):

- the **tree view**: each dtype that nothing promotes to starts a tree, and
  under each dtype are the dtypes directly above it (its covers: nothing
  lies in between), so every path down a tree is a chain of promotions. A
  dtype reached a second time is printed once more, marked ``(see above)``,
  without its subtree. Then the registered dtypes that take part in no
  implicit promotion, each with the reason::

      Bool
      ├── Int8
      │   └── Int32
      ...
      No implicit promotion:
        E8M0  a floating-point format narrower than 16 bits: ...

- ``--json``: ``promotions_data``;
- ``--dot``: Graphviz source, the lower dtype below the upper one
  (``render_promotions_dot``).

Names are shown as the other views show them (``display_name``,
``_dot_id``, ``_dot_string``): control characters and line breaks escaped.
"""

from stride_weave._cli import (
    _ASCII,
    _UNICODE,
    _dot_id,
    _dot_string,
    display_name,
)
from stride_weave._dtypes import DType, _promotion_exclusion, default_lattice

#: Version of the ``--promotions --json`` document format.
PROMOTIONS_JSON_VERSION = 1

NO_PROMOTION = "No implicit promotion:"
NO_EDGE = "no promotion edge is declared for it"


def excluded(lattice, descriptors):
    """[(dtype, reason)] for the registered dtypes of values (not
    categories) that are not in ``lattice``, in registration order."""
    inside = set(lattice.dtypes)
    result = []
    for d in descriptors:
        if d.is_category() or d in inside:
            continue
        result.append((d, _promotion_exclusion(d) or NO_EDGE))
    return result


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
        lines.append(NO_PROMOTION)
        for d, reason in outside:
            lines.append(f"  {display_name(d.name, ascii_only)}  {reason}")
    return lines


def promotions_data(lattice, descriptors):
    """Return the ``--promotions --json`` document (a dict)::

        {"format_version": 1,
         "dtypes": [name, ...],                # the lattice's order
         "edges": [[lower, upper], ...],       # covers: nothing in between
         "joins": [[a, b, join], ...],         # every pair a before b that
                                               # has a join (a != b)
         "no_promotion": [{"name": ..., "reason": ...}, ...]}
    """
    dtypes = lattice.dtypes
    joins = []
    for i, a in enumerate(dtypes):
        for b in dtypes[i + 1:]:
            try:
                joins.append([a.name, b.name, lattice.promote_types(a, b).name])
            except TypeError:
                pass
    return {
        "format_version": PROMOTIONS_JSON_VERSION,
        "dtypes": [d.name for d in dtypes],
        "edges": [[lower.name, upper.name] for lower, upper in lattice.edges],
        "joins": joins,
        "no_promotion": [{"name": d.name, "reason": reason}
                         for d, reason in excluded(lattice, descriptors)],
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
