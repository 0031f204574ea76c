/* meta.c: DTypeMeta, the metaclass of every descriptor class.
 *
 * Owns class creation (the `abstract` keyword, the descriptor kind a class
 * inherits, refusing classes that shadow model-owned members), class
 * attribute protection (model classes are frozen; owned members cannot be
 * reassigned anywhere), and instance construction as a transaction:
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

#include <structmember.h>

static void sw_meta_dealloc(PyObject *self);

int
sw_is_descriptor_class(PyTypeObject *tp)
{
    /* The slot function is unique to DTypeMeta in every interpreter. */
    return Py_TYPE(tp)->tp_dealloc == sw_meta_dealloc;
}

/* ---- class keywords and owned members (shared with rule.c) --------------- */

/* Pop the boolean class keyword `keyword` from kwds.  *value keeps its
 * default when absent; *rest is a new dict of the other keywords or NULL. */
int
sw_parse_class_keywords(PyObject *kwds, const char *keyword, int *value,
                        PyObject **rest)
{
    PyObject *flag;

    *rest = NULL;
    if (kwds == NULL || PyDict_GET_SIZE(kwds) == 0) {
        return 0;
    }
    *rest = PyDict_Copy(kwds);
    if (*rest == NULL) {
        return -1;
    }
    if (keyword == NULL) {
        return 0;
    }
    flag = PyDict_GetItemString(*rest, keyword);   /* borrowed */
    if (flag == NULL) {
        return 0;
    }
    if (!PyBool_Check(flag)) {
        PyErr_Format(PyExc_TypeError,
                     "class keyword '%s' must be a bool, got %s", keyword,
                     Py_TYPE(flag)->tp_name);
        Py_CLEAR(*rest);
        return -1;
    }
    *value = (flag == Py_True);
    if (PyDict_DelItemString(*rest, keyword) < 0) {
        Py_CLEAR(*rest);
        return -1;
    }
    return 0;
}

/* An exact str copy of an attribute name found in a class namespace or a
 * base's dict (new reference), or NULL with TypeError when it is not a str
 * or is a str subclass: such a key runs its own __hash__/__eq__ inside
 * every attribute lookup of the class, so it could answer for an owned
 * name it does not spell. */
static PyObject *
sw_exact_attribute_name(PyObject *key, const char *clsname, PyObject *source)
{
    if (PyUnicode_CheckExact(key)) {
        return Py_NewRef(key);
    }
    if (source == NULL) {
        PyErr_Format(PyExc_TypeError,
                     "class %s: attribute names must be exact str, got a "
                     "key of type %s", clsname, Py_TYPE(key)->tp_name);
    }
    else {
        PyErr_Format(PyExc_TypeError,
                     "class %s: base %R has an attribute name of type %s; "
                     "a descriptor class's bases must use exact str names",
                     clsname, source, Py_TYPE(key)->tp_name);
    }
    return NULL;
}

static int
sw_check_names(PyObject *owned, PyObject *names, const char *clsname,
               PyObject *source)
{
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    int status = 0;

    /* `names` may be a base class's dict that another thread can change:
     * free-threaded builds iterate it inside its critical section. */
    Py_BEGIN_CRITICAL_SECTION(names);
    while (status == 0 && PyDict_Next(names, &pos, &key, &value)) {
        PyObject *exact = sw_exact_attribute_name(key, clsname, source);
        int hit;

        if (exact == NULL) {
            status = -1;
            break;
        }
        hit = PySet_Contains(owned, exact);
        if (hit < 0) {
            status = -1;
        }
        else if (hit) {
            if (source == NULL) {
                PyErr_Format(PyExc_TypeError,
                             "class %s defines %R, which is owned by the "
                             "descriptor model and cannot be overridden",
                             clsname, exact);
            }
            else {
                PyErr_Format(PyExc_TypeError,
                             "class %s inherits %R from %R, which shadows a "
                             "member owned by the descriptor model",
                             clsname, exact, source);
            }
            status = -1;
        }
        Py_DECREF(exact);
    }
    Py_END_CRITICAL_SECTION();
    return status;
}

/* The prepared namespace holds __slots__ as an exact str or a tuple of
 * exact str (attrs.c), so reading it here runs no user code.  A "__dict__"
 * slot is refused: it would give instances CPython's own dict, which
 * object.__setattr__ writes past the seal (CPython 3.13+). */
static int
sw_check_slots(PyObject *owned, PyObject *ns, const char *clsname)
{
    PyObject *slots = PyDict_GetItemString(ns, "__slots__");   /* borrowed */
    PyObject *check;
    Py_ssize_t i;
    int status = 0;

    if (slots == NULL) {
        return 0;
    }
    check = PyDict_New();
    if (check == NULL) {
        return -1;
    }
    if (PyUnicode_CheckExact(slots)) {
        status = PyDict_SetItem(check, slots, Py_None);
    }
    else if (PyTuple_Check(slots)) {
        for (i = 0; i < PyTuple_GET_SIZE(slots) && status == 0; i++) {
            PyObject *slot = PyTuple_GET_ITEM(slots, i);
            if (PyUnicode_CheckExact(slot)) {
                status = PyDict_SetItem(check, slot, Py_None);
            }
        }
    }
    if (status == 0 && PyDict_GetItemString(check, "__dict__") != NULL) {
        PyErr_Format(PyExc_TypeError,
                     "class %s: __slots__ may not contain '__dict__': a "
                     "sealed object keeps its attributes itself, and an "
                     "instance dict would stay writable", clsname);
        status = -1;
    }
    if (status == 0) {
        status = sw_check_names(owned, check, clsname, NULL);
    }
    Py_DECREF(check);
    return status;
}

static int
sw_is_one_of(PyTypeObject *k, PyTypeObject *const *types)
{
    for (; *types != NULL; types++) {
        if (k == *types) {
            return 1;
        }
    }
    return 0;
}

/* 1 when instances of `tp` carry CPython's own instance dict. */
static int
sw_base_has_instance_dict(PyTypeObject *tp)
{
    return tp->tp_dictoffset != 0
           || PyType_HasFeature(tp, Py_TPFLAGS_MANAGED_DICT);
}

/* Refuse a class whose namespace, __slots__, or any foreign base (mixins
 * and their whole MRO) defines an owned member.  Classes made by `meta`
 * were checked when they were created, and `model_types` (NULL-terminated)
 * are the model's C layouts, so both are skipped; so is `object`. */
static int
sw_check_owned_members(PyObject *owned, PyTypeObject *const *model_types,
                       PyTypeObject *meta, const char *clsname,
                       PyObject *bases, PyObject *ns)
{
    Py_ssize_t i, j;

    if (sw_check_names(owned, ns, clsname, NULL) < 0
        || sw_check_slots(owned, ns, clsname) < 0) {
        return -1;
    }
    for (i = 0; i < PyTuple_GET_SIZE(bases); i++) {
        PyObject *base = PyTuple_GET_ITEM(bases, i);
        PyObject *mro;

        if (!PyType_Check(base) || Py_TYPE(base) == meta) {
            continue;   /* type.__new__ reports non-class bases */
        }
        if (sw_base_has_instance_dict((PyTypeObject *)base)) {
            PyErr_Format(PyExc_TypeError,
                         "class %s: base %R gives instances a __dict__, "
                         "which would stay writable after the object is "
                         "sealed; declare __slots__ = () on it (the object "
                         "keeps its own attributes)", clsname, base);
            return -1;
        }
        mro = ((PyTypeObject *)base)->tp_mro;
        if (mro == NULL) {
            continue;
        }
        for (j = 0; j < PyTuple_GET_SIZE(mro); j++) {
            PyTypeObject *k = (PyTypeObject *)PyTuple_GET_ITEM(mro, j);
            PyObject *dict;
            if (k == &PyBaseObject_Type || sw_is_one_of(k, model_types)
                || Py_TYPE(k) == meta) {
                continue;
            }
            dict = k->tp_dict;
            if (dict != NULL
                && sw_check_names(owned, dict, clsname, (PyObject *)k) < 0) {
                return -1;
            }
        }
    }
    return 0;
}

/* 1 if `name` (a str or str subclass, read without running its methods)
 * is in the frozenset `owned`, 0 if not or not a str, -1 on error. */
int
sw_is_owned_name(PyObject *owned, PyObject *name)
{
    PyObject *exact;
    int result;

    if (!PyUnicode_Check(name)) {
        return 0;   /* the generic paths report a bad name type */
    }
    if (PyUnicode_CheckExact(name)) {
        return PySet_Contains(owned, name);
    }
    exact = PyUnicode_FromObject(name);
    if (exact == NULL) {
        return -1;
    }
    result = PySet_Contains(owned, exact);
    Py_DECREF(exact);
    return result;
}

/* 1 if `name` may not be set or deleted on a user class of either
 * metaclass: an owned member, or the class's __bases__/__class__. */
int
sw_is_owned_class_attribute(PyObject *owned, PyObject *name)
{
    if (PyUnicode_Check(name)
        && (PyUnicode_CompareWithASCIIString(name, "__bases__") == 0
            || PyUnicode_CompareWithASCIIString(name, "__class__") == 0)) {
        return 1;
    }
    return sw_is_owned_name(owned, name);
}

/* ---- class creation ----------------------------------------------------------- */

/* What a new class must know about itself before any user code sees it.
 * type() runs __set_name__ and __init_subclass__ hooks before it returns,
 * so the metaclass records kind, abstractness and state in its tp_alloc,
 * which type() calls first: the pending record is per thread, and each
 * allocation consumes it (a class created inside a hook sets its own). */
typedef struct {
    PyTypeObject *meta;
    sw_state *state;
    sw_kind kind;
    int abstract;
} sw_class_record;

static _Thread_local const sw_class_record *sw_pending_class;

/* tp_alloc of both metaclasses. */
PyObject *
sw_meta_alloc(PyTypeObject *meta, Py_ssize_t nitems)
{
    const sw_class_record *record = sw_pending_class;
    PyObject *cls;

    sw_pending_class = NULL;
    cls = PyType_GenericAlloc(meta, nitems);
    if (cls != NULL && record != NULL && record->meta == meta) {
        sw_type *t = (sw_type *)cls;
        t->state = record->state;
        t->kind = record->kind;
        t->abstract = record->abstract;
        t->is_model = record->state->installing;
        t->ready = 0;
    }
    return cls;
}

/* 0 when `t` may be instantiated or subclassed; else TypeError. */
int
sw_meta_check_ready(sw_type *t)
{
    if (t->ready) {
        return 0;
    }
    PyErr_Format(PyExc_TypeError,
                 "class %s is still being created (its __init_subclass__ "
                 "or __set_name__ hooks are running): it cannot be "
                 "instantiated or subclassed yet",
                 ((PyTypeObject *)t)->tp_name);
    return -1;
}

/* Refuse bases of metaclass `meta` that are not finished classes. */
int
sw_meta_check_ready_bases(PyTypeObject *meta, PyObject *bases)
{
    Py_ssize_t i;

    for (i = 0; i < PyTuple_GET_SIZE(bases); i++) {
        PyObject *base = PyTuple_GET_ITEM(bases, i);
        if (Py_TYPE(base) == meta && sw_meta_check_ready((sw_type *)base) < 0) {
            return -1;
        }
    }
    return 0;
}

/* 1 when `cls` has a class from outside the model (a mixin) in its MRO. */
static int
sw_has_foreign_base(PyTypeObject *cls, PyTypeObject *meta,
                    PyTypeObject *const *model_types)
{
    Py_ssize_t i;

    for (i = 1; i < PyTuple_GET_SIZE(cls->tp_mro); i++) {
        PyTypeObject *k = (PyTypeObject *)PyTuple_GET_ITEM(cls->tp_mro, i);
        if (k != &PyBaseObject_Type && Py_TYPE(k) != meta
            && !sw_is_one_of(k, model_types)) {
            return 1;
        }
    }
    return 0;
}

static int
sw_add_getset(PyTypeObject *cls, PyGetSetDef *def)
{
    PyObject *descr = PyDescr_NewGetSet(cls, def);
    int status;

    if (descr == NULL) {
        return -1;
    }
    status = PyDict_SetItemString(cls->tp_dict, def->name, descr);
    Py_DECREF(descr);
    return status;
}

/* An owned name the model leaves undefined on purpose (the removed
 * is_opaque_storage): in a class with a mixin, a data descriptor that keeps
 * it absent, so a mixin cannot bring it back later. */
static PyObject *
sw_absent_get(PyObject *self, void *closure)
{
    PyErr_Format(PyExc_AttributeError, "'%s' object has no attribute '%s'",
                 Py_TYPE(self)->tp_name, (const char *)closure);
    return NULL;
}

static PyGetSetDef sw_absent_members[] = {
    {"is_opaque_storage", sw_absent_get, NULL,
     PyDoc_STR("Removed: categories describe hierarchy relationships only."),
     (void *)"is_opaque_storage"},
    {NULL, NULL, NULL, NULL, NULL},
};

/* `name` looked up along cls's MRO in the model's classes only (the
 * classes of this metaclass and the model's C layouts), skipping mixins:
 * a class hook may have given a mixin an owned member after the check
 * (borrowed, or NULL). */
static PyObject *
sw_model_lookup(PyTypeObject *cls, PyTypeObject *meta,
                PyTypeObject *const *model_types, PyObject *name)
{
    Py_ssize_t i;

    for (i = 0; i < PyTuple_GET_SIZE(cls->tp_mro); i++) {
        PyTypeObject *k = (PyTypeObject *)PyTuple_GET_ITEM(cls->tp_mro, i);
        PyObject *dict, *found;

        if (Py_TYPE(k) != meta && !sw_is_one_of(k, model_types)
            && k != &PyBaseObject_Type) {
            continue;
        }
#if PY_VERSION_HEX >= 0x030C0000
        /* A static built-in type (object) keeps its dict elsewhere. */
        dict = PyType_GetDict(k);   /* new reference */
#else
        dict = Py_XNewRef(k->tp_dict);
#endif
        if (dict == NULL) {
            continue;
        }
        found = PyDict_GetItemWithError(dict, name);   /* exact str */
        /* Borrowed from a type dict the class's MRO keeps alive. */
        Py_DECREF(dict);
        if (found != NULL || PyErr_Occurred()) {
            return found;
        }
    }
    return NULL;
}

/* A class with a mixin holds every owned member the model defines in its
 * own dict: attribute lookup and CPython's slot updates both stop at the
 * class itself, so a member added to the mixin later (Mix.bits = ...,
 * Mix.__eq__ = ...) changes nothing its instances report.  The values are
 * the model's own objects (sw_model_lookup). */
static int
sw_guard_owned_members(PyTypeObject *cls, PyTypeObject *meta,
                       PyTypeObject *const *model_types, PyObject *owned)
{
    PyObject *iter, *name;
    int status = 0;

    iter = PyObject_GetIter(owned);   /* a frozenset of exact str */
    if (iter == NULL) {
        return -1;
    }
    while (status == 0 && (name = PyIter_Next(iter)) != NULL) {
        PyObject *member = sw_model_lookup(cls, meta, model_types, name);
        PyGetSetDef *absent;

        if (member == NULL && PyErr_Occurred()) {
            status = -1;
        }
        else if (member == NULL) {
            for (absent = sw_absent_members; absent->name != NULL; absent++) {
                if (PyUnicode_CompareWithASCIIString(name, absent->name) == 0) {
                    status = sw_add_getset(cls, absent);
                }
            }
        }
        if (member != NULL) {
            Py_INCREF(member);
            if (PyDict_GetItemWithError(cls->tp_dict, name) == NULL
                && !PyErr_Occurred()) {
                status = PyDict_SetItem(cls->tp_dict, name, member);
            }
            else if (PyErr_Occurred()) {
                status = -1;
            }
            Py_DECREF(member);
        }
        Py_DECREF(name);
    }
    Py_DECREF(iter);
    if (status == 0 && PyErr_Occurred()) {
        status = -1;
    }
    if (status == 0) {
        PyType_Modified(cls);
    }
    return status;
}

/* What creating a class means for both metaclasses (this one and RuleMeta):
 * prepare the namespace (attrs.c: exact str names, __slots__ read once, own
 * attribute storage), refuse owned members, run type() itself with the
 * class's record taken at allocation, then seal the new class's attribute
 * accessors.  Model classes (st->installing) skip the checks.  The caller
 * has refused unfinished bases (sw_meta_check_ready_bases), and finishes
 * the class and sets `ready`. */
PyObject *
sw_meta_build_class(PyTypeObject *meta, sw_state *st, PyObject *owned,
                    PyTypeObject *const *model_types, PyObject *name,
                    PyObject *bases, PyObject *ns, PyObject *kwds,
                    sw_kind kind, int abstract)
{
    const char *clsname = PyUnicode_AsUTF8(name);
    sw_class_record record = {meta, st, kind, abstract};
    PyObject *prepared, *args, *cls;
    int own_attrs;
    sw_type *t;

    if (clsname == NULL) {
        return NULL;
    }
    prepared = sw_attrs_prepare_namespace(ns, clsname, &own_attrs);
    if (prepared == NULL) {
        return NULL;
    }
    if (!st->installing
        && sw_check_owned_members(owned, model_types, meta, clsname, bases,
                                  prepared) < 0) {
        Py_DECREF(prepared);
        return NULL;
    }
    args = PyTuple_Pack(3, name, bases, prepared);
    Py_DECREF(prepared);
    if (args == NULL) {
        return NULL;
    }
    sw_pending_class = &record;
    cls = PyType_Type.tp_new(meta, args, kwds);
    sw_pending_class = NULL;   /* also when type() failed before allocating */
    Py_DECREF(args);
    if (cls == NULL) {
        return NULL;
    }
    t = (sw_type *)cls;
    if (t->state != st) {
        /* Not allocated through sw_meta_alloc: never usable. */
        PyErr_Format(PyExc_SystemError,
                     "class %s was not allocated by its metaclass", clsname);
        Py_DECREF(cls);
        return NULL;
    }
    if (!t->is_model
        && (sw_attrs_setup_class((PyTypeObject *)cls, own_attrs,
                                 &t->slot_defs) < 0
            || (sw_has_foreign_base((PyTypeObject *)cls, meta, model_types)
                && sw_guard_owned_members((PyTypeObject *)cls, meta,
                                          model_types, owned) < 0))) {
        Py_DECREF(cls);
        return NULL;
    }
    return cls;
}

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
    if (sw_meta_check_ready_bases(meta, bases) < 0
        || sw_meta_inherited_kind(meta, bases, clsname, &kind,
                                  &has_descriptor_base) < 0) {
        return NULL;
    }
    if (sw_parse_class_keywords(kwds, "abstract", &abstract, &rest) < 0) {
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
        cls = sw_meta_build_class(meta, st, st->owned_names, model_types,
                                  name, bases, ns, rest, kind, abstract);
    }
    Py_XDECREF(rest);
    /* Only the model's own classes get per-class method descriptors: a
     * user class's namespace holds what its class statement wrote (and,
     * with a mixin, the guard of sw_guard_owned_members), so tools that
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
    owned = sw_is_owned_class_attribute(t->state->owned_names, name);
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
    if (sw_meta_check_ready(t) < 0) {
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
