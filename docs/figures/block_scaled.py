"""Draw the element and scale planes of MXFP4 and NVFP4 as an SVG figure.

    python docs/figures/block_scaled.py          # rewrite block-scaled.svg
    python docs/figures/block_scaled.py --check  # exit 1 if it is stale

The figure is drawn from the registered descriptors (``DType.MXFP4`` and
``DType.NVFP4``): their element, their levels and their bits per element, so
it shows what the library defines. tests/surfaces/test_docs.py checks that the
committed SVG is what this script draws.

Each panel shows a tensor of 64 elements. A cell's width is
proportional to its encoding's width in bits (a 4-bit element is 10 px), so
the area of a plane is its storage. Each scale sits under the elements it
scales, joined to them by a shaded funnel; a level whose block is ``Whole``
has one scale for the whole level below.
"""

import argparse
import pathlib
import sys

from stride_weave.dtypes import DType, SymbolicBits

OUT = pathlib.Path(__file__).resolve().with_name("block-scaled.svg")

N_ELEMENTS = 64
PX_PER_BIT = 2.5
LEFT = 20  # x of the row labels
X0 = 240  # x of the first element
ROW_H = 22
GAP = 40  # vertical space between two planes (the funnels)
FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"
# One hue per block of the innermost level: (element fill, scale fill).
PALETTE = [("#c6dbef", "#3182bd"), ("#fdd0a2", "#e6550d"),
           ("#c7e9c0", "#31a354"), ("#dadaeb", "#756bb1")]
WHOLE_FILL = "#636363"


def _num(x):
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def _text(x, y, s, size=15, anchor="start", weight="normal", fill="#222"):
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return (f'<text x="{x:g}" y="{y:g}" font-size="{size}" text-anchor="{anchor}" '
            f'font-weight="{weight}" fill="{fill}">{s}</text>')


def _rect(x, y, w, h, fill, stroke="#333", width=0.6):
    return (f'<rect x="{x:g}" y="{y:g}" width="{w:g}" height="{h:g}" fill="{fill}" '
            f'stroke="{stroke}" stroke-width="{width}"/>')


def cost_formula(d):
    """The bits-per-element sum of ``d``, term by term, checked against
    ``d.bits_per_element``: ``("4 + 8/32", "4.25")`` for MXFP4."""
    terms = [str(d.element.bits)]
    total = float(d.element.bits)
    covered = 1
    whole_bits = None
    for level in d.levels:
        if level.is_whole():
            whole_bits = level.scale.bits
            terms.append(f"{level.scale.bits}/n")
        else:
            covered *= level.block
            terms.append(f"{level.scale.bits}/{covered}")
            total += level.scale.bits / covered
    bpe = d.bits_per_element
    if whole_bits is None:
        assert bpe == total, (d, bpe, total)
        result = _num(total)
    else:
        assert isinstance(bpe, SymbolicBits), (d, bpe)
        assert (bpe.constant, bpe.whole_scale_bits) == (total, whole_bits), (d, bpe)
        result = f"{_num(total)} + {whole_bits}/n"
    return " + ".join(terms), result


def panel(d, top):
    """SVG elements of one format's panel starting at y=``top``; returns
    ``(elements, height)``."""
    out = []
    formula, result = cost_formula(d)
    levels_src = ", ".join(
        f"Level({lv.scale.name}, {'Whole' if lv.is_whole() else lv.block})" for lv in d.levels
    )
    out.append(_text(LEFT, top + 18, d.name, size=19, weight="bold"))
    out.append(_text(LEFT + 100, top + 18,
                     f"element {d.element.name}, levels {levels_src}", size=15, fill="#555"))
    y = top + 38

    # The element plane.
    ew = d.element.bits * PX_PER_BIT
    first_block = d.levels[0].block if not d.levels[0].is_whole() else N_ELEMENTS
    out.append(_text(LEFT, y + 13, "element plane", weight="bold"))
    out.append(_text(LEFT, y + 31, f"{d.element.name}, {d.element.bits} bits each",
                     size=14, fill="#555"))
    for i in range(N_ELEMENTS):
        fill = PALETTE[(i // first_block) % len(PALETTE)][0]
        out.append(_rect(X0 + i * ew, y, ew, ROW_H, fill, width=0.4))
    # Cells of the row above, as (x_left, x_right) spans, for the funnels.
    above = [(X0 + i * ew, X0 + (i + 1) * ew) for i in range(N_ELEMENTS)]
    per_cell = 1  # elements covered by one cell of the row above
    covered = 1
    for depth, level in enumerate(d.levels):
        y += ROW_H + GAP
        sw = level.scale.bits * PX_PER_BIT
        if level.is_whole():
            group = len(above)
            label2 = "1 for the whole tensor"  # Whole: the entire level below
        else:
            group = level.block
            covered *= level.block
            label2 = f"1 per {covered} elements"
        per_cell *= group
        out.append(_text(LEFT, y + 13, f"scale plane, level {depth}", weight="bold"))
        out.append(_text(LEFT, y + 31, f"{level.scale.name}, {level.scale.bits} bits,",
                         size=14, fill="#555"))
        out.append(_text(LEFT, y + 48, label2, size=14, fill="#555"))
        row = []
        for k in range(0, len(above), group):
            span_l, span_r = above[k][0], above[k + group - 1][1]
            cx = (span_l + span_r) / 2
            x = cx - sw / 2
            if level.is_whole():
                fill = WHOLE_FILL
            else:
                fill = PALETTE[(k * (per_cell // group) // first_block) % len(PALETTE)][1]
            funnel_top = y - GAP
            out.append(
                f'<polygon points="{span_l:g},{funnel_top + 2:g} {span_r:g},{funnel_top + 2:g} '
                f'{x + sw:g},{y - 2:g} {x:g},{y - 2:g}" fill="{fill}" fill-opacity="0.18" '
                f'stroke="{fill}" stroke-opacity="0.5" stroke-width="0.6"/>'
            )
            out.append(_rect(x, y, sw, ROW_H, fill))
            row.append((x, x + sw))
        above = row
    y += ROW_H + 50
    out.append(_text(LEFT, y, f"bits per element: {formula} = {result}", size=16))
    if any(lv.is_whole() for lv in d.levels):
        out.append(_text(LEFT, y + 22, f"for a tensor of n elements: {d.bits_per_element!r}",
                         size=14, fill="#555"))
        y += 22
    return out, y - top + 20


def draw(formats):
    """Return the SVG document for ``formats`` (descriptors), one panel each."""
    width = X0 + N_ELEMENTS * 4 * PX_PER_BIT + 30
    body = []
    top = 10
    for d in formats:
        elements, height = panel(d, top)
        body.extend(elements)
        top += height + 10
    body.append(_text(LEFT, top + 4,
                      f"Each panel shows a tensor of {N_ELEMENTS} elements. Cell width is "
                      f"proportional to bits ({PX_PER_BIT:g} px per bit), so a plane's area "
                      "is its storage.", size=14, fill="#555"))
    height = top + 20
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:g}" height="{height:g}" '
            f'viewBox="0 0 {width:g} {height:g}" font-family="{FONT}">')
    title = ("<title>Element and scale planes of MXFP4 and NVFP4, drawn from the "
             "registered stride-weave descriptors</title>")
    return "\n".join([head, title, _rect(0, 0, width, height, "#ffffff", stroke="none"),
                      *body, "</svg>"]) + "\n"


def main(argv=None):
    """Write (or with ``--check``, compare) docs/figures/block-scaled.svg."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true",
                    help="exit 1 if the committed SVG differs from what this script draws")
    args = ap.parse_args(argv)
    svg = draw([DType.MXFP4, DType.NVFP4])
    if args.check:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else None
        if current != svg:
            print(f"{OUT} is stale: run python {pathlib.Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(svg, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
