/* levelextent.c: LevelExtent, the rule that ties one scale level to its block.
 *
 * Owns the LevelExtent rule: `level` (the zero-based adjacent edge between
 * level shapes) and `extent` (the source coordinates that map to one target
 * coordinate: a positive int, an N-D block's tuple of ints, whose product
 * counts them, or Whole for all of them), its structure
 * extension (level, extent), and validate(context) against the documented
 * RepresentationValidationContext protocol.  The C layout (_LevelExtentImpl)
 * extends the rule layout; the public class is made by RuleMeta like any
 * rule, so it is a RepresentationRule in every respect.
 */
#include "rule.h"
#include "descriptor.h"
#include "meta.h"
#include "level.h"
#include "structure.h"

#define SW_LEVELEXTENT_INIT "LevelExtent()"

/* ValueError: `message` followed by the exact int `value` as a block is
 * shown (any size, beyond 64 bits in hex).  Returns -1. */
static int
sw_levelextent_refuse(const char *message, PyObject *value)
{
    PyObject *shown = sw_structure_block_text(value);

    if (shown != NULL) {
        PyErr_Format(PyExc_ValueError, "%s%U", message, shown);
        Py_DECREF(shown);
    }
    return -1;
}

/* ---- construction ------------------------------------------------------------ */

static int
sw_levelextent_init(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"level", "extent", NULL};
    sw_level_extent *le = (sw_level_extent *)self;
    sw_state *st = sw_state_of_type(Py_TYPE(self));
    PyObject *level, *extent, *exact = NULL;
    int sign = 0;

    if (sw_state_check(st) < 0) {
        return -1;
    }
    if (SW_LOAD_FLAG(((sw_rule *)self)->build_state) != SW_BUILDING
        || le->level != NULL) {
        PyErr_SetString(PyExc_TypeError,
                        SW_LEVELEXTENT_INIT ": a LevelExtent is initialized once, "
                        "while it is constructed");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO:LevelExtent", kwlist,
                                     &level, &extent)) {
        return -1;
    }
    if (!PyLong_CheckExact(level)) {
        PyErr_Format(PyExc_TypeError,
                     SW_LEVELEXTENT_INIT ": level must be an int (the zero-based "
                     "adjacent edge), got %s", Py_TYPE(level)->tp_name);
        return -1;
    }
    if (PyLong_GetSign(level, &sign) < 0) {
        return -1;
    }
    if (sign < 0) {
        return sw_levelextent_refuse(SW_LEVELEXTENT_INIT ": level must be a "
                                     "non-negative int, got ", level);
    }
    if (PyTuple_Check(extent)) {
        /* An N-D block: copied, as Level copies it. */
        exact = sw_level_block_tuple(extent, SW_LEVELEXTENT_INIT, "extent");
        if (exact == NULL) {
            return -1;
        }
        extent = exact;
    }
    else if (extent != st->whole) {
        if (!PyLong_CheckExact(extent)) {
            PyErr_Format(PyExc_TypeError,
                         SW_LEVELEXTENT_INIT ": extent must be an int, a tuple "
                         "of ints or Whole, got %s", Py_TYPE(extent)->tp_name);
            return -1;
        }
        if (PyLong_GetSign(extent, &sign) < 0) {
            return -1;
        }
        if (sign <= 0) {
            return sw_levelextent_refuse(SW_LEVELEXTENT_INIT ": extent must be a "
                                         "positive int or Whole, got ", extent);
        }
    }
    /* Checked again and set in one critical section: a self handed to
     * another thread is initialized once (free-threaded builds). */
    {
        int status = 0;

        Py_BEGIN_CRITICAL_SECTION(self);
        if (le->level != NULL) {
            PyErr_SetString(PyExc_TypeError,
                            SW_LEVELEXTENT_INIT ": a LevelExtent is initialized once, "
                            "while it is constructed");
            status = -1;
        }
        else {
            le->extent = Py_NewRef(extent);
            le->level = Py_NewRef(level);   /* last: level marks it ready */
        }
        Py_END_CRITICAL_SECTION();
        Py_XDECREF(exact);
        return status;
    }
}

static int
sw_levelextent_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(((sw_level_extent *)self)->level);
    Py_VISIT(((sw_level_extent *)self)->extent);
    return sw_rule_traverse(self, visit, arg);
}

static int
sw_levelextent_clear(PyObject *self)
{
    Py_CLEAR(((sw_level_extent *)self)->level);
    Py_CLEAR(((sw_level_extent *)self)->extent);
    return sw_rule_clear(self);
}

static void
sw_levelextent_dealloc(PyObject *self)
{
    PyObject_GC_UnTrack(self);
    Py_CLEAR(((sw_level_extent *)self)->level);
    Py_CLEAR(((sw_level_extent *)self)->extent);
    sw_rule_dealloc(self);   /* untracks again (harmless) and frees */
}

/* ---- accessors ------------------------------------------------------------------ */

/* The fields exist once __init__ ran; a rejected rule never escapes
 * RuleMeta's call, but a subclass __init__ could leak self early. */
static int
sw_levelextent_check_ready(sw_level_extent *le)
{
    if (le->level == NULL) {
        PyErr_SetString(PyExc_ValueError,
                        "this LevelExtent was not initialized");
        return -1;
    }
    return 0;
}

static PyObject *
sw_levelextent_get_level(PyObject *self, void *Py_UNUSED(closure))
{
    sw_level_extent *le = (sw_level_extent *)self;

    return sw_levelextent_check_ready(le) < 0 ? NULL : Py_NewRef(le->level);
}

static PyObject *
sw_levelextent_get_extent(PyObject *self, void *Py_UNUSED(closure))
{
    sw_level_extent *le = (sw_level_extent *)self;

    return sw_levelextent_check_ready(le) < 0 ? NULL : Py_NewRef(le->extent);
}

static PyObject *
sw_levelextent_structure_extension(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    sw_level_extent *le = (sw_level_extent *)self;

    if (sw_levelextent_check_ready(le) < 0) {
        return NULL;
    }
    return PyTuple_Pack(2, le->level, le->extent);
}

static PyObject *
sw_levelextent_repr(PyObject *self)
{
    sw_level_extent *le = (sw_level_extent *)self;

    if (le->level == NULL) {
        return PyUnicode_FromFormat("<uninitialized %s>",
                                    Py_TYPE(self)->tp_name);
    }
    return PyUnicode_FromFormat("%s(level=%R, extent=%R)",
                                sw_type_name(Py_TYPE(self)),
                                le->level, le->extent);
}

/* ---- validate(context) ---------------------------------------------------------- */

/* A readable name for context.logical_dtype in messages (new ref). */
static PyObject *
sw_levelextent_dtype_label(sw_state *st, PyObject *context)
{
    PyObject *dtype = PyObject_GetAttr(context,
                                       st->idents[SW_IDENT_LOGICAL_DTYPE]);
    PyObject *label;

    if (dtype == NULL) {
        return NULL;
    }
    if (PyObject_TypeCheck(dtype, st->base_type)
        && ((sw_descriptor *)dtype)->name != NULL) {
        label = PyUnicode_FromFormat("%R", ((sw_descriptor *)dtype)->name);
    }
    else {
        label = PyObject_Repr(dtype);
    }
    Py_DECREF(dtype);
    return label;
}

/* context.<attr> as a tuple (new ref): TypeError naming it otherwise. */
static PyObject *
sw_levelextent_context_tuple(sw_state *st, PyObject *context, sw_ident attr)
{
    PyObject *value = PyObject_GetAttr(context, st->idents[attr]);

    if (value == NULL) {
        return NULL;
    }
    if (!PyTuple_Check(value)) {
        PyErr_Format(PyExc_TypeError,
                     "LevelExtent.validate(): context.%U must be a tuple, "
                     "got %s", st->idents[attr], Py_TYPE(value)->tp_name);
        Py_DECREF(value);
        return NULL;
    }
    return value;
}

/* The logical_size of level_shapes[i] as an exact int (new ref). */
static PyObject *
sw_levelextent_logical_size(sw_state *st, PyObject *shapes, Py_ssize_t i)
{
    PyObject *size, *exact;

    size = PyObject_GetAttr(PyTuple_GET_ITEM(shapes, i),
                            st->idents[SW_IDENT_LOGICAL_SIZE]);
    if (size == NULL) {
        return NULL;
    }
    if (!PyLong_Check(size) || PyBool_Check(size)) {
        PyErr_Format(PyExc_TypeError,
                     "LevelExtent.validate(): context.level_shapes[%zd]."
                     "logical_size must be an int, got %s", i,
                     Py_TYPE(size)->tp_name);
        Py_DECREF(size);
        return NULL;
    }
    exact = PyNumber_Index(size);   /* an int subclass's value, as an int */
    Py_DECREF(size);
    return exact;
}

static PyObject *
sw_levelextent_validate(PyObject *self, PyObject *context)
{
    sw_level_extent *le = (sw_level_extent *)self;
    sw_state *st = sw_state_of_type(Py_TYPE(self));
    PyObject *label = NULL, *layouts = NULL, *shapes = NULL, *src = NULL;
    PyObject *dst = NULL, *preimage = NULL, *expected = NULL, *result = NULL;
    PyObject *size = NULL, *extent_text = NULL;
    Py_ssize_t level, nlayouts;
    int whole, cmp;

    if (sw_state_check(st) < 0 || sw_levelextent_check_ready(le) < 0) {
        return NULL;
    }
    whole = (le->extent == st->whole);
    if (!whole) {
        /* The coordinates one block spans, and how messages show it. */
        size = sw_level_block_size(le->extent);
        if (size == NULL) {
            goto done;
        }
        extent_text = PyTuple_CheckExact(le->extent)
            ? PyUnicode_FromFormat("%S (%S coordinates)", le->extent, size)
            : PyObject_Str(size);
        if (extent_text == NULL) {
            goto done;
        }
    }
    label = sw_levelextent_dtype_label(st, context);
    if (label == NULL) {
        goto done;
    }
    layouts = sw_levelextent_context_tuple(st, context,
                                           SW_IDENT_ADJACENT_LAYOUTS);
    if (layouts == NULL) {
        goto done;
    }
    shapes = sw_levelextent_context_tuple(st, context, SW_IDENT_LEVEL_SHAPES);
    if (shapes == NULL) {
        goto done;
    }
    nlayouts = PyTuple_GET_SIZE(layouts);
    level = PyLong_AsSsize_t(le->level);
    if (level == -1 && PyErr_Occurred()) {
        /* Larger than any tuple: certainly no such edge. */
        PyErr_Clear();
        level = PY_SSIZE_T_MAX;
    }
    if (level >= nlayouts) {
        PyErr_Format(PyExc_ValueError,
                     "%U: level %S has no adjacent edge: the representation "
                     "has %zd adjacent layout(s)", label, le->level, nlayouts);
        goto done;
    }
    if (PyTuple_GET_SIZE(shapes) < level + 2) {
        PyErr_Format(PyExc_ValueError,
                     "%U: level %S needs level_shapes[%zd] and "
                     "level_shapes[%zd], but the context has %zd level "
                     "shape(s)", label, le->level, level, level + 1,
                     PyTuple_GET_SIZE(shapes));
        goto done;
    }
    src = sw_levelextent_logical_size(st, shapes, level);
    if (src == NULL) {
        goto done;
    }
    dst = sw_levelextent_logical_size(st, shapes, level + 1);
    if (dst == NULL) {
        goto done;
    }
    if (whole) {
        expected = PyLong_FromLong(1);
    }
    else {
        PyObject *rem = PyNumber_Remainder(src, size);   /* exact ints */
        if (rem == NULL) {
            goto done;
        }
        cmp = PyObject_IsTrue(rem);
        Py_DECREF(rem);
        if (cmp) {
            if (cmp > 0) {
                PyErr_Format(PyExc_ValueError,
                             "%U: level %S has logical size %S, which is not "
                             "divisible by the block extent %U",
                             label, le->level, src, extent_text);
            }
            goto done;
        }
        expected = PyNumber_FloorDivide(src, size);
    }
    if (expected == NULL) {
        goto done;
    }
    cmp = PyObject_RichCompareBool(dst, expected, Py_EQ);
    if (cmp <= 0) {
        if (cmp == 0) {
            PyErr_Format(PyExc_ValueError,
                         "%U: level %S has logical size %S, so level %zd must "
                         "have logical size %S (%s), got %S",
                         label, le->level, src, level + 1, expected,
                         whole ? "one scale for the whole level" :
                                 "one scale per block", dst);
        }
        goto done;
    }
    {
        PyObject *adj = PyTuple_GET_ITEM(layouts, level);   /* borrowed */
        preimage = PyObject_CallMethodOneArg(
            adj, st->idents[SW_IDENT_UNIFORM_PREIMAGE_EXTENT],
            PyTuple_GET_ITEM(shapes, level + 1));
    }
    if (preimage == NULL) {
        goto done;
    }
    if (preimage == Py_None) {
        PyErr_Format(PyExc_ValueError,
                     "%U: the layout of adjacent edge %S maps level %S onto "
                     "level %zd without a uniform preimage extent (targets "
                     "overlap or leave holes); expected %S source "
                     "coordinates per target", label, le->level, le->level,
                     level + 1, whole ? src : size);
        goto done;
    }
    if (!PyLong_Check(preimage) || PyBool_Check(preimage)) {
        PyErr_Format(PyExc_TypeError,
                     "LevelExtent.validate(): adjacent_layouts[%zd]."
                     "uniform_preimage_extent() must return an int or None, "
                     "got %s", level, Py_TYPE(preimage)->tp_name);
        goto done;
    }
    Py_SETREF(preimage, PyNumber_Index(preimage));
    if (preimage == NULL) {
        goto done;
    }
    cmp = PyObject_RichCompareBool(preimage, whole ? src : size, Py_EQ);
    if (cmp <= 0) {
        if (cmp == 0) {
            PyErr_Format(PyExc_ValueError,
                         "%U: the layout of adjacent edge %S maps %S source "
                         "coordinates onto each target of level %zd; the "
                         "extent requires %S", label, le->level, preimage,
                         level + 1, whole ? src : size);
        }
        goto done;
    }
    result = Py_NewRef(Py_None);
done:
    Py_XDECREF(label);
    Py_XDECREF(layouts);
    Py_XDECREF(shapes);
    Py_XDECREF(src);
    Py_XDECREF(dst);
    Py_XDECREF(expected);
    Py_XDECREF(preimage);
    Py_XDECREF(size);
    Py_XDECREF(extent_text);
    return result;
}

/* ---- the types ------------------------------------------------------------------- */

static PyGetSetDef sw_levelextent_getset[] = {
    {"level", sw_levelextent_get_level, NULL,
     PyDoc_STR("The zero-based adjacent edge this rule constrains."), NULL},
    {"extent", sw_levelextent_get_extent, NULL,
     PyDoc_STR("Which coordinates of level `level` share one coordinate "
               "of level `level + 1`: a positive int (that many), an N-D "
               "block's tuple of ints (the product of its entries), or "
               "Whole (all of them)."), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef sw_levelextent_methods[] = {
    {"validate", sw_levelextent_validate, METH_O,
     PyDoc_STR("validate($self, context, /)\n--\n\n"
               "Return None when edge `level` of the representation in "
               "context maps blocks of `extent` coordinates (the product of "
               "a tuple extent) onto one target coordinate (all of them "
               "onto one for Whole); raise "
               "ValueError naming the dtype, the level and the numbers "
               "otherwise.")},
    {"structure_extension", sw_levelextent_structure_extension, METH_NOARGS,
     PyDoc_STR("structure_extension($self, /)\n--\n\n"
               "Return (level, extent): the rule's parameters.")},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot sw_levelextent_slots[] = {
    {Py_tp_doc, (void *)PyDoc_STR(
        "_LevelExtentImpl(level, extent)\n--\n\n"
        "The C layout of LevelExtent; not used directly.")},
    {Py_tp_init, sw_levelextent_init},
    {Py_tp_repr, sw_levelextent_repr},
    {Py_tp_traverse, sw_levelextent_traverse},
    {Py_tp_clear, sw_levelextent_clear},
    {Py_tp_dealloc, sw_levelextent_dealloc},
    {Py_tp_getset, sw_levelextent_getset},
    {Py_tp_methods, sw_levelextent_methods},
    {0, NULL},
};

static PyType_Spec sw_levelextent_spec = {
    .name = "stride_weave._dtypes._LevelExtentImpl",
    .basicsize = sizeof(sw_level_extent),
    .itemsize = 0,
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC
             | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = sw_levelextent_slots,
};

/* Create LevelExtent: RuleMeta("LevelExtent", (_LevelExtentImpl,
 * RepresentationRule), ns), frozen like the model's other classes. */
int
sw_levelextent_create_type(PyObject *module, sw_state *st)
{
    PyObject *impl, *bases = NULL, *ns = NULL, *args = NULL, *cls = NULL;
    int status = -1;

    impl = PyType_FromModuleAndSpec(module, &sw_levelextent_spec,
                                    (PyObject *)st->rule_base_type);
    if (impl == NULL) {
        return -1;
    }
    bases = PyTuple_Pack(2, impl, st->rule_type);
    ns = Py_BuildValue(
        "{s:s,s:s}", "__module__", "stride_weave._dtypes", "__doc__",
        "The representation rule of one scale level: on adjacent edge "
        "`level`, every `extent` coordinates of level_shapes[level] map onto "
        "one coordinate of level_shapes[level + 1] (Whole: all of them onto "
        "one).  level is an int >= 0; extent a positive int, a tuple of at "
        "least two ints >= 2 (an N-D block: extent counts the product of "
        "its entries, as one coordinate of a level shape), or Whole.  "
        "BlockScaledDType derives one per level.");
    if (bases == NULL || ns == NULL) {
        goto done;
    }
    args = Py_BuildValue("(sOO)", "LevelExtent", bases, ns);
    if (args == NULL) {
        goto done;
    }
    st->installing = 1;   /* a model class: frozen, no owned-name checks */
    cls = PyObject_Call((PyObject *)st->rule_meta_type, args, NULL);
    st->installing = 0;
    if (cls == NULL) {
        goto done;
    }
    ((sw_type *)cls)->abstract = 0;
    st->level_extent_type = (PyTypeObject *)cls;
    status = 0;
done:
    Py_DECREF(impl);   /* the class keeps it through its bases */
    Py_XDECREF(bases);
    Py_XDECREF(ns);
    Py_XDECREF(args);
    return status;
}
