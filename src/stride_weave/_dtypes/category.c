/* category.c: DTypeCategory, the relationship-only descriptor kind.
 *
 * Owns the category constructor (name, *, supertype=None) and its contract
 * structure, which records the hierarchy and nothing else: there is no
 * storage disposition (the old opaque_storage keyword is refused).
 */
#include "kind.h"
#include "descriptor.h"

#define SW_CATEGORY_INIT "DTypeCategory.__init__()"

static int
sw_category_init(PyObject *self, PyObject *args, PyObject *kwds)
{
    static const char *const allowed[] = {"name", "supertype", NULL};
    static char *kwlist[] = {"name", "supertype", NULL};
    sw_descriptor *d = (sw_descriptor *)self;
    sw_state *st = sw_state_of_type(Py_TYPE(self));
    PyObject *name = NULL, *supertype = Py_None, *exact;

    if (sw_construct_begin_init(d, SW_KIND_CATEGORY, SW_CATEGORY_INIT) < 0
        || sw_args_check_kwargs(kwds, allowed, SW_CATEGORY_INIT) < 0
        || !PyArg_ParseTupleAndKeywords(args, kwds, "O|$O:DTypeCategory.__init__",
                                        kwlist, &name, &supertype)) {
        return -1;
    }
    exact = sw_args_name(name, SW_CATEGORY_INIT);
    if (exact == NULL) {
        return -1;
    }
    if (sw_args_supertype(st, supertype, 1, SW_CATEGORY_INIT) < 0
        || sw_construct_set_common(st, d, exact, supertype) < 0) {
        Py_DECREF(exact);
        return -1;
    }
    sw_construct_initialized(d, exact, NULL);
    Py_DECREF(exact);
    return 0;
}

/* ("DTypeCategory", ("supertype", <ref> | "none")) */
static PyObject *
sw_category_contract(sw_state *st, sw_descriptor *d)
{
    PyObject *ref, *field, *result;
    PyObject *supertype;   /* borrowed */

    supertype = sw_descriptor_supertype(d);
    ref = supertype ? sw_structure_ref(st, (sw_descriptor *)supertype)
                    : Py_NewRef(st->labels[SW_LABEL_NONE]);
    if (ref == NULL) {
        return NULL;
    }
    field = sw_structure_field(st, SW_LABEL_SUPERTYPE, ref);
    Py_DECREF(ref);
    if (field == NULL) {
        return NULL;
    }
    result = Py_BuildValue("(ON)", st->labels[SW_LABEL_DTYPE_CATEGORY], field);
    return result;
}


/* The C type that carries DTypeCategory's __init__ as a tp_init slot, so that
 * inspect and help() read its signature like a built-in's. */
static PyType_Slot sw_category_init_slots[] = {
    {Py_tp_init, sw_category_init},
    {Py_tp_doc, (void *)PyDoc_STR(
        "_CategoryInit(name, *, supertype=None)\n--\n\n"
        "Initialize a category registered under name.\n\n"
        "supertype is the enclosing registered DTypeCategory, or None "
        "for a root category.")},
    {0, NULL},
};

static PyType_Spec sw_category_init_spec = {
    .name = "stride_weave._dtypes._CategoryInit",
    .basicsize = 0,
    .itemsize = 0,
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = sw_category_init_slots,
};

static int
sw_category_has_fields(sw_descriptor *Py_UNUSED(d))
{
    return 1;   /* name and supertypes, which every kind has */
}

static PyGetSetDef sw_category_getset[] = {
    {NULL, NULL, NULL, NULL, NULL},
};

const sw_kind_def sw_category_kind = {
    .kind = SW_KIND_CATEGORY,
    .parent = SW_KIND_NONE,
    .class_name = "DTypeCategory",
    .label = "category",
    .doc = "A category: a relationship identity that places dtypes in a "
           "supertype hierarchy.  It defines no scalar encoding and no "
           "physical representation.  DType.Any is the root; DType.Floating "
           "and DType.Integer are beneath it.",
    .abstract = 0,
    .unique_by_structure = NULL,
    .init_spec = &sw_category_init_spec,
    .getsets = sw_category_getset,
    .contract = sw_category_contract,
    .has_fields = sw_category_has_fields,
};
