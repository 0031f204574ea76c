/* numinfo.c: NumericInfo, the record of what a simple dtype's bits mean.
 *
 * Owns the NumericInfo type: an immutable record derived entirely from a
 * format's parameters (kind, width, signedness, and for floating-point
 * formats the exponent and mantissa widths, bias and NaN encoding), its
 * factories (floating, integer, boolean), its keyword constructor, and
 * its value semantics (equality, hash, repr, pickling).
 *
 * A record is a C struct (sw_numeric_format, what the core reads) plus
 * the Python values it shows, all computed when it is made.  It has no
 * instance dict and no writable member, so nothing (object.__setattr__
 * included) can change it, and it is final, so no subclass redefines its
 * equality or hash.  Two records with the same parameters and encoding
 * name are equal: every other field is derived from those.
 */
#include "numinfo.h"
#include "structure.h"

#include <math.h>
#include <stddef.h>         /* offsetof */

/* Formats whose values are not all doubles are refused: the records (and
 * the codecs) compute with doubles. */
#define SW_NUMINFO_MAX_EXPONENT_BITS 11
#define SW_NUMINFO_MAX_MANTISSA_BITS 52
/* Integers (and booleans) of any width up to this. */
#define SW_NUMINFO_MAX_INT_BITS 1024

static const char *const sw_numinfo_kind_names[SW_NUM_KIND_COUNT] = {
    [SW_NUM_FLOAT] = "float",
    [SW_NUM_COMPLEX] = "complex",
    [SW_NUM_INT] = "int",
    [SW_NUM_BOOL] = "bool",
};

static const char *const sw_numinfo_nan_names[SW_NAN_COUNT] = {
    [SW_NAN_IEEE] = "ieee",
    [SW_NAN_ALL_ONES] = "all_ones",
    [SW_NAN_NEGATIVE_ZERO] = "negative_zero",
    [SW_NAN_NONE] = "none",
};

#define SW_NUMINFO_KINDS "('float', 'complex', 'int', 'bool')"
#define SW_NUMINFO_NANS "('ieee', 'all_ones', 'negative_zero', 'none')"

/* ---- arguments ---------------------------------------------------------- */

/* The index of `value` (any str; compared by its characters, so a str
 * subclass runs no code) among names[0..count), or -1 with ValueError. */
static int
sw_numinfo_choice(PyObject *value, const char *const *names, int count,
                  const char *func, const char *arg, const char *listing)
{
    int i;

    if (PyUnicode_Check(value)) {
        for (i = 0; i < count; i++) {
            if (PyUnicode_CompareWithASCIIString(value, names[i]) == 0) {
                return i;
            }
        }
    }
    return sw_structure_refuse(PyExc_ValueError, value,
                             "%s: %s must be one of %s, got ", func, arg,
                             listing);
}

/* An exact int (not a bool, not a subclass) as a C int in [lo, hi]:
 * 0, or -1 with TypeError (not an int) or ValueError (out of range). */
static int
sw_numinfo_int(PyObject *value, const char *func, const char *arg,
               long lo, long hi, int *out)
{
    int overflow;
    long v;

    if (!PyLong_CheckExact(value)) {
        return sw_structure_refuse(PyExc_TypeError, value,
                                 "%s: %s must be an int, got ", func, arg);
    }
    v = PyLong_AsLongAndOverflow(value, &overflow);
    if (v == -1 && overflow == 0 && PyErr_Occurred()) {
        return -1;
    }
    if (overflow != 0 || v < lo || v > hi) {
        return sw_structure_refuse(PyExc_ValueError, value,
                                 "%s: %s must be between %ld and %ld, got ",
                                 func, arg, lo, hi);
    }
    *out = (int)v;
    return 0;
}

/* A bool argument: 0 or 1, or -1 with TypeError. */
static int
sw_numinfo_bool(PyObject *value, const char *func, const char *arg)
{
    if (!PyBool_Check(value)) {
        return sw_structure_refuse(PyExc_TypeError, value,
                                 "%s: %s must be a bool, got ", func, arg);
    }
    return value == Py_True;
}

/* ---- deriving a format from its parameters ----------------------------- */

/* floor(log2(v)) of a positive integer. */
static int
sw_numinfo_log2(uint64_t v)
{
    int k = 0;

    while (v >>= 1) {
        k++;
    }
    return k;
}

/* The value of the non-negative code with exponent field `field` and
 * mantissa field `frac` of the format `f` (its parameters and has_zero
 * set), as the definitions give it: with a zero, field 0 holds the
 * subnormals frac * 2**(1 - bias - m) and field k >= 1 the normals
 * (2**m + frac) * 2**(k - bias - m); without one (unsigned, no mantissa),
 * field k is 2**(k - bias).  Its exponent floor(log2(value)) goes to
 * *exponent (unset for zero).  Exact where the caller's range check
 * passes. */
static double
sw_numinfo_value(const sw_numeric_format *f, int field, uint64_t frac,
                 int *exponent)
{
    int m = f->mantissa_bits;

    if (f->has_zero && field == 0) {
        if (frac == 0) {
            return 0.0;
        }
        *exponent = sw_numinfo_log2(frac) + 1 - f->bias - m;
        return ldexp((double)frac, 1 - f->bias - m);
    }
    *exponent = field - f->bias;
    return ldexp((double)((1ULL << m) + frac), field - f->bias - m);
}

/* The largest finite code's exponent and mantissa fields: the top
 * exponent field where nan_encoding leaves it finite, minus the NaN
 * pattern for 'all_ones'. */
static void
sw_numinfo_largest_code(int e, int m, int nan, int *field, uint64_t *frac)
{
    int top = (1 << e) - 1;                     /* the all-ones exponent field */
    uint64_t ones = (1ULL << m) - 1;            /* the all-ones mantissa */

    if (nan == SW_NAN_IEEE) {
        *field = top - 1;                       /* field 0 when e == 1 */
        *frac = ones;
    }
    else if (nan == SW_NAN_ALL_ONES && m > 0) {
        *field = top;
        *frac = ones - 1;
    }
    else if (nan == SW_NAN_ALL_ONES) {          /* no mantissa: the field alone */
        *field = top - 1;
        *frac = 0;
    }
    else {
        *field = top;
        *frac = ones;
    }
}

int
sw_numinfo_derive_float(sw_numeric_format *f, int e, int m, int bias,
                        int nan, int is_signed, int is_complex,
                        const char *func)
{
    int width, field;
    uint64_t frac;

    if (e < 1 || m < 0) {
        PyErr_Format(PyExc_ValueError,
                     "%s: expected exponent_bits >= 1 and mantissa_bits >= 0, "
                     "got %d and %d", func, e, m);
        return -1;
    }
    if (e > SW_NUMINFO_MAX_EXPONENT_BITS || m > SW_NUMINFO_MAX_MANTISSA_BITS) {
        PyErr_Format(PyExc_ValueError,
                     "%s: formats wider than float64's %d exponent bits or "
                     "%d mantissa bits are not supported, got %d and %d",
                     func, SW_NUMINFO_MAX_EXPONENT_BITS,
                     SW_NUMINFO_MAX_MANTISSA_BITS, e, m);
        return -1;
    }
    if (nan == SW_NAN_IEEE && m == 0) {
        PyErr_Format(PyExc_ValueError,
                     "%s: nan_encoding 'ieee' needs mantissa_bits >= 1 (a "
                     "NaN has a non-zero mantissa), got 0", func);
        return -1;
    }
    if (nan == SW_NAN_NEGATIVE_ZERO && !is_signed) {
        PyErr_Format(PyExc_ValueError,
                     "%s: nan_encoding 'negative_zero' needs a sign bit, got "
                     "signed=False", func);
        return -1;
    }
    memset(f, 0, sizeof(*f));
    f->kind = is_complex ? SW_NUM_COMPLEX : SW_NUM_FLOAT;
    f->is_signed = is_signed;
    f->exponent_bits = e;
    f->mantissa_bits = m;
    f->bias = bias;
    f->nan_encoding = nan;
    f->has_inf = nan == SW_NAN_IEEE;
    f->has_nan = nan != SW_NAN_NONE;
    /* Exponent field 0 holds the subnormals (and zero), except in an
     * unsigned format with no mantissa, where it is the normal 2**-bias
     * and there is no zero. */
    f->has_zero = is_signed || m > 0;
    f->has_subnormals = f->has_zero && m > 0;
    f->min_exponent = f->has_zero ? 1 - bias : -bias;
    /* The largest value is that of the largest finite code, which with
     * one exponent bit may be in field 0: a subnormal (the 'ieee'
     * format's field 1 is infinity and NaN), or zero. */
    sw_numinfo_largest_code(e, m, nan, &field, &frac);
    if (f->has_zero && field == 0 && frac == 0) {
        PyErr_Format(PyExc_ValueError,
                     "%s: exponent_bits must be at least 2 for a signed "
                     "format with mantissa_bits=0 and nan_encoding "
                     "'all_ones' (exponent field 1 is the NaN, field 0 "
                     "zero alone), got %d", func, e);
        return -1;
    }
    f->max_finite = sw_numinfo_value(f, field, frac, &f->max_exponent);
    f->smallest_normal = ldexp(1.0, f->min_exponent);
    f->smallest_subnormal = f->has_subnormals
        ? ldexp(1.0, f->min_exponent - m) : f->smallest_normal;
    if (!isfinite(f->max_finite) || f->smallest_subnormal == 0.0
        || ldexp(f->smallest_subnormal, m) != f->smallest_normal) {
        goto not_float64;
    }
    /* eps: the distance from 1.0 to the next larger value, where 1.0 is a
     * value below the largest, else the relative precision 2**-m.  That
     * is 2**-m too where 1.0 is normal (or a power of two of a format
     * without a mantissa), and the subnormals' spacing 2**(emin - m)
     * where 1.0 is a subnormal (0 < emin <= m). */
    f->eps = f->has_subnormals && f->min_exponent > 0 && f->min_exponent <= m
             && f->max_finite > 1.0
        ? f->smallest_subnormal : ldexp(1.0, -m);
    width = (is_signed ? 1 : 0) + e + m;
    f->bits = is_complex ? 2 * width : width;
    return 0;
not_float64:
    PyErr_Format(PyExc_ValueError,
                 "%s: the values of a format with exponent_bits=%d, "
                 "mantissa_bits=%d and bias=%d are not all float64 "
                 "values, which records need", func, e, m, bias);
    return -1;
}

int
sw_numinfo_derive_int(sw_numeric_format *f, int bits, int is_signed, int kind)
{
    memset(f, 0, sizeof(*f));
    f->kind = kind;
    f->bits = bits;
    f->is_signed = is_signed;
    f->nan_encoding = SW_NAN_NONE;
    f->has_zero = 1;
    return 0;
}

/* ---- the record object --------------------------------------------------- */

/* min and max of an integer format: -(2**(bits-1)) and 2**(bits-1) - 1
 * signed, 0 and 2**bits - 1 unsigned, as exact ints. */
static int
sw_numinfo_int_range(const sw_numeric_format *f, PyObject **min, PyObject **max)
{
    PyObject *one = NULL, *shift = NULL, *power = NULL;
    int status = -1;

    *min = *max = NULL;
    one = PyLong_FromLong(1);
    shift = PyLong_FromLong(f->is_signed ? f->bits - 1 : f->bits);
    if (one == NULL || shift == NULL) {
        goto done;
    }
    power = PyNumber_Lshift(one, shift);    /* exact ints: no user code */
    if (power == NULL) {
        goto done;
    }
    *max = PyNumber_Subtract(power, one);
    *min = f->is_signed ? PyNumber_Negative(power) : PyLong_FromLong(0);
    if (*max == NULL || *min == NULL) {
        Py_CLEAR(*min);
        Py_CLEAR(*max);
        goto done;
    }
    status = 0;
done:
    Py_XDECREF(one);
    Py_XDECREF(shift);
    Py_XDECREF(power);
    return status;
}

/* A new record of `type` for the derived format `f` (new reference). */
PyObject *
sw_numinfo_make(PyTypeObject *type, const sw_numeric_format *f,
                PyObject *encoding)
{
    sw_numinfo *r;

    r = (sw_numinfo *)type->tp_alloc(type, 0);
    if (r == NULL) {
        return NULL;
    }
    r->fmt = *f;
    r->encoding = sw_exact_str(encoding);
    r->kind_name = PyUnicode_InternFromString(sw_numinfo_kind_names[f->kind]);
    r->nan_name = PyUnicode_InternFromString(sw_numinfo_nan_names[f->nan_encoding]);
    if (r->encoding == NULL || r->kind_name == NULL || r->nan_name == NULL) {
        goto error;
    }
    if (f->kind == SW_NUM_FLOAT || f->kind == SW_NUM_COMPLEX) {
        /* The most negative finite value; for an unsigned format its
         * smallest value: zero where it has one, else the smallest normal. */
        r->min = PyFloat_FromDouble(f->is_signed ? -f->max_finite
                                    : f->has_zero ? 0.0 : f->smallest_normal);
        r->max = PyFloat_FromDouble(f->max_finite);
        r->smallest_normal = PyFloat_FromDouble(f->smallest_normal);
        r->smallest_subnormal = PyFloat_FromDouble(f->smallest_subnormal);
        r->eps = PyFloat_FromDouble(f->eps);
        if (r->min == NULL || r->max == NULL || r->smallest_normal == NULL
            || r->smallest_subnormal == NULL || r->eps == NULL) {
            goto error;
        }
    }
    else if (f->kind == SW_NUM_BOOL) {
        r->min = PyLong_FromLong(0);
        r->max = PyLong_FromLong(1);
        r->smallest_normal = Py_NewRef(Py_None);
        r->smallest_subnormal = Py_NewRef(Py_None);
        r->eps = Py_NewRef(Py_None);
        if (r->min == NULL || r->max == NULL) {
            goto error;
        }
    }
    else {
        if (sw_numinfo_int_range(f, &r->min, &r->max) < 0) {
            goto error;
        }
        r->smallest_normal = Py_NewRef(Py_None);
        r->smallest_subnormal = Py_NewRef(Py_None);
        r->eps = Py_NewRef(Py_None);
    }
    return (PyObject *)r;
error:
    Py_DECREF(r);
    return NULL;
}

/* The encoding argument: a non-empty str, else TypeError. */
static int
sw_numinfo_check_encoding(PyObject *encoding, const char *func)
{
    if (!PyUnicode_Check(encoding) || PyUnicode_GET_LENGTH(encoding) == 0) {
        return sw_structure_refuse(PyExc_TypeError, encoding,
                                 "%s: encoding must be a non-empty str, got ",
                                 func);
    }
    return 0;
}

/* The parameters every floating-point record is derived from. */
typedef struct {
    PyObject *exponent_bits, *mantissa_bits, *bias, *nan_encoding;
    PyObject *is_signed, *is_complex;       /* bools */
} sw_numinfo_float_args;

static int
sw_numinfo_derive_float_args(sw_numeric_format *f,
                             const sw_numinfo_float_args *a, const char *func)
{
    static const char *const names[] = {"exponent_bits", "mantissa_bits", "bias"};
    PyObject *values[] = {a->exponent_bits, a->mantissa_bits, a->bias};
    int ints[3], nan, is_signed, is_complex, i;

    for (i = 0; i < 3; i++) {
        if (values[i] == NULL) {
            PyErr_Format(PyExc_TypeError,
                         "%s: missing required keyword argument '%s'",
                         func, names[i]);
            return -1;
        }
        if (!PyLong_CheckExact(values[i])) {
            return sw_structure_refuse(PyExc_TypeError, values[i],
                                     "%s: %s must be an int, got ", func,
                                     names[i]);
        }
    }
    for (i = 0; i < 3; i++) {
        /* Wide bounds: the derivation says what is really supported. */
        if (sw_numinfo_int(values[i], func, names[i], -(1L << 20), 1L << 20,
                           &ints[i]) < 0) {
            return -1;
        }
    }
    if (a->nan_encoding == NULL) {
        PyErr_Format(PyExc_TypeError,
                     "%s: missing required keyword argument 'nan_encoding'", func);
        return -1;
    }
    nan = sw_numinfo_choice(a->nan_encoding, sw_numinfo_nan_names, SW_NAN_COUNT,
                            func, "nan_encoding", SW_NUMINFO_NANS);
    if (nan < 0) {
        return -1;
    }
    is_signed = sw_numinfo_bool(a->is_signed, func, "signed");
    is_complex = is_signed < 0 ? -1 : sw_numinfo_bool(a->is_complex, func, "complex");
    if (is_signed < 0 || is_complex < 0) {
        return -1;
    }
    return sw_numinfo_derive_float(f, ints[0], ints[1], ints[2], nan,
                                   is_signed, is_complex, func);
}

/* NumericInfo.floating(encoding, *, exponent_bits, mantissa_bits, bias,
 * nan_encoding, signed=True, complex=False) */
static PyObject *
sw_numinfo_floating(PyObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"encoding", "exponent_bits", "mantissa_bits",
                             "bias", "nan_encoding", "signed", "complex", NULL};
    const char *func = "NumericInfo.floating";
    sw_numinfo_float_args a = {NULL, NULL, NULL, NULL, Py_True, Py_False};
    PyObject *encoding;
    sw_numeric_format f;

    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|$OOOOOO:floating", kwlist,
                                     &encoding, &a.exponent_bits,
                                     &a.mantissa_bits, &a.bias, &a.nan_encoding,
                                     &a.is_signed, &a.is_complex)) {
        return NULL;
    }
    if (sw_numinfo_check_encoding(encoding, func) < 0
        || sw_numinfo_derive_float_args(&f, &a, func) < 0) {
        return NULL;
    }
    return sw_numinfo_make((PyTypeObject *)type, &f, encoding);
}

/* The bits argument of integer() and boolean(): a positive int, else
 * ValueError. */
static int
sw_numinfo_width(PyObject *bits, const char *func, int *out)
{
    int overflow;
    long v = -1;

    if (PyLong_CheckExact(bits)) {
        v = PyLong_AsLongAndOverflow(bits, &overflow);
        if (v == -1 && overflow == 0 && PyErr_Occurred()) {
            return -1;
        }
        if (overflow != 0) {
            v = -1;
        }
    }
    if (v <= 0) {
        return sw_structure_refuse(PyExc_ValueError, bits,
                                 "%s: bits must be a positive int, got ", func);
    }
    if (v > SW_NUMINFO_MAX_INT_BITS) {
        return sw_structure_refuse(PyExc_ValueError, bits,
                                 "%s: bits must be at most %d, got ", func,
                                 SW_NUMINFO_MAX_INT_BITS);
    }
    *out = (int)v;
    return 0;
}

/* The default encoding name of an integer: "int8", "uint16", ... */
static PyObject *
sw_numinfo_int_encoding(int bits, int is_signed)
{
    return PyUnicode_FromFormat("%sint%d", is_signed ? "" : "u", bits);
}

static PyObject *
sw_numinfo_integer(PyObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"bits", "signed", NULL};
    const char *func = "NumericInfo.integer";
    PyObject *bits, *is_signed_arg = NULL, *encoding, *result;
    sw_numeric_format f;
    int width, is_signed;

    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|$O:integer", kwlist,
                                     &bits, &is_signed_arg)) {
        return NULL;
    }
    if (is_signed_arg == NULL) {
        PyErr_Format(PyExc_TypeError,
                     "%s: missing required keyword argument 'signed'", func);
        return NULL;
    }
    if (sw_numinfo_width(bits, func, &width) < 0) {
        return NULL;
    }
    is_signed = sw_numinfo_bool(is_signed_arg, func, "signed");
    if (is_signed < 0) {
        return NULL;
    }
    sw_numinfo_derive_int(&f, width, is_signed, SW_NUM_INT);
    encoding = sw_numinfo_int_encoding(width, is_signed);
    if (encoding == NULL) {
        return NULL;
    }
    result = sw_numinfo_make((PyTypeObject *)type, &f, encoding);
    Py_DECREF(encoding);
    return result;
}

static PyObject *
sw_numinfo_boolean(PyObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"bits", NULL};
    PyObject *bits = NULL, *encoding, *result;
    sw_numeric_format f;
    int width = 8;

    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:boolean", kwlist, &bits)) {
        return NULL;
    }
    if (bits != NULL && sw_numinfo_width(bits, "NumericInfo.boolean", &width) < 0) {
        return NULL;
    }
    sw_numinfo_derive_int(&f, width, 0, SW_NUM_BOOL);
    encoding = PyUnicode_FromFormat("bool%d", width);
    if (encoding == NULL) {
        return NULL;
    }
    result = sw_numinfo_make((PyTypeObject *)type, &f, encoding);
    Py_DECREF(encoding);
    return result;
}

/* ---- the keyword constructor and the pickle's reconstructor ------------- */

/* Derive the format of a record of kind `k` from the fields that define
 * it: bits and signed, plus exponent_bits, mantissa_bits, bias and
 * nan_encoding for a floating-point or complex record.  0, or -1 with an
 * exception naming `func`. */
static int
sw_numinfo_derive_kind(sw_numeric_format *f, int k, PyObject *bits,
                       PyObject *is_signed, PyObject *eb, PyObject *mb,
                       PyObject *bias, PyObject *nan, const char *func)
{
    int width, signed_flag;

    if (sw_numinfo_width(bits, func, &width) < 0) {
        return -1;
    }
    signed_flag = sw_numinfo_bool(is_signed, func, "signed");
    if (signed_flag < 0) {
        return -1;
    }
    if (k == SW_NUM_FLOAT || k == SW_NUM_COMPLEX) {
        sw_numinfo_float_args a = {eb, mb, bias, nan, is_signed,
                                   k == SW_NUM_COMPLEX ? Py_True : Py_False};
        if (sw_numinfo_derive_float_args(f, &a, func) < 0) {
            return -1;
        }
    }
    else {
        PyObject *float_params[] = {eb, mb, bias};
        static const char *const names[] = {"exponent_bits", "mantissa_bits", "bias"};
        int i;

        for (i = 0; i < 3; i++) {
            if (float_params[i] != NULL && float_params[i] != Py_None) {
                return sw_structure_refuse(PyExc_ValueError, float_params[i],
                                         "%s: %s must be None for an integer "
                                         "or boolean record, got ", func,
                                         names[i]);
            }
        }
        if (nan != NULL && nan != Py_None
            && sw_numinfo_choice(nan, sw_numinfo_nan_names, SW_NAN_COUNT, func,
                                 "nan_encoding", SW_NUMINFO_NANS) != SW_NAN_NONE) {
            if (!PyErr_Occurred()) {
                sw_structure_refuse(PyExc_ValueError, nan,
                                  "%s: nan_encoding must be 'none' for an "
                                  "integer or boolean record, got ", func);
            }
            return -1;
        }
        if (k == SW_NUM_BOOL && signed_flag) {
            PyErr_Format(PyExc_ValueError,
                         "%s: a boolean record is not signed, got signed=True",
                         func);
            return -1;
        }
        sw_numinfo_derive_int(f, width, signed_flag, k);
    }
    if (f->bits != width) {
        PyErr_Format(PyExc_ValueError,
                     "%s: bits=%d contradicts the format's parameters, which "
                     "give %d", func, width, f->bits);
        return -1;
    }
    return 0;
}

/* 0 when the given value of field `name` (NULL: not given) equals the
 * derived one, else -1 with ValueError.  Only exact ints, floats and
 * bools are compared, so no user __eq__ runs. */
static int
sw_numinfo_check_field(PyObject *given, PyObject *derived, const char *name)
{
    int eq = 0;

    if (given == NULL || given == derived) {
        return 0;
    }
    if (PyLong_CheckExact(given) || PyFloat_CheckExact(given)
        || PyBool_Check(given)) {
        if (PyBool_Check(given) == PyBool_Check(derived)) {
            eq = PyObject_RichCompareBool(given, derived, Py_EQ);
            if (eq < 0) {
                return -1;
            }
        }
    }
    if (!eq) {
        PyObject *shown = sw_structure_value_text(given);

        if (shown != NULL) {
            PyErr_Format(PyExc_ValueError,
                         "NumericInfo: %s=%U contradicts the format's "
                         "parameters, which give %R", name, shown, derived);
            Py_DECREF(shown);
        }
        return -1;
    }
    return 0;
}

/* NumericInfo(*, kind, encoding, bits, signed, min, max, ...): every
 * field, as the repr shows them.  The fields that define the format are
 * taken; every other one must agree with what they imply. */
static PyObject *
sw_numinfo_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"kind", "encoding", "bits", "signed", "min", "max",
                             "exponent_bits", "mantissa_bits", "bias",
                             "smallest_normal", "smallest_subnormal", "eps",
                             "has_inf", "has_nan", "nan_encoding", NULL};
    const char *func = "NumericInfo";
    PyObject *v[15] = {NULL};
    PyObject *record = NULL, *flag = NULL;
    sw_numinfo *r;
    sw_numeric_format f;
    int k, i, nan_index = SW_NAN_NONE;

    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|$OOOOOOOOOOOOOOO:NumericInfo",
                                     kwlist, &v[0], &v[1], &v[2], &v[3], &v[4],
                                     &v[5], &v[6], &v[7], &v[8], &v[9], &v[10],
                                     &v[11], &v[12], &v[13], &v[14])) {
        return NULL;
    }
    for (i = 0; i < 6; i++) {
        if (v[i] == NULL) {
            PyErr_Format(PyExc_TypeError,
                         "NumericInfo: missing required keyword argument '%s'",
                         kwlist[i]);
            return NULL;
        }
    }
    k = sw_numinfo_choice(v[0], sw_numinfo_kind_names, SW_NUM_KIND_COUNT,
                          func, "kind", SW_NUMINFO_KINDS);
    if (k < 0 || sw_numinfo_check_encoding(v[1], func) < 0) {
        return NULL;
    }
    if (v[14] != NULL) {
        nan_index = sw_numinfo_choice(v[14], sw_numinfo_nan_names, SW_NAN_COUNT,
                                      func, "nan_encoding", SW_NUMINFO_NANS);
        if (nan_index < 0) {
            return NULL;
        }
    }
    if (v[13] != NULL && PyBool_Check(v[13])
        && (v[13] == Py_True) != (nan_index != SW_NAN_NONE)) {
        sw_structure_refuse(PyExc_ValueError, v[14] != NULL ? v[14] : Py_None,
                          "NumericInfo: has_nan=%R contradicts nan_encoding=",
                          v[13]);
        return NULL;
    }
    if ((k == SW_NUM_FLOAT || k == SW_NUM_COMPLEX) && v[14] == NULL) {
        PyErr_SetString(PyExc_TypeError,
                        "NumericInfo: a floating-point record needs nan_encoding");
        return NULL;
    }
    if (sw_numinfo_derive_kind(&f, k, v[2], v[3], v[6], v[7], v[8], v[14],
                               func) < 0) {
        return NULL;
    }
    record = sw_numinfo_make(type, &f, v[1]);
    if (record == NULL) {
        return NULL;
    }
    r = (sw_numinfo *)record;
    if (sw_numinfo_check_field(v[4], r->min, "min") < 0
        || sw_numinfo_check_field(v[5], r->max, "max") < 0
        || sw_numinfo_check_field(v[9], r->smallest_normal, "smallest_normal") < 0
        || sw_numinfo_check_field(v[10], r->smallest_subnormal,
                                  "smallest_subnormal") < 0
        || sw_numinfo_check_field(v[11], r->eps, "eps") < 0) {
        goto error;
    }
    flag = PyBool_FromLong(f.has_inf);
    if (sw_numinfo_check_field(v[12], flag, "has_inf") < 0) {
        goto error;
    }
    Py_SETREF(flag, PyBool_FromLong(f.has_nan));
    if (sw_numinfo_check_field(v[13], flag, "has_nan") < 0) {
        goto error;
    }
    Py_DECREF(flag);
    return record;
error:
    Py_XDECREF(flag);
    Py_DECREF(record);
    return NULL;
}

/* NumericInfo._from_params(kind, encoding, bits, signed, exponent_bits,
 * mantissa_bits, bias, nan_encoding): what a pickle calls. */
static PyObject *
sw_numinfo_from_params(PyObject *type, PyObject *args)
{
    const char *func = "NumericInfo._from_params";
    PyObject *kind, *encoding, *bits, *is_signed, *eb, *mb, *bias, *nan;
    sw_numeric_format f;
    int k;

    if (!PyArg_UnpackTuple(args, "_from_params", 8, 8, &kind, &encoding, &bits,
                           &is_signed, &eb, &mb, &bias, &nan)) {
        return NULL;
    }
    k = sw_numinfo_choice(kind, sw_numinfo_kind_names, SW_NUM_KIND_COUNT,
                          func, "kind", SW_NUMINFO_KINDS);
    if (k < 0 || sw_numinfo_check_encoding(encoding, func) < 0
        || sw_numinfo_derive_kind(&f, k, bits, is_signed, eb, mb, bias, nan,
                                  func) < 0) {
        return NULL;
    }
    return sw_numinfo_make((PyTypeObject *)type, &f, encoding);
}

/* ---- the record's protocols ---------------------------------------------- */

/* The names of the canonical fields, in their order (sw_numinfo_fields). */
const char *const sw_numinfo_field_names[SW_NUMINFO_NFIELDS] = {
    "kind", "encoding", "bits", "signed", "exponent_bits", "mantissa_bits",
    "bias", "nan_encoding",
};

/* The record's canonical fields, what equality compares and every other
 * field derives from (new tuple): (kind, encoding, bits, signed,
 * exponent_bits, mantissa_bits, bias, nan_encoding), exact str, int, bool
 * and None (the float fields of an integer or boolean record).  Its
 * pickle's arguments, and what a descriptor's pickle carries. */
PyObject *
sw_numinfo_fields(sw_numinfo *r)
{
    const sw_numeric_format *f = &r->fmt;

    if (f->kind == SW_NUM_FLOAT || f->kind == SW_NUM_COMPLEX) {
        return Py_BuildValue("(OOiOiiiO)", r->kind_name, r->encoding, f->bits,
                             f->is_signed ? Py_True : Py_False,
                             f->exponent_bits, f->mantissa_bits, f->bias,
                             r->nan_name);
    }
    return Py_BuildValue("(OOiOOOOO)", r->kind_name, r->encoding, f->bits,
                         f->is_signed ? Py_True : Py_False,
                         Py_None, Py_None, Py_None, r->nan_name);
}

static PyObject *
sw_numinfo_reduce(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    PyObject *from_params, *fields, *result = NULL;

    from_params = PyObject_GetAttrString((PyObject *)Py_TYPE(self), "_from_params");
    if (from_params == NULL) {
        return NULL;
    }
    fields = sw_numinfo_fields((sw_numinfo *)self);
    if (fields != NULL) {
        result = PyTuple_Pack(2, from_params, fields);
        Py_DECREF(fields);
    }
    Py_DECREF(from_params);
    return result;
}

/* 1 when two records describe the same format under the same name: every
 * other field is derived from these. */
int
sw_numinfo_equal(sw_numinfo *a, sw_numinfo *b)
{
    const sw_numeric_format *x = &a->fmt, *y = &b->fmt;

    return x->kind == y->kind && x->bits == y->bits
           && x->is_signed == y->is_signed
           && x->exponent_bits == y->exponent_bits
           && x->mantissa_bits == y->mantissa_bits && x->bias == y->bias
           && x->nan_encoding == y->nan_encoding
           && PyUnicode_Compare(a->encoding, b->encoding) == 0;   /* exact str */
}

static PyObject *
sw_numinfo_richcompare(PyObject *self, PyObject *other, int op)
{
    int eq;

    if ((op != Py_EQ && op != Py_NE) || !Py_IS_TYPE(other, Py_TYPE(self))) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    eq = sw_numinfo_equal((sw_numinfo *)self, (sw_numinfo *)other);
    if (PyErr_Occurred()) {
        return NULL;
    }
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static Py_hash_t
sw_numinfo_hash(PyObject *self)
{
    sw_numinfo *r = (sw_numinfo *)self;
    const sw_numeric_format *f = &r->fmt;
    PyObject *key;
    Py_hash_t h;

    key = Py_BuildValue("(iiiiiiiO)", f->kind, f->bits, f->is_signed,
                        f->exponent_bits, f->mantissa_bits, f->bias,
                        f->nan_encoding, r->encoding);
    if (key == NULL) {
        return -1;
    }
    h = PyObject_Hash(key);     /* ints and an exact str */
    Py_DECREF(key);
    return h;
}

static PyObject *
sw_numinfo_repr(PyObject *self)
{
    sw_numinfo *r = (sw_numinfo *)self;
    const sw_numeric_format *f = &r->fmt;
    int is_float = f->kind == SW_NUM_FLOAT || f->kind == SW_NUM_COMPLEX;
    PyObject *eb, *mb, *bias, *result = NULL;

    eb = is_float ? PyLong_FromLong(f->exponent_bits) : Py_NewRef(Py_None);
    mb = is_float ? PyLong_FromLong(f->mantissa_bits) : Py_NewRef(Py_None);
    bias = is_float ? PyLong_FromLong(f->bias) : Py_NewRef(Py_None);
    if (eb != NULL && mb != NULL && bias != NULL) {
        /* Every field holds an exact str, int, float, bool or None. */
        result = PyUnicode_FromFormat(
            "NumericInfo(kind=%R, encoding=%R, bits=%d, signed=%s, min=%R, "
            "max=%R, exponent_bits=%R, mantissa_bits=%R, bias=%R, "
            "smallest_normal=%R, smallest_subnormal=%R, eps=%R, has_inf=%s, "
            "has_nan=%s, nan_encoding=%R)",
            r->kind_name, r->encoding, f->bits,
            f->is_signed ? "True" : "False", r->min, r->max, eb, mb, bias,
            r->smallest_normal, r->smallest_subnormal, r->eps,
            f->has_inf ? "True" : "False", f->has_nan ? "True" : "False",
            r->nan_name);
    }
    Py_XDECREF(eb);
    Py_XDECREF(mb);
    Py_XDECREF(bias);
    return result;
}

static void
sw_numinfo_dealloc(PyObject *self)
{
    sw_numinfo *r = (sw_numinfo *)self;
    PyTypeObject *tp = Py_TYPE(self);

    Py_CLEAR(r->encoding);
    Py_CLEAR(r->kind_name);
    Py_CLEAR(r->nan_name);
    Py_CLEAR(r->min);
    Py_CLEAR(r->max);
    Py_CLEAR(r->smallest_normal);
    Py_CLEAR(r->smallest_subnormal);
    Py_CLEAR(r->eps);
    tp->tp_free(self);
    Py_DECREF(tp);
}

/* ---- fields ---------------------------------------------------------------- */

/* Which field a getter reads. */
typedef enum {
    SW_NUMINFO_F_BITS,
    SW_NUMINFO_F_SIGNED,
    SW_NUMINFO_F_EXPONENT_BITS,
    SW_NUMINFO_F_MANTISSA_BITS,
    SW_NUMINFO_F_BIAS,
    SW_NUMINFO_F_HAS_INF,
    SW_NUMINFO_F_HAS_NAN,
} sw_numinfo_field;

static PyObject *
sw_numinfo_get_number(PyObject *self, void *closure)
{
    const sw_numeric_format *f = &((sw_numinfo *)self)->fmt;
    int is_float = f->kind == SW_NUM_FLOAT || f->kind == SW_NUM_COMPLEX;

    switch ((sw_numinfo_field)(intptr_t)closure) {
    case SW_NUMINFO_F_BITS:
        return PyLong_FromLong(f->bits);
    case SW_NUMINFO_F_SIGNED:
        return PyBool_FromLong(f->is_signed);
    case SW_NUMINFO_F_EXPONENT_BITS:
        return is_float ? PyLong_FromLong(f->exponent_bits) : Py_NewRef(Py_None);
    case SW_NUMINFO_F_MANTISSA_BITS:
        return is_float ? PyLong_FromLong(f->mantissa_bits) : Py_NewRef(Py_None);
    case SW_NUMINFO_F_BIAS:
        return is_float ? PyLong_FromLong(f->bias) : Py_NewRef(Py_None);
    case SW_NUMINFO_F_HAS_INF:
        return PyBool_FromLong(f->has_inf);
    case SW_NUMINFO_F_HAS_NAN:
        return PyBool_FromLong(f->has_nan);
    }
    Py_UNREACHABLE();
}

/* The getter of an object field at offset `closure` of sw_numinfo. */
static PyObject *
sw_numinfo_get_object(PyObject *self, void *closure)
{
    return Py_NewRef(*(PyObject **)((char *)self + (size_t)closure));
}

static PyGetSetDef sw_numinfo_getset[] = {
    {"kind", sw_numinfo_get_object, NULL,
     PyDoc_STR("'float', 'complex', 'int' or 'bool'."),
     (void *)offsetof(sw_numinfo, kind_name)},
    {"encoding", sw_numinfo_get_object, NULL,
     PyDoc_STR("The format's name ('ieee754_binary32', 'float8_e4m3fn', "
               "'int8', ...)."),
     (void *)offsetof(sw_numinfo, encoding)},
    {"bits", sw_numinfo_get_number, NULL,
     PyDoc_STR("Width of one value (a complex value: both components)."),
     (void *)(intptr_t)SW_NUMINFO_F_BITS},
    {"signed", sw_numinfo_get_number, NULL,
     PyDoc_STR("Whether the format has negative values."),
     (void *)(intptr_t)SW_NUMINFO_F_SIGNED},
    {"min", sw_numinfo_get_object, NULL,
     PyDoc_STR("The most negative finite value; for an unsigned format, "
               "its smallest value (zero where it has one)."),
     (void *)offsetof(sw_numinfo, min)},
    {"max", sw_numinfo_get_object, NULL,
     PyDoc_STR("The largest finite value."),
     (void *)offsetof(sw_numinfo, max)},
    {"exponent_bits", sw_numinfo_get_number, NULL,
     PyDoc_STR("Exponent field width (None for integers and booleans)."),
     (void *)(intptr_t)SW_NUMINFO_F_EXPONENT_BITS},
    {"mantissa_bits", sw_numinfo_get_number, NULL,
     PyDoc_STR("Stored fraction bits, without the implicit bit (None "
               "for integers and booleans)."),
     (void *)(intptr_t)SW_NUMINFO_F_MANTISSA_BITS},
    {"bias", sw_numinfo_get_number, NULL,
     PyDoc_STR("Exponent bias (None for integers and booleans)."),
     (void *)(intptr_t)SW_NUMINFO_F_BIAS},
    {"smallest_normal", sw_numinfo_get_object, NULL,
     PyDoc_STR("The smallest positive normal value, 2**(1 - bias) "
               "(2**-bias without a zero); a format with no normal "
               "value (one exponent bit, 'ieee') reports the bound its "
               "subnormals stay below (None for integers and booleans)."),
     (void *)offsetof(sw_numinfo, smallest_normal)},
    {"smallest_subnormal", sw_numinfo_get_object, NULL,
     PyDoc_STR("The smallest positive value; equals smallest_normal for "
               "a format without subnormals (None for integers and "
               "booleans)."),
     (void *)offsetof(sw_numinfo, smallest_subnormal)},
    {"eps", sw_numinfo_get_object, NULL,
     PyDoc_STR("The distance from 1.0 to the next larger value where "
               "1.0 is a value below the largest, else 2**-mantissa_bits "
               "(None for integers and booleans)."),
     (void *)offsetof(sw_numinfo, eps)},
    {"has_inf", sw_numinfo_get_number, NULL,
     PyDoc_STR("Whether the format has infinities."),
     (void *)(intptr_t)SW_NUMINFO_F_HAS_INF},
    {"has_nan", sw_numinfo_get_number, NULL,
     PyDoc_STR("Whether the format has a NaN."),
     (void *)(intptr_t)SW_NUMINFO_F_HAS_NAN},
    {"nan_encoding", sw_numinfo_get_object, NULL,
     PyDoc_STR("How NaN is encoded: 'ieee', 'all_ones', "
               "'negative_zero' or 'none'."),
     (void *)offsetof(sw_numinfo, nan_name)},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef sw_numinfo_type_methods[] = {
    {"floating", SW_CFUNC(sw_numinfo_floating),
     METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     PyDoc_STR("floating($type, /, encoding, *, exponent_bits, mantissa_bits, "
               "bias, nan_encoding, signed=True, complex=False)\n--\n\n"
               "The record of a binary floating-point format.\n\n"
               "nan_encoding also fixes which patterns are finite: 'ieee' "
               "reserves the all-ones exponent for infinities and NaNs "
               "(mantissa_bits >= 1); 'all_ones' reserves only the all-ones "
               "pattern (no infinities); 'negative_zero' (signed formats "
               "only) and 'none' leave every exponent finite (no "
               "infinities).  An unsigned format with no mantissa bits "
               "(e8m0fnu) has no zero and no subnormals; an unsigned format "
               "with mantissa bits has zero as its smallest value.  With one "
               "exponent bit and 'ieee', the finite values are the "
               "subnormals alone (field 1 is the infinities and NaNs); a "
               "signed 'all_ones' format with one exponent bit and no "
               "mantissa bits, whose only finite value would be zero, is "
               "refused.  With "
               "complex=True the record describes a complex number of two "
               "such components.  The format's values must all be float64 "
               "values: at most 11 exponent and 52 mantissa bits.")},
    {"integer", SW_CFUNC(sw_numinfo_integer),
     METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     PyDoc_STR("integer($type, /, bits, *, signed)\n--\n\n"
               "The record of a bits-wide integer: two's complement when "
               "signed, plain binary otherwise.")},
    {"boolean", SW_CFUNC(sw_numinfo_boolean),
     METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     PyDoc_STR("boolean($type, /, bits=8)\n--\n\n"
               "The record of a boolean stored in bits bits, 0 (false) or 1 "
               "(true).")},
    {"_from_params", SW_CFUNC(sw_numinfo_from_params), METH_VARARGS | METH_CLASS,
     PyDoc_STR("_from_params($type, kind, encoding, bits, signed, exponent_bits, "
               "mantissa_bits, bias, nan_encoding, /)\n--\n\n"
               "Rebuild a record from the fields that define it (pickling).")},
    {"__reduce__", sw_numinfo_reduce, METH_NOARGS,
     PyDoc_STR("__reduce__($self, /)\n--\n\nPickle by the defining fields.")},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot sw_numinfo_slots[] = {
    {Py_tp_doc, (void *)PyDoc_STR(
        "NumericInfo(*, kind, encoding, bits, signed, min, max, "
        "exponent_bits=None, mantissa_bits=None, bias=None, "
        "smallest_normal=None, smallest_subnormal=None, eps=None, "
        "has_inf=False, has_nan=False, nan_encoding='none')\n--\n\n"
        "What a simple dtype's bits mean: an immutable record, compared and "
        "hashed by value.\n\n"
        "kind is 'float', 'complex', 'int' or 'bool'; encoding names the "
        "format ('ieee754_binary32', 'float8_e4m3fn', 'int8', ...); bits is "
        "the width of one value.  min and max are the most negative (for an "
        "unsigned format: the smallest) and the largest finite values.\n\n"
        "The floating-point fields (exponent_bits, mantissa_bits (stored "
        "fraction bits, without the implicit bit), bias, smallest_normal, "
        "smallest_subnormal, eps) are None for integers and booleans.  A "
        "complex record describes each of its two components in those "
        "fields, while bits is the whole value's width.\n\n"
        "Every value is derived from the format's parameters (kind, bits, "
        "signed, and for floats exponent_bits, mantissa_bits, bias and "
        "nan_encoding).  Build records with floating(), integer() and "
        "boolean(); the keyword constructor takes the fields a repr shows "
        "and refuses any that contradicts the parameters (ValueError).")},
    {Py_tp_new, sw_numinfo_new},
    {Py_tp_repr, sw_numinfo_repr},
    {Py_tp_richcompare, sw_numinfo_richcompare},
    {Py_tp_hash, sw_numinfo_hash},
    {Py_tp_getset, sw_numinfo_getset},
    {Py_tp_methods, sw_numinfo_type_methods},
    {Py_tp_dealloc, sw_numinfo_dealloc},
    {0, NULL},
};

/* Final (no Py_TPFLAGS_BASETYPE): a subclass could redefine equality or
 * add an instance dict.  Not collected: it references no container. */
static PyType_Spec sw_numinfo_spec = {
    .name = "stride_weave.numerics.NumericInfo",
    .basicsize = sizeof(sw_numinfo),
    .itemsize = 0,
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = sw_numinfo_slots,
};

int
sw_numinfo_create_type(PyObject *module, sw_state *st)
{
    st->numinfo_type = (PyTypeObject *)PyType_FromModuleAndSpec(
        module, &sw_numinfo_spec, NULL);
    return st->numinfo_type ? 0 : -1;
}
