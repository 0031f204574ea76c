/* codec/engine.h: the codec engine's whole interface.
 *
 * The engine turns values into the codes of the formats that numeric
 * records describe, and back: element conversion, sub-byte packing and
 * block-scaled quantization, on one thread or several.  Formats come in
 * as records (sw_numeric_format, numformat.h), options and buffers as
 * plain C values; nothing here reaches into descriptors or the
 * interpreter: no PyObject, no PyErr, no allocation that can run Python
 * code.  codecs.c, outside this folder, is the one caller: it reads
 * descriptors and buffers, releases the GIL around the engine, and raises
 * what the engine reports (a status and an index).
 *
 * Inside, every decision about a value (what a NaN, an infinity, an
 * overflow, a zero or a negative value becomes; which NaN payload is
 * kept; the scale of a block holding a non-finite value) is made once, in
 * format.c, and every kernel path reads it from there: the general
 * converter (convert.c, the oracle), the fast kernels for float32-like
 * and float64 sources (kernel32.c, kernel64.c), the block passes
 * (block.c).  The source map in the design notes lists the files.
 */
#ifndef SW_CODEC_ENGINE_H
#define SW_CODEC_ENGINE_H

#include "../numformat.h"

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
    SW_OVERFLOW_SATURATE,       /* the largest finite value of that sign,
                                   infinities included */
    SW_OVERFLOW_SPECIAL,        /* infinity, else NaN, in the direction of
                                   the rounding (IEEE 754 7.4) */
    SW_OVERFLOW_COUNT
} sw_codec_overflow;

/* A NaN input (the `nan=` option). */
typedef enum {
    SW_NANOPT_DEFAULT = 0,
    SW_NANOPT_ERROR,            /* the kernel stops and reports the index */
    SW_NANOPT_CODE,             /* nan_code[0], or [1] for a negative NaN */
    SW_NANOPT_COUNT
} sw_codec_nanopt;

/* What the sign of an input means (the `sign=` option). */
typedef enum {
    SW_SIGN_KEEP = 0,           /* the value as it is */
    SW_SIGN_MAGNITUDE,          /* its magnitude: the sign is dropped, and
                                   zero in a format without zero is the
                                   smallest code (NVIDIA's E8M0) */
    SW_SIGN_COUNT
} sw_codec_sign;

/* The binary floating-point types values come in and go out as. */
typedef enum {
    SW_FLOAT32 = 0,
    SW_FLOAT64,
    SW_FLOAT16,
    SW_BFLOAT16,
    SW_FLOAT_COUNT
} sw_codec_float;

/* A kernel's result. */
typedef enum {
    SW_CODEC_OK = 0,
    SW_CODEC_NAN,               /* a NaN met nan="error"; index says where */
    SW_CODEC_NONFINITE_SCALE,   /* a scale plane holds a non-finite code */
    SW_CODEC_WIDE_CODE,         /* a code wider than the format (pack) */
    SW_CODEC_BAD_SCALE_COPY,    /* expanded scales of one block differ */
} sw_codec_status;

/* The hot loops are compiled three times on x86-64 Linux (GCC or Clang):
 * for the baseline, for AVX2 and for x86-64-v4 (AVX-512), picked once at
 * load time by the dynamic linker (an ifunc), so wheels built for the
 * baseline use wider vectors where the machine has them.  Elsewhere, and
 * under AddressSanitizer: the baseline only. */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__) \
    && !defined(__SANITIZE_ADDRESS__) && !defined(SW_CODEC_NO_CLONES)
#  define SW_CODEC_HOT __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#  define SW_CODEC_HOT
#endif

/* Everything the kernels need to know about one format, derived from its
 * numeric record once per call (sw_codec_fmt_init). */
typedef struct {
    int kind;               /* sw_num_kind (complex formats are refused) */
    int bits;
    int is_signed;
    int exponent_bits;
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
    int rounding;           /* never SW_ROUND_DEFAULT after resolving a
                               float format */
    int overflow;           /* never SW_OVERFLOW_DEFAULT for floats; for
                               integers DEFAULT means numpy's cast */
    int nan;                /* sw_codec_nanopt */
    uint64_t nan_code[2];   /* SW_NANOPT_CODE: a positive, a negative NaN */
    uint64_t seed;          /* stochastic rounding */
    int sign;               /* sw_codec_sign */
    int ties_away_default;  /* SW_ROUND_DEFAULT on a format without zero
                               (e8m0fnu): ties away from zero */
    /* An integer element of a block-scaled format (MXINT8): two's
     * complement with bits - 2 fraction bits, saturating symmetrically
     * (the most negative code is never given). */
    int mx_int;
    int path;               /* sw_codec_path: which converter (tests) */
} sw_codec_opts;

/* Which converter a call takes: the fastest that can (every one gives
 * the same codes: the tests compare them), or one forced. */
typedef enum {
    SW_PATH_AUTO = 0,
    SW_PATH_WIDE,               /* the 64-bit-lane kernel where it can */
    SW_PATH_GENERAL,            /* the general converter */
    SW_PATH_COUNT
} sw_codec_path;

/* ---- bits: helpers every file uses ----------------------------------------- */

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

/* The bytes one value of a binary floating-point type takes. */
static inline int
sw_codec_float_size(int type)
{
    return type == SW_FLOAT64 ? 8 : type == SW_FLOAT32 ? 4 : 2;
}

/* ---- formats and options (format.c) ------------------------------------------ */

void sw_codec_fmt_init(sw_codec_fmt *f, const sw_numeric_format *num);
/* The format of one of the binary floating-point types, as a record of
 * its own would give it. */
void sw_codec_fmt_float(sw_codec_fmt *f, int type);
void sw_codec_resolve(const sw_codec_fmt *f, sw_codec_opts *o);
/* 1 when option `o` (resolved or not) is legal for f, else 0 and `why`
 * says what is wrong, for the caller's message. */
int sw_codec_check_options(const sw_codec_fmt *f, const sw_codec_opts *o,
                           const char **why);

/* ---- elements (encode.c, decode.c) ----------------------------------------------- */

/* Encode n values of float type `source` into codes of `dst_size` bytes
 * (the format's code size), on up to `threads` threads: SW_CODEC_OK, or
 * SW_CODEC_NAN with *bad_index the first NaN (nan="error"). */
int sw_codec_encode(const sw_codec_fmt *f, const sw_codec_opts *o, int source,
                    const void *src, void *dst, int dst_size, size_t n,
                    int threads, size_t *bad_index);

/* The bytes of the table sw_codec_decode uses for n codes into float type
 * `out` (0: none).  The caller provides it, aligned for a double. */
size_t sw_codec_decode_table_bytes(const sw_codec_fmt *f, int out, size_t n);
/* Decode n codes of `src_size` bytes into values of float type `out`,
 * each exact or rounded once (nearest, ties to even). */
void sw_codec_decode(const sw_codec_fmt *f, const void *src, int src_size,
                     void *dst, int out, size_t n, void *table, int threads);

/* ---- packing (pack.c) --------------------------------------------------------------- */

/* The bytes `length` codes of `bits` bits take (the caller has checked
 * that length * bits does not overflow). */
size_t sw_codec_row_bytes(int bits, size_t length);
/* Pack n codes; SW_CODEC_WIDE_CODE with *bad_index when a code does not
 * fit `bits` (nothing is masked away). */
int sw_codec_pack(const void *codes, int code_size, int bits, size_t n,
                  unsigned char *out, int threads, size_t *bad_index);
void sw_codec_unpack(const unsigned char *data, int bits, size_t n,
                     void *codes, int code_size, int threads);

/* ---- block-scaled (block.c) ---------------------------------------------------------- */

/* How the scale of a block is chosen. */
typedef enum {
    SW_RULE_DEFAULT = 0,
    SW_RULE_FLOOR,
    SW_RULE_CEIL,
    SW_RULE_RCEIL,
    SW_RULE_EVEN,
    SW_RULE_AMAX,           /* float scales: s = fl(amax / max) */
    SW_RULE_COUNT
} sw_codec_rule;

/* The layout of the level-0 scale plane. */
typedef enum {
    SW_SCALES_COMPACT = 0,
    SW_SCALES_PADDED_K_MAJOR,
    SW_SCALES_PADDED_MN_MAJOR,
    SW_SCALES_SWIZZLED_128X4,
    SW_SCALES_COUNT
} sw_codec_scales;

#define SW_CODEC_MAX_DIMS 64

/* One axis of the element plane (the values are handed over in the
 * plane's order, C-contiguous): its extent, the level-0 block's extent
 * along it (1 where the block does not run along it), and where the
 * scale of a block lies: each axis adds its coordinate (the block index,
 * or for an `expanded` axis the element index) times its stride to the
 * compact offset, and to the matrix coordinates (b, r, c) that the padded
 * and swizzled layouts read. */
typedef struct {
    size_t extent;
    size_t block;
    size_t compact;         /* stride in the compact plane */
    size_t batch;           /* stride in b */
    size_t row;             /* stride in r */
    size_t col;             /* stride in c (1 on the last blocked axis) */
    int expanded;           /* the coordinate is the element index */
} sw_codec_axis;

/* Where the blocks and the level-0 scales of a tensor lie. */
typedef struct {
    int ndim;               /* >= 1; the last axis is the row the kernels
                               walk (packed to whole bytes) */
    sw_codec_axis axis[SW_CODEC_MAX_DIMS];
    int scales;             /* sw_codec_scales */
    size_t R, C;            /* the matrix extents (padded, swizzled) */
    size_t align, group;
    size_t plane_codes;     /* codes in the level-0 scale plane, padding
                               included */
} sw_codec_grid;

typedef struct {
    sw_codec_fmt elem;
    sw_codec_fmt scale[2];
    int nlevels;            /* 1 or 2 */
    int whole_only;         /* level 0 is Whole: one scale for the tensor,
                               empty or not */
    int whole;              /* nlevels == 2: the outer level is Whole */
    int pow2;               /* level 0's scale is a power of two (its
                               rule is one of floor/ceil/rceil/even) */
    int rule;               /* sw_codec_rule, resolved */
    int rounding;           /* element rounding, resolved */
    uint64_t seed;
    int packed;             /* element codes packed per row */
    int source;             /* quantize: the values' float type */
    int out;                /* dequantize: the values' float type */
    int nonfinite_error;    /* dequantize: a non-finite scale is an error
                               (else its block's values are NaN) */
    double amax_floor;      /* amax = max(amax, fl(amax_floor)) */
    int path;               /* sw_codec_path of the elements' conversion */
    sw_codec_grid grid;
} sw_codec_block;

/* The offset in the level-0 scale plane of the scale whose coordinates
 * are (b, r, c) and compact offset `compact` (layout.c). */
size_t sw_codec_scale_offset(const sw_codec_grid *g, size_t compact, size_t b,
                             size_t r, size_t c);
/* The offsets of the n scale positions along the last axis that follow
 * (compact, b, r, c), the first included. */
void sw_codec_scale_offsets(const sw_codec_grid *g, size_t compact, size_t b, size_t r,
                            size_t c, size_t n, size_t *out);
/* The elements in a tensor, and its rows (the last axis is a row). */
size_t sw_codec_grid_elements(const sw_codec_grid *g);
/* The scratch bytes quantize and dequantize need on `threads` threads
 * (the caller provides them, aligned for a double). */
size_t sw_codec_block_scratch(const sw_codec_block *b, int threads);

void sw_codec_quantize(const sw_codec_block *b, const void *src,
                       unsigned char *elem, unsigned char *scale0,
                       unsigned char *scale1, void *scratch, int threads);
int sw_codec_dequantize(const sw_codec_block *b, const unsigned char *elem,
                        const unsigned char *scale0, const unsigned char *scale1,
                        void *dst, void *scratch, int threads,
                        size_t *bad_index);
/* Copy the level-0 scales of `from` into the plane of `to`: the same
 * blocks in another layout, both grids listing the tensor's axes in the
 * same order.  SW_CODEC_BAD_SCALE_COPY with *bad_index (the block, C
 * order over the block grid) when expanded copies of one block differ.
 * `size` is the scale code's byte size; the scratch holds
 * sw_codec_relayout_scratch(from) bytes. */
size_t sw_codec_relayout_scratch(const sw_codec_grid *from);
int sw_codec_relayout_scales(const sw_codec_grid *from, const void *src,
                             const sw_codec_grid *to, void *dst, int size,
                             void *scratch, size_t *bad_index);

/* ---- threads (parallel.c) ---------------------------------------------------------- */

/* Run fn(ctx, lo, hi, piece) over [0, n) split into at most `threads`
 * contiguous ranges whose bounds are multiples of `grain` (but the last),
 * each on its own thread (the calling thread takes the first); `piece`
 * numbers them from 0, below `threads` (to index per-thread scratch);
 * ranges of fewer than `min_units` units are not split off.  Returns the minimum over the
 * ranges of fn's results (0 for none): fn returns SIZE_MAX for "nothing to
 * report", else an index, so the first index in [0, n) order wins
 * whatever the split. */
typedef size_t (*sw_codec_task)(void *ctx, size_t lo, size_t hi, int piece);
size_t sw_codec_parallel(int threads, size_t n, size_t grain, size_t min_units,
                         sw_codec_task fn, void *ctx);

#endif /* SW_CODEC_ENGINE_H */
