/* level.c: Level, one scale level of a block-scaled format.
 *
 * Owns the Level value type: `scale` (the SimpleDType stored at that level)
 * and `block` (how many coordinates of the level below share one scale: a
 * positive int, or Whole for one scale over the entire level below).
 * Levels are immutable and compare and hash by value (scale by identity).
 */
#include "level.h"
#include "descriptor.h"

static sw_state *
sw_level_state(PyObject *self)
{
    return sw_state_of_type(Py_TYPE(self));
}

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
    else if (!PyLong_Check(block) || PyBool_Check(block)) {
        PyErr_Format(PyExc_TypeError,
                     "Level(): block must be an int (not a bool) or Whole, "
                     "got %s", Py_TYPE(block)->tp_name);
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
                            "Level(): block must be a positive int or Whole, "
                            "got a negative int");
            return NULL;
        }
        if (overflow == 0 && value <= 0) {
            PyErr_Format(PyExc_ValueError,
                         "Level(): block must be a positive int or Whole, "
                         "got %ld", value);
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
    else if (PyLong_CheckExact(a->block) && PyLong_CheckExact(b->block)) {
        eq = PyObject_RichCompareBool(a->block, b->block, Py_EQ);  /* exact ints */
        if (eq < 0) {
            return NULL;
        }
    }
    else {
        eq = 0;   /* Whole against an int */
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
    h = PyObject_Hash(pair);   /* identity hash of scale, int/Whole hash */
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
     PyDoc_STR("How many coordinates of the level below share one scale "
               "(a positive int), or Whole."), NULL},
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
        "One scale level of a block-scaled format: every `block` "
        "coordinates of the level below share one `scale` value (a "
        "SimpleDType).  block is a positive int, or Whole for one scale "
        "over the entire level below.  Immutable; equal when the scales are "
        "the same descriptor and the blocks are equal.")},
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
