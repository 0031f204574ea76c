/* sealedmeta.c: the machinery DTypeMeta (meta.c) and RuleMeta (rule.c)
 * share, parameterized by a const sw_sealedmeta_ops per metaclass.
 *
 * Owns creating a sealed class: the boolean class keyword, refusing
 * unfinished bases and classes that define or inherit an owned member,
 * the per-class record taken at allocation (before any class hook runs),
 * and guarding owned members in a class with a mixin.  Owns protecting
 * class attributes (model classes are frozen; owned members cannot be set
 * or deleted), constructing an instance as a transaction (allocate, run
 * the most-derived __init__, finish, or mark it rejected), and the life
 * of the per-class layout sw_type (traverse, clear, dealloc).  What only
 * one metaclass knows (descriptor kinds, the registry, a rule's recorded
 * structure) comes in through the ops' hooks.
 */
#include "meta.h"
#include "attrs.h"

/* ---- class keywords and owned members ----------------------------------- */

/* Pop the boolean class keyword `keyword` from kwds.  *value keeps its
 * default when absent; *rest is a new dict of the other keywords or NULL. */
static int
sw_sealedmeta_parse_keywords(PyObject *kwds, const char *keyword,
                             int *value, PyObject **rest)
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
    /* A keyword spelled by a str subclass compares with its own __eq__:
     * its errors propagate. */
    if (PyDict_GetItemStringRef(*rest, keyword, &flag) < 0) {
        Py_CLEAR(*rest);
        return -1;
    }
    if (flag == NULL) {
        return 0;
    }
    if (!PyBool_Check(flag)) {
        PyErr_Format(PyExc_TypeError,
                     "class keyword '%s' must be a bool, got %s", keyword,
                     Py_TYPE(flag)->tp_name);
        Py_DECREF(flag);
        Py_CLEAR(*rest);
        return -1;
    }
    *value = (flag == Py_True);
    Py_DECREF(flag);   /* a bool: immortal or kept by the module */
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
sw_sealedmeta_exact_name(PyObject *key, const char *clsname,
                         PyObject *source)
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
sw_sealedmeta_check_names(PyObject *owned, PyObject *names,
                          const char *clsname, PyObject *source)
{
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    int status = 0;

    /* `names` may be a base class's dict that another thread can change:
     * free-threaded builds iterate it inside its critical section. */
    Py_BEGIN_CRITICAL_SECTION(names);
    while (status == 0 && PyDict_Next(names, &pos, &key, &value)) {
        PyObject *exact = sw_sealedmeta_exact_name(key, clsname, source);
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
sw_sealedmeta_check_slots(PyObject *owned, PyObject *ns, const char *clsname)
{
    PyObject *slots = NULL, *check = NULL;
    Py_ssize_t i;
    int status;

    status = PyDict_GetItemStringRef(ns, "__slots__", &slots);
    if (status <= 0) {
        return status;
    }
    check = PyDict_New();
    if (check == NULL) {
        Py_DECREF(slots);
        return -1;
    }
    status = 0;
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
    if (status == 0) {
        PyObject *dict_slot = NULL;
        status = PyDict_GetItemStringRef(check, "__dict__", &dict_slot);
        if (status > 0) {
            Py_DECREF(dict_slot);
            PyErr_Format(PyExc_TypeError,
                         "class %s: __slots__ may not contain '__dict__': a "
                         "sealed object keeps its attributes itself, and an "
                         "instance dict would stay writable", clsname);
            status = -1;
        }
    }
    if (status == 0) {
        status = sw_sealedmeta_check_names(owned, check, clsname, NULL);
    }
    Py_DECREF(check);
    Py_DECREF(slots);
    return status;
}

static int
sw_sealedmeta_is_one_of(PyTypeObject *k, PyTypeObject *const *types)
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
sw_sealedmeta_has_instance_dict(PyTypeObject *tp)
{
    return tp->tp_dictoffset != 0
           || PyType_HasFeature(tp, Py_TPFLAGS_MANAGED_DICT);
}

/* Refuse a base that derives from the model's C layout `layout`
 * (_DescriptorBase, _RuleBase) without being a class of `meta`: the layout
 * itself, the kinds' __init__ carriers, and any class derived from them by
 * another metaclass (plain `type`).  Such a class's __slots__ members would
 * write into the object's layout past every sealed check, and its methods
 * were never checked for owned names.  Classes of `meta` were checked when
 * they were created, so only direct bases need looking at.  Names come
 * from tp_name: formatting runs no code of a foreign metaclass. */
static int
sw_sealedmeta_check_layout_bases(PyTypeObject *layout, PyTypeObject *meta,
                                 const char *clsname, PyObject *bases)
{
    Py_ssize_t i;

    for (i = 0; i < PyTuple_GET_SIZE(bases); i++) {
        PyObject *base = PyTuple_GET_ITEM(bases, i);

        if (PyType_Check(base) && Py_TYPE(base) != meta
            && PyType_IsSubtype((PyTypeObject *)base, layout)) {
            PyErr_Format(PyExc_TypeError,
                         "class %s: base %s derives from %s, the model's "
                         "internal layout, which user classes may reach "
                         "only through the model's public classes",
                         clsname, ((PyTypeObject *)base)->tp_name,
                         layout->tp_name);
            return -1;
        }
    }
    return 0;
}

/* Refuse a class whose namespace, __slots__, or any foreign base (mixins
 * and their whole MRO) defines an owned member.  Classes made by `meta`
 * were checked when they were created, and `model_types` (NULL-terminated)
 * are the model's C layouts, so both are skipped; so is `object`. */
static int
sw_sealedmeta_check_owned_members(PyObject *owned,
                                  PyTypeObject *const *model_types,
                                  PyTypeObject *meta, const char *clsname,
                                  PyObject *bases, PyObject *ns)
{
    Py_ssize_t i, j;
    int status = 0;

    if (sw_sealedmeta_check_layout_bases(model_types[0], meta, clsname,
                                         bases) < 0
        || sw_sealedmeta_check_names(owned, ns, clsname, NULL) < 0
        || sw_sealedmeta_check_slots(owned, ns, clsname) < 0) {
        return -1;
    }
    for (i = 0; status == 0 && i < PyTuple_GET_SIZE(bases); i++) {
        PyObject *base = PyTuple_GET_ITEM(bases, i);
        PyObject *mro;

        if (!PyType_Check(base) || Py_TYPE(base) == meta) {
            continue;   /* type.__new__ reports non-class bases */
        }
        if (sw_sealedmeta_has_instance_dict((PyTypeObject *)base)) {
            PyErr_Format(PyExc_TypeError,
                         "class %s: base %R gives instances a __dict__, "
                         "which would stay writable after the object is "
                         "sealed; declare __slots__ = () on it (the object "
                         "keeps its own attributes)", clsname, base);
            return -1;
        }
        /* Our own reference: another thread may reassign the mixin's
         * __bases__ (and free its MRO) meanwhile.  The checks run no
         * Python code but the repr in an error message, after which
         * nothing here is used. */
        mro = Py_XNewRef(((PyTypeObject *)base)->tp_mro);
        if (mro == NULL) {
            continue;
        }
        for (j = 0; status == 0 && j < PyTuple_GET_SIZE(mro); j++) {
            PyTypeObject *k = (PyTypeObject *)PyTuple_GET_ITEM(mro, j);
            if (k == &PyBaseObject_Type
                || sw_sealedmeta_is_one_of(k, model_types)
                || Py_TYPE(k) == meta || k->tp_dict == NULL) {
                continue;
            }
            status = sw_sealedmeta_check_names(owned, k->tp_dict, clsname,
                                               (PyObject *)k);
        }
        Py_DECREF(mro);
    }
    return status;
}

/* 1 if `name` (a str or str subclass, read without running its methods)
 * is in the frozenset `owned`, 0 if not or not a str, -1 on error. */
int
sw_sealedmeta_is_owned_name(PyObject *owned, PyObject *name)
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
static int
sw_sealedmeta_is_owned_class_attribute(PyObject *owned, PyObject *name)
{
    if (PyUnicode_Check(name)
        && (PyUnicode_CompareWithASCIIString(name, "__bases__") == 0
            || PyUnicode_CompareWithASCIIString(name, "__class__") == 0)) {
        return 1;
    }
    return sw_sealedmeta_is_owned_name(owned, name);
}

/* ---- class creation ----------------------------------------------------- */

/* What a new class must know about itself before any user code sees it.
 * type() runs __set_name__ and __init_subclass__ hooks before it returns,
 * so the metaclass records kind, abstractness and state in its tp_alloc,
 * which type() calls first.  tp_alloc gets no argument to carry them, so
 * each class creation pushes its record on a per-thread stack around its
 * call of type() and pops it after, on every exit.  Code that runs before
 * the allocation (a collection's gc callbacks or finalizers, started by an
 * allocation inside type()) may create classes of its own: each pushes
 * its own record above and pops it before returning, so the top record is
 * always the innermost creation's.  An allocation takes the top record
 * only if it is for its metaclass and not taken yet, and writes the class
 * into it; the creator then checks the class it got is the one allocated
 * with its record.  An allocation without a record is refused: no class of
 * these metaclasses ever exists without its state. */
typedef struct sw_sealedmeta_record {
    PyTypeObject *meta;
    sw_state *state;
    sw_kind kind;
    int abstract;
    PyObject *cls;      /* borrowed: the class allocated with this record */
    struct sw_sealedmeta_record *outer;  /* the enclosing creation's */
} sw_sealedmeta_record;

static _Thread_local sw_sealedmeta_record *sw_sealedmeta_pending;

/* tp_alloc of both metaclasses.  Named sw_sealedmeta_alloc, not after this file:
 * state.h tells the module's classes by it. */
PyObject *
sw_sealedmeta_alloc(PyTypeObject *meta, Py_ssize_t nitems)
{
    sw_sealedmeta_record *record = sw_sealedmeta_pending;
    PyObject *cls;
    sw_type *t;

    if (record == NULL || record->meta != meta || record->cls != NULL) {
        PyErr_Format(PyExc_SystemError,
                     "a class of %s can only be created by calling %s",
                     meta->tp_name, meta->tp_name);
        return NULL;
    }
    cls = PyType_GenericAlloc(meta, nitems);
    if (cls == NULL) {
        return NULL;
    }
    t = (sw_type *)cls;
    t->state = record->state;
    t->kind = record->kind;
    t->abstract = record->abstract;
    t->is_model = record->state->installing;
    t->ready = 0;
    record->cls = cls;
    return cls;
}

/* 0 when `t` may be instantiated or subclassed; else TypeError. */
static int
sw_sealedmeta_check_ready(sw_type *t)
{
    if (SW_LOAD_FLAG(t->ready)) {
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
sw_sealedmeta_check_ready_bases(PyTypeObject *meta, PyObject *bases)
{
    Py_ssize_t i;

    for (i = 0; i < PyTuple_GET_SIZE(bases); i++) {
        PyObject *base = PyTuple_GET_ITEM(bases, i);
        if (Py_TYPE(base) == meta
            && sw_sealedmeta_check_ready((sw_type *)base) < 0) {
            return -1;
        }
    }
    return 0;
}

/* 1 when `cls` has a class from outside the model (a mixin) in its MRO. */
static int
sw_sealedmeta_has_foreign_base(PyTypeObject *cls, PyTypeObject *meta,
                               PyTypeObject *const *model_types)
{
    Py_ssize_t i;

    for (i = 1; i < PyTuple_GET_SIZE(cls->tp_mro); i++) {
        PyTypeObject *k = (PyTypeObject *)PyTuple_GET_ITEM(cls->tp_mro, i);
        if (k != &PyBaseObject_Type && Py_TYPE(k) != meta
            && !sw_sealedmeta_is_one_of(k, model_types)) {
            return 1;
        }
    }
    return 0;
}

static int
sw_sealedmeta_add_getset(PyTypeObject *cls, PyGetSetDef *def)
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

/* `name` looked up along cls's MRO in the model's classes only (the
 * classes of this metaclass and the model's C layouts), skipping mixins:
 * a class hook may have given a mixin an owned member after the check
 * (a new reference, or NULL: with an exception on error). */
static PyObject *
sw_sealedmeta_model_lookup(PyTypeObject *cls, PyTypeObject *meta,
                           PyTypeObject *const *model_types, PyObject *name)
{
    Py_ssize_t i;

    for (i = 0; i < PyTuple_GET_SIZE(cls->tp_mro); i++) {
        PyTypeObject *k = (PyTypeObject *)PyTuple_GET_ITEM(cls->tp_mro, i);
        PyObject *dict, *found;
        int status;

        if (Py_TYPE(k) != meta && !sw_sealedmeta_is_one_of(k, model_types)
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
        status = PyDict_GetItemRef(dict, name, &found);   /* exact str */
        Py_DECREF(dict);
        if (status != 0) {
            return found;
        }
    }
    return NULL;
}

/* A class with a mixin holds every owned member the model defines in its
 * own dict: attribute lookup and CPython's slot updates both stop at the
 * class itself, so a member added to the mixin later (Mix.bits = ...,
 * Mix.__eq__ = ...) changes nothing its instances report.  The values are
 * the model's own objects (sw_sealedmeta_model_lookup). */
static int
sw_sealedmeta_guard_owned_members(PyTypeObject *cls, PyTypeObject *meta,
                                  PyTypeObject *const *model_types,
                                  PyObject *owned, PyGetSetDef *absent_members)
{
    PyObject *iter, *name;
    int status = 0;

    iter = PyObject_GetIter(owned);   /* a frozenset of exact str */
    if (iter == NULL) {
        return -1;
    }
    while (status == 0 && (name = PyIter_Next(iter)) != NULL) {
        PyObject *member = sw_sealedmeta_model_lookup(cls, meta, model_types,
                                                      name);
        PyGetSetDef *absent;

        if (member == NULL && PyErr_Occurred()) {
            status = -1;
        }
        else if (member == NULL && absent_members != NULL) {
            for (absent = absent_members; absent->name != NULL; absent++) {
                if (PyUnicode_CompareWithASCIIString(name, absent->name) == 0) {
                    status = sw_sealedmeta_add_getset(cls, absent);
                }
            }
        }
        if (member != NULL) {
            /* Only where the class defines nothing of its own (exact str
             * keys: no code runs; the result is not used). */
            if (PyDict_SetDefault(cls->tp_dict, name, member) == NULL) {
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

/* 1 when one of `bases` is a class of `meta`: a user class must extend the
 * model through one of them. */
static int
sw_sealedmeta_has_own_base(PyTypeObject *meta, PyObject *bases)
{
    Py_ssize_t i;

    for (i = 0; i < PyTuple_GET_SIZE(bases); i++) {
        if (Py_TYPE(PyTuple_GET_ITEM(bases, i)) == meta) {
            return 1;
        }
    }
    return 0;
}

/* What creating a class means for both metaclasses: prepare the namespace
 * (attrs.c: exact str names, __slots__ read once, own attribute storage),
 * refuse owned members, run type() itself with the class's record taken
 * at allocation, then seal the new class's attribute accessors.  Model
 * classes (st->installing) skip the checks.  The caller has refused
 * unfinished bases, and finishes the class and sets `ready`. */
static PyObject *
sw_sealedmeta_build_class(const sw_sealedmeta_ops *ops, PyTypeObject *meta,
                          sw_state *st, PyTypeObject *const *model_types,
                          PyObject *name, PyObject *bases, PyObject *ns,
                          PyObject *kwds, sw_kind kind, int abstract)
{
    const char *clsname = PyUnicode_AsUTF8(name);
    PyObject *owned = ops->owned_names(st);   /* borrowed */
    sw_sealedmeta_record record = {meta, st, kind, abstract, NULL, NULL};
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
        && sw_sealedmeta_check_owned_members(owned, model_types, meta,
                                             clsname, bases, prepared) < 0) {
        Py_DECREF(prepared);
        return NULL;
    }
    args = PyTuple_Pack(3, name, bases, prepared);
    Py_DECREF(prepared);
    if (args == NULL) {
        return NULL;
    }
    record.outer = sw_sealedmeta_pending;
    sw_sealedmeta_pending = &record;
    cls = PyType_Type.tp_new(meta, args, kwds);
    /* Also when type() failed before allocating.  Creations nested in
     * type() popped their own records. */
    assert(sw_sealedmeta_pending == &record);
    sw_sealedmeta_pending = record.outer;
    Py_DECREF(args);
    if (cls == NULL) {
        return NULL;
    }
    t = (sw_type *)cls;
    if (record.cls != cls || t->state != st) {
        /* Not the class allocated with this record: never usable. */
        PyErr_Format(PyExc_SystemError,
                     "class %s was not allocated by its metaclass", clsname);
        Py_DECREF(cls);
        return NULL;
    }
    if (!t->is_model
        && (sw_attrs_setup_class((PyTypeObject *)cls, own_attrs,
                                 &t->slot_defs) < 0
            || (sw_sealedmeta_has_foreign_base((PyTypeObject *)cls, meta,
                                               model_types)
                && sw_sealedmeta_guard_owned_members(
                       (PyTypeObject *)cls, meta, model_types, owned,
                       ops->absent_members) < 0))) {
        Py_DECREF(cls);
        return NULL;
    }
    if (sw_classcheck_bind((PyTypeObject *)cls) < 0) {
        Py_DECREF(cls);
        return NULL;
    }
    return cls;
}

/* tp_new of both metaclasses: type(name, bases, namespace, **kwds) for a
 * sealed class.  The checks run in the order their errors are reported. */
PyObject *
sw_sealedmeta_new(const sw_sealedmeta_ops *ops, PyTypeObject *meta,
                  PyObject *args, PyObject *kwds)
{
    sw_state *st = sw_state_of_type(meta);
    PyTypeObject *model_types[SW_SEALEDMETA_MODEL_TYPES];
    PyObject *name, *bases, *ns, *rest = NULL, *cls;
    sw_kind kind = SW_KIND_NONE;
    int abstract;

    if (sw_state_check(st) < 0) {
        return NULL;
    }
    if (!PyArg_ParseTuple(args, ops->args_format, &name, &PyTuple_Type,
                          &bases, &PyDict_Type, &ns)) {
        return NULL;
    }
    /* A metaclass that reads its bases (the descriptor kind) refuses
     * unfinished ones itself, after the checks that come before. */
    if (ops->check_bases != NULL) {
        if (ops->check_bases(meta, name, bases, &kind) < 0) {
            return NULL;
        }
    }
    else if (sw_sealedmeta_check_ready_bases(meta, bases) < 0) {
        return NULL;
    }
    /* Without a class keyword, only the model's own root is abstract. */
    abstract = ops->keyword != NULL ? 1 : st->installing;
    /* Copied even without a keyword: __init_subclass__ sees the rest. */
    if (sw_sealedmeta_parse_keywords(kwds, ops->keyword, &abstract,
                                     &rest) < 0) {
        return NULL;
    }
    if (!st->installing && !sw_sealedmeta_has_own_base(meta, bases)) {
        PyErr_Format(PyExc_TypeError,
                     "class %U: a class made by %s must derive from %s",
                     name, ops->name, ops->root_name);
        goto error;
    }
    if (ops->check_class != NULL
        && ops->check_class(st, name, kind, abstract) < 0) {
        goto error;
    }
    ops->model_types(st, model_types);
    cls = sw_sealedmeta_build_class(ops, meta, st, model_types, name, bases,
                                    ns, rest, kind, abstract);
    Py_XDECREF(rest);
    if (cls != NULL && ops->finish_class != NULL
        && ops->finish_class((PyTypeObject *)cls) < 0) {
        Py_CLEAR(cls);
    }
    if (cls != NULL) {
        /* Hooks may have handed the class to other threads. */
        SW_STORE_FLAG(((sw_type *)cls)->ready, 1);
    }
    return cls;

error:
    Py_XDECREF(rest);
    return NULL;
}

/* tp_init of both metaclasses. */
int
sw_sealedmeta_init(PyObject *self, PyObject *args,
                   PyObject *Py_UNUSED(kwds))
{
    /* Keywords were consumed by tp_new (and __init_subclass__). */
    return PyType_Type.tp_init(self, args, NULL);
}

/* ---- class attribute protection ----------------------------------------- */

int
sw_sealedmeta_setattro(const sw_sealedmeta_ops *ops, PyObject *self,
                       PyObject *name, PyObject *value)
{
    sw_type *t = (sw_type *)self;
    sw_state *st = sw_state_of_type((PyTypeObject *)self);
    int owned;

    if (sw_state_check(st) < 0) {
        return -1;
    }
    if (t->is_model) {
        PyErr_Format(PyExc_AttributeError,
                     "cannot %s attribute %R of %s: %s",
                     value ? "set" : "delete", name,
                     ((PyTypeObject *)self)->tp_name, ops->frozen_reason);
        return -1;
    }
    owned = sw_sealedmeta_is_owned_class_attribute(
        ops->owned_names(st), name);
    if (owned < 0) {
        return -1;
    }
    if (owned) {
        PyErr_Format(PyExc_AttributeError,
                     "cannot %s %R on class %s: it is owned by the %s",
                     value ? "set" : "delete", name,
                     ((PyTypeObject *)self)->tp_name, ops->owner);
        return -1;
    }
    return PyType_Type.tp_setattro(self, name, value);
}

/* ---- construction ------------------------------------------------------- */

/* Construct an instance of `cls` as a transaction: allocate, begin (the
 * object is under construction), run the most-derived __init__, finish.
 * When __init__ or finish fails, the object is marked rejected inside its
 * critical section before the reference is dropped: a reference __init__
 * leaked keeps a rejected, unusable object.  finish returning 1 means
 * *result (a new reference) is the result instead of the object.
 * `option` is passed to begin. */
PyObject *
sw_sealedmeta_construct(const sw_sealedmeta_ops *ops, PyObject *cls,
                        PyObject *args, PyObject *kwds, int option)
{
    sw_type *t = (sw_type *)cls;
    PyTypeObject *tp = (PyTypeObject *)cls;
    PyObject *obj, *result = NULL;
    int status;

    if (sw_state_check(sw_state_of_type(tp)) < 0) {
        return NULL;
    }
    if (sw_sealedmeta_check_ready(t) < 0) {
        return NULL;
    }
    if (t->abstract) {
        PyErr_Format(PyExc_TypeError,
                     t->is_model && ops->model_abstract_error != NULL
                     ? ops->model_abstract_error : ops->abstract_error,
                     tp->tp_name);
        return NULL;
    }
    obj = tp->tp_alloc(tp, 0);
    if (obj == NULL) {
        return NULL;
    }
    status = ops->begin(obj, t, option);
    if (status == 0) {
        status = tp->tp_init(obj, args, kwds);
    }
    if (status == 0) {
        status = ops->finish(obj, t, &result);
    }
    if (status != 0) {
        Py_BEGIN_CRITICAL_SECTION(obj);
        ops->reject(obj);
        Py_END_CRITICAL_SECTION();
        Py_DECREF(obj);
        return status == 1 ? result : NULL;
    }
    return obj;
}

/* ---- the per-class layout ----------------------------------------------- */

/* The registry snapshot and bound methods are only ever set on descriptor
 * classes (registry.c, classbound.c); a rule class keeps them NULL.  Both
 * kinds of class hold their isinstance/issubclass checks (classcheck.c). */
int
sw_sealedmeta_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(((sw_type *)self)->snapshot);
    Py_VISIT(((sw_type *)self)->bound[0]);
    Py_VISIT(((sw_type *)self)->bound[1]);
    Py_VISIT(((sw_type *)self)->checks[0]);
    Py_VISIT(((sw_type *)self)->checks[1]);
    return PyType_Type.tp_traverse(self, visit, arg);
}

/* Runs only in the collector (free-threaded builds: with the world
 * stopped), so the lock-free readers of bound and checks see either the
 * object or NULL, and fall back to the generic path on NULL. */
int
sw_sealedmeta_clear(PyObject *self)
{
    Py_CLEAR(((sw_type *)self)->snapshot);
    Py_CLEAR(((sw_type *)self)->bound[0]);
    Py_CLEAR(((sw_type *)self)->bound[1]);
    Py_CLEAR(((sw_type *)self)->checks[0]);
    Py_CLEAR(((sw_type *)self)->checks[1]);
    return PyType_Type.tp_clear(self);
}

/* The body of both metaclasses' tp_dealloc (each keeps its own slot
 * function: it tells the metaclasses apart, sw_meta_is_descriptor_class). */
void
sw_sealedmeta_dealloc(PyObject *self)
{
    PyTypeObject *meta = Py_TYPE(self);
    PyGetSetDef *slot_defs = ((sw_type *)self)->slot_defs;

    Py_CLEAR(((sw_type *)self)->snapshot);
    Py_CLEAR(((sw_type *)self)->bound[0]);
    Py_CLEAR(((sw_type *)self)->bound[1]);
    Py_CLEAR(((sw_type *)self)->checks[0]);
    Py_CLEAR(((sw_type *)self)->checks[1]);
    PyType_Type.tp_dealloc(self);
    /* The getsets pointing into slot_defs held the class: they are gone. */
    PyMem_Free(slot_defs);
    /* type's dealloc does not release a heap metaclass. */
    Py_DECREF(meta);
}
