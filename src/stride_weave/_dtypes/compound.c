/* compound.c: CompoundDType, a logical value stored in several planes.
 *
 * Owns the compound constructor (name, *, supertype=None, simple_types,
 * representation_rules=()), its accessors (simple_types, num_carriers,
 * representation_rules) and the compound contract structure.  The planes
 * and rules are copied into tuples the descriptor owns, so later changes to
 * the caller's sequences change nothing.
 */
#include "kind.h"
#include "descriptor.h"
#include "rule.h"

#define SW_COMPOUND_INIT "CompoundDType.__init__()"

/* 0 when item i of simple_types may be a plane (a simple dtype of this
 * graph), else -1 with TypeError. */
static int
sw_compound_check_plane(sw_state *st, PyObject *plane, Py_ssize_t i)
{
    if (sw_is_kind(st, plane, SW_KIND_SIMPLE)) {
        return 0;
    }
    PyErr_Format(PyExc_TypeError,
                 "%s: simple_types[%zd] must be a SimpleDType, got %s",
                 SW_COMPOUND_INIT, i,
                 PyObject_TypeCheck(plane, st->base_type)
                     ? sw_type_name(Py_TYPE(plane))
                     : Py_TYPE(plane)->tp_name);
    return -1;
}

/* 0 when item i of representation_rules is a constructed rule, else -1
 * with TypeError. */
static int
sw_compound_check_rule(sw_state *st, PyObject *rule, Py_ssize_t i)
{
    if (!PyObject_TypeCheck(rule, st->rule_base_type)) {
        PyErr_Format(PyExc_TypeError,
                     "%s: representation_rules[%zd] must be a "
                     "RepresentationRule, got %s", SW_COMPOUND_INIT, i,
                     Py_TYPE(rule)->tp_name);
        return -1;
    }
    if (SW_LOAD_FLAG(((sw_rule *)rule)->build_state) != SW_FINISHED) {
        PyErr_Format(PyExc_TypeError,
                     "%s: representation_rules[%zd] is a %s that was "
                     "not successfully constructed", SW_COMPOUND_INIT, i,
                     Py_TYPE(rule)->tp_name);
        return -1;
    }
    return 0;
}

/* Materialize the iterable argument `argname` as a tuple whose items all
 * pass `check`.  TypeError naming the argument when it is not iterable
 * (an iterable of `expected`); `check`'s error for the first item it
 * refuses. */
static PyObject *
sw_compound_items(sw_state *st, PyObject *value, const char *argname,
                  const char *expected,
                  int (*check)(sw_state *, PyObject *, Py_ssize_t))
{
    PyObject *it = PyObject_GetIter(value), *items;
    Py_ssize_t i;

    if (it == NULL) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Format(PyExc_TypeError,
                         "%s: %s must be an iterable of %s, got %s",
                         SW_COMPOUND_INIT, argname, expected,
                         Py_TYPE(value)->tp_name);
        }
        return NULL;
    }
    items = PySequence_Tuple(it);
    Py_DECREF(it);
    if (items == NULL) {
        return NULL;
    }
    for (i = 0; i < PyTuple_GET_SIZE(items); i++) {
        if (check(st, PyTuple_GET_ITEM(items, i), i) < 0) {
            Py_DECREF(items);
            return NULL;
        }
    }
    return items;
}

static PyObject *
sw_compound_check_planes(sw_state *st, PyObject *simple_types)
{
    PyObject *planes = sw_compound_items(st, simple_types, "simple_types",
                                         "registered SimpleDType",
                                         sw_compound_check_plane);
    Py_ssize_t i;

    if (planes == NULL) {
        return NULL;
    }
    if (PyTuple_GET_SIZE(planes) == 0) {
        PyErr_Format(PyExc_ValueError,
                     "%s: simple_types must hold at least one SimpleDType, "
                     "got an empty iterable", SW_COMPOUND_INIT);
        goto error;
    }
    for (i = 0; i < PyTuple_GET_SIZE(planes); i++) {
        if (sw_args_reference(st, PyTuple_GET_ITEM(planes, i),
                              "every simple_types element",
                              SW_COMPOUND_INIT) < 0) {
            goto error;
        }
    }
    return planes;

error:
    Py_DECREF(planes);
    return NULL;
}

static int
sw_compound_init(PyObject *self, PyObject *args, PyObject *kwds)
{
    static const char *const allowed[] = {
        "name", "supertype", "simple_types", "representation_rules", NULL};
    static char *kwlist[] = {
        "name", "supertype", "simple_types", "representation_rules", NULL};
    sw_descriptor *d = (sw_descriptor *)self;
    sw_state *st = sw_state_of_type(Py_TYPE(self));
    PyObject *name = NULL, *supertype = Py_None, *simple_types = NULL;
    PyObject *rules_arg = NULL, *exact = NULL, *planes = NULL, *rules = NULL;
    sw_compound_fields *fields;

    if (sw_construct_begin_init(d, SW_KIND_COMPOUND, SW_COMPOUND_INIT) < 0
        || sw_args_check_kwargs(kwds, allowed, SW_COMPOUND_INIT) < 0
        || !PyArg_ParseTupleAndKeywords(args, kwds,
                                        "O|$OOO:CompoundDType.__init__", kwlist,
                                        &name, &supertype, &simple_types,
                                        &rules_arg)) {
        return -1;
    }
    if (d->kind == SW_KIND_BLOCK_SCALED) {
        PyErr_Format(PyExc_TypeError,
                     "%s: a %s derives its planes and rules from its element "
                     "and levels; call BlockScaledDType.__init__(name, *, "
                     "element, levels) instead", SW_COMPOUND_INIT,
                     sw_type_name(Py_TYPE(self)));
        return -1;
    }
    if (simple_types == NULL) {
        PyErr_Format(PyExc_TypeError,
                     "%s missing required keyword-only argument: "
                     "'simple_types'", SW_COMPOUND_INIT);
        return -1;
    }
    exact = sw_args_name(name, SW_COMPOUND_INIT);
    if (exact == NULL
        || sw_args_supertype(st, supertype, 1, SW_COMPOUND_INIT) < 0) {
        goto error;
    }
    planes = sw_compound_check_planes(st, simple_types);
    if (planes == NULL) {
        goto error;
    }
    rules = rules_arg ? sw_compound_items(st, rules_arg, "representation_rules",
                                          "RepresentationRule",
                                          sw_compound_check_rule)
                      : Py_NewRef(st->empty_tuple);
    if (rules == NULL
        || sw_construct_set_common(st, d, exact, supertype) < 0
        || (fields = sw_descriptor_compound_fields(d)) == NULL) {
        goto error;
    }
    Py_XSETREF(fields->simple_types, planes);
    Py_XSETREF(fields->rules, rules);
    sw_construct_initialized(d, exact, NULL);
    Py_DECREF(exact);
    return 0;

error:
    Py_XDECREF(exact);
    Py_XDECREF(planes);
    Py_XDECREF(rules);
    return -1;
}

/* ("CompoundDType", ("supertype", <ref> | "none"),
 *  ("simple_types", (<ref>, ...)),
 *  ("representation_rules", (<rule structure>, ...))) */
static PyObject *
sw_compound_contract(sw_state *st, sw_descriptor *d)
{
    PyObject *supertype = NULL, *planes = NULL, *rules = NULL;
    PyObject *sup = sw_descriptor_supertype(d);   /* borrowed */
    Py_ssize_t i, n;

    supertype = sup ? sw_structure_ref(st, (sw_descriptor *)sup)
                    : Py_NewRef(st->labels[SW_LABEL_NONE]);
    if (supertype == NULL) {
        goto error;
    }
    n = PyTuple_GET_SIZE(d->compound->simple_types);
    planes = PyTuple_New(n);
    if (planes == NULL) {
        goto error;
    }
    for (i = 0; i < n; i++) {
        PyObject *ref = sw_structure_ref(st,
            (sw_descriptor *)PyTuple_GET_ITEM(d->compound->simple_types, i));
        if (ref == NULL) {
            goto error;
        }
        PyTuple_SET_ITEM(planes, i, ref);
    }
    n = PyTuple_GET_SIZE(d->compound->rules);
    rules = PyTuple_New(n);
    if (rules == NULL) {
        goto error;
    }
    for (i = 0; i < n; i++) {
        sw_rule *rule = (sw_rule *)PyTuple_GET_ITEM(d->compound->rules, i);
        PyTuple_SET_ITEM(rules, i, Py_NewRef(rule->structure));
    }
    return Py_BuildValue("(O(ON)(ON)(ON))",
                         st->labels[SW_LABEL_COMPOUND_DTYPE],
                         st->labels[SW_LABEL_SUPERTYPE], supertype,
                         st->labels[SW_LABEL_SIMPLE_TYPES], planes,
                         st->labels[SW_LABEL_REPRESENTATION_RULES], rules);

error:
    Py_XDECREF(supertype);
    Py_XDECREF(planes);
    Py_XDECREF(rules);
    return NULL;
}

static PyObject *
sw_compound_get_simple_types(PyObject *self, void *Py_UNUSED(closure))
{
    sw_descriptor *d = sw_descriptor_of_kind(self, SW_KIND_COMPOUND,
                                             "CompoundDType.simple_types");

    return d ? Py_NewRef(d->compound->simple_types) : NULL;
}

static PyObject *
sw_compound_get_num_carriers(PyObject *self, void *Py_UNUSED(closure))
{
    sw_descriptor *d = sw_descriptor_of_kind(self, SW_KIND_COMPOUND,
                                             "CompoundDType.num_carriers");

    return d ? PyLong_FromSsize_t(PyTuple_GET_SIZE(d->compound->simple_types)) : NULL;
}

static PyObject *
sw_compound_get_rules(PyObject *self, void *Py_UNUSED(closure))
{
    sw_descriptor *d = sw_descriptor_of_kind(self, SW_KIND_COMPOUND,
                                             "CompoundDType.representation_rules");

    return d ? Py_NewRef(d->compound->rules) : NULL;
}


static PyGetSetDef sw_compound_getset[] = {
    {"simple_types", sw_compound_get_simple_types, NULL,
     PyDoc_STR("The ordered planes: a tuple of SimpleDType."), NULL},
    {"num_carriers", sw_compound_get_num_carriers, NULL,
     PyDoc_STR("The number of planes (len(simple_types))."), NULL},
    {"representation_rules", sw_compound_get_rules, NULL,
     PyDoc_STR("The representation rules: a tuple of RepresentationRule."),
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static int
sw_compound_has_fields(sw_descriptor *d)
{
    return d->compound != NULL && d->compound->simple_types != NULL
           && d->compound->rules != NULL;
}

/* The C type that carries CompoundDType's __init__ as a tp_init slot, so that
 * inspect and help() read its signature like a built-in's. */
static PyType_Slot sw_compound_init_slots[] = {
    {Py_tp_init, sw_compound_init},
    {Py_tp_doc, (void *)PyDoc_STR(
        "_CompoundInit(name, *, supertype=None, simple_types, representation_rules=())\n--\n\n"
        "Initialize the compound base of a concrete subclass.\n\n"
        "simple_types is a non-empty iterable of registered SimpleDType "
        "planes (plane i is stored by a carrier whose storage dtype is "
        "exactly simple_types[i]); representation_rules is an iterable "
        "of RepresentationRule objects.  Both are copied.")},
    {0, NULL},
};

static PyType_Spec sw_compound_init_spec = {
    .name = "stride_weave._dtypes._CompoundInit",
    .basicsize = 0,
    .itemsize = 0,
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = sw_compound_init_slots,
};

const sw_kind_def sw_compound_kind = {
    .kind = SW_KIND_COMPOUND,
    .parent = SW_KIND_NONE,
    .class_name = "CompoundDType",
    .label = "compound",
    .doc = "Abstract base of compound dtypes: a logical value stored in "
           "several simple-dtype planes, constrained by representation "
           "rules.  Subclass it with abstract=False and call "
           "super().__init__(...).  A compound dtype is never itself a "
           "homogeneous storage dtype.",
    .abstract = 1,
    .unique_by_structure = NULL,
    .init_spec = &sw_compound_init_spec,
    .getsets = sw_compound_getset,
    .contract = sw_compound_contract,
    .has_fields = sw_compound_has_fields,
};
