/* relations.c: the kinds of dtypes, and what the relations share.
 *
 * Owns the names the relations compare at run time (the Array API kind
 * names, the casting levels, the scalar kinds), interned once per graph;
 * the check of a descriptor argument; the kinds of a dtype (the Array API
 * kinds, and numpy's order of kinds that same_kind casts and weak scalars
 * use); and isdtype().
 *
 * A dtype's kinds come from its numeric record where it has one (bool,
 * signed or unsigned integer, real or complex floating point), else from
 * the category hierarchy: under DType.Integer it is integral (neither
 * signed nor unsigned), under DType.Floating real floating.  A record
 * agrees with the category (numrecords.c), and an answer that a record
 * could still change settles the dtype without one, so no answer given
 * ever changes.  sw_relations_read is the one read every answer of the
 * relations (kinds, casts, weak scalars, lattices) makes.  Nothing here
 * runs Python code: kind names are compared by identity, then by their
 * characters (a str subclass's methods never run).
 */
#include "relations.h"

_Static_assert(SW_RELNAME_COUNT == SW_RELATION_NAMES,
               "state.h's SW_RELATION_NAMES must count sw_relname");

/* The text of each sw_relname, in its order. */
static const char *const sw_relations_name_text[SW_RELNAME_COUNT] = {
    [SW_RELNAME_KIND + 0] = "bool",
    [SW_RELNAME_KIND + 1] = "signed integer",
    [SW_RELNAME_KIND + 2] = "unsigned integer",
    [SW_RELNAME_KIND + 3] = "integral",
    [SW_RELNAME_KIND + 4] = "real floating",
    [SW_RELNAME_KIND + 5] = "complex floating",
    [SW_RELNAME_KIND + 6] = "numeric",
    [SW_RELNAME_CASTING + SW_CASTING_NO] = "no",
    [SW_RELNAME_CASTING + SW_CASTING_EQUIV] = "equiv",
    [SW_RELNAME_CASTING + SW_CASTING_SAFE] = "safe",
    [SW_RELNAME_CASTING + SW_CASTING_SAME_KIND] = "same_kind",
    [SW_RELNAME_CASTING + SW_CASTING_UNSAFE] = "unsafe",
    [SW_RELNAME_SCALAR + SW_SCALAR_BOOL] = "bool",
    [SW_RELNAME_SCALAR + SW_SCALAR_INT] = "int",
    [SW_RELNAME_SCALAR + SW_SCALAR_FLOAT] = "float",
    [SW_RELNAME_SCALAR + SW_SCALAR_COMPLEX] = "complex",
};

#define SW_RELATIONS_KIND_LIST \
    "'bool', 'signed integer', 'unsigned integer', 'integral', " \
    "'real floating', 'complex floating', 'numeric'"

/* Intern the names and find the categories kinds are read from (module
 * initialization, after the built-in graph): 0, or -1. */
int
sw_relations_init(PyObject *module, sw_state *st)
{
    static const char *const categories[2] = {"Integer", "Floating"};
    int i;

    if (sw_state_intern_all(st->relation_names, sw_relations_name_text,
                            SW_RELNAME_COUNT) < 0) {
        return -1;
    }
    for (i = 0; i < 2; i++) {
        PyObject *cat = PyDict_GetItemString(st->dtype_type->tp_dict,
                                             categories[i]);   /* borrowed */
        if (cat == NULL) {
            PyErr_Format(PyExc_SystemError, "built-in %s is not installed",
                         categories[i]);
            return -1;
        }
        st->kind_categories[i] = Py_NewRef(cat);
    }
    return PyModule_AddFunctions(module, sw_relations_methods);
}

/* ---- arguments ----------------------------------------------------------- */

sw_descriptor *
sw_relations_arg_error(sw_state *st, PyObject *obj, const char *func,
                       const char *arg)
{
    if (!Py_IS_TYPE((PyObject *)Py_TYPE(obj), st->meta_type)) {
        /* The type's name, not the object's repr: a repr is user code. */
        PyErr_Format(PyExc_TypeError, "%s: %s must be a registered DType, got "
                     "an object of type %.200s", func, arg,
                     Py_TYPE(obj)->tp_name);
    }
    else {
        PyErr_Format(PyExc_ValueError,
                     "%s: %s must be a registered DType, got a descriptor "
                     "object that is not registered (under construction or "
                     "rejected)", func, arg);
    }
    return NULL;
}

/* Keep `name`, an exact str equal to relation name i, as that name's
 * alias (once: an alias is never replaced, so a pointer compared with it
 * always belongs to a live str of the same text). */
static void
sw_relations_keep_alias(sw_state *st, PyObject *name, int i)
{
    if (!PyUnicode_CheckExact(name) || SW_LOAD_PTR(st->relation_aliases[i]) != NULL) {
        return;
    }
    Py_INCREF(name);
#ifdef Py_GIL_DISABLED
    {
        PyObject *expected = NULL;
        if (!SW_CAS(st->relation_aliases[i], expected, name)) {
            Py_DECREF(name);    /* another thread's stands; ours lives on */
        }
    }
#else
    st->relation_aliases[i] = name;
#endif
}

int
sw_relations_match(sw_state *st, PyObject *name, int first, int count)
{
    Py_ssize_t length;
    int i = sw_relations_match_identity(st, name, first, count);

    if (i >= 0) {
        return i;
    }
    /* Every name is ASCII (and compact once interned): any other str with
     * the same characters is ASCII too, held in one byte per character. */
    if (!PyUnicode_Check(name) || !PyUnicode_IS_ASCII(name)) {
        return -1;
    }
    length = PyUnicode_GET_LENGTH(name);
    for (i = first; i < first + count; i++) {
        PyObject *known = st->relation_names[i];
        if (PyUnicode_GET_LENGTH(known) == length
            && memcmp(PyUnicode_1BYTE_DATA(name), PyUnicode_1BYTE_DATA(known),
                      (size_t)length) == 0) {
            /* A literal in the caller's code is the same object at every
             * call: the next one matches by identity. */
            sw_relations_keep_alias(st, name, i);
            return i;
        }
    }
    return -1;
}

/* ---- relation ids ---------------------------------------------------------- */

/* Give `d` a relation id if it has none: 0, or -1 with OverflowError.  Ids
 * fit in 31 bits (the cache of casts packs two in a word). */
int
sw_relations_assign_id(sw_state *st, sw_descriptor *d)
{
    uint32_t id;

    if (sw_lattice_id_of(d) != 0) {
        return 0;
    }
    id = SW_ADD_FETCH(st->relation_ids, 1);
    if (id == 0 || id >= (1u << 31)) {
        PyErr_SetString(PyExc_OverflowError,
                        "too many dtypes have taken part in kinds, casts and "
                        "promotion lattices");
        return -1;
    }
    {
        uint32_t expected = 0;
        /* Another thread may have given it one meanwhile: theirs stands. */
        (void)SW_CAS(d->relation_id, expected, id);
    }
    return 0;
}

/* ---- the one read -------------------------------------------------------- */

/* The kinds of a numeric record. */
static unsigned int
sw_relations_record_kinds(const sw_numeric_format *f)
{
    switch (f->kind) {
    case SW_NUM_BOOL:
        return SW_KINDS_BOOL;
    case SW_NUM_INT:
        return (f->is_signed ? SW_KINDS_SIGNED : SW_KINDS_UNSIGNED)
               | SW_KINDS_INTEGRAL | SW_KINDS_NUMERIC;
    case SW_NUM_FLOAT:
        return SW_KINDS_REAL | SW_KINDS_NUMERIC;
    case SW_NUM_COMPLEX:
        return SW_KINDS_COMPLEX | SW_KINDS_NUMERIC;
    }
    return 0;
}

/* The kinds of `d` without a record (a category, a simple dtype without
 * one, a compound or block-scaled dtype): from its place in the
 * hierarchy. */
static unsigned int
sw_relations_category_kinds(sw_state *st, sw_descriptor *d)
{
    if (sw_descriptor_reaches(d, st->kind_categories[0])) {
        return SW_KINDS_INTEGRAL | SW_KINDS_NUMERIC;
    }
    if (sw_descriptor_reaches(d, st->kind_categories[1])) {
        return SW_KINDS_REAL | SW_KINDS_NUMERIC;
    }
    return 0;
}

/* What a record that agrees with the category kinds `kinds` could still
 * change (SW_KINDS_* and SW_READ_RECORD bits): the signedness of an
 * integer; nothing a 'float' record has anyway; any kind of a dtype under
 * neither Integer nor Floating (a 'bool' or 'complex' record); and the
 * record itself, always. */
static unsigned int
sw_relations_open(unsigned int kinds)
{
    if (kinds & SW_KINDS_INTEGRAL) {
        return SW_KINDS_SIGNED | SW_KINDS_UNSIGNED | SW_READ_RECORD;
    }
    if (kinds & SW_KINDS_REAL) {
        return SW_READ_RECORD;
    }
    return SW_KINDS_BOOL | SW_KINDS_COMPLEX | SW_KINDS_NUMERIC | SW_READ_RECORD;
}

/* The one read of what `d` means to the relations, for an answer that
 * depends on `asked` (SW_KINDS_* bits, SW_READ_RECORD, SW_READ_SCALAR, or
 * SW_READ_WORDING for a message).  A simple dtype without a record
 * answers from its category; where a record that agrees with the category
 * (numrecords.c) could answer otherwise, the dtype is settled first: it
 * never gets a record after, so no answer derived from its lack of one
 * ever changes.  Kinds the category fixes settle nothing, so a record can
 * still come after them.  The bits outside `asked` are what the dtype
 * means now, not for good.  Runs no Python code. */
sw_relations_view
sw_relations_read(sw_state *st, sw_descriptor *d, unsigned int asked)
{
    sw_relations_view v;
    PyObject *numeric;

    if (d->kind != SW_KIND_SIMPLE) {
        v.kinds = sw_relations_category_kinds(st, d);
        v.record = NULL;
        v.fixed = 1;            /* only simple dtypes have records */
        return v;
    }
    numeric = SW_LOAD_PTR(d->numeric);
    if (numeric == NULL) {
        v.kinds = sw_relations_category_kinds(st, d);
        if (!(asked & sw_relations_open(v.kinds))) {
            v.record = NULL;
            v.fixed = 0;
            return v;
        }
        (void)sw_numrecords_settle(d);
        numeric = SW_LOAD_PTR(d->numeric);  /* a record may have come first */
    }
    v.fixed = 1;
    if (numeric == Py_None) {
        v.kinds = sw_relations_category_kinds(st, d);
        v.record = NULL;
    }
    else {
        v.record = &((sw_numinfo *)numeric)->fmt;
        v.kinds = sw_relations_record_kinds(v.record);
    }
    return v;
}

/* The SW_KINDS_* bit of the kind name `name` (any str), or 0 when it is
 * not one. */
static unsigned int
sw_relations_kind_bit(sw_state *st, PyObject *name)
{
    int i = sw_relations_match(st, name, SW_RELNAME_KIND, SW_KINDS_COUNT);

    return i < 0 ? 0 : 1u << (i - SW_RELNAME_KIND);
}

/* Whether `d` is of the kind `kind` (one name or DType, not a tuple):
 * 1, 0, or -1 with an exception. */
static int
sw_relations_is_one(sw_state *st, sw_descriptor *d, PyObject *kind)
{
    unsigned int bit;
    sw_descriptor *k;

    if (PyUnicode_Check(kind)) {
        bit = sw_relations_kind_bit(st, kind);
        if (bit == 0) {
            PyObject *exact = sw_exact_str(kind);   /* its repr is ours */
            if (exact != NULL) {
                PyErr_Format(PyExc_ValueError,
                             "isdtype: kind must be one of "
                             SW_RELATIONS_KIND_LIST ", a DType or a tuple of "
                             "these, got %R", exact);
                Py_DECREF(exact);
            }
            return -1;
        }
        return (sw_relations_read(st, d, bit).kinds & bit) != 0;
    }
    if (Py_IS_TYPE((PyObject *)Py_TYPE(kind), st->meta_type)) {
        k = sw_relations_arg(st, kind, "isdtype", "kind");
        if (k == NULL) {
            return -1;
        }
        /* A category matches its members, any other descriptor itself. */
        return k->kind == SW_KIND_CATEGORY ? sw_descriptor_reaches(d, kind)
                                           : (PyObject *)d == kind;
    }
    PyErr_Format(PyExc_TypeError,
                 "isdtype: kind must be one of " SW_RELATIONS_KIND_LIST
                 ", a DType or a tuple of these, got an object of type %.200s",
                 Py_TYPE(kind)->tp_name);
    return -1;
}

static PyObject *
sw_relations_isdtype(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    sw_state *st = sw_state_of_module(module);
    sw_descriptor *d;
    PyObject *kind;
    Py_ssize_t i;
    int any = 0;

    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError,
                     "isdtype() takes exactly 2 arguments (%zd given)", nargs);
        return NULL;
    }
    /* The usual call: a registered dtype and a kind name seen before. */
    d = sw_relations_registered(st, args[0]);
    if (d != NULL) {
        int i = sw_relations_match_identity(st, args[1], SW_RELNAME_KIND,
                                            SW_KINDS_COUNT);
        if (i >= 0) {
            unsigned int bit = 1u << (i - SW_RELNAME_KIND);
            return Py_NewRef(sw_relations_read(st, d, bit).kinds & bit
                             ? Py_True : Py_False);
        }
    }
    if (sw_state_check(st) < 0) {
        return NULL;
    }
    d = sw_relations_arg(st, args[0], "isdtype", "dtype");
    if (d == NULL) {
        return NULL;
    }
    kind = args[1];
    /* The usual call: an interned kind name, answered without a loop over
     * the others. */
    if (!PyTuple_Check(kind)) {
        int r = sw_relations_is_one(st, d, kind);
        return r < 0 ? NULL : PyBool_FromLong(r);
    }
    /* A tuple (its items are read from its storage: a subclass's methods
     * never run).  Every item is checked, so a bad one is never hidden
     * behind an earlier match. */
    for (i = 0; i < PyTuple_GET_SIZE(kind); i++) {
        PyObject *item = PyTuple_GET_ITEM(kind, i);   /* the tuple holds it */
        int r;

        if (PyTuple_Check(item)) {
            PyErr_SetString(PyExc_TypeError,
                            "isdtype: kind must be one of "
                            SW_RELATIONS_KIND_LIST ", a DType or a tuple of "
                            "these, got a tuple holding a tuple");
            return NULL;
        }
        r = sw_relations_is_one(st, d, item);
        if (r < 0) {
            return NULL;
        }
        any |= r;
    }
    return PyBool_FromLong(any);
}

PyMethodDef sw_relations_methods[] = {
    {"isdtype", SW_CFUNC(sw_relations_isdtype), METH_FASTCALL,
     PyDoc_STR("isdtype(dtype, kind, /)\n--\n\n"
               "Whether dtype is of the kind kind, as the Array API's "
               "isdtype.\n\n"
               "kind is one of the names 'bool', 'signed integer', "
               "'unsigned integer', 'integral', 'real floating', 'complex "
               "floating' and 'numeric'; a DType (a category matches its "
               "members and itself, any other descriptor only itself); or a "
               "tuple of these (any may match).\n\n"
               "The answer comes from dtype's numeric record where it has "
               "one, else from its category: a dtype under DType.Integer "
               "without a record is 'integral' and 'numeric' but neither "
               "signed nor unsigned, one under DType.Floating is 'real "
               "floating' and 'numeric'.  A compound or block-scaled dtype "
               "answers from its category (the built-in block-scaled formats "
               "are under DType.Any: no kind name matches them).\n\n"
               "TypeError when dtype is not a registered DType or kind is "
               "not a str, DType or tuple; ValueError for an unknown kind "
               "name.")},
    {NULL, NULL, 0, NULL},
};
