/* meta.c: DTypeMeta, the metaclass of every descriptor class.
 *
 * Owns class creation (the `abstract` keyword, the descriptor kind a class
 * inherits; sealedmeta.c refuses classes that shadow model-owned members),
 * class attribute protection (model classes are frozen; owned members
 * cannot be reassigned anywhere), and instance construction as a transaction:
 * allocate, run the most-derived __init__, finalize (validate, record the
 * structure, register, seal), or reject without registering anything.
 *
 * The metaclass is built from a spec with `type` as its base; the model's
 * classes (DType, DTypeCategory, ...) and user subclasses are made by
 * calling it, as a class statement does (see docs on why in
 * ../../../docs/design.md and the notes on 3.11's missing
 * PyType_FromMetaclass).
 */
#include "sw_internal.h"

static void sw_meta_dealloc(PyObject *self);

int
sw_is_descriptor_class(PyTypeObject *tp)
{
    /* The slot function is unique to DTypeMeta in every interpreter. */
    return Py_TYPE(tp)->tp_dealloc == sw_meta_dealloc;
}

/* ---- class creation ----------------------------------------------------- */

/* An owned name the model leaves undefined on purpose (the removed
 * is_opaque_storage): in a class with a mixin, a data descriptor that keeps
 * it absent, so a mixin cannot bring it back later. */
static PyObject *
sw_meta_absent_get(PyObject *self, void *closure)
{
    PyErr_Format(PyExc_AttributeError, "'%s' object has no attribute '%s'",
                 Py_TYPE(self)->tp_name, (const char *)closure);
    return NULL;
}

static PyGetSetDef sw_meta_absent_members[] = {
    {"is_opaque_storage", sw_meta_absent_get, NULL,
     PyDoc_STR("Removed: categories describe hierarchy relationships only."),
     (void *)"is_opaque_storage"},
    {NULL, NULL, NULL, NULL, NULL},
};

/* The kind a new class inherits from its descriptor bases; -1 on conflict. */
static int
sw_meta_inherited_kind(PyTypeObject *meta, PyObject *bases, const char *clsname,
                       sw_kind *kind, int *has_descriptor_base)
{
    Py_ssize_t i;

    *kind = SW_KIND_NONE;
    *has_descriptor_base = 0;
    for (i = 0; i < PyTuple_GET_SIZE(bases); i++) {
        PyObject *base = PyTuple_GET_ITEM(bases, i);
        sw_type *t;

        if (Py_TYPE(base) != meta) {
            continue;
        }
        *has_descriptor_base = 1;
        t = (sw_type *)base;
        if (t->kind == SW_KIND_NONE) {
            continue;
        }
        if (sw_kind_within(t->kind, *kind)) {
            *kind = t->kind;    /* the same kind, or one refining it */
            continue;
        }
        if (!sw_kind_within(*kind, t->kind)) {
            PyErr_Format(PyExc_TypeError,
                         "class %s: a descriptor class can have only one "
                         "kind (DTypeCategory, SimpleDType or CompoundDType); "
                         "its bases mix several", clsname);
            return -1;
        }
    }
    return 0;
}

static PyObject *
sw_meta_new(PyTypeObject *meta, PyObject *args, PyObject *kwds)
{
    sw_state *st = PyType_GetModuleState(meta);
    PyObject *name, *bases, *ns, *rest = NULL, *cls;
    const char *clsname;
    int abstract = 1, has_descriptor_base;
    sw_kind kind;

    if (sw_state_check(st) < 0) {
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "UO!O!:DTypeMeta", &name, &PyTuple_Type,
                          &bases, &PyDict_Type, &ns)) {
        return NULL;
    }
    clsname = PyUnicode_AsUTF8(name);
    if (clsname == NULL) {
        return NULL;
    }
    if (sw_sealedmeta_check_ready_bases(meta, bases) < 0
        || sw_meta_inherited_kind(meta, bases, clsname, &kind,
                                  &has_descriptor_base) < 0) {
        return NULL;
    }
    if (sw_sealedmeta_parse_keywords(kwds, "abstract", &abstract, &rest) < 0) {
        return NULL;
    }
    if (!st->installing && !has_descriptor_base) {
        PyErr_Format(PyExc_TypeError,
                     "class %s: a class made by DTypeMeta must derive "
                     "from DType", clsname);
        goto error;
    }
    if (!st->installing && !abstract && kind == SW_KIND_NONE) {
        PyErr_Format(PyExc_TypeError,
                     "class %s cannot be concrete: a constructible "
                     "descriptor must be a DTypeCategory, SimpleDType or "
                     "CompoundDType subclass", clsname);
        goto error;
    }
    {
        /* The C layout and every kind's __init__ carrier. */
        PyTypeObject *model_types[SW_KIND_COUNT + 1];
        int k;

        model_types[0] = st->base_type;
        for (k = SW_KIND_NONE + 1; k < SW_KIND_COUNT; k++) {
            model_types[k] = st->kind_init_types[k];
        }
        model_types[SW_KIND_COUNT] = NULL;
        cls = sw_sealedmeta_build_class(meta, st, st->owned_names,
                                        model_types, sw_meta_absent_members,
                                        name, bases, ns, rest, kind,
                                        abstract);
    }
    Py_XDECREF(rest);
    /* Only the model's own classes get per-class method descriptors: a
     * user class's namespace holds what its class statement wrote (and,
     * with a mixin, the guard of its owned members), so tools that
     * rebuild a class from its namespace (cloudpickle) can. */
    if (cls != NULL && ((sw_type *)cls)->is_model
        && sw_descriptor_bind_methods((PyTypeObject *)cls) < 0) {
        Py_CLEAR(cls);
    }
    if (cls != NULL) {
        ((sw_type *)cls)->ready = 1;
    }
    return cls;

error:
    Py_XDECREF(rest);
    return NULL;
}

static int
sw_meta_init(PyObject *self, PyObject *args, PyObject *Py_UNUSED(kwds))
{
    /* Keywords were consumed by tp_new (and __init_subclass__). */
    return PyType_Type.tp_init(self, args, NULL);
}

/* Create one of the model's own classes (DType, SimpleDType, ...). */
PyObject *
sw_meta_create_model_class(sw_state *st, const char *name, PyObject *bases,
                           PyObject *ns, int abstract, sw_kind kind)
{
    PyObject *cls = NULL, *kwds = NULL, *callargs = NULL, *modname = NULL;

    kwds = Py_BuildValue("{s:O}", "abstract", abstract ? Py_True : Py_False);
    modname = PyUnicode_FromString("stride_weave._dtypes");
    if (kwds == NULL || modname == NULL
        || PyDict_SetItemString(ns, "__module__", modname) < 0) {
        goto done;
    }
    callargs = Py_BuildValue("(sOO)", name, bases, ns);
    if (callargs == NULL) {
        goto done;
    }
    st->installing = 1;
    cls = PyObject_Call((PyObject *)st->meta_type, callargs, kwds);
    st->installing = 0;
done:
    Py_XDECREF(kwds);
    Py_XDECREF(modname);
    Py_XDECREF(callargs);
    if (cls != NULL) {
        ((sw_type *)cls)->kind = kind;
    }
    return cls;
}

/* ---- class attribute protection ----------------------------------------------- */

static int
sw_meta_setattro(PyObject *self, PyObject *name, PyObject *value)
{
    sw_type *t = (sw_type *)self;
    int owned;

    if (sw_state_check(t->state) < 0) {
        return -1;
    }
    if (t->is_model) {
        PyErr_Format(PyExc_AttributeError,
                     "cannot %s attribute %R of %s: the descriptor model's "
                     "classes are frozen (extensions are found through "
                     "registered() and from_name())",
                     value ? "set" : "delete", name,
                     ((PyTypeObject *)self)->tp_name);
        return -1;
    }
    owned = sw_sealedmeta_is_owned_class_attribute(t->state->owned_names, name);
    if (owned < 0) {
        return -1;
    }
    if (owned) {
        PyErr_Format(PyExc_AttributeError,
                     "cannot %s %R on class %s: it is owned by the "
                     "descriptor model", value ? "set" : "delete", name,
                     ((PyTypeObject *)self)->tp_name);
        return -1;
    }
    return PyType_Type.tp_setattro(self, name, value);
}

/* ---- construction ---------------------------------------------------------------- */

/* The module a descriptor's pickle names as its origin (pickle.c), a new
 * exact str or NULL (no error set) when there is none.  A user class's
 * `__module__`; for a descriptor made by calling a model class directly
 * (SimpleDType("X", ...)), the module of the calling code, as
 * collections.namedtuple records it.  Only exact str values are kept:
 * the receiving process validates the hint before using it. */
static PyObject *
sw_meta_origin_module(sw_state *st, sw_type *t)
{
    PyObject *ns, *module;

    if (t->is_model) {
        ns = PyEval_GetGlobals();   /* borrowed; NULL when called from C */
    }
    else {
        ns = ((PyTypeObject *)t)->tp_dict;
    }
    if (ns == NULL || !PyDict_Check(ns)) {
        return NULL;
    }
    module = PyDict_GetItemWithError(ns, t->is_model ? st->str_name
                                                     : st->str_module);
    if (module == NULL || !PyUnicode_CheckExact(module)) {
        PyErr_Clear();   /* only a hint: a lookup failure leaves it out */
        return NULL;
    }
    return Py_NewRef(module);
}

/* Construct, validate, register and seal a descriptor of `cls` (the
 * transaction of docs/design.md).  With `ensuring`, a registered
 * descriptor of the same name and an identical structure is the result
 * instead of the duplicate-name error (DType.ensure). */
PyObject *
sw_meta_construct(PyObject *cls, PyObject *args, PyObject *kwds, int ensuring)
{
    sw_type *t = (sw_type *)cls;
    PyTypeObject *tp = (PyTypeObject *)cls;
    sw_descriptor *d;
    PyObject *obj, *existing = NULL;
    int status;

    if (sw_state_check(t->state) < 0) {
        return NULL;
    }
    if (sw_sealedmeta_check_ready(t) < 0) {
        return NULL;
    }
    if (t->abstract) {
        PyErr_Format(PyExc_TypeError,
                     "cannot instantiate abstract descriptor class %s "
                     "(declare it with abstract=False to make it concrete)",
                     tp->tp_name);
        return NULL;
    }
    obj = tp->tp_alloc(tp, 0);
    if (obj == NULL) {
        return NULL;
    }
    d = (sw_descriptor *)obj;
    d->kind = t->kind;
    d->ensuring = ensuring ? 1 : 0;
    /* Captured before __init__ runs: the caller's module, not one an
     * __init__ may switch to. */
    d->module = sw_meta_origin_module(t->state, t);
    SW_STORE_FLAG(d->build_state, SW_BUILDING);
    status = tp->tp_init(obj, args, kwds);
    if (status == 0) {
        status = sw_construct_finalize(t->state, d, &existing);
    }
    if (status != 0) {
        /* Nothing was registered; a reference the __init__ leaked keeps a
         * rejected, unusable object.  (1: ensure() found the identical
         * registered descriptor, which is the result.) */
        Py_BEGIN_CRITICAL_SECTION(obj);
        SW_STORE_FLAG(d->build_state, SW_REJECTED);
        Py_END_CRITICAL_SECTION();
        Py_DECREF(obj);
        return status == 1 ? existing : NULL;
    }
    return obj;
}

static PyObject *
sw_meta_call(PyObject *cls, PyObject *args, PyObject *kwds)
{
    return sw_meta_construct(cls, args, kwds, 0);
}

/* ---- the metaclass type ---------------------------------------------------------- */

static int
sw_meta_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(((sw_type *)self)->snapshot);
    Py_VISIT(((sw_type *)self)->bound[0]);
    Py_VISIT(((sw_type *)self)->bound[1]);
    return PyType_Type.tp_traverse(self, visit, arg);
}

static int
sw_meta_clear(PyObject *self)
{
    Py_CLEAR(((sw_type *)self)->snapshot);
    Py_CLEAR(((sw_type *)self)->bound[0]);
    Py_CLEAR(((sw_type *)self)->bound[1]);
    return PyType_Type.tp_clear(self);
}

static void
sw_meta_dealloc(PyObject *self)
{
    PyTypeObject *meta = Py_TYPE(self);
    PyGetSetDef *slot_defs = ((sw_type *)self)->slot_defs;

    Py_CLEAR(((sw_type *)self)->snapshot);
    Py_CLEAR(((sw_type *)self)->bound[0]);
    Py_CLEAR(((sw_type *)self)->bound[1]);
    PyType_Type.tp_dealloc(self);
    /* The getsets pointing into slot_defs held the class: they are gone. */
    PyMem_Free(slot_defs);
    /* type's dealloc does not release a heap metaclass. */
    Py_DECREF(meta);
}

static PyType_Slot sw_meta_slots[] = {
    {Py_tp_doc, (void *)PyDoc_STR(
        "DTypeMeta(name, bases, namespace, /, *, abstract=True)\n--\n\n"
        "Metaclass of every descriptor class.\n\n"
        "abstract (default True) keeps a class non-constructible; declare "
        "abstract=False to make it concrete.  A class that defines or "
        "inherits a model-owned member is refused with TypeError.  Calling "
        "a concrete class constructs, validates, registers and seals a "
        "descriptor as one transaction.")},
    {Py_tp_new, sw_meta_new},
    {Py_tp_alloc, sw_meta_alloc},
    {Py_tp_init, sw_meta_init},
    {Py_tp_call, sw_meta_call},
    {Py_tp_setattro, sw_meta_setattro},
    {Py_tp_traverse, sw_meta_traverse},
    {Py_tp_clear, sw_meta_clear},
    {Py_tp_dealloc, sw_meta_dealloc},
    {0, NULL},
};

static PyType_Spec sw_meta_spec = {
    .name = "stride_weave._dtypes.DTypeMeta",
    .basicsize = sizeof(sw_type),
    .itemsize = 0,
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = sw_meta_slots,
};

PyObject *
sw_meta_create_type(PyObject *module)
{
    return PyType_FromModuleAndSpec(module, &sw_meta_spec,
                                    (PyObject *)&PyType_Type);
}
