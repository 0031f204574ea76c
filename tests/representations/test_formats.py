"""stride_weave.formats: the opt-in pack registers ordinary extensions with
numeric records (checked against numpy/ml_dtypes) and mappings; importing or
reloading it is harmless; it adds no DType attributes."""
import importlib
import pickle

import pytest

from support import assert_exited, child_report, run_python

import stride_weave.formats as formats
from stride_weave import interop, numerics
from stride_weave.dtypes import (
    BlockScaledDType, DType, DTypeCategory, Level, SimpleDType, SymbolicBits, Whole,
)

np = pytest.importorskip("numpy")
ml_dtypes = pytest.importorskip("ml_dtypes")

FLOATS = {"Float16": np.float16, "BFloat16": ml_dtypes.bfloat16,
          "E4M3FNUZ": ml_dtypes.float8_e4m3fnuz, "E5M2FNUZ": ml_dtypes.float8_e5m2fnuz}
INTS = {"Int16": np.int16, "Int64": np.int64, "Int4": ml_dtypes.int4,
        "UInt8": np.uint8, "UInt16": np.uint16, "UInt32": np.uint32, "UInt64": np.uint64,
        "UInt4": ml_dtypes.uint4}
COMPLEX = {"Complex64": np.complex64, "Complex128": np.complex128}


def test_the_pack_registers_every_documented_format():
    assert {d.name for d in formats.FORMATS} == set(FLOATS) | set(INTS) | set(COMPLEX)
    for d in formats.FORMATS:
        assert isinstance(d, SimpleDType)
        assert DType.from_name(d.name) is d
        assert getattr(formats, d.name) is d
        assert d in DType.registered()


def test_the_pack_adds_no_dtype_attributes():
    for d in formats.FORMATS:
        assert not hasattr(DType, d.name)
    assert not hasattr(DType, "Complex")


def test_categories():
    assert isinstance(formats.Complex, DTypeCategory)
    assert formats.Complex.supertype is DType.Any
    for name in FLOATS:
        assert DType.from_name(name).supertype is DType.Floating
    for name in INTS:
        assert DType.from_name(name).supertype is DType.Integer
    for name in COMPLEX:
        assert DType.from_name(name).supertype is formats.Complex


@pytest.mark.parametrize("name", sorted(FLOATS))
def test_float_records_agree_with_ml_dtypes(name):
    record = numerics.finfo(DType.from_name(name))
    reference = ml_dtypes.finfo(FLOATS[name])
    assert (record.bits, record.exponent_bits, record.mantissa_bits) == (
        reference.bits, reference.nexp, reference.nmant)
    for field in ("max", "min", "smallest_normal", "smallest_subnormal", "eps"):
        assert getattr(record, field) == float(getattr(reference, field)), field


@pytest.mark.parametrize("name", ["E4M3FNUZ", "E5M2FNUZ"])
def test_fnuz_nan_is_negative_zero_and_there_is_no_infinity(name):
    record = numerics.finfo(DType.from_name(name))
    patterns = np.arange(256, dtype=np.uint8)
    values = patterns.view(FLOATS[name]).astype(np.float64)
    assert patterns[np.isnan(values)].tolist() == [0x80]
    assert not np.isinf(values).any()
    assert (record.nan_encoding, record.has_inf, record.has_nan) == ("negative_zero", False, True)


@pytest.mark.parametrize("name", sorted(INTS))
def test_integer_records_agree_with_numpy_and_ml_dtypes(name):
    record = numerics.iinfo(DType.from_name(name))
    reference = ml_dtypes.iinfo(INTS[name])
    assert (record.min, record.max, record.bits) == (reference.min, reference.max,
                                                     reference.bits)
    assert record.signed == (reference.min < 0)


@pytest.mark.parametrize("name", sorted(COMPLEX))
def test_complex_records_describe_each_component(name):
    record = numerics.finfo(DType.from_name(name))
    reference = np.finfo(COMPLEX[name])
    assert record.kind == "complex"
    assert record.bits == np.dtype(COMPLEX[name]).itemsize * 8 == 2 * reference.bits
    for field in ("max", "smallest_normal", "smallest_subnormal", "eps"):
        assert getattr(record, field) == float(getattr(reference, field)), field


def test_import_and_reload_are_harmless():
    before = DType.registered()
    reloaded = importlib.reload(formats)
    assert DType.registered() == before
    assert reloaded.Float16 is DType.from_name("Float16")
    assert interop.to_dlpack(reloaded.Float16) == (2, 16, 1)


def test_a_conflicting_definition_of_a_pack_name_is_refused():
    """In a fresh process, someone registered "Float16" differently first."""
    code = ("from stride_weave.dtypes import DType, SimpleDType\n"
            "SimpleDType('Float16', bits=8, supertype=DType.Floating)\n"
            "try:\n"
            "    import stride_weave.formats\n"
            "except ValueError as exc:\n"
            "    print(exc)\n")
    result = run_python(["-c", code])
    assert_exited(result)
    assert "the name 'Float16' is already registered by module '__main__' as " \
           "SimpleDType('Float16'); this pack registers its own 16-bit Floating format " \
           "under that name" in result.stdout


def test_pack_dtypes_pickle_to_themselves():
    for d in formats.FORMATS + formats.BLOCK_SCALED:
        assert pickle.loads(pickle.dumps(d)) is d


def test_pack_dtypes_pickles_name_the_pack():
    for d in (formats.Complex, *formats.FORMATS, *formats.BLOCK_SCALED):
        assert d.__reduce_ex__(2)[1][1] == "stride_weave.formats"


# ---- importing the pack is all or nothing --------------------------------------

# A child prints, as JSON, the outcome of importing the pack after `setup`:
# the error (type and message), which of the pack's names are registered,
# whether the module is in sys.modules, and the reverse lookups of a few
# foreign dtypes the pack maps.
# The start of each child below: which of the pack's names are registered.
_CHILD_PRELUDE = r"""
import json, sys
from stride_weave import _packs, interop, numerics
from stride_weave.dtypes import DType, SimpleDType, DTypeCategory

def registered():
    out = []
    for name in _packs.FORMATS_NAMES:
        try:
            DType.from_name(name)
        except LookupError:
            continue
        out.append(name)
    return out
"""

_IMPORT_CHILD = _CHILD_PRELUDE + r"""

def lookups():
    out = {}
    for triple in ((2, 16, 1), (11, 8, 1), (5, 128, 1)):
        try:
            out[str(triple)] = interop.from_dlpack(*triple).name
        except LookupError:
            out[str(triple)] = None
    return out

SETUP
outcome = None
try:
    import stride_weave.formats
except Exception as exc:
    outcome = [type(exc).__name__, str(exc)]
print(json.dumps({"error": outcome, "registered": registered(),
                  "imported": "stride_weave.formats" in sys.modules,
                  "lookups": lookups()}))
"""


def _import_after(setup):
    return child_report(_IMPORT_CHILD.replace("SETUP", setup))


ALL_PACK_NAMES = (["Complex"] + [d.name for d in formats.FORMATS]
                  + [d.name for d in formats.BLOCK_SCALED])


@pytest.mark.parametrize("name, definition", [
    # the same structure as the pack's, but registered by another module
    ("Float16", "SimpleDType('Float16', bits=16, supertype=DType.Floating)"),
    # another structure
    ("Float16", "SimpleDType('Float16', bits=8, supertype=DType.Floating)"),
    # the last format of the table, and the pack's category
    ("Complex128", "SimpleDType('Complex128', bits=128, supertype=DType.Floating)"),
    ("Complex", "DTypeCategory('Complex', supertype=DType.Any)"),
    ("UInt4", "DTypeCategory('UInt4', supertype=DType.Any)"),
    # a block-scaled name: the pack's own definition, and another kind
    ("NVFP4_16x16", "BlockScaledDType('NVFP4_16x16', element=DType.E2M1, "
                    "levels=[Level(DType.E4M3, (16, 16)), Level(DType.Float32, Whole)])"),
    ("FP8_E4M3_1x128", "SimpleDType('FP8_E4M3_1x128', bits=8, supertype=DType.Floating)"),
])
def test_a_pack_name_registered_by_another_module_refuses_the_whole_import(name, definition):
    """Nothing of the pack is registered, whatever the position of the taken
    name in its table: every check runs before the first registration."""
    report = _import_after("from stride_weave.dtypes import BlockScaledDType, Level, Whole\n"
                           + definition)
    kind, message = report["error"]
    assert kind == "ValueError"
    assert message.startswith(f"stride_weave.formats: the name {name!r} is already "
                              f"registered by module '__main__' as ")
    assert "adopts no other module's descriptor, so nothing was registered" in message
    assert report["registered"] == [name]
    assert report["imported"] is False
    assert report["lookups"] == {"(2, 16, 1)": None, "(11, 8, 1)": None, "(5, 128, 1)": None}


def test_a_mapping_of_one_of_the_packs_foreign_dtypes_does_not_refuse_the_import():
    """An extension mapped float8_e4m3fnuz before the pack: the import
    registers everything; the extension stays the canonical equivalent and
    the pack's E4M3FNUZ is an alias (its forward conversions work)."""
    report = child_report(r"""
        import json
        import ml_dtypes, numpy as np
        from stride_weave import interop
        from stride_weave.dtypes import DType, SimpleDType
        mine = SimpleDType("MyE4M3FNUZ", bits=8, supertype=DType.Floating)
        interop.register_mapping(mine, numpy=ml_dtypes.float8_e4m3fnuz, dlpack=(11, 8),
                                 torch="float8_e4m3fnuz")
        import stride_weave.formats as formats
        print(json.dumps({
            "formats": len(formats.FORMATS),
            "from_numpy": interop.from_numpy(ml_dtypes.float8_e4m3fnuz).name,
            "from_dlpack": interop.from_dlpack(11, 8).name,
            "to_numpy": str(interop.to_numpy(formats.E4M3FNUZ)),
            "to_dlpack": list(interop.to_dlpack(formats.E4M3FNUZ)),
            "mapping": interop.mapping(formats.E4M3FNUZ).as_dict(),
            "others": interop.from_dlpack(13, 8).name,
        }))
    """)
    assert report["formats"] == len(formats.FORMATS)
    assert report["from_numpy"] == report["from_dlpack"] == "MyE4M3FNUZ"
    assert report["to_numpy"] == "float8_e4m3fnuz" and report["to_dlpack"] == [11, 8, 1]
    assert report["mapping"]["torch"] == "float8_e4m3fnuz"
    assert report["others"] == "E5M2FNUZ"


# A child whose mapping of each format (interop._publish, which the pack
# calls once per format after registering it with its record) fails with
# MemoryError on its Nth call, as an allocation can; then a retry.
_HALF_WAY_CHILD = _CHILD_PRELUDE + r"""
real = interop._publish
calls = []

def failing(dtype, *args, **kwargs):
    calls.append(dtype.name)
    if len(calls) == FAIL_AT:
        raise MemoryError
    return real(dtype, *args, **kwargs)

interop._publish = failing
try:
    import stride_weave.formats
except MemoryError:
    pass
interop._publish = real
first = {"registered": registered(), "imported": "stride_weave.formats" in sys.modules}
BETWEEN
outcome = None
try:
    import stride_weave.formats as formats
except Exception as exc:
    outcome = [type(exc).__name__, str(exc)]
if outcome is None:
    second = {"formats": [d.name for d in formats.FORMATS],
              "records": [numerics.numeric_info(d).encoding for d in formats.FORMATS],
              "dlpack": [list(interop.to_dlpack(d)) for d in formats.FORMATS],
              "module": [d.__reduce_ex__(2)[1][1] for d in formats.FORMATS]}
else:
    second = {"error": outcome, "registered": registered()}
print(json.dumps({"first": first, "second": second}))
"""


def _half_way(fail_at, between="pass"):
    return child_report(_HALF_WAY_CHILD.replace("FAIL_AT", str(fail_at))
                        .replace("BETWEEN", between))


@pytest.mark.parametrize("fail_at", [1, 3, len(formats.FORMATS)])
def test_an_import_that_failed_half_way_completes_when_tried_again(fail_at):
    report = _half_way(fail_at)
    # registration cannot be undone: the names registered before the failure
    # stay (the category, and the formats up to the one that failed)
    assert report["first"] == {"registered": ALL_PACK_NAMES[:fail_at + 1], "imported": False}
    second = report["second"]
    assert second["formats"] == [d.name for d in formats.FORMATS]
    assert second["records"] == [numerics.numeric_info(d).encoding for d in formats.FORMATS]
    assert second["dlpack"] == [list(interop.to_dlpack(d)) for d in formats.FORMATS]
    assert set(second["module"]) == {"stride_weave.formats"}


@pytest.mark.parametrize("between, expected", [
    ("interop.register_mapping(DType.from_name('BFloat16'), dlpack=(3, 16))",
     "stride_weave.formats: BFloat16 is mapped to Mapping(numpy=None, "
     "dlpack=DLPackDType(code=3, bits=16, lanes=1)"),
])
def test_a_retry_refuses_a_half_registered_format_that_was_changed_meanwhile(between, expected):
    """BFloat16 was registered before the failure, with its record (given
    at construction: no other can be attached) but without its mapping;
    someone gave it another: the retry refuses and adds nothing."""
    report = _half_way(2, between)
    assert report["first"]["registered"] == ["Complex", "Float16", "BFloat16"]
    kind, message = report["second"]["error"]
    assert kind == "ValueError"
    assert message.startswith(expected) and message.endswith("nothing was registered")
    assert report["second"]["registered"] == ["Complex", "Float16", "BFloat16"]


def test_importing_again_after_removing_the_module_keeps_the_descriptors():
    report = child_report(r"""
        import json, sys
        import stride_weave.formats as first
        del sys.modules["stride_weave.formats"]
        import stride_weave.formats as second
        print(json.dumps([a is b for a, b in zip(first.FORMATS, second.FORMATS)]
                         + [first is not second, first.Complex is second.Complex]))
    """)
    assert report == [True] * (len(formats.FORMATS) + 2)


def test_the_pack_table_and_its_names_are_one():
    """stride_weave._packs lists what the pack registers, without importing
    it; the lookup errors and the conversions read it."""
    from stride_weave import _packs

    assert _packs.FORMATS_NAMES == tuple(ALL_PACK_NAMES)
    assert _packs.PACKS == (("stride_weave.formats", _packs.FORMATS_NAMES),)
    assert all(type(n) is str for n in _packs.FORMATS_NAMES)
    assert _packs.pack_of("BFloat16") == "stride_weave.formats"
    assert _packs.pack_of("Float32") is None
    for name, bits, supertype, _, equivalents in _packs.FORMATS_TABLE:
        d = DType.from_name(name)
        assert (d.bits, d.supertype.name) == (bits, supertype)
        m = interop.mapping(d)
        assert (m.numpy, m.arrow, m.buffer_format, m.torch) == (
            equivalents[0], equivalents[2], equivalents[3], equivalents[4])
        assert tuple(m.dlpack) == tuple(equivalents[1]) + (1,)
    result = run_python(["-c", "import sys, stride_weave._packs as p; "
                               "print(sorted(m for m in sys.modules if m.startswith('stride')))"])
    assert_exited(result)
    assert result.stdout.strip() == "['stride_weave', 'stride_weave._packs']"



# ---- the block-scaled formats of the pack ----------------------------------------

BLOCK_SCALED = {
    # name: (element, ((scale, block), ...), bits_per_element, block_shape)
    "NVFP4_16x16": ("E2M1", (("E4M3", (16, 16)), ("Float32", Whole)),
                    SymbolicBits(4.03125, 32), (16, 16)),
    "MXFP8_E4M3_32x32": ("E4M3", (("E8M0", (32, 32)),), 8.0078125, (32, 32)),
    "FP8_E4M3_128x128": ("E4M3", (("Float32", (128, 128)),), 8.001953125, (128, 128)),
    "FP8_E4M3_1x128": ("E4M3", (("Float32", 128),), 8.25, (128,)),
}


@pytest.mark.parametrize("name", sorted(BLOCK_SCALED))
def test_the_pack_registers_each_documented_block_scaled_format(name):
    element, levels, bits, shape = BLOCK_SCALED[name]
    d = DType.from_name(name)
    assert type(d) is BlockScaledDType and getattr(formats, name) is d
    assert d.element is DType.from_name(element)
    assert d.levels == tuple(Level(DType.from_name(s), b) for s, b in levels)
    assert type(d.bits_per_element) is type(bits) and d.bits_per_element == bits
    assert d.block_shape == shape and d.num_axes == 1
    assert d.simple_types == (d.element,) + tuple(level.scale for level in d.levels)
    assert not hasattr(DType, name)
    assert d.__reduce_ex__(2)[1][1] == "stride_weave.formats"
    assert pickle.loads(pickle.dumps(d)) is d


def test_block_scaled_is_the_packs_block_scaled_formats_in_table_order():
    from stride_weave import _packs

    assert [d.name for d in formats.BLOCK_SCALED] == list(BLOCK_SCALED) == [
        row[0] for row in _packs.FORMATS_BLOCK_SCALED]
    for name, element, levels in _packs.FORMATS_BLOCK_SCALED:
        assert (element, tuple((s, Whole if b is None else b) for s, b in levels)) == \
            BLOCK_SCALED[name][:2]
    assert set(formats.__all__) >= set(BLOCK_SCALED) | {"BLOCK_SCALED"}


@pytest.mark.parametrize("definition, described, pack_name", [
    ("BlockScaledDType('My16x16', element=DType.E2M1, "
     "levels=[Level(DType.E4M3, (16, 16)), Level(DType.Float32, Whole)])",
     "E2M1 with Level(E4M3, (16, 16)), Level(Float32, Whole)", "NVFP4_16x16"),
    ("BlockScaledDType('My1x128', element=DType.E4M3, levels=[Level(DType.Float32, 128)])",
     "E4M3 with Level(Float32, 128)", "FP8_E4M3_1x128"),
])
def test_a_block_scaled_structure_registered_under_another_name_refuses_the_import(
        definition, described, pack_name):
    """A block-scaled format is unique by structure: the pack cannot register
    its own under its name, and registers nothing at all."""
    report = _import_after("from stride_weave.dtypes import BlockScaledDType, Level, Whole\n"
                           + definition)
    kind, message = report["error"]
    other = definition.split("'")[1]
    assert kind == "ValueError"
    assert message == (
        f"stride_weave.formats: the block-scaled format ({described}) that this pack "
        f"registers as {pack_name!r} is already registered by module '__main__' as "
        f"BlockScaledDType({other!r}); a block-scaled format is unique by its structure, "
        f"so nothing was registered (import stride_weave.formats first and use its "
        f"{pack_name})")
    assert report["registered"] == []
    assert report["imported"] is False


def test_a_subclass_with_its_own_extension_does_not_hold_the_packs_structure():
    report = _import_after(
        "from stride_weave.dtypes import BlockScaledDType, Level, Whole\n"
        "class Tagged(BlockScaledDType, abstract=False):\n"
        "    def structure_extension(self):\n"
        "        return ('tagged',)\n"
        "Tagged('Tagged16x16', element=DType.E2M1,\n"
        "       levels=[Level(DType.E4M3, (16, 16)), Level(DType.Float32, Whole)])")
    assert report["error"] is None
    assert report["registered"] == ALL_PACK_NAMES


# A child whose registration of the block-scaled formats fails with
# MemoryError on the Nth one, as an allocation can; then a retry.  The
# stand-in runs as code of the pack's module (a descriptor records the
# module of the code that registers it), as the pack's own call does.
_BLOCK_SCALED_HALF_WAY_CHILD = _CHILD_PRELUDE + r"""
from stride_weave import _dtypes
real = _dtypes.BlockScaledDType
calls = []
pack = {"__name__": "stride_weave.formats", "real": real, "calls": calls}
exec("def failing(*args, **kwargs):\n"
     "    calls.append(args[0])\n"
     "    if len(calls) == FAIL_AT:\n"
     "        raise MemoryError\n"
     "    return real(*args, **kwargs)\n", pack)
failing = pack["failing"]
failing.registered = real.registered
_dtypes.BlockScaledDType = failing
try:
    import stride_weave.formats
except MemoryError:
    pass
_dtypes.BlockScaledDType = real
first = {"registered": registered(), "imported": "stride_weave.formats" in sys.modules}
import stride_weave.formats as formats
print(json.dumps({"first": first,
                  "second": [d.name for d in formats.BLOCK_SCALED],
                  "types": sorted({type(d).__name__ for d in formats.BLOCK_SCALED}),
                  "module": sorted({d.__reduce_ex__(2)[1][1] for d in formats.BLOCK_SCALED})}))
"""


@pytest.mark.parametrize("fail_at", [1, 2, 4])
def test_an_import_that_failed_among_the_block_scaled_formats_completes_when_tried_again(
        fail_at):
    report = child_report(_BLOCK_SCALED_HALF_WAY_CHILD.replace("FAIL_AT", str(fail_at)))
    simple = 1 + len(formats.FORMATS)
    assert report["first"] == {"registered": ALL_PACK_NAMES[:simple + fail_at - 1],
                               "imported": False}
    assert report["second"] == list(BLOCK_SCALED)
    assert report["types"] == ["BlockScaledDType"]
    assert report["module"] == ["stride_weave.formats"]
