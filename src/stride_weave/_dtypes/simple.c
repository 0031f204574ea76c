/* simple.c: SimpleDType, one fixed-width scalar encoding.
 *
 * Owns the simple-dtype constructor (name, *, bits, supertype,
 * numeric_info), the bits accessor and the simple contract structure.  A
 * record given to the constructor is attached before the descriptor is
 * registered, so no code ever sees the dtype without it.
 */
#include "kind.h"
#include "descriptor.h"
#include "numinfo.h"

#define SW_SIMPLE_INIT "SimpleDType.__init__()"

/* bits: an int that is not a bool, greater than zero, any size.  Returns a
 * new reference to an exact int (an int subclass is copied without running
 * any of its methods). */
static PyObject *
sw_simple_check_bits(PyObject *bits)
{
    int overflow;
    long value;

    if (!PyLong_Check(bits) || PyBool_Check(bits)) {
        PyErr_Format(PyExc_ValueError,
                     "%s: bits must be an int greater than zero (not a bool), "
                     "got %s", SW_SIMPLE_INIT, Py_TYPE(bits)->tp_name);
        return NULL;
    }
    /* For an int (or subclass) this reads the value directly. */
    value = PyLong_AsLongAndOverflow(bits, &overflow);
    if (value == -1 && overflow == 0 && PyErr_Occurred()) {
        return NULL;
    }
    if (overflow < 0) {
        PyErr_Format(PyExc_ValueError,
                     "%s: bits must be an int greater than zero, got a "
                     "negative int", SW_SIMPLE_INIT);
        return NULL;
    }
    if (overflow == 0 && value <= 0) {
        PyErr_Format(PyExc_ValueError,
                     "%s: bits must be an int greater than zero, got %ld",
                     SW_SIMPLE_INIT, value);
        return NULL;
    }
    return sw_exact_int(bits);
}

static int
sw_simple_init(PyObject *self, PyObject *args, PyObject *kwds)
{
    static const char *const allowed[] = {"name", "bits", "supertype",
                                          "numeric_info", NULL};
    static char *kwlist[] = {"name", "bits", "supertype", "numeric_info", NULL};
    sw_descriptor *d = (sw_descriptor *)self;
    sw_state *st = sw_state_of_type(Py_TYPE(self));
    PyObject *name = NULL, *bits = NULL, *supertype = NULL, *record = NULL;
    PyObject *exact = NULL, *width = NULL;

    if (sw_construct_begin_init(d, SW_KIND_SIMPLE, SW_SIMPLE_INIT) < 0
        || sw_args_check_kwargs(kwds, allowed, SW_SIMPLE_INIT) < 0
        || !PyArg_ParseTupleAndKeywords(args, kwds, "O|$OOO:SimpleDType.__init__",
                                        kwlist, &name, &bits, &supertype,
                                        &record)) {
        return -1;
    }
    if (bits == NULL || supertype == NULL) {
        PyErr_Format(PyExc_TypeError,
                     "%s missing required keyword-only argument: '%s'",
                     SW_SIMPLE_INIT, bits == NULL ? "bits" : "supertype");
        return -1;
    }
    exact = sw_args_name(name, SW_SIMPLE_INIT);
    if (exact == NULL) {
        goto error;
    }
    width = sw_simple_check_bits(bits);
    if (width == NULL
        || sw_args_supertype(st, supertype, 0, SW_SIMPLE_INIT) < 0
        || sw_construct_set_common(st, d, exact, supertype) < 0) {
        goto error;
    }
    if (record != NULL && record != Py_None
        && sw_numrecords_attach_new(st, d, exact, width, record,
                                    SW_SIMPLE_INIT) < 0) {
        goto error;
    }
    sw_construct_initialized(d, exact, width);
    Py_DECREF(exact);
    Py_DECREF(width);
    return 0;

error:
    Py_XDECREF(exact);
    Py_XDECREF(width);
    return -1;
}

/* ("SimpleDType", ("bits", "int:<n>"), ("supertype", <ref>)) */
static PyObject *
sw_simple_contract(sw_state *st, sw_descriptor *d)
{
    PyObject *bits, *ref, *result;

    bits = sw_structure_encode_int(d->bits);
    if (bits == NULL) {
        return NULL;
    }
    ref = sw_structure_ref(st, (sw_descriptor *)sw_descriptor_supertype(d));
    if (ref == NULL) {
        Py_DECREF(bits);
        return NULL;
    }
    result = Py_BuildValue("(O(ON)(ON))", st->labels[SW_LABEL_SIMPLE_DTYPE],
                           st->labels[SW_LABEL_BITS], bits,
                           st->labels[SW_LABEL_SUPERTYPE], ref);
    return result;
}

/* bits: a fixed attribute (descriptor.h); `closure` is its member. */
static PyObject *
sw_simple_get_bits(PyObject *self, void *closure)
{
    sw_descriptor *d = sw_descriptor_of_kind(self, SW_KIND_SIMPLE,
                                             "SimpleDType.bits");

    return d ? sw_descriptor_read_fixed(d, closure) : NULL;
}

#define SW_BITS_DOC "The exact encoding width in bits (an int)."

static PyMemberDef sw_simple_bits_member = {
    "bits", Py_T_OBJECT_EX, offsetof(sw_descriptor, bits), Py_READONLY,
    PyDoc_STR(SW_BITS_DOC),
};

static PyGetSetDef sw_simple_fixed[] = {
    {"bits", sw_simple_get_bits, NULL, PyDoc_STR(SW_BITS_DOC),
     &sw_simple_bits_member},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyGetSetDef sw_simple_getset[] = {
    {NULL, NULL, NULL, NULL, NULL},
};

static int
sw_simple_has_fields(sw_descriptor *d)
{
    /* Read as its rejection writes it (another thread may reject d). */
    return SW_LOAD_PTR(d->bits) != NULL;
}

/* The C type that carries SimpleDType's __init__ as a tp_init slot, so that
 * inspect and help() read its signature like a built-in's. */
static PyType_Slot sw_simple_init_slots[] = {
    {Py_tp_init, sw_simple_init},
    {Py_tp_doc, (void *)PyDoc_STR(
        "_SimpleInit(name, *, bits, supertype, numeric_info=None)\n--\n\n"
        "Initialize a simple dtype registered under name.\n\n"
        "bits is the exact encoding width (an int > 0, not a bool); "
        "supertype is the enclosing registered DTypeCategory; "
        "numeric_info, a stride_weave.numerics.NumericInfo, is attached "
        "before the dtype is registered, so no code sees it without its "
        "record (its bits must equal bits and its kind agree with the "
        "category, as register_numeric_info checks).")},
    {0, NULL},
};

static PyType_Spec sw_simple_init_spec = {
    .name = "stride_weave._dtypes._SimpleInit",
    .basicsize = 0,
    .itemsize = 0,
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = sw_simple_init_slots,
};

const sw_kind_def sw_simple_kind = {
    .kind = SW_KIND_SIMPLE,
    .parent = SW_KIND_NONE,
    .class_name = "SimpleDType",
    .label = "simple",
    .doc = "A simple dtype: one fixed-width scalar encoding beneath a "
           "category. Being simple classifies the encoding; it does not "
           "imply that any carrier can store or execute it.\n\n"
           "Give what its bits mean at construction, with the keyword "
           "numeric_info (a stride_weave.numerics.NumericInfo, such as "
           "NumericInfo.floating(...)): "
           "SimpleDType(name, bits=8, supertype=DType.Floating, "
           "numeric_info=record). The dtype is then registered with its "
           "record, so numerics.finfo, can_cast, isdtype and interop read it "
           "and no code ever sees the dtype without it.",
    .abstract = 0,
    .unique_by_structure = NULL,
    .init_spec = &sw_simple_init_spec,
    .getsets = sw_simple_getset,
    .fixed = sw_simple_fixed,
    .contract = sw_simple_contract,
    .has_fields = sw_simple_has_fields,
};
