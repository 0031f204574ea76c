"""docs/relations.md's comparison table says what the libraries answer: its
stride-weave column is what this build answers, and its numpy column what
the installed numpy and ml_dtypes answer (the JAX and torch columns are
checked when those are installed). The table is made by
docs/tables/compare_relations.py."""
import importlib.util
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "docs" / "tables" / "compare_relations.py"


@pytest.fixture(scope="module")
def compare():
    spec = importlib.util.spec_from_file_location("_compare_relations", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def committed_cells(compare):
    """{row label: [cell, ...]} of the table in docs/relations.md."""
    text = compare.DOC.read_text(encoding="utf-8")
    table = text[text.index(compare.START):text.index(compare.END)]
    rows = {}
    for line in table.splitlines():
        if line.startswith("| `"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            rows[cells[0]] = cells[1:]
    return rows


def _shown(answer, compare):
    return answer if answer in (compare.UNDEFINED, compare.ERROR) else f"`{answer}`"


@pytest.mark.parametrize("column", ["stride-weave", "numpy + ml_dtypes", "Array API",
                                    "JAX", "torch"])
def test_the_comparison_table_is_what_the_libraries_answer(compare, column):
    names = [name for name, _ in compare.COLUMNS]
    index = names.index(column)
    if column == "numpy + ml_dtypes":
        pytest.importorskip("numpy")
        pytest.importorskip("ml_dtypes")
    if column == "JAX":
        pytest.importorskip("jax")
    if column == "torch":
        pytest.importorskip("torch")
    function = compare.COLUMNS[index][1]
    rows = committed_cells(compare)
    assert len(rows) == len(compare.ROWS)
    for row in compare.ROWS:
        label = compare._row_label(*row)
        assert rows[label][index] == _shown(function(*row), compare), (column, label)
