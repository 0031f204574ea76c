/* dlpack.c: DLPack capsules, read without any library.
 *
 * Owns _dlpack_dtype(capsule), which stride_weave.interop.dtype_of() calls
 * for a capsule (an array's __dlpack__() result): it returns the
 * (code, bits, lanes) of the capsule's DLDataType, and only looks at the
 * capsule: it is neither consumed nor renamed, so its producer's
 * destructor still frees the tensor, and a consumer can still take it.
 *
 * And _dlpack_buffer(capsule), which stride_weave.codecs calls for arrays
 * numpy cannot take (bfloat16): the capsule is consumed as the protocol
 * says (renamed "used_..."), and the tensor, which must be on the CPU,
 * is exported read-only through the buffer protocol by a small object
 * that owns it and calls its deleter when freed.  The structs below
 * mirror the DLPack 1.x ABI (the layout the standard fixes).
 *
 * A capsule is made by C code; Python code cannot forge one without
 * ctypes, which is outside what the package defends against.  What it
 * can do (hand over any object, a capsule of another kind, a consumed
 * capsule) is refused here with TypeError or ValueError.
 */
#include "dlpack.h"
#include "state.h"

#include <stdint.h>
#include <string.h>

/* The DLPack 1.x structs, as far as this file reads them. */
typedef struct {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
} sw_dlpack_data_type;

typedef struct {
    int32_t device_type;    /* an enum in the header: int-sized */
    int32_t device_id;
} sw_dlpack_device;

typedef struct {
    void *data;
    sw_dlpack_device device;
    int32_t ndim;
    sw_dlpack_data_type dtype;
    int64_t *shape;
    int64_t *strides;
    uint64_t byte_offset;
} sw_dlpack_tensor;

/* "dltensor": the legacy DLManagedTensor. */
typedef struct {
    sw_dlpack_tensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(void *self);
} sw_dlpack_managed;

/* "dltensor_versioned": DLManagedTensorVersioned, whose layout is fixed
 * by its major version. */
typedef struct {
    uint32_t major;
    uint32_t minor;
} sw_dlpack_version;

typedef struct {
    sw_dlpack_version version;
    void *manager_ctx;
    void (*deleter)(void *self);
    uint64_t flags;
    sw_dlpack_tensor dl_tensor;
} sw_dlpack_managed_versioned;

#define SW_DLPACK_NAME "dltensor"
#define SW_DLPACK_VERSIONED_NAME "dltensor_versioned"
#define SW_DLPACK_USED_PREFIX "used_"
#define SW_DLPACK_MAJOR 1

static const char sw_dlpack_expected[] =
    "a DLPack capsule (a PyCapsule named '" SW_DLPACK_NAME "' or '"
    SW_DLPACK_VERSIONED_NAME "', as __dlpack__() returns)";

/* 0 with the name's kind in *versioned, or -1 with ValueError for a
 * capsule of another kind (its name shown as bytes: it is any C string),
 * the message opening with `func`, the function that was called, and
 * ending with `used_hint` for a capsule consumed already. */
static int
sw_dlpack_kind(PyObject *capsule, const char *func, const char *used_hint,
               int *versioned)
{
    const char *name = PyCapsule_GetName(capsule);
    PyObject *shown = NULL;

    if (name == NULL && PyErr_Occurred()) {
        return -1;
    }
    if (name != NULL && strcmp(name, SW_DLPACK_NAME) == 0) {
        *versioned = 0;
        return 0;
    }
    if (name != NULL && strcmp(name, SW_DLPACK_VERSIONED_NAME) == 0) {
        *versioned = 1;
        return 0;
    }
    if (name == NULL) {
        PyErr_Format(PyExc_ValueError,
                     "%s: capsule must be %s, got a capsule "
                     "without a name", func, sw_dlpack_expected);
        return -1;
    }
    shown = PyBytes_FromString(name);
    if (shown == NULL) {
        return -1;
    }
    if (strncmp(name, SW_DLPACK_USED_PREFIX, strlen(SW_DLPACK_USED_PREFIX)) == 0) {
        PyErr_Format(PyExc_ValueError,
                     "%s: the capsule was consumed already (its name is %R): %s",
                     func, shown, used_hint);
    }
    else {
        PyErr_Format(PyExc_ValueError,
                     "%s: capsule must be %s, got a capsule named %R",
                     func, sw_dlpack_expected, shown);
    }
    Py_DECREF(shown);
    return -1;
}

static PyObject *
sw_dlpack_dtype(PyObject *Py_UNUSED(module), PyObject *capsule)
{
    void *pointer;
    sw_dlpack_data_type dtype;
    int versioned = 0;

    if (!PyCapsule_CheckExact(capsule)) {
        /* The type's name only: nothing of the object's own code runs. */
        PyErr_Format(PyExc_TypeError,
                     "_dlpack_dtype: capsule must be %s, got an object of "
                     "type %.200s", sw_dlpack_expected, Py_TYPE(capsule)->tp_name);
        return NULL;
    }
    if (sw_dlpack_kind(capsule, "_dlpack_dtype",
                       "read its dtype before a consumer takes it", &versioned) < 0) {
        return NULL;
    }
    /* Never NULL for a capsule of that name (PyCapsule_New and
     * PyCapsule_SetPointer refuse NULL); checked all the same. */
    pointer = PyCapsule_GetPointer(capsule, versioned ? SW_DLPACK_VERSIONED_NAME
                                                      : SW_DLPACK_NAME);
    if (pointer == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError,
                            "_dlpack_dtype: the capsule holds no tensor");
        }
        return NULL;
    }
    /* Copied at once: nothing runs between the name check and the copy. */
    if (versioned) {
        const sw_dlpack_managed_versioned *m = pointer;

        if (m->version.major != SW_DLPACK_MAJOR) {
            PyErr_Format(PyExc_ValueError,
                         "_dlpack_dtype: the capsule holds a DLPack %lu.%lu "
                         "tensor; only major version %d is known here",
                         (unsigned long)m->version.major,
                         (unsigned long)m->version.minor, SW_DLPACK_MAJOR);
            return NULL;
        }
        memcpy(&dtype, &m->dl_tensor.dtype, sizeof(dtype));
    }
    else {
        const sw_dlpack_managed *m = pointer;

        memcpy(&dtype, &m->dl_tensor.dtype, sizeof(dtype));
    }
    if (dtype.bits == 0 || dtype.lanes == 0) {
        PyErr_Format(PyExc_ValueError,
                     "_dlpack_dtype: the capsule's DLDataType is invalid: code "
                     "%d, bits %d, lanes %d (bits and lanes must be positive)",
                     (int)dtype.code, (int)dtype.bits, (int)dtype.lanes);
        return NULL;
    }
    return Py_BuildValue("(iii)", (int)dtype.code, (int)dtype.bits,
                         (int)dtype.lanes);
}

/* ---- a tensor exported as a buffer ------------------------------------------- */

#define SW_DLPACK_CPU 1
#define SW_DLPACK_MAX_DIMS 64

typedef struct {
    PyObject_HEAD
    void *managed;          /* the managed tensor, owned: its deleter runs
                               when this object is freed */
    int versioned;
    char *data;
    int ndim;
    Py_ssize_t *shape;      /* ndim extents, then ndim strides in bytes */
    Py_ssize_t itemsize;
    Py_ssize_t len;
    char format[2];
} sw_dlpack_view;

static void
sw_dlpack_view_dealloc(PyObject *self)
{
    sw_dlpack_view *v = (sw_dlpack_view *)self;
    PyTypeObject *type = Py_TYPE(self);
    void (*deleter)(void *) = NULL;

    if (v->managed != NULL) {
        deleter = v->versioned ? ((sw_dlpack_managed_versioned *)v->managed)->deleter
                               : ((sw_dlpack_managed *)v->managed)->deleter;
    }
    PyMem_Free(v->shape);
    if (deleter != NULL) {
        /* The producer's deleter may run Python code (numpy's drops its
         * array); an object can be freed while an exception propagates,
         * which that code must not see, nor replace. */
        PyObject *pending = PyErr_GetRaisedException();

        deleter(v->managed);
        if (PyErr_Occurred()) {
            PyErr_WriteUnraisable(NULL);     /* not self: it is being freed */
        }
        PyErr_SetRaisedException(pending);
    }
    type->tp_free(self);
    Py_DECREF(type);
}

static int
sw_dlpack_view_getbuffer(PyObject *self, Py_buffer *view, int flags)
{
    sw_dlpack_view *v = (sw_dlpack_view *)self;

    if (flags & PyBUF_WRITABLE) {
        PyErr_SetString(PyExc_BufferError, "a DLPack tensor is exported read-only");
        view->obj = NULL;
        return -1;
    }
    /* A consumer that asks for a contiguous buffer (PyBUF_C_CONTIGUOUS,
     * as the codecs' kernels do, and any request without strides) reads
     * buf[0..len) in order: a tensor laid out otherwise (transposed,
     * strided, negative strides that put elements before `data`) is
     * refused, never handed over as if it were contiguous. */
    {
        Py_buffer probe = {.buf = v->data, .len = v->len, .itemsize = v->itemsize,
                           .ndim = v->ndim, .shape = v->shape,
                           .strides = v->shape + v->ndim};
        char order = 0;

        if ((flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS
            || !(flags & PyBUF_STRIDES)) {
            order = 'C';
        }
        else if ((flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS) {
            order = 'F';
        }
        else if ((flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS) {
            order = 'A';
        }
        if (order != 0 && !PyBuffer_IsContiguous(&probe, order)) {
            PyErr_Format(PyExc_BufferError, "the DLPack tensor is not %s-contiguous%s",
                         order == 'C' ? "C" : order == 'F' ? "Fortran" : "C- or Fortran",
                         (flags & PyBUF_STRIDES) ? "" : ": ask for its strides");
            view->obj = NULL;
            return -1;
        }
    }
    view->buf = v->data;
    view->obj = Py_NewRef(self);
    view->len = v->len;
    view->readonly = 1;
    view->itemsize = v->itemsize;
    view->format = (flags & PyBUF_FORMAT) ? v->format : NULL;
    view->ndim = v->ndim;
    view->shape = (flags & PyBUF_ND) ? v->shape : NULL;
    view->strides = (flags & PyBUF_STRIDES) ? v->shape + v->ndim : NULL;
    view->suboffsets = NULL;
    view->internal = NULL;
    return 0;
}

static PyType_Slot sw_dlpack_view_slots[] = {
    {Py_tp_dealloc, sw_dlpack_view_dealloc},
    {Py_bf_getbuffer, sw_dlpack_view_getbuffer},
    {Py_tp_doc, (void *)PyDoc_STR("A CPU tensor taken from a DLPack capsule, "
                                  "exported read-only through the buffer protocol.")},
    {0, NULL},
};

static PyType_Spec sw_dlpack_view_spec = {
    .name = "stride_weave._dtypes._DLPackView",
    .basicsize = sizeof(sw_dlpack_view),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = sw_dlpack_view_slots,
};

int
sw_dlpack_create_type(PyObject *module, sw_state *st)
{
    st->dlpack_view_type = (PyTypeObject *)PyType_FromModuleAndSpec(
        module, &sw_dlpack_view_spec, NULL);
    return st->dlpack_view_type == NULL ? -1 : 0;
}

/* The buffer format of a DLPack data type (bfloat16 as its bits), or
 * NULL. */
static const char *
sw_dlpack_format(const sw_dlpack_data_type *t)
{
    if (t->lanes != 1) {
        return NULL;
    }
    switch (t->code) {
    case 0:     /* int */
        return t->bits == 8 ? "b" : t->bits == 16 ? "h" : t->bits == 32 ? "i"
               : t->bits == 64 ? "q" : NULL;
    case 1:     /* uint */
        return t->bits == 8 ? "B" : t->bits == 16 ? "H" : t->bits == 32 ? "I"
               : t->bits == 64 ? "Q" : NULL;
    case 2:     /* float */
        return t->bits == 16 ? "e" : t->bits == 32 ? "f" : t->bits == 64 ? "d" : NULL;
    case 4:     /* bfloat */
        return t->bits == 16 ? "H" : NULL;
    default:
        return NULL;
    }
}

static PyObject *
sw_dlpack_buffer(PyObject *module, PyObject *capsule)
{
    sw_state *st = sw_state_of_module(module);
    sw_dlpack_tensor t;
    sw_dlpack_view *v = NULL;
    const char *format;
    void *pointer;
    Py_ssize_t count = 1, itemsize;
    int versioned = 0, a;

    if (!PyCapsule_CheckExact(capsule)) {
        PyErr_Format(PyExc_TypeError,
                     "_dlpack_buffer: capsule must be %s, got an object of type "
                     "%.200s", sw_dlpack_expected, Py_TYPE(capsule)->tp_name);
        return NULL;
    }
    if (sw_dlpack_kind(capsule, "_dlpack_buffer", "a capsule can be consumed once",
                       &versioned) < 0) {
        return NULL;
    }
    pointer = PyCapsule_GetPointer(capsule, versioned ? SW_DLPACK_VERSIONED_NAME
                                                      : SW_DLPACK_NAME);
    if (pointer == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "_dlpack_buffer: the capsule holds no tensor");
        }
        return NULL;
    }
    if (versioned) {
        const sw_dlpack_managed_versioned *m = pointer;
        if (m->version.major != SW_DLPACK_MAJOR) {
            PyErr_Format(PyExc_ValueError,
                         "_dlpack_buffer: the capsule holds a DLPack %lu.%lu tensor; "
                         "only major version %d is known here",
                         (unsigned long)m->version.major,
                         (unsigned long)m->version.minor, SW_DLPACK_MAJOR);
            return NULL;
        }
        memcpy(&t, &m->dl_tensor, sizeof(t));
    }
    else {
        memcpy(&t, &((const sw_dlpack_managed *)pointer)->dl_tensor, sizeof(t));
    }
    if (t.device.device_type != SW_DLPACK_CPU) {
        PyErr_Format(PyExc_ValueError,
                     "_dlpack_buffer: the tensor is on device type %d (id %d); only "
                     "CPU memory (device type 1) can be read here",
                     (int)t.device.device_type, (int)t.device.device_id);
        return NULL;
    }
    format = sw_dlpack_format(&t.dtype);
    if (format == NULL) {
        PyErr_Format(PyExc_ValueError,
                     "_dlpack_buffer: a tensor of DLPack type (code %d, %d bits, %d "
                     "lanes) cannot be exported here", (int)t.dtype.code,
                     (int)t.dtype.bits, (int)t.dtype.lanes);
        return NULL;
    }
    itemsize = t.dtype.bits / 8;
    if (t.ndim < 0 || t.ndim > SW_DLPACK_MAX_DIMS || (t.ndim > 0 && t.shape == NULL)) {
        PyErr_Format(PyExc_ValueError, "_dlpack_buffer: the tensor has %d dimensions "
                     "(0 to %d expected) and %s shape", (int)t.ndim, SW_DLPACK_MAX_DIMS,
                     t.shape == NULL ? "no" : "a");
        return NULL;
    }
    v = PyObject_New(sw_dlpack_view, st->dlpack_view_type);
    if (v == NULL) {
        return NULL;
    }
    v->managed = NULL;
    v->versioned = versioned;
    v->ndim = (int)t.ndim;
    v->itemsize = itemsize;
    v->format[0] = format[0];
    v->format[1] = '\0';
    v->shape = PyMem_Calloc(2 * (size_t)(t.ndim > 0 ? t.ndim : 1), sizeof(Py_ssize_t));
    if (v->shape == NULL) {
        Py_DECREF(v);
        return PyErr_NoMemory();
    }
    /* extents and byte strides, every product checked */
    for (a = t.ndim - 1; a >= 0; a--) {
        int64_t extent = t.shape[a];
        int64_t stride = t.strides != NULL ? t.strides[a] : (int64_t)count;
        if (extent < 0 || (extent > 0 && count > PY_SSIZE_T_MAX / extent)
            || stride > PY_SSIZE_T_MAX / itemsize || stride < -PY_SSIZE_T_MAX / itemsize) {
            PyErr_SetString(PyExc_ValueError,
                            "_dlpack_buffer: the tensor's shape or strides overflow");
            Py_DECREF(v);
            return NULL;
        }
        v->shape[a] = (Py_ssize_t)extent;
        v->shape[t.ndim + a] = (Py_ssize_t)stride * itemsize;
        count *= (Py_ssize_t)extent;
    }
    if (count > PY_SSIZE_T_MAX / itemsize) {
        PyErr_SetString(PyExc_ValueError, "_dlpack_buffer: the tensor is too large");
        Py_DECREF(v);
        return NULL;
    }
    /* an element to read needs memory to read it from (an empty tensor
     * may have none: nothing is read) */
    if (t.data == NULL && count > 0) {
        PyErr_Format(PyExc_ValueError, "_dlpack_buffer: the tensor has %zd element%s "
                     "and no data pointer", count, count == 1 ? "" : "s");
        Py_DECREF(v);
        return NULL;
    }
    if (t.byte_offset > (uint64_t)PY_SSIZE_T_MAX) {
        PyErr_SetString(PyExc_ValueError,
                        "_dlpack_buffer: the tensor's byte_offset overflows");
        Py_DECREF(v);
        return NULL;
    }
    v->len = count * itemsize;
    v->data = (char *)t.data + t.byte_offset;
    /* consumed: the producer's destructor leaves the tensor to us */
    if (PyCapsule_SetName(capsule, versioned ? "used_dltensor_versioned"
                                             : "used_dltensor") < 0) {
        Py_DECREF(v);
        return NULL;
    }
    v->managed = pointer;
    return (PyObject *)v;
}

PyMethodDef sw_dlpack_methods[] = {
    {"_dlpack_buffer", sw_dlpack_buffer, METH_O,
     PyDoc_STR("_dlpack_buffer(capsule, /)\n--\n\n"
               "Consume a DLPack capsule of a CPU tensor and return an object "
               "exporting it read-only through the buffer protocol (bfloat16 as "
               "its 16-bit patterns, format 'H'); the tensor is released when "
               "that object is.  Used by stride_weave.codecs for arrays numpy "
               "cannot take.")},
    {"_dlpack_dtype", sw_dlpack_dtype, METH_O,
     PyDoc_STR("_dlpack_dtype(capsule, /)\n--\n\n"
               "The (code, bits, lanes) of the DLDataType in a DLPack "
               "capsule named 'dltensor' or 'dltensor_versioned' (major "
               "version 1), read without consuming or renaming it.  "
               "TypeError for anything but a capsule; ValueError for a "
               "capsule of another name, a consumed one, another major "
               "version or an invalid data type.  Used by "
               "stride_weave.interop.dtype_of().")},
    {NULL, NULL, 0, NULL},
};
