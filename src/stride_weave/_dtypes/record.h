/* record.h: the pickle record, structure format version 2 (record.c). */
#ifndef SW_RECORD_H
#define SW_RECORD_H

#include "compat.h"
#include "state.h"

struct sw_descriptor;

/* The __reduce__ value of a finished descriptor, made once (new ref). */
PyObject *sw_record_reduce(sw_state *st, struct sw_descriptor *d);

/* 0 if the untrusted `record` is exactly the record of `d`; -1 with
 * ValueError naming the first difference (or another error) if not. */
int sw_record_check(sw_state *st, struct sw_descriptor *d, PyObject *record);

/* What a pickle of `d` states after its structure (record.c): 0 with
 * *stated a new tuple, one item per simple dtype it defines that is not a
 * built-in (itself, or its planes), each its record's canonical fields or
 * None, every one of them settled first; 0 with *stated NULL when there
 * is nothing to state; -1 with an exception. */
int sw_record_stated(sw_state *st, struct sw_descriptor *d, PyObject **stated);

/* The numeric records `stated` (untrusted, as a pickle carries them after
 * the structure; NULL when it carries none, as pickles of earlier releases)
 * against `d`'s, in order, by the rule ensure() applies too
 * (sw_numrecords_match): 0 when all agree, else -1 with ValueError naming
 * the first dtype and field that differ, or a malformed record. */
int sw_record_check_stated(sw_state *st, struct sw_descriptor *d,
                           PyObject *stated);

#endif /* SW_RECORD_H */
