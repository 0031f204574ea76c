/* classcheck.c: isinstance() and issubclass() against a class of the
 * module's metaclasses (DTypeMeta, RuleMeta).
 *
 * CPython answers isinstance(x, C) itself only when type(C) is exactly
 * `type`.  For any other metaclass it looks __instancecheck__ up on the
 * metaclass (_PyObject_LookupSpecial), binds what it finds through its
 * tp_descr_get and calls the result; inherited from `type`, that binding
 * allocates a builtin method on every call.  issubclass() does the same
 * with __subclasscheck__.
 *
 * Owns _ClassCheck, the descriptor both metaclasses hold under those two
 * names, and the per-class checks it returns (sw_type.checks): builtins
 * bound to the class once, when the class is created.  A check answers
 * from the MRO when that settles it and otherwise calls type's own method,
 * so every answer is the one type.__instancecheck__ / __subclasscheck__
 * gives (including the __class__ fallback and non-class arguments).  Bound
 * to anything else (unbound access, a foreign object, a class created
 * around the metaclass or whose check the collector cleared), the
 * descriptor binds type's own method instead, as if it were not there.
 */
#include "meta.h"

#include <stddef.h>           /* offsetof */
#include <string.h>
#include <structmember.h>

#define SW_CHECK_INSTANCE 0
#define SW_CHECK_SUBCLASS 1

static const char *const sw_classcheck_names[2] = {
    "__instancecheck__", "__subclasscheck__",
};

/* type's own __instancecheck__ or __subclasscheck__ (new reference): the
 * one this interpreter's module state holds, or looked up again when the
 * state was already released (late finalizers at shutdown). */
static PyObject *
sw_classcheck_type_method(sw_state *st, int index)
{
    if (st != NULL && st->type_checks[index] != NULL) {
        return Py_NewRef(st->type_checks[index]);
    }
    return PyObject_GetAttrString((PyObject *)&PyType_Type,
                                  sw_classcheck_names[index]);
}

/* type.<check>(cls, arg): what CPython would have called. */
static PyObject *
sw_classcheck_fallback(PyObject *cls, PyObject *arg, int index)
{
    PyObject *method = sw_classcheck_type_method(((sw_type *)cls)->state,
                                                 index);
    PyObject *args[2] = {cls, arg};
    PyObject *result;

    if (method == NULL) {
        return NULL;
    }
    result = PyObject_Vectorcall(method, args, 2, NULL);
    Py_DECREF(method);
    return result;
}

/* The rest of type.__instancecheck__(cls, instance) once the instance's
 * type is not a subclass of cls: the answer of instance.__class__, as
 * CPython's own check reads it (a missing attribute is False, any other
 * error propagates, only a class other than type(instance) is consulted).
 * Made here rather than by calling type's method: a miss (isinstance(1,
 * DType) in dispatch code) is the common case of a failed check. */
static PyObject *
sw_classcheck_by_class_attr(PyObject *cls, PyObject *instance)
{
    sw_state *st = ((sw_type *)cls)->state;
    PyObject *icls;
    int result;

    if (st == NULL || st->idents[SW_IDENT_CLASS] == NULL) {
        /* late finalizers at shutdown: type's own method */
        return sw_classcheck_fallback(cls, instance, SW_CHECK_INSTANCE);
    }
    icls = PyObject_GetAttr(instance, st->idents[SW_IDENT_CLASS]);
    if (icls == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
            return NULL;
        }
        /* type.__instancecheck__'s own answer for a missing __class__. */
        PyErr_Clear();
        Py_RETURN_FALSE;
    }
    result = icls != (PyObject *)Py_TYPE(instance) && PyType_Check(icls)
             && PyType_IsSubtype((PyTypeObject *)icls, (PyTypeObject *)cls);
    Py_DECREF(icls);
    return PyBool_FromLong(result);
}

/* ---- the per-class checks ----------------------------------------------- */

/* One class's __instancecheck__ or __subclasscheck__, made once per class.
 * Not a builtin method: CPython calls it through its vectorcall slot, and
 * the builtin's own calling convention (argument checks, a second
 * recursion guard) would cost as much again as the check itself.  It
 * reads like the bound builtin it replaces (__self__, __name__,
 * __qualname__, __doc__, __text_signature__, repr, pickling). */
typedef struct {
    PyObject_HEAD
    PyObject *cls;          /* strong: the class it checks against */
    int index;              /* SW_CHECK_INSTANCE or SW_CHECK_SUBCLASS */
    vectorcallfunc vectorcall;
} sw_classcheck_bound;

static const char *const sw_classcheck_docs[2] = {
    "__instancecheck__($self, instance, /)\n--\n\n"
    "Check if an object is an instance.",
    "__subclasscheck__($self, subclass, /)\n--\n\n"
    "Check if a class is a subclass.",
};

/* The one argument of a call, or NULL with type's error for any other
 * shape of call. */
static PyObject *
sw_classcheck_one_arg(sw_classcheck_bound *self, PyObject *const *args,
                      size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);

    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) {
        PyErr_Format(PyExc_TypeError, "%s() takes no keyword arguments",
                     sw_classcheck_names[self->index]);
        return NULL;
    }
    if (nargs != 1) {
        PyErr_Format(PyExc_TypeError,
                     "%s() takes exactly one argument (%zd given)",
                     sw_classcheck_names[self->index], nargs);
        return NULL;
    }
    return args[0];
}

static PyObject *
sw_classcheck_instance(PyObject *callable, PyObject *const *args,
                       size_t nargsf, PyObject *kwnames)
{
    sw_classcheck_bound *self = (sw_classcheck_bound *)callable;
    PyObject *instance = sw_classcheck_one_arg(self, args, nargsf, kwnames);

    if (instance == NULL) {
        return NULL;
    }
    /* type's own first step; only a miss consults __class__. */
    if (PyType_IsSubtype(Py_TYPE(instance), (PyTypeObject *)self->cls)) {
        Py_RETURN_TRUE;
    }
    return sw_classcheck_by_class_attr(self->cls, instance);
}

static PyObject *
sw_classcheck_subclass(PyObject *callable, PyObject *const *args,
                       size_t nargsf, PyObject *kwnames)
{
    sw_classcheck_bound *self = (sw_classcheck_bound *)callable;
    PyObject *subclass = sw_classcheck_one_arg(self, args, nargsf, kwnames);

    if (subclass == NULL) {
        return NULL;
    }
    /* For a class, type's answer is the MRO's; anything else goes through
     * type's checks of __bases__ and its error messages. */
    if (PyType_Check(subclass)) {
        return PyBool_FromLong(PyType_IsSubtype((PyTypeObject *)subclass,
                                                (PyTypeObject *)self->cls));
    }
    return sw_classcheck_fallback(self->cls, subclass, SW_CHECK_SUBCLASS);
}

static PyObject *
sw_classcheck_bound_repr(PyObject *self)
{
    sw_classcheck_bound *b = (sw_classcheck_bound *)self;

    return PyUnicode_FromFormat("<built-in method %s of %s object at %p>",
                                sw_classcheck_names[b->index],
                                Py_TYPE(b->cls)->tp_name, b->cls);
}

static PyObject *
sw_classcheck_bound_self(PyObject *self, void *Py_UNUSED(closure))
{
    return Py_NewRef(((sw_classcheck_bound *)self)->cls);
}

static PyObject *
sw_classcheck_bound_name(PyObject *self, void *Py_UNUSED(closure))
{
    return PyUnicode_FromString(
        sw_classcheck_names[((sw_classcheck_bound *)self)->index]);
}

static PyObject *
sw_classcheck_bound_qualname(PyObject *self, void *Py_UNUSED(closure))
{
    sw_classcheck_bound *b = (sw_classcheck_bound *)self;
    PyObject *qualname = PyType_GetQualName((PyTypeObject *)b->cls);
    PyObject *result;

    if (qualname == NULL) {
        return NULL;
    }
    result = PyUnicode_FromFormat("%U.%s", qualname,
                                  sw_classcheck_names[b->index]);
    Py_DECREF(qualname);
    return result;
}

/* The doc and signature split as CPython splits a builtin's ml_doc. */
static PyObject *
sw_classcheck_bound_doc(PyObject *self, void *Py_UNUSED(closure))
{
    const char *doc = sw_classcheck_docs[((sw_classcheck_bound *)self)->index];

    return PyUnicode_FromString(strstr(doc, "--\n\n") + 4);
}

static PyObject *
sw_classcheck_bound_signature(PyObject *self, void *Py_UNUSED(closure))
{
    const char *doc = sw_classcheck_docs[((sw_classcheck_bound *)self)->index];
    const char *start = strchr(doc, '('), *end = strstr(doc, "\n--\n\n");

    return PyUnicode_FromStringAndSize(start, end - start);
}

/* inspect.signature() reads builtins from __text_signature__ but other
 * callables from __signature__: the signature of type's method bound to
 * the class, i.e. what the builtin this replaces had. */
static PyObject *
sw_classcheck_bound_inspect(PyObject *self, void *Py_UNUSED(closure))
{
    sw_classcheck_bound *b = (sw_classcheck_bound *)self;
    PyObject *inspect = NULL, *method = NULL, *bound = NULL, *result = NULL;

    inspect = PyImport_ImportModule("inspect");
    method = sw_classcheck_type_method(((sw_type *)b->cls)->state, b->index);
    if (inspect == NULL || method == NULL) {
        goto done;
    }
    bound = Py_TYPE(method)->tp_descr_get(method, b->cls, NULL);
    if (bound != NULL) {
        result = PyObject_CallMethod(inspect, "signature", "O", bound);
    }
done:
    Py_XDECREF(inspect);
    Py_XDECREF(method);
    Py_XDECREF(bound);
    return result;
}

static PyGetSetDef sw_classcheck_bound_getset[] = {
    {"__signature__", sw_classcheck_bound_inspect, NULL, NULL, NULL},
    {"__self__", sw_classcheck_bound_self, NULL, NULL, NULL},
    {"__name__", sw_classcheck_bound_name, NULL, NULL, NULL},
    {"__qualname__", sw_classcheck_bound_qualname, NULL, NULL, NULL},
    {"__doc__", sw_classcheck_bound_doc, NULL, NULL, NULL},
    {"__text_signature__", sw_classcheck_bound_signature, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* Pickles as the attribute it is, as a builtin method does. */
static PyObject *
sw_classcheck_bound_reduce(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    sw_classcheck_bound *b = (sw_classcheck_bound *)self;
    PyObject *builtins = sw_frame_builtins();
    PyObject *getattr = NULL, *result;

    if (builtins != NULL
        && PyDict_GetItemStringRef(builtins, "getattr", &getattr) < 0) {
        Py_DECREF(builtins);
        return NULL;
    }
    if (getattr == NULL) {
        Py_XDECREF(builtins);
        PyErr_SetString(PyExc_RuntimeError, "builtins.getattr is missing");
        return NULL;
    }
    result = Py_BuildValue("O(Os)", getattr, b->cls,
                           sw_classcheck_names[b->index]);
    Py_DECREF(getattr);
    Py_DECREF(builtins);
    return result;
}

static PyMethodDef sw_classcheck_bound_methods[] = {
    {"__reduce__", sw_classcheck_bound_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef sw_classcheck_bound_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET,
     offsetof(sw_classcheck_bound, vectorcall), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static int
sw_classcheck_bound_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(((sw_classcheck_bound *)self)->cls);
    return 0;
}

/* The class is never cleared out of its check: a check some code still
 * holds stays callable (the collector breaks the cycle on the class's
 * side, sw_sealedmeta_clear). */
static void
sw_classcheck_bound_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);

    PyObject_GC_UnTrack(self);
    Py_CLEAR(((sw_classcheck_bound *)self)->cls);
    tp->tp_free(self);
    Py_DECREF(tp);
}

/* No Py_tp_doc: the type's __doc__ string would shadow the __doc__
 * getset its instances answer with. */
static PyType_Slot sw_classcheck_bound_slots[] = {
    {Py_tp_call, PyVectorcall_Call},
    {Py_tp_repr, sw_classcheck_bound_repr},
    {Py_tp_getset, sw_classcheck_bound_getset},
    {Py_tp_methods, sw_classcheck_bound_methods},
    {Py_tp_members, sw_classcheck_bound_members},
    {Py_tp_traverse, sw_classcheck_bound_traverse},
    {Py_tp_dealloc, sw_classcheck_bound_dealloc},
    {0, NULL},
};

static PyType_Spec sw_classcheck_bound_spec = {
    .name = "stride_weave._dtypes._ClassCheckMethod",
    .basicsize = sizeof(sw_classcheck_bound),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_GC
             | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = sw_classcheck_bound_slots,
};

/* Make the new class's checks (class creation, sealedmeta.c).  Until
 * they exist, isinstance() takes type's own method: a class hook that
 * runs before is answered the same, only slower. */
int
sw_classcheck_bind(PyTypeObject *cls)
{
    sw_type *t = (sw_type *)cls;
    PyTypeObject *tp = t->state->class_check_method_type;
    int i;

    for (i = 0; i < 2; i++) {
        sw_classcheck_bound *check = PyObject_GC_New(sw_classcheck_bound, tp);
        if (check == NULL) {
            return -1;
        }
        check->cls = Py_NewRef(cls);
        check->index = i;
        check->vectorcall = i == SW_CHECK_INSTANCE ? sw_classcheck_instance
                                                   : sw_classcheck_subclass;
        PyObject_GC_Track(check);
        assert(t->checks[i] == NULL);
        /* Published once; readers do not lock (sw_classcheck_get). */
        SW_STORE_PTR(t->checks[i], (PyObject *)check);
    }
    return 0;
}

/* ---- the descriptor in the metaclasses' namespaces ----------------------- */

typedef struct {
    PyObject_HEAD
    int index;              /* SW_CHECK_INSTANCE or SW_CHECK_SUBCLASS */
} sw_classcheck;

static PyObject *
sw_classcheck_get(PyObject *self, PyObject *obj, PyObject *type)
{
    int index = ((sw_classcheck *)self)->index;
    PyObject *method, *result;
    descrgetfunc get;

    /* A class of either metaclass (neither can be subclassed, and both
     * allocate through sw_sealedmeta_alloc): its check, once made. */
    if (obj != NULL && Py_TYPE(obj)->tp_alloc == sw_sealedmeta_alloc) {
        PyObject *check = SW_LOAD_PTR(((sw_type *)obj)->checks[index]);
        if (check != NULL) {
            return Py_NewRef(check);
        }
    }
    /* Anything else: exactly what type's own descriptor returns (and
     * refuses) for these arguments. */
    method = sw_classcheck_type_method(sw_state_of_type(Py_TYPE(self)),
                                       index);
    if (method == NULL) {
        return NULL;
    }
    get = Py_TYPE(method)->tp_descr_get;
    result = get != NULL ? get(method, obj, type) : Py_NewRef(method);
    Py_DECREF(method);
    return result;
}

static PyObject *
sw_classcheck_getname(PyObject *self, void *Py_UNUSED(closure))
{
    return PyUnicode_FromString(
        sw_classcheck_names[((sw_classcheck *)self)->index]);
}

static PyGetSetDef sw_classcheck_getset[] = {
    {"__name__", sw_classcheck_getname, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static void
sw_classcheck_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);

    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyType_Slot sw_classcheck_slots[] = {
    {Py_tp_doc, (void *)PyDoc_STR(
        "isinstance()/issubclass() support of the model's metaclasses: "
        "bound to one of their classes, the class's own check.")},
    {Py_tp_descr_get, sw_classcheck_get},
    {Py_tp_getset, sw_classcheck_getset},
    {Py_tp_dealloc, sw_classcheck_dealloc},
    {0, NULL},
};

static PyType_Spec sw_classcheck_spec = {
    .name = "stride_weave._dtypes._ClassCheck",
    .basicsize = sizeof(sw_classcheck),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE
             | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = sw_classcheck_slots,
};

/* Create _ClassCheck and _ClassCheckMethod, and keep type's own two
 * methods in the state. */
int
sw_classcheck_init(PyObject *module, sw_state *st)
{
    int i;

    st->class_check_type = (PyTypeObject *)PyType_FromModuleAndSpec(
        module, &sw_classcheck_spec, NULL);
    if (st->class_check_type == NULL) {
        return -1;
    }
    st->class_check_method_type = (PyTypeObject *)PyType_FromModuleAndSpec(
        module, &sw_classcheck_bound_spec, NULL);
    if (st->class_check_method_type == NULL) {
        return -1;
    }
    for (i = 0; i < 2; i++) {
        st->type_checks[i] = PyObject_GetAttrString((PyObject *)&PyType_Type,
                                                    sw_classcheck_names[i]);
        if (st->type_checks[i] == NULL) {
            return -1;
        }
    }
    return 0;
}

/* Put the two descriptors into a metaclass's namespace (module init,
 * before the metaclass makes any class). */
int
sw_classcheck_install(sw_state *st, PyTypeObject *meta)
{
    int i;

    for (i = 0; i < 2; i++) {
        sw_classcheck *entry = PyObject_New(sw_classcheck,
                                            st->class_check_type);
        int status;

        if (entry == NULL) {
            return -1;
        }
        entry->index = i;
        status = PyDict_SetItemString(meta->tp_dict, sw_classcheck_names[i],
                                      (PyObject *)entry);
        Py_DECREF(entry);
        if (status < 0) {
            return -1;
        }
    }
    PyType_Modified(meta);
    return 0;
}
