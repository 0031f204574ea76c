/* codec/parallel.c: one large call on several cores.
 *
 * Owns sw_codec_parallel: a range of work split into contiguous pieces,
 * each run on a thread of its own (the calling thread runs the first),
 * joined before it returns.  Threads live only for the call: there is no
 * pool to keep, to lock, or to rebuild after fork(), and nothing is
 * shared between pieces but read-only inputs and disjoint outputs, so the
 * hot loops take no lock and write no common cache line (pieces are cut
 * at multiples of a grain the caller chooses, e.g. whole blocks, whole
 * packed bytes).  Each piece reports the first index it stopped at; the
 * smallest wins, so the answer is the one a single thread gives whatever
 * the split.  A thread that cannot be started leaves its piece to the
 * calling thread.  Worker threads block every signal: signals are the
 * interpreter's main thread's business.
 *
 * Every piece runs in the default floating-point environment: on x86-64
 * the SSE control register (flush-to-zero, denormals-are-zero, the
 * rounding direction, the exception masks), which another library or the
 * caller (fesetround, feenableexcept) may have changed on the calling
 * thread (new threads inherit it), is the default one for the piece and
 * restored after: a subnormal is a subnormal, the kernels' float adders
 * and multiplies round to nearest-even as the general converter does, and
 * an inexact result does not trap, in every kernel on every thread.
 *
 * Pure C: no PyObject, no PyErr.
 */
#include "engine.h"

#include <pthread.h>
#include <signal.h>

#if defined(__x86_64__) || defined(__SSE2__)
#  include <xmmintrin.h>
#  define SW_PARALLEL_MXCSR 1
/* MXCSR's control bits (6 to 15: denormals-are-zero, the six exception
 * masks, the rounding direction, flush-to-zero) and their default value:
 * every exception masked, round to nearest-even, subnormals kept.  Bits 0
 * to 5 are the sticky exception flags, the caller's. */
#  define SW_PARALLEL_CONTROL 0xFFC0u
#  define SW_PARALLEL_DEFAULT 0x1F80u
#endif

/* Run fn on [lo, hi) in the default floating-point environment. */
static size_t
sw_parallel_run(sw_codec_task fn, void *ctx, size_t lo, size_t hi, int index)
{
#ifdef SW_PARALLEL_MXCSR
    unsigned int saved = _mm_getcsr();
    int changed = (saved & SW_PARALLEL_CONTROL) != SW_PARALLEL_DEFAULT;
    size_t result;

    if (changed) {
        _mm_setcsr((saved & ~SW_PARALLEL_CONTROL) | SW_PARALLEL_DEFAULT);
    }
    result = fn(ctx, lo, hi, index);
    if (changed) {
        _mm_setcsr(saved);
    }
    return result;
#else
    return fn(ctx, lo, hi, index);
#endif
}

/* The most threads one call starts. */
#define SW_PARALLEL_MAX 256

typedef struct {
    sw_codec_task fn;
    void *ctx;
    size_t lo, hi;
    int index;
    size_t result;
    pthread_t thread;
    int started;
} sw_parallel_piece;

static void *
sw_parallel_main(void *arg)
{
    sw_parallel_piece *p = (sw_parallel_piece *)arg;

    p->result = sw_parallel_run(p->fn, p->ctx, p->lo, p->hi, p->index);
    return NULL;
}

size_t
sw_codec_parallel(int threads, size_t n, size_t grain, size_t min_units,
                  sw_codec_task fn, void *ctx)
{
    sw_parallel_piece pieces[SW_PARALLEL_MAX];
    size_t groups, per, result = SIZE_MAX, start;
    sigset_t all, old;
    int i, count, masked = 0;

    if (n == 0) {
        return SIZE_MAX;
    }
    if (grain == 0) {
        grain = 1;
    }
    if (min_units == 0) {
        min_units = 1;
    }
    groups = (n - 1) / grain + 1;
    if (threads > SW_PARALLEL_MAX) {
        threads = SW_PARALLEL_MAX;
    }
    /* no piece smaller than min_units, none empty */
    if (threads > 1 && n / (size_t)threads < min_units) {
        threads = (int)(n / min_units);
    }
    if ((size_t)threads > groups) {
        threads = (int)groups;
    }
    if (threads <= 1) {
        return sw_parallel_run(fn, ctx, 0, n, 0);
    }
    per = (groups + (size_t)threads - 1) / (size_t)threads;
    count = 0;
    for (start = 0; start < n && count < threads; count++) {
        size_t end = start + per * grain;
        pieces[count].fn = fn;
        pieces[count].ctx = ctx;
        pieces[count].lo = start;
        pieces[count].hi = end < n && end > start ? end : n;
        pieces[count].index = count;
        pieces[count].result = SIZE_MAX;
        pieces[count].started = 0;
        start = pieces[count].hi;
    }
    sigfillset(&all);
    if (pthread_sigmask(SIG_SETMASK, &all, &old) == 0) {
        masked = 1;
    }
    for (i = 1; i < count; i++) {
        pieces[i].started = pthread_create(&pieces[i].thread, NULL, sw_parallel_main,
                                           &pieces[i]) == 0;
    }
    if (masked) {
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    pieces[0].result = sw_parallel_run(fn, ctx, pieces[0].lo, pieces[0].hi, 0);
    for (i = 1; i < count; i++) {
        if (pieces[i].started) {
            pthread_join(pieces[i].thread, NULL);
        }
        else {
            pieces[i].result = sw_parallel_run(fn, ctx, pieces[i].lo, pieces[i].hi, i);
        }
    }
    for (i = 0; i < count; i++) {
        if (pieces[i].result < result) {
            result = pieces[i].result;
        }
    }
    return result;
}
