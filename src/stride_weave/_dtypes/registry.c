/* registry.c: the name registry of one descriptor graph.
 *
 * Owns the name -> descriptor map, the registration order, the cached
 * registered() snapshots and the mutex around all of them.  Keys are exact
 * str objects (callers normalize), so dict operations never call user
 * __hash__/__eq__.  No Python code runs while the mutex is held: nothing in
 * a critical section calls back into user objects, and the only allocations
 * there are dict/array growth, which never trigger garbage collection.
 */
#include "registry.h"
#include "attrs.h"
#include "descriptor.h"
#include "meta.h"
#include "privtable.h"

/* ---- the mutex ----------------------------------------------------------- */

static void
sw_registry_lock(sw_registry *r)
{
#ifdef SW_HAVE_PYMUTEX
    PyMutex_Lock(&r->mutex);     /* detaches the thread state while waiting */
#else
    if (!PyThread_acquire_lock(r->lock, NOWAIT_LOCK)) {
        /* Contended: wait without holding the GIL so the holder can finish. */
        Py_BEGIN_ALLOW_THREADS
        PyThread_acquire_lock(r->lock, WAIT_LOCK);
        Py_END_ALLOW_THREADS
    }
#endif
}

static void
sw_registry_unlock(sw_registry *r)
{
#ifdef SW_HAVE_PYMUTEX
    PyMutex_Unlock(&r->mutex);
#else
    PyThread_release_lock(r->lock);
#endif
}

/* ---- lifecycle ----------------------------------------------------------- */

int
sw_registry_init(sw_registry *r)
{
#ifndef SW_HAVE_PYMUTEX
    r->lock = PyThread_allocate_lock();
    if (r->lock == NULL) {
        PyErr_NoMemory();
        return -1;
    }
#endif
    r->by_name = sw_private_dict_new();
    if (r->by_name == NULL) {
        return -1;
    }
    r->by_structure = sw_private_dict_new();
    if (r->by_structure == NULL) {
        return -1;
    }
    r->order = NULL;
    r->count = r->capacity = 0;
    r->version = 0;
    r->snapshot = NULL;
    return 0;
}

void
sw_registry_fini(sw_registry *r)
{
    PyObject *by_name = r->by_name;
    PyObject *by_structure = r->by_structure;
    PyObject *snapshot = r->snapshot;
    PyObject **order = r->order;
    Py_ssize_t i, count = r->count;

    /* Detach first: deallocating descriptors may look the registry up. */
    r->by_name = NULL;
    r->by_structure = NULL;
    r->snapshot = NULL;
    r->order = NULL;
    r->count = r->capacity = 0;
    r->version++;
    Py_XDECREF(snapshot);
    Py_XDECREF(by_name);
    Py_XDECREF(by_structure);
    for (i = 0; i < count; i++) {
        Py_DECREF(order[i]);
    }
    PyMem_Free(order);
#ifndef SW_HAVE_PYMUTEX
    if (r->lock != NULL) {
        PyThread_free_lock(r->lock);
        r->lock = NULL;
    }
#endif
}

/* The maps are private (see sw_private_dict_new): their entries are
 * visited, never the dicts. */
int
sw_registry_traverse(sw_registry *r, visitproc visit, void *arg)
{
    Py_ssize_t i;
    int err;

    for (i = 0; i < r->count; i++) {
        Py_VISIT(r->order[i]);
    }
    err = sw_private_traverse(r->by_name, visit, arg);
    if (err == 0) {
        err = sw_private_traverse(r->by_structure, visit, arg);
    }
    if (err == 0) {
        Py_VISIT(r->snapshot);
    }
    return err;
}

static int
sw_registry_check_alive(sw_registry *r)
{
    if (r->by_name == NULL) {
        PyErr_SetString(PyExc_RuntimeError,
                        "the stride_weave descriptor registry was finalized");
        return -1;
    }
    return 0;
}

/* ---- reads --------------------------------------------------------------- */

/* Return a new reference to the descriptor registered under the exact str
 * `name`, or NULL: with an exception set on error, without one if absent. */
PyObject *
sw_registry_lookup(sw_registry *r, PyObject *name)
{
    PyObject *found;

    assert(PyUnicode_CheckExact(name));
    if (sw_registry_check_alive(r) < 0) {
        return NULL;
    }
#ifdef Py_GIL_DISABLED
    sw_registry_lock(r);
    /* Exact str key: hashing and comparing run no Python code. */
    found = PyDict_GetItemWithError(r->by_name, name);
    Py_XINCREF(found);
    sw_registry_unlock(r);
#else
    /* With a GIL no lock is needed to read: the writer changes the dict
     * and seals the descriptor without releasing the GIL in between (no
     * Python code, no garbage collection inside its critical section), so
     * a reader sees a name either absent or bound to a sealed descriptor.
     * This keeps from_name() at the cost of a dict lookup. */
    found = PyDict_GetItemWithError(r->by_name, name);
    Py_XINCREF(found);
#endif
    return found;
}

/* The names a miss on the exact str `name` suggests among the first
 * `registered` names of the registry (the registry as it was when that
 * many were registered; it only grows): suggest.c chooses them, from the
 * cached registered() snapshot (taken under the registry lock by
 * sw_registry_snapshot, read here without it: a tuple, owned here, of
 * descriptors whose names never change).  Bounded work on a huge
 * registry: the candidates are the first SW_SUGGEST_HEAD registered names
 * (the built-ins come first) and the SW_SUGGEST_TAIL most recent ones.
 * Stores up to SW_SUGGEST_COUNT new references in out and returns how
 * many (none once the registry is finalized), or -1 with an exception. */
#define SW_SUGGEST_HEAD 256
#define SW_SUGGEST_TAIL 4096

Py_ssize_t
sw_registry_close_names(sw_registry *r, PyObject *name, Py_ssize_t registered,
                        PyObject *extra, PyObject **out)
{
    PyObject *all;
    Py_ssize_t i, n, found;
    sw_suggest suggest;

    if (r->by_name == NULL) {
        return 0;   /* finalized (late finalizers at shutdown) */
    }
    all = sw_registry_snapshot(r, NULL);
    if (all == NULL) {
        return -1;
    }
    /* From here to sw_suggest_finish nothing runs Python code: the names
     * offered, borrowed from `all`, stay alive. */
    sw_suggest_start(&suggest, name);
    n = Py_MIN(PyTuple_GET_SIZE(all), registered);
    for (i = 0; i < n; i++) {
        if (i == SW_SUGGEST_HEAD && n - SW_SUGGEST_TAIL > i) {
            i = n - SW_SUGGEST_TAIL;   /* skip the middle of a huge registry */
        }
        sw_suggest_offer(&suggest,
                         ((sw_descriptor *)PyTuple_GET_ITEM(all, i))->name);
    }
    /* The extra candidates not registered (a registered one was offered
     * above, or is too new to be): the names an opt-in pack would add.
     * `extra` is an exact tuple of exact str the module state holds. */
    for (i = 0; extra != NULL && i < PyTuple_GET_SIZE(extra); i++) {
        PyObject *candidate = PyTuple_GET_ITEM(extra, i);
        int known = sw_registry_contains(r, candidate);

        if (known < 0) {
            Py_DECREF(all);
            return -1;
        }
        if (known == 0) {
            sw_suggest_offer(&suggest, candidate);
        }
    }
    found = sw_suggest_finish(&suggest, out);
    Py_DECREF(all);
    return found;
}

/* How many descriptors are registered: the registration order's length,
 * whose first entries never change (the registry only grows).  A miss
 * records it, so its suggestions are the names registered at the miss
 * (miss.c). */
Py_ssize_t
sw_registry_count(sw_registry *r)
{
    Py_ssize_t count;

#ifdef Py_GIL_DISABLED
    sw_registry_lock(r);
#endif
    count = r->count;
#ifdef Py_GIL_DISABLED
    sw_registry_unlock(r);
#endif
    return count;
}

int
sw_registry_contains(sw_registry *r, PyObject *name)
{
    PyObject *found = sw_registry_lookup(r, name);

    if (found == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    Py_DECREF(found);
    return 1;
}

/* 1 when `d` is the finished identity registered under its name, else 0. */
int
sw_registry_is_canonical(sw_registry *r, sw_descriptor *d)
{
    PyObject *found;
    int result;

    if (SW_LOAD_FLAG(d->build_state) != SW_FINISHED || d->name == NULL) {
        return 0;
    }
    found = sw_registry_lookup(r, d->name);
    if (found == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    result = (found == (PyObject *)d);
    Py_DECREF(found);
    return result;
}

/* ---- the one write --------------------------------------------------------- */

/* Register `d` under d->name and seal it, atomically.  When `unique` is
 * not NULL (an exact tuple of exact str: a structure) it is claimed in the
 * same critical section, so a name and a structure are taken together or
 * not at all.  On success the frozen attributes (stolen from *frozen)
 * replace d's in the same step, and the dict they replace is returned in
 * *displaced for the caller to release after publication.  Returns 0 on
 * success, 1 if the name is taken, 2 if the structure is taken
 * (*existing: a new reference to its owner), -1 on error; no exception is
 * set for 1 and 2. */
static int
sw_registry_insert(sw_registry *r, sw_descriptor *d, PyObject *unique,
                   PyObject **existing, PyObject **frozen,
                   PyObject **displaced)
{
    PyObject *stale = NULL, *owner;
    int status = 0;

    assert(PyUnicode_CheckExact(d->name));
    if (sw_registry_check_alive(r) < 0) {
        return -1;
    }
    sw_registry_lock(r);
    switch (PyDict_Contains(r->by_name, d->name)) {
    case 1:
        status = 1;
        goto done;
    case -1:
        status = -1;
        goto done;
    }
    if (unique != NULL) {
        /* Exact tuples of exact str: hashing and comparing run no Python. */
        owner = PyDict_GetItemWithError(r->by_structure, unique);
        if (owner != NULL) {
            *existing = Py_NewRef(owner);
            status = 2;
            goto done;
        }
        if (PyErr_Occurred()) {
            status = -1;
            goto done;
        }
    }
    if (r->count == r->capacity) {
        Py_ssize_t capacity = r->capacity ? r->capacity * 2 : 64;
        PyObject **order = PyMem_Realloc(r->order,
                                         (size_t)capacity * sizeof(PyObject *));
        if (order == NULL) {
            PyErr_NoMemory();
            status = -1;
            goto done;
        }
        r->order = order;
        r->capacity = capacity;
    }
    /* The name is kept as given (an exact str), not interned: the registry
     * compares names by value, and an interned name would add an entry to
     * the interpreter's interned table (about 40 bytes per descriptor on a
     * large registry) to save only the string comparison of a lookup by an
     * equal, not identical, string.  It also leaves the caller's str alone,
     * which interning on free-threaded CPython 3.13 does not: it rewrites
     * the reference count of a string other threads may hold. */
    if (sw_private_setitem(r->by_name, d->name, (PyObject *)d) < 0) {
        status = -1;
        goto done;
    }
    if (unique != NULL
        && sw_private_setitem(r->by_structure, unique, (PyObject *)d) < 0) {
        /* Undo the name: both or neither.  Deleting an existing key of an
         * exact str cannot fail. */
        (void)PyDict_DelItem(r->by_name, d->name);
        status = -1;
        goto done;
    }
    r->order[r->count++] = Py_NewRef(d);
    r->version++;
    stale = r->snapshot;
    r->snapshot = NULL;
    /* Sealed inside the lock, with its frozen attributes: a thread that
     * finds d through the registry never sees it unsealed, and nothing
     * was released in between (no Python code ran). */
    *displaced = sw_attrs_install(&d->attrs, frozen);
    SW_STORE_FLAG(d->build_state, SW_FINISHED);
done:
    sw_registry_unlock(r);
    Py_XDECREF(stale);   /* outside the lock; holds only live descriptors */
    return status;
}

/* Seal d and register it, as one step: its build state becomes
 * SW_SEALING inside d's critical section, so from then on every write to
 * its attributes is refused (attrs.c) -- by another thread, by a
 * finalizer, also while this thread waits for the registry's lock (a
 * free-threaded build suspends d's critical section then).  Its user
 * attributes are frozen (attrs.c; `owned`: the model-owned names they may
 * not use), then registered and installed together (sw_registry_insert).
 * The dict the frozen copy replaces is released last, when d is
 * published and its finalizers find it sealed.  On failure d stays
 * SW_SEALING and the caller rejects it. */
int
sw_registry_publish(sw_registry *r, sw_descriptor *d, PyObject *owned,
                    PyObject *unique, PyObject **existing)
{
    PyObject *frozen = NULL, *displaced = NULL;
    int status;

    Py_BEGIN_CRITICAL_SECTION(d);
    if (SW_LOAD_FLAG(d->build_state) != SW_BUILDING) {
        PyErr_Format(PyExc_SystemError, "%R is not being built", d->name);
        status = -1;
    }
    else {
        SW_STORE_FLAG(d->build_state, SW_SEALING);
        status = sw_attrs_freeze((PyObject *)d, d->attrs, owned, &frozen);
    }
    if (status == 0) {
        status = sw_registry_insert(r, d, unique, existing, &frozen,
                                    &displaced);
    }
    Py_END_CRITICAL_SECTION();
    Py_XDECREF(frozen);      /* not installed: an unpublished copy */
    Py_XDECREF(displaced);   /* may run finalizers: d is sealed */
    if (status == 0) {
        /* Registered for the life of the interpreter: free-threaded 3.14+
         * readers need not update its reference count.  (Its class, a
         * heap type, already has CPython's deferred and per-thread
         * reference counting on free-threaded builds.) */
        sw_defer_refcount((PyObject *)d);
    }
    return status;
}

/* ---- snapshots ------------------------------------------------------------- */

/* Copy the descriptors that are instances of `cls` (all of them when `cls`
 * is NULL) into a new tuple.  The copy happens under the lock into a raw
 * buffer; the tuple is built after unlocking, because allocating a tuple
 * may start a garbage collection and with it arbitrary finalizers. */
static PyObject *
sw_registry_collect(sw_registry *r, PyTypeObject *cls, uint64_t *version)
{
    PyObject **items = NULL;
    Py_ssize_t n = 0, i;
    PyObject *result;

    for (;;) {
        Py_ssize_t capacity;

        sw_registry_lock(r);
        capacity = r->count;
        sw_registry_unlock(r);
        PyMem_Free(items);
        items = PyMem_Malloc((size_t)(capacity ? capacity : 1) * sizeof(PyObject *));
        if (items == NULL) {
            return PyErr_NoMemory();
        }
        sw_registry_lock(r);
        if (r->count > capacity) {
            /* Someone registered in between; size again. */
            sw_registry_unlock(r);
            continue;
        }
        n = 0;
        for (i = 0; i < r->count; i++) {
            PyObject *d = r->order[i];
            if (cls == NULL || PyObject_TypeCheck(d, cls)) {
                Py_INCREF(d);
                items[n++] = d;
            }
        }
        *version = r->version;
        sw_registry_unlock(r);
        break;
    }
    result = PyTuple_New(n);
    if (result == NULL) {
        for (i = 0; i < n; i++) {
            Py_DECREF(items[i]);
        }
        PyMem_Free(items);
        return NULL;
    }
    for (i = 0; i < n; i++) {
        PyTuple_SET_ITEM(result, i, items[i]);   /* steals */
    }
    PyMem_Free(items);
    return result;
}

/* Return a new reference to the registered() tuple for `cls`: every
 * descriptor when cls is NULL or DType, else the instances of cls.  The
 * result is cached (on the registry, or on the class for narrowed calls)
 * and rebuilt only after a registration. */
PyObject *
sw_registry_snapshot(sw_registry *r, PyTypeObject *cls)
{
    sw_type *t = NULL;
    PyObject *result, *stale = NULL;
    uint64_t version = 0;

    if (sw_registry_check_alive(r) < 0) {
        return NULL;
    }
    if (cls != NULL && sw_meta_is_descriptor_class(cls)) {
        sw_state *st = sw_state_of_type(cls);
        if (st == NULL) {
            return NULL;
        }
        t = (sw_type *)cls;
        if (cls == st->dtype_type) {
            t = NULL;
            cls = NULL;
        }
    }
    else {
        cls = NULL;   /* the C base: everything is an instance of it */
    }

    /* The cached snapshot, read without the lock when a GIL orders us
     * against the writer (see sw_registry_lookup). */
#ifdef Py_GIL_DISABLED
    sw_registry_lock(r);
#endif
    result = t ? (t->snapshot_version == r->version ? t->snapshot : NULL)
               : r->snapshot;
    Py_XINCREF(result);
#ifdef Py_GIL_DISABLED
    sw_registry_unlock(r);
#endif
    if (result != NULL) {
        return result;
    }

    result = sw_registry_collect(r, cls, &version);
    if (result == NULL) {
        return NULL;
    }
    sw_registry_lock(r);
    if (version == r->version) {
        if (t != NULL) {
            stale = t->snapshot;
            t->snapshot = Py_NewRef(result);
            t->snapshot_version = version;
        }
        else {
            stale = r->snapshot;
            r->snapshot = Py_NewRef(result);
        }
    }
    sw_registry_unlock(r);
    Py_XDECREF(stale);
    return result;
}
