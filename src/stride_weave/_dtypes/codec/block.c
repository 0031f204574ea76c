/* codec/block.c: block-scaled quantization, values into element and scale
 * planes and back.
 *
 * Owns the scale rules and the walk of a tensor laid out as its grid says
 * (sw_codec_grid: the values in the element plane's order, each axis with
 * the level-0 block's extent along it).  The rows (the last axis) are
 * grouped into slabs: the rows that share one block coordinate along the
 * first blocked axis before the row, and every coordinate before it; a
 * slab holds whole blocks, so slabs are independent and are the unit of
 * the split over threads.  Per slab: (1) each block's largest magnitude,
 * (2) its scale and the transform of its elements, (3) the elements,
 * converted by the fast kernels with the block's scale folded in (a
 * power-of-two scale as an exponent offset, exact; a float scale as a
 * multiplication by fl(1/s)), packed per row, and the scale codes
 * written where the layout puts them (layout.c).
 *
 * Power-of-two scales: the shared exponent comes from the exponent bits
 * of the block's largest magnitude, never from a floating-point log2.
 * Float scales follow s = fl(amax / max) (under a whole-tensor scale g:
 * fl(fl(amax / max) / g)), clamped to the scale format's normal range.
 * Every decision about a non-finite block is format.c's.
 *
 * Dequantize multiplies each element's value by its block's scale (and
 * the whole-tensor one) exactly and rounds once: in float32 when every
 * partial product is exact there, else in float64 when the whole product
 * is, else in 128-bit integers (sw_codec_encode_product).
 *
 * Pure C: no PyObject, no PyErr.
 */
#include "internal.h"

#include <float.h>

/* Elements per pass through the stack buffers (a multiple of 8, so a
 * chunk of packed codes starts on a byte). */
#define SW_BLOCK_CHUNK 1024

/* ---- element format facts -------------------------------------------------- */

/* OCP MX reads an integer element as two's complement with bits - 2
 * fraction bits (MXINT8: -2 to 1 + 63/64); its largest exponent is 0. */
static int
sw_block_elem_emax(const sw_codec_fmt *e)
{
    return e->kind == SW_NUM_INT ? 0 : e->emax;
}

static int
sw_block_elem_mbits(const sw_codec_fmt *e)
{
    return e->kind == SW_NUM_INT ? e->bits - 2 : e->p;
}

static double
sw_block_elem_max(const sw_codec_fmt *e)
{
    if (e->kind == SW_NUM_INT) {
        return (double)e->imax * sw_codec_pow2(-(e->bits - 2));
    }
    return e->max_finite;
}

/* The value of an element code (MX integers as fractions). */
static double
sw_block_elem_value(const sw_codec_fmt *e, uint64_t code)
{
    double v = sw_codec_decode_double(e, code);

    return e->kind == SW_NUM_INT ? v * sw_codec_pow2(-(e->bits - 2)) : v;
}

/* Significand bits a format's finite values need (for exact products). */
static int
sw_block_sig(const sw_codec_fmt *f)
{
    return f->kind == SW_NUM_INT ? f->bits - 1 : f->p + 1;
}

/* ---- geometry -------------------------------------------------------------- */

typedef struct {
    int nd;
    size_t rows, length, blk, nb_row;
    int dstar;              /* first axis before the row with a block, or -1 */
    size_t inner;           /* rows per step of axis dstar */
    size_t gd;              /* blocks along axis dstar */
    size_t slabs;
    size_t slab_rows;       /* rows in a full slab */
    size_t slab_blocks;     /* blocks in a slab */
    size_t gstride[SW_CODEC_MAX_DIMS];  /* a slab's block grid, C order */
    int row_expanded;
    int exp_axis;           /* an expanded axis before the row, or -1 */
    /* a slab is walked in strips of columns, each whole blocks and whole
     * bytes of packed codes: (slab, strip) is the unit of work */
    size_t strip;           /* columns per strip */
    size_t nstrips;
    size_t strip_blocks;    /* blocks along the row in a strip, at most */
    size_t inner_blocks;    /* block rows in a slab */
    size_t units;           /* slabs * nstrips */
} sw_block_geom;

/* Elements one unit of work holds at most, so that it stays in cache and
 * its per-block scratch stays small. */
#define SW_BLOCK_UNIT (1u << 16)

static size_t
sw_block_gcd(size_t a, size_t b)
{
    while (b != 0) {
        size_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static void
sw_block_geom_init(sw_block_geom *g, const sw_codec_grid *grid)
{
    int a, nd = grid->ndim;
    size_t stride = 1, quantum, want;

    memset(g, 0, sizeof(*g));
    g->nd = nd;
    g->rows = 1;
    for (a = 0; a < nd - 1; a++) {
        g->rows *= grid->axis[a].extent;
    }
    g->length = grid->axis[nd - 1].extent;
    g->blk = grid->axis[nd - 1].block;
    g->nb_row = g->length == 0 ? 0 : (g->length - 1) / g->blk + 1;
    g->row_expanded = grid->axis[nd - 1].expanded;
    g->dstar = -1;
    g->exp_axis = -1;
    for (a = 0; a < nd - 1; a++) {
        if (grid->axis[a].block > 1 && g->dstar < 0) {
            g->dstar = a;
        }
        if (grid->axis[a].expanded) {
            g->exp_axis = a;
        }
    }
    /* a slab's blocks: along the axes after dstar (a slab without dstar
     * is one row: the row's blocks) */
    for (a = nd - 1; a >= 0 && (g->dstar >= 0 ? a > g->dstar : a == nd - 1); a--) {
        const sw_codec_axis *x = &grid->axis[a];
        g->gstride[a] = stride;
        stride *= x->extent == 0 ? 0 : (x->extent - 1) / x->block + 1;
    }
    g->slab_blocks = stride;
    g->inner = 1;
    g->gd = 1;
    g->slabs = g->rows;
    g->slab_rows = 1;
    if (g->dstar >= 0) {
        const sw_codec_axis *x = &grid->axis[g->dstar];
        size_t outer = 1;
        for (a = g->dstar + 1; a < nd - 1; a++) {
            g->inner *= grid->axis[a].extent;
        }
        g->gd = x->extent == 0 ? 0 : (x->extent - 1) / x->block + 1;
        for (a = 0; a < g->dstar; a++) {
            outer *= grid->axis[a].extent;
        }
        g->slabs = outer * g->gd;
        g->slab_rows = (x->extent < x->block ? x->extent : x->block) * g->inner;
    }
    if (g->length == 0 || g->slabs == 0) {
        return;     /* nothing to walk */
    }
    g->inner_blocks = g->slab_blocks / g->nb_row;
    /* strips: a multiple of the block and of 8 columns (whole bytes) */
    quantum = g->blk / sw_block_gcd(g->blk, 8) * 8;
    want = SW_BLOCK_UNIT / (g->slab_rows ? g->slab_rows : 1);
    g->strip = want <= quantum ? quantum : want / quantum * quantum;
    if (g->strip >= g->length) {
        g->strip = g->length;
    }
    g->nstrips = (g->length - 1) / g->strip + 1;
    g->strip_blocks = (g->strip - 1) / g->blk + 1;
    g->units = g->slabs * g->nstrips;
}

/* Unit u of the walk: its slab's rows and its strip's columns [c0, c1)
 * and blocks [j0, j1). */
typedef struct {
    size_t first, count;    /* rows */
    size_t c0, c1, j0, j1;
} sw_block_unit;

/* Slab s: its first row and its number of rows. */
static void
sw_block_slab(const sw_block_geom *g, const sw_codec_grid *grid, size_t s,
              size_t *first, size_t *count)
{
    size_t o, B, ext, blk;

    if (g->dstar < 0) {
        *first = s;
        *count = 1;
        return;
    }
    ext = grid->axis[g->dstar].extent;
    blk = grid->axis[g->dstar].block;
    o = s / g->gd;
    B = s % g->gd;
    *first = (o * ext + B * blk) * g->inner;
    *count = (ext - B * blk < blk ? ext - B * blk : blk) * g->inner;
}

static void
sw_block_unit_of(const sw_block_geom *g, const sw_codec_grid *grid, size_t u,
                 sw_block_unit *w)
{
    size_t strip = u % g->nstrips;

    sw_block_slab(g, grid, u / g->nstrips, &w->first, &w->count);
    w->c0 = strip * g->strip;
    w->c1 = w->c0 + g->strip < g->length ? w->c0 + g->strip : g->length;
    w->j0 = w->c0 / g->blk;
    w->j1 = (w->c1 - 1) / g->blk + 1;
}

/* A row's place: its coordinates, kept incrementally, and what they give:
 * the slab-local index of its first block, and the share of the row's
 * coordinates in the scale's compact offset and matrix coordinates. */
typedef struct {
    size_t idx[SW_CODEC_MAX_DIMS];
    size_t within[SW_CODEC_MAX_DIMS];
    size_t bidx[SW_CODEC_MAX_DIMS];
    size_t lb;              /* the slab-local index of its first block */
    size_t lrow;            /* its block row in the slab */
    size_t comp, b, r, c;
    size_t key;             /* what the row's scale positions depend on */
} sw_block_cursor;

static void
sw_block_cursor_sums(sw_block_cursor *k, const sw_block_geom *g,
                     const sw_codec_grid *grid)
{
    int a;

    k->lb = 0;
    k->comp = k->b = k->r = k->c = 0;
    for (a = 0; a < g->nd - 1; a++) {
        const sw_codec_axis *x = &grid->axis[a];
        size_t coord = x->expanded ? k->idx[a] : k->bidx[a];
        if (g->dstar >= 0 && a > g->dstar) {
            k->lb += k->bidx[a] * g->gstride[a];
        }
        k->comp += coord * x->compact;
        k->b += coord * x->batch;
        k->r += coord * x->row;
        k->c += coord * x->col;
    }
    k->lrow = g->nb_row != 0 ? k->lb / g->nb_row : 0;
    k->key = k->lb + (g->exp_axis >= 0 ? k->idx[g->exp_axis] * g->slab_blocks : 0);
}

static void
sw_block_cursor_start(sw_block_cursor *k, const sw_block_geom *g,
                      const sw_codec_grid *grid, size_t row)
{
    int a;

    for (a = g->nd - 2; a >= 0; a--) {
        size_t ext = grid->axis[a].extent, blk = grid->axis[a].block;
        k->idx[a] = row % ext;
        row /= ext;
        k->within[a] = k->idx[a] % blk;
        k->bidx[a] = k->idx[a] / blk;
    }
    sw_block_cursor_sums(k, g, grid);
}

static void
sw_block_cursor_next(sw_block_cursor *k, const sw_block_geom *g,
                     const sw_codec_grid *grid)
{
    int a;

    for (a = g->nd - 2; a >= 0; a--) {
        if (++k->idx[a] < grid->axis[a].extent) {
            if (++k->within[a] == grid->axis[a].block) {
                k->within[a] = 0;
                k->bidx[a]++;
            }
            break;
        }
        k->idx[a] = 0;
        k->within[a] = 0;
        k->bidx[a] = 0;
    }
    sw_block_cursor_sums(k, g, grid);
}

/* The scale position of unit u (a block, or an element on an expanded
 * row axis) of the cursor's row. */
static inline size_t
sw_block_offset(const sw_codec_grid *grid, const sw_block_cursor *k, size_t u)
{
    const sw_codec_axis *x = &grid->axis[grid->ndim - 1];

    return sw_codec_scale_offset(grid, k->comp + u * x->compact, k->b + u * x->batch,
                                 k->r + u * x->row, k->c + u * x->col);
}

/* The scale positions of units [v0, v0 + n) of the cursor's row. */
static inline void
sw_block_offsets(const sw_codec_grid *grid, const sw_block_cursor *k, size_t v0,
                 size_t n, size_t *out)
{
    const sw_codec_axis *x = &grid->axis[grid->ndim - 1];

    sw_codec_scale_offsets(grid, k->comp + v0 * x->compact, k->b + v0 * x->batch,
                           k->r + v0 * x->row, k->c + v0 * x->col, n, out);
}

/* Scale positions a pass computes at once. */
#define SW_BLOCK_OFFSETS 512

/* ---- the largest magnitude of a run ---------------------------------------- */

/* ... lane by lane into m[]: a block of one element along the row. */
SW_CODEC_HOT static void
sw_block_amax32_lanes(const float *restrict src, uint64_t *restrict m, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        uint64_t a = sw_codec_fbits(src[i]) & 0x7FFFFFFFu;
        m[i] = a > m[i] ? a : m[i];
    }
}

static uint64_t
sw_block_amax64(const double *src, size_t n)
{
    uint64_t m = 0;
    size_t i;

    for (i = 0; i < n; i++) {
        uint64_t a = sw_codec_dbits(src[i]) & 0x7FFFFFFFFFFFFFFFULL;
        m = a > m ? a : m;
    }
    return m;
}

/* The tensor's largest finite magnitude (infinities and NaNs count as 0),
 * over [lo, hi). */
SW_CODEC_HOT static uint32_t
sw_block_finite_amax32(const float *src, size_t n)
{
    int32_t m = 0;
    size_t i;

    for (i = 0; i < n; i++) {
        int32_t a = (int32_t)(sw_codec_fbits(src[i]) & 0x7FFFFFFFu);
        a &= -(int32_t)(a < 0x7F800000);
        m = a > m ? a : m;
    }
    return (uint32_t)m;
}

/* ---- scales ------------------------------------------------------------------ */

/* The shared exponent of a block whose largest magnitude has the float64
 * bits `a` (finite, non-zero), by the block's rule, before clamping. */
static int
sw_block_shared_exponent(const sw_codec_block *b, uint64_t a)
{
    const sw_codec_fmt *e = &b->elem;
    int emax = sw_block_elem_emax(e), k, s;
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
        max_frac = sw_codec_dbits(sw_block_elem_max(e)) & 0xFFFFFFFFFFFFFULL;
        return s + (frac > max_frac);
    case SW_RULE_EVEN:
        /* amax rounded to the element's mantissa bits (half up) */
        return s + ((frac + (1ULL << (51 - sw_block_elem_mbits(e)))) >> 52 != 0);
    default:    /* SW_RULE_FLOOR */
        return s;
    }
}

/* What a call's scales need, set once: the power-of-two range and codes,
 * the float converter of the scale format, the whole-tensor scale. */
typedef struct {
    int se_min, se_max;     /* the scale format's powers of two */
    uint64_t zero_code;     /* the scale of an all-zero block */
    int zero_se;
    float lo, hi, elem_max; /* float scales: the clamp, the element's max */
    sw_codec_opts so;       /* the scale format's conversion */
    float g;                /* the whole-tensor scale as stored (1 if none) */
    double amax_floor;
} sw_block_scales;

/* The code of the scale 2**se in the level-0 format: the exponent field
 * itself for an unsigned format without zero (E8M0). */
static uint64_t
sw_block_pow2_code(const sw_codec_block *b, const sw_block_scales *ss, int se)
{
    const sw_codec_fmt *s = &b->scale[0];
    int is_nan;

    if (!s->has_zero && !s->is_signed && s->p == 0) {
        return (uint64_t)(se - s->emin);
    }
    return sw_codec_encode_double(s, &ss->so, sw_codec_pow2(se), 0, 0, &is_nan);
}

/* The clamped shared exponent of a block, or of an all-zero one. */
static int
sw_block_pow2_exponent(const sw_codec_block *b, const sw_block_scales *ss, uint64_t a)
{
    int se;

    if (a == 0) {
        return ss->zero_se;
    }
    se = sw_block_shared_exponent(b, a);
    return se < ss->se_min ? ss->se_min : se > ss->se_max ? ss->se_max : se;
}

/* Float scales: the block's scale code and fl(1 / s) (under g: fl(fl(1 /
 * g) / s)), s the value the code holds. */
static uint64_t
sw_block_float_scale(const sw_codec_block *b, const sw_block_scales *ss, float amax,
                     float *recip)
{
    const sw_codec_fmt *s = &b->scale[0];
    float sc = amax / ss->elem_max, dec;
    uint64_t code;
    int is_nan;

    if (b->whole) {
        sc = sc / ss->g;
    }
    sc = sc >= ss->lo ? sc : ss->lo;
    sc = sc > ss->hi ? ss->hi : sc;
    code = sw_codec_encode_double(s, &ss->so, (double)sc, 0, 0, &is_nan);
    dec = (float)sw_codec_decode_double(s, code);
    *recip = b->whole ? (1.0f / ss->g) / dec : 1.0f / dec;
    return code;
}

/* The whole-tensor scale as the Whole level's format stores it, and its
 * code: g (positive, finite) rounded to that format, nearest-even, no
 * smaller than its smallest positive value nor than g_min, and no larger
 * than its largest value float32 holds.  The blocks are scaled against
 * this value, the one dequantize reads back (for a Float32 level, g
 * itself). */
static float
sw_block_whole_scale(const sw_codec_fmt *w, float g, float g_min, uint64_t *code)
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
    if (v < (double)g_min) {
        /* the format's first value from g_min up */
        o.rounding = SW_ROUND_UP;
        *code = sw_codec_encode_double(w, &o, (double)g_min, 0, 0, &is_nan);
        v = sw_codec_decode_double(w, *code);
    }
    return (float)v;
}

static void
sw_block_scales_init(sw_block_scales *ss, const sw_codec_block *b)
{
    const sw_codec_fmt *s = &b->scale[0];

    memset(ss, 0, sizeof(*ss));
    ss->so.rounding = SW_ROUND_NEAREST_EVEN;
    ss->so.overflow = SW_OVERFLOW_SATURATE;
    /* the scale's powers of two: its normal range (E8M0: -127..127) */
    ss->se_min = s->emin;
    ss->se_max = s->emax;
    ss->zero_se = s->emin;
    ss->g = 1.0f;
    /* fl(amax_floor): in the values' type */
    ss->amax_floor = b->source == SW_FLOAT32 ? (double)(float)b->amax_floor : b->amax_floor;
    ss->lo = (float)sw_codec_pow2(s->emin);
    ss->hi = s->max_finite > FLT_MAX ? FLT_MAX : (float)s->max_finite;
    ss->elem_max = (float)sw_block_elem_max(&b->elem);
    if (b->pow2) {
        ss->zero_code = sw_block_pow2_code(b, ss, ss->zero_se);
    }
    else {
        float recip;
        ss->zero_code = sw_block_float_scale(b, ss, 0.0f, &recip);
    }
}

/* ---- quantize -------------------------------------------------------------------- */

typedef struct {
    const sw_codec_block *b;
    const sw_codec_grid *grid;
    sw_block_geom geom;
    sw_block_scales ss;
    sw_codec_opts eo;               /* the elements' conversion */
    sw_codec_plan k32;              /* float32 values at any scale */
    sw_codec_plan sk;               /* float scales into their format */
    float svalues[256];             /* the values of its codes (<= 8 bits) */
    const void *src;
    unsigned char *elem, *scale0;
    size_t row_bytes;
    int esize, ssize;
    unsigned char *scratch;
    size_t per_piece;
    /* the whole-tensor amax, by piece */
    uint32_t *amax_parts;
} sw_block_call;

/* One piece's scratch: per block of a unit its amax, scale code, exponent
 * and reciprocal. */
typedef struct {
    uint64_t *amax;
    uint64_t *code;
    int32_t *se;
    float *recip;
} sw_block_work;

/* The blocks of one unit of work, at most. */
static size_t
sw_block_unit_blocks(const sw_block_geom *g)
{
    return g->inner_blocks * g->strip_blocks;
}

static void
sw_block_work_of(const sw_block_call *c, int piece, sw_block_work *w)
{
    unsigned char *p = c->scratch + (size_t)piece * c->per_piece;
    size_t nb = sw_block_unit_blocks(&c->geom);

    w->amax = (uint64_t *)(void *)p;
    w->code = w->amax + nb;
    w->se = (int32_t *)(void *)(w->code + nb);
    w->recip = (float *)(void *)(w->se + nb);
}

static size_t
sw_block_per_piece(const sw_block_geom *g)
{
    /* quantize: amax and code (8 bytes), exponent and reciprocal (4
     * bytes) per block; dequantize: a strip's scales (12 bytes a column,
     * enough for an expanded row); rounded to a cache line */
    size_t q = sw_block_unit_blocks(g) * 24, d = (g->strip + 1) * 12;

    return ((q > d ? q : d) + 63) / 64 * 64;
}

size_t
sw_codec_block_scratch(const sw_codec_block *b, int threads)
{
    sw_block_geom g;
    size_t per;

    sw_block_geom_init(&g, &b->grid);
    per = sw_block_per_piece(&g);
    /* no more pieces than units of work run (sw_codec_parallel's grain is
     * one unit); a size past what memory can hold asks for SIZE_MAX, which
     * no allocator gives */
    if (g.units != 0 && (size_t)threads > g.units) {
        threads = (int)g.units;
    }
    if (per > (SIZE_MAX - 64) / (size_t)(threads > 0 ? threads : 1)) {
        return SIZE_MAX;
    }
    return (size_t)threads * per + 64;
}

/* The local index of block j of the cursor's row in a unit. */
static inline size_t
sw_block_local(const sw_block_geom *g, const sw_block_cursor *cur,
               const sw_block_unit *w, size_t j)
{
    return cur->lrow * g->strip_blocks + (j - w->j0);
}

/* The largest magnitude (float32 bits) of each of the blocks of `blk`
 * elements in [0, n) of x, the last one partial, max-ed into am[]: one
 * call for a run of blocks, the common block sizes as constants so the
 * inner loops unroll. */
static inline __attribute__((always_inline)) void
sw_block_amax_body(const float *x, size_t n, size_t blk, uint64_t *restrict am)
{
    size_t j, start;

    for (j = 0, start = 0; start < n; j++, start += blk) {
        size_t m = n - start < blk ? n - start : blk, t;
        int32_t mx = 0;
        for (t = 0; t < m; t++) {
            int32_t a = (int32_t)(sw_codec_fbits(x[start + t]) & 0x7FFFFFFFu);
            mx = a > mx ? a : mx;
        }
        am[j] = (uint64_t)mx > am[j] ? (uint64_t)mx : am[j];
    }
}

SW_CODEC_HOT static void
sw_block_amax_run(const float *x, size_t n, size_t blk, uint64_t *restrict am)
{
    switch (blk) {
    case 16:
        sw_block_amax_body(x, n, 16, am);
        break;
    case 32:
        sw_block_amax_body(x, n, 32, am);
        break;
    case 128:
        sw_block_amax_body(x, n, 128, am);
        break;
    default:
        sw_block_amax_body(x, n, blk, am);
        break;
    }
}

/* Pass 1 over a unit: each block's largest magnitude (bits). */
static void
sw_block_unit_amax(const sw_block_call *c, const sw_block_work *w,
                   const sw_block_unit *u)
{
    const sw_block_geom *g = &c->geom;
    sw_block_cursor cur;
    size_t r, j;
    int f32 = c->b->source == SW_FLOAT32;

    memset(w->amax, 0, sw_block_unit_blocks(g) * sizeof(uint64_t));
    sw_block_cursor_start(&cur, g, c->grid, u->first);
    for (r = 0; r < u->count; r++) {
        const char *row = (const char *)c->src + (u->first + r) * g->length * (f32 ? 4 : 8);
        uint64_t *am = w->amax + sw_block_local(g, &cur, u, u->j0);
        if (g->blk == 1 && f32) {
            /* one element per block along the row: lane by lane */
            sw_block_amax32_lanes((const float *)row + u->c0, am, u->c1 - u->c0);
        }
        else if (f32) {
            sw_block_amax_run((const float *)row + u->c0, u->c1 - u->c0, g->blk, am);
        }
        else {
            for (j = u->j0; j < u->j1; j++) {
                size_t start = j * g->blk;
                size_t m = g->length - start < g->blk ? g->length - start : g->blk;
                uint64_t a = sw_block_amax64((const double *)row + start, m);
                am[j - u->j0] = a > am[j - u->j0] ? a : am[j - u->j0];
            }
        }
        if (r + 1 < u->count) {
            sw_block_cursor_next(&cur, g, c->grid);
        }
    }
}

/* Float scales of n blocks from their maxima (float32 bits), nearest-even
 * into the scale format: sc = fl(fl(amax / max) / g), clamped to the
 * format's normal range, converted by the fast kernel a chunk at a time,
 * and the reciprocal the elements are multiplied by from the value the
 * code holds. */
SW_CODEC_HOT static void
sw_block_float_clamp(const uint64_t *restrict amax, float *restrict sc, size_t n,
                     float emax, float g, int whole, float lo, float hi)
{
    size_t q;

    for (q = 0; q < n; q++) {
        float s = sw_codec_from_fbits((uint32_t)amax[q]) / emax;
        s = whole ? s / g : s;
        s = s >= lo ? s : lo;
        sc[q] = s > hi ? hi : s;
    }
}

/* Each block's code, exponent (0) and reciprocal num / dec of the value
 * its code holds. */
SW_CODEC_HOT static void
sw_block_float_recips(const float *restrict dec, const uint32_t *restrict codes,
                      uint64_t mask, float num, uint64_t *restrict code,
                      float *restrict recip, int32_t *restrict se, size_t n)
{
    size_t q;

    for (q = 0; q < n; q++) {
        code[q] = codes[q] & mask;
        recip[q] = num / dec[q];
        se[q] = 0;
    }
}

static void
sw_block_float_scales(const sw_block_call *c, const sw_block_work *w, size_t nb)
{
    const sw_codec_block *b = c->b;
    const sw_block_scales *ss = &c->ss;
    const sw_codec_fmt *s = &b->scale[0];
    float sc[SW_BLOCK_CHUNK], inv_g = 1.0f / ss->g;
    uint32_t codes[SW_BLOCK_CHUNK];
    size_t i, m, q;

    for (i = 0; i < nb; i += m) {
        m = nb - i < SW_BLOCK_CHUNK ? nb - i : SW_BLOCK_CHUNK;
        sw_block_float_clamp(w->amax + i, sc, m, ss->elem_max, ss->g, b->whole,
                             ss->lo, ss->hi);
        if (c->sk.kernel != SW_KERNEL_NONE) {
            sw_codec_k32_run(&c->sk, sc, codes, 4, m, 0, 0);
        }
        else {
            sw_codec_general_run(s, &ss->so, SW_FLOAT32, sc, codes, 4, m, 0, 0);
        }
        /* the value each code holds, then the reciprocals in one
         * (vectorized) pass */
        if (s->bits <= 8) {
            for (q = 0; q < m; q++) {
                sc[q] = c->svalues[codes[q] & 0xFF];
            }
        }
        else {
            for (q = 0; q < m; q++) {
                sc[q] = (float)sw_codec_decode_double(s, codes[q]);
            }
        }
        sw_block_float_recips(sc, codes, s->mask, b->whole ? inv_g : 1.0f,
                              w->code + i, w->recip + i, w->se + i, m);
    }
}

/* Pass 2: each block's scale code and transform. */
static void
sw_block_unit_scales(const sw_block_call *c, const sw_block_work *w)
{
    const sw_codec_block *b = c->b;
    const sw_block_scales *ss = &c->ss;
    size_t q, nb = sw_block_unit_blocks(&c->geom);
    int f32 = b->source == SW_FLOAT32;
    uint64_t inf = f32 ? 0x7F800000u : 0x7FF0000000000000ULL, floor_bits;
    float floor32 = (float)ss->amax_floor;

    if (!b->pow2) {
        /* float scales (float32 values only): the finite blocks at once,
         * then the decisions for the others */
        for (q = 0; q < nb; q++) {
            uint64_t a = w->amax[q];
            if (a < inf && sw_codec_from_fbits((uint32_t)a) < floor32) {
                w->amax[q] = sw_codec_fbits(floor32);
            }
        }
        sw_block_float_scales(c, w, nb);
        for (q = 0; q < nb; q++) {
            if (w->amax[q] >= inf) {
                w->code[q] = sw_codec_decide_nonfinite_scale(&b->scale[0]);
                w->se[q] = INT32_MIN;   /* the block's elements: format.c's */
            }
        }
        return;
    }
    floor_bits = sw_codec_fbits((float)ss->amax_floor);
    for (q = 0; q < nb; q++) {
        uint64_t a = w->amax[q];
        double amax;
        int se;

        if (a >= inf) {
            w->code[q] = sw_codec_decide_nonfinite_scale(&b->scale[0]);
            w->se[q] = INT32_MIN;   /* the block's elements: format.c's */
            continue;
        }
        if (f32 && a >= floor_bits) {
            /* float32 bits to float64 bits, exactly (a normal float32 only:
             * its exponent rebiased, its fraction shifted) */
            if (a >= 0x800000u) {
                se = sw_block_pow2_exponent(
                    b, ss, ((a >> 23) + 896ULL) << 52 | (uint64_t)(a & 0x7FFFFFu) << 29);
                w->se[q] = se;
                w->code[q] = sw_block_pow2_code(b, ss, se);
                continue;
            }
        }
        amax = f32 ? (double)sw_codec_from_fbits((uint32_t)a) : sw_codec_from_dbits(a);
        if (amax < ss->amax_floor) {
            amax = ss->amax_floor;
        }
        se = sw_block_pow2_exponent(b, ss, sw_codec_dbits(amax));
        w->se[q] = se;
        w->code[q] = amax == 0.0 ? ss->zero_code : sw_block_pow2_code(b, ss, se);
    }
}

/* The codes of m elements starting at column `start` of a row, all of one
 * block, into out (one code per element, code size esize). */
static void
sw_block_encode_run(const sw_block_call *c, const char *row, size_t start, size_t m,
                    int32_t se, float recip, uint64_t index, void *out)
{
    const sw_codec_block *b = c->b;
    const sw_codec_plan *k = &c->k32;
    int f32 = b->source == SW_FLOAT32;
    size_t t;

    if (se == INT32_MIN) {
        uint64_t code = sw_codec_decide_nonfinite_element(&b->elem);
        for (t = 0; t < m; t++) {
            sw_codec_store(out, c->esize, t, code);
        }
        return;
    }
    if (!b->pow2) {
        /* float scales: fl(x * recip), then the element's conversion */
        const float *x = (const float *)row + start;
        if (c->esize == 1 && sw_codec_plan_takes(k, 0)) {
            sw_codec_k32_scaled(k, x, (unsigned char *)out, m, &recip, 0, index);
            return;
        }
        {
            float buf[SW_BLOCK_CHUNK];
            size_t i, n;
            for (i = 0; i < m; i += n) {
                n = m - i < SW_BLOCK_CHUNK ? m - i : SW_BLOCK_CHUNK;
                for (t = 0; t < n; t++) {
                    buf[t] = x[i + t] * recip;
                }
                sw_codec_general_run(&b->elem, &c->eo, SW_FLOAT32, buf,
                                     (char *)out + i * (size_t)c->esize, c->esize, n, 0,
                                     index + i);
            }
        }
        return;
    }
    if (f32 && sw_codec_plan_takes(k, se)) {
        sw_codec_k32_run(k, (const float *)row + start, out, c->esize, m, se, index);
        return;
    }
    {
        sw_codec_plan kk;
        int path = sw_codec_choose(&kk, &b->elem, &c->eo, b->source, se);
        const char *x = row + start * (f32 ? 4 : 8);
        if (path == 32) {
            sw_codec_k32_run(&kk, x, out, c->esize, m, se, index);
        }
        else if (path == 64) {
            sw_codec_k64_run(&kk, x, out, c->esize, m, se, index);
        }
        else {
            sw_codec_general_run(&b->elem, &c->eo, b->source, x, out, c->esize, m, se,
                                 index);
        }
    }
}

/* Per-block values spread over the lanes of a chunk: `first` lanes of the
 * block already begun (0: none), then blocks of `blk`; the common sizes
 * as constants, so each block's fill is one vector store. */
static inline __attribute__((always_inline)) void
sw_block_spread_body(const uint32_t *restrict v, size_t first, size_t blk,
                     uint32_t *restrict lanes, size_t m, const size_t size)
{
    size_t b = 0, start = 0, t;

    if (first != 0) {
        for (t = 0; t < first && t < m; t++) {
            lanes[t] = v[0];
        }
        start = first;
        b = 1;
    }
    for (; start + (size ? size : blk) <= m; b++, start += size ? size : blk) {
        for (t = 0; t < (size ? size : blk); t++) {
            lanes[start + t] = v[b];
        }
    }
    for (t = start; t < m; t++) {
        lanes[t] = v[b];
    }
}

SW_CODEC_HOT static void
sw_block_spread(const uint32_t *v, size_t first, size_t blk, uint32_t *lanes, size_t m)
{
    switch (blk) {
    case 16:
        sw_block_spread_body(v, first, blk, lanes, m, 16);
        break;
    case 32:
        sw_block_spread_body(v, first, blk, lanes, m, 32);
        break;
    default:
        sw_block_spread_body(v, first, blk, lanes, m, 0);
        break;
    }
}

/* The exponents of n blocks into out[], a non-finite block's (INT32_MIN)
 * as `stand_in`, their smallest and largest; returns 1 when a non-finite
 * block is among them. */
SW_CODEC_HOT static int
sw_block_exponents(const int32_t *restrict se, size_t n, int32_t stand_in,
                   int32_t *restrict out, int32_t *lo, int32_t *hi)
{
    int32_t a = INT32_MAX, z = INT32_MIN;
    int any = 0;
    size_t t;

    for (t = 0; t < n; t++) {
        int32_t v = se[t] == INT32_MIN ? stand_in : se[t];
        any |= se[t] == INT32_MIN;
        out[t] = v;
        a = v < a ? v : a;
        z = v > z ? v : z;
    }
    *lo = a;
    *hi = z;
    return any;
}

/* The smallest and the largest of n exponents. */
SW_CODEC_HOT static void
sw_block_range(const int32_t *restrict v, size_t n, int32_t *lo, int32_t *hi)
{
    int32_t a = INT32_MAX, z = INT32_MIN;
    size_t t;

    for (t = 0; t < n; t++) {
        a = v[t] < a ? v[t] : a;
        z = v[t] > z ? v[t] : z;
    }
    *lo = a;
    *hi = z;
}

/* The blocks of a chunk of a row, [i, i + m): q0 (in the work arrays)
 * and the nb after it.  Whether the fast kernel takes them all: 1, or 2
 * when a non-finite block is among them (its elements are fixed up
 * after), 0 when the chunk must go block by block.  Power-of-two scales:
 * the exponents into se[], and their range; float scales read the
 * reciprocals where they are. */
static int
sw_block_chunk_blocks(const sw_block_call *c, const sw_block_work *w, size_t q0,
                      size_t nb, int32_t *se, int32_t *lo, int32_t *hi)
{
    const sw_codec_plan *k = &c->k32;
    int any;

    if (c->esize != 1 || k->kernel == SW_KERNEL_NONE) {
        return 0;
    }
    if (!c->b->pow2) {
        /* exponents are 0, or INT32_MIN for a non-finite block, whose
         * elements are fixed up after */
        sw_block_range(w->se + q0, nb, lo, hi);
        return sw_codec_plan_takes(k, 0) ? 1 + (*lo == INT32_MIN) : 0;
    }
    any = sw_block_exponents(w->se + q0, nb, k->se_lo, se, lo, hi);
    return sw_codec_plan_takes(k, *lo) && sw_codec_plan_takes(k, *hi) ? 1 + any : 0;
}

/* A chunk of m float32 values whose blocks are one column each (blocks
 * q, q + 1, ... of the work arrays), converted in one kernel call when
 * every block is finite and its scale one the kernel takes: 1, else 0
 * (the caller goes the general way). */
static int
sw_block_chunk_lanes(const sw_block_call *c, const sw_block_work *w, size_t q,
                     const float *x, unsigned char *out, size_t m, uint64_t index)
{
    int32_t lo, hi;

    if (c->esize != 1 || c->k32.kernel == SW_KERNEL_NONE) {
        return 0;
    }
    sw_block_range(w->se + q, m, &lo, &hi);
    if (lo == INT32_MIN) {
        return 0;       /* a non-finite block among them */
    }
    if (c->b->pow2) {
        if (!sw_codec_plan_takes(&c->k32, lo) || !sw_codec_plan_takes(&c->k32, hi)) {
            return 0;
        }
        sw_codec_k32_lanes(&c->k32, x, out, m, w->se + q, index, lo, hi);
        return 1;
    }
    if (!sw_codec_plan_takes(&c->k32, 0)) {
        return 0;
    }
    sw_codec_k32_scaled(&c->k32, x, out, m, w->recip + q, 1, index);
    return 1;
}

/* Pass 3 over a unit: the scale codes where the layout puts them, and the
 * elements, packed per row. */
static void
sw_block_unit_elements(const sw_block_call *c, const sw_block_work *w,
                       const sw_block_unit *u)
{
    const sw_codec_block *b = c->b;
    const sw_block_geom *g = &c->geom;
    sw_block_cursor cur;
    size_t r, v, i, last_key = SIZE_MAX;
    int f32 = b->source == SW_FLOAT32;
    unsigned char codes[SW_BLOCK_CHUNK * 8];    /* codes of <= 8 bytes */
    int32_t ses[SW_BLOCK_CHUNK + 1];            /* a chunk's blocks */
    uint32_t lanes[SW_BLOCK_CHUNK];             /* ... spread over its lanes */
    int32_t lo, hi;
    unsigned char nonfinite = (unsigned char)sw_codec_decide_nonfinite_element(&b->elem);

    sw_block_cursor_start(&cur, g, c->grid, u->first);
    for (r = 0; r < u->count; r++) {
        size_t row_index = u->first + r;
        const char *row = (const char *)c->src + row_index * g->length * (f32 ? 4 : 8);
        unsigned char *erow = c->elem + row_index * c->row_bytes;
        size_t base = sw_block_local(g, &cur, u, u->j0);

        /* the row's scale positions, unless the row before wrote them */
        if (cur.key != last_key || g->row_expanded) {
            size_t v0 = g->row_expanded ? u->c0 : u->j0;
            size_t v1 = g->row_expanded ? u->c1 : u->j1;
            const sw_codec_axis *x = &c->grid->axis[g->nd - 1];
            if (c->grid->scales == SW_SCALES_COMPACT && !g->row_expanded
                && c->ssize == 1 && x->compact == 1) {
                /* a row of one-byte compact scales: consecutive */
                unsigned char *dst = c->scale0 + cur.comp + v0;
                const uint64_t *code = w->code + base;
                for (v = 0; v < v1 - v0; v++) {
                    dst[v] = (unsigned char)code[v];
                }
            }
            else {
                size_t off[SW_BLOCK_OFFSETS], k, n;
                for (v = v0; v < v1; v += n) {
                    n = v1 - v < SW_BLOCK_OFFSETS ? v1 - v : SW_BLOCK_OFFSETS;
                    sw_block_offsets(c->grid, &cur, v, n, off);
                    for (k = 0; k < n; k++) {
                        size_t j = g->row_expanded ? (v + k) / g->blk : v + k;
                        sw_codec_store(c->scale0, c->ssize, off[k],
                                       w->code[base + (j - u->j0)]);
                    }
                }
            }
            last_key = cur.key;
        }
        if (b->packed && b->elem.bits != 4 && b->elem.bits != 6 && b->elem.bits != 8) {
            /* packing ORs the codes in: this strip's bytes start clean
             * (4-, 6- and 8-bit codes from a whole byte, as every chunk
             * here starts, are written whole bytes at a time) */
            size_t lo = u->c0 * (size_t)b->elem.bits / 8;
            size_t hi = sw_codec_row_bytes(b->elem.bits, u->c1);
            memset(erow + lo, 0, hi - lo);
        }
        for (i = u->c0; i < u->c1; i += SW_BLOCK_CHUNK) {
            size_t m = u->c1 - i < SW_BLOCK_CHUNK ? u->c1 - i : SW_BLOCK_CHUNK;
            size_t index = row_index * g->length + i, t, n, q0;
            unsigned char *out = b->packed ? codes : erow + i * (size_t)c->esize;
            int fast;
            size_t first = i % g->blk != 0 ? g->blk - i % g->blk : 0;

            if (g->blk == 1 && f32 && sw_block_chunk_lanes(c, w, base + (i - u->j0),
                                                           (const float *)row + i, out, m,
                                                           index)) {
                /* blocks of one column: the blocks' own arrays are the lanes */
                if (b->packed) {
                    sw_codec_pack_at(codes, c->esize, b->elem.bits, m, erow, i);
                }
                continue;
            }
            q0 = base + (i / g->blk - u->j0);
            fast = f32 ? sw_block_chunk_blocks(c, w, q0, (i + m - 1) / g->blk + 1 - i / g->blk,
                                               ses, &lo, &hi) : 0;
            if (fast) {
                /* one kernel call for the chunk, each lane its block's scale */
                if (b->pow2) {
                    sw_block_spread((const uint32_t *)ses, first, g->blk, lanes, m);
                    sw_codec_k32_lanes(&c->k32, (const float *)row + i, out, m,
                                       (const int32_t *)lanes, index, lo, hi);
                }
                else {
                    sw_block_spread((const uint32_t *)(const void *)(w->recip + q0), first,
                                    g->blk, lanes, m);
                    sw_codec_k32_scaled(&c->k32, (const float *)row + i, out, m,
                                        (const float *)(const void *)lanes, 1, index);
                }
                for (t = 0; fast == 2 && t < m; t++) {
                    size_t q = base + ((i + t) / g->blk - u->j0);
                    out[t] = w->se[q] == INT32_MIN ? nonfinite : out[t];
                }
            }
            else {
                /* block by block within the chunk */
                for (t = 0; t < m; t += n) {
                    size_t col = i + t, j = col / g->blk, end = (j + 1) * g->blk;
                    size_t q = base + (j - u->j0);
                    n = (end < i + m ? end : i + m) - col;
                    sw_block_encode_run(c, row, col, n, w->se[q], w->recip[q], index + t,
                                        out + t * (size_t)c->esize);
                }
            }
            if (b->packed) {
                sw_codec_pack_at(codes, c->esize, b->elem.bits, m, erow, i);
            }
        }
        if (r + 1 < u->count) {
            sw_block_cursor_next(&cur, g, c->grid);
        }
    }
}

static size_t
sw_block_quantize_task(void *arg, size_t lo, size_t hi, int piece)
{
    sw_block_call *c = (sw_block_call *)arg;
    sw_block_work w;
    sw_block_unit u;
    size_t k;

    sw_block_work_of(c, piece, &w);
    for (k = lo; k < hi; k++) {
        sw_block_unit_of(&c->geom, c->grid, k, &u);
        if (u.count == 0) {
            continue;
        }
        sw_block_unit_amax(c, &w, &u);
        sw_block_unit_scales(c, &w);
        sw_block_unit_elements(c, &w, &u);
    }
    return SIZE_MAX;
}

/* The whole-tensor amax: stripes of the flat values, one per piece. */
static size_t
sw_block_tensor_amax_task(void *arg, size_t lo, size_t hi, int piece)
{
    sw_block_call *c = (sw_block_call *)arg;
    size_t n = sw_codec_grid_elements(c->grid);

    (void)n;
    c->amax_parts[piece] = sw_block_finite_amax32((const float *)c->src + lo, hi - lo);
    return SIZE_MAX;
}

void
sw_codec_quantize(const sw_codec_block *b, const void *src, unsigned char *elem,
                  unsigned char *scale0, unsigned char *scale1, void *scratch,
                  int threads)
{
    sw_block_call c;
    size_t n, slab_elems;

    memset(&c, 0, sizeof(c));
    c.b = b;
    c.grid = &b->grid;
    sw_block_geom_init(&c.geom, c.grid);
    sw_block_scales_init(&c.ss, b);
    c.eo.rounding = b->rounding;
    c.eo.overflow = SW_OVERFLOW_SATURATE;
    c.eo.seed = b->seed;
    c.eo.mx_int = b->elem.kind == SW_NUM_INT;
    c.eo.path = b->path;
    sw_codec_resolve(&b->elem, &c.eo);
    sw_codec_plan_make(&c.k32, &b->elem, &c.eo, SW_FLOAT32, 0);
    if (b->path != SW_PATH_AUTO) {
        c.k32.kernel = SW_KERNEL_NONE;  /* every block through sw_codec_choose */
    }
    if (!b->pow2) {
        size_t v;
        sw_codec_plan_make(&c.sk, &b->scale[0], &c.ss.so, SW_FLOAT32, 0);
        if (!sw_codec_plan_takes(&c.sk, 0) || b->path == SW_PATH_GENERAL) {
            c.sk.kernel = SW_KERNEL_NONE;
        }
        for (v = 0; b->scale[0].bits <= 8 && v < ((size_t)1 << b->scale[0].bits); v++) {
            c.svalues[v] = (float)sw_codec_decode_double(&b->scale[0], v);
        }
    }
    c.src = src;
    c.elem = elem;
    c.scale0 = scale0;
    c.esize = sw_codec_code_size(b->elem.bits);
    c.ssize = sw_codec_code_size(b->scale[0].bits);
    c.row_bytes = b->packed ? sw_codec_row_bytes(b->elem.bits, c.geom.length)
                            : c.geom.length * (size_t)c.esize;
    c.scratch = (unsigned char *)scratch;
    c.per_piece = sw_block_per_piece(&c.geom);
    n = sw_codec_grid_elements(c.grid);

    if (b->whole) {
        /* the whole-tensor scale: amax / (largest element * largest
         * scale), as its level stores it */
        uint32_t parts[256];
        float t = 0.0f, g = 1.0f;
        uint64_t gcode;
        int i;
        memset(parts, 0, sizeof(parts));
        c.amax_parts = parts;
        sw_codec_parallel(threads > 256 ? 256 : threads, n, 4096, 1u << 18,
                          sw_block_tensor_amax_task, &c);
        for (i = 0; i < 256; i++) {
            float v = sw_codec_from_fbits(parts[i]);
            t = v > t ? v : t;
        }
        if ((double)t < c.ss.amax_floor) {
            t = (float)c.ss.amax_floor;
        }
        if (t > 0.0f) {
            g = t / (float)(sw_block_elem_max(&b->elem) * b->scale[0].max_finite);
        }
        if (!(g > 0.0f)) {
            g = 1.0f;   /* all zero (or underflowed): 1.0, finite */
        }
        /* g_min: every block's reciprocal (1/g)/s is a float32 even for
         * the smallest block scale, 2**emin; a subnormal g would make
         * 1/g infinite, and every element of a tiny tensor saturate */
        c.ss.g = sw_block_whole_scale(&b->scale[1], g,
                                      (float)sw_codec_pow2(-126 - b->scale[0].emin),
                                      &gcode);
        sw_codec_store(scale1, sw_codec_code_size(b->scale[1].bits), 0, gcode);
        /* the all-zero block's scale under this g */
        if (!b->pow2) {
            float recip;
            c.ss.zero_code = sw_block_float_scale(b, &c.ss, 0.0f, &recip);
        }
    }
    if (n == 0) {
        /* no elements, however many rows of none: nothing to walk, but a
         * Whole level holds its one scale */
        if (b->whole_only) {
            sw_codec_store(scale0, c.ssize, 0, c.ss.zero_code);
        }
        return;
    }
    slab_elems = n / (c.geom.units ? c.geom.units : 1);
    sw_codec_parallel(threads, c.geom.units, 1,
                      SW_BLOCK_UNIT / (slab_elems ? slab_elems : 1) + 1,
                      sw_block_quantize_task, &c);
}

/* ---- dequantize ------------------------------------------------------------------ */

/* How the product of an element and its scales is rounded once. */
enum {
    SW_PRODUCT_FLOAT = 0,   /* in float32: every partial product exact */
    SW_PRODUCT_DOUBLE,      /* in float64: the whole product exact */
    SW_PRODUCT_EXACT,       /* in 128-bit integers */
};

typedef struct {
    const sw_codec_block *b;
    const sw_codec_grid *grid;
    sw_block_geom geom;
    const unsigned char *elem, *scale0;
    void *dst;
    int out_size, esize, ssize;
    size_t row_bytes;
    int product;
    float ef[256];          /* element values (formats of <= 8 bits) */
    double ed[256];
    float ef2[256][2];      /* 4-bit elements: a byte's two values */
    double stab[256];       /* scale values by code (formats of <= 8 bits) */
    int stab_ok;
    int fused;              /* the float product of byte or nibble codes in
                               blocks along the row: sw_deq_fused_row */
    float gf;
    double gd;
    sw_codec_fmt out_fmt;   /* the output type as a format */
    sw_codec_plan out_plan; /* float64 into float16/bfloat16 */
    unsigned char *scratch;
    size_t per_piece;
} sw_deq_call;

/* The value of a scale code for dequantize: its value, or NaN when it is
 * not a finite positive scale (a NaN, an infinity, or its sign bit set:
 * scales are magnitudes, so UE4M3's bit 7 marks an invalid scale). */
static double
sw_deq_scale_value(const sw_codec_fmt *s, uint64_t code)
{
    double v;

    if (s->sign != 0 && (code & s->sign) != 0) {
        return sw_codec_from_dbits(0x7FF8000000000000ULL);
    }
    v = sw_codec_decode_double(s, code);
    if (!(v - v == 0.0)) {
        return sw_codec_from_dbits(0x7FF8000000000000ULL);
    }
    return v;
}

/* 1 when every finite value of a format is a float32. */
static int
sw_deq_float32_exact(const sw_codec_fmt *f)
{
    if (f->kind == SW_NUM_INT) {
        return f->bits - 1 <= 24;
    }
    return f->p <= 23 && f->emax <= 127 && f->emin - f->p >= -149;
}

/* The exponent of a format's smallest positive value's last bit. */
static int
sw_deq_quantum(const sw_codec_fmt *f)
{
    if (f->kind == SW_NUM_INT) {
        return -(f->bits - 2);
    }
    return f->has_zero ? f->emin - f->p : f->emin;
}

static void
sw_deq_choose(sw_deq_call *c)
{
    const sw_codec_block *b = c->b;
    const sw_codec_fmt *e = &b->elem, *s = &b->scale[0];
    int sig = sw_block_sig(e) + sw_block_sig(s) + (b->whole ? 24 : 0);

    c->product = SW_PRODUCT_EXACT;
    if (b->out == SW_FLOAT32 && e->bits <= 8 && sw_deq_float32_exact(e)
        && sw_deq_float32_exact(s)) {
        if (!b->whole) {
            c->product = SW_PRODUCT_FLOAT;      /* one multiplication */
            return;
        }
        /* (e * s) exact in float32, then times g, rounded once: the
         * partial product's significand and range must fit */
        if (sw_block_sig(e) + sw_block_sig(s) <= 24
            && sw_deq_quantum(e) + sw_deq_quantum(s) >= -149
            && sw_block_elem_max(e) * s->max_finite <= FLT_MAX) {
            c->product = SW_PRODUCT_FLOAT;
            return;
        }
    }
    if (sig <= 53) {
        c->product = SW_PRODUCT_DOUBLE;
    }
}

/* The exact product of element value ev (finite) and the scales, rounded
 * once to the output type: its bits. */
static uint64_t
sw_deq_exact(const sw_deq_call *c, double ev, double S)
{
    uint64_t me, ms, mg = 1;
    int qe, qs, qg = 0;
    unsigned __int128 m;

    sw_codec_split_value(ev, &me, &qe);
    sw_codec_split_value(S, &ms, &qs);
    if (c->b->whole) {
        sw_codec_split_value(c->gd, &mg, &qg);
    }
    m = (unsigned __int128)me * ms * mg;
    return sw_codec_encode_product(&c->out_fmt, ev < 0, m, qe + qs + qg);
}

/* One element's value (from `code`) times S (and g), as output bits, by
 * the exact path: NaNs keep the element's sign, a NaN scale gives a
 * positive NaN, an infinite element stays infinite. */
static uint64_t
sw_deq_exact_one(const sw_deq_call *c, uint64_t code, double S)
{
    const sw_codec_fmt *o = &c->out_fmt;
    double ev = sw_block_elem_value(&c->b->elem, code);
    int neg = (int)(sw_codec_dbits(ev) >> 63);

    if (ev != ev) {
        return neg ? o->nan_neg : o->nan_pos;
    }
    if (S != S) {
        return o->nan_pos;
    }
    if (ev - ev != 0.0) {
        return o->inf_mag | (neg ? o->sign : 0);
    }
    return sw_deq_exact(c, ev, S);
}

/* Values of n element codes, each with its own scale S[t] (per_lane) or
 * one S[0], into dst at element `at`. */
static void
sw_deq_values(const sw_deq_call *c, const unsigned char *codes, size_t n,
              const double *S, const float *Sf, int per_lane, size_t at)
{
    const sw_codec_fmt *e = &c->b->elem;
    uint8_t mask = (uint8_t)e->mask;
    size_t t;

    if (c->product == SW_PRODUCT_FLOAT) {
        float *out = (float *)c->dst + at;
        if (c->b->whole) {
            float gf = c->gf;
            for (t = 0; t < n; t++) {
                out[t] = (c->ef[codes[t] & mask] * Sf[per_lane ? t : 0]) * gf;
            }
        }
        else if (per_lane) {
            for (t = 0; t < n; t++) {
                out[t] = c->ef[codes[t] & mask] * Sf[t];
            }
        }
        else {
            float s = Sf[0];
            for (t = 0; t < n; t++) {
                out[t] = c->ef[codes[t] & mask] * s;
            }
        }
        return;
    }
    if (c->product == SW_PRODUCT_DOUBLE) {
        double v[SW_BLOCK_CHUNK];
        size_t i, m;
        for (i = 0; i < n; i += m) {
            m = n - i < SW_BLOCK_CHUNK ? n - i : SW_BLOCK_CHUNK;
            for (t = 0; t < m; t++) {
                uint64_t code = sw_codec_load(codes, c->esize, i + t) & e->mask;
                double ev = e->bits <= 8 ? c->ed[code] : sw_block_elem_value(e, code);
                double T = S[per_lane ? i + t : 0];
                v[t] = ev * (c->b->whole ? T * c->gd : T);
            }
            switch (c->b->out) {
            case SW_FLOAT32:
                for (t = 0; t < m; t++) {
                    ((float *)c->dst)[at + i + t] = (float)v[t];
                }
                break;
            case SW_FLOAT64:
                memcpy((double *)c->dst + at + i, v, m * sizeof(double));
                break;
            default:
                sw_codec_k64_run(&c->out_plan, v, (char *)c->dst + (at + i) * 2, 2, m, 0, 0);
                break;
            }
        }
        return;
    }
    for (t = 0; t < n; t++) {
        uint64_t code = sw_codec_load(codes, c->esize, t) & e->mask;
        sw_codec_store(c->dst, c->out_size, at + t,
                       sw_deq_exact_one(c, code, S[per_lane ? t : 0]));
    }
}

/* ---- the float product, fused ------------------------------------------------ */

/* n codes (one byte each) in blocks along the row, `first` of a block
 * already begun (0: none), then blocks of blk: each code's value from the
 * table times its block's scale Sf[b] (then times gf under a whole-tensor
 * scale), rounded as sw_deq_values rounds it, in one pass.  `size` is blk
 * as a constant for the common sizes, so their loops have a fixed count. */
static inline __attribute__((always_inline)) void
sw_deq_bytes_body(const uint8_t *restrict codes, uint8_t mask, size_t n, size_t blk,
                  size_t first, const float *restrict Sf, const float *restrict ef,
                  float gf, float *restrict out, const int whole, const size_t size)
{
    size_t b, start, m, t;

    for (b = 0, start = 0; start < n; b++, start += m) {
        const float s = Sf[b];
        m = b == 0 && first != 0 ? first : blk;
        m = n - start < m ? n - start : m;
        if (size != 0 && m == size) {
            for (t = 0; t < size; t++) {
                float v = ef[codes[start + t] & mask] * s;
                out[start + t] = whole ? v * gf : v;
            }
        }
        else {
            for (t = 0; t < m; t++) {
                float v = ef[codes[start + t] & mask] * s;
                out[start + t] = whole ? v * gf : v;
            }
        }
    }
}

/* The same for 4-bit codes packed two to a byte (the first in the low
 * nibble), from an even element, blk and first even: a byte's two values
 * from one entry of the pair table. */
static inline __attribute__((always_inline)) void
sw_deq_nibbles_body(const uint8_t *restrict bytes, size_t n, size_t blk, size_t first,
                    const float *restrict Sf, const float (*restrict ef2)[2],
                    float gf, float *restrict out, const int whole, const size_t size)
{
    size_t b, start, m, t;

    for (b = 0, start = 0; start < n; b++, start += m) {
        const float s = Sf[b];
        const uint8_t *p = bytes + start / 2;
        float *o = out + start;
        m = b == 0 && first != 0 ? first : blk;
        m = n - start < m ? n - start : m;
        if (size != 0 && m == size) {
            for (t = 0; t < size / 2; t++) {
                float lo = ef2[p[t]][0] * s, hi = ef2[p[t]][1] * s;
                o[2 * t] = whole ? lo * gf : lo;
                o[2 * t + 1] = whole ? hi * gf : hi;
            }
        }
        else {
            for (t = 0; t < m / 2; t++) {
                float lo = ef2[p[t]][0] * s, hi = ef2[p[t]][1] * s;
                o[2 * t] = whole ? lo * gf : lo;
                o[2 * t + 1] = whole ? hi * gf : hi;
            }
            if (m % 2) {
                /* the row's last element, alone in its byte */
                float lo = ef2[p[m / 2]][0] * s;
                o[m - 1] = whole ? lo * gf : lo;
            }
        }
    }
}

/* The same for 6-bit codes packed four to three bytes (the first in the
 * low bits), from a multiple of 4 elements, blk and first multiples of 4. */
static inline __attribute__((always_inline)) void
sw_deq_sextets_body(const uint8_t *restrict bytes, size_t n, size_t blk, size_t first,
                    const float *restrict Sf, const float *restrict ef,
                    float gf, float *restrict out, const int whole, const size_t size)
{
    size_t b, start, m, t, k;

    for (b = 0, start = 0; start < n; b++, start += m) {
        const float s = Sf[b];
        const uint8_t *p = bytes + start / 4 * 3;
        float *o = out + start;
        size_t quads;
        m = b == 0 && first != 0 ? first : blk;
        m = n - start < m ? n - start : m;
        quads = size != 0 && m == size ? size / 4 : m / 4;
        for (t = 0; t < quads; t++) {
            unsigned x = p[3 * t], y = p[3 * t + 1], z = p[3 * t + 2];
            float v0 = ef[x & 0x3Fu] * s, v1 = ef[((x >> 6) | (y << 2)) & 0x3Fu] * s;
            float v2 = ef[((y >> 4) | (z << 4)) & 0x3Fu] * s, v3 = ef[z >> 2] * s;
            o[4 * t] = whole ? v0 * gf : v0;
            o[4 * t + 1] = whole ? v1 * gf : v1;
            o[4 * t + 2] = whole ? v2 * gf : v2;
            o[4 * t + 3] = whole ? v3 * gf : v3;
        }
        for (k = 4 * quads; k < m; k++) {
            /* the row's last codes, in a partial group */
            size_t bit = k * 6;
            unsigned v = p[bit / 8] >> (bit % 8);
            float e;
            if (bit % 8 > 2) {
                v |= (unsigned)p[bit / 8 + 1] << (8 - bit % 8);
            }
            e = ef[v & 0x3Fu] * s;
            o[k] = whole ? e * gf : e;
        }
    }
}

#define SW_DEQ_SIZES(body, whole, ...)                                              \
    switch (blk) {                                                                  \
    case 16:                                                                        \
        body(__VA_ARGS__, whole, 16);                                               \
        break;                                                                      \
    case 32:                                                                        \
        body(__VA_ARGS__, whole, 32);                                               \
        break;                                                                      \
    case 128:                                                                       \
        body(__VA_ARGS__, whole, 128);                                              \
        break;                                                                      \
    default:                                                                        \
        body(__VA_ARGS__, whole, 0);                                                \
        break;                                                                      \
    }

SW_CODEC_HOT static void
sw_deq_bytes(const uint8_t *codes, uint8_t mask, size_t n, size_t blk, size_t first,
             const float *Sf, const float *ef, float gf, int whole, float *out)
{
    if (whole) {
        SW_DEQ_SIZES(sw_deq_bytes_body, 1, codes, mask, n, blk, first, Sf, ef, gf, out)
    }
    else {
        SW_DEQ_SIZES(sw_deq_bytes_body, 0, codes, mask, n, blk, first, Sf, ef, gf, out)
    }
}

SW_CODEC_HOT static void
sw_deq_nibbles(const uint8_t *bytes, size_t n, size_t blk, size_t first,
               const float *Sf, const float (*ef2)[2], float gf, int whole, float *out)
{
    if (whole) {
        SW_DEQ_SIZES(sw_deq_nibbles_body, 1, bytes, n, blk, first, Sf, ef2, gf, out)
    }
    else {
        SW_DEQ_SIZES(sw_deq_nibbles_body, 0, bytes, n, blk, first, Sf, ef2, gf, out)
    }
}

SW_CODEC_HOT static void
sw_deq_sextets(const uint8_t *bytes, size_t n, size_t blk, size_t first,
               const float *Sf, const float *ef, float gf, int whole, float *out)
{
    if (whole) {
        SW_DEQ_SIZES(sw_deq_sextets_body, 1, bytes, n, blk, first, Sf, ef, gf, out)
    }
    else {
        SW_DEQ_SIZES(sw_deq_sextets_body, 0, bytes, n, blk, first, Sf, ef, gf, out)
    }
}

#undef SW_DEQ_SIZES

/* n codes (one byte each), code t with its own scale Sf[t]. */
static inline __attribute__((always_inline)) void
sw_deq_lanes_body(const uint8_t *restrict codes, uint8_t mask, size_t n,
                  const float *restrict Sf, const float *restrict ef, float gf,
                  float *restrict out, const int whole)
{
    size_t t;

    for (t = 0; t < n; t++) {
        float v = ef[codes[t] & mask] * Sf[t];
        out[t] = whole ? v * gf : v;
    }
}

SW_CODEC_HOT static void
sw_deq_lanes(const uint8_t *codes, uint8_t mask, size_t n, const float *Sf,
             const float *ef, float gf, int whole, float *out)
{
    if (whole) {
        sw_deq_lanes_body(codes, mask, n, Sf, ef, gf, out, 1);
    }
    else {
        sw_deq_lanes_body(codes, mask, n, Sf, ef, gf, out, 0);
    }
}

/* A unit's columns of one row by the fused float product: Sf holds the
 * scales of blocks u->j0 on (of columns u->c0 on, when each column has
 * its own: blocks of one column, or an expanded row), out the row's first
 * value. */
static void
sw_deq_fused_row(const sw_deq_call *c, const unsigned char *erow, const sw_block_unit *u,
                 const float *Sf, float *out)
{
    const sw_codec_block *b = c->b;
    const sw_block_geom *g = &c->geom;
    size_t blk = g->blk, n = u->c1 - u->c0, i, m;
    size_t first = u->c0 % blk != 0 ? blk - u->c0 % blk : 0;
    uint8_t mask = (uint8_t)b->elem.mask, codes[SW_BLOCK_CHUNK];

    if (blk == 1 || g->row_expanded) {
        /* a scale per column (Sf from column u->c0 on) */
        for (i = u->c0; i < u->c1; i += m) {
            const uint8_t *src = erow + i;
            m = u->c1 - i < SW_BLOCK_CHUNK ? u->c1 - i : SW_BLOCK_CHUNK;
            if (b->packed && b->elem.bits != 8) {
                sw_codec_unpack_at(erow, b->elem.bits, i, m, codes, 1);
                src = codes;
            }
            sw_deq_lanes(src, mask, m, Sf + (i - u->c0), c->ef, c->gf, b->whole, out + i);
        }
        return;
    }
    if (!b->packed || b->elem.bits == 8) {
        sw_deq_bytes(erow + u->c0, mask, n, blk, first, Sf, c->ef, c->gf, b->whole,
                     out + u->c0);
        return;
    }
    if (b->elem.bits == 4 && blk % 2 == 0 && u->c0 % 2 == 0) {
        sw_deq_nibbles(erow + u->c0 / 2, n, blk, first, Sf, (const float (*)[2])c->ef2,
                       c->gf, b->whole, out + u->c0);
        return;
    }
    if (b->elem.bits == 6 && blk % 4 == 0 && u->c0 % 4 == 0) {
        sw_deq_sextets(erow + u->c0 / 4 * 3, n, blk, first, Sf, c->ef, c->gf, b->whole,
                       out + u->c0);
        return;
    }
    /* other widths: unpacked a chunk at a time */
    for (i = u->c0; i < u->c1; i += m) {
        m = u->c1 - i < SW_BLOCK_CHUNK ? u->c1 - i : SW_BLOCK_CHUNK;
        sw_codec_unpack_at(erow, b->elem.bits, i, m, codes, 1);
        sw_deq_bytes(codes, mask, m, blk, i % blk != 0 ? blk - i % blk : 0,
                     Sf + (i / blk - u->j0), c->ef, c->gf, b->whole, out + i);
    }
}

/* The scales of units [v0, v1) of the cursor's row into S and Sf; 1 with
 * *bad the first non-finite one under nonfinite_scales='error'. */
static int
sw_deq_row_scales(const sw_deq_call *c, const sw_block_cursor *cur, size_t v0,
                  size_t v1, double *S, float *Sf, size_t *bad)
{
    const sw_codec_grid *grid = c->grid;
    const sw_codec_axis *x = &grid->axis[grid->ndim - 1];
    size_t off[SW_BLOCK_OFFSETS], v, i, m;
    int direct = grid->scales == SW_SCALES_COMPACT && c->ssize == 1 && x->compact == 1
                 && c->stab_ok;

    for (v = v0; v < v1; v += m) {
        double *Sv = S + (v - v0);
        float *Sfv = Sf + (v - v0);
        m = v1 - v < SW_BLOCK_OFFSETS ? v1 - v : SW_BLOCK_OFFSETS;
        if (direct) {
            /* one-byte compact scales along the row: consecutive */
            const unsigned char *p = c->scale0 + cur->comp + v;
            for (i = 0; i < m; i++) {
                Sv[i] = c->stab[p[i]];
            }
        }
        else {
            sw_block_offsets(grid, cur, v, m, off);
            for (i = 0; i < m; i++) {
                uint64_t code = sw_codec_load(c->scale0, c->ssize, off[i]);
                Sv[i] = c->stab_ok && code < 256 ? c->stab[code]
                                                 : sw_deq_scale_value(&c->b->scale[0], code);
            }
        }
        for (i = 0; i < m; i++) {
            Sfv[i] = (float)Sv[i];
            if (Sv[i] != Sv[i] && c->b->nonfinite_error) {
                *bad = v + i;
                return 1;
            }
        }
    }
    return 0;
}

/* Per piece: a strip's scale values, as doubles and as floats. */
static void
sw_deq_work(const sw_deq_call *c, int piece, double **S, float **Sf)
{
    unsigned char *p = c->scratch + (size_t)piece * c->per_piece;

    *S = (double *)(void *)p;
    *Sf = (float *)(void *)(*S + c->geom.strip + 1);
}

/* The rows of a unit; the walk position (row * length + column of the
 * unit's first element with that scale) of the first invalid scale under
 * nonfinite_scales='error', else SIZE_MAX. */
static size_t
sw_deq_unit(const sw_deq_call *c, double *S, float *Sf, const sw_block_unit *u)
{
    const sw_codec_block *b = c->b;
    const sw_block_geom *g = &c->geom;
    sw_block_cursor cur;
    size_t r, v, i, last_key = SIZE_MAX;
    size_t v0 = g->row_expanded ? u->c0 : u->j0, v1 = g->row_expanded ? u->c1 : u->j1;
    unsigned char codes[SW_BLOCK_CHUNK * 2];
    int lanes = g->blk == 1 || g->row_expanded;

    sw_block_cursor_start(&cur, g, c->grid, u->first);
    for (r = 0; r < u->count; r++) {
        size_t row_index = u->first + r;
        const unsigned char *erow = c->elem + row_index * c->row_bytes;

        if (cur.key != last_key || g->row_expanded || g->exp_axis >= 0) {
            if (sw_deq_row_scales(c, &cur, v0, v1, S, Sf, &v)) {
                return row_index * g->length + (g->row_expanded ? v : v * g->blk);
            }
            last_key = cur.key;
        }
        if (c->fused) {
            sw_deq_fused_row(c, erow, u, Sf, (float *)c->dst + row_index * g->length);
            if (r + 1 < u->count) {
                sw_block_cursor_next(&cur, g, c->grid);
            }
            continue;
        }
        for (i = u->c0; i < u->c1; i += SW_BLOCK_CHUNK) {
            size_t m = u->c1 - i < SW_BLOCK_CHUNK ? u->c1 - i : SW_BLOCK_CHUNK;
            size_t at = row_index * g->length + i, t, n;
            const unsigned char *src = erow + i * (size_t)c->esize;

            if (b->packed) {
                sw_codec_unpack_at(erow, b->elem.bits, i, m, codes, c->esize);
                src = codes;
            }
            if (lanes) {
                /* a scale per element: an expanded row, or blocks of one */
                sw_deq_values(c, src, m, S + (i - u->c0), Sf + (i - u->c0), 1, at);
                continue;
            }
            for (t = 0; t < m; t += n) {
                size_t col = i + t, j = col / g->blk, end = (j + 1) * g->blk;
                n = (end < i + m ? end : i + m) - col;
                sw_deq_values(c, src + t * (size_t)c->esize, n, S + (j - u->j0),
                              Sf + (j - u->j0), 0, at + t);
            }
        }
        if (r + 1 < u->count) {
            sw_block_cursor_next(&cur, g, c->grid);
        }
    }
    return SIZE_MAX;
}

static size_t
sw_deq_task(void *arg, size_t lo, size_t hi, int piece)
{
    sw_deq_call *c = (sw_deq_call *)arg;
    double *S;
    float *Sf;
    sw_block_unit u;
    size_t k, bad, first = SIZE_MAX;

    sw_deq_work(c, piece, &S, &Sf);
    for (k = lo; k < hi; k++) {
        sw_block_unit_of(&c->geom, c->grid, k, &u);
        if (u.count == 0) {
            continue;
        }
        bad = sw_deq_unit(c, S, Sf, &u);
        /* units are not in the walk's order (strips of a slab come before
         * the next slab's rows): keep the smallest position */
        first = bad < first ? bad : first;
    }
    return first;
}

int
sw_codec_dequantize(const sw_codec_block *b, const unsigned char *elem,
                    const unsigned char *scale0, const unsigned char *scale1,
                    void *dst, void *scratch, int threads, size_t *bad_index)
{
    sw_deq_call c;
    size_t n, bad, slab_elems, c0;
    int ssize = sw_codec_code_size(b->scale[0].bits);

    memset(&c, 0, sizeof(c));
    c.b = b;
    c.grid = &b->grid;
    sw_block_geom_init(&c.geom, c.grid);
    c.elem = elem;
    c.scale0 = scale0;
    c.dst = dst;
    c.out_size = sw_codec_float_size(b->out);
    c.esize = sw_codec_code_size(b->elem.bits);
    c.ssize = ssize;
    c.row_bytes = b->packed ? sw_codec_row_bytes(b->elem.bits, c.geom.length)
                            : c.geom.length * (size_t)c.esize;
    c.scratch = (unsigned char *)scratch;
    c.per_piece = sw_block_per_piece(&c.geom);
    sw_codec_fmt_float(&c.out_fmt, b->out);
    if (b->out == SW_FLOAT16 || b->out == SW_BFLOAT16) {
        sw_codec_opts o;
        memset(&o, 0, sizeof(o));
        sw_codec_resolve(&c.out_fmt, &o);
        sw_codec_plan_make(&c.out_plan, &c.out_fmt, &o, SW_FLOAT64, 1);
    }
    if (b->elem.bits <= 8) {
        for (c0 = 0; c0 < ((size_t)1 << b->elem.bits); c0++) {
            c.ed[c0] = sw_block_elem_value(&b->elem, c0);
            c.ef[c0] = (float)c.ed[c0];
        }
    }
    c.gd = 1.0;
    if (b->whole) {
        c.gd = sw_deq_scale_value(&b->scale[1],
                                  sw_codec_load(scale1, sw_codec_code_size(b->scale[1].bits), 0));
        if (c.gd != c.gd && b->nonfinite_error) {
            *bad_index = SIZE_MAX;
            return SW_CODEC_NONFINITE_SCALE;
        }
    }
    c.gf = (float)c.gd;
    sw_deq_choose(&c);
    if (b->scale[0].bits <= 8) {
        for (c0 = 0; c0 < 256; c0++) {
            c.stab[c0] = sw_deq_scale_value(&b->scale[0], c0);
        }
        c.stab_ok = 1;
    }
    for (c0 = 0; b->elem.bits == 4 && c0 < 256; c0++) {
        c.ef2[c0][0] = c.ef[c0 & 0x0F];
        c.ef2[c0][1] = c.ef[c0 >> 4];
    }
    c.fused = c.product == SW_PRODUCT_FLOAT && b->out == SW_FLOAT32 && c.esize == 1;
    n = sw_codec_grid_elements(c.grid);
    if (n == 0) {
        /* no elements: only a Whole level's one scale to check */
        if (b->whole_only && b->nonfinite_error) {
            double s = sw_deq_scale_value(&b->scale[0], sw_codec_load(scale0, ssize, 0));
            if (s != s) {
                *bad_index = 0;
                return SW_CODEC_NONFINITE_SCALE;
            }
        }
        return SW_CODEC_OK;
    }
    slab_elems = n / (c.geom.units ? c.geom.units : 1);
    bad = sw_codec_parallel(threads, c.geom.units, 1,
                            SW_BLOCK_UNIT / (slab_elems ? slab_elems : 1) + 1,
                            sw_deq_task, &c);
    if (bad != SIZE_MAX) {
        /* the scale of the element at walk position `bad` */
        sw_block_cursor cur;
        size_t col = bad % c.geom.length;
        sw_block_cursor_start(&cur, &c.geom, c.grid, bad / c.geom.length);
        *bad_index = sw_block_offset(c.grid, &cur, c.geom.row_expanded ? col
                                                                       : col / c.geom.blk);
        return SW_CODEC_NONFINITE_SCALE;
    }
    return SW_CODEC_OK;
}
