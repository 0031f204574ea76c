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
 * Sealing freezes `attrs` (sw_attrs_freeze): the names are checked (exact
 * str, never a model-owned name), the dict is replaced by a fresh copy, so
 * a reference handed out while building (vars(self), self.__dict__,
 * gc.get_referents(self)) no longer reaches it, and the copy is neither
 * tracked by the garbage collector nor visited as a container: the object's
 * traverse visits its entries instead (sw_attrs_traverse).  Nothing in
 * Python can reach the sealed dict, so nothing can change it.
 *
 * Free-threaded builds: `attrs` is created lazily and may be replaced
 * (`__dict__ = {...}`) while the object is built, so it is read and written
 * only inside the object's critical section, and readers take a strong
 * reference before using it.  Every write re-checks the build state inside
 * that critical section, where the seal is also set (registry.c, rule.c),
 * so a write is either refused or lands before the object is sealed.
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
 * lookup with `attrs` standing in for the instance dict. */
static PyObject *
sw_attrs_getattro(PyObject *self, PyObject *name)
{
    PyObject *attrs, *result;

    Py_BEGIN_CRITICAL_SECTION(self);
    attrs = Py_XNewRef(*sw_attrs_slot(self));
    Py_END_CRITICAL_SECTION();
    result = _PyObject_GenericGetAttrWithDict(self, name, attrs, 0);
    Py_XDECREF(attrs);
    return result;
}

/* The generic assignment, into `attrs` for classes that own attributes.
 * The caller has checked the object is still being built. */
int
sw_attrs_setattr(PyObject *self, PyObject **attrs, PyObject *name,
                 PyObject *value)
{
    int status;

    Py_BEGIN_CRITICAL_SECTION(self);
    if (!sw_attrs_building(self)) {
        /* Sealed by another thread since the caller checked. */
        status = sw_attrs_refuse_sealed(self, name, value);
    }
    else if (Py_TYPE(self)->tp_getattro != sw_attrs_getattro) {
        status = PyObject_GenericSetAttr(self, name, value);
    }
    else {
        if (*attrs == NULL && value != NULL) {
            *attrs = PyDict_New();
        }
        if (*attrs == NULL) {
            /* Deleting from no attributes: the generic path reports it. */
            status = PyErr_Occurred() ? -1
                                      : PyObject_GenericSetAttr(self, name, value);
        }
        else {
            status = _PyObject_GenericSetAttrWithDict(self, name, value, *attrs);
        }
    }
    Py_END_CRITICAL_SECTION();
    return status;
}

/* ---- __dict__ ----------------------------------------------------------------- */

static PyObject *
sw_attrs_dict_get(PyObject *self, void *Py_UNUSED(closure))
{
    PyObject **attrs = sw_attrs_slot(self);
    PyObject *dict, *proxy;
    int building;

    Py_BEGIN_CRITICAL_SECTION(self);
    if (*attrs == NULL) {
        *attrs = PyDict_New();
    }
    dict = Py_XNewRef(*attrs);
    building = sw_attrs_building(self);
    Py_END_CRITICAL_SECTION();
    if (dict == NULL || building) {
        return dict;
    }
    /* Sealed: a read-only view of a copy, so not even gc.get_referents of
     * the view reaches the object's own dict. */
    Py_SETREF(dict, PyDict_Copy(dict));
    if (dict == NULL) {
        return NULL;
    }
    proxy = PyDictProxy_New(dict);
    Py_DECREF(dict);
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
 * writes the slot directly, past tp_setattro; these getsets (closure: the
 * class's PyMemberDef) refuse writes once the object is sealed. */
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

    if (def->type != T_OBJECT_EX) {
        /* Not a __slots__ member type() made: nothing to race on here. */
        if (!sw_attrs_building(self)) {
            PyErr_Format(PyExc_AttributeError,
                         "cannot %s attribute '%s' of a %s: it is immutable "
                         "once constructed", value ? "set" : "delete",
                         def->name, Py_TYPE(self)->tp_name);
            return -1;
        }
        return PyMember_SetOne((char *)self, def, value);
    }
    /* What PyMember_SetOne does for T_OBJECT_EX, with the sealed check in
     * the same critical section (its own would let the seal in between). */
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

/* Replace the slot member descriptors type() put in cls's own dict.  The
 * getsets point into an array stored in *defs_out at once, which the class
 * owns and frees when it dies (even if this fails half way). */
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
        PyObject *current = PyDict_GetItemString(cls->tp_dict, m->name);
        PyObject *getset;

        if (current == NULL || !Py_IS_TYPE(current, &PyMemberDescr_Type)) {
            continue;
        }
        defs[i].name = m->name;
        defs[i].get = sw_attrs_slot_get;
        defs[i].set = sw_attrs_slot_set;
        defs[i].doc = m->doc;
        defs[i].closure = m;
        /* A hook of the class (__init_subclass__, __set_name__) may have
         * kept type()'s own member descriptor before this replaces it:
         * READONLY makes that one refuse writes; ours writes itself. */
        m->flags |= READONLY;
        getset = PyDescr_NewGetSet(cls, &defs[i]);
        if (getset == NULL
            || PyDict_SetItemString(cls->tp_dict, m->name, getset) < 0) {
            Py_XDECREF(getset);
            return -1;
        }
        Py_DECREF(getset);
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
    PyObject *copy, *slots, *key, *value;
    Py_ssize_t pos = 0;
    int status = 0;

    *own_attrs = 0;
    copy = PyDict_New();
    if (copy == NULL) {
        return NULL;
    }
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
        if (PyDict_Contains(copy, exact)) {
            PyErr_Format(PyExc_TypeError,
                         "class %s: the namespace names %R twice (a str "
                         "subclass key equal to another key)", clsname, exact);
            status = -1;
        }
        else {
            status = PyDict_SetItem(copy, exact, value);
        }
        Py_DECREF(exact);
    }
    if (status < 0) {
        Py_DECREF(copy);
        return NULL;
    }
    slots = PyDict_GetItemString(copy, "__slots__");   /* borrowed */
    if (slots == NULL) {
        *own_attrs = 1;
        slots = PyTuple_New(0);
    }
    else if (PyUnicode_Check(slots)) {
        slots = sw_exact_str(slots);
    }
    else {
        /* The copy holds a reference, so user iteration cannot free it. */
        PyObject *items = PySequence_Tuple(slots);
        slots = items ? sw_attrs_exact_slots(items) : NULL;
        Py_XDECREF(items);
    }
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
        hit = PyDict_Contains(frozen, exact) ? 2 : 0;
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

/* Freeze the attributes in *attrs for sealing; called inside the object's
 * critical section right before the seal.  Every name must be a str that
 * is not in `owned` (compared by value: a str subclass is copied without
 * running its methods); the dict is replaced by an untracked copy with
 * exact str keys.  -1 with TypeError leaves *attrs as it was. */
int
sw_attrs_freeze(PyObject *self, PyObject **attrs, PyObject *owned)
{
    PyObject *current, *frozen = NULL, *key, *value;
    Py_ssize_t pos = 0;

    if (*attrs == NULL) {
        return 0;
    }
    /* Our own reference: an allocation below may run a finalizer that
     * replaces the object's __dict__ (and would free the one iterated). */
    current = Py_NewRef(*attrs);
    frozen = PyDict_New();
    if (frozen == NULL) {
        goto error;
    }
    while (PyDict_Next(current, &pos, &key, &value)) {
        Py_INCREF(key);
        Py_INCREF(value);
        if (sw_attrs_freeze_entry(self, frozen, key, value, owned) < 0) {
            Py_DECREF(key);
            Py_DECREF(value);
            goto error;
        }
        Py_DECREF(key);
        Py_DECREF(value);
    }
    PyObject_GC_UnTrack(frozen);
    Py_SETREF(*attrs, frozen);
    Py_DECREF(current);
    return 0;

error:
    Py_XDECREF(frozen);
    Py_DECREF(current);
    return -1;
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

/* After the class is created: route attributes through `attrs` (unless a
 * foreign base brought an instance dict), seal __dict__ and __slots__. */
int
sw_attrs_setup_class(PyTypeObject *cls, int own_attrs, PyGetSetDef **slot_defs)
{
    PyObject *getset = NULL;
    Py_ssize_t i;
    int status, inherits = 0;

    /* The __slots__ = () we added is not the user's. */
    if (own_attrs && PyDict_DelItemString(cls->tp_dict, "__slots__") < 0) {
        return -1;
    }
    /* type() would give a subclass object's getattro back: keep ours. */
    for (i = 1; i < PyTuple_GET_SIZE(cls->tp_mro); i++) {
        PyTypeObject *base = (PyTypeObject *)PyTuple_GET_ITEM(cls->tp_mro, i);
        if (base->tp_getattro == sw_attrs_getattro) {
            inherits = 1;
            break;
        }
    }
    if (sw_attrs_wrap_slot_members(cls, slot_defs) < 0) {
        return -1;
    }
    if (cls->tp_dictoffset != 0
        || PyType_HasFeature(cls, Py_TPFLAGS_MANAGED_DICT)) {
        /* sealedmeta.c refuses every way to get one: never seal such a class. */
        PyErr_Format(PyExc_SystemError, "class %s has an instance dict",
                     cls->tp_name);
        return -1;
    }
    if (own_attrs) {
        cls->tp_getattro = sw_attrs_getattro;
        if (!inherits) {
            getset = PyDescr_NewGetSet(cls, &sw_attrs_dict_def);
        }
    }
    else if (inherits) {
        cls->tp_getattro = sw_attrs_getattro;   /* explicit __slots__ */
    }
    if (getset == NULL) {
        if (PyErr_Occurred()) {
            return -1;
        }
        PyType_Modified(cls);
        return 0;
    }
    status = PyDict_SetItemString(cls->tp_dict, "__dict__", getset);
    Py_DECREF(getset);
    PyType_Modified(cls);
    return status;
}
