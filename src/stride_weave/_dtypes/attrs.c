/* attrs.c: the attributes user subclasses add to descriptors and rules.
 *
 * A subclass __init__ may set its own fields while the object is being
 * built; once sealed they are read-only, and no path may write them:
 * not setattr, not a __slots__ member descriptor's __set__, not vars(),
 * and not object.__setattr__ (which since CPython 3.13 no longer refuses
 * to skip a C type's tp_setattro for ordinary objects).  So a subclass
 * without __slots__ does not get CPython's instance dict: the metaclass
 * gives it __slots__ = () and the attributes live in the object's own
 * `attrs` dict, reached through the class's tp_getattro and __dict__
 * accessor here.  __slots__ members are wrapped in accessors that refuse
 * writes once sealed.  A class may not get CPython's instance dict at all
 * (sealedmeta.c refuses a "__dict__" slot and a mixin that brings one).
 *
 * Sealing is one step with no window.  The sealer (registry.c for
 * descriptors, rule.c for rules) first sets the build state to SW_SEALING
 * inside the object's critical section: from then on every write (setattr,
 * __dict__ assignment, a __slots__ accessor) is refused, whichever thread,
 * finalizer or hook attempts it, even while the sealer waits for a lock.
 * sw_attrs_freeze then copies `attrs`, checking the names (exact str, never
 * a model-owned name); the copy replaces `attrs` in the same step that
 * marks the object finished, and the displaced dict is released only after
 * that (releasing it can run finalizers).  A reference handed out while
 * building (vars(self), self.__dict__, gc.get_referents(self)) no longer
 * reaches the object, and the copy is neither tracked by the garbage
 * collector nor visited as a container: the object's traverse visits its
 * entries instead (sw_attrs_traverse).  Nothing in Python can reach the
 * sealed dict, so nothing can change it.
 *
 * Free-threaded builds: `attrs` is created lazily and may be replaced
 * (`__dict__ = {...}`) while the object is built, so it is read and written
 * only inside the object's critical section, and readers take a strong
 * reference before using it.  Every write checks the build state inside
 * that critical section, where SW_SEALING is also set, so a write is
 * either refused or lands before the freeze copies the attributes.
 *
 * Raw __slots__ members: type() makes a member descriptor per slot, which
 * writes the slot past every check.  The class's own members are marked
 * read-only before the class can have an instance (sw_attrs_setup_class
 * runs before the metaclass marks it ready), whether or not a class hook
 * kept or removed them, and the accessors that replace them write the slot
 * themselves.  A mixin can bring no members of its own: a class deriving
 * from the model's C layouts is refused as a base (sealedmeta.c).
 */
#include "attrs.h"
#include "descriptor.h"
#include "rule.h"

#include <structmember.h>

/* The object's build state, whichever layout it has. */
static int
sw_attrs_building(PyObject *obj)
{
    if (sw_rule_is_class(Py_TYPE(obj))) {
        return SW_LOAD_FLAG(((sw_rule *)obj)->build_state) == SW_BUILDING;
    }
    return SW_LOAD_FLAG(((sw_descriptor *)obj)->build_state) == SW_BUILDING;
}

static int
sw_attrs_refuse_sealed(PyObject *obj, PyObject *name, PyObject *value)
{
    PyErr_Format(PyExc_AttributeError,
                 "cannot %s attribute %R of a %s: it is immutable once "
                 "constructed", value ? "set" : "delete", name,
                 Py_TYPE(obj)->tp_name);
    return -1;
}

static PyObject **
sw_attrs_slot(PyObject *obj)
{
    if (sw_rule_is_class(Py_TYPE(obj))) {
        return &((sw_rule *)obj)->attrs;
    }
    return &((sw_descriptor *)obj)->attrs;
}

/* tp_getattro of classes that keep attributes in `attrs`: the generic
 * lookup with `attrs` standing in for the instance dict; then, for a
 * descriptor, what its class's __getattr__ does (CPython calls that only
 * from its own slot functions, which this replaces). */
static PyObject *
sw_attrs_getattro(PyObject *self, PyObject *name)
{
    PyObject *attrs, *result;
#ifdef SW_FIXED_SLOTS
    int fallback = !sw_rule_is_class(Py_TYPE(self));
#else
    int fallback = 0;
#endif

    Py_BEGIN_CRITICAL_SECTION(self);
    attrs = Py_XNewRef(*sw_attrs_slot(self));
    Py_END_CRITICAL_SECTION();
    result = _PyObject_GenericGetAttrWithDict(self, name, attrs, fallback);
    Py_XDECREF(attrs);
#ifdef SW_FIXED_SLOTS
    if (result == NULL && fallback && !PyErr_Occurred()) {
        result = sw_descriptor_getattr(self, name);
    }
#endif
    return result;
}

/* In *fresh, a new empty dict when the object has no attribute dict yet,
 * else NULL.  Made outside the object's critical section and installed by
 * the caller inside it if still needed: allocating may start a collection
 * whose finalizers could install a dict meanwhile.  Once there, the
 * attribute dict never goes back to NULL (it can only be replaced). */
static int
sw_attrs_new_dict_if_missing(PyObject *self, PyObject **attrs,
                             PyObject **fresh)
{
    int missing;

    (void)self;   /* a GIL build of 3.13 does not use it in the macro */
    *fresh = NULL;
    Py_BEGIN_CRITICAL_SECTION(self);
    missing = *attrs == NULL;
    Py_END_CRITICAL_SECTION();
    if (missing) {
        *fresh = PyDict_New();
        if (*fresh == NULL) {
            return -1;
        }
    }
    return 0;
}

/* The generic assignment, into `attrs` for classes that own attributes.
 * The caller has checked the object is still being built.  The name is
 * used as an exact str (the freeze stores it so anyway), so neither the
 * type lookup nor the dict operation runs a str subclass's methods. */
int
sw_attrs_setattr(PyObject *self, PyObject **attrs, PyObject *name,
                 PyObject *value)
{
    PyObject *exact = NULL, *fresh = NULL, *dict = NULL;
    int own = Py_TYPE(self)->tp_getattro == sw_attrs_getattro;
    int status;

    if (own && PyUnicode_Check(name)) {
        exact = sw_exact_str(name);
        if (exact == NULL) {
            return -1;
        }
        name = exact;
    }
    if (own && value != NULL
        && sw_attrs_new_dict_if_missing(self, attrs, &fresh) < 0) {
        Py_XDECREF(exact);
        return -1;
    }
    Py_BEGIN_CRITICAL_SECTION(self);
    if (!sw_attrs_building(self)) {
        /* Sealed (or being sealed) by another thread since the caller
         * checked. */
        status = sw_attrs_refuse_sealed(self, name, value);
    }
    else if (!own) {
        status = PyObject_GenericSetAttr(self, name, value);
    }
    else {
        if (*attrs == NULL && fresh != NULL) {
            *attrs = fresh;
            fresh = NULL;
        }
        if (*attrs == NULL) {
            /* Deleting from no attributes: the generic path reports it. */
            status = PyObject_GenericSetAttr(self, name, value);
        }
        else {
            /* Our own reference: a descriptor's __set__ (user code) may
             * replace the object's __dict__ meanwhile. */
            dict = Py_NewRef(*attrs);
            status = _PyObject_GenericSetAttrWithDict(self, name, value, dict);
        }
    }
    Py_END_CRITICAL_SECTION();
    /* Released outside: freeing a replaced dict may run finalizers. */
    Py_XDECREF(dict);
    Py_XDECREF(fresh);
    Py_XDECREF(exact);
    return status;
}

/* ---- __dict__ ----------------------------------------------------------------- */

static PyObject *
sw_attrs_dict_get(PyObject *self, void *Py_UNUSED(closure))
{
    PyObject **attrs = sw_attrs_slot(self);
    PyObject *dict, *fresh, *view, *proxy;
    int building;

    if (sw_attrs_new_dict_if_missing(self, attrs, &fresh) < 0) {
        return NULL;
    }
    Py_BEGIN_CRITICAL_SECTION(self);
    building = sw_attrs_building(self);
    if (*attrs == NULL && building && fresh != NULL) {
        *attrs = fresh;
        fresh = NULL;
    }
    dict = Py_XNewRef(*attrs);
    Py_END_CRITICAL_SECTION();
    Py_XDECREF(fresh);
    if (building) {
        if (dict == NULL) {   /* only if the collector cleared the object */
            PyErr_Format(PyExc_SystemError, "%s has no attribute dict",
                         Py_TYPE(self)->tp_name);
        }
        return dict;
    }
    /* Sealed (or being sealed): a read-only view of a copy, so not even
     * gc.get_referents of the view reaches the object's own dict (an
     * object sealed without attributes shows an empty one). */
    view = dict != NULL ? PyDict_Copy(dict) : PyDict_New();
    Py_XDECREF(dict);
    if (view == NULL) {
        return NULL;
    }
    proxy = PyDictProxy_New(view);
    Py_DECREF(view);
    return proxy;
}

static int
sw_attrs_dict_set(PyObject *self, PyObject *value, void *Py_UNUSED(closure))
{
    PyObject *old = NULL;
    int status = 0;

    if (value != NULL && !PyDict_Check(value) && sw_attrs_building(self)) {
        PyErr_Format(PyExc_TypeError,
                     "__dict__ must be set to a dict, got %s",
                     Py_TYPE(value)->tp_name);
        return -1;
    }
    Py_BEGIN_CRITICAL_SECTION(self);
    if (!sw_attrs_building(self)) {
        PyErr_Format(PyExc_AttributeError,
                     "cannot %s __dict__ of a %s: it is immutable once "
                     "constructed", value ? "set" : "delete",
                     Py_TYPE(self)->tp_name);
        status = -1;
    }
    else if (value == NULL) {
        PyErr_SetString(PyExc_TypeError,
                        "__dict__ must be set to a dict, got a deletion");
        status = -1;
    }
    else {
        old = *sw_attrs_slot(self);
        *sw_attrs_slot(self) = Py_NewRef(value);
    }
    Py_END_CRITICAL_SECTION();
    Py_XDECREF(old);   /* outside: freeing the old dict may run finalizers */
    return status;
}

static PyGetSetDef sw_attrs_dict_def = {
    "__dict__", sw_attrs_dict_get, sw_attrs_dict_set,
    PyDoc_STR("The object's own attributes (a read-only view once sealed)."),
    NULL,
};

/* ---- identity slots of the C layouts (descriptors and rules) ------------------ */

/* The C layouts define these slots themselves, so every member they stand
 * for (__class__, __hash__, __eq__, ..., __getattribute__) is found in the
 * model's own dict, ahead of any mixin in a subclass's MRO. */

static PyObject *
sw_attrs_class_get(PyObject *self, void *Py_UNUSED(closure))
{
    return Py_NewRef(Py_TYPE(self));
}

/* object.__setattr__(obj, "__class__", cls) reaches this setter on every
 * CPython (3.13+ no longer routes it through tp_setattro first). */
static int
sw_attrs_class_set(PyObject *self, PyObject *value, void *Py_UNUSED(closure))
{
    PyErr_Format(PyExc_AttributeError,
                 "cannot %s __class__ of a %s: its class is part of its "
                 "identity", value ? "assign" : "delete",
                 Py_TYPE(self)->tp_name);
    return -1;
}

PyGetSetDef sw_attrs_sealed_getset[] = {
    {"__class__", sw_attrs_class_get, sw_attrs_class_set,
     PyDoc_STR("The object's class (cannot be reassigned)."), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

Py_hash_t
sw_attrs_identity_hash(PyObject *self)
{
    return Py_HashPointer(self);
}

PyObject *
sw_attrs_identity_richcompare(PyObject *self, PyObject *other, int op)
{
    if (op == Py_EQ) {
        return Py_NewRef(self == other ? Py_True : Py_False);
    }
    if (op == Py_NE) {
        return Py_NewRef(self != other ? Py_True : Py_False);
    }
    Py_RETURN_NOTIMPLEMENTED;
}

/* ---- __slots__ ------------------------------------------------------------------ */

/* type() exposes each __slots__ entry as a member descriptor whose __set__
 * writes the slot directly, past tp_setattro.  The class's members are
 * made read-only (so a raw member descriptor, wherever a hook kept it,
 * refuses every write) and the ones in the class's dict are replaced by
 * these getsets (closure: the class's PyMemberDef), which write the slot
 * themselves while the object is being built and refuse once it is
 * sealed or being sealed. */
static PyObject *
sw_attrs_slot_get(PyObject *self, void *closure)
{
    return PyMember_GetOne((const char *)self, (PyMemberDef *)closure);
}

static int
sw_attrs_slot_set(PyObject *self, PyObject *value, void *closure)
{
    PyMemberDef *def = (PyMemberDef *)closure;
    PyObject **slot, *old = NULL;
    int status = 0;

    /* What PyMember_SetOne does for T_OBJECT_EX (the only type type()
     * gives a slot, sw_attrs_wrap_slot_members), with the sealed check in
     * the same critical section. */
    slot = (PyObject **)((char *)self + def->offset);
    Py_BEGIN_CRITICAL_SECTION(self);
    if (!sw_attrs_building(self)) {
        PyErr_Format(PyExc_AttributeError,
                     "cannot %s attribute '%s' of a %s: it is immutable once "
                     "constructed", value ? "set" : "delete", def->name,
                     Py_TYPE(self)->tp_name);
        status = -1;
    }
    else if (value == NULL && *slot == NULL) {
        PyErr_Format(PyExc_AttributeError,
                     "'%s' object has no attribute '%s'",
                     Py_TYPE(self)->tp_name, def->name);
        status = -1;
    }
    else {
        old = *slot;
        SW_STORE_PTR(*slot, Py_XNewRef(value));
    }
    Py_END_CRITICAL_SECTION();
    Py_XDECREF(old);   /* outside: may run a finalizer */
    return status;
}

/* Make every member of cls read-only, then replace the raw member
 * descriptors still in cls's own dict by sealed accessors.  Runs after
 * the class hooks (type() runs them before it returns) but before the
 * class is marked ready, so before it can have any instance: a raw member
 * a hook kept, deleted or replaced has never been able to write anything,
 * and is read-only from here on.  The getsets point into an array stored
 * in *defs_out at once, which the class owns and frees when it dies (even
 * if this fails half way). */
static int
sw_attrs_wrap_slot_members(PyTypeObject *cls, PyGetSetDef **defs_out)
{
    PyMemberDef *m;
    PyGetSetDef *defs;
    Py_ssize_t n = 0, i = 0;

    *defs_out = NULL;
    if (cls->tp_members == NULL) {
        return 0;
    }
    for (m = cls->tp_members; m->name != NULL; m++) {
        /* The raw descriptors read the flags of this very definition. */
        m->flags |= READONLY;
        n++;
    }
    if (n == 0) {
        return 0;
    }
    defs = PyMem_Calloc((size_t)n + 1, sizeof(PyGetSetDef));
    if (defs == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *defs_out = defs;
    for (m = cls->tp_members; m->name != NULL; m++) {
        PyObject *current = NULL, *getset;
        int found, status;

        if (m->type != T_OBJECT_EX) {
            continue;   /* not a __slots__ entry: stays read-only */
        }
        found = PyDict_GetItemStringRef(cls->tp_dict, m->name, &current);
        if (found < 0) {
            return -1;
        }
        if (found == 0 || !Py_IS_TYPE(current, &PyMemberDescr_Type)) {
            /* A hook deleted or replaced it: the slot is left unreachable
             * by name, as the hook made it. */
            Py_XDECREF(current);
            continue;
        }
        Py_DECREF(current);   /* the class's dict keeps it */
        defs[i].name = m->name;
        defs[i].get = sw_attrs_slot_get;
        defs[i].set = sw_attrs_slot_set;
        defs[i].doc = m->doc;
        defs[i].closure = m;
        getset = PyDescr_NewGetSet(cls, &defs[i]);
        if (getset == NULL) {
            return -1;
        }
        status = PyDict_SetItemString(cls->tp_dict, m->name, getset);
        Py_DECREF(getset);
        if (status < 0) {
            return -1;
        }
        i++;
    }
    return 0;
}

/* ---- class setup, called by the metaclasses ---------------------------------------- */

/* An exact str copy of a __slots__ entry (new reference); other types
 * are passed on for type() to report. */
static PyObject *
sw_attrs_exact_slots(PyObject *slots)
{
    PyObject *result;
    Py_ssize_t i, n = PyTuple_GET_SIZE(slots);

    result = PyTuple_New(n);
    if (result == NULL) {
        return NULL;
    }
    for (i = 0; i < n; i++) {
        PyObject *slot = PyTuple_GET_ITEM(slots, i);
        slot = PyUnicode_Check(slot) ? sw_exact_str(slot) : Py_NewRef(slot);
        if (slot == NULL) {
            Py_DECREF(result);
            return NULL;
        }
        PyTuple_SET_ITEM(result, i, slot);
    }
    return result;
}

/* Before the class is created: return a new reference to a copy of the
 * namespace whose keys are exact str (a str subclass key is copied without
 * running its methods; any other key is a TypeError, since a key with its
 * own __hash__/__eq__ would take part in every attribute lookup of the
 * class) and whose __slots__ is an exact str or a tuple (an iterable is
 * read here, once, so type() and the owned-member check see the same
 * names).  A namespace without __slots__ asks for attributes: it gets
 * __slots__ = () so CPython adds no instance dict, and *own_attrs = 1. */
PyObject *
sw_attrs_prepare_namespace(PyObject *ns, const char *clsname, int *own_attrs)
{
    PyObject *copy, *slots, *declared = NULL, *key, *value;
    Py_ssize_t pos = 0;
    int status = 0;

    *own_attrs = 0;
    copy = PyDict_New();
    if (copy == NULL) {
        return NULL;
    }
    /* No Python code runs in the loop (exact str keys, no collection: only
     * the error paths allocate objects, and they stop it), so the borrowed
     * key and value stay valid; free-threaded builds iterate inside the
     * namespace's critical section, as another thread may hold it. */
    Py_BEGIN_CRITICAL_SECTION(ns);
    while (status == 0 && PyDict_Next(ns, &pos, &key, &value)) {
        PyObject *exact;

        if (!PyUnicode_Check(key)) {
            PyErr_Format(PyExc_TypeError,
                         "class %s: attribute names must be str, got a key "
                         "of type %s", clsname, Py_TYPE(key)->tp_name);
            status = -1;
            break;
        }
        exact = sw_exact_str(key);
        if (exact == NULL) {
            status = -1;
            break;
        }
        status = PyDict_Contains(copy, exact);
        if (status > 0) {
            PyErr_Format(PyExc_TypeError,
                         "class %s: the namespace names %R twice (a str "
                         "subclass key equal to another key)", clsname, exact);
            status = -1;
        }
        else if (status == 0) {
            status = PyDict_SetItem(copy, exact, value);
        }
        Py_DECREF(exact);
    }
    Py_END_CRITICAL_SECTION();
    if (status < 0) {
        Py_DECREF(copy);
        return NULL;
    }
    /* A strong reference: iterating a user's __slots__ runs its code. */
    status = PyDict_GetItemStringRef(copy, "__slots__", &declared);
    if (status < 0) {
        Py_DECREF(copy);
        return NULL;
    }
    if (declared == NULL) {
        *own_attrs = 1;
        slots = PyTuple_New(0);
    }
    else if (PyUnicode_Check(declared)) {
        slots = sw_exact_str(declared);
    }
    else {
        PyObject *items = PySequence_Tuple(declared);
        slots = items ? sw_attrs_exact_slots(items) : NULL;
        Py_XDECREF(items);
    }
    Py_XDECREF(declared);
    if (slots == NULL) {
        Py_DECREF(copy);
        return NULL;
    }
    status = PyDict_SetItemString(copy, "__slots__", slots);
    Py_DECREF(slots);
    if (status < 0) {
        Py_DECREF(copy);
        return NULL;
    }
    return copy;
}

/* ---- sealing ----------------------------------------------------------------- */

/* One entry of sw_attrs_freeze: checked, then stored under its exact str. */
static int
sw_attrs_freeze_entry(PyObject *self, PyObject *frozen, PyObject *key,
                      PyObject *value, PyObject *owned)
{
    PyObject *exact;
    int hit;

    if (!PyUnicode_Check(key)) {
        PyErr_Format(PyExc_TypeError,
                     "%s: attribute names must be str, got a key of "
                     "type %s in its __dict__", Py_TYPE(self)->tp_name,
                     Py_TYPE(key)->tp_name);
        return -1;
    }
    exact = sw_exact_str(key);
    if (exact == NULL) {
        return -1;
    }
    hit = PySet_Contains(owned, exact);
    if (hit == 0) {
        hit = PyDict_Contains(frozen, exact);
        hit = hit > 0 ? 2 : hit;
    }
    if (hit == 0 && PyDict_SetItem(frozen, exact, value) < 0) {
        hit = -1;
    }
    if (hit == 1) {
        PyErr_Format(PyExc_TypeError,
                     "%s: its __dict__ holds %R, which is owned by the "
                     "model and cannot be an attribute of the object",
                     Py_TYPE(self)->tp_name, exact);
    }
    else if (hit == 2) {
        PyErr_Format(PyExc_TypeError,
                     "%s: its __dict__ names %R twice (a str subclass "
                     "key equal to another key)", Py_TYPE(self)->tp_name,
                     exact);
    }
    Py_DECREF(exact);
    return hit == 0 ? 0 : -1;
}

/* The frozen copy of `attrs` (the object's attribute dict, or NULL) for
 * the seal, in *frozen: a new, untracked dict with exact str keys, or NULL
 * when there are no attributes.  Every name must be a str that is not in
 * `owned` (compared by value: a str subclass is copied without running its
 * methods).  Called inside the object's critical section once its build
 * state is SW_SEALING, so no write reaches the object meanwhile (a
 * finalizer run by the allocation below is refused too); the caller
 * installs the copy (sw_attrs_install) in the step that finishes the
 * object.  -1 with TypeError or MemoryError changes nothing. */
int
sw_attrs_freeze(PyObject *self, PyObject *attrs, PyObject *owned,
                PyObject **frozen)
{
    PyObject *copy = NULL, *key, *value;
    Py_ssize_t pos = 0;
    int status = 0;

    *frozen = NULL;
    if (attrs == NULL) {
        return 0;
    }
    Py_INCREF(attrs);
    copy = PyDict_New();
    if (copy == NULL) {
        Py_DECREF(attrs);
        return -1;
    }
    /* No Python code runs in the loop: the names become exact str
     * (hashing and comparing them runs nothing) and no object that a
     * collection counts is allocated, except by an error, which ends the
     * loop.  A dict a user kept (vars(self)) may be written by another
     * thread: free-threaded builds copy it inside its critical section. */
    Py_BEGIN_CRITICAL_SECTION(attrs);
    while (status == 0 && PyDict_Next(attrs, &pos, &key, &value)) {
        status = sw_attrs_freeze_entry(self, copy, key, value, owned);
    }
    Py_END_CRITICAL_SECTION();
    Py_DECREF(attrs);
    if (status < 0) {
        Py_DECREF(copy);
        return -1;
    }
    PyObject_GC_UnTrack(copy);
    *frozen = copy;
    return 0;
}

/* tp_traverse helper: a sealed object's frozen attributes are visited entry
 * by entry (the dict itself is untracked and reachable from nowhere). */
int
sw_attrs_traverse(PyObject *attrs, int sealed, visitproc visit, void *arg)
{
    PyObject *key, *value;
    Py_ssize_t pos = 0;

    if (attrs == NULL) {
        return 0;
    }
    if (!sealed) {
        Py_VISIT(attrs);
        return 0;
    }
    while (PyDict_Next(attrs, &pos, &key, &value)) {
        Py_VISIT(key);
        Py_VISIT(value);
    }
    return 0;
}

/* After the class is created, before it is marked ready: route
 * attributes through `attrs` (unless a foreign base brought an instance
 * dict), seal __dict__ and __slots__.  Class hooks may have changed the
 * class's dict: what is released here is released last. */
int
sw_attrs_setup_class(PyTypeObject *cls, int own_attrs, PyGetSetDef **slot_defs)
{
    PyObject *getset = NULL, *added = NULL;
    Py_ssize_t i;
    int status = -1, inherits = 0;

    if (sw_attrs_wrap_slot_members(cls, slot_defs) < 0) {
        return -1;
    }
    /* The __slots__ = () we added is not the user's (a hook may have
     * removed it, or set something else whose release runs code). */
    if (own_attrs) {
        if (PyDict_GetItemStringRef(cls->tp_dict, "__slots__", &added) < 0
            || (added != NULL
                && PyDict_DelItemString(cls->tp_dict, "__slots__") < 0)) {
            goto done;
        }
    }
    /* type() would give a subclass object's getattro back: keep ours. */
    for (i = 1; i < PyTuple_GET_SIZE(cls->tp_mro); i++) {
        PyTypeObject *base = (PyTypeObject *)PyTuple_GET_ITEM(cls->tp_mro, i);
        if (base->tp_getattro == sw_attrs_getattro) {
            inherits = 1;
            break;
        }
    }
    if (cls->tp_dictoffset != 0
        || PyType_HasFeature(cls, Py_TPFLAGS_MANAGED_DICT)) {
        /* sealedmeta.c refuses every way to get one: never seal such a class. */
        PyErr_Format(PyExc_SystemError, "class %s has an instance dict",
                     cls->tp_name);
        goto done;
    }
    if (own_attrs && !inherits) {
        getset = PyDescr_NewGetSet(cls, &sw_attrs_dict_def);
        if (getset == NULL
            || PyDict_SetItemString(cls->tp_dict, "__dict__", getset) < 0) {
            goto done;
        }
    }
    if (own_attrs || inherits) {
        cls->tp_getattro = sw_attrs_getattro;   /* inherits: explicit __slots__ */
    }
    status = 0;
done:
    PyType_Modified(cls);
    Py_XDECREF(getset);
    Py_XDECREF(added);
    return status;
}
