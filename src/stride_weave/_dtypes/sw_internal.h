/* sw_internal.h: what the translation units of stride_weave._dtypes share.
 *
 * Each .c file owns one concern (see the comment at its top); this header
 * declares the structs they all see and the functions they call across
 * files.  Nothing here is public API: the public C header for consumers
 * lives in include/stride_weave/.
 */
#ifndef SW_INTERNAL_H
#define SW_INTERNAL_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#if PY_VERSION_HEX < 0x030B0000
#  error "stride_weave requires CPython 3.11 or newer"
#endif

#if PY_VERSION_HEX >= 0x030D0000
#  define SW_HAVE_PYMUTEX 1
#endif

/* Free-threaded CPython (3.13t+, Py_GIL_DISABLED).  A per-object critical
 * section guards what several threads may touch on one object: the user
 * attributes of a descriptor or rule under construction and its sealing
 * (attrs.c, registry.c, rule.c).  GIL builds (and 3.11/3.12, which have no
 * critical sections) get a plain block.  The lifecycle flags
 * (build_state, initialized) are written with release and read with
 * acquire ordering, so a thread that sees a descriptor finished (or
 * initialized) also sees every field written before. */
#if PY_VERSION_HEX < 0x030D0000
#  define Py_BEGIN_CRITICAL_SECTION(op) { (void)(op);
#  define Py_END_CRITICAL_SECTION() }
#endif
#ifdef Py_GIL_DISABLED
/* int (rules) or unsigned char (descriptors); 3.13 has no acquire/release
 * for uint8, so those use the sequentially consistent (stronger) forms. */
#  define SW_LOAD_FLAG(field) _Generic((field), \
       int: _Py_atomic_load_int_acquire((const int *)&(field)), \
       default: _Py_atomic_load_uint8((const uint8_t *)&(field)))
#  define SW_STORE_FLAG(field, value) _Generic((field), \
       int: _Py_atomic_store_int_release((int *)&(field), (int)(value)), \
       default: _Py_atomic_store_uint8((uint8_t *)&(field), (uint8_t)(value)))
#else
#  define SW_LOAD_FLAG(field) (field)
#  define SW_STORE_FLAG(field, value) ((void)((field) = (value)))
#endif

/* Cast a function with another PyCFunction signature to PyCFunction
 * without -Wcast-function-type complaining (as CPython's _PyCFunction_CAST). */
#define SW_CFUNC(func) ((PyCFunction)(void (*)(void))(func))

/* ---- descriptor kinds and lifecycle ------------------------------------ */

typedef enum {
    SW_KIND_NONE = 0,   /* DType itself and abstract mixes: no kind yet */
    SW_KIND_CATEGORY,
    SW_KIND_SIMPLE,
    SW_KIND_COMPOUND,
} sw_kind;

typedef enum {
    SW_RAW = 0,         /* allocated, not yet handed to __init__ */
    SW_BUILDING,        /* the most-derived __init__ is running */
    SW_FINISHED,        /* validated, registered and sealed */
    SW_REJECTED,        /* construction failed; never registered */
} sw_build_state;

/* ---- structure labels (structure.c) ------------------------------------- */

/* The untagged strings of the structure format.  Each is created once per
 * graph, so every structure shares them: less memory per descriptor, and
 * pickles that memoize them instead of repeating them. */
typedef enum {
    SW_LABEL_REF = 0,
    SW_LABEL_NONE,
    SW_LABEL_WHOLE,
    SW_LABEL_EXTENSION,
    SW_LABEL_SUPERTYPE,
    SW_LABEL_BITS,
    SW_LABEL_SIMPLE_TYPES,
    SW_LABEL_REPRESENTATION_RULES,
    SW_LABEL_ELEMENT,
    SW_LABEL_LEVELS,
    SW_LABEL_LEVEL,
    SW_LABEL_SCALE,
    SW_LABEL_BLOCK,
    SW_LABEL_DTYPE_CATEGORY,
    SW_LABEL_SIMPLE_DTYPE,
    SW_LABEL_COMPOUND_DTYPE,
    SW_LABEL_BLOCK_SCALED_DTYPE,
    SW_LABEL_REPRESENTATION_RULE,
    SW_LABEL_COUNT
} sw_label;

/* ---- private tables ------------------------------------------------------ */

/* The graph's internal tables (the registry's maps, the shared-structure,
 * chain, reference and rule caches) are plain dicts that no Python code
 * can reach: the module's traverse does not visit them, and they are kept
 * untracked by the garbage collector, so neither gc.get_referents() nor
 * gc.get_objects() hands them out.  A dict tracks itself again when it
 * stores a tracked value, hence the untrack after every insertion.  The
 * owner's traverse visits their entries instead (sw_private_traverse), so
 * the collector still sees every reference they hold and can free a whole
 * graph when its interpreter ends. */
static inline PyObject *
sw_private_dict_new(void)
{
    PyObject *dict = PyDict_New();

    if (dict != NULL) {
        PyObject_GC_UnTrack(dict);
    }
    return dict;
}

/* tp_traverse helper: visit the keys and values of a private table. */
static inline int
sw_private_traverse(PyObject *dict, visitproc visit, void *arg)
{
    PyObject *key, *value;
    Py_ssize_t pos = 0;

    if (dict == NULL) {
        return 0;
    }
    while (PyDict_Next(dict, &pos, &key, &value)) {
        Py_VISIT(key);
        Py_VISIT(value);
    }
    return 0;
}

/* A new reference to the value under `key` in a private table, or NULL
 * (with an exception on error).  Free-threaded builds read inside the
 * dict's critical section: CPython's lock-free dict reads are not ordered
 * against a concurrent insertion (ThreadSanitizer reports them). */
static inline PyObject *
sw_private_get(PyObject *dict, PyObject *key)
{
    PyObject *found;

    Py_BEGIN_CRITICAL_SECTION(dict);
    found = Py_XNewRef(PyDict_GetItemWithError(dict, key));
    Py_END_CRITICAL_SECTION();
    return found;
}

/* PyDict_SetDefault on a private table (borrowed result). */
static inline PyObject *
sw_private_setdefault(PyObject *dict, PyObject *key, PyObject *value)
{
    PyObject *result = PyDict_SetDefault(dict, key, value);

    PyObject_GC_UnTrack(dict);
    return result;
}

/* PyDict_SetItem on a private table. */
static inline int
sw_private_setitem(PyObject *dict, PyObject *key, PyObject *value)
{
    int status = PyDict_SetItem(dict, key, value);

    PyObject_GC_UnTrack(dict);
    return status;
}

/* ---- the registry (registry.c) ------------------------------------------ */

typedef struct {
#ifdef SW_HAVE_PYMUTEX
    PyMutex mutex;
#else
    PyThread_type_lock lock;
#endif
    PyObject *by_name;      /* private dict: exact str -> descriptor */
    PyObject *by_structure; /* private dict: structure -> descriptor, for the
                               kinds unique by structure (block-scaled) */
    PyObject **order;       /* registration order (strong references) */
    Py_ssize_t count;
    Py_ssize_t capacity;
    uint64_t version;       /* bumped by every registration */
    PyObject *snapshot;     /* cached tuple of all descriptors, or NULL */
} sw_registry;

/* ---- module state (module.c) -------------------------------------------- */

struct SW_DTypes_CAPI;   /* the public C API table (capi.c) */

typedef struct {
    PyTypeObject *meta_type;        /* DTypeMeta */
    PyTypeObject *base_type;        /* _DescriptorBase: the C instance layout */
    PyTypeObject *class_bound_type; /* _ClassBound: from_name, registered */
    PyTypeObject *dtype_type;       /* DType */
    PyTypeObject *category_type;    /* DTypeCategory */
    PyTypeObject *simple_type;      /* SimpleDType */
    PyTypeObject *compound_type;    /* CompoundDType */
    PyTypeObject *block_scaled_type;    /* BlockScaledDType */
    PyTypeObject *category_init_type;   /* _CategoryInit: tp_init layouts */
    PyTypeObject *simple_init_type;     /* _SimpleInit */
    PyTypeObject *compound_init_type;   /* _CompoundInit */
    PyTypeObject *block_scaled_init_type;   /* _BlockScaledInit */
    PyTypeObject *rule_meta_type;   /* RuleMeta */
    PyTypeObject *rule_base_type;   /* _RuleBase: the C rule layout */
    PyTypeObject *rule_type;        /* RepresentationRule */
    PyTypeObject *level_extent_type;    /* LevelExtent */
    PyTypeObject *whole_type;       /* WholeExtent */
    PyTypeObject *level_type;       /* Level */
    PyTypeObject *symbolic_type;    /* SymbolicBits */
    PyObject *whole;                /* the Whole singleton */
    PyObject *reconstruct;          /* _reconstruct, the pickle entry point */
    PyObject *import_policy;        /* which modules _reconstruct may import:
                                       Py_True (any), Py_False (none) or a
                                       tuple of exact str module prefixes */
    PyObject *owned_names;          /* frozenset: model-owned descriptor members */
    PyObject *level_extent_cache;   /* dict: (level, extent) -> shared rule */
    PyObject *structures;   /* dict: registered structure -> itself, so equal
                               structures are stored once */
    PyObject *chains;       /* dict: category -> (category, *its supertypes),
                               the supertypes() shared by its members */
    PyObject *refs;         /* dict: descriptor -> its structure reference */
    PyObject *labels[SW_LABEL_COUNT];   /* interned structure labels */
    PyObject *empty_extension;  /* ("extension", ()): the common field */
    PyObject *rule_owned_names;     /* frozenset: framework-owned rule members */
    PyObject *empty_tuple;
    PyObject *str_structure_extension;
    PyObject *str_module;           /* interned "__module__" */
    PyObject *str_name;             /* interned "__name__" */
    sw_registry registry;
    int installing;                 /* creating the model's own classes */
    struct SW_DTypes_CAPI *capi;    /* owned: the C API table, or NULL */
} sw_state;

extern PyModuleDef sw_module_def;

/* ---- per-class data: the metaclass instance layout (meta.c) ------------ */

typedef struct {
    PyHeapTypeObject ht;
    sw_state *state;        /* borrowed: the metaclass keeps the module alive */
    sw_kind kind;
    int abstract;
    int is_model;           /* one of the model's own classes: frozen */
    int ready;              /* 1 once the metaclass finished the class: its
                               hooks (__init_subclass__, __set_name__) run
                               before, and may neither instantiate nor
                               subclass it */
    PyObject *snapshot;     /* cached registered() result for this class */
    uint64_t snapshot_version;
    PyObject *bound[2];     /* from_name and registered bound to this class,
                               made on first use (descriptor.c) */
    PyGetSetDef *slot_defs; /* owned: the sealed __slots__ accessors */
} sw_type;

/* ---- the descriptor instance layout (descriptor.c) --------------------- */

/* What only compound dtypes have, allocated by the compound (or
 * block-scaled) __init__; simple dtypes and categories do not pay for it. */
typedef struct {
    PyObject *simple_types; /* tuple of SimpleDType: the planes */
    PyObject *rules;        /* tuple of RepresentationRule */
    PyObject *element;      /* SimpleDType (block-scaled dtypes), else NULL */
    PyObject *levels;       /* tuple of Level (block-scaled dtypes) */
    PyObject *bits_per_element; /* float or SymbolicBits (block-scaled) */
} sw_compound_fields;

/* Kept small: the registry holds every descriptor for the life of the
 * process (docs/performance.md counts bytes per registered descriptor). */
typedef struct {
    PyObject_HEAD
    PyObject *name;         /* exact str, set by the kind's __init__ */
    PyObject *supertypes;   /* tuple, nearest first; [0] is the supertype */
    PyObject *bits;         /* exact int (simple dtypes) */
    sw_compound_fields *compound;   /* owned (PyMem), compound dtypes only */
    PyObject *structure;    /* tuple, recorded at finalization */
    PyObject *attrs;        /* user attributes of a subclass (attrs.c) */
    PyObject *weakreflist;
    PyObject *module;       /* exact str or NULL: the module its pickle names
                               as where it is defined (pickle.c) */
    unsigned char kind;         /* sw_kind */
    unsigned char initialized;  /* 1: the kind's __init__ ran; 2: it was called */
    unsigned char build_state;  /* sw_build_state */
    unsigned char ensuring;     /* built by ensure(): an identical registered
                                   descriptor is the result, not an error */
} sw_descriptor;

/* The immediately enclosing category (borrowed), or NULL. */
static inline PyObject *
sw_descriptor_supertype(sw_descriptor *d)
{
    return d->supertypes != NULL && PyTuple_GET_SIZE(d->supertypes) > 0
        ? PyTuple_GET_ITEM(d->supertypes, 0) : NULL;
}

/* 1 when `other` is `d` or one of its enclosing categories. */
static inline int
sw_descriptor_reaches(sw_descriptor *d, PyObject *other)
{
    Py_ssize_t i;

    if ((PyObject *)d == other) {
        return 1;
    }
    for (i = 0; i < PyTuple_GET_SIZE(d->supertypes); i++) {
        if (PyTuple_GET_ITEM(d->supertypes, i) == other) {
            return 1;
        }
    }
    return 0;
}

/* 1 when `obj` is a descriptor of `st`'s graph of the given kind: an
 * instance of the kind's model class whose recorded kind agrees (the kind
 * decides which fields the object has). */
static inline int
sw_is_kind(sw_state *st, PyObject *obj, sw_kind kind)
{
    PyTypeObject *model = kind == SW_KIND_SIMPLE ? st->simple_type
                          : kind == SW_KIND_CATEGORY ? st->category_type
                          : st->compound_type;

    return PyObject_TypeCheck(obj, model)
           && ((sw_descriptor *)obj)->kind == kind;
}

/* A new reference to `s` (a str) as an exact str: a subclass is copied
 * without running its methods, so hashing and comparing run no user code. */
static inline PyObject *
sw_exact_str(PyObject *s)
{
    return PyUnicode_CheckExact(s) ? Py_NewRef(s) : PyUnicode_FromObject(s);
}

/* 1 for a finished-or-building block-scaled dtype whose base ran. */
static inline int
sw_descriptor_is_block_scaled(sw_descriptor *d)
{
    return d->compound != NULL && d->compound->element != NULL;
}

/* ---- the rule instance layout (rule.c) ---------------------------------- */

typedef struct {
    PyObject_HEAD
    PyObject *structure;    /* tuple, recorded at construction */
    PyObject *attrs;        /* user attributes of a subclass (attrs.c) */
    PyObject *weakreflist;
    int build_state;        /* sw_build_state */
} sw_rule;

/* ---- one scale level of a block-scaled format (level.c) ---------------- */

typedef struct {
    PyObject_HEAD
    PyObject *scale;    /* a finished, registered SimpleDType */
    PyObject *block;    /* exact int > 0, or Whole */
} sw_level;

/* ---- the LevelExtent rule layout (levelextent.c) ------------------------- */

typedef struct {
    sw_rule rule;
    PyObject *level;    /* exact int >= 0: the adjacent edge */
    PyObject *extent;   /* exact int > 0, or Whole */
} sw_level_extent;

/* ---- cross-file functions ------------------------------------------------ */

/* module.c */
sw_state *sw_state_from_class(PyTypeObject *cls);
sw_state *sw_state_current(void);   /* borrowed: this interpreter's graph */
int sw_state_check(sw_state *st);

/* meta.c */
PyObject *sw_meta_create_type(PyObject *module);
int sw_is_descriptor_class(PyTypeObject *tp);
PyObject *sw_meta_create_model_class(sw_state *st, const char *name,
                                     PyObject *bases, PyObject *ns,
                                     int abstract, sw_kind kind);
PyObject *sw_meta_build_class(PyTypeObject *meta, sw_state *st,
                              PyObject *owned, PyTypeObject *const *model_types,
                              PyObject *name, PyObject *bases, PyObject *ns,
                              PyObject *kwds, sw_kind kind, int abstract);
PyObject *sw_meta_alloc(PyTypeObject *meta, Py_ssize_t nitems);
PyObject *sw_meta_construct(PyObject *cls, PyObject *args, PyObject *kwds,
                            int ensuring);
int sw_meta_check_ready_bases(PyTypeObject *meta, PyObject *bases);
int sw_meta_check_ready(sw_type *t);
int sw_is_owned_name(PyObject *owned, PyObject *name);
int sw_is_owned_class_attribute(PyObject *owned, PyObject *name);
int sw_parse_class_keywords(PyObject *kwds, const char *keyword,
                            int *value, PyObject **rest);

/* descriptor.c */
PyObject *sw_base_create_type(PyObject *module);
PyObject *sw_class_bound_create_type(PyObject *module);
int sw_descriptor_finalize(sw_state *st, sw_descriptor *d,
                           PyObject **existing);
int sw_descriptor_check_usable(sw_descriptor *d);
sw_descriptor *sw_descriptor_of_kind(PyObject *self, sw_kind kind,
                                     int block_scaled, const char *accessor);
int sw_descriptor_begin_init(sw_descriptor *d, sw_kind kind,
                             const char *funcname);
int sw_descriptor_set_common(sw_state *st, sw_descriptor *d, PyObject *name,
                             PyObject *supertype);
int sw_check_kwargs(PyObject *kwds, const char *const *allowed,
                    const char *funcname);
PyObject *sw_normalize_name(PyObject *name, const char *funcname);
int sw_check_reference(sw_state *st, PyObject *ref, const char *argname,
                       const char *funcname);
int sw_check_simple_reference(sw_state *st, PyObject *ref,
                              const char *argname, const char *funcname);
int sw_check_supertype(sw_state *st, PyObject *supertype, int allow_none,
                       const char *funcname);
PyObject *sw_descriptor_repr(PyObject *self);
PyObject *sw_descriptor_origin(PyObject *obj);
int sw_descriptor_bind_methods(PyTypeObject *cls);
sw_compound_fields *sw_descriptor_compound_fields(sw_descriptor *d);

/* attrs.c */
PyObject *sw_attrs_prepare_namespace(PyObject *ns, const char *clsname,
                                     int *own_attrs);
extern PyGetSetDef sw_sealed_getset[];
Py_hash_t sw_identity_hash(PyObject *self);
PyObject *sw_identity_richcompare(PyObject *self, PyObject *other, int op);
int sw_attrs_freeze(PyObject *self, PyObject **attrs, PyObject *owned);
int sw_attrs_traverse(PyObject *attrs, int sealed, visitproc visit, void *arg);
int sw_attrs_setup_class(PyTypeObject *cls, int own_attrs,
                         PyGetSetDef **slot_defs);
int sw_attrs_setattr(PyObject *self, PyObject **attrs, PyObject *name,
                     PyObject *value);

/* category.c, simple.c, compound.c */
int sw_dtype_fill_namespace(sw_state *st, PyObject *ns);
int sw_category_init_create_type(PyObject *module, sw_state *st);
int sw_simple_init_create_type(PyObject *module, sw_state *st);
int sw_compound_init_create_type(PyObject *module, sw_state *st);
int sw_category_fill_namespace(sw_state *st, PyObject *ns);
int sw_simple_fill_namespace(sw_state *st, PyObject *ns);
int sw_compound_fill_namespace(sw_state *st, PyObject *ns);
PyObject *sw_category_contract(sw_state *st, sw_descriptor *d);
PyObject *sw_simple_contract(sw_state *st, sw_descriptor *d);
PyObject *sw_compound_contract(sw_state *st, sw_descriptor *d);

/* rule.c */
int sw_rule_create_types(PyObject *module, sw_state *st);
int sw_is_rule_class(PyTypeObject *tp);
int sw_rule_traverse(PyObject *self, visitproc visit, void *arg);
int sw_rule_clear(PyObject *self);
void sw_rule_dealloc(PyObject *self);

/* levelextent.c */
int sw_level_extent_create_type(PyObject *module, sw_state *st);

/* blockscaled.c */
int sw_block_scaled_init_create_type(PyObject *module, sw_state *st);
int sw_block_scaled_fill_namespace(sw_state *st, PyObject *ns);
PyObject *sw_block_scaled_contract(sw_state *st, sw_descriptor *d);

/* level.c, symbolic.c */
int sw_level_create_type(PyObject *module, sw_state *st);
int sw_symbolic_create_type(PyObject *module, sw_state *st);

/* whole.c */
int sw_whole_create(PyObject *module, sw_state *st);

/* capi.c */
int sw_capi_create(PyObject *module, sw_state *st);
void sw_capi_free(sw_state *st);

/* registry.c */
int sw_registry_init(sw_registry *r);
void sw_registry_fini(sw_registry *r);
int sw_registry_traverse(sw_registry *r, visitproc visit, void *arg);
PyObject *sw_registry_lookup(sw_registry *r, PyObject *name);
PyObject *sw_registry_find(sw_registry *r, PyObject *name);
int sw_registry_contains(sw_registry *r, PyObject *name);
int sw_registry_is_canonical(sw_registry *r, sw_descriptor *d);
int sw_registry_publish(sw_registry *r, sw_descriptor *d, PyObject *owned,
                        PyObject *unique, PyObject **existing);
PyObject *sw_registry_snapshot(sw_registry *r, PyTypeObject *cls);

/* structure.c */
PyObject *sw_structure_encode_extension(sw_state *st, PyObject *ext,
                                        PyObject *owner);
int sw_structure_labels_init(sw_state *st);
int sw_structure_labels_traverse(sw_state *st, visitproc visit, void *arg);
void sw_structure_labels_clear(sw_state *st);
PyObject *sw_structure_ref(sw_state *st, sw_descriptor *d);
PyObject *sw_structure_encode_int(PyObject *value);
PyObject *sw_structure_field(sw_state *st, sw_label label, PyObject *value);
PyObject *sw_structure_describe_leaf(PyObject *leaf);
PyObject *sw_structure_diff(PyObject *ours, PyObject *theirs);
PyObject *sw_structure_diff_as(PyObject *ours, PyObject *theirs,
                               const char *theirs_label);

/* pickle.c */
extern PyMethodDef sw_pickle_methods[];
int sw_pickle_init_policy(sw_state *st);

#endif /* SW_INTERNAL_H */
