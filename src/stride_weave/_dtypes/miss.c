/* miss.c: the LookupError of a name that is not registered.
 *
 * Owns UnknownNameError (public as stride_weave.dtypes.UnknownNameError),
 * the LookupError subclass a registry miss raises (from_name, the C API's FromName), and its message.  A miss is
 * often expected and caught (`try: DType.from_name(n) except LookupError`),
 * so raising it records only the name and how many descriptors were
 * registered; the message, with its repr of the name and the close
 * registered names it suggests ("did you mean 'Float32'?"), is made the
 * first time anything reads it (args, str, repr, pickling, a traceback)
 * and kept.  The suggestions are chosen among the names that were
 * registered when the miss happened (the registry only grows, so those are
 * the first entries of its registration order), so the message is the one
 * the miss would have had if it had been formatted then.  Choosing them
 * runs no Python code (suggest.c).  Only the advice to import the formats
 * pack reads the registry as it is when the message is made: it is given
 * while none of the pack's names is registered, since once another module
 * holds one the pack's import can only fail.
 *
 * Until it is read, the exception's args are empty: every way Python
 * reads them (the args attribute, __str__, __repr__, __reduce__) formats
 * first, and all of them, with the ways to replace them (the args setter,
 * __init__), are this file's own, so each takes and replaces the args
 * under the exception's critical section and holds what it reads.
 *
 * Making the message can still run Python code (a garbage collection
 * started by an allocation runs finalizers and gc callbacks, which may
 * read the same miss or replace its args), and on a free-threaded build
 * other threads read it at the same time.  So the message is made from a
 * strong reference to the name, outside any lock, and published only if
 * the miss is still unformatted and its args untouched (re-checked under
 * the critical section): the first to publish wins, a later result is
 * dropped, args that Python code stored meanwhile are kept, and every
 * reference is released once, after the exception is consistent again.
 */
#include "descriptor.h"
#include "registry.h"
#include "state.h"

typedef struct {
    PyBaseExceptionObject base;
    PyObject *name;         /* the exact str looked up, while the message
                               is not made; NULL once it is made or the
                               args were replaced (and for an instance made
                               from Python, which has its args).  Goes from
                               a name to NULL only, under the critical
                               section; read alone with SW_LOAD_PTR. */
    Py_ssize_t registered;  /* descriptors registered at the miss */
} sw_miss;

/* The names the formats pack registers when it is imported, in its
 * order (categories first).  The pack's own table is
 * stride_weave._packs.PACKS; a test checks that the two agree.  Kept here
 * as C data because a miss's message is made without running Python code. */
#define SW_MISS_PACK_MODULE "stride_weave.formats"
static const char *const sw_miss_pack_names[] = {
    "Complex", "Float16", "BFloat16", "E4M3FNUZ", "E5M2FNUZ", "Int16",
    "Int64", "Int4", "UInt8", "UInt16", "UInt32", "UInt64", "UInt4",
    "Complex64", "Complex128", "NVFP4_16x16", "MXFP8_E4M3_32x32",
    "FP8_E4M3_128x128", "FP8_E4M3_1x128", NULL,
};

/* 1 when `name` (exact str) is one of the pack's names, else 0. */
static int
sw_miss_in_pack(sw_state *st, PyObject *name)
{
    Py_ssize_t i;

    for (i = 0; st->pack_names != NULL && i < PyTuple_GET_SIZE(st->pack_names); i++) {
        if (PyUnicode_Compare(name, PyTuple_GET_ITEM(st->pack_names, i)) == 0) {
            return 1;
        }
    }
    return 0;
}

/* 1 when `found` (a registered descriptor) is the pack's own: an instance
 * of the exact model class, defined in the pack's module.  The pack adopts
 * those on a later import (its own earlier attempt, stopped half-way), so
 * they block nothing.  Reads fields set before registration: no code runs. */
static int
sw_miss_is_packs_own(sw_state *st, PyObject *found)
{
    PyObject *module = ((sw_descriptor *)found)->module;

    return (Py_IS_TYPE(found, st->kind_types[SW_KIND_CATEGORY])
            || Py_IS_TYPE(found, st->kind_types[SW_KIND_SIMPLE])
            || Py_IS_TYPE(found, st->kind_types[SW_KIND_BLOCK_SCALED]))
           && module != NULL
           && PyUnicode_CompareWithASCIIString(module, SW_MISS_PACK_MODULE) == 0;
}

/* The first of the pack's names that another module registered (borrowed:
 * the pack's tuple holds it), NULL when none is; -1 in *error with an
 * exception.  The pack registers its names or adopts its own earlier ones,
 * so a name another module holds makes importing it fail. */
static PyObject *
sw_miss_pack_blocker(sw_state *st, int *error)
{
    Py_ssize_t i;

    *error = 0;
    for (i = 0; st->pack_names != NULL && i < PyTuple_GET_SIZE(st->pack_names); i++) {
        PyObject *pack_name = PyTuple_GET_ITEM(st->pack_names, i);
        PyObject *found = sw_registry_lookup(&st->registry, pack_name);
        int ours;

        if (found == NULL) {
            if (PyErr_Occurred()) {
                *error = -1;
                return NULL;
            }
            continue;
        }
        ours = sw_miss_is_packs_own(st, found);
        Py_DECREF(found);       /* the registry holds it: no code runs */
        if (!ours) {
            return pack_name;
        }
    }
    return NULL;
}

/* The hint after the suggestions near[0..n): which of them (none, one or
 * more) are not registered but would be by importing the formats pack.
 * New reference ("" for none), or NULL with an exception. */
static PyObject *
sw_miss_pack_hint(sw_state *st, PyObject **near, Py_ssize_t n)
{
    PyObject *from_pack[SW_SUGGEST_COUNT];
    Py_ssize_t i, k = 0;

    for (i = 0; i < n; i++) {
        int registered = sw_registry_contains(&st->registry, near[i]);

        if (registered < 0) {
            return NULL;
        }
        if (!registered && sw_miss_in_pack(st, near[i])) {
            from_pack[k++] = near[i];
        }
    }
    switch (k) {
    case 0:
        return PyUnicode_FromString("");
    case 1:
        return PyUnicode_FromFormat(" (import " SW_MISS_PACK_MODULE
                                    " registers %R)", from_pack[0]);
    case 2:
        return PyUnicode_FromFormat(" (import " SW_MISS_PACK_MODULE
                                    " registers %R and %R)",
                                    from_pack[0], from_pack[1]);
    default:
        return PyUnicode_FromFormat(" (import " SW_MISS_PACK_MODULE
                                    " registers %R, %R and %R)",
                                    from_pack[0], from_pack[1], from_pack[2]);
    }
}

/* The names of the pack as a tuple of exact str (module initialization). */
static PyObject *
sw_miss_make_pack_names(void)
{
    Py_ssize_t n = 0, i;
    PyObject *names;

    while (sw_miss_pack_names[n] != NULL) {
        n++;
    }
    names = PyTuple_New(n);
    for (i = 0; names != NULL && i < n; i++) {
        PyObject *s = PyUnicode_InternFromString(sw_miss_pack_names[i]);
        if (s == NULL) {
            Py_CLEAR(names);
            break;
        }
        PyTuple_SET_ITEM(names, i, s);
    }
    return names;
}

/* The message of a miss on `name` (new reference), or NULL with an
 * exception.  The caller owns `name`: rebuilding the registry's snapshot
 * allocates, and so may start a collection that runs Python code. */
static PyObject *
sw_miss_message(sw_state *st, PyObject *name, Py_ssize_t registered)
{
    PyObject *near[SW_SUGGEST_COUNT] = {NULL};
    PyObject *message = NULL, *hint = NULL;
    Py_ssize_t i, n = 0;

    if (sw_state_check(st) == 0) {
        int error;
        /* borrowed: the module state's tuple of the pack's names holds it */
        PyObject *blocker = sw_miss_pack_blocker(st, &error);

        if (error) {
            return NULL;
        }
        if (sw_miss_in_pack(st, name)) {
            if (blocker == NULL) {
                return PyUnicode_FromFormat(
                    "no descriptor is registered under the name %R; import "
                    SW_MISS_PACK_MODULE " registers it", name);
            }
            return PyUnicode_FromFormat(
                "no descriptor is registered under the name %R; "
                SW_MISS_PACK_MODULE " defines it, but cannot be imported in "
                "this process: another module registered %R, one of its "
                "names", name, blocker);
        }
        /* The pack's names are suggested only while importing it can
         * register them. */
        n = sw_registry_close_names(&st->registry, name, registered,
                                    blocker == NULL ? st->pack_names : NULL,
                                    near);
        if (n < 0) {
            return NULL;
        }
        hint = sw_miss_pack_hint(st, near, n);
    }
    else {
        PyErr_Clear();      /* finalized: no suggestions, still a message */
        hint = PyUnicode_FromString("");
    }
    /* %R of an exact str runs no user code. */
    switch (hint == NULL ? -1 : n) {
    case -1:
        break;
    case 0:
        message = PyUnicode_FromFormat(
            "no descriptor is registered under the name %R", name);
        break;
    case 1:
        message = PyUnicode_FromFormat(
            "no descriptor is registered under the name %R; "
            "did you mean %R?%U", name, near[0], hint);
        break;
    case 2:
        message = PyUnicode_FromFormat(
            "no descriptor is registered under the name %R; "
            "did you mean %R or %R?%U", name, near[0], near[1], hint);
        break;
    default:
        message = PyUnicode_FromFormat(
            "no descriptor is registered under the name %R; "
            "did you mean %R, %R or %R?%U", name, near[0], near[1], near[2],
            hint);
        break;
    }
    Py_XDECREF(hint);
    for (i = 0; i < n; i++) {
        Py_DECREF(near[i]);     /* a registered name: the registry holds it */
    }
    return message;
}

/* Take the pending name (a new reference, or NULL once the message is made
 * or the args replaced) and the args it was raised with (borrowed, and
 * only compared later: the empty tuple, which the module state keeps
 * alive).  Args already stored past this file (BaseException.__init__
 * called directly, PyException_SetArgs) are final: the pending name is
 * then moved to *stale_name (the caller releases it) and NULL returned.
 * Called under the critical section. */
static PyObject *
sw_miss_pending_lock_held(sw_miss *m, Py_ssize_t *registered,
                          PyObject **pending_args, PyObject **stale_name)
{
    PyObject *args = m->base.args;

    if (m->name != NULL
        && (args == NULL || !PyTuple_Check(args) || PyTuple_GET_SIZE(args) != 0)) {
        *stale_name = m->name;
        SW_STORE_PTR(m->name, NULL);
    }
    *registered = m->registered;
    *pending_args = args;
    return Py_XNewRef(m->name);
}

/* Publish `*made` as the args if the miss is still unformatted and its
 * args are still `pending_args` (nothing replaced them while the message
 * was made); either way the pending name is dropped, since the args are
 * now final.  What the miss no longer holds is moved to *stale_args and
 * *stale_name (the caller releases it, after the critical section), the
 * args are returned (new reference).  Called under the critical section. */
static PyObject *
sw_miss_publish_lock_held(sw_miss *m, PyObject **made, PyObject *pending_args,
                          PyObject **stale_args, PyObject **stale_name)
{
    if (*made != NULL && m->name != NULL) {
        assert(*stale_name == NULL);
        *stale_name = m->name;
        SW_STORE_PTR(m->name, NULL);
        if (m->base.args == pending_args) {
            *stale_args = m->base.args;
            m->base.args = *made;
            *made = NULL;
        }
    }
    /* NULL only after BaseException's tp_clear: read as no args. */
    return m->base.args != NULL ? Py_NewRef(m->base.args) : PyTuple_New(0);
}

/* The args of `self` (new reference), its message made first if it is
 * still pending; NULL with an exception. */
static PyObject *
sw_miss_args(PyObject *self)
{
    sw_miss *m = (sw_miss *)self;
    PyObject *name = NULL, *made = NULL, *message, *args;
    PyObject *pending_args = NULL, *stale_args = NULL, *stale_name = NULL;
    Py_ssize_t registered = 0;

    if (SW_LOAD_PTR(m->name) != NULL) {
        Py_BEGIN_CRITICAL_SECTION(self);
        name = sw_miss_pending_lock_held(m, &registered, &pending_args,
                                         &stale_name);
        Py_END_CRITICAL_SECTION();
    }
    if (name != NULL) {
        /* May run Python code (a collection): `name` is our own. */
        message = sw_miss_message(sw_state_of_type(Py_TYPE(self)), name,
                                  registered);
        made = message != NULL ? PyTuple_Pack(1, message) : NULL;
        Py_XDECREF(message);
        if (made == NULL) {
            Py_DECREF(name);
            return NULL;
        }
    }
    Py_BEGIN_CRITICAL_SECTION(self);
    args = sw_miss_publish_lock_held(m, &made, pending_args, &stale_args,
                                     &stale_name);
    Py_END_CRITICAL_SECTION();
    /* The miss is consistent: release what it, or this read, let go. */
    Py_XDECREF(made);
    Py_XDECREF(stale_args);
    Py_XDECREF(stale_name);
    Py_XDECREF(name);
    return args;
}

/* Replace the args with `args` (stolen) and drop the pending name. */
static void
sw_miss_replace_args(PyObject *self, PyObject *args)
{
    sw_miss *m = (sw_miss *)self;
    PyObject *stale_args, *stale_name;

    Py_BEGIN_CRITICAL_SECTION(self);
    stale_name = m->name;
    SW_STORE_PTR(m->name, NULL);
    stale_args = m->base.args;
    m->base.args = args;
    Py_END_CRITICAL_SECTION();
    Py_XDECREF(stale_args);
    Py_XDECREF(stale_name);
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

/* BaseException's __str__, __repr__, __reduce__, args and __init__, on
 * args this file made or stored, read as a new reference. */

static PyObject *
sw_miss_str(PyObject *self)
{
    PyObject *args = sw_miss_args(self), *result;

    if (args == NULL) {
        return NULL;
    }
    switch (PyTuple_GET_SIZE(args)) {
    case 0:
        result = PyUnicode_FromString("");
        break;
    case 1:
        result = PyObject_Str(PyTuple_GET_ITEM(args, 0));   /* held by args */
        break;
    default:
        result = PyObject_Str(args);
        break;
    }
    Py_DECREF(args);
    return result;
}

static PyObject *
sw_miss_repr(PyObject *self)
{
    PyObject *args = sw_miss_args(self), *result;
    const char *name = strrchr(Py_TYPE(self)->tp_name, '.');

    if (args == NULL) {
        return NULL;
    }
    name = name != NULL ? name + 1 : Py_TYPE(self)->tp_name;
    if (PyTuple_GET_SIZE(args) == 1) {
        result = PyUnicode_FromFormat("%s(%R)", name, PyTuple_GET_ITEM(args, 0));
    }
    else {
        result = PyUnicode_FromFormat("%s%R", name, args);
    }
    Py_DECREF(args);
    return result;
}

static PyObject *
sw_miss_reduce(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    PyObject *args = sw_miss_args(self), *dict, *result;

    if (args == NULL) {
        return NULL;
    }
    Py_BEGIN_CRITICAL_SECTION(self);
    dict = Py_XNewRef(((sw_miss *)self)->base.dict);
    Py_END_CRITICAL_SECTION();
    result = dict != NULL ? PyTuple_Pack(3, Py_TYPE(self), args, dict)
                          : PyTuple_Pack(2, Py_TYPE(self), args);
    Py_XDECREF(dict);
    Py_DECREF(args);
    return result;
}

static PyObject *
sw_miss_get_args(PyObject *self, void *Py_UNUSED(closure))
{
    return sw_miss_args(self);
}

/* The message is not made: it is replaced. */
static int
sw_miss_set_args(PyObject *self, PyObject *value, void *Py_UNUSED(closure))
{
    PyObject *args;

    if (value == NULL) {
        PyErr_SetString(PyExc_TypeError, "args may not be deleted");
        return -1;
    }
    args = PySequence_Tuple(value);
    if (args == NULL) {
        return -1;
    }
    sw_miss_replace_args(self, args);
    return 0;
}

/* Calling __init__ again sets args: from then on they are what it was
 * given. */
static int
sw_miss_init(PyObject *self, PyObject *args, PyObject *kwds)
{
    if (kwds != NULL && PyDict_GET_SIZE(kwds) != 0) {
        PyErr_Format(PyExc_TypeError, "%.200s() takes no keyword arguments",
                     Py_TYPE(self)->tp_name);
        return -1;
    }
    sw_miss_replace_args(self, Py_NewRef(args));
    return 0;
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
    .name = "stride_weave.dtypes.UnknownNameError",
    .basicsize = sizeof(sw_miss),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC
             | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = sw_miss_slots,
};

int
sw_miss_create_type(PyObject *module, sw_state *st)
{
    PyObject *table;
    int status;

    st->unknown_name_type = (PyTypeObject *)PyType_FromModuleAndSpec(
        module, &sw_miss_spec, PyExc_LookupError);
    if (st->unknown_name_type == NULL) {
        return -1;
    }
    st->pack_names = sw_miss_make_pack_names();
    if (st->pack_names == NULL) {
        return -1;
    }
    /* Private: for the test that compares it with stride_weave._packs. */
    if (PyModule_AddObjectRef(module, "_PACK_NAMES", st->pack_names) < 0) {
        return -1;
    }
    /* Private: for the test that checks the foreign names (aliases.c). */
    table = sw_alias_table_tuple();
    if (table == NULL) {
        return -1;
    }
    status = PyModule_AddObjectRef(module, "_FOREIGN_NAMES", table);
    Py_DECREF(table);
    return status;
}
