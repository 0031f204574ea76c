/* codec/decode.c: decoding an array of codes.
 *
 * Owns sw_codec_decode: codes into float32, float64, float16 or bfloat16
 * values, each exact or rounded once (nearest, ties to even).  A format
 * of at most 16 bits goes through a table of every code's value, filled
 * once per call (a format of at most 8 bits always; a wider one when
 * there are more codes than table entries), then read on up to `threads`
 * threads; wider formats decode each code on its own.
 *
 * Pure C: no PyObject, no PyErr.
 */
#include "internal.h"

#define SW_DECODE_MIN_PER_THREAD (1u << 16)
#define SW_DECODE_GRAIN 64

/* The bits of a code's value in a 16-bit output type: the exact value
 * rounded once to nearest, ties to even (a NaN: the type's quiet NaN with
 * the code's sign; a code of the output type itself: copied). */
static uint64_t
sw_decode_half(const sw_codec_fmt *f, int out, uint64_t code)
{
    sw_codec_fmt h;
    sw_codec_opts o;
    int is_nan;

    sw_codec_fmt_float(&h, out);
    if (f->kind == h.kind && f->bits == h.bits && f->p == h.p && f->bias == h.bias
        && f->is_signed && f->nan_encoding == SW_NAN_IEEE && f->has_inf) {
        return code & h.mask;
    }
    memset(&o, 0, sizeof(o));
    sw_codec_resolve(&h, &o);
    return sw_codec_encode_double(&h, &o, sw_codec_decode_double(f, code), 0, 0, &is_nan);
}

/* One code's value as the bits of output type `out`. */
static uint64_t
sw_decode_one(const sw_codec_fmt *f, int out, uint64_t code)
{
    switch (out) {
    case SW_FLOAT32:
        return sw_codec_decode_f32(f, code);
    case SW_FLOAT64:
        return sw_codec_decode_f64(f, code);
    default:
        return sw_decode_half(f, out, code);
    }
}

size_t
sw_codec_decode_table_bytes(const sw_codec_fmt *f, int out, size_t n)
{
    if (f->bits <= 8 || (f->bits <= 16 && n >= ((size_t)1 << f->bits))) {
        return ((size_t)1 << f->bits) * (size_t)sw_codec_float_size(out);
    }
    return 0;
}

typedef struct {
    const sw_codec_fmt *f;
    const void *src;
    int src_size;
    void *dst;
    int out, out_size;
    const void *table;
} sw_decode_call;

SW_CODEC_HOT static void
sw_decode_bytes32(const uint8_t *restrict s, const uint32_t *restrict table,
                  uint8_t mask, uint32_t *restrict d, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        d[i] = table[s[i] & mask];
    }
}

static size_t
sw_decode_task(void *arg, size_t lo, size_t hi, int piece)
{
    sw_decode_call *c = (sw_decode_call *)arg;
    const sw_codec_fmt *f = c->f;
    char *dst = (char *)c->dst + lo * (size_t)c->out_size;
    size_t i, n = hi - lo;

    (void)piece;
    if (c->table != NULL) {
        if (c->src_size == 1 && c->out_size == 4 && ((uintptr_t)dst % 4) == 0) {
            sw_decode_bytes32((const uint8_t *)c->src + lo, (const uint32_t *)c->table,
                              (uint8_t)f->mask, (uint32_t *)(void *)dst, n);
            return SIZE_MAX;
        }
        for (i = 0; i < n; i++) {
            uint64_t code = sw_codec_load(c->src, c->src_size, lo + i) & f->mask;
            memcpy(dst + i * (size_t)c->out_size,
                   (const char *)c->table + code * (size_t)c->out_size,
                   (size_t)c->out_size);
        }
        return SIZE_MAX;
    }
    for (i = 0; i < n; i++) {
        sw_codec_store(dst, c->out_size, i,
                       sw_decode_one(f, c->out, sw_codec_load(c->src, c->src_size, lo + i)));
    }
    return SIZE_MAX;
}

void
sw_codec_decode(const sw_codec_fmt *f, const void *src, int src_size, void *dst,
                int out, size_t n, void *table, int threads)
{
    sw_decode_call c;
    size_t i;

    c.f = f;
    c.src = src;
    c.src_size = src_size;
    c.dst = dst;
    c.out = out;
    c.out_size = sw_codec_float_size(out);
    c.table = table;
    if (table != NULL) {
        size_t count = (size_t)1 << f->bits;
        for (i = 0; i < count; i++) {
            sw_codec_store(table, c.out_size, i, sw_decode_one(f, out, i));
        }
    }
    sw_codec_parallel(threads, n, SW_DECODE_GRAIN, SW_DECODE_MIN_PER_THREAD,
                      sw_decode_task, &c);
}
