/* codec/kernel64.c: the fast converter in 64-bit lanes.
 *
 * Owns the twin of kernel32.c's converter for float64 values, and for
 * float32-like values in formats that 32-bit lanes cannot hold (codes or
 * exponent ranges wider than float32's, 64-bit integers): the same
 * algorithm and the same plan (kernel32.c makes it), with float64's 52
 * mantissa bits and bias 1023; a float32-like value widens to float64
 * exactly first.  The two files are kept line for line alike: a change
 * to the algorithm is made in both, and the differential tests run both
 * against the general converter.
 *
 * Pure C: no PyObject, no PyErr.
 */
#include "internal.h"

#define SW_K64_CHUNK 256
#define SW_K64_INF 0x7FF0000000000000ULL
#define SW_K64_ABS 0x7FFFFFFFFFFFFFFFULL
#define SW_K64_IMPLICIT (1ULL << 52)

/* Mask and select, as kernel32.c's. */
static inline uint64_t
sw_k64_m(int c)
{
    return 0u - (uint64_t)(c != 0);
}

static inline uint64_t
sw_k64_sel(uint64_t m, uint64_t x, uint64_t y)
{
    return (x & m) | (y & ~m);
}

/* s clamped to [0, 63]. */
static inline uint64_t
sw_k64_clamp(int64_t s)
{
    int64_t lo = s < 0 ? 0 : s;

    return (uint64_t)(lo > 63 ? 63 : lo);
}

/* kernel32.c's sw_k32_inc in 64-bit lanes; `one` is the plan's 1 (see
 * sw_codec_plan.one: a constant shifted by a per-lane s stays scalar). */
static inline __attribute__((always_inline)) uint64_t
sw_k64_inc(uint64_t x, uint64_t s, uint64_t negm, uint64_t rtop, uint64_t one,
           const int mode)
{
    uint64_t full = (one << s) - 1u, half = (one << s) >> 1;

    switch (mode) {
    case SW_ROUND_NEAREST_AWAY:
        return half;
    case SW_ROUND_TOWARD_ZERO:
        return 0;
    case SW_ROUND_UP:
        return ~negm & full;
    case SW_ROUND_DOWN:
        return negm & full;
    case SW_ROUND_STOCHASTIC:
        return full - rtop;
    default:
        return (half - 1u + ((x >> s) & 1u)) & full;
    }
}

/* m (below 2**53) shifted right by s >= 0, rounded stochastically. */
static inline __attribute__((always_inline)) uint64_t
sw_k64_stochastic(uint64_t m, int64_t s, uint64_t r)
{
    uint64_t sc = sw_k64_clamp(s);
    uint64_t n = sw_k64_sel(sw_k64_m(s > 63), 0, m >> sc);
    uint64_t rem = m - (n << sc);
    uint64_t lo = rem << (s >= 1 && s <= 64 ? 64 - s : 0);
    uint64_t hi = m >> (s > 64 && s < 117 ? s - 64 : 0);
    uint64_t frac = s == 0 ? 0 : s <= 64 ? lo : s < 117 ? hi : 0;

    return n + (uint64_t)(r < frac);
}

static inline __attribute__((always_inline)) uint64_t
sw_k64_float(const sw_codec_plan *k, uint64_t u, int64_t se, uint64_t r,
             const int mode)
{
    /* every constant loaded first, every choice a select: see kernel32.c */
    const uint64_t tiny0 = k->tiny[0], tiny1 = k->tiny[1], ovf0 = k->ovf[0], ovf1 = k->ovf[1];
    const uint64_t zero0 = k->zero[0], zero1 = k->zero[1], inf0 = k->inf[0], inf1 = k->inf[1];
    const uint64_t nan0 = k->nan[0], nan1 = k->nan[1], negative = k->negative;
    const uint64_t sign = k->sign, max_mag = k->max_mag;
    const uint64_t unsig = sw_k64_m(!k->is_signed), subm = sw_k64_m(k->subnormals);
    const uint64_t keep = sw_k64_m(!k->magnitude), sh = (uint64_t)k->sh;
    uint64_t a = u & SW_K64_ABS, negm = (0u - (u >> 63)) & keep;
    int64_t T = k->T + se;
    uint64_t c = k->c + ((uint64_t)se << 52), t = (uint64_t)T << 52;
    uint64_t x, n, e, e1, m, sc, d, mag, res, rtop;
    int64_t s;

    x = a - c;
    rtop = sh ? r >> (64 - sh) : 0;
    n = (x + sw_k64_inc(x, sh, negm, rtop, k->one, mode)) >> sh;
    e = a >> 52;
    e1 = e > 1 ? e : 1;
    m = (a & (SW_K64_IMPLICIT - 1)) | (sw_k64_m(e != 0) & SW_K64_IMPLICIT);
    s = T - (int64_t)e1 + (int64_t)sh;
    sc = sw_k64_clamp(s);
    if (mode == SW_ROUND_STOCHASTIC) {
        d = sw_k64_stochastic(m, s < 0 ? 0 : s, r);
    }
    else {
        d = (m + sw_k64_inc(m, sc, negm, 0, k->one, mode)) >> sc;
    }
    mag = sw_k64_sel(sw_k64_m(a >= t), n, d & subm);
    res = mag | (sign & negm);
    res = sw_k64_sel(sw_k64_m(mag == 0), sw_k64_sel(negm, tiny1, tiny0), res);
    res = sw_k64_sel(sw_k64_m(mag > max_mag), sw_k64_sel(negm, ovf1, ovf0), res);
    res = sw_k64_sel(negm & unsig, negative, res);
    res = sw_k64_sel(sw_k64_m(a == 0), sw_k64_sel(negm, zero1, zero0), res);
    res = sw_k64_sel(sw_k64_m(a == SW_K64_INF), sw_k64_sel(negm, inf1, inf0), res);
    /* a NaN whose payload the format keeps is fixed up from the source's
     * own bits after the loop (sw_k64_payloads) */
    return sw_k64_sel(sw_k64_m(a > SW_K64_INF), sw_k64_sel(negm, nan1, nan0), res);
}

static inline __attribute__((always_inline)) uint64_t
sw_k64_int(const sw_codec_plan *k, uint64_t u, int64_t se, uint64_t r,
           const int mode)
{
    const uint64_t hi_neg = k->range.hi_neg, hi_pos = k->range.hi_pos;
    const uint64_t ovf_neg = k->range.ovf_neg, ovf_pos = k->range.ovf_pos;
    const uint64_t mask = k->mask, nan = k->nan[0], keep = sw_k64_m(!k->magnitude);
    const int64_t q = k->q;
    uint64_t a = u & SW_K64_ABS, negm = (0u - (u >> 63)) & keep;
    uint64_t e = a >> 52, e1 = e > 1 ? e : 1;
    uint64_t m = (a & (SW_K64_IMPLICIT - 1)) | (sw_k64_m(e != 0) & SW_K64_IMPLICIT);
    int64_t L = (int64_t)e1 - 1075 - (q + se), s = -L;
    uint64_t d, mag, huge, res, out;

    if (mode == SW_ROUND_STOCHASTIC) {
        d = sw_k64_stochastic(m, s < 0 ? 0 : s, r);
    }
    else {
        uint64_t sc = sw_k64_clamp(s);
        d = (m + sw_k64_inc(m, sc, negm, 0, k->one, mode)) >> sc;
    }
    huge = sw_k64_m(L >= 11) | sw_k64_m(a >= SW_K64_INF);
    mag = sw_k64_sel(sw_k64_m(L >= 0), m << sw_k64_clamp(L > 10 ? 10 : L), d);
    negm &= sw_k64_m(mag != 0) | huge;
    out = huge | sw_k64_m(mag > sw_k64_sel(negm, hi_neg, hi_pos));
    res = sw_k64_sel(out, sw_k64_sel(negm, ovf_neg, ovf_pos),
                     sw_k64_sel(negm, 0u - mag, mag) & mask);
    return sw_k64_sel(sw_k64_m(a > SW_K64_INF), nan, res);
}

static inline __attribute__((always_inline)) uint64_t
sw_k64_one(const sw_codec_plan *k, uint64_t u, int64_t se, uint64_t index,
           const int mode, const int kernel)
{
    uint64_t r = mode == SW_ROUND_STOCHASTIC ? sw_codec_draw(k->seedmix, index) : 0;

    if (kernel == SW_KERNEL_BOOL) {
        uint64_t a = u & SW_K64_ABS;
        return sw_k64_sel(sw_k64_m(a > SW_K64_INF), k->nan[0], (uint64_t)(a != 0));
    }
    if (kernel == SW_KERNEL_INT) {
        return sw_k64_int(k, u, se, r, mode);
    }
    return sw_k64_float(k, u, se, r, mode);
}

static inline __attribute__((always_inline)) void
sw_k64_loop(const sw_codec_plan *k, const uint64_t *restrict in,
            uint64_t *restrict out, size_t n, int64_t se, uint64_t index,
            const int mode, const int kernel)
{
    const sw_codec_plan kk = *k;
    size_t i;

    for (i = 0; i < n; i++) {
        out[i] = sw_k64_one(&kk, in[i], se, index + i, mode, kernel);
    }
}

static inline __attribute__((always_inline)) void
sw_k64_modes(const sw_codec_plan *k, const uint64_t *in, uint64_t *out, size_t n,
             int64_t se, uint64_t index, const int kernel)
{
    switch (k->mode) {
    case SW_ROUND_NEAREST_AWAY:
        sw_k64_loop(k, in, out, n, se, index, SW_ROUND_NEAREST_AWAY, kernel);
        break;
    case SW_ROUND_TOWARD_ZERO:
        sw_k64_loop(k, in, out, n, se, index, SW_ROUND_TOWARD_ZERO, kernel);
        break;
    case SW_ROUND_UP:
        sw_k64_loop(k, in, out, n, se, index, SW_ROUND_UP, kernel);
        break;
    case SW_ROUND_DOWN:
        sw_k64_loop(k, in, out, n, se, index, SW_ROUND_DOWN, kernel);
        break;
    case SW_ROUND_STOCHASTIC:
        sw_k64_loop(k, in, out, n, se, index, SW_ROUND_STOCHASTIC, kernel);
        break;
    default:
        sw_k64_loop(k, in, out, n, se, index, SW_ROUND_NEAREST_EVEN, kernel);
        break;
    }
}

SW_CODEC_HOT static void
sw_k64_float_chunk(const sw_codec_plan *k, const uint64_t *in, uint64_t *out,
                   size_t n, int64_t se, uint64_t index)
{
    sw_k64_modes(k, in, out, n, se, index, SW_KERNEL_FLOAT);
}

SW_CODEC_HOT static void
sw_k64_int_chunk(const sw_codec_plan *k, const uint64_t *in, uint64_t *out,
                 size_t n, int64_t se, uint64_t index)
{
    sw_k64_modes(k, in, out, n, se, index, SW_KERNEL_INT);
}

static void
sw_k64_chunk(const sw_codec_plan *k, const uint64_t *in, uint64_t *out, size_t n,
             int64_t se, uint64_t index)
{
    switch (k->kernel) {
    case SW_KERNEL_INT:
        sw_k64_int_chunk(k, in, out, n, se, index);
        break;
    case SW_KERNEL_BOOL:
        sw_k64_loop(k, in, out, n, se, index, SW_ROUND_NEAREST_EVEN, SW_KERNEL_BOOL);
        break;
    default:
        sw_k64_float_chunk(k, in, out, n, se, index);
        break;
    }
}

/* The codes of NaNs whose payload the format keeps, from the source's
 * own bits. */
static void
sw_k64_payloads(const sw_codec_plan *k, const void *src, uint64_t *codes, size_t n)
{
    int size = sw_codec_float_size(k->source);
    uint64_t top = size == 8 ? SW_K64_INF : size == 4 ? 0x7F800000u
                   : k->source == SW_FLOAT16 ? 0x7C00u : 0x7F80u;
    uint64_t sign = 1ULL << (8 * size - 1);
    size_t i;

    for (i = 0; i < n; i++) {
        uint64_t u = sw_codec_load(src, size, i);
        if ((u & ~sign) > top) {
            codes[i] = sw_codec_nan_payload(k->fmt, k->nan_rule, k->source, u);
        }
    }
}

size_t
sw_codec_k64_run(const sw_codec_plan *k, const void *src, void *dst, int dst_size,
                 size_t n, int se, uint64_t index)
{
    uint64_t bits[SW_K64_CHUNK], codes[SW_K64_CHUNK];
    int size = sw_codec_float_size(k->source);
    size_t i, j, m;

    for (i = 0; i < n; i += m) {
        const char *s = (const char *)src + (size_t)size * i;
        m = n - i < SW_K64_CHUNK ? n - i : SW_K64_CHUNK;
        sw_codec_prefetch(src, (size_t)size * n, (size_t)size * i, (size_t)size * m);
        if (k->source == SW_FLOAT64) {
            memcpy(bits, s, 8 * m);
        }
        else {
            for (j = 0; j < m; j++) {
                bits[j] = sw_codec_dbits(sw_codec_load_double(k->source, s, j));
            }
        }
        if (k->nan_error) {
            for (j = 0; j < m; j++) {
                if ((bits[j] & SW_K64_ABS) > SW_K64_INF) {
                    return i + j;
                }
            }
        }
        sw_k64_chunk(k, bits, codes, m, se, index + i);
        if (k->nan_rule != SW_NAN_RULE_CANONICAL) {
            sw_k64_payloads(k, s, codes, m);
        }
        switch (dst_size) {
        case 1:
            for (j = 0; j < m; j++) {
                ((uint8_t *)dst)[i + j] = (uint8_t)codes[j];
            }
            break;
        case 8:
            memcpy((char *)dst + 8 * i, codes, 8 * m);
            break;
        default:
            for (j = 0; j < m; j++) {
                sw_codec_store(dst, dst_size, i + j, codes[j]);
            }
            break;
        }
    }
    return SIZE_MAX;
}
