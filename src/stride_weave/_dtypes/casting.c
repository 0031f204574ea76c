/* casting.c: which casts lose nothing, from the numeric records.
 *
 * Owns can_cast() and the rule under it: a cast from A to B is "safe"
 * exactly when every value of A is a value of B (every finite value, zero
 * by value, each infinity only where B has it, NaN only where B has one).
 * It is decided from the two records alone (numinfo.h): signedness and
 * integer ranges, and for floating-point formats the binades they cover,
 * the spacing of their values in each, subnormals and special values.  No
 * table of pairs: an extension dtype with a record is answered as the
 * built-ins are.  A complex format's values are pairs of its component
 * format's values, and a real value x is the complex value x + 0j.
 *
 * Floating-point values as binades: the values of a format F whose
 * magnitude lies in [2**p, 2**(p+1)) are multiples of 2**spacing(p), where
 * spacing(p) = p - mantissa_bits for the normal binades (p >= emin, the
 * smallest normal's exponent) and emin - mantissa_bits for the subnormal
 * ones; F holds every such multiple from 2**p up to its largest finite
 * value.  So a set of values that are multiples of 2**g in binade p is in
 * F when F covers binade p and spacing(p) <= g, and its largest value is
 * at most F's.  The values of a source format fall into a few runs of
 * binades (its normal binades, a top binade with fewer values, its
 * subnormals); along each run the condition is monotonic, so checking a
 * run's two ends decides it.
 */
#include "relations.h"

#include <string.h>         /* memcpy */

/* 2**e as a double, for 0 <= e (infinity from 1024 on): built from its
 * bits, cheaper than ldexp in the checks below. */
static double
sw_casting_pow2(int e)
{
    uint64_t bits = (uint64_t)(e + 1023) << 52;
    double value;

    if (e >= 1024) {
        bits = (uint64_t)0x7FF << 52;       /* +inf */
    }
    memcpy(&value, &bits, sizeof(value));
    return value;
}

/* ---- the value sets ------------------------------------------------------ */

/* The lowest binade holding a value of the floating-point format `f`. */
static int
sw_casting_low(const sw_numeric_format *f)
{
    return f->has_subnormals ? f->min_exponent - f->mantissa_bits
                             : f->min_exponent;
}

/* The exponent of the spacing of `f`'s values in binade p. */
static int
sw_casting_spacing(const sw_numeric_format *f, int p)
{
    return p >= f->min_exponent ? p - f->mantissa_bits
                                : f->min_exponent - f->mantissa_bits;
}

/* 1 when the floating-point format `to` holds every multiple of 2**g in
 * binade p (up to its largest finite value, which callers compare). */
static int
sw_casting_holds(const sw_numeric_format *to, int p, int g)
{
    return p >= sw_casting_low(to) && p <= to->max_exponent
           && sw_casting_spacing(to, p) <= g;
}

/* 1 when every value of the floating-point format `a` is a value of the
 * floating-point format `b` (for complex formats: their components). */
static int
sw_casting_float_in_float(const sw_numeric_format *a, const sw_numeric_format *b)
{
    int m = a->mantissa_bits;
    /* With the all-ones NaN and one mantissa bit, the top binade holds
     * only its power of two (the other pattern is the NaN). */
    int reduced = m == 1 && a->nan_encoding == SW_NAN_ALL_ONES;
    int top_full = a->max_exponent - reduced;

    if ((a->is_signed && !b->is_signed) || (a->has_zero && !b->has_zero)
        || (a->has_inf && !b->has_inf) || (a->has_nan && !b->has_nan)
        || a->max_finite > b->max_finite) {
        return 0;
    }
    /* The normal binades emin .. top_full: multiples of 2**(p - m). */
    if (top_full >= a->min_exponent
        && (!sw_casting_holds(b, a->min_exponent, a->min_exponent - m)
            || !sw_casting_holds(b, top_full, top_full - m))) {
        return 0;
    }
    if (reduced && !sw_casting_holds(b, a->max_exponent, a->max_exponent)) {
        return 0;
    }
    /* The subnormal binades emin - m .. emin - 1: multiples of the
     * smallest subnormal. */
    if (a->has_subnormals) {
        int s = a->min_exponent - m;
        if (!sw_casting_holds(b, s, s)
            || !sw_casting_holds(b, a->min_exponent - 1, s)) {
            return 0;
        }
    }
    return 1;
}

/* An integer (or boolean) format's values are [-(2**h), 2**h - 1] when
 * signed, [0, 2**h - 1] when not. */
static void
sw_casting_int_range(const sw_numeric_format *f, int *is_signed, int *h)
{
    if (f->kind == SW_NUM_BOOL) {
        *is_signed = 0;
        *h = 1;                 /* 0 and 1 */
    }
    else {
        *is_signed = f->is_signed;
        *h = f->is_signed ? f->bits - 1 : f->bits;
    }
}

/* 1 when every integer of [-(2**h), 2**h - 1] (signed) or [0, 2**h - 1]
 * is a value of the floating-point format `b`. */
static int
sw_casting_int_in_float(int is_signed, int h, const sw_numeric_format *b)
{
    if (!b->has_zero) {
        return 0;
    }
    /* 1 .. 2**h - 1: multiples of 1 in the binades 0 .. h - 1.  (For h
     * above 53, 2**h - 1 rounds to 2**h, which a float at least 2**h - 1
     * reaches anyway; the spacing check refuses those first.) */
    if (h >= 1
        && (!sw_casting_holds(b, 0, 0) || !sw_casting_holds(b, h - 1, 0)
            || b->max_finite < sw_casting_pow2(h) - 1.0)) {
        return 0;
    }
    /* The negatives mirror the positives, plus the power of two -(2**h). */
    if (is_signed
        && (!b->is_signed || !sw_casting_holds(b, h, h)
            || b->max_finite < sw_casting_pow2(h))) {
        return 0;
    }
    return 1;
}

/* 1 when every value of the floating-point format `a` is an integer of
 * the range of (is_signed, h). */
static int
sw_casting_float_in_int(const sw_numeric_format *a, int is_signed, int h)
{
    /* Integers have no infinity and no NaN; every value must be a whole
     * number, so the finest spacing (in the lowest binade) at least 1. */
    if (a->has_inf || a->has_nan
        || sw_casting_spacing(a, sw_casting_low(a)) < 0) {
        return 0;
    }
    /* Its values are whole: the largest is below 2**h, the most negative
     * at least -(2**h). */
    if (!(a->max_finite < sw_casting_pow2(h))) {
        return 0;
    }
    return !a->is_signed || is_signed;
}

/* 1 when every value of the format `from` is a value of the format `to`
 * (a cast from one to the other is safe), else 0.  Runs no Python code. */
static int
sw_casting_formats_safe(const sw_numeric_format *from,
                        const sw_numeric_format *to)
{
    int from_int = from->kind == SW_NUM_INT || from->kind == SW_NUM_BOOL;
    int to_int = to->kind == SW_NUM_INT || to->kind == SW_NUM_BOOL;
    int from_signed, to_signed, from_h, to_h;

    if (from->kind == SW_NUM_COMPLEX && to->kind != SW_NUM_COMPLEX) {
        return 0;       /* values with an imaginary part */
    }
    if (from_int) {
        sw_casting_int_range(from, &from_signed, &from_h);
    }
    if (to_int) {
        sw_casting_int_range(to, &to_signed, &to_h);
    }
    if (from_int && to_int) {
        return from_h <= to_h && (!from_signed || to_signed);
    }
    if (from_int) {
        return sw_casting_int_in_float(from_signed, from_h, to);
    }
    if (to_int) {
        return sw_casting_float_in_int(from, to_signed, to_h);
    }
    /* Floating point into floating point; a real format into a complex
     * one compares with its components (x is x + 0j). */
    return sw_casting_float_in_float(from, to);
}

/* ---- levels ---------------------------------------------------------------- */

/* The answer for two distinct dtypes, from their records read with
 * `asked`; *kept is set to 1 when both have records (the answer is then
 * for good, and may be remembered).  A dtype without a record casts only
 * to itself: the answer is 0 for good as soon as one of them can never
 * have a record (not a simple dtype, or settled without one), and the
 * other is then left unsettled; otherwise reading with SW_READ_RECORD
 * settles each that has none, so no record attached later changes the
 * answer. */
static int
sw_casting_decide(sw_state *st, sw_descriptor *from, sw_descriptor *to,
                  int casting, unsigned int asked, int *kept)
{
    sw_relations_view f = sw_relations_read(st, from, SW_READ_WORDING);
    sw_relations_view t = sw_relations_read(st, to, SW_READ_WORDING);

    *kept = 0;
    if ((f.record == NULL && f.fixed) || (t.record == NULL && t.fixed)) {
        return 0;
    }
    if (f.record == NULL) {
        f = sw_relations_read(st, from, asked);
    }
    if (t.record == NULL) {
        t = sw_relations_read(st, to, asked);
    }
    if (f.record == NULL || t.record == NULL) {
        return 0;
    }
    *kept = 1;
    switch (casting) {
    case SW_CASTING_NO:
    case SW_CASTING_EQUIV:
        return 0;
    case SW_CASTING_SAFE:
        return sw_casting_formats_safe(f.record, t.record);
    case SW_CASTING_SAME_KIND:
        return sw_casting_formats_safe(f.record, t.record)
               || sw_relations_rank(f.kinds) <= sw_relations_rank(t.kinds);
    default:
        return 1;
    }
}

/* Safe answers between dtypes with records, remembered: a cache of
 * SW_CAST_CACHE_SIZE words, each the relation ids of the pair (31 bits
 * each), the answer and a valid bit, read and written whole (atomically on
 * free-threaded builds), so a reader sees a complete entry or another
 * pair's.  Only pairs whose dtypes both have records are kept: a record is
 * never replaced, so the answer never changes. */
static int
sw_casting_safe_cached(sw_state *st, sw_descriptor *from, sw_descriptor *to,
                       unsigned int asked)
{
    uint32_t a = sw_lattice_id_of(from), b = sw_lattice_id_of(to);
    uint64_t key = ((uint64_t)a << 33) | ((uint64_t)b << 2) | 1u, entry;
    size_t slot = (size_t)((a * 2654435761u) ^ b) & (SW_CAST_CACHE_SIZE - 1);
    int safe, kept;

    /* A pair without ids has no entry (id 0 is never in one). */
    entry = SW_LOAD_RELAXED(st->cast_cache[slot]);
    if (a != 0 && b != 0 && (entry & ~(uint64_t)2) == key) {
        return (int)((entry >> 1) & 1);
    }
    safe = sw_casting_decide(st, from, to, SW_CASTING_SAFE, asked, &kept);
    if (!kept) {
        return safe;            /* without two records: not kept */
    }
    if (a == 0 || b == 0) {
        /* Ids for the next call. */
        if (sw_relations_assign_id(st, from) < 0
            || sw_relations_assign_id(st, to) < 0) {
            PyErr_Clear();      /* ids ran out: answer without the cache */
        }
        return safe;
    }
    SW_STORE_RELAXED(st->cast_cache[slot], key | ((uint64_t)safe << 1));
    return safe;
}

int
sw_casting_can(sw_state *st, sw_descriptor *from, sw_descriptor *to,
               int casting, unsigned int asked)
{
    int kept;

    if (from == to) {
        return 1;
    }
    if (casting == SW_CASTING_SAFE) {
        return sw_casting_safe_cached(st, from, to, asked);
    }
    return sw_casting_decide(st, from, to, casting, asked, &kept);
}

/* The casting level `level` (any str) as an sw_casting, or -1 with
 * TypeError or ValueError. */
static int
sw_casting_level(sw_state *st, PyObject *level)
{
    int i = sw_relations_match(st, level, SW_RELNAME_CASTING, SW_CASTING_COUNT);

    if (i >= 0) {
        return i - SW_RELNAME_CASTING;
    }
    if (!PyUnicode_Check(level)) {
        PyErr_Format(PyExc_TypeError,
                     "can_cast: casting must be a str, one of 'no', 'equiv', "
                     "'safe', 'same_kind' and 'unsafe', got an object of type "
                     "%.200s", Py_TYPE(level)->tp_name);
        return -1;
    }
    level = sw_exact_str(level);    /* a repr of our own, not the subclass's */
    if (level != NULL) {
        PyErr_Format(PyExc_ValueError,
                     "can_cast: casting must be one of 'no', 'equiv', 'safe', "
                     "'same_kind' and 'unsafe', got %R", level);
        Py_DECREF(level);
    }
    return -1;
}

static PyObject *
sw_casting_can_cast(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                    PyObject *kwnames)
{
    sw_state *st = sw_state_of_module(module);
    PyObject *level = NULL;
    sw_descriptor *from, *to;
    int casting = SW_CASTING_SAFE;
    Py_ssize_t nkw = kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0;

    /* The usual call: two registered descriptors, the default level. */
    if (nargs == 2 && nkw == 0) {
        from = sw_relations_registered(st, args[0]);
        to = sw_relations_registered(st, args[1]);
        if (from != NULL && to != NULL) {
            return Py_NewRef(sw_casting_can(st, from, to, SW_CASTING_SAFE,
                                            SW_READ_RECORD)
                             ? Py_True : Py_False);
        }
    }
    if (sw_state_check(st) < 0) {
        return NULL;
    }
    if (nargs == 3 && nkw == 0) {
        level = args[2];
    }
    else if (nargs == 2 && nkw == 1
             && PyUnicode_Check(PyTuple_GET_ITEM(kwnames, 0))
             && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0),
                                                 "casting") == 0) {
        level = args[2];
    }
    else if (nargs != 2 || nkw != 0) {
        PyErr_Format(PyExc_TypeError,
                     "can_cast() takes the arguments (from_, to, /, "
                     "casting='safe'), got %zd positional and %zd keyword "
                     "arguments%s", nargs, nkw,
                     nkw == 1 ? " (the only keyword is 'casting')" : "");
        return NULL;
    }
    from = sw_relations_arg(st, args[0], "can_cast", "from_");
    if (from == NULL) {
        return NULL;
    }
    to = sw_relations_arg(st, args[1], "can_cast", "to");
    if (to == NULL) {
        return NULL;
    }
    if (level != NULL) {
        casting = sw_casting_level(st, level);
        if (casting < 0) {
            return NULL;
        }
    }
    return PyBool_FromLong(sw_casting_can(st, from, to, casting,
                                          SW_READ_RECORD));
}

PyMethodDef sw_casting_methods[] = {
    {"can_cast", SW_CFUNC(sw_casting_can_cast), METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("can_cast(from_, to, /, casting='safe')\n--\n\n"
               "Whether values of the dtype `from_` may be cast to the dtype "
               "`to` at the level `casting`, as numpy.can_cast.\n\n"
               "'no' and 'equiv': only a dtype to itself.  'safe': every "
               "value of `from_` is exactly a value of `to` -- every finite "
               "value, zero (of either sign) by value, each infinity only "
               "where `to` has it, NaN only where `to` has one -- decided from "
               "the two numeric records (exponent range, precision, "
               "subnormals, special values, integer range, signedness), so "
               "it holds for extension dtypes with records.  A complex "
               "dtype's values are pairs of its component's values, and a "
               "real value x is the complex value x + 0j.  'same_kind': "
               "safe, or the kind of `from_` is not above the kind of `to` in "
               "the order bool < unsigned integer < signed integer < real "
               "floating < complex floating.  'unsafe': any two dtypes with "
               "numeric records.\n\n"
               "A dtype without a numeric record, a compound or block-scaled "
               "dtype, and a category cast only to themselves, at every "
               "level.  TypeError when `from_` or `to` is not a registered "
               "DType (ValueError for a descriptor that is not registered); "
               "ValueError for an unknown casting level.")},
    {NULL, NULL, 0, NULL},
};
