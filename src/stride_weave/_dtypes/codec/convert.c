/* codec/convert.c: the general converter, one value at a time.
 *
 * Owns the double-based conversion of one value into any floating-point,
 * integer or boolean format up to 64 bits, and of one code back into its
 * exact value.  A value is rounded in the integer domain (guard and
 * sticky bits), and the biased exponent minus one plus the significand
 * with its implicit bit is the code, so a rounding carry flows into the
 * exponent and subnormals need no case of their own.  Every special case
 * is a decision format.c makes.
 *
 * It is the oracle the fast kernels (kernel32.c, kernel64.c) are tested
 * against, and the path for what they provably cannot take: formats whose
 * precision or exponent range exceeds float64's, and scale exponents
 * outside their constants' range.  No libm call, no -ffast-math (it would
 * delete the NaN checks).  Pure C: no PyObject, no PyErr.
 */
#include "internal.h"

/* ---- bits ---------------------------------------------------------------- */

/* The index of the highest set bit of `v` (v != 0). */
static inline int
sw_convert_log2(uint64_t v)
{
    return 63 - __builtin_clzll(v);
}

/* A finite non-zero double's magnitude bits `a` as m * 2**q, m the
 * integer significand (with its implicit bit), for the value x * 2**-eoff:
 * returns q. */
static inline int
sw_convert_split(uint64_t a, int eoff, uint64_t *m)
{
    int e = (int)(a >> 52);

    *m = a & 0xFFFFFFFFFFFFFULL;
    if (e != 0) {
        *m |= 1ULL << 52;
        return e - 1075 - eoff;
    }
    return -1074 - eoff;
}

double
sw_codec_pow2(int k)
{
    if (k > 1023) {
        return sw_codec_from_dbits(0x7ff0000000000000ULL);
    }
    if (k >= -1022) {
        return sw_codec_from_dbits((uint64_t)(k + 1023) << 52);
    }
    if (k >= -1074) {
        return sw_codec_from_dbits(1ULL << (k + 1074));
    }
    return 0.0;
}

/* v * 2**k for an integer-valued v, exactly whenever the result is a
 * double: a power below the normal range is applied in two steps. */
static inline double
sw_convert_scale(double v, int k)
{
    if (k >= -1022) {
        return v * sw_codec_pow2(k);
    }
    return v * sw_codec_pow2(k + 600) * sw_codec_pow2(-600);
}

float
sw_codec_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t e = (h >> 10) & 0x1F, m = h & 0x3FF;

    if (e == 0x1F) {
        return sw_codec_from_fbits(sign | 0x7F800000u | (m << 13));
    }
    if (e == 0) {
        /* m * 2**-24: exact in float32 */
        float v = (float)m * sw_codec_from_fbits(0x33800000);
        return sign ? -v : v;
    }
    return sw_codec_from_fbits(sign | ((e + 112) << 23) | (m << 13));
}

/* splitmix64's finalizer (sw_codec_draw applies it to a Weyl sequence
 * keyed by this), so results do not depend on chunking or threads. */
uint64_t
sw_codec_seedmix(uint64_t z)
{
    z ^= z >> 30;
    z *= 0xBF58476D1CE4E5B9ULL;
    z ^= z >> 27;
    z *= 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* ---- rounding ----------------------------------------------------------------- */

/* `m` divided by 2**sh (sh >= 0), rounded by `mode` for a value of sign
 * `neg`; `r` is the random draw of stochastic rounding, which rounds up
 * with probability (discarded fraction), to 64 bits.  Ties to even pick
 * the result whose code is even: the code is the result plus `odd` (mod
 * 2), which matters only for formats without mantissa bits, where the
 * last bit of the code is the exponent's. */
static inline uint64_t
sw_convert_round(uint64_t m, int sh, int neg, int mode, uint64_t r, int odd)
{
    uint64_t n, rem, half, frac;
    int up, above, tie;

    if (sh <= 0) {
        return m << (-sh);
    }
    if (sh >= 64) {
        /* m < 2**63: strictly below half of the quantum */
        n = 0;
        rem = m;
        above = 0;
        tie = 0;
        frac = sh < 128 ? m >> (sh - 64) : 0;
    }
    else {
        n = m >> sh;
        rem = m & ((1ULL << sh) - 1);
        half = 1ULL << (sh - 1);
        above = rem > half;
        tie = rem == half;
        frac = rem << (64 - sh);
    }
    switch (mode) {
    case SW_ROUND_NEAREST_AWAY:
        up = above || tie;
        break;
    case SW_ROUND_TOWARD_ZERO:
        up = 0;
        break;
    case SW_ROUND_UP:
        up = rem != 0 && !neg;
        break;
    case SW_ROUND_DOWN:
        up = rem != 0 && neg;
        break;
    case SW_ROUND_STOCHASTIC:
        up = r < frac;
        break;
    default:    /* nearest, ties to even */
        up = above || (tie && ((n + (uint64_t)odd) & 1));
        break;
    }
    return n + (uint64_t)up;
}

/* ---- integers ------------------------------------------------------------------ */

/* A value rounded to an integer: magnitude, sign, and whether it is at
 * least 2**64 (or infinite). */
typedef struct {
    uint64_t mag;
    int neg;
    int huge;
} sw_convert_int;

static sw_convert_int
sw_convert_to_int(int mode, uint64_t r, double x, int eoff)
{
    uint64_t u = sw_codec_dbits(x), a = u & 0x7FFFFFFFFFFFFFFFULL, m;
    sw_convert_int t = {0, (int)(u >> 63), 0};
    int q, lg;

    if (a >= 0x7FF0000000000000ULL) {
        t.huge = 1;
        return t;
    }
    if (a == 0) {
        return t;
    }
    q = sw_convert_split(a, eoff, &m);
    lg = q + sw_convert_log2(m);
    if (lg >= 64) {
        t.huge = 1;
        return t;
    }
    t.mag = sw_convert_round(m, -q, t.neg, mode, r, 0);
    if (t.mag == 0 && lg == 63) {
        t.huge = 1;     /* rounded up to 2**64 */
    }
    return t;
}

int
sw_codec_int_policy(const sw_codec_fmt *f, const sw_codec_opts *o)
{
    if (f->kind == SW_NUM_BOOL) {
        return SW_INT_BOOL;
    }
    if (o->mx_int) {
        return SW_INT_SYMMETRIC;
    }
    if (o->overflow == SW_OVERFLOW_SATURATE) {
        return SW_INT_SATURATE;
    }
    if (f->bits < 8) {
        return SW_INT_NARROW;
    }
    if (!f->is_signed && f->bits == 32) {
        return SW_INT_UNSIGNED32;
    }
    if (!f->is_signed && f->bits == 64) {
        return SW_INT_UNSIGNED64;
    }
    return SW_INT_NUMPY;
}

void
sw_codec_int_limits(const sw_codec_fmt *f, int policy, sw_codec_int_range *r)
{
    uint64_t ineg = f->is_signed ? (uint64_t)0 - (uint64_t)f->imin : 0;
    int wide = f->bits > 32;

    switch (policy) {
    case SW_INT_BOOL:
        /* a value is 1 unless it rounds to 0 */
        r->hi_pos = r->hi_neg = 0;
        r->ovf_pos = r->ovf_neg = 1;
        return;
    case SW_INT_SYMMETRIC:
        r->hi_pos = r->hi_neg = f->imax;
        r->ovf_pos = f->imax;
        r->ovf_neg = ((uint64_t)0 - f->imax) & f->mask;
        return;
    case SW_INT_SATURATE:
        r->hi_pos = f->imax;
        r->hi_neg = ineg;
        r->ovf_pos = f->imax;
        r->ovf_neg = (uint64_t)f->imin & f->mask;
        return;
    case SW_INT_NARROW:
        /* ml_dtypes' int4/uint4/int2/uint2: out of range is 0 */
        r->hi_pos = f->imax;
        r->hi_neg = ineg;
        r->ovf_pos = r->ovf_neg = 0;
        return;
    case SW_INT_UNSIGNED32:
        /* numpy's uint32: up to 2**32 - 1 the value; beyond, 0; below
         * -2**31 the 32-bit conversion's "integer indefinite" */
        r->hi_pos = 0xFFFFFFFFULL;
        r->hi_neg = 1ULL << 31;
        r->ovf_pos = 0;
        r->ovf_neg = 1ULL << 31;
        return;
    case SW_INT_UNSIGNED64:
        r->hi_pos = ~0ULL;
        r->hi_neg = 1ULL << 63;
        r->ovf_pos = 0;
        r->ovf_neg = 1ULL << 63;
        return;
    default:
        /* numpy's cast on x86-64: a conversion through a 32-bit integer
         * (formats of at most 32 bits) or a 64-bit one; out of its range
         * the "integer indefinite" value 2**31 (2**63), of which the
         * format keeps the low bits */
        r->hi_pos = wide ? (1ULL << 63) - 1 : (1ULL << 31) - 1;
        r->hi_neg = wide ? 1ULL << 63 : 1ULL << 31;
        r->ovf_pos = r->ovf_neg = (wide ? 1ULL << 63 : 1ULL << 31) & f->mask;
        return;
    }
}

uint64_t
sw_codec_int_apply(const sw_codec_fmt *f, int policy, uint64_t mag, int neg, int huge)
{
    sw_codec_int_range r;

    sw_codec_int_limits(f, policy, &r);
    neg = neg && (mag != 0 || huge);
    if (huge || mag > (neg ? r.hi_neg : r.hi_pos)) {
        return neg ? r.ovf_neg : r.ovf_pos;
    }
    return (neg ? (uint64_t)0 - mag : mag) & f->mask;
}

uint64_t
sw_codec_int_nan(const sw_codec_fmt *f, const sw_codec_opts *o)
{
    if (o->nan == SW_NANOPT_CODE) {
        return o->nan_code[0];
    }
    if (f->kind == SW_NUM_BOOL) {
        return 1;               /* numpy: bool(nan) is True */
    }
    switch (sw_codec_int_policy(f, o)) {
    case SW_INT_SATURATE:
    case SW_INT_SYMMETRIC:
    case SW_INT_NARROW:
        return 0;
    default:
        /* the conversion of NaN: "indefinite" */
        return (f->bits > 32 ? 1ULL << 63 : 1ULL << 31) & f->mask;
    }
}

static uint64_t
sw_convert_encode_int(const sw_codec_fmt *f, const sw_codec_opts *o, double x,
                      int eoff, uint64_t r, int *is_nan)
{
    sw_convert_int t;

    if (x != x) {
        *is_nan = 1;
        return sw_codec_int_nan(f, o);
    }
    if (o->sign == SW_SIGN_MAGNITUDE && x < 0) {
        x = -x;
    }
    if (f->kind == SW_NUM_BOOL) {
        if (o->rounding == SW_ROUND_DEFAULT) {
            return x != 0.0;
        }
        t = sw_convert_to_int(o->rounding, r, x, eoff);
        return t.huge || t.mag != 0;
    }
    t = sw_convert_to_int(o->rounding, r, x, eoff);
    return sw_codec_int_apply(f, sw_codec_int_policy(f, o), t.mag, t.neg, t.huge);
}

/* ---- encoding ----------------------------------------------------------------------- */

/* The code of the finite non-zero value m * 2**q (m < 2**63) of sign
 * `neg` in floating-point format f. */
static uint64_t
sw_convert_parts(const sw_codec_fmt *f, const sw_codec_opts *o, int neg, uint64_t m,
                 int q, uint64_t r)
{
    uint64_t n, mag;
    int lg = q + sw_convert_log2(m), et;     /* floor(log2(|value|)) */

    if (lg > f->emax + 1) {
        return sw_codec_decide_overflow(f, o, neg);
    }
    et = lg < f->emin ? f->emin : lg;
    n = sw_convert_round(m, et - f->p - q, neg, sw_codec_mode(o), r,
                         f->p == 0 ? (int)((et - f->emin - !f->has_zero) & 1) : 0);
    if (!f->has_zero) {
        /* code 0 is 2**emin: a value that rounds below it has nowhere
         * to go but there */
        if (n < (1ULL << f->p)) {
            return sw_codec_decide_tiny(f, o, neg);
        }
        mag = ((uint64_t)(et - f->emin) << f->p) + n - (1ULL << f->p);
    }
    else {
        mag = ((uint64_t)(et - f->emin) << f->p) + n;
    }
    if (mag > f->max_mag) {
        return sw_codec_decide_overflow(f, o, neg);
    }
    if (mag == 0) {
        return sw_codec_decide_tiny(f, o, neg);
    }
    return mag | (neg ? f->sign : 0);
}

uint64_t
sw_codec_encode_double(const sw_codec_fmt *f, const sw_codec_opts *o, double x,
                       int eoff, uint64_t index, int *is_nan)
{
    uint64_t u = sw_codec_dbits(x), a = u & 0x7FFFFFFFFFFFFFFFULL;
    uint64_t m, r = 0;
    int neg = (int)(u >> 63), q;

    *is_nan = 0;
    if (sw_codec_mode(o) == SW_ROUND_STOCHASTIC) {
        r = sw_codec_draw(sw_codec_seedmix(o->seed), index);
    }
    if (f->kind != SW_NUM_FLOAT) {
        return sw_convert_encode_int(f, o, x, eoff, r, is_nan);
    }
    if (a > 0x7FF0000000000000ULL) {
        *is_nan = 1;
        return sw_codec_decide_nan(f, o, neg);
    }
    if (o->sign == SW_SIGN_MAGNITUDE) {
        neg = 0;
    }
    if (a == 0) {
        return sw_codec_decide_zero(f, o, neg);
    }
    if (neg && !f->is_signed) {
        return sw_codec_decide_negative(f, o);
    }
    if (a == 0x7FF0000000000000ULL) {
        return sw_codec_decide_inf(f, o, neg);
    }
    q = sw_convert_split(a, eoff, &m);
    return sw_convert_parts(f, o, neg, m, q, r);
}

uint64_t
sw_codec_encode_product(const sw_codec_fmt *f, int neg, unsigned __int128 m, int q)
{
    sw_codec_opts o;
    int top, k;
    uint64_t m64;

    memset(&o, 0, sizeof(o));
    sw_codec_resolve(f, &o);
    if (m == 0) {
        return sw_codec_decide_zero(f, &o, neg);
    }
    /* at most 62 significant bits, the rest a sticky bit: every target
     * has at most 53, so nearest-even sees the same tie or no tie */
    top = (uint64_t)(m >> 64) != 0 ? 127 - __builtin_clzll((uint64_t)(m >> 64))
                                   : 63 - __builtin_clzll((uint64_t)m);
    k = top > 61 ? top - 61 : 0;
    m64 = (uint64_t)(m >> k) | (uint64_t)((m & (((unsigned __int128)1 << k) - 1)) != 0);
    return sw_convert_parts(f, &o, neg, m64, q + k, 0);
}

int
sw_codec_split_value(double v, uint64_t *m, int *q)
{
    uint64_t a = sw_codec_dbits(v) & 0x7FFFFFFFFFFFFFFFULL;

    if (a == 0) {
        *m = 0;
        *q = 0;
        return 0;
    }
    *q = sw_convert_split(a, 0, m);
    /* the significand without its trailing zeros: a product of three
     * stays within 128 bits (each holds at most 53 significant bits, and
     * the codecs' elements at most 16) */
    {
        int z = __builtin_ctzll(*m);
        *m >>= z;
        *q += z;
    }
    return 0;
}

size_t
sw_codec_general_run(const sw_codec_fmt *f, const sw_codec_opts *o, int source,
                     const void *src, void *dst, int dst_size, size_t n, int se,
                     uint64_t index)
{
    int rule = sw_codec_nan_rule(f, o, source), is_nan;
    int eoff = se - (o->mx_int ? f->bits - 2 : 0);
    size_t i;

    for (i = 0; i < n; i++) {
        uint64_t code;

        if (rule != SW_NAN_RULE_CANONICAL) {
            uint64_t u = sw_codec_load_raw(source, src, i);
            int sbits = sw_codec_float_size(source) * 8;
            uint64_t mag = u & ~(1ULL << (sbits - 1));
            uint64_t inf = sbits == 64 ? 0x7FF0000000000000ULL
                           : sbits == 32 ? 0x7F800000u
                           : source == SW_FLOAT16 ? 0x7C00u : 0x7F80u;
            if (mag > inf) {
                sw_codec_store(dst, dst_size, i, sw_codec_nan_payload(f, rule, source, u));
                continue;
            }
        }
        code = sw_codec_encode_double(f, o, sw_codec_load_double(source, src, i), eoff,
                                      index + i, &is_nan);
        if (is_nan && o->nan == SW_NANOPT_ERROR) {
            return i;
        }
        sw_codec_store(dst, dst_size, i, code);
    }
    return SIZE_MAX;
}

/* ---- decoding ------------------------------------------------------------------ */

int
sw_codec_is_nan_code(const sw_codec_fmt *f, uint64_t code)
{
    uint64_t mag = code & ~f->sign & f->mask;

    if (f->kind != SW_NUM_FLOAT) {
        return 0;
    }
    switch (f->nan_encoding) {
    case SW_NAN_IEEE:
        return (mag & f->inf_mag) == f->inf_mag && (mag & ((1ULL << f->p) - 1)) != 0;
    case SW_NAN_ALL_ONES:
        return mag == f->nan_pos;
    case SW_NAN_NEGATIVE_ZERO:
        return (code & f->mask) == f->sign;
    default:
        return 0;
    }
}

double
sw_codec_decode_double(const sw_codec_fmt *f, uint64_t code)
{
    uint64_t mag, m;
    int64_t iv;
    int e;
    double v;

    code &= f->mask;
    if (f->kind == SW_NUM_BOOL) {
        return code != 0 ? 1.0 : 0.0;
    }
    if (f->kind == SW_NUM_INT) {
        if (f->is_signed && f->bits < 64 && (code >> (f->bits - 1))) {
            iv = (int64_t)(code | ~f->mask);    /* sign-extend */
            return (double)iv;
        }
        if (f->is_signed) {
            return (double)(int64_t)code;
        }
        return (double)code;
    }
    if (sw_codec_is_nan_code(f, code)) {
        return sw_codec_from_dbits(((code & f->sign) ? 0xFFF8000000000000ULL
                                                     : 0x7FF8000000000000ULL));
    }
    mag = code & ~f->sign;
    if (f->has_inf && mag == f->inf_mag) {
        v = sw_codec_from_dbits(0x7FF0000000000000ULL);
        return (code & f->sign) ? -v : v;
    }
    e = (int)(mag >> f->p);
    m = mag & ((1ULL << f->p) - 1);
    if (!f->has_zero) {
        v = sw_convert_scale((double)((1ULL << f->p) + m), f->emin + e - f->p);
    }
    else if (e == 0) {
        v = sw_convert_scale((double)m, f->emin - f->p);
    }
    else {
        v = sw_convert_scale((double)((1ULL << f->p) + m), f->emin + e - 1 - f->p);
    }
    return (code & f->sign) ? -v : v;
}

/* A NaN of a format of 8 bits or fewer (or without IEEE NaNs) decodes to
 * the canonical quiet NaN with the code's sign, as ml_dtypes' float8
 * types give; a wider IEEE format's NaN keeps its payload, shifted, as
 * float16 and bfloat16 widen. */
uint32_t
sw_codec_decode_f32(const sw_codec_fmt *f, uint64_t code)
{
    code &= f->mask;
    if (f->kind == SW_NUM_INT) {
        /* one rounding, straight from the integer (as numpy's cast) */
        if (f->is_signed) {
            int64_t iv = (f->bits < 64 && (code >> (f->bits - 1)))
                ? (int64_t)(code | ~f->mask) : (int64_t)code;
            return sw_codec_fbits((float)iv);
        }
        return sw_codec_fbits((float)code);
    }
    if (sw_codec_is_nan_code(f, code)) {
        uint32_t s = (code & f->sign) ? 0x80000000u : 0;
        if (f->bits > 8 && f->nan_encoding == SW_NAN_IEEE && f->p <= 23) {
            return s | 0x7F800000u | (uint32_t)((code & ((1ULL << f->p) - 1)) << (23 - f->p));
        }
        if (f->p > 23) {
            /* narrowing, as the hardware does: quiet, payload's top */
            return s | 0x7FC00000u | (uint32_t)((code & ((1ULL << f->p) - 1)) >> (f->p - 23));
        }
        return s | 0x7FC00000u;
    }
    return sw_codec_fbits((float)sw_codec_decode_double(f, code));
}

/* Widening a wider IEEE NaN keeps its payload; formats with float32's
 * exponent range (or more) set the quiet bit on the way, as the
 * hardware's float32 -> float64 does. */
uint64_t
sw_codec_decode_f64(const sw_codec_fmt *f, uint64_t code)
{
    code &= f->mask;
    if (sw_codec_is_nan_code(f, code)) {
        uint64_t s = (code & f->sign) ? 0x8000000000000000ULL : 0;
        if (f->bits > 8 && f->nan_encoding == SW_NAN_IEEE) {
            uint64_t quiet = (f->p < 52 && f->bias >= 127) ? 0x0008000000000000ULL : 0;
            return s | 0x7FF0000000000000ULL | quiet
                   | ((code & ((1ULL << f->p) - 1)) << (52 - f->p));
        }
        return s | 0x7FF8000000000000ULL;
    }
    return sw_codec_dbits(sw_codec_decode_double(f, code));
}
