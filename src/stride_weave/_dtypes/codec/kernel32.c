/* codec/kernel32.c: the fast converter for float32-like sources, and the
 * plans of every fast kernel.
 *
 * Owns sw_codec_plan_make (which fast kernel takes a format, an option
 * set and a source type, and its constants) and the branch-free
 * converter in 32-bit lanes for float32, float16 and bfloat16 values
 * (float16 and bfloat16 widen to float32 exactly first).
 *
 * One algorithm for every format and every rounding: a normal value's
 * magnitude bits minus a rebias constant are the code's exponent field
 * and mantissa before rounding, so a rounding carry flows into the
 * exponent; a value below the format's smallest normal is its significand
 * shifted by a per-lane amount; the rounding is an increment added before
 * the shift (nearest-even: half minus one plus the kept bit; away: half;
 * toward zero: 0; up/down: all ones in their direction; stochastic: all
 * ones minus the draw's top bits, so it rounds up with probability equal
 * to the discarded fraction).  Every special case is a select between
 * constants format.c decided once.  The rounding mode is a compile-time
 * constant of each loop (the inline body is instantiated per mode), so
 * the compiler vectorizes each without a branch.
 *
 * Integer formats take the same shape: a value is its significand shifted
 * to the format's quantum (left or right), rounded by the same increment,
 * and the overflow policy format.c and convert.c define.
 *
 * Pure C: no PyObject, no PyErr.
 */
#include "internal.h"

/* The elements one pass converts through the stack buffers. */
#define SW_K32_CHUNK 1024

/* Nearest-even with a float adder rounding below the smallest normal (a
 * mode of this file's loops only): a value below it plus 2**(quantum's
 * exponent + 23) rounds, in the adder, at the format's subnormal quantum,
 * which costs three operations where the shift costs ten.  The lean
 * integer kernel rounds every magnitude so, at its quantum.  It needs that
 * power of two to be a normal float32 (sw_k32_magic_takes); the floating-
 * point environment is the default one (parallel.c makes sure). */
#define SW_K32_NEAREST_MAGIC SW_ROUND_COUNT

/* The lean float kernel (a kernel of this file's loops only). */
#define SW_K32_FLOAT_LEAN (SW_KERNEL_BOOL + 1)
#define SW_K32_INT_LEAN (SW_KERNEL_BOOL + 2)
#define SW_K32_INT_CAST (SW_KERNEL_BOOL + 3)

static inline int
sw_k32_magic_takes(const sw_codec_plan *k, int32_t se)
{
    int64_t e;

    if (k->kernel == SW_KERNEL_INT) {
        /* the lean integer kernel adds 2**(quantum's exponent + 23) */
        e = (int64_t)k->q + se + 150;
        return k->lean && k->range.hi_pos < (1u << 23) && e >= 1 && e <= 254;
    }
    e = k->T + se + k->sh;
    return k->kernel == SW_KERNEL_FLOAT && e >= 1 && e <= 254;
}

/* ---- plans ---------------------------------------------------------------------- */

/* The source type's mantissa bits, exponent bias and lane width. */
static void
sw_k32_source(int wide, int *mbits, int *ebias)
{
    *mbits = wide ? 52 : 23;
    *ebias = wide ? 1023 : 127;
}

static void
sw_k32_plan_float(sw_codec_plan *k, const sw_codec_fmt *f, const sw_codec_opts *o)
{
    int M, EB, W = k->wide ? 64 : 32, neg;
    uint64_t lane_top = k->wide ? (1ULL << 63) : (1ULL << 31);

    sw_k32_source(k->wide, &M, &EB);
    /* the code, its rebiased magnitude and every constant must fit a lane
     * with room for the signed compares; the format's precision must not
     * exceed the source's */
    if (f->p > M || f->bits > W || f->max_mag >= lane_top) {
        return;
    }
    k->sh = M - f->p;
    k->c = (uint64_t)(int64_t)(EB - f->bias) << M;  /* modulo 2**64 */
    k->T = f->emin + EB;
    k->subnormals = f->has_zero;
    /* se moves c by se << M and T by se: c >= 0 and 1 <= T and T << M
     * below the infinity's bits */
    k->se_lo = f->bias - EB;
    if (1 - f->emin - EB > k->se_lo) {
        k->se_lo = 1 - f->emin - EB;
    }
    k->se_hi = (k->wide ? 2047 : 255) - f->emin - EB;
    if (!f->has_zero && !k->wide) {
        /* no zero, no subnormals: every value is rebiased, a float32
         * subnormal normalized first (sw_k32_float_nz), so T may be below
         * 1; the rebias must keep every value above -2**31 */
        k->se_lo = f->bias - EB;
        k->se_hi = 200 + f->bias - EB;
    }
    if (k->se_lo > k->se_hi) {
        return;
    }
    k->max_mag = f->max_mag;
    k->sign = f->sign;
    k->inf_mag = f->inf_mag;
    for (neg = 0; neg < 2; neg++) {
        k->ovf[neg] = sw_codec_decide_overflow(f, o, neg);
        k->inf[neg] = sw_codec_decide_inf(f, o, neg);
        k->nan[neg] = sw_codec_decide_nan(f, o, neg);
        k->zero[neg] = sw_codec_decide_zero(f, o, neg);
        k->tiny[neg] = sw_codec_decide_tiny(f, o, neg);
    }
    k->negative = sw_codec_decide_negative(f, o);
    k->p = f->p;
    k->payload = k->nan_rule != SW_NAN_RULE_CANONICAL;
    k->kernel = !f->has_zero && !k->wide ? SW_KERNEL_FLOAT_NZ : SW_KERNEL_FLOAT;
    k->lean = !k->wide && !k->payload && f->has_zero && f->is_signed && !k->magnitude
                 && k->zero[0] == 0 && k->tiny[0] == 0 && k->zero[1] == f->sign
                 && k->tiny[1] == f->sign && k->ovf[0] == f->max_mag
                 && k->ovf[1] == (f->sign | f->max_mag);
}

static void
sw_k32_plan_int(sw_codec_plan *k, const sw_codec_fmt *f, const sw_codec_opts *o)
{
    int M, EB, lanes = k->wide ? 64 : 32;

    sw_k32_source(k->wide, &M, &EB);
    k->policy = sw_codec_int_policy(f, o);
    sw_codec_int_limits(f, k->policy, &k->range);
    k->nan[0] = k->nan[1] = sw_codec_int_nan(f, o);
    k->q = o->mx_int ? -(f->bits - 2) : 0;
    /* a lane holds magnitudes below 2**(lanes - 1): the range tested
     * against must stay there, and so must every code */
    if (f->bits > lanes || k->range.hi_pos >= (1ULL << (lanes - 1))
        || k->range.hi_neg > (1ULL << (lanes - 1))) {
        return;
    }
    /* a subnormal source value must stay below the lane's limit: its
     * left shift is at most the normal one's */
    k->se_lo = 2 - (M + EB) - k->q - (k->wide ? 11 : 8);
    k->se_hi = 1 << 20;
    k->kernel = f->kind == SW_NUM_BOOL && o->rounding == SW_ROUND_DEFAULT
        ? SW_KERNEL_BOOL : SW_KERNEL_INT;
    /* saturating symmetrically (MX elements): a magnitude beyond the range
     * is the largest one, with its sign */
    k->lean = k->kernel == SW_KERNEL_INT && !k->magnitude
              && k->range.hi_pos == k->range.hi_neg && k->range.ovf_pos == k->range.hi_pos
              && k->range.ovf_neg == ((0 - k->range.hi_neg) & f->mask);
    /* numpy's cast itself: truncation at the unit quantum, through a
     * 32-bit integer, out of its range its "integer indefinite" */
    k->cast = k->kernel == SW_KERNEL_INT && !k->wide && !k->magnitude && k->q == 0
              && k->policy == SW_INT_NUMPY && f->bits <= 32
              && k->mode == SW_ROUND_TOWARD_ZERO;
}

void
sw_codec_plan_make(sw_codec_plan *k, const sw_codec_fmt *f, const sw_codec_opts *o,
                   int source, int wide)
{
    memset(k, 0, sizeof(*k));
    k->fmt = f;
    k->kernel = SW_KERNEL_NONE;
    k->source = source;
    k->wide = wide || source == SW_FLOAT64;
    k->mode = f->kind == SW_NUM_FLOAT ? sw_codec_mode(o) : o->rounding;
    k->magnitude = o->sign == SW_SIGN_MAGNITUDE;
    k->is_signed = f->is_signed;
    k->nan_error = o->nan == SW_NANOPT_ERROR;
    k->nan_rule = sw_codec_nan_rule(f, o, source);
    k->seedmix = sw_codec_seedmix(o->seed);
    k->mask = f->mask;
    k->code_size = sw_codec_code_size(f->bits);
    k->one = 1;
    if (f->kind == SW_NUM_FLOAT) {
        sw_k32_plan_float(k, f, o);
    }
    else {
        sw_k32_plan_int(k, f, o);
    }
}

/* ---- the converter ------------------------------------------------------------------- */

/* All ones when c holds, else zero; and x where mask m is set, else y:
 * the converter is written with these, never a branch or a ternary, so
 * the compiler vectorizes it without having to if-convert anything. */
static inline uint32_t
sw_k32_m(int c)
{
    return 0u - (uint32_t)(c != 0);
}

static inline uint32_t
sw_k32_sel(uint32_t m, uint32_t x, uint32_t y)
{
    return (x & m) | (y & ~m);
}

/* s clamped to [0, 31]. */
static inline uint32_t
sw_k32_clamp(int32_t s)
{
    int32_t lo = s < 0 ? 0 : s;

    return (uint32_t)(lo > 31 ? 31 : lo);
}

/* The rounding increment for `x` shifted right by s (0 <= s <= 31): see
 * the file's comment.  `rtop` is the draw's top s bits (stochastic). */
static inline __attribute__((always_inline)) uint32_t
sw_k32_inc(uint32_t x, uint32_t s, uint32_t negm, uint32_t rtop, const int mode)
{
    uint32_t full = (1u << s) - 1u, half = (1u << s) >> 1;

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

/* m (below 2**24) shifted right by s >= 0 (any size), rounded up with
 * probability equal to the discarded fraction, to 64 bits of the draw r:
 * as the general converter rounds. */
static inline __attribute__((always_inline)) uint32_t
sw_k32_stochastic(uint32_t m, int32_t s, uint64_t r)
{
    uint32_t sc = sw_k32_clamp(s);
    uint32_t n = sw_k32_sel(sw_k32_m(s > 31), 0, m >> sc);
    uint32_t rem = m - (n << sc);
    uint64_t lo = (uint64_t)rem << (s >= 1 && s <= 64 ? 64 - s : 0);
    uint64_t hi = (uint64_t)m >> (s > 64 && s < 96 ? s - 64 : 0);
    uint64_t frac = s == 0 ? 0 : s <= 64 ? lo : s < 96 ? hi : 0;

    return n + (uint32_t)(r < frac);
}

/* One float32 value (bits u) scaled by 2**-se into a floating-point
 * format.  Every choice is a select between constants of the plan. */
static inline __attribute__((always_inline)) uint32_t
sw_k32_float(const sw_codec_plan *k, uint32_t u, int32_t se, uint64_t r,
             const int mode)
{
    const uint32_t tiny0 = (uint32_t)k->tiny[0], tiny1 = (uint32_t)k->tiny[1];
    const uint32_t ovf0 = (uint32_t)k->ovf[0], ovf1 = (uint32_t)k->ovf[1];
    const uint32_t zero0 = (uint32_t)k->zero[0], zero1 = (uint32_t)k->zero[1];
    const uint32_t inf0 = (uint32_t)k->inf[0], inf1 = (uint32_t)k->inf[1];
    const uint32_t nan0 = (uint32_t)k->nan[0], nan1 = (uint32_t)k->nan[1];
    const uint32_t negative = (uint32_t)k->negative, sign = (uint32_t)k->sign;
    const uint32_t max_mag = (uint32_t)k->max_mag, inf_mag = (uint32_t)k->inf_mag;
    const uint32_t unsig = sw_k32_m(!k->is_signed), subm = sw_k32_m(k->subnormals);
    const uint32_t paym = sw_k32_m(k->payload), pshift = (uint32_t)(23 - k->p);
    const uint32_t keep = sw_k32_m(!k->magnitude), sh = (uint32_t)k->sh;
    uint32_t a = u & 0x7FFFFFFFu, negm = (0u - (u >> 31)) & keep;
    int32_t T = (int32_t)k->T + se;
    uint32_t c = (uint32_t)k->c + ((uint32_t)se << 23), t = (uint32_t)T << 23;
    uint32_t x, n, e, e1, m, sc, d, mag, res, rtop, pay, nanres;
    int32_t s;

    /* a normal value of the format */
    x = a - c;
    rtop = sh ? (uint32_t)(r >> (64 - sh)) : 0;
    n = (x + sw_k32_inc(x, sh, negm, rtop, mode)) >> sh;
    /* below its smallest normal: the significand at the subnormal quantum */
    e = a >> 23;
    e1 = e > 1 ? e : 1;
    m = (a & 0x7FFFFFu) | (sw_k32_m(e != 0) & 0x800000u);
    s = T - (int32_t)e1 + (int32_t)sh;
    sc = sw_k32_clamp(s);
    if (mode == SW_ROUND_STOCHASTIC) {
        d = sw_k32_stochastic(m, s < 0 ? 0 : s, r);
    }
    else if (mode == SW_K32_NEAREST_MAGIC) {
        uint32_t magic = (uint32_t)(T + (int32_t)sh) << 23;
        d = sw_codec_fbits(sw_codec_from_fbits(a) + sw_codec_from_fbits(magic)) - magic;
    }
    else {
        d = (m + sw_k32_inc(m, sc, negm, 0, mode)) >> sc;
    }
    mag = sw_k32_sel(sw_k32_m(a >= t), n, d & subm);
    res = mag | (sign & negm);
    res = sw_k32_sel(sw_k32_m(mag == 0), sw_k32_sel(negm, tiny1, tiny0), res);
    res = sw_k32_sel(sw_k32_m(mag > max_mag), sw_k32_sel(negm, ovf1, ovf0), res);
    res = sw_k32_sel(negm & unsig, negative, res);
    res = sw_k32_sel(sw_k32_m(a == 0), sw_k32_sel(negm, zero1, zero0), res);
    res = sw_k32_sel(sw_k32_m(a == 0x7F800000u), sw_k32_sel(negm, inf1, inf0), res);
    /* a NaN: the format's, or (wide IEEE formats) its payload's top bits */
    pay = (a & 0x7FFFFFu) >> pshift;
    pay |= sw_k32_m(pay == 0) & 1u;
    nanres = sw_k32_sel(paym, (sign & negm) | inf_mag | pay, sw_k32_sel(negm, nan1, nan0));
    return sw_k32_sel(sw_k32_m(a > 0x7F800000u), nanres, res);
}

/* sw_k32_float under a plan whose decisions about finite values are the
 * natural ones (k->lean): a finite value's magnitude rounded, saturated
 * at the largest finite one, with its sign; an infinity and a NaN as the
 * plan decided.  The same codes, with a third of the selects. */
static inline __attribute__((always_inline)) uint32_t
sw_k32_float_lean(const sw_codec_plan *k, uint32_t u, int32_t se, uint64_t r,
                  const int mode)
{
    const uint32_t sign = (uint32_t)k->sign, max_mag = (uint32_t)k->max_mag;
    const uint32_t inf0 = (uint32_t)k->inf[0], inf1 = (uint32_t)k->inf[1];
    const uint32_t nan0 = (uint32_t)k->nan[0], nan1 = (uint32_t)k->nan[1];
    const uint32_t sh = (uint32_t)k->sh;
    uint32_t a = u & 0x7FFFFFFFu, negm = 0u - (u >> 31);
    int32_t T = (int32_t)k->T + se;
    uint32_t c = (uint32_t)k->c + ((uint32_t)se << 23), t = (uint32_t)T << 23;
    uint32_t x, n, e, e1, m, sc, d, mag, rtop, special;
    int32_t s;

    x = a - c;
    rtop = sh ? (uint32_t)(r >> (64 - sh)) : 0;
    n = (x + sw_k32_inc(x, sh, negm, rtop, mode)) >> sh;
    e = a >> 23;
    e1 = e > 1 ? e : 1;
    m = (a & 0x7FFFFFu) | (sw_k32_m(e != 0) & 0x800000u);
    s = T - (int32_t)e1 + (int32_t)sh;
    sc = sw_k32_clamp(s);
    if (mode == SW_ROUND_STOCHASTIC) {
        d = sw_k32_stochastic(m, s < 0 ? 0 : s, r);
    }
    else if (mode == SW_K32_NEAREST_MAGIC) {
        uint32_t magic = (uint32_t)(T + (int32_t)sh) << 23;
        d = sw_codec_fbits(sw_codec_from_fbits(a) + sw_codec_from_fbits(magic)) - magic;
    }
    else {
        d = (m + sw_k32_inc(m, sc, negm, 0, mode)) >> sc;
    }
    mag = sw_k32_sel(sw_k32_m(a >= t), n, d);
    mag = mag < max_mag ? mag : max_mag;
    special = sw_k32_sel(sw_k32_m(a > 0x7F800000u), sw_k32_sel(negm, nan1, nan0),
                         sw_k32_sel(negm, inf1, inf0));
    return sw_k32_sel(sw_k32_m(a >= 0x7F800000u), special, mag | (sign & negm));
}

/* One float32 value (bits u) scaled by 2**-se into a floating-point
 * format without zero (E8M0): no subnormals, so every value takes the
 * rebias of a normal one, a float32 subnormal normalized first (m * 2**-149
 * is the float m with its exponent lowered by 149: exact); a value that
 * rounds below the smallest gives code 0, the tiny decision. */
static inline __attribute__((always_inline)) uint32_t
sw_k32_float_nz(const sw_codec_plan *k, uint32_t u, int32_t se, uint64_t r,
                const int mode)
{
    const uint32_t tiny0 = (uint32_t)k->tiny[0], ovf0 = (uint32_t)k->ovf[0];
    const uint32_t zero0 = (uint32_t)k->zero[0], zero1 = (uint32_t)k->zero[1];
    const uint32_t inf0 = (uint32_t)k->inf[0], inf1 = (uint32_t)k->inf[1];
    const uint32_t nan0 = (uint32_t)k->nan[0], nan1 = (uint32_t)k->nan[1];
    const uint32_t negative = (uint32_t)k->negative, max_mag = (uint32_t)k->max_mag;
    const uint32_t keep = sw_k32_m(!k->magnitude), sh = (uint32_t)k->sh;
    uint32_t a = u & 0x7FFFFFFFu, negm = (0u - (u >> 31)) & keep;
    uint32_t c = (uint32_t)k->c + ((uint32_t)se << 23);
    uint32_t e = a >> 23, m = a & 0x7FFFFFu, rtop, mag, res;
    uint32_t sub = sw_codec_fbits((float)(int32_t)m) - (149u << 23);
    int32_t x, sum;

    x = (int32_t)(sw_k32_sel(sw_k32_m(e == 0), sub, a) - c);
    rtop = sh ? (uint32_t)(r >> (64 - sh)) : 0;
    sum = (int32_t)((uint32_t)x + sw_k32_inc((uint32_t)x, sh, negm, rtop, mode));
    mag = sw_k32_sel(sw_k32_m(sum < 0), 0, (uint32_t)(sum >> sh));
    res = mag;      /* unsigned: no sign bit */
    res = sw_k32_sel(sw_k32_m(mag == 0), tiny0, res);
    res = sw_k32_sel(sw_k32_m(mag > max_mag), ovf0, res);
    res = sw_k32_sel(negm, negative, res);
    res = sw_k32_sel(sw_k32_m(a == 0), sw_k32_sel(negm, zero1, zero0), res);
    res = sw_k32_sel(sw_k32_m(a == 0x7F800000u), sw_k32_sel(negm, inf1, inf0), res);
    return sw_k32_sel(sw_k32_m(a > 0x7F800000u), sw_k32_sel(negm, nan1, nan0), res);
}

/* The magnitude bits a (below 2**31) at the quantum 2**Q, rounded by the
 * mode (negm: all ones for a negative value, for the directed modes);
 * *huge all ones where it reaches 2**31 or more (an infinity and a NaN
 * included), the returned value then meaningless. */
static inline __attribute__((always_inline)) uint32_t
sw_k32_int_magnitude(uint32_t a, uint32_t negm, int32_t Q, uint64_t r, const int mode,
                     uint32_t *huge)
{
    uint32_t e = a >> 23, e1 = e > 1 ? e : 1;
    uint32_t m = (a & 0x7FFFFFu) | (sw_k32_m(e != 0) & 0x800000u);
    int32_t L = (int32_t)e1 - 150 - Q, s = -L;
    uint32_t d;

    if (mode == SW_ROUND_STOCHASTIC) {
        d = sw_k32_stochastic(m, s < 0 ? 0 : s, r);
    }
    else {
        uint32_t sc = sw_k32_clamp(s);
        d = (m + sw_k32_inc(m, sc, negm, 0, mode)) >> sc;
    }
    *huge = sw_k32_m(L >= 8) | sw_k32_m(a >= 0x7F800000u);
    return sw_k32_sel(sw_k32_m(L >= 0), m << sw_k32_clamp(L > 7 ? 7 : L), d);
}

/* One float32 value (bits u) at the quantum 2**(q + se) into an integer
 * format (or a bool): rounded, then the policy's four constants. */
static inline __attribute__((always_inline)) uint32_t
sw_k32_int(const sw_codec_plan *k, uint32_t u, int32_t se, uint64_t r,
           const int mode)
{
    const uint32_t hi_neg = (uint32_t)k->range.hi_neg, hi_pos = (uint32_t)k->range.hi_pos;
    const uint32_t ovf_neg = (uint32_t)k->range.ovf_neg, ovf_pos = (uint32_t)k->range.ovf_pos;
    const uint32_t mask = (uint32_t)k->mask, nan = (uint32_t)k->nan[0];
    const uint32_t keep = sw_k32_m(!k->magnitude);
    uint32_t a = u & 0x7FFFFFFFu, negm = (0u - (u >> 31)) & keep;
    uint32_t huge, res, out;
    uint32_t mag = sw_k32_int_magnitude(a, negm, k->q + se, r, mode, &huge);

    negm &= sw_k32_m(mag != 0) | huge;
    out = huge | sw_k32_m(mag > sw_k32_sel(negm, hi_neg, hi_pos));
    res = sw_k32_sel(out, sw_k32_sel(negm, ovf_neg, ovf_pos),
                     sw_k32_sel(negm, 0u - mag, mag) & mask);
    return sw_k32_sel(sw_k32_m(a > 0x7F800000u), nan, res);
}

/* sw_k32_int under a plan that saturates symmetrically (k->lean): the
 * rounded magnitude, at most the range's end, with its sign (a magnitude
 * of 0 is 0 whatever the sign); the same codes with fewer selects. */
static inline __attribute__((always_inline)) uint32_t
sw_k32_int_lean(const sw_codec_plan *k, uint32_t u, int32_t se, uint64_t r,
                const int mode)
{
    const uint32_t hi = (uint32_t)k->range.hi_pos, mask = (uint32_t)k->mask;
    const uint32_t nan = (uint32_t)k->nan[0];
    const int32_t Q = k->q + se;
    uint32_t a = u & 0x7FFFFFFFu, negm = 0u - (u >> 31);
    uint32_t mag, huge, res;

    if (mode == SW_K32_NEAREST_MAGIC) {
        /* |x| + 2**(Q + 23) rounds at the quantum 2**Q in the adder; from
         * |x| >= 2**(Q + 23) on (an infinity included) the difference of
         * the bits is 2**23 or more, beyond any range the lean plan has */
        uint32_t magic = (uint32_t)(Q + 150) << 23;
        mag = sw_codec_fbits(sw_codec_from_fbits(a) + sw_codec_from_fbits(magic)) - magic;
        mag = mag < hi ? mag : hi;
    }
    else {
        mag = sw_k32_int_magnitude(a, negm, Q, r, mode, &huge);
        mag = sw_k32_sel(huge, hi, mag < hi ? mag : hi);
    }
    res = sw_k32_sel(negm, 0u - mag, mag) & mask;
    return sw_k32_sel(sw_k32_m(a > 0x7F800000u), nan, res);
}

/* sw_k32_int under a plan that is numpy's cast (k->cast), at scale 0:
 * C's truncating conversion where |x| < 2**31, else (and for a NaN, unless
 * nan= says otherwise) the "integer indefinite" 2**31, the format keeping
 * the low bits; what the hardware's conversion gives, lane by lane. */
static inline __attribute__((always_inline)) uint32_t
sw_k32_int_cast(const sw_codec_plan *k, uint32_t u)
{
    const uint32_t mask = (uint32_t)k->mask, nan = (uint32_t)k->nan[0];
    uint32_t a = u & 0x7FFFFFFFu, in = sw_k32_m(a < 0x4F000000u);
    /* the conversion sees only values it is defined on */
    int32_t v = (int32_t)sw_codec_from_fbits(u & in);
    uint32_t res = sw_k32_sel(in, (uint32_t)v, 0x80000000u) & mask;

    return sw_k32_sel(sw_k32_m(a > 0x7F800000u), nan, res);
}

/* A float32 value into the plan's format. */
static inline __attribute__((always_inline)) uint32_t
sw_k32_one(const sw_codec_plan *k, uint32_t u, int32_t se, uint64_t index,
           const int mode, const int kernel)
{
    uint64_t r = mode == SW_ROUND_STOCHASTIC ? sw_codec_draw(k->seedmix, index) : 0;

    if (kernel == SW_KERNEL_BOOL) {
        /* numpy's bool(x): any non-zero value, a NaN being what nan= says */
        uint32_t a = u & 0x7FFFFFFFu;
        return sw_k32_sel(sw_k32_m(a > 0x7F800000u), (uint32_t)k->nan[0],
                          (uint32_t)(a != 0));
    }
    if (kernel == SW_KERNEL_INT) {
        return sw_k32_int(k, u, se, r, mode);
    }
    if (kernel == SW_K32_INT_LEAN) {
        return sw_k32_int_lean(k, u, se, r, mode);
    }
    if (kernel == SW_K32_INT_CAST) {
        return sw_k32_int_cast(k, u);
    }
    if (kernel == SW_KERNEL_FLOAT_NZ) {
        return sw_k32_float_nz(k, u, se, r, mode);
    }
    if (kernel == SW_K32_FLOAT_LEAN) {
        return sw_k32_float_lean(k, u, se, r, mode);
    }
    return sw_k32_float(k, u, se, r, mode);
}

/* The loop over a chunk: bits in, codes out (one byte each, or 32-bit),
 * one scale exponent for all or one per lane. */
static inline __attribute__((always_inline)) void
sw_k32_loop(const sw_codec_plan *k, const uint32_t *restrict in,
            uint8_t *restrict out8, uint32_t *restrict out32, size_t n,
            const int32_t *restrict se_lane, int32_t se, uint64_t index,
            const int mode, const int kernel)
{
    const sw_codec_plan kk = *k;    /* a local: the stores cannot alias it */
    uint32_t codes[SW_K32_CHUNK];   /* n <= SW_K32_CHUNK when out8 is given */
    uint32_t *restrict dst = out8 != NULL ? codes : out32;
    size_t i;

    /* 32-bit codes first, in lanes as wide as the values (a loop that
     * narrows as it goes keeps four vectors in flight and spills), then
     * narrowed to bytes */
    if (se_lane != NULL) {
        for (i = 0; i < n; i++) {
            dst[i] = sw_k32_one(&kk, in[i], se_lane[i], index + i, mode, kernel);
        }
    }
    else {
        for (i = 0; i < n; i++) {
            dst[i] = sw_k32_one(&kk, in[i], se, index + i, mode, kernel);
        }
    }
    if (out8 != NULL) {
        for (i = 0; i < n; i++) {
            out8[i] = (uint8_t)codes[i];
        }
    }
}

/* m elements of one block: scaled by 2**-e, or multiplied by r first. */
static inline __attribute__((always_inline)) void
sw_k32_block_run(const sw_codec_plan *k, const uint32_t *restrict in,
                 uint8_t *restrict out, size_t m, int32_t e, const float *r,
                 uint64_t index, const int mode, const int kernel)
{
    size_t i;

    if (r != NULL) {
        const float rr = *r;
        for (i = 0; i < m; i++) {
            uint32_t u = sw_codec_fbits(sw_codec_from_fbits(in[i]) * rr);
            out[i] = (uint8_t)sw_k32_one(k, u, 0, index + i, mode, kernel);
        }
    }
    else {
        for (i = 0; i < m; i++) {
            out[i] = (uint8_t)sw_k32_one(k, in[i], e, index + i, mode, kernel);
        }
    }
}

/* A run of blocks: `first` elements of a block already begun, then whole
 * blocks of `blk` (the last partial), block b with scale exponent se[b]
 * (scaled), or multiplied by recip[b] (rounded once, to float32) when
 * recip is given; codes one byte each.  `size` is blk as a constant for
 * the common sizes (0 otherwise), so their loops have a fixed count. */
static inline __attribute__((always_inline)) void
sw_k32_blocks_loop(const sw_codec_plan *k, const uint32_t *restrict in,
                   uint8_t *restrict out, size_t n, size_t blk, size_t first,
                   const int32_t *se, const float *recip, uint64_t index,
                   const int mode, const int kernel, const size_t size)
{
    const sw_codec_plan kk = *k;
    size_t b, start, m;

    for (b = 0, start = 0; start < n; b++, start += m) {
        m = b == 0 && first != 0 ? first : blk;
        m = n - start < m ? n - start : m;
        if (size != 0 && m == size) {
            sw_k32_block_run(&kk, in + start, out + start, size, se[b],
                             recip != NULL ? recip + b : NULL, index + start, mode, kernel);
        }
        else {
            sw_k32_block_run(&kk, in + start, out + start, m, se[b],
                             recip != NULL ? recip + b : NULL, index + start, mode, kernel);
        }
    }
}

static inline __attribute__((always_inline)) void
sw_k32_blocks_sized(const sw_codec_plan *k, const uint32_t *in, uint8_t *out, size_t n,
                    size_t blk, size_t first, const int32_t *se, const float *recip,
                    uint64_t index, const int mode, const int kernel)
{
    switch (blk) {
    case 16:
        sw_k32_blocks_loop(k, in, out, n, blk, first, se, recip, index, mode, kernel, 16);
        break;
    case 32:
        sw_k32_blocks_loop(k, in, out, n, blk, first, se, recip, index, mode, kernel, 32);
        break;
    default:
        sw_k32_blocks_loop(k, in, out, n, blk, first, se, recip, index, mode, kernel, 0);
        break;
    }
}

static inline __attribute__((always_inline)) void
sw_k32_blocks_modes(const sw_codec_plan *k, const uint32_t *in, uint8_t *out, size_t n,
                    size_t blk, size_t first, const int32_t *se, const float *recip,
                    uint64_t index, int magic, const int kernel)
{
    switch (k->mode) {
    case SW_ROUND_NEAREST_AWAY:
        sw_k32_blocks_sized(k, in, out, n, blk, first, se, recip, index,
                           SW_ROUND_NEAREST_AWAY, kernel);
        break;
    case SW_ROUND_TOWARD_ZERO:
        sw_k32_blocks_sized(k, in, out, n, blk, first, se, recip, index,
                           SW_ROUND_TOWARD_ZERO, kernel);
        break;
    case SW_ROUND_UP:
        sw_k32_blocks_sized(k, in, out, n, blk, first, se, recip, index, SW_ROUND_UP,
                           kernel);
        break;
    case SW_ROUND_DOWN:
        sw_k32_blocks_sized(k, in, out, n, blk, first, se, recip, index, SW_ROUND_DOWN,
                           kernel);
        break;
    case SW_ROUND_STOCHASTIC:
        sw_k32_blocks_sized(k, in, out, n, blk, first, se, recip, index,
                           SW_ROUND_STOCHASTIC, kernel);
        break;
    default:
        if (kernel == SW_KERNEL_FLOAT && magic) {
            sw_k32_blocks_sized(k, in, out, n, blk, first, se, recip, index,
                               SW_K32_NEAREST_MAGIC, kernel);
            break;
        }
        sw_k32_blocks_sized(k, in, out, n, blk, first, se, recip, index,
                           SW_ROUND_NEAREST_EVEN, kernel);
        break;
    }
}

SW_CODEC_HOT static void
sw_k32_blocks_float(const sw_codec_plan *k, const uint32_t *in, uint8_t *out, size_t n,
                    size_t blk, size_t first, const int32_t *se, const float *recip,
                    uint64_t index, int magic)
{
    sw_k32_blocks_modes(k, in, out, n, blk, first, se, recip, index, magic,
                        SW_KERNEL_FLOAT);
}

SW_CODEC_HOT static void
sw_k32_blocks_int(const sw_codec_plan *k, const uint32_t *in, uint8_t *out, size_t n,
                  size_t blk, size_t first, const int32_t *se, const float *recip,
                  uint64_t index)
{
    sw_k32_blocks_modes(k, in, out, n, blk, first, se, recip, index, 0, SW_KERNEL_INT);
}

void
sw_codec_k32_blocks(const sw_codec_plan *k, const float *src, unsigned char *dst,
                    size_t n, size_t blk, size_t first, const int32_t *se,
                    const float *recip, uint64_t index)
{
    const uint32_t *in = (const uint32_t *)(const void *)src;
    size_t nb = first != 0 ? 1 + (n > first ? (n - first - 1) / blk + 1 : 0)
                           : (n - 1) / blk + 1, b;
    int magic = 1;

    if (n == 0) {
        return;
    }
    for (b = 0; recip == NULL && b < nb; b++) {
        magic &= sw_k32_magic_takes(k, se[b]);
    }
    if (recip != NULL) {
        magic = sw_k32_magic_takes(k, 0);
    }
    if (k->kernel == SW_KERNEL_INT) {
        sw_k32_blocks_int(k, in, dst, n, blk, first, se, recip, index);
    }
    else {
        sw_k32_blocks_float(k, in, dst, n, blk, first, se, recip, index, magic);
    }
}

/* One instantiation per kernel and rounding: each loop has its mode as a
 * constant. */
static inline __attribute__((always_inline)) void
sw_k32_modes(const sw_codec_plan *k, const uint32_t *in, uint8_t *out8,
             uint32_t *out32, size_t n, const int32_t *se_lane, int32_t se,
             uint64_t index, int magic, const int kernel)
{
    switch (k->mode) {
    case SW_ROUND_NEAREST_AWAY:
        sw_k32_loop(k, in, out8, out32, n, se_lane, se, index, SW_ROUND_NEAREST_AWAY, kernel);
        break;
    case SW_ROUND_TOWARD_ZERO:
        sw_k32_loop(k, in, out8, out32, n, se_lane, se, index, SW_ROUND_TOWARD_ZERO, kernel);
        break;
    case SW_ROUND_UP:
        sw_k32_loop(k, in, out8, out32, n, se_lane, se, index, SW_ROUND_UP, kernel);
        break;
    case SW_ROUND_DOWN:
        sw_k32_loop(k, in, out8, out32, n, se_lane, se, index, SW_ROUND_DOWN, kernel);
        break;
    case SW_ROUND_STOCHASTIC:
        sw_k32_loop(k, in, out8, out32, n, se_lane, se, index, SW_ROUND_STOCHASTIC, kernel);
        break;
    default:
        if ((kernel == SW_KERNEL_FLOAT || kernel == SW_K32_FLOAT_LEAN
             || kernel == SW_K32_INT_LEAN) && magic) {
            sw_k32_loop(k, in, out8, out32, n, se_lane, se, index, SW_K32_NEAREST_MAGIC,
                        kernel);
            break;
        }
        sw_k32_loop(k, in, out8, out32, n, se_lane, se, index, SW_ROUND_NEAREST_EVEN, kernel);
        break;
    }
}

SW_CODEC_HOT static void
sw_k32_float_chunk(const sw_codec_plan *k, const uint32_t *in, uint8_t *out8,
                   uint32_t *out32, size_t n, const int32_t *se_lane, int32_t se,
                   uint64_t index, int magic)
{
    sw_k32_modes(k, in, out8, out32, n, se_lane, se, index, magic, SW_KERNEL_FLOAT);
}

SW_CODEC_HOT static void
sw_k32_float_lean_chunk(const sw_codec_plan *k, const uint32_t *in, uint8_t *out8,
                        uint32_t *out32, size_t n, const int32_t *se_lane, int32_t se,
                        uint64_t index, int magic)
{
    sw_k32_modes(k, in, out8, out32, n, se_lane, se, index, magic, SW_K32_FLOAT_LEAN);
}

SW_CODEC_HOT static void
sw_k32_float_nz_chunk(const sw_codec_plan *k, const uint32_t *in, uint8_t *out8,
                      uint32_t *out32, size_t n, const int32_t *se_lane, int32_t se,
                      uint64_t index, int magic)
{
    sw_k32_modes(k, in, out8, out32, n, se_lane, se, index, magic, SW_KERNEL_FLOAT_NZ);
}

SW_CODEC_HOT static void
sw_k32_int_chunk(const sw_codec_plan *k, const uint32_t *in, uint8_t *out8,
                 uint32_t *out32, size_t n, const int32_t *se_lane, int32_t se,
                 uint64_t index, int magic)
{
    sw_k32_modes(k, in, out8, out32, n, se_lane, se, index, magic, SW_KERNEL_INT);
}

SW_CODEC_HOT static void
sw_k32_int_lean_chunk(const sw_codec_plan *k, const uint32_t *in, uint8_t *out8,
                      uint32_t *out32, size_t n, const int32_t *se_lane, int32_t se,
                      uint64_t index, int magic)
{
    sw_k32_modes(k, in, out8, out32, n, se_lane, se, index, magic, SW_K32_INT_LEAN);
}

SW_CODEC_HOT static void
sw_k32_int_cast_chunk(const sw_codec_plan *k, const uint32_t *in, uint8_t *out8,
                      uint32_t *out32, size_t n, uint64_t index)
{
    sw_k32_loop(k, in, out8, out32, n, NULL, 0, index, SW_ROUND_TOWARD_ZERO,
                SW_K32_INT_CAST);
}

SW_CODEC_HOT static void
sw_k32_bool_chunk(const sw_codec_plan *k, const uint32_t *in, uint8_t *out8,
                  uint32_t *out32, size_t n, const int32_t *se_lane, int32_t se,
                  uint64_t index)
{
    sw_k32_loop(k, in, out8, out32, n, se_lane, se, index, SW_ROUND_NEAREST_EVEN,
                SW_KERNEL_BOOL);
}

/* One chunk through the plan's kernel; `magic`: nearest-even may round
 * below the smallest normal with the adder (every lane's se allows it). */
static void
sw_k32_chunk(const sw_codec_plan *k, const uint32_t *in, uint8_t *out8,
             uint32_t *out32, size_t n, const int32_t *se_lane, int32_t se,
             uint64_t index, int magic)
{
    switch (k->kernel) {
    case SW_KERNEL_INT:
        if (k->cast && se_lane == NULL && se == 0) {
            sw_k32_int_cast_chunk(k, in, out8, out32, n, index);
            break;
        }
        if (k->lean) {
            sw_k32_int_lean_chunk(k, in, out8, out32, n, se_lane, se, index, magic);
            break;
        }
        sw_k32_int_chunk(k, in, out8, out32, n, se_lane, se, index, 0);
        break;
    case SW_KERNEL_BOOL:
        sw_k32_bool_chunk(k, in, out8, out32, n, se_lane, se, index);
        break;
    case SW_KERNEL_FLOAT_NZ:
        sw_k32_float_nz_chunk(k, in, out8, out32, n, se_lane, se, index, 0);
        break;
    default:
        if (k->lean) {
            sw_k32_float_lean_chunk(k, in, out8, out32, n, se_lane, se, index, magic);
            break;
        }
        sw_k32_float_chunk(k, in, out8, out32, n, se_lane, se, index, magic);
        break;
    }
}

/* ---- sources ------------------------------------------------------------------------ */

/* float16 bits to float32 bits, exactly, without a branch: normals rebias,
 * subnormals go through an exact int-to-float conversion, infinities and
 * NaNs keep their payload. */
static inline uint32_t
sw_k32_half(uint16_t h)
{
    uint32_t s = (uint32_t)(h & 0x8000u) << 16, e = h & 0x7C00u, m = h & 0x3FFu;
    uint32_t normal = ((uint32_t)(h & 0x7FFFu) << 13) + 0x38000000u;
    uint32_t special = (m << 13) | 0x7F800000u;
    uint32_t sub = sw_codec_fbits((float)(int32_t)m * 5.9604644775390625e-08f);

    return s | sw_k32_sel(sw_k32_m(e == 0x7C00u), special,
                          sw_k32_sel(sw_k32_m(e == 0), sub, normal));
}

/* n (at most SW_K32_CHUNK) float16 or bfloat16 values at any address,
 * widened to float32 bits. */
SW_CODEC_HOT static void
sw_k32_widen(int source, const void *src, uint32_t *restrict out, size_t n)
{
    uint16_t copy[SW_K32_CHUNK];
    const uint16_t *h = copy;
    size_t i;

    /* a uint16_t pointer to an odd address is undefined: copy first */
    if ((uintptr_t)src % 2 == 0) {
        h = (const uint16_t *)src;
    }
    else {
        memcpy(copy, src, 2 * n);
    }
    if (source == SW_FLOAT16) {
        for (i = 0; i < n; i++) {
            out[i] = sw_k32_half(h[i]);
        }
    }
    else {
        for (i = 0; i < n; i++) {
            out[i] = (uint32_t)h[i] << 16;
        }
    }
}

/* The first NaN among n float32 values, or SIZE_MAX. */
static size_t
sw_k32_first_nan(const uint32_t *in, size_t n)
{
    uint32_t any = 0;
    size_t i;

    for (i = 0; i < n; i++) {
        any |= (uint32_t)((in[i] & 0x7FFFFFFFu) > 0x7F800000u);
    }
    if (!any) {
        return SIZE_MAX;
    }
    for (i = 0; i < n; i++) {
        if ((in[i] & 0x7FFFFFFFu) > 0x7F800000u) {
            return i;
        }
    }
    return SIZE_MAX;
}

size_t
sw_codec_k32_run(const sw_codec_plan *k, const void *src, void *dst, int dst_size,
                 size_t n, int se, uint64_t index)
{
    uint32_t bits[SW_K32_CHUNK], codes[SW_K32_CHUNK];
    size_t i, j, m;
    int aligned = ((uintptr_t)src % 4) == 0 && k->source == SW_FLOAT32;
    int magic = sw_k32_magic_takes(k, se);
    size_t size = (size_t)sw_codec_float_size(k->source);

    for (i = 0; i < n; i += m) {
        const uint32_t *in;
        m = n - i < SW_K32_CHUNK ? n - i : SW_K32_CHUNK;
        sw_codec_prefetch(src, size * n, size * i, size * m);
        if (aligned) {
            in = (const uint32_t *)src + i;
        }
        else if (k->source == SW_FLOAT32) {
            memcpy(bits, (const char *)src + 4 * i, 4 * m);
            in = bits;
        }
        else {
            sw_k32_widen(k->source, (const char *)src + 2 * i, bits, m);
            in = bits;
        }
        if (k->nan_error) {
            size_t bad = sw_k32_first_nan(in, m);
            if (bad != SIZE_MAX) {
                return i + bad;
            }
        }
        if (dst_size == 1) {
            sw_k32_chunk(k, in, (uint8_t *)dst + i, NULL, m, NULL, se, index + i, magic);
            continue;
        }
        sw_k32_chunk(k, in, NULL, codes, m, NULL, se, index + i, magic);
        if (dst_size == 2) {
            uint16_t *out = (uint16_t *)((char *)dst + 2 * i);
            if (((uintptr_t)out % 2) == 0) {
                for (j = 0; j < m; j++) {
                    out[j] = (uint16_t)codes[j];
                }
                continue;
            }
        }
        for (j = 0; j < m; j++) {
            sw_codec_store(dst, dst_size, i + j, codes[j]);
        }
    }
    return SIZE_MAX;
}

void
sw_codec_k32_lanes(const sw_codec_plan *k, const float *src, unsigned char *dst,
                   size_t n, const int32_t *se, uint64_t index, int32_t lo, int32_t hi)
{
    size_t i, m;
    int magic = sw_k32_magic_takes(k, lo) && sw_k32_magic_takes(k, hi);

    for (i = 0; i < n; i += m) {
        m = n - i < SW_K32_CHUNK ? n - i : SW_K32_CHUNK;
        sw_k32_chunk(k, (const uint32_t *)(const void *)(src + i), dst + i, NULL, m,
                     se + i, 0, index + i, magic);
    }
}

/* x * recip, rounded once to float32, as bits. */
SW_CODEC_HOT static void
sw_k32_multiply(const float *restrict x, const float *restrict recip, int per_lane,
                uint32_t *restrict out, size_t n)
{
    size_t i;

    if (per_lane) {
        for (i = 0; i < n; i++) {
            out[i] = sw_codec_fbits(x[i] * recip[i]);
        }
    }
    else {
        float r = recip[0];
        for (i = 0; i < n; i++) {
            out[i] = sw_codec_fbits(x[i] * r);
        }
    }
}

void
sw_codec_k32_scaled(const sw_codec_plan *k, const float *src, unsigned char *dst,
                    size_t n, const float *recip, int per_lane, uint64_t index)
{
    uint32_t bits[SW_K32_CHUNK];
    size_t i, m;

    for (i = 0; i < n; i += m) {
        m = n - i < SW_K32_CHUNK ? n - i : SW_K32_CHUNK;
        sw_k32_multiply(src + i, per_lane ? recip + i : recip, per_lane, bits, m);
        sw_k32_chunk(k, bits, dst + i, NULL, m, NULL, 0, index + i,
                     sw_k32_magic_takes(k, 0));
    }
}
