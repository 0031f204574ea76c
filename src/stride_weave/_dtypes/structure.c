/* structure.c: the canonical structure format (version 1).
 *
 * Owns the encoding of structure_extension() values into tagged-string
 * leaves, the shape of references and fields, and the exact comparison of
 * a registered structure with an untrusted one (used by unpickling), which
 * reports the first difference.  A structure is a nested tuple whose leaves
 * are all exact str, so Python's == and hash on it are exact too.  The
 * format is documented in docs/structure.md and is a compatibility promise.
 */
#include "sw_internal.h"

#include <string.h>

/* ---- encoding extension values ------------------------------------------ */

static PyObject *
sw_encode_float(PyObject *value)
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

static PyObject *
sw_encode_value(sw_state *st, PyObject *value, PyObject *owner);

static PyObject *
sw_encode_tuple(sw_state *st, PyObject *tuple, PyObject *owner)
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
        PyObject *item = sw_encode_value(st, PyTuple_GET_ITEM(tuple, i), owner);
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
sw_encode_value(sw_state *st, PyObject *value, PyObject *owner)
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
        return sw_encode_float(value);
    }
    if (value == Py_None) {
        return PyUnicode_FromString("none");
    }
    if (value == st->whole) {
        return PyUnicode_FromString("whole");
    }
    if (tp == &PyTuple_Type) {
        return sw_encode_tuple(st, value, owner);
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
    return sw_encode_tuple(st, ext, owner);
}

/* ---- building blocks ----------------------------------------------------- */

/* ("<label>", value): steals nothing, returns a new ref. */
PyObject *
sw_structure_field(const char *label, PyObject *value)
{
    PyObject *key = PyUnicode_FromString(label);
    PyObject *result;

    if (key == NULL) {
        return NULL;
    }
    result = PyTuple_Pack(2, key, value);
    Py_DECREF(key);
    return result;
}

/* ("ref", "str:<name>", <structure>) for a finished descriptor. */
PyObject *
sw_structure_ref(sw_descriptor *d)
{
    PyObject *name, *result;

    assert(d->structure != NULL);
    name = PyUnicode_FromFormat("str:%U", d->name);
    if (name == NULL) {
        return NULL;
    }
    result = Py_BuildValue("(sNO)", "ref", name, d->structure);
    return result;
}

/* ---- describing and comparing ---------------------------------------------- */

/* A readable form of one leaf of a structure, never running user code:
 * "int:32" -> "32 (int)"; a non-str object -> "<object of type list>". */
PyObject *
sw_structure_describe_leaf(PyObject *leaf)
{
    Py_ssize_t colon;

    if (PyTuple_CheckExact(leaf)) {
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

typedef struct {
    PyObject *segments[SW_MAX_PATH];   /* borrowed from `ours` */
    int depth;
} sw_path;

static int
sw_is_label(PyObject *obj)
{
    /* Labels (contract names, field names, "ref") are untagged: no colon. */
    return PyUnicode_CheckExact(obj)
        && PyUnicode_FindChar(obj, ':', 0, PyUnicode_GET_LENGTH(obj), 1) == -1;
}

static PyObject *
sw_path_string(sw_path *path)
{
    PyObject *parts = PyList_New(0), *sep = NULL, *result = NULL;
    int i;

    if (parts == NULL) {
        return NULL;
    }
    for (i = 0; i < path->depth && i < SW_MAX_PATH; i++) {
        PyObject *seg = path->segments[i];
        Py_ssize_t len = PyUnicode_GET_LENGTH(seg);
        Py_ssize_t colon = PyUnicode_FindChar(seg, ':', 0, len, 1);
        int failed;

        /* A referenced descriptor's "str:<name>" shows as its name. */
        seg = colon >= 0 ? PyUnicode_Substring(seg, colon + 1, len)
                         : Py_NewRef(seg);
        if (seg == NULL) {
            goto done;
        }
        failed = PyList_Append(parts, seg) < 0;
        Py_DECREF(seg);
        if (failed) {
            goto done;
        }
    }
    if (path->depth > SW_MAX_PATH) {
        PyObject *more = PyUnicode_FromString("...");
        if (more == NULL || PyList_Append(parts, more) < 0) {
            Py_XDECREF(more);
            goto done;
        }
        Py_DECREF(more);
    }
    sep = PyUnicode_FromString(".");
    if (sep != NULL) {
        result = PyUnicode_Join(sep, parts);
    }
done:
    Py_XDECREF(sep);
    Py_DECREF(parts);
    return result;
}

/* Does `theirs` (untrusted) carry a ("opaque_storage", ...) field? */
static int
sw_has_opaque_storage_field(PyObject *theirs)
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
sw_diff_message(sw_path *path, PyObject *ours, PyObject *theirs)
{
    PyObject *where = NULL, *mine = NULL, *other = NULL, *result = NULL;

    where = sw_path_string(path);
    if (where == NULL) {
        goto done;
    }
    if (PyTuple_CheckExact(ours) && PyTuple_GET_SIZE(ours) > 0
        && PyUnicode_CheckExact(PyTuple_GET_ITEM(ours, 0))
        && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(ours, 0),
                                            "DTypeCategory") == 0
        && sw_has_opaque_storage_field(theirs)) {
        result = PyUnicode_FromFormat(
            "at %U: the pickle carries the removed opaque-storage disposition "
            "(an 'opaque_storage' field) in a category structure; categories "
            "now describe hierarchy relationships only", where);
        goto done;
    }
    if (PyTuple_CheckExact(ours) && PyTuple_CheckExact(theirs)) {
        result = PyUnicode_FromFormat(
            "at %U: registered has %zd fields, pickle has %zd", where,
            PyTuple_GET_SIZE(ours), PyTuple_GET_SIZE(theirs));
        goto done;
    }
    mine = sw_structure_describe_leaf(ours);
    other = sw_structure_describe_leaf(theirs);
    if (mine != NULL && other != NULL) {
        result = PyUnicode_FromFormat("at %U: registered %U, pickle has %U",
                                      where, mine, other);
    }
done:
    Py_XDECREF(where);
    Py_XDECREF(mine);
    Py_XDECREF(other);
    return result;
}

/* One exact tuple of `ours` being compared with its counterpart. */
typedef struct {
    PyObject *ours;         /* borrowed: exact tuple */
    PyObject *theirs;       /* borrowed: exact tuple of the same size */
    Py_ssize_t next;        /* the next item to compare */
    int pushed;             /* this level named a path segment */
} sw_diff_frame;

/* Walk `ours` (trusted, exact tuples and str) and `theirs` (untrusted) in
 * step.  Returns 0 when equal, 1 with *message set to a new str at the first
 * difference, -1 on error.  Only exact tuple and exact str can match, so no
 * method of a payload object ever runs, and nothing here can free them.
 * The walk keeps its own stack on the heap, sized by the depth of `ours`:
 * a registered structure may be deeper than the C recursion limit (a long
 * category chain nests three tuples per level), and a payload can only be
 * followed as deep as `ours` goes. */
static int
sw_diff_walk(PyObject *ours, PyObject *theirs, sw_path *path,
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
                *message = sw_diff_message(path, ours, theirs);
                status = *message ? 1 : -1;
                break;
            }
        }
        else {
            int pushed = 0;

            assert(PyTuple_CheckExact(ours));
            n = PyTuple_GET_SIZE(ours);
            /* Name this level after its label: contract, field or
             * referenced name. */
            if (n > 0 && sw_is_label(PyTuple_GET_ITEM(ours, 0))) {
                PyObject *label = PyTuple_GET_ITEM(ours, 0);
                if (n == 3 && PyUnicode_CompareWithASCIIString(label, "ref") == 0) {
                    label = PyTuple_GET_ITEM(ours, 1);   /* "str:<name>" */
                }
                if (path->depth < SW_MAX_PATH) {
                    path->segments[path->depth] = label;
                }
                path->depth++;
                pushed = 1;
            }
            if (!PyTuple_CheckExact(theirs) || PyTuple_GET_SIZE(theirs) != n) {
                *message = sw_diff_message(path, ours, theirs);
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
            depth++;
        }
        /* The next pair: the next item of the innermost unfinished tuple. */
        for (;;) {
            if (depth == 0) {
                goto done;
            }
            top = &stack[depth - 1];
            if (top->next < PyTuple_GET_SIZE(top->ours)) {
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

/* Compare a registered structure with an untrusted one.  Returns None when
 * they are identical, a str describing the first difference otherwise, or
 * NULL with an exception set. */
PyObject *
sw_structure_diff(PyObject *ours, PyObject *theirs)
{
    sw_path path;
    PyObject *message = NULL;
    int status;

    path.depth = 0;
    status = sw_diff_walk(ours, theirs, &path, &message);
    if (status < 0) {
        return NULL;
    }
    if (status == 0) {
        Py_RETURN_NONE;
    }
    return message;
}
