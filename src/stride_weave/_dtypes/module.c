/* module.c: the stride_weave._dtypes module.
 *
 * Owns module initialization (multi-phase, with module state), building the
 * model's classes and the built-in descriptor graph, and keeping one graph
 * per interpreter: the first module object is remembered in the
 * interpreter's state dict, and a re-import (after removal from
 * sys.modules) adopts its objects instead of building a second graph.
 */
#include "state.h"
#include "capi.h"
#include "codecs.h"
#include "descriptor.h"
#include "dlpack.h"
#include "level.h"
#include "meta.h"
#include "numinfo.h"
#include "pickle.h"
#include "privtable.h"
#include "relations.h"
#include "rule.h"

/* Built-in graph, in registration order. */
typedef struct {
    const char *name;
    const char *supertype;   /* NULL: root category */
    long bits;               /* 0: a category */
} sw_module_builtin;

static const sw_module_builtin sw_module_builtins[] = {
    {"Any", NULL, 0},
    {"Floating", "Any", 0},
    {"Integer", "Any", 0},
    {"Bool", "Any", 8},
    {"Int32", "Integer", 32},
    {"Int8", "Integer", 8},
    {"Float32", "Floating", 32},
    {"Float64", "Floating", 64},
    {"E8M0", "Floating", 8},
    {"E5M2", "Floating", 8},
    {"E4M3", "Floating", 8},
    {"E3M2", "Floating", 6},
    {"E2M3", "Floating", 6},
    {"E2M1", "Floating", 4},
    {NULL, NULL, 0},
};

/* Built-in block-scaled formats: element, then (scale, block) levels
 * innermost first; block 0 stands for Whole. */
typedef struct {
    const char *name;
    const char *element;
    struct { const char *scale; long block; } levels[2];
    int nlevels;
} sw_module_builtin_format;

static const sw_module_builtin_format sw_module_builtin_formats[] = {
    /* OCP Microscaling v1.0: one E8M0 scale per 32 elements. */
    {"MXFP8_E4M3", "E4M3", {{"E8M0", 32}}, 1},
    {"MXFP8_E5M2", "E5M2", {{"E8M0", 32}}, 1},
    {"MXFP6_E3M2", "E3M2", {{"E8M0", 32}}, 1},
    {"MXFP6_E2M3", "E2M3", {{"E8M0", 32}}, 1},
    {"MXFP4", "E2M1", {{"E8M0", 32}}, 1},
    {"MXINT8", "Int8", {{"E8M0", 32}}, 1},
    /* NVFP4: an E4M3 scale per 16 elements, one Float32 per tensor. */
    {"NVFP4", "E2M1", {{"E4M3", 16}, {"Float32", 0}}, 2},
    {NULL, NULL, {{NULL, 0}}, 0},
};

static int
sw_module_add_name(PyObject *set, const char *name)
{
    PyObject *s = PyUnicode_InternFromString(name);
    int status = s ? PySet_Add(set, s) : -1;

    Py_XDECREF(s);
    return status;
}

/* A frozenset of interned names: `names` (NULL-terminated), plus, when
 * `kinds` is set, the accessor names of every kind (kind.h). */
static PyObject *
sw_module_owned_set(const char *const *names, int kinds)
{
    PyObject *set = PySet_New(NULL), *frozen = NULL;
    const char *const *p;
    int k;

    if (set == NULL) {
        return NULL;
    }
    for (p = names; *p != NULL; p++) {
        if (sw_module_add_name(set, *p) < 0) {
            goto done;
        }
    }
    for (k = SW_KIND_NONE + 1; kinds && k < SW_KIND_COUNT; k++) {
        PyGetSetDef *g;
        for (g = sw_kind_table[k]->getsets; g->name != NULL; g++) {
            if (sw_module_add_name(set, g->name) < 0) {
                goto done;
            }
        }
        for (g = sw_kind_table[k]->fixed; g != NULL && g->name != NULL; g++) {
            if (sw_module_add_name(set, g->name) < 0) {
                goto done;
            }
        }
    }
    frozen = PyFrozenSet_New(set);
done:
    Py_DECREF(set);
    return frozen;
}

/* ---- building the model ---------------------------------------------------- */

/* One of the model's classes: `bases`, a namespace of `doc`, the
 * accessors `getsets` (NULL-terminated, or NULL) bound to the C layout,
 * and `fill` (or NULL) for the rest; then the fixed attributes `fixed`
 * (NULL-terminated, or NULL), which are bound to the class itself. */
static PyTypeObject *
sw_module_make_class(sw_state *st, const char *name, PyObject *bases, int abstract,
              sw_kind kind, const char *doc, PyGetSetDef *getsets,
              PyGetSetDef *fixed, int (*fill)(sw_state *, PyObject *))
{
    PyObject *ns = PyDict_New();
    PyObject *cls = NULL;

    if (ns == NULL) {
        return NULL;
    }
    if (doc != NULL) {
        PyObject *text = PyUnicode_FromString(doc);
        if (text == NULL || PyDict_SetItemString(ns, "__doc__", text) < 0) {
            Py_XDECREF(text);
            goto done;
        }
        Py_DECREF(text);
    }
    for (; getsets != NULL && getsets->name != NULL; getsets++) {
        PyObject *descr = PyDescr_NewGetSet(st->base_type, getsets);
        if (descr == NULL
            || PyDict_SetItemString(ns, getsets->name, descr) < 0) {
            Py_XDECREF(descr);
            goto done;
        }
        Py_DECREF(descr);
    }
    if (fill != NULL && fill(st, ns) < 0) {
        goto done;
    }
    /* No instance dict for the model's own descriptors; user subclasses
     * without __slots__ still get one. */
    if (PyDict_SetItemString(ns, "__slots__", st->empty_tuple) < 0) {
        goto done;
    }
    cls = sw_meta_create_model_class(st, name, bases, ns, abstract, kind);
    if (cls != NULL
        && sw_descriptor_install_fixed(st, (PyTypeObject *)cls, fixed) < 0) {
        Py_CLEAR(cls);
    }
done:
    Py_DECREF(ns);
    return (PyTypeObject *)cls;
}

/* Each kind's __init__ carrier and model class, in table order (a parent
 * before the kinds refining it).  A kind's class derives from DType and its
 * init carrier; a refining kind puts its carrier first, so its __init__
 * wins over the parent's. */
static int
sw_module_make_kind_classes(PyObject *module, sw_state *st)
{
    int k;

    for (k = SW_KIND_NONE + 1; k < SW_KIND_COUNT; k++) {
        const sw_kind_def *def = sw_kind_table[k];
        PyTypeObject *init, *parent;
        PyObject *bases;

        init = (PyTypeObject *)PyType_FromModuleAndSpec(
            module, def->init_spec, (PyObject *)st->base_type);
        if (init == NULL) {
            return -1;
        }
        st->kind_init_types[k] = init;
        parent = def->parent == SW_KIND_NONE ? st->dtype_type
                                             : st->kind_types[def->parent];
        bases = def->parent == SW_KIND_NONE ? PyTuple_Pack(2, parent, init)
                                            : PyTuple_Pack(2, init, parent);
        if (bases == NULL) {
            return -1;
        }
        st->kind_types[k] = sw_module_make_class(st, def->class_name, bases,
                                          def->abstract, (sw_kind)k, def->doc,
                                          def->getsets, def->fixed, NULL);
        Py_DECREF(bases);
        if (st->kind_types[k] == NULL) {
            return -1;
        }
    }
    return 0;
}

/* A new reference to the built-in `name` from DType's namespace, which
 * `needed_by` needs; NULL with an exception when it is missing or the
 * lookup fails. */
static PyObject *
sw_module_builtin_get(PyObject *dtype_dict, const char *needed_by,
                      const char *name)
{
    PyObject *obj = NULL;
    int found = PyDict_GetItemStringRef(dtype_dict, name, &obj);

    if (found == 0) {
        PyErr_Format(PyExc_SystemError, "built-in %s before %s", needed_by,
                     name);
    }
    return obj;
}

static int
sw_module_install_builtins(sw_state *st)
{
    const sw_module_builtin *b;
    PyObject *dtype_dict = st->dtype_type->tp_dict;

    for (b = sw_module_builtins; b->name != NULL; b++) {
        PyObject *supertype, *cls, *args, *kwargs, *obj = NULL;

        supertype = b->supertype == NULL
            ? Py_NewRef(Py_None)
            : sw_module_builtin_get(dtype_dict, b->name, b->supertype);
        if (supertype == NULL) {
            return -1;
        }
        /* The real constructors: built-ins take the same path as users. */
        if (b->bits == 0) {
            cls = (PyObject *)st->kind_types[SW_KIND_CATEGORY];
            kwargs = Py_BuildValue("{s:O}", "supertype", supertype);
        }
        else {
            cls = (PyObject *)st->kind_types[SW_KIND_SIMPLE];
            kwargs = Py_BuildValue("{s:l,s:O}", "bits", b->bits,
                                   "supertype", supertype);
        }
        args = Py_BuildValue("(s)", b->name);
        if (args != NULL && kwargs != NULL) {
            obj = PyObject_Call(cls, args, kwargs);
        }
        Py_XDECREF(args);
        Py_XDECREF(kwargs);
        Py_DECREF(supertype);
        if (obj == NULL) {
            return -1;
        }
        /* Every process has the built-ins: their pickles name no module. */
        Py_CLEAR(((sw_descriptor *)obj)->module);
        /* DType's namespace is frozen to users; the model writes it here. */
        if (PyDict_SetItemString(dtype_dict, b->name, obj) < 0) {
            Py_DECREF(obj);
            return -1;
        }
        Py_DECREF(obj);
    }
    return 0;
}

/* One built-in block-scaled format, through the real constructor (new ref). */
static PyObject *
sw_module_make_builtin_format(sw_state *st, const sw_module_builtin_format *b)
{
    PyObject *dtype_dict = st->dtype_type->tp_dict;
    PyObject *element, *levels, *args = NULL, *kwargs = NULL, *obj = NULL;
    int i;

    element = sw_module_builtin_get(dtype_dict, b->name, b->element);
    if (element == NULL) {
        return NULL;
    }
    levels = PyTuple_New(b->nlevels);
    if (levels == NULL) {
        goto done;
    }
    for (i = 0; i < b->nlevels; i++) {
        PyObject *scale = sw_module_builtin_get(dtype_dict, b->name,
                                                b->levels[i].scale);
        PyObject *level;

        if (scale == NULL) {
            goto done;
        }
        level = b->levels[i].block == 0
            ? PyObject_CallFunctionObjArgs((PyObject *)st->level_type, scale,
                                           st->whole, NULL)
            : PyObject_CallFunction((PyObject *)st->level_type, "Ol", scale,
                                    b->levels[i].block);
        Py_DECREF(scale);
        if (level == NULL) {
            goto done;
        }
        PyTuple_SET_ITEM(levels, i, level);
    }
    args = Py_BuildValue("(s)", b->name);
    kwargs = Py_BuildValue("{s:O,s:O}", "element", element, "levels", levels);
    if (args != NULL && kwargs != NULL) {
        obj = PyObject_Call((PyObject *)st->kind_types[SW_KIND_BLOCK_SCALED],
                            args, kwargs);
    }
done:
    Py_DECREF(element);
    Py_XDECREF(levels);
    Py_XDECREF(args);
    Py_XDECREF(kwargs);
    return obj;
}

static int
sw_module_install_builtin_formats(sw_state *st)
{
    const sw_module_builtin_format *b;

    for (b = sw_module_builtin_formats; b->name != NULL; b++) {
        PyObject *obj = sw_module_make_builtin_format(st, b);
        if (obj != NULL) {
            Py_CLEAR(((sw_descriptor *)obj)->module);   /* as above */
        }
        if (obj == NULL
            || PyDict_SetItemString(st->dtype_type->tp_dict, b->name, obj) < 0) {
            Py_XDECREF(obj);
            return -1;
        }
        Py_DECREF(obj);
    }
    return 0;
}

static int
sw_module_build_graph(PyObject *module, sw_state *st)
{
    PyObject *bases;

    st->empty_tuple = PyTuple_New(0);
    st->structures = sw_private_dict_new();
    st->chains = sw_private_dict_new();
    st->refs = sw_private_dict_new();
    st->reprs = sw_private_dict_new();
    st->pickles = sw_private_dict_new();
    if (st->structures == NULL || st->chains == NULL || st->refs == NULL
        || st->reprs == NULL || st->pickles == NULL) {
        return -1;
    }
    st->owned_names = sw_module_owned_set(sw_descriptor_owned_names, 1);
    st->rule_owned_names = sw_module_owned_set(sw_rule_owned_names, 0);
    if (st->empty_tuple == NULL || sw_state_idents_init(st) < 0
        || sw_pickle_init_policy(st) < 0 || sw_structure_labels_init(st) < 0
        || st->owned_names == NULL || st->rule_owned_names == NULL) {
        return -1;
    }
    if (sw_registry_init(&st->registry) < 0) {
        return -1;
    }
    if (PyModule_AddFunctions(module, sw_pickle_methods) < 0
        || PyModule_AddFunctions(module, sw_kind_methods) < 0
        || PyModule_AddFunctions(module, sw_numrecords_methods) < 0
        || PyModule_AddFunctions(module, sw_codecs_methods) < 0
        || PyModule_AddFunctions(module, sw_dlpack_methods) < 0) {
        return -1;
    }
    st->reconstruct = PyObject_GetAttrString(module, "_reconstruct");
    if (st->reconstruct == NULL) {
        return -1;
    }
    st->meta_type = (PyTypeObject *)sw_meta_create_type(module);
    if (st->meta_type == NULL) {
        return -1;
    }
    st->base_type = (PyTypeObject *)sw_descriptor_create_type(module);
    if (st->base_type == NULL) {
        return -1;
    }
    st->class_bound_type = (PyTypeObject *)sw_classbound_create_type(module);
    if (st->class_bound_type == NULL) {
        return -1;
    }
    if (sw_classcheck_init(module, st) < 0
        || sw_classcheck_install(st, st->meta_type) < 0
        || sw_miss_create_type(module, st) < 0) {
        return -1;
    }
    if (sw_whole_create(module, st) < 0 || sw_rule_create_types(module, st) < 0
        || sw_level_create_type(module, st) < 0
        || sw_symbolic_create_type(module, st) < 0
        || sw_numinfo_create_type(module, st) < 0
        || sw_dlpack_create_type(module, st) < 0
        || sw_levelextent_create_type(module, st) < 0) {
        return -1;
    }
    st->level_extent_cache = sw_private_dict_new();
    if (st->level_extent_cache == NULL) {
        return -1;
    }
    bases = PyTuple_Pack(1, st->base_type);
    if (bases == NULL) {
        return -1;
    }
    st->dtype_type = sw_module_make_class(
        st, "DType", bases, 1, SW_KIND_NONE,
        "Abstract base of every dtype descriptor.\n\n"
        "A descriptor is an immutable, registered singleton: the process-"
        "local identity of one dtype category or representation, compared "
        "by identity.  The built-ins are attributes of this class "
        "(DType.Float32, DType.Floating, ...); extensions are reached "
        "through DType.from_name() and DType.registered().",
        NULL, sw_descriptor_fixed, sw_descriptor_fill_namespace);
    Py_DECREF(bases);
    if (st->dtype_type == NULL || sw_module_make_kind_classes(module, st) < 0) {
        return -1;
    }
    if (sw_module_install_builtins(st) < 0
        || sw_module_install_builtin_formats(st) < 0
        || sw_numrecords_install_builtins(st) < 0
        || sw_promotion_init(module, st) < 0) {
        return -1;
    }
    PyType_Modified(st->dtype_type);
    return 0;
}

static int
sw_module_export(PyObject *module, sw_state *st)
{
    struct { const char *name; PyObject *obj; } exports[] = {
        {"DTypeMeta", (PyObject *)st->meta_type},
        {"DType", (PyObject *)st->dtype_type},
        {"RuleMeta", (PyObject *)st->rule_meta_type},
        {"RepresentationRule", (PyObject *)st->rule_type},
        {"LevelExtent", (PyObject *)st->level_extent_type},
        {"WholeExtent", (PyObject *)st->whole_type},
        {"Whole", st->whole},
        {"Level", (PyObject *)st->level_type},
        {"SymbolicBits", (PyObject *)st->symbolic_type},
        {"NumericInfo", (PyObject *)st->numinfo_type},
        {"UnknownNameError", (PyObject *)st->unknown_name_type},
        {NULL, NULL},
    };
    int i;

    for (i = 0; exports[i].name != NULL; i++) {
        if (PyModule_AddObjectRef(module, exports[i].name, exports[i].obj) < 0) {
            return -1;
        }
    }
    for (i = SW_KIND_NONE + 1; i < SW_KIND_COUNT; i++) {
        if (PyModule_AddObjectRef(module, sw_kind_table[i]->class_name,
                                  (PyObject *)st->kind_types[i]) < 0) {
            return -1;
        }
    }
    return sw_kind_add_exports(module, st);
}

/* A re-import: take every public object of the first module, so that
 * identities (and the pickle entry point) stay the same. */
static int
sw_module_adopt(PyObject *module, PyObject *first)
{
    PyObject *dict = PyModule_GetDict(first);   /* borrowed */
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    int status = 0;

    /* Another thread may change the first module's dict meanwhile. */
    Py_BEGIN_CRITICAL_SECTION(dict);
    while (status == 0 && PyDict_Next(dict, &pos, &key, &value)) {
        const char *s;

        if (!PyUnicode_Check(key)) {
            continue;
        }
        s = PyUnicode_AsUTF8(key);
        if (s == NULL) {
            status = -1;
        }
        else if (s[0] == '_' && s[1] == '_') {
            continue;   /* the new module keeps its own __name__, __spec__... */
        }
        else if (PyModule_AddObjectRef(module, s, value) < 0) {
            status = -1;
        }
    }
    Py_END_CRITICAL_SECTION();
    return status;
}

static int
sw_module_exec(PyObject *module)
{
    sw_state *st = sw_state_of_module(module);
    PyObject *interp_dict = PyInterpreterState_GetDict(PyInterpreterState_Get());
    PyObject *first;

    if (interp_dict == NULL) {
        PyErr_SetString(PyExc_ImportError,
                        "stride_weave._dtypes: no interpreter state dict");
        return -1;
    }
    if (PyDict_GetItemStringRef(interp_dict, SW_STATE_INTERP_KEY, &first) < 0) {
        return -1;
    }
    if (first != NULL) {
        int status = sw_module_adopt(module, first);
        Py_DECREF(first);
        return status;
    }
    if (sw_module_build_graph(module, st) < 0 || sw_module_export(module, st) < 0
        || sw_capi_create(module, st) < 0) {
        return -1;
    }
    return PyDict_SetItemString(interp_dict, SW_STATE_INTERP_KEY, module);
}

static PyMethodDef sw_module_methods[] = {
    {NULL, NULL, 0, NULL},   /* _reconstruct is added with the graph */
};

static PyModuleDef_Slot sw_module_slots[] = {
    {Py_mod_exec, sw_module_exec},
#if PY_VERSION_HEX >= 0x030C0000
    {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
#endif
#ifdef Py_GIL_DISABLED
    /* Free-threaded builds run without the GIL: the registry has its own
     * PyMutex and runs no Python code while holding it; an object under
     * construction keeps its user attributes, its claim on the model's
     * __init__ and its seal in its own critical section; the lifecycle
     * flags are published with release/acquire ordering; and everything
     * else the module holds is immutable once built (see compat.h,
     * attrs.c, registry.c and docs/guarantees.md, "Free-threaded
     * CPython"). */
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
    {0, NULL},
};

PyModuleDef sw_module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "stride_weave._dtypes",
    .m_doc = "The C core of stride_weave.dtypes: descriptor classes, the "
             "name registry, canonical structures and pickling.",
    .m_size = sizeof(sw_state),
    .m_methods = sw_module_methods,
    .m_slots = sw_module_slots,
    .m_traverse = sw_state_traverse,
    .m_clear = sw_state_clear,
    .m_free = sw_state_free,
};

PyMODINIT_FUNC
PyInit__dtypes(void)
{
    return PyModuleDef_Init(&sw_module_def);
}
