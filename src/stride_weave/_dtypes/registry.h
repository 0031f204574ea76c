/* registry.h: the name registry (registry.c): names to descriptors, the
 * registration order and the snapshot of registered(); the names a miss
 * suggests (suggest.c) and the miss itself (miss.c).
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
Py_ssize_t sw_registry_close_names(sw_registry *r, PyObject *name,
                                   Py_ssize_t registered, PyObject *extra,
                                   PyObject **out);
int sw_registry_contains(sw_registry *r, PyObject *name);
int sw_registry_is_canonical(sw_registry *r, struct sw_descriptor *d);
int sw_registry_publish(sw_registry *r, struct sw_descriptor *d, PyObject *owned,
                        PyObject *unique, PyObject **existing);
PyObject *sw_registry_snapshot(sw_registry *r, PyTypeObject *cls);

/* suggest.c: the names close to a query among candidates offered one by
 * one.  Candidates are exact str; those longer than SW_SUGGEST_MAX_LENGTH
 * (and every candidate, for a query that long) are neither matched nor
 * suggested.  Pure C: the caller keeps the query and every name it offers
 * alive until sw_suggest_finish, which stores up to SW_SUGGEST_COUNT new
 * references in out and returns how many. */
#define SW_SUGGEST_COUNT 3
#define SW_SUGGEST_MAX_LENGTH 200
#define SW_SUGGEST_BUCKETS 64

typedef struct {
    PyObject *name;         /* borrowed: an offered candidate */
    Py_ssize_t matched;     /* its ratio is 2 * matched / total */
    Py_ssize_t total;
} sw_suggest_close;

typedef struct {
    PyObject *query;                        /* borrowed */
    Py_ssize_t qlen;
    Py_UCS4 q[SW_SUGGEST_MAX_LENGTH];       /* its characters */
    Py_UCS4 qfold[SW_SUGGEST_MAX_LENGTH];   /* ... lowercased */
    unsigned char popular[SW_SUGGEST_MAX_LENGTH];   /* difflib's autojunk */
    Py_ssize_t hist[SW_SUGGEST_BUCKETS];    /* character counts, per
                                               code point modulo the
                                               bucket count */
    PyObject *same[SW_SUGGEST_COUNT];       /* borrowed: equal ignoring
                                               case, first offered first */
    Py_ssize_t nsame;
    sw_suggest_close close[SW_SUGGEST_COUNT];   /* best first */
    Py_ssize_t nclose;
    const char *alias;      /* the name the query is another library's
                               name for (aliases.c), or NULL */
    PyObject *alias_found;  /* borrowed: that name, once offered */
} sw_suggest;

void sw_suggest_start(sw_suggest *s, PyObject *query);
void sw_suggest_offer(sw_suggest *s, PyObject *candidate);
Py_ssize_t sw_suggest_finish(sw_suggest *s, PyObject **out);

/* aliases.c: the names other libraries give the built-in and pack
 * formats.  sw_alias_of: the descriptor name the exact str `name` is a
 * foreign name for (static text), or NULL; pure C, cannot fail.
 * sw_alias_table_tuple: the table as ((foreign, ours), ...), new
 * reference, or NULL with an exception. */
const char *sw_alias_of(PyObject *name);
PyObject *sw_alias_table_tuple(void);

/* miss.c: the LookupError of a name that is not registered */
struct sw_state;
PyObject *sw_miss_find(struct sw_state *st, PyObject *name);
int sw_miss_create_type(PyObject *module, struct sw_state *st);

#endif /* SW_REGISTRY_H */
