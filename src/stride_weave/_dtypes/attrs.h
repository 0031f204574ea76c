/* attrs.h: user attributes of descriptor and rule subclasses, and the
 * sealed identity members both share (attrs.c).
 */
#ifndef SW_ATTRS_H
#define SW_ATTRS_H

#include "compat.h"

PyObject *sw_attrs_prepare_namespace(PyObject *ns, const char *clsname,
                                     int *own_attrs);
extern PyGetSetDef sw_attrs_sealed_getset[];
Py_hash_t sw_attrs_identity_hash(PyObject *self);
PyObject *sw_attrs_identity_richcompare(PyObject *self, PyObject *other, int op);
int sw_attrs_freeze(PyObject *self, PyObject *attrs, PyObject *owned,
                    PyObject **frozen);
int sw_attrs_traverse(PyObject *attrs, int sealed, visitproc visit, void *arg);
int sw_attrs_setup_class(PyTypeObject *cls, int own_attrs,
                         PyGetSetDef **slot_defs);
int sw_attrs_setattr(PyObject *self, PyObject **attrs, PyObject *name,
                     PyObject *value);

/* The seal's step for the attributes: the frozen copy (stolen from
 * *frozen) replaces the attribute dict at *attrs.  No Python code runs
 * here; the displaced dict is returned for the caller to release once
 * the object is published (releasing it may run finalizers, which must
 * find the object sealed). */
static inline PyObject *
sw_attrs_install(PyObject **attrs, PyObject **frozen)
{
    PyObject *displaced = *attrs;

    *attrs = *frozen;
    *frozen = NULL;
    return displaced;
}

#endif /* SW_ATTRS_H */
