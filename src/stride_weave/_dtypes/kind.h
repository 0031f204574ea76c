/* kind.h: the descriptor kinds, each defined once.
 *
 * A kind is what a descriptor is (a category, a simple dtype, a compound
 * dtype, a block-scaled dtype): it decides the model class, its
 * constructor, its accessors, its structure contract and what the C API
 * reports.  Each kind's file exports one sw_kind_def; kind.c lists them in
 * sw_kind_table, and module initialization, the owned-name list,
 * finalization, the accessors' receiver checks, the C API and the CLI all
 * read that table.  Adding a kind is one file and one table entry.
 */
#ifndef SW_KIND_H
#define SW_KIND_H

#include "compat.h"

/* The values are the C API's SW_DTYPE_KIND_* (include/stride_weave/
 * dtypes.h); kind.c checks that they agree. */
typedef enum {
    SW_KIND_NONE = 0,   /* DType itself and abstract mixes: no kind yet */
    SW_KIND_CATEGORY,
    SW_KIND_SIMPLE,
    SW_KIND_COMPOUND,
    SW_KIND_BLOCK_SCALED,   /* refines SW_KIND_COMPOUND */
    SW_KIND_COUNT
} sw_kind;

struct sw_state;
struct sw_descriptor;

typedef struct {
    sw_kind kind;
    sw_kind parent;         /* the kind this one refines, or SW_KIND_NONE
                               (its class then derives from DType) */
    const char *class_name; /* the model class: "SimpleDType" */
    const char *label;      /* one word for people: "simple" (CLI, JSON) */
    const char *doc;        /* the model class's docstring */
    int abstract;           /* the model class itself cannot be constructed */
    /* NULL, or the kind is unique by structure (two names may not share
     * one) and this says why a duplicate is refused. */
    const char *unique_by_structure;
    PyType_Spec *init_spec; /* the C type whose tp_init is the kind's
                               __init__ (so inspect reads its signature) */
    PyGetSetDef *getsets;   /* the kind's accessors, NULL-terminated; their
                               names are model-owned */
    /* The kind's fixed attributes, NULL-terminated, or NULL: fields of the
     * descriptor's layout set once by its __init__ (descriptor.h), each a
     * getset whose closure is the PyMemberDef of its field.  Installed as
     * member slots of the kind's model class, or as the getsets where
     * CPython does not specialize slot loads (sw_descriptor_install_fixed);
     * their names are model-owned. */
    PyGetSetDef *fixed;
    /* The kind's part of the structure (a new tuple of fields). */
    PyObject *(*contract)(struct sw_state *st, struct sw_descriptor *d);
    /* 1 when the kind's __init__ set every field its accessors read. */
    int (*has_fields)(struct sw_descriptor *d);
} sw_kind_def;

extern const sw_kind_def sw_category_kind;     /* category.c */
extern const sw_kind_def sw_simple_kind;       /* simple.c */
extern const sw_kind_def sw_compound_kind;     /* compound.c */
extern const sw_kind_def sw_blockscaled_kind; /* blockscaled.c */

/* Indexed by sw_kind; [SW_KIND_NONE] is NULL.  A parent comes before the
 * kinds that refine it. */
extern const sw_kind_def *const sw_kind_table[SW_KIND_COUNT];

/* 1 when `kind` is `ancestor` or refines it (block-scaled within compound). */
static inline int
sw_kind_within(int kind, sw_kind ancestor)
{
    while (kind > SW_KIND_NONE && kind < SW_KIND_COUNT) {
        if (kind == (int)ancestor) {
            return 1;
        }
        kind = sw_kind_table[kind]->parent;
    }
    return kind == (int)ancestor;
}

/* The module's _kind(d) and _KINDS (kind.c), read by the CLI. */
extern PyMethodDef sw_kind_methods[];
int sw_kind_add_exports(PyObject *module, struct sw_state *st);

#endif /* SW_KIND_H */
