"""DLPack structs through ctypes, for the tests: reading the data type of
a capsule independently of the package's C reader, and making capsules of
any content (crafted structs, names, versions).

The structs are those of the DLPack 1.x header, as far as the tests read
or write them."""
import ctypes


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.c_void_p),
                ("strides", ctypes.c_void_p), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p),
                ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


def _api(name, restype, argtypes):
    function = getattr(ctypes.pythonapi, name)
    function.restype = restype
    function.argtypes = argtypes
    return function


_new_capsule = _api("PyCapsule_New", ctypes.py_object,
                    [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p])
_get_name = _api("PyCapsule_GetName", ctypes.c_char_p, [ctypes.py_object])
_get_pointer = _api("PyCapsule_GetPointer", ctypes.c_void_p,
                    [ctypes.py_object, ctypes.c_char_p])


def capsule_name(capsule):
    """The capsule's name (bytes), read through the C API."""
    return _get_name(capsule)


def capsule_dtype(capsule):
    """The (code, bits, lanes) of an unversioned "dltensor" capsule of a CPU
    tensor (the DLTensor is the first member of DLManagedTensor)."""
    tensor = DLTensor.from_address(_get_pointer(capsule, b"dltensor"))
    assert tensor.device.device_type == 1   # kDLCPU
    return (tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes)


# The structs and names of crafted capsules live as long as the process (a
# capsule keeps only pointers to them, and has no destructor).
_KEEP = []
DEFAULT = object()


def crafted(code, bits, lanes, *, name=DEFAULT, versioned=False, major=1):
    """A capsule named ``name`` (by default the DLPack name of its struct;
    None: no name) holding a tensor struct whose data type is (code, bits,
    lanes)."""
    if name is DEFAULT:
        name = b"dltensor_versioned" if versioned else b"dltensor"
    managed = DLManagedTensorVersioned(major=major, minor=0) if versioned else DLManagedTensor()
    managed.dl_tensor.device = DLDevice(1, 0)
    managed.dl_tensor.dtype = DLDataType(code, bits, lanes)
    name_buffer = None if name is None else ctypes.create_string_buffer(name)
    _KEEP.append((managed, name_buffer))
    return _new_capsule(ctypes.addressof(managed), name_buffer, None)


def crafted_tensor(code, bits, *, lanes=1, data=None, shape=(), strides=None,
                   byte_offset=0, device=(1, 0), ndim=None, versioned=False,
                   deleter=None):
    """A "dltensor" (or versioned) capsule whose DLTensor says whatever it
    is given, true or not: ``data`` an address (None: NULL), ``shape`` and
    ``strides`` (in elements; None: no strides) stored as int64 arrays,
    ``ndim`` the claimed number of dimensions (by default len(shape)),
    ``deleter`` a ctypes function pointer (or None).  The structs live as
    long as the process."""
    managed = DLManagedTensorVersioned(major=1, minor=0) if versioned else DLManagedTensor()
    t = managed.dl_tensor
    t.data = data
    t.device = DLDevice(*device)
    t.ndim = len(shape) if ndim is None else ndim
    t.dtype = DLDataType(code, bits, lanes)
    shape_array = (ctypes.c_int64 * max(len(shape), 1))(*shape)
    t.shape = ctypes.addressof(shape_array) if shape is not None else None
    strides_array = None
    if strides is not None:
        strides_array = (ctypes.c_int64 * max(len(strides), 1))(*strides)
        t.strides = ctypes.addressof(strides_array)
    t.byte_offset = byte_offset
    if deleter is not None:
        managed.deleter = ctypes.cast(deleter, ctypes.c_void_p)
    name = ctypes.create_string_buffer(b"dltensor_versioned" if versioned else b"dltensor")
    _KEEP.append((managed, name, shape_array, strides_array, deleter))
    return _new_capsule(ctypes.addressof(managed), name, None)
