"""docs/interop.md: its interop and numeric tables are the live mappings and
records of every built-in and pack format (a stale cell fails here)."""
import pathlib

import pytest

import stride_weave.formats as formats
from stride_weave import interop, numerics
from stride_weave.dtypes import DType, SimpleDType

ml_dtypes = pytest.importorskip("ml_dtypes")

PAGE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "interop.md"
NONE = "—"


def _table(header_start):
    """The rows of the table whose header line starts with header_start, as
    lists of cells with code backquotes removed."""
    lines = PAGE.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip().strip("`") for cell in line.strip("|").split("|")])
    return rows


def _documented():
    builtins = [d for d in DType.registered()
                if isinstance(d, SimpleDType) and getattr(DType, d.name, None) is d]
    return {d.name for d in builtins} | {d.name for d in formats.FORMATS}


def _cell(value):
    return NONE if value is None else str(value)


def test_interop_table_is_the_live_mappings():
    rows = _table("| dtype | numpy | ml_dtypes |")
    assert {row[0] for row in rows} == _documented()
    for name, np_cell, ml_cell, dl_cell, arrow_cell, buffer_cell, torch_cell in rows:
        m = interop.mapping(DType.from_name(name))
        in_ml = m.numpy is not None and hasattr(ml_dtypes, m.numpy)
        assert np_cell == (NONE if in_ml else _cell(m.numpy)), name
        assert ml_cell == (_cell(m.numpy) if in_ml else NONE), name
        assert dl_cell == (_cell(tuple(m.dlpack)) if m.dlpack else NONE), name
        assert (arrow_cell, buffer_cell, torch_cell) == (
            _cell(m.arrow), _cell(m.buffer_format), _cell(m.torch)), name


def test_float_tables_are_the_live_records():
    """The floating-point formats fill two tables (their encodings, then
    their ranges and spacing), so that each fits the page's width."""
    floats = {n for n in _documented()
              if numerics.numeric_info(DType.from_name(n)).kind in ("float", "complex")}
    encodings = _table("| dtype | encoding | bits | exponent |")
    assert {row[0] for row in encodings} == floats
    for name, encoding, bits, e, m, bias, inf, nan in encodings:
        r = numerics.finfo(DType.from_name(name))
        assert (encoding, int(bits), int(e), int(m), int(bias)) == (
            r.encoding, r.bits, r.exponent_bits, r.mantissa_bits, r.bias), name
        assert (inf == "yes", nan) == (r.has_inf, r.nan_encoding), name
    ranges = _table("| dtype | max | smallest normal |")
    assert [row[0] for row in ranges] == [row[0] for row in encodings]
    for name, mx, normal, subnormal, eps in ranges:
        r = numerics.finfo(DType.from_name(name))
        assert (float(mx), float(normal), float(subnormal), float(eps)) == (
            r.max, r.smallest_normal, r.smallest_subnormal, r.eps), name


def test_integer_table_is_the_live_records():
    rows = _table("| dtype | encoding | bits | signed |")
    ints = {n for n in _documented()
            if numerics.numeric_info(DType.from_name(n)).kind in ("int", "bool")}
    assert {row[0] for row in rows} == ints
    for name, encoding, bits, signed, lo, hi in rows:
        r = numerics.numeric_info(DType.from_name(name))
        assert (encoding, int(bits), signed == "yes", int(lo), int(hi)) == (
            r.encoding, r.bits, r.signed, r.min, r.max), name


def test_index_lists_the_page():
    index = (PAGE.parent / "index.md").read_text(encoding="utf-8")
    assert "\ninterop\n" in index


_NUMBER_WORDS = {"three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}


def test_module_docstring_counts_its_targets():
    """The module docstring says in how many places a dtype may have an
    equivalent, and lists exactly that many: one per conversion target."""
    doc = interop.__doc__
    word = doc.split("may have an equivalent in ", 1)[1].split()[0]
    assert _NUMBER_WORDS[word] == len(interop.TARGETS)
    listed = doc.split(":\n\n", 1)[1].split("\n\n", 1)[0]
    bullets = [line for line in listed.splitlines() if line.startswith("- **")]
    assert len(bullets) == len(interop.TARGETS), bullets
