"""Draw the figures of the block layouts page as SVG.

    python docs/figures/block_layouts.py          # rewrite the three SVGs
    python docs/figures/block_layouts.py --check  # exit 1 if one is stale

Every position is asked of the library (``codecs.plane_shapes`` and
``codecs.scale_index``), so the figures show what the codecs do:

- layout-grids.svg: a 64 x 48 weight in NVFP4_16x16 blocks, laid on the
  matrix (axes (-2, -1)) and on its transpose (axes (-1, -2)), each block
  labelled with the index of its scale in the compact plane;
- layout-rowcol.svg: MXFP8 row-wise (1x32 blocks, axes (-1,)) and
  column-wise (32x1, axes (-2,)) on a 64 x 64 matrix, one hue per block;
- layout-swizzle.svg: the 128 x 4 tile of "swizzled_128x4": where each
  scale (r, c) of a 128-row, 4-column scale matrix lands in the 512 bytes
  of the tile (rows 0, 32, 64, 96 side by side, then 1, 33, ...).

tests/surfaces/test_docs.py checks that the committed SVGs are what this
script draws.
"""

import argparse
import pathlib
import sys

import stride_weave.formats as formats
from stride_weave import codecs
from stride_weave.dtypes import DType

HERE = pathlib.Path(__file__).resolve().parent
FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"
HUES = ["#c6dbef", "#fdd0a2", "#c7e9c0", "#dadaeb", "#fcbba1", "#d9d9d9",
        "#9ecae1", "#fdae6b", "#a1d99b", "#bcbddc", "#fc9272", "#bdbdbd"]


def _svg(width, height, body):
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="{FONT}" font-size="11">\n'
            + "".join(body) + "</svg>\n")


def _text(x, y, s, anchor="start", size=11, weight="normal"):
    return (f'<text x="{x}" y="{y}" text-anchor="{anchor}" font-size="{size}" '
            f'font-weight="{weight}">{s}</text>\n')


def _rect(x, y, w, h, fill, stroke="none"):
    return (f'<rect x="{x}" y="{y}" width="{w}" height="{h}" fill="{fill}" '
            f'stroke="{stroke}" stroke-width="0.5"/>\n')


def grids():
    """NVFP4_16x16 on a matrix and on its transpose."""
    fmt, shape, cell = formats.NVFP4_16x16, (64, 48), 3
    body = []
    panels = [("W (64 x 48), axes (-2, -1)", codecs.BlockLayout((-2, -1)), shape),
              ("W.T (48 x 64), axes (-1, -2)", codecs.BlockLayout((-1, -2)), shape)]
    for p, (title, layout, (n, k)) in enumerate(panels):
        x0, y0 = 20 + p * 240, 40
        body.append(_text(x0, 20, title, size=12, weight="bold"))
        scales = codecs.plane_shapes(fmt, (n, k), layout=layout)[1]
        drawn = {}
        for i in range(n):
            for j in range(k):
                at = codecs.scale_index(fmt, (n, k), (i, j), layout=layout)
                flat = at[0] * scales[1] + at[1]
                # transposed panel: draw W^T, row j, column i
                r, c = (i, j) if p == 0 else (j, i)
                body.append(_rect(x0 + c * cell, y0 + r * cell, cell, cell,
                                  HUES[flat % len(HUES)]))
                drawn.setdefault(flat, (r, c))
        for flat, (r, c) in sorted(drawn.items()):
            body.append(_text(x0 + c * cell + 8 * cell, y0 + r * cell + 8 * cell + 4,
                              str(flat), anchor="middle", size=10))
        body.append(_text(x0, y0 + (k if p else n) * cell + 18,
                          f"scale plane {scales[0]} x {scales[1]}, block i's at i"))
    return _svg(480, 260, body)


def rowcol():
    """MXFP8 row-wise and column-wise on a 64 x 64 matrix."""
    shape, cell = (64, 64), 3
    body = []
    panels = [("row-wise: axes (-1,), 1 x 32", codecs.BlockLayout((-1,))),
              ("column-wise: axes (-2,), 32 x 1",
               codecs.BlockLayout((-2,), order="logical"))]
    for p, (title, layout) in enumerate(panels):
        x0, y0 = 20 + p * 250, 40
        body.append(_text(x0, 20, title, size=12, weight="bold"))
        scales = codecs.plane_shapes(DType.MXFP8_E4M3, shape, layout=layout)[1]
        for i in range(shape[0]):
            for j in range(shape[1]):
                at = codecs.scale_index(DType.MXFP8_E4M3, shape, (i, j), layout=layout)
                flat = at[0] * scales[1] + at[1]
                # neighbouring blocks in different hues: by their coordinates
                body.append(_rect(x0 + j * cell, y0 + i * cell, cell, cell,
                                  HUES[(at[0] % 2) * 2 + at[1] % 2]))
        body.append(_text(x0, y0 + shape[0] * cell + 18,
                          f"compact scale plane {scales[0]} x {scales[1]}"))
    return _svg(520, 270, body)


def swizzle():
    """Where the scales of one 128 x 4 tile land."""
    layout = codecs.BlockLayout(scales="swizzled_128x4")
    shape = (128, 4 * 32)                   # MXFP8: 128 rows, 4 blocks of 32
    w, h = 22, 14
    body = [_text(20, 20, "swizzled_128x4: scale (r, c) of a 128 x 4 tile", size=12,
                  weight="bold"),
            _text(20, 36, "at byte 16 * (r % 32) + 4 * (r // 32) + c of its 512")]
    x0, y0 = 60, 60
    for col in range(16):
        body.append(_text(x0 + col * w + w / 2, y0 - 6, str(col), anchor="middle", size=9))
    for row in range(12):                  # the first 12 of the 32 byte rows
        body.append(_text(x0 - 6, y0 + row * h + 10, str(row), anchor="end", size=9))
    for r in list(range(0, 12)) + list(range(32, 44)) + list(range(64, 76)) \
            + list(range(96, 108)):
        for c in range(4):
            at = codecs.scale_index(DType.MXFP8_E4M3, shape, (r, c * 32), layout=layout)
            body.append(_rect(x0 + at[1] * w, y0 + at[0] * h, w, h,
                              HUES[r // 32], stroke="#ffffff"))
            body.append(_text(x0 + at[1] * w + w / 2, y0 + at[0] * h + 10, f"{r},{c}",
                              anchor="middle", size=7))
    body.append(_text(x0, y0 + 12 * h + 18, "rows 0-11 of 32 bytes shown; colour: r // 32"))
    return _svg(440, 260, body)


FIGURES = {"layout-grids.svg": grids, "layout-rowcol.svg": rowcol,
           "layout-swizzle.svg": swizzle}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if a committed figure differs from what is drawn")
    args = parser.parse_args(argv)
    stale = []
    for name, draw in FIGURES.items():
        text = draw()
        path = HERE / name
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(name)
        else:
            path.write_text(text)
    if stale:
        print("stale: " + ", ".join(stale) + " (run docs/figures/block_layouts.py)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
