"""interop.dtype_of: one call gives the stride-weave dtype of a numpy, torch
or Arrow array, of any object with __dlpack__, and of a DLPack capsule,
which is read in C without consuming or renaming it. Hostile inputs (other
capsules, consumed ones, crafted structs, objects whose __dlpack__ or dtype
misbehave) are refused with TypeError or ValueError, never a crash."""
import datetime  # noqa: F401 - its C API capsule is one of the wrong ones

import pytest
from hypothesis import given
from hypothesis import strategies as st

import stride_weave.formats as formats
from stride_weave import _dtypes, interop
from stride_weave.dtypes import DType, SimpleDType
from stride_weave.interop import DLDataTypeCode as C
from stride_weave.interop import NoEquivalentError
from support.dlpack import capsule_name, crafted

np = pytest.importorskip("numpy")
ml_dtypes = pytest.importorskip("ml_dtypes")
pa = pytest.importorskip("pyarrow")

try:
    import torch
except ImportError:
    torch = None
requires_torch = pytest.mark.skipif(torch is None, reason="torch is not importable")

SIMPLE = [d for d in DType.registered() if isinstance(d, SimpleDType)
          and (getattr(DType, d.name, None) is d or d in formats.FORMATS)]
IN_NUMPY = [d for d in SIMPLE if interop.mapping(d).numpy is not None]


# ---- arrays of the libraries ----------------------------------------------------------

@pytest.mark.parametrize("d", IN_NUMPY, ids=lambda d: d.name)
def test_numpy_arrays_and_scalars(d):
    array = np.zeros(3, interop.to_numpy(d))
    assert interop.dtype_of(array) is d
    assert interop.dtype_of(array[0]) is d          # a numpy scalar
    assert interop.dtype_of(array.reshape(3, 1)[::2]) is d


def test_a_numpy_subclass_cannot_answer_for_its_dtype():
    """The dtype is read with ndarray's own getter: an overriding property
    of a subclass never runs."""
    calls = []

    class Lying(np.ndarray):
        @property
        def dtype(self):
            calls.append("dtype")
            return np.dtype(np.float64)

    array = np.zeros(2, np.float32).view(Lying)
    assert interop.dtype_of(array) is DType.Float32
    assert calls == []


@pytest.mark.parametrize("version", [None, (1, 0)])
def test_numpy_capsules_are_read_and_left_as_they_were(version):
    array = np.arange(4, dtype=np.int32)
    capsule = array.__dlpack__() if version is None else array.__dlpack__(max_version=version)
    name = capsule_name(capsule)
    assert name == (b"dltensor" if version is None else b"dltensor_versioned")
    assert interop.dtype_of(capsule) is DType.Int32
    assert interop.dtype_of(capsule) is DType.Int32     # not consumed: read again
    assert capsule_name(capsule) == name

    class Holder:
        def __dlpack__(self, **kwargs):
            return capsule

        def __dlpack_device__(self):
            return (1, 0)

    # a consumer still takes it, whole
    assert np.from_dlpack(Holder()).tolist() == [0, 1, 2, 3]
    assert capsule_name(capsule).startswith(b"used_")
    with pytest.raises(ValueError, match=r"dtype_of: the capsule was consumed already "
                                         r"\(its name is b'used_dltensor"):
        interop.dtype_of(capsule)


def test_arrow_arrays_and_chunked_arrays():
    assert interop.dtype_of(pa.array([1, 2], pa.int32())) is DType.Int32
    assert interop.dtype_of(pa.chunked_array([[1.5], [2.5]], pa.float64())) is DType.Float64
    assert interop.dtype_of(pa.array([1, 2], pa.uint16())) is formats.UInt16
    with pytest.raises(NoEquivalentError, match=r"dtype_of: no stride-weave dtype is the "
                                                r"equivalent of arrow DataType\(string\)"):
        interop.dtype_of(pa.array(["x"]))


def test_an_arrow_extension_array_has_no_equivalent():
    from support.arrow import extension_type

    tagged = extension_type("stride_weave.test.dtype_of.tagged")
    array = pa.ExtensionArray.from_storage(tagged, pa.array([1, 2], pa.int32()))
    with pytest.raises(NoEquivalentError, match="the extension type of class .*Tagged"):
        interop.dtype_of(array)


@requires_torch
@pytest.mark.parametrize("d", [d for d in SIMPLE if interop.mapping(d).torch is not None],
                         ids=lambda d: d.name)
def test_torch_tensors_and_their_capsules(d):
    tensor = torch.zeros(4, dtype=interop.to_torch(d))
    assert interop.dtype_of(tensor) is d
    try:
        capsule = tensor.__dlpack__()
    except (BufferError, RuntimeError, TypeError) as exc:
        pytest.skip(f"torch does not export {tensor.dtype}: {exc}")
    # torch.float4_e2m1fn_x2 exports (17, 4, 2): two packed E2M1 values
    assert interop.dtype_of(capsule) is d


@requires_torch
def test_a_torch_subclass_whose_dtype_is_not_a_torch_dtype_is_refused():
    class Odd(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if getattr(func, "__name__", None) == "__get__":
                return "float32"
            return super().__torch_function__(func, types, args, kwargs or {})

    odd = torch.zeros(2).as_subclass(Odd)
    with pytest.raises(TypeError, match="dtype_of: the tensor's dtype is not a torch.dtype, "
                                        "got an object of type str"):
        interop.dtype_of(odd)


# ---- any object with __dlpack__ ------------------------------------------------------

class _Exporter:
    def __init__(self, result):
        self.result = result

    def __dlpack__(self, stream=None):
        if isinstance(self.result, BaseException):
            raise self.result
        return self.result


def test_an_object_with_dlpack_is_asked_for_its_capsule():
    exporter = _Exporter(np.zeros(2, np.float64).__dlpack__())
    assert interop.dtype_of(exporter) is DType.Float64


class _Interrupt(BaseException):
    pass


@pytest.mark.parametrize("result, error, match", [
    (3, TypeError, r"__dlpack__\(\) of a _Exporter must return a DLPack capsule, got an "
                   r"object of type int"),
    ("dltensor", TypeError, "got an object of type str"),
    (None, TypeError, "got an object of type NoneType"),
    (BufferError("not exportable"), ValueError,
     r"dtype_of: obj.__dlpack__\(\) of a _Exporter raised BufferError"),
    (RuntimeError("boom"), ValueError, "raised RuntimeError"),
])
def test_an_object_whose_dlpack_misbehaves(result, error, match):
    with pytest.raises(error, match=match) as info:
        interop.dtype_of(_Exporter(result))
    if isinstance(result, Exception):
        assert info.value.__cause__ is result


def test_an_interrupt_in_dlpack_propagates():
    with pytest.raises(_Interrupt):
        interop.dtype_of(_Exporter(_Interrupt()))


def test_an_object_whose_dlpack_attribute_raises():
    class Hostile:
        def __getattr__(self, name):
            raise RuntimeError(f"no {name} today")

    with pytest.raises(ValueError, match="raised RuntimeError"):
        interop.dtype_of(Hostile())


def test_an_object_that_claims_to_be_an_array_is_not_believed():
    """isinstance() believes a __class__ property; dtype_of reads the real
    type, and this object has no __dlpack__."""
    namespace = {"__class__": property(lambda self: np.ndarray),
                 "dtype": np.dtype(np.float32)}
    fake = type("Claiming", (), namespace)()
    assert isinstance(fake, np.ndarray)
    with pytest.raises(TypeError, match="obj must be a numpy, torch or Arrow array, an "
                                        "object with __dlpack__ or a DLPack capsule, got "
                                        "an object of type Claiming"):
        interop.dtype_of(fake)


@pytest.mark.parametrize("obj", [3, "float32", b"dltensor", DType.Float32, np.float32,
                                 [1.0], memoryview(b"ab")],
                         ids=["int", "str", "bytes", "descriptor", "numpy-type", "list",
                              "memoryview"])
def test_objects_that_are_no_array_are_a_type_error(obj):
    with pytest.raises(TypeError, match="dtype_of: obj must be a numpy, torch or Arrow array"):
        interop.dtype_of(obj)


# ---- capsules that are not DLPack tensors ---------------------------------------------

@pytest.mark.parametrize("capsule, match", [
    (_dtypes._C_API, r"got a capsule named b'stride_weave._dtypes._C_API'"),
    (datetime.datetime_CAPI, r"got a capsule named b'datetime.datetime_CAPI'"),
    (crafted(2, 32, 1, name=b"dltensor_v2"), r"got a capsule named b'dltensor_v2'"),
    (crafted(2, 32, 1, name=None), "got a capsule without a name"),
    (crafted(2, 32, 1, name=b"used_dltensor_versioned", versioned=True),
     "the capsule was consumed already"),
    (crafted(2, 32, 1, versioned=True, major=2),
     "holds a DLPack 2.0 tensor; only major version 1 is known here"),
    (crafted(2, 32, 1, versioned=True, major=0),
     "holds a DLPack 0.0 tensor"),
    (crafted(2, 0, 1), r"DLDataType is invalid: code 2, bits 0, lanes 1"),
    (crafted(2, 32, 0, versioned=True), r"DLDataType is invalid: code 2, bits 32, lanes 0"),
], ids=["capi", "datetime", "other-name", "no-name", "consumed", "major-2", "major-0",
        "bits-0", "lanes-0"])
def test_a_capsule_that_is_not_a_dlpack_tensor_is_a_value_error(capsule, match):
    with pytest.raises(ValueError, match=match):
        interop.dtype_of(capsule)


def test_the_reader_refuses_what_is_not_a_capsule():
    with pytest.raises(TypeError, match="_dlpack_dtype: capsule must be a DLPack capsule .* "
                                        "got an object of type int"):
        _dtypes._dlpack_dtype(3)


@given(code=st.integers(0, 255), bits=st.integers(0, 255), lanes=st.integers(0, 65535),
       versioned=st.booleans())
def test_any_crafted_data_type_reads_as_its_triple(code, bits, lanes, versioned):
    """Whatever the data type, the reader returns it as it is (or refuses a
    zero width), and dtype_of is from_dlpack of it; sub-byte lanes that
    fill one byte are their element format."""
    capsule = crafted(code, bits, lanes, versioned=versioned)
    if bits == 0 or lanes == 0:
        with pytest.raises(ValueError, match="DLDataType is invalid"):
            interop.dtype_of(capsule)
        return
    assert _dtypes._dlpack_dtype(capsule) == (code, bits, lanes)
    packed = lanes > 1 and bits < 8 and bits * lanes == 8
    try:
        expected = interop.from_dlpack(code, bits, 1 if packed else lanes)
    except NoEquivalentError:
        with pytest.raises(NoEquivalentError):
            interop.dtype_of(capsule)
        return
    assert interop.dtype_of(capsule) is expected


def test_packed_sub_byte_lanes_are_the_element_format():
    assert interop.dtype_of(crafted(C.kDLFloat4_e2m1fn, 4, 2)) is DType.E2M1
    assert interop.dtype_of(crafted(C.kDLFloat4_e2m1fn, 4, 1)) is DType.E2M1
    with pytest.raises(NoEquivalentError, match=r"dlpack DLPackDType\(code=17, bits=4, "
                                                r"lanes=4\)"):
        interop.dtype_of(crafted(C.kDLFloat4_e2m1fn, 4, 4))
    with pytest.raises(NoEquivalentError):
        interop.dtype_of(crafted(C.kDLFloat, 32, 2))   # a vector type
