/* level.c: Level, one scale level of a block-scaled format.
 *
 * Owns the Level value type: `scale` (the SimpleDType stored at that level)
 * and `block` (which coordinates of the level below share one scale: a
 * positive int for a 1-D block, a tuple of at least two ints >= 2 for an
 * N-D block, or Whole for one scale over the entire level below), and the
 * check and size of a block that LevelExtent shares.  Levels are immutable
 * and compare and hash by value (scale by identity).
 */
#include "level.h"
#include "descriptor.h"
#include "structure.h"

static sw_state *
sw_level_state(PyObject *self)
{
    return sw_state_of_type(Py_TYPE(self));
}

/* ---- N-D blocks ------------------------------------------------------------ */

/* The tuple spelled without its entries of 1 (new ref). */
static PyObject *
sw_level_without_ones(PyObject *exact)
{
    Py_ssize_t i, n = PyTuple_GET_SIZE(exact);
    PyObject *list = PyList_New(0), *result;

    if (list == NULL) {
        return NULL;
    }
    for (i = 0; i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(exact, i);
        int overflow;

        if (PyLong_AsLongAndOverflow(item, &overflow) == 1 && overflow == 0) {
            continue;
        }
        if (PyList_Append(list, item) < 0) {
            Py_DECREF(list);
            return NULL;
        }
    }
    result = PyList_AsTuple(list);
    Py_DECREF(list);
    return result;
}

/* An N-D block: `block` is a tuple or tuple subclass, read through the C
 * API only (its methods never run).  Returns it as a new exact tuple of
 * exact ints, or NULL with TypeError (an entry that is not an int, or a
 * bool) or ValueError (an entry below 1, fewer than two entries above 1,
 * an entry of 1), each message naming `func` and `arg`. */
PyObject *
sw_level_block_tuple(PyObject *block, const char *func, const char *arg)
{
    Py_ssize_t i, n = PyTuple_GET_SIZE(block), above = 0, ones = 0;
    PyObject *exact = PyTuple_New(n), *spelling = NULL, *given = NULL;

    if (exact == NULL) {
        return NULL;
    }
    for (i = 0; i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(block, i), *copy;

        if (!PyLong_Check(item) || PyBool_Check(item)) {
            PyErr_Format(PyExc_TypeError,
                         "%s: the entries of a tuple %s must be ints (not "
                         "bools), got %s at index %zd", func, arg,
                         Py_TYPE(item)->tp_name, i);
            goto error;
        }
        copy = sw_exact_int(item);   /* an int subclass's value: no user code */
        if (copy == NULL) {
            goto error;
        }
        PyTuple_SET_ITEM(exact, i, copy);
    }
    for (i = 0; i < n; i++) {
        int overflow, sign;
        long value = PyLong_AsLongAndOverflow(PyTuple_GET_ITEM(exact, i),
                                              &overflow);

        if (value == -1 && overflow == 0 && PyErr_Occurred()) {
            goto error;
        }
        sign = overflow != 0 ? overflow : (value > 0) - (value < 0);
        if (sign <= 0) {
            PyErr_Format(PyExc_ValueError,
                         "%s: the entries of a tuple %s must be positive, "
                         "got %s at index %zd", func, arg,
                         sign == 0 ? "0" : "a negative int", i);
            goto error;
        }
        if (overflow == 0 && value == 1) {
            ones++;
        }
        else {
            above++;
        }
    }
    if (above < 2 || ones > 0) {
        /* One spelling per format: (1, 32) is the 1-D block 32, and
         * (1, 16, 16) the block (16, 16). */
        spelling = above < 2 ? sw_level_block_size(exact)
                             : sw_level_without_ones(exact);
        /* Shown as the structure shows them: no digit limit applies. */
        Py_XSETREF(spelling, spelling ? sw_structure_block_text(spelling) : NULL);
        given = spelling ? sw_structure_block_text(exact) : NULL;
        if (given != NULL && above < 2) {
            PyErr_Format(PyExc_ValueError,
                         "%s: %s %U has fewer than two entries above 1: it is "
                         "the 1-D block %U, spelled %s=%U (which tensor axis "
                         "a block runs along is for a layout to say, not the "
                         "format)", func, arg, given, spelling, arg, spelling);
        }
        else if (given != NULL) {
            PyErr_Format(PyExc_ValueError,
                         "%s: every entry of a tuple %s is at least 2, got "
                         "%U: its blocks are those of %s=%U", func, arg,
                         given, arg, spelling);
        }
        goto error;
    }
    return exact;

error:
    Py_XDECREF(spelling);
    Py_XDECREF(given);
    Py_DECREF(exact);
    return NULL;
}

/* How many coordinates one block spans (new ref): an int block itself,
 * the product of a tuple block's entries.  `block` is a checked block
 * that is not Whole (exact ints only, so no user code runs). */
PyObject *
sw_level_block_size(PyObject *block)
{
    Py_ssize_t i, n;
    PyObject *size;

    if (!PyTuple_CheckExact(block)) {
        return Py_NewRef(block);
    }
    size = PyLong_FromLong(1);
    n = PyTuple_GET_SIZE(block);
    for (i = 0; size != NULL && i < n; i++) {
        Py_SETREF(size, PyNumber_Multiply(size, PyTuple_GET_ITEM(block, i)));
    }
    return size;
}

/* ---- Level ------------------------------------------------------------------- */

static PyObject *
sw_level_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"scale", "block", NULL};
    sw_state *st = sw_state_of_type(type);
    PyObject *scale, *block, *exact;
    sw_level *self;

    if (sw_state_check(st) < 0
        || !PyArg_ParseTupleAndKeywords(args, kwds, "OO:Level", kwlist,
                                        &scale, &block)) {
        return NULL;
    }
    if (sw_args_simple(st, scale, "scale", "Level()") < 0) {
        return NULL;
    }
    if (block == st->whole) {
        exact = Py_NewRef(block);
    }
    else if (PyTuple_Check(block)) {
        exact = sw_level_block_tuple(block, "Level()", "block");
        if (exact == NULL) {
            return NULL;
        }
    }
    else if (!PyLong_Check(block) || PyBool_Check(block)) {
        PyErr_Format(PyExc_TypeError,
                     "Level(): block must be an int (not a bool), a tuple of "
                     "ints or Whole, got %s", Py_TYPE(block)->tp_name);
        return NULL;
    }
    else {
        int overflow;
        long value = PyLong_AsLongAndOverflow(block, &overflow);
        if (value == -1 && overflow == 0 && PyErr_Occurred()) {
            return NULL;
        }
        if (overflow < 0) {
            PyErr_SetString(PyExc_ValueError,
                            "Level(): block must be a positive int, a tuple "
                            "of ints or Whole, got a negative int");
            return NULL;
        }
        if (overflow == 0 && value <= 0) {
            PyErr_Format(PyExc_ValueError,
                         "Level(): block must be a positive int, a tuple of "
                         "ints or Whole, got %ld", value);
            return NULL;
        }
        exact = sw_exact_int(block);
        if (exact == NULL) {
            return NULL;
        }
    }
    self = (sw_level *)type->tp_alloc(type, 0);
    if (self == NULL) {
        Py_DECREF(exact);
        return NULL;
    }
    self->scale = Py_NewRef(scale);
    self->block = exact;
    return (PyObject *)self;
}

static PyObject *
sw_level_get_scale(PyObject *self, void *Py_UNUSED(closure))
{
    return Py_NewRef(((sw_level *)self)->scale);
}

static PyObject *
sw_level_get_block(PyObject *self, void *Py_UNUSED(closure))
{
    return Py_NewRef(((sw_level *)self)->block);
}

static PyObject *
sw_level_get_block_shape(PyObject *self, void *Py_UNUSED(closure))
{
    PyObject *block = ((sw_level *)self)->block;

    if (block == sw_level_state(self)->whole) {
        Py_RETURN_NONE;
    }
    return PyTuple_CheckExact(block) ? Py_NewRef(block) : PyTuple_Pack(1, block);
}

static PyObject *
sw_level_get_block_size(PyObject *self, void *Py_UNUSED(closure))
{
    PyObject *block = ((sw_level *)self)->block;

    if (block == sw_level_state(self)->whole) {
        return Py_NewRef(block);
    }
    return sw_level_block_size(block);
}

static PyObject *
sw_level_is_whole(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    return PyBool_FromLong(((sw_level *)self)->block == sw_level_state(self)->whole);
}

static PyObject *
sw_level_repr(PyObject *self)
{
    sw_level *l = (sw_level *)self;

    return PyUnicode_FromFormat("Level(scale=%R, block=%R)", l->scale, l->block);
}

static PyObject *
sw_level_richcompare(PyObject *self, PyObject *other, int op)
{
    sw_level *a = (sw_level *)self, *b;
    int eq;

    if ((op != Py_EQ && op != Py_NE) || !Py_IS_TYPE(other, Py_TYPE(self))) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    b = (sw_level *)other;
    if (a->scale != b->scale) {
        eq = 0;
    }
    else if (a->block == b->block) {
        eq = 1;
    }
    else if ((PyLong_CheckExact(a->block) && PyLong_CheckExact(b->block))
             || (PyTuple_CheckExact(a->block) && PyTuple_CheckExact(b->block))) {
        /* exact ints, or exact tuples of exact ints: no user code */
        eq = PyObject_RichCompareBool(a->block, b->block, Py_EQ);
        if (eq < 0) {
            return NULL;
        }
    }
    else {
        eq = 0;   /* Whole, an int and a tuple are never equal */
    }
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static Py_hash_t
sw_level_hash(PyObject *self)
{
    sw_level *l = (sw_level *)self;
    PyObject *pair = PyTuple_Pack(2, l->scale, l->block);
    Py_hash_t h;

    if (pair == NULL) {
        return -1;
    }
    h = PyObject_Hash(pair);   /* scale by identity; exact int, tuple or Whole */
    Py_DECREF(pair);
    return h;
}

static PyObject *
sw_level_reduce(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    sw_level *l = (sw_level *)self;

    return Py_BuildValue("O(OO)", Py_TYPE(self), l->scale, l->block);
}

static PyObject *
sw_level_copy(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    return Py_NewRef(self);
}

static int
sw_level_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(((sw_level *)self)->scale);
    Py_VISIT(((sw_level *)self)->block);
    return 0;
}

static int
sw_level_clear(PyObject *self)
{
    Py_CLEAR(((sw_level *)self)->scale);
    Py_CLEAR(((sw_level *)self)->block);
    return 0;
}

static void
sw_level_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);

    PyObject_GC_UnTrack(self);
    (void)sw_level_clear(self);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyGetSetDef sw_level_getset[] = {
    {"scale", sw_level_get_scale, NULL,
     PyDoc_STR("The SimpleDType stored at this scale level."), NULL},
    {"block", sw_level_get_block, NULL,
     PyDoc_STR("Which coordinates of the level below share one scale: a "
               "positive int (a 1-D block of that many), a tuple of at "
               "least two ints >= 2 (an N-D block of that shape), or "
               "Whole."), NULL},
    {"block_shape", sw_level_get_block_shape, NULL,
     PyDoc_STR("The block as a shape: (block,) for an int block, the tuple "
               "of an N-D block, None for Whole."), NULL},
    {"block_size", sw_level_get_block_size, NULL,
     PyDoc_STR("How many coordinates one block spans: the product of "
               "block_shape, or Whole."), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef sw_level_methods[] = {
    {"is_whole", sw_level_is_whole, METH_NOARGS,
     PyDoc_STR("is_whole($self, /)\n--\n\n"
               "Return True when block is Whole (one scale for the entire "
               "level below).")},
    {"__reduce__", sw_level_reduce, METH_NOARGS,
     PyDoc_STR("__reduce__($self, /)\n--\n\nPickle as Level(scale, block).")},
    {"__copy__", sw_level_copy, METH_NOARGS,
     PyDoc_STR("__copy__($self, /)\n--\n\nReturn self: levels are immutable.")},
    {"__deepcopy__", sw_level_copy, METH_O,
     PyDoc_STR("__deepcopy__($self, memo, /)\n--\n\nReturn self.")},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot sw_level_slots[] = {
    {Py_tp_doc, (void *)PyDoc_STR(
        "Level(scale, block)\n--\n\n"
        "One scale level of a block-scaled format: the coordinates of the "
        "level below in one block share one `scale` value (a SimpleDType).  "
        "block is a positive int (a 1-D block), a tuple of at least two "
        "ints, each at least 2 (an N-D block, such as (16, 16); which "
        "tensor axes it runs along is a layout's choice, and (1, 32) is "
        "spelled 32), or Whole for one scale over the entire level below.  "
        "Immutable; equal when the scales are the same descriptor and the "
        "blocks are equal.")},
    {Py_tp_new, sw_level_new},
    {Py_tp_repr, sw_level_repr},
    {Py_tp_richcompare, sw_level_richcompare},
    {Py_tp_hash, sw_level_hash},
    {Py_tp_getset, sw_level_getset},
    {Py_tp_methods, sw_level_methods},
    {Py_tp_traverse, sw_level_traverse},
    {Py_tp_clear, sw_level_clear},
    {Py_tp_dealloc, sw_level_dealloc},
    {0, NULL},
};

static PyType_Spec sw_level_spec = {
    .name = "stride_weave._dtypes.Level",
    .basicsize = sizeof(sw_level),
    .itemsize = 0,
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = sw_level_slots,
};

int
sw_level_create_type(PyObject *module, sw_state *st)
{
    st->level_type = (PyTypeObject *)PyType_FromModuleAndSpec(
        module, &sw_level_spec, NULL);
    return st->level_type ? 0 : -1;
}
