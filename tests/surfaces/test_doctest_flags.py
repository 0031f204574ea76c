"""The documentation's examples compare exception messages: Sphinx's
doctest ignores them by default (IGNORE_EXCEPTION_DETAIL), which let an
example show a message the library no longer raises. .ci/run runs the
examples (sphinx -b doctest); this checks they run with messages
compared."""
import doctest
import pathlib
import runpy

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_the_doctest_flags_compare_exception_messages():
    conf = runpy.run_path(str(ROOT / "docs" / "conf.py"))
    flags = conf["doctest_default_flags"]
    assert not flags & doctest.IGNORE_EXCEPTION_DETAIL
    assert flags & doctest.ELLIPSIS


def test_no_page_turns_the_comparison_off():
    for page in sorted((ROOT / "docs").glob("*.md")):
        text = page.read_text(encoding="utf-8")
        assert "+IGNORE_EXCEPTION_DETAIL" not in text, page.name
