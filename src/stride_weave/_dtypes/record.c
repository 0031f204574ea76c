/* record.c: the pickle record (structure format version 2).
 *
 * A descriptor pickles as _reconstruct(record[, module]).  The record is
 * its structure (structure.c, version 1) in positional form:
 *
 *     (name, kind, field..., extension)
 *
 * kind is the descriptor kind's number (kind.h; the C API's numbers), the
 * fields come in the order of sw_record_layouts below, values the model
 * types are native (a width is an int), a referenced descriptor's record is
 * written in place, a list is its length followed by its items, and the
 * extension holds the structure_extension() values themselves: pickle keeps
 * str, int, bool, float and None apart, and the comparison here requires
 * exact types, so True, 1 and 1.0 still differ.
 *
 * A record is flat however deep its category chain: making it keeps a
 * stack of its own, and comparing it recurses only into extension values.
 * A descriptor's __reduce__ value is made once, on first use, and kept in
 * a private table.  Equal records mean equal structures; on a difference
 * the received record is converted back to a version-1 structure and
 * compared with the registered one, so the message names the first
 * difference exactly as for a version-1 pickle.
 *
 * After the structure, a record states the numeric records of the simple
 * dtypes it defines (numrecords.c): one more item, a tuple with, for each
 * such dtype in order (the descriptor itself if simple, else its planes:
 * a block-scaled format's element, then each level's scale), its record's
 * canonical fields or None.  Built-ins are left out (every process of a
 * release has their records), and a record stating none has no such
 * item, so a built-in's record is as it was.  Records made before records
 * were stated end with the structure and load as they always did.
 */
#include "record.h"
#include "descriptor.h"
#include "level.h"
#include "numinfo.h"
#include "privtable.h"
#include "rule.h"
#include "structure.h"

#include <string.h>

/* ---- the layout ------------------------------------------------------------ */

typedef enum {
    SW_RECORD_INT,          /* exact int */
    SW_RECORD_REF,          /* a descriptor's record */
    SW_RECORD_REF_OR_NONE,  /* a descriptor's record, or None */
    /* The lists: a count n, then n items in place. */
    SW_RECORD_REFS,         /* a descriptor's record */
    SW_RECORD_LEVELS,       /* a scale's record, then the block: an int,
                               None (Whole) or a tuple of ints (N-D) */
    SW_RECORD_RULES,        /* a rule's qualified name, then its extension */
} sw_record_type;

typedef struct {
    sw_label label;         /* the field's label in version 1 */
    sw_record_type type;
    /* The field's value on a finished descriptor, borrowed: an int, a
     * descriptor, NULL (None), or a tuple of descriptors, Levels or rules. */
    PyObject *(*get)(sw_descriptor *d);
} sw_record_field;

typedef struct {
    sw_label contract;      /* the structure's first item in version 1 */
    int nfields;
    sw_record_field fields[3];
    /* The record leaves out the rules, which follow from the levels (one
     * LevelExtent per level); version 1 records them after the fields. */
    int rules_from_levels;
} sw_record_layout;

static PyObject *
sw_record_get_bits(sw_descriptor *d)
{
    return d->bits;
}

static PyObject *
sw_record_get_supertype(sw_descriptor *d)
{
    return sw_descriptor_supertype(d);
}

static PyObject *
sw_record_get_planes(sw_descriptor *d)
{
    return d->compound->simple_types;
}

static PyObject *
sw_record_get_rules(sw_descriptor *d)
{
    return d->compound->rules;
}

static PyObject *
sw_record_get_element(sw_descriptor *d)
{
    return d->compound->element;
}

static PyObject *
sw_record_get_levels(sw_descriptor *d)
{
    return d->compound->levels;
}

/* Indexed by sw_kind.  The order of the fields is the order of the
 * version-1 structure's fields, which docs/structure.md documents.  A
 * block-scaled record leaves out its rules: they are LevelExtent(i, block)
 * for each level i, by construction (blockscaled.c). */
static const sw_record_layout sw_record_layouts[SW_KIND_COUNT] = {
    [SW_KIND_CATEGORY] = {SW_LABEL_DTYPE_CATEGORY, 1, {
        {SW_LABEL_SUPERTYPE, SW_RECORD_REF_OR_NONE, sw_record_get_supertype},
    }},
    [SW_KIND_SIMPLE] = {SW_LABEL_SIMPLE_DTYPE, 2, {
        {SW_LABEL_BITS, SW_RECORD_INT, sw_record_get_bits},
        {SW_LABEL_SUPERTYPE, SW_RECORD_REF, sw_record_get_supertype},
    }},
    [SW_KIND_COMPOUND] = {SW_LABEL_COMPOUND_DTYPE, 3, {
        {SW_LABEL_SUPERTYPE, SW_RECORD_REF_OR_NONE, sw_record_get_supertype},
        {SW_LABEL_SIMPLE_TYPES, SW_RECORD_REFS, sw_record_get_planes},
        {SW_LABEL_REPRESENTATION_RULES, SW_RECORD_RULES, sw_record_get_rules},
    }},
    [SW_KIND_BLOCK_SCALED] = {SW_LABEL_BLOCK_SCALED_DTYPE, 2, {
        {SW_LABEL_ELEMENT, SW_RECORD_REF, sw_record_get_element},
        {SW_LABEL_LEVELS, SW_RECORD_LEVELS, sw_record_get_levels},
    }, 1},
};

static const sw_record_layout *
sw_record_layout_of(long kind)
{
    if (kind <= SW_KIND_NONE || kind >= SW_KIND_COUNT) {
        return NULL;
    }
    return &sw_record_layouts[kind];
}

/* ---- version-1 leaves to native values ---------------------------------- */

/* The value an encoded extension leaf stands for (new ref).  The leaves
 * were written by structure.c, so anything else is an internal error. */
static PyObject *
sw_record_native(sw_state *st, PyObject *leaf)
{
    if (PyTuple_CheckExact(leaf)) {
        Py_ssize_t i, n = PyTuple_GET_SIZE(leaf);
        PyObject *result;

        if (Py_EnterRecursiveCall(" while making a pickle record")) {
            return NULL;
        }
        result = PyTuple_New(n);
        for (i = 0; result != NULL && i < n; i++) {
            PyObject *item = sw_record_native(st, PyTuple_GET_ITEM(leaf, i));
            if (item == NULL) {
                Py_CLEAR(result);
                break;
            }
            PyTuple_SET_ITEM(result, i, item);
        }
        Py_LeaveRecursiveCall();
        return result;
    }
    if (PyUnicode_CheckExact(leaf)) {
        Py_ssize_t n = PyUnicode_GET_LENGTH(leaf);
        PyObject *rest;

        if (PyUnicode_CompareWithASCIIString(leaf, "none") == 0) {
            Py_RETURN_NONE;
        }
        if (PyUnicode_CompareWithASCIIString(leaf, "whole") == 0) {
            return Py_NewRef(st->whole);
        }
        if (PyUnicode_CompareWithASCIIString(leaf, "bool:True") == 0) {
            Py_RETURN_TRUE;
        }
        if (PyUnicode_CompareWithASCIIString(leaf, "bool:False") == 0) {
            Py_RETURN_FALSE;
        }
        if (n >= 4 && PyUnicode_READ_CHAR(leaf, 3) == ':') {
            /* "str:<s>" or "int:<n>" */
            int is_str = PyUnicode_READ_CHAR(leaf, 0) == 's'
                         && PyUnicode_READ_CHAR(leaf, 1) == 't'
                         && PyUnicode_READ_CHAR(leaf, 2) == 'r';
            int is_int = PyUnicode_READ_CHAR(leaf, 0) == 'i'
                         && PyUnicode_READ_CHAR(leaf, 1) == 'n'
                         && PyUnicode_READ_CHAR(leaf, 2) == 't';

            if (is_str || is_int) {
                rest = PyUnicode_Substring(leaf, 4, n);
                if (rest == NULL || is_str) {
                    return rest;
                }
                /* Decimal, or 0x / -0x hex beyond 64 bits: base 0 reads
                 * both, and hex is exempt from the digit limit. */
                Py_SETREF(rest, PyLong_FromUnicodeObject(rest, 0));
                return rest;
            }
        }
        if (n == 22 && PyUnicode_READ_CHAR(leaf, 5) == ':'
            && PyUnicode_READ_CHAR(leaf, 0) == 'f') {
            /* "float:" and the 16 hex digits of the IEEE-754 bits */
            uint64_t bits = 0;
            double x;
            Py_ssize_t i;

            for (i = 6; i < 22; i++) {
                Py_UCS4 c = PyUnicode_READ_CHAR(leaf, i);
                int digit = (c >= '0' && c <= '9') ? (int)(c - '0')
                          : (c >= 'a' && c <= 'f') ? (int)(c - 'a' + 10) : -1;
                if (digit < 0) {
                    break;
                }
                bits = (bits << 4) | (uint64_t)digit;
            }
            if (i == 22) {
                memcpy(&x, &bits, sizeof x);
                return PyFloat_FromDouble(x);
            }
        }
    }
    PyErr_Format(PyExc_SystemError,
                 "making a pickle record: unexpected structure leaf %R", leaf);
    return NULL;
}

/* The extension of a version-1 structure or rule structure, natively: its
 * last item is ("extension", <encoded tuple>). */
static PyObject *
sw_record_extension(sw_state *st, PyObject *structure)
{
    PyObject *field = PyTuple_GET_ITEM(structure, PyTuple_GET_SIZE(structure) - 1);
    PyObject *encoded = PyTuple_GET_ITEM(field, 1);

    if (PyTuple_GET_SIZE(encoded) == 0) {
        return Py_NewRef(st->empty_tuple);
    }
    return sw_record_native(st, encoded);
}

/* (qualified name, extension) of a rule, from its structure
 * ("RepresentationRule", "str:<qualified name>", ("extension", ...)). */
static PyObject *
sw_record_of_rule(sw_state *st, PyObject *rule)
{
    PyObject *structure = ((sw_rule *)rule)->structure;
    PyObject *qualname, *ext, *result;

    qualname = sw_record_native(st, PyTuple_GET_ITEM(structure, 1));
    if (qualname == NULL) {
        return NULL;
    }
    /* Interned: the rules of one format share their class's name, and a
     * pickle writes one object once. */
    PyUnicode_InternInPlace(&qualname);
    ext = sw_record_extension(st, structure);
    if (ext == NULL) {
        Py_DECREF(qualname);
        return NULL;
    }
    result = PyTuple_Pack(2, qualname, ext);
    Py_DECREF(qualname);
    Py_DECREF(ext);
    return result;
}

/* ---- making records ---------------------------------------------------------- */

/* Records up to this many items are kept; a longer one (a category chain
 * hundreds deep) is made again for each pickle, so the table stays
 * proportional to the registry. */
#define SW_RECORD_CACHE_MAX 256

typedef struct {
    sw_descriptor *d;   /* borrowed: kept alive by the descriptor that
                           refers to it, or by the caller for the first */
    int next;           /* -1: name and kind not written yet; else the next
                           field, nfields meaning the extension */
} sw_record_emit_frame;

static int sw_record_emit(sw_state *st, sw_descriptor *d, PyObject *out);

/* Append a list-valued field to `out`: its length, then each plane's
 * record, each level's scale record and block (None for Whole, the exact
 * tuple of an N-D block), or each rule's qualified name and extension. */
static int
sw_record_emit_list(sw_state *st, const sw_record_field *field,
                    PyObject *value, PyObject *out)
{
    Py_ssize_t i, n = PyTuple_GET_SIZE(value);
    PyObject *count = PyLong_FromSsize_t(n);
    int status = count == NULL ? -1 : PyList_Append(out, count);

    Py_XDECREF(count);
    for (i = 0; status == 0 && i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(value, i), *rule;

        if (field->type == SW_RECORD_RULES) {
            rule = sw_record_of_rule(st, item);
            status = rule == NULL ? -1
                : (PyList_Append(out, PyTuple_GET_ITEM(rule, 0)) < 0
                   || PyList_Append(out, PyTuple_GET_ITEM(rule, 1)) < 0) ? -1 : 0;
            Py_XDECREF(rule);
        }
        else if (field->type == SW_RECORD_REFS) {
            /* A plane is a simple dtype: its record has no list-valued
             * field, so this nests one level only. */
            status = sw_record_emit(st, (sw_descriptor *)item, out);
        }
        else {
            sw_level *level = (sw_level *)item;

            status = sw_record_emit(st, (sw_descriptor *)level->scale, out);
            if (status == 0) {
                status = PyList_Append(out, level->block == st->whole
                                            ? Py_None : level->block);
            }
        }
    }
    return status;
}

/* Append the record of `d` to `out`: its name, kind, fields and extension,
 * a referenced descriptor's record in place of the reference.  A category
 * chain is written with a stack of our own, so any depth is one flat run. */
static int
sw_record_emit(sw_state *st, sw_descriptor *d, PyObject *out)
{
    sw_record_emit_frame *stack, *grown;
    Py_ssize_t depth = 0, capacity = 8;
    int status = 0;

    stack = PyMem_New(sw_record_emit_frame, capacity);
    if (stack == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    stack[depth++] = (sw_record_emit_frame){d, -1};
    while (depth > 0 && status == 0) {
        sw_record_emit_frame *frame = &stack[depth - 1];
        const sw_record_layout *layout = sw_record_layout_of(frame->d->kind);
        const sw_record_field *field;
        PyObject *value, *item;

        if (frame->next == -1) {
            item = PyLong_FromLong(frame->d->kind);
            status = item == NULL ? -1
                : (PyList_Append(out, frame->d->name) < 0
                   || PyList_Append(out, item) < 0) ? -1 : 0;
            Py_XDECREF(item);
            frame->next = 0;
            continue;
        }
        if (frame->next == layout->nfields) {
            item = sw_record_extension(st, frame->d->structure);
            status = item == NULL ? -1 : PyList_Append(out, item);
            Py_XDECREF(item);
            depth--;
            continue;
        }
        field = &layout->fields[frame->next++];
        value = field->get(frame->d);
        switch (field->type) {
        case SW_RECORD_INT:
            status = PyList_Append(out, value);
            break;
        case SW_RECORD_REF_OR_NONE:
        case SW_RECORD_REF:
            if (value == NULL) {
                status = PyList_Append(out, Py_None);
                break;
            }
            if (depth == capacity) {
                capacity *= 2;
                /* PyMem_Resize would assign NULL to `stack` on failure,
                 * losing the block that still has to be freed. */
                grown = (size_t)capacity > PY_SSIZE_T_MAX / sizeof(*stack) ? NULL
                    : PyMem_Realloc(stack, (size_t)capacity * sizeof(*stack));
                if (grown == NULL) {
                    PyErr_NoMemory();
                    status = -1;
                    break;
                }
                stack = grown;
            }
            stack[depth++] = (sw_record_emit_frame){(sw_descriptor *)value, -1};
            break;
        default:
            status = sw_record_emit_list(st, field, value, out);
            break;
        }
    }
    PyMem_Free(stack);
    return status;
}

/* ---- the numeric records a record states ------------------------------------ */

/* 1 when `s`, a simple descriptor, is a built-in: DType.<its name>, made
 * with the graph (no user descriptor is a DType attribute, and none has
 * a built-in's name).  Its record is the release's, the same in every
 * process, so a pickle need not state it.  Runs no Python code. */
static int
sw_record_is_builtin(sw_state *st, sw_descriptor *s)
{
    PyObject *found = NULL;
    int status;

    if (s->module != NULL) {
        return 0;
    }
    /* An exact str key in the model class's own dict. */
    status = PyDict_GetItemRef(st->dtype_type->tp_dict, s->name, &found);
    Py_XDECREF(found);      /* only its identity is compared */
    return status < 0 ? -1 : found == (PyObject *)s;
}

/* Where the simple dtypes whose records `d`'s pickle states are: a new
 * list of ints, -1 for `d` itself (a simple dtype), else the index of a
 * plane (a block-scaled format's planes are its element, then each
 * level's scale), built-ins left out; NULL with an exception. */
static PyObject *
sw_record_stated_planes(sw_state *st, sw_descriptor *d)
{
    PyObject *planes = NULL, *out = PyList_New(0);
    Py_ssize_t i, n = 0;

    if (out == NULL) {
        return NULL;
    }
    if (d->kind == SW_KIND_SIMPLE) {
        n = 1;
    }
    else if (d->compound != NULL && d->compound->simple_types != NULL) {
        planes = d->compound->simple_types;
        n = PyTuple_GET_SIZE(planes);
    }
    for (i = 0; i < n; i++) {
        sw_descriptor *s = planes != NULL
            ? (sw_descriptor *)PyTuple_GET_ITEM(planes, i) : d;
        int builtin = sw_record_is_builtin(st, s);
        PyObject *index;

        if (builtin < 0) {
            Py_DECREF(out);
            return NULL;
        }
        if (builtin) {
            continue;
        }
        index = PyLong_FromSsize_t(planes != NULL ? i : -1);
        if (index == NULL || PyList_Append(out, index) < 0) {
            Py_XDECREF(index);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(index);
    }
    return out;
}

/* The simple dtype at the stated position `where` (an item of
 * sw_record_stated_planes; borrowed). */
static sw_descriptor *
sw_record_stated_dtype(sw_descriptor *d, PyObject *where)
{
    Py_ssize_t i = PyLong_AsSsize_t(where);     /* ours: cannot fail */

    return i < 0 ? d
        : (sw_descriptor *)PyTuple_GET_ITEM(d->compound->simple_types, i);
}

int
sw_record_stated(sw_state *st, sw_descriptor *d, PyObject **stated)
{
    PyObject *planes = sw_record_stated_planes(st, d);
    Py_ssize_t i, n;

    *stated = NULL;
    if (planes == NULL) {
        return -1;
    }
    n = PyList_GET_SIZE(planes);
    if (n == 0) {
        Py_DECREF(planes);
        return 0;
    }
    *stated = PyTuple_New(n);
    for (i = 0; *stated != NULL && i < n; i++) {
        PyObject *fields = sw_numrecords_stated(
            sw_record_stated_dtype(d, PyList_GET_ITEM(planes, i)));
        if (fields == NULL) {
            Py_CLEAR(*stated);
            break;
        }
        PyTuple_SET_ITEM(*stated, i, fields);
    }
    Py_DECREF(planes);
    return *stated == NULL ? -1 : 0;
}

/* Append to `out` what `d`'s pickle states after its structure, when it
 * states anything (sw_record_stated): 0, or -1 with an exception. */
static int
sw_record_emit_stated(sw_state *st, sw_descriptor *d, PyObject *out)
{
    PyObject *stated;
    int status;

    if (sw_record_stated(st, d, &stated) < 0) {
        return -1;
    }
    status = stated == NULL ? 0 : PyList_Append(out, stated);
    Py_XDECREF(stated);
    return status;
}

/* " of its element 'E2M1'" and the like: where the stated position
 * `where` is in `d`, for a message (new str; empty for `d` itself). */
static PyObject *
sw_record_stated_where(sw_descriptor *d, PyObject *where)
{
    Py_ssize_t i = PyLong_AsSsize_t(where);
    sw_descriptor *s = sw_record_stated_dtype(d, where);

    if (i < 0) {
        return PyUnicode_FromString("");
    }
    if (d->kind == SW_KIND_BLOCK_SCALED) {
        return i == 0 ? PyUnicode_FromFormat(" of its element %R", s->name)
            : PyUnicode_FromFormat(" of the scale of its level %zd, %R",
                                   i - 1, s->name);
    }
    return PyUnicode_FromFormat(" of its plane %zd, %R", i, s->name);
}

int
sw_record_check_stated(sw_state *st, sw_descriptor *d, PyObject *stated)
{
    PyObject *planes, *difference = NULL, *where;
    Py_ssize_t i, n;
    int status = 0;

    if (stated == NULL) {
        return 0;       /* a record of a release that stated none */
    }
    planes = sw_record_stated_planes(st, d);
    if (planes == NULL) {
        return -1;
    }
    n = PyList_GET_SIZE(planes);
    if (!PyTuple_CheckExact(stated) || PyTuple_GET_SIZE(stated) != n) {
        PyErr_Format(PyExc_ValueError,
                     "cannot unpickle descriptor %R: malformed pickle record: "
                     "expected a tuple of the %zd numeric records it states "
                     "after its structure, got %.200s", d->name, n,
                     Py_TYPE(stated)->tp_name);
        Py_DECREF(planes);
        return -1;
    }
    for (i = 0; i < n && status == 0; i++) {
        PyObject *at = PyList_GET_ITEM(planes, i);

        status = sw_numrecords_match(sw_record_stated_dtype(d, at),
                                     PyTuple_GET_ITEM(stated, i), "pickle",
                                     &difference);
        if (status < 0 && PyErr_ExceptionMatches(PyExc_ValueError)) {
            PyObject *value = PyErr_GetRaisedException();

            PyErr_Format(PyExc_ValueError,
                         "cannot unpickle descriptor %R: malformed pickle "
                         "record: %S", d->name, value != NULL ? value : Py_None);
            Py_XDECREF(value);
        }
        if (status > 0) {
            where = sw_record_stated_where(d, at);
            if (where != NULL) {
                PyErr_Format(PyExc_ValueError,
                             "cannot unpickle descriptor %R: the pickled "
                             "numeric record%U differs from the one "
                             "registered in this process: %U",
                             d->name, where, difference);
                Py_DECREF(where);
            }
            Py_DECREF(difference);
            status = -1;
        }
    }
    Py_DECREF(planes);
    return status;
}

/* 1 when every simple dtype `d`'s pickle states has settled what it
 * means (a record, or none for good), so the record made now is final. */
static int
sw_record_settled(sw_descriptor *d)
{
    Py_ssize_t i;

    if (d->kind == SW_KIND_SIMPLE) {
        return SW_LOAD_PTR(d->numeric) != NULL;
    }
    if (d->compound == NULL || d->compound->simple_types == NULL) {
        return 1;
    }
    for (i = 0; i < PyTuple_GET_SIZE(d->compound->simple_types); i++) {
        sw_descriptor *s =
            (sw_descriptor *)PyTuple_GET_ITEM(d->compound->simple_types, i);
        if (SW_LOAD_PTR(s->numeric) == NULL) {
            return 0;
        }
    }
    return 1;
}

/* ---- the pickle ----------------------------------------------------------------- */

/* `d`'s record without what it states after its structure (new ref): made
 * fresh, or taken from `reduced` (a __reduce__ value or NULL). */
static PyObject *
sw_record_structure_part(sw_state *st, sw_descriptor *d, PyObject *reduced,
                         int states)
{
    PyObject *list, *record;

    if (reduced != NULL) {
        record = PyTuple_GET_ITEM(PyTuple_GET_ITEM(reduced, 1), 0);
        return PyTuple_GetSlice(record, 0, PyTuple_GET_SIZE(record) - states);
    }
    list = PyList_New(0);
    if (list == NULL) {
        return NULL;
    }
    if (sw_record_emit(st, d, list) < 0) {
        Py_DECREF(list);
        return NULL;
    }
    record = PyList_AsTuple(list);
    Py_DECREF(list);
    return record;
}

PyObject *
sw_record_reduce(sw_state *st, sw_descriptor *d)
{
    PyObject *reduced, *list, *record, *args;

    reduced = sw_private_get(st->pickles, (PyObject *)d);
    if (reduced != NULL || PyErr_Occurred()) {
        return reduced;
    }
    list = PyList_New(0);
    if (list == NULL) {
        return NULL;
    }
    if (sw_record_emit(st, d, list) < 0 || sw_record_emit_stated(st, d, list) < 0) {
        Py_DECREF(list);
        return NULL;
    }
    record = PyList_AsTuple(list);
    Py_DECREF(list);
    if (record == NULL) {
        return NULL;
    }
    args = d->module != NULL ? PyTuple_Pack(2, record, d->module)
                             : PyTuple_Pack(1, record);
    reduced = args == NULL ? NULL : PyTuple_Pack(2, st->reconstruct, args);
    Py_XDECREF(args);
    if (reduced != NULL && PyTuple_GET_SIZE(record) <= SW_RECORD_CACHE_MAX) {
        /* Another thread may have made it first: keep the first. */
        Py_SETREF(reduced, Py_XNewRef(sw_private_setdefault(
                                          st->pickles, (PyObject *)d, reduced)));
    }
    Py_DECREF(record);
    return reduced;
}

/* The record inside a __reduce__ value (borrowed). */
static PyObject *
sw_record_in(PyObject *reduced)
{
    return PyTuple_GET_ITEM(PyTuple_GET_ITEM(reduced, 1), 0);
}

/* ---- comparing -------------------------------------------------------------- */

/* 1 if two leaves are equal with equal exact types (floats by their bits),
 * 0 if not.  Never runs code of `theirs`: only exact built-in types are
 * compared by value. */
static int
sw_record_leaf_equal(PyObject *ours, PyObject *theirs)
{
    PyTypeObject *tp = Py_TYPE(ours);

    if (Py_TYPE(theirs) != tp) {
        return 0;
    }
    if (tp == &PyUnicode_Type) {
        return PyUnicode_Compare(ours, theirs) == 0;
    }
    if (tp == &PyLong_Type) {
        /* Exact ints: compares without user code, and cannot fail. */
        return PyObject_RichCompareBool(ours, theirs, Py_EQ) == 1;
    }
    if (tp == &PyFloat_Type) {
        double a = PyFloat_AS_DOUBLE(ours), b = PyFloat_AS_DOUBLE(theirs);
        return memcmp(&a, &b, sizeof a) == 0;
    }
    /* None, True, False and Whole are singletons, compared by identity. */
    return 0;
}

/* 1 if `theirs` (untrusted) equals the registered record `ours` exactly,
 * 0 if not, -1 on error.  It recurses only where `ours` nests (extension
 * values, whose depth registration bounded), whatever `theirs` holds. */
static int
sw_record_equal(PyObject *ours, PyObject *theirs)
{
    Py_ssize_t i, n;
    int result = 1;

    if (ours == theirs) {
        return 1;
    }
    if (!PyTuple_CheckExact(ours)) {
        return sw_record_leaf_equal(ours, theirs);
    }
    n = PyTuple_GET_SIZE(ours);
    if (!PyTuple_CheckExact(theirs) || PyTuple_GET_SIZE(theirs) != n) {
        return 0;
    }
    if (Py_EnterRecursiveCall(" while comparing a pickle record")) {
        return -1;
    }
    for (i = 0; i < n && result == 1; i++) {
        result = sw_record_equal(PyTuple_GET_ITEM(ours, i),
                                 PyTuple_GET_ITEM(theirs, i));
    }
    Py_LeaveRecursiveCall();
    return result;
}

/* ---- describing a difference: a received record as a version-1 structure */

/* ValueError for a record that is not a well-formed record. */
static PyObject *
sw_record_malformed(const char *what, PyObject *got)
{
    PyErr_Format(PyExc_ValueError,
                 "malformed pickle record: expected %s, got %s", what,
                 Py_TYPE(got)->tp_name);
    return NULL;
}

/* The next item of a record being read (borrowed), or NULL with
 * ValueError when the record ends first. */
static PyObject *
sw_record_next(PyObject *tokens, Py_ssize_t *pos, const char *what)
{
    if (*pos >= PyTuple_GET_SIZE(tokens)) {
        PyErr_Format(PyExc_ValueError,
                     "malformed pickle record: it ends where %s was expected",
                     what);
        return NULL;
    }
    return PyTuple_GET_ITEM(tokens, (*pos)++);
}

/* An extension received natively, encoded as version 1 (new ref).  The
 * encoder accepts exactly the types structure_extension() may return. */
static PyObject *
sw_record_to_extension(sw_state *st, PyObject *ext)
{
    PyObject *encoded;

    if (!PyTuple_CheckExact(ext)) {
        return sw_record_malformed("an extension tuple", ext);
    }
    encoded = sw_structure_encode_extension(st, ext, st->reconstruct);
    if (encoded == NULL && PyErr_ExceptionMatches(PyExc_TypeError)) {
        /* Replaced by the error a malformed record gets (only TypeError:
         * a MemoryError propagates). */
        PyErr_Clear();
        PyErr_SetString(PyExc_ValueError,
                        "malformed pickle record: its extension holds a "
                        "value that is not an exact str, int, float, bool, "
                        "None, Whole or tuple of those");
    }
    return encoded;
}

static PyObject *sw_record_parse(sw_state *st, PyObject *tokens,
                                 Py_ssize_t *pos, PyObject **name);

/* ("ref", "str:<name>", <structure>) for the record at *pos (new ref). */
static PyObject *
sw_record_parse_ref(sw_state *st, PyObject *tokens, Py_ssize_t *pos)
{
    PyObject *name = NULL, *structure, *tagged, *ref;

    structure = sw_record_parse(st, tokens, pos, &name);
    if (structure == NULL) {
        return NULL;
    }
    tagged = PyUnicode_FromFormat("str:%U", name);
    ref = tagged == NULL ? NULL
        : PyTuple_Pack(3, st->labels[SW_LABEL_REF], tagged, structure);
    Py_XDECREF(tagged);
    Py_DECREF(structure);
    return ref;
}

/* Is a received block an exact int, or an exact tuple of exact ints (an
 * N-D block)?  Any other value is a malformed record. */
static int
sw_record_is_block(PyObject *block)
{
    Py_ssize_t i;

    if (PyLong_CheckExact(block)) {
        return 1;
    }
    if (!PyTuple_CheckExact(block)) {
        return 0;
    }
    for (i = 0; i < PyTuple_GET_SIZE(block); i++) {
        if (!PyLong_CheckExact(PyTuple_GET_ITEM(block, i))) {
            return 0;
        }
    }
    return 1;
}

/* The item of a list-valued field at *pos, as version 1 (new ref): a
 * plane's reference, a Level, or a rule.  For a Level, *block receives
 * its block (borrowed). */
static PyObject *
sw_record_parse_item(sw_state *st, sw_record_type type, PyObject *tokens,
                     Py_ssize_t *pos, PyObject **block)
{
    PyObject *out = NULL, *encoded = NULL, *first = NULL, *second = NULL;

    if (type == SW_RECORD_REFS) {
        return sw_record_parse_ref(st, tokens, pos);
    }
    if (type == SW_RECORD_RULES) {
        PyObject *qualname = sw_record_next(tokens, pos, "a rule's name"), *ext;

        if (qualname == NULL) {
            return NULL;
        }
        if (!PyUnicode_CheckExact(qualname)) {
            return sw_record_malformed("a str rule name", qualname);
        }
        ext = sw_record_next(tokens, pos, "a rule's extension");
        encoded = ext == NULL ? NULL : sw_record_to_extension(st, ext);
        if (encoded != NULL) {
            first = PyUnicode_FromFormat("str:%U", qualname);
            second = sw_structure_field(st, SW_LABEL_EXTENSION, encoded);
        }
        out = first && second
            ? PyTuple_Pack(3, st->labels[SW_LABEL_REPRESENTATION_RULE], first,
                           second)
            : NULL;
        goto done;
    }
    out = sw_record_parse_ref(st, tokens, pos);
    if (out == NULL) {
        return NULL;
    }
    *block = sw_record_next(tokens, pos, "a block");
    encoded = *block == NULL ? NULL
            : *block == Py_None ? Py_NewRef(st->labels[SW_LABEL_WHOLE])
            : sw_record_is_block(*block) ? sw_structure_encode_block(st, *block)
            : sw_record_malformed("an int, None or tuple of ints block", *block);
    if (encoded != NULL) {
        first = sw_structure_field(st, SW_LABEL_SCALE, out);
        second = sw_structure_field(st, SW_LABEL_BLOCK, encoded);
    }
    Py_SETREF(out, first && second
              ? PyTuple_Pack(3, st->labels[SW_LABEL_LEVEL], first, second)
              : NULL);

done:
    Py_XDECREF(first);
    Py_XDECREF(second);
    Py_XDECREF(encoded);
    return out;
}

/* ("representation_rules", (<LevelExtent(i, block) structure>, ...)) for
 * the blocks of a received block-scaled record's levels, which have been
 * read already (new ref). */
static PyObject *
sw_record_rules_from_levels(sw_state *st, PyObject *blocks)
{
    Py_ssize_t i, n = PyTuple_GET_SIZE(blocks);
    PyTypeObject *tp = st->level_extent_type;
    PyObject *module, *name, *qualname = NULL, *rules = NULL, *field;

    /* As rule.c records it: "str:<module>.<qualname>" of the class. */
    module = PyObject_GetAttr((PyObject *)tp, st->idents[SW_IDENT_MODULE]);
    name = module == NULL ? NULL : PyType_GetQualName(tp);
    if (name != NULL) {
        qualname = PyUnicode_FromFormat("str:%U.%U", module, name);
    }
    Py_XDECREF(module);
    Py_XDECREF(name);
    rules = qualname == NULL ? NULL : PyTuple_New(n);
    for (i = 0; rules != NULL && i < n; i++) {
        PyObject *block = PyTuple_GET_ITEM(blocks, i);
        PyObject *index = PyLong_FromSsize_t(i), *ext = NULL, *rule = NULL;

        if (index != NULL) {
            ext = PyTuple_Pack(2, index, block == Py_None ? st->whole : block);
            Py_DECREF(index);
        }
        if (ext != NULL) {
            Py_SETREF(ext, sw_structure_encode_extension(st, ext, st->reconstruct));
        }
        if (ext != NULL) {
            Py_SETREF(ext, sw_structure_field(st, SW_LABEL_EXTENSION, ext));
        }
        if (ext != NULL) {
            rule = PyTuple_Pack(3, st->labels[SW_LABEL_REPRESENTATION_RULE],
                                qualname, ext);
            Py_DECREF(ext);
        }
        if (rule == NULL) {
            Py_CLEAR(rules);
            break;
        }
        PyTuple_SET_ITEM(rules, i, rule);
    }
    Py_XDECREF(qualname);
    if (rules == NULL) {
        return NULL;
    }
    field = sw_structure_field(st, SW_LABEL_REPRESENTATION_RULES, rules);
    Py_DECREF(rules);
    return field;
}

/* One field at *pos, as version 1 (new ref).  For the levels, *blocks
 * receives a new tuple of their blocks. */
static PyObject *
sw_record_parse_field(sw_state *st, const sw_record_field *field,
                      PyObject *tokens, Py_ssize_t *pos, PyObject **blocks)
{
    PyObject *value, *result;
    Py_ssize_t i, n;

    switch (field->type) {
    case SW_RECORD_INT:
        value = sw_record_next(tokens, pos, "an int");
        if (value == NULL) {
            return NULL;
        }
        if (!PyLong_CheckExact(value)) {
            return sw_record_malformed("an int", value);
        }
        return sw_structure_encode_int(value);
    case SW_RECORD_REF_OR_NONE:
        if (*pos < PyTuple_GET_SIZE(tokens)
            && PyTuple_GET_ITEM(tokens, *pos) == Py_None) {
            (*pos)++;
            return Py_NewRef(st->labels[SW_LABEL_NONE]);
        }
        /* fall through */
    case SW_RECORD_REF:
        return sw_record_parse_ref(st, tokens, pos);
    default:
        break;
    }
    value = sw_record_next(tokens, pos, "a count");
    if (value == NULL) {
        return NULL;
    }
    n = PyLong_CheckExact(value) ? PyLong_AsSsize_t(value) : -1;
    if (n == -1 && PyErr_Occurred()) {
        /* An exact int beyond Py_ssize_t (OverflowError, the only error
         * it can give): a malformed count, reported below. */
        PyErr_Clear();
    }
    /* Every item takes at least one more item of the record. */
    if (n < 0 || n > PyTuple_GET_SIZE(tokens) - *pos) {
        return sw_record_malformed("a count of the items that follow", value);
    }
    result = PyTuple_New(n);
    if (field->type == SW_RECORD_LEVELS && result != NULL) {
        *blocks = PyTuple_New(n);
        if (*blocks == NULL) {
            Py_CLEAR(result);
        }
    }
    for (i = 0; result != NULL && i < n; i++) {
        PyObject *block = NULL;
        PyObject *out = sw_record_parse_item(st, field->type, tokens, pos,
                                             &block);
        if (out == NULL) {
            Py_CLEAR(result);
            break;
        }
        PyTuple_SET_ITEM(result, i, out);
        if (block != NULL) {
            PyTuple_SET_ITEM(*blocks, i, Py_NewRef(block));
        }
    }
    return result;
}

/* The version-1 structure of the record at *pos (new ref), moving *pos
 * past it; *name receives its name (borrowed).  ValueError for a record
 * that is not well formed or nests deeper than the recursion limit. */
static PyObject *
sw_record_parse(sw_state *st, PyObject *tokens, Py_ssize_t *pos,
                PyObject **name)
{
    const sw_record_layout *layout;
    PyObject *structure = NULL, *item, *blocks = NULL;
    long kind;
    int f;

    *name = sw_record_next(tokens, pos, "a name");
    if (*name == NULL) {
        return NULL;
    }
    if (!PyUnicode_CheckExact(*name)) {
        return sw_record_malformed("a str name", *name);
    }
    item = sw_record_next(tokens, pos, "a kind number");
    if (item == NULL) {
        return NULL;
    }
    kind = PyLong_CheckExact(item) ? PyLong_AsLong(item) : -1;
    if (kind == -1 && PyErr_Occurred()) {
        /* An exact int beyond a long (OverflowError only): not a kind
         * number, reported below. */
        PyErr_Clear();
    }
    layout = sw_record_layout_of(kind);
    if (layout == NULL) {
        return sw_record_malformed("a descriptor kind number", item);
    }
    if (Py_EnterRecursiveCall(" while describing a pickle record")) {
        return NULL;    /* made a ValueError once unwound (sw_record_check) */
    }
    structure = PyTuple_New(2 + layout->nfields + layout->rules_from_levels);
    if (structure == NULL) {
        goto done;
    }
    PyTuple_SET_ITEM(structure, 0, Py_NewRef(st->labels[layout->contract]));
    for (f = 0; f <= layout->nfields; f++) {
        PyObject *encoded;
        sw_label label;

        if (f == layout->nfields) {
            label = SW_LABEL_EXTENSION;
            item = sw_record_next(tokens, pos, "an extension tuple");
            encoded = item == NULL ? NULL : sw_record_to_extension(st, item);
        }
        else {
            label = layout->fields[f].label;
            encoded = sw_record_parse_field(st, &layout->fields[f], tokens,
                                            pos, &blocks);
        }
        item = encoded == NULL ? NULL : sw_structure_field(st, label, encoded);
        Py_XDECREF(encoded);
        if (item == NULL) {
            Py_CLEAR(structure);
            goto done;
        }
        PyTuple_SET_ITEM(structure, 1 + f + (f == layout->nfields
                                             ? layout->rules_from_levels : 0),
                         item);
    }
    if (layout->rules_from_levels) {
        /* The levels, the last list-valued field, were read and checked. */
        item = sw_record_rules_from_levels(st, blocks);
        if (item == NULL) {
            Py_CLEAR(structure);
            goto done;
        }
        PyTuple_SET_ITEM(structure, 1 + layout->nfields, item);
    }

done:
    Py_XDECREF(blocks);
    Py_LeaveRecursiveCall();
    return structure;
}

/* The version-1 structure a whole received record stands for (new ref). */
static PyObject *
sw_record_to_structure(sw_state *st, PyObject *record)
{
    Py_ssize_t pos = 0;
    PyObject *name, *structure = sw_record_parse(st, record, &pos, &name);

    /* At most one item follows: the numeric records it states. */
    if (structure != NULL && PyTuple_GET_SIZE(record) - pos > 1) {
        PyErr_Format(PyExc_ValueError,
                     "malformed pickle record: %zd items after its end",
                     PyTuple_GET_SIZE(record) - pos);
        Py_CLEAR(structure);
    }
    return structure;
}

/* ---- loading ---------------------------------------------------------------- */

/* 1 when the received `record`'s structure equals `d`'s, with *stated the
 * item that follows it (borrowed; NULL for none); 0 when it differs; -1
 * on error.  `d`'s own record is made without settling anything: loading
 * must not settle a dtype whose record the pickle may state. */
static int
sw_record_same_structure(sw_state *st, sw_descriptor *d, PyObject *reduced,
                         PyObject *record, PyObject **stated)
{
    PyObject *planes, *ours, *prefix;
    Py_ssize_t n, m = PyTuple_GET_SIZE(record);
    int states, equal = 0;

    *stated = NULL;
    planes = sw_record_stated_planes(st, d);
    if (planes == NULL) {
        return -1;
    }
    states = PyList_GET_SIZE(planes) > 0;
    Py_DECREF(planes);
    ours = sw_record_structure_part(st, d, reduced, states);
    if (ours == NULL) {
        return -1;
    }
    n = PyTuple_GET_SIZE(ours);
    if (m == n || (states && m == n + 1)) {
        prefix = m == n ? Py_NewRef(record) : PyTuple_GetSlice(record, 0, n);
        equal = prefix == NULL ? -1 : sw_record_equal(ours, prefix);
        Py_XDECREF(prefix);
        if (equal == 1 && m == n + 1) {
            *stated = PyTuple_GET_ITEM(record, n);
        }
    }
    Py_DECREF(ours);
    return equal;
}

int
sw_record_check(sw_state *st, sw_descriptor *d, PyObject *record)
{
    PyObject *reduced, *theirs, *diff, *stated;
    int equal;

    /* Fast: a record equal to the one `d` pickles as, once everything it
     * states is settled (then that record is final), matches. */
    reduced = sw_private_get(st->pickles, (PyObject *)d);
    if (reduced == NULL && PyErr_Occurred()) {
        return -1;
    }
    if (reduced == NULL && sw_record_settled(d)) {
        reduced = sw_record_reduce(st, d);
        if (reduced == NULL) {
            return -1;
        }
    }
    equal = reduced == NULL ? 0 : sw_record_equal(sw_record_in(reduced), record);
    if (equal != 0) {
        Py_DECREF(reduced);
        return equal < 0 ? -1 : 0;
    }
    /* Otherwise the structure, then what the record states after it. */
    equal = sw_record_same_structure(st, d, reduced, record, &stated);
    Py_XDECREF(reduced);
    if (equal != 0) {
        /* `stated` is an item of `record`, which the caller holds. */
        return equal < 0 ? -1 : sw_record_check_stated(st, d, stated);
    }
    theirs = sw_record_to_structure(st, record);
    if (theirs == NULL) {
        /* Converted only here, with the stack unwound: raising a new
         * exception at the recursion limit itself fails on CPython 3.12+. */
        if (PyErr_ExceptionMatches(PyExc_RecursionError)) {
            PyErr_Clear();
            PyErr_SetString(PyExc_ValueError,
                            "malformed pickle record: it nests deeper than "
                            "this process can describe");
        }
        if (PyErr_ExceptionMatches(PyExc_ValueError)) {
            PyObject *value = PyErr_GetRaisedException();

            PyErr_Format(PyExc_ValueError, "cannot unpickle descriptor %R: %S",
                         d->name, value != NULL ? value : Py_None);
            Py_XDECREF(value);
        }
        return -1;
    }
    diff = sw_structure_diff(d->structure, theirs);
    Py_DECREF(theirs);
    if (diff == NULL) {
        return -1;
    }
    if (diff == Py_None) {
        /* Equal as structures, different as records: only a value the
         * version-1 encoding cannot tell apart, which none is. */
        Py_DECREF(diff);
        PyErr_Format(PyExc_ValueError,
                     "cannot unpickle descriptor %R: the pickle record "
                     "differs from the one registered in this process",
                     d->name);
        return -1;
    }
    PyErr_Format(PyExc_ValueError,
                 "cannot unpickle descriptor %R: the pickled structure "
                 "differs from the one registered in this process %U",
                 d->name, diff);
    Py_DECREF(diff);
    return -1;
}
