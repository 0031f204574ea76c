/* state.h: the module state, one per interpreter's descriptor graph
 * (module.c), and the only ways to reach it:
 *   sw_state_of_type(tp)     from any type the module defines, and so from
 *                            any of its objects (sw_state_of_type(Py_TYPE(o)));
 *   sw_state_of_module(m)    from the module object (module functions);
 *   sw_state_current()       from nowhere: the current interpreter's graph
 *                            (the C API).
 */
#ifndef SW_STATE_H
#define SW_STATE_H

#include "compat.h"
#include "kind.h"
#include "registry.h"
#include "structure.h"

struct SW_DTypes_CAPI;   /* the public C API table (capi.c) */

/* The key of the interpreter's state dict under which the first module
 * object is kept (versioned: an incompatible layout gets its own graph). */
#define SW_STATE_INTERP_KEY "stride_weave._dtypes.graph.v1"

/* The names the module looks up or compares at run time, made (interned)
 * once per graph.  A name made for each lookup (PyObject_GetAttrString,
 * PyObject_CallMethod with a C string) is an allocation every time, and
 * CPython 3.11's type attribute cache, keyed by the name object's address,
 * keeps each such string in a slot of its own, evicting the interpreter's
 * own entries.  The text of each is in state.c. */
typedef enum {
    SW_IDENT_MODULE = 0,            /* "__module__" */
    SW_IDENT_NAME,                  /* "__name__" */
    SW_IDENT_CLASS,                 /* "__class__" */
    SW_IDENT_FROM_NAME,             /* "from_name" */
    SW_IDENT_REGISTERED,            /* "registered" */
    SW_IDENT_STRUCTURE_EXTENSION,   /* "structure_extension" */
    SW_IDENT_LOGICAL_DTYPE,         /* "logical_dtype" (a rule's context) */
    SW_IDENT_LOGICAL_SIZE,          /* "logical_size" */
    SW_IDENT_LEVEL_SHAPES,          /* "level_shapes" */
    SW_IDENT_ADJACENT_LAYOUTS,      /* "adjacent_layouts" */
    SW_IDENT_UNIFORM_PREIMAGE_EXTENT,   /* "uniform_preimage_extent" */
    SW_IDENT_COUNT
} sw_ident;

/* How many names the relations intern (relations.h, sw_relname). */
#define SW_RELATION_NAMES 16
/* Entries of the cache of safe casts (casting.c), a power of two. */
#define SW_CAST_CACHE_SIZE 1024

/* Readers of the default lattice count themselves in one of these slots
 * (promotion.c): on a free-threaded build a few, so that threads reading
 * at once seldom share a counter's cache line; with the GIL, one. */
#ifdef Py_GIL_DISABLED
#  define SW_LATTICE_READER_SLOTS 32
#else
#  define SW_LATTICE_READER_SLOTS 1
#endif

typedef struct {
    uint32_t count;         /* readers inside a read now */
    char pad[64 - sizeof(uint32_t)];    /* a cache line each */
} sw_lattice_reader_slot;

typedef struct sw_state {
    PyTypeObject *meta_type;        /* DTypeMeta */
    PyTypeObject *base_type;        /* _DescriptorBase: the C instance layout */
    PyTypeObject *class_bound_type; /* _ClassBound: from_name, registered */
    PyTypeObject *class_check_type; /* _ClassCheck: the metaclasses'
                                       __instancecheck__, __subclasscheck__ */
    PyTypeObject *class_check_method_type;  /* _ClassCheckMethod: one
                                               class's check */
    PyTypeObject *unknown_name_type;    /* UnknownNameError: a registry miss */
    PyObject *pack_names;   /* tuple of exact str: the names the formats
                               pack registers, which a miss suggests (miss.c) */
    PyObject *type_checks[2];       /* type.__instancecheck__ and
                                       type.__subclasscheck__ (this
                                       interpreter's), which the class
                                       checks fall back to (classcheck.c) */
    PyTypeObject *dtype_type;       /* DType */
    PyTypeObject *kind_types[SW_KIND_COUNT];    /* each kind's model class
                                                   (DTypeCategory, ...) */
    PyTypeObject *kind_init_types[SW_KIND_COUNT];   /* each kind's tp_init
                                                       layout (_SimpleInit) */
    PyTypeObject *rule_meta_type;   /* RuleMeta */
    PyTypeObject *rule_base_type;   /* _RuleBase: the C rule layout */
    PyTypeObject *rule_type;        /* RepresentationRule */
    PyTypeObject *level_extent_type;    /* LevelExtent */
    PyTypeObject *whole_type;       /* WholeExtent */
    PyTypeObject *level_type;       /* Level */
    PyTypeObject *symbolic_type;    /* SymbolicBits */
    PyTypeObject *numinfo_type;     /* NumericInfo (numinfo.c) */
    PyTypeObject *dlpack_view_type; /* _DLPackView (dlpack.c) */
    PyObject *whole;                /* the Whole singleton */
    PyObject *reconstruct;          /* _reconstruct, the pickle entry point */
    PyObject *import_policy;        /* which modules _reconstruct may import:
                                       Py_None until first needed, then the
                                       record (setting, declared) (pickle.c) */
    PyObject *owned_names;          /* frozenset: model-owned descriptor members */
    PyObject *level_extent_cache;   /* dict: (level, extent) -> shared rule */
    PyObject *structures;   /* dict: registered structure -> itself, so equal
                               structures are stored once */
    PyObject *chains;       /* dict: category -> (category, *its supertypes),
                               the supertypes() shared by its members */
    PyObject *refs;         /* dict: descriptor -> its structure reference */
    PyObject *reprs;        /* dict: finished descriptor -> its repr, made
                               on first use (it never changes) */
    PyObject *pickles;      /* dict: finished descriptor -> its __reduce__
                               value, made on first use (record.c) */
    PyObject *labels[SW_LABEL_COUNT];   /* interned structure labels */
    PyObject *empty_extension;  /* ("extension", ()): the common field */
    PyObject *rule_owned_names;     /* frozenset: framework-owned rule members */
    PyObject *empty_tuple;
    PyObject *idents[SW_IDENT_COUNT];   /* interned names (sw_ident) */
    /* Kinds, casting and promotion (relations.h). */
    PyTypeObject *lattice_type;     /* PromotionLattice */
    PyObject *lattice_reconstruct;  /* _reconstruct_lattice, the lattices'
                                       pickle entry point (lattice.c) */
    PyObject *promotion_error;      /* PromotionError, a TypeError */
    PyObject *default_lattice;      /* the current default lattice, swapped
                                       atomically (promotion.c) */
    struct sw_lattice *retired_lattices;    /* default lattices replaced while
                                               a reader may still have been
                                               using them, each with the
                                               reference the state held: a
                                               stack through retired_next */
    sw_lattice_reader_slot lattice_readers[SW_LATTICE_READER_SLOTS];
    PyObject *kind_categories[2];   /* DType.Integer and DType.Floating */
    PyObject *relation_names[SW_RELATION_NAMES];    /* interned (sw_relname) */
    PyObject *relation_aliases[SW_RELATION_NAMES];  /* for each, the first
                                                       other exact str seen
                                                       equal to it, or NULL;
                                                       set once */
    uint32_t relation_ids;          /* the last relation id handed out */
    uint64_t cast_cache[SW_CAST_CACHE_SIZE];    /* safe casts between dtypes
                                                   with records, by relation
                                                   ids (casting.c) */
    sw_registry registry;
    int installing;                 /* creating the model's own classes */
    struct SW_DTypes_CAPI *capi;    /* owned: the C API table, or NULL */
} sw_state;

extern PyModuleDef sw_module_def;


/* The head every class made by the module's metaclasses starts with
 * (sw_type, meta.h, begins with the same two fields). */
typedef struct {
    PyHeapTypeObject ht;
    sw_state *state;    /* borrowed: the metaclass keeps the module alive */
} sw_class_head;

PyObject *sw_sealedmeta_alloc(PyTypeObject *meta, Py_ssize_t nitems);

static inline sw_state *
sw_state_of_module(PyObject *module)
{
    return (sw_state *)PyModule_GetState(module);
}

/* The state of the graph `tp` belongs to (borrowed), or NULL with
 * TypeError for a type the module did not define.  Classes of the
 * module's metaclasses (they allocate through sw_sealedmeta_alloc) carry it
 * from their allocation on (sealedmeta.c refuses to allocate one without
 * it, so the error below is a safeguard); the C layout types find it
 * through their module. */
static inline sw_state *
sw_state_of_type(PyTypeObject *tp)
{
    PyObject *module;

    if (Py_TYPE(tp)->tp_alloc == sw_sealedmeta_alloc) {
        sw_state *st = ((sw_class_head *)tp)->state;
        if (st == NULL) {
            PyErr_Format(PyExc_TypeError,
                         "class %s was not created by its metaclass",
                         tp->tp_name);
        }
        return st;
    }
    module = PyType_GetModuleByDef(tp, &sw_module_def);   /* borrowed */
    return module ? sw_state_of_module(module) : NULL;
}

int sw_state_traverse(PyObject *module, visitproc visit, void *arg);
int sw_state_clear(PyObject *module);
void sw_state_free(void *module);
sw_state *sw_state_current(void);   /* borrowed: this interpreter's graph */
int sw_state_check(sw_state *st);
int sw_state_idents_init(sw_state *st);
int sw_state_intern_all(PyObject **dst, const char *const *texts, int count);

#endif /* SW_STATE_H */
