/* meta.h: the classes of descriptors and rules.  The per-class record
 * (sw_type), the sealed-metaclass core both metaclasses share
 * (sealedmeta.c, parameterized by sw_sealedmeta_ops), and DTypeMeta
 * (meta.c).  RuleMeta's few entry points are in rule.h.
 */
#ifndef SW_META_H
#define SW_META_H

#include "compat.h"
#include "kind.h"
#include "state.h"

/* The metaclass instance layout: one per descriptor or rule class.  Its
 * first two fields are sw_class_head's (state.h). */
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
                               made on first use (classbound.c) */
    PyObject *checks[2];    /* __instancecheck__ and __subclasscheck__ bound
                               to this class, made when the class is
                               created (classcheck.c) */
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
    const char *model_abstract_error;   /* the same for one of the model's
                                           own abstract classes, or NULL
                                           for abstract_error */
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
     * as under construction (0, or -1 with an exception: the object is
     * dropped unused); finish runs after its __init__ succeeded (0, or 1
     * with a new reference in *result that is the result instead, or -1);
     * reject marks it rejected and runs inside the object's critical
     * section. */
    int (*begin)(PyObject *obj, sw_type *t, int option);
    int (*finish)(PyObject *obj, sw_type *t, PyObject **result);
    void (*reject)(PyObject *obj);
} sw_sealedmeta_ops;

/* sealedmeta.c */
PyObject *sw_sealedmeta_new(const sw_sealedmeta_ops *ops, PyTypeObject *meta,
                            PyObject *args, PyObject *kwds);
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
int sw_sealedmeta_is_owned_name(PyObject *owned, PyObject *name);

/* classcheck.c */
int sw_classcheck_init(PyObject *module, sw_state *st);
int sw_classcheck_install(sw_state *st, PyTypeObject *meta);
int sw_classcheck_bind(PyTypeObject *cls);

/* ---- classbound.c: the bound from_name and registered ---------------- */

/* What `cls.<name>` returns when `name` is from_name or registered and the
 * class already holds that bound builtin (a new reference), else NULL with
 * no exception: the caller then takes type's generic lookup, which creates
 * it.  DTypeMeta's tp_getattro calls this first (meta.c); it lives here,
 * inline, because it runs on every attribute load of a descriptor class.
 *
 * A class with a state went through DTypeMeta's tp_new, so DType is in its
 * MRO; from_name and registered are owned names that no class, mixin or
 * metaclass can define or assign, so type's lookup would find DType's
 * _ClassBound (or, in a class with a mixin, the same object copied into
 * its namespace) and return exactly this builtin.  The names are compared
 * by identity: the interpreter interns identifiers, and an equal str that
 * is not the interned one only takes the generic path. */
static inline PyObject *
sw_classbound_cached(PyTypeObject *cls, PyObject *name)
{
    sw_type *t = (sw_type *)cls;
    PyObject *bound;
    int index;

    if (t->state == NULL) {
        return NULL;   /* made around the metaclass's tp_new */
    }
    if (name == t->state->idents[SW_IDENT_FROM_NAME]) {
        index = 0;
    }
    else if (name == t->state->idents[SW_IDENT_REGISTERED]) {
        index = 1;
    }
    else {
        return NULL;
    }
    bound = SW_LOAD_PTR(t->bound[index]);
    return bound != NULL ? Py_NewRef(bound) : NULL;
}


/* meta.c */
PyObject *sw_meta_create_type(PyObject *module);
int sw_meta_is_descriptor_class(PyTypeObject *tp);
PyObject *sw_meta_create_model_class(sw_state *st, const char *name,
                                     PyObject *bases, PyObject *ns,
                                     int abstract, sw_kind kind);
PyObject *sw_meta_construct(PyObject *cls, PyObject *args, PyObject *kwds,
                            int ensuring);

#endif /* SW_META_H */
