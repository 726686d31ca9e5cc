// SPDX-License-Identifier: GPL-2.0
/*
 * The busy section itself and its trace bracket. The wait runs on
 * ktime_get_ns() rather than a calibrated udelay() loop so that time stolen
 * from the CPU (SMI, vCPU preemption) counts toward the section and ends it,
 * and actual_ns reports what the victim really lost.
 */
#include <linux/atomic.h>
#include <linux/processor.h>
#include <linux/smp.h>
#include <linux/timekeeping.h>

#include "noise.h"
#include "noise_trace.h"

/* One sequence across all injectors, so a begin never pairs with the wrong end. */
static atomic64_t noise_seq = ATOMIC64_INIT(0);

void noise_section_begin(struct noise_injector *inj, struct noise_section *s)
{
	s->seq = atomic64_inc_return(&noise_seq);
	/* raw_: kernel_path runs preemptible but pinned, so the CPU is stable. */
	s->cpu = raw_smp_processor_id();
	trace_noise_begin(inj->name, s->cpu, inj->req.us, s->seq);
	s->start_ns = ktime_get_ns();
}

bool noise_section_elapsed(const struct noise_section *s, u32 us)
{
	return ktime_get_ns() - s->start_ns >= (u64)us * NSEC_PER_USEC;
}

u64 noise_section_end(struct noise_injector *inj, const struct noise_section *s)
{
	u64 actual = ktime_get_ns() - s->start_ns;

	trace_noise_end(inj->name, s->cpu, s->seq, actual);
	atomic64_set(&inj->last_ns, actual);
	atomic_inc(&inj->done);
	return actual;
}

/* Burns the requested time in whatever context the caller set up. */
u64 noise_spin(struct noise_injector *inj)
{
	struct noise_section s;

	noise_section_begin(inj, &s);
	while (!noise_section_elapsed(&s, inj->req.us))
		cpu_relax();
	return noise_section_end(inj, &s);
}
