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
#include "numformat.h"


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
#define SW_NUMINFO_NFIELDS 8
extern const char *const sw_numinfo_field_names[SW_NUMINFO_NFIELDS];
PyObject *sw_numinfo_fields(sw_numinfo *r);

/* numrecords.c */
extern PyMethodDef sw_numrecords_methods[];
int sw_numrecords_install_builtins(sw_state *st);
const sw_numeric_format *sw_numrecords_settle(sw_descriptor *d);
int sw_numrecords_attach_new(sw_state *st, sw_descriptor *d, PyObject *name,
                             PyObject *bits, PyObject *record,
                             const char *func);
PyObject *sw_numrecords_stated(sw_descriptor *d);
int sw_numrecords_match(sw_descriptor *d, PyObject *stated, const char *theirs,
                        PyObject **difference);

#endif /* SW_NUMINFO_H */
