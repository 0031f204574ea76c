/* codec/format.c: formats, options, and every decision about a value.
 *
 * Owns the kernels' view of a format (sw_codec_fmt, from a numeric
 * record), the options' defaults (sw_codec_resolve) and their legality,
 * and the one place where each decision about a value is made: what a
 * NaN, an infinity, a zero, a negative value in an unsigned format, a
 * value rounding to zero and an overflow become; which NaN payload a wide
 * format keeps; the scale and element codes of a block holding a
 * non-finite value.  The general converter (convert.c) calls these
 * functions per value; the fast kernels (kernel32.c, kernel64.c) and the
 * block passes (block.c) call them once per call and keep the answers as
 * constants, so every path gives the same code.
 *
 * Pure C: no PyObject, no PyErr.
 */
#include "internal.h"

/* ---- formats ------------------------------------------------------------------ */

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
    f->exponent_bits = num->exponent_bits;
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
    default:    /* no NaN */
        f->max_mag = ((uint64_t)top << f->p) | ((1ULL << f->p) - 1);
        break;
    }
}

void
sw_codec_fmt_float(sw_codec_fmt *f, int type)
{
    static const struct {
        int bits, e, p;
    } t[SW_FLOAT_COUNT] = {
        [SW_FLOAT32] = {32, 8, 23},
        [SW_FLOAT64] = {64, 11, 52},
        [SW_FLOAT16] = {16, 5, 10},
        [SW_BFLOAT16] = {16, 8, 7},
    };
    sw_numeric_format num;
    int bias = (1 << (t[type].e - 1)) - 1;

    memset(&num, 0, sizeof(num));
    num.kind = SW_NUM_FLOAT;
    num.bits = t[type].bits;
    num.is_signed = 1;
    num.exponent_bits = t[type].e;
    num.mantissa_bits = t[type].p;
    num.bias = bias;
    num.nan_encoding = SW_NAN_IEEE;
    num.has_inf = 1;
    num.has_nan = 1;
    num.has_zero = 1;
    num.has_subnormals = 1;
    num.min_exponent = 1 - bias;
    num.max_exponent = bias;
    num.max_finite = sw_codec_pow2(bias) * (2.0 - sw_codec_pow2(-t[type].p));
    sw_codec_fmt_init(f, &num);
}

/* 1 when two formats hold the same values under the same codes. */
static int
sw_codecfmt_same(const sw_codec_fmt *a, const sw_codec_fmt *b)
{
    return a->kind == b->kind && a->bits == b->bits && a->is_signed == b->is_signed
           && a->exponent_bits == b->exponent_bits && a->p == b->p
           && a->bias == b->bias && a->nan_encoding == b->nan_encoding
           && a->has_inf == b->has_inf && a->has_zero == b->has_zero;
}

/* ---- options --------------------------------------------------------------------- */

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

int
sw_codec_check_options(const sw_codec_fmt *f, const sw_codec_opts *o,
                       const char **why)
{
    if (o->overflow == SW_OVERFLOW_SPECIAL
        && !(f->kind == SW_NUM_FLOAT && (f->has_inf || f->has_nan))) {
        *why = "overflow='special' needs a format with an infinity or a NaN";
        return 0;
    }
    if (o->nan == SW_NANOPT_CODE
        && ((o->nan_code[0] & ~f->mask) != 0 || (o->nan_code[1] & ~f->mask) != 0)) {
        *why = "a nan code does not fit the format's width";
        return 0;
    }
    return 1;
}

/* The rounding the kernels apply: the resolved option, with the default
 * of a format without zero (ties away) made explicit. */
int
sw_codec_mode(const sw_codec_opts *o)
{
    if (o->rounding == SW_ROUND_NEAREST_EVEN && o->ties_away_default) {
        return SW_ROUND_NEAREST_AWAY;
    }
    return o->rounding;
}

/* ---- decisions: floating-point formats ------------------------------------------ */

/* The special value of a sign: infinity, else NaN, else the largest
 * finite value (a format with neither never asks: overflow='special' is
 * refused for it). */
static uint64_t
sw_codecfmt_special(const sw_codec_fmt *f, int neg)
{
    if (f->has_inf) {
        return f->inf_mag | (neg ? f->sign : 0);
    }
    if (f->has_nan) {
        return neg && f->is_signed ? f->nan_neg : f->nan_pos;
    }
    return f->max_mag | (neg ? f->sign : 0);
}

uint64_t
sw_codec_decide_nan(const sw_codec_fmt *f, const sw_codec_opts *o, int neg)
{
    if (o->sign == SW_SIGN_MAGNITUDE) {
        neg = 0;
    }
    if (o->nan == SW_NANOPT_CODE) {
        return o->nan_code[neg != 0];
    }
    if (f->has_nan) {
        return neg && f->is_signed ? f->nan_neg : f->nan_pos;
    }
    /* ml_dtypes: the quiet NaN of a format without NaN is its sign-bit
     * pattern (-0), negated for a negative NaN: a zero of the opposite
     * sign. */
    return neg ? 0 : f->sign;
}

uint64_t
sw_codec_decide_overflow(const sw_codec_fmt *f, const sw_codec_opts *o, int neg)
{
    uint64_t largest = f->max_mag | (neg ? f->sign : 0);

    if (o->overflow != SW_OVERFLOW_SPECIAL) {
        return largest;
    }
    /* IEEE 754 7.4: a directed rounding overflows to the special value
     * only in its own direction, else to the largest finite value */
    switch (sw_codec_mode(o)) {
    case SW_ROUND_TOWARD_ZERO:
        return largest;
    case SW_ROUND_UP:
        return neg ? largest : sw_codecfmt_special(f, 0);
    case SW_ROUND_DOWN:
        return neg ? sw_codecfmt_special(f, 1) : largest;
    default:
        return sw_codecfmt_special(f, neg);
    }
}

uint64_t
sw_codec_decide_inf(const sw_codec_fmt *f, const sw_codec_opts *o, int neg)
{
    if (o->sign == SW_SIGN_MAGNITUDE) {
        neg = 0;
    }
    if (neg && !f->is_signed) {
        return sw_codec_decide_negative(f, o);
    }
    if (o->overflow == SW_OVERFLOW_SATURATE) {
        /* ONNX's Cast(saturate=1), NVIDIA's __NV_SATFINITE */
        return f->max_mag | (neg ? f->sign : 0);
    }
    /* an infinity is exact, not an overflow: the format's own, else the
     * special value whatever the rounding direction */
    return sw_codecfmt_special(f, neg);
}

uint64_t
sw_codec_decide_zero(const sw_codec_fmt *f, const sw_codec_opts *o, int neg)
{
    if (!f->has_zero) {
        /* NVIDIA's E8M0 conversion takes zero to the smallest code; by
         * default (ml_dtypes) it has no value and is NaN */
        if (o->sign == SW_SIGN_MAGNITUDE) {
            return 0;
        }
        return f->has_nan ? f->nan_pos : 0;
    }
    return neg && f->has_neg_zero && o->sign != SW_SIGN_MAGNITUDE ? f->sign : 0;
}

uint64_t
sw_codec_decide_tiny(const sw_codec_fmt *f, const sw_codec_opts *o, int neg)
{
    /* a non-zero value rounding to nothing: the zero of its sign, or, in
     * a format without zero, code 0 (its smallest value, nowhere else
     * to go) */
    if (!f->has_zero) {
        return 0;
    }
    return neg && f->has_neg_zero && o->sign != SW_SIGN_MAGNITUDE ? f->sign : 0;
}

uint64_t
sw_codec_decide_negative(const sw_codec_fmt *f, const sw_codec_opts *o)
{
    (void)o;
    /* a negative value in an unsigned format (its sign kept): NaN, as
     * ml_dtypes' float8_e8m0fnu gives, else zero */
    return f->has_nan ? f->nan_pos : 0;
}

/* ---- decisions: NaN payloads ---------------------------------------------------- */

/* The parameters of each source type, to recognise a NaN's payload. */
int
sw_codec_nan_rule(const sw_codec_fmt *f, const sw_codec_opts *o, int source)
{
    sw_codec_fmt s;

    if (!(f->kind == SW_NUM_FLOAT && f->nan_encoding == SW_NAN_IEEE && f->bits > 8
          && o->nan == SW_NANOPT_DEFAULT && o->sign == SW_SIGN_KEEP)) {
        return SW_NAN_RULE_CANONICAL;
    }
    sw_codec_fmt_float(&s, source);
    if (sw_codecfmt_same(f, &s)) {
        return SW_NAN_RULE_COPY;
    }
    /* ml_dtypes' bfloat16 casts, and anything below float16's precision,
     * give the canonical NaN */
    if ((source == SW_BFLOAT16 && f->p < 23) || f->p < 10) {
        return SW_NAN_RULE_CANONICAL;
    }
    /* the hardware's float32 <-> float64 conversions set the quiet bit;
     * numpy's float16 keeps the payload's top bits (at least 1) */
    if (((source == SW_FLOAT32 || source == SW_BFLOAT16) && f->p > 23)
        || (source == SW_FLOAT64 && f->p >= 23 && f->p < 52)) {
        return SW_NAN_RULE_QUIET;
    }
    return SW_NAN_RULE_PAYLOAD;
}

uint64_t
sw_codec_nan_payload(const sw_codec_fmt *f, int rule, int source, uint64_t u)
{
    int sp = source == SW_FLOAT64 ? 52 : source == SW_FLOAT32 ? 23
             : source == SW_FLOAT16 ? 10 : 7;
    int sbits = sw_codec_float_size(source) * 8;
    int neg = (int)((u >> (sbits - 1)) & 1);
    uint64_t frac, payload;

    if (rule == SW_NAN_RULE_COPY) {
        return u & f->mask;
    }
    if (rule == SW_NAN_RULE_CANONICAL) {
        return neg && f->is_signed ? f->nan_neg : f->nan_pos;
    }
    frac = (u & ((1ULL << sp) - 1)) << (64 - sp);       /* left-aligned */
    payload = frac >> (64 - f->p);
    if (rule == SW_NAN_RULE_QUIET) {
        payload |= 1ULL << (f->p - 1);
    }
    else if (payload == 0) {
        payload = 1;
    }
    return (neg ? f->sign : 0) | f->inf_mag | payload;
}

/* ---- decisions: blocks -------------------------------------------------------------- */

uint64_t
sw_codec_decide_nonfinite_scale(const sw_codec_fmt *s)
{
    /* OCP MX: a block holding an infinity or a NaN has the NaN scale; a
     * scale format without NaN gives its largest scale */
    return s->has_nan ? s->nan_pos : s->max_mag;
}

uint64_t
sw_codec_decide_nonfinite_element(const sw_codec_fmt *e)
{
    /* the elements of such a block: the element format's NaN, else zero */
    return e->kind == SW_NUM_FLOAT && e->has_nan ? e->nan_pos : 0;
}
