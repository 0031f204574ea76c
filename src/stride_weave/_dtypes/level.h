/* level.h: the values block-scaled formats are built from: Level, one
 * scale level (level.c); SymbolicBits, a size that depends on the tensor
 * (symbolic.c); and Whole, the extent of a whole level (whole.c).
 */
#ifndef SW_LEVEL_H
#define SW_LEVEL_H

#include "compat.h"
#include "state.h"

typedef struct {
    PyObject_HEAD
    PyObject *scale;    /* a finished, registered SimpleDType */
    PyObject *block;    /* exact int > 0, exact tuple of at least two
                           exact ints >= 2, or Whole */
} sw_level;

/* level.c, symbolic.c */
int sw_level_create_type(PyObject *module, sw_state *st);
PyObject *sw_level_block_tuple(PyObject *block, const char *func,
                               const char *arg);
PyObject *sw_level_block_size(PyObject *block);
int sw_symbolic_create_type(PyObject *module, sw_state *st);

/* whole.c */
int sw_whole_create(PyObject *module, sw_state *st);

#endif /* SW_LEVEL_H */
