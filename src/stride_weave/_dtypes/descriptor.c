/* descriptor.c: the descriptor instance, whatever its kind.
 *
 * Owns the C layout every descriptor shares (_DescriptorBase), its
 * lifecycle (building -> finished or rejected), sealing, identity
 * (hash/==/copy/pickle), the accessors common to all kinds (name, value,
 * supertype, supertypes(), is_subtype_of(), is_*(), structure()), the
 * registry classmethods (from_name, registered), and finalization: the last
 * step of the construction transaction, run by the metaclass after the
 * most-derived __init__.  The kind-specific __init__ methods and contracts
 * live in category.c, simple.c and compound.c and use the helpers here.
 */
#include "sw_internal.h"

#include <string.h>

#include <structmember.h>

static const char *
sw_type_short_name(PyObject *obj)
{
    return _PyType_Name(Py_TYPE(obj));
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

/* 0 if `d` may be read (finished, or building after its kind's __init__),
 * else -1 with ValueError: a rejected or uninitialized descriptor is not
 * usable, even if user code kept a reference to it. */
int
sw_descriptor_check_usable(sw_descriptor *d)
{
    if (SW_LOAD_FLAG(d->build_state) == SW_REJECTED) {
        PyErr_Format(PyExc_ValueError,
                     "descriptor %R was rejected during construction and is "
                     "not usable", d->name ? d->name : Py_None);
        return -1;
    }
    if (SW_LOAD_FLAG(d->initialized) != 1) {
        PyErr_Format(PyExc_ValueError,
                     "%s object is not initialized: its __init__ has not "
                     "called the model's __init__ yet",
                     sw_type_short_name((PyObject *)d));
        return -1;
    }
    return 0;
}

/* The receiver of a kind-specific accessor (`accessor`, e.g.
 * "SimpleDType.bits").  Its getset lives on the shared C layout, so CPython
 * only checked that `self` is some descriptor: this checks the kind and
 * that the kind's __init__ set the fields the accessor reads.  TypeError
 * naming the accessor and the receiver for another kind; ValueError for a
 * rejected or uninitialized descriptor.  Borrowed, or NULL. */
sw_descriptor *
sw_descriptor_of_kind(PyObject *self, sw_kind kind, const char *accessor)
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
        PyErr_Format(PyExc_ValueError,
                     "%s: descriptor %R is still under construction",
                     what, d->name);
        return -1;
    }
    return 0;
}

/* Called first by every kind's __init__: refuses a second initialization
 * and a kind mismatch (SimpleDType.__init__ on a category, say), then
 * claims the object (initialized = SW_INIT_CLAIMED) inside its critical
 * section, so two threads never run a kind's __init__ on one object at
 * once (a free-threaded build would race on its fields).  The kind sets
 * initialized = 1 once every field is set; a claim whose __init__ failed
 * stays: the model's __init__ runs once per object. */
#define SW_INIT_CLAIMED 2

static int
sw_begin_init_check(sw_descriptor *d, sw_kind kind, const char *funcname)
{
    if (d->build_state == SW_FINISHED) {
        PyErr_Format(PyExc_AttributeError,
                     "%s: descriptor %R is immutable and cannot be "
                     "initialized again", funcname, d->name);
        return -1;
    }
    if (d->build_state != SW_BUILDING) {
        PyErr_Format(PyExc_TypeError,
                     "%s: %s object is not under construction", funcname,
                     sw_type_short_name((PyObject *)d));
        return -1;
    }
    if (!sw_kind_within(d->kind, kind)) {
        PyErr_Format(PyExc_TypeError,
                     "%s: expected self to be an instance of the class that "
                     "defines it, got a %s", funcname,
                     sw_type_short_name((PyObject *)d));
        return -1;
    }
    if (d->initialized) {
        PyErr_Format(PyExc_TypeError,
                     "%s: the model's __init__ was already called on this %s; "
                     "call it once", funcname, sw_type_short_name((PyObject *)d));
        return -1;
    }
    return 0;
}

int
sw_descriptor_begin_init(sw_descriptor *d, sw_kind kind, const char *funcname)
{
    int status;

    Py_BEGIN_CRITICAL_SECTION(d);
    status = sw_begin_init_check(d, kind, funcname);
    if (status == 0) {
        SW_STORE_FLAG(d->initialized, SW_INIT_CLAIMED);
    }
    Py_END_CRITICAL_SECTION();
    return status;
}

/* ---- argument helpers for the kinds' __init__ ------------------------------ */

/* Refuse keywords outside `allowed` with the message Python gives functions
 * ("got an unexpected keyword argument"). */
int
sw_check_kwargs(PyObject *kwds, const char *const *allowed,
                const char *funcname)
{
    PyObject *key, *value;
    Py_ssize_t pos = 0;

    if (kwds == NULL) {
        return 0;
    }
    while (PyDict_Next(kwds, &pos, &key, &value)) {
        const char *const *p;
        int known = 0;

        if (!PyUnicode_Check(key)) {
            PyErr_Format(PyExc_TypeError, "%s: keywords must be strings",
                         funcname);
            return -1;
        }
        for (p = allowed; *p != NULL; p++) {
            if (PyUnicode_CompareWithASCIIString(key, *p) == 0) {
                known = 1;
                break;
            }
        }
        if (!known) {
            if (PyUnicode_CompareWithASCIIString(key, "opaque_storage") == 0) {
                PyErr_Format(PyExc_TypeError,
                             "%s got an unexpected keyword argument "
                             "'opaque_storage' (the opaque-storage "
                             "disposition was removed: categories describe "
                             "hierarchy relationships only)", funcname);
            }
            else {
                PyErr_Format(PyExc_TypeError,
                             "%s got an unexpected keyword argument '%U'",
                             funcname, key);
            }
            return -1;
        }
    }
    return 0;
}

/* Validate a registered-name argument and return it as an exact str (a new
 * reference).  A str subclass is copied without running any of its
 * methods. */
PyObject *
sw_normalize_name(PyObject *name, const char *funcname)
{
    PyObject *exact;

    if (!PyUnicode_Check(name)) {
        PyErr_Format(PyExc_ValueError,
                     "%s: name must be a non-empty str, got %s",
                     funcname, Py_TYPE(name)->tp_name);
        return NULL;
    }
    if (PyUnicode_GET_LENGTH(name) == 0) {
        PyErr_Format(PyExc_ValueError,
                     "%s: name must be a non-empty str, got ''", funcname);
        return NULL;
    }
    exact = sw_exact_str(name);
    if (exact == NULL) {
        return NULL;
    }
    /* Not interned here: a name is interned only once it is registered
     * (sw_registry_insert), so a refused name is never kept alive. */
    return exact;
}

/* A referenced descriptor must be finished and be the identity registered
 * under its name: else ValueError.  The caller checked its kind. */
int
sw_check_reference(sw_state *st, PyObject *ref, const char *argname,
                   const char *funcname)
{
    sw_descriptor *r = (sw_descriptor *)ref;
    const char *problem;
    int canonical;

    if (SW_LOAD_FLAG(r->build_state) == SW_FINISHED) {
        canonical = sw_registry_is_canonical(&st->registry, r);
        if (canonical < 0) {
            return -1;
        }
        if (canonical) {
            return 0;
        }
        problem = "not the identity registered under its name";
    }
    else if (r->build_state == SW_REJECTED) {
        problem = "was rejected during construction";
    }
    else {
        problem = "is unfinished (still under construction)";
    }
    PyErr_Format(PyExc_ValueError,
                 "%s: %s must be a finished, registered descriptor; "
                 "%s %R %s", funcname, argname,
                 sw_type_short_name(ref), r->name ? r->name : Py_None,
                 problem);
    return -1;
}

/* A registered SimpleDType argument (Level's scale, a block-scaled
 * element): TypeError for anything else, ValueError when unfinished,
 * rejected or not the canonical identity. */
int
sw_check_simple_reference(sw_state *st, PyObject *ref, const char *argname,
                          const char *funcname)
{
    if (!sw_is_kind(st, ref, SW_KIND_SIMPLE)) {
        PyErr_Format(PyExc_TypeError, "%s: %s must be a SimpleDType, got %s",
                     funcname, argname,
                     PyObject_TypeCheck(ref, st->base_type)
                         ? sw_type_short_name(ref) : Py_TYPE(ref)->tp_name);
        return -1;
    }
    return sw_check_reference(st, ref, argname, funcname);
}

/* supertype: a registered DTypeCategory (or None when allowed). */
int
sw_check_supertype(sw_state *st, PyObject *supertype, int allow_none,
                   const char *funcname)
{
    if (supertype == Py_None && allow_none) {
        return 0;
    }
    if (!sw_is_kind(st, supertype, SW_KIND_CATEGORY)) {
        if (PyObject_TypeCheck(supertype, st->base_type)) {
            /* A descriptor of another kind: its repr is ours, safe to call. */
            PyErr_Format(PyExc_TypeError,
                         "%s: supertype must be a DTypeCategory%s, got %R",
                         funcname, allow_none ? " or None" : "", supertype);
        }
        else {
            PyErr_Format(PyExc_TypeError,
                         "%s: supertype must be a DTypeCategory%s, got %s",
                         funcname, allow_none ? " or None" : "",
                         Py_TYPE(supertype)->tp_name);
        }
        return -1;
    }
    return sw_check_reference(st, supertype, "supertype", funcname);
}

/* Who registered `obj` (a descriptor), for duplicate-name errors, as a
 * new str: "mylib.formats.Float16Class" for an instance of a user class,
 * "SimpleDType in module 'mylib'" for a model class called directly, "a
 * built-in SimpleDType" for the built-in graph.  Read from the heap type's
 * fields without running any code: a `__module__` that is not a str is
 * left out. */
PyObject *
sw_descriptor_origin(PyObject *obj)
{
    PyTypeObject *tp = Py_TYPE(obj);
    sw_descriptor *d = (sw_descriptor *)obj;
    PyObject *qualname = NULL, *module = NULL, *key;

    if (sw_is_descriptor_class(tp) && ((sw_type *)tp)->is_model) {
        if (d->module == NULL) {
            return PyUnicode_FromFormat("a built-in %s", _PyType_Name(tp));
        }
        return PyUnicode_FromFormat("%s in module %R", _PyType_Name(tp),
                                    d->module);
    }
    if (tp->tp_flags & Py_TPFLAGS_HEAPTYPE) {
        qualname = ((PyHeapTypeObject *)tp)->ht_qualname;   /* borrowed */
    }
    key = PyUnicode_InternFromString("__module__");
    if (key == NULL) {
        return NULL;
    }
    /* borrowed (the class holds it); no code runs before it is formatted */
    module = PyDict_GetItemWithError(tp->tp_dict, key);
    Py_DECREF(key);
    if (module == NULL && PyErr_Occurred()) {
        return NULL;
    }
    if (qualname == NULL || !PyUnicode_Check(qualname)) {
        return PyUnicode_FromString(_PyType_Name(tp));
    }
    if (module == NULL || !PyUnicode_Check(module)) {
        return PyUnicode_FromFormat("%U", qualname);
    }
    return PyUnicode_FromFormat("%U.%U", module, qualname);
}

/* ValueError: `name` is registered already, naming the class (and its
 * module) of the descriptor that holds it. */
static void
sw_duplicate_name_error(sw_state *st, sw_descriptor *d, PyObject *name)
{
    PyObject *owner, *origin;

    owner = sw_registry_lookup(&st->registry, name);
    if (owner == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_Format(PyExc_ValueError, "%s: name %R is already registered",
                         _PyType_Name(Py_TYPE(d)), name);
        }
        return;
    }
    origin = sw_descriptor_origin(owner);
    Py_DECREF(owner);
    if (origin == NULL) {
        return;
    }
    PyErr_Format(PyExc_ValueError,
                 "%s: name %R is already registered by %U",
                 _PyType_Name(Py_TYPE(d)), name, origin);
    Py_DECREF(origin);
}

/* Set the fields every kind has: name (exact str), supertype and the
 * supertypes() chain.  Also refuses an already registered name early, so
 * user code after super().__init__ does not run for a doomed descriptor
 * (the registration itself checks again, atomically). */
/* (supertype, *supertype.supertypes()): the supertypes() of every member
 * of a registered category, built once per category and shared (new ref). */
static PyObject *
sw_descriptor_chain(sw_state *st, PyObject *supertype)
{
    PyObject *chain, *head, *found;

    found = sw_private_get(st->chains, supertype);
    if (found != NULL || PyErr_Occurred()) {
        return found;
    }
    /* The supertype is finished: its own chain is already recorded. */
    head = PyTuple_Pack(1, supertype);
    if (head == NULL) {
        return NULL;
    }
    chain = PySequence_Concat(head, ((sw_descriptor *)supertype)->supertypes);
    Py_DECREF(head);
    if (chain == NULL) {
        return NULL;
    }
    /* Keys are registered categories (identity hash): the table is bounded
     * by the number of categories. */
    found = sw_private_setdefault(st->chains, supertype, chain);   /* borrowed */
    Py_DECREF(chain);
    return Py_XNewRef(found);
}

int
sw_descriptor_set_common(sw_state *st, sw_descriptor *d, PyObject *name,
                         PyObject *supertype)
{
    PyObject *chain;
    int taken;

    taken = sw_registry_contains(&st->registry, name);
    if (taken < 0) {
        return -1;
    }
    /* ensure() compares the finished structure with the registered one
     * at registration instead. */
    if (taken && !d->ensuring) {
        sw_duplicate_name_error(st, d, name);
        return -1;
    }
    if (supertype == Py_None) {
        supertype = NULL;
        chain = PyTuple_New(0);
    }
    else {
        chain = sw_descriptor_chain(st, supertype);
    }
    if (chain == NULL) {
        return -1;
    }
    Py_XSETREF(d->name, Py_NewRef(name));
    Py_XSETREF(d->supertypes, chain);
    return 0;
}

/* ---- finalization: the end of the construction transaction --------------- */

/* ensure(): d->name is taken.  The registered descriptor is the result
 * when its structure equals d's; otherwise ValueError naming the first
 * difference.  Registered descriptors are never removed or changed, so
 * the comparison after the registry's atomic refusal sees the winner. */
static int
sw_descriptor_ensure_existing(sw_state *st, sw_descriptor *d,
                              PyObject **existing_out)
{
    PyObject *owner, *diff, *origin;

    owner = sw_registry_lookup(&st->registry, d->name);
    if (owner == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_Format(PyExc_SystemError, "%R was taken and is not registered",
                         d->name);
        }
        return -1;
    }
    diff = sw_structure_diff_as(((sw_descriptor *)owner)->structure,
                                d->structure, "this definition");
    if (diff == NULL) {
        Py_DECREF(owner);
        return -1;
    }
    if (diff == Py_None) {
        Py_DECREF(diff);
        *existing_out = owner;
        return 0;
    }
    origin = sw_descriptor_origin(owner);
    if (origin != NULL) {
        PyErr_Format(PyExc_ValueError,
                     "%s.ensure(): name %R is already registered by %U with "
                     "a different structure %U; nothing was registered",
                     _PyType_Name(Py_TYPE(d)), d->name, origin, diff);
        Py_DECREF(origin);
    }
    Py_DECREF(diff);
    Py_DECREF(owner);
    return -1;
}

/* Returns 0 when `d` was registered.  For a descriptor built by ensure()
 * whose name is registered with an identical structure, returns 1 with
 * *existing a new reference to the registered descriptor (d is not
 * registered).  -1 with an exception otherwise. */
int
sw_descriptor_finalize(sw_state *st, sw_descriptor *d, PyObject **existing_out)
{
    PyObject *contract = NULL, *ext = NULL, *encoded = NULL;
    PyObject *field = NULL, *structure = NULL, *existing = NULL;
    PyObject *shared;   /* an equal registered structure (owned by d once set) */
    const sw_kind_def *kind;
    Py_ssize_t i, n;
    int status;

    if (d->initialized != 1) {
        PyErr_Format(PyExc_TypeError,
                     "%s.__init__ did not initialize the descriptor: it must "
                     "call super().__init__(...) with the model's arguments; "
                     "nothing was registered", _PyType_Name(Py_TYPE(d)));
        return -1;
    }
    if (d->kind <= SW_KIND_NONE || d->kind >= SW_KIND_COUNT) {
        PyErr_SetString(PyExc_SystemError, "descriptor without a kind");
        return -1;
    }
    kind = sw_kind_table[d->kind];
    contract = kind->contract(st, d);
    if (contract == NULL) {
        return -1;
    }
    /* structure_extension() runs exactly once, outside any lock. */
    ext = PyObject_CallMethodNoArgs((PyObject *)d, st->str_structure_extension);
    if (ext == NULL) {
        goto error;
    }
    encoded = sw_structure_encode_extension(st, ext, (PyObject *)d);
    if (encoded == NULL) {
        goto error;
    }
    field = sw_structure_field(st, SW_LABEL_EXTENSION, encoded);
    if (field == NULL) {
        goto error;
    }
    n = PyTuple_GET_SIZE(contract);
    structure = PyTuple_New(n + 1);
    if (structure == NULL) {
        goto error;
    }
    for (i = 0; i < n; i++) {
        PyTuple_SET_ITEM(structure, i, Py_NewRef(PyTuple_GET_ITEM(contract, i)));
    }
    PyTuple_SET_ITEM(structure, n, Py_NewRef(field));
    /* Equal structures are stored once (every SimpleDType(bits=8,
     * supertype=Floating) has the same one).  Only looked up here; the
     * table learns a structure after it is registered, so failed
     * constructions never grow it. */
    shared = sw_private_get(st->structures, structure);
    if (shared == NULL && PyErr_Occurred()) {
        goto error;
    }
    Py_XSETREF(d->structure, shared ? shared : structure);
    if (shared != NULL) {
        Py_DECREF(structure);
    }
    structure = NULL;

    status = sw_registry_publish(&st->registry, d, st->owned_names,
                                 kind->unique_by_structure
                                     ? d->structure : NULL, &existing);
    if (status < 0) {
        goto error;
    }
    if (status == 1) {
        if (d->ensuring) {
            status = sw_descriptor_ensure_existing(st, d, existing_out);
            if (status < 0) {
                goto error;
            }
            Py_DECREF(contract);
            Py_DECREF(ext);
            Py_DECREF(encoded);
            Py_DECREF(field);
            return 1;
        }
        sw_duplicate_name_error(st, d, d->name);
        goto error;
    }
    if (status == 2) {
        PyErr_Format(PyExc_ValueError,
                     "%s %R duplicates the representation of the registered "
                     "%R: %s; nothing was registered",
                     _PyType_Name(Py_TYPE(d)), d->name,
                     ((sw_descriptor *)existing)->name,
                     kind->unique_by_structure);
        Py_DECREF(existing);
        goto error;
    }
    if (shared == NULL
        && sw_private_setdefault(st->structures, d->structure, d->structure) == NULL) {
        /* Registered already: sharing is only an optimization. */
        PyErr_Clear();
    }
    Py_DECREF(contract);
    Py_DECREF(ext);
    Py_DECREF(encoded);
    Py_DECREF(field);
    return 0;

error:
    Py_XDECREF(contract);
    Py_XDECREF(ext);
    Py_XDECREF(encoded);
    Py_XDECREF(field);
    Py_XDECREF(structure);
    return -1;
}

/* ---- type slots -------------------------------------------------------------- */

static PyObject *
sw_base_new(PyTypeObject *type, PyObject *Py_UNUSED(args),
            PyObject *Py_UNUSED(kwds))
{
    PyErr_Format(PyExc_TypeError,
                 "%s.__new__() cannot create descriptors; call the class "
                 "itself, which constructs, validates and registers",
                 type->tp_name);
    return NULL;
}

static int
sw_base_traverse(PyObject *self, visitproc visit, void *arg)
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
sw_base_clear(PyObject *self)
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
sw_base_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    sw_descriptor *d = (sw_descriptor *)self;

    PyObject_GC_UnTrack(self);
    if (d->weakreflist != NULL) {
        PyObject_ClearWeakRefs(self);
    }
    (void)sw_base_clear(self);
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
sw_base_setattro(PyObject *self, PyObject *name, PyObject *value)
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
    owned = sw_is_owned_name(st->owned_names, name);
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

PyObject *
sw_descriptor_repr(PyObject *self)
{
    sw_descriptor *d = (sw_descriptor *)self;
    const char *cls = sw_type_short_name(self);

    if (d->name == NULL) {
        return PyUnicode_FromFormat("<uninitialized %s>", cls);
    }
    switch (d->build_state) {
    case SW_FINISHED:
        return PyUnicode_FromFormat("%s(%R)", cls, d->name);
    case SW_REJECTED:
        return PyUnicode_FromFormat("<rejected %s(%R)>", cls, d->name);
    default:
        return PyUnicode_FromFormat("<unfinished %s(%R)>", cls, d->name);
    }
}

/* str(): the registered name of a finished descriptor; an uninitialized,
 * unfinished or rejected one reads as its repr, which says so. */
static PyObject *
sw_descriptor_str(PyObject *self)
{
    sw_descriptor *d = (sw_descriptor *)self;

    if (d->name != NULL && SW_LOAD_FLAG(d->build_state) == SW_FINISHED) {
        return Py_NewRef(d->name);
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
                     sw_type_short_name(self), Py_TYPE(spec)->tp_name);
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

static PyObject *
sw_get_name(PyObject *self, void *Py_UNUSED(closure))
{
    sw_descriptor *d = (sw_descriptor *)self;

    if (sw_descriptor_check_usable(d) < 0) {
        return NULL;
    }
    return Py_NewRef(d->name);
}

static PyObject *
sw_get_supertype(PyObject *self, void *Py_UNUSED(closure))
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
sw_supertypes(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    sw_descriptor *d = (sw_descriptor *)self;

    if (sw_descriptor_check_usable(d) < 0) {
        return NULL;
    }
    return Py_NewRef(d->supertypes);
}

static PyObject *
sw_is_subtype_of(PyObject *self, PyObject *other)
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
sw_kind_is(PyObject *self, sw_kind kind)
{
    sw_descriptor *d = (sw_descriptor *)self;

    if (sw_descriptor_check_usable(d) < 0) {
        return NULL;
    }
    return PyBool_FromLong(sw_kind_within(d->kind, kind));
}

static PyObject *
sw_is_category(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    return sw_kind_is(self, SW_KIND_CATEGORY);
}

static PyObject *
sw_is_simple(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    return sw_kind_is(self, SW_KIND_SIMPLE);
}

static PyObject *
sw_is_compound(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    return sw_kind_is(self, SW_KIND_COMPOUND);
}

static PyObject *
sw_structure(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    sw_descriptor *d = (sw_descriptor *)self;

    if (sw_descriptor_check_finished(d, "structure()") < 0) {
        return NULL;
    }
    return Py_NewRef(d->structure);
}

static PyObject *
sw_structure_extension(PyObject *Py_UNUSED(self), PyObject *Py_UNUSED(ignored))
{
    return PyTuple_New(0);   /* the shared empty tuple */
}

static PyObject *
sw_reduce(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    sw_descriptor *d = (sw_descriptor *)self;
    sw_state *st = sw_state_of_type(Py_TYPE(self));

    if (sw_state_check(st) < 0
        || sw_descriptor_check_finished(d, "pickling") < 0) {
        return NULL;
    }
    /* The module hint is read by the receiving process only when the name
     * is not registered there (pickle.c); built-ins have none. */
    if (d->module != NULL) {
        return Py_BuildValue("O(OOO)", st->reconstruct, d->name,
                             d->structure, d->module);
    }
    return Py_BuildValue("O(OO)", st->reconstruct, d->name, d->structure);
}

static PyObject *
sw_reduce_ex(PyObject *self, PyObject *Py_UNUSED(protocol))
{
    return sw_reduce(self, NULL);
}

/* object.__dir__ without the removed is_opaque_storage, which a class
 * with a mixin keeps as an always-absent member (meta.c). */
static PyObject *
sw_dir(PyObject *self, PyObject *Py_UNUSED(ignored))
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
sw_copy(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    return Py_NewRef(self);
}

static PyObject *
sw_deepcopy(PyObject *self, PyObject *Py_UNUSED(memo))
{
    return Py_NewRef(self);
}

/* ---- registry classmethods --------------------------------------------------------- */

static PyObject *
sw_from_name(PyObject *cls, PyObject *name)
{
    sw_state *st = sw_state_of_type((PyTypeObject *)cls);
    PyObject *exact, *found;

    if (st == NULL || sw_state_check(st) < 0) {
        return NULL;
    }
    if (!PyUnicode_Check(name)) {
        PyErr_Format(PyExc_TypeError,
                     "%s.from_name: name must be a str, got %s",
                     ((PyTypeObject *)cls)->tp_name, Py_TYPE(name)->tp_name);
        return NULL;
    }
    exact = sw_exact_str(name);
    if (exact == NULL) {
        return NULL;
    }
    found = sw_registry_find(&st->registry, exact);
    if (found == NULL) {
        Py_DECREF(exact);
        return NULL;
    }
    if (!PyObject_TypeCheck(found, (PyTypeObject *)cls)) {
        PyErr_Format(PyExc_LookupError,
                     "%s.from_name(%R): the name is registered to %R, which "
                     "is not a %s", _PyType_Name((PyTypeObject *)cls), exact,
                     found, _PyType_Name((PyTypeObject *)cls));
        Py_DECREF(found);
        Py_DECREF(exact);
        return NULL;
    }
    Py_DECREF(exact);
    return found;
}

static PyObject *
sw_registered(PyObject *cls, PyObject *Py_UNUSED(ignored))
{
    sw_state *st = sw_state_of_type((PyTypeObject *)cls);

    if (st == NULL) {
        return NULL;
    }
    return sw_registry_snapshot(&st->registry, (PyTypeObject *)cls);
}

/* registered() as a bound builtin: METH_FASTCALL, because CPython 3.11
 * specializes calls of fastcall builtins but not of METH_NOARGS ones. */
static PyObject *
sw_registered_fast(PyObject *cls, PyObject *const *Py_UNUSED(args),
                   Py_ssize_t nargs)
{
    if (nargs != 0) {
        PyErr_Format(PyExc_TypeError,
                     "registered() takes no arguments (%zd given)", nargs);
        return NULL;
    }
    return sw_registered(cls, NULL);
}

/* from_name and registered as plain functions of the class, bound per
 * class by _ClassBound below. */
static PyMethodDef sw_bound_class_methods[] = {
    {"from_name", sw_from_name, METH_O,
     PyDoc_STR("from_name($cls, name, /)\n--\n\n"
               "Return the descriptor registered under name.\n\n"
               "Called on a subclass, the descriptor must also be an "
               "instance of it.  Raises TypeError for a non-str name and "
               "LookupError for an unknown name or a kind mismatch.")},
    {"registered", SW_CFUNC(sw_registered_fast), METH_FASTCALL,
     PyDoc_STR("registered($cls, /)\n--\n\n"
               "Return an immutable tuple snapshot of the registered "
               "descriptors that are instances of this class, in "
               "registration order.")},
    {NULL, NULL, 0, NULL},
};

/* _ClassBound: a classmethod whose bound form is made once per class and
 * kept on the class (sw_type.bound), so Cls.from_name(...) calls a
 * builtin without allocating a bound method each time.  It lives in
 * DType's namespace only: user classes get no entries of their own. */
typedef struct {
    PyObject_HEAD
    int index;              /* into sw_bound_class_methods and sw_type.bound */
} sw_class_bound;

static PyObject *
sw_class_bound_get(PyObject *self, PyObject *obj, PyObject *type)
{
    int index = ((sw_class_bound *)self)->index;
    PyMethodDef *def = &sw_bound_class_methods[index];
    PyObject *cls = type != NULL && type != Py_None ? type
                    : obj != NULL && obj != Py_None ? (PyObject *)Py_TYPE(obj)
                    : NULL;
    PyObject *bound;

    if (cls == NULL || !PyType_Check(cls)
        || !sw_is_descriptor_class((PyTypeObject *)cls)) {
        PyErr_Format(PyExc_TypeError,
                     "%s() must be bound to a descriptor class, got %s",
                     def->ml_name, cls ? Py_TYPE(cls)->tp_name : "nothing");
        return NULL;
    }
    Py_BEGIN_CRITICAL_SECTION(cls);
    bound = ((sw_type *)cls)->bound[index];
    if (bound == NULL) {
        bound = PyCFunction_NewEx(def, cls, NULL);
        ((sw_type *)cls)->bound[index] = bound;   /* the class keeps it */
    }
    Py_XINCREF(bound);
    Py_END_CRITICAL_SECTION();
    return bound;
}

static PyObject *
sw_class_bound_getdoc(PyObject *self, void *Py_UNUSED(closure))
{
    return PyUnicode_FromString(
        sw_bound_class_methods[((sw_class_bound *)self)->index].ml_doc);
}

static PyObject *
sw_class_bound_getname(PyObject *self, void *Py_UNUSED(closure))
{
    return PyUnicode_FromString(
        sw_bound_class_methods[((sw_class_bound *)self)->index].ml_name);
}

static PyGetSetDef sw_class_bound_getset[] = {
    {"__doc__", sw_class_bound_getdoc, NULL, NULL, NULL},
    {"__name__", sw_class_bound_getname, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static void
sw_class_bound_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);

    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyType_Slot sw_class_bound_slots[] = {
    {Py_tp_doc, (void *)PyDoc_STR(
        "A classmethod of the descriptor model (from_name, registered).")},
    {Py_tp_descr_get, sw_class_bound_get},
    {Py_tp_getset, sw_class_bound_getset},
    {Py_tp_dealloc, sw_class_bound_dealloc},
    {0, NULL},
};

static PyType_Spec sw_class_bound_spec = {
    .name = "stride_weave._dtypes._ClassBound",
    .basicsize = sizeof(sw_class_bound),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE
             | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = sw_class_bound_slots,
};

PyObject *
sw_class_bound_create_type(PyObject *module)
{
    return PyType_FromModuleAndSpec(module, &sw_class_bound_spec, NULL);
}

static PyObject *
sw_class_bound_new(sw_state *st, const char *name)
{
    sw_class_bound *self;
    int i;

    for (i = 0; sw_bound_class_methods[i].ml_name != NULL; i++) {
        if (strcmp(sw_bound_class_methods[i].ml_name, name) == 0) {
            break;
        }
    }
    if (sw_bound_class_methods[i].ml_name == NULL) {
        PyErr_Format(PyExc_SystemError, "no class-bound form of %s", name);
        return NULL;
    }
    self = PyObject_New(sw_class_bound, st->class_bound_type);
    if (self == NULL) {
        return NULL;
    }
    self->index = i;
    return (PyObject *)self;
}

/* Cls.ensure(*args, **kwargs): construct as Cls(*args, **kwargs) does, but
 * when the name is registered with an identical structure return the
 * registered descriptor (re-run notebook cells, importlib.reload). */
static PyObject *
sw_ensure(PyObject *cls, PyObject *args, PyObject *kwds)
{
    if (!PyType_Check(cls) || !sw_is_descriptor_class((PyTypeObject *)cls)) {
        PyErr_Format(PyExc_TypeError,
                     "ensure() must be called on a descriptor class, got %s",
                     Py_TYPE(cls)->tp_name);
        return NULL;
    }
    return sw_meta_construct(cls, args, kwds, 1);
}

/* The model takes one class keyword, `abstract` (consumed by the
 * metaclass); any other that reaches here is refused by name. */
static PyObject *
sw_init_subclass(PyObject *cls, PyObject *args, PyObject *kwds)
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
        PyErr_Format(PyExc_TypeError,
                     "class %s: unexpected class keyword %R (the descriptor "
                     "model takes only 'abstract')",
                     ((PyTypeObject *)cls)->tp_name, key);
        return NULL;
    }
    Py_RETURN_NONE;
}

/* ---- the type ------------------------------------------------------------------------ */

static PyGetSetDef sw_base_getset[] = {
    {"name", sw_get_name, NULL,
     PyDoc_STR("The registered name of this descriptor (an exact str)."), NULL},
    {"value", sw_get_name, NULL,
     PyDoc_STR("Compatibility alias of name: the registered name."), NULL},
    {"supertype", sw_get_supertype, NULL,
     PyDoc_STR("The immediately enclosing category, or None."), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef sw_base_methods[] = {
    {"supertypes", sw_supertypes, METH_NOARGS,
     PyDoc_STR("supertypes($self, /)\n--\n\n"
               "Return every enclosing category, nearest first, as a tuple.")},
    {"is_subtype_of", sw_is_subtype_of, METH_O,
     PyDoc_STR("is_subtype_of($self, other, /)\n--\n\n"
               "Return True if this descriptor is other or reaches it through "
               "its category chain.\n\nRaises TypeError when other is not a "
               "DType.")},
    {"is_category", sw_is_category, METH_NOARGS,
     PyDoc_STR("is_category($self, /)\n--\n\n"
               "Return True for a DTypeCategory.")},
    {"is_simple", sw_is_simple, METH_NOARGS,
     PyDoc_STR("is_simple($self, /)\n--\n\n"
               "Return True for a SimpleDType (one fixed-width encoding).")},
    {"is_compound", sw_is_compound, METH_NOARGS,
     PyDoc_STR("is_compound($self, /)\n--\n\n"
               "Return True for a CompoundDType (stored in several planes).")},
    {"structure", sw_structure, METH_NOARGS,
     PyDoc_STR("structure($self, /)\n--\n\n"
               "Return the immutable canonical structure recorded when this "
               "descriptor was registered.\n\nIt is a nested tuple of exact "
               "str leaves; see docs/structure.md for the format.")},
    {"structure_extension", sw_structure_extension, METH_NOARGS,
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
    {"__reduce__", sw_reduce, METH_NOARGS,
     PyDoc_STR("__reduce__($self, /)\n--\n\n"
               "Pickle as (name, structure); loading returns the receiving "
               "process's registered identity.")},
    {"__reduce_ex__", sw_reduce_ex, METH_O,
     PyDoc_STR("__reduce_ex__($self, protocol, /)\n--\n\n"
               "Same as __reduce__() for every protocol.")},
    {"__dir__", sw_dir, METH_NOARGS,
     PyDoc_STR("__dir__($self, /)\n--\n\nThe attribute names of the "
               "descriptor.")},
    {"__copy__", sw_copy, METH_NOARGS,
     PyDoc_STR("__copy__($self, /)\n--\n\nReturn self: descriptors are "
               "identities.")},
    {"__deepcopy__", sw_deepcopy, METH_O,
     PyDoc_STR("__deepcopy__($self, memo, /)\n--\n\nReturn self: "
               "descriptors are identities.")},
    {"from_name", sw_from_name, METH_O | METH_CLASS,
     PyDoc_STR("from_name($cls, name, /)\n--\n\n"
               "Return the descriptor registered under name.\n\n"
               "Called on a subclass, the descriptor must also be an "
               "instance of it.  Raises TypeError for a non-str name and "
               "LookupError for an unknown name or a kind mismatch.")},
    {"registered", sw_registered, METH_NOARGS | METH_CLASS,
     PyDoc_STR("registered($cls, /)\n--\n\n"
               "Return an immutable tuple snapshot of the registered "
               "descriptors that are instances of this class, in "
               "registration order.")},
    {"ensure", SW_CFUNC(sw_ensure), METH_VARARGS | METH_KEYWORDS | METH_CLASS,
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
    {"__init_subclass__", SW_CFUNC(sw_init_subclass),
     METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     PyDoc_STR("__init_subclass__($cls, /)\n--\n\n"
               "Refuse class keywords other than the metaclass's "
               "'abstract'.")},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef sw_base_members[] = {
    {"__weaklistoffset__", T_PYSSIZET, offsetof(sw_descriptor, weakreflist),
     READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot sw_base_slots[] = {
    {Py_tp_doc, (void *)PyDoc_STR(
        "The C layout shared by every descriptor; not used directly.")},
    {Py_tp_new, sw_base_new},
    {Py_tp_dealloc, sw_base_dealloc},
    {Py_tp_traverse, sw_base_traverse},
    {Py_tp_clear, sw_base_clear},
    {Py_tp_setattro, sw_base_setattro},
    {Py_tp_repr, sw_descriptor_repr},
    {Py_tp_getattro, PyObject_GenericGetAttr},
    {Py_tp_getset, sw_sealed_getset},
    {Py_tp_hash, sw_identity_hash},
    {Py_tp_richcompare, sw_identity_richcompare},
    {Py_tp_str, sw_descriptor_str},
    {Py_tp_members, sw_base_members},
    {0, NULL},
};

static PyType_Spec sw_base_spec = {
    .name = "stride_weave._dtypes._DescriptorBase",
    .basicsize = sizeof(sw_descriptor),
    .itemsize = 0,
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC
             | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = sw_base_slots,
};

/* Put the accessors and methods every descriptor has into DType's
 * namespace (descriptors bound to the C layout), so that help(DType) and
 * DType.__dict__ show them where users look for them. */
int
sw_dtype_fill_namespace(sw_state *st, PyObject *ns)
{
    PyGetSetDef *g;
    PyMethodDef *m;

    for (g = sw_base_getset; g->name != NULL; g++) {
        PyObject *descr = PyDescr_NewGetSet(st->base_type, g);
        if (descr == NULL || PyDict_SetItemString(ns, g->name, descr) < 0) {
            Py_XDECREF(descr);
            return -1;
        }
        Py_DECREF(descr);
    }
    for (m = sw_base_methods; m->ml_name != NULL; m++) {
        PyObject *descr;

        if (m->ml_meth == sw_from_name || m->ml_meth == sw_registered) {
            descr = sw_class_bound_new(st, m->ml_name);
        }
        else {
            descr = (m->ml_flags & METH_CLASS)
                ? PyDescr_NewClassMethod(st->base_type, m)
                : PyDescr_NewMethod(st->base_type, m);
        }
        if (descr == NULL || PyDict_SetItemString(ns, m->ml_name, descr) < 0) {
            Py_XDECREF(descr);
            return -1;
        }
        Py_DECREF(descr);
    }
    return 0;
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

    for (m = sw_base_methods; m->ml_name != NULL; m++) {
        PyObject *descr;
        int status;

        if (m->ml_meth == sw_structure_extension || m->ml_meth == sw_dir
            || m->ml_meth == SW_CFUNC(sw_ensure)
            || m->ml_meth == (PyCFunction)(void (*)(void))sw_init_subclass) {
            continue;
        }
        if (m->ml_flags & METH_CLASS) {
            /* from_name, registered: DType's _ClassBound entries bind them
             * per class; ensure: DType's classmethod. */
            continue;
        }
        descr = PyDescr_NewMethod(cls, m);
        if (descr == NULL) {
            return -1;
        }
        status = PyDict_SetItemString(cls->tp_dict, m->ml_name, descr);
        Py_DECREF(descr);
        if (status < 0) {
            return -1;
        }
    }
    PyType_Modified(cls);
    return 0;
}

PyObject *
sw_base_create_type(PyObject *module)
{
    return PyType_FromModuleAndSpec(module, &sw_base_spec, NULL);
}
