/* promotion.c: promotion, and the default lattice.
 *
 * Owns PromotionError; the default lattice (its built-in edges, its
 * admission rule, declarations into it and its publication);
 * promote_types() and result_type() with weak Python scalars, for the
 * default lattice and any other; and their error messages.
 *
 * The default lattice is an immutable snapshot (lattice.c) that the module
 * state points to.  A declaration builds a new snapshot from the current
 * one, outside any lock, and publishes it with a compare-and-swap of that
 * pointer; if another declaration was published meanwhile (another thread,
 * or code the build ran: a collection's callbacks), it builds again from
 * that one.  So a lookup racing a declaration sees the lattice before or
 * after it, never between, and a refused declaration changes nothing.
 *
 * Lookups read the pointer without a lock and without a reference count
 * (promote_types is a few array reads), so a replaced snapshot cannot
 * simply be released: a reader on another thread may have loaded it and
 * be reading its join table.  Each lookup is a read: it counts itself in
 * a slot of st->lattice_readers before it loads the pointer and uncounts
 * itself once it holds what it returns.  A declaration moves the reference
 * the state held to the replaced snapshot onto a stack of retired ones,
 * and the stack is released whenever every slot reads zero: at that
 * declaration, or when the last reader leaves (a reader that loaded a
 * retired snapshot counted itself before the swap, so a count read after
 * the swap sees it).  Memory therefore stays that of the lattices in use,
 * not of every lattice ever declared.  With the GIL a read never lets
 * another thread in, so a retired snapshot is released at once unless the
 * declaration ran inside a read (code run by a collection).
 */
#include "relations.h"

/* The default lattice's own edges: the built-in part of the order (with
 * the formats pack, Int16 joins between Int8 and Int32 through the pack's
 * own edges, which it declares when imported). */
static const char *const sw_promotion_builtin_edges[][2] = {
    {"Bool", "Int8"},
    {"Int8", "Int32"},
    {"Float32", "Float64"},
};

/* ---- the default lattice's admission rule --------------------------------- */

/* NULL when `d` may take part in the default lattice, else why not (a
 * static string).  From its kind and numeric record only, read with
 * `asked`: SW_READ_RECORD when the answer admits or refuses an edge (a
 * refusal for want of a record then stands for good), SW_READ_WORDING
 * when it only explains an error. */
const char *
sw_promotion_exclusion(sw_state *st, sw_descriptor *d, unsigned int asked)
{
    const sw_numeric_format *f;
    int width;

    switch (d->kind) {
    case SW_KIND_CATEGORY:
        return "a category, not a dtype of values";
    case SW_KIND_BLOCK_SCALED:
        return "a block-scaled format: its values need their scales";
    case SW_KIND_COMPOUND:
        return "a compound dtype: its values span several planes";
    default:
        break;
    }
    f = sw_relations_read(st, d, asked).record;
    if (f == NULL) {
        return "it has no numeric record, so no edge of it can be shown "
               "lossless (a dtype gets one when it is created: "
               "SimpleDType(..., numeric_info=record))";
    }
    if ((f->kind == SW_NUM_FLOAT || f->kind == SW_NUM_COMPLEX)
        && f->nan_encoding == SW_NAN_NEGATIVE_ZERO) {
        return "an fnuz format: it has no negative zero and its NaN is the "
               "sign bit alone";
    }
    width = f->kind == SW_NUM_COMPLEX ? f->bits / 2 : f->bits;
    if ((f->kind == SW_NUM_FLOAT || f->kind == SW_NUM_COMPLEX) && width < 16) {
        return "a floating-point format narrower than 16 bits: a "
               "low-precision value needs a scale, so mixing it is explicit";
    }
    if ((f->kind == SW_NUM_INT || f->kind == SW_NUM_BOOL) && width < 8) {
        return "an integer format narrower than 8 bits: a low-precision "
               "value needs a scale, so mixing it is explicit";
    }
    return NULL;
}

/* ---- errors ---------------------------------------------------------------- */

/* Why `d` takes part in no promotion in `lat`, or NULL when it has edges
 * there. */
static const char *
sw_promotion_absent(sw_state *st, sw_lattice *lat, sw_descriptor *d)
{
    const char *why;

    if (sw_lattice_index(lat, d) != SW_LATTICE_NONE) {
        return NULL;
    }
    why = lat->is_default ? sw_promotion_exclusion(st, d, SW_READ_WORDING)
                          : NULL;
    if (why == NULL && d->kind == SW_KIND_CATEGORY) {
        why = "a category, not a dtype of values";
    }
    if (why == NULL) {
        why = lat->is_default
            ? "no promotion edge is declared for it (declare_promotion adds "
              "some)"
            : "it has no edge in this lattice";
    }
    return why;
}

/* Raise PromotionError: `a` and `b` have no join in `lat`.  Returns NULL. */
static PyObject *
sw_promotion_fail(sw_state *st, sw_lattice *lat, sw_descriptor *a,
                  sw_descriptor *b, const char *func)
{
    const char *why_a = sw_promotion_absent(st, lat, a);
    const char *why_b = sw_promotion_absent(st, lat, b);
    const char *where = lat->is_default ? "the default lattice" : "this lattice";
    PyObject *suggestion;

    /* The suggestion is wording: it reads without settling anything. */
    if (sw_casting_can(st, a, b, SW_CASTING_SAFE, SW_READ_WORDING)) {
        suggestion = PyUnicode_FromFormat(
            "cast %U to %U explicitly (every %U value is a %U value)",
            a->name, b->name, a->name, b->name);
    }
    else if (sw_casting_can(st, b, a, SW_CASTING_SAFE, SW_READ_WORDING)) {
        suggestion = PyUnicode_FromFormat(
            "cast %U to %U explicitly (every %U value is a %U value)",
            b->name, a->name, b->name, a->name);
    }
    else {
        suggestion = PyUnicode_FromString(
            "cast one or both explicitly to the dtype to compute in");
    }
    if (suggestion == NULL) {
        return NULL;
    }
    if (why_a != NULL || why_b != NULL) {
        sw_descriptor *d = why_a != NULL ? a : b;
        PyErr_Format(st->promotion_error,
                     "%s: no implicit promotion between %U and %U: %U takes "
                     "part in no implicit promotion in %s (%s); %U",
                     func, a->name, b->name, d->name, where,
                     why_a != NULL ? why_a : why_b, suggestion);
    }
    else {
        PyErr_Format(st->promotion_error,
                     "%s: no promotion between %U and %U: no dtype is above "
                     "both in %s; %U", func, a->name, b->name, where,
                     suggestion);
    }
    Py_DECREF(suggestion);
    return NULL;
}

/* ---- promote_types and result_type --------------------------------------- */

/* The join of `a` and `b` in `lat`: a new reference, or NULL with
 * TypeError/ValueError (an argument) or PromotionError (no join). */
PyObject *
sw_promotion_promote(sw_state *st, sw_lattice *lat, PyObject *a, PyObject *b,
                     const char *func)
{
    sw_descriptor *da = sw_relations_arg(st, a, func, "a");
    sw_descriptor *db = da ? sw_relations_arg(st, b, func, "b") : NULL;
    PyObject *join;

    if (db == NULL) {
        return NULL;
    }
    join = sw_lattice_join(lat, da, db);    /* borrowed: lat holds it */
    return join ? Py_NewRef(join) : sw_promotion_fail(st, lat, da, db, func);
}

/* The kind of the Python scalar `obj` (an sw_scalar), -1 when `obj` is
 * none, or -2 with TypeError for a subclass of one: types are checked,
 * never values or methods. */
static int
sw_promotion_scalar(PyObject *obj, Py_ssize_t i, const char *func)
{
    if (PyBool_Check(obj)) {            /* bool has no subclasses */
        return SW_SCALAR_BOOL;
    }
    if (PyLong_CheckExact(obj)) {
        return SW_SCALAR_INT;
    }
    if (PyFloat_CheckExact(obj)) {
        return SW_SCALAR_FLOAT;
    }
    if (PyComplex_CheckExact(obj)) {
        return SW_SCALAR_COMPLEX;
    }
    if (PyLong_Check(obj) || PyFloat_Check(obj) || PyComplex_Check(obj)) {
        PyErr_Format(PyExc_TypeError,
                     "%s: operand %zd is of type %.200s, a subclass of %s: "
                     "only exact bool, int, float and complex are weak "
                     "scalars (a subclass may stand for a dtype of its own, as "
                     "numpy.float64 does); pass a DType, or convert it with "
                     "%s()", func, i, Py_TYPE(obj)->tp_name,
                     PyLong_Check(obj) ? "int" : PyFloat_Check(obj) ? "float"
                                                                   : "complex",
                     PyLong_Check(obj) ? "int" : PyFloat_Check(obj) ? "float"
                                                                   : "complex");
        return -2;
    }
    return -1;
}

/* The scalar kind a dtype of rank `rank` takes (an sw_scalar), or -1. */
static int
sw_promotion_scalar_of_rank(int rank)
{
    switch (rank) {
    case SW_RANK_BOOL:
        return SW_SCALAR_BOOL;
    case SW_RANK_UNSIGNED:
    case SW_RANK_SIGNED:
        return SW_SCALAR_INT;
    case SW_RANK_REAL:
        return SW_SCALAR_FLOAT;
    case SW_RANK_COMPLEX:
        return SW_SCALAR_COMPLEX;
    }
    return -1;
}

/* The result in `lat`, a lattice with mixed_scalars, of operands whose
 * dtypes join to `acc` and a Python scalar of kind `scalar` above acc's
 * kind (`acc_kind`, for messages): the join of acc and the lattice's
 * default dtype for that kind (a new reference), or NULL with
 * PromotionError. */
static PyObject *
sw_promotion_mixed(sw_state *st, sw_lattice *lat, sw_descriptor *acc,
                   int scalar, const char *acc_kind, const char *func)
{
    static const char *const scalar_names[SW_SCALAR_COUNT] = {
        "bool", "int", "float", "complex"};
    PyObject *standin = lat->scalar_defaults[scalar], *join;

    if (standin == NULL) {
        PyErr_Format(st->promotion_error,
                     "%s: a Python %s promotes the other operands in this "
                     "lattice (mixed_scalars), but the lattice names no "
                     "default dtype for %s scalars (scalar_defaults), so it "
                     "cannot promote %U (%s)", func, scalar_names[scalar],
                     scalar_names[scalar], acc->name, acc_kind);
        return NULL;
    }
    join = sw_lattice_join(lat, acc, (sw_descriptor *)standin);     /* borrowed */
    if (join == NULL) {
        PyErr_Format(st->promotion_error,
                     "%s: a Python %s promotes %U (%s) in this lattice to its "
                     "join with %U, the default dtype for %s scalars, and they "
                     "have none; convert the scalar explicitly", func,
                     scalar_names[scalar], acc->name, acc_kind,
                     ((sw_descriptor *)standin)->name, scalar_names[scalar]);
        return NULL;
    }
    return Py_NewRef(join);
}

PyObject *
sw_promotion_result_type(sw_state *st, sw_lattice *lat, PyObject *const *args,
                         Py_ssize_t nargs, const char *func)
{
    static const char *const scalar_names[SW_SCALAR_COUNT] = {
        "bool", "int", "float", "complex"};
    static const char *const rank_names[] = {
        "bool", "unsigned integer", "signed integer", "real floating",
        "complex floating"};
    sw_descriptor *acc = NULL;      /* borrowed: an operand, or lat's */
    int scalar = -1, rank, kind;
    Py_ssize_t i;

    for (i = 0; i < nargs; i++) {
        PyObject *arg = args[i];

        sw_descriptor *d = sw_relations_registered(st, arg);

        if (d != NULL) {
            PyObject *join;

            if (acc == NULL) {
                acc = d;
                continue;
            }
            join = sw_lattice_join(lat, acc, d);
            if (join == NULL) {
                return sw_promotion_fail(st, lat, acc, d, func);
            }
            acc = (sw_descriptor *)join;
            continue;
        }
        if (Py_IS_TYPE((PyObject *)Py_TYPE(arg), st->meta_type)) {
            /* a descriptor object that is not registered */
            return (PyObject *)sw_relations_arg_error(st, arg, func, "an operand");
        }
        kind = sw_promotion_scalar(arg, i, func);
        if (kind == -2) {
            return NULL;
        }
        if (kind < 0) {
            PyErr_Format(PyExc_TypeError,
                         "%s: operand %zd must be a registered DType or a "
                         "Python bool, int, float or complex, got an object "
                         "of type %.200s", func, i, Py_TYPE(arg)->tp_name);
            return NULL;
        }
        if (kind > scalar) {
            scalar = kind;
        }
    }
    if (acc == NULL) {
        if (nargs == 0) {
            PyErr_Format(PyExc_TypeError, "%s: needs at least one operand", func);
            return NULL;
        }
        if (lat->scalar_defaults[scalar] != NULL) {
            return Py_NewRef(lat->scalar_defaults[scalar]);
        }
        PyErr_Format(PyExc_TypeError,
                     "%s: only Python scalars, which are weak (they take the "
                     "dtype of the other operands); give at least one DType%s",
                     func, lat->is_default ? ""
                     : " (this lattice names no default dtype for their kind; "
                       "see PromotionLattice.extend's scalar_defaults)");
        return NULL;
    }
    if (scalar >= 0) {
        /* The kind of scalar acc takes: settled where a record could
         * change it (a dtype under neither Integer nor Floating). */
        unsigned int kinds = sw_relations_read(st, acc, SW_READ_SCALAR).kinds;

        rank = sw_relations_rank(kinds);
        if (scalar > sw_promotion_scalar_of_rank(rank)) {
            const char *acc_kind =
                rank == SW_RANK_NONE ? "it has no numeric kind"
                : rank == SW_RANK_SIGNED && !(kinds & SW_KINDS_SIGNED)
                ? "integer"         /* no record: no sign either */
                : rank_names[rank];

            if (lat->mixed_scalars) {
                return sw_promotion_mixed(st, lat, acc, scalar, acc_kind, func);
            }
            PyErr_Format(st->promotion_error,
                         "%s: a Python %s is weak: it takes the dtype of the "
                         "other operands only when its kind is not above "
                         "theirs, and %s is above %U's (%s); convert the "
                         "scalar explicitly to a dtype of its kind",
                         func, scalar_names[scalar], scalar_names[scalar],
                         acc->name, acc_kind);
            return NULL;
        }
    }
    return Py_NewRef((PyObject *)acc);
}

/* ---- reading the default lattice ------------------------------------------ */

/* The reader slot of the calling thread (a hash of its thread state, so
 * threads reading at once mostly count in different cache lines). */
static inline uint32_t *
sw_promotion_reader_slot(sw_state *st)
{
#ifdef Py_GIL_DISABLED
    uint64_t ts = (uint64_t)(uintptr_t)PyThreadState_GetUnchecked();
    size_t i = (size_t)(((ts >> 4) * UINT64_C(0x9E3779B97F4A7C15)) >> 59);

    Py_BUILD_ASSERT(SW_LATTICE_READER_SLOTS == 32);
    return &st->lattice_readers[i].count;
#else
    return &st->lattice_readers[0].count;
#endif
}

/* Start a read: until sw_promotion_read_end, a default lattice loaded
 * after this call is not released.  Returns the slot to pass there.
 * The counts are read-modify-writes, sequentially consistent: a count that
 * a declaration reads after its swap sees every reader that may have
 * loaded the lattice it replaced. */
static inline uint32_t *
sw_promotion_read_begin(sw_state *st)
{
    uint32_t *slot = sw_promotion_reader_slot(st);

    (void)SW_ADD_FETCH(*slot, 1);
    return slot;
}

/* 1 when no read is in progress in any slot, else 0.  Adding zero reads
 * each count as the latest value in its modification order. */
static int
sw_promotion_readers_gone(sw_state *st)
{
    int i;

    for (i = 0; i < SW_LATTICE_READER_SLOTS; i++) {
        if (SW_ADD_FETCH(st->lattice_readers[i].count, 0) != 0) {
            return 0;
        }
    }
    return 1;
}

/* Push the chain first .. last (linked through retired_next) onto the
 * stack of retired default lattices. */
static void
sw_promotion_retire(sw_state *st, sw_lattice *first, sw_lattice *last)
{
    sw_lattice *head = (sw_lattice *)SW_LOAD_PTR(st->retired_lattices);

    do {
        last->retired_next = head;
    } while (!SW_CAS(st->retired_lattices, head, first));
}

/* Drop the references the state held to the chain of retired lattices
 * `list`.  May run Python code. */
static void
sw_promotion_release_chain(sw_lattice *list)
{
    while (list != NULL) {
        sw_lattice *next = list->retired_next;

        list->retired_next = NULL;
        Py_DECREF(list);
        list = next;
    }
}

/* Release the retired default lattices if no read is in progress, else
 * leave them for the next declaration or the last reader to leave.  The
 * stack is taken before the counts are read: any lattice on it was
 * replaced before that, so a reader still using it is counted.  May run
 * Python code (a lattice's release). */
static void
sw_promotion_release_retired(sw_state *st)
{
    sw_lattice *list = (sw_lattice *)SW_LOAD_PTR(st->retired_lattices), *last;

    while (list != NULL && !SW_CAS(st->retired_lattices, list, NULL)) {
    }
    if (list == NULL) {
        return;
    }
    if (!sw_promotion_readers_gone(st)) {
        for (last = list; last->retired_next != NULL; last = last->retired_next) {
        }
        sw_promotion_retire(st, list, last);
        return;
    }
    sw_promotion_release_chain(list);
}

/* End the read begun with `slot`.  The last reader to leave releases what
 * declarations retired meanwhile: call it holding no borrowed reference. */
static inline void
sw_promotion_read_end(sw_state *st, uint32_t *slot)
{
    if (SW_ADD_FETCH(*slot, (uint32_t)-1) == 0
        && SW_LOAD_PTR(st->retired_lattices) != NULL) {
        sw_promotion_release_retired(st);
    }
}

/* At the graph's teardown: release the retired default lattices. */
void
sw_promotion_fini(sw_state *st)
{
    sw_lattice *list = (sw_lattice *)SW_LOAD_PTR(st->retired_lattices);

    st->retired_lattices = NULL;
    sw_promotion_release_chain(list);
}

/* ---- the default lattice ---------------------------------------------------- */

/* A new reference to the current default lattice, or NULL with
 * RuntimeError after the graph was finalized. */
sw_lattice *
sw_promotion_default(sw_state *st)
{
    sw_lattice *lat;
    uint32_t *slot;

    if (sw_state_check(st) < 0) {
        return NULL;
    }
    slot = sw_promotion_read_begin(st);
    lat = (sw_lattice *)SW_LOAD_PTR(st->default_lattice);
    Py_XINCREF(lat);
    sw_promotion_read_end(st, slot);
    if (lat == NULL) {
        PyErr_SetString(PyExc_RuntimeError,
                        "the stride_weave descriptor graph was finalized");
    }
    return lat;
}

/* Make `new` the default lattice if `base` still is: 1 (the state's
 * reference moves to `new`), or 0. */
static int
sw_promotion_swap(sw_state *st, sw_lattice *base, sw_lattice *new)
{
#ifdef Py_GIL_DISABLED
    PyObject *expected = (PyObject *)base;
    return SW_CAS(st->default_lattice, expected, (PyObject *)new);
#else
    /* The GIL is held and nothing between the test and the store runs
     * Python code. */
    if (st->default_lattice != (PyObject *)base) {
        return 0;
    }
    st->default_lattice = (PyObject *)new;
    return 1;
#endif
}

/* Declare `edges` (a tuple of (lower, upper) tuples) into the default
 * lattice: 0, or -1 with an exception and nothing changed. */
static int
sw_promotion_declare(sw_state *st, PyObject *edges, const char *func)
{
    /* Declarations are lossless, keep the default lattice's rules. */
    const sw_lattice_options options = {0, 1, NULL, -1, NULL, NULL};

    for (;;) {
        sw_lattice *base = sw_promotion_default(st), *new;

        if (base == NULL) {
            return -1;
        }
        new = sw_lattice_build(st, base, edges, &options, func);
        if (new == NULL || new == base) {
            Py_XDECREF(new);
            Py_DECREF(base);
            return new == NULL ? -1 : 0;
        }
        if (sw_promotion_swap(st, base, new)) {
            /* Our reference to new is now the state's; the state's to base
             * waits on the retired stack until no read is in progress. */
            sw_promotion_retire(st, base, base);
            Py_DECREF(base);
            sw_promotion_release_retired(st);
            return 0;
        }
        /* Another declaration came first: build on it instead. */
        Py_DECREF(new);
        Py_DECREF(base);
    }
}

static PyObject *
sw_promotion_declare_promotion(PyObject *module, PyObject *const *args,
                               Py_ssize_t nargs)
{
    sw_state *st = sw_state_of_module(module);
    PyObject *edge, *edges;
    int status;

    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError,
                     "declare_promotion() takes exactly 2 arguments (%zd "
                     "given)", nargs);
        return NULL;
    }
    edge = PyTuple_Pack(2, args[0], args[1]);
    edges = edge ? PyTuple_Pack(1, edge) : NULL;
    Py_XDECREF(edge);
    if (edges == NULL) {
        return NULL;
    }
    status = sw_promotion_declare(st, edges, "declare_promotion");
    Py_DECREF(edges);
    if (status < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
sw_promotion_declare_promotions(PyObject *module, PyObject *arg)
{
    const char *func = "declare_promotions";
    sw_state *st = sw_state_of_module(module);
    PyObject *edges = sw_lattice_edges_arg(arg, func);
    int status;

    if (edges == NULL) {
        return NULL;
    }
    status = sw_promotion_declare(st, edges, func);
    Py_DECREF(edges);
    if (status < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
sw_promotion_default_lattice(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    return (PyObject *)sw_promotion_default(sw_state_of_module(module));
}

static PyObject *
sw_promotion_promote_types(PyObject *module, PyObject *const *args,
                           Py_ssize_t nargs)
{
    sw_state *st = sw_state_of_module(module);
    sw_lattice *lat;
    PyObject *result;

    /* The usual call: two registered descriptors that have a join, in two
     * type checks and a few array reads. */
    if (nargs == 2) {
        sw_descriptor *a = sw_relations_registered(st, args[0]);
        sw_descriptor *b = sw_relations_registered(st, args[1]);

        if (a != NULL && b != NULL) {
            uint32_t *slot = sw_promotion_read_begin(st);

            lat = (sw_lattice *)SW_LOAD_PTR(st->default_lattice);
            result = lat != NULL ? sw_lattice_join(lat, a, b) : NULL;
            Py_XINCREF(result);     /* lat holds it until the read ends */
            sw_promotion_read_end(st, slot);
            if (result != NULL) {
                return result;
            }
        }
    }
    else {
        PyErr_Format(PyExc_TypeError,
                     "promote_types() takes exactly 2 arguments (%zd given)",
                     nargs);
        return NULL;
    }
    lat = sw_promotion_default(st);
    if (lat == NULL) {
        return NULL;
    }
    result = sw_promotion_promote(st, lat, args[0], args[1], "promote_types");
    Py_DECREF(lat);
    return result;
}

static PyObject *
sw_promotion_result_type_fn(PyObject *module, PyObject *const *args,
                            Py_ssize_t nargs)
{
    sw_state *st = sw_state_of_module(module);
    sw_lattice *lat;
    sw_descriptor *acc;
    PyObject *result;
    Py_ssize_t i;

    /* The usual call: registered dtypes that have a join, folded without
     * a function call per operand.  Anything else (scalars, errors) takes
     * the full path. */
    if (nargs > 0) {
        uint32_t *slot = sw_promotion_read_begin(st);

        lat = (sw_lattice *)SW_LOAD_PTR(st->default_lattice);
        acc = lat != NULL ? sw_relations_registered(st, args[0]) : NULL;
        for (i = 1; acc != NULL && i < nargs; i++) {
            sw_descriptor *d = sw_relations_registered(st, args[i]);
            acc = d != NULL ? (sw_descriptor *)sw_lattice_join(lat, acc, d) : NULL;
        }
        Py_XINCREF(acc);        /* an operand, or lat holds it */
        sw_promotion_read_end(st, slot);
        if (acc != NULL) {
            return (PyObject *)acc;
        }
    }
    lat = sw_promotion_default(st);
    if (lat == NULL) {
        return NULL;
    }
    result = sw_promotion_result_type(st, lat, args, nargs, "result_type");
    Py_DECREF(lat);
    return result;
}

static PyObject *
sw_promotion_exclusion_fn(PyObject *module, PyObject *arg)
{
    sw_state *st = sw_state_of_module(module);
    sw_descriptor *d;
    const char *why;

    if (sw_state_check(st) < 0) {
        return NULL;
    }
    d = sw_relations_arg(st, arg, "_promotion_exclusion", "dtype");
    if (d == NULL) {
        return NULL;
    }
    why = sw_promotion_exclusion(st, d, SW_READ_WORDING);     /* a report */
    if (why == NULL) {
        Py_RETURN_NONE;
    }
    return PyUnicode_FromString(why);
}

PyMethodDef sw_promotion_methods[] = {
    {"promote_types", SW_CFUNC(sw_promotion_promote_types), METH_FASTCALL,
     PyDoc_STR("promote_types(a, b, /)\n--\n\n"
               "The dtype an operation on a and b produces: their join (least "
               "upper bound) in the default lattice.\n\n"
               "promote_types(a, a) is a for every dtype; promote_types(a, b) "
               "is promote_types(b, a); and joins are associative (see "
               "result_type).  PromotionError (a TypeError) when a and b have "
               "no join: an integer with a floating-point dtype, Int64 with "
               "UInt64, or a dtype that takes part in no implicit promotion "
               "(the E-formats, Int4 and UInt4, the fnuz formats, compound "
               "and block-scaled dtypes); the message says which, and "
               "suggests an explicit cast.  TypeError when a or b is not a "
               "registered DType.")},
    {"result_type", SW_CFUNC(sw_promotion_result_type_fn), METH_FASTCALL,
     PyDoc_STR("result_type(*operands)\n--\n\n"
               "The dtype an operation on operands produces in the default "
               "lattice: the join of the dtypes among them, whatever their "
               "order.\n\n"
               "Operands are registered DTypes and Python bool, int, float "
               "and complex scalars (exactly those types: a subclass is a "
               "TypeError).  Scalars are weak: a scalar takes the dtype of "
               "the other operands when its kind (bool < int < float < "
               "complex) is not above theirs, whatever its value "
               "(result_type(Int8, 1000) is Int8), and is a PromotionError "
               "otherwise.  No operand, or only scalars, is a TypeError.")},
    {"declare_promotion", SW_CFUNC(sw_promotion_declare_promotion), METH_FASTCALL,
     PyDoc_STR("declare_promotion(lower, upper, /)\n--\n\n"
               "Declare the edge lower -> upper in the default lattice: "
               "values of lower promote to upper.\n\n"
               "Refused with ValueError, and the lattice left as it was, "
               "when the edge is not lossless (can_cast(lower, upper) is "
               "False), when either dtype takes part in no implicit "
               "promotion (a category, a compound or block-scaled dtype, a "
               "dtype without a numeric record, a floating-point format "
               "narrower than 16 bits, an integer narrower than 8 bits, an "
               "fnuz format), or when it would close a cycle, leave a pair "
               "with upper bounds but no least one, or change a result "
               "promote_types gives now (the message names the pair).  "
               "Declaring an edge the lattice already implies changes "
               "nothing.  Thread-safe: a lookup sees the lattice before or "
               "after a declaration, never between.")},
    {"declare_promotions", SW_CFUNC(sw_promotion_declare_promotions), METH_O,
     PyDoc_STR("declare_promotions(edges, /)\n--\n\n"
               "Declare every (lower, upper) pair of the iterable edges into "
               "the default lattice as one declaration: checked as "
               "declare_promotion checks one edge, against the lattice with "
               "all of them, and kept all together or not at all.")},
    {"default_lattice", sw_promotion_default_lattice, METH_NOARGS,
     PyDoc_STR("default_lattice()\n--\n\n"
               "The default promotion lattice as it is now: an immutable "
               "PromotionLattice, which later declarations do not change "
               "(they make a new one).  A framework builds its own lattice "
               "from it with extend().")},
    {"_promotion_exclusion", sw_promotion_exclusion_fn, METH_O,
     PyDoc_STR("_promotion_exclusion($module, dtype, /)\n--\n\n"
               "Why dtype takes part in no implicit promotion in the default "
               "lattice (a str), or None when it may.")},
    {NULL, NULL, 0, NULL},
};

/* ---- initialization ----------------------------------------------------------- */

/* The first default lattice: the built-in edges. */
static int
sw_promotion_install_default(sw_state *st)
{
    size_t n = sizeof(sw_promotion_builtin_edges) / sizeof(sw_promotion_builtin_edges[0]);
    PyObject *edges = PyTuple_New((Py_ssize_t)n);
    sw_lattice_options options = {0, 1, NULL, 0, NULL, NULL};
    sw_lattice *lat;
    size_t i;

    if (edges == NULL) {
        return -1;
    }
    for (i = 0; i < n; i++) {
        PyObject *lower = PyDict_GetItemString(st->dtype_type->tp_dict,
                                               sw_promotion_builtin_edges[i][0]);
        PyObject *upper = PyDict_GetItemString(st->dtype_type->tp_dict,
                                               sw_promotion_builtin_edges[i][1]);
        PyObject *edge;

        if (lower == NULL || upper == NULL) {
            PyErr_SetString(PyExc_SystemError,
                            "a built-in of the default lattice is not installed");
            Py_DECREF(edges);
            return -1;
        }
        edge = PyTuple_Pack(2, lower, upper);
        if (edge == NULL) {
            Py_DECREF(edges);
            return -1;
        }
        PyTuple_SET_ITEM(edges, (Py_ssize_t)i, edge);
    }
    lat = sw_lattice_build(st, NULL, edges, &options, "the default lattice");
    Py_DECREF(edges);
    if (lat == NULL) {
        return -1;
    }
    SW_STORE_PTR(st->default_lattice, (PyObject *)lat);
    return 0;
}

/* PromotionError is immutable, as the module's other types are: no code
 * can reassign its bases or methods and so stop promote_types' refusals
 * being the documented TypeError.  It stays subclassable. */
static PyType_Slot sw_promotion_error_slots[] = {
    {Py_tp_doc, (void *)PyDoc_STR(
        "Two dtypes have no promotion: no dtype is above both in the "
        "lattice, or one of them takes part in no implicit promotion.  A "
        "TypeError, as numpy's DTypePromotionError is.")},
    {0, NULL},
};

static PyType_Spec sw_promotion_error_spec = {
    .name = "stride_weave.dtypes.PromotionError",
    .basicsize = 0,     /* BaseException's layout, inherited */
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE
             | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = sw_promotion_error_slots,
};

/* Module initialization, after the built-in graph and its records. */
int
sw_promotion_init(PyObject *module, sw_state *st)
{
    st->promotion_error = PyType_FromModuleAndSpec(
        module, &sw_promotion_error_spec, PyExc_TypeError);
    if (st->promotion_error == NULL
        || sw_relations_init(module, st) < 0
        || sw_lattice_create_type(module, st) < 0
        || sw_promotion_install_default(st) < 0
        || PyModule_AddFunctions(module, sw_promotion_methods) < 0
        || PyModule_AddFunctions(module, sw_casting_methods) < 0
        || PyModule_AddObjectRef(module, "PromotionError", st->promotion_error) < 0
        || PyModule_AddObjectRef(module, "PromotionLattice",
                                 (PyObject *)st->lattice_type) < 0) {
        return -1;
    }
    return 0;
}
