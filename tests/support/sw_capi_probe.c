/* sw_capi_probe.c: the test suite's consumer of the stride_weave C API.
 *
 * One thin Python wrapper per entry point of <stride_weave/dtypes.h>, so
 * tests/test_capi.py can call each with every kind of argument.  Each
 * wrapper also checks the error convention: a failing call (-1 or NULL)
 * must have set an exception and a succeeding one must not have; a breach
 * is reported as AssertionError.  The module attribute NULL is a sentinel:
 * passed as a descriptor (or name) argument, the wrapper passes NULL.
 *
 * The table is kept in module state (SW_DTypes_ImportInto), the way a
 * module that supports several interpreters keeps it; SW_DTypes_Import()
 * is called too, so the SW_DType_* shorthands are exercised as well.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stride_weave/dtypes.h>

typedef struct {
    const SW_DTypes_CAPI *api;
    PyObject *null;     /* the NULL sentinel */
} probe_state;

static probe_state *
get_state(PyObject *module)
{
    return (probe_state *)PyModule_GetState(module);
}

static PyObject *
arg(PyObject *module, PyObject *obj)
{
    return obj == get_state(module)->null ? NULL : obj;
}

/* The error convention, checked after every call. */
static int
check_convention(const char *func, int failed)
{
    if (failed && !PyErr_Occurred()) {
        PyErr_Format(PyExc_AssertionError,
                     "%s failed without setting an exception", func);
        return -1;
    }
    if (!failed && PyErr_Occurred()) {
        PyErr_Format(PyExc_AssertionError,
                     "%s succeeded with an exception set", func);
        return -1;
    }
    return failed ? -1 : 0;
}

static PyObject *
object_result(const char *func, PyObject *result)
{
    if (check_convention(func, result == NULL) < 0) {
        Py_XDECREF(result);
        return NULL;
    }
    return result;
}

static PyObject *
ssize_result(const char *func, Py_ssize_t result)
{
    if (check_convention(func, result == -1) < 0) {
        return NULL;
    }
    return PyLong_FromSsize_t(result);
}

/* ---- one wrapper per entry point ------------------------------------------ */

static PyObject *
probe_kind(PyObject *module, PyObject *obj)
{
    int kind = get_state(module)->api->Kind(arg(module, obj));

    if (PyErr_Occurred()) {
        return NULL;   /* Kind must never set an exception */
    }
    return PyLong_FromLong(kind);
}

/* bytes -> FromName (so tests can pass invalid UTF-8), str ->
 * FromNameObject, NULL sentinel -> FromName(NULL). */
static PyObject *
probe_from_name(PyObject *module, PyObject *name)
{
    const SW_DTypes_CAPI *api = get_state(module)->api;

    if (arg(module, name) == NULL) {
        return object_result("FromName", api->FromName(NULL));
    }
    if (!PyBytes_Check(name)) {
        PyErr_SetString(PyExc_TypeError, "probe: from_name takes bytes");
        return NULL;
    }
    return object_result("FromName", api->FromName(PyBytes_AS_STRING(name)));
}

static PyObject *
probe_from_name_object(PyObject *module, PyObject *name)
{
    return object_result("FromNameObject",
                         get_state(module)->api->FromNameObject(arg(module, name)));
}

static PyObject *
probe_name(PyObject *module, PyObject *obj)
{
    return object_result("Name", get_state(module)->api->Name(arg(module, obj)));
}

/* (bytes, address): the address shows the pointer is stable. */
static PyObject *
probe_name_utf8(PyObject *module, PyObject *obj)
{
    const char *name = get_state(module)->api->NameUTF8(arg(module, obj));

    if (check_convention("NameUTF8", name == NULL) < 0) {
        return NULL;
    }
    return Py_BuildValue("(yN)", name, PyLong_FromVoidPtr((void *)name));
}

static PyObject *
probe_bits(PyObject *module, PyObject *obj)
{
    return ssize_result("Bits", get_state(module)->api->Bits(arg(module, obj)));
}

static PyObject *
probe_supertype(PyObject *module, PyObject *obj)
{
    return object_result("Supertype",
                         get_state(module)->api->Supertype(arg(module, obj)));
}

static PyObject *
probe_is_subtype(PyObject *module, PyObject *args)
{
    PyObject *a, *b;
    int result;

    if (!PyArg_ParseTuple(args, "OO:is_subtype", &a, &b)) {
        return NULL;
    }
    result = get_state(module)->api->IsSubtype(arg(module, a), arg(module, b));
    if (check_convention("IsSubtype", result == -1) < 0) {
        return NULL;
    }
    if (result != 0 && result != 1) {
        PyErr_Format(PyExc_AssertionError, "IsSubtype returned %d", result);
        return NULL;
    }
    return PyBool_FromLong(result);
}

static PyObject *
probe_num_planes(PyObject *module, PyObject *obj)
{
    return ssize_result("NumPlanes",
                        get_state(module)->api->NumPlanes(arg(module, obj)));
}

static PyObject *
probe_plane(PyObject *module, PyObject *args)
{
    PyObject *obj;
    Py_ssize_t i;

    if (!PyArg_ParseTuple(args, "On:plane", &obj, &i)) {
        return NULL;
    }
    return object_result("Plane",
                         get_state(module)->api->Plane(arg(module, obj), i));
}

static PyObject *
probe_element(PyObject *module, PyObject *obj)
{
    return object_result("Element",
                         get_state(module)->api->Element(arg(module, obj)));
}

static PyObject *
probe_num_levels(PyObject *module, PyObject *obj)
{
    return ssize_result("NumLevels",
                        get_state(module)->api->NumLevels(arg(module, obj)));
}

static PyObject *
probe_level_scale(PyObject *module, PyObject *args)
{
    PyObject *obj;
    Py_ssize_t i;

    if (!PyArg_ParseTuple(args, "On:level_scale", &obj, &i)) {
        return NULL;
    }
    return object_result("LevelScale",
                         get_state(module)->api->LevelScale(arg(module, obj), i));
}

static PyObject *
probe_level_block(PyObject *module, PyObject *args)
{
    PyObject *obj;
    Py_ssize_t i;

    if (!PyArg_ParseTuple(args, "On:level_block", &obj, &i)) {
        return NULL;
    }
    return ssize_result("LevelBlock",
                        get_state(module)->api->LevelBlock(arg(module, obj), i));
}

/* (obj, i, n[, null_shape]) -> (ndim, shape[0..n)) through LevelBlockShape
 * (version 5), with room for n extents (at most 8), or a NULL shape.  The
 * extents start at -7: a failing call must leave them unchanged, and a
 * succeeding one must write exactly min(ndim, n) of them. */
static PyObject *
probe_level_block_shape(PyObject *module, PyObject *args)
{
    PyObject *obj, *out;
    Py_ssize_t i, n, ndim, j, shape[8];
    int null_shape = 0;

    if (!PyArg_ParseTuple(args, "Onn|p:level_block_shape", &obj, &i, &n,
                          &null_shape)) {
        return NULL;
    }
    if (n > 8) {
        PyErr_SetString(PyExc_ValueError, "level_block_shape: n is at most 8");
        return NULL;
    }
    for (j = 0; j < 8; j++) {
        shape[j] = -7;
    }
    ndim = SW_DType_LevelBlockShape(arg(module, obj), i, null_shape ? NULL : shape, n);
    if (check_convention("LevelBlockShape", ndim == -1) < 0) {
        for (j = 0; j < 8; j++) {
            if (shape[j] != -7) {
                PyErr_SetString(PyExc_AssertionError,
                                "LevelBlockShape failed but changed its output");
                break;
            }
        }
        return NULL;
    }
    for (j = 0; j < 8; j++) {
        if ((j < ndim && j < n) != (shape[j] != -7)) {
            PyErr_Format(PyExc_AssertionError,
                         "LevelBlockShape returned %zd for n %zd but wrote "
                         "shape[%zd] = %zd", ndim, n, j, shape[j]);
            return NULL;
        }
    }
    out = PyTuple_New(n < ndim ? n : ndim);
    for (j = 0; out != NULL && j < PyTuple_GET_SIZE(out); j++) {
        PyObject *extent = PyLong_FromSsize_t(shape[j]);
        if (extent == NULL) {
            Py_CLEAR(out);
            break;
        }
        PyTuple_SET_ITEM(out, j, extent);
    }
    return out == NULL ? NULL : Py_BuildValue("(nN)", ndim, out);
}

/* (code, bits, lanes) -> FromDLPack. */
static PyObject *
probe_from_dlpack(PyObject *module, PyObject *args)
{
    int code, bits, lanes;

    if (!PyArg_ParseTuple(args, "iii:from_dlpack", &code, &bits, &lanes)) {
        return NULL;
    }
    return object_result("FromDLPack",
                         get_state(module)->api->FromDLPack(code, bits, lanes));
}

/* obj -> (code, bits, lanes) through ToDLPack; with null_outputs true the
 * output pointers are NULL.  The outputs start at -7: a failing call must
 * leave them unchanged. */
static PyObject *
probe_to_dlpack(PyObject *module, PyObject *args)
{
    PyObject *obj;
    int null_outputs = 0, code = -7, bits = -7, lanes = -7, status;

    if (!PyArg_ParseTuple(args, "O|p:to_dlpack", &obj, &null_outputs)) {
        return NULL;
    }
    if (null_outputs) {
        status = get_state(module)->api->ToDLPack(arg(module, obj), NULL, NULL, NULL);
    }
    else {
        status = get_state(module)->api->ToDLPack(arg(module, obj), &code, &bits,
                                                  &lanes);
    }
    if (check_convention("ToDLPack", status == -1) < 0) {
        if (code != -7 || bits != -7 || lanes != -7) {
            PyErr_SetString(PyExc_AssertionError,
                            "ToDLPack failed but changed its outputs");
        }
        return NULL;
    }
    if (status != 0) {
        PyErr_Format(PyExc_AssertionError, "ToDLPack returned %d", status);
        return NULL;
    }
    return Py_BuildValue("(iii)", code, bits, lanes);
}

/* The same two through the shorthands: (FromDLPack(ToDLPack(obj)), triple). */
static PyObject *
probe_macro_dlpack(PyObject *module, PyObject *obj)
{
    int code, bits, lanes;

    (void)module;
    if (SW_DType_ToDLPack(obj, &code, &bits, &lanes) < 0) {
        return NULL;
    }
    return Py_BuildValue("(N(iii))", SW_DType_FromDLPack(code, bits, lanes),
                         code, bits, lanes);
}

/* int result of a version-3 entry point (-1 error, else 0 or 1). */
static PyObject *
flag_result(const char *func, int result)
{
    if (check_convention(func, result == -1) < 0) {
        return NULL;
    }
    if (result != 0 && result != 1) {
        PyErr_Format(PyExc_AssertionError, "%s returned %d", func, result);
        return NULL;
    }
    return PyBool_FromLong(result);
}

/* (dtype, kinds) -> IsDType. */
static PyObject *
probe_isdtype(PyObject *module, PyObject *args)
{
    PyObject *obj;
    unsigned int kinds;

    if (!PyArg_ParseTuple(args, "OI:isdtype", &obj, &kinds)) {
        return NULL;
    }
    return flag_result("IsDType", get_state(module)->api->IsDType(arg(module, obj),
                                                                   kinds));
}

/* (from, to, casting) -> CanCast. */
static PyObject *
probe_can_cast(PyObject *module, PyObject *args)
{
    PyObject *from, *to;
    int casting;

    if (!PyArg_ParseTuple(args, "OOi:can_cast", &from, &to, &casting)) {
        return NULL;
    }
    return flag_result("CanCast", get_state(module)->api->CanCast(
        arg(module, from), arg(module, to), casting));
}

/* (a, b) -> PromoteTypes. */
static PyObject *
probe_promote_types(PyObject *module, PyObject *args)
{
    PyObject *a, *b;

    if (!PyArg_ParseTuple(args, "OO:promote_types", &a, &b)) {
        return NULL;
    }
    return object_result("PromoteTypes", get_state(module)->api->PromoteTypes(
        arg(module, a), arg(module, b)));
}

/* (a, b) -> (status, join or None) of TryPromoteTypes, with the
 * convention checked: -1 with an exception, 0 and 1 without; *result a
 * new reference for 1 and NULL otherwise (never left unwritten).  A third
 * argument (any) passes a NULL result pointer. */
static char unwritten;

static PyObject *
probe_try_promote_types(PyObject *module, PyObject *args)
{
    PyObject *a, *b, *null_result = NULL, *join = (PyObject *)&unwritten;
    int status;

    if (!PyArg_ParseTuple(args, "OO|O:try_promote_types", &a, &b, &null_result)) {
        return NULL;
    }
    status = get_state(module)->api->TryPromoteTypes(
        arg(module, a), arg(module, b), null_result ? NULL : &join);
    if (null_result == NULL
        && (join == (PyObject *)&unwritten || (status == 1) != (join != NULL))) {
        if (status == 1 && join != (PyObject *)&unwritten) {
            Py_XDECREF(join);
        }
        PyErr_Format(PyExc_AssertionError,
                     "TryPromoteTypes returned %d with *result %s", status,
                     join == (PyObject *)&unwritten ? "unwritten"
                     : join ? "set" : "NULL");
        return NULL;
    }
    if (check_convention("TryPromoteTypes", status == -1) < 0) {
        Py_XDECREF(status == 1 ? join : NULL);
        return NULL;
    }
    if (status != 0 && status != 1) {
        PyErr_Format(PyExc_AssertionError, "TryPromoteTypes returned %d", status);
        return NULL;
    }
    return Py_BuildValue("(iN)", status, status == 1 ? join : Py_NewRef(Py_None));
}

/* The four through the shorthands, on (a, b): (IsDType(a, NUMERIC),
 * CanCast(a, b, SAFE), TryPromoteTypes(a, b)'s status, and the join
 * PromoteTypes(a, b) gives, or the table's PromotionError when that is
 * what it raised). */
static PyObject *
probe_macro_relations(PyObject *module, PyObject *args)
{
    PyObject *a, *b, *join, *tried = NULL;
    int numeric, safe, status;

    (void)module;
    if (!PyArg_ParseTuple(args, "OO:macro_relations", &a, &b)) {
        return NULL;
    }
    numeric = SW_DType_IsDType(a, SW_ISDTYPE_NUMERIC);
    safe = numeric < 0 ? -1 : SW_DType_CanCast(a, b, SW_CASTING_SAFE);
    status = safe < 0 ? -1 : SW_DType_TryPromoteTypes(a, b, &tried);
    if (status < 0) {
        return NULL;
    }
    Py_XDECREF(tried);
    join = SW_DType_PromoteTypes(a, b);
    if (join == NULL) {
        if (!PyErr_ExceptionMatches(SW_DTypesAPI->PromotionError)) {
            return NULL;
        }
        PyErr_Clear();      /* the one error expected: report its type */
        join = Py_NewRef(SW_DTypesAPI->PromotionError);
    }
    return Py_BuildValue("(NNiN)", PyBool_FromLong(numeric), PyBool_FromLong(safe),
                         status, join);
}

/* ---- the shorthand macros (through SW_DTypesAPI) ------------------------- */

/* (Kind, Check, IsCategory, IsSimple, IsCompound, IsBlockScaled) */
static PyObject *
probe_macro_kinds(PyObject *module, PyObject *obj)
{
    PyObject *op = arg(module, obj);

    return Py_BuildValue("(iNNNNN)", SW_DType_Kind(op),
                         PyBool_FromLong(SW_DType_Check(op)),
                         PyBool_FromLong(SW_DType_IsCategory(op)),
                         PyBool_FromLong(SW_DType_IsSimple(op)),
                         PyBool_FromLong(SW_DType_IsCompound(op)),
                         PyBool_FromLong(SW_DType_IsBlockScaled(op)));
}

/* Every shorthand on one simple dtype: (name, utf8, bits, supertype,
 * is_subtype(Floating), from_name(name), from_name_object(name)). */
static PyObject *
probe_macro_simple(PyObject *module, PyObject *obj)
{
    PyObject *name, *super, *byname, *byobject;
    const char *utf8;
    Py_ssize_t bits;
    int sub;

    (void)module;
    name = SW_DType_Name(obj);
    if (name == NULL) {
        return NULL;
    }
    utf8 = SW_DType_NameUTF8(obj);
    bits = SW_DType_Bits(obj);
    super = SW_DType_Supertype(obj);
    sub = SW_DType_IsSubtype(obj, SW_DTypesAPI->Floating);
    byname = utf8 ? SW_DType_FromName(utf8) : NULL;
    byobject = SW_DType_FromNameObject(name);
    if (utf8 == NULL || bits < 0 || super == NULL || sub < 0
        || byname == NULL || byobject == NULL) {
        Py_DECREF(name);
        Py_XDECREF(super);
        Py_XDECREF(byname);
        Py_XDECREF(byobject);
        return NULL;
    }
    return Py_BuildValue("(NynNNNN)", name, utf8, bits, super,
                         PyBool_FromLong(sub), byname, byobject);
}

/* (num_planes, planes, element, levels as ((scale, block), ...)) of a
 * block-scaled dtype through the shorthands. */
static PyObject *
probe_macro_block_scaled(PyObject *module, PyObject *obj)
{
    PyObject *planes = NULL, *levels = NULL, *element = NULL;
    Py_ssize_t i, n;

    (void)module;
    n = SW_DType_NumPlanes(obj);
    if (n < 0 || (planes = PyTuple_New(n)) == NULL) {
        goto error;
    }
    for (i = 0; i < n; i++) {
        PyObject *plane = SW_DType_Plane(obj, i);
        if (plane == NULL) {
            goto error;
        }
        PyTuple_SET_ITEM(planes, i, plane);
    }
    element = SW_DType_Element(obj);
    n = SW_DType_NumLevels(obj);
    if (element == NULL || n < 0 || (levels = PyTuple_New(n)) == NULL) {
        goto error;
    }
    for (i = 0; i < n; i++) {
        PyObject *scale = SW_DType_LevelScale(obj, i), *pair;
        Py_ssize_t block = SW_DType_LevelBlock(obj, i);
        if (scale == NULL || block < 0) {
            Py_XDECREF(scale);
            goto error;
        }
        pair = Py_BuildValue("(Nn)", scale, block);
        if (pair == NULL) {
            goto error;
        }
        PyTuple_SET_ITEM(levels, i, pair);
    }
    return Py_BuildValue("(nNNN)", PyTuple_GET_SIZE(planes), planes, element,
                         levels);

error:
    Py_XDECREF(planes);
    Py_XDECREF(element);
    Py_XDECREF(levels);
    return NULL;
}

/* ---- the table itself -------------------------------------------------------- */

static PyObject *
pointer_or_none(PyObject *obj)
{
    return Py_NewRef(obj ? obj : Py_None);
}

/* {name: object} for every borrowed object pointer of the table. */
static PyObject *
probe_table_objects(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    const SW_DTypes_CAPI *api = get_state(module)->api;
    struct { const char *name; PyObject *obj; } items[] = {
        {"DTypeMetaType", (PyObject *)api->DTypeMetaType},
        {"DTypeType", (PyObject *)api->DTypeType},
        {"DTypeCategoryType", (PyObject *)api->DTypeCategoryType},
        {"SimpleDTypeType", (PyObject *)api->SimpleDTypeType},
        {"CompoundDTypeType", (PyObject *)api->CompoundDTypeType},
        {"BlockScaledDTypeType", (PyObject *)api->BlockScaledDTypeType},
        {"RepresentationRuleType", (PyObject *)api->RepresentationRuleType},
        {"LevelExtentType", (PyObject *)api->LevelExtentType},
        {"LevelType", (PyObject *)api->LevelType},
        {"WholeExtentType", (PyObject *)api->WholeExtentType},
        {"SymbolicBitsType", (PyObject *)api->SymbolicBitsType},
        {"Whole", api->Whole},
        {"Any", api->Any}, {"Floating", api->Floating},
        {"Integer", api->Integer}, {"Bool", api->Bool},
        {"Int32", api->Int32}, {"Int8", api->Int8},
        {"Float32", api->Float32}, {"Float64", api->Float64},
        {"E8M0", api->E8M0}, {"E5M2", api->E5M2}, {"E4M3", api->E4M3},
        {"E3M2", api->E3M2}, {"E2M3", api->E2M3}, {"E2M1", api->E2M1},
        {"MXFP8_E4M3", api->MXFP8_E4M3}, {"MXFP8_E5M2", api->MXFP8_E5M2},
        {"MXFP6_E3M2", api->MXFP6_E3M2}, {"MXFP6_E2M3", api->MXFP6_E2M3},
        {"MXFP4", api->MXFP4}, {"MXINT8", api->MXINT8},
        {"NVFP4", api->NVFP4},
        {"PromotionError", api->PromotionError},
        {"UnknownNameError", api->UnknownNameError},
        {NULL, NULL},
    };
    PyObject *result = PyDict_New();
    int i;

    if (result == NULL) {
        return NULL;
    }
    for (i = 0; items[i].name != NULL; i++) {
        PyObject *value = pointer_or_none(items[i].obj);
        if (PyDict_SetItemString(result, items[i].name, value) < 0) {
            Py_DECREF(value);
            Py_DECREF(result);
            return NULL;
        }
        Py_DECREF(value);
    }
    return result;
}

/* (api_version, struct_size, sizeof in this header, SW_DTYPES_API_VERSION) */
static PyObject *
probe_version(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    const SW_DTypes_CAPI *api = get_state(module)->api;

    return Py_BuildValue("(Innn)", api->api_version, (Py_ssize_t)api->struct_size,
                         (Py_ssize_t)sizeof(SW_DTypes_CAPI),
                         (Py_ssize_t)SW_DTYPES_API_VERSION);
}

/* Addresses of the table in module state and behind SW_DTypesAPI. */
static PyObject *
probe_table_address(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    return Py_BuildValue("(NN)",
                         PyLong_FromVoidPtr((void *)get_state(module)->api),
                         PyLong_FromVoidPtr((void *)SW_DTypesAPI));
}

/* Run the import call again (against whatever stride_weave._dtypes._C_API
 * is now) and return the table's address; the module keeps its table. */
static PyObject *
probe_import_again(PyObject *Py_UNUSED(module), PyObject *Py_UNUSED(ignored))
{
    const SW_DTypes_CAPI *api = NULL;
    int status = SW_DTypes_ImportInto(&api);

    if (check_convention("SW_DTypes_ImportInto", status == -1) < 0) {
        return NULL;
    }
    if (status != 0 || api == NULL) {
        PyErr_Format(PyExc_AssertionError,
                     "SW_DTypes_ImportInto returned %d", status);
        return NULL;
    }
    return PyLong_FromVoidPtr((void *)api);
}

/* The constants of the header. */
static PyObject *
probe_constants(PyObject *Py_UNUSED(module), PyObject *Py_UNUSED(ignored))
{
    return Py_BuildValue(
        "{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:s,s:s,s:s,"
        "s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i}",
        "KIND_NONE", SW_DTYPE_KIND_NONE,
        "KIND_CATEGORY", SW_DTYPE_KIND_CATEGORY,
        "KIND_SIMPLE", SW_DTYPE_KIND_SIMPLE,
        "KIND_COMPOUND", SW_DTYPE_KIND_COMPOUND,
        "KIND_BLOCK_SCALED", SW_DTYPE_KIND_BLOCK_SCALED,
        "BLOCK_WHOLE", SW_DTYPE_BLOCK_WHOLE,
        "API_VERSION", SW_DTYPES_API_VERSION,
        "MODULE_NAME", SW_DTYPES_MODULE_NAME,
        "CAPSULE_ATTR", SW_DTYPES_CAPSULE_ATTR,
        "CAPSULE_NAME", SW_DTYPES_CAPSULE_NAME,
        "ISDTYPE_BOOL", SW_ISDTYPE_BOOL,
        "ISDTYPE_SIGNED_INTEGER", SW_ISDTYPE_SIGNED_INTEGER,
        "ISDTYPE_UNSIGNED_INTEGER", SW_ISDTYPE_UNSIGNED_INTEGER,
        "ISDTYPE_INTEGRAL", SW_ISDTYPE_INTEGRAL,
        "ISDTYPE_REAL_FLOATING", SW_ISDTYPE_REAL_FLOATING,
        "ISDTYPE_COMPLEX_FLOATING", SW_ISDTYPE_COMPLEX_FLOATING,
        "ISDTYPE_NUMERIC", SW_ISDTYPE_NUMERIC,
        "CASTING_NO", SW_CASTING_NO,
        "CASTING_EQUIV", SW_CASTING_EQUIV,
        "CASTING_SAFE", SW_CASTING_SAFE,
        "CASTING_SAME_KIND", SW_CASTING_SAME_KIND,
        "CASTING_UNSAFE", SW_CASTING_UNSAFE);
}

/* Call Kind n times on obj in C: the cost of the check alone. */
static PyObject *
probe_kind_loop(PyObject *module, PyObject *args)
{
    const SW_DTypes_CAPI *api = get_state(module)->api;
    PyObject *obj;
    Py_ssize_t n, i, total = 0;

    if (!PyArg_ParseTuple(args, "On:kind_loop", &obj, &n)) {
        return NULL;
    }
    for (i = 0; i < n; i++) {
        total += api->Kind(obj);
    }
    return PyLong_FromSsize_t(total);
}

static PyMethodDef probe_methods[] = {
    {"kind", probe_kind, METH_O, NULL},
    {"from_name", probe_from_name, METH_O, NULL},
    {"from_name_object", probe_from_name_object, METH_O, NULL},
    {"name", probe_name, METH_O, NULL},
    {"name_utf8", probe_name_utf8, METH_O, NULL},
    {"bits", probe_bits, METH_O, NULL},
    {"supertype", probe_supertype, METH_O, NULL},
    {"is_subtype", probe_is_subtype, METH_VARARGS, NULL},
    {"num_planes", probe_num_planes, METH_O, NULL},
    {"plane", probe_plane, METH_VARARGS, NULL},
    {"element", probe_element, METH_O, NULL},
    {"num_levels", probe_num_levels, METH_O, NULL},
    {"level_scale", probe_level_scale, METH_VARARGS, NULL},
    {"level_block", probe_level_block, METH_VARARGS, NULL},
    {"level_block_shape", probe_level_block_shape, METH_VARARGS, NULL},
    {"macro_kinds", probe_macro_kinds, METH_O, NULL},
    {"macro_simple", probe_macro_simple, METH_O, NULL},
    {"macro_block_scaled", probe_macro_block_scaled, METH_O, NULL},
    {"table_objects", probe_table_objects, METH_NOARGS, NULL},
    {"version", probe_version, METH_NOARGS, NULL},
    {"table_address", probe_table_address, METH_NOARGS, NULL},
    {"import_again", probe_import_again, METH_NOARGS, NULL},
    {"constants", probe_constants, METH_NOARGS, NULL},
    {"kind_loop", probe_kind_loop, METH_VARARGS, NULL},
    {"from_dlpack", probe_from_dlpack, METH_VARARGS, NULL},
    {"to_dlpack", probe_to_dlpack, METH_VARARGS, NULL},
    {"macro_dlpack", probe_macro_dlpack, METH_O, NULL},
    {"isdtype", probe_isdtype, METH_VARARGS, NULL},
    {"can_cast", probe_can_cast, METH_VARARGS, NULL},
    {"promote_types", probe_promote_types, METH_VARARGS, NULL},
    {"macro_relations", probe_macro_relations, METH_VARARGS, NULL},
    {"try_promote_types", probe_try_promote_types, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static int
probe_exec(PyObject *module)
{
    probe_state *st = get_state(module);

    if (SW_DTypes_ImportInto(&st->api) < 0 || SW_DTypes_Import() < 0) {
        return -1;
    }
    st->null = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
    if (st->null == NULL) {
        return -1;
    }
    return PyModule_AddObjectRef(module, "NULL", st->null);
}

static int
probe_traverse(PyObject *module, visitproc visit, void *arg)
{
    probe_state *st = get_state(module);

    if (st != NULL) {
        Py_VISIT(st->null);
    }
    return 0;
}

static int
probe_clear(PyObject *module)
{
    probe_state *st = get_state(module);

    if (st != NULL) {
        Py_CLEAR(st->null);
    }
    return 0;
}

static void
probe_free(void *module)
{
    (void)probe_clear((PyObject *)module);
}

static PyModuleDef_Slot probe_slots[] = {
    {Py_mod_exec, probe_exec},
#ifdef Py_GIL_DISABLED
    /* Without it, importing the probe on a free-threaded build would turn
     * the GIL back on for the whole process (and every later test). */
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
    {0, NULL},
};

static PyModuleDef probe_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "sw_capi_probe",
    .m_doc = "Test wrappers around every entry point of the stride_weave C API.",
    .m_size = sizeof(probe_state),
    .m_methods = probe_methods,
    .m_slots = probe_slots,
    .m_traverse = probe_traverse,
    .m_clear = probe_clear,
    .m_free = probe_free,
};

PyMODINIT_FUNC
PyInit_sw_capi_probe(void)
{
    return PyModuleDef_Init(&probe_module);
}
