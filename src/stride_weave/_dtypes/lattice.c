/* lattice.c: promotion lattices, immutable.
 *
 * Owns PromotionLattice: building one from another plus declared edges,
 * with every guarantee checked there (no cycle; a pair that has a common
 * upper bound has a least one, so joins are commutative and associative;
 * no earlier join changes; edges lose nothing unless declared lossy in a
 * lattice of one's own; the default lattice's admission rule), and the
 * object's Python face (promote_types, result_type, extend, dtypes, edges,
 * scalar_defaults).
 *
 * A lattice is built once and never changes, so any thread may read it
 * without a lock.  Its dtypes are kept in a linear extension of the order
 * (each dtype before every dtype above it), which makes the least upper
 * bound of a pair, when there is one, the first of their common upper
 * bounds; the joins of every pair are computed when the lattice is built
 * and kept as a dense table of 16-bit indexes, and each dtype's index is
 * found through its relation id (sw_descriptor.relation_id), so a lookup
 * is two array reads.
 *
 * Building runs no Python code until the object is allocated at the end:
 * its work is C arrays (PyMem, which never starts a collection), and the
 * descriptors it reads are held by the base lattice and the caller's edge
 * tuple, both owned by the caller for the whole build.
 */
#include "relations.h"
#include "structure.h"

/* ---- bitsets --------------------------------------------------------------- */

typedef uint64_t sw_lattice_word;
#define SW_LATTICE_WORD_BITS 64

/* The lowest set bit of w (w != 0). */
static int
sw_lattice_lowest(sw_lattice_word w)
{
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(w);
#else
    int i = 0;
    while (!(w & 1)) {
        w >>= 1;
        i++;
    }
    return i;
#endif
}

static int
sw_lattice_has(const sw_lattice_word *row, Py_ssize_t i)
{
    return (row[i / SW_LATTICE_WORD_BITS] >> (i % SW_LATTICE_WORD_BITS)) & 1;
}

static void
sw_lattice_set(sw_lattice_word *row, Py_ssize_t i)
{
    row[i / SW_LATTICE_WORD_BITS] |= (sw_lattice_word)1 << (i % SW_LATTICE_WORD_BITS);
}

/* The working state of one build (all PyMem, freed by sw_lattice_work_free). */
typedef struct {
    Py_ssize_t n;               /* dtypes */
    Py_ssize_t words;           /* words per bitset row */
    PyObject **dtypes;          /* borrowed: base's and the edges' */
    sw_lattice_word *direct;    /* n rows: the edges out of each dtype */
    sw_lattice_word *up;        /* n rows, in linear-extension order: the
                                   dtypes at or above each */
    Py_ssize_t *order;          /* linear extension: order[k] = dtype index */
    Py_ssize_t *position;       /* position[i] = k where order[k] = i */
    uint16_t *join;             /* n * n, in linear-extension order */
    uint16_t *covers;
    Py_ssize_t cover_count;
    uint16_t *local;            /* relation id -> position */
    uint32_t id_count;
} sw_lattice_work;

static void
sw_lattice_work_free(sw_lattice_work *w)
{
    PyMem_Free(w->dtypes);
    PyMem_Free(w->direct);
    PyMem_Free(w->up);
    PyMem_Free(w->order);
    PyMem_Free(w->position);
    PyMem_Free(w->join);
    PyMem_Free(w->covers);
    PyMem_Free(w->local);
}

/* ---- checking edges ---------------------------------------------------------- */

/* `obj` (any iterable of pairs) as a new tuple of exact tuples of two,
 * or NULL with TypeError naming `func`, the argument `arg` and each item
 * as `item` with its `shape` ("(lower, upper)").  Iterating runs the
 * caller's code, before anything is read from a lattice; the pairs are
 * copied from each item's storage, so no method of an item runs. */
static PyObject *
sw_lattice_pairs_arg(PyObject *obj, const char *func, const char *arg,
                     const char *item_name, const char *shape)
{
    PyObject *tuple;
    Py_ssize_t i;
    int copied = 0;

    if (PyUnicode_Check(obj) || PyBytes_Check(obj)) {
        PyErr_Format(PyExc_TypeError,
                     "%s: %s must be an iterable of %s pairs, got an object of "
                     "type %.200s", func, arg, shape, Py_TYPE(obj)->tp_name);
        return NULL;
    }
    tuple = PySequence_Tuple(obj);
    if (tuple == NULL) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Format(PyExc_TypeError,
                         "%s: %s must be an iterable of %s pairs, got an "
                         "object of type %.200s", func, arg, shape,
                         Py_TYPE(obj)->tp_name);
        }
        return NULL;
    }
    for (i = 0; i < PyTuple_GET_SIZE(tuple); i++) {
        PyObject *item = PyTuple_GET_ITEM(tuple, i), *pair;

        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2) {
            PyErr_Format(PyExc_TypeError,
                         "%s: %s %zd must be a tuple %s, got an object of type "
                         "%.200s%s", func, item_name, i, shape,
                         Py_TYPE(item)->tp_name,
                         PyTuple_Check(item) ? " of another length" : "");
            Py_DECREF(tuple);
            return NULL;
        }
        if (PyTuple_CheckExact(item)) {
            continue;
        }
        /* A tuple subclass: its items copied into an exact tuple, in a
         * copy of the outer tuple (which may be the caller's own). */
        if (!copied) {
            PyObject *copy = PyTuple_New(PyTuple_GET_SIZE(tuple));
            Py_ssize_t k;

            if (copy == NULL) {
                Py_DECREF(tuple);
                return NULL;
            }
            for (k = 0; k < PyTuple_GET_SIZE(tuple); k++) {
                PyTuple_SET_ITEM(copy, k, Py_NewRef(PyTuple_GET_ITEM(tuple, k)));
            }
            Py_SETREF(tuple, copy);
            copied = 1;
        }
        pair = PyTuple_Pack(2, PyTuple_GET_ITEM(item, 0), PyTuple_GET_ITEM(item, 1));
        if (pair == NULL) {
            Py_DECREF(tuple);
            return NULL;
        }
        /* The copy's reference to `item`: its release may run a finalizer,
         * and only owned references are held here. */
        Py_DECREF(PyTuple_GET_ITEM(tuple, i));
        PyTuple_SET_ITEM(tuple, i, pair);
    }
    return tuple;
}

/* `edges` (any iterable of (lower, upper) pairs) as a new tuple of
 * tuples of two, or NULL with TypeError naming `func`. */
PyObject *
sw_lattice_edges_arg(PyObject *edges, const char *func)
{
    return sw_lattice_pairs_arg(edges, func, "edges", "edge", "(lower, upper)");
}

/* Check the edge (lower, upper) for a lattice (`is_default`: the default
 * one; `lossy`: lossy edges allowed): 0, or -1 with an exception. */
static int
sw_lattice_check_edge(sw_state *st, PyObject *lower, PyObject *upper,
                      int lossy, int is_default, const char *func)
{
    sw_descriptor *lo = sw_relations_arg(st, lower, func, "an edge's lower dtype");
    sw_descriptor *hi = lo ? sw_relations_arg(st, upper, func,
                                              "an edge's upper dtype") : NULL;
    sw_descriptor *ends[2] = {lo, hi};
    int i;

    if (hi == NULL) {
        return -1;
    }
    if (lo == hi) {
        PyErr_Format(PyExc_ValueError,
                     "%s: an edge joins two different dtypes, got %U -> %U",
                     func, lo->name, hi->name);
        return -1;
    }
    for (i = 0; i < 2; i++) {
        const char *why = NULL;

        if (ends[i]->kind == SW_KIND_CATEGORY) {
            why = "a category, not a dtype of values";
        }
        else if (is_default) {
            why = sw_promotion_exclusion(st, ends[i], SW_READ_RECORD);
        }
        if (why != NULL) {
            PyErr_Format(PyExc_ValueError,
                         "%s: %U -> %U: %U takes part in no implicit promotion "
                         "(%s)%s", func, lo->name, hi->name, ends[i]->name, why,
                         is_default && ends[i]->kind != SW_KIND_CATEGORY
                         ? "; a lattice of one's own may take it "
                           "(default_lattice().extend(...))" : "");
            return -1;
        }
    }
    if (!lossy && !sw_casting_can(st, lo, hi, SW_CASTING_SAFE, SW_READ_RECORD)) {
        PyErr_Format(PyExc_ValueError,
                     "%s: the edge %U -> %U is not lossless: not every %U value "
                     "is a %U value (can_cast(%U, %U) is False)%s", func,
                     lo->name, hi->name, lo->name, hi->name, lo->name, hi->name,
                     is_default ? "; lossy edges go in a lattice of one's own "
                                  "(default_lattice().extend(edges, lossy=True))"
                                : "; declare it with lossy=True to take it anyway");
        return -1;
    }
    return 0;
}

/* ---- building ------------------------------------------------------------------ */

/* The index of descriptor `d` among the first `n` of `w`, found through
 * w->local (valid for ids below w->id_count). */
static Py_ssize_t
sw_lattice_work_index(sw_lattice_work *w, PyObject *d)
{
    uint32_t id = sw_lattice_id_of((sw_descriptor *)d);

    return id < w->id_count && w->local[id] != SW_LATTICE_NONE
        ? w->local[id] : -1;
}

/* Add `d` to w's dtypes unless it is there: its index, or -1 with an
 * exception (too many).  w->dtypes and w->local have room. */
static Py_ssize_t
sw_lattice_work_add(sw_lattice_work *w, PyObject *d, const char *func)
{
    Py_ssize_t i = sw_lattice_work_index(w, d);

    if (i >= 0) {
        return i;
    }
    if (w->n >= SW_LATTICE_MAX_DTYPES) {
        PyErr_Format(PyExc_ValueError,
                     "%s: a promotion lattice holds at most %d dtypes that "
                     "have edges", func, SW_LATTICE_MAX_DTYPES);
        return -1;
    }
    w->dtypes[w->n] = d;
    w->local[sw_lattice_id_of((sw_descriptor *)d)] = (uint16_t)w->n;
    return w->n++;
}

/* 1 when dtype `to` is reachable from dtype `from` along w->direct. */
static int
sw_lattice_reaches(sw_lattice_work *w, Py_ssize_t from, Py_ssize_t to)
{
    Py_ssize_t *stack = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(w->n + 1));
    sw_lattice_word *seen = PyMem_Calloc((size_t)w->words, sizeof(sw_lattice_word));
    Py_ssize_t top = 0, j;
    int found = -1;

    if (stack == NULL || seen == NULL) {
        goto done;
    }
    found = 0;
    stack[top++] = from;
    sw_lattice_set(seen, from);
    while (top > 0 && !found) {
        Py_ssize_t i = stack[--top];
        for (j = 0; j < w->n; j++) {
            if (sw_lattice_has(w->direct + i * w->words, j) && !sw_lattice_has(seen, j)) {
                if (j == to) {
                    found = 1;
                    break;
                }
                sw_lattice_set(seen, j);
                stack[top++] = j;
            }
        }
    }
done:
    PyMem_Free(stack);
    PyMem_Free(seen);
    if (found < 0) {
        PyErr_NoMemory();
    }
    return found;
}

/* A linear extension of w's edges into w->order and w->position (the
 * lowest index first among the dtypes that are free, so an unchanged base
 * keeps its order): 0, or -1 with ValueError naming an edge of `edges` that
 * closes a cycle. */
static int
sw_lattice_order(sw_lattice_work *w, PyObject *edges, const char *func)
{
    Py_ssize_t n = w->n, k, i, j, *below;

    below = PyMem_Calloc((size_t)n + 1, sizeof(Py_ssize_t));
    if (below == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (i = 0; i < n; i++) {
        for (j = 0; j < n; j++) {
            below[j] += sw_lattice_has(w->direct + i * w->words, j);
        }
    }
    for (k = 0; k < n; k++) {
        for (i = 0; i < n && (below[i] != 0 || w->position[i] >= 0); i++) {
        }
        if (i == n) {
            break;      /* the rest lie on a cycle */
        }
        w->order[k] = i;
        w->position[i] = k;
        for (j = 0; j < n; j++) {
            below[j] -= sw_lattice_has(w->direct + i * w->words, j);
        }
    }
    PyMem_Free(below);
    if (k == n) {
        return 0;
    }
    /* A cycle: the base has none, so one of the new edges closes it. */
    for (i = 0; i < PyTuple_GET_SIZE(edges); i++) {
        PyObject *lower = PyTuple_GET_ITEM(PyTuple_GET_ITEM(edges, i), 0);
        PyObject *upper = PyTuple_GET_ITEM(PyTuple_GET_ITEM(edges, i), 1);
        int r = sw_lattice_reaches(w, sw_lattice_work_index(w, upper),
                                   sw_lattice_work_index(w, lower));
        if (r < 0) {
            return -1;
        }
        if (r) {
            PyErr_Format(PyExc_ValueError,
                         "%s: the edge %U -> %U would close a cycle: %U "
                         "already promotes to %U", func,
                         ((sw_descriptor *)lower)->name,
                         ((sw_descriptor *)upper)->name,
                         ((sw_descriptor *)upper)->name,
                         ((sw_descriptor *)lower)->name);
            return -1;
        }
    }
    PyErr_Format(PyExc_ValueError, "%s: the edges would close a cycle", func);
    return -1;
}

/* The name of the dtype at position k. */
static PyObject *
sw_lattice_work_name(sw_lattice_work *w, Py_ssize_t k)
{
    return ((sw_descriptor *)w->dtypes[w->order[k]])->name;
}

/* w->up (the closure) and w->join, in linear-extension positions: 0, or
 * -1 with ValueError naming a pair that has upper bounds but no least one
 * (and its result in `base`, where it has one). */
static int
sw_lattice_joins(sw_lattice_work *w, sw_lattice *base, const char *func)
{
    Py_ssize_t n = w->n, words = w->words, k, i, j, x;

    /* Each row: the dtype itself and the rows of its direct uppers, which
     * come later in the order, so are complete already. */
    for (k = n - 1; k >= 0; k--) {
        sw_lattice_word *row = w->up + k * words;
        const sw_lattice_word *direct = w->direct + w->order[k] * words;
        sw_lattice_set(row, k);
        for (j = 0; j < n; j++) {
            if (sw_lattice_has(direct, j)) {
                const sw_lattice_word *above = w->up + w->position[j] * words;
                for (x = 0; x < words; x++) {
                    row[x] |= above[x];
                }
            }
        }
    }
    for (i = 0; i < n; i++) {
        const sw_lattice_word *ui = w->up + i * words;
        w->join[i * n + i] = (uint16_t)i;
        for (j = i + 1; j < n; j++) {
            const sw_lattice_word *uj = w->up + j * words;
            Py_ssize_t c = -1, other = -1;

            if (sw_lattice_has(ui, j)) {
                c = j;
            }
            else {
                /* The first common upper bound is minimal among them; it
                 * is the least when every other one is above it. */
                for (x = 0; x < words && c < 0; x++) {
                    sw_lattice_word both = ui[x] & uj[x];
                    if (both) {
                        c = x * SW_LATTICE_WORD_BITS + sw_lattice_lowest(both);
                    }
                }
                for (x = 0; c >= 0 && x < words && other < 0; x++) {
                    sw_lattice_word rest = ui[x] & uj[x] & ~w->up[c * words + x];
                    if (rest) {
                        other = x * SW_LATTICE_WORD_BITS + sw_lattice_lowest(rest);
                    }
                }
            }
            if (other >= 0) {
                PyObject *a = w->dtypes[w->order[i]], *b = w->dtypes[w->order[j]];
                PyObject *now = base ? sw_lattice_join(base, (sw_descriptor *)a,
                                                       (sw_descriptor *)b) : NULL;
                if (now != NULL) {
                    PyErr_Format(PyExc_ValueError,
                                 "%s: would leave %U and %U, whose promotion is "
                                 "%U, without a least upper bound: %U and %U "
                                 "would both be above them, neither above the "
                                 "other", func, sw_lattice_work_name(w, i),
                                 sw_lattice_work_name(w, j),
                                 ((sw_descriptor *)now)->name,
                                 sw_lattice_work_name(w, c),
                                 sw_lattice_work_name(w, other));
                }
                else {
                    PyErr_Format(PyExc_ValueError,
                                 "%s: would give %U and %U upper bounds but no "
                                 "least one: %U and %U would both be above "
                                 "them, neither above the other (so the result "
                                 "of a promotion would depend on the order of "
                                 "its operands)", func, sw_lattice_work_name(w, i),
                                 sw_lattice_work_name(w, j),
                                 sw_lattice_work_name(w, c),
                                 sw_lattice_work_name(w, other));
                }
                return -1;
            }
            w->join[i * n + j] = w->join[j * n + i]
                = c < 0 ? SW_LATTICE_NONE : (uint16_t)c;
        }
    }
    return 0;
}

/* 0 when every join `base` defines is the same in w, else -1 with
 * ValueError naming the first pair whose result would change. */
static int
sw_lattice_check_stable(sw_lattice_work *w, sw_lattice *base, const char *func)
{
    Py_ssize_t i, j, n = w->n;

    for (i = 0; i < base->count; i++) {
        for (j = i + 1; j < base->count; j++) {
            unsigned int old = base->join[i * base->count + j];
            Py_ssize_t a = w->position[i], b = w->position[j];
            unsigned int now = w->join[a * n + b];

            if (old != SW_LATTICE_NONE && now == SW_LATTICE_NONE) {
                PyErr_Format(PyExc_SystemError, "%s: a join was lost", func);
                return -1;
            }

            /* Base dtypes keep their indexes in w (they come first).  The
             * old join stays a common upper bound, so the pair still has a
             * join (sw_lattice_joins checked it is the least). */
            if (old != SW_LATTICE_NONE
                && w->dtypes[w->order[now]] != base->dtypes[old]) {
                PyErr_Format(PyExc_ValueError,
                             "%s: would change promote_types(%U, %U) from %U to "
                             "%U, and a declaration never changes a defined "
                             "result", func,
                             ((sw_descriptor *)base->dtypes[i])->name,
                             ((sw_descriptor *)base->dtypes[j])->name,
                             ((sw_descriptor *)base->dtypes[old])->name,
                             ((sw_descriptor *)w->dtypes[w->order[now]])->name);
                return -1;
            }
        }
    }
    return 0;
}

/* w->covers: the pairs (lower, upper) with nothing strictly between them
 * (the Hasse diagram), in positions: 0, or -1. */
static int
sw_lattice_covers(sw_lattice_work *w)
{
    Py_ssize_t n = w->n, words = w->words, i, j, x, count = 0;
    sw_lattice_word *above = PyMem_Malloc(sizeof(sw_lattice_word) * (size_t)(words + 1));

    w->covers = PyMem_Malloc(sizeof(uint16_t) * 2 * (size_t)(n * n / 2 + 1));
    if (above == NULL || w->covers == NULL) {
        PyMem_Free(above);
        PyErr_NoMemory();
        return -1;
    }
    for (i = 0; i < n; i++) {
        const sw_lattice_word *ui = w->up + i * words;
        /* What is strictly above something strictly above i. */
        memset(above, 0, sizeof(sw_lattice_word) * (size_t)words);
        for (j = i + 1; j < n; j++) {
            if (sw_lattice_has(ui, j)) {
                /* Strictly above j: its row without j itself. */
                const sw_lattice_word *uj = w->up + j * words;
                for (x = 0; x < words; x++) {
                    sw_lattice_word self_bit = x == j / SW_LATTICE_WORD_BITS
                        ? (sw_lattice_word)1 << (j % SW_LATTICE_WORD_BITS) : 0;
                    above[x] |= uj[x] & ~self_bit;
                }
            }
        }
        for (j = i + 1; j < n; j++) {
            if (sw_lattice_has(ui, j) && !sw_lattice_has(above, j)) {
                w->covers[2 * count] = (uint16_t)i;
                w->covers[2 * count + 1] = (uint16_t)j;
                count++;
            }
        }
    }
    PyMem_Free(above);
    w->cover_count = count;
    return 0;
}

/* Allocate w's arrays for at most `capacity` dtypes and ids below
 * `id_count`: 0, or -1 with MemoryError. */
static int
sw_lattice_work_alloc(sw_lattice_work *w, Py_ssize_t capacity, uint32_t id_count)
{
    Py_ssize_t words = (capacity + SW_LATTICE_WORD_BITS - 1) / SW_LATTICE_WORD_BITS;
    size_t rows = (size_t)capacity * (size_t)(words ? words : 1);
    uint32_t i;

    w->words = words ? words : 1;
    w->id_count = id_count;
    w->dtypes = PyMem_Calloc((size_t)capacity + 1, sizeof(PyObject *));
    w->direct = PyMem_Calloc(rows + 1, sizeof(sw_lattice_word));
    w->up = PyMem_Calloc(rows + 1, sizeof(sw_lattice_word));
    w->order = PyMem_Calloc((size_t)capacity + 1, sizeof(Py_ssize_t));
    w->position = PyMem_Malloc(sizeof(Py_ssize_t) * ((size_t)capacity + 1));
    w->join = PyMem_Malloc(sizeof(uint16_t) * ((size_t)capacity * (size_t)capacity + 1));
    w->local = PyMem_Malloc(sizeof(uint16_t) * ((size_t)id_count + 1));
    if (w->dtypes == NULL || w->direct == NULL || w->up == NULL
        || w->order == NULL || w->position == NULL || w->join == NULL
        || w->local == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (i = 0; i < id_count; i++) {
        w->local[i] = SW_LATTICE_NONE;
    }
    for (i = 0; i < (uint32_t)capacity; i++) {
        w->position[i] = -1;
    }
    return 0;
}

/* What a new lattice keeps besides w's tables (sw_lattice_build). */
typedef struct {
    int is_default, lossy, mixed_scalars;
    PyObject *defaults[SW_SCALAR_COUNT];    /* borrowed, or NULL */
    PyObject *undefined;                    /* borrowed tuple */
} sw_lattice_kept;

/* The lattice object holding w's results (new reference; moves w's
 * arrays), or NULL.  The allocation may run Python code (a collection):
 * everything w and `kept` point to is held by the caller. */
static sw_lattice *
sw_lattice_publishable(sw_state *st, sw_lattice_work *w,
                       const sw_lattice_kept *kept)
{
    sw_lattice *lat;
    Py_ssize_t k, n = w->n;
    PyObject **dtypes;
    uint32_t id;
    int s;

    /* Dtypes in their order, and the ids mapped to positions. */
    dtypes = PyMem_Malloc(sizeof(PyObject *) * ((size_t)n + 1));
    if (dtypes == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    for (id = 0; id < w->id_count; id++) {
        if (w->local[id] != SW_LATTICE_NONE) {
            w->local[id] = (uint16_t)w->position[w->local[id]];
        }
    }
    for (k = 0; k < n; k++) {
        dtypes[k] = Py_NewRef(w->dtypes[w->order[k]]);
    }
    lat = PyObject_GC_New(sw_lattice, st->lattice_type);
    if (lat == NULL) {
        for (k = 0; k < n; k++) {
            Py_DECREF(dtypes[k]);
        }
        PyMem_Free(dtypes);
        return NULL;
    }
    lat->count = n;
    lat->dtypes = dtypes;
    lat->id_count = w->id_count;
    lat->local = w->local;
    lat->join = w->join;
    lat->cover_count = w->cover_count;
    lat->covers = w->covers;
    for (s = 0; s < SW_SCALAR_COUNT; s++) {
        lat->scalar_defaults[s] = Py_XNewRef(kept->defaults[s]);
    }
    lat->undefined = Py_NewRef(kept->undefined);
    lat->is_default = kept->is_default;
    lat->lossy = kept->lossy;
    lat->mixed_scalars = kept->mixed_scalars;
    lat->retired_next = NULL;
    w->local = NULL;
    w->join = NULL;
    w->covers = NULL;
    PyObject_GC_Track((PyObject *)lat);
    return lat;
}

/* 1 when every edge of `edges` already holds in `base` (it changes
 * nothing), else 0. */
static int
sw_lattice_adds_nothing(sw_lattice *base, PyObject *edges)
{
    Py_ssize_t i;

    for (i = 0; i < PyTuple_GET_SIZE(edges); i++) {
        PyObject *edge = PyTuple_GET_ITEM(edges, i);
        sw_descriptor *lower = (sw_descriptor *)PyTuple_GET_ITEM(edge, 0);
        PyObject *upper = PyTuple_GET_ITEM(edge, 1);

        if (sw_lattice_join(base, lower, (sw_descriptor *)upper) != upper) {
            return 0;
        }
    }
    return 1;
}

/* 1 when the pair (a, b), either way round, is among the `n` (a, b)
 * tuples `pairs`. */
static int
sw_lattice_has_pair(PyObject *const *pairs, Py_ssize_t n, PyObject *a,
                    PyObject *b)
{
    Py_ssize_t i;

    for (i = 0; i < n; i++) {
        PyObject *x = PyTuple_GET_ITEM(pairs[i], 0);
        PyObject *y = PyTuple_GET_ITEM(pairs[i], 1);

        if ((x == a && y == b) || (x == b && y == a)) {
            return 1;
        }
    }
    return 0;
}

/* The pairs the tuple `base` keeps undefined followed by those of the
 * tuple `more` (or NULL) it does not have yet, each once: `base` itself
 * when there is none, else a new tuple; NULL with an exception. */
static PyObject *
sw_lattice_merge_undefined(PyObject *base, PyObject *more)
{
    PyObject *list, *result;
    Py_ssize_t i;

    if (more == NULL || PyTuple_GET_SIZE(more) == 0) {
        return Py_NewRef(base);
    }
    list = PySequence_List(base);   /* an exact tuple: no code runs */
    for (i = 0; list != NULL && i < PyTuple_GET_SIZE(more); i++) {
        PyObject *pair = PyTuple_GET_ITEM(more, i);

        /* Items are read from the list's storage after each append: the
         * list is ours, and its items are exact tuples of two. */
        if (!sw_lattice_has_pair(PySequence_Fast_ITEMS(list), PyList_GET_SIZE(list),
                                 PyTuple_GET_ITEM(pair, 0),
                                 PyTuple_GET_ITEM(pair, 1))
            && PyList_Append(list, pair) < 0) {
            Py_CLEAR(list);
        }
    }
    if (list == NULL) {
        return NULL;
    }
    result = PyList_GET_SIZE(list) == PyTuple_GET_SIZE(base)
             ? Py_NewRef(base) : PyList_AsTuple(list);
    Py_DECREF(list);
    return result;
}

/* 0 when no dtype of w is above both dtypes of any pair of `undefined`
 * (so each stays undefined without making result_type depend on the
 * order of its operands), else -1 with ValueError naming the first pair
 * that would have one. */
static int
sw_lattice_check_undefined(sw_lattice_work *w, PyObject *undefined,
                           const char *func)
{
    Py_ssize_t i, n = w->n;

    for (i = 0; i < PyTuple_GET_SIZE(undefined); i++) {
        PyObject *pair = PyTuple_GET_ITEM(undefined, i);
        PyObject *a = PyTuple_GET_ITEM(pair, 0), *b = PyTuple_GET_ITEM(pair, 1);
        Py_ssize_t ia = sw_lattice_work_index(w, a), ib = sw_lattice_work_index(w, b);
        Py_ssize_t pa, pb;
        unsigned int join;

        if (ia < 0 || ib < 0) {
            continue;           /* one of them has no edge: no join */
        }
        pa = w->position[ia];
        pb = w->position[ib];
        join = w->join[pa * n + pb];
        if (join == SW_LATTICE_NONE) {
            continue;
        }
        if (join == (unsigned int)pa || join == (unsigned int)pb) {
            PyObject *lo = join == (unsigned int)pa ? b : a;
            PyObject *hi = join == (unsigned int)pa ? a : b;
            PyErr_Format(PyExc_ValueError,
                         "%s: %U and %U cannot be kept undefined: %U promotes "
                         "to %U in this lattice", func,
                         ((sw_descriptor *)a)->name, ((sw_descriptor *)b)->name,
                         ((sw_descriptor *)lo)->name, ((sw_descriptor *)hi)->name);
        }
        else {
            PyObject *c = sw_lattice_work_name(w, join);
            PyErr_Format(PyExc_ValueError,
                         "%s: %U and %U cannot be kept undefined: %U would be "
                         "above both, so result_type(%U, %U, %U) would be %U "
                         "in that order and undefined with %U and %U first; a "
                         "pair stays undefined only while no dtype is above "
                         "both", func,
                         ((sw_descriptor *)a)->name, ((sw_descriptor *)b)->name,
                         c, ((sw_descriptor *)a)->name, c,
                         ((sw_descriptor *)b)->name, c,
                         ((sw_descriptor *)a)->name, ((sw_descriptor *)b)->name);
        }
        return -1;
    }
    return 0;
}

/* Check each pair of `pairs` (a tuple of tuples of two) as a pair to
 * keep undefined: two different registered dtypes of values.  0, or -1
 * with an exception naming `func`. */
static int
sw_lattice_check_undefined_pairs(sw_state *st, PyObject *pairs, const char *func)
{
    Py_ssize_t i;
    int end;

    for (i = 0; i < PyTuple_GET_SIZE(pairs); i++) {
        PyObject *pair = PyTuple_GET_ITEM(pairs, i);
        sw_descriptor *ends[2];

        for (end = 0; end < 2; end++) {
            ends[end] = sw_relations_arg(st, PyTuple_GET_ITEM(pair, end), func,
                                         "a dtype of an undefined pair");
            if (ends[end] == NULL) {
                return -1;
            }
            if (ends[end]->kind == SW_KIND_CATEGORY) {
                PyErr_Format(PyExc_ValueError,
                             "%s: undefined pair %zd: %U is a category, not a "
                             "dtype of values", func, i, ends[end]->name);
                return -1;
            }
        }
        if (ends[0] == ends[1]) {
            PyErr_Format(PyExc_ValueError,
                         "%s: undefined pair %zd: a dtype promotes with itself, "
                         "got (%U, %U)", func, i, ends[0]->name, ends[1]->name);
            return -1;
        }
    }
    return 0;
}

sw_lattice *
sw_lattice_build(sw_state *st, sw_lattice *base, PyObject *edges,
                 const sw_lattice_options *options, const char *func)
{
    sw_lattice_work w;
    sw_lattice *lat = NULL;
    sw_lattice_kept kept;
    PyObject *order = options->order;
    Py_ssize_t nedges = PyTuple_GET_SIZE(edges), capacity, i;
    Py_ssize_t norder = order != NULL ? PyTuple_GET_SIZE(order) : 0;
    uint32_t id_count;
    int s, same = 1;

    memset(&w, 0, sizeof(w));
    for (i = 0; i < nedges; i++) {
        PyObject *edge = PyTuple_GET_ITEM(edges, i);
        if (sw_lattice_check_edge(st, PyTuple_GET_ITEM(edge, 0),
                                  PyTuple_GET_ITEM(edge, 1), options->lossy,
                                  options->is_default, func) < 0) {
            return NULL;
        }
    }
    if (options->undefined != NULL
        && sw_lattice_check_undefined_pairs(st, options->undefined, func) < 0) {
        return NULL;
    }
    kept.is_default = options->is_default;
    kept.lossy = (base != NULL && base->lossy) || (options->lossy && nedges > 0);
    kept.mixed_scalars = options->mixed_scalars >= 0 ? options->mixed_scalars
                         : base != NULL && base->mixed_scalars;
    for (s = 0; s < SW_SCALAR_COUNT; s++) {
        PyObject *inherited = base ? base->scalar_defaults[s] : NULL;
        PyObject *given = options->scalar_defaults ? options->scalar_defaults[s]
                                                   : NULL;
        kept.defaults[s] = given != NULL ? given : inherited;
        same &= kept.defaults[s] == inherited;
    }
    if (kept.mixed_scalars && kept.defaults[SW_SCALAR_INT] == NULL
        && kept.defaults[SW_SCALAR_FLOAT] == NULL
        && kept.defaults[SW_SCALAR_COMPLEX] == NULL) {
        PyErr_Format(PyExc_ValueError,
                     "%s: mixed_scalars=True needs scalar_defaults for 'int', "
                     "'float' or 'complex': the dtype a Python scalar of a kind "
                     "above the operands' stands for", func);
        return NULL;
    }
    /* The pairs kept undefined: the base's, then the new ones (the tuple
     * is ours, held to the end). */
    kept.undefined = sw_lattice_merge_undefined(
        base != NULL ? base->undefined : st->empty_tuple, options->undefined);
    if (kept.undefined == NULL) {
        return NULL;
    }
    same &= kept.is_default == (base != NULL && base->is_default)
            && kept.lossy == (base != NULL && base->lossy)
            && kept.mixed_scalars == (base != NULL && base->mixed_scalars)
            && kept.undefined == (base != NULL ? base->undefined : NULL);
    /* Nothing new: the base itself (extending the default lattice still
     * makes a lattice of one's own). */
    if (base != NULL && same && sw_lattice_adds_nothing(base, edges)) {
        Py_DECREF(kept.undefined);
        return (sw_lattice *)Py_NewRef(base);
    }
    /* Every dtype of an edge gets a relation id; the map covers them all. */
    id_count = base ? base->id_count : 1;
    for (i = 0; i < 2 * nedges + norder; i++) {
        sw_descriptor *d = (sw_descriptor *)(
            i < norder ? PyTuple_GET_ITEM(order, i)
                       : PyTuple_GET_ITEM(PyTuple_GET_ITEM(edges, (i - norder) / 2),
                                          (i - norder) % 2));
        if (sw_relations_assign_id(st, d) < 0) {
            goto done;
        }
        if (sw_lattice_id_of(d) >= id_count) {
            id_count = sw_lattice_id_of(d) + 1;
        }
    }
    capacity = (base ? base->count : 0) + norder + 2 * nedges;
    if (capacity > SW_LATTICE_MAX_DTYPES) {
        capacity = SW_LATTICE_MAX_DTYPES;
    }
    if (sw_lattice_work_alloc(&w, capacity, id_count) < 0) {
        goto done;
    }
    /* The base's dtypes first, in its order (or the order asked for); then
     * the new ones. */
    for (i = 0; base != NULL && i < base->count; i++) {
        if (sw_lattice_work_add(&w, base->dtypes[i], func) < 0) {
            goto done;
        }
    }
    for (i = 0; i < norder; i++) {
        if (sw_lattice_work_add(&w, PyTuple_GET_ITEM(order, i), func) < 0) {
            goto done;
        }
    }
    for (i = 0; base != NULL && i < base->cover_count; i++) {
        sw_lattice_set(w.direct + base->covers[2 * i] * w.words,
                       base->covers[2 * i + 1]);
    }
    for (i = 0; i < nedges; i++) {
        PyObject *edge = PyTuple_GET_ITEM(edges, i);
        Py_ssize_t lo = sw_lattice_work_add(&w, PyTuple_GET_ITEM(edge, 0), func);
        Py_ssize_t hi = lo < 0 ? -1
                               : sw_lattice_work_add(&w, PyTuple_GET_ITEM(edge, 1), func);
        if (hi < 0) {
            goto done;
        }
        sw_lattice_set(w.direct + lo * w.words, hi);
    }
    if (sw_lattice_order(&w, edges, func) < 0
        || sw_lattice_joins(&w, base, func) < 0
        || (base != NULL && sw_lattice_check_stable(&w, base, func) < 0)
        || sw_lattice_check_undefined(&w, kept.undefined, func) < 0
        || sw_lattice_covers(&w) < 0) {
        goto done;
    }
    lat = sw_lattice_publishable(st, &w, &kept);
done:
    sw_lattice_work_free(&w);
    Py_DECREF(kept.undefined);
    return lat;
}

/* ---- the Python type -------------------------------------------------------- */

static sw_state *
sw_lattice_state(PyObject *self)
{
    sw_state *st = sw_state_of_type(Py_TYPE(self));

    return st != NULL && sw_state_check(st) == 0 ? st : NULL;
}

static PyObject *
sw_lattice_promote_types(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    sw_state *st = sw_lattice_state(self);

    if (st == NULL) {
        return NULL;
    }
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError,
                     "PromotionLattice.promote_types() takes exactly 2 "
                     "arguments (%zd given)", nargs);
        return NULL;
    }
    return sw_promotion_promote(st, (sw_lattice *)self, args[0], args[1],
                                "PromotionLattice.promote_types");
}

static PyObject *
sw_lattice_result_type(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    sw_state *st = sw_lattice_state(self);

    return st ? sw_promotion_result_type(st, (sw_lattice *)self, args, nargs,
                                         "PromotionLattice.result_type")
              : NULL;
}

/* 0 when `value` may be the default dtype of Python scalars of kind `s`
 * (an sw_scalar): a registered dtype of that kind; else -1 with
 * TypeError or ValueError naming `func`. */
static int
sw_lattice_default_check(sw_state *st, int s, PyObject *value, const char *func)
{
    static const unsigned int kinds[SW_SCALAR_COUNT] = {
        SW_KINDS_BOOL, SW_KINDS_INTEGRAL, SW_KINDS_REAL, SW_KINDS_COMPLEX,
    };
    sw_descriptor *d = sw_relations_arg(st, value, func, "a scalar default");

    if (d == NULL) {
        return -1;
    }
    if (!(sw_relations_read(st, d, kinds[s]).kinds & kinds[s])) {
        PyErr_Format(PyExc_ValueError,
                     "%s: the default dtype for Python %U scalars must be of "
                     "that kind, got %U", func,
                     st->relation_names[SW_RELNAME_SCALAR + s], d->name);
        return -1;
    }
    return 0;
}

/* scalar_defaults= as an array of strong references (NULL: not named):
 * 0, or -1 with an exception. */
static int
sw_lattice_defaults_arg(sw_state *st, PyObject *mapping, PyObject **out)
{
    const char *func = "PromotionLattice.extend";
    PyObject *items = NULL;
    Py_ssize_t i;
    int s;

    if (!PyDict_Check(mapping)) {
        PyErr_Format(PyExc_TypeError,
                     "%s: scalar_defaults must be a dict of 'bool', 'int', "
                     "'float' or 'complex' to a DType, got an object of type "
                     "%.200s", func, Py_TYPE(mapping)->tp_name);
        return -1;
    }
    /* A list of (key, value) pairs we own: no borrowed entry of a dict that
     * the code below could see change. */
    items = PyDict_Items(mapping);
    if (items == NULL) {
        return -1;
    }
    for (i = 0; i < PyList_GET_SIZE(items); i++) {
        PyObject *pair = PyList_GET_ITEM(items, i);
        PyObject *key = PyTuple_GET_ITEM(pair, 0), *value = PyTuple_GET_ITEM(pair, 1);

        s = sw_relations_match(st, key, SW_RELNAME_SCALAR, SW_SCALAR_COUNT);
        s = s < 0 ? SW_SCALAR_COUNT : s - SW_RELNAME_SCALAR;
        if (!PyUnicode_Check(key)) {
            PyErr_Format(PyExc_TypeError,
                         "%s: scalar_defaults keys must be 'bool', 'int', "
                         "'float' or 'complex', got an object of type %.200s",
                         func, Py_TYPE(key)->tp_name);
            goto error;
        }
        if (s == SW_SCALAR_COUNT) {
            PyObject *exact = sw_exact_str(key);    /* a repr of our own */
            if (exact != NULL) {
                PyErr_Format(PyExc_ValueError,
                             "%s: scalar_defaults keys must be 'bool', 'int', "
                             "'float' or 'complex', got %R", func, exact);
                Py_DECREF(exact);
            }
            goto error;
        }
        if (sw_lattice_default_check(st, s, value, func) < 0) {
            goto error;
        }
        Py_XSETREF(out[s], Py_NewRef(value));
    }
    Py_DECREF(items);
    return 0;
error:
    Py_DECREF(items);
    return -1;
}

/* An optional bool argument `name` of `func`: 0 or 1, -1 (None: not
 * given), or -2 with TypeError. */
static int
sw_lattice_flag_arg(PyObject *value, const char *func, const char *name,
                    int none_allowed)
{
    if (value == Py_True || value == Py_False) {
        return value == Py_True;
    }
    if (none_allowed && value == Py_None) {
        return -1;
    }
    PyErr_Format(PyExc_TypeError, "%s: %s must be a bool%s, got an object of "
                 "type %.200s", func, name, none_allowed ? " or None" : "",
                 Py_TYPE(value)->tp_name);
    return -2;
}

static PyObject *
sw_lattice_extend(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"", "lossy", "scalar_defaults", "mixed_scalars",
                             "undefined", NULL};
    const char *func = "PromotionLattice.extend";
    sw_state *st = sw_lattice_state(self);
    PyObject *edges_arg = NULL, *lossy_arg = Py_False, *defaults_arg = Py_None;
    PyObject *mixed_arg = Py_None, *undefined_arg = NULL;
    PyObject *edges = NULL, *undefined = NULL, *defaults[SW_SCALAR_COUNT] = {NULL};
    sw_lattice_options options = {0, 0, defaults, -1, NULL, NULL};
    sw_lattice *lat = NULL;
    int s;

    if (st == NULL
        || !PyArg_ParseTupleAndKeywords(args, kwds, "|O$OOOO:extend", kwlist,
                                        &edges_arg, &lossy_arg, &defaults_arg,
                                        &mixed_arg, &undefined_arg)) {
        return NULL;
    }
    options.lossy = sw_lattice_flag_arg(lossy_arg, func, "lossy", 0);
    options.mixed_scalars = sw_lattice_flag_arg(mixed_arg, func, "mixed_scalars", 1);
    if (options.lossy < 0 || options.mixed_scalars < -1) {
        return NULL;
    }
    edges = edges_arg ? sw_lattice_edges_arg(edges_arg, func)
                      : PyTuple_New(0);
    if (edges == NULL) {
        return NULL;
    }
    if (undefined_arg != NULL) {
        undefined = sw_lattice_pairs_arg(undefined_arg, func, "undefined",
                                         "undefined pair", "(a, b)");
        if (undefined == NULL) {
            goto done;
        }
        options.undefined = undefined;
    }
    if (defaults_arg != Py_None
        && sw_lattice_defaults_arg(st, defaults_arg, defaults) < 0) {
        goto done;
    }
    lat = sw_lattice_build(st, (sw_lattice *)self, edges, &options, func);
done:
    for (s = 0; s < SW_SCALAR_COUNT; s++) {
        Py_XDECREF(defaults[s]);
    }
    Py_XDECREF(undefined);
    Py_DECREF(edges);
    return (PyObject *)lat;
}

static PyObject *
sw_lattice_get_dtypes(PyObject *self, void *Py_UNUSED(closure))
{
    sw_lattice *lat = (sw_lattice *)self;
    PyObject *result = PyTuple_New(lat->count);
    Py_ssize_t k;

    for (k = 0; result != NULL && k < lat->count; k++) {
        PyTuple_SET_ITEM(result, k, Py_NewRef(lat->dtypes[k]));
    }
    return result;
}

static PyObject *
sw_lattice_get_edges(PyObject *self, void *Py_UNUSED(closure))
{
    sw_lattice *lat = (sw_lattice *)self;
    PyObject *result = PyTuple_New(lat->cover_count);
    Py_ssize_t k;

    for (k = 0; result != NULL && k < lat->cover_count; k++) {
        PyObject *pair = PyTuple_Pack(2, lat->dtypes[lat->covers[2 * k]],
                                      lat->dtypes[lat->covers[2 * k + 1]]);
        if (pair == NULL) {
            Py_CLEAR(result);
            break;
        }
        PyTuple_SET_ITEM(result, k, pair);
    }
    return result;
}

static PyObject *
sw_lattice_get_scalar_defaults(PyObject *self, void *Py_UNUSED(closure))
{
    sw_lattice *lat = (sw_lattice *)self;
    sw_state *st = sw_lattice_state(self);
    PyObject *result;
    int s;

    if (st == NULL) {
        return NULL;
    }
    result = PyDict_New();
    for (s = 0; result != NULL && s < SW_SCALAR_COUNT; s++) {
        /* Exact str keys, descriptor values: no user code runs. */
        if (lat->scalar_defaults[s] != NULL
            && PyDict_SetItem(result, st->relation_names[SW_RELNAME_SCALAR + s],
                              lat->scalar_defaults[s]) < 0) {
            Py_CLEAR(result);
        }
    }
    return result;
}

static PyObject *
sw_lattice_get_undefined(PyObject *self, void *Py_UNUSED(closure))
{
    return Py_NewRef(((sw_lattice *)self)->undefined);    /* an exact tuple */
}

static PyObject *
sw_lattice_get_is_default(PyObject *self, void *Py_UNUSED(closure))
{
    return PyBool_FromLong(((sw_lattice *)self)->is_default);
}

static PyObject *
sw_lattice_get_lossy(PyObject *self, void *Py_UNUSED(closure))
{
    return PyBool_FromLong(((sw_lattice *)self)->lossy);
}

static PyObject *
sw_lattice_get_mixed_scalars(PyObject *self, void *Py_UNUSED(closure))
{
    return PyBool_FromLong(((sw_lattice *)self)->mixed_scalars);
}

static PyObject *
sw_lattice_repr(PyObject *self)
{
    sw_lattice *lat = (sw_lattice *)self;

    return PyUnicode_FromFormat("<PromotionLattice%s: %zd dtypes, %zd edges>",
                                lat->is_default ? " (default)" : "",
                                lat->count, lat->cover_count);
}

static PyObject *
sw_lattice_copy(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    return Py_NewRef(self);     /* immutable */
}

/* The version of the lattice pickle format (_reconstruct_lattice). */
#define SW_LATTICE_PICKLE_VERSION 1

/* (_reconstruct_lattice, (version, dtypes, edges, lossy, is_default,
 * scalar_defaults, mixed_scalars, undefined)): the lattice by value, its
 * dtypes pickled as descriptors are.  Loading builds it again and checks
 * every law again. */
static PyObject *
sw_lattice_reduce(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    sw_lattice *lat = (sw_lattice *)self;
    sw_state *st = sw_lattice_state(self);
    PyObject *dtypes = NULL, *edges = NULL, *defaults = NULL, *result = NULL;
    int s;

    if (st == NULL) {
        return NULL;
    }
    dtypes = sw_lattice_get_dtypes(self, NULL);
    edges = dtypes ? sw_lattice_get_edges(self, NULL) : NULL;
    defaults = edges ? PyTuple_New(SW_SCALAR_COUNT) : NULL;
    if (defaults == NULL) {
        goto done;
    }
    for (s = 0; s < SW_SCALAR_COUNT; s++) {
        PyObject *d = lat->scalar_defaults[s];
        PyTuple_SET_ITEM(defaults, s, Py_NewRef(d != NULL ? d : Py_None));
    }
    result = Py_BuildValue("O(iOOOOOOO)", st->lattice_reconstruct,
                           SW_LATTICE_PICKLE_VERSION, dtypes, edges,
                           lat->lossy ? Py_True : Py_False,
                           lat->is_default ? Py_True : Py_False, defaults,
                           lat->mixed_scalars ? Py_True : Py_False,
                           lat->undefined);
done:
    Py_XDECREF(dtypes);
    Py_XDECREF(edges);
    Py_XDECREF(defaults);
    return result;
}

/* _reconstruct_lattice's argument `i` as a bool: 0 or 1, or -1 with
 * TypeError. */
static int
sw_lattice_pickled_flag(PyObject *value, const char *what)
{
    if (value == Py_True || value == Py_False) {
        return value == Py_True;
    }
    PyErr_Format(PyExc_TypeError, "_reconstruct_lattice: %s must be a bool, got "
                 "an object of type %.200s", what, Py_TYPE(value)->tp_name);
    return -1;
}

/* 0 when the lattice `lat` built from a pickle has exactly the pickled
 * `dtypes` in their order, each with an edge; else -1 with ValueError. */
static int
sw_lattice_pickled_order(sw_lattice *lat, PyObject *dtypes)
{
    Py_ssize_t k, n = PyTuple_GET_SIZE(dtypes);
    int ok = lat->count == n;
    uint8_t *has_edge = NULL;

    for (k = 0; ok && k < n; k++) {
        ok = lat->dtypes[k] == PyTuple_GET_ITEM(dtypes, k);
    }
    if (ok && n > 0) {
        has_edge = PyMem_Calloc((size_t)n, 1);
        if (has_edge == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        for (k = 0; k < 2 * lat->cover_count; k++) {
            has_edge[lat->covers[k]] = 1;
        }
        for (k = 0; ok && k < n; k++) {
            ok = has_edge[k];
        }
        PyMem_Free(has_edge);
    }
    if (!ok) {
        PyErr_SetString(PyExc_ValueError,
                        "_reconstruct_lattice: the pickle's dtypes are not "
                        "those of its edges, each once, each before the dtypes "
                        "above it (a damaged or crafted pickle)");
        return -1;
    }
    return 0;
}

static PyObject *
sw_lattice_reconstruct(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    const char *func = "_reconstruct_lattice";
    sw_state *st = sw_state_of_module(module);
    PyObject *edges = NULL, *undefined = NULL, *defaults[SW_SCALAR_COUNT];
    sw_lattice_options options = {0, 0, defaults, 0, NULL, NULL};
    sw_lattice *lat = NULL;
    Py_ssize_t k;
    int s, version_overflow;
    long version;

    if (sw_state_check(st) < 0) {
        return NULL;
    }
    if (nargs != 8) {
        PyErr_Format(PyExc_TypeError,
                     "%s() takes 8 arguments (version, dtypes, edges, lossy, "
                     "is_default, scalar_defaults, mixed_scalars, undefined), "
                     "got %zd", func, nargs);
        return NULL;
    }
    if (!PyLong_CheckExact(args[0])) {
        PyErr_Format(PyExc_TypeError, "%s: version must be an int, got an "
                     "object of type %.200s", func, Py_TYPE(args[0])->tp_name);
        return NULL;
    }
    version = PyLong_AsLongAndOverflow(args[0], &version_overflow);
    if (version != SW_LATTICE_PICKLE_VERSION || version_overflow) {
        /* Any exact int: shown as a structure shows it, never hitting the
         * int-to-decimal digit limit. */
        PyObject *shown = sw_structure_value_text(args[0]);

        if (shown != NULL) {
            PyErr_Format(PyExc_ValueError,
                         "%s: this stride_weave reads lattice pickles of "
                         "version %d, got version %U (a pickle of a newer "
                         "release?)", func, SW_LATTICE_PICKLE_VERSION, shown);
            Py_DECREF(shown);
        }
        return NULL;
    }
    if (!PyTuple_CheckExact(args[1]) || !PyTuple_CheckExact(args[5])
        || PyTuple_GET_SIZE(args[5]) != SW_SCALAR_COUNT) {
        PyErr_Format(PyExc_TypeError,
                     "%s: dtypes must be a tuple and scalar_defaults a tuple of "
                     "%d, got objects of type %.200s and %.200s", func,
                     SW_SCALAR_COUNT, Py_TYPE(args[1])->tp_name,
                     Py_TYPE(args[5])->tp_name);
        return NULL;
    }
    for (k = 0; k < PyTuple_GET_SIZE(args[1]); k++) {
        if (sw_relations_arg(st, PyTuple_GET_ITEM(args[1], k), func,
                             "each of dtypes") == NULL) {
            return NULL;
        }
    }
    options.lossy = sw_lattice_pickled_flag(args[3], "lossy");
    options.is_default = options.lossy < 0 ? -1
                         : sw_lattice_pickled_flag(args[4], "is_default");
    options.mixed_scalars = options.is_default < 0 ? -1
                            : sw_lattice_pickled_flag(args[6], "mixed_scalars");
    if (options.mixed_scalars < 0) {
        return NULL;
    }
    if (options.is_default
        && (options.lossy || options.mixed_scalars
            || !PyTuple_Check(args[7]) || PyTuple_GET_SIZE(args[7]) != 0
            || PyTuple_GET_ITEM(args[5], 0) != Py_None
            || PyTuple_GET_ITEM(args[5], 1) != Py_None
            || PyTuple_GET_ITEM(args[5], 2) != Py_None
            || PyTuple_GET_ITEM(args[5], 3) != Py_None)) {
        PyErr_Format(PyExc_ValueError,
                     "%s: a snapshot of the default lattice has no lossy "
                     "edges, scalar defaults, mixed_scalars or undefined pairs "
                     "(a damaged or crafted pickle)", func);
        return NULL;
    }
    for (s = 0; s < SW_SCALAR_COUNT; s++) {
        PyObject *d = PyTuple_GET_ITEM(args[5], s);     /* the tuple holds it */

        defaults[s] = d == Py_None ? NULL : d;
        if (defaults[s] != NULL && sw_lattice_default_check(st, s, d, func) < 0) {
            return NULL;
        }
    }
    if (!PyTuple_CheckExact(args[2]) || !PyTuple_CheckExact(args[7])) {
        /* Exact tuples: a subclass's methods never run here. */
        PyErr_Format(PyExc_TypeError,
                     "%s: edges and undefined must be tuples, got objects of "
                     "type %.200s and %.200s", func, Py_TYPE(args[2])->tp_name,
                     Py_TYPE(args[7])->tp_name);
        return NULL;
    }
    edges = sw_lattice_pairs_arg(args[2], func, "edges", "edge", "(lower, upper)");
    undefined = edges ? sw_lattice_pairs_arg(args[7], func, "undefined",
                                             "undefined pair", "(a, b)") : NULL;
    if (undefined == NULL) {
        goto done;
    }
    options.undefined = undefined;
    options.order = args[1];
    lat = sw_lattice_build(st, NULL, edges, &options, func);
    if (lat != NULL && sw_lattice_pickled_order(lat, args[1]) < 0) {
        Py_CLEAR(lat);
    }
done:
    Py_XDECREF(edges);
    Py_XDECREF(undefined);
    return (PyObject *)lat;
}

static PyMethodDef sw_lattice_functions[] = {
    {"_reconstruct_lattice", SW_CFUNC(sw_lattice_reconstruct), METH_FASTCALL,
     PyDoc_STR("_reconstruct_lattice(version, dtypes, edges, lossy, is_default, "
               "scalar_defaults, mixed_scalars, undefined, /)\n--\n\n"
               "A PromotionLattice from its pickle: built again from its "
               "edges, every law checked again.  Not for direct use.")},
    {NULL, NULL, 0, NULL},
};

static int
sw_lattice_traverse(PyObject *self, visitproc visit, void *arg)
{
    sw_lattice *lat = (sw_lattice *)self;
    Py_ssize_t k;
    int s;

    Py_VISIT(Py_TYPE(self));
    for (k = 0; k < lat->count; k++) {
        Py_VISIT(lat->dtypes[k]);
    }
    for (s = 0; s < SW_SCALAR_COUNT; s++) {
        Py_VISIT(lat->scalar_defaults[s]);
    }
    Py_VISIT(lat->undefined);
    return 0;
}

static void
sw_lattice_dealloc(PyObject *self)
{
    sw_lattice *lat = (sw_lattice *)self;
    PyTypeObject *tp = Py_TYPE(self);
    Py_ssize_t k;
    int s;

    PyObject_GC_UnTrack(self);
    for (k = 0; k < lat->count; k++) {
        Py_DECREF(lat->dtypes[k]);
    }
    PyMem_Free(lat->dtypes);
    PyMem_Free(lat->local);
    PyMem_Free(lat->join);
    PyMem_Free(lat->covers);
    for (s = 0; s < SW_SCALAR_COUNT; s++) {
        Py_CLEAR(lat->scalar_defaults[s]);
    }
    Py_CLEAR(lat->undefined);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyMethodDef sw_lattice_methods[] = {
    {"promote_types", SW_CFUNC(sw_lattice_promote_types), METH_FASTCALL,
     PyDoc_STR("promote_types($self, a, b, /)\n--\n\n"
               "The join of a and b in this lattice (see "
               "stride_weave.dtypes.promote_types).")},
    {"result_type", SW_CFUNC(sw_lattice_result_type), METH_FASTCALL,
     PyDoc_STR("result_type($self, /, *operands)\n--\n\n"
               "The dtype of an operation on operands in this lattice (see "
               "stride_weave.dtypes.result_type); with only Python scalars, "
               "the lattice's default dtype for the highest of their kinds, "
               "where it names one (scalar_defaults).")},
    {"extend", SW_CFUNC(sw_lattice_extend), METH_VARARGS | METH_KEYWORDS,
     PyDoc_STR("extend($self, edges=(), /, *, lossy=False, "
               "scalar_defaults=None, mixed_scalars=None, undefined=())\n--\n\n"
               "A new lattice of one's own: this one plus edges, an iterable "
               "of (lower, upper) pairs of registered dtypes.  This lattice is "
               "unchanged.\n\n"
               "The new lattice keeps every guarantee but one: with "
               "lossy=True its new edges need not be safe casts (a framework "
               "that computes Int32 with Float32 in Float32 declares Int32 -> "
               "Float32 so).  Edges may take any dtype of values that is "
               "registered (not a category); the default lattice's "
               "admission rule does not apply.  ValueError, naming the pair, "
               "for an edge that would close a cycle, leave a pair with "
               "upper bounds but no least one, or change a result this "
               "lattice defines.\n\n"
               "scalar_defaults maps 'bool', 'int', 'float' and 'complex' to "
               "the dtype result_type gives when its operands are only "
               "Python scalars (the highest kind among them); the names it "
               "leaves out keep this lattice's defaults.\n\n"
               "mixed_scalars=True makes a Python scalar of a kind above the "
               "other operands' promote them to their join with the scalar "
               "default of its kind (result_type(Int8, 2.5) is Float32 with "
               "the default Float32 for 'float'), as JAX and torch do; False "
               "makes it a PromotionError, as in the default lattice; None "
               "keeps this lattice's choice.\n\n"
               "undefined is an iterable of (a, b) pairs that stay undefined "
               "in the new lattice and in every lattice extended from it: an "
               "edge that would put a dtype above both is refused "
               "(ValueError), since promotion would then depend on the "
               "order of the operands.")},
    {"__copy__", sw_lattice_copy, METH_NOARGS,
     PyDoc_STR("__copy__($self, /)\n--\n\nThe lattice itself: it is immutable.")},
    {"__deepcopy__", sw_lattice_copy, METH_O,
     PyDoc_STR("__deepcopy__($self, memo, /)\n--\n\n"
               "The lattice itself: it is immutable.")},
    {"__reduce__", sw_lattice_reduce, METH_NOARGS,
     PyDoc_STR("__reduce__($self, /)\n--\n\n"
               "The lattice by value: its dtypes, edges, lossy flag, scalar "
               "defaults, mixed_scalars and undefined pairs.  Loading builds "
               "it again in the receiving process and checks every law "
               "again (ValueError when the dtypes there break one).")},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef sw_lattice_getset[] = {
    {"dtypes", sw_lattice_get_dtypes, NULL,
     PyDoc_STR("The dtypes that have an edge, a tuple in a linear extension "
               "of the order: each before every dtype above it."), NULL},
    {"edges", sw_lattice_get_edges, NULL,
     PyDoc_STR("The order's covering pairs (lower, upper), a tuple: upper "
               "is above lower with nothing in between (the Hasse diagram; "
               "an edge implied by others is not repeated)."), NULL},
    {"undefined", sw_lattice_get_undefined, NULL,
     PyDoc_STR("The pairs (a, b) this lattice keeps undefined, a tuple: no "
               "dtype may ever be above both (extend refuses an edge that "
               "would put one there)."), NULL},
    {"is_default", sw_lattice_get_is_default, NULL,
     PyDoc_STR("Whether this is a snapshot of the default lattice."), NULL},
    {"lossy", sw_lattice_get_lossy, NULL,
     PyDoc_STR("Whether some edge of this lattice was declared with "
               "lossy=True (its edges need not all be safe casts)."), NULL},
    {"mixed_scalars", sw_lattice_get_mixed_scalars, NULL,
     PyDoc_STR("Whether a Python scalar of a kind above the operands' "
               "promotes them (to their join with the scalar default of its "
               "kind), as in JAX and torch; else it is a PromotionError."),
     NULL},
    {"scalar_defaults", sw_lattice_get_scalar_defaults, NULL,
     PyDoc_STR("A new dict of the default dtypes this lattice names for "
               "Python scalars ('bool', 'int', 'float', 'complex'); empty "
               "for the default lattice."), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot sw_lattice_slots[] = {
    {Py_tp_doc, (void *)PyDoc_STR(
        "An immutable promotion lattice: dtypes, the order of their edges "
        "(lower -> upper) and the join (least upper bound) of every pair.\n\n"
        "The default lattice is stride_weave.dtypes.default_lattice(); a "
        "framework builds its own with default_lattice().extend(...).  "
        "Instances are not created directly.")},
    {Py_tp_repr, sw_lattice_repr},
    {Py_tp_methods, sw_lattice_methods},
    {Py_tp_getset, sw_lattice_getset},
    {Py_tp_traverse, sw_lattice_traverse},
    {Py_tp_dealloc, sw_lattice_dealloc},
    {0, NULL},
};

/* Final, immutable, not instantiable from Python; collected (it holds
 * descriptors, whose classes may hold it).  No tp_clear: like a tuple it
 * never changes, and whatever cycle it is in has a clearable member. */
static PyType_Spec sw_lattice_spec = {
    .name = "stride_weave.dtypes.PromotionLattice",
    .basicsize = sizeof(sw_lattice),
    .itemsize = 0,
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_GC
             | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = sw_lattice_slots,
};

int
sw_lattice_create_type(PyObject *module, sw_state *st)
{
    st->lattice_type = (PyTypeObject *)PyType_FromModuleAndSpec(
        module, &sw_lattice_spec, NULL);
    if (st->lattice_type == NULL
        || PyModule_AddFunctions(module, sw_lattice_functions) < 0) {
        return -1;
    }
    st->lattice_reconstruct = PyObject_GetAttrString(module,
                                                     "_reconstruct_lattice");
    return st->lattice_reconstruct ? 0 : -1;
}
