/* descriptor.c: the descriptor instance, whatever its kind.
 *
 * Owns the C layout every descriptor shares (_DescriptorBase), its
 * lifecycle (building -> finished or rejected), sealing, identity
 * (hash/==/copy/pickle), the accessors common to all kinds (name, value,
 * supertype, supertypes(), is_subtype_of(), is_*(), structure()), the
 * fixed attributes of every kind (member slots or getsets, descriptor.h)
 * with DType.__getattr__, which refuses them on an unusable descriptor,
 * and the methods DType puts in its namespace.  It knows no kind: the
 * kind-specific accessors check their receiver through
 * sw_descriptor_of_kind and the kind table (kind.h).  Construction is
 * construct.c's, argument checking args.c's, and the registry
 * classmethods classbound.c's.
 */
#include "descriptor.h"
#include "attrs.h"
#include "meta.h"
#include "privtable.h"
#include "record.h"

#include <structmember.h>

static const char *
sw_descriptor_type_name(PyObject *obj)
{
    return sw_type_name(Py_TYPE(obj));
}

/* The members the model owns on every descriptor (a subclass may not
 * define them); each kind adds its accessors' names (kind.h). */
const char *const sw_descriptor_owned_names[] = {
    "name", "value", "supertype", "supertypes", "is_subtype_of",
    "is_category", "is_simple", "is_compound", "structure", "from_name",
    "registered", "is_opaque_storage",
    "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__",
    "__reduce__", "__reduce_ex__", "__getstate__", "__setstate__",
    "__copy__", "__deepcopy__", "__getattribute__", "__getattr__",
    "__setattr__", "__delattr__", "__new__", "__repr__", "__class__",
    "__str__", "__format__",
    NULL,
};

/* ---- lifecycle checks ------------------------------------------------------ */

/* The name of `d` (new reference; None before its kind's __init__ set
 * it), for messages and reprs about a descriptor that may still be under
 * construction in another thread: a finished descriptor's name never
 * changes (build_state is published after it), and an unfinished one's is
 * read under the critical section its constructor sets it in and its
 * rejection moves it in (to rejected_name). */
PyObject *
sw_descriptor_name_ref(sw_descriptor *d)
{
    PyObject *name;

    if (SW_LOAD_FLAG(d->build_state) == SW_FINISHED) {
        return Py_NewRef(d->name);
    }
    Py_BEGIN_CRITICAL_SECTION(d);
    name = SW_LOAD_FLAG(d->build_state) == SW_REJECTED
        ? d->rejected_name : (PyObject *)SW_LOAD_PTR(d->name);
    Py_XINCREF(name);
    Py_END_CRITICAL_SECTION();
    return name != NULL ? name : Py_NewRef(Py_None);
}

/* The fixed attribute `member` (the PyMemberDef of its field, descriptor.h)
 * of `d`, of a kind that has it: a new reference, or NULL with the
 * ValueError saying why d is not usable.  A finished
 * descriptor's field was set before it was published and never changes;
 * an unfinished one's is read inside the critical section in which its
 * __init__ sets it (with `initialized`) and its rejection empties it, so
 * there "usable" and "set" agree. */
PyObject *
sw_descriptor_read_fixed(sw_descriptor *d, void *member)
{
    PyMemberDef *def = (PyMemberDef *)member;
    PyObject **field = (PyObject **)((char *)d + def->offset);
    PyObject *value;
    int usable;

    for (;;) {
        if (SW_LOAD_FLAG(d->build_state) == SW_FINISHED) {
            return Py_NewRef(*field);
        }
        Py_BEGIN_CRITICAL_SECTION(d);
        usable = sw_descriptor_is_usable(d);
        value = usable ? Py_XNewRef((PyObject *)SW_LOAD_PTR(*field)) : NULL;
        Py_END_CRITICAL_SECTION();
        if (value != NULL) {
            return value;
        }
        if (usable) {
            PyErr_Format(PyExc_SystemError, "%s: %R lacks its fields",
                         def->name, (PyObject *)d);
            return NULL;
        }
        if (sw_descriptor_unusable(d) < 0) {
            return NULL;
        }
        /* Another thread's __init__ made it usable meanwhile: read again
         * (a descriptor's state only moves forward). */
    }
}

/* Mark `d` rejected; the caller (the construction's failure path, meta.c)
 * holds its critical section.  From here on d is not usable and its fixed
 * attributes read empty, so a member load of one reaches DType.__getattr__
 * and the ValueError saying d was rejected.  The name moves to
 * rejected_name, where its repr and messages read it; a structure recorded
 * before the failure and the width are released (a tuple of str and an
 * exact int: releasing them runs no Python code).  The moved name is never
 * released before d is, so a reader that loaded it from the slot just
 * before holds a live object. */
void
sw_descriptor_reject(sw_descriptor *d)
{
    PyObject *structure = d->structure;
    PyObject *bits = (PyObject *)SW_LOAD_PTR(d->bits);

    SW_STORE_FLAG(d->build_state, SW_REJECTED);
    d->rejected_name = (PyObject *)SW_LOAD_PTR(d->name);
    SW_STORE_PTR(d->name, NULL);
    SW_STORE_PTR(d->bits, NULL);
    Py_XDECREF(structure);
    Py_XDECREF(bits);
}

/* -1 with the ValueError saying why `d` is not usable; 0 if it is after
 * all (sw_descriptor_check_usable, descriptor.h, answers the usual case). */
int
sw_descriptor_unusable(sw_descriptor *d)
{
    if (SW_LOAD_FLAG(d->build_state) == SW_REJECTED) {
        PyObject *name = sw_descriptor_name_ref(d);

        PyErr_Format(PyExc_ValueError,
                     "descriptor %R was rejected during construction and is "
                     "not usable", name);
        Py_DECREF(name);
        return -1;
    }
    if (SW_LOAD_FLAG(d->initialized) != 1) {
        PyErr_Format(PyExc_ValueError,
                     "%s object is not initialized: its __init__ has not "
                     "called the model's __init__ yet",
                     sw_descriptor_type_name((PyObject *)d));
        return -1;
    }
    return 0;
}

/* The full checks behind sw_descriptor_of_kind (descriptor.h).  A
 * kind-specific getset lives on the shared C layout, so CPython only
 * checked that `self` is some descriptor: this checks the kind (or a kind
 * refining it) and that the kind's __init__ set the fields the accessor
 * reads.  TypeError naming the accessor and the receiver for another kind;
 * ValueError for a rejected or uninitialized descriptor.  Borrowed, or
 * NULL. */
sw_descriptor *
sw_descriptor_of_kind_checked(PyObject *self, sw_kind kind, const char *accessor)
{
    sw_descriptor *d = (sw_descriptor *)self;
    const sw_kind_def *def = sw_kind_table[kind];

    if (!sw_kind_within(d->kind, kind)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a %s, got %R", accessor,
                     def->class_name, self);
        return NULL;
    }
    if (sw_descriptor_check_usable(d) < 0) {
        return NULL;
    }
    /* Usable means the kind's __init__ ran to the end and set its fields. */
    if (!def->has_fields(d)) {
        PyErr_Format(PyExc_SystemError, "%s: %R lacks its fields", accessor,
                     self);
        return NULL;
    }
    return d;
}

static int
sw_descriptor_check_finished(sw_descriptor *d, const char *what)
{
    if (sw_descriptor_check_usable(d) < 0) {
        return -1;
    }
    if (SW_LOAD_FLAG(d->build_state) != SW_FINISHED) {
        PyObject *name = sw_descriptor_name_ref(d);

        PyErr_Format(PyExc_ValueError,
                     "%s: descriptor %R is still under construction",
                     what, name);
        Py_DECREF(name);
        return -1;
    }
    return 0;
}

/* ---- type slots -------------------------------------------------------------- */

static PyObject *
sw_descriptor_new(PyTypeObject *type, PyObject *Py_UNUSED(args),
            PyObject *Py_UNUSED(kwds))
{
    PyErr_Format(PyExc_TypeError,
                 "%s.__new__() cannot create descriptors; call the class "
                 "itself, which constructs, validates and registers",
                 type->tp_name);
    return NULL;
}

static int
sw_descriptor_traverse(PyObject *self, visitproc visit, void *arg)
{
    sw_descriptor *d = (sw_descriptor *)self;

    Py_VISIT(Py_TYPE(self));
    Py_VISIT(d->name);
    Py_VISIT(d->supertypes);
    Py_VISIT(d->bits);
    if (d->compound != NULL) {
        Py_VISIT(d->compound->simple_types);
        Py_VISIT(d->compound->rules);
        Py_VISIT(d->compound->element);
        Py_VISIT(d->compound->levels);
        Py_VISIT(d->compound->bits_per_element);
    }
    Py_VISIT(d->structure);
    Py_VISIT(d->module);
    return sw_attrs_traverse(d->attrs,
                             SW_LOAD_FLAG(d->build_state) == SW_FINISHED,
                             visit, arg);
}

static int
sw_descriptor_clear(PyObject *self)
{
    sw_descriptor *d = (sw_descriptor *)self;

    Py_CLEAR(d->name);
    Py_CLEAR(d->supertypes);
    Py_CLEAR(d->bits);
    if (d->compound != NULL) {
        sw_compound_fields *c = d->compound;
        Py_CLEAR(c->simple_types);
        Py_CLEAR(c->rules);
        Py_CLEAR(c->element);
        Py_CLEAR(c->levels);
        Py_CLEAR(c->bits_per_element);
    }
    Py_CLEAR(d->structure);
    Py_CLEAR(d->module);
    Py_CLEAR(d->attrs);
    return 0;
}

static void
sw_descriptor_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    sw_descriptor *d = (sw_descriptor *)self;

    PyObject_GC_UnTrack(self);
    if (d->weakreflist != NULL) {
        PyObject_ClearWeakRefs(self);
    }
    (void)sw_descriptor_clear(self);
    /* Not in clear: a record references nothing, so it is in no cycle,
     * and a registered descriptor's record is never taken away. */
    Py_CLEAR(d->numeric);
    PyMem_Free(d->compound);
    d->compound = NULL;
    tp->tp_free(self);
    Py_DECREF(tp);
}

/* The compound fields of `d`, allocated (zeroed) on first use: by the
 * compound or block-scaled __init__, which runs once per descriptor. */
sw_compound_fields *
sw_descriptor_compound_fields(sw_descriptor *d)
{
    if (d->compound == NULL) {
        d->compound = PyMem_Calloc(1, sizeof(sw_compound_fields));
        if (d->compound == NULL) {
            PyErr_NoMemory();
        }
    }
    return d->compound;
}

/* Sealed descriptors refuse every assignment and deletion.  While the
 * most-derived __init__ runs, user fields may be set, model-owned names
 * never (the model's own fields are C struct members). */
static int
sw_descriptor_setattro(PyObject *self, PyObject *name, PyObject *value)
{
    sw_descriptor *d = (sw_descriptor *)self;
    sw_state *st;
    int owned;

    if (SW_LOAD_FLAG(d->build_state) != SW_BUILDING) {
        PyErr_Format(PyExc_AttributeError,
                     "cannot %s attribute %R of %R: descriptors are immutable",
                     value ? "set" : "delete", name, self);
        return -1;
    }
    st = sw_state_of_type(Py_TYPE(self));
    if (sw_state_check(st) < 0) {
        return -1;
    }
    owned = sw_sealedmeta_is_owned_name(st->owned_names, name);
    if (owned < 0) {
        return -1;
    }
    if (owned) {
        PyErr_Format(PyExc_AttributeError,
                     "cannot %s %R on a descriptor: it is owned by the "
                     "descriptor model", value ? "set" : "delete", name);
        return -1;
    }
    return sw_attrs_setattr(self, &d->attrs, name, value);
}

/* The repr of a finished descriptor, made once: its class and name are
 * fixed at registration. */
static PyObject *
sw_descriptor_finished_repr(PyObject *self, const char *cls)
{
    sw_state *st = sw_state_of_type(Py_TYPE(self));   /* a class field */
    PyObject *text, *cached;

    if (st->reprs == NULL) {    /* the graph is being torn down: no cache */
        return PyUnicode_FromFormat("%s(%R)", cls,
                                    ((sw_descriptor *)self)->name);
    }
    cached = sw_private_get(st->reprs, self);
    if (cached != NULL || PyErr_Occurred()) {
        return cached;
    }
    text = PyUnicode_FromFormat("%s(%R)", cls, ((sw_descriptor *)self)->name);
    if (text == NULL) {
        return NULL;
    }
    /* Another thread may have made it first: keep the stored one. */
    cached = sw_private_setdefault(st->reprs, self, text);   /* borrowed */
    Py_DECREF(text);
    return Py_XNewRef(cached);
}

PyObject *
sw_descriptor_repr(PyObject *self)
{
    sw_descriptor *d = (sw_descriptor *)self;
    const char *cls = sw_descriptor_type_name(self);
    int state = SW_LOAD_FLAG(d->build_state);
    PyObject *name, *result;

    if (state == SW_FINISHED) {
        return sw_descriptor_finished_repr(self, cls);
    }
    /* Possibly under construction in another thread. */
    name = sw_descriptor_name_ref(d);
    if (name == Py_None) {
        result = PyUnicode_FromFormat("<uninitialized %s>", cls);
    }
    else if (state == SW_REJECTED) {
        result = PyUnicode_FromFormat("<rejected %s(%R)>", cls, name);
    }
    else {
        result = PyUnicode_FromFormat("<unfinished %s(%R)>", cls, name);
    }
    Py_DECREF(name);
    return result;
}

/* str(): the registered name of a finished descriptor; an uninitialized,
 * unfinished or rejected one reads as its repr, which says so. */
static PyObject *
sw_descriptor_str(PyObject *self)
{
    sw_descriptor *d = (sw_descriptor *)self;

    if (SW_LOAD_FLAG(d->build_state) == SW_FINISHED) {
        return Py_NewRef(d->name);    /* set before build_state was published */
    }
    return sw_descriptor_repr(self);
}

/* format(): str(self) formatted as a str with the same spec. */
static PyObject *
sw_descriptor_format(PyObject *self, PyObject *spec)
{
    PyObject *text, *result;

    if (!PyUnicode_Check(spec)) {
        PyErr_Format(PyExc_TypeError,
                     "%s.__format__: format_spec must be a str, got %s",
                     sw_descriptor_type_name(self), Py_TYPE(spec)->tp_name);
        return NULL;
    }
    text = sw_descriptor_str(self);
    if (text == NULL) {
        return NULL;
    }
    result = PyObject_Format(text, spec);
    Py_DECREF(text);
    return result;
}

/* ---- accessors ------------------------------------------------------------------ */

/* name and value: the fixed attribute `closure` (descriptor.h). */
static PyObject *
sw_descriptor_get_name(PyObject *self, void *closure)
{
    return sw_descriptor_read_fixed((sw_descriptor *)self, closure);
}

static PyObject *
sw_descriptor_get_supertype(PyObject *self, void *Py_UNUSED(closure))
{
    sw_descriptor *d = (sw_descriptor *)self;
    PyObject *supertype;   /* borrowed */

    if (sw_descriptor_check_usable(d) < 0) {
        return NULL;
    }
    supertype = sw_descriptor_supertype(d);
    return Py_NewRef(supertype ? supertype : Py_None);
}

static PyObject *
sw_descriptor_supertypes(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    sw_descriptor *d = (sw_descriptor *)self;

    if (sw_descriptor_check_usable(d) < 0) {
        return NULL;
    }
    return Py_NewRef(d->supertypes);
}

static PyObject *
sw_descriptor_is_subtype_of(PyObject *self, PyObject *other)
{
    sw_descriptor *d = (sw_descriptor *)self;
    sw_state *st = sw_state_of_type(Py_TYPE(self));

    if (sw_state_check(st) < 0) {
        return NULL;
    }
    /* Fast path first: every descriptor's class is made by the metaclass,
     * so a class of the same metaclass means a descriptor of this graph
     * (no walk of other's MRO on the dispatch path). */
    if (Py_TYPE(Py_TYPE(other)) != Py_TYPE(Py_TYPE(self))
        && !PyObject_TypeCheck(other, st->base_type)) {
        PyErr_Format(PyExc_TypeError,
                     "is_subtype_of: other must be a DType, got %s",
                     Py_TYPE(other)->tp_name);
        return NULL;
    }
    if (sw_descriptor_check_usable(d) < 0) {
        return NULL;
    }
    return PyBool_FromLong(sw_descriptor_reaches(d, other));
}

static PyObject *
sw_descriptor_kind_is(PyObject *self, sw_kind kind)
{
    sw_descriptor *d = (sw_descriptor *)self;

    if (sw_descriptor_check_usable(d) < 0) {
        return NULL;
    }
    return PyBool_FromLong(sw_kind_within(d->kind, kind));
}

static PyObject *
sw_descriptor_is_category(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    return sw_descriptor_kind_is(self, SW_KIND_CATEGORY);
}

static PyObject *
sw_descriptor_is_simple(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    return sw_descriptor_kind_is(self, SW_KIND_SIMPLE);
}

static PyObject *
sw_descriptor_is_compound(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    return sw_descriptor_kind_is(self, SW_KIND_COMPOUND);
}

static PyObject *
sw_descriptor_structure(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    sw_descriptor *d = (sw_descriptor *)self;

    if (sw_descriptor_check_finished(d, "structure()") < 0) {
        return NULL;
    }
    return Py_NewRef(d->structure);
}

static PyObject *
sw_descriptor_structure_extension(PyObject *Py_UNUSED(self), PyObject *Py_UNUSED(ignored))
{
    return PyTuple_New(0);   /* the shared empty tuple */
}

static PyObject *
sw_descriptor_reduce(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    sw_descriptor *d = (sw_descriptor *)self;
    sw_state *st = sw_state_of_type(Py_TYPE(self));

    if (sw_state_check(st) < 0
        || sw_descriptor_check_finished(d, "pickling") < 0) {
        return NULL;
    }
    /* (_reconstruct, (record[, module])), made once (record.c).  The
     * module hint is read by the receiving process only when the name is
     * not registered there (pickle.c); built-ins have none. */
    return sw_record_reduce(st, d);
}

/* Protocols 0 and 1 write ints as decimal text, which a width beyond the
 * int-to-str digit limit cannot take: they get the version-1 payload,
 * (name, structure[, module]), whose ints are strings.  Every later
 * protocol gets the record. */
static PyObject *
sw_descriptor_reduce_ex(PyObject *self, PyObject *protocol)
{
    sw_descriptor *d = (sw_descriptor *)self;
    sw_state *st = sw_state_of_type(Py_TYPE(self));
    PyObject *stated, *result;
    int overflow;
    long value;

    if (!PyLong_Check(protocol)) {
        PyErr_Format(PyExc_TypeError,
                     "__reduce_ex__(): protocol must be an int, got %s",
                     Py_TYPE(protocol)->tp_name);
        return NULL;
    }
    value = PyLong_AsLongAndOverflow(protocol, &overflow);
    if (value == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (overflow != 0 || value >= 2) {
        return sw_descriptor_reduce(self, NULL);
    }
    if (sw_state_check(st) < 0
        || sw_descriptor_check_finished(d, "pickling") < 0
        || sw_record_stated(st, d, &stated) < 0) {
        return NULL;
    }
    if (stated != NULL) {
        /* The numeric records the record would state, as a fourth
         * argument (the module, or None, third). */
        result = Py_BuildValue("O(OOON)", st->reconstruct, d->name,
                               d->structure,
                               d->module != NULL ? d->module : Py_None, stated);
    }
    else if (d->module != NULL) {
        result = Py_BuildValue("O(OOO)", st->reconstruct, d->name,
                               d->structure, d->module);
    }
    else {
        result = Py_BuildValue("O(OO)", st->reconstruct, d->name, d->structure);
    }
    return result;
}

/* object.__dir__ without the removed is_opaque_storage, which a class
 * with a mixin keeps as an always-absent member (meta.c). */
static PyObject *
sw_descriptor_dir(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    PyObject *object_dir, *names, *result = NULL;
    Py_ssize_t i, n;

    object_dir = PyObject_GetAttrString((PyObject *)&PyBaseObject_Type,
                                        "__dir__");
    if (object_dir == NULL) {
        return NULL;
    }
    names = PyObject_CallOneArg(object_dir, self);
    Py_DECREF(object_dir);
    if (names == NULL || !PyList_CheckExact(names)) {
        return names;
    }
    result = PyList_New(0);
    n = PyList_GET_SIZE(names);
    for (i = 0; result != NULL && i < n; i++) {
        PyObject *name = PyList_GET_ITEM(names, i);
        if (PyUnicode_Check(name)
            && PyUnicode_CompareWithASCIIString(name, "is_opaque_storage") == 0) {
            continue;
        }
        if (PyList_Append(result, name) < 0) {
            Py_CLEAR(result);
        }
    }
    Py_DECREF(names);
    return result;
}

static PyObject *
sw_descriptor_copy(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    return Py_NewRef(self);
}

static PyObject *
sw_descriptor_deepcopy(PyObject *self, PyObject *Py_UNUSED(memo))
{
    return Py_NewRef(self);
}

/* The model takes one class keyword, `abstract` (consumed by the
 * metaclass); any other that reaches here is refused by name. */
static PyObject *
sw_descriptor_init_subclass(PyObject *cls, PyObject *args, PyObject *kwds)
{
    if (PyTuple_GET_SIZE(args) != 0) {
        PyErr_SetString(PyExc_TypeError,
                        "__init_subclass__() takes no positional arguments");
        return NULL;
    }
    if (kwds != NULL && PyDict_GET_SIZE(kwds) != 0) {
        PyObject *key, *value;
        Py_ssize_t pos = 0;

        PyDict_Next(kwds, &pos, &key, &value);
        /* Held across its repr, which a str subclass runs itself. */
        Py_INCREF(key);
        PyErr_Format(PyExc_TypeError,
                     "class %s: unexpected class keyword %R (the descriptor "
                     "model takes only 'abstract')",
                     ((PyTypeObject *)cls)->tp_name, key);
        Py_DECREF(key);
        return NULL;
    }
    Py_RETURN_NONE;
}

/* ---- fixed attributes -------------------------------------------------------------- */

/* Store `descr` (a new reference, or NULL after a failure) under `name` in
 * the dict of `cls`, a model class, which is frozen to Python code; the
 * caller calls PyType_Modified once done. */
static int
sw_descriptor_put(PyTypeObject *cls, const char *name, PyObject *descr)
{
    int status;

    if (descr == NULL) {
        return -1;
    }
    status = PyDict_SetItemString(cls->tp_dict, name, descr);
    Py_DECREF(descr);
    return status;
}

#define SW_NAME_DOC "The registered name of this descriptor (an exact str)."
#define SW_VALUE_DOC "Compatibility alias of name: the registered name."

/* name and value: one field, two names. */
static PyMemberDef sw_descriptor_name_members[] = {
    {"name", Py_T_OBJECT_EX, offsetof(sw_descriptor, name), Py_READONLY,
     PyDoc_STR(SW_NAME_DOC)},
    {"value", Py_T_OBJECT_EX, offsetof(sw_descriptor, name), Py_READONLY,
     PyDoc_STR(SW_VALUE_DOC)},
};

/* The fixed attributes every descriptor has (descriptor.h). */
PyGetSetDef sw_descriptor_fixed[] = {
    {"name", sw_descriptor_get_name, NULL, PyDoc_STR(SW_NAME_DOC),
     &sw_descriptor_name_members[0]},
    {"value", sw_descriptor_get_name, NULL, PyDoc_STR(SW_VALUE_DOC),
     &sw_descriptor_name_members[1]},
    {NULL, NULL, NULL, NULL, NULL},
};

/* Put the fixed attributes `fixed` (descriptor.h) into the dict of `cls`,
 * a model class that has just been created.  Member slots are bound to
 * cls itself: a member reads its field without looking at the receiver's
 * kind, so only instances of cls may reach it (CPython checks that, with
 * a TypeError naming the attribute, cls and the receiver's class).  Where
 * CPython does not specialize slot loads, the getsets, bound to the C
 * layout, check the receiver themselves. */
int
sw_descriptor_install_fixed(sw_state *st, PyTypeObject *cls,
                            PyGetSetDef *fixed)
{
    for (; fixed != NULL && fixed->name != NULL; fixed++) {
#ifdef SW_FIXED_SLOTS
        PyObject *descr = PyDescr_NewMember(cls, (PyMemberDef *)fixed->closure);
        (void)st;
#else
        PyObject *descr = PyDescr_NewGetSet(st->base_type, fixed);
#endif

        if (sw_descriptor_put(cls, fixed->name, descr) < 0) {
            return -1;
        }
    }
    PyType_Modified(cls);
    return 0;
}

#ifdef SW_FIXED_SLOTS
static PyGetSetDef *
sw_descriptor_find_fixed(PyGetSetDef *fixed, PyObject *name)
{
    for (; fixed != NULL && fixed->name != NULL; fixed++) {
        if (PyUnicode_CompareWithASCIIString(name, fixed->name) == 0) {
            return fixed;
        }
    }
    return NULL;
}

/* DType.__getattr__, which CPython calls when the generic lookup of `name`
 * found nothing or raised AttributeError (also from a property or slot of
 * a subclass: as with any class that has __getattr__, this decides).  A
 * fixed attribute of the descriptor's kind has an empty slot there: the
 * descriptor is not usable (or another thread has just made it usable),
 * and its getset's answer is the model's ValueError saying why (or the
 * value).  Any other name raises the AttributeError the generic lookup
 * raises for a missing attribute, with its text.  The name is compared by
 * its characters (a str subclass's methods never run). */
PyObject *
sw_descriptor_getattr(PyObject *self, PyObject *name)
{
    sw_descriptor *d = (sw_descriptor *)self;
    PyGetSetDef *found;
    int kind;

    if (!PyUnicode_Check(name)) {
        PyErr_Format(PyExc_TypeError,
                     "attribute name must be string, not '%.200s'",
                     Py_TYPE(name)->tp_name);
        return NULL;
    }
    found = sw_descriptor_find_fixed(sw_descriptor_fixed, name);
    for (kind = d->kind; found == NULL && kind > SW_KIND_NONE
                         && kind < SW_KIND_COUNT;
         kind = sw_kind_table[kind]->parent) {
        found = sw_descriptor_find_fixed(sw_kind_table[kind]->fixed, name);
    }
    if (found != NULL) {
        return found->get(self, found->closure);
    }
    PyErr_Format(PyExc_AttributeError, "'%.100s' object has no attribute '%U'",
                 Py_TYPE(self)->tp_name, name);
    return NULL;
}
#endif

/* ---- the type ------------------------------------------------------------------------ */

static PyGetSetDef sw_descriptor_getset[] = {
    {"supertype", sw_descriptor_get_supertype, NULL,
     PyDoc_STR("The immediately enclosing category, or None."), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef sw_descriptor_methods[] = {
    {"supertypes", sw_descriptor_supertypes, METH_NOARGS,
     PyDoc_STR("supertypes($self, /)\n--\n\n"
               "Return every enclosing category, nearest first, as a tuple.")},
    {"is_subtype_of", sw_descriptor_is_subtype_of, METH_O,
     PyDoc_STR("is_subtype_of($self, other, /)\n--\n\n"
               "Return True if this descriptor is other or reaches it through "
               "its category chain.\n\nRaises TypeError when other is not a "
               "DType.")},
    {"is_category", sw_descriptor_is_category, METH_NOARGS,
     PyDoc_STR("is_category($self, /)\n--\n\n"
               "Return True for a DTypeCategory.")},
    {"is_simple", sw_descriptor_is_simple, METH_NOARGS,
     PyDoc_STR("is_simple($self, /)\n--\n\n"
               "Return True for a SimpleDType (one fixed-width encoding).")},
    {"is_compound", sw_descriptor_is_compound, METH_NOARGS,
     PyDoc_STR("is_compound($self, /)\n--\n\n"
               "Return True for a CompoundDType (stored in several planes).")},
    {"structure", sw_descriptor_structure, METH_NOARGS,
     PyDoc_STR("structure($self, /)\n--\n\n"
               "Return the immutable canonical structure recorded when this "
               "descriptor was registered.\n\nIt is a nested tuple of exact "
               "str leaves; see docs/structure.md for the format.")},
    {"structure_extension", sw_descriptor_structure_extension, METH_NOARGS,
     PyDoc_STR("structure_extension($self, /)\n--\n\n"
               "Return extra representation-defining values (default ()).\n\n"
               "Override in an extension subclass to return a tuple of exact "
               "str, int, float, bool, None, Whole and nested tuples of "
               "those.  Called exactly once, at registration; the result is "
               "part of structure() and of pickle compatibility.")},
    {"__format__", sw_descriptor_format, METH_O,
     PyDoc_STR("__format__($self, format_spec, /)\n--\n\n"
               "Return the registered name formatted like a str with "
               "format_spec: f\"{DType.Float32:>10}\" is '   Float32'.")},
    {"__reduce__", sw_descriptor_reduce, METH_NOARGS,
     PyDoc_STR("__reduce__($self, /)\n--\n\n"
               "Pickle as a compact record of the name and structure; "
               "loading returns the receiving process's registered identity "
               "when the structures are equal.")},
    {"__reduce_ex__", sw_descriptor_reduce_ex, METH_O,
     PyDoc_STR("__reduce_ex__($self, protocol, /)\n--\n\n"
               "Same as __reduce__() for protocol 2 and later; protocols 0 "
               "and 1 carry (name, structure), whose ints are text.")},
#ifdef SW_FIXED_SLOTS
    {"__getattr__", sw_descriptor_getattr, METH_O,
     PyDoc_STR("__getattr__($self, name, /)\n--\n\n"
               "Called when the usual lookup finds no value: name, value "
               "and bits of a descriptor that is not usable (its __init__ "
               "has not called the model's __init__ yet, or it was "
               "rejected) raise ValueError saying why; any other name "
               "raises AttributeError.")},
#endif
    {"__dir__", sw_descriptor_dir, METH_NOARGS,
     PyDoc_STR("__dir__($self, /)\n--\n\nThe attribute names of the "
               "descriptor.")},
    {"__copy__", sw_descriptor_copy, METH_NOARGS,
     PyDoc_STR("__copy__($self, /)\n--\n\nReturn self: descriptors are "
               "identities.")},
    {"__deepcopy__", sw_descriptor_deepcopy, METH_O,
     PyDoc_STR("__deepcopy__($self, memo, /)\n--\n\nReturn self: "
               "descriptors are identities.")},
    {"ensure", SW_CFUNC(sw_construct_ensure), METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     PyDoc_STR("ensure($cls, /, *args, **kwargs)\n--\n\n"
               "Construct and register a descriptor as cls(*args, **kwargs) "
               "does, or return the one already registered under its name "
               "when its structure is identical.\n\n"
               "For code that runs more than once in a process (a re-run "
               "notebook cell, importlib.reload).  The definition is always "
               "built and compared: a different structure under the same "
               "name is ValueError naming the first difference; every other "
               "error is the constructor's.  The check and the registration "
               "are one step: threads ensuring the same definition all get "
               "the one registered descriptor.  The result may be an "
               "instance of an earlier version of cls (the class a reload "
               "replaced).")},
    {"__init_subclass__", SW_CFUNC(sw_descriptor_init_subclass),
     METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     PyDoc_STR("__init_subclass__($cls, /)\n--\n\n"
               "Refuse class keywords other than the metaclass's "
               "'abstract'.")},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef sw_descriptor_members[] = {
    {"__weaklistoffset__", T_PYSSIZET, offsetof(sw_descriptor, weakreflist),
     READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

/* No tp_getattro: object's generic lookup is inherited, and with it
 * object's __getattribute__, which is what CPython 3.12+ requires of a
 * type with __getattr__ to still specialize loads of its methods and
 * member slots (a type's own __getattribute__ wrapper would count as an
 * override). */
static PyType_Slot sw_descriptor_slots[] = {
    {Py_tp_doc, (void *)PyDoc_STR(
        "The C layout shared by every descriptor; not used directly.")},
    {Py_tp_new, sw_descriptor_new},
    {Py_tp_dealloc, sw_descriptor_dealloc},
    {Py_tp_traverse, sw_descriptor_traverse},
    {Py_tp_clear, sw_descriptor_clear},
    {Py_tp_setattro, sw_descriptor_setattro},
    {Py_tp_repr, sw_descriptor_repr},
    {Py_tp_getset, sw_attrs_sealed_getset},
    {Py_tp_hash, sw_attrs_identity_hash},
    {Py_tp_richcompare, sw_attrs_identity_richcompare},
    {Py_tp_str, sw_descriptor_str},
    {Py_tp_members, sw_descriptor_members},
    {0, NULL},
};

static PyType_Spec sw_descriptor_spec = {
    .name = "stride_weave._dtypes._DescriptorBase",
    .basicsize = sizeof(sw_descriptor),
    .itemsize = 0,
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC
             | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = sw_descriptor_slots,
};

/* Put the accessors and methods every descriptor has into DType's
 * namespace (descriptors bound to the C layout), so that help(DType) and
 * DType.__dict__ show them where users look for them. */
int
sw_descriptor_fill_namespace(sw_state *st, PyObject *ns)
{
    PyGetSetDef *g;
    PyMethodDef *m;

    for (g = sw_descriptor_getset; g->name != NULL; g++) {
        PyObject *descr = PyDescr_NewGetSet(st->base_type, g);
        if (descr == NULL || PyDict_SetItemString(ns, g->name, descr) < 0) {
            Py_XDECREF(descr);
            return -1;
        }
        Py_DECREF(descr);
    }
    for (m = sw_descriptor_methods; m->ml_name != NULL; m++) {
        PyObject *descr = (m->ml_flags & METH_CLASS)
            ? PyDescr_NewClassMethod(st->base_type, m)
            : PyDescr_NewMethod(st->base_type, m);

        if (descr == NULL || PyDict_SetItemString(ns, m->ml_name, descr) < 0) {
            Py_XDECREF(descr);
            return -1;
        }
        Py_DECREF(descr);
    }
    return sw_classbound_fill_namespace(st, ns);
}

/* Give `cls` its own descriptors of the model-owned instance methods.
 * CPython's specialized calls of a C method (3.11+) require the method's
 * defining class to be exactly the receiver's type; with one shared
 * descriptor on the C layout every call would take the generic path.
 * Only owned names are bound here, so no user override is ever shadowed
 * (structure_extension, which users override, is left alone). */
int
sw_descriptor_bind_methods(PyTypeObject *cls)
{
    PyMethodDef *m;

    for (m = sw_descriptor_methods; m->ml_name != NULL; m++) {
        if (m->ml_meth == sw_descriptor_structure_extension || m->ml_meth == sw_descriptor_dir
            || m->ml_meth == SW_CFUNC(sw_construct_ensure)
            || m->ml_meth == (PyCFunction)(void (*)(void))sw_descriptor_init_subclass) {
            continue;
        }
        if (m->ml_flags & METH_CLASS) {
            continue;   /* ensure: DType's classmethod */
        }
        if (sw_descriptor_put(cls, m->ml_name, PyDescr_NewMethod(cls, m)) < 0) {
            return -1;
        }
    }
    PyType_Modified(cls);
    return 0;
}

PyObject *
sw_descriptor_create_type(PyObject *module)
{
    return PyType_FromModuleAndSpec(module, &sw_descriptor_spec, NULL);
}
