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
 * writes once sealed.  (A base class from outside the model that brings
 * its own instance dict keeps it; see docs/design.md.)
 *
 * Free-threaded builds: `attrs` is created lazily and may be replaced
 * (`__dict__ = {...}`) while the object is built, so it is read and written
 * only inside the object's critical section, and readers take a strong
 * reference before using it.  Every write re-checks the build state inside
 * that critical section, where the seal is also set (registry.c, rule.c),
 * so a write is either refused or lands before the object is sealed.
 */
#include "sw_internal.h"

#include <structmember.h>

/* The object's build state, whichever layout it has. */
static int
sw_attrs_building(PyObject *obj)
{
    if (sw_is_rule_class(Py_TYPE(obj))) {
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
    if (sw_is_rule_class(Py_TYPE(obj))) {
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
    proxy = PyDictProxy_New(dict);   /* sealed: a read-only view */
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

/* A class that brought CPython's own instance dict (from a base outside
 * the model): show it read-only once sealed. */
static PyObject *
sw_native_dict_get(PyObject *self, void *Py_UNUSED(closure))
{
    PyObject *dict = PyObject_GenericGetDict(self, NULL);
    PyObject *proxy;

    if (dict == NULL || sw_attrs_building(self)) {
        return dict;
    }
    proxy = PyDictProxy_New(dict);
    Py_DECREF(dict);
    return proxy;
}

static int
sw_native_dict_set(PyObject *self, PyObject *value, void *closure)
{
    if (!sw_attrs_building(self) || value == NULL) {
        return sw_attrs_dict_set(self, NULL, closure);
    }
    return PyObject_GenericSetDict(self, value, NULL);
}

static PyGetSetDef sw_native_dict_def = {
    "__dict__", sw_native_dict_get, sw_native_dict_set,
    PyDoc_STR("The object's own attributes (a read-only view once sealed)."),
    NULL,
};

/* ---- __slots__ ------------------------------------------------------------------ */

/* type() exposes each __slots__ entry as a member descriptor whose __set__
 * writes the slot directly, past tp_setattro; these getsets (closure: the
 * class's PyMemberDef) refuse writes once the object is sealed. */
static PyObject *
sw_slot_get(PyObject *self, void *closure)
{
    return PyMember_GetOne((const char *)self, (PyMemberDef *)closure);
}

static int
sw_slot_set(PyObject *self, PyObject *value, void *closure)
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
#ifdef Py_GIL_DISABLED
        _Py_atomic_store_ptr_release(slot, Py_XNewRef(value));
#else
        *slot = Py_XNewRef(value);
#endif
    }
    Py_END_CRITICAL_SECTION();
    Py_XDECREF(old);   /* outside: may run a finalizer */
    return status;
}

/* Replace the slot member descriptors type() put in cls's own dict.  The
 * getsets point into an array stored in *defs_out at once, which the class
 * owns and frees when it dies (even if this fails half way). */
static int
sw_wrap_slot_members(PyTypeObject *cls, PyGetSetDef **defs_out)
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
        defs[i].get = sw_slot_get;
        defs[i].set = sw_slot_set;
        defs[i].doc = m->doc;
        defs[i].closure = m;
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

/* Before the class is created: return a new reference to a copy of the
 * namespace in which __slots__ is a str or a tuple (an iterable is read
 * here, once, so type() and the owned-member check see the same names).
 * A namespace without __slots__ asks for attributes: it gets
 * __slots__ = () so CPython adds no instance dict, and *own_attrs = 1. */
PyObject *
sw_attrs_prepare_namespace(PyObject *ns, int *own_attrs)
{
    PyObject *copy, *slots;
    int status;

    *own_attrs = 0;
    copy = PyDict_Copy(ns);
    if (copy == NULL) {
        return NULL;
    }
    slots = PyDict_GetItemString(copy, "__slots__");   /* borrowed */
    if (slots == NULL) {
        *own_attrs = 1;
        slots = PyTuple_New(0);
    }
    else if (PyUnicode_Check(slots) || PyTuple_CheckExact(slots)) {
        return copy;
    }
    else {
        /* The copy holds a reference, so user iteration cannot free it. */
        slots = PySequence_Tuple(slots);
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
    if (sw_wrap_slot_members(cls, slot_defs) < 0) {
        return -1;
    }
    if (cls->tp_dictoffset != 0) {
        /* CPython's instance dict, from a base outside the model. */
        if (PyDict_GetItemString(cls->tp_dict, "__dict__") != NULL) {
            getset = PyDescr_NewGetSet(cls, &sw_native_dict_def);
        }
    }
    else if (own_attrs) {
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
