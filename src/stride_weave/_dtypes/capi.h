/* capi.h: the C API table's life (capi.c); its layout is the public
 * header include/stride_weave/dtypes.h.
 */
#ifndef SW_CAPI_H
#define SW_CAPI_H

#include "compat.h"
#include "state.h"

int sw_capi_create(PyObject *module, sw_state *st);
void sw_capi_free(sw_state *st);

#endif /* SW_CAPI_H */
