/* symbolic.c: SymbolicBits, a storage cost that depends on the tensor.
 *
 * Owns the SymbolicBits value type: constant + whole_scale_bits / n bits
 * per element for a tensor of n elements, the bits_per_element of a
 * block-scaled format whose last level has one scale for the whole tensor
 * (NVFP4: SymbolicBits(4.5, 32)).  Immutable, compared by value.
 */
#include "level.h"

typedef struct {
    PyObject_HEAD
    double constant;
    PyObject *whole_scale_bits;   /* exact int > 0 */
} sw_symbolic;

static PyObject *
sw_symbolic_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"constant", "whole_scale_bits", NULL};
    PyObject *constant, *bits;
    sw_symbolic *self;
    double value;

    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO:SymbolicBits", kwlist,
                                     &constant, &bits)) {
        return NULL;
    }
    if (PyBool_Check(constant)
        || !(PyFloat_Check(constant) || PyLong_Check(constant))) {
        PyErr_Format(PyExc_TypeError,
                     "SymbolicBits(): constant must be an int or float (not a "
                     "bool), got %s", Py_TYPE(constant)->tp_name);
        return NULL;
    }
    value = PyFloat_Check(constant) ? PyFloat_AS_DOUBLE(constant)
                                    : PyLong_AsDouble(constant);
    if (value == -1.0 && PyErr_Occurred()) {
        return NULL;
    }
    if (!isfinite(value) || value < 0) {
        PyErr_Format(PyExc_ValueError,
                     "SymbolicBits(): constant must be a finite number >= 0, "
                     "got %R", constant);
        return NULL;
    }
    if (!PyLong_Check(bits) || PyBool_Check(bits)) {
        PyErr_Format(PyExc_TypeError,
                     "SymbolicBits(): whole_scale_bits must be an int (not a "
                     "bool), got %s", Py_TYPE(bits)->tp_name);
        return NULL;
    }
    {
        int overflow;
        long n = PyLong_AsLongAndOverflow(bits, &overflow);
        if (n == -1 && overflow == 0 && PyErr_Occurred()) {
            return NULL;
        }
        if (overflow < 0 || (overflow == 0 && n <= 0)) {
            PyErr_SetString(PyExc_ValueError,
                            "SymbolicBits(): whole_scale_bits must be a "
                            "positive int");
            return NULL;
        }
    }
    self = (sw_symbolic *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->constant = value;
    self->whole_scale_bits = sw_exact_int(bits);
    if (self->whole_scale_bits == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static PyObject *
sw_symbolic_get_constant(PyObject *self, void *Py_UNUSED(closure))
{
    return PyFloat_FromDouble(((sw_symbolic *)self)->constant);
}

static PyObject *
sw_symbolic_get_bits(PyObject *self, void *Py_UNUSED(closure))
{
    return Py_NewRef(((sw_symbolic *)self)->whole_scale_bits);
}

static PyObject *
sw_symbolic_evaluate(PyObject *self, PyObject *count)
{
    sw_symbolic *s = (sw_symbolic *)self;
    PyObject *share, *constant, *result;
    int overflow;
    long n;

    if (!PyLong_Check(count) || PyBool_Check(count)) {
        PyErr_Format(PyExc_TypeError,
                     "evaluate(): element_count must be an int (not a bool), "
                     "got %s", Py_TYPE(count)->tp_name);
        return NULL;
    }
    n = PyLong_AsLongAndOverflow(count, &overflow);
    if (n == -1 && overflow == 0 && PyErr_Occurred()) {
        return NULL;
    }
    if (overflow < 0 || (overflow == 0 && n < 1)) {
        PyErr_Format(PyExc_ValueError,
                     "evaluate(): element_count must be at least 1, got %S",
                     count);
        return NULL;
    }
    /* Exact ints only, so no user __rtruediv__ of an int subclass runs;
     * true division of ints rounds exactly even for huge counts. */
    count = sw_exact_int(count);
    if (count == NULL) {
        return NULL;
    }
    share = PyNumber_TrueDivide(s->whole_scale_bits, count);
    Py_DECREF(count);
    if (share == NULL) {
        return NULL;
    }
    constant = PyFloat_FromDouble(s->constant);
    if (constant == NULL) {
        Py_DECREF(share);
        return NULL;
    }
    result = PyNumber_Add(constant, share);
    Py_DECREF(constant);
    Py_DECREF(share);
    return result;
}

static PyObject *
sw_symbolic_repr(PyObject *self)
{
    sw_symbolic *s = (sw_symbolic *)self;
    PyObject *constant = PyFloat_FromDouble(s->constant), *result;

    if (constant == NULL) {
        return NULL;
    }
    result = PyUnicode_FromFormat("SymbolicBits(constant=%R, whole_scale_bits=%R)",
                                  constant, s->whole_scale_bits);
    Py_DECREF(constant);
    return result;
}

static PyObject *
sw_symbolic_richcompare(PyObject *self, PyObject *other, int op)
{
    sw_symbolic *a = (sw_symbolic *)self, *b;
    int eq;

    if ((op != Py_EQ && op != Py_NE) || !Py_IS_TYPE(other, Py_TYPE(self))) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    b = (sw_symbolic *)other;
    eq = a->constant == b->constant;
    if (eq) {
        eq = PyObject_RichCompareBool(a->whole_scale_bits, b->whole_scale_bits,
                                      Py_EQ);   /* exact ints */
        if (eq < 0) {
            return NULL;
        }
    }
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static Py_hash_t
sw_symbolic_hash(PyObject *self)
{
    sw_symbolic *s = (sw_symbolic *)self;
    PyObject *pair = Py_BuildValue("(dO)", s->constant, s->whole_scale_bits);
    Py_hash_t h;

    if (pair == NULL) {
        return -1;
    }
    h = PyObject_Hash(pair);
    Py_DECREF(pair);
    return h;
}

static PyObject *
sw_symbolic_reduce(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    sw_symbolic *s = (sw_symbolic *)self;

    return Py_BuildValue("O(dO)", Py_TYPE(self), s->constant,
                         s->whole_scale_bits);
}

static int
sw_symbolic_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    return 0;
}

static void
sw_symbolic_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);

    PyObject_GC_UnTrack(self);
    Py_CLEAR(((sw_symbolic *)self)->whole_scale_bits);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyGetSetDef sw_symbolic_getset[] = {
    {"constant", sw_symbolic_get_constant, NULL,
     PyDoc_STR("Bits per element that do not depend on the tensor size."),
     NULL},
    {"whole_scale_bits", sw_symbolic_get_bits, NULL,
     PyDoc_STR("Bits of the one scale shared by the whole tensor."), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef sw_symbolic_methods[] = {
    {"evaluate", sw_symbolic_evaluate, METH_O,
     PyDoc_STR("evaluate($self, element_count, /)\n--\n\n"
               "Return constant + whole_scale_bits / element_count: the "
               "bits per element of a tensor of element_count elements.\n\n"
               "element_count must be an int (not a bool, else TypeError) "
               "and at least 1 (else ValueError).")},
    {"__reduce__", sw_symbolic_reduce, METH_NOARGS,
     PyDoc_STR("__reduce__($self, /)\n--\n\nPickle by value.")},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot sw_symbolic_slots[] = {
    {Py_tp_doc, (void *)PyDoc_STR(
        "SymbolicBits(constant, whole_scale_bits)\n--\n\n"
        "An immutable storage cost of constant + whole_scale_bits / n bits "
        "per element for a tensor of n elements.")},
    {Py_tp_new, sw_symbolic_new},
    {Py_tp_repr, sw_symbolic_repr},
    {Py_tp_richcompare, sw_symbolic_richcompare},
    {Py_tp_hash, sw_symbolic_hash},
    {Py_tp_getset, sw_symbolic_getset},
    {Py_tp_methods, sw_symbolic_methods},
    {Py_tp_traverse, sw_symbolic_traverse},
    {Py_tp_dealloc, sw_symbolic_dealloc},
    {0, NULL},
};

static PyType_Spec sw_symbolic_spec = {
    .name = "stride_weave._dtypes.SymbolicBits",
    .basicsize = sizeof(sw_symbolic),
    .itemsize = 0,
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = sw_symbolic_slots,
};

int
sw_symbolic_create_type(PyObject *module, sw_state *st)
{
    st->symbolic_type = (PyTypeObject *)PyType_FromModuleAndSpec(
        module, &sw_symbolic_spec, NULL);
    return st->symbolic_type ? 0 : -1;
}
