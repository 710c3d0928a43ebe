// SPDX-License-Identifier: GPL-2.0
/* Instantiates the tracepoints declared in vgem_p2p_trace.h */
#define CREATE_TRACE_POINTS
#include "vgem_p2p_trace.h"
