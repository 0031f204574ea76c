/* dlpack.c: the data type of a DLPack capsule, read without any library.
 *
 * Owns _dlpack_dtype(capsule), which stride_weave.interop.dtype_of() calls
 * for a capsule (an array's __dlpack__() result): it returns the
 * (code, bits, lanes) of the capsule's DLDataType.  The structs below
 * mirror the DLPack 1.x ABI (the layout the standard fixes; only the
 * fields up to the data type are read).  The capsule is only looked at:
 * it is neither consumed nor renamed, so its producer's destructor still
 * frees the tensor, and a consumer can still take it afterwards.
 *
 * A capsule is made by C code; Python code cannot forge one without
 * ctypes, which is outside what the package defends against.  What it
 * can do (hand over any object, a capsule of another kind, a consumed
 * capsule) is refused here with TypeError or ValueError.
 */
#include "dlpack.h"

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
 * capsule of another kind (its name shown as bytes: it is any C string). */
static int
sw_dlpack_kind(PyObject *capsule, int *versioned)
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
                     "_dlpack_dtype: capsule must be %s, got a capsule "
                     "without a name", sw_dlpack_expected);
        return -1;
    }
    shown = PyBytes_FromString(name);
    if (shown == NULL) {
        return -1;
    }
    if (strncmp(name, SW_DLPACK_USED_PREFIX, strlen(SW_DLPACK_USED_PREFIX)) == 0) {
        PyErr_Format(PyExc_ValueError,
                     "_dlpack_dtype: the capsule was consumed already (its "
                     "name is %R): read its dtype before a consumer takes it",
                     shown);
    }
    else {
        PyErr_Format(PyExc_ValueError,
                     "_dlpack_dtype: capsule must be %s, got a capsule named %R",
                     sw_dlpack_expected, shown);
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
    if (sw_dlpack_kind(capsule, &versioned) < 0) {
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

PyMethodDef sw_dlpack_methods[] = {
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
