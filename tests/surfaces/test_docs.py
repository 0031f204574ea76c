"""The documentation's generated parts stay true to the library, and the
user-facing text speaks of the product. The pages themselves are built with
warnings as errors, and their examples run as doctests, by .ci/run
(sphinx -b html / -b doctest)."""
import importlib.util
import inspect
import pathlib
import pydoc
import re

import pytest

import stride_weave.dtypes

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIGURE_SCRIPT = ROOT / "docs" / "figures" / "block_scaled.py"


def _figure_module():
    spec = importlib.util.spec_from_file_location("_block_scaled_figure", FIGURE_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_block_scaled_figure_is_drawn_from_the_registered_formats():
    """docs/figures/block-scaled.svg is exactly what the script draws from
    DType.MXFP4 and DType.NVFP4 (regenerate it with the script otherwise)."""
    figure = _figure_module()
    committed = figure.OUT.read_text(encoding="utf-8")
    assert committed == figure.draw([figure.DType.MXFP4, figure.DType.NVFP4])


def test_block_scaled_figure_states_the_registered_costs():
    """The cost line of each panel is the format's own bits_per_element."""
    figure = _figure_module()
    from stride_weave.dtypes import DType

    assert figure.cost_formula(DType.MXFP4) == ("4 + 8/32", "4.25")
    assert figure.cost_formula(DType.NVFP4) == ("4 + 8/16 + 32/n", "4.5 + 32/n")
    svg = figure.OUT.read_text(encoding="utf-8")
    assert "bits per element: 4 + 8/32 = 4.25" in svg
    assert "bits per element: 4 + 8/16 + 32/n = 4.5 + 32/n" in svg


@pytest.mark.parametrize("name", [n for n in stride_weave.dtypes.__all__
                                  if isinstance(getattr(stride_weave.dtypes, n), type)])
def test_help_shows_the_signature_once(name):
    """help(cls) prints the constructor signature once: the class docstring
    does not repeat the signature that inspect.signature() supplies."""
    cls = getattr(stride_weave.dtypes, name)
    text = pydoc.render_doc(cls, renderer=pydoc.plaintext)
    lines = [line.removeprefix(" |  ").strip() for line in text.splitlines()]
    doc = inspect.getdoc(cls) or ""
    assert not re.match(rf"{re.escape(cls.__name__)}\(", doc), doc.splitlines()[0]
    try:
        signature = f"{cls.__name__}{inspect.signature(cls)}"
    except (TypeError, ValueError):
        return
    assert lines.count(signature) <= 1, (signature, lines[:6])


# User-facing text names no tracker issues, internal documents or team
# process, and examples use plain names.
_INTERNAL = re.compile(
    r"(?i:\bissues?\s*#?\d|\bissue \"|\bthe spec\b|\bspec's|\bspec:|"
    r"\bspec dtype-|specifications?\b|decisions\.md|dtype-descriptors|"
    r"dtype-representations)|\bMISSED\b|\b(GS|CO|EX|PK|CLI)_[A-Z]"
)


def _user_facing_files():
    for pattern in ("README.md", "docs/*.md", "docs/**/*.py", "src/**/*.py",
                    "src/**/*.pyi", "src/**/*.c", "src/**/*.h", "include/**/*.h",
                    "benchmarks/*.py", "examples/**/*", "scripts/*", "fuzz/*",
                    "tests/**/*.py", "pyproject.toml", "setup.py", ".ci/run"):
        for path in ROOT.glob(pattern):
            if (path.is_file() and path.suffix not in (".so", ".pyc", ".svg", ".png")
                    and path != pathlib.Path(__file__).resolve()):
                yield path


def test_no_internal_references_in_user_facing_text():
    found = []
    for path in _user_facing_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            if _INTERNAL.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "\n".join(found)
