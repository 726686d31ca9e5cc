/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Ground truth for rtsleuth: every injected section is bracketed by
 * noise_begin/noise_end, emitted on the injecting CPU from the injecting
 * context, so the event flags (hard-IRQ, softirq, irqs-off, preempt depth)
 * show what the section really was and seq pairs begin with end.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rtsleuth_noise

#if !defined(RTSLEUTH_NOISE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define RTSLEUTH_NOISE_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(noise_begin,
	TP_PROTO(const char *kind, int cpu, u32 us, u64 seq),
	TP_ARGS(kind, cpu, us, seq),
	TP_STRUCT__entry(
		__string(kind, kind)
		__field(int, cpu)
		__field(u32, us)
		__field(u64, seq)
	),
	TP_fast_assign(
		__assign_str(kind);
		__entry->cpu = cpu;
		__entry->us = us;
		__entry->seq = seq;
	),
	TP_printk("kind=%s cpu=%d us=%u seq=%llu",
		  __get_str(kind), __entry->cpu, __entry->us, __entry->seq)
);

TRACE_EVENT(noise_end,
	TP_PROTO(const char *kind, int cpu, u64 seq, u64 actual_ns),
	TP_ARGS(kind, cpu, seq, actual_ns),
	TP_STRUCT__entry(
		__string(kind, kind)
		__field(int, cpu)
		__field(u64, seq)
		__field(u64, actual_ns)
	),
	TP_fast_assign(
		__assign_str(kind);
		__entry->cpu = cpu;
		__entry->seq = seq;
		__entry->actual_ns = actual_ns;
	),
	TP_printk("kind=%s cpu=%d seq=%llu actual_ns=%llu",
		  __get_str(kind), __entry->cpu, __entry->seq,
		  __entry->actual_ns)
);

#endif

/* Out of tree: define_trace.h must find this header next to the sources. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE noise_trace
#include <trace/define_trace.h>
