/* structure.h: the structure format (structure.c): its shared labels,
 * leaf encoding, references between descriptors and structural diffs.
 */
#ifndef SW_STRUCTURE_H
#define SW_STRUCTURE_H

#include "compat.h"

/* The untagged strings of the structure format.  Each is created once per
 * graph, so every structure shares them: less memory per descriptor, and
 * pickles that memoize them instead of repeating them. */
typedef enum {
    SW_LABEL_REF = 0,
    SW_LABEL_NONE,
    SW_LABEL_WHOLE,
    SW_LABEL_EXTENSION,
    SW_LABEL_SUPERTYPE,
    SW_LABEL_BITS,
    SW_LABEL_SIMPLE_TYPES,
    SW_LABEL_REPRESENTATION_RULES,
    SW_LABEL_ELEMENT,
    SW_LABEL_LEVELS,
    SW_LABEL_LEVEL,
    SW_LABEL_SCALE,
    SW_LABEL_BLOCK,
    SW_LABEL_DTYPE_CATEGORY,
    SW_LABEL_SIMPLE_DTYPE,
    SW_LABEL_COMPOUND_DTYPE,
    SW_LABEL_BLOCK_SCALED_DTYPE,
    SW_LABEL_REPRESENTATION_RULE,
    SW_LABEL_COUNT
} sw_label;


struct sw_state;
struct sw_descriptor;

PyObject *sw_structure_encode_extension(struct sw_state *st, PyObject *ext,
                                        PyObject *owner);
int sw_structure_labels_init(struct sw_state *st);
PyObject *sw_structure_ref(struct sw_state *st, struct sw_descriptor *d);
PyObject *sw_structure_encode_int(PyObject *value);
PyObject *sw_structure_encode_block(struct sw_state *st, PyObject *block);
PyObject *sw_structure_block_text(PyObject *block);
PyObject *sw_structure_value_text(PyObject *value);
int sw_structure_refuse(PyObject *exc, PyObject *value, const char *format, ...);
PyObject *sw_structure_field(struct sw_state *st, sw_label label, PyObject *value);
PyObject *sw_structure_describe_leaf(PyObject *leaf);
PyObject *sw_structure_diff(PyObject *ours, PyObject *theirs);
PyObject *sw_structure_diff_as(PyObject *ours, PyObject *theirs,
                               const char *theirs_label);

#endif /* SW_STRUCTURE_H */
