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

#endif /* SW_RECORD_H */
