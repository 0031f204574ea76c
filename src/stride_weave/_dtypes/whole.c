/* whole.c: WholeExtent and its one instance, Whole.
 *
 * Whole is the permitted structure value meaning "the entire level below"
 * (a block or extent that covers everything).  WholeExtent() always returns
 * the singleton; copying, deep-copying and unpickling return it too.
 */
#include "level.h"

static PyObject *
sw_whole_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    sw_state *st = sw_state_of_type(type);

    if (st == NULL) {
        return NULL;
    }
    if (PyTuple_GET_SIZE(args) != 0 || (kwds && PyDict_GET_SIZE(kwds) != 0)) {
        PyErr_SetString(PyExc_TypeError, "WholeExtent() takes no arguments");
        return NULL;
    }
    if (st->whole != NULL) {
        return Py_NewRef(st->whole);
    }
    /* First call, from module init: make the singleton. */
    return type->tp_alloc(type, 0);
}

static PyObject *
sw_whole_repr(PyObject *Py_UNUSED(self))
{
    return PyUnicode_FromString("Whole");
}

static PyObject *
sw_whole_reduce(PyObject *Py_UNUSED(self), PyObject *Py_UNUSED(ignored))
{
    /* Pickled as the global stride_weave._dtypes.Whole. */
    return PyUnicode_FromString("Whole");
}

static PyObject *
sw_whole_copy(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    return Py_NewRef(self);
}

static int
sw_whole_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    return 0;
}

static void
sw_whole_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);

    PyObject_GC_UnTrack(self);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyMethodDef sw_whole_methods[] = {
    {"__reduce__", sw_whole_reduce, METH_NOARGS,
     PyDoc_STR("__reduce__($self, /)\n--\n\nPickle as the global Whole.")},
    {"__copy__", sw_whole_copy, METH_NOARGS,
     PyDoc_STR("__copy__($self, /)\n--\n\nReturn Whole.")},
    {"__deepcopy__", sw_whole_copy, METH_O,
     PyDoc_STR("__deepcopy__($self, memo, /)\n--\n\nReturn Whole.")},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot sw_whole_slots[] = {
    {Py_tp_doc, (void *)PyDoc_STR(
        "WholeExtent()\n--\n\n"
        "The type of Whole, the extent that covers an entire level.  "
        "Calling it returns the one instance, Whole.")},
    {Py_tp_new, sw_whole_new},
    {Py_tp_repr, sw_whole_repr},
    {Py_tp_methods, sw_whole_methods},
    {Py_tp_traverse, sw_whole_traverse},
    {Py_tp_dealloc, sw_whole_dealloc},
    {0, NULL},
};

static PyType_Spec sw_whole_spec = {
    .name = "stride_weave._dtypes.WholeExtent",
    .basicsize = sizeof(PyObject),
    .itemsize = 0,
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = sw_whole_slots,
};

int
sw_whole_create(PyObject *module, sw_state *st)
{
    st->whole_type = (PyTypeObject *)PyType_FromModuleAndSpec(
        module, &sw_whole_spec, NULL);
    if (st->whole_type == NULL) {
        return -1;
    }
    st->whole = PyObject_CallNoArgs((PyObject *)st->whole_type);
    return st->whole ? 0 : -1;
}
