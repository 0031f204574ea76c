/* codecs.c: the codec functions stride_weave.codecs calls.
 *
 * Owns the thin layer between Python and the pure-C codec kernels
 * (codecelem.c, codecpack.c, codecblock.c): _codec_encode, _codec_decode,
 * _codec_pack, _codec_unpack, _codec_quantize and _codec_dequantize.  Each
 * takes its options as exact ints (stride_weave.codecs turns names into
 * them), and follows one order:
 *   1. parse every option and read the formats from the descriptors'
 *      numeric records into C structs (no Python code runs after this);
 *   2. acquire every buffer view (an exporter's __buffer__ may run Python
 *      code; nothing learned in step 1 depends on it), holding them to the
 *      end, so no buffer can be resized or freed under the kernel;
 *   3. check each view's format, item size, contiguity and length;
 *   4. run the kernel, with the GIL released for large inputs;
 *   5. release the views and raise what the kernel reported.
 */
#include "codec.h"
#include "descriptor.h"
#include "level.h"

#include <string.h>

/* Above this many elements the kernels run without the GIL. */
#define SW_CODECS_GIL_MINSIZE 4096

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

/* ---- elements ------------------------------------------------------------------- */

/* _codec_encode(values, out, dtype, source, rounding, overflow, nan,
 *               nan_code, seed) */
static PyObject *
sw_codecs_encode(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    const char *func = "encode";
    sw_state *st = sw_state_of_module(module);
    Py_buffer src = {0}, dst = {0};
    sw_codec_fmt f;
    sw_codec_opts o;
    long source, rounding, overflow, nan;
    size_t n, bad = 0;
    int code_size, status, src_size;
    static const char src_chars[] = {'f', 'd', 'e', 'H'};
    static const int src_sizes[] = {4, 8, 2, 2};

    if (nargs != 9) {
        PyErr_Format(PyExc_TypeError, "_codec_encode() takes 9 arguments (%zd given)",
                     nargs);
        return NULL;
    }
    memset(&o, 0, sizeof(o));
    if (sw_codecs_format(st, args[2], func, "dtype", &f) < 0
        || sw_codecs_int(args[3], func, "source", 0, SW_SRC_COUNT - 1, &source) < 0
        || sw_codecs_int(args[4], func, "rounding", 0, SW_ROUND_COUNT - 1, &rounding) < 0
        || sw_codecs_int(args[5], func, "overflow", 0, SW_OVERFLOW_COUNT - 1, &overflow) < 0
        || sw_codecs_int(args[6], func, "nan", 0, SW_NANOPT_COUNT - 1, &nan) < 0
        || sw_codecs_u64(args[7], func, "nan_code", &o.nan_code) < 0
        || sw_codecs_u64(args[8], func, "seed", &o.seed) < 0) {
        return NULL;
    }
    if (overflow == SW_OVERFLOW_SPECIAL && !(f.kind == SW_NUM_FLOAT
                                            && (f.has_inf || f.has_nan))) {
        PyErr_Format(PyExc_ValueError,
                     "%s: overflow='special' needs a format with an infinity "
                     "or a NaN; %R has neither (use 'saturate')", func, args[2]);
        return NULL;
    }
    if (nan == SW_NANOPT_CODE && (o.nan_code & ~f.mask) != 0) {
        PyErr_Format(PyExc_ValueError,
                     "%s: nan code %llu does not fit the format's %d bits",
                     func, (unsigned long long)o.nan_code, f.bits);
        return NULL;
    }
    o.rounding = (int)rounding;
    o.overflow = (int)overflow;
    o.nan = (int)nan;
    sw_codec_resolve(&f, &o);
    code_size = sw_codec_code_size(f.bits);
    src_size = src_sizes[source];

    if (sw_codecs_view(args[0], &src, 0, func, "values") < 0
        || sw_codecs_view(args[1], &dst, 1, func, "out") < 0) {
        goto error;
    }
    if ((source == SW_SRC_BF16
         ? sw_codecs_check_codes(&src, 2, func, "values")
         : sw_codecs_check_float(&src, src_chars[source], src_size, func, "values")) < 0
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
    if (n >= SW_CODECS_GIL_MINSIZE) {
        Py_BEGIN_ALLOW_THREADS
        status = sw_codec_encode(&f, &o, (int)source, src.buf, dst.buf, code_size,
                                 n, &bad);
        Py_END_ALLOW_THREADS
    }
    else {
        status = sw_codec_encode(&f, &o, (int)source, src.buf, dst.buf, code_size,
                                 n, &bad);
    }
    sw_codecs_release(&src);
    sw_codecs_release(&dst);
    if (status == SW_CODEC_NAN) {
        PyErr_Format(PyExc_ValueError,
                     "%s: values[%zu] (flat index) is NaN, and nan='error' "
                     "was given (%R has no NaN)", func, bad, args[2]);
        return NULL;
    }
    Py_RETURN_NONE;

error:
    sw_codecs_release(&src);
    sw_codecs_release(&dst);
    return NULL;
}

/* _codec_decode(codes, out, dtype, to_f64) */
static PyObject *
sw_codecs_decode(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    const char *func = "decode";
    sw_state *st = sw_state_of_module(module);
    Py_buffer src = {0}, dst = {0};
    sw_codec_fmt f;
    long to_f64;
    size_t n;
    int code_size, out_size;
    float small32[256];
    double small64[256];
    float *t32 = NULL;
    double *t64 = NULL;
    void *heap = NULL;

    if (nargs != 4) {
        PyErr_Format(PyExc_TypeError, "_codec_decode() takes 4 arguments (%zd given)",
                     nargs);
        return NULL;
    }
    if (sw_codecs_format(st, args[2], func, "dtype", &f) < 0
        || sw_codecs_int(args[3], func, "to_f64", 0, 1, &to_f64) < 0) {
        return NULL;
    }
    code_size = sw_codec_code_size(f.bits);
    out_size = to_f64 ? 8 : 4;
    if (sw_codecs_view(args[0], &src, 0, func, "codes") < 0
        || sw_codecs_view(args[1], &dst, 1, func, "out") < 0) {
        goto error;
    }
    if (sw_codecs_check_codes(&src, code_size, func, "codes") < 0
        || sw_codecs_check_float(&dst, to_f64 ? 'd' : 'f', out_size, func, "out") < 0
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
    /* A table of every code's value pays for itself once there are more
     * codes than table entries (a small format's table is on the stack). */
    if (f.bits <= 8) {
        t32 = small32;
        t64 = small64;
    }
    else if (f.bits <= 16 && n >= ((size_t)1 << f.bits)) {
        heap = PyMem_RawMalloc(((size_t)out_size) << f.bits);
        if (heap == NULL) {
            PyErr_NoMemory();
            goto error;
        }
        t32 = (float *)heap;
        t64 = (double *)heap;
    }
    if (n >= SW_CODECS_GIL_MINSIZE) {
        Py_BEGIN_ALLOW_THREADS
        sw_codec_decode(&f, src.buf, code_size, dst.buf, (int)to_f64, n, t32, t64);
        Py_END_ALLOW_THREADS
    }
    else {
        sw_codec_decode(&f, src.buf, code_size, dst.buf, (int)to_f64, n, t32, t64);
    }
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

/* The width of a simple dtype (packing needs nothing else): 0, or -1. */
static int
sw_codecs_width(sw_state *st, PyObject *obj, const char *func, int *bits)
{
    sw_codec_fmt f;

    if (sw_codecs_format(st, obj, func, "dtype", &f) < 0) {
        return -1;
    }
    *bits = f.bits;
    return 0;
}

/* _codec_pack(codes, out, dtype) and _codec_unpack(data, out, dtype, count) */
static PyObject *
sw_codecs_pack_impl(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                    int unpack)
{
    const char *func = unpack ? "unpack" : "pack";
    sw_state *st = sw_state_of_module(module);
    Py_buffer src = {0}, dst = {0};
    size_t n = 0, nbytes;
    int bits, code_size;

    if (nargs != (unpack ? 4 : 3)) {
        PyErr_Format(PyExc_TypeError, "_codec_%s() takes %d arguments (%zd given)",
                     func, unpack ? 4 : 3, nargs);
        return NULL;
    }
    if (sw_codecs_width(st, args[2], func, &bits) < 0
        || (unpack && sw_codecs_count(args[3], func, "count", &n) < 0)) {
        return NULL;
    }
    code_size = sw_codec_code_size(bits);
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
    /* n < 2**63 and bits <= 64: n * bits / 8 fits a size_t computed this way */
    nbytes = sw_codec_row_bytes(bits, n);
    if (unpack) {
        if ((size_t)src.len < nbytes) {
            PyErr_Format(PyExc_ValueError,
                         "%s: count %zu of %d-bit codes needs %zu bytes of data, "
                         "got %zd", func, n, bits, nbytes, src.len);
            goto error;
        }
        if ((size_t)dst.len / (size_t)code_size != n) {
            PyErr_Format(PyExc_ValueError,
                         "%s: out must have room for exactly %zu codes, got %zu",
                         func, n, (size_t)dst.len / (size_t)code_size);
            goto error;
        }
    }
    else if ((size_t)dst.len != nbytes) {
        PyErr_Format(PyExc_ValueError,
                     "%s: %zu codes of %d bits pack into %zu bytes; out has %zd",
                     func, n, bits, nbytes, dst.len);
        goto error;
    }
    if (n >= SW_CODECS_GIL_MINSIZE) {
        Py_BEGIN_ALLOW_THREADS
        if (unpack) {
            sw_codec_unpack(src.buf, bits, n, dst.buf, code_size);
        }
        else {
            sw_codec_pack(src.buf, code_size, bits, n, dst.buf);
        }
        Py_END_ALLOW_THREADS
    }
    else if (unpack) {
        sw_codec_unpack(src.buf, bits, n, dst.buf, code_size);
    }
    else {
        sw_codec_pack(src.buf, code_size, bits, n, dst.buf);
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

/* The kernel's view of the block-scaled dtype `obj`: its element, each
 * level's scale and the level-0 block, read from the descriptor and the
 * numeric records; 0, or -1 with TypeError/ValueError. */
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
    {
        sw_level *level0 = (sw_level *)PyTuple_GET_ITEM(c->levels, 0);
        if (level0->block == st->whole) {
            b->whole_only = 1;
            b->block = 0;   /* the whole tensor: set from its size */
        }
        else {
            b->block = PyLong_AsSize_t(level0->block);    /* exact int > 0 */
            if (b->block == (size_t)-1 && PyErr_Occurred()) {
                PyErr_Clear();
                b->block = (size_t)-1;  /* beyond any row */
            }
        }
    }
    b->whole = nlevels == 2;
    b->pow2 = b->scale[0].p == 0;
    if (b->whole && b->pow2) {
        PyErr_Format(PyExc_ValueError,
                     "%s: %U scales its blocks by powers of two under a whole-tensor "
                     "scale; the codecs support a whole-tensor scale over float "
                     "block scales only", func, d->name);
        return -1;
    }
    return 0;
}

/* The options of quantize and dequantize that select a rule. */
static int
sw_codecs_rule(sw_codec_block *b, long rule, const char *func, PyObject *dtype)
{
    if (rule == SW_RULE_DEFAULT) {
        rule = b->pow2 ? SW_RULE_FLOOR : SW_RULE_AMAX;
    }
    if ((rule == SW_RULE_AMAX) == b->pow2) {
        PyErr_Format(PyExc_ValueError,
                     "%s: scale_rule %s does not apply to %R, whose block scales "
                     "are %s", func,
                     rule == SW_RULE_AMAX ? "'amax'" : "'floor', 'ceil', 'rceil' or 'even'",
                     dtype, b->pow2 ? "powers of two (use 'floor', 'ceil', 'rceil' or "
                     "'even')" : "floats (use 'amax')");
        return -1;
    }
    b->rule = (int)rule;
    return 0;
}

/* rows * length, and the bytes of each plane, each checked for overflow
 * (and a whole-tensor block set from the length): 0, or -1 with
 * ValueError.  A tensor without elements has no element bytes and no
 * level-0 scales, however many rows of none it has, except that a Whole
 * level always has its one scale. */
static int
sw_codecs_block_sizes(sw_codec_block *b, size_t rows, size_t length,
                      const char *func, size_t *n, size_t *elem_bytes,
                      size_t *nscales)
{
    size_t row_bytes, nb;

    if (b->whole_only) {
        /* a single Whole level: the whole tensor, as one row, is one block */
        b->block = length > 0 ? length : 1;
        if (rows > 1) {
            PyErr_Format(PyExc_ValueError,
                         "%s: a format scaled as a whole takes its tensor as one row, "
                         "got %zu rows", func, rows);
            return -1;
        }
    }
    if (length != 0 && rows > (size_t)PY_SSIZE_T_MAX / length / 8) {
        goto overflow;
    }
    *n = rows * length;
    if (*n == 0) {
        *elem_bytes = 0;
        *nscales = b->whole_only ? 1 : 0;
        return 0;
    }
    /* rows * length * 8 fits: so do the row's bytes and its blocks */
    row_bytes = b->packed ? sw_codec_row_bytes(b->elem.bits, length)
                          : length * (size_t)sw_codec_code_size(b->elem.bits);
    *elem_bytes = rows * row_bytes;
    nb = (length - 1) / b->block + 1;
    *nscales = rows * nb;
    return 0;
overflow:
    PyErr_Format(PyExc_ValueError, "%s: %zu rows of %zu elements is too large",
                 func, rows, length);
    return -1;
}

/* The scale planes of a call: a tuple of 1 or 2 buffers, acquired into
 * views[0..nlevels); 0, or -1 (every view acquired is released by the
 * caller's cleanup). */
static int
sw_codecs_scale_views(PyObject *scales, const sw_codec_block *b, Py_buffer *views,
                      int writable, size_t nscales, const char *func)
{
    Py_ssize_t i;

    if (!PyTuple_CheckExact(scales) || PyTuple_GET_SIZE(scales) != b->nlevels) {
        PyErr_Format(PyExc_TypeError, "%s: scales must be a tuple of %d buffers",
                     func, b->nlevels);
        return -1;
    }
    for (i = 0; i < b->nlevels; i++) {
        int size = sw_codec_code_size(b->scale[i].bits);
        size_t want = i == 0 ? nscales : 1;
        if (sw_codecs_view(PyTuple_GET_ITEM(scales, i), &views[i], writable, func,
                           "scales[i]") < 0
            || sw_codecs_check_codes(&views[i], size, func, "a scale plane") < 0) {
            return -1;
        }
        if ((size_t)views[i].len != want * (size_t)size) {
            PyErr_Format(PyExc_ValueError,
                         "%s: scales[%zd] must hold %zu codes of %d byte%s, got %zd "
                         "bytes", func, i, want, size, size == 1 ? "" : "s",
                         views[i].len);
            return -1;
        }
    }
    return 0;
}

/* _codec_quantize(values, elements, scales, dtype, rows, length, rule,
 *                 rounding, seed, packed) */
static PyObject *
sw_codecs_quantize(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    const char *func = "quantize";
    sw_state *st = sw_state_of_module(module);
    Py_buffer src = {0}, elem = {0}, sv[2] = {{0}, {0}};
    sw_codec_block b;
    long rule, rounding, packed;
    size_t rows, length, n, elem_bytes, nscales;
    int i;

    if (nargs != 10) {
        PyErr_Format(PyExc_TypeError, "_codec_quantize() takes 10 arguments (%zd given)",
                     nargs);
        return NULL;
    }
    if (sw_codecs_block_format(st, args[3], func, &b) < 0
        || sw_codecs_count(args[4], func, "rows", &rows) < 0
        || sw_codecs_count(args[5], func, "length", &length) < 0
        || sw_codecs_int(args[6], func, "scale_rule", 0, SW_RULE_COUNT - 1, &rule) < 0
        || sw_codecs_int(args[7], func, "rounding", 0, SW_ROUND_COUNT - 1, &rounding) < 0
        || sw_codecs_u64(args[8], func, "seed", &b.seed) < 0
        || sw_codecs_int(args[9], func, "packed", 0, 1, &packed) < 0
        || sw_codecs_rule(&b, rule, func, args[3]) < 0) {
        return NULL;
    }
    b.rounding = rounding == SW_ROUND_DEFAULT ? SW_ROUND_NEAREST_EVEN : (int)rounding;
    b.packed = (int)packed;
    if (sw_codecs_block_sizes(&b, rows, length, func, &n, &elem_bytes, &nscales) < 0) {
        return NULL;
    }
    if (sw_codecs_view(args[0], &src, 0, func, "values") < 0
        || sw_codecs_view(args[1], &elem, 1, func, "elements") < 0
        || sw_codecs_scale_views(args[2], &b, sv, 1, nscales, func) < 0) {
        goto error;
    }
    if (sw_codecs_format_char(&src) == 'd' && src.itemsize == 8 && b.pow2) {
        b.source = SW_SRC_F64;
    }
    else if (sw_codecs_check_float(&src, 'f', 4, func, "values") < 0) {
        goto error;
    }
    if (sw_codecs_check_codes(&elem, b.packed ? 1 : sw_codec_code_size(b.elem.bits),
                              func, "elements") < 0) {
        goto error;
    }
    if ((size_t)src.len / (size_t)src.itemsize != n || (size_t)elem.len != elem_bytes) {
        PyErr_Format(PyExc_ValueError,
                     "%s: values must hold %zu elements (%zu rows of %zu) and elements "
                     "%zu bytes; got %zd values and %zd bytes", func, n, rows, length,
                     elem_bytes, src.len / src.itemsize, elem.len);
        goto error;
    }
    for (i = 0; i < b.nlevels; i++) {
        if (sw_codecs_check_disjoint(&src, &sv[i], func, "values", "scales") < 0
            || sw_codecs_check_disjoint(&elem, &sv[i], func, "elements", "scales") < 0) {
            goto error;
        }
    }
    if (b.nlevels == 2 && sw_codecs_check_disjoint(&sv[0], &sv[1], func, "scales[0]",
                                                   "scales[1]") < 0) {
        goto error;
    }
    if (sw_codecs_check_disjoint(&src, &elem, func, "values", "elements") < 0) {
        goto error;
    }
    if (n >= SW_CODECS_GIL_MINSIZE) {
        Py_BEGIN_ALLOW_THREADS
        sw_codec_quantize(&b, src.buf, rows, length, elem.buf, sv[0].buf,
                          b.nlevels == 2 ? sv[1].buf : NULL);
        Py_END_ALLOW_THREADS
    }
    else {
        sw_codec_quantize(&b, src.buf, rows, length, elem.buf, sv[0].buf,
                          b.nlevels == 2 ? sv[1].buf : NULL);
    }
    sw_codecs_release(&src);
    sw_codecs_release(&elem);
    sw_codecs_release(&sv[0]);
    sw_codecs_release(&sv[1]);
    Py_RETURN_NONE;

error:
    sw_codecs_release(&src);
    sw_codecs_release(&elem);
    sw_codecs_release(&sv[0]);
    sw_codecs_release(&sv[1]);
    return NULL;
}

/* _codec_dequantize(elements, scales, out, dtype, rows, length, packed,
 *                   nonfinite_error) */
static PyObject *
sw_codecs_dequantize(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    const char *func = "dequantize";
    sw_state *st = sw_state_of_module(module);
    Py_buffer elem = {0}, dst = {0}, sv[2] = {{0}, {0}};
    sw_codec_block b;
    long packed, nonfinite;
    size_t rows, length, n, elem_bytes, nscales, bad = 0;
    int status, to_f64, i;

    if (nargs != 8) {
        PyErr_Format(PyExc_TypeError, "_codec_dequantize() takes 8 arguments (%zd given)",
                     nargs);
        return NULL;
    }
    if (sw_codecs_block_format(st, args[3], func, &b) < 0
        || sw_codecs_count(args[4], func, "rows", &rows) < 0
        || sw_codecs_count(args[5], func, "length", &length) < 0
        || sw_codecs_int(args[6], func, "packed", 0, 1, &packed) < 0
        || sw_codecs_int(args[7], func, "nonfinite_error", 0, 1, &nonfinite) < 0) {
        return NULL;
    }
    b.packed = (int)packed;
    b.nonfinite_error = (int)nonfinite;
    if (sw_codecs_block_sizes(&b, rows, length, func, &n, &elem_bytes, &nscales) < 0) {
        return NULL;
    }
    if (sw_codecs_view(args[0], &elem, 0, func, "elements") < 0
        || sw_codecs_scale_views(args[1], &b, sv, 0, nscales, func) < 0
        || sw_codecs_view(args[2], &dst, 1, func, "out") < 0) {
        goto error;
    }
    to_f64 = sw_codecs_format_char(&dst) == 'd';
    if (sw_codecs_check_float(&dst, to_f64 ? 'd' : 'f', to_f64 ? 8 : 4, func, "out") < 0
        || sw_codecs_check_codes(&elem, b.packed ? 1 : sw_codec_code_size(b.elem.bits),
                                 func, "elements") < 0) {
        goto error;
    }
    if ((size_t)dst.len / (size_t)dst.itemsize != n || (size_t)elem.len != elem_bytes) {
        PyErr_Format(PyExc_ValueError,
                     "%s: out must hold %zu values (%zu rows of %zu) and elements %zu "
                     "bytes; got %zd values and %zd bytes", func, n, rows, length,
                     elem_bytes, dst.len / dst.itemsize, elem.len);
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
    if (n >= SW_CODECS_GIL_MINSIZE) {
        Py_BEGIN_ALLOW_THREADS
        status = sw_codec_dequantize(&b, elem.buf, sv[0].buf,
                                     b.nlevels == 2 ? sv[1].buf : NULL, rows, length,
                                     dst.buf, to_f64, &bad);
        Py_END_ALLOW_THREADS
    }
    else {
        status = sw_codec_dequantize(&b, elem.buf, sv[0].buf,
                                     b.nlevels == 2 ? sv[1].buf : NULL, rows, length,
                                     dst.buf, to_f64, &bad);
    }
    sw_codecs_release(&elem);
    sw_codecs_release(&dst);
    sw_codecs_release(&sv[0]);
    sw_codecs_release(&sv[1]);
    if (status == SW_CODEC_NONFINITE_SCALE) {
        PyErr_Format(PyExc_ValueError,
                     "%s: scale %zu (flat index; the whole-tensor scale is 0 of the "
                     "last plane) is not finite, and nonfinite_scales='error' was "
                     "given", func, bad);
        return NULL;
    }
    Py_RETURN_NONE;

error:
    sw_codecs_release(&elem);
    sw_codecs_release(&dst);
    sw_codecs_release(&sv[0]);
    sw_codecs_release(&sv[1]);
    return NULL;
}

PyMethodDef sw_codecs_methods[] = {
    {"_codec_encode", SW_CFUNC(sw_codecs_encode), METH_FASTCALL,
     PyDoc_STR("_codec_encode(values, out, dtype, source, rounding, overflow, "
               "nan, nan_code, seed, /)\n--\n\n"
               "Encode the values in one buffer into codes in another "
               "(stride_weave.codecs.encode is the public interface).")},
    {"_codec_decode", SW_CFUNC(sw_codecs_decode), METH_FASTCALL,
     PyDoc_STR("_codec_decode(codes, out, dtype, to_f64, /)\n--\n\n"
               "Decode codes into float32 or float64 values "
               "(stride_weave.codecs.decode is the public interface).")},
    {"_codec_pack", SW_CFUNC(sw_codecs_pack), METH_FASTCALL,
     PyDoc_STR("_codec_pack(codes, out, dtype, /)\n--\n\n"
               "Pack codes into DLPack's little-endian bit stream "
               "(stride_weave.codecs.pack is the public interface).")},
    {"_codec_unpack", SW_CFUNC(sw_codecs_unpack), METH_FASTCALL,
     PyDoc_STR("_codec_unpack(data, out, dtype, count, /)\n--\n\n"
               "Unpack count codes from a packed bit stream "
               "(stride_weave.codecs.unpack is the public interface).")},
    {"_codec_quantize", SW_CFUNC(sw_codecs_quantize), METH_FASTCALL,
     PyDoc_STR("_codec_quantize(values, elements, scales, dtype, rows, length, "
               "scale_rule, rounding, seed, packed, /)\n--\n\n"
               "Quantize rows of values into element and scale planes "
               "(stride_weave.codecs.quantize is the public interface).")},
    {"_codec_dequantize", SW_CFUNC(sw_codecs_dequantize), METH_FASTCALL,
     PyDoc_STR("_codec_dequantize(elements, scales, out, dtype, rows, length, "
               "packed, nonfinite_error, /)\n--\n\n"
               "Dequantize element and scale planes into rows of values "
               "(stride_weave.codecs.dequantize is the public interface).")},
    {NULL, NULL, 0, NULL},
};
