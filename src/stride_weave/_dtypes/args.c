/* args.c: checking the arguments of the kinds' constructors.
 *
 * Owns what every kind's __init__ does with its arguments before it sets
 * anything: refusing unknown keywords, normalizing the name to an exact
 * str, and checking references to other descriptors (a registered simple
 * dtype, a registered category as supertype).  Each check raises the
 * documented exception naming the function, the argument, what was
 * expected and what was given.
 */
#include "descriptor.h"

/* Refuse keywords outside `allowed` with the message Python gives functions
 * ("got an unexpected keyword argument"). */
int
sw_args_check_kwargs(PyObject *kwds, const char *const *allowed,
                const char *funcname)
{
    PyObject *key, *value;
    Py_ssize_t pos = 0;

    if (kwds == NULL) {
        return 0;
    }
    while (PyDict_Next(kwds, &pos, &key, &value)) {
        const char *const *p;
        int known = 0;

        if (!PyUnicode_Check(key)) {
            PyErr_Format(PyExc_TypeError, "%s: keywords must be strings",
                         funcname);
            return -1;
        }
        for (p = allowed; *p != NULL; p++) {
            if (PyUnicode_CompareWithASCIIString(key, *p) == 0) {
                known = 1;
                break;
            }
        }
        if (!known) {
            if (PyUnicode_CompareWithASCIIString(key, "opaque_storage") == 0) {
                PyErr_Format(PyExc_TypeError,
                             "%s got an unexpected keyword argument "
                             "'opaque_storage' (the opaque-storage "
                             "disposition was removed: categories describe "
                             "hierarchy relationships only)", funcname);
            }
            else {
                PyErr_Format(PyExc_TypeError,
                             "%s got an unexpected keyword argument '%U'",
                             funcname, key);
            }
            return -1;
        }
    }
    return 0;
}

/* Validate a registered-name argument and return it as an exact str (a new
 * reference).  A str subclass is copied without running any of its
 * methods. */
PyObject *
sw_args_name(PyObject *name, const char *funcname)
{
    PyObject *exact;

    if (!PyUnicode_Check(name)) {
        PyErr_Format(PyExc_ValueError,
                     "%s: name must be a non-empty str, got %s",
                     funcname, Py_TYPE(name)->tp_name);
        return NULL;
    }
    if (PyUnicode_GET_LENGTH(name) == 0) {
        PyErr_Format(PyExc_ValueError,
                     "%s: name must be a non-empty str, got ''", funcname);
        return NULL;
    }
    exact = sw_exact_str(name);
    if (exact == NULL) {
        return NULL;
    }
    /* Not interned here: a name is interned only once it is registered
     * (sw_registry_insert), so a refused name is never kept alive. */
    return exact;
}

/* A referenced descriptor must be finished and be the identity registered
 * under its name: else ValueError.  The caller checked its kind. */
int
sw_args_reference(sw_state *st, PyObject *ref, const char *argname,
                   const char *funcname)
{
    sw_descriptor *r = (sw_descriptor *)ref;
    const char *problem;
    PyObject *name;
    int canonical;

    if (SW_LOAD_FLAG(r->build_state) == SW_FINISHED) {
        canonical = sw_registry_is_canonical(&st->registry, r);
        if (canonical < 0) {
            return -1;
        }
        if (canonical) {
            return 0;
        }
        problem = "not the identity registered under its name";
    }
    else if (SW_LOAD_FLAG(r->build_state) == SW_REJECTED) {
        problem = "was rejected during construction";
    }
    else {
        problem = "is unfinished (still under construction)";
    }
    name = sw_descriptor_name_ref(r);   /* another thread may be building it */
    PyErr_Format(PyExc_ValueError,
                 "%s: %s must be a finished, registered descriptor; "
                 "%s %R %s", funcname, argname,
                 sw_type_name(Py_TYPE(ref)), name, problem);
    Py_DECREF(name);
    return -1;
}

/* A registered SimpleDType argument (Level's scale, a block-scaled
 * element): TypeError for anything else, ValueError when unfinished,
 * rejected or not the canonical identity. */
int
sw_args_simple(sw_state *st, PyObject *ref, const char *argname,
                          const char *funcname)
{
    if (!sw_is_kind(st, ref, SW_KIND_SIMPLE)) {
        PyErr_Format(PyExc_TypeError, "%s: %s must be a SimpleDType, got %s",
                     funcname, argname,
                     PyObject_TypeCheck(ref, st->base_type)
                         ? sw_type_name(Py_TYPE(ref)) : Py_TYPE(ref)->tp_name);
        return -1;
    }
    return sw_args_reference(st, ref, argname, funcname);
}

/* supertype: a registered DTypeCategory (or None when allowed). */
int
sw_args_supertype(sw_state *st, PyObject *supertype, int allow_none,
                   const char *funcname)
{
    if (supertype == Py_None && allow_none) {
        return 0;
    }
    if (!sw_is_kind(st, supertype, SW_KIND_CATEGORY)) {
        if (PyObject_TypeCheck(supertype, st->base_type)) {
            /* A descriptor of another kind: its repr is ours, safe to call. */
            PyErr_Format(PyExc_TypeError,
                         "%s: supertype must be a DTypeCategory%s, got %R",
                         funcname, allow_none ? " or None" : "", supertype);
        }
        else {
            PyErr_Format(PyExc_TypeError,
                         "%s: supertype must be a DTypeCategory%s, got %s",
                         funcname, allow_none ? " or None" : "",
                         Py_TYPE(supertype)->tp_name);
        }
        return -1;
    }
    return sw_args_reference(st, supertype, "supertype", funcname);
}

