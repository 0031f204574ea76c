/* privtable.h: the graph's private tables.
 *
 * Plain dicts that no Python code can reach, with the few operations the
 * registry and the caches use on them.
 */
#ifndef SW_PRIVTABLE_H
#define SW_PRIVTABLE_H

#include "compat.h"

/* The graph's internal tables (the registry's maps, the shared-structure,
 * chain, reference and rule caches) are plain dicts that no Python code
 * can reach: the module's traverse does not visit them, and they are kept
 * untracked by the garbage collector, so neither gc.get_referents() nor
 * gc.get_objects() hands them out.  A dict tracks itself again when it
 * stores a tracked value, hence the untrack after every insertion.  The
 * owner's traverse visits their entries instead (sw_private_traverse), so
 * the collector still sees every reference they hold and can free a whole
 * graph when its interpreter ends. */
static inline PyObject *
sw_private_dict_new(void)
{
    PyObject *dict = PyDict_New();

    if (dict != NULL) {
        PyObject_GC_UnTrack(dict);
    }
    return dict;
}

/* tp_traverse helper: visit the keys and values of a private table. */
static inline int
sw_private_traverse(PyObject *dict, visitproc visit, void *arg)
{
    PyObject *key, *value;
    Py_ssize_t pos = 0;

    if (dict == NULL) {
        return 0;
    }
    while (PyDict_Next(dict, &pos, &key, &value)) {
        Py_VISIT(key);
        Py_VISIT(value);
    }
    return 0;
}

/* A new reference to the value under `key` in a private table, or NULL
 * (with an exception on error).  Free-threaded builds read inside the
 * dict's critical section: CPython's lock-free dict reads are not ordered
 * against a concurrent insertion (ThreadSanitizer reports them). */
static inline PyObject *
sw_private_get(PyObject *dict, PyObject *key)
{
    PyObject *found;

    Py_BEGIN_CRITICAL_SECTION(dict);
    found = Py_XNewRef(PyDict_GetItemWithError(dict, key));
    Py_END_CRITICAL_SECTION();
    return found;
}

/* PyDict_SetDefault on a private table (borrowed result). */
static inline PyObject *
sw_private_setdefault(PyObject *dict, PyObject *key, PyObject *value)
{
    PyObject *result = PyDict_SetDefault(dict, key, value);

    PyObject_GC_UnTrack(dict);
    return result;
}

/* PyDict_SetItem on a private table. */
static inline int
sw_private_setitem(PyObject *dict, PyObject *key, PyObject *value)
{
    int status = PyDict_SetItem(dict, key, value);

    PyObject_GC_UnTrack(dict);
    return status;
}

#endif /* SW_PRIVTABLE_H */
