/* rule.h: representation rules.  The rule layout and RuleMeta
 * (rule.c), and LevelExtent, the rule block-scaled formats use
 * (levelextent.c).
 */
#ifndef SW_RULE_H
#define SW_RULE_H

#include "compat.h"
#include "state.h"

typedef struct {
    PyObject_HEAD
    PyObject *structure;    /* tuple, recorded at construction */
    PyObject *attrs;        /* user attributes of a subclass (attrs.c) */
    PyObject *weakreflist;
    int build_state;        /* sw_build_state */
} sw_rule;

/* LevelExtent: a rule with its level and extent. */
typedef struct {
    sw_rule rule;
    PyObject *level;    /* exact int >= 0: the adjacent edge */
    PyObject *extent;   /* exact int > 0, exact tuple of exact ints >= 2
                           (an N-D block, see level.c), or Whole */
} sw_level_extent;

/* rule.c */
extern const char *const sw_rule_owned_names[];
int sw_rule_create_types(PyObject *module, sw_state *st);
int sw_rule_is_class(PyTypeObject *tp);
int sw_rule_traverse(PyObject *self, visitproc visit, void *arg);
int sw_rule_clear(PyObject *self);
void sw_rule_dealloc(PyObject *self);

/* levelextent.c */
int sw_levelextent_create_type(PyObject *module, sw_state *st);

#endif /* SW_RULE_H */
