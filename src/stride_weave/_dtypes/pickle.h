/* pickle.h: the pickle entry point and the unpickle import policy
 * (pickle.c).  sw_pickle_init_policy leaves the policy unread: it is read
 * when first needed.
 */
#ifndef SW_PICKLE_H
#define SW_PICKLE_H

#include "compat.h"
#include "state.h"

extern PyMethodDef sw_pickle_methods[];
int sw_pickle_init_policy(sw_state *st);

#endif /* SW_PICKLE_H */
