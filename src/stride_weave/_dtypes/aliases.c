/* aliases.c: the names other libraries give the built-in and pack formats.
 *
 * Owns the table of well-known foreign names of the built-in descriptors
 * and of the formats pack's (numpy's, ml_dtypes' and torch's dtype names,
 * which JAX shares), and its lookup.  A miss on such a name suggests the
 * descriptor first: DType.from_name("float8_e4m3fn") asks "did you mean
 * 'E4M3'?".  A name may carry the prefix that str() of a torch dtype
 * writes ("torch.float8_e4m3fn") or a module's usual spelling ("np.",
 * "numpy.", "jnp.", "ml_dtypes.").  Only names that mean one format in
 * every library that has them are listed: "float" (float32 in torch,
 * float64 in numpy), "long" and "cfloat" are not.  The suggestion is then
 * chosen like any other (suggest.c): only where the descriptor was
 * registered when the miss happened, or would be by importing the pack.
 *
 * The lookup is C on an exact str: no Python code runs, nothing is
 * allocated and no error can occur, so miss.c calls it while it makes a
 * message.  _FOREIGN_NAMES, the table as a tuple of (foreign, ours)
 * pairs, is for the test that checks it against every built-in and pack
 * format's interop mapping.
 */
#include "registry.h"

#include <string.h>

typedef struct {
    const char *foreign;
    const char *ours;
} sw_alias;

static const sw_alias sw_alias_table[] = {
    /* built-ins */
    {"bool", "Bool"},
    {"bool_", "Bool"},
    {"int8", "Int8"},
    {"int32", "Int32"},
    {"float32", "Float32"},
    {"single", "Float32"},
    {"float64", "Float64"},
    {"double", "Float64"},
    {"float8_e8m0fnu", "E8M0"},
    {"float8_e5m2", "E5M2"},
    {"float8_e4m3fn", "E4M3"},
    {"float6_e3m2fn", "E3M2"},
    {"float6_e2m3fn", "E2M3"},
    {"float4_e2m1fn", "E2M1"},
    {"float4_e2m1fn_x2", "E2M1"},   /* torch: two E2M1 values a byte */
    /* the formats pack (stride_weave.formats) */
    {"float16", "Float16"},
    {"half", "Float16"},
    {"bfloat16", "BFloat16"},
    {"float8_e4m3fnuz", "E4M3FNUZ"},
    {"float8_e5m2fnuz", "E5M2FNUZ"},
    {"int16", "Int16"},
    {"short", "Int16"},
    {"int64", "Int64"},
    {"int4", "Int4"},
    {"uint8", "UInt8"},
    {"uint16", "UInt16"},
    {"uint32", "UInt32"},
    {"uint64", "UInt64"},
    {"uint4", "UInt4"},
    {"complex64", "Complex64"},
    {"complex128", "Complex128"},
    {"cdouble", "Complex128"},
    {NULL, NULL},
};

/* The prefixes a foreign name may carry. */
static const char *const sw_alias_prefixes[] = {
    "", "torch.", "np.", "numpy.", "jnp.", "ml_dtypes.", NULL,
};

/* 1 when `s` (exact str) holds, from position `start` on, exactly the
 * ASCII text `text`, else 0.  Reads code points: no allocation. */
static int
sw_alias_equals_at(PyObject *s, Py_ssize_t start, const char *text)
{
    Py_ssize_t n = (Py_ssize_t)strlen(text), i;
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);

    if (PyUnicode_GET_LENGTH(s) - start != n) {
        return 0;
    }
    for (i = 0; i < n; i++) {
        if (PyUnicode_READ(kind, data, start + i) != (Py_UCS4)(unsigned char)text[i]) {
            return 0;
        }
    }
    return 1;
}

/* 1 when `s` (exact str) starts with the ASCII text `prefix`, else 0. */
static int
sw_alias_starts_with(PyObject *s, const char *prefix)
{
    Py_ssize_t n = (Py_ssize_t)strlen(prefix), i;
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);

    if (PyUnicode_GET_LENGTH(s) < n) {
        return 0;
    }
    for (i = 0; i < n; i++) {
        if (PyUnicode_READ(kind, data, i) != (Py_UCS4)(unsigned char)prefix[i]) {
            return 0;
        }
    }
    return 1;
}

const char *
sw_alias_of(PyObject *name)
{
    Py_ssize_t p, i;

    if (name == NULL || !PyUnicode_CheckExact(name)) {
        return NULL;
    }
    for (p = 0; sw_alias_prefixes[p] != NULL; p++) {
        const char *prefix = sw_alias_prefixes[p];

        if (!sw_alias_starts_with(name, prefix)) {
            continue;
        }
        for (i = 0; sw_alias_table[i].foreign != NULL; i++) {
            if (sw_alias_equals_at(name, (Py_ssize_t)strlen(prefix),
                                   sw_alias_table[i].foreign)) {
                return sw_alias_table[i].ours;
            }
        }
    }
    return NULL;
}

PyObject *
sw_alias_table_tuple(void)
{
    Py_ssize_t n = 0, i;
    PyObject *table;

    while (sw_alias_table[n].foreign != NULL) {
        n++;
    }
    table = PyTuple_New(n);
    for (i = 0; table != NULL && i < n; i++) {
        PyObject *pair = Py_BuildValue("(ss)", sw_alias_table[i].foreign,
                                       sw_alias_table[i].ours);
        if (pair == NULL) {
            Py_CLEAR(table);
            break;
        }
        PyTuple_SET_ITEM(table, i, pair);
    }
    return table;
}
