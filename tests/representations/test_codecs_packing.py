"""stride_weave.codecs.pack/unpack: DLPack's bit order (element i at bits
[i*b, (i+1)*b) of the little-endian bit stream), checked against golden
bytes, an independent bit-by-bit model, and torch's float4_e2m1fn_x2 (as
its DLPack export describes it) where torch is installed."""
import ctypes

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support import unique_name
from stride_weave import codecs, formats
from stride_weave.dtypes import DType, SimpleDType
from stride_weave.numerics import NumericInfo, register_numeric_info

np = pytest.importorskip("numpy")


def _model_pack(codes, bits):
    """The little-endian bit stream, one bit at a time."""
    stream = []
    for code in codes:
        stream += [(int(code) >> k) & 1 for k in range(bits)]
    stream += [0] * (-len(stream) % 8)
    return bytes(sum(stream[i + k] << k for k in range(8)) for i in range(0, len(stream), 8))


def _width(bits):
    dtype = SimpleDType(unique_name(f"Packed{bits}_"), bits=bits, supertype=DType.Integer)
    register_numeric_info(dtype, NumericInfo.integer(bits, signed=False))
    return dtype


WIDTHS = {bits: _width(bits) for bits in (1, 2, 3, 5, 7, 12, 13, 24, 33, 63)}


def test_golden_bytes():
    assert codecs.pack(np.array([1, 2], np.uint8), DType.E2M1).tolist() == [0x21]
    assert codecs.pack(np.array([1, 2, 3], np.uint8), DType.E2M1).tolist() == [0x21, 0x03]
    # 6 bits: 4 elements in 3 bytes
    packed = codecs.pack(np.array([0x3F, 0x00, 0x15, 0x2A], np.uint8), DType.E3M2)
    assert packed.tolist() == [0x3F, 0x50, 0xA9]
    assert codecs.pack(np.array([0x3F], np.uint8), DType.E2M3).tolist() == [0x3F]
    assert codecs.pack(np.array([1, 1], np.uint8), DType.E2M3).tolist() == [0x41, 0x00]


def test_pack_refuses_a_code_wider_than_the_format():
    # nothing is masked away: the first offending index is named
    with pytest.raises(ValueError) as info:
        codecs.pack(np.array([1, 0x10, 0xF1], np.uint8), DType.E2M1)
    assert str(info.value) == ("pack: codes[1] (flat index) is 16, which does not fit "
                               "E2M1's 4 bits (pack never masks a code)")
    with pytest.raises(ValueError, match=r"codes\[0\] .* is 255, .* E3M2's 6 bits"):
        codecs.pack(np.array([0xFF], np.uint8), DType.E3M2)
    # the same on many threads, the first index whatever the split
    many = np.zeros(1 << 20, np.uint8)
    many[[700_001, 900_000]] = 0x20
    for threads in (1, 2, 7):
        with pytest.raises(ValueError, match=r"codes\[700001\]"):
            codecs.pack(many, DType.E2M1, threads=threads)


def test_decode_ignores_bits_above_the_width():
    assert codecs.decode(np.array([0xF1, 0x01], np.uint8), DType.E2M1).tolist() == [0.5, 0.5]


@pytest.mark.parametrize("dtype", [DType.E2M1, DType.E3M2, DType.E8M0, formats.Float16,
                                   DType.Float32, DType.Float64, *WIDTHS.values()],
                         ids=lambda d: f"{d.bits}bit")
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_pack_matches_the_bit_stream_model_and_unpacks(dtype, data):
    n = data.draw(st.integers(0, 40))
    codes = np.array(data.draw(st.lists(st.integers(0, 2**dtype.bits - 1), min_size=n,
                                        max_size=n)), dtype=np.uint64)
    codes = codes.astype(codecs._code_dtype(dtype.bits))
    packed = codecs.pack(codes, dtype)
    assert packed.dtype == np.uint8
    assert bytes(packed) == _model_pack(codes, dtype.bits)
    assert np.array_equal(codecs.unpack(packed, dtype, n), codes)


def test_unpack_reads_only_what_count_needs():
    data = np.array([0x21, 0x43, 0xFF], np.uint8)
    assert codecs.unpack(data, DType.E2M1, 3).tolist() == [1, 2, 3]
    assert codecs.unpack(bytes([0x21]), DType.E2M1, 2).tolist() == [1, 2]
    with pytest.raises(ValueError, match="count 7 of 4-bit codes needs 4 bytes"):
        codecs.unpack(data, DType.E2M1, 7)


def test_odd_counts_pad_with_zero_bits():
    packed = codecs.pack(np.full(5, 0xF, np.uint8), DType.E2M1)
    assert packed.tolist() == [0xFF, 0xFF, 0x0F]
    packed = codecs.pack(np.full(5, 0x3F, np.uint8), DType.E3M2)
    assert packed.tolist() == [0xFF, 0xFF, 0xFF, 0x3F]


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


def test_torch_float4_x2_is_this_bit_order():
    torch = pytest.importorskip("torch")
    mx = pytest.importorskip("torchao.prototype.mx_formats.kernels")
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(64) * 3).astype(np.float32)
    codes = codecs.encode(x, DType.E2M1)
    # torchao's own element conversion and nibble packing (element 2i in the
    # low nibble), the layout of torch.float4_e2m1fn_x2
    unpacked = mx.f32_to_f4_unpacked(torch.from_numpy(x))
    assert unpacked.numpy().tolist() == codes.tolist()
    theirs = mx.pack_uint4(unpacked).view(torch.float4_e2m1fn_x2)
    ours = codecs.pack(codes, DType.E2M1)
    # the DLPack export: 4-bit lanes, two per byte, data equal to ours
    capsule = theirs.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    tensor = _DLTensor.from_address(get(capsule, b"dltensor"))
    assert (tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes) == (17, 4, 2)
    assert tensor.shape[0] * 2 == len(x)
    data = bytes((ctypes.c_uint8 * len(ours)).from_address(tensor.data + tensor.byte_offset))
    assert data == bytes(ours)
