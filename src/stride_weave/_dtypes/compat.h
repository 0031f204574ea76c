/* compat.h: what every translation unit of stride_weave._dtypes needs
 * first: Python.h, the oldest supported CPython, and the shims that let one
 * source serve 3.11 to 3.13 and the free-threaded build.
 */
#ifndef SW_COMPAT_H
#define SW_COMPAT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#if PY_VERSION_HEX < 0x030B0000
#  error "stride_weave requires CPython 3.11 or newer"
#endif

#if PY_VERSION_HEX >= 0x030D0000
#  define SW_HAVE_PYMUTEX 1
#endif

/* Free-threaded CPython (3.13t+, Py_GIL_DISABLED).  A per-object critical
 * section guards what several threads may touch on one object: the user
 * attributes of a descriptor or rule under construction and its sealing
 * (attrs.c, registry.c, rule.c).  GIL builds (and 3.11/3.12, which have no
 * critical sections) get a plain block.  The lifecycle flags
 * (build_state, initialized) are written with release and read with
 * acquire ordering, so a thread that sees a descriptor finished (or
 * initialized) also sees every field written before. */
#if PY_VERSION_HEX < 0x030D0000
#  define Py_BEGIN_CRITICAL_SECTION(op) { (void)(op);
#  define Py_END_CRITICAL_SECTION() }
#endif
#ifdef Py_GIL_DISABLED
/* int (rules) or unsigned char (descriptors); 3.13 has no acquire/release
 * for uint8, so those use the sequentially consistent (stronger) forms. */
#  define SW_LOAD_FLAG(field) _Generic((field), \
       int: _Py_atomic_load_int_acquire((const int *)&(field)), \
       default: _Py_atomic_load_uint8((const uint8_t *)&(field)))
#  define SW_STORE_FLAG(field, value) _Generic((field), \
       int: _Py_atomic_store_int_release((int *)&(field), (int)(value)), \
       default: _Py_atomic_store_uint8((uint8_t *)&(field), (uint8_t)(value)))
/* A per-class cached object (sw_type's bound methods and class checks),
 * published once with release ordering and read without a lock. */
#  define SW_LOAD_PTR(field) \
       ((PyObject *)_Py_atomic_load_ptr_acquire((const void *)&(field)))
#  define SW_STORE_PTR(field, value) \
       _Py_atomic_store_ptr_release((void *)&(field), (void *)(value))
#else
#  define SW_LOAD_FLAG(field) (field)
#  define SW_STORE_FLAG(field, value) ((void)((field) = (value)))
#  define SW_LOAD_PTR(field) (field)
#  define SW_STORE_PTR(field, value) ((void)((field) = (value)))
#endif

/* Dict lookups that report errors and return strong references (3.13+;
 * the same functions for 3.11/3.12).  PyDict_GetItem and
 * PyDict_GetItemString swallow every error of the lookup, even a
 * MemoryError from making the key: "absent" could mean "failed".  Both
 * return 1 (found, *result a new reference), 0 (absent, *result NULL) or
 * -1 with an exception (*result NULL). */
#if PY_VERSION_HEX < 0x030D0000
static inline int
PyDict_GetItemRef(PyObject *mp, PyObject *key, PyObject **result)
{
    /* Borrowed for no longer than the incref: nothing runs in between. */
    PyObject *item = PyDict_GetItemWithError(mp, key);

    if (item != NULL) {
        *result = Py_NewRef(item);
        return 1;
    }
    *result = NULL;
    return PyErr_Occurred() ? -1 : 0;
}

static inline int
PyDict_GetItemStringRef(PyObject *mp, const char *key, PyObject **result)
{
    PyObject *key_obj = PyUnicode_FromString(key);
    int status;

    if (key_obj == NULL) {
        *result = NULL;
        return -1;
    }
    status = PyDict_GetItemRef(mp, key_obj, result);
    Py_DECREF(key_obj);
    return status;
}
#endif

/* Cast a function with another PyCFunction signature to PyCFunction
 * without -Wcast-function-type complaining (as CPython's _PyCFunction_CAST). */
#define SW_CFUNC(func) ((PyCFunction)(void (*)(void))(func))

/* A new reference to `s` (a str) as an exact str: a subclass is copied
 * without running its methods, so hashing and comparing run no user code. */
static inline PyObject *
sw_exact_str(PyObject *s)
{
    return PyUnicode_CheckExact(s) ? Py_NewRef(s) : PyUnicode_FromObject(s);
}

#endif /* SW_COMPAT_H */
