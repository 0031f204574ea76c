"""The C API for extension authors (docs/c-api.md).

Requirements checked here:

1. the public header ships with the package and ``stride_weave.get_include()``
   returns its directory (the installed package's, in CI);
2. docs/c-api.md shows the complete consumer example verbatim, and every
   entry of the header;
3. consumers compile against that header with ``-Wall -Wextra -Werror``:
   the documented example (examples/c_api/, built unchanged) and the probe
   (tests/support/sw_capi_probe.c, one wrapper per entry point); the header
   also compiles as C++ when a C++ compiler is there;
4. every entry point, with every error path, on built-in and extension
   descriptors of each kind (category, simple, compound, block-scaled);
5. the import call: 0 with the interpreter's table, ImportError when the
   build is older than the header or has no usable capsule, while a newer
   build (a longer table) is accepted;
6. one table per interpreter: a re-import exports the same capsule and
   pointers; a subinterpreter gets its own table (3.12+).

The build helpers are in tests/support/capi.py; tests that need a C compiler skip,
with the reason, only when there is none.  Leak checks of the C API calls
are in test_leaks.py.
"""
import ctypes
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig
import textwrap

import pytest

import stride_weave
from support import assert_exited, run_python, unique_name
from support import capi as _capi
from support.defs import BLOCK_SCALED_BUILTINS, BUILTIN_NAMES, PlanePair, TagRule
from stride_weave import _dtypes
from stride_weave.dtypes import (
    BlockScaledDType,
    CompoundDType,
    DType,
    DTypeCategory,
    Level,
    LevelExtent,
    RepresentationRule,
    SimpleDType,
    SymbolicBits,
    Whole,
    WholeExtent,
)

ROOT = _capi.ROOT
HEADER = ROOT / "include" / "stride_weave" / "dtypes.h"
DOCS = ROOT / "docs" / "c-api.md"

KIND_NONE, KIND_CATEGORY, KIND_SIMPLE, KIND_COMPOUND, KIND_BLOCK_SCALED = range(5)

# name: (element, ((scale, block), ...)) with the C API's block 0 for Whole
CAPI_BLOCK_SCALED = {
    name: (element, tuple((scale, 0 if block is Whole else block) for scale, block in levels))
    for name, (element, levels) in BLOCK_SCALED_BUILTINS.items()
}


@pytest.fixture(scope="module")
def probe():
    return _capi.load("probe")


@pytest.fixture(scope="module")
def example():
    return _capi.load("example")


# --------------------------------------------------------------------------
# extensions of every kind, and descriptors that are not registered
# --------------------------------------------------------------------------

class CapiBlockScaled(BlockScaledDType, abstract=False):
    """Its own structure_extension(), so its structure is this module's."""

    def structure_extension(self):
        return ("test_capi", self.name)


class _Recorder(SimpleDType, abstract=False):
    """Runs a callback on itself between the model's __init__ and
    registration: a descriptor object that is not registered yet."""

    callback = None

    def __init__(self, name, **kwargs):
        super().__init__(name, **kwargs)
        type(self).callback(self)


_rejected = []


class _Rejected(SimpleDType, abstract=False):
    def __init__(self, name, **kwargs):
        _rejected.append(self)
        super().__init__(name, **kwargs)
        raise RuntimeError("rejected on purpose")


try:
    _Rejected(unique_name("CapiRejected"), bits=8, supertype=DType.Floating)
except RuntimeError:
    pass
REJECTED = _rejected[0]

EXT_CAT = DTypeCategory(unique_name("CapiCat"), supertype=DType.Floating)
EXT_SUBCAT = DTypeCategory(unique_name("CapiSubCat"), supertype=EXT_CAT)
EXT_ROOT = DTypeCategory(unique_name("CapiRoot"))
EXT_SIMPLE = SimpleDType(unique_name("CapiSimple"), bits=16, supertype=EXT_SUBCAT)
EXT_HUGE = SimpleDType(unique_name("CapiHuge"), bits=2 ** 70, supertype=EXT_CAT)
EXT_PAIR = PlanePair(unique_name("CapiPair"), planes=[EXT_SIMPLE, DType.Float32],
                     rules=[TagRule("capi")], supertype=EXT_CAT)
EXT_BS = CapiBlockScaled(unique_name("CapiBS"), element=EXT_SIMPLE,
                         levels=[Level(DType.E4M3, 64), Level(DType.E8M0, 4),
                                 Level(DType.Float32, Whole)])
EXT_BS_HUGE = CapiBlockScaled(unique_name("CapiBSHuge"), element=DType.E2M1,
                              levels=[Level(DType.E8M0, 2 ** 70)])
EXT_UNICODE = SimpleDType(unique_name("Flöat_ä_€"), bits=8, supertype=EXT_ROOT)

BUILTINS = {name: getattr(DType, name) for name in BUILTIN_NAMES}
EXTENSIONS = [EXT_CAT, EXT_SUBCAT, EXT_ROOT, EXT_SIMPLE, EXT_HUGE, EXT_PAIR,
              EXT_BS, EXT_BS_HUGE, EXT_UNICODE]
EVERY = list(BUILTINS.values()) + EXTENSIONS

NOT_DESCRIPTORS = [None, 0, 1.5, "Float32", b"Float32", object(), DType,
                   SimpleDType, BlockScaledDType, type(DType), Whole,
                   Level(DType.E8M0, 32), TagRule("x"), DType.Float32.structure()]


def expected_kind(d):
    if isinstance(d, BlockScaledDType):
        return KIND_BLOCK_SCALED
    if d.is_category():
        return KIND_CATEGORY
    if d.is_simple():
        return KIND_SIMPLE
    assert d.is_compound()
    return KIND_COMPOUND


def ids(values):
    """Test IDs: the names, without the process ID that unique_name puts in
    them, so that every pytest-xdist worker collects the same IDs."""
    pid = f"_{os.getpid()}_"
    names = [getattr(v, "name", None) for v in values]
    return [name.replace(pid, "_") if isinstance(name, str) else type(v).__name__
            for name, v in zip(names, values)]


# ==========================================================================
# 1. the header ships; get_include()
# ==========================================================================

def test_get_include_returns_the_header_directory():
    include = pathlib.Path(stride_weave.get_include())
    assert include.is_absolute()
    assert (include / "stride_weave" / "dtypes.h").is_file()


def test_get_include_is_the_installed_package_unless_run_from_a_checkout():
    include = pathlib.Path(stride_weave.get_include()).resolve()
    package = pathlib.Path(stride_weave.__file__).resolve().parent
    if package.parent.name == "src" and (package.parent.parent / "include").is_dir():
        # imported from a source checkout (PYTHONPATH=src, editable install)
        assert include == (package.parent.parent / "include").resolve()
    else:
        # an installed package: the header is inside it (shipped in the wheel)
        assert include == package / "include"


def test_shipped_header_is_the_repository_header():
    shipped = pathlib.Path(stride_weave.get_include()) / "stride_weave" / "dtypes.h"
    assert shipped.read_bytes() == HEADER.read_bytes()


def test_get_include_is_public_and_documented():
    assert "get_include" in stride_weave.__all__
    assert "dtypes.h" in stride_weave.get_include.__doc__


def test_capsule_is_a_module_attribute():
    capsule = _dtypes._C_API
    assert type(capsule).__name__ == "PyCapsule"
    assert '"stride_weave._dtypes._C_API"' in repr(capsule)


# ==========================================================================
# 2. the docs show the example verbatim and every entry of the header
# ==========================================================================

def _struct_fields():
    text = HEADER.read_text(encoding="utf-8")
    body = text[text.index("typedef struct SW_DTypes_CAPI {"):text.index("} SW_DTypes_CAPI;")]
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    fields = re.findall(r"\(\*(\w+)\)\(", body)                   # function pointers
    fields += re.findall(r"^\s*[\w ]+?\*?\s*(\w+);", body, flags=re.M)
    return sorted(set(fields))


def test_header_struct_parses():
    fields = _struct_fields()
    for name in ("api_version", "struct_size", "Kind", "FromName", "Bits",
                 "Float32", "NVFP4", "LevelBlock", "SimpleDTypeType"):
        assert name in fields


def test_docs_contain_the_example_verbatim():
    docs = DOCS.read_text(encoding="utf-8")
    for path in (_capi.EXAMPLE_C, _capi.EXAMPLE_SETUP):
        assert path.read_text(encoding="utf-8") in docs, (
            f"docs/c-api.md must contain {path.relative_to(ROOT)} verbatim "
            "(copy the file into the page)")


def test_docs_name_every_entry_of_the_header():
    docs = DOCS.read_text(encoding="utf-8")
    header = HEADER.read_text(encoding="utf-8")
    names = set(_struct_fields())
    names |= set(re.findall(r"#define (SW_\w+)", header))
    names |= {"SW_DTypes_Import", "SW_DTypes_ImportInto", "SW_DTypesAPI"}
    missing = sorted(n for n in names if not re.search(r"\b%s\b" % n, docs))
    assert missing == [], f"docs/c-api.md does not mention {missing}"


def test_readme_mentions_get_include():
    assert "get_include()" in (ROOT / "README.md").read_text(encoding="utf-8")


# ==========================================================================
# 3. consumers compile cleanly against the installed header
# ==========================================================================

def test_example_and_probe_build_with_warnings_as_errors(probe, example):
    # Both fixtures built with -Wall -Wextra -Werror (tests/support/capi.py).
    assert probe.__name__ == "sw_capi_probe" and example.__name__ == "swcheck"


_MOD_GIL_SLOT = re.compile(
    r"#ifdef Py_GIL_DISABLED\n(?:\s*/\*.*?\*/\n)?"
    r"\s*\{Py_mod_gil, Py_MOD_GIL_NOT_USED\},\n#endif", re.S)


@pytest.mark.parametrize("path", [_capi.EXAMPLE_C, *sorted(_capi.SUPPORT.glob("*.c"))],
                         ids=lambda p: p.name)
def test_every_consumer_source_declares_py_mod_gil(path):
    """Every extension the tests build (and the documented example) declares
    Py_mod_gil under Py_GIL_DISABLED: on a free-threaded build, one that does
    not turns the GIL back on for the whole process."""
    source = path.read_text(encoding="utf-8")
    slots = source[source.index("PyModuleDef_Slot"):]
    assert _MOD_GIL_SLOT.search(slots), (
        f"{path.name}: no {{Py_mod_gil, Py_MOD_GIL_NOT_USED}} slot under #ifdef Py_GIL_DISABLED")


@pytest.mark.parametrize("which", sorted(_capi.MODULE_NAMES))
def test_importing_a_consumer_leaves_the_gil_as_it_was(which):
    """Imported in a child with -W error::RuntimeWarning: no warning, and on a
    free-threaded build the GIL is still disabled afterwards."""
    rc, out = _capi.gil_after_import(which)
    assert rc == 0, out
    if _capi.FREE_THREADED:
        expected = "False"
    else:
        expected = str(getattr(sys, "_is_gil_enabled", lambda: None)())
    assert out.splitlines()[-1] == expected, out


def _cxx():
    cxx = sysconfig.get_config_var("CXX") or "c++"
    words = cxx.split()
    return shutil.which(words[0]) if words else None


@pytest.mark.skipif(_cxx() is None, reason="no C++ compiler (the interpreter's CXX)")
def test_header_compiles_as_cplusplus(tmp_path):
    source = tmp_path / "consumer.cpp"
    source.write_text(textwrap.dedent("""\
        #include <stride_weave/dtypes.h>

        static int is_float32(PyObject *op)
        {
            return op == SW_DTypesAPI->Float32 && SW_DType_IsSimple(op)
                   && SW_DType_Bits(op) == 32;
        }

        int consumer_init(void)
        {
            const SW_DTypes_CAPI *api = NULL;
            if (SW_DTypes_ImportInto(&api) < 0 || SW_DTypes_Import() < 0) {
                return -1;
            }
            return is_float32(api->Float32) ? 0 : -1;
        }
        """))
    cmd = [_cxx(), "-fsyntax-only", "-Wall", "-Wextra", "-Werror",
           "-I", stride_weave.get_include(),
           "-I", sysconfig.get_paths()["include"], str(source)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# ==========================================================================
# the table: version, constants, classes and built-ins
# ==========================================================================

def test_constants(probe):
    c = probe.constants()
    assert (c["KIND_NONE"], c["KIND_CATEGORY"], c["KIND_SIMPLE"],
            c["KIND_COMPOUND"], c["KIND_BLOCK_SCALED"]) == (0, 1, 2, 3, 4)
    assert c["BLOCK_WHOLE"] == 0
    # version 2 appended the DLPack lookups, version 3 the relations,
    # version 4 the exception types and TryPromoteTypes, version 5 the shapes
    # of N-D blocks
    assert c["API_VERSION"] == 5
    assert (c["ISDTYPE_BOOL"], c["ISDTYPE_SIGNED_INTEGER"],
            c["ISDTYPE_UNSIGNED_INTEGER"], c["ISDTYPE_INTEGRAL"],
            c["ISDTYPE_REAL_FLOATING"], c["ISDTYPE_COMPLEX_FLOATING"],
            c["ISDTYPE_NUMERIC"]) == (1, 2, 4, 8, 16, 32, 64)
    assert (c["CASTING_NO"], c["CASTING_EQUIV"], c["CASTING_SAFE"],
            c["CASTING_SAME_KIND"], c["CASTING_UNSAFE"]) == (0, 1, 2, 3, 4)
    assert c["MODULE_NAME"] == "stride_weave._dtypes"
    assert c["CAPSULE_ATTR"] == "_C_API"
    assert c["CAPSULE_NAME"] == "stride_weave._dtypes._C_API"


def test_version_and_size(probe):
    api_version, struct_size, header_size, header_version = probe.version()
    assert api_version == header_version == 5
    assert struct_size == header_size


def test_table_has_the_classes(probe):
    table = probe.table_objects()
    expected = {
        "DTypeMetaType": type(DType), "DTypeType": DType,
        "DTypeCategoryType": DTypeCategory, "SimpleDTypeType": SimpleDType,
        "CompoundDTypeType": CompoundDType,
        "BlockScaledDTypeType": BlockScaledDType,
        "RepresentationRuleType": RepresentationRule,
        "LevelExtentType": LevelExtent, "LevelType": Level,
        "WholeExtentType": WholeExtent, "SymbolicBitsType": SymbolicBits,
        "Whole": Whole,
        "PromotionError": _dtypes.PromotionError,
        "UnknownNameError": _dtypes.UnknownNameError,
    }
    for key, obj in expected.items():
        assert table[key] is obj, key


def test_table_has_every_builtin(probe):
    table = probe.table_objects()
    for name in BUILTIN_NAMES:
        assert table[name] is getattr(DType, name), name
    assert set(CAPI_BLOCK_SCALED) <= set(BUILTIN_NAMES)
    assert None not in table.values()


def test_table_is_the_same_through_both_import_calls(probe):
    in_state, in_static = probe.table_address()
    assert in_state == in_static == probe.import_again()


# ==========================================================================
# 4. every entry point
# ==========================================================================

# ---- Kind: never fails ----------------------------------------------------

@pytest.mark.parametrize("d", EVERY, ids=ids(EVERY))
def test_kind_of_registered_descriptors(probe, d):
    kind = expected_kind(d)
    assert probe.kind(d) == kind
    assert probe.macro_kinds(d) == (
        kind, True, kind == KIND_CATEGORY, kind == KIND_SIMPLE,
        kind in (KIND_COMPOUND, KIND_BLOCK_SCALED), kind == KIND_BLOCK_SCALED)


def test_kind_of_each_builtin(probe):
    assert [probe.kind(BUILTINS[n]) for n in ("Any", "Floating", "Integer")] == [1] * 3
    assert probe.kind(DType.Float32) == probe.kind(DType.Bool) == KIND_SIMPLE
    for name in CAPI_BLOCK_SCALED:
        assert probe.kind(BUILTINS[name]) == KIND_BLOCK_SCALED
    assert probe.kind(EXT_PAIR) == KIND_COMPOUND


@pytest.mark.parametrize("obj", NOT_DESCRIPTORS, ids=ids(NOT_DESCRIPTORS))
def test_kind_of_other_objects_is_none(probe, obj):
    assert probe.kind(obj) == KIND_NONE
    assert probe.macro_kinds(obj) == (0, False, False, False, False, False)


def test_kind_of_null_is_none(probe):
    assert probe.kind(probe.NULL) == KIND_NONE
    assert probe.macro_kinds(probe.NULL)[0] == KIND_NONE


def test_kind_of_unregistered_descriptors_is_none(probe):
    seen = []
    _Recorder.callback = lambda self: seen.append(probe.kind(self))
    made = _Recorder(unique_name("CapiRecorded"), bits=8, supertype=DType.Floating)
    assert seen == [KIND_NONE]                 # under construction
    assert probe.kind(made) == KIND_SIMPLE     # registered
    assert probe.kind(REJECTED) == KIND_NONE   # rejected


# ---- FromName, FromNameObject ----------------------------------------------

@pytest.mark.parametrize("d", EVERY, ids=ids(EVERY))
def test_from_name(probe, d):
    assert probe.from_name_object(d.name) is d
    assert probe.from_name(d.name.encode()) is d


def test_from_name_returns_a_new_reference(probe):
    # (counts taken outside assert statements, which keep their operands)
    f32 = DType.Float32
    before = sys.getrefcount(f32)
    found = [probe.from_name(b"Float32") for _ in range(100)]
    during = sys.getrefcount(f32)
    del found
    after = sys.getrefcount(f32)
    assert (during, after) == (before + 100, before)


def test_from_name_object_takes_str_subclasses(probe):
    class Name(str):
        def __hash__(self):
            raise AssertionError("user code ran")

        def __eq__(self, other):
            raise AssertionError("user code ran")

    assert probe.from_name_object(Name("Float32")) is DType.Float32


@pytest.mark.parametrize("name", [unique_name("CapiUnknown"), "", "float32", "Float32 "],
                         ids=["unknown", "empty", "float32", "trailing-space"])
def test_from_name_unknown_is_lookup_error(probe, name):
    with pytest.raises(LookupError, match="no descriptor is registered under the name"):
        probe.from_name(name.encode())
    with pytest.raises(LookupError, match="no descriptor is registered under the name"):
        probe.from_name_object(name)


def test_from_name_not_utf8_is_unicode_decode_error(probe):
    with pytest.raises(UnicodeDecodeError):
        probe.from_name(b"Float\xff32")


@pytest.mark.parametrize("name", [b"Float32", 32, None, DType.Float32])
def test_from_name_object_of_a_non_str_is_type_error(probe, name):
    with pytest.raises(TypeError, match=r"SW_DType_FromNameObject: name must be "
                                        r"a str, got %s" % type(name).__name__):
        probe.from_name_object(name)


# ---- Name, NameUTF8 ------------------------------------------------------------

@pytest.mark.parametrize("d", EVERY, ids=ids(EVERY))
def test_name(probe, d):
    name = probe.name(d)
    assert type(name) is str and name is d.name


@pytest.mark.parametrize("d", EVERY, ids=ids(EVERY))
def test_name_utf8(probe, d):
    utf8, address = probe.name_utf8(d)
    assert utf8 == d.name.encode("utf-8")
    assert probe.name_utf8(d)[1] == address   # borrowed from the descriptor


def test_name_utf8_without_a_utf8_form_is_unicode_encode_error():
    # In a child process: a name with a lone surrogate is legal, but it would
    # stay registered for the rest of this process, where other tests print
    # every registered name.
    directory = _capi.build("probe")
    report = _run_child("""
        import json, sys
        sys.path.insert(0, sys.argv[1])
        import sw_capi_probe as probe
        from stride_weave.dtypes import DType, SimpleDType
        d = SimpleDType("Surrogate\\ud800", bits=8, supertype=DType.Floating)
        try:
            probe.name_utf8(d)
            error = None
        except UnicodeEncodeError:
            error = "UnicodeEncodeError"
        print(json.dumps({
            "error": error,
            "name": probe.name(d) is d.name,
            "lookup": probe.from_name_object(d.name) is d,
            "kind": probe.kind(d), "bits": probe.bits(d),
        }))
    """, str(directory))
    assert report == {"error": "UnicodeEncodeError", "name": True, "lookup": True,
                      "kind": KIND_SIMPLE, "bits": 8}


# ---- Bits ------------------------------------------------------------------------

@pytest.mark.parametrize("d", [d for d in EVERY if d.is_simple() and d is not EXT_HUGE],
                         ids=ids([d for d in EVERY if d.is_simple() and d is not EXT_HUGE]))
def test_bits(probe, d):
    assert probe.bits(d) == d.bits


def test_bits_of_each_builtin(probe):
    widths = {"Bool": 8, "Int32": 32, "Int8": 8, "Float32": 32, "Float64": 64,
              "E8M0": 8, "E5M2": 8, "E4M3": 8, "E3M2": 6, "E2M3": 6, "E2M1": 4}
    assert {n: probe.bits(BUILTINS[n]) for n in widths} == widths


def test_bits_too_wide_is_overflow_error(probe):
    with pytest.raises(OverflowError, match=r"SW_DType_Bits: the width of "
                       r"SimpleDType\('CapiHuge_.*'\) \(1180591620717411303424\) "
                       r"does not fit in a Py_ssize_t"):
        probe.bits(EXT_HUGE)


# ---- Supertype, IsSubtype ----------------------------------------------------------

@pytest.mark.parametrize("d", EVERY, ids=ids(EVERY))
def test_supertype(probe, d):
    assert probe.supertype(d) is d.supertype


def test_supertype_of_a_root_is_none(probe):
    assert probe.supertype(DType.Any) is None
    assert probe.supertype(EXT_ROOT) is None
    assert probe.supertype(EXT_SIMPLE) is EXT_SUBCAT
    assert probe.supertype(DType.NVFP4) is DType.Any


def test_is_subtype_agrees_with_python_for_every_pair(probe):
    for d in EVERY:
        for other in EVERY:
            assert probe.is_subtype(d, other) is d.is_subtype_of(other), (d, other)


def test_is_subtype_examples(probe):
    assert probe.is_subtype(DType.Float32, DType.Floating) is True
    assert probe.is_subtype(DType.Float32, DType.Any) is True
    assert probe.is_subtype(DType.Float32, DType.Float32) is True
    assert probe.is_subtype(DType.Int8, DType.Floating) is False
    assert probe.is_subtype(DType.Floating, DType.Float32) is False
    assert probe.is_subtype(EXT_SIMPLE, EXT_CAT) is True
    assert probe.is_subtype(EXT_SIMPLE, EXT_ROOT) is False


# ---- NumPlanes, Plane -----------------------------------------------------------------

COMPOUNDS = [d for d in EVERY if d.is_compound()]


@pytest.mark.parametrize("d", COMPOUNDS, ids=ids(COMPOUNDS))
def test_planes(probe, d):
    n = probe.num_planes(d)
    assert n == d.num_carriers == len(d.simple_types)
    assert tuple(probe.plane(d, i) for i in range(n)) == d.simple_types
    assert all(probe.plane(d, i) is d.simple_types[i] for i in range(n))


@pytest.mark.parametrize("d", [EXT_PAIR, DType.NVFP4, DType.MXFP4], ids=ids([EXT_PAIR, DType.NVFP4, DType.MXFP4]))
@pytest.mark.parametrize("index", [-1, "n", "n+1", -(2 ** 62), 2 ** 62])
def test_plane_index_out_of_range_is_index_error(probe, d, index):
    n = len(d.simple_types)
    i = {"n": n, "n+1": n + 1}.get(index, index)
    with pytest.raises(IndexError, match=r"SW_DType_Plane: plane index %d out of range "
                       r"for .*%s.*, which has %d" % (i, re.escape(repr(d.name)), n)):
        probe.plane(d, i)


# ---- Element, NumLevels, LevelScale, LevelBlock ------------------------------------------

@pytest.mark.parametrize("name", sorted(CAPI_BLOCK_SCALED))
def test_block_scaled_builtins(probe, name):
    d = BUILTINS[name]
    element, levels = CAPI_BLOCK_SCALED[name]
    assert probe.element(d) is BUILTINS[element]
    assert probe.num_levels(d) == len(levels)
    got = tuple((probe.level_scale(d, i), probe.level_block(d, i))
                for i in range(len(levels)))
    assert got == tuple((BUILTINS[s], b) for s, b in levels)
    # through the shorthands, with the planes
    assert probe.macro_block_scaled(d) == (
        len(d.simple_types), d.simple_types, BUILTINS[element],
        tuple((BUILTINS[s], b) for s, b in levels))


def test_mxfp4_and_nvfp4(probe):
    mx, nv = DType.MXFP4, DType.NVFP4
    assert probe.element(mx) is DType.E2M1
    assert probe.num_levels(mx) == 1
    assert (probe.level_scale(mx, 0), probe.level_block(mx, 0)) == (DType.E8M0, 32)
    assert probe.element(nv) is DType.E2M1
    assert probe.num_levels(nv) == 2
    assert (probe.level_scale(nv, 0), probe.level_block(nv, 0)) == (DType.E4M3, 16)
    assert probe.level_scale(nv, 1) is DType.Float32
    assert probe.level_block(nv, 1) == probe.constants()["BLOCK_WHOLE"] == 0


def test_block_scaled_extension(probe):
    d = EXT_BS
    assert probe.kind(d) == KIND_BLOCK_SCALED
    assert probe.element(d) is EXT_SIMPLE
    assert probe.num_levels(d) == 3
    assert [probe.level_scale(d, i) for i in range(3)] == [DType.E4M3, DType.E8M0, DType.Float32]
    assert [probe.level_block(d, i) for i in range(3)] == [64, 4, 0]
    assert probe.num_planes(d) == 4
    assert probe.plane(d, 0) is EXT_SIMPLE


def test_level_block_too_large_is_overflow_error(probe):
    assert probe.level_scale(EXT_BS_HUGE, 0) is DType.E8M0
    with pytest.raises(OverflowError, match=r"SW_DType_LevelBlock: the level block "
                       r"of CapiBlockScaled\('CapiBSHuge_.*'\) \(1180591620717411303424\) "
                       r"does not fit in a Py_ssize_t"):
        probe.level_block(EXT_BS_HUGE, 0)


@pytest.mark.parametrize("func", ["level_scale", "level_block"])
@pytest.mark.parametrize("index", [-1, 2, 3, 2 ** 62])
def test_level_index_out_of_range_is_index_error(probe, func, index):
    with pytest.raises(IndexError, match=r"SW_DType_Level(Scale|Block): level index "
                       r"%d out of range for BlockScaledDType\('NVFP4'\), which has 2" % index):
        getattr(probe, func)(DType.NVFP4, index)


# ---- LevelBlockShape (version 5): N-D blocks --------------------------------------------

@pytest.mark.parametrize("name", sorted(CAPI_BLOCK_SCALED))
def test_block_shapes_of_the_builtins(probe, name):
    d = BUILTINS[name]
    for i, level in enumerate(d.levels):
        shape = level.block_shape or ()
        assert probe.level_block_shape(d, i, 8) == (len(shape), shape)


def test_nd_blocks_are_read_as_shapes_and_refused_as_one_count(probe):
    import stride_weave.formats as formats

    nv = formats.NVFP4_16x16
    assert probe.level_block_shape(nv, 0, 8) == (2, (16, 16))
    assert probe.level_block_shape(nv, 1, 8) == (0, ())
    assert probe.level_block_shape(formats.FP8_E4M3_128x128, 0, 2) == (2, (128, 128))
    assert probe.level_block_shape(formats.FP8_E4M3_1x128, 0, 2) == (1, (128,))
    assert probe.level_block(formats.FP8_E4M3_1x128, 0) == 128
    with pytest.raises(ValueError, match=r"^SW_DType_LevelBlock: level 0 of "
                       r"BlockScaledDType\('NVFP4_16x16'\) has the N-D block \(16, 16\); "
                       r"read it with SW_DType_LevelBlockShape$"):
        probe.level_block(nv, 0)
    assert probe.level_block(nv, 1) == 0
    with pytest.raises(ValueError, match="N-D block"):
        probe.macro_block_scaled(nv)


def test_level_block_shape_stores_at_most_n_extents(probe):
    import stride_weave.formats as formats

    d = CapiBlockScaled(unique_name("CapiND"), element=DType.E2M1,
                        levels=[Level(DType.E4M3, (2, 3, 4))])
    assert [probe.level_block_shape(d, 0, n) for n in range(5)] == [
        (3, ()), (3, (2,)), (3, (2, 3)), (3, (2, 3, 4)), (3, (2, 3, 4))]
    # n == 0 asks for the number of dimensions; shape may then be NULL
    assert probe.level_block_shape(formats.NVFP4_16x16, 0, 0, True) == (2, ())
    assert probe.level_block_shape(DType.MXFP4, 0, 0, True) == (1, ())


def test_level_block_shape_argument_errors(probe):
    with pytest.raises(SystemError, match=r"^SW_DType_LevelBlockShape: got a NULL shape "
                       r"with n > 0 \(shape must hold n >= 0 entries\)$"):
        probe.level_block_shape(DType.MXFP4, 0, 1, True)
    with pytest.raises(SystemError, match=r"^SW_DType_LevelBlockShape: got a negative n"):
        probe.level_block_shape(DType.MXFP4, 0, -1)
    for index in (-1, 2, 2 ** 62):
        with pytest.raises(IndexError, match=r"SW_DType_LevelBlockShape: level index %d out "
                           r"of range for BlockScaledDType\('NVFP4'\), which has 2" % index):
            probe.level_block_shape(DType.NVFP4, index, 2)


def test_level_block_shape_overflow_leaves_shape_unchanged(probe):
    """An extent beyond Py_ssize_t is an OverflowError, whichever entry it
    is; the probe checks that no extent was written."""
    wide = CapiBlockScaled(unique_name("CapiNDHuge"), element=DType.E2M1,
                           levels=[Level(DType.E4M3, (16, 2 ** 70))])
    with pytest.raises(OverflowError, match=r"SW_DType_LevelBlockShape: the level block "
                       r"extent of CapiBlockScaled\('CapiNDHuge_.*'\) "
                       r"\(1180591620717411303424\) does not fit in a Py_ssize_t"):
        probe.level_block_shape(wide, 0, 2)
    assert probe.level_block_shape(wide, 0, 1) == (2, (16,))   # only what is stored
    with pytest.raises(OverflowError):
        probe.level_block_shape(EXT_BS_HUGE, 0, 1)
    assert probe.level_block_shape(EXT_BS_HUGE, 0, 0) == (1, ())


# ---- wrong kinds, non-descriptors, unregistered descriptors, NULL ---------------------

# (probe function, extra arguments, C name, the kinds it accepts)
FUNCTIONS = [
    ("name", (), "SW_DType_Name", "a registered descriptor",
     {KIND_CATEGORY, KIND_SIMPLE, KIND_COMPOUND, KIND_BLOCK_SCALED}),
    ("name_utf8", (), "SW_DType_NameUTF8", "a registered descriptor",
     {KIND_CATEGORY, KIND_SIMPLE, KIND_COMPOUND, KIND_BLOCK_SCALED}),
    ("supertype", (), "SW_DType_Supertype", "a registered descriptor",
     {KIND_CATEGORY, KIND_SIMPLE, KIND_COMPOUND, KIND_BLOCK_SCALED}),
    ("bits", (), "SW_DType_Bits", "a registered SimpleDType", {KIND_SIMPLE}),
    ("num_planes", (), "SW_DType_NumPlanes", "a registered CompoundDType",
     {KIND_COMPOUND, KIND_BLOCK_SCALED}),
    ("plane", (0,), "SW_DType_Plane", "a registered CompoundDType",
     {KIND_COMPOUND, KIND_BLOCK_SCALED}),
    ("element", (), "SW_DType_Element", "a registered BlockScaledDType",
     {KIND_BLOCK_SCALED}),
    ("num_levels", (), "SW_DType_NumLevels", "a registered BlockScaledDType",
     {KIND_BLOCK_SCALED}),
    ("level_scale", (0,), "SW_DType_LevelScale", "a registered BlockScaledDType",
     {KIND_BLOCK_SCALED}),
    ("level_block", (0,), "SW_DType_LevelBlock", "a registered BlockScaledDType",
     {KIND_BLOCK_SCALED}),
    ("level_block_shape", (0, 2), "SW_DType_LevelBlockShape",
     "a registered BlockScaledDType", {KIND_BLOCK_SCALED}),
    ("is_subtype", (DType.Any,), "SW_DType_IsSubtype", "a registered descriptor",
     {KIND_CATEGORY, KIND_SIMPLE, KIND_COMPOUND, KIND_BLOCK_SCALED}),
]
ONE_OF_EACH_KIND = {KIND_CATEGORY: DType.Floating, KIND_SIMPLE: DType.Float32,
                    KIND_COMPOUND: EXT_PAIR, KIND_BLOCK_SCALED: DType.MXFP4}
FUNCTION_IDS = [f[0] for f in FUNCTIONS]


@pytest.mark.parametrize("func,extra,cname,expected,kinds", FUNCTIONS, ids=FUNCTION_IDS)
def test_wrong_kind_is_type_error_naming_function_and_argument(probe, func, extra, cname,
                                                                expected, kinds):
    for kind, d in ONE_OF_EACH_KIND.items():
        call = getattr(probe, func)
        if kind in kinds:
            call(d, *extra)
            continue
        with pytest.raises(TypeError, match=r"^%s: expected %s, got %s$"
                           % (cname, expected, re.escape(repr(d)))):
            call(d, *extra)


@pytest.mark.parametrize("func,extra,cname,expected,kinds", FUNCTIONS, ids=FUNCTION_IDS)
@pytest.mark.parametrize("obj", NOT_DESCRIPTORS, ids=ids(NOT_DESCRIPTORS))
def test_non_descriptor_is_type_error_naming_function_and_type(probe, func, extra, cname,
                                                               expected, kinds, obj):
    # the type's name as Python's own messages give it (tp_name)
    with pytest.raises(TypeError, match=r"^%s: expected %s, got ([\w.]+\.)?%s$"
                       % (cname, expected, re.escape(type(obj).__name__))):
        getattr(probe, func)(obj, *extra)


@pytest.mark.parametrize("func,extra,cname,expected,kinds", FUNCTIONS, ids=FUNCTION_IDS)
def test_null_is_system_error(probe, func, extra, cname, expected, kinds):
    with pytest.raises(SystemError, match=r"^%s: got NULL instead of %s$" % (cname, expected)):
        getattr(probe, func)(probe.NULL, *extra)


def test_null_names_are_system_errors(probe):
    with pytest.raises(SystemError, match="SW_DType_FromName: got NULL"):
        probe.from_name(probe.NULL)
    with pytest.raises(SystemError, match="SW_DType_FromNameObject: got NULL"):
        probe.from_name_object(probe.NULL)
    with pytest.raises(SystemError, match="SW_DType_IsSubtype: got NULL"):
        probe.is_subtype(DType.Float32, probe.NULL)


def test_is_subtype_other_must_be_a_registered_descriptor(probe):
    for other in NOT_DESCRIPTORS:
        with pytest.raises(TypeError, match=r"^SW_DType_IsSubtype: expected a registered "
                           r"descriptor as other, got ([\w.]+\.)?%s$" % type(other).__name__):
            probe.is_subtype(DType.Float32, other)
    with pytest.raises(ValueError, match=r"SW_DType_IsSubtype: .* not registered"):
        probe.is_subtype(DType.Float32, REJECTED)


@pytest.mark.parametrize("func,extra,cname,expected,kinds",
                         [f for f in FUNCTIONS if KIND_SIMPLE in f[4]],
                         ids=[f[0] for f in FUNCTIONS if KIND_SIMPLE in f[4]])
def test_unregistered_descriptor_is_value_error(probe, func, extra, cname, expected, kinds):
    pattern = r"^%s: expected %s, got %s, which is not registered"
    with pytest.raises(ValueError, match=pattern % (cname, expected, re.escape(repr(REJECTED)))):
        getattr(probe, func)(REJECTED, *extra)

    errors = []

    def callback(self):
        with pytest.raises(ValueError, match=pattern % (cname, expected, r"<unfinished .*>")):
            getattr(probe, func)(self, *extra)
        errors.append(True)

    _Recorder.callback = callback
    made = _Recorder(unique_name("CapiUnfinished"), bits=8, supertype=DType.Floating)
    assert errors == [True]
    getattr(probe, func)(made, *extra)     # registered now


def _uncountable(obj):
    # None's count moves with everything else; CPython 3.12+ does not count
    # references to immortal objects (interned strings in 3.12).
    return obj is None or sys.getrefcount(obj) > 2 ** 28


def test_results_are_new_references(probe):
    d, nv = EXT_SIMPLE, DType.NVFP4
    calls = [
        (lambda: probe.name(d), d.name),
        (lambda: probe.supertype(d), EXT_SUBCAT),
        (lambda: probe.supertype(DType.Any), None),
        (lambda: probe.plane(nv, 1), DType.E4M3),
        (lambda: probe.element(nv), DType.E2M1),
        (lambda: probe.level_scale(nv, 1), DType.Float32),
        (lambda: probe.from_name_object(d.name), d),
        (lambda: probe.from_dlpack(10, 8, 1), DType.E4M3),
    ]
    for call, obj in calls:
        if _uncountable(obj):
            assert all(call() is obj for _ in range(3))
            continue
        before = sys.getrefcount(obj)
        results = [call() for _ in range(50)]
        during = sys.getrefcount(obj)
        assert all(r is obj for r in results)
        del results
        after = sys.getrefcount(obj)
        assert (during, after) == (before + 50, before), call


def test_every_entry_point_has_a_test():
    # every function pointer of the table is exercised in this module
    functions = {"Kind": "kind", "FromName": "from_name",
                 "FromNameObject": "from_name_object", "Name": "name",
                 "NameUTF8": "name_utf8", "Bits": "bits", "Supertype": "supertype",
                 "IsSubtype": "is_subtype", "NumPlanes": "num_planes",
                 "Plane": "plane", "Element": "element", "NumLevels": "num_levels",
                 "LevelScale": "level_scale", "LevelBlock": "level_block",
                 "FromDLPack": "from_dlpack", "ToDLPack": "to_dlpack",
                 "IsDType": "isdtype", "CanCast": "can_cast",
                 "PromoteTypes": "promote_types",
                 "TryPromoteTypes": "try_promote_types",
                 "LevelBlockShape": "level_block_shape"}
    header = HEADER.read_text(encoding="utf-8")
    declared = set(re.findall(r"\(\*(\w+)\)\(", header))
    assert declared == set(functions)
    source = pathlib.Path(__file__).read_text(encoding="utf-8")
    for probe_name in functions.values():
        assert "probe.%s(" % probe_name in source


# ==========================================================================
# 5. the import call
# ==========================================================================

_PyCapsule_New = ctypes.pythonapi.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
_PyCapsule_GetPointer = ctypes.pythonapi.PyCapsule_GetPointer
_PyCapsule_GetPointer.restype = ctypes.c_void_p
_PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


class _Head(ctypes.Structure):
    _fields_ = [("api_version", ctypes.c_uint), ("struct_size", ctypes.c_size_t)]


@pytest.fixture
def fake_capsule(probe, monkeypatch):
    """Replace _dtypes._C_API by a capsule over a table (a copy of the real
    one, or just a head) with the given version and size."""
    keep = []

    def install(version, size, name=b"stride_weave._dtypes._C_API", copy=True):
        real_size = probe.version()[1]
        buffer = ctypes.create_string_buffer(max(real_size, size) + 64)
        if copy:
            real = _PyCapsule_GetPointer(_dtypes._C_API, b"stride_weave._dtypes._C_API")
            ctypes.memmove(buffer, real, real_size)
        head = _Head.from_buffer(buffer)
        head.api_version, head.struct_size = version, size
        name_buffer = ctypes.create_string_buffer(name)
        keep.extend([buffer, name_buffer])   # the capsule points into both
        capsule = _PyCapsule_New(ctypes.addressof(buffer),
                                 ctypes.addressof(name_buffer), None)
        monkeypatch.setattr(_dtypes, "_C_API", capsule)
        return ctypes.addressof(buffer)

    yield install
    monkeypatch.undo()


def test_import_again_gives_the_same_table(probe):
    assert probe.import_again() == probe.table_address()[0]


@pytest.mark.parametrize("version", [0, 3, 4])
def test_older_build_is_import_error(probe, fake_capsule, version):
    size = probe.version()[1]
    fake_capsule(version, size)
    with pytest.raises(ImportError, match=r"needs the stride_weave C API version 5 "
                       r"\(a %d-byte table\); the installed stride_weave provides "
                       r"version %d \(%d bytes\): upgrade stride-weave"
                       % (size, version, size)):
        probe.import_again()


def test_shorter_table_is_import_error(probe, fake_capsule):
    fake_capsule(1, 16, copy=False)
    with pytest.raises(ImportError, match=r"provides version 1 \(16 bytes\)"):
        probe.import_again()


def test_newer_build_is_accepted(probe, fake_capsule):
    size = probe.version()[1]
    address = fake_capsule(6, size + 64)
    assert probe.import_again() == address
    assert probe.table_address()[0] != address   # the module kept its table


def test_capsule_with_another_name_is_import_error(probe, fake_capsule):
    fake_capsule(1, probe.version()[1], name=b"other._C_API")
    with pytest.raises(ImportError, match=r'is not a capsule named "stride_weave._dtypes._C_API"'):
        probe.import_again()


def test_not_a_capsule_is_import_error(probe, monkeypatch):
    monkeypatch.setattr(_dtypes, "_C_API", 42)
    with pytest.raises(ImportError, match=r'_C_API is not a capsule named'):
        probe.import_again()


def test_missing_capsule_is_import_error(probe, monkeypatch):
    monkeypatch.delattr(_dtypes, "_C_API")
    with pytest.raises(ImportError, match=r"has no C API \(_C_API\): this stride_weave "
                       r"build is too old for this extension"):
        probe.import_again()


def test_unimportable_module_is_import_error(probe, monkeypatch):
    monkeypatch.setitem(sys.modules, "stride_weave._dtypes", None)
    with pytest.raises(ImportError):
        probe.import_again()


def test_deleting_the_capsule_keeps_consumers_working(probe, monkeypatch):
    monkeypatch.delattr(_dtypes, "_C_API")
    import gc
    gc.collect()
    assert probe.bits(DType.Float32) == 32
    assert probe.table_objects()["Float32"] is DType.Float32


# ==========================================================================
# child processes: import order, re-import, subinterpreters
# ==========================================================================

def _run_child(code, *args, timeout=120):
    proc = run_python(["-X", "faulthandler", "-c", textwrap.dedent(code), *args],
                      env=_capi.child_env(), timeout=timeout)
    assert_exited(proc, quiet=True)
    return json.loads(proc.stdout)


def test_consumer_imports_stride_weave_itself():
    directory = _capi.build("example")
    report = _run_child("""
        import json, sys
        sys.path.insert(0, sys.argv[1])
        assert "stride_weave._dtypes" not in sys.modules
        import swcheck
        from stride_weave.dtypes import DType
        print(json.dumps({
            "imported": "stride_weave._dtypes" in sys.modules,
            "bits": swcheck.plane_bits(DType.NVFP4),
        }))
    """, str(directory))
    assert report == {"imported": True, "bits": [4, 8, 32]}


def test_consumer_without_stride_weave_is_import_error():
    directory = _capi.build("example")
    report = _run_child("""
        import json, sys
        sys.path.insert(0, sys.argv[1])
        sys.modules["stride_weave._dtypes"] = None
        try:
            import swcheck
        except ImportError as exc:
            print(json.dumps({"error": type(exc).__name__}))
        else:
            print(json.dumps({"error": None}))
    """, str(directory))
    assert report["error"] in ("ImportError", "ModuleNotFoundError")


def test_reimport_keeps_the_capsule_and_the_table():
    directory = _capi.build("probe")
    report = _run_child("""
        import importlib, json, sys
        sys.path.insert(0, sys.argv[1])
        import sw_capi_probe as probe
        import stride_weave._dtypes as c1
        from stride_weave.dtypes import DType, SimpleDType
        capsule, table = c1._C_API, probe.table_address()[0]
        f32 = DType.Float32
        checks = {}
        for round_ in range(3):
            for k in [k for k in sys.modules if k.startswith("stride_weave")]:
                del sys.modules[k]
            c2 = importlib.import_module("stride_weave._dtypes")
            checks.setdefault("new_module", []).append(c2 is not c1)
            checks.setdefault("same_capsule", []).append(c2._C_API is capsule)
            checks.setdefault("same_table", []).append(probe.import_again() == table)
            checks.setdefault("probe_works", []).append(
                probe.bits(f32) == 32 and probe.from_name(b"Float32") is f32
                and probe.kind(c2.DType.MXFP4) == 4)
            new = c2.SimpleDType("ReCapi%d" % round_, bits=8, supertype=c2.DType.Floating)
            checks.setdefault("new_registration_found", []).append(
                probe.from_name(b"ReCapi%d" % round_) is new and probe.kind(new) == 2)
        print(json.dumps({k: all(v) for k, v in checks.items()}))
    """, str(directory))
    assert report == {"new_module": True, "same_capsule": True, "same_table": True,
                      "probe_works": True, "new_registration_found": True}


# What the subinterpreter runs: argv-free, so it takes its paths by %-format.
_SUB_CODE = """
import json, sys
sys.path.insert(0, %(directory)r)
import sw_capi_probe as probe
from stride_weave.dtypes import DType
with open(%(out)r, "w") as f:
    json.dump({
        "table": probe.table_address()[0],
        "float32": id(DType.Float32),
        "table_is_this_graph": probe.table_objects()["Float32"] is DType.Float32,
        "lookup_in_this_graph": probe.from_name(b"Float32") is DType.Float32,
        "kind": probe.kind(DType.NVFP4),
    }, f)
"""


@pytest.mark.skipif(sys.version_info < (3, 12),
                    reason="subinterpreters with their own graphs start at CPython "
                           "3.12 (see test_isolation.py)")
def test_subinterpreter_gets_its_own_table(tmp_path):
    directory = _capi.build("probe")
    out = tmp_path / "sub.json"
    report = _run_child("""
        import json, sys
        sys.path.insert(0, sys.argv[1])
        if sys.version_info >= (3, 13):
            import _interpreters as I
            iid = I.create("legacy")
            run = lambda code: I.exec(iid, code)
        else:
            import _xxsubinterpreters as I
            iid = I.create(isolated=False)
            run = lambda code: I.run_string(iid, code)
        import sw_capi_probe as probe
        from stride_weave.dtypes import DType
        table = probe.table_address()[0]
        failure = run(sys.argv[3])
        I.destroy(iid)
        with open(sys.argv[2]) as f:
            sub = json.load(f)
        print(json.dumps({
            "failure": repr(failure) if failure else None,
            "sub": sub,
            "main_table": table,
            "main_float32": id(DType.Float32),
            "main_table_kept": probe.table_address()[0] == table,
            "main_lookup": probe.from_name(b"Float32") is DType.Float32,
        }))
    """, str(directory), str(out), _SUB_CODE % {"directory": str(directory), "out": str(out)})
    assert report["failure"] is None
    sub = report["sub"]
    assert sub["table_is_this_graph"] and sub["lookup_in_this_graph"]
    assert sub["kind"] == KIND_BLOCK_SCALED
    assert sub["table"] != report["main_table"]
    assert sub["float32"] != report["main_float32"]
    assert report["main_table_kept"] and report["main_lookup"]


# ==========================================================================
# the documented example
# ==========================================================================

def test_example_plane_bits(example):
    assert example.plane_bits(DType.Float32) == (32,)
    assert example.plane_bits(DType.E2M1) == (4,)
    assert example.plane_bits(DType.MXFP4) == (4, 8)
    assert example.plane_bits(DType.NVFP4) == (4, 8, 32)
    assert example.plane_bits(EXT_PAIR) == (16, 32)
    with pytest.raises(TypeError, match=r"plane_bits: expected a simple or compound "
                                        r"dtype, got DTypeCategory\('Floating'\)"):
        example.plane_bits(DType.Floating)
    with pytest.raises(TypeError):
        example.plane_bits("Float32")
    with pytest.raises(OverflowError):
        example.plane_bits(EXT_HUGE)


def test_example_is_narrow_float(example):
    objects = [d for d in EVERY + NOT_DESCRIPTORS if d is not EXT_HUGE]
    narrow = [d for d in EVERY if d.is_simple() and d.is_subtype_of(DType.Floating)
              and d.bits <= 8]
    assert len(narrow) == 6    # E8M0, E5M2, E4M3, E3M2, E2M3, E2M1
    for d in objects:
        assert example.is_narrow_float(d) is any(d is x for x in narrow), d
    assert example.count_narrow_floats(objects) == len(narrow)
    assert example.count_narrow_floats(iter(BUILTINS.values())) == 6
    with pytest.raises(TypeError):
        example.count_narrow_floats(3)
    with pytest.raises(OverflowError):
        example.is_narrow_float(EXT_HUGE)


def test_example_describe(example):
    assert example.describe(DType.Float32) == "Float32: 32 bits"
    assert example.describe(DType.Floating) == "Floating: category"
    assert example.describe(EXT_PAIR) == f"{EXT_PAIR.name}: 2 planes"
    assert example.describe(DType.MXFP4) == "MXFP4: E2M1 x E8M0/32"
    assert example.describe(DType.NVFP4) == "NVFP4: E2M1 x E4M3/16 x Float32/whole"
    assert example.describe(EXT_BS) == (
        f"{EXT_BS.name}: {EXT_SIMPLE.name} x E4M3/64 x E8M0/4 x Float32/whole")
    import stride_weave.formats as formats
    assert example.describe(formats.NVFP4_16x16) == (
        "NVFP4_16x16: E2M1 x E4M3/16x16 x Float32/whole")
    cube = CapiBlockScaled(unique_name("CapiCube"), element=DType.E2M1,
                           levels=[Level(DType.E8M0, (4, 4, 4))])
    assert example.describe(cube) == f"{cube.name}: E2M1 x E8M0/4x4x..."
    with pytest.raises(TypeError, match="SW_DType_Name: expected a registered descriptor, got int"):
        example.describe(3)
    with pytest.raises(ValueError, match="not registered"):
        example.describe(REJECTED)
    with pytest.raises(OverflowError):
        example.describe(EXT_BS_HUGE)


def test_example_common_dtype(example):
    """No join is None, with no exception left set; a bad argument raises."""
    from stride_weave import formats

    assert example.common_dtype(DType.Int8, DType.Int32) is DType.Int32
    assert example.common_dtype(DType.Int8, formats.UInt8) is formats.Int16
    assert example.common_dtype(DType.Int8, DType.Float32) is None
    assert example.common_dtype(DType.E4M3, DType.E4M3) is DType.E4M3
    assert example.common_dtype(DType.MXFP4, DType.Float32) is None
    with pytest.raises(TypeError, match=r"^SW_DType_TryPromoteTypes: expected a "
                                        r"registered descriptor, got str$"):
        example.common_dtype("Int8", DType.Int8)
    with pytest.raises(ValueError, match="not registered"):
        example.common_dtype(DType.Int8, REJECTED)


def test_example_find_dtype(example):
    """An unknown name is None; every other error propagates."""
    assert example.find_dtype("E4M3") is DType.E4M3
    assert example.find_dtype(EXT_UNICODE.name) is EXT_UNICODE
    assert example.find_dtype("NoSuchDType") is None
    with pytest.raises(TypeError, match=r"SW_DType_FromNameObject: name must be a "
                                        r"str, got bytes"):
        example.find_dtype(b"E4M3")


def test_docs_session_runs_as_shown():
    """The interactive session on docs/c-api.md is a doctest, run in a fresh
    process (its registry holds the built-ins only) with the built example."""
    directory = _capi.build("example")
    docs = DOCS.read_text(encoding="utf-8")
    sessions = [block for block in re.findall(r"```python\n(.*?)```", docs, flags=re.S)
                if block.startswith(">>> import swcheck")]
    assert len(sessions) == 1
    report = _run_child("""
        import doctest, json, sys
        sys.path.insert(0, sys.argv[1])
        test = doctest.DocTestParser().get_doctest(sys.argv[2], {}, "c-api.md", None, 0)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        out = []
        runner.run(test, out=out.append)
        print(json.dumps({"failed": runner.failures, "tried": runner.tries,
                          "report": "".join(out)}))
    """, str(directory), sessions[0])
    assert report["tried"] >= 6
    assert report["failed"] == 0, report["report"]


# ==========================================================================
# 6. DLPack (version 2): the built-ins' fixed mapping
# ==========================================================================

def _builtin_simple():
    return [d for d in DType.registered()
            if isinstance(d, SimpleDType) and getattr(DType, d.name, None) is d]


def test_dlpack_of_every_builtin_agrees_with_interop(probe):
    from stride_weave import interop

    builtins = _builtin_simple()
    assert len(builtins) == 11
    for d in builtins:
        triple = tuple(interop.to_dlpack(d))
        assert probe.to_dlpack(d) == triple
        assert probe.from_dlpack(*triple) is d
        assert probe.macro_dlpack(d) == (d, triple)


@pytest.mark.parametrize("triple", [(10, 8, 2), (2, 16, 1), (3, 8, 1), (-1, 8, 1),
                                    (17, 8, 1), (2, 32, 0)])
def test_from_dlpack_unknown_is_lookup_error(probe, triple):
    with pytest.raises(LookupError, match=r"SW_DType_FromDLPack: no built-in dtype has "
                       r"the DLPack type \(code %d, bits %d, lanes %d\)" % triple):
        probe.from_dlpack(*triple)


def test_to_dlpack_sees_the_builtins_only(probe):
    """An extension's mapping declared from Python is not visible to C."""
    from stride_weave import interop

    d = SimpleDType(unique_name("CDL"), bits=16, supertype=DType.Floating)
    # (a triple no other test of the process declares)
    interop.register_mapping(d, dlpack=(interop.DLDataTypeCode.kDLOpaqueHandle, 2, 8))
    with pytest.raises(LookupError, match=r"SW_DType_ToDLPack: SimpleDType\('CDL_.*'\) is "
                       r"not a built-in simple dtype"):
        probe.to_dlpack(d)
    with pytest.raises(LookupError):
        probe.from_dlpack(3, 2, 8)


@pytest.mark.parametrize("obj, exc, match", [
    (DType.Floating, TypeError, r"SW_DType_ToDLPack: expected a registered SimpleDType, "
                                r"got DTypeCategory\('Floating'\)"),
    (DType.MXFP4, TypeError, r"expected a registered SimpleDType, got BlockScaledDType"),
    ("Float32", TypeError, r"SW_DType_ToDLPack: expected a registered SimpleDType, got str"),
])
def test_to_dlpack_wrong_argument(probe, obj, exc, match):
    with pytest.raises(exc, match=match):
        probe.to_dlpack(obj)


def test_to_dlpack_null_argument_and_outputs_are_system_errors(probe):
    with pytest.raises(SystemError, match="SW_DType_ToDLPack: got NULL"):
        probe.to_dlpack(probe.NULL)
    with pytest.raises(SystemError, match="SW_DType_ToDLPack: got a NULL output pointer"):
        probe.to_dlpack(DType.Float32, True)


def test_header_and_docs_list_the_same_dlpack_types_as_interop():
    from stride_weave import interop

    header = HEADER.read_text(encoding="utf-8")
    docs = DOCS.read_text(encoding="utf-8")
    for d in _builtin_simple():
        code, bits, lanes = interop.to_dlpack(d)
        assert f"{d.name} ({code}, {bits}, {lanes})" in header
        assert f"| `{d.name}` | {code} | {bits} | {lanes} |" in docs


# ==========================================================================
# 7. kinds, casting and promotion (version 3)
# ==========================================================================

# The kind names in the order of their SW_ISDTYPE_* bits.
KIND_NAMES = ("bool", "signed integer", "unsigned integer", "integral",
              "real floating", "complex floating", "numeric")
CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


def _relation_subjects():
    import stride_weave.formats as formats

    return [d for d in DType.registered()
            if d.name in BUILTIN_NAMES or d in formats.FORMATS] + [
        EXT_CAT, EXT_SIMPLE, EXT_PAIR, EXT_BS]


def test_isdtype_agrees_with_python_for_every_kind_bit(probe):
    for d in _relation_subjects():
        for bit, name in enumerate(KIND_NAMES):
            assert probe.isdtype(d, 1 << bit) is _dtypes.isdtype(d, name), (d, name)
        # several bits: any may match
        assert probe.isdtype(d, 0x7F) is _dtypes.isdtype(d, KIND_NAMES)


def test_can_cast_agrees_with_python_at_every_level(probe):
    subjects = _relation_subjects()
    for a in subjects:
        for b in subjects:
            for level, name in enumerate(CASTINGS):
                assert probe.can_cast(a, b, level) is _dtypes.can_cast(a, b, name), (
                    a, b, name)


def test_promote_types_agrees_with_python(probe):
    from stride_weave.dtypes import PromotionError

    subjects = _relation_subjects()
    for a in subjects:
        for b in subjects:
            try:
                expected = _dtypes.promote_types(a, b)
            except PromotionError as e:
                with pytest.raises(PromotionError) as got:
                    probe.promote_types(a, b)
                assert str(got.value) == str(e).replace("promote_types:",
                                                        "SW_DType_PromoteTypes:")
            else:
                assert probe.promote_types(a, b) is expected


def test_relations_through_the_shorthands(probe):
    from stride_weave.dtypes import PromotionError

    assert probe.macro_relations(DType.Int8, DType.Int32) == (True, True, 1, DType.Int32)
    assert probe.macro_relations(DType.Bool, DType.Int8) == (False, True, 1, DType.Int8)
    assert probe.macro_relations(DType.Int8, DType.Float32) == (
        True, True, 0, PromotionError)


@pytest.mark.parametrize("call, exc, match", [
    (lambda p: p.isdtype("Float32", 1), TypeError,
     r"SW_DType_IsDType: expected a registered descriptor, got str"),
    (lambda p: p.isdtype(DType.Int8, 0), ValueError,
     r"SW_DType_IsDType: kinds must be SW_ISDTYPE_\* bits, got 0x0"),
    (lambda p: p.isdtype(DType.Int8, 0x80), ValueError, r"got 0x80"),
    (lambda p: p.isdtype(REJECTED, 1), ValueError, r"not registered"),
    (lambda p: p.can_cast(DType.Int8, 3, 2), TypeError,
     r"SW_DType_CanCast: expected a registered descriptor as to, got int"),
    (lambda p: p.can_cast(DType.Int8, DType.Int8, 5), ValueError,
     r"SW_DType_CanCast: casting must be one of SW_CASTING_NO \(0\) to "
     r"SW_CASTING_UNSAFE \(4\), got 5"),
    (lambda p: p.can_cast(DType.Int8, DType.Int8, -1), ValueError, r"got -1"),
    (lambda p: p.promote_types(DType.Int8, object()), TypeError,
     r"SW_DType_PromoteTypes: expected a registered descriptor, got object"),
])
def test_relations_bad_arguments(probe, call, exc, match):
    with pytest.raises(exc, match=match):
        call(probe)


def test_relations_null_arguments_are_system_errors(probe):
    for call in (lambda: probe.isdtype(probe.NULL, 1),
                 lambda: probe.can_cast(probe.NULL, DType.Int8, 2),
                 lambda: probe.can_cast(DType.Int8, probe.NULL, 2),
                 lambda: probe.promote_types(DType.Int8, probe.NULL)):
        with pytest.raises(SystemError, match="got NULL"):
            call()


def test_promote_types_returns_a_new_reference(probe):
    from stride_weave import formats

    before = sys.getrefcount(formats.Int16)
    results = [probe.promote_types(DType.Int8, formats.UInt8) for _ in range(50)]
    during = sys.getrefcount(formats.Int16)
    assert all(r is formats.Int16 for r in results)
    del results
    after = sys.getrefcount(formats.Int16)
    assert (during, after) == (before + 50, before)


# ==========================================================================
# 8. telling errors apart (version 4)
# ==========================================================================

def test_try_promote_types_agrees_with_promote_types(probe):
    """1 and the join where promote_types has one; 0, no exception and no
    join where it raises PromotionError."""
    from stride_weave.dtypes import PromotionError

    subjects = _relation_subjects()
    for a in subjects:
        for b in subjects:
            try:
                expected = (1, _dtypes.promote_types(a, b))
            except PromotionError:
                expected = (0, None)
            got = probe.try_promote_types(a, b)
            assert got[0] == expected[0] and got[1] is expected[1], (a, b)


@pytest.mark.parametrize("args, exc, match", [
    (("Float32", DType.Int8), TypeError,
     r"^SW_DType_TryPromoteTypes: expected a registered descriptor, got str$"),
    ((DType.Int8, 3), TypeError,
     r"^SW_DType_TryPromoteTypes: expected a registered descriptor, got int$"),
    ((DType.Int8, REJECTED), ValueError,
     r"^SW_DType_TryPromoteTypes: expected a registered descriptor, got .*, which is "
     r"not registered"),
    ((DType.Int8, DType.Int32, "null result"), SystemError,
     r"^SW_DType_TryPromoteTypes: got a NULL result pointer$"),
])
def test_try_promote_types_bad_arguments(probe, args, exc, match):
    with pytest.raises(exc, match=match):
        probe.try_promote_types(*args)


def test_try_promote_types_null_arguments_are_system_errors(probe):
    for args in ((probe.NULL, DType.Int8), (DType.Int8, probe.NULL)):
        with pytest.raises(SystemError, match=r"^SW_DType_TryPromoteTypes: got NULL"):
            probe.try_promote_types(*args)


def test_try_promote_types_returns_a_new_reference(probe):
    from stride_weave import formats

    before = sys.getrefcount(formats.Int16)
    results = [probe.try_promote_types(DType.Int8, formats.UInt8) for _ in range(50)]
    during = sys.getrefcount(formats.Int16)
    assert all(r == (1, formats.Int16) for r in results)
    del results
    after = sys.getrefcount(formats.Int16)
    assert (during, after) == (before + 50, before)


def test_the_exception_types_are_those_the_functions_raise(probe):
    """The table's exception types are the very classes raised: a C caller
    matches with PyErr_ExceptionMatches, without importing Python."""
    table = probe.table_objects()
    with pytest.raises(table["PromotionError"]) as info:
        probe.promote_types(DType.Int8, DType.Float32)
    assert type(info.value) is table["PromotionError"]
    for call in (lambda: probe.from_name(b"NoSuchDType"),
                 lambda: probe.from_name_object("NoSuchDType")):
        with pytest.raises(table["UnknownNameError"]) as info:
            call()
        assert type(info.value) is table["UnknownNameError"]
    assert issubclass(table["PromotionError"], TypeError)
    assert issubclass(table["UnknownNameError"], LookupError)


def test_a_kind_asked_in_c_settles_as_in_python(probe):
    """IsDType and CanCast go through the same read as isdtype and
    can_cast: an answer a record could change settles the dtype."""
    from stride_weave.numerics import NumericInfo, register_numeric_info

    d = SimpleDType(unique_name("CapiSettled"), bits=8, supertype=DType.Any)
    assert probe.isdtype(d, 1) is False                     # SW_ISDTYPE_BOOL
    with pytest.raises(ValueError, match="has no numeric record for good"):
        register_numeric_info(d, NumericInfo.boolean(8))
    e = SimpleDType(unique_name("CapiSettled"), bits=8, supertype=DType.Floating)
    assert probe.can_cast(DType.E2M1, e, 2) is False
    with pytest.raises(ValueError, match="has no numeric record for good"):
        register_numeric_info(e, NumericInfo.floating(
            "e4m3", exponent_bits=4, mantissa_bits=3, bias=7, nan_encoding="all_ones"))


def _module_tail(name, methods):
    """C source that makes a module `name` of the C functions `methods`
    ({python name: C function}, METH_VARARGS or METH_NOARGS by name), which
    imports the C API in its exec slot and runs without the GIL."""
    entries = "".join(
        f'    {{"{py}", {c}, {"METH_NOARGS" if py == "check" else "METH_VARARGS"}, NULL}},\n'
        for py, c in methods.items())
    return textwrap.dedent("""
        static PyMethodDef methods[] = {
        %s    {NULL, NULL, 0, NULL}};

        static int
        exec_module(PyObject *module)
        {
            (void)module;
            return SW_DTypes_Import();
        }

        static PyModuleDef_Slot slots[] = {
            {Py_mod_exec, exec_module},
        #ifdef Py_GIL_DISABLED
            {Py_mod_gil, Py_MOD_GIL_NOT_USED},
        #endif
            {0, NULL}};

        static PyModuleDef def = {PyModuleDef_HEAD_INIT, .m_name = "%s",
                                  .m_methods = methods, .m_slots = slots};

        PyMODINIT_FUNC
        PyInit_%s(void)
        {
            return PyModuleDef_Init(&def);
        }
        """) % (entries, name, name)


def _header_of_version(version):
    """The header as a consumer of an earlier version was compiled against:
    the table only grows at its end, so it is this header without the
    blocks after `version`, with that version."""
    text = HEADER.read_text(encoding="utf-8")
    start = text.index("    /* ---- version %d ----" % (version + 1))
    end = text.index("} SW_DTypes_CAPI;")
    text = text[:start] + text[end:]
    current = re.search(r"#define SW_DTYPES_API_VERSION (\d+)", text)
    text = text.replace(current.group(0), "#define SW_DTYPES_API_VERSION %d" % version)
    return text


# What a consumer of each earlier version calls (only what its header has),
# and what that gives against this build.
_OLD_CONSUMERS = {
    2: ("""
        static PyObject *
        check(PyObject *module, PyObject *Py_UNUSED(ignored))
        {
            int code, bits, lanes;
            (void)module;
            if (SW_DType_ToDLPack(SW_DTypesAPI->Float32, &code, &bits, &lanes) < 0) {
                return NULL;
            }
            return Py_BuildValue("(inii)", SW_DTypesAPI->api_version,
                                 SW_DType_Bits(SW_DTypesAPI->Int8), code, bits);
        }
        """, [5, 8, 2, 32]),
    3: ("""
        static PyObject *
        check(PyObject *module, PyObject *Py_UNUSED(ignored))
        {
            PyObject *join = SW_DType_PromoteTypes(SW_DTypesAPI->Int8,
                                                   SW_DTypesAPI->Int32);
            PyObject *none = join ? SW_DType_PromoteTypes(SW_DTypesAPI->Int8,
                                                          SW_DTypesAPI->Float32) : NULL;
            int refused = none == NULL && join != NULL
                          && PyErr_ExceptionMatches(PyExc_TypeError);
            (void)module;
            if (!refused) {
                Py_XDECREF(join);
                Py_XDECREF(none);
                return NULL;
            }
            PyErr_Clear();
            return Py_BuildValue("(iNii)", SW_DTypesAPI->api_version, join,
                                 SW_DType_IsDType(SW_DTypesAPI->Int8,
                                                  SW_ISDTYPE_SIGNED_INTEGER),
                                 SW_DType_CanCast(SW_DTypesAPI->Int8,
                                                  SW_DTypesAPI->Float32,
                                                  SW_CASTING_SAFE));
        }
        """, [5, "Int32", 1, 1]),
    4: ("""
        static PyObject *
        check(PyObject *module, PyObject *Py_UNUSED(ignored))
        {
            PyObject *join = NULL;
            int found = SW_DType_TryPromoteTypes(SW_DTypesAPI->Float32,
                                                 SW_DTypesAPI->Float64, &join);
            (void)module;
            if (found != 1) {
                return NULL;
            }
            return Py_BuildValue("(INn)", SW_DTypesAPI->api_version, join,
                                 SW_DType_LevelBlock(SW_DTypesAPI->NVFP4, 0));
        }
        """, [5, "Float64", 16]),
}


@pytest.mark.parametrize("version", sorted(_OLD_CONSUMERS))
def test_a_consumer_of_an_earlier_version_keeps_working(tmp_path, version):
    """A consumer compiled against an earlier header (its table shorter,
    its version lower) imports and runs against this build unchanged."""
    if _capi.compiler() is None:
        pytest.skip(_capi.no_compiler_reason())
    include = tmp_path / "include" / "stride_weave"
    include.mkdir(parents=True)
    header = _header_of_version(version)
    table = header[header.index("typedef struct SW_DTypes_CAPI {"):].split("} SW_DTypes_CAPI;")[0]
    fields = set(re.findall(r"\(\*(\w+)\)\(", re.sub(r"/\*.*?\*/", "", table, flags=re.S)))
    assert "LevelBlockShape" not in fields and ("IsDType" in fields) == (version >= 3)
    assert ("TryPromoteTypes" in fields) == (version >= 4)
    (include / "dtypes.h").write_text(header, encoding="utf-8")
    source, expected = _OLD_CONSUMERS[version]
    (tmp_path / "swold.c").write_text(
        "#define PY_SSIZE_T_CLEAN\n#include <Python.h>\n#include <stride_weave/dtypes.h>\n"
        + textwrap.dedent(source) + _module_tail("swold", {"check": "check"}))
    (tmp_path / "setup.py").write_text(textwrap.dedent("""\
        from setuptools import Extension, setup
        setup(name="swold", ext_modules=[Extension(
            "swold", ["swold.c"], include_dirs=["include"])])
        """))
    _capi.build_in(tmp_path)
    report = _run_child("""
        import json, sys
        sys.path.insert(0, sys.argv[1])
        import swold
        print(json.dumps([getattr(x, "name", x) for x in swold.check()]))
    """, str(tmp_path))
    assert report == expected


def _docs_relations_example():
    """The C example of docs/c-api.md's "Kinds, casting and promotion"."""
    docs = DOCS.read_text(encoding="utf-8")
    blocks = re.findall(r"```c\n(.*?)```", docs, flags=re.S)
    found = [b for b in blocks if "compute_dtype" in b]
    assert len(found) == 1
    return found[0]


def test_docs_relations_example_builds_and_runs(tmp_path):
    if _capi.compiler() is None:
        pytest.skip(_capi.no_compiler_reason())
    source = "#define PY_SSIZE_T_CLEAN\n#include <Python.h>\n" \
             "#include <stride_weave/dtypes.h>\n\n" + _docs_relations_example()
    source += textwrap.dedent("""
        static PyObject *
        py_compute_dtype(PyObject *module, PyObject *args)
        {
            PyObject *a, *b;
            (void)module;
            if (!PyArg_ParseTuple(args, "OO", &a, &b)) {
                return NULL;
            }
            return compute_dtype(a, b);
        }

        static PyObject *
        py_fits_exactly(PyObject *module, PyObject *args)
        {
            PyObject *a, *b;
            int r;
            (void)module;
            if (!PyArg_ParseTuple(args, "OO", &a, &b)) {
                return NULL;
            }
            r = fits_exactly(a, b);
            return r < 0 ? NULL : PyBool_FromLong(r);
        }
        """) + _module_tail("swrel", {"compute_dtype": "py_compute_dtype",
                                      "fits_exactly": "py_fits_exactly"})
    (tmp_path / "swrel.c").write_text(source, encoding="utf-8")
    (tmp_path / "setup.py").write_text(textwrap.dedent("""\
        import stride_weave
        from setuptools import Extension, setup
        setup(name="swrel", ext_modules=[Extension(
            "swrel", ["swrel.c"], include_dirs=[stride_weave.get_include()])])
        """))
    _capi.build_in(tmp_path)
    report = _run_child("""
        import json, sys
        sys.path.insert(0, sys.argv[1])
        import swrel
        from stride_weave.dtypes import DType, PromotionError
        out = {"join": swrel.compute_dtype(DType.Float32, DType.Float64).name,
               "fits": [swrel.fits_exactly(DType.Int8, DType.Float32),
                        swrel.fits_exactly(DType.Int32, DType.Float32)]}
        for a, b, key in [(DType.Int8, DType.Float32, "kind"),
                          (DType.E4M3, DType.Float32, "none"), (1, DType.Int8, "arg")]:
            try:
                swrel.compute_dtype(a, b)
            except PromotionError as e:
                out[key] = "PromotionError"
            except TypeError as e:
                out[key] = str(e)
        print(json.dumps(out))
    """, str(tmp_path))
    assert report == {"join": "Float64", "fits": [True, False],
                      "kind": "expected real floating-point dtypes",
                      "none": "PromotionError",
                      "arg": "SW_DType_IsDType: expected a registered descriptor, got int"}
