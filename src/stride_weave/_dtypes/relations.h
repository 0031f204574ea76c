/* relations.h: how dtypes relate: their kinds (relations.c), which casts
 * are safe (casting.c), and promotion lattices (lattice.c, promotion.c).
 *
 * Everything here answers from the numeric records (numinfo.h) and the
 * category hierarchy, never from a table of pairs, so extension dtypes
 * with records are answered exactly as the built-ins are.
 */
#ifndef SW_RELATIONS_H
#define SW_RELATIONS_H

#include "compat.h"
#include "descriptor.h"
#include "numinfo.h"
#include "state.h"

/* ---- kinds (relations.c) ------------------------------------------------------ */

/* The Array API kinds as bits; a dtype's mask has every kind it belongs
 * to (a signed integer is also integral and numeric).  The values are the
 * C API's SW_ISDTYPE_* (include/stride_weave/dtypes.h); capi.c checks
 * that they agree. */
enum {
    SW_KINDS_BOOL = 1 << 0,
    SW_KINDS_SIGNED = 1 << 1,
    SW_KINDS_UNSIGNED = 1 << 2,
    SW_KINDS_INTEGRAL = 1 << 3,
    SW_KINDS_REAL = 1 << 4,
    SW_KINDS_COMPLEX = 1 << 5,
    SW_KINDS_NUMERIC = 1 << 6,
    SW_KINDS_ALL = (1 << 7) - 1,
};

/* The kind names isdtype accepts, in the order of the bits above; their
 * interned strings are st->relation_names[SW_RELNAME_KIND + i]. */
#define SW_KINDS_COUNT 7

/* numpy's order of kinds for same_kind casts and weak scalars. */
typedef enum {
    SW_RANK_NONE = -1,      /* no numeric kind (a compound dtype, Any...) */
    SW_RANK_BOOL = 0,
    SW_RANK_UNSIGNED,
    SW_RANK_SIGNED,
    SW_RANK_REAL,
    SW_RANK_COMPLEX,
} sw_rank;

/* Indexes into st->relation_names (interned once per graph). */
typedef enum {
    SW_RELNAME_KIND = 0,                        /* SW_KINDS_COUNT kind names */
    SW_RELNAME_CASTING = SW_RELNAME_KIND + SW_KINDS_COUNT,  /* 5 levels */
    SW_RELNAME_SCALAR = SW_RELNAME_CASTING + 5, /* "bool", "int", "float",
                                                   "complex" */
    SW_RELNAME_COUNT = SW_RELNAME_SCALAR + 4,
} sw_relname;

/* The casting levels, in numpy's (and the C API's) order. */
typedef enum {
    SW_CASTING_NO = 0,
    SW_CASTING_EQUIV,
    SW_CASTING_SAFE,
    SW_CASTING_SAME_KIND,
    SW_CASTING_UNSAFE,
    SW_CASTING_COUNT,
} sw_casting;

/* `obj` as a registered descriptor of `st`'s graph (borrowed), else NULL
 * without an exception. */
static inline sw_descriptor *
sw_relations_registered(sw_state *st, PyObject *obj)
{
    sw_descriptor *d;

    if (!PyObject_TypeCheck(obj, st->base_type)) {
        return NULL;
    }
    d = (sw_descriptor *)obj;
    return SW_LOAD_FLAG(d->build_state) == SW_FINISHED ? d : NULL;
}

/* The same, or NULL with TypeError (not a descriptor) or ValueError (a
 * descriptor object that is not registered) naming `func` and `arg`. */
sw_descriptor *sw_relations_arg(sw_state *st, PyObject *obj, const char *func,
                                const char *arg);

int sw_relations_init(PyObject *module, sw_state *st);
extern PyMethodDef sw_relations_methods[];
unsigned int sw_relations_kinds_of(sw_state *st, sw_descriptor *d);
int sw_relations_rank(sw_state *st, sw_descriptor *d);

/* ---- casting (casting.c) --------------------------------------------------- */

int sw_casting_formats_safe(const sw_numeric_format *from,
                            const sw_numeric_format *to);
int sw_casting_can(sw_state *st, sw_descriptor *from, sw_descriptor *to,
                   int casting);
extern PyMethodDef sw_casting_methods[];

/* ---- lattices (lattice.c) -------------------------------------------------- */

/* A lattice holds at most this many dtypes that have an edge: its joins
 * are a dense table of 16-bit indexes. */
#define SW_LATTICE_MAX_DTYPES 4096
#define SW_LATTICE_NONE 0xFFFF

/* The weak Python scalars, in the order of their kinds. */
typedef enum {
    SW_SCALAR_BOOL = 0,
    SW_SCALAR_INT,
    SW_SCALAR_FLOAT,
    SW_SCALAR_COMPLEX,
    SW_SCALAR_COUNT,
} sw_scalar;

/* An immutable promotion lattice (PromotionLattice).  Its dtypes are in a
 * linear extension of the order (a lower dtype before every dtype above
 * it); `local` maps a descriptor's relation id to its index here, and
 * `join` is the count x count table of least upper bounds. */
typedef struct sw_lattice {
    PyObject_HEAD
    Py_ssize_t count;
    PyObject **dtypes;          /* strong references, count of them */
    uint32_t id_count;          /* length of local */
    uint16_t *local;            /* relation id -> index, or SW_LATTICE_NONE */
    uint16_t *join;             /* count * count indexes, or SW_LATTICE_NONE */
    Py_ssize_t cover_count;
    uint16_t *covers;           /* the Hasse diagram: cover_count (lower,
                                   upper) index pairs, in dtype order */
    PyObject *scalar_defaults[SW_SCALAR_COUNT];     /* strong, or NULL */
    int is_default;             /* a snapshot of the default lattice */
    struct sw_lattice *previous;    /* a default snapshot: the one it
                                       replaced, kept alive (promotion.c) */
} sw_lattice;

int sw_lattice_create_type(PyObject *module, sw_state *st);

/* The relation id of `d` (0: in no lattice yet). */
static inline uint32_t
sw_lattice_id_of(sw_descriptor *d)
{
#ifdef Py_GIL_DISABLED
    return _Py_atomic_load_uint32_relaxed(&d->relation_id);
#else
    return d->relation_id;
#endif
}

/* The index of `d` in `lat`, or SW_LATTICE_NONE.  Runs no Python code. */
static inline unsigned int
sw_lattice_index(sw_lattice *lat, sw_descriptor *d)
{
    uint32_t id = sw_lattice_id_of(d);

    return id < lat->id_count ? lat->local[id] : SW_LATTICE_NONE;
}

/* The join of `a` and `b` in `lat` (borrowed: the lattice holds it), or
 * NULL, without an exception, when they have none.  Runs no Python code. */
static inline PyObject *
sw_lattice_join(sw_lattice *lat, sw_descriptor *a, sw_descriptor *b)
{
    unsigned int i, j, k;

    if (a == b) {
        return (PyObject *)a;
    }
    i = sw_lattice_index(lat, a);
    j = sw_lattice_index(lat, b);
    if (i == SW_LATTICE_NONE || j == SW_LATTICE_NONE) {
        return NULL;
    }
    k = lat->join[(Py_ssize_t)i * lat->count + j];
    return k == SW_LATTICE_NONE ? NULL : lat->dtypes[k];
}

/* A new lattice: `base` (or nothing) plus `edges`, a tuple of (lower,
 * upper) tuples, checked as `func` (see lattice.c). */
sw_lattice *sw_lattice_build(sw_state *st, sw_lattice *base, PyObject *edges,
                             int lossy, int is_default,
                             PyObject *const *scalar_defaults, const char *func);
PyObject *sw_lattice_edges_arg(PyObject *edges, const char *func);

/* ---- promotion (promotion.c) ----------------------------------------------- */

int sw_promotion_init(PyObject *module, sw_state *st);
extern PyMethodDef sw_promotion_methods[];
const char *sw_promotion_exclusion(sw_state *st, sw_descriptor *d);
PyObject *sw_promotion_promote(sw_state *st, sw_lattice *lat, PyObject *a,
                               PyObject *b, const char *func);
PyObject *sw_promotion_result_type(sw_state *st, sw_lattice *lat,
                                   PyObject *const *args, Py_ssize_t nargs,
                                   const char *func);


#endif /* SW_RELATIONS_H */
