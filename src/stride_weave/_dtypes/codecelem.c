/* codecelem.c: element conversion, one value to one code and back.
 *
 * Owns the pure-C element kernels: deriving a kernel's view of a format
 * from its numeric record (sw_codec_fmt), applying the format's default
 * options, encoding a value (from float32, float64, float16 or bfloat16
 * bits) into any floating-point, integer or boolean format up to 64 bits,
 * and decoding codes into float32 or float64.
 *
 * One converter serves every format: a value is rounded in the integer
 * domain (guard and sticky bits), and the biased exponent minus one plus
 * the significand with its implicit bit is the code, so a rounding carry
 * flows into the exponent and subnormals need no case of their own.
 * Float32 inputs converting with the default rounding into formats of at
 * most 16 bits take a branch-free path that compilers vectorize; it gives
 * the same codes as the general one (the tests compare both).  No libm
 * call runs in a loop, no -ffast-math (it would delete the NaN checks).
 *
 * No PyObject, no PyErr: codecs.c owns buffers, the GIL and errors.
 */
#include "codec.h"

#include <string.h>

/* ---- bits ---------------------------------------------------------------- */

/* The index of the highest set bit of `v` (v != 0). */
static inline int
sw_codecelem_log2(uint64_t v)
{
    return 63 - __builtin_clzll(v);
}

/* A finite non-zero double's magnitude bits `a` as m * 2**q, m the
 * integer significand (with its implicit bit), for the value x * 2**-eoff:
 * returns q. */
static inline int
sw_codecelem_split(uint64_t a, int eoff, uint64_t *m)
{
    int e = (int)(a >> 52);

    *m = a & 0xFFFFFFFFFFFFFULL;
    if (e != 0) {
        *m |= 1ULL << 52;
        return e - 1075 - eoff;
    }
    return -1074 - eoff;
}

/* 2**k, exactly, for any k whose power is a double (subnormals included);
 * built from bits, no libm. */
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
sw_codecelem_scale(double v, int k)
{
    if (k >= -1022) {
        return v * sw_codec_pow2(k);
    }
    return v * sw_codec_pow2(k + 600) * sw_codec_pow2(-600);
}

/* float16 bits to float32, exactly (a NaN keeps its payload, shifted). */
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

/* ---- formats ----------------------------------------------------------------- */

void
sw_codec_fmt_init(sw_codec_fmt *f, const sw_numeric_format *num)
{
    int top;

    memset(f, 0, sizeof(*f));
    f->kind = num->kind;
    f->bits = num->bits;
    f->is_signed = num->is_signed;
    f->mask = f->bits >= 64 ? ~0ULL : (1ULL << f->bits) - 1;
    if (f->kind == SW_NUM_INT || f->kind == SW_NUM_BOOL) {
        f->has_zero = 1;
        if (f->kind == SW_NUM_BOOL) {
            f->imin = 0;
            f->imax = 1;
        }
        else if (f->is_signed) {
            f->imin = f->bits >= 64 ? INT64_MIN : -((int64_t)1 << (f->bits - 1));
            f->imax = (1ULL << (f->bits - 1)) - 1;
        }
        else {
            f->imin = 0;
            f->imax = f->mask;
        }
        return;
    }
    f->p = num->mantissa_bits;
    f->bias = num->bias;
    f->nan_encoding = num->nan_encoding;
    f->has_inf = num->has_inf;
    f->has_nan = num->has_nan;
    f->has_zero = num->has_zero;
    f->has_neg_zero = f->is_signed && f->nan_encoding != SW_NAN_NEGATIVE_ZERO;
    f->emin = num->min_exponent;
    f->emax = num->max_exponent;
    f->max_finite = num->max_finite;
    f->sign = f->is_signed ? 1ULL << (f->bits - 1) : 0;
    top = (1 << num->exponent_bits) - 1;
    switch (f->nan_encoding) {
    case SW_NAN_IEEE:
        f->max_mag = ((uint64_t)(top - 1) << f->p) | ((1ULL << f->p) - 1);
        f->inf_mag = (uint64_t)top << f->p;
        f->nan_pos = f->inf_mag | (1ULL << (f->p - 1));     /* quiet */
        f->nan_neg = f->nan_pos | f->sign;
        break;
    case SW_NAN_ALL_ONES:
        f->max_mag = f->p > 0
            ? ((uint64_t)top << f->p) | ((1ULL << f->p) - 2)
            : (uint64_t)(top - 1) << f->p;
        f->nan_pos = ((uint64_t)top << f->p) | ((1ULL << f->p) - 1);
        f->nan_neg = f->nan_pos | f->sign;
        break;
    case SW_NAN_NEGATIVE_ZERO:
        f->max_mag = ((uint64_t)top << f->p) | ((1ULL << f->p) - 1);
        f->nan_pos = f->nan_neg = f->sign;
        break;
    default:    /* no NaN: see sw_codec_resolve */
        f->max_mag = ((uint64_t)top << f->p) | ((1ULL << f->p) - 1);
        break;
    }
}

void
sw_codec_resolve(const sw_codec_fmt *f, sw_codec_opts *o)
{
    o->ties_away_default = 0;
    if (f->kind == SW_NUM_FLOAT) {
        if (o->rounding == SW_ROUND_DEFAULT) {
            o->rounding = SW_ROUND_NEAREST_EVEN;
            /* ml_dtypes' float8_e8m0fnu rounds ties away from zero */
            o->ties_away_default = !f->has_zero;
        }
        if (o->overflow == SW_OVERFLOW_DEFAULT) {
            o->overflow = f->has_inf || f->has_nan
                ? SW_OVERFLOW_SPECIAL : SW_OVERFLOW_SATURATE;
        }
    }
    else if (f->kind == SW_NUM_INT && o->rounding == SW_ROUND_DEFAULT) {
        o->rounding = SW_ROUND_TOWARD_ZERO;     /* numpy's astype truncates */
    }
}

/* ---- rounding ----------------------------------------------------------------- */

/* A counter-based random number: a function of the seed and the element's
 * index alone (splitmix64's finalizer over a Weyl sequence keyed by the
 * seed), so results do not depend on chunking or threads. */
static inline uint64_t
sw_codecelem_mix(uint64_t z)
{
    z ^= z >> 30;
    z *= 0xBF58476D1CE4E5B9ULL;
    z ^= z >> 27;
    z *= 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

uint64_t
sw_codec_random(uint64_t seed, uint64_t index)
{
    return sw_codecelem_mix(sw_codecelem_mix(seed)
                            + (index + 1) * 0x9E3779B97F4A7C15ULL);
}

/* `m` divided by 2**sh (sh >= 0), rounded by `mode` for a value of sign
 * `neg`; `r` is the random draw of stochastic rounding, which rounds up
 * with probability (discarded fraction), to 64 bits.  Ties to even pick
 * the result whose code is even: the code is the result plus `odd` (mod
 * 2), which matters only for formats without mantissa bits, where the
 * last bit of the code is the exponent's. */
static inline uint64_t
sw_codecelem_round(uint64_t m, int sh, int neg, int mode, int ties_away,
                   uint64_t r, int odd)
{
    uint64_t n, rem, half, frac;
    int up, above, tie;

    if (sh <= 0) {
        return m << (-sh);
    }
    if (sh >= 64) {
        /* m < 2**53: strictly below half of the quantum */
        n = 0;
        rem = m;
        above = 0;
        tie = 0;
        frac = sh < 117 ? m >> (sh - 64) : 0;
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
    default:    /* nearest, ties to even (or away, for e8m0fnu's default) */
        up = above || (tie && (ties_away || ((n + (uint64_t)odd) & 1)));
        break;
    }
    return n + (uint64_t)up;
}

/* ---- encoding: the general converter ------------------------------------------- */

/* Beyond the largest finite value. */
static inline uint64_t
sw_codecelem_overflow(const sw_codec_fmt *f, const sw_codec_opts *o, int neg)
{
    uint64_t sgn = neg ? f->sign : 0;

    if (o->overflow == SW_OVERFLOW_SPECIAL) {
        if (f->has_inf) {
            return f->inf_mag | sgn;
        }
        if (f->has_nan) {
            return neg ? f->nan_neg : f->nan_pos;
        }
    }
    return f->max_mag | sgn;
}

/* What a NaN becomes in a floating-point format. */
static inline uint64_t
sw_codecelem_nan(const sw_codec_fmt *f, const sw_codec_opts *o, int neg)
{
    if (o->nan == SW_NANOPT_CODE) {
        return o->nan_code;
    }
    if (f->has_nan) {
        return neg ? f->nan_neg : f->nan_pos;
    }
    /* ml_dtypes: the quiet NaN of a format without NaN is its sign-bit
     * pattern (-0), negated for a negative NaN: a zero of the opposite
     * sign. */
    return neg ? 0 : f->sign;
}

/* A value rounded to an integer: magnitude, sign, and whether it is at
 * least 2**64 (or infinite). */
typedef struct {
    uint64_t mag;
    int neg;
    int huge;
} sw_codecelem_int;

static sw_codecelem_int
sw_codecelem_to_int(const sw_codec_opts *o, double x, int eoff, uint64_t index)
{
    uint64_t u = sw_codec_dbits(x), a = u & 0x7FFFFFFFFFFFFFFFULL, m;
    sw_codecelem_int t = {0, (int)(u >> 63), 0};
    int q, lg;

    if (a >= 0x7FF0000000000000ULL) {
        t.huge = 1;
        return t;
    }
    if (a == 0) {
        return t;
    }
    q = sw_codecelem_split(a, eoff, &m);
    lg = q + sw_codecelem_log2(m);
    if (lg >= 64) {
        t.huge = 1;
        return t;
    }
    t.mag = sw_codecelem_round(m, -q, t.neg, o->rounding, 0,
                               o->rounding == SW_ROUND_STOCHASTIC
                               ? sw_codec_random(o->seed, index) : 0, 0);
    if (t.mag == 0 && lg == 63) {
        t.huge = 1;     /* rounded up to 2**64 */
    }
    return t;
}

/* t as a two's complement integer of `bits` (<= 64) bits when it fits the
 * signed range of that width, else the "integer indefinite" value
 * 2**(bits-1) that x86-64's conversions give. */
static inline uint64_t
sw_codecelem_cvt(sw_codecelem_int t, int bits)
{
    uint64_t limit = 1ULL << (bits - 1);
    int fits = !t.huge && (t.neg ? t.mag <= limit : t.mag < limit);

    if (!fits) {
        return limit;
    }
    return t.neg ? (uint64_t)0 - t.mag : t.mag;
}

/* numpy's float-to-integer cast on x86-64 (C's conversion, through a
 * 32-bit or 64-bit integer), for the default of an integer format. */
static uint64_t
sw_codecelem_numpy_int(const sw_codec_fmt *f, sw_codecelem_int t)
{
    uint64_t v;

    if (f->bits < 8) {
        /* ml_dtypes' int4/uint4/int2/uint2: out of range is 0 */
        if (t.huge || (t.neg && t.mag > (uint64_t)(-(f->imin)))
            || (!t.neg && t.mag > f->imax) || (t.neg && !f->is_signed && t.mag)) {
            return 0;
        }
        return (t.neg ? (uint64_t)0 - t.mag : t.mag) & f->mask;
    }
    if (f->bits == 32 && !f->is_signed) {
        if (!t.neg && (t.huge || t.mag >= (1ULL << 31))) {
            return (!t.huge && t.mag - (1ULL << 31) < (1ULL << 31)) ? t.mag : 0;
        }
        return sw_codecelem_cvt(t, 32) & f->mask;
    }
    if (f->bits == 64 && !f->is_signed) {
        if (!t.neg && (t.huge || t.mag >= (1ULL << 63))) {
            return t.huge ? 0 : t.mag;
        }
        return sw_codecelem_cvt(t, 64);
    }
    v = sw_codecelem_cvt(t, f->bits <= 32 ? 32 : 64);
    return v & f->mask;
}

static uint64_t
sw_codecelem_encode_int(const sw_codec_fmt *f, const sw_codec_opts *o,
                        double x, int eoff, uint64_t index, int *is_nan)
{
    sw_codecelem_int t;

    if (x != x) {
        *is_nan = 1;
        if (o->nan == SW_NANOPT_CODE) {
            return o->nan_code;
        }
        if (f->kind == SW_NUM_BOOL) {
            return 1;           /* numpy: bool(nan) is True */
        }
        if (o->overflow == SW_OVERFLOW_SATURATE) {
            return 0;
        }
        t.mag = 0;
        t.neg = 0;
        t.huge = 1;             /* the conversion of NaN: "indefinite" */
        if (f->bits < 8) {
            return 0;
        }
        if (f->bits == 32 && !f->is_signed) {
            return 1ULL << 31;
        }
        return sw_codecelem_cvt(t, f->bits <= 32 ? 32 : 64) & f->mask;
    }
    if (f->kind == SW_NUM_BOOL) {
        if (o->rounding == SW_ROUND_DEFAULT) {
            return x != 0.0;
        }
        t = sw_codecelem_to_int(o, x, eoff, index);
        return t.huge || t.mag != 0;
    }
    t = sw_codecelem_to_int(o, x, eoff, index);
    if (o->overflow == SW_OVERFLOW_SATURATE) {
        if (t.neg && t.mag != 0) {
            if (!f->is_signed) {
                return 0;
            }
            if (t.huge || t.mag > (uint64_t)0 - (uint64_t)f->imin) {
                return (uint64_t)f->imin & f->mask;
            }
            return ((uint64_t)0 - t.mag) & f->mask;
        }
        return (t.huge || t.mag > f->imax) ? f->imax : t.mag;
    }
    return sw_codecelem_numpy_int(f, t);
}

uint64_t
sw_codec_encode_double(const sw_codec_fmt *f, const sw_codec_opts *o,
                       double x, int eoff, uint64_t index, int *is_nan)
{
    uint64_t u = sw_codec_dbits(x), a = u & 0x7FFFFFFFFFFFFFFFULL;
    uint64_t m, n, mag;
    int neg = (int)(u >> 63), q, lg, et;

    *is_nan = 0;
    if (f->kind != SW_NUM_FLOAT) {
        return sw_codecelem_encode_int(f, o, x, eoff, index, is_nan);
    }
    if (a > 0x7FF0000000000000ULL) {
        *is_nan = 1;
        return sw_codecelem_nan(f, o, neg);
    }
    if (neg && !f->is_signed) {
        /* a negative value (or -0) in an unsigned format */
        if (a == 0 && f->has_zero) {
            return 0;
        }
        return f->has_nan ? f->nan_pos : 0;
    }
    if (a == 0x7FF0000000000000ULL) {
        return f->has_inf ? (f->inf_mag | (neg ? f->sign : 0))
                          : sw_codecelem_overflow(f, o, neg);
    }
    if (a == 0) {
        if (!f->has_zero) {
            return f->has_nan ? f->nan_pos : 0;
        }
        return neg && f->has_neg_zero ? f->sign : 0;
    }
    q = sw_codecelem_split(a, eoff, &m);
    lg = q + sw_codecelem_log2(m);      /* floor(log2(|value|)) */
    if (lg > f->emax + 1) {
        return sw_codecelem_overflow(f, o, neg);
    }
    et = lg < f->emin ? f->emin : lg;
    n = sw_codecelem_round(m, et - f->p - q, neg, o->rounding,
                           o->ties_away_default,
                           o->rounding == SW_ROUND_STOCHASTIC
                           ? sw_codec_random(o->seed, index) : 0,
                           f->p == 0 ? (int)((et - f->emin - !f->has_zero) & 1) : 0);
    if (!f->has_zero) {
        /* code 0 is 2**emin: a value that rounds below it has nowhere
         * to go but there */
        if (n < (1ULL << f->p)) {
            return 0;
        }
        mag = ((uint64_t)(et - f->emin) << f->p) + n - (1ULL << f->p);
    }
    else {
        mag = ((uint64_t)(et - f->emin) << f->p) + n;
    }
    if (mag > f->max_mag) {
        return sw_codecelem_overflow(f, o, neg);
    }
    if (mag == 0) {
        return neg && f->has_neg_zero ? f->sign : 0;
    }
    return mag | (neg ? f->sign : 0);
}

/* ---- encoding: the float32 fast path ------------------------------------------- */

int
sw_codec_fast_f32(const sw_codec_fmt *f, const sw_codec_opts *o)
{
    int c = 127 - f->bias;

    return f->kind == SW_NUM_FLOAT && f->has_zero && f->is_signed && f->bits <= 8
           && c > -128 && c < 128
           && f->p >= 1 && f->p < 10 && f->emin >= -126
           && f->emin - f->p + 23 <= 127
           && o->rounding == SW_ROUND_NEAREST_EVEN && !o->ties_away_default
           && o->nan != SW_NANOPT_ERROR;
}

/* 0 and the constants in `k`, or -1 when scale 2**se leaves the range the
 * fast path handles (the caller takes the general converter). */
int
sw_codec_fast_init(sw_codec_fast *k, const sw_codec_fmt *f,
                   const sw_codec_opts *o, int se)
{
    int i;

    k->sh = 23 - f->p;
    k->half_m1 = (1u << (k->sh - 1)) - 1;
    k->max_mag = (uint32_t)f->max_mag;
    k->sign = (uint32_t)f->sign;
    k->neg_zero = f->has_neg_zero ? (uint32_t)f->sign : 0;
    k->emin = f->emin;
    k->p = f->p;
    k->bias = f->bias;
    for (i = 0; i < 2; i++) {
        k->ovf[i] = (uint32_t)sw_codecelem_overflow(f, o, i);
        k->inf[i] = f->has_inf ? (uint32_t)(f->inf_mag | (i ? f->sign : 0))
                               : k->ovf[i];
        k->nan[i] = (uint32_t)sw_codecelem_nan(f, o, i);
    }
    return sw_codec_fast_rescale(k, se);
}

/* The constants that depend on the scale 2**se: 0, or -1 when the scale
 * leaves the range the fast path handles. */
int
sw_codec_fast_rescale(sw_codec_fast *k, int se)
{
    int c = 127 - k->bias + se, lo = k->emin + se;

    if (lo < -126 || lo - k->p + 23 > 127 || c <= -256 || c >= 256) {
        return -1;
    }
    k->c = (uint32_t)c << 23;      /* modulo 2**32 when negative */
    k->t = (uint32_t)(lo + 127) << 23;
    k->magic_bits = (uint32_t)(lo - k->p + 23 + 127) << 23;
    return 0;
}

/* The element at `i` of a float32-like source, as float32 bits. */
static inline uint32_t
sw_codecelem_load32(int source, const void *src, size_t i)
{
    uint32_t u;
    uint16_t h;

    switch (source) {
    case SW_SRC_F16:
        memcpy(&h, (const char *)src + 2 * i, 2);
        return sw_codec_fbits(sw_codec_f16_to_f32(h));
    case SW_SRC_BF16:
        memcpy(&h, (const char *)src + 2 * i, 2);
        return (uint32_t)h << 16;
    default:
        memcpy(&u, (const char *)src + 4 * i, 4);
        return u;
    }
}

/* The element at `i` of any source, as a double (exact). */
static inline double
sw_codecelem_load(int source, const void *src, size_t i)
{
    double x;

    if (source == SW_SRC_F64) {
        memcpy(&x, (const char *)src + 8 * i, 8);
        return x;
    }
    return (double)sw_codec_from_fbits(sw_codecelem_load32(source, src, i));
}


/* The contiguous float32 -> one-byte loop: one body the compiler
 * vectorizes. */
SW_CODEC_HOT static void
sw_codecelem_fast_u8(const sw_codec_fast *k, const uint32_t *restrict src,
                     uint8_t *restrict dst, size_t n)
{
    const sw_codec_fast kk = *k;    /* a local: byte stores cannot alias it */
    size_t i;

    for (i = 0; i < n; i++) {
        dst[i] = (uint8_t)sw_codec_fast_one(&kk, src[i]);
    }
}

/* The parameters of each source, to recognise a NaN's payload. */
static const struct {
    int bits, p, bias;
} sw_codecelem_sources[SW_SRC_COUNT] = {
    [SW_SRC_F32] = {32, 23, 127},
    [SW_SRC_F64] = {64, 52, 1023},
    [SW_SRC_F16] = {16, 10, 15},
    [SW_SRC_BF16] = {16, 7, 127},
};

/* 1 when NaN payloads matter: an IEEE format of more than 8 bits, under
 * the default nan option. */
static int
sw_codecelem_wide_nan(const sw_codec_fmt *f, const sw_codec_opts *o)
{
    return f->kind == SW_NUM_FLOAT && f->nan_encoding == SW_NAN_IEEE
           && f->bits > 8 && o->nan == SW_NANOPT_DEFAULT;
}

/* The code of the NaN at `i` of `source` (bits `u`, a NaN) in a format
 * for which sw_codecelem_wide_nan holds, as numpy and ml_dtypes convert
 * it: a copy when the source is the format itself; the canonical NaN
 * below float16's precision (ml_dtypes' bfloat16); the payload's top bits
 * (at least 1) for numpy's float16; the hardware's float32 <-> float64
 * conversion sets the quiet bit; ml_dtypes' bfloat16 casts to narrower
 * formats give the canonical NaN. */
static uint64_t
sw_codecelem_nan_payload(const sw_codec_fmt *f, int source, uint64_t u)
{
    int sp = sw_codecelem_sources[source].p, sbits = sw_codecelem_sources[source].bits;
    uint64_t sign = (u >> (sbits - 1)) & 1, frac, payload, quiet = 1ULL << (f->p - 1);
    int hardware;

    if (f->bits == sbits && f->p == sp && f->bias == sw_codecelem_sources[source].bias) {
        return u;
    }
    if ((source == SW_SRC_BF16 && f->p < 23) || f->p < 10) {
        return (sign ? f->nan_neg : f->nan_pos);
    }
    frac = (u & ((1ULL << sp) - 1)) << (64 - sp);       /* left-aligned */
    payload = frac >> (64 - f->p);
    hardware = ((source == SW_SRC_F32 || source == SW_SRC_BF16) && f->p > 23)
               || (source == SW_SRC_F64 && f->p >= 23 && f->p < 52);
    if (hardware) {
        payload |= quiet;
    }
    else if (payload == 0) {
        payload = 1;
    }
    return (sign ? f->sign : 0) | f->inf_mag | payload;
}

/* The raw bits of the element at `i`, and whether it is a NaN. */
static inline uint64_t
sw_codecelem_raw(int source, const void *src, size_t i, int *is_nan)
{
    uint64_t u;

    if (source == SW_SRC_F64) {
        memcpy(&u, (const char *)src + 8 * i, 8);
        *is_nan = (u & 0x7FFFFFFFFFFFFFFFULL) > 0x7FF0000000000000ULL;
        return u;
    }
    if (source == SW_SRC_F32) {
        uint32_t w;
        memcpy(&w, (const char *)src + 4 * i, 4);
        *is_nan = (w & 0x7FFFFFFFu) > 0x7F800000u;
        return w;
    }
    {
        uint16_t h;
        memcpy(&h, (const char *)src + 2 * i, 2);
        *is_nan = source == SW_SRC_F16 ? (h & 0x7FFF) > 0x7C00 : (h & 0x7FFF) > 0x7F80;
        return h;
    }
}

/* Encode n values; 0, or SW_CODEC_NAN with *bad_index (nan="error"). */
int
sw_codec_encode(const sw_codec_fmt *f, const sw_codec_opts *o, int source,
                const void *src, void *dst, int dst_size, size_t n,
                size_t *bad_index)
{
    sw_codec_fast k;
    size_t i;
    int is_nan, wide = sw_codecelem_wide_nan(f, o);

    if (source != SW_SRC_F64 && sw_codec_fast_f32(f, o)
        && sw_codec_fast_init(&k, f, o, 0) == 0) {
        if (source == SW_SRC_F32 && dst_size == 1
            && ((uintptr_t)src % sizeof(uint32_t)) == 0) {
            sw_codecelem_fast_u8(&k, (const uint32_t *)src, (uint8_t *)dst, n);
            return SW_CODEC_OK;
        }
        for (i = 0; i < n; i++) {
            sw_codec_store(dst, dst_size, i,
                               sw_codec_fast_one(&k, sw_codecelem_load32(source, src, i)));
        }
        return SW_CODEC_OK;
    }
    for (i = 0; i < n; i++) {
        uint64_t code;

        if (wide) {
            uint64_t u = sw_codecelem_raw(source, src, i, &is_nan);
            if (is_nan) {
                sw_codec_store(dst, dst_size, i, sw_codecelem_nan_payload(f, source, u));
                continue;
            }
        }
        code = sw_codec_encode_double(f, o, sw_codecelem_load(source, src, i), 0, i,
                                      &is_nan);
        if (is_nan && o->nan == SW_NANOPT_ERROR) {
            *bad_index = i;
            return SW_CODEC_NAN;
        }
        sw_codec_store(dst, dst_size, i, code);
    }
    return SW_CODEC_OK;
}

/* ---- decoding ------------------------------------------------------------------ */

/* 1 when `code` (masked) is a NaN of floating-point format f. */
static inline int
sw_codecelem_is_nan(const sw_codec_fmt *f, uint64_t code)
{
    uint64_t mag = code & ~f->sign & f->mask;

    switch (f->nan_encoding) {
    case SW_NAN_IEEE:
        return (mag & f->inf_mag) == f->inf_mag && (mag & ((1ULL << f->p) - 1)) != 0;
    case SW_NAN_ALL_ONES:
        return mag == f->nan_pos;
    case SW_NAN_NEGATIVE_ZERO:
        return code == f->sign;
    default:
        return 0;
    }
}

/* The value of a finite (or infinite) code, exactly. */
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
    if (sw_codecelem_is_nan(f, code)) {
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
        v = sw_codecelem_scale((double)((1ULL << f->p) + m), f->emin + e - f->p);
    }
    else if (e == 0) {
        v = sw_codecelem_scale((double)m, f->emin - f->p);
    }
    else {
        v = sw_codecelem_scale((double)((1ULL << f->p) + m), f->emin + e - 1 - f->p);
    }
    return (code & f->sign) ? -v : v;
}

/* The float32 bits a code decodes to.  A NaN of a format of 8 bits or
 * fewer (or without IEEE NaNs) is the canonical quiet NaN with the code's
 * sign, as ml_dtypes' float8 types give; a wider IEEE format's NaN keeps
 * its payload, shifted, as float16 and bfloat16 widen. */
static uint32_t
sw_codecelem_decode_f32(const sw_codec_fmt *f, uint64_t code)
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
    if (f->kind == SW_NUM_FLOAT && sw_codecelem_is_nan(f, code)) {
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

/* ... and the float64 bits.  Widening a wider IEEE NaN keeps its payload;
 * formats with float32's exponent range (or more) set the quiet bit on
 * the way, as the hardware's float32 -> float64 does. */
static uint64_t
sw_codecelem_decode_f64(const sw_codec_fmt *f, uint64_t code)
{
    code &= f->mask;
    if (f->kind == SW_NUM_FLOAT && sw_codecelem_is_nan(f, code)) {
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


/* Decode n codes (one per element, `src_size` bytes each).  Formats of at
 * most 16 bits go through a table of every code's value (table32 or
 * table64, 2**bits entries, filled here when n is large enough to pay for
 * it, else NULL). */
int
sw_codec_decode(const sw_codec_fmt *f, const void *src, int src_size,
                void *dst, int to_f64, size_t n, float *table32,
                double *table64)
{
    size_t i, count;

    if (f->bits <= 16 && (to_f64 ? table64 != NULL : table32 != NULL)) {
        count = (size_t)1 << f->bits;
        for (i = 0; i < count; i++) {
            if (to_f64) {
                table64[i] = sw_codec_from_dbits(sw_codecelem_decode_f64(f, i));
            }
            else {
                table32[i] = sw_codec_from_fbits(sw_codecelem_decode_f32(f, i));
            }
        }
        if (src_size == 1 && !to_f64) {
            const uint8_t *s = (const uint8_t *)src;
            uint8_t mask = (uint8_t)f->mask;
            for (i = 0; i < n; i++) {
                float v = table32[s[i] & mask];
                memcpy((char *)dst + 4 * i, &v, 4);
            }
            return SW_CODEC_OK;
        }
        for (i = 0; i < n; i++) {
            uint64_t c = sw_codec_load(src, src_size, i) & f->mask;
            if (to_f64) {
                memcpy((char *)dst + 8 * i, &table64[c], 8);
            }
            else {
                memcpy((char *)dst + 4 * i, &table32[c], 4);
            }
        }
        return SW_CODEC_OK;
    }
    for (i = 0; i < n; i++) {
        uint64_t c = sw_codec_load(src, src_size, i);
        if (to_f64) {
            uint64_t v = sw_codecelem_decode_f64(f, c);
            memcpy((char *)dst + 8 * i, &v, 8);
        }
        else {
            uint32_t v = sw_codecelem_decode_f32(f, c);
            memcpy((char *)dst + 4 * i, &v, 4);
        }
    }
    return SW_CODEC_OK;
}
