"""stride_weave.interop: every cell of the interop table (built-ins and the
formats pack) is a round trip against the real library or a tested "no
equivalent" error; real buffers are exchanged where the libraries allow it;
extension mappings are validated; the module imports no foreign library."""
import struct
import sys
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

import stride_weave.formats as formats
from support import assert_exited, run_python, unique_name
from support.dlpack import capsule_dtype
from stride_weave import interop
from stride_weave.dtypes import DType, SimpleDType, Whole
from stride_weave.interop import DLDataTypeCode as C
from stride_weave.interop import NoEquivalentError

np = pytest.importorskip("numpy")
ml_dtypes = pytest.importorskip("ml_dtypes")
pa = pytest.importorskip("pyarrow")

try:
    import torch
except ImportError:
    torch = None
requires_torch = pytest.mark.skipif(
    torch is None, reason="torch is not importable (it is large and not in the test "
    "extra); its mapping is still checked through the DLPack codes")

# The expected equivalents, written from the libraries' own names:
# numpy type, DLPack triple, pyarrow factory, PEP 3118 format, torch name.
EXPECTED = {
    "Bool": (np.bool_, (C.kDLBool, 8, 1), None, "?", "bool"),
    "Int8": (np.int8, (C.kDLInt, 8, 1), "int8", "b", "int8"),
    "Int32": (np.int32, (C.kDLInt, 32, 1), "int32", "i", "int32"),
    "Float32": (np.float32, (C.kDLFloat, 32, 1), "float32", "f", "float32"),
    "Float64": (np.float64, (C.kDLFloat, 64, 1), "float64", "d", "float64"),
    "E8M0": (ml_dtypes.float8_e8m0fnu, (C.kDLFloat8_e8m0fnu, 8, 1), None, None,
             "float8_e8m0fnu"),
    "E5M2": (ml_dtypes.float8_e5m2, (C.kDLFloat8_e5m2, 8, 1), None, None, "float8_e5m2"),
    "E4M3": (ml_dtypes.float8_e4m3fn, (C.kDLFloat8_e4m3fn, 8, 1), None, None,
             "float8_e4m3fn"),
    "E3M2": (ml_dtypes.float6_e3m2fn, (C.kDLFloat6_e3m2fn, 6, 1), None, None, None),
    "E2M3": (ml_dtypes.float6_e2m3fn, (C.kDLFloat6_e2m3fn, 6, 1), None, None, None),
    "E2M1": (ml_dtypes.float4_e2m1fn, (C.kDLFloat4_e2m1fn, 4, 1), None, None,
             "float4_e2m1fn_x2"),
    # the formats pack
    "Float16": (np.float16, (C.kDLFloat, 16, 1), "float16", "e", "float16"),
    "BFloat16": (ml_dtypes.bfloat16, (C.kDLBfloat, 16, 1), None, None, "bfloat16"),
    "E4M3FNUZ": (ml_dtypes.float8_e4m3fnuz, (C.kDLFloat8_e4m3fnuz, 8, 1), None, None,
                 "float8_e4m3fnuz"),
    "E5M2FNUZ": (ml_dtypes.float8_e5m2fnuz, (C.kDLFloat8_e5m2fnuz, 8, 1), None, None,
                 "float8_e5m2fnuz"),
    "Int16": (np.int16, (C.kDLInt, 16, 1), "int16", "h", "int16"),
    "Int64": (np.int64, (C.kDLInt, 64, 1), "int64", "q", "int64"),
    "Int4": (ml_dtypes.int4, (C.kDLInt, 4, 1), None, None, None),
    "UInt8": (np.uint8, (C.kDLUInt, 8, 1), "uint8", "B", "uint8"),
    "UInt16": (np.uint16, (C.kDLUInt, 16, 1), "uint16", "H", "uint16"),
    "UInt32": (np.uint32, (C.kDLUInt, 32, 1), "uint32", "I", "uint32"),
    "UInt64": (np.uint64, (C.kDLUInt, 64, 1), "uint64", "Q", "uint64"),
    "UInt4": (ml_dtypes.uint4, (C.kDLUInt, 4, 1), None, None, None),
    "Complex64": (np.complex64, (C.kDLComplex, 64, 1), None, "Zf", "complex64"),
    "Complex128": (np.complex128, (C.kDLComplex, 128, 1), None, "Zd", "complex128"),
}
NAMES = sorted(EXPECTED)


def test_every_builtin_and_pack_simple_dtype_is_in_the_table():
    builtins = {d.name for d in DType.registered()
                if isinstance(d, SimpleDType) and getattr(DType, d.name, None) is d}
    assert builtins | {d.name for d in formats.FORMATS} == set(EXPECTED)


@pytest.mark.parametrize("name", NAMES)
def test_numpy_round_trip(name):
    d = DType.from_name(name)
    foreign = interop.to_numpy(d)
    assert foreign == np.dtype(EXPECTED[name][0])
    assert interop.from_numpy(foreign) is d
    assert interop.from_numpy(EXPECTED[name][0]) is d
    # ml_dtypes stores sub-byte formats one value per byte.
    assert foreign.itemsize == max(1, d.bits // 8)


@pytest.mark.parametrize("name", NAMES)
def test_dlpack_round_trip(name):
    d = DType.from_name(name)
    assert interop.to_dlpack(d) == EXPECTED[name][1]
    assert interop.from_dlpack(*EXPECTED[name][1]) is d


@pytest.mark.parametrize("name", NAMES)
def test_arrow_round_trip_or_no_equivalent(name):
    d = DType.from_name(name)
    factory = EXPECTED[name][2]
    if factory is None:
        with pytest.raises(NoEquivalentError, match=f"to_arrow: {name} has no arrow equivalent"):
            interop.to_arrow(d)
        return
    foreign = interop.to_arrow(d)
    assert foreign == getattr(pa, factory)()
    assert foreign.bit_width == d.bits
    assert interop.from_arrow(foreign) is d


@pytest.mark.parametrize("name", NAMES)
def test_buffer_format_round_trip_or_no_equivalent(name):
    d = DType.from_name(name)
    fmt = EXPECTED[name][3]
    if fmt is None:
        with pytest.raises(NoEquivalentError, match=f"{name} has no buffer_format equivalent"):
            interop.to_buffer_format(d)
        return
    assert interop.to_buffer_format(d) == fmt
    assert interop.from_buffer_format(fmt) is d
    # A real buffer: numpy's memoryview of an array of the mapped dtype.
    view = memoryview(np.zeros(3, interop.to_numpy(d)))
    assert view.itemsize * 8 == d.bits
    assert interop.from_buffer_format(view.format) is d


@pytest.mark.parametrize("name", [n for n in NAMES if EXPECTED[n][2] is not None])
def test_arrow_arrays_of_the_mapped_numpy_dtype_have_the_mapped_arrow_type(name):
    """pyarrow converts a real numpy array of to_numpy(d) to to_arrow(d)."""
    d = DType.from_name(name)
    array = pa.array(np.zeros(3, interop.to_numpy(d)))
    assert interop.from_arrow(array.type) is d


def _torch_name_to_dlpack(name):
    """The DLPack triple a torch dtype name denotes, from the names alone
    (torch's float4_e2m1fn_x2 holds two e2m1fn values per byte)."""
    if name == "bool":
        return (C.kDLBool, 8, 1)
    if name.endswith("_x2"):
        return _torch_name_to_dlpack(name[:-3])
    for prefix, code in (("uint", C.kDLUInt), ("int", C.kDLInt), ("complex", C.kDLComplex),
                         ("bfloat", C.kDLBfloat)):
        if name.startswith(prefix):
            return (code, int(name[len(prefix):]), 1)
    if name.startswith("float") and name[len("float"):].isdigit():
        return (C.kDLFloat, int(name[len("float"):]), 1)
    kind, _, variant = name.partition("_")
    return (C[f"kDLFloat{kind[len('float'):]}_{variant}"], int(kind[len("float"):]), 1)


@pytest.mark.parametrize("name", NAMES)
def test_torch_names_agree_with_the_dlpack_codes(name):
    """Without torch: each declared torch name denotes the dtype's DLPack
    type code and width."""
    d = DType.from_name(name)
    torch_name = interop.mapping(d).torch
    assert torch_name == EXPECTED[name][4]
    if torch_name is not None:
        assert _torch_name_to_dlpack(torch_name) == interop.to_dlpack(d)


@requires_torch
@pytest.mark.parametrize("name", NAMES)
def test_torch_round_trip_or_no_equivalent(name):
    d = DType.from_name(name)
    expected = EXPECTED[name][4]
    if expected is None:
        with pytest.raises(NoEquivalentError, match=f"to_torch: {name} has no torch equivalent"):
            interop.to_torch(d)
        return
    foreign = interop.to_torch(d)
    assert foreign is getattr(torch, expected)
    assert interop.from_torch(foreign) is d
    lanes = 2 if expected.endswith("_x2") else 1
    assert foreign.itemsize * 8 == d.bits * lanes


# ---- real DLPack exchange ---------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_numpy_arrays_report_the_mapped_dlpack_dtype(name):
    """A real exchange: the DLDataType numpy puts in the capsule of an array
    of to_numpy(d) is to_dlpack(d). numpy exports its own dtypes; newer
    numpy also exports third-party (ml_dtypes) ones it can describe."""
    d = DType.from_name(name)
    array = np.zeros(4, interop.to_numpy(d))
    try:
        capsule = array.__dlpack__()
    except BufferError as exc:
        assert hasattr(ml_dtypes, array.dtype.name), exc   # numpy's own always work
        pytest.skip(f"numpy {np.__version__} does not export {array.dtype} through "
                    f"DLPack: {exc}")
    assert capsule_dtype(capsule) == tuple(interop.to_dlpack(d))
    # and numpy's own consumer reads it back as the same numpy dtype
    assert np.from_dlpack(array).dtype == interop.to_numpy(d)


@requires_torch
@pytest.mark.parametrize("name", [n for n in NAMES if EXPECTED[n][4] is not None])
def test_torch_tensors_report_the_mapped_dlpack_dtype(name):
    d = DType.from_name(name)
    tensor = torch.zeros(4, dtype=interop.to_torch(d))
    try:
        capsule = tensor.__dlpack__()
    except (BufferError, RuntimeError, TypeError) as exc:
        pytest.skip(f"torch {torch.__version__} does not export {tensor.dtype}: {exc}")
    code, bits, lanes = capsule_dtype(capsule)
    expected = interop.to_dlpack(d)
    assert (code, bits) == (expected.code, expected.bits)
    # float4_e2m1fn_x2 is exported as two lanes of e2m1fn: the packed pair.
    assert lanes == (2 if EXPECTED[name][4].endswith("_x2") else 1)
    assert interop.from_dlpack(code, bits) is d


# ---- no equivalent and bad input -------------------------------------------------

@pytest.mark.parametrize("value", ["datetime64[ns]", "U3", "S2", "O", ">f4", "<i2,<i2"])
def test_from_numpy_without_equivalent(value):
    foreign = np.dtype(value)
    with pytest.raises(NoEquivalentError, match="from_numpy"):
        interop.from_numpy(foreign)


def test_from_numpy_bad_argument_is_type_error():
    with pytest.raises(TypeError, match="np_dtype must be a numpy dtype .* got 'not a dtype'"):
        interop.from_numpy("not a dtype")


@pytest.mark.parametrize("triple", [
    (3, 64, 1), (2, 32, 4), (C.kDLFloat8_e3m4, 8, 1),
    # a test below declares a mapping for this one, for the rest of the
    # process: it is checked in a fresh interpreter, whatever ran before
    pytest.param((C.kDLFloat8_e4m3b11fnuz, 8, 1), marks=pytest.mark.fresh_interpreter),
    (2, 8, 1), (255, 8, 1)])
def test_from_dlpack_without_equivalent(triple):
    with pytest.raises(NoEquivalentError, match=r"no stride-weave dtype is the equivalent of dlpack"):
        interop.from_dlpack(*triple)


def test_from_dlpack_bad_argument():
    with pytest.raises(TypeError, match="from_dlpack: bits must be an int, got '8'"):
        interop.from_dlpack(2, "8")  # type: ignore[arg-type]


@pytest.mark.parametrize("factory", ["bool_", "utf8", "date32", "large_binary", "null"])
def test_from_arrow_without_equivalent(factory):
    with pytest.raises(NoEquivalentError, match="from_arrow"):
        interop.from_arrow(getattr(pa, factory)())


def test_from_arrow_bad_argument():
    with pytest.raises(TypeError, match="arrow_type must be a pyarrow.DataType, got 'float32'"):
        interop.from_arrow("float32")


@pytest.mark.parametrize("fmt", ["x", "c", "3f", "T{f:x:}", "P", "s", "Zi", "", "ff"])
def test_from_buffer_format_without_equivalent(fmt):
    with pytest.raises(NoEquivalentError, match="from_buffer_format"):
        interop.from_buffer_format(fmt)


def test_from_buffer_format_byte_order():
    native, other = ("<", ">") if sys.byteorder == "little" else (">", "<")
    assert interop.from_buffer_format(native + "f") is DType.Float32
    assert interop.from_buffer_format("=i") is DType.Int32
    with pytest.raises(NoEquivalentError, match="not in native byte order"):
        interop.from_buffer_format(other + "f")
    with pytest.raises(TypeError, match="format must be a str, got 3"):
        interop.from_buffer_format(3)  # type: ignore[arg-type]


@requires_torch
def test_from_torch_without_equivalent_and_bad_argument():
    with pytest.raises(NoEquivalentError, match="from_torch"):
        interop.from_torch(torch.int4)
    with pytest.raises(TypeError, match="torch_dtype must be a torch.dtype"):
        interop.from_torch("float32")


@pytest.mark.parametrize("func", [interop.to_numpy, interop.to_dlpack, interop.to_arrow,
                                  interop.to_buffer_format, interop.to_torch])
def test_block_scaled_formats_convert_plane_by_plane(func):
    with pytest.raises(TypeError, match=r"MXFP4 is block-scaled .* planes\(MXFP4"):
        func(DType.MXFP4)
    with pytest.raises(TypeError, match="dtype must be a SimpleDType, got 'Float32'"):
        func("Float32")


@pytest.mark.parametrize("d", [d for d in DType.registered() if d.__class__.__name__ ==
                               "BlockScaledDType" and getattr(DType, d.name, None) is d],
                         ids=lambda d: d.name)
@pytest.mark.parametrize("target", ["numpy", "dlpack"])
def test_planes_of_every_builtin_block_scaled_format(d, target):
    result = interop.planes(d, target)
    assert [p.dtype for p in result] == list(d.simple_types)
    assert result[0].role == "element" and result[0].block is None
    assert [p.block for p in result[1:]] == [level.block for level in d.levels]
    assert [p.level for p in result[1:]] == list(range(len(d.levels)))
    convert = interop.to_numpy if target == "numpy" else interop.to_dlpack
    assert [p.foreign for p in result] == [convert(s) for s in d.simple_types]


def test_planes_of_the_packs_nd_formats_carry_their_tuple_blocks():
    """Plane.block is the level's block as it is: the tuple of an N-D block,
    whose scale plane holds one code per block of that shape."""
    import stride_weave.formats as formats

    element, scale, whole = interop.planes(formats.NVFP4_16x16, "dlpack")
    assert (element.role, element.block) == ("element", None)
    assert (scale.level, scale.dtype, scale.block) == (0, DType.E4M3, (16, 16))
    assert type(scale.block) is tuple
    assert (whole.level, whole.dtype, whole.block) == (1, DType.Float32, Whole)
    assert [p.foreign for p in (element, scale, whole)] == [
        interop.to_dlpack(DType.E2M1), interop.to_dlpack(DType.E4M3),
        interop.to_dlpack(DType.Float32)]
    for d, block in [(formats.MXFP8_E4M3_32x32, (32, 32)),
                     (formats.FP8_E4M3_128x128, (128, 128)), (formats.FP8_E4M3_1x128, 128)]:
        assert [p.block for p in interop.planes(d, "numpy")] == [None, block]


def test_planes_allocate_an_mxfp4_tensor():
    """A caller allocates MXFP4's planes from the converted dtypes and the
    block size: one E8M0 scale per 32 E2M1 elements."""
    element, scale = interop.planes(DType.MXFP4, "numpy")
    values = np.zeros(64, element.foreign)
    scales = np.ones(64 // scale.block, scale.foreign)
    assert (values.dtype, scales.dtype, scales.shape) == (
        np.dtype(ml_dtypes.float4_e2m1fn), np.dtype(ml_dtypes.float8_e8m0fnu), (2,))


def test_planes_with_numeric_records():
    """Block-scaled formats get the numeric view of their element and scales."""
    from stride_weave import numerics

    element, scale, whole = interop.planes(DType.NVFP4, numerics.finfo)
    assert (element.foreign.encoding, element.foreign.max) == ("float4_e2m1fn", 6.0)
    assert (scale.block, scale.foreign.encoding, scale.foreign.max) == (16, "float8_e4m3fn", 448.0)
    assert (whole.block, whole.foreign.encoding) == (Whole, "ieee754_binary32")
    assert whole.foreign.max == float(ml_dtypes.finfo(np.float32).max)


def test_planes_with_no_equivalent_plane_and_bad_target():
    with pytest.raises(NoEquivalentError, match="E2M1 has no arrow equivalent"):
        interop.planes(DType.MXFP4, "arrow")
    with pytest.raises(ValueError, match="target must be one of .* got 'jax'"):
        interop.planes(DType.MXFP4, "jax")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="planes: dtype must be a BlockScaledDType"):
        interop.planes(DType.Float32, "numpy")  # type: ignore[arg-type]


# ---- extension mappings ------------------------------------------------------------

def _ext(bits=8, category=DType.Integer):
    return SimpleDType(unique_name("Ext"), bits=bits, supertype=category)


def test_extension_mapping_is_used_both_ways():
    d = _ext(bits=8, category=DType.Floating)
    declared = interop.register_mapping(d, numpy=ml_dtypes.float8_e4m3b11fnuz,
                                        dlpack=(C.kDLFloat8_e4m3b11fnuz, 8))
    assert declared == interop.mapping(d)
    assert interop.to_numpy(d) == np.dtype(ml_dtypes.float8_e4m3b11fnuz)
    assert interop.from_numpy(ml_dtypes.float8_e4m3b11fnuz) is d
    assert interop.from_dlpack(C.kDLFloat8_e4m3b11fnuz, 8) is d
    with pytest.raises(NoEquivalentError):
        interop.to_arrow(d)
    # declaring the same mapping again (by name this time) is harmless
    interop.register_mapping(d, numpy="float8_e4m3b11fnuz", dlpack=(9, 8, 1))


def test_extension_mapping_by_foreign_objects():
    d = _ext(bits=16, category=DType.Floating)
    with pytest.raises(ValueError, match="already the equivalent of Float16"):
        interop.register_mapping(d, arrow=pa.float16())
    assert interop.mapping(d) == interop.Mapping()


@pytest.mark.parametrize("kwargs, match", [
    ({"dlpack": (C.kDLInt, 16, 1)}, "the widths must agree: Ext_.* has 8 bits, .* has 16"),
    ({"dlpack": (0, 4, 3)}, "has 12"),
    ({"numpy": "int16"}, "the widths must agree"),
    ({"numpy": np.float16}, "the widths must agree"),
    ({"arrow": "int32"}, "the widths must agree"),
    ({"buffer_format": "h"}, "the widths must agree: .* has 8 bits, 'h' has 16"),
    ({"dlpack": "int8"}, r"expected a \(code, bits, lanes\) tuple of ints, got 'int8'"),
    ({"dlpack": (0, 0, 1)}, "expected code 0-255, bits 1-255 and lanes 1-65535"),
    ({"numpy": 3.5}, r"numpy=...\): expected a numpy dtype or its name as a str, got 3.5"),
    ({"numpy": "no_such_dtype"}, "does not name a numpy dtype"),
    ({"numpy": np.dtype(">i2")}, "expected a native byte order numpy dtype, got dtype"),
    ({"arrow": pa.int8}, "expected an arrow dtype or its name"),
])
def test_register_mapping_validates_and_changes_nothing(kwargs, match):
    d = _ext(bits=8)
    with pytest.raises((TypeError, ValueError), match=match):
        interop.register_mapping(d, **kwargs)
    assert interop.mapping(d) == interop.Mapping()


@pytest.mark.parametrize("kwargs, owner", [
    ({"dlpack": (C.kDLInt, 8, 1)}, "Int8"),
    ({"numpy": "int8"}, "Int8"),
    ({"arrow": "int8"}, "Int8"),
    ({"buffer_format": "b"}, "Int8"),
    ({"buffer_format": "@b"}, "Int8"),
    ({"torch": "int8"}, "Int8"),
])
def test_a_foreign_dtype_mapped_twice_is_refused(kwargs, owner):
    d = _ext(bits=8)
    before = {n: interop.mapping(DType.from_name(n)) for n in NAMES}
    with pytest.raises(ValueError, match=f"already the equivalent of {owner}; it cannot also be {d.name}'s"):
        interop.register_mapping(d, **kwargs)
    assert interop.mapping(d) == interop.Mapping()
    assert {n: interop.mapping(DType.from_name(n)) for n in NAMES} == before
    assert interop.from_dlpack(C.kDLInt, 8) is DType.Int8


def test_a_second_different_mapping_is_refused():
    d = _ext(bits=8)
    interop.register_mapping(d, dlpack=(C.kDLOpaqueHandle, 8, 1))
    with pytest.raises(ValueError, match=f"{d.name} is already mapped to"):
        interop.register_mapping(d, dlpack=(C.kDLOpaqueHandle, 4, 2))
    assert interop.to_dlpack(d) == (C.kDLOpaqueHandle, 8, 1)


def test_mapping_of_a_block_scaled_format_points_to_planes():
    with pytest.raises(TypeError, match=r"mapping: NVFP4 is block-scaled .* planes\(NVFP4, target\)"):
        interop.mapping(DType.NVFP4)  # type: ignore[arg-type]


def test_register_mapping_rejects_non_simple_dtypes():
    with pytest.raises(TypeError, match="register_mapping: MXFP4 is block-scaled"):
        interop.register_mapping(DType.MXFP4, dlpack=(2, 8))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="dtype must be a SimpleDType, got <class"):
        interop.register_mapping(SimpleDType, dlpack=(2, 8))  # type: ignore[arg-type]


def test_concurrent_declarations_of_one_foreign_dtype_keep_one_owner():
    dtypes = [_ext(bits=16) for _ in range(8)]
    triple = (C.kDLOpaqueHandle, 16, 1)
    errors = []

    def declare(d):
        try:
            interop.register_mapping(d, dlpack=triple)
        except ValueError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=declare, args=(d,)) for d in dtypes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    owner = interop.from_dlpack(*triple)
    assert owner in dtypes and len(errors) == 7
    assert [interop.mapping(d).dlpack for d in dtypes].count(triple) == 1


@given(code=st.integers(0, 255), bits=st.integers(1, 255), lanes=st.integers(1, 4))
def test_from_dlpack_is_the_inverse_of_to_dlpack(code, bits, lanes):
    """For any triple: either no equivalent, or a dtype whose triple it is."""
    try:
        d = interop.from_dlpack(code, bits, lanes)
    except NoEquivalentError:
        return
    assert interop.to_dlpack(d) == (code, bits, lanes)


def test_importing_interop_imports_no_foreign_library():
    out = _run_child(
        "import sys, stride_weave.interop, stride_weave.numerics, stride_weave.formats\n"
        "from stride_weave.dtypes import DType\n"
        "stride_weave.interop.to_dlpack(DType.E4M3)\n"
        "stride_weave.interop.from_buffer_format('f')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('numpy', 'ml_dtypes', 'pyarrow', 'torch')))\n")
    assert out.strip() == "[]"


def test_interop_numerics_and_formats_pass_mypy_strict(tmp_path):
    """The new modules are typed inline (the package ships py.typed): they and
    a typical use type-check under mypy --strict."""
    pytest.importorskip("mypy", reason="mypy is not installed: mypy --strict check skipped")
    use = tmp_path / "use_interop.py"
    use.write_text(
        "from stride_weave import formats, interop, numerics\n"
        "from stride_weave.dtypes import DType, SimpleDType\n"
        "d: SimpleDType = interop.from_dlpack(10, 8)\n"
        "triple: interop.DLPackDType = interop.to_dlpack(formats.Float16)\n"
        "mx: float | int = numerics.finfo(DType.E4M3).max\n"
        "planes: tuple[interop.Plane[interop.DLPackDType], ...] = "
        "interop.planes(DType.MXFP4, 'dlpack')\n"
    )
    env = {k: v for k, v in __import__("os").environ.items() if k != "MYPYPATH"}
    env["MYPY_CACHE_DIR"] = str(tmp_path / ".mypy_cache")
    for args in (["-p", "stride_weave.interop", "-p", "stride_weave.numerics",
                  "-p", "stride_weave.formats", "-p", "stride_weave._packs",
                  "-p", "stride_weave.workers", "-p", "stride_weave._dask"], [str(use)]):
        result = run_python(["-m", "mypy", "--strict", *args], cwd=tmp_path, env=env,
                            timeout=600)
        assert_exited(result, what="mypy --strict")


def _run_child(code):
    result = run_python(["-c", code])
    assert_exited(result)
    return result.stdout


def test_numpy_without_ml_dtypes():
    """With numpy alone, numpy's own dtypes convert both ways and the
    ml_dtypes formats are a clear error, not a broken lookup."""
    out = _run_child(
        "import sys\n"
        "sys.modules['ml_dtypes'] = None   # not importable\n"
        "import numpy as np\n"
        "from stride_weave import interop\n"
        "from stride_weave.dtypes import DType\n"
        "print(interop.from_numpy(np.float32).name, interop.to_numpy(DType.Int8))\n"
        "try:\n"
        "    interop.to_numpy(DType.E4M3)\n"
        "except interop.NoEquivalentError as exc:\n"
        "    print(exc)\n")
    first, second = out.splitlines()
    assert first == "Float32 int8"
    assert second.startswith("to_numpy: E4M3's numpy equivalent is not available with the "
                             "installed libraries: 'float8_e4m3fn'")
    assert "ml_dtypes" in second


def test_a_name_declared_before_its_library_is_checked_when_it_is_imported():
    out = _run_child(
        "from stride_weave import interop\n"
        "from stride_weave.dtypes import DType, SimpleDType\n"
        "d = SimpleDType('Lazy', bits=8, supertype=DType.Integer)\n"
        "interop.register_mapping(d, numpy='int16')   # numpy is not imported yet\n"
        "try:\n"
        "    interop.to_numpy(d)\n"
        "except ValueError as exc:\n"
        "    print(exc)\n")
    assert out.strip() == ("the numpy equivalent declared for Lazy, 'int16', holds 16 bits, "
                           "not 8: the widths must agree")


def test_importing_the_pack_after_numpy_imports_nothing_more():
    """Declaring the built-ins' and the pack's mappings resolves no name, so
    it imports neither ml_dtypes nor the other libraries even when numpy is
    already imported."""
    out = _run_child(
        "import sys, numpy\n"
        "import stride_weave.interop, stride_weave.formats\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('ml_dtypes', 'pyarrow', 'torch')))\n")
    assert out.strip() == "[]"


@given(order=st.sampled_from(["", "@", "="]), code=st.sampled_from(list("bBhHiIlLqQnNefd?")),
       complex_=st.booleans())
def test_from_buffer_format_matches_by_kind_and_size(order, code, complex_):
    """Any native scalar format maps to the dtype of the same kind and width,
    or to none: never to a dtype of another width."""
    fmt = order + ("Z" if complex_ else "") + code
    if order == "=" and code in "nN" and not complex_:
        with pytest.raises(ValueError, match="only valid in native mode"):
            interop.from_buffer_format(fmt)
        return
    try:
        d = interop.from_buffer_format(fmt)
    except NoEquivalentError:
        return
    size = struct.calcsize((order or "@") + code) * (2 if complex_ else 1)
    assert d.bits == size * 8
    canonical = interop.to_buffer_format(d)
    assert interop.from_buffer_format(canonical) is d
    kind = "complex" if complex_ else ("float" if code in "efd" else
                                      "bool" if code == "?" else
                                      "uint" if code.isupper() else "int")
    assert kind == ("complex" if canonical.startswith("Z") else
                    "float" if canonical in "efd" else "bool" if canonical == "?" else
                    "uint" if canonical.isupper() else "int")


# ---- the first mapping is canonical, later ones are aliases ------------------------

def test_an_alias_converts_forward_and_the_first_stays_canonical():
    first, alias = _ext(bits=8, category=DType.Floating), _ext(bits=8, category=DType.Floating)
    triple = (C.kDLFloat8_e3m4, 8, 1)
    interop.register_mapping(first, dlpack=triple, numpy="float8_e3m4")
    with pytest.raises(ValueError, match=rf"already the equivalent of {first.name}; it "
                                         rf"cannot also be {alias.name}'s \(declare "
                                         rf"{alias.name}'s with alias=True"):
        interop.register_mapping(alias, dlpack=triple)
    assert interop.mapping(alias) == interop.Mapping()
    declared = interop.register_mapping(alias, dlpack=triple, numpy="float8_e3m4", alias=True)
    assert declared == interop.mapping(alias) == interop.mapping(first)
    assert interop.to_dlpack(alias) == interop.to_dlpack(first) == triple
    assert interop.to_numpy(alias) == interop.to_numpy(first) == np.dtype(ml_dtypes.float8_e3m4)
    assert interop.from_dlpack(*triple) is first
    assert interop.from_numpy(ml_dtypes.float8_e3m4) is first
    # an alias's mapping is as final as any other
    with pytest.raises(ValueError, match=f"{alias.name} is already mapped to"):
        interop.register_mapping(alias, dlpack=triple, alias=True)


def test_an_alias_of_a_builtin_and_of_a_pack_format():
    byte, half = _ext(bits=8), _ext(bits=16, category=DType.Floating)
    interop.register_mapping(byte, dlpack=(0, 8), buffer_format="b", numpy=np.int8,
                             arrow=pa.int8(), alias=True)
    interop.register_mapping(half, numpy=np.float16, arrow="float16", buffer_format="e",
                             alias=True)
    assert interop.from_dlpack(0, 8) is DType.Int8 and interop.to_dlpack(byte) == (0, 8, 1)
    assert interop.from_buffer_format("b") is DType.Int8
    assert interop.to_arrow(byte) == pa.int8() and interop.from_arrow(pa.int8()) is DType.Int8
    assert interop.from_numpy(np.float16) is formats.Float16
    assert interop.to_numpy(half) == np.dtype(np.float16)
    assert interop.to_buffer_format(half) == "e"


def test_alias_must_be_a_bool():
    with pytest.raises(TypeError, match="register_mapping: alias must be a bool, got 1"):
        interop.register_mapping(_ext(), dlpack=(0, 8), alias=1)  # type: ignore[arg-type]


# ---- Arrow types are taken as themselves --------------------------------------------

@pytest.mark.parametrize("factory, bits, stored", [
    (lambda: pa.date32(), 32, "date32"),
    (lambda: pa.date64(), 64, "date64"),
    (lambda: pa.time32("s"), 32, None),
    (lambda: pa.time64("ns"), 64, None),
    (lambda: pa.timestamp("us", tz="UTC"), 64, None),
    (lambda: pa.duration("ms"), 64, None),
    (lambda: pa.decimal128(10, 2), 128, None),
])
def test_an_arrow_type_object_is_a_mapping(factory, bits, stored):
    """A type some factory makes without arguments is stored by that
    factory's name; any other is stored as the (immutable) type itself."""
    arrow_type = factory()
    d = _ext(bits=bits)
    declared = interop.register_mapping(d, arrow=arrow_type)
    if stored is None:
        assert declared.arrow == arrow_type and type(declared.arrow) is type(arrow_type)
        assert declared.as_dict()["arrow"] == str(arrow_type)
        # the command line shows (and writes as JSON) its str()
        from stride_weave import _cli

        assert _cli.mappings_data(d)["arrow"] == str(arrow_type)
        assert f"Arrow {_cli.display_name(str(arrow_type))}" in _cli.mappings_text(d)
    else:
        assert declared.arrow == stored and type(declared.arrow) is str
    assert interop.to_arrow(d) == arrow_type
    assert interop.from_arrow(factory()) is d
    # the same type again, as an object or its name, is the same mapping
    assert interop.register_mapping(d, arrow=factory()) == declared
    if stored is not None:
        assert interop.register_mapping(d, arrow=stored) == declared
    # and another dtype cannot take it, whichever way it is given
    other = _ext(bits=bits)
    with pytest.raises(ValueError, match=f"already the equivalent of {d.name}"):
        interop.register_mapping(other, arrow=factory() if stored is None else stored)


def test_an_arrow_type_of_another_unit_is_another_equivalent():
    seconds, micros = _ext(bits=64), _ext(bits=64)
    interop.register_mapping(seconds, arrow=pa.duration("s"))
    interop.register_mapping(micros, arrow=pa.duration("us"))
    assert interop.from_arrow(pa.duration("s")) is seconds
    assert interop.from_arrow(pa.duration("us")) is micros


@pytest.mark.parametrize("value, error, match", [
    (pa.string(), ValueError, "holds -1 bits, not 32: the widths must agree"),
    (pa.time64("us"), ValueError, "holds 64 bits, not 32: the widths must agree"),
    ("no_such_factory", ValueError, "'no_such_factory' does not name an arrow dtype"),
    ("schema", ValueError, "'schema' does not name an arrow dtype"),
    ("time32", ValueError, "'time32' does not name an arrow dtype"),
])
def test_a_bad_arrow_equivalent_is_a_value_error(value, error, match):
    d = _ext(bits=32)
    with pytest.raises(error, match=match):
        interop.register_mapping(d, arrow=value)
    assert interop.mapping(d) == interop.Mapping()


def test_an_arrow_extension_type_is_refused():
    from support.arrow import extension_type

    tagged = extension_type("stride_weave.test.interop.tagged")
    d = _ext(bits=32)
    with pytest.raises(TypeError, match="expected a type of one of pyarrow's own classes"):
        interop.register_mapping(d, arrow=tagged)
    assert interop.mapping(d) == interop.Mapping()
    with pytest.raises(NoEquivalentError, match="the extension type of class .*Tagged"):
        interop.from_arrow(tagged)


# ---- complex formats -----------------------------------------------------------------

def test_a_complex_format_is_as_wide_as_its_whole_value():
    """ml_dtypes.complex32 is two float16 components: 32 bits, the width of
    a complex extension (finfo describes one component)."""
    if not hasattr(ml_dtypes, "complex32"):
        pytest.skip(f"ml_dtypes {ml_dtypes.__version__} has no complex32")
    c32 = SimpleDType(unique_name("C32"), bits=32, supertype=formats.Complex)
    interop.register_mapping(c32, numpy=ml_dtypes.complex32, dlpack=(C.kDLComplex, 32))
    assert interop.to_numpy(c32) == np.dtype(ml_dtypes.complex32)
    assert interop.from_numpy(np.dtype(ml_dtypes.complex32)) is c32
    assert interop.from_numpy("complex32") is c32
    half = _ext(bits=16, category=formats.Complex)
    with pytest.raises(ValueError, match="holds 32 bits, not 16"):
        interop.register_mapping(half, numpy="complex32")


# ---- names of ml_dtypes' types --------------------------------------------------------

def test_from_numpy_knows_ml_dtypes_names_before_ml_dtypes_is_imported():
    out = _run_child(
        "import sys\n"
        "from stride_weave import interop\n"
        "import stride_weave.formats\n"
        "assert 'ml_dtypes' not in sys.modules\n"
        "print(interop.from_numpy('bfloat16').name, interop.from_numpy('float8_e4m3fn').name)\n")
    assert out.strip() == "BFloat16 E4M3"


# ---- a miss the formats pack would answer says so ---------------------------------

_HINT_CHILD = r"""
import json, sys
import ml_dtypes, numpy as np, pyarrow as pa
from stride_weave import interop
assert "stride_weave.formats" not in sys.modules
try:
    import torch
except ImportError:
    torch = None
cases = {
    "numpy int64": lambda: interop.from_numpy(np.int64),
    "numpy float16": lambda: interop.from_numpy(np.float16),
    "numpy uint8": lambda: interop.from_numpy(np.uint8),
    "numpy 'bfloat16'": lambda: interop.from_numpy("bfloat16"),
    "numpy complex128": lambda: interop.from_numpy(np.complex128),
    "numpy int4": lambda: interop.from_numpy(ml_dtypes.int4),
    "arrow int64": lambda: interop.from_arrow(pa.int64()),
    "dlpack (4, 16)": lambda: interop.from_dlpack(4, 16),
    "buffer 'e'": lambda: interop.from_buffer_format("e"),
    "buffer 'Zd'": lambda: interop.from_buffer_format("Zd"),
    "array int64": lambda: interop.dtype_of(np.zeros(2, np.int64)),
    "capsule uint16": lambda: interop.dtype_of(np.zeros(2, np.uint16).__dlpack__()),
    # no pack format: no hint
    "numpy U3": lambda: interop.from_numpy("U3"),
    "dlpack (2, 8)": lambda: interop.from_dlpack(2, 8),
}
if torch is not None:
    cases["torch bfloat16"] = lambda: interop.from_torch(torch.bfloat16)
    cases["tensor float8_e5m2fnuz"] = lambda: interop.dtype_of(
        torch.zeros(2, dtype=torch.float8_e5m2fnuz))
out = {}
for label, call in cases.items():
    try:
        call()
    except interop.NoEquivalentError as exc:
        out[label] = str(exc)
print(json.dumps(out))
"""

HINTED = {"numpy int64": "Int64", "numpy float16": "Float16", "numpy uint8": "UInt8",
          "numpy 'bfloat16'": "BFloat16", "numpy complex128": "Complex128",
          "numpy int4": "Int4", "arrow int64": "Int64", "dlpack (4, 16)": "BFloat16",
          "buffer 'e'": "Float16", "buffer 'Zd'": "Complex128", "array int64": "Int64",
          "capsule uint16": "UInt16", "torch bfloat16": "BFloat16",
          "tensor float8_e5m2fnuz": "E5M2FNUZ"}


def test_a_miss_the_formats_pack_would_answer_says_to_import_it():
    from support import child_report

    report = child_report(_HINT_CHILD)
    expected = {k for k in HINTED if not k.startswith(("torch", "tensor")) or torch}
    assert set(report) == expected | {"numpy U3", "dlpack (2, 8)"}
    for label, name in HINTED.items():
        if label in report:
            assert report[label].endswith(
                f"; the formats pack maps it to {name}: import stride_weave.formats "
                "to register it"), (label, report[label])
    for label in ("numpy U3", "dlpack (2, 8)"):
        assert "formats" not in report[label], report[label]


def test_a_format_numpy_knows_only_from_ml_dtypes_says_how_to_install_it():
    """Without ml_dtypes (blocked in a child process), numpy has no
    float8/6/4 dtypes: the error names the package and the command that
    installs a version with every such format."""
    from support import child_report

    report = child_report("""
        import json, sys
        sys.modules["ml_dtypes"] = None     # not installed, as import sees it
        from stride_weave import interop
        from stride_weave.dtypes import DType
        out = []
        for d in (DType.E4M3, DType.E2M1):
            try:
                interop.to_numpy(d)
            except interop.NoEquivalentError as exc:
                out.append(str(exc))
        out.append(str(interop.to_numpy(DType.Float32)))
        print(json.dumps(out))
    """)
    assert report == [
        "to_numpy: E4M3's numpy equivalent is not available with the installed libraries: "
        "'float8_e4m3fn' is a numpy dtype only with ml_dtypes, which is not installed "
        "(install it with: python -m pip install 'ml_dtypes>=0.5')",
        "to_numpy: E2M1's numpy equivalent is not available with the installed libraries: "
        "'float4_e2m1fn' is a numpy dtype only with ml_dtypes, which is not installed "
        "(install it with: python -m pip install 'ml_dtypes>=0.5')",
        "float32",
    ]


def test_an_ml_dtypes_without_the_format_says_which_version_to_install():
    from support import child_report

    report = child_report("""
        import json, sys, types
        old = types.ModuleType("ml_dtypes")     # an ml_dtypes of before 0.5
        old.__version__ = "0.4.1"
        sys.modules["ml_dtypes"] = old
        from stride_weave import interop
        from stride_weave.dtypes import DType
        try:
            interop.to_numpy(DType.E8M0)
        except interop.NoEquivalentError as exc:
            print(json.dumps(str(exc)))
    """)
    assert report == (
        "to_numpy: E8M0's numpy equivalent is not available with the installed libraries: "
        "'float8_e8m0fnu' is not in the installed ml_dtypes 0.4.1 (install a version that "
        "has it with: python -m pip install 'ml_dtypes>=0.5')")


def test_conversions_are_typed_by_their_target(tmp_path):
    """Where the target is known, the result has its library's type:
    mypy --strict accepts the right annotations and refuses wrong ones
    (so the results are not Any)."""
    pytest.importorskip("mypy", reason="mypy is not installed: mypy --strict check skipped")
    good = tmp_path / "good.py"
    bad = tmp_path / "bad.py"
    torch_lines = ("import torch\n"
                   "t = assert_type(interop.to_torch(DType.E4M3), torch.dtype)\n"
                   "tp = assert_type(interop.planes(DType.MXFP4, 'torch'), "
                   "tuple[interop.Plane[torch.dtype], ...])\n") if torch else ""
    good.write_text(
        "from typing import Any, assert_type\n"
        "import numpy as np\n"
        "from stride_weave import interop, numerics\n"
        "from stride_weave.dtypes import DType, SimpleDType\n"
        "n = assert_type(interop.to_numpy(DType.E4M3), np.dtype[Any])\n"
        "p = assert_type(interop.planes(DType.MXFP4, 'numpy'), "
        "tuple[interop.Plane[np.dtype[Any]], ...])\n"
        "q = assert_type(interop.planes(DType.MXFP4, 'buffer_format'), "
        "tuple[interop.Plane[str], ...])\n"
        "r = assert_type(interop.planes(DType.MXFP4, numerics.iinfo), "
        "tuple[interop.Plane[numerics.NumericInfo], ...])\n"
        "d = assert_type(interop.dtype_of(np.zeros(2)), SimpleDType)\n" + torch_lines)
    bad.write_text(
        "from stride_weave import interop\n"
        "from stride_weave.dtypes import DType\n"
        "x: int = interop.to_numpy(DType.E4M3)\n"
        "y: str = interop.planes(DType.MXFP4, 'dlpack')[0].foreign\n"
        + ("z: int = interop.to_torch(DType.E4M3)\n" if torch else ""))
    env = {k: v for k, v in __import__("os").environ.items() if k != "MYPYPATH"}
    env["MYPY_CACHE_DIR"] = str(tmp_path / ".mypy_cache")
    result = run_python(["-m", "mypy", "--strict", str(good)], cwd=tmp_path, env=env,
                        timeout=600)
    assert_exited(result, what="mypy --strict")
    result = run_python(["-m", "mypy", "--strict", str(bad)], cwd=tmp_path, env=env,
                        timeout=600)
    assert result.returncode == 1, result.stdout + result.stderr
    for line in (3, 4) + ((5,) if torch else ()):
        assert f"bad.py:{line}: error: Incompatible types in assignment" in result.stdout, \
            result.stdout
