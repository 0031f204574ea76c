/* codec.h: the codecs, values into and out of the formats the numeric
 * records describe: element conversion (codecelem.c), sub-byte packing
 * (codecpack.c), block-scaled quantization (codecblock.c) and the module
 * functions that wrap them (codecs.c).
 *
 * The three kernel files are pure C: no PyObject, no PyErr, no allocation
 * that can run Python code.  They read a format's parameters from an
 * sw_codec_fmt, derived once per call from the numeric record
 * (sw_numeric_format, numinfo.h), and report failure as a status and an
 * index.  Only codecs.c talks to Python: it parses every option, holds the
 * buffer views for the whole call, validates them, releases the GIL around
 * the kernels and raises.
 */
#ifndef SW_CODEC_H
#define SW_CODEC_H

#include "numinfo.h"    /* Python.h first, as every C file of the module */

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Rounding (the `rounding=` option). */
typedef enum {
    SW_ROUND_DEFAULT = 0,       /* the format's default: see sw_codec_resolve */
    SW_ROUND_NEAREST_EVEN,
    SW_ROUND_NEAREST_AWAY,
    SW_ROUND_TOWARD_ZERO,
    SW_ROUND_UP,                /* toward +infinity */
    SW_ROUND_DOWN,              /* toward -infinity */
    SW_ROUND_STOCHASTIC,
    SW_ROUND_COUNT
} sw_codec_rounding;

/* Values beyond the largest finite (the `overflow=` option). */
typedef enum {
    SW_OVERFLOW_DEFAULT = 0,
    SW_OVERFLOW_SATURATE,       /* the largest finite value of that sign */
    SW_OVERFLOW_SPECIAL,        /* infinity, else NaN */
    SW_OVERFLOW_COUNT
} sw_codec_overflow;

/* A NaN input (the `nan=` option). */
typedef enum {
    SW_NANOPT_DEFAULT = 0,
    SW_NANOPT_ERROR,            /* the kernel stops and reports the index */
    SW_NANOPT_CODE,             /* the code in sw_codec_opts.nan_code */
    SW_NANOPT_COUNT
} sw_codec_nanopt;

/* Where the input values come from. */
typedef enum {
    SW_SRC_F32 = 0,
    SW_SRC_F64,
    SW_SRC_F16,
    SW_SRC_BF16,
    SW_SRC_COUNT
} sw_codec_source;

/* A kernel's result. */
typedef enum {
    SW_CODEC_OK = 0,
    SW_CODEC_NAN,               /* a NaN met nan="error"; index says where */
    SW_CODEC_NONFINITE_SCALE,   /* a scale plane holds a non-finite code */
} sw_codec_status;

/* The hot loops are compiled twice on x86-64 (GCC or Clang): for the
 * baseline and for AVX2, picked once at load time by the dynamic linker
 * (an ifunc), so wheels built for the baseline use wider vectors where the
 * machine has them.  Elsewhere: the baseline only. */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__) \
    && !defined(__SANITIZE_ADDRESS__) && !defined(SW_CODEC_NO_CLONES)
#  define SW_CODEC_HOT __attribute__((target_clones("avx2", "default")))
#else
#  define SW_CODEC_HOT
#endif

/* Everything the kernels need to know about one format, derived from its
 * numeric record once per call (sw_codec_fmt_init). */
typedef struct {
    int kind;               /* sw_num_kind (complex formats are refused) */
    int bits;
    int is_signed;
    int p;                  /* mantissa bits */
    int emin;               /* exponent of the smallest normal; for a format
                               without zero, of the value code 0 holds */
    int emax;               /* exponent of the largest finite value */
    int bias;
    int nan_encoding;
    int has_inf, has_nan, has_zero, has_neg_zero;
    uint64_t mask;          /* the low `bits` bits */
    uint64_t sign;          /* the sign bit (0 for unsigned formats) */
    uint64_t max_mag;       /* magnitude bits of the largest finite value */
    uint64_t inf_mag;       /* magnitude bits of infinity (has_inf) */
    uint64_t nan_pos;       /* the canonical NaN, positive (has_nan) */
    uint64_t nan_neg;       /* ... and negative */
    double max_finite;
    /* integers: the range, as two's complement or plain binary */
    int64_t imin;
    uint64_t imax;
} sw_codec_fmt;

/* Options after the format's defaults are applied (sw_codec_resolve). */
typedef struct {
    int rounding;           /* never SW_ROUND_DEFAULT after resolving */
    int overflow;           /* never SW_OVERFLOW_DEFAULT for floats; for
                               integers DEFAULT means numpy's cast */
    int nan;                /* sw_codec_nanopt */
    uint64_t nan_code;      /* SW_NANOPT_CODE; or the resolved default code */
    uint64_t seed;          /* stochastic rounding */
    int ties_away_default;  /* SW_ROUND_DEFAULT on a format without zero
                               (e8m0fnu): ties away from zero */
} sw_codec_opts;

static inline uint32_t
sw_codec_fbits(float x)
{
    uint32_t u;

    memcpy(&u, &x, sizeof(u));
    return u;
}

static inline float
sw_codec_from_fbits(uint32_t u)
{
    float x;

    memcpy(&x, &u, sizeof(x));
    return x;
}

static inline uint64_t
sw_codec_dbits(double x)
{
    uint64_t u;

    memcpy(&u, &x, sizeof(u));
    return u;
}

static inline double
sw_codec_from_dbits(uint64_t u)
{
    double x;

    memcpy(&x, &u, sizeof(x));
    return x;
}

/* The unsigned integer of `size` (1, 2, 4 or 8) bytes at index i of
 * `p`, and storing one: through memcpy, so any alignment is fine. */
static inline uint64_t
sw_codec_load(const void *p, int size, size_t i)
{
    uint8_t v8;
    uint16_t v16;
    uint32_t v32;
    uint64_t v64;

    switch (size) {
    case 1:
        memcpy(&v8, (const char *)p + i, 1);
        return v8;
    case 2:
        memcpy(&v16, (const char *)p + 2 * i, 2);
        return v16;
    case 4:
        memcpy(&v32, (const char *)p + 4 * i, 4);
        return v32;
    default:
        memcpy(&v64, (const char *)p + 8 * i, 8);
        return v64;
    }
}

static inline void
sw_codec_store(void *p, int size, size_t i, uint64_t v)
{
    uint8_t v8 = (uint8_t)v;
    uint16_t v16 = (uint16_t)v;
    uint32_t v32 = (uint32_t)v;

    switch (size) {
    case 1:
        memcpy((char *)p + i, &v8, 1);
        break;
    case 2:
        memcpy((char *)p + 2 * i, &v16, 2);
        break;
    case 4:
        memcpy((char *)p + 4 * i, &v32, 4);
        break;
    default:
        memcpy((char *)p + 8 * i, &v, 8);
        break;
    }
}

/* The bytes one code of a `bits`-wide format takes unpacked. */
static inline int
sw_codec_code_size(int bits)
{
    return bits <= 8 ? 1 : bits <= 16 ? 2 : bits <= 32 ? 4 : 8;
}

/* The constants of the branch-free float32 converter for one format and
 * one power-of-two scale 2**se (0 for plain encoding). */
typedef struct {
    uint32_t c;             /* (127 - bias + se) << 23: rebias a normal */
    uint32_t t;             /* float32 bits of 2**(emin + se) */
    uint32_t half_m1;       /* half the discarded range, minus one */
    uint32_t magic_bits;    /* 2**(emin + se - p + 23) */
    uint32_t max_mag;
    uint32_t ovf[2];        /* overflow result, by sign */
    uint32_t inf[2];        /* infinity's result, by sign */
    uint32_t nan[2];        /* NaN's result, by sign */
    uint32_t sign;          /* the format's sign bit */
    uint32_t neg_zero;      /* the sign bit where -0 exists, else 0 */
    int sh;                 /* 23 - p */
    int emin, p, bias;      /* the format's, for sw_codec_fast_rescale */
} sw_codec_fast;

/* One float32 (bits `u`) through the fast converter: nearest-even, the
 * specials and overflow chosen by sign with masks, every step a select. */
/* All ones when `c` holds, else zero. */
static inline uint32_t
sw_codec_mask(int c)
{
    return 0u - (uint32_t)(c != 0);
}

/* `x` where mask `m` is set, else `y`. */
static inline uint32_t
sw_codec_select(uint32_t m, uint32_t x, uint32_t y)
{
    return (x & m) | (y & ~m);
}

static inline uint32_t
sw_codec_fast_one(const sw_codec_fast *k, uint32_t u)
{
    uint32_t a = u & 0x7FFFFFFFu, neg = 0u - (u >> 31), n, d, mag, res;
    float sum;

    n = a - k->c;
    n = (n + ((n >> k->sh) & 1u) + k->half_m1) >> k->sh;
    /* below the smallest normal: the adder rounds (nearest-even) at the
     * format's subnormal quantum, the ulp of `magic` */
    sum = sw_codec_from_fbits(a) + sw_codec_from_fbits(k->magic_bits);
    d = sw_codec_fbits(sum) - k->magic_bits;
    /* every value compared is under 2**31: signed compares vectorize */
    mag = sw_codec_select(sw_codec_mask((int32_t)a >= (int32_t)k->t), n, d);
    res = mag | (sw_codec_select(sw_codec_mask(mag != 0), k->sign, k->neg_zero) & neg);
    res = sw_codec_select(sw_codec_mask((int32_t)mag > (int32_t)k->max_mag),
                          sw_codec_select(neg, k->ovf[1], k->ovf[0]), res);
    res = sw_codec_select(sw_codec_mask(a == 0x7F800000u),
                          sw_codec_select(neg, k->inf[1], k->inf[0]), res);
    res = sw_codec_select(sw_codec_mask((int32_t)a > 0x7F800000),
                          sw_codec_select(neg, k->nan[1], k->nan[0]), res);
    return res;
}

/* codecs.c: the module functions */
extern PyMethodDef sw_codecs_methods[];

/* codecelem.c */
void sw_codec_fmt_init(sw_codec_fmt *f, const sw_numeric_format *num);
void sw_codec_resolve(const sw_codec_fmt *f, sw_codec_opts *o);
uint64_t sw_codec_random(uint64_t seed, uint64_t index);
uint64_t sw_codec_encode_double(const sw_codec_fmt *f, const sw_codec_opts *o,
                                double x, int eoff, uint64_t index, int *is_nan);
double sw_codec_decode_double(const sw_codec_fmt *f, uint64_t code);
double sw_codec_pow2(int k);
int sw_codec_fast_f32(const sw_codec_fmt *f, const sw_codec_opts *o);
int sw_codec_fast_init(sw_codec_fast *k, const sw_codec_fmt *f,
                       const sw_codec_opts *o, int se);
int sw_codec_fast_rescale(sw_codec_fast *k, int se);
int sw_codec_encode(const sw_codec_fmt *f, const sw_codec_opts *o, int source,
                    const void *src, void *dst, int dst_size, size_t n,
                    size_t *bad_index);
int sw_codec_decode(const sw_codec_fmt *f, const void *src, int src_size,
                    void *dst, int to_f64, size_t n, float *table32,
                    double *table64);
float sw_codec_f16_to_f32(uint16_t h);

/* codecpack.c */
void sw_codec_pack(const void *codes, int code_size, int bits, size_t n,
                   unsigned char *out);
void sw_codec_unpack(const unsigned char *data, int bits, size_t n,
                     void *codes, int code_size);
void sw_codec_pack_at(const void *codes, int code_size, int bits, size_t n,
                      unsigned char *row, size_t at);
void sw_codec_unpack_at(const unsigned char *row, int bits, size_t at,
                        size_t n, void *codes, int code_size);

/* codecblock.c */

/* How the scale of a power-of-two (E8M0-like) level is chosen. */
typedef enum {
    SW_RULE_DEFAULT = 0,
    SW_RULE_FLOOR,
    SW_RULE_CEIL,
    SW_RULE_RCEIL,
    SW_RULE_EVEN,
    SW_RULE_AMAX,           /* float scales: NVIDIA's amax recipe */
    SW_RULE_COUNT
} sw_codec_rule;

typedef struct {
    sw_codec_fmt elem;
    sw_codec_fmt scale[2];
    int nlevels;            /* 1 or 2 */
    size_t block;           /* elements per level-0 block */
    int whole_only;         /* level 0 is Whole: one scale for the tensor,
                               empty or not */
    int whole;              /* nlevels == 2: the outer level is Whole */
    int pow2;               /* level 0's scale is a power of two (no
                               mantissa bits) */
    int rule;               /* sw_codec_rule, resolved */
    int rounding;           /* element rounding: nearest_even or stochastic */
    uint64_t seed;
    int packed;             /* element codes packed per row */
    int source;             /* SW_SRC_F32 or SW_SRC_F64 */
    int nonfinite_error;    /* dequantize: a non-finite scale is an error
                               (else its block's values are NaN) */
} sw_codec_block;

size_t sw_codec_row_bytes(int bits, size_t length);
void sw_codec_quantize(const sw_codec_block *b, const void *src, size_t rows,
                       size_t length, unsigned char *elem, unsigned char *scale0,
                       unsigned char *scale1);
int sw_codec_dequantize(const sw_codec_block *b, const unsigned char *elem,
                        const unsigned char *scale0, const unsigned char *scale1,
                        size_t rows, size_t length, void *dst, int to_f64,
                        size_t *bad_index);

#endif /* SW_CODEC_H */
