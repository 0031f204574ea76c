/* codec/layout.c: where a block's scale lies in the level-0 scale plane.
 *
 * Owns the index formulas of the scale layouts and the walk that moves
 * scales from one layout to another (relayout).  A block's place is given
 * by its compact offset (the block grid in the planes' order) and its
 * matrix coordinates (b, r, c): the batch, the row (the non-blocked axes
 * after the batch ones and, for a 2-D block, its first axis, flattened in
 * C order; for expanded scales that axis counts elements) and the block
 * along the GEMM's K.  The binding (codecs.c) derives each axis's share
 * of those from the layout (sw_codec_axis); this file only applies:
 *
 *   compact          the compact offset
 *   padded_k_major   per batch (R, ru(C, align)), row-major
 *   padded_mn_major  per batch (ceil(C/group), ru(R, align) * group):
 *                    ((c / group) * ru(R, align) + r) * group + c % group
 *   swizzled_128x4   per batch 32*ceil(R/128) x 16*ceil(C/4) bytes:
 *                    ((r / 128) * ceil(C/4) + c / 4) * 512 + (r % 32) * 16
 *                    + ((r % 128) / 32) * 4 + c % 4
 *
 * with ru(x, a) = ceil(x / a) * a.  Padding is never read.
 *
 * Pure C: no PyObject, no PyErr.
 */
#include "internal.h"

static inline size_t
sw_layout_ru(size_t x, size_t a)
{
    return (x + a - 1) / a * a;
}

/* The codes of one batch of a matrix layout. */
static size_t
sw_layout_batch(const sw_codec_grid *g)
{
    switch (g->scales) {
    case SW_SCALES_PADDED_K_MAJOR:
        return g->R * sw_layout_ru(g->C, g->align);
    case SW_SCALES_PADDED_MN_MAJOR:
        return (g->C + g->group - 1) / g->group * sw_layout_ru(g->R, g->align) * g->group;
    case SW_SCALES_SWIZZLED_128X4:
        return 32 * ((g->R + 127) / 128) * 16 * ((g->C + 3) / 4);
    default:
        return 0;
    }
}

size_t
sw_codec_scale_offset(const sw_codec_grid *g, size_t compact, size_t b, size_t r,
                      size_t c)
{
    size_t base;

    switch (g->scales) {
    case SW_SCALES_PADDED_K_MAJOR:
        return b * sw_layout_batch(g) + r * sw_layout_ru(g->C, g->align) + c;
    case SW_SCALES_PADDED_MN_MAJOR:
        return b * sw_layout_batch(g)
               + ((c / g->group) * sw_layout_ru(g->R, g->align) + r) * g->group
               + c % g->group;
    case SW_SCALES_SWIZZLED_128X4:
        base = b * sw_layout_batch(g);
        return base + ((r / 128) * ((g->C + 3) / 4) + c / 4) * 512 + (r % 32) * 16
               + ((r % 128) / 32) * 4 + c % 4;
    default:
        return compact;
    }
}

/* The offsets of n scale positions along the last axis: position u at
 * compact offset compact + u * (the last axis's compact stride), and
 * likewise for b, r and c; the formulas above with their per-layout
 * constants worked out once, so a row's scales cost a few operations
 * each (quantize and dequantize read them a row at a time). */
void
sw_codec_scale_offsets(const sw_codec_grid *g, size_t compact, size_t b, size_t r,
                       size_t c, size_t n, size_t *out)
{
    const sw_codec_axis *x = &g->axis[g->ndim - 1];
    size_t u, batch = sw_layout_batch(g);

    switch (g->scales) {
    case SW_SCALES_PADDED_K_MAJOR: {
        size_t ruC = sw_layout_ru(g->C, g->align);
        if (x->row == 0 && x->batch == 0) {
            size_t base = b * batch + r * ruC + c;
            for (u = 0; u < n; u++) {
                out[u] = base + u * x->col;
            }
            break;
        }
        for (u = 0; u < n; u++) {
            out[u] = (b + u * x->batch) * batch + (r + u * x->row) * ruC + c + u * x->col;
        }
        break;
    }
    case SW_SCALES_PADDED_MN_MAJOR: {
        size_t ruR = sw_layout_ru(g->R, g->align), grp = g->group;
        for (u = 0; u < n; u++) {
            size_t cc = c + u * x->col;
            out[u] = (b + u * x->batch) * batch
                     + ((cc / grp) * ruR + r + u * x->row) * grp + cc % grp;
        }
        break;
    }
    case SW_SCALES_SWIZZLED_128X4: {
        size_t c4 = (g->C + 3) / 4;
        if (x->row == 0 && x->batch == 0) {
            /* along K (the usual case): the row's part once */
            size_t base = b * batch + (r / 128) * c4 * 512 + (r % 32) * 16
                          + ((r % 128) / 32) * 4;
            for (u = 0; u < n; u++) {
                size_t cc = c + u * x->col;
                out[u] = base + (cc / 4) * 512 + cc % 4;
            }
            break;
        }
        for (u = 0; u < n; u++) {
            size_t rr = r + u * x->row, cc = c + u * x->col;
            out[u] = (b + u * x->batch) * batch + ((rr / 128) * c4 + cc / 4) * 512
                     + (rr % 32) * 16 + ((rr % 128) / 32) * 4 + cc % 4;
        }
        break;
    }
    default:
        for (u = 0; u < n; u++) {
            out[u] = compact + u * x->compact;
        }
        break;
    }
}

size_t
sw_codec_grid_elements(const sw_codec_grid *g)
{
    size_t n = 1;
    int a;

    for (a = 0; a < g->ndim; a++) {
        n *= g->axis[a].extent;
    }
    return n;
}

/* ---- the walk over every scale position ------------------------------------------ */

/* Every scale position of a grid, in C order over the axes' coordinates
 * (block indices, or element indices on expanded axes), with the index of
 * the block it belongs to (C order over the block grid, in the grid's
 * axis order), a run along the last axis at a time: fn(ctx, offsets,
 * block, k, n, per) for the n positions of a run from coordinate k of
 * the last axis, position u at offsets[u] in block block + (k + u) / per,
 * stopping at a non-zero return.  Two grids of
 * one tensor listing its axes in the same order give every block the
 * same index. */
#define SW_LAYOUT_RUN 512

typedef int (*sw_layout_visit)(void *ctx, const size_t *offsets, size_t block, size_t k,
                               size_t n, size_t per);

static int
sw_layout_walk(const sw_codec_grid *g, sw_layout_visit fn, void *ctx)
{
    size_t coord[SW_CODEC_MAX_DIMS], count[SW_CODEC_MAX_DIMS];
    size_t gstride[SW_CODEC_MAX_DIMS], blocks = 1, off[SW_LAYOUT_RUN];
    int a, nd = g->ndim;
    const sw_codec_axis *last = &g->axis[nd - 1];
    size_t per = last->expanded ? last->block : 1;

    for (a = nd - 1; a >= 0; a--) {
        const sw_codec_axis *x = &g->axis[a];
        size_t nb = x->extent == 0 ? 0 : (x->extent - 1) / x->block + 1;
        count[a] = x->expanded ? x->extent : nb;
        if (count[a] == 0) {
            return 0;
        }
        coord[a] = 0;
        gstride[a] = blocks;
        blocks *= nb;
    }
    for (;;) {
        size_t compact = 0, b = 0, r = 0, c = 0, block = 0, k, n;
        int rc;
        /* the run's start: every axis but the last at its coordinate */
        for (a = 0; a < nd - 1; a++) {
            const sw_codec_axis *x = &g->axis[a];
            size_t i = coord[a], blk = x->expanded ? i / x->block : i;
            compact += i * x->compact;
            b += i * x->batch;
            r += i * x->row;
            c += i * x->col;
            block += blk * gstride[a];
        }
        for (k = 0; k < count[nd - 1]; k += n) {
            n = count[nd - 1] - k < SW_LAYOUT_RUN ? count[nd - 1] - k : SW_LAYOUT_RUN;
            sw_codec_scale_offsets(g, compact + k * last->compact, b + k * last->batch,
                                   r + k * last->row, c + k * last->col, n, off);
            rc = fn(ctx, off, block, k, n, per);
            if (rc != 0) {
                return rc;
            }
        }
        for (a = nd - 2; a >= 0; a--) {
            if (++coord[a] < count[a]) {
                break;
            }
            coord[a] = 0;
        }
        if (a < 0) {
            return 0;
        }
    }
}

/* ---- relayout ------------------------------------------------------------------------ */

/* Scales of one grid read into a block-indexed table, then written into
 * the other; the table is the compact plane of the source when it is not
 * expanded (every block once), so a grid's compact offsets index it. */
typedef struct {
    const void *src;
    void *dst;
    int size;
    unsigned char *seen;        /* per block: 1 once read (expanded) */
    void *table;                /* per block: its code */
    size_t bad;
} sw_layout_copy;

static int
sw_layout_read(void *arg, const size_t *offsets, size_t block, size_t k, size_t n,
               size_t per)
{
    sw_layout_copy *c = (sw_layout_copy *)arg;
    size_t u;

    for (u = 0; u < n; u++) {
        size_t q = block + (k + u) / per;
        uint64_t v = sw_codec_load(c->src, c->size, offsets[u]);
        if (c->seen[q]) {
            if (sw_codec_load(c->table, c->size, q) != v) {
                c->bad = q;
                return 1;
            }
            continue;
        }
        c->seen[q] = 1;
        sw_codec_store(c->table, c->size, q, v);
    }
    return 0;
}

static int
sw_layout_write(void *arg, const size_t *offsets, size_t block, size_t k, size_t n,
                size_t per)
{
    sw_layout_copy *c = (sw_layout_copy *)arg;
    size_t u;

    if (c->size == 1 && per == 1) {
        const unsigned char *t = (const unsigned char *)c->table + block + k;
        unsigned char *d = (unsigned char *)c->dst;
        for (u = 0; u < n; u++) {
            d[offsets[u]] = t[u];
        }
        return 0;
    }
    for (u = 0; u < n; u++) {
        size_t q = block + (k + u) / per;
        sw_codec_store(c->dst, c->size, offsets[u], sw_codec_load(c->table, c->size, q));
    }
    return 0;
}

/* 1 when a grid's scale plane is its blocks' table: compact, nothing
 * expanded, its strides those of C order over the block grid. */
static int
sw_layout_is_table(const sw_codec_grid *g)
{
    size_t stride = 1;
    int a;

    if (g->scales != SW_SCALES_COMPACT) {
        return 0;
    }
    for (a = g->ndim - 1; a >= 0; a--) {
        const sw_codec_axis *x = &g->axis[a];
        size_t nb = x->extent == 0 ? 0 : (x->extent - 1) / x->block + 1;
        if (x->expanded || (nb > 1 && x->compact != stride)) {
            return 0;
        }
        stride *= nb;
    }
    return 1;
}

size_t
sw_codec_relayout_scratch(const sw_codec_grid *from)
{
    size_t blocks = 1;
    int a;

    for (a = 0; a < from->ndim; a++) {
        const sw_codec_axis *x = &from->axis[a];
        blocks *= x->extent == 0 ? 0 : (x->extent - 1) / x->block + 1;
    }
    return blocks * 9;      /* a code of up to 8 bytes and a flag */
}

int
sw_codec_relayout_scales(const sw_codec_grid *from, const void *src,
                         const sw_codec_grid *to, void *dst, int size,
                         void *scratch, size_t *bad_index)
{
    sw_layout_copy c;
    size_t blocks = sw_codec_relayout_scratch(from) / 9;

    c.src = src;
    c.dst = dst;
    c.size = size;
    if (sw_layout_is_table(from)) {
        /* the source plane is the table itself */
        c.table = (void *)(uintptr_t)src;
        sw_layout_walk(to, sw_layout_write, &c);
        return SW_CODEC_OK;
    }
    c.table = scratch;
    c.seen = (unsigned char *)scratch + blocks * 8;
    c.bad = 0;
    memset(c.seen, 0, blocks);
    if (sw_layout_walk(from, sw_layout_read, &c) != 0) {
        *bad_index = c.bad;
        return SW_CODEC_BAD_SCALE_COPY;
    }
    sw_layout_walk(to, sw_layout_write, &c);
    return SW_CODEC_OK;
}
