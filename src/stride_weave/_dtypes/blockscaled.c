/* blockscaled.c: BlockScaledDType, element planes scaled per block.
 *
 * Owns the block-scaled constructor (name, *, element, levels), the planes,
 * rules, supertype and storage cost it derives, its accessors (element,
 * levels, num_axes, block_shape, bits_per_element) and its contract
 * structure.  Level 0 alone may have an N-D block (a tuple), and then
 * every later level is Whole.  A
 * block-scaled dtype is a concrete compound dtype; its structure is unique
 * among block-scaled dtypes, which the registry enforces when it publishes
 * (registry.c), so a name and a structure are claimed together.
 */
#include "kind.h"
#include "descriptor.h"
#include "level.h"
#include "privtable.h"
#include "rule.h"
#include "structure.h"

#define SW_BLOCKSCALED_INIT "BlockScaledDType.__init__()"

/* ---- argument checks ------------------------------------------------------ */

/* 0 when only level 0 has an N-D block, if any, and every later level is
 * then Whole; -1 with ValueError otherwise. */
static int
sw_blockscaled_check_nd(sw_state *st, PyObject *levels)
{
    Py_ssize_t i, n = PyTuple_GET_SIZE(levels);
    PyObject *first = ((sw_level *)PyTuple_GET_ITEM(levels, 0))->block;

    for (i = 1; i < n; i++) {
        PyObject *block = ((sw_level *)PyTuple_GET_ITEM(levels, i))->block;
        PyObject *shown, *shown_first;

        /* Blocks are shown as the structure shows them: an entry of any
         * size, never hitting the int-to-decimal digit limit. */
        if (PyTuple_CheckExact(block)) {
            shown = sw_structure_block_text(block);
            if (shown != NULL) {
                PyErr_Format(PyExc_ValueError,
                             "%s: only levels[0] may have an N-D (tuple) "
                             "block, got %U at levels[%zd]",
                             SW_BLOCKSCALED_INIT, shown, i);
                Py_DECREF(shown);
            }
            return -1;
        }
        if (PyTuple_CheckExact(first) && block != st->whole) {
            shown_first = sw_structure_block_text(first);
            shown = shown_first != NULL ? sw_structure_block_text(block) : NULL;
            if (shown != NULL) {
                PyErr_Format(PyExc_ValueError,
                             "%s: levels[0] has the N-D block %U, so every "
                             "later level must be Whole, got block=%U at "
                             "levels[%zd]", SW_BLOCKSCALED_INIT, shown_first,
                             shown, i);
            }
            Py_XDECREF(shown_first);
            Py_XDECREF(shown);
            return -1;
        }
    }
    return 0;
}

/* The levels as a new tuple of Level, innermost first; only the last may
 * be Whole, and only the first may be N-D. */
static PyObject *
sw_blockscaled_check_levels(sw_state *st, PyObject *levels_arg)
{
    PyObject *it = PyObject_GetIter(levels_arg), *levels;
    Py_ssize_t i, n;

    if (it == NULL) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Format(PyExc_TypeError,
                         "%s: levels must be an iterable of Level, got %s",
                         SW_BLOCKSCALED_INIT, Py_TYPE(levels_arg)->tp_name);
        }
        return NULL;
    }
    levels = PySequence_Tuple(it);
    Py_DECREF(it);
    if (levels == NULL) {
        return NULL;
    }
    n = PyTuple_GET_SIZE(levels);
    for (i = 0; i < n; i++) {
        PyObject *level = PyTuple_GET_ITEM(levels, i);
        if (!PyObject_TypeCheck(level, st->level_type)) {
            PyErr_Format(PyExc_TypeError,
                         "%s: levels[%zd] must be a Level, got %s",
                         SW_BLOCKSCALED_INIT, i, Py_TYPE(level)->tp_name);
            goto error;
        }
    }
    if (n == 0) {
        PyErr_Format(PyExc_ValueError,
                     "%s: levels must hold at least one Level, got an empty "
                     "iterable", SW_BLOCKSCALED_INIT);
        goto error;
    }
    for (i = 0; i < n - 1; i++) {
        if (((sw_level *)PyTuple_GET_ITEM(levels, i))->block == st->whole) {
            PyErr_Format(PyExc_ValueError,
                         "%s: only the last level may have block=Whole, got "
                         "Whole at levels[%zd] of %zd levels", SW_BLOCKSCALED_INIT, i,
                         n);
            goto error;
        }
    }
    if (sw_blockscaled_check_nd(st, levels) < 0) {
        goto error;
    }
    return levels;

error:
    Py_DECREF(levels);
    return NULL;
}

/* ---- derived fields --------------------------------------------------------- */

/* (element, scale of each level): the planes. */
static PyObject *
sw_blockscaled_planes(PyObject *element, PyObject *levels)
{
    Py_ssize_t i, n = PyTuple_GET_SIZE(levels);
    PyObject *planes = PyTuple_New(n + 1);

    if (planes == NULL) {
        return NULL;
    }
    PyTuple_SET_ITEM(planes, 0, Py_NewRef(element));
    for (i = 0; i < n; i++) {
        sw_level *level = (sw_level *)PyTuple_GET_ITEM(levels, i);
        PyTuple_SET_ITEM(planes, i + 1, Py_NewRef(level->scale));
    }
    return planes;
}

/* LevelExtent(i, block) for level i, shared through the state's cache so
 * every MX format holds the same LevelExtent(0, 32) (new ref). */
static PyObject *
sw_blockscaled_rule(sw_state *st, Py_ssize_t i, PyObject *block)
{
    PyObject *key, *rule, *found;

    key = Py_BuildValue("(nO)", i, block);
    if (key == NULL) {
        return NULL;
    }
    found = sw_private_get(st->level_extent_cache, key);
    if (found != NULL || PyErr_Occurred()) {
        Py_DECREF(key);
        return found;
    }
    rule = PyObject_CallFunction((PyObject *)st->level_extent_type, "nO",
                                 i, block);
    if (rule == NULL) {
        Py_DECREF(key);
        return NULL;
    }
    /* Another thread may have raced us here: keep whichever came first. */
    found = sw_private_setdefault(st->level_extent_cache, key, rule);  /* borrowed */
    Py_DECREF(key);
    Py_DECREF(rule);
    return Py_XNewRef(found);
}

static PyObject *
sw_blockscaled_rules(sw_state *st, PyObject *levels)
{
    Py_ssize_t i, n = PyTuple_GET_SIZE(levels);
    PyObject *rules = PyTuple_New(n);

    if (rules == NULL) {
        return NULL;
    }
    for (i = 0; i < n; i++) {
        sw_level *level = (sw_level *)PyTuple_GET_ITEM(levels, i);
        PyObject *rule = sw_blockscaled_rule(st, i, level->block);
        if (rule == NULL) {
            Py_DECREF(rules);
            return NULL;
        }
        PyTuple_SET_ITEM(rules, i, rule);
    }
    return rules;
}

/* Bits per element: element bits plus, for each level that is not Whole,
 * its scale bits over the product of the block sizes up to and including
 * it (an N-D block's size is the product of its entries).  Summed
 * exactly as a fraction num / den of Python ints and rounded once, so the
 * result is the correctly rounded value of the exact sum.  With a final
 * Whole level: SymbolicBits(that sum, the whole level's scale bits). */
static PyObject *
sw_blockscaled_bits_per_element(sw_state *st, PyObject *element, PyObject *levels)
{
    Py_ssize_t i, n = PyTuple_GET_SIZE(levels);
    PyObject *num, *den, *tmp, *constant, *result;
    sw_level *last = (sw_level *)PyTuple_GET_ITEM(levels, n - 1);
    int whole = (last->block == st->whole);

    num = Py_NewRef(((sw_descriptor *)element)->bits);
    den = PyLong_FromLong(1);
    if (den == NULL) {
        goto error;
    }
    for (i = 0; i < n - whole; i++) {
        sw_level *level = (sw_level *)PyTuple_GET_ITEM(levels, i);
        PyObject *scale_bits = ((sw_descriptor *)level->scale)->bits;
        /* b: the coordinates one block spans (an N-D block's product) */
        PyObject *b = sw_level_block_size(level->block);

        if (b == NULL) {
            goto error;
        }
        /* num/den + s/(den*b) == (num*b + s) / (den*b); exact ints only. */
        tmp = PyNumber_Multiply(num, b);
        Py_SETREF(num, tmp ? PyNumber_Add(tmp, scale_bits) : NULL);
        Py_XDECREF(tmp);
        Py_SETREF(den, num ? PyNumber_Multiply(den, b) : NULL);
        Py_DECREF(b);
        if (num == NULL || den == NULL) {
            goto error;
        }
    }
    constant = PyNumber_TrueDivide(num, den);
    Py_CLEAR(num);
    Py_CLEAR(den);
    if (constant == NULL && PyErr_ExceptionMatches(PyExc_OverflowError)) {
        PyErr_Format(PyExc_ValueError,
                     "%s: the bits per element of element %R and these "
                     "levels exceed the range of a float",
                     SW_BLOCKSCALED_INIT, element);
        return NULL;
    }
    if (constant == NULL || !whole) {
        return constant;
    }
    result = PyObject_CallFunction((PyObject *)st->symbolic_type, "OO",
                                   constant,
                                   ((sw_descriptor *)last->scale)->bits);
    Py_DECREF(constant);
    return result;

error:
    Py_XDECREF(num);
    Py_XDECREF(den);
    return NULL;
}

/* ---- __init__ ------------------------------------------------------------------ */

static int
sw_blockscaled_init(PyObject *self, PyObject *args, PyObject *kwds)
{
    static const char *const allowed[] = {"name", "element", "levels", NULL};
    static char *kwlist[] = {"name", "element", "levels", NULL};
    sw_descriptor *d = (sw_descriptor *)self;
    sw_state *st = sw_state_of_type(Py_TYPE(self));
    PyObject *name = NULL, *element = NULL, *levels_arg = NULL;
    PyObject *exact = NULL, *levels = NULL, *planes = NULL, *rules = NULL;
    PyObject *bits = NULL, *any_name = NULL, *any = NULL;
    sw_compound_fields *fields;

    if (sw_construct_begin_init(d, SW_KIND_BLOCK_SCALED, SW_BLOCKSCALED_INIT) < 0
        || sw_args_check_kwargs(kwds, allowed, SW_BLOCKSCALED_INIT) < 0
        || !PyArg_ParseTupleAndKeywords(args, kwds,
                                        "O|$OO:BlockScaledDType.__init__",
                                        kwlist, &name, &element, &levels_arg)) {
        return -1;
    }
    if (element == NULL || levels_arg == NULL) {
        PyErr_Format(PyExc_TypeError,
                     "%s missing required keyword-only argument: '%s'",
                     SW_BLOCKSCALED_INIT, element == NULL ? "element" : "levels");
        return -1;
    }
    exact = sw_args_name(name, SW_BLOCKSCALED_INIT);
    if (exact == NULL
        || sw_args_simple(st, element, "element", SW_BLOCKSCALED_INIT) < 0) {
        goto error;
    }
    levels = sw_blockscaled_check_levels(st, levels_arg);
    if (levels == NULL) {
        goto error;
    }
    planes = sw_blockscaled_planes(element, levels);
    rules = planes ? sw_blockscaled_rules(st, levels) : NULL;
    bits = rules ? sw_blockscaled_bits_per_element(st, element, levels) : NULL;
    if (bits == NULL) {
        goto error;
    }
    any_name = PyUnicode_FromString("Any");
    any = any_name ? sw_registry_lookup(&st->registry, any_name) : NULL;
    if (any == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_SystemError,
                            "the built-in category Any is not registered");
        }
        goto error;
    }
    if (sw_construct_set_common(st, d, exact, any) < 0
        || (fields = sw_descriptor_compound_fields(d)) == NULL) {
        goto error;
    }
    Py_XSETREF(fields->simple_types, planes);
    Py_XSETREF(fields->rules, rules);
    Py_XSETREF(fields->element, Py_NewRef(element));
    Py_XSETREF(fields->levels, levels);
    Py_XSETREF(fields->bits_per_element, bits);
    sw_construct_initialized(d, exact, NULL);
    Py_DECREF(exact);
    Py_DECREF(any_name);
    Py_DECREF(any);
    return 0;

error:
    Py_XDECREF(exact);
    Py_XDECREF(levels);
    Py_XDECREF(planes);
    Py_XDECREF(rules);
    Py_XDECREF(bits);
    Py_XDECREF(any_name);
    Py_XDECREF(any);
    return -1;
}

/* ---- structure -------------------------------------------------------------------- */

/* ("BlockScaledDType", ("element", <ref>),
 *  ("levels", (("Level", ("scale", <ref>),
 *               ("block", "int:<n>" | ("int:<n>", ...) | "whole")), ...)),
 *  ("representation_rules", (<rule structure>, ...)))
 * The planes and the supertype follow from element and levels, so they are
 * not recorded twice; the rules are, because a rule's structure is part of
 * the structure of every compound dtype that uses it. */
static PyObject *
sw_blockscaled_contract(sw_state *st, sw_descriptor *d)
{
    PyObject *element = NULL, *levels = NULL, *rules = NULL;
    Py_ssize_t i, n = PyTuple_GET_SIZE(d->compound->levels);

    element = sw_structure_ref(st, (sw_descriptor *)d->compound->element);
    levels = PyTuple_New(n);
    rules = PyTuple_New(n);   /* one LevelExtent per level */
    if (element == NULL || levels == NULL || rules == NULL) {
        goto error;
    }
    for (i = 0; i < n; i++) {
        sw_rule *rule = (sw_rule *)PyTuple_GET_ITEM(d->compound->rules, i);
        PyTuple_SET_ITEM(rules, i, Py_NewRef(rule->structure));
    }
    for (i = 0; i < n; i++) {
        sw_level *level = (sw_level *)PyTuple_GET_ITEM(d->compound->levels, i);
        PyObject *scale, *block, *entry;

        scale = sw_structure_ref(st, (sw_descriptor *)level->scale);
        if (scale == NULL) {
            goto error;
        }
        block = sw_structure_encode_block(st, level->block);
        if (block == NULL) {
            Py_DECREF(scale);
            goto error;
        }
        entry = Py_BuildValue("(O(ON)(ON))", st->labels[SW_LABEL_LEVEL],
                              st->labels[SW_LABEL_SCALE], scale,
                              st->labels[SW_LABEL_BLOCK], block);
        if (entry == NULL) {
            goto error;
        }
        PyTuple_SET_ITEM(levels, i, entry);
    }
    return Py_BuildValue("(O(ON)(ON)(ON))",
                         st->labels[SW_LABEL_BLOCK_SCALED_DTYPE],
                         st->labels[SW_LABEL_ELEMENT], element,
                         st->labels[SW_LABEL_LEVELS], levels,
                         st->labels[SW_LABEL_REPRESENTATION_RULES], rules);

error:
    Py_XDECREF(element);
    Py_XDECREF(levels);
    Py_XDECREF(rules);
    return NULL;
}

/* ---- accessors -------------------------------------------------------------------- */

/* A block-scaled accessor's receiver (see sw_descriptor_of_kind). */
static sw_descriptor *
sw_blockscaled_checked(PyObject *self, const char *accessor)
{
    return sw_descriptor_of_kind(self, SW_KIND_BLOCK_SCALED, accessor);
}

static PyObject *
sw_blockscaled_get_element(PyObject *self, void *Py_UNUSED(closure))
{
    sw_descriptor *d = sw_blockscaled_checked(self, "BlockScaledDType.element");

    return d ? Py_NewRef(d->compound->element) : NULL;
}

static PyObject *
sw_blockscaled_get_levels(PyObject *self, void *Py_UNUSED(closure))
{
    sw_descriptor *d = sw_blockscaled_checked(self, "BlockScaledDType.levels");

    return d ? Py_NewRef(d->compound->levels) : NULL;
}

static PyObject *
sw_blockscaled_get_num_axes(PyObject *self, void *Py_UNUSED(closure))
{
    sw_descriptor *d = sw_blockscaled_checked(self, "BlockScaledDType.num_axes");
    sw_state *st = sw_state_of_type(Py_TYPE(self));
    Py_ssize_t n;

    if (d == NULL) {
        return NULL;
    }
    n = PyTuple_GET_SIZE(d->compound->levels);
    if (((sw_level *)PyTuple_GET_ITEM(d->compound->levels, n - 1))->block == st->whole) {
        n--;   /* a final Whole level spans no axis of its own */
    }
    return PyLong_FromSsize_t(n);
}

static PyObject *
sw_blockscaled_get_block_shape(PyObject *self, void *Py_UNUSED(closure))
{
    sw_descriptor *d = sw_blockscaled_checked(self, "BlockScaledDType.block_shape");
    PyObject *block;

    if (d == NULL) {
        return NULL;
    }
    block = ((sw_level *)PyTuple_GET_ITEM(d->compound->levels, 0))->block;
    if (block == sw_state_of_type(Py_TYPE(self))->whole) {
        Py_RETURN_NONE;
    }
    return PyTuple_CheckExact(block) ? Py_NewRef(block) : PyTuple_Pack(1, block);
}

static PyObject *
sw_blockscaled_get_bits_per_element(PyObject *self, void *Py_UNUSED(closure))
{
    sw_descriptor *d = sw_blockscaled_checked(self, "BlockScaledDType.bits_per_element");

    return d ? Py_NewRef(d->compound->bits_per_element) : NULL;
}

static PyGetSetDef sw_blockscaled_getset[] = {
    {"element", sw_blockscaled_get_element, NULL,
     PyDoc_STR("The SimpleDType of the encoded elements (plane 0)."), NULL},
    {"levels", sw_blockscaled_get_levels, NULL,
     PyDoc_STR("The scale levels, innermost first: a tuple of Level."), NULL},
    {"num_axes", sw_blockscaled_get_num_axes, NULL,
     PyDoc_STR("The number of scale levels that are not Whole: how many "
               "nested levels of blocks the format has (MXFP4 and NVFP4: 1; "
               "a final Whole level does not count).  It does not count "
               "tensor axes: an N-D block such as (16, 16) is level 0's "
               "block_shape, and a layout says which tensor axes it runs "
               "along."), NULL},
    {"block_shape", sw_blockscaled_get_block_shape, NULL,
     PyDoc_STR("Level 0's block as a shape: (32,) for MXFP4, (16, 16) for "
               "an N-D block, None when level 0 is Whole."), NULL},
    {"bits_per_element", sw_blockscaled_get_bits_per_element, NULL,
     PyDoc_STR("Storage cost per element: a float (MXFP4: 4.25), or "
               "SymbolicBits when the last level is Whole (NVFP4: "
               "SymbolicBits(4.5, 32)).  Each scale's bits count over the "
               "elements its block spans (16x16: 256)."), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static int
sw_blockscaled_has_fields(sw_descriptor *d)
{
    return d->compound != NULL && d->compound->simple_types != NULL
           && d->compound->element != NULL;
}

/* The C type that carries BlockScaledDType's __init__ as a tp_init slot. */
static PyType_Slot sw_blockscaled_init_slots[] = {
    {Py_tp_init, sw_blockscaled_init},
    {Py_tp_doc, (void *)PyDoc_STR(
        "_BlockScaledInit(name, *, element, levels)\n--\n\n"
        "Construct and register a block-scaled dtype.\n\n"
        "element is the registered SimpleDType of the encoded elements; "
        "levels a non-empty iterable of Level, innermost first, of which "
        "only the last may have block=Whole, and only the first an N-D "
        "(tuple) block, with every later level then Whole.")},
    {0, NULL},
};

static PyType_Spec sw_blockscaled_init_spec = {
    .name = "stride_weave._dtypes._BlockScaledInit",
    .basicsize = 0,
    .itemsize = 0,
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = sw_blockscaled_init_slots,
};

const sw_kind_def sw_blockscaled_kind = {
    .kind = SW_KIND_BLOCK_SCALED,
    .parent = SW_KIND_COMPOUND,
    .class_name = "BlockScaledDType",
    .label = "block-scaled",
    .doc = "A concrete compound dtype whose logical value is the encoded "
           "element times one scale from each level (OCP Microscaling MX "
           "formats, NVFP4).  Its planes are (element, *scales), its rules "
           "one LevelExtent per level, its supertype DType.Any.  Level 0's "
           "block may be N-D, a tuple such as (16, 16) (block_shape); a "
           "layout, not the format, says which tensor axes a block spans.  "
           "num_axes counts the levels that are not Whole (nested levels of "
           "blocks), not tensor axes.  Unique by "
           "structure: the same element and levels cannot be registered "
           "twice, under any name or implementation subclass.",
    .abstract = 0,
    .unique_by_structure =
        "a block-scaled format with the same element, levels and "
        "structure_extension() is already registered (add a "
        "structure_extension() to describe a different format)",
    .init_spec = &sw_blockscaled_init_spec,
    .getsets = sw_blockscaled_getset,
    .contract = sw_blockscaled_contract,
    .has_fields = sw_blockscaled_has_fields,
};
