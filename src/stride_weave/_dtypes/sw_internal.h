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
#include "descriptor.h"
#include "attrs.h"

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

/* ---- what a sealed metaclass adds to the shared core (sealedmeta.c) ---- */

/* Room for a metaclass's model layouts, the NULL terminator included. */
#define SW_SEALEDMETA_MODEL_TYPES 8

/* DTypeMeta (meta.c) and RuleMeta (rule.c) each pass one static const
 * instance to the shared functions of sealedmeta.c.  Hooks that may be
 * NULL say so. */
typedef struct {
    const char *name;           /* the metaclass, in error text */
    const char *args_format;    /* tp_new's PyArg_ParseTuple format */
    const char *root_name;      /* the model class user classes derive from */
    const char *keyword;        /* the boolean class keyword (default True)
                                   that sets `abstract`, or NULL: then only
                                   the model's root class is abstract */
    const char *owner;          /* error text: "it is owned by the <owner>" */
    const char *frozen_reason;  /* error text: why model classes refuse
                                   attribute writes */
    const char *abstract_error; /* error text for calling an abstract class;
                                   one %s, the class name */
    PyObject *(*owned_names)(sw_state *st);   /* borrowed frozenset */
    /* Fill `types` with the model's C layouts, NULL-terminated: the
     * owned-member checks skip them. */
    void (*model_types)(sw_state *st,
                        PyTypeObject *types[SW_SEALEDMETA_MODEL_TYPES]);
    PyGetSetDef *absent_members;    /* owned names the model leaves undefined
                                       on purpose, or NULL */
    /* Class creation.  check_bases (or NULL) replaces the check for
     * unfinished bases, and sets the class's kind; check_class (or NULL)
     * runs once the keyword is read; finish_class (or NULL) runs on the
     * new class before it is marked ready. */
    int (*check_bases)(PyTypeObject *meta, PyObject *name, PyObject *bases,
                       sw_kind *kind);
    int (*check_class)(sw_state *st, PyObject *name, sw_kind kind,
                       int abstract);
    int (*finish_class)(PyTypeObject *cls);
    /* Construction (sw_sealedmeta_construct).  begin marks the new object
     * as under construction; finish runs after its __init__ succeeded
     * (0, or 1 with a new reference in *result that is the result
     * instead, or -1); reject marks it rejected and runs inside the
     * object's critical section. */
    void (*begin)(PyObject *obj, sw_type *t, int option);
    int (*finish)(PyObject *obj, sw_type *t, PyObject **result);
    void (*reject)(PyObject *obj);
} sw_sealedmeta_ops;

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

/* sealedmeta.c */
PyObject *sw_sealedmeta_new(const sw_sealedmeta_ops *ops, PyTypeObject *meta,
                            PyObject *args, PyObject *kwds);
PyObject *sw_meta_alloc(PyTypeObject *meta, Py_ssize_t nitems);
int sw_sealedmeta_init(PyObject *self, PyObject *args, PyObject *kwds);
int sw_sealedmeta_check_ready_bases(PyTypeObject *meta, PyObject *bases);
int sw_sealedmeta_setattro(const sw_sealedmeta_ops *ops, PyObject *self,
                           PyObject *name, PyObject *value);
PyObject *sw_sealedmeta_construct(const sw_sealedmeta_ops *ops,
                                  PyObject *cls, PyObject *args,
                                  PyObject *kwds, int option);
int sw_sealedmeta_traverse(PyObject *self, visitproc visit, void *arg);
int sw_sealedmeta_clear(PyObject *self);
void sw_sealedmeta_dealloc(PyObject *self);
int sw_is_owned_name(PyObject *owned, PyObject *name);

/* meta.c */
PyObject *sw_meta_create_type(PyObject *module);
int sw_is_descriptor_class(PyTypeObject *tp);
PyObject *sw_meta_create_model_class(sw_state *st, const char *name,
                                     PyObject *bases, PyObject *ns,
                                     int abstract, sw_kind kind);
PyObject *sw_meta_construct(PyObject *cls, PyObject *args, PyObject *kwds,
                            int ensuring);

/* rule.c */
int sw_rule_create_types(PyObject *module, sw_state *st);
int sw_is_rule_class(PyTypeObject *tp);
int sw_rule_traverse(PyObject *self, visitproc visit, void *arg);
int sw_rule_clear(PyObject *self);
void sw_rule_dealloc(PyObject *self);

/* levelextent.c */
int sw_levelextent_create_type(PyObject *module, sw_state *st);

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
