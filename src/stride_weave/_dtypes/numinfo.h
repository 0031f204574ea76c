/* numinfo.h: numeric records, what a simple dtype's bits mean: the
 * NumericInfo type (numinfo.c) and the records of simple dtypes
 * (numrecords.c).
 *
 * A NumericInfo object is an immutable record derived from a format's
 * parameters (kind, width, signedness, exponent and mantissa widths, bias,
 * NaN encoding).  Its C view, sw_numeric_format, is what the core reads
 * at C speed: the casting rules, the promotion lattice and the codecs.  A
 * simple descriptor holds at most one record, attached once and never
 * replaced (sw_descriptor.numeric).
 */
#ifndef SW_NUMINFO_H
#define SW_NUMINFO_H

#include "compat.h"
#include "descriptor.h"
#include "state.h"

typedef enum {
    SW_NUM_FLOAT = 0,       /* binary floating point */
    SW_NUM_COMPLEX,         /* two components of a binary floating point */
    SW_NUM_INT,             /* two's complement (signed) or plain binary */
    SW_NUM_BOOL,            /* 0 or 1 */
    SW_NUM_KIND_COUNT
} sw_num_kind;

typedef enum {
    SW_NAN_IEEE = 0,        /* exponent all ones, mantissa non-zero; the
                               all-ones exponent with a zero mantissa is
                               an infinity */
    SW_NAN_ALL_ONES,        /* exponent and mantissa all ones only */
    SW_NAN_NEGATIVE_ZERO,   /* the sign bit alone (fnuz: no -0) */
    SW_NAN_NONE,            /* no NaN (and no infinity) */
    SW_NAN_COUNT
} sw_nan_encoding;

/* Everything a format's parameters imply, computed once when the record
 * is made.  For a complex format the float fields describe each of the
 * two components, and `bits` is the whole value. */
typedef struct {
    int kind;               /* sw_num_kind */
    int bits;               /* width of one value */
    int is_signed;
    /* Floating-point and complex formats only (0 otherwise). */
    int exponent_bits;
    int mantissa_bits;      /* stored fraction bits, without the implicit 1 */
    int bias;
    int nan_encoding;       /* sw_nan_encoding (SW_NAN_NONE for integers) */
    int has_inf;
    int has_nan;
    int has_zero;           /* 0 only for an unsigned format without a
                               mantissa (e8m0fnu) */
    int has_subnormals;     /* exponent field 0 holds values below the
                               smallest normal */
    int max_exponent;       /* floor(log2(max_finite)): below min_exponent
                               where every finite value is subnormal */
    int min_exponent;       /* the smallest normal's unbiased exponent */
    double max_finite;      /* exact in a double */
    double smallest_normal;
    double smallest_subnormal;  /* smallest positive value */
    double eps;             /* 1.0 to the next larger value (numinfo.c) */
} sw_numeric_format;

typedef struct {
    PyObject_HEAD
    sw_numeric_format fmt;
    PyObject *encoding;     /* exact, non-empty str */
    PyObject *kind_name;    /* "float", "complex", "int" or "bool" */
    PyObject *nan_name;     /* "ieee", "all_ones", "negative_zero" or "none" */
    PyObject *min;          /* exact int or float */
    PyObject *max;          /* exact int or float */
    PyObject *smallest_normal;      /* float, or None */
    PyObject *smallest_subnormal;   /* float, or None */
    PyObject *eps;                  /* float, or None */
} sw_numinfo;

/* The record attached to simple descriptor `d` (borrowed: a record, once
 * attached, stays for the descriptor's life), or NULL when it has none.
 * `numeric` holds None once a descriptor is settled without a record
 * (numrecords.c).  Sets no exception, runs no Python code. */
static inline const sw_numeric_format *
sw_numinfo_format_of(sw_descriptor *d)
{
    PyObject *record = SW_LOAD_PTR(d->numeric);

    return record != NULL && record != Py_None
        ? &((sw_numinfo *)record)->fmt : NULL;
}

/* numinfo.c */
int sw_numinfo_create_type(PyObject *module, sw_state *st);
int sw_numinfo_derive_float(sw_numeric_format *f, int exponent_bits,
                            int mantissa_bits, int bias, int nan_encoding,
                            int is_signed, int is_complex, const char *func);
int sw_numinfo_derive_int(sw_numeric_format *f, int bits, int is_signed,
                          int kind);
PyObject *sw_numinfo_make(PyTypeObject *type, const sw_numeric_format *f,
                          PyObject *encoding);
int sw_numinfo_equal(sw_numinfo *a, sw_numinfo *b);

/* numrecords.c */
extern PyMethodDef sw_numrecords_methods[];
int sw_numrecords_install_builtins(sw_state *st);
const sw_numeric_format *sw_numrecords_settle(sw_descriptor *d);
int sw_numrecords_attach_new(sw_state *st, sw_descriptor *d, PyObject *record,
                             const char *func);

#endif /* SW_NUMINFO_H */
