/* meta.c: DTypeMeta, the metaclass of every descriptor class.
 *
 * Owns what only descriptor classes have, on top of the sealed-metaclass
 * core of sealedmeta.c: the `abstract` class keyword, the descriptor kind
 * a class inherits, the model's C layouts and its owned members, the
 * frozen model classes' error text, and constructing a descriptor:
 * allocate, run the most-derived __init__, finalize (validate, record the
 * structure, register, seal), or reject without registering anything.
 *
 * The metaclass is built from a spec with `type` as its base; the model's
 * classes (DType, DTypeCategory, ...) and user subclasses are made by
 * calling it, as a class statement does (see docs on why in
 * ../../../docs/design.md and the notes on 3.11's missing
 * PyType_FromMetaclass).
 */
#include "meta.h"
#include "descriptor.h"

static void sw_meta_dealloc(PyObject *self);

int
sw_meta_is_descriptor_class(PyTypeObject *tp)
{
    /* The slot function is unique to DTypeMeta in every interpreter. */
    return Py_TYPE(tp)->tp_dealloc == sw_meta_dealloc;
}

/* ---- class creation ----------------------------------------------------- */

static PyObject *
sw_meta_owned_names(sw_state *st)
{
    return st->owned_names;
}

/* The model's C layouts: a user class's owned-member checks skip them. */
static void
sw_meta_model_types(sw_state *st,
                    PyTypeObject *types[SW_SEALEDMETA_MODEL_TYPES])
{
    int k;

    Py_BUILD_ASSERT(SW_KIND_COUNT + 1 <= SW_SEALEDMETA_MODEL_TYPES);
    /* The C layout and every kind's __init__ carrier. */
    types[0] = st->base_type;
    for (k = SW_KIND_NONE + 1; k < SW_KIND_COUNT; k++) {
        types[k] = st->kind_init_types[k];
    }
    types[SW_KIND_COUNT] = NULL;
}

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
                       sw_kind *kind)
{
    Py_ssize_t i;

    *kind = SW_KIND_NONE;
    for (i = 0; i < PyTuple_GET_SIZE(bases); i++) {
        PyObject *base = PyTuple_GET_ITEM(bases, i);
        sw_type *t;

        if (Py_TYPE(base) != meta) {
            continue;
        }
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

/* A name that is not valid UTF-8 is refused first, then unfinished bases,
 * then bases that mix kinds (in place of the core's check of unfinished
 * bases, so the errors keep that order). */
static int
sw_meta_check_bases(PyTypeObject *meta, PyObject *name, PyObject *bases,
                    sw_kind *kind)
{
    const char *clsname = PyUnicode_AsUTF8(name);

    if (clsname == NULL) {
        return -1;
    }
    if (sw_sealedmeta_check_ready_bases(meta, bases) < 0
        || sw_meta_inherited_kind(meta, bases, clsname, kind) < 0) {
        return -1;
    }
    return 0;
}

static int
sw_meta_check_class(sw_state *st, PyObject *name, sw_kind kind, int abstract)
{
    if (!st->installing && !abstract && kind == SW_KIND_NONE) {
        PyErr_Format(PyExc_TypeError,
                     "class %U cannot be concrete: a constructible "
                     "descriptor must be a DTypeCategory, SimpleDType or "
                     "CompoundDType subclass", name);
        return -1;
    }
    return 0;
}

/* Only the model's own classes get per-class method descriptors: a
 * user class's namespace holds what its class statement wrote (and,
 * with a mixin, the core's guard of its owned members), so tools that
 * rebuild a class from its namespace (cloudpickle) can. */
static int
sw_meta_finish_class(PyTypeObject *cls)
{
    if (((sw_type *)cls)->is_model) {
        return sw_descriptor_bind_methods(cls);
    }
    return 0;
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

/* ---- construction ------------------------------------------------------- */

/* The module a descriptor's pickle names as its origin (pickle.c), in
 * *module: a new exact str, or NULL when there is none.  A user class's
 * `__module__`; for a descriptor made by calling a model class directly
 * (SimpleDType("X", ...)), the module of the calling code, as
 * collections.namedtuple records it.  Only exact str values are kept:
 * the receiving process validates the hint before using it.  -1 when the
 * lookup fails (a key of the caller's globals may run its own __eq__). */
static int
sw_meta_origin_module(sw_state *st, sw_type *t, PyObject **module)
{
    PyObject *ns;
    int found;

    *module = NULL;
    if (t->is_model) {
        ns = sw_frame_globals();   /* NULL when called from C */
    }
    else {
        ns = Py_XNewRef(((PyTypeObject *)t)->tp_dict);
    }
    /* `ns` is a strong reference: a key's __eq__ may drop the frame's
     * globals, or replace the class's namespace. */
    if (ns == NULL || !PyDict_Check(ns)) {
        Py_XDECREF(ns);
        return 0;
    }
    found = PyDict_GetItemRef(ns, st->idents[t->is_model ? SW_IDENT_NAME
                                                         : SW_IDENT_MODULE],
                              module);
    Py_DECREF(ns);
    if (found > 0 && !PyUnicode_CheckExact(*module)) {
        Py_CLEAR(*module);   /* only a hint: a non-str value leaves it out */
    }
    return found < 0 ? -1 : 0;
}

static int
sw_meta_begin(PyObject *obj, sw_type *t, int ensuring)
{
    sw_descriptor *d = (sw_descriptor *)obj;

    d->kind = t->kind;
    d->ensuring = ensuring ? 1 : 0;
    /* Captured before __init__ runs: the caller's module, not one an
     * __init__ may switch to.  The object is still SW_RAW (no __init__,
     * no attribute write accepts it) while a key's __eq__ may run. */
    if (sw_meta_origin_module(sw_state_of_type((PyTypeObject *)t), t,
                              &d->module) < 0) {
        return -1;
    }
    SW_STORE_FLAG(d->build_state, SW_BUILDING);
    return 0;
}

/* Validate, register and seal; 1 when ensure() found the identical
 * registered descriptor, which is then the result. */
static int
sw_meta_finish(PyObject *obj, sw_type *t, PyObject **existing)
{
    return sw_construct_finalize(sw_state_of_type((PyTypeObject *)t),
                                 (sw_descriptor *)obj, existing);
}

/* Nothing was registered; a reference the __init__ leaked keeps a
 * rejected, unusable object (descriptor.c). */
static void
sw_meta_reject(PyObject *obj)
{
    sw_descriptor_reject((sw_descriptor *)obj);
}

/* ---- the metaclass type ------------------------------------------------- */

static const sw_sealedmeta_ops sw_meta_ops = {
    .name = "DTypeMeta",
    .args_format = "UO!O!:DTypeMeta",
    .root_name = "DType",
    .keyword = "abstract",
    .owner = "descriptor model",
    .frozen_reason = "the descriptor model's classes are frozen (extensions "
                     "are found through registered() and from_name())",
    .abstract_error = "cannot instantiate abstract descriptor class %s "
                      "(declare it with abstract=False to make it concrete)",
    .model_abstract_error = "cannot instantiate abstract model class %s: "
                            "look a registered descriptor up "
                            "(DType.from_name('Float32')), construct a "
                            "DTypeCategory, SimpleDType or BlockScaledDType, "
                            "or subclass it with abstract=False",
    .owned_names = sw_meta_owned_names,
    .model_types = sw_meta_model_types,
    .absent_members = sw_meta_absent_members,
    .check_bases = sw_meta_check_bases,
    .check_class = sw_meta_check_class,
    .finish_class = sw_meta_finish_class,
    .begin = sw_meta_begin,
    .finish = sw_meta_finish,
    .reject = sw_meta_reject,
};

static PyObject *
sw_meta_new(PyTypeObject *meta, PyObject *args, PyObject *kwds)
{
    return sw_sealedmeta_new(&sw_meta_ops, meta, args, kwds);
}

static int
sw_meta_setattro(PyObject *self, PyObject *name, PyObject *value)
{
    return sw_sealedmeta_setattro(&sw_meta_ops, self, name, value);
}

/* Construct, validate, register and seal a descriptor of `cls` (the
 * transaction of docs/design.md).  With `ensuring`, a registered
 * descriptor of the same name and an identical structure is the result
 * instead of the duplicate-name error (DType.ensure). */
PyObject *
sw_meta_construct(PyObject *cls, PyObject *args, PyObject *kwds, int ensuring)
{
    return sw_sealedmeta_construct(&sw_meta_ops, cls, args, kwds, ensuring);
}

static PyObject *
sw_meta_call(PyObject *cls, PyObject *args, PyObject *kwds)
{
    return sw_meta_construct(cls, args, kwds, 0);
}

/* Attribute lookup on a descriptor class.  CPython specializes no
 * attribute load on a class whose metaclass is not exactly `type`, so
 * every Cls.from_name(...) would take type's generic lookup: the
 * metaclass's MRO, the class's MRO, then _ClassBound's __get__, which
 * returns the builtin the class keeps.  That builtin is returned here
 * directly once it exists (sw_classbound_cached says when this is the same
 * answer); every other attribute takes type's own path. */
static PyObject *
sw_meta_getattro(PyObject *cls, PyObject *name)
{
    PyObject *bound = sw_classbound_cached((PyTypeObject *)cls, name);

    if (bound != NULL) {
        return bound;
    }
    return PyType_Type.tp_getattro(cls, name);
}

static void
sw_meta_dealloc(PyObject *self)
{
    sw_sealedmeta_dealloc(self);
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
    {Py_tp_alloc, sw_sealedmeta_alloc},
    {Py_tp_init, sw_sealedmeta_init},
    {Py_tp_call, sw_meta_call},
    {Py_tp_setattro, sw_meta_setattro},
    {Py_tp_getattro, sw_meta_getattro},
    {Py_tp_traverse, sw_sealedmeta_traverse},
    {Py_tp_clear, sw_sealedmeta_clear},
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
