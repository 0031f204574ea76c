/* miss.c: the LookupError of a name that is not registered.
 *
 * Owns UnknownNameError, the private LookupError subclass a registry miss
 * raises (from_name, the C API's FromName), and its message.  A miss is
 * often expected and caught (`try: DType.from_name(n) except LookupError`),
 * so raising it records only the name and how many descriptors were
 * registered; the message, with its repr of the name and the close
 * registered names it suggests ("did you mean 'Float32'?"), is made the
 * first time anything reads it (args, str, repr, pickling, a traceback)
 * and kept.  The suggestions are chosen among the names that were
 * registered when the miss happened (the registry only grows, so those are
 * the first entries of its registration order), so the message is the one
 * the miss would have had if it had been formatted then.
 *
 * Until it is read, the exception's C-level args are empty: every way
 * Python reads them (the args attribute, __str__, __repr__, __reduce__)
 * formats first.
 */
#include "registry.h"
#include "state.h"

typedef struct {
    PyBaseExceptionObject base;
    PyObject *name;         /* the exact str looked up; NULL once the
                               message is made (or for an instance made
                               from Python, which has its args) */
    Py_ssize_t registered;  /* descriptors registered at the miss */
} sw_miss;

/* The message of a miss on `name` (new reference).  A failure while
 * looking for suggestions (out of memory, difflib unavailable, the graph
 * finalized) drops them, never the message. */
static PyObject *
sw_miss_message(sw_state *st, PyObject *name, Py_ssize_t registered)
{
    PyObject *matches = NULL, *message;
    Py_ssize_t n = 0;

    if (st != NULL && sw_state_check(st) == 0) {
        matches = sw_registry_close_names(st, name, registered);
    }
    if (matches == NULL) {
        PyErr_Clear();
    }
    else {
        n = PyList_GET_SIZE(matches);
    }
    if (n == 1) {
        message = PyUnicode_FromFormat(
            "no descriptor is registered under the name %R; "
            "did you mean %R?", name, PyList_GET_ITEM(matches, 0));
    }
    else if (n == 2) {
        message = PyUnicode_FromFormat(
            "no descriptor is registered under the name %R; "
            "did you mean %R or %R?", name,
            PyList_GET_ITEM(matches, 0), PyList_GET_ITEM(matches, 1));
    }
    else if (n >= 3) {
        message = PyUnicode_FromFormat(
            "no descriptor is registered under the name %R; "
            "did you mean %R, %R or %R?", name,
            PyList_GET_ITEM(matches, 0), PyList_GET_ITEM(matches, 1),
            PyList_GET_ITEM(matches, 2));
    }
    else {
        message = PyUnicode_FromFormat(
            "no descriptor is registered under the name %R", name);
    }
    Py_XDECREF(matches);
    return message;
}

/* Make the message and store it as args (once): 0, or -1 with an
 * exception.  Free-threaded builds: two readers of one exception format
 * it under its critical section, so one message is kept. */
static int
sw_miss_format(PyObject *self)
{
    sw_miss *m = (sw_miss *)self;
    PyObject *name, *message, *args;
    int status = 0;

    Py_BEGIN_CRITICAL_SECTION(self);
    name = m->name;
    if (name != NULL) {
        message = sw_miss_message(sw_state_of_type(Py_TYPE(self)), name,
                                  m->registered);
        args = message ? PyTuple_Pack(1, message) : NULL;
        Py_XDECREF(message);
        if (args == NULL) {
            status = -1;
        }
        else {
            Py_XSETREF(m->base.args, args);
            m->name = NULL;
            Py_DECREF(name);
        }
    }
    Py_END_CRITICAL_SECTION();
    return status;
}

/* Raise the miss of the exact str `name` (always returns NULL). */
static PyObject *
sw_miss_raise(sw_state *st, PyObject *name)
{
    PyTypeObject *tp = st->unknown_name_type;
    PyObject *exc;

    if (tp == NULL) {
        return PyErr_Format(PyExc_LookupError,
                            "no descriptor is registered under the name %R",
                            name);
    }
    exc = tp->tp_new(tp, st->empty_tuple, NULL);
    if (exc == NULL) {
        return NULL;
    }
    ((sw_miss *)exc)->name = Py_NewRef(name);
    ((sw_miss *)exc)->registered = sw_registry_count(&st->registry);
    PyErr_SetObject((PyObject *)tp, exc);
    Py_DECREF(exc);
    return NULL;
}

/* The descriptor registered under the exact str `name` (new reference);
 * NULL with UnknownNameError when there is none, or another error. */
PyObject *
sw_miss_find(sw_state *st, PyObject *name)
{
    PyObject *found = sw_registry_lookup(&st->registry, name);

    if (found == NULL && !PyErr_Occurred()) {
        return sw_miss_raise(st, name);
    }
    return found;
}

/* ---- the exception type --------------------------------------------------- */

/* What BaseException does with these, after the message is made. */

static PyObject *
sw_miss_str(PyObject *self)
{
    if (sw_miss_format(self) < 0) {
        return NULL;
    }
    return ((PyTypeObject *)PyExc_BaseException)->tp_str(self);
}

static PyObject *
sw_miss_repr(PyObject *self)
{
    if (sw_miss_format(self) < 0) {
        return NULL;
    }
    return ((PyTypeObject *)PyExc_BaseException)->tp_repr(self);
}

static PyObject *
sw_miss_reduce(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    sw_state *st = sw_state_of_type(Py_TYPE(self));
    PyObject *reduce, *result;

    if (sw_miss_format(self) < 0) {
        return NULL;
    }
    /* The state's name, or a new one once the state is released (late
     * finalizers at shutdown). */
    reduce = st != NULL && st->idents[SW_IDENT_REDUCE] != NULL
        ? PyObject_GetAttr(PyExc_BaseException, st->idents[SW_IDENT_REDUCE])
        : PyObject_GetAttrString(PyExc_BaseException, "__reduce__");
    if (reduce == NULL) {
        return NULL;
    }
    result = PyObject_CallOneArg(reduce, self);
    Py_DECREF(reduce);
    return result;
}

static PyObject *
sw_miss_get_args(PyObject *self, void *Py_UNUSED(closure))
{
    if (sw_miss_format(self) < 0) {
        return NULL;
    }
    return Py_NewRef(((sw_miss *)self)->base.args);
}

/* As BaseException's setter; the message is not made (it is replaced). */
static int
sw_miss_set_args(PyObject *self, PyObject *value, void *Py_UNUSED(closure))
{
    PyObject *args, *name;

    if (value == NULL) {
        PyErr_SetString(PyExc_TypeError, "args may not be deleted");
        return -1;
    }
    args = PySequence_Tuple(value);
    if (args == NULL) {
        return -1;
    }
    Py_BEGIN_CRITICAL_SECTION(self);
    name = ((sw_miss *)self)->name;
    ((sw_miss *)self)->name = NULL;
    Py_XSETREF(((sw_miss *)self)->base.args, args);
    Py_END_CRITICAL_SECTION();
    Py_XDECREF(name);
    return 0;
}

/* Calling __init__ again sets args (BaseException.__init__): from then
 * on they are what it was given. */
static int
sw_miss_init(PyObject *self, PyObject *args, PyObject *kwds)
{
    PyObject *name;

    Py_BEGIN_CRITICAL_SECTION(self);
    name = ((sw_miss *)self)->name;
    ((sw_miss *)self)->name = NULL;
    Py_END_CRITICAL_SECTION();
    Py_XDECREF(name);
    return ((PyTypeObject *)PyExc_LookupError)->tp_init(self, args, kwds);
}

static int
sw_miss_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    return ((PyTypeObject *)PyExc_LookupError)->tp_traverse(self, visit, arg);
}

static int
sw_miss_clear(PyObject *self)
{
    /* name is a str: it holds nothing that could form a cycle. */
    return ((PyTypeObject *)PyExc_LookupError)->tp_clear(self);
}

static void
sw_miss_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);

    Py_CLEAR(((sw_miss *)self)->name);
    /* BaseException's dealloc untracks, clears and frees the object. */
    ((PyTypeObject *)PyExc_LookupError)->tp_dealloc(self);
    Py_DECREF(tp);
}

static PyGetSetDef sw_miss_getset[] = {
    {"args", sw_miss_get_args, sw_miss_set_args, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef sw_miss_methods[] = {
    {"__reduce__", sw_miss_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot sw_miss_slots[] = {
    {Py_tp_doc, (void *)PyDoc_STR(
        "No descriptor is registered under the name looked up.\n\n"
        "A LookupError subclass, private to stride_weave: catch "
        "LookupError.  The message (args[0], str()) names the missing "
        "name and the close names that were registered when the lookup "
        "failed; it is formatted when first read.")},
    {Py_tp_init, sw_miss_init},
    {Py_tp_str, sw_miss_str},
    {Py_tp_repr, sw_miss_repr},
    {Py_tp_getset, sw_miss_getset},
    {Py_tp_methods, sw_miss_methods},
    {Py_tp_traverse, sw_miss_traverse},
    {Py_tp_clear, sw_miss_clear},
    {Py_tp_dealloc, sw_miss_dealloc},
    {0, NULL},
};

static PyType_Spec sw_miss_spec = {
    .name = "stride_weave._dtypes.UnknownNameError",
    .basicsize = sizeof(sw_miss),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC
             | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = sw_miss_slots,
};

int
sw_miss_create_type(PyObject *module, sw_state *st)
{
    st->unknown_name_type = (PyTypeObject *)PyType_FromModuleAndSpec(
        module, &sw_miss_spec, PyExc_LookupError);
    return st->unknown_name_type != NULL ? 0 : -1;
}
