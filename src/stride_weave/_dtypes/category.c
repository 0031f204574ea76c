/* category.c: DTypeCategory, the relationship-only descriptor kind.
 *
 * Owns the category constructor (name, *, supertype=None) and its contract
 * structure, which records the hierarchy and nothing else: there is no
 * storage disposition (the old opaque_storage keyword is refused).
 */
#include "sw_internal.h"

#define SW_CATEGORY_INIT "DTypeCategory.__init__()"

static PyObject *
sw_category_init(PyObject *self, PyObject *args, PyObject *kwds)
{
    static const char *const allowed[] = {"name", "supertype", NULL};
    static char *kwlist[] = {"name", "supertype", NULL};
    sw_descriptor *d = (sw_descriptor *)self;
    sw_state *st = ((sw_type *)Py_TYPE(self))->state;
    PyObject *name = NULL, *supertype = Py_None, *exact;

    if (sw_descriptor_begin_init(d, SW_KIND_CATEGORY, SW_CATEGORY_INIT) < 0
        || sw_check_kwargs(kwds, allowed, SW_CATEGORY_INIT) < 0
        || !PyArg_ParseTupleAndKeywords(args, kwds, "O|$O:DTypeCategory.__init__",
                                        kwlist, &name, &supertype)) {
        return NULL;
    }
    exact = sw_normalize_name(name, SW_CATEGORY_INIT);
    if (exact == NULL) {
        return NULL;
    }
    if (sw_check_supertype(st, supertype, 1, SW_CATEGORY_INIT) < 0
        || sw_descriptor_set_common(st, d, exact, supertype) < 0) {
        Py_DECREF(exact);
        return NULL;
    }
    Py_DECREF(exact);
    d->initialized = 1;
    Py_RETURN_NONE;
}

/* ("DTypeCategory", ("supertype", <ref> | "none")) */
PyObject *
sw_category_contract(sw_state *Py_UNUSED(st), sw_descriptor *d)
{
    PyObject *ref, *field, *result;

    ref = d->supertype ? sw_structure_ref((sw_descriptor *)d->supertype)
                       : PyUnicode_FromString("none");
    if (ref == NULL) {
        return NULL;
    }
    field = sw_structure_field("supertype", ref);
    Py_DECREF(ref);
    if (field == NULL) {
        return NULL;
    }
    result = Py_BuildValue("(sN)", "DTypeCategory", field);
    return result;
}

static PyMethodDef sw_category_init_def = {
    "__init__", SW_CFUNC(sw_category_init), METH_VARARGS | METH_KEYWORDS,
    PyDoc_STR("__init__($self, name, *, supertype=None)\n--\n\n"
              "Initialize a category registered under name.\n\n"
              "supertype is the enclosing registered DTypeCategory, or None "
              "for a root category."),
};

int
sw_category_fill_namespace(sw_state *st, PyObject *ns)
{
    PyObject *init = PyDescr_NewMethod(st->base_type, &sw_category_init_def);
    PyObject *doc = PyUnicode_FromString(
        "DTypeCategory(name, *, supertype=None)\n\n"
        "A category: a relationship identity that places dtypes in a "
        "supertype hierarchy.  It defines no scalar encoding and no physical "
        "representation.  DType.Any is the root; DType.Floating and "
        "DType.Integer are beneath it.");
    int status = -1;

    if (init != NULL && doc != NULL
        && PyDict_SetItemString(ns, "__init__", init) == 0
        && PyDict_SetItemString(ns, "__doc__", doc) == 0) {
        status = 0;
    }
    Py_XDECREF(init);
    Py_XDECREF(doc);
    return status;
}
