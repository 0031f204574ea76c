"""Draw the default promotion lattice as an SVG figure.

    python docs/figures/promotions.py          # rewrite promotions.dot and .svg
    python docs/figures/promotions.py --check  # exit 1 if promotions.dot is stale

The figure is the command line's own drawing: the Graphviz source that
``python -m stride_weave --promotions --dot --import stride_weave.formats``
prints in a fresh interpreter (the built-ins and the formats pack), kept as
promotions.dot, and rendered with Graphviz's ``dot -Tsvg`` into
promotions.svg. tests/surfaces/test_docs.py checks that promotions.dot is
what the command prints now; rendering needs Graphviz (``apt-get install
graphviz``), checking does not.
"""

import argparse
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
DOT = HERE / "promotions.dot"
SVG = HERE / "promotions.svg"
COMMAND = ["-m", "stride_weave", "--promotions", "--dot", "--import",
           "stride_weave.formats"]


def dot_source():
    """What the command prints, in a fresh interpreter."""
    proc = subprocess.run([sys.executable, *COMMAND], capture_output=True,
                          encoding="utf-8", check=True)
    return proc.stdout


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="only check that promotions.dot is up to date")
    args = parser.parse_args(argv)
    source = dot_source()
    if args.check:
        if DOT.read_text(encoding="utf-8") != source:
            print(f"{DOT} is stale: run python {pathlib.Path(__file__).name}",
                  file=sys.stderr)
            return 1
        return 0
    DOT.write_text(source, encoding="utf-8")
    svg = subprocess.run(["dot", "-Tsvg"], input=source, capture_output=True,
                         encoding="utf-8", check=True).stdout
    SVG.write_text(svg, encoding="utf-8")
    print(f"wrote {DOT.name} and {SVG.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
