/* registry.h: the name registry (registry.c): names to descriptors, the
 * registration order and the snapshot of registered().
 */
#ifndef SW_REGISTRY_H
#define SW_REGISTRY_H

#include "compat.h"

typedef struct {
#ifdef SW_HAVE_PYMUTEX
    PyMutex mutex;
#else
    PyThread_type_lock lock;
#endif
    PyObject *by_name;      /* private dict: exact str -> descriptor */
    PyObject *by_structure; /* private dict: structure -> descriptor, for the
                               kinds unique by structure (block-scaled) */
    PyObject **order;       /* registration order (strong references) */
    Py_ssize_t count;
    Py_ssize_t capacity;
    uint64_t version;       /* bumped by every registration */
    PyObject *snapshot;     /* cached tuple of all descriptors, or NULL */
} sw_registry;


struct sw_descriptor;

int sw_registry_init(sw_registry *r);
void sw_registry_fini(sw_registry *r);
int sw_registry_traverse(sw_registry *r, visitproc visit, void *arg);
PyObject *sw_registry_lookup(sw_registry *r, PyObject *name);
Py_ssize_t sw_registry_count(sw_registry *r);
struct sw_state;
PyObject *sw_registry_close_names(struct sw_state *st, PyObject *name,
                                  Py_ssize_t registered);
int sw_registry_contains(sw_registry *r, PyObject *name);
int sw_registry_is_canonical(sw_registry *r, struct sw_descriptor *d);
int sw_registry_publish(sw_registry *r, struct sw_descriptor *d, PyObject *owned,
                        PyObject *unique, PyObject **existing);
PyObject *sw_registry_snapshot(sw_registry *r, PyTypeObject *cls);

/* miss.c: the LookupError of a name that is not registered */
PyObject *sw_miss_find(struct sw_state *st, PyObject *name);
int sw_miss_create_type(PyObject *module, struct sw_state *st);

#endif /* SW_REGISTRY_H */
