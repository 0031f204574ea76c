/* pickle.c: loading pickled descriptors.
 *
 * Owns _reconstruct(name, structure), the permanent module-level function
 * every descriptor's __reduce__ names.  It returns the receiving process's
 * registered identity only when the pickled structure matches the
 * registered one exactly; it treats its arguments as untrusted and never
 * runs code of the objects it was given.
 */
#include "sw_internal.h"

static PyObject *
sw_reconstruct(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    sw_state *st = PyModule_GetState(module);
    PyObject *name, *structure, *exact = NULL, *found = NULL, *diff = NULL;
    sw_descriptor *d;

    if (sw_state_check(st) < 0) {
        return NULL;
    }
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError,
                     "_reconstruct() takes exactly 2 arguments (name, "
                     "structure), got %zd", nargs);
        return NULL;
    }
    name = args[0];
    structure = args[1];
    if (!PyUnicode_Check(name)) {
        PyErr_Format(PyExc_TypeError,
                     "_reconstruct(): name must be a str, got %s",
                     Py_TYPE(name)->tp_name);
        return NULL;
    }
    exact = sw_exact_str(name);
    if (exact == NULL) {
        return NULL;
    }
    if (!PyTuple_Check(structure)) {
        PyErr_Format(PyExc_TypeError,
                     "_reconstruct(): structure of %R must be a tuple, got %s",
                     exact, Py_TYPE(structure)->tp_name);
        goto error;
    }
    found = sw_registry_lookup(&st->registry, exact);
    if (found == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_Format(PyExc_LookupError,
                         "cannot unpickle descriptor %R: no descriptor is "
                         "registered under that name in this process (import "
                         "or register its definition before loading)", exact);
        }
        goto error;
    }
    d = (sw_descriptor *)found;
    diff = sw_structure_diff(d->structure, structure);
    if (diff == NULL) {
        goto error;
    }
    if (diff != Py_None) {
        PyErr_Format(PyExc_ValueError,
                     "cannot unpickle descriptor %R: the pickled structure "
                     "differs from the one registered in this process %U",
                     exact, diff);
        goto error;
    }
    Py_DECREF(diff);
    Py_DECREF(exact);
    return found;

error:
    Py_XDECREF(diff);
    Py_XDECREF(found);
    Py_XDECREF(exact);
    return NULL;
}

PyMethodDef sw_pickle_methods[] = {
    {"_reconstruct", SW_CFUNC(sw_reconstruct), METH_FASTCALL,
     PyDoc_STR("_reconstruct($module, name, structure, /)\n--\n\n"
              "Return the descriptor registered under name if its structure "
              "equals structure exactly.\n\n"
              "This is the pickle entry point of every descriptor; its path, "
              "stride_weave._dtypes._reconstruct, is permanent.  Raises "
              "TypeError for arguments of the wrong type, LookupError for an "
              "unknown name and ValueError naming the first difference when "
              "the structures differ.")},
    {NULL, NULL, 0, NULL},
};
