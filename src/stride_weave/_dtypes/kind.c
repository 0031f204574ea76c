/* kind.c: the table of descriptor kinds, and what Python reads of it.
 *
 * Owns sw_kind_table (each entry is defined by its kind's own file) and
 * the module's private _kind(descriptor) and _KINDS, through which the CLI
 * names kinds with the same words as the C core.
 */
#include "kind.h"
#include "descriptor.h"

#define SW_DTYPES_IMPL   /* the table's definition only, no consumer helpers */
#include "stride_weave/dtypes.h"

/* The C API reports the internal kind numbers as they are. */
_Static_assert(SW_KIND_NONE == SW_DTYPE_KIND_NONE
               && SW_KIND_CATEGORY == SW_DTYPE_KIND_CATEGORY
               && SW_KIND_SIMPLE == SW_DTYPE_KIND_SIMPLE
               && SW_KIND_COMPOUND == SW_DTYPE_KIND_COMPOUND
               && SW_KIND_BLOCK_SCALED == SW_DTYPE_KIND_BLOCK_SCALED,
               "sw_kind and the C API's SW_DTYPE_KIND_* must agree");

const sw_kind_def *const sw_kind_table[SW_KIND_COUNT] = {
    [SW_KIND_NONE] = NULL,
    [SW_KIND_CATEGORY] = &sw_category_kind,
    [SW_KIND_SIMPLE] = &sw_simple_kind,
    [SW_KIND_COMPOUND] = &sw_compound_kind,
    [SW_KIND_BLOCK_SCALED] = &sw_blockscaled_kind,
};

/* _kind(obj): the kind's label ("simple", "block-scaled", ...) for a
 * descriptor of this graph, else None.  Reads the kind the class recorded,
 * so it runs no user code. */
static PyObject *
sw_kind_of(PyObject *module, PyObject *obj)
{
    sw_state *st = sw_state_of_module(module);
    int kind;

    if (sw_state_check(st) < 0) {
        return NULL;
    }
    if (!PyObject_TypeCheck(obj, st->base_type)) {
        Py_RETURN_NONE;
    }
    kind = ((sw_descriptor *)obj)->kind;
    if (kind <= SW_KIND_NONE || kind >= SW_KIND_COUNT) {
        Py_RETURN_NONE;
    }
    return PyUnicode_FromString(sw_kind_table[kind]->label);
}

PyMethodDef sw_kind_methods[] = {
    {"_kind", sw_kind_of, METH_O,
     PyDoc_STR("_kind($module, obj, /)\n--\n\n"
               "The kind of descriptor obj as one word ('category', "
               "'simple', 'compound' or 'block-scaled'), or None when obj "
               "is not a descriptor or has no kind.")},
    {NULL, NULL, 0, NULL},
};

/* _KINDS: ((label, model class), ...) in table order. */
int
sw_kind_add_exports(PyObject *module, sw_state *st)
{
    PyObject *kinds = PyTuple_New(SW_KIND_COUNT - 1);
    int k;

    if (kinds == NULL) {
        return -1;
    }
    for (k = SW_KIND_NONE + 1; k < SW_KIND_COUNT; k++) {
        PyObject *entry = Py_BuildValue("(sO)", sw_kind_table[k]->label,
                                        (PyObject *)st->kind_types[k]);
        if (entry == NULL) {
            Py_DECREF(kinds);
            return -1;
        }
        PyTuple_SET_ITEM(kinds, k - 1, entry);
    }
    k = PyModule_AddObjectRef(module, "_KINDS", kinds);
    Py_DECREF(kinds);
    return k;
}
