/* structure.c: the canonical structure format (version 1).
 *
 * Owns the encoding of structure_extension() values into tagged-string
 * leaves, the shape of references and fields, and the exact comparison of
 * a registered structure with an untrusted one (used by unpickling), which
 * reports the first difference.  A structure is a nested tuple whose leaves
 * are all exact str, so Python's == and hash on it are exact too.  The
 * format is documented in docs/structure.md and is a compatibility promise.
 */
#include "structure.h"
#include "descriptor.h"
#include "privtable.h"

#include <stdarg.h>
#include <string.h>

/* ---- encoding extension values ------------------------------------------ */

static PyObject *
sw_structure_encode_float(PyObject *value)
{
    double x = PyFloat_AS_DOUBLE(value);
    uint64_t bits;
    char buf[32];

    memcpy(&bits, &x, sizeof bits);
    PyOS_snprintf(buf, sizeof buf, "float:%016llx", (unsigned long long)bits);
    return PyUnicode_FromString(buf);
}

/* "int:<decimal>" for values that fit in 64 bits, "int:0x<hex>" (or
 * "int:-0x<hex>") beyond: canonical for every value, readable for usual
 * ones, and never subject to the int-to-decimal digit limit. */
PyObject *
sw_structure_encode_int(PyObject *value)
{
    int overflow;
    long long small = PyLong_AsLongLongAndOverflow(value, &overflow);
    PyObject *digits, *result;

    if (small == -1 && overflow == 0 && PyErr_Occurred()) {
        return NULL;
    }
    if (!overflow) {
        char buf[32];
        PyOS_snprintf(buf, sizeof buf, "int:%lld", small);
        return PyUnicode_FromString(buf);
    }
    digits = PyNumber_ToBase(value, 16);   /* exact int: no user code */
    if (digits == NULL) {
        return NULL;
    }
    result = PyUnicode_FromFormat("int:%U", digits);
    Py_DECREF(digits);
    return result;
}

/* A Level's block or a LevelExtent's extent (new ref): "whole" for
 * Whole, "int:<n>" for an int, a tuple of "int:<n>" for an N-D block.
 * `block` is Whole, an exact int, or an exact tuple of exact ints. */
PyObject *
sw_structure_encode_block(sw_state *st, PyObject *block)
{
    Py_ssize_t i, n;
    PyObject *result;

    if (block == st->whole) {
        return Py_NewRef(st->labels[SW_LABEL_WHOLE]);
    }
    if (!PyTuple_CheckExact(block)) {
        return sw_structure_encode_int(block);
    }
    n = PyTuple_GET_SIZE(block);
    result = PyTuple_New(n);
    for (i = 0; result != NULL && i < n; i++) {
        PyObject *item = sw_structure_encode_int(PyTuple_GET_ITEM(block, i));
        if (item == NULL) {
            Py_CLEAR(result);
            break;
        }
        PyTuple_SET_ITEM(result, i, item);
    }
    return result;
}

static PyObject *
sw_structure_encode_value(sw_state *st, PyObject *value, PyObject *owner);

static PyObject *
sw_structure_encode_tuple(sw_state *st, PyObject *tuple, PyObject *owner)
{
    Py_ssize_t i, n = PyTuple_GET_SIZE(tuple);
    PyObject *result;

    if (Py_EnterRecursiveCall(" while encoding a structure_extension() tuple")) {
        return NULL;
    }
    result = PyTuple_New(n);
    if (result == NULL) {
        goto done;
    }
    for (i = 0; i < n; i++) {
        PyObject *item = sw_structure_encode_value(st, PyTuple_GET_ITEM(tuple, i), owner);
        if (item == NULL) {
            Py_CLEAR(result);
            goto done;
        }
        PyTuple_SET_ITEM(result, i, item);
    }
done:
    Py_LeaveRecursiveCall();
    return result;
}

static PyObject *
sw_structure_encode_value(sw_state *st, PyObject *value, PyObject *owner)
{
    PyTypeObject *tp = Py_TYPE(value);

    if (tp == &PyUnicode_Type) {
        return PyUnicode_FromFormat("str:%U", value);
    }
    if (tp == &PyBool_Type) {
        return PyUnicode_FromString(value == Py_True ? "bool:True" : "bool:False");
    }
    if (tp == &PyLong_Type) {
        return sw_structure_encode_int(value);
    }
    if (tp == &PyFloat_Type) {
        return sw_structure_encode_float(value);
    }
    if (value == Py_None) {
        return Py_NewRef(st->labels[SW_LABEL_NONE]);
    }
    if (value == st->whole) {
        return Py_NewRef(st->labels[SW_LABEL_WHOLE]);
    }
    if (tp == &PyTuple_Type) {
        return sw_structure_encode_tuple(st, value, owner);
    }
    PyErr_Format(PyExc_TypeError,
                 "%R.structure_extension(): expected a tuple of exact str, "
                 "int, float, bool, None, Whole or nested tuples of those, "
                 "got a value of type %s",
                 owner, tp->tp_name);
    return NULL;
}

/* Validate and encode the result of structure_extension() (a new ref). */
PyObject *
sw_structure_encode_extension(sw_state *st, PyObject *ext, PyObject *owner)
{
    if (!PyTuple_Check(ext)) {
        PyErr_Format(PyExc_TypeError,
                     "%R.structure_extension(): expected a tuple, got %s",
                     owner, Py_TYPE(ext)->tp_name);
        return NULL;
    }
    /* A tuple subclass is read through the C API only: its dunders never
     * run, and the recorded value is a plain tuple. */
    return sw_structure_encode_tuple(st, ext, owner);
}

/* ---- building blocks ----------------------------------------------------- */

static const char *const sw_structure_label_text[SW_LABEL_COUNT] = {
    [SW_LABEL_REF] = "ref",
    [SW_LABEL_NONE] = "none",
    [SW_LABEL_WHOLE] = "whole",
    [SW_LABEL_EXTENSION] = "extension",
    [SW_LABEL_SUPERTYPE] = "supertype",
    [SW_LABEL_BITS] = "bits",
    [SW_LABEL_SIMPLE_TYPES] = "simple_types",
    [SW_LABEL_REPRESENTATION_RULES] = "representation_rules",
    [SW_LABEL_ELEMENT] = "element",
    [SW_LABEL_LEVELS] = "levels",
    [SW_LABEL_LEVEL] = "Level",
    [SW_LABEL_SCALE] = "scale",
    [SW_LABEL_BLOCK] = "block",
    [SW_LABEL_DTYPE_CATEGORY] = "DTypeCategory",
    [SW_LABEL_SIMPLE_DTYPE] = "SimpleDType",
    [SW_LABEL_COMPOUND_DTYPE] = "CompoundDType",
    [SW_LABEL_BLOCK_SCALED_DTYPE] = "BlockScaledDType",
    [SW_LABEL_REPRESENTATION_RULE] = "RepresentationRule",
};

int
sw_structure_labels_init(sw_state *st)
{
    if (sw_state_intern_all(st->labels, sw_structure_label_text,
                            SW_LABEL_COUNT) < 0) {
        return -1;
    }
    st->empty_extension = PyTuple_Pack(2, st->labels[SW_LABEL_EXTENSION],
                                       st->empty_tuple);
    return st->empty_extension ? 0 : -1;
}

/* (<label>, value): steals nothing, returns a new ref. */
PyObject *
sw_structure_field(sw_state *st, sw_label label, PyObject *value)
{
    if (label == SW_LABEL_EXTENSION && value == st->empty_tuple) {
        return Py_NewRef(st->empty_extension);
    }
    return PyTuple_Pack(2, st->labels[label], value);
}

/* ("ref", "str:<name>", <structure>) for a registered descriptor (new
 * ref).  Built once per referenced descriptor and shared by every
 * structure that refers to it: no copies in memory, and a pickle that
 * refers to one descriptor twice (NVFP4's planes all sit under Floating)
 * memoizes the second reference. */
PyObject *
sw_structure_ref(sw_state *st, sw_descriptor *d)
{
    PyObject *name, *ref, *found;

    assert(d->structure != NULL);
    found = sw_private_get(st->refs, (PyObject *)d);
    if (found != NULL || PyErr_Occurred()) {
        return found;
    }
    name = PyUnicode_FromFormat("str:%U", d->name);
    if (name == NULL) {
        return NULL;
    }
    ref = PyTuple_Pack(3, st->labels[SW_LABEL_REF], name, d->structure);
    Py_DECREF(name);
    if (ref == NULL) {
        return NULL;
    }
    /* Keys are registered descriptors (identity hash), so the table is
     * bounded by the registry. */
    found = sw_private_setdefault(st->refs, (PyObject *)d, ref);   /* borrowed */
    Py_DECREF(ref);
    return Py_XNewRef(found);
}

/* ---- describing and comparing ---------------------------------------------- */

/* The longest tuple of ints a message spells out item by item. */
#define SW_DESCRIBE_INTS_MAX 16

/* Is `leaf` an "int:<n>" leaf? */
static int
sw_structure_is_int_leaf(PyObject *leaf)
{
    return PyUnicode_CheckExact(leaf) && PyUnicode_GET_LENGTH(leaf) >= 5
           && PyUnicode_READ_CHAR(leaf, 0) == 'i'
           && PyUnicode_READ_CHAR(leaf, 1) == 'n'
           && PyUnicode_READ_CHAR(leaf, 2) == 't'
           && PyUnicode_READ_CHAR(leaf, 3) == ':';
}

/* "(a, b)" for a tuple of str parts, "(a,)" for one (new ref); takes
 * `parts` (a new reference, or NULL with an exception set). */
static PyObject *
sw_structure_parts_text(PyObject *parts)
{
    PyObject *sep, *joined, *result;
    Py_ssize_t n;

    if (parts == NULL) {
        return NULL;
    }
    n = PyTuple_GET_SIZE(parts);
    sep = PyUnicode_FromString(", ");
    joined = sep == NULL ? NULL : PyUnicode_Join(sep, parts);
    Py_XDECREF(sep);
    Py_DECREF(parts);
    if (joined == NULL) {
        return NULL;
    }
    result = PyUnicode_FromFormat("(%U%s)", joined, n == 1 ? "," : "");
    Py_DECREF(joined);
    return result;
}

/* "(16, 16)" for a tuple of "int:" leaves, "(32,)" for one (new ref). */
static PyObject *
sw_structure_ints_text(PyObject *leaves)
{
    Py_ssize_t i, n = PyTuple_GET_SIZE(leaves);
    PyObject *parts = PyTuple_New(n);

    for (i = 0; parts != NULL && i < n; i++) {
        PyObject *leaf = PyTuple_GET_ITEM(leaves, i);
        PyObject *payload = PyUnicode_Substring(leaf, 4, PyUnicode_GET_LENGTH(leaf));
        if (payload == NULL) {
            Py_CLEAR(parts);
            break;
        }
        PyTuple_SET_ITEM(parts, i, payload);
    }
    return sw_structure_parts_text(parts);
}

/* A block that is not Whole (an exact int, or an exact tuple of exact
 * ints) as messages show it: "32", "(16, 16)", with ints beyond 64 bits in
 * hex as the structure encodes them, so no size hits the int-to-decimal
 * digit limit (new ref). */
PyObject *
sw_structure_block_text(PyObject *block)
{
    PyObject *encoded, *text;

    if (PyTuple_CheckExact(block)) {
        Py_ssize_t i, n = PyTuple_GET_SIZE(block);

        encoded = PyTuple_New(n);
        for (i = 0; encoded != NULL && i < n; i++) {
            PyObject *leaf = sw_structure_encode_int(PyTuple_GET_ITEM(block, i));
            if (leaf == NULL) {
                Py_CLEAR(encoded);
                break;
            }
            PyTuple_SET_ITEM(encoded, i, leaf);
        }
        text = encoded == NULL ? NULL : sw_structure_ints_text(encoded);
    }
    else {
        encoded = sw_structure_encode_int(block);
        text = encoded == NULL ? NULL
             : PyUnicode_Substring(encoded, 4, PyUnicode_GET_LENGTH(encoded));
    }
    Py_XDECREF(encoded);
    return text;
}

/* `value`, an argument or a pickle's item that a refusal shows, as text
 * (new ref), running no code of it: an exact int in decimal, or in hex
 * where the int-to-decimal digit limit refuses decimal (a message must not
 * fail for the size of what it shows); an exact str, float, bool or None
 * as its repr; an exact tuple of those item by item; anything else (a
 * subclass, whose methods are user code) as "an object of type <name>". */
PyObject *
sw_structure_value_text(PyObject *value)
{
    if (PyLong_CheckExact(value)) {
        PyObject *text = PyObject_Repr(value);

        /* Only the digit limit refuses an exact int's decimal with a
         * ValueError (a MemoryError propagates). */
        if (text == NULL && PyErr_ExceptionMatches(PyExc_ValueError)) {
            PyErr_Clear();
            text = PyNumber_ToBase(value, 16);
        }
        return text;
    }
    if (PyUnicode_CheckExact(value) || PyFloat_CheckExact(value)
        || PyBool_Check(value) || value == Py_None) {
        return PyObject_Repr(value);
    }
    if (PyTuple_CheckExact(value)) {
        Py_ssize_t i, n = PyTuple_GET_SIZE(value);
        PyObject *items;

        if (Py_EnterRecursiveCall(" while showing a value")) {
            return NULL;
        }
        items = PyTuple_New(n);
        for (i = 0; items != NULL && i < n; i++) {
            PyObject *item = sw_structure_value_text(PyTuple_GET_ITEM(value, i));
            if (item == NULL) {
                Py_CLEAR(items);
                break;
            }
            PyTuple_SET_ITEM(items, i, item);
        }
        Py_LeaveRecursiveCall();
        return sw_structure_parts_text(items);
    }
    return PyUnicode_FromFormat("an object of type %.200s", Py_TYPE(value)->tp_name);
}

/* Raise `exc`: the text of `format` (PyUnicode_FromFormat's) followed by
 * `value` as sw_structure_value_text shows it, so a refusal runs no code
 * of the argument it names (a subclass's __repr__) and shows an int of any
 * size.  Returns -1. */
int
sw_structure_refuse(PyObject *exc, PyObject *value, const char *format, ...)
{
    PyObject *text, *shown;
    va_list vargs;

    va_start(vargs, format);
    text = PyUnicode_FromFormatV(format, vargs);
    va_end(vargs);
    shown = text != NULL ? sw_structure_value_text(value) : NULL;
    if (shown != NULL) {
        PyErr_Format(exc, "%U%U", text, shown);
    }
    Py_XDECREF(text);
    Py_XDECREF(shown);
    return -1;
}

/* "(16, 16) (tuple)" for a short, non-empty tuple of "int:" leaves (an
 * N-D block), NULL without an exception for any other object. */
static PyObject *
sw_structure_describe_ints(PyObject *leaf)
{
    Py_ssize_t i, n;
    PyObject *ints, *result;

    if (!PyTuple_CheckExact(leaf)) {
        return NULL;
    }
    n = PyTuple_GET_SIZE(leaf);
    if (n == 0 || n > SW_DESCRIBE_INTS_MAX) {
        return NULL;
    }
    for (i = 0; i < n; i++) {
        if (!sw_structure_is_int_leaf(PyTuple_GET_ITEM(leaf, i))) {
            return NULL;
        }
    }
    ints = sw_structure_ints_text(leaf);
    if (ints == NULL) {
        return NULL;
    }
    result = PyUnicode_FromFormat("%U (tuple)", ints);
    Py_DECREF(ints);
    return result;
}

/* A readable form of one leaf of a structure, never running user code:
 * "int:32" -> "32 (int)"; ("int:16", "int:16") -> "(16, 16) (tuple)"; a
 * non-str object -> "<object of type list>". */
PyObject *
sw_structure_describe_leaf(PyObject *leaf)
{
    Py_ssize_t colon;

    if (PyTuple_CheckExact(leaf)) {
        PyObject *ints = sw_structure_describe_ints(leaf);

        if (ints != NULL || PyErr_Occurred()) {
            return ints;
        }
        return PyUnicode_FromFormat("a tuple of %zd items",
                                    PyTuple_GET_SIZE(leaf));
    }
    if (!PyUnicode_CheckExact(leaf)) {
        return PyUnicode_FromFormat("an object of type %s",
                                    Py_TYPE(leaf)->tp_name);
    }
    colon = PyUnicode_FindChar(leaf, ':', 0, PyUnicode_GET_LENGTH(leaf), 1);
    if (colon == -2) {
        return NULL;
    }
    if (colon < 0) {
        /* The untagged values read as what they encode. */
        if (PyUnicode_CompareWithASCIIString(leaf, "whole") == 0) {
            return PyUnicode_FromString("Whole");
        }
        if (PyUnicode_CompareWithASCIIString(leaf, "none") == 0) {
            return PyUnicode_FromString("None");
        }
        return PyUnicode_FromFormat("%R", leaf);
    }
    else {
        PyObject *tag = PyUnicode_Substring(leaf, 0, colon);
        PyObject *payload = PyUnicode_Substring(leaf, colon + 1,
                                                PyUnicode_GET_LENGTH(leaf));
        PyObject *result = NULL;

        if (tag != NULL && payload != NULL) {
            if (PyUnicode_CompareWithASCIIString(tag, "str") == 0) {
                result = PyUnicode_FromFormat("%R (str)", payload);
            }
            else if (PyUnicode_CompareWithASCIIString(tag, "float") == 0) {
                result = PyUnicode_FromFormat("float with bits 0x%U", payload);
            }
            else {
                result = PyUnicode_FromFormat("%U (%U)", payload, tag);
            }
        }
        Py_XDECREF(tag);
        Py_XDECREF(payload);
        return result;
    }
}

#define SW_MAX_PATH 64

/* One step of the path to a difference: a label (contract, field or
 * referenced name; borrowed from `ours`) or, inside an unlabeled tuple
 * (the planes, the levels, the rules), a position. */
typedef struct {
    PyObject *label;       /* NULL for a position */
    Py_ssize_t index;
} sw_step;

typedef struct {
    sw_step steps[SW_MAX_PATH];
    int depth;
    const char *theirs;    /* what the second structure is called */
} sw_path;

static int
sw_structure_is_label(PyObject *obj)
{
    /* Labels (contract names, field names, "ref") are untagged: no colon.
     * "none" and "whole" are untagged values, never labels. */
    return PyUnicode_CheckExact(obj)
        && PyUnicode_FindChar(obj, ':', 0, PyUnicode_GET_LENGTH(obj), 1) == -1
        && PyUnicode_CompareWithASCIIString(obj, "none") != 0
        && PyUnicode_CompareWithASCIIString(obj, "whole") != 0;
}

static void
sw_structure_path_push(sw_path *path, PyObject *label, Py_ssize_t index)
{
    if (path->depth < SW_MAX_PATH) {
        path->steps[path->depth].label = label;
        path->steps[path->depth].index = index;
    }
    path->depth++;
}

/* "BlockScaledDType.levels[1].Level.block" */
static PyObject *
sw_structure_path_string(sw_path *path)
{
    PyObject *result = PyUnicode_FromString(""), *part;
    int i;

    for (i = 0; result != NULL && i < path->depth && i < SW_MAX_PATH; i++) {
        sw_step *step = &path->steps[i];

        if (step->label == NULL) {
            part = PyUnicode_FromFormat("[%zd]", step->index);
        }
        else {
            /* A referenced descriptor's "str:<name>" shows as its name. */
            PyObject *seg = step->label;
            Py_ssize_t len = PyUnicode_GET_LENGTH(seg);
            Py_ssize_t colon = PyUnicode_FindChar(seg, ':', 0, len, 1);

            if (colon == -2) {
                Py_CLEAR(result);
                break;
            }
            seg = colon >= 0 ? PyUnicode_Substring(seg, colon + 1, len)
                             : Py_NewRef(seg);
            part = seg == NULL ? NULL
                 : PyUnicode_FromFormat("%s%U", i ? "." : "", seg);
            Py_XDECREF(seg);
        }
        if (part == NULL) {
            Py_CLEAR(result);
            break;
        }
        Py_SETREF(result, PyUnicode_Concat(result, part));
        Py_DECREF(part);
    }
    if (result != NULL && path->depth > SW_MAX_PATH) {
        part = PyUnicode_FromString("...");
        if (part == NULL) {
            Py_CLEAR(result);
        }
        else {
            Py_SETREF(result, PyUnicode_Concat(result, part));
            Py_DECREF(part);
        }
    }
    return result;
}

/* Does `theirs` (untrusted) carry a ("opaque_storage", ...) field? */
static int
sw_structure_has_opaque_storage_field(PyObject *theirs)
{
    Py_ssize_t i;

    if (!PyTuple_CheckExact(theirs)) {
        return 0;
    }
    for (i = 0; i < PyTuple_GET_SIZE(theirs); i++) {
        PyObject *item = PyTuple_GET_ITEM(theirs, i);
        if (PyTuple_CheckExact(item) && PyTuple_GET_SIZE(item) >= 1) {
            PyObject *label = PyTuple_GET_ITEM(item, 0);
            if (PyUnicode_CheckExact(label)
                && PyUnicode_CompareWithASCIIString(label, "opaque_storage") == 0) {
                return 1;
            }
        }
    }
    return 0;
}

static PyObject *
sw_structure_diff_message(sw_path *path, PyObject *ours, PyObject *theirs)
{
    PyObject *where = NULL, *mine = NULL, *other = NULL, *result = NULL;

    where = sw_structure_path_string(path);
    if (where == NULL) {
        goto done;
    }
    if (PyTuple_CheckExact(ours) && PyTuple_GET_SIZE(ours) > 0
        && PyUnicode_CheckExact(PyTuple_GET_ITEM(ours, 0))
        && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(ours, 0),
                                            "DTypeCategory") == 0
        && sw_structure_has_opaque_storage_field(theirs)) {
        result = PyUnicode_FromFormat(
            "at %U: the pickle carries the removed opaque-storage disposition "
            "(an 'opaque_storage' field) in a category structure; categories "
            "now describe hierarchy relationships only", where);
        goto done;
    }
    mine = sw_structure_describe_ints(ours);
    if (mine == NULL && PyErr_Occurred()) {
        goto done;
    }
    if (mine == NULL && PyTuple_CheckExact(ours) && PyTuple_CheckExact(theirs)) {
        result = PyUnicode_FromFormat(
            "at %U: registered has %zd fields, %s has %zd", where,
            PyTuple_GET_SIZE(ours), path->theirs, PyTuple_GET_SIZE(theirs));
        goto done;
    }
    if (mine == NULL) {
        mine = sw_structure_describe_leaf(ours);
    }
    other = sw_structure_describe_leaf(theirs);
    if (mine != NULL && other != NULL) {
        result = PyUnicode_FromFormat("at %U: registered %U, %s has %U",
                                      where, mine, path->theirs, other);
    }
done:
    Py_XDECREF(where);
    Py_XDECREF(mine);
    Py_XDECREF(other);
    return result;
}

/* Is the path at the value of a Level's ("block", <value>) field?  Only
 * a Level has an untagged "block" label (extension values are tagged). */
static int
sw_structure_at_block(sw_path *path)
{
    PyObject *label;

    if (path->depth < 1 || path->depth > SW_MAX_PATH) {
        return 0;
    }
    label = path->steps[path->depth - 1].label;
    return label != NULL && PyUnicode_CompareWithASCIIString(label, "block") == 0;
}

static int sw_structure_equal(PyObject *ours, PyObject *theirs, int depth);

/* One exact tuple of `ours` being compared with its counterpart. */
typedef struct {
    PyObject *ours;         /* borrowed: exact tuple */
    PyObject *theirs;       /* borrowed: exact tuple of the same size */
    Py_ssize_t next;        /* the next item to compare */
    int pushed;             /* this level named a path step (its label) */
    int sequence;           /* unlabeled: its items are named by position */
} sw_diff_frame;

/* Walk `ours` (trusted, exact tuples and str) and `theirs` (untrusted) in
 * step.  Returns 0 when equal, 1 with *message set to a new str at the first
 * difference, -1 on error.  Only exact tuple and exact str can match, so no
 * method of a payload object ever runs, and nothing here can free them.
 * The walk keeps its own stack on the heap, sized by the depth of `ours`:
 * a registered structure may be deeper than the C recursion limit (a long
 * category chain nests three tuples per level), and a payload is only ever
 * followed as deep as `ours` goes. */
static int
sw_structure_diff_walk(PyObject *ours, PyObject *theirs, sw_path *path,
             PyObject **message)
{
    sw_diff_frame *stack = NULL, *top;
    Py_ssize_t depth = 0, capacity = 0, n;
    int status = 0;

    for (;;) {
        if (PyUnicode_CheckExact(ours)) {
            int eq = -1;
            if (PyUnicode_CheckExact(theirs)) {
                eq = PyUnicode_Compare(ours, theirs);
                if (eq == -1 && PyErr_Occurred()) {
                    status = -1;
                    break;
                }
            }
            if (eq != 0) {
                *message = sw_structure_diff_message(path, ours, theirs);
                status = *message ? 1 : -1;
                break;
            }
        }
        else if (sw_structure_at_block(path)) {
            /* An N-D block is one value: compared, and shown, whole. */
            if (!sw_structure_equal(ours, theirs, 1)) {
                *message = sw_structure_diff_message(path, ours, theirs);
                status = *message ? 1 : -1;
                break;
            }
        }
        else {
            int pushed = 0;

            assert(PyTuple_CheckExact(ours));
            n = PyTuple_GET_SIZE(ours);
            /* Name this level after its label: contract, field or
             * referenced name; the items of an unlabeled tuple are named
             * by position. */
            if (n > 0 && sw_structure_is_label(PyTuple_GET_ITEM(ours, 0))) {
                PyObject *label = PyTuple_GET_ITEM(ours, 0);
                if (n == 3 && PyUnicode_CompareWithASCIIString(label, "ref") == 0) {
                    label = PyTuple_GET_ITEM(ours, 1);   /* "str:<name>" */
                }
                sw_structure_path_push(path, label, 0);
                pushed = 1;
            }
            if (!PyTuple_CheckExact(theirs) || PyTuple_GET_SIZE(theirs) != n) {
                *message = sw_structure_diff_message(path, ours, theirs);
                status = *message ? 1 : -1;
                break;
            }
            if (depth == capacity) {
                Py_ssize_t grown = capacity ? capacity * 2 : 32;
                sw_diff_frame *more = PyMem_Realloc(
                    stack, (size_t)grown * sizeof(sw_diff_frame));
                if (more == NULL) {
                    PyErr_NoMemory();
                    status = -1;
                    break;
                }
                stack = more;
                capacity = grown;
            }
            stack[depth].ours = ours;
            stack[depth].theirs = theirs;
            stack[depth].next = 0;
            stack[depth].pushed = pushed;
            stack[depth].sequence = !pushed;
            depth++;
        }
        /* The next pair: the next item of the innermost unfinished tuple. */
        for (;;) {
            if (depth == 0) {
                goto done;
            }
            top = &stack[depth - 1];
            if (top->sequence && top->next > 0) {
                path->depth--;      /* the previous item's position */
            }
            if (top->next < PyTuple_GET_SIZE(top->ours)) {
                if (top->sequence) {
                    sw_structure_path_push(path, NULL, top->next);
                }
                ours = PyTuple_GET_ITEM(top->ours, top->next);
                theirs = PyTuple_GET_ITEM(top->theirs, top->next);
                top->next++;
                break;
            }
            if (top->pushed) {
                path->depth--;
            }
            depth--;
        }
    }
done:
    PyMem_Free(stack);
    return status;
}

/* Equal exact str objects, compared by their code points. */
static int
sw_structure_str_equal(PyObject *a, PyObject *b)
{
    Py_ssize_t len = PyUnicode_GET_LENGTH(a);

    return len == PyUnicode_GET_LENGTH(b)
        && PyUnicode_KIND(a) == PyUnicode_KIND(b)
        && memcmp(PyUnicode_DATA(a), PyUnicode_DATA(b),
                  (size_t)len * PyUnicode_KIND(a)) == 0;
}

/* The fast check behind unpickling: 1 when `theirs` equals `ours`
 * exactly, 0 when it differs or is deeper than `depth` allows (the caller
 * then walks it again to name the difference).  Only exact tuple and
 * exact str match, so no payload code runs; recursion follows `ours`. */
static int
sw_structure_equal(PyObject *ours, PyObject *theirs, int depth)
{
    Py_ssize_t i, n;

    if (ours == theirs) {
        return 1;
    }
    if (PyUnicode_CheckExact(ours)) {
        return PyUnicode_CheckExact(theirs) && sw_structure_str_equal(ours, theirs);
    }
    n = PyTuple_GET_SIZE(ours);
    if (depth == 0 || !PyTuple_CheckExact(theirs)
        || PyTuple_GET_SIZE(theirs) != n) {
        return 0;
    }
    for (i = 0; i < n; i++) {
        if (!sw_structure_equal(PyTuple_GET_ITEM(ours, i),
                                PyTuple_GET_ITEM(theirs, i), depth - 1)) {
            return 0;
        }
    }
    return 1;
}

/* Compare a registered structure with an untrusted one.  Returns None when
 * they are identical, a str describing the first difference otherwise, or
 * NULL with an exception set. */
PyObject *
sw_structure_diff(PyObject *ours, PyObject *theirs)
{
    return sw_structure_diff_as(ours, theirs, "pickle");
}

/* As sw_structure_diff; `theirs_label` names the second structure in the
 * message ("registered 16 (int), <theirs_label> has 32 (int)"). */
PyObject *
sw_structure_diff_as(PyObject *ours, PyObject *theirs, const char *theirs_label)
{
    sw_path path;
    PyObject *message = NULL;
    int status;

    /* Deep enough for every structure of the model; a deeper extension is
     * compared by the walk below. */
    if (sw_structure_equal(ours, theirs, 64)) {
        Py_RETURN_NONE;
    }
    path.depth = 0;
    path.theirs = theirs_label;
    status = sw_structure_diff_walk(ours, theirs, &path, &message);
    if (status < 0) {
        return NULL;
    }
    if (status == 0) {
        Py_RETURN_NONE;
    }
    return message;
}
