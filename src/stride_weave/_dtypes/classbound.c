/* classbound.c: the registry's classmethods, from_name and registered.
 *
 * Owns the two functions and _ClassBound, the descriptor that binds them
 * once per class and keeps the bound builtin on the class, so
 * Cls.from_name(...) allocates nothing per call.  DType's namespace holds
 * the two _ClassBound entries; every descriptor class inherits them.
 */
#include "descriptor.h"
#include "meta.h"

static PyObject *
sw_classbound_from_name(PyObject *cls, PyObject *name)
{
    sw_state *st = sw_state_of_type((PyTypeObject *)cls);
    PyObject *exact, *found;

    if (st == NULL || sw_state_check(st) < 0) {
        return NULL;
    }
    if (!PyUnicode_Check(name)) {
        PyErr_Format(PyExc_TypeError,
                     "%s.from_name: name must be a str, got %s",
                     ((PyTypeObject *)cls)->tp_name, Py_TYPE(name)->tp_name);
        return NULL;
    }
    exact = sw_exact_str(name);
    if (exact == NULL) {
        return NULL;
    }
    found = sw_miss_find(st, exact);
    if (found == NULL) {
        Py_DECREF(exact);
        return NULL;
    }
    if (!PyObject_TypeCheck(found, (PyTypeObject *)cls)) {
        PyErr_Format(PyExc_LookupError,
                     "%s.from_name(%R): the name is registered to %R, which "
                     "is not a %s", sw_type_name((PyTypeObject *)cls), exact,
                     found, sw_type_name((PyTypeObject *)cls));
        Py_DECREF(found);
        Py_DECREF(exact);
        return NULL;
    }
    Py_DECREF(exact);
    return found;
}

static PyObject *
sw_classbound_registered(PyObject *cls, PyObject *Py_UNUSED(ignored))
{
    sw_state *st = sw_state_of_type((PyTypeObject *)cls);

    if (st == NULL) {
        return NULL;
    }
    return sw_registry_snapshot(&st->registry, (PyTypeObject *)cls);
}

/* registered() as a bound builtin: METH_FASTCALL, because CPython 3.11
 * specializes calls of fastcall builtins but not of METH_NOARGS ones. */
static PyObject *
sw_classbound_registered_fast(PyObject *cls, PyObject *const *Py_UNUSED(args),
                   Py_ssize_t nargs)
{
    if (nargs != 0) {
        PyErr_Format(PyExc_TypeError,
                     "registered() takes no arguments (%zd given)", nargs);
        return NULL;
    }
    return sw_classbound_registered(cls, NULL);
}

/* from_name and registered as plain functions of the class, bound per
 * class by _ClassBound below. */
static PyMethodDef sw_classbound_methods[] = {
    {"from_name", sw_classbound_from_name, METH_O,
     PyDoc_STR("from_name($cls, name, /)\n--\n\n"
               "Return the descriptor registered under name.\n\n"
               "Called on a subclass, the descriptor must also be an "
               "instance of it.  Raises TypeError for a non-str name and "
               "LookupError for an unknown name or a kind mismatch.")},
    {"registered", SW_CFUNC(sw_classbound_registered_fast), METH_FASTCALL,
     PyDoc_STR("registered($cls, /)\n--\n\n"
               "Return an immutable tuple snapshot of the registered "
               "descriptors that are instances of this class, in "
               "registration order.")},
    {NULL, NULL, 0, NULL},
};

/* _ClassBound: a classmethod whose bound form is made once per class and
 * kept on the class (sw_type.bound), so Cls.from_name(...) calls a
 * builtin without allocating a bound method each time.  It lives in
 * DType's namespace only: user classes get no entries of their own. */
typedef struct {
    PyObject_HEAD
    int index;              /* into sw_classbound_methods and sw_type.bound */
} sw_classbound;

static PyObject *
sw_classbound_get(PyObject *self, PyObject *obj, PyObject *type)
{
    int index = ((sw_classbound *)self)->index;
    PyMethodDef *def = &sw_classbound_methods[index];
    PyObject *cls = type != NULL && type != Py_None ? type
                    : obj != NULL && obj != Py_None ? (PyObject *)Py_TYPE(obj)
                    : NULL;
    PyObject *bound;

    if (cls == NULL || !PyType_Check(cls)
        || !sw_meta_is_descriptor_class((PyTypeObject *)cls)) {
        PyErr_Format(PyExc_TypeError,
                     "%s() must be bound to a descriptor class, got %s",
                     def->ml_name, cls ? Py_TYPE(cls)->tp_name : "nothing");
        return NULL;
    }
    Py_BEGIN_CRITICAL_SECTION(cls);
    bound = ((sw_type *)cls)->bound[index];
    if (bound == NULL) {
        bound = PyCFunction_NewEx(def, cls, NULL);
        /* The class keeps it; sw_classbound_cached (meta.h) reads it
         * without the lock. */
        SW_STORE_PTR(((sw_type *)cls)->bound[index], bound);
    }
    Py_XINCREF(bound);
    Py_END_CRITICAL_SECTION();
    return bound;
}

static PyObject *
sw_classbound_getdoc(PyObject *self, void *Py_UNUSED(closure))
{
    return PyUnicode_FromString(
        sw_classbound_methods[((sw_classbound *)self)->index].ml_doc);
}

static PyObject *
sw_classbound_getname(PyObject *self, void *Py_UNUSED(closure))
{
    return PyUnicode_FromString(
        sw_classbound_methods[((sw_classbound *)self)->index].ml_name);
}

static PyGetSetDef sw_classbound_getset[] = {
    {"__doc__", sw_classbound_getdoc, NULL, NULL, NULL},
    {"__name__", sw_classbound_getname, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static void
sw_classbound_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);

    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyType_Slot sw_classbound_slots[] = {
    {Py_tp_doc, (void *)PyDoc_STR(
        "A classmethod of the descriptor model (from_name, registered).")},
    {Py_tp_descr_get, sw_classbound_get},
    {Py_tp_getset, sw_classbound_getset},
    {Py_tp_dealloc, sw_classbound_dealloc},
    {0, NULL},
};

static PyType_Spec sw_classbound_spec = {
    .name = "stride_weave._dtypes._ClassBound",
    .basicsize = sizeof(sw_classbound),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE
             | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = sw_classbound_slots,
};

PyObject *
sw_classbound_create_type(PyObject *module)
{
    return PyType_FromModuleAndSpec(module, &sw_classbound_spec, NULL);
}

static PyObject *
sw_classbound_new(sw_state *st, int index)
{
    sw_classbound *self = PyObject_New(sw_classbound, st->class_bound_type);

    if (self == NULL) {
        return NULL;
    }
    self->index = index;
    return (PyObject *)self;
}

/* Put from_name and registered into DType's namespace. */
int
sw_classbound_fill_namespace(sw_state *st, PyObject *ns)
{
    int i;

    for (i = 0; sw_classbound_methods[i].ml_name != NULL; i++) {
        PyObject *entry = sw_classbound_new(st, i);
        if (entry == NULL
            || PyDict_SetItemString(ns, sw_classbound_methods[i].ml_name,
                                    entry) < 0) {
            Py_XDECREF(entry);
            return -1;
        }
        Py_DECREF(entry);
    }
    return 0;
}
