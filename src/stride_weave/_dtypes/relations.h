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

/* The relation id of `d`: its index in promotion lattices and the cache
 * of casts, given once when first needed (0: not yet). */
static inline uint32_t
sw_lattice_id_of(sw_descriptor *d)
{
    return SW_LOAD_RELAXED(d->relation_id);
}

/* `obj` as a registered descriptor of `st`'s graph (borrowed), else NULL
 * without an exception.  Every class whose metaclass is this graph's
 * DTypeMeta (which cannot be subclassed) lays its instances out as
 * sw_descriptor, so two loads decide it. */
static inline sw_descriptor *
sw_relations_registered(sw_state *st, PyObject *obj)
{
    sw_descriptor *d;

    if (!Py_IS_TYPE((PyObject *)Py_TYPE(obj), st->meta_type)) {
        return NULL;
    }
    d = (sw_descriptor *)obj;
    return SW_LOAD_FLAG(d->build_state) == SW_FINISHED ? d : NULL;
}

/* The error of sw_relations_arg (relations.c): NULL with TypeError (not a
 * descriptor) or ValueError (a descriptor object that is not registered)
 * naming `func` and `arg`. */
sw_descriptor *sw_relations_arg_error(sw_state *st, PyObject *obj,
                                      const char *func, const char *arg);

/* `obj` as a registered descriptor (borrowed), or NULL with an exception
 * naming `func` and `arg`. */
static inline sw_descriptor *
sw_relations_arg(sw_state *st, PyObject *obj, const char *func, const char *arg)
{
    sw_descriptor *d = sw_relations_registered(st, obj);

    return d != NULL ? d : sw_relations_arg_error(st, obj, func, arg);
}

/* The index i in [first, first + count) of st->relation_names whose text
 * `name` (any str) spells, or -1.  By identity first, then by length and
 * bytes: a str subclass's methods never run. */
int sw_relations_match(sw_state *st, PyObject *name, int first, int count);

/* The index of `name` among st->relation_names[first, first + count) by
 * identity alone (the interned names and the first other exact str found
 * equal to each, kept as its alias), or -1.  Runs no Python code. */
static inline int
sw_relations_match_identity(sw_state *st, PyObject *name, int first, int count)
{
    int i;

    for (i = first; i < first + count; i++) {
        if (name == st->relation_names[i]
            || name == SW_LOAD_PTR(st->relation_aliases[i])) {
            return i;
        }
    }
    return -1;
}

int sw_relations_init(PyObject *module, sw_state *st);
int sw_relations_assign_id(sw_state *st, sw_descriptor *d);
extern PyMethodDef sw_relations_methods[];

/* ---- the one read of what a dtype means (relations.c) ---------------------- */

/* Every answer of the relations about a dtype (its kinds, a cast, the
 * kind of Python scalar it takes, a lattice's admission and lossless
 * checks, a scalar default's kind) reads the dtype through
 * sw_relations_read, saying what the answer depends on: SW_KINDS_* bits,
 * or these. */
#define SW_READ_RECORD (1u << 7)    /* the record itself: which values the
                                       dtype has (casts, lossless edges, the
                                       default lattice's admission) */
#define SW_READ_SCALAR (SW_KINDS_BOOL | SW_KINDS_INTEGRAL | SW_KINDS_REAL \
                        | SW_KINDS_COMPLEX)     /* the kind of Python scalar
                                                   it takes (bool, int,
                                                   float, complex) */
#define SW_READ_WORDING 0u          /* only a message's wording: settles
                                       nothing, so it must decide no answer */

/* What the relations read of a dtype. */
typedef struct {
    unsigned int kinds;                 /* SW_KINDS_*: from the record, else
                                           the category */
    const sw_numeric_format *record;    /* borrowed (a record is never
                                           replaced), or NULL */
    int fixed;                          /* 1 when neither can change: it
                                           has a record, can never have one
                                           (not a simple dtype), or was
                                           settled without one */
} sw_relations_view;

sw_relations_view sw_relations_read(sw_state *st, sw_descriptor *d,
                                    unsigned int asked);

/* Where kinds `kinds` stand in numpy's order bool < unsigned < signed <
 * real < complex (an sw_rank); integral without a sign counts as signed. */
static inline int
sw_relations_rank(unsigned int kinds)
{
    if (kinds & SW_KINDS_COMPLEX) {
        return SW_RANK_COMPLEX;
    }
    if (kinds & SW_KINDS_REAL) {
        return SW_RANK_REAL;
    }
    if (kinds & SW_KINDS_UNSIGNED) {
        return SW_RANK_UNSIGNED;
    }
    if (kinds & SW_KINDS_INTEGRAL) {
        return SW_RANK_SIGNED;
    }
    if (kinds & SW_KINDS_BOOL) {
        return SW_RANK_BOOL;
    }
    return SW_RANK_NONE;
}

/* ---- casting (casting.c) --------------------------------------------------- */

/* Whether `from` may be cast to `to` at level `casting` (an sw_casting):
 * 1 or 0, read through sw_relations_read with `asked` (SW_READ_RECORD for
 * an answer, which settles a dtype that an answer from its missing record
 * could otherwise change; SW_READ_WORDING for a message).  Safe answers
 * between dtypes with records are remembered.  Runs no Python code. */
int sw_casting_can(sw_state *st, sw_descriptor *from, sw_descriptor *to,
                   int casting, unsigned int asked);
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
    PyObject *undefined;        /* strong: a tuple of (a, b) tuples kept
                                   undefined (no dtype may be above both) */
    int is_default;             /* a snapshot of the default lattice */
    int lossy;                  /* some edge was declared lossy=True */
    int mixed_scalars;          /* a Python scalar of a kind above the
                                   operands' promotes them to its kind's
                                   scalar default */
    struct sw_lattice *retired_next;    /* not a reference: the next one on
                                           the state's stack of retired
                                           default lattices (promotion.c) */
} sw_lattice;

int sw_lattice_create_type(PyObject *module, sw_state *st);

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

/* How a lattice is built from its base (sw_lattice_build). */
typedef struct {
    int lossy;                  /* the new edges need not be safe casts */
    int is_default;             /* a snapshot of the default lattice */
    PyObject *const *scalar_defaults;   /* SW_SCALAR_COUNT borrowed dtypes,
                                           NULL entries keeping the base's;
                                           or NULL */
    int mixed_scalars;          /* 0 or 1; -1 keeps the base's */
    PyObject *undefined;        /* a tuple of (a, b) tuples to keep
                                   undefined besides the base's, or NULL */
    PyObject *order;            /* a tuple of the dtypes to place first, in
                                   that order (a lattice loaded from a
                                   pickle keeps its order), or NULL */
} sw_lattice_options;

/* A new lattice: `base` (or nothing) plus `edges`, a tuple of (lower,
 * upper) tuples, checked as `func` (see lattice.c). */
sw_lattice *sw_lattice_build(sw_state *st, sw_lattice *base, PyObject *edges,
                             const sw_lattice_options *options,
                             const char *func);
PyObject *sw_lattice_edges_arg(PyObject *edges, const char *func);

/* ---- promotion (promotion.c) ----------------------------------------------- */

int sw_promotion_init(PyObject *module, sw_state *st);
void sw_promotion_fini(sw_state *st);
sw_lattice *sw_promotion_default(sw_state *st);
extern PyMethodDef sw_promotion_methods[];
const char *sw_promotion_exclusion(sw_state *st, sw_descriptor *d,
                                   unsigned int asked);
PyObject *sw_promotion_promote(sw_state *st, sw_lattice *lat, PyObject *a,
                               PyObject *b, const char *func);
PyObject *sw_promotion_result_type(sw_state *st, sw_lattice *lat,
                                   PyObject *const *args, Py_ssize_t nargs,
                                   const char *func);


#endif /* SW_RELATIONS_H */
