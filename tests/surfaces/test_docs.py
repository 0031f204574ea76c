"""The documentation's generated parts stay true to the library, and the
user-facing text speaks of the product. The pages themselves are built with
warnings as errors, and their examples run as doctests, by .ci/run
(sphinx -b html / -b doctest)."""
import importlib.util
import inspect
import pathlib
import pydoc
import re
import sys

import pytest

import stride_weave.dtypes
from support import run_python

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
    for pattern in ("README.md", "docs/**/*.md", "docs/**/*.py", "src/**/*.py",
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



# The user pages state what the product guarantees and measures; how it was
# developed (findings and fixes, run records, targets and whether they were
# met) belongs to the contributors' pages (docs/contributing/, design.md).
_NOTES_VOICE = re.compile(
    r"(?i:\bfinal code\b|\bresults? on (the|debian|cpython)\b|\bfound and fixed\b"
    r"|\bmust stay\b|\bwe\b|\bour\b|\b\d+ of \d+ (bounds|targets) (hold|met)\b"
    r"|\b(python|cpython) 3\.\d+(\.\d+)? here\b|\bused to\b|\bthe story\b"
    r"|\b(after|before) the fix\b|\bregression test\b|\bwhere a bound does not hold\b)"
    r"|^\|.*\|\s*(holds|met)\s*\|\s*$")
_CONTRIBUTOR_PAGES = {"design.md"}


def _user_pages():
    return [p for p in sorted((ROOT / "docs").glob("*.md"))
            if p.name not in _CONTRIBUTOR_PAGES]


def test_user_pages_speak_of_the_product():
    found = []
    for path in _user_pages():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if _NOTES_VOICE.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "\n".join(found)


def _toctrees(index):
    """{caption: [documents]} of the toctrees of docs/index.md."""
    trees = {}
    for block in re.findall(r"```\{toctree\}\n(.*?)```", index, re.S):
        caption = re.search(r"^:caption: (.+)$", block, re.M).group(1)
        trees[caption] = [line for line in block.splitlines()
                          if line and not line.startswith(":")]
    return trees


def test_contributor_pages_have_their_own_part_of_the_index():
    trees = _toctrees((ROOT / "docs" / "index.md").read_text(encoding="utf-8"))
    contributors = trees.pop("For contributors")
    pages = {f"contributing/{p.stem}" for p in (ROOT / "docs" / "contributing").glob("*.md")}
    assert pages | {"design"} == set(contributors)
    user_docs = {doc for docs in trees.values() for doc in docs}
    assert user_docs == {p.stem for p in _user_pages()} - {"index"}


# A dunder name in Markdown prose is read as bold ("__slots__" shows as a
# bold "slots"): outside fenced blocks, it must be in a code span.
_DUNDER = re.compile(r"(?<![\w`])__[A-Za-z][A-Za-z0-9_]*__(?![\w`])")


def test_dunder_names_in_pages_are_code():
    found = []
    for path in sorted((ROOT / "docs").rglob("*.md")):
        fence = None
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            stripped = line.lstrip()
            if fence:
                fence = None if stripped.startswith(fence) else fence
                continue
            opening = re.match(r"`{3,}|~{3,}", stripped)
            if opening:
                fence = opening.group(0)
                continue
            outside_code = line.split("`")[::2]
            if not line.startswith("<!--") and any(map(_DUNDER.search, outside_code)):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "\n".join(found)


def test_benchmark_report_writes_dunder_names_as_code():
    """benchmarks/report.py, which writes docs/performance.md, puts a dunder
    name outside code spans in one (and leaves code spans alone)."""
    program = (
        "import sys; sys.path.insert(0, 'benchmarks'); import report\n"
        "for line in ['a plain __slots__ attribute read: y.name',\n"
        "             'reads __class__, as `type.__instancecheck__` does',\n"
        "             'pickle.loads(<pickle of int>)']:\n"
        "    print(report.escape_markup(line))\n")
    result = run_python(["-c", program], cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "a plain `__slots__` attribute read: y.name",
        "reads `__class__`, as `type.__instancecheck__` does",
        "pickle.loads(&lt;pickle of int&gt;)",
    ]


def test_promotion_figure_source_is_what_the_command_prints():
    """docs/figures/promotions.dot is what `python -m stride_weave
    --promotions --dot --import stride_weave.formats` prints now
    (regenerate it with docs/figures/promotions.py otherwise)."""
    result = run_python([str(ROOT / "docs" / "figures" / "promotions.py"), "--check"])
    assert result.returncode == 0, result.stderr


def test_layout_figures_are_what_the_codecs_place():
    """docs/figures/layout-*.svg are what docs/figures/block_layouts.py
    draws by asking codecs.plane_shapes and codecs.scale_index now
    (regenerate them with the script otherwise)."""
    result = run_python([str(ROOT / "docs" / "figures" / "block_layouts.py"), "--check"])
    assert result.returncode == 0, result.stdout + result.stderr
