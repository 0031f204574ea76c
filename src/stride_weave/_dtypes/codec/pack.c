/* codec/pack.c: sub-byte packing, codes into a bit stream and back.
 *
 * Owns the one bit order every packed plane uses, DLPack's: element i
 * occupies bits [i*b, (i+1)*b) of the little-endian bit stream.  For 4-bit
 * formats the first element is the low nibble (as torch's
 * float4_e2m1fn_x2, ONNX and OCP); 6-bit formats put 4 elements in 3
 * bytes.  A count that does not fill the last byte pads it with zero bits.
 * sw_codec_pack refuses a code with bits above b (nothing is masked
 * away); the row packers quantize uses take codes the engine made, which
 * fit.  Unpacked codes come out masked.  Large arrays are split over
 * threads at multiples of 8 codes, whole bytes of the stream.
 *
 * Pure C: no PyObject, no PyErr.
 */
#include "internal.h"

#include <string.h>

/* The number of bytes `length` codes of `bits` bits take (the caller has
 * checked that length * bits does not overflow). */
size_t
sw_codec_row_bytes(int bits, size_t length)
{
    return (length / 8) * (size_t)bits + ((length % 8) * (size_t)bits + 7) / 8;
}



/* OR n codes, masked to `bits`, into the bit stream `out` as elements
 * at, at+1, ... (the bits they go to are zero). */
static void
sw_codecpack_or_bits(const void *codes, int code_size, int bits, size_t n,
                     unsigned char *out, size_t at)
{
    uint64_t mask = bits >= 64 ? ~0ULL : (1ULL << bits) - 1;
    size_t i;

    for (i = 0; i < n; i++) {
        uint64_t v = sw_codec_load(codes, code_size, i) & mask;
        uint64_t pos = (uint64_t)(at + i) * (uint64_t)bits;
        int k = 0;

        while (k < bits) {
            int off = (int)(pos % 8), take = 8 - off;
            if (take > bits - k) {
                take = bits - k;
            }
            out[pos / 8] |= (unsigned char)(((v >> k) & ((1u << take) - 1)) << off);
            pos += (uint64_t)take;
            k += take;
        }
    }
}

/* Read the n codes at elements at, at+1, ... of a bit stream. */
static void
sw_codecpack_read_bits(const unsigned char *data, int bits, size_t at, size_t n,
                       void *codes, int code_size)
{
    size_t i;

    for (i = 0; i < n; i++) {
        uint64_t v = 0, pos = (uint64_t)(at + i) * (uint64_t)bits;
        int k = 0;

        while (k < bits) {
            int off = (int)(pos % 8), take = 8 - off;
            if (take > bits - k) {
                take = bits - k;
            }
            v |= (uint64_t)((data[pos / 8] >> off) & ((1u << take) - 1)) << k;
            pos += (uint64_t)take;
            k += take;
        }
        sw_codec_store(codes, code_size, i, v);
    }
}

/* Pairs of 4-bit codes into bytes, the first in the low nibble. */
SW_CODEC_HOT static void
sw_codecpack_nibbles(const unsigned char *restrict c, unsigned char *restrict out,
                     size_t pairs)
{
    size_t j;

    for (j = 0; j < pairs; j++) {
        out[j] = (unsigned char)((c[2 * j] & 0x0F) | (c[2 * j + 1] << 4));
    }
}

/* Groups of 4 six-bit codes into 3 bytes each, and back, the first code
 * in the low bits: byte by byte, as the compiler vectorizes it (loads of
 * 4 and stores of 3 interleaved). */
SW_CODEC_HOT static void
sw_codecpack_sextets(const unsigned char *restrict c, unsigned char *restrict out,
                     size_t groups)
{
    size_t g;

    for (g = 0; g < groups; g++) {
        unsigned a = c[4 * g] & 0x3Fu, b = c[4 * g + 1] & 0x3Fu;
        unsigned d = c[4 * g + 2] & 0x3Fu, e = c[4 * g + 3] & 0x3Fu;
        out[3 * g] = (unsigned char)(a | (b << 6));
        out[3 * g + 1] = (unsigned char)((b >> 2) | (d << 4));
        out[3 * g + 2] = (unsigned char)((d >> 4) | (e << 2));
    }
}

SW_CODEC_HOT static void
sw_codecpack_unsextets(const unsigned char *restrict data, unsigned char *restrict c,
                       size_t groups)
{
    size_t g;

    for (g = 0; g < groups; g++) {
        unsigned x = data[3 * g], y = data[3 * g + 1], z = data[3 * g + 2];
        c[4 * g] = (unsigned char)(x & 0x3Fu);
        c[4 * g + 1] = (unsigned char)(((x >> 6) | (y << 2)) & 0x3Fu);
        c[4 * g + 2] = (unsigned char)(((y >> 4) | (z << 4)) & 0x3Fu);
        c[4 * g + 3] = (unsigned char)(z >> 2);
    }
}

static void
sw_codecpack_pack(const void *codes, int code_size, int bits, size_t n,
                  unsigned char *out)
{
    const unsigned char *c = (const unsigned char *)codes;
    size_t i, nbytes = sw_codec_row_bytes(bits, n);

    if (bits == 4 && code_size == 1) {
        sw_codecpack_nibbles(c, out, n / 2);
        if (n % 2) {
            out[n / 2] = (unsigned char)(c[n - 1] & 0x0F);
        }
        return;
    }
    if (bits == 6 && code_size == 1) {
        sw_codecpack_sextets(c, out, n / 4);
        for (i = n / 4 * 4; i + 3 < n; i += 4) {
            uint32_t v = (uint32_t)(c[i] & 0x3F) | ((uint32_t)(c[i + 1] & 0x3F) << 6)
                         | ((uint32_t)(c[i + 2] & 0x3F) << 12)
                         | ((uint32_t)(c[i + 3] & 0x3F) << 18);
            out[i / 4 * 3] = (unsigned char)v;
            out[i / 4 * 3 + 1] = (unsigned char)(v >> 8);
            out[i / 4 * 3 + 2] = (unsigned char)(v >> 16);
        }
        if (i < n) {
            uint32_t v = 0;
            size_t j;
            for (j = i; j < n; j++) {
                v |= (uint32_t)(c[j] & 0x3F) << (6 * (j - i));
            }
            for (j = i / 4 * 3; j < nbytes; j++) {
                out[j] = (unsigned char)(v >> (8 * (j - i / 4 * 3)));
            }
        }
        return;
    }
    if (bits == 8 && code_size == 1) {
        memcpy(out, codes, n);
        return;
    }
    memset(out, 0, nbytes);
    sw_codecpack_or_bits(codes, code_size, bits, n, out, 0);
}

static void
sw_codecpack_unpack(const unsigned char *data, int bits, size_t n, void *codes,
                    int code_size)
{
    unsigned char *c = (unsigned char *)codes;
    size_t i;

    if (bits == 4 && code_size == 1) {
        for (i = 0; i < n; i++) {
            c[i] = (unsigned char)((data[i / 2] >> (4 * (i % 2))) & 0x0F);
        }
        return;
    }
    if (bits == 6 && code_size == 1) {
        sw_codecpack_unsextets(data, c, n / 4);
        for (i = n / 4 * 4; i < n; i++) {
            size_t bit = i * 6;
            unsigned v = data[bit / 8] >> (bit % 8);
            if (bit % 8 > 2) {
                v |= (unsigned)data[bit / 8 + 1] << (8 - bit % 8);
            }
            c[i] = (unsigned char)(v & 0x3F);
        }
        return;
    }
    if (bits == 8 && code_size == 1) {
        memcpy(codes, data, n);
        return;
    }
    sw_codecpack_read_bits(data, bits, 0, n, codes, code_size);
}

/* Pack n codes as elements at, at+1, ... of a row whose bytes are zero
 * where they go (quantize packs a row a chunk at a time). */
void
sw_codec_pack_at(const void *codes, int code_size, int bits, size_t n,
                 unsigned char *row, size_t at)
{
    if ((at * (size_t)bits) % 8 == 0 && (bits == 4 || bits == 6 || bits == 8)
        && code_size == 1) {
        sw_codecpack_pack(codes, code_size, bits, n, row + at * (size_t)bits / 8);
        return;
    }
    sw_codecpack_or_bits(codes, code_size, bits, n, row, at);
}

/* Unpack the n codes at elements at, at+1, ... of a packed row. */
void
sw_codec_unpack_at(const unsigned char *row, int bits, size_t at, size_t n,
                   void *codes, int code_size)
{
    if ((at * (size_t)bits) % 8 == 0) {
        sw_codecpack_unpack(row + at * (size_t)bits / 8, bits, n, codes, code_size);
        return;
    }
    sw_codecpack_read_bits(row, bits, at, n, codes, code_size);
}

/* ---- whole arrays, on threads ------------------------------------------------------ */

#define SW_PACK_MIN_PER_THREAD (1u << 18)

typedef struct {
    const void *codes;
    int code_size, bits;
    unsigned char *data;
} sw_codecpack_call;

/* The first code with bits above the width in [lo, hi), or SIZE_MAX. */
static size_t
sw_codecpack_check_task(void *arg, size_t lo, size_t hi, int piece)
{
    sw_codecpack_call *c = (sw_codecpack_call *)arg;
    uint64_t above = c->bits >= 64 ? 0 : ~((1ULL << c->bits) - 1), any = 0;
    size_t i;

    (void)piece;
    for (i = lo; i < hi; i++) {
        any |= sw_codec_load(c->codes, c->code_size, i) & above;
    }
    if (any == 0) {
        return SIZE_MAX;
    }
    for (i = lo; i < hi; i++) {
        if (sw_codec_load(c->codes, c->code_size, i) & above) {
            return i;
        }
    }
    return SIZE_MAX;
}

/* Elements [lo, hi) (lo a multiple of 8: whole bytes) into the stream. */
static size_t
sw_codecpack_pack_task(void *arg, size_t lo, size_t hi, int piece)
{
    sw_codecpack_call *c = (sw_codecpack_call *)arg;

    (void)piece;
    sw_codecpack_pack((const char *)c->codes + lo * (size_t)c->code_size, c->code_size,
                      c->bits, hi - lo, c->data + lo / 8 * (size_t)c->bits);
    return SIZE_MAX;
}

static size_t
sw_codecpack_unpack_task(void *arg, size_t lo, size_t hi, int piece)
{
    sw_codecpack_call *c = (sw_codecpack_call *)arg;

    (void)piece;
    sw_codecpack_unpack(c->data + lo / 8 * (size_t)c->bits, c->bits, hi - lo,
                        (char *)c->codes + lo * (size_t)c->code_size, c->code_size);
    return SIZE_MAX;
}

int
sw_codec_pack(const void *codes, int code_size, int bits, size_t n,
              unsigned char *out, int threads, size_t *bad_index)
{
    sw_codecpack_call c = {codes, code_size, bits, out};
    size_t bad;

    bad = sw_codec_parallel(threads, n, 8, SW_PACK_MIN_PER_THREAD,
                            sw_codecpack_check_task, &c);
    if (bad != SIZE_MAX) {
        *bad_index = bad;
        return SW_CODEC_WIDE_CODE;
    }
    sw_codec_parallel(threads, n, 8, SW_PACK_MIN_PER_THREAD, sw_codecpack_pack_task, &c);
    return SW_CODEC_OK;
}

void
sw_codec_unpack(const unsigned char *data, int bits, size_t n, void *codes,
                int code_size, int threads)
{
    sw_codecpack_call c = {codes, code_size, bits, (unsigned char *)data};

    sw_codec_parallel(threads, n, 8, SW_PACK_MIN_PER_THREAD, sw_codecpack_unpack_task, &c);
}
