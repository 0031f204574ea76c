"""stride_weave.formats: the opt-in pack registers ordinary extensions with
numeric records (checked against numpy/ml_dtypes) and mappings; importing or
reloading it is harmless; it adds no DType attributes."""
import importlib

import pytest

from support import assert_exited, run_python

import stride_weave.formats as formats
from stride_weave import interop, numerics
from stride_weave.dtypes import DType, DTypeCategory, SimpleDType

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
    assert "the name 'Float16' is already registered as SimpleDType('Float16'), not as " \
           "this pack's 16-bit Floating format" in result.stdout


def test_pack_dtypes_pickle_to_themselves():
    import pickle
    for d in formats.FORMATS:
        assert pickle.loads(pickle.dumps(d)) is d
