/* swcheck: a small C extension that uses the stride_weave C API.
 *
 * Build:  python setup.py build_ext --inplace   (setup.py is beside this file)
 * Use:    import swcheck; swcheck.plane_bits(DType.MXFP4) == (4, 8)
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stride_weave/dtypes.h>

/* plane_bits(dtype) -> tuple[int, ...]: the width in bits of each plane
 * the dtype is stored in: (bits,) for a simple dtype, one width per plane
 * for a compound dtype (block-scaled: the element, then each scale). */
static PyObject *
plane_bits(PyObject *module, PyObject *dtype)
{
    PyObject *result, *plane, *width;
    Py_ssize_t i, n, bits;

    (void)module;
    switch (SW_DType_Kind(dtype)) {    /* never fails */
    case SW_DTYPE_KIND_SIMPLE:
        bits = SW_DType_Bits(dtype);
        return bits < 0 ? NULL : Py_BuildValue("(n)", bits);
    case SW_DTYPE_KIND_COMPOUND:
    case SW_DTYPE_KIND_BLOCK_SCALED:
        n = SW_DType_NumPlanes(dtype);
        result = n < 0 ? NULL : PyTuple_New(n);
        for (i = 0; result != NULL && i < n; i++) {
            plane = SW_DType_Plane(dtype, i);   /* new reference */
            bits = plane == NULL ? -1 : SW_DType_Bits(plane);
            Py_XDECREF(plane);
            width = bits < 0 ? NULL : PyLong_FromSsize_t(bits);
            if (width == NULL) {
                Py_CLEAR(result);
                break;
            }
            PyTuple_SET_ITEM(result, i, width);
        }
        return result;
    default:
        PyErr_Format(PyExc_TypeError,
                     "plane_bits: expected a simple or compound dtype, got %R",
                     dtype);
        return NULL;
    }
}

/* The check a kernel makes before dispatching: a registered simple dtype
 * under Floating, 8 bits wide or narrower.  1, 0, or -1 with an error. */
static int
narrow_float(PyObject *obj)
{
    Py_ssize_t bits;

    if (SW_DType_Kind(obj) != SW_DTYPE_KIND_SIMPLE) {
        return 0;
    }
    bits = SW_DType_Bits(obj);
    if (bits < 0) {
        return -1;
    }
    if (bits > 8) {
        return 0;
    }
    return SW_DType_IsSubtype(obj, SW_DTypesAPI->Floating);
}

/* is_narrow_float(obj) -> bool */
static PyObject *
is_narrow_float(PyObject *module, PyObject *obj)
{
    int result = narrow_float(obj);

    (void)module;
    return result < 0 ? NULL : PyBool_FromLong(result);
}

/* count_narrow_floats(iterable) -> int: the same check over many objects. */
static PyObject *
count_narrow_floats(PyObject *module, PyObject *iterable)
{
    PyObject *it, *item;
    Py_ssize_t count = 0;

    (void)module;
    it = PyObject_GetIter(iterable);
    if (it == NULL) {
        return NULL;
    }
    while ((item = PyIter_Next(it)) != NULL) {
        int result = narrow_float(item);
        Py_DECREF(item);
        if (result < 0) {
            Py_DECREF(it);
            return NULL;
        }
        count += result;
    }
    Py_DECREF(it);
    if (PyErr_Occurred()) {
        return NULL;
    }
    return PyLong_FromSsize_t(count);
}

/* describe(dtype) -> str: "Float32: 32 bits", "Floating: category",
 * "MXFP4: E2M1 x E8M0/32", "NVFP4: E2M1 x E4M3/16 x Float32/whole",
 * "NVFP4_16x16: E2M1 x E4M3/16x16 x Float32/whole". */
static PyObject *
describe(PyObject *module, PyObject *dtype)
{
    PyObject *name, *element = NULL, *scale = NULL, *text = NULL, *more;
    const char *utf8;
    Py_ssize_t i, n, ndim, shape[2];

    (void)module;
    name = SW_DType_Name(dtype);   /* new reference */
    if (name == NULL) {
        return NULL;               /* TypeError: not a registered descriptor */
    }
    switch (SW_DType_Kind(dtype)) {   /* registered: one of the four */
    case SW_DTYPE_KIND_CATEGORY:
        text = PyUnicode_FromFormat("%U: category", name);
        break;
    case SW_DTYPE_KIND_SIMPLE:
        n = SW_DType_Bits(dtype);
        if (n >= 0) {
            text = PyUnicode_FromFormat("%U: %zd bits", name, n);
        }
        break;
    case SW_DTYPE_KIND_COMPOUND:
        n = SW_DType_NumPlanes(dtype);
        if (n >= 0) {
            text = PyUnicode_FromFormat("%U: %zd planes", name, n);
        }
        break;
    case SW_DTYPE_KIND_BLOCK_SCALED:
        element = SW_DType_Element(dtype);     /* new reference */
        if (element == NULL || (utf8 = SW_DType_NameUTF8(element)) == NULL) {
            goto error;
        }
        text = PyUnicode_FromFormat("%U: %s", name, utf8);
        n = SW_DType_NumLevels(dtype);
        for (i = 0; i < n && text != NULL; i++) {   /* innermost first */
            scale = SW_DType_LevelScale(dtype, i);  /* new reference */
            /* the block as a shape: 0 dimensions for Whole, 1 for an int
             * block, 2 or more for an N-D one (its first 2 extents kept) */
            ndim = SW_DType_LevelBlockShape(dtype, i, shape, 2);
            if (scale == NULL || ndim < 0
                || (utf8 = SW_DType_NameUTF8(scale)) == NULL) {
                goto error;
            }
            if (ndim == 0) {
                more = PyUnicode_FromFormat("%U x %s/whole", text, utf8);
            }
            else if (ndim == 1) {
                more = PyUnicode_FromFormat("%U x %s/%zd", text, utf8, shape[0]);
            }
            else {
                more = PyUnicode_FromFormat("%U x %s/%zdx%zd%s", text, utf8,
                                            shape[0], shape[1],
                                            ndim > 2 ? "x..." : "");
            }
            Py_SETREF(text, more);
            Py_CLEAR(scale);
        }
        if (n < 0) {
            goto error;
        }
        break;
    }
    Py_XDECREF(element);
    Py_DECREF(name);
    return text;

error:
    Py_XDECREF(scale);
    Py_XDECREF(element);
    Py_XDECREF(text);
    Py_DECREF(name);
    return NULL;
}

/* common_dtype(a, b) -> DType or None: the dtype to compute a and b in
 * (their promotion), or None when they have none, so the caller chooses a
 * cast.  "No join" is an answer, not an error: TryPromoteTypes reports it
 * as 0 with no exception set, and -1 only for a bad argument. */
static PyObject *
common_dtype(PyObject *module, PyObject *args)
{
    PyObject *a, *b, *join;

    (void)module;
    if (!PyArg_ParseTuple(args, "OO:common_dtype", &a, &b)) {
        return NULL;
    }
    switch (SW_DType_TryPromoteTypes(a, b, &join)) {
    case 1:
        return join;                /* new reference */
    case 0:
        Py_RETURN_NONE;             /* no join; no exception is set */
    default:
        return NULL;                /* TypeError: not a registered dtype */
    }
}

/* find_dtype(name) -> DType or None: None when no dtype is registered
 * under name.  Only that error is expected, so only that error is
 * cleared, told apart by its type; any other (name not a str, an
 * interpreter shutting down) propagates. */
static PyObject *
find_dtype(PyObject *module, PyObject *name)
{
    PyObject *dtype;

    (void)module;
    dtype = SW_DType_FromNameObject(name);     /* new reference */
    if (dtype == NULL
        && PyErr_ExceptionMatches(SW_DTypesAPI->UnknownNameError)) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    return dtype;
}

static PyMethodDef swcheck_methods[] = {
    {"plane_bits", plane_bits, METH_O,
     "plane_bits(dtype) -> tuple: the width in bits of each plane."},
    {"is_narrow_float", is_narrow_float, METH_O,
     "is_narrow_float(obj) -> bool: a floating simple dtype of <= 8 bits."},
    {"count_narrow_floats", count_narrow_floats, METH_O,
     "count_narrow_floats(iterable) -> int: how many items are."},
    {"describe", describe, METH_O,
     "describe(dtype) -> str: name and kind, or a block-scaled layout."},
    {"common_dtype", common_dtype, METH_VARARGS,
     "common_dtype(a, b) -> DType or None: their promotion, if any."},
    {"find_dtype", find_dtype, METH_O,
     "find_dtype(name) -> DType or None: the dtype of that name, if any."},
    {NULL, NULL, 0, NULL},
};

static int
swcheck_exec(PyObject *module)
{
    (void)module;
    return SW_DTypes_Import();   /* 0, or -1 with ImportError set */
}

static PyModuleDef_Slot swcheck_slots[] = {
    {Py_mod_exec, swcheck_exec},
#if PY_VERSION_HEX >= 0x030C0000
    /* SW_DTypesAPI is one static pointer: one interpreter only. */
    {Py_mod_multiple_interpreters, Py_MOD_MULTIPLE_INTERPRETERS_NOT_SUPPORTED},
#endif
#ifdef Py_GIL_DISABLED
    /* Free-threaded CPython: without this slot, importing swcheck turns the
     * GIL back on for the whole process. Declare it only when the module's
     * own C code is safe without the GIL: here it keeps no mutable state,
     * and the stride_weave functions it calls are. */
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
    {0, NULL},
};

static PyModuleDef swcheck_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "swcheck",
    .m_doc = "A small consumer of the stride_weave C API.",
    .m_size = 0,
    .m_methods = swcheck_methods,
    .m_slots = swcheck_slots,
};

PyMODINIT_FUNC
PyInit_swcheck(void)
{
    return PyModuleDef_Init(&swcheck_module);
}
