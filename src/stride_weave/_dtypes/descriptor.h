/* descriptor.h: the descriptor object, its construction and the checks of
 * its constructors' arguments (descriptor.c, construct.c, args.c,
 * classbound.c).
 */
#ifndef SW_DESCRIPTOR_H
#define SW_DESCRIPTOR_H

#include "compat.h"
#include "kind.h"
#include "state.h"

/* The lifecycle of a descriptor (and of a rule). */
typedef enum {
    SW_RAW = 0,         /* allocated, not yet handed to __init__ */
    SW_BUILDING,        /* the most-derived __init__ is running */
    SW_FINISHED,        /* validated, registered and sealed */
    SW_REJECTED,        /* construction failed; never registered */
    SW_SEALING,         /* being sealed: its attributes are frozen and no
                           write is accepted (attrs.c); next FINISHED or
                           REJECTED */
} sw_build_state;

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
 * process (docs/performance.md counts bytes per registered descriptor).
 *
 * Fixed attributes: `name` (and its alias `value`) and a simple dtype's
 * `bits` are read by Python straight from the fields below, as READONLY
 * member slots where CPython specializes that read (compat.h:
 * SW_FIXED_SLOTS), else through getsets.  A slot holds its value exactly
 * while the descriptor is usable: the kind's __init__ stores it as its
 * last step, with `initialized` (sw_construct_initialized), and rejecting
 * the descriptor empties it again (sw_descriptor_reject), so an empty slot
 * is how a member read of an unusable descriptor reaches the model's
 * ValueError (DType.__getattr__).  Both are done inside the object's
 * critical section with release stores; a finished descriptor's slots
 * never change. */
typedef struct sw_descriptor {
    PyObject_HEAD
    PyObject *name;         /* exact str: a fixed attribute (above) */
    PyObject *supertypes;   /* tuple, nearest first; [0] is the supertype */
    PyObject *bits;         /* exact int (simple dtypes): a fixed attribute */
    sw_compound_fields *compound;   /* owned (PyMem), compound dtypes only */
    union {
        PyObject *structure;    /* tuple, recorded at finalization */
        PyObject *rejected_name;    /* once rejected: the name, moved out of
                                       its slot for the repr and messages */
    };
    PyObject *attrs;        /* user attributes of a subclass (attrs.c) */
    PyObject *weakreflist;
    PyObject *module;       /* exact str or NULL: the module its pickle names
                               as where it is defined (pickle.c) */
    PyObject *numeric;      /* NumericInfo, None (settled without one) or
                               NULL (simple dtypes): set once, never
                               replaced (numrecords.c) */
    unsigned char kind;         /* sw_kind */
    unsigned char initialized;  /* 1: the kind's __init__ ran; 2: it was called */
    unsigned char build_state;  /* sw_build_state */
    unsigned char ensuring;     /* built by ensure(): an identical registered
                                   descriptor is the result, not an error */
    uint32_t relation_id;       /* its index in promotion lattices, given
                                   once when it first takes part in one
                                   (0: never); fits in the padding above */
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

/* descriptor.c */
extern const char *const sw_descriptor_owned_names[];
extern PyGetSetDef sw_descriptor_fixed[];
int sw_descriptor_fill_namespace(sw_state *st, PyObject *ns);
PyObject *sw_descriptor_create_type(PyObject *module);
int sw_descriptor_unusable(sw_descriptor *d);
PyObject *sw_descriptor_name_ref(sw_descriptor *d);
PyObject *sw_descriptor_read_fixed(sw_descriptor *d, void *member);
void sw_descriptor_reject(sw_descriptor *d);
int sw_descriptor_install_fixed(sw_state *st, PyTypeObject *cls,
                                PyGetSetDef *fixed);
#ifdef SW_FIXED_SLOTS
PyObject *sw_descriptor_getattr(PyObject *self, PyObject *name);
#endif
sw_descriptor *sw_descriptor_of_kind_checked(PyObject *self, sw_kind kind,
                                             const char *accessor);
PyObject *sw_descriptor_repr(PyObject *self);
int sw_descriptor_bind_methods(PyTypeObject *cls);
sw_compound_fields *sw_descriptor_compound_fields(sw_descriptor *d);

/* 1 if `d` may be read (finished, or building after its kind's __init__),
 * else 0: a rejected or uninitialized descriptor is not usable, even if
 * user code kept a reference to it. */
static inline int
sw_descriptor_is_usable(sw_descriptor *d)
{
    return SW_LOAD_FLAG(d->initialized) == 1
           && SW_LOAD_FLAG(d->build_state) != SW_REJECTED;
}

/* 0 if `d` is usable, else -1 with ValueError saying why.  Inline because
 * every accessor starts here; the exception is made out of line. */
static inline int
sw_descriptor_check_usable(sw_descriptor *d)
{
    return sw_descriptor_is_usable(d) ? 0 : sw_descriptor_unusable(d);
}

/* The receiver of a kind-specific accessor (`accessor`, e.g.
 * "SimpleDType.bits"), borrowed, or NULL with an exception.  The usual
 * receiver, a usable descriptor of exactly that kind with its fields set,
 * is answered inline; anything else takes the full checks, which raise
 * (descriptor.c). */
static inline sw_descriptor *
sw_descriptor_of_kind(PyObject *self, sw_kind kind, const char *accessor)
{
    sw_descriptor *d = (sw_descriptor *)self;

    if (d->kind == (int)kind && sw_descriptor_is_usable(d)
        && sw_kind_table[kind]->has_fields(d)) {
        return d;
    }
    return sw_descriptor_of_kind_checked(self, kind, accessor);
}

/* construct.c */
int sw_construct_finalize(sw_state *st, sw_descriptor *d, PyObject **existing);
int sw_construct_begin_init(sw_descriptor *d, sw_kind kind,
                            const char *funcname);
int sw_construct_set_common(sw_state *st, sw_descriptor *d, PyObject *name,
                            PyObject *supertype);
void sw_construct_initialized(sw_descriptor *d, PyObject *name,
                              PyObject *bits);
PyObject *sw_construct_origin(PyObject *obj);
PyObject *sw_construct_ensure(PyObject *cls, PyObject *args, PyObject *kwds);

/* args.c */
int sw_args_check_kwargs(PyObject *kwds, const char *const *allowed,
                         const char *funcname);
PyObject *sw_args_name(PyObject *name, const char *funcname);
int sw_args_reference(sw_state *st, PyObject *ref, const char *argname,
                      const char *funcname);
int sw_args_simple(sw_state *st, PyObject *ref, const char *argname,
                   const char *funcname);
int sw_args_supertype(sw_state *st, PyObject *supertype, int allow_none,
                      const char *funcname);

/* classbound.c */
PyObject *sw_classbound_create_type(PyObject *module);
int sw_classbound_fill_namespace(struct sw_state *st, PyObject *ns);

#endif /* SW_DESCRIPTOR_H */
