/* codec/internal.h: what the engine's files share and nothing outside
 * the engine reads: the decisions (format.c), the general converter
 * (convert.c), the fast kernels' plans and entry points (kernel32.c,
 * kernel64.c) and the element loops the block passes reuse.
 */
#ifndef SW_CODEC_INTERNAL_H
#define SW_CODEC_INTERNAL_H

#include "engine.h"

/* ---- streaming -------------------------------------------------------------------- */

/* How far ahead of a streaming loop's position (in bytes) its input's
 * cache lines are asked for.  A converter's loop body is long, so it keeps
 * few misses in flight of its own, and some machines' hardware prefetchers
 * do not make up for it (on an Intel virtual machine, E4M3 encode ran at
 * 2.4 GB/s out of memory, 7 GB/s out of cache, and 6.2 GB/s out of memory
 * with this).  Asking for a chunk's worth of lines as a group, 1 KiB
 * ahead, keeps them in flight; where the hardware needs no help it costs a
 * few instructions per 64-byte line.  8 KiB ahead and more measured slower
 * there. */
#define SW_CODEC_AHEAD 1024

/* Ask for the cache lines of [pos + SW_CODEC_AHEAD, that + bytes) of a
 * stream of `total` bytes at `base`.  A prefetch cannot fault, but the
 * clip to the stream is still needed: a pointer formed past the end of
 * the object would be undefined. */
static inline void
sw_codec_prefetch(const void *base, size_t total, size_t pos, size_t bytes)
{
#if defined(__GNUC__)
    const char *p = (const char *)base;
    size_t at = pos + SW_CODEC_AHEAD, end = at + bytes;

    if (end > total) {
        end = total;
    }
    for (; at < end; at += 64) {
        __builtin_prefetch(p + at, 0, 3);
    }
#else
    (void)base;
    (void)total;
    (void)pos;
    (void)bytes;
#endif
}

/* ---- decisions (format.c) --------------------------------------------------------- */

/* The rounding the kernels apply (the default of a format without zero,
 * ties away from zero, made explicit). */
int sw_codec_mode(const sw_codec_opts *o);

uint64_t sw_codec_decide_nan(const sw_codec_fmt *f, const sw_codec_opts *o, int neg);
uint64_t sw_codec_decide_overflow(const sw_codec_fmt *f, const sw_codec_opts *o,
                                  int neg);
uint64_t sw_codec_decide_inf(const sw_codec_fmt *f, const sw_codec_opts *o, int neg);
uint64_t sw_codec_decide_zero(const sw_codec_fmt *f, const sw_codec_opts *o, int neg);
uint64_t sw_codec_decide_tiny(const sw_codec_fmt *f, const sw_codec_opts *o, int neg);
uint64_t sw_codec_decide_negative(const sw_codec_fmt *f, const sw_codec_opts *o);
uint64_t sw_codec_decide_nonfinite_scale(const sw_codec_fmt *s);
uint64_t sw_codec_decide_nonfinite_element(const sw_codec_fmt *e);

/* How a NaN input's payload reaches a wide IEEE format. */
enum {
    SW_NAN_RULE_CANONICAL = 0,  /* the format's NaN of that sign */
    SW_NAN_RULE_COPY,           /* the source is the format: a copy */
    SW_NAN_RULE_PAYLOAD,        /* the payload's top bits, at least 1 */
    SW_NAN_RULE_QUIET,          /* ... with the quiet bit set */
};
int sw_codec_nan_rule(const sw_codec_fmt *f, const sw_codec_opts *o, int source);
uint64_t sw_codec_nan_payload(const sw_codec_fmt *f, int rule, int source,
                              uint64_t u);

/* ---- the general converter (convert.c) -------------------------------------------- */

/* 2**k, exactly, for any k whose power is a double (0 below, +inf above). */
double sw_codec_pow2(int k);
/* A counter-based random number: a function of the seed and the
 * element's index alone.  sw_codec_seedmix(seed) is its per-call part. */
uint64_t sw_codec_seedmix(uint64_t seed);
static inline uint64_t
sw_codec_draw(uint64_t seedmix, uint64_t index)
{
    uint64_t z = seedmix + (index + 1) * 0x9E3779B97F4A7C15ULL;

    z ^= z >> 30;
    z *= 0xBF58476D1CE4E5B9ULL;
    z ^= z >> 27;
    z *= 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
/* The code of x * 2**-eoff (a double, exactly) by the general converter;
 * *is_nan set for a NaN input.  The oracle of every fast path. */
uint64_t sw_codec_encode_double(const sw_codec_fmt *f, const sw_codec_opts *o,
                                double x, int eoff, uint64_t index, int *is_nan);
/* The code, in floating-point format f, of the exact value
 * (-1)**neg * m * 2**q, rounded once to nearest, ties to even, with the
 * format's default specials (an exact product of a code and scales). */
uint64_t sw_codec_encode_product(const sw_codec_fmt *f, int neg, unsigned __int128 m,
                                 int q);
/* A finite double's magnitude as m * 2**q (m odd, or 0 for zero). */
int sw_codec_split_value(double v, uint64_t *m, int *q);
/* The exact value of a finite or infinite code; NaN codes give a NaN. */
double sw_codec_decode_double(const sw_codec_fmt *f, uint64_t code);
/* 1 when `code` is a NaN of floating-point format f. */
int sw_codec_is_nan_code(const sw_codec_fmt *f, uint64_t code);
/* The float32 / float64 bits a code decodes to (NaNs as the format's
 * rules give them). */
uint32_t sw_codec_decode_f32(const sw_codec_fmt *f, uint64_t code);
uint64_t sw_codec_decode_f64(const sw_codec_fmt *f, uint64_t code);
float sw_codec_f16_to_f32(uint16_t h);

/* ---- the fast kernels ------------------------------------------------------------- */

/* Integer overflow policies. */
enum {
    SW_INT_NUMPY = 0,       /* numpy's cast on x86-64: through int32/int64 */
    SW_INT_NARROW,          /* ml_dtypes' int4/uint4/int2/uint2: 0 */
    SW_INT_UNSIGNED32,      /* numpy's uint32 cast */
    SW_INT_UNSIGNED64,      /* numpy's uint64 cast */
    SW_INT_SATURATE,
    SW_INT_SYMMETRIC,       /* MX elements: +-imax, two's complement */
    SW_INT_BOOL,            /* a rounded value: 1 unless 0 */
};

/* A policy as four numbers: a rounded magnitude above hi_pos (positive)
 * or hi_neg (negative), or too large to count, gives ovf_pos or ovf_neg;
 * any other is the two's complement of the value, masked. */
typedef struct {
    uint64_t hi_pos, hi_neg, ovf_pos, ovf_neg;
} sw_codec_int_range;

/* A plan: the constants one fast kernel needs for one format, one set of
 * options and one source type, derived once per call; which kernel (if
 * any) can take the format is decided when it is made. */
enum {
    SW_KERNEL_NONE = 0,     /* the general converter */
    SW_KERNEL_FLOAT,        /* floating-point formats */
    SW_KERNEL_FLOAT_NZ,     /* ... without zero, in 32-bit lanes (E8M0) */
    SW_KERNEL_INT,          /* integers (and MX integer elements) */
    SW_KERNEL_BOOL,
};

typedef struct {
    const sw_codec_fmt *fmt;    /* the format (borrowed for the call) */
    int kernel;
    int wide;               /* 64-bit lanes (float64 sources) */
    int mode;               /* the rounding */
    int source;
    int magnitude;          /* the sign is dropped first */
    int is_signed;
    int nan_error;          /* nan="error" */
    int nan_rule;           /* SW_NAN_RULE_* */
    uint64_t seedmix;
    /* the float kernel: a normal input's rebias, the biased source
     * exponent T of the format's smallest normal (scale 0), the bits a
     * normal input loses, and whether values below the smallest normal
     * round at the subnormal quantum (else they give code 0) */
    uint64_t c;
    int64_t T;
    int sh;
    int subnormals;
    int payload;            /* a NaN keeps its payload (kernel32.c) */
    int se_lo, se_hi;       /* the scale exponents the constants allow */
    uint64_t max_mag, sign, inf_mag;
    uint64_t ovf[2], inf[2], nan[2], zero[2], tiny[2], negative;
    /* the integer kernel: the exponent of the quantum at scale 0 (0, or
     * -(bits - 2) for an MX element), the range and the policy */
    int q;
    int policy;
    sw_codec_int_range range;
    uint64_t mask;
    int code_size;
    int p;                  /* the format's mantissa bits (NaN payloads) */
    /* the float kernel: every decision about a finite value is the natural
     * one (zero and a value rounding to zero keep the sign, overflow gives
     * the largest finite value of that sign), so finite values need none
     * of the selects (sw_k32_float_lean) */
    int lean;
    /* the integer kernel: numpy's own cast (truncation through a 32-bit
     * integer, no scale), which the hardware's conversion computes
     * (sw_k32_int_cast) */
    int cast;
    /* 1, read from the plan rather than written as a constant: GCC 12
     * vectorizes a per-lane shift of a loop-invariant value in 64-bit
     * lanes, but not of a constant (kernel64.c's rounding increments) */
    uint64_t one;
} sw_codec_plan;


/* Make the plan for format f, options o (resolved) and source type
 * `source`; plan->kernel is SW_KERNEL_NONE when no fast kernel takes
 * them. */
void sw_codec_plan_make(sw_codec_plan *k, const sw_codec_fmt *f,
                        const sw_codec_opts *o, int source, int wide);
/* 1 when plan k's kernel takes scale exponent se. */
static inline int
sw_codec_plan_takes(const sw_codec_plan *k, int se)
{
    return k->kernel != SW_KERNEL_NONE && se >= k->se_lo && se <= k->se_hi;
}

/* The fastest path for format f, options o, a source type and scale
 * exponent se, with its plan in *k: 32 (sw_codec_k32_run), 64
 * (sw_codec_k64_run) or 0 (sw_codec_general_run). */
int sw_codec_choose(sw_codec_plan *k, const sw_codec_fmt *f, const sw_codec_opts *o,
                    int source, int se);

/* n values of `source` from `src` + i0 (its element index) into codes
 * (dst_size bytes each) at `dst`, every value scaled by 2**-se (se
 * between the plan's se_lo and se_hi); `index` is the flat index of the
 * first value (stochastic rounding).  Returns the index (relative to the
 * run) of the first NaN under nan="error", else SIZE_MAX. */
size_t sw_codec_k32_run(const sw_codec_plan *k, const void *src, void *dst,
                        int dst_size, size_t n, int se, uint64_t index);
size_t sw_codec_k64_run(const sw_codec_plan *k, const void *src, void *dst,
                        int dst_size, size_t n, int se, uint64_t index);
/* The same for float32 values with one scale exponent per value
 * (se[t], each between lo and hi, which the plan takes); codes one byte
 * each. */
void sw_codec_k32_lanes(const sw_codec_plan *k, const float *src,
                        unsigned char *dst, size_t n, const int32_t *se,
                        uint64_t index, int32_t lo, int32_t hi);
/* float32 values in blocks: `first` elements of a block already begun
 * (0: none), then blocks of `blk`, block b scaled by 2**-se[b], or (recip
 * not NULL) multiplied by recip[b], rounded once to float32; codes one
 * byte each.  Every se[b] must be one the plan takes (a float or integer
 * kernel). */
void sw_codec_k32_blocks(const sw_codec_plan *k, const float *src, unsigned char *dst,
                         size_t n, size_t blk, size_t first, const int32_t *se,
                         const float *recip, uint64_t index);
/* float32 values each multiplied by recip[t] (rounded once, to float32)
 * before conversion, codes one byte each. */
void sw_codec_k32_scaled(const sw_codec_plan *k, const float *src,
                         unsigned char *dst, size_t n, const float *recip,
                         int per_lane, uint64_t index);

/* Integers (convert.c): the overflow policy of a format under options
 * o, a rounded magnitude under it, and what a NaN becomes. */
int sw_codec_int_policy(const sw_codec_fmt *f, const sw_codec_opts *o);
void sw_codec_int_limits(const sw_codec_fmt *f, int policy, sw_codec_int_range *r);
uint64_t sw_codec_int_apply(const sw_codec_fmt *f, int policy, uint64_t mag,
                            int neg, int huge);
uint64_t sw_codec_int_nan(const sw_codec_fmt *f, const sw_codec_opts *o);

/* The general converter over a run, as the kernels' fallback: the same
 * arguments as sw_codec_k32_run, with the format and options. */
size_t sw_codec_general_run(const sw_codec_fmt *f, const sw_codec_opts *o,
                            int source, const void *src, void *dst,
                            int dst_size, size_t n, int se, uint64_t index);

/* Packing at an element offset of a row (pack.c): n codes into the
 * stream as elements at, at+1, ... (whose bits are zero), and back. */
void sw_codec_pack_at(const void *codes, int code_size, int bits, size_t n,
                      unsigned char *row, size_t at);
void sw_codec_unpack_at(const unsigned char *row, int bits, size_t at, size_t n,
                        void *codes, int code_size);

/* The value at i of a float source, as float32 bits (float32, float16,
 * bfloat16) or a double. */
static inline uint32_t
sw_codec_load32(int source, const void *src, size_t i)
{
    uint32_t u;
    uint16_t h;

    switch (source) {
    case SW_FLOAT16:
        memcpy(&h, (const char *)src + 2 * i, 2);
        return sw_codec_fbits(sw_codec_f16_to_f32(h));
    case SW_BFLOAT16:
        memcpy(&h, (const char *)src + 2 * i, 2);
        return (uint32_t)h << 16;
    default:
        memcpy(&u, (const char *)src + 4 * i, 4);
        return u;
    }
}

static inline double
sw_codec_load_double(int source, const void *src, size_t i)
{
    double x;

    if (source == SW_FLOAT64) {
        memcpy(&x, (const char *)src + 8 * i, 8);
        return x;
    }
    return (double)sw_codec_from_fbits(sw_codec_load32(source, src, i));
}

/* The raw bits of the value at i (for NaN payloads). */
static inline uint64_t
sw_codec_load_raw(int source, const void *src, size_t i)
{
    return sw_codec_load(src, sw_codec_float_size(source), i);
}

#endif /* SW_CODEC_INTERNAL_H */
