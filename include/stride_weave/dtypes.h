/* stride_weave/dtypes.h: the C API of stride_weave's dtype descriptors.
 *
 * For C extensions that check descriptors at C speed: is this object a
 * registered descriptor, of which kind, how many bits, is it a subtype of
 * Floating, is it exactly Float32.  Reference: docs/c-api.md.
 *
 * Use, in the style of CPython's datetime.h:
 *
 *     #include <stride_weave/dtypes.h>     // include dir: stride_weave.get_include()
 *
 *     // in the module's exec function (or PyInit):
 *     if (SW_DTypes_Import() < 0) {
 *         return -1;                        // ImportError is set
 *     }
 *     ...
 *     if (SW_DType_Kind(obj) == SW_DTYPE_KIND_SIMPLE) {
 *         Py_ssize_t bits = SW_DType_Bits(obj);
 *     }
 *     if (obj == SW_DTypesAPI->Float32) { ... }
 *
 * The API is a table of pointers (SW_DTypes_CAPI) published by the
 * extension module stride_weave._dtypes as the capsule
 * "stride_weave._dtypes._C_API".  The table is versioned and only ever
 * grows at its end: a consumer compiled against this header works with
 * every later build of stride_weave, and fails to import, cleanly, with an
 * ImportError against an earlier build that lacks what the header needs.
 *
 * Conventions (as in CPython's C API):
 * - "new reference": the caller owns the result and must Py_DECREF it;
 *   "borrowed": the caller must not.  Registered descriptors are never
 *   unregistered, so every borrowed pointer below stays valid for the life
 *   of the interpreter.
 * - Errors: functions returning a pointer return NULL, functions returning
 *   a number return -1, with an exception set.  SW_DType_Kind never fails;
 *   SW_DType_TryPromoteTypes reports "no join" as 0 without an exception.
 *   stride_weave's own exception types are in the table (PromotionError,
 *   UnknownNameError, version 4), for PyErr_ExceptionMatches.
 * - A descriptor argument of the wrong kind (the bits of a category, say)
 *   is a TypeError naming the function and what was given; an unregistered
 *   descriptor object (still under construction, or rejected) is a
 *   ValueError; an index out of range is an IndexError; NULL is a
 *   SystemError.
 * - Every function needs the GIL (an attached thread state), like the rest
 *   of the C API.
 *
 * Interpreters: each interpreter has its own descriptor graph and so its
 * own table; SW_DTypesAPI below is one static pointer per translation
 * unit.  A module that is imported into several interpreters keeps the
 * table in its module state instead: SW_DTypes_ImportInto(&state->api).
 */
#ifndef STRIDE_WEAVE_DTYPES_H
#define STRIDE_WEAVE_DTYPES_H

#include <Python.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The module that publishes the table, its attribute, and the capsule name. */
#define SW_DTYPES_MODULE_NAME "stride_weave._dtypes"
#define SW_DTYPES_CAPSULE_ATTR "_C_API"
#define SW_DTYPES_CAPSULE_NAME "stride_weave._dtypes._C_API"

/* The table version this header describes.  Each release that appends
 * fields increments it; fields are never removed, reordered or retyped. */
#define SW_DTYPES_API_VERSION 5

/* What SW_DType_Kind returns. */
#define SW_DTYPE_KIND_NONE 0            /* not a registered descriptor */
#define SW_DTYPE_KIND_CATEGORY 1        /* a DTypeCategory */
#define SW_DTYPE_KIND_SIMPLE 2          /* a SimpleDType */
#define SW_DTYPE_KIND_COMPOUND 3        /* a CompoundDType that is not block-scaled */
#define SW_DTYPE_KIND_BLOCK_SCALED 4    /* a BlockScaledDType (also a CompoundDType) */

/* Kinds for SW_DType_IsDType (version 3), the Array API's kind names as
 * bits: pass one or several ORed together (any may match). */
#define SW_ISDTYPE_BOOL 0x01                /* 'bool' */
#define SW_ISDTYPE_SIGNED_INTEGER 0x02      /* 'signed integer' */
#define SW_ISDTYPE_UNSIGNED_INTEGER 0x04    /* 'unsigned integer' */
#define SW_ISDTYPE_INTEGRAL 0x08            /* 'integral' */
#define SW_ISDTYPE_REAL_FLOATING 0x10       /* 'real floating' */
#define SW_ISDTYPE_COMPLEX_FLOATING 0x20    /* 'complex floating' */
#define SW_ISDTYPE_NUMERIC 0x40             /* 'numeric' */

/* Casting levels for SW_DType_CanCast (version 3), numpy's order. */
#define SW_CASTING_NO 0
#define SW_CASTING_EQUIV 1
#define SW_CASTING_SAFE 2
#define SW_CASTING_SAME_KIND 3
#define SW_CASTING_UNSAFE 4

/* What SW_DType_LevelBlock returns for a level whose block is Whole (one
 * scale over the entire level below), and SW_DType_LevelBlockShape its
 * number of dimensions.  Integer blocks are always > 0. */
#define SW_DTYPE_BLOCK_WHOLE 0

typedef struct SW_DTypes_CAPI {
    /* ---- version 1 ------------------------------------------------------ */

    /* The version and sizeof(SW_DTypes_CAPI) of the build that made this
     * table; both only grow. */
    unsigned int api_version;
    size_t struct_size;

    /* The classes, for PyObject_TypeCheck and exact-type checks (borrowed). */
    PyTypeObject *DTypeMetaType;        /* DTypeMeta, the metaclass */
    PyTypeObject *DTypeType;            /* DType */
    PyTypeObject *DTypeCategoryType;    /* DTypeCategory */
    PyTypeObject *SimpleDTypeType;      /* SimpleDType */
    PyTypeObject *CompoundDTypeType;    /* CompoundDType */
    PyTypeObject *BlockScaledDTypeType; /* BlockScaledDType */
    PyTypeObject *RepresentationRuleType;   /* RepresentationRule */
    PyTypeObject *LevelExtentType;      /* LevelExtent */
    PyTypeObject *LevelType;            /* Level */
    PyTypeObject *WholeExtentType;      /* WholeExtent, the type of Whole */
    PyTypeObject *SymbolicBitsType;     /* SymbolicBits */
    PyObject *Whole;                    /* the Whole singleton */

    /* The built-in descriptors (borrowed): DType.Any is Any, and so on.
     * A registered descriptor is one object, so `op == api->Float32` is
     * the complete test for "exactly Float32". */
    PyObject *Any;
    PyObject *Floating;
    PyObject *Integer;
    PyObject *Bool;
    PyObject *Int32;
    PyObject *Int8;
    PyObject *Float32;
    PyObject *Float64;
    PyObject *E8M0;
    PyObject *E5M2;
    PyObject *E4M3;
    PyObject *E3M2;
    PyObject *E2M3;
    PyObject *E2M1;

    /* SW_DTYPE_KIND_* of op: SW_DTYPE_KIND_NONE unless op is a registered
     * descriptor (NULL, other objects, descriptor classes and descriptors
     * still under construction or rejected).  Never fails, never sets an
     * exception, runs no Python code. */
    int (*Kind)(PyObject *op);

    /* The descriptor registered under name (UTF-8): a new reference.
     * stride_weave.dtypes.UnknownNameError (a LookupError; the table's
     * UnknownNameError from version 4) when no descriptor has that name;
     * UnicodeDecodeError when name is not UTF-8.  Looks in the current
     * interpreter's graph. */
    PyObject *(*FromName)(const char *name);

    /* The same for a Python str (or str subclass): a new reference.
     * TypeError when name is not a str, UnknownNameError when unknown. */
    PyObject *(*FromNameObject)(PyObject *name);

    /* The registered name of any registered descriptor: a new reference to
     * an exact str. */
    PyObject *(*Name)(PyObject *dtype);

    /* The same as UTF-8: borrowed from the descriptor (valid for the life
     * of the interpreter).  UnicodeEncodeError for a name that has no UTF-8
     * form (a lone surrogate). */
    const char *(*NameUTF8)(PyObject *dtype);

    /* The width of a simple dtype in bits (> 0).  TypeError unless dtype
     * is a SimpleDType; OverflowError if the width does not fit. */
    Py_ssize_t (*Bits)(PyObject *dtype);

    /* The immediately enclosing category of any registered descriptor: a
     * new reference, to Py_None for a root category. */
    PyObject *(*Supertype)(PyObject *dtype);

    /* 1 if dtype is other or reaches other through its category chain,
     * else 0 (DType.is_subtype_of).  Both must be registered descriptors. */
    int (*IsSubtype)(PyObject *dtype, PyObject *other);

    /* The number of planes of a compound dtype (block-scaled included),
     * len(dtype.simple_types).  TypeError for any other kind. */
    Py_ssize_t (*NumPlanes)(PyObject *dtype);

    /* Plane i (0 <= i < NumPlanes) of a compound dtype, a SimpleDType: a
     * new reference.  IndexError when i is out of range (negative too). */
    PyObject *(*Plane)(PyObject *dtype, Py_ssize_t i);

    /* The element SimpleDType of a block-scaled dtype: a new reference.
     * TypeError for any other kind. */
    PyObject *(*Element)(PyObject *dtype);

    /* The number of scale levels of a block-scaled dtype, len(dtype.levels). */
    Py_ssize_t (*NumLevels)(PyObject *dtype);

    /* The scale SimpleDType of level i (innermost first) of a block-scaled
     * dtype: a new reference.  IndexError when i is out of range. */
    PyObject *(*LevelScale)(PyObject *dtype, Py_ssize_t i);

    /* The block of level i of a block-scaled dtype: how many coordinates of
     * the level below share one scale (> 0), or SW_DTYPE_BLOCK_WHOLE (0)
     * when the block is Whole.  OverflowError if it does not fit;
     * ValueError for an N-D block (16x16), which LevelBlockShape
     * (version 5) reads. */
    Py_ssize_t (*LevelBlock)(PyObject *dtype, Py_ssize_t i);

    /* The built-in block-scaled descriptors (borrowed): DType.MXFP4, ... */
    PyObject *MXFP8_E4M3;
    PyObject *MXFP8_E5M2;
    PyObject *MXFP6_E3M2;
    PyObject *MXFP6_E2M3;
    PyObject *MXFP4;
    PyObject *MXINT8;
    PyObject *NVFP4;

    /* ---- version 2 ------------------------------------------------------ */

    /* DLPack: the DLDataType (code, bits, lanes) of the DLPack 1.x header
     * (code: kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBool 6, kDLFloat8_e4m3fn
     * 10, kDLFloat8_e5m2 12, kDLFloat8_e8m0fnu 14, kDLFloat6_e2m3fn 15,
     * kDLFloat6_e3m2fn 16, kDLFloat4_e2m1fn 17).  These two see the fixed
     * mapping of the built-in simple dtypes only:
     *   Bool (6, 8, 1)   Int8 (0, 8, 1)   Int32 (0, 32, 1)
     *   Float32 (2, 32, 1)   Float64 (2, 64, 1)   E8M0 (14, 8, 1)
     *   E5M2 (12, 8, 1)   E4M3 (10, 8, 1)   E3M2 (16, 6, 1)
     *   E2M3 (15, 6, 1)   E2M1 (17, 4, 1)
     * Mappings that Python code declares for extension dtypes
     * (stride_weave.interop.register_mapping) are not visible here: look
     * those up through stride_weave.interop. */

    /* The built-in simple dtype whose DLPack type is (code, bits, lanes):
     * a new reference.  LookupError when no built-in has that type. */
    PyObject *(*FromDLPack)(int code, int bits, int lanes);

    /* The DLPack type of a built-in simple dtype, stored in *code, *bits
     * and *lanes: 0 on success.  -1 with TypeError unless dtype is a
     * registered SimpleDType, LookupError for a simple dtype that is not a
     * built-in (the outputs are then left unchanged), SystemError for a
     * NULL output pointer. */
    int (*ToDLPack)(PyObject *dtype, int *code, int *bits, int *lanes);

    /* ---- version 3 ------------------------------------------------------ */

    /* Kinds, casting and promotion, as stride_weave.dtypes.isdtype,
     * can_cast and promote_types (docs/relations.md).  None of them runs
     * Python code except to raise. */

    /* 1 if dtype is of one of the kinds in the mask `kinds` (SW_ISDTYPE_*
     * ORed together), else 0; -1 with TypeError unless dtype is a
     * registered descriptor, ValueError for a mask with no known bit. */
    int (*IsDType)(PyObject *dtype, unsigned int kinds);

    /* 1 if values of `from` may be cast to `to` at level `casting`
     * (SW_CASTING_*), else 0; -1 with TypeError unless both are
     * registered descriptors, ValueError for an unknown level. */
    int (*CanCast)(PyObject *from, PyObject *to, int casting);

    /* The join of a and b in the default promotion lattice: a new
     * reference.  NULL with stride_weave.dtypes.PromotionError (a
     * TypeError; the table's PromotionError from version 4) when they have
     * none, TypeError unless both are registered descriptors.
     * TryPromoteTypes (version 4) tells "no join" apart without raising. */
    PyObject *(*PromoteTypes)(PyObject *a, PyObject *b);

    /* ---- version 4 ------------------------------------------------------ */

    /* The exception types of stride_weave that a C caller tells apart from
     * the built-in ones (borrowed, valid for the life of the interpreter):
     * test the error with PyErr_ExceptionMatches(api->PromotionError). */
    PyObject *PromotionError;       /* stride_weave.dtypes.PromotionError, a
                                       TypeError: two dtypes have no join
                                       (PromoteTypes) */
    PyObject *UnknownNameError;     /* stride_weave.dtypes.UnknownNameError,
                                       a LookupError: no dtype has the name
                                       (FromName, FromNameObject) */

    /* The join of a and b in the default promotion lattice, telling "no
     * join" apart from an error without raising: 1 with *result a new
     * reference to the join; 0 with *result NULL and no exception set when
     * a and b have none; -1 with *result NULL and an exception (TypeError
     * unless both are registered descriptors, SystemError for a NULL
     * argument). */
    int (*TryPromoteTypes)(PyObject *a, PyObject *b, PyObject **result);

    /* ---- version 5 ------------------------------------------------------ */

    /* The block of level i of a block-scaled dtype as a shape: returns its
     * number of dimensions, 1 for an int block, 2 or more for an N-D block
     * (16x16: 2; only level 0 may have one), 0 for Whole, and stores its
     * first min(ndim, n) extents (each > 0) in shape[0], shape[1], ...;
     * call it with n == 0 (shape may then be NULL) to learn ndim.  -1 with
     * IndexError when i is out of range, OverflowError when an extent to
     * store does not fit (shape is then left unchanged), SystemError for a
     * negative n or a NULL shape with n > 0. */
    Py_ssize_t (*LevelBlockShape)(PyObject *dtype, Py_ssize_t i,
                                  Py_ssize_t *shape, Py_ssize_t n);

    /* ---- version 6 appends here ----------------------------------------- */
} SW_DTypes_CAPI;

#ifndef SW_DTYPES_IMPL    /* everything below is for consumers */

/* Fetch the table of the current interpreter into *api: 0 on success, -1
 * with ImportError set when stride_weave cannot be imported or its build
 * is older than this header (api_version < SW_DTYPES_API_VERSION). */
static inline int
SW_DTypes_ImportInto(const SW_DTypes_CAPI **api)
{
    PyObject *module, *capsule;
    const SW_DTypes_CAPI *table;

    module = PyImport_ImportModule(SW_DTYPES_MODULE_NAME);
    if (module == NULL) {
        return -1;
    }
    capsule = PyObject_GetAttrString(module, SW_DTYPES_CAPSULE_ATTR);
    Py_DECREF(module);
    if (capsule == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
            return -1;
        }
        PyErr_Clear();
        PyErr_SetString(PyExc_ImportError,
                        SW_DTYPES_MODULE_NAME " has no C API ("
                        SW_DTYPES_CAPSULE_ATTR "): this stride_weave build is "
                        "too old for this extension");
        return -1;
    }
    table = (const SW_DTypes_CAPI *)PyCapsule_GetPointer(
        capsule, SW_DTYPES_CAPSULE_NAME);
    Py_DECREF(capsule);
    if (table == NULL) {
        PyErr_Clear();
        PyErr_SetString(PyExc_ImportError,
                        SW_DTYPES_MODULE_NAME "." SW_DTYPES_CAPSULE_ATTR
                        " is not a capsule named \"" SW_DTYPES_CAPSULE_NAME
                        "\"");
        return -1;
    }
    if (table->api_version < SW_DTYPES_API_VERSION
        || table->struct_size < sizeof(SW_DTypes_CAPI)) {
        PyErr_Format(PyExc_ImportError,
                     "this extension needs the stride_weave C API version "
                     "%u (a %zu-byte table); the installed stride_weave "
                     "provides version %u (%zu bytes): upgrade stride-weave",
                     (unsigned int)SW_DTYPES_API_VERSION,
                     sizeof(SW_DTypes_CAPI), table->api_version,
                     table->struct_size);
        return -1;
    }
    /* The table lives as long as the interpreter's descriptor graph, which
     * stride_weave keeps for the life of the interpreter. */
    *api = table;
    return 0;
}

/* The table used by the SW_DType_* macros; set by SW_DTypes_Import(). */
static const SW_DTypes_CAPI *SW_DTypesAPI = NULL;

/* SW_DTypes_ImportInto(&SW_DTypesAPI): call it once in module init. */
static inline int
SW_DTypes_Import(void)
{
    return SW_DTypes_ImportInto(&SW_DTypesAPI);
}

/* Shorthands through SW_DTypesAPI (set by SW_DTypes_Import()). */
#define SW_DType_Kind(op) (SW_DTypesAPI->Kind(op))
#define SW_DType_Check(op) (SW_DTypesAPI->Kind(op) != SW_DTYPE_KIND_NONE)
#define SW_DType_IsCategory(op) \
    (SW_DTypesAPI->Kind(op) == SW_DTYPE_KIND_CATEGORY)
#define SW_DType_IsSimple(op) (SW_DTypesAPI->Kind(op) == SW_DTYPE_KIND_SIMPLE)
/* Compound includes block-scaled, as DType.is_compound() does. */
#define SW_DType_IsCompound(op) (SW_DTypesAPI->Kind(op) >= SW_DTYPE_KIND_COMPOUND)
#define SW_DType_IsBlockScaled(op) \
    (SW_DTypesAPI->Kind(op) == SW_DTYPE_KIND_BLOCK_SCALED)
#define SW_DType_FromName(name) (SW_DTypesAPI->FromName(name))
#define SW_DType_FromNameObject(name) (SW_DTypesAPI->FromNameObject(name))
#define SW_DType_Name(op) (SW_DTypesAPI->Name(op))
#define SW_DType_NameUTF8(op) (SW_DTypesAPI->NameUTF8(op))
#define SW_DType_Bits(op) (SW_DTypesAPI->Bits(op))
#define SW_DType_Supertype(op) (SW_DTypesAPI->Supertype(op))
#define SW_DType_IsSubtype(op, other) (SW_DTypesAPI->IsSubtype((op), (other)))
#define SW_DType_NumPlanes(op) (SW_DTypesAPI->NumPlanes(op))
#define SW_DType_Plane(op, i) (SW_DTypesAPI->Plane((op), (i)))
#define SW_DType_Element(op) (SW_DTypesAPI->Element(op))
#define SW_DType_NumLevels(op) (SW_DTypesAPI->NumLevels(op))
#define SW_DType_LevelScale(op, i) (SW_DTypesAPI->LevelScale((op), (i)))
#define SW_DType_LevelBlock(op, i) (SW_DTypesAPI->LevelBlock((op), (i)))
#define SW_DType_LevelBlockShape(op, i, shape, n) \
    (SW_DTypesAPI->LevelBlockShape((op), (i), (shape), (n)))
#define SW_DType_FromDLPack(code, bits, lanes) \
    (SW_DTypesAPI->FromDLPack((code), (bits), (lanes)))
#define SW_DType_ToDLPack(op, code, bits, lanes) \
    (SW_DTypesAPI->ToDLPack((op), (code), (bits), (lanes)))
#define SW_DType_IsDType(op, kinds) (SW_DTypesAPI->IsDType((op), (kinds)))
#define SW_DType_CanCast(from, to, casting) \
    (SW_DTypesAPI->CanCast((from), (to), (casting)))
#define SW_DType_PromoteTypes(a, b) (SW_DTypesAPI->PromoteTypes((a), (b)))
#define SW_DType_TryPromoteTypes(a, b, result) \
    (SW_DTypesAPI->TryPromoteTypes((a), (b), (result)))

#endif /* !SW_DTYPES_IMPL */

#ifdef __cplusplus
}
#endif

#endif /* STRIDE_WEAVE_DTYPES_H */
