/* codec/encode.c: encoding an array of values.
 *
 * Owns sw_codec_encode: which converter takes a call (the 32-bit-lane
 * kernel for float32, float16 and bfloat16 values where the format fits
 * it; else the 64-bit-lane kernel, which takes any source; else the
 * general converter), and the split of the array over threads.  Each
 * element's code depends on its value, the options and its flat index
 * alone, so any split gives the same codes.
 *
 * Pure C: no PyObject, no PyErr.
 */
#include "internal.h"

/* Elements below which a call stays on one thread, and the grain of a
 * split (a multiple of every vector width, and of a cache line of
 * one-byte codes). */
#define SW_ENCODE_MIN_PER_THREAD (1u << 16)
#define SW_ENCODE_GRAIN 64

typedef struct {
    const sw_codec_fmt *f;
    const sw_codec_opts *o;
    sw_codec_plan k;
    int path;               /* 32, 64, or 0 (general) */
    int source, src_size;
    const void *src;
    void *dst;
    int dst_size;
} sw_encode_call;

static size_t
sw_encode_task(void *arg, size_t lo, size_t hi, int piece)
{
    sw_encode_call *c = (sw_encode_call *)arg;
    const char *src = (const char *)c->src + lo * (size_t)c->src_size;
    char *dst = (char *)c->dst + lo * (size_t)c->dst_size;
    size_t bad;

    (void)piece;
    switch (c->path) {
    case 32:
        bad = sw_codec_k32_run(&c->k, src, dst, c->dst_size, hi - lo, 0, lo);
        break;
    case 64:
        bad = sw_codec_k64_run(&c->k, src, dst, c->dst_size, hi - lo, 0, lo);
        break;
    default:
        bad = sw_codec_general_run(c->f, c->o, c->source, src, dst, c->dst_size,
                                   hi - lo, 0, lo);
        break;
    }
    return bad == SIZE_MAX ? SIZE_MAX : lo + bad;
}

/* The fastest path for format f, options o and a source type, with its
 * plan in *k: 32, 64 or 0. */
int
sw_codec_choose(sw_codec_plan *k, const sw_codec_fmt *f, const sw_codec_opts *o,
                int source, int se)
{
    if (source != SW_FLOAT64 && o->path == SW_PATH_AUTO) {
        sw_codec_plan_make(k, f, o, source, 0);
        if (sw_codec_plan_takes(k, se)) {
            return 32;
        }
    }
    sw_codec_plan_make(k, f, o, source, 1);
    if (o->path != SW_PATH_GENERAL && sw_codec_plan_takes(k, se)) {
        return 64;
    }
    k->kernel = SW_KERNEL_NONE;
    return 0;
}

int
sw_codec_encode(const sw_codec_fmt *f, const sw_codec_opts *o, int source,
                const void *src, void *dst, int dst_size, size_t n, int threads,
                size_t *bad_index)
{
    sw_encode_call c;
    size_t bad;

    memset(&c, 0, sizeof(c));
    c.f = f;
    c.o = o;
    c.path = sw_codec_choose(&c.k, f, o, source, 0);
    c.source = source;
    c.src_size = sw_codec_float_size(source);
    c.src = src;
    c.dst = dst;
    c.dst_size = dst_size;
    bad = sw_codec_parallel(threads, n, SW_ENCODE_GRAIN, SW_ENCODE_MIN_PER_THREAD,
                            sw_encode_task, &c);
    if (bad != SIZE_MAX) {
        *bad_index = bad;
        return SW_CODEC_NAN;
    }
    return SW_CODEC_OK;
}
