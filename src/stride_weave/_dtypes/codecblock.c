/* codecblock.c: block-scaled quantization, values into element and scale
 * planes and back.
 *
 * Owns the scale rules and the two passes of quantize over rows laid out
 * with the blocked axis last: first each block's largest magnitude and
 * scale, then the elements, divided by their block's scale and encoded
 * (codecelem.c), packed row by row (codecpack.c) when asked.
 *
 * Power-of-two scales (a scale format without mantissa bits, E8M0): the
 * shared exponent comes from the exponent bits of the block's largest
 * magnitude, never from a floating-point log2 (which rounds values just
 * below a power of two up to it); the elements are scaled exactly (the
 * exponent offset is folded into the conversion) and saturate, as OCP MX
 * v1.0 says.  A block holding an infinity or a NaN gets the NaN scale.
 * Float scales (NVFP4's E4M3 under a whole-tensor Float32) follow NVIDIA's
 * amax recipe in float32 arithmetic, each step one correctly rounded
 * float32 operation, against the whole-tensor scale as its level's format
 * holds it (the value dequantize reads back).  A tensor without elements
 * walks nothing.
 *
 * Pure C: no PyObject, no PyErr.
 */
#include "codec.h"

#include <float.h>
#include <string.h>

/* The elements encoded in one pass: every buffer of per-element codes is
 * this long, and every buffer of per-block state too (a block holds at
 * least one element, so a chunk holds at most this many blocks).  A pass
 * never takes more: the block loops cut a longer block into chunks, and
 * the row functions take blocks of at most this many elements. */
#define SW_CODECBLOCK_CHUNK 256

/* The values of every code of a format of at most 8 bits: an unsigned
 * char, or a code masked to those bits, indexes it. */
#define SW_CODECBLOCK_TABLE 256

/* ---- element format facts -------------------------------------------------- */

/* OCP MX reads an integer element as two's complement with bits - 2
 * fraction bits (MXINT8: -2 to 1 + 63/64); its largest exponent is 0. */
static int
sw_codecblock_elem_emax(const sw_codec_fmt *e)
{
    return e->kind == SW_NUM_INT ? 0 : e->emax;
}

static int
sw_codecblock_elem_mbits(const sw_codec_fmt *e)
{
    return e->kind == SW_NUM_INT ? e->bits - 2 : e->p;
}

static double
sw_codecblock_elem_max(const sw_codec_fmt *e)
{
    if (e->kind == SW_NUM_INT) {
        return (double)e->imax * sw_codec_pow2(-(e->bits - 2));
    }
    return e->max_finite;
}

/* ---- the largest magnitude of a block ---------------------------------------- */

/* The bits of max |x| over n float32 (NaN propagates: its magnitude bits
 * compare above every other value's), as an integer maximum the compiler
 * vectorizes. */
SW_CODEC_HOT static uint32_t
sw_codecblock_amax32(const float *src, size_t n)
{
    int32_t m = 0;      /* magnitudes are below 2**31: signed compares */
    size_t i;

    for (i = 0; i < n; i++) {
        int32_t a = (int32_t)(sw_codec_fbits(src[i]) & 0x7FFFFFFFu);
        m = a > m ? a : m;
    }
    return (uint32_t)m;
}

static uint64_t
sw_codecblock_amax64(const double *src, size_t n)
{
    uint64_t m = 0;
    size_t i;

    for (i = 0; i < n; i++) {
        uint64_t a = sw_codec_dbits(src[i]) & 0x7FFFFFFFFFFFFFFFULL;
        m = a > m ? a : m;
    }
    return m;
}

/* ---- power-of-two scales ------------------------------------------------------- */

/* The shared exponent of a block whose largest magnitude has the float64
 * bits `a` (finite, non-zero), by `rule`, before clamping. */
static int
sw_codecblock_shared_exponent(const sw_codec_block *b, uint64_t a)
{
    const sw_codec_fmt *e = &b->elem;
    int emax = sw_codecblock_elem_emax(e), k, s;
    uint64_t frac, max_frac;
    int exp = (int)(a >> 52);

    /* floor(log2(amax)) and the 52-bit fraction of its significand */
    if (exp == 0) {
        int top = 63 - __builtin_clzll(a);
        k = top - 1074;
        frac = (a << (52 - top)) & 0xFFFFFFFFFFFFFULL;
    }
    else {
        k = exp - 1023;
        frac = a & 0xFFFFFFFFFFFFFULL;
    }
    s = k - emax;
    switch (b->rule) {
    case SW_RULE_CEIL:
        return s + (frac != 0);
    case SW_RULE_RCEIL:
        /* amax / 2**s is in [2**emax, 2**(emax+1)): compare significands
         * with the element's largest value, 2**emax * (1 + max_frac) */
        max_frac = sw_codec_dbits(sw_codecblock_elem_max(e)) & 0xFFFFFFFFFFFFFULL;
        return s + (frac > max_frac);
    case SW_RULE_EVEN:
        /* amax rounded to the element's mantissa bits (half up) */
        return s + ((frac + (1ULL << (51 - sw_codecblock_elem_mbits(e)))) >> 52 != 0);
    default:    /* SW_RULE_FLOOR */
        return s;
    }
}

/* The code of the scale 2**se (clamped to the scale format's range), and
 * the clamped exponent. */
static uint64_t
sw_codecblock_pow2_code(const sw_codec_block *b, int *se)
{
    const sw_codec_fmt *s = &b->scale[0];
    sw_codec_opts o;
    int is_nan;

    if (*se < s->emin) {
        *se = s->emin;
    }
    if (*se > s->emax) {
        *se = s->emax;
    }
    memset(&o, 0, sizeof(o));
    o.rounding = SW_ROUND_NEAREST_EVEN;
    o.overflow = SW_OVERFLOW_SATURATE;
    return sw_codec_encode_double(s, &o, sw_codec_pow2(*se), 0, 0, &is_nan);
}

/* ---- the passes ---------------------------------------------------------------- */

/* The elements of a block through the fast converter: contiguous loops
 * over local constants (byte stores cannot alias them), which the
 * compiler vectorizes. */
SW_CODEC_HOT static void
sw_codecblock_fast_plain(const sw_codec_fast *k, const float *x,
                         unsigned char *restrict out, size_t m)
{
    const sw_codec_fast kk = *k;
    size_t t;

    for (t = 0; t < m; t++) {
        out[t] = (unsigned char)sw_codec_fast_one(&kk, sw_codec_fbits(x[t]));
    }
}

SW_CODEC_HOT static void
sw_codecblock_fast_scaled(const sw_codec_fast *k, const float *x, float recip,
                          unsigned char *restrict out, size_t m)
{
    const sw_codec_fast kk = *k;
    size_t t;

    for (t = 0; t < m; t++) {
        out[t] = (unsigned char)sw_codec_fast_one(&kk, sw_codec_fbits(x[t] * recip));
    }
}

/* ... and packed two to a byte (4-bit elements, m even or the row's
 * end, m at most a chunk), in one pass over a local buffer; `recip` 0
 * means unscaled. */
SW_CODEC_HOT static void
sw_codecblock_fast_nibbles(const sw_codec_fast *k, const float *x, float recip,
                           unsigned char *restrict out, size_t m)
{
    const sw_codec_fast kk = *k;
    unsigned char codes[SW_CODECBLOCK_CHUNK];
    size_t t;

    if (recip != 0.0f) {
        for (t = 0; t < m; t++) {
            codes[t] = (unsigned char)sw_codec_fast_one(&kk, sw_codec_fbits(x[t] * recip));
        }
    }
    else {
        for (t = 0; t < m; t++) {
            codes[t] = (unsigned char)sw_codec_fast_one(&kk, sw_codec_fbits(x[t]));
        }
    }
    for (t = 0; t < m / 2; t++) {
        out[t] = (unsigned char)((codes[2 * t] & 0x0F) | (codes[2 * t + 1] << 4));
    }
    if (m % 2) {
        out[m / 2] = codes[m - 1] & 0x0F;
    }
}

/* The element's code for a block whose scale is NaN: the element
 * format's NaN, else zero (a NaN scale makes every element NaN). */
static uint64_t
sw_codecblock_nan_element(const sw_codec_fmt *e)
{
    return e->kind == SW_NUM_FLOAT && e->has_nan ? e->nan_pos : 0;
}

/* The tensor's largest finite magnitude, as a float32 (float scales). */
SW_CODEC_HOT static float
sw_codecblock_tensor_amax(const float *src, size_t n)
{
    int32_t m = 0;
    size_t i;

    for (i = 0; i < n; i++) {
        int32_t a = (int32_t)(sw_codec_fbits(src[i]) & 0x7FFFFFFFu);
        a &= -(int32_t)(a < 0x7F800000);    /* infinities and NaNs count as 0 */
        m = a > m ? a : m;
    }
    return sw_codec_from_fbits((uint32_t)m);
}

/* What float scales need, set once per call: the scale format's
 * converter (saturating, nearest-even) and the float32 value of each of
 * its codes. */
typedef struct {
    sw_codec_fast k;
    int fast;
    float values[SW_CODECBLOCK_TABLE];
    float lo, hi, elem_max;
} sw_codecblock_floats;

static void
sw_codecblock_floats_init(sw_codecblock_floats *fs, const sw_codec_block *b)
{
    const sw_codec_fmt *s = &b->scale[0];
    sw_codec_opts o;
    size_t c;

    memset(&o, 0, sizeof(o));
    o.rounding = SW_ROUND_NEAREST_EVEN;
    o.overflow = SW_OVERFLOW_SATURATE;
    fs->fast = sw_codec_fast_f32(s, &o) && sw_codec_fast_init(&fs->k, s, &o, 0) == 0;
    if (s->bits <= 8) {
        for (c = 0; c < ((size_t)1 << s->bits); c++) {
            fs->values[c] = (float)sw_codec_decode_double(s, c);
        }
    }
    /* clamped to [the smallest normal scale, the largest], as torchao
     * clamps to [finfo.tiny, finfo.max] */
    fs->lo = (float)sw_codec_pow2(s->emin);
    fs->hi = (float)s->max_finite;
    fs->elem_max = (float)sw_codecblock_elem_max(&b->elem);
}

/* Float scales: the block's scale code and the reciprocal its elements
 * are multiplied by, as NVIDIA's recipe computes them in float32, under
 * the whole-tensor scale g. */
static uint64_t
sw_codecblock_float_scale(const sw_codec_block *b, const sw_codecblock_floats *fs,
                          float g, float amax, float *recip)
{
    const sw_codec_fmt *s = &b->scale[0];
    float sc = (amax / fs->elem_max) / g, dec;
    uint64_t code;

    if (!(sc >= fs->lo)) {
        sc = fs->lo;
    }
    if (sc > fs->hi) {
        sc = fs->hi;
    }
    if (fs->fast) {
        code = sw_codec_fast_one(&fs->k, sw_codec_fbits(sc));
    }
    else {
        sw_codec_opts o;
        int is_nan;

        memset(&o, 0, sizeof(o));
        o.rounding = SW_ROUND_NEAREST_EVEN;
        o.overflow = SW_OVERFLOW_SATURATE;
        code = sw_codec_encode_double(s, &o, (double)sc, 0, 0, &is_nan);
    }
    dec = s->bits <= 8 ? fs->values[code & s->mask] : (float)sw_codec_decode_double(s, code);
    *recip = (1.0f / g) / dec;
    return code;
}

/* The whole-tensor scale as the Whole level's format stores it, and its
 * code: g (positive, finite) rounded to that format, nearest-even, no
 * smaller than its smallest positive value and no larger than its largest
 * value float32 holds.  The blocks are scaled against this value, the one
 * dequantize reads back (for a Float32 level, g itself). */
static float
sw_codecblock_whole_scale(const sw_codec_fmt *w, float g, uint64_t *code)
{
    sw_codec_opts o;
    double v;
    int is_nan;

    memset(&o, 0, sizeof(o));
    o.rounding = SW_ROUND_NEAREST_EVEN;
    o.overflow = SW_OVERFLOW_SATURATE;
    *code = sw_codec_encode_double(w, &o, (double)g, 0, 0, &is_nan);
    v = sw_codec_decode_double(w, *code);
    if (!(v > 0.0) || v > FLT_MAX) {
        /* flushed to zero: the next value up; beyond float32: the next
         * value down (g itself is a float32) */
        o.rounding = v > 0.0 ? SW_ROUND_TOWARD_ZERO : SW_ROUND_UP;
        *code = sw_codec_encode_double(w, &o, (double)g, 0, 0, &is_nan);
        v = sw_codec_decode_double(w, *code);
    }
    return (float)v;
}

/* The code of the scale 2**se of a power-of-two format: the exponent
 * field itself for an unsigned format without zero (E8M0). */
static inline uint64_t
sw_codecblock_pow2_fast(const sw_codec_block *b, int *se)
{
    const sw_codec_fmt *s = &b->scale[0];

    if (!s->has_zero && !s->is_signed) {
        if (*se < s->emin) {
            *se = s->emin;
        }
        if (*se > s->emax) {
            *se = s->emax;
        }
        return (uint64_t)(*se - s->emin);
    }
    return sw_codecblock_pow2_code(b, se);
}

/* The scale code of an all-zero block (the smallest scale), which the one
 * scale of an empty tensor under a Whole level also gets. */
static uint64_t
sw_codecblock_zero_scale(const sw_codec_block *b, const sw_codecblock_floats *fs,
                         float g)
{
    float recip;
    int se = -100000;   /* clamped to the scale's smallest exponent */

    if (b->pow2) {
        return sw_codecblock_pow2_fast(b, &se);
    }
    return sw_codecblock_float_scale(b, fs, g, 0.0f, &recip);
}

/* The elements [i, i + m) of a row (one block's chunk) into `out`, one
 * code each, divided by the block's scale: 2**se, or multiplied by
 * `recip` (float scales). */
static inline void
sw_codecblock_elements(const sw_codec_block *b, const sw_codec_opts *eo,
                       sw_codec_fast *k, int fast, const char *row, size_t i,
                       size_t m, int special, int se, float recip,
                       size_t index, unsigned char *out)
{
    const sw_codec_fmt *e = &b->elem;
    int esize = sw_codec_code_size(e->bits);
    int mbits_int = e->kind == SW_NUM_INT ? e->bits - 2 : 0;
    int f32 = b->source == SW_SRC_F32, is_nan;
    size_t t;

    if (special) {
        for (t = 0; t < m; t++) {
            sw_codec_store(out, esize, t, sw_codecblock_nan_element(e));
        }
        return;
    }
    if (!b->pow2) {
        const float *x = (const float *)row + i;
        if (fast && esize == 1) {
            sw_codecblock_fast_scaled(k, x, recip, out, m);
            return;
        }
        for (t = 0; t < m; t++) {
            sw_codec_store(out, esize, t, sw_codec_encode_double(
                e, eo, (double)(x[t] * recip), -mbits_int, index + t, &is_nan));
        }
        return;
    }
    if (fast && esize == 1 && sw_codec_fast_rescale(k, se) == 0) {
        sw_codecblock_fast_plain(k, (const float *)row + i, out, m);
        return;
    }
    for (t = 0; t < m; t++) {
        double x = f32 ? (double)((const float *)row)[i + t] : ((const double *)row)[i + t];
        uint64_t code = sw_codec_encode_double(e, eo, x, se - mbits_int, index + t,
                                               &is_nan);
        if (e->kind == SW_NUM_INT && code == (1ULL << (e->bits - 1))) {
            code += 1;      /* symmetric: -(2**(bits-1) - 1) */
        }
        sw_codec_store(out, esize, t, code);
    }
}

/* m codes of one-byte elements into a row at element `start` (even):
 * packed two to a byte for 4-bit elements, else copied. */
static inline void
sw_codecblock_put(const unsigned char *codes, size_t m, int bits4,
                  unsigned char *restrict erow, size_t start)
{
    size_t t;

    if (bits4) {
        unsigned char *out = erow + start / 2;
        for (t = 0; t < m / 2; t++) {
            out[t] = (unsigned char)((codes[2 * t] & 0x0F) | (codes[2 * t + 1] << 4));
        }
        if (m % 2) {
            out[m / 2] = codes[m - 1] & 0x0F;
        }
    }
    else {
        memcpy(erow + start, codes, m);
    }
}

/* The common formats, a row at a time in one function (no call per
 * block): float32 input, nearest-even elements through the fast
 * converter, blocks of an even size up to a chunk (sw_codecblock_rowwise),
 * 4-bit elements packed or 8-bit ones.  MX: power-of-two scales of an
 * E8M0-like format. */
SW_CODEC_HOT static void
sw_codecblock_mx_row(const sw_codec_block *b, const sw_codec_opts *eo,
                     sw_codec_fast *k, const float *x, size_t length,
                     unsigned char *restrict erow, unsigned char *restrict srow,
                     size_t index)
{
    const sw_codec_fmt *e = &b->elem;
    size_t start, j, t, block = b->block;
    int bits4 = e->bits == 4;
    unsigned char codes[SW_CODECBLOCK_CHUNK];     /* one block: block <= CHUNK */

    for (j = 0, start = 0; start < length; j++, start += block) {
        size_t m = length - start < block ? length - start : block;
        int32_t am = 0;
        int se;

        for (t = 0; t < m; t++) {
            int32_t a = (int32_t)(sw_codec_fbits(x[start + t]) & 0x7FFFFFFFu);
            am = a > am ? a : am;
        }
        if (am >= 0x7F800000) {
            srow[j] = (unsigned char)b->scale[0].nan_pos;
            memset(codes, (int)sw_codecblock_nan_element(e), m);
        }
        else {
            se = am != 0 ? sw_codecblock_shared_exponent(
                               b, sw_codec_dbits((double)sw_codec_from_fbits((uint32_t)am)))
                         : -100000;
            srow[j] = (unsigned char)sw_codecblock_pow2_fast(b, &se);
            if (sw_codec_fast_rescale(k, se) == 0) {
                const sw_codec_fast kk = *k;
                for (t = 0; t < m; t++) {
                    codes[t] = (unsigned char)sw_codec_fast_one(&kk, sw_codec_fbits(x[start + t]));
                }
            }
            else {
                sw_codecblock_elements(b, eo, k, 0, (const char *)x, start, m, 0, se, 1.0f,
                                       index + start, codes);
            }
        }
        sw_codecblock_put(codes, m, bits4, erow, start);
    }
}

/* ... and float scales (NVFP4): NVIDIA's recipe, for the whole blocks
 * that fit a chunk at a time (CHUNK / block of them, up to CHUNK for
 * blocks of one element), so that the scales' divisions and conversions
 * vectorize too.  1 <= block <= CHUNK. */
static inline void
sw_codecblock_float_row_body(const sw_codec_block *b, const sw_codec_fast *k,
                             const sw_codecblock_floats *fs, float g, const float *x,
                             size_t length, unsigned char *restrict erow,
                             unsigned char *restrict srow, size_t block)
{
    const sw_codec_fast kk = *k, ks = fs->k;
    size_t start, t, nblocks, q;
    int bits4 = b->elem.bits == 4;
    float inv_g = 1.0f / g, lo = fs->lo, hi = fs->hi, emax = fs->elem_max;
    unsigned char nan_elem = (unsigned char)sw_codecblock_nan_element(&b->elem);
    size_t per_chunk = SW_CODECBLOCK_CHUNK / block * block;     /* >= block */
    unsigned char codes[SW_CODECBLOCK_CHUNK], scodes[SW_CODECBLOCK_CHUNK];
    float recips[SW_CODECBLOCK_CHUNK];
    int32_t amax[SW_CODECBLOCK_CHUNK];

    /* span <= per_chunk <= CHUNK elements, in nblocks <= span blocks */
    for (start = 0; start < length; start += per_chunk) {
        size_t span = length - start < per_chunk ? length - start : per_chunk;
        int special = 0;

        nblocks = (span + block - 1) / block;
        for (q = 0; q < nblocks; q++) {
            size_t m = span - q * block < block ? span - q * block : block;
            const float *xb = x + start + q * block;
            int32_t am = 0;
            for (t = 0; t < m; t++) {
                int32_t a = (int32_t)(sw_codec_fbits(xb[t]) & 0x7FFFFFFFu);
                am = a > am ? a : am;
            }
            amax[q] = am;
            special |= am >= 0x7F800000;
        }
        for (q = 0; q < nblocks; q++) {
            float sc = (sw_codec_from_fbits((uint32_t)amax[q]) / emax) / g;
            sc = sc >= lo ? sc : lo;
            sc = sc > hi ? hi : sc;
            scodes[q] = (unsigned char)sw_codec_fast_one(&ks, sw_codec_fbits(sc));
        }
        for (q = 0; q < nblocks; q++) {
            recips[q] = inv_g / fs->values[scodes[q]];
        }
        for (q = 0; q < nblocks; q++) {
            size_t m = span - q * block < block ? span - q * block : block;
            const float *xb = x + start + q * block;
            unsigned char *cb = codes + q * block;
            float recip = recips[q];
            for (t = 0; t < m; t++) {
                cb[t] = (unsigned char)sw_codec_fast_one(&kk, sw_codec_fbits(xb[t] * recip));
            }
        }
        if (special) {
            /* a block holding an infinity or a NaN: the NaN scale */
            for (q = 0; q < nblocks; q++) {
                if (amax[q] >= 0x7F800000) {
                    size_t m = span - q * block < block ? span - q * block : block;
                    scodes[q] = (unsigned char)b->scale[0].nan_pos;
                    memset(codes + q * block, nan_elem, m);
                }
            }
        }
        memcpy(srow + start / block, scodes, nblocks);
        sw_codecblock_put(codes, span, bits4, erow, start);
    }
}

/* 1 when the row functions take the format: a block fits a chunk (their
 * buffers), and is even (each block's 4-bit codes start on a byte); the
 * fast converter, one-byte scales of the kinds they compute. */
static int
sw_codecblock_rowwise(const sw_codec_block *b, int fast, const sw_codecblock_floats *fs)
{
    return fast && b->block >= 1 && b->block <= SW_CODECBLOCK_CHUNK && b->block % 2 == 0
           && (b->elem.bits == 8 || (b->elem.bits == 4 && b->packed))
           && b->scale[0].bits <= 8
           && (b->pow2 ? !b->scale[0].has_zero && !b->scale[0].is_signed
                       && b->elem.kind == SW_NUM_FLOAT
                       : fs->fast);
}

/* NVFP4's block of 16 as a constant (the inner loops unroll), and any
 * other block sw_codecblock_rowwise takes. */
SW_CODEC_HOT static void
sw_codecblock_float_row(const sw_codec_block *b, const sw_codec_fast *k,
                        const sw_codecblock_floats *fs, float g, const float *x,
                        size_t length, unsigned char *restrict erow,
                        unsigned char *restrict srow)
{
    if (b->block == 16) {
        sw_codecblock_float_row_body(b, k, fs, g, x, length, erow, srow, 16);
    }
    else {
        sw_codecblock_float_row_body(b, k, fs, g, x, length, erow, srow, b->block);
    }
}

void
sw_codec_quantize(const sw_codec_block *b, const void *src, size_t rows,
                  size_t length, unsigned char *elem, unsigned char *scale0,
                  unsigned char *scale1)
{
    const sw_codec_fmt *e = &b->elem;
    size_t nb = length == 0 ? 0 : (length - 1) / b->block + 1;
    int esize = sw_codec_code_size(e->bits);
    size_t row_bytes = b->packed ? sw_codec_row_bytes(e->bits, length)
                                 : length * (size_t)esize;
    int ssize = sw_codec_code_size(b->scale[0].bits);
    sw_codec_opts eo;
    sw_codec_fast k;
    sw_codecblock_floats fs;
    float g = 1.0f;
    size_t r, j, i;
    int fast, nibbles, rowwise;
    int f32 = b->source == SW_SRC_F32;
    unsigned char chunk[SW_CODECBLOCK_CHUNK * 8];  /* codes of <= 8 bytes */

    memset(&eo, 0, sizeof(eo));
    eo.rounding = b->rounding;
    eo.overflow = SW_OVERFLOW_SATURATE;
    eo.seed = b->seed;
    fast = f32 && sw_codec_fast_f32(e, &eo) && sw_codec_fast_init(&k, e, &eo, 0) == 0;
    nibbles = fast && b->packed && e->bits == 4;
    if (!b->pow2) {
        sw_codecblock_floats_init(&fs, b);
    }
    if (!b->pow2 && b->whole) {
        /* the whole-tensor scale: amax / (largest element * largest scale),
         * as its level stores it */
        float t = sw_codecblock_tensor_amax((const float *)src, rows * length);
        uint64_t gcode;
        if (t > 0.0f) {
            g = t / (float)(sw_codecblock_elem_max(e) * b->scale[0].max_finite);
        }
        if (!(g > 0.0f)) {
            g = 1.0f;   /* all zero (or underflowed): 1.0, finite */
        }
        g = sw_codecblock_whole_scale(&b->scale[1], g, &gcode);
        sw_codec_store(scale1, sw_codec_code_size(b->scale[1].bits), 0, gcode);
    }
    if (rows == 0 || length == 0) {
        /* no elements, however many rows of none: nothing to walk */
        if (b->whole_only) {
            sw_codec_store(scale0, ssize, 0, sw_codecblock_zero_scale(b, &fs, g));
        }
        return;
    }

    rowwise = sw_codecblock_rowwise(b, fast, &fs);
    for (r = 0; r < rows; r++) {
        const char *row = (const char *)src + r * length * (f32 ? 4 : 8);
        unsigned char *erow = elem + r * row_bytes;

        if (rowwise && b->pow2) {
            sw_codecblock_mx_row(b, &eo, &k, (const float *)row, length, erow,
                                 scale0 + r * nb, r * length);
            continue;
        }
        if (rowwise) {
            sw_codecblock_float_row(b, &k, &fs, g, (const float *)row, length, erow,
                                    scale0 + r * nb);
            continue;
        }
        if (b->packed) {
            memset(erow, 0, row_bytes);     /* packing ORs the codes in */
        }
        for (j = 0; j < nb; j++) {
            size_t start = j * b->block;
            size_t end = length - start > b->block ? start + b->block : length;
            uint64_t scode = 0;
            int se = 0, special;
            float recip = 1.0f;

            if (f32) {
                uint32_t a = sw_codecblock_amax32((const float *)row + start, end - start);
                special = a >= 0x7F800000u;
                if (!special && !b->pow2) {
                    scode = sw_codecblock_float_scale(b, &fs, g, sw_codec_from_fbits(a),
                                                      &recip);
                }
                else if (!special) {
                    se = a != 0 ? sw_codecblock_shared_exponent(
                                      b, sw_codec_dbits((double)sw_codec_from_fbits(a)))
                                : -100000;      /* all zero: the smallest scale */
                }
            }
            else {
                uint64_t a = sw_codecblock_amax64((const double *)row + start, end - start);
                special = a >= 0x7FF0000000000000ULL;
                se = special ? 0 : a != 0 ? sw_codecblock_shared_exponent(b, a) : -100000;
            }
            if (special) {
                scode = b->scale[0].has_nan ? b->scale[0].nan_pos : b->scale[0].max_mag;
            }
            else if (b->pow2) {
                scode = sw_codecblock_pow2_fast(b, &se);
            }
            sw_codec_store(scale0, ssize, r * nb + j, scode);

            /* the elements, a chunk at a time */
            for (i = start; i < end; i += SW_CODECBLOCK_CHUNK) {
                size_t m = end - i < SW_CODECBLOCK_CHUNK ? end - i : SW_CODECBLOCK_CHUNK;
                unsigned char *out = b->packed ? chunk : erow + i * (size_t)esize;

                /* 4-bit elements starting on a byte: encoded and packed in
                 * one pass */
                if (nibbles && !special && i % 2 == 0 && (m % 2 == 0 || i + m == length)
                    && (!b->pow2 || sw_codec_fast_rescale(&k, se) == 0)) {
                    sw_codecblock_fast_nibbles(&k, (const float *)row + i,
                                               b->pow2 ? 0.0f : recip, erow + i / 2, m);
                    continue;
                }

                sw_codecblock_elements(b, &eo, &k, fast, row, i, m, special, se, recip,
                                       r * length + i, out);
                if (b->packed) {
                    sw_codec_pack_at(chunk, esize, e->bits, m, erow, i);
                }
            }
        }
    }
}

int
sw_codec_dequantize(const sw_codec_block *b, const unsigned char *elem,
                    const unsigned char *scale0, const unsigned char *scale1,
                    size_t rows, size_t length, void *dst, int to_f64,
                    size_t *bad_index)
{
    const sw_codec_fmt *e = &b->elem;
    size_t nb = length == 0 ? 0 : (length - 1) / b->block + 1;
    size_t row_bytes = b->packed ? sw_codec_row_bytes(e->bits, length)
                                 : length * (size_t)sw_codec_code_size(e->bits);
    int esize = sw_codec_code_size(e->bits);
    int ssize = sw_codec_code_size(b->scale[0].bits);
    double g = 1.0, evalues[SW_CODECBLOCK_TABLE];
    size_t r, j, i, c;
    int table = e->bits <= 8;
    unsigned char codes[SW_CODECBLOCK_CHUNK * 8];  /* codes of <= 8 bytes */

    if (table) {
        for (c = 0; c < ((size_t)1 << e->bits); c++) {
            evalues[c] = sw_codec_decode_double(e, c);
            if (e->kind == SW_NUM_INT) {
                evalues[c] *= sw_codec_pow2(-(e->bits - 2));
            }
        }
    }
    if (b->whole) {
        g = sw_codec_decode_double(&b->scale[1],
                                   sw_codec_load(scale1, sw_codec_code_size(b->scale[1].bits), 0));
        if (!(g - g == 0.0) && b->nonfinite_error) {
            *bad_index = 0;
            return SW_CODEC_NONFINITE_SCALE;
        }
    }
    if (rows == 0 || length == 0) {
        /* no elements, however many rows of none: only a Whole level's
         * scale to check */
        if (b->whole_only && b->nonfinite_error) {
            double s = sw_codec_decode_double(&b->scale[0], sw_codec_load(scale0, ssize, 0));
            if (!(s - s == 0.0)) {
                *bad_index = 0;
                return SW_CODEC_NONFINITE_SCALE;
            }
        }
        return SW_CODEC_OK;
    }
    for (r = 0; r < rows; r++) {
        const unsigned char *erow = elem + r * row_bytes;

        for (j = 0; j < nb; j++) {
            size_t start = j * b->block;
            size_t end = start + b->block < length ? start + b->block : length;
            double scale = sw_codec_decode_double(&b->scale[0],
                                                  sw_codec_load(scale0, ssize, r * nb + j)) * g;

            if (!(scale - scale == 0.0) && b->nonfinite_error) {
                *bad_index = r * nb + j;
                return SW_CODEC_NONFINITE_SCALE;
            }
            for (i = start; i < end; i += SW_CODECBLOCK_CHUNK) {
                size_t m = end - i < SW_CODECBLOCK_CHUNK ? end - i : SW_CODECBLOCK_CHUNK, t;
                const unsigned char *src = erow + i * (size_t)esize;

                if (b->packed) {
                    sw_codec_unpack_at(erow, e->bits, i, m, codes, esize);
                    src = codes;
                }
                for (t = 0; t < m; t++) {
                    uint64_t code = sw_codec_load(src, esize, t) & e->mask;
                    double v = table ? evalues[code] : sw_codec_decode_double(e, code);
                    if (!table && e->kind == SW_NUM_INT) {
                        v *= sw_codec_pow2(-(e->bits - 2));
                    }
                    v *= scale;
                    if (to_f64) {
                        ((double *)dst)[r * length + i + t] = v;
                    }
                    else {
                        ((float *)dst)[r * length + i + t] = (float)v;
                    }
                }
            }
        }
    }
    return SW_CODEC_OK;
}
