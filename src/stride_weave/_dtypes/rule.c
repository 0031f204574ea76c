/* rule.c: RepresentationRule, the base of declarative plane constraints.
 *
 * Owns RuleMeta (the rules' metaclass, on the sealed-metaclass core of
 * sealedmeta.c: it refuses classes that shadow framework-owned members and
 * constructs rules as a transaction), the C rule layout (_RuleBase) and
 * the RepresentationRule class.  A rule's structure is recorded once at
 * construction: the rule class's identity (module and qualified name) and
 * its structure_extension() tuple.  After construction a rule is immutable
 * and copies to itself.
 */
#include "rule.h"
#include "attrs.h"
#include "descriptor.h"
#include "meta.h"

#include <structmember.h>

/* The members the framework owns on every rule (a subclass may not
 * define them). */
const char *const sw_rule_owned_names[] = {
    "structure", "__setattr__", "__delattr__", "__getattribute__",
    "__getattr__", "__copy__", "__deepcopy__", "__reduce__", "__reduce_ex__",
    "__getstate__", "__setstate__", "__new__", "__class__",
    NULL,
};

static void sw_rule_meta_dealloc(PyObject *self);

int
sw_rule_is_class(PyTypeObject *tp)
{
    return Py_TYPE(tp)->tp_dealloc == sw_rule_meta_dealloc;
}

/* ---- construction -------------------------------------------------------- */

/* ("RepresentationRule", "str:<module>.<qualname>", ("extension", ...)) */
static int
sw_rule_record_structure(sw_state *st, sw_rule *rule)
{
    PyTypeObject *tp = Py_TYPE(rule);
    PyObject *module = NULL, *qualname = NULL, *identity = NULL;
    PyObject *ext = NULL, *encoded = NULL;
    int status = -1;

    module = PyObject_GetAttr((PyObject *)tp, st->idents[SW_IDENT_MODULE]);
    if (module == NULL) {
        goto done;
    }
    if (!PyUnicode_Check(module)) {
        PyErr_Format(PyExc_TypeError,
                     "rule class %s: __module__ must be a str, got %s",
                     tp->tp_name, Py_TYPE(module)->tp_name);
        goto done;
    }
    qualname = PyType_GetQualName(tp);
    if (qualname == NULL) {
        goto done;
    }
    identity = PyUnicode_FromFormat("str:%U.%U", module, qualname);
    if (identity == NULL) {
        goto done;
    }
    /* structure_extension() runs exactly once. */
    ext = PyObject_CallMethodNoArgs((PyObject *)rule,
                                    st->idents[SW_IDENT_STRUCTURE_EXTENSION]);
    if (ext == NULL) {
        goto done;
    }
    encoded = sw_structure_encode_extension(st, ext, (PyObject *)rule);
    if (encoded == NULL) {
        goto done;
    }
    Py_XSETREF(rule->structure,
               Py_BuildValue("(OO(OO))",
                             st->labels[SW_LABEL_REPRESENTATION_RULE],
                             identity, st->labels[SW_LABEL_EXTENSION],
                             encoded));
    status = rule->structure ? 0 : -1;
done:
    Py_XDECREF(module);
    Py_XDECREF(qualname);
    Py_XDECREF(identity);
    Py_XDECREF(ext);
    Py_XDECREF(encoded);
    return status;
}

static int
sw_rule_meta_begin(PyObject *obj, sw_type *Py_UNUSED(t),
                   int Py_UNUSED(option))
{
    SW_STORE_FLAG(((sw_rule *)obj)->build_state, SW_BUILDING);
    return 0;
}

/* Record the structure, then seal as one step (see attrs.c): the rule is
 * SW_SEALING (every write refused) before its attributes are frozen, the
 * frozen copy is installed as it becomes finished, and the dict it
 * replaces is released last.  A failed freeze marks it rejected in the
 * same critical section; the core's reject that follows stores the same
 * state again. */
static int
sw_rule_meta_finish(PyObject *obj, sw_type *t, PyObject **Py_UNUSED(result))
{
    sw_rule *rule = (sw_rule *)obj;
    sw_state *st = sw_state_of_type((PyTypeObject *)t);
    PyObject *frozen = NULL, *displaced = NULL;
    int status;

    if (sw_rule_record_structure(st, rule) < 0) {
        return -1;
    }
    Py_BEGIN_CRITICAL_SECTION(obj);
    SW_STORE_FLAG(rule->build_state, SW_SEALING);
    status = sw_attrs_freeze(obj, rule->attrs, st->rule_owned_names, &frozen);
    if (status == 0) {
        displaced = sw_attrs_install(&rule->attrs, &frozen);
    }
    SW_STORE_FLAG(rule->build_state, status == 0 ? SW_FINISHED : SW_REJECTED);
    Py_END_CRITICAL_SECTION();
    Py_XDECREF(displaced);   /* may run finalizers: the rule is sealed */
    return status;
}

static void
sw_rule_meta_reject(PyObject *obj)
{
    SW_STORE_FLAG(((sw_rule *)obj)->build_state, SW_REJECTED);
}

/* ---- RuleMeta --------------------------------------------------------------- */

static PyObject *
sw_rule_meta_owned_names(sw_state *st)
{
    return st->rule_owned_names;
}

static void
sw_rule_meta_model_types(sw_state *st,
                         PyTypeObject *types[SW_SEALEDMETA_MODEL_TYPES])
{
    types[0] = st->rule_base_type;
    types[1] = NULL;
}

/* No class keyword: only RepresentationRule itself is abstract. */
static const sw_sealedmeta_ops sw_rule_meta_ops = {
    .name = "RuleMeta",
    .args_format = "UO!O!:RuleMeta",
    .root_name = "RepresentationRule",
    .owner = "representation-rule framework",
    .frozen_reason = "the class is frozen",
    .abstract_error = "cannot instantiate %s directly: subclass it and "
                      "implement validate(context)",
    .owned_names = sw_rule_meta_owned_names,
    .model_types = sw_rule_meta_model_types,
    .begin = sw_rule_meta_begin,
    .finish = sw_rule_meta_finish,
    .reject = sw_rule_meta_reject,
};

static int
sw_rule_meta_setattro(PyObject *self, PyObject *name, PyObject *value)
{
    return sw_sealedmeta_setattro(&sw_rule_meta_ops, self, name, value);
}

static PyObject *
sw_rule_meta_new(PyTypeObject *meta, PyObject *args, PyObject *kwds)
{
    return sw_sealedmeta_new(&sw_rule_meta_ops, meta, args, kwds);
}

static void
sw_rule_meta_dealloc(PyObject *self)
{
    sw_sealedmeta_dealloc(self);
}

static PyObject *
sw_rule_meta_call(PyObject *cls, PyObject *args, PyObject *kwds)
{
    return sw_sealedmeta_construct(&sw_rule_meta_ops, cls, args, kwds, 0);
}

static PyType_Slot sw_rule_meta_slots[] = {
    {Py_tp_doc, (void *)PyDoc_STR(
        "Metaclass of RepresentationRule and its subclasses.\n\n"
        "Refuses a class that defines or inherits a framework-owned member "
        "and constructs rules as a transaction: the subclass __init__ runs, "
        "then the structure is recorded once and the rule is sealed.")},
    {Py_tp_new, sw_rule_meta_new},
    {Py_tp_alloc, sw_sealedmeta_alloc},
    {Py_tp_init, sw_sealedmeta_init},
    {Py_tp_call, sw_rule_meta_call},
    {Py_tp_setattro, sw_rule_meta_setattro},
    {Py_tp_traverse, sw_sealedmeta_traverse},
    {Py_tp_clear, sw_sealedmeta_clear},
    {Py_tp_dealloc, sw_rule_meta_dealloc},
    {0, NULL},
};

static PyType_Spec sw_rule_meta_spec = {
    .name = "stride_weave._dtypes.RuleMeta",
    .basicsize = sizeof(sw_type),
    .itemsize = 0,
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = sw_rule_meta_slots,
};

/* ---- the rule instance ---------------------------------------------------------- */

static PyObject *
sw_rule_new(PyTypeObject *type, PyObject *Py_UNUSED(args),
            PyObject *Py_UNUSED(kwds))
{
    PyErr_Format(PyExc_TypeError,
                 "%s.__new__() cannot create rules; call the class itself",
                 type->tp_name);
    return NULL;
}

int
sw_rule_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(((sw_rule *)self)->structure);
    return sw_attrs_traverse(
        ((sw_rule *)self)->attrs,
        SW_LOAD_FLAG(((sw_rule *)self)->build_state) == SW_FINISHED,
        visit, arg);
}

int
sw_rule_clear(PyObject *self)
{
    Py_CLEAR(((sw_rule *)self)->structure);
    Py_CLEAR(((sw_rule *)self)->attrs);
    return 0;
}

void
sw_rule_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);

    PyObject_GC_UnTrack(self);
    if (((sw_rule *)self)->weakreflist != NULL) {
        PyObject_ClearWeakRefs(self);
    }
    (void)sw_rule_clear(self);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static int
sw_rule_setattro(PyObject *self, PyObject *name, PyObject *value)
{
    sw_state *st;
    int owned;

    if (SW_LOAD_FLAG(((sw_rule *)self)->build_state) != SW_BUILDING) {
        PyErr_Format(PyExc_AttributeError,
                     "cannot %s attribute %R of a %s: rules are immutable "
                     "once constructed", value ? "set" : "delete", name,
                     Py_TYPE(self)->tp_name);
        return -1;
    }
    st = sw_state_of_type(Py_TYPE(self));
    if (sw_state_check(st) < 0) {
        return -1;
    }
    owned = sw_sealedmeta_is_owned_name(st->rule_owned_names, name);
    if (owned < 0) {
        return -1;
    }
    if (owned) {
        PyErr_Format(PyExc_AttributeError,
                     "cannot %s %R on a rule: it is owned by the framework",
                     value ? "set" : "delete", name);
        return -1;
    }
    return sw_attrs_setattr(self, &((sw_rule *)self)->attrs, name, value);
}

static PyObject *
sw_rule_structure(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    sw_rule *rule = (sw_rule *)self;

    int state = SW_LOAD_FLAG(rule->build_state);

    if (state != SW_FINISHED) {
        PyErr_Format(PyExc_ValueError,
                     "structure(): this %s is %s", Py_TYPE(self)->tp_name,
                     state == SW_REJECTED
                         ? "rejected (its construction failed)"
                         : "still under construction");
        return NULL;
    }
    return Py_NewRef(rule->structure);
}

static PyObject *
sw_rule_structure_extension(PyObject *Py_UNUSED(self),
                            PyObject *Py_UNUSED(ignored))
{
    return PyTuple_New(0);
}

static PyObject *
sw_rule_validate(PyObject *self, PyObject *Py_UNUSED(context))
{
    PyErr_Format(PyExc_NotImplementedError,
                 "%s must implement validate(context)", Py_TYPE(self)->tp_name);
    return NULL;
}

static PyObject *
sw_rule_copy(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    return Py_NewRef(self);
}

static PyObject *
sw_rule_deepcopy(PyObject *self, PyObject *Py_UNUSED(memo))
{
    return Py_NewRef(self);
}

static PyObject *
sw_rule_reduce(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    PyErr_Format(PyExc_TypeError,
                 "cannot pickle a %s by itself: rules travel inside the "
                 "structure of the compound dtype that uses them",
                 Py_TYPE(self)->tp_name);
    return NULL;
}

static PyObject *
sw_rule_reduce_ex(PyObject *self, PyObject *Py_UNUSED(protocol))
{
    return sw_rule_reduce(self, NULL);
}

static PyObject *
sw_rule_init_subclass(PyObject *cls, PyObject *args, PyObject *kwds)
{
    if (PyTuple_GET_SIZE(args) != 0
        || (kwds != NULL && PyDict_GET_SIZE(kwds) != 0)) {
        PyErr_Format(PyExc_TypeError,
                     "class %s: RepresentationRule takes no class arguments",
                     ((PyTypeObject *)cls)->tp_name);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef sw_rule_methods[] = {
    {"structure", sw_rule_structure, METH_NOARGS,
     PyDoc_STR("structure($self, /)\n--\n\n"
               "Return the rule's immutable structure, recorded at "
               "construction: its class identity and structure_extension().")},
    {"structure_extension", sw_rule_structure_extension, METH_NOARGS,
     PyDoc_STR("structure_extension($self, /)\n--\n\n"
               "Return the rule's parameters as a tuple (default ()).\n\n"
               "Override to return exact str, int, float, bool, None, Whole "
               "and nested tuples of those; called once, at construction.")},
    {"validate", sw_rule_validate, METH_O,
     PyDoc_STR("validate($self, context, /)\n--\n\n"
               "Return None when the representation described by context "
               "satisfies the rule; raise otherwise.  Subclasses implement "
               "it.")},
    {"__copy__", sw_rule_copy, METH_NOARGS,
     PyDoc_STR("__copy__($self, /)\n--\n\nReturn self: rules are immutable.")},
    {"__deepcopy__", sw_rule_deepcopy, METH_O,
     PyDoc_STR("__deepcopy__($self, memo, /)\n--\n\nReturn self: rules are "
               "immutable.")},
    {"__reduce__", sw_rule_reduce, METH_NOARGS,
     PyDoc_STR("__reduce__($self, /)\n--\n\nRules are not pickled by "
               "themselves: raises TypeError.")},
    {"__reduce_ex__", sw_rule_reduce_ex, METH_O,
     PyDoc_STR("__reduce_ex__($self, protocol, /)\n--\n\nSee __reduce__.")},
    {"__init_subclass__", SW_CFUNC(sw_rule_init_subclass),
     METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     PyDoc_STR("__init_subclass__($cls, /)\n--\n\nRefuse class keywords.")},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef sw_rule_members[] = {
    {"__weaklistoffset__", T_PYSSIZET, offsetof(sw_rule, weakreflist),
     READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot sw_rule_base_slots[] = {
    {Py_tp_doc, (void *)PyDoc_STR(
        "The C layout shared by every representation rule; not used "
        "directly.")},
    {Py_tp_new, sw_rule_new},
    {Py_tp_dealloc, sw_rule_dealloc},
    {Py_tp_traverse, sw_rule_traverse},
    {Py_tp_clear, sw_rule_clear},
    {Py_tp_setattro, sw_rule_setattro},
    {Py_tp_getattro, PyObject_GenericGetAttr},
    {Py_tp_getset, sw_attrs_sealed_getset},
    {Py_tp_hash, sw_attrs_identity_hash},
    {Py_tp_richcompare, sw_attrs_identity_richcompare},
    {Py_tp_methods, sw_rule_methods},
    {Py_tp_members, sw_rule_members},
    {0, NULL},
};

static PyType_Spec sw_rule_base_spec = {
    .name = "stride_weave._dtypes._RuleBase",
    .basicsize = sizeof(sw_rule),
    .itemsize = 0,
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC
             | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = sw_rule_base_slots,
};

/* Create RuleMeta, _RuleBase and RepresentationRule into the state. */
int
sw_rule_create_types(PyObject *module, sw_state *st)
{
    PyObject *bases = NULL, *ns = NULL, *cls = NULL, *args = NULL;
    int status = -1;

    st->rule_meta_type = (PyTypeObject *)PyType_FromModuleAndSpec(
        module, &sw_rule_meta_spec, (PyObject *)&PyType_Type);
    if (st->rule_meta_type == NULL
        || sw_classcheck_install(st, st->rule_meta_type) < 0) {
        return -1;
    }
    st->rule_base_type = (PyTypeObject *)PyType_FromModuleAndSpec(
        module, &sw_rule_base_spec, NULL);
    if (st->rule_base_type == NULL) {
        return -1;
    }
    bases = PyTuple_Pack(1, st->rule_base_type);
    ns = Py_BuildValue(
        "{s:s,s:s}", "__module__", "stride_weave._dtypes", "__doc__",
        "Base class of declarative, immutable representation rules.\n\n"
        "Subclass it and implement validate(context), which returns None "
        "when the representation satisfies the rule and raises otherwise.  "
        "Parameters that define the rule go in structure_extension().  The "
        "subclass __init__ may set fields; once it returns the rule is "
        "sealed.  One rule may be shared by many compound dtypes; its "
        "structure is part of each of theirs.");
    if (bases == NULL || ns == NULL) {
        goto done;
    }
    args = Py_BuildValue("(sOO)", "RepresentationRule", bases, ns);
    if (args == NULL) {
        goto done;
    }
    st->installing = 1;
    cls = PyObject_Call((PyObject *)st->rule_meta_type, args, NULL);
    st->installing = 0;
    if (cls == NULL) {
        goto done;
    }
    st->rule_type = (PyTypeObject *)cls;
    status = 0;
done:
    Py_XDECREF(bases);
    Py_XDECREF(ns);
    Py_XDECREF(args);
    return status;
}
