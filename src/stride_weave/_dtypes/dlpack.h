/* dlpack.h: reading the data type of a DLPack capsule (dlpack.c).
 *
 * stride_weave.interop.dtype_of() accepts a DLPack capsule, the object an
 * array's __dlpack__() returns.  The capsule holds a DLManagedTensor
 * ("dltensor") or a DLManagedTensorVersioned ("dltensor_versioned"); the
 * reader takes the DLDataType out of it without importing any library,
 * and without consuming or renaming the capsule.
 */
#ifndef SW_DLPACK_H
#define SW_DLPACK_H

#include "compat.h"

/* _dlpack_dtype(capsule, /) -> (code, bits, lanes); added to the module
 * with the graph (module.c). */
extern PyMethodDef sw_dlpack_methods[];

/* The type of _dlpack_buffer's objects, made with the module. */
struct sw_state;
int sw_dlpack_create_type(PyObject *module, struct sw_state *st);

#endif /* SW_DLPACK_H */
