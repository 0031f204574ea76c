/* compat.h: what every translation unit of stride_weave._dtypes needs
 * first: Python.h, the oldest supported CPython, and the shims that let one
 * source serve 3.11 to 3.15 and the free-threaded build.  Where CPython
 * added a public function that replaces a private or deprecated one, the
 * source calls the public name and this file supplies it to the versions
 * that lack it (docs/platforms.md lists each API and why).
 */
#ifndef SW_COMPAT_H
#define SW_COMPAT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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
#if defined(Py_GIL_DISABLED) && (defined(__GNUC__) || defined(__clang__))
/* The compilers' atomic builtins (the C11 memory model on plain objects),
 * not CPython's _Py_atomic_* functions: those are not part of the
 * documented C API. */
#  define SW_LOAD_FLAG(field) __atomic_load_n(&(field), __ATOMIC_ACQUIRE)
#  define SW_STORE_FLAG(field, value) \
       __atomic_store_n(&(field), (value), __ATOMIC_RELEASE)
/* A per-object pointer (sw_type's bound methods and class checks, a
 * descriptor's numeric record), published once with release ordering and
 * read without a lock. */
#  define SW_LOAD_PTR(field) \
       ((PyObject *)__atomic_load_n(&(field), __ATOMIC_ACQUIRE))
#  define SW_STORE_PTR(field, value) \
       __atomic_store_n(&(field), (value), __ATOMIC_RELEASE)
/* Store `desired` into `field` (a pointer or an integer) if it still
 * holds `expected` (an lvalue, updated to what was found otherwise); 1
 * when stored. */
#  define SW_CAS(field, expected, desired) \
       __atomic_compare_exchange_n(&(field), &(expected), (desired), 0, \
                                   __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)
/* Counters and caches whose entries are whole words: no ordering needed. */
#  define SW_LOAD_RELAXED(field) __atomic_load_n(&(field), __ATOMIC_RELAXED)
#  define SW_STORE_RELAXED(field, value) \
       __atomic_store_n(&(field), (value), __ATOMIC_RELAXED)
#  define SW_ADD_FETCH(field, value) \
       __atomic_add_fetch(&(field), (value), __ATOMIC_SEQ_CST)
#elif defined(Py_GIL_DISABLED)
/* Other compilers: CPython's own atomics.  int (rules) or unsigned char
 * (descriptors); 3.13 has no acquire/release for uint8, so those use the
 * sequentially consistent (stronger) forms. */
#  define SW_LOAD_FLAG(field) _Generic((field), \
       int: _Py_atomic_load_int_acquire((const int *)&(field)), \
       default: _Py_atomic_load_uint8((const uint8_t *)&(field)))
#  define SW_STORE_FLAG(field, value) _Generic((field), \
       int: _Py_atomic_store_int_release((int *)&(field), (int)(value)), \
       default: _Py_atomic_store_uint8((uint8_t *)&(field), (uint8_t)(value)))
#  define SW_LOAD_PTR(field) \
       ((PyObject *)_Py_atomic_load_ptr_acquire((const void *)&(field)))
#  define SW_STORE_PTR(field, value) \
       _Py_atomic_store_ptr_release((void *)&(field), (void *)(value))
#  define SW_CAS(field, expected, desired) _Generic((field), \
       uint32_t: _Py_atomic_compare_exchange_uint32( \
           (uint32_t *)&(field), (uint32_t *)&(expected), (uint32_t)(desired)), \
       default: _Py_atomic_compare_exchange_ptr(&(field), &(expected), (desired)))
#  define SW_LOAD_RELAXED(field) _Generic((field), \
       uint32_t: _Py_atomic_load_uint32_relaxed((const uint32_t *)&(field)), \
       default: _Py_atomic_load_uint64_relaxed((const uint64_t *)&(field)))
#  define SW_STORE_RELAXED(field, value) \
       _Py_atomic_store_uint64_relaxed((uint64_t *)&(field), (uint64_t)(value))
#  define SW_ADD_FETCH(field, value) \
       (_Py_atomic_add_uint32((uint32_t *)&(field), (uint32_t)(value)) + (value))
#else
#  define SW_LOAD_FLAG(field) (field)
#  define SW_STORE_FLAG(field, value) ((void)((field) = (value)))
#  define SW_LOAD_PTR(field) (field)
#  define SW_STORE_PTR(field, value) ((void)((field) = (value)))
#  define SW_CAS(field, expected, desired) \
       ((field) == (expected) ? ((field) = (desired), 1) : ((expected) = (field), 0))
#  define SW_LOAD_RELAXED(field) (field)
#  define SW_STORE_RELAXED(field, value) ((void)((field) = (value)))
#  define SW_ADD_FETCH(field, value) ((field) += (value))
#endif

/* Attributes a descriptor fixes at construction (its name, a simple
 * dtype's bits) are READONLY member slots of its layout where CPython
 * specializes their loads to a read of the slot (LOAD_ATTR_SLOT) also on a
 * type whose attribute lookup falls back to __getattr__, which the model
 * needs to give an unusable descriptor's ValueError when a slot is empty
 * (descriptor.c): CPython 3.12+, free-threaded from 3.14 (3.13t
 * specializes nothing, and there the fallback would slow every attribute
 * load down).  CPython 3.11 specializes no attribute load at all on a
 * type with __getattr__.  Elsewhere they stay getsets.  The member type
 * and flag are spelled with their 3.12 names (structmember.h's
 * T_OBJECT_EX and READONLY before). */
#if PY_VERSION_HEX >= 0x030C0000 \
    && (!defined(Py_GIL_DISABLED) || PY_VERSION_HEX >= 0x030E0000)
#  define SW_FIXED_SLOTS 1
#endif
#if PY_VERSION_HEX < 0x030C0000
#  include <structmember.h>
#  define Py_T_OBJECT_EX T_OBJECT_EX
#  define Py_READONLY READONLY
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

/* Public replacements of private and deprecated functions, supplied to the
 * versions that predate them (as the pythoncapi-compat project does). */
#if PY_VERSION_HEX < 0x030D0000
/* Public since 3.13; _Py_HashPointer is deprecated in 3.14. */
#  define Py_HashPointer(ptr) _Py_HashPointer(ptr)
#endif

#if PY_VERSION_HEX < 0x030E0000
/* Public since 3.14; _PyLong_Sign is deprecated in 3.14. */
static inline int
PyLong_GetSign(PyObject *obj, int *sign)
{
    if (!PyLong_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "expect int, got %s",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    *sign = _PyLong_Sign(obj);
    return 0;
}
#endif

#if PY_VERSION_HEX < 0x030C0000
/* Public since 3.12, replacing PyErr_Fetch/PyErr_NormalizeException/
 * PyErr_Restore (deprecated in 3.12). */
static inline PyObject *
PyErr_GetRaisedException(void)
{
    PyObject *type, *value, *tb;

    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value != NULL && tb != NULL) {
        PyException_SetTraceback(value, tb);
    }
    Py_XDECREF(type);
    Py_XDECREF(tb);
    return value;
}

static inline void
PyErr_SetRaisedException(PyObject *exc)
{
    if (exc == NULL) {
        PyErr_Clear();
        return;
    }
    PyErr_Restore(Py_NewRef(Py_TYPE(exc)), exc, PyException_GetTraceback(exc));
}
#endif

/* The current frame's builtins and globals as new references (NULL, no
 * error, for globals when no Python frame runs).  3.13 deprecated the
 * borrowing PyEval_GetBuiltins/PyEval_GetGlobals for these. */
static inline PyObject *
sw_frame_builtins(void)
{
#if PY_VERSION_HEX >= 0x030D0000
    return PyEval_GetFrameBuiltins();
#else
    return Py_XNewRef(PyEval_GetBuiltins());
#endif
}

static inline PyObject *
sw_frame_globals(void)
{
#if PY_VERSION_HEX >= 0x030D0000
    return PyEval_GetFrameGlobals();
#else
    return Py_XNewRef(PyEval_GetGlobals());
#endif
}

/* A type's name without its module (tp_name after the last dot), as
 * type.__name__ reads for a static type; the same computation as CPython's
 * private _PyType_Name.  Borrowed from the type: valid while it lives. */
static inline const char *
sw_type_name(PyTypeObject *tp)
{
    const char *dot = strrchr(tp->tp_name, '.');

    return dot != NULL ? dot + 1 : tp->tp_name;
}

/* A new reference to `v` (an int or int subclass, bool included) as an
 * exact int.  PyNumber_Index returns an int subclass's value as an exact
 * int without calling its __index__ (CPython 3.10+), so no user code runs;
 * it is the public form of the private _PyLong_Copy. */
static inline PyObject *
sw_exact_int(PyObject *v)
{
    assert(PyLong_Check(v));
    return PyLong_CheckExact(v) ? Py_NewRef(v) : PyNumber_Index(v);
}

/* Free-threaded CPython 3.14+: objects that live as long as the
 * interpreter (registered descriptors) skip reference count updates from
 * the interpreter's own stack, so threads reading the same descriptor do
 * not contend on its reference count.  The object is then freed only by
 * the garbage collector.  A hint: does nothing on other builds. */
static inline void
sw_defer_refcount(PyObject *obj)
{
#if defined(Py_GIL_DISABLED) && PY_VERSION_HEX >= 0x030E0000
    (void)PyUnstable_Object_EnableDeferredRefcount(obj);
#else
    (void)obj;
#endif
}

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
