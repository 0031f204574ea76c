/* numrecords.c: the numeric records of simple dtypes.
 *
 * Owns attaching a NumericInfo (numinfo.c) to a simple dtype, once and for
 * good; the queries stride_weave.numerics re-exports (numeric_info, finfo,
 * iinfo, register_numeric_info); and the records of the built-in simple
 * dtypes, attached when the graph is built, so the core knows what every
 * built-in means whether or not stride_weave.numerics is imported.
 *
 * A simple descriptor's record lives in its `numeric` field: set once,
 * with a compare-and-swap on free-threaded builds, and never replaced, so
 * readers (the casting rules, the promotion lattice, the codecs) use it
 * without a lock.
 */
#include "numinfo.h"

/* `obj` as a finished simple descriptor of `st`'s graph (borrowed), or
 * NULL with TypeError naming `func`. */
static sw_descriptor *
sw_numrecords_simple(sw_state *st, PyObject *obj, const char *func)
{
    if (sw_is_kind(st, obj, SW_KIND_SIMPLE)
        && SW_LOAD_FLAG(((sw_descriptor *)obj)->build_state) == SW_FINISHED) {
        return (sw_descriptor *)obj;
    }
    if (sw_is_kind(st, obj, SW_KIND_BLOCK_SCALED)
        && SW_LOAD_FLAG(((sw_descriptor *)obj)->build_state) == SW_FINISHED) {
        PyErr_Format(PyExc_TypeError,
                     "%s: dtype must be a registered SimpleDType, got the "
                     "block-scaled %R (its element and each level's scale "
                     "have records)", func, obj);
        return NULL;
    }
    PyErr_Format(PyExc_TypeError,
                 "%s: dtype must be a registered SimpleDType, got %R", func, obj);
    return NULL;
}

/* Attach `record` to `d` unless it has one: 0 when `record` (or an equal
 * one) is its record, else -1 with ValueError.  Runs no Python code
 * between the check and the store; free-threaded builds publish with a
 * compare-and-swap, so racing declarations keep exactly one record. */
static int
sw_numrecords_attach(sw_descriptor *d, PyObject *record)
{
    PyObject *existing;

    Py_INCREF(record);      /* the reference the descriptor will own */
    existing = NULL;
    if (SW_CAS(d->numeric, existing, record)) {
        return 0;
    }
    Py_DECREF(record);      /* the caller still holds it: not the last */
    if (sw_numinfo_equal((sw_numinfo *)existing, (sw_numinfo *)record)) {
        return 0;
    }
    PyErr_Format(PyExc_ValueError,
                 "register_numeric_info: %U already has the record %R; got a "
                 "different one, %R", d->name, existing, record);
    return -1;
}

static PyObject *
sw_numrecords_register(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    const char *func = "register_numeric_info";
    sw_state *st = sw_state_of_module(module);
    sw_descriptor *d;
    sw_numinfo *record;
    int overflow;
    long bits;

    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError,
                     "%s() takes exactly 2 arguments (%zd given)", func, nargs);
        return NULL;
    }
    d = sw_numrecords_simple(st, args[0], func);
    if (d == NULL) {
        return NULL;
    }
    if (!Py_IS_TYPE(args[1], st->numinfo_type)) {
        PyErr_Format(PyExc_TypeError, "%s: record must be a NumericInfo, got %R",
                     func, args[1]);
        return NULL;
    }
    record = (sw_numinfo *)args[1];
    bits = PyLong_AsLongAndOverflow(d->bits, &overflow);   /* exact int */
    if (bits == -1 && overflow == 0 && PyErr_Occurred()) {
        return NULL;
    }
    if (overflow != 0 || bits != record->fmt.bits) {
        PyErr_Format(PyExc_ValueError,
                     "%s: record.bits must equal the width of %U (%S), got %d",
                     func, d->name, d->bits, record->fmt.bits);
        return NULL;
    }
    if (sw_numrecords_attach(d, args[1]) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

/* The record of the simple dtype `obj` (new reference), or NULL with
 * TypeError (not a registered simple dtype) or LookupError (no record);
 * with `kinds` a mask of 1 << sw_num_kind, a record of another kind is a
 * TypeError suggesting `other`. */
static PyObject *
sw_numrecords_query(PyObject *module, PyObject *obj, const char *func,
                 unsigned kinds, const char *expected, const char *other)
{
    sw_state *st = sw_state_of_module(module);
    sw_descriptor *d = sw_numrecords_simple(st, obj, func);
    PyObject *record;
    sw_numinfo *r;

    if (d == NULL) {
        return NULL;
    }
    record = SW_LOAD_PTR(d->numeric);
    if (record == NULL) {
        PyErr_Format(PyExc_LookupError,
                     "%s: no numeric record is registered for %U "
                     "(register_numeric_info attaches one)", func, d->name);
        return NULL;
    }
    r = (sw_numinfo *)record;
    if (!(kinds & (1u << r->fmt.kind))) {
        PyErr_Format(PyExc_TypeError,
                     "%s: expected %s dtype, got %U, whose kind is %R (use %s "
                     "or numeric_info)", func, expected, d->name, r->kind_name,
                     other);
        return NULL;
    }
    return Py_NewRef(record);
}

static PyObject *
sw_numrecords_numeric_info(PyObject *module, PyObject *obj)
{
    return sw_numrecords_query(module, obj, "numeric_info", ~0u, "", "");
}

static PyObject *
sw_numrecords_finfo(PyObject *module, PyObject *obj)
{
    return sw_numrecords_query(module, obj, "finfo",
                            (1u << SW_NUM_FLOAT) | (1u << SW_NUM_COMPLEX),
                            "a floating-point", "iinfo");
}

static PyObject *
sw_numrecords_iinfo(PyObject *module, PyObject *obj)
{
    return sw_numrecords_query(module, obj, "iinfo", 1u << SW_NUM_INT,
                            "an integer", "finfo");
}

PyMethodDef sw_numrecords_methods[] = {
    {"numeric_info", sw_numrecords_numeric_info, METH_O,
     PyDoc_STR("numeric_info(dtype, /)\n--\n\n"
               "The numeric record of a simple dtype.\n\n"
               "TypeError when dtype is not a registered SimpleDType (a "
               "block-scaled format's element and scales are simple dtypes: "
               "query those); LookupError when no record was registered for "
               "it.")},
    {"finfo", sw_numrecords_finfo, METH_O,
     PyDoc_STR("finfo(dtype, /)\n--\n\n"
               "The record of a floating-point (or complex) simple dtype, "
               "like numpy.finfo.  TypeError for an integer or boolean "
               "dtype; LookupError when it has no record.")},
    {"iinfo", sw_numrecords_iinfo, METH_O,
     PyDoc_STR("iinfo(dtype, /)\n--\n\n"
               "The record of an integer simple dtype, like numpy.iinfo.  "
               "TypeError for a floating-point or boolean dtype; LookupError "
               "when it has no record.")},
    {"register_numeric_info", SW_CFUNC(sw_numrecords_register), METH_FASTCALL,
     PyDoc_STR("register_numeric_info(dtype, record, /)\n--\n\n"
               "Attach record to the simple dtype dtype, for good.\n\n"
               "record.bits must equal dtype.bits.  Declaring the same "
               "(equal) record again is harmless; a different record for a "
               "dtype that already has one is a ValueError, and leaves the "
               "existing record in place.  Thread-safe.")},
    {NULL, NULL, 0, NULL},
};

/* ---- the built-in records ------------------------------------------------- */

typedef struct {
    const char *name;       /* the built-in simple dtype */
    const char *encoding;
    int kind;
    int bits;               /* integers and booleans */
    int is_signed;
    int exponent_bits, mantissa_bits, bias, nan_encoding;   /* floats */
} sw_numrecords_builtin;

/* The meaning of the built-in formats: IEEE 754 binary32/64, two's
 * complement Int8/Int32, a one-byte Bool, and the OCP Microscaling (MX)
 * v1.0 element and scale formats. */
static const sw_numrecords_builtin sw_numrecords_builtins[] = {
    {"Bool", "bool8", SW_NUM_BOOL, 8, 0, 0, 0, 0, SW_NAN_NONE},
    {"Int8", "int8", SW_NUM_INT, 8, 1, 0, 0, 0, SW_NAN_NONE},
    {"Int32", "int32", SW_NUM_INT, 32, 1, 0, 0, 0, SW_NAN_NONE},
    {"Float32", "ieee754_binary32", SW_NUM_FLOAT, 0, 1, 8, 23, 127, SW_NAN_IEEE},
    {"Float64", "ieee754_binary64", SW_NUM_FLOAT, 0, 1, 11, 52, 1023, SW_NAN_IEEE},
    {"E8M0", "float8_e8m0fnu", SW_NUM_FLOAT, 0, 0, 8, 0, 127, SW_NAN_ALL_ONES},
    {"E5M2", "float8_e5m2", SW_NUM_FLOAT, 0, 1, 5, 2, 15, SW_NAN_IEEE},
    {"E4M3", "float8_e4m3fn", SW_NUM_FLOAT, 0, 1, 4, 3, 7, SW_NAN_ALL_ONES},
    {"E3M2", "float6_e3m2fn", SW_NUM_FLOAT, 0, 1, 3, 2, 3, SW_NAN_NONE},
    {"E2M3", "float6_e2m3fn", SW_NUM_FLOAT, 0, 1, 2, 3, 1, SW_NAN_NONE},
    {"E2M1", "float4_e2m1fn", SW_NUM_FLOAT, 0, 1, 2, 1, 1, SW_NAN_NONE},
    {NULL, NULL, 0, 0, 0, 0, 0, 0, 0},
};

/* Attach the built-in records (module initialization): 0, or -1. */
int
sw_numrecords_install_builtins(sw_state *st)
{
    const sw_numrecords_builtin *b;

    for (b = sw_numrecords_builtins; b->name != NULL; b++) {
        sw_numeric_format f;
        PyObject *dtype = NULL, *encoding = NULL, *record = NULL;
        int status = -1;

        if (b->kind == SW_NUM_FLOAT) {
            if (sw_numinfo_derive_float(&f, b->exponent_bits, b->mantissa_bits,
                                        b->bias, b->nan_encoding, b->is_signed,
                                        0, "NumericInfo.floating") < 0) {
                return -1;
            }
        }
        else {
            sw_numinfo_derive_int(&f, b->bits, b->is_signed, b->kind);
        }
        dtype = PyObject_GetAttrString((PyObject *)st->dtype_type, b->name);
        encoding = PyUnicode_FromString(b->encoding);
        if (dtype != NULL && encoding != NULL) {
            record = sw_numinfo_make(st->numinfo_type, &f, encoding);
        }
        if (record != NULL && sw_is_kind(st, dtype, SW_KIND_SIMPLE)) {
            status = sw_numrecords_attach((sw_descriptor *)dtype, record);
        }
        else if (record != NULL) {
            PyErr_Format(PyExc_SystemError, "built-in %s is not a simple dtype",
                         b->name);
        }
        Py_XDECREF(dtype);
        Py_XDECREF(encoding);
        Py_XDECREF(record);
        if (status < 0) {
            return -1;
        }
    }
    return 0;
}
