/* suggest.c: the names a lookup miss suggests ("did you mean 'Float32'?").
 *
 * Owns the choice of the close names among candidates offered one at a
 * time (sw_suggest_offer): the name the query is another library's name
 * for (aliases.c: "float8_e4m3fn" is E4M3), when it is offered, and the
 * names equal to the query ignoring case, first offered first (the
 * foreign name's descriptor before them); else the names whose
 * similarity ratio reaches 0.6, best first.  The ratio is difflib's: a port of
 * SequenceMatcher(None, candidate, query).ratio() (2 * matched / total
 * length, the matched characters those of the longest-match recursion of
 * get_matching_blocks, with its "popular element" heuristic for a query
 * of 200 characters or more), ranked as get_close_matches ranks it (at
 * most 3, higher ratio first, a tie to the greater name); the test suite
 * checks the result against difflib.  Case is compared character by
 * character through Unicode's lowercase mapping (Py_UNICODE_TOLOWER).
 *
 * All of it is C on exact str: no Python code runs, nothing is allocated,
 * and no error can occur, so a caller may offer borrowed names as long as
 * it keeps them alive until sw_suggest_finish (which returns new
 * references).  The registry offers its names (registry.c); any other
 * source of candidates offers its own the same way.
 */
#include "registry.h"

#include <string.h>

/* The ratio's cutoff, difflib's default 0.6, as the fraction 3/5: a
 * ratio 2 * m / t reaches it when 10 * m >= 3 * t (exact in integers,
 * and the same answer as difflib's floating-point comparison, since no
 * ratio of lengths this short lies within rounding of 0.6 without being
 * 0.6). */
#define SW_SUGGEST_CUTOFF_NUM 3
#define SW_SUGGEST_CUTOFF_DEN 5
/* difflib's autojunk: a query this long ignores its popular characters
 * when it looks for the longest matches. */
#define SW_SUGGEST_AUTOJUNK_MIN 200

/* The character of `s` at `i`. */
#define SW_SUGGEST_AT(s, i) PyUnicode_READ((s)->kind, (s)->data, (i))

typedef struct {
    int kind;
    const void *data;
    Py_ssize_t len;
} sw_suggest_text;

static void
sw_suggest_text_of(sw_suggest_text *t, PyObject *s)
{
    t->kind = PyUnicode_KIND(s);
    t->data = PyUnicode_DATA(s);
    t->len = PyUnicode_GET_LENGTH(s);
}

void
sw_suggest_start(sw_suggest *s, PyObject *query)
{
    Py_ssize_t i, j, n = PyUnicode_GET_LENGTH(query);
    sw_suggest_text q;

    assert(PyUnicode_CheckExact(query));
    memset(s, 0, sizeof(*s));
    s->query = query;
    s->qlen = n;
    s->alias = sw_alias_of(query);
    if (n > SW_SUGGEST_MAX_LENGTH) {
        return;     /* nothing is close to it (sw_suggest_offer checks) */
    }
    sw_suggest_text_of(&q, query);
    for (i = 0; i < n; i++) {
        Py_UCS4 c = SW_SUGGEST_AT(&q, i);
        s->q[i] = c;
        s->qfold[i] = Py_UNICODE_TOLOWER(c);
        s->hist[c % SW_SUGGEST_BUCKETS]++;
    }
    if (n >= SW_SUGGEST_AUTOJUNK_MIN) {
        /* difflib: a character occurring more than n // 100 + 1 times */
        for (i = 0; i < n; i++) {
            Py_ssize_t count = 0;
            for (j = 0; j < n; j++) {
                count += s->q[j] == s->q[i];
            }
            s->popular[i] = count > n / 100 + 1;
        }
    }
}

/* 0 when no candidate of length `clen` with the characters of `c` can
 * reach the cutoff, else 1.  An upper bound of difflib's quick_ratio()
 * (characters in common, counted per bucket, so never fewer than the
 * exact count), which bounds ratio(): it rejects no close name. */
static int
sw_suggest_may_be_close(const sw_suggest *s, const Py_UCS4 *c, Py_ssize_t clen)
{
    Py_ssize_t avail[SW_SUGGEST_BUCKETS];
    Py_ssize_t i, common = 0, total = s->qlen + clen;

    /* real_quick_ratio: 2 * min(len) / total */
    if (2 * Py_MIN(s->qlen, clen) * SW_SUGGEST_CUTOFF_DEN
        < SW_SUGGEST_CUTOFF_NUM * total) {
        return 0;
    }
    memcpy(avail, s->hist, sizeof(avail));
    for (i = 0; i < clen; i++) {
        Py_ssize_t *left = &avail[c[i] % SW_SUGGEST_BUCKETS];
        if (*left > 0) {
            (*left)--;
            common++;
        }
    }
    return 2 * common * SW_SUGGEST_CUTOFF_DEN >= SW_SUGGEST_CUTOFF_NUM * total;
}

/* difflib's find_longest_match(alo, ahi, blo, bhi) with a = `a` (the
 * candidate) and b = the query: the longest block a[i:i+k] == b[j:j+k]
 * not starting on a popular character of b, the earliest in a, then in
 * b, then extended on both sides by equal characters.  Returns k; *bi and
 * *bj are i and j. */
static Py_ssize_t
sw_suggest_longest(const sw_suggest *s, const Py_UCS4 *a, Py_ssize_t alo,
                   Py_ssize_t ahi, Py_ssize_t blo, Py_ssize_t bhi,
                   Py_ssize_t *bi, Py_ssize_t *bj)
{
    /* run[j + 1]: the length of the match ending at a[i], b[j] (0 where
     * none); two rows, the previous and the current one. */
    Py_ssize_t rows[2][SW_SUGGEST_MAX_LENGTH + 1];
    Py_ssize_t *prev = rows[0], *cur = rows[1], *swap;
    Py_ssize_t i, j, besti = alo, bestj = blo, best = 0;
    const Py_UCS4 *b = s->q;

    memset(rows, 0, sizeof(rows));
    for (i = alo; i < ahi; i++) {
        for (j = blo; j < bhi; j++) {
            Py_ssize_t k = 0;
            if (b[j] == a[i] && !s->popular[j]) {
                k = prev[j] + 1;
                if (k > best) {
                    besti = i - k + 1;
                    bestj = j - k + 1;
                    best = k;
                }
            }
            cur[j + 1] = k;
        }
        swap = prev;
        prev = cur;
        cur = swap;
    }
    while (besti > alo && bestj > blo && a[besti - 1] == b[bestj - 1]) {
        besti--;
        bestj--;
        best++;
    }
    while (besti + best < ahi && bestj + best < bhi
           && a[besti + best] == b[bestj + best]) {
        best++;
    }
    *bi = besti;
    *bj = bestj;
    return best;
}

/* The number of characters in difflib's matching blocks of `a` (length
 * `alen`) against the query: ratio() is 2 * this / (alen + qlen). */
static Py_ssize_t
sw_suggest_matched(const sw_suggest *s, const Py_UCS4 *a, Py_ssize_t alen)
{
    /* get_matching_blocks' queue of (alo, ahi, blo, bhi): the ranges on it
     * are disjoint and non-empty in a, so it never holds more than alen. */
    Py_ssize_t queue[SW_SUGGEST_MAX_LENGTH + 1][4];
    Py_ssize_t top = 0, matched = 0;

    queue[top][0] = 0;
    queue[top][1] = alen;
    queue[top][2] = 0;
    queue[top][3] = s->qlen;
    top++;
    while (top > 0) {
        Py_ssize_t i, j, k, alo, ahi, blo, bhi;

        top--;
        alo = queue[top][0];
        ahi = queue[top][1];
        blo = queue[top][2];
        bhi = queue[top][3];
        k = sw_suggest_longest(s, a, alo, ahi, blo, bhi, &i, &j);
        if (k == 0) {
            continue;
        }
        matched += k;
        if (alo < i && blo < j) {
            queue[top][0] = alo;
            queue[top][1] = i;
            queue[top][2] = blo;
            queue[top][3] = j;
            top++;
        }
        if (i + k < ahi && j + k < bhi) {
            queue[top][0] = i + k;
            queue[top][1] = ahi;
            queue[top][2] = j + k;
            queue[top][3] = bhi;
            top++;
        }
    }
    return matched;
}

/* Whether the close name `x` (ratio xm / xt) ranks before `y` (ym / yt):
 * a higher ratio, or the same and a greater name (get_close_matches
 * ranks (ratio, name) pairs, largest first).  Both are exact str: the
 * comparison runs no user code and cannot fail. */
static int
sw_suggest_before(PyObject *x, Py_ssize_t xm, Py_ssize_t xt,
                  PyObject *y, Py_ssize_t ym, Py_ssize_t yt)
{
    if (xm * yt != ym * xt) {
        return xm * yt > ym * xt;
    }
    return PyUnicode_Compare(x, y) > 0;
}

void
sw_suggest_offer(sw_suggest *s, PyObject *candidate)
{
    Py_UCS4 c[SW_SUGGEST_MAX_LENGTH];
    sw_suggest_text t;
    Py_ssize_t i, pos, matched, total;
    int same = 1, folded = 1;

    if (candidate == NULL || !PyUnicode_CheckExact(candidate)
        || s->qlen > SW_SUGGEST_MAX_LENGTH
        || PyUnicode_GET_LENGTH(candidate) > SW_SUGGEST_MAX_LENGTH) {
        return;
    }
    /* (comparing an exact str with ASCII text runs no code, cannot fail) */
    if (s->alias != NULL && s->alias_found == NULL
        && PyUnicode_CompareWithASCIIString(candidate, s->alias) == 0) {
        s->alias_found = candidate;
        return;
    }
    sw_suggest_text_of(&t, candidate);
    for (i = 0; i < t.len; i++) {
        c[i] = SW_SUGGEST_AT(&t, i);
        if (t.len == s->qlen) {
            same = same && c[i] == s->q[i];
            folded = folded && Py_UNICODE_TOLOWER(c[i]) == s->qfold[i];
        }
    }
    if (t.len == s->qlen && same) {
        return;     /* the query itself is never suggested */
    }
    if (t.len == s->qlen && folded) {
        if (s->nsame < SW_SUGGEST_COUNT) {
            s->same[s->nsame++] = candidate;
        }
        return;
    }
    if (s->nsame > 0 || s->alias_found != NULL
        || !sw_suggest_may_be_close(s, c, t.len)) {
        return;     /* a case-insensitive match outranks any close name */
    }
    matched = sw_suggest_matched(s, c, t.len);
    total = t.len + s->qlen;
    if (2 * matched * SW_SUGGEST_CUTOFF_DEN < SW_SUGGEST_CUTOFF_NUM * total) {
        return;
    }
    /* Insert it among the best SW_SUGGEST_COUNT, best first. */
    pos = s->nclose;
    while (pos > 0 && sw_suggest_before(candidate, matched, total,
                                        s->close[pos - 1].name,
                                        s->close[pos - 1].matched,
                                        s->close[pos - 1].total)) {
        pos--;
    }
    if (pos == SW_SUGGEST_COUNT) {
        return;
    }
    for (i = Py_MIN(s->nclose, SW_SUGGEST_COUNT - 1); i > pos; i--) {
        s->close[i] = s->close[i - 1];
    }
    s->close[pos].name = candidate;
    s->close[pos].matched = matched;
    s->close[pos].total = total;
    if (s->nclose < SW_SUGGEST_COUNT) {
        s->nclose++;
    }
}

Py_ssize_t
sw_suggest_finish(sw_suggest *s, PyObject **out)
{
    Py_ssize_t i, k = 0, n = s->nsame > 0 ? s->nsame : s->nclose;

    /* The foreign name's descriptor ranks as a name equal ignoring case:
     * before them, and close names are then not suggested. */
    if (s->alias_found != NULL) {
        out[k++] = Py_NewRef(s->alias_found);
        n = s->nsame;
    }
    for (i = 0; i < n && k < SW_SUGGEST_COUNT; i++) {
        out[k++] = Py_NewRef(s->nsame > 0 ? s->same[i] : s->close[i].name);
    }
    return k;
}
