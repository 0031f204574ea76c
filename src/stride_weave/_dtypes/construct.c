/* construct.c: the construction transaction of a descriptor.
 *
 * Owns what happens between a class call and a registered descriptor: the
 * claim each kind's __init__ takes first, the fields every kind sets (name,
 * supertype chain), the duplicate-name errors, ensure(), and finalization:
 * the kind's contract plus structure_extension() become the structure, and
 * the registry publishes the descriptor or refuses it.  Kinds are reached
 * through the kind table (kind.h) only.
 */
#include "descriptor.h"
#include "meta.h"
#include "numinfo.h"
#include "privtable.h"

/* Called first by every kind's __init__: refuses a second initialization
 * and a kind mismatch (SimpleDType.__init__ on a category, say), then
 * claims the object (initialized = SW_INIT_CLAIMED) inside its critical
 * section, so two threads never run a kind's __init__ on one object at
 * once (a free-threaded build would race on its fields).  The kind sets
 * initialized = 1 once every field is set; a claim whose __init__ failed
 * stays: the model's __init__ runs once per object. */
#define SW_INIT_CLAIMED 2

static int
sw_construct_check_claim(sw_descriptor *d, sw_kind kind, const char *funcname)
{
    int state = SW_LOAD_FLAG(d->build_state);

    if (state == SW_FINISHED) {
        PyErr_Format(PyExc_AttributeError,
                     "%s: descriptor %R is immutable and cannot be "
                     "initialized again", funcname, d->name);
        return -1;
    }
    if (state != SW_BUILDING) {
        PyErr_Format(PyExc_TypeError,
                     "%s: %s object is not under construction", funcname,
                     sw_type_name(Py_TYPE((PyObject *)d)));
        return -1;
    }
    if (!sw_kind_within(d->kind, kind)) {
        PyErr_Format(PyExc_TypeError,
                     "%s: expected self to be an instance of the class that "
                     "defines it, got a %s", funcname,
                     sw_type_name(Py_TYPE((PyObject *)d)));
        return -1;
    }
    if (SW_LOAD_FLAG(d->initialized)) {
        PyErr_Format(PyExc_TypeError,
                     "%s: the model's __init__ was already called on this %s; "
                     "call it once", funcname, sw_type_name(Py_TYPE((PyObject *)d)));
        return -1;
    }
    return 0;
}

int
sw_construct_begin_init(sw_descriptor *d, sw_kind kind, const char *funcname)
{
    int status;

    Py_BEGIN_CRITICAL_SECTION(d);
    status = sw_construct_check_claim(d, kind, funcname);
    if (status == 0) {
        SW_STORE_FLAG(d->initialized, SW_INIT_CLAIMED);
    }
    Py_END_CRITICAL_SECTION();
    return status;
}

/* Who registered `obj` (a descriptor), for duplicate-name errors, as a
 * new str: "mylib.formats.Float16Class" for an instance of a user class,
 * "SimpleDType in module 'mylib'" for a model class called directly, "a
 * built-in SimpleDType" for the built-in graph.  Read from the heap type's
 * fields without running any code: a `__module__` that is not a str is
 * left out. */
PyObject *
sw_construct_origin(PyObject *obj)
{
    PyTypeObject *tp = Py_TYPE(obj);
    sw_descriptor *d = (sw_descriptor *)obj;
    sw_state *st;
    PyObject *qualname = NULL, *module = NULL, *result;

    if (sw_meta_is_descriptor_class(tp) && ((sw_type *)tp)->is_model) {
        if (d->module == NULL) {
            return PyUnicode_FromFormat("a built-in %s", sw_type_name(tp));
        }
        return PyUnicode_FromFormat("%s in module %R", sw_type_name(tp),
                                    d->module);
    }
    st = sw_state_of_type(tp);
    if (st == NULL) {
        return NULL;
    }
    /* Strong references: a class attribute assignment (from a finalizer
     * another allocation runs) may replace either. */
    if (tp->tp_flags & Py_TPFLAGS_HEAPTYPE) {
        qualname = Py_XNewRef(((PyHeapTypeObject *)tp)->ht_qualname);
    }
    if (PyDict_GetItemRef(tp->tp_dict, st->idents[SW_IDENT_MODULE],
                          &module) < 0) {
        Py_XDECREF(qualname);
        return NULL;
    }
    if (qualname == NULL || !PyUnicode_Check(qualname)) {
        result = PyUnicode_FromString(sw_type_name(tp));
    }
    else if (module == NULL || !PyUnicode_Check(module)) {
        result = PyUnicode_FromFormat("%U", qualname);
    }
    else {
        result = PyUnicode_FromFormat("%U.%U", module, qualname);
    }
    Py_XDECREF(qualname);
    Py_XDECREF(module);
    return result;
}

/* ValueError: `name` is registered already, naming the class (and its
 * module) of the descriptor that holds it. */
static void
sw_construct_duplicate_error(sw_state *st, sw_descriptor *d, PyObject *name)
{
    PyObject *owner, *origin;

    owner = sw_registry_lookup(&st->registry, name);
    if (owner == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_Format(PyExc_ValueError, "%s: name %R is already registered",
                         sw_type_name(Py_TYPE(d)), name);
        }
        return;
    }
    origin = sw_construct_origin(owner);
    Py_DECREF(owner);
    if (origin == NULL) {
        return;
    }
    PyErr_Format(PyExc_ValueError,
                 "%s: name %R is already registered by %U",
                 sw_type_name(Py_TYPE(d)), name, origin);
    Py_DECREF(origin);
}

/* (supertype, *supertype.supertypes()): the supertypes() of every member
 * of a registered category, built once per category and shared (new ref). */
static PyObject *
sw_construct_chain(sw_state *st, PyObject *supertype)
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

/* Set what every kind has but the name: the supertype and the
 * supertypes() chain.  Also refuses an already registered `name` early, so
 * user code after super().__init__ does not run for a doomed descriptor
 * (the registration itself checks again, atomically).  The name itself is
 * stored by sw_construct_initialized, the kind's last step. */
int
sw_construct_set_common(sw_state *st, sw_descriptor *d, PyObject *name,
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
        sw_construct_duplicate_error(st, d, name);
        return -1;
    }
    if (supertype == Py_None) {
        supertype = NULL;
        chain = PyTuple_New(0);
    }
    else {
        chain = sw_construct_chain(st, supertype);
    }
    if (chain == NULL) {
        return -1;
    }
    Py_XSETREF(d->supertypes, chain);
    return 0;
}

/* The last step of every kind's __init__, once nothing can fail: store the
 * fixed attributes (descriptor.h), the exact str `name` and the exact int
 * `bits` (simple dtypes; NULL otherwise), and mark the descriptor
 * initialized, in one critical section.  So a slot never holds a value
 * while the descriptor is not usable, and a thread that holds a leaked
 * reference reads all or nothing (sw_descriptor_name_ref,
 * sw_descriptor_read_fixed); a member load of an empty slot gets the
 * model's ValueError through DType.__getattr__. */
void
sw_construct_initialized(sw_descriptor *d, PyObject *name, PyObject *bits)
{
    assert(d->name == NULL && d->bits == NULL);   /* the claim: once */
    Py_BEGIN_CRITICAL_SECTION(d);
    SW_STORE_PTR(d->name, Py_NewRef(name));
    if (bits != NULL) {
        SW_STORE_PTR(d->bits, Py_NewRef(bits));
    }
    SW_STORE_FLAG(d->initialized, 1);
    Py_END_CRITICAL_SECTION();
}

/* ---- finalization: the end of the construction transaction --------------- */

/* ensure() of a name registered with an identical structure: the records
 * must agree too, by the rule every pickle is loaded with
 * (sw_numrecords_match).  A definition without numeric_info states
 * nothing, and ensure never attaches a record to a registered dtype.  0,
 * or -1 with ValueError naming the first differing field.  Runs no Python
 * code but the owner's origin (formatted for the error). */
static int
sw_construct_same_record(sw_descriptor *d, sw_descriptor *owner)
{
    PyObject *mine = SW_LOAD_PTR(d->numeric), *stated, *difference, *origin;
    int status;

    if (d->kind != SW_KIND_SIMPLE || mine == NULL) {
        return 0;
    }
    stated = mine == Py_None ? Py_NewRef(Py_None)
                             : sw_numinfo_fields((sw_numinfo *)mine);
    if (stated == NULL) {
        return -1;
    }
    status = sw_numrecords_match(owner, stated, "this definition", &difference);
    Py_DECREF(stated);
    if (status <= 0) {
        return status;
    }
    origin = sw_construct_origin((PyObject *)owner);
    if (origin != NULL) {
        PyErr_Format(PyExc_ValueError,
                     "%s.ensure(): name %R is already registered by %U with a "
                     "different numeric record: %U; nothing was registered",
                     sw_type_name(Py_TYPE(d)), d->name, origin, difference);
        Py_DECREF(origin);
    }
    Py_DECREF(difference);
    return -1;
}

/* ensure(): d->name is taken.  The registered descriptor is the result
 * when its structure equals d's; otherwise ValueError naming the first
 * difference.  Registered descriptors are never removed or changed, so
 * the comparison after the registry's atomic refusal sees the winner. */
static int
sw_construct_ensure_existing(sw_state *st, sw_descriptor *d,
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
        if (sw_construct_same_record(d, (sw_descriptor *)owner) < 0) {
            Py_DECREF(owner);
            return -1;
        }
        *existing_out = owner;
        return 0;
    }
    origin = sw_construct_origin(owner);
    if (origin != NULL) {
        PyErr_Format(PyExc_ValueError,
                     "%s.ensure(): name %R is already registered by %U with "
                     "a different structure %U; nothing was registered",
                     sw_type_name(Py_TYPE(d)), d->name, origin, diff);
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
sw_construct_finalize(sw_state *st, sw_descriptor *d, PyObject **existing_out)
{
    PyObject *contract = NULL, *ext = NULL, *encoded = NULL;
    PyObject *field = NULL, *structure = NULL, *existing = NULL;
    PyObject *shared;   /* an equal registered structure (owned by d once set) */
    const sw_kind_def *kind;
    Py_ssize_t i, n;
    int status;

    if (SW_LOAD_FLAG(d->initialized) != 1) {
        PyErr_Format(PyExc_TypeError,
                     "%s.__init__ did not initialize the descriptor: it must "
                     "call super().__init__(...) with the model's arguments; "
                     "nothing was registered", sw_type_name(Py_TYPE(d)));
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
    ext = PyObject_CallMethodNoArgs((PyObject *)d, st->idents[SW_IDENT_STRUCTURE_EXTENSION]);
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
            status = sw_construct_ensure_existing(st, d, existing_out);
            if (status < 0) {
                goto error;
            }
            Py_DECREF(contract);
            Py_DECREF(ext);
            Py_DECREF(encoded);
            Py_DECREF(field);
            return 1;
        }
        sw_construct_duplicate_error(st, d, d->name);
        goto error;
    }
    if (status == 2) {
        PyErr_Format(PyExc_ValueError,
                     "%s %R duplicates the representation of the registered "
                     "%R: %s; nothing was registered",
                     sw_type_name(Py_TYPE(d)), d->name,
                     ((sw_descriptor *)existing)->name,
                     kind->unique_by_structure);
        Py_DECREF(existing);
        goto error;
    }
    if (shared == NULL
        && sw_private_setdefault(st->structures, d->structure, d->structure) == NULL) {
        /* d is published: raising now would report a failure for a
         * registered descriptor.  Sharing equal structures only saves
         * memory, so a failure to remember this one (MemoryError) is
         * dropped and changes nothing anyone can read. */
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

/* Cls.ensure(*args, **kwargs): construct as Cls(*args, **kwargs) does, but
 * when the name is registered with an identical structure return the
 * registered descriptor (re-run notebook cells, importlib.reload). */
PyObject *
sw_construct_ensure(PyObject *cls, PyObject *args, PyObject *kwds)
{
    if (!PyType_Check(cls) || !sw_meta_is_descriptor_class((PyTypeObject *)cls)) {
        PyErr_Format(PyExc_TypeError,
                     "ensure() must be called on a descriptor class, got %s",
                     Py_TYPE(cls)->tp_name);
        return NULL;
    }
    return sw_meta_construct(cls, args, kwds, 1);
}
