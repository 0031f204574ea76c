/* codecs.c: the codec functions stride_weave.codecs calls.
 *
 * Owns the thin layer between Python and the codec engine (codec/, whose
 * whole interface is codec/engine.h): _codec_encode, _codec_decode,
 * _codec_pack, _codec_unpack, _codec_quantize, _codec_dequantize,
 * _codec_relayout and _codec_scale_offset.  It is the one place where
 * descriptors become the engine's formats (their numeric records) and
 * where a layout's description becomes a grid, checked so that no offset
 * it gives can leave its plane.  Each function takes its options as exact
 * ints (stride_weave.codecs turns names into them), and follows one
 * order:
 *   1. parse every option and read the formats from the descriptors'
 *      numeric records into C structs (no Python code runs after this);
 *   2. acquire every buffer view (an exporter's __buffer__ may run Python
 *      code; nothing learned in step 1 depends on it), holding them to the
 *      end, so no buffer can be resized or freed under the kernel;
 *   3. check each view's format, item size, contiguity and length;
 *   4. run the kernel, with the GIL released for large inputs;
 *   5. release the views and raise what the kernel reported.
 */
#include "codecs.h"
#include "codec/engine.h"
#include "descriptor.h"
#include "level.h"
#include "numinfo.h"

#include <string.h>

/* Above this many elements the kernels run without the GIL. */
#define SW_CODECS_GIL_MINSIZE 4096

/* The most threads one call takes. */
#define SW_CODECS_MAX_THREADS 256

/* ---- arguments ---------------------------------------------------------------- */

/* An exact int in [lo, hi] (no __index__: nothing runs), or -1 with
 * TypeError/ValueError naming `arg`. */
static int
sw_codecs_int(PyObject *value, const char *func, const char *arg, long lo,
              long hi, long *out)
{
    int overflow;
    long v;

    if (!PyLong_CheckExact(value)) {
        PyErr_Format(PyExc_TypeError, "%s: %s must be an int, got %.100s",
                     func, arg, Py_TYPE(value)->tp_name);
        return -1;
    }
    v = PyLong_AsLongAndOverflow(value, &overflow);
    if (v == -1 && overflow == 0 && PyErr_Occurred()) {
        return -1;
    }
    if (overflow != 0 || v < lo || v > hi) {
        PyErr_Format(PyExc_ValueError, "%s: %s must be between %ld and %ld, got %R",
                     func, arg, lo, hi, value);
        return -1;
    }
    *out = v;
    return 0;
}

/* An exact int in [0, 2**64) (a seed or a code), or -1. */
static int
sw_codecs_u64(PyObject *value, const char *func, const char *arg, uint64_t *out)
{
    unsigned long long v;

    if (!PyLong_CheckExact(value)) {
        PyErr_Format(PyExc_TypeError, "%s: %s must be an int, got %.100s",
                     func, arg, Py_TYPE(value)->tp_name);
        return -1;
    }
    v = PyLong_AsUnsignedLongLong(value);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Format(PyExc_ValueError,
                     "%s: %s must be an int in [0, 2**64), got %R", func, arg, value);
        return -1;
    }
    *out = (uint64_t)v;
    return 0;
}

/* An exact non-negative int that fits a Py_ssize_t (a count). */
static int
sw_codecs_count(PyObject *value, const char *func, const char *arg, size_t *out)
{
    Py_ssize_t v;

    if (!PyLong_CheckExact(value)) {
        PyErr_Format(PyExc_TypeError, "%s: %s must be an int, got %.100s",
                     func, arg, Py_TYPE(value)->tp_name);
        return -1;
    }
    v = PyLong_AsSsize_t(value);
    if (v == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        v = -1;
    }
    if (v < 0) {
        PyErr_Format(PyExc_ValueError,
                     "%s: %s must be a non-negative int below 2**63, got %R",
                     func, arg, value);
        return -1;
    }
    *out = (size_t)v;
    return 0;
}


/* The kernel's view of the simple dtype `obj`, read from its numeric
 * record: 0, or -1 with TypeError naming `arg`. */
static int
sw_codecs_format(sw_state *st, PyObject *obj, const char *func,
                 const char *arg, sw_codec_fmt *out)
{
    const sw_numeric_format *num;
    sw_descriptor *d;

    if (!sw_is_kind(st, obj, SW_KIND_SIMPLE)
        || SW_LOAD_FLAG(((sw_descriptor *)obj)->build_state) != SW_FINISHED) {
        PyObject *name = PyObject_TypeCheck(obj, st->dtype_type)
            ? ((sw_descriptor *)obj)->name : NULL;     /* exact str or NULL */
        if (name != NULL) {
            PyErr_Format(PyExc_TypeError,
                         "%s: %s must be a registered SimpleDType with a "
                         "numeric record, got %U (a %.100s)", func, arg, name,
                         Py_TYPE(obj)->tp_name);
        }
        else {
            PyErr_Format(PyExc_TypeError,
                         "%s: %s must be a registered SimpleDType with a "
                         "numeric record, got an object of type %.100s",
                         func, arg, Py_TYPE(obj)->tp_name);
        }
        return -1;
    }
    d = (sw_descriptor *)obj;
    num = sw_numinfo_format_of(d);
    if (num == NULL) {
        PyErr_Format(PyExc_TypeError,
                     "%s: %s %U has no numeric record (register_numeric_info "
                     "attaches one)", func, arg, d->name);
        return -1;
    }
    if (num->kind == SW_NUM_COMPLEX || num->bits > 64) {
        PyErr_Format(PyExc_TypeError,
                     "%s: %s %U is a %d-bit %s format; the codecs convert "
                     "real floating-point, integer and boolean formats of at "
                     "most 64 bits", func, arg, d->name, num->bits,
                     num->kind == SW_NUM_COMPLEX ? "complex" : "wide");
        return -1;
    }
    sw_codec_fmt_init(out, num);
    return 0;
}

/* ---- buffers ------------------------------------------------------------------ */

/* A view of `obj` as a C-contiguous buffer (writable if asked), with its
 * format: 0, or -1 with TypeError naming `arg`. */
static int
sw_codecs_view(PyObject *obj, Py_buffer *view, int writable, const char *func,
               const char *arg)
{
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);

    view->obj = NULL;
    if (PyObject_GetBuffer(obj, view, flags) < 0) {
        view->obj = NULL;
        /* The exporter's refusal becomes a TypeError naming the
         * argument, caused by the exporter's own error (numpy raises
         * ValueError for a non-contiguous array, memoryview and bytes
         * BufferError); anything else (MemoryError) propagates. */
        if (PyErr_ExceptionMatches(PyExc_TypeError)
            || PyErr_ExceptionMatches(PyExc_ValueError)
            || PyErr_ExceptionMatches(PyExc_BufferError)) {
            PyObject *cause = PyErr_GetRaisedException(), *exc;

            PyErr_Format(PyExc_TypeError,
                         "%s: %s must be a C-contiguous%s buffer, got %.100s",
                         func, arg, writable ? " writable" : "",
                         Py_TYPE(obj)->tp_name);
            exc = PyErr_GetRaisedException();
            if (exc != NULL && cause != NULL) {
                PyException_SetCause(exc, cause);       /* steals cause */
                cause = NULL;
            }
            PyErr_SetRaisedException(exc);
            Py_XDECREF(cause);
        }
        return -1;
    }
    return 0;
}

/* The format character of a view, without a native or little-endian
 * byte-order prefix ('\0' for anything else). */
static char
sw_codecs_format_char(const Py_buffer *view)
{
    const char *f = view->format != NULL ? view->format : "B";

    if (f[0] == '@' || f[0] == '=' || f[0] == '<') {
        f++;
    }
    return f[0] != '\0' && f[1] == '\0' ? f[0] : '\0';
}

/* 0 when `view` holds unsigned integers of `size` bytes, else -1 with
 * TypeError naming `arg`. */
static int
sw_codecs_check_codes(const Py_buffer *view, int size, const char *func,
                      const char *arg)
{
    char c = sw_codecs_format_char(view);
    int ok = view->itemsize == size
             && (c == 'B' || c == 'H' || c == 'I' || c == 'L' || c == 'Q');

    if (!ok) {
        PyErr_Format(PyExc_TypeError,
                     "%s: %s must hold unsigned integers of %d byte%s "
                     "(format 'B', 'H', 'I', 'L' or 'Q'), got format %s with "
                     "item size %zd", func, arg, size, size == 1 ? "" : "s",
                     view->format != NULL ? view->format : "B", view->itemsize);
        return -1;
    }
    return 0;
}

/* 0 when `view` holds floats of the given format ('f', 'd' or 'e'), else
 * -1 with TypeError naming `arg`. */
static int
sw_codecs_check_float(const Py_buffer *view, char want, int size,
                      const char *func, const char *arg)
{
    if (sw_codecs_format_char(view) != want || view->itemsize != size) {
        PyErr_Format(PyExc_TypeError,
                     "%s: %s must hold %s (format '%c'), got format %s with "
                     "item size %zd", func, arg,
                     want == 'f' ? "float32" : want == 'd' ? "float64" : "float16",
                     want, view->format != NULL ? view->format : "B",
                     view->itemsize);
        return -1;
    }
    return 0;
}

/* 0 when two buffers do not overlap, else -1 with ValueError. */
static int
sw_codecs_check_disjoint(const Py_buffer *a, const Py_buffer *b,
                         const char *func, const char *an, const char *bn)
{
    uintptr_t a0 = (uintptr_t)a->buf, b0 = (uintptr_t)b->buf;

    if (a->len > 0 && b->len > 0 && a0 < b0 + (uintptr_t)b->len
        && b0 < a0 + (uintptr_t)a->len) {
        PyErr_Format(PyExc_ValueError, "%s: %s and %s must not overlap",
                     func, an, bn);
        return -1;
    }
    return 0;
}

static void
sw_codecs_release(Py_buffer *view)
{
    if (view->obj != NULL) {
        PyBuffer_Release(view);
        view->obj = NULL;
    }
}

/* The float type of a values or output buffer: the view's format for
 * float32 ('f'), float64 ('d') and float16 ('e'); bfloat16 travels as
 * its bits ('H'), named by the caller. */
static int
sw_codecs_check_type(const Py_buffer *view, int type, const char *func,
                     const char *arg)
{
    if (type == SW_BFLOAT16) {
        return sw_codecs_check_codes(view, 2, func, arg);
    }
    return sw_codecs_check_float(view, type == SW_FLOAT32 ? 'f'
                                       : type == SW_FLOAT64 ? 'd' : 'e',
                                 sw_codec_float_size(type), func, arg);
}

/* Run a kernel call without the GIL when it is large. */
#define SW_CODECS_RUN(n, call)                  \
    do {                                        \
        if ((n) >= SW_CODECS_GIL_MINSIZE) {     \
            Py_BEGIN_ALLOW_THREADS              \
            call;                               \
            Py_END_ALLOW_THREADS                \
        }                                       \
        else {                                  \
            call;                               \
        }                                       \
    } while (0)

/* ---- elements ------------------------------------------------------------------- */

/* _codec_encode(values, out, dtype, source, rounding, overflow, nan,
 *               nan_code, nan_code_negative, seed, sign, threads[, path]) */
static PyObject *
sw_codecs_encode(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    const char *func = "encode", *why = NULL;
    sw_state *st = sw_state_of_module(module);
    Py_buffer src = {0}, dst = {0};
    sw_codec_fmt f;
    sw_codec_opts o;
    long source, rounding, overflow, nan, sign, threads, path = SW_PATH_AUTO;
    size_t n, bad = 0;
    int code_size, status, src_size;

    if (nargs != 12 && nargs != 13) {
        PyErr_Format(PyExc_TypeError, "_codec_encode() takes 12 or 13 arguments (%zd "
                     "given)", nargs);
        return NULL;
    }
    if (nargs == 13 && sw_codecs_int(args[12], func, "path", 0, SW_PATH_COUNT - 1,
                                     &path) < 0) {
        return NULL;
    }
    memset(&o, 0, sizeof(o));
    if (sw_codecs_format(st, args[2], func, "dtype", &f) < 0
        || sw_codecs_int(args[3], func, "source", 0, SW_FLOAT_COUNT - 1, &source) < 0
        || sw_codecs_int(args[4], func, "rounding", 0, SW_ROUND_COUNT - 1, &rounding) < 0
        || sw_codecs_int(args[5], func, "overflow", 0, SW_OVERFLOW_COUNT - 1, &overflow) < 0
        || sw_codecs_int(args[6], func, "nan", 0, SW_NANOPT_COUNT - 1, &nan) < 0
        || sw_codecs_u64(args[7], func, "nan_code", &o.nan_code[0]) < 0
        || sw_codecs_u64(args[8], func, "nan_code_negative", &o.nan_code[1]) < 0
        || sw_codecs_u64(args[9], func, "seed", &o.seed) < 0
        || sw_codecs_int(args[10], func, "sign", 0, SW_SIGN_COUNT - 1, &sign) < 0
        || sw_codecs_int(args[11], func, "threads", 1, SW_CODECS_MAX_THREADS, &threads) < 0) {
        return NULL;
    }
    o.rounding = (int)rounding;
    o.overflow = (int)overflow;
    o.nan = (int)nan;
    o.sign = (int)sign;
    o.path = (int)path;
    if (!sw_codec_check_options(&f, &o, &why)) {
        PyErr_Format(PyExc_ValueError, "%s: %s; %R has %s", func, why, args[2],
                     o.nan == SW_NANOPT_CODE && overflow != SW_OVERFLOW_SPECIAL
                     ? "fewer bits" : "neither (use 'saturate')");
        return NULL;
    }
    sw_codec_resolve(&f, &o);
    code_size = sw_codec_code_size(f.bits);
    src_size = sw_codec_float_size((int)source);

    if (sw_codecs_view(args[0], &src, 0, func, "values") < 0
        || sw_codecs_view(args[1], &dst, 1, func, "out") < 0) {
        goto error;
    }
    if (sw_codecs_check_type(&src, (int)source, func, "values") < 0
        || sw_codecs_check_codes(&dst, code_size, func, "out") < 0
        || sw_codecs_check_disjoint(&src, &dst, func, "values", "out") < 0) {
        goto error;
    }
    n = (size_t)src.len / (size_t)src_size;
    if ((size_t)dst.len / (size_t)code_size != n) {
        PyErr_Format(PyExc_ValueError,
                     "%s: out must hold one code per value: %zu values, room "
                     "for %zu codes", func, n, (size_t)dst.len / (size_t)code_size);
        goto error;
    }
    SW_CODECS_RUN(n, status = sw_codec_encode(&f, &o, (int)source, src.buf, dst.buf,
                                              code_size, n, (int)threads, &bad));
    sw_codecs_release(&src);
    sw_codecs_release(&dst);
    if (status == SW_CODEC_NAN) {
        PyErr_Format(PyExc_ValueError,
                     "%s: values[%zu] (flat index) is NaN, and nan='error' was given",
                     func, bad);
        return NULL;
    }
    Py_RETURN_NONE;

error:
    sw_codecs_release(&src);
    sw_codecs_release(&dst);
    return NULL;
}

/* _codec_decode(codes, out, dtype, out_type, threads) */
static PyObject *
sw_codecs_decode(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    const char *func = "decode";
    sw_state *st = sw_state_of_module(module);
    Py_buffer src = {0}, dst = {0};
    sw_codec_fmt f;
    long out, threads;
    size_t n, table_bytes;
    int code_size, out_size;
    double small[256];
    void *table = NULL, *heap = NULL;

    if (nargs != 5) {
        PyErr_Format(PyExc_TypeError, "_codec_decode() takes 5 arguments (%zd given)",
                     nargs);
        return NULL;
    }
    if (sw_codecs_format(st, args[2], func, "dtype", &f) < 0
        || sw_codecs_int(args[3], func, "out_type", 0, SW_FLOAT_COUNT - 1, &out) < 0
        || sw_codecs_int(args[4], func, "threads", 1, SW_CODECS_MAX_THREADS, &threads) < 0) {
        return NULL;
    }
    code_size = sw_codec_code_size(f.bits);
    out_size = sw_codec_float_size((int)out);
    if (sw_codecs_view(args[0], &src, 0, func, "codes") < 0
        || sw_codecs_view(args[1], &dst, 1, func, "out") < 0) {
        goto error;
    }
    if (sw_codecs_check_codes(&src, code_size, func, "codes") < 0
        || sw_codecs_check_type(&dst, (int)out, func, "out") < 0
        || sw_codecs_check_disjoint(&src, &dst, func, "codes", "out") < 0) {
        goto error;
    }
    n = (size_t)src.len / (size_t)code_size;
    if ((size_t)dst.len / (size_t)out_size != n) {
        PyErr_Format(PyExc_ValueError,
                     "%s: out must hold one value per code: %zu codes, room "
                     "for %zu values", func, n, (size_t)dst.len / (size_t)out_size);
        goto error;
    }
    /* A table of every code's value (a small format's on the stack). */
    table_bytes = sw_codec_decode_table_bytes(&f, (int)out, n);
    if (table_bytes > 0 && table_bytes <= sizeof(small)) {
        table = small;
    }
    else if (table_bytes > 0) {
        heap = PyMem_RawMalloc(table_bytes);
        if (heap == NULL) {
            PyErr_NoMemory();
            goto error;
        }
        table = heap;
    }
    SW_CODECS_RUN(n, sw_codec_decode(&f, src.buf, code_size, dst.buf, (int)out, n, table,
                                     (int)threads));
    PyMem_RawFree(heap);
    sw_codecs_release(&src);
    sw_codecs_release(&dst);
    Py_RETURN_NONE;

error:
    PyMem_RawFree(heap);
    sw_codecs_release(&src);
    sw_codecs_release(&dst);
    return NULL;
}

/* ---- packing ---------------------------------------------------------------------- */

/* _codec_pack(codes, out, dtype, threads) and
 * _codec_unpack(data, out, dtype, count, threads) */
static PyObject *
sw_codecs_pack_impl(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                    int unpack)
{
    const char *func = unpack ? "unpack" : "pack";
    sw_state *st = sw_state_of_module(module);
    Py_buffer src = {0}, dst = {0};
    sw_codec_fmt f;
    size_t n = 0, nbytes, bad = 0;
    long threads;
    int code_size, status = SW_CODEC_OK;

    if (nargs != (unpack ? 5 : 4)) {
        PyErr_Format(PyExc_TypeError, "_codec_%s() takes %d arguments (%zd given)",
                     func, unpack ? 5 : 4, nargs);
        return NULL;
    }
    if (sw_codecs_format(st, args[2], func, "dtype", &f) < 0
        || (unpack && sw_codecs_count(args[3], func, "count", &n) < 0)
        || sw_codecs_int(args[unpack ? 4 : 3], func, "threads", 1, SW_CODECS_MAX_THREADS,
                         &threads) < 0) {
        return NULL;
    }
    code_size = sw_codec_code_size(f.bits);
    if (sw_codecs_view(args[0], &src, 0, func, unpack ? "data" : "codes") < 0
        || sw_codecs_view(args[1], &dst, 1, func, "out") < 0) {
        goto error;
    }
    if (unpack) {
        if (sw_codecs_check_codes(&src, 1, func, "data") < 0
            || sw_codecs_check_codes(&dst, code_size, func, "out") < 0) {
            goto error;
        }
    }
    else if (sw_codecs_check_codes(&src, code_size, func, "codes") < 0
             || sw_codecs_check_codes(&dst, 1, func, "out") < 0) {
        goto error;
    }
    if (sw_codecs_check_disjoint(&src, &dst, func, unpack ? "data" : "codes", "out") < 0) {
        goto error;
    }
    if (!unpack) {
        n = (size_t)src.len / (size_t)code_size;
    }
    /* n * bits below 2**63 (a count's bits must fit a buffer's length;
     * pack's n is one of a buffer's), so nbytes does not wrap */
    if (unpack && n > (size_t)PY_SSIZE_T_MAX / (size_t)f.bits) {
        PyErr_Format(PyExc_ValueError,
                     "%s: count %zu of %d-bit codes needs more than 2**60 bytes of "
                     "data", func, n, f.bits);
        goto error;
    }
    nbytes = sw_codec_row_bytes(f.bits, n);
    if (unpack) {
        if ((size_t)src.len < nbytes) {
            PyErr_Format(PyExc_ValueError,
                         "%s: count %zu of %d-bit codes needs %zu bytes of data, "
                         "got %zd", func, n, f.bits, nbytes, src.len);
            goto error;
        }
        if ((size_t)dst.len / (size_t)code_size != n) {
            PyErr_Format(PyExc_ValueError,
                         "%s: out must have room for exactly %zu codes, got %zu",
                         func, n, (size_t)dst.len / (size_t)code_size);
            goto error;
        }
        SW_CODECS_RUN(n, sw_codec_unpack(src.buf, f.bits, n, dst.buf, code_size,
                                         (int)threads));
    }
    else {
        if ((size_t)dst.len != nbytes) {
            PyErr_Format(PyExc_ValueError,
                         "%s: %zu codes of %d bits pack into %zu bytes; out has %zd",
                         func, n, f.bits, nbytes, dst.len);
            goto error;
        }
        SW_CODECS_RUN(n, status = sw_codec_pack(src.buf, code_size, f.bits, n, dst.buf,
                                                (int)threads, &bad));
    }
    if (status == SW_CODEC_WIDE_CODE) {
        unsigned long long v = (unsigned long long)sw_codec_load(src.buf, code_size, bad);
        PyErr_Format(PyExc_ValueError,
                     "%s: codes[%zu] (flat index) is %llu, which does not fit %U's "
                     "%d bits (pack never masks a code)", func, bad, v,
                     ((sw_descriptor *)args[2])->name, f.bits);
        goto error;
    }
    sw_codecs_release(&src);
    sw_codecs_release(&dst);
    Py_RETURN_NONE;

error:
    sw_codecs_release(&src);
    sw_codecs_release(&dst);
    return NULL;
}

static PyObject *
sw_codecs_pack(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    return sw_codecs_pack_impl(module, args, nargs, 0);
}

static PyObject *
sw_codecs_unpack(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    return sw_codecs_pack_impl(module, args, nargs, 1);
}

/* ---- block-scaled ------------------------------------------------------------------- */

/* The engine's view of the block-scaled dtype `obj`: its element and each
 * level's scale, read from the descriptor and the numeric records; 0, or
 * -1 with TypeError/ValueError. */
static int
sw_codecs_block_format(sw_state *st, PyObject *obj, const char *func,
                       sw_codec_block *b)
{
    sw_descriptor *d;
    sw_compound_fields *c;
    Py_ssize_t nlevels, i;

    memset(b, 0, sizeof(*b));
    if (!sw_is_kind(st, obj, SW_KIND_BLOCK_SCALED)
        || SW_LOAD_FLAG(((sw_descriptor *)obj)->build_state) != SW_FINISHED) {
        PyErr_Format(PyExc_TypeError,
                     "%s: dtype must be a registered BlockScaledDType, got an "
                     "object of type %.100s", func, Py_TYPE(obj)->tp_name);
        return -1;
    }
    d = (sw_descriptor *)obj;
    c = d->compound;        /* set before the descriptor was finished */
    nlevels = PyTuple_GET_SIZE(c->levels);
    if (nlevels > 2 || (nlevels == 2
        && ((sw_level *)PyTuple_GET_ITEM(c->levels, 1))->block != st->whole)) {
        PyErr_Format(PyExc_ValueError,
                     "%s: %U has %zd levels; the codecs quantize formats with "
                     "one level, or two whose outer level is Whole", func,
                     d->name, nlevels);
        return -1;
    }
    if (sw_codecs_format(st, c->element, func, "dtype.element", &b->elem) < 0) {
        return -1;
    }
    if (b->elem.kind == SW_NUM_BOOL || b->elem.bits > 16) {
        PyErr_Format(PyExc_TypeError,
                     "%s: the element of %U must be a floating-point or integer "
                     "format of at most 16 bits", func, d->name);
        return -1;
    }
    if (b->elem.kind == SW_NUM_INT && (!b->elem.is_signed || b->elem.bits < 3)) {
        PyErr_Format(PyExc_TypeError,
                     "%s: an integer element (%U's) must be signed, of at least 3 "
                     "bits (read as OCP MX reads INT8)", func, d->name);
        return -1;
    }
    b->nlevels = (int)nlevels;
    for (i = 0; i < nlevels; i++) {
        sw_level *level = (sw_level *)PyTuple_GET_ITEM(c->levels, i);
        if (sw_codecs_format(st, level->scale, func, "a level's scale", &b->scale[i]) < 0) {
            return -1;
        }
        if (b->scale[i].kind != SW_NUM_FLOAT) {
            PyErr_Format(PyExc_TypeError,
                         "%s: the scale of level %zd of %U must be a floating-point "
                         "format", func, i, d->name);
            return -1;
        }
    }
    b->whole_only = ((sw_level *)PyTuple_GET_ITEM(c->levels, 0))->block == st->whole;
    b->whole = nlevels == 2;
    return 0;
}

/* The rule of quantize: power-of-two rules for any float scale format,
 * 'amax' for scale formats with mantissa bits. */
static int
sw_codecs_rule(sw_codec_block *b, long rule, const char *func, PyObject *dtype)
{
    int has_mantissa = b->scale[0].p > 0;

    if (rule == SW_RULE_DEFAULT) {
        rule = has_mantissa ? SW_RULE_AMAX : SW_RULE_FLOOR;
    }
    if (rule == SW_RULE_AMAX && !has_mantissa) {
        PyErr_Format(PyExc_ValueError,
                     "%s: scale_rule 'amax' does not apply to %R, whose block scales "
                     "are powers of two (use 'floor', 'ceil', 'rceil' or 'even')",
                     func, dtype);
        return -1;
    }
    if (rule != SW_RULE_AMAX && b->whole) {
        PyErr_Format(PyExc_ValueError,
                     "%s: scale_rule %s does not apply to %R, whose block scales "
                     "are floats under a whole-tensor scale (use 'amax')", func,
                     rule == SW_RULE_FLOOR ? "'floor'" : rule == SW_RULE_CEIL ? "'ceil'"
                     : rule == SW_RULE_RCEIL ? "'rceil'" : "'even'", dtype);
        return -1;
    }
    b->rule = (int)rule;
    b->pow2 = rule != SW_RULE_AMAX;
    return 0;
}

/* One exact int in [0, 2**63) from a tuple (the grid's fields). */
static int
sw_codecs_field(PyObject *tuple, Py_ssize_t i, const char *func, size_t *out)
{
    return sw_codecs_count(PyTuple_GET_ITEM(tuple, i), func, "a grid field", out);
}

/* a * b + c without overflow past 2**63, or -1. */
static int
sw_codecs_muladd(size_t a, size_t b, size_t c, size_t *out)
{
    size_t limit = (size_t)PY_SSIZE_T_MAX;

    if (a != 0 && b > (limit - c) / a) {
        return -1;
    }
    *out = a * b + c;
    return 0;
}

/* 0 when the codes of one batch of a matrix layout (layout.c's formulas,
 * with R and C below 2**40 and align and group below 2**20) fit below
 * 2**63, else -1. */
static int
sw_codecs_batch_fits(const sw_codec_grid *g)
{
    size_t ru_c = (g->C + g->align - 1) / g->align * g->align;
    size_t ru_r = (g->R + g->align - 1) / g->align * g->align, t;

    switch (g->scales) {
    case SW_SCALES_PADDED_K_MAJOR:
        return sw_codecs_muladd(g->R, ru_c, 0, &t);
    case SW_SCALES_PADDED_MN_MAJOR:
        return sw_codecs_muladd(ru_r, g->group, 0, &t) < 0
               || sw_codecs_muladd((g->C + g->group - 1) / g->group, t, 0, &t) < 0
               ? -1 : 0;
    case SW_SCALES_SWIZZLED_128X4:
        return sw_codecs_muladd(32 * ((g->R + 127) / 128), 16 * ((g->C + 3) / 4), 0, &t);
    default:
        return 0;
    }
}

/* The grid of a call: `axes` a tuple of (extent, block, compact, batch,
 * row, col, expanded) per axis of the element plane, `layout` (scales, R,
 * C, align, group).  Every field is checked, and the offsets the grid can
 * give are bounded: on return *max_offset + 1 codes of the scale plane
 * hold every scale (its padding too), *elements the element count. */
static int
sw_codecs_grid(PyObject *axes, PyObject *layout, const char *func, sw_codec_grid *g,
               size_t *elements, size_t *plane_codes)
{
    Py_ssize_t nd, a;
    size_t maxc = 0, maxb = 0, maxr = 0, maxcol = 0, n = 1, v, scales;
    int expanded = 0;

    memset(g, 0, sizeof(*g));
    if (!PyTuple_CheckExact(axes) || PyTuple_GET_SIZE(axes) < 1
        || PyTuple_GET_SIZE(axes) > SW_CODEC_MAX_DIMS
        || !PyTuple_CheckExact(layout) || PyTuple_GET_SIZE(layout) != 5) {
        PyErr_Format(PyExc_TypeError, "%s: the grid must be a tuple of 1 to %d axes "
                     "and a layout of 5 ints", func, SW_CODEC_MAX_DIMS);
        return -1;
    }
    nd = PyTuple_GET_SIZE(axes);
    g->ndim = (int)nd;
    for (a = 0; a < nd; a++) {
        PyObject *t = PyTuple_GET_ITEM(axes, a);
        sw_codec_axis *x = &g->axis[a];
        size_t f[7], count;
        int i;
        if (!PyTuple_CheckExact(t) || PyTuple_GET_SIZE(t) != 7) {
            PyErr_Format(PyExc_TypeError, "%s: a grid axis must be a tuple of 7 ints",
                         func);
            return -1;
        }
        for (i = 0; i < 7; i++) {
            if (sw_codecs_field(t, i, func, &f[i]) < 0) {
                return -1;
            }
        }
        x->extent = f[0];
        x->block = f[1];
        x->compact = f[2];
        x->batch = f[3];
        x->row = f[4];
        x->col = f[5];
        x->expanded = f[6] != 0;
        if (x->block < 1 || f[6] > 1) {
            PyErr_Format(PyExc_ValueError, "%s: a grid axis has block %zu and expanded "
                         "%zu", func, x->block, f[6]);
            return -1;
        }
        /* a block longer than its axis is the whole axis: one block (the
         * engine's strips are multiples of the block and of 8 columns,
         * which a block near 2**63 would overflow) */
        if (x->extent != 0 && x->block > x->extent) {
            x->block = x->extent;
        }
        /* the block walk (codec/block.c) follows one expanded axis: with
         * two, rows whose scales lie apart would share one scale write */
        if (x->expanded && ++expanded > 1) {
            PyErr_Format(PyExc_ValueError, "%s: a grid expands at most one axis; axis "
                         "%zd is a second", func, a);
            return -1;
        }
        if (x->extent == 0) {
            n = 0;
            continue;
        }
        if (n != 0 && sw_codecs_muladd(n, x->extent, 0, &n) < 0) {
            goto overflow;
        }
        count = x->expanded ? x->extent : (x->extent - 1) / x->block + 1;
        if (sw_codecs_muladd(count - 1, x->compact, maxc, &maxc) < 0
            || sw_codecs_muladd(count - 1, x->batch, maxb, &maxb) < 0
            || sw_codecs_muladd(count - 1, x->row, maxr, &maxr) < 0
            || sw_codecs_muladd(count - 1, x->col, maxcol, &maxcol) < 0) {
            goto overflow;
        }
    }
    if (n != 0 && sw_codecs_muladd(n, 8, 0, &v) < 0) {
        goto overflow;
    }
    for (a = 0; a < 5; a++) {
        if (sw_codecs_field(layout, a, func, a == 0 ? &scales : a == 1 ? &g->R
                            : a == 2 ? &g->C : a == 3 ? &g->align : &g->group) < 0) {
            return -1;
        }
    }
    if (scales >= SW_SCALES_COUNT || g->align < 1 || g->group < 1
        || g->R > (1ULL << 40) || g->C > (1ULL << 40) || g->align > (1u << 20)
        || g->group > (1u << 20)) {
        PyErr_Format(PyExc_ValueError, "%s: a grid layout has scales %zu, align %zu, "
                     "group %zu", func, scales, g->align, g->group);
        return -1;
    }
    g->scales = (int)scales;
    *elements = n;
    if (g->scales == SW_SCALES_COMPACT) {
        *plane_codes = n == 0 ? 0 : maxc + 1;
    }
    else {
        /* every r below R and c below C: each offset stays in its batch,
         * whose size is checked here, factor by factor, before the
         * layout's formula (layout.c, which does not check) computes it:
         * a product that wrapped would make a small plane look big enough
         * for offsets far outside it */
        size_t batch;
        if (sw_codecs_batch_fits(g) < 0) {
            goto overflow;
        }
        batch = sw_codec_scale_offset(g, 0, 1, 0, 0);
        if (n != 0 && (maxr >= g->R || maxcol >= g->C)) {
            PyErr_Format(PyExc_ValueError, "%s: the grid's matrix coordinates reach "
                         "row %zu and column %zu of a %zu x %zu matrix", func, maxr,
                         maxcol, g->R, g->C);
            return -1;
        }
        if (sw_codecs_muladd(maxb + 1, batch, 0, plane_codes) < 0) {
            goto overflow;
        }
        if (n == 0) {
            *plane_codes = 0;
        }
    }
    return 0;

overflow:
    PyErr_Format(PyExc_ValueError, "%s: the grid is too large", func);
    return -1;
}

/* The scale planes of a call: a tuple of 1 or 2 buffers, acquired into
 * views[0..nlevels); level 0 holds at least `need0` codes, a Whole level
 * exactly one.  0, or -1 (every view acquired is released by the caller's
 * cleanup). */
static int
sw_codecs_scale_views(PyObject *scales, const sw_codec_block *b, Py_buffer *views,
                      int writable, size_t need0, const char *func)
{
    Py_ssize_t i;

    if (!PyTuple_CheckExact(scales) || PyTuple_GET_SIZE(scales) != b->nlevels) {
        PyErr_Format(PyExc_TypeError, "%s: scales must be a tuple of %d buffers",
                     func, b->nlevels);
        return -1;
    }
    for (i = 0; i < b->nlevels; i++) {
        int size = sw_codec_code_size(b->scale[i].bits);
        size_t want = i == 0 ? need0 : 1, have;
        if (sw_codecs_view(PyTuple_GET_ITEM(scales, i), &views[i], writable, func,
                           "scales[i]") < 0
            || sw_codecs_check_codes(&views[i], size, func, "a scale plane") < 0) {
            return -1;
        }
        have = (size_t)views[i].len / (size_t)size;
        if (i == 0 ? have < want : have != want) {
            PyErr_Format(PyExc_ValueError,
                         "%s: scales[%zd] must hold %s%zu codes of %d byte%s, got %zd "
                         "bytes", func, i, i == 0 ? "at least " : "", want, size,
                         size == 1 ? "" : "s", views[i].len);
            return -1;
        }
    }
    return 0;
}

/* The bytes of the element plane: each row (the grid's last axis) packed
 * to whole bytes or one code per element. */
static size_t
sw_codecs_elem_bytes(const sw_codec_block *b, size_t elements)
{
    size_t length = b->grid.axis[b->grid.ndim - 1].extent;
    size_t rows = length == 0 ? 0 : elements / length;

    if (elements == 0) {
        return 0;
    }
    return rows * (b->packed ? sw_codec_row_bytes(b->elem.bits, length)
                             : length * (size_t)sw_codec_code_size(b->elem.bits));
}

/* _codec_quantize(values, elements, scales, dtype, axes, layout, rule,
 *                 rounding, seed, packed, amax_floor, threads[, path]) */
static PyObject *
sw_codecs_quantize(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    const char *func = "quantize";
    sw_state *st = sw_state_of_module(module);
    Py_buffer src = {0}, elem = {0}, sv[2] = {{0}, {0}};
    sw_codec_block b;
    long rule, rounding, packed, threads, path = SW_PATH_AUTO;
    size_t n, plane_codes, scratch_bytes;
    double floor;
    void *scratch = NULL, *copy = NULL;
    const void *values;
    int i;

    if (nargs != 12 && nargs != 13) {
        PyErr_Format(PyExc_TypeError, "_codec_quantize() takes 12 or 13 arguments (%zd "
                     "given)", nargs);
        return NULL;
    }
    if (nargs == 13 && sw_codecs_int(args[12], func, "path", 0, SW_PATH_COUNT - 1,
                                     &path) < 0) {
        return NULL;
    }
    if (sw_codecs_block_format(st, args[3], func, &b) < 0
        || sw_codecs_grid(args[4], args[5], func, &b.grid, &n, &plane_codes) < 0
        || sw_codecs_int(args[6], func, "scale_rule", 0, SW_RULE_COUNT - 1, &rule) < 0
        || sw_codecs_int(args[7], func, "rounding", 0, SW_ROUND_COUNT - 1, &rounding) < 0
        || sw_codecs_u64(args[8], func, "seed", &b.seed) < 0
        || sw_codecs_int(args[9], func, "packed", 0, 1, &packed) < 0
        || sw_codecs_int(args[11], func, "threads", 1, SW_CODECS_MAX_THREADS, &threads) < 0
        || sw_codecs_rule(&b, rule, func, args[3]) < 0) {
        return NULL;
    }
    if (!PyFloat_CheckExact(args[10]) || !(PyFloat_AS_DOUBLE(args[10]) >= 0.0)
        || PyFloat_AS_DOUBLE(args[10]) > 1e300) {
        PyErr_Format(PyExc_ValueError, "%s: amax_floor must be a finite float >= 0",
                     func);
        return NULL;
    }
    floor = PyFloat_AS_DOUBLE(args[10]);
    b.rounding = rounding == SW_ROUND_DEFAULT ? SW_ROUND_NEAREST_EVEN : (int)rounding;
    b.packed = (int)packed;
    b.path = (int)path;
    if (b.whole_only && (b.grid.ndim != 1 || b.grid.axis[0].block != (n ? n : 1))) {
        PyErr_Format(PyExc_ValueError, "%s: a format scaled as a whole takes its tensor "
                     "as one block", func);
        return NULL;
    }
    if (b.whole_only && n == 0) {
        plane_codes = 1;
    }
    if (sw_codecs_view(args[0], &src, 0, func, "values") < 0
        || sw_codecs_view(args[1], &elem, 1, func, "elements") < 0
        || sw_codecs_scale_views(args[2], &b, sv, 1, plane_codes, func) < 0) {
        goto error;
    }
    if (sw_codecs_format_char(&src) == 'd' && src.itemsize == 8 && b.pow2) {
        b.source = SW_FLOAT64;
    }
    else if (sw_codecs_check_float(&src, 'f', 4, func, "values") < 0) {
        goto error;
    }
    b.amax_floor = floor;
    if (sw_codecs_check_codes(&elem, b.packed ? 1 : sw_codec_code_size(b.elem.bits),
                              func, "elements") < 0) {
        goto error;
    }
    if ((size_t)src.len / (size_t)src.itemsize != n
        || (size_t)elem.len != sw_codecs_elem_bytes(&b, n)) {
        PyErr_Format(PyExc_ValueError,
                     "%s: values must hold %zu elements and elements %zu bytes; got "
                     "%zd values and %zd bytes", func, n, sw_codecs_elem_bytes(&b, n),
                     src.len / src.itemsize, elem.len);
        goto error;
    }
    for (i = 0; i < b.nlevels; i++) {
        if (sw_codecs_check_disjoint(&src, &sv[i], func, "values", "scales") < 0
            || sw_codecs_check_disjoint(&elem, &sv[i], func, "elements", "scales") < 0) {
            goto error;
        }
    }
    if ((b.nlevels == 2 && sw_codecs_check_disjoint(&sv[0], &sv[1], func, "scales[0]",
                                                    "scales[1]") < 0)
        || sw_codecs_check_disjoint(&src, &elem, func, "values", "elements") < 0) {
        goto error;
    }
    values = src.buf;
    if ((uintptr_t)src.buf % (size_t)src.itemsize != 0) {
        /* the block passes read the values as floats or doubles, which a
         * view at an odd offset does not hold aligned: read a copy */
        copy = PyMem_RawMalloc(src.len ? (size_t)src.len : 1);
        if (copy == NULL) {
            PyErr_NoMemory();
            goto error;
        }
        memcpy(copy, src.buf, (size_t)src.len);
        values = copy;
    }
    scratch_bytes = sw_codec_block_scratch(&b, (int)threads);
    scratch = PyMem_RawMalloc(scratch_bytes ? scratch_bytes : 1);
    if (scratch == NULL) {
        PyErr_NoMemory();
        goto error;
    }
    SW_CODECS_RUN(n, sw_codec_quantize(&b, values, elem.buf, sv[0].buf,
                                       b.nlevels == 2 ? sv[1].buf : NULL, scratch,
                                       (int)threads));
    PyMem_RawFree(scratch);
    PyMem_RawFree(copy);
    sw_codecs_release(&src);
    sw_codecs_release(&elem);
    sw_codecs_release(&sv[0]);
    sw_codecs_release(&sv[1]);
    Py_RETURN_NONE;

error:
    PyMem_RawFree(scratch);
    PyMem_RawFree(copy);
    sw_codecs_release(&src);
    sw_codecs_release(&elem);
    sw_codecs_release(&sv[0]);
    sw_codecs_release(&sv[1]);
    return NULL;
}

/* _codec_dequantize(elements, scales, out, dtype, axes, layout, packed,
 *                   nonfinite_error, out_type, threads) */
static PyObject *
sw_codecs_dequantize(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    const char *func = "dequantize";
    sw_state *st = sw_state_of_module(module);
    Py_buffer elem = {0}, dst = {0}, sv[2] = {{0}, {0}};
    sw_codec_block b;
    long packed, nonfinite, out, threads;
    size_t n, plane_codes, bad = 0, scratch_bytes;
    void *scratch = NULL;
    int status, i;

    if (nargs != 10) {
        PyErr_Format(PyExc_TypeError, "_codec_dequantize() takes 10 arguments (%zd given)",
                     nargs);
        return NULL;
    }
    if (sw_codecs_block_format(st, args[3], func, &b) < 0
        || sw_codecs_grid(args[4], args[5], func, &b.grid, &n, &plane_codes) < 0
        || sw_codecs_int(args[6], func, "packed", 0, 1, &packed) < 0
        || sw_codecs_int(args[7], func, "nonfinite_error", 0, 1, &nonfinite) < 0
        || sw_codecs_int(args[8], func, "out_type", 0, SW_FLOAT_COUNT - 1, &out) < 0
        || sw_codecs_int(args[9], func, "threads", 1, SW_CODECS_MAX_THREADS, &threads) < 0) {
        return NULL;
    }
    b.packed = (int)packed;
    b.nonfinite_error = (int)nonfinite;
    b.out = (int)out;
    if (b.whole_only && (b.grid.ndim != 1 || b.grid.axis[0].block != (n ? n : 1))) {
        PyErr_Format(PyExc_ValueError, "%s: a format scaled as a whole takes its tensor "
                     "as one block", func);
        return NULL;
    }
    if (b.whole_only && n == 0) {
        plane_codes = 1;
    }
    if (sw_codecs_view(args[0], &elem, 0, func, "elements") < 0
        || sw_codecs_scale_views(args[1], &b, sv, 0, plane_codes, func) < 0
        || sw_codecs_view(args[2], &dst, 1, func, "out") < 0) {
        goto error;
    }
    if (sw_codecs_check_type(&dst, b.out, func, "out") < 0
        || sw_codecs_check_codes(&elem, b.packed ? 1 : sw_codec_code_size(b.elem.bits),
                                 func, "elements") < 0) {
        goto error;
    }
    if ((size_t)dst.len / (size_t)dst.itemsize != n
        || (size_t)elem.len != sw_codecs_elem_bytes(&b, n)) {
        PyErr_Format(PyExc_ValueError,
                     "%s: out must hold %zu values and elements %zu bytes; got %zd "
                     "values and %zd bytes", func, n, sw_codecs_elem_bytes(&b, n),
                     dst.len / dst.itemsize, elem.len);
        goto error;
    }
    for (i = 0; i < b.nlevels; i++) {
        if (sw_codecs_check_disjoint(&dst, &sv[i], func, "out", "scales") < 0) {
            goto error;
        }
    }
    if (sw_codecs_check_disjoint(&dst, &elem, func, "out", "elements") < 0) {
        goto error;
    }
    scratch_bytes = sw_codec_block_scratch(&b, (int)threads);
    scratch = PyMem_RawMalloc(scratch_bytes ? scratch_bytes : 1);
    if (scratch == NULL) {
        PyErr_NoMemory();
        goto error;
    }
    SW_CODECS_RUN(n, status = sw_codec_dequantize(&b, elem.buf, sv[0].buf,
                                                  b.nlevels == 2 ? sv[1].buf : NULL,
                                                  dst.buf, scratch, (int)threads, &bad));
    PyMem_RawFree(scratch);
    sw_codecs_release(&elem);
    sw_codecs_release(&dst);
    sw_codecs_release(&sv[0]);
    sw_codecs_release(&sv[1]);
    if (status == SW_CODEC_NONFINITE_SCALE) {
        if (bad == SIZE_MAX) {
            PyErr_Format(PyExc_ValueError,
                         "%s: the whole-tensor scale (the last plane) is not a finite "
                         "positive scale, and nonfinite_scales='error' was given", func);
        }
        else {
            PyErr_Format(PyExc_ValueError,
                         "%s: scales[0] at flat index %zu is not a finite positive "
                         "scale, and nonfinite_scales='error' was given", func, bad);
        }
        return NULL;
    }
    Py_RETURN_NONE;

error:
    PyMem_RawFree(scratch);
    sw_codecs_release(&elem);
    sw_codecs_release(&dst);
    sw_codecs_release(&sv[0]);
    sw_codecs_release(&sv[1]);
    return NULL;
}

/* _codec_relayout(src, dst, dtype, axes, layout, to_axes, to_layout): the
 * level-0 scales of one layout copied into another's plane. */
static PyObject *
sw_codecs_relayout(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    const char *func = "relayout";
    sw_state *st = sw_state_of_module(module);
    Py_buffer src = {0}, dst = {0};
    sw_codec_block b;
    sw_codec_grid to;
    size_t n, n2, need_from, need_to, bad = 0, bytes;
    void *scratch = NULL;
    int size, status, a;

    if (nargs != 7) {
        PyErr_Format(PyExc_TypeError, "_codec_relayout() takes 7 arguments (%zd given)",
                     nargs);
        return NULL;
    }
    if (sw_codecs_block_format(st, args[2], func, &b) < 0
        || sw_codecs_grid(args[3], args[4], func, &b.grid, &n, &need_from) < 0
        || sw_codecs_grid(args[5], args[6], func, &to, &n2, &need_to) < 0) {
        return NULL;
    }
    /* the same blocks: the same extents and blocks, axis by axis */
    if (to.ndim != b.grid.ndim) {
        goto mismatch;
    }
    for (a = 0; a < to.ndim; a++) {
        if (to.axis[a].extent != b.grid.axis[a].extent
            || to.axis[a].block != b.grid.axis[a].block) {
            goto mismatch;
        }
    }
    size = sw_codec_code_size(b.scale[0].bits);
    if (sw_codecs_view(args[0], &src, 0, func, "scales") < 0
        || sw_codecs_view(args[1], &dst, 1, func, "out") < 0) {
        goto error;
    }
    if (sw_codecs_check_codes(&src, size, func, "scales") < 0
        || sw_codecs_check_codes(&dst, size, func, "out") < 0
        || sw_codecs_check_disjoint(&src, &dst, func, "scales", "out") < 0) {
        goto error;
    }
    if ((size_t)src.len / (size_t)size < need_from || (size_t)dst.len / (size_t)size < need_to) {
        PyErr_Format(PyExc_ValueError, "%s: the scale planes must hold %zu and %zu codes",
                     func, need_from, need_to);
        goto error;
    }
    bytes = sw_codec_relayout_scratch(&b.grid);
    scratch = PyMem_RawMalloc(bytes ? bytes : 1);
    if (scratch == NULL) {
        PyErr_NoMemory();
        goto error;
    }
    SW_CODECS_RUN(n, status = sw_codec_relayout_scales(&b.grid, src.buf, &to, dst.buf,
                                                       size, scratch, &bad));
    PyMem_RawFree(scratch);
    sw_codecs_release(&src);
    sw_codecs_release(&dst);
    if (status == SW_CODEC_BAD_SCALE_COPY) {
        return PyLong_FromSize_t(bad);
    }
    Py_RETURN_NONE;

mismatch:
    PyErr_Format(PyExc_ValueError, "%s: the two grids describe different blocks", func);
    return NULL;

error:
    PyMem_RawFree(scratch);
    sw_codecs_release(&src);
    sw_codecs_release(&dst);
    return NULL;
}

/* _codec_scale_offset(axes, layout, coords): the level-0 scale plane
 * offset of the element at `coords` (a tuple of ints, one per axis). */
static PyObject *
sw_codecs_scale_offset(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    const char *func = "scale_index";
    sw_codec_grid g;
    size_t n, plane, compact = 0, bb = 0, r = 0, c = 0;
    int a;

    (void)module;
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError, "_codec_scale_offset() takes 3 arguments (%zd "
                     "given)", nargs);
        return NULL;
    }
    if (sw_codecs_grid(args[0], args[1], func, &g, &n, &plane) < 0) {
        return NULL;
    }
    if (!PyTuple_CheckExact(args[2]) || PyTuple_GET_SIZE(args[2]) != g.ndim) {
        PyErr_Format(PyExc_TypeError, "%s: coords must be a tuple of %d ints", func,
                     g.ndim);
        return NULL;
    }
    for (a = 0; a < g.ndim; a++) {
        const sw_codec_axis *x = &g.axis[a];
        size_t i, k;
        if (sw_codecs_count(PyTuple_GET_ITEM(args[2], a), func, "a coordinate", &i) < 0) {
            return NULL;
        }
        if (i >= x->extent) {
            PyErr_Format(PyExc_ValueError, "%s: coordinate %zu is out of range for an "
                         "axis of %zu", func, i, x->extent);
            return NULL;
        }
        k = x->expanded ? i : i / x->block;
        compact += k * x->compact;
        bb += k * x->batch;
        r += k * x->row;
        c += k * x->col;
    }
    return PyLong_FromSize_t(sw_codec_scale_offset(&g, compact, bb, r, c));
}

PyMethodDef sw_codecs_methods[] = {
    {"_codec_encode", SW_CFUNC(sw_codecs_encode), METH_FASTCALL,
     PyDoc_STR("_codec_encode(values, out, dtype, source, rounding, overflow, "
               "nan, nan_code, nan_code_negative, seed, sign, threads, path=0, /)"
               "\n--\n\n"
               "Encode the values in one buffer into codes in another "
               "(stride_weave.codecs.encode is the public interface).")},
    {"_codec_decode", SW_CFUNC(sw_codecs_decode), METH_FASTCALL,
     PyDoc_STR("_codec_decode(codes, out, dtype, out_type, threads, /)\n--\n\n"
               "Decode codes into float32, float64, float16 or bfloat16 values "
               "(stride_weave.codecs.decode is the public interface).")},
    {"_codec_pack", SW_CFUNC(sw_codecs_pack), METH_FASTCALL,
     PyDoc_STR("_codec_pack(codes, out, dtype, threads, /)\n--\n\n"
               "Pack codes into DLPack's little-endian bit stream "
               "(stride_weave.codecs.pack is the public interface).")},
    {"_codec_unpack", SW_CFUNC(sw_codecs_unpack), METH_FASTCALL,
     PyDoc_STR("_codec_unpack(data, out, dtype, count, threads, /)\n--\n\n"
               "Unpack count codes from a packed bit stream "
               "(stride_weave.codecs.unpack is the public interface).")},
    {"_codec_quantize", SW_CFUNC(sw_codecs_quantize), METH_FASTCALL,
     PyDoc_STR("_codec_quantize(values, elements, scales, dtype, axes, layout, "
               "scale_rule, rounding, seed, packed, amax_floor, threads, path=0, /)"
               "\n--\n\n"
               "Quantize values into element and scale planes "
               "(stride_weave.codecs.quantize is the public interface).")},
    {"_codec_dequantize", SW_CFUNC(sw_codecs_dequantize), METH_FASTCALL,
     PyDoc_STR("_codec_dequantize(elements, scales, out, dtype, axes, layout, packed, "
               "nonfinite_error, out_type, threads, /)\n--\n\n"
               "Dequantize element and scale planes into values "
               "(stride_weave.codecs.dequantize is the public interface).")},
    {"_codec_relayout", SW_CFUNC(sw_codecs_relayout), METH_FASTCALL,
     PyDoc_STR("_codec_relayout(scales, out, dtype, axes, layout, to_axes, to_layout, "
               "/)\n--\n\n"
               "Copy level-0 scales into another layout's plane "
               "(stride_weave.codecs.relayout is the public interface).")},
    {"_codec_scale_offset", SW_CFUNC(sw_codecs_scale_offset), METH_FASTCALL,
     PyDoc_STR("_codec_scale_offset(axes, layout, coords, /)\n--\n\n"
               "The level-0 scale plane offset of an element "
               "(stride_weave.codecs.scale_index is the public interface).")},
    {NULL, NULL, 0, NULL},
};
