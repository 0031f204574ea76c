"""The module state's references are all traversed and cleared.

The C core walks one list of the objects its module state holds
(``sw_state_fields`` in ``state.c``) both to traverse them for the garbage
collector and to release them at teardown.  A reference missing from that
list would be a leak (or an unreported reference the collector cannot see).
These tests read the state's declaration and the list from the source and
fail when an object field of the state is missing from the list.
"""
import pathlib
import re

import pytest

SRC = pathlib.Path(__file__).resolve().parents[2] / "src" / "stride_weave" / "_dtypes"

# Fields of sw_state that hold no Python object reference.
NOT_OBJECTS = {"registry", "installing", "capi", "relation_ids", "cast_cache",
               "retired_lattices", "lattice_readers"}

pytestmark = pytest.mark.skipif(
    not (SRC / "state.h").exists(),
    reason="the C sources are not next to the tests (an installed-only run)",
)


def _strip_comments(text):
    return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


def state_fields():
    """{field name: is an object reference} from sw_state's declaration."""
    header = _strip_comments((SRC / "state.h").read_text())
    body = re.search(r"typedef struct sw_state \{(.*?)\} sw_state;", header, re.S)
    assert body, "sw_state's declaration was not found in state.h"
    fields = {}
    for decl in body.group(1).split(";"):
        decl = " ".join(decl.split())
        if not decl:
            continue
        name = re.search(r"(\w+)\s*(\[[^\]]*\])?$", decl).group(1)
        fields[name] = bool(re.match(r"(PyObject|PyTypeObject)\s*\*", decl))
    return fields


def listed_fields():
    """The field names in state.c's sw_state_fields list."""
    source = _strip_comments((SRC / "state.c").read_text())
    table = re.search(r"sw_state_fields\[\] = \{(.*?)\n\};", source, re.S)
    assert table, "sw_state_fields was not found in state.c"
    return re.findall(r"offsetof\(sw_state, (\w+)\)", table.group(1))


def test_the_parsers_see_the_known_fields():
    # A parser that finds nothing would make the next tests vacuous.
    fields = state_fields()
    assert fields["meta_type"] and fields["labels"] and fields["kind_types"]
    assert not fields["registry"] and not fields["installing"]
    assert "dtype_type" in listed_fields()


def test_every_object_field_of_the_state_is_traversed_and_cleared():
    fields = state_fields()
    objects = {name for name, is_object in fields.items() if is_object}
    assert objects - set(listed_fields()) == set()


def test_the_list_names_only_object_fields_once_each():
    fields = state_fields()
    listed = listed_fields()
    assert len(listed) == len(set(listed))
    assert [name for name in listed if not fields.get(name)] == []


def test_fields_that_hold_no_object_are_the_known_ones():
    # A new non-object field is a deliberate decision: name it here.
    fields = state_fields()
    assert {name for name, is_object in fields.items() if not is_object} == NOT_OBJECTS
