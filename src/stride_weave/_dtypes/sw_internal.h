/* sw_internal.h: what the translation units of stride_weave._dtypes share.
 *
 * Each .c file owns one concern (see the comment at its top); this header
 * declares the structs they all see and the functions they call across
 * files.  Nothing here is public API: the public C header for consumers
 * lives in include/stride_weave/.
 */
#ifndef SW_INTERNAL_H
#define SW_INTERNAL_H

#include "compat.h"
#include "kind.h"
#include "privtable.h"
#include "registry.h"
#include "structure.h"
#include "state.h"

/* ---- descriptor lifecycle ------------------------------------ */

typedef enum {
    SW_RAW = 0,         /* allocated, not yet handed to __init__ */
    SW_BUILDING,        /* the most-derived __init__ is running */
    SW_FINISHED,        /* validated, registered and sealed */
    SW_REJECTED,        /* construction failed; never registered */
} sw_build_state;

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
typedef struct sw_descriptor {
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

/* 1 when `obj` is a descriptor of `st`'s graph of the given kind (or a
 * kind refining it): an instance of the kind's model class whose recorded
 * kind agrees (the kind decides which fields the object has). */
static inline int
sw_is_kind(sw_state *st, PyObject *obj, sw_kind kind)
{
    return PyObject_TypeCheck(obj, st->kind_types[kind])
           && sw_kind_within(((sw_descriptor *)obj)->kind, kind);
}

/* A new reference to `s` (a str) as an exact str: a subclass is copied
 * without running its methods, so hashing and comparing run no user code. */
static inline PyObject *
sw_exact_str(PyObject *s)
{
    return PyUnicode_CheckExact(s) ? Py_NewRef(s) : PyUnicode_FromObject(s);
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
extern const char *const sw_descriptor_owned_names[];
PyObject *sw_base_create_type(PyObject *module);
PyObject *sw_class_bound_create_type(PyObject *module);
int sw_descriptor_finalize(sw_state *st, sw_descriptor *d,
                           PyObject **existing);
int sw_descriptor_check_usable(sw_descriptor *d);
sw_descriptor *sw_descriptor_of_kind(PyObject *self, sw_kind kind,
                                     const char *accessor);
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

/* category.c, simple.c, compound.c, blockscaled.c: see kind.h */
int sw_dtype_fill_namespace(sw_state *st, PyObject *ns);

/* rule.c */
int sw_rule_create_types(PyObject *module, sw_state *st);
int sw_is_rule_class(PyTypeObject *tp);
int sw_rule_traverse(PyObject *self, visitproc visit, void *arg);
int sw_rule_clear(PyObject *self);
void sw_rule_dealloc(PyObject *self);

/* levelextent.c */
int sw_level_extent_create_type(PyObject *module, sw_state *st);

/* level.c, symbolic.c */
int sw_level_create_type(PyObject *module, sw_state *st);
int sw_symbolic_create_type(PyObject *module, sw_state *st);

/* whole.c */
int sw_whole_create(PyObject *module, sw_state *st);

/* capi.c */
int sw_capi_create(PyObject *module, sw_state *st);
void sw_capi_free(sw_state *st);

/* pickle.c */
extern PyMethodDef sw_pickle_methods[];
int sw_pickle_init_policy(sw_state *st);

#endif /* SW_INTERNAL_H */
