/* state.c: the module state's lifetime and where it is found.
 *
 * Owns the list of the objects the state holds (which traverse and clear
 * walk), the state's release at module teardown, and the lookups of
 * state.h that need more than a field read: the current interpreter's
 * graph, and the check that a graph is still alive.
 */
#include "state.h"
#include "capi.h"
#include "meta.h"
#include "privtable.h"
#include "relations.h"

#include <stddef.h>       /* offsetof */

/* sw_state_of_type reads a class's state through the shared head. */
_Static_assert(offsetof(sw_type, state) == offsetof(sw_class_head, state),
               "sw_type must start with sw_class_head's fields");

/* The text of each sw_ident, in its order. */
static const char *const sw_state_ident_text[SW_IDENT_COUNT] = {
    [SW_IDENT_MODULE] = "__module__",
    [SW_IDENT_NAME] = "__name__",
    [SW_IDENT_CLASS] = "__class__",
    [SW_IDENT_FROM_NAME] = "from_name",
    [SW_IDENT_REGISTERED] = "registered",
    [SW_IDENT_STRUCTURE_EXTENSION] = "structure_extension",
    [SW_IDENT_LOGICAL_DTYPE] = "logical_dtype",
    [SW_IDENT_LOGICAL_SIZE] = "logical_size",
    [SW_IDENT_LEVEL_SHAPES] = "level_shapes",
    [SW_IDENT_ADJACENT_LAYOUTS] = "adjacent_layouts",
    [SW_IDENT_UNIFORM_PREIMAGE_EXTENT] = "uniform_preimage_extent",
};

/* Fill dst[0..count) with the interned strings of texts[0..count)
 * (module initialization): 0, or -1 with an exception. */
int
sw_state_intern_all(PyObject **dst, const char *const *texts, int count)
{
    int i;

    for (i = 0; i < count; i++) {
        dst[i] = PyUnicode_InternFromString(texts[i]);
        if (dst[i] == NULL) {
            return -1;
        }
    }
    return 0;
}

/* Make the state's interned names: 0, or -1 with an exception. */
int
sw_state_idents_init(sw_state *st)
{
    return sw_state_intern_all(st->idents, sw_state_ident_text, SW_IDENT_COUNT);
}

/* The state of the current interpreter's graph (borrowed), or NULL with
 * RuntimeError when stride_weave._dtypes was never imported here: the C
 * API reaches the registry this way (capi.c). */
sw_state *
sw_state_current(void)
{
    PyObject *interp_dict = PyInterpreterState_GetDict(PyInterpreterState_Get());
    PyObject *first = NULL;
    sw_state *st;

    if (interp_dict != NULL
        && PyDict_GetItemStringRef(interp_dict, SW_STATE_INTERP_KEY,
                                   &first) < 0) {
        return NULL;
    }
    if (first == NULL) {
        PyErr_SetString(PyExc_RuntimeError,
                        "stride_weave._dtypes is not imported in this "
                        "interpreter");
        return NULL;
    }
    st = sw_state_of_module(first);
    /* The interpreter's state dict keeps the module (and so its state)
     * for the life of the interpreter. */
    Py_DECREF(first);
    return st;
}

/* 0 while the graph is alive; -1 with RuntimeError once the module state
 * was cleared (late finalizers at interpreter shutdown can still call in). */
int
sw_state_check(sw_state *st)
{
    if (st == NULL || st->owned_names == NULL) {
        PyErr_SetString(PyExc_RuntimeError,
                        "the stride_weave descriptor graph was finalized");
        return -1;
    }
    return 0;
}

/* Every object the state holds, in the order sw_clear releases them (the
 * metaclasses and C layouts last).  sw_traverse and sw_clear both walk this
 * list, and the test suite checks it against sw_state's fields (state.h),
 * so a field cannot be forgotten by one of them. */
typedef struct {
    size_t offset;
    int count;      /* an array of `count` references */
    int private;    /* a private table: traverse visits its entries only */
} sw_state_field;

static const sw_state_field sw_state_fields[] = {
    {offsetof(sw_state, dtype_type), 1, 0},
    {offsetof(sw_state, kind_types), SW_KIND_COUNT, 0},
    {offsetof(sw_state, kind_init_types), SW_KIND_COUNT, 0},
    {offsetof(sw_state, level_extent_cache), 1, 1},
    {offsetof(sw_state, structures), 1, 1},
    {offsetof(sw_state, chains), 1, 1},
    {offsetof(sw_state, refs), 1, 1},
    {offsetof(sw_state, reprs), 1, 1},
    {offsetof(sw_state, pickles), 1, 1},
    {offsetof(sw_state, level_extent_type), 1, 0},
    {offsetof(sw_state, rule_type), 1, 0},
    {offsetof(sw_state, whole), 1, 0},
    {offsetof(sw_state, reconstruct), 1, 0},
    {offsetof(sw_state, owned_names), 1, 0},
    {offsetof(sw_state, rule_owned_names), 1, 0},
    {offsetof(sw_state, labels), SW_LABEL_COUNT, 0},
    {offsetof(sw_state, empty_extension), 1, 0},
    {offsetof(sw_state, empty_tuple), 1, 0},
    {offsetof(sw_state, idents), SW_IDENT_COUNT, 0},
    {offsetof(sw_state, default_lattice), 1, 0},
    {offsetof(sw_state, kind_categories), 2, 0},
    {offsetof(sw_state, relation_names), SW_RELATION_NAMES, 0},
    {offsetof(sw_state, relation_aliases), SW_RELATION_NAMES, 0},
    {offsetof(sw_state, promotion_error), 1, 0},
    {offsetof(sw_state, lattice_type), 1, 0},
    {offsetof(sw_state, lattice_reconstruct), 1, 0},
    {offsetof(sw_state, type_checks), 2, 0},
    {offsetof(sw_state, import_policy), 1, 0},
    {offsetof(sw_state, whole_type), 1, 0},
    {offsetof(sw_state, level_type), 1, 0},
    {offsetof(sw_state, symbolic_type), 1, 0},
    {offsetof(sw_state, numinfo_type), 1, 0},
    {offsetof(sw_state, dlpack_view_type), 1, 0},
    {offsetof(sw_state, rule_base_type), 1, 0},
    {offsetof(sw_state, rule_meta_type), 1, 0},
    {offsetof(sw_state, base_type), 1, 0},
    {offsetof(sw_state, class_bound_type), 1, 0},
    {offsetof(sw_state, class_check_type), 1, 0},
    {offsetof(sw_state, class_check_method_type), 1, 0},
    {offsetof(sw_state, unknown_name_type), 1, 0},
    {offsetof(sw_state, pack_names), 1, 0},
    {offsetof(sw_state, meta_type), 1, 0},
};

/* The address of reference i of field f in `st`. */
static PyObject **
sw_state_slot(sw_state *st, const sw_state_field *f, int i)
{
    return (PyObject **)((char *)st + f->offset) + i;
}

int
sw_state_traverse(PyObject *module, visitproc visit, void *arg)
{
    sw_state *st = sw_state_of_module(module);
    size_t n;
    int i;

    if (st == NULL) {
        return 0;
    }
    for (n = 0; n < Py_ARRAY_LENGTH(sw_state_fields); n++) {
        const sw_state_field *f = &sw_state_fields[n];
        for (i = 0; i < f->count; i++) {
            PyObject *obj = *sw_state_slot(st, f, i);
            if (f->private) {
                int err = sw_private_traverse(obj, visit, arg);
                if (err) {
                    return err;
                }
            }
            else {
                Py_VISIT(obj);
            }
        }
    }
    return sw_registry_traverse(&st->registry, visit, arg);
}

int
sw_state_clear(PyObject *module)
{
    sw_state *st = sw_state_of_module(module);
    size_t n;
    int i;

    if (st == NULL) {
        return 0;
    }
    sw_registry_fini(&st->registry);
    sw_promotion_fini(st);
    for (n = 0; n < Py_ARRAY_LENGTH(sw_state_fields); n++) {
        const sw_state_field *f = &sw_state_fields[n];
        for (i = 0; i < f->count; i++) {
            Py_CLEAR(*sw_state_slot(st, f, i));
        }
    }
    return 0;
}

void
sw_state_free(void *module)
{
    sw_state *st = sw_state_of_module((PyObject *)module);

    (void)sw_state_clear((PyObject *)module);
    if (st != NULL) {
        sw_capi_free(st);
    }
}
