// SPDX-License-Identifier: GPL-2.0
/* The one place the noise_begin/noise_end tracepoints are instantiated. */
#define CREATE_TRACE_POINTS
#include "noise_trace.h"
