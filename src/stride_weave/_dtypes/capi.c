/* capi.c: the C API for extension authors (include/stride_weave/dtypes.h).
 *
 * Owns the function table consumers reach through the capsule
 * "stride_weave._dtypes._C_API": the functions behind it, filling it once
 * per interpreter after the built-in graph is installed, and publishing it
 * as the module attribute _C_API.  The table belongs to the module state of
 * the interpreter's first module, which stride_weave keeps for the life of
 * the interpreter; a re-import adopts the same capsule (module.c), so every
 * consumer of one interpreter sees one table.
 *
 * The functions take no table argument: a descriptor knows its graph
 * through its class, and FromName looks in the current interpreter's
 * graph.  They read the descriptor's C fields directly and never run
 * Python code.
 */
#include "capi.h"
#include "descriptor.h"
#include "level.h"
#include "meta.h"
#include "relations.h"
#include "structure.h"

#define SW_DTYPES_IMPL   /* the table's definition only, no consumer helpers */
#include "stride_weave/dtypes.h"

#include <stddef.h>       /* offsetof */

/* Bits of the kinds an argument may have, for sw_capi_arg. */
#define SW_ANY_KIND ((1u << SW_DTYPE_KIND_CATEGORY) | (1u << SW_DTYPE_KIND_SIMPLE) \
                     | (1u << SW_DTYPE_KIND_COMPOUND) \
                     | (1u << SW_DTYPE_KIND_BLOCK_SCALED))
#define SW_SIMPLE_KIND (1u << SW_DTYPE_KIND_SIMPLE)
#define SW_COMPOUND_KINDS ((1u << SW_DTYPE_KIND_COMPOUND) \
                           | (1u << SW_DTYPE_KIND_BLOCK_SCALED))
#define SW_BLOCK_SCALED_KIND (1u << SW_DTYPE_KIND_BLOCK_SCALED)

/* ---- kinds -------------------------------------------------------------- */

/* The public kind of a descriptor object, finished or not: the kind its
 * class recorded, whose numbers are the API's (kind.c checks). */
static int
sw_capi_kind_of(sw_descriptor *d)
{
    return d->kind < SW_KIND_COUNT ? d->kind : SW_DTYPE_KIND_NONE;
}

static int
sw_capi_kind(PyObject *op)
{
    sw_descriptor *d;

    if (op == NULL || !sw_meta_is_descriptor_class(Py_TYPE(op))) {
        return SW_DTYPE_KIND_NONE;
    }
    d = (sw_descriptor *)op;
    if (SW_LOAD_FLAG(d->build_state) != SW_FINISHED) {
        return SW_DTYPE_KIND_NONE;   /* under construction or rejected */
    }
    return sw_capi_kind_of(d);
}

/* ---- argument checks ------------------------------------------------------ */

/* `op` as a registered descriptor whose kind is in `kinds`; else NULL with
 * SystemError (NULL), TypeError (not a descriptor, or another kind: the
 * message names the function, what it expects and what it got) or
 * ValueError (a descriptor object that is not registered). */
static sw_descriptor *
sw_capi_arg(PyObject *op, unsigned int kinds, const char *func,
            const char *expected)
{
    sw_descriptor *d;

    if (op == NULL) {
        PyErr_Format(PyExc_SystemError, "%s: got NULL instead of %s",
                     func, expected);
        return NULL;
    }
    if (!sw_meta_is_descriptor_class(Py_TYPE(op))) {
        PyErr_Format(PyExc_TypeError, "%s: expected %s, got %s", func,
                     expected, Py_TYPE(op)->tp_name);
        return NULL;
    }
    d = (sw_descriptor *)op;
    /* A descriptor's repr is the model's own (__repr__ is model-owned):
     * formatting it runs no user code. */
    if (!(kinds & (1u << sw_capi_kind_of(d)))) {
        PyErr_Format(PyExc_TypeError, "%s: expected %s, got %R", func,
                     expected, op);
        return NULL;
    }
    if (SW_LOAD_FLAG(d->build_state) != SW_FINISHED) {
        PyErr_Format(PyExc_ValueError,
                     "%s: expected %s, got %R, which is not registered "
                     "(under construction or rejected)", func, expected, op);
        return NULL;
    }
    return d;
}

/* Index i of a tuple field, or NULL with IndexError naming the function. */
static PyObject *
sw_capi_item(PyObject *tuple, Py_ssize_t i, sw_descriptor *d,
             const char *func, const char *what)
{
    Py_ssize_t n = PyTuple_GET_SIZE(tuple);

    if (i < 0 || i >= n) {
        PyErr_Format(PyExc_IndexError,
                     "%s: %s index %zd out of range for %R, which has %zd",
                     func, what, i, (PyObject *)d, n);
        return NULL;
    }
    return PyTuple_GET_ITEM(tuple, i);   /* borrowed */
}

/* An exact int field as Py_ssize_t; OverflowError naming the function. */
static Py_ssize_t
sw_capi_ssize(PyObject *value, sw_descriptor *d, const char *func,
              const char *what)
{
    Py_ssize_t n = PyLong_AsSsize_t(value);

    if (n == -1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
            /* An int of any size: where str() would hit the
             * int-to-decimal digit limit (and replace this OverflowError
             * with a ValueError), it is shown in hex. */
            PyObject *shown;

            PyErr_Clear();
            shown = sw_structure_value_text(value);
            if (shown != NULL) {
                PyErr_Format(PyExc_OverflowError,
                             "%s: the %s of %R (%U) does not fit in a "
                             "Py_ssize_t", func, what, (PyObject *)d, shown);
                Py_DECREF(shown);
            }
        }
        return -1;
    }
    return n;
}

/* ---- lookup --------------------------------------------------------------- */

static PyObject *
sw_capi_lookup(PyObject *exact)
{
    sw_state *st = sw_state_current();

    if (st == NULL || sw_state_check(st) < 0) {
        return NULL;
    }
    return sw_miss_find(st, exact);
}

static PyObject *
sw_capi_from_name(const char *name)
{
    PyObject *exact, *found;

    if (name == NULL) {
        PyErr_SetString(PyExc_SystemError,
                        "SW_DType_FromName: got NULL instead of a name");
        return NULL;
    }
    exact = PyUnicode_FromString(name);
    if (exact == NULL) {
        return NULL;   /* UnicodeDecodeError: not UTF-8 */
    }
    found = sw_capi_lookup(exact);
    Py_DECREF(exact);
    return found;
}

static PyObject *
sw_capi_from_name_object(PyObject *name)
{
    PyObject *exact, *found;

    if (name == NULL) {
        PyErr_SetString(PyExc_SystemError,
                        "SW_DType_FromNameObject: got NULL instead of a str");
        return NULL;
    }
    if (!PyUnicode_Check(name)) {
        PyErr_Format(PyExc_TypeError,
                     "SW_DType_FromNameObject: name must be a str, got %s",
                     Py_TYPE(name)->tp_name);
        return NULL;
    }
    exact = sw_exact_str(name);
    if (exact == NULL) {
        return NULL;
    }
    found = sw_capi_lookup(exact);
    Py_DECREF(exact);
    return found;
}

/* ---- accessors -------------------------------------------------------------- */

static PyObject *
sw_capi_name(PyObject *op)
{
    sw_descriptor *d = sw_capi_arg(op, SW_ANY_KIND, "SW_DType_Name",
                                   "a registered descriptor");

    return d ? Py_NewRef(d->name) : NULL;
}

static const char *
sw_capi_name_utf8(PyObject *op)
{
    sw_descriptor *d = sw_capi_arg(op, SW_ANY_KIND, "SW_DType_NameUTF8",
                                   "a registered descriptor");

    /* Cached in the str, which the descriptor keeps for good. */
    return d ? PyUnicode_AsUTF8(d->name) : NULL;
}

static Py_ssize_t
sw_capi_bits(PyObject *op)
{
    sw_descriptor *d = sw_capi_arg(op, SW_SIMPLE_KIND, "SW_DType_Bits",
                                   "a registered SimpleDType");

    return d ? sw_capi_ssize(d->bits, d, "SW_DType_Bits", "width") : -1;
}

static PyObject *
sw_capi_supertype(PyObject *op)
{
    sw_descriptor *d = sw_capi_arg(op, SW_ANY_KIND, "SW_DType_Supertype",
                                   "a registered descriptor");
    PyObject *supertype;

    if (d == NULL) {
        return NULL;
    }
    supertype = sw_descriptor_supertype(d);   /* borrowed */
    return Py_NewRef(supertype ? supertype : Py_None);
}

static int
sw_capi_is_subtype(PyObject *op, PyObject *other)
{
    sw_descriptor *d = sw_capi_arg(op, SW_ANY_KIND, "SW_DType_IsSubtype",
                                   "a registered descriptor");

    if (d == NULL
        || sw_capi_arg(other, SW_ANY_KIND, "SW_DType_IsSubtype",
                       "a registered descriptor as other") == NULL) {
        return -1;
    }
    return sw_descriptor_reaches(d, other);
}

static Py_ssize_t
sw_capi_num_planes(PyObject *op)
{
    sw_descriptor *d = sw_capi_arg(op, SW_COMPOUND_KINDS, "SW_DType_NumPlanes",
                                   "a registered CompoundDType");

    return d ? PyTuple_GET_SIZE(d->compound->simple_types) : -1;
}

static PyObject *
sw_capi_plane(PyObject *op, Py_ssize_t i)
{
    sw_descriptor *d = sw_capi_arg(op, SW_COMPOUND_KINDS, "SW_DType_Plane",
                                   "a registered CompoundDType");
    PyObject *plane;

    if (d == NULL) {
        return NULL;
    }
    plane = sw_capi_item(d->compound->simple_types, i, d, "SW_DType_Plane",
                         "plane");
    return Py_XNewRef(plane);
}

static PyObject *
sw_capi_element(PyObject *op)
{
    sw_descriptor *d = sw_capi_arg(op, SW_BLOCK_SCALED_KIND, "SW_DType_Element",
                                   "a registered BlockScaledDType");

    return d ? Py_NewRef(d->compound->element) : NULL;
}

static Py_ssize_t
sw_capi_num_levels(PyObject *op)
{
    sw_descriptor *d = sw_capi_arg(op, SW_BLOCK_SCALED_KIND,
                                   "SW_DType_NumLevels",
                                   "a registered BlockScaledDType");

    return d ? PyTuple_GET_SIZE(d->compound->levels) : -1;
}

/* Level i of a block-scaled dtype (borrowed), or NULL with an exception. */
static sw_level *
sw_capi_level(PyObject *op, Py_ssize_t i, const char *func, sw_descriptor **dp)
{
    sw_descriptor *d = sw_capi_arg(op, SW_BLOCK_SCALED_KIND, func,
                                   "a registered BlockScaledDType");

    if (d == NULL) {
        return NULL;
    }
    *dp = d;
    return (sw_level *)sw_capi_item(d->compound->levels, i, d, func, "level");
}

static PyObject *
sw_capi_level_scale(PyObject *op, Py_ssize_t i)
{
    sw_descriptor *d;
    sw_level *level = sw_capi_level(op, i, "SW_DType_LevelScale", &d);

    return level ? Py_NewRef(level->scale) : NULL;
}

static Py_ssize_t
sw_capi_level_block(PyObject *op, Py_ssize_t i)
{
    sw_descriptor *d;
    sw_level *level = sw_capi_level(op, i, "SW_DType_LevelBlock", &d);
    sw_state *st;

    if (level == NULL) {
        return -1;
    }
    st = sw_state_of_type(Py_TYPE(d));
    if (sw_state_check(st) < 0) {
        return -1;
    }
    if (level->block == st->whole) {
        return SW_DTYPE_BLOCK_WHOLE;
    }
    if (PyTuple_CheckExact(level->block)) {
        /* One count would read as a 1-D block along one axis. */
        PyErr_Format(PyExc_ValueError,
                     "SW_DType_LevelBlock: level %zd of %R has the N-D block "
                     "%R; read it with SW_DType_LevelBlockShape", i,
                     (PyObject *)d, level->block);
        return -1;
    }
    return sw_capi_ssize(level->block, d, "SW_DType_LevelBlock", "level block");
}

/* ---- N-D blocks (version 5) -------------------------------------------------- */

/* Extent j of a block that is not Whole (borrowed): an int block is its
 * own only extent. */
static PyObject *
sw_capi_block_extent(PyObject *block, Py_ssize_t j)
{
    return PyTuple_CheckExact(block) ? PyTuple_GET_ITEM(block, j) : block;
}

static Py_ssize_t
sw_capi_level_block_shape(PyObject *op, Py_ssize_t i, Py_ssize_t *shape,
                          Py_ssize_t n)
{
    static const char func[] = "SW_DType_LevelBlockShape";
    sw_descriptor *d;
    sw_level *level = sw_capi_level(op, i, func, &d);
    sw_state *st;
    PyObject *block;
    Py_ssize_t ndim, j, stored;

    if (level == NULL) {
        return -1;
    }
    if (n < 0 || (n > 0 && shape == NULL)) {
        PyErr_Format(PyExc_SystemError,
                     "%s: got %s (shape must hold n >= 0 entries)", func,
                     n < 0 ? "a negative n" : "a NULL shape with n > 0");
        return -1;
    }
    st = sw_state_of_type(Py_TYPE(d));
    if (sw_state_check(st) < 0) {
        return -1;
    }
    block = level->block;   /* the level's, kept by the registered descriptor */
    if (block == st->whole) {
        return 0;
    }
    ndim = PyTuple_CheckExact(block) ? PyTuple_GET_SIZE(block) : 1;
    stored = ndim < n ? ndim : n;
    /* Every extent to store is checked first: shape changes only on
     * success. */
    for (j = 0; j < stored; j++) {
        if (sw_capi_ssize(sw_capi_block_extent(block, j), d, func,
                          "level block extent") < 0) {
            return -1;
        }
    }
    for (j = 0; j < stored; j++) {
        /* checked above: an exact int that fits */
        shape[j] = PyLong_AsSsize_t(sw_capi_block_extent(block, j));
    }
    return ndim;
}

/* ---- DLPack (version 2) ---------------------------------------------------- */

/* The fixed DLPack types of the built-in simple dtypes, by their slot in the
 * table (DLPack 1.x DLDataTypeCode values; lanes is always 1).  The same
 * mapping as stride_weave.interop's for the built-ins; extension mappings
 * declared from Python are not consulted. */
static const struct {
    size_t slot;     /* offsetof the PyObject * field in SW_DTypes_CAPI */
    int code;
    int bits;
} sw_capi_dlpack[] = {
    {offsetof(SW_DTypes_CAPI, Bool), 6, 8},
    {offsetof(SW_DTypes_CAPI, Int8), 0, 8},
    {offsetof(SW_DTypes_CAPI, Int32), 0, 32},
    {offsetof(SW_DTypes_CAPI, Float32), 2, 32},
    {offsetof(SW_DTypes_CAPI, Float64), 2, 64},
    {offsetof(SW_DTypes_CAPI, E8M0), 14, 8},
    {offsetof(SW_DTypes_CAPI, E5M2), 12, 8},
    {offsetof(SW_DTypes_CAPI, E4M3), 10, 8},
    {offsetof(SW_DTypes_CAPI, E3M2), 16, 6},
    {offsetof(SW_DTypes_CAPI, E2M3), 15, 6},
    {offsetof(SW_DTypes_CAPI, E2M1), 17, 4},
};
#define SW_CAPI_DLPACK_COUNT \
    ((int)(sizeof(sw_capi_dlpack) / sizeof(sw_capi_dlpack[0])))

static PyObject *
sw_capi_dlpack_builtin(const SW_DTypes_CAPI *api, int i)
{
    return *(PyObject *const *)((const char *)api + sw_capi_dlpack[i].slot);
}

static PyObject *
sw_capi_from_dlpack(int code, int bits, int lanes)
{
    sw_state *st = sw_state_current();
    int i;

    if (st == NULL || sw_state_check(st) < 0) {
        return NULL;
    }
    if (lanes == 1) {
        for (i = 0; i < SW_CAPI_DLPACK_COUNT; i++) {
            if (sw_capi_dlpack[i].code == code && sw_capi_dlpack[i].bits == bits) {
                return Py_NewRef(sw_capi_dlpack_builtin(st->capi, i));
            }
        }
    }
    PyErr_Format(PyExc_LookupError,
                 "SW_DType_FromDLPack: no built-in dtype has the DLPack type "
                 "(code %d, bits %d, lanes %d)", code, bits, lanes);
    return NULL;
}

static int
sw_capi_to_dlpack(PyObject *op, int *code, int *bits, int *lanes)
{
    sw_descriptor *d = sw_capi_arg(op, SW_SIMPLE_KIND, "SW_DType_ToDLPack",
                                   "a registered SimpleDType");
    sw_state *st;
    int i;

    if (d == NULL) {
        return -1;
    }
    if (code == NULL || bits == NULL || lanes == NULL) {
        PyErr_SetString(PyExc_SystemError,
                        "SW_DType_ToDLPack: got a NULL output pointer");
        return -1;
    }
    st = sw_state_of_type(Py_TYPE(d));
    if (sw_state_check(st) < 0) {
        return -1;
    }
    for (i = 0; i < SW_CAPI_DLPACK_COUNT; i++) {
        if (sw_capi_dlpack_builtin(st->capi, i) == op) {
            *code = sw_capi_dlpack[i].code;
            *bits = sw_capi_dlpack[i].bits;
            *lanes = 1;
            return 0;
        }
    }
    PyErr_Format(PyExc_LookupError,
                 "SW_DType_ToDLPack: %R is not a built-in simple dtype; the C "
                 "API knows the DLPack types of the built-ins only (see "
                 "stride_weave.interop for extension mappings)", op);
    return -1;
}

/* ---- kinds, casting and promotion (version 3) ---------------------------- */

_Static_assert(SW_ISDTYPE_BOOL == SW_KINDS_BOOL
               && SW_ISDTYPE_SIGNED_INTEGER == SW_KINDS_SIGNED
               && SW_ISDTYPE_UNSIGNED_INTEGER == SW_KINDS_UNSIGNED
               && SW_ISDTYPE_INTEGRAL == SW_KINDS_INTEGRAL
               && SW_ISDTYPE_REAL_FLOATING == SW_KINDS_REAL
               && SW_ISDTYPE_COMPLEX_FLOATING == SW_KINDS_COMPLEX
               && SW_ISDTYPE_NUMERIC == SW_KINDS_NUMERIC,
               "the C API's kind bits are relations.h's");
_Static_assert(SW_CASTING_NO == 0 && SW_CASTING_EQUIV == 1
               && SW_CASTING_SAFE == 2 && SW_CASTING_SAME_KIND == 3
               && SW_CASTING_UNSAFE == 4 && SW_CASTING_COUNT == 5,
               "the C API's casting levels are relations.h's");

static int
sw_capi_isdtype(PyObject *op, unsigned int kinds)
{
    sw_descriptor *d = sw_capi_arg(op, SW_ANY_KIND, "SW_DType_IsDType",
                                   "a registered descriptor");
    sw_state *st;

    if (d == NULL) {
        return -1;
    }
    if (kinds == 0 || (kinds & ~(unsigned int)SW_KINDS_ALL) != 0) {
        PyErr_Format(PyExc_ValueError,
                     "SW_DType_IsDType: kinds must be SW_ISDTYPE_* bits, got "
                     "0x%x", kinds);
        return -1;
    }
    st = sw_state_of_type(Py_TYPE(d));
    if (sw_state_check(st) < 0) {
        return -1;
    }
    return (sw_relations_read(st, d, kinds).kinds & kinds) != 0;
}

static int
sw_capi_can_cast(PyObject *from, PyObject *to, int casting)
{
    sw_descriptor *f = sw_capi_arg(from, SW_ANY_KIND, "SW_DType_CanCast",
                                   "a registered descriptor as from");
    sw_descriptor *t = f ? sw_capi_arg(to, SW_ANY_KIND, "SW_DType_CanCast",
                                       "a registered descriptor as to") : NULL;
    sw_state *st;

    if (t == NULL) {
        return -1;
    }
    if (casting < 0 || casting >= SW_CASTING_COUNT) {
        PyErr_Format(PyExc_ValueError,
                     "SW_DType_CanCast: casting must be one of SW_CASTING_NO "
                     "(0) to SW_CASTING_UNSAFE (4), got %d", casting);
        return -1;
    }
    st = sw_state_of_type(Py_TYPE(f));
    if (sw_state_check(st) < 0) {
        return -1;
    }
    return sw_casting_can(st, f, t, casting, SW_READ_RECORD);
}

static PyObject *
sw_capi_promote_types(PyObject *a, PyObject *b)
{
    const char *func = "SW_DType_PromoteTypes";
    sw_descriptor *da = sw_capi_arg(a, SW_ANY_KIND, func, "a registered descriptor");
    sw_state *st;
    sw_lattice *lat;
    PyObject *result;

    if (da == NULL
        || sw_capi_arg(b, SW_ANY_KIND, func, "a registered descriptor") == NULL) {
        return NULL;
    }
    st = sw_state_of_type(Py_TYPE(da));
    lat = st != NULL ? sw_promotion_default(st) : NULL;
    if (lat == NULL) {
        return NULL;
    }
    result = sw_promotion_promote(st, lat, a, b, func);
    Py_DECREF(lat);
    return result;
}

/* ---- errors (version 4) ------------------------------------------------------ */

/* The join of a and b in the default lattice without raising when there
 * is none: 1 with a new reference in *result, 0 with NULL and no exception
 * (no join), -1 with NULL and an exception (an argument). */
static int
sw_capi_try_promote_types(PyObject *a, PyObject *b, PyObject **result)
{
    const char *func = "SW_DType_TryPromoteTypes";
    sw_descriptor *da, *db;
    sw_state *st;
    sw_lattice *lat;
    PyObject *join;

    if (result == NULL) {
        PyErr_Format(PyExc_SystemError, "%s: got a NULL result pointer", func);
        return -1;
    }
    *result = NULL;
    da = sw_capi_arg(a, SW_ANY_KIND, func, "a registered descriptor");
    if (da == NULL
        || sw_capi_arg(b, SW_ANY_KIND, func, "a registered descriptor") == NULL) {
        return -1;
    }
    st = sw_state_of_type(Py_TYPE(da));
    if (sw_state_check(st) < 0) {
        return -1;
    }
    /* Both of this graph: relation ids index only their own graph's
     * lattices. */
    db = sw_relations_arg(st, b, func, "b");
    lat = db != NULL ? sw_promotion_default(st) : NULL;
    if (lat == NULL) {
        return -1;
    }
    join = sw_lattice_join(lat, da, db);    /* borrowed: lat holds it */
    *result = Py_XNewRef(join);
    Py_DECREF(lat);
    return join != NULL;
}

/* ---- the table ------------------------------------------------------------- */

/* Point the table at the built-in descriptors, borrowed: DType's namespace
 * and the registry keep them. */
static int
sw_capi_fill_builtins(sw_state *st, SW_DTypes_CAPI *api)
{
    struct { const char *name; PyObject **slot; } builtins[] = {
        {"Any", &api->Any}, {"Floating", &api->Floating},
        {"Integer", &api->Integer}, {"Bool", &api->Bool},
        {"Int32", &api->Int32}, {"Int8", &api->Int8},
        {"Float32", &api->Float32}, {"Float64", &api->Float64},
        {"E8M0", &api->E8M0}, {"E5M2", &api->E5M2},
        {"E4M3", &api->E4M3}, {"E3M2", &api->E3M2},
        {"E2M3", &api->E2M3}, {"E2M1", &api->E2M1},
        {"MXFP8_E4M3", &api->MXFP8_E4M3}, {"MXFP8_E5M2", &api->MXFP8_E5M2},
        {"MXFP6_E3M2", &api->MXFP6_E3M2}, {"MXFP6_E2M3", &api->MXFP6_E2M3},
        {"MXFP4", &api->MXFP4}, {"MXINT8", &api->MXINT8},
        {"NVFP4", &api->NVFP4},
        {NULL, NULL},
    };
    int i;

    for (i = 0; builtins[i].name != NULL; i++) {
        PyObject *obj = NULL;
        int found = PyDict_GetItemStringRef(st->dtype_type->tp_dict,
                                            builtins[i].name, &obj);
        if (found <= 0) {
            if (found == 0) {
                PyErr_Format(PyExc_SystemError,
                             "C API: the built-in DType.%s is not installed",
                             builtins[i].name);
            }
            return -1;
        }
        *builtins[i].slot = obj;
        Py_DECREF(obj);   /* the registry keeps it for good */
    }
    return 0;
}

int
sw_capi_create(PyObject *module, sw_state *st)
{
    SW_DTypes_CAPI *api;
    PyObject *capsule;

    api = PyMem_Calloc(1, sizeof(SW_DTypes_CAPI));
    if (api == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    st->capi = api;   /* owned by the state from here on (sw_capi_free) */
    api->api_version = SW_DTYPES_API_VERSION;
    api->struct_size = sizeof(SW_DTypes_CAPI);

    api->DTypeMetaType = st->meta_type;
    api->DTypeType = st->dtype_type;
    api->DTypeCategoryType = st->kind_types[SW_KIND_CATEGORY];
    api->SimpleDTypeType = st->kind_types[SW_KIND_SIMPLE];
    api->CompoundDTypeType = st->kind_types[SW_KIND_COMPOUND];
    api->BlockScaledDTypeType = st->kind_types[SW_KIND_BLOCK_SCALED];
    api->RepresentationRuleType = st->rule_type;
    api->LevelExtentType = st->level_extent_type;
    api->LevelType = st->level_type;
    api->WholeExtentType = st->whole_type;
    api->SymbolicBitsType = st->symbolic_type;
    api->Whole = st->whole;

    if (sw_capi_fill_builtins(st, api) < 0) {
        return -1;
    }

    api->Kind = sw_capi_kind;
    api->FromName = sw_capi_from_name;
    api->FromNameObject = sw_capi_from_name_object;
    api->Name = sw_capi_name;
    api->NameUTF8 = sw_capi_name_utf8;
    api->Bits = sw_capi_bits;
    api->Supertype = sw_capi_supertype;
    api->IsSubtype = sw_capi_is_subtype;
    api->NumPlanes = sw_capi_num_planes;
    api->Plane = sw_capi_plane;
    api->Element = sw_capi_element;
    api->NumLevels = sw_capi_num_levels;
    api->LevelScale = sw_capi_level_scale;
    api->LevelBlock = sw_capi_level_block;
    /* version 2 */
    api->FromDLPack = sw_capi_from_dlpack;
    api->ToDLPack = sw_capi_to_dlpack;
    /* version 3 */
    api->IsDType = sw_capi_isdtype;
    api->CanCast = sw_capi_can_cast;
    api->PromoteTypes = sw_capi_promote_types;
    /* version 4 */
    api->PromotionError = st->promotion_error;
    api->UnknownNameError = (PyObject *)st->unknown_name_type;
    api->TryPromoteTypes = sw_capi_try_promote_types;
    /* version 5 */
    api->LevelBlockShape = sw_capi_level_block_shape;

    /* No destructor: the table is the state's, not the capsule's, so a
     * consumer's pointer stays valid even if _C_API is deleted. */
    capsule = PyCapsule_New(api, SW_DTYPES_CAPSULE_NAME, NULL);
    if (capsule == NULL) {
        return -1;
    }
    if (PyModule_AddObjectRef(module, SW_DTYPES_CAPSULE_ATTR, capsule) < 0) {
        Py_DECREF(capsule);
        return -1;
    }
    Py_DECREF(capsule);
    return 0;
}

void
sw_capi_free(sw_state *st)
{
    PyMem_Free(st->capi);
    st->capi = NULL;
}
