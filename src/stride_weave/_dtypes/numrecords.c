/* numrecords.c: the numeric records of simple dtypes.
 *
 * Owns attaching a NumericInfo (numinfo.c) to a simple dtype, once and for
 * good; the one rule by which another definition of it (a pickle loaded,
 * ensure() of its name) must agree with that record; the queries
 * stride_weave.numerics re-exports (numeric_info, finfo, iinfo,
 * register_numeric_info); and the records of the built-in simple dtypes,
 * attached when the graph is built, so the core knows what every built-in
 * means whether or not stride_weave.numerics is imported.
 *
 * A simple descriptor's record lives in its `numeric` field: set once,
 * with a compare-and-swap on free-threaded builds, and never replaced, so
 * readers (the casting rules, the promotion lattice, the codecs) use it
 * without a lock.
 */
#include "numinfo.h"
#include "structure.h"

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
    if (PyObject_TypeCheck(obj, st->base_type)) {
        /* A descriptor's repr is the model's own. */
        PyErr_Format(PyExc_TypeError,
                     "%s: dtype must be a registered SimpleDType, got %R",
                     func, obj);
    }
    else {
        sw_structure_refuse(PyExc_TypeError, obj,
                            "%s: dtype must be a registered SimpleDType, got ", func);
    }
    return NULL;
}

/* Attach `record` to `d`, named `name`, unless it has one: 0 when
 * `record` (or an equal one) is its record, else -1 with ValueError.
 * Runs no Python code
 * between the check and the store; free-threaded builds publish with a
 * compare-and-swap, so racing declarations keep exactly one record, and a
 * descriptor settled without a record (sw_numrecords_settle) gets none. */
static int
sw_numrecords_attach(sw_descriptor *d, PyObject *name, PyObject *record,
                     const char *func)
{
    PyObject *existing;

    Py_INCREF(record);      /* the reference the descriptor will own */
    existing = NULL;
    if (SW_CAS(d->numeric, existing, record)) {
        return 0;
    }
    Py_DECREF(record);      /* the caller still holds it: not the last */
    if (existing == Py_None) {
        PyErr_Format(PyExc_ValueError,
                     "%s: %U has no numeric record for good: an answer "
                     "about it was already given without one (isdtype, "
                     "can_cast, result_type with a Python scalar, or a "
                     "lattice's edge or scalar default), or it was pickled "
                     "(or a pickle of it loaded) stating no record, and a "
                     "record now could change that (give the record when the "
                     "dtype is created: SimpleDType(..., numeric_info=record)); "
                     "got %R",
                     func, name, record);
        return -1;
    }
    if (sw_numinfo_equal((sw_numinfo *)existing, (sw_numinfo *)record)) {
        return 0;
    }
    PyErr_Format(PyExc_ValueError,
                 "%s: %U already has the record %R; got a different one, %R",
                 func, name, existing, record);
    return -1;
}

/* Settle what simple descriptor `d` means to the relations: when it has
 * no record now, it never gets one (numeric becomes None), so an answer
 * given from its category stays the answer.  Its record, or NULL.  Runs
 * no Python code. */
const sw_numeric_format *
sw_numrecords_settle(sw_descriptor *d)
{
    PyObject *expected = NULL;

    if (SW_LOAD_PTR(d->numeric) == NULL) {
        Py_INCREF(Py_None);
        if (!SW_CAS(d->numeric, expected, Py_None)) {
            Py_DECREF(Py_None);     /* a record (or None) came first */
        }
    }
    return sw_numinfo_format_of(d);
}

/* ---- the record as part of a definition ------------------------------------
 *
 * A record is part of what a simple dtype is, so wherever a definition
 * meets the registered one (a pickle loaded, ensure() of a registered
 * name) the records are compared by one rule, sw_numrecords_match.  What
 * the other side says is "stated": a record's canonical fields
 * (sw_numinfo_fields), None (it has no record), or nothing (NULL: a pickle
 * of a release that did not carry records, or ensure() without
 * numeric_info), which leaves the registered record as it is.
 */

/* What a pickle of `d` states (new ref): its record's canonical fields,
 * or None.  `d` is settled first: a pickle that says "no record" is an
 * answer given from having none, so `d` keeps none for good and no later
 * record makes that pickle (or a process that loaded it) wrong. */
PyObject *
sw_numrecords_stated(sw_descriptor *d)
{
    if (sw_numrecords_settle(d) == NULL) {
        Py_RETURN_NONE;
    }
    return sw_numinfo_fields((sw_numinfo *)SW_LOAD_PTR(d->numeric));
}

/* 0 when `stated` (untrusted) is None or a tuple of the canonical fields
 * with the types they have (exact str, int, bool or None), so comparing
 * and showing it runs no code of its items; else -1 with ValueError. */
static int
sw_numrecords_check_stated(PyObject *stated)
{
    Py_ssize_t i;

    if (stated == Py_None) {
        return 0;
    }
    if (PyTuple_CheckExact(stated) && PyTuple_GET_SIZE(stated) == SW_NUMINFO_NFIELDS) {
        for (i = 0; i < SW_NUMINFO_NFIELDS; i++) {
            PyObject *v = PyTuple_GET_ITEM(stated, i);

            if (v != Py_None && !PyBool_Check(v) && !PyLong_CheckExact(v)
                && !PyUnicode_CheckExact(v)) {
                break;
            }
        }
        if (i == SW_NUMINFO_NFIELDS) {
            return 0;
        }
        PyErr_Format(PyExc_ValueError,
                     "numeric record: its field %s is an object of "
                     "type %.200s, not an exact str, int, bool or None",
                     sw_numinfo_field_names[i],
                     Py_TYPE(PyTuple_GET_ITEM(stated, i))->tp_name);
        return -1;
    }
    PyErr_Format(PyExc_ValueError,
                 "numeric record: expected None or a tuple of the "
                 "%d fields (kind, encoding, bits, signed, exponent_bits, "
                 "mantissa_bits, bias, nan_encoding), got %.200s",
                 SW_NUMINFO_NFIELDS, Py_TYPE(stated)->tp_name);
    return -1;
}

/* 1 when two checked field values are equal with the same exact type. */
static int
sw_numrecords_field_equal(PyObject *a, PyObject *b)
{
    if (a == b) {
        return 1;
    }
    if (Py_TYPE(a) != Py_TYPE(b)) {
        return 0;
    }
    if (PyUnicode_CheckExact(a)) {
        return PyUnicode_Compare(a, b) == 0;
    }
    if (PyLong_CheckExact(a)) {
        /* Exact ints: compares without user code, and cannot fail. */
        return PyObject_RichCompareBool(a, b, Py_EQ) == 1;
    }
    return 0;       /* None, True and False are singletons */
}

/* The one rule by which the registered simple dtype `d` and a definition
 * that states `stated` (see above; untrusted) agree on the record: 0 when
 * they do, 1 when they do not with *difference a new str naming the first
 * differing field and both values ("numeric record bias: registered 8,
 * pickle has 7"; `theirs` names the other side), -1 with an exception (a
 * malformed `stated` is a ValueError).
 *
 * A record on one side and none on the other differ.  When `d` has no
 * record yet and `stated` says none, `d` is settled (it keeps none, as
 * the other side does); when `stated` is a record, `d` is left open:
 * only its defining module gives it one, and a load refused now succeeds
 * once that module has attached the same record.  Runs no Python code. */
int
sw_numrecords_match(sw_descriptor *d, PyObject *stated, const char *theirs,
                    PyObject **difference)
{
    PyObject *mine, *ours, *shown;
    Py_ssize_t i;

    *difference = NULL;
    if (stated == NULL) {
        return 0;
    }
    if (sw_numrecords_check_stated(stated) < 0) {
        return -1;
    }
    if (stated == Py_None) {
        sw_numrecords_settle(d);    /* a record that came first stays */
    }
    mine = SW_LOAD_PTR(d->numeric);
    if (mine == NULL || mine == Py_None) {
        if (stated == Py_None) {
            return 0;
        }
        /* Only exact str, int, bool and None inside: no code runs; ints
         * beyond 64 bits in hex, as a structure shows them. */
        shown = sw_structure_value_text(stated);
        if (shown == NULL) {
            return -1;
        }
        *difference = PyUnicode_FromFormat(
            "numeric record: registered none%s, %s has %U",
            mine == NULL ? " yet" : "", theirs, shown);
        Py_DECREF(shown);
        return *difference == NULL ? -1 : 1;
    }
    ours = sw_numinfo_fields((sw_numinfo *)mine);
    if (ours == NULL) {
        return -1;
    }
    if (stated == Py_None) {
        *difference = PyUnicode_FromFormat(
            "numeric record: registered %R, %s has none", ours, theirs);
        Py_DECREF(ours);
        return *difference == NULL ? -1 : 1;
    }
    for (i = 0; i < SW_NUMINFO_NFIELDS; i++) {
        PyObject *a = PyTuple_GET_ITEM(ours, i), *b = PyTuple_GET_ITEM(stated, i);

        if (!sw_numrecords_field_equal(a, b)) {
            /* Theirs may be any exact int: shown as a structure shows it. */
            shown = sw_structure_value_text(b);
            *difference = shown == NULL ? NULL : PyUnicode_FromFormat(
                "numeric record %s: registered %R, %s has %U",
                sw_numinfo_field_names[i], a, theirs, shown);
            Py_XDECREF(shown);
            break;
        }
    }
    Py_DECREF(ours);
    if (i == SW_NUMINFO_NFIELDS) {
        return 0;
    }
    return *difference == NULL ? -1 : 1;
}

/* 0 when `record` fits `d`, named `name` and `bits` wide: its width, and
 * a kind that agrees with d's category (relations.c reads kinds from the
 * category until a record comes, so a record may only refine them); else
 * -1 with ValueError.  The name and width are given: a descriptor under
 * construction has not stored them yet. */
static int
sw_numrecords_fits(sw_state *st, sw_descriptor *d, PyObject *name,
                   PyObject *bits_obj, sw_numinfo *record, const char *func)
{
    int under_int = sw_descriptor_reaches(d, st->kind_categories[0]);
    int under_float = sw_descriptor_reaches(d, st->kind_categories[1]);
    PyObject *sup = sw_descriptor_supertype(d);     /* borrowed */
    int overflow, agrees;
    long bits;

    bits = PyLong_AsLongAndOverflow(bits_obj, &overflow);   /* exact int */
    if (bits == -1 && overflow == 0 && PyErr_Occurred()) {
        return -1;
    }
    if (overflow != 0 || bits != record->fmt.bits) {
        PyErr_Format(PyExc_ValueError,
                     "%s: record.bits must equal the width of %U (%S), got %d",
                     func, name, bits_obj, record->fmt.bits);
        return -1;
    }
    switch (record->fmt.kind) {
    case SW_NUM_INT:
        agrees = under_int;
        break;
    case SW_NUM_FLOAT:
        agrees = under_float;
        break;
    default:                /* bool, complex: neither integral nor real */
        agrees = !under_int && !under_float;
        break;
    }
    if (!agrees) {
        PyErr_Format(PyExc_ValueError,
                     "%s: a record of kind %R does not agree with the category "
                     "of %U (under %U): an 'int' record needs a dtype under "
                     "Integer, a 'float' record one under Floating, a 'bool' "
                     "or 'complex' record one under neither; got %R",
                     func, record->kind_name, name,
                     sup != NULL ? ((sw_descriptor *)sup)->name : name,
                     (PyObject *)record);
        return -1;
    }
    return 0;
}

/* 0 when the running code may give `d` its first record: code of the
 * module that defined it (the module its pickle names, the same test
 * that construction recorded); else -1 with ValueError.  A key's __eq__
 * in the caller's globals may run: nothing is half-done here. */
static int
sw_numrecords_owner_check(sw_state *st, sw_descriptor *d, const char *func)
{
    PyObject *ns = sw_frame_globals(), *caller = NULL;
    int found = 0, same = 0;

    if (ns != NULL && PyDict_Check(ns)) {
        found = PyDict_GetItemRef(ns, st->idents[SW_IDENT_NAME], &caller);
    }
    Py_XDECREF(ns);
    if (found < 0) {
        return -1;
    }
    /* Both exact str: the comparison runs no Python code. */
    same = d->module != NULL && caller != NULL && PyUnicode_CheckExact(caller)
           && PyUnicode_Compare(d->module, caller) == 0;
    if (!same) {
        PyErr_Format(PyExc_ValueError,
                     "%s: only code of the module that defined %U (%R) may "
                     "give it its first record, got code of %R (the defining "
                     "module gives it, or passes numeric_info= when it "
                     "creates the dtype)", func, d->name,
                     d->module != NULL ? d->module : Py_None,
                     caller != NULL ? caller : Py_None);
    }
    Py_XDECREF(caller);
    return same ? 0 : -1;
}

/* Give `d`, a simple descriptor being constructed (not yet registered:
 * no other code can reach it), the record `record` (SimpleDType's
 * numeric_info): 0, or -1 with TypeError/ValueError. */
int
sw_numrecords_attach_new(sw_state *st, sw_descriptor *d, PyObject *name,
                         PyObject *bits, PyObject *record, const char *func)
{
    if (!Py_IS_TYPE(record, st->numinfo_type)) {
        PyErr_Format(PyExc_TypeError,
                     "%s: numeric_info must be a NumericInfo or None, got an "
                     "object of type %.200s", func, Py_TYPE(record)->tp_name);
        return -1;
    }
    if (sw_numrecords_fits(st, d, name, bits, (sw_numinfo *)record, func) < 0) {
        return -1;
    }
    return sw_numrecords_attach(d, name, record, func);
}

static PyObject *
sw_numrecords_register(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    const char *func = "register_numeric_info";
    sw_state *st = sw_state_of_module(module);
    PyObject *existing;
    sw_descriptor *d;

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
        sw_structure_refuse(PyExc_TypeError, args[1],
                            "%s: record must be a NumericInfo, got ", func);
        return NULL;
    }
    if (sw_numrecords_fits(st, d, d->name, d->bits, (sw_numinfo *)args[1],
                           func) < 0) {
        return NULL;
    }
    /* Declaring the record it has is harmless from anywhere; only the
     * defining module gives the first one. */
    existing = SW_LOAD_PTR(d->numeric);
    if ((existing == NULL || existing == Py_None
         || !sw_numinfo_equal((sw_numinfo *)existing, (sw_numinfo *)args[1]))
        && sw_numrecords_owner_check(st, d, func) < 0) {
        return NULL;
    }
    if (sw_numrecords_attach(d, d->name, args[1], func) < 0) {
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
    if (record == NULL || record == Py_None) {
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
               "record.bits must equal dtype.bits, and its kind must agree "
               "with dtype's category: an 'int' record under DType.Integer, "
               "a 'float' record under DType.Floating, a 'bool' or "
               "'complex' record under neither.  Only code of the module "
               "that defined dtype may give it its first record (or pass "
               "SimpleDType(..., numeric_info=record), which attaches it "
               "before the dtype is registered), and only before an answer "
               "about dtype was given without one (isdtype, can_cast, "
               "result_type with a Python scalar, a lattice's edge or scalar "
               "default).  Declaring "
               "the same (equal) record again is harmless, from anywhere; a "
               "different record for a dtype that already has one is a "
               "ValueError, and leaves the existing record in place.  "
               "Thread-safe.")},
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
            /* The table agrees with the built-in hierarchy (the tests
             * check every built-in's record against its category). */
            status = sw_numrecords_attach((sw_descriptor *)dtype,
                                          ((sw_descriptor *)dtype)->name,
                                          record, "built-in records");
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
