/* codecs.h: the codec functions of the module (codecs.c), which
 * stride_weave.codecs calls; the engine behind them is codec/engine.h. */
#ifndef SW_CODECS_H
#define SW_CODECS_H

#include "compat.h"

extern PyMethodDef sw_codecs_methods[];

#endif /* SW_CODECS_H */
